"""The epsilon > 0 statements of arXiv 2606.08768 (Sec. 2-3): Lemma 2.9, Lemma 3.1, Lemma 3.2,
Cor 3.3, Cor 3.4, Prop 3.5 -- registry entries and their checks.

Statements are reconstructions (docs/reference/paper-2606.08768.md); the explicit constants
and their derivations: verify/lemmas/constants.py and docs/derivations.md. Every check measures
a quantity with the float64 forward pass, computes the bound from the configuration and the
parameters (or the box) and returns both; adversarial checks use verify.lemmas.adversarial.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify.lemmas import constants as C
from verify.lemmas.adversarial import (
    EPS_CHOICES,
    SearchResult,
    build_model,
    draw_flip,
    draw_model,
    maximise_ratio,
)
from verify.lemmas.registry import (
    COUNTEREXAMPLES,
    CheckContext,
    CheckResult,
    FigureData,
    Hypothesis,
    Row,
    Status,
    define_statement,
    statement_check,
)
from verify.model import SCHEMES, ModelConfig, Params, forward, init_params, n_params

DERIVATIONS = "docs/derivations.md"

_EPS_POS = Hypothesis("eps > 0", "layer-norm epsilon is positive", lambda cfg: cfg.ln_eps > 0)
_BOX = Hypothesis("Theta compact", "parameters in a box [-B, B]^M (B from the draw)")

LEMMA_2_9 = define_statement(
    id="Lemma 2.9",
    title="Influence of one bit bounded by the blowup",
    statement=(
        r"For parameters $\theta$, input $x$ of length $N$, readout position $r$ and flipped"
        r" bit $n$: $I_n = \|y^L_r(\theta,x) - y^L_r(\theta,x^{\oplus n})\|_2 \le C_{infl}\,"
        r"\beta(\theta,x)\,\beta(\theta,x^{\oplus n})\,(1/N + \delta_{r,n})$ (reconstruction;"
        r" the paper's norm is not known, the toolkit uses the Euclidean norm)."
    ),
    confidence="[note]",
    hypotheses=(Hypothesis("any eps >= 0", "holds wherever beta is finite"),),
    bound_formula=r"C_infl(theta) beta(x) beta(x^n) (1/N + delta_{r,n}), C_infl from the norms",
    derivation=DERIVATIONS + "#lemma-29",
)
LEMMA_3_1 = define_statement(
    id="Lemma 3.1",
    title="Uniform Lipschitzness in the parameters (eps > 0)",
    statement=(
        r"For $\epsilon>0$ there is $C_{Lip}$, independent of the input and of its length, with"
        r" $|T(\theta,x)-T(\theta',x)| \le C_{Lip}\|\theta-\theta'\|_2$ for all $x\in\{0,1\}^*$"
        r" and $\theta,\theta'\in\Theta$ (reconstruction; norm on $\theta$: Euclidean)."
    ),
    confidence="[note]",
    hypotheses=(_EPS_POS, _BOX),
    bound_formula=r"C_Lip = sqrt(sum_g L_g^2), L_g per parameter group (no N)",
    derivation=DERIVATIONS + "#lemma-31",
)
LEMMA_3_2 = define_statement(
    id="Lemma 3.2",
    title="Deterministic blowup bound (eps > 0)",
    statement=(
        r"For $\epsilon>0$: $z^k_n \le \epsilon^{-1/2}$, hence $\beta(\theta,x)\le"
        r"(1+\epsilon^{-1/2})^K$ for all $\theta, x$, with $K$ the number of layer norms on the"
        r" path (the paper writes $L$, counting one norm per layer; the spec's layers have two)."
    ),
    confidence="[note]",
    hypotheses=(_EPS_POS,),
    bound_formula=r"(1 + eps^{-1/2})^K, K = config.n_norms",
    derivation=DERIVATIONS + "#lemma-32",
)
COR_3_3 = define_statement(
    id="Cor 3.3",
    title="O(1/N) effect of one bit flip (eps > 0)",
    statement=(
        r"For $\epsilon>0$ and $n$ not the readout position: $|T(x)-T(x^{\oplus n})| \le"
        r" \|w\|\,C_{infl}(1+\epsilon^{-1/2})^{2K}/N$ (reconstruction: Lemma 2.9 + Lemma 3.2)."
    ),
    confidence="[note]+[inferred]",
    hypotheses=(_EPS_POS,),
    bound_formula=r"||w|| C_infl (1 + eps^{-1/2})^{2K} / N",
    derivation=DERIVATIONS + "#cor-33",
)
COR_3_4 = define_statement(
    id="Cor 3.4",
    title="Only constant functions are recognisable for large N (eps > 0)",
    statement=(
        r"For $\epsilon>0$, with eos readout: no $\theta\in\Theta$ recognises a non-constant"
        r" function with margin $\xi$ once $N > N^* = \sup_\Theta \|w\|C_{infl}"
        r"(1+\epsilon^{-1/2})^{2K}/(2\xi)$; so $|F_N| \to 2$ (reconstruction)."
    ),
    confidence="[note]+[inferred threshold]",
    hypotheses=(
        _EPS_POS,
        Hypothesis("eos", "readout at the eos position (not an input bit)", lambda c: c.eos),
    ),
    bound_formula=r"N* = sup_Theta ||w|| C_infl (1 + eps^{-1/2})^{2K} / (2 xi)",
    derivation=DERIVATIONS + "#cor-34",
)
PROP_3_5 = define_statement(
    id="Prop 3.5",
    title="Length-independent cap on the number of recognisable functions (eps > 0)",
    statement=(
        r"For $\epsilon>0$ and every $N$: $|F_N| \le (1 + C_{Lip}\,\mathrm{diam}(\Theta)/\xi)^M$"
        r" (reconstruction; diam in the Euclidean norm)."
    ),
    confidence="[note]",
    hypotheses=(_EPS_POS, _BOX),
    bound_formula=r"M log10(1 + C_Lip diam(Theta) / xi)  (log10 of the cap)",
    derivation=DERIVATIONS + "#prop-35",
)

_STATEMENTS = {s.id: s for s in (LEMMA_2_9, LEMMA_3_1, LEMMA_3_2, COR_3_3, COR_3_4, PROP_3_5)}


# ----------------------------------------------------------------------------- helpers
_EPS_CHOICES = (1.0, 0.1, 1e-2, 1e-3, 1e-5)


def _random_config(
    rng: np.random.Generator, eps_choices: tuple[float, ...] = _EPS_CHOICES
) -> ModelConfig:
    """A small random configuration covering every spec option."""
    d = int(rng.choice([4, 8]))
    return ModelConfig(
        d_model=d,
        n_layers=int(rng.integers(1, 3)),
        n_heads=int(rng.choice([1, 2])),
        d_ff=int(rng.choice([d, 2 * d])),
        ln_eps=float(rng.choice(eps_choices)),
        norm_first=bool(rng.integers(2)),
        ln_affine=bool(rng.integers(2)),
        eos=bool(rng.integers(2)),
        pos_encoding=str(rng.choice(["none", "sinusoidal", "learned"])),
        embedding=str(rng.choice(["add", "concat"])),
        max_len=16,
    )


def _random_models(
    ctx: CheckContext, per_scheme: int, eps_choices: tuple[float, ...] = _EPS_CHOICES
) -> list[tuple[str, Params, float]]:
    """(scheme, params, init scale) for ``per_scheme`` random models of every init scheme."""
    rng = np.random.default_rng(ctx.seed)
    out = []
    for scheme in SCHEMES:
        for _ in range(per_scheme):
            cfg = _random_config(rng, eps_choices)
            scale = float(10.0 ** rng.uniform(-1.5, 0.5))
            out.append((scheme, init_params(cfg, scheme, int(rng.integers(2**31)), scale), scale))
    return out


def _flips(
    rng: np.random.Generator, n_bits: int, n_strings: int, include_last: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, x^n, n): random strings and one flipped bit each (the last bit for the first)."""
    x = rng.integers(0, 2, (n_strings, n_bits), dtype=np.uint8)
    n = rng.integers(0, n_bits, n_strings)
    if include_last:
        n[0] = n_bits - 1
    xn = x.copy()
    xn[np.arange(n_strings), n] ^= 1
    return x, xn, n


def _influence(params: Params, x: np.ndarray, xn: np.ndarray, n: np.ndarray):
    """Measured I_n, Lemma 2.9 bound, and the two forward results."""
    r, rn = forward(params, x, diagnostics=True), forward(params, xn, diagnostics=True)
    meas = np.linalg.norm(r.y_readout - rn.y_readout, axis=1)
    n_bits = x.shape[1]
    at_r = (not params.config.eos) & (n == n_bits - 1)
    bound = C.lemma_2_9_bound(C.c_infl(params), r.beta, rn.beta, n_bits, at_r)
    return meas, bound, r, rn


_U = 2.0**-53  # unit roundoff of float64
_ROUNDING_NOTE = "bounds include the float64 rounding allowance (1 + 2^-53)^(4K+4) (see code)"


def _rounded_3_2_bounds(cfg: ModelConfig) -> tuple[float, float]:
    """Lemma 3.2's bounds on z and beta, enlarged by the float64 rounding of the measured side.

    The forward pass computes z = 1/sqrt(var + eps) with var >= 0 (a sum of squares), then
    tau = max(1 + z) and beta = prod of K taus: at most 4 roundings per factor and K - 1
    products, so the computed values exceed the exact ones' bounds by at most a factor
    (1 + u)^(4K + 4), u = 2^-53. This is the allowance for rounding, not a loosened bound; it
    matters only where the search drives beta to the bound (ratio 1 - 1e-8)."""
    k = C.n_layer_norms(cfg)
    return C.z_max(cfg) * (1 + _U) ** 4, C.lemma_3_2_bound(cfg) * (1 + _U) ** (4 * k + 4)


def _status(rows: list[Row]) -> Status:
    return Status.HOLDS if all(r.ok for r in rows) else Status.VIOLATED


class _Worst:
    """The worst (largest measured/bound) comparison seen under each label, in first-seen order."""

    def __init__(self) -> None:
        self.best: dict[str, tuple[float, float, float, dict[str, Any]]] = {}

    def add(self, label: str, measured: float, bound: float, info: dict | None = None) -> None:
        ratio = Row(label, measured, bound).ratio
        if label not in self.best or ratio > self.best[label][0]:
            self.best[label] = (ratio, float(measured), float(bound), info or {})

    def rows(self) -> list[Row]:
        return [Row(k, m, b, extra=info) for k, (_, m, b, info) in self.best.items()]

    def worst_ratio(self) -> float:
        return max((v[0] for v in self.best.values()), default=math.nan)


def _save_counterexample(params: Params, stem: str, info: dict[str, Any]) -> str:
    """Save parameters that violate a bound under theorems/counterexamples/; return the path."""
    COUNTEREXAMPLES.mkdir(parents=True, exist_ok=True)
    path = COUNTEREXAMPLES / f"{stem}.npz"
    params.save(path)
    (COUNTEREXAMPLES / f"{stem}.txt").write_text(repr(info) + "\n")
    return str(path.relative_to(COUNTEREXAMPLES.parents[1]))


def _search_result(
    statement_id: str, name: str, ctx: CheckContext, res: SearchResult, label: str
) -> CheckResult:
    """CheckResult of an adversarial search whose infos carry 'measured' and 'bound' (a
    violation saves the rebuilt worst parameters as a counterexample)."""
    slug = _STATEMENTS[statement_id].slug
    w = res.worst
    row = Row(label, float(w["measured"]), float(w["bound"]), extra={"ratio": res.worst_ratio})
    q = np.quantile(res.ratios, [0.5, 0.9, 0.99]) if res.ratios else [math.nan] * 3
    notes = [
        f"{res.n_examples} examples; worst measured/bound {res.worst_ratio:.4g};"
        f" ratio quantiles 50/90/99%: {q[0]:.3g}/{q[1]:.3g}/{q[2]:.3g}",
        f"worst example: {w}",
    ]
    status = Status.HOLDS if row.ok else Status.VIOLATED
    cex = None
    if not row.ok:
        cex = _save_counterexample(_rebuild(w), slug + "_adversarial", w)
        notes.append("the toolkit's own bound is violated: its derivation is wrong")
    running = np.maximum.accumulate(res.ratios).tolist() if res.ratios else []
    return CheckResult(
        statement_id,
        name,
        status,
        [row],
        arithmetic="float64",
        seed=ctx.seed,
        parameters={"max_examples": ctx.pick(150, 1000, 5000), "search": "hypothesis + target"},
        notes=notes,
        counterexample=cex,
        figures=[
            FigureData(
                f"{slug}_adversarial_search",
                f"{statement_id}: adversarial search, largest measured/bound so far",
                "lines",
                {
                    "series": [
                        {
                            "label": "running max ratio",
                            "x": list(range(1, len(running) + 1)),
                            "y": running,
                        }
                    ],
                    "xlabel": "example",
                    "ylabel": "measured / bound",
                },
            )
        ],
    )


def _rebuild(info: dict[str, Any]) -> Params:
    return build_model(ModelConfig(**info["config"]), info)


def _slope(ns: list[int], ys: list[float]) -> float:
    """Least-squares slope of log y against log N."""
    lx, ly = np.log(np.asarray(ns, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(lx, ly, 1)[0])


# ----------------------------------------------------------------------------- Lemma 2.9
@statement_check("Lemma 2.9", name="random parameters of the four init schemes")
def _lemma_2_9_random(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 1)
    worst, undefined, overflow = _Worst(), 0, 0
    for scheme, p, scale in _random_models(ctx, ctx.pick(6, 25, 100), (0.0, *_EPS_CHOICES)):
        n_bits = int(rng.integers(2, 17))
        x, xn, n = _flips(rng, n_bits, ctx.pick(8, 16, 32))
        meas, bound, _, _ = _influence(p, x, xn, n)
        defined = np.isfinite(meas)  # NaN: a 0/0 layer norm at eps = 0
        undefined += int(np.sum(~defined))
        overflow += int(np.sum(defined & np.isinf(bound)))  # C_infl beyond float64
        for i in np.flatnonzero(defined):
            info = {"config": p.config.to_dict(), "scale": scale, "N": n_bits, "n": int(n[i])}
            worst.add(f"{scheme}: worst I_n vs bound", meas[i], bound[i], info)
    rows = worst.rows()
    return CheckResult(
        "Lemma 2.9",
        "random parameters of the four init schemes",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"models_per_scheme": ctx.pick(6, 25, 100), "N": "2..16"},
        notes=[
            f"worst measured/bound over all schemes: {worst.worst_ratio():.4g}",
            "eps drawn from {0, 1e-5, ..., 1} (the lemma does not need eps > 0);"
            f" {undefined} flips skipped as undefined (0/0 layer norm at eps = 0);"
            f" {overflow} flips had a bound beyond float64 (C_infl overflows: holds trivially)",
        ],
    )


def lemma_2_9_search(ctx: CheckContext, constant_factor: float = 1.0):
    """Adversarial search on I_n / (factor * bound); factor < 1 tests that the search has teeth."""

    def evaluate(draw):
        p, info = draw_model(draw, eps_choices=(*EPS_CHOICES, 0.0))
        x, flip, finfo = draw_flip(draw, p.config)
        xn = x.copy()
        xn[flip] ^= 1
        meas, bound, _, _ = _influence(p, x[None], xn[None], np.array([flip]))
        b = constant_factor * float(bound[0])
        return float(meas[0]) / b, {**info, **finfo, "measured": float(meas[0]), "bound": b}

    return maximise_ratio(evaluate, max_examples=ctx.pick(150, 1000, 5000), seed=ctx.seed)


@statement_check("Lemma 2.9", name="adversarial search (Hypothesis, target = ratio)")
def _lemma_2_9_adversarial(ctx: CheckContext) -> CheckResult:
    res = lemma_2_9_search(ctx)
    return _search_result(
        "Lemma 2.9",
        "adversarial search (Hypothesis, target = ratio)",
        ctx,
        res,
        "worst I_n vs C_infl beta beta' (1/N + delta)",
    )


# ----------------------------------------------------------------------------- Lemma 3.2
@statement_check("Lemma 3.2", name="random parameters of the four init schemes")
def _lemma_3_2_random(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 2)
    worst = _Worst()
    for scheme, p, _ in _random_models(ctx, ctx.pick(6, 25, 100)):
        x = rng.integers(0, 2, (ctx.pick(8, 32, 64), int(rng.integers(1, 17))))
        r = forward(p, x, diagnostics=True)
        zb, bb = _rounded_3_2_bounds(p.config)
        worst.add(f"{scheme}: max z vs eps^-1/2", float(r.z.max()), zb)
        worst.add(f"{scheme}: max beta vs (1+eps^-1/2)^K", float(r.beta.max()), bb)
    rows = worst.rows()
    return CheckResult(
        "Lemma 3.2",
        "random parameters of the four init schemes",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"models_per_scheme": ctx.pick(6, 25, 100)},
        notes=[_ROUNDING_NOTE],
    )


@statement_check("Lemma 3.2", name="adversarial search (Hypothesis, target = ratio)")
def _lemma_3_2_adversarial(ctx: CheckContext) -> CheckResult:
    def evaluate(draw):
        p, info = draw_model(draw)
        x, _, finfo = draw_flip(draw, p.config, n_min=1)
        beta = float(forward(p, x[None], diagnostics=True).beta[0])
        bound = _rounded_3_2_bounds(p.config)[1]
        return beta / bound, {**info, **finfo, "measured": beta, "bound": bound}

    res = maximise_ratio(evaluate, max_examples=ctx.pick(150, 1000, 5000), seed=ctx.seed)
    result = _search_result(
        "Lemma 3.2",
        "adversarial search (Hypothesis, target = ratio)",
        ctx,
        res,
        "worst beta vs (1+eps^-1/2)^K",
    )
    result.notes.append(_ROUNDING_NOTE)
    return result


def _tightness_config(norm_first: bool) -> ModelConfig:
    return ModelConfig(
        d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2, norm_first=norm_first, pos_encoding="none"
    )


@statement_check("Lemma 3.2", name="tight as the layer-norm input variance goes to 0")
def _lemma_3_2_tight(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 3)
    rows, series = [], []
    scales = [10.0**-k for k in range(ctx.pick(5, 6, 7))]
    for nf in (False, True):
        cfg = _tightness_config(nf)
        ratios = []
        for s in scales:
            p = init_params(cfg, "uniform", ctx.seed, s)
            r = forward(p, rng.integers(0, 2, (16, 8)), diagnostics=True)
            upper, lower = _rounded_3_2_bounds(cfg)[1], C.beta_lower_bound(p)
            tag = f"{'pre' if nf else 'post'}-LN, scale {s:.0e}"
            rows.append(Row(f"{tag}: max beta vs (1+eps^-1/2)^K", float(r.beta.max()), upper))
            rows.append(
                Row(f"{tag}: min beta vs computed lower bound", float(r.beta.min()), lower, ">=")
            )
            ratios.append(float(r.beta.min()) / upper)
        series.append({"label": f"{'pre' if nf else 'post'}-LN", "x": scales, "y": ratios})
    last = [s["y"][-1] for s in series]
    return CheckResult(
        "Lemma 3.2",
        "tight as the layer-norm input variance goes to 0",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"config": "D=8, L=2, H=2, eps=1e-2, no positions", "scales": scales},
        notes=[
            "every parameter scaled by s (uniform init on [-s, s]): LN inputs shrink as s -> 0;"
            f" min beta / bound at the smallest scale: {', '.join(f'{v:.6f}' for v in last)}",
            _ROUNDING_NOTE,
        ],
        figures=[
            FigureData(
                "lemma_3_2_tightness",
                "Lemma 3.2: beta / (1+eps^-1/2)^K as the parameter scale shrinks",
                "lines",
                {
                    "series": series,
                    "xlabel": "scale s",
                    "ylabel": "min beta / bound",
                    "logx": True,
                },
            )
        ],
    )


LEMMA_3_2_EXPONENT_L = "lemma_3_2_exponent_L"


def lemma_3_2_exponent_l_counterexample() -> Params:
    """Parameters on which the spec's beta (one factor per layer norm, two per layer) exceeds
    the paper's (1 + eps^{-1/2})^L: post-LN, L = 2, eps = 1e-2, all parameters in [-1e-3, 1e-3]
    so every layer-norm input has variance ~1e-7 << eps and z ~ eps^{-1/2} at all four norms."""
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2, pos_encoding="none")
    return init_params(cfg, "uniform", 0, 1e-3)


@statement_check(
    "Lemma 3.2",
    name="the paper's exponent L with the spec's beta (2 norms/layer)",
    expected_violation=f"theorems/counterexamples/{LEMMA_3_2_EXPONENT_L}.npz",
)
def _lemma_3_2_exponent_l(ctx: CheckContext) -> CheckResult:
    path = COUNTEREXAMPLES / f"{LEMMA_3_2_EXPONENT_L}.npz"
    p = Params.load(path) if path.exists() else lemma_3_2_exponent_l_counterexample()
    cfg = p.config
    x = np.random.default_rng(ctx.seed).integers(0, 2, (8, 8))
    beta = float(forward(p, x, diagnostics=True).beta.min())
    paper = (1.0 + C.z_max(cfg)) ** cfg.n_layers
    row = Row("min beta vs (1+eps^-1/2)^L (paper's exponent)", beta, paper)
    rows = [
        row,
        Row("min beta vs (1+eps^-1/2)^K (toolkit's K = n_norms)", beta, C.lemma_3_2_bound(cfg)),
    ]
    cex = None
    if not row.ok:
        if not path.exists():
            p.save(path)
        cex = str(path.relative_to(COUNTEREXAMPLES.parents[1]))
    return CheckResult(
        "Lemma 3.2",
        "the paper's exponent L with the spec's beta (2 norms/layer)",
        Status.VIOLATED if not row.ok else Status.HOLDS,
        rows,
        seed=ctx.seed,
        parameters={"config": cfg.to_dict()},
        notes=[
            "The reconstructed Lemma 3.2 bounds beta by (1+eps^-1/2)^L, counting one layer norm"
            " per layer. model-spec's beta multiplies one factor per norm (2 per layer), so the"
            " exponent must be K = n_norms; with L the bound fails on these parameters. This is a"
            " mismatch between the paper's architecture and the spec's, not an error in the"
            " paper's argument."
        ],
        counterexample=cex,
    )


# ----------------------------------------------------------------------------- Lemma 3.1
def _lip_pair(p: Params, delta: np.ndarray) -> tuple[Params, float]:
    """theta' = theta + delta and the local C_Lip valid on the segment [theta, theta']."""
    q = Params.unflatten(p.config, p.flatten() + delta)
    return q, C.c_lip(C.max_norms(C.parameter_norms(p), C.parameter_norms(q)))


@statement_check("Lemma 3.1", name="random parameter pairs of the four init schemes")
def _lemma_3_1_random(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 4)
    worst = _Worst()
    for scheme, p, _ in _random_models(ctx, ctx.pick(6, 25, 100)):
        theta = p.flatten()
        d = rng.normal(size=theta.size)
        d *= 10.0 ** rng.uniform(-4, 0) * max(np.linalg.norm(theta), 1e-3) / np.linalg.norm(d)
        q, lip = _lip_pair(p, d)
        x = rng.integers(0, 2, (ctx.pick(8, 32, 64), int(rng.integers(1, 17))))
        dt = float(np.abs(forward(p, x).T - forward(q, x).T).max())
        nd = float(np.linalg.norm(d))
        box = float(max(np.abs(theta).max(), np.abs(q.flatten()).max()))
        worst.add(f"{scheme}: |dT| vs C_Lip(theta, theta') ||dtheta||", dt, lip * nd)
        worst.add(f"{scheme}: |dT| vs C_Lip(box) ||dtheta||", dt, C.c_lip_box(p.config, box) * nd)
    rows = worst.rows()
    return CheckResult(
        "Lemma 3.1",
        "random parameter pairs of the four init schemes",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"models_per_scheme": ctx.pick(6, 25, 100)},
        notes=[
            "C_Lip(theta, theta'): the constant from the larger of the two parameter norms;"
            " C_Lip(box): from the box [-B, B]^M holding both"
        ],
    )


@statement_check("Lemma 3.1", name="adversarial search (Hypothesis, target = ratio)")
def _lemma_3_1_adversarial(ctx: CheckContext) -> CheckResult:
    from hypothesis import strategies as st

    def evaluate(draw):
        p, info = draw_model(draw, eps_choices=(1.0, 0.1, 1e-2, 1e-3))
        x, _, finfo = draw_flip(draw, p.config, n_min=1)
        dseed, log_mag, one_group = draw(
            st.tuples(st.integers(0, 2**20), st.floats(-5.0, 0.3), st.booleans())
        )
        d = np.random.default_rng(dseed).normal(size=p.n_params)
        if one_group:  # perturb one array only
            sizes = np.cumsum([a.size for a in p.values()])
            k = dseed % len(sizes)
            lo = 0 if k == 0 else sizes[k - 1]
            mask = np.zeros_like(d)
            mask[lo : sizes[k]] = 1.0
            d *= mask
        nd = float(np.linalg.norm(d))
        if nd == 0:
            return None
        d *= 10.0**log_mag / nd
        q, lip = _lip_pair(p, d)
        dt = abs(float(forward(p, x[None]).T[0] - forward(q, x[None]).T[0]))
        bound = lip * float(np.linalg.norm(d))
        info = {
            **info,
            **finfo,
            "delta_seed": dseed,
            "log10_delta": log_mag,
            "one_group": one_group,
            "measured": dt,
            "bound": bound,
        }
        return dt / bound, info

    res = maximise_ratio(evaluate, max_examples=ctx.pick(150, 1000, 5000), seed=ctx.seed)
    return _search_result(
        "Lemma 3.1",
        "adversarial search (Hypothesis, target = ratio)",
        ctx,
        res,
        "worst |dT| vs C_Lip ||dtheta||",
    )


def _length_sweep_model() -> Params:
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2)
    return init_params(cfg, "xavier_uniform", 7, 1.0)


def _lengths(ctx: CheckContext) -> list[int]:
    top = ctx.pick(128, 512, 4096)
    return [n for n in (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096) if n <= top]


@statement_check("Lemma 3.1", name="local Lipschitz constant does not grow with N")
def _lemma_3_1_length(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 5)
    p = _length_sweep_model()
    d = rng.normal(size=p.n_params)
    d *= 1e-4 / np.linalg.norm(d)
    q, lip = _lip_pair(p, d)
    rows, ns, vals = [], _lengths(ctx), []
    for n_bits in ns:
        k = 16 if n_bits <= 128 else (4 if n_bits <= 512 else 2)
        x = rng.integers(0, 2, (k, n_bits))
        # one string per call at large N: the dense pass holds B x H x S x S attention weights
        dt = [abs(forward(p, xi).T[0] - forward(q, xi).T[0]) for xi in x]
        ratio = float(max(dt)) / 1e-4
        vals.append(ratio)
        rows.append(Row(f"N={n_bits}: max_x |dT| / ||dtheta||", ratio, lip))
    slope = _slope(ns, vals)
    half = len(ns) // 2
    slope_hi = _slope(ns[half:], vals[half:]) if len(ns) - half >= 2 else math.nan
    return CheckResult(
        "Lemma 3.1",
        "local Lipschitz constant does not grow with N",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"config": p.config.to_dict(), "||dtheta||": 1e-4, "N": ns},
        notes=[
            f"log-log slope of the measured local Lipschitz ratio vs N: {slope:.3f}, over the"
            f" upper half N >= {ns[half]}: {slope_hi:.3f} (bounded in N: expected about 0; a"
            " max over a few sampled strings per N, so noisy)"
        ],
        figures=[
            FigureData(
                "lemma_3_1_lipschitz_vs_n",
                f"Lemma 3.1: local Lipschitz ratio vs N (slope {slope:.2f}) and C_Lip",
                "lines",
                {
                    "series": [
                        {"label": "measured", "x": ns, "y": vals},
                        {"label": "C_Lip", "x": ns, "y": [lip] * len(ns)},
                    ],
                    "xlabel": "N",
                    "ylabel": "|dT| / ||dtheta||",
                    "logx": True,
                    "logy": True,
                },
            )
        ],
    )


# ----------------------------------------------------------------------------- Cor 3.3
@statement_check("Cor 3.3", name="random parameters of the four init schemes")
def _cor_3_3_random(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 6)
    worst = _Worst()
    for scheme, p, _ in _random_models(ctx, ctx.pick(6, 25, 100)):
        n_bits = int(rng.integers(2, 17))
        x, xn, n = _flips(rng, n_bits, ctx.pick(8, 16, 32), include_last=p.config.eos)
        keep = n != n_bits - 1 if not p.config.eos else np.ones(len(n), bool)
        if not keep.any():
            continue
        dt = float(np.abs(forward(p, x[keep]).T - forward(p, xn[keep]).T).max())
        label = f"{scheme}: N max|T(x)-T(x^n)| vs ||w|| C_infl (1+eps^-1/2)^2K"
        worst.add(label, n_bits * dt, C.cor_3_3_bound(p))
    rows = worst.rows()
    return CheckResult(
        "Cor 3.3",
        "random parameters of the four init schemes",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"models_per_scheme": ctx.pick(6, 25, 100)},
    )


@statement_check("Cor 3.3", name="length independence: N max influence stays bounded")
def _cor_3_3_length(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 7)
    p = _length_sweep_model()
    bound = C.cor_3_3_bound(p)
    c_infl = C.c_infl(p)
    rows, ns, maxima, vec_maxima, beta_max, worst_29 = [], _lengths(ctx), [], [], 0.0, 0.0
    for n_bits in ns:
        k = 8 if n_bits <= 512 else 1
        x, xn, n = _flips(rng, n_bits, k, include_last=False)
        m = mv = 0.0
        for xi, xni in zip(x, xn, strict=True):  # one pair per call (memory at large N)
            r, rn = forward(p, xi, diagnostics=True), forward(p, xni, diagnostics=True)
            m = max(m, abs(float(r.T[0] - rn.T[0])))
            infl = float(np.linalg.norm(r.y_readout[0] - rn.y_readout[0]))
            mv = max(mv, infl)
            b29 = float(C.lemma_2_9_bound(c_infl, r.beta[0], rn.beta[0], n_bits, False))
            worst_29 = max(worst_29, infl / b29)
            beta_max = max(beta_max, float(r.beta[0]), float(rn.beta[0]))
        maxima.append(m)
        vec_maxima.append(mv)
        rows.append(Row(f"N={n_bits}: N max_sampled |T(x)-T(x^n)|", n_bits * m, bound))
    slope = _slope(ns, maxima)
    slope_vec = _slope(ns, vec_maxima)
    return CheckResult(
        "Cor 3.3",
        "length independence: N max influence stays bounded",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"config": p.config.to_dict(), "N": ns, "strings per N": "8 (1 above 512)"},
        notes=[
            f"log-log slope of max sampled |T(x)-T(x^n)| vs N: {slope:.3f} (expected about -1)",
            f"log-log slope of max sampled influence I_n = ||y_r(x) - y_r(x^n)||: {slope_vec:.3f};"
            f" worst I_n / Lemma 2.9 bound (C_infl beta beta' / N) on these pairs: {worst_29:.4g}",
            f"largest beta met: {beta_max:.4g} (Lemma 3.2 bound {C.lemma_3_2_bound(p.config):.4g})",
        ],
        figures=[
            FigureData(
                "cor_3_3_influence_vs_n",
                f"Cor 3.3: max sampled |T(x) - T(x^n)| vs N (fitted slope {slope:.2f})",
                "lines",
                {
                    "series": [
                        {"label": "max |T(x) - T(x^n)|", "x": ns, "y": maxima},
                        {"label": "max I_n (readout vector)", "x": ns, "y": vec_maxima},
                        {"label": "bound / N", "x": ns, "y": [bound / n for n in ns]},
                    ],
                    "xlabel": "N",
                    "ylabel": "max sampled influence",
                    "logx": True,
                    "logy": True,
                },
            )
        ],
    )


# ----------------------------------------------------------------------------- Cor 3.4
def _recognises_nonconstant(params: Params, n_bits: int, xi: float) -> tuple[bool | None, str]:
    """Does T(theta, .) recognise a non-constant function on {0,1}^N with margin xi?
    Certified truth table when verify.model has one (None if some bit stays uncertain), else
    plain float64 (flagged in the result's arithmetic)."""
    import verify.model as vm

    tt = getattr(vm, "truth_table", None)
    if tt is not None:
        table = tt(params, n_bits, margin=xi)
        if int(getattr(table, "n_uncertain", 0)):
            return None, "uncertain"
        lab = np.asarray(table.label)
        ok = bool(np.all(lab >= 0) and (lab == 1).any() and (lab == 0).any())
        return ok, "certified"
    from verify.boolean import all_bit_strings

    t = forward(params, all_bit_strings(n_bits)).T
    return bool(np.all(np.abs(t) >= xi) and (t > 0).any() and (t < 0).any()), "float64"


@statement_check("Cor 3.4", name="in action: recognisers of non-constant functions vanish")
def _cor_3_4_action(ctx: CheckContext) -> CheckResult:
    cfg = ModelConfig(d_model=8, n_layers=1, n_heads=2, ln_eps=0.1)
    xi, box = 0.02, 1.0
    thetas = [
        init_params(cfg, "uniform", ctx.seed * 100003 + k, box)
        for k in range(ctx.pick(40, 200, 1000))
    ]
    log_nstar = np.array([C.log10_n_star(p, xi) for p in thetas])
    ns = list(range(1, ctx.pick(9, 12, 14) + 1))
    rows, fractions, methods, n_uncertain = [], [], set(), 0
    for n_bits in ns:
        hits = []
        for p in thetas:
            ok, method = _recognises_nonconstant(p, n_bits, xi)
            methods.add(method)
            n_uncertain += ok is None
            hits.append(ok is not False)  # uncertain counts as a recogniser (conservative)
        hits_arr = np.array(hits)
        allowed = float(np.mean(np.log10(n_bits) <= log_nstar))  # N <= N*(theta)
        fractions.append(float(hits_arr.mean()))
        rows.append(
            Row(
                f"N={n_bits}: fraction recognising a non-constant f vs P[N <= N*(theta)]",
                fractions[-1],
                allowed,
            )
        )
        beyond = int(np.sum(hits_arr & (np.log10(n_bits) > log_nstar)))
        rows.append(Row(f"N={n_bits}: recognisers with N > N*(theta)", beyond, 0.0))
    box_nstar = C.log10_n_star(C.box_norms(cfg, box), xi)
    return CheckResult(
        "Cor 3.4",
        "in action: recognisers of non-constant functions vanish",
        _status(rows),
        rows,
        arithmetic="certified truth table" if methods == {"certified"} else ", ".join(methods),
        seed=ctx.seed,
        parameters={"config": cfg.to_dict(), "xi": xi, "box B": box, "thetas": len(thetas)},
        notes=[
            f"fractions by N: {dict(zip(ns, (round(f, 4) for f in fractions), strict=True))}",
            f"{n_uncertain} (theta, N) with uncertain bits, counted as recognisers (upper end)",
            f"log10 N* over the box: {box_nstar:.4g}; per theta: median"
            f" {np.median(log_nstar):.4g}, min {log_nstar.min():.4g} -- the explicit N* lies far"
            " beyond exhaustive sizes, so the 'beyond N*' rows are vacuous here; the fall of the"
            " fraction is the empirical content",
        ],
        figures=[
            FigureData(
                "cor_3_4_fraction_vs_n",
                "Cor 3.4: fraction of theta ~ Unif(Theta) recognising a non-constant function",
                "lines",
                {
                    "series": [{"label": f"xi = {xi}", "x": ns, "y": fractions}],
                    "xlabel": "N",
                    "ylabel": "fraction",
                },
            )
        ],
    )


@statement_check("Cor 3.4", name="explicit N* over the box bounds N* of every sampled theta")
def _cor_3_4_nstar(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed + 8)
    rows, notes, xi = [], [], 0.1
    for eps in (1.0, 1e-2, 1e-5):
        cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=eps)
        for b in (0.1, 1.0):
            box = C.log10_n_star(C.box_norms(cfg, b), xi)
            sampled = max(
                C.log10_n_star(init_params(cfg, "uniform", int(rng.integers(2**31)), b), xi)
                for _ in range(ctx.pick(10, 50, 200))
            )
            rows.append(
                Row(
                    f"eps={eps:g}, B={b:g}: max sampled N*(theta) / N*(box)",
                    10.0 ** (sampled - box),
                    1.0,
                )
            )
            notes.append(f"eps={eps:g}, B={b:g}, xi={xi}: log10 N*(box) = {box:.4g}")
    return CheckResult(
        "Cor 3.4",
        "explicit N* over the box bounds N* of every sampled theta",
        _status(rows),
        rows,
        arithmetic="mpmath (exponent range), reported as log10",
        seed=ctx.seed,
        notes=notes,
    )


# ----------------------------------------------------------------------------- Prop 3.5
@statement_check("Prop 3.5", name="cap vs distinct recognised functions and 2^(2^N)")
def _prop_3_5(ctx: CheckContext) -> CheckResult:
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=1, ln_eps=0.1)
    xi, box = 0.02, 1.0
    log_cap = C.log10_prop_3_5(cfg, box, xi)
    rows = []
    n_theta = ctx.pick(60, 300, 2000)
    thetas = [init_params(cfg, "uniform", ctx.seed * 7919 + k, box) for k in range(n_theta)]
    from verify.boolean import all_bit_strings

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
            )
        )
    n0 = next(n for n in range(1, 200) if 2**n * math.log10(2) > log_cap)
    notes = [
        f"M = {n_params(cfg)}, C_Lip(box) = {C.c_lip_box(cfg, box):.4g},"
        f" diam = {C.diameter(cfg, box):.4g}, log10 cap = {log_cap:.4g}",
        f"the cap is below the number 2^(2^N) of all Boolean functions from N = {n0} on",
        "the sampled count is a lower bound on |F_N|, so these rows are consistency checks; the"
        " cap's content is its independence of N",
    ]
    return CheckResult(
        "Prop 3.5",
        "cap vs distinct recognised functions and 2^(2^N)",
        _status(rows),
        rows,
        seed=ctx.seed,
        parameters={"config": cfg.to_dict(), "xi": xi, "box B": box, "thetas": n_theta},
        notes=notes,
    )
