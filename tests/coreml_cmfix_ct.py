"""Core ML export: what Apple's loader refuses is never written, and what it
takes is not refused (issue 33). Each small ONNX model below is exported
with `onnx-convert convert M -o M.mlpackage --json`, must be accepted by
../shared/tools/coremltools/ct_check.py (coremltools' own milproto loader,
which refuses a rank-0 function input: "Functions input of type int not
supported"), and, where said, verified equal by `--verify`:

- a rank-0 int64 input (and a Loop whose trip count is one) crosses as
  [1] with a squeeze inside; the report (text and JSON) says so, and the
  import (`convert PKG -o back.onnx`) gives the scalar input back;
- a package whose main function has a rank-0 input (our export with its
  input edited to rank 0, as another tool might write it) is refused by
  `check`, naming the rule;
- an input named `state` (a word MIL reserves) is renamed as coremltools
  renames it (`state_workaround`) in the program and the description
  alike, the report names the renaming, and the import gives the name
  back (from the package's user-defined metadata);
- Shape-15 with start/end on an input with a dynamic dim (shape, then
  slice_by_index);
- TopK whose K is computed from static shapes (Shape -> Gather ->
  Unsqueeze -> Concat -> ReduceMin, as torchvision's detectors export
  `_topk_min`) exports with K a const; where K is computed at run time
  (the same chain over a NonZero, as in torchvision's SSD), as argsort,
  slice_by_index and gather_along_axis, verified equal; a K that is a
  graph input with a default value (a const in the package) is read as
  the constant it becomes.

Skips, saying so, when the judge is absent or not set up.
Usage: /usr/bin/python3 tests/coreml_cmfix_ct.py PATH/TO/onnx-convert
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

from clitest import CT_CHECK as JUDGE, CT_DIR, check, have_ct, report, run, skip

F = T.FLOAT


def model(nodes, ins, outs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", ins, outs, initializer=list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def vi(name, elem, dims):
    return h.make_tensor_value_info(name, elem, dims)


def scalar_input():
    """y = x * n, n a rank-0 int64 input."""
    return model([h.make_node("Cast", ["n"], ["nf"], to=F), h.make_node("Mul", ["x", "nf"], ["y"])],
                 [vi("x", F, [2, 3]), vi("n", T.INT64, [])], [vi("y", F, [2, 3])])


def loop_trip():
    """A Loop run `trip` times (a rank-0 int64 input) adding x to an
    accumulator each time."""
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc_in", F, [2, 3])],
        [vi("cond_out", T.BOOL, []), vi("acc_out", F, [2, 3])])
    return model([h.make_node("Loop", ["trip", "", "zero"], ["y"], body=body)],
                 [vi("x", F, [2, 3]), vi("trip", T.INT64, [])], [vi("y", F, [2, 3])],
                 [nh.from_array(np.zeros((2, 3), np.float32), "zero")])


def state_input():
    return model([h.make_node("Relu", ["state"], ["out"])], [vi("state", F, [2, 3])],
                 [vi("out", F, [2, 3])])


def shape15():
    return model([h.make_node("Shape", ["x"], ["s"], start=0, end=-2),
                  h.make_node("Cast", ["s"], ["y"], to=F)],
                 [vi("x", F, ["N", 3, 4, 5])], [vi("y", F, [2])], opset=15)


def topk_min():
    c = nh.from_array(np.array([4], np.int64))
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Constant", [], ["ax"], value=nh.from_array(np.array(1, np.int64))),
             h.make_node("Gather", ["s", "ax"], ["d"], axis=0),
             h.make_node("Unsqueeze", ["d"], ["du"], axes=[0]),
             h.make_node("Constant", [], ["c"], value=c),
             h.make_node("Concat", ["c", "du"], ["cc"], axis=0),
             h.make_node("ReduceMin", ["cc"], ["m"], keepdims=0),
             h.make_node("Reshape", ["m", "one"], ["k"]),
             h.make_node("TopK", ["x", "k"], ["v", "i"])]
    return model(nodes, [vi("x", F, [2, 6])], [vi("v", F, None), vi("i", T.INT64, None)],
                 [nh.from_array(np.array([1], np.int64), "one")], opset=11)


def topk_dynamic(rank2):
    """A detector's TopK (torchvision's SSD at opset 13): K = min(4, the
    number of scores above 0), from NonZero, so computed at run time;
    rank2 takes the top K of each row of a [2, 6] input instead (and
    keeps K at least 1)."""
    x = vi("x", F, [2, 6] if rank2 else [10])
    i64 = lambda name, v: nh.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [h.make_node("Greater", ["x", "zero"], ["pos"]),
             h.make_node("NonZero", ["pos"], ["nz"]),
             h.make_node("Transpose", ["nz"], ["nzt"], perm=[1, 0]),
             h.make_node("Shape", ["nzt"], ["s"]),
             h.make_node("Gather", ["s", "i0"], ["d"], axis=0),
             h.make_node("Unsqueeze", ["d", "ax0"], ["du"]),
             h.make_node("Concat", ["cap", "du"], ["cc"], axis=0),
             h.make_node("ReduceMin", ["cc"], ["m"], keepdims=0),
             h.make_node("Max", ["m", "one_s"], ["m1"]),
             h.make_node("Reshape", ["m1", "one"], ["k"]),
             h.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1)]
    inits = [nh.from_array(np.array(0, np.float32), "zero"), i64("i0", 0), i64("ax0", [0]),
             i64("cap", [4]), i64("one_s", 1), i64("one", [1])]
    return model(nodes, [x], [vi("v", F, None), vi("i", T.INT64, None)], inits, opset=13)


def topk_default_k():
    """TopK whose K is a graph input with a default value (an initializer
    of the same name): Core ML has no input with a default, so the export
    makes it a const, and the lowering must read it as one."""
    m = model([h.make_node("TopK", ["x", "k"], ["v", "i"])],
              [vi("x", F, [2, 6]), vi("k", T.INT64, [1])],
              [vi("v", F, None), vi("i", T.INT64, None)],
              [nh.from_array(np.array([3], np.int64), "k")])
    m.ir_version = 8
    return m


def export(tool, tmp, name, m, *args):
    """Exports m; returns (process, JSON report, package path)."""
    src = os.path.join(tmp, name + ".onnx")
    pkg = os.path.join(tmp, name + ".mlpackage")
    onnx.save(m, src)
    p = run(tool, "convert", src, "-o", pkg, "--json", *args)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    check(p.returncode == 0, "%s: export: %s" % (name, (p.stdout + p.stderr)[-400:]))
    return p, rep, pkg


def judge(name, pkg):
    """Apple's loader's JSON report of pkg, {} when it refuses."""
    ct = run(sys.executable, JUDGE, pkg, "--json")
    try:
        rep = json.loads(ct.stdout)
    except ValueError:
        rep = {}
    check(ct.returncode == 0 and rep.get("ok"),
          "%s: Apple's loader: %s" % (name, (ct.stdout + ct.stderr)[-400:]))
    return rep


def ops_of(rep):
    return rep.get("functions", {}).get("main", {}).get("ops", {})


def io_changes(rep):
    return ((rep.get("coreml") or {}).get("io_changes")) or []


def verified(tool, tmp, name, m):
    """Exports m with --verify, expects Apple's loader to accept the
    package and the verification to say equal; returns the JSON report,
    the package and the loader's report."""
    _, rep, pkg = export(tool, tmp, name, m, "--verify")
    ct = judge(name, pkg)
    check((rep.get("verification") or {}).get("result") == "equal",
          "%s: --verify: %s" % (name, rep.get("verification")))
    return rep, pkg, ct


def reported(tool, tmp, name, rep, pkg, want, words):
    """Checks that the JSON report's io_changes has an entry `want` holds
    for and that the text report (a second export) holds every word of
    `words`; returns the graph of pkg's import, None when it fails."""
    ch = io_changes(rep)
    check(any(want(c) for c in ch), "%s: JSON io_changes: %s" % (name, ch))
    t = run(tool, "convert", os.path.join(tmp, name + ".onnx"), "-o",
            os.path.join(tmp, name + "_text.mlpackage"))
    check(all(w in t.stdout for w in words),
          "%s: the text report holds %s: %s" % (name, words, t.stdout))
    back = os.path.join(tmp, name + "_back.onnx")
    b = run(tool, "convert", pkg, "-o", back)
    check(b.returncode == 0, "%s: import: %s" % (name, b.stderr))
    return onnx.load(back).graph if b.returncode == 0 else None


def test_scalar(tool, tmp):
    rep, pkg, _ = verified(tool, tmp, "scalar_input", scalar_input())
    g = reported(tool, tmp, "scalar_input", rep, pkg,
                 lambda c: c.get("name") == "n" and c.get("scalar_as_1"), ["'n'", "[1]"])
    if g is not None:
        dims = {i.name: len(i.type.tensor_type.shape.dim) for i in g.input}
        check(dims.get("n") == 0, "scalar_input: the import's input n is rank 0: %s" % dims)
    _, _, lrep = verified(tool, tmp, "loop_trip", loop_trip())
    check("while_loop" in ops_of(lrep), "loop_trip: a while_loop: %s" % ops_of(lrep))
    return pkg


def read_spec(pkg):
    """The package's model.mlmodel path and message, read with coremltools'
    generated protobuf classes."""
    sys.path.insert(0, os.path.join(CT_DIR, "src", "coremltools"))
    from proto import Model_pb2  # noqa: E402
    path = os.path.join(pkg, "Data", "com.apple.CoreML", "model.mlmodel")
    spec = Model_pb2.Model()
    if not os.path.exists(path):
        check(False, "%s: no package written" % pkg)
        return path, spec
    with open(path, "rb") as f:
        spec.ParseFromString(f.read())
    return path, spec


def test_check_refuses_scalar(tool, tmp, pkg):
    """Our scalar_input package with main's input n edited to rank 0 (and
    the description's multi-array shape to []): `check` refuses it."""
    spec_path, spec = read_spec(pkg)
    fn = spec.mlProgram.functions["main"]
    edited = 0
    for inp in fn.inputs:
        if inp.name == "n":
            inp.type.tensorType.rank = 0
            del inp.type.tensorType.dimensions[:]
            edited += 1
    for inp in spec.description.input:
        if inp.name == "n":
            del inp.type.multiArrayType.shape[:]
            edited += 1
    check(edited == 2, "hand-built scalar package: input n found in program and description")
    if not os.path.exists(spec_path):
        return
    with open(spec_path, "wb") as f:
        f.write(spec.SerializeToString())
    c = run(tool, "check", pkg)
    check(c.returncode == 1 and "function input 'n'" in c.stderr + c.stdout and
          "rank 1 or more" in c.stderr + c.stdout,
          "check refuses a rank-0 function input naming the rule: rc %d %s" %
          (c.returncode, (c.stdout + c.stderr)[-300:]))


def test_state(tool, tmp):
    rep, pkg, _ = verified(tool, tmp, "state_input", state_input())
    g = reported(tool, tmp, "state_input", rep, pkg,
                 lambda c: c.get("name") == "state" and
                 c.get("package_name") == "state_workaround", ["'state'", "state_workaround"])
    if g is not None:
        check([i.name for i in g.input] == ["state"],
              "state_input: the import names the input 'state' again: %s" % g.input)
    _, spec = read_spec(pkg)
    if not spec.HasField("description"):
        return
    desc = [i.name for i in spec.description.input]
    prog = [i.name for i in spec.mlProgram.functions["main"].inputs]
    check(desc == ["state_workaround"] and prog == desc,
          "state_input: description and program name the input alike: %s %s" % (desc, prog))


def main():
    tool = sys.argv[1]
    if not have_ct():
        skip("coreml_cmfix_ct: Apple's loader (coremltools) not set up")
        return report("coreml_cmfix_ct")
    with tempfile.TemporaryDirectory() as tmp:
        pkg = test_scalar(tool, tmp)
        test_check_refuses_scalar(tool, tmp, pkg)
        test_state(tool, tmp)
        _, _, spkg = export(tool, tmp, "shape15", shape15())
        sct = judge("shape15", spkg)
        check("slice_by_index" in ops_of(sct) and "shape" in ops_of(sct),
              "shape15: shape and slice_by_index: %s" % ops_of(sct))
        _, _, tpkg = export(tool, tmp, "topk_min", topk_min(), "--verify")
        tct = judge("topk_min", tpkg)
        check("topk" in ops_of(tct), "topk_min: a topk: %s" % ops_of(tct))
        _, _, kpkg = export(tool, tmp, "topk_default_k", topk_default_k())
        kct = judge("topk_default_k", kpkg)
        check("topk" in ops_of(kct), "topk_default_k: a topk of k 3: %s" % ops_of(kct))
        for rank2 in (False, True):
            name = "topk_dynamic%s" % ("_rank2" if rank2 else "")
            _, _, dct = verified(tool, tmp, name, topk_dynamic(rank2))
            check("argsort" in ops_of(dct) and "gather_along_axis" in ops_of(dct),
                  "%s: argsort and gather_along_axis: %s" % (name, ops_of(dct)))
    return report("coreml_cmfix_ct")


if __name__ == "__main__":
    sys.exit(main())
