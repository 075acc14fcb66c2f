"""What the Python command-line tests share: counting checks, running the
tool. Each test ends with report(NAME), which prints the runner's
"NAME: N passed, N failed" line (", N skipped" after it when skip() was
called: what the machine lacks, never a failure)."""
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


def report(name):
    line = "%s: %d passed, %d failed" % (name, counts["passed"], counts["failed"])
    if counts["skipped"]:
        line += ", %d skipped" % counts["skipped"]
    print(line)
    return 1 if counts["failed"] else 0


ORT_CHECK = "../shared/tools/ort/ort-check.js"


def have_ort():
    """Whether ONNX Runtime's checker (../shared/tools/ort, run by node)
    can run here: node on PATH and onnxruntime-node installed beside it."""
    return shutil.which("node") is not None and os.path.exists(ORT_CHECK) and \
        subprocess.run(["node", "-e", "require('onnxruntime-node')"],
                       cwd=os.path.dirname(ORT_CHECK), capture_output=True).returncode == 0
