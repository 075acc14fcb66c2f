#!/usr/bin/python3
"""Core ML export of models whose inputs have dynamic dims (issue 33): a
batch, a sequence length, an image's height and width known only at run
time.

Each model below (PyTorch exports with dynamic_axes, or onnx.helper
graphs with symbolic dims) is exported by `onnx-convert convert M.onnx -o
M.mlpackage --verify`, which must succeed (the import of the package
evaluated equal to the original on random inputs, at the open-dim size it
names). Then:
- the package's description must declare each dynamic dim flexible
  (`info --json`: a range from 1 to unbounded) and the function input
  unknown there;
- Apple's loader (../shared/tools/coremltools/ct_check.py) must accept
  it, every op type-inferred again, and it must hold the MIL ops named;
- the import (`convert M.mlpackage -o I.onnx`) run by our evaluator at a
  second input size, other than the one --verify used, must give what
  PyTorch (or numpy) computes for that size.
Models that MIL cannot express with dynamic dims must be refused with
the reason named.

Usage: /usr/bin/python3 tests/coreml_cmdyn_ct.py build/onnx-convert
Prints "coreml_cmdyn_ct: N passed, N failed[, N skipped]".
"""
import json
import os
import subprocess
import sys
import tempfile

from clitest import CT_CHECK, check, have_ct, report, run, skip

try:
    import numpy as np
    import torch
    import onnx
    from onnx import TensorProto, helper, numpy_helper, save
except ImportError as e:
    print("coreml_cmdyn_ct: 0 passed, 0 failed, 1 skipped (%s)" % e)
    sys.exit(0)

TOOL = sys.argv[1]
torch.manual_seed(3)
rng = np.random.default_rng(7)
F = TensorProto.FLOAT


def export(module, args, names, dyn, path):
    module.eval()
    torch.onnx.export(module, args, path, input_names=names, output_names=["y"],
                      dynamic_axes=dyn, opset_version=17)


class Lstm(torch.nn.Module):
    """batch-first LSTM and a Linear over [batch, seq, 4]"""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(4, 5, batch_first=True)
        self.fc = torch.nn.Linear(5, 2)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class BiLstm(torch.nn.Module):
    """a bidirectional LSTM over [seq, batch, 3], both unknown"""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(3, 4, bidirectional=True)

    def forward(self, x):
        return self.rnn(x)[0]


class ConvNet(torch.nn.Module):
    """a conv net over [1, 3, H, W]: a strided window larger than 2"""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.c2 = torch.nn.Conv2d(4, 2, 3, stride=2)

    def forward(self, x):
        return torch.relu(self.c2(torch.relu(self.bn(self.c1(x)))))


class SliceReshape(torch.nn.Module):
    """Slice, Reshape from Shape, Flatten and Concat over a dynamic batch"""

    def forward(self, x):
        a = x[:, 1:3].reshape(x.shape[0], -1)
        return torch.cat([a, torch.flatten(x, 1), torch.flip(x[:, -1], [1])], 1)


class Ocr(torch.nn.Module):
    """an OCR recogniser's head: width dynamic; conv, mean over H,
    permute, Slice of the last column, LayerNorm, Linear, softmax"""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.ln = torch.nn.LayerNorm(4)
        self.fc = torch.nn.Linear(4, 6)

    def forward(self, x):
        y = self.conv(x).mean(2).permute(0, 2, 1)[:, :-1]
        return self.fc(self.ln(y)).softmax(-1)


def onnx_model(path, nodes, inputs, inits=()):
    ins = [helper.make_tensor_value_info(n, F, d) for n, d in inputs]
    outs = [helper.make_tensor_value_info("y", F, None)]
    g = helper.make_graph(nodes, "g", ins, outs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, path)


def weights(name, *dims):
    return numpy_helper.from_array(rng.uniform(-0.5, 0.5, dims).astype(np.float32), name)


def ints(name, v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


def rnn(path, op, direction, lbr=0):
    """ONNX RNN/GRU without initial state over X [T, B, 3], T and B
    symbolic; Y [T, D, B, H] as the output"""
    g, h = {"GRU": 3, "RNN": 1}[op], 4
    d = 2 if direction == "bidirectional" else 1
    attrs = {"hidden_size": h, "direction": direction}
    if lbr:
        attrs["linear_before_reset"] = 1
    node = helper.make_node(op, ["X", "W", "R", "B"], ["y"], **attrs)
    onnx_model(path, [node], [("X", ["T", "N", 3])],
               [weights("W", d, g * h, 3), weights("R", d, g * h, h),
                weights("B", d, 2 * g * h)])


def np_rnn(x, w, r, b, direction, act=np.tanh):
    """numpy's ONNX RNN (one gate), Y [T, D, B, H]"""
    t, d = x.shape[0], w.shape[0]
    y = np.zeros((t, d, x.shape[1], w.shape[1]), np.float32)
    for k in range(d):
        back = direction == "reverse" or k == 1
        h = np.zeros((x.shape[1], w.shape[1]), np.float32)
        for s in (range(t - 1, -1, -1) if back else range(t)):
            h = act(x[s] @ w[k].T + h @ r[k].T + b[k][:w.shape[1]] + b[k][w.shape[1]:])
            y[s, k] = h
    return y


def case_dir(tmp, name):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    return d


def run_import(onnx_path, x, tmp):
    """our evaluator on the import at input x: the output y"""
    d = os.path.join(tmp, "in")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.astype(np.float32)).SerializeToString())
    out = os.path.join(tmp, "out")
    r = run(TOOL, "run", onnx_path, "--inputs", d, "-o", out)
    if r.returncode != 0:
        return None, r.stderr.strip()
    t = TensorProto()
    with open(os.path.join(out, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t), ""


def judge(name, pkg, ops):
    j = subprocess.run([CT_CHECK, pkg], capture_output=True, text=True)
    line = (j.stdout or j.stderr).strip().splitlines()
    line = line[-1] if line else ""
    check(j.returncode == 0, "%s: Apple's loader refuses the package: %s" % (name, line))
    for op in ops:
        check(" %s:" % op in line or "(%s:" % op in line,
              "%s: no MIL op %s in %s" % (name, op, line))
    return line


def one(tmp, name, src, ops, second, want_dim=2):
    """export src with --verify, judge it, run its import at `second`
    (input, expected output)"""
    d = case_dir(tmp, name)
    pkg = os.path.join(d, name + ".mlpackage")
    r = run(TOOL, "convert", src, "-o", pkg, "--verify")
    ok = r.returncode == 0 and "verified: outputs equal" in r.stdout
    check(ok, "%s: export --verify: %s" % (name, (r.stderr or r.stdout).strip()))
    if not ok:
        return
    check("(open dims at %d)" % want_dim in r.stdout,
          "%s: --verify does not say it used open dims of %d: %s" % (name, want_dim, r.stdout))
    if want_dim != 2:
        # the JSON report names the size too
        j = run(TOOL, "convert", src, "-o", pkg + ".2.mlpackage", "--verify", "--json")
        rep = json.loads(j.stdout) if j.returncode == 0 else {}
        check((rep.get("verification") or {}).get("open_dims") == want_dim,
              "%s: JSON verification: %s" % (name, rep.get("verification")))
    # the dynamic dims are flexible in the description: a range 1..*
    info = run(TOOL, "info", pkg)
    check(info.returncode == 0 and "1..*" in info.stdout,
          "%s: no flexible dim in the description: %s" % (name, info.stdout))
    line = judge(name, pkg, ops)
    print("  %s: %s" % (name, line))
    back = os.path.join(d, "import.onnx")
    r = run(TOOL, "convert", pkg, "-o", back)
    check(r.returncode == 0, "%s: import: %s" % (name, r.stderr.strip()))
    if r.returncode != 0:
        return
    x, want = second
    got, why = run_import(back, x, d)
    check(got is not None and got.shape == want.shape and
          np.allclose(got, want, rtol=1e-4, atol=1e-5),
          "%s: the import at input %s: %s" % (name, list(x.shape),
                                              why or "%s vs %s" % (
                                                  None if got is None else got.shape,
                                                  want.shape)))


def refused(tmp, name, src, reason):
    pkg = os.path.join(case_dir(tmp, name), name + ".mlpackage")
    r = run(TOOL, "convert", src, "-o", pkg)
    check(r.returncode == 1 and reason in r.stderr and not os.path.exists(pkg),
          "%s: not refused with '%s': %d %s" % (name, reason, r.returncode, r.stderr.strip()))


def torch_case(tmp, name, module, x0, names_dyn, x1, ops, want_dim=2):
    src = os.path.join(case_dir(tmp, name), name + ".onnx")
    export(module, (torch.from_numpy(x0),), ["x"], {"x": names_dyn}, src)
    with torch.no_grad():
        want = module(torch.from_numpy(x1)).numpy()
    one(tmp, name, src, ops, (x1, want), want_dim)


def randn(*dims):
    return rng.standard_normal(dims).astype(np.float32)


def main():
    if not have_ct():
        skip("no coremltools judge (Apple's loader)")
        return report("coreml_cmdyn_ct")
    with tempfile.TemporaryDirectory() as tmp:
        torch_case(tmp, "lstm_batch_seq", Lstm(), randn(2, 3, 4), {0: "batch", 1: "seq"},
                   randn(3, 7, 4), ["lstm", "fill"])
        # --input-shape still fixes the dims: no flexible range left
        d = case_dir(tmp, "lstm_batch_seq")
        pkg = os.path.join(d, "fixed.mlpackage")
        r = run(TOOL, "convert", os.path.join(d, "lstm_batch_seq.onnx"), "-o", pkg,
                "--input-shape", "x=2,5,4")
        info = run(TOOL, "info", pkg)
        check(r.returncode == 0 and "x fp32 [2,5,4]" in info.stdout and
              "1..*" not in info.stdout,
              "--input-shape x=2,5,4: %s %s" % (r.stderr.strip(), info.stdout))
        torch_case(tmp, "bilstm_seq_batch", BiLstm(), randn(3, 2, 3), {0: "seq", 1: "batch"},
                   randn(5, 3, 3), ["lstm", "expand_dims"])
        torch_case(tmp, "convnet_hw", ConvNet(), randn(1, 3, 8, 10), {2: "H", 3: "W"},
                   randn(1, 3, 13, 9), ["conv"], want_dim=8)
        torch_case(tmp, "slice_reshape_flatten", SliceReshape(), randn(2, 4, 5), {0: "batch"},
                   randn(5, 4, 5), ["slice_by_index", "reshape"])
        torch_case(tmp, "ocr_width", Ocr(), randn(1, 1, 8, 12), {0: "N", 3: "W"},
                   randn(2, 1, 8, 17), ["slice_by_index", "layer_norm"])

        # ONNX graphs: RNN/GRU over [T, N, 3], T and N symbolic
        for op, direction in (("GRU", "bidirectional"), ("RNN", "reverse")):
            name = "%s_%s" % (op.lower(), direction)
            src = os.path.join(case_dir(tmp, name), name + ".onnx")
            rnn(src, op, direction)
            m = onnx.load(src)
            w, r_, b = (numpy_helper.to_array(t) for t in m.graph.initializer)
            x1 = randn(6, 3, 3)
            if op == "RNN":
                want = np_rnn(x1, w, r_, b, direction)
                one(tmp, name, src, ["rnn", "fill"], (x1, want))
            else:
                # no numpy GRU here: the import run at the second size is
                # compared with the original run by our evaluator
                d = case_dir(tmp, name)
                got, why = run_import(src, x1, os.path.join(d, "orig"))
                check(got is not None, "%s: the original does not run: %s" % (name, why))
                if got is not None:
                    one(tmp, name, src, ["gru", "concat"], (x1, got))

        # Slice with bounds computed from Shape on an axis of unknown size,
        # Expand to a shape computed at run time, Shape with start/end
        name = "slice_half_expand_shape"
        src = os.path.join(case_dir(tmp, name), name + ".onnx")
        n = helper.make_node
        onnx_model(src, [
            n("Shape", ["x"], ["s"]), n("Gather", ["s", "i1"], ["t"]),
            n("Unsqueeze", ["t", "a0"], ["tu"]), n("Div", ["tu", "two"], ["half"]),
            n("Slice", ["x", "zero", "half", "a1"], ["sl"]),
            n("Shape", ["sl"], ["s2"], start=0, end=-1),
            n("Concat", ["s2", "four"], ["s3"], axis=0),
            n("Expand", ["b", "s3"], ["e"]), n("Add", ["sl", "e"], ["y"])],
            [("x", ["N", "T", 4])],
            [ints("i1", 1), ints("a0", [0]), ints("a1", [1]), ints("two", [2]),
             ints("zero", [0]), ints("four", [4]),
             numpy_helper.from_array(np.arange(4, dtype=np.float32), "b")])
        x1 = randn(3, 9, 4)
        one(tmp, name, src, ["shape", "fill", "slice_by_index"],
            (x1, x1[:, :4] + np.arange(4, dtype=np.float32)))

        # auto_pad SAME_UPPER over H, W known only at run time: MIL's
        # pad_type "same"; the import at a second size against the original
        name = "conv_pool_same_upper"
        src = os.path.join(case_dir(tmp, name), name + ".onnx")
        onnx_model(src, [
            n("Conv", ["x", "w"], ["c"], auto_pad="SAME_UPPER", strides=[2, 2]),
            n("MaxPool", ["c"], ["m"], auto_pad="SAME_UPPER", kernel_shape=[2, 2],
              strides=[2, 2]),
            n("AveragePool", ["m"], ["y"], auto_pad="SAME_UPPER", kernel_shape=[3, 3])],
            [("x", [1, 3, "H", "W"])], [weights("w", 2, 3, 3, 3)])
        x1 = randn(1, 3, 11, 14)
        got, why = run_import(src, x1, os.path.join(case_dir(tmp, name), "orig"))
        check(got is not None and got.shape == (1, 2, 3, 4),
              "%s: the original at %s: %s" % (name, list(x1.shape), why))
        if got is not None:
            one(tmp, name, src, ["conv", "max_pool", "avg_pool"], (x1, got))

        # what MIL cannot express with dynamic dims is refused, saying why
        name = "conv_same_lower"
        src = os.path.join(case_dir(tmp, name), name + ".onnx")
        onnx_model(src, [n("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER")],
                   [("x", [1, 3, "H", "W"])], [weights("w", 2, 3, 3, 3)])
        refused(tmp, name, src, "auto_pad SAME_LOWER needs a static input shape")
        name = "gru_linear_before_reset"
        src = os.path.join(case_dir(tmp, name), name + ".onnx")
        rnn(src, "GRU", "forward", lbr=1)
        refused(tmp, name, src, "needs a static sequence length")
        name = "slice_negative_step_far"
        src = os.path.join(case_dir(tmp, name), name + ".onnx")
        onnx_model(src, [n("Slice", ["x", "s", "e", "a", "st"], ["y"])], [("x", ["N", 4])],
                   [ints("s", [-3]), ints("e", [-9]), ints("a", [0]), ints("st", [-1])])
        refused(tmp, name, src, "a negative step from -3 on an axis of unknown size")
    return report("coreml_cmdyn_ct")


sys.exit(main())
