"""Random initialisation of the transformer's parameters (the four schemes of the experiments).

All draws come from ``numpy.random.default_rng(seed)``, array by array in theta's order.

- ``"uniform"``: every entry of theta i.i.d. uniform on [-scale, scale] (the box
  Theta = [-B, B]^M with B = scale; layer-norm gains and biases and learned positions included).
- ``"gaussian"``: every entry i.i.d. N(0, scale^2).
- ``"xavier_uniform"`` / ``"xavier_normal"``: as ``torch.nn.init.xavier_*_(w, gain=scale)`` on every
  matrix, with fan_in = columns and fan_out = rows of the stored array (in_proj_weight as one
  (3D, D) matrix, as torch does; ``readout.weight`` as a (1, D) matrix; the token and position
  tables as (rows, width) matrices): uniform on [-a, a] with a = scale sqrt(6/(fan_in+fan_out)),
  or N(0, scale^2 * 2/(fan_in+fan_out)). Biases are 0, layer-norm gains 1 and biases 0 (torch's
  defaults for MultiheadAttention and LayerNorm).
"""

from __future__ import annotations

import math

import numpy as np

from verify.model.config import ModelConfig
from verify.model.params import Params, param_shapes
from verify.validation import check_choice, check_int, check_real

SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")


def _is_matrix(name: str) -> bool:
    return (name.endswith("weight") and "norm" not in name) or name.endswith("embedding")


def init_params(config: ModelConfig, scheme: str, seed: int, scale: float = 1.0) -> Params:
    """Draw parameters for ``config`` with ``scheme`` (see module doc) from ``seed``."""
    check_choice("scheme", scheme, SCHEMES)
    seed = check_int("seed", seed, minimum=0)
    scale = check_real("scale", scale, strictly_positive=True)
    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for name, shape in param_shapes(config).items():
        if scheme == "uniform":
            arrays[name] = rng.uniform(-scale, scale, size=shape)
        elif scheme == "gaussian":
            arrays[name] = rng.normal(0.0, scale, size=shape)
        elif _is_matrix(name):
            rows, cols = (1, shape[0]) if len(shape) == 1 else shape
            fan_sum = rows + cols
            if scheme == "xavier_uniform":
                a = scale * math.sqrt(6.0 / fan_sum)
                arrays[name] = rng.uniform(-a, a, size=shape)
            else:
                arrays[name] = rng.normal(0.0, scale * math.sqrt(2.0 / fan_sum), size=shape)
        elif "norm" in name and name.endswith("weight"):
            arrays[name] = np.ones(shape)
        else:
            arrays[name] = np.zeros(shape)
        arrays[name] = np.asarray(arrays[name], dtype=np.float64)
    return Params(config, arrays)
