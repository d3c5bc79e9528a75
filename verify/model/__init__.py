"""The transformer of ``docs/model-spec.md`` (see docs/architecture.md, "The model")."""

from verify.model.config import ModelConfig
from verify.model.enclosure import Enclosure, enclose, enclose_output
from verify.model.forward import ForwardResult, forward
from verify.model.init import SCHEMES, init_params
from verify.model.params import Params, n_params, param_shapes
from verify.model.reference import reference_forward, run_generic
from verify.model.truth_table import CertifiedTruthTable, truth_table

__all__ = [
    "SCHEMES",
    "CertifiedTruthTable",
    "Enclosure",
    "ForwardResult",
    "ModelConfig",
    "Params",
    "enclose",
    "enclose_output",
    "forward",
    "init_params",
    "n_params",
    "param_shapes",
    "reference_forward",
    "run_generic",
    "truth_table",
]
