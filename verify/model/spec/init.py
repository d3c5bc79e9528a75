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
import sys
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

import numpy as np

from verify.errors import ValidationError
from verify.model.spec.config import ModelConfig
from verify.model.spec.params import Params, param_shapes
from verify.validation import check_choice, check_int, check_real

SCHEMES = ("uniform", "gaussian", "xavier_uniform", "xavier_normal")


def _is_matrix(name: str) -> bool:
    return (name.endswith("weight") and "norm" not in name) or name.endswith("embedding")


# the largest scale whose uniform range [-scale, scale] has a finite width (2 scale <= max)
MAX_SCALE = sys.float_info.max / 2


def as_config(config: ModelConfig | Mapping[str, Any]) -> ModelConfig:
    """``config`` itself, or the ModelConfig of a dict of its fields (e.g. ``cfg.to_dict()``);
    anything else is a ValidationError saying what is expected."""
    if isinstance(config, ModelConfig):
        return config
    if isinstance(config, Mapping):
        known = {f.name for f in fields(ModelConfig)}
        unknown = sorted(str(k) for k in config if k not in known)
        if unknown:
            raise ValidationError(
                "config", "ModelConfig fields: " + ", ".join(sorted(known)), unknown
            )
        return ModelConfig(**config)
    raise ValidationError("config", "a ModelConfig or a dict of its fields", type(config).__name__)


def init_params(
    config: ModelConfig | Mapping[str, Any], scheme: str, seed: int, scale: float = 1.0
) -> Params:
    """Draw parameters for ``config`` (a ModelConfig, or a dict of its fields) with ``scheme``
    (see module doc) from ``seed``; ``0 < scale <= MAX_SCALE``."""
    config = as_config(config)
    check_choice("scheme", scheme, SCHEMES)
    seed = check_int("seed", seed, minimum=0)
    scale = check_real("scale", scale, strictly_positive=True)
    if scale > MAX_SCALE:
        raise ValidationError(
            "scale", f"a real number <= {MAX_SCALE:.4g} (2 scale must be finite)", scale
        )
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
