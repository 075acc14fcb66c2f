#!/usr/bin/env python3
"""File size, node count and largest error of every model of
../shared/models in each precision mode: the table of README.md ("Precision")
and, with --full, the longer one of docs/precision.md.

Modes: float32 (the model as it is), --dtype float16, --dtype float16
--keep-io-types, --dtype bfloat16 (with the --opset N the report's hint
names when nodes stay float32 for want of bfloat16: what a user does
next), --store float16.

Error: the largest |got - want| over the outputs, relative to the output's
largest |want| (at least 1), as --verify scales it (docs/evaluator.md);
`want` is the case's expected outputs (PyTorch's), `got` our evaluator's
outputs of the written model on the case's inputs (rounded to a half
input's type), each half op rounded to its type. With --full, ONNX Runtime
1.30's error on the same inputs beside it ("-" where it has no kernel or
fails to run the model); for a half output it is measured against the
expected outputs rounded to that type, so it may be off by up to half a
unit in the last place of the type (about 4.9e-4 of the value for
float16).

Usage: /usr/bin/python3 bench/precision_table.py [--full] [--build DIR]
       [MODEL_NAME ...]   (from the project root; default: every model)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, numpy_helper

MODELS = "../shared/models"
ORT = "../shared/tools/ort/ort-check.js"
MODES = (("float32", []),
         ("float16", ["--dtype", "float16"]),
         ("float16, --keep-io-types", ["--dtype", "float16", "--keep-io-types"]),
         ("bfloat16", ["--dtype", "bfloat16"]),
         ("--store float16", ["--store", "float16"]))


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t).astype(np.float64)


def rel_error(got_dir, want_dir):
    """Largest |got - want| relative to each output's scale."""
    worst = 0.0
    for f in sorted(os.listdir(want_dir)):
        if not f.startswith("output_"):
            continue
        want = read_pb(os.path.join(want_dir, f))
        got = read_pb(os.path.join(got_dir, f))
        if want.shape != got.shape:
            return float("inf")
        fin = np.abs(want[np.isfinite(want)])
        scale = max(1.0, float(fin.max()) if fin.size else 1.0)
        worst = max(worst, float(np.max(np.abs(got - want))) / scale if want.size else 0.0)
    return worst


def info_of(tool, model):
    return json.loads(subprocess.run([tool, "info", model, "--json"], capture_output=True,
                                     text=True).stdout)


def opset_of(tool, model):
    return next((o["version"] for o in info_of(tool, model).get("opset_import", [])
                 if o.get("domain") in ("", "ai.onnx")), 0)


HALF = {"FLOAT16": TensorProto.FLOAT16, "BFLOAT16": TensorProto.BFLOAT16}


def to_bf16_bits(a):
    """float32 -> bfloat16 bit patterns, rounded to nearest even."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def case_for(info, case, where, outputs_too=False):
    """The case's inputs rounded to the model's input types, in `where`,
    with the expected outputs beside them (a half model's inputs are half);
    outputs_too: the expected outputs rounded to the output types too (ONNX
    Runtime's check wants the types equal)."""
    shutil.rmtree(where, ignore_errors=True)
    sets = os.path.join(where, "test_data_set_0")
    shutil.copytree(case, sets)
    graph = info.get("graph", {})
    slots = [(f"input_{i}.pb", vi) for i, vi in enumerate(graph.get("inputs", []))]
    if outputs_too:
        slots += [(f"output_{i}.pb", vi) for i, vi in enumerate(graph.get("outputs", []))]
    for name, vi in slots:
        path = os.path.join(sets, name)
        want = HALF.get(vi.get("elem_type"))
        if want is None or not os.path.exists(path):
            continue
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        a = numpy_helper.to_array(t)
        if want == TensorProto.FLOAT16:
            out = numpy_helper.from_array(a.astype(np.float16), t.name)
        else:
            out = TensorProto(name=t.name, dims=list(a.shape), data_type=want,
                              raw_data=to_bf16_bits(a).tobytes())
        with open(path, "wb") as f:
            f.write(out.SerializeToString())
    return sets


def ours(tool, model, sets, tmp):
    out = os.path.join(tmp, "ours")
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([tool, "run", model, "--inputs", sets, "-o", out], capture_output=True,
                       text=True)
    return rel_error(out, sets) if p.returncode == 0 else None


def ort_error(model, case_root):
    """ONNX Runtime's largest absolute error scaled as rel_error does; None
    when it cannot run the model."""
    if not shutil.which("node") or not os.path.exists(ORT):
        return None
    p = subprocess.run(["node", ORT, case_root, "--model", model, "--rtol", "0",
                        "--atol", "1e30"], capture_output=True, text=True)
    m = re.search(r"max_abs_err=([0-9.eE+-]+)", p.stdout)
    if not m:
        return None
    scale = 1.0
    sets = os.path.join(case_root, "test_data_set_0")
    for f in os.listdir(sets):
        if f.startswith("output_"):
            a = np.abs(read_pb(os.path.join(sets, f)))
            a = a[np.isfinite(a)]
            scale = max(scale, float(a.max()) if a.size else 1.0)
    # ort-check's error is absolute over every output: scaled by the largest
    # output's scale it can only under-state a smaller output's relative one
    return float(m.group(1)) / scale


def fmt_err(e):
    if e is None:
        return "-"
    if e == float("inf"):
        return "inf"
    m, x = f"{e:.1e}".split("e")
    return f"{m}e{int(x)}"


def hinted_opset(tool, src, args, dst):
    """["--opset", "N"] when the report's hint names an opset, else []."""
    p = subprocess.run([tool, "convert", src, "-o", dst, "--json"] + args,
                       capture_output=True, text=True)
    try:
        hint = (json.loads(p.stdout).get("precision") or {}).get("hint") or ""
    except ValueError:
        hint = ""
    m = re.search(r"--opset (\d+)", hint)
    return ["--opset", m.group(1)] if m else []


def measure(tool, name, tmp, full):
    root = os.path.join(MODELS, name)
    src = os.path.join(root, "model.onnx")
    case = os.path.join(root, "test_data_set_0")
    rows = []
    for label, args in MODES:
        dst = os.path.join(tmp, "m.onnx")
        if os.path.exists(dst):
            os.remove(dst)
        extra = hinted_opset(tool, src, args, dst) if label == "bfloat16" else []
        if args or extra:
            p = subprocess.run([tool, "convert", src, "-o", dst] + extra + args,
                               capture_output=True, text=True)
            if p.returncode != 0:
                rows.append((label, None, None, None, None, p.stderr.strip()))
                continue
        else:
            shutil.copy(src, dst)
        note = " ".join(extra)
        info = info_of(tool, dst)
        sets = case_for(info, case, os.path.join(tmp, "case"))
        err = ours(tool, dst, sets, tmp)
        oerr = None
        if full:
            case_for(info, case, os.path.join(tmp, "case"), outputs_too=True)
            oerr = ort_error(dst, os.path.join(tmp, "case"))
        rows.append((label, os.path.getsize(dst), info.get("nodes_total"), err, oerr, note))
    return rows


def cell(row):
    _, size, nodes, err, _, note = row
    if size is None:
        return "refused"
    s = f"{size / 1e6:.2f} MB · {nodes} · {fmt_err(err)}"
    return s + (f" (`{note}`)" if note else "")


def main():
    args = sys.argv[1:]
    full = "--full" in args
    args = [a for a in args if a != "--full"]
    build = "build"
    if "--build" in args:
        i = args.index("--build")
        build = args[i + 1]
        del args[i:i + 2]
    tool = os.path.join(build, "onnx-convert")
    names = args or sorted(n for n in os.listdir(MODELS)
                           if os.path.exists(os.path.join(MODELS, n, "model.onnx")))
    with tempfile.TemporaryDirectory() as tmp:
        table = [(n, measure(tool, n, tmp, full)) for n in names]
    if full:
        print("| model | mode | file | nodes | error, our evaluator | error, ONNX Runtime |")
        print("|---|---|---|---|---|---|")
        for name, rows in table:
            for label, size, nodes, err, oerr, note in rows:
                what = label + (f" ({note})" if note else "")
                if size is None:
                    print(f"| {name} | {what} | refused: {note} | | | |")
                    continue
                print(f"| {name} | {what} | {size / 1e6:.2f} MB | {nodes} | {fmt_err(err)} "
                      f"| {fmt_err(oerr)} |")
        return 0
    print("| model | " + " | ".join(label for label, _ in MODES) + " |")
    print("|---" * (len(MODES) + 1) + "|")
    for name, rows in table:
        print(f"| {name} | " + " | ".join(cell(r) for r in rows) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
