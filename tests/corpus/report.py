"""docs/corpus.md from tests/corpus/check.py's results: how to run it, the
totals per feature, the table per model file, the refusals grouped by
reason and every failure by name."""
import collections
import re
import time

FEATURES = ["convert", "back", "optimize", "float16", "float16-io", "bfloat16", "bfloat16-io",
            "auto", "store", "coreml", "python", "import"]
PER_TARGET = ("convert", "back")   # one cell per target
STATUSES = ["ok", "refused", "na", "nojudge", "failed", "wrong"]
HEAD = """# The real-model corpus: every feature on every model

`make corpus-check` generates the corpus (`tests/corpus/gen.py`: torchvision
architectures and a zoo of `torch.nn` layers exported by PyTorch at several
opsets, and the files other tools write: float16 models, quantized ones)
into `build/corpus`, then runs every feature of the tool on every model
file and has judges we did not write decide (`tests/corpus/check.py`):

| feature | what runs | judged by |
|---|---|---|
| convert | `convert --opset T`, T = 7..26 | ONNX Runtime 1.30 against PyTorch's outputs, at the file's tolerance |
| back | each file convert wrote, converted back to the model's own opset (`convert cT.onnx --opset OWN`) | as convert |
| optimize | `optimize` | ONNX Runtime's outputs, and our node count at or below ORT's "basic" level on the original (`bench/ort_basic.js`) |
| float16, float16-io | `--dtype float16 --verify`, without and with `--keep-io-types` | ONNX Runtime at float16's tolerance ([evaluator.md](evaluator.md#verifying-across-float-types): rtol 1e-2, atol 3e-2 times the output's largest value), added to the file's |
| bfloat16, bfloat16-io | `--dtype bfloat16 --verify`, at the opset the report's hint names when the model's lacks the type | ONNX Runtime at bfloat16's tolerance (5e-2, 1.25e-1) where it has the kernels, else its load-time checks (counted as "not judged") |
| auto | `--dtype float16 --keep-io-types --auto --inputs CASE` | ONNX Runtime at float16's tolerance |
| store | `--store float16` | ONNX Runtime at float16's tolerance |
| coreml | `convert M -o M.mlpackage` at the lowest target, then the import `convert M.mlpackage -o back.onnx --opset 13` (the file's own opset where higher) | Apple's loader (coremltools' `ct_check.py`) on the package; ONNX Runtime on the import against PyTorch's outputs |
| python | the Python package: `convert(bytes, 17)` (13 for a model at 17), then `run()` of the result | the command line's bytes; ONNX Runtime's judge on `run()`'s outputs |
| import | only for the Core ML packages coremltools' PyTorch front end made (`kind` coremltools, `NAME_ct_fp32`/`_fp16`, no model.onnx; every other column is "-" for them): `convert model.mlpackage -o back.onnx` (the import's own opset; the convert column judges conversions) | ONNX Runtime against PyTorch's outputs (float16 compute at float16's tolerance, scaled), or against its run of the same model's ONNX export where PyTorch's and ORT's outputs already differ; a float16 package whose PyTorch outputs pass float16's range is not judged |

Each result is **ok**; **refused** (exit 1 with a reason, recorded below);
**n/a** (a target that lacks the model's types, `type-absent`: counted
apart); **not judged** (ORT cannot run the original, or lacks a kernel or
a type for the result: the file loaded and passed ORT's checks); **failed**
(a crash, a timeout, an optimized model above ORT's node count, an import
refused); or **wrong**: a file we wrote with exit 0 that a judge refuses or
whose numbers differ. Wrong must be 0.

The reference is PyTorch's outputs, except where ORT itself does not
reproduce them on the original (then ORT's own outputs of the original:
the difference is not ours; a result that gives PyTorch's outputs there is
ok too, "PyTorch's outputs" in its cell), and for files no PyTorch run made (the
quantized and float16 files other tools write: `expected_by: none`), where
ORT's run of the original is the reference. A float16 file another tool
made from an export stands for that export's outputs too: a result within
float16's tolerance of its source's PyTorch outputs is ok ("the float32
source's PyTorch outputs"), and where ORT's run of the half original
itself strays from them (its outputs turn on half rounding: a detector's
close scores), a result matching neither is **not judged**, with that
reason (judging it needs the file's own noise: issue 36).

Run it:

    make corpus-check                      # generate, judge, write this page
    /usr/bin/python3 tests/corpus/check.py build/onnx-convert build/corpus \\
        --md docs/corpus.md --json build/corpus.json [--only NAME] [--jobs 2]

`tests/run.sh` (`make check`) runs the fixed sample (`gen.py --sample`,
`check.py --sample`: targets 7, 9, 11, 13, 17, 21, 26) and prints
`corpus: N passed, N failed`; there a refusal or failure passes only when
`tests/corpus/expected.txt` lists it with its reason (a wrong never does).
"""


def cell_text(c):
    s = c.get("status")
    if s == "ok":
        return "ok" + (" (%s)" % c["detail"] if c.get("detail") else "")
    if s in ("refused", "na"):
        return "%s: %s %s" % ("n/a" if s == "na" else "refused", c.get("reason", ""), c.get("where", ""))
    if s == "nojudge":
        return "not judged"
    return "**%s**" % s.upper()


def convert_cell(cells):
    n = collections.Counter(c["status"] for c in cells.values())
    parts = ["%d/%d ok" % (n["ok"], len(cells))]
    for s, lab in (("refused", "refused"), ("na", "n/a"), ("nojudge", "not judged"),
                   ("failed", "**FAILED**"), ("wrong", "**WRONG**")):
        if n[s]:
            bad = [t for t, c in cells.items() if c["status"] == s]
            parts.append("%d %s (%s)" % (n[s], lab, ",".join(bad) if len(bad) <= 6 else
                                         "%s..%s" % (bad[0], bad[-1])))
    return ", ".join(parts)


def totals(doc):
    rows = ["| feature | cells | ok | refused | n/a | not judged | failed | wrong | ok rate | ok rate without n/a |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    per = doc["summary"]["per_feature"]
    for f in FEATURES:
        n = per.get(f) or {}
        total = sum(n.values())
        if not total:
            continue
        na = n.get("na", 0)
        rate = lambda k, d: "%.1f%%" % (100.0 * k / d) if d else "-"  # noqa: E731
        rows.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            f, total, *(str(n.get(s, 0)) for s in STATUSES),
            rate(n.get("ok", 0), total), rate(n.get("ok", 0), total - na)))
    return "\n".join(rows)


def model_table(doc):
    head = "| file | family | kind | " + " | ".join(FEATURES) + " | s |"
    rows = [head, "|" + "---|" * (len(FEATURES) + 4)]
    for r in doc["files"]:
        m = r["meta"]
        if r.get("error"):
            rows.append("| %s | %s | %s | check.py: %s |" % (m["file"], m["family"], m["kind"], r["error"]))
            continue
        cells = []
        for f in FEATURES:
            c = r.get(f)
            cells.append("-" if c is None else convert_cell(c) if f in PER_TARGET else cell_text(c))
        rows.append("| %s | %s | %s | %s | %.0f |" % (m["file"], m["family"], m["kind"],
                                                      " | ".join(cells), r.get("seconds", 0)))
    return "\n".join(rows)


def every_cell(doc):
    for r in doc["files"]:
        for f in FEATURES:
            c = r.get(f)
            if c is None:
                continue
            for lab, cell in (c.items() if f in PER_TARGET else [(None, c)]):
                yield r["meta"]["file"], f, lab, cell


def refusals(doc, exp, expected):
    groups = collections.OrderedDict()
    for file, f, lab, c in every_cell(doc):
        if c.get("status") not in ("refused", "na"):
            continue
        g = groups.setdefault((f, c.get("status"), c.get("group") or c.get("why")),
                              {"n": 0, "files": set(), "example": c.get("why"), "listed": None})
        g["n"] += 1
        g["files"].add(file)
        g["listed"] = g["listed"] or expected(exp, file, "%s@%s" % (f, lab) if lab else f)
    rows = ["| feature | count | files | reason (node names and numbers left out) | example | expected.txt says |",
            "|---|---:|---:|---|---|---|"]
    for (f, s, g), v in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1]["n"])):
        rows.append("| %s%s | %d | %d | %s | %s | %s |" % (
            f, " (n/a)" if s == "na" else "", v["n"], len(v["files"]), esc(g), esc(v["example"]),
            esc(v["listed"] or "")))
    return "\n".join(rows)


def esc(s):
    return str(s or "").replace("|", "\\|").replace("\n", " ")


def failures(doc):
    """Every wrong and failed cell by name; the cells not judged grouped
    by feature and why (node names, paths and numbers left out)."""
    out, unjudged = [], collections.OrderedDict()
    for file, f, lab, c in every_cell(doc):
        if c.get("status") in ("failed", "wrong"):
            out.append("- %s `%s` %s%s: %s" % (c["status"], file, f, "@" + lab if lab else "",
                                                 esc(c.get("why"))))
        elif c.get("status") == "nojudge":
            why = re.sub(r"'[^']*'|/\S+|\d+", "…", c.get("why") or "")[:140]
            g = unjudged.setdefault((f, why), [])
            g.append(file + ("@" + lab if lab else ""))
    out.append("")
    out.append("Not judged, by feature and why (the first files named):\n")
    for (f, why), files in sorted(unjudged.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        out.append("- %s, %d: %s (%s%s)" % (f, len(files), esc(why), ", ".join(files[:4]),
                                            ", ..." if len(files) > 4 else ""))
    return "\n".join(out)


def times(doc):
    per = collections.Counter()
    for r in doc["files"]:
        for f, t in (r.get("took") or {}).items():
            per[f] += t
    slow = sorted(doc["files"], key=lambda r: -r.get("seconds", 0))[:10]
    lines = ["Wall time %.0f s with %d workers; per feature, summed over files: %s." % (
        doc["took"], doc["jobs"], ", ".join("%s %.0f s" % (f, per[f]) for f in FEATURES if f in per))]
    cpu = sum(r.get("cpu") or 0 for r in doc["files"])
    if cpu:
        lines.append("CPU time (our tool, ORT's judge, Apple's loader, the Python package) "
                     "%.0f s: about %.1f minutes on 2 idle cores." % (cpu, cpu / 120))
    lines.append("The slowest files: " + ", ".join("%s %.0f s" % (r["meta"]["file"], r.get("seconds", 0))
                                                     for r in slow) + ".")
    return "\n".join(lines)


def ct_section(doc):
    """How many corpus models coremltools' PyTorch front end converts
    (gen.py tries each, ctpkg.py), why it fails the others, and what our
    import makes of the packages it wrote."""
    ct = doc.get("coremltools")
    if not ct:
        return "not recorded in this run"
    made, failed = ct["made"], ct["failed"]
    model = lambda f: f.rsplit("_ct_", 1)[0]  # noqa: E731
    models_made = {model(f) for f in made}
    tried = models_made | {model(r["file"]) for r in failed}
    skipped = [r for r in failed if r["stage"] == "skipped"]
    lines = ["coremltools' PyTorch front end (traced with `torch.jit.trace`, `ct.convert` to an ML "
             "Program at iOS15, a later target where that fails) converted **%d of the %d corpus "
             "models** it was given: %d packages in float32 and float16 compute. %d models are "
             "not packaged for their size (%s)." % (
                 len(models_made), len(tried) - len({model(r["file"]) for r in skipped}),
                 len(made), len({model(r["file"]) for r in skipped}),
                 ", ".join(sorted({model(r["file"]) for r in skipped})) or "none")]
    why = collections.Counter("%s: %s" % (r["stage"], re.sub(r"'[^']*'", "'…'", r["error"])[:110])
                              for r in failed if r["stage"] != "skipped")
    if why:
        lines += ["", "What coremltools fails on (packages, by stage and message):", ""]
        lines += ["- %d: %s" % (n, esc(w)) for w, n in why.most_common()]
    imp = collections.Counter((r.get("import") or {}).get("status") for r in doc["files"]
                              if r.get("import"))
    total = sum(imp.values())
    if total:
        lines += ["", "Our import of those packages (the `import` column): **%d of %d ok**, %s." % (
            imp.get("ok", 0), total, ", ".join("%s %d" % (s, imp[s]) for s in STATUSES
                                                if s != "ok" and imp.get(s)) or "nothing else")]
    return "\n".join(lines)


def originals(doc):
    """The files whose original ORT does not run as PyTorch did: their
    results are held to ORT's own outputs, or not judged."""
    out = []
    for r in doc["files"]:
        o = r.get("original") or {}
        if o.get("status") not in (None, "ok"):
            out.append("- `%s`: %s%s" % (r["meta"]["file"], o.get("status"),
                                         ": " + esc(o.get("why")) if o.get("why") else ""))
    return "\n".join(out) or "none"


def partial(doc):
    """A line saying how much of the corpus a run stopped by --deadline
    judged (empty for a whole run)."""
    if len(doc["files"]) >= doc.get("planned", 0):
        return ""
    return ("**A partial run**: stopped by `--deadline` after %.0f minutes, with %d of the %d model "
            "files judged (one file of every model first, the smallest first).\n" % (
                doc["took"] / 60, len(doc["files"]), doc["planned"]))


def markdown(doc, exp):
    from check import expected, HEAVY_BYTES, HEAVY_FEATURES, HEAVY_TARGETS
    files = doc["files"]
    names = {r["meta"]["name"] for r in files}
    heavy = [r["meta"]["file"] for r in files
             if r.get("convert") and len(r["convert"]) < 20]
    parts = [HEAD, "## Totals\n",
             "%s: %d model files of %d distinct models (%s), judged on %s%s." % (
                 time.strftime("%Y-%m-%d"), len(files), len(names),
                 ", ".join("%s %d" % kv for kv in sorted(collections.Counter(
                     r["meta"]["kind"] for r in files).items())),
                 "the sample's targets" if doc["sample"] else "every target 7..26",
                 "" if doc["apple_loader"] else "; Apple's loader was not available (coreml not judged)"),
             "",
             partial(doc),
             totals(doc), "",
             "Files whose model is larger than %d MB are judged on targets %s only; every feature "
             "runs on the highest opset file of such a model, and %s only on its other files "
             "(a row with '-' there): %s." % (
                 HEAVY_BYTES >> 20, ", ".join(map(str, HEAVY_TARGETS)),
                 " and ".join(HEAVY_FEATURES), ", ".join(heavy) or "none"),
             "", times(doc), "",
             "\n".join("Note: " + n for n in doc.get("notes") or []), "",
             "## Core ML packages coremltools makes, and their import\n", ct_section(doc), "",
             "## Wrong, failed and not judged\n", failures(doc), "",
             "## Refusals by reason\n", refusals(doc, exp, expected), "",
             "## Originals ORT does not run as PyTorch did\n",
             "Their results are held to ORT's own outputs of the original (differs), or not "
             "judged (ORT cannot run it).\n", originals(doc), "",
             "## Per model file\n",
             "convert, back: how many of the targets are ok, then the others by status (targets in brackets); "
             "s: seconds for the whole file.\n",
             model_table(doc), ""]
    return "\n".join(parts)
