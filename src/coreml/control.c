/*
 * coreml/control.c - Core ML lowering and raising of the control family:
 * If as cond (a bool scalar pred, a block per branch whose outputs are the
 * cond's), Loop as while_loop (see lower_loop), and back: cond as If,
 * while_loop as a Loop whose body runs the cond block, then the body block
 * under an If (see raise_while).
 *
 * Scan is a while_loop too (see lower_scan); it raises as a Loop.
 *
 * Refused, and why: branch outputs, loop-carried values and states that are
 * sequences or optionals (MIL's cond and while_loop carry tensors); a Loop
 * with neither trip count nor condition (it never ends); a scan output
 * whose per-iteration shape is not static (its accumulator starts as a
 * fill of shape [0, ...]). The import refuses MIL's list ops (make_list,
 * list_read/write/gather/scatter/length: they would be ONNX sequences,
 * which the loop raising does not carry) and iOS18's states (read_state,
 * write_state: ONNX has no state kept between runs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

/* A bool or int32 scalar of a one-element value (ONNX takes shape [] or
 * [1] for If's cond and Loop's M and cond; MIL wants scalars). */
static const char *ctl_scalar(CmLower *c, const IrValue *v, const char *x, int32_t dtype)
{
    if (cml_rank(v) == 0)
        return x;
    MilOp *op = cml_op(c, "reshape");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "shape", mil_tensor_new(MIL_INT32, 1, (int64_t[]){0}, NULL));
    return cml_tmp(c, op, dtype, 0, NULL);
}

static int lower_if(CmLower *c, const IrNode *n)
{
    const IrAttr *t = ir_node_attr(n, "then_branch"), *e = ir_node_attr(n, "else_branch");
    if (!t || !t->g || !e || !e->g)
        return cml_refuse(c, "a branch is missing");
    if (t->g->outputs.n != n->n_out || e->g->outputs.n != n->n_out)
        return cml_refuse(c, "branches return %zu and %zu values for %zu outputs",
                          t->g->outputs.n, e->g->outputs.n, n->n_out);
    const char *pred = cml_in(c, n, 0);
    if (!pred)
        return -1;
    pred = ctl_scalar(c, n->in[0], pred, MIL_BOOL);
    /* the branches first: consts they need go to the function's block
     * ahead of the cond */
    MilBlock *bt = mil_block_new(), *be = mil_block_new();
    int rc = cml_lower_graph(c, t->g, bt);
    if (rc == 0)
        rc = cml_lower_graph(c, e->g, be);
    MilOp *op = cml_op(c, "cond");
    op->blocks = mem_array(2, sizeof *op->blocks);
    op->blocks[0] = bt;
    op->blocks[1] = be;
    op->n_blocks = 2;
    if (rc < 0)
        return -1;
    mil_op_in(op, "pred", pred);
    for (size_t i = 0; i < n->n_out; i++)
        if (cml_out(c, op, n, i) < 0)
            return -1;
    return 0;
}

/* ---- Loop ------------------------------------------------------------------ */

/* What lower_loop builds the two blocks from: the loop variables' names
 * and types, in order i, c, the carried values, the accumulators. */
typedef struct CtlVars {
    size_t n;
    MilNamedType *v;
} CtlVars;

static void ctl_vars_add(CtlVars *lv, char *name, MilType t)
{
    lv->v = realloc(lv->v, (lv->n + 1) * sizeof *lv->v);
    if (!lv->v)
        abort();
    lv->v[lv->n].name = name;
    lv->v[lv->n].type = t;
    lv->n++;
}

static void ctl_vars_free(CtlVars *lv)
{
    for (size_t i = 0; i < lv->n; i++) {
        free(lv->v[i].name);
        mil_type_clear(&lv->v[i].type);
    }
    free(lv->v);
}

/* A block taking the loop variables as its inputs (copies). */
static MilBlock *ctl_block(const CtlVars *lv)
{
    MilBlock *b = mil_block_new();
    b->in = mem_array(lv->n ? lv->n : 1, sizeof *b->in);
    b->n_in = lv->n;
    for (size_t i = 0; i < lv->n; i++) {
        b->in[i].name = mem_strdup(lv->v[i].name);
        b->in[i].type = mil_type_copy(&lv->v[i].type);
    }
    return b;
}

/* The type a carried value keeps through every iteration: the initial
 * value's, with each dim the final value disagrees on (or does not know)
 * left unknown; no symbolic names (a loop may change them). */
static MilType ctl_carried_type(const IrValue *init, const IrValue *final)
{
    MilType t = cml_type(init), f = cml_type(final);
    if (t.dim_names) {
        for (int i = 0; i < t.rank; i++)
            free(t.dim_names[i]);
        free(t.dim_names);
        t.dim_names = NULL;
    }
    for (int i = 0; i < t.rank; i++)
        if (f.rank != t.rank || f.dims[i] != t.dims[i] || (f.dim_names && f.dim_names[i]))
            t.dims[i] = -1;
    mil_type_clear(&f);
    return t;
}

/* A carried value or scan output that is no tensor: refused by name. */
static int ctl_tensor_only(CmLower *c, const IrValue *v, const char *what)
{
    if (v && v->type && v->type->kind != IR_TYPE_TENSOR)
        return cml_refuse(c, "%s '%s' is a %s: MIL's while_loop carries tensors only", what,
                          v->name, v->type->kind == IR_TYPE_SEQUENCE ? "sequence"
                                   : v->type->kind == IR_TYPE_OPTIONAL ? "optional"
                                                                       : "non-tensor");
    return 0;
}

/* The cond block: i < M when M is given, and c when cond is given. */
static int ctl_cond_block(CmLower *c, MilBlock *cb, const CtlVars *lv, const char *m,
                          bool has_c)
{
    MilBlock *outer = c->b;
    c->b = cb;
    const char *r = lv->v[1].name;
    if (m) {
        MilOp *op = cml_op(c, "less");
        mil_op_in(op, "x", lv->v[0].name);
        mil_op_in(op, "y", m);
        r = cml_tmp(c, op, MIL_BOOL, 0, NULL);
        if (has_c) {
            op = cml_op(c, "logical_and");
            mil_op_in(op, "x", r);
            mil_op_in(op, "y", lv->v[1].name);
            r = cml_tmp(c, op, MIL_BOOL, 0, NULL);
        }
    } else {
        /* a block returns its own op's value, as the branches of cond do */
        MilOp *op = cml_op(c, "identity");
        mil_op_in(op, "x", r);
        r = cml_tmp(c, op, MIL_BOOL, 0, NULL);
    }
    mil_block_output(cb, r);
    c->b = outer;
    return 0;
}

/* The body block: the ONNX body (outputs: n_pass values that become the
 * next loop variables as they are, then n_scan per-iteration slices),
 * then i + 1 and one expand_dims + concat per slice, along axes[j] (0
 * when NULL), prepended where rev[j]; returns i + 1, the n_pass values
 * and the grown accumulators, in the loop variables' order. */
static int ctl_body_block(CmLower *c, MilBlock *bb, const IrGraph *body, const CtlVars *lv,
                          size_t n_pass, size_t n_scan, const int64_t *axes, const bool *rev)
{
    if (cml_lower_graph(c, body, bb) < 0)
        return -1;
    MilBlock *outer = c->b;
    c->b = bb;
    size_t n_old = bb->n_out;
    char **old = bb->out;
    bb->out = NULL;
    bb->n_out = 0;
    MilOp *op = cml_op(c, "add");
    mil_op_in(op, "x", lv->v[0].name);
    mil_op_in_const(op, "y", mil_tensor_scalar_i32(1));
    mil_block_output(bb, cml_tmp(c, op, MIL_INT32, 0, NULL));
    for (size_t k = 0; k < n_pass && k < n_old; k++)
        mil_block_output(bb, old[k]);
    for (size_t j = 0; j < n_scan && n_pass + j < n_old; j++) {
        const MilNamedType *acc = &lv->v[1 + n_pass + j];
        const MilType *at = &acc->type;
        int64_t ax = axes ? axes[j] : 0;
        op = cml_op(c, "expand_dims");
        mil_op_in(op, "x", old[n_pass + j]);
        mil_op_in_const(op, "axes", mil_tensor_ints((int32_t[]){(int32_t)ax}, 1));
        int64_t one[65];
        for (int d = 0; d < at->rank && d < 65; d++)
            one[d] = d == ax ? 1 : at->dims[d];
        const char *e = cml_tmp(c, op, at->dtype, at->rank, one);
        op = cml_op(c, "concat");
        bool pre = rev && rev[j];
        mil_op_in(op, "values", pre ? e : acc->name);
        mil_op_in(op, "values", pre ? acc->name : e);
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)ax));
        mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
        mil_block_output(bb, cml_tmp(c, op, at->dtype, at->rank, at->dims));
    }
    for (size_t k = 0; k < n_old; k++)
        free(old[k]);
    free(old);
    c->b = outer;
    return 0;
}

/* One accumulator of a scan output: `vi` is the body's output (one
 * iteration's slice), `out` the Loop's or Scan's output, axis_attr where
 * the slices stack (may be negative: counted on the slice's rank + 1).
 * Adds the loop variable (its axis dim unknown) and sets *init to a fill
 * of the slice's shape with 0 at the axis: not a const, since coremltools
 * reads an empty immediate tensor back as int32 [0], whatever its declared
 * type. *axis gets the axis normalized. */
static int ctl_acc(CmLower *c, CtlVars *lv, const IrValueInfo *vi, const IrValue *out,
                   int64_t axis_attr, const char **init, int64_t *axis)
{
    const IrValue *s = vi->value;
    int64_t sd[64], dims[65];
    size_t rank = 0;
    bool known = cml_dims(s, sd, 64, &rank) || ir_type_static_dims(vi->type, sd, 64, &rank);
    if (!known) {
        /* the output's dims less the stacking axis */
        int64_t all[65];
        size_t r;
        if (cml_dims(out, all, 65, &r) && r >= 1 && cml_axis(axis_attr, (int)r, axis)) {
            rank = r - 1;
            for (size_t d = 0, k = 0; d < r; d++)
                if ((int64_t)d != *axis)
                    sd[k++] = all[d];
            known = true;
        }
    }
    MilType st = cml_type(s);
    int32_t dt = st.dtype ? st.dtype : cm_dtype_to_mil(cml_elem(out));
    mil_type_clear(&st);
    if (!dt || !known || !cml_axis(axis_attr, (int)rank + 1, axis))
        return cml_refuse(c, "scan output '%s' has no static shape per iteration (its "
                          "accumulator starts as a fill of shape [0, ...])", s->name);
    for (size_t d = 0, k = 0; d <= rank; d++)
        dims[d] = (int64_t)d == *axis ? 0 : sd[k++];
    MilOp *f = cml_op(c, "fill");
    mil_op_in_const(f, "shape", cml_ints(dims, rank + 1));
    mil_op_in_const(f, "value", cml_scalar(dt, 0));
    *init = cml_tmp(c, f, dt, (int)rank + 1, dims);
    dims[*axis] = -1;
    char base[300];
    snprintf(base, sizeof base, "%s_acc", s->name);
    ctl_vars_add(lv, cml_name(c, base), mil_type(dt, (int)rank + 1, dims));
    return 0;
}

/* The while_loop op over blocks cb and bb with the loop variables' initial
 * values init; its outputs: output k of n for loop variable first + k
 * (k < n->n_out), temporaries for the others. */
static int ctl_while(CmLower *c, const IrNode *n, MilBlock *cb, MilBlock *bb, const CtlVars *lv,
                     const char *const *init, size_t first, int rc)
{
    c->node = n;
    MilOp *op = cml_op(c, "while_loop");
    op->blocks = mem_array(2, sizeof *op->blocks);
    op->blocks[0] = cb;
    op->blocks[1] = bb;
    op->n_blocks = 2;
    for (size_t k = 0; rc == 0 && k < lv->n; k++)
        mil_op_in(op, "loop_vars", init[k]);
    for (size_t k = 0; rc == 0 && k < lv->n; k++) {
        const MilType *t = &lv->v[k].type;
        if (k >= first && k - first < n->n_out && n->out[k - first])
            rc = cml_out(c, op, n, k - first);
        else
            cml_tmp(c, op, t->dtype, t->rank, t->dims);
    }
    return rc < 0 || c->failed ? -1 : 0;
}

/* Loop as while_loop. Its loop variables: the trip counter i (int32, from
 * 0), the condition c (bool; true when cond is left out), the carried
 * values, then one accumulator per scan output, which starts as a fill
 * of shape [0, S...] and grows by one slice per iteration (expand_dims +
 * concat: MIL's lists would raise to ONNX sequences, not tensors). The
 * ONNX body reads i as iter_num and c as cond_in. */
static int lower_loop(CmLower *c, const IrNode *n)
{
    const IrAttr *a = ir_node_attr(n, "body");
    const IrGraph *body = a ? a->g : NULL;
    if (!body || n->n_in < 2)
        return cml_refuse(c, "the body or the M and cond inputs are missing");
    size_t n_carried = n->n_in - 2;
    if (body->inputs.n != n_carried + 2 || body->outputs.n < n_carried + 1 ||
        n->n_out != body->outputs.n - 1)
        return cml_refuse(c, "the body takes %zu and returns %zu values for %zu inputs and %zu "
                          "outputs", body->inputs.n, body->outputs.n, n->n_in, n->n_out);
    size_t n_scan = body->outputs.n - 1 - n_carried;
    bool has_m = cml_has(n, 0), has_c = cml_has(n, 1);
    if (!has_m && !has_c)
        return cml_refuse(c, "neither a trip count nor a condition: the loop never ends");
    for (size_t k = 0; k < n_carried; k++)
        if (ctl_tensor_only(c, n->in[2 + k], "loop-carried value") < 0 ||
            ctl_tensor_only(c, n->out[k], "loop-carried value") < 0)
            return -1;
    for (size_t j = 0; j < n_scan; j++)
        if (ctl_tensor_only(c, n->out[n_carried + j], "scan output") < 0)
            return -1;
    /* the inputs, outside the loop */
    const char *m = NULL, *c0;
    int64_t *mv = NULL;
    size_t nm = 0;
    bool m_const = has_m && cml_const_ints(n, 0, &mv, &nm) && nm == 1;
    if (m_const) {
        /* a constant count beyond int32 (INT64_MAX: "no limit") is clamped:
         * the int32 counter reaches no further */
        int64_t v = mv[0] < 0 ? 0 : mv[0] > INT32_MAX ? INT32_MAX : mv[0];
        m = cml_const(c, mil_tensor_scalar_i32((int32_t)v));
    }
    free(mv);
    if (has_m && !m_const) {
        m = cml_in(c, n, 0);
        if (!m)
            return -1;
        m = ctl_scalar(c, n->in[0], m, MIL_INT32);
    }
    if (has_c) {
        c0 = cml_in(c, n, 1);
        if (!c0)
            return -1;
        c0 = ctl_scalar(c, n->in[1], c0, MIL_BOOL);
    } else {
        c0 = cml_const(c, mil_tensor_scalar_bool(true));
    }
    CtlVars lv = {0};
    const char **init = mem_array(2 + n_carried + n_scan, sizeof *init);
    init[0] = cml_const(c, mil_tensor_scalar_i32(0));
    init[1] = c0;
    int rc = 0;
    for (size_t k = 0; k < 2 + n_carried; k++) {
        const IrValue *bin = ((const IrValueInfo *)body->inputs.p[k])->value;
        MilType t = k == 0 ? mil_type(MIL_INT32, 0, NULL)
                    : k == 1 ? mil_type(MIL_BOOL, 0, NULL)
                             : ctl_carried_type(n->in[k], n->out[k - 2]);
        if (k >= 2 && (!t.dtype || t.rank < 0))
            rc = cml_refuse(c, "loop-carried value '%s' has no known Core ML type or rank",
                            n->in[k]->name);
        /* the initial value before the body's name is bound: the body may
         * shadow an outer name */
        if (k >= 2 && rc == 0 && !(init[k] = cml_in(c, n, k)))
            rc = -1;
        char *name = cml_name(c, bin->name);
        cml_bind(c, bin->name, name);
        ctl_vars_add(&lv, name, t);
    }
    for (size_t j = 0; rc == 0 && j < n_scan; j++) {
        int64_t axis;
        rc = ctl_acc(c, &lv, body->outputs.p[1 + n_carried + j], n->out[n_carried + j], 0,
                     &init[2 + n_carried + j], &axis);
    }
    MilBlock *cb = rc == 0 ? ctl_block(&lv) : mil_block_new();
    MilBlock *bb = rc == 0 ? ctl_block(&lv) : mil_block_new();
    if (rc == 0)
        rc = ctl_cond_block(c, cb, &lv, m, has_c);
    if (rc == 0)
        rc = ctl_body_block(c, bb, body, &lv, 1 + n_carried, n_scan, NULL, NULL);
    rc = ctl_while(c, n, cb, bb, &lv, init, 2, rc);
    free(init);
    ctl_vars_free(&lv);
    return rc;
}

/* ---- Scan ------------------------------------------------------------------ */

/* Attribute `name` of a Scan, entry k (0 when the attribute is absent). */
static int64_t ctl_scan_attr(const IrNode *n, const char *name, size_t k, bool *ok)
{
    const int64_t *v;
    long len = cml_attr_ints(n, name, &v);
    if (len < 0)
        return 0;
    if ((size_t)len <= k) {
        *ok = false;
        return 0;
    }
    return v[k];
}

/* The number of iterations: the first scan input's dim on its axis (a
 * const when static, else gathered from its shape). */
static const char *ctl_scan_length(CmLower *c, const IrValue *x, const char *xm, int64_t axis)
{
    int64_t dims[64];
    size_t rank;
    if (cml_dims(x, dims, 64, &rank) && dims[axis] <= INT32_MAX)
        return cml_const(c, mil_tensor_scalar_i32((int32_t)dims[axis]));
    MilOp *op = cml_op(c, "shape");
    mil_op_in(op, "x", xm);
    const char *sh = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){cml_rank(x)});
    op = cml_op(c, "gather");
    mil_op_in(op, "x", sh);
    mil_op_in_const(op, "indices", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    return cml_tmp(c, op, MIL_INT32, 0, NULL);
}

/* Scan as while_loop, over loop variables i, the N states and one
 * accumulator per scan output (as Loop's). The body block first gathers
 * each scan input's slice at i (at L - 1 - i for a reverse one) along its
 * axis (a scalar index drops the axis), then runs the ONNX body; a
 * reverse scan output is prepended. The cond block: i < L. */
/* A Scan's shape: state and scan counts, each scan input's axis and
 * direction, each scan output's (the arrays are owned). */
typedef struct ScanPlan {
    size_t n_st, n_m, n_k;
    int64_t *in_axis, *out_axis;
    bool *in_rev, *out_rev;
    bool any_rev;
} ScanPlan;

static void scan_plan_free(ScanPlan *p)
{
    free(p->in_axis);
    free(p->out_axis);
    free(p->in_rev);
    free(p->out_rev);
}

/* Reads the scan axes and directions of n into p (arrays allocated here,
 * freed by scan_plan_free whatever the result). 0, or -1 after refusing. */
static int scan_plan(CmLower *c, const IrNode *n, ScanPlan *p)
{
    p->in_axis = mem_array(p->n_m, sizeof *p->in_axis);
    p->out_axis = mem_array(p->n_k ? p->n_k : 1, sizeof *p->out_axis);
    p->in_rev = mem_array(p->n_m, sizeof *p->in_rev);
    p->out_rev = mem_array(p->n_k ? p->n_k : 1, sizeof *p->out_rev);
    bool ok = true;
    for (size_t j = 0; j < p->n_m; j++) {
        int64_t ax = ctl_scan_attr(n, "scan_input_axes", j, &ok);
        p->in_rev[j] = ctl_scan_attr(n, "scan_input_directions", j, &ok) != 0;
        p->any_rev |= p->in_rev[j];
        int r = cml_rank(n->in[p->n_st + j]);
        if (!ok || r > 64 || !cml_axis(ax, r, &p->in_axis[j]))
            return cml_refuse(c, "scan input %zu: axis out of range, or rank unknown or "
                              "above 64", j);
    }
    for (size_t j = 0; j < p->n_k; j++) {
        p->out_axis[j] = ctl_scan_attr(n, "scan_output_axes", j, &ok);
        p->out_rev[j] = ctl_scan_attr(n, "scan_output_directions", j, &ok) != 0;
        if (!ok)
            return cml_refuse(c, "scan_output_axes or directions shorter than the outputs");
    }
    return 0;
}

/* The body block's first ops: each scan input's slice at the iteration
 * (counted from the end for a reversed one: last - i), bound to the
 * body's input names. */
static void scan_slices(CmLower *c, const IrNode *n, const IrGraph *body, MilBlock *bb,
                        const ScanPlan *p, const CtlVars *lv, const char *const *xs,
                        const char *last)
{
    MilBlock *outer = c->b;
    c->b = bb;
    const char *ri = NULL;
    if (p->any_rev) {
        MilOp *op = cml_op(c, "sub");
        mil_op_in(op, "x", last);
        mil_op_in(op, "y", lv->v[0].name);
        ri = cml_tmp(c, op, MIL_INT32, 0, NULL);
    }
    for (size_t j = 0; j < p->n_m; j++) {
        MilType t = cml_type(n->in[p->n_st + j]);
        int64_t sd[64];
        for (int d = 0, k = 0; d < t.rank && k < 64; d++)
            if (d != p->in_axis[j])
                sd[k++] = t.dims[d];
        MilOp *op = cml_op(c, "gather");
        mil_op_in(op, "x", xs[j]);
        mil_op_in(op, "indices", p->in_rev[j] ? ri : lv->v[0].name);
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)p->in_axis[j]));
        const char *sl = cml_tmp(c, op, t.dtype, t.rank - 1, sd);
        mil_type_clear(&t);
        cml_bind(c, ((const IrValueInfo *)body->inputs.p[p->n_st + j])->value->name, sl);
    }
    c->b = outer;
}

/* Whether Scan n and its body agree on counts, and every value it carries
 * is a tensor; 0, or -1 after refusing. p gets the counts. */
static int scan_check(CmLower *c, const IrNode *n, const IrGraph *body, ScanPlan *p)
{
    int64_t m_in = cml_attr_i(n, "num_scan_inputs");
    if (!body || m_in < 1 || (size_t)m_in > n->n_in)
        return cml_refuse(c, "the body or num_scan_inputs is missing or out of range");
    p->n_m = (size_t)m_in;
    p->n_st = n->n_in - p->n_m;
    if (body->inputs.n != n->n_in || body->outputs.n != n->n_out || n->n_out < p->n_st)
        return cml_refuse(c, "the body takes %zu and returns %zu values for %zu inputs and %zu "
                          "outputs", body->inputs.n, body->outputs.n, n->n_in, n->n_out);
    p->n_k = n->n_out - p->n_st;
    for (size_t k = 0; k < n->n_in; k++)
        if (!cml_has(n, k))
            return cml_refuse(c, "input %zu is left out", k);
    for (size_t k = 0; k < n->n_out; k++)
        if (ctl_tensor_only(c, n->out[k], k < p->n_st ? "state" : "scan output") < 0 ||
            (k < p->n_st && ctl_tensor_only(c, n->in[k], "state") < 0))
            return -1;
    return 0;
}

static int lower_scan(CmLower *c, const IrNode *n)
{
    const IrAttr *a = ir_node_attr(n, "body");
    const IrGraph *body = a ? a->g : NULL;
    ScanPlan p = {0};
    if (scan_check(c, n, body, &p) < 0)
        return -1;
    size_t n_st = p.n_st, n_m = p.n_m, n_k = p.n_k;
    const char **xs = mem_array(n_m, sizeof *xs);
    const char **init = mem_array(1 + n_st + n_k, sizeof *init);
    CtlVars lv = {0};
    int rc = scan_plan(c, n, &p);
    /* outside the loop: the initial states, the scan inputs, L (and L-1) */
    init[0] = rc == 0 ? cml_const(c, mil_tensor_scalar_i32(0)) : NULL;
    ctl_vars_add(&lv, cml_name(c, "scan_i"), mil_type(MIL_INT32, 0, NULL));
    for (size_t k = 0; rc == 0 && k < n_st; k++) {
        MilType t = ctl_carried_type(n->in[k], n->out[k]);
        if (!t.dtype || t.rank < 0)
            rc = cml_refuse(c, "state '%s' has no known Core ML type or rank", n->in[k]->name);
        if (rc == 0 && !(init[1 + k] = cml_in(c, n, k)))
            rc = -1;
        const IrValue *bin = ((const IrValueInfo *)body->inputs.p[k])->value;
        char *name = cml_name(c, bin->name);
        cml_bind(c, bin->name, name);
        ctl_vars_add(&lv, name, t);
    }
    for (size_t j = 0; rc == 0 && j < n_m; j++)
        if (!(xs[j] = cml_in(c, n, n_st + j)))
            rc = -1;
    const char *len = rc == 0 ? ctl_scan_length(c, n->in[n_st], xs[0], p.in_axis[0]) : NULL;
    const char *last = NULL;
    if (rc == 0 && p.any_rev) {
        MilOp *op = cml_op(c, "sub");
        mil_op_in(op, "x", len);
        mil_op_in_const(op, "y", mil_tensor_scalar_i32(1));
        last = cml_tmp(c, op, MIL_INT32, 0, NULL);
    }
    for (size_t j = 0; rc == 0 && j < n_k; j++)
        rc = ctl_acc(c, &lv, body->outputs.p[n_st + j], n->out[n_st + j], p.out_axis[j],
                     &init[1 + n_st + j], &p.out_axis[j]);
    MilBlock *cb = rc == 0 ? ctl_block(&lv) : mil_block_new();
    MilBlock *bb = rc == 0 ? ctl_block(&lv) : mil_block_new();
    if (rc == 0)
        rc = ctl_cond_block(c, cb, &lv, len, false);
    if (rc == 0)
        scan_slices(c, n, body, bb, &p, &lv, xs, last);
    if (rc == 0)
        rc = ctl_body_block(c, bb, body, &lv, n_st, n_k, p.out_axis, p.out_rev);
    rc = ctl_while(c, n, cb, bb, &lv, init, 1, rc);
    scan_plan_free(&p);
    free(xs);
    free(init);
    ctl_vars_free(&lv);
    return rc;
}

static const CmLowerRule ctl_lower[] = {
    {"If", lower_if},
    {"Loop", lower_loop},
    {"Scan", lower_scan},
};

static int raise_cond(CmRaise *r, const MilOp *op)
{
    if (op->n_blocks != 2 || !op->n_out || op->n_out > 4096)
        return cmr_fail(r, "cond needs two blocks and outputs");
    for (size_t k = 0; k < 2; k++)
        if (op->blocks[k]->n_out != op->n_out)
            return cmr_fail(r, "block %zu returns %zu values for %zu outputs", k,
                            op->blocks[k]->n_out, op->n_out);
    const char *pred = cmr_in(r, op, "pred", 0);
    const char **out = mem_array(op->n_out, sizeof *out);
    for (size_t i = 0; i < op->n_out; i++)
        out[i] = op->out[i].name;
    IrNode *node;
    int rc = cmr_node(r, "If", 1, &pred, op->n_out, out, &node);
    free(out);
    for (size_t k = 0; rc == 0 && k < 2; k++) {
        IrGraph *g = ir_graph_new(r->g);
        g->name = mem_strdup(k ? "else_branch" : "then_branch");
        /* attached first: fresh names made inside (a while_loop's) must see
         * the names the branch holds */
        ir_node_set_attr(node, ir_attr_graph(k ? "else_branch" : "then_branch", g));
        rc = cmr_block(r, op->blocks[k], g, op->out);
    }
    return rc;
}

/* A bool scalar type, for the cond block's output. */
static MilNamedType ctl_bool_type(void)
{
    MilNamedType t = {0};
    t.type = mil_type(MIL_BOOL, 0, NULL);
    return t;
}

/* The else branch of raise_while: the loop variables unchanged. */
static int ctl_raise_keep(CmRaise *r, const MilBlock *cb, IrGraph *eg)
{
    IrGraph *outer = r->g;
    r->g = eg;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < cb->n_in; k++) {
        const char *in[1] = {cb->in[k].name}, *out[1] = {cmr_tmp(r, cb->in[k].name)};
        rc = cmr_node(r, "Identity", 1, in, 1, out, NULL);
        if (rc == 0)
            ir_graph_add_output(eg, ir_graph_find_local(eg, out[0]),
                                cmr_type(&cb->in[k].type));
    }
    r->g = outer;
    return rc;
}

/* The Loop's body: inputs (iter, cond_in, the loop variables by the cond
 * block's names), the cond block's ops (its output is the body's cond_out),
 * then an If: when the condition holds, the body block; else the
 * variables unchanged. One last iteration does nothing but find the
 * condition false, which is what while_loop does before it stops. */
static int ctl_raise_body(CmRaise *r, const MilOp *op, IrGraph *g)
{
    const MilBlock *cb = op->blocks[0], *bb = op->blocks[1];
    IrGraph *outer = r->g;
    size_t nv = cb->n_in;
    /* fresh in the whole model (g is attached already) and apart from the
     * loop variables' names (reserved first), defined in g only */
    for (size_t k = 0; k < nv; k++)
        ir_graph_value(g, cb->in[k].name);
    for (int k = 0; k < 2; k++) {
        char *name = ir_graph_fresh_name(g, k ? "cond_in" : "iter");
        ir_graph_add_input(g, name, ir_type_tensor(k ? IR_BOOL : IR_INT64, 0, NULL));
        free(name);
    }
    for (size_t k = 0; k < nv; k++)
        if (!ir_graph_add_input(g, cb->in[k].name, cmr_type(&cb->in[k].type)))
            return cmr_fail(r, "loop variable '%s' named twice", cb->in[k].name);
    MilNamedType bt = ctl_bool_type();
    int rc = cmr_block(r, cb, g, &bt);
    mil_type_clear(&bt.type);
    if (rc < 0)
        return -1;
    r->g = g;
    /* the body block may name the variables otherwise than the cond block */
    for (size_t k = 0; rc == 0 && k < nv; k++)
        if (strcmp(bb->in[k].name, cb->in[k].name)) {
            const char *in[1] = {cb->in[k].name}, *out[1] = {bb->in[k].name};
            rc = cmr_node(r, "Identity", 1, in, 1, out, NULL);
        }
    const char **outs = mem_array(nv, sizeof *outs);
    for (size_t k = 0; k < nv; k++)
        outs[k] = cmr_tmp(r, cb->in[k].name);
    const char *pred = cb->out[0];
    IrNode *ifn = NULL;
    if (rc == 0)
        rc = cmr_node(r, "If", 1, &pred, nv, outs, &ifn);
    if (rc == 0) {
        IrGraph *tg = ir_graph_new(g), *eg = ir_graph_new(g);
        tg->name = mem_strdup("then_branch");
        eg->name = mem_strdup("else_branch");
        ir_node_set_attr(ifn, ir_attr_graph("then_branch", tg));
        ir_node_set_attr(ifn, ir_attr_graph("else_branch", eg));
        rc = cmr_block(r, bb, tg, cb->in);
        if (rc == 0)
            rc = ctl_raise_keep(r, cb, eg);
    }
    for (size_t k = 0; rc == 0 && k < nv; k++)
        ir_graph_add_output(g, ir_graph_find_local(g, outs[k]), cmr_type(&cb->in[k].type));
    free(outs);
    r->g = outer;
    return rc;
}

/* while_loop as Loop(M left out, cond true, the loop variables): see
 * ctl_raise_body. */
static int raise_while(CmRaise *r, const MilOp *op)
{
    const MilInput *lv = mil_op_input(op, "loop_vars");
    size_t nv = lv ? lv->n_args : 0;
    if (op->n_blocks != 2 || !nv || nv > 4096 || op->n_out != nv)
        return cmr_fail(r, "while_loop needs two blocks and one output per loop variable");
    const MilBlock *cb = op->blocks[0], *bb = op->blocks[1];
    if (cb->n_in != nv || bb->n_in != nv || cb->n_out != 1 || bb->n_out != nv)
        return cmr_fail(r, "the cond block must take the %zu loop variables and return one "
                        "bool, the body block take and return them", nv);
    const char **in = mem_array(nv + 2, sizeof *in), **out;
    in[0] = "";
    MilTensor *t = mil_tensor_scalar_bool(true);
    in[1] = cmr_init_tensor(r, t);
    mil_tensor_free(t);
    for (size_t k = 0; k < nv; k++)
        in[2 + k] = cmr_in(r, op, "loop_vars", k);
    out = mem_array(nv, sizeof *out);
    for (size_t k = 0; k < nv; k++)
        out[k] = op->out[k].name;
    IrNode *node = NULL;
    int rc = cmr_node(r, "Loop", nv + 2, in, nv, out, &node);
    free(in);
    free(out);
    if (rc < 0)
        return -1;
    IrGraph *g = ir_graph_new(r->g);
    g->name = mem_strdup("body");
    ir_node_set_attr(node, ir_attr_graph("body", g));
    return ctl_raise_body(r, op, g);
}

/* make_list, list_read, list_write, list_gather, list_scatter, list_length */
static int refuse_list(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: MIL's lists (growing tensor arrays) would be ONNX "
                       "sequences, which the loop raising does not carry");
}

/* read_state, write_state (iOS18) */
static int refuse_state(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: a model state (kept between predictions), which ONNX "
                       "has no notion of");
}

static const CmRaiseRule ctl_raise[] = {
    {"make_list", refuse_list}, {"list_read", refuse_list}, {"list_write", refuse_list},
    {"list_gather", refuse_list}, {"list_scatter", refuse_list}, {"list_length", refuse_list},
    {"read_state", refuse_state}, {"write_state", refuse_state},
    {"cond", raise_cond},
    {"while_loop", raise_while},
};

CM_FAMILY(cm_family_control, "control", ctl_lower, ctl_raise);
