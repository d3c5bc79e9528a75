"""The transformer of model-spec written once against an arithmetic context
(``verify.model.arithmetic.contexts``), and the high-precision mpmath reference pass built on it.

``run_generic(ctx, params, bits)`` evaluates the spec's forward pass with the context's
numbers: float64, rigorous float64 midpoint-radius, mpmath at a chosen precision, or arb balls
(parameters optionally balls). ``reference_forward(params, bits, dps)`` is the mpmath pass.
The softmax subtracts a float64 constant (the row maximum of the score midpoints), an exact
identity of softmax that keeps exp in range.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify.model.arithmetic.contexts import MpmathContext
from verify.model.plain.forward import check_bits
from verify.model.spec.params import Params, param_shapes
from verify.validation import check_int


@dataclass
class GenericResult:
    """Outputs of :func:`run_generic` in the context's number type.

    ``T`` (B,); ``var`` a list over the K layer norms of (B, S_k) arrays of input variances,
    S_k = S, or 1 (the readout position) for the norms computed only there with
    ``readout_only``; ``y_readout`` (B, D).
    """

    T: Any
    var: list[Any]
    y_readout: Any


def _radius_arrays(
    params: Params, radius: float | Mapping[str, object] | np.ndarray | None
) -> dict[str, Any]:
    """Normalise a parameter radius: None, a scalar (every entry), a dict name -> radius
    (missing names: 0), or a flat (M,) vector in theta's order."""
    names = list(param_shapes(params.config))
    if radius is None:
        return dict.fromkeys(names)
    if isinstance(radius, Mapping):
        out: dict[str, Any] = dict.fromkeys(names)
        for name, r in radius.items():
            if name not in out:
                from verify.errors import ValidationError

                raise ValidationError("radius", "names of parameter arrays", name)
            out[name] = np.broadcast_to(np.asarray(r, dtype=np.float64), params[name].shape)
        return out
    arr = np.asarray(radius, dtype=np.float64)
    if arr.ndim == 0:
        return {name: np.full(params[name].shape, float(arr)) for name in names}
    return dict(Params.unflatten(params.config, arr))


def _check_radius(rad: dict[str, Any]) -> None:
    from verify.errors import ValidationError

    for name, r in rad.items():
        if r is not None and (not np.all(np.isfinite(r)) or np.any(np.asarray(r) < 0)):
            raise ValidationError("radius", f"finite radii >= 0 for {name}", "negative or NaN")


def layer_norm_ctx(
    ctx: Any,
    v: Any,
    eps: float,
    affine: tuple[Any, Any] | None,
    parts: list | None = None,
    form: str = "torch",
) -> tuple[Any, Any]:
    """(LN(v), population variance of v) over the last axis in the arithmetic of ``ctx``;
    ``parts`` (a list) receives (c, z): the centred input and the coefficient z of ``form``
    (``verify.model.spec.ln_forms``): 1 / sqrt(var + eps) (torch), or
    1 / (sqrt(sum c^2 / (d - 1)) + eps) (annotated: unbiased std, eps added to it)."""
    d = v.shape[-1]
    mean = ctx.sum(v, -1) / d
    c = v - mean[..., None]
    squares = ctx.sum(c * c, -1)
    var = squares / d
    if form == "torch":
        z = ctx.rsqrt(var + eps)
    elif form == "annotated":
        z = ctx.reciprocal(ctx.sqrt_nonneg(squares / (d - 1)) + eps)
    else:
        from verify.errors import ValidationError

        raise ValidationError("ln_form", "torch or annotated", form)
    out = ctx.ln_bound(c * z[..., None], eps)
    if parts is not None:
        parts[:] = [c, z]
    if affine is not None:
        out = out * affine[0] + affine[1]
    return out, var


def run_generic(
    ctx: Any,
    params: Params,
    bits: object,
    *,
    radius: float | Mapping[str, object] | np.ndarray | None = None,
    readout_only: bool = False,
    free: np.ndarray | None = None,
) -> GenericResult:
    """model-spec's forward pass in the arithmetic of ``ctx`` (see module doc).

    ``radius``: parameter balls (contexts that support them: arb, midrad); ``readout_only``:
    in the last layer compute only the readout position (enough for T; the variances of the
    last layer's readout-only norms then have one column). ``free``: a (B, N) bool mask of
    free bits (ball contexts only): a free position's token row is ``ctx.hull`` of rows 0 and 1,
    a ball holding both, so each output encloses T of every string that agrees with ``bits``
    on the fixed positions (a sub-cube; the bits under the mask are ignored).
    """
    cfg = params.config
    arr = check_bits(bits)
    n = cfg.check_n_bits(arr.shape[1])
    s = cfg.seq_len(n)
    b = arr.shape[0]
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    rad = _radius_arrays(params, radius)
    _check_radius(rad)
    with ctx.active(), np.errstate(all="ignore"):  # NaN/inf mean undefined/unbounded here

        def par(name: str, transpose: bool = False) -> Any:
            a, r = params[name], rad[name]
            if transpose:
                a = a.T
                r = None if r is None else np.asarray(r).T
            return ctx.param(
                np.ascontiguousarray(a), None if r is None else np.ascontiguousarray(r)
            )

        tokens = arr.astype(np.int64)
        if cfg.eos:
            tokens = np.concatenate([tokens, np.full((b, 1), 2, dtype=np.int64)], axis=1)
        mask = None
        if free is not None:
            mask = np.zeros(tokens.shape, dtype=bool)
            given = np.asarray(free, dtype=bool)
            if given.shape != arr.shape:
                from verify.errors import ValidationError

                raise ValidationError("free", f"a bool mask of shape {arr.shape}", given.shape)
            mask[:, : arr.shape[1]] = given
        tok = ctx.embed(par("token_embedding"), tokens, mask)
        e = cfg.d_embed
        if cfg.pos_encoding == "learned":
            pos = par("pos_embedding")[:s]
        elif cfg.pos_encoding == "sinusoidal":
            pos = ctx.sinusoidal(s, e)
        else:
            pos = ctx.const(np.zeros((s, e)))
        pos = ctx.broadcast(pos[None], (b, s, e))
        y = tok + pos if cfg.embedding == "add" else ctx.concat([tok, pos], axis=2)

        variances: list[Any] = []
        inv_sqrt_dh = ctx.rsqrt_int(dh)
        last_norm: dict[str, Any] = {}  # the latest norm: its output, (c, z) and gain, bias

        def norm(v: Any, name: str) -> Any:
            affine = (par(name + ".weight"), par(name + ".bias")) if cfg.ln_affine else None
            parts: list[Any] = []
            out, var = layer_norm_ctx(ctx, v, cfg.ln_eps, affine, parts, cfg.ln_form)
            variances.append(var)
            last_norm.update(out=out, parts=parts, affine=affine)
            return out

        def mha(yq: Any, ykv: Any, pre: str) -> Any:
            w = par(pre + "in_proj_weight", transpose=True)  # (D, 3D)
            bias = par(pre + "in_proj_bias")
            sq, skv = yq.shape[1], ykv.shape[1]
            q = ctx.matmul(yq, w[:, :d]) + bias[:d]
            k = ctx.matmul(ykv, w[:, d : 2 * d]) + bias[d : 2 * d]
            v = ctx.matmul(ykv, w[:, 2 * d :]) + bias[2 * d :]
            q = q.reshape(b, sq, h, dh).swapaxes(1, 2)
            k = k.reshape(b, skv, h, dh).swapaxes(1, 2)
            v = v.reshape(b, skv, h, dh).swapaxes(1, 2)
            scores = ctx.matmul(q, k.swapaxes(2, 3)) * inv_sqrt_dh  # (B, H, Sq, Skv)
            shift = ctx.midpoint(scores).max(axis=-1, keepdims=True)
            shift = np.where(np.isfinite(shift), shift, 0.0)
            att = ctx.attend(scores - shift, v).swapaxes(1, 2).reshape(b, sq, d)
            return ctx.matmul(att, par(pre + "out_proj.weight", transpose=True)) + par(
                pre + "out_proj.bias"
            )

        def ffn(x: Any, pre: str) -> Any:
            hid = ctx.relu(
                ctx.matmul(x, par(pre + "linear1.weight", True)) + par(pre + "linear1.bias")
            )
            return ctx.matmul(hid, par(pre + "linear2.weight", True)) + par(pre + "linear2.bias")

        for layer in range(cfg.n_layers):
            pre = f"layers.{layer}."
            last = readout_only and layer == cfg.n_layers - 1
            if cfg.norm_first:
                u = norm(y, pre + "norm1")
                uq, yq = (u[:, -1:], y[:, -1:]) if last else (u, y)
                hh = yq + mha(uq, u, pre + "self_attn.")
                y = hh + ffn(norm(hh, pre + "norm2"), pre)
            else:
                yq = y[:, -1:] if last else y
                hh = norm(yq + mha(yq, y, pre + "self_attn."), pre + "norm1")
                y = norm(hh + ffn(hh, pre), pre + "norm2")
        if cfg.final_norm:
            y = norm(y[:, -1:] if readout_only else y, "final_norm")
        y_r = y[:, -1, :]
        w = ctx.param(params["readout.weight"].reshape(d, 1), _col(rad["readout.weight"], d))
        normed = None
        if last_norm.get("out") is y:  # y^L is a layer norm's output: hand over its pieces
            c, z = last_norm["parts"]
            normed = (c[:, -1, :], z[:, -1], last_norm["affine"])
        t = ctx.readout(y_r, w, par("readout.bias"), normed)
    return GenericResult(T=t, var=variances, y_readout=y_r)


def _col(r: Any, d: int) -> Any:
    return None if r is None else np.asarray(r).reshape(d, 1)


@dataclass
class ReferenceResult:
    """mpmath reference: ``T`` (B,) and ``var`` (B, K, S) as object arrays of mpf, and their
    float64 roundings ``T_float``, ``var_float``."""

    T: np.ndarray
    var: np.ndarray
    T_float: np.ndarray
    var_float: np.ndarray
    dps: int


def reference_forward(params: Params, bits: object, dps: int = 50) -> ReferenceResult:
    """The spec's forward pass in mpmath at ``dps`` decimal digits (all positions, all norms).

    A layer-norm input with variance <= 0 at eps = 0 gives NaN (undefined), never a number.
    """
    dps = check_int("dps", dps, minimum=15, maximum=10000)
    ctx = MpmathContext(dps)
    res = run_generic(ctx, params, bits)
    var = np.stack(res.var, axis=1)
    with ctx.active():
        t_float = ctx.midpoint(res.T)
        var_float = ctx.midpoint(var)
    return ReferenceResult(T=res.T, var=var, T_float=t_float, var_float=var_float, dps=dps)
