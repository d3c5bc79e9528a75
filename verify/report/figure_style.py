"""How the report's figures look: labels in mathtext, series grouped into bands and colours.

Used by :mod:`verify.report.figures`; see its docstring for the rules.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#c7c7c7",
    "#dbdb8d",
    "#9edae5",
)
MARKERS = "osv^Dp<>h*"
LINESTYLES = ("-", "--", ":", "-.")


# ------------------------------------------------------------------------ labels in mathtext
_GREEK = {
    "alpha": r"\alpha",
    "beta": r"\beta",
    "gamma": r"\gamma",
    "delta": r"\delta",
    "eps": r"\epsilon",
    "epsilon": r"\epsilon",
    "theta": r"\theta",
    "rho": r"\rho",
    "tau": r"\tau",
    "omega": r"\omega",
    "xi": r"\xi",
    "sigma": r"\sigma",
    "mu": r"\mu",
    "lambda": r"\lambda",
    "zeta": r"\zeta",
    "kappa": r"\kappa",
    "nu": r"\nu",
    "phi": r"\phi",
    "psi": r"\psi",
}
_GREEK_WORDS = tuple(sorted(_GREEK, key=len, reverse=True))
_SUPER = r"(\((?:[^()]|\([^()]*\))*\)|\{[^{}]*\}|-?[A-Za-z0-9.]+(?:/[0-9]+)?)"
_TOKEN = re.compile(
    r"(?P<sqrt>\bsqrt\((?:[^()]|\([^()]*\))*\))"
    r"|(?P<bar>\b[A-Za-z]bar_[A-Za-z0-9]+(?:\^[0-9]+)?)"
    r"|(?P<sum>\bsum_[A-Za-z0-9]+\b)"
    r"|(?P<sub>(?<![\w.])(?:Δ?[A-Za-z]{1,2}|"
    + "|".join(_GREEK_WORDS)
    + r")_(?:\{[^}]*\}|[A-Za-z0-9]+)\b)"
    r"|(?P<sup>\b[A-Za-z0-9]+\^" + _SUPER + r")"
    r"|(?P<greek>\b(?:" + "|".join(_GREEK) + r")\b)"
    r"|(?P<psup>[)\]]\^(?:\{[^{}]*\}|[A-Za-z0-9]+))"
    r"|(?P<norm>\|\|(?P<inner>[^|]+)\|\|)"
    r"|(?P<arrow>->\s*inf\b|->)"
    r"|(?P<rel>>=|<=)"
)


def _math_token(tok: str) -> str:
    if tok.startswith("->"):
        return r"\to\infty" if tok.endswith("inf") else r"\to"
    if tok in (">=", "<="):
        return r"\geq" if tok == ">=" else r"\leq"
    if tok in _GREEK:
        return _GREEK[tok]
    if tok.startswith("sqrt("):
        inner = _TOKEN.sub(lambda m: _math_token(m.group(0)), tok[5:-1].strip())
        return rf"\sqrt{{{inner}}}"
    if tok.startswith("sum_"):
        return rf"\sum_{{{tok[4:]}}}"
    if "bar_" in tok:
        head, _, rest = tok.partition("bar_")
        sub, _, exp = rest.partition("^")
        return rf"\bar{{{head}}}_{{{sub}}}" + (f"^{{{exp}}}" if exp else "")
    tok = tok.replace("Δ", r"\Delta ")
    if tok.startswith("||"):  # a norm ||x||: its inside in mathtext too
        inner = _TOKEN.sub(lambda m: _math_token(m.group(0)), tok[2:-2].strip())
        greek = "|".join(_GREEK)
        inner = re.sub(r"(?<!\\)\bd(" + greek + r")\b", lambda m: "d" + _GREEK[m.group(1)], inner)
        return rf"\Vert {inner}\Vert"
    if "^" in tok:
        base, _, exp = tok.partition("^")
        if (exp.startswith("(") and exp.endswith(")")) or exp.startswith("{"):
            exp = exp[1:-1]
        exp = re.sub(r"\b(" + "|".join(_GREEK) + r")\b", lambda m: _GREEK[m.group(1)], exp)
        return f"{_GREEK.get(base, base)}^{{{exp}}}"
    base, _, sub = tok.partition("_")
    sub = sub.strip("{}")
    base = _GREEK.get(base, base)
    if len(sub) > 1 and sub.isalpha():
        sub = rf"\mathrm{{{sub}}}"
    return f"{base}_{{{sub}}}"


def math_label(text: Any) -> str:
    """``text`` with its formulas (``K_0``, ``2^N``, ``N^((D-1)/(2L)-5)``, ``beta``, ``>=``)
    in matplotlib mathtext; unchanged when it already holds ``$`` or does not parse."""
    return _math_label("" if text is None else str(text))


@functools.lru_cache(maxsize=4096)
def _math_label(s: str) -> str:
    # one parse per distinct label and process: figures repeat their labels, and the parse
    # that tells whether mathtext reads a label costs milliseconds
    if not s or "$" in s:
        return s
    out = _TOKEN.sub(lambda m: "$" + _math_token(m.group(0)) + "$", s)
    out = out.replace("$$", "")  # adjacent formulas merge
    if out == s:
        return s
    try:
        from matplotlib.mathtext import MathTextParser

        MathTextParser("path").parse(out)
    except Exception:  # a label mathtext cannot read stays plain text
        return s
    return out


# ------------------------------------------------------------------------ series grouping
_BAND = re.compile(r"^(?P<base>.*?)\s*(?P<side>CI low|CI high|CI lower|CI upper|lower|upper)$")
_SETTING = re.compile(
    r"^((?:[A-Za-z_][\w]*\s*=\s*[^\s,:]+(?:,\s*|\s+(?=[A-Za-z_]\w*\s*=)))*"
    r"[A-Za-z_][\w]*\s*=\s*[^\s,:]+)(?=[\s:]|$)"
)


def _setting(label: str) -> str:
    m = _SETTING.match(label)
    return m.group(1) if m else label


def _group_of(label: str, labels: list[str]) -> str:
    """The colour group of a series: its leading "key=value" settings, else the longest other
    label it extends ("rho=0.02, all N' <= N" goes with "rho=0.02")."""
    setting = _setting(label)
    if setting != label:
        return setting
    prefixes = [
        other
        for other in labels
        if other and other != label and label.startswith(other) and label[len(other)] in " ,;("
    ]
    return _setting(max(prefixes, key=len)) if prefixes else label


def plan_lines(series: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group line series: each item is ``{"kind": "line"|"band", "series": [...], "group",
    "label"}``; bands pair a lower and an upper series."""
    labels = [str(s.get("label") or "") for s in series]
    used: set[int] = set()
    items: list[dict[str, Any]] = []
    bands: dict[int, dict[str, Any]] = {}
    for i, lab in enumerate(labels):
        m = _BAND.match(lab)
        if not m or i in used:
            continue
        low_side = m.group("side") in ("CI low", "CI lower", "lower")
        partners = {
            "CI low": "CI high",
            "CI high": "CI low",
            "CI lower": "CI upper",
            "CI upper": "CI lower",
            "lower": "upper",
            "upper": "lower",
        }
        want = f"{m.group('base')} {partners[m.group('side')]}".strip()
        for j, other in enumerate(labels):
            if j != i and j not in used and other == want:
                lo, hi = (i, j) if low_side else (j, i)
                if len(series[lo]["x"]) == len(series[hi]["x"]):
                    used.update((i, j))
                    bands[min(i, j)] = {"lo": lo, "hi": hi, "base": m.group("base")}
                break
    # the line a band belongs to: the series named <base>, else one with the same x values
    for b in bands.values():
        base = b["base"]
        owner = next((k for k, lab in enumerate(labels) if lab == base and k not in used), None)
        if owner is None:
            xs = list(series[b["lo"]]["x"])
            owner = next(
                (k for k in range(len(series)) if k not in used and list(series[k]["x"]) == xs),
                None,
            )
        b["owner"] = owner
    for i, s in enumerate(series):
        if i in bands:
            b = bands[i]
            owner = b["owner"]
            group = (
                _group_of(labels[owner], labels)
                if owner is not None
                else _group_of(b["base"], labels)
            )
            is_ci = "CI" in labels[b["lo"]]
            name = b["base"] if not is_ci or "CI" in b["base"] else f"{b['base']} CI".strip()
            if owner is not None:  # one legend entry with the line: "<line> (band: <name>)"
                name = "CI" if is_ci and b["base"] == labels[owner] else name
            items.append(
                {
                    "kind": "band",
                    "series": [series[b["lo"]], series[b["hi"]]],
                    "group": group,
                    "label": name,
                    "owner": None if owner is None else id(series[owner]),
                    "edges": not is_ci,
                }
            )
        elif i not in used:
            items.append(
                {
                    "kind": "line",
                    "series": [s],
                    "group": _group_of(labels[i], labels),
                    "label": labels[i],
                }
            )
    return items


def _colours(groups: list[str]) -> dict[str, str]:
    order = list(dict.fromkeys(groups))
    return {g: PALETTE[k % len(PALETTE)] for k, g in enumerate(order)}


def _split_style(style: str | None) -> tuple[str | None, str | None]:
    """(marker, linestyle) of a matplotlib format string without colour letters."""
    if not style:
        return None, None
    ls = next((x for x in ("--", "-.", ":", "-") if x in style), None)
    rest = style.replace(ls, "") if ls else style
    marker = rest[:1] if rest else None
    return marker, (ls if ls else ("None" if marker else None))


def _is_integer_axis(values: list[Any]) -> bool:
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return (
        bool(nums)
        and len(nums) == len(values)
        and all(math.isfinite(float(v)) and float(v).is_integer() for v in nums)
    )
