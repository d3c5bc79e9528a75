"""Source mutants of ``verify/theory`` (the weakenings a referee plants by hand), generated from
the ast and spliced into the source text, so each mutant is the original file with one
expression rewritten (comments, layout and every other line untouched).

Operators (``Mutant.operator``):

- ``const``: a numeric literal c -> c/2, 2c, c+1, c-1 (ints: c//2 for the half);
- ``binop``: + <-> -, * <-> /, // -> /, and the operator's operand dropped (``drop-left`` /
  ``drop-right``: ``a * b`` -> ``a`` or ``b``, ``a / b`` -> ``a``, ``a + b`` -> ``a`` or ``b``);
- ``pow``: an exponent e -> e + 1, e - 1, e / 2 (numeric exponents are ``const`` mutants), or
  the power dropped (``a ** e`` -> ``a``);
- ``compare``: < <-> <=, > <-> >=, the comparison flipped (< <-> >, <= <-> >=), == <-> !=;
- ``sign``: a unary minus or ``not`` dropped;
- ``augassign``: ``+=`` <-> ``-=``, ``*=`` <-> ``/=``;
- ``return``: ``return e`` -> ``return (e) / 2`` and ``return (e) * 2`` (functions annotated
  to return a number, or not annotated);
- ``call``: ``min`` <-> ``max``, a ``sqrt`` dropped (``math.sqrt(x)`` -> ``x``), ``range``'s
  last bound +-1 (off by one);
- ``boolop``: ``and`` <-> ``or``.

Each mutant records where it sits: the top-level function or class (``scope``; ``<module>``
for module-level code), and its ``context``: ``guard`` (the test of an ``if`` whose body
raises, or an argument of a ``raise``/``check_*`` validation call), ``default`` (a default
argument value), ``decorator``, ``annotation``-free ``body`` otherwise.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mutant", "mutants_of_file", "mutants_of_source"]

_SWAP_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
_SWAP_AUG = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
_CMP = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
}
# return annotations of a number (a return value halved or doubled; unannotated included)
_NUMERIC = ("", "float", "int", "mpmath.mpf", "sp.Rational", "Fraction", "np.ndarray")
_VALIDATORS = ("check_int", "check_real", "checked_probability", "ValidationError")


@dataclass(frozen=True)
class Mutant:
    """One rewritten expression: ``path`` (repository-relative), the span it replaces
    (1-based lines, 0-based character columns), the old and new text, and where it sits."""

    path: str
    operator: str
    line: int
    col: int
    end_line: int
    end_col: int
    old: str
    new: str
    scope: str
    context: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.col}:{self.operator}:{self.new}"

    def label(self) -> str:
        return f"{self.path}:{self.line} [{self.scope}] {self.operator}: {self.old} -> {self.new}"

    def apply(self, source: str) -> str:
        """The source with this mutant's span replaced (``source`` must be the original)."""
        lines = source.splitlines(keepends=True)
        head = "".join(lines[: self.line - 1]) + lines[self.line - 1][: self.col]
        tail = lines[self.end_line - 1][self.end_col :] + "".join(lines[self.end_line :])
        return head + self.new + tail


def _unparse(node: ast.AST) -> str:
    return ast.unparse(node)


def _paren(node: ast.AST) -> str:
    return f"({_unparse(node)})"


def _num(v: float | int) -> str:
    return repr(v)


def _const_variants(v: int | float) -> list[str]:
    if isinstance(v, int):
        out = [v // 2, 2 * v, v + 1, v - 1]
    else:
        out = [v / 2, 2 * v, v + 1, v - 1]
    return [_num(x) for x in out if x != v]


def _binop_variants(node: ast.BinOp) -> Iterator[tuple[str, str]]:
    op = type(node.op)
    if op in _SWAP_BIN:
        new = copy.copy(node)
        new.op = _SWAP_BIN[op]()
        yield "binop", _paren(new)
    if op is ast.FloorDiv:
        new = copy.copy(node)
        new.op = ast.Div()
        yield "binop", _paren(new)
    if op in (ast.Mult, ast.Add):
        yield "drop-right", _paren(node.left)
        yield "drop-left", _paren(node.right)
    elif op in (ast.Div, ast.Sub, ast.FloorDiv):
        yield "drop-right", _paren(node.left)
    if op is ast.Pow:
        yield "pow", _paren(node.left)
        if not isinstance(node.right, ast.Constant):
            e = _paren(node.right)
            for new_e in (f"{e} + 1", f"{e} - 1", f"{e} / 2"):
                yield "pow", f"({_paren(node.left)} ** ({new_e}))"


def _compare_variants(node: ast.Compare) -> Iterator[tuple[str, str]]:
    for i, op in enumerate(node.ops):
        for new_op in _CMP.get(type(op), ()):
            new = copy.copy(node)
            new.ops = list(node.ops)
            new.ops[i] = new_op()
            yield "compare", _paren(new)


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _call_variants(node: ast.Call) -> Iterator[tuple[str, str]]:
    name = _call_name(node)
    if isinstance(node.func, ast.Name) and name in ("min", "max") and not node.keywords:
        new = copy.copy(node)
        new.func = ast.Name(id="max" if name == "min" else "min", ctx=ast.Load())
        yield "call", _unparse(new)
    if name == "sqrt" and len(node.args) == 1 and not node.keywords:
        yield "call", _paren(node.args[0])
    if isinstance(node.func, ast.Name) and name == "range" and node.args:
        for delta in ("+ 1", "- 1"):
            new = copy.copy(node)
            new.args = list(node.args)
            new.args[-1] = ast.parse(f"{_paren(node.args[-1])} {delta}", mode="eval").body
            yield "call", _unparse(new)


class _Collector(ast.NodeVisitor):
    """Walk a module, yielding (node-to-replace, operator, new text, scope, context)."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.AST, str, str, str, str]] = []
        self.scope = "<module>"
        self.context = ["body"]
        self.returns: list[str] = []  # the enclosing functions' return annotations

    def _add(self, node: ast.AST, operator: str, new: str) -> None:
        self.found.append((node, operator, new, self.scope, self.context[-1]))

    def _with_context(self, ctx: str, nodes: list[ast.AST | None]) -> None:
        self.context.append(ctx)
        for n in nodes:
            if n is not None:
                self.visit(n)
        self.context.pop()

    # scopes -----------------------------------------------------------------------------
    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        outer = self.scope
        if outer == "<module>":
            self.scope = node.name
        self._with_context("decorator", list(node.decorator_list))
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                self.visit(stmt)
        else:
            args = node.args
            self._with_context("default", [*args.defaults, *args.kw_defaults])
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring
            self.returns.append(ast.unparse(node.returns) if node.returns else "")
            for stmt in body:
                self.visit(stmt)
            self.returns.pop()
        self.scope = outer

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _def

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant):  # a docstring or a bare literal
            return
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        if not isinstance(node.target, ast.Name):
            self.visit(node.target)

    def visit_arg(self, node: ast.arg) -> None:  # annotations are not code
        return

    # guards -----------------------------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        raises = any(isinstance(s, ast.Raise) for s in node.body)
        self._with_context("guard" if raises else self.context[-1], [node.test])
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)

    def visit_Raise(self, node: ast.Raise) -> None:
        self._with_context("guard", [node.exc, node.cause])

    def visit_Assert(self, node: ast.Assert) -> None:
        self._with_context("guard", [node.test, node.msg])

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:  # f-strings: messages
        return

    # operators --------------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, int | float):
            return
        for new in _const_variants(v):
            self._add(node, "const", new)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        for op, new in _binop_variants(node):
            self._add(node, op, new)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            v = node.operand.value  # a negative literal: a constant of its own
            if isinstance(v, int | float) and not isinstance(v, bool):
                for new in _const_variants(-v):
                    self._add(node, "const", new)
                return
        if isinstance(node.op, ast.USub | ast.Not):
            self._add(node, "sign", _paren(node.operand))
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for op, new in _compare_variants(node):
            self._add(node, op, new)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        new = copy.copy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._add(node, "boolop", _paren(new))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if _call_name(node) in _VALIDATORS:
            self._with_context("guard", [node.func, *node.args, *node.keywords])
            return
        for op, new in _call_variants(node):
            self._add(node, op, new)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        op = type(node.op)
        if op in _SWAP_AUG:
            new = copy.copy(node)
            new.op = _SWAP_AUG[op]()
            self._add(node, "augassign", _unparse(new))
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and self.returns and self.returns[-1] in _NUMERIC:
            e = _paren(node.value)
            self._add(node, "return", f"return {e} / 2")
            self._add(node, "return", f"return {e} * 2")
        self.generic_visit(node)


def _char_col(line: str, byte_col: int) -> int:
    """ast's UTF-8 byte offset as a character offset into ``line``."""
    return len(line.encode()[:byte_col].decode())


def mutants_of_source(source: str, path: str) -> list[Mutant]:
    """Every mutant of one module's source (deduplicated by the text it produces)."""
    tree = ast.parse(source)
    col = _Collector()
    col.visit(tree)
    lines = source.splitlines()
    out: dict[int, Mutant] = {}
    for node, operator, new, scope, context in col.found:
        line, end_line = node.lineno, node.end_lineno
        c = _char_col(lines[line - 1], node.col_offset)
        ec = _char_col(lines[end_line - 1], node.end_col_offset)
        old = ast.get_source_segment(source, node) or ""
        if new == old or new == f"({old})":
            continue
        m = Mutant(path, operator, line, c, end_line, ec, old, new, scope, context)
        out.setdefault(hash(m.apply(source)), m)
    return sorted(out.values(), key=lambda m: (m.line, m.col, m.operator, m.new))


def mutants_of_file(root: Path, path: str) -> list[Mutant]:
    """Every mutant of ``root / path``; each mutant's source still parses."""
    source = (root / path).read_text()
    out = []
    for m in mutants_of_source(source, path):
        ast.parse(m.apply(source))  # a splice that broke the syntax is a bug here
        out.append(m)
    return out
