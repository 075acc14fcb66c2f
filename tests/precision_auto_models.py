#!/usr/bin/env python3
"""--dtype float16 --auto over every model of ../shared/models, through the
command line (issue 23, "Done when" 2), on each model's own case inputs:

- with the default tolerance (rtol 1e-2, float16's atol 3e-2 of the
  output's scale) and with a tight one (--atol 1e-3, so that the search
  has to keep nodes): exit 0; the report's "precision"."auto" says the
  error reached is within (<= 1) in at most 2*ceil(log2(n))+3 evaluations
  for n candidate nodes, and every node it lists is in "nodes_kept" with
  reason "--auto: ..."; the result passes `check` (topological order
  included) and has no Cast reading a Cast;
- judged again outside the search: our evaluator runs the original and
  the result on the case's inputs (`run`) and every output is within
  |got - want| <= atol * scale + rtol * |want| (read here with a small
  protobuf reader: the test needs neither numpy nor onnx);
- --rtol, --atol and --inputs without --auto, and --auto without --dtype
  float16/bfloat16, are usage errors (exit 2);
- the Python package passes auto/rtol/atol through (skipped without the
  library beside ONNX_CONVERT, or without numpy, which the package needs).

Prints per model the nodes kept and the error reached. Usage:
precision_auto_models.py ONNX_CONVERT (from the project root). Prints
"precision_auto_models: N passed, N failed[, N skipped]".
"""
import json
import math
import os
import shutil
import struct
import sys
import tempfile

from clitest import check, report, run, skip

MODELS = "../shared/models"
TIGHT_ATOL = 1e-3


def evals_bound(n):
    return 2 * (math.ceil(math.log2(n)) if n > 1 else 0) + 3


# ---- a minimal protobuf reader (no onnx or numpy package needed) ----------

def pb_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def pb_fields(b):
    """(field number, wire type, value) of one message: ints for varints
    and fixed fields, bytes for length-delimited ones."""
    i = 0
    while i < len(b):
        key, i = pb_varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = pb_varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        elif w == 2:
            n, i = pb_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(f"wire type {w}")
        yield f, w, v


def graph_nodes(path):
    """[(op_type, name, inputs, outputs)] of the main graph of a model file."""
    b = memoryview(open(path, "rb").read())
    nodes = []
    for f, _, g in pb_fields(b):
        if f != 7:                     # ModelProto.graph
            continue
        for gf, _, n in pb_fields(g):
            if gf != 1:                # GraphProto.node
                continue
            d = {"in": [], "out": [], "name": "", "op": ""}
            for nf, _, v in pb_fields(n):
                if nf in (1, 2):
                    d["in" if nf == 1 else "out"].append(bytes(v).decode())
                elif nf in (3, 4):
                    d["name" if nf == 3 else "op"] = bytes(v).decode()
            nodes.append(d)
    return nodes


def cast_pair(path):
    """The first Cast reading a Cast, or ""."""
    nodes = graph_nodes(path)
    made = {o: n for n in nodes for o in n["out"]}
    for n in nodes:
        p = made.get(n["in"][0]) if n["op"] == "Cast" and n["in"] else None
        if p is not None and p["op"] == "Cast":
            return f"Cast {n['name']} reads Cast {p['name']}"
    return ""


def tensor_values(path):
    """The numbers of a TensorProto file (float types and int64), as floats."""
    b = open(path, "rb").read()
    dt, raw, floats = 0, None, []
    for f, w, v in pb_fields(memoryview(b)):
        if f == 2:
            dt = v
        elif f == 4 and w == 2:
            floats += list(struct.unpack(f"<{len(v) // 4}f", v))
        elif f == 9:
            raw = bytes(v)
    if raw is None:
        return floats
    if dt == 1:
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if dt == 10:
        return list(struct.unpack(f"<{len(raw) // 2}e", raw))
    if dt == 11:
        return list(struct.unpack(f"<{len(raw) // 8}d", raw))
    if dt == 16:
        return [struct.unpack("<f", b"\0\0" + raw[k:k + 2])[0] for k in range(0, len(raw), 2)]
    if dt == 7:
        return [float(x) for x in struct.unpack(f"<{len(raw) // 8}q", raw)]
    raise ValueError(f"data type {dt}")


def pb_key(f, w):
    return pb_put_varint((f << 3) | w)


def pb_put_varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def retype_input(src, dst_orig, dst_half):
    """Writes the float32 TensorProto src rounded to float16 twice: as
    float32 (for the original) and as float16 (for a model taking float16),
    so that both models see the same numbers, as --auto feeds them."""
    b = memoryview(open(src, "rb").read())
    dims, name, vals = [], b"", tensor_values(src)
    for f, w, v in pb_fields(b):
        if f == 1 and w == 0:
            dims.append(v)
        elif f == 1 and w == 2:
            i = 0
            while i < len(v):
                x, i = pb_varint(v, i)
                dims.append(x)
        elif f == 8:
            name = bytes(v)
    half = struct.pack(f"<{len(vals)}e", *vals)
    rounded = struct.unpack(f"<{len(vals)}e", half)
    for path, dt, raw in ((dst_orig, 1, struct.pack(f"<{len(vals)}f", *rounded)),
                          (dst_half, 10, half)):
        msg = b"".join(pb_key(1, 0) + pb_put_varint(d) for d in dims)
        msg += pb_key(2, 0) + pb_put_varint(dt)
        msg += pb_key(8, 2) + pb_put_varint(len(name)) + name
        msg += pb_key(9, 2) + pb_put_varint(len(raw)) + raw
        open(path, "wb").write(msg)


def split_inputs(bin_, dst, case, tmp):
    """Two input folders: the original's and the result's (float inputs the
    result takes in float16 rounded for both)."""
    info = json.loads(run(bin_, "info", dst, "--json").stdout)
    a, b = os.path.join(tmp, "in_orig"), os.path.join(tmp, "in_half")
    os.makedirs(a, exist_ok=True)
    os.makedirs(b, exist_ok=True)
    for k, vi in enumerate(info["graph"]["inputs"]):
        src = os.path.join(case, f"input_{k}.pb")
        if not os.path.exists(src):    # an input with an initializer (IR 3)
            break
        if vi.get("elem_type") == "FLOAT16":
            retype_input(src, os.path.join(a, f"input_{k}.pb"), os.path.join(b, f"input_{k}.pb"))
        else:
            for d in (a, b):
                shutil.copy(src, os.path.join(d, f"input_{k}.pb"))
    return a, b


def outputs_of(bin_, model, case, out):
    """Our evaluator's outputs of model on the case's inputs, or None."""
    os.makedirs(out, exist_ok=True)
    if run(bin_, "run", model, "--inputs", case, "-o", out).returncode != 0:
        return None
    n = len([f for f in os.listdir(out) if f.startswith("output_")])
    return [tensor_values(os.path.join(out, f"output_{k}.pb")) for k in range(n)]


def rejudge(bin_, src, dst, case, tmp, rtol, atol):
    """The result's outputs against the original's on the case's inputs, as
    the tolerance measures them (<= 1: within)."""
    ins_orig, ins_half = split_inputs(bin_, dst, case, tmp)
    want = outputs_of(bin_, src, ins_orig, os.path.join(tmp, "want"))
    got = outputs_of(bin_, dst, ins_half, os.path.join(tmp, "got"))
    if want is None or got is None or len(want) != len(got):
        return math.inf
    e = 0.0
    for g, w in zip(got, want):
        if len(g) != len(w):
            return math.inf
        scale = max([1.0] + [abs(x) for x in w if math.isfinite(x)])
        for x, y in zip(g, w):
            if x != y:
                d = abs(x - y) / (atol * scale + rtol * abs(y))
                e = max(e, d if d == d else math.inf)
    return e


def one(bin_, name, tmp, extra, what):
    src = os.path.join(MODELS, name, "model.onnx")
    case = os.path.join(MODELS, name, "test_data_set_0")
    dst = os.path.join(tmp, f"{name}.{what}.onnx")
    p = run(bin_, "convert", src, "-o", dst, "--dtype", "float16", "--auto",
            "--inputs", case, "--json", *extra)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    pc = rep.get("precision") or {}
    a = pc.get("auto") or {}
    msg = (rep.get("error") or {}).get("message") or p.stderr.strip()
    check(p.returncode == 0 and a, f"{name} {what}: rc {p.returncode}: {msg}")
    if p.returncode != 0 or not a:
        return
    kept = a.get("nodes_kept", [])
    err = a.get("error")
    print(f"  {name} {what}: {len(kept)} of {a.get('candidates')} nodes kept float32, "
          f"error {err:.3g} of the tolerance (fully converted {a.get('error_full', math.inf) or math.inf:.3g}), "
          f"{a.get('evaluations')} evaluations" + (f": {', '.join(kept[:6])}" if kept else "")
          + (", ..." if len(kept) > 6 else ""))
    check(err is not None and err <= 1, f"{name} {what}: error {err}")
    check(a.get("evaluations", 99) <= evals_bound(max(a.get("candidates", 1), 1)),
          f"{name} {what}: {a.get('evaluations')} evaluations for {a.get('candidates')} nodes")
    reasons = {k["node"]: k["reason"] for k in pc.get("nodes_kept", [])}
    check(all(reasons.get(k, "").startswith("--auto: error ") for k in kept),
          f"{name} {what}: kept nodes not reported: {[(k, reasons.get(k)) for k in kept][:3]}")
    check(run(bin_, "check", dst).returncode == 0, f"{name} {what}: the result fails check")
    pair = cast_pair(dst)
    check(pair == "", f"{name} {what}: {pair}")
    e = rejudge(bin_, src, dst, case, os.path.join(tmp, f"{name}.{what}"),
                a.get("rtol", 1e-2), a.get("atol", 3e-2))
    check(e <= 1, f"{name} {what}: judged again, error {e:.3g} times the tolerance")


def usage_errors(bin_, tmp):
    src = os.path.join(MODELS, "vit_tiny_opset17", "model.onnx")
    out = os.path.join(tmp, "u.onnx")
    for args in (["--rtol", "0.1"], ["--dtype", "float16", "--atol", "0.1"],
                 ["--dtype", "float16", "--inputs", tmp], ["--auto"],
                 ["--dtype", "float32", "--auto"], ["--dtype", "float16", "--auto", "--rtol", "-1"]):
        p = run(bin_, "convert", src, "-o", out, *args)
        check(p.returncode == 2 and not os.path.exists(out),
              f"convert {' '.join(args)}: exit {p.returncode}, {p.stderr.strip()}")


def python_pass_through(bin_):
    lib = os.path.join(os.path.dirname(os.path.abspath(bin_)), "libonnxconvert.so.0")
    if not os.path.exists(lib):
        skip("python: no libonnxconvert.so.0 beside " + bin_)
        return
    sys.path.insert(0, "python")
    os.environ.setdefault("ONNXCONVERT_LIBRARY", lib)
    try:
        import onnxconvert
    except Exception as e:   # the package could not load its library
        skip(f"python: {e}")
        return
    src = os.path.join(MODELS, "vit_tiny_opset17", "model.onnx")
    data = open(src, "rb").read()
    _, rep = onnxconvert.convert(data, dtype="float16", auto=True, atol=TIGHT_ATOL,
                                 report=True)
    a = (rep.get("precision") or {}).get("auto") or {}
    check(a.get("atol") == TIGHT_ATOL and a.get("error", 9) <= 1, f"python auto: {a}")
    try:
        onnxconvert.convert(data, rtol=0.1)
        check(False, "python rtol without auto accepted")
    except onnxconvert.UsageError:
        check(True, "")


def main():
    bin_ = sys.argv[1]
    if not os.path.isdir(MODELS):
        skip(f"{MODELS} missing")
        return report("precision_auto_models")
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(MODELS)):
            if os.path.exists(os.path.join(MODELS, name, "model.onnx")):
                one(bin_, name, tmp, [], "default")
                one(bin_, name, tmp, ["--atol", str(TIGHT_ATOL)], "tight")
        usage_errors(bin_, tmp)
        python_pass_through(bin_)
    return report("precision_auto_models")


if __name__ == "__main__":
    sys.exit(main())
