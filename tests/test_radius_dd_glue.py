"""The double-double tier's glue with teeth (issue 25): constructions where the propagated
terms of ``double_double.dd_l2.attention_l2`` materialise (measured with arb at the worst corner of
the input balls, asserting containment and that the error reaches a stated fraction of the
radius), and the matrix norms ``verify.model.double_double.dd_pass`` hands the kernel (the readout's
|w|_2 above all) against exact ones.

- value ball: every score 0 (q = 0), so p = 1/s, and each value block of each head moved by
  rho along the same unit vector: the head outputs move by exactly rho each, 2-norm sqrt(H)
  rho; the rule's value term sum_j (p_j + r_p,j) rho_v,j is the whole radius (error / radius
  0.99999...): a halved or dropped value term fails containment;
- key (query) ball: two positions, values +1 and -1 in one coordinate, scores 0; the keys
  (the query) moved by their radius along (against) the query (key) so that the two scores
  move apart by 2 sigma: the output moves by tanh(sigma) ~ sigma, which is the rule's
  Jacobian term sum_j (|p_j| + r_p,j) sigma_j |v_j - a| (error / radius 1 - O(sigma)): the
  score radius's |q| r_k (|k| r_q) term or the Jacobian term halved fails containment.

All run with and without the JIT (tests/test_radius_mutations.py runs them against the radius
mutants).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from verify.model import ModelConfig, init_params
from verify.model.arithmetic.contexts import arb_precision
from verify.model.double_double.dd_l2 import attention_l2
from verify.model.double_double.dd_pass import dd_T, prepare_dd

D, H = 8, 2
DH = D // H  # 4: 1 / sqrt(d_h) = 0.5 exactly (cm = 0.5, no radius)


def _attention(q: np.ndarray, rq: np.ndarray, i: int) -> tuple[np.ndarray, float]:
    """attention_l2 at query position i for one string: (output high + low parts as arb, rat)."""
    s = q.shape[0]
    qh = np.ascontiguousarray(q[:, :, None])
    ql = np.zeros_like(qh)
    ath, atl = np.zeros((D, 1)), np.zeros((D, 1))
    rat = np.zeros(1)
    ph, pl, pr = np.zeros((s, 1)), np.zeros((s, 1)), np.zeros((s, 1))
    rqa = np.ascontiguousarray(rq[:, :, None])
    attention_l2(qh, ql, rqa, i, H, 0.5, 0.0, 0.0, ath, atl, rat, ph, pl, pr)
    return np.array([arb(ath[e, 0]) + arb(atl[e, 0]) for e in range(D)], dtype=object), rat[0]


def _exact_attention(q0: np.ndarray, delta: np.ndarray, i: int) -> np.ndarray:
    """The exact concatenated head outputs (arb) of queries/keys/values q0 + delta (s, 3D),
    the sum taken exactly (a float64 sum would round the corner off the ball)."""
    s = q0.shape[0]
    q = np.vectorize(arb, otypes=[object])(q0) + np.vectorize(arb, otypes=[object])(delta)
    out = []
    for hd in range(H):
        c0 = hd * DH
        scores = [
            arb(0.5) * sum(q[i, c0 + e] * q[j, D + c0 + e] for e in range(DH)) for j in range(s)
        ]
        ex = [sc.exp() for sc in scores]
        tot = sum(ex)
        for e in range(DH):
            out.append(sum(ex[j] * q[j, 2 * D + c0 + e] for j in range(s)) / tot)
    return np.array(out, dtype=object)


def _fraction(got: np.ndarray, exact: np.ndarray, rat: float) -> arb:
    err = sum((g - x) ** 2 for g, x in zip(got, exact, strict=True)).sqrt()
    assert err <= arb(rat), (err, rat)  # containment at the worst corner
    return err / arb(rat)


def test_value_ball_materialises_the_value_term() -> None:
    """Scores all 0, values moved by rho along (1, 1, 1, 1) / 2 in every head: error sqrt(H)
    rho, radius ~ sqrt(H) rho; error / radius >= 0.9999."""
    rng = np.random.default_rng(11)
    s, rho = 4, 1e-6
    q = np.zeros((s, 3 * D))
    q[:, 2 * D :] = rng.normal(size=(s, D))
    rq = np.zeros((s, 3 * H))
    rq[:, 2 * H :] = rho
    with arb_precision(256):
        got, rat = _attention(q, rq, s - 1)
        delta = np.zeros_like(q)
        delta[:, 2 * D :] = rho / 2  # |(1, 1, 1, 1) / 2|_2 = 1 per head
        exact = _exact_attention(q, delta, s - 1)
        frac = _fraction(got, exact, rat)
    print("value ball: error / radius", frac)
    assert frac >= 0.9999, frac


@pytest.mark.parametrize("ball", ["keys", "query"])
def test_score_ball_materialises_the_jacobian_term(ball: str) -> None:
    """Two positions, values +1 / -1 (coordinate 0 of head 0), scores 0; a key (query) ball of
    radius r moved to pull the scores apart by 2 sigma, sigma = 0.5 |q| r (0.5 |k| r): error
    tanh(sigma), error / radius >= 0.999."""
    s, r, mag = 2, 1e-4, 1.5
    q = np.zeros((s, 3 * D))
    q[0, 2 * D], q[1, 2 * D] = 1.0, -1.0  # the values of head 0, coordinate 0
    rq = np.zeros((s, 3 * H))
    delta = np.zeros_like(q)
    if ball == "keys":
        q[1, 0] = mag  # the query at position 1 (head 0); keys 0
        rq[:, H] = r  # head 0's key blocks
        delta[0, D], delta[1, D] = r, -r  # keys along +q and -q
    else:
        q[0, D], q[1, D] = mag, -mag  # keys +mag and -mag (head 0); the query 0
        rq[1, 0] = r  # head 0's query at position 1
        delta[1, 0] = r
    with arb_precision(256):
        got, rat = _attention(q, rq, s - 1)
        exact = _exact_attention(q, delta, s - 1)
        frac = _fraction(got, exact, rat)
    print(ball, "ball: error / radius", frac)
    assert frac >= 0.999, frac


def test_matrix_norms_bound_the_exact_norms() -> None:
    """The norms the double-double kernel multiplies radii by: the readout's |w|_2 (its
    spectral norm as a one-row matrix, and l2), every block's spectral norm (>= numpy's SVD
    value, with 1e-12 for the SVD's own error), Frobenius norm and bias 2-norm (exact squares
    in Fraction)."""
    cfg = ModelConfig(d_model=D, n_layers=2, n_heads=H, d_ff=16, max_len=8)
    p = init_params(cfg, "gaussian", seed=3, scale=0.7)
    inp = prepare_dd(p, 4)
    w = np.asarray(p["readout.weight"], dtype=np.float64).reshape(-1)
    w2 = sum(Fraction(float(x)) ** 2 for x in w)
    wr = inp.readout_norms
    assert Fraction(float(wr[0])) ** 2 >= w2 and Fraction(float(wr[1])) ** 2 >= w2, (wr, w2)
    assert wr[0] <= 1.01 * float(np.linalg.norm(w)), wr  # and not vacuous
    for layer in range(cfg.n_layers):
        pre = f"layers.{layer}."
        w_in, b_in = p[pre + "self_attn.in_proj_weight"], p[pre + "self_attn.in_proj_bias"]
        blocks = [
            (w_in[r0 : r0 + DH], b_in[r0 : r0 + DH])
            for blk in range(3)
            for r0 in (blk * D + hd * DH for hd in range(H))
        ]
        blocks += [(p[pre + nm + ".weight"], p[pre + nm + ".bias"])
                   for nm in ("self_attn.out_proj", "linear1", "linear2")]  # fmt: skip
        for c, (wm, bias) in enumerate(blocks):
            spec, fro, bn = inp.matrix_norms[layer, :, c]
            assert spec >= np.linalg.norm(wm, 2) * (1 - 1e-12), (layer, c, spec)
            assert Fraction(float(fro)) ** 2 >= sum(Fraction(float(x)) ** 2 for x in wm.ravel())
            assert Fraction(float(bn)) ** 2 >= sum(Fraction(float(x)) ** 2 for x in bias)


def test_readout_glue_materialises_an_input_ball() -> None:
    """The driver's glue (``per_string_dd.certified_T_dd``): initial 2-norm radius of the
    embeddings, residual sums, and the readout's |w|_2 r_y. A pre-LN one-layer model without a
    final norm whose attention output and FFN are exactly 0 (out_proj, linear1, linear2 zero):
    T = w . y_r + b. Every embedding gets the componentwise radius rho (the kernel's 2-norm
    radius sqrt(d) rho), and |w_e| = c for all e, so the corner y_r + rho sign(w) moves T by
    rho |w|_1 = |w|_2 sqrt(d) rho: the whole readout term. Error / radius >= 0.9999; a halved
    |w|_2, initial radius or residual term fails containment."""
    cfg = ModelConfig(
        d_model=D, n_layers=1, n_heads=H, d_ff=16, norm_first=True, final_norm=False, eos=False,
        max_len=8, pos_encoding="learned",
    )  # fmt: skip
    p = init_params(cfg, "gaussian", seed=5, scale=0.7)
    signs = np.where(np.random.default_rng(5).random(D) < 0.5, -1.0, 1.0)
    zero = {
        nm: np.zeros_like(p[nm])
        for nm in (
            "layers.0.self_attn.out_proj.weight", "layers.0.self_attn.out_proj.bias",
            "layers.0.linear1.weight", "layers.0.linear1.bias", "layers.0.linear2.weight",
            "layers.0.linear2.bias",
        )
    }  # fmt: skip
    p = p.with_arrays({**zero, "readout.weight": 0.375 * signs.reshape(p["readout.weight"].shape)})
    bits = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]], dtype=np.uint8)
    inp = prepare_dd(p, 3)
    rho = 1e-6
    tables = inp.tables._replace(y0_rad=np.full_like(inp.tables.y0_rad, rho))
    t, r = dd_T(p, bits, inputs=dataclasses.replace(inp, tables=tables))
    w = p["readout.weight"].reshape(-1)
    with arb_precision(256):
        for b, row in enumerate(bits):
            tok = [int(x) for x in row]
            i = len(tok) - 1
            exact = arb(float(p["readout.bias"].reshape(-1)[0]))
            for e in range(D):
                y = arb(float(p["token_embedding"][tok[i], e])) + arb(
                    float(p["pos_embedding"][i, e])
                )
                exact += arb(float(w[e])) * (y + arb(rho) * arb(float(signs[e])))
            err = abs(exact - arb(float(t[b])))
            assert err <= arb(float(r[b])), (b, err, r[b])
            frac = err / arb(float(r[b]))
            print("readout glue: error / radius", frac)
            assert frac >= 0.9999, frac
