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

#include "adapters.h"
#include "../src/known.h"
#include "../src/fconv.h"
#include "../src/infer.h"

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

/* The constant readers are the one rule of src/known.h: an initializer
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

IrNode *ad_node_in(AdCtx *c, const char *domain, IrNode *before,
                   const char *op, size_t n_in, IrValue *const *in,
                   size_t n_out)
{
    char base[160];
    snprintf(base, sizeof base, "%s_%s%d",
             c->n->name && c->n->name[0] ? c->n->name : c->n->op_type, op,
             ++c->n_new);
    char *nm = ad_fresh_name(c->g, base);
    const char **ins = ir_alloc_array(n_in ? n_in : 1, sizeof *ins);
    char **outs = ir_alloc_array(n_out ? n_out : 1, sizeof *outs);
    for (size_t i = 0; i < n_in; i++)
        ins[i] = in[i] ? in[i]->name : "";
    for (size_t i = 0; i < n_out; i++) {
        char ob[200];
        snprintf(ob, sizeof ob, "%s_out%zu", nm, i);
        outs[i] = ir_graph_fresh_name(c->g, ob);
    }
    IrNode *k = ir_node_new(c->g, before, op, domain && domain[0] ? domain : NULL,
                            nm, n_in, ins, n_out, (const char *const *)outs, c->err);
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
    g->name = ir_strdup(name);
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
    if (!x)
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
    uint8_t *raw = ir_alloc_array(n ? n * w : 1, 1);
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
        int64_t *v = ir_alloc_array(n ? n : 1, sizeof *v);
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
    uint8_t *raw = ir_alloc_array(n ? n * w : 1, 1);
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
    int64_t one = 1, *pos = ir_alloc_array((size_t)r + 1, sizeof *pos),
            *neg = ir_alloc_array((size_t)r + 1, sizeof *neg);
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
    int64_t *tri = ir_alloc_array((size_t)n * (size_t)n + 1, sizeof *tri);
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
    case IR_FLOAT16: { /* float16, round to nearest even via float */
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint32_t sign = (u >> 16) & 0x8000u;
        int e = (int)((u >> 23) & 0xff) - 127 + 15;
        uint32_t m = u & 0x7fffffu;
        uint16_t h;
        if (isnan(f)) h = 0x7e00;
        else if (e >= 31) h = (uint16_t)(sign | 0x7c00u);
        else if (e <= 0) {
            if (e < -10) h = (uint16_t)sign;
            else {
                m |= 0x800000u;
                int sh = 14 - e;
                uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
                if (rem > half || (rem == half && (r & 1))) r++;
                h = (uint16_t)(sign | r);
            }
        } else {
            uint32_t r = (uint32_t)e << 10 | (m >> 13);
            uint32_t rem = m & 0x1fffu;
            if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) r++;
            h = (uint16_t)(sign | r);
        }
        memcpy(buf, &h, 2);
        len = 2;
        break;
    }
    case IR_BFLOAT16: { /* bfloat16, round to nearest even */
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = isnan(f) ? 0x7fc0
                              : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
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
    IrValue **in = ir_alloc_array(n_in ? n_in : 1, sizeof *in);
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

int ad_attr_to_input(AdCtx *c, const char *name, size_t index)
{
    IrAttr *a = ad_attr(c, name);
    if (!a) {
        if (index < c->n->n_in)
            ad_set_input(c, index, NULL);
        return 0;
    }
    IrValue *v = ad_const_i64s(c, a->n_ints, a->ints);
    if (!v)
        return -1;
    ad_set_input(c, index, v);
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
