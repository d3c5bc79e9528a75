"""The explicit constants and bounds of the statements, as plain functions (no checks here):
parameter norms, the eps > 0 constants, the small-ball and tail bounds, cube covering, the
Thm 4.5 exponent and its Borel-Cantelli series."""
