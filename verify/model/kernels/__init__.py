"""Numba kernels of the certified float64 forward pass, one module per stage.

- ``bundles``: the named argument bundles (NamedTuples of arrays) and their Numba types, the
  column layouts of the bound arrays, the exhaustive kernel's block size.
- ``dense``: matrix-vector products, residual additions, relu.
- ``layer_norm``: layer norm (moments, the 1/sqrt radius, both radius rules).
- ``softmax``: the rigorous softmax.
- ``attention``: attention at one query position.
- ``position``: the rest of a layer at one position (residuals, norms, MLP).
- ``tables``: layer 0 from its (token, position) tables.
- ``simd``: intrinsics that emit LLVM IR with 8-wide vectors: the register-blocked
  matrix-vector product and layer 0's MLP from the tables (exhaustive kernel).
- ``labels``: labels and tiers from float64 midpoints and radii, in parallel.
- ``per_string``: the driver for any batch of strings, componentwise radii (``certified_T``).
  The drivers' parallel loops run a serial kernel per chunk (``certified_block``,
  ``exhaustive_chunk``): a prange over a whole driver body compiled ~3x slower.
- ``exhaustive``: the driver for all 2^N strings, scalar radii (``exhaustive_T``).
- ``dd``, ``dd_dense``, ``dd_norm``: double-double arithmetic with its error bounds, and the
  stages built on it (componentwise rounding bounds).
- ``dd_l2``: 2-norm radii (layer-norm Lipschitz constant, attention, matrix-vector radius).
- ``l2_bounds``: the float64 bounds both kinds of 2-norm stages use (``l2_from_squares``,
  ``lipschitz_from_sums``).
- ``per_string_dd``: the double-double driver for any batch of strings (``certified_T_dd``).
- ``diagnostics``: the plain float64 pass with every layer norm's input variance and the
  readout vector, not certified (``forward_diagnostics``; ``forward(..., engine="numba")``).

The drivers are not imported here, so importing one does not load (or compile) the others.
All kernels follow the policy of ``verify._numba``. The rounding model is
``verify.model.rounding``.
"""
