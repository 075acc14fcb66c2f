"""coreml_values.py - the constants and the description of the packages
tool_mlpackage_gen writes, read back by Apple's own code: coremltools'
generated Model_pb2 parses model.mlmodel, its libmilstoragepython reads the
blobs of weight.bin. The values are compared with the formulas
tests/mlp_models.h fills them with (recomputed here in float32 / float16),
so a wrong offset, element order, dtype or byte order fails, although the
loader itself (ct_check.py) would accept it.

Usage: /usr/bin/python3 -E -s tests/coreml_values.py COREMLTOOLS_DIR PACKAGES_DIR
Prints "coreml_values: N passed, N failed".
"""
import os
import sys
import types

import numpy as np

ct, pkgs = sys.argv[1], sys.argv[2]
# coremltools' package without its __init__ (which imports every converter):
# only its generated protobuf modules and the blob reader are needed.
root = types.ModuleType("coremltools")
root.__path__ = [os.path.join(ct, "src", "coremltools")]
sys.modules["coremltools"] = root
from coremltools.proto import Model_pb2  # noqa: E402
from coremltools import libmilstoragepython  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL coreml_values: " + what, file=sys.stderr)


def model(name):
    m = Model_pb2.Model()
    with open(os.path.join(pkgs, name + ".mlpackage", "Data", "com.apple.CoreML",
                           "model.mlmodel"), "rb") as f:
        m.ParseFromString(f.read())
    return m


def const_val(m, opname):
    block = m.mlProgram.functions["main"].block_specializations[
        m.mlProgram.functions["main"].opset]
    for op in block.operations:
        if op.type == "const" and op.attributes["name"].immediateValue.tensor.strings.values[0] == opname:
            return op.attributes["val"]
    raise KeyError(opname)


def blob(name, value, kind):
    check(value.WhichOneof("value") == "blobFileValue"
          and value.blobFileValue.fileName == "@model_path/weights/weight.bin",
          "%s: not a blob of @model_path/weights/weight.bin" % name)
    reader = libmilstoragepython._BlobStorageReader(os.path.join(
        pkgs, name + ".mlpackage", "Data", "com.apple.CoreML", "weights", "weight.bin"))
    return np.asarray(getattr(reader, kind)(value.blobFileValue.offset))


def floats(n, scale):
    # mm_floats: scale * sinf((float)i * 0.37f + 0.1f), all in float32
    i = np.arange(n, dtype=np.float32)
    return np.float32(scale) * np.sin(i * np.float32(0.37) + np.float32(0.1))


def halves(n, scale):
    # mm_halves: half(scale * (1 + 0.5 sinf(i)))
    i = np.arange(n, dtype=np.float32)
    return (np.float32(scale) * (np.float32(1) + np.float32(0.5) * np.sin(i))).astype(np.float16)


# fp32 blobs: 3 ulps of float32 at the values' scale (sinf and numpy's sin
# may differ in the last bit); a shifted or reordered blob is off by ~scale
m = model("matmul")
w = blob("matmul", const_val(m, "mm_w"), "read_float_data")
check(w.shape == (512 * 256,) and np.max(np.abs(w - floats(512 * 256, 0.05))) <= 1e-8,
      "matmul: mm_w's blob is not 0.05 sin(0.37 i + 0.1)")
m = model("conv")
w = blob("conv", const_val(m, "conv_weight"), "read_float_data")
check(w.shape == (216,) and np.max(np.abs(w - floats(216, 0.5))) <= 1e-7,
      "conv: conv_weight's blob is not 0.5 sin(0.37 i + 0.1)")
t = const_val(m, "conv_strides").immediateValue.tensor
check(list(t.ints.values) == [1, 1], "conv: conv_strides is not ints [1, 1]")
t = const_val(m, "conv_pad_type").immediateValue.tensor
check(list(t.strings.values) == [b"valid"] or list(t.strings.values) == ["valid"],
      "conv: conv_pad_type is not the string 'valid'")

# fp16: one half ulp (our rounding rounds ties up, numpy's to even)
m = model("fp16")
w = blob("fp16", const_val(m, "scale16"), "read_fp16_data").view(np.float16)
check(w.shape == (16,) and np.max(np.abs(w.astype(np.float32) - halves(16, 0.75).astype(np.float32)))
      <= 2.0 ** -10, "fp16: scale16's blob is not 0.75 (1 + 0.5 sin i) in float16")
b = const_val(m, "bias16").immediateValue.tensor.bytes.values
check(np.frombuffer(b, np.float16).tolist() == [0.25], "fp16: bias16 is not the fp16 bytes of 0.25")

# the flexible input's description: default shape and a range per dimension
m = model("flexible")
a = m.description.input[0].type.multiArrayType
check(list(a.shape) == [1, 1, 4] and
      [(r.lowerBound, r.upperBound) for r in a.shapeRange.sizeRanges] == [(1, 1), (1, 128), (4, 4)],
      "flexible: input x's shape / ranges: %s %s" % (list(a.shape), a.shapeRange))
o = m.description.output[0].type.multiArrayType
check(list(o.shape) == [] and o.dataType == Model_pb2.FeatureTypes__pb2.ArrayFeatureType.FLOAT32,
      "flexible: output y should be fp32 with no fixed shape")

print("coreml_values: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
