"""The model configuration of ``docs/model-spec.md`` (fields, defaults, JSON form)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from verify.errors import ValidationError
from verify.model.spec.ln_forms import DEFAULT_LN_FORM, LN_FORMS, LN_FORMULAS
from verify.validation import check_choice, check_int, check_real

POS_ENCODINGS = ("learned", "sinusoidal", "none")
EMBEDDINGS = ("add", "concat")
#: the fields of the contract's configuration (docs/model-spec.md): each changes the computed
#: function, so a parameter file must carry every one (:meth:`ModelConfig.from_json`); the
#: project's extensions (``final_norm``, ...) may be absent, which means the contract's meaning
CONTRACT_FIELDS = (
    "d_model", "n_layers", "n_heads", "d_ff", "ln_eps", "norm_first", "ln_affine", "eos",
    "pos_encoding", "embedding", "max_len",
)  # fmt: skip


def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(name, "a bool", value)
    return value


@dataclass(frozen=True)
class ModelConfig:
    """Configuration of the transformer (model-spec "Configuration"); validated, frozen.

    ``d_ff=None`` means ``4 * d_model``. ``ln_eps >= 0`` (0 allowed: then the layer-norm
    coefficient z = 1/sqrt(var) is unbounded and a constant layer-norm input is undefined).
    ``final_norm=None`` means the spec's layout: a final layer norm exactly when pre-LN; True or
    False is this project's extension of the spec (pre-LN without a final norm, as
    ``nn.TransformerEncoder`` builds it by default, or post-LN followed by one). A config whose
    ``final_norm`` is the spec's keeps the spec's JSON form (the field is left out).
    ``ln_form`` (an extension, ``verify.model.spec.ln_forms``): "torch", the spec's
    gamma (v - mean) / sqrt(var_biased + eps) + beta, or "annotated",
    a (v - mean) / (std_unbiased + eps) + b (research code; D >= 2); written to JSON only when
    it is not "torch".
    ``threshold`` (an extension too, default 0.0, the spec's step 7): the model's label is 1
    iff T(x) > threshold; written to JSON only when nonzero.
    """

    d_model: int = 16
    n_layers: int = 2
    n_heads: int = 2
    d_ff: int | None = None
    ln_eps: float = 0.0
    norm_first: bool = False
    ln_affine: bool = True
    eos: bool = True
    pos_encoding: str = "sinusoidal"
    embedding: str = "add"
    max_len: int = 64
    final_norm: bool | None = None
    ln_form: str = DEFAULT_LN_FORM
    threshold: float = 0.0

    def __post_init__(self) -> None:
        d = check_int("d_model", self.d_model, minimum=1)
        check_int("n_layers", self.n_layers, minimum=1)
        h = check_int("n_heads", self.n_heads, minimum=1)
        if d % h != 0:
            raise ValidationError(
                "n_heads", f"a divisor of d_model={d}", h, "d_model must be divisible by n_heads"
            )
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * d)
        check_int("d_ff", self.d_ff, minimum=1)
        eps = check_real("ln_eps", self.ln_eps, minimum=0.0)
        object.__setattr__(self, "ln_eps", eps + 0.0)  # -0.0 is 0.0: the same layer norm
        if self.final_norm is None:
            object.__setattr__(self, "final_norm", self.norm_first)
        for name in ("norm_first", "ln_affine", "eos", "final_norm"):
            _check_bool(name, getattr(self, name))
        check_choice("pos_encoding", self.pos_encoding, POS_ENCODINGS)
        check_choice("embedding", self.embedding, EMBEDDINGS)
        if self.embedding == "concat" and d % 2 != 0:
            raise ValidationError(
                "d_model", "an even number with embedding='concat'", d, "token and position D/2"
            )
        check_int("max_len", self.max_len, minimum=1)
        check_choice("ln_form", self.ln_form, LN_FORMS)
        if self.ln_form == "annotated" and d < 2:
            raise ValidationError(
                "d_model",
                "at least 2 with ln_form='annotated'",
                d,
                "the unbiased std divides by D - 1",
            )
        thr = check_real("threshold", self.threshold)
        object.__setattr__(self, "threshold", 0.0 if thr == 0.0 else thr)  # -0.0 is 0.0

    # ------------------------------------------------------------------ derived sizes
    @property
    def d_head(self) -> int:
        """Head width d_h = D / H."""
        return self.d_model // self.n_heads

    @property
    def d_embed(self) -> int:
        """Width of the token table and of the positional part: D, or D/2 with concat."""
        return self.d_model // 2 if self.embedding == "concat" else self.d_model

    @property
    def n_norms(self) -> int:
        """K, the layer norms on the path: 2L, plus 1 with the final norm (pre-LN's default),
        which comes last."""
        return 2 * self.n_layers + (1 if self.final_norm else 0)

    @property
    def spec_layout(self) -> bool:
        """True for the spec's two layouts (post-LN without, pre-LN with a final norm), the
        layouts the papers' statements and their constants are derived for."""
        return self.final_norm == self.norm_first

    @property
    def papers_model(self) -> bool:
        """True for the model the papers' statements are derived for: one of the spec's two
        layouts (:attr:`spec_layout`) with torch's layer norm (``ln_form`` "torch")."""
        return self.spec_layout and self.ln_form == "torch"

    def require_spec_layout(self, what: str) -> None:
        """Raise unless :attr:`papers_model`: ``what`` (a bound, a statement) is derived for the
        spec's two layouts with torch's layer norm only and would be wrong, not just loose, for
        the others."""
        if self.ln_form != "torch":
            raise ValidationError(
                "config",
                f"ln_form 'torch' ({LN_FORMULAS['torch']})",
                self.ln_form,
                f"{what} is derived for torch's layer norm only",
            )
        if not self.spec_layout:
            raise ValidationError(
                "config",
                "one of the spec's layouts (post-LN without a final norm, pre-LN with one)",
                f"{'pre' if self.norm_first else 'post'}-LN "
                f"{'with' if self.final_norm else 'without'} a final norm",
                f"{what} is derived for the spec's layouts only",
            )

    def seq_len(self, n_bits: int) -> int:
        """S = N + 1 with eos, else N."""
        n = check_int("N", n_bits, minimum=0 if self.eos else 1)
        return n + 1 if self.eos else n

    def check_n_bits(self, n_bits: int) -> int:
        """Validate the input length N for this config (learned positions: N <= max_len)."""
        n = check_int("N", n_bits, minimum=0 if self.eos else 1)
        if self.pos_encoding == "learned" and n > self.max_len:
            raise ValidationError(
                "N",
                f"an integer <= max_len={self.max_len} with learned positions",
                n,
                "the learned position table serves N <= max_len bits"
                + (" and eos" if self.eos else ""),
            )
        return n

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """The configuration as a plain dict (``d_ff`` resolved; ``final_norm`` only when it is
        not the spec's layout, ``ln_form`` only when it is not "torch" and ``threshold`` only when
        nonzero, so the spec's files keep their form)."""
        data = asdict(self)
        if self.spec_layout:
            del data["final_norm"]
        if self.ln_form == DEFAULT_LN_FORM:
            del data["ln_form"]
        if self.threshold == 0.0:
            del data["threshold"]
        return data

    def to_json(self) -> str:
        """JSON text stored in the ``config`` array of a parameter file."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, complete: bool = False) -> ModelConfig:
        """Build from a dict; unknown fields raise; missing fields take the spec's defaults,
        or with ``complete`` (a parameter file) every field of :data:`CONTRACT_FIELDS` is
        required (an absent extension field means the contract's meaning)."""
        if not isinstance(data, dict):
            raise ValidationError("config", "a JSON object", type(data).__name__)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValidationError("config", "only the fields " + ", ".join(sorted(known)), unknown)
        missing = [name for name in CONTRACT_FIELDS if name not in data] if complete else []
        if missing:
            raise ValidationError(
                f"config.{missing[0]}",
                "every field of the model contract in the file (each changes the function; no"
                " default is assumed)",
                "missing",
                "missing: " + ", ".join(missing),
            )
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> ModelConfig:
        """Inverse of :meth:`to_json`, for a parameter file: every contract field present
        (``from_dict(complete=True)``), each field once (a repeated key is refused, not the
        last one taken), and every number as written (a literal that float64 turns into 0
        or infinity, such as 1e-400, is refused)."""
        try:
            data = json.loads(
                text,
                object_pairs_hook=_object_without_repeats,
                parse_float=_float_as_written,
                parse_constant=_no_constant,
            )
        except (TypeError, json.JSONDecodeError) as exc:
            raise ValidationError("config", "a JSON object", str(text)[:80]) from exc
        return cls.from_dict(data, complete=True)


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (json would keep the last)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValidationError(
                f"config.{key}", "each field once", f"given twice: {out[key]!r}, then {value!r}"
            )
        out[key] = value
    return out


def _float_as_written(text: str) -> float:
    """A JSON number as float64, refusing one whose value float64 cannot hold: a nonzero
    literal that underflows to 0 (1e-400 would turn eps > 0 into eps = 0, the other regime)
    or one that overflows to infinity."""
    value = float(text)
    mantissa = text.lower().split("e")[0]
    if value == 0.0 and any(c in "123456789" for c in mantissa):
        raise ValidationError(
            "config", "numbers float64 holds", text, "it underflows to 0 in float64"
        )
    if math.isinf(value):
        raise ValidationError("config", "finite numbers", text, "it overflows float64")
    return value


def _no_constant(text: str) -> float:
    raise ValidationError("config", "finite numbers (JSON has no NaN or Infinity)", text)
