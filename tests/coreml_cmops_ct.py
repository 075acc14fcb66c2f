#!/usr/bin/python3
"""Apple's loader (../shared/tools/coremltools/ct_check.py) on packages of
the Einsum lowering to matmul (src/coreml/einsum.c: transposes, reshapes,
reduce_sum, matmul's transpose_x/transpose_y, 1-D operands) and of
GridSample as resample (src/coreml/sample.c: each sampling and padding
mode). Each small ONNX model is exported by
`onnx-convert convert IN.onnx -o OUT.mlpackage --verify` (the import of the
package, run by our evaluator, must give the model's outputs), must emit
the MIL op named beside it, and the loader must accept the package: every
op type-inferred again for its opset. Where ONNX Runtime is set up, each
package is imported back (`convert PKG -o BACK.onnx`) and ONNX Runtime runs
the import on seeded inputs against numpy's einsum and PyTorch's
grid_sample: oracles that share nothing with our evaluator.

Usage: /usr/bin/python3 tests/coreml_cmops_ct.py build/onnx-convert
Prints one line per model and "coreml_cmops_ct: N passed, N failed";
skips, saying so, without python3-onnx or the judge.
"""
import os
import subprocess
import sys
import tempfile

from clitest import ct_judge, have_ct, have_ort, ort_batch  # noqa: E402


def skip(why):
    print("coreml_cmops_ct: skipped (%s)" % why)
    print("coreml_cmops_ct: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)


try:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper, save
except ImportError:
    skip("no python3-onnx")


def model(op, inputs, opset=17, elem=TensorProto.FLOAT, **attrs):
    """y = op(inputs...) with inputs of the given dims, all of type elem."""
    names = [n for n, _ in inputs]
    ins = [helper.make_tensor_value_info(n, elem, d) for n, d in inputs]
    out = helper.make_tensor_value_info("y", elem, None)
    node = helper.make_node(op, names, ["y"], name=op.lower() + "0", **attrs)
    g = helper.make_graph([node], "g", ins, [out])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def einsum(eq, *dims, elem=TensorProto.FLOAT):
    return model("Einsum", [("ab"[i], list(d)) for i, d in enumerate(dims)], elem=elem,
                 equation=eq)


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
    ("einsum_int32", "matmul",
     einsum("nchw,nwhu->nchu", (2, 3, 4, 5), (2, 5, 4, 6), elem=TensorProto.INT32)),
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


def feeds(m, rng):
    """Seeded inputs for m's graph inputs (a symbolic dim is 2); grids
    reach a little past [-1, 1], so that padding matters."""
    xs = []
    for vi in m.graph.input:
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else 2 for d in t.shape.dim]
        if t.elem_type == TensorProto.INT32:
            xs.append(rng.integers(-5, 5, dims).astype(np.int32))
        elif vi.name == "g":
            xs.append(rng.uniform(-1.3, 1.3, dims).astype(np.float32))
        else:
            xs.append(rng.standard_normal(dims).astype(np.float32))
    return xs


def expected(m, xs):
    """The output by numpy's einsum or PyTorch's grid_sample (None when
    torch is absent): oracles apart from our evaluator."""
    node = m.graph.node[0]
    at = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Einsum":
        return np.asarray(np.einsum(at["equation"].decode(), *xs), dtype=xs[0].dtype)
    try:
        import torch
    except ImportError:
        return None
    mode = at.get("mode", b"bilinear").decode()
    y = torch.nn.functional.grid_sample(
        torch.from_numpy(xs[0]), torch.from_numpy(xs[1]),
        mode={"linear": "bilinear"}.get(mode, mode),
        padding_mode=at.get("padding_mode", b"zeros").decode(),
        align_corners=bool(at.get("align_corners", 0)))
    return y.numpy()


def case_dir(tmp, name, m, rng):
    """A backend-test case of m's inputs and the oracle's output; None
    without an oracle."""
    xs = feeds(m, rng)
    y = expected(m, xs)
    if y is None:
        return None
    d = os.path.join(tmp, name + "_case")
    os.makedirs(os.path.join(d, "test_data_set_0"))
    tensors = [(numpy_helper.from_array(x, vi.name), "input_%d" % k)
               for k, (x, vi) in enumerate(zip(xs, m.graph.input))]
    tensors.append((numpy_helper.from_array(y, "y"), "output_0"))
    for t, f in tensors:
        with open(os.path.join(d, "test_data_set_0", f + ".pb"), "wb") as fh:
            fh.write(t.SerializeToString())
    return d


def judge_package(name, want, pkg):
    """Apple's loader on pkg; prints and returns whether it passed."""
    ok, ops, target, said = ct_judge(pkg)
    if not ok:
        print("FAIL %s: Apple's loader: %s" % (name, said))
    elif want not in ops:
        print("FAIL %s: no MIL op %s in %s" % (name, want, sorted(ops)))
    else:
        print("  %s: %s accepted (%s)" % (name, " ".join(sorted(ops)), target))
    return ok and want in ops


def ort_judge(jobs, tmp):
    """ONNX Runtime runs each package's import against the oracle's output."""
    passed, failed = ort_batch(jobs, tmp)
    if jobs:
        print("  ONNX Runtime on the imports: %d of %d equal to the oracle" % (passed, len(jobs)))
    return passed, failed


def main():
    tool = sys.argv[1]
    if not have_ct():
        skip("no coremltools judge")
    ort = have_ort()
    rng = np.random.default_rng(3)
    passed = failed = 0
    jobs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, want, m in CASES:
            src = os.path.join(tmp, name + ".onnx")
            pkg = os.path.join(tmp, name + ".mlpackage")
            back = os.path.join(tmp, name + "_back.onnx")
            save(m, src)
            ex = subprocess.run([tool, "convert", src, "-o", pkg, "--verify"],
                                capture_output=True, text=True)
            if ex.returncode != 0:
                print("FAIL %s: export or --verify: %s" % (name, (ex.stdout + ex.stderr).strip()))
                failed += 1
                continue
            if judge_package(name, want, pkg):
                passed += 1
            else:
                failed += 1
            case = case_dir(tmp, name, m, rng) if ort else None
            if case and subprocess.run([tool, "convert", pkg, "-o", back],
                                       capture_output=True).returncode == 0:
                jobs.append((case, back))
            elif case:
                print("FAIL %s: the import of the package" % name)
                failed += 1
        p, f = ort_judge(jobs, tmp)
        passed += p
        failed += f
    if not ort:
        print("  (ONNX Runtime absent: the imports are judged by --verify only)")
    print("coreml_cmops_ct: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
