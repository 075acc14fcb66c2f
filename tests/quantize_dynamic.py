#!/usr/bin/env python3
"""A dynamically quantized model for the tests, as ONNX Runtime's
quantize_dynamic writes one: each MatMul or Gemm whose weight is a 2-D
constant (or the Transpose of one) becomes DynamicQuantizeLinear of its
input, MatMulInteger with the weight quantized to uint8 (per tensor,
asymmetric), a Cast to float and a Mul by both scales (then the Gemm's
bias added). The last node keeps the replaced node's name and output.

Usage: quantize_dynamic.py IN.onnx OUT.onnx (prints how many it quantized).
"""
import sys, onnx, numpy as np
from onnx import helper, numpy_helper, TensorProto

def quantize(src, dst):
    m = onnx.load(src)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    consts = {}
    for n in g.node:
        if n.op_type == 'Constant':
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    prod = {o: n for n in g.node for o in n.output}
    def weight(name):
        if name in inits: return numpy_helper.to_array(inits[name])
        if name in consts: return consts[name]
        t = prod.get(name)
        if t is not None and t.op_type == 'Transpose' and t.input[0] in inits:
            w = numpy_helper.to_array(inits[t.input[0]])
            perm = [a.ints for a in t.attribute if a.name == 'perm']
            return w.T if w.ndim == 2 and (not perm or list(perm[0]) == [1, 0]) else None
        return None
    nodes = []
    k = 0
    for n in g.node:
        w = weight(n.input[1]) if n.op_type in ('MatMul', 'Gemm') and len(n.input) > 1 else None
        gemm_ok = n.op_type != 'Gemm' or all(a.name not in ('transA',) or a.i == 0 for a in n.attribute)
        if w is None or w.ndim != 2 or not gemm_ok:
            nodes.append(n); continue
        if n.op_type == 'Gemm':
            at = {a.name: a for a in n.attribute}
            if 'transB' in at and at['transB'].i: w = w.T
            if ('alpha' in at and at['alpha'].f != 1) or ('beta' in at and at['beta'].f != 1):
                nodes.append(n); continue
        p = f'q{k}_'; k += 1
        lo, hi = min(w.min(), 0.0), max(w.max(), 0.0)
        scale = np.float32((hi - lo) / 255.0 or 1.0)
        zp = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
        wq = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
        g.initializer.extend([numpy_helper.from_array(wq, p + 'W'),
                              numpy_helper.from_array(np.array(scale, np.float32), p + 'Ws'),
                              numpy_helper.from_array(np.array(zp, np.uint8), p + 'Wz')])
        x = n.input[0]
        nodes += [helper.make_node('DynamicQuantizeLinear', [x], [p + 'xq', p + 'xs', p + 'xz'], name=p + 'dql'),
                  helper.make_node('MatMulInteger', [p + 'xq', p + 'W', p + 'xz', p + 'Wz'], [p + 'mi'], name=p + 'mmi'),
                  helper.make_node('Cast', [p + 'mi'], [p + 'mf'], to=TensorProto.FLOAT, name=p + 'cast'),
                  helper.make_node('Mul', [p + 'xs', p + 'Ws'], [p + 's'], name=p + 'smul')]
        out = n.output[0]
        if n.op_type == 'Gemm' and len(n.input) > 2:
            nodes += [helper.make_node('Mul', [p + 'mf', p + 's'], [p + 'y'], name=p + 'mul'),
                      helper.make_node('Add', [p + 'y', n.input[2]], [out], name=n.name)]
        else:
            nodes.append(helper.make_node('Mul', [p + 'mf', p + 's'], [out], name=n.name))
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    return k

if __name__ == '__main__':
    print(quantize(sys.argv[1], sys.argv[2]))
