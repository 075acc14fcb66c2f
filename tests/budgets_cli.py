#!/usr/bin/env python3
"""The evaluator's budgets from the command line (issue 18, "Bounds").

Builds its models here (a few lines of protobuf encoding, no onnx
package) and checks that each ends quickly with exit 1 and one stderr line
that names the budget, instead of taking gigabytes or running forever:
- ConstantOfShape, Expand and Tile of 2^30 elements, a Loop whose scan
  output takes 4 MiB per step: `run --max-memory 64M` names the node, the op
  and the memory budget (and `test` and `convert --verify` do too);
- a Constant declaring 2^31 elements with one value: refused before any
  allocation, naming the 2^31;
- a nested Loop of 2^20 x 2^20 iterations and a Loop growing a sequence:
  `--max-steps` and `--timeout` end `run`, `test` and `convert --verify`;
- a batch with --timeout reports the model past its time as error at
  stage run, reason timeout, and still converts the other;
- `convert --verify` of a model whose input is declared [100000,3,32,32]
  refuses in seconds naming the input and --input-shape, and verifies
  with --input-shape;
- a small model still runs with small budgets, and bad budget values are
  usage errors (exit 2).
Each command runs under a 60 s timeout: a hang is a failure.

Usage: budgets_cli.py ONNX_CONVERT   (from the project root). Prints
"budgets_cli: N passed, N failed".
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, report  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-convert"
LIMIT = 60

# ---- a minimal protobuf writer ------------------------------------------


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_int(field, n):
    return key(field, 0) + varint(n)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def f_float(field, x):
    return key(field, 5) + struct.pack("<f", x)


FLOAT, INT64, BOOL = 1, 7, 9


def tensor(name, dtype, dims, ints=None, floats=None):
    b = b"".join(f_int(1, d) for d in dims) + f_int(2, dtype)
    if name:
        b += f_bytes(8, name)
    for x in floats or []:
        b += f_float(4, x)
    for x in ints or []:
        b += f_int(7, x)
    return b


def attr_t(name, t):
    return f_bytes(1, name) + f_bytes(5, t) + f_int(20, 4)


def attr_g(name, g):
    return f_bytes(1, name) + f_bytes(6, g) + f_int(20, 5)


def node(op, ins, outs, name="", attrs=()):
    b = b"".join(f_bytes(1, i) for i in ins)
    b += b"".join(f_bytes(2, o) for o in outs)
    b += f_bytes(3, name or op.lower()) + f_bytes(4, op)
    return b + b"".join(f_bytes(5, a) for a in attrs)


def ttype(dtype, dims):
    """A tensor type; dims None = no shape, a str entry = a symbolic dim."""
    t = f_int(1, dtype)
    if dims is not None:
        shape = b""
        for d in dims:
            shape += f_bytes(1, f_bytes(2, d) if isinstance(d, str) else f_int(1, d))
        t += f_bytes(2, shape)
    return f_bytes(1, t)


def seqtype(elem):
    return f_bytes(4, f_bytes(1, elem))


def vinfo(name, typ):
    return f_bytes(1, name) + f_bytes(2, typ)


def graph(nodes, inputs, outputs, inits=(), name="g"):
    b = b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, name)
    b += b"".join(f_bytes(5, t) for t in inits)
    b += b"".join(f_bytes(11, v) for v in inputs)
    return b + b"".join(f_bytes(12, v) for v in outputs)


def model(g, opset=17):
    return (f_int(1, 8) + f_bytes(8, f_bytes(1, "") + f_int(2, opset))
            + f_bytes(2, "budgets_cli") + f_bytes(7, g))


# ---- the models -----------------------------------------------------------

BIG = 1 << 30


def m_constant_of_shape():
    return model(graph([node("ConstantOfShape", ["shape"], ["y"], "big")],
                       [], [vinfo("y", ttype(FLOAT, None))],
                       [tensor("shape", INT64, [1], ints=[BIG])]))


def m_expand():
    return model(graph([node("Expand", ["x", "shape"], ["y"], "big")],
                       [], [vinfo("y", ttype(FLOAT, None))],
                       [tensor("x", FLOAT, [1], floats=[1.0]),
                        tensor("shape", INT64, [1], ints=[BIG])]))


def m_tile():
    return model(graph([node("Tile", ["x", "reps"], ["y"], "big")],
                       [], [vinfo("y", ttype(FLOAT, None))],
                       [tensor("x", FLOAT, [1], floats=[1.0]),
                        tensor("reps", INT64, [1], ints=[BIG])]))


def m_constant_declared():
    t = tensor("", FLOAT, [1 << 31], floats=[1.0])
    return model(graph([node("Constant", [], ["y"], "c", [attr_t("value", t)])],
                       [], [vinfo("y", ttype(FLOAT, None))]))


def body_scan():
    """A Loop body whose scan output is a new 4 MiB tensor each step."""
    c = tensor("", INT64, [1], ints=[1 << 20])
    return graph([node("Identity", ["cond_in"], ["cond_out"], "keep"),
                  node("Constant", [], ["shape"], "shape", [attr_t("value", c)]),
                  node("ConstantOfShape", ["shape"], ["chunk"], "chunk")],
                 [vinfo("i", ttype(INT64, [])), vinfo("cond_in", ttype(BOOL, []))],
                 [vinfo("cond_out", ttype(BOOL, [])), vinfo("chunk", ttype(FLOAT, None))],
                 name="body")


def m_loop_scan():
    return model(graph([node("Loop", ["M", ""], ["scan"], "loop",
                             [attr_g("body", body_scan())])],
                       [], [vinfo("scan", ttype(FLOAT, None))],
                       [tensor("M", INT64, [], ints=[1000])]))


def m_nested_loop():
    """Loop of 2^20 iterations around a Loop of 2^20, carrying x through."""
    inner_body = graph([node("Identity", ["ci"], ["co"], "inner_keep"),
                        node("Identity", ["xi"], ["xo"], "inner_x")],
                       [vinfo("j", ttype(INT64, [])), vinfo("ci", ttype(BOOL, [])),
                        vinfo("xi", ttype(FLOAT, [1]))],
                       [vinfo("co", ttype(BOOL, [])), vinfo("xo", ttype(FLOAT, [1]))],
                       name="inner_body")
    outer_body = graph([node("Identity", ["c1"], ["c2"], "outer_keep"),
                        node("Loop", ["N", "", "x1"], ["x2"], "inner",
                             [attr_g("body", inner_body)])],
                       [vinfo("i", ttype(INT64, [])), vinfo("c1", ttype(BOOL, [])),
                        vinfo("x1", ttype(FLOAT, [1]))],
                       [vinfo("c2", ttype(BOOL, [])), vinfo("x2", ttype(FLOAT, [1]))],
                       name="outer_body")
    return model(graph([node("Loop", ["N", "", "x"], ["y"], "outer",
                             [attr_g("body", outer_body)])],
                       [vinfo("x", ttype(FLOAT, [1]))],
                       [vinfo("y", ttype(FLOAT, [1]))],
                       [tensor("N", INT64, [], ints=[1 << 20])]))


def m_growing_sequence():
    body = graph([node("Identity", ["c1"], ["c2"], "keep"),
                  node("SequenceInsert", ["s1", "i"], ["s2"], "grow")],
                 [vinfo("i", ttype(INT64, [])), vinfo("c1", ttype(BOOL, [])),
                  vinfo("s1", seqtype(ttype(INT64, [])))],
                 [vinfo("c2", ttype(BOOL, [])), vinfo("s2", seqtype(ttype(INT64, [])))],
                 name="body")
    return model(graph([node("SequenceEmpty", [], ["s0"], "empty",
                             [f_bytes(1, "dtype") + f_int(3, INT64) + f_int(20, 2)]),
                        node("Loop", ["N", "", "s0"], ["s"], "loop",
                             [attr_g("body", body)]),
                        node("SequenceLength", ["s"], ["y"], "len")],
                       [], [vinfo("y", ttype(INT64, []))],
                       [tensor("N", INT64, [], ints=[(1 << 63) - 1])]))


def m_big_input():
    return model(graph([node("Relu", ["x"], ["y"], "relu")],
                       [vinfo("x", ttype(FLOAT, [100000, 3, 32, 32]))],
                       [vinfo("y", ttype(FLOAT, [100000, 3, 32, 32]))]))


def m_small():
    return model(graph([node("Relu", ["x"], ["y"], "relu")],
                       [vinfo("x", ttype(FLOAT, [2, 3]))],
                       [vinfo("y", ttype(FLOAT, [2, 3]))]))


# ---- running ----------------------------------------------------------------


def run(*args):
    """(exit status, stdout, stderr, seconds); status None after LIMIT s."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([BIN] + list(args), capture_output=True, text=True,
                           timeout=LIMIT)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return None, "", "(timed out)", LIMIT


def one_line(err):
    return len(err.strip().splitlines()) == 1


def refused(label, args, *wants):
    rc, _, err, secs = run(*args)
    check(rc == 1, "%s: exit %s (want 1): %s" % (label, rc, err.strip()[:300]))
    check(one_line(err), "%s: one stderr line: %r" % (label, err[:300]))
    for w in wants:
        check(w in err, "%s: stderr names %r: %s" % (label, w, err.strip()[:300]))
    return secs


def tensor_file(path, dtype, dims, floats):
    with open(path, "wb") as f:
        f.write(tensor("x", dtype, dims, floats=floats))


def case_dir(tmp, name, data, inputs=()):
    """A backend-test case folder: model.onnx and test_data_set_0."""
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(data)
    for k, (dtype, dims, vals) in enumerate(inputs):
        tensor_file(os.path.join(d, "test_data_set_0", "input_%d.pb" % k),
                    dtype, dims, vals)
    return d


def main():
    tmp = tempfile.mkdtemp(prefix="oc_budgets_cli.")
    empty = os.path.join(tmp, "no_inputs")
    os.mkdir(empty)
    out = os.path.join(tmp, "out")

    # Memory: each allocation over the budget is refused before it is made.
    for name, build, op in [("constant_of_shape", m_constant_of_shape, "ConstantOfShape"),
                            ("expand", m_expand, "Expand"), ("tile", m_tile, "Tile"),
                            ("loop_scan", m_loop_scan, "Loop")]:
        d = case_dir(tmp, name, build())
        mp = os.path.join(d, "model.onnx")
        refused("run %s" % name, ["run", mp, "--inputs", empty, "-o", out,
                                  "--max-memory", "64M"],
                "'big'" if op != "Loop" else "'loop'", op,
                "memory budget of 64 MiB", "--max-memory")
        refused("test %s" % name, ["test", d, "--max-memory", "64M"],
                op, "memory budget of 64 MiB")
        refused("convert --verify %s" % name,
                ["convert", mp, "-o", os.path.join(tmp, name + "_out.onnx"),
                 "--verify", "--max-memory", "64m"], op, "memory budget of 64 MiB")
        check(not os.path.exists(os.path.join(tmp, name + "_out.onnx")),
              "convert --verify %s: no output left" % name)
    # The whole budget counts, not one tensor: 4 MiB a step, 64 MiB in all.
    d = os.path.join(tmp, "loop_scan", "model.onnx")
    rc, _, err, _ = run("run", d, "--inputs", empty, "-o", out, "--max-memory", "1G")
    check(rc == 1 and "memory budget of 1 GiB" in err,
          "loop_scan under 1G: exit %s: %s" % (rc, err.strip()[:300]))

    # Declared dims against the data present, before any allocation.
    d = case_dir(tmp, "constant_declared", m_constant_declared())
    secs = refused("run constant_declared",
                   ["run", os.path.join(d, "model.onnx"), "--inputs", empty, "-o", out],
                   "2147483648")
    check(secs < 20, "constant_declared refused in %.1f s" % secs)

    # Work: the nested Loop and the growing sequence end at their budget.
    nd = case_dir(tmp, "nested_loop", m_nested_loop(), [(FLOAT, [1], [1.0])])
    nm = os.path.join(nd, "model.onnx")
    ins = os.path.join(nd, "test_data_set_0")
    refused("run nested --max-steps", ["run", nm, "--inputs", ins, "-o", out,
                                       "--max-steps", "100000"],
            "work budget of 100000", "--max-steps", "Loop")
    secs = refused("run nested --timeout", ["run", nm, "--inputs", ins, "-o", out,
                                            "--timeout", "2"],
                   "time limit of 2 s", "--timeout")
    check(secs < 15, "run nested --timeout 2 ended in %.1f s" % secs)
    refused("test nested --timeout", ["test", nd, "--timeout", "1.5"],
            "time limit of 1.5 s")
    refused("convert --verify nested --max-steps",
            ["convert", nm, "-o", os.path.join(tmp, "nested_out.onnx"), "--verify",
             "--max-steps", "5000"], "work budget of 5000")
    refused("convert --verify nested --timeout",
            ["convert", nm, "-o", os.path.join(tmp, "nested_out.onnx"), "--verify",
             "--timeout", "2"], "time limit of 2 s")
    check(not os.path.exists(os.path.join(tmp, "nested_out.onnx")),
          "convert --verify nested: no output left")

    gd = case_dir(tmp, "growing_sequence", m_growing_sequence())
    gm = os.path.join(gd, "model.onnx")
    secs = refused("run growing sequence --timeout",
                   ["run", gm, "--inputs", empty, "-o", out, "--timeout", "2"],
                   "--timeout")
    check(secs < 15, "growing sequence --timeout 2 ended in %.1f s" % secs)
    # Without --timeout the copies a sequence op makes count as work, so
    # the quadratic growth ends at the budget instead of running for hours.
    secs = refused("run growing sequence --max-steps",
                   ["run", gm, "--inputs", empty, "-o", out, "--max-steps", "20000000"],
                   "work budget of 20000000", "SequenceInsert")
    check(secs < 30, "growing sequence --max-steps ended in %.1f s" % secs)
    refused("convert --verify growing sequence --timeout",
            ["convert", gm, "-o", os.path.join(tmp, "grow_out.onnx"), "--verify",
             "--timeout", "2"], "--timeout")

    # Batch: --timeout per model; the parent reports the late one.
    bdir = os.path.join(tmp, "batch")
    os.mkdir(bdir)
    with open(os.path.join(bdir, "a_nested.onnx"), "wb") as f:
        f.write(m_nested_loop())
    with open(os.path.join(bdir, "b_small.onnx"), "wb") as f:
        f.write(m_small())
    t0 = time.monotonic()
    rc, so, err, secs = run("convert", bdir, "--out-dir", os.path.join(tmp, "bout"),
                            "--verify", "--timeout", "2", "-j", "2", "--json")
    check(rc == 1, "batch --timeout: exit %s: %s" % (rc, err.strip()[:300]))
    check(secs < 20, "batch --timeout ended in %.1f s" % (time.monotonic() - t0))
    try:
        doc = json.loads(so)
        models = {os.path.basename(m["path"]): m for m in doc["models"]}
    except (ValueError, KeyError, TypeError) as e:
        models = {}
        check(False, "batch --timeout: JSON: %s: %s" % (e, so[:300]))
    a = models.get("a_nested.onnx", {})
    check(a.get("status") == "error", "batch: nested status: %s" % a)
    fail = a.get("error") or {}
    check(fail.get("stage") == "run" and fail.get("reason") == "timeout",
          "batch: nested stage run, reason timeout: %s" % a)
    check(models.get("b_small.onnx", {}).get("status") == "ok",
          "batch: the small model still converts: %s" % models.get("b_small.onnx"))
    check("a_nested.onnx" in err and "--timeout" in err,
          "batch: stderr names the model and --timeout: %s" % err.strip()[:300])

    # --verify of a huge declared input: refused quickly, naming the way out.
    bm = os.path.join(tmp, "big_input.onnx")
    with open(bm, "wb") as f:
        f.write(m_big_input())
    secs = refused("convert --verify big input",
                   ["convert", bm, "-o", os.path.join(tmp, "big_out.onnx"), "--verify"],
                   "'x'", "[100000,3,32,32]", "--input-shape", "--max-memory")
    check(secs < 5, "big input refused in %.1f s" % secs)
    # An open dim gets 2, then 1; past that --input-shape is the way out.
    om = os.path.join(tmp, "open_input.onnx")
    with open(om, "wb") as f:
        f.write(model(graph([node("Relu", ["x"], ["y"], "relu")],
                            [vinfo("x", ttype(FLOAT, ["N", 40000, 1000]))],
                            [vinfo("y", ttype(FLOAT, ["N", 40000, 1000]))])))
    refused("convert --verify open input", ["convert", om, "-o",
            os.path.join(tmp, "open_out.onnx"), "--verify", "--max-memory", "256M"],
            "'x'", "[1,40000,1000]", "--input-shape x=DIMS")
    rc, so, err, _ = run("convert", om, "-o", os.path.join(tmp, "open_out.onnx"),
                         "--verify", "--max-memory", "1G")
    check(rc == 0 and "verified" in so, "convert --verify open input in 1G (N=1): "
          "exit %s: %s" % (rc, err.strip()[:300]))

    # What fits still runs; bad values are usage errors.
    sd = case_dir(tmp, "small", m_small(), [(FLOAT, [2, 3], [-1, 2, -3, 4, -5, 6])])
    sm = os.path.join(sd, "model.onnx")
    rc, _, err, _ = run("run", sm, "--inputs", os.path.join(sd, "test_data_set_0"),
                        "-o", out, "--max-memory", "1M", "--max-steps", "1",
                        "--timeout", "30")
    check(rc == 0, "small model under small budgets: exit %s: %s" % (rc, err.strip()[:300]))
    rc, _, err, _ = run("run", sm, "--inputs", os.path.join(sd, "test_data_set_0"),
                        "-o", out, "--max-memory", "100")
    check(rc == 1 and "memory budget of 100 bytes" in err,
          "small model over 100 bytes: exit %s: %s" % (rc, err.strip()[:300]))
    for cmd in (["run", sm, "--inputs", empty, "-o", out], ["test", sd],
                ["convert", sm, "-o", os.path.join(tmp, "x.onnx"), "--verify"]):
        for bad in (["--max-memory", "12Q"], ["--max-memory", "0"],
                    ["--max-memory", "-5"], ["--max-steps", "x"],
                    ["--max-steps", "0"], ["--timeout", "-1"], ["--timeout", "nan"]):
            rc, _, _, _ = run(*(cmd + bad))
            check(rc == 2, "%s %s: exit %s (want 2)" % (cmd[0], " ".join(bad), rc))
    subprocess.run(["rm", "-rf", tmp])
    return report("budgets_cli")


if __name__ == "__main__":
    sys.exit(main())
