#!/usr/bin/python3
"""python_run: onnxconvert.run() and Session against the command line, the
test cases' expected outputs and ONNX Runtime.

  PYTHONPATH=python ONNXCONVERT_LIBRARY=BUILD/libonnxconvert.so.0 \
      /usr/bin/python3 tests/python_run.py BUILD NODE_DIR [MODELS_DIR]

1. Every node test folder (NODE_DIR/*: model.onnx, test_data_set_*/input_K.pb
   and output_K.pb) is run through one Session per case in this one process,
   the inputs and expected outputs read with onnx's own classes (never with
   the package's codec), and compared as `onnx-convert test` compares (rtol
   1e-3, atol 1e-7; NaN equals NaN; exact for the other types). The cases
   run() passes must be exactly those `BUILD/onnx-convert test CASE` passes
   (run meanwhile, two at a time): both counts are printed, each difference
   is named and fails.
2. run() on every MODELS_DIR/*/ model equals its expected outputs.
3. ONNX Runtime agrees: run()'s outputs written as a case folder (the
   model's inputs and run()'s outputs, written with onnx.numpy_helper) and
   judged by ../shared/tools/ort/ort-check.js; skipped ("SKIP ...") without
   node or the oracle.
Prints "python_run: N passed, N failed[, N skipped]".
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from clitest import ORT_DIR, check, have_ort, report, skip

RTOL, ATOL = 1e-3, 1e-7   # onnx-convert test's defaults (src/cli/onnx-convert.c)
# the shared models are PyTorch's outputs, judged at atol 1e-4 as
# tests/test_convert_models.c and ONNX Runtime's oracle judge them
MODEL_ATOL = 1e-4




try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import onnxconvert
except ImportError as e:
    print(f"python_run: skipped (no onnx, numpy or onnxconvert: {e})")
    sys.exit(0)

# ---- reading values with onnx -------------------------------------------------

# Element types onnx 1.12's numpy_helper cannot give as numpy (it has no such
# dtype, or turns bfloat16 into float32): read here from the TensorProto's
# fields. code -> (bits per element, signed) for the packed integer types.
PACKED = {21: (4, False), 22: (4, True), 25: (2, False), 26: (2, True)}
RAW_BITS = {16: np.uint16, 17: np.uint8, 18: np.uint8, 19: np.uint8, 20: np.uint8,
            23: np.uint8, 24: np.uint8}


class Raw:
    """Bit patterns of a tensor numpy has no type for."""

    def __init__(self, code, bits):
        self.code, self.bits = code, bits


def tensor_of(tp):
    code = tp.data_type
    dims = list(tp.dims)
    n = int(np.prod(dims)) if dims else 1
    if code in RAW_BITS or code in PACKED:
        if tp.HasField("raw_data"):
            data = np.frombuffer(tp.raw_data, np.uint8)
        else:
            data = np.array(tp.int32_data, np.int64)
        if code in PACKED:
            bits, signed = PACKED[code]
            per = 8 // bits
            data = data.astype(np.uint8)
            vals = [(int(b) >> (k * bits)) & ((1 << bits) - 1) for b in data for k in range(per)]
            vals = np.array(vals[:n], np.int64)
            if signed:
                vals = np.where(vals >= 1 << (bits - 1), vals - (1 << bits), vals)
            return vals.astype(np.int8 if signed else np.uint8).reshape(dims)
        if code == 23:   # float4e2m1: two per byte
            vals = [(int(b) >> (4 * k)) & 15 for b in data.astype(np.uint8) for k in (0, 1)]
            return Raw(code, np.array(vals[:n], np.uint8).reshape(dims))
        dt = RAW_BITS[code]
        if tp.HasField("raw_data"):
            bits = np.frombuffer(tp.raw_data, np.dtype(dt).newbyteorder("<")).astype(dt)
        else:
            bits = data.astype(dt)
        return Raw(code, bits.reshape(dims))
    return numpy_helper.to_array(tp)


def value_of(msg, type_proto):
    """The Python value of an unpacked message of declared type type_proto."""
    kind = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    if kind in (None, "tensor_type"):
        return tensor_of(msg)
    if kind == "sequence_type":
        et = type_proto.sequence_type.elem_type
        items = list(msg.tensor_values) or list(msg.sequence_values) or \
            list(msg.map_values) or list(msg.optional_values)
        return [value_of(x, et) for x in items]
    if kind == "map_type":
        keys = [k.decode() for k in msg.string_keys] if msg.key_type == onnx.TensorProto.STRING \
            else list(msg.keys)
        vals = value_of(msg.values, onnx.TypeProto(sequence_type=onnx.TypeProto.Sequence(
            elem_type=type_proto.map_type.value_type)))
        return dict(zip(keys, vals))
    if kind == "optional_type":
        et = type_proto.optional_type.elem_type
        for f in ("tensor_value", "sequence_value", "map_value", "optional_value"):
            if msg.HasField(f):
                return value_of(getattr(msg, f), et)
        return None
    raise ValueError(f"type {kind} is not read here")


def read_value(path, type_proto):
    kind = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    if kind in (None, "tensor_type", "sparse_tensor_type"):
        return tensor_of(onnx.load_tensor(path))
    cls = {"sequence_type": onnx.SequenceProto, "map_type": onnx.MapProto,
           "optional_type": onnx.OptionalProto}[kind]
    msg = cls()
    with open(path, "rb") as f:
        msg.ParseFromString(f.read())
    return value_of(msg, type_proto)


def feed_of(v):
    """A value read with onnx as run() takes it (raw types as bit arrays)."""
    if isinstance(v, Raw):
        return v.bits
    if isinstance(v, list):
        return [feed_of(x) for x in v]
    if isinstance(v, dict):
        return {k: feed_of(x) for k, x in v.items()}
    return v


# ---- comparing as `onnx-convert test` does (src/eval/io.c ev_value_equal) ----

def as_float(a):
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    return a


def bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def floats_close(g, w, atol=None):
    atol = ATOL if atol is None else atol
    g, w = np.asarray(g, np.float64).reshape(-1), np.asarray(w, np.float64).reshape(-1)
    nan = np.isnan(g) | np.isnan(w)
    inf = np.isinf(g) | np.isinf(w)
    with np.errstate(all="ignore"):
        ok = np.where(nan, np.isnan(g) & np.isnan(w),
                      np.where(inf, g == w, np.abs(g - w) <= atol + RTOL * np.abs(w)))
    return bool(np.all(ok))


def tensor_equal(got, want):
    atol = CURRENT_ATOL[0]
    if isinstance(want, Raw):
        if not isinstance(got, onnxconvert._values.RawTensor) or got.code != want.code or \
                got.bits.shape != want.bits.shape:
            return False, "raw type or shape differs"
        if np.array_equal(got.bits, want.bits):
            return True, ""
        if want.code == 16:
            return floats_close(bf16(got.bits), bf16(want.bits), atol), "bfloat16 values differ"
        return False, "bit patterns differ"
    if isinstance(got, onnxconvert._values.RawTensor):
        return False, "got a raw tensor"
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype == object or got.dtype == object:
        enc = lambda a: [x.encode() if isinstance(x, str) else bytes(x) for x in a.reshape(-1)]
        return got.shape == want.shape and enc(got) == enc(want), "strings differ"
    if got.dtype != want.dtype:
        return False, f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return False, f"shape {got.shape}, expected {want.shape}"
    if want.dtype.kind == "c":
        return floats_close(got.real, want.real, atol) and \
            floats_close(got.imag, want.imag, atol), \
            "complex values differ"
    if want.dtype.kind == "f":
        return floats_close(got, want, atol), "values differ"
    return bool(np.array_equal(got, want)), "values differ"


CURRENT_ATOL = [ATOL]


def value_equal(got, want):
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return False, "sequence length differs"
        for i, (g, w) in enumerate(zip(got, want)):
            ok, why = value_equal(g, w)
            if not ok:
                return False, f"item {i}: {why}"
        return True, ""
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(got) != list(want):
            return False, "map keys differ"
        return value_equal([np.asarray(got[k]) for k in got], [np.asarray(want[k]) for k in want])
    if want is None or got is None:
        return got is None and want is None, "optional presence differs"
    return tensor_equal(got, want)


# ---- node test cases ------------------------------------------------------------

def case_sets(case):
    return sorted(glob.glob(os.path.join(case, "test_data_set_*")))


def run_case(case, atol=ATOL):
    """(True, "") when run() reproduces every set of the case, else (False, why)."""
    CURRENT_ATOL[0] = atol
    model_path = os.path.join(case, "model.onnx")
    try:
        m = onnx.load(model_path)
        inits = {t.name for t in m.graph.initializer}
        all_in = list(m.graph.input)
        feeds = [v for v in all_in if v.name not in inits]
        outs = list(m.graph.output)
        sets = case_sets(case)
        if not sets:
            return False, "no test_data_set_*"
        with onnxconvert.Session(model_path) as s:
            for d in sets:
                n = len(glob.glob(os.path.join(d, "input_*.pb")))
                vis = feeds if n == len(feeds) else all_in if n == len(all_in) else None
                if vis is None:
                    return False, f"{n} input files for {len(feeds)} inputs"
                values = {}
                for k, vi in enumerate(vis):
                    if vi.name in inits:
                        continue   # the library feeds only inputs without initializers
                    values[vi.name] = feed_of(read_value(os.path.join(d, f"input_{k}.pb"),
                                                         vi.type))
                got = s.run(None, values)
                for k, vi in enumerate(outs):
                    path = os.path.join(d, f"output_{k}.pb")
                    if not os.path.exists(path):
                        return False, f"{path} missing"
                    ok, why = value_equal(got[k], read_value(path, vi.type))
                    if not ok:
                        return False, f"{os.path.basename(d)} output {k} '{vi.name}': {why}"
        return True, ""
    except onnxconvert.OnnxConvertError as e:
        return False, f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - a crash of the comparison is a failure too
        return False, f"{type(e).__name__}: {e}"


def cli_passes(cli, case):
    r = subprocess.run([cli, "test", case], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return r.returncode == 0


SYSTEM_DATA = "/usr/share/libonnx-testdata/data"


def system_data_skips():
    """The cases of Debian's ONNX 1.12 data whose files later releases
    corrected, with the reason: tests/corpus.h's list (the one list the C
    tests skip by), read here rather than written again. Only the entries
    for tests that run the case's data (CORPUS_SKIP_DATA, CORPUS_SKIP_ALL)."""
    src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.h")).read()
    block = src[src.index("skips[] = {"):]
    block = block[:block.index("};")]
    out = {}
    for m in re.finditer(r'\{"/node/([^"]+)",\s*(NULL|"[^"]*")\s*,\s*(CORPUS_SKIP_\w+)\s*\}',
                         block):
        if m.group(3) in ("CORPUS_SKIP_DATA", "CORPUS_SKIP_ALL"):
            out[m.group(1)] = m.group(2).strip('"')
    return out


def node_tests(cli, node_dir):
    cases = sorted(d for d in glob.glob(os.path.join(node_dir, "*"))
                   if os.path.isfile(os.path.join(d, "model.onnx")))
    if os.path.realpath(node_dir).startswith(SYSTEM_DATA + "/"):
        skips = system_data_skips()
        check(len(skips) >= 6, "tests/corpus.h's list of ONNX 1.12 data defects was read")
        for c in cases:
            if os.path.basename(c) in skips:
                skip(f"{os.path.basename(c)}: {skips[os.path.basename(c)]}")
        cases = [c for c in cases if os.path.basename(c) not in skips]
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = {c: pool.submit(cli_passes, cli, c) for c in cases}
        ours = {c: run_case(c) for c in cases}
        t_run = time.time() - t0
        theirs = {c: f.result() for c, f in futures.items()}
    n_run = sum(ok for ok, _ in ours.values())
    n_cli = sum(theirs.values())
    print(f"node tests passing: {n_cli} by `onnx-convert test`, {n_run} by run() "
          f"(of {len(cases)}; run() {t_run:.0f} s, both {time.time() - t0:.0f} s)")
    for c in cases:
        if ours[c][0] != theirs[c]:
            print(f"  differs: {os.path.basename(c)}: CLI {'passes' if theirs[c] else 'fails'}"
                  f", run() {'passes' if ours[c][0] else 'fails: ' + ours[c][1]}")
    check(len(cases) > 0, "no node test cases found")
    check(n_run == n_cli and all(ours[c][0] == theirs[c] for c in cases),
          "run() passes the same node tests as the CLI")


# ---- the shared models, and ONNX Runtime --------------------------------------

def model_runs(models_dir, tmp):
    """run() on each model against its expected outputs; writes each run's
    outputs as a case folder under tmp. The (case, model) pairs written."""
    written = []
    for d in sorted(glob.glob(os.path.join(models_dir, "*", ""))):
        name = os.path.basename(os.path.dirname(d))
        model_path = os.path.join(d, "model.onnx")
        if not os.path.isfile(model_path):
            continue
        t0 = time.time()
        ok, why = run_case(d.rstrip("/"), MODEL_ATOL)
        check(ok, f"model {name}: run() differs from its expected outputs: {why}")
        m = onnx.load(model_path, load_external_data=False)
        inits = {t.name for t in m.graph.initializer}
        feeds = [v for v in m.graph.input if v.name not in inits]
        src = os.path.join(d, "test_data_set_0")
        values = {vi.name: feed_of(read_value(os.path.join(src, f"input_{k}.pb"), vi.type))
                  for k, vi in enumerate(feeds)}
        try:
            out = onnxconvert.run(model_path, values)
        except onnxconvert.OnnxConvertError as e:
            check(False, f"model {name}: {e}")
            continue
        case = os.path.join(tmp, name)
        os.makedirs(os.path.join(case, "test_data_set_0"))
        for k in range(len(feeds)):
            shutil.copy(os.path.join(src, f"input_{k}.pb"),
                        os.path.join(case, "test_data_set_0", f"input_{k}.pb"))
        for k, vi in enumerate(m.graph.output):
            tp = numpy_helper.from_array(np.asarray(out[vi.name]), vi.name)
            with open(os.path.join(case, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
                f.write(tp.SerializeToString())
        written.append((case, os.path.abspath(model_path)))
        print(f"model {name}: run() {'matches' if ok else 'differs'} ({time.time() - t0:.1f} s)")
    return written


def ort_agrees(written, tmp):
    ort = ORT_DIR
    if not have_ort():
        skip("python_run ORT: no node, no ../shared/tools/ort (ONNX Runtime), or its npm packages")
        return
    batch = os.path.join(tmp, "batch.txt")
    with open(batch, "w") as f:
        for case, model in written:
            f.write(f"{case} {model}\n")
    r = subprocess.run(["node", os.path.join(ort, "ort-check.js"), "--batch", batch],
                       capture_output=True, text=True)
    # one line per case, naming its model: "PASS MODEL max_abs_err=..."
    lines = {ln.split()[1]: ln for ln in r.stdout.splitlines()
             if len(ln.split()) > 1 and ln.split()[0] in ("PASS", "FAIL", "ERROR")}
    agree = 0
    for case, model in written:
        ln = lines.get(model, "")
        agree += ln.startswith("PASS")
        check(ln.startswith("PASS"), f"ONNX Runtime on {os.path.basename(case)}: "
                                     f"{ln or 'no line: ' + r.stderr[-300:]}")
    print(f"ONNX Runtime agrees with run() on {agree} of {len(written)} shared models")


# ---- the API: refusals, seed, output names, threads -------------------------

def one_node_model(op, in_type, in_shape, out_type, out_shape, opset=17, **attrs):
    from onnx import helper
    x = helper.make_tensor_value_info("x", in_type, in_shape)
    y = helper.make_tensor_value_info("y", out_type, out_shape)
    z = helper.make_tensor_value_info("z", out_type, out_shape)
    nodes = [helper.make_node(op, ["x"], ["y"], name="n", **attrs),
             helper.make_node("Identity", ["y"], ["z"], name="copy")]
    g = helper.make_graph(nodes, "g", [x], [y, z])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def raises(cls, f, what, **attrs):
    try:
        f()
    except cls as e:
        bad = {k: getattr(e, k) for k, v in attrs.items() if getattr(e, k) != v}
        check(not bad, f"{what}: {type(e).__name__} with {bad}, expected {attrs}: {e}")
        return
    except Exception as e:  # noqa: BLE001 - the wrong exception is the failure
        check(False, f"{what}: {type(e).__name__}: {e}")
        return
    check(False, f"{what}: nothing raised")


def api_checks():
    import threading
    T = onnx.TensorProto
    relu = one_node_model("Relu", T.FLOAT, [2], T.FLOAT, [2])
    x = np.array([-1, 2], np.float32)
    s = onnxconvert.Session(relu)
    check([a.name for a in s.get_inputs()] == ["x"] and s.get_inputs()[0].type == "tensor(float)"
          and s.get_inputs()[0].shape == [2], "get_inputs")
    check([a.name for a in s.get_outputs()] == ["y", "z"], "get_outputs")
    got = s.run(["z"], {"x": x})
    check(len(got) == 1 and np.array_equal(got[0], [0, 2]), "run(['z'], ...) gives z only")
    got = onnxconvert.run(relu.SerializeToString(), {"x": [-3.0, 4.0]})
    check(list(got) == ["y", "z"] and np.array_equal(got["y"], [0, 4]) and
          got["y"].dtype == np.float32, "run() on bytes, a list for a float input")
    raises(onnxconvert.UsageError, lambda: s.run(None, {"x": x.astype(np.float64)}),
           "a float64 array for a float input")
    raises(onnxconvert.UsageError, lambda: s.run(None, {"w": x}), "an unknown input")
    raises(onnxconvert.UsageError, lambda: s.run(None, {}), "a missing input")
    raises(onnxconvert.UsageError, lambda: s.run(["nope"], {"x": x}), "an unknown output")
    raises(onnxconvert.UsageError, lambda: s.run(None, {"x": np.zeros(3, np.float32)}),
           "a wrong dim (the library's check)")

    # threads: one Session shared by 4 threads gives each the single-thread result
    big = one_node_model("Softmax", T.FLOAT, [64, 256], T.FLOAT, [64, 256])
    s = onnxconvert.Session(big)
    xs = [np.random.default_rng(i).standard_normal((64, 256)).astype(np.float32)
          for i in range(4)]
    want = [s.run(None, {"x": v})[0] for v in xs]
    got = [None] * 4

    def work(i):
        for _ in range(5):
            got[i] = s.run(None, {"x": xs[i]})[0]
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(all(g is not None and np.array_equal(g, w) for g, w in zip(got, want)),
          "4 threads on one Session give the single-thread results")

    # a run that fails names the node and op; the limits apply
    cos = one_node_model("ConstantOfShape", T.INT64, [1], T.FLOAT, [None])
    raises(onnxconvert.ConversionError,
           lambda: onnxconvert.run(cos, {"x": np.array([1 << 28], np.int64)},
                                   max_memory=1 << 20),
           "a run over its memory budget", stage="run", node="n", op="ConstantOfShape")
    check(onnxconvert.run(cos, {"x": np.array([3], np.int64)})["y"].shape == (3,),
          "the same model within the default budget")
    raises(onnxconvert.UsageError, lambda: onnxconvert.run(cos, {"x": [1]}, max_steps=-1),
           "a negative max_steps")

    # the checker first: an unknown op
    bad = one_node_model("NoSuchOp", T.FLOAT, [2], T.FLOAT, [2])
    raises(onnxconvert.InvalidModelError, lambda: onnxconvert.run(bad, {"x": x}),
           "a model the checker refuses", stage="check")

    # the seed: the same seed, the same draws; another, others
    rnd = one_node_model("RandomUniformLike", T.FLOAT, [16], T.FLOAT, [16])
    z = np.zeros(16, np.float32)
    a = onnxconvert.run(rnd, {"x": z}, seed=5)["y"]
    b = onnxconvert.run(rnd, {"x": z}, seed=5)["y"]
    c = onnxconvert.run(rnd, {"x": z}, seed=6)["y"]
    check(np.array_equal(a, b) and not np.array_equal(a, c), "seed")

    # strings, sequences, optionals through run()
    from onnx import helper
    seq_t = helper.make_tensor_sequence_value_info("q", T.INT64, None)
    g = helper.make_graph([helper.make_node("SequenceLength", ["q"], ["n"]),
                           helper.make_node("SequenceAt", ["q", "i"], ["e"])], "g",
                          [seq_t, helper.make_tensor_value_info("i", T.INT64, [])],
                          [helper.make_tensor_value_info("n", T.INT64, []),
                           helper.make_tensor_value_info("e", T.INT64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    got = onnxconvert.run(m, {"q": [np.array([1, 2], np.int64), [7, 8, 9]], "i": -1})
    check(int(got["n"]) == 2 and np.array_equal(got["e"], [7, 8, 9]),
          "a sequence input (arrays and lists), a Python int scalar")
    # maps: a dict into CastMap, a list of dicts out of ZipMap (ai.onnx.ml)
    mt = onnx.TypeProto()   # (onnx 1.12 has no make_map_type_proto)
    mt.map_type.key_type = T.INT64
    mt.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(T.FLOAT, None))
    g = helper.make_graph([helper.make_node("CastMap", ["m"], ["y"], domain="ai.onnx.ml")],
                          "g", [helper.make_value_info("m", mt)],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("ai.onnx.ml", 1)])
    got = onnxconvert.run(m, {"m": {3: 0.5, 1: 1.5}})["y"]
    check(np.array_equal(got, [[1.5, 0.5]]), f"CastMap of a dict: {got}")
    zm = one_node_model("Identity", T.FLOAT, [1, 2], T.FLOAT, [1, 2])
    zm.graph.node[0].op_type = "ZipMap"
    zm.graph.node[0].domain = "ai.onnx.ml"
    zm.graph.node[0].attribute.append(helper.make_attribute("classlabels_int64s", [10, 20]))
    del zm.graph.node[1]
    del zm.graph.output[1]
    zm.graph.output[0].CopyFrom(helper.make_value_info("y", helper.make_sequence_type_proto(mt)))
    zm.opset_import.append(helper.make_opsetid("ai.onnx.ml", 1))
    got = onnxconvert.run(zm, {"x": np.array([[7, 8]], np.float32)})["y"]
    check(got == [{10: 7.0, 20: 8.0}], f"ZipMap gives a list of dicts: {got}")
    strs = one_node_model("Identity", T.STRING, [2], T.STRING, [2])
    got = onnxconvert.run(strs, {"x": np.array(["a", "é"], dtype=object)})
    check(list(got["z"]) == ["a", "é"], "strings")


def main():
    if len(sys.argv) < 3:
        print("usage: python_run.py BUILD NODE_DIR [MODELS_DIR]", file=sys.stderr)
        return 2
    build, node_dir = sys.argv[1], sys.argv[2]
    if not node_dir or not os.path.isdir(node_dir):
        print("python_run: skipped (no ONNX backend node tests)")
        return 0
    models_dir = sys.argv[3] if len(sys.argv) > 3 else None
    t0 = time.time()
    api_checks()
    node_tests(os.path.join(build, "onnx-convert"), node_dir)
    if models_dir and os.path.isdir(models_dir):
        tmp = tempfile.mkdtemp(prefix="python_run.")
        try:
            t1 = time.time()
            written = model_runs(models_dir, tmp)
            print(f"shared models: {time.time() - t1:.0f} s")
            ort_agrees(written, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"total {time.time() - t0:.0f} s")
    return report("python_run")


sys.exit(main())
