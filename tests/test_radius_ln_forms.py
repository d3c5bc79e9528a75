"""The annotated-transformer layer norm (``ln_form="annotated"``, issue 44): its formula against
an independent reference written from the formula, and its radius rules with teeth.

LN(v) = a (v - mean) / (std_unbiased + eps) + b, std_unbiased = sqrt(sum (v_i - mean)^2 / (D - 1)).

- ``annotated_ln_reference`` below is written from that formula alone (mpmath, 60 digits), not
  from ``verify.model.generic.reference``; the mpmath context must agree with it to 1e-40, arb's
  balls and the float64 MidRad balls must contain it, and the plain float64 pass must be close to
  it;
- the MidRad rule for sqrt of a non-negative quantity (the unbiased std) is checked against the
  exact worst error over its input ball on constructions that make each of its terms carry the
  bound (its rounding at r = 0, the linear term away from 0, the Hoelder term sqrt(r) at 0, the
  low end of the ball);
- whole models in the annotated form: the MidRad ball of T contains arb's, at eps > 0 and at
  eps = 0 with a nearly constant layer-norm input;
- fail closed: the Numba forward (diagnostics) kernel refuses the annotated form; the
  per-string, exhaustive and double-double kernels and the sub-cube pass compute it (their
  radius rules: ``tests/test_radius_ln_kernels.py``).

Runs without the JIT too (pure numpy / arb): ``tests/test_radius_mutations.py`` runs it against
the mutants of ``tests/_radius_mutants.py``'s issue-44 block.
"""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np
import pytest
from flint import arb

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, init_params
from verify.model.arithmetic.contexts import (
    ArbContext,
    MidRad,
    MidRadContext,
    MpmathContext,
    arb_precision,
)
from verify.model.arithmetic.rounding import U
from verify.model.generic.enclosure import enclose_output
from verify.model.generic.reference import layer_norm_ctx, run_generic
from verify.model.plain.forward_numpy import layer_norm

DPS = 60


def annotated_ln_reference(v, gain, bias, eps: float) -> list:
    """a (v - mean) / (std_unbiased + eps) + b of one vector, in mpmath at DPS digits, written
    from the formula (float64 inputs taken exactly)."""
    with mpmath.workdps(DPS):
        x = [mpmath.mpf(float(t)) for t in v]
        d = len(x)
        mean = mpmath.fsum(x) / d
        std = mpmath.sqrt(mpmath.fsum((t - mean) ** 2 for t in x) / (d - 1))
        return [
            mpmath.mpf(float(g)) * (t - mean) / (std + mpmath.mpf(eps)) + mpmath.mpf(float(c))
            for t, g, c in zip(x, gain, bias, strict=True)
        ]


def vectors(seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
    """(v, gain, bias, eps): random ones, and ones that make the std small against eps and
    against the entries (near-constant inputs) or the gains large."""
    rng = np.random.default_rng(seed)
    out = []
    for d in (2, 3, 8):
        for eps in (0.0, 1e-6, 1e-2, 0.5):
            v = rng.normal(size=d) * 10.0 ** rng.integers(-3, 3)
            out.append((v, rng.normal(size=d), rng.normal(size=d), eps))
        base = np.full(d, 3.0)
        base[0] += 1e-7  # nearly constant: std ~ 1e-7, comparable to eps = 1e-6
        out.append((base, np.full(d, 4.0), np.zeros(d), 1e-6))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_annotated_layer_norm_equals_its_formula(seed: int) -> None:
    for v, gain, bias, eps in vectors(seed):
        want = annotated_ln_reference(v, gain, bias, eps)
        ctx = MpmathContext(DPS)
        with ctx.active():
            out, _ = layer_norm_ctx(
                ctx, ctx.const(v[None]), eps, (ctx.const(gain), ctx.const(bias)), form="annotated"
            )
            for got, w in zip(out[0], want, strict=True):
                assert abs(got - w) <= mpmath.mpf(10) ** -40 * (1 + abs(w)), (v, eps)
        dense, _ = layer_norm(v[None], eps, gain, bias, "annotated")
        for got, w in zip(dense[0], want, strict=True):
            assert abs(got - float(w)) <= 1e-9 * (1 + abs(float(w))), (v, eps)
        # the torch form is another function wherever eps or the bias of the std matters
        torch_out, _ = layer_norm(v[None], eps, gain, bias, "torch")
        if eps == 0.0 and v.size > 1 and np.ptp(v) > 1e-3:
            assert np.max(np.abs(torch_out[0] - dense[0])) > 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_annotated_layer_norm_balls_contain_the_formula(seed: int) -> None:
    for v, gain, bias, eps in vectors(seed):
        want = annotated_ln_reference(v, gain, bias, eps)
        mr = MidRadContext()
        with mr.active():
            out, _ = layer_norm_ctx(
                mr, mr.const(v[None]), eps, (mr.const(gain), mr.const(bias)), form="annotated"
            )
            out = out[0]
        actx = ArbContext(200)
        with actx.active():
            balls, _ = layer_norm_ctx(
                actx,
                actx.const(v[None]),
                eps,
                (actx.const(gain), actx.const(bias)),
                form="annotated",
            )
            balls = balls[0]
        with mpmath.workdps(DPS):
            for k, w in enumerate(want):
                err = abs(mpmath.mpf(float(out.mid[k])) - w)
                assert err <= mpmath.mpf(float(out.rad[k])), (v, eps, k, float(err))
                with arb_precision(200):
                    # the reference, rounded to 58 digits, as a ball of radius 1e-55
                    assert balls[k].overlaps(arb(mpmath.nstr(w, 58), 1e-55)), (v, eps, k)


def _sqrt_worst_error(m: float, r: float, mid: float) -> mpmath.mpf:
    """max over x in [max(m - r, 0), m + r] of |sqrt(x) - mid| (sqrt is monotone: an end)."""
    with mpmath.workdps(DPS):
        lo = max(mpmath.mpf(m) - mpmath.mpf(r), mpmath.mpf(0))
        hi = mpmath.mpf(m) + mpmath.mpf(r)
        return max(abs(mpmath.sqrt(lo) - mid), abs(mpmath.sqrt(hi) - mid))


# (m, r): r = 0 (the rounding term alone), far from 0 (the linear term), at 0 and straddling
# it (the Hoelder term sqrt(r)), the ball's low end near 0 (linearising at the midpoint fails)
SQRT_CASES = [(2.0, 0.0), (3.0, 0.0), (0.1, 0.0), (4.0, 1e-3), (1e6, 1.0), (0.0, 1e-6),
              (1e-8, 1e-6), (1.0, 1.0), (1.0, 0.999), (5e-7, 5e-7), (2.0, 1e-15)]  # fmt: skip


@pytest.mark.parametrize(("m", "r"), SQRT_CASES)
def test_sqrt_nonneg_radius_contains_the_worst_error(m: float, r: float) -> None:
    out = MidRadContext().sqrt_nonneg(MidRad(np.array([m]), np.array([r])))
    worst = _sqrt_worst_error(m, r, float(out.mid[0]))
    assert worst <= float(out.rad[0]), (m, r, float(worst), float(out.rad[0]))


def test_sqrt_nonneg_radius_on_random_balls() -> None:
    rng = np.random.default_rng(3)
    m = 10.0 ** rng.uniform(-12, 6, 400)
    r = m * 10.0 ** rng.uniform(-17, 1, 400)
    out = MidRadContext().sqrt_nonneg(MidRad(m, r))
    for k in range(m.size):
        worst = _sqrt_worst_error(float(m[k]), float(r[k]), float(out.mid[k]))
        assert worst <= float(out.rad[k]), (m[k], r[k])
    # and the rule is not vacuous: within 4x of the worst error away from 0
    away = (m - r) > m / 2
    assert np.all(out.rad[away] <= 4 * r[away] / np.sqrt(m[away]) + 4 * U * out.mid[away])


def annotated_model(eps: float, norm_first: bool, seed: int, *, constant_input: bool) -> Params:
    cfg = ModelConfig(
        d_model=4, n_layers=2, n_heads=2, d_ff=8, ln_eps=eps, norm_first=norm_first,
        pos_encoding="learned", max_len=4, ln_form="annotated",
    )  # fmt: skip
    p = init_params(cfg, "gaussian", seed=seed)
    if constant_input:  # the first norm's input at position 0 nearly constant: std ~ 1e-9
        tok = np.array(p["token_embedding"])
        pos = np.array(p["pos_embedding"])
        pos[0] = 0.7 - tok[0] + np.array([1e-9, 0.0, 0.0, 0.0])
        p = p.with_arrays({"pos_embedding": pos})
    return p


@pytest.mark.parametrize(
    ("eps", "norm_first", "constant_input"),
    [(1e-6, True, False), (0.0, False, False), (0.0, True, True), (1e-6, True, True)],
)
def test_midrad_ball_of_T_contains_arb(eps: float, norm_first: bool, constant_input: bool) -> None:
    p = annotated_model(eps, norm_first, 5, constant_input=constant_input)
    bits = np.array([[0, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 0]], dtype=np.uint8)
    res = run_generic(MidRadContext(), p, bits, readout_only=True).T
    balls = enclose_output(p, bits, prec=256)
    finite = 0
    for k in range(bits.shape[0]):
        if not np.isfinite(res.rad[k]):
            continue
        finite += 1
        with arb_precision(256):
            ours = arb(float(res.mid[k]), float(res.rad[k]) * (1 + 4 * U))
            assert balls[k].is_finite() and ours.contains(balls[k].mid()), (k, res.rad[k])
    assert finite >= 1


def test_annotated_torch_forms_differ_as_models() -> None:
    """The two forms are different models on the same arrays (eps = 0.5): a certified table of
    one is not the other's."""
    p = annotated_model(0.5, True, 1, constant_input=False)
    torch_p = Params(dataclasses.replace(p.config, ln_form="torch"), dict(p))
    bits = np.array([[0, 0, 1], [1, 0, 1]], dtype=np.uint8)
    a = run_generic(MidRadContext(), p, bits).T
    t = run_generic(MidRadContext(), torch_p, bits).T
    assert np.all(np.abs(a.mid - t.mid) > a.rad + t.rad)


def _refuses(fn, *args) -> bool:
    try:
        fn(*args)
    except ValidationError as exc:
        return exc.argument == "ln_form"
    return False


def test_torch_only_passes_refuse_the_annotated_form() -> None:
    """The pass that computes torch's form only refuses the annotated one; the kernels that
    take the form as a flag (per-string, exhaustive, double-double) accept it and carry it,
    and the sub-cube pass computes it."""
    from verify.model.double_double.dd_pass import prepare_dd
    from verify.model.exhaustive.exhaustive_pass import prepare_exhaustive
    from verify.model.per_string.per_string_pass import prepare
    from verify.model.plain.forward_numba import forward_numba
    from verify.model.subcube.subcube_pass import certify_subcubes

    p = annotated_model(1e-6, True, 0, constant_input=False)
    bits = np.zeros((1, 3), dtype=np.uint8)
    assert _refuses(forward_numba, p, bits), "Numba forward kernel"
    assert certify_subcubes(p, 3, 0.0).label.shape == (8,)
    assert prepare(p, 3).scalars.ln_annotated
    assert prepare_exhaustive(p, 3).per_string.scalars.ln_annotated
    assert prepare_dd(p, 3).scalars.ln_annotated
    torch_p = Params(dataclasses.replace(p.config, ln_form="torch"), dict(p))
    assert not prepare(torch_p, 3).scalars.ln_annotated


# every layout option with the annotated form: (norm_first, final_norm, eos, pos, embedding, eps)
LAYOUTS = [
    (False, None, True, "sinusoidal", "add", 0.0),
    (True, None, False, "learned", "add", 1e-6),
    (True, False, True, "learned", "concat", 1e-2),
    (False, True, False, "none", "add", 1e-6),
    (True, None, True, "sinusoidal", "concat", 0.0),
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_in_the_annotated_form_is_enclosed(layout) -> None:
    """MidRad's ball of T contains arb's at 256 bits, and the plain float64 pass lies within
    the MidRad radius of its midpoint (up to its own rounding), on each layout."""
    from verify.model import forward

    norm_first, final, eos, pos, emb, eps = layout
    cfg = ModelConfig(
        d_model=4, n_layers=2, n_heads=2, d_ff=8, ln_eps=eps, norm_first=norm_first,
        final_norm=final, eos=eos, pos_encoding=pos, embedding=emb, max_len=4,
        ln_form="annotated",
    )  # fmt: skip
    p = init_params(cfg, "gaussian", seed=7)
    bits = np.array([[0, 1, 1], [1, 1, 0], [1, 0, 1]], dtype=np.uint8)
    res = run_generic(MidRadContext(), p, bits, readout_only=True).T
    balls = enclose_output(p, bits, prec=256)
    plain = forward(p, bits).T
    for k in range(bits.shape[0]):
        assert np.isfinite(res.rad[k]), k
        with arb_precision(256):
            ours = arb(float(res.mid[k]), float(res.rad[k]) * (1 + 4 * U))
            assert balls[k].is_finite() and ours.contains(balls[k].mid()), (layout, k)
        assert abs(plain[k] - res.mid[k]) <= res.rad[k] + 1e-12 * (1 + abs(plain[k]))
