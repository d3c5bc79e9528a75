"""Constructions for the 2-norm radius tests of issue 41 (``tests/test_radius_l2_dd.py``,
``tests/test_radius_l2_exhaustive.py``): models where each term of the double-double tier's and
the exhaustive kernel's 2-norm rules weighs, and the assertion kernel >= reference.

``construct``: layer-norm gains that differ per norm and per coordinate (30 and 0.03 both ways
round on the post-LN path; 1.5 and 0.03 pre-LN, where norm1's gain squares into the scores; the
final norm's ~3), out_proj dominant (x10, the query blocks x0.3), the FFN dominant (W_1 x20),
value blocks dominant (x4, queries x0.5), large key biases (x30), random gains in [-3, 3] and
N(0, 1) biases; post-LN and pre-LN with a final norm; D = 8, H = 2, d_ff = 16, learned
positions, gaussian weights of scale 0.7.
"""

from __future__ import annotations

import _l2_reference as ref
import numpy as np

from verify.model import ModelConfig, Params, init_params
from verify.model.stages.bundles import BS

CONSTRUCTIONS = (
    "gains_30_003", "gains_003_30", "out_proj", "ffn_w1", "values", "key_bias", "random",
)  # fmt: skip


def construct(name: str, norm_first: bool, eps: float, n_layers: int = 2, seed: int = 0) -> Params:
    cfg = ModelConfig(
        d_model=8, n_layers=n_layers, n_heads=2, d_ff=16, norm_first=norm_first, ln_eps=eps,
        final_norm=True if norm_first else None, max_len=8, pos_encoding="learned",
    )  # fmt: skip
    p = init_params(cfg, "gaussian", seed=seed, scale=0.7)
    rng = np.random.default_rng(seed + 100)
    d = cfg.d_model
    arrays: dict[str, np.ndarray] = {}
    for layer in range(n_layers):
        pre = f"layers.{layer}."
        w_in = p[pre + "self_attn.in_proj_weight"].copy()
        b_in = p[pre + "self_attn.in_proj_bias"].copy()
        per_coord = rng.uniform(0.5, 1.5, size=d) * np.where(rng.random(d) < 0.5, -1.0, 1.0)
        if name in ("gains_30_003", "gains_003_30"):
            big = 1.5 if norm_first else 30.0  # pre-LN: norm1's gain squares into the scores
            g1, g2 = (big, 0.03) if name == "gains_30_003" else (0.03, 30.0)
            arrays[pre + "norm1.weight"] = g1 * per_coord
            arrays[pre + "norm2.weight"] = g2 * per_coord[::-1]
        elif name == "out_proj":
            arrays[pre + "self_attn.out_proj.weight"] = 10.0 * p[pre + "self_attn.out_proj.weight"]
            w_in[:d] *= 0.3
        elif name == "ffn_w1":
            arrays[pre + "linear1.weight"] = 20.0 * p[pre + "linear1.weight"]
        elif name == "values":
            w_in[2 * d :] *= 4.0
            w_in[:d] *= 0.5
        elif name == "key_bias":
            b_in[d : 2 * d] *= 30.0
        elif name == "random":
            for nm in ("norm1", "norm2"):
                arrays[pre + nm + ".weight"] = rng.uniform(-3, 3, size=d)
                arrays[pre + nm + ".bias"] = rng.normal(size=d)
        arrays[pre + "self_attn.in_proj_weight"] = w_in
        arrays[pre + "self_attn.in_proj_bias"] = b_in
    if cfg.final_norm:
        arrays["final_norm.weight"] = 3.0 * rng.uniform(0.5, 1.5, size=d)
    return p.with_arrays(arrays)


def settings() -> list[tuple[str, bool, float]]:
    return [(c, nf, eps) for c in CONSTRUCTIONS for nf in (False, True) for eps in (0.0, 1e-5)]


def assert_at_least(
    kernel: np.ndarray, reference: np.ndarray, what: str, min_finite: float = 1.0
) -> None:
    """kernel >= reference (1 - REL) everywhere (an infinite kernel radius is >= anything; NaN
    fails), finite on at least min_finite of the entries."""
    finite = np.isfinite(kernel)
    ratio = kernel[finite] / reference[finite]
    print(f"{what}: kernel / reference - 1 min {ratio.min() - 1:.2e} max {ratio.max() - 1:.2e}"
          f" ({finite.sum()} of {finite.size} finite)")  # fmt: skip
    assert finite.mean() >= min_finite and np.all(reference > 0), (kernel, reference)
    assert np.all(kernel >= reference * (1 - ref.REL)), (what, kernel / reference)


def ln_case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(v, gain, bias): BS layer-norm inputs around 5, gains ~30 of both signs per coordinate."""
    rng = np.random.default_rng(seed)
    d = 8
    v = rng.normal(size=(d, BS)) + 5.0
    gain = 30.0 * rng.uniform(0.5, 1.5, size=d) * np.where(rng.random(d) < 0.5, -1, 1)
    return v, gain, rng.normal(size=d)
