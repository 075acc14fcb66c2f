#!/usr/bin/env python3
"""--help, --version and the man page agree (issue 8; issue 21: the man
page and --help are the command reference, the README no longer holds one).

- `onnx-convert CMD --help` exits 0 and prints to stdout, and `CMD -h` and
  `help CMD` print the same (overview: `--help`, `-h`, `help`);
- the commands are the same in the overview --help, the man page's
  SYNOPSIS and the subsections (.SS) of its COMMANDS section;
- every option a command's --help names appears in that command's
  subsection of the man page or in its OPTIONS section (written \\-\\-name);
- every option the man page defines (a .TP heading of a command's
  subsection or of OPTIONS, or the lead paragraph of a subsection, such as
  optimize's "takes ... as convert does") is in that command's --help
  (OPTIONS: in the overview's or some command's);
- the page renders with `man -l` without a warning;
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

COMMANDS = ["convert", "optimize", "check", "info", "run", "test", "compare"]
MAN = "src/cli/onnx-convert.1"
from clitest import check, report, run, skip


def help_of(bin_, cmd, form):
    if cmd == "overview":
        args = {"long": ["--help"], "short": ["-h"], "help": ["help"]}[form]
    else:
        args = {"long": [cmd, "--help"], "short": [cmd, "-h"], "help": ["help", cmd]}[form]
    return run(bin_, *args)


def options_in(text):
    """Every -x / --name a text mentions (roff's \\- read as -)."""
    text = text.replace("\\-", "-")
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z]|-[a-z])\b", text))


def helps(bin_):
    """{cmd: --help text} for the overview and every command, checking the
    three forms agree."""
    out = {}
    for cmd in ["overview"] + COMMANDS:
        p = help_of(bin_, cmd, "long")
        check(p.returncode == 0 and p.stdout and not p.stderr, "%s --help: exit %d" % (cmd, p.returncode))
        for form in ("short", "help"):
            q = help_of(bin_, cmd, form)
            check(q.returncode == 0 and q.stdout == p.stdout, "%s: %s form differs" % (cmd, form))
        out[cmd] = p.stdout
    return out


def help_commands(overview):
    """The names listed under "commands:" in the overview --help."""
    m = re.search(r"^commands:\n((?:  \w+ +.*\n)+)", overview, re.M)
    return [l.split()[0] for l in m.group(1).splitlines()] if m else []


def man_sections(src):
    """{".SH name": body} and {".SS name" of COMMANDS: body}."""
    sh, ss = {}, {}
    for m in re.finditer(r"^\.SH (.+)\n((?:(?!\.SH ).*\n)*)", src, re.M):
        sh[m.group(1).strip('"')] = m.group(2)
    for m in re.finditer(r"^\.SS (\S+)\n((?:(?!\.SS ).*\n)*)", sh.get("COMMANDS", ""), re.M):
        ss[m.group(1)] = m.group(2)
    return sh, ss


def defined(body):
    """The options a man page section defines: its .TP headings and the
    paragraph before its first .TP."""
    lead = body.split("\n.TP\n", 1)[0]
    heads = re.findall(r"^\.TP\n(.*)\n", body, re.M)
    return options_in(lead + "\n" + "\n".join(heads))


def check_commands(helptexts, sh, ss):
    listed = help_commands(helptexts["overview"])
    check(listed == COMMANDS, "overview --help lists %s" % listed)
    check(list(ss) == COMMANDS, "man COMMANDS has subsections %s" % list(ss))
    synopsis = re.findall(r"^\.B onnx-convert (\w+)", sh.get("SYNOPSIS", ""), re.M)
    check(sorted(set(synopsis)) == sorted(COMMANDS), "man SYNOPSIS names %s" % sorted(set(synopsis)))


def check_options(helptexts, sh, ss):
    general = options_in(sh.get("OPTIONS", ""))
    every_help = set()
    for cmd in COMMANDS:
        hopts = options_in(helptexts[cmd])
        every_help |= hopts
        mopts = options_in(ss.get(cmd, "")) | general
        for opt in sorted(hopts):
            check(opt in mopts, "man page's %s misses %s, which %s --help names" % (cmd, opt, cmd))
        for opt in sorted(defined(ss.get(cmd, ""))):
            check(opt in hopts, "man page's %s defines %s, which %s --help lacks" % (cmd, opt, cmd))
    over = options_in(helptexts["overview"])
    for opt in sorted(options_in(helptexts["overview"])):
        check(opt in general or opt in every_help, "man page misses %s of the overview --help" % opt)
    for opt in sorted(defined(sh.get("OPTIONS", ""))):
        check(opt in over or opt in every_help, "man page's OPTIONS defines %s, which no --help names" % opt)
    return every_help | over


def check_render():
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


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def blas_kernels(bin_, env=None):
    """The kernels --version says OpenBLAS computes with, or None."""
    p = run(bin_, "--version", env=env)
    m = re.search(r"^evaluator products: OpenBLAS, (\S+) kernels", p.stdout, re.M)
    return m.group(1) if m else None


def check_blas(bin_):
    """OpenBLAS's oldest kernels (Prescott) are not used on a machine with
    AVX2 and FMA (issue 36: OpenBLAS 0.3.21 gives them to CPUs it does not
    know), and a user's OPENBLAS_CORETYPE is respected."""
    got = blas_kernels(bin_)
    if got is None:
        skip("cli_help: --version names no OpenBLAS kernels (another BLAS)")
        return
    if {"avx2", "fma"} <= cpu_flags():
        check(got != "Prescott", "--version: OpenBLAS computes with Prescott's kernels on a "
              "machine with AVX2 and FMA")
    env = dict(os.environ, OPENBLAS_CORETYPE="Prescott")
    check(blas_kernels(bin_, env) == "Prescott",
          "--version: OPENBLAS_CORETYPE=Prescott given, kernels %s" % blas_kernels(bin_, env))


def main():
    bin_ = sys.argv[1]
    helptexts = helps(bin_)
    sh, ss = man_sections(open(MAN, encoding="utf-8").read())
    check_commands(helptexts, sh, ss)
    options = check_options(helptexts, sh, ss)
    check(len(options) >= 25, "only %d options found in the help texts" % len(options))
    check_render()
    check_version(bin_)
    check_blas(bin_)
    return report("cli_help")


if __name__ == "__main__":
    sys.exit(main())
