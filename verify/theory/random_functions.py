"""Zero-sensitivity strings of a uniformly random Boolean function: the limit 1 - 1/e of
P[K_0 >= 1] and its finite-N rate (the control of the paper's random-init experiment)."""

from __future__ import annotations

import math

ONE_MINUS_INV_E = 1.0 - math.exp(-1.0)  # lim P[K_0 >= 1] for a uniform random f


def chen_stein_radius(n: int) -> float:
    """delta_N with |P[K_0 >= 1] - (1 - 1/e)| <= delta_N for a uniform random f on N bits.

    Chen-Stein (Arratia, Goldstein, Gordon 1989) for K_0 = sum_x I_x, I_x = [s(x) = 0],
    p_x = 2^-N, lambda = E K_0 = 1, dependency sets B_x = {y : d(x, y) <= 2} (I_x is
    independent of the I_y with d(x, y) >= 3: their neighbourhoods are disjoint), so b3 = 0,
    b1 = 2^N |B_x| 4^-N, b2 = 2^N (N + C(N,2)) 2 4^-N (two closed neighbourhoods at distance 1
    or 2 cover 2N points), and |P[K_0 = 0] - e^-1| <= (1 - e^-1)(b1 + b2)."""
    pairs = 1 + n + math.comb(n, 2)
    near = n + math.comb(n, 2)
    return (1.0 - math.exp(-1.0)) * (pairs + 2 * near) / 2.0**n  # = ONE_MINUS_INV_E


def biased_k0_mean(n: int, p: float) -> float:
    """E[K_0] for f(x) i.i.d. Bernoulli(p) over the 2^N strings: x is zero-sensitive iff x and
    its N neighbours share one value, so E[K_0] = 2^N (p^(N+1) + (1 - p)^(N+1)) (p = 1/2:
    E[K_0] = 1, the uniform random function). The bias-matched null of the random-init
    experiment: a transformer's function with P[f = 1] = p against a random function of the
    same bias."""
    return 2.0**n * (p ** (n + 1) + (1.0 - p) ** (n + 1))
