"""The norm summary of theta on symbols: ``parameter_norms(params)`` run on a model whose every
parameter entry is a real symbol (numpy object arrays: the code's own slicing, reshapes and
broadcasting), compared with each norm's definition (Lemma 2.9, step 1) written from the layout:
head i's W_q, W_k, W_v are the rows [j D + i d_h, j D + (i + 1) d_h) of in_proj (j = 0, 1, 2),
the biases likewise; ||.||_2 of a vector is sqrt(sum x^2); a gain's ||g||_inf is max_i |g_i|
(1 and 0 without ``ln_affine``); the token difference ||E[1] - E[0]||; the readout's ||w|| and
|omega|; emb_max the largest ||y^0_j|| over every token and position row (tok + pos, or the
two concatenated; sinusoidal rows have norm sqrt(ceil(E/2)), none 0).

A matrix's spectral norm is numpy's ``norm(a, 2)``: on symbols the function
``spectral_norm(A)`` of the block A (taken for its definition, as ``math.sqrt`` is), so what is
checked for every parameter value is that each field is the norm of the right block. LAPACK's
accuracy is the float64 rounding outside every chain; it is corroborated here as before: at the
chains' seeded models each spectral norm lies between ||W v|| / ||v|| (a power-iteration v, in
arb) and the certified squaring bound (:mod:`verify.proofs.chain_norms`).

The layout's sizes are enumerated (evidence "sizes", class instance): every structure (post-
and pre-LN, affine or not, each positional encoding and embedding, eos or not) at L, H <= 2."""

from __future__ import annotations

import dataclasses
import itertools
import math
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy as sp

from verify.proofs.symbolic import _NAMES, SymCase, _Env, symbolic_step

__all__ = ["NORM_CONFIGS", "SPECTRAL", "SymArray", "norm_fields", "summary_on_symbols"]


class SPECTRAL(sp.Function):
    """spectral_norm(A) = ||A||_2 of an ImmutableMatrix; evaluated only for a constant block
    b J (every entry b): rank one, ||b J_{r x c}||_2 = |b| sqrt(r c)."""

    nargs = 1

    @classmethod
    def eval(cls, m: Any) -> Any:
        entries = set(m) if isinstance(m, sp.MatrixBase) else set()
        if len(entries) == 1:
            return sp.Abs(entries.pop()) * sp.sqrt(m.rows * m.cols)
        return None


class SymArray(np.ndarray):
    """An object array of sympy expressions whose ``max()`` is sympy's Max of its entries."""

    def max(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if args or kwargs:
            raise TypeError("SymArray.max takes no axis")
        return _max(self.ravel().tolist())


def _max(xs: list) -> sp.Expr:
    """Max of the entries as built (unevaluated: sympy's pairwise pruning of a Max of
    symbolic norms costs seconds; both sides build theirs in the same order)."""
    return xs[0] if len(xs) == 1 else sp.Max(*xs, evaluate=False)


def _sym(a: Any) -> SymArray:
    return np.asarray(a, dtype=object).view(SymArray)


def _norm(a: Any, ord: Any = None, axis: Any = None) -> Any:
    a = np.asarray(a, dtype=object)
    if ord == 2 and a.ndim == 2:
        return SPECTRAL(sp.ImmutableMatrix(a.tolist()))
    if ord is not None:
        raise TypeError(f"norm ord={ord} on symbols")
    if axis is None:
        return sp.sqrt(sp.Add(*(x**2 for x in a.ravel())))
    return _sym(np.apply_along_axis(lambda v: sp.sqrt(sp.Add(*(x**2 for x in v))), axis, a))


def _np() -> Any:
    class _Numpy(types.SimpleNamespace):
        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

    return _Numpy(
        abs=lambda a: _sym(np.vectorize(sp.Abs, otypes=[object])(np.asarray(a, dtype=object))),
        ravel=np.ravel,
        linalg=types.SimpleNamespace(norm=_norm),
    )


class _SymbolParams:
    """A Params whose every entry is a real symbol ``name[i, j]`` (built without the float64
    validation of its constructor: its arrays are object arrays)."""

    @staticmethod
    def of(config: Any, arrays: dict[str, np.ndarray] | None = None) -> Any:
        """Every entry its own symbol, or the object ``arrays`` given."""
        from verify.model import Params, param_shapes

        given = arrays or {n: _symbols(n, s) for n, s in param_shapes(config).items()}

        class P(Params):
            def __init__(self) -> None:  # the arrays are symbols, not float64
                self.config = config
                self._arrays = {n: _sym(a) for n, a in given.items()}

        return P()


def _symbols(name: str, shape: tuple[int, ...]) -> np.ndarray:
    if shape == ():
        return np.asarray(sp.Symbol(name, real=True), dtype=object)
    out = np.empty(shape, dtype=object)
    for idx in itertools.product(*(range(s) for s in shape)):
        out[idx] = sp.Symbol(f"{name}[{','.join(map(str, idx))}]", real=True)
    return out


def _configs() -> list[Any]:
    from verify.model import ModelConfig

    out = []
    for i, (pre, affine, pos, emb) in enumerate(
        itertools.product(
            (False, True), (False, True), ("learned", "sinusoidal", "none"), ("add", "concat")
        )
    ):
        out.append(ModelConfig(d_model=4, n_layers=1 + i % 2, n_heads=1 + (i // 2) % 2, d_ff=6,
                               norm_first=pre, ln_affine=affine, pos_encoding=pos, embedding=emb,
                               eos=bool(i % 3), max_len=3))  # fmt: skip
    return out


NORM_CONFIGS = _configs()


# ---- the definitions (Lemma 2.9, step 1), from the layout
def _l2(a: Any) -> sp.Expr:
    return sp.sqrt(sp.Add(*(x**2 for x in np.ravel(a))))


def _spec(a: Any) -> sp.Expr:
    return SPECTRAL(sp.ImmutableMatrix(np.asarray(a, dtype=object).tolist()))


def _gain(params: Any, name: str) -> tuple[Any, Any]:
    if not params.config.ln_affine:
        return sp.S.One, sp.S.Zero
    return _max([sp.Abs(x) for x in np.ravel(params[name + ".weight"])]), _l2(
        params[name + ".bias"])  # fmt: skip


def _definitions(params: Any) -> dict[str, Any]:
    cfg = params.config
    d, dh = cfg.d_model, cfg.d_model // cfg.n_heads
    out: dict[str, Any] = {}
    for layer in range(cfg.n_layers):
        p = f"layers.{layer}."
        w_in, b_in = params[p + "self_attn.in_proj_weight"], params[p + "self_attn.in_proj_bias"]
        for i in range(cfg.n_heads):
            for j, (w, b) in enumerate((("wq", "bq"), ("wk", "bk"), ("wv", "bv"))):
                rows = slice(j * d + i * dh, j * d + (i + 1) * dh)
                out[f"{p}head{i}.{w}"], out[f"{p}head{i}.{b}"] = _spec(w_in[rows]), _l2(b_in[rows])
        out[p + "wo"] = _spec(params[p + "self_attn.out_proj.weight"])
        out[p + "bo"] = _l2(params[p + "self_attn.out_proj.bias"])
        for k in (1, 2):
            out[p + f"w{k}"] = _spec(params[p + f"linear{k}.weight"])
            out[p + f"b{k}"] = _l2(params[p + f"linear{k}.bias"])
            out[p + f"g{k}"], out[p + f"n{k}"] = _gain(params, p + f"norm{k}")
    out["gf"], out["nf"] = _gain(params, "final_norm") if cfg.norm_first else (sp.S.One, sp.S.Zero)
    tok = params["token_embedding"]
    out["token_diff"] = _l2(np.asarray(tok[1]) - np.asarray(tok[0]))
    out["emb_max"] = _emb_max(params)
    out["w"] = _l2(params["readout.weight"])
    out["omega"] = sp.Abs(params["readout.bias"].item())
    return out


def _emb_max(params: Any) -> sp.Expr:
    """max_j ||y^0_j|| over every token t and position row p_j: ||t + p_j|| (learned, added),
    sqrt(||t||^2 + ||p_j||^2) (concatenated: the max of each part, they are independent), or
    the triangle inequality's ||t|| + ||p|| (added sinusoidal rows, each of norm
    sqrt(ceil(E/2)); none: 0)."""
    cfg = params.config
    tok = list(np.asarray(params["token_embedding"], dtype=object))
    e = cfg.d_embed
    if cfg.pos_encoding == "learned":
        pos = list(np.asarray(params["pos_embedding"], dtype=object))
        if cfg.embedding == "add":
            return _max([_l2(t + r) for t in tok for r in pos])
        pos_max = _max([_l2(r) for r in pos])
    else:
        pos_max = sp.sqrt(math.ceil(e / 2)) if cfg.pos_encoding == "sinusoidal" else sp.S.Zero
    tok_max = _max([_l2(t) for t in tok])
    return sp.sqrt(tok_max**2 + pos_max**2) if cfg.embedding == "concat" else tok_max + pos_max


def _fields(nm: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, lay in enumerate(nm.layers):
        p = f"layers.{i}."
        for h, hd in enumerate(lay.heads):
            for f in ("wq", "wk", "wv", "bq", "bk", "bv"):
                out[f"{p}head{h}.{f}"] = getattr(hd, f)
        for f in ("wo", "bo", "w1", "b1", "w2", "b2", "g1", "n1", "g2", "n2"):
            out[p + f] = getattr(lay, f)
    for f in ("gf", "nf", "token_diff", "emb_max", "w", "omega"):
        out[f] = getattr(nm, f)
    return out


def summary_on_symbols(ob_id: str) -> Any:
    """The coded function of ``ob_id`` with numpy on symbolic object arrays (module doc)."""
    from verify.proofs.chain_code import code

    return _Env({**_NAMES, "np": _np()}).copy(code(ob_id))


norm_fields = _fields


def _cases() -> Iterator[SymCase]:
    summary = summary_on_symbols("lemma_2_9.chain_parameter_norms")
    for cfg in NORM_CONFIGS:
        params = _SymbolParams.of(cfg)
        want = _definitions(params)

        def coded(params: Any = params, keys: tuple = tuple(want)) -> tuple:
            got = _fields(summary(params))
            return tuple(got.get(k, sp.Symbol(f"missing {k}")) for k in keys)

        yield {"config": str(cfg)}, coded, (lambda want=want: tuple(want.values()))


symbolic_step(
    "lemma_2_9.chain_parameter_norms",
    "Lemma 2.9",
    "Step 1: the norms of theta",
    "docs/derivations.md#lemma-29",
    _cases,
    f"every real parameter entry; {len(NORM_CONFIGS)} layouts (every structure at L, H <= 2);"
    " numpy's 2-norm corroborated at the seeded models (within [||W v|| / ||v||, the certified"
    " bound])",
    evidence="sizes",
)


def _with_corroboration() -> None:
    """The obligation's discharge: the symbolic comparison, then numpy's 2-norm against the
    rigorous lower and certified upper bounds at the chains' seeded models (a disagreement
    there fails it: the primitive taken for its definition is checked where it can be)."""
    from verify.proofs.chain_code import CODE
    from verify.proofs.chain_norms import _norms_check
    from verify.proofs.core import OBLIGATIONS, Verdict

    ob = OBLIGATIONS["lemma_2_9.chain_parameter_norms"]
    on_symbols = ob.prove

    def prove() -> Verdict:
        verdict = on_symbols()
        if verdict.status != "proved":
            return verdict
        n, pt, msg = _norms_check()
        if pt is not None:
            return Verdict("failed", f"{CODE[ob.id]}: numpy's 2-norm: {msg}", pt)
        return Verdict(
            "proved", f"{verdict.detail}; numpy's 2-norm within its bounds on {n} models"
        )

    OBLIGATIONS[ob.id] = dataclasses.replace(ob, prove=prove)


_with_corroboration()
