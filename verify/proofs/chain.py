"""The chain to the code: for each explicit constant, the function coded in ``verify.theory``
equals what its derivation steps compose to.

:data:`CODE` is the one table of obligation -> coded function ("module:function"); every chain
obligation looks its function up there at call time (so a monkeypatched or re-pointed function
is what gets checked). Each comparison runs at >= 100 seeded points (:data:`N_POINTS`): the
composition is evaluated in rigorous interval arithmetic (:mod:`verify.proofs.compose`, arb), the
coded value (float64 or mpmath) must lie in the enclosure widened by the relative tolerance
:data:`REL_TOL` (float64 rounding of the code's own evaluation). A coded factor dropped, halved or
given another exponent moves the value out of it at some point: the obligation fails there and
names the point. Its twin is the coded function times 1/2, which must be caught the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from flint import arb

from verify.proofs.chain_code import CODE, code
from verify.proofs.chain_step import Comparison, chain_step
from verify.proofs.compose import iv
from verify.proofs.interval import Iv

__all__ = ["CODE", "N_POINTS", "REL_TOL", "code"]

N_POINTS = 100
REL_TOL = 1e-9


def _inside(value: float, enc: Iv, tol: float = REL_TOL) -> bool:
    """``value`` lies in the enclosure widened by tol relative at both ends (inf, nan never)."""
    if not math.isfinite(value):
        return False
    v = arb(value)  # a binary float is exact in arb
    width = (abs(enc.lo) + abs(enc.hi)) * arb(tol)
    return bool(v >= enc.lo - width and v <= enc.hi + width)


Point = dict[str, Any]
Case = tuple[Point, Callable[[], Any], Callable[[], Iv]]


def _check(
    cases: Callable[[], Iterator[Case]], weaken: float = 1.0
) -> tuple[int, Point | None, str]:
    """(points compared, first point where the coded value (times ``weaken``) left the
    composed enclosure, message)."""
    n = 0
    for pt, coded, composed in cases():
        n += 1
        value = coded()
        values = value if isinstance(value, tuple) else (value,)
        encs = composed()
        encs = encs if isinstance(encs, tuple) else (encs,)
        for v, e in zip(values, encs, strict=True):
            if not _inside(float(v) * weaken, e):
                mid = (e.lo + e.hi) / 2
                return n, pt, f"coded {float(v) * weaken:.12g} vs composed {float(mid.mid()):.12g}"
    return n, None, ""


POINTS = Comparison(
    claim="equals the composition of the steps at {n} seeded points",
    proved="equals the composition at {n} seeded points",
    passed_halved="the halved code passed every point",
    caught_halved="halved code caught",
    half=0.5,
    minimum=N_POINTS,
)


def _points_step(ob_id: str, statement: str, step: str, doc: str, cases, facts=()) -> None:
    """Register a chain obligation comparing code(ob_id) with a composition at points."""
    chain_step(
        ob_id,
        statement,
        step,
        doc,
        lambda weaken: _check(cases, weaken),
        POINTS,
        facts=facts,
        evidence="points",
    )


def ball(x: arb) -> Iv:
    """An arb ball as an interval."""
    return Iv(x.lower(), x.upper())


def _log10(x: Iv) -> Iv:
    ln10 = arb(10).log()
    return Iv((x.lo.log() / ln10).lower(), (x.hi.log() / ln10).upper())


def _min1(x: Iv) -> Iv:
    return x.min(iv(1))


# ----------------------------------------------------------------------------- eps > 0
def _params(eos_only: bool = False) -> list[Any]:
    """N_POINTS seeded models over post/pre-LN, L, H, D, eps, affine or not, eos or not, every
    positional encoding and both embeddings."""
    from verify.model import ModelConfig, init_params

    rng = np.random.default_rng(28 + eos_only)
    out = []
    for i in range(N_POINTS):
        d = int(rng.choice([4, 8]))
        cfg = ModelConfig(
            d_model=d,
            n_layers=int(rng.integers(1, 3)),
            n_heads=int(rng.choice([1, 2])),
            d_ff=2 * d,
            ln_eps=float(10 ** rng.uniform(-4, 0)),
            norm_first=bool(rng.integers(2)),
            ln_affine=bool(rng.integers(2)),
            eos=True if eos_only else bool(rng.integers(2)),
            pos_encoding=str(rng.choice(["learned", "sinusoidal", "none"])),
            embedding=str(rng.choice(["add", "concat"])),
            max_len=16,
        )
        scheme = str(rng.choice(["uniform", "gaussian", "xavier_uniform", "xavier_normal"]))
        out.append(init_params(cfg, scheme, seed=i, scale=float(10 ** rng.uniform(-1.5, -0.3))))
    return out


_MEMO: dict[tuple[str, bool], list[Any]] = {}


def models(eos_only: bool = False) -> list[Any]:
    """The seeded models (memoised)."""
    if ("params", eos_only) not in _MEMO:
        _MEMO["params", eos_only] = _params(eos_only)
    return _MEMO["params", eos_only]


def configs(eos_only: bool = False) -> list[Any]:
    """The seeded models' parameter-norm summaries (memoised)."""
    from verify.theory.norms import parameter_norms

    if ("norms", eos_only) not in _MEMO:
        _MEMO["norms", eos_only] = [parameter_norms(p) for p in models(eos_only)]
    return _MEMO["norms", eos_only]


def _cfg_point(nm: Any) -> Point:
    c = nm.config
    return {
        "d_model": c.d_model,
        "n_layers": c.n_layers,
        "n_heads": c.n_heads,
        "ln_eps": c.ln_eps,
        "norm_first": c.norm_first,
        "ln_affine": c.ln_affine,
        "eos": c.eos,
        "pos_encoding": c.pos_encoding,
        "embedding": c.embedding,
    }


def n_norms_composed(cfg: Any) -> int:
    """K of the derivation: two norms per layer, plus the final norm pre-LN."""
    return 2 * cfg.n_layers + int(cfg.norm_first)


def _beta_max(nm: Any) -> Iv:
    """Lemma 3.2 composed: (1 + eps^{-1/2})^K, K = 2L (+1 pre-LN: the final norm)."""
    cfg = nm.config
    k = n_norms_composed(cfg)
    zmax = iv(cfg.ln_eps).rpow(arb(-0.5), positive=False)
    return (iv(1) + zmax).ipow(k)
