#!/usr/bin/env python3
"""The Python package against the command line (issue 22, Done-when 1).

For every model of ../shared/models and a sample of about 60 backend node
tests (the first case of every k-th op family in name order, k = families
// 60: every third of ../shared's 195, so the sample spreads over the op
families and stays the same from run to run):
- convert(bytes, T), convert(ModelProto, T) and convert(path, T) give the
  bytes `onnx-convert convert IN -o OUT --opset T` writes, for T in 7, 11,
  13, 17, the newest, and without an opset (a round trip) (a node test:
  7, the newest, none and one of 11, 13, 17 in turn); also with
  optimize=True (`--optimize`) and with ir_version (`--ir-version`);
  optimize(model) the bytes of `optimize`; a shared model also with
  passes, infer_shapes and keep_metadata; a usage error of the CLI (exit 2:
  --ir-version 6 with opset 13) is a UsageError with its message;
- report=True's dict equals the `--json` object but "path" ("memory" for
  bytes and ModelProto, the path for a path) and "output" (null: nothing
  written); a refusal raises ConversionError (InvalidModelError when the
  CLI says "invalid") whose stage, reason, node, op, domain and step equal
  the CLI's "error" object and whose str() is its message;
- check(model) equals `check --all --json`'s errors (rule, message): []
  for every model here; info(model) equals `info --json`;
  targets(model) equals `info --targets --json` (per opset None, or a
  Diagnostic with the error object's fields);
- convert_file(src, dst) writes the CLI's bytes, and for a model with its
  weights in a side file writes the same side file the CLI writes;
- a model with an undefined input raises InvalidModelError (as the CLI's
  "invalid"), and check() lists the CLI's findings for it; bad arguments
  (opset="x", an unknown pass, an unknown convert_file option) raise
  UsageError and write nothing;
- verify=True on a model in a test-case folder reports inputs "case"
  (given a path) as the CLI does, and "random" for bytes, as the CLI does
  for standard input.
Skips (counted) the shared models when ../shared/models is absent; takes
the node tests from $ONNX_BACKEND_DATA, ../shared/testdata/onnx-backend or
Debian's libonnx-testdata (said on a line), as tests/run.sh finds them.

Usage: python_api.py BUILD_DIR [quick]   (from the project root, with
PYTHONPATH=python and ONNXCONVERT_LIBRARY=BUILD_DIR/libonnxconvert.so.0;
quick: targets() on 3 small models only). Prints
"python_api: N passed, N failed[, N skipped]".
"""
import os
import concurrent.futures
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, report, skip  # noqa: E402

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError as e:   # Debian's python3-onnx and python3-numpy are what it needs
    print("python_api: skipped (%s: /usr/bin/python3 with python3-onnx and python3-numpy)" % e)
    sys.exit(0)

import onnxconvert as oc  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
QUICK = "quick" in sys.argv[2:]
CLI = os.path.join(BUILD, "onnx-convert")
MODELS = "../shared/models"
NEWEST = oc.newest_opset()
TARGETS = [7, 11, 13, 17, NEWEST, None]
# the CLI runs of one model go two at a time (make check has 2 cores)
POOL = concurrent.futures.ThreadPoolExecutor(2)


def node_dir():
    for d in (os.environ.get("ONNX_BACKEND_DATA"), "../shared/testdata/onnx-backend",
              "/usr/share/libonnx-testdata/data"):
        if d and os.path.isdir(os.path.join(d, "node")):
            return os.path.join(d, "node")
    return None


def node_sample(root):
    """The first case of every k-th op family (the word after test_), ~60."""
    first = {}
    for c in sorted(os.listdir(root)):
        fam = c.split("_")[1] if c.count("_") else c
        if os.path.isfile(os.path.join(root, c, "model.onnx")):
            first.setdefault(fam, c)
    fams = sorted(first)
    step = max(1, len(fams) // 60)
    return [os.path.join(root, first[f], "model.onnx") for f in fams[::step]][:64]


def shared_models():
    if not os.path.isdir(MODELS):
        skip("python_api: %s not found: node tests only" % MODELS)
        return []
    return [os.path.join(MODELS, d, "model.onnx") for d in sorted(os.listdir(MODELS))
            if os.path.isfile(os.path.join(MODELS, d, "model.onnx"))]


def cli(*args, stdin=None):
    """(exit status, the --json object or None, stderr). The command line
    verifies by default and the library when asked (verify=True): a
    convert or optimize without --verify gets --no-verify, the library's
    default."""
    args = [str(a) for a in args]
    if args and args[0] in ("convert", "optimize") and "--verify" not in args:
        args.append("--no-verify")
    p = subprocess.run([CLI] + args + ["--json"], capture_output=True,
                       stdin=stdin)
    try:
        obj = json.loads(p.stdout)
    except ValueError:
        obj = None
    return p.returncode, obj, p.stderr.decode(errors="replace")


def cli_bytes(*args):
    """The CLI's exit status, standard output as bytes, and standard error."""
    p = subprocess.run([CLI] + [str(a) for a in args], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def first_diff(a, b):
    """The first key whose values differ (for a failure line)."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return "%r != %r" % (a, b)
    for k in sorted(set(a) | set(b)):
        if a.get(k, "<absent>") != b.get(k, "<absent>"):
            return "%s: %r != %r" % (k, a.get(k, "<absent>"), b.get(k, "<absent>"))
    return "equal"


def expected_report(cli_rep, label):
    e = dict(cli_rep)
    e["path"] = label
    e["output"] = None
    return e


def relabel(message, path, label):
    """message with its leading "PATH: " (a model's name) as "LABEL: "."""
    return label + message[len(path):] if message.startswith(path + ": ") else message


def same_error(what, exc, cli_rep, label):
    """The exception carries the CLI's error object; where the message
    names the file (the checker's findings), a model given in memory is
    named "memory", as the report's "path" is."""
    err = cli_rep["error"]
    want = oc.InvalidModelError if cli_rep["status"] == "invalid" or \
        err["stage"] in ("load", "check") else oc.ConversionError
    check(type(exc) is want, "%s: raised %s, the CLI's status is %s (%s)"
          % (what, type(exc).__name__, cli_rep["status"], exc))
    step = (err["step"]["from"], err["step"]["to"]) if err.get("step") else None
    got = (exc.stage, exc.reason, exc.node, exc.op, exc.domain, exc.step, str(exc))
    exp = (err["stage"], err["reason"], err["node"], err["op"], err["domain"], step,
           relabel(err["message"], cli_rep["path"], label))
    check(got == exp, "%s: error %r, the CLI's %r" % (what, got, exp))


def cli_job(args, out=None):
    """One CLI run: (exit status, JSON, stderr, bytes written or None)."""
    if out and os.path.exists(out):
        os.unlink(out)
    rc, rep, err = cli(*args)
    data = read(out) if out and os.path.exists(out) else None
    return rc, rep, err, data


def cli_jobs(jobs):
    """The CLI runs of jobs [(args, out)], two processes at a time."""
    return list(POOL.map(lambda j: cli_job(*j), jobs))


def usage_line(err):
    """The CLI's usage message without the program's name."""
    line = err.splitlines()[0] if err else ""
    return line.split(": ", 1)[1] if ": " in line else line


def compare(what, call, inputs, res, compare_bytes=True):
    """Runs `call(arg)` for each (label, arg) of inputs against the CLI's
    run `res` (cli_job); a result is bytes, or a ModelProto serialized.
    A usage error of the CLI (exit 2) is a UsageError with its message."""
    rc, rep, err, want = res
    if rc == 2:
        for label, arg in inputs:
            w = "%s [%s]" % (what, "path" if label != "memory" else type(arg).__name__)
            try:
                call(arg)
                check(False, "%s: returned; the CLI's usage error: %s" % (w, err.strip()))
            except oc.UsageError as e:
                got = str(e).split(": ", 1)[1] if ": " in str(e) else str(e)
                check(got == usage_line(err), "%s: %r, the CLI's %r"
                      % (w, str(e), err.splitlines()[0]))
            except oc.OnnxConvertError as e:
                check(False, "%s: raised %s (%s), the CLI's usage error"
                      % (w, type(e).__name__, e))
        return rc
    if rep is None:
        check(False, "%s: the CLI printed no JSON (exit %d): %s" % (what, rc, err.strip()))
        return None
    check((rc == 0) == (want is not None) and rc in (0, 1),
          "%s: CLI exit %d, output written: %s" % (what, rc, want is not None))
    for label, arg in inputs:
        w = "%s [%s]" % (what, "path" if label != "memory" else type(arg).__name__)
        try:
            res, lrep = call(arg)
        except oc.OnnxConvertError as e:
            if rc == 0:
                check(False, "%s: raised %s: %s; the CLI converted" % (w, type(e).__name__, e))
            else:
                same_error(w, e, rep, label)
            continue
        if rc != 0:
            check(False, "%s: returned, the CLI refused: %s" % (w, rep["error"]["message"]))
            continue
        data = res if isinstance(res, bytes) else res.SerializeToString()
        if compare_bytes:
            check(data == want, "%s: %d bytes, the CLI wrote %d, %s" %
                  (w, len(data), len(want), "equal" if data == want else "different"))
        exp = expected_report(rep, label)
        check(lrep == exp, "%s: report differs: %s" % (w, first_diff(lrep, exp)))
    return rc


def kinds(path, data, proto):
    return [("memory", data), ("memory", proto), (path, path)]


def convert_all(path, tmp, i):
    """convert() of bytes, ModelProto and path against the CLI, several
    targets, --optimize and --ir-version; optimize(); convert_file().
    The shared models take every target, node test i four of them (three
    fixed, one of 11, 13, 17 in turn). Returns how many CLI runs refused."""
    data = read(path)
    proto = onnx.ModelProto()
    proto.ParseFromString(data)
    name = os.path.basename(os.path.dirname(path))
    shared = path.startswith(MODELS)
    targets = TARGETS if shared else [7, NEWEST, None, (11, 13, 17)[i % 3]]
    irs = (oc.newest_ir_version(), 6) if shared else (oc.newest_ir_version(),)
    jobs, calls = [], []
    for t in targets:
        jobs.append(["convert", path, "-o", None] + (["--opset", t] if t else []))
        calls.append(("convert %s" % t, lambda a, t=t: oc.convert(a, t, report=True), 3))
    jobs.append(["convert", path, "-o", None, "--opset", 13, "--optimize"])
    calls.append(("convert 13 --optimize",
                  lambda a: oc.convert(a, 13, optimize=True, report=True), 2))
    for ir in irs:
        jobs.append(["convert", path, "-o", None, "--opset", 13, "--ir-version", ir])
        calls.append(("convert 13 --ir-version %d" % ir,
                      lambda a, ir=ir: oc.convert(a, 13, ir_version=ir, report=True), 2))
    jobs.append(["optimize", path, "-o", None])
    calls.append(("optimize", lambda a: oc.optimize(a, report=True), 3))
    if shared:   # more of the command's options, as the keywords say them
        jobs.append(["optimize", path, "-o", None, "--passes", "fold,cse,dead_code",
                     "--infer-shapes"])
        calls.append(("optimize --passes fold,cse,dead_code --infer-shapes",
                      lambda a: oc.optimize(a, ["fold", "cse", "dead_code"], infer_shapes=True,
                                            report=True), 2))
        jobs.append(["convert", path, "-o", None, "--opset", 9, "--keep-metadata",
                     "--optimize", "--passes", "identity,noop"])
        calls.append(("convert 9 --keep-metadata --passes identity,noop",
                      lambda a: oc.convert(a, 9, keep_metadata=True, optimize=True,
                                           passes="identity,noop", report=True), 2))
    outs = [os.path.join(tmp, "out%d.onnx" % k) for k in range(len(jobs))]
    results = cli_jobs([([o if a is None else a for a in j], o) for j, o in zip(jobs, outs)])
    refused = 0
    for (what, call, n), res in zip(calls, results):
        ks = kinds(path, data, proto)
        rc = compare("%s %s" % (name, what), call, ks if n == 3 else ks[::2], res)
        refused += rc == 1
    # convert_file against the CLI's run to the newest opset (the second job)
    convert_file_vs_cli(name, path, tmp, results[targets.index(NEWEST)])
    return refused


def convert_file_vs_cli(name, path, tmp, res):
    rc, rep, _, want = res
    dst = os.path.join(tmp, "file.onnx")
    if os.path.exists(dst):
        os.unlink(dst)
    try:
        lrep = oc.convert_file(path, dst, NEWEST)
    except oc.OnnxConvertError as e:
        check(rc == 1, "%s convert_file: raised %s (CLI exit %d)" % (name, e, rc))
        if rc == 1:
            same_error(name + " convert_file", e, rep, path)
        check(not os.path.exists(dst), "%s convert_file: wrote after refusing" % name)
        return
    check(rc == 0 and read(dst) == want, "%s convert_file: bytes differ (CLI exit %d)"
          % (name, rc))
    exp = expected_report(rep, path)
    check(lrep == exp, "%s convert_file: report differs: %s" % (name, first_diff(lrep, exp)))


def reports_vs_cli(path, with_targets):
    """check, info (and targets) of bytes and path against the CLI."""
    name = os.path.basename(os.path.dirname(path))
    data = read(path)
    jobs = [["check", path, "--all"], ["info", path]]
    if with_targets:
        jobs.append(["info", path, "--targets"])
    res = cli_jobs([(j, None) for j in jobs])
    rc, rep = res[0][:2]
    want = [(e["rule"], e["message"]) for e in rep["errors"]]
    for label, arg in ((path, path), ("memory", data)):
        got = [(d.rule, d.message) for d in oc.check(arg)]
        check(got == want, "%s check [%s]: %r, the CLI's %r" % (name, label, got, want))
    check(want == [] and rc == 0, "%s: the CLI's check finds %r" % (name, want))
    rc, rep = res[1][:2]
    for label, arg in ((path, path), ("memory", data)):
        got = oc.info(arg)
        exp = dict(rep, path=label)
        check(got == exp, "%s info [%s]: %s" % (name, label, first_diff(got, exp)))
    if with_targets:
        targets_vs_cli(name, data, res[2][1])


def targets_vs_cli(name, data, rep):
    for domain, rows in rep["targets"].items():
        if rows is None:
            continue
        exp = {}
        for r in rows:
            e = r["error"]
            exp[r["opset"]] = None if r["status"] == "ok" else oc.Diagnostic(
                stage=e["stage"], reason=e["reason"], node=e["node"], op=e["op"],
                domain=e["domain"], step=(e["step"]["from"], e["step"]["to"])
                if e["step"] else None, message=e["message"])
        got = oc.targets(data, domain)
        check(got == exp and len(exp) >= NEWEST,
              "%s targets %s: %s" % (name, domain, first_diff(got, exp)))


def external_data(src_model, tmp):
    """convert_file keeps weights in a side file, as the CLI does."""
    d = os.path.join(tmp, "ext")
    for sub in ("src", "lib", "cli"):
        os.makedirs(os.path.join(d, sub))
    src = os.path.join(d, "src", "m.onnx")
    onnx.save_model(onnx.load(src_model), src, save_as_external_data=True,
                    all_tensors_to_one_file=True, location="m.weights", size_threshold=256)
    side = os.path.getsize(os.path.join(d, "src", "m.weights"))
    check(side > os.path.getsize(src), "external: the side file holds the weights")
    lib_out, cli_out = os.path.join(d, "lib", "out.onnx"), os.path.join(d, "cli", "out.onnx")
    lrep = oc.convert_file(src, lib_out, 11)
    rc, rep, err = cli("convert", src, "-o", cli_out, "--opset", 11)
    check(rc == 0, "external: CLI exit %d: %s" % (rc, err))
    check(sorted(os.listdir(os.path.join(d, "lib"))) == ["m.weights", "out.onnx"],
          "external: convert_file wrote %r" % os.listdir(os.path.join(d, "lib")))
    for f in ("out.onnx", "m.weights"):
        a, b = os.path.join(d, "lib", f), os.path.join(d, "cli", f)
        check(os.path.exists(a) and os.path.exists(b) and read(a) == read(b),
              "external: %s differs from the CLI's" % f)
    check(os.path.getsize(os.path.join(d, "lib", "out.onnx")) < side,
          "external: the weights stayed out of the model file")
    check(lrep == expected_report(rep, src), "external: report differs: %s"
          % first_diff(lrep, expected_report(rep, src)))
    # in memory, the side file cannot be found: as the CLI's standard input
    with open(src, "rb") as f:
        rc, rep, err = cli("convert", "-", "-o", cli_out, "--opset", 11, stdin=f)
    check(rc == 1 and rep["error"]["stage"] == "load", "external: the CLI read it from "
          "standard input (exit %d)" % rc)
    try:
        oc.convert(read(src), 11)
        check(False, "external: convert(bytes) found the side file")
    except oc.OnnxConvertError as e:
        same_error("external [bytes]", e, rep, "memory")
    # given by path, the ModelProto holds the weights (as onnx.load gives
    # it): the bytes the CLI writes to standard output
    rc, out, err = cli_bytes("convert", src, "-o", "-", "--opset", 11)
    got = oc.convert(src, 11)
    check(rc == 0 and got.SerializeToString() == out,
          "external: convert(path) is not the CLI's -o - (%d vs %d bytes)"
          % (len(got.SerializeToString()), len(out)))
    check(all(t.data_location != TensorProto.EXTERNAL for t in got.graph.initializer),
          "external: convert(path) left weights in the side file")
    # the result loads with its side file (onnx's own loader)
    m = onnx.load(lib_out)
    check(len(m.graph.initializer) > 0 and all(
        len(t.raw_data) > 0 or t.data_location != TensorProto.EXTERNAL
        for t in m.graph.initializer), "external: onnx.load reads the side file")


def invalid_model(tmp):
    """An undefined input: InvalidModelError, check() the CLI's findings."""
    # two findings, so that check() is seen to list every one (check --all)
    g = helper.make_graph([helper.make_node("Relu", ["nope"], ["y"], name="r"),
                           helper.make_node("Relu", ["nope2"], ["z"], name="r2")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(tmp, "invalid.onnx")
    onnx.save(m, path)
    out = os.path.join(tmp, "invalid_out.onnx")
    res = cli_job(["convert", path, "-o", out, "--opset", 11], out)
    rc = compare("invalid convert", lambda a: oc.convert(a, 11, report=True),
                 kinds(path, read(path), m), res)
    check(rc == 1 and res[1]["status"] == "invalid", "invalid: the CLI refused it (exit %r)"
          % rc)
    res = cli_job(["optimize", path, "-o", out], out)
    compare("invalid optimize", lambda a: oc.optimize(a, report=True),
            kinds(path, read(path), m), res)
    rc, rep, _ = cli("check", path, "--all")
    check(rc == 1 and len(rep["errors"]) == 2, "invalid: the CLI's check --all: %r" % rep)
    for label, arg in ((path, path), ("memory", m)):
        want = [(e["rule"], relabel(e["message"], path, label)) for e in rep["errors"]]
        got = [(d.rule, d.message) for d in oc.check(arg)]
        check(got == want, "invalid check [%s]: %r, the CLI's %r" % (label, got, want))
    got = oc.check(m)
    check(all(d.stage == "check" and d.severity == "error" and d.reason == d.rule
              for d in got), "invalid check: Diagnostic fields %r" % got)


def usage_errors(path, tmp):
    data = read(path)
    dst = os.path.join(tmp, "usage.onnx")
    cases = [("opset='x'", lambda: oc.convert(data, "x")),
             ("opset=True", lambda: oc.convert(data, True)),
             ("unknown pass", lambda: oc.optimize(data, ["no_such_pass"])),
             ("unknown pass in convert", lambda: oc.convert(data, 13, passes="no_such_pass")),
             ("convert_file bogus option", lambda: oc.convert_file(path, dst, 13, bogus=1)),
             ("convert_file unknown pass",
              lambda: oc.convert_file(path, dst, 13, optimize=True, passes="nope")),
             ("not a model", lambda: oc.convert(12345, 13)),
             ("targets of a domain not imported", lambda: oc.targets(data, "ai.onnx.ml"))]
    for what, fn in cases:
        try:
            fn()
            check(False, "usage %s: no error" % what)
        except oc.UsageError as e:
            check(isinstance(e, ValueError) and str(e), "usage %s: %r" % (what, e))
        except Exception as e:  # noqa: BLE001 (the wrong kind is the failure)
            check(False, "usage %s: raised %s: %s" % (what, type(e).__name__, e))
        check(not os.path.exists(dst), "usage %s: wrote %s" % (what, dst))
    # the CLI refuses the same unknown pass (exit 2 as usage, or 1 at optimize)
    p = subprocess.run([CLI, "optimize", path, "-o", dst, "--passes", "no_such_pass"],
                       capture_output=True)
    check(p.returncode in (1, 2) and not os.path.exists(dst),
          "usage: the CLI took an unknown pass (exit %d)" % p.returncode)


def verify_inputs(path, tmp):
    """--verify takes the test case's inputs for a file in a case folder."""
    out = os.path.join(tmp, "verify.onnx")
    rc, rep, err = cli("convert", path, "-o", out, "--opset", 13, "--verify")
    check(rc == 0 and rep["verification"]["inputs"] == "case",
          "verify: the CLI's inputs %r (exit %d)" % (rep and rep["verification"], rc))
    _, lrep = oc.convert(path, 13, verify=True, report=True)
    check(lrep == expected_report(rep, path), "verify [path]: %s"
          % first_diff(lrep, expected_report(rep, path)))
    with open(path, "rb") as f:
        rc, rep, err = cli("convert", "-", "-o", out, "--opset", 13, "--verify", stdin=f)
    _, lrep = oc.convert(read(path), 13, verify=True, report=True)
    check(rep["verification"]["inputs"] == "random" and
          lrep == expected_report(rep, "memory"), "verify [bytes]: %s"
          % first_diff(lrep, expected_report(rep, "memory")))


def main():
    t0 = time.time()
    nodes = node_dir()
    if nodes is None:
        print("python_api: skipped (no backend node tests)")
        return 0
    if "libonnx-testdata" in nodes:
        print("node tests from Debian's libonnx-testdata (%s)" % nodes)
    shared = shared_models()
    sample = node_sample(nodes)
    check(len(sample) >= 50, "the node sample has %d cases" % len(sample))
    tmp = tempfile.mkdtemp(prefix="python_api.")
    # an exception inside __del__ is only printed: count it as a failure
    unraisable = []
    sys.unraisablehook = unraisable.append
    try:
        refused = 0
        for i, path in enumerate(shared + sample):
            refused += convert_all(path, tmp, i)
        # the sample must exercise refusals, or the error comparison is idle
        check(refused >= 5, "only %d refused conversions in the sample" % refused)
        small = (sorted(shared, key=os.path.getsize)[:3] or sample[:3]) if QUICK \
            else shared + sample
        for path in shared + sample:
            reports_vs_cli(path, path in small)
        if shared:
            external_data(shared[0] if not QUICK else sorted(shared, key=os.path.getsize)[0],
                          tmp)
            verify_inputs(sorted(shared, key=os.path.getsize)[0], tmp)
        else:
            skip("python_api: external data and verify need ../shared/models")
        invalid_model(tmp)
        usage_errors(sample[0], tmp)
        gc.collect()
        check(not unraisable, "the package printed %d ignored exception(s), the first in %r: %s"
              % (len(unraisable), unraisable and unraisable[0].object,
                 unraisable and unraisable[0].exc_value))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("python_api: %d models, %d node tests, %d refusals compared, %.1f s"
          % (len(shared), len(sample), refused, time.time() - t0))
    return report("python_api")


if __name__ == "__main__":
    sys.exit(main())
