"""Tier ``float64_per_string``: T(x) of any batch of strings with componentwise float64 radii.
Orchestration (layer-0 tables, bundles, the call) and the driver kernel; the stages it calls are
in ``verify.model.stages``.
"""
