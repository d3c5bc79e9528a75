"""The explicit eps > 0 bounds of arXiv 2606.08768 (Lemma 2.9, 3.1, 3.2, Cor 3.3, 3.4,
Prop 3.5), computed from the configuration and a parameter-norm summary
(:mod:`verify.theory.norms`: one parameter vector, several, or the whole box).

The papers give these bounds as O(.); the derivations are in docs/derivations.md (the statements
there are *reconstructions*). Influence norm: the Euclidean norm on R^D of the change of the
final vector at the readout position, I_n = ||y^L_r(x) - y^L_r(x^n)||_2; norm on theta: the
Euclidean norm on R^M. Every function here is plain arithmetic on the summary (no checks).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import mpmath
import numpy as np

from verify.errors import ValidationError
from verify.model import ModelConfig, Params, n_params, param_shapes
from verify.theory.norms import (
    LayerNorms,
    ParamNorms,
    box_half_widths,
    box_norms,
    n_layer_norms,
    norms_of,
)
from verify.validation import check_int, check_real

__all__ = [
    "beta_lower_bound",
    "c_infl",
    "c_infl_box",
    "c_lip",
    "c_lip_box",
    "cor_3_3_bound",
    "diameter",
    "lemma_2_9_bound",
    "lemma_3_2_bound",
    "lipschitz_coefficients",
    "ln_input_norm_bounds",
    "log10_c_infl",
    "log10_n_star",
    "log10_prop_3_5",
    "n_star",
    "z_max",
]


# ----------------------------------------------------------------------------- Lemma 3.2
def z_max(config: ModelConfig) -> float:
    """Lemma 3.2: z = 1/sqrt(var + eps) <= eps^{-1/2} (inf at eps = 0)."""
    eps = config.ln_eps
    return math.inf if eps == 0 else eps**-0.5


def lemma_3_2_bound(config: ModelConfig) -> float:
    """Lemma 3.2 (K = config.n_norms): beta(theta, x) <= (1 + eps^{-1/2})^K."""
    return (1.0 + z_max(config)) ** n_layer_norms(config)


def ln_input_norm_bounds(source: Params | ParamNorms) -> list[float]:
    """Lemma 3.2 (tightness, docs/derivations.md#lemma-32): upper bounds on ||d^k_n||_2, the
    input of layer norm k (K of them, path order), for every
    position and every input of any length: LN outputs are bounded by ||gamma||_inf sqrt(D) +
    ||beta||, attention outputs by ||W_o|| sqrt(sum_h (||W_v^h|| Y + ||b_v^h||)^2) + ||b_o||
    (convex combinations of values), MLPs by ||W_2|| (||W_1|| Y + ||b_1||) + ||b_2||."""
    nm = norms_of(source)
    cfg = nm.config
    rd = math.sqrt(cfg.d_model)

    def att(lay: LayerNorms, y_in: float) -> float:
        return lay.wo * math.sqrt(sum((h.wv * y_in + h.bv) ** 2 for h in lay.heads)) + lay.bo

    def mlp(lay: LayerNorms, y_in: float) -> float:
        return lay.w2 * (lay.w1 * y_in + lay.b1) + lay.b2

    out: list[float] = []
    r = nm.emb_max
    for lay in nm.layers:
        y1, y2 = lay.g1 * rd + lay.n1, lay.g2 * rd + lay.n2
        if cfg.norm_first:
            out.append(r)
            h = r + att(lay, y1)
            out.append(h)
            r = h + mlp(lay, y2)
        else:
            out.append(r + att(lay, r))
            out.append(y1 + mlp(lay, y1))
            r = y2
    if cfg.norm_first:
        out.append(r)
    return out


def beta_lower_bound(source: Params | ParamNorms) -> float:
    """Lemma 3.2 (tightness): prod_k (1 + (B_k^2 / D + eps)^{-1/2}) <= beta(theta, x) for every
    x, with B_k from :func:`ln_input_norm_bounds` (population variance <= ||d||^2 / D). Shows
    Lemma 3.2's bound is approached as the layer-norm inputs shrink."""
    nm = norms_of(source)
    d, eps = nm.config.d_model, nm.config.ln_eps
    out = 1.0
    for b in ln_input_norm_bounds(nm):
        v = b * b / d + eps
        out *= math.inf if v == 0 else 1.0 + v**-0.5
    return out


# ----------------------------------------------------------------------------- Lemma 2.9
def _attention_influence(
    lay: LayerNorms, y_in: float, d_head: int, a: mpmath.mpf, bt: mpmath.mpf
) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Lemma 2.9, step 3: bounds on the MHA output change when its input changes by <= a at
    the flipped position n and by <= bt / S at every other position. Returns (at n, S * at
    every other position).

    Per head (q = Q Y + b_q, k = K Y + b_k bound the query/key norms, R = q k / sqrt(d_h) the
    logits, pi <= e^{2R} / S the attention weight of one position, v_c = V Y the centred values):
    other m: S ||Δo_m|| <= (V + 2 v_c G) bt + e^{2R} (V + 2 v_c G_k) a,
    at n:      ||Δo_n|| <= (V + 2 v_c G) a + (V + 2 v_c G_k) bt,
    with G = (Q k + q K) / sqrt(d_h), G_k = q K / sqrt(d_h); heads combine through ||W_o||_2
    (Minkowski over heads). See docs/derivations.md, Lemma 2.9, step 3."""
    at_n_a, at_n_b, oth_a, oth_b = [], [], [], []
    for hd in lay.heads:
        qn = hd.wq * y_in + hd.bq
        kn = hd.wk * y_in + hd.bk
        vc = hd.wv * y_in
        sq = math.sqrt(d_head)
        g = (hd.wq * kn + qn * hd.wk) / sq
        gk = qn * hd.wk / sq
        big_e = mpmath.exp(2 * mpmath.mpf(qn) * kn / sq)  # no overflow: mpf exponent range
        at_n_a.append(hd.wv + 2 * vc * g)
        at_n_b.append(hd.wv + 2 * vc * gk)
        oth_b.append(hd.wv + 2 * vc * g)
        oth_a.append(big_e * (hd.wv + 2 * vc * gk))

    def comb(c: list) -> mpmath.mpf:
        return lay.wo * mpmath.sqrt(mpmath.fsum(x * x for x in c))

    return comb(at_n_a) * a + comb(at_n_b) * bt, comb(oth_a) * a + comb(oth_b) * bt


def c_infl(source: Params | ParamNorms) -> float:
    """C_infl of Lemma 2.9 from the parameter norms (inf if it exceeds float64; see
    :func:`_c_infl_mp` for the recursion and docs/derivations.md for the derivation)."""
    return float(_c_infl_mp(norms_of(source)))


def log10_c_infl(source: Params | ParamNorms) -> float:
    """Lemma 2.9: log10 of C_infl (finite even when C_infl overflows float64, e.g. for a whole
    box)."""
    return float(mpmath.log10(_c_infl_mp(norms_of(source))))


def _c_infl_mp(nm: ParamNorms) -> mpmath.mpf:
    """C_infl of Lemma 2.9 from the parameter norms (see docs/derivations.md):

    ||y^L_r(x) - y^L_r(x^n)||_2 <= C_infl * beta(x) * beta(x^n) * (1/N + delta_{r,n}).

    Computed by the recursion on (a, bt) = (change at the flipped position, S * change at the
    others), starting from (||E[1] - E[0]||, 0), with each layer norm contributing
    ||gamma||_inf / 4 (its endpoint Lipschitz factor 2 z z'/(z + z') <= (1+z)(1+z')/4 times the
    gain), residuals 1, FFNs ||W_2|| ||W_1||, attention as in :func:`_attention_influence`;
    C_infl = max(a_L, bt_L). Evaluated in mpmath (the factor e^{2R} can exceed float64)."""
    cfg = nm.config
    dh = cfg.d_head
    a, bt = mpmath.mpf(nm.token_diff), mpmath.mpf(0)
    for i, lay in enumerate(nm.layers):
        lam1, lam2 = lay.g1 / 4.0, lay.g2 / 4.0
        ffn = lay.w2 * lay.w1
        if cfg.norm_first:
            y_in = lay.g1 * math.sqrt(cfg.d_model) + lay.n1
            m_n, m_o = _attention_influence(lay, y_in, dh, lam1 * a, lam1 * bt)
            a, bt = a + m_n, bt + m_o
            a, bt = (1 + ffn * lam2) * a, (1 + ffn * lam2) * bt
        else:
            if i == 0:
                y_in = nm.emb_max
            else:
                prev = nm.layers[i - 1]
                y_in = prev.g2 * math.sqrt(cfg.d_model) + prev.n2
            m_n, m_o = _attention_influence(lay, y_in, dh, a, bt)
            a, bt = lam1 * (a + m_n), lam1 * (bt + m_o)
            a, bt = lam2 * (1 + ffn) * a, lam2 * (1 + ffn) * bt
    if cfg.norm_first:
        a, bt = nm.gf / 4.0 * a, nm.gf / 4.0 * bt
    return max(a, bt)


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


def _log10_cor_3_3(nm: ParamNorms) -> mpmath.mpf:
    if nm.config.ln_eps == 0:
        return mpmath.inf
    zm = mpmath.mpf(nm.config.ln_eps) ** -0.5
    return mpmath.log10(nm.w * _c_infl_mp(nm)) + 2 * n_layer_norms(nm.config) * mpmath.log10(1 + zm)


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
class _Lin:
    """A linear form sum_g c_g ||Δtheta_g||_2 over parameter groups (plus the zero form)."""

    __slots__ = ("c",)

    def __init__(self, c: dict[str, float] | None = None) -> None:
        self.c = dict(c or {})

    def __add__(self, other: _Lin) -> _Lin:
        out = dict(self.c)
        for k, v in other.c.items():
            out[k] = out.get(k, 0.0) + v
        return _Lin(out)

    def __rmul__(self, s: float) -> _Lin:
        return _Lin({k: s * v for k, v in self.c.items()})

    @staticmethod
    def unit(group: str, s: float = 1.0) -> _Lin:
        return _Lin({group: s})

    @staticmethod
    def l2_combine(forms: list[_Lin]) -> _Lin:
        """Minkowski: sqrt(sum_h (sum_g c_hg d_g)^2) <= sum_g d_g sqrt(sum_h c_hg^2)."""
        keys = {k for f in forms for k in f.c}
        return _Lin({k: math.sqrt(sum(f.c.get(k, 0.0) ** 2 for f in forms)) for k in keys})


def lipschitz_coefficients(source: Params | ParamNorms) -> dict[str, float]:
    """Lemma 3.1, per parameter group: L_g with |T(theta, x) - T(theta', x)| <= sum_g L_g
    ||theta_g - theta'_g||_2 for every x of every length, when the summary bounds the norms of
    theta and theta' (eps > 0).

    Groups: each array of theta; in_proj_weight/bias split into their q, k, v blocks per head.
    Derivation: docs/derivations.md, Lemma 3.1."""
    nm = norms_of(source)
    cfg = nm.config
    if cfg.ln_eps <= 0:
        raise ValidationError("config.ln_eps", "a value > 0 (Lemma 3.1 needs eps > 0)", cfg.ln_eps)
    d, dh = cfg.d_model, cfg.d_head
    zmax = z_max(cfg)
    sq = math.sqrt(dh)
    cmax = math.sqrt(max(d - 1, 0))  # ||LN-normalised vector||_inf <= sqrt(D - 1)
    e = _Lin.unit("token_embedding")
    if cfg.pos_encoding == "learned":
        e = e + _Lin.unit("pos_embedding")

    def norm_delta(name: str, gain: float, inp: _Lin) -> _Lin:
        out = (gain * zmax) * inp
        if cfg.ln_affine:
            out = out + _Lin.unit(name + ".weight", cmax) + _Lin.unit(name + ".bias")
        return out

    def attention(p: str, lay: LayerNorms, y_in: float, inp: _Lin) -> _Lin:
        heads, vbar = [], []
        for i, hd in enumerate(lay.heads):
            qn, kn = hd.wq * y_in + hd.bq, hd.wk * y_in + hd.bk
            dq = hd.wq * inp + _Lin.unit(f"{p}q{i}.w", y_in) + _Lin.unit(f"{p}q{i}.b")
            dk = hd.wk * inp + _Lin.unit(f"{p}k{i}.w", y_in) + _Lin.unit(f"{p}k{i}.b")
            dv = hd.wv * inp + _Lin.unit(f"{p}v{i}.w", y_in) + _Lin.unit(f"{p}v{i}.b")
            heads.append(dv + (2 * hd.wv * y_in / sq) * (kn * dq + qn * dk))
            vbar.append(hd.wv * y_in + hd.bv)
        out = lay.wo * _Lin.l2_combine(heads)
        out = out + _Lin.unit(p + "self_attn.out_proj.weight", math.sqrt(sum(v * v for v in vbar)))
        return out + _Lin.unit(p + "self_attn.out_proj.bias")

    def ffn(p: str, lay: LayerNorms, y_in: float, inp: _Lin) -> _Lin:
        pre = lay.w1 * inp + _Lin.unit(p + "linear1.weight", y_in) + _Lin.unit(p + "linear1.bias")
        out = lay.w2 * pre + _Lin.unit(p + "linear2.weight", lay.w1 * y_in + lay.b1)
        return out + _Lin.unit(p + "linear2.bias")

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
    t = nm.w * e + _Lin.unit("readout.weight", y_out) + _Lin.unit("readout.bias")
    return {k: v for k, v in t.c.items() if v != 0.0}


def c_lip(source: Params | ParamNorms) -> float:
    """C_Lip of Lemma 3.1 in the Euclidean norm on theta: sqrt(sum_g L_g^2) (Cauchy-Schwarz over
    the groups of :func:`lipschitz_coefficients`). Independent of the input and its length."""
    return math.sqrt(sum(v * v for v in lipschitz_coefficients(source).values()))


def c_lip_box(config: ModelConfig, box: float | Mapping[str, float]) -> float:
    """Lemma 3.1 over a box: C_Lip = sqrt(sum_g L_g^2) valid for every pair theta, theta' of
    the box (:func:`c_lip` of :func:`~verify.theory.norms.box_norms`)."""
    return c_lip(box_norms(config, box))


# ----------------------------------------------------------------------------- Prop 3.5
def diameter(config: ModelConfig, box: float | Mapping[str, float]) -> float:
    """Prop 3.5: the Euclidean diameter of the box, 2 sqrt(sum_name B_name^2 size_name)
    (= 2 B sqrt(M))."""
    bb = box_half_widths(config, box)
    shapes = param_shapes(config)
    return 2.0 * math.sqrt(sum(bb[k] ** 2 * int(np.prod(s)) for k, s in shapes.items()))


def log10_prop_3_5(config: ModelConfig, box: float | Mapping[str, float], xi: float) -> float:
    """Prop 3.5: log10 of the cap M log10(1 + C_Lip diam(Theta) / xi) on |F_N| (any N)."""
    xi = check_real("xi", xi, strictly_positive=True)
    m = n_params(config)
    return m * math.log10(1.0 + c_lip_box(config, box) * diameter(config, box) / xi)
