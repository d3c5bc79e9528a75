"""The exhaustive kernel's layer-0 table rules with teeth (issue 25): its radius against an
independent implementation (``tests/_exhaustive_reference.py``).

- the bounds ``verify.model.exhaustive.exhaustive_pass`` tabulates for every (query token, position,
  head): E_num, E_den, A_max, E_G, G_max, and the bounds of g0 = M (y0 + b_o) and c0 = W_1 bias +
  b_1, each at least the reference's (runs without the JIT too: ``tests/test_radius_mutations.py``
  runs it against the radius mutants);
- the kernel's T radius of every string of one-layer models (post-LN, pre-LN with and without
  a final norm, post-LN with one; N = 4 with the query bit inside a block and N = 7 beyond
  it), at least the reference's, which follows layer 0 from those bounds through the quotient
  rule (``table_quotient_radius`` and the arguments the kernel passes it), the attention
  output's radius, the MLP-from-tables bound of the hidden pre-activation and the scalar rules
  after it (JIT only: the kernel's sums run in register intrinsics);
- that each term of those rules weighs enough in some construction for a kernel without it to
  fall below the reference (the reference with the term dropped is measured), and that the
  kernel's ball contains arb's ball of the exact T.

Constructions: random; queries and keys x6 (a dominant logit: den near 1, one weight near 1);
biases x100 (out_proj, linear1, linear2 and the MLP's norm's: the (H + 2) U max|b_o| and c0 terms);
near-cancelling layer-norm inputs at eps = 0 (300 + O(0.01): z large, so z r_b and r_z count).
"""

from __future__ import annotations

import os

import _exhaustive_reference as ref
import _radius_mutants
import numpy as np
import pytest
from flint import arb

from verify.model import ModelConfig, Params, init_params
from verify.model.arithmetic.contexts import arb_precision
from verify.model.exhaustive.exhaustive_pass import exhaustive_T, prepare_exhaustive
from verify.model.generic.enclosure import enclose_output
from verify.model.spec.params import param_shapes

NO_JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
# without the JIT the kernel needs Python bodies of its register intrinsics (installed by the
# plugin ``-p _radius_mutants``, as tests/test_radius_mutations.py runs this file)
needs_jit = pytest.mark.skipif(
    NO_JIT and not _radius_mutants.python_intrinsics_installed(),
    reason="the exhaustive kernel's register intrinsics (run with -p _radius_mutants)",
)

# (norm_first, eos, ln_eps, final_norm)
CONFIGS = {
    "post-eos": (False, True, 0.0, None),
    "pre": (True, False, 1e-5, None),
    "pre-no-final-eos": (True, True, 0.0, False),
    "post-final": (False, False, 0.0, True),
}
N_VALUES = (4, 7)  # the readout position inside the low bits of a block (N = 4, no eos) or not


def model(name: str, seed: int = 0) -> Params:
    norm_first, eos, eps, final = CONFIGS[name]
    cfg = ModelConfig(
        d_model=8, n_layers=1, n_heads=2, d_ff=16, norm_first=norm_first, eos=eos, ln_eps=eps,
        pos_encoding="learned", max_len=8, final_norm=final,
    )  # fmt: skip
    return init_params(cfg, "gaussian", seed=seed, scale=0.7)


def dominant_logit(p: Params) -> Params:
    w = p["layers.0.self_attn.in_proj_weight"].copy()
    w[: 2 * p.config.d_model] *= 6.0
    return p.with_arrays({"layers.0.self_attn.in_proj_weight": w})


def big_biases(p: Params) -> Params:
    mlp_norm = "norm2.bias" if p.config.norm_first else "norm1.bias"  # (pre-LN's norm1: queries)
    names = ("self_attn.out_proj.bias", "linear1.bias", "linear2.bias", mlp_norm)
    return p.with_arrays({f"layers.0.{nm}": 100.0 * p[f"layers.0.{nm}"] for nm in names})


def near_cancel(p: Params) -> Params:
    rng = np.random.default_rng(1)
    shapes = param_shapes(p.config)
    arrays = {
        "token_embedding": 300.0 + 0.01 * rng.normal(size=shapes["token_embedding"]),
        "pos_embedding": 0.01 * rng.normal(size=shapes["pos_embedding"]),
    }
    for nm in ("self_attn.out_proj.weight", "self_attn.out_proj.bias"):
        arrays[f"layers.0.{nm}"] = 0.01 * p[f"layers.0.{nm}"]
    return p.with_arrays(arrays)


CONSTRUCTIONS = {
    "random": lambda p: p,
    "dominant_logit": dominant_logit,
    "big_biases": big_biases,
    "near_cancel": near_cancel,
}
CASES = [(c, k, n) for k in CONSTRUCTIONS for c in CONFIGS for n in N_VALUES]


def build(config: str, construction: str) -> Params:
    p = CONSTRUCTIONS[construction](model(config))
    if construction == "near_cancel":
        assert p.config.ln_eps == 0.0 or config == "pre"
    return p


@pytest.mark.parametrize(("config", "n"), [(c, n) for c in CONFIGS for n in N_VALUES])
def test_layer0_table_bounds_at_least_independent(config: str, n: int) -> None:
    """Every bound row of ``verify.model.exhaustive.exhaustive_pass`` >= the reference's, per (query
    slot, position, head); g0 and c0 bounds likewise."""
    p = model(config)
    l0 = prepare_exhaustive(p, n).layer0
    bd = ref.layer0_bounds(p, n)
    s = p.config.seq_len(n)
    k = min(n, 6)
    cols = ("e_num", "e_den", "a_max", "e_g", "g_max")  # in LB_* column order
    ratios = {c: [] for c in cols}
    for i in range(s):
        for slot in (0, 1):
            tok = 3 if (slot == 0 and i < k) else slot  # 3: the maximum over tokens 0 and 1
            if slot == 0 and p.config.eos and i == s - 1:
                tok = 2  # the eos query
            for col, name in enumerate(cols):
                got, want = l0.lo_bound[i, slot, :, col], bd[name][tok, i]
                assert np.all(got >= want * (1 - ref.REL)), (name, i, slot, got, want)
                ratios[name].extend(got / want)
    valid_t = [(t, i) for t in range(3) for i in range(s)]
    for t, i in valid_t:
        assert l0.g0_bound[t, i, 0] >= bd["g0max"][t, i] * (1 - ref.REL), (t, i)
        assert l0.g0_bound[t, i, 1] >= bd["g0rad"][t, i] * (1 - ref.REL), (t, i)
    assert l0.c0_bound[0] >= bd["c0max"] * (1 - ref.REL)
    assert l0.c0_bound[1] >= bd["c0rad"] * (1 - ref.REL)
    for name, r in ratios.items():
        print(config, n, name, "kernel / independent: min", min(r), "median", np.median(r))


@needs_jit
@pytest.mark.parametrize(("config", "construction", "n"), CASES)
def test_exhaustive_radius_at_least_independent(config: str, construction: str, n: int) -> None:
    """The kernel's T radius of every string >= the reference's (T agreeing to rounding)."""
    p = build(config, construction)
    t, r = exhaustive_T(p, n)
    t_ref, r_ref, _, _ = ref.certified_T_L1(p, n)
    settled = np.isfinite(r_ref) & np.isfinite(t_ref)
    assert settled.sum() >= 4, r_ref  # (x6 logits: a tiny den leaves some unsettled)
    tol = 1e-2 * r_ref + 16 * np.spacing(np.abs(t_ref))  # other summation orders
    assert np.all((np.abs(t - t_ref) <= tol)[settled]), (t, t_ref, r_ref)
    assert np.all(np.isnan(t) | ~np.isfinite(r) | settled)  # the kernel settles no more
    ratio = r[settled] / r_ref[settled]
    print(
        config,
        construction,
        n,
        "kernel / independent: min",
        ratio.min(),
        "median",
        np.median(ratio),
    )
    assert np.all(ratio >= 1 - ref.REL), ratio


@needs_jit
@pytest.mark.parametrize(
    ("config", "construction"), [(c, k) for k in CONSTRUCTIONS for c in CONFIGS]
)
def test_exhaustive_ball_contains_exact(config: str, construction: str) -> None:
    """[T - r, T + r] contains arb's ball of the exact T (128 bits), all 16 strings of N = 4."""
    p = build(config, construction)
    t, r = exhaustive_T(p, 4)
    bits = ((np.arange(16)[:, None] >> np.arange(4)) & 1).astype(np.uint8)
    exact = enclose_output(p, bits, prec=128)
    with arb_precision(128):
        for b in np.flatnonzero(np.isfinite(t) & np.isfinite(r)):
            assert arb(t[b]) - arb(r[b]) <= exact[b] <= arb(t[b]) + arb(r[b]), (b, t[b], r[b])


# the terms of the reference's rules (``_exhaustive_reference``: the names passed to _k)
TERMS = (
    "e_num_R", "e_num_M", "e_den_R", "e_den_M", "e_g_R", "e_g_M", "quot_den", "quot_round",
    "attn_round", "g0rad", "rg", "b_round", "u_rz", "u_z_rb", "c0rad", "u_round",
    "low_e_den", "a1_e",  # second order (E / den ~ 1e-13 at random models): a dominant logit
)  # fmt: skip


def _largest_share(cases, params, bounds, full) -> tuple[float, tuple | None]:
    """max over cases and strings of 1 - r_dropped / r_full (ref.DROP set by the caller)."""
    share, where = 0.0, None
    for case in cases:
        b = ref.layer0_bounds(params[case], 4) if ref.DROP & set(TERMS[:6]) else bounds[case]
        r = ref.certified_T_L1(params[case], 4, b)[1]
        ok = np.isfinite(full[case])
        sh = float(np.nanmax(1 - r[ok] / full[case][ok]))
        if sh > share:
            share, where = sh, case
    return share, where


def test_every_term_weighs_in_some_construction() -> None:
    """For each term: on some construction, the reference radius without it is below (1 - 1e-5)
    of the full one for some string, so a kernel missing it fails the test above (REL = 1e-10).
    Prints each term's largest share (1 - dropped / full)."""
    cases = [(c, k, 4) for k in CONSTRUCTIONS for c in CONFIGS]
    params = {case: build(case[0], case[1]) for case in cases}
    bounds = {case: ref.layer0_bounds(params[case], 4) for case in cases}
    full = {case: ref.certified_T_L1(params[case], 4, bounds[case])[1] for case in cases}
    for term in TERMS:
        ref.DROP = frozenset({term})
        try:
            with np.errstate(invalid="ignore"):  # 0 x an infinite dropped term: NaN, not counted
                share, where = _largest_share(cases, params, bounds, full)
        finally:
            ref.DROP = frozenset()
        print(f"{term}: largest share of the T radius {share:.3g} at {where}")
        assert share >= 1e-5, (term, share)
