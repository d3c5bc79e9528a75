"""The figure gallery ``docs/figures.md``: every figure of ``report --quick`` (and the figure
of ``sweep --plot``), each with one sentence saying what it shows and what a reader should
conclude, drawn from a report.json so that nothing is rerun.

Regenerate it with ``python -m verify gallery --from REPORT_JSON`` after
``python -m verify report --quick --out DIR`` (see docs/figures.md). The gallery keeps each
figure's data beside its PNG (``docs/figures/<name>.json``): the tests audit those figures
(:func:`verify.report.figure_audit.audit_figure`) and check that every figure the report can
make has a caption here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from verify.errors import ValidationError

GALLERY_DPI = 110  # small PNGs for the repository; the report writes 300 dpi
DOC = "figures.md"
FIG_DIR = "figures"

# one sentence per figure: what it shows, and what a reader should conclude
CAPTIONS: dict[str, str] = {
    "overview_family_profiles": (
        "The exact share K_n/2^N of strings with sensitivity n for every registered family at"
        " N = 10 (white cells are 0): PARITY and sparse PARITY have no zero-sensitive string,"
        " while MAJORITY, AND, OR and the constant function put most of their mass at n = 0."
    ),
    "lemma_2_9_adversarial_search": (
        "The largest measured/bound ratio of Lemma 2.9 found so far by the Hypothesis search,"
        " example by example: it climbs but stays below 1, so the search found no violation."
    ),
    "lemma_2_9_steps_best_ratio": (
        "For each factor of C_infl, how far the best construction stays from its bound"
        " (1 - ratio, log scale; the ratio is written beside each bar): every factor is attained"
        " to within about 1%, so none of them could be lowered by more than that."
    ),
    "lemma_2_9_constructions_vs_n": (
        "Measured influence over the Lemma 2.9 bound for constructions built to be tight in one"
        " regime each, against N (last values written at the right): the layer-norm and MLP"
        " corners approach the bound (ratio 0.999 at N = 1024) while concentrated attention"
        " stays far below it."
    ),
    "lemma_2_9_gradient_search": (
        "The best I_n/bound found by finite-difference ascent in the concentrated-attention"
        " family at each N, post-LN and pre-LN: the ascent stays below 1 (no violation), well"
        " short of the corners' 0.999."
    ),
    "lemma_3_1_adversarial_search": (
        "The largest measured/bound ratio of Lemma 3.1 found by the Hypothesis search so far:"
        " it stays below 1, so the search found no violation of the Lipschitz bound."
    ),
    "lemma_3_1_lipschitz_vs_n": (
        "The local Lipschitz ratio |ΔT|/||Δθ|| (max over sampled strings) against N with the"
        " constant C_Lip: the measured ratio does not grow with N (log-log slope 0.10 ± 0.29)"
        " and sits about ten orders of magnitude below C_Lip."
    ),
    "lemma_3_1_steps_best_ratio": (
        "For each factor of C_Lip, the distance 1 - ratio of the best construction to its bound"
        " (log scale, ratios written beside the bars): every factor is attained to within"
        " about 0.1%, so none of them could be lowered by more than that."
    ),
    "lemma_3_2_adversarial_search": (
        "The largest beta/(1+eps^-1/2)^K found by the Hypothesis search so far (final value"
        " written at the right): it reaches 1 - 3e-8 and never exceeds 1, so the search finds"
        " the bound attained but not broken."
    ),
    "lemma_3_2_tightness": (
        "How far the smallest blowup beta stays below (1+eps^-1/2)^K as every parameter is"
        " scaled by s (log-log): the distance falls like s^2, so the bound is attained in the"
        " limit s -> 0 and cannot be lowered."
    ),
    "cor_3_3_influence_vs_n": (
        "The largest sampled one-bit change of T and of the readout vector against N, with the"
        " corollary's bound/N: both decay with N (fitted slope and its standard error in the"
        " title) and lie some fifteen orders of magnitude below the bound, which holds but is"
        " very loose."
    ),
    "cor_3_4_fraction_vs_n": (
        "The fraction of random parameters (eps > 0) recognising a non-constant function with"
        " margin xi, against N, with 95% Clopper-Pearson intervals from 40 draws: it is 0"
        " beyond N = 4 (upper ends about 0.09), as the corollary predicts for large N."
    ),
    "lemma_4_2_ln_tail": (
        "The empirical tail P[z > s] of the layer-norm coefficient (eps = 0) with pointwise"
        " Clopper-Pearson intervals, its log-log fit and the predicted slope -(D-1): the fitted"
        " exponents' bootstrap intervals (legend) contain D - 1."
    ),
    "lemma_4_2_ln_tail_deep": (
        "The same tail deeper (clustered draws, so no binomial interval): the fitted exponent"
        " is close to the predicted D - 1 = 3."
    ),
    "lemma_4_2_rate": (
        "P[beta(x) > N^0.45] under a random perturbation of the parameters, with 95%"
        " Clopper-Pearson intervals, against N: the event becomes rare for random parameters"
        " (zeros on the bottom edge) and stays certain near a degenerate point; the explicit"
        " bound is 1 at these N, i.e. vacuous."
    ),
    "lemma_4_4_cube_covering": (
        "The certified interval of the bad-set measure on parameter slices (shaded, from the"
        " certified lower to the upper end; 0 drawn on the bottom edge) against the cube side,"
        " with the explicit bounds (dashed): for k = 1, delta = 0.001 the certified upper end"
        " falls below the bound once the cubes are small (side <= 1/16); the k = 1,"
        " delta = 0.01 bound is 1 (vacuous), and for k = 2 the covering stops at side 1/16"
        " with the upper end (0.13) still above the bound (0.07)."
    ),
    "lemma_4_4_sensitivity_event": (
        "P[s_N(x) <= N - k] for random transformers (eps = 0), with 95% Clopper-Pearson"
        " intervals from 60 draws (the k = 1 and k = N/2 curves coincide and are drawn once):"
        " even for k = N, i.e. a zero-sensitive string, the estimate is at least 0.97 at every"
        " tested N; the explicit bound is vacuous here."
    ),
    "thm_4_5_k0_growth": (
        "K_0(N) of random transformers (mean of 3 models with a 95% t interval, wide at"
        " n = 3, and the minimum over the models) against the theorem's"
        " N^((D-1)/(2L)-5): the mean overtakes the polynomial from N = 8 (D = 16) and N = 9"
        " (D = 32) on, the minimum for D = 16 only at N = 11."
    ),
    "random_init_p_k0": (
        "P[K_0 >= 1] per init scheme and positional encoding (95% Clopper-Pearson intervals)"
        " against a uniformly random Boolean function (dashed): every random transformer had a"
        " zero-sensitive string, above the random-function value of about 0.62."
    ),
    "random_init_mean_profile": (
        "The mean sensitivity profile K_n/2^N of random transformers per init scheme (white: 0):"
        " the mass sits at n = 0, i.e. almost every string is zero-sensitive; only the Xavier"
        " schemes put a little mass at higher sensitivity."
    ),
    "thm_4_5_blowup_tail_exponent": (
        "The fitted tail exponent of the blowup beta (95% bootstrap intervals) against D - 1,"
        " with the union-bound exponent (D-1)/K and D - 1: every fit lies above (D-1)/K, and"
        " all but one (L = 1, D = 8: 15, with a wide interval) at or below D - 1."
    ),
    "thm_4_5_bad_event_rate": (
        "P[beta(x) > N^(zeta/2)] against N with 95% Clopper-Pearson intervals and the explicit"
        " bound: the rate falls with N for D = 6 and slowly for D = 4, while the bound stays at"
        " 1 (vacuous) at these N."
    ),
    "hr_cor_5_adversarial_search": (
        "The largest measured/bound ratio of Hahn & Rofin's Cor 5 found by the Hypothesis"
        " search so far: it stays below 1, so the search found no violation."
    ),
    "sec5_majority_threshold": (
        "The smallest N* beyond which MAJORITY's K_0(N) exceeds N^c, for c = 1..10 (exact):"
        " N* grows about linearly in c, so K_0 of MAJORITY is super-polynomial."
    ),
    "cor_5_1_in_action": (
        "The fraction of a parameter ball around an exact PARITY construction that still"
        " recognises PARITY, with 95% Clopper-Pearson intervals, against N: it falls with N"
        " and faster for the larger ball, as the corollary predicts."
    ),
    "cor_5_2_in_action": (
        "The same for sparse PARITY: the fraction does not fall between N = 4 and 8 at these"
        " radii, so the quick budget shows no decay yet (the corollary is asymptotic)."
    ),
    "cor_5_3_in_action": (
        "The same for DICTATOR: every draw still recognises it at N = 4 and 8 (interval from"
        " the 12 draws), so no decay is visible at these sizes."
    ),
    "cor_5_4_in_action": (
        "The same for FIRST: every draw still recognises it at N = 4 and 8, so no decay is"
        " visible at these sizes."
    ),
    "conj_5_5_measure": (
        "The fraction of a parameter ball around a MAJORITY construction recognising MAJORITY_N"
        " (and recognising it at every tested N' <= N), with 95% Clopper-Pearson intervals:"
        " it falls towards 0 as N grows at both radii, evidence against a uniform-in-N set."
    ),
    "sec6_random_functions": (
        "P[K_0 >= 1] of a uniformly random Boolean function: exact for N <= 5, Monte Carlo"
        " with 99.9% intervals at N = 12 and 16, against the limit 1 - 1/e and the Chen-Stein"
        " lower end: the estimates approach 1 - 1/e within the Chen-Stein radius."
    ),
    "sweep_p_k0": (
        "The figure of `python -m verify sweep --plot` (here a small grid: D = 8, 16, N = 6, 64"
        " seeds): P[K_0 >= 1] among the models that are not constant (a constant f has"
        " K_0 = 2^N trivially; each label says how many of the decided models were not"
        " constant), with 95% Clopper-Pearson intervals, against the random-function limit"
        " 1 - 1/e."
    ),
}


def _report_document(path: Path) -> dict[str, Any]:
    """The report.json at ``path``, validated (its schema and version): a truncated file, a
    JSON that is not an object or a document of another schema is refused naming ``--from``,
    not drawn into a near-empty gallery."""
    from verify.report.document import SCHEMA, SCHEMA_VERSION, validate_document

    expected = f"a report.json written by `python -m verify report` ({SCHEMA} {SCHEMA_VERSION})"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError("--from", expected, str(path), f"not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise ValidationError("--from", expected, str(path), f"a JSON {type(doc).__name__}")
    problems = validate_document(doc)
    if problems:
        raise ValidationError("--from", expected, str(path), problems[0])
    return doc


def report_figures(report_json: str | Path) -> list[dict[str, Any]]:
    """Every figure entry of a report.json that holds data: name, title, kind, data and where
    it comes from (statement and check, or "overview")."""
    path = Path(report_json)
    if not path.is_file():
        raise ValidationError(
            "--from", "a report.json written by `python -m verify report`", str(path)
        )
    doc = _report_document(path)
    out = []
    for st in doc.get("statements", []):
        for c in st["checks"]:
            for f in c["figures"]:
                out.append({**f, "source": f"{st['id']}, check: {c['name']}"})
    for f in (doc.get("overview") or {}).get("figures", []):
        out.append({**f, "source": "overview (no statement)"})
    return [f for f in out if f.get("data") is not None]


def build_gallery(report_json: str | Path, docs_dir: str | Path, extra: Sequence[Any] = ()) -> Path:
    """Draw every figure of ``report_json`` (and the FigureData in ``extra``) into
    ``docs_dir/figures/`` as PNG with its data as JSON, and write ``docs_dir/figures.md`` with
    one caption each; raise ValidationError when a figure has no caption in CAPTIONS."""
    from verify.json_values import jsonable
    from verify.report.figure_audit import audit_figure
    from verify.report.figures import render

    entries = report_figures(report_json)
    entries += [
        {"name": f.name, "title": f.title, "kind": f.kind, "data": f.data, "source": "sweep --plot"}
        for f in extra
    ]
    missing = [e["name"] for e in entries if e["name"] not in CAPTIONS]
    if missing:
        raise ValidationError(
            "figure captions", "one sentence per figure in verify.report.gallery.CAPTIONS", missing
        )
    docs = Path(docs_dir)
    fig_dir = docs / FIG_DIR
    fig_dir.mkdir(parents=True, exist_ok=True)
    for stale in list(fig_dir.glob("*.png")) + list(fig_dir.glob("*.json")):
        stale.unlink()
    lines = [
        "# Figure gallery",
        "",
        "Every figure of `python -m verify report --quick` (seed 0) and the figure of"
        " `python -m verify sweep --plot`, each with what it shows and what to conclude."
        " Regenerated (nothing but the drawing is rerun) by",
        "",
        "```bash",
        "python -m verify report --quick --out /tmp/quick",
        "python -m verify gallery --from /tmp/quick/report.json",
        "```",
        "",
        "How the figures are drawn (verify/report/figures.py): an estimated quantity carries its"
        " interval (error bars or a band; the kind of interval and the sample size n in the"
        " legend or title), a probability axis stays inside [0, 1], a value 0 on a log axis is"
        " an open marker on the bottom edge, identical series are drawn once with both names,"
        " series that would hide each other are moved a few points sideways, ratios near 1 are"
        " drawn as their distance from 1 on a log axis, and a single series has no legend."
        " Each figure's data is in `figures/<name>.json` beside its PNG.",
        "",
    ]
    for e in entries:
        fig = SimpleNamespace(name=e["name"], title=e["title"], kind=e["kind"], data=e["data"])
        problems = audit_figure(fig)
        mfig = render(fig, dpi=GALLERY_DPI)
        mfig.savefig(fig_dir / f"{e['name']}.png", dpi=GALLERY_DPI)
        payload = {k: fig.__dict__[k] for k in ("name", "title", "kind", "data")}
        (fig_dir / f"{e['name']}.json").write_text(
            json.dumps(jsonable(payload), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        lines += [
            f"## {e['name']}",
            "",
            f"![{e['title']}]({FIG_DIR}/{e['name']}.png)",
            "",
            CAPTIONS[e["name"]],
            "",
            f"*Source: {e['source']}.*" + (f" Audit: {'; '.join(problems)}." if problems else ""),
            "",
        ]
    lines += _blueprint_section(Path(report_json), fig_dir)
    out = docs / DOC
    out.write_text("\n".join(lines), encoding="utf-8")
    return out


BLUEPRINT_CAPTION = (
    "The blueprint of the derivations (issue 28, `python -m verify prove`): axioms on the left,"
    " the derivation steps in the middle grouped by statement, the statements on the right;"
    " a statement coloured by the status it earned (proved only when every step over its whole"
    " domain and every statement it uses is; otherwise the weakest evidence on its path:"
    " instance, box, sampled chain, prose), a step by its weakest evidence, an axiom blue."
    " Conclude which statements are proved and what the others rest on."
)


def _blueprint_section(report_json: Path, fig_dir: Path) -> list[str]:
    """The report's blueprint figure (drawn by verify.proofs.blueprint, not a FigureData),
    copied beside the others with its caption; nothing when the report has none."""
    import shutil

    doc = json.loads(report_json.read_text(encoding="utf-8"))
    figure = (doc.get("derivations") or {}).get("figure") or {}
    png = [f for f in figure.get("files", []) if f.endswith(".png")]
    if not png or not (report_json.parent / png[0]).is_file():
        return []
    shutil.copyfile(report_json.parent / png[0], fig_dir / "blueprint.png")
    return [
        "## blueprint",
        "",
        f"![The blueprint of the derivations]({FIG_DIR}/blueprint.png)",
        "",
        BLUEPRINT_CAPTION,
        "",
        "*Source: the report's Derivation sections (verify/proofs).*",
        "",
    ]
