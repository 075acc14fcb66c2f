/*
 * common.c - what every adapter uses: refusing, reading the node, building
 * nodes and constants, and the generic adapters (attribute <-> input
 * moves, dropping attributes the target lacks, pinning defaults).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"
#include "base/half.h"
#include "analysis/known.h"
#include "base/fconv.h"
#include "analysis/infer.h"

/* ---- refusing ------------------------------------------------------- */

/* Records r as c's refusal. */
static void ad_mark(AdCtx *c, DgReason r)
{
    c->refusal = r;
}

/* Whether c has refused (an earlier builder or check failed). */
static bool ad_failed(const AdCtx *c)
{
    return c->refusal != DG_NONE;
}

DgReason ad_refusal(const AdCtx *c)
{
    return c->refusal;
}

/* The one line of a message about c->n: "node 'N' (Op-v): opset s ->
 * s': msg" (refusals and warnings alike), into line[0..cap). */
static void ad_line(const AdCtx *c, const char *msg, char *line, size_t cap)
{
    DgDiag d = dg_none();
    dg_set_node(&d, c->n, c->domain, c->from ? c->from->since : 0);
    d.step_from = c->from_opset;
    d.step_to = c->to_opset;
    d.msg = msg;
    dg_format(&d, line, cap);
}

static int ad_vrefuse(AdCtx *c, DgReason r, const char *fmt, va_list ap)
{
    char msg[384], line[sizeof c->err->msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    ad_mark(c, r);
    ad_line(c, msg, line, sizeof line);
    return ir_fail(c->err, "%s", line);
}

int ad_refuse(AdCtx *c, DgReason r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ad_vrefuse(c, r, fmt, ap);
    va_end(ap);
    return rc;
}

void ad_warn(AdCtx *c, const char *fmt, ...)
{
    char msg[384], line[sizeof c->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!c->warn)
        return;
    ad_line(c, msg, line, sizeof line);
    c->warn(c->warn_arg, line);
}


/* ---- reading -------------------------------------------------------- */

IrAttr *ad_attr(const AdCtx *c, const char *name)
{
    return ir_node_attr(c->n, name);
}

/* The table's entry for attribute `name` of c->n's op at its version
 * when it has a default, else NULL. */
static const OsAttr *ad_attr_default(const AdCtx *c, const char *name)
{
    const OsAttr *d = c->from ? os_attr(c->from, name) : NULL;
    return d && d->has_default ? d : NULL;
}

int64_t ad_attr_i(const AdCtx *c, const char *name)
{
    const OsAttr *d = ad_attr_default(c, name);
    return ad_attr_i_or(c, name, d ? d->def_i : 0);
}

float ad_attr_f(const AdCtx *c, const char *name)
{
    const OsAttr *d = ad_attr_default(c, name);
    return ad_attr_f_or(c, name, d ? d->def_f : 0.0f);
}

const char *ad_attr_s(const AdCtx *c, const char *name, char *buf, size_t cap)
{
    const OsAttr *d = ad_attr_default(c, name);
    return ad_attr_s_or(c, name, d ? d->def_s : NULL, buf, cap);
}

int64_t ad_attr_i_or(const AdCtx *c, const char *name, int64_t dflt)
{
    const IrAttr *a = ad_attr(c, name);
    return a && a->has_i ? a->i : dflt;
}

float ad_attr_f_or(const AdCtx *c, const char *name, float dflt)
{
    const IrAttr *a = ad_attr(c, name);
    return a && a->has_f ? a->f : dflt;
}

const char *ad_attr_s_or(const AdCtx *c, const char *name, const char *dflt,
                         char *buf, size_t cap)
{
    const IrAttr *a = ad_attr(c, name);
    if (!a || !a->has_s)
        return dflt;
    size_t n = a->s.len < cap - 1 ? a->s.len : cap - 1;
    if (n)
        memcpy(buf, a->s.data, n);
    buf[n] = 0;
    return buf;
}

IrValue *ad_in(const AdCtx *c, size_t i)
{
    return i < c->n->n_in ? c->n->in[i] : NULL;
}

const IrType *ad_type(const IrValue *v)
{
    return v ? v->type : NULL;
}

int32_t ad_elem(const IrValue *v)
{
    const IrType *t = ad_type(v);
    return t && t->kind == IR_TYPE_TENSOR && t->has_elem_type ? t->elem_type : 0;
}

int ad_rank(const IrValue *v)
{
    const IrType *t = ad_type(v);
    return t && t->kind == IR_TYPE_TENSOR && t->shape ? (int)t->shape->rank : -1;
}

int64_t ad_dim(const IrValue *v, int i)
{
    const IrType *t = ad_type(v);
    if (!t || t->kind != IR_TYPE_TENSOR || !t->shape || i < 0 ||
        (size_t)i >= t->shape->rank || t->shape->dims[i].kind != IR_DIM_VALUE ||
        t->shape->dims[i].value < 0)
        return -1;
    return t->shape->dims[i].value;
}

int ad_norm_axes(AdCtx *c, int64_t *ax, size_t n, int rank, const char *what,
                 bool *changed)
{
    *changed = false;
    for (size_t i = 0; i < n; i++) {
        if (ax[i] >= 0) {
            if (rank >= 0 && ax[i] >= rank)
                return ad_refuse(c, DG_ATTRIBUTE, "%s %lld is out of range for rank %d",
                                 what, (long long)ax[i], rank);
            continue;
        }
        if (rank < 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "%s %lld counts from the back and the rank is unknown",
                             what, (long long)ax[i]);
        if (ax[i] < -rank)
            return ad_refuse(c, DG_ATTRIBUTE, "%s %lld is out of range for rank %d",
                             what, (long long)ax[i], rank);
        ax[i] += rank;
        *changed = true;
    }
    return 0;
}

/* The constant readers are the one rule of src/analysis/known.h: an initializer
 * that is not a graph input (IR 3 inputs excepted), a Constant, or a value
 * inference proved ahead of time. */
const IrTensor *ad_const(const IrValue *v)
{
    return kv_value(v);
}

bool ad_const_ints(const IrValue *val, int64_t **v, size_t *n)
{
    return val && inf_value_ints(val, v, n);
}

bool ad_const_floats(const IrValue *val, double **v, size_t *n)
{
    return val && inf_value_floats(val, v, n);
}

/* ---- building ------------------------------------------------------- */

int ad_infer(AdCtx *c, IrNode *k)
{
    IrError e;
    if (inf_node_at(c->m, k, c->domain, c->build_opset, &e) < 0)
        return ad_refuse(c, DG_INFERENCE, "the rewritten %s does not check: %s",
                         k->op_type, e.msg);
    return 0;
}

/* Whether a node of g is named `name`. */
static bool ad_node_name_taken(const IrGraph *g, const char *name)
{
    for (const IrNode *k = g->first; k; k = k->next)
        if (k->name && !strcmp(k->name, name))
            return true;
    return false;
}

/* A name free both as a value name (in g's scope tree) and as a node name
 * in g (runtimes refuse two nodes of one name). Caller frees. */
char *ad_fresh_name(const IrGraph *g, const char *base)
{
    char *nm = ir_graph_fresh_name(g, base);
    for (int k = 2; ad_node_name_taken(g, nm); k++) {
        char b[200];
        snprintf(b, sizeof b, "%s_%d", base, k);
        free(nm);
        nm = ir_graph_fresh_name(g, b);
    }
    return nm;
}

/* A node of `op` in `domain` (as given) before `before`, named after c->n,
 * with inputs in[0..n_in) and n_out outputs, fresh where keep[i] (keep
 * NULL: all) and left out elsewhere. Not yet inferred; NULL with c->err
 * set. */
static IrNode *ad_node_named(AdCtx *c, const char *domain, IrNode *before,
                             const char *op, size_t n_in, IrValue *const *in,
                             size_t n_out, const bool *keep)
{
    char base[160];
    snprintf(base, sizeof base, "%s_%s%d",
             c->n->name && c->n->name[0] ? c->n->name : c->n->op_type, op,
             ++c->n_new);
    char *nm = ad_fresh_name(c->g, base);
    const char **ins = mem_array(n_in ? n_in : 1, sizeof *ins);
    char **outs = mem_array(n_out ? n_out : 1, sizeof *outs);
    for (size_t i = 0; i < n_in; i++)
        ins[i] = in[i] ? in[i]->name : "";
    for (size_t i = 0; i < n_out; i++) {
        char ob[200];
        snprintf(ob, sizeof ob, "%s_out%zu", nm, i);
        outs[i] = !keep || keep[i] ? ir_graph_fresh_name(c->g, ob) : mem_strdup("");
    }
    IrNode *k = ir_node_new(c->g, before, op, domain, nm, n_in, ins, n_out,
                            (const char *const *)outs, c->err);
    for (size_t i = 0; i < n_out; i++)
        free(outs[i]);
    free(outs);
    free(ins);
    free(nm);
    if (!k) {
        ad_mark(c, DG_INTERNAL);
        return NULL;
    }
    /* ir_node_new looks names up from k's graph; an input of an enclosing
     * graph is found there, so the values are the ones asked for. */
    return k;
}

IrNode *ad_node_in(AdCtx *c, const char *domain, IrNode *before,
                   const char *op, size_t n_in, IrValue *const *in,
                   size_t n_out)
{
    return ad_node_named(c, domain && domain[0] ? domain : NULL, before, op, n_in, in,
                         n_out, NULL);
}

IrNode *ad_node(AdCtx *c, IrNode *before, const char *op, size_t n_in,
                IrValue *const *in, size_t n_out)
{
    IrNode *k = ad_node_in(c, c->domain, before, op, n_in, in, n_out);
    if (k && ad_infer(c, k) < 0)
        return NULL;
    return k;
}

IrGraph *ad_sub_new(AdCtx *c, const char *name)
{
    IrGraph *g = ir_graph_new(c->g);
    g->name = mem_strdup(name);
    return g;
}

IrNode *ad_sub_node(AdCtx *c, IrGraph *sub, const char *op, size_t n_in,
                    IrValue *const *in, size_t n_out, bool infer)
{
    IrGraph *outer = c->g;
    c->g = sub;
    IrNode *k = ad_node_in(c, c->domain, NULL, op, n_in, in, n_out);
    if (k && infer && ad_infer(c, k) < 0)
        k = NULL;
    c->g = outer;
    return k;
}

int ad_sub_infer(AdCtx *c, IrNode *k)
{
    IrGraph *outer = c->g;
    c->g = k->graph;
    int rc = ad_infer(c, k);
    c->g = outer;
    return rc;
}

IrValue *ad_sub_input(IrGraph *sub, const char *base, int32_t dtype)
{
    char *nm = ir_graph_fresh_name(sub, base);
    IrValueInfo *vi = ir_graph_add_input(sub, nm, ir_type_tensor(dtype, 0, NULL));
    free(nm);
    if (!vi)
        return NULL;
    if (!vi->value->type)
        vi->value->type = ir_type_tensor(dtype, 0, NULL);
    return vi->value;
}

void ad_sub_output(IrGraph *sub, IrValue *v, int32_t dtype)
{
    IrType *t = ir_type_tensor(dtype, 0, NULL);
    ir_shape_free(t->shape);
    t->shape = NULL;
    ir_graph_add_output(sub, v, t);
}

IrValue *ad_axes_op(AdCtx *c, IrNode *before, const char *op, IrValue *x,
                    size_t n, const int64_t *axes)
{
    if (!x || ad_failed(c))
        return NULL;
    IrNode *k;
    if (c->build_opset >= 13) {
        IrValue *ax = ad_const_i64s(c, n, axes);
        if (!ax)
            return NULL;
        IrValue *in[2] = {x, ax};
        k = ad_node_in(c, c->domain, before, op, 2, in, 1);
    } else {
        k = ad_node_in(c, c->domain, before, op, 1, &x, 1);
        if (k)
            ad_set_attr_ints(c, k, "axes", n, axes);
    }
    if (!k || ad_infer(c, k) < 0)
        return NULL;
    return k->out[0];
}

IrValue *ad_reduce(AdCtx *c, const char *op, IrValue *x, size_t n, const int64_t *axes,
                   bool keepdims)
{
    if (!x || ad_failed(c))
        return NULL;
    bool input = c->build_opset >= (strcmp(op, "ReduceSum") == 0 ? 13 : 18);
    IrValue *in[2] = {x, input && n ? ad_const_i64s(c, n, axes) : NULL};
    if (input && n && !in[1])
        return NULL;
    IrNode *k = ad_node_in(c, c->domain, c->n, op, in[1] ? 2 : 1, in, 1);
    if (!k)
        return NULL;
    if (!input && n)
        ad_set_attr_ints(c, k, "axes", n, axes);
    ad_set_attr_i(c, k, "keepdims", keepdims ? 1 : 0);
    return ad_infer(c, k) < 0 ? NULL : k->out[0];
}

IrValue *ad_op1(AdCtx *c, const char *op, IrValue *a)
{
    if (ad_failed(c) || !a)
        return NULL;
    IrNode *k = ad_node(c, c->n, op, 1, &a, 1);
    return k ? k->out[0] : NULL;
}

IrValue *ad_op2(AdCtx *c, const char *op, IrValue *a, IrValue *b)
{
    if (ad_failed(c) || !a || !b)
        return NULL;
    IrValue *in[2] = {a, b};
    IrNode *k = ad_node(c, c->n, op, 2, in, 1);
    return k ? k->out[0] : NULL;
}

IrValue *ad_op3(AdCtx *c, const char *op, IrValue *a, IrValue *b, IrValue *d)
{
    if (ad_failed(c) || !a || !b || !d)
        return NULL;
    IrValue *in[3] = {a, b, d};
    IrNode *k = ad_node(c, c->n, op, 3, in, 1);
    return k ? k->out[0] : NULL;
}

IrValue *ad_cast(AdCtx *c, IrValue *x, int32_t to)
{
    if (!x || ad_elem(x) == to)
        return x;
    if (ad_failed(c))
        return NULL;
    IrNode *k = ad_node_in(c, c->domain, c->n, "Cast", 1, &x, 1);
    if (!k)
        return NULL;
    if (c->build_opset >= 6)
        ad_set_attr_i(c, k, "to", to);
    else    /* Cast-1 names the type: "FLOAT", "INT64", ... */
        ad_set_attr_s(c, k, "to", ir_dtype_name(to) ? ir_dtype_name(to) : "");
    return ad_infer(c, k) < 0 ? NULL : k->out[0];
}

bool ad_const_is_init(const AdCtx *c)
{
    return c->m && c->g == c->m->graph && !c->fn;
}

IrValue *ad_const_tensor(AdCtx *c, int32_t dtype, size_t ndims,
                         const int64_t *dims, const void *data, size_t bytes)
{
    char base[160];
    snprintf(base, sizeof base, "%s_const%d",
             c->n->name && c->n->name[0] ? c->n->name : c->n->op_type, ++c->n_new);
    char *nm = ad_fresh_name(c->g, base);
    IrTensor *t = ir_tensor_new(nm, dtype, ndims, dims, data, bytes);
    IrValue *v = NULL;
    if (ad_const_is_init(c)) {
        v = ir_graph_add_init(c->g, t);
        if (!v)
            ir_tensor_free(t);
        else
            v->type = ir_type_tensor(dtype, ndims, dims);
    } else {
        const char *out[1] = {nm};
        IrNode *k = ir_node_new(c->g, c->n, "Constant", NULL, nm, 0, NULL, 1, out,
                                c->err);
        if (k) {
            free(t->name);
            t->name = NULL;
            ir_node_set_attr(k, ir_attr_tensor("value", t));
            v = k->out[0];
            if (ad_infer(c, k) < 0)
                v = NULL;
        } else {
            ir_tensor_free(t);
        }
    }
    free(nm);
    if (!v && !ad_failed(c))
        ad_refuse(c, DG_INTERNAL, "cannot add a constant");
    return v;
}

IrValue *ad_const_int_tensor(AdCtx *c, int32_t dtype, size_t ndims, const int64_t *dims,
                             const int64_t *v, size_t n)
{
    if (ad_failed(c))
        return NULL;
    /* A Constant node that will live below opset 9 must be floating. */
    bool low = c->build_opset < 9 || (c->goal_opset > 0 && c->goal_opset < 9);
    bool direct = ad_const_is_init(c) || !low;
    /* compared as integers: through double, 2^53 + 1 would pass for a
     * float, and INT64_MAX for 2^63 */
    for (size_t i = 0; i < n && !direct; i++) {
        int64_t back;
        direct = !fc_i64((double)(float)v[i], &back) || back != v[i];
    }
    if (direct && !ad_const_is_init(c) && low) {
        ad_refuse(c, DG_TYPE, "an integer constant outside the main graph needs a "
                  "Constant of an integer type, which opsets below 9 lack");
        return NULL;
    }
    size_t w = direct ? (size_t)ir_dtype_bits(dtype) / 8 : 4;
    uint8_t *raw = mem_array(n ? n * w : 1, 1);
    for (size_t i = 0; i < n; i++) {
        float f = (float)v[i];
        if (!direct)
            memcpy(raw + i * w, &f, 4);
        for (size_t b = 0; direct && b < w; b++)   /* little-endian */
            raw[i * w + b] = (uint8_t)((uint64_t)v[i] >> (8 * b));
    }
    IrValue *k = ad_const_tensor(c, direct ? dtype : 1, ndims, dims, raw, n * w);
    free(raw);
    return direct ? k : ad_cast(c, k, dtype);
}

IrValue *ad_const_int(AdCtx *c, int32_t dtype, int64_t v)
{
    return ad_const_int_tensor(c, dtype, 0, NULL, &v, 1);
}

/* Whether t is an integer type (signed or unsigned, 8 to 64 bits). */
static bool ad_is_int_type(int32_t t)
{
    switch (t) {
    case IR_UINT8: case IR_INT8: case IR_UINT16: case IR_INT16:
    case IR_INT32: case IR_INT64: case IR_UINT32: case IR_UINT64:
        return true;
    default:
        return false;
    }
}

IrValue *ad_const_fill(AdCtx *c, int32_t t, size_t r, const int64_t *d, int unit)
{
    if (ad_failed(c))
        return NULL;
    size_t n = 1;
    for (size_t i = 0; i < r; i++)
        n *= (size_t)d[i];
    if (ad_is_int_type(t)) {
        int64_t *v = mem_array(n ? n : 1, sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = unit;
        IrValue *k = ad_const_int_tensor(c, t, r, d, v, n);
        free(v);
        return k;
    }
    uint8_t one[8] = {0};
    size_t w;
    switch (t) {
    case IR_FLOAT: { float f = (float)unit; memcpy(one, &f, 4); w = 4; break; }
    case IR_DOUBLE: { double x = unit; memcpy(one, &x, 8); w = 8; break; }
    case IR_FLOAT16: one[1] = unit ? 0x3c : 0; w = 2; break; /* 1.0 = 0x3c00 */
    case IR_BFLOAT16: /* 1.0 = 0x3f80 */
        one[1] = unit ? 0x3f : 0; one[0] = unit ? 0x80 : 0; w = 2; break;
    default:
        ad_refuse(c, DG_TYPE, "no constant %d of type %s", unit,
                  ir_dtype_name(t) ? ir_dtype_name(t) : "?");
        return NULL;
    }
    uint8_t *raw = mem_array(n ? n * w : 1, 1);
    for (size_t i = 0; i < n; i++)
        memcpy(raw + i * w, one, w);
    IrValue *k = ad_const_tensor(c, t, r, d, raw, n * w);
    free(raw);
    return k;
}

IrValue *ad_const_i64s(AdCtx *c, size_t n, const int64_t *v)
{
    int64_t dim = (int64_t)n;
    return ad_const_int_tensor(c, IR_INT64, 1, &dim, v, n);
}

IrValue *ad_axes_hits(AdCtx *c, IrValue *axes, int r)
{
    int64_t one = 1, *pos = mem_array((size_t)r + 1, sizeof *pos),
            *neg = mem_array((size_t)r + 1, sizeof *neg);
    for (int j = 0; j < r; j++) {
        pos[j] = j;
        neg[j] = j - r;
    }
    IrValue *col = ad_axes_op(c, c->n, "Unsqueeze", axes, 1, &one);       /* [n,1] */
    IrValue *pv = ad_const_i64s(c, (size_t)r, pos), *nv = ad_const_i64s(c, (size_t)r, neg);
    free(pos);
    free(neg);
    return ad_cast(c, ad_op2(c, "Or", ad_op2(c, "Equal", col, pv),
                             ad_op2(c, "Equal", col, nv)), IR_INT64);
}

IrValue *ad_prefix_sums(AdCtx *c, IrValue *v, int n)
{
    int64_t one = 1, td[2] = {n, n};
    int64_t *tri = mem_array((size_t)n * (size_t)n + 1, sizeof *tri);
    for (int j = 0; j < n; j++)
        for (int m = 0; m < n; m++)
            tri[j * n + m] = m < j;               /* row j adds the entries before j */
    int64_t cnt = (int64_t)n * n;
    IrValue *tv = ad_const_int_tensor(c, IR_INT64, 2, td, tri, (size_t)cnt);
    free(tri);
    return ad_reduce(c, "ReduceSum", ad_op2(c, "Mul", tv, v), 1, &one, false);
}

IrValue *ad_const_scalar(AdCtx *c, int32_t dtype, double x)
{
    uint8_t buf[8];
    size_t len;
    if (ad_failed(c))
        return NULL;
    switch (dtype) {
    case IR_FLOAT: { float f = (float)x; memcpy(buf, &f, 4); len = 4; break; }
    case IR_DOUBLE: memcpy(buf, &x, 8); len = 8; break;
    case IR_INT64: case IR_INT32: {
        int64_t v;
        if (!fc_i64(x, &v) || (dtype == IR_INT32 && (v < INT32_MIN || v > INT32_MAX))) {
            ad_refuse(c, DG_ATTRIBUTE, "the constant %g does not fit an %s", x,
                      dtype == IR_INT32 ? "int32" : "int64");
            return NULL;
        }
        return ad_const_int(c, dtype, v);
    }
    case IR_BOOL: buf[0] = x != 0; len = 1; break;
    case IR_FLOAT16: case IR_BFLOAT16: {
        uint16_t h = dtype == IR_FLOAT16 ? half_f32_to_f16((float)x)
                                         : half_f32_to_bf16((float)x);
        memcpy(buf, &h, 2);
        len = 2;
        break;
    }
    default:
        ad_refuse(c, DG_TYPE, "no scalar constant of type %s",
                  ir_dtype_name(dtype) ? ir_dtype_name(dtype) : "?");
        return NULL;
    }
    return ad_const_tensor(c, dtype, 0, NULL, buf, len);
}

void ad_set_input(AdCtx *c, size_t i, IrValue *v)
{
    while (c->n->n_in <= i)
        ir_node_add_input(c->n, NULL);
    ir_node_set_input(c->n, i, v);
}

void ad_trim_inputs(IrNode *k)
{
    while (k->n_in > 0 && !k->in[k->n_in - 1])
        k->n_in--;
}

bool ad_named_out(const AdCtx *c, size_t i)
{
    return i < c->n->n_out && c->n->out[i];
}

void ad_trim_outputs(AdCtx *c, size_t keep)
{
    while (c->n->n_out > keep && !c->n->out[c->n->n_out - 1])
        c->n->n_out--;
}

void ad_drop_attr(AdCtx *c, const char *name)
{
    ir_node_remove_attr(c->n, name);
}

void ad_set_attr_i(AdCtx *c, IrNode *k, const char *name, int64_t v)
{
    (void)c;
    ir_node_set_attr(k, ir_attr_int(name, v));
}

void ad_set_attr_f(AdCtx *c, IrNode *k, const char *name, float v)
{
    (void)c;
    ir_node_set_attr(k, ir_attr_float(name, v));
}

void ad_set_attr_ints(AdCtx *c, IrNode *k, const char *name, size_t n,
                      const int64_t *v)
{
    (void)c;
    ir_node_set_attr(k, ir_attr_ints(name, n, v));
}

void ad_set_attr_s(AdCtx *c, IrNode *k, const char *name, const char *s)
{
    (void)c;
    ir_node_set_attr(k, ir_attr_string(name, s));
}

void ad_move_output(AdCtx *c, size_t i, IrNode *k, size_t j)
{
    if (i < c->n->n_out && c->n->out[i])
        ir_node_take_output(k, j, c->n, i);
}

void ad_replace(AdCtx *c, IrNode *by)
{
    for (size_t i = 0; i < c->n->n_out && i < by->n_out; i++)
        ad_move_output(c, i, by, i);
    ir_node_delete(c->n);
}

IrNode *ad_widen_node(AdCtx *c, int32_t w, uint32_t in_mask)
{
    size_t n_in = c->n->n_in, n_out = c->n->n_out;
    if (n_in > 32 || n_out > 32) {
        ad_refuse(c, DG_INTERNAL, "too many inputs or outputs to widen");
        return NULL;
    }
    IrValue **in = mem_array(n_in ? n_in : 1, sizeof *in);
    bool ok = true;
    for (size_t i = 0; i < n_in; i++) {
        in[i] = c->n->in[i];
        if (in[i] && (in_mask >> i & 1u))
            ok = ok && (in[i] = ad_cast(c, in[i], w)) != NULL;
    }
    IrNode *k = ok ? ad_node_in(c, c->domain, c->n, c->n->op_type, n_in, in, n_out) : NULL;
    free(in);
    if (!k)
        return NULL;
    /* c->n is about to be replaced: its attributes move rather than copy */
    IrAttr **a = k->attr;
    size_t na = k->n_attr;
    k->attr = c->n->attr;
    k->n_attr = c->n->n_attr;
    c->n->attr = a;
    c->n->n_attr = na;
    return ad_infer(c, k) < 0 ? NULL : k;
}

int ad_widen(AdCtx *c, int32_t t, int32_t w, uint32_t in_mask, uint32_t out_mask)
{
    IrNode *k = ad_widen_node(c, w, in_mask);
    if (!k)
        return -1;
    for (size_t j = 0; j < c->n->n_out; j++) {
        if (!c->n->out[j])
            continue;
        if (!(out_mask >> j & 1u)) {
            ad_move_output(c, j, k, j);
            continue;
        }
        IrValue *y = ad_cast(c, k->out[j], t);
        if (!y)
            return -1;
        ad_move_output(c, j, y->producer, 0);
    }
    ir_node_delete(c->n);
    return 0;
}

/* ---- generic adapters ------------------------------------------------ */

int ad_nothing(AdCtx *c)
{
    (void)c;
    return 0;
}

int ad_drop_consumed(AdCtx *c)
{
    ad_drop_attr(c, "consumed_inputs");
    return 0;
}

int ad_attr_to_input(AdCtx *c, const char *name, size_t index)
{
    IrAttr *a = ad_attr(c, name);
    if (!a) {
        if (index < c->n->n_in)
            ad_set_input(c, index, NULL);
        return 0;
    }
    return ad_attr_as_input(c, name, index, ad_const_i64s(c, a->n_ints, a->ints));
}

int ad_attr_as_input(AdCtx *c, const char *name, size_t i, IrValue *v)
{
    if (!v)
        return -1;
    ad_set_input(c, i, v);
    ad_drop_attr(c, name);
    return 0;
}

int ad_input_to_attr(AdCtx *c, size_t index, const char *name)
{
    IrValue *in = ad_in(c, index);
    if (!in) {
        ad_trim_inputs(c->n);
        return 0;
    }
    int64_t *v;
    size_t n;
    if (!ad_const_ints(in, &v, &n))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "input '%s' must be a constant to become attribute '%s'",
                         in->name, name);
    ir_node_set_attr(c->n, ir_attr_ints(name, n, v));
    free(v);
    ir_node_set_input(c->n, index, NULL);
    ad_trim_inputs(c->n);
    ad_drop_if_dead(c, in);
    return 0;
}

void ad_drop_if_dead(AdCtx *c, IrValue *v)
{
    if (!v || v->n_uses || ir_value_is_graph_output(v) || v->kind == IR_VAL_INPUT)
        return;
    if (v->kind == IR_VAL_INIT && v->init) {
        IrGraph *g = v->graph;
        for (size_t i = 0; i < g->inits.n; i++)
            if (g->inits.p[i] == v->init) {
                ir_ptrlist_remove_at(&g->inits, i);
                ir_tensor_free(v->init);
                v->init = NULL;
                v->kind = IR_VAL_UNDEF;
                break;
            }
        ir_value_drop_if_unused(v);
    } else if (v->kind == IR_VAL_NODE && v->producer && v->producer != c->n &&
               v->producer->op_type && !strcmp(v->producer->op_type, "Constant") &&
               v->producer->n_out == 1) {
        ir_node_delete(v->producer);
    }
}

int ad_drop_attr_if(AdCtx *c, const char *name, int64_t neutral)
{
    IrAttr *a = ad_attr(c, name);
    if (!a)
        return 0;
    if (!a->has_i || a->i != neutral)
        return ad_refuse(c, DG_ATTRIBUTE,
                         "attribute %s=%lld has no equivalent at the target",
                         name, (long long)(a->has_i ? a->i : 0));
    ad_drop_attr(c, name);
    return 0;
}

/* Whether two attribute defaults are the same value. */
static bool ad_same_default(const OsAttr *a, const OsAttr *b)
{
    if (a->type != b->type || a->has_default != b->has_default)
        return false;
    if (!a->has_default)
        return true;
    if (a->def_i != b->def_i || a->def_f != b->def_f || a->def_n != b->def_n)
        return false;
    if ((a->def_s == NULL) != (b->def_s == NULL) ||
        (a->def_s && strcmp(a->def_s, b->def_s) != 0))
        return false;
    return true;
}

/* Sets attribute `name` of c->n to the default d. */
static void ad_set_default(AdCtx *c, const OsAttr *d)
{
    switch (d->type) {
    case IR_AT_FLOAT: ad_set_attr_f(c, c->n, d->name, d->def_f); break;
    case IR_AT_INT: ad_set_attr_i(c, c->n, d->name, d->def_i); break;
    case IR_AT_STRING: ad_set_attr_s(c, c->n, d->name, d->def_s ? d->def_s : ""); break;
    case IR_AT_INTS: ad_set_attr_ints(c, c->n, d->name, d->def_n, d->def_ints); break;
    default: break;
    }
}

void ad_pin_defaults(AdCtx *c)
{
    if (!c->from || !c->to)
        return;
    for (size_t k = 0; k < c->from->n_attr; k++) {
        const OsAttr *a = &c->from->attr[k];
        const OsAttr *b = os_attr(c->to, a->name);
        if (!b || !a->has_default || ad_attr(c, a->name) || ad_same_default(a, b))
            continue;
        ad_set_default(c, a);
    }
}

/* ---- the builder kit: what the expansions of several families share --- */

bool ad_has_type(const AdCtx *c, const char *op, int32_t t)
{
    const OsSchema *s = os_find(c->domain, op, c->build_opset);
    const OsParam *p = s ? os_in_param(s, 0) : NULL;
    IrType *ty = ir_type_tensor(t, 0, NULL);
    bool ok = p && os_param_allows(s, p, ty);
    ir_type_free(ty);
    return ok;
}

int ad_need_type(AdCtx *c, const char *op, int32_t t)
{
    if (ad_has_type(c, op, t))
        return 0;
    return ad_refuse(c, DG_TYPE, "the expansion needs %s of %s, which opset %lld lacks",
                     op, ir_dtype_name(t) ? ir_dtype_name(t) : "?",
                     (long long)c->build_opset);
}

void ad_rename(AdCtx *c, const char *op)
{
    free(c->n->op_type);
    c->n->op_type = mem_strdup(op);
}

int ad_static(const IrValue *v, int64_t *dims, size_t cap)
{
    int r = ad_rank(v);
    if (r < 0 || (size_t)r > cap)
        return -1;
    for (int d = 0; d < r; d++)
        if ((dims[d] = ad_dim(v, d)) < 0)
            return -1;
    return r;
}

int64_t ad_prod(const int64_t *dims, size_t from, size_t to, int64_t cap)
{
    int64_t p = 1;
    for (size_t d = from; d < to; d++) {
        if (dims[d] && p > cap / dims[d])
            return -1;
        p *= dims[d];
    }
    return p;
}

int64_t ad_dim_at(const IrValue *v, int d)
{
    return ad_dim(v, d < 0 ? ad_rank(v) + d : d);
}

bool ad_axis(int64_t a, int r, int extra, int64_t *out)
{
    int64_t n = (int64_t)r + extra;
    if (a < 0) {
        if (r < 0 || a < -n)
            return false;
        a += n;
    } else if (r >= 0 && a >= n) {
        return false;
    }
    *out = a;
    return true;
}

TkTensor *ad_const_tk(const IrValue *v)
{
    const IrTensor *t = ad_const(v);
    return t ? tk_from_ir(t, NULL) : NULL;
}

bool ad_nonneg(const IrValue *v)
{
    int32_t dt = ad_elem(v);
    if (ir_dtype_class(dt) == IR_DC_UINT && ir_dtype_bits(dt) >= 8)
        return true;
    TkTensor *x = ad_const_tk(v);
    if (x) {
        bool ok = x->dtype != IR_STRING;
        for (size_t k = 0; ok && k < x->numel; k++)
            ok = tk_get_f(x, k) > -1.0; /* truncates to >= 0 */
        tk_free(x);
        return ok;
    }
    int64_t *iv;
    size_t n;
    if (!ad_const_ints(v, &iv, &n))
        return false;
    bool ok = true;
    for (size_t k = 0; ok && k < n; k++)
        ok = iv[k] >= 0;
    free(iv);
    return ok;
}

IrNode *ad_raw(AdCtx *c, const char *op, size_t n_in, IrValue *const *in, size_t n_out)
{
    if (ad_failed(c))
        return NULL;
    return ad_node_in(c, c->domain, c->n, op, n_in, in, n_out);
}

IrValue *ad_fin(AdCtx *c, IrNode *k)
{
    return k && ad_infer(c, k) == 0 ? k->out[0] : NULL;
}

IrNode *ad_clone(AdCtx *c, const char *op, size_t n_in, IrValue *const *in, size_t n_out,
                 const bool *keep)
{
    /* in c->n's own domain spelling, as the node it stands for */
    IrNode *k = ad_node_named(c, c->n->domain, c->n, op, n_in, in, n_out, keep);
    if (!k)
        return NULL;
    for (size_t i = 0; i < c->n->n_attr; i++)
        ir_node_set_attr(k, c->n->attr[i]);
    c->n->n_attr = 0;
    return k;
}

/* op(x...) with the INT attribute `axis`: Gather, Concat. */
static IrValue *ad_axis_op(AdCtx *c, const char *op, size_t n, IrValue *const *in,
                           int64_t axis)
{
    for (size_t i = 0; i < n; i++)
        if (!in[i])
            return NULL;
    IrNode *k = ad_raw(c, op, n, in, 1);
    if (k)
        ad_set_attr_i(c, k, "axis", axis);
    return ad_fin(c, k);
}

IrValue *ad_gather(AdCtx *c, IrValue *x, IrValue *idx, int64_t axis)
{
    IrValue *in[2] = {x, idx};
    return ad_axis_op(c, "Gather", 2, in, axis);
}

IrValue *ad_concat(AdCtx *c, IrValue *const *in, size_t n, int64_t axis)
{
    return ad_axis_op(c, "Concat", n, in, axis);
}

/* op(x) with the INTS attribute `name` = v[0..n). */
static IrValue *ad_ints_op(AdCtx *c, const char *op, IrValue *x, const char *name, size_t n,
                           const int64_t *v)
{
    IrNode *k = x ? ad_raw(c, op, 1, &x, 1) : NULL;
    if (k)
        ad_set_attr_ints(c, k, name, n, v);
    return ad_fin(c, k);
}

IrValue *ad_transpose(AdCtx *c, IrValue *x, size_t n, const int64_t *perm)
{
    return ad_ints_op(c, "Transpose", x, "perm", n, perm);
}

IrValue *ad_reshape(AdCtx *c, IrValue *x, size_t n, const int64_t *shape)
{
    if (!x || ad_failed(c))
        return NULL;
    if (c->build_opset < 5)    /* Reshape-1: the shape is an attribute */
        return ad_ints_op(c, "Reshape", x, "shape", n, shape);
    IrValue *s = ad_const_i64s(c, n, shape);
    return s ? ad_op2(c, "Reshape", x, s) : NULL;
}

IrValue *ad_pad(AdCtx *c, IrValue *x, size_t n, const int64_t *pads)
{
    if (!x || ad_failed(c))
        return NULL;
    if (c->build_opset >= 11) {
        IrValue *p = ad_const_i64s(c, n, pads);
        return p ? ad_op2(c, "Pad", x, p) : NULL;
    }
    /* an attribute, named `paddings` in Pad-1 */
    return ad_ints_op(c, "Pad", x, c->build_opset >= 2 ? "pads" : "paddings", n, pads);
}

IrValue *ad_clip(AdCtx *c, IrValue *x, int32_t t, double lo, double hi)
{
    if (!x || ad_failed(c))
        return NULL;
    if (c->build_opset >= 11)
        return ad_op3(c, "Clip", x, ad_const_scalar(c, t, lo), ad_const_scalar(c, t, hi));
    IrNode *k = ad_raw(c, "Clip", 1, &x, 1);
    if (k) {
        ad_set_attr_f(c, k, "min", (float)lo);
        ad_set_attr_f(c, k, "max", (float)hi);
    }
    return ad_fin(c, k);
}

IrValue *ad_slice(AdCtx *c, IrValue *x, size_t n, const int64_t *starts, const int64_t *ends,
                  const int64_t *axes, const int64_t *steps)
{
    if (!x || ad_failed(c))
        return NULL;
    if (c->build_opset >= 10) {
        IrValue *in[5] = {x, ad_const_i64s(c, n, starts), ad_const_i64s(c, n, ends),
                          ad_const_i64s(c, n, axes), steps ? ad_const_i64s(c, n, steps) : NULL};
        if (!in[1] || !in[2] || !in[3] || (steps && !in[4]))
            return NULL;
        return ad_fin(c, ad_raw(c, "Slice", steps ? 5 : 4, in, 1));
    }
    if (steps) {
        ad_refuse(c, DG_INTERNAL, "Slice takes steps from opset 10");
        return NULL;
    }
    IrNode *k = ad_raw(c, "Slice", 1, &x, 1);
    if (!k)
        return NULL;
    ad_set_attr_ints(c, k, "starts", n, starts);
    ad_set_attr_ints(c, k, "ends", n, ends);
    ad_set_attr_ints(c, k, "axes", n, axes);
    return ad_fin(c, k);
}

IrValue *ad_slice_at(AdCtx *c, IrValue *x, int64_t start, int64_t end, int64_t axis,
                     int64_t step)
{
    return ad_slice(c, x, 1, &start, &end, &axis, &step);
}

IrValue *ad_const_table(AdCtx *c, int rank, const int64_t *dims, const int64_t *v)
{
    int64_t n = ad_prod(dims, 0, (size_t)rank, AD_MAX_CONST);
    if (n < 0 || (uint64_t)n * 8 > AD_MAX_CONST) {
        ad_refuse(c, DG_TOO_LARGE, "an index table would be too large");
        return NULL;
    }
    return ad_const_tensor(c, IR_INT64, (size_t)rank, dims, v, (size_t)n * 8);
}

IrValue *ad_const_reals(AdCtx *c, int32_t dtype, size_t n, const double *v)
{
    int64_t dim = (int64_t)n;
    if (ad_failed(c))
        return NULL;
    if (dtype == IR_DOUBLE)
        return ad_const_tensor(c, dtype, 1, &dim, v, n * sizeof *v);
    if (dtype != IR_FLOAT) {
        ad_refuse(c, DG_TYPE, "no list constant of type %s",
                  ir_dtype_name(dtype) ? ir_dtype_name(dtype) : "?");
        return NULL;
    }
    float *f = mem_array(n ? n : 1, sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    IrValue *k = ad_const_tensor(c, dtype, 1, &dim, f, n * sizeof *f);
    free(f);
    return k;
}

/* Refuses strings: a constant of strings needs string_data, which
 * ad_const_tensor does not write. */
static bool ad_no_strings(AdCtx *c, int32_t dtype)
{
    if (dtype != IR_STRING)
        return true;
    ad_refuse(c, DG_TYPE, "cannot build a constant of strings here");
    return false;
}

/* A tensor held in raw_data (what tk_to_ir and c->run write) as a
 * constant value, refused past max bytes and for strings. */
static IrValue *ad_const_raw(AdCtx *c, const IrTensor *t, uint64_t max)
{
    if (!ad_no_strings(c, t->data_type))
        return NULL;
    if (t->raw.len > max) {
        ad_refuse(c, DG_TOO_LARGE, "the constant would take %zu bytes", t->raw.len);
        return NULL;
    }
    return ad_const_tensor(c, t->data_type, t->ndims, t->dims, t->raw.data, t->raw.len);
}

IrValue *ad_const_of(AdCtx *c, const TkTensor *v)
{
    if (!ad_no_strings(c, v->dtype))
        return NULL;
    IrTensor *t = tk_to_ir(v, NULL);
    IrValue *r = ad_const_raw(c, t, AD_MAX_CONST);
    ir_tensor_free(t);
    return r;
}

IrValue *ad_wrap(AdCtx *c, IrValue *idx, IrValue *dim)
{
    if (!idx || !dim)
        return NULL;
    int32_t dt = ad_elem(idx);
    IrValue *neg = ad_op2(c, "Less", ad_cast(c, idx, IR_DOUBLE),
                          ad_const_scalar(c, IR_DOUBLE, 0.0));
    return ad_op2(c, "Add", idx, ad_op2(c, "Mul", ad_cast(c, neg, dt), dim));
}

void ad_swap_input(AdCtx *c, size_t i, IrValue *v)
{
    IrValue *old = ad_in(c, i);
    ad_set_input(c, i, v);
    if (old && old != v)
        ad_drop_if_dead(c, old);
}

int ad_replace_by(AdCtx *c, IrValue *y)
{
    if (!y || !y->producer)
        return ad_failed(c) ? -1 : ad_refuse(c, DG_INTERNAL, "the rewrite could not be built");
    /* Only constants (initializers, other nodes' outputs) are kept to drop
     * afterwards, each once: deleting c->n frees an input defined nowhere
     * (IR_VAL_UNDEF) that nothing else reads, or an output of c->n that it
     * reads itself, and dropping a constant frees it, so any other pointer
     * kept here would dangle. */
    IrValue *ins[8] = {NULL};
    size_t n = 0;
    for (size_t i = 0; i < c->n->n_in && n < 8; i++) {
        IrValue *v = c->n->in[i];
        bool seen = false;
        for (size_t j = 0; v && j < n; j++)
            seen = seen || ins[j] == v;
        if (v && !seen && (v->kind == IR_VAL_INIT ||
                           (v->kind == IR_VAL_NODE && v->producer != c->n)))
            ins[n++] = v;
    }
    ad_replace(c, y->producer);
    for (size_t i = 0; i < n; i++)
        ad_drop_if_dead(c, ins[i]);
    return 0;
}

int ad_replace_value(AdCtx *c, IrValue *v)
{
    return ad_replace_by(c, ad_op1(c, "Identity", v));
}

/* The most outputs ad_end moves. */
#define AD_END_MAX 8

/* The values that compute c->n's n outputs, into v: an input of c->n
 * passed through gets an Identity, so that its output can move. -1 after
 * refusing. */
static int ad_end_values(AdCtx *c, size_t n, IrValue *const *vals, IrValue **v)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = ad_named_out(c, i) ? vals[i] : NULL;
        if (ad_named_out(c, i) && !vals[i])
            return ad_failed(c) ? -1 : ad_refuse(c, DG_INTERNAL, "output %zu was not built", i);
        for (size_t j = 0; j < c->n->n_in && v[i]; j++)
            if (c->n->in[j] == v[i])
                v[i] = ad_op1(c, "Identity", v[i]);
    }
    return ad_failed(c) ? -1 : 0;
}

int ad_end(AdCtx *c, size_t n, IrValue *const *vals)
{
    IrValue *v[AD_END_MAX] = {NULL};
    IrNode *k[AD_END_MAX] = {NULL};
    if (n > AD_END_MAX)
        return ad_refuse(c, DG_INTERNAL, "too many outputs to move");
    if (ad_failed(c) || ad_end_values(c, n, vals, v) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!v[i])
            continue;
        if (!v[i]->producer)
            return ad_refuse(c, DG_INTERNAL, "output %zu was not built", i);
        k[i] = v[i]->producer;
        /* new nodes that read v (an intermediate that is also an output,
         * e.g. LayerNormalization's Mean) read the moved value instead */
        if (v[i]->n_uses > 0 && ir_value_replace_uses(v[i], c->n->out[i], c->err) < 0) {
            ad_mark(c, DG_INTERNAL);
            return -1;
        }
        ad_move_output(c, i, k[i], v[i]->producer_index);
    }
    ir_node_delete(c->n);
    for (size_t i = 0; i < n; i++)
        if (k[i] && ad_infer(c, k[i]) < 0)
            return -1;
    return 0;
}

/* Whether c->run, which reads the node's version from the main graph's
 * import (it knows no function), would run c->n as the source version:
 * inside an expansion being lowered the scope may name another opset, a
 * function body may import another one, and a kernel of the wrong
 * version reads other attributes. */
static bool ad_runs_as_source(const AdCtx *c)
{
    int64_t v = ir_scope_opset(c->m, c->fn, c->domain);
    int64_t run = c->fn ? ir_scope_opset(c->m, NULL, c->domain) : v;
    return os_find(c->domain, c->n->op_type, v) == c->from &&
           os_find(c->domain, c->n->op_type, run) == c->from;
}

/* The known tensor of v when it decodes (one that does not is as good as
 * unknown), else NULL. */
static const IrTensor *ad_known_tensor(const IrValue *v)
{
    TkTensor *x = ad_const_tk(v);
    bool ok = x != NULL;
    tk_free(x);
    return ok ? ad_const(v) : NULL;
}

int ad_fold(AdCtx *c, uint64_t max_bytes)
{
    IrNode *n = c->n;
    if (!c->run || n->n_out != 1 || n->n_in > 16 || !ad_runs_as_source(c))
        return 0;
    const IrTensor *in[16] = {NULL};
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i] && !(in[i] = ad_known_tensor(n->in[i])))
            return 0;
    IrTensor *out[1] = {NULL};
    if (c->run(c->m, n, in, out) < 0)
        return ad_refuse(c, DG_SEMANTICS, "the inputs are known but do not compute");
    IrValue *v = NULL;
    if (!out[0])
        ad_refuse(c, DG_TYPE, "the folded output is not a tensor");
    else
        v = ad_const_raw(c, out[0], max_bytes);
    ir_tensor_free(out[0]);
    return v && ad_replace_value(c, v) == 0 ? 1 : -1;
}
