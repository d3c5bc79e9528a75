"""The parameter-norm summaries tied to their definitions: the one input both sides of every
eps > 0 chain share (:func:`verify.theory.norms.parameter_norms` and ``box_norms``), checked
against the norms of theta computed here from the model's arrays, in arb, independently of the
code (no SVD: a power iteration of our own gives a certificate).

- A matrix's spectral norm s = ||W||_2: the summary must satisfy ``||W v|| / ||v|| <= s`` for
  the vector v of a seeded power iteration on W^T W (a rigorous lower bound on ||W||_2, whatever
  v is: the constants are upper bounds, so an underestimated norm is the unsound direction), and
  ``s <= spectral_norm_upper(W)`` (the certified squaring bound of
  :mod:`verify.model.arithmetic.matrix_norms`, within n^(1/64)).
- Biases (l2), gains (sup), ||E[1] - E[0]||, the readout's norms: equal to the definition in
  arb (relative tolerance :data:`verify.proofs.chain.REL_TOL`, the float64 rounding of the
  code's own evaluation); the embedding bound at least every row tok[t] (+ or ++) pos[j] that
  an input of length <= max_len can use.

Checked on the chains' seeded models (:func:`verify.proofs.chain.models`): these checks
corroborate numpy's 2-norm inside ``lemma_2_9.chain_parameter_norms``, which is proved on
symbols (:mod:`verify.proofs.chain_param_norms`; box_norms: :mod:`verify.proofs.chain_box_norms`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from flint import arb

from verify.proofs.chain import REL_TOL, code, models

__all__: list[str] = []

DOC = "docs/derivations.md#lemma-29"
_ITER = 60


def _l2(x: np.ndarray) -> arb:
    total = arb(0)
    for v in np.ravel(np.asarray(x, dtype=np.float64)):
        total += arb(float(v)) * arb(float(v))
    return total.sqrt()


def _spectral_lower(w: np.ndarray, seed: int) -> arb:
    """||W v|| / ||v|| in arb for v from a seeded power iteration on W^T W: <= ||W||_2."""
    w = np.asarray(w, dtype=np.float64)
    if not w.size or not np.any(w):
        return arb(0)
    v = np.random.default_rng(seed).standard_normal(w.shape[1])
    for _ in range(_ITER):
        v = w.T @ (w @ v)
        v /= np.linalg.norm(v) or 1.0
    wv = [sum((arb(float(a)) * arb(float(b)) for a, b in zip(row, v, strict=True)), arb(0))
          for row in w]  # fmt: skip
    return _norm_of(wv) / _l2(v)


def _norm_of(xs: list[arb]) -> arb:
    total = arb(0)
    for x in xs:
        total += x * x
    return total.sqrt()


def _close(value: float, want: arb) -> bool:
    tol = abs(want) * arb(REL_TOL) + arb(1e-300)
    v = arb(float(value))
    return bool(v >= want - tol and v <= want + tol)


def _heads(cfg: Any, w_in: np.ndarray) -> np.ndarray:
    """in_proj_weight as (q/k/v, head, d_h rows, D): rows of W_q, then W_k, then W_v."""
    return np.asarray(w_in).reshape(3, cfg.n_heads, cfg.d_head, cfg.d_model)


def _matrices(params: Any) -> Iterator[tuple[str, float, np.ndarray]]:
    """(where, the summary's spectral norm, the matrix), for every matrix of the summary."""
    nm = code("lemma_2_9.chain_parameter_norms")(params)
    cfg = params.config
    for i, lay in enumerate(nm.layers):
        p = f"layers.{i}."
        blocks = _heads(cfg, params[p + "self_attn.in_proj_weight"])
        for h, hd in enumerate(lay.heads):
            for j, name in enumerate(("wq", "wk", "wv")):
                yield f"{p}head{h}.{name}", getattr(hd, name), blocks[j, h]
        yield p + "wo", lay.wo, params[p + "self_attn.out_proj.weight"]
        yield p + "w1", lay.w1, params[p + "linear1.weight"]
        yield p + "w2", lay.w2, params[p + "linear2.weight"]


def _vectors(params: Any) -> Iterator[tuple[str, float, arb]]:
    """(where, the summary's value, its definition in arb) for every other norm."""
    nm = code("lemma_2_9.chain_parameter_norms")(params)
    cfg = params.config
    for i, lay in enumerate(nm.layers):
        p = f"layers.{i}."
        b_in = np.asarray(params[p + "self_attn.in_proj_bias"]).reshape(3, cfg.n_heads, -1)
        for h, hd in enumerate(lay.heads):
            for j, name in enumerate(("bq", "bk", "bv")):
                yield f"{p}head{h}.{name}", getattr(hd, name), _l2(b_in[j, h])
        yield p + "bo", lay.bo, _l2(params[p + "self_attn.out_proj.bias"])
        yield p + "b1", lay.b1, _l2(params[p + "linear1.bias"])
        yield p + "b2", lay.b2, _l2(params[p + "linear2.bias"])
        for k in (1, 2):
            g, n = _gain(params, p + f"norm{k}")
            yield f"{p}g{k}", getattr(lay, f"g{k}"), g
            yield f"{p}n{k}", getattr(lay, f"n{k}"), n
    if cfg.norm_first:
        g, n = _gain(params, "final_norm")
        yield "gf", nm.gf, g
        yield "nf", nm.nf, n
    tok = np.asarray(params["token_embedding"], dtype=np.float64)
    yield "token_diff", nm.token_diff, _l2(tok[1] - tok[0])
    yield "w", nm.w, _l2(params["readout.weight"])
    yield "omega", nm.omega, abs(arb(float(np.asarray(params["readout.bias"]))))


def _gain(params: Any, name: str) -> tuple[arb, arb]:
    """(||gamma||_inf, ||beta||_2) of a layer norm; (1, 0) without affine parameters."""
    if not params.config.ln_affine:
        return arb(1), arb(0)
    g = np.abs(np.asarray(params[name + ".weight"], dtype=np.float64))
    return arb(float(g.max())), _l2(params[name + ".bias"])


def _embedding_rows(params: Any) -> Iterator[np.ndarray]:
    """Every input vector y^0_j = tok[t] (+ or concatenated with) pos[j], j < max_len + 1."""
    from verify.model.plain.forward_numpy import sinusoidal_table

    cfg = params.config
    tok = np.asarray(params["token_embedding"], dtype=np.float64)
    n = cfg.max_len + 1
    if cfg.pos_encoding == "learned":
        pos = np.asarray(params["pos_embedding"], dtype=np.float64)[:n]
    elif cfg.pos_encoding == "sinusoidal":
        pos = sinusoidal_table(n, cfg.d_embed)
    else:
        pos = np.zeros((1, cfg.d_embed))
    for t in tok:
        for row in pos:
            yield np.concatenate([t, row]) if cfg.embedding == "concat" else t + row


def _check_model(params: Any, seed: int, weaken: float = 1.0) -> str:
    """'' if the summary of ``params`` (its spectral norms times ``weaken``) meets the
    definitions, else what does not."""
    from verify.model.arithmetic.matrix_norms import spectral_norm_upper

    for where, s, w in _matrices(params):
        lower = _spectral_lower(w, seed)
        s = s * weaken
        if not arb(float(s)) >= lower * (1 - arb(REL_TOL)):
            return f"{where}: spectral norm {s:.12g} < ||W v|| / ||v|| = {float(lower.mid()):.12g}"
        if s > spectral_norm_upper(w) * (1 + REL_TOL):
            return f"{where}: spectral norm {s:.12g} above the certified upper bound"
    for where, value, want in _vectors(params):
        if not _close(value, want):
            return f"{where}: {value:.12g} != {float(want.mid()):.12g}"
    nm = code("lemma_2_9.chain_parameter_norms")(params)
    emb = max((_l2(r) for r in _embedding_rows(params)), key=lambda x: float(x.mid()))
    if not arb(float(nm.emb_max)) >= emb * (1 - arb(REL_TOL)):
        return f"emb_max {nm.emb_max:.12g} below an input row's norm {float(emb.mid()):.12g}"
    return ""


def _norms_check(weaken: float = 1.0) -> tuple[int, dict | None, str]:
    for i, params in enumerate(models()):
        msg = _check_model(params, seed=1000 + i, weaken=weaken)
        if msg:
            return i + 1, {"model": i, "config": str(params.config)}, msg
    return len(models()), None, ""
