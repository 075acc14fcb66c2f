#!/usr/bin/python3
"""Apple's loader (../shared/tools/coremltools/ct_check.py) on packages of
the Einsum lowering to matmul (src/coreml/einsum.c: transposes, reshapes,
reduce_sum, matmul's transpose_x/transpose_y, 1-D operands) and of
GridSample as resample (src/coreml/sample.c: each sampling and padding
mode). Each small ONNX model is exported by
`onnx-convert convert IN.onnx -o OUT.mlpackage --verify` (the import of the
package, run by our evaluator, must give the model's outputs), must emit
the MIL op named beside it, and the loader must accept the package: every
op type-inferred again for its opset.

Usage: /usr/bin/python3 tests/coreml_cmops_ct.py build/onnx-convert
Prints one line per model and "coreml_cmops_ct: N passed, N failed";
skips, saying so, without python3-onnx or the judge.
"""
import json
import os
import subprocess
import sys
import tempfile

from clitest import CT_CHECK as JUDGE, have_ct  # noqa: E402


def skip(why):
    print("coreml_cmops_ct: skipped (%s)" % why)
    print("coreml_cmops_ct: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)


try:
    from onnx import TensorProto, helper, save
except ImportError:
    skip("no python3-onnx")


def model(op, inputs, opset=17, **attrs):
    """y = op(inputs...) with float inputs of the given dims."""
    names = [n for n, _ in inputs]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node(op, names, ["y"], name=op.lower() + "0", **attrs)
    g = helper.make_graph([node], "g", ins, [out])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def einsum(eq, *dims):
    return model("Einsum", [("ab"[i], list(d)) for i, d in enumerate(dims)], equation=eq)


def grid(opset=17, dims=(1, 2, 3, 4), gdims=(1, 5, 6, 2), **attrs):
    return model("GridSample", [("x", list(dims)), ("g", list(gdims))], opset, **attrs)


CASES = [
    ("einsum_bqd_bkd", "matmul", einsum("bqd,bkd->bqk", (2, 3, 4), (2, 5, 4))),
    ("einsum_attention", "matmul", einsum("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5))),
    ("einsum_swapped", "matmul", einsum("ik,kj->ji", (3, 4), (4, 5))),
    ("einsum_heads_moved", "transpose", einsum("bqhd,bkhd->bhqk", (2, 3, 4, 5), (2, 6, 4, 5))),
    ("einsum_merged", "reshape", einsum("abcd,cde->abe", (2, 3, 4, 5), (4, 5, 6))),
    ("einsum_matvec", "matmul", einsum("ij,j->i", (3, 4), (4,))),
    ("einsum_outer", "reshape", einsum("i,j->ij", (3,), (4,))),
    ("einsum_batched_dot", "matmul", einsum("bi,bi->b", (3, 4), (3, 4))),
    ("einsum_summed", "reduce_sum", einsum("abc,bd->ad", (2, 3, 4), (3, 5))),
    ("einsum_ellipsis", "matmul", einsum("...ij,...jk->...ik", (2, 3, 4, 5), (3, 5, 6))),
    ("einsum_projection", "matmul", einsum("bsd,de->bse", (2, 3, 4), (4, 5))),
    ("einsum_dynamic_batch", "matmul", einsum("bqd,bkd->bqk", ("N", 3, 4), ("N", 5, 4))),
    ("einsum_dynamic_merge", "reshape", einsum("abcd,cde->abe", ("N", 3, 4, 5), (4, 5, 6))),
    ("einsum_dot", "matmul", einsum("i,i->", (5,), (5,))),
    ("einsum_transpose", "transpose", einsum("ij->ji", (3, 4))),
    ("einsum_sum", "reduce_sum", einsum("ij->i", (3, 4))),
    ("einsum_mil", "einsum", einsum("nchw,nwhu->nchu", (2, 3, 4, 5), (2, 5, 4, 6))),
    ("gridsample_bilinear_zeros", "resample", grid()),
    ("gridsample_nearest_border", "resample",
     grid(mode="nearest", padding_mode="border", align_corners=1)),
    ("gridsample_reflection", "resample", grid(padding_mode="reflection")),
    ("gridsample_reflection_aligned", "resample",
     grid(padding_mode="reflection", align_corners=1)),
    ("gridsample20_linear", "resample", grid(20, mode="linear")),
]


def main():
    tool = sys.argv[1]
    if not have_ct():
        skip("no coremltools judge")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, want, m in CASES:
            src = os.path.join(tmp, name + ".onnx")
            pkg = os.path.join(tmp, name + ".mlpackage")
            save(m, src)
            ex = subprocess.run([tool, "convert", src, "-o", pkg, "--verify"],
                                capture_output=True, text=True)
            if ex.returncode != 0:
                print("FAIL %s: export or --verify: %s" % (name, (ex.stdout + ex.stderr).strip()))
                failed += 1
                continue
            ct = subprocess.run([sys.executable, JUDGE, pkg, "--json"], capture_output=True,
                                text=True)
            try:
                rep = json.loads(ct.stdout)
            except ValueError:
                rep = {}
            ops = rep.get("functions", {}).get("main", {}).get("ops", {})
            if ct.returncode != 0 or not rep.get("ok"):
                print("FAIL %s: Apple's loader: %s" % (name, (ct.stdout + ct.stderr)[-300:]))
                failed += 1
            elif want not in ops:
                print("FAIL %s: no MIL op %s in %s" % (name, want, sorted(ops)))
                failed += 1
            else:
                print("  %s: %s accepted (%s)" % (name, " ".join(sorted(ops)), rep.get("target")))
                passed += 1
    print("coreml_cmops_ct: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
