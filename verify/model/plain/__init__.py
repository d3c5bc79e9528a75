"""The plain (uncertified) float64 forward pass with its layer-norm diagnostics: the numpy pass
(the spec written for clarity) and the same pass as a Numba kernel.
"""
