#!/usr/bin/python3
"""The Core ML export of the ops ONNX Runtime's quantizer writes
(src/coreml/quant.c): DynamicQuantizeLinear, MatMulInteger, ConvInteger,
QLinearMatMul, QLinearConv, and DequantizeLinear of a constant int32
(a QDQ model's bias). Each small ONNX model (float inputs quantized inside,
integer results cast to float, as ort_expect.js reads and writes float32)
is exported by `onnx-convert convert IN.onnx -o OUT.mlpackage --verify`,
must emit the MIL op named beside it, and Apple's loader must accept the
package. Where ONNX Runtime is set up, the package is imported back
(`convert PKG -o BACK.onnx`) and ONNX Runtime's run of the import must
equal, with no tolerance, ONNX Runtime's run of the original: the
integer arithmetic is exact in float32 by the 2^24 bound, and round half
to even is built from floor. A model past the bound must be refused,
naming why.

Usage: /usr/bin/python3 tests/coreml_cmquant_ct.py build/onnx-convert
Prints one line per model and "coreml_cmquant_ct: N passed, N failed";
skips, saying so, without python3-onnx or the judge.
"""
import os
import subprocess
import sys
import tempfile

from clitest import ORT_DIR, ct_judge, have_ct, have_ort, ort_batch  # noqa: E402

NAME = "coreml_cmquant_ct"
HERE = os.path.dirname(os.path.abspath(__file__))


def skip(why):
    print("%s: skipped (%s)" % (NAME, why))
    print("%s: 0 passed, 0 failed, 1 skipped" % NAME)
    sys.exit(0)


try:
    import numpy as np
    from onnx import TensorProto as T, helper, numpy_helper, save
except ImportError:
    skip("no python3-onnx")

RNG = np.random.default_rng(5)


def init(name, a):
    return numpy_helper.from_array(a, name)


def model(nodes, inputs, outputs, inits, opset=13):
    """A graph of float32 inputs and outputs (name, dims)."""
    vi = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "g", [vi(n, T.FLOAT, d) for n, d in inputs],
                          [vi(n, T.FLOAT, None) for n in outputs], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def node(op, ins, outs, **at):
    return helper.make_node(op, ins, outs, **at)


def to_float(src, dst):
    return node("Cast", [src], [dst], to=T.FLOAT)


def dql():
    """DynamicQuantizeLinear alone: y, scale and zero point out."""
    return model([node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
                  to_float("q", "y"), to_float("z", "zf")],
                 [("x", [3, 4])], ["y", "s", "zf"], [])


def dql_matmul(wz_shape=()):
    """ONNX Runtime's dynamic quantization of a MatMul: x -> uint8 with a
    computed zero point, MatMulInteger against constant uint8 weights."""
    w = RNG.integers(0, 256, (6, 5)).astype(np.uint8)
    wz = RNG.integers(0, 256, wz_shape).astype(np.uint8)
    return model([node("DynamicQuantizeLinear", ["x"], ["a", "s", "az"]),
                  node("MatMulInteger", ["a", "w", "az", "wz"], ["acc"]),
                  to_float("acc", "y")],
                 [("x", [2, 3, 6])], ["y"], [init("w", w), init("wz", wz)])


def quantize(x, q, scale, zp):
    return node("QuantizeLinear", [x, scale, zp], [q]), [
        init(scale, np.float32(scale == "xs" and 0.05 or 0.07)), init(zp, zp_val[zp])]


zp_val = {"xz": np.uint8(131), "xz8": np.int8(-3)}


def conv_integer(signed=False):
    """QuantizeLinear of x, ConvInteger with constant int8 weights (ONNX
    Runtime's ConvInteger takes only a per-tensor weight zero point)."""
    xz = "xz8" if signed else "xz"
    qn, qi = quantize("xf", "x", "xs", xz)
    w = RNG.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    wz = np.int8(-4)
    return model([qn, node("ConvInteger", ["x", "w", xz, "wz"], ["acc"], pads=[1, 1, 1, 1],
                           strides=[2, 1]), to_float("acc", "y")],
                 [("xf", [1, 3, 6, 5])], ["y"], qi + [init("w", w), init("wz", wz)])


def qlinear_matmul():
    """QLinearMatMul of a quantized x and constant uint8 weights."""
    qn, qi = quantize("xf", "x", "xs", "xz")
    w = RNG.integers(0, 256, (6, 4)).astype(np.uint8)
    return model([qn, node("QLinearMatMul", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                           ["q"]), to_float("q", "y")],
                 [("xf", [3, 6])], ["y"],
                 qi + [init("w", w), init("ws", np.float32(0.02)), init("wz", np.uint8(120)),
                       init("ys", np.float32(0.9)), init("yz", np.uint8(100))])


def qlinear_conv():
    """QLinearConv (int8 weights per channel, int32 bias), as the QOperator
    format writes it."""
    qn, qi = quantize("xf", "x", "xs", "xz")
    w = RNG.integers(-128, 128, (2, 3, 3, 3)).astype(np.int8)
    return model([qn, node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                           ["q"], pads=[1, 1, 1, 1]),
                  node("DequantizeLinear", ["q", "ys", "yz"], ["y"])],
                 [("xf", [1, 3, 5, 5])], ["y"],
                 qi + [init("w", w), init("ws", np.array([0.01, 0.03], np.float32)),
                       init("wz", np.array([0, 0], np.int8)), init("ys", np.float32(0.5)),
                       init("yz", np.uint8(128)), init("b", np.array([-700, 900], np.int32))])


def qdq_bias(big=-70000):
    """A QDQ model's bias: DequantizeLinear of a constant int32, added (an
    element of 2^24 or more is refused: float32 is not exact there)."""
    b = np.array([big, 5, 123456, 0], np.int32)
    return model([node("DequantizeLinear", ["b", "bs"], ["bf"]), node("Add", ["x", "bf"], ["y"])],
                 [("x", [2, 4])], ["y"], [init("b", b), init("bs", np.float32(0.0013))])


def wide_small_weights():
    """MatMulInteger of 600 terms: 255 * 128 * 600 passes 2^24, but the
    constant weights' sum of |w - w_zp| per column (at most 1200) keeps
    every sum below it."""
    qn, qi = quantize("xf", "x", "xs", "xz")
    w = RNG.integers(-2, 3, (600, 3)).astype(np.int8)
    return model([qn, node("MatMulInteger", ["x", "w", "xz"], ["acc"]), to_float("acc", "y")],
                 [("xf", [2, 600])], ["y"], qi + [init("w", w)])


def too_wide():
    """MatMulInteger of 300 terms of unknown uint8 values: 255 * 255 * 300
    passes 2^24, so float32 is not exact."""
    return model([node("DynamicQuantizeLinear", ["x"], ["a", "s", "az"]),
                  node("DynamicQuantizeLinear", ["v"], ["b", "t", "bz"]),
                  node("MatMulInteger", ["a", "b", "az", "bz"], ["acc"]), to_float("acc", "y")],
                 [("x", [2, 300]), ("v", [300, 2])], ["y"], [])


CASES = [
    ("dynamicquantizelinear", "reduce_max", dql()),
    ("dql_matmulinteger", "matmul", dql_matmul()),
    ("dql_matmulinteger_per_column", "matmul", dql_matmul((5,))),
    ("convinteger", "conv", conv_integer()),
    ("convinteger_int8", "conv", conv_integer(True)),
    ("matmulinteger_weights_bound", "matmul", wide_small_weights()),
    ("qlinearmatmul", "matmul", qlinear_matmul()),
    ("qlinearconv", "conv", qlinear_conv()),
    ("dequantize_int32_const", "add", qdq_bias()),
]

REFUSED = [("matmulinteger_past_2p24", "2^24", too_wide()),
           ("dequantize_int32_past_2p24", "2^24", qdq_bias(1 << 24))]


def case_dir(tmp, name, m):
    """Seeded float inputs, and ONNX Runtime's outputs of the original as
    the expected ones (tests/ort_expect.js), with no tolerance."""
    d = os.path.join(tmp, name + "_case")
    os.makedirs(os.path.join(d, "test_data_set_0"))
    for k, vi in enumerate(m.graph.input):
        dims = [x.dim_value for x in vi.type.tensor_type.shape.dim]
        x = (RNG.standard_normal(dims) * 3).astype(np.float32)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as fh:
            fh.write(numpy_helper.from_array(x, vi.name).SerializeToString())
    with open(os.path.join(d, "tolerance.json"), "w") as fh:
        fh.write('{"rtol": 0, "atol": 0}\n')
    src = os.path.join(tmp, name + ".onnx")
    r = subprocess.run(["node", os.path.join(HERE, "ort_expect.js"), ORT_DIR, d, src],
                       capture_output=True, text=True)
    if r.returncode:
        print("FAIL %s: ONNX Runtime on the original: %s" % (name, r.stderr.strip()))
        return None
    return d


def export(tool, tmp, name, m):
    src = os.path.join(tmp, name + ".onnx")
    pkg = os.path.join(tmp, name + ".mlpackage")
    save(m, src)
    return pkg, subprocess.run([tool, "convert", src, "-o", pkg, "--verify"],
                               capture_output=True, text=True)


def main():
    tool = sys.argv[1]
    if not have_ct():
        skip("no coremltools judge")
    ort = have_ort()
    passed = failed = 0
    jobs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, want, m in CASES:
            pkg, ex = export(tool, tmp, name, m)
            if ex.returncode != 0:
                print("FAIL %s: export or --verify: %s" % (name, (ex.stdout + ex.stderr).strip()))
                failed += 1
                continue
            ok, ops, target, said = ct_judge(pkg)
            if ok and want in ops:
                print("  %s: %s accepted (%s)" % (name, " ".join(sorted(ops)), target))
                passed += 1
            else:
                print("FAIL %s: Apple's loader: %s; ops %s" % (name, said, sorted(ops)))
                failed += 1
            if not ort:
                continue
            case = case_dir(tmp, name, m)
            back = os.path.join(tmp, name + "_back.onnx")
            if case and subprocess.run([tool, "convert", pkg, "-o", back],
                                       capture_output=True).returncode == 0:
                jobs.append((case, back))
            else:
                print("FAIL %s: ONNX Runtime's run or the import of the package" % name)
                failed += 1
        for name, why, m in REFUSED:
            _, ex = export(tool, tmp, name, m)
            said = (ex.stdout + ex.stderr).strip()
            if ex.returncode != 0 and why in said:
                print("  %s: refused: %s" % (name, said.splitlines()[-1]))
                passed += 1
            else:
                print("FAIL %s: not refused naming %s: %s" % (name, why, said[-300:]))
                failed += 1
        p, f = ort_batch(jobs, tmp, show_passes=True)
        passed += p
        failed += f
    if not ort:
        print("  (ONNX Runtime absent: the imports are judged by --verify only)")
    print("%s: %d passed, %d failed" % (NAME, passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
