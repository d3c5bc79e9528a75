"""H&R Cor 5 (Hahn & Rofin, arXiv 2402.09963; reconstruction, numbering from a third-party
review): recognising a sensitive function forces layer-norm blowup or parameter norm up.
Explicit form derived by the toolkit from Lemma 2.9 (docs/derivations_hahn_rofin.md#cor-5);
the bound: verify.theory.hahn_rofin; the measurement: verify.checks.hahn_rofin."""

from __future__ import annotations

import math

import numpy as np

from verify.boolean.function import all_bit_strings
from verify.checks import constructions
from verify.checks.adversarial import SEARCH_EXAMPLES, build_model, draw_model, maximise_ratio
from verify.checks.hahn_rofin import TradeoffMeasurement, measure_tradeoff
from verify.checks.random_models import EPS_CHOICES, MODELS_PER_SCHEME, random_models
from verify.checks.summaries import Worst
from verify.experiments.train_cache import TRAINED_MODELS
from verify.model import ModelConfig, Params, forward
from verify.registry import (
    CheckContext,
    Counterexample,
    FigureData,
    Hypothesis,
    Outcome,
    Policy,
    Row,
    define_statement,
)
from verify.theory import hahn_rofin as hr
from verify.theory.bounds import c_infl, lemma_2_9_bound
from verify.theory.trivial import sensitivity_swing_bound

DERIVATION = "docs/derivations_hahn_rofin.md"
PAPER = "arXiv 2402.09963"

HR_COR_5 = define_statement(
    id="H&R Cor 5",
    title="Sensitive functions force layer-norm blowup or large parameter norms",
    paper=PAPER,
    statement=(
        r"If $T(\theta,\cdot)$ recognises $f:\{0,1\}^N\to\{0,1\}$ with margin $\xi>0$"
        r" ($|T(x)|\ge\xi$, $T(x)>0 \iff f(x)=1$), then"
        r" $2\xi\,\mathrm{as}_N(f) \le \|w\|\,C_{infl}(\theta)\,"
        r"\mathbb E_x[\beta(\theta,x)^2\,\omega_f(x)]$,"
        r" with $C_{infl}$ Lemma 2.9's explicit constant (from the parameter norms), $\beta$ the"
        r" blowup $\prod_k \max_n(1+z^k_n)$ and $\omega_f(x) = |S_f(x)|/N + [r \le N,\ r \in"
        r" S_f(x)]$ ($S_f(x)$ the sensitive coordinates of $x$, $r$ the readout position). As"
        r" $\omega_f \le c_r$ ($c_r = 1$ with eos readout, 2 when the readout sits on the last"
        r" bit), $2\xi\,\mathrm{as}_N(f) \le c_r\,\|w\|\,C_{infl}\,\mathbb E_x[\beta^2]$."
        r" For PARITY ($\mathrm{as}_N = N$) blowup or norms must grow linearly in"
        r" $N$. Hahn & Rofin's own statement (a norm-blowup trade-off, called Corollary 5 in a"
        r" third-party review) was not retrieved; this explicit form is the toolkit's."
    ),
    confidence="[inferred]",
    hypotheses=(
        Hypothesis("margin", "xi = min_x |T(x)| > 0 (T recognises the function it computes)"),
        Hypothesis("any eps >= 0", "wherever beta is finite (Lemma 2.9 needs no eps > 0)"),
    ),
    bound_formula=(
        r"$2\xi\,\mathrm{as}_N(f) \le \|w\|\, C_{\rm infl}(\theta)\,"
        r" E_x[\beta(x)^2 \omega_f(x)] \;(\le c_r \|w\|\, C_{\rm infl}\, E_x[\beta^2])$"
    ),
    derivation=DERIVATION + "#cor-5",
)

MAX_N_RANDOM = 8  # exhaustive over 2^N strings per random model


def _rows(
    m: TradeoffMeasurement, label: str, info: dict, params: Params | None = None
) -> tuple[Row, Row]:
    """The averaged comparison and the edge form (the step before averaging); with ``params``
    each against its trivial bound (the output swing times the sensitivity, or times the
    sensitive edges: theory.trivial.sensitivity_swing_bound)."""
    extra = {**info, **m.to_dict()}
    trivial = edges = None
    if params is not None:
        trivial = sensitivity_swing_bound(params, m.avg_sensitivity)
        edges = sensitivity_swing_bound(params, m.avg_sensitivity, 2.0**m.n_bits)
    return (
        Row(
            f"{label}: 2 xi as_N(f) vs ||w|| C_infl E[beta^2 omega_f]",
            m.lhs,
            m.bound,
            extra=extra,
            trivial=trivial,
        ),
        Row(
            f"{label}: sum_sensitive |dT| vs ||w|| C_infl sum beta beta' (1/N + delta)",
            m.sensitive_dT,
            m.edge_bound,
            extra=extra,
            trivial=edges,
        ),
    )


def _median_readout(params: Params, n_bits: int) -> tuple[np.ndarray, float]:
    """The model's w with omega moved to the median of w . y: a random body then computes a
    non-constant function (half the strings on each side)."""
    y = forward(params, all_bit_strings(n_bits)).y_readout
    w = params["readout.weight"]
    s = y @ w
    return w, -float(np.median(s[np.isfinite(s)])) if np.any(np.isfinite(s)) else 0.0


@HR_COR_5.check("random parameters of the four init schemes", policy=Policy.STRICT)
def random_parameters(ctx: CheckContext) -> Outcome:
    """Random bodies (every init scheme, eps = 0 included), readout bias at the median of
    w . y so that the computed function is not constant; exhaustive over 2^N strings."""
    rng = np.random.default_rng(ctx.seed + 5)
    averaged, edges = Worst(), Worst()
    skipped = overflow = 0
    for scheme, p, scale in random_models(ctx, ctx.size(MODELS_PER_SCHEME), (0.0, *EPS_CHOICES)):
        n_bits = int(rng.integers(1, MAX_N_RANDOM + 1))
        m = measure_tradeoff(p, n_bits, readout=_median_readout(p, n_bits))
        if m is None or m.avg_sensitivity == 0:
            skipped += 1
            continue
        overflow += int(not math.isfinite(m.c_infl))
        info = {"config": p.config.to_dict(), "scale": scale, "N": n_bits}
        a, e = _rows(m, scheme, info, p)
        averaged.add(a.label, a.measured, a.bound, a.extra, a.trivial)
        edges.add(e.label, e.measured, e.bound, e.extra, e.trivial)
    return Outcome(
        rows=averaged.rows() + edges.rows(),
        parameters={"models_per_scheme": ctx.size(MODELS_PER_SCHEME), "N": f"1..{MAX_N_RANDOM}"},
        notes=[
            f"{skipped} models skipped (undefined T at eps = 0, zero margin, or a constant"
            f" function); {overflow} had C_infl beyond float64 (bound inf, holds trivially)",
            f"worst averaged ratio {averaged.worst_ratio():.4g},"
            f" edge form {edges.worst_ratio():.4g}",
        ],
        arithmetic="float64 forward pass over all 2^N strings; C_infl in mpmath",
    )


def cor_5_search(ctx: CheckContext):
    """Adversarial search on 2 xi as_N(f) / bound over structured models and N = 1..3; the
    readout (w, omega) is the adversary's: w the unit vector along y(x) - y(x^n) of the edge
    where Lemma 2.9 is tightest, omega centring that edge (every T then sits at +-xi there)."""

    def evaluate(draw):
        from hypothesis import strategies as st

        p, info = draw_model(draw, eps_choices=(*EPS_CHOICES, 0.0))
        n_bits = draw(st.integers(1, 3))
        bits = all_bit_strings(n_bits)
        res = forward(p, bits, diagnostics=True)
        if not (np.all(np.isfinite(res.y_readout)) and np.all(np.isfinite(res.beta))):
            return None
        best, edge = -1.0, None
        idx = np.arange(bits.shape[0])
        at_r = np.zeros(n_bits, dtype=bool)
        if not p.config.eos:
            at_r[-1] = True
        c = c_infl(p)
        if not math.isfinite(c) or c == 0:
            return None
        for n in range(n_bits):
            fl = idx ^ (1 << n)
            dy = np.linalg.norm(res.y_readout - res.y_readout[fl], axis=1)
            b = lemma_2_9_bound(c, res.beta, res.beta[fl], n_bits, at_r[n])
            r = dy / b
            i = int(np.argmax(r))
            if r[i] > best:
                best, edge = float(r[i]), (i, int(fl[i]))
        i, j = edge
        diff = res.y_readout[i] - res.y_readout[j]
        if not np.linalg.norm(diff) > 0:
            return None
        w = diff / np.linalg.norm(diff)
        omega = -float(w @ (res.y_readout[i] + res.y_readout[j])) / 2.0
        m = measure_tradeoff(p, n_bits, readout=(w, omega))
        if m is None or not math.isfinite(m.bound) or m.bound == 0:
            return None
        knobs = {**info, "N": n_bits, "readout_weight": w.tolist(), "readout_bias": omega}
        return m.lhs / m.bound, {**knobs, "measured": m.lhs, "bound": m.bound}

    return maximise_ratio(evaluate, max_examples=ctx.size(SEARCH_EXAMPLES), seed=ctx.seed)


def rebuild(worst: dict) -> Params:
    """The parameters of a search example (model knobs, then the adversary's readout)."""
    p = build_model(ModelConfig(**worst["config"]), worst)
    return p.with_arrays(
        {
            "readout.weight": np.asarray(worst["readout_weight"]),
            "readout.bias": np.asarray(worst["readout_bias"]),
        }
    )


@HR_COR_5.check("adversarial search (Hypothesis, target = ratio)", policy=Policy.STRICT)
def adversarial_search(ctx: CheckContext) -> Outcome:
    """Hypothesis drives 2 xi as_N(f) / (||w|| C_infl E[beta^2 omega_f]) up (cor_5_search)."""
    res = cor_5_search(ctx)
    w = res.worst
    row = Row(
        "worst 2 xi as_N(f) vs ||w|| C_infl E[beta^2 omega_f]",
        float(w.get("measured", 0.0)),
        float(w.get("bound", 1.0)),
        extra={"ratio": res.worst_ratio},
    )
    q = np.quantile(res.ratios, [0.5, 0.9, 0.99]) if res.ratios else [math.nan] * 3
    running = np.maximum.accumulate(res.ratios).tolist() if res.ratios else []
    return Outcome(
        rows=[row],
        parameters={"max_examples": ctx.size(SEARCH_EXAMPLES), "N": "1..3"},
        notes=[
            f"{res.n_examples} examples; worst ratio {res.worst_ratio:.4g}; quantiles"
            f" 50/90/99%: {q[0]:.3g}/{q[1]:.3g}/{q[2]:.3g}",
            "the derivation loses Lemma 2.9's slack and beta beta' against beta^2 (AM-GM):"
            " the search shows how much of Cor 5's constant is used, and a smaller constant"
            " is caught (tests/test_hahn_rofin.py); the DICTATOR construction reaches N/(N+1)",
            f"worst example: {w}",
        ],
        counterexample=Counterexample(setting=w, params=rebuild(w)) if not row.ok else None,
        figures=[
            FigureData(
                "hr_cor_5_adversarial_search",
                "H&R Cor 5: adversarial search, largest measured/bound so far",
                "lines",
                {
                    "series": [
                        {
                            "label": "running max",
                            "x": list(range(1, len(running) + 1)),
                            "y": running,
                        }
                    ],
                    "xlabel": "example",
                    "ylabel": "measured / bound",
                    "annotate": "last",  # the final ratio as a number
                },
            )
        ],
    )


CORNER_NS = tuple(range(1, 13))  # exhaustive over 2^N strings
CORNER_LARGE_NS = (64, 256, 1024)  # E_x exact over classes of strings (by symmetry)


def _dictator_params(n_bits: int) -> Params:
    """ln_corner(N) with w the unit vector along y(0...01) - y(0...0) and omega centring it."""
    p = constructions.ln_corner(n_bits)
    ends = np.zeros((2, n_bits), dtype=np.uint8)
    ends[1, -1] = 1
    y = forward(p, ends).y_readout
    diff = y[1] - y[0]
    w = diff / np.linalg.norm(diff)
    omega = -float(w @ (y[0] + y[1])) / 2.0
    return p.with_arrays({"readout.weight": w, "readout.bias": np.asarray(omega)})


def dictator_corner(n_bits: int) -> tuple[Params, TradeoffMeasurement | None]:
    """Lemma 2.9's post-LN layer-norm corner (verify.checks.constructions.ln_corner: attention
    and MLP off, z = 1 at every norm, readout on the last bit) with the readout w the unit
    vector along y(0...01) - y(0...0) and omega centring it: T depends on the last bit only
    (DICTATOR), |T| = xi at every string, and Lemma 2.9 is tight up to N / (N + 1) on the
    sensitive edges, so 2 xi as_N should reach ~N / (N + 1) of ||w|| C_infl E[beta^2 omega_f]
    (half of the c_r form). Measured exhaustively over the 2^N strings."""
    p = _dictator_params(n_bits)
    return p, measure_tradeoff(p, n_bits)


def dictator_corner_by_classes(n_bits: int) -> dict | None:
    """The same model at large N (>= 3), E_x exact over six classes of strings instead of 2^N:
    attention (all weights 0) adds b_o = 0 and the MLP is off, so each position's stream is a
    function of its own bit: T(x) depends on x_N only and beta(x) on x_N and on which bit
    values x_1..x_{N-1} contain (only 0s, only 1s, both; probabilities 2^{1-N}, 2^{1-N},
    1 - 2^{2-N}). One representative per class is run through the forward pass; f = DICTATOR
    on x_N is checked on them (None otherwise), so S_f(x) = {N} and omega_f = 1/N + 1 at every
    x, as_N = 1. tests/test_hahn_rofin.py compares this with the exhaustive measurement."""
    p = _dictator_params(n_bits)
    reps, weights = [], []
    for last in (0, 1):
        for rest, prob in (("0", 2.0 ** (1 - n_bits)), ("1", 2.0 ** (1 - n_bits))):
            reps.append([int(rest)] * (n_bits - 1) + [last])
            weights.append(prob / 2)
        reps.append([i % 2 for i in range(n_bits - 1)] + [last])
        weights.append((1.0 - 2.0 ** (2 - n_bits)) / 2)
    res = forward(p, np.asarray(reps, dtype=np.uint8), diagnostics=True)
    t = res.T
    f = t > 0
    if not (np.all(f[:3] == f[0]) and np.all(f[3:] == f[3]) and f[0] != f[3]):
        return None
    xi = float(np.min(np.abs(t)))
    omega = hr.cor_5_omega(np.ones(6), np.ones(6, dtype=bool), n_bits)
    w_norm = float(np.linalg.norm(p["readout.weight"]))
    return {
        "N": n_bits,
        "xi": xi,
        "avg_sensitivity": 1.0,
        "lhs": 2.0 * xi * 1.0,
        "bound": hr.cor_5_bound(w_norm, c_infl(p), res.beta, omega, weights=weights),
        "beta": res.beta.tolist(),
        "class_weights": weights,
    }


@HR_COR_5.check(
    "construction (layer-norm corner, DICTATOR on the readout bit)", policy=Policy.STRICT
)
def dictator_construction(ctx: CheckContext) -> Outcome:
    """The layer-norm corner with a DICTATOR readout: N = 1..12 exhaustive
    (:func:`dictator_corner`), N = 64, 256, 1024 exact over classes of strings
    (:func:`dictator_corner_by_classes`); the bound's weight omega_f (not c_r) is what this
    model uses."""
    rows, table, undefined = [], [], []
    for n in CORNER_NS:
        _, m = dictator_corner(n)
        if m is None:
            undefined.append(n)
            continue
        rows.extend(_rows(m, f"DICTATOR corner N={n}", {"N": n}))
        table.append(
            f"N={n}: as_N={m.avg_sensitivity:.4g}, E[omega_f]={m.mean_omega:.4g},"
            f" 2 xi as_N={m.lhs:.6g}, bound={m.bound:.6g}, ratio {m.lhs / m.bound:.4f}"
            f" (c_r form: {m.lhs / m.bound_c_r:.4f})"
        )
    for n in CORNER_LARGE_NS:
        c = dictator_corner_by_classes(n)
        if c is None:
            undefined.append(n)
            continue
        label = f"DICTATOR corner N={n} (six classes of strings)"
        rows.append(
            Row(
                f"{label}: 2 xi as_N(f) vs ||w|| C_infl E[beta^2 omega_f]",
                c["lhs"],
                c["bound"],
                extra=c,
            )
        )
        table.append(f"N={n} (classes): ratio {c['lhs'] / c['bound']:.4f}")
    return Outcome(
        rows=rows,
        parameters={
            "N (exhaustive)": f"{CORNER_NS[0]}..{CORNER_NS[-1]}",
            "N (by classes)": list(CORNER_LARGE_NS),
            "construction": "ln_corner",
        },
        notes=[
            "post-LN, attention and MLP off, z = 1 at every norm, readout on the last bit;"
            " w along the change of y, omega centring it (|T| = xi at every string)",
            "N <= 12 exhaustive (both rows); larger N exact over six classes of strings"
            " (dictator_corner_by_classes; averaged row only: the edge sums overflow)",
            *table,
            *([f"no margin at N = {undefined}"] if undefined else []),
        ],
        arithmetic="float64 forward pass over all 2^N strings (N <= 12) or one string per"
        " class (N >= 64); C_infl in mpmath",
    )


def _trained_outcome(ctx: CheckContext, budget: str) -> Outcome:
    from verify.experiments.train import CHECK_GRIDS, check_models, check_models_available

    if not check_models_available(budget, ctx.seed):  # (cached models need no torch)
        return Outcome(unsettled=["torch is not installed (extra `torch`): no model trained"])
    functions, ns, settings = CHECK_GRIDS[budget]
    rows, notes, table = [], [], []
    for rec, p in check_models(budget, ctx.seed):
        if rec["N"] > settings.tradeoff_max:
            continue
        m = measure_tradeoff(p, rec["N"])
        label = f"{rec['function']} N={rec['N']} (accuracy {rec['accuracy']:.3g})"
        if m is None:
            notes.append(f"{label}: no margin (some T = 0 or undefined), skipped")
            continue
        rows.extend(_rows(m, label, {"function": rec["function"], "N": rec["N"]}, p))
        need = hr.cor_5_required_blowup(m.avg_sensitivity, m.xi, m.w_norm, m.c_infl * m.factor)
        table.append(
            f"{rec['function']} N={rec['N']}: as={m.avg_sensitivity:.3g}, xi={m.xi:.3g},"
            f" E[beta^2]={m.mean_beta_sq:.4g} (Cor 5's c_r form needs >= {need:.3g}),"
            f" log10 C_infl={m.log10_c_infl:.3g}, ||w||={m.w_norm:.3g},"
            f" ||theta||^2={m.param_norm_sq:.4g}"
        )
    return Outcome(
        rows=rows,
        notes=[
            f"trained: functions {list(functions)}, N {list(ns)}, D={settings.d_model},"
            f" L={settings.n_layers}, {settings.steps} steps (verify.experiments.train)",
            "the learned function (sign of T) is the f of each row; its margin is min |T|",
            "trivial bound of each row: the output swing 2 sqrt(D) |w g| times as_N(f) (times"
            " 2^N for the edge form), since every sensitive edge moves T by 2 xi to the swing:"
            " a Cor 5 bound above it is vacuous for that model",
            *table,
            *notes,
        ],
        parameters={"budget grid": budget, "seed": ctx.seed},
        arithmetic="torch float32 training; float64 forward over all 2^N strings; mpmath C_infl",
    )


@HR_COR_5.check(
    "trained models (small, seconds)",
    policy=Policy.STRICT,
    requires=("torch",),
    shares=TRAINED_MODELS,
)
def trained_models(ctx: CheckContext) -> Outcome:
    """Tiny models trained on PARITY, MAJORITY, FIRST (quick) or all five targets (default):
    the learned function's 2 xi as_N against the bound."""
    return _trained_outcome(ctx, "quick" if ctx.budget == "quick" else "default")


@HR_COR_5.check(
    "training experiment (D=16, L=2, N up to 18)",
    policy=Policy.STRICT,
    slow=True,
    requires=("torch",),
    shares=TRAINED_MODELS,
)
def training_experiment(ctx: CheckContext) -> Outcome:
    """The full training grid (verify.experiments.train.CHECK_GRIDS['full']): Cor 5 on every
    model with N <= 12, and the blowup / parameter norm against N per function."""
    from verify.experiments.train import check_experiment, figures

    out = _trained_outcome(ctx, "full")
    if out.unsettled:
        return out
    records = check_experiment("full", ctx.seed)
    out.figures = [f for f in figures(records, "hr_cor_5") if "beta" in f.name]
    return out
