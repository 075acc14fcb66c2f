#!/usr/bin/python3
"""ONNX Runtime as the judge of lowerings to old opsets that must leave a
model that old runtimes run.

    tests/lowering_ort.py ONNX_CONVERT   (from the project root)

- Slice with steps other than 1 below opset 10 (Slice-1 has no steps): a
  PyTorch export of x[:, ::2] and friends at opset 11, converted to 9 and
  7, must hold no Slice with steps and give what ONNX Runtime computes
  for the export.
- Resize-11 as onnxconverter-common's float16 models write it: its empty
  roi and scales are float16 Constants Cast to float, beside sizes.
  Converted to 13 and 18, the empty inputs must be left out (ORT refuses
  scales beside sizes when it cannot see scales is empty) and ORT must
  give the original's outputs.
- DynamicQuantizeLinear + ConvInteger / MatMulInteger (onnx's helper, the
  way ONNX Runtime's dynamic quantizer writes them) converted to opset 9:
  the integer products become a Conv / MatMul in float32 where float32 is
  exact, which ONNX Runtime runs (it has no double Conv), with the outputs
  ORT computes for the original at its own opset. Where float32 cannot
  be shown exact the Conv stays double, and the report (text and JSON)
  says so, naming the node.

- QDQ models (ONNX Runtime's quantizer): per-channel int8 weights and
  int32 biases through DequantizeLinear, converted to 12 and 9: the known
  ones are folded into float constants, a per-axis DequantizeLinear of a
  run-time int8 x is expanded along its axis.

The expected outputs are ORT's run of the original (tests/ort_expect.js),
and ort-check.js judges the converted model against them. Prints
"lowering_ort: N passed, N failed" (skips when torch, node or the oracle
is missing).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import ORT_CHECK, ORT_DIR, check, have_ort, report, run, skip  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "lowering_ort"


def case_dir(root, name, inputs):
    """A backend-test case folder holding the float32 inputs."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    for i, (n, a) in enumerate(inputs):
        t = numpy_helper.from_array(a.astype(np.float32), n)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
    return d


def ort_expect(d, model):
    r = subprocess.run(["node", os.path.join(HERE, "ort_expect.js"), ORT_DIR, d, model],
                       capture_output=True, text=True)
    check(r.returncode == 0, "%s: ORT runs the original: %s" % (model, r.stderr.strip()))
    return r.returncode == 0


def judge(tool, d, src, opset, what):
    """Converts src to opset and has ORT judge it against the case's
    expected outputs; returns the converted model (or None)."""
    out = os.path.join(d, "opset%d.onnx" % opset)
    r = run(tool, "convert", src, "-o", out, "--opset", str(opset))
    check(r.returncode == 0, "%s -> %d converts: %s" % (what, opset, r.stderr.strip()))
    if r.returncode:
        return None
    r = subprocess.run(["node", ORT_CHECK, d, "--model", out, "--rtol", "0", "--atol", "0"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "%s -> %d: ORT gives the original's outputs: %s"
          % (what, opset, (r.stdout + r.stderr).strip()[-300:]))
    return onnx.load(out)


def ops(m):
    return [n.op_type for n in m.graph.node]


# ---- Slice steps below 10 ------------------------------------------------

def slice_models(tool, root):
    try:
        import torch
    except ImportError:
        skip("torch is not installed: no PyTorch export")
        return

    class Strided(torch.nn.Module):
        def forward(self, x):
            return torch.cat([x[:, ::2].flatten(), x[:, 1::3, 1::2].flatten()])

    d = os.path.join(root, "slice")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    x = np.random.default_rng(5).standard_normal((2, 7, 5)).astype(np.float32)
    torch.onnx.export(Strided(), torch.from_numpy(x), src, opset_version=11,
                      input_names=["x"], output_names=["y"])
    steps = [n for n in onnx.load(src).graph.node if n.op_type == "Slice" and len(n.input) > 4]
    check(len(steps) >= 2, "the export holds Slices with steps")
    case_dir(root, "slice", [("x", x)])
    if not ort_expect(d, src):
        return
    for opset in (9, 7):
        m = judge(tool, d, src, opset, "x[:, ::2] (PyTorch, opset 11)")
        if m:
            check("Gather" in ops(m), "opset %d: the steps are Gathers: %s" % (opset, ops(m)))


# ---- Resize-11 with Cast-fed empty roi / scales -----------------------------

def resize_cast_empty(tool, root):
    """x -> Resize-11(x, Cast(empty), Cast(empty), sizes): the empty
    float16 Constants (Resize-11's "not given") reach Resize through Casts
    to float, as onnxconverter-common writes them."""
    empty = helper.make_tensor("e", TP.FLOAT16, [0], [])
    nodes = [helper.make_node("Constant", [], ["e"], value=empty),
             helper.make_node("Cast", ["e"], ["roi"], to=TP.FLOAT),
             helper.make_node("Cast", ["e"], ["scales"], to=TP.FLOAT),
             helper.make_node("Constant", [], ["sizes"],
                              value=numpy_helper.from_array(np.array([1, 2, 11, 13], np.int64))),
             helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], mode="linear",
                              coordinate_transformation_mode="align_corners")]
    g = helper.make_graph(nodes, "resize_cast_empty",
                          [helper.make_tensor_value_info("x", TP.FLOAT, [1, 2, 5, 6])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, [1, 2, 11, 13])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 6
    d = os.path.join(root, "resize_cast_empty")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    onnx.save(m, src)
    case_dir(root, "resize_cast_empty",
             [("x", np.random.default_rng(3).uniform(-2, 2, (1, 2, 5, 6)))])
    if not ort_expect(d, src):
        return
    for opset in (13, 18):
        out = judge(tool, d, src, opset, "Resize-11 with Cast-fed empty roi and scales")
        if out:
            rs = [n for n in out.graph.node if n.op_type == "Resize"]
            check(len(rs) == 1 and list(rs[0].input[1:3]) == ["", ""],
                  "opset %d: roi and scales are left out: %s"
                  % (opset, [list(n.input) for n in rs]))


# ---- integer products below 10 -------------------------------------------

def quant_model(kind, w, wzp, xshape, attrs=None):
    """x (float) -> DynamicQuantizeLinear -> ConvInteger / MatMulInteger
    with the constant uint8 weights w (zero point wzp) -> Cast to float."""
    op = "ConvInteger" if kind == "conv" else "MatMulInteger"
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             helper.make_node(op, ["q", "w", "z", "wz"], ["acc"], name="prod", **(attrs or {})),
             helper.make_node("Cast", ["acc"], ["y"], to=TP.FLOAT)]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(wzp, "wz")]
    g = helper.make_graph(nodes, kind, [helper.make_tensor_value_info("x", TP.FLOAT, xshape)],
                          [helper.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 6
    return m


def qlinear_conv_model(w, bias, xshape, attrs=None):
    """x (float) -> QuantizeLinear (uint8) -> QLinearConv with the constant
    uint8 weights w (zero point 128, scale per output channel) and int32
    bias -> DequantizeLinear: what ONNX Runtime's QOperator quantizer
    writes."""
    m_out = w.shape[0]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q"]),
             helper.make_node("QLinearConv", ["q", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                              ["qy"], name="prod", **(attrs or {})),
             helper.make_node("DequantizeLinear", ["qy", "ys", "yz"], ["y"])]
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
             numpy_helper.from_array(np.array(60, np.uint8), "xz"),
             numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.linspace(0.001, 0.003, m_out).astype(np.float32), "ws"),
             numpy_helper.from_array(np.array(128, np.uint8), "wz"),
             numpy_helper.from_array(np.array(0.5, np.float32), "ys"),
             numpy_helper.from_array(np.array(120, np.uint8), "yz"),
             numpy_helper.from_array(bias, "b")]
    g = helper.make_graph(nodes, "qlinearconv",
                          [helper.make_tensor_value_info("x", TP.FLOAT, xshape)],
                          [helper.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def alternating(shape):
    """uint8 weights 0, 255, 0, ...: |w - 128| is 128 or 127 everywhere."""
    return np.where(np.arange(np.prod(shape)).reshape(shape) % 2 == 0, 0, 255).astype(np.uint8)


def quant_models(tool, root):
    r = np.random.default_rng(11)
    cases = [
        ("convinteger", quant_model("conv", r.integers(0, 256, (5, 4, 3, 3), dtype=np.uint8),
                                    np.array(128, np.uint8), [1, 4, 6, 6],
                                    {"pads": [1, 1, 1, 1]}), (1, 4, 6, 6)),
        ("convinteger_group", quant_model("conv", r.integers(0, 256, (6, 2, 3, 3), dtype=np.uint8),
                                          np.array(7, np.uint8), [1, 6, 5, 5],
                                          {"group": 3, "strides": [2, 2]}), (1, 6, 5, 5)),
        ("matmulinteger", quant_model("mm", r.integers(0, 256, (16, 4), dtype=np.uint8),
                                      np.array(100, np.uint8), [3, 16]), (3, 16)),
        # 288 terms: 255 * 255 * 288 passes 2^24, but the weights' own sum
        # of |w - 128| times 255 does not
        ("convinteger_wide", quant_model("conv", r.integers(64, 192, (2, 32, 3, 3), dtype=np.uint8),
                                         np.array(128, np.uint8), [1, 32, 4, 4]), (1, 32, 4, 4)),
        # 576 terms of |w - 128| = 128: one float32 Conv could pass 2^24,
        # so the channels are summed in float32 Convs of 57 (2 per group)
        ("convinteger_chunked", quant_model("conv", alternating((4, 64, 3, 3)),
                                            np.array(128, np.uint8), [1, 128, 4, 4],
                                            {"group": 2, "pads": [1, 1, 1, 1]}), (1, 128, 4, 4)),
        # QLinearConv's sums as ConvInteger's: one float32 Conv, and float32
        # Convs of a few channels (576 terms of 128), the bias added in double
        ("qlinearconv", qlinear_conv_model(r.integers(100, 156, (3, 4, 3, 3), dtype=np.uint8),
                                           r.integers(-500, 500, (3,)).astype(np.int32),
                                           [1, 4, 6, 6], {"pads": [1, 1, 1, 1]}), (1, 4, 6, 6)),
        ("qlinearconv_chunked", qlinear_conv_model(alternating((4, 64, 3, 3)),
                                                   r.integers(-9000, 9000, (4,)).astype(np.int32),
                                                   [1, 64, 4, 4], {"pads": [1, 1, 1, 1]}),
         (1, 64, 4, 4)),
    ]
    for name, m, shape in cases:
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "model.onnx")
        onnx.save(m, src)
        case_dir(root, name, [("x", r.uniform(-3, 5, shape))])
        if not ort_expect(d, src):
            continue
        out = judge(tool, d, src, 9, name)
        if out:
            inf = onnx.shape_inference.infer_shapes(out)
            types = {v.name: v.type.tensor_type.elem_type for v in inf.graph.value_info}
            prods = [(n.name, types.get(n.output[0])) for n in out.graph.node
                     if n.op_type in ("Conv", "MatMul")]
            check(prods and all(t == TP.FLOAT for _, t in prods),
                  "%s -> 9: the products are float32: %s" % (name, prods))


# ---- QDQ: DequantizeLinear the target cannot take ---------------------

def qdq_model(nodes, inits, xshape, opset):
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TP.FLOAT, xshape)],
                          [helper.make_tensor_value_info("y", TP.FLOAT, None)],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7 if opset >= 13 else 6
    return m


def qdq_models(tool, root):
    """What ONNX Runtime's QDQ quantizer writes: constant weights (int8,
    one scale per output channel) and int32 biases fed through
    DequantizeLinear. Below 13 (per-axis) and below 10 (int32: no exact
    float expansion) they are folded into float constants; a per-axis DQ
    of a run-time int8 x is expanded along its axis."""
    r = np.random.default_rng(5)
    w = r.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    conv = qdq_model(
        [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
         helper.make_node("Conv", ["x", "wf"], ["y"], pads=[1, 1, 1, 1])],
        [("w", w), ("ws", np.array([0.013, 0.0071, 0.02, 0.0033], np.float32)),
         ("wz", np.array([0, 3, -5, 0], np.int8))], [1, 3, 5, 5], 13)
    # |b| beyond 2^24: float(b) alone is not b
    big = np.array([(1 << 24) + 1, -(1 << 25) - 3, 123456789, 7], np.int32)
    bias = [qdq_model([helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]),
                       helper.make_node("Add", ["x", "bf"], ["y"])],
                      [("b", big), ("bs", np.array(0.000123, np.float32)),
                       ("bz", np.array(0, np.int32))], [2, 4], v) for v in (10, 13)]
    # a run-time int8 x, one scale and zero point per channel (axis 1)
    runtime = qdq_model(
        [helper.make_node("Cast", ["x"], ["q"], to=TP.INT8),
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)],
        [("s", np.array([0.5, 0.031, 7.25], np.float32)), ("z", np.array([-3, 0, 100], np.int8))],
        [2, 3, 4], 13)
    cases = [("qdq_conv_per_channel", conv, (1, 3, 5, 5), (12, 9)),
             ("qdq_bias_int32_10", bias[0], (2, 4), (9,)),
             ("qdq_bias_int32_13", bias[1], (2, 4), (9,)),
             ("qdq_per_axis_runtime", runtime, (2, 3, 4), (12, 9))]
    for name, m, shape, targets in cases:
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "model.onnx")
        onnx.save(m, src)
        case_dir(root, name, [("x", np.round(r.uniform(-120, 120, shape)))])
        if not ort_expect(d, src):
            continue
        for t in targets:
            out = judge(tool, d, src, t, name)
            check(out is None or "DequantizeLinear" not in ops(out) or t >= 10,
                  "%s -> %d: no DequantizeLinear left: %s" % (name, t, out and ops(out)))


def double_warning(tool, root):
    """Weights whose sums may pass 2^24 in float32 even for one input
    channel (a 23x23 window: 529 terms of |w - zp| = 128, times 255) keep
    the double Conv, and the report says so, naming the node: text and
    JSON."""
    d = os.path.join(root, "double")
    os.makedirs(d, exist_ok=True)
    src, out = os.path.join(d, "model.onnx"), os.path.join(d, "out.onnx")
    onnx.save(quant_model("conv", alternating((1, 1, 23, 23)), np.array(128, np.uint8),
                          [1, 1, 23, 23]), src)
    r = run(tool, "convert", src, "-o", out, "--opset", "9", "--verify")
    warn = [ln for ln in r.stdout.splitlines() if ln.startswith("warning:")]
    check(r.returncode == 0 and len(warn) == 1 and "'prod'" in warn[0] and
          "Conv on double" in warn[0] and "opset 9" in warn[0],
          "double Conv: converted with one warning naming the node: %s %s" % (r.stdout, r.stderr))
    r = run(tool, "convert", src, "-o", out, "--opset", "9", "--json")
    try:
        ws = json.loads(r.stdout)["conversion"]["warnings"]
    except (ValueError, KeyError, TypeError):
        ws = None
    check(ws is not None and len(ws) == 1 and "'prod'" in ws[0] and "double" in ws[0],
          "double Conv: conversion.warnings in --json: %s" % ws)
    r = run(tool, "convert", src, "-o", out, "--opset", "10", "--json")
    check(r.returncode == 0 and json.loads(r.stdout)["conversion"]["warnings"] == [],
          "no warning where ConvInteger stays: %s" % r.stdout[-200:])


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-convert"
    with tempfile.TemporaryDirectory() as root:
        double_warning(tool, root)
        if not have_ort():
            skip("node or ONNX Runtime (%s) is missing" % ORT_DIR)
        else:
            slice_models(tool, root)
            resize_cast_empty(tool, root)
            quant_models(tool, root)
            qdq_models(tool, root)
    return report(NAME)


if __name__ == "__main__":
    sys.exit(main())
