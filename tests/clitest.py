"""What the Python command-line tests share: counting checks, running the
tool. Each test ends with report(NAME), which prints the runner's
"NAME: N passed, N failed" line."""
import subprocess
import sys

counts = {"passed": 0, "failed": 0}


def check(cond, what):
    if cond:
        counts["passed"] += 1
    else:
        counts["failed"] += 1
        print("FAIL", what, file=sys.stderr)


def run(*args, env=None):
    return subprocess.run(list(args), capture_output=True, text=True, env=env)


def report(name):
    print("%s: %d passed, %d failed" % (name, counts["passed"], counts["failed"]))
    return 1 if counts["failed"] else 0
