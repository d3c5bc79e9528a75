"""Cor 4.6 (arXiv 2606.08768, reconstruction): a criterion for unlearnability at eps = 0 —
functions with K_0(f_N) < N^((D-1)/(2L)-5) for all large N are, for almost every theta, not
recognised with margin xi for all large N.

Check: PARITY, sparse PARITY, FIRST and DICTATOR (K_0 = 0, computed) against the certified truth
tables of sampled theta.
"""

from __future__ import annotations

import math

import numpy as np

from verify.boolean import make_family, zero_sensitivity_count
from verify.checks.certified_k0 import recognises
from verify.checks.estimates import frequency_row
from verify.model import ModelConfig, init_params
from verify.model.certified.truth_table import CertifiedTruthTable, truth_table
from verify.registry import CheckContext, Outcome, Policy, Row, Sizes, define_statement
from verify.statements._eps_zero import CONFIDENCE, DERIVATION, EPS_ZERO
from verify.statements.thm_4_5 import THM_4_5
from verify.theory.bounds import log10_c_infl
from verify.theory.eps_zero_bounds import cor_4_6_recognition_bound, log10_cor_4_3_threshold
from verify.theory.norms import box_norms
from verify.theory.zero_sensitivity import bad_event_probability_bound, theorem_exponent

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
D_MODEL, N_LAYERS, MARGIN, BOX = 16, 1, 0.05, 1.0


@COR_4_6.check("hypothesis: K_0(f_N) < N^e for the four families", policy=Policy.STRICT)
def hypothesis_k0(ctx: CheckContext) -> Outcome:
    """The corollary's hypothesis, not its conclusion: K_0 of PARITY, 2-sparse PARITY, FIRST and
    DICTATOR_2 (exact, Boolean engine) equals 0 (their closed form), so K_0 < N^e for every
    e (D = 16, L = 1: e = 2.5). Definitional rows: K_0 = 0 holds by the families' definition
    (every string has a bit whose flip changes the value), so they test the Boolean engine,
    not the corollary; the statement's status comes from the conclusion check."""
    e = theorem_exponent(D_MODEL, N_LAYERS)
    rows = []
    for n in ctx.size(N_BITS):
        for name, kw in FAMILIES:
            k0 = zero_sensitivity_count(make_family(name, n, **kw).table)
            # an identity (K_0 = 0, the closed form of these families), which gives K_0 < N^e
            label = f"N={n}: K_0({name}) = 0 < N^e = {n**e:.4g}"
            rows.append(Row(label, float(k0), 0.0, "==", definitional=True))
    return Outcome(
        rows=rows,
        arithmetic="exact integer (exhaustive over 2^N strings)",
        parameters={"D": D_MODEL, "L": N_LAYERS, "N": ctx.size(N_BITS)},
        notes=[
            f"e = (D-1)/(2L) - 5 = {e:.3g}; the conclusion is the other check",
            "definitional: K_0 = 0 by the families' definition (some flip changes the value at"
            " every string); the rows test the Boolean engine",
        ],
    )


def null_chance(table: CertifiedTruthTable, target: np.ndarray) -> float:
    """The chance that this model computes ``target`` under the permutation null: if it
    recognises its own function g with the margin (every string certified 0 or 1), the chance
    that g with its ones placed uniformly at random is the target, 1 / C(2^N, |g|) when |g| =
    |target|, else 0; 0 when it recognises nothing."""
    lab = np.asarray(table.label)
    if not bool(np.all(table.certified & (lab >= 0))):
        return 0.0
    ones, size = int(np.count_nonzero(lab == 1)), lab.size
    return 1.0 / math.comb(size, ones) if ones == int(np.count_nonzero(target)) else 0.0


@COR_4_6.check(
    "conclusion: PARITY, sparse PARITY, FIRST, DICTATOR not recognised with margin xi",
    policy=Policy.STATISTICAL,
)
def low_k0_not_recognised(ctx: CheckContext) -> Outcome:
    """For families with K_0(f_N) = 0 < N^e (checked with the Boolean engine): the frequency of
    sampled theta ~ Unif[-1,1]^M (D=16, L=1, eps=0) recognising f_N with margin xi = 0.05
    (certified) against Cor 4.6's finite-N bound (eps_zero_bounds.cor_4_6_recognition_bound:
    the bad-event bound a_N past N_0, 1 below), decisive when the (Bonferroni) interval lies
    above it; trivial: the chance that the random class computes f_N at all, measured by the
    permutation null (:func:`null_chance`) -- a bound no smaller than that says nothing."""
    cfg = ModelConfig(d_model=D_MODEL, n_layers=N_LAYERS, n_heads=2, ln_eps=0.0)
    e = theorem_exponent(D_MODEL, N_LAYERS)
    zeta = (D_MODEL - 2) / (D_MODEL - 1)
    norms = box_norms(cfg, BOX)
    log10_n0 = log10_cor_4_3_threshold(math.log10(norms.w) + log10_c_infl(norms), MARGIN, zeta)
    n_models = ctx.size(MODELS)
    ns = ctx.size(N_BITS)
    rows: list[Row] = []
    family = len(ns) * len(FAMILIES)
    for n in ns:
        targets = {name: make_family(name, n, **kw).table for name, kw in FAMILIES}
        hits = dict.fromkeys(targets, 0)
        unknown = dict.fromkeys(targets, 0)
        null = dict.fromkeys(targets, 0.0)
        for mi in range(n_models):
            params = init_params(cfg, "uniform", ctx.seed * 1000 + mi, BOX)
            tt = truth_table(params, n, margin=MARGIN)
            for name, table in targets.items():
                verdict = recognises(tt, table.astype(np.int8))
                hits[name] += verdict is True
                unknown[name] += verdict is None
                null[name] += null_chance(tt, table) / n_models
        bound = cor_4_6_recognition_bound(
            n, log10_n0, bad_event_probability_bound(D_MODEL, N_LAYERS, n, BOX)
        )
        for name in targets:
            rows.append(
                frequency_row(
                    f"N={n}: frequency of models recognising {name} with margin {MARGIN}"
                    f" (of {n_models})",
                    hits[name],
                    n_models,
                    bound,
                    confidence=CONFIDENCE,
                    family=family,
                    extra={"undetermined": unknown[name], "null chance": null[name]},
                    trivial=null[name],
                )
            )
    return Outcome(
        rows=rows,
        arithmetic="certified truth tables; exact K_0 of the families; sympy a_N",
        parameters={"D": D_MODEL, "L": N_LAYERS, "models": n_models, "N": ns, "margin": MARGIN},
        notes=[
            f"e = {e:.3g}; margin xi = {MARGIN}; zeta = {zeta:.4g}; Cor 4.6's bound is a_N only"
            f" past N_0 = 10^{log10_n0:.4g} (where ||w|| C_infl N^(zeta-1) < 2 xi over the box),"
            " 1 below: at these N the rows are vacuous, whatever the count",
            "trivial (null): the mean over the sampled models of the chance that the function"
            " a model recognises, with its ones placed uniformly at random, is f_N (1/C(2^N, k)"
            " for k ones, 0 for constants): '0 recognisers' is expected of almost any random"
            " class, so it is content only against a bound below this",
        ],
    )
