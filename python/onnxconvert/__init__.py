"""onnxconvert: convert ONNX models between opset versions, optimize them and
run them with a reference evaluator, through the onnx-convert C library.

    import onnx, onnxconvert
    model = onnx.load("model.onnx")
    converted = onnxconvert.convert(model, 11, verify=True)   # an onnx.ModelProto

A model argument is an onnx.ModelProto, the bytes of a .onnx file, or a path;
convert() and optimize() return the kind they were given (a ModelProto for a
path). Refusals raise ConversionError, InvalidModelError or UsageError with the
stage, reason, node, op, domain and step as attributes; nothing is printed.

Threads: every call works on its own copy of the model inside the library, so
calls on different threads never share one; the GIL is released for the
length of each call into the library.
"""
import ctypes
import json
import os

from . import _lib
from ._errors import (ConversionError, Diagnostic, InvalidModelError,
                      OnnxConvertError, UsageError, usage)
from ._run import NodeArg, Session, run
from ._values import RawTensor

__all__ = ["convert", "convert_file", "optimize", "check", "info", "targets", "run",
           "Session", "NodeArg", "RawTensor", "Diagnostic", "OnnxConvertError", "ConversionError",
           "InvalidModelError", "UsageError", "library_version", "newest_opset",
           "newest_ir_version"]

__version__ = "0.9.0"


def library_version():
    """The version of the loaded C library, "MAJOR.MINOR.PATCH"."""
    return _lib.fn("oc_version")().decode()


def newest_opset(domain="ai.onnx"):
    """The newest opset of `domain` the library knows."""
    v = _lib.fn("oc_newest_opset")(domain.encode())
    if v < 0:
        raise usage(_lib.error())
    return v


def newest_ir_version():
    """The newest IR version the library knows."""
    return _lib.fn("oc_newest_ir_version")()


# ---- models in and out -----------------------------------------------------

class _Model:
    """An oc_model the library loaded; freed by close() or when collected.
    Never shared between threads: each public call makes its own."""

    def __init__(self, model):
        self.ptr = None   # before anything can raise: __del__ still runs
        self.kind, self.proto_type = _kind_of(model)
        self.path = None
        handle = ctypes.c_void_p()
        if self.kind == "path":
            self.path = os.fspath(model)
            rc = _lib.fn("oc_load_file")(_path_arg(self.path), ctypes.byref(handle))
        else:
            data = model.SerializeToString() if self.kind == "proto" else bytes(model)
            if not data:
                raise InvalidModelError(_load_diag("the model is empty (0 bytes)"))
            rc = _lib.fn("oc_load_memory")(data, len(data), ctypes.byref(handle))
        if rc != 0:
            raise InvalidModelError(_load_diag(_lib.error()))
        self.ptr = handle

    def close(self):
        if self.ptr:
            _lib.fn("oc_model_free")(self.ptr)
            self.ptr = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def to_bytes(self):
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        if _lib.fn("oc_save_memory")(self.ptr, ctypes.byref(data), ctypes.byref(size)) != 0:
            raise ConversionError(Diagnostic(stage="save", reason="save",
                                             message=_lib.error()))
        return _lib.take_bytes(data.value, size.value)

    def result(self):
        """The model as the kind it was given (a ModelProto for a path)."""
        data = self.to_bytes()
        if self.kind == "bytes":
            return data
        cls = self.proto_type or _model_proto()
        out = cls()
        out.ParseFromString(data)
        if self.kind == "path":
            _inline_external(out, os.path.dirname(os.path.abspath(self.path)))
        return out


def _kind_of(model):
    if isinstance(model, (bytes, bytearray, memoryview)):
        return "bytes", None
    if isinstance(model, (str, os.PathLike)):
        return "path", None
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):
        return "proto", type(model)
    raise usage(f"onnxconvert: a model is an onnx.ModelProto, bytes or a path, "
                f"not {type(model).__name__}")


def _model_proto():
    try:
        import onnx
    except ImportError:
        raise usage("onnxconvert: a model given as a path is returned as an "
                    "onnx.ModelProto, which needs the onnx package; pass bytes, or use "
                    "convert_file") from None
    return onnx.ModelProto


def _inline_external(proto, folder):
    """Reads the weights a model loaded from a file keeps in side files
    into the ModelProto, as onnx.load does: the bytes the library hands
    out only refer to them (location, offset, length beside the source),
    and a ModelProto saved elsewhere would lose them."""
    tensors = [t for t in _all_tensors(proto.graph) if t.data_location == 1]
    for f in proto.functions:
        for n in f.node:
            tensors += [a.t for a in n.attribute if a.HasField("t") and a.t.data_location == 1]
    if tensors:
        from onnx.external_data_helper import load_external_data_for_tensor
        for t in tensors:
            load_external_data_for_tensor(t, folder)
            t.ClearField("data_location")
            del t.external_data[:]


def _all_tensors(g):
    """Every TensorProto of graph g and its subgraphs: initializers and
    tensor attributes."""
    yield from g.initializer
    yield from (s.values for s in g.sparse_initializer)
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _all_tensors(sub)


def _path_arg(p):
    return os.fsencode(p)


def _load_diag(message):
    return Diagnostic(stage="load", reason="load", message=message)


# ---- reports ---------------------------------------------------------------

def _report_call(name, *args):
    """Calls an oc_*_report function; (rc, parsed JSON or None)."""
    out = ctypes.c_void_p()
    rc = _lib.fn(name)(*args, ctypes.byref(out))
    text = _lib.take_string(out.value)
    return rc, (json.loads(text) if text is not None else None)


def _diag_of_error(err):
    """A Diagnostic from a JSON report's "error" object."""
    step = err.get("step")
    return Diagnostic(stage=err.get("stage"), reason=err.get("reason"), node=err.get("node"),
                      op=err.get("op"), domain=err.get("domain"),
                      step=(step["from"], step["to"]) if step else None,
                      message=err.get("message") or "")


def _raise_for(report):
    d = _diag_of_error(report.get("error") or {"message": "failed"})
    if report.get("status") == "invalid" or d.stage in ("load", "check"):
        raise InvalidModelError(d)
    if d.stage in ("input-shape",):
        raise UsageError(d)
    raise ConversionError(d)


# ---- convert and optimize --------------------------------------------------

def _int_opt(name, v):
    if v is None:
        return []
    if isinstance(v, bool) or not isinstance(v, int):
        raise usage(f"onnxconvert: {name} takes an int, not {v!r}")
    return [f"--{name.replace('_', '-')}", str(v)]


def _names(name, v):
    if v is None:
        return None
    if isinstance(v, str):
        return v
    v = list(v)
    if not all(isinstance(s, str) for s in v):
        raise usage(f"onnxconvert: {name} takes names (str), not {v!r}")
    return ",".join(v)


def _shape_args(input_shapes):
    args = []
    for name, dims in (input_shapes or {}).items():
        dims = list(dims)
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            raise usage(f"onnxconvert: input_shapes[{name!r}] takes ints, not {dims!r}")
        args += ["--input-shape", f"{name}={','.join(str(d) for d in dims)}"]
    return args


def _tol_args(rtol=None, atol=None, inputs=None):
    """--auto's tolerance and inputs folder as words."""
    args = []
    for flag, v in (("--rtol", rtol), ("--atol", atol)):
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise usage(f"onnxconvert: {flag[2:]} takes a number, not {v!r}")
            args += [flag, repr(float(v))]
    if inputs is not None:
        args += ["--inputs", os.fspath(inputs)]
    return args


def _precision_args(dtype=None, keep_io_types=False, keep_float32=None,
                    keep_float32_nodes=None, dtype_strict=False, store=None,
                    auto=False, rtol=None, atol=None, inputs=None):
    """The precision options as the command line's words
    (docs/precision.md)."""
    args = []
    for flag, v in (("--dtype", dtype), ("--store", store)):
        if v is not None:
            if not isinstance(v, str):
                raise usage(f"onnxconvert: {flag[2:]} takes a type name, not {v!r}")
            args += [flag, v]
    for flag, name, v in (("--keep-float32", "keep_float32", keep_float32),
                          ("--keep-float32-node", "keep_float32_nodes", keep_float32_nodes)):
        n = _names(name, v)
        if n is not None:
            args += [flag, n]
    if keep_io_types:
        args.append("--keep-io-types")
    if dtype_strict:
        args.append("--dtype-strict")
    if auto:
        args.append("--auto")
    return args + _tol_args(rtol, atol, inputs)


PRECISION_KEYS = ("dtype", "keep_io_types", "keep_float32", "keep_float32_nodes",
                  "dtype_strict", "store", "auto", "rtol", "atol", "inputs")


def _common_args(passes, input_shapes, verify, max_memory, max_steps, timeout,
                 infer_shapes, keep_metadata, **precision):
    args = _precision_args(**{k: v for k, v in precision.items() if v is not None})
    p = _names("passes", passes)
    if p is not None:
        args += ["--passes", p]
    args += _shape_args(input_shapes)
    if verify:
        args.append("--verify")
    args += _int_opt("max_memory", max_memory) + _int_opt("max_steps", max_steps)
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise usage(f"onnxconvert: timeout takes seconds, not {timeout!r}")
        args += ["--timeout", repr(float(timeout))]
    if infer_shapes:
        args.append("--infer-shapes")
    if keep_metadata:
        args.append("--keep-metadata")
    return args


def _convert_args(opset, opset_ml, ir_version, optimize, expand, **common):
    args = _int_opt("opset", opset) + _int_opt("opset_ml", opset_ml)
    args += _int_opt("ir_version", ir_version)
    e = _names("expand", expand)
    if e is not None:
        args += ["--expand", e]
    if optimize:
        args.append("--optimize")
    return args + _common_args(**common)


def _run_command(m, command, args):
    """Runs `command` with `args` on the loaded model; the JSON report."""
    argv = (ctypes.c_char_p * max(len(args), 1))(*[a.encode() for a in args])
    rc, report = _report_call("oc_run_command", m.ptr, command.encode(), argv, len(args))
    if report is None:
        raise usage(_lib.error())
    if rc != 0:
        _raise_for(report)
    return report


def convert(model, opset=None, *, opset_ml=None, ir_version=None, optimize=False,
            passes=None, expand=None, input_shapes=None, keep_metadata=False, verify=False,
            max_memory=None, max_steps=None, timeout=None, infer_shapes=False, report=False,
            dtype=None, keep_io_types=False, keep_float32=None, keep_float32_nodes=None,
            dtype_strict=False, store=None, auto=False, rtol=None, atol=None,
            inputs=None):
    """Converts `model` to ai.onnx opset `opset` (and ai.onnx.ml opset
    `opset_ml`), as `onnx-convert convert --opset N` does: one opset step at
    a time in every graph and function, refusing with ConversionError (node,
    op, step, reason) what cannot be converted exactly.

    ir_version: write this IR version exactly (default: the lowest that holds
    the result). optimize / passes: run the optimizer after (passes: a list of
    pass names or "a,b,c"). expand: ops to rewrite with older ops. input_shapes:
    {input name: dims} fixed before converting. keep_metadata: keep fields the
    target IR lacks instead of dropping them. verify: evaluate before and after
    (on the test case's inputs for a model file in a test-case folder, else
    seeded random inputs) and raise ConversionError(stage="verify") on any
    difference; max_memory, max_steps, timeout bound those runs.

    dtype: "float16", "bfloat16" or "float32": the type float values become
    (docs/precision.md); keep_io_types: graph inputs and outputs keep their
    type; keep_float32 / keep_float32_nodes: ops / node names (a list or
    "a,b") that keep their type; dtype_strict: refuse weights outside the new
    type's range instead of clamping them; store="float16": weights stored
    as float16 behind a Cast to float32 (not with dtype). auto: with dtype
    "float16" or "bfloat16", keep in float32 the fewest nodes needed for the
    outputs to stay within rtol/atol (default 1e-2 and the type's atol) of
    the original's, evaluated on the inputs folder `inputs` (input_K.pb)
    or seeded random ones. The report's "precision" says what changed
    ("auto": the nodes kept, the error reached).

    Returns the converted model as the kind given (bytes or ModelProto; a
    ModelProto for a path), or (model, report dict) with report=True, the
    report being the object `--json` prints.
    """
    args = _convert_args(opset, opset_ml, ir_version, optimize, expand, passes=passes,
                         input_shapes=input_shapes, verify=verify, max_memory=max_memory,
                         max_steps=max_steps, timeout=timeout, infer_shapes=infer_shapes,
                         keep_metadata=keep_metadata, dtype=dtype, keep_io_types=keep_io_types,
                         keep_float32=keep_float32, keep_float32_nodes=keep_float32_nodes,
                         dtype_strict=dtype_strict, store=store, auto=auto, rtol=rtol,
                         atol=atol, inputs=inputs)
    return _apply(model, "convert", args, report)


def optimize(model, passes=None, *, input_shapes=None, verify=False, max_memory=None,
             max_steps=None, timeout=None, infer_shapes=False, report=False, dtype=None,
             keep_io_types=False, keep_float32=None, keep_float32_nodes=None,
             dtype_strict=False, store=None, auto=False, rtol=None, atol=None,
             inputs=None):
    """Optimizes `model` as `onnx-convert optimize` does: folds constants,
    removes what computes nothing and fuses patterns, in every graph and
    function. passes: a list of pass names or "a,b,c" (default: the default
    pipeline). The other arguments are those of convert(). Returns the kind
    given, or (model, report) with report=True."""
    args = _common_args(passes=passes, input_shapes=input_shapes, verify=verify,
                        max_memory=max_memory, max_steps=max_steps, timeout=timeout,
                        infer_shapes=infer_shapes, keep_metadata=False, dtype=dtype,
                        keep_io_types=keep_io_types, keep_float32=keep_float32,
                        keep_float32_nodes=keep_float32_nodes, dtype_strict=dtype_strict,
                        store=store, auto=auto, rtol=rtol, atol=atol, inputs=inputs)
    return _apply(model, "optimize", args, report)


def _apply(model, command, args, want_report):
    with _Model(model) as m:
        rep = _run_command(m, command, args)
        out = m.result()
    return (out, rep) if want_report else out


def convert_file(src, dst, opset=None, **options):
    """Converts the model file `src` and writes `dst`, as `onnx-convert
    convert SRC -o DST` does: the weights never pass through Python, and
    tensors stored in external files are written again beside `dst`. Takes
    convert()'s options; command="optimize" optimizes instead. Returns the
    report dict (the object `--json` prints); raises as convert() does, and
    then writes nothing."""
    command = options.pop("command", "convert")
    if command not in ("convert", "optimize"):
        raise usage(f"onnxconvert: command is convert or optimize, not {command!r}")
    options.pop("report", None)
    if command == "convert":
        args = _convert_args(opset, options.pop("opset_ml", None),
                             options.pop("ir_version", None), options.pop("optimize", False),
                             options.pop("expand", None), **_common_defaults(options))
    else:
        if opset is not None:
            raise usage("onnxconvert: optimize takes no opset")
        args = _common_args(**_common_defaults(options))
    with _Model(os.fspath(src)) as m:
        rep = _run_command(m, command, args)
        if _lib.fn("oc_save_file")(m.ptr, _path_arg(os.fspath(dst))) != 0:
            raise ConversionError(Diagnostic(stage="save", reason="save",
                                             message=_lib.error()))
    return rep


def _common_defaults(options):
    keys = ("passes", "input_shapes", "verify", "max_memory", "max_steps", "timeout",
            "infer_shapes", "keep_metadata") + PRECISION_KEYS
    unknown = set(options) - set(keys)
    if unknown:
        raise usage(f"onnxconvert: unknown option {sorted(unknown)[0]!r}")
    d = dict.fromkeys(keys)
    d.update(options)
    return d


# ---- check, info, targets --------------------------------------------------

def check(model):
    """Validates `model` with the rules of `onnx-convert check --all`:
    every broken rule as a Diagnostic (stage "check", rule and reason the
    rule's name, severity "error"); [] when the model is valid. A model that
    cannot be read raises InvalidModelError."""
    with _Model(model) as m:
        rc, rep = _report_call("oc_check_report", m.ptr)
    if rep is None:
        raise InvalidModelError(_load_diag(_lib.error()))
    if rep.get("status") == "error":
        _raise_for(rep)
    return [Diagnostic(stage="check", reason=e["rule"], rule=e["rule"], severity="error",
                       message=e["message"]) for e in rep.get("errors") or []]


def info(model):
    """What `onnx-convert info --json` prints for `model`, as a dict."""
    with _Model(model) as m:
        rc, rep = _report_call("oc_info_report", m.ptr)
    if rep is None:
        raise InvalidModelError(_load_diag(_lib.error()))
    return rep


def targets(model, domain="ai.onnx"):
    """For every opset of `domain` ("ai.onnx" or "ai.onnx.ml"), whether
    convert() would convert `model` to it: {opset: None} when it would, else
    {opset: Diagnostic} with convert()'s refusal. Nothing is written."""
    with _Model(model) as m:
        rc, rep = _report_call("oc_targets_report", m.ptr)
    if rep is None:
        raise InvalidModelError(_load_diag(_lib.error()))
    if rep.get("status") not in (None, "ok") and "error" in rep:
        _raise_for(rep)
    return _targets_of(rep, domain)


def _targets_of(rep, domain):
    rows = (rep.get("targets") or {}).get(domain)
    if rows is None:
        raise usage(f"onnxconvert: the model does not import {domain}")
    return {row["opset"]: (None if row.get("status") == "ok" else
                           _diag_of_error(row.get("error") or {}))
            for row in rows}
