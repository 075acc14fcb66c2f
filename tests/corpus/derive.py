"""Files other tools write, rebuilt with onnx.helper and numpy from models
gen.py exported (there is no onnxconverter-common or ONNX Runtime Python
package here).  Each writer follows the structure its tool writes:

- float16: onnxconverter-common's convert_float_to_float16(keep_io_types=True):
  float initializers, Constant/attribute tensors and value types become
  float16 (magnitudes clamped to [1e-7, 1e4]); Cast nodes to float16 after
  each float graph input and back to float before each float graph output,
  appended after the last node (the graph is then not topologically sorted;
  later releases sort it: the *_fp16sorted variant); nodes of its block list
  (Resize, Upsample, TopK, NonMaxSuppression, RoiAlign, Range, CumSum, Min,
  Max, ...) stay float with Casts around them.
- qdq: ONNX Runtime's quantize_static(QuantFormat.QDQ): int8 weights with a
  DequantizeLinear, int32 bias (scale = input scale * weight scale),
  uint8 activations as QuantizeLinear/DequantizeLinear pairs, ranges from a
  calibration run (min/max).
- qoperator: quantize_static(QuantFormat.QOperator, op_types_to_quantize=
  Conv, MatMul): QLinearConv/QLinearMatMul, QuantizeLinear where a float
  enters, DequantizeLinear where one leaves, Relu/Clip after a quantized node
  folded into its output range.
- dynquant: quantize_dynamic: DynamicQuantizeLinear on activations,
  ConvInteger/MatMulInteger, Cast to float and Mul by the product of scales,
  Add of a Conv's bias.
Their outputs are not PyTorch's: meta expected_by is "none", and the runner
compares ONNX Runtime on the source with ONNX Runtime on the converted file.
"""
import json
import os
import time

import numpy as np


class Derived:
    def __init__(self, kind, source, desc, **opts):
        self.kind, self.source, self.desc, self.opts = kind, source, desc, opts


DERIVED = {}


def derived(name, kind, source, desc, **opts):
    DERIVED[name] = Derived(kind, source, desc, **opts)


# --------------------------------------------------------------------------
# Loading a source file


def load_source(out, src):
    import onnx
    from onnx import numpy_helper
    d = os.path.join(out, "%s_opset%d" % src)
    model = onnx.load(os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    inputs = []
    k = 0
    while os.path.exists(os.path.join(d, "test_data_set_0", "input_%d.pb" % k)):
        t = onnx.TensorProto()
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "rb") as f:
            t.ParseFromString(f.read())
        inputs.append((t.name, numpy_helper.to_array(t)))
        k += 1
    return model, meta, inputs


# --------------------------------------------------------------------------
# float16 (onnxconverter-common, keep_io_types=True)

FP16_BLOCK = {"ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
              "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor",
              "Normalizer", "OneHotEncoder", "SVMClassifier", "SVMRegressor", "Scaler",
              "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap", "NonMaxSuppression", "TopK",
              "RoiAlign", "Resize", "Range", "CumSum", "Min", "Max", "Upsample"}
FLOAT, FLOAT16 = 1, 10


def half_array(a):
    """float32 -> float16 keeping sign and finiteness, as the converter clamps."""
    a = np.asarray(a, dtype=np.float32)
    small, big = np.float32(1e-7), np.float32(1e4)
    a = np.where((a > 0) & (a < small), small, a)
    a = np.where((a < 0) & (a > -small), -small, a)
    a = np.where(np.isfinite(a) & (a > big), big, a)
    a = np.where(np.isfinite(a) & (a < -big), -big, a)
    return a.astype(np.float16)


def half_tensor(t):
    from onnx import numpy_helper
    if t.data_type != FLOAT:
        return False
    arr = numpy_helper.to_array(t)
    new = numpy_helper.from_array(half_array(arr), t.name)
    t.CopyFrom(new)
    return True


def fp16_graph(g, half_names, skip):
    """Converts one graph (and its subgraphs) in place; returns the blocked
    nodes as (graph, index, node): their Casts belong in their own graph."""
    blocked = []
    for k, n in enumerate(g.node):
        if n.name in skip:
            continue
        if n.op_type in FP16_BLOCK:
            blocked.append((g, k, n))
            continue
        if n.op_type == "Cast":
            for a in n.attribute:
                if a.name == "to" and a.i == FLOAT:
                    a.i = FLOAT16
        for a in n.attribute:
            if a.HasField("t"):
                half_tensor(a.t)
            for t in a.tensors:
                half_tensor(t)
            if a.HasField("g"):
                blocked += fp16_graph(a.g, half_names, skip)
            for sub in a.graphs:
                blocked += fp16_graph(sub, half_names, skip)
    for t in g.initializer:
        if half_tensor(t):
            half_names.add(t.name)
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.name in skip:
            continue
        tt = v.type.tensor_type
        if v.type.HasField("tensor_type") and tt.elem_type == FLOAT:
            tt.elem_type = FLOAT16
            half_names.add(v.name)
    return blocked


def to_float16(model, sort=False):
    import onnx
    from onnx import helper
    model = onnx.shape_inference.infer_shapes(model)
    g = model.graph
    rename, skip, casts = {}, set(), []
    # keep_io_types: the graph's float inputs and outputs stay float32
    for i, v in enumerate(g.input):
        if v.type.tensor_type.elem_type == FLOAT:
            new = "graph_input_cast_%d" % i
            rename[v.name] = new
            skip.update([v.name, new])
            casts.append(helper.make_node("Cast", [v.name], [new], to=FLOAT16, name="graph_input_cast%d" % i))
            g.value_info.append(helper.make_tensor_value_info(new, FLOAT16, None))
    for i, v in enumerate(g.output):
        if v.type.tensor_type.elem_type == FLOAT:
            new = "graph_output_cast_%d" % i
            rename[v.name] = new
            skip.add(v.name)
            casts.append(helper.make_node("Cast", [new], [v.name], to=FLOAT, name="graph_output_cast%d" % i))
            g.value_info.append(helper.make_tensor_value_info(new, FLOAT16, None))
    for n in g.node:
        n.input[:] = [rename.get(x, x) for x in n.input]
        n.output[:] = [rename.get(x, x) for x in n.output]
    g.node.extend(casts)
    skip.update(c.name for c in casts)
    half_names = set(rename.values())
    blocked = fp16_graph(g, half_names, skip)
    extra, around, graphs = [], {}, {}
    for bg, k, n in blocked:
        before, after = [], []
        for i, x in enumerate(n.input):
            if x in half_names:
                o = "%s_input_cast_%d" % (n.name, i)
                before.append(helper.make_node("Cast", [x], [o], to=FLOAT, name="%s_input_cast%d" % (n.name, i)))
                n.input[i] = o
        for i, x in enumerate(n.output):
            if x in half_names:
                o = "%s_output_cast_%d" % (n.name, i)
                after.append(helper.make_node("Cast", [o], [x], to=FLOAT16, name="%s_output_cast%d" % (n.name, i)))
                n.output[i] = o
        if bg is g:
            extra += before + after   # the main graph's: appended, as the tool does
        else:
            graphs[id(bg)] = bg
            around[(id(bg), k)] = (before, after)
    # a subgraph's Casts stay in it, around their node (appended to the main
    # graph they read names only the subgraph makes: an invalid file)
    for bg in graphs.values():
        order = []
        for k, m in enumerate(bg.node):
            before, after = around.get((id(bg), k), ([], []))
            order += before + [m] + after
        rebuilt = []   # copies: the originals go with the cleared field
        for m in order:
            c = type(m)()
            c.CopyFrom(m)
            rebuilt.append(c)
        del bg.node[:]
        bg.node.extend(rebuilt)
    g.node.extend(extra)
    if sort:
        topo_sort(g)
    return model


def topo_sort(g):
    known = {v.name for v in g.input} | {t.name for t in g.initializer} | {""}
    nodes, order = list(g.node), []
    while nodes:
        rest = []
        for n in nodes:
            if all(x in known for x in n.input):
                order.append(n)
                known.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(nodes):  # outer-scope names of subgraphs: keep the order
            order += rest
            break
        nodes = rest
    del g.node[:]
    g.node.extend(order)


# --------------------------------------------------------------------------
# Calibration: the float values of every tensor on the sample input, from a
# small interpreter (torch kernels) for the ops of the quantized sources.


def attrs(n):
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def pads2(p, rank):
    """ONNX begin/end pads -> symmetric torch padding, or None if uneven."""
    k = rank
    if not p:
        return [0] * k
    if list(p[:k]) != list(p[k:]):
        raise ValueError("asymmetric pads")
    return list(p[:k])


def run_node(n, v):
    import torch
    import torch.nn.functional as F
    a = attrs(n)
    x = [v[i] if i else None for i in n.input]
    op = n.op_type
    if op == "Conv":
        w = x[1]
        r = w.dim() - 2
        f = (F.conv1d, F.conv2d, F.conv3d)[r - 1]
        return [f(x[0], w, x[2] if len(x) > 2 else None, a.get("strides", [1] * r),
                  pads2(a.get("pads"), r), a.get("dilations", [1] * r), a.get("group", 1))]
    if op == "Relu":
        return [torch.relu(x[0])]
    if op == "Clip":
        lo = x[1] if len(x) > 1 and x[1] is not None else a.get("min", -3.4e38)
        hi = x[2] if len(x) > 2 and x[2] is not None else a.get("max", 3.4e38)
        return [torch.clamp(x[0], float(lo), float(hi))]
    if op == "MaxPool":
        k = a["kernel_shape"]
        return [F.max_pool2d(x[0], k, a.get("strides", k), pads2(a.get("pads"), len(k)),
                             ceil_mode=bool(a.get("ceil_mode", 0)))]
    if op == "GlobalAveragePool":
        return [x[0].mean(dim=tuple(range(2, x[0].dim())), keepdim=True)]
    if op == "Flatten":
        ax = a.get("axis", 1)
        return [x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)]
    if op == "Gemm":
        A = x[0].t() if a.get("transA") else x[0]
        B = x[1].t() if a.get("transB") else x[1]
        y = a.get("alpha", 1.0) * (A @ B)
        return [y + a.get("beta", 1.0) * x[2] if len(x) > 2 else y]
    if op == "MatMul":
        return [x[0] @ x[1]]
    if op == "Add":
        return [x[0] + x[1]]
    if op == "Mul":
        return [x[0] * x[1]]
    if op == "Reshape":
        return [x[0].reshape([int(d) if d != 0 else x[0].shape[i] for i, d in enumerate(x[1].tolist())])]
    if op == "Identity":
        return [x[0]]
    if op == "Constant":
        from onnx import numpy_helper
        return [torch.from_numpy(numpy_helper.to_array(a["value"]).copy())]
    raise ValueError("the calibration interpreter has no %s" % op)


def calibrate(model, inputs):
    import torch
    from onnx import numpy_helper
    v = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in model.graph.initializer}
    for name, arr in inputs:
        v[name] = torch.from_numpy(arr.copy())
    for n in model.graph.node:
        for o, y in zip(n.output, run_node(n, v)):
            v[o] = y
    return {k: (float(t.min()), float(t.max())) for k, t in v.items() if t.dtype == torch.float32}


def act_params(rng):
    """uint8 asymmetric parameters for a range, zero inside it."""
    lo, hi = min(rng[0], 0.0), max(rng[1], 0.0)
    scale = (hi - lo) / 255.0 or 1.0
    zp = int(round(-lo / scale))
    return np.float32(scale), np.uint8(min(max(zp, 0), 255))


def weight_params(w, axis, dtype):
    """Symmetric int8 (zero point 0) or asymmetric uint8, per tensor or per channel."""
    if axis is None:
        red = w.reshape(1, -1)
    else:
        red = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    if dtype == np.int8:
        scale = np.maximum(np.abs(red).max(axis=1), 1e-8) / 127.0
        zp = np.zeros_like(scale, dtype=np.int8)
    else:
        lo = np.minimum(red.min(axis=1), 0)
        hi = np.maximum(red.max(axis=1), 0)
        scale = np.maximum(hi - lo, 1e-8) / 255.0
        zp = np.clip(np.round(-lo / scale), 0, 255).astype(np.uint8)
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = -1
    q = np.round(w / scale.reshape(shape) + zp.reshape(shape).astype(np.float32))
    info = np.iinfo(dtype)
    q = np.clip(q, info.min, info.max).astype(dtype)
    if axis is None:
        return q, scale.astype(np.float32)[0], zp[0]
    return q, scale.astype(np.float32), zp


class Editor:
    """Helpers to add initializers and nodes with the quantizer's names."""

    def __init__(self, model):
        from onnx import numpy_helper
        self.model = model
        self.g = model.graph
        self.inits = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        # the exporter shares equal initializers through Identity nodes: the
        # Identity's output is a constant too
        for n in self.g.node:
            if n.op_type == "Identity" and n.input[0] in self.inits:
                self.inits[n.output[0]] = self.inits[n.input[0]]
        self.new_inits = {}

    def init(self, name, arr):
        from onnx import numpy_helper
        if name not in self.new_inits:
            self.new_inits[name] = numpy_helper.from_array(np.asarray(arr), name)
        return name

    def finish(self, nodes, drop_inits=()):
        """drop_inits: the float constants replaced; one still read (by an
        Identity, say) stays."""
        del self.g.node[:]
        self.g.node.extend(nodes)
        used = {i for n in nodes for i in n.input} | {o.name for o in self.g.output}
        keep = [t for t in self.g.initializer if t.name in used]
        del self.g.initializer[:]
        self.g.initializer.extend(keep + [t for t in self.new_inits.values() if t.name in used])
        del self.g.value_info[:]
        return self.model


def consumers(g):
    res = {}
    for n in g.node:
        for i in n.input:
            res.setdefault(i, []).append(n)
    return res


def bias_int32(ed, b_name, x_scale, w_scale):
    b = ed.inits[b_name]
    scale = (np.float32(x_scale) * np.asarray(w_scale, dtype=np.float32)).astype(np.float32)
    q = np.round(b / scale).astype(np.int32)
    ed.init(b_name + "_quantized", q)
    ed.init(b_name + "_quantized_scale", scale)
    ed.init(b_name + "_quantized_zero_point", np.zeros_like(scale, dtype=np.int32))
    return b_name + "_quantized"


def weight_axis(n, per_channel):
    if not per_channel:
        return None
    return 0 if n.op_type == "Conv" else 1


# --------------------------------------------------------------------------
# QDQ


QDQ_OPS = {"Conv", "MatMul", "Gemm", "Add", "Mul", "MaxPool", "GlobalAveragePool", "Flatten", "Reshape"}


def to_qdq(model, inputs, per_channel=False):
    from onnx import helper
    ranges = calibrate(model, inputs)
    ed = Editor(model)
    g = model.graph
    nodes, done = [], {}

    def qdq(x):
        """A shared QuantizeLinear/DequantizeLinear pair on activation x."""
        if x not in done:
            s, z = act_params(ranges[x])
            ed.init(x + "_scale", s)
            ed.init(x + "_zero_point", z)
            args = [x, x + "_scale", x + "_zero_point"]
            nodes.append(helper.make_node("QuantizeLinear", args, [x + "_QuantizeLinear_Output"],
                                          name=x + "_QuantizeLinear"))
            nodes.append(helper.make_node("DequantizeLinear", [x + "_QuantizeLinear_Output"] + args[1:],
                                          [x + "_DequantizeLinear_Output"], name=x + "_DequantizeLinear"))
            done[x] = (x + "_DequantizeLinear_Output", s)
        return done[x]

    def dq_weight(name, axis):
        q, s, z = weight_params(ed.inits[name], axis, np.int8)
        ed.init(name + "_quantized", q)
        ed.init(name + "_scale", s)
        ed.init(name + "_zero_point", z)
        kw = {"axis": axis} if axis is not None else {}
        nodes.append(helper.make_node("DequantizeLinear", [name + "_quantized", name + "_scale", name + "_zero_point"],
                                      [name + "_DequantizeLinear_Output"], name=name + "_DequantizeLinear", **kw))
        return name + "_DequantizeLinear_Output", s

    dropped = set()
    for n in list(g.node):
        if n.op_type in QDQ_OPS:
            new_in = list(n.input)
            x_scale = None
            for k, x in enumerate(n.input):
                if x in ed.inits and n.op_type in ("Conv", "MatMul", "Gemm") and k == 1:
                    axis = weight_axis(n, per_channel) if n.op_type == "Conv" else None
                    new_in[k], w_scale = dq_weight(x, axis)
                    dropped.add(x)
                elif x in ed.inits and k == 2 and n.op_type in ("Conv", "Gemm") and x_scale is not None:
                    b = bias_int32(ed, x, x_scale, w_scale)
                    nodes.append(helper.make_node("DequantizeLinear", [b, b + "_scale", b + "_zero_point"],
                                                  [x + "_DequantizeLinear_Output"], name=x + "_DequantizeLinear",
                                                  **({"axis": 0} if np.ndim(w_scale) else {})))
                    new_in[k] = x + "_DequantizeLinear_Output"
                    dropped.add(x)
                elif x in ranges and x not in ed.inits:
                    new_in[k], s = qdq(x)
                    if k == 0:
                        x_scale = s
            n.input[:] = new_in
        nodes.append(n)
    # a graph output of a quantized op leaves through a pair too: the
    # producer writes O_QuantizeLinear_Input, the DequantizeLinear writes O
    outs = {o.name for o in g.output}
    for n in list(nodes):
        for k, o in enumerate(n.output):
            if o in outs and n.op_type in QDQ_OPS and o in ranges:
                n.output[k] = o + "_QuantizeLinear_Input"
                s, z = act_params(ranges[o])
                args = [ed.init(o + "_scale", s), ed.init(o + "_zero_point", z)]
                nodes.append(helper.make_node("QuantizeLinear", [n.output[k]] + args, [o + "_QuantizeLinear_Output"],
                                              name=o + "_QuantizeLinear"))
                nodes.append(helper.make_node("DequantizeLinear", [o + "_QuantizeLinear_Output"] + args, [o],
                                              name=o + "_DequantizeLinear"))
    return finish_sorted(ed, nodes, dropped)


def finish_sorted(ed, nodes, dropped):
    model = ed.finish(nodes, dropped)
    topo_sort(model.graph)
    return model


# --------------------------------------------------------------------------
# QOperator (Conv and MatMul)


def to_qoperator(model, inputs, per_channel=False):
    from onnx import helper
    ranges = calibrate(model, inputs)
    ed = Editor(model)
    g = model.graph
    cons = consumers(g)
    quant_ops = ("Conv", "MatMul")
    # Relu/Clip right after a quantized node are folded: the node's output
    # takes the activation's range and name
    fold = {}
    for n in g.node:
        if n.op_type in ("Relu", "Clip") and n.input[0] in ranges:
            prod = [p for p in g.node if n.input[0] in p.output]
            if prod and prod[0].op_type in quant_ops and len(cons.get(n.input[0], [])) == 1 \
                    and prod[0].input[1] in ed.inits:
                fold[n.input[0]] = n
    quantized = {}  # float name -> (quantized name, scale name, zp name)
    nodes, dropped = [], set()

    def qparams(x):
        s, z = act_params(ranges[x])
        return ed.init(x + "_scale", s), ed.init(x + "_zero_point", z), s

    def quantize(x):
        if x not in quantized:
            sn, zn, _ = qparams(x)
            nodes.append(helper.make_node("QuantizeLinear", [x, sn, zn], [x + "_quantized"], name=x + "_QuantizeLinear"))
            quantized[x] = (x + "_quantized", sn, zn)
        return quantized[x]

    def dequantize_uses(x):
        """A float consumer of a quantized tensor gets a DequantizeLinear."""
        q, sn, zn = quantized[x]
        nodes.append(helper.make_node("DequantizeLinear", [q, sn, zn], [x], name=x + "_DequantizeLinear"))

    produced_q = set()
    for n in g.node:
        if n in fold.values():
            continue
        if n.op_type in quant_ops and n.input[1] in ed.inits and n.input[0] in ranges:
            xq, xs, xz = quantize(n.input[0])
            axis = 0 if (per_channel and n.op_type == "Conv") else None
            w = n.input[1]
            q, s, z = weight_params(ed.inits[w], axis, np.int8)
            ed.init(w + "_quantized", q)
            ed.init(w + "_scale", s)
            ed.init(w + "_zero_point", z)
            dropped.add(w)
            y = n.output[0]
            if y in fold:
                y_float = fold[y].output[0]
            else:
                y_float = y
            ys, yz, _ = qparams(y_float)
            args = [xq, xs, xz, w + "_quantized", w + "_scale", w + "_zero_point", ys, yz]
            if n.op_type == "Conv":
                if len(n.input) > 2:
                    x_scale = act_params(ranges[n.input[0]])[0]
                    args.append(bias_int32(ed, n.input[2], x_scale, s))
                    dropped.add(n.input[2])
                nodes.append(helper.make_node("QLinearConv", args, [y_float + "_quantized"],
                                              name=n.name + "_quant", **attrs(n)))
            else:
                nodes.append(helper.make_node("QLinearMatMul", args, [y_float + "_quantized"],
                                              name=n.name + "_quant"))
            quantized[y_float] = (y_float + "_quantized", ys, yz)
            produced_q.add(y_float)
            continue
        nodes.append(n)
    # every float use of a quantized node's output reads a DequantizeLinear
    float_uses = {i for n in nodes if n.op_type not in ("QLinearConv", "QLinearMatMul", "QuantizeLinear")
                  for i in n.input} | {o.name for o in g.output}
    for y in sorted(produced_q):
        if y in float_uses:
            dequantize_uses(y)
    # a QuantizeLinear of a tensor another QLinear node produced reads it directly
    final = []
    for n in nodes:
        if n.op_type == "QuantizeLinear" and n.input[0] in produced_q:
            continue
        final.append(n)
    return finish_sorted(ed, final, dropped)


# --------------------------------------------------------------------------
# dynamic quantization


def to_dynamic(model, inputs, conv_weight=np.uint8, matmul_weight=np.int8):
    from onnx import helper
    ed = Editor(model)
    g = model.graph
    nodes, dyn, dropped = [], {}, set()

    def dyn_quant(x):
        if x not in dyn:
            outs = [x + "_quantized", x + "_scale", x + "_zero_point"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], outs, name=x + "_QuantizeLinear"))
            dyn[x] = outs
        return dyn[x]

    for n in g.node:
        if n.op_type in ("Conv", "MatMul") and len(n.input) > 1 and n.input[1] in ed.inits:
            xq, xs, xz = dyn_quant(n.input[0])
            w = n.input[1]
            dtype = conv_weight if n.op_type == "Conv" else matmul_weight
            q, s, z = weight_params(ed.inits[w], None, dtype)
            ed.init(w + "_quantized", q)
            ed.init(w + "_scale", s)
            ed.init(w + "_zero_point", z)
            dropped.add(w)
            y = n.output[0]
            has_bias = n.op_type == "Conv" and len(n.input) > 2
            iy = y + "_output_quantized"
            if n.op_type == "Conv":
                nodes.append(helper.make_node("ConvInteger", [xq, w + "_quantized", xz, w + "_zero_point"], [iy],
                                              name=n.name + "_quant", **attrs(n)))
            else:
                nodes.append(helper.make_node("MatMulInteger", [xq, w + "_quantized", xz, w + "_zero_point"], [iy],
                                              name=n.name + "_quant"))
            nodes.append(helper.make_node("Cast", [iy], [iy + "_cast_output"], to=FLOAT, name=iy + "_cast"))
            nodes.append(helper.make_node("Mul", [xs, w + "_scale"], [y + "_scales_mul"], name=y + "_scales_mul"))
            scaled = y + "_output_scaled" if has_bias else y
            nodes.append(helper.make_node("Mul", [iy + "_cast_output", y + "_scales_mul"], [scaled],
                                          name=y + "_output_scale_mul"))
            if has_bias:
                b = n.input[2]
                nb = ed.inits[b].reshape([-1] + [1] * (ed.inits[w].ndim - 2))
                ed.init(b + "_reshaped", nb.astype(np.float32))
                dropped.add(b)
                nodes.append(helper.make_node("Add", [scaled, b + "_reshaped"], [y], name=y + "_bias_add"))
            continue
        nodes.append(n)
    return finish_sorted(ed, nodes, dropped)


def build(d, model, inputs):
    o = d.opts
    if d.kind == "float16":
        return to_float16(model, sort=o.get("sort", False))
    if d.kind == "qdq":
        return to_qdq(model, inputs, per_channel=o.get("per_channel", False))
    if d.kind == "qoperator":
        return to_qoperator(model, inputs, per_channel=o.get("per_channel", False))
    return to_dynamic(model, inputs)


def make(name, out, write_file):
    """Writes one derived file; returns the result dict gen.py records."""
    import onnx
    d = DERIVED[name]
    src, opset = d.source
    fname = "%s_opset%d" % (name, opset)
    t0 = time.time()
    try:
        model, meta, inputs = load_source(out, d.source)
        new = build(d, model, inputs)
        new.producer_name = {"float16": "onnxconverter-common-like (tests/corpus)",
                             }.get(d.kind, "onnxruntime.quantization-like (tests/corpus)")
        data = new.SerializeToString()
    except Exception as e:  # noqa: BLE001 - recorded
        return {"file": fname, "name": name, "opset": opset, "kind": d.kind, "family": "?",
                "stage": "derive", "error": ("%s: %s" % (type(e).__name__, e))[:400]}
    secs = time.time() - t0
    out_meta = {"name": name, "family": meta["family"], "kind": d.kind, "opset": opset,
                "case": "%s (from %s_opset%d)" % (d.desc, src, opset), "source": "%s_opset%d" % (src, opset),
                "rtol": 1e-2 if d.kind == "float16" else 1e-3, "atol": 1e-2 if d.kind == "float16" else 1e-3,
                "expected_by": "none", "export_seconds": round(secs, 3), "bytes": len(data),
                "topologically_sorted": not (d.kind == "float16" and not d.opts.get("sort"))}
    try:
        onnx.checker.check_model(new)
        out_meta["onnx_checker"] = "ok"
    except Exception as e:  # noqa: BLE001 - an unsorted graph fails it, as the tool's own file does
        out_meta["onnx_checker"] = str(e).splitlines()[0][:200]
    write_file(os.path.join(out, fname), data, inputs, [], out_meta)
    return {"file": fname, "name": name, "opset": opset, "kind": d.kind, "ok": True, "seconds": round(secs, 2)}


# --------------------------------------------------------------------------
# The derived files

for _src, _o in (("small_cnn", 13), ("resnet18", 13), ("mobilenet_v3_small", 17), ("interp_bilinear_ac_size", 11),
                 ("upsample_nearest_dynamic", 9), ("ssdlite320_mobilenet_v3_large", 11),
                 ("transformer_encoder_layer", 13), ("lstm", 13), ("script_loop", 11), ("topk", 11)):
    derived(_src + "_fp16", "float16", (_src, _o), "float16 keep_io_types, Casts appended")
derived("resnet18_fp16sorted", "float16", ("resnet18", 13), "float16 keep_io_types, topologically sorted", sort=True)
derived("small_cnn_qdq", "qdq", ("small_cnn", 13), "QDQ, per-tensor int8 weights, uint8 activations")
derived("resnet18_qdq", "qdq", ("resnet18", 13), "QDQ, per-channel int8 weights, uint8 activations",
        per_channel=True)
derived("mlp_qdq", "qdq", ("mlp", 13), "QDQ around MatMul and Add")
derived("mobilenet_v2_qdq", "qdq", ("mobilenet_v2", 13), "QDQ, per-channel, Clip kept")
derived("small_cnn_qoperator", "qoperator", ("small_cnn", 13), "QLinearConv, Relu folded")
derived("resnet18_qoperator", "qoperator", ("resnet18", 13), "QLinearConv per-channel, Relu folded",
        per_channel=True)
derived("mlp_qoperator", "qoperator", ("mlp", 13), "QLinearMatMul, float bias Add")
derived("small_cnn_dynquant", "dynamic-quant", ("small_cnn", 13), "DynamicQuantizeLinear + ConvInteger (uint8)")
derived("mlp_dynquant", "dynamic-quant", ("mlp", 13), "DynamicQuantizeLinear + MatMulInteger (int8)")
derived("transformer_encoder_layer_dynquant", "dynamic-quant", ("transformer_encoder_layer", 13),
        "DynamicQuantizeLinear + MatMulInteger in attention and feed-forward")
derived("resnet18_dynquant", "dynamic-quant", ("resnet18", 13), "DynamicQuantizeLinear + ConvInteger")
