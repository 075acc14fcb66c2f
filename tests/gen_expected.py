#!/usr/bin/python3
# Developer tool (not run by make check): recomputes the expected outputs in
# testdata/*_data/ after `make testdata`. Needs Debian python3-onnx + numpy.
"""Reference outputs for testdata/{small_cnn,tiny_transformer}.onnx.

The forward passes are written by hand in numpy (float64) from the ONNX op
definitions and the intended architecture; only the weights are read from the
model files (by initializer name). Writes NAME_data/input_0.pb, output_K.pb.
"""
import math, os, sys
import numpy as np
import onnx
from onnx import numpy_helper

def weights(model):
    return {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}

def det_input(shape):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32) / np.float32(n)).reshape(shape)

def conv2d(x, w, b, pad):
    # x [N,C,H,W], w [M,C,kh,kw], stride 1, symmetric pad
    N, C, H, W = x.shape
    M, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    Ho, Wo = H + 2 * pad - kh + 1, W + 2 * pad - kw + 1
    out = np.zeros((N, M, Ho, Wo))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + Ho, j:j + Wo]           # N,C,Ho,Wo
            out += np.einsum('nchw,mc->nmhw', patch, w[:, :, i, j])
    return out + b.reshape(1, M, 1, 1)

def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def small_cnn(m, x):
    W = weights(m)
    y = conv2d(x.astype(np.float64), W['conv1.weight'], W['conv1.bias'], 1)
    c = lambda v: v.reshape(1, -1, 1, 1)
    y = c(W['bn1.scale']) * (y - c(W['bn1.mean'])) / np.sqrt(c(W['bn1.var']) + 1e-5) + c(W['bn1.bias'])
    y = np.maximum(y, 0)
    N, C, H, Wd = y.shape
    y = y.reshape(N, C, H // 2, 2, Wd // 2, 2).max(axis=(3, 5))
    y = np.maximum(conv2d(y, W['conv2.weight'], W['conv2.bias'], 1), 0)
    y = y.mean(axis=(2, 3))                                 # GAP + Flatten
    logits = y @ W['fc.weight'].T + W['fc.bias']
    return [logits, softmax(logits, 1)]

def layer_norm(x, s, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * s + b

def tiny_transformer(m, x):
    W = weights(m)
    x = x.astype(np.float64)
    lin = lambda v, p: v @ W[p + '.weight'] + W[p + '.bias']
    h = layer_norm(x, W['ln1.scale'], W['ln1.bias'])
    heads = lambda v: v.reshape(1, 8, 2, 8).transpose(0, 2, 1, 3)   # [1,2,8,8]
    q, k, v = (heads(lin(h, p)) for p in ('q_proj', 'k_proj', 'v_proj'))
    att = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(8), -1)
    ctx = (att @ v).transpose(0, 2, 1, 3).reshape(1, 8, 16)
    r1 = x + lin(ctx, 'o_proj')
    h2 = lin(layer_norm(r1, W['ln2.scale'], W['ln2.bias']), 'fc1')
    erf = np.vectorize(math.erf)
    g = h2 * 0.5 * (1 + erf(h2 / math.sqrt(2)))
    return [r1 + lin(g, 'fc2')]

def main(folder):
    for name, fn in (('small_cnn', small_cnn), ('tiny_transformer', tiny_transformer)):
        m = onnx.load(os.path.join(folder, name + '.onnx'))
        onnx.checker.check_model(m, full_check=True)
        inp = m.graph.input[0]
        shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        x = det_input(shape)
        outs = fn(m, x)
        d = os.path.join(folder, name + '_data')
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'input_0.pb'), 'wb') as f:
            f.write(numpy_helper.from_array(x, inp.name).SerializeToString())
        for i, (o, vi) in enumerate(zip(outs, m.graph.output)):
            t = numpy_helper.from_array(o.astype(np.float32), vi.name)
            with open(os.path.join(d, 'output_%d.pb' % i), 'wb') as f:
                f.write(t.SerializeToString())
            print(name, vi.name, o.shape, 'min %.4g max %.4g' % (o.min(), o.max()))

if __name__ == '__main__':
    main(sys.argv[1])
