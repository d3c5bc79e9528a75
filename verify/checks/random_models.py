"""Random models, strings and bit flips for the eps > 0 checks (Lemma 2.9, 3.1, 3.2, Cor 3.3).

Every draw takes its generator (or the check's seed) explicitly, and the order of the draws is
part of each check's result: reordering them changes the sampled models.
"""

from __future__ import annotations

import numpy as np

from verify.model import SCHEMES, ModelConfig, Params, init_params
from verify.registry import CheckContext, Sizes

__all__ = [
    "EPS_CHOICES",
    "MODELS_PER_SCHEME",
    "SWEEP_TOP_N",
    "flips",
    "length_sweep_model",
    "random_config",
    "random_models",
    "sweep_lengths",
]

# layer-norm epsilons of the random configurations and of the adversarial search
EPS_CHOICES = (1.0, 0.1, 1e-2, 1e-3, 1e-5)
# random models drawn per init scheme, by budget
MODELS_PER_SCHEME = Sizes(quick=6, default=25, full=100)
# the largest N of a length sweep, by budget
SWEEP_TOP_N = Sizes(quick=128, default=512, full=4096)


def random_config(
    rng: np.random.Generator, eps_choices: tuple[float, ...] = EPS_CHOICES
) -> ModelConfig:
    """A small random configuration covering every spec option."""
    d = int(rng.choice([4, 8]))
    return ModelConfig(
        d_model=d,
        n_layers=int(rng.integers(1, 3)),
        n_heads=int(rng.choice([1, 2])),
        d_ff=int(rng.choice([d, 2 * d])),
        ln_eps=float(rng.choice(eps_choices)),
        norm_first=bool(rng.integers(2)),
        ln_affine=bool(rng.integers(2)),
        eos=bool(rng.integers(2)),
        pos_encoding=str(rng.choice(["none", "sinusoidal", "learned"])),
        embedding=str(rng.choice(["add", "concat"])),
        max_len=16,
    )


def random_models(
    ctx: CheckContext, per_scheme: int, eps_choices: tuple[float, ...] = EPS_CHOICES
) -> list[tuple[str, Params, float]]:
    """(scheme, params, init scale) for ``per_scheme`` random models of every init scheme,
    drawn from ``numpy.random.default_rng(ctx.seed)``."""
    rng = np.random.default_rng(ctx.seed)
    out = []
    for scheme in SCHEMES:
        for _ in range(per_scheme):
            cfg = random_config(rng, eps_choices)
            scale = float(10.0 ** rng.uniform(-1.5, 0.5))
            out.append((scheme, init_params(cfg, scheme, int(rng.integers(2**31)), scale), scale))
    return out


def flips(
    rng: np.random.Generator, n_bits: int, n_strings: int, include_last: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, x^n, n): random strings and one flipped bit each (the last bit for the first)."""
    x = rng.integers(0, 2, (n_strings, n_bits), dtype=np.uint8)
    n = rng.integers(0, n_bits, n_strings)
    if include_last:
        n[0] = n_bits - 1
    xn = x.copy()
    xn[np.arange(n_strings), n] ^= 1
    return x, xn, n


def length_sweep_model() -> Params:
    """The fixed model of the length sweeps: D = 8, L = 2, H = 2, eps = 1e-2, xavier_uniform
    (seed 7, scale 1)."""
    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=1e-2)
    return init_params(cfg, "xavier_uniform", 7, 1.0)


def sweep_lengths(ctx: CheckContext) -> list[int]:
    """N = 8, 16, ..., up to the budget's :data:`SWEEP_TOP_N`."""
    top = ctx.size(SWEEP_TOP_N)
    return [n for n in (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096) if n <= top]
