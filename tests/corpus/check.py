#!/usr/bin/python3
"""Every feature on every corpus model, judged by what we do not write
(issue 33). For each model file OUT/NAME_opsetN/model.onnx (the layout of
tests/corpus/gen.py and ../shared/models):

  convert    `convert --opset T` for every target T of 7..26; ONNX Runtime
             runs each result against PyTorch's outputs
  back       each of those results converted back to the file's own opset
             (`convert cT.onnx --opset OWN`), judged the same way: the
             round trip a user makes who downgrades for a runtime and
             later upgrades again
  optimize   `optimize`: ORT gives the outputs, and the node count is at or
             below ORT's "basic" level on the original (bench/ort_basic.js)
  float16, float16-io, bfloat16, bfloat16-io
             `--dtype T [--keep-io-types] --verify`, ORT within the type's
             tolerance (docs/evaluator.md); bfloat16 at the opset the
             report's hint names when the model's own lacks the type
  auto       `--dtype float16 --keep-io-types --auto --inputs CASE`, ORT at
             float16's tolerance
  store      `--store float16`: ORT gives what it gives for the original
             with its weights rounded to float16 (by numpy)
  coreml     `convert -o M.mlpackage` at the lowest target: Apple's loader
             (ct_check.py) accepts the package, and its import
             (`convert M.mlpackage --opset 13`, or the file's own opset above 13) gives PyTorch's outputs in ORT
  python     the Python package: convert() gives the command line's bytes
             and run() of the result gives PyTorch's outputs
  import     only for a case holding model.mlpackage instead of model.onnx
             (coremltools' own packages, tests/corpus/ctpkg.py):
             `convert DIR/model.mlpackage -o OUT.onnx` (the import's own
             opset), ONNX Runtime on the result against PyTorch's outputs
             (or ORT's run of the same model's ONNX export where those two
             already differ); every other feature is absent for such a
             case, and import for the others

Results per file and feature: ok, refused (exit 1 with a reason, recorded),
n/a (a target that lacks the model's types: `type-absent`), nojudge (ORT
cannot run the original, or lacks a kernel for something), failed (a crash,
a timeout, a limit exceeded) and wrong: a file written with exit 0 that a
judge refuses or whose numbers differ. Wrong must be 0.

Usage: /usr/bin/python3 tests/corpus/check.py ONNX_CONVERT OUT [--sample]
          [--md docs/corpus.md] [--json F] [--only SUBSTR] [--jobs N]
          [--work DIR] [--keep] [--deadline MINUTES] [--features a,b]
       /usr/bin/python3 tests/corpus/check.py X X --from-json F --md docs/corpus.md
(from the project root). --sample: the few targets of SAMPLE_TARGETS and one
summary line "corpus: N passed, N failed" for tests/run.sh, where a refusal
or failure is a pass only when tests/corpus/expected.txt lists it.
"""
import argparse
import collections
import fnmatch
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from clitest import CT_DIR, ORT_DIR, have_ct, have_ort  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = list(range(7, 27))
# make check's sample: the targets where the opsets' big changes fall
SAMPLE_TARGETS = [7, 9, 11, 13, 17, 21, 26]
# The largest models (minutes of our evaluator per --verify, hundreds of MB
# per converted copy) are judged on these targets only, so that
# `make corpus-check` stays under an hour on 2 cores (docs/corpus.md).
HEAVY_TARGETS = [7, 9, 11, 13, 17, 21, 26]
HEAVY_BYTES = 60 << 20
# ... and every feature runs on one file of such a model only (its highest
# opset, heavy_primary): each --verify runs our evaluator on it twice, and
# a package of hundreds of MB costs Apple's loader as much (vgg11: about
# 170 s for one file's features on an idle core). Its other opset files
# get these features.
HEAVY_FEATURES = ("convert", "back")
FEATURES = ["convert", "back", "optimize", "float16", "float16-io", "bfloat16", "bfloat16-io",
            "auto", "store", "coreml", "python", "import"]
# the one feature of a case holding a Core ML package (no model.onnx)
PACKAGE_FEATURES = ("import",)
# the features whose result is one cell per target
PER_TARGET = ("convert", "back")
# --verify's and --auto's tolerances for the half types (src/eval/verify.h,
# docs/evaluator.md): |got - want| <= atol * scale + rtol * |want|
HALF_TOL = {"float16": (1e-2, 3e-2), "bfloat16": (5e-2, 1.25e-1)}
TIMEOUT = 900       # seconds for one command of ours
PY_OPSET = 17       # the Python package converts to this (13 from 17)


# ---- one command of ours ---------------------------------------------------

def tool(bin_, *args, timeout=TIMEOUT):
    """Runs ONNX_CONVERT with --json; returns (outcome, report): outcome
    "ok" (exit 0), "refused" (exit 1 with a reason) or "failed" (a crash,
    a timeout, a usage error), report the JSON object or {}."""
    t0 = time.time()
    try:
        p = subprocess.run([bin_] + list(args) + ["--json"], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "failed", {"why": "timeout after %d s" % timeout, "seconds": time.time() - t0}
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    rep["seconds"] = time.time() - t0
    if p.returncode == 0:
        return "ok", rep
    line = (p.stderr.strip().splitlines() or [""])[-1]
    if p.returncode == 1 and rep.get("error"):
        return "refused", rep
    what = "killed by signal %d" % -p.returncode if p.returncode < 0 else "exit %d" % p.returncode
    rep["why"] = "%s: %s" % (what, line)
    return "failed", rep


def refusal(rep):
    """A refusal as {reason, why, group}: group names it without the
    node's name, so that the same limit met in many files counts once."""
    e = rep.get("error") or {}
    step = e.get("step") or {}
    where = e.get("op") or ""
    if step:
        where += "-%s->%s" % (step.get("from"), step.get("to"))
    if e.get("mil_op"):
        where += " (MIL %s)" % e["mil_op"]
    reason = "%s/%s" % (e.get("stage"), e.get("reason"))
    msg = re.sub(r"\S*/model\.onnx: ", "", e.get("message") or "")
    # the text after the node's name says why; names (quoted) left out
    tail = re.sub(r"^node '.*?' \(.*?\):\s*", "", msg)
    group = "%s %s: %s" % (reason, e.get("op") or "", re.sub(r"'[^']*'", "'…'", tail)[:160])
    return {"reason": reason, "why": msg[:300], "where": where, "group": group}


# ---- the judges we did not write ----------------------------------------------

class Judge:
    """ONNX Runtime (tests/corpus/ort_judge.js), one process per model file,
    one job at a time, restarted when ORT takes the process down."""

    def __init__(self, case, expected_by, tol, source=None):
        self.args = ["node", os.path.join(HERE, "ort_judge.js"), case, expected_by,
                     repr(tol[0]), repr(tol[1])] + ([source] if source else [])
        self.p = None
        self.original = None
        self.n = 0

    def start(self):
        env = dict(os.environ, OC_ORT_DIR=os.path.abspath(ORT_DIR))
        self.p = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, env=env)
        line = self.p.stdout.readline()
        self.original = json.loads(line) if line else {"status": "nojudge",
                                                       "why": "ORT's process died on the original"}
        if not line:
            self.close()

    def ask(self, **job):
        if self.p is None:
            self.start()
            if self.p is None:
                return {"status": "nojudge", "why": self.original["why"]}
        self.n += 1
        job["id"] = self.n
        try:
            self.p.stdin.write(json.dumps(job) + "\n")
            self.p.stdin.flush()
            line = self.p.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            self.close()
            return {"status": "invalid", "why": "ORT's process died on this file"}
        return json.loads(line)

    def close(self):
        if self.p:
            try:
                self.p.stdin.close()
            except BrokenPipeError:
                pass
            self.p.wait()
            self.p = None


CT_SERVER = r"""
import contextlib, io, json, sys
sys.path.insert(0, sys.argv[1])
import ct_check
for line in sys.stdin:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = ct_check.main([line.strip(), "--json"])
    r = json.loads(out.getvalue())
    ct_check.LOG.records.clear()
    print(json.dumps({"ok": rc == 0, "error": r.get("error")}), flush=True)
"""


class AppleLoader:
    """Apple's loader (coremltools' ct_check.py) kept loaded in one process
    per worker: importing coremltools costs seconds, a check a fraction."""

    def __init__(self):
        self.p = None
        self.used = 0
        self.cpu = 0.0   # seconds it spent on our packages

    def check(self, pkg):
        if self.p is None or self.used >= 100:   # a fresh one now and then
            self.close()
            self.p = subprocess.Popen(["/usr/bin/python3", "-E", "-s", "-c", CT_SERVER,
                                       os.path.abspath(CT_DIR)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.used = 0
        self.used += 1
        before = proc_cpu(self.p.pid)
        self.p.stdin.write(os.path.abspath(pkg) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        self.cpu += proc_cpu(self.p.pid) - before
        if not line:
            self.close()
            return {"ok": False, "error": {"stage": "crash", "message": "ct_check's process died"}}
        return json.loads(line)

    def close(self):
        if self.p:
            self.p.stdin.close()
            self.p.wait()
            self.p = None


# ---- one model file -----------------------------------------------------------

def meta_of(case):
    """meta.json, or what ../shared/models implies (PyTorch exports)."""
    m = {}
    p = os.path.join(case, "meta.json")
    if os.path.exists(p):
        with open(p) as f:
            m = json.load(f)
    d = os.path.basename(case.rstrip("/"))
    base, _, o = d.rpartition("_opset")
    m.setdefault("name", base or d)
    m.setdefault("family", "shared")
    m.setdefault("kind", "torch")
    m.setdefault("opset", int(o) if o.isdigit() else None)
    m.setdefault("rtol", 1e-3)
    m.setdefault("atol", 1e-4)
    m.setdefault("expected_by", "pytorch")
    m["file"] = d
    return m


# ORT's type error on a node it made itself: an op it has no kernel for
# (Clip, LeakyRelu, ... in bfloat16) is replaced by the op's function body,
# whose nodes (Where, Less) may not take that type at the file's opset. The
# node has no name, and no node of that op is in our file.
ORT_EXPANDED = re.compile(r"of operator \((\w+)\) in node \(\) is invalid")


def ort_expanded(why, path):
    """The op ORT's own expansion failed on, when the file has none of it."""
    m = ORT_EXPANDED.search(why or "")
    if not m or not path:
        return None
    import onnx
    ops = set()

    def walk(g):
        for n in g.node:
            ops.add(n.op_type)
            for a in n.attribute:
                for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    walk(sub)
    model = onnx.load(path, load_external_data=False)
    walk(model.graph)
    for f in model.functions:
        ops.update(n.op_type for n in f.node)
    return None if m.group(1) in ops else m.group(1)


def judged(j, ok_detail="", path=None):
    """A judge's answer on a file we wrote with exit 0 as a result."""
    s = j.get("status")
    op = ort_expanded(j.get("why"), path) if s == "invalid" else None
    if op:
        return {"status": "nojudge",
                "why": "ORT lacks a kernel and its expansion into the op's function body "
                       "is invalid at this opset (%s): %s" % (op, (j.get("why") or "")[:150])}
    if s == "ok":
        if j.get("matched") == "pytorch":   # ORT's run of the original did not
            ok_detail = (ok_detail + "; " if ok_detail else "") + "PyTorch's outputs"
        if j.get("matched") == "source":    # ORT's half run strayed from the model's
            ok_detail = (ok_detail + "; " if ok_detail else "") + \
                "the float32 source's PyTorch outputs"
        return {"status": "ok", "judge": "ort", "err": j.get("err"), "detail": ok_detail}
    if s == "nokernel":
        return {"status": "nojudge", "why": "ORT lacks: " + (j.get("why") or "")[:200]}
    if s == "nojudge":
        return {"status": "nojudge", "why": j.get("why")}
    return {"status": "wrong", "why": "ORT %s: %s" % (s, j.get("why"))}


def not_written(outcome, rep, na_reasons=()):
    """A result without a file: n/a, refused, or failed (a crash, or our
    own --verify catching other numbers or not running the model: the
    feature failed, though nothing wrong was written)."""
    r = {"seconds": rep.get("seconds")}
    e = rep.get("error") or {}
    if outcome == "refused" and e.get("stage") == "verify":
        r.update(refusal(rep))
        r.update(status="failed", why="caught by --verify: " + r["why"])
    elif outcome == "refused":
        r.update(refusal(rep))
        r["status"] = "na" if e.get("reason") in na_reasons else "refused"
    else:
        r.update(status="failed", why=rep.get("why") or (rep.get("error") or {}).get("message"))
    return r


class Case:
    def __init__(self, bin_, case, work, targets, ct):
        self.bin, self.case, self.work, self.targets, self.ct = bin_, case, work, targets, ct
        self.model = os.path.join(case, "model.onnx")
        self.package = os.path.join(case, "model.mlpackage")
        if not os.path.isdir(self.package):
            self.package = None
        self.meta = meta_of(case)
        self.tol = (self.meta["rtol"], self.meta["atol"])
        # a float16 file another tool made stands for its float32 source's
        # outputs (tests/corpus/ort_judge.js, SOURCE_DIR)
        src = self.meta.get("source")
        src = os.path.join(os.path.dirname(case), src) if src and \
            self.meta.get("kind") == "float16" else None
        self.judge = Judge(case, self.meta["expected_by"], self.tol,
                           src if src and os.path.isdir(src) else None)
        self.res = {}
        self.py_bytes = self.py_target = None

    def out(self, name):
        return os.path.join(self.work, name)

    def ort(self, path, tol=None, scaled=False, loose=None, kind="model", ref=None):
        rtol, atol = tol or self.tol
        return self.judge.ask(kind=kind, path=os.path.abspath(path), rtol=rtol, atol=atol,
                              scaled=scaled, loose=loose, ref=ref)

    def half_tol(self, dtype):
        """The type's tolerance on top of the case's own (PyTorch against
        the float32 model already differs by that much)."""
        r, a = HALF_TOL[dtype]
        return (r + self.tol[0], a + self.tol[1])

    def written(self, outcome, rep, path, **judge_args):
        if outcome != "ok":
            return not_written(outcome, rep, ("type-absent",))
        r = judged(self.ort(path, **judge_args), path=path)
        r["seconds"] = rep.get("seconds")
        remove(path)
        return r

    # -- the features

    def convert(self, back):
        """Every target; with BACK, each file written is also converted
        back to the file's own opset (self.res["back"]), before it goes."""
        cells, backs = {}, {}
        own = self.meta["opset"]
        for t in self.targets:
            path = self.out("c%d.onnx" % t)
            outcome, rep = tool(self.bin, "convert", self.model, "-o", path, "--opset", str(t))
            if outcome == "ok" and t == self.py_target and self.py_bytes is not None:
                with open(path, "rb") as f:
                    self.res["python"]["same_bytes"] = f.read() == self.py_bytes
            if outcome == "ok" and back and own and t != own:
                backs[str(t)] = self.back(path, own)
            cells[str(t)] = self.written(outcome, rep, path)
        if back:
            self.res["back"] = backs
        return cells

    def back(self, path, own):
        """PATH (written by convert) converted to OWN and judged as the
        original is."""
        bpath = self.out("back%d.onnx" % own)
        outcome, rep = tool(self.bin, "convert", path, "-o", bpath, "--opset", str(own))
        return self.written(outcome, rep, bpath)

    def optimize(self):
        path = self.out("opt.onnx")
        outcome, rep = tool(self.bin, "optimize", self.model, "-o", path)
        if outcome != "ok":
            return not_written(outcome, rep)
        count = self.judge.ask(kind="basic", path=os.path.abspath(path),
                               scratch=os.path.abspath(self.out("ort_basic.onnx")))
        r = self.written(outcome, rep, path)
        r["nodes"] = (rep.get("nodes") or {}).get("after")
        if count.get("status") != "ok":
            r["count"] = "ORT cannot optimize the original: %s" % (count.get("why") or "")[:200]
        else:
            r["nodes"], r["ort_nodes"] = count["ours"], count["ort_nodes"]
            if r["status"] == "ok" and count["ours"] > count["ort_nodes"]:
                if count["ir"] < 4:
                    r["detail"] = "IR<4, initializers are inputs: above ORT not judged"
                else:
                    r.update(status="failed", why="%d nodes, ORT's basic level %d"
                             % (count["ours"], count["ort_nodes"]))
        return r

    def precision(self, dtype, keep_io):
        name = "%s%s.onnx" % (dtype, "-io" if keep_io else "")
        path = self.out(name)
        args = ["convert", self.model, "-o", path, "--dtype", dtype, "--verify"]
        if keep_io:
            args.append("--keep-io-types")
        outcome, rep = tool(self.bin, *args)
        detail = ""
        hint = ((rep.get("precision") or {}).get("hint") or "")
        m = re.search(r"--opset (\d+)", hint)
        if outcome == "ok" and m:   # the model's opset lacks the type: as the hint says
            detail = "--opset %s" % m.group(1)
            outcome, rep = tool(self.bin, *(args + ["--opset", m.group(1)]))
        r = self.written(outcome, rep, path, tol=self.half_tol(dtype), scaled=True, loose="float")
        if detail:
            r["detail"] = detail
        kept = len((rep.get("precision") or {}).get("nodes_kept") or [])
        if kept:
            r["kept"] = kept
        return r

    def auto(self):
        path = self.out("auto.onnx")
        outcome, rep = tool(self.bin, "convert", self.model, "-o", path, "--dtype", "float16",
                            "--keep-io-types", "--auto", "--inputs",
                            os.path.join(self.case, "test_data_set_0"))
        r = self.written(outcome, rep, path, tol=self.half_tol("float16"), scaled=True,
                         loose="float")
        a = (rep.get("precision") or {}).get("auto") or {}
        if a.get("nodes_kept"):
            r["detail"] = "%d of %s nodes kept" % (len(a["nodes_kept"]), a.get("candidates"))
        return r

    def store(self):
        """--store float16 computes what the original computes with its
        weights rounded to float16 (docs/precision.md): ORT runs both, the
        rounded original made here with onnx and numpy."""
        path = self.out("store.onnx")
        outcome, rep = tool(self.bin, "convert", self.model, "-o", path, "--store", "float16")
        if outcome != "ok":
            return not_written(outcome, rep)
        ref = self.out("rounded.onnx")
        try:
            rounded_weights(self.model, ref)
        except Exception as e:  # noqa: BLE001 - onnx cannot read it: ORT against PyTorch then
            ref = None
            note = "onnx cannot round its weights (%s): held to the reference at float16's tolerance" % e
        if ref:
            r = self.written(outcome, rep, path, ref=os.path.abspath(ref))
            remove(ref)
        else:
            r = self.written(outcome, rep, path, tol=self.half_tol("float16"), scaled=True)
            r["detail"] = note
        return r

    def coreml(self):
        pkg = self.out("m.mlpackage")
        outcome, rep = tool(self.bin, "convert", self.model, "-o", pkg)
        if outcome != "ok":
            return not_written(outcome, rep)
        target = (rep.get("coreml") or {}).get("target")
        r = {"seconds": rep.get("seconds"), "detail": target}
        if self.ct:
            c = self.ct.check(pkg)
            if not c["ok"]:
                e = c.get("error") or {}
                r.update(status="wrong", why="Apple's loader: [%s] %s"
                         % (e.get("stage"), (e.get("message") or "")[:300]))
                return r
        back = self.out("back.onnx")
        # at the file's own opset where it is above 13: an op the import
        # writes at a newer version (ScatterElements' reduction 'add', 16)
        # has no form at 13
        opset = max(13, self.meta.get("opset") or 13)
        outcome, rep = tool(self.bin, "convert", pkg, "-o", back, "--opset", str(opset))
        shutil.rmtree(pkg, ignore_errors=True)
        if outcome != "ok":
            r.update(status="failed", why="the import: " + (not_written(outcome, rep).get("why") or ""))
            return r
        j = judged(self.ort(back, loose="coreml"))
        remove(back)
        if j["status"] == "ok" and not self.ct:
            j = {"status": "nojudge", "why": "Apple's loader not available (ORT ran the import)"}
        j["seconds"], j["detail"] = r["seconds"], target
        return j

    def sibling(self):
        """The ONNX export of the same model (gen.py's NAME_opsetN, made
        with the same seed: the same weights and inputs), highest opset."""
        base = os.path.dirname(self.case)
        for o in (17, 13, 11, 9):
            m = os.path.join(base, "%s_opset%d" % (self.meta["name"], o), "model.onnx")
            if os.path.exists(m):
                return m
        return None

    def import_(self):
        """A package coremltools made, imported (at the import's own opset:
        the convert column judges conversions) and judged by ORT against
        PyTorch's outputs (float16 compute at its tolerance, scaled as
        --verify scales it). Where it misses them, ORT's run of the same
        model's ONNX export is the second reference: a model whose outputs
        ORT and PyTorch already compute apart (inception_v3's 7e4 logits)
        is judged against the runtime. A float16 package whose PyTorch
        outputs pass float16's range cannot hold them: not judged."""
        path = self.out("import.onnx")
        outcome, rep = tool(self.bin, "convert", self.package, "-o", path)
        args = dict(scaled=bool(self.meta.get("tolerance_scaled")), loose="coreml")
        r = judged(self.ort(path, **args), path=path) if outcome == "ok" else None
        sib = self.sibling()
        if r and r["status"] == "wrong" and sib:
            r2 = judged(self.ort(path, ref=sib, **args), path=path)
            if r2["status"] == "ok":
                r = dict(r2, detail="ORT's run of the ONNX export %s (PyTorch's differ: %s)"
                         % (os.path.basename(os.path.dirname(sib)), r["why"][:120]))
        big = self.meta.get("precision") == "fp16" and self.outputs_past(65504.0)
        if r and r["status"] == "wrong" and big:
            r = {"status": "nojudge", "why": "PyTorch's outputs pass float16's largest value "
                 "(65504), which this float16 package computes in: %s" % r["why"][:150]}
        if r is not None:
            r["seconds"] = rep.get("seconds")
            remove(path)
        else:
            r = not_written(outcome, rep, ("type-absent",))
        for k in ("why", "group"):   # the package's path and value names left out
            if r.get(k):
                r[k] = re.sub(r"\S*/model\.mlpackage: ", "", r[k])
        if r.get("group"):
            r["group"] = re.sub(r"\([^)]*\)", "(…)", r["group"])
        if not (self.meta.get("ct_check") or {}).get("ok", True):
            r["detail"] = "Apple's loader refuses the package"
        return r

    def outputs_past(self, limit):
        """Whether some expected output's |value| passes limit."""
        import numpy as np
        from onnx import TensorProto, numpy_helper
        d = os.path.join(self.case, "test_data_set_0")
        for f in sorted(os.listdir(d)):
            if f.startswith("output_"):
                t = TensorProto()
                with open(os.path.join(d, f), "rb") as fh:
                    t.ParseFromString(fh.read())
                a = numpy_helper.to_array(t)
                if a.dtype.kind == "f" and np.nanmax(np.abs(a), initial=0) > limit:
                    return True
        return False

    def python(self):
        """convert() then run() in this process (the package over the
        library beside ONNX_CONVERT); run()'s outputs go to ORT's judge."""
        t0 = time.time()
        try:
            r = python_convert_run(self.model, self.case, self.meta["opset"], self.out("py"))
        except Exception as e:  # noqa: BLE001 - anything the package raises is a result
            r = python_error(e)
        if r.get("status") == "ran":
            self.py_bytes, self.py_target = r.pop("bytes", None), r.pop("target", None)
            r = judged(self.ort(self.out("py"), kind="values"), r.get("detail", ""))
            shutil.rmtree(self.out("py"), ignore_errors=True)
        r.pop("bytes", None)
        r["seconds"] = time.time() - t0
        return r

    def run(self, features):
        os.makedirs(self.work, exist_ok=True)
        t0 = time.time()
        self.judge.start()
        self.res["original"] = self.judge.original
        steps = {"python": self.python, "convert": lambda: self.convert("back" in features),
                 "optimize": self.optimize,
                 "float16": lambda: self.precision("float16", False),
                 "float16-io": lambda: self.precision("float16", True),
                 "bfloat16": lambda: self.precision("bfloat16", False),
                 "bfloat16-io": lambda: self.precision("bfloat16", True),
                 "auto": self.auto, "store": self.store, "coreml": self.coreml,
                 "import": self.import_}
        took = {}
        for f in ["python"] + [f for f in FEATURES if f != "python"]:
            if f not in features or f == "back":   # back runs inside convert
                continue
            if (f in PACKAGE_FEATURES) != bool(self.package):   # absent: "-"
                continue
            t = time.time()
            self.res[f] = steps[f]()
            took[f] = round(time.time() - t, 2)
        py = self.res.get("python") or {}
        if py.get("status") == "ok" and py.get("same_bytes") is False:
            py.update(status="wrong", why="convert() gave other bytes than the command line")
        self.judge.close()
        self.res["seconds"] = round(time.time() - t0, 2)
        self.res["took"] = took
        return self.res


def rounded_weights(src, dst):
    """SRC with every float32 initializer of 16 elements or more rounded
    to float16 (clamped to its range) and back: what --store float16 must
    compute, made by numpy."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    m = onnx.load(src)
    for t in m.graph.initializer:
        if t.data_type == onnx.TensorProto.FLOAT and int(np.prod(t.dims)) >= 16:
            # beyond float16's range it clamps, as docs/precision.md says
            a = np.clip(numpy_helper.to_array(t), -65504, 65504)
            a = a.astype(np.float16).astype(np.float32)
            t.CopyFrom(numpy_helper.from_array(a, t.name))
    onnx.save(m, dst)


def remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


# ---- the Python package ----------------------------------------------------------

def python_error(e):
    if isinstance(e, ImportError):
        return {"status": "nojudge", "why": "the Python package cannot be imported here: %s" % e}
    import onnxconvert
    if isinstance(e, onnxconvert.OnnxConvertError):
        d = {"stage": e.stage, "reason": e.reason, "op": e.op, "node": e.node, "message": str(e),
             "step": {"from": e.step[0], "to": e.step[1]} if e.step else None}
        r = refusal({"error": d})
        r["status"] = "refused"
        return r
    return {"status": "failed", "why": "%s: %s" % (type(e).__name__, str(e)[:300])}


def python_convert_run(model, case, opset, out):
    """convert(bytes, opset) then run() on the case's inputs, the outputs
    written as output_K.pb into OUT for the judge. The opset is PY_OPSET
    (13 for a model already at it); a refused conversion runs the original."""
    import numpy as np  # noqa: F401  (onnxconvert's values are numpy arrays)
    import onnx
    from onnx import numpy_helper
    import onnxconvert
    with open(model, "rb") as f:
        data = f.read()
    target = 13 if opset == PY_OPSET else PY_OPSET
    detail = "opset %d" % target
    try:
        conv = onnxconvert.convert(data, target)
    except onnxconvert.ConversionError as e:
        conv, detail = None, "convert refused (%s), run on the original" % e.reason
    feeds = {}
    with onnxconvert.Session(conv if conv is not None else data) as s:
        names = [a.name for a in s.get_inputs()]
        files = sorted(glob.glob(os.path.join(case, "test_data_set_0", "input_*.pb")),
                       key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        for i, p in enumerate(files):
            t = onnx.TensorProto()
            with open(p, "rb") as f:
                t.ParseFromString(f.read())
            feeds[t.name if t.name in names else names[i]] = numpy_helper.to_array(t)
        values = s.run(None, feeds)
        outs = [a.name for a in s.get_outputs()]
    os.makedirs(out, exist_ok=True)
    for k, (n, v) in enumerate(zip(outs, values)):
        with open(os.path.join(out, "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(v), n).SerializeToString())
    return {"status": "ran", "bytes": conv, "target": target, "detail": detail}


# ---- the judge's own check ------------------------------------------------------

def self_test(cases, work):
    """The judge can fail: on the smallest PyTorch export with a float
    weight it says ok, on a copy with its largest weight scaled by 1.5
    (made by onnx) differs, and on a truncated copy invalid. Returns the
    failures' lines."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    os.makedirs(work, exist_ok=True)
    floats = []
    onnx_cases = [c for c in cases if os.path.exists(os.path.join(c, "model.onnx"))]
    for case in sorted(onnx_cases, key=lambda c: os.path.getsize(os.path.join(c, "model.onnx"))):
        if meta_of(case)["expected_by"] != "pytorch":
            continue
        model = os.path.join(case, "model.onnx")
        m = onnx.load(model)
        floats = [t for t in m.graph.initializer if t.data_type == onnx.TensorProto.FLOAT]
        if floats:
            break
    if not floats:
        return ["self-test: no PyTorch export with a float weight to change"]
    t = max(floats, key=lambda t: int(np.prod(t.dims)))
    t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(1.5), t.name))
    changed, cut = os.path.join(work, "changed.onnx"), os.path.join(work, "cut.onnx")
    onnx.save(m, changed)
    with open(model, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    meta = meta_of(case)
    j = Judge(case, meta["expected_by"], (meta["rtol"], meta["atol"]))
    j.start()
    fails = []
    for path, want in ((model, "ok"), (changed, "differs"), (cut, "invalid")):
        got = j.ask(kind="model", path=os.path.abspath(path), rtol=meta["rtol"], atol=meta["atol"])
        if got.get("status") != want:
            fails.append("self-test: the judge says %s on %s, not %s" % (got.get("status"),
                                                                        os.path.basename(path), want))
    j.close()
    shutil.rmtree(work, ignore_errors=True)
    return fails


# ---- the whole corpus ----------------------------------------------------------

CT = None


def check_case(job):
    """One model file (in a pool worker): its results, by feature."""
    global CT
    bin_, case, work, targets, features, use_ct, keep = job
    if use_ct and CT is None:
        CT = AppleLoader()
    c = Case(bin_, case, os.path.join(work, os.path.basename(case)), targets,
             CT if use_ct else None)
    cpu0 = cpu_seconds()
    try:
        res = c.run(features)
    except Exception as e:  # noqa: BLE001 - a bug here: the file still gets a line
        import traceback
        res = {"error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()}
    finally:
        c.judge.close()
    if not keep:
        shutil.rmtree(c.work, ignore_errors=True)
    res["meta"] = c.meta
    res["cpu"] = round(cpu_seconds() - cpu0, 2)
    return res


def cpu_seconds():
    """CPU time of this worker, the processes it waited for (our tool,
    ORT's judge) and Apple's loader's checks: what a file costs whatever
    else loads the machine."""
    import resource
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN))) \
        + (CT.cpu if CT else 0)


def proc_cpu(pid):
    """A running process's CPU seconds (user + system), from /proc."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def load_expected(path):
    """tests/corpus/expected.txt: "FILE FEATURE: reason" (FILE and FEATURE
    glob patterns; FEATURE a column, or convert@T for one target)."""
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
                if not line:
                    continue
                head, _, why = line.partition(": ")
                pat, feat = head.split()
                out.append((pat, feat, why.strip()))
    return out


def expected(exp, file, feature):
    for pat, feat, why in exp:
        if fnmatch.fnmatch(file, pat) and fnmatch.fnmatch(feature, feat):
            return why
    return None


def cells_of(res):
    """(feature label, result) for every judged cell of one file."""
    for f in FEATURES:
        r = res.get(f)
        if r is None:
            continue
        if f in PER_TARGET:
            for t, c in r.items():
                yield "%s@%s" % (f, t), c
        else:
            yield f, r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bin")
    ap.add_argument("out")
    ap.add_argument("--sample", action="store_true")
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default="build/corpus-check")
    ap.add_argument("--keep", action="store_true", help="keep every file written")
    ap.add_argument("--features", default=",".join(FEATURES))
    ap.add_argument("--deadline", type=float, help="stop after this many minutes (a partial report)")
    ap.add_argument("--from-json", help="write --md from an earlier run's --json, running nothing")
    a = ap.parse_args()
    name = "corpus"
    if a.from_json:
        with open(a.from_json) as f:
            doc = json.load(f)
        exp = load_expected(os.path.join(HERE, "expected.txt"))
        doc["summary"] = tally(doc["files"], exp)
        write_md(a.md, doc, exp)
        return print_summary(name, doc["summary"], doc["took"])
    if not have_ort():
        print("%s: skipped (no ONNX Runtime judge: node or its packages missing)" % name)
        return 0
    cases = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(a.out, "*", "model.onnx"))
                   + glob.glob(os.path.join(a.out, "*", "model.mlpackage")))
    if glob.glob(os.path.join(a.out, "*", "meta.json")):   # gen.py writes meta.json last
        cases = [c for c in cases if os.path.exists(os.path.join(c, "meta.json"))]
    if a.only:
        cases = [c for c in cases if any(s in os.path.basename(c) for s in a.only)]
    if not cases:
        print("%s: skipped (no model files in %s)" % (name, a.out))
        return 0
    bin_ = os.path.abspath(a.bin)
    lib = os.path.join(os.path.dirname(bin_), "libonnxconvert.so.0")
    os.environ.setdefault("ONNXCONVERT_LIBRARY", lib)
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    features = a.features.split(",")
    use_ct = "coreml" in features and have_ct()
    # one file of every model first; in each round the largest first, so
    # that no worker is left with one at the end, or with --deadline the
    # smallest first, so that a partial run covers as many models as it can
    rank, seen = {}, collections.Counter()
    for c in sorted(cases):
        model = meta_of(c)["name"]
        rank[c] = seen[model]
        seen[model] += 1
    sign = 1 if a.deadline else -1
    cases.sort(key=lambda c: (rank[c], sign * model_bytes(c)))
    jobs = []
    primary = heavy_primary(cases)
    for c in cases:
        heavy = model_bytes(c) > HEAVY_BYTES and not a.sample
        targets = SAMPLE_TARGETS if a.sample else HEAVY_TARGETS if heavy else TARGETS
        feats = [f for f in features if f in HEAVY_FEATURES] \
            if heavy and c not in primary else features
        jobs.append((bin_, c, os.path.abspath(a.work), targets, feats, use_ct, a.keep))
    t0 = time.time()
    results = []
    checks = []
    if a.sample:   # the judge must be able to say no
        checks = self_test(cases, os.path.join(os.path.abspath(a.work), "self-test")) or [None] * 3
    stop = t0 + a.deadline * 60 if a.deadline else None
    if a.jobs > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(a.jobs) as pool:
            for r in pool.imap_unordered(check_case, jobs):
                results.append(r)
                progress(r, len(results), len(jobs), t0)
                if stop and time.time() > stop:
                    pool.terminate()
                    break
    else:
        for j in jobs:
            results.append(check_case(j))
            progress(results[-1], len(results), len(jobs), t0)
            if stop and time.time() > stop:
                break
    if CT:
        CT.close()
    results.sort(key=lambda r: r["meta"]["file"])
    took = time.time() - t0
    exp = load_expected(os.path.join(HERE, "expected.txt"))
    summary = tally(results, exp)
    for line in checks:   # the self-test's three checks: None passed
        summary["passed" if line is None else "failed"] += 1
        if line:
            summary["failures"].append(line)
    doc = {"took": took, "jobs": a.jobs, "sample": a.sample, "apple_loader": use_ct,
           "planned": len(jobs),
           "summary": summary, "files": results, "coremltools": ct_packaging(a.out)}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
    write_md(a.md, doc, exp)
    return print_summary(name, summary, took)


def ct_packaging(out):
    """What coremltools' PyTorch front end made of the corpus (gen.py's
    index.json): the packages written and the ones it failed, with the
    stage and its message (ctpkg.py)."""
    try:
        with open(os.path.join(out, "index.json")) as f:
            index = json.load(f)
    except (OSError, ValueError):
        return None
    made = sorted(r["dir"] for r in index.get("files", []) if r.get("kind") == "coremltools")
    failed = [{"file": r["file"], "stage": r.get("stage"), "error": (r.get("error") or "")[:200]}
              for r in index.get("failed", []) if "_ct_" in r.get("file", "")]
    return {"made": made, "failed": sorted(failed, key=lambda r: r["file"])}


def heavy_primary(cases):
    """For every model with a file above HEAVY_BYTES, its file of the
    highest opset: the one where every feature runs."""
    best = {}
    for c in cases:
        m = meta_of(c)
        if m.get("kind") == "coremltools":   # its one feature, the import, takes seconds
            best[c] = c
            continue
        if model_bytes(c) > HEAVY_BYTES and (m["name"] not in best or
                                             (m["opset"] or 0) > (meta_of(best[m["name"]])["opset"] or 0)):
            best[m["name"]] = c
    return set(best.values())


def model_bytes(case):
    """The size of a case's model.onnx, or of its Core ML package."""
    p = os.path.join(case, "model.onnx")
    if os.path.exists(p):
        return os.path.getsize(p)
    return sum(os.path.getsize(os.path.join(r, f))
               for r, _, fs in os.walk(os.path.join(case, "model.mlpackage")) for f in fs)


def write_md(path, doc, exp):
    if path:
        import report
        with open(path, "w") as f:
            f.write(report.markdown(doc, exp))


def progress(r, i, n, t0):
    m = r["meta"]
    bad = [lab for lab, c in cells_of(r) if c.get("status") in ("wrong", "failed")]
    print("[%d/%d %4.0f s] %-45s %6.1f s%s%s" % (i, n, time.time() - t0, m["file"],
                                                 r.get("seconds", 0),
                                                 "  ERROR " + r["error"] if r.get("error") else "",
                                                 "  " + " ".join(bad) if bad else ""),
          file=sys.stderr, flush=True)


def tally(results, exp):
    """Counts per feature and status, and the sample's pass/fail split."""
    per = {f: {} for f in FEATURES}
    passed = failed = 0
    fails = []
    for r in results:
        if r.get("error"):
            failed += 1
            fails.append("%s: check.py: %s" % (r["meta"]["file"], r["error"]))
            continue
        for lab, c in cells_of(r):
            f = lab.split("@")[0]
            s = c.get("status")
            per[f][s] = per[f].get(s, 0) + 1
            listed = expected(exp, r["meta"]["file"], lab)
            if s in ("ok", "na", "nojudge") or (s in ("refused", "failed") and listed):
                passed += 1
            else:
                failed += 1
                fails.append("%s %s: %s %s" % (r["meta"]["file"], lab, s, c.get("why")))
    for pat, feat, why in stale(results, exp):
        failed += 1
        fails.append("expected.txt: '%s %s' matches only results that pass now: "
                     "take it out (%s)" % (pat, feat, why))
    return {"per_feature": per, "passed": passed, "failed": failed, "failures": fails}


def stale(results, exp):
    """The entries of expected.txt that match some cell of this run and
    only cells that pass: a fixed limit must leave the list, or the list
    stops saying what is true."""
    seen = {}
    for r in results:
        if r.get("error"):
            continue
        for lab, c in cells_of(r):
            for e in exp:
                if fnmatch.fnmatch(r["meta"]["file"], e[0]) and fnmatch.fnmatch(lab, e[1]):
                    good = c.get("status") in ("ok", "na", "nojudge")
                    seen[e] = seen.get(e, True) and good
    return [e for e in exp if seen.get(e)]


def print_summary(name, s, took):
    for f in FEATURES:
        if s["per_feature"][f]:
            print("%-12s %s" % (f, ", ".join("%s %d" % kv for kv in sorted(s["per_feature"][f].items()))))
    for line in s["failures"]:
        print("FAIL %s" % line)
    print("took %.0f s" % took)
    print("%s: %d passed, %d failed" % (name, s["passed"], s["failed"]))
    return 1 if s["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
