/*
 * coreml/quant.c - Core ML lowering and raising of the quant family:
 * QuantizeLinear (quantize) and DequantizeLinear (dequantize), ops that
 * first exist at iOS17: a model holding them needs that target.
 *
 * Refused, and why: non-constant scales and zero points (MIL requires
 * them const); element types other than int8/uint8 (MIL's quantize makes
 * only those); a per-axis scale without a known rank.
 */
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int lower_quant(CmLower *c, const IrNode *n)
{
    bool q = !strcmp(n->op_type, "QuantizeLinear");
    const IrTensor *st = cml_const_tensor(n, 1);
    const IrTensor *zt = cml_has(n, 2) ? cml_const_tensor(n, 2) : NULL;
    if (!st || (cml_has(n, 2) && !zt))
        return cml_refuse(c, "scale or zero point is not a constant (MIL requires them const)");
    int32_t qt = q ? (zt && zt->has_data_type ? zt->data_type : IR_UINT8)
                   : cml_elem(n->in[0]);
    if (qt != IR_INT8 && qt != IR_UINT8)
        return cml_refuse(c, "quantized type %s: MIL quantizes to int8 and uint8 only",
                          ir_dtype_name(qt) ? ir_dtype_name(qt) : "?");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilTensor *s = cml_tensor(c, st), *z = s && zt ? cml_tensor(c, zt) : NULL;
    if (!s || (zt && !z)) {
        mil_tensor_free(s);
        return -1;
    }
    MilOp *op = cml_op(c, q ? "quantize" : "dequantize");
    mil_op_in(op, "input", x);
    mil_op_in_const(op, "scale", s);
    if (z)
        mil_op_in_const(op, "zero_point", z);
    if (s->rank == 1) {
        int64_t axis;
        if (!cml_axis(cml_attr_i(n, "axis", 1), cml_rank(n->in[0]), &axis)) {
            return cml_refuse(c, "axis out of range or rank unknown");
        }
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    }
    if (q)
        mil_op_in_const(op, "output_dtype", mil_tensor_string(qt == IR_INT8 ? "int8" : "uint8"));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule qt_lower[] = {
    {"QuantizeLinear", lower_quant}, {"DequantizeLinear", lower_quant},
};

static int raise_quant(CmRaise *r, const MilOp *op)
{
    bool q = !strcmp(op->type, "quantize");
    const char *in[3] = {cmr_in(r, op, "input", 0), cmr_in(r, op, "scale", 0),
                         cmr_in(r, op, "zero_point", 0)};
    if (q && !in[2]) {
        /* ONNX's absent zero point means uint8; MIL says the type itself */
        const char *dt = cmr_string(cmr_const(r, op, "output_dtype"));
        if (dt && !strcmp(dt, "int8")) {
            MilTensor *z = mil_tensor_new(MIL_INT8, 0, NULL, NULL);
            in[2] = cmr_init_tensor(r, z);
            mil_tensor_free(z);
        }
    }
    IrNode *node;
    if (cmr_simple(r, op, q ? "QuantizeLinear" : "DequantizeLinear", in[2] ? 3 : 2, in,
                   &node) < 0)
        return -1;
    const MilTensor *a = cmr_const(r, op, "axis");
    int64_t *v;
    size_t nv;
    if (a && cmr_ints(a, &v, &nv)) {
        if (nv == 1)
            ir_node_set_attr(node, ir_attr_int("axis", v[0]));
        free(v);
    }
    return 0;
}

static const CmRaiseRule qt_raise[] = {
    {"quantize", raise_quant}, {"dequantize", raise_quant},
};

CM_FAMILY(cm_family_quant, "quant", qt_lower, qt_raise);
