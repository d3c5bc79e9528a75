"""Tier ``subcube``: one rigorous float64 bound of T over a sub-cube of strings, in affine
arithmetic over one noise symbol per free bit (its arithmetic and vertex rules are here).
"""
