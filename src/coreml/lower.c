/*
 * lower.c - the lowering kit the family files build MIL with (prefix cml_):
 * names, inputs and consts, ops and their targets, refusals.
 */
#include "coreml/rules.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/known.h"
#include "base/half.h"
#include "coreml/milcheck.h"
#include "coreml/milops.h"
#include "schema/opschema.h"
#include "uthash.h"

/* ---- names ------------------------------------------------------------------ */

struct CmName {
    char *key;
    char *val;
    UT_hash_handle hh;
};

static void cml_table_free(CmName **h)
{
    CmName *e, *tmp;
    HASH_ITER(hh, *h, e, tmp) {
        HASH_DEL(*h, e);
        free(e->key);
        free(e->val);
        free(e);
    }
}

static CmName *cml_name_get(CmName *h, const char *key)
{
    CmName *e = NULL;
    HASH_FIND_STR(h, key, e);
    return e;
}

static void cml_name_put(CmName **h, const char *key, const char *val)
{
    CmName *e = mem_alloc(sizeof *e);
    e->key = mem_strdup(key);
    e->val = mem_strdup(val);
    HASH_ADD_KEYPTR(hh, *h, e->key, strlen(e->key), e);
}

/* A MIL identifier from `base` ([A-Za-z_][A-Za-z0-9_]*, as coremltools
 * makes names), not yet taken; recorded as taken. Caller frees. */
/* Whether `s` is "const" or "const_<digits>": the names coremltools'
 * loader gives the consts it makes of immediate values, which a value of
 * ours must not take (the loader then finds two types for one name). */
static bool cm_loader_name(const char *s)
{
    if (strncmp(s, "const", 5))
        return false;
    if (!s[5])
        return true;
    if (s[5] != '_' || !s[6])
        return false;
    for (const char *p = s + 6; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    return true;
}

char *cml_fresh(CmLower *c, const char *base)
{
    size_t n = strlen(base ? base : "");
    bool clash = n && cm_loader_name(base);
    char *s = mem_alloc(n + 8 + sizeof "_workaround");
    size_t k = 0;
    if (clash) {
        memcpy(s, "onnx_", 5);
        k = 5;
    } else if (!n || isdigit((unsigned char)base[0]))
        s[k++] = '_';
    for (size_t i = 0; i < n; i++)
        s[k++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
    s[k] = 0;
    if (!mck_identifier(s)) {
        /* a word MIL reserves (a keyword or a dtype name): coremltools'
         * name sanitizer appends this suffix */
        memcpy(s + k, "_workaround", sizeof "_workaround");
        k += sizeof "_workaround" - 1;
    }
    char *name = s;
    for (unsigned i = 1; cml_name_get(c->used, name); i++) {
        if (name != s)
            free(name);
        name = mem_alloc(k + 24);
        snprintf(name, k + 24, "%s_%u", s, i);
    }
    if (name != s)
        free(s);
    cml_name_put(&c->used, name, "");
    return name;
}

/* ---- lowering helpers --------------------------------------------------------- */

int cml_onnx_version(const IrNode *n)
{
    const OsSchema *s = os_find(n->domain ? n->domain : "", n->op_type, CM_ONNX_OPSET);
    return s ? s->since : 0;
}

static const char *cm_target_name(int t)
{
    return t >= 0 && (size_t)t < mil_targets_n ? mil_targets[t].name : "any";
}

/* Notes in the report what refused: node n (may be NULL), the MIL op
 * (may be NULL), the first target that takes it and the kind. */
void cml_note_failure(CmReport *r, const IrNode *n, const char *mil_op, int first,
                            const char *kind)
{
    snprintf(r->fail_node, sizeof r->fail_node, "%s", n && n->name ? n->name : "");
    snprintf(r->fail_op, sizeof r->fail_op, "%s", n ? n->op_type : "");
    r->fail_version = n ? cml_onnx_version(n) : 0;
    snprintf(r->fail_mil_op, sizeof r->fail_mil_op, "%s", mil_op ? mil_op : "");
    r->fail_first = first;
    r->fail_kind = kind;
}

int cml_refuse(CmLower *c, const char *fmt, ...)
{
    if (c->failed)          /* the first reason stands */
        return -1;
    cml_note_failure(c->r, c->node, NULL, -1, "unsupported");
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const IrNode *n = c->node;
    if (n)
        ir_fail(c->err, "node '%s' (%s-%d): target %s: %s", n->name ? n->name : "",
                n->op_type, cml_onnx_version(n), cm_target_name(c->limit), why);
    else
        ir_fail(c->err, "%s (Core ML target %s)", why, cm_target_name(c->limit));
    c->failed = true;
    return -1;
}

bool cml_has(const IrNode *n, size_t i)
{
    return i < n->n_in && n->in[i];
}

int32_t cml_elem(const IrValue *v)
{
    return v && v->type && v->type->kind == IR_TYPE_TENSOR && v->type->has_elem_type
               ? v->type->elem_type : 0;
}

int cml_rank(const IrValue *v)
{
    if (!v || !v->type || v->type->kind != IR_TYPE_TENSOR || !v->type->shape)
        return -1;
    return (int)v->type->shape->rank;
}

bool cml_dims(const IrValue *v, int64_t *dims, size_t cap, size_t *rank)
{
    return v && ir_type_static_dims(v->type, dims, cap, rank);
}

bool cml_dims_open(const IrValue *v, int64_t *dims, size_t cap, size_t *rank)
{
    int r = cml_rank(v);
    if (r < 0 || (size_t)r > cap)
        return false;
    for (int i = 0; i < r; i++) {
        const IrDim *d = &v->type->shape->dims[i];
        dims[i] = d->kind == IR_DIM_VALUE && d->value >= 0 ? d->value : -1;
    }
    *rank = (size_t)r;
    return true;
}

MilType cml_type(const IrValue *v)
{
    MilType t = {0};
    t.dtype = cm_dtype_to_mil(cml_elem(v));
    t.rank = cml_rank(v);
    if (t.rank > 0) {
        const IrShape *s = v->type->shape;
        t.dims = mem_array((size_t)t.rank, sizeof *t.dims);
        for (int i = 0; i < t.rank; i++) {
            const IrDim *d = &s->dims[i];
            t.dims[i] = d->kind == IR_DIM_VALUE ? d->value : -1;
            if (d->kind == IR_DIM_PARAM && d->param) {
                if (!t.dim_names)
                    t.dim_names = mem_array((size_t)t.rank, sizeof *t.dim_names);
                t.dim_names[i] = mem_strdup(d->param);
            }
        }
    }
    return t;
}

const IrTensor *cml_known(const IrValue *v)
{
    if (!v)
        return NULL;
    return v->kind == IR_VAL_INPUT && v->init ? v->init : kv_value(v);
}

const IrTensor *cml_const_tensor(const IrNode *n, size_t i)
{
    return cml_has(n, i) ? cml_known(n->in[i]) : NULL;
}

bool cml_const_ints(const IrNode *n, size_t i, int64_t **v, size_t *len)
{
    const IrTensor *t = cml_const_tensor(n, i);
    return t && ir_tensor_to_i64s(t, KV_MAX_ELEMS, v, len);
}

bool cml_const_floats(const IrNode *n, size_t i, double **v, size_t *len)
{
    const IrTensor *t = cml_const_tensor(n, i);
    return t && ir_tensor_to_f64s(t, KV_MAX_ELEMS, v, len);
}

/* The operator table's default of attribute `name` of n's op at
 * CM_ONNX_OPSET, or NULL: defaults are written once, there; the rules'
 * own fallbacks only serve attributes the table gives none. */
static const OsAttr *cml_attr_default(const IrNode *n, const char *name)
{
    const OsSchema *s = os_find("", n->op_type, CM_ONNX_OPSET);
    const OsAttr *a = s ? os_attr(s, name) : NULL;
    return a && a->has_default ? a : NULL;
}

int64_t cml_attr_i_or(const IrNode *n, const char *name, int64_t dflt)
{
    const IrAttr *a = ir_node_attr(n, name);
    const OsAttr *d = a ? NULL : cml_attr_default(n, name);
    return a && a->has_i ? a->i : d && d->type == IR_AT_INT ? d->def_i : dflt;
}

int64_t cml_attr_i(const IrNode *n, const char *name)
{
    return cml_attr_i_or(n, name, 0);
}

float cml_attr_f(const IrNode *n, const char *name)
{
    const IrAttr *a = ir_node_attr(n, name);
    const OsAttr *d = a ? NULL : cml_attr_default(n, name);
    return a && a->has_f ? a->f : d && d->type == IR_AT_FLOAT ? d->def_f : 0.0f;
}

const char *cml_attr_s(const IrNode *n, const char *name, char *buf, size_t cap)
{
    return cml_attr_s_or(n, name, buf, cap, "");
}

const char *cml_attr_s_or(const IrNode *n, const char *name, char *buf, size_t cap,
                          const char *dflt)
{
    const IrAttr *a = ir_node_attr(n, name);
    if (!a || !a->has_s) {
        const OsAttr *d = a ? NULL : cml_attr_default(n, name);
        return d && d->type == IR_AT_STRING && d->def_s ? d->def_s : dflt;
    }
    size_t k = a->s.len < cap - 1 ? a->s.len : cap - 1;
    memcpy(buf, a->s.data, k);
    buf[k] = 0;
    return buf;
}

long cml_attr_ints(const IrNode *n, const char *name, const int64_t **v)
{
    const IrAttr *a = ir_node_attr(n, name);
    if (!a || (a->type != IR_AT_INTS && !a->n_ints))
        return -1;
    *v = a->ints;
    return (long)a->n_ints;
}

MilTensor *cml_ints(const int64_t *v, size_t n)
{
    int32_t *w = mem_array(n ? n : 1, sizeof *w);
    for (size_t i = 0; i < n; i++)
        w[i] = (int32_t)v[i];
    MilTensor *t = mil_tensor_ints(w, n);
    free(w);
    return t;
}

bool cml_axis(int64_t axis, int rank, int64_t *out)
{
    if (rank < 0 || axis < -rank || axis >= rank)
        return false;
    *out = axis < 0 ? axis + rank : axis;
    return true;
}

/* An int64 tensor's elements as int32 (dst holds numel); false naming the
 * first value out of range. */
static bool cml_narrow(CmLower *c, const IrTensor *t, int32_t *dst, size_t numel)
{
    for (size_t i = 0; i < numel; i++) {
        int64_t v;
        if (!ir_tensor_get_i64(t, i, &v) || v < INT32_MIN || v > INT32_MAX) {
            cml_refuse(c, "int64 constant '%s' holds %lld, outside Core ML's int32",
                       t->name ? t->name : "", (long long)v);
            return false;
        }
        dst[i] = (int32_t)v;
    }
    return true;
}

MilTensor *cml_tensor(CmLower *c, const IrTensor *t)
{
    int32_t d = t->has_data_type ? t->data_type : 0;
    int32_t md = cm_dtype_to_mil(d);
    if (!md) {
        cml_refuse(c, "constant '%s' of type %s has no Core ML type%s", t->name ? t->name : "",
                   ir_dtype_name(d) ? ir_dtype_name(d) : "?",
                   d == IR_DOUBLE ? " (float64 is refused, not narrowed)" : "");
        return NULL;
    }
    uint64_t numel;
    if (!ir_tensor_numel(t, &numel) || numel > SIZE_MAX / 8 || t->ndims > 64) {
        cml_refuse(c, "constant '%s': bad dims", t->name ? t->name : "");
        return NULL;
    }
    IrError e;
    if (ir_tensor_check_declared(t, &e) < 0) {
        cml_refuse(c, "%s", e.msg);
        return NULL;
    }
    size_t hs = ir_dtype_host_size(d);
    void *buf = mem_array(numel ? (size_t)numel : 1, hs);
    if (ir_tensor_decode(t, buf, (size_t)numel, &e) < 0) {
        free(buf);
        cml_refuse(c, "%s", e.msg);
        return NULL;
    }
    MilTensor *mt = NULL;
    if (d == IR_INT64) {
        int32_t *w = mem_array(numel ? (size_t)numel : 1, sizeof *w);
        if (cml_narrow(c, t, w, (size_t)numel))
            mt = mil_tensor_new(MIL_INT32, (int)t->ndims, t->dims, w);
        free(w);
    } else {
        mt = mil_tensor_new(md, (int)t->ndims, t->dims, buf);
    }
    free(buf);
    return mt;
}

char *cml_name(CmLower *c, const char *base)
{
    return cml_fresh(c, base);
}

void cml_bind(CmLower *c, const char *onnx, const char *mil)
{
    cml_name_put(&c->onnx, onnx, mil);
}

const char *cml_const(CmLower *c, MilTensor *t)
{
    /* not "const_N": coremltools' loader names the placeholder consts it
     * makes while reading nested blocks so, and mistakes ours for them */
    char *name = cml_fresh(c, c->node && c->node->name && *c->node->name ? c->node->name
                                                                          : "cst");
    MilOp *op = mil_const_add(c->root, name, t);
    free(name);
    c->r->n_ops++;
    c->r->n_consts++;
    return op->out[0].name;
}

/* Emits a const op for ONNX value v holding t, named after v. */
const char *cml_const_value(CmLower *c, const IrValue *v, const IrTensor *t)
{
    MilTensor *mt = cml_tensor(c, t);
    if (!mt)
        return NULL;
    char *name = cml_fresh(c, v->name);
    mil_const_add(c->root, name, mt);
    cml_name_put(&c->onnx, v->name, name);
    free(name);
    c->r->n_ops++;
    c->r->n_consts++;
    return cml_name_get(c->onnx, v->name)->val;
}

const char *cml_in(CmLower *c, const IrNode *n, size_t i)
{
    if (!cml_has(n, i)) {
        cml_refuse(c, "input %zu is required by the lowering but left out", i);
        return NULL;
    }
    const IrValue *v = n->in[i];
    CmName *e = cml_name_get(c->onnx, v->name);
    if (e)
        return e->val;
    const IrTensor *t = cml_known(v);
    if (t)
        return cml_const_value(c, v, t);
    cml_refuse(c, "input '%s' has no Core ML value", v->name);
    return NULL;
}

MilOp *cml_op(CmLower *c, const char *type)
{
    const IrNode *n = c->node;
    char *name = cml_fresh(c, n && n->name && *n->name ? n->name : type);
    MilOp *op = mil_op_add(c->b, type, name);
    free(name);
    op->origin = n;
    c->r->n_ops++;
    int since = milop_since(type);
    if (since < 0) {
        cml_refuse(c, "MIL op '%s' is not in the op table", type);
        return op;
    }
    cml_need(c, type, since);
    return op;
}

void cml_need(CmLower *c, const char *type, int since)
{
    const IrNode *n = c->node;
    if (c->limit >= 0 && since > c->limit && !c->failed) {
        cml_note_failure(c->r, n, type, since, "target");
        ir_fail(c->err, "node '%s' (%s-%d): MIL op '%s' first exists at %s; target %s",
                n && n->name ? n->name : "", n ? n->op_type : "", n ? cml_onnx_version(n) : 0,
                type, mil_targets[since].name, mil_targets[c->limit].name);
        c->failed = true;
    }
    if (since > c->need || !c->r->forced_op[0]) {
        c->need = since > c->need ? since : c->need;
        snprintf(c->r->forced_op, sizeof c->r->forced_op, "%s", type);
        snprintf(c->r->forced_node, sizeof c->r->forced_node, "%s",
                 n && n->name ? n->name : "");
        snprintf(c->r->forced_onnx_op, sizeof c->r->forced_onnx_op, "%s",
                 n ? n->op_type : "");
    }
}

int cml_out(CmLower *c, MilOp *op, const IrNode *n, size_t i)
{
    const IrValue *v = i < n->n_out ? n->out[i] : NULL;
    if (!v)
        return 0;
    MilType t = cml_type(v);
    if (!t.dtype) {
        mil_type_clear(&t);
        int32_t d = cml_elem(v);
        return cml_refuse(c, "output '%s' of type %s has no Core ML type%s", v->name,
                          d && ir_dtype_name(d) ? ir_dtype_name(d) : "unknown",
                          d == IR_DOUBLE ? " (float64 is refused, not narrowed)" : "");
    }
    char *name = cml_fresh(c, v->name);
    mil_op_out(op, name, &t);
    cml_name_put(&c->onnx, v->name, name);
    free(name);
    mil_type_clear(&t);
    return 0;
}

const char *cml_tmp(CmLower *c, MilOp *op, int32_t dtype, int rank, const int64_t *dims)
{
    char base[300];
    snprintf(base, sizeof base, "%s_tmp%zu", op->name ? op->name : "t", c->n_tmp++);
    char *name = cml_fresh(c, base);
    MilType t = mil_type(dtype, rank, rank > 0 ? dims : NULL);
    if (rank > 0 && !dims)
        for (int i = 0; i < rank; i++)
            t.dims[i] = -1;
    mil_op_out(op, name, &t);
    mil_type_clear(&t);
    free(name);
    return op->out[op->n_out - 1].name;
}

MilOp *cml_unary(CmLower *c, const IrNode *n, const char *type, const char *x)
{
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    cml_out(c, op, n, 0);
    return op;
}

MilTensor *cml_scalar(int32_t dtype, double v)
{
    switch (dtype) {
    case MIL_INT32: return mil_tensor_scalar_i32((int32_t)v);
    case MIL_BOOL: return mil_tensor_scalar_bool(v != 0);
    case MIL_FP16: {
        /* round to nearest float16 through float */
        uint16_t h = half_f32_to_f16((float)v);
        return mil_tensor_new(MIL_FP16, 0, NULL, &h);
    }
    default: return mil_tensor_scalar_f32((float)v);
    }
}

const char *cml_lookup(const CmLower *c, const char *onnx)
{
    CmName *e = cml_name_get(c->onnx, onnx);
    return e ? e->val : NULL;
}

void cml_free_names(CmLower *c)
{
    cml_table_free(&c->onnx);
    cml_table_free(&c->used);
}
