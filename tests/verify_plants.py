#!/usr/bin/env python3
"""Verification judged against a model's own noise, and planted errors
(issue 36), on two models that round: a dynamically quantized TinyBERT
(tests/quantize_dynamic.py, as ONNX Runtime's quantize_dynamic writes
one) and ViT-tiny in float16 (convert --dtype float16).

- Each is converted to opset 20 with --optimize (layer norms and GELUs
  fused: the fused kernels round differently from the chains they
  replace) and the quantized one to opset 10 (DynamicQuantizeLinear
  expanded): verification by default passes, with the largest error and
  the original's noise floor in the report. The float16 one has elements
  past the tolerance that only the floor explains.
- 20 kinds of real errors are planted, one at a time, in each converted
  model (a weight changed by 1%, an attribute changed, a wrong axis, a
  node dropped, ...). `compare ORIGINAL PLANTED` must refuse every one,
  and its first-difference report must name the planted node (the
  original's node computing the value the planted node computes, or the
  planted node itself) in at least 18 of the 20.
- On float16 MobileNetV2, whose logits are mostly noisier than the
  tolerance, a convolution weight changed by 1% still fails and is named.

Usage: verify_plants.py ONNX_CONVERT   (from the project root). Prints
"verify_plants: N passed, N failed".
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import check, report, skip  # noqa: E402
from quantize_dynamic import quantize  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-convert"
MODELS = "../shared/models"
NAMED_AT_LEAST = 18


def run_json(*args):
    return clitest.run_json(BIN, *args)


# ---- the two models and their conversions ---------------------------------

def make_models(tmp):
    """{name: path} of the quantized and the float16 originals (None when
    the shared models are absent)."""
    bert = os.path.join(MODELS, "tinybert_opset14", "model.onnx")
    vit = os.path.join(MODELS, "vit_tiny_opset17", "model.onnx")
    if not (os.path.exists(bert) and os.path.exists(vit)):
        return None
    q = os.path.join(tmp, "tinybert_quant.onnx")
    h = os.path.join(tmp, "vit_float16.onnx")
    check(quantize(bert, q) >= 9, "the quantizer quantized TinyBERT's 9 weight MatMuls")
    rc, rep, err = run_json("convert", vit, "--dtype", "float16", "--no-verify", "-o", h)
    check(rc == 0, "vit_tiny made float16: " + err)
    return {"quantized": q, "float16": h}


def check_conversion(name, src, dst, args, past_tolerance):
    """Converts src with args, verification by default; it must pass with
    figures: largest error and the floor. past_tolerance: elements must
    be past the tolerance and within the noise (the floor decided)."""
    rc, rep, err = run_json("convert", src, *args, "-o", dst)
    ver = rep.get("verification") or {}
    what = "%s %s" % (name, " ".join(args))
    check(rc == 0 and ver.get("result") == "equal",
          "%s: verified equal (got %s %s)" % (what, ver.get("result"), err.strip()))
    outs = ver.get("outputs") or []
    check(len(outs) > 0 and all(o.get("max_error") is not None and o.get("floor") is not None
                                and o.get("floor") > 0 for o in outs),
          "%s: each output has its largest error and the original's floor: %s" % (what, outs))
    if past_tolerance:
        check(any(o.get("beyond_tolerance", 0) > 0 and o.get("max_error") > o.get("tolerance")
                  for o in outs),
              "%s: an error past the tolerance that the floor explains: %s" % (what, outs))
    return rc == 0


# ---- planting ---------------------------------------------------------------

def inits(m):
    return {i.name: i for i in m.graph.initializer}


def consts(m):
    """Constant nodes' values by output name (opset 20 keeps some)."""
    out = {}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            out[n.output[0]] = n
    return out


def readers(m, value):
    return [n for n in m.graph.node if value in n.input]


# Which candidate a plant takes: 0 the middle one of its kind, then its
# neighbours in turn (check_plants moves on while the planted model is
# one the checker refuses: an error of shapes, not of values).
CHOICE = [0]


def middle(nodes):
    order = sorted(range(len(nodes)), key=lambda i: (abs(i - len(nodes) // 2), i))
    return nodes[order[CHOICE[0]]] if CHOICE[0] < len(order) else None


def nodes_of(m, *ops):
    return [n for n in m.graph.node if n.op_type in ops]


def value_of(m, name):
    i = inits(m).get(name)
    if i is not None:
        return numpy_helper.to_array(i)
    c = consts(m).get(name)
    return numpy_helper.to_array(c.attribute[0].t) if c is not None else None


def set_input(m, node, k, array):
    """Node's input k reads a new initializer holding array (the one it
    read may be shared with other nodes, which must not change)."""
    name = "plant_%s_%d" % (node.name.replace("/", "_"), k)
    m.graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    node.input[k] = name


def set_attr(node, name, value):
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    node.attribute.append(helper.make_attribute(name, value))


def graph_outputs(m):
    return {o.name for o in m.graph.output}


def bypass(m, node, k=0):
    """Drops node: its readers read its input k instead."""
    out = node.output[0]
    if out in graph_outputs(m):
        return None
    for n in m.graph.node:
        for i, x in enumerate(n.input):
            if x == out:
                n.input[i] = node.input[k]
    m.graph.node.remove(node)
    return node.name


def with_init(m, ops, k, pred=lambda a: True):
    """The middle node of ops whose input k is a constant satisfying pred."""
    cands = [n for n in nodes_of(m, *ops) if len(n.input) > k and
             value_of(m, n.input[k]) is not None and pred(value_of(m, n.input[k]))]
    return middle(cands)


def float_weight(m):
    """A node reading a 2-D weight (float, or the quantized model's uint8)."""
    return with_init(m, ("MatMul", "Gemm", "MatMulInteger"), 1, lambda a: a.ndim == 2)


def p_weight_1pct(m):
    n = with_init(m, ("MatMul", "Gemm"), 1, lambda a: a.ndim == 2 and a.dtype.kind == "f")
    k = 1
    if n is None:   # the quantized model: its weights' float scale
        n = with_init(m, ("Mul",), 1, lambda a: a.ndim == 0 and a.dtype.kind == "f")
    if n is None:
        return None
    set_input(m, n, k, (value_of(m, n.input[k]) * 1.01).astype(value_of(m, n.input[k]).dtype))
    return n.name


def p_weight_element(m):
    n = float_weight(m)
    if n is None:
        return None
    w = value_of(m, n.input[1]).copy()
    i = np.unravel_index(np.argmax(np.abs(w.astype(np.float64) - np.median(w))), w.shape)
    w[i] = (255 - w[i]) if w.dtype == np.uint8 else -w[i]
    set_input(m, n, 1, w)
    return n.name


def p_weight_rows_reversed(m):
    n = float_weight(m)
    if n is None:
        return None
    set_input(m, n, 1, value_of(m, n.input[1])[::-1].copy())
    return n.name


def p_norm_scale_1pct(m):
    n = middle(nodes_of(m, "LayerNormalization"))
    set_input(m, n, 1, (value_of(m, n.input[1]) * 1.01).astype(value_of(m, n.input[1]).dtype))
    return n.name


def p_norm_bias(m):
    n = middle(nodes_of(m, "LayerNormalization"))
    b = value_of(m, n.input[2])
    set_input(m, n, 2, (b + np.asarray(0.1, b.dtype)).astype(b.dtype))
    return n.name


def p_norm_epsilon(m):
    n = middle(nodes_of(m, "LayerNormalization"))
    set_attr(n, "epsilon", 0.5)
    return n.name


def p_softmax_axis(m):
    n = middle(nodes_of(m, "Softmax"))
    set_attr(n, "axis", -2)
    return n.name


def p_transpose_perm(m):
    n = middle([t for t in nodes_of(m, "Transpose")
                if any(a.name == "perm" and len(a.ints) >= 3 for a in t.attribute)])
    perm = list(next(a.ints for a in n.attribute if a.name == "perm"))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    set_attr(n, "perm", perm)
    return n.name


def bias_add(m):
    """The middle Add of a computed value and a 1-D constant (a bias),
    and the constant's input index."""
    cands = [(n, k) for n in nodes_of(m, "Add") for k in (0, 1)
             if value_of(m, n.input[k]) is not None and value_of(m, n.input[k]).ndim == 1
             and value_of(m, n.input[1 - k]) is None]
    return middle(cands) or (None, 0)


def p_bias_add_to_sub(m):
    n, k = bias_add(m)
    if n is None:
        return None
    n.op_type = "Sub"
    if k == 0:   # bias - x: still the wrong sign on x
        n.input[0], n.input[1] = n.input[1], n.input[0]
    return n.name


def p_bias_element(m):
    n, k = bias_add(m)
    if n is None:
        return None
    b = value_of(m, n.input[k]).copy()
    b[0] += np.asarray(1.0, b.dtype)
    set_input(m, n, k, b)
    return n.name


def p_gelu_dropped(m):
    return bypass(m, middle(nodes_of(m, "Gelu")))


def p_residual_dropped(m):
    """An Add of two computed values (a residual connection) reads only
    its first."""
    cands = [n for n in nodes_of(m, "Add") if all(value_of(m, x) is None for x in n.input)]
    return bypass(m, middle(cands))


def p_attention_scale(m):
    n = with_init(m, ("Div",), 1, lambda a: a.size == 1)
    d = value_of(m, n.input[1])
    set_input(m, n, 1, (d * 2).astype(d.dtype))
    return n.name


def p_neg_inserted(m):
    n = middle(nodes_of(m, "MatMul"))
    out = n.output[0]
    n.output[0] = out + "_before_plant"
    neg = helper.make_node("Neg", [n.output[0]], [out], name="plant_neg")
    m.graph.node.insert(list(m.graph.node).index(n) + 1, neg)
    return "plant_neg"


def p_softmax_to_sigmoid(m):
    n = middle(nodes_of(m, "Softmax"))
    n.op_type = "Sigmoid"
    del n.attribute[:]
    return n.name


def p_matmul_swapped(m):
    n = middle(nodes_of(m, "MatMul"))
    n.input[0], n.input[1] = n.input[1], n.input[0]
    return n.name


def p_slice_window(m):
    """A Slice's window moved by one: the same length, one further."""
    n = with_init(m, ("Slice",), 2, lambda a: a.size == 1)
    if n is None or value_of(m, n.input[1]) is None:
        return None
    for k in (1, 2):
        s = value_of(m, n.input[k])
        set_input(m, n, k, (s + 1).astype(s.dtype))
    return n.name


def p_div_swapped(m):
    """x / c computed as c / x."""
    n = with_init(m, ("Div",), 1, lambda a: a.size == 1)
    if n is None:
        return None
    n.input[0], n.input[1] = n.input[1], n.input[0]
    return n.name


def p_gather_index(m):
    n = with_init(m, ("Gather",), 1, lambda a: a.ndim == 0)
    i = value_of(m, n.input[1])
    set_input(m, n, 1, (i + 1).astype(i.dtype))
    return n.name


def p_gelu_to_relu(m):
    n = middle(nodes_of(m, "Gelu"))
    n.op_type = "Relu"
    del n.attribute[:]
    return n.name


PLANTS = [
    ("a weight changed by 1%", p_weight_1pct),
    ("one weight element changed", p_weight_element),
    ("a weight's rows reversed", p_weight_rows_reversed),
    ("a layer norm's scale changed by 1%", p_norm_scale_1pct),
    ("a layer norm's bias moved", p_norm_bias),
    ("a layer norm's epsilon changed (attribute)", p_norm_epsilon),
    ("Softmax on the wrong axis", p_softmax_axis),
    ("Transpose on the wrong axes", p_transpose_perm),
    ("a bias added as subtracted", p_bias_add_to_sub),
    ("one bias element changed", p_bias_element),
    ("an activation dropped", p_gelu_dropped),
    ("a residual connection dropped", p_residual_dropped),
    ("the attention scale changed", p_attention_scale),
    ("a sign flipped (Neg inserted)", p_neg_inserted),
    ("Softmax replaced by Sigmoid", p_softmax_to_sigmoid),
    ("MatMul operands swapped", p_matmul_swapped),
    ("a Slice window moved", p_slice_window),
    ("a division's operands swapped", p_div_swapped),
    ("a Gather index moved", p_gather_index),
    ("GELU replaced by ReLU", p_gelu_to_relu),
]


def named(rep, stderr, planted):
    """Whether the report names the planted node: the first difference's
    node (the original's) or the node computing it in the planted model,
    or, when the planted model failed to run, the failure's message."""
    where = rep.get("first_difference") or {}
    if planted in (where.get("node"), where.get("became_node")):
        return True
    # a dropped or fused node: the region the difference may start in
    if planted in (where.get("region") or []):
        return True
    return rep.get("result") == "error" and ("'%s'" % planted) in (rep.get("message") or "")


def plant_valid(converted, plant, path):
    """Plants in a copy of converted, saved at path, at the first
    candidate whose result the checker accepts (else the first one):
    the planted node's name, or None when the plant has no candidate."""
    first = None
    for choice in range(8):
        CHOICE[0] = choice
        m = onnx.load(converted)
        try:
            planted = plant(m)
        except (AttributeError, TypeError, StopIteration):
            planted = None   # no such node (or no more candidates)
        if planted is None:
            break
        if first is None:
            first = (planted, m)
        onnx.save(m, path)
        if subprocess.run([BIN, "check", path], capture_output=True).returncode == 0:
            CHOICE[0] = 0
            return planted
    CHOICE[0] = 0
    if first is not None:
        onnx.save(first[1], path)
    return first[0] if first else None


def check_plants(name, original, converted, tmp):
    named_count = 0
    for i, (what, plant) in enumerate(PLANTS):
        path = os.path.join(tmp, "%s_plant%02d.onnx" % (name, i))
        planted = plant_valid(converted, plant, path)
        if planted is None:
            check(False, "%s: plant '%s' found no node to plant in" % (name, what))
            continue
        rc, rep, err = run_json("compare", original, path)
        check(rc == 1 and rep.get("result") in ("differs", "error"),
              "%s: plant '%s' at '%s' is refused (got %s: %s)" %
              (name, what, planted, rep.get("result"), err.strip()))
        ok = named(rep, err, planted)
        named_count += ok
        print("%s: %-45s %-8s %s" % (name, what, rep.get("result"),
                                     "named" if ok else "NOT named: %s" %
                                     json.dumps(rep.get("first_difference"))))
    check(named_count >= NAMED_AT_LEAST,
          "%s: the first difference names the planted node in %d of %d (at least %d)" %
          (name, named_count, len(PLANTS), NAMED_AT_LEAST))
    print("%s: planted node named in %d of %d" % (name, named_count, len(PLANTS)))


def check_compare_basics(original, tmp):
    """A model against itself is equal, with no first difference; a
    missing file is an error naming it, exit 1."""
    rc, rep, err = run_json("compare", original, original)
    check(rc == 0 and rep.get("result") == "equal" and rep.get("first_difference") is None
          and all(o.get("max_error") == 0 for o in rep.get("outputs") or [{}]),
          "compare of a model with itself: rc %d %s %s" % (rc, rep.get("result"), err))
    missing = os.path.join(tmp, "absent.onnx")
    rc, rep, err = run_json("compare", original, missing)
    check(rc == 1 and rep.get("result") == "error" and
          (rep.get("message") or "").count(missing) == 1,
          "compare with a missing file: rc %d %s" % (rc, rep.get("message")))


def check_noisy(tmp):
    """MobileNetV2 in float16 is noisier than the tolerance on 963 of its
    1000 logits: a convolution weight changed by 1%, early, middle or
    late, must still fail (the converted model's own noise judged element
    by element, not excused by the count of noisy ones), and be named."""
    src = os.path.join(MODELS, "mobilenet_v2_opset17", "model.onnx")
    if not os.path.exists(src):
        skip("verify_plants: no mobilenet_v2_opset17")
        return
    half = os.path.join(tmp, "mobilenet_half.onnx")
    rc, _, err = run_json("convert", src, "--dtype", "float16", "--no-verify", "-o", half)
    check(rc == 0, "mobilenet_v2 made float16: " + err)
    for idx in (5, 25, 45):
        m = onnx.load(half)
        n = nodes_of(m, "Conv")[idx]
        w = value_of(m, n.input[1])
        set_input(m, n, 1, (w * 1.01).astype(w.dtype))
        path = os.path.join(tmp, "mobilenet_plant%d.onnx" % idx)
        onnx.save(m, path)
        rc, rep, err = run_json("compare", half, path)
        where = rep.get("first_difference") or {}
        check(rc == 1 and rep.get("result") == "differs" and where.get("node") == n.name,
              "float16 MobileNetV2, Conv %d's weight by 1%%: %s, named %s (want %s)" %
              (idx, rep.get("result"), where.get("node"), n.name))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        models = make_models(tmp)
        if models is None:
            skip("../shared/models lacks tinybert_opset14 or vit_tiny_opset17")
            return report("verify_plants")
        q, h = models["quantized"], models["float16"]
        check_compare_basics(q, tmp)
        q20, h20 = os.path.join(tmp, "q20.onnx"), os.path.join(tmp, "h20.onnx")
        ok_q = check_conversion("quantized", q, q20, ["--opset", "20", "--optimize"], False)
        check_conversion("quantized", q, os.path.join(tmp, "q10.onnx"), ["--opset", "10"],
                         False)
        ok_h = check_conversion("float16", h, h20, ["--opset", "20", "--optimize"], True)
        if ok_q:
            check_plants("quantized", q, q20, tmp)
        if ok_h:
            check_plants("float16", h, h20, tmp)
        check_noisy(tmp)
    return report("verify_plants")


if __name__ == "__main__":
    sys.exit(main())
