#!/usr/bin/env python3
"""--dtype over the ONNX backend node tests whose models hold subgraphs
(If, Loop, Scan, SequenceMap, and the expanded functions built on them:
Range, AffineGrid, FlexAttention, LinearAttention), through the command
line (issue 23: "over the main graph, subgraphs and functions"):

- float16, bfloat16 and float16 with --keep-io-types, each with --verify
  on the case's own inputs: exit 0 (the result passes the checker and
  computes what the original does within the type's tolerance);
- no node is kept for "control flow" any more (bodies are converted node
  by node), and at least one node converts in each case;
- ONNX Runtime 1.30 (when node and ../shared/tools/ort are there): every
  case whose original it runs and passes, it also runs on the
  --keep-io-types float16 result and passes within --verify's float16
  tolerance (src/eval/verify.h: rtol 1e-2, atol 3e-2); the others (sequence
  inputs, preview ops, opsets it lacks) are left to the evaluator.

Skips (one SKIP line) when no backend data is found.
Usage: precision_bodies.py ONNX_CONVERT (from the project root). Prints
"precision_bodies: N passed, N failed[, N skipped]".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from clitest import check, have_ort, report, run, skip

# node tests whose models hold graph attributes (checked below with info)
NAMES = re.compile(r"^test_(if|loop|scan|sequence_map|flexattention)|"
                   r"^test_(range|affine_grid|linear_attention)_.*_expanded$")
from clitest import ORT_CHECK as ORT  # noqa: E402
MODES = [["--dtype", "float16"], ["--dtype", "bfloat16"],
         ["--dtype", "float16", "--keep-io-types"]]


def node_dir():
    for base in (os.environ.get("ONNX_BACKEND_DATA"), "../shared/testdata/onnx-backend"):
        if base and os.path.isdir(os.path.join(base, "node")):
            return os.path.join(base, "node")
    return None


def has_subgraphs(bin_, model):
    p = run(bin_, "info", model, "--json")
    try:
        return json.loads(p.stdout).get("subgraphs", 0) > 0
    except ValueError:
        return False




def ort_batch(lines, tmp, *tol):
    """PASS/FAIL/ERROR per line of "CASE [MODEL]" from one ONNX Runtime run."""
    path = os.path.join(tmp, "batch.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = run("node", ORT, "--batch", path, *tol)
    return [ln.split()[0] for ln in p.stdout.splitlines()
            if ln.split() and ln.split()[0] in ("PASS", "FAIL", "ERROR")]


def ort_check(nodes, cases, tmp):
    """The --keep-io-types float16 results (tmp/CASE.onnx) in ONNX Runtime."""
    if not have_ort():
        skip("precision_bodies: ONNX Runtime (node, ../shared/tools/ort) not available")
        return
    dirs = [os.path.join(nodes, c) for c in cases]
    orig = ort_batch(dirs, tmp)
    ok = [d for d, r in zip(dirs, orig) if r == "PASS"]
    check(len(orig) == len(dirs) and len(ok) >= 5,
          "ONNX Runtime passes %d originals of %d" % (len(ok), len(dirs)))
    lines = ["%s %s" % (d, os.path.join(tmp, os.path.basename(d) + ".onnx")) for d in ok]
    res = ort_batch(lines, tmp, "--rtol", "1e-2", "--atol", "3e-2")
    for line, r in zip(lines, res):
        check(r == "PASS", "ONNX Runtime on the float16 --keep-io-types result: %s %s" % (r, line))
    check(len(res) == len(lines), "ONNX Runtime gave %d results for %d" % (len(res), len(lines)))


def main():
    bin_ = sys.argv[1]
    nodes = node_dir()
    if not nodes:
        skip("precision_bodies: no ONNX backend node tests")
        return report("precision_bodies")
    cases = [c for c in sorted(os.listdir(nodes)) if NAMES.search(c)]
    cases = [c for c in cases if has_subgraphs(bin_, os.path.join(nodes, c, "model.onnx"))]
    check(len(cases) >= 30, "only %d backend cases with subgraphs found" % len(cases))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.onnx")
        for c in cases:
            model = os.path.join(nodes, c, "model.onnx")
            for mode in MODES:
                what = "%s %s" % (c, " ".join(mode))
                p = run(bin_, "convert", model, "-o", out, "--verify", "--json", *mode)
                try:
                    rep = json.loads(p.stdout)
                except ValueError:
                    rep = {}
                pc = rep.get("precision") or {}
                ver = (rep.get("verification") or {}).get("result")
                check(p.returncode == 0 and ver == "equal",
                      "%s: exit %d, verify %s: %s" % (what, p.returncode, ver,
                                                      p.stderr.strip()[-300:]))
                kept = [k for k in pc.get("nodes_kept", [])
                        if k.get("reason", "").startswith("control flow")]
                check(not kept, "%s: kept for control flow: %s" % (what, kept))
                if mode == MODES[0]:
                    check(pc.get("nodes_converted", 0) > 0,
                          "%s: no node converted" % what)
                if mode == MODES[2] and p.returncode == 0:
                    shutil.copy(out, os.path.join(tmp, c + ".onnx"))
        ort_check(nodes, cases, tmp)
    return report("precision_bodies")


if __name__ == "__main__":
    sys.exit(main())
