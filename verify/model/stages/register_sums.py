"""Per-string sums in vector registers, written in LLVM IR (as ``stages.simd``): a layer
norm's moments, the sums of its scalar bound and its affine map (``ln_block``), and column sums
over the rows of (s, d, nb) arrays (``dots_rows``, ``mix_rows``, ``dist2_rows``,
``norms_rows``). Several vectors of 8 strings run together, so the sums form independent
dependency chains; each sum runs in the order of the Numba loop it replaced, with one IEEE
rounding per ``fadd``/``fmul`` (no FMA, no reassociation): bit-identical to those loops
(``tests/test_model_simd.py`` checks them against sequential numpy loops).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from verify.model.stages.simd import LANES

# rows of the layer-norm scratch ``ls`` (LS_ROWS, nb), one string per column: written by
# ``ln_block``, read by ``stages.layer_norm`` and its callers
LS_MEAN = 0  # mean of the input
LS_VAR = 1  # biased variance
LS_Z = 2  # z = 1 / sqrt(var + eps) (torch's form; ``layer_norm.ln_coefficient``)
LS_RZ = 3  # a bound of |z_exact - z|
LS_SABS = 4  # sum_i |v_i|
LS_CMAX = 5  # max_i |c_i|
LS_CSUM = 6  # sum_i |c_i|
LS_SS = 7  # sum_i c_i^2 (d var)
LS_SC = 8  # sum_i c_i (= sum_i (c_i + 0), see ``ln_block``)
LS_ROWS = 9
# vectors of 8 strings whose sums run together (independent dependency chains: each sum is
# sequential, for bit-identity), without and with the six sums of the bounds (registers)
LN_GROUP = 8
LN_GROUP_BOUNDS = 4


SUM_GROUP = 8  # vectors of 8 strings whose column sums run together (independent chains)


def _vec_ptr(builder, arr, index):  # pragma: no cover - code generation
    """A pointer to the 8 doubles arr.data[index:index + 8]."""
    vptr = ir.VectorType(ir.DoubleType(), LANES).as_pointer()
    return builder.bitcast(builder.gep(arr.data, [index]), vptr)


def _row_ptr(builder, arr, row, col, nb):  # pragma: no cover - code generation
    """A pointer to arr[row, col:col + 8] of an (., nb) array."""
    return _vec_ptr(builder, arr, builder.add(builder.mul(row, nb), col))


def _splat(builder, value):  # pragma: no cover - code generation
    """value (a double) in all 8 lanes of a vector."""
    vec = ir.VectorType(ir.DoubleType(), LANES)
    undef = ir.Constant(vec, ir.Undefined)
    first = builder.insert_element(undef, value, ir.Constant(ir.IntType(64), 0))
    lanes = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)
    return builder.shuffle_vector(first, undef, lanes)


def _vec_fn(builder, name: str, n_args: int = 1):  # pragma: no cover - code generation
    """The LLVM intrinsic ``name`` on <8 x double> (llvm.fabs.v8f64, llvm.sqrt.v8f64)."""
    vec = ir.VectorType(ir.DoubleType(), LANES)
    return cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vec, [vec] * n_args), name
    )


def _max_into(builder, slot, value):  # pragma: no cover - code generation
    """slot <- value where value > slot (a NaN value is skipped), as ``dense.col_absmax``."""
    cur = builder.load(slot)
    builder.store(builder.select(builder.fcmp_ordered(">", value, cur), value, cur), slot)


def _over_vector_groups(builder, nb, size: int, emit) -> None:  # pragma: no cover - codegen
    """emit(cols) for the vectors of 8 strings of nb columns: size vectors at a time (cols,
    their column offsets), then the remaining ones one by one."""
    i64 = ir.IntType(64)
    n_vec = builder.udiv(nb, ir.Constant(i64, LANES))
    n_grp = builder.udiv(n_vec, ir.Constant(i64, size))
    with cgutils.for_range(builder, n_grp) as loop:
        base = builder.mul(loop.index, ir.Constant(i64, size * LANES))
        emit([builder.add(base, ir.Constant(i64, k * LANES)) for k in range(size)])
    first = builder.mul(n_grp, ir.Constant(i64, size))
    with cgutils.for_range(builder, builder.sub(n_vec, first)) as loop:
        emit([builder.mul(builder.add(first, loop.index), ir.Constant(i64, LANES))])


def _ln_block_codegen(context, builder, signature, args):  # pragma: no cover - code generation
    """The code generator of ``ln_block`` (see there)."""
    v, out, ls, gain, bias = (
        context.make_array(signature.args[k])(context, builder, args[k]) for k in range(5)
    )
    eps, bounds, affine, annotated = args[5:9]
    i64 = ir.IntType(64)
    dbl = ir.DoubleType()
    vec = ir.VectorType(dbl, LANES)
    d, nb = cgutils.unpack_tuple(builder, v.shape, 2)
    zero = ir.Constant(vec, [0.0] * LANES)
    one = ir.Constant(vec, [1.0] * LANES)
    fabs = _vec_fn(builder, "llvm.fabs.v8f64")
    sqrt = _vec_fn(builder, "llvm.sqrt.v8f64")

    def load(base, row, col):
        return builder.load(_row_ptr(builder, base, row, col, nb), align=8)

    def store(value, base, row, col):
        builder.store(value, _row_ptr(builder, base, row, col, nb), align=8)

    d_vec = _splat(builder, builder.sitofp(d, dbl))
    dm1_vec = _splat(builder, builder.sitofp(builder.sub(d, ir.Constant(i64, 1)), dbl))
    eps_vec = _splat(builder, eps)
    is_annotated = builder.icmp_signed("!=", annotated, ir.Constant(i64, 0))
    rows = {"ss": LS_SS, "sabs": LS_SABS, "csum": LS_CSUM, "cmax": LS_CMAX, "sc": LS_SC}

    def group(cols, with_bounds, with_affine):
        """The vectors of strings at cols (a list of column offsets) together."""
        acc = [cgutils.alloca_once_value(builder, zero) for _ in cols]
        with cgutils.for_range(builder, d) as loop:
            for k, col in enumerate(cols):
                x = load(v, loop.index, col)
                builder.store(builder.fadd(builder.load(acc[k]), x), acc[k])
        means = [builder.fdiv(builder.load(a), d_vec) for a in acc]
        names = tuple(rows) if with_bounds else ("ss",)
        slots = [{n: cgutils.alloca_once_value(builder, zero) for n in names} for _ in cols]
        with cgutils.for_range(builder, d) as loop:
            e = loop.index
            for k, col in enumerate(cols):
                x = load(v, e, col)
                cv = builder.fsub(x, means[k])
                store(cv, out, e, col)
                terms = {"ss": builder.fmul(cv, cv)}
                if with_bounds:
                    ac = builder.call(fabs, [cv])
                    terms.update(sabs=builder.call(fabs, [x]), csum=ac, sc=cv)
                    _max_into(builder, slots[k]["cmax"], ac)
                for n, term in terms.items():
                    builder.store(builder.fadd(builder.load(slots[k][n]), term), slots[k][n])
        zs = []
        for k, col in enumerate(cols):
            store(means[k], ls, ir.Constant(i64, LS_MEAN), col)
            for n in names:
                store(builder.load(slots[k][n]), ls, ir.Constant(i64, rows[n]), col)
            ss = builder.load(slots[k]["ss"])
            var = builder.fdiv(ss, d_vec)
            store(var, ls, ir.Constant(i64, LS_VAR), col)
            z_torch = builder.fdiv(one, builder.call(sqrt, [builder.fadd(var, eps_vec)]))
            std = builder.call(sqrt, [builder.fdiv(ss, dm1_vec)])  # the unbiased std
            z_annotated = builder.fdiv(one, builder.fadd(std, eps_vec))
            zs.append(builder.select(is_annotated, z_annotated, z_torch))
            store(zs[k], ls, ir.Constant(i64, LS_Z), col)
        if with_affine:
            with cgutils.for_range(builder, d) as loop:
                e = loop.index
                gv = _splat(builder, builder.load(builder.gep(gain.data, [e])))
                bv = _splat(builder, builder.load(builder.gep(bias.data, [e])))
                for k, col in enumerate(cols):
                    cz = builder.fmul(load(out, e, col), zs[k])
                    store(builder.fadd(builder.fmul(cz, gv), bv), out, e, col)

    def by_affine(with_bounds):  # one copy of the loops per (bounds, affine)
        size = LN_GROUP_BOUNDS if with_bounds else LN_GROUP
        with builder.if_else(builder.icmp_signed("!=", affine, ir.Constant(i64, 0))) as (
            aff,
            plain,
        ):
            for flag, branch in ((True, aff), (False, plain)):
                with branch:
                    _over_vector_groups(
                        builder, nb, size, lambda cols, f=flag: group(cols, with_bounds, f)
                    )

    with builder.if_else(builder.icmp_signed("!=", bounds, ir.Constant(i64, 0))) as (yes, no):
        with yes:
            by_affine(True)
        with no:
            by_affine(False)
    return context.get_dummy_value()


@intrinsic
def ln_block(typingctx, v, out, ls, gain, bias, eps, bounds, affine, annotated):  # pragma: no cover
    """The sums of a layer norm over the rows of v (d, nb), nb a multiple of 8, for LN_GROUP
    vectors of 8 strings at a time with the sums in registers: ls[LS_MEAN] = (sum_i v_i) /
    d, out_i = c_i = v_i - mean, ls[LS_SS] = sum_i c_i^2, ls[LS_VAR] = ss / d, ls[LS_Z] = 1
    / sqrt(var + eps), or with annotated != 0 1 / (sqrt(ss / (d - 1)) + eps) (the annotated
    form, ``stages.layer_norm.ln_coefficient``); with bounds != 0 also the rows LS_SABS =
    sum |v_i|, LS_CSUM = sum |c_i|, LS_CMAX = max |c_i| (from 0, NaN skipped), LS_SC = sum
    c_i; with affine != 0, out_i = c_i z gain_i + bias_i instead of c_i. Every sum runs i =
    0, 1, ... from 0.0, each value with the operations of the Numba loops it replaces in
    ``stages.layer_norm`` and ``dd_l2.layer_norm_lipschitz`` at a zero low part (bit-
    identical to them). There the sums are of c_i + 0 and of |c_i| + |c_i + 0|: a sum from
    +0.0 never becomes -0.0, so adding c_i + 0 (+0.0 where c_i = -0.0) gives what adding c_i
    gives (LS_SC), and |c_i| + |c_i| = 2 |c_i| with every partial sum doubled exactly
    (binary scaling; sums of doubles below the normal range are exact; overflow to inf in
    both or neither): that sum is 2 LS_CSUM."""
    sig = types.void(v, out, ls, gain, bias, eps, bounds, affine, annotated)
    return sig, _ln_block_codegen


def _column_sums_codegen(kind: str, heads: int = 1):  # pragma: no cover - code generation
    """The code generator of ``dots_rows`` ("dots"), ``mix_rows`` ("mix"), ``dist2_rows``
    ("dist2") and ``norms_rows`` ("norms"): for each output row r and vector of 8 strings, a
    sum over an inner index m from a start value, term by term in the order m = 0, 1, ..., in
    a register; SUM_GROUP vectors at a time (independent chains). ``heads`` = 2 ("dots" and
    "mix" only): two sums of the same x at once (``dots_rows2``, ``mix_rows2``), each value
    loaded once for both, each sum by the operations of the one-head intrinsic."""

    def codegen(context, builder, signature, args):
        pairs = zip(signature.args, args, strict=True)
        arrs = [context.make_array(t)(context, builder, a) for t, a in pairs]
        zero = ir.Constant(ir.VectorType(ir.DoubleType(), LANES), [0.0] * LANES)
        if kind == "dots" and heads == 2:  # out_h[j] = init_h + sum_k a_h[k] x[j, k]
            a, a2, x, init, init2, out, out2 = arrs
        elif kind == "dots":  # out[j] = init + sum_k a[k] x[j, k]
            a, x, init, out = arrs
        elif kind == "mix" and heads == 2:  # out_h[k] = 0 + sum_j p_h[j] x[j, k]
            p, p2, x, out, out2 = arrs
        elif kind == "mix":  # out[k] = 0 + sum_j p[j] x[j, k]
            p, x, out = arrs
        elif kind == "dist2":  # out[j] = 0 + sum_k (x[j, k] - m[k])^2
            x, m, out = arrs
        else:  # norms: out[j] = 0 + sum_k (|x[j, k]| + 0)^2, out2[j] = max_k |x[j, k]|
            x, out, out2 = arrs
            fabs = _vec_fn(builder, "llvm.fabs.v8f64")
        s, d, nb = cgutils.unpack_tuple(builder, x.shape, 3)
        n_out, n_in = (d, s) if kind == "mix" else (s, d)

        def load(ptr):
            return builder.load(ptr, align=8)

        def x_at(j, k, col):  # x[j, k, col:col + 8]
            return _row_ptr(builder, x, builder.add(builder.mul(j, d), k), col, nb)

        def group(r, cols):
            if heads == 2:
                return group2(r, cols)
            if kind == "dots":
                starts = [load(_vec_ptr(builder, init, col)) for col in cols]
            else:
                starts = [zero for _ in cols]
            accs = [cgutils.alloca_once_value(builder, v0) for v0 in starts]
            maxs = (
                [cgutils.alloca_once_value(builder, zero) for _ in cols] if kind == "norms" else []
            )
            with cgutils.for_range(builder, n_in) as loop:
                mi = loop.index
                for k, (acc, col) in enumerate(zip(accs, cols, strict=True)):
                    if kind == "norms":  # as dense.col_absmax and dd_l2.abs_l2 at xl = 0
                        ax = builder.call(fabs, [load(x_at(r, mi, col))])
                        _max_into(builder, maxs[k], ax)
                        t = builder.fadd(ax, zero)
                        term = builder.fmul(t, t)
                    elif kind == "dots":
                        term = builder.fmul(
                            load(_row_ptr(builder, a, mi, col, nb)), load(x_at(r, mi, col))
                        )
                    elif kind == "mix":
                        term = builder.fmul(
                            load(_row_ptr(builder, p, mi, col, nb)), load(x_at(mi, r, col))
                        )
                    else:
                        m_k = load(_row_ptr(builder, m, mi, col, nb))
                        dx = builder.fsub(load(x_at(r, mi, col)), m_k)
                        term = builder.fmul(dx, dx)
                    builder.store(builder.fadd(builder.load(acc), term), acc)
            for k, (acc, col) in enumerate(zip(accs, cols, strict=True)):
                builder.store(builder.load(acc), _row_ptr(builder, out, r, col, nb), align=8)
                if kind == "norms":
                    builder.store(builder.load(maxs[k]), _row_ptr(builder, out2, r, col, nb),
                                  align=8)  # fmt: skip

        def group2(r, cols):  # two sums per (r, col): (a, out) and (a2, out2), or p's
            wts, inits, outs = ((a, a2), (init, init2), (out, out2)) if kind == "dots" else (
                (p, p2), None, (out, out2))  # fmt: skip
            accs = [
                [
                    cgutils.alloca_once_value(
                        builder, load(_vec_ptr(builder, inits[h], col)) if inits else zero
                    )
                    for col in cols
                ]
                for h in range(2)
            ]
            with cgutils.for_range(builder, n_in) as loop:
                mi = loop.index
                for k, col in enumerate(cols):
                    xv = load(x_at(r, mi, col) if kind == "dots" else x_at(mi, r, col))
                    for h in range(2):
                        wv = load(_row_ptr(builder, wts[h], mi, col, nb))
                        acc = accs[h][k]
                        builder.store(builder.fadd(builder.load(acc), builder.fmul(wv, xv)), acc)
            for h in range(2):
                for k, col in enumerate(cols):
                    builder.store(builder.load(accs[h][k]),
                                  _row_ptr(builder, outs[h], r, col, nb), align=8)  # fmt: skip

        with cgutils.for_range(builder, n_out) as rows:
            _over_vector_groups(builder, nb, SUM_GROUP, lambda cols: group(rows.index, cols))
        return context.get_dummy_value()

    return codegen


@intrinsic
def dots_rows(typingctx, a, x, init, out):  # pragma: no cover - code generation
    """out[j, b] = init[b] + sum_k a[k, b] x[j, k, b], the sum in the order k = 0, 1, ...
    (one fmul and one fadd per term): a (d, nb), x (s, d, nb), init (nb,), out (s, nb); nb a
    multiple of 8."""
    return types.void(a, x, init, out), _column_sums_codegen("dots")


@intrinsic
def mix_rows(typingctx, p, x, out):  # pragma: no cover - code generation
    """out[k, b] = 0 + sum_j p[j, b] x[j, k, b], the sum in the order j = 0, 1, ... (one fmul
    and one fadd per term): p (s, nb), x (s, d, nb), out (d, nb); nb a multiple of 8."""
    return types.void(p, x, out), _column_sums_codegen("mix")


@intrinsic
def dots_rows2(typingctx, a, a2, x, init, init2, out, out2):  # pragma: no cover - codegen
    """``dots_rows(a, x, init, out)`` and ``dots_rows(a2, x, init2, out2)`` in one pass over x
    (each x value loaded once for both): the same operations, the same numbers."""
    return types.void(a, a2, x, init, init2, out, out2), _column_sums_codegen("dots", 2)


@intrinsic
def mix_rows2(typingctx, p, p2, x, out, out2):  # pragma: no cover - code generation
    """``mix_rows(p, x, out)`` and ``mix_rows(p2, x, out2)`` in one pass over x (each x value
    loaded once for both): the same operations, the same numbers."""
    return types.void(p, p2, x, out, out2), _column_sums_codegen("mix", 2)


@intrinsic
def dist2_rows(typingctx, x, m, out):  # pragma: no cover - code generation
    """out[j, b] = 0 + sum_k (x[j, k, b] - m[k, b])^2, the sum in the order k = 0, 1, ...:
    x (s, d, nb), m (d, nb), out (s, nb); nb a multiple of 8."""
    return types.void(x, m, out), _column_sums_codegen("dist2")


@intrinsic
def norms_rows(typingctx, x, sq, amax):  # pragma: no cover - code generation
    """sq[j, b] = 0 + sum_k (|x[j, k, b]| + 0)^2 (the order k = 0, 1, ...: ``dd_l2.abs_l2``'s
    sum at a zero low part) and amax[j, b] = max_k |x[j, k, b]| (from 0, NaN skipped:
    ``dense.col_absmax``), one pass: x (s, d, nb), sq and amax (s, nb); nb a multiple of 8."""
    return types.void(x, sq, amax), _column_sums_codegen("norms")
