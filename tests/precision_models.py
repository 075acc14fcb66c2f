#!/usr/bin/env python3
"""--dtype and --store over every model of ../shared/models, through the
command line (issue 23, "Done when" 1, 3 and 4):

- to float16: exit 0, the result passes `check` (topological order
  included), the initializers take fewer bytes, the report names the
  nodes kept;
- to bfloat16: at opset >= 13 as above; below 13 no op has the type, so
  the report must list the nodes kept and change nothing (printed), and
  the opset its hint names must convert them (--verify passing);
- the float16 and bfloat16 results back to float32: exit 0, valid, no
  half input or output left, --verify passes;
- --store float16: valid; the initializer bytes halve, up to the
  initializers of fewer than 16 elements, which stay (src/precision/precision.h);
- the --store result computes exactly what the original computes with its
  weights rounded to float16 (every float32 initializer of 16 elements or
  more rounded by numpy, kept float32): our evaluator's outputs of the two
  models on the case's inputs are equal bit for bit (the Cast back to
  float32 is exact, the rest is the same float32 computation);
- ONNX Runtime 1.30 (when node and ../shared/tools/ort are there) runs the
  --keep-io-types float16 result and the --store result on the model's
  own case: the run must succeed; and on the float16 (with and without
  --keep-io-types) and bfloat16 results its outputs must agree with our
  evaluator's on the same model (inputs rounded to its input types)
  within --verify's tolerance for the type (src/eval/verify.h: float16 rtol
  1e-2, atol 3e-2 times the output's largest magnitude; bfloat16 5e-2,
  1.25e-1), or it must refuse only for want of a kernel ("Could not find
  an implementation": it loaded and checked the model first; most
  bfloat16 kernels are missing from its CPU build);
- --verify on the float16 and bfloat16 conversions: the converted model
  computes what the original does within the tolerance of its type (on
  the case's inputs);
- bench/precision_table.py, which measures README's table, runs on one
  model and its float16 file is half the float32 one;
- the Python package passes the options through (convert(..., dtype=...,
  keep_io_types=..., keep_float32=...), optimize(..., store=...)), and
  dtype with store is a UsageError (skipped without numpy or the library
  beside ONNX_CONVERT);
Usage: precision_models.py ONNX_CONVERT (from the project root). Prints
"precision_models: N passed, N failed[, N skipped]".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from clitest import check, report, run, skip
from clitest import have_ort as ort_available

MODELS = "../shared/models"
from clitest import ORT_CHECK as ORT  # noqa: E402


def convert(bin_, src, dst, *args):
    p = run(bin_, "convert", src, "-o", dst, "--json", *args)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    return p.returncode, rep


def valid(bin_, path):
    return run(bin_, "check", path).returncode == 0


def ort_runs(case, model):
    """(ran, line): whether ONNX Runtime ran the model on the case."""
    p = subprocess.run(["node", ORT, case, "--model", model], capture_output=True, text=True)
    line = (p.stdout.strip().splitlines() or [""])[0]
    return line.startswith(("PASS", "FAIL")), line


def verified(rep):
    """Whether --verify ran and found the two models equal."""
    return rep.get("status") == "ok" and (rep.get("verification") or {}).get("result") == "equal"


# --verify's tolerances (src/eval/verify.h VF_FLOAT16_RTOL/ATOL,
# VF_BFLOAT16_RTOL/ATOL): atol is relative to the output's largest magnitude
F16_RTOL, F16_ATOL = 1e-2, 3e-2
BF16_RTOL, BF16_ATOL = 5e-2, 1.25e-1


def round_inputs(bin_, model, sets):
    """Rounds the float32 input files in `sets` to the model's input types
    (a half model takes half inputs), in place."""
    import numpy as np
    from onnx import TensorProto, numpy_helper
    info = json.loads(run(bin_, "info", model, "--json").stdout)
    for i, vi in enumerate(info.get("graph", {}).get("inputs", [])):
        path = os.path.join(sets, f"input_{i}.pb")
        kind = vi.get("elem_type")
        if kind not in ("FLOAT16", "BFLOAT16") or not os.path.exists(path):
            continue
        t = TensorProto()
        t.ParseFromString(open(path, "rb").read())
        a = numpy_helper.to_array(t).astype(np.float32)
        if kind == "FLOAT16":
            out = numpy_helper.from_array(a.astype(np.float16), t.name)
        else:   # nearest even, as the converter rounds
            u = a.view(np.uint32).astype(np.uint64)
            bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
            out = TensorProto(name=t.name, dims=list(a.shape), data_type=TensorProto.BFLOAT16,
                              raw_data=bits.tobytes())
        open(path, "wb").write(out.SerializeToString())


def ort_agrees(bin_, case, model, tmp, rtol=F16_RTOL, atol=F16_ATOL):
    """(ok, line): ONNX Runtime's outputs of `model` on the case's inputs
    (rounded to a half model's input types) against our evaluator's
    outputs of the same model, within --verify's tolerance for the type.
    ONNX Runtime without a kernel for the type ("Could not find an
    implementation") counts as agreeing: it loaded and checked the model
    first, and the line says so."""
    import numpy as np
    from onnx import TensorProto, numpy_helper
    mine = os.path.join(tmp, "mine")
    shutil.rmtree(mine, ignore_errors=True)
    sets = os.path.join(mine, "test_data_set_0")
    shutil.copytree(os.path.join(case, "test_data_set_0"), sets)
    for f in os.listdir(sets):
        if f.startswith("output_"):
            os.remove(os.path.join(sets, f))
    round_inputs(bin_, model, sets)
    p = run(bin_, "run", model, "--inputs", sets, "-o", sets)
    if p.returncode != 0:
        return False, "our evaluator: " + p.stderr.strip()
    scale = 1.0
    for f in os.listdir(sets):
        if f.startswith("output_"):
            t = TensorProto()
            t.ParseFromString(open(os.path.join(sets, f), "rb").read())
            a = numpy_helper.to_array(t).astype(np.float64)
            if a.size:
                scale = max(scale, float(np.max(np.abs(a))))
    p = subprocess.run(["node", ORT, mine, "--model", model, "--rtol", str(rtol),
                        "--atol", str(atol * scale)], capture_output=True, text=True)
    line = (p.stdout.strip().splitlines() or [p.stderr.strip()])[0]
    return line.startswith("PASS") or "Could not find an implementation" in line, line


def outputs(bin_, case, model, where):
    """Our evaluator's outputs of model on the case's inputs, by file name
    (None when the run fails)."""
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    src = os.path.join(case, "test_data_set_0")
    for f in os.listdir(src):
        if f.startswith("input_"):
            shutil.copy(os.path.join(src, f), where)
    if run(bin_, "run", model, "--inputs", where, "-o", where).returncode != 0:
        return None
    return {f: open(os.path.join(where, f), "rb").read()
            for f in sorted(os.listdir(where)) if f.startswith("output_")}


def store_exact(bin_, case, stored, tmp):
    """(ok, why): the --store model's outputs equal, bit for bit, those of
    the original with its weights rounded to float16 and kept float32."""
    import numpy as np
    import onnx
    from onnx import TensorProto, numpy_helper
    m = onnx.load(os.path.join(case, "model.onnx"))
    n = 0
    for i, t in enumerate(m.graph.initializer):
        if t.data_type == TensorProto.FLOAT and int(np.prod(t.dims)) >= 16:
            a = numpy_helper.to_array(t).astype(np.float16).astype(np.float32)
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(a, t.name))
            n += 1
    ref = os.path.join(tmp, "rounded.onnx")
    onnx.save(m, ref)
    want = outputs(bin_, case, ref, os.path.join(tmp, "want"))
    got = outputs(bin_, case, stored, os.path.join(tmp, "got"))
    if not want or want != got:
        return False, f"{n} weights rounded; outputs {'differ' if want else 'not computed'}"
    return True, f"{n} weights rounded; {len(want)} outputs equal"


def back_to_float32(bin_, name, half, tmp, what):
    """The half result back to float32: exit 0, valid, no half value left
    at the inputs and outputs, and --verify (float32 against the half
    model, within the half type's tolerance) passes."""
    out = os.path.join(tmp, name + "." + what + ".back.onnx")
    rc, rep = convert(bin_, half, out, "--dtype", "float32", "--verify")
    back = json.loads(run(bin_, "info", out, "--json").stdout) if rc == 0 else {}
    g = back.get("graph", {})
    types = {i.get("elem_type") for i in g.get("inputs", []) + g.get("outputs", [])}
    check(rc == 0 and valid(bin_, out) and not types & {"FLOAT16", "BFLOAT16"} and
          verified(rep), f"{name} {what} back to float32: rc {rc} {types} "
          f"{rep.get('verification')} {(rep.get('error') or {}).get('message')}")


def hinted(bin_, name, src, pc, tmp):
    """When nodes stay float32 for want of the type, the hint names an
    opset: converting to it at the same time converts every such node it
    counted, and --verify passes."""
    kept = [k for k in pc.get("nodes_kept", []) if "has no type" in k["reason"]]
    hint = pc.get("hint") or ""
    if not kept:
        check(not hint, f"{name} bfloat16: a hint with nothing kept: {hint}")
        return
    at = hint.split("--opset ")[-1].rstrip(")") if "--opset " in hint else ""
    check(at.isdigit(), f"{name} bfloat16: {len(kept)} nodes kept, hint '{hint}'")
    if not at.isdigit():
        return
    can = "of the" in hint and hint.split(" of the ")[0].split()[-1]
    rc, rep = convert(bin_, src, os.path.join(tmp, name + ".bf16hint.onnx"), "--opset", at,
                      "--dtype", "bfloat16", "--verify")
    left = [k for k in (rep.get("precision") or {}).get("nodes_kept", [])
            if "has no type" in k["reason"]]
    check(rc == 0 and verified(rep) and can and len(kept) - len(left) >= int(can),
          f"{name} bfloat16 --opset {at}: rc {rc}, still kept {len(left)}, hint '{hint}'")


def one(bin_, name, tmp, have_ort):
    src = os.path.join(MODELS, name, "model.onnx")
    info = json.loads(run(bin_, "info", src, "--json").stdout)
    opset = next((o["version"] for o in info.get("opset_import", [])
                  if o.get("domain") in ("", "ai.onnx")), None)
    h = os.path.join(tmp, name + ".f16.onnx")
    rc, rep = convert(bin_, src, h, "--dtype", "float16", "--verify")
    pc = rep.get("precision") or {}
    b = pc.get("initializer_bytes", {})
    check(rc == 0 and valid(bin_, h) and b.get("after", 1) < b.get("before", 0),
          f"{name} float16: rc {rc}, bytes {b}, {(rep.get('error') or {}).get('message')}")
    check(verified(rep), f"{name} float16 --verify: {rep.get('verification')}")
    back_to_float32(bin_, name, h, tmp, "float16")
    bf = os.path.join(tmp, name + ".bf16.onnx")
    rc, rep = convert(bin_, src, bf, "--dtype", "bfloat16", "--verify")
    pc = rep.get("precision") or {}
    check(verified(rep), f"{name} bfloat16 --verify: {rep.get('verification')}")
    if opset is not None and opset < 13:
        kept = pc.get("nodes_kept", [])
        check(rc == 0 and pc.get("nodes_converted") == 0 and pc.get("casts") == 0 and kept,
              f"{name} bfloat16 at opset {opset}: {pc}")
        # checked, not skipped: the hint's opset converts it (hinted)
        print(f"  {name} bfloat16: opset {opset} < 13, {len(kept)} nodes stay float32 "
              f"({kept[0]['reason'] if kept else '?'})")
    else:
        check(rc == 0 and valid(bin_, bf), f"{name} bfloat16: rc {rc}")
        back_to_float32(bin_, name, bf, tmp, "bfloat16")
    hinted(bin_, name, src, pc, tmp)
    s = os.path.join(tmp, name + ".store.onnx")
    rc, rep = convert(bin_, src, s, "--store", "float16")
    pc = rep.get("precision") or {}
    b = pc.get("initializer_bytes", {})
    # what stays: the float32 initializers under 16 elements (<= 64 bytes
    # each) and the non-float ones (IR 3 models too: their initializers,
    # also graph inputs, are stored the same way)
    small = 64 * info["graph"]["initializers"]["count"]
    check(rc == 0 and valid(bin_, s) and pc.get("stored", 0) > 0 and
          2 * b.get("after", 1 << 62) <= b.get("before", 0) + 2 * small,
          f"{name} store: rc {rc}, bytes {b}")
    ok, why = store_exact(bin_, os.path.join(MODELS, name), s, tmp) if rc == 0 else (False, "")
    check(ok, f"{name} store: against the original with float16-rounded weights: {why}")
    if not have_ort:
        return
    k = os.path.join(tmp, name + ".f16io.onnx")
    convert(bin_, src, k, "--dtype", "float16", "--keep-io-types")
    for what, m in (("float16 --keep-io-types", k), ("--store float16", s)):
        ran, line = ort_runs(os.path.join(MODELS, name), m)
        check(ran, f"{name} {what}: ONNX Runtime: {line}")
        print(f"  {name} {what}: ONNX Runtime against the float32 outputs: {line}")
    for what, m, tol in (("float16 --keep-io-types", k, (F16_RTOL, F16_ATOL)),
                         ("float16", h, (F16_RTOL, F16_ATOL)),
                         ("bfloat16", bf, (BF16_RTOL, BF16_ATOL))):
        if not os.path.exists(m):
            continue
        ok, line = ort_agrees(bin_, os.path.join(MODELS, name), m, tmp, *tol)
        check(ok, f"{name} {what}: ONNX Runtime against our evaluator: {line}")
        print(f"  {name} {what}: ONNX Runtime against our evaluator: {line}")


PY = r"""
import json, sys
import onnxconvert as oc
data = open(sys.argv[1], "rb").read()
_, r = oc.convert(data, dtype="float16", keep_io_types=True, keep_float32=["Softmax"],
                  report=True)
_, s = oc.optimize(data, store="float16", report=True)
try:
    oc.convert(data, dtype="float16", store="float16")
    err = None
except oc.UsageError as e:
    err = str(e)
print(json.dumps({"convert": r["precision"], "store": s["precision"], "err": err}))
"""


def python_api(bin_):
    lib = os.path.join(os.path.dirname(os.path.abspath(bin_)), "libonnxconvert.so.0")
    model = os.path.join(MODELS, "vit_tiny_opset17", "model.onnx")
    if not os.path.exists(lib) or not os.path.exists(model) or \
            subprocess.run(["/usr/bin/python3", "-c", "import numpy"],
                           capture_output=True).returncode != 0:
        skip("precision_models: Python: no numpy, library or vit_tiny_opset17")
        return
    env = dict(os.environ, PYTHONPATH="python", ONNXCONVERT_LIBRARY=lib)
    p = subprocess.run(["/usr/bin/python3", "-c", PY, model], capture_output=True, text=True,
                       env=env)
    try:
        got = json.loads(p.stdout)
    except ValueError:
        check(False, f"Python: {p.stderr.strip()[-300:]}")
        return
    c = got["convert"]
    check(c["dtype"] == "float16" and c["nodes_converted"] > 0 and c["nodes_kept"] and
          all(k["op"] == "Softmax" and k["reason"] == "--keep-float32" for k in c["nodes_kept"]),
          f"Python convert: {c}")
    check(got["store"]["store"] == "float16" and got["store"]["stored"] > 0,
          f"Python optimize store: {got['store']}")
    check(got["err"] is not None and "--dtype" in got["err"], f"Python dtype+store: {got['err']}")


def bench_table(bin_):
    """bench/precision_table.py (README's table) still runs: one model's
    row has a cell per mode, none refused, and float16 halves the file."""
    build = os.path.dirname(os.path.abspath(bin_))
    p = subprocess.run(["/usr/bin/python3", "bench/precision_table.py", "--build", build,
                        "squeezenet1_1_opset13"], capture_output=True, text=True)
    rows = [r for r in p.stdout.splitlines() if r.startswith("| squeezenet1_1_opset13 |")]
    cells = rows[0].strip("|").split("|")[1:] if rows else []
    mb = [float(c.split("MB")[0]) if "MB" in c else 0.0 for c in cells]
    check(p.returncode == 0 and len(cells) == 5 and "refused" not in rows[0] and
          0 < 2 * mb[1] <= mb[0] * 1.01, f"bench/precision_table.py: rc {p.returncode} "
          f"{rows or p.stderr.strip()[-200:]}")


def main():
    if len(sys.argv) != 2:
        print("usage: precision_models.py ONNX_CONVERT", file=sys.stderr)
        return 2
    bin_ = sys.argv[1]
    if not os.path.isdir(MODELS):
        skip("precision_models: no ../shared/models")
        return report("precision_models")
    have_ort = ort_available()
    if not have_ort:
        skip("precision_models: ONNX Runtime: node or ../shared/tools/ort absent")
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(MODELS)):
            if os.path.exists(os.path.join(MODELS, name, "model.onnx")):
                one(bin_, name, tmp, have_ort)
    python_api(bin_)
    bench_table(bin_)
    return report("precision_models")


if __name__ == "__main__":
    sys.exit(main())
