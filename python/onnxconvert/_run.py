"""run() and Session: the library's reference evaluator from Python.

Values cross into the library as the serialized ONNX messages the backend
test cases use (oc_evaluate_pb), so every kind the evaluator has works:
tensors of every element type, strings, sequences, maps and optionals (see
_values for how each is given and returned).
"""
import ctypes
import re
import threading

from . import _lib, _values
from ._errors import (ConversionError, Diagnostic, InvalidModelError, UsageError,
                      usage)


class NodeArg:
    """A graph input or output, as onnxruntime's NodeArg: name, type (a
    type string such as "tensor(float)" or "seq(tensor(int64))") and shape
    (a list of ints, dim names (str) and None for unknown dims, or None
    when the rank is unknown or the value is not a tensor)."""

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _limit(name, v, kind=int):
    if v is None:
        return kind(0)
    ok = isinstance(v, (int, float) if kind is float else int) and not isinstance(v, bool)
    if not ok or v < 0 or v != v:
        raise usage(f"onnxconvert: {name} takes a non-negative "
                    f"{'number of seconds' if kind is float else 'int'}, not {v!r}")
    return kind(v)


_NODE = re.compile(r"node '([^']*)' \(([A-Za-z0-9_.]+?)-(\d+)\)")
_PREFIX = "oc_evaluate_pb: "


def _failure(message):
    """The exception for a failed oc_evaluate_pb: UsageError for a bad
    input, InvalidModelError when the checker refuses the model,
    ConversionError(stage="run") for a run that failed (naming the node)."""
    body = message[len(_PREFIX):] if message.startswith(_PREFIX) else message
    if body.startswith(("input '", "inputs[", "inputs is")):
        return UsageError(Diagnostic(stage="run", reason="input", message=message))
    node = _NODE.search(body)
    if message.startswith(_PREFIX) and not body.startswith("output '"):
        rule = body.split(":", 1)[0] if re.match(r"^[a-z0-9-]+: ", body) else "check"
        return InvalidModelError(Diagnostic(stage="check", reason=rule, rule=rule,
                                            node=node.group(1) if node else None,
                                            op=node.group(2) if node else None,
                                            message=message))
    reason = "limit" if re.search(r"memory budget|--max-steps|max_steps|timeout|"
                                  r"time limit", body) else "run"
    return ConversionError(Diagnostic(stage="run", reason=reason,
                                      node=node.group(1) if node else None,
                                      op=node.group(2) if node else None,
                                      message=message))


class Session:
    """A model loaded once into the library, to run many times, in the
    shape of onnxruntime.InferenceSession and onnx.reference's
    ReferenceEvaluator: Session(model).run(None, {"x": array}).

    model: an onnx.ModelProto, the bytes of a .onnx file, or a path. seed:
    the seed of random ops (default 0; the same seed gives the same
    outputs); max_memory (bytes alive at once), max_steps (node runs) and
    timeout (seconds) bound each run, as `onnx-convert run` does (None: the
    defaults).

    Threads: a Session holds one model of the library, which must never be
    used by two threads at once; a lock makes concurrent run() calls on one
    Session wait for each other (the GIL is released while a run computes,
    so runs of different Sessions proceed in parallel). Use one Session per
    thread for parallel runs of one model. close() (or `with`) frees the
    model; so does garbage collection.
    """

    def __init__(self, model, *, seed=None, max_memory=None, max_steps=None,
                 timeout=None):
        from . import _Model, _report_call   # lazily: the package imports this module
        self._lock = threading.Lock()
        self._m = _Model(model)
        try:
            rc, rep = _report_call("oc_info_report", self._m.ptr)
            if rep is None or "graph" not in rep or rep["graph"] is None:
                raise InvalidModelError(Diagnostic(stage="load", reason="load",
                                                   message=_lib.error() or
                                                   "the model has no graph"))
            g = rep["graph"]
            self._inputs = [NodeArg(v["name"], v["type"], v.get("shape")) for v in g["inputs"]]
            self._outputs = [NodeArg(v["name"], v["type"], v.get("shape"))
                             for v in g["outputs"]]
            self._in_types = {a.name: _values.parse_type(a.type) for a in self._inputs}
            self._out_types = [_values.parse_type(a.type) for a in self._outputs]
            self._set_limits(seed, max_memory, max_steps, timeout)
        except BaseException:
            self._m.close()
            raise

    def _set_limits(self, seed, max_memory, max_steps, timeout):
        ptr = self._m.ptr
        if _lib.fn("oc_set_eval_limits")(ptr, _limit("max_memory", max_memory),
                                         _limit("max_steps", max_steps),
                                         _limit("timeout", timeout, float)) != 0:
            raise usage(_lib.error())
        if _lib.fn("oc_set_eval_seed")(ptr, _limit("seed", seed)) != 0:
            raise usage(_lib.error())

    def get_inputs(self):
        """The graph's inputs (NodeArg: name, type, shape), in order."""
        return list(self._inputs)

    def get_outputs(self):
        """The graph's outputs (NodeArg: name, type, shape), in order."""
        return list(self._outputs)

    def close(self):
        """Frees the library's model; the Session cannot run after."""
        with self._lock:
            self._m.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _encode(self, feeds):
        if not isinstance(feeds, dict):
            raise usage(f"onnxconvert: feeds are a dict {{input name: value}}, not "
                        f"{type(feeds).__name__}")
        bufs, keep = (_lib.Buffer * max(len(feeds), 1))(), []
        for i, (name, value) in enumerate(feeds.items()):
            if not isinstance(name, str):
                raise usage(f"onnxconvert: input names are str, not {name!r}")
            if name not in self._in_types:
                raise usage(f"onnxconvert: input '{name}' is not an input of the model "
                            f"(its inputs: {', '.join(a.name for a in self._inputs)})")
            data = _values.encode(value, self._in_types[name], name)
            keep.append(data)
            bufs[i].name = name.encode("utf-8")
            bufs[i].data = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
            bufs[i].size = len(data)
        return bufs, keep

    def _decode(self, out, n):
        values = []
        for i in range(n):
            t = self._out_types[i] if i < len(self._out_types) else None
            data = ctypes.string_at(out[i].data, out[i].size) if out[i].size else b""
            try:
                values.append(_values.decode(data, t))
            except (ValueError, IndexError) as e:
                raise ConversionError(Diagnostic(
                    stage="run", reason="output",
                    message=f"output '{self._outputs[i].name}': cannot read the "
                            f"library's value: {e}")) from None
        return values

    def run(self, output_names, feeds):
        """Runs the model on `feeds` ({input name: value}) and returns the
        values of `output_names` (None: every graph output, in order) as a
        list. Values are numpy arrays, lists (sequences), dicts (maps) and
        None (an empty optional): see the package's documentation.
        Raises UsageError for a bad feed (a missing, unknown or repeated
        input, a value of the wrong type: a float64 array for a float input
        is refused, not cast), InvalidModelError when the checker refuses
        the model, ConversionError(stage="run") when the run fails (a
        kernel's refusal, a limit), naming the node and op."""
        names = [a.name for a in self._outputs]
        if output_names is not None:
            if isinstance(output_names, str):
                raise usage("onnxconvert: output_names is a list of names (or None)")
            output_names = list(output_names)
            for o in output_names:
                if o not in names:
                    raise usage(f"onnxconvert: '{o}' is not an output of the model "
                                f"(its outputs: {', '.join(names)})")
        bufs, keep = self._encode(feeds)
        out = ctypes.POINTER(_lib.Buffer)()
        n = ctypes.c_size_t()
        with self._lock:
            if not self._m.ptr:
                raise usage("onnxconvert: this Session is closed")
            rc = _lib.fn("oc_evaluate_pb")(self._m.ptr, bufs, len(feeds), ctypes.byref(out),
                                           ctypes.byref(n))
            err = _lib.error() if rc != 0 else None
        del keep
        if rc != 0:
            raise _failure(err)
        try:
            values = self._decode(out, n.value)
        finally:
            _lib.fn("oc_buffers_free")(out, n.value)
        if output_names is None:
            return values
        return [values[names.index(o)] for o in output_names]


def run(model, inputs, *, seed=None, max_memory=None, max_steps=None, timeout=None):
    """Runs `model` (an onnx.ModelProto, bytes or a path) once with the
    reference evaluator, as `onnx-convert run` does, on `inputs` ({input
    name: value}; every graph input without an initializer, each once).
    Returns {output name: value} for every graph output. seed, max_memory,
    max_steps and timeout as Session's. Values and errors as Session.run's.
    Each call loads the model into the library anew (and frees it); use a
    Session to run one model many times."""
    with Session(model, seed=seed, max_memory=max_memory, max_steps=max_steps,
                 timeout=timeout) as s:
        values = s.run(None, inputs)
        return {a.name: v for a, v in zip(s.get_outputs(), values)}
