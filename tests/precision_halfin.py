#!/usr/bin/python3
"""--dtype float16 on models that are already half inside or quantized, as
other tools write them (failures of the real-model corpus):

- half inside, float32 at the I/O (onnxconverter-common's keep_io_types:
  a Cast after each input and before each output): `--dtype float16
  --verify` without --keep-io-types must pass and give float16 I/O, as for
  a float32 model (it stopped at "element type FLOAT16, expected FLOAT");
  with --keep-io-types the I/O stays float32. No Cast of the result casts
  a value to its own type (ONNX Runtime 1.30 refused the float16 -> float16
  Cast feeding Upsample-9). ONNX Runtime runs each result and must give
  numpy's outputs on the same float16 inputs (Relu, nearest upsampling:
  exact in float16);
- dynamically quantized (ONNX Runtime's quantizer: DynamicQuantizeLinear,
  MatMulInteger, Cast of the int32 sums, Mul by the product of the
  scales): the sums here reach ~5e5, past float16's 65504, so a Cast to
  float16 gives inf. --verify must pass (with and without
  --keep-io-types), the report must name the Mul kept float32 for them,
  and our evaluator's outputs and ONNX Runtime's must match numpy's
  float64 dequantized product within float16's tolerance (src/eval/verify.h).
  ONNX Runtime alone would not see the inf (see evaluate()).
Usage: precision_halfin.py ONNX_CONVERT (from the project root). Prints
"precision_halfin: N passed, N failed[, N skipped]".
"""
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper, shape_inference

from clitest import ORT_CHECK, check, have_ort, report, run, skip

F32, F16 = TP.FLOAT, TP.FLOAT16


def save(nodes, ins, outs, inits, opset, path):
    g = helper.make_graph(nodes, "g", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)


def relu_model(path):
    """x -> Cast(float16) -> Relu -> Cast(float) -> y."""
    save([helper.make_node("Cast", ["x"], ["x16"], to=F16),
          helper.make_node("Relu", ["x16"], ["r16"]),
          helper.make_node("Cast", ["r16"], ["y"], to=F32)],
         [helper.make_tensor_value_info("x", F32, [2, 3, 4])],
         [helper.make_tensor_value_info("y", F32, [2, 3, 4])], [], 13, path)


def upsample_model(path):
    """As the corpus's upsample_nearest_dynamic_fp16_opset9: the float16
    island stops around Upsample-9 (float32 there)."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")
    save([helper.make_node("Cast", ["x"], ["x16"], to=F16),
          helper.make_node("Relu", ["x16"], ["r16"]),
          helper.make_node("Cast", ["r16"], ["r32"], to=F32),
          helper.make_node("Upsample", ["r32", "s"], ["u32"], mode="nearest"),
          helper.make_node("Cast", ["u32"], ["u16"], to=F16),
          helper.make_node("Cast", ["u16"], ["y"], to=F32)],
         [helper.make_tensor_value_info("x", F32, [1, 2, 3, 3])],
         [helper.make_tensor_value_info("y", F32, [1, 2, 6, 6])], [scales], 9, path)


def dynquant_model(path, w):
    """ONNX Runtime's dynamic quantization of x @ w (w int8, zero point 0,
    scale ws)."""
    inits = [numpy_helper.from_array(w, "wq"),
             numpy_helper.from_array(np.array(0, np.int8), "wzp"),
             numpy_helper.from_array(np.array(WS, np.float32), "ws")]
    save([helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
          helper.make_node("MatMulInteger", ["xq", "wq", "xzp", "wzp"], ["acc"]),
          helper.make_node("Cast", ["acc"], ["accf"], to=F32),
          helper.make_node("Mul", ["xs", "ws"], ["scale"]),
          helper.make_node("Mul", ["accf", "scale"], ["y"])],
         [helper.make_tensor_value_info("x", F32, [2, 16])],
         [helper.make_tensor_value_info("y", F32, [2, 4])], inits, 13, path)


WS = 0.004


def dynquant_want(x, w):
    """DynamicQuantizeLinear then the dequantized integer product (the
    operator's definition), in float64."""
    lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
    s = np.float32((hi - lo) / 255)
    zp = np.clip(np.round(-lo / s), 0, 255)
    xq = np.clip(np.round(x / s) + zp, 0, 255)
    acc = (xq - zp).astype(np.float64) @ w.astype(np.float64)
    return acc * float(s) * float(np.float32(WS)), float(np.abs(acc).max())


def convert(bin_, src, dst, *extra):
    p = run(bin_, "convert", src, "-o", dst, "--dtype", "float16", "--verify",
            "--json", *extra)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    return p, rep


def io_types(path):
    g = onnx.load(path).graph
    return ([v.type.tensor_type.elem_type for v in g.input],
            [v.type.tensor_type.elem_type for v in g.output])


def self_casts(path):
    """The Casts of path whose input already has their `to` type."""
    m = shape_inference.infer_shapes(onnx.load(path))
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(m.graph.input) + list(m.graph.value_info)}
    return [n.name or n.output[0] for n in m.graph.node if n.op_type == "Cast" and
            types.get(n.input[0]) == n.attribute[0].i]


def ort_case(tmp, name, x, y):
    d = os.path.join(tmp, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    for f, a, n in (("input_0.pb", x, "x"), ("output_0.pb", y, "y")):
        with open(os.path.join(d, f), "wb") as fh:
            fh.write(numpy_helper.from_array(a, n).SerializeToString())
    return os.path.dirname(d)


def ort_matches(case, model, rtol, atol, what):
    p = run("node", ORT_CHECK, case, "--model", model, "--rtol", str(rtol),
            "--atol", str(atol))
    check(p.returncode == 0, "%s: ONNX Runtime: %s%s" % (what, p.stdout, p.stderr))


def half_inside(bin_, tmp, ort, name, make, want):
    src = os.path.join(tmp, name + ".onnx")
    make(src)
    x = np.random.default_rng(3).standard_normal(
        [d.dim_value for d in onnx.load(src).graph.input[0].type.tensor_type.shape.dim]
    ).astype(np.float16)
    y = want(x)
    for keep in (False, True):
        what = "%s%s" % (name, " --keep-io-types" if keep else "")
        dst = os.path.join(tmp, "%s_%d.onnx" % (name, keep))
        p, _ = convert(bin_, src, dst, *(["--keep-io-types"] if keep else []))
        check(p.returncode == 0, "%s: --dtype float16 --verify: %s" % (what, p.stderr))
        if p.returncode:
            continue
        t = F32 if keep else F16
        check(io_types(dst) == ([t], [t]), "%s: I/O types %s" % (what, io_types(dst)))
        check(self_casts(dst) == [], "%s: Casts to their own type %s" % (what, self_casts(dst)))
        if ort:
            case = ort_case(tmp, what.replace(" ", ""), x.astype(np.float32) if keep else x,
                            y.astype(np.float32) if keep else y)
            ort_matches(case, dst, 0, 0, what)


def evaluate(bin_, model, inputs, tmp):
    """Our evaluator's output 0 of model on inputs (None when it fails):
    ONNX Runtime alone cannot tell, as it runs a float16 Mul in float32 and
    then merges Cast(int32 -> float16) -> Cast(float32) into one Cast,
    never rounding the sums to float16."""
    out = os.path.join(tmp, "run")
    if run(bin_, "run", model, "--inputs", inputs, "-o", out).returncode:
        return None
    return numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))


def dynquant(bin_, tmp, ort):
    rng = np.random.default_rng(5)
    w = rng.integers(100, 128, size=(16, 4)).astype(np.int8)
    src = os.path.join(tmp, "dynquant.onnx")
    dynquant_model(src, w)
    x = rng.uniform(0.5, 1, size=(2, 16)).astype(np.float16)
    y, acc = dynquant_want(x.astype(np.float32), w)
    check(acc > 65504, "dynquant: the sums (%g) pass float16's range" % acc)
    for keep in (False, True):
        what = "dynquant%s" % (" --keep-io-types" if keep else "")
        dst = os.path.join(tmp, "dynquant_%d.onnx" % keep)
        p, rep = convert(bin_, src, dst, *(["--keep-io-types"] if keep else []))
        check(p.returncode == 0, "%s: --dtype float16 --verify: %s" % (what, p.stderr))
        if p.returncode:
            continue
        kept = json.dumps(rep.get("precision", {}).get("nodes_kept", []))
        check("int32 sums" in kept and '"Mul"' in kept, "%s: the Mul kept, named: %s" % (what, kept))
        t = np.float32 if keep else np.float16
        case = ort_case(tmp, "dq%d" % keep, x.astype(t), y.astype(t))
        tol = 3e-2 * float(np.abs(y).max())
        got = evaluate(bin_, dst, os.path.join(case, "test_data_set_0"), tmp)
        check(got is not None and np.allclose(got.astype(np.float64), y, 1e-2, tol),
              "%s: our evaluator gives %s, numpy %s" % (what, got, y))
        if ort:
            ort_matches(case, dst, 1e-2, tol, what)


def main():
    bin_ = sys.argv[1]
    ort = have_ort()
    if not ort:
        skip("ONNX Runtime (node, ../shared/tools/ort) is missing: no outputs judged")
    with tempfile.TemporaryDirectory() as tmp:
        half_inside(bin_, tmp, ort, "relu", relu_model, lambda x: np.maximum(x, 0))
        half_inside(bin_, tmp, ort, "upsample", upsample_model,
                    lambda x: np.maximum(x, 0).repeat(2, axis=2).repeat(2, axis=3))
        dynquant(bin_, tmp, ort)
    return report("precision_halfin")


if __name__ == "__main__":
    sys.exit(main())
