"""check-model's one pass over the cube: the certified table and the diagnostics of every string
from the same kernel calls (issue 40).

``check-model`` needs, besides the certified labels, float64 estimates for every string: T, the
readout vector y^L_r, and the variance of every layer norm's input at every position (the
blowups beta and beta_hr, Lemma 2.9 on every flip). The exhaustive kernel
(``verify.model.exhaustive.exhaustive_kernel``) already computes layer 0 at every position,
and every layer but the last at every position, with radii; with its diagnostics on
(``verify.model.stages.bundles.Diagnostics``) it also runs the last layer (and pre-LN's final
norm) at the other positions, midpoints only, and writes those variances and the readout
vector. So one pass over the cube gives:

- the certified table: T and its radius at the readout position are computed exactly as
  without the diagnostics (the same operations on the same values, bit for bit; tested), then
  the tiers of ``truth_table`` run on them unchanged (``Float64Pass.adopt``);
- the diagnostics: the float64 midpoints of that pass (not certified: estimates, as those of
  the plain pass ``verify.model.certified.cube.diagnostics_pass`` they replace). They agree with the
  plain pass (``forward``) to rounding, not bit for bit: the kernel sums and groups
  differently (tests/test_onepass.py states the tolerances). The blowups are computed from the
  variances by ``verify.model.plain.forward.blowup_diagnostics``, the code of the plain pass.

Memory stays bounded: ``CHUNK`` strings per kernel call, each chunk's variances (K x S per
string) reduced to beta and beta_hr at once; T, the radius and y_r are kept for every string
(as the two passes kept them).

Where the exhaustive kernel does not apply (parameter balls: only the MidRad pass and arb take
them), :func:`table_and_diagnostics` runs the two passes as before (``truth_table``, then
``diagnostics_pass``). Both layer-norm forms run the one pass (the kernel's variance is the
population variance for both; ``blowup_diagnostics`` applies the form).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from verify.model.certified.truth_table import CertifiedTruthTable, truth_table, truth_tables
from verify.model.plain.forward import ForwardResult, blowup_diagnostics, hr_positions_mask
from verify.model.spec.params import Params

CHUNK = 1 << 15  # strings per kernel call (a multiple of 64: whole blocks)


def fused(params: Params, radius: Mapping[str, np.ndarray] | None = None) -> bool:
    """Whether :func:`table_and_diagnostics` runs one pass: the exhaustive kernel computes the
    stored parameters; balls (a radius above 0) go to the MidRad pass."""
    return not (radius and any(np.any(np.asarray(r) > 0) for r in radius.values()))


def table_and_diagnostics(
    params: Params,
    n: int,
    margin: float = 0.0,
    *,
    radius: Mapping[str, np.ndarray] | None = None,
    chunk: int = CHUNK,
) -> tuple[CertifiedTruthTable, ForwardResult]:
    """``truth_table(params, n, margin, radius=radius)`` (the same table) and the diagnostics
    of every string (T, y_readout, beta, beta_hr; var, z, tau not kept), from one pass when
    :func:`fused` (module doc), else from the two passes."""
    from verify.errors import ValidationError

    cfg = params.config
    cfg.check_n_bits(n)
    if chunk < 64 or chunk % 64:
        raise ValidationError("chunk", "a positive multiple of 64 (the kernel's blocks)", chunk)
    if not fused(params, radius):
        from verify.model.certified.cube import diagnostics_pass

        table = truth_table(params, n, margin, radius=radius)
        return table, diagnostics_pass(params, n)
    from verify.model.certified.float64_pass import Float64Pass
    from verify.model.exhaustive.exhaustive_pass import (
        diagnostics_arrays,
        exhaustive_T,
        prepare_exhaustive,
    )

    size = 1 << n
    ev = Float64Pass(params, n)
    tables = prepare_exhaustive(params, n, ev.weights, all_positions=True)
    step = min(size, chunk)
    dg = diagnostics_arrays(tables, cfg.n_norms, step)
    mask = hr_positions_mask(params, cfg.seq_len(n))
    t, rad = np.empty(size), np.empty(size)
    y_r = np.empty((size, cfg.d_model))
    beta, beta_hr = np.empty(size), np.empty(size)
    for lo in range(0, size, step):
        hi = min(size, lo + step)
        part = dg._replace(var=dg.var[: hi - lo], y_readout=y_r[lo:hi])
        t[lo:hi], rad[lo:hi] = exhaustive_T(
            params, n, tables=tables, start=lo, stop=hi, diagnostics=part
        )
        _, _, beta[lo:hi], beta_hr[lo:hi] = blowup_diagnostics(
            part.var, cfg.ln_eps, cfg.d_model, mask, cfg.ln_form
        )
    ev.adopt(tables, 0, size, t, rad)
    table = truth_tables(params, n, (margin,), passes=ev)[0]
    return table, ForwardResult(T=t, y_readout=y_r, beta=beta, beta_hr=beta_hr)
