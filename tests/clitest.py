"""What the Python command-line tests share: counting checks, running the
tool. Each test ends with report(NAME), which prints the runner's
"NAME: N passed, N failed" line (", N skipped" after it when skip() was
called: what the machine lacks, never a failure)."""
import json
import os
import shutil
import subprocess
import sys

counts = {"passed": 0, "failed": 0, "skipped": 0}


def check(cond, what):
    if cond:
        counts["passed"] += 1
    else:
        counts["failed"] += 1
        print("FAIL", what, file=sys.stderr)


def skip(what):
    counts["skipped"] += 1
    print("SKIP", what)


def run(*args, env=None):
    return subprocess.run(list(args), capture_output=True, text=True, env=env)


def run_json(bin_, *args, timeout=600):
    """Runs the tool with --json added: (exit status, the JSON report or
    {} when stdout holds none, stderr)."""
    p = subprocess.run([bin_] + [str(a) for a in args] + ["--json"], capture_output=True,
                       text=True, timeout=timeout)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    return p.returncode, rep, p.stderr


def report(name):
    line = "%s: %d passed, %d failed" % (name, counts["passed"], counts["failed"])
    if counts["skipped"]:
        line += ", %d skipped" % counts["skipped"]
    print(line)
    return 1 if counts["failed"] else 0


# The judges we did not write. tests/judges.sh (run by tests/run.sh) sets
# them up and says where through the environment: ../shared may be a
# read-only copy without their installed parts (CI's is), and then
# ONNX Runtime's npm packages are in NODE_PATH and coremltools is a copy
# in the build folder.
ORT_DIR = os.environ.get("OC_ORT_DIR", "../shared/tools/ort")
ORT_CHECK = os.path.join(ORT_DIR, "ort-check.js")
CT_DIR = os.environ.get("OC_CT_DIR", "../shared/tools/coremltools")
CT_CHECK = os.path.join(CT_DIR, "ct_check.py")
CT_SETUP = os.path.join(CT_DIR, "setup.sh")


def have_ort():
    """Whether ONNX Runtime's checker (ort-check.js, run by node) can run
    here: node on PATH and its npm packages beside it or in NODE_PATH
    (installed beside it now when they are not)."""
    if shutil.which("node") is None or not os.path.exists(ORT_CHECK):
        return False
    probe = ["node", "-e", "require('onnxruntime-node'); require('protobufjs')"]
    if subprocess.run(probe, cwd=ORT_DIR, capture_output=True).returncode == 0:
        return True
    return subprocess.run(["sh", os.path.join(ORT_DIR, "setup.sh")], capture_output=True).returncode == 0 \
        and subprocess.run(probe, cwd=ORT_DIR, capture_output=True).returncode == 0



def ort_batch(jobs, tmp, show_passes=False):
    """ONNX Runtime judges CASE MODEL pairs in one process (ort-check.js
    --batch); prints each failure (and each pass when asked) and returns
    (passed, failed)."""
    if not jobs:
        return 0, 0
    batch = os.path.join(tmp, "ort_jobs.txt")
    with open(batch, "w") as fh:
        fh.write("".join("%s %s\n" % j for j in jobs))
    r = subprocess.run(["node", ORT_CHECK, "--batch", batch], capture_output=True, text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln.split(" ")[0] in ("PASS", "FAIL", "ERROR")]
    passed = sum(ln.startswith("PASS") for ln in lines)
    for ln in lines:
        if not ln.startswith("PASS"):
            print("FAIL ONNX Runtime on the import: %s" % ln)
        elif show_passes:
            print("  " + ln)
    if not lines:
        print("FAIL ONNX Runtime: %s" % (r.stdout + r.stderr)[-300:])
    return passed, len(jobs) - passed

def ct_judge(pkg):
    """Apple's loader on package pkg: (accepted, {MIL op: count} of main,
    target, the last lines it printed)."""
    ct = subprocess.run([sys.executable, CT_CHECK, pkg, "--json"], capture_output=True,
                        text=True)
    try:
        rep = json.loads(ct.stdout)
    except ValueError:
        rep = {}
    ops = rep.get("functions", {}).get("main", {}).get("ops", {})
    return (ct.returncode == 0 and bool(rep.get("ok")), ops, rep.get("target"),
            (ct.stdout + ct.stderr)[-300:])


def have_ct():
    """Whether Apple's loader (coremltools' ct_check.py) can run here: set
    up (its native helpers built; setup.sh does nothing when they are)."""
    return os.access(CT_CHECK, os.X_OK) and \
        subprocess.run([CT_SETUP, "--no-selftest"], capture_output=True).returncode == 0
