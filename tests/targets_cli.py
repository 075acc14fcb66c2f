#!/usr/bin/env python3
"""`info --targets` and `convert` agree (issue 19, Done-when 5).

For every model in ../shared/models/ (and three models built here: one
that imports ai.onnx.ml, one the checker refuses although every adapter
would take it, one whose target IR cannot hold its content), and for
every target 1..newest of ai.onnx, and of ai.onnx.ml when the model
imports it:
- `info MODEL --targets --json` says "ok" for a target exactly when
  `convert MODEL --opset T -o OUT` (`--opset-ml T` for ai.onnx.ml) exits 0
  and writes OUT, and then names the IR version convert wrote;
- for a refused target, its `error` object (stage, reason, node, op,
  domain, step, message) equals the one of `convert --json`, and convert's
  one stderr line is the message as every failure line prints it;
- the JSON has the keys docs/json.md lists, and the text form
  lists the same targets as reachable, with the same messages;
- an unreadable model is an error at stage load (exit 1, one line), and
  standard input gives what the path gives.
Conversions run in 2 processes at a time. The models of ../shared are
skipped (counted) when it is absent.

Usage: targets_cli.py ONNX_CONVERT [quick]   (from the project root;
quick: of ../shared/models, the first model only). Prints
"targets_cli: N passed, N failed[, N skipped]".
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, report, skip  # noqa: E402
from budgets_cli import f_bytes, f_float, f_int, node, ttype, vinfo  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-convert"
# "quick" (the sanitized build, several times slower): of ../shared, only
# the first model
QUICK = len(sys.argv) > 2 and sys.argv[2] == "quick"
MODELS = "../shared/models"
DOMAINS = {"ai.onnx": "--opset", "ai.onnx.ml": "--opset-ml"}
REPORT_KEYS = {"schema", "path", "command", "status", "ir_version", "opsets",
               "targets", "reachable", "error"}
TARGET_KEYS = {"opset", "status", "ir_version", "error"}
ERROR_KEYS = {"stage", "reason", "node", "op", "domain", "step", "message"}
FLOAT, STRING, INT64 = 1, 8, 7


def run(*args, stdin=None):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True,
                          stdin=stdin, timeout=120)


def failure_line(path, msg):
    """The one line every command prints for a failed model (cli_print_failure)."""
    if msg.startswith(path + ":"):
        return "onnx-convert: " + msg
    return "onnx-convert: %s: %s" % (path, msg)


# ---- models built here ------------------------------------------------------


def model_bytes(g, opsets, ir=8):
    imports = b"".join(f_bytes(8, f_bytes(1, d) + f_int(2, v)) for d, v in opsets)
    return f_int(1, ir) + imports + f_bytes(2, "targets_cli") + f_bytes(7, g)


def graph_bytes(nodes, inputs, outputs):
    b = b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, "g")
    b += b"".join(f_bytes(11, v) for v in inputs)
    return b + b"".join(f_bytes(12, v) for v in outputs)


def attr_f(name, x):
    return f_bytes(1, name) + f_float(2, x) + f_int(20, 1)


def attr_strings(name, ss):
    return f_bytes(1, name) + f_int(20, 8) + b"".join(f_bytes(9, s) for s in ss)


def attr_ints(name, xs):
    return f_bytes(1, name) + f_int(20, 7) + b"".join(f_int(8, x) for x in xs)


def ml_node(op, ins, outs, attrs):
    return node(op, ins, outs, attrs=attrs) + f_bytes(7, "ai.onnx.ml")


def m_ml():
    """Binarizer (ai.onnx.ml 1), LabelEncoder with keys/values (ml 2) and a
    Relu: ml 1 refuses LabelEncoder-2's form, the rest convert."""
    nodes = [
        ml_node("Binarizer", ["x"], ["b"], [attr_f("threshold", 0.5)]),
        node("Relu", ["b"], ["y"]),
        ml_node("LabelEncoder", ["s"], ["l"],
                [attr_strings("keys_strings", ["a", "b"]),
                 attr_ints("values_int64s", [1, 2])]),
    ]
    g = graph_bytes(nodes,
                    [vinfo("x", ttype(FLOAT, [2])), vinfo("s", ttype(STRING, [2]))],
                    [vinfo("y", ttype(FLOAT, [2])), vinfo("l", ttype(INT64, [2]))])
    return model_bytes(g, [("", 13), ("ai.onnx.ml", 2)])


def m_undefined():
    """A Relu of a value nothing defines: every adapter takes it, the
    checker (which convert runs first) refuses it."""
    g = graph_bytes([node("Relu", ["nowhere"], ["y"])], [vinfo("x", ttype(FLOAT, [2]))],
                    [vinfo("y", ttype(FLOAT, [2]))])
    return model_bytes(g, [("", 13)])


def m_metadata():
    """IR 10 with metadata_props on a node: the IR of old targets cannot
    hold it (convert refuses there, or drops it, as its IR policy says)."""
    n = node("Relu", ["x"], ["y"]) + f_bytes(9, f_bytes(1, "k") + f_bytes(2, "v"))
    g = graph_bytes([n], [vinfo("x", ttype(FLOAT, [2]))], [vinfo("y", ttype(FLOAT, [2]))])
    return model_bytes(g, [("", 18)], ir=10)


# ---- the checks -------------------------------------------------------------


def convert_one(path, flag, t, out):
    if os.path.exists(out):
        os.remove(out)
    p = run("convert", path, flag, str(t), "-o", out, "--json")
    written = os.path.isfile(out)
    if written:
        os.remove(out)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = None
    return p, written, rep


def check_schema(label, rep):
    check(isinstance(rep, dict) and set(rep) == REPORT_KEYS,
          "%s: report keys %s" % (label, sorted(rep) if isinstance(rep, dict) else rep))
    if not isinstance(rep, dict) or set(rep) != REPORT_KEYS:
        return False
    check(rep["schema"] == 1 and rep["command"] == "info" and rep["status"] == "ok"
          and rep["error"] is None, "%s: schema/command/status/error" % label)
    check(set(rep["opsets"]) == set(DOMAINS) and set(rep["targets"]) == set(DOMAINS)
          and set(rep["reachable"]) == set(DOMAINS), "%s: per-domain keys" % label)
    for d in DOMAINS:
        rows = rep["targets"][d]
        if rep["opsets"][d] is None:
            check(rows is None and rep["reachable"][d] is None,
                  "%s: %s not imported but listed" % (label, d))
            continue
        ok = [r for r in rows if isinstance(r, dict) and set(r) == TARGET_KEYS]
        check(len(ok) == len(rows) and [r["opset"] for r in rows] == list(range(1, len(rows) + 1)),
              "%s: %s rows malformed" % (label, d))
        check(rep["reachable"][d] == sum(r.get("status") == "ok" for r in rows),
              "%s: %s reachable count" % (label, d))
        for r in ok:
            good = (r["error"] is None) == (r["status"] == "ok")
            if r["error"] is not None:
                good = good and set(r["error"]) == ERROR_KEYS
            check(good, "%s: %s %s: error object %r" % (label, d, r["opset"], r["error"]))
    return True


def check_agreement(label, path, rep, tmp, pool):
    jobs = []
    for d, flag in DOMAINS.items():
        for row in rep["targets"][d] or []:
            out = os.path.join(tmp, "%s-%d.onnx" % (flag.strip("-"), row["opset"]))
            jobs.append((d, row, pool.submit(convert_one, path, flag, row["opset"], out)))
    for d, row, fut in jobs:
        p, written, crep = fut.result()
        what = "%s: %s %d" % (label, d, row["opset"])
        ok = p.returncode == 0 and written
        check(ok == (row["status"] == "ok"),
              "%s: targets says %s, convert exit %d written %s: %s"
              % (what, row["status"], p.returncode, written, p.stderr.strip()))
        if crep is None:
            check(False, "%s: convert --json printed no JSON" % what)
            continue
        if ok:
            check(row["ir_version"] == crep["ir_version"]["to"],
                  "%s: IR %r, convert wrote %r" % (what, row["ir_version"], crep["ir_version"]))
            continue
        check(row["status"] == crep["status"] and row["error"] == crep["error"],
              "%s: targets %r / %r, convert %r / %r"
              % (what, row["status"], row["error"], crep["status"], crep["error"]))
        lines = p.stderr.splitlines()
        msg = (row["error"] or {}).get("message") or ""
        check(p.returncode == 1 and lines == [failure_line(path, msg)],
              "%s: convert's line %r, targets' message %r" % (what, lines, msg))


def check_text(label, path, rep):
    p = run("info", path, "--targets")
    check(p.returncode == 0 and not p.stderr, "%s: text: exit %d %s" % (label, p.returncode, p.stderr))
    lines = p.stdout.splitlines()
    for d, rows in rep["targets"].items():
        if rows is None:
            continue
        name = "opsets" if d == "ai.onnx" else "ai.onnx.ml opsets"
        head = [i for i, s in enumerate(lines) if s.startswith(path + " (" + d + " opset ")]
        check(len(head) == 1, "%s: text: one heading for %s in %r" % (label, d, lines[:2]))
        if len(head) != 1:
            continue
        body = lines[head[0] + 1:head[0] + 1 + len(rows)]
        for row, line in zip(rows, body):
            t = row["opset"]
            if row["status"] == "ok":
                want = "  %2d  yes" % t + (" (the model's own)" if t == rep["opsets"][d] else "")
            else:
                want = "  %2d  no   %s" % (t, row["error"]["message"])
            check(line == want, "%s: text: %r, want %r" % (label, line, want))
        summary = lines[head[0] + 1 + len(rows)] if head[0] + 1 + len(rows) < len(lines) else ""
        want = "%d of %d %s reachable" % (rep["reachable"][d], len(rows), name)
        check(summary == want, "%s: text: %r, want %r" % (label, summary, want))


def one_model(label, path, tmp, pool, text=False):
    p = run("info", path, "--targets", "--json")
    check(p.returncode == 0 and not p.stderr, "%s: info --targets --json: exit %d %s"
          % (label, p.returncode, p.stderr.strip()))
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        check(False, "%s: --targets --json printed no JSON: %r" % (label, p.stdout[:80]))
        return None
    if not check_schema(label, rep):
        return None
    check(rep["path"] == path, "%s: path %r" % (label, rep["path"]))
    check_agreement(label, path, rep, tmp, pool)
    if text:
        check_text(label, path, rep)
    return rep


def check_load_error(tmp):
    bad = os.path.join(tmp, "bad.onnx")
    with open(bad, "wb") as f:
        f.write(b"\x0f not a model")
    p = run("info", bad, "--targets", "--json")
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    err = rep.get("error") or {}
    check(p.returncode == 1 and len(p.stderr.splitlines()) == 1 and rep.get("status") == "error"
          and err.get("stage") == "load" and p.stderr.strip() == failure_line(bad, err.get("message", "")),
          "unreadable model: exit %d, %r, %r" % (p.returncode, rep, p.stderr))


def check_no_domain(tmp):
    """A model of a custom domain alone: no target to list, either form."""
    n = node("Thing", ["x"], ["y"]) + f_bytes(7, "com.example")
    g = graph_bytes([n], [vinfo("x", ttype(FLOAT, [2]))], [vinfo("y", ttype(FLOAT, [2]))])
    path = os.path.join(tmp, "custom.onnx")
    with open(path, "wb") as f:
        f.write(model_bytes(g, [("com.example", 1)]))
    p = run("info", path, "--targets")
    check(p.returncode == 0 and p.stdout ==
          "%s imports no ai.onnx or ai.onnx.ml opset: nothing to convert\n" % path,
          "custom domain only: text %r" % p.stdout)
    p = run("info", path, "--targets", "--json")
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = None
    if check_schema("custom", rep):
        check(rep["opsets"] == {"ai.onnx": None, "ai.onnx.ml": None},
              "custom domain only: opsets %r" % rep["opsets"])


def check_stdin(path, rep):
    with open(path, "rb") as f:
        p = run("info", "-", "--targets", "--json", stdin=f)
    # messages that name the file name "-" instead
    want = json.loads(json.dumps(rep).replace(json.dumps(path)[1:-1], "-"))
    try:
        srep = json.loads(p.stdout)
    except ValueError:
        srep = {}
    check(p.returncode == 0 and srep == want, "info - --targets --json differs from the path's")


def built_models(tmp):
    out = []
    for name, data in (("ml", m_ml()), ("undefined", m_undefined()), ("metadata", m_metadata())):
        path = os.path.join(tmp, name + ".onnx")
        with open(path, "wb") as f:
            f.write(data)
        out.append((name, path))
    return out


def main():
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        check_load_error(tmp)
        check_no_domain(tmp)
        for name, path in built_models(tmp):
            rep = one_model(name, path, tmp, pool, text=True)
            if rep and name == "ml":
                check(rep["opsets"]["ai.onnx.ml"] == 2 and
                      any(r["status"] == "ok" for r in rep["targets"]["ai.onnx.ml"]),
                      "ml: ai.onnx.ml rows %r" % rep["targets"]["ai.onnx.ml"])
            if rep and name == "undefined":
                check(rep["reachable"]["ai.onnx"] == 0, "undefined: a target listed reachable")
            if rep:
                check_stdin(path, rep)
        if not os.path.isdir(MODELS):
            skip("the models of %s: folder absent" % MODELS)
        else:
            names = sorted(os.listdir(MODELS))
            for i, name in enumerate(names[:1] if QUICK else names):
                path = os.path.join(MODELS, name, "model.onnx")
                if os.path.isfile(path):
                    one_model(name, path, tmp, pool, text=i == 0)
    print("targets_cli: %.1f s" % (time.time() - start))
    return report("targets_cli")


if __name__ == "__main__":
    sys.exit(main())
