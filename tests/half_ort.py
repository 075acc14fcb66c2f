#!/usr/bin/python3
"""ONNX Runtime as the judge of the evaluator's float16 kernels.

    tests/half_ort.py ONNX_CONVERT [--report]   (from the project root)

Builds small float16 models (onnx 1.12's helper, seeded numpy inputs) of
the ops that sum many terms (MatMul, Gemm, Conv, ReduceSum, ReduceMean,
Softmax, LayerNormalization, Einsum, CumSum, RNNs, Attention, ...), runs
each in our evaluator (`onnx-convert run`) and in ONNX Runtime 1.30
(../shared/tools/ort/ort-check.js, our outputs as the expected ones) and
counts a case passed when the two differ by at most one float16 step at
the output's largest magnitude (2^-10 * max|y|): both round once, after
summing in float32 or wider, so only the order of the float32 sums may
differ. A kernel that rounds its partial sums to float16 is off by many
steps. --report prints each op's max error. Prints
"half_ort: N passed, N failed" (skips when node or the oracle is missing,
and counts as skipped an op ONNX Runtime has no float16 kernel for).
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

from clitest import ORT_DIR as ORT, have_ort  # noqa: E402
F16 = TP.FLOAT16


def vi(name, shape, dt=F16):
    return helper.make_tensor_value_info(name, dt, shape)


def model(op, ins, out_shape, opset=17, attrs=None, inits=(), extra=()):
    """A one-node model: ins are (name, array) fed as graph inputs, inits
    (name, array) initializers; the output is y."""
    node = helper.make_node(op, [n for n, _ in ins] + [n for n, _ in inits],
                            ['y'], **(attrs or {}))
    g = helper.make_graph(
        [node], op, [vi(n, list(a.shape),
                        F16 if a.dtype == np.float16 else TP.INT64)
                     for n, a in ins], [vi('y', out_shape)],
        [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    return m, [a for _, a in ins]


def cases():
    r = np.random.default_rng(23)

    def h(*shape, lo=-1.0, hi=1.0):
        return r.uniform(lo, hi, shape).astype(np.float16)
    ax1 = np.array([1], np.int64)
    yield 'MatMul', model('MatMul', [('a', h(4, 2048)), ('b', h(2048, 8))],
                          [4, 8])
    yield 'Gemm', model('Gemm', [('a', h(4, 2048)), ('b', h(8, 2048)),
                                 ('c', h(8))], [4, 8],
                        attrs={'transB': 1, 'alpha': 0.5, 'beta': 2.0})
    yield 'Conv', model('Conv', [('x', h(1, 64, 12, 12)),
                                 ('w', h(8, 64, 3, 3)), ('b', h(8))],
                        [1, 8, 10, 10])
    yield 'ConvTranspose', model('ConvTranspose',
                                 [('x', h(1, 64, 6, 6)), ('w', h(64, 4, 3, 3))],
                                 [1, 4, 8, 8])
    for op in ('ReduceSum', 'ReduceMean', 'ReduceSumSquare', 'ReduceL1',
               'ReduceL2', 'ReduceLogSumExp'):
        x = h(4, 4096, lo=0.0, hi=1.0)
        if op == 'ReduceSum':   # axes an input since 13
            yield op, model(op, [('x', x)], [4, 1], opset=17,
                            inits=[('axes', ax1)])
        else:                   # axes an input since 18
            yield op, model(op, [('x', x)], [4, 1], opset=18,
                            inits=[('axes', ax1)])
    yield 'Softmax', model('Softmax', [('x', h(4, 4096, lo=-8, hi=8))],
                           [4, 4096], attrs={'axis': 1})
    yield 'LogSoftmax', model('LogSoftmax', [('x', h(4, 4096, lo=-8, hi=8))],
                              [4, 4096], attrs={'axis': 1})
    yield 'LayerNormalization', model(
        'LayerNormalization', [('x', h(4, 4096, lo=0, hi=4)),
                               ('s', h(4096)), ('b', h(4096))], [4, 4096],
        attrs={'axis': -1})
    yield 'Einsum', model('Einsum', [('a', h(4, 2048)), ('b', h(2048, 8))],
                          [4, 8], opset=12, attrs={'equation': 'ij,jk->ik'})
    yield 'CumSum', model('CumSum', [('x', h(4096, lo=0, hi=1))], [4096],
                          inits=[('axis', np.array(0, np.int64))])
    yield 'GlobalAveragePool', model('GlobalAveragePool',
                                     [('x', h(1, 4, 64, 64, lo=0, hi=1))],
                                     [1, 4, 1, 1])
    yield 'AveragePool', model('AveragePool', [('x', h(1, 2, 64, 64, lo=0, hi=1))],
                               [1, 2, 1, 1], attrs={'kernel_shape': [64, 64]})
    yield 'InstanceNormalization', model(
        'InstanceNormalization', [('x', h(1, 2, 64, 64, lo=0, hi=4)),
                                  ('s', h(2)), ('b', h(2))], [1, 2, 64, 64])
    yield 'MeanVarianceNormalization', model(
        'MeanVarianceNormalization', [('x', h(1, 2, 64, 64, lo=0, hi=4))],
        [1, 2, 64, 64])
    yield 'LpNormalization', model('LpNormalization',
                                   [('x', h(4, 4096, lo=0, hi=1))], [4, 4096],
                                   attrs={'axis': 1, 'p': 2})
    # recurrent ops sum over the hidden size at every step
    for op, gates in (('RNN', 1), ('GRU', 3), ('LSTM', 4)):
        yield op, model(op, [('x', h(8, 2, 64)), ('w', h(1, gates * 32, 64)),
                             ('r', h(1, gates * 32, 32))], [8, 1, 2, 32],
                        opset=14, attrs={'hidden_size': 32})
    yield 'BatchNormalization', model(
        'BatchNormalization', [('x', h(2, 8, 16, 16)), ('s', h(8)),
                               ('b', h(8)), ('m', h(8)),
                               ('v', h(8, lo=0.5, hi=2))], [2, 8, 16, 16],
        opset=15)
    yield 'GroupNormalization', model(
        'GroupNormalization', [('x', h(2, 8, 32, 32, lo=0, hi=4)),
                               ('s', h(8)), ('b', h(8))], [2, 8, 32, 32],
        opset=21, attrs={'num_groups': 2})
    yield 'Gelu', model('Gelu', [('x', h(4, 256, lo=-4, hi=4))], [4, 256],
                        opset=20, attrs={'approximate': 'tanh'})
    yield 'Hardmax', model('Hardmax', [('x', h(4, 256))], [4, 256])
    yield 'Det', model('Det', [('x', h(4, 3, 3))], [4])
    yield 'Resize', model('Resize', [('x', h(1, 2, 8, 8))], [1, 2, 16, 16],
                          opset=13, attrs={'mode': 'linear'},
                          inits=[('roi', np.zeros(0, np.float32)),
                                 ('scales', np.array([1, 1, 2, 2], np.float32))])
    yield 'GridSample', model('GridSample', [('x', h(1, 2, 8, 8)),
                                             ('g', h(1, 6, 6, 2))],
                              [1, 2, 6, 6], opset=16)
    # opset 23/24 ops whose bodies sum (scores, squares) or rotate
    yield 'Attention', model('Attention', [('q', h(1, 2, 16, 256, lo=-3, hi=3)),
                                           ('k', h(1, 2, 256, 256, lo=-3, hi=3)),
                                           ('v', h(1, 2, 256, 256))],
                             [1, 2, 16, 256], opset=23)
    yield 'RMSNormalization', model('RMSNormalization',
                                    [('x', h(4, 1024, lo=0, hi=4)),
                                     ('s', h(1024))], [4, 1024], opset=23)
    yield 'RotaryEmbedding', model(
        'RotaryEmbedding', [('x', h(1, 2, 8, 16)), ('c', h(8, 8)),
                            ('s', h(8, 8))], [1, 2, 8, 16], opset=23,
        inits=[('pos', np.arange(8, dtype=np.int64).reshape(1, 8))])
    yield 'Swish', model('Swish', [('x', h(4, 256, lo=-4, hi=4))], [4, 256],
                         opset=24, attrs={'alpha': 1.5})


def ours(oc, d, feeds):
    """Writes the case (inputs, and our outputs as the expected ones);
    None, or why our evaluator failed."""
    sets = os.path.join(d, 'test_data_set_0')
    for k, a in enumerate(feeds):
        onnx.save_tensor(numpy_helper.from_array(a),
                         os.path.join(sets, f'input_{k}.pb'))
    p = subprocess.run([oc, 'run', os.path.join(d, 'model.onnx'), '--inputs',
                        sets, '-o', sets], capture_output=True, text=True)
    return p.stderr.strip() if p.returncode else None


def judge(oc, d, m, feeds):
    """(True/False, text) when ORT ran the model, (None, why) when it has
    no float16 kernel for it."""
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(m, os.path.join(d, 'model.onnx'))
    why = ours(oc, d, feeds)
    if why:
        return False, 'our evaluator: ' + why
    y = numpy_helper.to_array(onnx.load_tensor(
        os.path.join(d, 'test_data_set_0', 'output_0.pb'))).astype(np.float64)
    # one float16 step (2^-10 relative) at the largest magnitude
    tol = 2.0 ** -10 * max(float(np.abs(y).max()), 2.0 ** -14)
    p = subprocess.run(['node', f'{ORT}/ort-check.js', d, '--rtol', '0',
                        '--atol', '1e30'], capture_output=True, text=True)
    out = p.stdout + p.stderr
    got = re.search(r'max_abs_err=([0-9.e+-]+)', out)
    if not got:
        line = next((l for l in out.splitlines() if l.startswith(('ERROR', 'FAIL'))),
                    out.strip()[:200])
        if re.search(r'NOT_IMPLEMENTED|[Nn]ot implemented|Could not find an implementation', out):
            return None, 'skipped, ONNX Runtime has no float16 kernel: ' + line[:160]
        return False, 'ONNX Runtime: ' + line[:200]
    err = float(got.group(1))
    text = f'max |ours - ORT| = {err:.3g} (max |y| {np.abs(y).max():.4g}, allowed {tol:.3g})'
    return err <= tol, text


def main():
    oc = sys.argv[1]
    report = '--report' in sys.argv
    name = 'half_ort'
    if not have_ort():
        print(f'SKIP {name}: no node or no {ORT} (ONNX Runtime)')
        print(f'{name}: 0 passed, 0 failed, 1 skipped')
        return 0
    passed = failed = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for op, (m, feeds) in cases():
            ok, msg = judge(oc, os.path.join(tmp, op), m, feeds)
            if ok is None:
                skipped += 1
            elif ok:
                passed += 1
            else:
                failed += 1
            if report or ok is not True:
                print(f'{op}: {msg}')
    print(f'{name}: {passed} passed, {failed} failed'
          + (f', {skipped} skipped' if skipped else ''))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
