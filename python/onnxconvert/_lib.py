"""The C library through ctypes: loading it and the prototype of every call.

ctypes.CDLL releases the GIL for the length of every foreign call, so a long
conversion or evaluation lets other Python threads run. Prototypes are bound
on first use, so that a call the loaded library lacks fails with a message
naming it rather than at import.
"""
import ctypes
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_uint64, c_void_p)

from ._find import find_library


class Tensor(Structure):
    """oc_tensor: a dense tensor (include/onnxconvert.h)."""
    _fields_ = [("name", c_char_p), ("elem_type", c_int32), ("rank", c_size_t),
                ("dims", POINTER(c_int64)), ("data", c_void_p), ("size", c_size_t)]


class Buffer(Structure):
    """oc_buffer: a named run of bytes (a serialized value)."""
    _fields_ = [("name", c_char_p), ("data", c_void_p), ("size", c_size_t)]


_MODEL = c_void_p
_OUT_STR = POINTER(c_void_p)   # char ** the library fills; freed with oc_free

# name: (restype, argtypes)
_PROTOS = {
    "oc_version": (c_char_p, []),
    "oc_error": (c_char_p, []),
    "oc_newest_opset": (c_int64, [c_char_p]),
    "oc_newest_ir_version": (c_int64, []),
    "oc_load_file": (c_int, [c_char_p, POINTER(_MODEL)]),
    "oc_load_memory": (c_int, [c_void_p, c_size_t, POINTER(_MODEL)]),
    "oc_model_free": (None, [_MODEL]),
    "oc_model_opset": (c_int64, [_MODEL, c_char_p]),
    "oc_model_ir_version": (c_int64, [_MODEL]),
    "oc_model_node_count": (c_size_t, [_MODEL]),
    "oc_check": (c_int, [_MODEL]),
    "oc_convert_ex": (c_int, [_MODEL, c_int64, c_int64, c_int64]),
    "oc_optimize": (c_int, [_MODEL, c_char_p]),
    "oc_set_input_shape": (c_int, [_MODEL, c_char_p]),
    "oc_run_command": (c_int, [_MODEL, c_char_p, POINTER(c_char_p), c_size_t, _OUT_STR]),
    "oc_check_report": (c_int, [_MODEL, _OUT_STR]),
    "oc_info_report": (c_int, [_MODEL, _OUT_STR]),
    "oc_targets_report": (c_int, [_MODEL, _OUT_STR]),
    "oc_set_eval_limits": (c_int, [_MODEL, c_uint64, c_uint64, c_double]),
    "oc_set_eval_seed": (c_int, [_MODEL, c_uint64]),
    "oc_elem_size": (c_size_t, [c_int32]),
    "oc_evaluate": (c_int, [_MODEL, POINTER(Tensor), c_size_t,
                            POINTER(POINTER(Tensor)), POINTER(c_size_t)]),
    "oc_tensors_free": (None, [POINTER(Tensor), c_size_t]),
    "oc_evaluate_pb": (c_int, [_MODEL, POINTER(Buffer), c_size_t,
                               POINTER(POINTER(Buffer)), POINTER(c_size_t)]),
    "oc_buffers_free": (None, [POINTER(Buffer), c_size_t]),
    "oc_save_file": (c_int, [_MODEL, c_char_p]),
    "oc_save_memory": (c_int, [_MODEL, POINTER(c_void_p), POINTER(c_size_t)]),
    "oc_free": (None, [c_void_p]),
}

_dll = None
_bound = {}


def dll():
    """The loaded library (loaded on first use)."""
    global _dll
    if _dll is None:
        path = find_library()
        try:
            _dll = ctypes.CDLL(path)
        except OSError as e:
            raise ImportError(
                f"onnxconvert: cannot load the C library ({path}): {e}; build it with "
                "`make` and set ONNXCONVERT_LIBRARY to build/libonnxconvert.so.0, or "
                "install it with `make install`") from None
    return _dll


def fn(name):
    """The foreign function `name` with its prototype."""
    f = _bound.get(name)
    if f is None:
        try:
            f = getattr(dll(), name)
        except AttributeError:
            raise ImportError(f"onnxconvert: the loaded library ({find_library()}) has no "
                              f"{name}: it is older than this package") from None
        f.restype, f.argtypes = _PROTOS[name]
        _bound[name] = f
    return f


def error():
    """oc_error(): the calling thread's last message."""
    return fn("oc_error")().decode("utf-8", "replace")


def take_string(p):
    """The text of a char * the library handed out, freeing it."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        fn("oc_free")(p)


def take_bytes(p, n):
    """The bytes of a buffer the library handed out, freeing it."""
    if not p:
        return b""
    try:
        return ctypes.string_at(p, n)
    finally:
        fn("oc_free")(p)
