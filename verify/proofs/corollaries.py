"""Derivation steps of the bounds issue 26 named in ``verify.theory`` as obligations: the
trivial bounds (docs/derivations_eps_zero.md section 0), Cor 4.3 (section 3), Cor 4.6's finite-N
bound (section 6), Lemma 3.2 in the paper's one-factor-per-layer convention
(docs/derivations.md#lemma-32) and H&R Cor 5 read as a requirement on the blowup
(docs/derivations_hahn_rofin.md#cor-5).

The module-level expressions (``SWING``, ``COR_4_3``, ``THRESHOLD``, ...) are the right-hand
sides the obligations prove; the chain modules (:mod:`verify.proofs.chain_symbolic`, ...)
compose the coded functions' values from them."""

from __future__ import annotations

import itertools

import sympy as sp

from verify.proofs.core import Verdict
from verify.proofs.methods import Use, custom_step, sympy_identity, z3_step

__all__ = [
    "ABS_BOUND",
    "COR_4_3",
    "COR_4_6",
    "COUNT_LOG10",
    "FLIP",
    "GOOD_EVENT",
    "READOUT_SWING",
    "REQUIRED_BLOWUP",
    "SENSITIVITY",
    "SWING",
    "THRESHOLD",
]

DOC0 = "docs/derivations_eps_zero.md#0-vacuous-rows-the-trivial-bounds"
DOC3 = "docs/derivations_eps_zero.md#3-cor-43"
DOC6 = "docs/derivations_eps_zero.md#6-cor-46-cor-51-54-conj-55"
TB, C43, C46 = "Trivial bounds", "Cor 4.3", "Cor 4.6"

# ---- Lemma 3.2, the paper's convention: one factor per layer, the max over its norms
va, vb, eps_ = sp.symbols("var_a var_b epsilon", real=True)
_ta = 1 + (va + eps_) ** sp.Rational(-1, 2)
_tb = 1 + (vb + eps_) ** sp.Rational(-1, 2)
z3_step(
    "lemma_3_2.per_layer_factor",
    "Lemma 3.2",
    "Convention note: one factor per layer",
    "docs/derivations.md#lemma-32",
    [
        va >= 0,
        vb >= 0,
        eps_ > 0,
        (va + eps_) ** sp.Rational(-1, 2) <= eps_ ** sp.Rational(-1, 2),
        (vb + eps_) ** sp.Rational(-1, 2) <= eps_ ** sp.Rational(-1, 2),
    ],
    sp.Le(sp.Max(_ta, _tb), 1 + eps_ ** sp.Rational(-1, 2)),
    sp.Le(sp.Max(_ta, _tb), 1 + eps_ ** sp.Rational(-1, 2) / 2),
    uses=tuple(
        Use(
            "lemma_3_2.z_max",
            {"var": v, "epsilon": eps_},
            (v + eps_) ** sp.Rational(-1, 2) <= eps_ ** sp.Rational(-1, 2),
        )
        for v in (va, vb)
    ),
    note="tau = 1 + (var + eps)^{-1/2} for the layer's two norms: their max <= 1 + eps^{-1/2};"
    " L of them by the induction step (lemma_3_2.product_induction, which this step feeds)",
)

# ---- section 0: the trivial bounds
D, a, nu, nu2, du, dT, T, s, c, G, dy = sp.symbols("D a nu nu' du dT T s c G dy", real=True)
SWING = 2 * sp.sqrt(D) * a  # a = |w * g|_2
v1_, e1_, v2_, e2_ = sp.symbols("var_1 epsilon_1 var_2 epsilon_2", real=True)


def _ln_norm(v: sp.Expr, e: sp.Expr) -> sp.Expr:
    """|u|^2 = D var/(var + eps) for a layer norm's output u (no gain)."""
    return D * v / (v + e)


_unit = [
    D >= 1,
    nu >= 0,
    nu2 >= 0,
    v1_ >= 0,
    e1_ >= 0,
    v1_ + e1_ > 0,
    nu**2 * (v1_ + e1_) <= D * v1_,
    v2_ >= 0,
    e2_ >= 0,
    v2_ + e2_ > 0,
    nu2**2 * (v2_ + e2_) <= D * v2_,
    _ln_norm(v1_, e1_) <= D,
    _ln_norm(v2_, e2_) <= D,
    du >= 0,
    du <= nu + nu2,
]
# |u|^2 <= D var/(var + eps) for a layer norm's output u: lemma_2_9.ln_output_bound at each end
_UNIT_USES = tuple(
    Use("lemma_2_9.ln_output_bound", {"var": v, "epsilon": e, "D": D}, _ln_norm(v, e) <= D)
    for v, e in ((v1_, e1_), (v2_, e2_))
)
_SWING_HYPS = [a >= 0, *_unit, sp.Abs(dT) <= a * du]
z3_step(
    "trivial_bounds.output_swing",
    TB,
    "Output swing",
    DOC0,
    _SWING_HYPS,
    sp.Le(sp.Abs(dT), SWING),
    sp.Le(sp.Abs(dT), SWING / 2),
    uses=_UNIT_USES,
    facts=("lemma_2_9.ln_output_bound", "axiom.cauchy_schwarz", "axiom.triangle"),
    note="|u|, |u'| <= sqrt(D) (nu, nu'); |u - u'| <= nu + nu'; |(w*g).(u - u')| <= a |u - u'|",
)
ABS_BOUND = sp.sqrt(D) * a + sp.Abs(c)  # c = w . b + omega
z3_step(
    "trivial_bounds.output_abs",
    TB,
    "Output swing",
    DOC0,
    [
        a >= 0,
        *_unit[:7],
        _ln_norm(v1_, e1_) <= D,
        sp.Abs(s) <= a * nu,
        sp.Abs(T) <= sp.Abs(s) + sp.Abs(c),
    ],
    sp.Le(sp.Abs(T), ABS_BOUND),
    sp.Le(sp.Abs(T), sp.sqrt(D) * a),
    uses=_UNIT_USES[:1],
    facts=("axiom.cauchy_schwarz", "axiom.triangle"),
    note="T = (w * g) . u + (w . b + omega), s = (w * g) . u",
)
READOUT_SWING = 2 * sp.sqrt(D) * G  # G = max |g|
z3_step(
    "trivial_bounds.readout_swing",
    TB,
    "Output swing",
    DOC0,
    [G >= 0, *_unit, dy >= 0, dy <= G * du],
    sp.Le(dy, READOUT_SWING),
    sp.Le(dy, READOUT_SWING / 2),
    uses=_UNIT_USES,
    facts=("lemma_2_9.ln_output_bound", "axiom.hoelder_gain", "axiom.triangle"),
    note="y - y' = g * (u - u')",
)
xi, sw, av, ne, d = sp.symbols("xi S a_s n_e d", real=True)
SENSITIVITY = sw * av * ne
z3_step(
    "trivial_bounds.sensitivity_swing",
    TB,
    "H&R Cor 5's left side",
    DOC0,
    [
        *_SWING_HYPS,
        sp.Abs(dT) <= SWING,
        SWING <= sw,
        xi > 0,
        av >= 0,
        ne >= 0,
        2 * xi <= sp.Abs(dT),
    ],
    sp.Le(2 * xi * av * ne, SENSITIVITY),
    sp.Le(2 * xi * av * ne, SENSITIVITY / 2),
    uses=(
        *_UNIT_USES,
        Use(
            "trivial_bounds.output_swing",
            {x.name: x for x in (a, D, nu, nu2, v1_, e1_, v2_, e2_, du, dT)},
            sp.Abs(dT) <= SWING,
        ),
    ),
    note="dT = T(x) - T(x^n) on a sensitive edge, |dT| >= 2 xi, and S >= the output swing"
    " (as_N = 0: 0 <= 0); n_e = 1, or 2^N edges",
)

nb = sp.symbols("N", positive=True, integer=True)
COUNT_LOG10 = 2**nb * sp.log(2) / sp.log(10)
sympy_identity(
    "trivial_bounds.count_log10",
    TB,
    "Counting",
    DOC0,
    sp.log(2 ** (2**nb)) / sp.log(10),
    COUNT_LOG10,
    nb * sp.log(2) / sp.log(10),
    facts=("trivial_bounds.function_count", "axiom.log_monotone"),
)


def _n_functions(n: int) -> int:
    """The number of maps {0,1}^n -> {0,1}, by enumerating their truth tables."""
    strings = list(itertools.product((0, 1), repeat=n))
    return sum(1 for _ in itertools.product((0, 1), repeat=len(strings)))


def _count(formula) -> tuple[bool, int]:
    for n in range(4):
        if _n_functions(n) != formula(n):
            return False, n
    return True, -1


N_FUNCTIONS = 2 ** (2**nb)  # the claim: #{f: {0,1}^N -> {0,1}}


def _count_prove() -> Verdict:
    """Every N: axiom.function_count (|B|^|A| maps A -> B), its schema instantiated twice:
    |{0,1}^N| = 2^N (maps {1..N} -> {0,1}), then 2^(2^N) maps {0,1}^N -> {0,1}; sympy
    compares with the claim for symbolic N. Cross-check: truth tables enumerated at N = 0..3."""
    from verify.proofs.core import AXIOMS

    sch = AXIOMS["axiom.function_count"].schema
    sym = {s.name: s for s in sch.concl.free_symbols}

    def maps(na: sp.Expr, nb_: sp.Expr) -> sp.Expr:
        at = {sym["na"]: na, sym["nb"]: nb_}
        for h in sch.hyps:  # the schema's premises at the instance, for every N
            if sp.simplify(h.subs(at)) is not sp.true:
                raise ValueError(f"axiom.function_count's premise {h} fails at {at}")
        return sp.solve(sch.concl.subs(at), sym["count"])[0]

    counted = maps(maps(nb, 2), 2)
    if sp.simplify(counted - N_FUNCTIONS) != 0:
        return Verdict("failed", f"axiom.function_count gives {counted}, not {N_FUNCTIONS}")
    ok, n = _count(lambda k: int(N_FUNCTIONS.subs(nb, k)))
    if not ok:
        return Verdict("failed", "the enumerated count differs", {"N": n})
    return Verdict(
        "proved",
        f"sympy, symbolic N: axiom.function_count twice gives {counted}; enumeration agrees at"
        " N = 0..3",
    )


def _count_twin() -> Verdict:
    ok, n = _count(lambda n: 2**n)
    return Verdict("not refuted") if ok else Verdict("refuted", "2^N != count", {"N": n})


custom_step(
    "trivial_bounds.function_count",
    TB,
    "Counting",
    DOC0,
    "sympy",
    "#{f: {0,1}^N -> {0,1}} = 2^(2^N) for every N >= 0 (axiom.function_count's schema at"
    " |A| = N, |B| = 2, then at |A| = 2^N, |B| = 2: symbolic N; enumerated at N = 0..3)",
    "#{f: {0,1}^N -> {0,1}} = 2^N",
    _count_prove,
    _count_twin,
    facts=("axiom.function_count",),
)

# ---- section 3: Cor 4.3
w, C, N, b1, b2, inf_, t, zeta = sp.symbols("w C N beta beta' I t zeta", real=True)
FLIP = w * C * b1 * b2 / N
_S, _bt = sp.symbols("S bt_L", real=True)  # positions, the recursion's coefficient (Lemma 2.9)
_PER_FLIP = [
    N >= 1,
    w >= 0,
    C >= 0,
    b1 >= 1,
    b2 >= 1,
    _S >= N,
    _bt >= 0,
    _bt <= C,
    inf_ <= _bt * b1 * b2 / _S,
    sp.Abs(dT) <= w * inf_,
    inf_ <= C * b1 * b2 / N,
]
_OFF_READOUT = Use(
    "lemma_2_9.constant_off_readout",
    {"N": N, "S": _S, "beta": b1, "beta'": b2, "bt_L": _bt, "C": C, "I": inf_},
    inf_ <= C * b1 * b2 / N,
)
z3_step(
    "cor_4_3.per_flip",
    C43,
    "Per flip",
    DOC3,
    _PER_FLIP,
    sp.Le(sp.Abs(dT), FLIP),
    sp.Le(sp.Abs(dT), FLIP / 2),
    facts=("axiom.cauchy_schwarz",),
    uses=(_OFF_READOUT,),
    note="the readout is off the flipped bit (eos), Lemma 2.9 with delta = 0",
)


z3_step(
    "cor_4_3.good_event",
    C43,
    "On the good event",
    DOC3,
    [*_PER_FLIP, sp.Abs(dT) <= FLIP, t >= 1, b1 <= t, b2 <= t],
    sp.Le(sp.Abs(dT), w * C * t**2 / N),
    sp.Le(sp.Abs(dT), w * C * t / N),
    uses=(
        _OFF_READOUT,
        Use(
            "cor_4_3.per_flip",
            {x.name: x for x in (N, w, C, b1, b2, _S, _bt, inf_, dT)},
            sp.Abs(dT) <= FLIP,
        ),
    ),
    facts=("lemma_4_2.neighbourhood",),
    note="on the good event beta, beta' <= t (its probability: lemma_4_2.neighbourhood)",
)
Np, zp, wp, Cp, xip = sp.symbols("N zeta w C xi", positive=True)
GOOD_EVENT = Np ** (zp / 2)
COR_4_3 = wp * Cp * Np ** (zp - 1)
sympy_identity(
    "cor_4_3.power",
    C43,
    "On the good event",
    DOC3,
    wp * Cp * GOOD_EVENT**2 / Np,
    COR_4_3,
    wp * Cp * Np ** (zp / 2 - 1),
    facts=("cor_4_3.good_event",),
)
sympy_identity(
    "cor_4_3.log_form",
    C43,
    "Threshold: N_0",
    DOC3,
    sp.log(COR_4_3 / (2 * xip)),
    sp.log(wp * Cp) - sp.log(2 * xip) + (zp - 1) * sp.log(Np),
    sp.log(wp * Cp) - sp.log(2 * xip) + (zp - 1) * sp.log(Np) / 2,
    facts=("axiom.log_monotone",),
)
A, n, z = sp.symbols("A n zeta", real=True)
THRESHOLD = sp.Max(0, A / (1 - z))  # A = log10(||w|| C_infl / (2 xi)), n = log10 N
z3_step(
    "cor_4_3.threshold",
    C43,
    "Threshold: N_0",
    DOC3,
    [z > 0, z < 1, n >= 0, n > THRESHOLD],
    sp.Lt(A + (z - 1) * n, 0),
    sp.Lt(A + (z - 1) * n / 2, 0),
    facts=("cor_4_3.log_form", "axiom.log_monotone"),
    note="log10 N_0 = max(0, A / (1 - zeta)); N >= 1 so n >= 0",
)

# ---- section 6: Cor 4.6's finite-N bound
T1, T2, K0, mN, Ne = sp.symbols("T1 T2 K_0 m_N N^e", real=True)
z3_step(
    "cor_4_6.label_kept",
    C46,
    "Finite-N bound",
    DOC6,
    [xi > 0, sp.Abs(T1) >= xi, sp.Abs(T2) >= xi, sp.Abs(T1 - T2) < 2 * xi],
    sp.Gt(T1 * T2, 0),
    sp.Ge(T1 * T2, 2 * xi**2),
    facts=("cor_4_3.threshold",),
    note="a flip moving T by less than 2 xi keeps a label recognised with margin xi",
)
z3_step(
    "cor_4_6.family_zero_sensitive",
    C46,
    "Finite-N bound",
    DOC6,
    [Ne >= 0, mN >= Ne, mN < Ne + 1, K0 >= mN],
    sp.Ge(K0, Ne),
    sp.Ge(K0, 2 * Ne),
    facts=("cor_4_6.label_kept", "cor_4_3.good_event"),
    note="every string of the family (m_N = ceil(N^e) of them) keeps its label under each flip",
)
p, pE, aN = sp.symbols("p p_E a_N", real=True)
COR_4_6 = sp.Min(1, aN)
z3_step(
    "cor_4_6.bound",
    C46,
    "Finite-N bound",
    DOC6,
    [p >= 0, p <= 1, p <= pE, pE <= aN],
    sp.Le(p, COR_4_6),
    sp.Le(p, COR_4_6 / 2),
    facts=(
        "cor_4_6.family_zero_sensitive",
        "thm_4_5.chain_series",
        "axiom.probability_range",
    ),
    note="{recognises f with K_0(f) < N^e} is inside E_N (N > N_0); below N_0 the bound is 1",
)

# ---- H&R Cor 5 read as a requirement on the blowup (the c_r = 1 form, eos readout)
xs, asn, wc, mb = sp.symbols("xi as_N wC M", real=True)
bo_, wn_, cn_ = sp.symbols("B w C", real=True)
_m2, _lsum = sp.symbols("2^N L", real=True)  # the strings, the sum over sensitive edges
REQUIRED_BLOWUP = 2 * xs * asn / wc
z3_step(
    "hr_cor_5.required_blowup",
    "H&R Cor 5",
    "Derivation, 6: together",
    "docs/derivations_hahn_rofin.md#cor-5",
    [
        xs > 0,
        asn >= 0,
        wn_ > 0,
        cn_ > 0,
        sp.Eq(wc, wn_ * cn_),
        mb >= 0,
        bo_ >= 0,
        _m2 > 0,
        2 * xs * asn * _m2 <= _lsum,
        _lsum <= wn_ * cn_ * _m2 * bo_,
        2 * xs * asn <= wn_ * cn_ * bo_,
        bo_ <= mb,
    ],
    sp.Ge(mb, REQUIRED_BLOWUP),
    sp.Ge(mb, 2 * REQUIRED_BLOWUP),
    facts=("hr_cor_5.omega_le_cr",),
    uses=(
        Use(
            "hr_cor_5.average",
            {"xi": xs, "as_N": asn, "M": _m2, "L": _lsum, "w": wn_, "C": cn_, "B": bo_},
            2 * xs * asn <= wn_ * cn_ * bo_,
        ),
    ),
    note="hr_cor_5.average's conclusion 2 xi as_N <= ||w|| C_infl B, B = E_x[beta^2 omega_f]"
    " <= c_r E_x[beta^2] = M with c_r = 1 (eos readout, hr_cor_5.omega_le_cr)",
)
