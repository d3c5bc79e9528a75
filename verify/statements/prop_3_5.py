"""Prop 3.5 (arXiv 2606.08768, reconstruction): for eps > 0 and every N,
|F_N| <= (1 + C_Lip diam(Theta) / xi)^M, reported as log10 (verify.theory.packing.log10_prop_3_5,
docs/derivations.md#prop-35)."""

from __future__ import annotations

import math

import numpy as np

from verify.boolean import all_bit_strings
from verify.checks import lipschitz_constructions
from verify.model import ModelConfig, forward, init_params, n_params
from verify.registry import CheckContext, Outcome, Policy, Row, Sizes, define_statement
from verify.statements._eps_positive import DERIVATIONS, EPS_POSITIVE, THETA_BOX
from verify.theory import packing
from verify.theory.bounds import c_lip_box
from verify.theory.packing import diameter, log10_prop_3_5
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
    bound_formula=(
        r"$M \log_{10}(1 + C_{\rm Lip}\,\mathrm{diam}(\Theta)/\xi)$ ($\log_{10}$ of the cap)"
    ),
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


# input lengths on which the two parameters' recognised functions are checked, by budget
PACKING_LENGTHS = Sizes(quick=(1, 4, 16, 64), default=(1, 4, 16, 64, 256), full=(1, 4, 64, 1024))


@PROP_3_5.check(
    "packing step: parameters recognising different functions are >= 2r apart",
    policy=Policy.STRICT,
)
def packing_step(ctx: CheckContext) -> Outcome:
    """Step 2 of the covering argument: two parameters of Theta within 2r (r = xi / C_Lip, the
    packing radius) cannot recognise different functions with margin xi. On a box where it is
    nearly tight (only the token rows and the readout move), theta_+ recognises the constant 1
    and theta_- the constant 0 with margin xi (the smallest |T| met on every string tried);
    2 r(xi) is compared with ||theta_+ - theta_-||."""
    cfg, box, plus, minus = lipschitz_constructions.readout_pair()
    rng = np.random.default_rng(ctx.seed + 35)
    lip = c_lip_box(cfg, box)
    dist = float(np.linalg.norm(plus.flatten() - minus.flatten()))
    rows, notes = [], []
    for n_bits in ctx.size(PACKING_LENGTHS):
        x = all_bit_strings(n_bits) if n_bits <= 6 else rng.integers(0, 2, (8, n_bits))
        tp, tm = forward(plus, x).T, forward(minus, x).T
        if not (np.all(tp > 0) and np.all(tm < 0)):
            notes.append(f"N={n_bits}: the pair does not recognise the two constants (skipped)")
            continue
        xi = float(min(tp.min(), -tm.max()))  # both recognise with margin xi
        rows.append(
            Row(
                f"N={n_bits}: 2 r(xi) = 2 xi / C_Lip vs ||theta_+ - theta_-|| (they differ)",
                2.0 * packing.packing_radius(lip, xi),
                dist,
            )
        )
    return Outcome(
        rows=rows,
        parameters={"config": cfg.to_dict(), "box": "token rows 100, readout 1e-7, else 0"},
        notes=[
            *notes,
            f"C_Lip(box) = {lip:.6g} (~ sqrt(D + 1) = {np.sqrt(cfg.d_model + 1):.6g}: the readout"
            " groups dominate); T is the same on every string (attention and MLP are 0)",
            "strings: all of {0,1}^N for N <= 6, 8 random ones above",
        ],
    )
