"""Sec 5 declared families (the toolkit's, not the paper's; id ours): every registered Boolean
family's declared facts agree with the exhaustive computation, and the families with no
zero-sensitivity string are flagged by Cor 4.6's criterion.

Families come from verify.boolean.families, from installed packages (entry-point group
"verify.families") and from ``--import MODULE``; each may declare a closed-form profile and its
minimum sensitivity (``register_family(name, closed_form=..., min_sensitivity=...)``).
"""

from __future__ import annotations

import numpy as np

from verify.boolean import family_names, get_family, make_family, sensitivity_profile
from verify.boolean.closed_forms import closed_form_profile, has_closed_form
from verify.errors import ValidationError
from verify.registry import (
    CheckContext,
    Counterexample,
    Outcome,
    Policy,
    Row,
    Sizes,
    define_statement,
)

SEC_5_DECLARED_FAMILIES = define_statement(
    id="Sec 5 declared families",
    title="Declared facts of every registered family hold; K_0 = 0 families flagged by Cor 4.6",
    statement=(
        "For every registered family $f$ and tested $N$: its declared closed-form profile equals "
        "the exhaustive $K_0,\\dots,K_N$, and its declared minimum sensitivity equals "
        "$\\min_x s(x)$. A family with $K_0(N) = 0$ at every tested $N$ meets the premise of "
        "Cor 4.6 ($K_0(N) < N^{(D-1)/(2L)-5}$), so, like PARITY in Cor 5.1, it is almost surely "
        "not recognisable at $\\epsilon = 0$ for large $N$ if that persists. (The toolkit's "
        "statement, generalising Cor 5.1-5.4 to every family.)"
    ),
    paper="(the toolkit's; generalises Cor 5.1-5.4 of arXiv 2606.08768)",
    confidence="[inferred]",
    bound_formula=r"$K_n^{declared}(N) = K_n(N)$, $s_{min}^{declared}(N) = \min_x s(x)$",
    derivation="docs/extending.md#1-a-boolean-family-register_family",
)

SIZES = Sizes(quick=range(1, 11), default=range(1, 15), full=range(1, 19))


def _profile_or_none(name: str, n: int, errors: dict[str, str]) -> np.ndarray | None:
    """The exhaustive profile of the family's default member on n bits; None where the family
    is not defined at this N (it raises ValidationError, e.g. inner_product at odd N) or its
    builder fails (recorded in ``errors``: a defect of that family, reported, not hidden)."""
    try:
        return sensitivity_profile(make_family(name, n))
    except ValidationError:
        return None
    except Exception as exc:  # a family from another package may raise anything
        errors.setdefault(name, f"N={n}: {type(exc).__name__}: {exc}")
        return None


@SEC_5_DECLARED_FAMILIES.check("declared facts against exhaustive profiles", policy=Policy.STRICT)
def declared_facts(ctx: CheckContext) -> Outcome:
    """Closed form and minimum sensitivity, where declared, against the exhaustive profile of
    each family's default member; families with K_0 = 0 at every tested N listed."""
    rows: list[Row] = []
    flagged, undefined, errors = [], {}, {}
    for name in family_names():
        fam = get_family(name)
        k0_all_zero, defined = True, 0
        for n in ctx.size(SIZES):
            profile = _profile_or_none(name, n, errors)
            if profile is None:
                undefined.setdefault(name, []).append(n)
                continue
            defined += 1
            k0_all_zero &= bool(profile[0] == 0)
            if has_closed_form(name):
                target = closed_form_profile(name, n)
                rows.append(
                    Row(
                        f"{name}(N={n}): levels where closed form != exhaustive",
                        int(np.count_nonzero(target != profile)),
                        0,
                        "==",
                    )
                )
            if fam.min_sensitivity is not None:
                declared = int(fam.min_sensitivity(n, **fam.defaults))
                measured = int(np.flatnonzero(profile)[0])
                rows.append(Row(f"{name}(N={n}): min_x s(x) vs declared", measured, declared, "=="))
        if defined and k0_all_zero:
            flagged.append(name)
    sizes = ctx.size(SIZES)
    return Outcome(
        rows=rows,
        arithmetic="exact integer (exhaustive over 2^N strings; sympy closed forms)",
        parameters={
            "N": [min(sizes), max(sizes)],
            "families": family_names(),
            "flagged_by_cor_4_6": flagged,
            "undefined_at": undefined,
            "builder_errors": errors,
        },
        notes=[
            "no zero-sensitivity string at any tested N (Cor 4.6's premise; unlearnable at"
            " eps = 0 for large N if it persists): " + (", ".join(flagged) or "none"),
            "each family's default member is profiled; families come from the built-ins,"
            " installed packages (entry points 'verify.families') and --import",
            *[f"family {k} could not be built at {v}" for k, v in errors.items()],
        ],
        counterexample=Counterexample(setting={"N": list(sizes), "families": family_names()}),
    )
