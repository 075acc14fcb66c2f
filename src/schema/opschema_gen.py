#!/usr/bin/env python3
"""Writes src/schema/opschema_table.c, the operator table, from the ONNX operator
data (../shared/spec/onnx-opsets.json) and src/schema/opschema_flags.txt.

Run it with `make opschema` when the data changes; its output is committed,
so the build never needs the data file. Standard library only.

Usage: opschema_gen.py SPEC.json FLAGS.txt OUT.c
"""
import json
import sys

ATTR_TYPES = {  # AttributeProto.AttributeType codes
    "FLOAT": 1, "INT": 2, "STRING": 3, "TENSOR": 4, "GRAPH": 5,
    "SPARSE_TENSOR": 11, "TYPE_PROTO": 13, "FLOATS": 6, "INTS": 7,
    "STRINGS": 8, "TENSORS": 9, "GRAPHS": 10, "SPARSE_TENSORS": 12,
    "TYPE_PROTOS": 14,
}

FLAG_NAMES = ["commutative", "random", "control", "shape_only", "cheap", "exact",
              "no_fold", "bits"]


def c_str(s):
    """A C string literal for s (ASCII data only, checked)."""
    s.encode("ascii")
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_float(x):
    r = repr(float(x))
    if "e" not in r and "." not in r:
        r += ".0"
    return r + "f"


def read_counts(words, path, lineno):
    """{"inputs": [N, ...], "outputs": [...], "default.NAME": float} from
    `inputs=1,5` and `default.NAME=X` words."""
    out = {}
    for w in words:
        key, _, val = w.partition("=")
        if key.startswith("default.") and val:
            out[key] = float(val)
            continue
        if key not in ("inputs", "outputs") or not val:
            sys.exit(f"{path}:{lineno}: expected inputs=N,..., outputs=N,... or "
                     f"default.NAME=X, got '{w}'")
        ns = sorted({int(x) for x in val.split(",")})
        if ns[0] < 0 or ns[-1] > 31:
            sys.exit(f"{path}:{lineno}: counts must be 0..31 (a bit mask)")
        out[key] = ns
    return out


def read_flags(path):
    """({(domain, op): [flag, ...]}, {(domain, op): family},
    {(domain, op, since): counts}, {(domain, op): [input name, ...]}) from
    the flags file."""
    flags = {}
    families = {}
    counts = {}
    shape_in = {}
    with open(path, encoding="ascii") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            name = words[0]
            domain, op = ("", name)
            if ":" in name:
                domain, op = name.split(":", 1)
            if "@" in op:
                op, since = op.split("@", 1)
                counts[(domain, op, int(since))] = read_counts(words[1:], path, lineno)
                continue
            if len(words) < 2 or not words[1].isidentifier():
                sys.exit(f"{path}:{lineno}: '{name}' needs its family before the flags")
            if (domain, op) in families:
                sys.exit(f"{path}:{lineno}: '{name}' is listed twice")
            families[(domain, op)] = words[1]
            for w in words[2:]:
                if w.startswith("shape_in="):
                    shape_in[(domain, op)] = w[len("shape_in="):].split(",")
                elif w not in FLAG_NAMES:
                    sys.exit(f"{path}:{lineno}: unknown flag '{w}'")
            flags[(domain, op)] = [w for w in words[2:] if "=" not in w]
    return flags, families, counts, shape_in


def shape_mask(o, shape_in):
    """The bit mask of o's inputs that shape_in names (bit N: input N)."""
    names = shape_in.get((o["domain"], o["op"]), [])
    bits = [i for i, p in enumerate(o["inputs"]) if p["name"] in names]
    if bits and bits[-1] > 31:
        sys.exit(f"{o['op']}-{o['since_version']}: shape_in needs inputs 0..31")
    return sum(1 << i for i in bits)


def check_shape_in(ops, shape_in, path):
    """Every name of a shape_in= list is an input of some version."""
    for (domain, op), names in shape_in.items():
        have = {p["name"] for o in ops if (o["domain"], o["op"]) == (domain, op)
                for p in o["inputs"]}
        for n in names:
            if n not in have:
                sys.exit(f"{path}: {op} has no input '{n}' (shape_in)")


def count_mask(o, counts, which):
    """The allowed-count bit mask of o's inputs or outputs (bit N: N
    allowed), 0 when every count from min to max is allowed. Checked
    against the data's min and max."""
    ns = counts.get((o["domain"], o["op"], o["since_version"]), {}).get(which)
    if not ns:
        return "0"
    lo, hi = o[f"min_{which}"], o[f"max_{which}"]
    if ns[0] < lo or (hi is not None and ns[-1] > hi):
        sys.exit(f"allowed {which} {ns} of {o['op']}-{o['since_version']} "
                 f"are outside {lo}..{hi}")
    return "0x%xu" % sum(1 << n for n in ns)


class Pool:
    """Deduplicated static arrays, emitted before the table."""

    def __init__(self):
        self.lines = []
        self.seen = {}

    def add(self, ctype, prefix, items):
        key = (ctype, tuple(items))
        if key in self.seen:
            return self.seen[key]
        name = f"{prefix}{len(self.seen)}"
        self.seen[key] = name
        self.lines.append(f"static const {ctype} {name}[] = {{\n    "
                          + ",\n    ".join(items) + "\n};")
        return name


def attr_entry(a, pool):
    t = ATTR_TYPES[a["type"]]
    req = 1 if a.get("required") else 0
    has = "default" in a
    d = a.get("default")
    di, df, ds, dn, dints, dstrs, dfloats = "0", "0.0f", "NULL", 0, "NULL", "NULL", "NULL"
    if has:
        kind = a["type"]
        if kind == "INT":
            di = str(int(d))
        elif kind == "FLOAT":
            df = c_float(d)
        elif kind == "STRING":
            ds = c_str(d)
        elif kind == "INTS":
            dn, dints = len(d), pool.add("int64_t", "os_dints_", [str(int(x)) for x in d])
        elif kind == "FLOATS":
            dn, dfloats = len(d), pool.add("float", "os_dfloats_", [c_float(x) for x in d])
        elif kind == "STRINGS":
            dn, dstrs = len(d), pool.add("char *const", "os_dstrs_", [c_str(x) for x in d])
        else:
            sys.exit(f"default of type {kind} not supported")
    return (f"{{{c_str(a['name'])}, {t}, {req}, {1 if has else 0}, {di}, {df}, "
            f"{ds}, {dn}, {dints}, {dfloats}, {dstrs}}}")


def param_entry(p):
    return (f"{{{c_str(p['name'])}, {c_str(p['type'])}, "
            f"{1 if p.get('optional') else 0}, {1 if p.get('variadic') else 0}, "
            f"{1 if p.get('heterogeneous') else 0}}}")


def corrected_attrs(o, counts):
    """o's attributes with the float defaults the flags file corrects."""
    fix = counts.get((o["domain"], o["op"], o["since_version"]), {})
    out = []
    for a in o["attributes"]:
        key = "default." + a["name"]
        if key in fix:
            if a["type"] != "FLOAT" or "default" not in a:
                sys.exit(f"{o['op']}-{o['since_version']}: {a['name']} has no float default to correct")
            a = dict(a, default=fix[key])
        out.append(a)
    names = {"default." + a["name"] for a in o["attributes"]}
    for key in fix:
        if key.startswith("default.") and key not in names:
            sys.exit(f"{o['op']}-{o['since_version']}: no attribute {key[8:]} to correct")
    return out


def schema_entry(o, nxt, flags, families, counts, pool):
    attrs = [attr_entry(a, pool) for a in sorted(corrected_attrs(o, counts),
                                                 key=lambda a: a["name"])]
    a_arr = pool.add("OsAttr", "os_attrs_", attrs) if attrs else "NULL"
    ins = [param_entry(p) for p in o["inputs"]]
    i_arr = pool.add("OsParam", "os_params_", ins) if ins else "NULL"
    outs = [param_entry(p) for p in o["outputs"]]
    o_arr = pool.add("OsParam", "os_params_", outs) if outs else "NULL"
    tcs = []
    for tc in o["type_constraints"]:
        tl = pool.add("char *const", "os_types_", [c_str(t) for t in tc["types"]])
        tcs.append(f"{{{c_str(tc['name'])}, {len(tc['types'])}, {tl}}}")
    t_arr = pool.add("OsTypeCons", "os_tcs_", tcs) if tcs else "NULL"
    fb = o.get("function_body_opsets") or []
    fb_arr = pool.add("int", "os_fb_", [str(int(x)) for x in fb]) if fb else "NULL"
    fl = ["OS_F_" + f.upper() for f in flags.get((o["domain"], o["op"]), [])]
    if o.get("deprecated"):
        fl.append("OS_F_DEPRECATED")
    if any(a["type"] in ("GRAPH", "GRAPHS") for a in o["attributes"]) and "OS_F_CONTROL" not in fl:
        fl.append("OS_F_CONTROL")
    flag_expr = " | ".join(sorted(set(fl))) or "0"

    def arity(x):
        return -1 if x is None else int(x)

    return (f"    {{{c_str(o['domain'])}, {c_str(o['op'])}, {o['since_version']}, {nxt},\n"
            f"     {arity(o['min_inputs'])}, {arity(o['max_inputs'])}, "
            f"{arity(o['min_outputs'])}, {arity(o['max_outputs'])},\n"
            f"     {len(attrs)}, {a_arr}, {len(ins)}, {i_arr}, {len(outs)}, {o_arr}, "
            f"{len(tcs)}, {t_arr},\n"
            f"     {flag_expr}, {len(fb)}, {fb_arr}, "
            f"{count_mask(o, counts, 'inputs')}, {count_mask(o, counts, 'outputs')}, "
            f"{c_str(families[(o['domain'], o['op'])])}}}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    spec_path, flags_path, out_path = sys.argv[1:]
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    flags, families, counts, shape_in = read_flags(flags_path)
    ops = sorted(spec["operators"], key=lambda o: (o["domain"], o["op"], o["since_version"]))
    check_shape_in(ops, shape_in, flags_path)
    known = {(o["domain"], o["op"]) for o in ops}
    for key in families:
        if key not in known:
            sys.exit(f"{flags_path}: op {key} is not in the operator data")
    for key in sorted(known - set(families)):
        sys.exit(f"{flags_path}: op {key} has no line (every op needs its family)")
    versions = {(o["domain"], o["op"], o["since_version"]) for o in ops}
    for key in counts:
        if key not in versions:
            sys.exit(f"{flags_path}: op version {key} is not in the operator data")
    pool = Pool()
    entries = []
    for i, o in enumerate(ops):
        nxt = 0
        if i + 1 < len(ops) and (ops[i + 1]["domain"], ops[i + 1]["op"]) == (o["domain"], o["op"]):
            nxt = ops[i + 1]["since_version"]
        entries.append(schema_entry(o, nxt, flags, families, counts, pool))
    domains = sorted(spec["max_opset"].items())
    out = []
    out.append("/* Generated by src/schema/opschema_gen.py from onnx-opsets.json and\n"
               " * src/schema/opschema_flags.txt. Do not edit; run `make opschema`.\n"
               f" * Source of the data: {spec.get('source', '?')}. */")
    out.append('#include "schema/opschema.h"\n#include <stddef.h>\n')
    out.extend(pool.lines)
    out.append("\n/* Sorted by (domain, op, since_version): lookups bisect. */")
    out.append("const OsSchema os_table[] = {\n" + ",\n".join(entries) + "\n};")
    out.append(f"const size_t os_table_n = {len(entries)};\n")
    out.append("const OsDomain os_domains[] = {\n" + ",\n".join(
        f"    {{{c_str(d)}, {int(v)}}}" for d, v in domains) + "\n};")
    out.append(f"const size_t os_domains_n = {len(domains)};")
    shape = [(o, shape_mask(o, shape_in)) for o in ops]
    out.append("\n/* The inputs of each version that take a shape, a size, scales, axes,\n"
               " * indices or a count (shape_in=); sorted as os_table. */")
    out.append("const OsShapeIn os_shape_in_table[] = {\n" + ",\n".join(
        f"    {{{c_str(o['domain'])}, {c_str(o['op'])}, {o['since_version']}, 0x{m:x}u}}"
        for o, m in shape if m) + "\n};")
    out.append(f"const size_t os_shape_in_n = {sum(1 for _, m in shape if m)};")
    with open(out_path + ".tmp", "w", encoding="ascii") as f:
        f.write("\n".join(out) + "\n")
    import os
    os.replace(out_path + ".tmp", out_path)


if __name__ == "__main__":
    main()
