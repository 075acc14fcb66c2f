#!/usr/bin/python3
"""Resize and Upsample on a float32 rounding boundary, judged by ONNX
Runtime and onnx's own shape inference (src/schema/resize.h holds the ruling).

    tests/resize_rounding_ort.py ONNX_CONVERT   (from the project root)

Two PyTorch idioms put a result exactly on a boundary that float32 and
exact arithmetic round apart:
- size 15 on width 7 exported at opset 9 as Upsample by 15/7 = 2.142857f:
  7 x 2.142857f is 15 in float32 (onnx's shape inference, ONNX Runtime,
  PyTorch), 14.9999995 exactly;
- nearest by scale_factor 2.2: output 11 sits at 11 / 2.2f, 5 in float32
  (ONNX Runtime, PyTorch), 4.9999999 exactly, so floor picks input 5 or 4.
Before the ruling, `run` (and the Python package's run()) gave the exact
answers, 14 columns and input 4, and the Core ML export refused both.

Each model must: have the output dims onnx's shape inference gives (15,
and 11 x 13 for the nearest case: independent of us); evaluate (`onnx-
convert test`) to ORT's outputs (exactly for nearest, to rounding for
linear); convert to opsets 10 and 7 into
models ORT runs to the same outputs; and export to a Core ML package
that Apple's loader accepts (where the loader is set up). Prints
"resize_rounding_ort: N passed, N failed" (skips without node/ORT).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import ORT_CHECK, ORT_DIR, check, ct_judge, have_ct, have_ort, report, run, skip  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "resize_rounding_ort"


def upsample_15_of_7():
    s = np.array([1, 1, np.float32(15) / np.float32(7)], np.float32)
    g = helper.make_graph(
        [helper.make_node("Upsample", ["x", "s"], ["y"], mode="linear")], "up15",
        [helper.make_tensor_value_info("x", TP.FLOAT, [1, 2, 7])],
        [helper.make_tensor_value_info("y", TP.FLOAT, None)],
        [numpy_helper.from_array(s, "s")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)]), [1, 2, 7], [1, 2, 15]


def nearest_by_2_2(opset):
    s = np.array([1, 1, 2.2, 2.2], np.float32)
    roi = [numpy_helper.from_array(np.zeros(0, np.float32), "roi")] if opset == 11 else []
    g = helper.make_graph(
        [helper.make_node("Resize", ["x", "roi" if opset == 11 else "", "s"], ["y"],
                          mode="nearest", coordinate_transformation_mode="asymmetric",
                          nearest_mode="floor")], "near22",
        [helper.make_tensor_value_info("x", TP.FLOAT, [1, 2, 5, 6])],
        [helper.make_tensor_value_info("y", TP.FLOAT, None)],
        [numpy_helper.from_array(s, "s")] + roi)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m, [1, 2, 5, 6], [1, 2, 11, 13]


def out_dims(m):
    inf = onnx.shape_inference.infer_shapes(m)
    return [d.dim_value for d in inf.graph.output[0].type.tensor_type.shape.dim]


def one(tool, root, name, m, xshape, dims, tol):
    check(out_dims(m) == dims, "%s: onnx's shape inference gives %s (got %s)"
          % (name, dims, out_dims(m)))
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    src = os.path.join(d, "model.onnx")
    onnx.save(m, src)
    # an iota, so that a wrong pick is a wrong value
    x = np.arange(np.prod(xshape), dtype=np.float32).reshape(xshape)
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    r = subprocess.run(["node", os.path.join(HERE, "ort_expect.js"), ORT_DIR, d, src],
                       capture_output=True, text=True)
    check(r.returncode == 0, "%s: ORT runs it: %s" % (name, r.stderr.strip()))
    if r.returncode:
        return
    y = numpy_helper.to_array(onnx.load_tensor(
        os.path.join(d, "test_data_set_0", "output_0.pb")))
    check(list(y.shape) == dims, "%s: ORT's output is %s (got %s)" % (name, dims, list(y.shape)))
    r = run(tool, "test", d, *tol)
    check(r.returncode == 0, "%s: our evaluator gives ORT's outputs (%s): %s"
          % (name, " ".join(tol) or "default tolerance", (r.stdout + r.stderr).strip()[-300:]))
    for opset in (10, 7):
        out = os.path.join(d, "opset%d.onnx" % opset)
        r = run(tool, "convert", src, "-o", out, "--opset", str(opset))
        check(r.returncode == 0, "%s -> %d converts: %s" % (name, opset, r.stderr.strip()))
        if r.returncode:
            continue
        r = subprocess.run(["node", ORT_CHECK, d, "--model", out] + tol,
                           capture_output=True, text=True)
        check(r.returncode == 0, "%s -> %d: ORT gives the original's outputs: %s"
              % (name, opset, (r.stdout + r.stderr).strip()[-300:]))
    pkg = os.path.join(d, "model.mlpackage")
    r = run(tool, "convert", src, "-o", pkg, "--verify")
    check(r.returncode == 0, "%s: Core ML export (verified): %s" % (name, r.stderr.strip()))
    if r.returncode == 0 and have_ct():
        ok, _, _, tail = ct_judge(pkg)
        check(ok, "%s: Apple's loader accepts the package: %s" % (name, tail))


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-convert"
    if not have_ort():
        skip("node or ONNX Runtime (%s) is missing" % ORT_DIR)
        return report(NAME)
    with tempfile.TemporaryDirectory() as root:
        # linear weights: ORT interpolates in float32, we in double, so
        # the values agree to rounding (the tools' default tolerance); the
        # length, which is what the boundary decides, must be equal
        one(tool, root, "upsample9_15_of_7", *upsample_15_of_7(), [])
        # a nearest pick copies an input: exact
        for opset in (11, 13):
            one(tool, root, "nearest_2_2_opset%d" % opset, *nearest_by_2_2(opset),
                ["--rtol", "0", "--atol", "0"])
    return report(NAME)


if __name__ == "__main__":
    sys.exit(main())
