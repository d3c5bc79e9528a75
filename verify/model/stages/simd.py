"""A register-blocked matrix-vector product for blocks of BS strings, written in LLVM IR.

LLVM does not turn scalar accumulators written in Numba into vector registers (measured: the
register-blocked loops of the speed notes ran as scalar code), so ``rows8`` builds the loop
itself with 8-wide vectors (``<8 x double>``) and ``llvm.fma.v8f64``: for 8 output rows and 8
strings at a time the 8 accumulators stay in registers over the whole sum, each step loading
one vector of x and broadcasting 8 weights; the weights come transposed (W^T), so the 8 (16)
weights of one input sit side by side at one base pointer. Each output is bias + sum_k w[k]
x[k] accumulated in the order k = 0, 1, ..., n - 1 with one rounding per term (fused
multiply-add), which the rounding bound of every caller covers (any order, with or without
FMA).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 8  # doubles per vector (512 bits)


def _rows_codegen(n_rows: int):  # pragma: no cover - code generation
    """The code generator of ``rows8``/``rows16``/``rows4`` for n_rows output rows."""

    def codegen(context, builder, signature, args):
        xa = context.make_array(signature.args[0])(context, builder, args[0])
        wa = context.make_array(signature.args[1])(context, builder, args[1])
        ba = context.make_array(signature.args[2])(context, builder, args[2])
        oa = context.make_array(signature.args[4])(context, builder, args[4])
        jwv, jov = args[3], args[5]
        i64 = ir.IntType(64)
        dbl = ir.DoubleType()
        vec = ir.VectorType(dbl, LANES)
        vptr = vec.as_pointer()
        n, nb = cgutils.unpack_tuple(builder, xa.shape, 2)
        w_rows = cgutils.unpack_tuple(builder, wa.shape, 2)[1]  # w given transposed: (n, rows)
        ob = cgutils.unpack_tuple(builder, oa.shape, 2)[1]
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec, vec, vec]), "llvm.fma.v8f64"
        )
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)
        undef = ir.Constant(vec, ir.Undefined)

        def bcast(value):
            one = builder.insert_element(undef, value, ir.Constant(i64, 0))
            return builder.shuffle_vector(one, undef, zeros)

        accs = [cgutils.alloca_once(builder, vec) for _ in range(n_rows)]
        n_vec = builder.udiv(nb, ir.Constant(i64, LANES))
        with cgutils.for_range(builder, n_vec) as outer:
            col = builder.mul(outer.index, ir.Constant(i64, LANES))
            for r in range(n_rows):
                bval = builder.load(builder.gep(ba.data, [builder.add(jwv, ir.Constant(i64, r))]))
                builder.store(bcast(bval), accs[r])
            with cgutils.for_range(builder, n) as inner:
                k = inner.index
                xp = builder.gep(xa.data, [builder.add(builder.mul(k, nb), col)])
                xv = builder.load(builder.bitcast(xp, vptr), align=8)
                # the n_rows weights of input k at one base and constant offsets (one pointer,
                # not one per row: those were spilled or chained through additions)
                w_k = builder.gep(wa.data, [builder.add(builder.mul(k, w_rows), jwv)])
                for r in range(n_rows):
                    wv = builder.load(builder.gep(w_k, [ir.Constant(i64, r)]))
                    acc = builder.call(fma, [bcast(wv), xv, builder.load(accs[r])])
                    builder.store(acc, accs[r])
            for r in range(n_rows):
                row = builder.add(jov, ir.Constant(i64, r))
                op = builder.gep(oa.data, [builder.add(builder.mul(row, ob), col)])
                builder.store(builder.load(accs[r]), builder.bitcast(op, vptr), align=8)
        return context.get_dummy_value()

    return codegen


def _doc(n_rows: int) -> str:
    return (
        f"out[jo + r, :] = bias[jw + r] + sum_k W[jw + r, k] x[k, :] for r < {n_rows}, all "
        "columns of x (a multiple of 8), W given transposed (w = W^T); x, w, out C-contiguous "
        "float64, x (n, nb), w (n, .), out (., nb)."
    )


@intrinsic
def rows16(typingctx, x, w, bias, jw, out, jo):  # pragma: no cover - code generation
    return types.void(x, w, bias, jw, out, jo), _rows_codegen(16)


@intrinsic
def rows8(typingctx, x, w, bias, jw, out, jo):  # pragma: no cover - code generation
    return types.void(x, w, bias, jw, out, jo), _rows_codegen(8)


@intrinsic
def rows4(typingctx, x, w, bias, jw, out, jo):  # pragma: no cover - code generation
    return types.void(x, w, bias, jw, out, jo), _rows_codegen(4)


@intrinsic
def rows1(typingctx, x, w, bias, jw, out, jo):  # pragma: no cover - code generation
    return types.void(x, w, bias, jw, out, jo), _rows_codegen(1)


for _f, _r in ((rows16, 16), (rows8, 8), (rows4, 4), (rows1, 1)):
    _f.__doc__ = _doc(_r)


def _mlp_codegen(n_rows: int):  # pragma: no cover - code generation
    """The code generator of ``mlp_rows16`` etc. (see ``tables.mlp_from_tables``). The loop is
    emitted for sel = 0 (a query position whose token is the same for the whole block) without
    the per-string selects and the loads of g0b and hi[1], and for 1 and 2 heads with the head
    loop unrolled: the same arithmetic in every copy."""

    def codegen(context, builder, signature, args):
        ints = (1, 12, 13, 14)  # off, i, sel, j0
        arrs = [
            None if k in ints else context.make_array(signature.args[k])(context, builder, a)
            for k, a in enumerate(args)
        ]
        lo, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax = (a for a in arrs if a is not None)
        off, qi, sel, j0 = (args[k] for k in ints)
        i64 = ir.IntType(64)
        dbl = ir.DoubleType()
        vec = ir.VectorType(dbl, LANES)
        ivec = ir.VectorType(i64, LANES)
        vptr = vec.as_pointer()
        n_heads, width, nb = cgutils.unpack_tuple(builder, lo.shape, 3)
        hw = cgutils.unpack_tuple(builder, hi.shape, 3)[2]
        f = cgutils.unpack_tuple(builder, g0a.shape, 1)[0]
        w2d = cgutils.unpack_tuple(builder, w2t.shape, 2)[1]
        ob = cgutils.unpack_tuple(builder, out.shape, 2)[1]
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec, vec, vec]), "llvm.fma.v8f64"
        )
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)
        undef = ir.Constant(vec, ir.Undefined)
        iundef = ir.Constant(ivec, ir.Undefined)
        zero = ir.Constant(vec, [0.0] * LANES)

        def c(k):
            return ir.Constant(i64, k)

        def bcast(value, und=undef):
            one = builder.insert_element(und, value, c(0))
            return builder.shuffle_vector(one, und, zeros)

        def vload(base, index):
            return builder.load(builder.bitcast(builder.gep(base, [index]), vptr), align=8)

        def sload(base, index):
            return builder.load(builder.gep(base, [index]))

        accs = [cgutils.alloca_once(builder, vec) for _ in range(n_rows)]
        u_slot = cgutils.alloca_once(builder, vec)
        xm_slot = cgutils.alloca_once(builder, vec)
        lanes = ir.Constant(ivec, list(range(LANES)))

        def head_term(hd, row, col, one, use_sel, ivv):
            """(lo[hd, row] + hi[., hd, row]) * iv[hd] for the 8 strings at col."""
            lov = vload(lo.data, builder.add(builder.mul(builder.add(
                builder.mul(hd, width), row), nb), col))  # fmt: skip
            h_at = builder.add(builder.mul(hd, hw), row)
            hv = bcast(sload(hi.data, h_at))
            if use_sel:
                h1 = sload(hi.data, builder.add(builder.mul(n_heads, hw), h_at))
                hv = builder.select(one, bcast(h1), hv)
            return builder.fmul(builder.fadd(lov, hv), ivv)

        def emit(use_sel, n_h):
            """use_sel False: no string takes g0b, hi[1] (sel = 0). n_h: the number of heads
            when it is known here (the head loop unrolled, 1/den loaded once per vector of
            strings), None for a loop over n_heads; the same operations in the same order."""
            with cgutils.for_range(builder, builder.udiv(nb, c(LANES))) as outer:
                col = builder.mul(outer.index, c(LANES))
                one = None  # the strings of this vector whose bit qi is 1 (use_sel only)
                if use_sel:
                    pos = builder.add(bcast(col, iundef), lanes)
                    bits = builder.and_(builder.lshr(pos, bcast(qi, iundef)), bcast(sel, iundef))
                    one = builder.icmp_unsigned("!=", bits, ir.Constant(ivec, [0] * LANES))
                for r in range(n_rows):
                    builder.store(bcast(sload(b2.data, builder.add(j0, c(r)))), accs[r])
                builder.store(zero, xm_slot)
                zv = vload(z.data, col)
                ivs = []
                if n_h is not None:
                    ivs = [vload(iv.data, builder.add(builder.mul(c(h), nb), col))
                           for h in range(n_h)]  # fmt: skip
                with cgutils.for_range(builder, f) as inner:
                    e = inner.index
                    g0v = bcast(sload(g0a.data, e))
                    if use_sel:
                        g0v = builder.select(one, bcast(sload(g0b.data, e)), g0v)
                    row = builder.add(off, e)
                    if n_h is not None:
                        uv = g0v
                        for h in range(n_h):
                            uv = builder.fadd(uv, head_term(c(h), row, col, one, use_sel, ivs[h]))
                        builder.store(uv, u_slot)
                    else:
                        builder.store(g0v, u_slot)
                        with cgutils.for_range(builder, n_heads) as heads:
                            hd = heads.index
                            ivv = vload(iv.data, builder.add(builder.mul(hd, nb), col))
                            term = head_term(hd, row, col, one, use_sel, ivv)
                            builder.store(builder.fadd(builder.load(u_slot), term), u_slot)
                    u = builder.fadd(
                        builder.fmul(builder.load(u_slot), zv), bcast(sload(c0.data, e))
                    )
                    u = builder.select(
                        builder.fcmp_ordered("<", u, zero), zero, u
                    )  # relu, NaN kept
                    xm = builder.load(xm_slot)
                    builder.store(builder.select(builder.fcmp_ordered(">", u, xm), u, xm), xm_slot)
                    # the n_rows weights of unit e at one base and constant offsets (no
                    # pointer per row to keep in a register or spill)
                    w_e = builder.gep(w2t.data, [builder.add(builder.mul(e, w2d), j0)])
                    for r in range(n_rows):
                        wv = builder.load(builder.gep(w_e, [c(r)]))
                        acc = builder.call(fma, [bcast(wv), u, builder.load(accs[r])])
                        builder.store(acc, accs[r])
                for r in range(n_rows):
                    op = builder.gep(
                        out.data, [builder.add(builder.mul(builder.add(j0, c(r)), ob), col)]
                    )
                    builder.store(builder.load(accs[r]), builder.bitcast(op, vptr), align=8)
                xp = builder.gep(xmax.data, [col])
                builder.store(builder.load(xm_slot), builder.bitcast(xp, vptr), align=8)

        def emit_heads(use_sel):  # 1 and 2 heads unrolled, any other number in a loop
            with builder.if_else(builder.icmp_signed("==", n_heads, c(2))) as (two, other):
                with two:
                    emit(use_sel, 2)
                with other:
                    with builder.if_else(builder.icmp_signed("==", n_heads, c(1))) as (h1, hn):
                        with h1:
                            emit(use_sel, 1)
                        with hn:
                            emit(use_sel, None)

        has_sel = builder.icmp_signed("!=", sel, c(0))
        with builder.if_else(has_sel) as (with_sel, without_sel):
            with with_sel:
                emit_heads(True)
            with without_sel:
                emit_heads(False)
        return context.get_dummy_value()

    return codegen


def _mlp_intrinsic(n_rows: int):
    def typer(typingctx, lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, sel, j0):
        sig = types.void(lo, off, hi, iv, z, g0a, g0b, c0, w2t, b2, out, xmax, i, sel, j0)
        return sig, _mlp_codegen(n_rows)

    typer.__name__ = f"mlp_rows{n_rows}"
    typer.__doc__ = (
        f"Rows j0..j0+{n_rows - 1} of ``tables.mlp_from_tables`` (lo (H, width, nb), hi (2, H,"
        " width), iv (H, nb), w2t (f, d), out (d, nb); sel = 1: strings whose bit i is 1 take"
        " g0b, hi[1])."
    )
    return intrinsic(typer)


mlp_rows16 = _mlp_intrinsic(16)
mlp_rows8 = _mlp_intrinsic(8)
mlp_rows4 = _mlp_intrinsic(4)
mlp_rows1 = _mlp_intrinsic(1)
