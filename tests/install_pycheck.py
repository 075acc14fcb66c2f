"""install_pycheck.py - the installed Python package works (run by
tests/install.sh with the Python of the installation being checked: the
system's with PYTHONPATH after `make install`, or a virtual environment's
after `pip install ./python`).

Usage: PYTHON install_pycheck.py PKG_ROOT LIBRARY TOOL VERSION WORKDIR [MODEL]

PKG_ROOT: the folder onnxconvert must be imported from; LIBRARY: the path
find_library() must give; TOOL: the onnx-convert installed with it (its
output is the reference for the same conversion); VERSION: the header's;
MODEL: a model at ai.onnx opset 13 (default: one built here with
onnx.helper). Prints one line per check, "PASS what" or "FAIL what: why",
and exits 0; tests/install.sh counts the lines.
"""
import os
import subprocess
import sys

TARGET = 12      # one step down from the model's 13: every converter handles it


def say(ok, what, why=""):
    print(f"PASS {what}" if ok else f"FAIL {what}: {why}", flush=True)
    return ok


def built_model(workdir):
    """A small opset-13 model whose ops change at 12 and 13 (Clip's min and
    max as inputs, ReduceSum's axes as an input from 13)."""
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Clip", ["r", "lo", "hi"], ["c"], name="clip"),
             helper.make_node("ReduceSum", ["c", "axes"], ["y"], name="sum", keepdims=0)]
    inits = [helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
             helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0]),
             helper.make_tensor("axes", TensorProto.INT64, [1], [1])]
    graph = helper.make_graph(nodes, "g", [x], [y], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    path = os.path.join(workdir, "built.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def opset_of(model):
    return {o.domain or "ai.onnx": o.version for o in model.opset_import}.get("ai.onnx")


def main():
    pkg_root, library, tool, version, workdir = sys.argv[1:6]
    model_path = sys.argv[6] if len(sys.argv) > 6 else None
    os.environ.pop("ONNXCONVERT_LIBRARY", None)
    try:
        import onnx
        import onnxconvert
        from onnxconvert._find import find_library
    except Exception as e:   # noqa: BLE001 (what failed is the finding)
        say(False, "import onnxconvert", repr(e))
        return
    say(True, "import onnxconvert")
    where = os.path.realpath(os.path.dirname(onnxconvert.__file__))
    say(where == os.path.realpath(os.path.join(pkg_root, "onnxconvert")),
        f"imported from {pkg_root}", where)
    found = find_library()
    say(os.path.realpath(found) == os.path.realpath(library), f"library found at {library}",
        found)
    say(onnxconvert.__version__ == version, f"package version {version}",
        onnxconvert.__version__)
    try:
        say(onnxconvert.library_version() == version, f"library version {version}",
            onnxconvert.library_version())
    except Exception as e:   # noqa: BLE001
        say(False, f"library version {version}", repr(e))
    if model_path is None:
        model_path = built_model(workdir)
    convert_checks(onnx, onnxconvert, model_path, tool, workdir)


def convert_checks(onnx, onnxconvert, model_path, tool, workdir):
    """convert() of a ModelProto and of bytes, against the installed tool's
    conversion of the same file."""
    model = onnx.load(model_path)
    if not say(opset_of(model) == 13, f"{model_path} is at opset 13", opset_of(model)):
        return
    try:
        out = onnxconvert.convert(model, TARGET)
        data = onnxconvert.convert(model.SerializeToString(), TARGET)
    except Exception as e:   # noqa: BLE001
        say(False, f"convert to {TARGET}", repr(e))
        return
    say(isinstance(out, onnx.ModelProto) and opset_of(out) == TARGET,
        f"convert(ModelProto, {TARGET}) gives a ModelProto at opset {TARGET}",
        f"{type(out).__name__} at {opset_of(out) if hasattr(out, 'opset_import') else '-'}")
    try:
        onnx.checker.check_model(out)
        say(True, "onnx.checker accepts the result")
    except Exception as e:   # noqa: BLE001
        say(False, "onnx.checker accepts the result", str(e).splitlines()[0])
    ref = os.path.join(workdir, "tool.onnx")
    rc = subprocess.run([tool, "convert", model_path, "--opset", str(TARGET), "-o", ref],
                        capture_output=True, text=True)
    if say(rc.returncode == 0, "the installed tool converts the model", rc.stderr.strip()):
        with open(ref, "rb") as f:
            want = f.read()
        say(isinstance(data, bytes) and data == want,
            "convert(bytes) gives the tool's bytes", f"{len(data)} bytes against {len(want)}")


if __name__ == "__main__":
    main()
