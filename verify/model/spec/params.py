"""Parameters of the transformer: named arrays (PyTorch state_dict names), ``.npz`` I/O, and
the flat parameter vector theta in R^M (model-spec "Parameter files" and "The parameter vector").

theta is the concatenation, in the spec table's order, of every trainable array flattened in C
(row-major) order: ``token_embedding``, ``pos_embedding`` (learned positions only), then layer 0's
arrays (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias, linear1.weight,
linear1.bias, linear2.weight, linear2.bias, norm1.weight, norm1.bias, norm2.weight, norm2.bias),
then layer 1's, ..., then ``final_norm.weight``, ``final_norm.bias`` (pre-LN), ``readout.weight``,
``readout.bias``. Norm arrays exist only with ``ln_affine``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from verify.errors import ValidationError
from verify.model.spec.config import ModelConfig
from verify.validation import check_finite_array


def param_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Ordered mapping name -> shape of every parameter array of ``config`` (theta's order)."""
    d, e, f = config.d_model, config.d_embed, config.d_ff
    shapes: dict[str, tuple[int, ...]] = {"token_embedding": (3, e)}
    if config.pos_encoding == "learned":
        shapes["pos_embedding"] = (config.max_len + 1, e)
    for layer in range(config.n_layers):
        p = f"layers.{layer}."
        shapes[p + "self_attn.in_proj_weight"] = (3 * d, d)
        shapes[p + "self_attn.in_proj_bias"] = (3 * d,)
        shapes[p + "self_attn.out_proj.weight"] = (d, d)
        shapes[p + "self_attn.out_proj.bias"] = (d,)
        shapes[p + "linear1.weight"] = (f, d)
        shapes[p + "linear1.bias"] = (f,)
        shapes[p + "linear2.weight"] = (d, f)
        shapes[p + "linear2.bias"] = (d,)
        if config.ln_affine:
            for norm in ("norm1", "norm2"):
                shapes[p + norm + ".weight"] = (d,)
                shapes[p + norm + ".bias"] = (d,)
    if config.final_norm and config.ln_affine:
        shapes["final_norm.weight"] = (d,)
        shapes["final_norm.bias"] = (d,)
    shapes["readout.weight"] = (d,)
    shapes["readout.bias"] = ()
    return shapes


def _check_array(name: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
    """check_finite_array, keeping 0-d arrays 0-d (np.ascontiguousarray makes them 1-d)."""
    if shape == ():
        arr = np.asarray(value)
        if arr.shape != ():
            raise ValidationError(name, "shape () (a 0-d array)", arr.shape)
        return check_finite_array(name, arr.reshape(1))[0:1].reshape(())
    return check_finite_array(name, value, shape)


def n_params(config: ModelConfig) -> int:
    """M, the length of theta."""
    return int(sum(int(np.prod(s)) for s in param_shapes(config).values()))


class Params(Mapping[str, np.ndarray]):
    """The named float64 arrays of one model; validated against ``config`` (names, shapes,
    finiteness). Behaves as a read-only mapping name -> array (arrays are not copied on read;
    do not mutate them in place)."""

    def __init__(self, config: ModelConfig, arrays: Mapping[str, object]) -> None:
        if not isinstance(config, ModelConfig):
            raise ValidationError("config", "a ModelConfig", type(config).__name__)
        shapes = param_shapes(config)
        missing = [name for name in shapes if name not in arrays]
        if missing:
            name = missing[0]
            raise ValidationError(
                name, f"an array of shape {shapes[name]}", "missing", f"{len(missing)} missing"
            )
        extra = sorted(set(arrays) - set(shapes))
        if extra:
            raise ValidationError(
                "arrays", "only the arrays of this config (see model-spec)", extra
            )
        self.config = config
        self._arrays: dict[str, np.ndarray] = {
            name: _check_array(name, arrays[name], shape) for name, shape in shapes.items()
        }

    # Mapping interface
    def __getitem__(self, name: str) -> np.ndarray:
        return self._arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __repr__(self) -> str:
        return f"Params({self.config!r}, M={self.n_params})"

    @property
    def n_params(self) -> int:
        """M, the length of theta."""
        return int(sum(a.size for a in self._arrays.values()))

    def copy(self) -> Params:
        """A deep copy."""
        return Params(self.config, {k: v.copy() for k, v in self._arrays.items()})

    def with_arrays(self, updates: Mapping[str, object]) -> Params:
        """A new Params with the named arrays replaced (validated)."""
        arrays = dict(self._arrays)
        for name, value in updates.items():
            if name not in arrays:
                raise ValidationError(name, "the name of an array of this config", name)
            arrays[name] = value
        return Params(self.config, arrays)

    # theta
    def flatten(self) -> np.ndarray:
        """theta in R^M: every array in the spec's order, C-order flattened."""
        return np.concatenate([a.reshape(-1) for a in self._arrays.values()]).astype(np.float64)

    @classmethod
    def unflatten(cls, config: ModelConfig, theta: object) -> Params:
        """Inverse of :meth:`flatten`."""
        if not isinstance(config, ModelConfig):
            raise ValidationError("config", "a ModelConfig", type(config).__name__)
        shapes = param_shapes(config)
        m = sum(math.prod(s) for s in shapes.values())
        vec = check_finite_array("theta", theta)
        if vec.ndim != 1 or vec.shape[0] != m:
            raise ValidationError("theta", f"shape ({m},) for this config", vec.shape)
        vec = vec.copy()  # the arrays below are views of this copy: theta's checks hold for them
        arrays: dict[str, np.ndarray] = {}
        offset = 0
        for name, shape in shapes.items():
            size = math.prod(shape)
            arrays[name] = vec[offset : offset + size].reshape(shape)
            offset += size
        out = cls.__new__(cls)  # names, shapes, float64 and finiteness are checked already
        out.config, out._arrays = config, arrays
        return out

    # files
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the ``.npz`` file of the spec (0-d string ``config`` holding JSON + arrays)."""
        payload: dict[str, np.ndarray] = {"config": np.array(self.config.to_json())}
        payload.update(self._arrays)
        with open(path, "wb") as fh:  # exact path: np.savez would append ".npz" to a str
            np.savez(fh, **payload)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Params:
        """Read a ``.npz`` parameter file; missing/misshaped/non-finite arrays raise
        ValidationError naming the array and the expected shape."""
        from verify.model.spec.npz_file import read_npz

        contents = read_npz("path", path)
        if "config" not in contents:
            raise ValidationError("config", "a 0-d string array holding the JSON config", "missing")
        cfg_arr = contents.pop("config")
        if cfg_arr.shape != () or cfg_arr.dtype.kind not in "US":
            raise ValidationError(
                "config", "a 0-d string array", f"dtype {cfg_arr.dtype}, shape {cfg_arr.shape}"
            )
        text = cfg_arr.item()
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValidationError(
                    "config",
                    "JSON text in UTF-8",
                    f"{Path(path).name}: {exc.reason} at byte {exc.start}",
                ) from exc
        config = ModelConfig.from_json(text)
        return cls(config, contents)
