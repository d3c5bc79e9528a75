"""Chains proved by interval branch and bound over the whole stated domain.

Where the coded function cannot be shown equal to the composition on sympy symbols
(:mod:`verify.proofs.symbolic`), the chain runs the code itself in interval arithmetic with
derivatives (:func:`verify.proofs.box_arith.on_box`) over boxes that cover its *whole* stated
domain, and proves ``|code - composition| <= rtol |composition| + atol`` on each box:

- the difference is enclosed twice, plainly and in the mean value form
  d(m) + sum_i (code_i - composed_i)(box) (x_i - m_i) (axiom ``axiom.mean_value``, the branch
  the box takes being fixed on it), and the box is *closed* when the smaller enclosure is within
  the tolerance; a coded exception (``raises=``) is closed when code and composition raise it on
  the whole box (the branch is decided for every point);
- at the box's midpoint the two are compared exactly (arb points): a difference beyond the
  tolerance there is a counterexample, and the obligation fails naming the point;
- otherwise (a branch the box straddles, an enclosure too wide) the box is bisected along its
  widest side until every box is decided, or the budget runs out (``unknown``: never proved).

A :class:`Var` is one side of the box: ``real`` (compact: an unbounded domain must be mapped to
a compact one by a stated substitution, written in the case), ``int`` (every integer of the
range: relaxed to the real interval while the code only does arithmetic on it, enumerated where
it needs an integer) or ``float`` (every binary64 float of the range, bisected in float order, so
a branch at a float constant is decided exactly). A side with lo > hi is an empty box
(``vacuous``), a zero-width side not declared ``fixed`` a ``degenerate`` one: both are errors.

Evidence: "bnb" (class "chain proved") when every case's box is its whole stated domain;
"subbox" (class "box") when some case covers only a stated sub-box (``sub_box=`` says why).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flint import arb

from verify.proofs.box_arith import Num, Undecided, lift
from verify.proofs.core import Verdict
from verify.proofs.interval import Iv, Undefined

__all__ = [
    "BoxCase",
    "Raises",
    "Var",
    "as_numbers",
    "box_step",
    "check_cases",
    "float_key",
    "key_float",
]

KINDS = ("real", "int", "float")
MAX_BOXES = 20000


def float_key(x: float) -> int:
    """The position of a float in float order (-0.0 just below +0.0)."""
    (i,) = struct.unpack("<q", struct.pack("<d", x))
    return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF) - 1


def key_float(k: int) -> float:
    """The float at a position of :func:`float_key`."""
    bits = k if k >= 0 else ((-k - 1) | (1 << 63))
    return struct.unpack("<d", struct.pack("<q", bits - (1 << 64) if bits >= 1 << 63 else bits))[0]


@dataclass(frozen=True)
class Var:
    """One side of a box: ``name`` in [lo, hi] (``kind`` in :data:`KINDS`); ``fixed``: a
    declared single value (a zero-width side is otherwise degenerate)."""

    name: str
    lo: Any
    hi: Any
    kind: str = "real"
    fixed: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Var {self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        for end in (self.lo, self.hi):
            if isinstance(end, float) and not math.isfinite(end):
                raise ValueError(
                    f"Var {self.name}: bound {end} is not finite (map an unbounded domain to a"
                    " compact one by a stated substitution; inf/nan floats are separate points)"
                )
        if self.kind == "int" and not all(isinstance(e, int) for e in (self.lo, self.hi)):
            raise ValueError(f"Var {self.name}: an int side needs int bounds")
        if self.kind == "float" and not all(isinstance(e, float) for e in (self.lo, self.hi)):
            raise ValueError(f"Var {self.name}: a float side needs float bounds")


@dataclass(frozen=True)
class Raises:
    """The composition's value where the code must raise ``exc`` (outside the statement's
    domain: a probability that is not one)."""

    exc: type[BaseException] | tuple[type[BaseException], ...]


@dataclass(frozen=True)
class BoxCase:
    """A box and the two sides compared on it: ``coded(env)`` and ``composed(env)`` take
    env: name -> a :class:`Num` over the box (or the int/float at a point) and return a Num, a
    number, a tuple of them or :class:`Raises` (``composed``). ``domain``: the stated domain
    this box covers (with the substitution that made it compact); ``sub_box``: why it is only a
    part of the stated domain ("" when it is the whole); ``at_point(numbers)``: the code itself
    at a point given as plain numbers, run where ``coded`` cannot evaluate a midpoint (a
    weakening calling a library on its argument): at a point the code is its own truth."""

    domain: str
    box: tuple[Var, ...]
    coded: Callable[[dict[str, Any]], Any]
    composed: Callable[[dict[str, Any]], Any]
    sub_box: str = ""
    at_point: Callable[[dict[str, Any]], Any] | None = None


def as_numbers(env: dict[str, Any]) -> dict[str, Any] | None:
    """The env of a point as plain numbers (ints, the floats the Nums hold exactly), or None
    when some side is an interval: the code itself can then run there (where its copy in
    interval arithmetic cannot: a weakening that calls a library on its argument)."""
    out: dict[str, Any] = {}
    for name, x in env.items():
        if isinstance(x, Num):
            if x.g is not None or x.v.lo != x.v.hi:
                return None
            f = float(x.v.lo)
            if not arb(f) == x.v.lo:  # not a float: the code cannot be given it
                return None
            x = f
        out[name] = x
    return out


Sides = dict[str, tuple[Any, Any]]  # name -> (lo, hi): Fractions (real, int) or float keys


def _validate(case: BoxCase) -> Verdict | None:
    for v in case.box:
        lo, hi = Fraction(v.lo), Fraction(v.hi)
        if lo > hi:
            return Verdict("vacuous", f"{v.name} in [{v.lo}, {v.hi}]: lo > hi (an empty box)")
        if lo == hi and not v.fixed:
            return Verdict("degenerate", f"{v.name} in [{v.lo}, {v.hi}]: one value, not fixed=")
    return None


def _start(case: BoxCase) -> Sides:
    return {
        v.name: (float_key(v.lo), float_key(v.hi)) if v.kind == "float" else
        (Fraction(v.lo), Fraction(v.hi))
        for v in case.box
    }  # fmt: skip


def _value(kind: str, x: Any) -> Any:
    """A side's end as a number: an int, a Fraction or a float."""
    if kind == "float":
        return key_float(x)
    return int(x) if kind == "int" else x


def _mid(kind: str, lo: Any, hi: Any) -> Any:
    if kind == "real":
        return (lo + hi) / 2
    return (lo + hi) // 2


def _env(case: BoxCase, b: Sides, point: bool) -> tuple[dict[str, Any], list[str]]:
    """(env, the names of the sides carried as variables): at the midpoint (``point``) every
    side is a number; otherwise a side of positive width is a Num with a unit gradient."""
    kinds = {v.name: v.kind for v in case.box}
    wide = [n for n, (lo, hi) in b.items() if not point and lo != hi]
    env: dict[str, Any] = {}
    for name, (lo, hi) in b.items():
        kind = kinds[name]
        if name not in wide:
            x = _value(kind, _mid(kind, lo, hi) if point else lo)
            env[name] = x if kind == "int" else lift(x)
            continue
        ivl = Iv.of(_value(kind, lo), _value(kind, hi))
        k = wide.index(name)
        grad = tuple(Iv.point(int(i == k)) for i in range(len(wide)))
        env[name] = Num(ivl, grad)
    return env, wide


def _tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def _run(fn: Callable[[dict[str, Any]], Any], env: dict[str, Any], raises: tuple) -> Any:
    """fn(env), or the exception class it raised (when it is one the case expects)."""
    try:
        return fn(env)
    except raises as exc:
        return Raises(type(exc))


def _within(d: Iv, p: Iv, rtol: Fraction, atol: Fraction) -> bool:
    """sup |d| <= rtol inf |p| + atol."""
    mag = p.abs()
    return bool(d.abs().hi <= mag.lo * arb(rtol.numerator) / rtol.denominator + _arb(atol))


def _arb(x: Fraction) -> arb:
    return arb(x.numerator) / x.denominator


def _beyond(d: Iv, p: Iv, rtol: Fraction, atol: Fraction) -> bool:
    """inf |d| > rtol sup |p| + atol (proven)."""
    return bool(d.abs().lo > p.abs().hi * _arb(rtol) + _arb(atol))


def _compare_point(got: Any, want: Any, rtol: Fraction, atol: Fraction) -> str:
    """Empty when equal within the tolerance at a point, else why not."""
    gots, wants = _tuple(got), _tuple(want)
    if len(gots) != len(wants):
        return f"{len(gots)} coded values, {len(wants)} composed"
    for g, w in zip(gots, wants, strict=True):
        if isinstance(g, Raises) or isinstance(w, Raises):
            if not _same_raise(g, w):
                return f"coded {_show(g)} vs composed {_show(w)}"
            continue
        if not (_finite(g) and _finite(w)):  # equal only as the same infinity (NaN: never)
            if not (isinstance(g, float) and isinstance(w, float) and g == w):
                return f"coded {_show(g)} vs composed {_show(w)}"
            continue
        d = (lift(g) - lift(w)).v
        if _beyond(d, lift(w).v, rtol, atol):
            return f"coded {_show(g)} vs composed {_show(w)}"
    return ""


def _same_raise(g: Any, w: Any) -> bool:
    """The code (``g``) raised an exception the composition (``w``) says it must."""
    return isinstance(g, Raises) and isinstance(w, Raises) and issubclass(g.exc, w.exc)


def _finite(x: Any) -> bool:
    return not isinstance(x, float) or math.isfinite(x)


def _show(x: Any) -> str:
    if not _finite(x):
        return repr(x)
    if isinstance(x, Raises):
        kinds = x.exc if isinstance(x.exc, tuple) else (x.exc,)
        return f"raises {' or '.join(k.__name__ for k in kinds)}"
    v = lift(x).v
    return f"{float(((v.lo + v.hi) / 2).mid()):.12g}"


def _closed(got: Any, want: Any, mid_got: Any, mid_want: Any, steps: list[Iv],
            rtol: Fraction, atol: Fraction) -> bool:  # fmt: skip
    """Whether the box is decided: every component equal within the tolerance on it
    (``steps``: x_i - m_i over the box for each side carried as a variable)."""
    gots, wants = _tuple(got), _tuple(want)
    mgots, mwants = _tuple(mid_got), _tuple(mid_want)
    for g, w, mg, mw in zip(gots, wants, mgots, mwants, strict=True):
        if isinstance(g, Raises) or isinstance(w, Raises):
            if not _same_raise(g, w):
                return False
            continue
        g, w = lift(g), lift(w)
        if _within(g.v + (-w.v), w.v, rtol, atol):
            continue
        form = lift(mg).v + (-lift(mw).v)  # the mean value form around the midpoint
        for i, step in enumerate(steps):
            slope = (Iv.point(0) if g.g is None else g.g[i]) + -(
                Iv.point(0) if w.g is None else w.g[i])  # fmt: skip
            if not slope.lo == slope.hi == 0:
                form = form + slope * step
        if not _within(form, w.v, rtol, atol):
            return False
    return True


def _num(x: Any) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x)


def _split(case: BoxCase, b: Sides) -> list[Sides] | None:
    """Two halves along the widest side (relative to the start), or None for a point."""
    kinds = {v.name: v.kind for v in case.box}
    start = _start(case)
    best, score = None, Fraction(0)
    for name, (lo, hi) in b.items():
        if lo == hi:
            continue
        s0 = start[name]
        rel = Fraction(hi - lo) / Fraction(s0[1] - s0[0])
        if kinds[name] != "real":
            rel = max(rel, Fraction(1, 10**30))  # a discrete side can always be split
        if best is None or rel > score:
            best, score = name, rel
    if best is None:
        return None
    lo, hi = b[best]
    m = _mid(kinds[best], lo, hi)
    right = m if kinds[best] == "real" else m + 1
    return [{**b, best: (lo, m)}, {**b, best: (right, hi)}]


def _point_of(case: BoxCase, b: Sides) -> dict[str, Any]:
    kinds = {v.name: v.kind for v in case.box}
    out = {}
    for name, (lo, hi) in b.items():
        x = _value(kinds[name], _mid(kinds[name], lo, hi))
        if isinstance(x, Fraction):  # exact where short, the nearest float otherwise
            x = str(x) if x.denominator < 10**20 and abs(x.numerator) < 10**40 else float(x)
        out[name] = x
    return out


@dataclass
class BnbOutcome:
    """``status``: proved / failed / unknown / vacuous / degenerate; boxes decided; the
    counterexample point (failed) or the undecided box (unknown); why."""

    status: str
    boxes: int
    point: dict[str, Any] | None = None
    detail: str = ""


def _weakened(out: Any, weaken: Any) -> Any:
    if weaken == 1:
        return out
    return tuple(x if isinstance(x, Raises) else lift(x) * weaken for x in _tuple(out))


def prove_case(
    case: BoxCase,
    rtol: Fraction,
    atol: Fraction = Fraction(0),
    weaken: Any = 1,
    max_boxes: int = MAX_BOXES,
    raises: tuple[type[BaseException], ...] = (),
) -> BnbOutcome:
    """Branch and bound of one case (module doc); ``weaken`` multiplies the coded value (the
    twin: a planted weakening must be caught)."""
    bad = _validate(case)
    if bad is not None:
        return BnbOutcome(bad.status, 0, detail=bad.detail)

    def coded(env: dict[str, Any]) -> Any:
        return _weakened(case.coded(env), weaken)

    stack, n = [_start(case)], 0
    while stack:
        b = stack.pop()
        n += 1
        if n > max_boxes:
            return BnbOutcome("unknown", n, _point_of(case, b), f"budget of {max_boxes} boxes")
        mid_env, _ = _env(case, b, point=True)
        try:
            mg = _run(coded, mid_env, raises)
        except (Undecided, Undefined, TypeError) as exc:
            numbers = as_numbers(mid_env)
            if case.at_point is None or numbers is None:
                return BnbOutcome("unknown", n, _point_of(case, b), f"at a point: {exc}")
            mg = _run(lambda e: _weakened(case.at_point(e), weaken), numbers, raises)
        try:
            mw = _run(case.composed, mid_env, raises)
        except (Undecided, Undefined) as exc:
            return BnbOutcome("unknown", n, _point_of(case, b), f"undecided at a point: {exc}")
        why = _compare_point(mg, mw, rtol, atol)
        if why:
            return BnbOutcome("failed", n, _point_of(case, b), why)
        env, wide = _env(case, b, point=False)
        if not wide:
            continue  # a point, compared exactly above
        kinds = {v.name: v.kind for v in case.box}
        steps = []
        for name in wide:
            lo, hi = (_num(_value(kinds[name], x)) for x in b[name])
            m = _num(_value(kinds[name], _mid(kinds[name], *b[name])))
            steps.append(Iv.of(lo - m, hi - m))
        try:
            got, want = _run(coded, env, raises), _run(case.composed, env, raises)
            if _closed(got, want, mg, mw, steps, rtol, atol):
                continue
        except (Undecided, Undefined, TypeError, ValueError, OverflowError):
            pass  # a branch straddled, or code that needs numbers: split
        halves = _split(case, b)
        if halves is None:
            return BnbOutcome("unknown", n, _point_of(case, b), "a point left undecided")
        stack.extend(halves)
    return BnbOutcome("proved", n)


def check_cases(
    cases: Iterable[BoxCase],
    rtol: Fraction,
    atol: Fraction = Fraction(0),
    weaken: Any = 1,
    raises: Sequence[type[BaseException]] = (),
    max_boxes: int = MAX_BOXES,
) -> tuple[BnbOutcome, int, bool]:
    """(the first case's outcome that is not proved, or the last proved one; boxes in all;
    whether every case covered its whole stated domain)."""
    total, whole, last = 0, True, BnbOutcome("proved", 0)
    for case in cases:
        out = prove_case(case, rtol, atol, weaken, max_boxes, tuple(raises))
        total += out.boxes
        whole = whole and not case.sub_box
        if out.status != "proved":
            out.detail = f"{case.domain}: {out.detail}"
            return out, total, whole
        last = out
    return last, total, whole


def box_step(
    ob_id: str,
    statement: str,
    step: str,
    doc: str,
    cases: Callable[[], Sequence[BoxCase]],
    domain: str,
    *,
    rtol: Fraction,
    atol: Fraction = Fraction(0),
    raises: Sequence[type[BaseException]] = (),
    facts: Iterable[str] = (),
    max_boxes: int = MAX_BOXES,
) -> None:
    """Register a chain obligation proved by branch and bound (module doc): for every case, the
    coded function of ``ob_id`` (:data:`verify.proofs.chain_code.CODE`) is within ``rtol``
    relative (+ ``atol``) of the composition on the case's whole box, and raises the same
    exception (``raises``) where the composition says it must. Its twin: the coded value times
    1/2, which must be caught at some point."""
    from verify.proofs.chain_code import CODE
    from verify.proofs.methods import custom_step

    name = CODE.get(ob_id, ob_id)
    rtol, atol = Fraction(rtol), Fraction(atol)
    sub = any(c.sub_box for c in cases())
    tol = (f"|code - composition| <= {rtol} |composition|" + (f" + {atol}" if atol else "")
           if rtol or atol else "code = composition exactly")  # fmt: skip

    def prove() -> Verdict:
        out, n, whole = check_cases(cases(), rtol, atol, raises=raises, max_boxes=max_boxes)
        if out.status != "proved":
            return Verdict(out.status, f"{name}: {out.detail}", out.point)
        where = "the whole stated domain" if whole else "a stated sub-box"
        return Verdict("proved", f"{name}: {tol} on {where}, {n} boxes")

    def twin() -> Verdict:
        out, _, _ = check_cases(cases(), rtol, atol, Fraction(1, 2), raises, max_boxes)
        if out.status == "failed":
            return Verdict("refuted", f"halved code caught: {out.detail}", out.point)
        return Verdict("not refuted", f"the halved code: {out.status} {out.detail}")

    custom_step(
        ob_id,
        statement,
        step,
        doc,
        "chain",
        f"{name} in interval arithmetic: {tol} by branch and bound over {domain}",
        f"{name} times 1/2",
        prove,
        twin,
        facts=tuple(facts),
        evidence="subbox" if sub else "bnb",
    )
