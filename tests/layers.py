#!/usr/bin/python3
"""layers.py - the product's rooms include only from the rooms below them.

Reads every #include "..." of the product (src/ROOM/..., adapters/,
passes/) and fails on
  - an include of a room the table below does not allow the includer's
    room to use (up or sideways), or of a header that is not in a room;
  - a cycle between modules (a module is a .c and its .h: x.c, x.h), which
    is a cycle in what links what even where the rooms allow each edge;
  - a source file at the root of src/, or a Core ML file outside
    src/coreml/.
The rooms and their order are docs/HACKING.md's. `--tree DIR` reads
another tree. Prints one line per finding and "layers: N files, N
includes, N findings".

`--self-test` (what `make check` runs) checks the tree, then plants each
fault of PLANTS in a fresh copy and checks that it is found, alone:
"layers: N passed, N failed".
"""
import os, re, sys

# room -> the rooms it may include from (itself always allowed)
ALLOWED = {
    'base': [],
    'ir': ['base'],
    'io': ['ir', 'base'],
    'schema': ['ir', 'base'],
    'analysis': ['schema', 'ir', 'base'],
    'eval': ['io', 'schema', 'ir', 'base'],
    'adapters': ['analysis', 'schema', 'ir', 'base'],
    'convert': ['adapters', 'passes', 'analysis', 'eval', 'schema', 'ir', 'base'],
    'passes': ['analysis', 'eval', 'schema', 'ir', 'base'],
    'precision': ['passes', 'analysis', 'eval', 'io', 'schema', 'ir', 'base'],
    'coreml': ['adapters', 'convert', 'passes', 'analysis', 'eval', 'io', 'schema', 'ir',
               'base'],
    'driver': ['coreml', 'precision', 'convert', 'adapters', 'passes', 'analysis', 'eval',
               'io', 'schema', 'ir', 'base'],
    'cli': ['driver', 'coreml', 'precision', 'convert', 'adapters', 'passes', 'analysis',
            'eval', 'io', 'schema', 'ir', 'base'],
}
# headers from outside the product anyone may include: the public header,
# the generated protobuf code (only io and coreml), uthash
OUTSIDE = {'onnxconvert.h': None, 'uthash.h': None,
           'onnx.pb-c.h': ['io', 'eval'], 'coreml.pb-c.h': ['coreml']}
COREML_WORDS = re.compile(r'^(coreml|mil|mlpackage|info_mil)')


def room_of(path):
    """The room of a product path, or None."""
    parts = path.split('/')
    if parts[0] == 'adapters':
        return 'adapters'
    if parts[0] == 'passes':
        return 'passes'
    if parts[0] == 'src' and len(parts) >= 3 and parts[1] in ALLOWED:
        return parts[1]
    return None


def product_files(tree):
    out = []
    for top in ('src', 'adapters', 'passes'):
        for dirpath, _, names in os.walk(os.path.join(tree, top)):
            for n in sorted(names):
                if n.endswith(('.c', '.h')):
                    out.append(os.path.relpath(os.path.join(dirpath, n), tree))
    return sorted(out)


def resolve(tree, f, inc):
    for cand in (os.path.join(os.path.dirname(f), inc), 'src/' + inc, inc,
                 'include/' + inc):
        c = os.path.normpath(cand)
        if os.path.isfile(os.path.join(tree, c)):
            return c
    return None


def module(path):
    return os.path.splitext(path)[0]


def find_cycle(graph):
    """One cycle of graph (dict node -> set of nodes) as a list, or None."""
    colour, stack = {}, []

    def visit(u):
        colour[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if colour.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if not colour.get(v):
                c = visit(v)
                if c:
                    return c
        stack.pop()
        colour[u] = 2
        return None
    for u in sorted(graph):
        if not colour.get(u):
            c = visit(u)
            if c:
                return c
    return None


def check(tree):
    findings, n_inc = [], 0
    files = product_files(tree)
    graph = {}
    for f in files:
        parts = f.split('/')
        if parts[0] == 'src' and len(parts) == 2:
            findings.append('%s: a source file at the root of src/ (put it in a room)' % f)
            continue
        base = os.path.basename(f)
        if COREML_WORDS.match(base) and not f.startswith('src/coreml/'):
            findings.append('%s: a Core ML file outside src/coreml/' % f)
        r = room_of(f)
        if r is None:
            findings.append('%s: not in a room the table knows' % f)
            continue
        text = open(os.path.join(tree, f)).read()
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            inc = m.group(1)
            n_inc += 1
            line = text.count('\n', 0, m.start()) + 1
            if inc in OUTSIDE:
                rooms = OUTSIDE[inc]
                if rooms is not None and r not in rooms:
                    findings.append('%s:%d: room %s includes %s (only %s may)'
                                    % (f, line, r, inc, ', '.join(rooms)))
                continue
            t = resolve(tree, f, inc)
            if t is None:
                findings.append('%s:%d: includes "%s", which is not in the tree' % (f, line, inc))
                continue
            tr = room_of(t)
            if tr is None:
                findings.append('%s:%d: includes %s, which is in no room' % (f, line, t))
                continue
            if tr != r and tr not in ALLOWED[r]:
                findings.append('%s:%d: room %s may not include room %s (%s)'
                                % (f, line, r, tr, t))
            if module(t) != module(f):
                graph.setdefault(module(f), set()).add(module(t))
    cyc = find_cycle(graph)
    if cyc:
        findings.append('cycle between modules: ' + ' -> '.join(cyc))
    return files, n_inc, findings


def plant(tree, path, text):
    """Writes `text` at tree/path (appends to an existing file)."""
    full = os.path.join(tree, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'a') as f:
        f.write(text)


# Planted faults the check must find, each in a fresh copy of the tree:
# (what, [(path, text appended)], a word the one new finding must hold)
PLANTS = [
    ('an upward include', [('src/ir/ir_walk.c', '\n#include "driver/job.h"\n')],
     'room ir may not include room driver'),
    ('a sideways include', [('src/io/save.c', '\n#include "schema/opschema.h"\n')],
     'room io may not include room schema'),
    ('a cycle between modules', [
        ('src/base/plant_a.h', '#include "base/json.h"\n'),
        ('src/base/plant_a.c', '#include "base/plant_a.h"\n#include "base/plant_b.h"\n'),
        ('src/base/plant_b.h', '#include <stddef.h>\n'),
        ('src/base/plant_b.c', '#include "base/plant_b.h"\n#include "base/plant_a.h"\n')],
     'cycle between modules'),
    ('a source file at the root of src/', [('src/plant.c', '#include "ir/ir.h"\n')],
     'root of src/'),
    ('a Core ML file outside src/coreml/', [('src/driver/mil_plant.c', '#include "ir/ir.h"\n')],
     'Core ML file outside'),
]


def self_test(tree):
    """Checks the real tree, then that each planted fault is found."""
    import shutil
    import tempfile
    passed = failed = 0
    _, _, base = check(tree)
    for x in base:
        print('FAIL', x)
    passed, failed = (1, 0) if not base else (0, 1)
    for what, files, word in PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            for top in ('src', 'adapters', 'passes', 'include'):
                shutil.copytree(os.path.join(tree, top), os.path.join(tmp, top))
            for path, text in files:
                plant(tmp, path, text)
            _, _, got = check(tmp)
            new = [x for x in got if x not in base]
            if len(new) == 1 and word in new[0]:
                passed += 1
            else:
                failed += 1
                print('FAIL planted %s: found %s' % (what, new or 'nothing'))
    print('layers: %d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


def main():
    tree = '.'
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == '--tree':
        tree = args[1]
        args = args[2:]
    if args == ['--self-test']:
        return self_test(tree)
    files, n_inc, findings = check(tree)
    for x in findings:
        print(x)
    print('layers: %d files, %d includes, %d findings' % (len(files), n_inc, len(findings)))
    return 1 if findings else 0


if __name__ == '__main__':
    sys.exit(main())
