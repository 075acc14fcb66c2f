#!/usr/bin/env python3
"""Core ML from the command line (issue 24), judged by Apple's loader
(../shared/tools/coremltools/ct_check.py), ONNX Runtime and our evaluator.

For every model of ../shared/models:
- `convert M -o M.mlpackage --verify --json` writes a package at the
  lowest target that holds the model (the report's target is its
  lowest_target; a model needing more than iOS15 is refused one target
  lower, naming the op and that target) and its import evaluates equal to
  the model on the case's inputs;
- Apple's loader accepts the package: every field known, every op typed
  again for its opset, every weight read from weight.bin; its spec
  version, opset, op counts and blobs are what our report and `info
  --json` say, and weight.bin holds the model's float weights (at least
  90% of the float initializer bytes of 10 elements or more: Core ML sums
  LSTM's two biases, so not all);
- `check` accepts the package and names its target;
- `convert M.mlpackage -o back.onnx --opset 13` (the import) runs in ONNX
  Runtime and gives PyTorch's expected outputs (the case's output files)
  within the case's tolerance, int64 inputs fed as the int32 Core ML
  takes.
One model at every target from iOS15 to iOS26: Apple's loader accepts
each, with that target's specification version and MIL opset. --dtype
float16 before the export: accepted, weights half the bytes, --verify
equal at float16's tolerance; its inputs and outputs fp32 behind casts
at iOS15 (the description holds fp16 from iOS16) and fp16 at iOS16.
Refusals (exit 1, one line, no package left, nothing beside it): a
QuantizeLinear below iOS17 names node, op, MIL op and iOS17, and the JSON
error says stage coreml, reason coreml-target, first_target iOS17; an op
no target has (Det) is named; a truncated weight.bin is named by check and
convert. Usage errors exit 2. Batch mode writes NAME.mlpackage for
NAME.onnx and imports packages back to NAME.onnx.

Usage: coreml_cli.py ONNX_CONVERT   (from the project root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from clitest import check, report, run, skip
from clitest import have_ort as ort_available

MODELS = "../shared/models"
from clitest import CT_CHECK as JUDGE, CT_SETUP as SETUP  # noqa: E402
from clitest import ORT_CHECK as ORT  # noqa: E402
TARGETS = ["iOS15", "iOS16", "iOS17", "iOS18", "iOS26"]


def convert(bin_, src, dst, *args):
    p = run(bin_, "convert", src, "-o", dst, "--json", *args)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    return p, rep


def judge(pkg):
    p = subprocess.run([JUDGE, pkg, "--json"], capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"ok": False, "error": p.stdout + p.stderr}


def float_weight_bytes(model):
    """Bytes of the float32 initializers of 10 elements or more."""
    import numpy as np
    import onnx
    m = onnx.load(model)
    n = 0
    for t in m.graph.initializer:
        if t.data_type == onnx.TensorProto.FLOAT and int(np.prod(t.dims)) >= 10:
            n += 4 * int(np.prod(t.dims))
    return n


def nothing_left(folder, keep):
    """Whether `folder` holds only the names in keep (no package, no
    temporary folder left by a refusal)."""
    return sorted(os.listdir(folder)) == sorted(keep)


def ort_case_for(case, model, tmp):
    """A copy of the case whose int64 inputs are int32 where `model`
    (an import) declares int32."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model)
    out = os.path.join(tmp, "ortcase")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(case, out, ignore=shutil.ignore_patterns("model.onnx"))
    sets = os.path.join(out, "test_data_set_0")
    for i, vi in enumerate(m.graph.input):
        path = os.path.join(sets, "input_%d.pb" % i)
        if vi.type.tensor_type.elem_type != onnx.TensorProto.INT32 or not os.path.exists(path):
            continue
        t = onnx.TensorProto()
        t.ParseFromString(open(path, "rb").read())
        a = numpy_helper.to_array(t)
        if a.dtype == np.int64:
            open(path, "wb").write(numpy_helper.from_array(a.astype(np.int32),
                                                           t.name).SerializeToString())
    return out


def one_model(bin_, name, tmp, have_ort):
    case = os.path.join(MODELS, name)
    src = os.path.join(case, "model.onnx")
    pkg = os.path.join(tmp, name + ".mlpackage")
    p, rep = convert(bin_, src, pkg, "--verify")
    cm = rep.get("coreml") or {}
    check(p.returncode == 0 and rep.get("status") == "ok",
          "%s: export: %s" % (name, p.stderr.strip()))
    if p.returncode != 0:
        return
    print("  %s: target %s, %s MIL ops, %s bytes in weight.bin" %
          (name, cm.get("target"), cm.get("mil_ops"), cm.get("weight_bytes")))
    check(cm.get("target") == cm.get("lowest_target") and cm.get("target") in TARGETS,
          "%s: the target chosen is the lowest: %r" % (name, cm))
    check((rep.get("verification") or {}).get("result") == "equal",
          "%s: the import of the export evaluates equal: %r" % (name, rep.get("verification")))
    low = TARGETS.index(cm.get("target", "iOS15"))
    if low > 0:   # one target lower is refused, naming what forced the target
        below = os.path.join(tmp, "below.mlpackage")
        p2, rep2 = convert(bin_, src, below, "--coreml-target", TARGETS[low - 1])
        err = rep2.get("error") or {}
        check(p2.returncode == 1 and err.get("first_target") == cm.get("target") and
              not os.path.exists(below), "%s: %s refused naming %s: %r" %
              (name, TARGETS[low - 1], cm.get("target"), err))
    j = judge(pkg)
    check(j.get("ok") is True, "%s: Apple's loader: %s" % (name, j.get("error")))
    fn = (j.get("functions") or {}).get("main") or {}
    check(j.get("spec_version") == cm.get("specification_version") and
          fn.get("opset") == cm.get("opset") and fn.get("n_ops") == cm.get("mil_ops"),
          "%s: the loader's spec %r, opset %r and %r ops are the report's" %
          (name, j.get("spec_version"), fn.get("opset"), fn.get("n_ops")))
    info = json.loads(run(bin_, "info", pkg, "--json").stdout or "{}")
    ifn = (info.get("functions") or [{}])[0]
    blobs = j.get("blobs") or {}
    check(ifn.get("ops") == fn.get("ops") and info.get("target") == j.get("target") and
          (info.get("weights") or {}).get("blobs") == blobs.get("count") and
          (info.get("weights") or {}).get("blob_bytes") == blobs.get("bytes"),
          "%s: info --json agrees with the loader (ops, target, blobs)" % name)
    want = float_weight_bytes(src)
    check(blobs.get("bytes", 0) >= 0.9 * want and blobs.get("bytes") == cm.get("weight_bytes"),
          "%s: weight.bin holds the weights: %s bytes of %d" % (name, blobs.get("bytes"), want))
    c = run(bin_, "check", pkg, "--json")
    crep = json.loads(c.stdout or "{}")
    check(c.returncode == 0 and (crep.get("package") or {}).get("target") == cm.get("target"),
          "%s: check accepts the package: %s" % (name, c.stderr.strip()))
    back = os.path.join(tmp, name + ".back.onnx")
    p3, rep3 = convert(bin_, pkg, back, "--opset", "13", "--verify")
    check(p3.returncode == 0 and (rep3.get("opset") or {}).get("from") == 17 and
          (rep3.get("opset") or {}).get("to") == 13,
          "%s: the import to opset 13: %s" % (name, p3.stderr.strip()))
    if have_ort and p3.returncode == 0:
        ocase = ort_case_for(case, back, tmp)
        o = subprocess.run(["node", ORT, ocase, "--model", back], capture_output=True,
                           text=True)
        line = (o.stdout.strip().splitlines() or [""])[0]
        check(o.returncode == 0 and line.startswith("PASS"),
              "%s: ONNX Runtime on the import gives the expected outputs: %s %s" %
              (name, line, o.stderr.strip()[-200:]))


def every_target(bin_, tmp):
    """One model at each target: the loader reads each target's spec
    version and MIL opset."""
    src = os.path.join(MODELS, "mobilenet_v2_opset17", "model.onnx")
    for t in TARGETS:
        pkg = os.path.join(tmp, "t_%s.mlpackage" % t)
        p, rep = convert(bin_, src, pkg, "--coreml-target", t)
        cm = rep.get("coreml") or {}
        check(p.returncode == 0 and cm.get("target") == t and
              cm.get("lowest_target") == "iOS15", "%s: export: %s" % (t, p.stderr.strip()))
        j = judge(pkg)
        check(j.get("ok") is True and j.get("target") == t and
              j.get("spec_version") == cm.get("specification_version") and
              ((j.get("functions") or {}).get("main") or {}).get("opset") == cm.get("opset"),
              "%s: the loader accepts it as %s: %r" % (t, t, {k: j.get(k) for k in
                                                              ("ok", "target", "error")}))
        shutil.rmtree(pkg, ignore_errors=True)


def float16(bin_, tmp):
    src = os.path.join(MODELS, "mobilenet_v2_opset17", "model.onnx")
    full, half = os.path.join(tmp, "f32.mlpackage"), os.path.join(tmp, "f16.mlpackage")
    p1, r1 = convert(bin_, src, full)
    p2, r2 = convert(bin_, src, half, "--dtype", "float16", "--verify")
    check(p1.returncode == 0 and p2.returncode == 0 and
          (r2.get("verification") or {}).get("result") == "equal",
          "--dtype float16 --to coreml --verify: %s" % p2.stderr.strip())
    j = judge(half)
    check(j.get("ok") is True, "float16 package: Apple's loader: %s" % j.get("error"))
    b1 = (r1.get("coreml") or {}).get("weight_bytes") or 0
    b2 = (r2.get("coreml") or {}).get("weight_bytes") or 0
    check(b1 > 0 and abs(2 * b2 - b1) <= b1 // 100,
          "float16 package: weights %d bytes, float32's %d" % (b2, b1))
    # the description holds fp16 from iOS16 only: below, fp32 and a cast
    info = json.loads(run(bin_, "info", half, "--json").stdout or "{}")
    io = {i.get("dtype") for i in info.get("inputs", []) + info.get("outputs", [])}
    check((r2.get("coreml") or {}).get("target") == "iOS15" and io == {"fp32"} and
          info["functions"][0]["ops"].get("cast", 0) >= 2,
          "float16 package at iOS15: fp32 inputs and outputs, cast inside: %r" % io)
    h16 = os.path.join(tmp, "f16_ios16.mlpackage")
    p3, r3 = convert(bin_, src, h16, "--dtype", "float16", "--coreml-target", "iOS16",
                     "--verify")
    info = json.loads(run(bin_, "info", h16, "--json").stdout or "{}")
    io = {i.get("dtype") for i in info.get("inputs", []) + info.get("outputs", [])}
    check(p3.returncode == 0 and io == {"fp16"} and judge(h16).get("ok") is True and
          (r3.get("verification") or {}).get("result") == "equal",
          "float16 package at iOS16: fp16 inputs and outputs, accepted, equal: %r %s" %
          (io, p3.stderr.strip()))


def small_model(path, op, inputs, inits, then=None):
    """A model of one node `the_node` (op) on the inputs and initializers;
    `then`: an op applied to its output with the same initializers."""
    import onnx
    from onnx import helper as h, TensorProto as T
    ins = [h.make_tensor_value_info(n, t, d) for n, t, d in inputs]
    extra = [t.name for t in inits]
    nodes = [h.make_node(op, [n for n, _, _ in inputs] + extra, ["t" if then else "y"],
                         name="the_node")]
    if then:
        nodes.append(h.make_node(then, ["t"] + extra, ["y"], name="then"))
    g = h.make_graph(nodes, "g", ins, [h.make_tensor_value_info("y", T.FLOAT, None)],
                     initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def refusals(bin_, tmp):
    from onnx import helper as h, TensorProto as T
    d = os.path.join(tmp, "refuse")
    os.makedirs(d)
    q = os.path.join(d, "q.onnx")
    small_model(q, "QuantizeLinear", [("x", T.FLOAT, [2, 3])],
                [h.make_tensor("s", T.FLOAT, [], [0.1]), h.make_tensor("z", T.UINT8, [], [128])],
                then="DequantizeLinear")
    for t in ("iOS15", "iOS16"):
        out = os.path.join(d, "q_%s.mlpackage" % t)
        p = run(bin_, "convert", q, "-o", out, "--coreml-target", t)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and "'the_node'" in lines[0] and
              "QuantizeLinear" in lines[0] and "'quantize'" in lines[0] and
              "first exists at iOS17" in lines[0] and "target " + t in lines[0],
              "%s: refusal names node, op, MIL op and iOS17: %r" % (t, lines))
        check(nothing_left(d, ["q.onnx"]), "%s: nothing written: %r" % (t, os.listdir(d)))
        p, rep = convert(bin_, q, out, "--coreml-target", t)
        err = rep.get("error") or {}
        check(err.get("stage") == "coreml" and err.get("reason") == "coreml-target" and
              err.get("node") == "the_node" and err.get("op") == "QuantizeLinear" and
              err.get("mil_op") == "quantize" and err.get("first_target") == "iOS17" and
              rep.get("status") == "refused", "%s: JSON error: %r" % (t, err))
    out = os.path.join(tmp, "q.mlpackage")
    p, rep = convert(bin_, q, out, "--verify")
    cm = rep.get("coreml") or {}
    check(p.returncode == 0 and cm.get("target") == "iOS17" and
          (cm.get("forced_by") or {}).get("mil_op") == "quantize" and
          (cm.get("forced_by") or {}).get("node") == "the_node",
          "QuantizeLinear: iOS17, forced by quantize (the_node): %r" % cm)
    check(judge(out).get("ok") is True, "QuantizeLinear package at iOS17: Apple's loader")
    text = run(bin_, "convert", q, "-o", os.path.join(tmp, "q2.mlpackage")).stdout
    check("target iOS17" in text and "forced by MIL op quantize (node 'the_node', "
          "QuantizeLinear)" in text, "the text report names the op that forced iOS17: %r" % text)

    q8 = os.path.join(d, "q8.onnx")
    small_model(q8, "QuantizeLinear", [("x", T.FLOAT, [2, 3])],
                [h.make_tensor("s", T.FLOAT, [], [0.1]), h.make_tensor("z", T.UINT8, [], [128])])
    import onnx
    m = onnx.load(q8)
    m.graph.output[0].type.tensor_type.elem_type = T.UINT8
    onnx.save(m, q8)
    p, rep = convert(bin_, q8, os.path.join(d, "q8.mlpackage"))
    err = rep.get("error") or {}
    check(p.returncode == 1 and err.get("stage") == "coreml" and
          "graph output 'y' is uint8" in err.get("message", ""),
          "a uint8 output (no Core ML multi-array type) is refused at the export: %r" % err)
    os.remove(q8)
    det = os.path.join(d, "det.onnx")
    small_model(det, "Det", [("x", T.FLOAT, [3, 3])], [])
    p, rep = convert(bin_, det, os.path.join(d, "det.mlpackage"))
    err = rep.get("error") or {}
    check(p.returncode == 1 and err.get("reason") == "coreml-unsupported" and
          err.get("op") == "Det" and "no Core ML lowering for Det" in err.get("message", ""),
          "Det: refused naming it: %r" % err)
    check(nothing_left(d, ["q.onnx", "det.onnx"]), "Det: nothing written")


def damaged(bin_, tmp):
    src = os.path.join(MODELS, "squeezenet1_1_opset13", "model.onnx")
    pkg = os.path.join(tmp, "dmg.mlpackage")
    run(bin_, "convert", src, "-o", pkg)
    wb = os.path.join(pkg, "Data", "com.apple.CoreML", "weights", "weight.bin")
    with open(wb, "r+b") as f:
        f.truncate(os.path.getsize(wb) // 2)
    c = run(bin_, "check", pkg)
    lines = c.stderr.strip().splitlines()
    check(c.returncode == 1 and len(lines) == 1 and "weight.bin" in lines[0],
          "check of a truncated weight.bin names it: %r" % lines)
    out = os.path.join(tmp, "dmg.onnx")
    p = run(bin_, "convert", pkg, "-o", out)
    check(p.returncode == 1 and not os.path.exists(out) and "weight.bin" in p.stderr,
          "convert of a truncated package: exit 1, nothing written: %r" % p.stderr)
    # a folder that is not a package is never replaced by one
    other = os.path.join(tmp, "other.mlpackage")
    os.makedirs(other)
    open(os.path.join(other, "keep.txt"), "w").write("mine")
    p = run(bin_, "convert", src, "-o", other)
    check(p.returncode == 1 and os.path.exists(os.path.join(other, "keep.txt")),
          "an existing folder that is no package is refused, kept: %r" % p.stderr)


def usage(bin_, tmp):
    src = os.path.join(MODELS, "squeezenet1_1_opset13", "model.onnx")
    o = os.path.join(tmp, "u.mlpackage")
    for args, what in (
            (["-o", os.path.join(tmp, "u.onnx"), "--coreml-target", "iOS17"], "--coreml-target"),
            (["-o", o, "--coreml-target", "iOS14"], "one of iOS15"),
            (["-o", "-", "--to", "coreml"], "folder"),
            (["-o", o, "--opset", "13"], "opset 17"),
            (["-o", o, "--dtype", "bfloat16"], "bfloat16"),
            (["-o", o, "--to", "xml"], "coreml or onnx"),
            (["-o", o, "--external-data", "w.bin"], "weight.bin")):
        p = run(bin_, "convert", src, *args)
        check(p.returncode == 2 and what in p.stderr and not os.path.exists(o),
              "usage error %r: exit %d, %r" % (args, p.returncode, p.stderr.strip()))


def batch(bin_, tmp):
    names = ["squeezenet1_1_opset13", "lstm_tagger_opset14"]
    srcs = os.path.join(tmp, "srcs")
    for n in names:
        os.makedirs(os.path.join(srcs, n))
        shutil.copy(os.path.join(MODELS, n, "model.onnx"), os.path.join(srcs, n, "model.onnx"))
    out = os.path.join(tmp, "pkgs")
    p = run(bin_, "convert", srcs, "--out-dir", out, "--to", "coreml", "-j", "2")
    made = [os.path.join(out, n, "model.mlpackage") for n in names]
    check(p.returncode == 0 and all(judge(m).get("ok") is True for m in made),
          "batch --to coreml writes NAME.mlpackage, each accepted: %s" % p.stderr.strip())
    back = os.path.join(tmp, "back")
    p = run(bin_, "convert", out, "--out-dir", back, "--opset", "13")
    made = [os.path.join(back, n, "model.onnx") for n in names]
    check(p.returncode == 0 and all(run(bin_, "check", m).returncode == 0 for m in made),
          "batch of packages imports each to NAME.onnx: %s" % p.stderr.strip())
    c = run(bin_, "check", out)
    ok_lines = [ln for ln in c.stdout.splitlines() if ln.startswith("ok ")]
    check(c.returncode == 0 and len(ok_lines) == 2,
          "check of a folder of packages: each one model: %s" % c.stdout[-300:])


def main():
    if len(sys.argv) != 2:
        print("usage: coreml_cli.py ONNX_CONVERT", file=sys.stderr)
        return 2
    bin_ = sys.argv[1]
    have_judge = os.access(JUDGE, os.X_OK) and subprocess.run(
        [SETUP, "--no-selftest"], capture_output=True).returncode == 0
    if not os.path.isdir(MODELS) or not have_judge:
        skip("coreml_cli: no ../shared/models or no coremltools judge")
        return report("coreml_cli")
    have_ort = ort_available()
    if not have_ort:
        skip("coreml_cli: ONNX Runtime: node or ../shared/tools/ort absent")
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(MODELS)):
            if os.path.exists(os.path.join(MODELS, name, "model.onnx")):
                one_model(bin_, name, tmp, have_ort)
        every_target(bin_, tmp)
        float16(bin_, tmp)
        refusals(bin_, tmp)
        damaged(bin_, tmp)
        usage(bin_, tmp)
        batch(bin_, tmp)
    return report("coreml_cli")


if __name__ == "__main__":
    sys.exit(main())
