"""Prop 3.5 (arXiv 2606.08768, reconstruction): for eps > 0 and every N,
|F_N| <= (1 + C_Lip diam(Theta) / xi)^M, reported as log10 (verify.theory.bounds.log10_prop_3_5,
docs/derivations.md#prop-35)."""

from __future__ import annotations

import math

import numpy as np

from verify.boolean import all_bit_strings
from verify.model import ModelConfig, forward, init_params, n_params
from verify.registry import CheckContext, Outcome, Policy, Row, Sizes, define_statement
from verify.statements._eps_positive import DERIVATIONS, EPS_POSITIVE, THETA_BOX
from verify.theory.bounds import c_lip_box, diameter, log10_prop_3_5
from verify.theory.trivial import log10_all_functions

PROP_3_5 = define_statement(
    id="Prop 3.5",
    title="Length-independent cap on the number of recognisable functions (eps > 0)",
    statement=(
        r"For $\epsilon>0$ and every $N$: $|F_N| \le (1 + C_{Lip}\,\mathrm{diam}(\Theta)/\xi)^M$"
        r" (reconstruction; diam in the Euclidean norm)."
    ),
    confidence="[note]",
    hypotheses=(EPS_POSITIVE, THETA_BOX),
    bound_formula=r"M log10(1 + C_Lip diam(Theta) / xi)  (log10 of the cap)",
    derivation=DERIVATIONS + "#prop-35",
)

# thetas drawn uniformly from the box, by budget
THETAS = Sizes(quick=60, default=300, full=2000)


@PROP_3_5.check("cap vs distinct recognised functions and 2^(2^N)", policy=Policy.STRICT)
def cap(ctx: CheckContext) -> Outcome:
    """log10 of the number of distinct functions recognised by sampled thetas, N = 1..4,
    against the log10 cap; the N from which the cap beats 2^(2^N)."""
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.1)
    xi, box = 0.02, 1.0
    log_cap = log10_prop_3_5(cfg, box, xi)
    rows = []
    n_theta = ctx.size(THETAS)
    thetas = [init_params(cfg, "uniform", ctx.seed * 7919 + k, box) for k in range(n_theta)]
    for n_bits in (1, 2, 3, 4):
        x = all_bit_strings(n_bits)
        found = set()
        for p in thetas:
            t = forward(p, x).T
            if np.all(np.abs(t) >= xi):
                found.add(tuple((t > 0).astype(int)))
        rows.append(
            Row(
                f"N={n_bits}: log10 #distinct functions recognised (sampled)",
                math.log10(max(len(found), 1)),
                log_cap,
                trivial=log10_all_functions(n_bits),  # 2^(2^N) functions in all
            )
        )
    n0 = next(n for n in range(1, 200) if 2**n * math.log10(2) > log_cap)
    return Outcome(
        rows=rows,
        parameters={"config": cfg.to_dict(), "xi": xi, "box B": box, "thetas": n_theta},
        notes=[
            f"M = {n_params(cfg)}, C_Lip(box) = {c_lip_box(cfg, box):.4g},"
            f" diam = {diameter(cfg, box):.4g}, log10 cap = {log_cap:.4g}",
            f"the cap is below the number 2^(2^N) of all Boolean functions from N = {n0} on",
            "the sampled count is a lower bound on |F_N|, so these rows are consistency checks;"
            " the cap's content is its independence of N",
        ],
    )
