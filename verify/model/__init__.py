"""The transformer of ``docs/model-spec.md`` (see docs/architecture.md, "The model").

One package per kind of code, from the bottom: ``spec`` (what the model is), ``plain`` (the
uncertified float64 pass), ``arithmetic`` (rounding model, contexts, matrix norms), ``stages``
(the Numba stages the float64 tiers share), ``generic`` (the spec's pass in any context; the arb
tier), the tiers ``per_string``, ``subcube``, ``double_double``, ``exhaustive``, and
``certified`` (truth tables over the tiers). docs/architecture.md, "The tiers: modules, rules,
references, tests", maps each tier to its rules, references and tests. The public names are
re-exported here.
"""

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
