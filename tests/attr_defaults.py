#!/usr/bin/env python3
"""No literal attribute default where the operator table has one (issue 21).

The attribute readers of the adapters, inference, the evaluator, the Core
ML lowerings and the fusions take the default from the operator table:
`ev_attr_i(c, "axis")`, `cml_attr_i(n, "axis")`,
`opt_fz_attr_i(k, "group", opset, &ok)`. A reader with an
explicit fallback has the suffix `_or` (`ev_attr_i_or(c, "name", 0)`) and
is allowed only where the table has no default for that attribute (an
optional attribute without one, an attribute the op's version lacks). Each
such call must be listed, with its reason, in
tests/attr_defaults_exceptions.txt as `FILE ATTRIBUTE reason...`; a listed
line that matches no call is stale and fails too.

Checked:
- every `_or(` call of an attribute reader in the product (every .c file
  below src/, adapters/ and passes/) names its attribute as a string
  literal and is listed;
- no listed exception is stale, and each has a reason;
- no scalar reader without `_or` (`_attr_i`, `_attr_f`, `_attr_s`) is
  called with an argument more than it takes (a literal default through
  the back door).

Usage: attr_defaults.py   (from the project root). Prints
"attr_defaults: N passed, N failed".
"""
import glob
import re
import sys

DIRS = ["adapters/*.c", "passes/*.c", "src/**/*.c"]
EXCEPTIONS = "tests/attr_defaults_exceptions.txt"
READERS = r'(?:ev|inf|ad|cml|opt_fz)'
PLAIN_CALL = re.compile(r'\b(' + READERS + r'_attr_[ifs])\s*\(')
# arguments of the plain readers: node or context and name; the string
# readers also take the buffer they copy into (buf, cap); the fusions'
# also the opset the default is read at and the ok flag
PLAIN_ARGS = {"ad_attr_s": 4, "cml_attr_s": 4, "opt_fz_attr_i": 4, "opt_fz_attr_f": 4}

passed = failed = 0


def check(cond, msg):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", msg, file=sys.stderr)


def strip_comments(text):
    """The text with C comments and string contents other than the first
    argument kept: only comments are removed (a call in a comment is not a
    call)."""
    return re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def args_of(text, start):
    """The top-level arguments of the call whose '(' is at text[start]."""
    depth, cur, args, i = 0, "", [], start
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur += text[i:j + 1]
            i = j + 1
            continue
        if ch in "([{":
            depth += 1
            if depth > 1:
                cur += ch
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args
            cur += ch
        elif ch == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    return args


def read_exceptions():
    out = {}
    with open(EXCEPTIONS, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split(None, 2)
            check(len(words) == 3, f"{EXCEPTIONS}:{lineno}: needs FILE ATTRIBUTE reason")
            if len(words) == 3:
                out[(words[0], words[1])] = lineno
    return out


def main():
    allowed = read_exceptions()
    used = set()
    for pattern in DIRS:
        for path in sorted(glob.glob(pattern, recursive=True)):
            text = strip_comments(open(path, encoding="utf-8").read())
            for m in re.finditer(r'\b(' + READERS + r'_attr_[a-z0-9_]+?_or)\s*\(', text):
                if text[:m.start()].rstrip().endswith(("int64_t", "float", "char *", "*")):
                    continue  # the definition or declaration itself
                args = args_of(text, m.end() - 1)
                name = args[1] if len(args) > 1 else ""
                line = text.count("\n", 0, m.start()) + 1
                if name == "name":
                    continue  # a reader forwarding its own parameter (its definition)
                literal = re.fullmatch(r'"([^"]+)"', name)
                check(literal is not None,
                      f"{path}:{line}: {m.group(1)} names its attribute by a literal")
                if not literal:
                    continue
                key = (path, literal.group(1))
                used.add(key)
                check(key in allowed,
                      f"{path}:{line}: {m.group(1)}(..., \"{key[1]}\", ...) passes a literal "
                      f"default; take the table's, or list it in {EXCEPTIONS} with a reason")
            for m in PLAIN_CALL.finditer(text):
                if text[:m.start()].rstrip().endswith(("int64_t", "float", "char *", "*",
                                                        "bool", "size_t")):
                    continue
                args = args_of(text, m.end() - 1)
                line = text.count("\n", 0, m.start()) + 1
                want = PLAIN_ARGS.get(m.group(1), 2)
                check(len(args) == want,
                      f"{path}:{line}: {m.group(1)} takes {want} arguments; a fallback needs _or")
    for key, lineno in sorted(allowed.items(), key=lambda kv: kv[1]):
        check(key in used, f"{EXCEPTIONS}:{lineno}: {key[0]} {key[1]} matches no call (stale)")
    print(f"attr_defaults: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
