"""Apple's loader accepts every MIL op the Core ML lowering of Resize,
DepthToSpace/SpaceToDepth, LRN, LpNormalization, MeanVarianceNormalization,
LpPool/GlobalLpPool and Einsum emits (src/coreml/resize.c, tensor.c, norm.c,
nn.c, einsum.c): each small ONNX model below is exported by
`onnx-convert convert -o X.mlpackage`, must emit the MIL op named beside it, and
../shared/tools/coremltools/ct_check.py (coremltools' own parser and type
inference per op version) must accept the package.

The torch cases (PyTorch's own export of F.interpolate, the forms the
real-model corpus found refused before src/coreml/resize.c lowered them as
constant matrices) also convert with --verify: the round trip through the
package evaluates equal to the ONNX model, and, when ONNX Runtime is set
up, the package imported back to ONNX runs in ONNX Runtime to PyTorch's
own outputs.

Skips, saying so, when the judge is absent or not set up.
Usage: /usr/bin/python3 tests/coreml_cmres_ct.py PATH/TO/onnx-convert
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

from clitest import CT_CHECK as JUDGE, CT_SETUP as SETUP, ORT_CHECK, ct_judge, \
    have_ort  # noqa: E402


def model(nodes, inputs, inits=(), opset=17):
    """A one-output model; inputs are (name, dims), all float."""
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, "g", ins, [out], initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def resize(attrs, scales=None, sizes=None, dims=(1, 2, 3, 4)):
    inits, names = [], ["x", ""]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "s"))
        names.append("s")
    else:
        names.append("")
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "z"))
        names.append("z")
    node = helper.make_node("Resize", names, ["y"], **attrs)
    return model([node], [("x", list(dims))], inits)


def one(op, dims, **attrs):
    return model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", list(dims))])


CASES = [
    ("resize_upsample_nearest", "upsample_nearest_neighbor",
     resize({"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
             "nearest_mode": "floor"}, scales=[1, 1, 2, 3])),
    ("resize_nearest_neighbor", "resize_nearest_neighbor",
     resize({"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, sizes=[1, 2, 5, 7])),
    ("resize_bilinear_unalign", "resize_bilinear",
     resize({"mode": "linear"}, sizes=[1, 2, 5, 7])),
    ("resize_bilinear_strict", "resize_bilinear",
     resize({"mode": "linear", "coordinate_transformation_mode": "align_corners"},
            scales=[1, 1, 2, 2])),
    ("resize_bilinear_default", "resize_bilinear",
     resize({"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
            sizes=[1, 2, 2, 7])),
    ("resize_rank3", "resize_bilinear",
     resize({"mode": "linear"}, sizes=[2, 6, 8], dims=(2, 3, 4))),
    ("upsample_bilinear_dynamic", "upsample_bilinear",
     resize({"mode": "linear"}, scales=[1, 1, 2, 2], dims=("N", 2, "H", "W"))),
    ("upsample_nearest_dynamic", "upsample_nearest_neighbor",
     resize({"mode": "nearest"}, scales=[1, 1, 2, 3], dims=("N", 2, "H", "W"))),
    ("depth_to_space", "depth_to_space", one("DepthToSpace", (1, 8, 2, 3), blocksize=2)),
    ("pixel_shuffle", "pixel_shuffle",
     one("DepthToSpace", (1, 8, 2, 3), blocksize=2, mode="CRD")),
    ("space_to_depth", "space_to_depth", one("SpaceToDepth", (1, 2, 4, 6), blocksize=2)),
    ("lrn", "local_response_norm", one("LRN", (1, 5, 3, 3), size=3, alpha=0.001)),
    ("lrn_rank3", "local_response_norm", one("LRN", (2, 6, 5), size=5)),
    ("lp_norm_l2", "reduce_l2_norm", one("LpNormalization", (2, 3, 4), axis=1, p=2)),
    ("lp_norm_l1", "reduce_l1_norm", one("LpNormalization", (2, 3, 4), p=1)),
    ("mvn", "reduce_mean", one("MeanVarianceNormalization", (2, 3, 4, 5))),
    ("lp_pool_p3", "avg_pool",
     one("LpPool", (1, 2, 5, 6), kernel_shape=[2, 3], p=3, pads=[1, 0, 0, 1],
         strides=[2, 1])),
    ("lp_pool_p2_1d", "avg_pool", one("LpPool", (1, 2, 7), kernel_shape=[3], p=2)),
    ("global_lp_pool_p2", "reduce_l2_norm", one("GlobalLpPool", (2, 3, 4, 5), p=2)),
    ("global_lp_pool_p3", "reduce_sum", one("GlobalLpPool", (2, 3, 4, 5), p=3)),
    ("einsum4", "einsum",
     model([helper.make_node("Einsum", ["a", "b"], ["y"], equation="nchw,nwhu->nchu")],
           [("a", [2, 3, 4, 5]), ("b", [2, 5, 4, 6])])),
    ("einsum3", "einsum",
     model([helper.make_node("Einsum", ["a", "b"], ["y"], equation="ikj,jkl->ikl")],
           [("a", [3, 4, 5]), ("b", [5, 4, 2])])),
]


def torch_case(dims, **kw):
    """F.interpolate(x, **kw) exported by PyTorch at opset 17, and an
    input with PyTorch's output for it (TensorProtos)."""
    import io
    import warnings
    import onnx
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.interpolate(x, **kw)

    buf = io.BytesIO()
    warnings.simplefilter("ignore")   # torch's notes on its own shape inference
    x = torch.rand(*dims, generator=torch.Generator().manual_seed(5))
    torch.onnx.export(M(), x, buf, opset_version=17, input_names=["x"], output_names=["y"])
    return onnx.load_from_string(buf.getvalue()), (
        numpy_helper.from_array(x.numpy(), "x"), numpy_helper.from_array(M()(x).numpy(), "y"))


def ort_vs_torch(tool, pkg, io, tmp, name):
    """The package imported back to ONNX, run by ONNX Runtime on the torch
    case's input, against PyTorch's output; None when it agrees."""
    case = os.path.join(tmp, name + "_case")
    os.makedirs(os.path.join(case, "test_data_set_0"))
    for k, t in enumerate(io):
        kind = "input" if k == 0 else "output"
        with open(os.path.join(case, "test_data_set_0", kind + "_0.pb"), "wb") as f:
            f.write(t.SerializeToString())
    back = os.path.join(tmp, name + "_back.onnx")
    im = subprocess.run([tool, "convert", pkg, "-o", back], capture_output=True, text=True)
    if im.returncode != 0:
        return "import: " + (im.stdout + im.stderr).strip()
    ort = subprocess.run(["node", ORT_CHECK, case, "--model", back], capture_output=True,
                         text=True)
    return None if ort.returncode == 0 else "ONNX Runtime: " + (ort.stdout + ort.stderr).strip()


def torch_cases():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("  (no torch: the torch cases are left out)")
        return []
    return [
        ("torch_bicubic", "matmul",
         torch_case((1, 2, 5, 6), size=(11, 13), mode="bicubic", align_corners=False)),
        ("torch_bilinear_x2.2", "matmul",
         torch_case((1, 2, 5, 6), scale_factor=2.2, mode="bilinear",
                    recompute_scale_factor=False)),
        ("torch_nearest_5x6_11x13", "gather",
         torch_case((1, 2, 5, 6), size=(11, 13), mode="nearest")),
        ("torch_trilinear", "matmul",
         torch_case((1, 2, 3, 4, 5), size=(5, 7, 4), mode="trilinear", align_corners=True)),
    ]


def main():
    tool = sys.argv[1]
    if not os.access(JUDGE, os.X_OK) or subprocess.call(
            ["sh", SETUP, "--no-selftest"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL) != 0:
        print("SKIP coreml_cmres_ct: no coremltools judge")
        print("coreml_cmres_ct: 0 passed, 0 failed, %d skipped" % len(CASES))
        return 0
    passed = failed = 0
    torch_io, ort = {}, have_ort()
    cases = list(CASES)
    for name, want, (m, io) in torch_cases():
        torch_io[name] = io
        cases.append((name, want, m))
    with tempfile.TemporaryDirectory() as tmp:
        for name, want, m in cases:
            src = os.path.join(tmp, name + ".onnx")
            pkg = os.path.join(tmp, name + ".mlpackage")
            save(m, src)
            extra = ["--verify"] if name in torch_io else []
            ex = subprocess.run([tool, "convert", src, "-o", pkg] + extra,
                                capture_output=True, text=True)
            if ex.returncode != 0:
                print("FAIL %s: export: %s" % (name, (ex.stdout + ex.stderr).strip()))
                failed += 1
                continue
            ok, ops, target, said = ct_judge(pkg)
            bad = ort_vs_torch(tool, pkg, torch_io[name], tmp, name) \
                if ok and ort and want in ops and name in torch_io else None
            if not ok:
                print("FAIL %s: Apple's loader: %s" % (name, said))
                failed += 1
            elif want not in ops:
                print("FAIL %s: no MIL op %s in %s" % (name, want, sorted(ops)))
                failed += 1
            elif bad:
                print("FAIL %s: %s" % (name, bad))
                failed += 1
            else:
                print("  %s: %s accepted (%s)%s" % (name, want, target,
                                                    ", ONNX Runtime = PyTorch" if
                                                    name in torch_io and ort else ""))
                passed += 1
    print("coreml_cmres_ct: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
