"""Tier ``double_double``: T(x) with ~106-bit midpoints and one 2-norm radius per vector, for the
strings the float64 tiers leave open. Orchestration, the driver kernel, the double-double
arithmetic with its error bounds and the double-double stages.
"""
