"""The transformer of ``docs/model-spec.md`` (see docs/architecture.md, "The model")."""

from verify.model.certified.truth_table import CertifiedTruthTable, truth_table
from verify.model.generic.enclosure import Enclosure, enclose, enclose_output
from verify.model.generic.reference import reference_forward, run_generic
from verify.model.plain.forward import ForwardResult, forward
from verify.model.spec.config import ModelConfig
from verify.model.spec.init import SCHEMES, init_params
from verify.model.spec.params import Params, n_params, param_shapes

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
