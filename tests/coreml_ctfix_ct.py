"""The import of what coremltools writes (issue 34): each package below is
built by coremltools' own MIL Builder and writer (ct.convert of a
pymil program), imported with `onnx-convert convert PKG -o OUT.onnx`,
checked by our checker (`check OUT.onnx`), and run by ONNX Runtime
against outputs numpy computes from the op's definition:

- transpose with a negative perm ([1, -3, -1]: coremltools writes it for
  a multi-head attention's heads; ONNX's Transpose takes 0..rank-1 only,
  and the import used to copy it into a file ONNX Runtime refuses);
- conv and max_pool with pad_type "same"/"valid" and a cast with its
  dtype, which coremltools writes as string consts (the import stopped
  at "constant of MIL type string has no ONNX type");
- slice_by_index with a squeeze_mask and end = begin on that dim (as
  coremltools writes torch's x[i]; MIL ignores that end);
- iOS18's scaled_dot_product_attention without a mask, with a bool mask
  (false: not attended) and with a float mask (added to the scores), in
  float32 and float16.

Usage: /usr/bin/python3 tests/coreml_ctfix_ct.py PATH/TO/onnx-convert
(`--build DIR` is the part that runs inside coremltools' environment.)
Skips, saying so, when coremltools or ONNX Runtime is not set up.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SDPA = "scaled_dot_product_attention"


# ---- the packages (run by coremltools' python, --build) ----------------------------

def build_all(out):
    import contextlib
    import io
    import numpy as np
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb
    import ct_check   # Apple's loader, in this process: one coremltools start

    rng = np.random.default_rng(34)
    cases = []

    def judge(pkg):
        try:
            res, _ = ct_check.check(pkg, [])
            return True, sorted(res["functions"]["main"]["ops"]), ""
        except Exception as e:  # ct_check.Fail or a coremltools error: the test fails
            return False, [], "%s: %s" % (type(e).__name__, str(e)[:300])

    def save(name, op, prog, target, inputs, want, fp16=False):
        with contextlib.redirect_stderr(io.StringIO()):
            m = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                           compute_precision=ct.precision.FLOAT16 if fp16
                           else ct.precision.FLOAT32, skip_model_load=True)
        pkg = os.path.join(out, name + ".mlpackage")
        m.save(pkg)
        ok, ops, said = judge(pkg)
        d = os.path.join(out, name)
        os.makedirs(d)
        for k, (iname, a) in enumerate(inputs):
            np.save(os.path.join(d, "input_%d_%s.npy" % (k, iname)), a)
        np.save(os.path.join(d, "want.npy"), want)
        cases.append({"name": name, "op": op, "fp16": fp16, "ct_ok": ok, "ops": ops,
                      "said": said})

    x = rng.standard_normal((2, 3, 4)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)], opset_version=ct.target.iOS15)
    def neg_perm(x):
        return mb.transpose(x=x, perm=[1, -3, -1])
    save("transpose_negative_perm", "transpose", neg_perm, ct.target.iOS15, [("x", x)],
         x.transpose(1, 0, 2))

    m = rng.standard_normal((3, 4)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=m.shape)], opset_version=ct.target.iOS15)
    def pick_row(x):
        # coremltools writes end = begin on a squeezed dim (torch's x[i]),
        # which MIL ignores there: the pure index at begin
        return mb.slice_by_index(x=x, begin=[1, 0], end=[1, 0], squeeze_mask=[True, False],
                                 end_mask=[False, True])
    save("slice_squeeze_end_ignored", "slice_by_index", pick_row, ct.target.iOS15, [("x", m)],
         m[1])

    img = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)

    def conv_np(a, pad):
        a = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        o = a.shape[2] - 2
        y = np.zeros((1, 3, o, o), np.float32)
        for i in range(o):
            for j in range(o):
                y[0, :, i, j] = np.tensordot(w, a[0, :, i:i + 3, j:j + 3], axes=3)
        return y

    for pad_type, pad in (("same", 1), ("valid", 0)):
        @mb.program(input_specs=[mb.TensorSpec(shape=img.shape)],
                    opset_version=ct.target.iOS15)
        def conv(x):
            return mb.conv(x=x, weight=w, pad_type=pad_type)
        save("conv_pad_" + pad_type, "conv", conv, ct.target.iOS15, [("x", img)], conv_np(img, pad))

    def pool_np(a):
        a = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
        y = np.zeros_like(img)
        for i in range(5):
            for j in range(5):
                y[0, :, i, j] = a[0, :, i:i + 3, j:j + 3].max(axis=(1, 2))
        return y

    @mb.program(input_specs=[mb.TensorSpec(shape=img.shape)], opset_version=ct.target.iOS15)
    def pool(x):
        return mb.max_pool(x=x, kernel_sizes=[3, 3], strides=[1, 1], pad_type="same")
    save("max_pool_same", "max_pool", pool, ct.target.iOS15, [("x", img)], pool_np(img))

    v = (rng.standard_normal((6,)) * 3).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=v.shape)], opset_version=ct.target.iOS15)
    def cast(x):
        i = mb.cast(x=x, dtype="int32")
        return mb.cast(x=i, dtype="fp32")
    save("cast_dtype_string", "cast", cast, ct.target.iOS15, [("x", v)], np.trunc(v))

    q = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
    k = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
    val = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    bmask = rng.random((4, 5)) > 0.3
    bmask[:, 0] = True            # every row attends to something
    fmask = rng.standard_normal((1, 1, 4, 5)).astype(np.float32)

    def sdpa_np(add):
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(8.0) + add
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        return (s / s.sum(axis=-1, keepdims=True)) @ val

    specs = [mb.TensorSpec(shape=q.shape), mb.TensorSpec(shape=k.shape),
             mb.TensorSpec(shape=val.shape)]
    ins = [("q", q), ("k", k), ("v", val)]
    for fp16 in (False, True):
        tag = "_fp16" if fp16 else ""

        @mb.program(input_specs=specs, opset_version=ct.target.iOS18)
        def sdpa(q, k, v):
            return mb.scaled_dot_product_attention(query=q, key=k, value=v)
        save("sdpa" + tag, SDPA, sdpa, ct.target.iOS18, ins, sdpa_np(0.0), fp16)

        @mb.program(input_specs=specs, opset_version=ct.target.iOS18)
        def sdpa_bool(q, k, v):
            return mb.scaled_dot_product_attention(query=q, key=k, value=v,
                                                   attn_mask=bmask)
        save("sdpa_bool_mask" + tag, SDPA, sdpa_bool, ct.target.iOS18, ins,
             sdpa_np(np.where(bmask, 0.0, -np.inf)), fp16)

        @mb.program(input_specs=specs, opset_version=ct.target.iOS18)
        def sdpa_float(q, k, v):
            return mb.scaled_dot_product_attention(query=q, key=k, value=v,
                                                   attn_mask=fmask)
        save("sdpa_float_mask" + tag, SDPA, sdpa_float, ct.target.iOS18, ins, sdpa_np(fmask), fp16)

    build_compressed(save, rng)
    with open(os.path.join(out, "cases.json"), "w") as fh:
        json.dump(cases, fh)


def pack_lsb(vals, bits):
    """vals (unsigned ints below 2**bits) packed from the least
    significant bit of each byte, as MIL's iOS16 constexpr ops take them."""
    import numpy as np
    b = ((np.asarray(vals, np.uint32)[:, None] >> np.arange(bits)) & 1).astype(np.uint8)
    return np.packbits(b.flatten(), bitorder="little")


def build_compressed(save, rng):
    """Compressed weights (constexpr_* ops) under a linear layer: y = x W^T
    with W the dense weight each op stands for, computed here by numpy from
    the op's definition."""
    import numpy as np
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb
    from coremltools.converters.mil.mil import types

    x = rng.standard_normal((2, 6)).astype(np.float32)

    def linear(name, op, target, make_w, want_w, fp16=False):
        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)], opset_version=target)
        def prog(x):
            return mb.linear(x=x, weight=make_w())
        save(name, op, prog, target, [("x", x)], x @ want_w.astype(np.float32).T, fp16)

    q = rng.integers(-128, 128, (4, 6)).astype(np.int8)
    zp = rng.integers(-5, 5, (4,)).astype(np.int8)
    sc = (rng.random(4) * 0.1 + 0.01).astype(np.float32)
    linear("affine_dequantize_ios16", "constexpr_affine_dequantize", ct.target.iOS16,
           lambda: mb.constexpr_affine_dequantize(quantized_data=q, zero_point=zp, scale=sc,
                                                  axis=0),
           sc[:, None] * (q.astype(np.float32) - zp[:, None]))

    lut = rng.standard_normal(16).astype(np.float32)
    idx = rng.integers(0, 16, 24)
    linear("lut_to_dense_ios16", "constexpr_lut_to_dense", ct.target.iOS16,
           lambda: mb.constexpr_lut_to_dense(indices=pack_lsb(idx, 4), lut=lut,
                                             shape=np.array([4, 6], np.uint32)),
           lut[idx].reshape(4, 6))

    dense = rng.standard_normal((4, 6)).astype(np.float32)
    dense[rng.random((4, 6)) < 0.5] = 0
    nz = dense.flatten() != 0
    linear("sparse_to_dense_ios16", "constexpr_sparse_to_dense", ct.target.iOS16,
           lambda: mb.constexpr_sparse_to_dense(nonzero_data=dense.flatten()[nz],
                                                mask=pack_lsb(nz.astype(np.uint8), 1),
                                                shape=np.array([4, 6], np.uint32)),
           dense)

    half = rng.standard_normal((4, 6)).astype(np.float16)
    linear("cast_ios16", "constexpr_cast", ct.target.iOS16,
           lambda: mb.constexpr_cast(source_val=half, output_dtype="fp32"), half)

    # iOS18: int4 data in blocks of 3 along the input dim, uint4 offsets
    d4 = rng.integers(-8, 8, (4, 6)).astype(types.np_int4_dtype)
    bsc = (rng.random((4, 2)) * 0.1 + 0.01).astype(np.float32)
    off = rng.integers(-2, 3, (4, 2)).astype(types.np_int4_dtype)
    linear("blockwise_shift_scale_int4", "constexpr_blockwise_shift_scale", ct.target.iOS18,
           lambda: mb.constexpr_blockwise_shift_scale(data=d4, scale=bsc, offset=off),
           np.repeat(bsc, 3, axis=1) * (d4.astype(np.float32) - np.repeat(off, 3, axis=1)))

    # iOS18: 2-bit indices, a table per pair of rows; and 1-bit vectors of
    # 2 along the input dim
    i2 = rng.integers(0, 4, (4, 6)).astype(types.np_uint2_dtype)
    lut2 = rng.standard_normal((2, 1, 4, 1)).astype(np.float32)
    want2 = np.stack([lut2[r // 2, 0, i2[r], 0] for r in range(4)])
    linear("lut_to_dense_ios18_groups", "constexpr_lut_to_dense", ct.target.iOS18,
           lambda: mb.constexpr_lut_to_dense(indices=i2, lut=lut2), want2)
    i1 = rng.integers(0, 2, (4, 3)).astype(types.np_uint1_dtype)
    lutv = rng.standard_normal((1, 1, 2, 2)).astype(np.float32)
    wantv = np.stack([np.concatenate([lutv[0, 0, i1[r, c]] for c in range(3)])
                      for r in range(4)])
    linear("lut_to_dense_ios18_vector", "constexpr_lut_to_dense", ct.target.iOS18,
           lambda: mb.constexpr_lut_to_dense(indices=i1, lut=lutv,
                                             vector_axis=np.int32(1)), wantv)

    mask = (dense != 0).astype(types.np_uint1_dtype)
    linear("sparse_to_dense_ios18", "constexpr_sparse_to_dense", ct.target.iOS18,
           lambda: mb.constexpr_sparse_to_dense(nonzero_data=dense.flatten()[nz], mask=mask),
           dense)

    # chained, as coremltools' joint compression writes it: int8 data
    # made dense by a mask, then dequantized per block
    q8 = rng.integers(-100, 100, (4, 6)).astype(np.int8)
    q8[dense == 0] = 0
    s8 = (rng.random((4, 1)) * 0.05 + 0.01).astype(np.float32)
    linear("sparse_then_blockwise", "constexpr_blockwise_shift_scale", ct.target.iOS18,
           lambda: mb.constexpr_blockwise_shift_scale(
               data=mb.constexpr_sparse_to_dense(nonzero_data=q8.flatten()[nz], mask=mask),
               scale=s8),
           s8 * q8.astype(np.float32))


# ---- the judge (our python) ------------------------------------------------------------

def case_dir(tmp, case, onnx_path):
    """The ort-check.js layout: inputs under the import's input names."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    src = os.path.join(tmp, case["name"])
    m = onnx.load(onnx_path)
    d = os.path.join(tmp, case["name"] + "_case")
    os.makedirs(os.path.join(d, "test_data_set_0"))
    files = sorted(f for f in os.listdir(src) if f.startswith("input_"))
    names = {vi.name for vi in m.graph.input}
    for k, f in enumerate(files):
        name = f[len("input_%d_" % k):-4]
        if name not in names:
            return None, "the import has no input '%s'" % name
        a = np.load(os.path.join(src, f))
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as fh:
            fh.write(numpy_helper.from_array(a, name).SerializeToString())
    want = np.load(os.path.join(src, "want.npy")).astype(np.float32)
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(want, m.graph.output[0].name).SerializeToString())
    # float16 compute: float16's own relative spacing, 2^-10, over a few
    # roundings of values near 1
    tol = {"rtol": 1e-2, "atol": 1e-2} if case["fp16"] else {"rtol": 1e-5, "atol": 1e-5}
    with open(os.path.join(d, "tolerance.json"), "w") as fh:
        json.dump(tol, fh)
    return d, None


def main():
    sys.path.insert(0, HERE)
    from clitest import CT_DIR, have_ct, have_ort, ort_batch, skip
    tool = sys.argv[1]
    # clitest's skip() only counts: the test stops here, saying so
    for have, what in ((have_ct, "no coremltools judge"), (have_ort, "no ONNX Runtime")):
        if not have():
            skip(what)
            print("coreml_ctfix_ct: 0 passed, 0 failed, 1 skipped")
            return 0
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, OC_CT_PATH=os.path.abspath(CT_DIR))
        b = subprocess.run(["/usr/bin/python3", "-Es", os.path.abspath(__file__), "--build",
                            tmp], capture_output=True, text=True, env=env)
        if b.returncode:
            print("FAIL coremltools did not build the packages: %s" % b.stderr[-600:])
            print("coreml_ctfix_ct: 0 passed, 1 failed")
            return 1
        with open(os.path.join(tmp, "cases.json")) as fh:
            cases = json.load(fh)
        jobs = []
        for c in cases:
            pkg = os.path.join(tmp, c["name"] + ".mlpackage")
            out = os.path.join(tmp, c["name"] + ".onnx")
            if not c["ct_ok"] or c["op"] not in c["ops"]:
                print("FAIL %s: Apple's loader, or no %s in the package: %s %s"
                      % (c["name"], c["op"], c["ops"], c["said"]))
                failed += 1
                continue
            r = subprocess.run([tool, "convert", pkg, "-o", out], capture_output=True, text=True)
            if r.returncode:
                print("FAIL %s: import: %s" % (c["name"], r.stderr.strip()[-300:]))
                failed += 1
                continue
            chk = subprocess.run([tool, "check", out], capture_output=True, text=True)
            if chk.returncode:
                print("FAIL %s: check of the import: %s" % (c["name"], chk.stderr.strip()[-300:]))
                failed += 1
                continue
            d, why = case_dir(tmp, c, out)
            if not d:
                print("FAIL %s: %s" % (c["name"], why))
                failed += 1
                continue
            jobs.append((d, out))
        p, f = ort_batch(jobs, tmp, show_passes=True)
        passed += p
        failed += f
    print("coreml_ctfix_ct: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--build":
        sys.path.insert(0, os.environ["OC_CT_PATH"])
        import ct_check  # noqa: F401  (sets sys.path to coremltools' src and stubs)
        ct_check.import_coremltools()
        import logging
        logging.disable(logging.WARNING)
        build_all(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
