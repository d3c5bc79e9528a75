"""Overview figures of the report that belong to no single statement.

- Exact sensitivity profiles K_n / 2^N of every registered Boolean family (default
  parameters) at one N: where each family's mass sits (K_0: zero-sensitivity strings).
"""

from __future__ import annotations

from verify.registry import Budget, CheckContext, FigureData


def family_profiles_figure(n: int) -> tuple[FigureData, list[str]]:
    """Profiles of all registered families at ``n`` bits (exact), and notes on the families
    that cannot be built at ``n`` (e.g. a family needing an even length)."""
    from verify.boolean import family_names, make_family, sensitivity_profile

    series, notes = [], []
    for name in family_names():
        try:
            profile = sensitivity_profile(make_family(name, n))
        except Exception as exc:  # reported next to the figure
            notes.append(f"{name}: not drawn at N={n} ({type(exc).__name__}: {exc})")
            continue
        series.append(
            {
                "label": name,
                "x": list(range(n + 1)),
                "y": [float(k) / 2**n for k in profile],
            }
        )
    fig = FigureData(
        name="overview_family_profiles",
        title=f"Exact sensitivity profiles K_n / 2^N of the registered families, N = {n}",
        kind="heatmap",
        data={
            "series": series,
            "xlabel": "sensitivity n",
            "ylabel": "K_n / 2^N (log colour scale; white: 0)",
            "logy": True,
        },
    )
    return fig, notes


def overview_figures(budget: Budget) -> tuple[list[FigureData], list[str]]:
    """The overview figures for a budget, and notes about them."""
    n = CheckContext(budget=budget).pick(quick=10, default=12, full=16)
    fig, notes = family_profiles_figure(n)
    return [fig], notes
