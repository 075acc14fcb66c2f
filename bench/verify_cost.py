#!/usr/bin/python3
"""What verification by default costs and says on the real-model corpus
(issue 36): every model file run through a feature twice, with the
default (verification on, within its budget) and with --no-verify, each
on one core. Per feature it prints how many were verified equal, exact by
construction, not verified (with the reasons), refused, or anything else
(a difference or an error: those are listed by file), and the added
seconds (median, 90th percentile, largest).

Features: convert (--opset TARGET), optimize, float16 (--dtype float16),
coreml (-o M.mlpackage: verification judges the package's import).

Usage: /usr/bin/python3 bench/verify_cost.py ONNX_CONVERT CORPUS
           [--features convert,optimize,float16,coreml] [--target 9]
           [--every K] [--jobs N] [--json OUT.json]
(from the project root; CORPUS as tests/corpus/gen.py writes it: `make
bench-verify CORPUS_DIR=...`).
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

FEATURES = ("convert", "optimize", "float16", "coreml")


def feature_args(feature, target, out_dir):
    if feature == "convert":
        return ["convert", "--opset", str(target), "-o", os.path.join(out_dir, "m.onnx")]
    if feature == "optimize":
        return ["optimize", "-o", os.path.join(out_dir, "m.onnx")]
    if feature == "float16":
        return ["convert", "--dtype", "float16", "-o", os.path.join(out_dir, "m.onnx")]
    return ["convert", "-o", os.path.join(out_dir, "m.mlpackage")]


def run_once(binary, model, feature, target, extra):
    """(seconds, exit status, the JSON report or {})."""
    with tempfile.TemporaryDirectory() as tmp:
        args = feature_args(feature, target, tmp)
        cmd = [binary, args[0], model] + args[1:] + extra + ["--json", "--threads", "1"]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        took = time.monotonic() - t0
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {"stderr": p.stderr.strip()[:300]}
    return took, p.returncode, rep


def verdict(rc, rep):
    """What the default run says: equal, exact, not verified, refused,
    differs, error (or ok-unverified when nothing was evaluated)."""
    if rc != 0:
        if rep.get("status") == "refused":
            return "refused"
        err = rep.get("error") or {}
        return "differs" if err.get("reason") == "differs" else "error"
    ver = rep.get("verification")
    if not ver:
        return "nothing to verify"
    return {"equal": "verified", "exact": "exact", "not verified": "not verified"}.get(
        ver.get("result"), ver.get("result"))


def measure(binary, model, feature, target):
    t_def, rc, rep = run_once(binary, model, feature, target, [])
    t_no, rc_no, rep_no = run_once(binary, model, feature, target, ["--no-verify"])
    v = verdict(rc, rep)
    ver = rep.get("verification") or {}
    item = {"model": model, "feature": feature, "verdict": v,
            "added": t_def - t_no, "default_s": t_def, "no_verify_s": t_no,
            "same_status": (rc == 0) == (rc_no == 0)}
    if v == "not verified":
        item["reason"] = ver.get("reason", "")[:160]
    if v in ("differs", "error"):
        item["message"] = ((rep.get("error") or {}).get("message") or
                           rep.get("stderr", ""))[:300]
    if v == "verified":
        item["outputs"] = ver.get("outputs")
    return item


def models_in(corpus, every):
    out = []
    for name in sorted(os.listdir(corpus)):
        for f in ("model.onnx",):
            p = os.path.join(corpus, name, f)
            if os.path.exists(p):
                out.append(p)
    return out[::every]


def summary(items, feature):
    rows = [i for i in items if i["feature"] == feature]
    if not rows:
        return
    counts = collections.Counter(i["verdict"] for i in rows)
    added = sorted(i["added"] for i in rows)
    p90 = added[int(0.9 * (len(added) - 1))]
    print("%s: %d files: %s" % (feature, len(rows), ", ".join(
        "%d %s" % (n, k) for k, n in counts.most_common())))
    print("  added seconds: median %.3f, 90th percentile %.3f, largest %.2f (%s)" % (
        statistics.median(added), p90, added[-1],
        max(rows, key=lambda i: i["added"])["model"]))
    reasons = collections.Counter(i.get("reason", "").split(";")[0] for i in rows
                                  if i["verdict"] == "not verified")
    for r, n in reasons.most_common(5):
        print("  not verified x%d: %s" % (n, r))
    for i in rows:
        if i["verdict"] in ("differs", "error"):
            print("  %s %s: %s" % (i["verdict"].upper(), i["model"], i.get("message", "")))
        if not i["same_status"]:
            print("  STATUS CHANGED by verification: %s" % i["model"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("corpus")
    ap.add_argument("--features", default=",".join(FEATURES))
    ap.add_argument("--target", type=int, default=9)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    feats = [f for f in a.features.split(",") if f]
    models = models_in(a.corpus, a.every)
    tasks = [(m, f) for f in feats for m in models]
    items = []
    with ThreadPoolExecutor(a.jobs) as pool:
        futs = [pool.submit(measure, a.binary, m, f, a.target) for m, f in tasks]
        for k, fu in enumerate(futs):
            items.append(fu.result())
            if sys.stderr.isatty():
                print("\r%d/%d" % (k + 1, len(futs)), end="", file=sys.stderr)
    for f in feats:
        summary(items, f)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(items, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
