#!/usr/bin/env python3
"""The Python package under repetition and threads (issue 22, Done-when 3).

- 10,000 calls of convert(bytes of a small model, T), T taking turns
  among a downgrade, an upgrade and a target the converter refuses (so the
  error path is repeated too), every other call with report=True: the
  resident memory read from /proc/self/statm after a warm-up of 500 calls
  and after the last differs by at most LEAK_BOUND;
- 200 calls of run() on the same model, with the same bound, once run()
  exists (skipped, with the reason, while it is a stub);
- 4 threads converting 4 different models at once, several rounds, give
  the bytes one thread gives for each (and the same refusals).
The models are built here (onnx.helper); the threads also take the models
of ../shared/models when present (bigger: calls that overlap in the
library, the GIL being released).

Usage: python_stress.py BUILD_DIR   (from the project root, with
PYTHONPATH=python and ONNXCONVERT_LIBRARY=BUILD_DIR/libonnxconvert.so.0).
Prints "python_stress: N passed, N failed[, N skipped]".
"""
import concurrent.futures
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, report, skip  # noqa: E402

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:   # Debian's python3-onnx and python3-numpy are what it needs
    print("python_stress: skipped (%s: /usr/bin/python3 with python3-onnx and python3-numpy)" % e)
    sys.exit(0)

import onnxconvert as oc  # noqa: E402

CALLS, WARMUP = 10000, 500
RUN_CALLS, RUN_WARMUP = 200, 20
# Resident memory may move a little without a leak (Python's and malloc's
# arenas settle after the warm-up): measured +0.00 MiB over the 9,500
# calls. A leak is per call, and every call allocates in the library a
# copy of the 66 KiB model, the result's bytes (66 KiB) and the JSON
# report (0.7 to 1.5 KiB, asked for even with report=False): leaking a
# model costs > 600 MiB, leaking only the report text 7 MiB (measured, by
# not freeing it). 1.5 MiB is far over the noise and under the smallest
# of those leaks (a leak under ~170 bytes a call would pass unseen).
LEAK_BOUND = 1536 * 1024
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss():
    """Resident bytes of this process (/proc/self/statm's second field)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def small_model(seed=0, width=16):
    """y = Clip(ReduceSum(x, axes=[1]), -1, 1) + w, and m = Erf(ReduceMax(big))
    over a 64 KiB initializer (so that a leaked model copy is big). At
    opset 13 ReduceSum takes its axes as an input: converting down to 11
    moves them into an attribute; Erf (opset 9) has no exact form in older
    ops, so opset 7 is refused."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal(width).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(16384).astype(np.float32), "big"),
             numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
             numpy_helper.from_array(np.array(-1.0, dtype=np.float32), "lo"),
             numpy_helper.from_array(np.array(1.0, dtype=np.float32), "hi")]
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0, name="sum"),
             helper.make_node("Clip", ["s", "lo", "hi"], ["c"], name="clip"),
             helper.make_node("Add", ["c", "w"], ["y"], name="add"),
             helper.make_node("ReduceMax", ["big"], ["r"], keepdims=0, name="max"),
             helper.make_node("Erf", ["r"], ["m"], name="erf")]
    g = helper.make_graph(nodes, "small%d" % seed,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [width, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [width]),
                           helper.make_tensor_value_info("m", TensorProto.FLOAT, [])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                             ir_version=7).SerializeToString()


def small_expected(data, x):
    """What small_model computes, by numpy."""
    m = onnx.ModelProto()
    m.ParseFromString(data)
    init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    return {"y": np.clip(x.sum(axis=1), -1, 1) + init["w"],
            "m": np.float32(math.erf(init["big"].max()))}


def one_call(data, i):
    """Call i of the repetition: 11 (down), 17 (up) or 7 (refused)."""
    t = (11, 17, 7)[i % 3]
    try:
        out = oc.convert(data, t, report=bool(i % 2))
        return t != 7 and len(out[0] if isinstance(out, tuple) else out) > 0
    except oc.ConversionError as e:
        return t == 7 and e.step == (9, 8)


def convert_memory(data):
    ok = sum(one_call(data, i) for i in range(WARMUP))
    before = rss()
    t0 = time.time()
    ok += sum(one_call(data, i) for i in range(WARMUP, CALLS))
    after = rss()
    check(ok == CALLS, "convert: %d of %d calls gave the result expected" % (ok, CALLS))
    grew = after - before
    print("convert x %d: resident %.1f -> %.1f MiB (%+.2f MiB), %.1f s"
          % (CALLS - WARMUP, before / 2**20, after / 2**20, grew / 2**20, time.time() - t0))
    check(grew <= LEAK_BOUND, "convert: resident memory grew %.2f MiB over %d calls (bound "
          "%.2f MiB)" % (grew / 2**20, CALLS - WARMUP, LEAK_BOUND / 2**20))


def run_memory(data):
    """200 calls of run(), when run() is there. Each call loads the model
    (66 KiB of weights) into the library: leaking that is 13 MiB over the
    180 measured calls (measured, by not freeing the model); a leak under
    ~9 KiB a call passes the bound here (the convert part's 9,500 calls see
    smaller ones in the code both share)."""
    x = np.arange(48, dtype=np.float32).reshape(16, 3)
    try:
        first = oc.run(data, {"x": x})
    except NotImplementedError:
        skip("python_stress run(): onnxconvert.run is a stub (NotImplementedError) on this "
             "branch")
        return
    want = small_expected(data, x)
    check(set(first) == {"y", "m"} and all(
        np.allclose(first[k], want[k], rtol=1e-6, atol=1e-6) for k in want),
        "run: outputs %r, numpy's %r" % (first, want))
    same = 0
    for i in range(RUN_WARMUP):
        same += np.array_equal(oc.run(data, {"x": x})["y"], first["y"])
    before = rss()
    for i in range(RUN_WARMUP, RUN_CALLS):
        same += np.array_equal(oc.run(data, {"x": x})["y"], first["y"])
    after = rss()
    check(same == RUN_CALLS, "run: %d of %d calls gave the first call's output"
          % (same, RUN_CALLS))
    grew = after - before
    print("run x %d: resident %+.2f MiB" % (RUN_CALLS - RUN_WARMUP, grew / 2**20))
    check(grew <= LEAK_BOUND, "run: resident memory grew %.2f MiB over %d calls"
          % (grew / 2**20, RUN_CALLS - RUN_WARMUP))


def thread_models():
    """4 different models: the shared exports when present, else built."""
    d = "../shared/models"
    names = ["lstm_tagger_opset9", "tinybert_opset11", "vit_tiny_opset13",
             "squeezenet1_1_opset13"]
    paths = [os.path.join(d, n, "model.onnx") for n in names]
    if all(os.path.isfile(p) for p in paths):
        models = []
        for p in paths:
            with open(p, "rb") as f:
                models.append(f.read())
        return models
    skip("python_stress threads: ../shared/models absent: 4 built models")
    return [small_model(seed, 16 + 8 * seed) for seed in range(4)]


def convert_or_refusal(data, t):
    try:
        return oc.convert(data, t)
    except oc.ConversionError as e:
        return ("refused", e.stage, e.reason, e.node, e.step, str(e))


def threads(models, rounds=5):
    """4 threads, each task one model to one target, against one thread."""
    tasks = [(m, t) for _ in range(rounds) for m in range(len(models)) for t in (7, 17)]
    t0 = time.time()
    single = {(m, t): convert_or_refusal(models[m], t) for m in range(len(models))
              for t in (7, 17)}
    t1 = time.time()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda mt: convert_or_refusal(models[mt[0]], mt[1]), tasks))
    t2 = time.time()
    same = sum(g == single[mt] for g, mt in zip(got, tasks))
    check(same == len(tasks), "threads: %d of %d results equal one thread's"
          % (same, len(tasks)))
    check(any(isinstance(v, bytes) for v in single.values()), "threads: nothing converted")
    check(len(set(v for v in single.values() if isinstance(v, bytes))) ==
          sum(isinstance(v, bytes) for v in single.values()),
          "threads: two models gave the same bytes (the models are not different)")
    print("threads: %d tasks on 4 threads in %.1f s (one thread: %d tasks in %.1f s)"
          % (len(tasks), t2 - t1, len(single), t1 - t0))


def main():
    t0 = time.time()
    data = small_model()
    convert_memory(data)
    run_memory(data)
    threads(thread_models())
    print("python_stress: %.1f s" % (time.time() - t0))
    return report("python_stress")


if __name__ == "__main__":
    sys.exit(main())
