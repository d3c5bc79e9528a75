"""What the derivation steps compose to: C_infl (Lemma 2.9, steps 1-6) and the per-group
coefficients L_g of C_Lip (Lemma 3.1, steps 1-5), evaluated in rigorous interval arithmetic
from the step expressions the obligations prove (:mod:`verify.proofs.influence`,
:mod:`verify.proofs.lipschitz`), never from the coded factor functions.

The chain obligations (:mod:`verify.proofs.chain`) compare these with the functions coded in
``verify.theory`` at seeded parameter summaries. The recursion follows the derivations' text:
post-LN (a, bt) <- lambda_2 (1 + F) lambda_1 ((a, bt) + attention(a, bt)); pre-LN
(a, bt) <- (1 + lambda_2 F)((a, bt) + attention(lambda_1 a, lambda_1 bt)), then lambda_f.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache, wraps
from typing import Any, TypeVar

import sympy as sp

from verify.proofs import influence as inf
from verify.proofs.interval import Iv, compile_expr
from verify.proofs.lipschitz import LIP

__all__ = ["c_infl_composed", "iv", "lipschitz_composed", "sqrt_iv"]

T = TypeVar("T")


def iv(x: float | int | Fraction) -> Iv:
    """The exact value of a float (or int, Fraction) as a point interval."""
    return Iv.point(Fraction(x))


def sqrt_iv(x: Iv) -> Iv:
    return x.monotone(lambda a: a.sqrt())


_CACHE: dict[sp.Expr, Any] = {}


def ev(expr: sp.Expr, **values: Iv) -> Iv:
    """Enclosure of a step expression with its symbols (by name) bound to intervals."""
    if expr not in _CACHE:
        _CACHE[expr] = compile_expr(expr)
    env = {s: values[s.name] for s in expr.free_symbols}
    return _CACHE[expr](env)


class IvArith:
    """Rigorous interval arithmetic for the compositions (the chains at points)."""

    num = staticmethod(iv)
    sqrt = staticmethod(sqrt_iv)
    ev = staticmethod(ev)

    @staticmethod
    def sq(x: Iv) -> Iv:
        return x.ipow(2)

    @staticmethod
    def max(a: Iv, b: Iv) -> Iv:
        return a.max(b)


class SymArith:
    """Exact symbolic arithmetic for the compositions (the chains proved on symbols)."""

    @staticmethod
    def num(x: Any) -> sp.Expr:
        from verify.proofs.symbolic import exact

        return exact(x)

    sqrt = staticmethod(sp.sqrt)

    @staticmethod
    def ev(expr: sp.Expr, **values: Any) -> sp.Expr:
        from verify.proofs.symbolic import sub

        return sub(expr, **values)

    @staticmethod
    def sq(x: sp.Expr) -> sp.Expr:
        return x**2

    max = staticmethod(sp.Max)


def _attention(lay: Any, y_in: Any, d_head: Any, a: Any, bt: Any, ar: Any = IvArith) -> tuple:
    """Lemma 2.9, step 3 composed: (change at n, S times the change elsewhere)."""
    sd = ar.sqrt(ar.num(d_head))
    cols: dict[str, list] = {"na": [], "nb": [], "oa": [], "ob": []}
    for hd in lay.heads:
        env = dict(
            Q=ar.num(hd.wq),
            K=ar.num(hd.wk),
            V=ar.num(hd.wv),
            b_q=ar.num(hd.bq),
            b_k=ar.num(hd.bk),
            Y=y_in,
            sd=sd,
        )
        big_e = ar.ev(inf.E_SOFTMAX, **env)
        cols["na"].append(ar.ev(inf.ATT_N_A, **env))
        cols["nb"].append(ar.ev(inf.ATT_N_B, **env))
        cols["oa"].append(ar.ev(inf.ATT_OTHER_A, E=big_e, **env))
        cols["ob"].append(ar.ev(inf.ATT_OTHER_B, **env))
    wo = ar.num(lay.wo)
    # heads by Minkowski, then W_o
    c = {k: wo * ar.sqrt(_sum(ar.sq(x) for x in v)) for k, v in cols.items()}
    return c["na"] * a + c["nb"] * bt, c["oa"] * a + c["ob"] * bt


def _sum(xs: Any) -> Any:
    total = None
    for x in xs:
        total = x if total is None else total + x
    return total


_MEMO_SIZE = 1024


def _memoised(steps: Callable[[], tuple]) -> Callable[[Callable[[Any], T]], Callable[[Any], T]]:
    """Memoise a composition on (norm summary, ``steps()``): it is a pure function of the
    (frozen, hashable) summary and of the step expressions it reads, which ``steps`` lists as
    they are now (module globals a test may re-point), so a re-pointed step is composed anew.
    Several chain obligations compare against the same summaries: each is composed once."""

    def wrap(fn: Callable[[Any], T]) -> Callable[[Any], T]:
        @lru_cache(maxsize=_MEMO_SIZE)
        def cached(nm: Any, key: tuple) -> T:
            return fn(nm)

        @wraps(fn)
        def composed(nm: Any) -> T:
            return cached(nm, steps())

        return composed

    return wrap


def _infl_steps() -> tuple:
    """The step expressions :func:`c_infl_composed` reads."""
    return (
        inf.E_SOFTMAX,
        inf.ATT_N_A,
        inf.ATT_N_B,
        inf.ATT_OTHER_A,
        inf.ATT_OTHER_B,
        inf.LN_FACTOR,
        inf.FFN_FACTOR,
    )


def c_infl_start(nm: Any, ar: Any = IvArith) -> tuple:
    """Lemma 2.9, step 1: (a, bt) before the first layer, (||E[1] - E[0]||, 0)."""
    return ar.num(nm.token_diff), ar.num(0)


def c_infl_layer(nm: Any, i: Any, a: Any, bt: Any, ar: Any = IvArith) -> tuple:
    """Lemma 2.9, steps 2-5 composed for layer ``i``: (a, bt) after it from (a, bt) before it.
    Post-LN (a, bt) <- lambda_2 (1 + F) lambda_1 ((a, bt) + attention(a, bt)); pre-LN
    (a, bt) <- (1 + lambda_2 F)((a, bt) + attention(lambda_1 a, lambda_1 bt)). Its attention
    input bound: the first layer's embeddings, else the previous norm's output (post-LN); the
    layer's first norm's output (pre-LN)."""
    cfg = nm.config
    rd = ar.sqrt(ar.num(cfg.d_model))
    lay = nm.layers[i]
    one = ar.num(1)
    lam1, lam2 = ar.ev(inf.LN_FACTOR, g=ar.num(lay.g1)), ar.ev(inf.LN_FACTOR, g=ar.num(lay.g2))
    ffn = ar.ev(inf.FFN_FACTOR, W1=ar.num(lay.w1), W2=ar.num(lay.w2))
    if cfg.norm_first:
        y_in = ar.num(lay.g1) * rd + ar.num(lay.n1)
        m_n, m_o = _attention(lay, y_in, cfg.d_head, lam1 * a, lam1 * bt, ar)
        mlp = one + lam2 * ffn
        return mlp * (a + m_n), mlp * (bt + m_o)
    if isinstance(i, int) and i == 0:
        y_in = ar.num(nm.emb_max)
    else:  # i >= 1 (a symbolic index stands for i >= 1)
        prev = nm.layers[i - 1]
        y_in = ar.num(prev.g2) * rd + ar.num(prev.n2)
    m_n, m_o = _attention(lay, y_in, cfg.d_head, a, bt, ar)
    mlp = lam2 * (one + ffn) * lam1
    return mlp * (a + m_n), mlp * (bt + m_o)


def c_infl_end(nm: Any, a: Any, bt: Any, ar: Any = IvArith) -> tuple:
    """Lemma 2.9, step 6 before the max: pre-LN's final norm lambda_f on (a_L, bt_L)."""
    if nm.config.norm_first:
        lam_f = ar.ev(inf.LN_FACTOR, g=ar.num(nm.gf))
        return lam_f * a, lam_f * bt
    return a, bt


@_memoised(_infl_steps)
def c_infl_composed(nm: Any) -> tuple[Iv, Iv]:
    """(a_L, bt_L) of Lemma 2.9 composed from the steps, for a norm summary ``nm``
    (memoised: :func:`_memoised`): start, each layer in turn, the end."""
    a, bt = c_infl_start(nm)
    for i in range(len(nm.layers)):
        a, bt = c_infl_layer(nm, i, a, bt)
    return c_infl_end(nm, a, bt)


# ----------------------------------------------------------------------------- C_Lip
Form = dict[str, Iv]


def _add(*forms: Form) -> Form:
    out: Form = {}
    for f in forms:
        for k, v in f.items():
            out[k] = out[k] + v if k in out else v
    return out


def lipschitz_composed(nm: Any) -> Form:
    """The per-group coefficients L_g of Lemma 3.1 composed from the steps (group names as
    in ``verify.theory.bounds.lipschitz_coefficients``); groups with coefficient 0 dropped.
    A fresh dict of the memoised composition (:func:`_memoised`)."""
    return dict(_lipschitz_composed(nm))


@_memoised(lambda: tuple(LIP.items()))
def _lipschitz_composed(nm: Any) -> tuple[tuple[str, Iv], ...]:
    form = lipschitz_form(nm, IvArith)
    return tuple((k, v) for k, v in sorted(form.items()) if not (v.lo == 0 and v.hi == 0))


def lipschitz_form(nm: Any, ar: Any = IvArith) -> dict[str, Any]:
    """Every group's coefficient L_g of Lemma 3.1 composed from the steps, in the arithmetic
    ``ar`` (zero coefficients included)."""
    cfg = nm.config
    d = cfg.d_model
    rd = ar.sqrt(ar.num(d))
    sd = ar.sqrt(ar.num(cfg.d_head))
    eps = ar.num(cfg.ln_eps)
    gain_c = ar.ev(LIP["ln_gain"], D=ar.num(d))
    one = ar.num(1)

    def scale(s: Any, f: Form) -> Form:
        return {k: s * v for k, v in f.items()}

    def sum_sq_root(xs: list) -> Any:
        return ar.sqrt(_sum(ar.sq(x) for x in xs))

    def norm(name: str, g: Any, inp: Form) -> Form:
        out = scale(ar.ev(LIP["ln_input"], g=ar.num(g), epsilon=eps), inp)
        if cfg.ln_affine:
            out = _add(out, {name + ".weight": gain_c, name + ".bias": ar.ev(LIP["ln_bias"])})
        return out

    def attention(p: str, lay: Any, y: Any, inp: Form) -> Form:
        heads, vbar = [], []
        for i, hd in enumerate(lay.heads):
            wq, wk, wv = ar.num(hd.wq), ar.num(hd.wk), ar.num(hd.wv)
            qn, kn = wq * y + ar.num(hd.bq), wk * y + ar.num(hd.bk)
            dq = _add(scale(wq, inp), {f"{p}q{i}.w": y, f"{p}q{i}.b": one})
            dk = _add(scale(wk, inp), {f"{p}k{i}.w": y, f"{p}k{i}.b": one})
            dv = _add(
                scale(wv, inp),
                {f"{p}v{i}.w": ar.ev(LIP["value_w"], Y=y), f"{p}v{i}.b": ar.ev(LIP["value_b"])},
            )
            rw = ar.ev(LIP["reweight"], V=wv, Y=y, sd=sd)
            heads.append(_add(dv, scale(rw, _add(scale(kn, dq), scale(qn, dk)))))
            vbar.append(wv * y + ar.num(hd.bv))
        keys = sorted({k for h in heads for k in h})
        zero = ar.num(0)
        comb = {k: sum_sq_root([h.get(k, zero) for h in heads]) for k in keys}
        out = scale(ar.num(lay.wo), comb)
        return _add(
            out,
            {
                p + "self_attn.out_proj.weight": sum_sq_root(vbar),
                p + "self_attn.out_proj.bias": one,
            },
        )

    def ffn(p: str, lay: Any, y: Any, inp: Form) -> Form:
        w1 = ar.num(lay.w1)
        pre = _add(scale(w1, inp), {p + "linear1.weight": y, p + "linear1.bias": one})
        return _add(
            scale(ar.num(lay.w2), pre),
            {p + "linear2.weight": w1 * y + ar.num(lay.b1), p + "linear2.bias": one},
        )

    e: Form = {"token_embedding": one}
    if cfg.pos_encoding == "learned":
        e["pos_embedding"] = one
    y_out = ar.num(nm.emb_max)
    for i, lay in enumerate(nm.layers):
        p = f"layers.{i}."
        y1 = ar.num(lay.g1) * rd + ar.num(lay.n1)
        y2 = ar.num(lay.g2) * rd + ar.num(lay.n2)
        if cfg.norm_first:
            h = _add(e, attention(p, lay, y1, norm(p + "norm1", lay.g1, e)))
            e = _add(h, ffn(p, lay, y2, norm(p + "norm2", lay.g2, h)))
        else:
            y_in = ar.num(nm.emb_max) if i == 0 else y_out
            h = norm(p + "norm1", lay.g1, _add(e, attention(p, lay, y_in, e)))
            e = norm(p + "norm2", lay.g2, _add(h, ffn(p, lay, y1, h)))
            y_out = y2
    if cfg.norm_first:
        e = norm("final_norm", nm.gf, e)
        y_out = ar.num(nm.gf) * rd + ar.num(nm.nf)
    t = _add(
        scale(ar.num(nm.w), e),
        {
            "readout.weight": ar.ev(LIP["readout_w"], Y_out=y_out),
            "readout.bias": ar.ev(LIP["readout_b"]),
        },
    )
    return t
