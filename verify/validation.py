"""Small validators shared by every public entry point (they raise ValidationError)."""

from __future__ import annotations

import numbers

import numpy as np

from verify.errors import ValidationError


def check_int(
    name: str,
    value: object,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    hint: str = "",
) -> int:
    """Return ``value`` as an int, or raise naming ``name`` if it is not an integer in range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValidationError(name, "an integer", value, hint)
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValidationError(name, f"an integer >= {minimum}", value, hint)
    if maximum is not None and value > maximum:
        raise ValidationError(name, f"an integer <= {maximum}", value, hint)
    return value


def check_real(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    strictly_positive: bool = False,
    hint: str = "",
) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(name, "a real number", value, hint)
    value = float(value)
    if not np.isfinite(value):
        raise ValidationError(name, "a finite real number", value, hint)
    if strictly_positive and value <= 0:
        raise ValidationError(name, "a real number > 0", value, hint)
    if minimum is not None and value < minimum:
        raise ValidationError(name, f"a real number >= {minimum}", value, hint)
    return value


_NOT_REAL = {"c": "complex", "U": "text", "S": "bytes", "V": "records"}


def check_finite_array(
    name: str, array: object, shape: tuple[int, ...] | None = None, dtype: type = np.float64
) -> np.ndarray:
    """Return ``array`` as a C-contiguous array of ``dtype``; raise on wrong shape, NaN or inf,
    and on an array of complex numbers or of text (converting would drop the imaginary part or
    parse the text: a value that is not the given one)."""
    kind = getattr(getattr(array, "dtype", None), "kind", None)
    if kind in _NOT_REAL and np.dtype(dtype).kind in "fiu":
        raise ValidationError(
            name, f"an array of real numbers ({np.dtype(dtype).name})", str(array.dtype)
        )
    try:
        out = np.ascontiguousarray(array, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValidationError(name, f"an array of {np.dtype(dtype).name}", type(array)) from exc
    if shape is not None and out.shape != tuple(shape):
        raise ValidationError(name, f"shape {tuple(shape)}", out.shape)
    if out.dtype.kind == "f" and not np.isfinite(out).all():  # (the method: np.all's wrapper
        # costs a microsecond, ~30% of validating a model's arrays, which runs ~10^5 times a report)
        bad = int(np.size(out) - np.count_nonzero(np.isfinite(out)))
        raise ValidationError(name, "finite values (no NaN or inf)", f"{bad} non-finite entries")
    return out


def check_choice(name: str, value: object, choices: tuple[str, ...] | list[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise listing them."""
    if value not in choices:
        raise ValidationError(name, "one of " + ", ".join(map(str, choices)), value)
    return str(value)
