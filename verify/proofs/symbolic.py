"""The code of ``verify.theory`` evaluated on sympy symbols: one algorithm, another arithmetic.

:func:`symbolic` returns a copy of a coded function that runs the *same bytecode* with another
arithmetic bound to its names (mpmath's "one algorithm, several arithmetics"):

- its float literals (``4.0``, ``0.5``, ``1.0``, defaults too) become the exact rationals they
  are (a binary float is a rational), so ``gain / 4.0`` is ``gain/4``;
- the modules it calls through (``math``, ``mpmath``, ``scipy.special``, ``scipy.stats``), the
  builtins ``float``, ``max``, ``min`` and ``Fraction`` are bound to sympy's functions
  (``math.sqrt`` -> ``sqrt``, ``special.gammaincc(a, x)`` -> ``uppergamma(a, x) / gamma(a)``,
  ``max`` -> ``Max``, ``Fraction(p, q)`` -> ``p/q``, ...);
- the validators (``check_real``, ``check_int``, ``checked_probability``) pass their value on:
  they check numbers, which a symbol is not (the chain obligations state the domain instead);
- every function and method it calls in ``verify.theory`` (any module) or in its own module is
  copied the same way, looked up when :func:`symbolic` is called (a monkeypatched or edited
  function is what runs).

Nothing of the formula is written twice: a coded factor dropped, halved or given another
exponent changes the symbolic value. A branch on a symbolic condition (``if s <= 0``) is decided
by sympy's assumptions or raises ``TypeError``: a chain obligation then states the branch's
domain by a substitution that decides it (``t = (1 + u)^K``, u > 0). The float64 rounding of the
code's own evaluation is outside this comparison (it is exact arithmetic on the same formula).
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import itertools
import sysconfig
import types
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import sympy as sp

from verify.proofs.chain_step import Comparison, chain_step

__all__ = ["exact", "same", "symbolic"]

_THEORY = "verify.theory"
_STDLIB = sysconfig.get_paths()["stdlib"]


def exact(x: Any) -> Any:
    """A number as the exact sympy number it is (a float is a binary rational); a 0-d array as
    its element; sympy expressions unchanged."""
    if isinstance(x, np.ndarray) and x.shape == ():
        x = x.item()
    if isinstance(x, sp.Basic):
        floats = x.atoms(sp.Float)
        return x.xreplace({f: sp.Rational(float(f)) for f in floats}) if floats else x
    if isinstance(x, bool):
        return sp.Integer(int(x))
    if isinstance(x, (float, np.floating)):
        return sp.Rational(float(x))
    if isinstance(x, (int, np.integer)):
        return sp.Integer(int(x))
    return sp.sympify(x)


def _float(x: Any = 0.0) -> Any:
    return exact(x)


def _extremum(sym_fn: Callable[..., Any], py_fn: Callable[..., Any]) -> Callable[..., Any]:
    def ext(*args: Any, **kwargs: Any) -> Any:
        items = list(args[0]) if len(args) == 1 else list(args)
        if not any(isinstance(v, sp.Basic) for v in items):
            return py_fn(items, **kwargs)
        return sym_fn(*(exact(v) for v in items))

    return ext


def _ln(x: Any) -> Any:
    """log, with log(b^e) = e log(b) for b > 0 and real e (sympy's own rule, no force)."""
    return sp.expand_log(sp.log(exact(x)))


def _log(x: Any, base: Any = None) -> Any:
    return _ln(x) if base is None else _ln(x) / _ln(base)


def _fsum(xs: Iterable[Any]) -> Any:
    return sp.Add(*(exact(x) for x in xs))


def _isfinite(x: Any) -> bool:
    return bool(exact(x).is_finite)


def _pass(_name: str, value: Any, *args: Any, **kwargs: Any) -> Any:
    """A validator's symbolic stand-in: the value, unchecked."""
    return value


_MATH = types.SimpleNamespace(
    sqrt=sp.sqrt,
    exp=sp.exp,
    log=_log,
    log10=lambda x: _ln(x) / sp.log(10),
    log2=lambda x: _ln(x) / sp.log(2),
    log1p=lambda x: _ln(1 + x),
    pi=sp.pi,
    e=sp.E,
    inf=sp.oo,
    gamma=sp.gamma,
    lgamma=sp.loggamma,
    comb=sp.binomial,
    factorial=sp.factorial,
    hypot=lambda a, b: sp.sqrt(a**2 + b**2),
    ceil=sp.ceiling,
    floor=sp.floor,
    isfinite=_isfinite,
    isnan=lambda x: False,
    fsum=_fsum,
)
_MPMATH = types.SimpleNamespace(
    mpf=exact,
    exp=sp.exp,
    sqrt=sp.sqrt,
    log=_log,
    log10=lambda x: _ln(x) / sp.log(10),
    fsum=_fsum,
    inf=sp.oo,
    pi=sp.pi,
    gamma=sp.gamma,
)
_SPECIAL = types.SimpleNamespace(
    gammaln=sp.loggamma,
    gammaincc=lambda a, x: sp.uppergamma(a, x) / sp.gamma(a),
    gammainc=lambda a, x: sp.lowergamma(a, x) / sp.gamma(a),
    gamma=sp.gamma,
)
_STATS = types.SimpleNamespace(
    chi2=types.SimpleNamespace(
        cdf=lambda x, k: sp.lowergamma(exact(k) / 2, exact(x) / 2) / sp.gamma(exact(k) / 2)
    )
)
# name in a module's globals -> what it is bound to in the symbolic copy
_NAMES: dict[str, Any] = {
    "math": _MATH,
    "mpmath": _MPMATH,
    "special": _SPECIAL,
    "stats": _STATS,
    "float": _float,
    "max": _extremum(sp.Max, builtins.max),
    "min": _extremum(sp.Min, builtins.min),
    "Fraction": lambda num, den=1: exact(num) / exact(den),
    "check_real": _pass,
    "check_int": _pass,
    "checked_probability": _pass,
}


def _exact_consts(code: types.CodeType) -> types.CodeType:
    """``code`` with every float literal (nested code objects too) an exact rational."""
    consts = tuple(
        sp.Rational(c)
        if type(c) is float
        else _exact_consts(c)
        if isinstance(c, types.CodeType)
        else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


def _names(code: types.CodeType) -> set[str]:
    """The global names a code object (and the code nested in it) reads."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _uses_shims(cls: type) -> bool:
    return any(
        isinstance(v, (types.FunctionType, staticmethod, classmethod))
        and bool(_names(getattr(v, "__func__", v).__code__) & set(_NAMES))
        for v in vars(cls).values()
    )


class _Env:
    """One symbolic copy of the ``verify.theory`` modules a call reaches (built lazily)."""

    def __init__(self, names: dict[str, Any] | None = None) -> None:
        self.names = _NAMES if names is None else names  # the arithmetic (interval: chain_boxes)
        self.globs: dict[int, dict[str, Any]] = {}
        self.memo: dict[int, Any] = {}

    @staticmethod
    def ours(fn: types.FunctionType) -> bool:
        """Code of verify.theory, or a user's (a test's weakening): not a library's, nor the
        rest of verify's (validation, the model)."""
        module = fn.__module__ or ""
        if module.startswith(_THEORY):
            return True
        if module.split(".")[0] == "verify":
            return False
        path = fn.__code__.co_filename
        return "-packages" not in path and not path.startswith(_STDLIB)

    def module(self, real: dict[str, Any]) -> dict[str, Any]:
        """The symbolic copy of a module's globals (``real``: the module's own dict)."""
        if id(real) not in self.globs:
            g: dict[str, Any] = dict(real)
            self.globs[id(real)] = g
            for key, value in real.items():
                g[key] = self.names[key] if key in self.names else self.copy(value)
            for key, value in self.names.items():
                g.setdefault(key, value)
        return self.globs[id(real)]

    def copy(self, obj: Any) -> Any:
        """``obj`` with the symbolic arithmetic if it is code of ``verify.theory``."""
        if id(obj) in self.memo:
            return self.memo[id(obj)]
        if isinstance(obj, types.FunctionType) and self.ours(obj):
            g = self.module(obj.__globals__)
            cells = tuple(types.CellType() for _ in obj.__closure__ or ())
            new = types.FunctionType(
                _exact_consts(obj.__code__), g, obj.__name__, None, cells or None
            )
            self.memo[id(obj)] = new
            new.__defaults__ = tuple(exact(d) if type(d) is float else d
                                     for d in obj.__defaults__ or ())  # fmt: skip
            new.__kwdefaults__ = obj.__kwdefaults__
            for cell, old in zip(cells, obj.__closure__ or (), strict=True):
                with contextlib.suppress(ValueError):  # an empty cell stays empty
                    cell.cell_contents = self.copy(old.cell_contents)
            return new
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith(_THEORY):
            proxy = types.SimpleNamespace()
            self.memo[id(obj)] = proxy
            for key, value in vars(obj).items():
                if not key.startswith("__"):
                    setattr(proxy, key, self.copy(value))
            return proxy
        if (
            isinstance(obj, type)
            and obj.__module__.startswith(_THEORY)
            and not dataclasses.is_dataclass(obj)
            and _uses_shims(obj)
        ):
            ns: dict[str, Any] = {}
            sub = type(obj.__name__, (obj,), ns)
            self.memo[id(obj)] = sub
            for key, value in vars(obj).items():
                if isinstance(value, staticmethod):
                    setattr(sub, key, staticmethod(self.copy(value.__func__)))
                elif isinstance(value, classmethod):
                    setattr(sub, key, classmethod(self.copy(value.__func__)))
                elif isinstance(value, types.FunctionType):
                    setattr(sub, key, self.copy(value))
            return sub
        return obj


def symbolic(fn: Callable[..., Any], overrides: dict[str, Any] | None = None) -> Callable[..., Any]:
    """``fn`` (code of ``verify.theory``) running in the symbolic arithmetic (module doc); its
    result with numbers made exact (:func:`exact`, elementwise in tuples and lists).
    ``overrides``: names bound to something else in every module copy the call reaches (an
    induction step binds the recursive call to the hypothesis)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"{fn!r} is not a Python function")
    env = _Env()
    copied = env.copy(fn)
    for name, value in (overrides or {}).items():  # in every module copy the call reaches
        for g in env.globs.values():
            if name in g:
                g[name] = value
        for proxy in env.memo.values():
            if isinstance(proxy, types.SimpleNamespace) and hasattr(proxy, name):
                setattr(proxy, name, value)

    def run(*args: Any, **kwargs: Any) -> Any:
        out = copied(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(exact(v) for v in out)
        if isinstance(out, dict):
            return {k: exact(v) for k, v in out.items()}
        return exact(out)

    return run


_EXTREMA = (sp.Min, sp.Max)


def same(a: Any, b: Any) -> bool:
    """Whether two expressions are equal as functions of their symbols (under the symbols'
    assumptions): their difference expands or simplifies to 0; a Min/Max (Piecewise) is equal
    when its arguments are, matched in some order. False means "not shown equal"."""
    a, b = exact(a), exact(b)
    if a == b:
        return True
    if a.func in _EXTREMA and a.func == b.func and len(a.args) == len(b.args):
        # pair the arguments: equal ones first (structurally), then the rest in some order;
        # a pairing whose values differ at a point is skipped (it cannot be an identity)
        rest_a = [x for x in a.args if x not in b.args]
        rest_b = [y for y in b.args if y not in a.args]
        if len(rest_a) != len(rest_b):
            return False
        return any(
            all(not _differs_at_a_point(x, y) and same(x, y)
                for x, y in zip(rest_a, perm, strict=True))
            for perm in itertools.permutations(rest_b)
        )  # fmt: skip
    if a.func is sp.Piecewise and b.func is sp.Piecewise and len(a.args) == len(b.args):
        return all(
            same(x.expr, y.expr) and x.cond == y.cond for x, y in zip(a.args, b.args, strict=True)
        )
    diff = a - b
    if sp.expand(diff) == 0:
        return True
    if a.is_Mul and b.is_Mul and sp.simplify(a / b) == 1:  # products: their ratio
        return True
    # powers of positive bases (sympy's rules, no force), binomials and gammas as functions
    for form in (sp.powdenest(sp.expand_power_base(diff)), sp.expand_func(diff)):
        if sp.expand(form) == 0 or sp.simplify(form) == 0:
            return True
    return sp.simplify(diff) == 0


def sub(expr: sp.Expr, **values: Any) -> sp.Expr:
    """A step expression with its symbols (by name) replaced by ``values`` (symbols of the
    chain's domain, with their assumptions)."""
    expr = sp.sympify(expr)
    return expr.xreplace({s: exact(values[s.name]) for s in expr.free_symbols})


Domain = dict[str, str]


class Call:
    """The coded function of a chain obligation applied to symbolic arguments: called, it runs
    in the symbolic arithmetic; :meth:`numeric` runs the code itself at numbers given for the
    symbols (the counterexample search when the code cannot run on symbols)."""

    def __init__(self, ob_id: str, *args: Any) -> None:
        self.ob_id, self.args = ob_id, args

    def __call__(self) -> Any:
        return code_on_symbols(self.ob_id)(*self.args)

    def numeric(self, values: dict[sp.Symbol, Any]) -> Any:
        from verify.proofs.chain_code import code

        def num(x: Any) -> Any:
            if not isinstance(x, sp.Basic):
                return x
            v = sp.sympify(x).xreplace(values)
            return int(v) if v.is_integer else float(v)

        return code(self.ob_id)(*(num(x) for x in self.args))


SymCase = tuple[Domain, Callable[[], Any], Callable[[], Any]]
_TRIES = 30


def _numbers(symbols: Iterable[sp.Symbol], rng: Any) -> dict[sp.Symbol, Any]:
    """Values in each symbol's domain: integers 2..12, positive reals in [1/10, 10], reals in
    [-3, 3] (rationals: exact in the composition)."""
    out: dict[sp.Symbol, Any] = {}
    for s in symbols:
        if s.is_integer:
            out[s] = sp.Integer(int(rng.integers(2, 13)))
        elif s.is_nonnegative:
            out[s] = sp.Rational(int(rng.integers(1, 1000)), 100)
        else:
            out[s] = sp.Rational(int(rng.integers(-300, 301)), 100)
    return out


def _counterexample(coded: Call, composed: Callable[[], Any], weaken: Any) -> dict | None:
    """A point of the domain where the code (times ``weaken``), run on numbers, differs from
    the composition by more than 1e-6 relative; None if none was found."""
    want = composed()
    wants = want if isinstance(want, tuple) else (want,)
    syms = set().union(*(sp.sympify(x).free_symbols for x in (*coded.args, *wants)
                         if isinstance(x, sp.Basic)))  # fmt: skip
    rng = np.random.default_rng(0)
    for _ in range(_TRIES):
        values = _numbers(sorted(syms, key=str), rng)
        try:
            got = coded.numeric(values)
            gots = got if isinstance(got, tuple) else (got,)
            for g, w in zip(gots, wants, strict=True):
                g, w = float(g) * float(weaken), float(sp.N(w.xreplace(values), 30))
                if abs(g - w) > 1e-6 * (abs(g) + abs(w)):
                    return {str(k): str(v) for k, v in values.items()}
        except (TypeError, ValueError, ArithmeticError, OverflowError):
            continue
    return None


def _differs_at_a_point(a: sp.Expr, b: sp.Expr) -> bool:
    """Whether a and b take values more than 1e-9 apart (relative, 30 digits) at some point of
    their symbols' domains (the twins' quick refutation; True is a proof of inequality)."""
    syms = sorted(sp.sympify(a - b).free_symbols, key=str)
    rng = np.random.default_rng(1)
    for _ in range(8):
        values = _numbers(syms, rng)
        try:
            va = complex(sp.N(sp.sympify(a).xreplace(values), 30))
            vb = complex(sp.N(sp.sympify(b).xreplace(values), 30))
        except (TypeError, ValueError, ArithmeticError):
            continue
        if all(np.isfinite([va, vb])) and abs(va - vb) > 1e-9 * (abs(va) + abs(vb)):
            return True
    return False


def _short(text: str, width: int = 240) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _compare(cases: Callable[[], Iterable[SymCase]], weaken: Any = 1) -> tuple[int, Any, str]:
    """(cases compared, the first domain where code (times ``weaken``) is not shown equal to the
    composition, why)."""
    n = 0
    for dom, coded, composed in cases():
        n += 1
        try:
            got = coded()
        except (TypeError, ValueError, ArithmeticError, AttributeError) as exc:
            if isinstance(coded, Call):
                point = _counterexample(coded, composed, weaken)
                if point is not None:
                    return n, {**dom, **point}, "the code run on numbers differs there"
            return n, dom, f"the code could not be evaluated on symbols: {exc}"
        want = composed()
        gots = got if isinstance(got, tuple) else (got,)
        wants = want if isinstance(want, tuple) else (want,)
        if len(gots) != len(wants):
            return n, dom, f"{len(gots)} coded values, {len(wants)} composed"
        for g, w in zip(gots, wants, strict=True):
            if weaken != 1 and _differs_at_a_point(exact(g) * weaken, w):
                return n, dom, _short(f"coded {exact(g) * weaken} vs composed {w}")
            if not same(exact(g) * weaken, w):
                return n, dom, _short(f"coded {exact(g) * weaken} vs composed {w}")
    return n, None, ""


SYMBOLIC = Comparison(
    claim="evaluated on symbols equals the composition of the steps, for every {domain}",
    proved="- composition = 0 symbolically ({n} cases)",
    passed_halved="the halved code was shown equal",
    caught_halved="halved code differs",
    half=sp.Rational(1, 2),
    undecided="the code could not",
)


def symbolic_step(
    ob_id: str,
    statement: str,
    step: str,
    doc: str,
    cases: Callable[[], Iterable[SymCase]],
    domain: str,
    facts: Iterable[str] = (),
    evidence: str = "symbolic",
) -> None:
    """Register a chain obligation proved symbolically: for each case (a branch or a structure
    of the code), the coded function of ``ob_id`` (:data:`verify.proofs.chain.CODE`) evaluated
    on symbols (:func:`symbolic`) equals the composition of the steps (:func:`same`) for every
    value of ``domain``. Its twin: the coded function times 1/2, which must differ somewhere.
    ``evidence``: "symbolic", or "sizes" when some size of the domain is enumerated (heads)."""
    chain_step(
        ob_id,
        statement,
        step,
        doc,
        lambda weaken: _compare(cases, weaken),
        SYMBOLIC,
        facts=facts,
        evidence=evidence,
        domain=domain,
    )


def code_on_symbols(ob_id: str) -> Callable[..., Any]:
    """The coded function of a chain obligation (looked up now), in the symbolic arithmetic."""
    from verify.proofs.chain_code import code

    return symbolic(code(ob_id))
