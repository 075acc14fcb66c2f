#!/usr/bin/python3
"""The Core ML import on packages coremltools writes (issue 34): one small
package per MIL op the import raises, built with coremltools' own MIL
Builder (mb) and ct.convert, at the lowest target that has the op or the
op version (iOS16-18 for theirs), plus the parameter forms coremltools
writes (pad_type valid/same/same_lower/custom, dilations, groups,
transpose_x/y, keep_dims, cast's dtype strings, ...), a float16 program,
and the ops the import refuses.

For each package: Apple's loader (coremltools' ct_check) must accept it;
`onnx-convert convert PKG -o OUT.onnx` must succeed and
`onnx-convert check OUT.onnx` pass; ONNX Runtime's run of OUT.onnx on
fixed seeded inputs must match outputs computed here with numpy from the
op's MIL definition (never from the tool's output), to rtol/atol 1e-4 in
float32 (a case says why when it needs more). For each refused op, the
import must fail with one line naming the op.

The packages are built, and judged by Apple's loader, in one coremltools
process (this file run again as `--build DIR` under /usr/bin/python3 -Es,
coremltools on sys.path as ct_check.py sets it); ONNX Runtime judges all
imports in one batch.

Usage: /usr/bin/python3 tests/coreml_ctbuild_ct.py build/onnx-convert
Prints one line per failure (and per refusal) and
"coreml_ctbuild_ct: N passed, N failed[, N skipped]"; skips, saying so,
without coremltools (or, for the numeric part, ONNX Runtime).
"""
import json
import os
import subprocess
import sys
import tempfile

NAME = "coreml_ctbuild_ct"
HERE = os.path.dirname(os.path.abspath(__file__))

# ---- the packages (run as --build DIR, inside coremltools' python) -------------------------

CASES = []      # (name, fn, ref, inputs, target, options)
REFUSED = []    # (name, fn, inputs, target, what the message must hold)


def case(name, ref, target=15, tol=None, pipeline=None, fp16=False, **inputs):
    """Registers fn (decorated) as the program of case `name`: inputs by
    the fn's argument names, ref(**inputs) the expected outputs from the
    op's definition (numpy, float64 where it computes)."""
    def reg(fn):
        CASES.append(dict(name=name, fn=fn, ref=ref, inputs=inputs, target=target, tol=tol,
                          pipeline=pipeline, fp16=fp16))
        return fn
    return reg


def refused(name, op, why, target=15, **inputs):
    """A package whose MIL op `op` the import must refuse in one line
    naming it and holding `why` (a phrase of the reason)."""
    def reg(fn):
        REFUSED.append(dict(name=name, fn=fn, inputs=inputs, target=target, op=op, why=why))
        return fn
    return reg


def define_cases():
    import numpy as np
    from coremltools.converters.mil import Builder as mb

    f32, i32 = np.float32, np.int32
    rng = np.random.default_rng(34)

    def R(*shape, lo=-2.0, hi=2.0):
        return rng.uniform(lo, hi, shape).astype(f32)

    def I(*shape, lo=0, hi=4):
        return rng.integers(lo, hi, shape).astype(i32)

    X = R(2, 3, 4, 5)
    X3 = R(2, 3, 4)
    Y3 = R(2, 3, 4)
    POS = R(2, 3, 4, lo=0.1, hi=3.0)
    UNIT = R(2, 3, 4, lo=-0.9, hi=0.9)
    HALVES = np.array([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 0.49, -0.51], [3.7, -3.2, 0.0, 4.5]],
                      f32)
    sig = lambda v: 1 / (1 + np.exp(-v.astype(np.float64)))  # noqa: E731
    erf = np.vectorize(__import__("math").erf)

    # program makers: mb.program passes every argument of the function, so
    # the loops' ops are bound by closures, not default arguments
    def unary(op):
        return lambda x: getattr(mb, op)(x=x)

    def binary(op):
        return lambda x, y: getattr(mb, op)(x=x, y=y)

    def logical(op):
        return lambda x, y: getattr(mb, op)(x=mb.greater(x=x, y=0.0), y=mb.greater(x=y, y=0.0))

    def cast_to(dt):
        return lambda x: mb.cast(x=x, dtype=dt)

    def reduce_op(op):
        return lambda x: getattr(mb, op)(x=x, axes=[1])

    def pad_op(mode):
        return lambda x: mb.pad(x=x, pad=[1, 2, 2, 1], mode=mode, constant_val=0.5)

    def resize_bilinear(mode):
        return lambda x: mb.resize_bilinear(x=x, target_size_height=5, target_size_width=7,
                                            sampling_mode=mode)

    def ch(v, rank):
        """a [C] vector broadcast along axis 1 of a rank-`rank` tensor"""
        return np.asarray(v, np.float64).reshape([-1] + [1] * (rank - 2))

    # -- activation (iOS15 activation.py) --
    case("relu", lambda x: np.maximum(x, 0), x=X)(lambda x: mb.relu(x=x))
    case("sigmoid", lambda x: sig(x), x=X)(lambda x: mb.sigmoid(x=x))
    case("softplus", lambda x: np.log1p(np.exp(x.astype(np.float64))), x=X)(
        lambda x: mb.softplus(x=x))
    case("softsign", lambda x: x / (1 + np.abs(x)), x=X)(lambda x: mb.softsign(x=x))
    case("elu", lambda x: np.where(x > 0, x, 0.7 * (np.exp(x.astype(np.float64)) - 1)), x=X)(
        lambda x: mb.elu(x=x, alpha=0.7))
    case("leaky_relu", lambda x: np.where(x >= 0, x, 0.1 * x), x=X)(
        lambda x: mb.leaky_relu(x=x, alpha=0.1))
    T = X.copy()
    T[0, 0, 0, :3] = 0.5  # x == alpha stays (MIL: x >= alpha)
    case("thresholded_relu", lambda x: np.where(x >= 0.5, x, 0), x=T)(
        lambda x: mb.thresholded_relu(x=x, alpha=0.5))
    case("sigmoid_hard", lambda x: np.clip(0.3 * x + 0.4, 0, 1), x=X)(
        lambda x: mb.sigmoid_hard(x=x, alpha=0.3, beta=0.4))

    def softmax(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    case("softmax", lambda x: softmax(x, -1), x=X)(lambda x: mb.softmax(x=x))
    case("softmax_axis1", lambda x: softmax(x, 1), x=X)(lambda x: mb.softmax(x=x, axis=1))
    case("clamped_relu", lambda x: np.where(x >= 0, np.minimum(1.5, x), np.minimum(1.5, 0.2 * x)),
         x=X)(lambda x: mb.clamped_relu(x=x, alpha=0.2, beta=1.5))
    case("gelu_exact", lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))), x=X)(
        lambda x: mb.gelu(x=x))
    def gelu_tanh(x):
        x = x.astype(np.float64)
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    case("gelu_tanh", gelu_tanh, x=X)(lambda x: mb.gelu(x=x, mode="TANH_APPROXIMATION"))
    case("gelu_sigmoid", lambda x: x * sig(1.702 * x), x=X)(
        lambda x: mb.gelu(x=x, mode="SIGMOID_APPROXIMATION"))
    case("linear_activation", lambda x: 1.5 * x - 0.5, x=X)(
        lambda x: mb.linear_activation(x=x, alpha=1.5, beta=-0.5))
    PA = np.array([0.1, -0.3, 0.6], f32)
    case("prelu", lambda x: np.where(x > 0, x, ch(PA, 4) * x), x=X)(
        lambda x: mb.prelu(x=x, alpha=PA))
    case("relu6", lambda x: np.minimum(np.maximum(x, 0), 6), x=X * 5)(
        lambda x: mb.relu6(x=x))
    case("scaled_tanh", lambda x: 1.7 * np.tanh(0.6 * x), x=X)(
        lambda x: mb.scaled_tanh(x=x, alpha=1.7, beta=0.6))
    case("silu", lambda x: x * sig(x), x=X)(lambda x: mb.silu(x=x))
    SA, SB = np.array([0.5, 1.0, 2.0], f32), np.array([1.5, -0.5, 0.8], f32)
    case("softplus_parametric", lambda x: ch(SA, 4) * np.log1p(np.exp(ch(SB, 4) * x)), x=X)(
        lambda x: mb.softplus_parametric(x=x, alpha=SA, beta=SB))
    # iOS17: alpha/beta may be fp16 with fp32 x
    case("leaky_relu_alpha_fp16_ios17", lambda x: np.where(x >= 0, x, f32(np.float16(0.1)) * x),
         target=17, x=X)(lambda x: mb.leaky_relu(x=x, alpha=np.float16(0.1)))

    # -- elementwise unary (elementwise_unary.py) --
    for op, fn, inp in [("sqrt", np.sqrt, POS), ("exp", np.exp, X3), ("abs", np.abs, X3),
                        ("erf", erf, X3), ("tanh", np.tanh, X3), ("sin", np.sin, X3),
                        ("cos", np.cos, X3), ("tan", np.tan, UNIT), ("asin", np.arcsin, UNIT),
                        ("acos", np.arccos, UNIT), ("atan", np.arctan, X3),
                        ("sinh", np.sinh, X3), ("cosh", np.cosh, X3),
                        ("atanh", np.arctanh, UNIT), ("ceil", np.ceil, X3),
                        ("floor", np.floor, X3), ("sign", np.sign, X3),
                        ("exp2", np.exp2, X3), ("square", np.square, X3),
                        ("identity", lambda v: v, X3)]:
        case(op, lambda x, fn=fn: fn(x.astype(np.float64)), x=inp)(unary(op))
    case("round", lambda x: np.round(x), x=HALVES)(lambda x: mb.round(x=x))
    case("log", lambda x: np.log(x + np.float64(f32(1e-45))), x=POS)(lambda x: mb.log(x=x))
    case("log_epsilon1", lambda x: np.log1p(x), x=POS)(lambda x: mb.log(x=x, epsilon=1.0))
    case("rsqrt", lambda x: 1 / np.sqrt(x + 1e-12), x=POS)(lambda x: mb.rsqrt(x=x))
    case("rsqrt_epsilon", lambda x: 1 / np.sqrt(x + 0.5), x=POS)(
        lambda x: mb.rsqrt(x=x, epsilon=0.5))
    case("inverse", lambda x: 1 / (x + np.float64(f32(1e-4))), x=POS)(lambda x: mb.inverse(x=x))
    case("inverse_epsilon0", lambda x: 1 / x, x=POS)(lambda x: mb.inverse(x=x, epsilon=0.0))
    case("threshold", lambda x: np.maximum(x, 0.2), x=X3)(lambda x: mb.threshold(x=x, alpha=0.2))
    XI = I(2, 3, 4, lo=-5, hi=6)
    case("abs_int32", lambda x: np.abs(x), x=XI)(lambda x: mb.abs(x=x))
    case("sign_int32", lambda x: np.sign(x), x=XI)(lambda x: mb.sign(x=x))
    case("square_int32", lambda x: x * x, x=XI)(lambda x: mb.square(x=x))
    case("exp2_int32", lambda x: 2 ** x, x=I(2, 3, lo=0, hi=10))(lambda x: mb.exp2(x=x))
    case("threshold_int32", lambda x: np.maximum(x, 1), x=XI)(
        lambda x: mb.threshold(x=x, alpha=np.int32(1)))
    case("logical_not", lambda x: ~(x > 0), x=X3)(
        lambda x: mb.logical_not(x=mb.greater(x=x, y=0.0)))
    case("clip", lambda x: np.clip(x, -0.5, 0.7), x=X3)(
        lambda x: mb.clip(x=x, alpha=-0.5, beta=0.7))
    for dt, conv in [("int32", lambda x: np.trunc(x)), ("bool", lambda x: x != 0),
                     ("fp16", lambda x: x.astype(np.float16).astype(f32))]:
        case("cast_fp32_" + dt, conv, x=X3 * 3)(cast_to(dt))
    case("cast_int32_fp32", lambda x: x.astype(f32), x=XI)(
        lambda x: mb.cast(x=x, dtype="fp32"))

    # -- elementwise binary (elementwise_binary.py) --
    B = R(4)
    for op, fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("real_div", np.divide), ("maximum", np.maximum), ("minimum", np.minimum),
                   ("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater),
                   ("greater_equal", np.greater_equal),
                   ("mod", np.mod), ("floor_div", np.floor_divide)]:
        y = Y3 if op not in ("equal", "not_equal", "less_equal", "greater_equal") else \
            np.where(rng.uniform(size=Y3.shape) < 0.3, X3, Y3)
        case(op, lambda x, y, fn=fn: fn(x.astype(np.float64), y), x=X3, y=y)(binary(op))
    case("add_broadcast", lambda x, y: x + y, x=X3, y=B)(lambda x, y: mb.add(x=x, y=y))
    case("pow", lambda x, y: np.power(x.astype(np.float64), y), x=POS, y=Y3)(
        lambda x, y: mb.pow(x=x, y=y))
    YI = I(2, 3, 4, lo=1, hi=5) * np.where(rng.uniform(size=(2, 3, 4)) < 0.5, -1, 1).astype(i32)
    case("mod_int32", lambda x, y: np.mod(x, y), x=XI, y=YI)(binary("mod"))
    case("floor_div_int32", lambda x, y: np.floor_divide(x, y), x=XI, y=YI)(binary("floor_div"))
    for op, fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
        case(op, lambda x, y, fn=fn: fn(x > 0, y > 0), x=X3, y=Y3)(logical(op))
    case("select", lambda x, y: np.where(x > 0, x, y), x=X3, y=Y3)(
        lambda x, y: mb.select(cond=mb.greater(x=x, y=0.0), a=x, b=y))

    # -- index (scatter_gather.py, tensor_operation.py) --
    GI = np.array([2, 0, -1], i32)
    case("gather", lambda x, i: np.take(x, i, axis=1), x=X3, i=GI)(
        lambda x, i: mb.gather(x=x, indices=i, axis=1))
    BI = I(2, 2, lo=0, hi=3)
    case("gather_batch_dims_ios16",
         lambda x, i: np.stack([np.take(x[b], i[b], axis=0) for b in range(2)]),
         target=16, x=X3, i=BI)(lambda x, i: mb.gather(x=x, indices=i, axis=1, batch_dims=1))
    GE = I(2, 2, 4, lo=0, hi=3)
    case("gather_along_axis", lambda x, i: np.take_along_axis(x, i, axis=1), x=X3, i=GE)(
        lambda x, i: mb.gather_along_axis(x=x, indices=i, axis=1))
    ND = np.array([[0, 1], [1, 2], [0, 0]], i32)
    case("gather_nd", lambda x, i: x[i[:, 0], i[:, 1]], x=X3, i=ND)(
        lambda x, i: mb.gather_nd(x=x, indices=i))
    NDB = np.array([[1], [2]], i32)
    case("gather_nd_batch_dims_ios16", lambda x, i: np.stack([x[b, i[b, 0]] for b in range(2)]),
         target=16, x=X3, i=NDB)(lambda x, i: mb.gather_nd(x=x, indices=i, batch_dims=1))

    def scatter_ref(data, idx, upd, axis, mode):
        out = data.astype(np.float64).copy()
        for k, j in enumerate(idx):
            sl = [slice(None)] * data.ndim
            sl[axis] = j
            src = [slice(None)] * data.ndim
            src[axis] = k
            u = upd[tuple(src)]
            if mode == "update":
                out[tuple(sl)] = u
            elif mode == "add":
                out[tuple(sl)] += u
            elif mode == "sub":
                out[tuple(sl)] -= u
            elif mode == "mul":
                out[tuple(sl)] *= u
        return out
    SU0 = R(2, 3, 4)
    case("scatter_update", lambda d, i, u: scatter_ref(d, i, u, 0, "update"),
         d=R(3, 3, 4), i=np.array([2, 0], i32), u=SU0)(
        lambda d, i, u: mb.scatter(data=d, indices=i, updates=u, mode="update"))
    case("scatter_add_axis1", lambda d, i, u: scatter_ref(d, i, u, 1, "add"),
         d=X3, i=np.array([1, 1], i32), u=R(2, 2, 4))(
        lambda d, i, u: mb.scatter(data=d, indices=i, updates=u, axis=1, mode="add"))
    case("scatter_sub_axis_neg1", lambda d, i, u: scatter_ref(d, i, u, 2, "sub"),
         d=X3, i=np.array([3, 0, 3], i32), u=R(2, 3, 3))(
        lambda d, i, u: mb.scatter(data=d, indices=i, updates=u, axis=-1, mode="sub"))
    case("scatter_mul_ios17", lambda d, i, u: scatter_ref(d, i, u, 0, "mul"), target=17,
         d=R(3, 4), i=np.array([1], i32), u=R(1, 4))(
        lambda d, i, u: mb.scatter(data=d, indices=i, updates=u, mode="mul"))

    def scatter_axis_ref(d, i, u, axis, mode):
        out = d.astype(np.float64).copy()
        for idx in np.ndindex(*i.shape):
            tgt = list(idx)
            tgt[axis] = i[idx]
            if mode == "update":
                out[tuple(tgt)] = u[idx]
            else:
                out[tuple(tgt)] += u[idx]
        return out
    SI = np.array([[[2, 0, 1, 2]], [[0, 1, 2, 0]]], i32)
    case("scatter_along_axis", lambda d, i, u: scatter_axis_ref(d, i, u, 1, "update"),
         d=X3, i=SI, u=R(2, 1, 4))(
        lambda d, i, u: mb.scatter_along_axis(data=d, indices=i, updates=u, axis=1,
                                              mode="update"))
    case("scatter_along_axis_add", lambda d, i, u: scatter_axis_ref(d, i, u, 1, "add"),
         d=X3, i=SI, u=R(2, 1, 4))(
        lambda d, i, u: mb.scatter_along_axis(data=d, indices=i, updates=u, axis=1))

    def scatter_nd_ref(d, i, u):
        out = d.astype(np.float64).copy()
        for k in range(i.shape[0]):
            out[tuple(i[k])] += u[k]
        return out
    case("scatter_nd", scatter_nd_ref, d=X3, i=np.array([[1, 2], [0, 0], [1, 2]], i32),
         u=R(3, 4))(lambda d, i, u: mb.scatter_nd(data=d, indices=i, updates=u, mode="add"))
    case("topk", lambda x: (-np.sort(-x, axis=-1)[..., :2],
                            np.argsort(-x, axis=-1, kind="stable")[..., :2].astype(i32)),
         x=X3)(lambda x: mb.topk(x=x, k=2))
    case("topk_ascending_axis1", lambda x: (np.sort(x, axis=1)[:, :2],
                                            np.argsort(x, axis=1, kind="stable")[:, :2]),
         x=X3)(lambda x: mb.topk(x=x, k=2, axis=1, ascending=True))
    case("topk_values_only_ios16", lambda x: -np.sort(-x, axis=-1)[..., :3], target=16, x=X3)(
        lambda x: mb.topk(x=x, k=3, return_indices=False))
    case("argsort", lambda x: np.argsort(-x, axis=-1, kind="stable"), x=X3)(
        lambda x: mb.argsort(x=x))
    case("argsort_ascending", lambda x: np.argsort(x, axis=0, kind="stable"), x=X3)(
        lambda x: mb.argsort(x=x, axis=0, ascending=True))
    NZ = np.where(X3 > 0.5, X3, 0).astype(f32)
    case("non_zero", lambda x: np.argwhere(x != 0), x=NZ)(lambda x: mb.non_zero(x=x))

    def revseq(x, ln, sa, ba):
        out = x.copy()
        for b in range(x.shape[ba]):
            src = np.take(x, b, axis=ba)
            part = np.take(src, np.arange(ln[b])[::-1], axis=sa - (sa > ba))
            dst = np.take(out, b, axis=ba)
            idx = [slice(None)] * dst.ndim
            idx[sa - (sa > ba)] = slice(0, ln[b])
            dst[tuple(idx)] = part
            sl = [slice(None)] * x.ndim
            sl[ba] = b
            out[tuple(sl)] = dst
        return out
    case("reverse_sequence", lambda x, n: revseq(x, n, 0, 1), x=R(4, 3, 2),
         n=np.array([4, 2, 0], i32))(
        lambda x, n: mb.reverse_sequence(x=x, lengths=n, seq_axis=0, batch_axis=1))
    case("reverse", lambda x: x[:, ::-1, ::-1], x=X3)(lambda x: mb.reverse(x=x, axes=[1, 2]))

    # -- nn (conv.py, pool.py, linear.py) --
    def pad_same(n, k, s, d=1, lower=False):
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        small = total // 2
        return (total - small, small) if lower else (small, total - small)

    def conv_ref(x, w, b=None, strides=(1, 1), pads=((0, 0), (0, 0)), dil=(1, 1), groups=1):
        x = x.astype(np.float64)
        nd = x.ndim - 2
        x = np.pad(x, [(0, 0), (0, 0)] + list(pads))
        n, c = x.shape[:2]
        co, cg = w.shape[:2]
        ks = w.shape[2:]
        outs = [(x.shape[2 + i] - (ks[i] - 1) * dil[i] - 1) // strides[i] + 1 for i in range(nd)]
        y = np.zeros([n, co] + outs)
        for g in range(groups):
            ocs = range(g * co // groups, (g + 1) * co // groups)
            xs = x[:, g * cg:(g + 1) * cg]
            for pos in np.ndindex(*outs):
                sl = tuple(slice(pos[i] * strides[i],
                                 pos[i] * strides[i] + (ks[i] - 1) * dil[i] + 1, dil[i])
                           for i in range(nd))
                patch = xs[(slice(None), slice(None)) + sl]
                for oc in ocs:
                    y[(slice(None), oc) + pos] = (patch * w[oc]).reshape(n, -1).sum(1)
        if b is not None:
            y += np.asarray(b).reshape([1, -1] + [1] * nd)
        return y
    XC = R(1, 4, 7, 6)
    W = R(6, 4, 3, 3)
    WG = R(6, 2, 3, 2)
    BIAS = R(6)
    case("conv_valid", lambda x: conv_ref(x, W), x=XC)(
        lambda x: mb.conv(x=x, weight=W, pad_type="valid"))
    case("conv_same_stride2_bias",
         lambda x: conv_ref(x, W, BIAS, (2, 2), (pad_same(7, 3, 2), pad_same(6, 3, 2))), x=XC)(
        lambda x: mb.conv(x=x, weight=W, bias=BIAS, strides=[2, 2], pad_type="same"))
    case("conv_same_dilation2",
         lambda x: conv_ref(x, W, None, (1, 1), (pad_same(7, 3, 1, 2), pad_same(6, 3, 1, 2)),
                            (2, 2)), x=XC)(
        lambda x: mb.conv(x=x, weight=W, dilations=[2, 2], pad_type="same"))
    case("conv_same_lower_ios16",
         lambda x: conv_ref(x, W, None, (2, 2), (pad_same(7, 3, 2, 1, True),
                                                  pad_same(6, 3, 2, 1, True))),
         target=16, x=XC)(
        lambda x: mb.conv(x=x, weight=W, strides=[2, 2], pad_type="same_lower"))
    case("conv_custom_groups_dilation",
         lambda x: conv_ref(x, WG, BIAS, (1, 2), ((1, 2), (0, 1)), (2, 1), 2), x=XC)(
        lambda x: mb.conv(x=x, weight=WG, bias=BIAS, strides=[1, 2], pad_type="custom",
                          pad=[1, 2, 0, 1], dilations=[2, 1], groups=2))
    W1 = R(3, 4, 3)
    case("conv1d", lambda x: conv_ref(x, W1, None, (2,), ((1, 1),)), x=R(2, 4, 9))(
        lambda x: mb.conv(x=x, weight=W1, strides=[2], pad_type="custom", pad=[1, 1]))
    W3 = R(2, 2, 2, 2, 2)
    case("conv3d", lambda x: conv_ref(x, W3, None, (1, 1, 1), ((0, 0),) * 3, (1, 1, 1)),
         x=R(1, 2, 3, 4, 3))(
        lambda x: mb.conv(x=x, weight=W3, pad_type="valid"))
    WX = R(2, 4, 3, 3)
    case("conv_weight_input_ios17", lambda x, w: conv_ref(x, w), target=17, x=XC, w=WX)(
        lambda x, w: mb.conv(x=x, weight=w, pad_type="valid"))

    def convt_ref(x, w, strides, pads, out_pad=(0, 0), groups=1):
        x = x.astype(np.float64)
        n, ci = x.shape[:2]
        cog = w.shape[1]
        kh, kw = w.shape[2:]
        H, Wd = x.shape[2:]
        fh, fw = (H - 1) * strides[0] + kh, (Wd - 1) * strides[1] + kw
        y = np.zeros((n, cog * groups, fh, fw))
        cig = ci // groups
        for g in range(groups):
            for c in range(g * cig, (g + 1) * cig):
                for i in range(H):
                    for j in range(Wd):
                        y[:, g * cog:(g + 1) * cog, i * strides[0]:i * strides[0] + kh,
                          j * strides[1]:j * strides[1] + kw] += \
                            x[:, c, i, j][:, None, None, None] * w[c]
        (t, b), (l, r) = pads
        return y[:, :, t:fh - b, l:fw - r]
    WT = R(4, 3, 3, 3)
    XT = R(1, 4, 4, 5)
    case("conv_transpose", lambda x: convt_ref(x, WT, (1, 1), ((0, 0), (0, 0))), x=XT)(
        lambda x: mb.conv_transpose(x=x, weight=WT, pad_type="valid"))
    case("conv_transpose_custom_stride2",
         lambda x: convt_ref(x, WT, (2, 2), ((1, 1), (0, 1))) + BIAS[:3].reshape(1, 3, 1, 1),
         x=XT)(lambda x: mb.conv_transpose(x=x, weight=WT, bias=BIAS[:3], strides=[2, 2],
                                           pad_type="custom", pad=[1, 1, 0, 1]))

    case("conv_transpose_output_shape_same_size",
         lambda x: convt_ref(x, WT, (1, 1), ((0, 0), (0, 0))), x=XT)(
        lambda x: mb.conv_transpose(x=x, weight=WT, pad_type="valid", output_shape=[1, 3, 6, 7]))
    case("conv_transpose_output_shape_padding",
         lambda x: convt_ref(x, WT, (2, 2), ((1, 0), (1, 0))), x=XT)(
        lambda x: mb.conv_transpose(x=x, weight=WT, strides=[2, 2], pad_type="custom",
                                    pad=[1, 1, 1, 1], output_shape=[1, 3, 8, 10]))

    def pool_ref(x, k, s, pads, kind, include_pad=False, ceil=False):
        x = x.astype(np.float64)
        nd = x.ndim - 2
        fill = -np.inf if kind == "max" else 0
        xp = np.pad(x, [(0, 0), (0, 0)] + list(pads), constant_values=fill)
        ones = np.pad(np.ones(x.shape[2:]), list(pads))
        outs = []
        for i in range(nd):
            span = xp.shape[2 + i] - k[i]
            o = (-(-span // s[i]) if ceil else span // s[i]) + 1
            if ceil and (o - 1) * s[i] >= x.shape[2 + i] + pads[i][0]:
                o -= 1
            outs.append(o)
        y = np.zeros(list(x.shape[:2]) + outs)
        for pos in np.ndindex(*outs):
            sl = tuple(slice(pos[i] * s[i], pos[i] * s[i] + k[i]) for i in range(nd))
            patch = xp[(slice(None), slice(None)) + sl]
            if kind == "max":
                y[(slice(None), slice(None)) + pos] = patch.reshape(*x.shape[:2], -1).max(-1)
            else:
                cnt = patch[0, 0].size if include_pad else ones[sl].sum()
                y[(slice(None), slice(None)) + pos] = patch.reshape(*x.shape[:2], -1).sum(-1) / cnt
        return y
    XP = R(1, 3, 7, 6)
    case("max_pool_valid", lambda x: pool_ref(x, (2, 2), (2, 2), ((0, 0), (0, 0)), "max"),
         x=XP)(lambda x: mb.max_pool(x=x, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid"))
    case("max_pool_same", lambda x: pool_ref(x, (3, 3), (2, 2), (pad_same(7, 3, 2),
                                                                  pad_same(6, 3, 2)), "max"),
         x=XP)(lambda x: mb.max_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2], pad_type="same"))
    case("max_pool_ceil", lambda x: pool_ref(x, (2, 2), (2, 2), ((0, 0), (0, 0)), "max",
                                             ceil=True), x=XP)(
        lambda x: mb.max_pool(x=x, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid",
                              ceil_mode=True))
    case("avg_pool_custom_exclude",
         lambda x: pool_ref(x, (3, 2), (1, 2), ((1, 1), (1, 0)), "avg"), x=XP)(
        lambda x: mb.avg_pool(x=x, kernel_sizes=[3, 2], strides=[1, 2], pad_type="custom",
                              pad=[1, 1, 1, 0], exclude_padding_from_average=True))
    case("avg_pool_custom_include",
         lambda x: pool_ref(x, (3, 3), (2, 2), ((1, 1), (1, 1)), "avg", True), x=XP)(
        lambda x: mb.avg_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2], pad_type="custom",
                              pad=[1, 1, 1, 1], exclude_padding_from_average=False))
    case("avg_pool_same_exclude",
         lambda x: pool_ref(x, (3, 3), (2, 2), (pad_same(7, 3, 2), pad_same(6, 3, 2)), "avg"),
         x=XP)(lambda x: mb.avg_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2], pad_type="same",
                                     exclude_padding_from_average=True))
    case("avg_pool_same_lower_ios16",
         lambda x: pool_ref(x, (2, 2), (1, 1), (pad_same(7, 2, 1, 1, True),
                                                pad_same(6, 2, 1, 1, True)), "avg"),
         target=16, x=XP)(lambda x: mb.avg_pool(x=x, kernel_sizes=[2, 2], pad_type="same_lower",
                                                exclude_padding_from_average=True))
    case("max_pool1d", lambda x: pool_ref(x, (3,), (2,), ((1, 1),), "max"), x=R(2, 3, 8))(
        lambda x: mb.max_pool(x=x, kernel_sizes=[3], strides=[2], pad_type="custom", pad=[1, 1]))
    MA, MB_ = R(2, 3, 4), R(2, 4, 5)
    case("matmul", lambda x, y: x @ y, x=MA, y=MB_)(lambda x, y: mb.matmul(x=x, y=y))
    case("matmul_transpose_x", lambda x, y: np.swapaxes(x, -1, -2) @ y, x=R(2, 4, 3), y=MB_)(
        lambda x, y: mb.matmul(x=x, y=y, transpose_x=True))
    case("matmul_transpose_y", lambda x, y: x @ np.swapaxes(y, -1, -2), x=MA, y=R(2, 5, 4))(
        lambda x, y: mb.matmul(x=x, y=y, transpose_y=True))
    case("matmul_transpose_both_broadcast",
         lambda x, y: np.swapaxes(x, -1, -2) @ np.swapaxes(y, -1, -2), x=R(4, 3), y=R(2, 5, 4))(
        lambda x, y: mb.matmul(x=x, y=y, transpose_x=True, transpose_y=True))
    MW = R(4, 5)
    case("matmul_const_y_1d_x", lambda x: x @ MW, x=R(4))(lambda x: mb.matmul(x=x, y=MW))
    LW, LB = R(5, 4), R(5)
    case("linear", lambda x: x @ LW.T + LB, x=R(3, 4))(
        lambda x: mb.linear(x=x, weight=LW, bias=LB))
    case("linear_rank3_nobias", lambda x: x @ LW.T, x=MA)(lambda x: mb.linear(x=x, weight=LW))

    # -- norm (normalization.py) --
    C = 3
    GM, BT, MU, VA = R(C), R(C), R(C), R(C, lo=0.5, hi=2)
    case("batch_norm", lambda x: (x - ch(MU, 4)) / np.sqrt(ch(VA, 4) + 1e-3) * ch(GM, 4) +
         ch(BT, 4), x=X)(lambda x: mb.batch_norm(x=x, mean=MU, variance=VA, gamma=GM, beta=BT,
                                                 epsilon=1e-3))

    def inorm(x, g, b, eps=1e-5):
        m = x.mean(axis=(2, 3), keepdims=True)
        v = x.var(axis=(2, 3), keepdims=True)
        return (x - m) / np.sqrt(v + eps) * ch(g, 4) + ch(b, 4)
    case("instance_norm", lambda x: inorm(x, GM, BT), x=X)(
        lambda x: mb.instance_norm(x=x, gamma=GM, beta=BT))
    case("instance_norm_no_affine", lambda x: inorm(x, np.ones(C), np.zeros(C), 1e-3), x=X)(
        lambda x: mb.instance_norm(x=x, epsilon=1e-3))
    LG, LBt = R(4, 5), R(4, 5)

    def lnorm(x, axes, g, b, eps=1e-5):
        m = x.mean(axis=axes, keepdims=True)
        v = x.var(axis=axes, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * g + b
    case("layer_norm", lambda x: lnorm(x, (-2, -1), LG, LBt), x=X)(
        lambda x: mb.layer_norm(x=x, axes=[-2, -1], gamma=LG, beta=LBt))
    case("layer_norm_last_axis", lambda x: lnorm(x, (3,), LG[0], 0, 1e-2), x=X)(
        lambda x: mb.layer_norm(x=x, axes=[3], gamma=LG[0], epsilon=1e-2))

    def lrn(x, size, alpha, beta, k):
        sq = np.pad(x.astype(np.float64) ** 2, [(0, 0), (size // 2, size // 2), (0, 0), (0, 0)])
        s = sum(sq[:, i:i + x.shape[1]] for i in range(size))
        return x / (k + alpha / size * s) ** beta
    XL = R(1, 5, 3, 3)
    case("local_response_norm", lambda x: lrn(x, 3, 1e-2, 0.6, 1.5), x=XL)(
        lambda x: mb.local_response_norm(x=x, size=3, alpha=1e-2, beta=0.6, k=1.5))
    case("l2_norm", lambda x: x / np.sqrt((x.astype(np.float64) ** 2).sum(axis=(1, 2, 3),
                                                                        keepdims=True) + 1e-6),
         x=X)(lambda x: mb.l2_norm(x=x))
    case("l2_norm_rank3_epsilon", lambda x: x / np.sqrt((x.astype(np.float64) ** 2).sum() + 0.5),
         x=X3)(lambda x: mb.l2_norm(x=x, epsilon=0.5))

    # -- reduce (reduction.py) --
    for op, fn in [("reduce_mean", np.mean), ("reduce_sum", np.sum), ("reduce_max", np.max),
                   ("reduce_min", np.min), ("reduce_prod", np.prod),
                   ("reduce_l1_norm", lambda v, axis, keepdims: np.abs(v).sum(axis,
                                                                               keepdims=keepdims)),
                   ("reduce_l2_norm",
                    lambda v, axis, keepdims: np.sqrt((v ** 2).sum(axis, keepdims=keepdims))),
                   ("reduce_log_sum",
                    lambda v, axis, keepdims: np.log(v.sum(axis, keepdims=keepdims))),
                   ("reduce_log_sum_exp",
                    lambda v, axis, keepdims: np.log(np.exp(v).sum(axis, keepdims=keepdims))),
                   ("reduce_sum_square",
                    lambda v, axis, keepdims: (v ** 2).sum(axis, keepdims=keepdims))]:
        inp = POS if op == "reduce_log_sum" else X3
        case(op, lambda x, fn=fn: fn(x.astype(np.float64), axis=(1,), keepdims=False), x=inp)(
            reduce_op(op))
    case("reduce_mean_keep_dims", lambda x: x.mean(axis=(0, 2), keepdims=True), x=X3)(
        lambda x: mb.reduce_mean(x=x, axes=[0, -1], keep_dims=True))
    case("reduce_sum_all", lambda x: x.astype(np.float64).sum(), x=X3)(
        lambda x: mb.reshape(x=mb.reduce_sum(x=x), shape=[1]))
    case("reduce_argmax", lambda x: np.argmax(x, axis=1), x=X3)(
        lambda x: mb.reduce_argmax(x=x, axis=1))
    case("reduce_argmax_default_keep", lambda x: np.argmax(x, axis=-1)[..., None], x=X3)(
        lambda x: mb.reduce_argmax(x=x, keep_dims=True))
    case("reduce_argmin", lambda x: np.argmin(x, axis=0), x=X3)(
        lambda x: mb.reduce_argmin(x=x, axis=0))
    case("cumsum", lambda x: np.cumsum(x, axis=1), x=X3)(lambda x: mb.cumsum(x=x, axis=1))

    def cumsum_er(x):
        r = np.flip(np.cumsum(np.flip(x, 2), axis=2), 2)
        return r - x
    case("cumsum_exclusive_reverse", cumsum_er, x=X3)(
        lambda x: mb.cumsum(x=x, axis=-1, exclusive=True, reverse=True))

    # -- shape (tensor_transformation.py, tensor_operation.py) --
    case("reshape", lambda x: x.reshape(6, -1), x=X3)(lambda x: mb.reshape(x=x, shape=[6, -1]))
    case("reshape_zero", lambda x: x.reshape(2, 6, 2), x=X3)(
        lambda x: mb.reshape(x=x, shape=[0, -1, 2]))
    case("transpose", lambda x: x.transpose(2, 0, 1), x=X3)(
        lambda x: mb.transpose(x=x, perm=[2, 0, 1]))
    case("concat", lambda x, y: np.concatenate([x, y, x], axis=1), x=X3, y=Y3)(
        lambda x, y: mb.concat(values=[x, y, x], axis=1))
    case("concat_interleave", lambda x, y: np.stack([x, y], axis=3).reshape(2, 3, 8), x=X3, y=Y3)(
        lambda x, y: mb.concat(values=[x, y], axis=-1, interleave=True))
    case("concat_interleave_axis0", lambda x, y: np.stack([x, y, x], axis=1).reshape(6, 3, 4),
         x=X3, y=Y3)(lambda x, y: mb.concat(values=[x, y, x], axis=0, interleave=True))
    case("concat_scalars", lambda x: np.array([x[0, 0, 0], x[1, 2, 3], x.max()]), x=X3)(
        lambda x: mb.concat(values=[mb.slice_by_index(x=x, begin=[0, 0, 0], end=[1, 1, 1],
                                                      squeeze_mask=[True, True, True]),
                                    mb.slice_by_index(x=x, begin=[1, 2, 3], end=[2, 3, 4],
                                                      squeeze_mask=[True, True, True]),
                                    mb.reduce_max(x=x)], axis=0))
    case("split_num", lambda x: tuple(np.split(x, 2, axis=2)), x=X3)(
        lambda x: mb.split(x=x, num_splits=2, axis=2))
    case("split_sizes", lambda x: tuple(np.split(x, [1], axis=1)), x=X3)(
        lambda x: mb.split(x=x, split_sizes=[1, 2], axis=1))
    case("slice_by_index", lambda x: x[0:2, 2:0:-1, 1:4:2], x=X3)(
        lambda x: mb.slice_by_index(x=x, begin=[0, 2, 1], end=[2, 0, 4], stride=[1, -1, 2]))
    case("slice_by_index_masks", lambda x: x[:, 1, -3:], x=X3)(
        lambda x: mb.slice_by_index(x=x, begin=[1, 1, -3], end=[0, 2, 0],
                                    begin_mask=[True, False, False],
                                    end_mask=[True, False, True],
                                    squeeze_mask=[False, True, False]))
    case("slice_by_size", lambda x: x[1:2, 0:3, 1:3], x=X3)(
        lambda x: mb.slice_by_size(x=x, begin=[1, 0, 1], size=[1, -1, 2]))
    case("slice_by_size_negative_begin", lambda x: x[:, -2:, -3:-1], x=X3)(
        lambda x: mb.slice_by_size(x=x, begin=[0, -2, -3], size=[-1, 2, 2]))
    case("slice_by_size_computed", lambda x, b: x[b[0]:, b[1]:b[1] + 2, :2], x=X3,
         b=np.array([1, 1, 0], i32))(
        lambda x, b: mb.slice_by_size(x=x, begin=b, size=[-1, 2, 2]))
    case("squeeze", lambda x: x.reshape(3, 4), x=R(1, 3, 1, 4))(
        lambda x: mb.squeeze(x=x, axes=[0, 2]))
    case("squeeze_all", lambda x: x.reshape(3, 4), x=R(1, 3, 1, 4))(lambda x: mb.squeeze(x=x))
    case("expand_dims", lambda x: x.reshape(2, 1, 3, 4, 1), x=X3)(
        lambda x: mb.expand_dims(x=x, axes=[1, -1]))
    case("tile", lambda x: np.tile(x, (1, 2, 3)), x=X3)(lambda x: mb.tile(x=x, reps=[1, 2, 3]))
    for mode, np_mode in [("constant", "constant"), ("reflect", "reflect"),
                          ("replicate", "edge")]:
        kw = {"constant_values": 0.5} if mode == "constant" else {}
        case("pad_" + mode, lambda x, m=np_mode, kw=kw: np.pad(x, [(0, 0), (1, 2), (2, 1)],
                                                               mode=m, **kw), x=X3)(
            pad_op(mode))
    case("flatten2d", lambda x: x.reshape(2, -1), x=X)(lambda x: mb.flatten2d(x=x))
    case("flatten2d_axis_neg1", lambda x: x.reshape(-1, 5), x=X)(
        lambda x: mb.flatten2d(x=x, axis=-1))
    case("flatten2d_axis0", lambda x: x.reshape(1, -1), x=X3)(lambda x: mb.flatten2d(x=x, axis=0))
    case("stack", lambda x, y: np.stack([x, y], axis=1), x=X3, y=Y3)(
        lambda x, y: mb.stack(values=[x, y], axis=1))
    case("stack_axis_neg1", lambda x, y: np.stack([x, y, y], axis=-1), x=X3, y=Y3)(
        lambda x, y: mb.stack(values=[x, y, y], axis=-1))
    case("crop", lambda x: x[:, :, 1:6, 0:4], x=XP)(
        lambda x: mb.crop(x=x, crop_height=[1, 1], crop_width=[0, 2]))
    case("reshape_like_ios16", lambda x, a, b: x.reshape(3, 4, 2), target=16, x=X3, a=R(3, 4),
         b=R(5, 2))(lambda x, a, b: mb.reshape_like(x=x, ref_tensors=(a, b), begins=(0, 1),
                                                     ends=(2, 2), end_masks=(False, True)))

    def s2b(x, bs, pads):
        n, c, h, w = x.shape
        xp = np.pad(x, [(0, 0), (0, 0), tuple(pads[0]), tuple(pads[1])])
        H, Wd = xp.shape[2] // bs[0], xp.shape[3] // bs[1]
        out = np.zeros((bs[0] * bs[1] * n, c, H, Wd), x.dtype)
        for ih in range(bs[0]):
            for iw in range(bs[1]):
                for b in range(n):
                    out[(ih * bs[1] + iw) * n + b] = xp[b, :, ih::bs[0], iw::bs[1]]
        return out

    def b2s(x, bs, crops):
        nb, c, h, w = x.shape
        n = nb // (bs[0] * bs[1])
        out = np.zeros((n, c, h * bs[0], w * bs[1]), x.dtype)
        for ih in range(bs[0]):
            for iw in range(bs[1]):
                for b in range(n):
                    out[b, :, ih::bs[0], iw::bs[1]] = x[(ih * bs[1] + iw) * n + b]
        return out[:, :, crops[0][0]:out.shape[2] - crops[0][1],
                   crops[1][0]:out.shape[3] - crops[1][1]]
    XS = R(2, 3, 4, 5)
    case("space_to_batch", lambda x: s2b(x, (2, 3), ((1, 1), (0, 1))), x=XS)(
        lambda x: mb.space_to_batch(x=x, block_shape=[2, 3], paddings=[[1, 1], [0, 1]]))
    case("batch_to_space", lambda x: b2s(x, (2, 3), ((1, 0), (2, 1))), x=R(12, 3, 2, 4))(
        lambda x: mb.batch_to_space(x=x, block_shape=[2, 3], crops=[[1, 0], [2, 1]]))

    def slice_update_ref(x, u, sl):
        y = x.copy()
        y[sl] = u
        return y
    case("slice_update_ios18", lambda x, u: slice_update_ref(x, u, (slice(None), slice(2, 0, -1),
                                                                     slice(0, 4, 2))),
         target=18, x=X3, u=R(2, 2, 2))(
        lambda x, u: mb.slice_update(x=x, update=u, begin=[0, 2, 0], end=[2, 0, 4],
                                     stride=[1, -1, 2]))
    case("slice_update_squeeze_ios18", lambda x, u: slice_update_ref(x, u, (1, slice(None), 2)),
         target=18, x=X3, u=R(3))(
        lambda x, u: mb.slice_update(x=x, update=u, begin=[1, 0, 2], end=[2, 3, 3],
                                     end_mask=[False, True, False],
                                     squeeze_mask=[True, False, True]))

    # -- tensor (tensor_operation.py, tensor_transformation.py) --
    def d2s(x, b, crd):
        n, c, h, w = x.shape
        if crd:
            y = x.reshape(n, c // b // b, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        else:
            y = x.reshape(n, b, b, c // b // b, h, w).transpose(0, 3, 4, 1, 5, 2)
        return y.reshape(n, c // b // b, h * b, w * b)

    def s2d(x, b):
        n, c, h, w = x.shape
        y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
        return y.reshape(n, c * b * b, h // b, w // b)
    XD = R(1, 8, 2, 3)
    case("depth_to_space", lambda x: d2s(x, 2, False), x=XD)(
        lambda x: mb.depth_to_space(x=x, block_size=2))
    case("pixel_shuffle", lambda x: d2s(x, 2, True), x=XD)(
        lambda x: mb.pixel_shuffle(x=x, upscale_factor=2))
    XU = R(1, 2, 4, 6)
    case("space_to_depth", lambda x: s2d(x, 2), x=XU)(
        lambda x: mb.space_to_depth(x=x, block_size=2))
    case("pixel_unshuffle_ios16",
         lambda x: x.reshape(1, 2, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 8, 2, 3),
         target=16, x=XU)(lambda x: mb.pixel_unshuffle(x=x, downscale_factor=np.uint32(2)))
    OH = np.array([[0, 2], [1, 3]], i32)
    case("one_hot", lambda i: np.where(np.arange(4)[None, :, None] == i[:, None, :], 2.0, -1.0),
         i=OH)(lambda i: mb.one_hot(indices=i, one_hot_vector_size=4, axis=1, on_value=2.0,
                                     off_value=-1.0))

    def band(x, lo, up):
        m, n = np.indices(x.shape[-2:])
        keep = ((lo < 0) | (m - n <= lo)) & ((up < 0) | (n - m <= up))
        return np.where(keep, x, 0)
    case("band_part", lambda x: band(x, 1, 0), x=R(2, 4, 5))(
        lambda x: mb.band_part(x=x, lower=1, upper=0))
    case("band_part_upper", lambda x: band(x, -1, 2), x=R(2, 4, 5))(
        lambda x: mb.band_part(x=x, lower=-1, upper=2))
    case("range_1d", lambda n: np.arange(1.0, 7.0, 1.5) * (n[0] - 3), n=np.array([4], i32))(
        lambda n: mb.mul(x=mb.range_1d(start=1.0, end=7.0, step=1.5),
                         y=mb.cast(x=mb.sub(x=mb.reduce_sum(x=n), y=3), dtype="fp32")))
    case("range_1d_int32", lambda n: np.arange(0, n[0], 2), n=np.array([7], i32))(
        lambda n: mb.range_1d(start=0, end=mb.reduce_sum(x=n), step=2))
    case("shape", lambda x: np.array(x.shape), x=X3)(lambda x: mb.shape(x=x))
    case("fill", lambda n: np.full((2, n[0]), 1.5), n=np.array([3], i32))(
        lambda n: mb.fill(shape=mb.concat(values=[np.array([2], i32), n], axis=0), value=1.5))
    case("fill_like_ios16", lambda x: np.full(x.shape, 7, i32), target=16, x=X3)(
        lambda x: mb.fill_like(ref_tensor=x, value=np.int32(7)))
    case("fill_like_default_ios16", lambda x: np.zeros(x.shape), target=16, x=X3)(
        lambda x: mb.fill_like(ref_tensor=x))

    # -- resize (image_resizing.py) --
    XR = R(1, 2, 3, 4)

    def bilinear(x, oh, ow, coord):
        def axis_w(n_in, n_out):
            m = np.zeros((n_out, n_in))
            for i in range(n_out):
                c = min(max(coord(i, n_in, n_out), 0), n_in - 1)
                lo = int(np.floor(c))
                hi = min(lo + 1, n_in - 1)
                m[i, lo] += 1 - (c - lo)
                m[i, hi] += c - lo
            return m
        return np.einsum("ph,nchw,qw->ncpq", axis_w(x.shape[2], oh), x, axis_w(x.shape[3], ow))
    for mode, coord in [("DEFAULT", lambda i, a, b: i * a / b),
                        ("STRICT_ALIGN_CORNERS", lambda i, a, b: i * (a - 1) / (b - 1)),
                        ("ALIGN_CORNERS", lambda i, a, b: i * (a - 1) / (b - 1)),
                        ("UNALIGN_CORNERS", lambda i, a, b: (i + 0.5) * a / b - 0.5)]:
        case("resize_bilinear_" + mode.lower(), lambda x, c=coord: bilinear(x, 5, 7, c), x=XR)(
            resize_bilinear(mode))

    def nearest(x, oh, ow, idx):
        ih = [idx(i, x.shape[2], oh) for i in range(oh)]
        iw = [idx(i, x.shape[3], ow) for i in range(ow)]
        return x[:, :, ih][:, :, :, iw]
    case("resize_nearest_neighbor",
         lambda x: nearest(x, 5, 7, lambda i, a, b: min(int(np.floor((i + 0.5) * a / b)), a - 1)),
         x=XR)(lambda x: mb.resize_nearest_neighbor(x=x, target_size_height=5,
                                                    target_size_width=7))
    case("upsample_nearest_neighbor", lambda x: x.repeat(2, axis=2).repeat(3, axis=3), x=XR)(
        lambda x: mb.upsample_nearest_neighbor(x=x, scale_factor_height=2, scale_factor_width=3))
    case("upsample_bilinear_align",
         lambda x: bilinear(x, 6, 8, lambda i, a, b: i * (a - 1) / (b - 1)), x=XR)(
        lambda x: mb.upsample_bilinear(x=x, scale_factor_height=2, scale_factor_width=2,
                                       align_corners=True))
    case("upsample_bilinear_half_pixel",
         lambda x: bilinear(x, 6, 8, lambda i, a, b: (i + 0.5) * a / b - 0.5), x=XR)(
        lambda x: mb.upsample_bilinear(x=x, scale_factor_height=2, scale_factor_width=2,
                                       align_corners=False))
    case("resize_ios17_linear", lambda x, s: bilinear(x, 5, 7, lambda i, a, b: i * a / b),
         target=17, x=XR, s=R(5, 7))(
        lambda x, s: mb.resize(x=x, shape=mb.shape(x=s), resized_dims=np.uint32(2)))
    case("resize_ios17_nearest", lambda x, s: nearest(x, 6, 8, lambda i, a, b: i * a // b),
         target=17, x=XR, s=R(6, 8))(
        lambda x, s: mb.resize(x=x, shape=mb.shape(x=s), resized_dims=np.uint32(2),
                               interpolation_mode="NEAREST_NEIGHBOR"))

    # -- sample (image_resizing.py resample) --
    def grid_sample(x, g, align, pad):
        n, c, h, w = x.shape
        out = np.zeros((n, c) + g.shape[1:3])
        for b in range(n):
            for i in range(g.shape[1]):
                for j in range(g.shape[2]):
                    gx, gy = g[b, i, j]
                    if align:
                        px, py = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
                    else:
                        px, py = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
                    if pad == "border":
                        px, py = min(max(px, 0), w - 1), min(max(py, 0), h - 1)
                    x0, y0 = int(np.floor(px)), int(np.floor(py))
                    acc = np.zeros(c)
                    for yy, wy in ((y0, 1 - (py - y0)), (y0 + 1, py - y0)):
                        for xx, wx in ((x0, 1 - (px - x0)), (x0 + 1, px - x0)):
                            if 0 <= yy < h and 0 <= xx < w:
                                acc += wy * wx * x[b, :, yy, xx]
                    out[b, :, i, j] = acc
        return out
    GR = R(1, 3, 4, 2, lo=-1.2, hi=1.2)
    case("resample_border_align", lambda x, g: grid_sample(x, g, True, "border"), x=XR, g=GR)(
        lambda x, g: mb.resample(x=x, coordinates=g, sampling_mode="bilinear",
                                 padding_mode="border", padding_value=0.0,
                                 coordinates_mode="normalized_minus_one_to_one",
                                 align_corners=True))
    case("resample_zeros", lambda x, g: grid_sample(x, g, False, "zeros"), x=XR, g=GR)(
        lambda x, g: mb.resample(x=x, coordinates=g, sampling_mode="bilinear",
                                 padding_mode="constant", padding_value=0.0,
                                 coordinates_mode="normalized_minus_one_to_one",
                                 align_corners=False))

    # -- rnn (recurrent.py) --
    Tq, Bq, Iq, Hq = 3, 2, 3, 4
    XQ, H0, C0 = R(Tq, Bq, Iq), R(Bq, Hq), R(Bq, Hq)
    WI4, WH4, B4, P3 = R(4 * Hq, Iq), R(4 * Hq, Hq), R(4 * Hq), R(3 * Hq)

    def lstm_ref(x, h, c, peep=None):
        seq = []
        for t in range(x.shape[0]):
            g = x[t] @ WI4.T + h @ WH4.T + B4
            i, f, o, z = np.split(g, 4, axis=1)  # MIL's ifoz
            if peep is not None:
                i = i + peep[:Hq] * c
                f = f + peep[Hq:2 * Hq] * c
            i, f, z = sig(i), sig(f), np.tanh(z)
            c = f * c + i * z
            if peep is not None:
                o = o + peep[2 * Hq:] * c
            h = sig(o) * np.tanh(c)
            seq.append(h)
        return np.stack(seq), h, c
    case("lstm", lambda x, h, c: lstm_ref(x, h, c), x=XQ, h=H0, c=C0)(
        lambda x, h, c: mb.lstm(x=x, initial_h=h, initial_c=c, weight_ih=WI4, weight_hh=WH4,
                                bias=B4, output_sequence=True))
    case("lstm_peephole", lambda x, h, c: lstm_ref(x, h, c, P3), x=XQ, h=H0, c=C0)(
        lambda x, h, c: mb.lstm(x=x, initial_h=h, initial_c=c, weight_ih=WI4, weight_hh=WH4,
                                bias=B4, peephole=P3, output_sequence=True))
    WI3, WH3, B3 = R(3 * Hq, Iq), R(3 * Hq, Hq), R(3 * Hq)

    def gru_ref(x, h):
        # MIL's roz blocks; the new gate reads r * h (coremltools' NN GRU
        # layer: o = g(W_o x + R_o (r * h) + b_o); the docstring reads either way)
        seq = []
        wr, wo, wz = np.split(WI3, 3)
        rr, ro, rz = np.split(WH3, 3)
        br, bo, bz = np.split(B3, 3)
        for t in range(x.shape[0]):
            r = sig(x[t] @ wr.T + h @ rr.T + br)
            z = sig(x[t] @ wz.T + h @ rz.T + bz)
            o = np.tanh(x[t] @ wo.T + (r * h) @ ro.T + bo)
            h = (1 - z) * o + z * h
            seq.append(h)
        return np.stack(seq), h
    case("gru", gru_ref, x=XQ, h=H0)(
        lambda x, h: mb.gru(x=x, initial_h=h, weight_ih=WI3, weight_hh=WH3, bias=B3,
                            output_sequence=True))
    WI1, WH1, B1 = R(Hq, Iq), R(Hq, Hq), R(Hq)

    def rnn_ref(x, h):
        seq = []
        for t in range(x.shape[0]):
            h = np.tanh(x[t] @ WI1.T + h @ WH1.T + B1)
            seq.append(h)
        return np.stack(seq), h
    case("rnn", rnn_ref, x=XQ, h=H0)(
        lambda x, h: mb.rnn(x=x, initial_h=h, weight_ih=WI1, weight_hh=WH1, bias=B1,
                            output_sequence=True))

    # -- einsum, control, quant --
    EA, EB = R(2, 3, 4, 5), R(2, 5, 4, 6)
    case("einsum", lambda a, b: np.einsum("nchw,nwhu->nchu", a, b), a=EA, b=EB)(
        lambda a, b: mb.einsum(values=(a, b), equation="nchw,nwhu->nchu"))
    case("einsum_rank3", lambda a, b: np.einsum("chw,whu->chu", a, b), a=R(3, 4, 5),
         b=R(5, 4, 2))(lambda a, b: mb.einsum(values=(a, b), equation="chw,whu->chu"))
    case("cond", lambda x: np.maximum(x, 0) if x.sum() > 0 else sig(x), x=X3)(
        lambda x: mb.cond(pred=mb.greater(x=mb.reduce_sum(x=x), y=0.0),
                          _true_fn=lambda: mb.relu(x=x), _false_fn=lambda: mb.sigmoid(x=x)))

    def wl(x, n):
        y = x.astype(np.float64)
        for _ in range(n[0]):
            y = y * 2
        return y
    case("while_loop", wl, x=X3, n=np.array([3], i32))(
        lambda x, n: mb.while_loop(
            _cond=lambda i, y: mb.less(x=i, y=mb.squeeze(x=n)),
            _body=lambda i, y: (mb.add(x=i, y=np.int32(1)), mb.mul(x=y, y=np.float32(2.0))),
            loop_vars=(np.int32(0), x))[1])

    def qdq(x, s, zp, lo, hi):
        q = np.clip(np.round(x / s) + zp, lo, hi)
        return (q - zp) * s
    case("quantize_dequantize_ios17", lambda x: qdq(x, 0.02, 3, -128, 127), target=17, x=X3)(
        lambda x: mb.dequantize(input=mb.quantize(input=x, scale=np.float32(0.02),
                                                  zero_point=np.int8(3), output_dtype="int8"),
                                scale=np.float32(0.02), zero_point=np.int8(3)))

    # -- float16: compute precision fp16 (iOS16 has fp16 inputs and outputs) --
    H16 = X3.astype(np.float16)
    tol16 = (2e-3, 2e-3)  # each fp16 result rounds to 11 bits: 2^-10 relative
    case("fp16_add_mul", lambda x, y: (x.astype(np.float64) + y) * x, target=16, tol=tol16,
         fp16=True, x=H16, y=Y3.astype(np.float16))(
        lambda x, y: mb.mul(x=mb.add(x=x, y=y), y=x))
    case("fp16_relu_sigmoid", lambda x: sig(np.maximum(x.astype(np.float64), 0)), target=16,
         tol=tol16, fp16=True, x=H16)(lambda x: mb.sigmoid(x=mb.relu(x=x)))
    case("fp16_cast_fp32", lambda x: x.astype(f32), target=16, fp16=True, x=H16)(
        lambda x: mb.cast(x=x, dtype="fp32"))
    case("fp16_gelu_tanh", gelu_tanh, target=16, tol=(5e-3, 5e-3), fp16=True, x=H16)(
        lambda x: mb.gelu(x=x, mode="TANH_APPROXIMATION"))
    case("fp16_clamped_relu", lambda x: np.where(x >= 0, np.minimum(1.5, x),
                                                  np.minimum(1.5, 0.2 * x.astype(np.float64))),
         target=16, tol=tol16, fp16=True, x=H16)(
        lambda x: mb.clamped_relu(x=x, alpha=np.float16(0.2), beta=np.float16(1.5)))
    # coremltools' own fp16 pipeline: fp32 inputs and outputs, casts inside
    case("fp16_precision_pipeline", lambda x: np.tanh(x.astype(np.float16).astype(np.float64) * 3),
         tol=(4e-3, 4e-3), pipeline="fp16", x=X3)(lambda x: mb.tanh(x=mb.mul(x=x, y=3.0)))

    # -- refused ops: the import names the op and says why --
    refused("l2_pool", "l2_pool", "sums or averages", x=XP)(
        lambda x: mb.l2_pool(x=x, kernel_sizes=[2, 2], pad_type="valid"))
    refused("random_normal", "random_normal", "draws", n=np.array([3], i32))(
        lambda n: mb.random_normal(shape=n, seed=3))
    refused("sliding_windows", "sliding_windows", "overlapping windows", x=X3)(
        lambda x: mb.sliding_windows(x=x, axis=2, size=2, stride=1))
    refused("crop_resize", "crop_resize", "crop_and_resize", x=XR, b=R(1, 2, 4, 1, 1, lo=0, hi=1))(
        lambda x, b: mb.crop_resize(x=x, roi=b, target_height=2, target_width=2,
                                    normalized_coordinates=True,
                                    box_coordinate_mode="CORNERS_HEIGHT_FIRST"))
    refused("affine", "affine", "AffineGrid", x=XR)(
        lambda x: mb.affine(x=x, transform_matrix=np.array([[1, 0, 0, 0, 1, 0]], f32),
                            output_height=3, output_width=4, sampling_mode="bilinear",
                            padding_mode="constant", padding_value=0.0,
                            coordinates_mode="normalized_minus_one_to_one", align_corners=True))
    refused("non_maximum_suppression", "non_maximum_suppression", "selected indices",
            b=R(1, 5, 4), s=R(1, 5, 2))(
        lambda b, s: mb.non_maximum_suppression(boxes=b, scores=s, iou_threshold=0.5,
                                                score_threshold=0.1, max_boxes=3)[0])
    refused("scatter_max_ios15", "scatter", "opset", d=X3, i=np.array([1], i32), u=R(2, 1, 4))(
        lambda d, i, u: mb.scatter(data=d, indices=i, updates=u, axis=1, mode="max"))
    # output_shape past what the pads give by less than a stride: torch's
    # output_padding, as coremltools' PyTorch front end writes it (the
    # extra rows at the end); past that, refused
    refused("conv_transpose_output_shape", "conv_transpose", "output_shape", x=XT)(
        lambda x: mb.conv_transpose(x=x, weight=WT, pad_type="valid",
                                    output_shape=[1, 3, 20, 20]))


# ---- building (inside coremltools' python) ------------------------------------------------

TARGETS = {15: "iOS15", 16: "iOS16", 17: "iOS17", 18: "iOS18"}


def tensor_pb(name, a):
    """A TensorProto (dims, data_type, name, raw_data) of numpy array a."""
    import numpy as np
    codes = {np.float32: 1, np.uint8: 2, np.int8: 3, np.int32: 6, np.int64: 7, np.bool_: 9,
             np.float16: 10, np.float64: 11}
    a = np.ascontiguousarray(a)

    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def field(num, wire, payload):
        return varint(num << 3 | wire) + payload
    out = b"".join(field(1, 0, varint(int(d))) for d in a.shape)
    out += field(2, 0, varint(codes[a.dtype.type]))
    nm = name.encode()
    out += field(8, 2, varint(len(nm)) + nm)
    raw = a.tobytes()
    out += field(9, 2, varint(len(raw)) + raw)
    return out


def build_all(out_dir):
    """Builds each case's package, its ONNX Runtime case folder (inputs,
    the expected outputs cast to the package's output types, tolerance),
    and has Apple's loader judge it; writes cases.json."""
    import contextlib
    import inspect
    import io
    import numpy as np

    sys.path.insert(0, os.environ["OC_CT_DIR"])
    import ct_check  # sets sys.path to coremltools' src and stubs, hides torch & co.
    ct_check.import_coremltools()
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb
    from coremltools.converters.mil.mil import types

    define_cases()
    dtypes = {np.float32: types.fp32, np.float16: types.fp16, np.int32: types.int32}
    array_types = {65568: np.float32, 65552: np.float16, 131104: np.int32, 65600: np.float64}
    report = []

    def build(c, refuse=False):
        names = list(inspect.signature(c["fn"]).parameters)
        specs = [mb.TensorSpec(shape=c["inputs"][n].shape,
                               dtype=dtypes[c["inputs"][n].dtype.type]) for n in names]
        tgt = getattr(ct.target, TARGETS[c["target"]])
        prog = mb.program(input_specs=specs, opset_version=tgt)(c["fn"])
        fp16 = c.get("pipeline") == "fp16"
        kw = {} if fp16 else {"pass_pipeline": ct.PassPipeline.EMPTY}
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=tgt,
                               compute_precision=ct.precision.FLOAT16 if fp16
                               else ct.precision.FLOAT32, skip_model_load=True, **kw)
        pkg = os.path.join(out_dir, c["name"] + ".mlpackage")
        model.save(pkg)
        return pkg, names, model.get_spec()

    def judge(pkg):
        warnings = []
        try:
            res, _ = ct_check.check(pkg, warnings)
            return True, dict(res["functions"]["main"]["ops"]), ""
        except Exception as e:  # ct_check.Fail or a coremltools error: a failure here
            return False, {}, "%s: %s" % (type(e).__name__, str(e)[:300])

    for c in CASES:
        entry = dict(name=c["name"], kind="raise", target=TARGETS[c["target"]])
        try:
            pkg, names, spec = build(c)
            ok, ops, said = judge(pkg)
            entry.update(pkg=pkg, ct_ok=ok, ops=ops, said=said)
            want = c["ref"](**{n: c["inputs"][n] for n in names})
            want = want if isinstance(want, tuple) else (want,)
            d = os.path.join(out_dir, c["name"] + "_case", "test_data_set_0")
            os.makedirs(d)
            for k, n in enumerate(names):
                with open(os.path.join(d, "input_%d.pb" % k), "wb") as fh:
                    fh.write(tensor_pb(n, c["inputs"][n]))
            outs = spec.description.output
            if len(outs) != len(want):
                raise ValueError("%d outputs, %d expected" % (len(outs), len(want)))
            for k, (o, w) in enumerate(zip(outs, want)):
                w = np.asarray(w).astype(array_types[o.type.multiArrayType.dataType])
                with open(os.path.join(d, "output_%d.pb" % k), "wb") as fh:
                    fh.write(tensor_pb(o.name, w))
            rtol, atol = c["tol"] or (1e-4, 1e-4)
            with open(os.path.join(os.path.dirname(d), "tolerance.json"), "w") as fh:
                json.dump({"rtol": rtol, "atol": atol}, fh)
            entry["case"] = os.path.dirname(d)
        except Exception as e:
            entry.update(ct_ok=False, said="coremltools could not build it: %s: %s"
                         % (type(e).__name__, str(e)[:300]))
        report.append(entry)
    for c in REFUSED:
        entry = dict(name=c["name"], kind="refuse", op=c["op"], why=c["why"],
                     target=TARGETS[c["target"]])
        try:
            pkg, _, _ = build(c)
            ok, ops, said = judge(pkg)
            entry.update(pkg=pkg, ct_ok=ok, ops=ops, said=said)
        except Exception as e:
            entry.update(ct_ok=False, said="coremltools could not build it: %s: %s"
                         % (type(e).__name__, str(e)[:300]))
        report.append(entry)
    with open(os.path.join(out_dir, "cases.json"), "w") as fh:
        json.dump(report, fh, indent=1)


# ---- judging (the caller's python) ----------------------------------------------------------

def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--build":
        build_all(sys.argv[2])
        return 0
    from clitest import CT_DIR, ORT_DIR, check, have_ct, have_ort, report, skip  # noqa: E402
    tool = sys.argv[1]
    if not have_ct():
        print("%s: skipped (no coremltools judge)" % NAME)
        print("%s: 0 passed, 0 failed, 1 skipped" % NAME)
        return 0
    ort = have_ort()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, OC_CT_DIR=os.path.abspath(CT_DIR))
        b = subprocess.run(["/usr/bin/python3", "-Es", os.path.abspath(__file__), "--build", tmp],
                           capture_output=True, text=True, env=env)
        if b.returncode != 0 or not os.path.exists(os.path.join(tmp, "cases.json")):
            check(False, "coremltools' builder: %s" % (b.stdout + b.stderr)[-800:])
            return report(NAME)
        with open(os.path.join(tmp, "cases.json")) as fh:
            cases = json.load(fh)
        jobs = []
        for c in cases:
            name = c["name"]
            check(c["ct_ok"], "%s: Apple's loader on coremltools' package: %s" % (name, c["said"]))
            if not c.get("pkg"):
                continue
            # the op the case is named after is in the package (coremltools
            # kept it); fp16_* cases are named after the precision
            mine = [op for op in c.get("ops", {}) if name.startswith(op)]
            check(name.startswith("fp16_") or mine, "%s: no MIL op of that name in the package: %s"
                  % (name, sorted(c.get("ops", {}))))
            out = os.path.join(tmp, name + ".onnx")
            r = subprocess.run([tool, "convert", c["pkg"], "-o", out], capture_output=True,
                               text=True)
            said = (r.stdout + r.stderr).strip()
            if c["kind"] == "refuse":
                lines = said.splitlines()
                check(r.returncode != 0 and len(lines) == 1 and
                      "MIL op '%s'" % c["op"] in said and c["why"] in said,
                      "%s: the import must refuse in one line naming %s and why (%s): %s"
                      % (name, c["op"], c["why"], said[-300:]))
                if r.returncode != 0:
                    print("  %s: refused: %s" % (name, lines[-1] if lines else ""))
                continue
            ok = r.returncode == 0
            if ok:
                k = subprocess.run([tool, "check", out], capture_output=True, text=True)
                ok = k.returncode == 0
                said = (k.stdout + k.stderr).strip()
            check(ok, "%s (%s): import or check: %s" % (name, c["target"], said[-300:]))
            if ok and c.get("case"):
                jobs.append((c["case"], out))
            elif ort:
                check(False, "%s: not run by ONNX Runtime (no import or no expected outputs)"
                      % name)
        if not ort:
            skip("%s: ONNX Runtime's runs of the imports (no ONNX Runtime)" % NAME)
        elif jobs:
            batch = os.path.join(tmp, "ort_jobs.txt")
            with open(batch, "w") as fh:
                fh.write("".join("%s %s\n" % j for j in jobs))
            ortc = os.path.join(ORT_DIR, "ort-check.js")
            r = subprocess.run(["node", ortc, "--batch", batch], capture_output=True, text=True)
            lines = [ln for ln in r.stdout.splitlines()
                     if ln.split(" ")[0] in ("PASS", "FAIL", "ERROR")]
            for ln in lines:
                check(ln.startswith("PASS"), "ONNX Runtime on the import: %s" % ln)
            check(len(lines) == len(jobs), "ONNX Runtime judged %d of %d imports: %s"
                  % (len(lines), len(jobs), (r.stdout + r.stderr)[-300:]))
    return report(NAME)


if __name__ == "__main__":
    sys.exit(main())
