"""The 2-norm radius rules of the double-double tier and of the exhaustive kernel at L >= 2
against an independent implementation (issue 41: ``tests/_l2_reference.py``), on constructions
where each term weighs: the kernel's radius must be at least the reference's (1 - REL) on every
one, so a kernel that lost a term, used the wrong norm's gain or the wrong block's norm falls
below it. Printed: kernel / reference for each (the report's ratios).

Constructions (``construct``): layer-norm gains that differ per norm and per coordinate (30
and 0.03, both ways round, the final norm's 3), out_proj dominant (x10, the query blocks x0.3),
the FFN dominant on the post-LN path (W_1 x20), value blocks dominant (x4), large key biases
(x30), random gains and biases; post-LN and pre-LN (with a final norm), eps 0 and 1e-5, L = 2
(the exhaustive kernel's readout layer) and L = 3 (its all-positions layer). The double-double
kernel runs with the embeddings' radii widened by R = 1e-9 (so that the propagated terms, not
its ~1e-31 rounding, make the radius); the exhaustive kernel as it is (its layer-0 radius is
~1e-15..1e-13, comparable to the rounding of the stages after it, so both parts weigh).
Stage tests: ``attention_l2`` with zero input radii (its whole radius is rounding: the
softmax's rounding at the score midpoints dominates) and with radii 1e-3; ``matvec_l2`` at
rho = 0 and rho comparable to its rounding; the layer norm's Lipschitz constant on a ball of
radius 0.6 |P v| (``layer_norm_l2`` and the double-double ``layer_norm_lipschitz``).

All run with and without the JIT (``tests/test_radius_mutations.py`` runs them against the
radius mutants, the exhaustive kernel with the Python bodies of its register intrinsics).
"""

from __future__ import annotations

import dataclasses
import math
import os

import _l2_reference as ref
import _radius_mutants
import numpy as np
import pytest

from verify.model import ModelConfig, Params, init_params
from verify.model.double_double import dd_T, prepare_dd
from verify.model.exhaustive import exhaustive_T
from verify.model.kernels.bundles import BS
from verify.model.kernels.dd_l2 import attention_l2, layer_norm_lipschitz
from verify.model.kernels.register_sums import LS_ROWS
from verify.model.kernels.stage_l2 import layer_norm_l2, matvec_l2
from verify.model.matrix_norms import spectral_norm_upper

NO_JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
needs_intrinsics = pytest.mark.skipif(
    NO_JIT and not _radius_mutants.python_intrinsics_installed(),
    reason="the exhaustive kernel's register intrinsics (run with -p _radius_mutants)",
)
R = 1e-9  # the double-double kernel's embedding radius, added to its tables' own
CONSTRUCTIONS = (
    "gains_30_003", "gains_003_30", "out_proj", "ffn_w1", "values", "key_bias", "random",
)  # fmt: skip


def construct(name: str, norm_first: bool, eps: float, n_layers: int = 2, seed: int = 0) -> Params:
    cfg = ModelConfig(
        d_model=8, n_layers=n_layers, n_heads=2, d_ff=16, norm_first=norm_first, ln_eps=eps,
        final_norm=True if norm_first else None, max_len=8, pos_encoding="learned",
    )  # fmt: skip
    p = init_params(cfg, "gaussian", seed=seed, scale=0.7)
    rng = np.random.default_rng(seed + 100)
    d = cfg.d_model
    arrays: dict[str, np.ndarray] = {}
    for layer in range(n_layers):
        pre = f"layers.{layer}."
        w_in = p[pre + "self_attn.in_proj_weight"].copy()
        b_in = p[pre + "self_attn.in_proj_bias"].copy()
        per_coord = rng.uniform(0.5, 1.5, size=d) * np.where(rng.random(d) < 0.5, -1.0, 1.0)
        if name in ("gains_30_003", "gains_003_30"):
            big = 1.5 if norm_first else 30.0  # pre-LN: norm1's gain squares into the scores
            g1, g2 = (big, 0.03) if name == "gains_30_003" else (0.03, 30.0)
            arrays[pre + "norm1.weight"] = g1 * per_coord
            arrays[pre + "norm2.weight"] = g2 * per_coord[::-1]
        elif name == "out_proj":
            arrays[pre + "self_attn.out_proj.weight"] = 10.0 * p[pre + "self_attn.out_proj.weight"]
            w_in[:d] *= 0.3
        elif name == "ffn_w1":
            arrays[pre + "linear1.weight"] = 20.0 * p[pre + "linear1.weight"]
        elif name == "values":
            w_in[2 * d :] *= 4.0
            w_in[:d] *= 0.5
        elif name == "key_bias":
            b_in[d : 2 * d] *= 30.0
        elif name == "random":
            for nm in ("norm1", "norm2"):
                arrays[pre + nm + ".weight"] = rng.uniform(-3, 3, size=d)
                arrays[pre + nm + ".bias"] = rng.normal(size=d)
        arrays[pre + "self_attn.in_proj_weight"] = w_in
        arrays[pre + "self_attn.in_proj_bias"] = b_in
    if cfg.final_norm:
        arrays["final_norm.weight"] = 3.0 * rng.uniform(0.5, 1.5, size=d)
    return p.with_arrays(arrays)


def _settings() -> list[tuple[str, bool, float]]:
    return [(c, nf, eps) for c in CONSTRUCTIONS for nf in (False, True) for eps in (0.0, 1e-5)]


def _assert_at_least(
    kernel: np.ndarray, reference: np.ndarray, what: str, min_finite: float = 1.0
) -> None:
    """kernel >= reference (1 - REL) everywhere (an infinite kernel radius is >= anything; NaN
    fails), finite on at least min_finite of the entries."""
    finite = np.isfinite(kernel)
    ratio = kernel[finite] / reference[finite]
    print(f"{what}: kernel / reference min {ratio.min():.5f} max {ratio.max():.5f}"
          f" ({finite.sum()} of {finite.size} finite)")  # fmt: skip
    assert finite.mean() >= min_finite and np.all(reference > 0), (kernel, reference)
    assert np.all(kernel >= reference * (1 - ref.REL)), (what, kernel / reference)


@pytest.mark.parametrize(("name", "norm_first", "eps"), _settings())
def test_double_double_radius_at_least_the_reference(
    name: str, norm_first: bool, eps: float
) -> None:
    p = construct(name, norm_first, eps)
    bits = np.array([[0, 1, 1], [1, 1, 0]], dtype=np.uint8)
    inputs = prepare_dd(p, 3)
    tables = inputs.tables._replace(y0_rad=inputs.tables.y0_rad + R)
    _, r = dd_T(p, bits, inputs=dataclasses.replace(inputs, tables=tables))
    _assert_at_least(r, ref.dd_radius(p, bits, tables.y0_rad), f"dd {name} {norm_first} {eps}")


@needs_intrinsics
@pytest.mark.parametrize(("name", "norm_first", "eps"), _settings())
def test_exhaustive_radius_at_least_the_reference(name: str, norm_first: bool, eps: float) -> None:
    n_layers = 3 if name in ("random", "values", "out_proj") else 2  # all-positions layers too
    p = construct(name, norm_first, eps, n_layers=n_layers)
    _, r = exhaustive_T(p, 3)
    _assert_at_least(r, ref.exhaustive_radius(p, 3), f"exhaustive {name} {norm_first} {eps}")


@needs_intrinsics
@pytest.mark.parametrize("norm_first", [False, True])
def test_exhaustive_layer0_ffn_radius_materialises(norm_first: bool) -> None:
    """Layer 0's MLP norm at eps = 0 on near-cancelling inputs (embeddings 300 + O(0.01)): z is
    large, so the hidden pre-activation's radius r_u dominates layer 0's output radius, which
    enters the 2-norm as |W_2|_2 sqrt(f) r_u; the kernel's radius is at least the reference's."""
    p = construct("random", norm_first, 0.0, n_layers=2, seed=3)
    rng = np.random.default_rng(1)
    tok = 300.0 + 0.01 * rng.normal(size=p["token_embedding"].shape)
    pos = 0.01 * rng.normal(size=p["pos_embedding"].shape)
    zero = {f"layers.0.{nm}": np.zeros_like(p[f"layers.0.{nm}"])
            for nm in ("self_attn.out_proj.weight", "self_attn.out_proj.bias")}  # fmt: skip
    p = p.with_arrays({"token_embedding": tok, "pos_embedding": pos, **zero})
    _, r = exhaustive_T(p, 3)
    want = ref.exhaustive_radius(p, 3)  # (inf where LN of a near-constant vector: fail closed)
    _assert_at_least(r, want, f"exhaustive layer-0 FFN {norm_first}", min_finite=0.5)


def _attention_case(seed: int, radius: float) -> tuple:
    rng = np.random.default_rng(seed)
    s, n_heads, dh = 5, 2, 4
    d = n_heads * dh
    qkv = rng.normal(size=(s, 3 * d)) * np.repeat([2.0, 2.0, 1.0], d)  # scores up to ~10
    rq = radius * rng.uniform(0.5, 1.0, size=(s, 3 * n_heads))
    return qkv, rq, n_heads


@pytest.mark.parametrize(("seed", "radius"), [(0, 0.0), (1, 0.0), (2, 1e-3), (3, 1e-6)])
def test_attention_l2_at_least_the_reference(seed: int, radius: float) -> None:
    """Zero input radii: the radius is the rounding (the softmax's rounding at the score
    midpoints, sum_j p0_j |v_j|, its largest part); radii 1e-3: the propagated terms."""
    qkv, rq, n_heads = _attention_case(seed, radius)
    s, d3 = qkv.shape
    d = d3 // 3
    qh = np.ascontiguousarray(qkv[:, :, None])
    ath, atl, rat = np.zeros((d, 1)), np.zeros((d, 1)), np.zeros(1)
    ph, pl, pr = np.zeros((s, 1)), np.zeros((s, 1)), np.zeros((s, 1))
    for i in (0, s - 1):
        attention_l2(qh, np.zeros_like(qh), np.ascontiguousarray(rq[:, :, None]), i, n_heads,
                     0.5, 0.0, 0.0, ath, atl, rat, ph, pl, pr)  # fmt: skip
        want = ref.dd_attention(qkv, rq, i, n_heads, 0.5)
        _assert_at_least(rat, np.array([want]), f"attention_l2 seed {seed} radius {radius} i {i}")


def _matvec_l2(w, b, x, rho):
    m = w.shape[0]
    out, rout, xmax = np.zeros((m, BS)), np.zeros(BS), np.zeros(BS)
    rows = float(ref.xref.sum_up(np.abs(w).sum(axis=1).max(), w.shape[1]))
    matvec_l2(x, np.full(BS, rho), np.ascontiguousarray(w.T), b, 0, m, rows,
              float(np.abs(b).max()), spectral_norm_upper(w), out, rout, xmax, np.zeros(BS),
              np.ones(BS), True)  # fmt: skip
    return out, rout


@pytest.mark.parametrize("rho", [0.0, 1e-14])
def test_matvec_l2_at_least_the_reference(rho: float) -> None:
    """|W|_2 rho + sqrt(rows) r0 with rho comparable to the rounding r0 (a product of 16 rows):
    both terms weigh."""
    rng = np.random.default_rng(7)
    w, b = rng.normal(size=(16, 8)), rng.normal(size=16)
    x = rng.normal(size=(8, BS))
    _, rout = _matvec_l2(w, b, x, rho)
    want = np.array([ref.matvec_l2(w, b, x[:, k], rho)[1] for k in range(BS)])
    _assert_at_least(rout, want, f"matvec_l2 rho {rho}")


def _ln_case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = 8
    v = rng.normal(size=(d, BS)) + 5.0
    gain = 30.0 * rng.uniform(0.5, 1.5, size=d) * np.where(rng.random(d) < 0.5, -1, 1)
    return v, gain, rng.normal(size=d)


@pytest.mark.parametrize("eps", [0.0, 1e-5])
@pytest.mark.parametrize("frac", [0.0, 0.6])
def test_layer_norm_l2_at_least_the_reference(eps: float, frac: float) -> None:
    """Lip(ball) rho + sqrt(d) r0 with rho = frac |P v|: at 0.6 the Lipschitz constant on the
    ball is 2.5x the one at the midpoint; at 0 the radius is the rounding."""
    v, gain, bias = _ln_case(11)
    d = v.shape[0]
    pv = np.linalg.norm(v - v.mean(axis=0), axis=0)
    rho = frac * pv
    out, rout, ls = np.zeros((d, BS)), np.zeros(BS), np.zeros((LS_ROWS, BS))
    gmax, bmax = float(np.abs(gain).max()), float(np.abs(bias).max())
    layer_norm_l2(v, rho, gain, bias, gmax, bmax, eps, out, rout, ls, np.zeros((d, BS)),
                  np.zeros(BS), True)  # fmt: skip
    want = np.array([ref.layer_norm_l2(v[:, k], rho[k], gain, bias, eps)[1] for k in range(BS)])
    _assert_at_least(rout, want, f"layer_norm_l2 eps {eps} rho {frac} |Pv|")


@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_double_double_layer_norm_lipschitz_at_least_the_reference(eps: float) -> None:
    v, gain, _ = _ln_case(12)
    nb = 8
    vh = np.ascontiguousarray(v[:, :nb])
    rho = 0.6 * np.linalg.norm(vh - vh.mean(axis=0), axis=0)
    out = np.zeros(nb)
    layer_norm_lipschitz(vh, np.zeros_like(vh), rho, eps, float(np.abs(gain).max()), out)
    want = np.array(
        [ref.lipschitz(vh[:, k], rho[k], eps, float(np.abs(gain).max())) for k in range(nb)]
    )
    _assert_at_least(out, want, f"layer_norm_lipschitz eps {eps}")
    assert math.isfinite(out.max())
