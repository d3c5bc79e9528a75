"""Built-in families against their definitions, the registry, and closed forms == exhaustive."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.boolean import (
    BooleanFunction,
    closed_form_profile,
    family_names,
    has_closed_form,
    make_family,
    profile_expression,
    register_family,
    sensitivity_profile,
)
from verify.boolean import families as fam_module
from verify.errors import ValidationError

# Independent definitions on the bit array (column j is x_{j+1}).
DEFINITIONS = {
    "parity": ({}, lambda b: b.sum(1) % 2),
    "sparse_parity": ({"subset": [2, 3]}, lambda b: (b[:, 1] + b[:, 2]) % 2),
    "dictator": ({"i": 3, "negate": True}, lambda b: 1 - b[:, 2]),
    "first": ({}, lambda b: b[:, 0]),
    "majority": ({}, lambda b: 2 * b.sum(1) > b.shape[1]),
    "sparse_majority": ({"m": 3}, lambda b: b[:, :3].sum(1) >= 2),
    "and": ({}, lambda b: b.all(1)),
    "or": ({}, lambda b: b.any(1)),
    "threshold": ({"k": 2}, lambda b: b.sum(1) >= 2),
    "mod": ({"k": 3}, lambda b: b.sum(1) % 3 == 0),
    "inner_product": ({}, lambda b: (b[:, :3] * b[:, 3:]).sum(1) % 2),
    "constant": ({"value": 1}, lambda b: np.ones(len(b), dtype=np.uint8)),
}


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_family_matches_definition(name):
    params, fn = DEFINITIONS[name]
    f = make_family(name, 6, **params)
    assert f == BooleanFunction.from_callable(6, lambda b: np.asarray(fn(b)).astype(np.uint8))
    assert f.params["family"] == name and f.name.startswith(name)


def test_majority_tie_rules_at_even_n():
    zero = make_family("majority", 4).table
    one = make_family("majority", 4, tie="one").table
    weights = np.array([bin(i).count("1") for i in range(16)])
    np.testing.assert_array_equal(zero, weights >= 3)
    np.testing.assert_array_equal(one, weights >= 2)


def test_random_family_is_seeded():
    assert make_family("random", 8, seed=4) == make_family("random", 8, seed=4)
    assert make_family("random", 8, seed=4) != make_family("random", 8, seed=5)


def test_every_built_in_is_registered_with_defaults():
    built_in = set(DEFINITIONS) | {"random"}
    assert built_in <= set(family_names())
    for name in sorted(built_in):  # families registered by other tests may need other N
        n = 4
        assert make_family(name, n).n == n


@pytest.mark.parametrize(
    ("name", "n", "params", "argument"),
    [
        ("nonexistent", 4, {}, "family"),
        ("parity", 0, {}, "N"),
        ("parity", 31, {}, "N"),
        ("sparse_parity", 4, {"m": 5}, "m"),
        ("sparse_parity", 4, {"subset": [1, 1]}, "subset"),
        ("sparse_parity", 4, {"subset": [0]}, "subset"),
        ("sparse_parity", 4, {"m": 2, "subset": [1]}, "m"),
        ("dictator", 4, {"i": 5}, "i"),
        ("dictator", 4, {"i": 0}, "i"),
        ("majority", 4, {"tie": "coin"}, "tie"),
        ("threshold", 4, {"k": 6}, "k"),
        ("mod", 4, {"k": 1}, "k"),
        ("inner_product", 5, {}, "N"),
        ("parity", 4, {"m": 2}, "params"),
    ],
)
def test_bad_parameters_name_the_argument(name, n, params, argument):
    with pytest.raises(ValidationError) as info:
        make_family(name, n, **params)
    assert info.value.argument == argument


def test_unknown_family_lists_known_ones():
    with pytest.raises(ValidationError, match="majority"):
        make_family("nope", 3)


def test_register_family_joins_the_registry(monkeypatch):
    monkeypatch.setattr(fam_module, "_FAMILIES", dict(fam_module._FAMILIES))

    @register_family("xor_first_two")
    def xor_first_two(n: int, flip: int = 0) -> BooleanFunction:
        return BooleanFunction.from_callable(n, lambda b: b[:, 0] ^ b[:, 1] ^ flip)

    assert "xor_first_two" in family_names()
    f = make_family("xor_first_two", 5, flip=1)
    assert f.params == {"family": "xor_first_two", "n": 5, "flip": 1}
    assert sensitivity_profile(f).tolist() == [0, 0, 32, 0, 0, 0]
    assert not has_closed_form("xor_first_two")
    with pytest.raises(ValueError, match="twice"):
        register_family("xor_first_two")(xor_first_two)


def _variants(name: str, n: int) -> list[dict]:
    if name == "inner_product" and n % 2:
        return []
    out = [{}]
    if name in ("majority", "sparse_majority"):
        out.append({"tie": "one"})
    if name in ("sparse_parity", "sparse_majority"):
        out += [{"m": m} for m in range(1, n + 1)]
    if name == "threshold":
        out += [{"k": k} for k in range(0, n + 2)]
    if name == "mod":
        out += [{"k": k} for k in (2, 4, 5)]
    if name in ("dictator", "first"):
        out.append({"negate": True})
    return out


def test_closed_forms_equal_exhaustive_for_every_n_up_to_16():
    checked = 0
    for name in sorted(DEFINITIONS):
        if not has_closed_form(name):
            continue
        for n in range(1, 17):
            for params in _variants(name, n):
                exhaustive = sensitivity_profile(make_family(name, n, **params))
                closed = closed_form_profile(name, n, **params)
                assert closed.tolist() == exhaustive.tolist(), (name, n, params)
                checked += 1
    assert checked > 300


def test_closed_form_expressions_are_sympy():
    import sympy as sp

    expr = profile_expression("sparse_parity", 10, m=4)
    n_sym = sp.Symbol("n", integer=True, nonnegative=True)
    big_n = sp.Symbol("N", integer=True, nonnegative=True)
    assert expr.subs({big_n: 10, n_sym: 4}) == 1024
    with pytest.raises(ValidationError, match="closed form"):
        profile_expression("random", 4)


@st.composite
def family_cases(draw: st.DrawFn) -> tuple[str, int, dict]:
    """A built-in family with a closed form, an N and random valid parameters."""
    name = draw(st.sampled_from(sorted(DEFINITIONS)))
    n = draw(st.integers(2, 10).filter(lambda v: name != "inner_product" or v % 2 == 0))
    params: dict = {}
    if name in ("sparse_parity", "sparse_majority"):
        subset = draw(st.lists(st.integers(1, n), min_size=1, max_size=n, unique=True))
        params["subset"] = subset
    if name in ("majority", "sparse_majority"):
        params["tie"] = draw(st.sampled_from(["zero", "one"]))
    if name == "dictator":
        params["i"] = draw(st.integers(1, n))
        params["negate"] = draw(st.booleans())
    if name == "threshold":
        params["k"] = draw(st.integers(0, n + 1))
    if name == "mod":
        params["k"] = draw(st.integers(2, n + 2))
    if name == "constant":
        params["value"] = draw(st.integers(0, 1))
    return name, n, params


@settings(max_examples=80, deadline=None)
@given(family_cases())
def test_random_family_parameters_closed_form_and_kernels(case):
    name, n, params = case
    f = make_family(name, n, **params)
    table = f.table
    s = [sum(int(table[x]) != int(table[x ^ (1 << i)]) for i in range(n)) for x in range(1 << n)]
    exhaustive = sensitivity_profile(f)
    assert exhaustive.tolist() == np.bincount(s, minlength=n + 1).tolist()
    assert closed_form_profile(name, n, **params).tolist() == exhaustive.tolist()
