#!/usr/bin/env python3
"""The precision options through the command line, on the models of
testdata/ (so it runs without ../shared):

- batch mode: convert and optimize of two models with --dtype float16
  --out-dir -j 2 write both, each valid with float16 inputs, and each
  model's JSON report has its "precision" object;
- back: --dtype float32 of a float16 result gives float32 inputs and
  outputs again, valid;
- --keep-float32 Softmax: every Softmax is listed as kept with that
  reason, and the written model is valid;
- usage errors exit 2 with one line naming the option: --dtype float64,
  --dtype with --store, --keep-io-types or --auto without --dtype;
- --dtype-strict on a weight beyond float16's range exits 1 with one
  line naming the file, the stage and the initializer, and leaves no
  output file and no temporary file beside it; without it the weight is
  clamped and counted;
- --verify of a --dtype result passes (optimize --dtype float16 --verify);
- --verify of --dtype float16 also judges the result computed in float32:
  an ArgMax whose tie the half rounding decides is refused;
- --auto also judges with some half results moved one unit at random:
  it keeps in float32 the Mul before an ArgMax over rows one float16
  unit apart; where no choice helps (a float16 model's own tie) the
  refusal names the output and the arithmetic;
- --auto on a model with a sequence input, which no random input can
  feed, exits 1 with one line and no output (it crashed, freeing the
  half-made inputs twice).
Usage: precision_cli.py ONNX_CONVERT (from the project root). Prints
"precision_cli: N passed, N failed[, N skipped]".
"""
import json
import os
import sys
import tempfile

from clitest import check, report, run, skip

MODELS = ["testdata/small_cnn.onnx", "testdata/tiny_transformer.onnx"]


def info(bin_, path):
    p = run(bin_, "info", path, "--json")
    return json.loads(p.stdout) if p.returncode == 0 else {}


def io_types(bin_, path):
    g = info(bin_, path).get("graph", {})
    return {v.get("elem_type") for v in g.get("inputs", []) + g.get("outputs", [])}


def valid(bin_, path):
    return run(bin_, "check", path).returncode == 0


def batch(bin_, tmp):
    for cmd in ("convert", "optimize"):
        out = os.path.join(tmp, cmd)
        p = run(bin_, cmd, *MODELS, "--out-dir", out, "--dtype", "float16", "-j", "2", "--json")
        try:
            models = json.loads(p.stdout).get("models", [])
        except ValueError:
            models = []
        check(p.returncode == 0 and len(models) == 2,
              f"{cmd} batch: rc {p.returncode}, {len(models)} reports: {p.stderr.strip()}")
        for m in models:
            pc = m.get("precision") or {}
            check(pc.get("dtype") == "float16" and pc.get("nodes_converted", 0) > 0,
                  f"{cmd} batch {m.get('path')}: precision {pc}")
        for src in MODELS:
            dst = os.path.join(out, os.path.basename(src))
            check(os.path.exists(dst) and valid(bin_, dst) and
                  io_types(bin_, dst) == {"FLOAT16"},
                  f"{cmd} batch {dst}: types {io_types(bin_, dst) if os.path.exists(dst) else '-'}")


def back(bin_, tmp):
    half = os.path.join(tmp, "convert", "tiny_transformer.onnx")
    full = os.path.join(tmp, "back.onnx")
    p = run(bin_, "convert", half, "-o", full, "--dtype", "float32")
    check(p.returncode == 0 and valid(bin_, full) and io_types(bin_, full) == {"FLOAT"},
          f"back to float32: rc {p.returncode} {p.stderr.strip()}")


def keep_softmax(bin_, tmp):
    out = os.path.join(tmp, "keep.onnx")
    p = run(bin_, "convert", MODELS[1], "-o", out, "--dtype", "float16", "--keep-float32",
            "Softmax", "--json")
    pc = (json.loads(p.stdout).get("precision") or {}) if p.returncode == 0 else {}
    kept = [k for k in pc.get("nodes_kept", []) if k["op"] == "Softmax"]
    want = info(bin_, MODELS[1]).get("graph", {}).get("ops", {}).get("ai.onnx", {}).get("Softmax")
    check(p.returncode == 0 and kept and all(k["reason"] == "--keep-float32" for k in kept) and
          len(kept) == want, f"--keep-float32 Softmax: rc {p.returncode}, kept {kept}, "
          f"model has {want}")
    check(valid(bin_, out), "--keep-float32 Softmax: the result is not valid")


def usage(bin_, tmp):
    out = os.path.join(tmp, "u.onnx")
    for args, word in ((["--dtype", "float64"], "--dtype"),
                       (["--dtype", "float16", "--store", "float16"], "--store"),
                       (["--keep-io-types"], "--keep-io-types"),
                       (["--auto"], "--auto")):
        p = run(bin_, "convert", MODELS[0], "-o", out, *args)
        first = (p.stderr.strip().splitlines() or [""])[0]
        check(p.returncode == 2 and word in first and not os.path.exists(out),
              f"{' '.join(args)}: rc {p.returncode}, '{first}'")


def big_weight_model(path):
    """y = x * W with W holding 7e4, beyond float16's 65504 (built with
    Debian's onnx); False when onnx is missing."""
    try:
        from onnx import TensorProto, helper
    except ImportError:
        return False
    w = helper.make_tensor("W", TensorProto.FLOAT, [4], [1.0, 7e4, -7e4, 2.0])
    g = helper.make_graph([helper.make_node("Mul", ["x", "W"], ["y"], name="mul")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return True


def strict(bin_, tmp):
    src = os.path.join(tmp, "big.onnx")
    if not big_weight_model(src):
        skip("precision_cli: --dtype-strict: no onnx package for /usr/bin/python3")
        return
    folder = os.path.join(tmp, "strict")
    os.makedirs(folder)
    out = os.path.join(folder, "out.onnx")
    p = run(bin_, "convert", src, "-o", out, "--dtype", "float16", "--dtype-strict")
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "big.onnx" in lines[0] and
          "precision" in lines[0] and "'W'" in lines[0],
          f"--dtype-strict: rc {p.returncode}, {lines}")
    check(os.listdir(folder) == [], f"--dtype-strict left {os.listdir(folder)}")
    # clamping moves the outputs: verification by default refuses it,
    # naming the output; --no-verify writes it, the clamps counted
    p = run(bin_, "convert", src, "-o", out, "--dtype", "float16", "--json")
    err = (json.loads(p.stdout).get("error") or {}) if p.stdout.strip().startswith("{") else {}
    msg = err.get("message") or ""
    check(p.returncode == 1 and "output '" in msg and
          ("moves past float16 rounding" in msg or "differs after conversion" in msg) and
          os.listdir(folder) == [], f"clamped, verified by default: rc {p.returncode} {err}")
    p = run(bin_, "convert", src, "-o", out, "--dtype", "float16", "--no-verify", "--json")
    pc = (json.loads(p.stdout).get("precision") or {}) if p.returncode == 0 else {}
    check(pc.get("clamped") == 2 and valid(bin_, out), f"clamped: rc {p.returncode} {pc}")


def verify(bin_, tmp):
    out = os.path.join(tmp, "v.onnx")
    p = run(bin_, "optimize", MODELS[1], "-o", out, "--dtype", "float16", "--verify", "--json")
    rep = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    check(p.returncode == 0 and (rep.get("verification") or {}).get("result") == "equal",
          f"optimize --dtype float16 --verify: rc {p.returncode} {rep.get('verification')} "
          f"{p.stderr.strip()}")


def mul_argmax_case(d, w, x, axis):
    """Writes d/model.onnx, y = ArgMax(x * W, axis) with W = w, and its
    case d/test_data_set_0 with input x (float32 numpy arrays)."""
    from onnx import TensorProto, helper, numpy_helper
    wt = numpy_helper.from_array(w, "W")
    ydims = list(x.shape)
    ydims[axis] = 1
    g = helper.make_graph([helper.make_node("Mul", ["x", "W"], ["s"], name="mul"),
                           helper.make_node("ArgMax", ["s"], ["y"], name="argmax", axis=axis)],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                              list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, ydims)], [wt])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())


def argmax_model(d):
    """y = ArgMax(x * W) beside its case: x = [1, 1.00005], W = [1.0001, 1],
    so ArgMax is 0 in float32. In float16 every value rounds to 1 and the
    tie goes to 0 again; with only W rounded (the model computed in float32,
    as a runtime without half kernels runs it) it is 1: the decision turns
    on the half rounding. False when onnx is missing."""
    try:
        import numpy as np
        import onnx  # noqa: F401 (mul_argmax_case needs it)
    except ImportError:
        return False
    mul_argmax_case(d, np.array([1.0001, 1.0], np.float32),
                    np.array([1.0, 1.00005], np.float32), 0)
    return True


def half_of_case(bin_, tmp, name, make, *opts):
    """make(tmp/name) writes a case; then convert --dtype float16
    --keep-io-types OPTS of it to tmp/name16.onnx: (the process, that
    path), or (None, path) after a skip when onnx is missing."""
    d = os.path.join(tmp, name)
    out = os.path.join(tmp, name + "16.onnx")
    if not make(d):
        skip(f"precision_cli: {name}: no onnx package for /usr/bin/python3")
        return None, out
    return run(bin_, "convert", os.path.join(d, "model.onnx"), "-o", out, "--dtype",
               "float16", "--keep-io-types", *opts), out


def verify_wide(bin_, tmp):
    """--verify of --dtype float16 also runs the result in float32 (every
    half value widened): a decision that turns on half rounding is caught
    there, though the evaluator's float16 run keeps it (it was written,
    verified, before)."""
    p, out = half_of_case(bin_, tmp, "argmax", argmax_model, "--verify")
    if not p:
        return
    err = p.stderr.strip()
    check(p.returncode == 1 and "computed in float32" in err and not os.path.exists(out),
          f"float16 ArgMax of a near tie: rc {p.returncode}, '{err}'")


def ties_model(d):
    """y = ArgMax(x * 1, axis 1) beside its case, x 4096 rows of two float16
    values one unit in the last place apart (the larger first): ArgMax is
    0 on every row in float32, in float16 and widened, since every value is
    exact in float16. A runtime rounding the Mul's results otherwise by one
    unit flips rows: their order is finer than float16 resolves. False
    without onnx."""
    try:
        import numpy as np
        import onnx  # noqa: F401 (mul_argmax_case needs it)
    except ImportError:
        return False
    bits = 0x3c00 + np.arange(4096, dtype=np.uint16)        # 1.0 and up
    lo = bits.view(np.float16).astype(np.float32)
    hi = (bits + 1).view(np.float16).astype(np.float32)
    mul_argmax_case(d, np.array([1.0], np.float32), np.stack([hi, lo], axis=1), 1)
    return True


def auto_jitter(bin_, tmp):
    """--auto also judges each candidate with some half results moved one
    unit at random (as another runtime may round): ties_model's rows flip
    there, so --auto keeps the Mul in float32, though the float16 and the
    widened run keep every row (it converted everything before); the
    result passes --verify."""
    p, _ = half_of_case(bin_, tmp, "ties", ties_model, "--auto", "--inputs",
                        os.path.join(tmp, "ties", "test_data_set_0"), "--verify", "--json")
    if not p:
        return
    rep = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    kept = ((rep.get("precision") or {}).get("auto") or {}).get("nodes_kept") or []
    check(p.returncode == 0 and kept == ["mul"],
          f"--auto on 1-ulp rows keeps the Mul: rc {p.returncode}, kept {kept}, "
          f"'{p.stderr.strip()}'")


def half_tie_model(d):
    """A float16 model: y = ArgMax(x * w) with x = [1 + 2^-9, 1 + 2^-10],
    w = [1, 1 + 2^-10], so the products are 1 + 2^-9 and 1 + 2^-9 + 2^-20:
    a tie in float16 (ArgMax 0), not in float32 (1); beside it a float32
    z -> Relu, the one node --dtype float16 converts. False without onnx."""
    try:
        import numpy as np
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return False
    w = numpy_helper.from_array(np.array([1, 1 + 2 ** -10], np.float16), "w")
    g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["s"], name="mul"),
                           helper.make_node("ArgMax", ["s"], ["y"], name="argmax", axis=0),
                           helper.make_node("Relu", ["z"], ["r"], name="relu")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, [1]),
                           helper.make_tensor_value_info("r", TensorProto.FLOAT, [2])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    feeds = {"x": np.array([1 + 2 ** -9, 1 + 2 ** -10], np.float16),
             "z": np.array([-1, 2], np.float32)}
    for i, (name, v) in enumerate(feeds.items()):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, name).SerializeToString())
    return True


def auto_gives_up(bin_, tmp):
    """--auto on half_tie_model: the float16 original's own ArgMax turns on
    its rounding, so computed in float32 it differs whatever is kept; the
    refusal says which output and in which arithmetic (before, the reason
    after "kept in float32" was empty when only the float32 run missed)."""
    p, out = half_of_case(bin_, tmp, "halftie", half_tie_model, "--auto", "--inputs",
                          os.path.join(tmp, "halftie", "test_data_set_0"))
    if not p:
        return
    err = p.stderr.strip()
    check(p.returncode == 1 and "kept in float32, output 'y'" in err and
          "(computed in float32)" in err and not os.path.exists(out),
          f"--auto on a float16 model's own tie: rc {p.returncode}, '{err}'")


def seq_input_model(d):
    """SequenceLength of a sequence-of-float input beside a float32 Relu:
    --auto has no random input for the sequence. False without onnx."""
    try:
        from onnx import TensorProto, helper
    except ImportError:
        return False
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("SequenceLength", ["s"], ["n"]),
                           helper.make_node("Relu", ["z"], ["r"])], "g",
                          [seq, helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("n", TensorProto.INT64, []),
                           helper.make_tensor_value_info("r", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    return True


def auto_no_inputs(bin_, tmp):
    """--auto where no random input can be made: a refusal, not a crash."""
    p, out = half_of_case(bin_, tmp, "seqin", seq_input_model, "--auto")
    if not p:
        return
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and not os.path.exists(out),
          f"--auto on a sequence input: rc {p.returncode}, stderr {lines}")


def main():
    if len(sys.argv) != 2:
        print("usage: precision_cli.py ONNX_CONVERT", file=sys.stderr)
        return 2
    bin_ = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        batch(bin_, tmp)
        back(bin_, tmp)
        keep_softmax(bin_, tmp)
        usage(bin_, tmp)
        strict(bin_, tmp)
        verify(bin_, tmp)
        verify_wide(bin_, tmp)
        auto_jitter(bin_, tmp)
        auto_gives_up(bin_, tmp)
        auto_no_inputs(bin_, tmp)
    return report("precision_cli")


if __name__ == "__main__":
    sys.exit(main())
