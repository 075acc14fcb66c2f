/*
 * coreml.c - what the Core ML export and import show the rest of the
 * product besides their two entry points (prefix cm_): the element type
 * correspondence and the retyping of an import beside its original.
 * The export is coreml/export.c, the import coreml/import.c; both drive
 * the per-family rules of coreml/rules.h.
 */
#include "coreml/coreml.h"

#include <stdlib.h>
#include <string.h>

/* ---- element types -------------------------------------------------------- */

int32_t cm_dtype_to_mil(int32_t d)
{
    switch (d) {
    case IR_FLOAT: return MIL_FP32;
    case IR_FLOAT16: return MIL_FP16;
    case IR_INT32: case IR_INT64: return MIL_INT32;
    case IR_INT8: return MIL_INT8;
    case IR_UINT8: return MIL_UINT8;
    case IR_INT16: return MIL_INT16;
    case IR_UINT16: return MIL_UINT16;
    case IR_BOOL: return MIL_BOOL;
    default: return 0;
    }
}

int32_t cm_dtype_to_onnx(int32_t d)
{
    switch (d) {
    case MIL_FP32: return IR_FLOAT;
    case MIL_FP16: return IR_FLOAT16;
    case MIL_INT32: return IR_INT32;
    case MIL_INT64: return IR_INT64;
    case MIL_INT8: return IR_INT8;
    case MIL_UINT8: return IR_UINT8;
    case MIL_INT16: return IR_INT16;
    case MIL_UINT16: return IR_UINT16;
    case MIL_BOOL: return IR_BOOL;
    default: return 0;
    }
}

/* ---- the import beside the original ------------------------------------------- */

/* Whether an import's boundary value of type `got` stands for the
 * original's `want`: Core ML's int32 for ONNX's int64, and fp32 for a bool
 * or a float16 (cm_io_dtype). */
static bool cm_narrowed(const IrType *got, const IrType *want)
{
    if (!got || !want || !want->has_elem_type)
        return false;
    int32_t g = got->elem_type, w = want->elem_type;
    return (g == IR_INT32 && w == IR_INT64) ||
           (g == IR_FLOAT && (w == IR_BOOL || w == IR_FLOAT16));
}

/* The declared type of a graph input or output, else its inferred one. */
static const IrType *cm_type_of(const IrValueInfo *vi)
{
    return vi->type && vi->type->has_elem_type ? vi->type : vi->value->type;
}

void cm_retype_like(IrModel *rt, const IrModel *orig)
{
    IrGraph *g = rt->graph;
    const IrGraph *og = orig->graph;
    /* the export's inputs are the original's without an initializer */
    for (size_t i = 0, j = 0; i < g->inputs.n; i++, j++) {
        while (j < og->inputs.n && ((const IrValueInfo *)og->inputs.p[j])->value->init)
            j++;
        if (j >= og->inputs.n)
            break;
        IrValueInfo *vi = g->inputs.p[i];
        const IrValueInfo *ov = og->inputs.p[j];
        const IrType *want = cm_type_of(ov);
        if (!cm_narrowed(vi->type, want))
            continue;
        IrValue *v = vi->value;
        char *nn = ir_graph_fresh_name(g, v->name);
        const char *in[1] = {v->name}, *out[1] = {nn};
        IrError err;
        IrNode *cast = ir_node_new(g, g->first, "Cast", "", nn, 1, in, 1, out, &err);
        free(nn);
        if (!cast)
            continue;
        ir_node_set_attr(cast, ir_attr_int("to", vi->type->elem_type));
        size_t nu = v->n_uses;
        IrUse *uses = mem_array(nu ? nu : 1, sizeof *uses);
        memcpy(uses, v->uses, nu * sizeof *uses);
        for (size_t k = 0; k < nu; k++)
            if (uses[k].node && uses[k].node != cast)
                ir_node_set_input(uses[k].node, uses[k].index, cast->out[0]);
        free(uses);
        vi->type->elem_type = want->elem_type;
    }
    for (size_t i = 0; i < g->outputs.n && i < og->outputs.n; i++) {
        IrValueInfo *vi = g->outputs.p[i];
        const IrValueInfo *ov = og->outputs.p[i];
        const IrType *want = cm_type_of(ov);
        if (!cm_narrowed(vi->type, want))
            continue;
        IrValue *v = vi->value;
        char *keep = mem_strdup(v->name), *nn = ir_graph_fresh_name(g, v->name);
        IrError err;
        if (ir_value_rename(v, nn, &err) == 0) {
            const char *in[1] = {nn}, *out[1] = {keep};
            IrNode *cast = ir_node_new(g, NULL, "Cast", "", keep, 1, in, 1, out, &err);
            if (cast) {
                ir_node_set_attr(cast, ir_attr_int("to", want->elem_type));
                ir_graph_point_output(g, i, cast->out[0]);
                vi->type->elem_type = want->elem_type;
            }
        }
        free(keep);
        free(nn);
    }
}
