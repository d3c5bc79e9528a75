"""Lemma 4.4's certified cube covering as obligations (docs/derivations_eps_zero.md section 4):
the volume accounting of certify_bad_measure encloses the exact measure of a known set, and its
per-cube verdict is the rule the certificate rests on."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from verify.proofs.chain import code
from verify.proofs.chain_step import Comparison, chain_step
from verify.proofs.core import Verdict
from verify.proofs.coverage_common import DOC4
from verify.proofs.methods import custom_step


# ----------------------------------------------------------------------------- Lemma 4.4
def _small_model():
    from verify.model import ModelConfig, init_params

    cfg = ModelConfig(
        d_model=4,
        n_layers=1,
        n_heads=1,
        d_ff=4,
        ln_eps=0.0,
        norm_first=False,
        ln_affine=False,
        eos=True,
        pos_encoding="none",
        embedding="add",
        max_len=4,
    )
    return init_params(cfg, "gaussian", seed=0)


def _cover_cases(weaken: float = 1.0) -> tuple[bool, dict, str]:
    """certify_bad_measure with its per-cube verdict replaced by an exact oracle for a known
    set (a half-plane of the slice box, measure 1/3 or 25/72): the certified interval must
    contain the measure at every level and close on it."""
    from verify.theory import cube_covering

    params = _small_model()
    theta = params.flatten()
    w = 0.5
    for k, measure, coef, rhs in (
        (1, Fraction(1, 3), (1.0,), -w / 3),  # {u_1 - c_1 <= -w/3}: (2w/3)/(2w)
        (2, Fraction(25, 72), (1.0, 1.0), -w / 3),  # {u_1 + u_2 <= -w/3}: (5w/3)^2/2/(2w)^2
    ):
        free = np.arange(k)
        centre0 = theta[free].copy()
        a = np.asarray(coef)
        calls: list[float] = []  # the half-side of every cube enclosed

        def oracle(
            params,
            theta,
            free,
            centre,
            half,
            bits,
            delta,
            norms,
            prec,
            a=a,
            c0=centre0,
            rhs=rhs,
            calls=calls,
        ):
            calls.append(half)
            mid = float(a @ (centre - c0))
            spread = half * float(np.abs(a).sum())
            if mid + spread <= rhs:
                return -1
            if mid - spread > rhs:
                return 1
            return 0

        saved = cube_covering._cube_verdict
        cube_covering._cube_verdict = oracle
        try:
            res = code("lemma_4_4.chain_certified_cover")(
                params, np.zeros((1, 2)), free, w, 1e-3, max_depth=10, max_cubes=10**6
            )
        finally:
            cube_covering._cube_verdict = saved
        sides = [2 * w / 2**depth for depth in range(len(res.side))]  # halved at each level
        if res.side != sides or res.enclosures != len(calls) or 2 * calls[0] != sides[0]:
            msg = f"sides {res.side[:3]}.. (want {sides[:3]}..), {res.enclosures} enclosures"
            return False, {"k": k}, f"{msg} of {len(calls)} cubes"
        for depth, (lo, hi) in enumerate(zip(res.lower, res.upper, strict=True)):
            lo, hi = lo * weaken, hi * weaken
            if not (lo <= measure <= hi):
                return False, {"k": k, "level": depth}, f"[{lo}, {hi}] misses {measure}"
        if res.upper[-1] - res.lower[-1] > 2.0 ** (-8):
            return False, {"k": k}, f"the interval did not close: {res.lower[-1]}, {res.upper[-1]}"
    return True, {}, "the certified interval holds the exact measure at every level"


def _cover_prove() -> Verdict:
    ok, pt, msg = _cover_cases()
    return Verdict("proved", msg) if ok else Verdict("failed", msg, pt)


def _cover_twin() -> Verdict:
    ok, pt, msg = _cover_cases(0.5)
    return Verdict("refuted", f"halved: {msg}", pt) if not ok else Verdict("not refuted")


custom_step(
    "lemma_4_4.chain_certified_cover",
    "Lemma 4.4",
    "Certified slices",
    DOC4,
    "chain",
    "verify.theory.cube_covering:certify_bad_measure's volume accounting (bad cubes add"
    " 2^(-k depth), open ones bound the rest) encloses the exact measure of a known set at every"
    " level (k = 1: 1/3, k = 2: 25/72; the per-cube verdict replaced by an exact oracle)",
    "the certified interval times 1/2",
    _cover_prove,
    _cover_twin,
    facts=("lemma_4_4.volume_average", "axiom.total_probability"),
    evidence="points",
)


# the per-cube verdict: +1 (good) only if every enclosed variance of the watched norms is > delta
# on the whole cube, -1 (bad) only if one of them is <= delta on the whole cube, else 0
def _verdict_rule(lo: np.ndarray, hi: np.ndarray, delta: float) -> int:
    if lo.min() > delta:
        return 1
    return -1 if hi.min() <= delta else 0


def _verdict_cases(weaken: float) -> tuple[int, dict | None, str]:
    """The coded verdict (times ``weaken``) against the rule on the cube's own enclosure, at
    delta on both sides of and at the smallest lower and upper variance bounds (the ties)."""
    from verify.model import Params
    from verify.model.generic.enclosure import enclose
    from verify.theory.cube_covering import theta_slice

    params = _small_model()
    theta = params.flatten()
    bits = np.array([[0, 1], [1, 1]], dtype=np.uint8)
    n = 0
    for norms in ((0,), (1,), (0, 1)):
        for k, half in ((1, 1e-3), (2, 0.05), (3, 0.5)):
            free = theta_slice(params, 0, k)  # the first norm's bias block: d = c + b
            marked = np.zeros_like(theta)
            marked[free] = 1.0  # the free coordinates must be that block's first k entries
            block = Params.unflatten(params.config, marked)["layers.0.self_attn.out_proj.bias"]
            if block[:k].sum() != k:
                return n, {"k": k}, f"theta_slice {free} is not the first norm's bias block"
            centre = theta[free] + 0.01
            th, radius = theta.copy(), np.zeros_like(theta)
            th[free], radius[free] = centre, half
            enc = enclose(Params.unflatten(params.config, th), bits, prec=64, radius=radius)
            lo, hi = enc.var_lower[:, list(norms), :], enc.var_upper[:, list(norms), :]
            m_lo, m_hi = float(lo.min()), float(hi.min())
            for delta in (m_lo / 2, m_lo, (m_lo + m_hi) / 2, m_hi, 2 * m_hi):
                if not delta > 0:
                    continue
                n += 1
                got = code("lemma_4_4.chain_cube_verdict")(
                    params, theta, free, centre, half, bits, delta, norms, 64
                )
                want = _verdict_rule(lo, hi, delta)
                if got * weaken != want:
                    pt = {"norms": norms, "k": k, "half": half, "delta": delta}
                    return n, pt, f"verdict {got * weaken} where the rule gives {want}"
    return n, None, ""


CASES = Comparison(
    claim="is the covering's rule on the cube's enclosure (+1: every variance > delta; -1: one"
    " <= delta on the whole cube; else 0) at {n}+ deltas at and around the bounds",
    proved="is the rule at {n} (cube, norms, delta) cases, ties included",
    passed_halved="the halved verdict agreed everywhere",
    caught_halved="halved verdict caught",
    half=0.5,
    minimum=30,
)
chain_step(
    "lemma_4_4.chain_cube_verdict",
    "Lemma 4.4",
    "Certified slices",
    DOC4,
    _verdict_cases,
    CASES,
    facts=("lemma_4_4.chain_certified_cover",),
    evidence="points",
)
