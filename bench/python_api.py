"""python_api.py - the Python package against what Python users call today,
on the shared models; prints the Markdown table of bench/README.md (a
measurement, never a test).

    /usr/bin/python3 bench/python_api.py [--runs N] [--no-ort] [CASE_DIR...]

(from the project root; `make bench-python`). A CASE_DIR holds model.onnx
and test_data_set_0/input_K.pb, as ../shared/models/* (the default) do.
Per model, the median of N runs (default 11, after one untimed run) of:

- onnxconvert.convert(model, T) against Debian's
  onnx.version_converter.convert_version(model, T), both on the same
  onnx.ModelProto in memory (loading it is not timed). T is the model's
  opset + 1 when both convert to it, else opset - 1 (onnx 1.12 knows no
  opset above 17 and few downgrades); the table says which. A converter
  that refuses both gets its message's start in its cell.
- onnxconvert's evaluator on test_data_set_0's inputs against ONNX
  Runtime's InferenceSession.run (bench/ort_time.js, ../shared/tools/ort),
  both on one thread and with the model loaded before the clock starts:
  Session(model).run(None, feeds), or onnxconvert.run(model, feeds) (load
  included) when the package has no Session. "n/a" when the package
  cannot run models yet.

The package is the checkout's (python/), its library build/'s unless
$ONNXCONVERT_LIBRARY names another.
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_DIR = os.path.join(ROOT, "..", "shared", "tools", "ort")

# one thread for our evaluator too (OpenBLAS reads it when the library loads)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(ROOT, "python"))

import onnx  # noqa: E402  (after the environment above)
from onnx import numpy_helper, version_converter  # noqa: E402

import onnxconvert  # noqa: E402


def median_ms(fn, runs):
    """fn() once untimed, then the median of `runs` timed calls, in ms."""
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def short(e):
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:48].replace("|", "/")


def opset_of(model):
    return {o.domain or "ai.onnx": o.version for o in model.opset_import}.get("ai.onnx")


def pick_target(model):
    """The first of opset + 1, opset - 1 that both converters take (an
    untimed try), else opset + 1."""
    base = opset_of(model)
    for t in (base + 1, base - 1):
        try:
            onnxconvert.convert(model, t)
            version_converter.convert_version(model, t)
            return t
        except Exception:  # noqa: BLE001 (a refusal: try the other)
            pass
    return base + 1


def time_convert(model, t, runs):
    """The two converters' cells for model -> t."""
    cells = []
    for fn in (lambda: onnxconvert.convert(model, t),
               lambda: version_converter.convert_version(model, t)):
        try:
            cells.append(median_ms(fn, runs))
        except onnxconvert.ConversionError as e:
            cells.append(f"refused: {short(e)}")
        except Exception as e:  # noqa: BLE001 (onnx's refusals are assertions)
            cells.append(f"failed: {short(e)}")
    return cells


def feeds_of(case, model):
    """{input name: array} of test_data_set_0, matched by position to the
    graph inputs that are not initializers (as ONNX Runtime numbers them)."""
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    feeds = {}
    for k, name in enumerate(names):
        t = onnx.TensorProto()
        with open(os.path.join(case, "test_data_set_0", f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(t)
    return feeds


def time_run(case, model, runs):
    """Our evaluator's cell: Session.run with the model loaded, or run()."""
    try:
        feeds = feeds_of(case, model)
        session = getattr(onnxconvert, "Session", None)
        try:
            s = session(model) if session else None
        except NotImplementedError:
            return "n/a"
        if s is not None:
            return median_ms(lambda: s.run(None, feeds), runs)
        return median_ms(lambda: onnxconvert.run(model, feeds), runs)
    except NotImplementedError:
        return "n/a"
    except Exception as e:  # noqa: BLE001
        return f"failed: {short(e)}"


def time_ort(case, runs):
    """ONNX Runtime's median ms from bench/ort_time.js, or "-"."""
    try:
        out = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_time.js"), ORT_DIR,
                              case, str(runs), "all"], capture_output=True, text=True,
                             timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return "-"
    if out.returncode != 0 or not out.stdout.strip():
        return "-"
    return float(out.stdout.split()[-1])


def cell(v):
    return f"{v:.2f}" if isinstance(v, float) else v


def ratio(a, b):
    if isinstance(a, float) and isinstance(b, float) and b > 0:
        return f"{a / b:.1f}"
    return "-"


def row(case, runs, ort):
    model = onnx.load(os.path.join(case, "model.onnx"))
    t = pick_target(model)
    conv = time_convert(model, t, runs)
    ours = time_run(case, model, runs)
    theirs = time_ort(case, runs) if ort else "-"
    name = os.path.basename(os.path.normpath(case))
    return (f"| {name} | {opset_of(model)} -> {t} | {cell(conv[0])} | {cell(conv[1])} | "
            f"{ratio(conv[1], conv[0])} | {cell(ours)} | {cell(theirs)} | "
            f"{ratio(ours, theirs)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime's column out")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    cases = a.cases or sorted(glob.glob(os.path.join(ROOT, "..", "shared", "models", "*", "")))
    if not cases:
        sys.exit("python_api: no case folders (../shared/models is not there)")
    print(f"onnxconvert {onnxconvert.library_version()} (library), onnx {onnx.__version__}, "
          f"median of {a.runs} runs, one thread")
    print()
    print("| model | opset -> T | onnxconvert.convert ms | onnx.version_converter ms | "
          "onnx / ours | onnxconvert Session.run ms | ONNX Runtime session.run ms | "
          "ours / ORT |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for case in cases:
        print(row(case, a.runs, not a.no_ort), flush=True)


if __name__ == "__main__":
    main()
