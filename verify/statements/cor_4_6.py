"""Cor 4.6 (arXiv 2606.08768, reconstruction): a criterion for unlearnability at eps = 0 —
functions with K_0(f_N) < N^((D-1)/(2L)-5) for all large N are, for almost every theta, not
recognised with margin xi for all large N.

Check: PARITY, sparse PARITY, FIRST and DICTATOR (K_0 = 0, computed) against the certified truth
tables of sampled theta.
"""

from __future__ import annotations

import numpy as np

from verify.boolean import make_family, zero_sensitivity_count
from verify.boolean.sampling import clopper_pearson
from verify.checks.certified_k0 import recognises
from verify.model import ModelConfig, init_params
from verify.model.truth_table import truth_table
from verify.registry import CheckContext, Outcome, Policy, Row, Sizes, define_statement
from verify.statements._eps_zero import CONFIDENCE, DERIVATION, EPS_ZERO
from verify.statements.thm_4_5 import THM_4_5
from verify.theory.zero_sensitivity import theorem_exponent

COR_4_6 = define_statement(
    id="Cor 4.6",
    title="Criterion for unlearnability (eps = 0)",
    statement=(
        r"If $K_0(f_N)<N^{(D-1)/(2L)-5}$ for all large $N$ ($D$ the width, $L$ the number of"
        r" layers, as in Thm 4.5), then for almost all $\theta$ the transformer fails to"
        r" recognise $f_N$ with margin $\xi$ for all large $N$: by Thm 4.5 every function it"
        r" recognises with margin $\xi$ has $K_0 \ge N^{(D-1)/(2L)-5}$. (Reconstruction.)"
    ),
    confidence="[note]",
    hypotheses=(EPS_ZERO, *THM_4_5.hypotheses[1:]),
    bound_formula=(
        r"$\#\{\theta \text{ sampled recognising } f_N \text{ with margin } \xi\} = 0$"
        r" for large $N$, given $K_0(f_N) < N^{(D-1)/(2L)-5}$"
    ),
    derivation=DERIVATION + "#6-cor-46-cor-51-54-conj-55",
)

MODELS = Sizes(quick=10, default=40, full=200)  # theta draws per N
N_BITS = Sizes(quick=(4, 8), default=(4, 8, 12), full=(4, 8, 12, 16))
FAMILIES = (("parity", {}), ("sparse_parity", {"m": 2}), ("first", {}), ("dictator", {"i": 2}))
D_MODEL, N_LAYERS, MARGIN = 16, 1, 0.05


@COR_4_6.check("hypothesis: K_0(f_N) < N^e for the four families", policy=Policy.STRICT)
def hypothesis_k0(ctx: CheckContext) -> Outcome:
    """The corollary's hypothesis, not its conclusion: K_0 of PARITY, 2-sparse PARITY, FIRST and
    DICTATOR_2 (exact, Boolean engine) equals 0 (their closed form), so K_0 < N^e for every
    e (D = 16, L = 1: e = 2.5): identity rows."""
    e = theorem_exponent(D_MODEL, N_LAYERS)
    rows = []
    for n in ctx.size(N_BITS):
        for name, kw in FAMILIES:
            k0 = zero_sensitivity_count(make_family(name, n, **kw).table)
            # an identity (K_0 = 0, the closed form of these families), which gives K_0 < N^e
            rows.append(Row(f"N={n}: K_0({name}) = 0 < N^e = {n**e:.4g}", float(k0), 0.0, "=="))
    return Outcome(
        rows=rows,
        arithmetic="exact integer (exhaustive over 2^N strings)",
        parameters={"D": D_MODEL, "L": N_LAYERS, "N": ctx.size(N_BITS)},
        notes=[f"e = (D-1)/(2L) - 5 = {e:.3g}; the conclusion is the other check"],
    )


@COR_4_6.check(
    "conclusion: PARITY, sparse PARITY, FIRST, DICTATOR not recognised with margin xi",
    policy=Policy.ASYMPTOTIC,
)
def low_k0_not_recognised(ctx: CheckContext) -> Outcome:
    """For families with K_0(f_N) = 0 < N^e (checked with the Boolean engine), count the
    sampled theta ~ Unif[-1,1]^M (D=16, L=1, eps=0) that recognise f_N with margin xi = 0.05
    (certified); Cor 4.6 says the count is 0 for all large N, almost surely, so a hit at small
    N is evidence, not a violation."""
    cfg = ModelConfig(d_model=D_MODEL, n_layers=N_LAYERS, n_heads=2, ln_eps=0.0)
    e = theorem_exponent(D_MODEL, N_LAYERS)
    n_models = ctx.size(MODELS)
    ns = ctx.size(N_BITS)
    rows: list[Row] = []
    for n in ns:
        targets = {name: make_family(name, n, **kw).table for name, kw in FAMILIES}
        hits = dict.fromkeys(targets, 0)
        unknown = dict.fromkeys(targets, 0)
        for mi in range(n_models):
            params = init_params(cfg, "uniform", ctx.seed * 1000 + mi, 1.0)
            tt = truth_table(params, n, margin=MARGIN)
            for name, table in targets.items():
                verdict = recognises(tt, table.astype(np.int8))
                hits[name] += verdict is True
                unknown[name] += verdict is None
        for name in targets:
            lo, hi = clopper_pearson(hits[name], n_models, CONFIDENCE)
            rows.append(
                Row(
                    f"N={n}: models recognising {name} with margin {MARGIN} (of {n_models})",
                    float(hits[name]),
                    0.0,
                    "<=",
                    (lo * n_models, hi * n_models),
                    {"undetermined": unknown[name]},
                )
            )
    return Outcome(
        rows=rows,
        arithmetic="certified truth tables; exact K_0 of the families",
        parameters={"D": D_MODEL, "L": N_LAYERS, "models": n_models, "N": ns, "margin": MARGIN},
        notes=[f"e = {e:.3g}; margin xi = {MARGIN}; CI columns are counts (Clopper-Pearson)"],
    )
