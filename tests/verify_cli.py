#!/usr/bin/env python3
"""Verification by default (issue 36), from the command line:
- a downgrade with rewrites is evaluated: result "equal", with per-output
  figures (largest error, tolerance, the original's noise floor);
- an upgrade of version bumps only is "exact" by construction, not
  evaluated; --verify evaluates it anyway;
- --no-verify gives no verification at all;
- a budget too small for the model: "not verified", the reason naming
  --verify-budget, exit 0 and the model written; --verify insists and runs;
- an original whose open dim needs 300 samples (a 1-D conv window) is
  verified at the ladder's 512; one that needs 1000 is "not verified",
  naming --input-shape, exit 0 and the model written; --verify then fails
  (exit 1, nothing written), and --input-shape verifies it;
- a float16 model whose conversion moves outputs by an ulp passes, with
  its noise floor in the report.

Usage: verify_cli.py ONNX_CONVERT   (from the project root). Prints
"verify_cli: N passed, N failed".
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import check, report, skip  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-convert"
MODELS = "../shared/models"
LIGHT = "../shared/testdata/onnx-backend/light"


def run(*args):
    """(exit status, the JSON report or {}, stderr)."""
    return clitest.run_json(BIN, *args, timeout=300)


def verification(rep):
    return rep.get("verification") or {}


def conv1d_model(path, window):
    """x [1, 1, n] (n open) -> Conv with a window of `window` samples ->
    Softmax over the channels (opset 13: converting below rewrites it)."""
    import numpy as np
    from onnx import helper, TensorProto, save
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, "n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 1, window],
                           np.linspace(-1, 1, 2 * window).astype(np.float32).tobytes(), raw=True)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], strides=[window // 4]),
             helper.make_node("Softmax", ["c"], ["y"], axis=1)]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w]),
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    save(m, path)


def half_model(path):
    """A float16 HardSwish between two Muls (opset 14): converting it to
    13 writes HardSwish out as x * HardSigmoid(x), one more rounding."""
    import numpy as np
    from onnx import helper, TensorProto, save
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4, 2048])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4, 2048])
    w = np.linspace(-3, 3, 2048).astype(np.float16)
    nodes = [helper.make_node("Mul", ["x", "w"], ["t"]),
             helper.make_node("HardSwish", ["t"], ["u"]),
             helper.make_node("Mul", ["u", "w"], ["y"])]
    init = [helper.make_tensor("w", TensorProto.FLOAT16, [2048], w.tobytes(), raw=True)]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], init),
                          opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    save(m, path)


def model_or_skip(folder, name):
    """folder/name/model.onnx, or None after saying it is not here (a
    user's clone has no ../shared)."""
    src = os.path.join(folder, name, "model.onnx")
    if os.path.isfile(src):
        return src
    skip("verify_cli: %s not found" % src)
    return None


def shared(tmp):
    src = model_or_skip(MODELS, "mobilenet_v2_opset17")
    if not src:
        return
    out = os.path.join(tmp, "m11.onnx")
    rc, rep, err = run("convert", src, "--opset", 11, "-o", out)
    v = verification(rep)
    outs = v.get("outputs") or [{}]
    check(rc == 0 and v.get("result") == "equal" and os.path.isfile(out),
          "downgrade verified by default: rc %d %r %s" % (rc, v, err))
    check(outs[0].get("max_error") is not None and outs[0].get("tolerance", 0) > 0 and
          outs[0].get("floor") is not None, "figures of the output: %r" % outs)
    sq = os.path.join(MODELS, "squeezenet1_1_opset13", "model.onnx")
    rc, rep, _ = run("convert", sq, "--opset", 14, "-o", out)
    v = verification(rep)
    check(rc == 0 and v.get("result") == "exact" and "construction" in (v.get("reason") or ""),
          "version bumps only: exact by construction: %r" % v)
    rc, rep, _ = run("convert", sq, "--opset", 14, "-o", out, "--verify")
    check(rc == 0 and verification(rep).get("result") == "equal",
          "--verify evaluates an exact conversion: %r" % verification(rep))
    rc, rep, _ = run("convert", src, "--opset", 11, "-o", out, "--no-verify")
    check(rc == 0 and rep.get("verification") is None, "--no-verify: %r" % rep.get("verification"))
    rc, rep, _ = run("convert", src, "--opset", 11, "-o", out, "--verify", "--no-verify")
    check(rc == 2, "--verify with --no-verify is a usage error: rc %d" % rc)


def budget(tmp):
    src = model_or_skip(LIGHT, "light_vgg19")
    if not src:
        return
    out = os.path.join(tmp, "v10.onnx")
    if os.path.exists(out):
        os.unlink(out)
    rc, rep, _ = run("convert", src, "--opset", 10, "-o", out, "--verify-budget", "0.2")
    v = verification(rep)
    check(rc == 0 and v.get("result") == "not verified" and
          "--verify-budget" in (v.get("reason") or "") and "about" in (v.get("reason") or "")
          and os.path.isfile(out), "over the budget: rc %d %r" % (rc, v))
    rc, rep, _ = run("convert", src, "--opset", 10, "-o", out, "--verify-budget", "0.2",
                     "--verify")
    check(rc == 0 and verification(rep).get("result") == "equal",
          "--verify runs past the budget: rc %d %r" % (rc, verification(rep)))


def ladder(tmp):
    try:
        import onnx  # noqa: F401
    except ImportError:
        skip("verify_cli: no onnx package for /usr/bin/python3")
        return
    src = os.path.join(tmp, "w300.onnx")
    conv1d_model(src, 300)
    out = os.path.join(tmp, "w300_11.onnx")
    rc, rep, err = run("convert", src, "--opset", 11, "-o", out)
    v = verification(rep)
    check(rc == 0 and v.get("result") == "equal" and v.get("open_dims") == 512,
          "a 300-sample window verified at 512: rc %d %r %s" % (rc, v, err))
    src = os.path.join(tmp, "w1000.onnx")
    conv1d_model(src, 1000)
    out = os.path.join(tmp, "w1000_11.onnx")
    rc, rep, _ = run("convert", src, "--opset", 11, "-o", out)
    v = verification(rep)
    check(rc == 0 and v.get("result") == "not verified" and
          "--input-shape" in (v.get("reason") or "") and os.path.isfile(out),
          "a 1000-sample window: not verified, naming --input-shape: rc %d %r" % (rc, v))
    os.unlink(out)
    rc, rep, _ = run("convert", src, "--opset", 11, "-o", out, "--verify")
    check(rc == 1 and not os.path.exists(out), "--verify insists: rc %d" % rc)
    rc, rep, _ = run("convert", src, "--opset", 11, "-o", out, "--input-shape", "x=1,1,2000")
    check(rc == 0 and verification(rep).get("result") == "equal",
          "--input-shape verifies it: rc %d %r" % (rc, verification(rep)))


def half(tmp):
    try:
        import onnx  # noqa: F401
    except ImportError:
        return
    src = os.path.join(tmp, "hs16.onnx")
    half_model(src)
    out = os.path.join(tmp, "hs13.onnx")
    rc, rep, err = run("convert", src, "--opset", 13, "-o", out)
    v = verification(rep)
    o = (v.get("outputs") or [{}])[0]
    check(rc == 0 and v.get("result") == "equal" and o.get("beyond_tolerance", 0) > 0 and
          (o.get("floor") or 0) > 0 and o.get("max_error", 0) > o.get("tolerance", 1),
          "float16 rounding judged against the floor: rc %d %r %s" % (rc, v, err))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        shared(tmp)
        budget(tmp)
        ladder(tmp)
        half(tmp)
    report("verify_cli")


main()
