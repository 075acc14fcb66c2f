#!/usr/bin/env python3
"""Batch mode and --json against single runs (issue 8).

Builds a folder of models (the PyTorch exports of ../shared/models when
present, a sample of the backend node tests with their test_data_set_0, a corrupt
file), converts it with `convert --opset 13 --verify -j 2 --json
--out-dir`, and checks that:
- the JSON document parses (Python's own parser, not ours), has one object
  per model found, in a stable order, and a summary that counts them;
- each object equals what `convert --json` says for that model alone
  (except "output"), the exit status of the single run matches its status,
  and the written files are byte for byte the single run's;
- the corrupt file is reported (status error, stage load, a stderr line
  naming it, no output) while every other model is still converted;
- converted models pass `check` and import opset 13;
- the text table's totals line agrees with the JSON summary;
- `check` over the same folder agrees with single checks;
- a progress line shows on a terminal and only there;
- single reports state what `info --json` of the input and the output
  says (opsets, IR versions, node counts), adapter counts add up, passes
  come in pipeline order, a refusal names op and step, and a broken file
  gives status error at stage load for convert, optimize, check and info;
- usage errors: two inputs written to one path, --external-data with
  --out-dir, -j without --out-dir: exit 2, nothing written.

Usage: batch_cli.py ONNX_CONVERT   (from the project root). Prints
"batch_cli: N passed, N failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

def backend_dir():
    """Where the backend tests are, in the order tests/corpus.h looks:
    $ONNX_BACKEND_DATA, ../shared, Debian's libonnx-testdata."""
    env = os.environ.get("ONNX_BACKEND_DATA")
    if env:
        return env
    for d in ("../shared/testdata/onnx-backend", "/usr/share/libonnx-testdata/data"):
        if os.path.isdir(os.path.join(d, "node")):
            return d
    return "../shared/testdata/onnx-backend"


NODE = os.path.join(backend_dir(), "node")
MODELS = "../shared/models"
OPSET = "13"

from clitest import check, report, run, skip


def build_folder(root):
    """The batch's input folder; returns the number of .onnx files."""
    cases = sorted(d for d in os.listdir(NODE) if d.startswith("test_"))
    # about 72 of them, whichever data set (1802 cases in ../shared, 932 in
    # Debian's ONNX 1.12 copy)
    picked = cases[::max(1, len(cases) // 72)] + ["test_erf", "test_gelu_default_1", "test_cast_FLOAT_to_STRING"]
    os.makedirs(os.path.join(root, "node"))
    for c in dict.fromkeys(picked):
        src = os.path.join(NODE, c)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(root, "node", c))
    if os.path.isdir(MODELS):   # the PyTorch exports, when beside the project
        shutil.copytree(MODELS, os.path.join(root, "models"))
    else:
        skip("batch_cli: %s not found: the batch has node tests only" % MODELS)
    with open(os.path.join(root, "broken.onnx"), "wb") as f:
        f.write(b"\x08\x07\x12\xff\xff\xff\xff\x0fnot a model")
    # not a model by name: must be ignored by the folder walk
    with open(os.path.join(root, "node", "README.txt"), "w") as f:
        f.write("ignored\n")
    n = 0
    for _, _, files in os.walk(root):
        n += sum(1 for x in files if x.endswith(".onnx"))
    return n


def without(obj, *keys):
    return {k: v for k, v in obj.items() if k not in keys}


def same_bytes(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def check_batch_report(bin_, root, out, n_models):
    p = run(bin_, "convert", "--opset", OPSET, "--verify", "-j", "2", "--json",
            "--out-dir", out, root)
    check(p.returncode == 1, "batch exit status %d, want 1 (one corrupt file)" % p.returncode)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        check(False, "batch JSON does not parse: %s" % e)
        return None
    check(True, "batch JSON parses")
    models = doc.get("models", [])
    check(doc.get("schema") == 1 and doc.get("command") == "convert", "batch header")
    check(len(models) == n_models, "%d model objects, %d .onnx files" % (len(models), n_models))
    paths = [m["path"] for m in models]
    check(paths == sorted(paths), "models in sorted path order")
    s = doc.get("summary", {})
    for st in ("ok", "refused", "invalid", "error"):
        check(s.get(st) == sum(1 for m in models if m["status"] == st), "summary count " + st)
    check(s.get("models") == len(models), "summary total")
    check(s.get("verified") == sum(1 for m in models
                                   if (m.get("verification") or {}).get("result") == "equal"),
          "summary verified")
    check(s.get("ok", 0) >= n_models // 2, "most models convert (%s)" % s)
    check(s.get("refused", 0) >= 1, "some model is refused (the sample includes test_erf)")
    totals = [l for l in p.stderr.splitlines() if l.startswith("%d models:" % n_models)]
    check(len(totals) == 1 and ("%d ok" % s.get("ok", -1)) in totals[0],
          "table totals on stderr: %r" % totals)
    return doc, p.stderr


def check_broken(doc, stderr, root, out):
    broken = [m for m in doc["models"] if m["path"].endswith("broken.onnx")]
    check(len(broken) == 1, "the corrupt file is in the report")
    if broken:
        b = broken[0]
        check(b["status"] == "error" and b["error"]["stage"] == "load",
              "corrupt file: status %s" % b["status"])
        check(b["output"] is None and not os.path.exists(os.path.join(out, "broken.onnx")),
              "corrupt file: nothing written")
        check(any(l.startswith("onnx-convert: " + b["path"] + ": ") for l in stderr.splitlines()),
              "corrupt file: one stderr line names it")


def check_against_single(bin_, doc, root, out, single):
    """Every batch object against the single run of the same model."""
    for m in doc["models"]:
        rel = os.path.relpath(m["path"], root)
        want_out = os.path.join(out, rel)
        one_out = os.path.join(single, rel)
        os.makedirs(os.path.dirname(one_out), exist_ok=True)
        p = run(bin_, "convert", "--opset", OPSET, "--verify", "--json", m["path"], "-o", one_out)
        try:
            one = json.loads(p.stdout)
        except ValueError:
            check(False, "%s: single --json does not parse" % rel)
            continue
        check(without(one, "output") == without(m, "output"),
              "%s: batch object differs from the single run's:\n%s\n%s" % (rel, m, one))
        check((p.returncode == 0) == (m["status"] == "ok"),
              "%s: single exit %d, batch status %s" % (rel, p.returncode, m["status"]))
        if m["status"] != "ok":
            check(not os.path.exists(want_out), "%s: failed, yet written" % rel)
            if m["status"] == "refused":
                e = m["error"]
                check(e["stage"] == "convert" and e["reason"] and e["op"] and e["step"],
                      "%s: refusal names reason, op and step: %s" % (rel, e))
            continue
        check(m["output"] == want_out, "%s: output path %s" % (rel, m["output"]))
        check(os.path.exists(want_out) and same_bytes(want_out, one_out),
              "%s: batch output differs from the single run's" % rel)
        check(m["opset"] is None or m["opset"]["to"] == int(OPSET),
              "%s: opset.to %s" % (rel, m["opset"]))
        c = run(bin_, "check", want_out)
        check(c.returncode == 0, "%s: converted model fails check: %s" % (rel, c.stderr))


def check_check_batch(bin_, root):
    p = run(bin_, "check", "--json", "-j", "2", root)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        check(False, "check batch JSON does not parse")
        return
    bad = 0
    for m in doc["models"]:
        one = json.loads(run(bin_, "check", "--json", m["path"]).stdout)
        bad += one != m
    check(bad == 0, "check: %d batch objects differ from single checks" % bad)
    check(p.returncode == 1, "check batch exit %d (the corrupt file)" % p.returncode)


def check_progress(bin_):
    """A progress line on a terminal (script(1) gives one), none otherwise."""
    if not shutil.which("script"):
        return
    cmd = "%s check -j 2 testdata" % bin_
    p = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True)
    n = len([x for x in os.listdir("testdata") if x.endswith(".onnx")])
    check(("\r\033[K[%d/%d] 0 failed" % (n, n)).encode() in p.stdout,
          "no progress line on a terminal: %r" % p.stdout[:200])
    p = run(bin_, "check", "-j", "2", "testdata")
    check("\033[K" not in p.stderr + p.stdout, "progress line written to a pipe")


def info(bin_, path):
    return json.loads(run(bin_, "info", "--json", path).stdout)


def check_single_reports(bin_, tmp):
    """The reports' facts against `info --json` and --list-passes."""
    src = "testdata/tiny_transformer.onnx"
    out = os.path.join(tmp, "t20.onnx")
    p = run(bin_, "convert", src, "-o", out, "--opset", "20", "--optimize", "--json")
    r = json.loads(p.stdout)
    a, b = info(bin_, src), info(bin_, out)
    check(p.returncode == 0 and r["status"] == "ok" and r["error"] is None, "convert --json: ok")
    check(r["opset"] == {"from": a["opset_import"][0]["version"],
                         "to": b["opset_import"][0]["version"]}, "opset from/to: %s" % r["opset"])
    check(r["ir_version"] == {"from": a["ir_version"], "to": b["ir_version"]},
          "ir_version from/to: %s" % r["ir_version"])
    check(r["nodes"] == {"before": a["nodes_total"], "after": b["nodes_total"]},
          "nodes before/after: %s" % r["nodes"])
    conv = r["conversion"]
    check(conv["adapted"] == sum(x["nodes"] for x in conv["adapters"]) ==
          sum(conv["by_kind"].values()), "adapted counts agree: %s" % conv)
    names = [l.split()[0] for l in run(bin_, "optimize", "--list-passes").stdout.splitlines()]
    opt = r["optimization"]
    check([x["name"] for x in opt["passes"]] == names, "passes in pipeline order")
    fused = {k: v for k, v in b["ops_total"].get("ai.onnx", {}).items()}
    check(fused.get("Gelu", 0) >= 1 and
          any(x["name"] == "fuse_gelu" and x["changes"] >= 1 for x in opt["passes"]),
          "fuse_gelu counted and Gelu in the output")
    # a refusal names the op and the step; nothing written
    out8 = os.path.join(tmp, "t8.onnx")
    p = run(bin_, "convert", src, "-o", out8, "--opset", "8", "--json")
    r = json.loads(p.stdout)
    e = r["error"]
    check(p.returncode == 1 and r["status"] == "refused" and not os.path.exists(out8),
          "opset 8: refused, nothing written")
    check(e["op"] in ("Erf", "LayerNormalization") and e["step"]["to"] < e["step"]["from"] and
          e["message"] in p.stderr, "refusal: %s" % e)
    # unreadable input: status error at stage load, for each command
    bad = os.path.join(tmp, "bad.onnx")
    with open(bad, "wb") as f:
        f.write(b"\x0a\xff")
    for cmd in (["convert", bad, "-o", bad + ".out"], ["optimize", bad, "-o", bad + ".out"],
                ["check", bad], ["info", bad]):
        p = run(bin_, *(cmd + ["--json"]))
        r = json.loads(p.stdout)
        check(p.returncode == 1 and r["status"] == "error" and r["error"]["stage"] == "load" and
              r["command"] == cmd[0] and len(p.stderr.splitlines()) == 1,
              "%s --json of a broken file: %s" % (cmd[0], r))


def check_usage(bin_, root, tmp):
    a = os.path.join(tmp, "a")
    b = os.path.join(tmp, "b")
    for d in (a, b):
        os.makedirs(d)
        shutil.copy(os.path.join("testdata", sorted(x for x in os.listdir("testdata")
                                                     if x.endswith(".onnx"))[0]),
                    os.path.join(d, "m.onnx"))
    o = os.path.join(tmp, "usage-out")
    cases = [
        ("same output", ["convert", os.path.join(a, "m.onnx"), os.path.join(b, "m.onnx"),
                         "--out-dir", o]),
        ("--external-data", ["convert", a, "--out-dir", o, "--external-data", "w.bin"]),
        ("-j without --out-dir", ["convert", os.path.join(a, "m.onnx"), "-o",
                                  os.path.join(o, "x.onnx"), "-j", "2"]),
        ("-j 0", ["convert", a, "--out-dir", o, "-j", "0"]),
    ]
    for what, args in cases:
        p = run(bin_, *args)
        check(p.returncode == 2, "%s: exit %d, want 2" % (what, p.returncode))
        check(not os.path.exists(o), "%s: something was written" % what)


def main():
    bin_ = sys.argv[1]
    if not os.path.isdir(NODE):
        skip("batch_cli: no backend node tests (../shared, $ONNX_BACKEND_DATA "
             "or Debian's libonnx-testdata)")
        return report("batch_cli")
    tmp = tempfile.mkdtemp(prefix="batch_cli.")
    try:
        root = os.path.join(tmp, "in")
        n = build_folder(root)
        check(n >= 50, "%d models in the folder" % n)
        out = os.path.join(tmp, "out")
        got = check_batch_report(bin_, root, out, n)
        if got:
            doc, stderr = got
            check_broken(doc, stderr, root, out)
            check_against_single(bin_, doc, root, out, os.path.join(tmp, "single"))
        check_check_batch(bin_, root)
        check_usage(bin_, root, tmp)
        check_progress(bin_)
        check_single_reports(bin_, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report("batch_cli")


if __name__ == "__main__":
    sys.exit(main())
