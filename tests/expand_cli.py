#!/usr/bin/env python3
"""convert --expand OP and Einsum's rewrite into older ops (issue 20).

Models are written here byte by byte (no onnx package needed), with
inputs from a fixed generator; the expected outputs are computed here by
a plain-Python einsum in double precision, so neither side of a check is
our program's own output:
- `convert --expand Einsum` at opset 17 leaves no Einsum node, reports the
  expansion (text: "expand"; --json: adapter Einsum 12 -> null), and
  `run` on the result gives the expected outputs; so does `run` on the
  original; the same for another op with an expansion (HardSwish);
- `convert --opset 11` (Einsum does not exist there) gives the same, also
  for inputs whose dims are symbolic (the rewrite cannot use their sizes);
- --expand with an op that has no expansion is a usage error (exit 2)
  naming it and listing Einsum, and writes nothing;
- ONNX Runtime 1.30 (../shared/tools/ort), when present, runs every
  written model on the same inputs and agrees with the expected outputs.

Usage: expand_cli.py ONNX_CONVERT [no-ort]   (from the project root; no-ort
leaves ONNX Runtime out: the sanitized run judges our program only)
Prints "expand_cli: N passed, N failed[, N skipped]".
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from clitest import check, report, run, skip
from ir_policy import fields, sub

from clitest import ORT_CHECK as ORT  # noqa: E402
FLOAT = 1

# ---- a minimal protobuf writer ---------------------------------------


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fld(num, v):
    """Field `num`: an int (varint) or bytes/str (length-delimited)."""
    if isinstance(v, int):
        return varint(num << 3) + varint(v)
    if isinstance(v, str):
        v = v.encode()
    return varint(num << 3 | 2) + varint(len(v)) + v


def value_info(name, dims):
    """A float tensor ValueInfoProto; a str dim is symbolic (dim_param)."""
    shape = b"".join(fld(1, fld(2, d) if isinstance(d, str) else fld(1, d)) for d in dims)
    tensor = fld(1, FLOAT) + fld(2, shape)
    return fld(1, name) + fld(2, fld(1, tensor))


def node(op, ins, out, eq=None):
    """A node; eq: an Einsum's equation attribute."""
    attr = fld(5, fld(1, "equation") + fld(4, eq) + fld(20, 3)) if eq else b""  # STRING
    return b"".join(fld(1, i) for i in ins) + fld(2, out) + fld(4, op) + attr


def model(nodes, inputs, outputs, opset):
    """nodes: (op, inputs, output, equation); inputs/outputs: (name, dims)."""
    g = b"".join(fld(1, node(*n)) for n in nodes) + fld(2, "g")
    g += b"".join(fld(11, value_info(*i)) for i in inputs)
    g += b"".join(fld(12, value_info(n, d)) for n, d in outputs)
    return fld(1, 8) + fld(7, g) + fld(8, fld(1, "") + fld(2, opset))


def tensor_pb(dims, vals):
    raw = struct.pack("<%df" % len(vals), *vals)
    return b"".join(fld(1, d) for d in dims) + fld(2, FLOAT) + fld(9, raw)


def read_tensor(path):
    b = open(path, "rb").read()
    dims = [v for n, v in fields(b) if n == 1]
    raw = sub(b, 9)
    vals = list(struct.unpack("<%df" % (len(raw[0]) // 4), raw[0])) if raw else []
    return dims, vals


def op_types(path):
    """The op_type of every node of the main graph."""
    g = sub(open(path, "rb").read(), 7)[0]
    return [sub(n, 4)[0].decode() for n in sub(g, 1)]

# ---- the expected outputs: einsum by its definition --------------------


def prod(ds):
    p = 1
    for d in ds:
        p *= d
    return p


def labels(term, rank):
    """The labels of a term; '...' becomes digits for the broadcast dims."""
    if "..." not in term:
        return list(term)
    a, b = term.split("...")
    return list(a) + [str(k) for k in range(rank - len(a) - len(b))] + list(b)


def einsum(eq, shapes, datas):
    """eq's output (dims, values) for the inputs (no broadcasting of 1s)."""
    lhs, out = eq.split("->")
    terms = lhs.split(",")
    labs = [labels(t, len(s)) for t, s in zip(terms, shapes)]
    ell = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes) if "..." in t),
              default=0)
    out_labs = labels(out, len(out.replace("...", "")) + ell)
    size = {}
    for ls, s in zip(labs, shapes):
        for l, d in zip(ls, s):
            size[l] = d
    summed = sorted(set(size) - set(out_labs))
    odims = [size[l] for l in out_labs]
    res = []
    for o in range(prod(odims)):
        at, rest = {}, o
        for l, d in reversed(list(zip(out_labs, odims))):
            at[l], rest = rest % d, rest // d
        total = 0.0
        for s in range(prod(size[l] for l in summed)):
            rest = s
            for l in reversed(summed):
                at[l], rest = rest % size[l], rest // size[l]
            p = 1.0
            for ls, sh, x in zip(labs, shapes, datas):
                flat = 0
                for l, d in zip(ls, sh):
                    flat = flat * d + at[l]
                p *= x[flat]
            total += p
        res.append(total)
    return odims, res

# ---- the cases --------------------------------------------------------


def inputs_for(shapes, seed):
    """Fixed values in [-1, 1) from a linear congruential generator."""
    out, x = [], seed
    for s in shapes:
        vals = []
        for _ in range(prod(s)):
            x = (x * 1103515245 + 12345) % (1 << 31)
            vals.append(((x >> 8) % 2000) / 1000.0 - 1.0)
        out.append(vals)
    return out


# (equation, input shapes); each becomes one Einsum node of one model
CASES = [
    ("bhid,bhjd->bhij", [[2, 3, 4, 8], [2, 3, 5, 8]]),
    ("...ii->...i", [[2, 3, 4, 4]]),
    ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 5]]),
    ("bi,oij,bj->bo", [[2, 3], [4, 3, 5], [2, 5]]),
    ("iij->j", [[3, 3, 2]]),
    ("abcd,cdef->abef", [[2, 3, 4, 5], [4, 5, 6, 2]]),
    ("ij,jkl->ikl", [[2, 3], [3, 4, 5]]),
]


def write_case(tmp, name, eq, shapes, dyn, opset=17):
    """A model of one Einsum, its inputs and the expected output in
    tmp/name (a backend-test case folder). dyn: every input dim symbolic
    (True), or only the first input's first ("first": the rewrite mixes
    known and unknown extents)."""
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    def dims(k, s):
        sym = ["d%d_%d" % (k, j) for j in range(len(s))]
        if dyn == "first":
            return sym[:1] + s[1:] if k == 0 else s
        return sym if dyn else s
    ins = [("x%d" % k, dims(k, s)) for k, s in enumerate(shapes)]
    datas = inputs_for(shapes, 7 + len(name))
    odims, want = einsum(eq, shapes, datas)
    out_dims = ["o%d" % j for j in range(len(odims))] if dyn else odims
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model([("Einsum", [n for n, _ in ins], "y", eq)], ins, [("y", out_dims)], opset))
    for k, (s, x) in enumerate(zip(shapes, datas)):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(tensor_pb(s, x))
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(tensor_pb(odims, want))
    return d, odims, want


def close(got, want):
    return len(got) == len(want) and all(abs(g - w) <= 1e-5 + 1e-5 * abs(w)
                                         for g, w in zip(got, want))


def check_run(bin_, case, mdl, odims, want, what):
    """Our evaluator on the case's inputs gives the expected output."""
    out = os.path.join(os.path.dirname(mdl), os.path.basename(mdl) + ".out")
    p = run(bin_, "run", mdl, "--inputs", os.path.join(case, "test_data_set_0"), "-o", out)
    ok = p.returncode == 0 and os.path.exists(os.path.join(out, "output_0.pb"))
    check(ok, "%s: run: %s" % (what, p.stderr.strip()))
    if ok:
        dims, got = read_tensor(os.path.join(out, "output_0.pb"))
        check(dims == odims and close(got, want), "%s: outputs differ from einsum's" % what)


def check_expand(bin_, case, odims, want, name, judged, op="Einsum"):
    src = os.path.join(case, "model.onnx")
    dst = os.path.join(case, "expanded.onnx")
    check_run(bin_, case, src, odims, want, name + " original")
    p = run(bin_, "convert", src, "-o", dst, "--expand", op)
    check(p.returncode == 0 and "expand" in p.stdout,
          "%s: --expand %s: exit %d: %s%s" % (name, op, p.returncode, p.stdout, p.stderr))
    if p.returncode != 0:
        return
    ops = op_types(dst)
    check(op not in ops and ops, "%s: %s remains after --expand: %s" % (name, op, ops))
    check_run(bin_, case, dst, odims, want, name + " expanded")
    judged.append((case, dst))


def check_down(bin_, case, odims, want, name, judged):
    dst = os.path.join(case, "opset11.onnx")
    p = run(bin_, "convert", os.path.join(case, "model.onnx"), "-o", dst, "--opset", "11")
    check(p.returncode == 0, "%s: --opset 11: %s" % (name, p.stderr.strip()))
    if p.returncode == 0:
        check("Einsum" not in op_types(dst), "%s: Einsum at opset 11" % name)
        check_run(bin_, case, dst, odims, want, name + " opset 11")
        judged.append((case, dst))


def hardswish_case(tmp):
    """Another op with an expansion (HardSwish-14, at opset 17): the switch
    is not Einsum's alone."""
    d = os.path.join(tmp, "hardswish")
    os.makedirs(os.path.join(d, "test_data_set_0"))
    x = [k / 4.0 - 4.0 for k in range(33)]          # -4 .. 4, both kinks
    want = [v * max(0.0, min(1.0, v / 6.0 + 0.5)) for v in x]
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model([("HardSwish", ["x"], "y")], [("x", [33])], [("y", [33])], 17))
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(tensor_pb([33], x))
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(tensor_pb([33], want))
    return d, [33], want


def check_json(bin_, case):
    p = run(bin_, "convert", os.path.join(case, "model.onnx"), "-o",
            os.path.join(case, "j.onnx"), "--expand", "Einsum", "--json")
    try:
        conv = json.loads(p.stdout)["conversion"]
        ad = [a for a in conv["adapters"] if a["op"] == "Einsum"]
        check(len(ad) == 1 and ad[0]["from"] == 12 and ad[0]["to"] is None and
              ad[0]["nodes"] == 1 and conv["by_kind"]["expand"] == 1,
              "--json reports the expansion: %s" % conv)
    except (ValueError, KeyError, TypeError) as e:
        check(False, "--json: %s: %s" % (e, p.stdout))


def check_usage(bin_, case):
    dst = os.path.join(case, "bad.onnx")
    for ops, bad in (("Relu", "Relu"), ("Einsum,NoSuchOp", "NoSuchOp")):
        p = run(bin_, "convert", os.path.join(case, "model.onnx"), "-o", dst, "--expand", ops)
        check(p.returncode == 2 and "'%s'" % bad in p.stderr and "Einsum" in p.stderr and
              not os.path.exists(dst),
              "--expand %s: exit %d (want 2): %s" % (ops, p.returncode, p.stderr))


def ort_judge(judged, tmp):
    if not shutil.which("node") or not os.path.exists(ORT):
        skip("ONNX Runtime: no node or no ../shared/tools/ort")
        return
    lst = os.path.join(tmp, "ort.txt")
    with open(lst, "w") as f:
        for case, mdl in judged:
            f.write("%s %s\n" % (case, mdl))
    p = subprocess.run(["node", ORT, "--batch", lst], capture_output=True, text=True)
    verdict = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if len(w) >= 2:
            verdict[w[1]] = (w[0], line)
    for case, mdl in judged:
        v = verdict.get(mdl, ("MISSING", p.stderr.strip()[-300:]))
        check(v[0] == "PASS", "ONNX Runtime on %s: %s" % (mdl, v[1]))


def main():
    bin_ = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="expand_cli.")
    judged = []
    try:
        for k, (eq, shapes) in enumerate(CASES):
            for dyn in (False, True, "first"):
                name = "c%d%s" % (k, {False: "", True: "_dyn", "first": "_first"}[dyn])
                case, odims, want = write_case(tmp, name, eq, shapes, dyn)
                check_expand(bin_, case, odims, want, "%s %s" % (eq, name), judged)
                check_down(bin_, case, odims, want, "%s %s" % (eq, name), judged)
        case, odims, want = hardswish_case(tmp)
        check_expand(bin_, case, odims, want, "HardSwish", judged, "HardSwish")
        first = os.path.join(tmp, "c0")
        check_json(bin_, first)
        check_usage(bin_, first)
        if sys.argv[2:] != ["no-ort"]:
            ort_judge(judged, tmp)
    finally:
        shutil.rmtree(tmp)
    return report("expand_cli")


if __name__ == "__main__":
    sys.exit(main())
