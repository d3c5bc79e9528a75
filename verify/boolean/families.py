"""The family registry and the built-in Boolean function families.

A family is a function ``fn(n, **params) -> BooleanFunction``; registering it with
``@register_family("name")`` makes it available to :func:`make_family`, the ``profile``
command and every check or report that iterates :func:`family_names`::

    @register_family("first_two_and")
    def first_two_and(n: int) -> BooleanFunction:
        return BooleanFunction.from_callable(n, lambda b: b[:, 0] & b[:, 1])

Every family parameter has a default, so ``make_family(name, n)`` always works.
Variable indices (``i``, ``subset``) are 1-based, as x_1..x_N in the papers.

A family may declare what it knows, and the toolkit checks every declaration (the statement
"Sec 5 declared families"): a closed-form profile (``closed_form(n_bits, **params)`` returning
a sympy expression of K_n in the symbols ``N`` and ``n`` of ``verify.boolean.closed_forms``),
its minimum sensitivity (``min_sensitivity(n_bits, **params) -> int``) and a parameter
validator (``validate(n_bits, **params)``, raising ValidationError). Families of other packages
are found through the entry-point group "verify.families" or ``--import MODULE``
(``verify.plugins``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify.boolean.function import BooleanFunction, check_n
from verify.errors import PluginError, ValidationError
from verify.plugins import FAMILY_GROUP, load_plugins
from verify.validation import check_choice, check_int


@dataclass(frozen=True)
class Family:
    """A registered family: its builder, its parameters' defaults (from the signature), and
    what it declares about itself (see the module docstring)."""

    name: str
    builder: Callable[..., BooleanFunction]
    defaults: dict[str, Any]
    doc: str
    closed_form: Callable[..., Any] | None = None  # (n_bits, **params) -> sympy K_n(N, n)
    min_sensitivity: Callable[..., int] | None = None  # (n_bits, **params) -> int
    validate: Callable[..., None] | None = None  # (n_bits, **params) -> None or raises
    module: str = ""  # where the builder is defined

    def __call__(self, n: int, **params: Any) -> BooleanFunction:
        return make_family(self.name, n, **params)

    @property
    def declared(self) -> list[str]:
        """The facts this family declares: "closed_form", "min_sensitivity", "validate"."""
        names = ("closed_form", "min_sensitivity", "validate")
        return [k for k in names if getattr(self, k) is not None]


_FAMILIES: dict[str, Family] = {}
_plugins_loaded = False


def _load_plugins() -> None:
    """Families of installed packages and ``--import`` modules, once (on first look-up)."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        load_plugins(FAMILY_GROUP)


def _optional_callable(argument: str, value: object) -> None:
    if value is not None and not callable(value):
        raise ValidationError(argument, "a callable or None", value)


def register_family(
    name: str,
    *,
    closed_form: Callable[..., Any] | None = None,
    min_sensitivity: Callable[..., int] | None = None,
    validate: Callable[..., None] | None = None,
) -> Callable[[Callable[..., BooleanFunction]], Callable]:
    """Decorator: register ``fn(n, **params) -> BooleanFunction`` under ``name``, with the
    optional declarations of the module docstring."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValidationError("name", "a family name that is a Python identifier", name)
    for argument, value in (
        ("closed_form", closed_form),
        ("min_sensitivity", min_sensitivity),
        ("validate", validate),
    ):
        _optional_callable(argument, value)

    def deco(fn: Callable[..., BooleanFunction]) -> Callable[..., BooleanFunction]:
        if name in _FAMILIES:
            raise ValueError(f"family {name!r} is registered twice")
        sig = inspect.signature(fn)
        defaults = {
            p.name: p.default
            for p in list(sig.parameters.values())[1:]
            if p.default is not inspect.Parameter.empty
        }
        doc = (inspect.getdoc(fn) or "").split("\n")[0]
        module = getattr(fn, "__module__", "")
        _FAMILIES[name] = Family(
            name, fn, defaults, doc, closed_form, min_sensitivity, validate, module
        )
        return fn

    return deco


def family_names() -> list[str]:
    """Names of the registered families (built-in and from plugins), sorted."""
    _load_plugins()
    return sorted(_FAMILIES)


def get_family(name: str) -> Family:
    """The registered family ``name`` (ValidationError listing the known ones otherwise)."""
    if name not in _FAMILIES:
        _load_plugins()
    try:
        return _FAMILIES[name]
    except (KeyError, TypeError):
        raise ValidationError("family", "one of " + ", ".join(family_names()), name) from None


def make_family(name: str, n: int, **params: Any) -> BooleanFunction:
    """Build the member of family ``name`` on n bits; ``params`` override the defaults."""
    fam = get_family(name)
    n = check_n(n)
    unknown = sorted(set(params) - set(fam.defaults))
    if unknown:
        known = ", ".join(fam.defaults) or "none"
        raise ValidationError("params", f"parameters of {name} ({known})", unknown)
    if fam.validate is not None:
        fam.validate(n, **{**fam.defaults, **params})
    module = getattr(fam.builder, "__module__", None) or "?"
    plugin = not module.startswith("verify.")
    try:
        f = fam.builder(n, **params)
    except ValidationError:
        raise
    except Exception as exc:
        if not plugin:
            raise
        raise PluginError(
            f"family {name!r} (module {module}) raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(f, BooleanFunction) or f.n != n:
        got = f"on {f.n} bits" if isinstance(f, BooleanFunction) else repr(f)
        got = got if len(got) <= 60 else got[:57] + "..."
        raise PluginError(
            f"family {name!r} (module {module}) returned {type(f).__name__} {got},"
            f" expected a BooleanFunction on {n} bits"
        )
    used = {**fam.defaults, **params}
    label = ", ".join(f"{k}={v}" for k, v in used.items() if v is not None)
    f.name = f"{name}(N={n}{', ' + label if label else ''})"
    f.params = {"family": name, "n": n, **used}
    return f


# ---------------------------------------------------------------------------------------------
# helpers


def subset_weights(n: int, subset: Sequence[int] | None = None) -> np.ndarray:
    """w[i] = number of ones of string i among the variables in ``subset`` (1-based; default
    all), as uint8 of length 2^n, built by doubling (no int64 temporaries)."""
    chosen = set(range(1, n + 1)) if subset is None else set(subset)
    w = np.zeros(1, dtype=np.uint8)
    for j in range(1, n + 1):
        w = np.concatenate((w, w + np.uint8(1))) if j in chosen else np.concatenate((w, w))
    return w


def resolve_subset(n: int, m: int | None, subset: Sequence[int] | None, default_m: int) -> list:
    """The 1-based variable subset of a sparse family: ``subset``, or the first ``m`` bits."""
    if subset is not None:
        if isinstance(subset, (str, bytes)) or not isinstance(subset, Sequence | np.ndarray):
            raise ValidationError("subset", "a sequence of distinct variable indices", subset)
        idx = [check_int("subset", v, minimum=1, maximum=n) for v in subset]
        if len(set(idx)) != len(idx) or not idx:
            raise ValidationError("subset", "a nonempty set of distinct indices in 1..N", subset)
        if m is not None and m != len(idx):
            raise ValidationError("m", f"len(subset) = {len(idx)} when both are given", m)
        return sorted(idx)
    m = default_m if m is None else m
    m = check_int("m", m, minimum=1, maximum=n, hint=f"m <= N = {n}")
    return list(range(1, m + 1))


_TIES = ("zero", "one")


def _majority_threshold(m: int, tie: str) -> int:
    """k such that majority over m bits is [weight >= k] (ties at even m go to ``tie``)."""
    check_choice("tie", tie, _TIES)
    return m // 2 + 1 if (m % 2 == 0 and tie == "zero") or m % 2 == 1 else m // 2


def _from_weights(w: np.ndarray, values: np.ndarray) -> np.ndarray:
    return values.astype(np.uint8)[w]


# ---------------------------------------------------------------------------------------------
# built-in families


@register_family("parity", min_sensitivity=lambda n: n)
def parity(n: int) -> BooleanFunction:
    """PARITY: x_1 xor ... xor x_N (s(x) = N everywhere)."""
    return BooleanFunction(subset_weights(n) & np.uint8(1))


@register_family(
    "sparse_parity",
    min_sensitivity=lambda n, m=None, subset=None: len(resolve_subset(n, m, subset, min(n, 3))),
)
def sparse_parity(
    n: int, m: int | None = None, subset: Sequence[int] | None = None
) -> BooleanFunction:
    """m-sparse PARITY: xor of the variables in ``subset`` (default: x_1..x_m, m = min(N, 3))."""
    sub = resolve_subset(n, m, subset, min(n, 3))
    return BooleanFunction(subset_weights(n, sub) & np.uint8(1))


@register_family("dictator", min_sensitivity=lambda n, i=1, negate=False: 1)
def dictator(n: int, i: int = 1, negate: bool = False) -> BooleanFunction:
    """DICTATOR: f(x) = x_i (or 1 - x_i with negate)."""
    i = check_int("i", i, minimum=1, maximum=n, hint=f"a variable index in 1..N = {n}")
    w = subset_weights(n, [i])
    return BooleanFunction(w ^ np.uint8(bool(negate)))


@register_family("first", min_sensitivity=lambda n, negate=False: 1)
def first(n: int, negate: bool = False) -> BooleanFunction:
    """FIRST: f(x) = x_1 (the dictator of the first bit)."""
    return dictator(n, 1, negate)


@register_family("threshold")
def threshold(n: int, k: int | None = None) -> BooleanFunction:
    """THRESHOLD_k: 1 iff |x| >= k, 0 <= k <= N + 1 (default k = floor(N/2) + 1)."""
    k = n // 2 + 1 if k is None else check_int("k", k, minimum=0, maximum=n + 1)
    return BooleanFunction(_from_weights(subset_weights(n), np.arange(n + 1) >= k))


@register_family("majority")
def majority(n: int, tie: str = "zero") -> BooleanFunction:
    """MAJORITY: 1 iff more ones than zeros; at even N a tie gives ``tie`` ("zero" or "one")."""
    return threshold(n, _majority_threshold(n, tie))


@register_family("sparse_majority")
def sparse_majority(
    n: int, m: int | None = None, subset: Sequence[int] | None = None, tie: str = "zero"
) -> BooleanFunction:
    """m-sparse MAJORITY: majority of the variables in ``subset`` (default x_1..x_m, m =
    min(N, 3)); ties (even m) give ``tie``."""
    sub = resolve_subset(n, m, subset, min(n, 3))
    k = _majority_threshold(len(sub), tie)
    return BooleanFunction(_from_weights(subset_weights(n, sub), np.arange(n + 1) >= k))


@register_family("and")
def and_(n: int) -> BooleanFunction:
    """AND: 1 iff every bit is 1."""
    return threshold(n, n)


@register_family("or")
def or_(n: int) -> BooleanFunction:
    """OR: 1 iff some bit is 1."""
    return threshold(n, 1)


@register_family("mod")
def mod(n: int, k: int = 3) -> BooleanFunction:
    """MOD_k: 1 iff |x| = 0 (mod k), k >= 2 (MOD_2 is the negation of PARITY)."""
    k = check_int("k", k, minimum=2)
    return BooleanFunction(_from_weights(subset_weights(n), np.arange(n + 1) % k == 0))


@register_family("inner_product", min_sensitivity=lambda n: 0)
def inner_product(n: int) -> BooleanFunction:
    """INNER PRODUCT (even N = 2h): sum_{j=1..h} x_j x_{h+j} mod 2."""
    if n % 2:
        raise ValidationError("N", "an even number of bits for inner_product", n)
    h = n // 2
    parity_h = subset_weights(h) & np.uint8(1)  # parity of an h-bit index
    x = np.arange(1 << h, dtype=np.int64)  # x_1..x_h: the low h bits of the index
    out = np.empty((1 << h, 1 << h), dtype=np.uint8)
    for y in range(1 << h):  # x_{h+1}..x_N: the high h bits; f = parity(popcount(x & y))
        out[y] = parity_h[x & y]
    out = out.reshape(-1)
    return BooleanFunction(out)


@register_family("constant", min_sensitivity=lambda n, value=0: 0)
def constant(n: int, value: int = 0) -> BooleanFunction:
    """CONSTANT: f(x) = value (0 or 1); every string has sensitivity 0."""
    value = check_int("value", value, minimum=0, maximum=1)
    return BooleanFunction(np.full(1 << n, value, dtype=np.uint8))


@register_family("random")
def random(n: int, seed: int = 0) -> BooleanFunction:
    """RANDOM: a uniformly random truth table drawn with numpy.random.default_rng(seed)."""
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    return BooleanFunction(rng.integers(0, 2, size=1 << n, dtype=np.uint8))
