/*
 * coreml/sample.c - Core ML lowering and raising of the sample family:
 * GridSample as MIL's resample, and back.
 *
 * MIL facts (coremltools' iOS15 resample; iOS16 adds fp16 coordinates):
 * x [B, C, H, W] (fp16/fp32), coordinates [B, H2, W2, 2] as (x, y) pairs,
 * output [B, C, H2, W2]; sampling_mode "bilinear" or "nearest" (no cubic);
 * padding_mode "constant" (padding_value), "border", "reflection" (about
 * the edge pixels' centres: |1,2,3| -> 2,3,2,1,2,3,2,1) or "symmetric"
 * (about the image's edges: |1,2,3| -> 3,2,1,1,2,3,3,2,1); coordinates_mode
 * "normalized_minus_one_to_one" (ONNX's grid), "normalized_zero_to_one" or
 * "unnormalized"; align_corners as ONNX's.
 *
 * ONNX's reflection reflects about the extreme coordinates -1 and 1, which
 * are the corner pixels' centres with align_corners (MIL's "reflection")
 * and the image's edges without it (MIL's "symmetric"); coremltools' own
 * PyTorch front end maps grid_sample's reflection the same way.
 *
 * Refused, and why: cubic modes (resample has none), X of a rank other
 * than 4 (GridSample-20's 3-D or 5-D sampling; resample samples images
 * only), element types other than fp16/fp32. Raising refuses what
 * GridSample cannot say: a constant padding other than 0, reflection
 * without align_corners and symmetric with it (the other edge),
 * unnormalized coordinates; and affine (an affine warp: ONNX's AffineGrid
 * is opset 20).
 */
#include <stdbool.h>
#include <string.h>

#include "coreml/rules.h"

static const CmMap sp_modes[] = {
    {"bilinear", "bilinear"}, {"linear", "bilinear"}, {"nearest", "nearest"},
};

static int lower_grid_sample(CmLower *c, const IrNode *n)
{
    char mbuf[32], pbuf[32];
    const char *mode = cml_attr_s(n, "mode", mbuf, sizeof mbuf);
    const char *pad = cml_attr_s(n, "padding_mode", pbuf, sizeof pbuf);
    bool align = cml_attr_i(n, "align_corners") != 0;
    const CmMap *m = cm_map_onnx(sp_modes, sizeof sp_modes / sizeof sp_modes[0], mode);
    if (!m)
        return cml_refuse(c, "mode '%s': MIL's resample samples bilinear or nearest only",
                          mode);
    const char *mil_pad = !strcmp(pad, "zeros") ? "constant"
                        : !strcmp(pad, "border") ? "border"
                        : !strcmp(pad, "reflection") ? (align ? "reflection" : "symmetric")
                        : NULL;
    if (!mil_pad)
        return cml_refuse(c, "padding_mode '%s' is not one ONNX defines", pad);
    if (cml_rank(n->in[0]) != 4 || cml_rank(n->in[1]) != 4)
        return cml_refuse(c, "X of rank %d: MIL's resample samples 2-D images only (rank 4)",
                          cml_rank(n->in[0]));
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    int32_t gt = cm_dtype_to_mil(cml_elem(n->in[1]));
    if ((dt != MIL_FP32 && dt != MIL_FP16) || (gt != MIL_FP32 && gt != MIL_FP16))
        return cml_refuse(c, "X and grid must be fp16 or fp32");
    const char *x = cml_in(c, n, 0), *grid = x ? cml_in(c, n, 1) : NULL;
    if (!grid)
        return -1;
    MilOp *op;
    if (gt == MIL_FP16) {
        /* iOS15's resample takes fp32 coordinates only */
        op = cml_op(c, "cast");
        mil_op_in(op, "x", grid);
        mil_op_in_const(op, "dtype", mil_tensor_string("fp32"));
        grid = cml_tmp(c, op, MIL_FP32, 4, NULL);
    }
    op = cml_op(c, "resample");
    mil_op_in(op, "x", x);
    mil_op_in(op, "coordinates", grid);
    mil_op_in_const(op, "sampling_mode", mil_tensor_string(m->mil));
    mil_op_in_const(op, "padding_mode", mil_tensor_string(mil_pad));
    mil_op_in_const(op, "padding_value", cml_scalar(dt, 0));
    mil_op_in_const(op, "coordinates_mode", mil_tensor_string("normalized_minus_one_to_one"));
    mil_op_in_const(op, "align_corners", mil_tensor_scalar_bool(align));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule sp_lower[] = {
    {"GridSample", lower_grid_sample},
};

/* ---- raising -------------------------------------------------------------------- */

/* ONNX's padding_mode for MIL's padding, or NULL when GridSample has none. */
static const char *sp_onnx_pad(CmRaise *r, const MilOp *op, const char *pad, bool align)
{
    double v;
    if (!strcmp(pad, "constant"))
        return !cmr_const(r, op, "padding_value") ||
                       (cmr_float(cmr_const(r, op, "padding_value"), &v) && v == 0)
                   ? "zeros" : NULL;
    if (!strcmp(pad, "border"))
        return "border";
    if (!strcmp(pad, align ? "reflection" : "symmetric"))
        return "reflection";
    return NULL;
}

/* The coordinates as ONNX's grid in [-1, 1]: zero-to-one ones times 2
 * minus 1 (computed in float32, cast first when they are not). */
static const char *sp_grid(CmRaise *r, const MilOp *op, const char *cmode)
{
    const char *g = cmr_in(r, op, "coordinates", 0);
    if (!g || !strcmp(cmode, "normalized_minus_one_to_one"))
        return g;
    const MilInput *in = mil_op_input(op, "coordinates");
    const MilArg *a = in && in->n_args ? &in->args[0] : NULL;
    if (!a || a->value) {
        cmr_fail(r, "coordinates are not a value");
        return NULL;
    }
    IrNode *node;
    const char *f = cmr_tmp(r, "grid_f32");
    const char *i1[1] = {g}, *o1[1] = {f};
    if (cmr_node(r, "Cast", 1, i1, 1, o1, &node) < 0)
        return NULL;
    ir_node_set_attr(node, ir_attr_int("to", IR_FLOAT));
    float two = 2, one = 1;
    const char *d = cmr_tmp(r, "grid_x2"), *o = cmr_tmp(r, "grid");
    const char *i2[2] = {f, cmr_init_f32(r, &two, 1, true)}, *o2[1] = {d};
    const char *i3[2] = {d, cmr_init_f32(r, &one, 1, true)}, *o3[1] = {o};
    if (cmr_node(r, "Mul", 2, i2, 1, o2, NULL) < 0 || cmr_node(r, "Sub", 2, i3, 1, o3, NULL) < 0)
        return NULL;
    return o;
}

static int raise_resample(CmRaise *r, const MilOp *op)
{
    const char *smode = cmr_string(cmr_const(r, op, "sampling_mode"));
    const char *pad = cmr_string(cmr_const(r, op, "padding_mode"));
    const char *cmode = cmr_string(cmr_const(r, op, "coordinates_mode"));
    bool align = cmr_bool(r, op, "align_corners", false);
    if (!smode || !pad || !cmode)
        return cmr_fail(r, "sampling_mode, padding_mode or coordinates_mode not constant");
    const CmMap *m = cm_map_mil(sp_modes, sizeof sp_modes / sizeof sp_modes[0], smode);
    if (!m)
        return cmr_fail(r, "sampling_mode '%s' has no GridSample mode", smode);
    const char *opad = sp_onnx_pad(r, op, pad, align);
    if (!opad)
        return cmr_fail(r, "padding_mode '%s'%s has no GridSample padding_mode", pad,
                        !strcmp(pad, "constant") ? " with a value other than 0"
                        : align ? " with align_corners" : " without align_corners");
    if (strcmp(cmode, "normalized_minus_one_to_one") && strcmp(cmode, "normalized_zero_to_one"))
        return cmr_fail(r, "coordinates_mode '%s' is not raised", cmode);
    const char *in[2] = {cmr_in(r, op, "x", 0), sp_grid(r, op, cmode)};
    if (!in[1])
        return -1;
    IrNode *node;
    if (cmr_simple(r, op, "GridSample", 2, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_string("mode", m->onnx));
    ir_node_set_attr(node, ir_attr_string("padding_mode", opad));
    ir_node_set_attr(node, ir_attr_int("align_corners", align));
    return 0;
}

static int refuse_affine(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: an affine warp of an image; ONNX's AffineGrid is "
                       "opset 20, past the import's %d", CM_ONNX_OPSET);
}

static const CmRaiseRule sp_raise[] = {
    {"affine", refuse_affine},
    {"resample", raise_resample},
};

CM_FAMILY(cm_family_sample, "sample", sp_lower, sp_raise);
