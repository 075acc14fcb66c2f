#!/usr/bin/env python3
"""--help, --version, README and the man page agree (issue 8).

- README "Command-line reference" holds, after `<!-- help: CMD -->`, a
  ```text block equal to what `onnx-convert CMD --help` prints (overview:
  `onnx-convert --help`); `CMD -h` and `help CMD` print the same, exit 0;
- every option any help text names appears in the man page source
  (src/cli/onnx-convert.1, options written as \\-\\-name), and the page
  renders with `man -l` without a warning;
- --version names the version of include/onnxconvert.h (the man page's
  .TH says the same) and the newest opsets of the operator data when
  ../shared/spec/onnx-opsets.json is there.

Usage: cli_help.py ONNX_CONVERT   (from the project root). Prints
"cli_help: N passed, N failed".
"""
import json
import os
import re
import shutil
import sys

COMMANDS = ["overview", "convert", "optimize", "check", "info", "run", "test"]
MAN = "src/cli/onnx-convert.1"
from clitest import check, report, run, skip


def readme_blocks():
    text = open("README.md", encoding="utf-8").read()
    blocks = {}
    for m in re.finditer(r"<!-- help: (\w+) -->\n```text\n(.*?)```\n", text, re.S):
        blocks[m.group(1)] = m.group(2)
    return blocks


def help_of(bin_, cmd, form):
    if cmd == "overview":
        args = {"long": ["--help"], "short": ["-h"], "help": ["help"]}[form]
    else:
        args = {"long": [cmd, "--help"], "short": [cmd, "-h"], "help": ["help", cmd]}[form]
    return run(bin_, *args)


def options_in(text):
    """Every -x / --name an help text mentions."""
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z]|-[a-z])\b", text))


def check_helps(bin_):
    blocks = readme_blocks()
    options = set()
    for cmd in COMMANDS:
        p = help_of(bin_, cmd, "long")
        check(p.returncode == 0 and p.stdout and not p.stderr, "%s --help: exit %d" % (cmd, p.returncode))
        check(blocks.get(cmd) == p.stdout,
              "README's help of %s differs from the program's:\n%s" % (cmd, p.stdout))
        for form in ("short", "help"):
            q = help_of(bin_, cmd, form)
            check(q.returncode == 0 and q.stdout == p.stdout, "%s: %s form differs" % (cmd, form))
        options |= options_in(p.stdout)
    return options


def check_man(options):
    src = open(MAN, encoding="utf-8").read()
    for opt in sorted(options):
        check(opt.replace("-", "\\-") in src, "man page misses %s" % opt)
    if not shutil.which("man"):
        check(False, "man is not installed (Debian package man-db)")
        return
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C")
    p = run("man", "--warnings", "-l", MAN, env=env)
    check(p.returncode == 0 and not p.stderr.strip(), "man -l: exit %d: %s" % (p.returncode, p.stderr))
    check("ONNX-CONVERT(1)" in p.stdout and "SYNOPSIS" in p.stdout and "EXIT STATUS" in p.stdout,
          "man -l renders the page")
    for opt in ("--out-dir", "--json", "--version", "--external-threshold"):
        check(opt in p.stdout.replace("\u2010", "-"), "rendered page shows %s" % opt)


def header_version():
    text = open("include/onnxconvert.h").read()
    m = re.search(r'#define ONNXCONVERT_VERSION "([^"]+)"', text)
    return m.group(1) if m else None


def newest(spec, domain):
    data = json.load(open(spec))
    best = 0
    def walk(x):
        nonlocal best
        if isinstance(x, dict):
            if x.get("domain", None) == domain and isinstance(x.get("since_version"), int):
                best = max(best, x["since_version"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(data)
    return best


def check_version(bin_):
    p = run(bin_, "--version")
    v = header_version()
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and lines and lines[0] == "onnx-convert %s" % v,
          "--version: %r, header says %s" % (p.stdout, v))
    th = re.search(r'^\.TH .*"onnx-convert ([^"]+)"', open(MAN).read(), re.M)
    check(th and th.group(1) == v, "man page .TH version %s, header %s" % (th and th.group(1), v))
    check(any(l.startswith("newest IR version: ") for l in lines), "--version names the IR version")
    spec = "../shared/spec/onnx-opsets.json"
    if os.path.exists(spec):
        want = "newest opsets: ai.onnx %d, ai.onnx.ml %d" % (newest(spec, ""), newest(spec, "ai.onnx.ml"))
        check(want in lines, "--version: %r, the operator data says %r" % (lines, want))
    else:
        skip("cli_help: %s not found: --version's opsets not compared" % spec)


def main():
    bin_ = sys.argv[1]
    options = check_helps(bin_)
    check(len(options) >= 25, "only %d options found in the help texts" % len(options))
    check_man(options)
    check_version(bin_)
    return report("cli_help")


if __name__ == "__main__":
    sys.exit(main())
