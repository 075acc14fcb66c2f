"""Python values <-> serialized ONNX value messages (what oc_evaluate_pb takes).

A small protobuf encoder and decoder (the standard library's struct and
numpy, no protobuf package) for the four messages the backend test cases
store values in: TensorProto, SequenceProto, MapProto and OptionalProto.
The field numbers are onnx.proto's.

Values, as run() takes and gives them:
  tensor    numpy.ndarray of the declared element type (float16 as
            numpy.float16, strings as an object array of str or bytes, the
            4- and 2-bit integers as int8/uint8 arrays of their values);
            bfloat16, the float8 types, float4e2m1 and float8e8m0, which
            numpy lacks, as a RawTensor (the bit patterns in a uint16 or
            uint8 array and the element type), or on input a uint16/uint8
            array of the bit patterns
  sequence  list of values
  map       dict {int or str: value}
  optional  None (no value) or the value
The declared type (a type string of `info --json`: "tensor(float)",
"seq(tensor(int64))", "map(string,tensor(float))", "optional(...)") chooses
the message and the element type. A list or Python scalar for a tensor is
converted to the declared element type; an ndarray must already have it (a
float64 array for a float input is a UsageError, never a silent cast).
"""
import struct

import numpy as np

from ._errors import usage

# ONNX TensorProto.DataType: code -> (name in type strings, numpy dtype of
# the values run() hands out, bits per element when packed below a byte).
_ELEM = {
    1: ("float", np.float32, 0), 2: ("uint8", np.uint8, 0), 3: ("int8", np.int8, 0),
    4: ("uint16", np.uint16, 0), 5: ("int16", np.int16, 0), 6: ("int32", np.int32, 0),
    7: ("int64", np.int64, 0), 8: ("string", object, 0), 9: ("bool", np.bool_, 0),
    10: ("float16", np.float16, 0), 11: ("double", np.float64, 0),
    12: ("uint32", np.uint32, 0), 13: ("uint64", np.uint64, 0),
    14: ("complex64", np.complex64, 0), 15: ("complex128", np.complex128, 0),
    16: ("bfloat16", np.uint16, 0), 17: ("float8e4m3fn", np.uint8, 0),
    18: ("float8e4m3fnuz", np.uint8, 0), 19: ("float8e5m2", np.uint8, 0),
    20: ("float8e5m2fnuz", np.uint8, 0), 21: ("uint4", np.uint8, 4),
    22: ("int4", np.int8, 4), 23: ("float4e2m1", np.uint8, 4),
    24: ("float8e8m0", np.uint8, 0), 25: ("uint2", np.uint8, 2), 26: ("int2", np.int8, 2),
}
_CODE = {name: code for code, (name, _, _) in _ELEM.items()}
# Types numpy has no dtype for: handed out as RawTensor (bit patterns).
_RAW = {16, 17, 18, 19, 20, 23, 24}
_STRING = 8

# TensorProto fields
_T_DIMS, _T_TYPE, _T_FLOAT, _T_INT32, _T_STRING, _T_INT64 = 1, 2, 4, 5, 6, 7
_T_NAME, _T_RAW, _T_DOUBLE, _T_UINT64, _T_LOCATION = 8, 9, 10, 11, 14
# SequenceProto / OptionalProto fields and their elem_type codes (the same
# numbers in both messages)
_S_NAME, _S_ELEM, _S_TENSOR, _S_SPARSE, _S_SEQ, _S_MAP, _S_OPT = 1, 2, 3, 4, 5, 6, 7
_K_UNDEFINED, _K_TENSOR, _K_SPARSE, _K_SEQ, _K_MAP, _K_OPT = 0, 1, 2, 3, 4, 5
# MapProto fields
_M_NAME, _M_KEY_TYPE, _M_KEYS, _M_STRING_KEYS, _M_VALUES = 1, 2, 3, 4, 5


class RawTensor:
    """A tensor of a type numpy has no dtype for (bfloat16, the float8
    types, float4e2m1, float8e8m0): `bits` is a uint16 (bfloat16) or uint8
    array of the elements' bit patterns, in the tensor's shape, and
    `elem_type` the ONNX type name ("bfloat16", ...) or code."""

    def __init__(self, bits, elem_type):
        code = _CODE.get(elem_type, elem_type)
        if code not in _ELEM:
            raise usage(f"onnxconvert: RawTensor: unknown element type {elem_type!r}")
        self.elem_type = _ELEM[code][0]
        self.code = code
        self.bits = np.asarray(bits)
        if self.bits.dtype != _ELEM[code][1]:
            raise usage(f"onnxconvert: RawTensor of {self.elem_type} takes "
                        f"{np.dtype(_ELEM[code][1]).name} bit patterns, not "
                        f"{self.bits.dtype.name}")

    @property
    def shape(self):
        return self.bits.shape

    def __eq__(self, other):
        return (isinstance(other, RawTensor) and self.code == other.code and
                self.bits.shape == other.bits.shape and
                bool(np.all(self.bits == other.bits)))

    def __repr__(self):
        return f"RawTensor({self.bits!r}, {self.elem_type!r})"


# ---- declared types ---------------------------------------------------------

def parse_type(text):
    """A type string of `info --json` as a tuple: ("tensor", code),
    ("sparse_tensor", code), ("seq", t), ("map", key code, t),
    ("optional", t); None for an unknown ("?") part."""
    if text is None:
        return None
    t, rest = _parse(text.replace(" ", ""), 0)
    if rest != len(text.replace(" ", "")):
        raise usage(f"onnxconvert: cannot read the type {text!r}")
    return t


def _parse(s, i):
    if s.startswith("?", i):
        return None, i + 1
    for kind in ("tensor", "sparse_tensor", "seq", "optional", "map"):
        if s.startswith(kind + "(", i):
            i += len(kind) + 1
            break
    else:
        j = i
        while j < len(s) and s[j] not in ",()":
            j += 1
        return ("other", s[i:j]), j
    if kind in ("tensor", "sparse_tensor"):
        j = s.index(")", i)
        return (kind, _CODE.get(s[i:j])), j + 1
    if kind == "map":
        j = s.index(",", i)
        key = _CODE.get(s[i:j])
        inner, i = _parse(s, j + 1)
        return ("map", key, inner), i + 1
    inner, i = _parse(s, i)
    return (kind, inner), i + 1


def type_text(t):
    """The type string of a parsed type (for messages)."""
    if t is None:
        return "?"
    if t[0] in ("tensor", "sparse_tensor"):
        return f"{t[0]}({_ELEM[t[1]][0] if t[1] in _ELEM else '?'})"
    if t[0] == "map":
        return f"map({_ELEM[t[1]][0] if t[1] in _ELEM else '?'},{type_text(t[2])})"
    if t[0] == "other":
        return t[1]
    return f"{t[0]}({type_text(t[1])})"


# ---- the wire format -------------------------------------------------------

def _varint(n):
    n &= 0xFFFFFFFFFFFFFFFF   # negative int64/int32 as ten bytes, as protobuf does
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _int_field(field, n):
    return _key(field, 0) + _varint(n)


def _bytes_field(field, data):
    return _key(field, 2) + _varint(len(data)) + bytes(data)


class DecodeError(ValueError):
    """Bytes that are not the message they should be."""


def _read_varint(buf, i):
    shift = n = 0
    while True:
        if i >= len(buf):
            raise DecodeError("truncated varint")
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, i
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes")


def _fields(buf):
    """(field, wire type, value) of each field of one message: an int for
    varints, bytes for the fixed and length-delimited ones."""
    buf = memoryview(buf)
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(buf, i)
        elif wire == 1 or wire == 5:
            n = 8 if wire == 1 else 4
            if i + n > len(buf):
                raise DecodeError(f"field {field}: truncated")
            v, i = buf[i:i + n], i + n
        elif wire == 2:
            n, i = _read_varint(buf, i)
            if i + n > len(buf):
                raise DecodeError(f"field {field}: truncated")
            v, i = buf[i:i + n], i + n
        else:
            raise DecodeError(f"field {field}: wire type {wire} is not supported")
        yield field, wire, v


def _signed64(n):
    return n - (1 << 64) if n >= 1 << 63 else n


def _repeated_varints(out, wire, v):
    if wire == 0:
        out.append(v)
    elif wire == 2:
        i = 0
        while i < len(v):
            n, i = _read_varint(v, i)
            out.append(n)
    else:
        raise DecodeError("a varint field with a fixed-size wire type")


def _repeated_fixed(out, wire, v, fmt):
    if wire == 2 and len(v) % struct.calcsize(fmt):
        raise DecodeError("packed field of a size that is no multiple of its elements")
    out.append(bytes(v))


# ---- tensors ---------------------------------------------------------------

def _pack_bits(vals, bits):
    """Packs integers of `bits` bits, the first element in the lowest bits."""
    per = 8 // bits
    v = np.asarray(vals).reshape(-1).astype(np.uint8) & ((1 << bits) - 1)
    pad = (-len(v)) % per
    if pad:
        v = np.concatenate([v, np.zeros(pad, np.uint8)])
    v = v.reshape(-1, per)
    out = np.zeros(len(v), np.uint8)
    for k in range(per):
        out |= v[:, k] << (k * bits)
    return out.tobytes()


def _unpack_bits(data, bits, count, signed):
    per = 8 // bits
    b = np.frombuffer(bytes(data), np.uint8)
    if len(b) * per < count:
        raise DecodeError(f"{len(b)} bytes for {count} elements of {bits} bits")
    vals = np.stack([(b >> (k * bits)) & ((1 << bits) - 1) for k in range(per)], 1)
    vals = vals.reshape(-1)[:count]
    if signed:
        vals = vals.astype(np.int8)
        vals = np.where(vals >= 1 << (bits - 1), vals - (1 << bits), vals).astype(np.int8)
    return vals


def _to_array(value, code, what):
    """value as the numpy array of element type `code` to send (bit
    patterns for the raw types), or a UsageError."""
    name, dt, _ = _ELEM[code]
    if isinstance(value, RawTensor):
        if value.code != code:
            raise usage(f"onnxconvert: {what}: a RawTensor of {value.elem_type}, the "
                        f"model declares tensor({name})")
        return value.bits
    if code == _STRING:
        a = np.asarray(value, dtype=object)
        for x in a.reshape(-1):
            if not isinstance(x, (str, bytes, np.str_, np.bytes_)):
                raise usage(f"onnxconvert: {what}: tensor(string) takes str or bytes "
                            f"elements, not {type(x).__name__}")
        return a
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        a = np.asarray(value)
        if a.dtype != np.dtype(dt):
            raise usage(f"onnxconvert: {what}: a {a.dtype.name} array, the model "
                        f"declares tensor({name}) (give {np.dtype(dt).name}"
                        f"{' bit patterns' if code in _RAW else ''}; no silent casts)")
        return a
    # lists and Python scalars take the declared type, when they fit it
    a = np.asarray(value)
    if a.dtype == object or a.dtype.kind in "USV":
        raise usage(f"onnxconvert: {what}: cannot make a tensor({name}) of {value!r:.60}")
    want = np.dtype(dt)
    if a.dtype.kind in "fc" and want.kind in "iub" or a.dtype.kind == "c" and want.kind == "f":
        raise usage(f"onnxconvert: {what}: {a.dtype.name} values for tensor({name})")
    with np.errstate(all="ignore"):
        b = a.astype(want)
    if want.kind in "iu" and a.size and not np.array_equal(b.astype(a.dtype), a):
        raise usage(f"onnxconvert: {what}: values out of the range of {name}")
    if code in (21, 22, 25, 26):
        bits = _ELEM[code][2]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if want.kind == "i" else \
            (0, (1 << bits) - 1)
        if a.size and (b.min() < lo or b.max() > hi):
            raise usage(f"onnxconvert: {what}: values out of the range of {name}")
    return b


def encode_tensor(value, code, name="", what=None):
    """A TensorProto of `value` as element type `code` (raw_data, or
    string_data for strings); `what` names it in messages."""
    a = _to_array(value, code, what or (f"tensor '{name}'" if name else "a tensor"))
    out = [_int_field(_T_DIMS, d) for d in a.shape]
    out.append(_int_field(_T_TYPE, code))
    if code == _STRING:
        for x in a.reshape(-1):
            out.append(_bytes_field(_T_STRING, x.encode("utf-8") if isinstance(x, str) else
                                    bytes(x)))
    if name:
        out.append(_bytes_field(_T_NAME, name.encode("utf-8")))
    if code != _STRING:
        bits = _ELEM[code][2]
        if bits:
            raw = _pack_bits(a, bits)
        else:
            raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        out.append(_bytes_field(_T_RAW, raw))
    return b"".join(out)


def _tensor_fields(buf):
    dims, code, name = [], 0, ""
    typed = {_T_FLOAT: [], _T_INT32: [], _T_INT64: [], _T_DOUBLE: [], _T_UINT64: []}
    strings, raw = [], None
    for f, w, v in _fields(buf):
        if f == _T_DIMS:
            _repeated_varints(dims, w, v)
        elif f == _T_TYPE and w == 0:
            code = _signed64(v)
        elif f == _T_STRING and w == 2:
            strings.append(bytes(v))
        elif f == _T_NAME and w == 2:
            name = bytes(v).decode("utf-8", "replace")
        elif f == _T_RAW and w == 2:
            raw = bytes(v)
        elif f in (_T_INT32, _T_INT64, _T_UINT64):
            _repeated_varints(typed[f], w, v)
        elif f == _T_FLOAT:
            _repeated_fixed(typed[f], w, v, "<f")
        elif f == _T_DOUBLE:
            _repeated_fixed(typed[f], w, v, "<d")
        elif f == _T_LOCATION and w == 0 and v == 1:
            raise DecodeError("tensors in external files are not supported here")
    return [_signed64(d) for d in dims], code, name, typed, strings, raw


def _typed_values(code, typed, count):
    """The elements of a tensor stored in the typed fields."""
    name, dt, bits = _ELEM[code]
    if code in (1, 14):
        a = np.frombuffer(b"".join(typed[_T_FLOAT]), "<f4")
        return a.view("<c8") if code == 14 else a
    if code in (11, 15):
        a = np.frombuffer(b"".join(typed[_T_DOUBLE]), "<f8")
        return a.view("<c16") if code == 15 else a
    if code == 7:
        return np.array([_signed64(v) for v in typed[_T_INT64]], np.int64)
    if code in (12, 13):
        return np.array(typed[_T_UINT64], np.uint64).astype(dt)
    ints = np.array([_signed64(v) for v in typed[_T_INT32]], np.int64)
    if bits:
        return _unpack_bits(ints.astype(np.uint8).tobytes(), bits, count, dt == np.int8)
    if code in (10, 16):
        return ints.astype(np.uint16).view(np.float16) if code == 10 else ints.astype(np.uint16)
    if code == 9:
        return ints != 0
    return ints.astype(dt)


def _raw_values(code, raw, count):
    name, dt, bits = _ELEM[code]
    if bits:
        return _unpack_bits(raw, bits, count, dt == np.int8)
    if code == 9:
        return np.frombuffer(raw, np.uint8) != 0
    return np.frombuffer(raw, np.dtype(dt).newbyteorder("<")).astype(dt)


def decode_tensor(buf, want=None):
    """The value of a serialized TensorProto (an ndarray, or a RawTensor for
    the types numpy lacks); `want`, the declared element code, is checked
    when given."""
    dims, code, _, typed, strings, raw = _tensor_fields(buf)
    if code not in _ELEM:
        raise DecodeError(f"element type {code} is unknown")
    if any(d < 0 for d in dims):
        raise DecodeError(f"negative dims {dims}")
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    if code == _STRING:
        if len(strings) != count:
            raise DecodeError(f"{len(strings)} strings for dims {dims}")
        a = np.empty(count, dtype=object)
        for i, s in enumerate(strings):
            try:
                a[i] = s.decode("utf-8")
            except UnicodeDecodeError:
                a[i] = s
        return a.reshape(dims)
    vals = _raw_values(code, raw, count) if raw is not None else \
        _typed_values(code, typed, count)
    if vals.size != count:
        raise DecodeError(f"{vals.size} elements for dims {dims}")
    a = np.array(vals, dtype=_ELEM[code][1]).reshape(dims)
    return RawTensor(a, code) if code in _RAW else a


# ---- sequences, maps, optionals -------------------------------------------

def _kind_of(value, t):
    """The message kind (a _K_ code) value is written as under type t."""
    if t is not None and t[0] in ("tensor", "sparse_tensor"):
        return _K_TENSOR
    if t is not None and t[0] == "seq":
        return _K_SEQ
    if t is not None and t[0] == "map":
        return _K_MAP
    if t is not None and t[0] == "optional":
        return _K_OPT
    if isinstance(value, (list, tuple)):
        return _K_SEQ
    if isinstance(value, dict):
        return _K_MAP
    return _K_TENSOR


def _elem_code(value, t, what):
    if t is not None and t[0] in ("tensor", "sparse_tensor") and t[1] is not None:
        return t[1]
    if isinstance(value, RawTensor):
        return value.code
    a = np.asarray(value)
    if a.dtype == object or a.dtype.kind in "US":
        return _STRING
    for code, (_, dt, bits) in _ELEM.items():
        if dt is not object and not bits and code not in _RAW and np.dtype(dt) == a.dtype:
            return code
    raise usage(f"onnxconvert: {what}: no ONNX element type for {a.dtype}")


def _encode_item(value, t, what):
    """(kind code, serialized message) of one value."""
    kind = _kind_of(value, t)
    if kind == _K_TENSOR:
        if t is not None and t[0] == "sparse_tensor":
            raise usage(f"onnxconvert: {what}: sparse tensors are not supported")
        return kind, encode_tensor(value, _elem_code(value, t, what), what=what)
    if kind == _K_SEQ:
        return kind, encode_sequence(value, t, what=what)
    if kind == _K_MAP:
        return kind, encode_map(value, t, what=what)
    return kind, encode_optional(value, t, what=what)


def _inner(t, kind):
    return t[1] if t is not None and t[0] == kind else None


def encode_sequence(value, t=None, name="", what="a sequence"):
    """A SequenceProto of the list `value` (elements of t's element type)."""
    if not isinstance(value, (list, tuple)):
        raise usage(f"onnxconvert: {what}: a sequence is a list, not {type(value).__name__}")
    et = _inner(t, "seq")
    parts, kind = [], _kind_of(None, et) if et is not None else None
    field = {_K_TENSOR: _S_TENSOR, _K_SEQ: _S_SEQ, _K_MAP: _S_MAP, _K_OPT: _S_OPT}
    for i, x in enumerate(value):
        k, msg = _encode_item(x, et, f"{what}[{i}]")
        kind = kind if kind is not None else k
        parts.append(_bytes_field(field[k], msg))
    head = [_bytes_field(_S_NAME, name.encode())] if name else []
    head.append(_int_field(_S_ELEM, kind if kind is not None else _K_TENSOR))
    return b"".join(head + parts)


def encode_map(value, t=None, name="", what="a map"):
    """A MapProto of the dict `value`: keys of t's key type, values a
    SequenceProto of scalar tensors (or of t's value type)."""
    if not isinstance(value, dict):
        raise usage(f"onnxconvert: {what}: a map is a dict, not {type(value).__name__}")
    key = t[1] if t is not None and t[0] == "map" and t[1] is not None else None
    vt = t[2] if t is not None and t[0] == "map" else None
    keys = list(value)
    if key is None:
        key = _STRING if keys and isinstance(keys[0], (str, bytes)) else 7
    out = [_bytes_field(_M_NAME, name.encode())] if name else []
    out.append(_int_field(_M_KEY_TYPE, key))
    for k in keys:
        if key == _STRING:
            if not isinstance(k, (str, bytes)):
                raise usage(f"onnxconvert: {what}: key {k!r} is not a string")
            out.append(_bytes_field(_M_STRING_KEYS, k.encode() if isinstance(k, str) else k))
        else:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise usage(f"onnxconvert: {what}: key {k!r} is not an integer")
            out.append(_int_field(_M_KEYS, int(k)))
    vals = [value[k] for k in keys]
    out.append(_bytes_field(_M_VALUES, encode_sequence(
        vals, ("seq", vt) if vt is not None else None, what=f"{what} values")))
    return b"".join(out)


def encode_optional(value, t=None, name="", what="an optional"):
    """An OptionalProto: empty for None, else holding `value`."""
    et = _inner(t, "optional")
    out = [_bytes_field(_S_NAME, name.encode())] if name else []
    if value is None:
        out.append(_int_field(_S_ELEM, _K_UNDEFINED))
        return b"".join(out)
    kind, msg = _encode_item(value, et, what)
    out.append(_int_field(_S_ELEM, kind))
    field = {_K_TENSOR: _S_TENSOR, _K_SEQ: _S_SEQ, _K_MAP: _S_MAP, _K_OPT: _S_OPT}[kind]
    out.append(_bytes_field(field, msg))
    return b"".join(out)


def encode(value, t, name=""):
    """The serialized message of `value` under the declared (parsed) type t."""
    what = f"input '{name}'" if name else "a value"
    if t is not None and t[0] == "other":
        raise usage(f"onnxconvert: {what}: values of type {t[1]} are not supported")
    kind = _kind_of(value, t)
    if kind == _K_TENSOR:
        if t is not None and t[0] == "sparse_tensor":
            raise usage(f"onnxconvert: {what}: sparse tensors are not supported")
        if value is None:
            raise usage(f"onnxconvert: {what}: None for a tensor")
        return encode_tensor(value, _elem_code(value, t, what), name, what)
    if kind == _K_SEQ:
        return encode_sequence(value, t, name, what)
    if kind == _K_MAP:
        return encode_map(value, t, name, what)
    return encode_optional(value, t, name, what)


def _decode_kind(buf, kind, t):
    if kind == _K_TENSOR:
        return decode_tensor(buf)
    if kind == _K_SEQ:
        return decode_sequence(buf, t)
    if kind == _K_MAP:
        return decode_map(buf, t)
    if kind == _K_OPT:
        return decode_optional(buf, t)
    raise DecodeError("sparse tensors are not supported")


_FIELD_KIND = {_S_TENSOR: _K_TENSOR, _S_SPARSE: _K_SPARSE, _S_SEQ: _K_SEQ,
               _S_MAP: _K_MAP, _S_OPT: _K_OPT}


def decode_sequence(buf, t=None):
    """The list a serialized SequenceProto holds."""
    et = _inner(t, "seq")
    out = []
    for f, w, v in _fields(buf):
        if f in _FIELD_KIND and w == 2:
            out.append(_decode_kind(v, _FIELD_KIND[f], et))
    return out


def _scalar(x):
    """A map value: a Python scalar for a rank-0 numeric tensor (as
    onnxruntime gives map values), else the value itself."""
    if isinstance(x, np.ndarray) and x.shape == ():
        return x.item()
    return x


def decode_map(buf, t=None):
    """The dict a serialized MapProto holds."""
    vt = t[2] if t is not None and t[0] == "map" else None
    key_type, keys, skeys, values = 0, [], [], []
    for f, w, v in _fields(buf):
        if f == _M_KEY_TYPE and w == 0:
            key_type = v
        elif f == _M_KEYS:
            _repeated_varints(keys, w, v)
        elif f == _M_STRING_KEYS and w == 2:
            skeys.append(bytes(v))
        elif f == _M_VALUES and w == 2:
            values = decode_sequence(v, ("seq", vt) if vt is not None else None)
    if key_type == _STRING or skeys:
        ks = []
        for s in skeys:
            try:
                ks.append(s.decode("utf-8"))
            except UnicodeDecodeError:
                ks.append(s)
    else:
        ks = [_signed64(k) for k in keys]
    if len(ks) != len(values):
        raise DecodeError(f"a map of {len(ks)} keys and {len(values)} values")
    return {k: _scalar(x) for k, x in zip(ks, values)}


def decode_optional(buf, t=None):
    """None for an empty OptionalProto, else the value it holds."""
    et = _inner(t, "optional")
    for f, w, v in _fields(buf):
        if f in _FIELD_KIND and w == 2:
            return _decode_kind(v, _FIELD_KIND[f], et)
    return None


def decode(buf, t):
    """The value of a serialized message of declared (parsed) type t (a
    TensorProto when t is None)."""
    kind = _kind_of(None, t)
    return _decode_kind(buf, kind, t)
