"""Numba stage kernels shared by the float64 tiers (``verify.model.per_string``,
``verify.model.exhaustive``), one module per stage; each tier's driver is in its own package.

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
- ``register_sums``: per-string sums in vector registers (layer-norm moments, column sums).
- ``stage_l2``: float64 stages with one 2-norm radius per vector (the exhaustive kernel's layers
  1..L-1).
- ``l2_bounds``: the float64 bounds both kinds of 2-norm stages use (``l2_from_squares``,
  ``lipschitz_from_sums``); the double-double ones (``verify.model.double_double.dd_l2``) too.

The drivers' parallel loops run a serial kernel per chunk (``certified_block``,
``exhaustive_chunk``): a prange over a whole driver body compiled ~3x slower. Nothing is
imported here, so importing one stage does not load (or compile) the others. All kernels follow
the policy of ``verify._numba``. The rounding model is ``verify.model.arithmetic.rounding``.
"""
