"""A register-blocked matrix-vector product for blocks of BS strings, written in LLVM IR.

LLVM does not turn scalar accumulators written in Numba into vector registers (measured: the
register-blocked loops of the speed notes ran as scalar code), so ``rows8`` builds the loop
itself with 8-wide vectors (``<8 x double>``) and ``llvm.fma.v8f64``: for 8 output rows and 8
strings at a time the 8 accumulators stay in registers over the whole sum, each step loading
one vector of x and broadcasting 8 weights. Each output is bias + sum_k w[k] x[k] accumulated
in the order k = 0, 1, ..., n - 1 with one rounding per term (fused multiply-add), which the
rounding bound of every caller covers (any order, with or without FMA).
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
        wn = cgutils.unpack_tuple(builder, wa.shape, 2)[1]
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
                for r in range(n_rows):
                    row = builder.add(jwv, ir.Constant(i64, r))
                    wv = builder.load(builder.gep(wa.data, [builder.add(builder.mul(row, wn), k)]))
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
        f"out[jo + r, :] = bias[jw + r] + sum_k w[jw + r, k] x[k, :] for r < {n_rows}, all "
        "columns of x (a multiple of 8; x, w, out C-contiguous float64, x (n, nb), w (., n), "
        "out (., nb))."
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
