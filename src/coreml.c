/*
 * coreml.c - the ONNX <-> Core ML ML Program driver (prefix cm_; helpers
 * for the family files cml_ (lowering) and cmr_ (raising)); see coreml.h
 * and coreml/rules.h. The per-op rules live in src/coreml/<family>.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreml.h"
#include "check.h"
#include "milcheck.h"
#include "coreml/rules.h"
#include "infer.h"
#include "known.h"
#include "mlpackage.h"
#include "milops.h"
#include "opschema.h"
#include "uthash.h"

/* The families, in the order of src/opschema_flags.txt's sections. */
static const CmFamily *const cm_families[] = {
    &cm_family_activation, &cm_family_control, &cm_family_einsum, &cm_family_elementwise,
    &cm_family_index, &cm_family_nn, &cm_family_norm, &cm_family_quant, &cm_family_reduce,
    &cm_family_resize, &cm_family_rnn, &cm_family_sample, &cm_family_shape, &cm_family_tensor,
};
#define CM_N_FAMILIES (sizeof cm_families / sizeof cm_families[0])

static CmLowerFn cm_lower_rule(const char *op)
{
    for (size_t f = 0; f < CM_N_FAMILIES; f++)
        for (size_t i = 0; i < cm_families[f]->n_lower; i++)
            if (!strcmp(cm_families[f]->lower[i].op, op))
                return cm_families[f]->lower[i].fn;
    return NULL;
}

bool cm_lowers(const char *op)
{
    return op && cm_lower_rule(op) != NULL;
}

static CmRaiseFn cm_raise_rule(const char *op)
{
    for (size_t f = 0; f < CM_N_FAMILIES; f++)
        for (size_t i = 0; i < cm_families[f]->n_raise; i++)
            if (!strcmp(cm_families[f]->raise[i].op, op))
                return cm_families[f]->raise[i].fn;
    return NULL;
}

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

/* ---- names ------------------------------------------------------------------ */

struct CmName {
    char *key;
    char *val;
    UT_hash_handle hh;
};

static void cm_names_free(CmName **h)
{
    CmName *e, *tmp;
    HASH_ITER(hh, *h, e, tmp) {
        HASH_DEL(*h, e);
        free(e->key);
        free(e->val);
        free(e);
    }
}

static CmName *cm_name_get(CmName *h, const char *key)
{
    CmName *e = NULL;
    HASH_FIND_STR(h, key, e);
    return e;
}

static void cm_name_put(CmName **h, const char *key, const char *val)
{
    CmName *e = ir_alloc(sizeof *e);
    e->key = ir_strdup(key);
    e->val = ir_strdup(val);
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

static char *cm_fresh(CmLower *c, const char *base)
{
    size_t n = strlen(base ? base : "");
    bool clash = n && cm_loader_name(base);
    char *s = ir_alloc(n + 8 + sizeof "_workaround");
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
    for (unsigned i = 1; cm_name_get(c->used, name); i++) {
        if (name != s)
            free(name);
        name = ir_alloc(k + 24);
        snprintf(name, k + 24, "%s_%u", s, i);
    }
    if (name != s)
        free(s);
    cm_name_put(&c->used, name, "");
    return name;
}

/* float32 bits -> float16 bits, rounding to nearest even (scalars only). */
static uint16_t cm_f32_to_f16(uint32_t u)
{
    uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
    int32_t e = (int32_t)(u >> 23 & 0xff) - 127 + 15;
    uint32_t m = u & 0x7fffff;
    if ((u >> 23 & 0xff) == 0xff)
        return sign | 0x7c00 | (m ? 0x200 : 0);
    if (e >= 31)
        return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        m |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return sign | (uint16_t)h;
    }
    uint32_t h = (uint32_t)e << 10 | m >> 13, rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return sign | (uint16_t)h;
}

/* ---- lowering helpers --------------------------------------------------------- */

static int cm_onnx_version(const IrNode *n)
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
static void cm_note_failure(CmReport *r, const IrNode *n, const char *mil_op, int first,
                            const char *kind)
{
    snprintf(r->fail_node, sizeof r->fail_node, "%s", n && n->name ? n->name : "");
    snprintf(r->fail_op, sizeof r->fail_op, "%s", n ? n->op_type : "");
    r->fail_version = n ? cm_onnx_version(n) : 0;
    snprintf(r->fail_mil_op, sizeof r->fail_mil_op, "%s", mil_op ? mil_op : "");
    r->fail_first = first;
    r->fail_kind = kind;
}

int cml_refuse(CmLower *c, const char *fmt, ...)
{
    if (c->failed)          /* the first reason stands */
        return -1;
    cm_note_failure(c->r, c->node, NULL, -1, "unsupported");
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const IrNode *n = c->node;
    if (n)
        ir_fail(c->err, "node '%s' (%s-%d): target %s: %s", n->name ? n->name : "",
                n->op_type, cm_onnx_version(n), cm_target_name(c->limit), why);
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
        t.dims = ir_alloc_array((size_t)t.rank, sizeof *t.dims);
        for (int i = 0; i < t.rank; i++) {
            const IrDim *d = &s->dims[i];
            t.dims[i] = d->kind == IR_DIM_VALUE ? d->value : -1;
            if (d->kind == IR_DIM_PARAM && d->param) {
                if (!t.dim_names)
                    t.dim_names = ir_alloc_array((size_t)t.rank, sizeof *t.dim_names);
                t.dim_names[i] = ir_strdup(d->param);
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

int64_t cml_attr_i(const IrNode *n, const char *name, int64_t dflt)
{
    const IrAttr *a = ir_node_attr(n, name);
    const OsAttr *d = a ? NULL : cml_attr_default(n, name);
    return a && a->has_i ? a->i : d && d->type == IR_AT_INT ? d->def_i : dflt;
}

float cml_attr_f(const IrNode *n, const char *name, float dflt)
{
    const IrAttr *a = ir_node_attr(n, name);
    const OsAttr *d = a ? NULL : cml_attr_default(n, name);
    return a && a->has_f ? a->f : d && d->type == IR_AT_FLOAT ? d->def_f : dflt;
}

const char *cml_attr_s(const IrNode *n, const char *name, char *buf, size_t cap,
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
    int32_t *w = ir_alloc_array(n ? n : 1, sizeof *w);
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
    void *buf = ir_alloc_array(numel ? (size_t)numel : 1, hs);
    if (ir_tensor_decode(t, buf, (size_t)numel, &e) < 0) {
        free(buf);
        cml_refuse(c, "%s", e.msg);
        return NULL;
    }
    MilTensor *mt = NULL;
    if (d == IR_INT64) {
        int32_t *w = ir_alloc_array(numel ? (size_t)numel : 1, sizeof *w);
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
    return cm_fresh(c, base);
}

void cml_bind(CmLower *c, const char *onnx, const char *mil)
{
    cm_name_put(&c->onnx, onnx, mil);
}

const char *cml_const(CmLower *c, MilTensor *t)
{
    /* not "const_N": coremltools' loader names the placeholder consts it
     * makes while reading nested blocks so, and mistakes ours for them */
    char *name = cm_fresh(c, c->node && c->node->name && *c->node->name ? c->node->name
                                                                          : "cst");
    MilOp *op = mil_const_add(c->root, name, t);
    free(name);
    c->r->n_ops++;
    c->r->n_consts++;
    return op->out[0].name;
}

/* Emits a const op for ONNX value v holding t, named after v. */
static const char *cml_const_value(CmLower *c, const IrValue *v, const IrTensor *t)
{
    MilTensor *mt = cml_tensor(c, t);
    if (!mt)
        return NULL;
    char *name = cm_fresh(c, v->name);
    mil_const_add(c->root, name, mt);
    cm_name_put(&c->onnx, v->name, name);
    free(name);
    c->r->n_ops++;
    c->r->n_consts++;
    return cm_name_get(c->onnx, v->name)->val;
}

const char *cml_in(CmLower *c, const IrNode *n, size_t i)
{
    if (!cml_has(n, i)) {
        cml_refuse(c, "input %zu is required by the lowering but left out", i);
        return NULL;
    }
    const IrValue *v = n->in[i];
    CmName *e = cm_name_get(c->onnx, v->name);
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
    char *name = cm_fresh(c, n && n->name && *n->name ? n->name : type);
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
        cm_note_failure(c->r, n, type, since, "target");
        ir_fail(c->err, "node '%s' (%s-%d): MIL op '%s' first exists at %s; target %s",
                n && n->name ? n->name : "", n ? n->op_type : "", n ? cm_onnx_version(n) : 0,
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
    char *name = cm_fresh(c, v->name);
    mil_op_out(op, name, &t);
    cm_name_put(&c->onnx, v->name, name);
    free(name);
    mil_type_clear(&t);
    return 0;
}

const char *cml_tmp(CmLower *c, MilOp *op, int32_t dtype, int rank, const int64_t *dims)
{
    char base[300];
    snprintf(base, sizeof base, "%s_tmp%zu", op->name ? op->name : "t", c->n_tmp++);
    char *name = cm_fresh(c, base);
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
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = cm_f32_to_f16(u);
        return mil_tensor_new(MIL_FP16, 0, NULL, &h);
    }
    default: return mil_tensor_scalar_f32((float)v);
    }
}

const CmMap *cm_map_onnx(const CmMap *t, size_t n, const char *onnx)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].onnx, onnx))
            return &t[i];
    return NULL;
}

const CmMap *cm_map_mil(const CmMap *t, size_t n, const char *mil)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].mil, mil))
            return &t[i];
    return NULL;
}

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
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
        return cml_refuse(c, "domain '%s' has no Core ML lowering", n->domain);
    bool ctl = !strcmp(n->op_type, "If") || !strcmp(n->op_type, "Loop") ||
               !strcmp(n->op_type, "Scan");
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
    f->name = ir_strdup(name);
    f->type = mil_type_copy(t);
    if (t->dim_names) {
        f->range_lo = ir_alloc_array((size_t)t->rank, sizeof *f->range_lo);
        f->range_hi = ir_alloc_array((size_t)t->rank, sizeof *f->range_hi);
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
#define CM_NAME_KEY "onnx-convert.onnx_name."

static void cm_meta_add(MilModel *mm, const char *key, const char *val)
{
    mm->meta_keys = ir_grow(mm->meta_keys, mm->n_meta + 1, sizeof *mm->meta_keys);
    mm->meta_values = ir_grow(mm->meta_values, mm->n_meta + 1, sizeof *mm->meta_values);
    mm->meta_keys[mm->n_meta] = ir_strdup(key);
    mm->meta_values[mm->n_meta++] = ir_strdup(val);
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
        char *key = ir_alloc(sizeof CM_NAME_KEY + strlen(mil));
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
    mm->in = ir_alloc_array(g->inputs.n ? g->inputs.n : 1, sizeof *mm->in);
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
        char *name = cm_fresh(c, v->name);
        mil_function_input(fn, name, &t);
        cm_feature(&mm->in[mm->n_in++], name, &t);
        cm_io_note(c->r, mm, true, v->name, name, t.rank == 0);
        cm_name_put(&c->onnx, v->name, name);
        free(name);
        mil_type_clear(&t);
    }
    return 0;
}

/* The MIL type of value `name` as the block declares it (an input or an
 * op output), or NULL. */
static const MilType *cm_block_type(const MilFunction *fn, const char *name)
{
    for (size_t i = 0; i < fn->n_in; i++)
        if (!strcmp(fn->in[i].name, name))
            return &fn->in[i].type;
    const MilBlock *b = fn->block;
    for (size_t k = b->n_ops; k-- > 0;)
        for (size_t j = 0; j < b->ops[k]->n_out; j++)
            if (!strcmp(b->ops[k]->out[j].name, name))
                return &b->ops[k]->out[j].type;
    return NULL;
}

static int cm_export_outputs(CmLower *c, MilFunction *fn, MilModel *mm)
{
    const IrGraph *g = c->g;
    c->node = NULL;
    mm->out = ir_alloc_array(g->outputs.n ? g->outputs.n : 1, sizeof *mm->out);
    for (size_t i = 0; i < g->outputs.n; i++) {
        const IrValue *v = ((const IrValueInfo *)g->outputs.p[i])->value;
        CmName *e = cm_name_get(c->onnx, v->name);
        const char *name = e ? e->val : NULL;
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
        const MilType *t = cm_block_type(fn, name);
        if (!t)
            return cml_refuse(c, "graph output '%s' has no type", v->name);
        if (dup) {
            MilOp *op = cml_op(c, "identity");
            mil_op_in(op, "x", name);
            char base[300];
            snprintf(base, sizeof base, "%s_out", v->name);
            char *nn = cm_fresh(c, base);
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
        CmName *e = cm_name_get(c->onnx, v->name);
        const char *name = e ? e->val : NULL;
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
                cm_note_failure(c->r, n, op->type, ok, ok < 0 ? "constant-parameter" : "target");
                return ir_fail(c->err, "node '%s' (%s-%d): MIL op '%s': parameter '%s' is not "
                               "constant; %s takes it only as a constant%s%s",
                               n && n->name ? n->name : "", n ? n->op_type : "",
                               n ? cm_onnx_version(n) : 0, op->type, op->in[k].param,
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
                char *name = cm_fresh(c, op->name ? op->name : "const");
                MilOp *cop = mil_const_add(root, name, arg->value);
                free(name);
                arg->value = NULL;
                arg->name = ir_strdup(cop->out[0].name);
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
                    arg->name = ir_strdup(to);
                }
            }
        for (size_t k = 0; k < op->n_blocks; k++)
            cm_rename_uses(op->blocks[k], from, to);
    }
    for (size_t k = 0; k < b->n_out; k++)
        if (!strcmp(b->out[k], from)) {
            free(b->out[k]);
            b->out[k] = ir_strdup(to);
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
    char *inner = cm_fresh(c, base);
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
    char *sq = cm_fresh(c, base);
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
        const MilType *t = cm_block_type(fn, b->out[k]);
        int32_t want = t ? cm_io_dtype(t->dtype, spec) : 0;
        if (!want)
            continue;
        char *name = ir_strdup(b->out[k]);
        char base[300];
        snprintf(base, sizeof base, "%s_%s", name, mil_dtype_name(t->dtype));
        char *inner = cm_fresh(c, base);
        MilType ty = mil_type_copy(t);
        for (size_t i = 0; i < b->n_ops; i++)   /* the producer's output */
            for (size_t j = 0; j < b->ops[i]->n_out; j++)
                if (!strcmp(b->ops[i]->out[j].name, name)) {
                    free(b->ops[i]->out[j].name);
                    b->ops[i]->out[j].name = ir_strdup(inner);
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
    if (inf_model(m, NULL, err) < 0)
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
    cm_names_free(&c.onnx);
    cm_names_free(&c.used);
    if (rc < 0 || c.failed) {
        mil_model_free(mm);
        return -1;
    }
    int t = limit >= 0 ? limit : c.need;
    r->target = t;
    r->lowest = c.need;
    mm->spec_version = mil_targets[t].spec_version;
    free(fn->opset);
    fn->opset = ir_strdup(mil_targets[t].opset);
    *out = mm;
    return 0;
}

/* ---- raising helpers ------------------------------------------------------------ */

struct CmConst {
    const char *key;        /* borrowed from the op */
    const MilTensor *val;   /* a const op's value; NULL for other ops */
    const MilType *type;    /* the op's output type (cmr_rank) */
    UT_hash_handle hh;
};

int cmr_fail(CmRaise *r, const char *fmt, ...)
{
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return ir_fail(r->err, "MIL op '%s' (%s): %s", r->op ? r->op->type : "",
                   r->op && r->op->name ? r->op->name : "", why);
}

static const MilArg *cmr_arg(const MilOp *op, const char *param, size_t k)
{
    const MilInput *in = mil_op_input(op, param);
    return in && k < in->n_args ? &in->args[k] : NULL;
}

const MilTensor *cmr_const(CmRaise *r, const MilOp *op, const char *param)
{
    const MilArg *a = cmr_arg(op, param, 0);
    if (!a)
        return NULL;
    if (a->value)
        return a->value;
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, a->name, e);
    return e ? e->val : NULL;
}

int cmr_rank(CmRaise *r, const char *name)
{
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, name, e);
    if (e)
        return e->type->rank;
    for (const IrGraph *g = r->g; g; g = g->parent)
        for (size_t i = 0; i < g->inputs.n; i++) {
            const IrValueInfo *vi = g->inputs.p[i];
            if (!strcmp(vi->value->name, name))
                return vi->type && vi->type->shape ? (int)vi->type->shape->rank : -1;
        }
    return -1;
}

int32_t cmr_elem(CmRaise *r, const MilOp *op, const char *param)
{
    const MilArg *a = cmr_arg(op, param, 0);
    if (!a)
        return 0;
    if (a->value)
        return cm_dtype_to_onnx(a->value->dtype);
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, a->name, e);
    if (e)
        return cm_dtype_to_onnx(e->type->dtype);
    for (const IrGraph *g = r->g; g; g = g->parent)
        for (size_t i = 0; i < g->inputs.n; i++) {
            const IrValueInfo *vi = g->inputs.p[i];
            if (!strcmp(vi->value->name, a->name))
                return vi->type && vi->type->has_elem_type ? vi->type->elem_type : 0;
        }
    return 0;
}

bool cmr_dims(CmRaise *r, const char *name, int64_t *dims, size_t cap, size_t *rank)
{
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, name, e);
    if (e) {
        const MilType *t = e->type;
        if (t->rank < 0 || (size_t)t->rank > cap)
            return false;
        for (int i = 0; i < t->rank; i++) {
            if (t->dims[i] < 0 || (t->dim_names && t->dim_names[i]))
                return false;
            dims[i] = t->dims[i];
        }
        *rank = (size_t)t->rank;
        return true;
    }
    for (const IrGraph *g = r->g; g; g = g->parent)
        for (size_t i = 0; i < g->inputs.n; i++) {
            const IrValueInfo *vi = g->inputs.p[i];
            if (strcmp(vi->value->name, name))
                continue;
            const IrShape *s = vi->type ? vi->type->shape : NULL;
            if (!s || s->rank > cap)
                return false;
            for (size_t k = 0; k < s->rank; k++) {
                if (s->dims[k].kind != IR_DIM_VALUE)
                    return false;
                dims[k] = s->dims[k].value;
            }
            *rank = s->rank;
            return true;
        }
    return false;
}

const char *cmr_tmp(CmRaise *r, const char *base)
{
    char *s = ir_graph_fresh_name(r->g, base);
    /* reserve it: fresh_name only looks at values already in the graph */
    ir_graph_value(r->g, s);
    ir_ptrlist_push(&r->pool, s);
    return s;
}

static IrTensor *cmr_tensor(const MilTensor *t, const char *name)
{
    int32_t d = cm_dtype_to_onnx(t->dtype);
    if (!d)
        return NULL;
    return ir_tensor_new(name, d, (size_t)(t->rank > 0 ? t->rank : 0), t->dims, t->data,
                         t->nbytes);
}

const char *cmr_init_tensor(CmRaise *r, const MilTensor *t)
{
    const char *name = cmr_tmp(r, "c");
    IrTensor *it = cmr_tensor(t, name);
    if (!it) {
        cmr_fail(r, "constant of MIL type %s has no ONNX type",
                 mil_dtype_name(t->dtype) ? mil_dtype_name(t->dtype) : "?");
        return NULL;
    }
    ir_graph_add_init(r->g, it);
    return name;
}

const char *cmr_init_i64(CmRaise *r, const int64_t *v, size_t n, bool scalar)
{
    const char *name = cmr_tmp(r, "c");
    int64_t dims[1] = {(int64_t)n};
    ir_graph_add_init(r->g, ir_tensor_new(name, IR_INT64, scalar ? 0 : 1, dims, v,
                                          n * sizeof *v));
    return name;
}

const char *cmr_init_f32(CmRaise *r, const float *v, size_t n, bool scalar)
{
    const char *name = cmr_tmp(r, "c");
    int64_t dims[1] = {(int64_t)n};
    ir_graph_add_init(r->g, ir_tensor_new(name, IR_FLOAT, scalar ? 0 : 1, dims, v,
                                          n * sizeof *v));
    return name;
}

const char *cmr_in(CmRaise *r, const MilOp *op, const char *param, size_t k)
{
    const MilArg *a = cmr_arg(op, param, k);
    if (!a)
        return NULL;
    if (a->name) {
        CmConst *e = NULL;
        HASH_FIND_STR(r->consts, a->name, e);
        if (e && e->val && !cm_dtype_to_onnx(e->val->dtype)) {
            cmr_fail(r, "%s: a constant of MIL type %s has no ONNX type", param,
                     mil_dtype_name(e->val->dtype) ? mil_dtype_name(e->val->dtype) : "?");
            r->in_failed = true;
            return NULL;
        }
        return a->name;
    }
    if (a->value && !cm_dtype_to_onnx(a->value->dtype)) {
        cmr_fail(r, "%s: a constant of MIL type %s has no ONNX type", param,
                 mil_dtype_name(a->value->dtype) ? mil_dtype_name(a->value->dtype) : "?");
        r->in_failed = true;
        return NULL;
    }
    return a->value ? cmr_init_tensor(r, a->value) : NULL;
}

bool cmr_ints(const MilTensor *t, int64_t **v, size_t *n)
{
    uint64_t numel;
    size_t w = mil_dtype_size(t->dtype);
    if (!t || !mil_tensor_numel(t, &numel) || numel > (1u << 24) || !w ||
        t->nbytes < numel * w)
        return false;
    *v = ir_alloc_array(numel ? (size_t)numel : 1, sizeof **v);
    *n = (size_t)numel;
    for (size_t i = 0; i < numel; i++) {
        const uint8_t *p = t->data + i * w;
        int64_t x;
        switch (t->dtype) {
        case MIL_INT32: x = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                                      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24); break;
        case MIL_INT64: {
            uint64_t u = 0;
            for (int b = 7; b >= 0; b--)
                u = u << 8 | p[b];
            x = (int64_t)u;
            break;
        }
        case MIL_BOOL: case MIL_UINT8: x = p[0]; break;
        case MIL_INT8: x = (int8_t)p[0]; break;
        default:
            free(*v);
            return false;
        }
        (*v)[i] = x;
    }
    return true;
}

bool cmr_float(const MilTensor *t, double *v)
{
    if (!t || !t->data)
        return false;
    if (t->dtype == MIL_FP32 && t->nbytes >= 4) {
        uint32_t u = (uint32_t)t->data[0] | (uint32_t)t->data[1] << 8 |
                     (uint32_t)t->data[2] << 16 | (uint32_t)t->data[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        *v = f;
        return true;
    }
    if (t->dtype == MIL_FP16 && t->nbytes >= 2) {
        *v = ir_half_to_float((uint16_t)(t->data[0] | t->data[1] << 8));
        return true;
    }
    return false;
}

const char *cmr_string(const MilTensor *t)
{
    return t && t->dtype == MIL_STRING && t->n_strings == 1 ? t->strings[0] : NULL;
}

bool cmr_bool(CmRaise *r, const MilOp *op, const char *param, bool dflt)
{
    const MilTensor *t = cmr_const(r, op, param);
    return t && t->dtype == MIL_BOOL && t->nbytes >= 1 ? t->data[0] != 0 : dflt;
}

const char *cmr_out(const MilOp *op, size_t k)
{
    return k < op->n_out ? op->out[k].name : "";
}

/* A node name no other node of the import has: the ops one MIL op
 * raises to share its name as a base. */
static char *cmr_node_name(CmRaise *r, const char *base)
{
    size_t cap = strlen(base) + 32;
    char *s = ir_alloc(cap);
    for (unsigned long i = 0;; i++) {
        snprintf(s, cap, i ? "%s_%lu" : "%s", base, i);
        const char *k = s;
        if (ks_add(&r->node_names, &k, 1, 0))
            return s;
    }
}

int cmr_node(CmRaise *r, const char *op_type, size_t n_in, const char *const *in,
             size_t n_out, const char *const *out, IrNode **node)
{
    for (size_t i = 0; i < n_in; i++)
        if (!in[i])
            return r->in_failed ? -1
                                : cmr_fail(r, "input %zu of the ONNX %s is missing", i, op_type);
    char *name = cmr_node_name(r, r->op && r->op->name ? r->op->name : op_type);
    IrNode *n = ir_node_new(r->g, NULL, op_type, "", name, n_in, in, n_out, out, r->err);
    free(name);
    if (!n)
        return -1;
    if (node)
        *node = n;
    return 0;
}

int cmr_simple(CmRaise *r, const MilOp *op, const char *onnx_op, size_t n_in,
               const char *const *in, IrNode **node)
{
    const char *out[1] = {cmr_out(op, 0)};
    return cmr_node(r, onnx_op, n_in, in, 1, out, node);
}

const char *cmr_tnode(CmRaise *r, const char *op_type, size_t n_in, const char *a,
                      const char *b, IrNode **node)
{
    const char *in[2] = {a, b}, *out[1] = {NULL};
    if (!a || (n_in == 2 && !b)) {
        if (!r->in_failed)
            cmr_fail(r, "an input of the ONNX %s is missing", op_type);
        r->in_failed = true;
        return NULL;
    }
    out[0] = cmr_tmp(r, op_type);
    if (cmr_node(r, op_type, n_in, in, 1, out, node) < 0) {
        r->in_failed = true;
        return NULL;
    }
    return out[0];
}

const char *cmr_init_scalar(CmRaise *r, const MilOp *op, double v)
{
    int32_t dt = op->n_out ? op->out[0].type.dtype : 0;
    bool ok = dt == MIL_FP32 || dt == MIL_FP16 || dt == MIL_INT32 || dt == MIL_BOOL;
    MilTensor *t = ok ? cml_scalar(dt, v) : NULL;
    const char *name = t ? cmr_init_tensor(r, t) : NULL;
    mil_tensor_free(t);
    if (!ok)
        cmr_fail(r, "no scalar of the output's type %s",
                 mil_dtype_name(dt) ? mil_dtype_name(dt) : "?");
    if (!name)
        r->in_failed = true;
    return name;
}

/* ---- import --------------------------------------------------------------------- */

static IrType *cm_ir_type(const MilType *t)
{
    IrType *it = ir_alloc(sizeof *it);
    it->kind = IR_TYPE_TENSOR;
    it->has_elem_type = true;
    it->elem_type = cm_dtype_to_onnx(t->dtype);
    if (t->rank >= 0) {
        it->shape = ir_shape_new((size_t)t->rank);
        for (int i = 0; i < t->rank; i++) {
            IrDim *d = &it->shape->dims[i];
            if (t->dim_names && t->dim_names[i]) {
                d->kind = IR_DIM_PARAM;
                d->param = ir_strdup(t->dim_names[i]);
            } else if (t->dims[i] >= 0) {
                d->kind = IR_DIM_VALUE;
                d->value = t->dims[i];
            }
        }
    }
    return it;
}

IrType *cmr_type(const MilType *t)
{
    return cm_ir_type(t);
}

static int cm_raise_op(CmRaise *r, const MilOp *op)
{
    r->op = op;
    if (!strcmp(op->type, "const")) {
        if (!op->val || op->n_out != 1)
            return cmr_fail(r, "const without a value");
        CmConst *e = ir_alloc(sizeof *e);
        e->key = op->out[0].name;
        e->val = op->val;
        e->type = &op->out[0].type;
        HASH_ADD_KEYPTR(hh, r->consts, e->key, strlen(e->key), e);
        /* A string const (coremltools writes pad_type, a cast's dtype, a
         * conv's pad mode so) is a parameter the rules read with
         * cmr_const; it becomes no initializer, and cmr_in refuses it as
         * a tensor. */
        if (!cm_dtype_to_onnx(op->val->dtype))
            return 0;
        IrTensor *t = cmr_tensor(op->val, op->out[0].name);
        if (!t)
            return cmr_fail(r, "constant '%s' cannot be read", op->out[0].name);
        if (!ir_graph_add_init(r->g, t)) {
            ir_tensor_free(t);
            return cmr_fail(r, "value '%s' defined twice", op->out[0].name);
        }
        return 0;
    }
    if (op->n_blocks && strcmp(op->type, "cond") && strcmp(op->type, "while_loop"))
        return cmr_fail(r, "ops with blocks other than cond and while_loop are not raised yet");
    bool folded = !strncmp(op->type, "constexpr_", 10);
    CmRaiseFn fn = folded ? NULL : cm_raise_rule(op->type);
    if (!fn && !folded)
        return cmr_fail(r, "no ONNX raising for this op");
    for (size_t k = 0; k < op->n_out; k++) {
        CmConst *e = ir_alloc(sizeof *e);
        e->key = op->out[k].name;
        e->type = &op->out[k].type;
        HASH_ADD_KEYPTR(hh, r->consts, e->key, strlen(e->key), e);
    }
    return folded ? cmx_fold(r, op) : fn(r, op);
}

int cmr_const_value(CmRaise *r, const MilOp *op, MilTensor *t)
{
    ir_ptrlist_push(&r->owned, t);
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, op->out[0].name, e);
    if (!e)
        return cmr_fail(r, "output '%s' is not registered", op->out[0].name);
    e->val = t;
    if (!cm_dtype_to_onnx(t->dtype))
        return 0;
    IrTensor *it = cmr_tensor(t, op->out[0].name);
    if (!it)
        return cmr_fail(r, "the folded constant cannot be held");
    if (!ir_graph_add_init(r->g, it)) {
        ir_tensor_free(it);
        return cmr_fail(r, "value '%s' defined twice", op->out[0].name);
    }
    return 0;
}

uint16_t cmr_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return cm_f32_to_f16(u);
}

int cmr_block(CmRaise *r, const MilBlock *b, IrGraph *g, const MilNamedType *types)
{
    IrGraph *outer = r->g;
    const MilOp *holder = r->op;
    r->g = g;
    for (size_t i = 0; i < b->n_ops; i++)
        for (size_t k = 0; k < b->ops[i]->n_out; k++)
            ir_graph_value(g, b->ops[i]->out[k].name);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < b->n_ops; i++)
        rc = cm_raise_op(r, b->ops[i]);
    for (size_t i = 0; rc == 0 && i < b->n_out; i++) {
        IrValue *v = ir_graph_lookup(g, b->out[i]);
        if (!v) {
            r->op = holder;
            rc = cmr_fail(r, "block output '%s' is defined nowhere", b->out[i]);
            break;
        }
        /* ONNX Runtime refuses a subgraph that returns an outer value
         * itself (a loop variable MIL's body leaves unchanged): an
         * Identity gives the body its own copy */
        if (v->graph != g) {
            const char *in[1] = {b->out[i]}, *out[1] = {cmr_tmp(r, b->out[i])};
            if ((rc = cmr_node(r, "Identity", 1, in, 1, out, NULL)) < 0)
                break;
            v = ir_graph_find_local(g, out[0]);
        }
        ir_graph_add_output(g, v, cm_ir_type(&types[i].type));
    }
    r->g = outer;
    r->op = holder;
    return rc;
}

/* How many times block b (and the blocks inside its ops) reads `name`;
 * *sq counts the reads that are the x of a squeeze of b itself giving a
 * rank-0 value. */
static size_t cm_reads(const MilBlock *b, const char *name, size_t *sq)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_ops; i++) {
        const MilOp *op = b->ops[i];
        for (size_t k = 0; k < op->n_in; k++)
            for (size_t j = 0; j < op->in[k].n_args; j++)
                if (op->in[k].args[j].name && !strcmp(op->in[k].args[j].name, name)) {
                    n++;
                    *sq += !strcmp(op->type, "squeeze") && !strcmp(op->in[k].param, "x") &&
                           op->n_out == 1 && op->out[0].type.rank == 0;
                }
        size_t inner = 0;
        for (size_t k = 0; k < op->n_blocks; k++)
            n += cm_reads(op->blocks[k], name, &inner);
    }
    for (size_t i = 0; i < b->n_out; i++)
        n += !strcmp(b->out[i], name);
    return n;
}

/* Whether function input `in` is a scalar passed as [1] (the export's, and
 * coremltools', way past the loader's refusal of rank-0 inputs): its type
 * [1] and every reader a squeeze to rank 0. The import then gives it back
 * as a rank-0 input and the squeezes become Identity. */
static bool cm_scalar_input(const MilFunction *fn, const MilNamedType *in)
{
    if (in->type.rank != 1 || !in->type.dims || in->type.dims[0] != 1 || in->type.is_list)
        return false;
    size_t sq = 0, n = cm_reads(fn->block, in->name, &sq);
    return n == sq && sq > 0;
}

/* Raises op; a squeeze of a scalar input (cm_scalar_input) is Identity. */
static int cm_import_op(CmRaise *r, const MilFunction *fn, const MilOp *op)
{
    const MilArg *x = !strcmp(op->type, "squeeze") ? cmr_arg(op, "x", 0) : NULL;
    for (size_t i = 0; x && x->name && i < fn->n_in; i++)
        if (!strcmp(fn->in[i].name, x->name) && cm_scalar_input(fn, &fn->in[i])) {
            r->op = op;
            const char *in[1] = {x->name};
            return cmr_simple(r, op, "Identity", 1, in, NULL);
        }
    return cm_raise_op(r, op);
}

static int cm_import_io(CmRaise *r, const MilFunction *fn)
{
    for (size_t i = 0; i < fn->n_in; i++) {
        if (!cm_dtype_to_onnx(fn->in[i].type.dtype))
            return ir_fail(r->err, "function input '%s' has no ONNX type", fn->in[i].name);
        MilType t = fn->in[i].type;
        if (cm_scalar_input(fn, &fn->in[i]))
            t.rank = 0;
        if (!ir_graph_add_input(r->g, fn->in[i].name, cm_ir_type(&t)))
            return ir_fail(r->err, "function input '%s' declared twice", fn->in[i].name);
    }
    /* Every MIL value's name is taken before any rule makes a temporary
     * name: a later op's output must not find its name used. */
    for (size_t i = 0; i < fn->block->n_ops; i++)
        for (size_t k = 0; k < fn->block->ops[i]->n_out; k++)
            ir_graph_value(r->g, fn->block->ops[i]->out[k].name);
    for (size_t i = 0; i < fn->block->n_ops; i++)
        if (cm_import_op(r, fn, fn->block->ops[i]) < 0)
            return -1;
    r->op = NULL;
    for (size_t i = 0; i < fn->block->n_out; i++) {
        const char *name = fn->block->out[i];
        const MilType *t = cm_block_type(fn, name);
        IrValue *v = ir_graph_find_local(r->g, name);
        if (!t || !v)
            return ir_fail(r->err, "function output '%s' is defined nowhere", name);
        ir_graph_add_output(r->g, v, cm_ir_type(t));
    }
    return 0;
}

/* Gives the graph's inputs and outputs back the ONNX names the export
 * recorded (CM_NAME_KEY) where the package names them otherwise; a name
 * that is taken by then stays the package's. */
static void cm_import_names(const MilModel *mm, IrGraph *g)
{
    size_t n = sizeof CM_NAME_KEY - 1;
    for (size_t i = 0; i < mm->n_meta; i++) {
        if (strncmp(mm->meta_keys[i], CM_NAME_KEY, n))
            continue;
        IrValue *v = ir_graph_find_local(g, mm->meta_keys[i] + n);
        bool io = v && v->kind == IR_VAL_INPUT;
        for (size_t k = 0; v && !io && k < g->outputs.n; k++)
            io = ((const IrValueInfo *)g->outputs.p[k])->value == v;
        IrError e;
        if (io && !ir_graph_find_local(g, mm->meta_values[i]))
            (void)ir_value_rename(v, mm->meta_values[i], &e);
    }
}

/* Drops the initializers nothing reads: every const of the program
 * became one, and most are parameters the rules read as attributes
 * (a conv's strides, a pool's kernel). Subgraphs first, since a read from
 * inside one is a use of the outer value. */
static void cm_prune_inits(IrGraph *g)
{
    IR_FOR_NODES(g, n)
        for (size_t a = 0; a < n->n_attr; a++) {
            if (n->attr[a]->g)
                cm_prune_inits(n->attr[a]->g);
            for (size_t k = 0; k < n->attr[a]->n_graphs; k++)
                cm_prune_inits(n->attr[a]->graphs[k]);
        }
    ir_graph_drop_unused_inits(g);
}

/* What the import gives must pass the checker like every model we
 * write: a raising that copies a MIL form ONNX does not take (a negative
 * perm, say) is refused here, naming the rule, and nothing is written. */
static int cm_import_valid(IrModel *m, IrError *err)
{
    ChkReport c;
    int rc = 0;
    if (chk_model(m, &c)) {
        const char *first = chk_first_error(&c);
        rc = ir_fail(err, "the ONNX model it gives is invalid: %s",
                     first ? first : "the checker refuses it");
    }
    chk_report_free(&c);
    return rc;
}

int cm_import(const MilModel *mm, IrModel **out, IrError *err)
{
    *out = NULL;
    const MilFunction *fn = mil_function_find(mm, "main");
    if (!fn || !fn->block)
        return ir_fail(err, "ML Program has no function 'main'");
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    m->producer_name = ir_strdup("onnx-convert (Core ML import)");
    ir_model_set_opset(m, "", CM_ONNX_OPSET);
    m->graph = ir_graph_new(NULL);
    m->graph->name = ir_strdup(fn->name);
    CmRaise r = {.m = m, .g = m->graph, .err = err};
    int rc = cm_import_io(&r, fn);
    if (rc == 0)
        cm_import_names(mm, m->graph);
    CmConst *e, *tmp;
    HASH_ITER(hh, r.consts, e, tmp) {
        HASH_DEL(r.consts, e);
        free(e);
    }
    for (size_t i = 0; i < r.pool.n; i++)
        free(r.pool.p[i]);
    free(r.pool.p);
    for (size_t i = 0; i < r.owned.n; i++)
        mil_tensor_free(r.owned.p[i]);
    free(r.owned.p);
    ks_free(&r.node_names);
    if (rc == 0) {
        cm_prune_inits(m->graph);
        rc = cm_import_valid(m, err);
    }
    if (rc < 0) {
        ir_model_free(m);
        return -1;
    }
    *out = m;
    return 0;
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
        IrUse *uses = ir_alloc_array(nu ? nu : 1, sizeof *uses);
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
        char *keep = ir_strdup(v->name), *nn = ir_graph_fresh_name(g, v->name);
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
