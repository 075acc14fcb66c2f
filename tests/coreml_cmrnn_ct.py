#!/usr/bin/python3
"""Apple's loader (../shared/tools/coremltools/ct_check.py) on packages
holding each MIL op the rnn lowering (gru, rnn, lstm with peepholes,
reverse, split, concat) and the elementwise compositions (floor_div, mod,
not_equal, round's and the hyperbolic ones' ops, celu's elu, shrink's
selects) emit. The ONNX models are built here with onnx.helper, exported by
`onnx-convert convert IN.onnx -o OUT.mlpackage` (convert to opset 17, lower, write the package), and
each package must load: every op type-inferred again for its opset. The
nodes are named: consts of an unnamed node are named const_N, which
coremltools' loader also calls the immediates it turns into consts (a
clash the driver's naming, not this lowering, has to settle).

Usage: /usr/bin/python3 tests/coreml_cmrnn_ct.py build/onnx-convert
Prints one line per model and "coreml_cmrnn_ct: N passed, N failed";
"coreml_cmrnn_ct: skipped (...)" without the judge or python3-onnx.
"""
import os
import subprocess
import sys
import tempfile

from clitest import CT_CHECK as JUDGE, CT_SETUP as SETUP  # noqa: E402


def skip(why):
    print("coreml_cmrnn_ct: skipped (%s)" % why)
    sys.exit(0)


try:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper, save
except ImportError:
    skip("no python3-onnx")

if not os.access(JUDGE, os.X_OK) or subprocess.call(
        ["sh", SETUP, "--no-selftest"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL) != 0:
    skip("no coremltools judge")

T, B, I, H = 3, 2, 4, 5
rng = np.random.default_rng(5)


def weights(name, *dims):
    return numpy_helper.from_array(rng.uniform(-0.5, 0.5, dims).astype(np.float32), name)


def rnn(op, direction, layout=0, peep=False, acts=None, lbr=0):
    g = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    d = 2 if direction == "bidirectional" else 1
    xd = [B, T, I] if layout else [T, B, I]
    hd = [B, d, H] if layout else [d, B, H]
    inits = [weights("W", d, g * H, I), weights("R", d, g * H, H),
             weights("B", d, 2 * g * H)]
    ins = ["X", "W", "R", "B", "", "H0"]
    graph_in = [helper.make_tensor_value_info("X", TensorProto.FLOAT, xd),
                helper.make_tensor_value_info("H0", TensorProto.FLOAT, hd)]
    if peep:
        inits.append(weights("P", d, 3 * H))
        ins += ["", "P"]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    attrs = {"hidden_size": H, "direction": direction}
    if layout:
        attrs["layout"] = 1
    if acts:
        attrs["activations"] = acts
    if lbr:
        attrs["linear_before_reset"] = 1
    node = helper.make_node(op, ins, outs, name=op.lower() + "0", **attrs)
    graph = helper.make_graph([node], op.lower(), graph_in,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in outs], inits)
    return graph


def unary(op, elem=TensorProto.FLOAT, second=None, **attrs):
    """y = op(x[, c]) over x [2, 3]; c a constant of x's type; a bool y
    cast to float."""
    ins = ["x"]
    inits = []
    out_elem = TensorProto.BOOL if op in ("IsInf", "IsNaN") else elem
    if second is not None:
        dt = np.float32 if elem == TensorProto.FLOAT else np.int32
        inits.append(numpy_helper.from_array(np.array(second, dtype=dt), "c"))
        ins.append("c")
    nodes = [helper.make_node(op, ins, ["y"], name=op.lower() + "0", **attrs)]
    if out_elem == TensorProto.BOOL:
        # a Core ML model's outputs cannot be bool: the test casts
        nodes[0].output[0] = "b"
        nodes.append(helper.make_node("Cast", ["b"], ["y"], name="cast0", to=TensorProto.FLOAT))
        out_elem = TensorProto.FLOAT
    return helper.make_graph(nodes, op.lower(),
                             [helper.make_tensor_value_info("x", elem, [2, 3])],
                             [helper.make_tensor_value_info("y", out_elem, [2, 3])], inits)


MODELS = {
    "gru_forward": rnn("GRU", "forward"),
    "gru_bidirectional_layout1": rnn("GRU", "bidirectional", layout=1,
                                     acts=["Tanh", "Sigmoid", "Sigmoid", "Tanh"]),
    "gru_bidirectional_linear_before_reset": rnn("GRU", "bidirectional", lbr=1),
    "rnn_reverse": rnn("RNN", "reverse"),
    "rnn_bidirectional": rnn("RNN", "bidirectional"),
    "lstm_bidirectional_peepholes": rnn("LSTM", "bidirectional", peep=True),
    "lstm_reverse": rnn("LSTM", "reverse"),
    "lstm_layout1_activations": rnn("LSTM", "forward", layout=1,
                                    acts=["Tanh", "Sigmoid", "Tanh"]),
    "div_int32": unary("Div", TensorProto.INT32, second=[3, -2, 5]),
    "mod_int32_fmod0": unary("Mod", TensorProto.INT32, second=[3, -2, 5]),
    "mod_int32_fmod1": unary("Mod", TensorProto.INT32, second=[3, -2, 5], fmod=1),
    "mod_float_fmod1": unary("Mod", second=[1.5, -2.0, 0.3], fmod=1),
    "round": unary("Round"),
    "acosh": unary("Acosh"),
    "asinh": unary("Asinh"),
    "isinf": unary("IsInf"),
    "isinf_positive": unary("IsInf", detect_negative=0),
    "isinf_none": unary("IsInf", detect_negative=0, detect_positive=0),
    "isnan": unary("IsNaN"),
    "celu": unary("Celu", alpha=2.0),
    "shrink": unary("Shrink", lambd=1.0, bias=0.5),
}


def main():
    tool = sys.argv[1]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, graph in MODELS.items():
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
            model.ir_version = 8
            src = os.path.join(tmp, name + ".onnx")
            pkg = os.path.join(tmp, name + ".mlpackage")
            save(model, src)
            r = subprocess.run([tool, "convert", src, "-o", pkg], capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL %s: export: %s" % (name, (r.stderr or r.stdout).strip()))
                failed += 1
                continue
            j = subprocess.run([JUDGE, pkg], capture_output=True, text=True)
            line = (j.stdout or j.stderr).strip().splitlines()
            line = line[-1] if line else ""
            if j.returncode == 0:
                print("  %s: %s; %s" % (name, r.stdout.strip(), line))
                passed += 1
            else:
                print("FAIL %s: %s" % (name, line))
                failed += 1
    print("coreml_cmrnn_ct: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


sys.exit(main())
