"""The exhaustive kernel's 2-norm radius rules (L >= 2) against an independent implementation
(issue 41: ``tests/_l2_reference.py``) on constructions where each term weighs
(``tests/_l2_constructions.py``): the kernel's radius must be at least the reference's (1 - REL).
Printed: kernel / reference (the report's ratios).

- ``matvec_l2`` at rho = 0 and rho = 1e-14 (comparable to its rounding: both terms weigh);
- ``layer_norm_l2`` at rho = 0 (the rounding) and rho = 0.6 |P v| (the Lipschitz constant on
  the ball), gains ~30, eps 0 and 1e-5;
- the whole kernel ``exhaustive_T`` as it is (its layer-0 radius, ~1e-15..1e-13, is comparable
  to the rounding of the stages after it, so both parts weigh), every construction, post-LN and
  pre-LN (with a final norm), eps 0 and 1e-5, L = 2 (the readout layer) and L = 3 (an
  all-positions layer too);
- layer 0's FFN radius materialising: the MLP's norm at eps = 0 on near-cancelling inputs (z
  large), so that |W_2|_2 sqrt(f) r_u carries the output radius.

Runs with and without the JIT; without it, the kernel needs the Python bodies of its register
intrinsics (the plugin ``-p _radius_mutants``, as ``tests/test_radius_mutations.py`` runs it).
"""

from __future__ import annotations

import os

import _l2_reference as ref
import _radius_mutants
import numpy as np
import pytest
from _l2_constructions import assert_at_least, construct, ln_case, settings

from verify.model.arithmetic.matrix_norms import spectral_norm_upper
from verify.model.exhaustive.exhaustive_pass import exhaustive_T
from verify.model.stages.bundles import BS
from verify.model.stages.register_sums import LS_ROWS
from verify.model.stages.stage_l2 import layer_norm_l2, matvec_l2

NO_JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
needs_intrinsics = pytest.mark.skipif(
    NO_JIT and not _radius_mutants.python_intrinsics_installed(),
    reason="the exhaustive kernel's register intrinsics (run with -p _radius_mutants)",
)


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
    assert_at_least(rout, want, f"matvec_l2 rho {rho}")


@pytest.mark.parametrize("eps", [0.0, 1e-5])
@pytest.mark.parametrize("frac", [0.0, 0.6])
def test_layer_norm_l2_at_least_the_reference(eps: float, frac: float) -> None:
    """Lip(ball) rho + sqrt(d) r0 with rho = frac |P v|: at 0.6 the Lipschitz constant on the
    ball is 2.5x the one at the midpoint; at 0 the radius is the rounding."""
    v, gain, bias = ln_case(11)
    d = v.shape[0]
    pv = np.linalg.norm(v - v.mean(axis=0), axis=0)
    rho = frac * pv
    out, rout, ls = np.zeros((d, BS)), np.zeros(BS), np.zeros((LS_ROWS, BS))
    gmax, bmax = float(np.abs(gain).max()), float(np.abs(bias).max())
    layer_norm_l2(v, rho, gain, bias, gmax, bmax, eps, False, out, rout, ls, np.zeros((d, BS)),
                  np.zeros(BS), True)  # fmt: skip
    want = np.array([ref.layer_norm_l2(v[:, k], rho[k], gain, bias, eps)[1] for k in range(BS)])
    assert_at_least(rout, want, f"layer_norm_l2 eps {eps} rho {frac} |Pv|")


@needs_intrinsics
@pytest.mark.parametrize(("name", "norm_first", "eps"), settings())
def test_exhaustive_radius_at_least_the_reference(name: str, norm_first: bool, eps: float) -> None:
    n_layers = 3 if name in ("random", "values", "out_proj") else 2  # all-positions layers too
    p = construct(name, norm_first, eps, n_layers=n_layers)
    _, r = exhaustive_T(p, 3)
    assert_at_least(r, ref.exhaustive_radius(p, 3), f"exhaustive {name} {norm_first} {eps}")


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
    assert_at_least(r, want, f"exhaustive layer-0 FFN {norm_first}", min_finite=0.5)


@needs_intrinsics
@pytest.mark.parametrize("norm_first", [False, True])
def test_exhaustive_radius_holds_the_exact_value(norm_first: bool) -> None:
    """Every construction at L = 2, eps = 0: arb's ball of the exact T (256 bits) lies in the
    kernel's ball for each of the 8 strings. Printed: the largest exact error / radius (the
    kernel's own rounding against its worst-case bound)."""
    from flint import arb

    from verify.boolean.function import all_bit_strings
    from verify.model.arithmetic.contexts import arb_precision
    from verify.model.generic.enclosure import enclose_output

    for name in ("gains_30_003", "gains_003_30", "out_proj", "ffn_w1", "values", "key_bias",
                 "random"):  # fmt: skip
        p = construct(name, norm_first, 0.0)
        t, r = exhaustive_T(p, 3)
        bits = all_bit_strings(3)  # the kernel's index order (sum_k x_k 2^k)
        exact = enclose_output(p, bits, prec=256)
        worst = 0.0
        with arb_precision(256):
            for k in range(8):
                err = abs(exact[k] - arb(float(t[k])))
                assert err <= arb(float(r[k])), (name, k, err, r[k])
                worst = max(worst, float(err.upper()) / r[k])
        print(f"exhaustive {name} {norm_first}: exact error / radius <= {worst:.2e}")
