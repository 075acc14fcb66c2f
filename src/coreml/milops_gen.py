#!/usr/bin/env python3
"""Writes src/coreml/milops_table.c, the MIL operator table (src/coreml/milops.h), from
coremltools' MIL op definitions (the defs/ folder of
coremltools/converters/mil/mil/ops), read as Python source with the ast
module: coremltools is never imported, so neither it nor its
dependencies need to be installed.

Run it with `make milops` when the definitions change; its output is
committed, so the build never needs ../shared. Standard library only.

What is read, per registered op class (`@register_op`, core ops only):
  - the name: the class name (that is what the registry uses);
  - the first target: register_op's opset_version (_IOS16_TARGET, ...;
    the default, iOS13, is the neural-network era: the first ML Program
    target, iOS15, has it); a later folder's class of the same name is a
    new version from its own target;
  - the parameters: input_spec, followed through class inheritance, across
    modules via their imports, and through `A.input_spec + InputSpec(..)`
    (the right side's entries replace the left's and keep their place, as
    InputSpec.__add__ does). Parameters the registry keeps for the Python
    builder only (PyFunctionInputType, InternalInputType: cond's branches,
    const's value, which the format holds as an attribute) are left out;
  - each parameter's dtypes: its type_domain, a type name or a type
    variable resolved through the registered class's type_domains; and
    the variable's name, since parameters of one variable must share a
    dtype (coremltools' InputSpec.validate_inputs checks that).

The dialect folders (coreml_dialect, the complex namespace) are left out:
their ops are rewritten into core ops before a program is serialized.
One op exists only in the serialized form: write_state, which
coremltools' writer (backend/mil/load.py) emits for coreml_update_state;
it is listed in BACKEND_OPS below.

Not represented: constexpr_* ops up to iOS17 carry their parameters as
attributes in the file, not as inputs; the table lists them as inputs.

Usage: milops_gen.py DEFS_DIR OUT.c
"""
import ast
import os
import sys

# The folders of core op definitions, oldest first.
FOLDERS = ["iOS15", "iOS16", "iOS17", "iOS18"]
# coremltools' target names -> our target index (mil_targets in src/coreml/mil.c).
TARGETS = {"iOS13": 0, "iOS14": 0, "iOS15": 0, "iOS16": 1, "iOS17": 2,
           "iOS18": 3, "iOS26": 4}
DEFS_PKG = "coremltools.converters.mil.mil.ops.defs."
# Parameter kinds of input_type.py that the serialized program carries.
KEPT_KINDS = {"TensorInputType", "TupleInputType", "ListInputType",
              "ListOrTensorOrDictInputType", "StateInputType"}
DROPPED_KINDS = {"PyFunctionInputType", "InternalInputType"}
# Ops the writer emits without a definition class: (name, target,
# [(param, types, optional, const, variadic)]).
BACKEND_OPS = [
    ("write_state", 3, [("input", None, False, False, False),
                        ("data", None, False, False, False)]),
]
# types.X -> MIL's dtype name where they differ.
TYPE_NAMES = {"str": "string"}


class GenError(Exception):
    pass


class Module:
    """One parsed .py file: its classes, imports and top-level names."""

    def __init__(self, name, path):
        self.name = name
        with open(path, encoding="utf-8") as f:
            self.tree = ast.parse(f.read(), path)
        self.classes = {}
        self.imports = {}       # local name -> (module name, name)
        self.values = {}        # local name -> expression
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.ImportFrom):
                src = self.absolute(node)
                for a in node.names:
                    self.imports[a.asname or a.name] = (src, a.name)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.values[t.id] = node.value


    def absolute(self, node):
        """The dotted module name an import reads from; relative imports
        (`from .elementwise_unary import ...`) resolve against this
        module's folder."""
        if node.level == 0:
            return node.module or ""
        parts = (DEFS_PKG + self.name).split(".")[:-node.level]
        return ".".join(parts + ([node.module] if node.module else []))


class Defs:
    """Every module of the definition folders, by dotted name
    ("iOS17.activation")."""

    def __init__(self, root):
        self.modules = {}
        for folder in FOLDERS:
            d = os.path.join(root, folder)
            for fn in sorted(os.listdir(d)):
                if fn.endswith(".py") and fn != "__init__.py":
                    name = folder + "." + fn[:-3]
                    self.modules[name] = Module(name, os.path.join(d, fn))

    def resolve_class(self, mod, name):
        """(module, ClassDef) of the class `name` seen from mod, or None
        for a class outside the definitions (Operation, ...)."""
        if name in mod.classes:
            return mod, mod.classes[name]
        if name in mod.imports:
            src, orig = mod.imports[name]
            if src.startswith(DEFS_PKG):
                other = self.modules.get(src[len(DEFS_PKG):])
                if other is not None:
                    return self.resolve_class(other, orig)
        return None

    def class_attr(self, mod, cls, attr):
        """(module, ClassDef, expression) of the class attribute `attr` of
        cls or its nearest base that defines it, or None."""
        for node in cls.body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id == attr:
                        return mod, cls, node.value
        for b in cls.bases:
            if not isinstance(b, ast.Name):
                raise GenError("%s: base class not understood" % where(mod, cls))
            found = self.resolve_class(mod, b.id)
            if found:
                r = self.class_attr(found[0], found[1], attr)
                if r:
                    return r
            elif mod.imports.get(b.id, (DEFS_PKG,))[0].startswith(DEFS_PKG):
                # a base from the definitions that we could not find would
                # silently lose its parameters
                raise GenError("%s: base class %s not found" % (where(mod, cls), b.id))
        return None


def where(mod, cls):
    return "%s.%s" % (mod.name, cls.name)


def call_name(node):
    f = node.func
    return f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)


def const_bool(kw, mod, cls):
    if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
        return kw.value.value
    raise GenError("%s: %s= is not a literal" % (where(mod, cls), kw.arg))


def read_param(defs, mod, cls, name, call):
    """One InputSpec entry: a dict, or None for a builder-only kind."""
    if not isinstance(call, ast.Call):
        raise GenError("%s: input %s is not an input type" % (where(mod, cls), name))
    kind = call_name(call)
    if kind in DROPPED_KINDS:
        return None
    if kind not in KEPT_KINDS:
        raise GenError("%s: input %s has unknown kind %s" % (where(mod, cls), name, kind))
    p = {"name": name, "kind": kind, "const": False, "optional": False,
         "domain": None}
    if call.args:
        p["domain"] = call.args[0]
    for kw in call.keywords:
        if kw.arg in ("const", "optional"):
            p[kw.arg] = const_bool(kw, mod, cls)
        elif kw.arg == "type_domain":
            p["domain"] = kw.value
        else:
            raise GenError("%s: input %s has argument %s" % (where(mod, cls), name, kw.arg))
    return p


def eval_spec(defs, mod, cls, expr):
    """The ordered {name: param} an input_spec expression stands for."""
    if isinstance(expr, ast.Call) and call_name(expr) == "InputSpec":
        out = {}
        for kw in expr.keywords:
            if kw.arg is None:
                raise GenError("%s: InputSpec(**...) is not read" % where(mod, cls))
            p = read_param(defs, mod, cls, kw.arg, kw.value)
            if p:
                out[kw.arg] = p
        return out
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left = eval_spec(defs, mod, cls, expr.left)
        for k, v in eval_spec(defs, mod, cls, expr.right).items():
            left[k] = v
        return left
    if (isinstance(expr, ast.Attribute) and expr.attr == "input_spec"
            and isinstance(expr.value, ast.Name)):
        found = defs.resolve_class(mod, expr.value.id)
        if not found:
            raise GenError("%s: class %s not found" % (where(mod, cls), expr.value.id))
        return class_spec(defs, found[0], found[1])
    raise GenError("%s: input_spec expression not understood: %s"
                   % (where(mod, cls), ast.dump(expr)[:80]))


def class_spec(defs, mod, cls):
    r = defs.class_attr(mod, cls, "input_spec")
    if r is None:
        return {}
    return eval_spec(defs, r[0], r[1], r[2])


def type_name(mod, cls, expr):
    """MIL's dtype name of a `types.X` expression."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) \
            and expr.value.id == "types":
        return TYPE_NAMES.get(expr.attr, expr.attr)
    raise GenError("%s: type not understood: %s" % (where(mod, cls), ast.dump(expr)[:80]))


def type_list(mod, cls, expr):
    if isinstance(expr, ast.Name) and expr.id in mod.values:
        return type_list(mod, cls, mod.values[expr.id])
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        names = []
        for e in expr.elts:
            for n in type_list(mod, cls, e):
                if n not in names:
                    names.append(n)
        return names
    return [type_name(mod, cls, expr)]


def type_var(p):
    """The type variable a param names ("T"), or None."""
    d = p["domain"]
    if isinstance(d, ast.Constant) and isinstance(d.value, str):
        return d.value
    return None


def domain_types(defs, mod, cls, p):
    """The '|'-joined dtype names of param p of the registered class
    (type variables resolve through its own type_domains, as an instance
    does), or None: any."""
    d = p["domain"]
    if d is None:
        return None
    if type_var(p):
        r = defs.class_attr(mod, cls, "type_domains")
        if r is None or not isinstance(r[2], ast.Dict):
            raise GenError("%s: type variable %s without type_domains"
                           % (where(mod, cls), d.value))
        for k, v in zip(r[2].keys, r[2].values):
            if isinstance(k, ast.Constant) and k.value == d.value:
                return "|".join(type_list(r[0], r[1], v))
        raise GenError("%s: type variable %s not in type_domains"
                       % (where(mod, cls), d.value))
    return "|".join(type_list(mod, cls, d))


def register_target(mod, cls):
    """The target index of a class's @register_op, or None when the class
    is not a registered core op."""
    for dec in cls.decorator_list:
        if isinstance(dec, ast.Name) and dec.id == "register_op":
            return 0
        if isinstance(dec, ast.Call) and call_name(dec) == "register_op":
            target = 0
            for kw in dec.keywords:
                if kw.arg == "namespace":
                    return None
                if kw.arg == "opset_version":
                    target = target_index(mod, cls, kw.value)
            return target
    return None


def target_index(mod, cls, expr):
    # _IOS17_TARGET (each folder's alias) or target.iOS17
    if isinstance(expr, ast.Name) and expr.id.startswith("_IOS") \
            and expr.id.endswith("_TARGET"):
        key = "iOS" + expr.id[4:-7]
    elif isinstance(expr, ast.Attribute):
        key = expr.attr
    else:
        key = None
    if key not in TARGETS:
        raise GenError("%s: opset_version not understood" % where(mod, cls))
    return TARGETS[key]


def collect(defs):
    """[(name, since, [param dict])] of every registered core op."""
    ops = {}
    for mod in defs.modules.values():
        for cls in mod.classes.values():
            since = register_target(mod, cls)
            # _const_symbolic and the like serve the Python builder only
            if since is None or cls.name.startswith("_"):
                continue
            key = (cls.name, since)
            if key in ops:
                raise GenError("%s: %s registered twice at target %d"
                               % (where(mod, cls), cls.name, since))
            params = []
            for p in class_spec(defs, mod, cls).values():
                params.append({"name": p["name"],
                               "types": domain_types(defs, mod, cls, p),
                               "optional": p["optional"], "const": p["const"],
                               "variadic": p["kind"] == "TupleInputType",
                               "tvar": type_var(p)})
            ops[key] = params
    for name, since, params in BACKEND_OPS:
        ops[(name, since)] = [{"name": n, "types": t, "optional": o, "const": c,
                               "variadic": v, "tvar": None} for n, t, o, c, v in params]
    return [(n, s, ops[(n, s)]) for (n, s) in sorted(ops)]


def c_str(s):
    if s is None:
        return "NULL"
    s.encode("ascii")
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_bool(b):
    return "true" if b else "false"


def write(ops, out_path):
    lines = [
        "/*",
        " * milops_table.c - GENERATED by src/coreml/milops_gen.py (`make milops`) from",
        " * coremltools' MIL op definitions (coremltools/converters/mil/mil/ops/",
        " * defs/iOS15..iOS18, read as source); do not edit. One entry per op",
        " * version, sorted by name then first target; see src/coreml/milops.h.",
        " */",
        "#include \"coreml/milops.h\"",
        "",
    ]
    for i, (name, since, params) in enumerate(ops):
        if not params:
            continue
        lines.append("static const MilParam mp_%d[] = {  /* %s */" % (i, name))
        for p in params:
            lines.append("    {%s, %s, %s, %s, %s, %s}," % (
                c_str(p["name"]), c_str(p["types"]), c_bool(p["optional"]),
                c_bool(p["const"]), c_bool(p["variadic"]), c_str(p["tvar"])))
        lines.append("};")
    lines.append("")
    lines.append("const MilOpSchema milop_table[] = {")
    for i, (name, since, params) in enumerate(ops):
        arr = "mp_%d" % i if params else "NULL"
        lines.append("    {%s, %d, %d, %s}," % (c_str(name), since, len(params), arr))
    lines.append("};")
    lines.append("const size_t milop_table_n = sizeof milop_table / sizeof milop_table[0];")
    text = "\n".join(lines) + "\n"
    with open(out_path, "w", encoding="ascii") as f:
        f.write(text)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: milops_gen.py DEFS_DIR OUT.c\n")
        return 2
    try:
        ops = collect(Defs(argv[1]))
    except (GenError, OSError, SyntaxError) as e:
        sys.stderr.write("milops_gen.py: %s\n" % e)
        return 1
    write(ops, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
