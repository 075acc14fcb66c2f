#!/usr/bin/python3
"""coreml_cmctl_models.py DIR - writes the small ONNX cases of the Core ML
lowerings of Loop (while_loop), an If nested in a Loop body, the scatters,
NonZero, OneHot, Trilu, Size, CastLike, Hardmax and ReverseSequence, each a
backend-test style folder DIR/NAME/{model.onnx, test_data_set_0/input_K.pb,
output_K.pb}, with the expected outputs computed here by numpy (not by
onnx-convert), plus a file `mil` naming MIL ops the export must hold, or
`refuse` holding a piece of the refusal the export must give.

Graph inputs and outputs are float32 or int32 with rank >= 1 (what a Core
ML multi-array feature can be); int64 values are made inside the model.
Exits 3 when onnx or numpy is missing (the callers skip then)."""
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
except ImportError:
    sys.exit(3)

OUT = sys.argv[1]
F, I32, I64 = T.FLOAT, T.INT32, T.INT64


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def const(name, arr):
    return h.make_tensor(name, {np.float32: F, np.int64: I64, np.int32: I32}[arr.dtype.type],
                         arr.shape, arr.flatten().tolist())


def case(name, nodes, inputs, outputs, feeds, expect, inits=(), mil=(), refuse=None):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, a in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(a, inputs[k].name).SerializeToString())
    for k, a in enumerate(expect):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(a, outputs[k].name).SerializeToString())
    if mil:
        with open(os.path.join(d, "mil"), "w") as f:
            f.write(" ".join(mil) + "\n")
    if refuse:
        with open(os.path.join(d, "refuse"), "w") as f:
            f.write(refuse + "\n")


def f32(*a):
    return np.array(a, dtype=np.float32)


# ---- Loop --------------------------------------------------------------------

def loop_if_scan():
    """Loop(M, cond) carrying y, a scan output, an If in the body:
    y = (i < 3 ? y * 2 : y + 1) + x while i < M and sum(y) < 1000."""
    then_g = h.make_graph([h.make_node("Mul", ["y_in", "two"], ["t_out"])], "then", [],
                          [vi("t_out", F, [2])])
    else_g = h.make_graph([h.make_node("Add", ["y_in", "one_f"], ["e_out"])], "else", [],
                          [vi("e_out", F, [2])])
    body = h.make_graph([
        h.make_node("Less", ["i", "three"], ["small"]),
        h.make_node("If", ["small"], ["y_if"], then_branch=then_g, else_branch=else_g),
        h.make_node("Add", ["y_if", "x"], ["y_out"]),
        h.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0),
        h.make_node("Less", ["s", "limit"], ["c_out"]),
        h.make_node("Identity", ["y_out"], ["scan"]),
    ], "body", [vi("i", I64, []), vi("c_in", T.BOOL, []), vi("y_in", F, [2])],
        [vi("c_out", T.BOOL, []), vi("y_out", F, [2]), vi("scan", F, [2])],
        [const("three", np.array(3, np.int64)), const("two", f32(2.0).reshape(())),
         const("one_f", f32(1.0).reshape(())), const("limit", f32(1000.0).reshape(()))])
    nodes = [h.make_node("Cast", ["mf"], ["M"], to=I64),
             h.make_node("ReduceSum", ["y0"], ["s0"], keepdims=0),
             h.make_node("Less", ["s0", "limit0"], ["cond"]),
             h.make_node("Loop", ["M", "cond", "y0"], ["y_final", "ys"], body=body)]
    y0, x, mf = f32(1, 2), f32(0.5, -1), f32(7)
    y, ys = y0.copy(), []
    for i in range(int(mf[0])):
        if not y.sum() < 1000:
            break
        y = (y * 2 if i < 3 else y + 1) + x
        ys.append(y.copy())
    case("loop_if_scan", nodes, [vi("mf", F, [1]), vi("y0", F, [2]), vi("x", F, [2])],
         [vi("y_final", F, [2]), vi("ys", F, [None, 2])], [mf, y0, x],
         [y, np.array(ys, np.float32)], [const("limit0", f32(1000.0).reshape(()))],
         mil=["while_loop", "cond", "concat"])


def loop_no_cond():
    """Loop(M, "") carrying a counter-scaled sum; two scan outputs."""
    body = h.make_graph([
        h.make_node("Cast", ["i"], ["fi"], to=F),
        h.make_node("Mul", ["x", "fi"], ["xi"]),
        h.make_node("Add", ["acc_in", "xi"], ["acc_out"]),
        h.make_node("Identity", ["c_in"], ["c_out"]),
        h.make_node("ReduceSum", ["acc_out"], ["tot"], keepdims=1),
    ], "body", [vi("i", I64, []), vi("c_in", T.BOOL, []), vi("acc_in", F, [3])],
        [vi("c_out", T.BOOL, []), vi("acc_out", F, [3]), vi("xi", F, [3]), vi("tot", F, [1])])
    nodes = [h.make_node("Loop", ["M", "", "a0"], ["a", "xs", "tots"], body=body)]
    x, a0 = f32(1, -2, 3), f32(0, 0, 1)
    a, xs, tots = a0.copy(), [], []
    for i in range(4):
        xi = x * i
        a = a + xi
        xs.append(xi)
        tots.append([a.sum()])
    case("loop_no_cond", nodes, [vi("a0", F, [3]), vi("x", F, [3])],
         [vi("a", F, [3]), vi("xs", F, [None, 3]), vi("tots", F, [None, 1])], [a0, x],
         [a, np.array(xs, np.float32), np.array(tots, np.float32)],
         [const("M", np.array(4, np.int64))], mil=["while_loop", "fill", "expand_dims"])


def loop_no_m():
    """Loop("", cond): doubles y while its sum stays below the limit."""
    body = h.make_graph([
        h.make_node("Mul", ["y_in", "two"], ["y_out"]),
        h.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0),
        h.make_node("Less", ["s", "lim"], ["c_out"]),
    ], "body", [vi("i", I64, []), vi("c_in", T.BOOL, []), vi("y_in", F, [2])],
        [vi("c_out", T.BOOL, []), vi("y_out", F, [2])],
        [const("two", f32(2.0).reshape(()))])
    nodes = [h.make_node("ReduceSum", ["y0"], ["s0"], keepdims=0),
             h.make_node("Less", ["s0", "lim"], ["cond"]),
             h.make_node("Loop", ["", "cond", "y0"], ["y"], body=body)]
    y0 = f32(1, 0.5)
    y = y0.copy()
    while True:
        y = y * 2
        if not y.sum() < 100:
            break
    case("loop_no_m", nodes, [vi("y0", F, [2])], [vi("y", F, [2])], [y0], [y],
         [const("lim", f32(100.0).reshape(()))], mil=["while_loop", "identity"])


def loop_nested():
    """An outer Loop (3 iterations) whose body runs an inner Loop (i + 1
    iterations) adding x to y: y grows by x * (1 + 2 + 3)."""
    inner = h.make_graph([
        h.make_node("Add", ["z_in", "x"], ["z_out"]),
        h.make_node("Identity", ["ci"], ["co"]),
    ], "inner", [vi("j", I64, []), vi("ci", T.BOOL, []), vi("z_in", F, [2])],
        [vi("co", T.BOOL, []), vi("z_out", F, [2])])
    outer = h.make_graph([
        h.make_node("Add", ["i", "one"], ["n_in"]),
        h.make_node("Loop", ["n_in", "", "y_in"], ["y_out"], body=inner),
        h.make_node("Identity", ["c_in"], ["c_out"]),
    ], "outer", [vi("i", I64, []), vi("c_in", T.BOOL, []), vi("y_in", F, [2])],
        [vi("c_out", T.BOOL, []), vi("y_out", F, [2])],
        [const("one", np.array(1, np.int64))])
    y0, x = f32(1, 2), f32(0.5, -0.25)
    case("loop_nested", [h.make_node("Loop", ["M", "", "y0"], ["y"], body=outer)],
         [vi("y0", F, [2]), vi("x", F, [2])], [vi("y", F, [2])], [y0, x], [y0 + 6 * x],
         [const("M", np.array(3, np.int64))], mil=["while_loop"])


def loop_in_if():
    """An If whose then branch runs a Loop (doubling y M times), else y + 1."""
    body = h.make_graph([h.make_node("Mul", ["y_in", "two"], ["y_out"]),
                         h.make_node("Identity", ["c_in"], ["c_out"])], "body",
                        [vi("i", I64, []), vi("c_in", T.BOOL, []), vi("y_in", F, [2])],
                        [vi("c_out", T.BOOL, []), vi("y_out", F, [2])],
                        [const("two", f32(2.0).reshape(()))])
    then_g = h.make_graph([h.make_node("Loop", ["M", "", "y0"], ["t"], body=body)], "then", [],
                          [vi("t", F, [2])])
    else_g = h.make_graph([h.make_node("Add", ["y0", "one_f"], ["e"])], "else", [],
                          [vi("e", F, [2])])
    nodes = [h.make_node("ReduceSum", ["y0"], ["s"], keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["p"]),
             h.make_node("If", ["p"], ["y"], then_branch=then_g, else_branch=else_g)]
    y0 = f32(1, 2)
    case("loop_in_if", nodes, [vi("y0", F, [2])], [vi("y", F, [2])], [y0], [y0 * 16],
         [const("M", np.array(4, np.int64)), const("two", f32(2.0).reshape(())),
          const("one_f", f32(1.0).reshape(())), const("zero", f32(0.0).reshape(()))],
         mil=["cond", "while_loop"])


def loop_zero_trips():
    """M = 0: the carried value comes out as it went in, the scan output
    empty ([0, 2])."""
    body = h.make_graph([h.make_node("Add", ["y_in", "y_in"], ["y_out"]),
                         h.make_node("Identity", ["c_in"], ["c_out"]),
                         h.make_node("Identity", ["y_out"], ["sc"])], "body",
                        [vi("i", I64, []), vi("c_in", T.BOOL, []), vi("y_in", F, [2])],
                        [vi("c_out", T.BOOL, []), vi("y_out", F, [2]), vi("sc", F, [2])])
    y0 = f32(1, 2)
    case("loop_zero_trips", [h.make_node("Loop", ["M", "", "y0"], ["y", "ys"], body=body)],
         [vi("y0", F, [2])], [vi("y", F, [2]), vi("ys", F, [None, 2])], [y0],
         [y0, np.zeros((0, 2), np.float32)], [const("M", np.array(0, np.int64))],
         mil=["while_loop", "fill"])


def loop_unbounded():
    body = h.make_graph([h.make_node("Identity", ["y_in"], ["y_out"]),
                         h.make_node("Identity", ["c_in"], ["c_out"])], "body",
                        [vi("i", I64, []), vi("c_in", T.BOOL, []), vi("y_in", F, [2])],
                        [vi("c_out", T.BOOL, []), vi("y_out", F, [2])])
    case("loop_unbounded", [h.make_node("Loop", ["", "", "y0"], ["y"], body=body)],
         [vi("y0", F, [2])], [vi("y", F, [2])], [f32(1, 2)], [f32(1, 2)],
         refuse="the loop never ends")


def scan_rev():
    """Scan over X [T, 2] (axis 0) and Y [2, T] (axis 1, reversed), T
    symbolic: s += x * y; scan outputs s (axis 0) and x (axis 1, reversed)."""
    body = h.make_graph([
        h.make_node("Mul", ["x", "y"], ["xy"]),
        h.make_node("Add", ["s_in", "xy"], ["s_out"]),
        h.make_node("Identity", ["s_out"], ["o1"]),
        h.make_node("Identity", ["x"], ["o2"]),
    ], "body", [vi("s_in", F, [2]), vi("x", F, [2]), vi("y", F, [2])],
        [vi("s_out", F, [2]), vi("o1", F, [2]), vi("o2", F, [2])])
    nodes = [h.make_node("Scan", ["s0", "X", "Y"], ["s", "O1", "O2"], body=body,
                         num_scan_inputs=2, scan_input_axes=[0, 1],
                         scan_input_directions=[0, 1], scan_output_axes=[0, 1],
                         scan_output_directions=[0, 1])]
    X = np.arange(8, dtype=np.float32).reshape(4, 2)
    Y = (np.arange(8, dtype=np.float32).reshape(2, 4) - 3) / 2
    s0 = f32(1, -1)
    s, o1, o2 = s0.copy(), [], []
    for t in range(4):
        s = s + X[t] * Y[:, 3 - t]
        o1.append(s.copy())
        o2.append(X[t])
    case("scan_rev", nodes, [vi("s0", F, [2]), vi("X", F, ["T", 2]), vi("Y", F, [2, "T"])],
         [vi("s", F, [2]), vi("O1", F, ["T", 2]), vi("O2", F, [2, "T"])], [s0, X, Y],
         [s, np.stack(o1, 0), np.stack(o2[::-1], 1)], mil=["while_loop", "gather", "concat"])


# ---- index family ----------------------------------------------------------------

def scatters():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[1, -1], [0, -4], [-2, 2]], np.int32)
    upd = f32(10, 20, 30, 40, 50, 60).reshape(3, 2)
    exp = data.copy()
    for r in range(3):
        for k in range(2):
            exp[r, idx[r, k] % 4] += upd[r, k]
    case("scatter_elements_neg_add",
         [h.make_node("ScatterElements", ["data", "idx", "upd"], ["y"], axis=1,
                      reduction="add")],
         [vi("data", F, [3, 4]), vi("idx", I32, [3, 2]), vi("upd", F, [3, 2])],
         [vi("y", F, [3, 4])], [data, idx, upd], [exp], mil=["scatter_along_axis", "select"])
    # ScatterND with negative indices (int64 inside the model)
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([[-1, 0], [0, -2]], np.int32)
    upd = -np.arange(8, dtype=np.float32).reshape(2, 4)
    exp = data.copy()
    exp[1, 0] = upd[0]
    exp[0, 1] = upd[1]
    case("scatternd_neg",
         [h.make_node("Cast", ["idx"], ["idx64"], to=I64),
          h.make_node("ScatterND", ["data", "idx64", "upd"], ["y"])],
         [vi("data", F, [2, 3, 4]), vi("idx", I32, [2, 2]), vi("upd", F, [2, 4])],
         [vi("y", F, [2, 3, 4])], [data, idx, upd], [exp], mil=["scatter_nd", "select"])


def compress_gather():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cf = f32(1, -1, 2)
    case("compress_axis1",
         [h.make_node("Greater", ["cf", "zero"], ["cond"]),
          h.make_node("Compress", ["x", "cond"], ["y"], axis=1)],
         [vi("x", F, [3, 4]), vi("cf", F, [3])], [vi("y", F, [3, None])], [x, cf],
         [np.compress(cf > 0, x, axis=1)], [const("zero", f32(0).reshape(()))],
         mil=["non_zero", "gather"])
    case("compress_flat",
         [h.make_node("Greater", ["cf", "zero"], ["cond"]),
          h.make_node("Compress", ["x", "cond"], ["y"])],
         [vi("x", F, [3, 4]), vi("cf", F, [5])], [vi("y", F, [None])], [x, f32(0, 1, 1, 0, 1)],
         [np.compress(f32(0, 1, 1, 0, 1) > 0, x)], [const("zero", f32(0).reshape(()))],
         mil=["non_zero", "gather", "reshape"])
    idx = np.array([[-1, 0], [2, -3]], np.int32)
    case("gather_neg_dynamic", [h.make_node("Gather", ["x", "idx"], ["y"], axis=1)],
         [vi("x", F, [3, 4]), vi("idx", I32, [2, 2])], [vi("y", F, [3, 2, 2])], [x, idx],
         [np.take(x, idx, axis=1)], mil=["gather", "select"])


def slice_dynamic():
    """Slice with computed starts/ends (negative and out of range), axes
    [2, 0] constant, steps 1: clamped at run time."""
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    se = f32(-4, -9, 9, 2)  # starts (axis 2, axis 0), ends (axis 2, axis 0)
    st, en = se[:2].astype(np.int64), se[2:].astype(np.int64)
    exp = x[max(st[1] + 3, 0):min(en[1], 3), :, st[0] + 5:min(en[0], 5)]
    case("slice_dynamic",
         [h.make_node("Cast", ["se"], ["se64"], to=I64),
          h.make_node("Split", ["se64"], ["s", "e"], axis=0),
          h.make_node("Slice", ["x", "s", "e", "axes"], ["y"])],
         [vi("x", F, [3, 4, 5]), vi("se", F, [4])], [vi("y", F, [None, 4, None])], [x, se],
         [exp], [const("axes", np.array([2, 0], np.int64))],
         mil=["slice_by_index", "maximum", "minimum", "gather"])


def nonzero_size():
    x = f32(0, 1, 0, 2, 3, 0).reshape(2, 3)
    nz = np.array(np.nonzero(x), np.float32)
    case("nonzero_size",
         [h.make_node("NonZero", ["x"], ["nz"]),
          h.make_node("Cast", ["nz"], ["nzf"], to=F),
          h.make_node("Size", ["nz"], ["n"]),
          h.make_node("Cast", ["n"], ["nf"], to=F),
          h.make_node("Unsqueeze", ["nf", "ax0"], ["n1"])],
         [vi("x", F, [2, 3])], [vi("nzf", F, [2, None]), vi("n1", F, [1])], [x],
         [nz, f32(nz.size)], [const("ax0", np.array([0], np.int64))],
         mil=["non_zero", "transpose", "reduce_prod"])


def onehot():
    idx = np.array([[1, -1, 9], [-3, 12, -13]], np.int32)
    depth = 10
    exp = np.zeros((2, depth, 3), np.float32) + 2
    for a in range(2):
        for b in range(3):
            v = idx[a, b]
            if -depth <= v < depth:
                exp[a, v % depth, b] = 5
    case("onehot_axis1",
         [h.make_node("OneHot", ["idx", "depth", "vals"], ["y"], axis=1)],
         [vi("idx", I32, [2, 3])], [vi("y", F, [2, depth, 3])], [idx], [exp],
         [const("depth", np.array(depth, np.int64)), const("vals", f32(2, 5))],
         mil=["one_hot", "select"])
    # depth and values computed (graph inputs): a bool one_hot and a select
    exp = np.zeros((2, 3, 4), np.float32) - 1.5
    for a in range(2):
        for b in range(3):
            v = idx[a, b]
            if -4 <= v < 4:
                exp[a, b, v % 4] = 7.25
    case("onehot_dynamic", [h.make_node("OneHot", ["idx", "depth", "vals"], ["y"])],
         [vi("idx", I32, [2, 3]), vi("depth", F, [1]), vi("vals", F, [2])],
         [vi("y", F, [2, 3, None])], [idx, f32(4.7), f32(-1.5, 7.25)], [exp],
         mil=["one_hot", "gather", "select", "cast"])


def trilu():
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    for name, upper, k, mil in (("triu_k1_mask", 1, 1, "select"), ("tril_km1_mask", 0, -1, "select"),
                                ("triu_km1_band", 1, -1, "band_part"),
                                ("tril_k2_band", 0, 2, "band_part")):
        exp = np.triu(x, k) if upper else np.tril(x, k)
        case(name, [h.make_node("Trilu", ["x", "k"], ["y"], upper=upper)],
             [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], [x], [exp],
             [const("k", np.array(k, np.int64))], mil=[mil])


def misc():
    x = f32(3, 1, 3, -2, 5, 5).reshape(2, 3)
    exp = np.zeros_like(x)
    exp[np.arange(2), x.argmax(axis=1)] = 1
    case("hardmax_axis1", [h.make_node("Hardmax", ["x"], ["y"], axis=1)],
         [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [x], [exp],
         mil=["reduce_argmax", "one_hot"])
    like = np.array([7], np.int32)
    xf = f32(1.7, -2.2, 3.9)
    case("castlike_int32", [h.make_node("CastLike", ["x", "like"], ["y"])],
         [vi("x", F, [3]), vi("like", I32, [1])], [vi("y", I32, [3])], [xf, like],
         [xf.astype(np.int32)], mil=["cast"])
    x = np.arange(12, dtype=np.float32).reshape(4, 3)  # time x batch
    lens = np.array([4, 1, 3], np.int32)
    exp = x.copy()
    for b in range(3):
        exp[:lens[b], b] = x[:lens[b], b][::-1]
    case("reverse_sequence",
         [h.make_node("Cast", ["lens"], ["l64"], to=I64),
          h.make_node("ReverseSequence", ["x", "l64"], ["y"], time_axis=0, batch_axis=1)],
         [vi("x", F, [4, 3]), vi("lens", I32, [3])], [vi("y", F, [4, 3])], [x, lens], [exp],
         mil=["reverse_sequence"])
    case("trilu_dynamic_k",
         [h.make_node("Cast", ["kf"], ["k64"], to=I64),
          h.make_node("Squeeze", ["k64"], ["k"]),
          h.make_node("Trilu", ["x", "k"], ["y"])],
         [vi("x", F, [3, 4]), vi("kf", F, [1])], [vi("y", F, [3, 4])],
         [np.ones((3, 4), np.float32), f32(1)], [np.triu(np.ones((3, 4), np.float32), 1)],
         mil=["greater_equal", "select"])
    case("trilu_dynamic_k_symbolic",
         [h.make_node("Cast", ["kf"], ["k64"], to=I64),
          h.make_node("Squeeze", ["k64"], ["k"]),
          h.make_node("Trilu", ["x", "k"], ["y"], upper=0)],
         [vi("x", F, ["R", 4]), vi("kf", F, [1])], [vi("y", F, ["R", 4])],
         [np.ones((3, 4), np.float32), f32(1)], [np.tril(np.ones((3, 4), np.float32), 1)],
         refuse="the last two dims are not static")

loop_if_scan()
loop_no_cond()
loop_no_m()
loop_unbounded()
loop_nested()
loop_in_if()
loop_zero_trips()
scan_rev()
scatters()
nonzero_size()
compress_gather()
slice_dynamic()
onehot()
trilu()
misc()
