/*
 * export.c - ONNX -> Core ML ML Program (cm_export): inputs, the nodes
 * through their family rules, outputs, then the fixes Apple's loader
 * needs (constant parameters, hoisted consts, boundary types).
 */
#include "coreml/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/infer.h"
#include "eval/eval.h"
#include "coreml/milops.h"
#include "coreml/mlpackage.h"

/* ---- export ------------------------------------------------------------------- */

/* Whether every output of n is a known constant (shape arithmetic):
 * such a node is not lowered; its values become consts where read. */
static bool cm_folded(const IrNode *n)
{
    if (!strcmp(n->op_type, "Constant"))
        return true;
    if (!n->n_out)
        return false;
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i] && !cml_known(n->out[i]))
            return false;
    return true;
}

static int cm_lower_node(CmLower *c, const IrNode *n)
{
    c->node = n;
    if (ir_domain_norm(n->domain)[0])
        return cml_refuse(c, "domain '%s' has no Core ML lowering", n->domain);
    /* a control op's subgraphs are its rule's business */
    bool ctl = (os_op_flags("", n->op_type) & OS_F_CONTROL) && cm_lower_rule(n->op_type);
    for (size_t i = 0; i < n->n_attr && !ctl; i++)
        if (n->attr[i]->g || n->attr[i]->n_graphs)
            return cml_refuse(c, "subgraphs of %s are not lowered yet (If's, Loop's and "
                              "Scan's are)", n->op_type);
    CmLowerFn fn = cm_lower_rule(n->op_type);
    if (!fn)
        return cml_refuse(c, "no Core ML lowering for %s", n->op_type);
    int rc = fn(c, n);
    if (rc == 0 && c->failed)
        rc = -1;
    return rc;
}

static void cm_feature(MilFeature *f, const char *name, const MilType *t)
{
    f->name = mem_strdup(name);
    f->type = mil_type_copy(t);
    if (t->dim_names) {
        f->range_lo = mem_array((size_t)t->rank, sizeof *f->range_lo);
        f->range_hi = mem_array((size_t)t->rank, sizeof *f->range_hi);
        for (int i = 0; i < t->rank; i++) {
            bool sym = t->dim_names[i] != NULL || t->dims[i] < 0;
            f->range_lo[i] = sym ? 1 : t->dims[i];
            f->range_hi[i] = sym ? -1 : t->dims[i];
        }
    }
}

/* The user-defined metadata key prefix under which the export records
 * the graph's name of each input or output the package names otherwise
 * (key: prefix + package name, value: the ONNX name); the import gives
 * the names back from it. */

static void cm_meta_add(MilModel *mm, const char *key, const char *val)
{
    mm->meta_keys = mem_grow(mm->meta_keys, mm->n_meta + 1, sizeof *mm->meta_keys);
    mm->meta_values = mem_grow(mm->meta_values, mm->n_meta + 1, sizeof *mm->meta_values);
    mm->meta_keys[mm->n_meta] = mem_strdup(key);
    mm->meta_values[mm->n_meta++] = mem_strdup(val);
}

/* Notes in r (and, for a renaming, in mm's metadata) an input or output
 * (onnx: the graph's name, mil: the package's) that crosses renamed or as
 * [1] for a scalar. */
static void cm_io_note(CmReport *r, MilModel *mm, bool input, const char *onnx,
                       const char *mil, bool scalar)
{
    if (!scalar && !strcmp(onnx, mil))
        return;
    if (strcmp(onnx, mil)) {
        char *key = mem_alloc(sizeof CM_NAME_KEY + strlen(mil));
        memcpy(key, CM_NAME_KEY, sizeof CM_NAME_KEY - 1);
        strcpy(key + sizeof CM_NAME_KEY - 1, mil);
        cm_meta_add(mm, key, onnx);
        free(key);
    }
    if (r->n_io_notes++ >= CM_MAX_IO_NOTES)
        return;
    CmIoNote *e = &r->io_notes[r->n_io_notes - 1];
    snprintf(e->onnx, sizeof e->onnx, "%s", onnx);
    snprintf(e->mil, sizeof e->mil, "%s", mil);
    e->input = input;
    e->scalar = scalar;
}

static int cm_export_inputs(CmLower *c, MilFunction *fn, MilModel *mm)
{
    const IrGraph *g = c->g;
    mm->in = mem_array(g->inputs.n ? g->inputs.n : 1, sizeof *mm->in);
    for (size_t i = 0; i < g->inputs.n; i++) {
        const IrValueInfo *vi = g->inputs.p[i];
        const IrValue *v = vi->value;
        /* An input with an initializer (IR 3 listed every weight as an
         * input) is a const, as coremltools makes it: Core ML has no
         * input with a default value. */
        if (v->init)
            continue;
        MilType t = cml_type(v);
        if (!t.dtype || t.rank < 0 || (!mlp_array_code(t.dtype) && t.dtype != MIL_BOOL)) {
            int32_t d = cml_elem(v);
            mil_type_clear(&t);
            return cml_refuse(c, "graph input '%s' (%s) has no Core ML multi-array type%s",
                              v->name, d && ir_dtype_name(d) ? ir_dtype_name(d) : "unknown",
                              d == IR_DOUBLE ? " (float64 is refused, not narrowed)" : "");
        }
        char *name = cml_fresh(c, v->name);
        mil_function_input(fn, name, &t);
        cm_feature(&mm->in[mm->n_in++], name, &t);
        cm_io_note(c->r, mm, true, v->name, name, t.rank == 0);
        cml_bind(c, v->name, name);
        free(name);
        mil_type_clear(&t);
    }
    return 0;
}

static int cm_export_outputs(CmLower *c, MilFunction *fn, MilModel *mm)
{
    const IrGraph *g = c->g;
    c->node = NULL;
    mm->out = mem_array(g->outputs.n ? g->outputs.n : 1, sizeof *mm->out);
    for (size_t i = 0; i < g->outputs.n; i++) {
        const IrValue *v = ((const IrValueInfo *)g->outputs.p[i])->value;
        const char *name = cml_lookup(c, v->name);
        if (!name) {
            const IrTensor *t = cml_known(v);
            if (!t)
                return cml_refuse(c, "graph output '%s' has no Core ML value", v->name);
            name = cml_const_value(c, v, t);
            if (!name)
                return -1;
        }
        /* An output that is an input, or listed twice, goes through an
         * identity so that each output is one op's own value. */
        bool dup = v->kind == IR_VAL_INPUT;
        for (size_t k = 0; k < fn->block->n_out; k++)
            dup |= !strcmp(fn->block->out[k], name);
        const MilType *t = mil_function_type(fn, name);
        if (!t)
            return cml_refuse(c, "graph output '%s' has no type", v->name);
        if (dup) {
            MilOp *op = cml_op(c, "identity");
            mil_op_in(op, "x", name);
            char base[300];
            snprintf(base, sizeof base, "%s_out", v->name);
            char *nn = cml_fresh(c, base);
            mil_op_out(op, nn, t);
            free(nn);
            name = op->out[0].name;
            t = &op->out[0].type;
        }
        if (!mlp_array_code(t->dtype) && t->dtype != MIL_BOOL)
            return cml_refuse(c, "graph output '%s' is %s; a Core ML model's outputs are "
                              "multi-arrays of fp16, fp32, fp64, int32 or int8", v->name,
                              mil_dtype_name(t->dtype) ? mil_dtype_name(t->dtype) : "?");
        mil_block_output(fn->block, name);
        cm_feature(&mm->out[mm->n_out++], name, t);
        cm_io_note(c->r, mm, false, v->name, name, false);
    }
    return 0;
}

static int cm_export_nodes(CmLower *c, const IrGraph *g)
{
    IR_FOR_NODES(g, n) {
        if (cm_folded(n)) {
            c->r->n_folded++;
            continue;
        }
        if (cm_lower_node(c, n) < 0)
            return -1;
        c->r->n_nodes++;
    }
    return 0;
}

/* Whether value `name` is an output of an op of b. */
static bool cm_block_defines(const MilBlock *b, const char *name)
{
    for (size_t i = 0; i < b->n_ops; i++)
        for (size_t k = 0; k < b->ops[i]->n_out; k++)
            if (!strcmp(b->ops[i]->out[k].name, name))
                return true;
    return false;
}

int cml_lower_graph(CmLower *c, const IrGraph *g, MilBlock *b)
{
    MilBlock *outer = c->b;
    const IrNode *holder = c->node;
    c->b = b;
    int rc = cm_export_nodes(c, g);
    for (size_t i = 0; rc == 0 && i < g->outputs.n; i++) {
        const IrValue *v = ((const IrValueInfo *)g->outputs.p[i])->value;
        c->node = holder;
        const char *name = cml_lookup(c, v->name);
        const IrTensor *t = name ? NULL : cml_known(v);
        if (!name && t)
            name = cml_const_value(c, v, t);
        if (!name) {
            rc = cml_refuse(c, "subgraph output '%s' has no Core ML value", v->name);
            break;
        }
        if (!cm_block_defines(b, name)) {
            MilType ty = cml_type(v);
            MilOp *op = cml_op(c, "identity");
            mil_op_in(op, "x", name);
            name = cml_tmp(c, op, ty.dtype, ty.rank, ty.dims);
            mil_type_clear(&ty);
        }
        mil_block_output(b, name);
    }
    c->b = outer;
    c->node = holder;
    return rc == 0 && !c->failed ? 0 : -1;
}

/* The names of the const ops of the function's block (consts all go
 * there), so that each argument is judged in one look-up: a program of
 * 100k convs would otherwise scan the block once per weight. */
static void cm_const_names(const MilBlock *root, KsSet *set)
{
    for (size_t j = 0; j < root->n_ops; j++)
        if (!strcmp(root->ops[j]->type, "const")) {
            const char *k = root->ops[j]->out[0].name;
            ks_add(set, &k, 1, 0);
        }
}

/* Whether every argument of `in` is constant: an immediate value or the
 * output of a const op in `consts`. */
static bool cm_arg_const(const KsSet *consts, const MilInput *in)
{
    for (size_t a = 0; a < in->n_args; a++) {
        const MilArg *arg = &in->args[a];
        const char *k = arg->name;
        if (!arg->value && !(k && ks_find(consts, &k, 1, NULL)))
            return false;
    }
    return true;
}

/* Whether `param` of op must be constant at target t (unknown: no). */
static bool cm_param_const(const char *op, const char *param, int t)
{
    const MilOpSchema *s = milop_find(op, t);
    for (size_t i = 0; s && i < s->n_params; i++)
        if (!strcmp(s->params[i].name, param))
            return s->params[i].is_const;
    return false;
}

/* Raises c->need until no op binds a non-constant value to a parameter its
 * version takes only as a constant (conv's bias is const at iOS15 and not
 * from iOS17); refuses when no target, or none within the limit, takes it. */
static int cm_const_params(CmLower *c, const MilBlock *b, const KsSet *consts)
{
    for (size_t i = 0; i < b->n_ops; i++) {
        const MilOp *op = b->ops[i];
        for (size_t k = 0; k < op->n_blocks; k++)
            if (cm_const_params(c, op->blocks[k], consts) < 0)
                return -1;
        for (size_t k = 0; k < op->n_in; k++) {
            int t = c->limit >= 0 ? c->limit : c->need;
            if (!cm_param_const(op->type, op->in[k].param, t) ||
                cm_arg_const(consts, &op->in[k]))
                continue;
            int ok = -1;
            for (int u = t + 1; u < (int)mil_targets_n && ok < 0; u++)
                if (milop_find(op->type, u) && !cm_param_const(op->type, op->in[k].param, u))
                    ok = u;
            const IrNode *n = op->origin;
            if (ok < 0 || c->limit >= 0) {
                cml_note_failure(c->r, n, op->type, ok, ok < 0 ? "constant-parameter" : "target");
                return ir_fail(c->err, "node '%s' (%s-%d): MIL op '%s': parameter '%s' is not "
                               "constant; %s takes it only as a constant%s%s",
                               n && n->name ? n->name : "", n ? n->op_type : "",
                               n ? cml_onnx_version(n) : 0, op->type, op->in[k].param,
                               mil_targets[t].name,
                               ok < 0 ? ", and so does every later target" : "; first target "
                               "that takes it: ", ok < 0 ? "" : mil_targets[ok].name);
            }
            c->need = ok;
            snprintf(c->r->forced_op, sizeof c->r->forced_op, "%s", op->type);
            snprintf(c->r->forced_node, sizeof c->r->forced_node, "%s",
                     n && n->name ? n->name : "");
            snprintf(c->r->forced_onnx_op, sizeof c->r->forced_onnx_op, "%s",
                     n ? n->op_type : "");
        }
    }
    return 0;
}

/* An immediate argument big enough for weight.bin becomes a const op at
 * the start of the function's block (*at: where the next goes): the
 * package writer keeps immediates in model.mlmodel and sends only consts
 * to weight.bin, and the rule, as coremltools', is that every
 * weight above a small size lives there (Gemm's weight, transposed at
 * export, was a 5 MB immediate in MobileNetV2's model.mlmodel). */
static void cm_hoist_block(CmLower *c, MilBlock *b, int spec, size_t *at)
{
    MilBlock *root = c->root;
    for (size_t i = 0; i < b->n_ops; i++) {
        MilOp *op = b->ops[i];
        for (size_t k = 0; k < op->n_blocks; k++)
            cm_hoist_block(c, op->blocks[k], spec, at);
        for (size_t k = 0; k < op->n_in; k++)
            for (size_t a = 0; a < op->in[k].n_args; a++) {
                MilArg *arg = &op->in[k].args[a];
                if (!arg->value || !mlp_uses_blob(arg->value, spec, 0))
                    continue;
                char *name = cml_fresh(c, op->name ? op->name : "const");
                MilOp *cop = mil_const_add(root, name, arg->value);
                free(name);
                arg->value = NULL;
                arg->name = mem_strdup(cop->out[0].name);
                c->r->n_ops++;
                c->r->n_consts++;
                memmove(&root->ops[*at + 1], &root->ops[*at],
                        (root->n_ops - 1 - *at) * sizeof *root->ops);
                root->ops[(*at)++] = cop;
                if (b == root)
                    i++;    /* the op moved up by the one inserted */
            }
    }
}

/* The type an input or output of function main takes in the model
 * description at specification version spec, 0 for its own: Core ML's
 * multi-arrays hold fp32 and int32, fp16 only from iOS16 (specification
 * 7); a bool, or an fp16 below iOS16, crosses the boundary as fp32
 * through a cast inside the program, as coremltools makes it
 * (adjust_io_to_supported_types). Both casts are exact: bool <-> 0/1,
 * fp16 -> fp32 widens, and an fp32 input is rounded to fp16 where the ONNX
 * model took fp16 already. */
static int32_t cm_io_dtype(int32_t d, int spec)
{
    return d == MIL_BOOL || (d == MIL_FP16 && spec < 7) ? MIL_FP32 : 0;
}

/* Every argument naming `from` in b and the blocks inside it, and b's
 * outputs, name `to` instead (export names are unique in the function). */
static void cm_rename_uses(MilBlock *b, const char *from, const char *to)
{
    for (size_t i = 0; i < b->n_ops; i++) {
        MilOp *op = b->ops[i];
        for (size_t k = 0; k < op->n_in; k++)
            for (size_t a = 0; a < op->in[k].n_args; a++) {
                MilArg *arg = &op->in[k].args[a];
                if (arg->name && !strcmp(arg->name, from)) {
                    free(arg->name);
                    arg->name = mem_strdup(to);
                }
            }
        for (size_t k = 0; k < op->n_blocks; k++)
            cm_rename_uses(op->blocks[k], from, to);
    }
    for (size_t k = 0; k < b->n_out; k++)
        if (!strcmp(b->out[k], from)) {
            free(b->out[k]);
            b->out[k] = mem_strdup(to);
        }
}

/* A cast op of x to dtype d, output `out` of type t (dtype d). */
static MilOp *cm_cast_op(CmLower *c, MilBlock *b, const char *x, int32_t d, const char *out,
                         const MilType *t)
{
    MilOp *op = mil_op_add(b, "cast", out);
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "dtype", mil_tensor_string(mil_dtype_name(d)));
    MilType ty = mil_type_copy(t);
    ty.dtype = d;
    mil_op_out(op, out, &ty);
    mil_type_clear(&ty);
    c->r->n_ops++;
    return op;
}

/* The feature of mm's description named `name`, or NULL. */
static MilFeature *cm_feature_of(MilFeature *l, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(l[i].name, name))
            return &l[i];
    return NULL;
}

/* Main's input i, of a type the description cannot hold, becomes `want`
 * with a cast to its own type at the start of the block (*at counts the
 * ops put there). */
static void cm_adjust_input(CmLower *c, MilFunction *fn, MilModel *mm, size_t i, int32_t want,
                            size_t *at)
{
    MilBlock *b = fn->block;
    int32_t d = fn->in[i].type.dtype;
    const char *name = fn->in[i].name;
    char base[300];
    snprintf(base, sizeof base, "%s_%s", name, mil_dtype_name(d));
    char *inner = cml_fresh(c, base);
    cm_rename_uses(b, name, inner);
    MilOp *op = cm_cast_op(c, b, name, d, inner, &fn->in[i].type);
    free(inner);
    memmove(&b->ops[*at + 1], &b->ops[*at], (b->n_ops - 1 - *at) * sizeof *b->ops);
    b->ops[(*at)++] = op;
    fn->in[i].type.dtype = want;
    MilFeature *f = cm_feature_of(mm->in, mm->n_in, name);
    if (f)
        f->type.dtype = want;
}

/* Main's scalar input i crosses as [1] and is squeezed first thing in
 * the block (before any cast of it): Apple's loader takes no rank-0
 * function input, and coremltools passes scalars so. */
static void cm_unscalar_input(CmLower *c, MilFunction *fn, MilModel *mm, size_t i,
                              size_t *at)
{
    MilBlock *b = fn->block;
    MilNamedType *in = &fn->in[i];
    char base[300];
    snprintf(base, sizeof base, "%s_scalar", in->name);
    char *sq = cml_fresh(c, base);
    cm_rename_uses(b, in->name, sq);
    MilOp *op = mil_op_add(b, "squeeze", sq);
    mil_op_in(op, "x", in->name);
    mil_op_out(op, sq, &in->type);
    free(sq);
    c->r->n_ops++;
    memmove(&b->ops[1], &b->ops[0], (b->n_ops - 1) * sizeof *b->ops);
    b->ops[0] = op;
    (*at)++;
    MilType one = {.dtype = in->type.dtype, .rank = 1, .dims = (int64_t[]){1}};
    mil_type_clear(&in->type);
    in->type = mil_type_copy(&one);
    MilFeature *f = cm_feature_of(mm->in, mm->n_in, in->name);
    if (f) {
        mil_type_clear(&f->type);
        f->type = mil_type_copy(&one);
    }
}

/* Main's inputs and outputs of a type the description cannot hold at
 * spec become fp32, with a cast after each such input (at the start of
 * the block: *at counts the ops put there) and before each such output;
 * scalar inputs cross as [1] (cm_unscalar_input). */
static void cm_adjust_io(CmLower *c, MilFunction *fn, MilModel *mm, int spec, size_t *at)
{
    MilBlock *b = fn->block;
    for (size_t i = 0; i < fn->n_in; i++) {
        int32_t d = fn->in[i].type.dtype, want = cm_io_dtype(d, spec);
        if (want)
            cm_adjust_input(c, fn, mm, i, want, at);
        if (fn->in[i].type.rank == 0)
            cm_unscalar_input(c, fn, mm, i, at);
    }
    for (size_t k = 0; k < b->n_out; k++) {
        const MilType *t = mil_function_type(fn, b->out[k]);
        int32_t want = t ? cm_io_dtype(t->dtype, spec) : 0;
        if (!want)
            continue;
        char *name = mem_strdup(b->out[k]);
        char base[300];
        snprintf(base, sizeof base, "%s_%s", name, mil_dtype_name(t->dtype));
        char *inner = cml_fresh(c, base);
        MilType ty = mil_type_copy(t);
        for (size_t i = 0; i < b->n_ops; i++)   /* the producer's output */
            for (size_t j = 0; j < b->ops[i]->n_out; j++)
                if (!strcmp(b->ops[i]->out[j].name, name)) {
                    free(b->ops[i]->out[j].name);
                    b->ops[i]->out[j].name = mem_strdup(inner);
                }
        cm_rename_uses(b, name, inner);
        cm_cast_op(c, b, inner, want, name, &ty);
        free(b->out[k]);
        b->out[k] = name;
        mil_type_clear(&ty);
        free(inner);
        MilFeature *f = cm_feature_of(mm->out, mm->n_out, name);
        if (f)
            f->type.dtype = want;
    }
}

static int cm_export_check(const IrModel *m, IrError *err)
{
    if (!m->graph)
        return ir_fail(err, "model has no graph");
    int64_t v = ir_model_opset(m, "");
    if (v != CM_ONNX_OPSET)
        return ir_fail(err, "model imports ai.onnx %lld; the Core ML export reads opset %d "
                       "(convert it first)", (long long)v, CM_ONNX_OPSET);
    if (m->n_functions)
        return ir_fail(err, "model-local functions are not lowered to Core ML (inline them first)");
    return 0;
}

int cm_export(const IrModel *cm, const CmOptions *o, MilModel **out, CmReport *r,
              IrError *err)
{
    *out = NULL;
    CmReport rdummy;
    if (!r)
        r = &rdummy;
    memset(r, 0, sizeof *r);
    int limit = o ? o->target : -1;
    if (limit >= (int)mil_targets_n)
        return ir_fail(err, "Core ML target index %d unknown", limit);
    if (cm_export_check(cm, err) < 0)
        return -1;
    /* Inference writes only the IR's caches (types, known values). */
    IrModel *m = (IrModel *)cm;
    InfOptions proving = {.use_value_info = true, .run = ev_prove_node};
    if (inf_model(m, &proving, err) < 0)
        return -1;
    MilModel *mm = mil_model_new(&mil_targets[limit < 0 ? 0 : limit]);
    MilFunction *fn = mil_function_add(mm, "main", mil_targets[limit < 0 ? 0 : limit].opset);
    CmLower c = {.m = m, .g = m->graph, .b = fn->block, .root = fn->block, .err = err,
                 .limit = limit, .r = r};
    int rc = cm_export_inputs(&c, fn, mm);
    if (rc == 0)
        rc = cm_export_nodes(&c, c.g);
    if (rc == 0)
        rc = cm_export_outputs(&c, fn, mm);
    if (rc == 0 && !c.failed) {
        KsSet consts = {0};
        cm_const_names(fn->block, &consts);
        rc = cm_const_params(&c, fn->block, &consts);
        ks_free(&consts);
    }
    if (rc == 0 && !c.failed) {
        size_t at = 0;
        int spec = mil_targets[limit >= 0 ? limit : c.need].spec_version;
        cm_hoist_block(&c, fn->block, spec, &at);
        cm_adjust_io(&c, fn, mm, spec, &at);
    }
    cml_free_names(&c);
    if (rc < 0 || c.failed) {
        mil_model_free(mm);
        return -1;
    }
    int t = limit >= 0 ? limit : c.need;
    r->target = t;
    r->lowest = c.need;
    mm->spec_version = mil_targets[t].spec_version;
    free(fn->opset);
    fn->opset = mem_strdup(mil_targets[t].opset);
    *out = mm;
    return 0;
}
