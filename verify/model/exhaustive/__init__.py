"""Tier ``float64_exhaustive``: T(x) of all 2^N strings with one float64 radius per vector (scalar
in layer 0, a 2-norm from layer 1 on). Orchestration (tables, weight bounds) and the driver
kernel; the stages it calls are in ``verify.model.stages``.
"""
