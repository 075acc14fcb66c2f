#!/usr/bin/env python3
"""The IR version policy (issue 19; docs/converter.md "IR versions").

- usage: --ir-version outside 3..14, or below what --opset needs, is a
  usage error (exit 2, one line and "see onnx-convert convert --help");
- check refuses a model whose ir_version cannot hold the type a Cast
  computes; convert refuses to write one;
- ai.onnx.ml opset 3 needs IR 8;
- with ../shared/models/squeezenet1_1_opset13: a copy at IR 10 with
  metadata_props on its graph, every node, value_info and initializer
  converts to every opset 7..26 the plain model converts to; going below
  IR 10 drops the annotations, listed exactly in --json (counted here
  from the file's own bytes); ONNX Runtime 1.30 gives the case's outputs
  for every result; --keep-metadata keeps IR 10 and every annotation;
- a copy with model-local functions (IR 8, calls in bodies, attribute
  references) converts to 9..14 keeping IR 8 and its functions, and to 7
  with --ir-version 3 inlined; ONNX Runtime agrees.

Usage: ir_policy.py ONNX_CONVERT TOOL_IRPOLICY_GEN   (from the project root)
Prints "ir_policy: N passed, N failed[, N skipped]".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from clitest import check, report, run, skip

from clitest import ORT_CHECK as ORT  # noqa: E402
CASE = "../shared/models/squeezenet1_1_opset13"

# Versioning.md: the IR version each ai.onnx opset came with.
TABLE = {o: 3 for o in range(1, 9)}
TABLE.update({9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8,
              19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13})


# ---- a minimal protobuf reader: the fields the checks count ----------

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(number, value) of every field of message b; value is an int or bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, v


def sub(b, num):
    return [v for n, v in fields(b) if n == num]


def describe(path):
    """ir_version, functions, node domains, and how many graph, node,
    value_info and initializer entries carry metadata_props."""
    m = open(path, "rb").read()
    g = sub(m, 7)[0]
    nodes, infos, inits = sub(g, 1), sub(g, 11) + sub(g, 12) + sub(g, 13), sub(g, 5)
    return {
        "ir": sub(m, 1)[0],
        "functions": len(sub(m, 25)),
        "domains": sorted({(sub(n, 7) or [b""])[0].decode() for n in nodes}),
        "graph": 1 if sub(g, 16) else 0,
        "nodes": sum(1 for n in nodes if sub(n, 9)), "n_nodes": len(nodes),
        "infos": sum(1 for v in infos if sub(v, 4)), "n_infos": len(infos),
        "inits": sum(1 for t in inits if sub(t, 16)), "n_inits": len(inits),
    }


# ---- the checks --------------------------------------------------------

def convert(bin_, src, dst, *opts):
    p = run(bin_, "convert", src, "-o", dst, "--json", *opts)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, None, p.stderr


def check_usage(bin_, tmp, model):
    out = os.path.join(tmp, "usage.onnx")
    for opts in (["--ir-version", "15"], ["--ir-version", "2"],
                 ["--opset", "17", "--ir-version", "4"]):
        p = run(bin_, "convert", model, "-o", out, *opts)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 2 and
              lines[1] == "see onnx-convert convert --help" and not os.path.exists(out),
              "convert %s: exit %d, %r" % (" ".join(opts), p.returncode, p.stderr))
    p = run(bin_, "convert", model, "-o", out, "--opset", "17", "--ir-version", "8")
    check(p.returncode == 0, "--opset 17 --ir-version 8: %s" % p.stderr)


def check_cast8(bin_, tool, tmp):
    c8, c9 = os.path.join(tmp, "cast8.onnx"), os.path.join(tmp, "cast9.onnx")
    run(tool, "cast8", c8, "8")
    run(tool, "cast8", c9, "9")
    p = run(bin_, "check", c8)
    check(p.returncode == 1 and "ir-feature" in p.stderr and "FLOAT8E4M3FN" in p.stderr,
          "check of a Cast to float8 at IR 8: exit %d %s" % (p.returncode, p.stderr))
    p = run(bin_, "check", c9)
    check(p.returncode == 0, "check of the same at IR 9: %s" % p.stderr)
    out = os.path.join(tmp, "cast8_out.onnx")
    p = run(bin_, "convert", c9, "-o", out, "--ir-version", "8")
    check(p.returncode == 1 and not os.path.exists(out),
          "convert --ir-version 8 of a Cast to float8: exit %d" % p.returncode)


def check_ml(bin_, tool, tmp):
    src, out = os.path.join(tmp, "ml.onnx"), os.path.join(tmp, "ml3.onnx")
    run(tool, "ml", src)
    rc, js, err = convert(bin_, src, out, "--opset-ml", "3")
    check(rc == 0 and js["ir_version"] == {"from": 7, "to": 8} and describe(out)["ir"] == 8,
          "ai.onnx.ml 3 needs IR 8: %s %s" % (js and js["ir_version"], err))


def ort_batch(pairs, tmp):
    """ORT's verdict (True = PASS) for each (case, model)."""
    lst = os.path.join(tmp, "ort.txt")
    with open(lst, "w") as f:
        for case, model in pairs:
            f.write("%s %s\n" % (case, model))
    p = subprocess.run(["node", ORT, "--batch", lst], capture_output=True, text=True)
    verdict = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if len(w) >= 2 and w[0] in ("PASS", "FAIL", "ERROR"):
            verdict[w[1]] = w[0] == "PASS"
    return [verdict.get(m, False) for _, m in pairs]


def expected_drops(d):
    return ["GraphProto.metadata_props x%d" % d["graph"],
            "NodeProto.metadata_props x%d" % d["nodes"],
            "ValueInfoProto.metadata_props x%d" % d["infos"],
            "TensorProto.metadata_props x%d" % d["inits"]]


def check_meta(bin_, tool, tmp, judged):
    plain = os.path.join(CASE, "model.onnx")
    meta = os.path.join(tmp, "meta.onnx")
    p = run(tool, "meta", plain, meta)
    check(p.returncode == 0, "tool meta: %s" % p.stderr)
    d = describe(meta)
    check(d["ir"] == 10 and d["graph"] == 1 and d["nodes"] == d["n_nodes"] > 0 and
          d["infos"] == d["n_infos"] > d["n_nodes"] and d["inits"] == d["n_inits"] > 0,
          "the built model has metadata everywhere: %s" % d)
    converted = []
    for t in range(7, 27):
        ref = os.path.join(tmp, "plain%d.onnx" % t)
        rc_plain, _, _ = convert(bin_, plain, ref, "--opset", str(t))
        out = os.path.join(tmp, "meta%d.onnx" % t)
        rc, js, err = convert(bin_, meta, out, "--opset", str(t))
        check(rc == rc_plain, "opset %d: the metadata model exits %d, the plain one %d: %s"
              % (t, rc, rc_plain, err.strip()))
        if rc != 0 or rc_plain != 0:
            continue
        converted.append(t)
        o = describe(out)
        want_ir = TABLE[t] if t < 13 else max(TABLE[t], 10)
        check(o["ir"] == want_ir and js["ir_version"]["to"] == want_ir,
              "opset %d: IR %d, want %d" % (t, o["ir"], want_ir))
        if want_ir < 10:
            check(js.get("dropped") == expected_drops(d) and
                  o["graph"] + o["nodes"] + o["infos"] + o["inits"] == 0,
                  "opset %d: dropped %s, want %s; left %s" % (t, js.get("dropped"),
                                                              expected_drops(d), o))
        else:
            check(js.get("dropped") == [] and (o["graph"], o["nodes"] == o["n_nodes"],
                                           o["inits"]) == (1, True, d["inits"]),
                  "opset %d: kept IR %d but dropped %s / left %s" % (t, o["ir"],
                                                                     js.get("dropped"), o))
        judged.append((CASE, out))
    check(13 in converted and 7 in converted and 26 in converted,
          "the model converts to its own opset, 7 and 26: %s" % converted)
    # --keep-metadata keeps IR 10 and every annotation
    out = os.path.join(tmp, "keep12.onnx")
    rc, js, err = convert(bin_, meta, out, "--opset", "12", "--keep-metadata")
    o = describe(out) if rc == 0 else {}
    check(rc == 0 and js.get("dropped") == [] and o["ir"] == 10 and
          [o[k] for k in ("graph", "nodes", "infos", "inits")] ==
          [d[k] for k in ("graph", "nodes", "infos", "inits")],
          "--keep-metadata at opset 12: %s %s" % (o, err))
    if rc == 0:
        judged.append((CASE, out))
    # batch mode takes --keep-metadata too, and optimize accepts it
    outdir = os.path.join(tmp, "batch")
    p = run(bin_, "convert", meta, "--out-dir", outdir, "--opset", "12", "--keep-metadata",
            "--json")
    try:
        js = json.loads(p.stdout)["models"][0]
    except (ValueError, KeyError, IndexError):
        js = {}
    out = os.path.join(outdir, "meta.onnx")
    check(p.returncode == 0 and js.get("dropped") == [] and os.path.exists(out) and
          describe(out)["ir"] == 10, "batch --keep-metadata: %s %s" % (js.get("dropped"), p.stderr))
    out = os.path.join(tmp, "opt.onnx")
    p = run(bin_, "optimize", meta, "-o", out, "--keep-metadata")
    o = describe(out) if p.returncode == 0 else {}
    check(p.returncode == 0 and o["ir"] == 10 and o["graph"] == 1 and o["nodes"] > 0,
          "optimize --keep-metadata: %s %s" % (o, p.stderr))
    # the text report's one summary line
    p = run(bin_, "convert", meta, "-o", os.path.join(tmp, "text12.onnx"), "--opset", "12")
    want = "dropped to fit IR 7: " + ", ".join(expected_drops(d))
    check(p.returncode == 0 and want in p.stdout.splitlines(),
          "text summary: %r" % p.stdout)
    # an exact --ir-version with --keep-metadata that cannot hold them refuses
    out = os.path.join(tmp, "keep7.onnx")
    rc, js, err = convert(bin_, meta, out, "--opset", "12", "--ir-version", "7",
                          "--keep-metadata")
    check(rc == 1 and "metadata_props" in err and not os.path.exists(out),
          "--ir-version 7 --keep-metadata: exit %d %s" % (rc, err))


def check_functions(bin_, tool, tmp, judged):
    plain = os.path.join(CASE, "model.onnx")
    func = os.path.join(tmp, "func.onnx")
    p = run(tool, "func", plain, func)
    d = describe(func) if p.returncode == 0 else {}
    check(p.returncode == 0 and d["ir"] == 8 and d["functions"] == 2 and "local" in d["domains"],
          "tool func: %s %s" % (p.stderr, d))
    if p.returncode:
        return
    judged.append((CASE, func))
    for t in range(9, 15):
        out = os.path.join(tmp, "func%d.onnx" % t)
        rc, js, err = convert(bin_, func, out, "--opset", str(t))
        o = describe(out) if rc == 0 else {}
        check(rc == 0 and o["ir"] == 8 and o["functions"] == 2 and js.get("dropped") == [],
              "functions to opset %d: exit %d %s %s" % (t, rc, o, err))
        if rc == 0:
            judged.append((CASE, out))
    out = os.path.join(tmp, "func7.onnx")
    rc, js, err = convert(bin_, func, out, "--opset", "7", "--ir-version", "3")
    o = describe(out) if rc == 0 else {}
    check(rc == 0 and o["ir"] == 3 and o["functions"] == 0 and o["domains"] == [""] and
          js.get("dropped") and len(js["dropped"]) == 1 and js["dropped"][0].startswith("ModelProto.functions x2 "),
          "functions inlined at opset 7, IR 3: exit %d %s %s %s" % (rc, o, js and js.get("dropped"), err))
    if rc == 0:
        judged.append((CASE, out))
        p = run(bin_, "check", out)
        check(p.returncode == 0, "check of the inlined model: %s" % p.stderr)
    # without --ir-version the functions are content: IR 8 stays
    out = os.path.join(tmp, "func7_8.onnx")
    rc, js, err = convert(bin_, func, out, "--opset", "7")
    o = describe(out) if rc == 0 else {}
    check(rc == 0 and o["ir"] == 8 and o["functions"] == 2,
          "functions at opset 7 keep IR 8: %s %s" % (o, err))


def main():
    bin_, tool = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="ir_policy.")
    try:
        check_cast8(bin_, tool, tmp)
        check_ml(bin_, tool, tmp)
        if not os.path.isfile(os.path.join(CASE, "model.onnx")):
            skip("ir_policy models: no %s" % CASE)
            return report("ir_policy")
        check_usage(bin_, tmp, os.path.join(CASE, "model.onnx"))
        judged = []
        check_meta(bin_, tool, tmp, judged)
        check_functions(bin_, tool, tmp, judged)
        if not shutil.which("node") or not os.path.isfile(ORT):
            skip("ir_policy ONNX Runtime: no node or no %s" % ORT)
        else:
            for (case, model), ok in zip(judged, ort_batch(judged, tmp)):
                check(ok, "ONNX Runtime differs from the case's outputs on %s" % model)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report("ir_policy")


if __name__ == "__main__":
    sys.exit(main())
