#!/usr/bin/python3
"""Generate the real-model corpus (issue 33): torchvision architectures, a
zoo of torch.nn modules and functionals, each exported by PyTorch at several
opsets, and the files other tools write (float16, quantized) built from a few
of them.  No model is checked in: this script makes them all, seeded.

Usage: /usr/bin/python3 tests/corpus/gen.py OUT [--sample] [--only SUBSTR ...]
                                             [--jobs N] [--force] [--list]
Layout (the one of ../shared/models, plus meta.json), see README.md:
  OUT/NAME_opsetN/model.onnx
  OUT/NAME_opsetN/test_data_set_0/input_K.pb, output_K.pb
  OUT/NAME_opsetN/meta.json
  OUT/failures.json   what failed to export, and why (kept so reruns skip it)
  OUT/index.json      every file written and every failure
Needs Debian's python3-torch, python3-torchvision and python3-onnx.
"""
import argparse
import io
import json
import os
import sys
import time
import warnings

import numpy as np

OPSETS = (9, 11, 13, 17)

# --------------------------------------------------------------------------
# Case registry.  A case builds (module, inputs) from a fixed seed; the
# exporter is asked for every opset of the case and whatever it refuses is
# recorded with its message.


class Case:
    def __init__(self, name, family, build, desc, opsets=OPSETS, rtol=1e-3,
                 atol=1e-4, dynamic_axes=None):
        self.name, self.family, self.build, self.desc = name, family, build, desc
        self.opsets, self.rtol, self.atol = tuple(opsets), rtol, atol
        self.dynamic_axes = dynamic_axes


CASES = {}


def case(name, family, build, desc, **kw):
    assert name not in CASES, name
    CASES[name] = Case(name, family, build, desc, **kw)


def torch_mods():
    import torch
    import torchvision
    return torch, torchvision


# --------------------------------------------------------------------------
# torchvision architectures, smallest variant of each family, weights=None.


def tv_classifier(fn, size, **kw):
    def build():
        torch, tv = torch_mods()
        model = getattr(tv.models, fn)(weights=None, **kw)
        return model, (torch.randn(1, 3, size, size),)
    return build


CLASSIFIERS = [
    # (builder, input size, extra kwargs, note)
    ("resnet18", 64, {}, ""),
    ("resnext50_32x4d", 64, {}, ""),
    ("wide_resnet50_2", 64, {}, ""),
    ("vgg11", 224, {}, "224: AdaptiveAvgPool 7x7 exports only from a multiple"),
    ("vgg11_bn", 224, {}, "224: AdaptiveAvgPool 7x7 exports only from a multiple"),
    ("alexnet", 224, {}, "224: AdaptiveAvgPool 6x6 exports only from a multiple"),
    ("squeezenet1_0", 64, {}, ""),
    ("squeezenet1_1", 64, {}, ""),
    ("densenet121", 64, {}, ""),
    ("googlenet", 64, {"aux_logits": False, "init_weights": True}, ""),
    ("inception_v3", 80, {"aux_logits": False, "init_weights": True}, "75 is the minimum"),
    ("mobilenet_v2", 64, {}, ""),
    ("mobilenet_v3_small", 64, {}, ""),
    ("mnasnet0_5", 64, {}, ""),
    ("shufflenet_v2_x0_5", 64, {}, ""),
    ("efficientnet_b0", 64, {}, ""),
    ("efficientnet_v2_s", 64, {}, ""),
    ("regnet_x_400mf", 64, {}, ""),
    ("regnet_y_400mf", 64, {}, ""),
    ("convnext_tiny", 64, {}, ""),
    ("vit_b_16", 64, {"image_size": 64}, "image_size=64: 16 patches"),
    ("swin_t", 64, {}, ""),
    ("swin_v2_t", 64, {}, ""),
    ("maxvit_t", 224, {}, "224: the block partition needs it"),
]

for _fn, _size, _kw, _note in CLASSIFIERS:
    case(_fn, "classification", tv_classifier(_fn, _size, **_kw),
         "torchvision %s, 1x3x%dx%d%s" % (_fn, _size, _size, (", " + _note) if _note else ""),
         atol=1e-3)


SCORE_PARAMS = ("cls_logits", "cls_score", "classification_head", "objectness")


def spread_scores(model, inputs):
    """Random weights give every anchor nearly the same score, and the order
    of ties after TopK/NMS is not the same in two runtimes. Each score layer
    (in order) is rescaled until its output has a standard deviation of 2,
    with a zero bias, so that the kept boxes are well separated and PyTorch's
    outputs can be expected."""
    import torch
    layers = [(n, m) for n, m in model.named_modules()
              if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)) and any(k in n for k in SCORE_PARAMS)]
    model.eval()
    for _, m in layers:
        seen = []
        h = m.register_forward_hook(lambda mod, i, o: seen.append(o.detach().flatten()))
        with torch.no_grad():
            model(*inputs)
        h.remove()
        std = float(torch.cat(seen).std()) if seen else 0.0
        with torch.no_grad():
            if std > 0:
                m.weight.mul_(2.0 / std)
            if m.bias is not None:
                m.bias.zero_()
    return model


def calibrate_norms(model, inputs):
    """Random weights under BatchNorm's default running statistics (mean 0,
    variance 1) let activations shrink layer after layer: in
    fasterrcnn_mobilenet_v3_large_320_fpn the FPN features were 1e-8, every
    box head saw the same features, all 150 candidate scores lay within
    1e-7 of each other, and rounding chose the boxes (ORT, PyTorch and our
    evaluator kept 117, 117 and 119 of them, in different orders). Each
    BatchNorm's running statistics are set, in one forward pass in order,
    to the mean and variance of what it receives on the export's own input,
    as a trained network's are for its data."""
    import torch
    model.eval()

    def pre(mod, args):
        x = args[0]
        dims = [d for d in range(x.dim()) if d != 1]
        mod.running_mean.copy_(x.mean(dim=dims))
        mod.running_var.copy_(x.var(dim=dims, unbiased=False))

    hooks = [m.register_forward_pre_hook(pre) for m in model.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.track_running_stats]
    with torch.no_grad():
        model(*inputs)
    for h in hooks:
        h.remove()
    return model


def tv_detector(fn, size, **kw):
    def build():
        torch, tv = torch_mods()
        model = getattr(tv.models.detection, fn)(weights=None, weights_backbone=None, **kw)
        inputs = ([torch.rand(3, size, size)],)
        return spread_scores(calibrate_norms(model, inputs), inputs), inputs
    return build


# Detectors take a list of images and return boxes/labels/scores (+masks,
# keypoints) after NMS; the exporter needs opset 11 for that.
_SMALL = {"min_size": 128, "max_size": 128}
_TOP10 = {"detections_per_img": 10}
_RCNN10 = {"box_detections_per_img": 10}
DETECTORS = [
    ("ssd300_vgg16", 300, _TOP10),
    ("ssdlite320_mobilenet_v3_large", 320, _TOP10),
    ("retinanet_resnet50_fpn", 128, dict(_SMALL, **_TOP10)),
    ("fcos_resnet50_fpn", 128, dict(_SMALL, **_TOP10)),
    ("fasterrcnn_mobilenet_v3_large_320_fpn", 320, _RCNN10),
    ("maskrcnn_resnet50_fpn", 128, dict(_SMALL, **_RCNN10)),
    ("keypointrcnn_resnet50_fpn", 128, dict(_SMALL, **_RCNN10)),
]

for _fn, _size, _kw in DETECTORS:
    case(_fn, "detection", tv_detector(_fn, _size, **_kw),
         "torchvision %s, one 3x%dx%d image, 10 boxes after NMS, score layers spread" % (_fn, _size, _size),
         rtol=1e-3, atol=1e-3)


def tv_segmenter(fn, size):
    def build():
        torch, tv = torch_mods()
        model = getattr(tv.models.segmentation, fn)(weights=None, weights_backbone=None)
        return model, (torch.randn(1, 3, size, size),)
    return build


for _fn in ("fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"):
    case(_fn, "segmentation", tv_segmenter(_fn, 64),
         "torchvision %s, 1x3x64x64" % _fn, atol=1e-3)


def tv_video(fn, frames, size):
    def build():
        torch, tv = torch_mods()
        model = getattr(tv.models.video, fn)(weights=None)
        return model, (torch.randn(1, 3, frames, size, size),)
    return build


VIDEO = [
    ("r3d_18", 8, 32, ""),
    ("mc3_18", 8, 32, ""),
    ("r2plus1d_18", 8, 32, ""),
    ("s3d", 16, 224, ", AvgPool3d (2,7,7) needs 16x224x224"),
    ("mvit_v2_s", 16, 224, ", fixed 16x224x224"),
]
for _fn, _t, _s, _note in VIDEO:
    case(_fn, "video", tv_video(_fn, _t, _s),
         "torchvision %s, 1x3x%dx%dx%d%s" % (_fn, _t, _s, _s, _note), atol=1e-3)


def raft_small():
    torch, tv = torch_mods()

    class Raft(torch.nn.Module):
        # Three flow updates instead of 12: the same graph, a third of it.
        def __init__(self):
            super().__init__()
            self.raft = tv.models.optical_flow.raft_small(weights=None)

        def forward(self, a, b):
            return self.raft(a, b, num_flow_updates=3)
    # 128: at 64 the coarsest correlation level is 1x1 and PyTorch gives NaN
    return Raft(), (torch.rand(1, 3, 128, 128), torch.rand(1, 3, 128, 128))


case("raft_small", "flow", raft_small,
     "torchvision raft_small, two 1x3x128x128 frames, 3 flow updates (grid_sample)",
     atol=1e-3)

# --------------------------------------------------------------------------
# The module zoo: one torch.nn layer or functional per case.


def mod(make, *shapes, ints=None):
    """A builder from a module factory and input shapes (floats)."""
    def build():
        import torch
        m = make()
        ins = tuple(torch.randn(*s) for s in shapes)
        if ints:
            ins += tuple(torch.randint(0, hi, s) for hi, s in ints)
        return m, ins
    return build


def fn_module(f):
    """A module whose forward is the function f(*inputs)."""
    import torch

    class F(torch.nn.Module):
        def forward(self, *xs):
            return f(*xs)
    return F()


def zoo(name, make, shapes, desc, ints=None, **kw):
    case(name, "module", mod(make, *shapes, ints=ints), desc, **kw)


def fz(name, f, shapes, desc, ints=None, **kw):
    """A zoo case from a function of torch and the inputs."""
    def make():
        import torch
        return fn_module(lambda *xs: f(torch, *xs))
    zoo(name, make, shapes, desc, ints=ints, **kw)


def nn(cls, *a, **k):
    def make():
        import torch
        return getattr(torch.nn, cls)(*a, **k)
    return make


def seq(*makers):
    def make():
        import torch
        return torch.nn.Sequential(*[m() for m in makers])
    return make


# convolutions
zoo("conv1d", nn("Conv1d", 4, 8, 3, stride=2, padding=1), [(1, 4, 32)], "Conv1d k3 s2 p1")
zoo("conv2d", nn("Conv2d", 4, 8, 3, padding=1), [(1, 4, 16, 16)], "Conv2d k3 p1")
zoo("conv2d_dilated_grouped", nn("Conv2d", 8, 8, 3, padding=2, dilation=2, groups=4, stride=2),
    [(1, 8, 17, 17)], "Conv2d dilation 2 groups 4 stride 2")
zoo("conv2d_depthwise", nn("Conv2d", 8, 8, 3, padding=1, groups=8, bias=False),
    [(1, 8, 16, 16)], "depthwise Conv2d without bias")
zoo("conv2d_same", nn("Conv2d", 4, 6, (3, 5), padding="same"), [(1, 4, 15, 15)], "Conv2d padding='same'")
zoo("conv2d_reflect", nn("Conv2d", 4, 6, 3, padding=1, padding_mode="reflect"),
    [(1, 4, 12, 12)], "Conv2d padding_mode=reflect")
zoo("conv3d", nn("Conv3d", 3, 4, 3, padding=1, stride=(1, 2, 2)), [(1, 3, 6, 12, 12)], "Conv3d k3")
zoo("convtranspose1d", nn("ConvTranspose1d", 4, 3, 4, stride=2, padding=1), [(1, 4, 10)],
    "ConvTranspose1d k4 s2")
zoo("convtranspose2d", nn("ConvTranspose2d", 4, 3, 3, stride=2, padding=1, output_padding=1),
    [(1, 4, 8, 8)], "ConvTranspose2d s2 output_padding 1")
zoo("convtranspose2d_grouped", nn("ConvTranspose2d", 4, 4, 3, stride=2, groups=2, dilation=2),
    [(1, 4, 6, 6)], "ConvTranspose2d groups 2 dilation 2")
zoo("convtranspose3d", nn("ConvTranspose3d", 2, 3, 3, stride=2), [(1, 2, 3, 4, 4)], "ConvTranspose3d s2")

# pooling
zoo("maxpool1d", nn("MaxPool1d", 3, stride=2), [(1, 3, 17)], "MaxPool1d k3 s2")
zoo("maxpool2d_ceil", nn("MaxPool2d", 3, stride=2, ceil_mode=True), [(1, 3, 16, 16)], "MaxPool2d ceil_mode")
zoo("maxpool2d_pad_dilation", nn("MaxPool2d", 3, stride=1, padding=1, dilation=2),
    [(1, 3, 12, 12)], "MaxPool2d padding 1 dilation 2")
zoo("maxpool2d_indices", nn("MaxPool2d", 2, return_indices=True), [(1, 3, 8, 8)],
    "MaxPool2d return_indices (two outputs)")
zoo("maxpool3d", nn("MaxPool3d", 2), [(1, 2, 4, 8, 8)], "MaxPool3d k2")
zoo("avgpool1d", nn("AvgPool1d", 3, stride=2, padding=1), [(1, 3, 16)], "AvgPool1d p1")
zoo("avgpool2d_nopad", nn("AvgPool2d", 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    [(1, 3, 15, 15)], "AvgPool2d count_include_pad=False ceil_mode")
zoo("avgpool3d", nn("AvgPool3d", 2), [(1, 2, 4, 8, 8)], "AvgPool3d k2")
zoo("adaptive_avgpool1d", nn("AdaptiveAvgPool1d", 4), [(1, 3, 16)], "AdaptiveAvgPool1d 16->4")
zoo("adaptive_avgpool2d", nn("AdaptiveAvgPool2d", (2, 4)), [(1, 3, 8, 16)], "AdaptiveAvgPool2d ->2x4")
zoo("adaptive_avgpool2d_global", nn("AdaptiveAvgPool2d", 1), [(1, 3, 7, 9)], "AdaptiveAvgPool2d ->1")
zoo("adaptive_avgpool3d", nn("AdaptiveAvgPool3d", (1, 2, 2)), [(1, 2, 4, 8, 8)], "AdaptiveAvgPool3d")
zoo("adaptive_maxpool1d", nn("AdaptiveMaxPool1d", 4), [(1, 3, 16)], "AdaptiveMaxPool1d 16->4")
zoo("adaptive_maxpool2d", nn("AdaptiveMaxPool2d", 1), [(1, 3, 8, 8)], "AdaptiveMaxPool2d ->1")
zoo("adaptive_maxpool3d", nn("AdaptiveMaxPool3d", 1), [(1, 2, 4, 8, 8)], "AdaptiveMaxPool3d ->1")
zoo("lppool1d", nn("LPPool1d", 2, 3, stride=2), [(1, 3, 16)], "LPPool1d p=2")
zoo("lppool2d", nn("LPPool2d", 2, 2), [(1, 3, 8, 8)], "LPPool2d p=2")
zoo("maxunpool2d", lambda: _unpool(), [(1, 3, 8, 8)], "MaxPool2d indices then MaxUnpool2d")


def _unpool():
    import torch

    class U(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = torch.nn.MaxPool2d(2, return_indices=True)
            self.unpool = torch.nn.MaxUnpool2d(2)

        def forward(self, x):
            y, i = self.pool(x)
            return self.unpool(y, i)
    return U()


# normalisations
zoo("batchnorm1d", lambda: _bn("BatchNorm1d", 6), [(2, 6, 10)], "BatchNorm1d, running stats set")
zoo("batchnorm2d", lambda: _bn("BatchNorm2d", 4), [(2, 4, 6, 6)], "BatchNorm2d, running stats set")
zoo("batchnorm3d", lambda: _bn("BatchNorm3d", 3), [(1, 3, 4, 5, 5)], "BatchNorm3d, running stats set")
zoo("instancenorm1d", nn("InstanceNorm1d", 4, affine=True), [(2, 4, 12)], "InstanceNorm1d affine")
zoo("instancenorm2d", nn("InstanceNorm2d", 4), [(2, 4, 6, 6)], "InstanceNorm2d")
zoo("instancenorm3d", nn("InstanceNorm3d", 3, affine=True), [(1, 3, 4, 5, 5)], "InstanceNorm3d affine")
zoo("layernorm", nn("LayerNorm", [8]), [(2, 5, 8)], "LayerNorm last dim")
zoo("layernorm_2d", nn("LayerNorm", [4, 8], elementwise_affine=False), [(2, 4, 8)], "LayerNorm last two dims")
zoo("groupnorm", nn("GroupNorm", 2, 6), [(2, 6, 5, 5)], "GroupNorm 2 groups")
zoo("localresponsenorm", nn("LocalResponseNorm", 3), [(1, 6, 5, 5)], "LocalResponseNorm size 3")


def _bn(cls, n):
    import torch
    m = getattr(torch.nn, cls)(n)
    m.running_mean.uniform_(-1, 1)
    m.running_var.uniform_(0.5, 2)
    m.weight.data.uniform_(0.5, 1.5)
    m.bias.data.uniform_(-0.5, 0.5)
    return m


# recurrent layers
zoo("rnn_tanh", nn("RNN", 6, 8), [(5, 2, 6)], "RNN tanh, seq-first")
zoo("rnn_relu_stacked", nn("RNN", 6, 8, num_layers=2, nonlinearity="relu"), [(5, 2, 6)],
    "RNN relu, 2 layers")
zoo("gru", nn("GRU", 6, 8), [(5, 2, 6)], "GRU")
zoo("gru_bidir", nn("GRU", 6, 8, bidirectional=True), [(5, 2, 6)], "GRU bidirectional")
zoo("gru_batch_first_stacked_bidir", nn("GRU", 6, 8, num_layers=2, bidirectional=True, batch_first=True),
    [(2, 5, 6)], "GRU 2 layers bidirectional batch_first")
zoo("lstm", nn("LSTM", 6, 8), [(5, 2, 6)], "LSTM")
zoo("lstm_bidir", nn("LSTM", 6, 8, bidirectional=True), [(5, 2, 6)], "LSTM bidirectional")
zoo("lstm_stacked", nn("LSTM", 6, 8, num_layers=3), [(5, 2, 6)], "LSTM 3 layers")
zoo("lstm_batch_first", nn("LSTM", 6, 8, batch_first=True), [(2, 5, 6)], "LSTM batch_first")
zoo("lstm_states", lambda: _lstm_states(), [(5, 2, 6), (2, 2, 8), (2, 2, 8)],
    "LSTM 2 layers with initial h0, c0 as inputs")
zoo("lstm_proj", nn("LSTM", 6, 8, proj_size=4), [(5, 2, 6)], "LSTM proj_size 4")
zoo("lstmcell", nn("LSTMCell", 6, 8), [(3, 6)], "LSTMCell one step")
zoo("grucell", nn("GRUCell", 6, 8), [(3, 6)], "GRUCell one step")
zoo("lstm_dynamic_seq", nn("LSTM", 6, 8, batch_first=True), [(2, 5, 6)],
    "LSTM batch_first, batch and sequence dynamic",
    dynamic_axes={"input_0": {0: "batch", 1: "seq"}})



def _lstm_states():
    import torch

    class L(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(6, 8, num_layers=2)

        def forward(self, x, h0, c0):
            return self.lstm(x, (h0, c0))
    return L()


# transformers and attention
zoo("transformer_encoder_layer", nn("TransformerEncoderLayer", 16, 2, dim_feedforward=32, dropout=0.0),
    [(5, 2, 16)], "TransformerEncoderLayer d16 h2")
zoo("transformer_encoder_gelu_first", nn("TransformerEncoderLayer", 16, 4, dim_feedforward=32, dropout=0.0,
                                         activation="gelu", batch_first=True, norm_first=True),
    [(2, 5, 16)], "TransformerEncoderLayer gelu norm_first batch_first")
zoo("transformer_decoder_layer", nn("TransformerDecoderLayer", 16, 2, dim_feedforward=32, dropout=0.0),
    [(4, 2, 16), (5, 2, 16)], "TransformerDecoderLayer (tgt, memory)")
zoo("transformer_encoder_2layers", lambda: _encoder(), [(2, 6, 16)],
    "TransformerEncoder 2 layers with a causal mask")
zoo("transformer_full", nn("Transformer", 16, 2, 1, 1, 32, dropout=0.0), [(5, 2, 16), (4, 2, 16)],
    "nn.Transformer 1+1 layers")
zoo("mha_self", lambda: _mha(False), [(5, 2, 16)], "MultiheadAttention self-attention, weights out")
zoo("mha_kv", lambda: _mha(True), [(4, 2, 16), (6, 2, 12)],
    "MultiheadAttention kdim=vdim=12, key_padding_mask")


def _encoder():
    import torch

    class E(torch.nn.Module):
        def __init__(self):
            super().__init__()
            layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
            self.enc = torch.nn.TransformerEncoder(layer, 2)

            # a constant causal mask, as models keep it (a buffer)
            self.register_buffer("mask", torch.triu(torch.full((6, 6), float("-inf")), diagonal=1))

        def forward(self, x):
            return self.enc(x, mask=self.mask)
    return E()


def _mha(kv):
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if kv:
                self.att = torch.nn.MultiheadAttention(16, 4, kdim=12, vdim=12)
            else:
                self.att = torch.nn.MultiheadAttention(16, 4)

        def forward(self, q, k=None):
            if k is None:
                return self.att(q, q, q)
            pad = torch.zeros(k.shape[1], k.shape[0], dtype=torch.bool)
            pad[:, -1] = True
            return self.att(q, k, k, key_padding_mask=pad)[0]
    return M()


# interpolation (old exporter Upsample at opset 9, Resize after)
for _mode, _ac, _rank in (("nearest", None, 4), ("linear", False, 3), ("linear", True, 3),
                          ("bilinear", False, 4), ("bilinear", True, 4), ("bicubic", False, 4),
                          ("bicubic", True, 4), ("trilinear", False, 5), ("area", None, 4),
                          ("nearest-exact", None, 4)):
    _shape = {3: (1, 2, 7), 4: (1, 2, 5, 6), 5: (1, 2, 3, 4, 5)}[_rank]
    _nm = "interp_%s%s" % (_mode.replace("-", "_"), "" if _ac is None else ("_ac" if _ac else ""))
    fz(_nm + "_size", (lambda m, a, r: lambda t, x: t.nn.functional.interpolate(
        x, size=(x.shape[2:] if r == 0 else tuple(2 * d + 1 for d in x.shape[2:])), mode=m, align_corners=a))(
            _mode, _ac, 1), [_shape], "interpolate mode=%s align_corners=%s to size 2n+1" % (_mode, _ac))
    if _mode != "area":
        fz(_nm + "_scale", (lambda m, a: lambda t, x: t.nn.functional.interpolate(
            x, scale_factor=2.0 if a else 2.2, mode=m, align_corners=a))(_mode, _ac), [_shape],
           "interpolate mode=%s align_corners=%s scale_factor %s" % (_mode, _ac, "2" if _ac else "2.2"))
zoo("upsample_nearest_dynamic", lambda: seq(nn("Conv2d", 2, 2, 1), nn("Upsample", scale_factor=2))(),
    [(1, 2, 5, 6)], "Upsample nearest x2 after a conv, H and W dynamic (scales from Shape)",
    dynamic_axes={"input_0": {2: "h", 3: "w"}})
zoo("upsample_bilinear_dynamic", lambda: nn("Upsample", scale_factor=2.2, mode="bilinear")(),
    [(1, 2, 5, 6)], "Upsample bilinear x2.2, H and W dynamic",
    dynamic_axes={"input_0": {2: "h", 3: "w"}})

# padding
for _m in ("constant", "reflect", "replicate", "circular"):
    fz("pad_" + _m, (lambda m: lambda t, x: t.nn.functional.pad(
        x, (1, 2, 2, 1), mode=m, **({"value": 0.5} if m == "constant" else {})))(_m),
       [(1, 2, 5, 6)], "F.pad mode=%s (1,2,2,1)" % _m)
fz("pad_replicate_3d", lambda t, x: t.nn.functional.pad(x, (1, 1, 2, 0, 0, 1), mode="replicate"),
   [(1, 2, 3, 4, 5)], "F.pad replicate on a 5-D tensor")
zoo("zeropad2d_negative", nn("ZeroPad2d", (2, -1, 1, 0)), [(1, 2, 5, 6)], "ZeroPad2d with a negative (crop)")

# rearrangements and sampling
zoo("pixel_shuffle", nn("PixelShuffle", 2), [(1, 8, 3, 4)], "PixelShuffle 2")
zoo("pixel_unshuffle", nn("PixelUnshuffle", 2), [(1, 2, 6, 8)], "PixelUnshuffle 2")
for _m, _p, _ac in (("bilinear", "zeros", False), ("nearest", "border", True), ("bicubic", "reflection", False)):
    fz("grid_sample_%s_%s" % (_m, _p), (lambda m, p, a: lambda t, x, g: t.nn.functional.grid_sample(
        x, t.tanh(g) * 1.1, mode=m, padding_mode=p, align_corners=a))(_m, _p, _ac),
       [(1, 2, 6, 7), (1, 4, 5, 2)], "grid_sample mode=%s padding=%s align_corners=%s" % (_m, _p, _ac))
fz("affine_grid_sample", lambda t, x, th: t.nn.functional.grid_sample(
    x, t.nn.functional.affine_grid(th, [1, 2, 6, 6], align_corners=False), align_corners=False),
   [(1, 2, 6, 6), (1, 2, 3)], "affine_grid then grid_sample")

# einsum
for _eq, _shapes in (("bqd,bkd->bqk", [(2, 5, 8), (2, 6, 8)]),
                     ("bhqd,bhkd->bhqk", [(1, 2, 5, 4), (1, 2, 6, 4)]),
                     ("bhqk,bhkd->bhqd", [(1, 2, 5, 6), (1, 2, 6, 4)]),
                     ("ij,jk->ik", [(3, 4), (4, 5)]),
                     ("bij->bji", [(2, 3, 4)]),
                     ("i,i->", [(5,), (5,)]),
                     ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
                     ("nchw,nwhu->nchu", [(1, 2, 3, 4), (1, 4, 3, 5)]),
                     ("ii->i", [(4, 4)])):
    _nm = "einsum_" + _eq.replace(",", "_").replace("->", "_to_").rstrip("_") or "x"
    fz(_nm, (lambda e: lambda t, *xs: t.einsum(e, *xs))(_eq), _shapes, "einsum %s" % _eq)

# embeddings
zoo("embedding", nn("Embedding", 20, 8), [], "Embedding lookup", ints=[(20, (2, 5))])
zoo("embedding_padding_idx", nn("Embedding", 20, 8, padding_idx=0), [], "Embedding padding_idx 0",
    ints=[(20, (2, 5))])
zoo("embeddingbag_mean", lambda: _bag(), [], "EmbeddingBag mean over 2-D indices", ints=[(20, (3, 4))])
fz("one_hot", lambda t, i: t.nn.functional.one_hot(i, 7).float() * 2.0, [], "F.one_hot", ints=[(7, (2, 5))])


def _bag():
    import torch
    return torch.nn.EmbeddingBag(20, 8, mode="mean")


# scripted control flow: exported as Loop and If
def _script_loop():
    import torch

    class L(torch.nn.Module):
        def forward(self, x, n: int):
            for i in range(n):
                x = x * 0.9 + torch.tanh(x)
            return x
    return torch.jit.script(L())


def _script_while():
    import torch

    class W(torch.nn.Module):
        def forward(self, x):
            y = x
            i = 0
            while bool(y.abs().sum() > 1.0) and i < 10:
                y = y * 0.5
                i += 1
            return y
    return torch.jit.script(W())


def _script_if():
    import torch

    class I(torch.nn.Module):
        def forward(self, x):
            if bool(x.sum() > 0):
                return x * 2.0 + 1.0
            else:
                return x - 1.0
    return torch.jit.script(I())


def _script_loop_carried():
    import torch

    class S(torch.nn.Module):
        def forward(self, x):
            acc = torch.zeros_like(x[0])
            for i in range(x.shape[0]):
                acc = acc + x[i] * float(i + 1)
            return acc
    return torch.jit.script(S())


def _loop_build():
    import torch
    return _script_loop(), (torch.randn(2, 3), 3)


case("script_loop", "module", _loop_build, "torch.jit.script for-loop, trip count a rank-0 int input")
case("script_while", "module", mod(_script_while, (2, 3)), "torch.jit.script while-loop with a tensor condition")
case("script_if", "module", mod(_script_if, (2, 3)), "torch.jit.script if on a tensor condition")
case("script_loop_shape", "module", mod(_script_loop_carried, (4, 3)), "torch.jit.script loop over dim 0")

# activations
for _a in ("ReLU", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid",
           "Hardtanh", "ReLU6", "Softplus", "Softsign", "Tanhshrink", "Softshrink", "Hardshrink", "PReLU",
           "LogSigmoid", "Sigmoid", "Tanh", "Threshold", "Softmin"):
    _args = {"Threshold": (0.1, -1.0), "Softmin": (1,)}.get(_a, ())
    zoo("act_" + _a.lower(), nn(_a, *_args), [(2, 3, 4)], "nn.%s" % _a)
zoo("act_gelu_tanh", nn("GELU", approximate="tanh"), [(2, 3, 4)], "nn.GELU approximate=tanh")
zoo("act_glu", nn("GLU"), [(2, 3, 4)], "nn.GLU on the last dim")
zoo("softmax", nn("Softmax", 1), [(2, 3, 4)], "Softmax dim 1 (not the last)")
zoo("log_softmax", nn("LogSoftmax", -1), [(2, 3, 4)], "LogSoftmax last dim")

# reductions and selections
fz("reduce_sum_mean", lambda t, x: (x.sum(1), x.mean((1, 2), keepdim=True), x.sum()), [(2, 3, 4)],
   "sum, mean keepdim, full sum")
fz("reduce_max_min", lambda t, x: (x.amax(2), x.amin((0, 2)), x.max(1)[0], x.min(1)[1]), [(2, 3, 4)],
   "amax, amin, max values, min indices")
fz("reduce_prod_logsumexp", lambda t, x: (x.prod(1), t.logsumexp(x, 2)), [(2, 3, 4)], "prod, logsumexp")
fz("reduce_norm_var", lambda t, x: (t.norm(x, dim=2), x.norm(p=1, dim=1), x.var(2), x.std(1, unbiased=False)),
   [(2, 3, 4)], "L2/L1 norm, var, std")
fz("topk", lambda t, x: t.topk(x, 3, dim=1), [(2, 7)], "topk k=3 values and indices")
fz("topk_smallest", lambda t, x: t.topk(x, 2, dim=0, largest=False), [(5, 3)], "topk smallest on dim 0")
fz("sort", lambda t, x: t.sort(x, dim=-1, descending=True), [(3, 6)], "sort descending")
fz("argmax_argmin", lambda t, x: (x.argmax(1), x.argmin(-1, keepdim=True)), [(2, 5, 4)], "argmax/argmin")
fz("cumsum", lambda t, x: (t.cumsum(x, 1), t.cumsum(x, 0)), [(3, 5)], "cumsum on two dims")
fz("where_mask", lambda t, x, y: (t.where(x > 0, x, y), x.masked_fill(y < 0, -1.0)), [(3, 4), (3, 4)],
   "where and masked_fill")
fz("gather", lambda t, x, i: t.gather(x, 1, i), [(3, 5)], "torch.gather dim 1", ints=[(5, (3, 2))])
fz("scatter", lambda t, x, i: t.zeros(3, 5).scatter(1, i, x), [(3, 2)], "scatter into zeros",
   ints=[(5, (3, 2))])
fz("scatter_add", lambda t, x, i: t.ones(3, 5).scatter_add(1, i, x), [(3, 4)], "scatter_add",
   ints=[(5, (3, 4))])
fz("index_select", lambda t, x, i: (x.index_select(0, i), x[i]), [(6, 3)], "index_select and x[idx]",
   ints=[(6, (4,))])
fz("matmul_bmm", lambda t, a, b: (t.matmul(a, b), t.bmm(a, b)), [(2, 3, 4), (2, 4, 5)], "matmul and bmm")
fz("matmul_broadcast", lambda t, a, b: t.matmul(a, b), [(2, 1, 3, 4), (3, 4, 2)], "matmul with broadcast")
zoo("linear", nn("Linear", 8, 4), [(3, 8)], "Linear (Gemm)")
zoo("linear_3d", nn("Linear", 8, 4), [(2, 3, 8)], "Linear on a 3-D input (MatMul+Add)")
zoo("bilinear", nn("Bilinear", 4, 5, 3), [(2, 4), (2, 5)], "nn.Bilinear")
zoo("mlp", lambda: seq(nn("Linear", 16, 32), nn("ReLU"), nn("Linear", 32, 8))(), [(2, 8, 16)],
    "Linear-ReLU-Linear on [2,8,16] (MatMul)")
zoo("small_cnn", lambda: _small_cnn(), [(1, 3, 16, 16)], "Conv-ReLU-MaxPool-Conv-ReLU-GAP-Linear")


def _small_cnn():
    import torch
    n = torch.nn
    return n.Sequential(n.Conv2d(3, 8, 3, padding=1), n.ReLU(), n.MaxPool2d(2), n.Conv2d(8, 16, 3, padding=1),
                        n.ReLU(), n.AdaptiveAvgPool2d(1), n.Flatten(), n.Linear(16, 10))


fz("cat_split_stack", lambda t, a, b: (t.cat([a, b], 1), *t.split(a, [1, 2], 1), t.stack([a, b], 0)),
   [(2, 3, 4), (2, 3, 4)], "cat, split, stack")
fz("chunk_unbind", lambda t, x: (*x.chunk(2, -1), *x.unbind(0)), [(2, 3, 4)], "chunk and unbind")
fz("reshape_permute", lambda t, x: (x.permute(2, 0, 1).reshape(4, -1), x.flatten(1), x.view(2, 3, 2, 2)),
   [(2, 3, 4)], "permute, reshape, flatten, view")
fz("unflatten", lambda t, x: x.unflatten(2, (2, 2)), [(2, 3, 4)], "Tensor.unflatten")
fz("expand_repeat", lambda t, x: (x.expand(3, 2, 4), x.repeat(2, 1, 3), x.repeat_interleave(2, 1)),
   [(1, 2, 4)], "expand, repeat, repeat_interleave")
fz("slice_step", lambda t, x: (x[:, ::2], x[..., 1::3], x[1:, :-1]), [(3, 6, 7)], "slices with steps")
fz("flip_roll", lambda t, x: (x.flip(-1), t.roll(x, 2, 1)), [(2, 5, 3)], "flip and roll")
fz("tril_triu", lambda t, x: (t.tril(x), t.triu(x, 1)), [(4, 5)], "tril/triu")
fz("clamp_math", lambda t, x: (x.clamp(-0.5, 0.5), t.exp(x), t.log(x.abs() + 1), x.sqrt().nan_to_num(0.0),
                               t.sin(x), t.floor(x * 3), t.round(x * 3), t.sign(x), x.reciprocal(),
                               x.pow(3), t.erf(x), t.atan(x)), [(3, 4)], "elementwise math")
fz("compare_logic", lambda t, x, y: ((x > y) & (x > 0), (x == y) | (y < 0), ~(x >= 0.5), t.logical_xor(x > 0, y > 0)),
   [(3, 4), (3, 4)], "comparisons and logic")
fz("cosine_normalize", lambda t, a, b: (t.nn.functional.cosine_similarity(a, b), t.nn.functional.normalize(a),
                                        t.nn.functional.pairwise_distance(a, b)), [(3, 6), (3, 6)],
   "cosine_similarity, normalize, pairwise_distance")
fz("nonzero", lambda t, x: (x > 0).nonzero(), [(3, 4)], "nonzero (data-dependent shape)")
fz("masked_select", lambda t, x: x.masked_select(x > 0), [(3, 4)], "masked_select")
fz("arange_shape", lambda t, x: x + t.arange(x.shape[1]).float(), [(2, 5)], "arange from a shape, dynamic",
   dynamic_axes={"input_0": {1: "n"}})
fz("unique", lambda t, x: t.unique(x, sorted=True, return_inverse=True), [], "torch.unique with inverse",
   ints=[(5, (8,))])
fz("cast_int_float", lambda t, x: ((x * 4).long() + 1, (x * 4).int().float() / 4, x.half().float()),
   [(3, 4)], "casts through int64, int32, float16")
zoo("conv2d_dynamic", nn("Conv2d", 3, 4, 3, padding=1), [(1, 3, 8, 8)], "Conv2d with batch, H, W dynamic",
    dynamic_axes={"input_0": {0: "n", 2: "h", 3: "w"}})
zoo("dropout_eval", lambda: seq(nn("Dropout", 0.5), nn("AlphaDropout", 0.5), nn("Dropout2d"))(),
    [(2, 3, 4, 4)], "dropouts in eval mode (identity)")
zoo("flatten_linear_softmax", lambda: seq(nn("Flatten"), nn("Linear", 48, 5), nn("Softmax", -1))(),
    [(2, 3, 4, 4)], "Flatten-Linear-Softmax classifier head")


# --------------------------------------------------------------------------
# Exporting


def flatten(out):
    """PyTorch's outputs in the order the exporter flattens them."""
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res += flatten(o)
        return res
    if isinstance(out, (int, float, bool)):
        return [torch.tensor(out)]
    raise TypeError("output of type %s" % type(out).__name__)


def input_tensors(inputs):
    """The inputs in the order the exporter flattens them (lists inline)."""
    import torch
    res = []
    for x in inputs:
        if isinstance(x, (list, tuple)):
            res += input_tensors(x)
        elif isinstance(x, torch.Tensor):
            res.append(x)
        else:
            res.append(torch.tensor(x))
    return res


def input_arrays(inputs):
    return [t.detach().numpy() for t in input_tensors(inputs)]


def write_tensor(path, arr, name):
    from onnx import numpy_helper
    with open(path, "wb") as f:
        # np.array, not np.ascontiguousarray: that one turns a rank-0 value into [1]
        f.write(numpy_helper.from_array(np.array(arr, order="C"), name).SerializeToString())


def write_meta(d, meta):
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def write_file(d, model_bytes, inputs, outputs, meta):
    """Writes one model directory; meta.json last, so that it marks a whole one."""
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    if model_bytes is not None:   # None: the model is already there (a Core ML package)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(model_bytes)
    for k, (name, arr) in enumerate(inputs):
        write_tensor(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), arr, name)
    for k, (name, arr) in enumerate(outputs):
        write_tensor(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), arr, name)
    write_meta(d, meta)


def short_error(e):
    msg = str(e).strip().splitlines()
    text = (msg[0] if msg else "").split("  [Caused by")[0]
    # torch's messages put the reason on the first line; the rest is a trace
    if "bad_alloc" in text or "can't allocate memory" in text:
        text = "more than CORPUS_MEM_GB=%g GB of memory (%s)" % (MEM_GB, text[:120])
    return ("%s: %s" % (type(e).__name__, text))[:400]


def export_case(c, opsets, out, force=False):
    """Exports one case at the given opsets; returns a list of result dicts."""
    import torch
    import onnx
    torch.manual_seed(0)
    np.random.seed(0)
    results = []

    def fail(opset, stage, err, secs=0.0):
        for o in opset:
            results.append({"file": "%s_opset%d" % (c.name, o), "name": c.name, "opset": o,
                            "kind": "torch", "family": c.family, "stage": stage,
                            "error": err, "seconds": round(secs, 2)})
    t0 = time.time()
    try:
        model, inputs = c.build()
        if isinstance(model, torch.nn.Module):
            model.eval()
        with torch.no_grad():
            expected = flatten(model(*inputs))
    except Exception as e:  # noqa: BLE001 - recorded, not hidden
        fail(opsets, "build", short_error(e), time.time() - t0)
        return results
    build_secs = time.time() - t0
    arrays = input_arrays(inputs)
    in_names = ["input_%d" % i for i in range(len(arrays))]
    out_names = ["output_%d" % i for i in range(len(expected))]
    for opset in opsets:
        if not force and os.path.exists(os.path.join(out, "%s_opset%d" % (c.name, opset), "meta.json")):
            continue  # another run into the same folder wrote it meanwhile
        buf = io.BytesIO()
        t1 = time.time()
        try:
            # autograd on, as users export: under torch.no_grad() a batch_first
            # encoder layer takes a fused kernel the exporter does not know
            torch.onnx.export(model, inputs, buf, opset_version=opset, input_names=in_names,
                              output_names=out_names, dynamic_axes=c.dynamic_axes,
                              do_constant_folding=True)
        except Exception as e:  # noqa: BLE001
            fail([opset], "export", short_error(e), time.time() - t1)
            continue
        secs = time.time() - t1
        data = buf.getvalue()
        m = onnx.load_from_string(data)
        gins = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
        gouts = [o.name for o in m.graph.output]
        if len(gouts) != len(expected) or any(n not in in_names for n in gins):
            fail([opset], "outputs", "the exported graph has outputs %s, PyTorch gave %d; inputs %s"
                 % (gouts, len(expected), gins), secs)
            continue
        ins = [(n, arrays[in_names.index(n)]) for n in gins]
        outs = [(n, t.detach().numpy()) for n, t in zip(gouts, expected)]
        meta = {"name": c.name, "family": c.family, "kind": "torch", "opset": opset, "case": c.desc,
                "rtol": c.rtol, "atol": c.atol, "expected_by": "pytorch",
                "export_seconds": round(secs, 3), "build_seconds": round(build_secs, 3),
                "dynamic": bool(c.dynamic_axes), "torch": torch.__version__,
                "bytes": len(data)}
        write_file(os.path.join(out, "%s_opset%d" % (c.name, opset)), data, ins, outs, meta)
        results.append({"file": "%s_opset%d" % (c.name, opset), "name": c.name, "opset": opset,
                        "kind": "torch", "ok": True, "seconds": round(secs, 2)})
    return results


def done(out, fname, failures, force):
    if force:
        return False
    return fname in failures or os.path.exists(os.path.join(out, fname, "meta.json"))


# Memory one export may take (GB; CORPUS_MEM_GB). PyTorch 1.13's exporter
# needs more than 22 GB for mvit_v2_s: without a cap the kernel kills the
# worker, and a pool whose worker is killed waits forever for its result.
# With it the allocation fails and the export is recorded as failed.
MEM_GB = float(os.environ.get("CORPUS_MEM_GB", "9"))


def cap_memory():
    """Caps this process's data segment (heap and anonymous mappings,
    which is where torch's tensors live) at MEM_GB."""
    import resource
    cap = int(MEM_GB * (1 << 30))
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard == resource.RLIM_INFINITY or hard > cap:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap if hard != resource.RLIM_INFINITY else hard))


def run_case(args):
    name, opsets, out, force = args
    warnings.filterwarnings("ignore")
    cap_memory()
    import torch
    torch.set_num_threads(int(os.environ.get("CORPUS_THREADS", "1")))
    try:
        return export_case(CASES[name], opsets, out, force)
    except Exception as e:  # noqa: BLE001 - a bug of ours, still recorded
        return [{"file": "%s_opset%d" % (name, o), "name": name, "opset": o, "kind": "torch",
                 "family": CASES[name].family, "stage": "generator", "error": short_error(e)}
                for o in opsets]


# --------------------------------------------------------------------------
# Files other tools write, built from exported ones (see derive.py)

import derive  # noqa: E402  (beside this file)

DERIVED = derive.DERIVED

# Core ML packages coremltools' PyTorch front end makes (see ctpkg.py)
import ctpkg  # noqa: E402


def run_ct(args):
    """One package (in a pool worker or here): its result dict."""
    fname, out = args
    import torch
    torch.set_num_threads(int(os.environ.get("CORPUS_THREADS", "1")))
    try:
        return ctpkg.make(fname, out, CASES, sys.modules[__name__])
    except Exception as e:  # noqa: BLE001 - a bug of ours, still recorded
        name, _ = ctpkg.split(fname)
        return {"file": fname, "name": name, "opset": None, "kind": "coremltools",
                "family": "?", "stage": "generator", "error": short_error(e)}


# --------------------------------------------------------------------------
# The sample for `make check`: every family and every kind, about 2 minutes.

SAMPLE = [
    "resnet18_opset13", "mobilenet_v3_small_opset9", "squeezenet1_1_opset11",
    "fcos_resnet50_fpn_opset11", "lraspp_mobilenet_v3_large_opset13",
    "r3d_18_opset11", "raft_small_opset17",
    "lstm_bidir_opset13", "gru_batch_first_stacked_bidir_opset9", "convtranspose2d_opset9",
    "interp_bilinear_ac_size_opset11", "upsample_nearest_dynamic_opset9",
    "einsum_bqd_bkd_to_bqk_opset13", "grid_sample_bilinear_zeros_opset17", "script_loop_opset11",
    "script_if_opset13", "mha_self_opset13", "pad_reflect_opset11", "topk_opset11",
    "transformer_encoder_layer_opset13",
    "small_cnn_fp16_opset13", "interp_bilinear_ac_size_fp16_opset11",
    "small_cnn_qdq_opset13", "mlp_qoperator_opset13", "small_cnn_dynquant_opset13",
    "small_cnn_ct_fp32", "small_cnn_ct_fp16",
]


def split_file(fname):
    base, _, o = fname.rpartition("_opset")
    return base, int(o)


def plan(sel_only, sample):
    """The (case -> opsets), derived files and Core ML packages to make."""
    want_torch, want_derived = {}, []
    want_ct = [f for f in (SAMPLE if sample else ctpkg.files(CASES)) if ctpkg.split(f)
               and (not sel_only or any(s in f for s in sel_only))]
    if want_ct and not ctpkg.available():
        print("corpus: no Core ML packages (coremltools is not set up in %s)" % ctpkg.CT_DIR)
        want_ct = []
    if sample:
        for f in SAMPLE:
            if (sel_only and not any(s in f for s in sel_only)) or ctpkg.split(f):
                continue
            base, o = split_file(f)
            if base in CASES:
                want_torch.setdefault(base, set()).add(o)
            else:
                want_derived.append(base)
    else:
        for name, c in CASES.items():
            if not sel_only or any(s in name for s in sel_only):
                want_torch[name] = set(c.opsets)
        want_derived = [d for d in DERIVED if not sel_only or any(s in d for s in sel_only)]
    for d in want_derived:  # a derived file needs its source exported
        src, o = DERIVED[d].source
        want_torch.setdefault(src, set()).add(o)
    return want_torch, want_derived, want_ct


def load_failures(out):
    p = os.path.join(out, "failures.json")
    if os.path.exists(p):
        with open(p) as f:
            return {r["file"]: r for r in json.load(f)}
    return {}


def save_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def write_index(out, failures):
    files = []
    for d in sorted(os.listdir(out)):
        p = os.path.join(out, d, "meta.json")
        if os.path.exists(p):
            with open(p) as f:
                m = json.load(f)
            files.append({"dir": d, "name": m["name"], "family": m["family"], "kind": m["kind"],
                          "opset": m["opset"], "expected_by": m["expected_by"],
                          "export_seconds": m.get("export_seconds")})
    fails = sorted(failures.values(), key=lambda r: r["file"])
    import torch
    import onnx
    index = {"generator": "tests/corpus/gen.py", "torch": torch.__version__, "onnx": onnx.__version__,
             "models": len({f["name"] for f in files}), "file_count": len(files),
             "failure_count": len(fails), "files": files, "failed": fails}
    save_json(os.path.join(out, "index.json"), index)
    return index


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--sample", action="store_true", help="the fixed sample for make check")
    ap.add_argument("--only", nargs="+", default=[], help="names containing any SUBSTR")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--force", action="store_true", help="redo files already written or failed")
    ap.add_argument("--list", action="store_true", help="print the planned files and exit")
    ap.add_argument("--index-only", action="store_true", help="only rewrite index.json from what is in OUT")
    ap.add_argument("--reverse", action="store_true",
                    help="start from the end of the plan (a second run into the same folder meets the first)")
    a = ap.parse_args()
    want_torch, want_derived, want_ct = plan(a.only, a.sample)
    if a.list:
        for n in sorted(want_torch):
            print("\n".join("%s_opset%d" % (n, o) for o in sorted(want_torch[n])))
        for d in want_derived:
            print("%s_opset%d" % (d, DERIVED[d].source[1]))
        print("\n".join(want_ct))
        return 0
    os.makedirs(a.out, exist_ok=True)
    if a.index_only:
        return summary(a.out, None)
    failures = load_failures(a.out)
    t0 = time.time()
    tasks = []
    for name in sorted(want_torch):
        todo = [o for o in sorted(want_torch[name])
                if not done(a.out, "%s_opset%d" % (name, o), failures, a.force)]
        if todo:
            tasks.append((name, todo, a.out, a.force))
    # the large models first, so that a pool is not left waiting on one
    tasks.sort(key=lambda t: CASES[t[0]].family == "module")
    if a.reverse:
        tasks.reverse()
    if a.jobs > 1 and len(tasks) > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(a.jobs, maxtasksperchild=4) as pool:
            for r in pool.imap_unordered(run_case, tasks):
                record(a.out, r)
    else:
        os.environ.setdefault("CORPUS_THREADS", "2")
        for t in tasks:
            record(a.out, run_case(t))
    failures = load_failures(a.out)
    for d in want_derived:
        src, o = DERIVED[d].source
        if not done(a.out, "%s_opset%d" % (d, o), failures, a.force):
            record(a.out, [derive.make(d, a.out, write_file)])
    cts = [(f, a.out) for f in want_ct if not done(a.out, f, failures, a.force)]
    if a.jobs > 1 and len(cts) > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(a.jobs, maxtasksperchild=4) as pool:
            for r in pool.imap_unordered(run_ct, cts):
                record(a.out, [r])
    else:
        for t in cts:
            record(a.out, [run_ct(t)])
    return summary(a.out, t0)


def record(out, results):
    """Prints results and keeps failures.json current (an interrupted run, or
    another run into the same folder, loses nothing)."""
    report(results)
    failures = load_failures(out)
    for r in results:
        if r.get("ok"):
            failures.pop(r["file"], None)
        else:
            failures[r["file"]] = r
    save_json(os.path.join(out, "failures.json"), sorted(failures.values(), key=lambda r: r["file"]))


def summary(out, t0):
    index = write_index(out, load_failures(out))
    print("corpus: %d models, %d files, %d failed to export%s"
          % (index["models"], index["file_count"], index["failure_count"],
             "" if t0 is None else "; %.0f s this run" % (time.time() - t0)))
    return 0


def report(results):
    for r in results:
        if r.get("ok"):
            print("ok     %-50s %6.2f s%s" % (r["file"], r.get("seconds", 0),
                                              "  " + r["note"] if r.get("note") else ""), flush=True)
        else:
            print("FAILED %-50s %s: %s" % (r["file"], r.get("stage"), r.get("error")), flush=True)


if __name__ == "__main__":
    sys.exit(main())
