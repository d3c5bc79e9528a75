"""The rigorous arithmetic the tiers share: the float64 rounding model, the arithmetic contexts
(float64, midpoint-radius MidRad, mpmath, arb), the sinusoidal table as arb balls and rigorous
upper bounds of matrix norms.
"""
