"""The transformer of ``shared/model-spec.md`` (see docs/architecture.md, "The model")."""

from verify.model.config import ModelConfig
from verify.model.forward import ForwardResult, forward
from verify.model.init import SCHEMES, init_params
from verify.model.params import Params, n_params, param_shapes

__all__ = [
    "SCHEMES",
    "ForwardResult",
    "ModelConfig",
    "Params",
    "forward",
    "init_params",
    "n_params",
    "param_shapes",
]
