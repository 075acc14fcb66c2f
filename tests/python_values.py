#!/usr/bin/python3
"""python_values: onnxconvert._values (the package's protobuf codec for
values) against onnx's own: what the codec writes, onnx reads back as the
same value (numpy_helper.to_array / to_list / to_dict / to_optional), and
what onnx writes (from_array, make_tensor with the typed fields, from_list,
from_dict, from_optional) the codec reads as the same value; for every dtype
numpy has, with NaN, infinities, -0.0, extreme integers, scalars and empty
tensors. The types numpy lacks (bfloat16, int4) are checked against bytes
written by hand; and the refusals (a float64 array for a float input, floats
for an int input, an out-of-range list) raise UsageError.

Usage: PYTHONPATH=python /usr/bin/python3 tests/python_values.py
Needs only onnx and numpy (no library: the codec is pure Python).
"""
import sys

import numpy as np

from clitest import check, report

try:
    import onnx
    from onnx import helper, numpy_helper
    from onnxconvert import UsageError, _values as V
except ImportError as e:
    print(f"python_values: skipped (no onnx/numpy/onnxconvert: {e})")
    sys.exit(0)


def same(a, b):
    """Same dtype, shape and values (NaN equal to NaN, -0.0 apart from 0.0)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return all(x == y for x, y in zip(a.reshape(-1), b.reshape(-1)))
    if a.dtype.kind in "fc":   # bit for bit: -0.0 is not 0.0, NaN equals NaN
        u = f"u{a.dtype.itemsize // (2 if a.dtype.kind == 'c' else 1)}"
        f = f"f{a.dtype.itemsize // 2}" if a.dtype.kind == "c" else a.dtype
        return np.array_equal(a.view(f).view(u), b.view(f).view(u))
    return np.array_equal(a, b)


def samples():
    """(name, array) for every numpy dtype onnx has."""
    out = []
    for dt in (np.float16, np.float32, np.float64):
        f = np.finfo(dt)
        out.append((dt.__name__, np.array([[0.0, -0.0, 1.5, -2.25], [np.nan, np.inf, -np.inf,
                                                                     f.max]], dtype=dt)))
        out.append((dt.__name__ + " tiny", np.array([f.tiny, -f.tiny, f.eps], dtype=dt)))
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
               np.uint64):
        i = np.iinfo(dt)
        out.append((dt.__name__, np.array([i.min, i.max, 0, 1, i.max // 3], dtype=dt)))
    out.append(("bool", np.array([[True, False], [False, True]])))
    out.append(("complex64", np.array([1 + 2j, -0.5 - 1j, np.nan], dtype=np.complex64)))
    out.append(("complex128", np.array([[1e300 + 2j], [-3j]], dtype=np.complex128)))
    out.append(("scalar float", np.array(3.5, dtype=np.float32)))
    out.append(("scalar int64", np.array(-7, dtype=np.int64)))
    out.append(("empty", np.zeros((2, 0, 3), dtype=np.float32)))
    out.append(("empty int8", np.zeros((0,), dtype=np.int8)))
    return out


def code_of(a):
    return helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") \
        else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]


def test_tensors():
    for name, a in samples():
        code = code_of(a)
        # ours -> onnx
        data = V.encode_tensor(a, code, "t")
        tp = onnx.TensorProto.FromString(data)
        check(tp.name == "t" and tp.data_type == code and list(tp.dims) == list(a.shape),
              f"{name}: onnx reads name, type and dims")
        check(same(numpy_helper.to_array(tp), a), f"{name}: onnx reads our values")
        # onnx (raw_data) -> ours
        raw = numpy_helper.from_array(a, "t").SerializeToString()
        check(same(V.decode_tensor(raw), a), f"{name}: we read from_array's bytes")
        # onnx (typed fields) -> ours
        vals = a.reshape(-1).tolist() if a.dtype != np.float16 else a.reshape(-1)
        typed = helper.make_tensor("t", code, a.shape, vals, raw=False)
        check(not typed.raw_data, f"{name}: make_tensor used the typed fields")
        check(same(V.decode_tensor(typed.SerializeToString()), a),
              f"{name}: we read make_tensor's typed fields")
        # our decoder reads what our encoder wrote
        check(same(V.decode_tensor(data), a), f"{name}: round trip")


def test_strings():
    a = np.array([["abc", ""], ["é\u4e2d", "x y"]], dtype=object)
    data = V.encode_tensor(a, 8, "s")
    tp = onnx.TensorProto.FromString(data)
    got = numpy_helper.to_array(tp)
    check(got.shape == (2, 2) and [x.decode() if isinstance(x, bytes) else x
                                   for x in got.reshape(-1)] == list(a.reshape(-1)),
          "strings: onnx reads ours")
    check(same(V.decode_tensor(numpy_helper.from_array(a).SerializeToString()), a),
          "strings: we read onnx's")
    b = V.decode_tensor(V.encode_tensor(np.array([b"\xff\x00", b"ok"], dtype=object), 8))
    check(list(b) == [b"\xff\x00", "ok"], "bytes that are not UTF-8 stay bytes")
    check(same(V.decode_tensor(V.encode_tensor(["a", "bc"], 8)),
               np.array(["a", "bc"], dtype=object)), "a list of str")


def test_sequences_maps_optionals():
    seq = [np.array([1, 2], np.int64), np.array([[3.5]], np.float32)]
    t_seq = V.parse_type("seq(tensor(int64))")
    data = V.encode_sequence(seq[:1], t_seq, "q")
    sp = onnx.SequenceProto.FromString(data)
    check(sp.elem_type == onnx.SequenceProto.TENSOR and len(sp.tensor_values) == 1,
          "a SequenceProto of tensors")
    check(same(numpy_helper.to_list(sp)[0], seq[0]), "onnx reads our sequence")
    theirs = numpy_helper.from_list(seq, "q").SerializeToString()
    got = V.decode_sequence(theirs)
    check(len(got) == 2 and same(got[0], seq[0]) and same(got[1], seq[1]),
          "we read from_list's sequence")
    check(V.decode_sequence(V.encode_sequence([], t_seq)) == [], "an empty sequence")
    nested = [[np.array([1], np.int64)], []]
    t_nested = V.parse_type("seq(seq(tensor(int64)))")
    back = V.decode_sequence(V.encode_sequence(nested, t_nested), t_nested)
    check(len(back) == 2 and len(back[0]) == 1 and back[1] == [] and same(back[0][0], nested[0][0]),
          "a sequence of sequences")

    t_map = V.parse_type("map(int64,tensor(float))")
    m = {3: 0.5, -1: 1.5}
    data = V.encode_map(m, t_map, "m")
    mp = onnx.MapProto.FromString(data)
    d = numpy_helper.to_dict(mp)
    check(mp.key_type == onnx.TensorProto.INT64 and list(mp.keys) == [3, -1] and
          {k: float(np.asarray(v)) for k, v in d.items()} == m, "onnx reads our map")
    check(V.decode_map(data, t_map) == m, "round trip of a map")
    im = {1: np.array(1.0, np.float32), 5: np.array(2.0, np.float32)}
    # (onnx 1.12's from_dict fails on any dict: make_map builds it instead)
    theirs = helper.make_map("m", onnx.TensorProto.INT64, list(im),
                             numpy_helper.from_list(list(im.values()))).SerializeToString()
    check(V.decode_map(theirs) == {1: 1.0, 5: 2.0}, "we read make_map's map")
    theirs = helper.make_map("m", onnx.TensorProto.STRING, [b"a", b"b"],
                             numpy_helper.from_list(list(im.values()))).SerializeToString()
    check(V.decode_map(theirs) == {"a": 1.0, "b": 2.0}, "we read make_map's string map")
    t_smap = V.parse_type("map(string,tensor(int64))")
    back = V.decode_map(V.encode_map({"x": 7, "é": -2}, t_smap), t_smap)
    check(back == {"x": 7, "é": -2} and all(type(v) is int for v in back.values()),
          "a string-keyed map of int64 round trip")

    t_opt = V.parse_type("optional(tensor(float))")
    none = V.encode_optional(None, t_opt)
    op = onnx.OptionalProto.FromString(none)
    check(op.elem_type == onnx.OptionalProto.UNDEFINED and not op.HasField("tensor_value"),
          "an empty optional")
    check(V.decode_optional(none, t_opt) is None, "we read an empty optional as None")
    x = np.array([1, 2], np.float32)
    some = V.encode_optional(x, t_opt)
    op = onnx.OptionalProto.FromString(some)
    check(op.elem_type == onnx.OptionalProto.TENSOR and
          same(numpy_helper.to_optional(op), x), "onnx reads our optional tensor")
    theirs = numpy_helper.from_optional(x, "o").SerializeToString()
    check(same(V.decode_optional(theirs, t_opt), x), "we read from_optional's")
    t_os = V.parse_type("optional(seq(tensor(float)))")
    back = V.decode_optional(V.encode_optional([x], t_os), t_os)
    check(isinstance(back, list) and same(back[0], x), "an optional sequence")
    check(V.encode(None, t_opt, "o") == V.encode_optional(None, t_opt, "o"),
          "None for an optional input is an empty OptionalProto")


def test_types_numpy_lacks():
    bits = np.array([0x3F80, 0xC000, 0x7FC0], np.uint16)   # bfloat16 1, -2, NaN
    data = V.encode(bits, V.parse_type("tensor(bfloat16)"), "b")
    tp = onnx.TensorProto.FromString(data)
    check(tp.data_type == onnx.TensorProto.BFLOAT16 and tp.raw_data == bytes.fromhex("803f00c0c07f"),
          "bfloat16 bit patterns go out little-endian")
    got = V.decode_tensor(data)
    check(isinstance(got, V.RawTensor) and got.elem_type == "bfloat16" and
          np.array_equal(got.bits, bits), "bfloat16 comes back as a RawTensor")
    typed = helper.make_tensor("b", onnx.TensorProto.BFLOAT16, [2], [1.0, -2.0], raw=False)
    got = V.decode_tensor(typed.SerializeToString())
    check(isinstance(got, V.RawTensor) and list(got.bits) == [0x3F80, 0xC000],
          "bfloat16 in int32_data")
    raw = V.RawTensor(np.array([0x38, 0x40], np.uint8), "float8e4m3fn")
    data = V.encode(raw, V.parse_type("tensor(float8e4m3fn)"))
    check(V.decode_tensor(data) == raw, "a float8 RawTensor round trip")
    # int4: [1, -2, 3] packs low nibble first: E1 03
    data = V.encode([1, -2, 3], V.parse_type("tensor(int4)"))
    tp = onnx.TensorProto.FromString(data)
    check(tp.data_type == 22 and tp.raw_data == b"\xe1\x03", "int4 packed by hand")
    got = V.decode_tensor(data)
    check(got.dtype == np.int8 and list(got) == [1, -2, 3], "int4 unpacked to int8")
    got = V.decode_tensor(V.encode(np.array([3, 0, 1, 2, 2], np.uint8),
                                   V.parse_type("tensor(uint2)")))
    check(list(got) == [3, 0, 1, 2, 2], "uint2 round trip (four per byte)")


def refused(f, part, what):
    try:
        f()
    except UsageError as e:
        check(part in str(e), f"{what}: message {str(e)!r} lacks {part!r}")
        return
    except Exception as e:  # noqa: BLE001 - any other exception is the failure
        check(False, f"{what}: {type(e).__name__}: {e}")
        return
    check(False, f"{what}: not refused")


def test_refusals():
    tf = V.parse_type("tensor(float)")
    ti = V.parse_type("tensor(int64)")
    refused(lambda: V.encode(np.zeros(2), tf, "x"), "float64 array", "float64 for float")
    refused(lambda: V.encode([1.5, 2], ti, "x"), "float64 values", "floats for int64")
    refused(lambda: V.encode([300], V.parse_type("tensor(uint8)"), "x"), "out of the range",
            "300 for uint8")
    refused(lambda: V.encode([8], V.parse_type("tensor(int4)"), "x"), "out of the range",
            "8 for int4")
    refused(lambda: V.encode({"a": 1}, V.parse_type("seq(tensor(float))"), "x"), "a list",
            "a dict for a sequence")
    refused(lambda: V.encode([1], V.parse_type("map(int64,tensor(float))"), "x"), "a dict",
            "a list for a map")
    refused(lambda: V.encode(np.zeros(2, np.uint8), V.parse_type("tensor(bfloat16)"), "x"),
            "uint8 array", "uint8 bits for bfloat16")
    check(same(V.decode_tensor(V.encode([1, 2], ti)), np.array([1, 2], np.int64)),
          "a list of ints for int64 is fine")
    check(same(V.decode_tensor(V.encode(2, tf)), np.array(2, np.float32)),
          "a Python number for a float scalar is fine")
    for bad in (b"\x08", b"\x0a\x05ab", b"\x4a\x10abc"):
        try:
            V.decode_tensor(bad)
            check(False, f"truncated {bad!r} decoded")
        except ValueError:
            check(True, "truncated bytes")


def test_type_strings():
    for s in ("tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))",
              "optional(seq(tensor(bfloat16)))", "seq(map(int64,tensor(double)))"):
        check(V.type_text(V.parse_type(s)) == s, f"type string {s}")
    check(V.parse_type("seq(?)") == ("seq", None), "an unknown element type")


test_tensors()
test_strings()
test_sequences_maps_optionals()
test_types_numpy_lacks()
test_refusals()
test_type_strings()
sys.exit(report("python_values"))
