#!/usr/bin/python3
"""The defects other exporters write that ONNX Runtime runs
(src/analysis/tolerate.h, docs/tolerated.md), end to end through the command line.

    tests/tolerated_cli.py ONNX_CONVERT   (from the project root)

Each model is built here with onnx's helper and saved without onnx's
checker, the defect in it as its exporter writes it:

- opset-repeated: the default domain imported twice at one version, as
  "" twice and as "" beside "ai.onnx" (scikit-learn's exporter), with
  ai.onnx.ml beside them;
- dim-minus-one: dim_value -1 for the unknown batch dim of the input, the
  output and a value_info (a Kaldi-based exporter);
- init-not-input: an IR 3 model whose initializers are not graph inputs
  (onnxmltools' Core ML converter);
- output-untyped: a graph output without a type;
- declared-shape: a Concat whose value_info, and a graph output whose
  declared shape, inference contradicts.

For each: `check` exits 0 with a warning naming the rule; `check
--strict` exits 1 with one line naming the file, the value and the rule
(and --json says so); `convert --opset 11`, another target and `optimize`
each write a file that our `check --strict` and onnx.checker
(full_check) accept, and their report (text and --json) names the
repair; our evaluator gives, on the original and on each file written,
the outputs ONNX Runtime computes for the original, and ONNX Runtime
runs each file written to them (without ONNX Runtime, our run of the
original is the reference). What stays refused: one domain at two
versions, a dimension of -5. A plain `convert IN -o OUT` round trip
keeps the file as it is (the defect still there). Batch mode: check
--strict of several models refuses each, convert --out-dir --json
repairs each.

Prints "tolerated_cli: N passed, N failed[, N skipped]".
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
NAME = "tolerated_cli"
RNG = np.random.default_rng(34)


def model(nodes, inputs, outputs, inits=(), value_info=(), opsets=(("", 13),), ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = ir
    return m


def floats(name, *shape):
    return numpy_helper.from_array(RNG.uniform(-1, 1, shape).astype(np.float32), name)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TP.FLOAT, shape)


# ---- the defective models, as their exporters write them -----------------

def skl2onnx_like(opsets):
    """Add then Scaler (ai.onnx.ml): the default domain imported twice."""
    nodes = [helper.make_node("Add", ["x", "bias"], ["shifted"], name="add"),
             helper.make_node("Scaler", ["shifted"], ["y"], domain="ai.onnx.ml", name="scaler",
                              offset=[0.5, -0.25, 0.0], scale=[2.0, 1.0, 0.5])]
    return model(nodes, [vi("x", [4, 3])], [vi("y", [4, 3])],
                 [floats("bias", 3)], opsets=opsets)


def kaldi_like():
    """input [-1, 40] -> MatMul -> Relu -> output [-1, 8], the unknown
    frame count written as -1 (also in the value_info)."""
    nodes = [helper.make_node("MatMul", ["input", "affine"], ["h"], name="affine1"),
             helper.make_node("Relu", ["h"], ["output"], name="relu1")]
    return model(nodes, [vi("input", [-1, 40])], [vi("output", [-1, 8])],
                 [floats("affine", 40, 8)], [vi("h", [-1, 8])], opsets=(("", 9),), ir=4)


def ir3_like():
    """IR 3, opset 8: Gemm with weights and bias as initializers that are
    not graph inputs."""
    nodes = [helper.make_node("Gemm", ["x", "W", "B"], ["g"], name="dense", transB=1),
             helper.make_node("Relu", ["g"], ["y"], name="act")]
    return model(nodes, [vi("x", [2, 5])], [vi("y", [2, 4])],
                 [floats("W", 4, 5), floats("B", 4)], opsets=(("", 8),), ir=3)


def untyped_output():
    y = onnx.ValueInfoProto()
    y.name = "y"
    nodes = [helper.make_node("Mul", ["x", "scale"], ["m"], name="mul"),
             helper.make_node("Tanh", ["m"], ["y"], name="tanh")]
    return model(nodes, [vi("x", [3, 4])], [y], [floats("scale", 4)])


def wrong_shapes():
    """Concat of [2,3] and [2,3] on axis 0 is [4,3]: its value_info says
    [5,3], the graph output [3,3]."""
    nodes = [helper.make_node("Concat", ["a", "b"], ["c"], name="cat", axis=0),
             helper.make_node("Sigmoid", ["c"], ["d"], name="sig")]
    return model(nodes, [vi("a", [2, 3]), vi("b", [2, 3])], [vi("d", [3, 3])],
                 value_info=[vi("c", [5, 3])])


# name, rule, model, inputs, targets, what the strict line names
DEFECTS = [
    ("skl2onnx_twice", "opset-repeated", skl2onnx_like((("", 13), ("", 13), ("ai.onnx.ml", 1))),
     {"x": (4, 3)}, (11, 15), "ai.onnx"),
    ("skl2onnx_alias", "opset-repeated",
     skl2onnx_like((("", 13), ("ai.onnx.ml", 1), ("ai.onnx", 13))), {"x": (4, 3)}, (11, 15),
     "ai.onnx"),
    ("kaldi", "dim-minus-one", kaldi_like(), {"input": (7, 40)}, (11, 13), "'input'"),
    ("coreml_ir3", "init-not-input", ir3_like(), {"x": (2, 5)}, (11, 8), "'W'"),
    ("untyped_output", "output-untyped", untyped_output(), {"x": (3, 4)}, (11, 17), "'y'"),
    ("wrong_shapes", "declared-shape", wrong_shapes(), {"a": (2, 3), "b": (2, 3)}, (11, 17),
     "'c'"),
]


# ---- helpers ---------------------------------------------------------------

def save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())   # as the exporter wrote it: no checker
    return path


def case_dir(d, inputs):
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    for i, (n, shape) in enumerate(inputs.items()):
        t = numpy_helper.from_array(RNG.uniform(-2, 2, shape).astype(np.float32), n)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
    return d


def json_of(r):
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def onnx_accepts(path):
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
        return ""
    except Exception as e:  # noqa: BLE001 (onnx raises several kinds)
        return str(e).splitlines()[0] if str(e) else type(e).__name__


def expected_outputs(tool, d, src, ort):
    """The case's output_K.pb: ONNX Runtime's outputs of the original, or
    without it our run of the original."""
    if ort:
        r = subprocess.run(["node", os.path.join(HERE, "ort_expect.js"), ORT_DIR, d, src],
                           capture_output=True, text=True)
        check(r.returncode == 0, "%s: ONNX Runtime runs the original: %s" % (src, r.stderr.strip()))
        return r.returncode == 0
    r = run(tool, "run", src, "--inputs", os.path.join(d, "test_data_set_0"),
            "-o", os.path.join(d, "test_data_set_0"))
    check(r.returncode == 0, "%s: our run of the original: %s" % (src, r.stderr.strip()))
    return r.returncode == 0


def judged(tool, d, path, ort, what):
    """Our evaluator, and ONNX Runtime when here, give the case's outputs
    for the model at path."""
    r = run(tool, "test", d, "--model", path)
    check(r.returncode == 0, "%s: our evaluator gives ONNX Runtime's outputs: %s"
          % (what, (r.stdout + r.stderr).strip()[-300:]))
    if ort:
        r = subprocess.run(["node", ORT_CHECK, d, "--model", path], capture_output=True, text=True)
        check(r.returncode == 0, "%s: ONNX Runtime runs it to the original's outputs: %s"
              % (what, (r.stdout + r.stderr).strip()[-300:]))


# ---- the checks ------------------------------------------------------------

def check_cmd(tool, src, rule, where, name):
    r = run(tool, "check", src)
    check(r.returncode == 0 and "warning: %s:" % rule in r.stdout and where in r.stdout,
          "%s: check exits 0 with a warning %s naming %s: rc %d, %s%s"
          % (name, rule, where, r.returncode, r.stdout, r.stderr))
    r = run(tool, "check", "--strict", src)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 1 and len(lines) == 1 and src in lines[0] and
          ": %s:" % rule in lines[0] and where in lines[0] and not r.stdout,
          "%s: check --strict exits 1 with one line naming the file, %s and %s: rc %d, %s%s"
          % (name, where, rule, r.returncode, r.stdout, r.stderr))
    j = json_of(run(tool, "check", "--json", src))
    check(j.get("status") == "ok" and rule in [w.get("rule") for w in j.get("warnings") or []],
          "%s: check --json lists the warning %s: %s" % (name, rule, j.get("warnings")))
    j = json_of(run(tool, "check", "--strict", "--json", src))
    check(j.get("status") == "invalid" and (j.get("error") or {}).get("reason") == rule,
          "%s: check --strict --json: invalid, reason %s: %s" % (name, rule, j.get("error")))


def written_ok(tool, out, rule, name, what, r):
    """What convert or optimize wrote (r: its run) repaired the defect."""
    check(r.returncode == 0 and "repaired %s:" % rule in r.stdout,
          "%s %s: exits 0 and reports 'repaired %s': rc %d, %s%s"
          % (name, what, rule, r.returncode, r.stdout, r.stderr))
    if r.returncode:
        return False
    s = run(tool, "check", "--strict", out)
    check(s.returncode == 0 and "warning" not in s.stdout,
          "%s %s: our check --strict accepts the file: %s%s" % (name, what, s.stdout, s.stderr))
    why = onnx_accepts(out)
    check(not why, "%s %s: onnx.checker (full_check) accepts the file: %s" % (name, what, why))
    return True


def one_defect(tool, root, ort, name, rule, m, inputs, targets, where):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    src = save(m, os.path.join(d, name + ".onnx"))
    check_cmd(tool, src, rule, where, name)
    case_dir(d, inputs)
    have = expected_outputs(tool, d, src, ort)
    if have:
        judged(tool, d, src, False, "%s: the original" % name)
    for t in targets:
        out = os.path.join(d, "opset%d.onnx" % t)
        r = run(tool, "convert", src, "-o", out, "--opset", str(t))
        if written_ok(tool, out, rule, name, "-> opset %d" % t, r) and have:
            judged(tool, d, out, ort, "%s -> opset %d" % (name, t))
        j = json_of(run(tool, "convert", src, "-o", out + ".json.onnx", "--opset", str(t),
                        "--json"))
        check(rule in [e.get("rule") for e in j.get("repaired") or []],
              "%s -> opset %d: --json lists the repair: %s" % (name, t, j.get("repaired")))
    out = os.path.join(d, "optimized.onnx")
    r = run(tool, "optimize", src, "-o", out)
    if written_ok(tool, out, rule, name, "optimize", r) and have:
        judged(tool, d, out, ort, "%s optimized" % name)
    # the plain round trip keeps the file as it is (docs/checker.md)
    out = os.path.join(d, "roundtrip.onnx")
    r = run(tool, "convert", src, "-o", out)
    s = run(tool, "check", out)
    check(r.returncode == 0 and "repaired" not in r.stdout and "warning: %s:" % rule in s.stdout,
          "%s: the plain round trip keeps the model as it is: %s%s%s"
          % (name, r.stdout, r.stderr, s.stdout))
    return src


def still_refused(tool, root, name, rule, m):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    src = save(m, os.path.join(d, "model.onnx"))
    for args in (("check", src), ("check", "--strict", src)):
        r = run(tool, *args)
        check(r.returncode == 1 and ": %s:" % rule in r.stderr,
              "%s: %s refuses with %s: rc %d, %s" % (name, " ".join(args[:-1]), rule,
                                                       r.returncode, r.stderr))
    out = os.path.join(d, "out.onnx")
    for args in (("convert", src, "-o", out, "--opset", "11"), ("optimize", src, "-o", out)):
        r = run(tool, *args)
        check(r.returncode == 1 and ": %s:" % rule in r.stderr and not os.path.exists(out),
              "%s: %s refuses with %s, writing nothing: rc %d, %s"
              % (name, args[0], rule, r.returncode, r.stderr))


def batch(tool, root, srcs):
    r = run(tool, "check", "--strict", "-j", "2", *srcs)
    check(r.returncode == 1 and all(s in r.stderr for s in srcs),
          "batch check --strict refuses every model: rc %d, %s" % (r.returncode, r.stderr))
    r = run(tool, "check", "-j", "2", *srcs)
    check(r.returncode == 0, "batch check accepts every model: rc %d, %s" % (r.returncode, r.stderr))
    out = os.path.join(root, "batch-out")
    r = run(tool, "convert", "--opset", "11", "--out-dir", out, "-j", "2", "--json", *srcs)
    j = json_of(r)
    models = j.get("models") or []
    check(r.returncode == 0 and len(models) == len(srcs) and
          all(mm.get("status") == "ok" and mm.get("repaired") for mm in models),
          "batch convert --json repairs every model: rc %d, %s" % (r.returncode, r.stderr[-300:]))


def documented():
    """docs/tolerated.md has a row for every rule exercised here."""
    with open(os.path.join(HERE, "..", "docs", "tolerated.md")) as f:
        text = f.read()
    for rule in sorted({d[1] for d in DEFECTS}):
        check("| `%s` |" % rule in text, "docs/tolerated.md has a row for %s" % rule)


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-convert"
    documented()
    ort = have_ort()
    if not ort:
        skip("ONNX Runtime (node and ../shared/tools/ort) is not here: our run of each "
             "original is the reference")
    with tempfile.TemporaryDirectory(prefix="oc-tolerated-") as root:
        srcs = [one_defect(tool, root, ort, *defect) for defect in DEFECTS]
        conflict = skl2onnx_like((("", 13), ("ai.onnx.ml", 1), ("ai.onnx", 11)))
        still_refused(tool, root, "two_versions", "opset-duplicate", conflict)
        minus5 = kaldi_like()
        minus5.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -5
        still_refused(tool, root, "minus_five", "value-type", minus5)
        batch(tool, root, srcs)
    return report(NAME)


if __name__ == "__main__":
    sys.exit(main())
