#!/usr/bin/env python3
"""--dtype float16 on what real PyTorch exports hold (issue 33), each
model exported here by Debian's torch, PyTorch's own outputs the reference:

- the old exporter's upsampling (opset 9, F.interpolate with scale_factor):
  Upsample's scales are a constant, or float arithmetic on Shape
  (recompute_scale_factor). Rounded to float16, 5 * 2.2 = 11 became 10:
  `--dtype float16 --keep-io-types --verify` must pass, the result's
  output shape be PyTorch's, and ONNX Runtime must run the result to
  PyTorch's outputs;
- opset 11 Resize, whose `roi` is an empty float Constant (dims [0]): it
  must convert ("the data cannot be read" before);
- --auto on a model whose If branch overflows float16: the If is kept with
  its bodies whole (before, its body still computed in half and --auto
  gave up);
- with PRECISION_REAL_SSD=1 (slow: the export alone takes ~1-4 minutes),
  torchvision's ssdlite320_mobilenet_v3_large (weights=None, seeded, 96x96):
  --auto converts it, within tolerance, with as many detections as the
  original.
Skipped, named, when /usr/bin/python3 lacks torch. Usage:
precision_real.py ONNX_CONVERT (from the project root). Prints
"precision_real: N passed, N failed[, N skipped]".
"""
import json
import os
import sys
import tempfile
import warnings

from clitest import ORT_CHECK, check, have_ort, report, run, skip

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the machine lacks them: named, not a failure
    torch = None
    WHY = str(e)


class Up(torch.nn.Module if torch else object):
    """Nearest upsampling by 2.2: 5x6 -> 11x13."""

    def __init__(self, recompute):
        super().__init__()
        self.recompute = recompute

    def forward(self, x):
        return F.interpolate(x, scale_factor=2.2, mode="nearest",
                             recompute_scale_factor=self.recompute)


class ConvUp(torch.nn.Module if torch else object):
    """A conv, then bilinear upsampling (opset 11: Resize with an empty roi)."""

    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return F.interpolate(self.c(x), scale_factor=2.0, mode="bilinear", align_corners=False)


def export(module, x, path, opset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, x, path, opset_version=opset, input_names=["x"])


def write_case(case, x, y):
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y).SerializeToString())
    with open(os.path.join(case, "tolerance.json"), "w") as f:
        json.dump({"rtol": 1e-2, "atol": 1e-2}, f)


def out_shape(bin_, model, case, tmp):
    """The shape of output 0 as our evaluator runs the model on the case."""
    out = os.path.join(tmp, "run_out")
    p = run(bin_, "run", model, "--inputs", os.path.join(case, "test_data_set_0"), "-o", out)
    if p.returncode != 0:
        return None
    t = onnx.TensorProto()
    with open(os.path.join(out, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    return list(t.dims)


def upsampling(bin_, tmp, ort):
    torch.manual_seed(0)
    x = torch.randn(1, 3, 5, 6)
    cases = [("upsample9_const", Up(False), 9), ("upsample9_shape", Up(True), 9),
             ("resize11", ConvUp(), 11), ("resize13", ConvUp(), 13)]
    for name, mod, opset in cases:
        src = os.path.join(tmp, name + ".onnx")
        dst = os.path.join(tmp, name + ".f16.onnx")
        export(mod, x, src, opset)
        with torch.no_grad():
            y = mod(x).numpy()
        case = os.path.join(tmp, name)
        write_case(case, x.numpy(), y)
        p = run(bin_, "convert", src, "-o", dst, "--dtype", "float16", "--keep-io-types",
                "--verify")
        check(p.returncode == 0, f"{name}: --dtype float16 --verify: {p.stderr.strip()}")
        if p.returncode != 0:
            continue
        got = out_shape(bin_, dst, case, tmp)
        check(got == list(y.shape), f"{name}: output shape {got}, PyTorch's {list(y.shape)}")
        if ort:
            q = run("node", ORT_CHECK, case, "--model", dst)
            check(q.returncode == 0, f"{name}: ONNX Runtime: {q.stdout.strip()} {q.stderr.strip()}")
        else:
            skip(f"{name}: ONNX Runtime is not set up")


def if_overflow_model(path):
    """y = If(c): ReduceSum(x + 1) in both branches, ~1e5: beyond float16."""
    one = numpy_helper.from_array(np.ones((), np.float32), "one")

    def branch(tag):
        return helper.make_graph(
            [helper.make_node("Add", ["x", "one"], [f"a_{tag}"]),
             helper.make_node("ReduceSum", [f"a_{tag}"], [f"s_{tag}"], keepdims=1)],
            f"branch_{tag}", [], [helper.make_tensor_value_info(f"s_{tag}", TensorProto.FLOAT,
                                                                [1, 1])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="the_if", then_branch=branch("t"),
                          else_branch=branch("e")),
         helper.make_node("Relu", ["x"], ["r"], name="relu")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 100000]),
              helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 100000])], [one])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def auto_convert(bin_, src, dst):
    """convert --dtype float16 --keep-io-types --auto: the process and
    its report's precision.auto ({} when there is none)."""
    p = run(bin_, "convert", src, "-o", dst, "--dtype", "float16", "--keep-io-types",
            "--auto", "--json")
    try:
        return p, json.loads(p.stdout)["precision"]["auto"] or {}
    except (ValueError, KeyError, TypeError):
        return p, {}


def auto_if(bin_, tmp):
    src = os.path.join(tmp, "if_overflow.onnx")
    dst = os.path.join(tmp, "if_overflow.auto.onnx")
    if_overflow_model(src)
    p, auto = auto_convert(bin_, src, dst)
    check(p.returncode == 0 and auto.get("nodes_kept") == ["the_if"],
          f"--auto on an overflowing If: rc {p.returncode}, {auto}: {p.stderr.strip()}")
    if p.returncode == 0:
        m = onnx.load(dst)
        half = [n.name for n in m.graph.node if n.op_type == "If"
                for a in n.attribute for b in [a.g] for k in b.node
                if k.op_type == "Cast" or any(t.t.data_type == TensorProto.FLOAT16
                                              for t in k.attribute)]
        check(not half and any(n.name == "relu" for n in m.graph.node),
              f"--auto: the kept If's bodies still hold half nodes {half}")


def ssdlite(bin_, tmp):
    import time
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None)
    m.eval()
    m.transform.min_size = (96,)
    m.transform.max_size = 96
    x = torch.rand(3, 96, 96)
    src = os.path.join(tmp, "ssdlite.onnx")
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, ([x],), src, opset_version=11, input_names=["x"])
    print(f"precision_real: ssdlite exported in {time.time() - t0:.0f} s")
    with torch.no_grad():
        boxes = m([x])[0]["boxes"].numpy()
    case = os.path.join(tmp, "ssdlite")
    write_case(case, x.numpy(), boxes)
    dst = os.path.join(tmp, "ssdlite.auto.onnx")
    p, auto = auto_convert(bin_, src, dst)
    check(p.returncode == 0 and auto.get("error", 2) <= 1,
          f"ssdlite --auto: rc {p.returncode}, {auto}: {p.stderr.strip()}")
    if p.returncode == 0:
        got = out_shape(bin_, dst, case, tmp)
        check(got == list(boxes.shape), f"ssdlite: {got} boxes, PyTorch {list(boxes.shape)}")


def main():
    bin_ = sys.argv[1]
    if torch is None:
        skip(f"precision_real: skipped ({WHY})")
        return report("precision_real")
    ort = have_ort()
    with tempfile.TemporaryDirectory() as tmp:
        upsampling(bin_, tmp, ort)
        auto_if(bin_, tmp)
        if os.environ.get("PRECISION_REAL_SSD") == "1":
            ssdlite(bin_, tmp)
        else:
            skip("precision_real: ssdlite skipped (slow export; PRECISION_REAL_SSD=1 runs it)")
    return report("precision_real")


if __name__ == "__main__":
    sys.exit(main())
