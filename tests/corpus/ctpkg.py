"""Core ML packages as Apple's coremltools makes them from PyTorch (issue 33,
for the import of issue 34): a fixed list of gen.py's cases, each traced
(torch.jit.trace) and converted by coremltools' PyTorch front end to an ML
Program at the lowest deployment target that converts, in float32 and in
float16 compute precision:

    ct.convert(traced, inputs=[ct.TensorType(name, shape)], outputs=[...],
               convert_to="mlprogram", minimum_deployment_target=iOS15..,
               compute_precision=FLOAT32|FLOAT16, skip_model_load=True)

coremltools comes from ../shared/tools/coremltools/src (OC_CT_DIR says
where else), torch from Debian. Each package then goes through Apple's
loader (ct_check.py) and its verdict is written into meta.json.

Layout: OUT/NAME_ct_fp32/model.mlpackage (and NAME_ct_fp16), with
test_data_set_0/input_K.pb and PyTorch's outputs as output_K.pb, and
meta.json (kind "coremltools", opset null).
"""
import json
import os
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CT_DIR = os.environ.get("OC_CT_DIR") or os.path.normpath(
    os.path.join(HERE, "..", "..", "..", "shared", "tools", "coremltools"))

# Every case of gen.py is tried (issue 34: one package per corpus model
# coremltools' front end converts), and vit_small, ours: the few whose
# float32 weights pass MAX_PARAMS are recorded as skipped, saying so
# (vit_b_16's 86M weights would make 500 MB of packages for what
# vit_small's two layers show).
LOCAL_MODELS = ["vit_small"]
MAX_PARAMS = 40_000_000
PRECISIONS = ("fp32", "fp16")
# float16 compute: the case's tolerance plus float16's (tests/corpus/check.py
# HALF_TOL), atol times the output's largest |value| ("scaled")
FP16_TOL = (1e-2, 3e-2)


def vit_small():
    """torchvision's VisionTransformer at gen.py's vit_b_16 input (64x64,
    patch 16), 2 layers of width 64."""
    import torch
    from torchvision.models.vision_transformer import VisionTransformer
    model = VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=2,
                              hidden_dim=64, mlp_dim=128, num_classes=10)
    return model, (torch.randn(1, 3, 64, 64),)


LOCAL = {"vit_small": ("classification", vit_small,
                       "torchvision VisionTransformer 2 layers, width 64, 1x3x64x64, patch 16",
                       1e-3, 1e-3)}


def available():
    """Whether coremltools is set up at CT_DIR (setup.sh builds its native
    helpers): without it no package is planned, rather than each recorded
    as failed (and skipped by later runs once it is there)."""
    lib = os.path.join(CT_DIR, "src", "coremltools", "libmilstoragepython.so")
    return os.path.exists(lib) and os.access(os.path.join(CT_DIR, "ct_check.py"), os.X_OK)


def files(cases):
    """Every package's folder name: one per case of gen.py and LOCAL."""
    models = list(cases) + LOCAL_MODELS
    return ["%s_ct_%s" % (m, p) for m in models for p in PRECISIONS]


def split(fname):
    """NAME_ct_PREC -> (NAME, PREC), or None for another file."""
    base, sep, prec = fname.rpartition("_ct_")
    return (base, prec) if sep and prec in PRECISIONS else None


def source(name, cases):
    """(family, build, desc, rtol, atol) of a model of MODELS."""
    if name in LOCAL:
        return LOCAL[name]
    c = cases[name]
    return c.family, c.build, c.desc, c.rtol, c.atol


def quiet(f, *a, **k):
    """f(*a, **k) with stderr kept: coremltools' progress bars and its
    messages about the Core ML runtime Linux lacks."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        return f(*a, **k)


def import_ct():
    import sys
    for p in (os.path.join(CT_DIR, "stubs"), os.path.join(CT_DIR, "src")):
        if p not in sys.path:
            sys.path.insert(0, p)
    import logging
    logging.getLogger("coremltools").setLevel(logging.ERROR)
    import importlib
    return quiet(importlib.import_module, "coremltools")


def convert(ct, traced, arrays, n_out, prec):
    """The package at the lowest target that converts: (mlmodel, target)."""
    precision = ct.precision.FLOAT32 if prec == "fp32" else ct.precision.FLOAT16
    ins = [ct.TensorType(name="input_%d" % k, shape=a.shape) for k, a in enumerate(arrays)]
    outs = [ct.TensorType(name="output_%d" % k) for k in range(n_out)]
    err = None
    for target in ("iOS15", "iOS16", "iOS17", "iOS18"):
        try:
            m = quiet(ct.convert, traced, inputs=ins, outputs=outs, convert_to="mlprogram",
                           minimum_deployment_target=getattr(ct.target, target),
                           compute_precision=precision, skip_model_load=True)
            return m, target
        except Exception as e:  # noqa: BLE001 - the next target may have the op
            err = e
    raise err


def ct_check(pkg):
    """Apple's loader on PKG: its JSON verdict, trimmed."""
    p = subprocess.run([os.path.join(CT_DIR, "ct_check.py"), pkg, "--json"],
                       capture_output=True, text=True, timeout=600)
    try:
        r = json.loads(p.stdout)
    except ValueError:
        return {"ok": False, "error": {"stage": "run", "message": (p.stderr or p.stdout)[-300:]}}
    fn = (r.get("functions") or {}).get("main") or {}
    return {"ok": bool(r.get("ok")), "spec_version": r.get("spec_version"), "target": r.get("target"),
            "opset": fn.get("opset"), "ops": fn.get("n_ops"), "error": r.get("error")}


def Flat(model, flatten):
    """model with its outputs as one flat tuple of tensors."""
    import torch

    class _Flat(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *args):
            return tuple(flatten(self.inner(*args)))
    return _Flat().eval()


def make(fname, out, cases, gen):
    """Writes OUT/FNAME (NAME_ct_PREC); returns the result dict gen.py
    records (a failure names its stage: build, trace, convert, save)."""
    import shutil
    import warnings
    import numpy as np
    import torch
    warnings.filterwarnings("ignore")
    name, prec = split(fname)
    family, build, desc, rtol, atol = source(name, cases)
    res = {"file": fname, "name": name, "opset": None, "kind": "coremltools", "family": family}
    stage, t0 = "build", time.time()
    try:
        torch.manual_seed(0)   # gen.py's seed: the same weights as NAME_opsetN
        np.random.seed(0)
        model, inputs = build()
        model.eval()
        n_params = sum(p.numel() for p in model.parameters())
        if n_params > MAX_PARAMS:
            res.update(stage="skipped", error="%.1fM weights, above the %dM this corpus packages"
                       % (n_params / 1e6, MAX_PARAMS // 1_000_000), seconds=0)
            return res
        with torch.no_grad():
            expected = gen.flatten(model(*inputs))
        stage = "trace"
        # autograd on, as gen.py exports: under torch.no_grad() attention
        # takes torch's fused kernel, which coremltools' front end lacks
        # check_trace off: its second trace differs from the first in
        # value names alone for VisionTransformer ("w" and "w.1"); the
        # import is judged against the eager model's outputs anyway
        # a detector returns a list of dicts, which trace refuses: the
        # tensors go out flat, in the order gen.flatten gives them (the
        # ONNX exporter's), as a user wraps such a model for coremltools
        traced = torch.jit.trace(Flat(model, gen.flatten), inputs, check_trace=False)
        stage = "convert"
        ct = import_ct()
        t1 = time.time()
        arrays = gen.input_arrays(inputs)
        mlmodel, target = convert(ct, traced, arrays, len(expected), prec)
        secs = time.time() - t1
        stage = "save"
        d = os.path.join(out, fname)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        pkg = os.path.join(d, "model.mlpackage")
        mlmodel.save(pkg)
    except Exception as e:  # noqa: BLE001 - recorded, not hidden
        res.update(stage=stage, error=gen.short_error(e), seconds=round(time.time() - t0, 2))
        return res
    checked = ct_check(pkg)
    tol = (rtol, atol) if prec == "fp32" else (rtol + FP16_TOL[0], atol + FP16_TOL[1])
    meta = {"name": name, "family": family, "kind": "coremltools", "opset": None,
            "case": "%s; coremltools %s, %s compute precision" % (desc, ct.__version__, prec),
            "precision": prec, "rtol": tol[0], "atol": tol[1], "tolerance_scaled": prec == "fp16",
            "expected_by": "pytorch", "export_seconds": round(secs, 3), "target": target,
            "coremltools": ct.__version__, "torch": torch.__version__, "ct_check": checked,
            "bytes": sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(pkg) for f in fs)}
    ins = [("input_%d" % k, a) for k, a in enumerate(arrays)]
    outs = [("output_%d" % k, t.detach().numpy()) for k, t in enumerate(expected)]
    gen.write_file(d, None, ins, outs, meta)
    res.update(ok=True, seconds=round(secs, 2), ct_check=checked["ok"])
    if not checked["ok"]:
        res["note"] = "Apple's loader: [%s] %s" % ((checked["error"] or {}).get("stage"),
                                                   ((checked["error"] or {}).get("message") or "")[:200])
    return res
