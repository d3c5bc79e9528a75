"""The explicit eps > 0 bounds of arXiv 2606.08768 (Lemma 2.9, 3.1, 3.2, Cor 3.3, 3.4,
Prop 3.5's C_Lip over a box; its cap: :mod:`verify.theory.packing`), computed from the
configuration and a parameter-norm summary
(:mod:`verify.theory.norms`: one parameter vector, several, or the whole box).

The papers give these bounds as O(.); the derivations are in docs/derivations.md (the statements
there are *reconstructions*). Influence norm: the Euclidean norm on R^D of the change of the
final vector at the readout position, I_n = ||y^L_r(x) - y^L_r(x^n)||_2; norm on theta: the
Euclidean norm on R^M. Every function here is plain arithmetic on the summary (no checks).

**Factors.** Every factor of the derivations is a named module-level function (``infl_*`` for
C_infl, ``lip_*`` for C_Lip, :func:`lemma_3_2_exponent`, :func:`z_max`; Prop 3.5's
:func:`~verify.theory.packing.packing_radius` in :mod:`verify.theory.packing`)
that the composite constants look up at call time. A mutation test (tests/test_mutations.py)
weakens one of them with ``monkeypatch.setattr(bounds, name, weaker)`` and asserts that a
registered check then reports a violation; the unmutated values are those of the written-out
formulas (docs/derivations.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import mpmath
import numpy as np

from verify.errors import ValidationError
from verify.model import ModelConfig, Params
from verify.theory.norms import (  # beta_lower_bound, ln_input_norm_bounds: re-exported
    HeadNorms,
    LayerNorms,
    LinearForm,
    ParamNorms,
    beta_lower_bound,
    box_norms,
    ln_input_norm_bounds,
    n_layer_norms,
    norms_of,
)
from verify.validation import check_int, check_real


# ----------------------------------------------------------------------------- Lemma 3.2
def z_max(config: ModelConfig) -> float:
    """Lemma 3.2: z = 1/sqrt(var + eps) <= eps^{-1/2} (inf at eps = 0)."""
    eps = config.ln_eps
    return math.inf if eps == 0 else eps**-0.5


def lemma_3_2_exponent(config: ModelConfig) -> int:
    """Lemma 3.2's exponent: K = config.n_norms, one factor tau^k per layer norm on the path
    (the paper's L counts one norm per layer; docs/derivations.md#lemma-32)."""
    return n_layer_norms(config)


def lemma_3_2_bound(config: ModelConfig) -> float:
    """Lemma 3.2 (K = config.n_norms): beta(theta, x) <= (1 + eps^{-1/2})^K."""
    return (1.0 + z_max(config)) ** lemma_3_2_exponent(config)


def lemma_3_2_per_layer_bound(config: ModelConfig) -> float:
    """Lemma 3.2 in the paper's convention (one factor per layer): beta_L <= (1 + eps^{-1/2})^L."""
    return (1.0 + z_max(config)) ** config.n_layers


# ----------------------------------------------------------------------------- Lemma 2.9
def infl_token_change(nm: ParamNorms) -> float:
    """Lemma 2.9, step 1: the change a0 = ||E[1] - E[0]||_2 of y^0_n when bit n flips."""
    return nm.token_diff


def infl_ln_factor(gain: float) -> float:
    """Lemma 2.9, step 2: a layer norm's endpoint Lipschitz factor per unit of
    rho = tau(x) tau(x^n): ||gamma||_inf 2 z z'/(z + z') <= (||gamma||_inf / 4) (1+z)(1+z')."""
    return gain / 4.0


def infl_ffn_factor(lay: LayerNorms) -> float:
    """Lemma 2.9, step 4: the MLP's Lipschitz factor F = ||W_2|| ||W_1|| (ReLU 1-Lipschitz)."""
    return lay.w2 * lay.w1


def infl_softmax_weight(q_bar: float, k_bar: float, sqrt_dh: float) -> mpmath.mpf:
    """Lemma 2.9, step 3: S times the largest softmax weight, e^{2R} with R = q k / sqrt(d_h)
    (p_j <= 1/(1 + (S-1) e^{-2R}) <= e^{2R}/S). In mpmath: no float64 overflow."""
    return mpmath.exp(2 * mpmath.mpf(q_bar) * k_bar / sqrt_dh)


def infl_value_term(hd: HeadNorms) -> float:
    """Lemma 2.9, step 3: the value change per unit input change, V = ||W_v^h||."""
    return hd.wv


def infl_reweighting(v_c: float, g: float) -> float:
    """Lemma 2.9, step 3, another position: the softmax-reweighting term 2 v_c G (||dp||_1 <=
    2 sum_j p_j |ds_j|, centred values ||v - b_v|| <= v_c, logit change G per unit input)."""
    return 2 * v_c * g


def infl_reweighting_at_flip(v_c: float, logit_range: float) -> float:
    """Lemma 2.9, step 3, the flipped position: the softmax-reweighting term v_c (max_j Δs_j -
    min_j Δs_j) / 2 (Cov_p(Δs, v) <= sqrt(Var_p Δs) v_c, Popoviciu: Var_p Δs <= range^2 / 4);
    ``logit_range`` per unit input change: 2 G_q + G_k for a, 2 G_k for bt."""
    return v_c * logit_range / 2


def infl_out_proj(lay: LayerNorms) -> float:
    """Lemma 2.9, step 3: the output projection's factor ||W_o||."""
    return lay.wo


def head_sum(per_head: list) -> mpmath.mpf:
    """Lemma 2.9, step 3: heads combined through W_o by Minkowski, sqrt(sum_h c_h^2)."""
    return mpmath.sqrt(mpmath.fsum(x * x for x in per_head))


def infl_residual(stream, block):
    """Lemma 2.9, steps 4-5: a residual connection adds the block's change to the stream's
    (for the MLP written as the factor 1 + F on the stream)."""
    return stream + block


def _attention_influence(
    lay: LayerNorms, y_in: float, d_head: int, a: mpmath.mpf, bt: mpmath.mpf
) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Lemma 2.9, step 3: bounds on the MHA output change when its input changes by <= a at
    the flipped position n and by <= bt / S at every other position: (at n, S * at the others).
    Per head (q = Q Y + b_q, k = K Y + b_k bound query/key norms, R = q k / sqrt(d_h),
    v_c = V Y the centred values), G_q = Q k / sqrt(d_h), G_k = q K / sqrt(d_h), G = G_q + G_k:
    other m: S ||Δo_m|| <= (V + 2 v_c G) bt + e^{2R} (V + 2 v_c G_k) a,
    at n:      ||Δo_n|| <= (V + v_c (G_q + G_k / 2)) a + (V + v_c G_k) bt;
    heads combine through ||W_o|| by Minkowski (docs/derivations.md, Lemma 2.9, step 3)."""
    at_n_a, at_n_b, oth_a, oth_b = [], [], [], []
    for hd in lay.heads:
        qn = hd.wq * y_in + hd.bq
        kn = hd.wk * y_in + hd.bk
        vc = hd.wv * y_in
        sq = math.sqrt(d_head)
        gq, gk = hd.wq * kn / sq, qn * hd.wk / sq
        g = gq + gk
        big_e = infl_softmax_weight(qn, kn, sq)
        v = infl_value_term(hd)
        at_n_a.append(v + infl_reweighting_at_flip(vc, 2 * gq + gk))
        at_n_b.append(v + infl_reweighting_at_flip(vc, 2 * gk))
        oth_b.append(v + infl_reweighting(vc, g))
        oth_a.append(big_e * (v + infl_reweighting(vc, gk)))

    def comb(c: list) -> mpmath.mpf:
        return infl_out_proj(lay) * head_sum(c)

    return comb(at_n_a) * a + comb(at_n_b) * bt, comb(oth_a) * a + comb(oth_b) * bt


def attention_influence(
    lay: LayerNorms, y_in: float, d_head: int, a: float, bt: float
) -> tuple[float, float]:
    """Lemma 2.9, step 3 as floats (for the unit steps): :func:`_attention_influence` with every
    attention input of norm <= y_in and input changes <= a at n, <= bt / S elsewhere."""
    m_n, m_o = _attention_influence(lay, y_in, d_head, mpmath.mpf(a), mpmath.mpf(bt))
    return float(m_n), float(m_o)


def c_infl(source: Params | ParamNorms) -> float:
    """C_infl of Lemma 2.9 from the parameter norms (inf if it exceeds float64; see
    :func:`_c_infl_mp` for the recursion and docs/derivations.md for the derivation)."""
    return float(_c_infl_mp(norms_of(source)))


def log10_c_infl(source: Params | ParamNorms) -> float:
    """Lemma 2.9: log10 of C_infl (finite even when C_infl overflows float64, e.g. for a whole
    box)."""
    return float(mpmath.log10(_c_infl_mp(norms_of(source))))


def _c_infl_layer_mp(
    nm: ParamNorms, i: int, a: mpmath.mpf, bt: mpmath.mpf
) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Lemma 2.9, steps 2-5 for layer ``i``: (a, bt) after it from (a, bt) before it (the bound
    at the flipped position and S times the bound at every other position)."""
    cfg = nm.config
    lay = nm.layers[i]
    lam1, lam2 = infl_ln_factor(lay.g1), infl_ln_factor(lay.g2)
    ffn = infl_ffn_factor(lay)
    if cfg.norm_first:
        y_in = lay.g1 * math.sqrt(cfg.d_model) + lay.n1
        m_n, m_o = _attention_influence(lay, y_in, cfg.d_head, lam1 * a, lam1 * bt)
        a, bt = infl_residual(a, m_n), infl_residual(bt, m_o)
        mlp = infl_residual(1, ffn * lam2)  # (1 + lambda_2 F): the MLP's residual
        return mlp * a, mlp * bt
    if i == 0:
        y_in = nm.emb_max
    else:
        prev = nm.layers[i - 1]
        y_in = prev.g2 * math.sqrt(cfg.d_model) + prev.n2
    m_n, m_o = _attention_influence(lay, y_in, cfg.d_head, a, bt)
    a, bt = lam1 * infl_residual(a, m_n), lam1 * infl_residual(bt, m_o)
    mlp = infl_residual(1, ffn)  # (1 + F): the MLP's residual
    return lam2 * mlp * a, lam2 * mlp * bt


def _c_infl_stack_mp(nm: ParamNorms, n_layers: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(a, bt) after the first ``n_layers`` layers, by the recursion on L: (||E[1] - E[0]||, 0)
    before the first, then :func:`_c_infl_layer_mp` (the chain to the code proves it for every
    L by induction on this recursion)."""
    if n_layers == 0:
        return mpmath.mpf(infl_token_change(nm)), mpmath.mpf(0)
    a, bt = _c_infl_stack_mp(nm, n_layers - 1)
    return _c_infl_layer_mp(nm, n_layers - 1, a, bt)


def _c_infl_parts_mp(nm: ParamNorms) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(a_L, bt_L) of the recursion of :func:`_c_infl_mp`: the bound at the flipped position and
    S times the bound at every other position, per unit of beta(x) beta(x^n)."""
    a, bt = _c_infl_stack_mp(nm, nm.config.n_layers)
    if nm.config.norm_first:
        lam_f = infl_ln_factor(nm.gf)
        a, bt = lam_f * a, lam_f * bt
    return a, bt


def _c_infl_mp(nm: ParamNorms) -> mpmath.mpf:
    """C_infl of Lemma 2.9 from the parameter norms (see docs/derivations.md):

    ||y^L_r(x) - y^L_r(x^n)||_2 <= C_infl * beta(x) * beta(x^n) * (1/N + delta_{r,n}).

    Computed by the recursion on (a, bt) = (change at the flipped position, S * change at the
    others), starting from (||E[1] - E[0]||, 0), with each layer norm contributing
    ||gamma||_inf / 4 (its endpoint Lipschitz factor 2 z z'/(z + z') <= (1+z)(1+z')/4 times the
    gain), residuals 1, FFNs ||W_2|| ||W_1||, attention as in :func:`_attention_influence`;
    C_infl = max(a_L, bt_L). Evaluated in mpmath (the factor e^{2R} can exceed float64)."""
    return max(_c_infl_parts_mp(nm))


def c_infl_parts(source: Params | ParamNorms) -> tuple[float, float]:
    """Lemma 2.9, step 6 before the max: (a_L, bt_L) with I_n <= a_L beta beta' at the flipped
    position (r = n) and I_n <= bt_L beta beta' / S at every other readout position (r != n);
    C_infl = max of the two. Floats (inf beyond float64)."""
    a, bt = _c_infl_parts_mp(norms_of(source))
    return float(a), float(bt)


def c_infl_box(config: ModelConfig, box: float | Mapping[str, float]) -> float:
    """Lemma 2.9 over a box: an upper bound on sup_Theta C_infl(theta) (:func:`c_infl` of
    :func:`~verify.theory.norms.box_norms`; C_infl is monotone in every norm)."""
    return c_infl(box_norms(config, box))


def lemma_2_9_bound(
    c: float, beta_x: np.ndarray | float, beta_xn: np.ndarray | float, n_bits: int, at_readout
) -> np.ndarray:
    """Lemma 2.9: C * beta(x) * beta(x^n) * (1/N + delta_{r,n}); ``at_readout``: the flipped bit
    is the readout position (only without eos). Arrays broadcast."""
    n = check_int("N", n_bits, minimum=1)
    delta = np.asarray(at_readout, dtype=np.float64)
    return c * np.asarray(beta_x) * np.asarray(beta_xn) * (1.0 / n + delta)


# ----------------------------------------------------------------------------- Cor 3.3, 3.4
def cor_3_3_bound(source: Params | ParamNorms) -> float:
    """Cor 3.3 times N: ||w|| C_infl (1 + eps^{-1/2})^{2K}; then for n not the readout position
    |T(x) - T(x^n)| <= this / N for every x of length N (inf if beyond float64)."""
    return float(mpmath.mpf(10) ** _log10_cor_3_3(norms_of(source)))


def cor_3_3_exponent(config: ModelConfig) -> int:
    """Cor 3.3's blowup exponent 2K: Lemma 2.9 has beta(x) beta(x^n), each <= (1 +
    eps^{-1/2})^K by Lemma 3.2 (:func:`lemma_3_2_exponent`), so the product's exponent is 2K."""
    return 2 * lemma_3_2_exponent(config)


def _log10_cor_3_3(nm: ParamNorms) -> mpmath.mpf:
    if nm.config.ln_eps == 0:
        return mpmath.inf
    zm = mpmath.mpf(z_max(nm.config))
    exponent = cor_3_3_exponent(nm.config)
    return mpmath.log10(nm.w * _c_infl_mp(nm)) + exponent * mpmath.log10(1 + zm)


def n_star(source: Params | ParamNorms, xi: float) -> float:
    """Cor 3.4: beyond N* = ||w|| C_infl (1 + eps^{-1/2})^{2K} / (2 xi) no parameter of the
    summary (a Params, or box_norms for all of Theta) recognises a non-constant function with
    margin xi (eos=True: every bit is off the readout position). inf at eps = 0."""
    return float(mpmath.mpf(10) ** log10_n_star(source, xi))


def log10_n_star(source: Params | ParamNorms, xi: float) -> float:
    """Cor 3.4: log10 of :func:`n_star` (finite where N* exceeds float64; inf at eps = 0)."""
    xi = check_real("xi", xi, strictly_positive=True)
    nm = norms_of(source)
    if not nm.config.eos:
        raise ValidationError(
            "config", "eos=True (Cor 3.4 needs the readout off the input bits)", nm.config.eos
        )
    return float(_log10_cor_3_3(nm) - mpmath.log10(2 * xi))


# ----------------------------------------------------------------------------- Lemma 3.1
# Factors of C_Lip (Lemma 3.1), one function each (see the module doc).
def lemma_3_1_bound(c_lip_value: float, dtheta_norm: float) -> float:
    """Lemma 3.1: |T(theta, x) - T(theta', x)| <= C_Lip ||theta - theta'||_2, every x and N."""
    return float(c_lip_value) * float(dtheta_norm)


def lip_ln_input_factor(gain: float, config: ModelConfig) -> float:
    """Lemma 3.1, step 2: a layer norm's Lipschitz factor in its input, ||gamma||_inf
    eps^{-1/2} (the Jacobian z (P - g g^T / D) has norm z <= eps^{-1/2})."""
    return gain * z_max(config)


def lip_ln_gain_coefficient(d_model: int) -> float:
    """Lemma 3.1, step 2: the coefficient of ||Δgamma||, ||LN-normalised vector||_inf <=
    sqrt(D - 1)."""
    return math.sqrt(max(d_model - 1, 0))


def lip_ln_bias_coefficient() -> float:
    """Lemma 3.1, step 2: the coefficient of ||Δbeta|| (1)."""
    return 1.0


def lip_value_term(hd: HeadNorms, inp: LinearForm, group: str, y_in: float) -> LinearForm:
    """Lemma 3.1, step 3: the value change Δv <= V e + Y ||ΔW_v^h|| + ||Δb_v^h||."""
    return hd.wv * inp + LinearForm.unit(f"{group}.w", y_in) + LinearForm.unit(f"{group}.b")


def lip_reweighting(
    hd: HeadNorms,
    y_in: float,
    sqrt_dh: float,
    q_bar: float,
    k_bar: float,
    dq: LinearForm,
    dk: LinearForm,
) -> LinearForm:
    """Lemma 3.1, step 3: the softmax-reweighting term V Y (k Δq + q Δk) / sqrt(d_h):
    sum_j Δp_j (v'_j - b'_v) is the integral of Cov_p(Δs, W'_v y'_j) along the logit segment,
    at most max_j |Δs_j| V Y by Cauchy-Schwarz (Var_p Δs <= max_j Δs_j^2), with
    |Δs_j| <= (k Δq + q Δk) / sqrt(d_h) (docs/derivations.md#lemma-31, step 3)."""
    return (hd.wv * y_in / sqrt_dh) * (k_bar * dq + q_bar * dk)


def lip_head_sum(forms: list[LinearForm]) -> LinearForm:
    """Lemma 3.1, step 3: heads combined through W_o by Minkowski (per group, l2 over heads)."""
    return LinearForm.l2_combine(forms)


def lip_out_proj_factor(lay: LayerNorms) -> float:
    """Lemma 3.1, step 3: the output projection's factor ||W_o||."""
    return lay.wo


def lip_out_proj_weight_coefficient(vbar: list[float]) -> float:
    """Lemma 3.1, step 3: the coefficient of ||ΔW_o||, sqrt(sum_h (V_h Y + b_v^h)^2)."""
    return math.sqrt(sum(v * v for v in vbar))


def lip_out_proj_bias_coefficient() -> float:
    """Lemma 3.1, step 3: the coefficient of ||Δb_o|| (1)."""
    return 1.0


def lip_ffn_input_factor(lay: LayerNorms) -> float:
    """Lemma 3.1, step 4: the first linear map's factor ||W_1|| on the input change."""
    return lay.w1


def lip_ffn_output_factor(lay: LayerNorms) -> float:
    """Lemma 3.1, step 4: the second linear map's factor ||W_2|| (ReLU 1-Lipschitz)."""
    return lay.w2


def lip_ffn_weight_coefficients(lay: LayerNorms, y_in: float) -> tuple[float, float]:
    """Lemma 3.1, step 4: the coefficients of ||ΔW_1|| (Y) and of ||ΔW_2|| (||W_1|| Y + b_1)."""
    return y_in, lay.w1 * y_in + lay.b1


def lip_readout_factor(nm: ParamNorms) -> float:
    """Lemma 3.1, step 4: the readout's factor ||w|| on the change of the final vector."""
    return nm.w


def lip_readout_weight_coefficient(y_out: float) -> float:
    """Lemma 3.1, step 4: the coefficient of ||Δw||, the bound Y_out on the final vector."""
    return y_out


def lip_readout_bias_coefficient() -> float:
    """Lemma 3.1, step 4: the coefficient of |Δomega| (1)."""
    return 1.0


def lip_group_combine(coefficients: dict[str, float]) -> float:
    """Lemma 3.1, step 5: sum_g L_g ||Δtheta_g|| <= sqrt(sum_g L_g^2) ||Δtheta||_2
    (Cauchy-Schwarz over the groups; math.fsum: exactly rounded, independent of the order)."""
    return math.sqrt(math.fsum(v * v for v in coefficients.values()))


def lipschitz_coefficients(source: Params | ParamNorms) -> dict[str, float]:
    """Lemma 3.1, per parameter group: L_g with |T(theta, x) - T(theta', x)| <= sum_g L_g
    ||theta_g - theta'_g||_2 for every x of every length, when the summary bounds the norms of
    theta and theta' (eps > 0).

    Groups: each array of theta; in_proj_weight/bias split into their q, k, v blocks per head.
    Derivation: docs/derivations.md, Lemma 3.1. Each factor is one of the ``lip_*`` functions;
    the groups are returned in sorted order."""
    nm = norms_of(source)
    cfg = nm.config
    if cfg.ln_eps <= 0:
        raise ValidationError("config.ln_eps", "a value > 0 (Lemma 3.1 needs eps > 0)", cfg.ln_eps)
    d, dh = cfg.d_model, cfg.d_head
    sq = math.sqrt(dh)
    cmax = lip_ln_gain_coefficient(d)  # ||LN-normalised vector||_inf <= sqrt(D - 1)
    e = LinearForm.unit("token_embedding")
    if cfg.pos_encoding == "learned":
        e = e + LinearForm.unit("pos_embedding")

    def norm_delta(name: str, gain: float, inp: LinearForm) -> LinearForm:
        out = lip_ln_input_factor(gain, cfg) * inp
        if cfg.ln_affine:
            out = out + LinearForm.unit(name + ".weight", cmax)
            out = out + LinearForm.unit(name + ".bias", lip_ln_bias_coefficient())
        return out

    def attention(p: str, lay: LayerNorms, y_in: float, inp: LinearForm) -> LinearForm:
        heads, vbar = [], []
        for i, hd in enumerate(lay.heads):
            qn, kn = hd.wq * y_in + hd.bq, hd.wk * y_in + hd.bk
            dq = hd.wq * inp + LinearForm.unit(f"{p}q{i}.w", y_in) + LinearForm.unit(f"{p}q{i}.b")
            dk = hd.wk * inp + LinearForm.unit(f"{p}k{i}.w", y_in) + LinearForm.unit(f"{p}k{i}.b")
            dv = lip_value_term(hd, inp, f"{p}v{i}", y_in)
            heads.append(dv + lip_reweighting(hd, y_in, sq, qn, kn, dq, dk))
            vbar.append(hd.wv * y_in + hd.bv)
        out = lip_out_proj_factor(lay) * lip_head_sum(heads)
        wo_coef = lip_out_proj_weight_coefficient(vbar)
        out = out + LinearForm.unit(p + "self_attn.out_proj.weight", wo_coef)
        return out + LinearForm.unit(p + "self_attn.out_proj.bias", lip_out_proj_bias_coefficient())

    def ffn(p: str, lay: LayerNorms, y_in: float, inp: LinearForm) -> LinearForm:
        c1, c2 = lip_ffn_weight_coefficients(lay, y_in)
        pre = lip_ffn_input_factor(lay) * inp + LinearForm.unit(p + "linear1.weight", c1)
        pre = pre + LinearForm.unit(p + "linear1.bias")
        out = lip_ffn_output_factor(lay) * pre + LinearForm.unit(p + "linear2.weight", c2)
        return out + LinearForm.unit(p + "linear2.bias")

    y_out = nm.emb_max
    for i, lay in enumerate(nm.layers):
        p = f"layers.{i}."
        y1 = lay.g1 * math.sqrt(d) + lay.n1
        y2 = lay.g2 * math.sqrt(d) + lay.n2
        if cfg.norm_first:
            u = norm_delta(p + "norm1", lay.g1, e)
            h = e + attention(p, lay, y1, u)
            v = norm_delta(p + "norm2", lay.g2, h)
            e = h + ffn(p, lay, y2, v)
        else:
            y_in = nm.emb_max if i == 0 else y_out
            h = norm_delta(p + "norm1", lay.g1, e + attention(p, lay, y_in, e))
            e = norm_delta(p + "norm2", lay.g2, h + ffn(p, lay, y1, h))
            y_out = y2
    if cfg.norm_first:
        e = norm_delta("final_norm", nm.gf, e)
        y_out = nm.gf * math.sqrt(d) + nm.nf
    t = lip_readout_factor(nm) * e
    t = t + LinearForm.unit("readout.weight", lip_readout_weight_coefficient(y_out))
    t = t + LinearForm.unit("readout.bias", lip_readout_bias_coefficient())
    return {k: t.c[k] for k in sorted(t.c) if t.c[k] != 0.0}


def c_lip(source: Params | ParamNorms) -> float:
    """C_Lip of Lemma 3.1 in the Euclidean norm on theta: sqrt(sum_g L_g^2) (Cauchy-Schwarz over
    the groups of :func:`lipschitz_coefficients`). Independent of the input and its length."""
    return lip_group_combine(lipschitz_coefficients(source))


def c_lip_box(config: ModelConfig, box: float | Mapping[str, float]) -> float:
    """Lemma 3.1 over a box: C_Lip = sqrt(sum_g L_g^2) valid for every pair theta, theta' of
    the box (:func:`c_lip` of :func:`~verify.theory.norms.box_norms`)."""
    return c_lip(box_norms(config, box))


# every public function defined here, the factor functions (infl_* of C_infl, lip_* of C_Lip)
# too (the mutation tests weaken them), and the two re-exported from verify.theory.norms
__all__ = [
    n
    for n, v in list(globals().items())
    if getattr(v, "__module__", "") == __name__ and callable(v) and not n.startswith("_")
] + ["beta_lower_bound", "ln_input_norm_bounds"]
