"""milops_registry.py - judges src/coreml/milops_table.c (made by reading
coremltools' op definitions as source) against coremltools' own op
registry, imported and run: every registered core op version, its first
target, and each parameter's flags, dtypes and type variable must agree. An independent
check of the generator's reading of inheritance, InputSpec sums, imports
and type variables. Skips when the coremltools judge is not set up
(../shared/tools/coremltools, setup.sh).

Usage: /usr/bin/python3 tests/milops_registry.py [CT_DIR]
"""
import os
import re
import subprocess
import sys

NAME = "milops_registry"
CT = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OC_CT_DIR", "../shared/tools/coremltools")
TARGETS = ["iOS15", "iOS16", "iOS17", "iOS18", "iOS26"]

# Run inside the judge's interpreter setup (its src/ and stubs/ first,
# nothing of the caller's site-packages), printing one line per version.
DUMP = r'''
import sys
sys.path[:0] = [sys.argv[1] + "/src", sys.argv[1] + "/stubs"]
import coremltools.converters.mil.mil.ops.defs  # registers the ops
from coremltools.converters.mil.mil.ops.registry import SSAOpRegistry as R
from coremltools.converters.mil.mil import input_type as it
from coremltools.converters.mil.mil import types as ty
for name in sorted(R.core_ops):
    seen = []
    for ver in sorted(R.core_ops[name]):
        cls = R.core_ops[name][ver]
        if cls in seen:
            continue
        seen.append(cls)
        params = []
        for p, t in cls.input_spec.input_types.items():
            if isinstance(t, (it.PyFunctionInputType, it.InternalInputType)):
                continue
            dom = getattr(t, "type_domain_id", None)
            if dom is not None:
                types = cls.type_domains[dom]
            else:
                types = getattr(t, "_type_domain", ()) or ()
            types = "|".join(ty.builtin_to_string(x) for x in types) or "-"
            params.append("%s:%s:%d:%d:%d:%s" % (p, types, t.optional, t.const,
                                                  isinstance(t, it.TupleInputType), dom or "-"))
        print(name, ver.name, " ".join(params))
'''


def ours():
    """{(name, target name): [param strings]} from src/coreml/milops_table.c."""
    text = open("src/coreml/milops_table.c").read()
    arrays = {}
    for m in re.finditer(r"static const MilParam (mp_\d+)\[\] = \{[^\n]*\n(.*?)\n\};", text, re.S):
        rows = []
        for r in re.finditer(r'\{"(\w+)", (NULL|"[^"]*"), (true|false), (true|false), (true|false), '
                             r'(NULL|"\w+")\}', m.group(2)):
            types = "-" if r.group(2) == "NULL" else r.group(2).strip('"')
            tvar = "-" if r.group(6) == "NULL" else r.group(6).strip('"')
            rows.append("%s:%s:%d:%d:%d:%s" % (r.group(1), types, r.group(3) == "true",
                                               r.group(4) == "true", r.group(5) == "true", tvar))
        arrays[m.group(1)] = rows
    table = {}
    for m in re.finditer(r'^    \{"(\w+)", (\d+), (\d+), (mp_\d+|NULL)\},$', text, re.M):
        table[(m.group(1), TARGETS[int(m.group(2))])] = arrays.get(m.group(4), [])
    return table


def main():
    setup = os.path.join(CT, "setup.sh")
    if os.access(setup, os.X_OK):
        # idempotent, well under a second once done (the judge's README)
        subprocess.run([setup, "--no-selftest"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    if not os.path.isfile(os.path.join(CT, "src/coremltools/libmilstoragepython.so")):
        print("SKIP %s: the coremltools judge is not set up (%s/setup.sh)" % (NAME, CT))
        print("%s: 0 passed, 0 failed, 1 skipped" % NAME)
        return 0
    r = subprocess.run(["/usr/bin/python3", "-E", "-s", "-c", DUMP, CT],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL %s: the registry dump failed: %s" % (NAME, r.stderr.strip()[-300:]))
        print("%s: 0 passed, 1 failed" % NAME)
        return 1
    theirs = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        name, ver, params = parts[0], parts[1], parts[2:]
        if name.startswith("_"):
            continue  # builder-only (the table leaves them out too)
        # iOS13/iOS14 registrations are the neural-network era: the first
        # ML Program target has them
        if ver in ("iOS13", "iOS14"):
            ver = "iOS15"
        theirs[(name, ver)] = params
    table = ours()
    passed = failed = 0
    for key in sorted(theirs):
        if table.get(key) == theirs[key]:
            passed += 1
        else:
            failed += 1
            print("FAIL %s: %s at %s: registry %s, table %s"
                  % (NAME, key[0], key[1], theirs[key], table.get(key)))
    # the table's entries beyond the registry: only the writer's own ops
    extra = sorted(k for k in table if k not in theirs)
    if extra == [("write_state", "iOS18")]:
        passed += 1
    else:
        failed += 1
        print("FAIL %s: entries the registry lacks: %s" % (NAME, extra))
    print("%s: %d passed, %d failed" % (NAME, passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
