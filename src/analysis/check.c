/*
 * check.c - model validation (prefix chk_). See check.h for the rules.
 */
#include "analysis/check.h"
#include "ir/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/caffe2.h"
#include "analysis/infer.h"
#include "analysis/irver.h"
#include "base/keyset.h"
#include "schema/opschema.h"
#include "analysis/tolerate.h"

const char *const chk_rules[] = {
    "ir-version", "opset-import", "opset-duplicate", "opset-range",
    "graph-missing", "ir-feature", "name-empty",
    "value-type", "op-domain", "op-unknown", "arity", "input-missing",
    "attr-name", "attr-duplicate", "attr-unknown", "attr-type",
    "attr-value", "attr-required", "ssa", "topo-order", "input-undefined",
    "output-unproduced", "tensor-dtype", "tensor-dims", "tensor-overflow",
    "tensor-size", "tensor-storage", "sparse-shape", "sparse-index",
    "sparse-order", "sparse-unique", "function-duplicate",
    "function-recursion", "type-constraint", "broadcast", "axis", "rank",
    "shape", "attribute", "subgraph", NULL};

/* ---- the report ---------------------------------------------------- */

static void chk_add(ChkReport *r, ChkSeverity sev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void chk_add(ChkReport *r, ChkSeverity sev, const char *fmt, ...)
{
    if (sev == CHK_ERROR)
        r->n_errors++;
    else if (sev == CHK_WARNING)
        r->n_warnings++;
    else
        r->n_notes++;
    if (r->n >= CHK_MAX_ITEMS)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->items = mem_grow(r->items, r->cap, sizeof *r->items);
    }
    ChkItem *it = &r->items[r->n++];
    it->sev = sev;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->msg, sizeof it->msg, fmt, ap);
    va_end(ap);
    /* One line, whatever names the model smuggles in. */
    for (char *p = it->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
}

/* A tolerated defect (tolerate.h): a warning "ID: WHERE: WHAT". */
static void chk_warn(ChkReport *r, TolId id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void chk_warn(ChkReport *r, TolId id, const char *fmt, ...)
{
    char msg[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->defects |= 1u << id;
    chk_add(r, CHK_WARNING, "%s: %s", tol_defects[id].id, msg);
}

void chk_report_free(ChkReport *r)
{
    free(r->items);
    memset(r, 0, sizeof *r);
}

static const char *chk_first(const ChkReport *r, ChkSeverity sev)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i].sev == sev)
            return r->items[i].msg;
    return NULL;
}

const char *chk_first_error(const ChkReport *r)
{
    return chk_first(r, CHK_ERROR);
}

const char *chk_first_warning(const ChkReport *r)
{
    return chk_first(r, CHK_WARNING);
}

/* ---- scopes: which values are defined so far ----------------------- */

typedef struct ChkSeen {
    const IrValue *v;
    UT_hash_handle hh;
} ChkSeen;

/* One graph being checked, inside the graphs that enclose it. */
typedef struct ChkScope {
    IrGraph *g;
    ChkSeen *seen;            /* node outputs defined so far */
    struct ChkScope *up;
    const IrFunction *fn;     /* the function whose body this is (or inside) */
    const char *label;        /* "graph 'x'" etc. for messages */
    size_t idx;               /* index of the node being checked */
} ChkScope;

typedef struct ChkCtx {
    IrModel *m;
    ChkReport *r;
    KvRunFn run;              /* inference's prover (chk_model_run) */
    int64_t ir;               /* effective IR version (0 = unknown) */
    /* Look-ups every node makes, by hash, so that checking stays linear
     * with 200k imports or 50k functions. */
    KsSet opsets;             /* normalized domain -> version (-1: none) */
    KsSet funcs;              /* (name, domain, overload) -> index */
    KsSet func_domains;       /* domains the model-local functions live in */
    KsSet fn_opsets;          /* the imports of function fn_cur */
    const IrFunction *fn_cur;
} ChkCtx;

/* The version of `domain` imported where a node of function fn (NULL:
 * the model's graphs) lives, or -1: what ir_scope_opset says. */
static int64_t chk_scope_opset(ChkCtx *c, const IrFunction *fn, const char *domain)
{
    const char *key[1] = {ir_domain_norm(domain)};
    int64_t v;
    if (fn && fn != c->fn_cur) {
        ks_free(&c->fn_opsets);
        for (size_t k = 0; k < fn->n_opsets; k++) {
            const IrOpset *o = &fn->opsets[k];
            const char *d[1] = {ir_domain_norm(o->domain)};
            ks_add(&c->fn_opsets, d, 1, o->has_version ? o->version : -1);
        }
        c->fn_cur = fn;
    }
    if (fn && ks_find(&c->fn_opsets, key, 1, &v))
        return v;
    return ks_find(&c->opsets, key, 1, &v) ? v : -1;
}

/* The key of a function or of a call: (name, normalized domain, overload). */
static void chk_func_key(const char *name, const char *domain, const char *overload,
                         const char *key[3])
{
    key[0] = name;
    key[1] = ir_domain_norm(domain);
    key[2] = overload ? overload : "";
}

/* The index of the model-local function node n calls, or -1: what
 * ir_model_function finds (the first of equal definitions). */
static int64_t chk_function_of(const ChkCtx *c, const IrNode *n)
{
    const char *key[3];
    int64_t k;
    if (!n->op_type)
        return -1;
    chk_func_key(n->op_type, n->domain, n->overload, key);
    return ks_find(&c->funcs, key, 3, &k) ? k : -1;
}

static void chk_seen_add(ChkScope *s, const IrValue *v)
{
    ChkSeen *e = mem_alloc(sizeof *e);
    e->v = v;
    HASH_ADD_PTR(s->seen, v, e);
}

static bool chk_seen_has(const ChkScope *s, const IrValue *v)
{
    ChkSeen *e;
    HASH_FIND_PTR(s->seen, &v, e);
    return e != NULL;
}

static void chk_seen_free(ChkScope *s)
{
    ChkSeen *e, *tmp;
    HASH_ITER(hh, s->seen, e, tmp) {
        HASH_DEL(s->seen, e);
        free(e);
    }
}

/* Whether value v is defined at this point of scope s: a graph input or
 * initializer, or a node output already seen, in v's own graph. */
static bool chk_defined(const ChkScope *s, const IrValue *v)
{
    while (s && s->g != v->graph)
        s = s->up;
    if (!s)
        return false;
    if (v->kind == IR_VAL_INPUT || v->kind == IR_VAL_INIT || v->init || v->sparse_init)
        return true;
    return v->kind == IR_VAL_NODE && chk_seen_has(s, v);
}

/* ---- where ---------------------------------------------------------- */

/* "node 'x' (Op-ver) in graph 'g'" into buf: the one node label
 * (diag.h), then the scope. */
static const char *chk_where(const ChkScope *s, const IrNode *n, int since,
                             char *buf, size_t cap)
{
    char label[300];
    DgDiag d = dg_none();
    d.node = n->name;
    d.op = n->op_type;
    d.domain = n->domain;
    d.version = since;
    /* the index comes from the walk: counting from the graph's first node
     * for every unnamed node would make checking quadratic */
    d.index = (long long)s->idx;
    dg_label(&d, label, sizeof label);
    snprintf(buf, cap, "%s%s%s", label, s->up || s->fn ? " in " : "",
             s->up || s->fn ? s->label : "");
    return buf;
}

/* ---- tensors -------------------------------------------------------- */

/* Elements of the typed field a dtype uses, and how many entries per
 * element it takes (complex: 2). -1 for STRING's string_data. */
static size_t chk_typed_count(const IrTensor *t, int *field)
{
    switch (t->data_type) {
    /* *field is the TensorProto field number of the list */
    case IR_FLOAT: case IR_COMPLEX64: *field = 1; return t->n_float;
    case IR_INT64: *field = 7; return t->n_int64;
    case IR_DOUBLE: case IR_COMPLEX128: *field = 11; return t->n_double;
    case IR_UINT32: case IR_UINT64: *field = 13; return t->n_uint64;
    case IR_STRING: *field = 8; return t->n_string;
    default: *field = 6; return t->n_int32;
    }
}

/* How many storage fields a tensor uses. */
static int chk_storage_fields(const IrTensor *t)
{
    int n = t->has_raw + (t->n_float > 0) + (t->n_int32 > 0) + (t->n_string > 0) +
            (t->n_int64 > 0) + (t->n_double > 0) + (t->n_uint64 > 0);
    if (t->has_data_location && t->data_location == 1)
        n++;
    return n;
}

/* Checks the payload of a tensor against its data type and dims. */
static void chk_tensor(ChkCtx *c, const IrTensor *t, const char *where)
{
    const char *name = t->name ? t->name : "";
    int32_t d = t->data_type;
    if (!t->has_data_type || d == IR_UNDEFINED || !ir_dtype_name(d)) {
        chk_add(c->r, CHK_ERROR, "tensor-dtype: %s: tensor '%s' has %s data type %d",
                where, name, t->has_data_type ? "unknown" : "no", d);
        return;
    }
    for (size_t k = 0; k < t->ndims; k++) {
        if (t->dims[k] < 0) {
            chk_add(c->r, CHK_ERROR, "tensor-dims: %s: tensor '%s' dimension %zu is "
                    "negative (%lld)", where, name, k, (long long)t->dims[k]);
            return;
        }
    }
    uint64_t numel;
    int bits = ir_dtype_bits(d);
    if (!ir_tensor_numel(t, &numel) || (bits && numel > UINT64_MAX / (uint64_t)bits)) {
        chk_add(c->r, CHK_ERROR, "tensor-overflow: %s: tensor '%s': the product of "
                "its dimensions overflows", where, name);
        return;
    }
    if (t->segment)
        return; /* a segment of a larger tensor: sizes are not per-tensor */
    int nf = chk_storage_fields(t);
    if (nf > 1) {
        chk_add(c->r, CHK_ERROR, "tensor-storage: %s: tensor '%s' stores its data in "
                "%d fields at once", where, name, nf);
        return;
    }
    uint64_t want_bytes = bits ? (numel * (uint64_t)bits + 7) / 8 : 0;
    if (t->has_data_location && t->data_location == 1) {
        if (t->ext.bound && t->ext.len != want_bytes && d != IR_STRING)
            chk_add(c->r, CHK_ERROR, "tensor-size: %s: tensor '%s' has %zu bytes of "
                    "external data, its dims need %llu", where, name, t->ext.len,
                    (unsigned long long)want_bytes);
        return;
    }
    if (t->has_raw) {
        if (d == IR_STRING)
            chk_add(c->r, CHK_ERROR, "tensor-storage: %s: STRING tensor '%s' uses "
                    "raw_data", where, name);
        else if (t->raw.len != want_bytes)
            chk_add(c->r, CHK_ERROR, "tensor-size: %s: tensor '%s' has %zu bytes of "
                    "raw_data, its dims need %llu", where, name, t->raw.len,
                    (unsigned long long)want_bytes);
        return;
    }
    int field;
    size_t have = chk_typed_count(t, &field);
    if (nf == 1 && have == 0) {
        chk_add(c->r, CHK_ERROR, "tensor-storage: %s: tensor '%s' (%s) stores its "
                "data in a field that type does not use", where, name, ir_dtype_name(d));
        return;
    }
    uint64_t per = ir_dtype_class(d) == IR_DC_COMPLEX ? 2 : 1;
    bool ok = have == numel * per;
    if (!ok && bits && bits < 8) /* sub-byte types may pack several per entry */
        ok = have == (numel * (uint64_t)bits + 31) / 32 || have == (numel * (uint64_t)bits + 7) / 8;
    if (!ok)
        chk_add(c->r, CHK_ERROR, "tensor-size: %s: tensor '%s' holds %zu values, its "
                "dims need %llu", where, name, have, (unsigned long long)(numel * per));
}

/* Checks a sparse tensor: shapes of values and indices, indices in range,
 * sorted and unique (linearized order). */
static void chk_sparse(ChkCtx *c, const IrSparse *s, const char *where)
{
    const char *name = s->values && s->values->name ? s->values->name : "";
    if (!s->values || !s->indices) {
        chk_add(c->r, CHK_ERROR, "sparse-shape: %s: sparse tensor '%s' lacks %s",
                where, name, s->values ? "indices" : "values");
        return;
    }
    uint64_t dense = 1;
    for (size_t k = 0; k < s->ndims; k++) {
        if (s->dims[k] < 0 || (s->dims[k] && dense > UINT64_MAX / (uint64_t)s->dims[k])) {
            chk_add(c->r, CHK_ERROR, "tensor-dims: %s: sparse tensor '%s' has a "
                    "negative or overflowing dimension", where, name);
            return;
        }
        dense *= (uint64_t)s->dims[k];
    }
    size_t before = c->r->n_errors;
    chk_tensor(c, s->values, where);
    chk_tensor(c, s->indices, where);
    if (c->r->n_errors != before)
        return;
    const IrTensor *v = s->values, *ix = s->indices;
    if (v->ndims != 1) {
        chk_add(c->r, CHK_ERROR, "sparse-shape: %s: sparse tensor '%s': values must "
                "be 1-D", where, name);
        return;
    }
    int64_t nnz = v->dims[0];
    bool linear = ix->ndims == 1 && ix->dims[0] == nnz;
    bool coords = ix->ndims == 2 && ix->dims[0] == nnz && ix->dims[1] == (int64_t)s->ndims;
    if (ix->data_type != IR_INT64 || (!linear && !coords)) {
        chk_add(c->r, CHK_ERROR, "sparse-shape: %s: sparse tensor '%s': indices must "
                "be int64 [NNZ] or [NNZ, rank]", where, name);
        return;
    }
    uint64_t prev = 0;
    for (int64_t e = 0; e < nnz; e++) {
        uint64_t lin = 0;
        for (size_t k = 0; k < (linear ? 1 : s->ndims); k++) {
            int64_t idx;
            size_t at = linear ? (size_t)e : (size_t)e * s->ndims + k;
            int64_t bound = linear ? (int64_t)(dense > INT64_MAX ? INT64_MAX : dense) : s->dims[k];
            if (!ir_tensor_get_i64(ix, at, &idx))
                return; /* size already checked */
            if (idx < 0 || idx >= bound) {
                chk_add(c->r, CHK_ERROR, "sparse-index: %s: sparse tensor '%s': index "
                        "%lld of entry %lld is out of range", where, name,
                        (long long)idx, (long long)e);
                return;
            }
            lin = linear ? (uint64_t)idx : lin * (uint64_t)s->dims[k] + (uint64_t)idx;
        }
        if (e > 0 && lin == prev) {
            chk_add(c->r, CHK_ERROR, "sparse-unique: %s: sparse tensor '%s': entry %lld "
                    "repeats an index", where, name, (long long)e);
            return;
        }
        if (e > 0 && lin < prev) {
            chk_add(c->r, CHK_ERROR, "sparse-order: %s: sparse tensor '%s': indices are "
                    "not sorted (entry %lld)", where, name, (long long)e);
            return;
        }
        prev = lin;
    }
}

/* ---- IR features ---------------------------------------------------- */

static void chk_feature(ChkCtx *c, int need, const char *what, const char *where)
{
    if (c->ir && c->ir < need)
        chk_add(c->r, CHK_ERROR, "ir-feature: %s: %s needs IR version %d, the model "
                "declares %lld", where, what, need, (long long)c->ir);
}

static void chk_type_features(ChkCtx *c, const IrType *t, const char *where, int depth)
{
    if (!t || depth > 32)
        return;
    if (t->kind == IR_TYPE_OPTIONAL)
        chk_feature(c, 8, "an optional type", where);
    if ((t->kind == IR_TYPE_TENSOR || t->kind == IR_TYPE_SPARSE_TENSOR) && t->has_elem_type) {
        int need = irv_dtype_ir(t->elem_type);
        char what[64];
        snprintf(what, sizeof what, "element type %s", ir_dtype_name(t->elem_type) ?
                 ir_dtype_name(t->elem_type) : "?");
        chk_feature(c, need, what, where);
    }
    chk_type_features(c, t->elem, where, depth + 1);
}

/* A declared type's element types and dims: an element type code that
 * names no type, or a negative dim_value, describes no tensor at all (and
 * inference would carry the -5 along as if it were a size). */
static void chk_type_values(ChkCtx *c, const IrType *t, const char *where, int depth)
{
    if (!t || depth > 32)
        return;
    if ((t->kind == IR_TYPE_TENSOR || t->kind == IR_TYPE_SPARSE_TENSOR) && t->has_elem_type &&
        t->elem_type != IR_UNDEFINED && !ir_dtype_name(t->elem_type))
        chk_add(c->r, CHK_ERROR, "value-type: %s has unknown element type %d", where,
                (int)t->elem_type);
    for (size_t k = 0; t->shape && k < t->shape->rank; k++) {
        const IrDim *d = &t->shape->dims[k];
        if (ir_dim_minus_one(d)) {
            /* what some exporters write for an unknown dimension */
            chk_warn(c->r, TOL_DIM_MINUS_ONE, "%s: dimension %zu is -1 (read as an "
                     "unknown dimension)", where, k);
        } else if (d->kind == IR_DIM_VALUE && d->value < 0) {
            chk_add(c->r, CHK_ERROR, "value-type: %s: dimension %zu is negative (%lld)",
                    where, k, (long long)d->value);
            break;
        }
    }
    chk_type_values(c, t->elem, where, depth + 1);
}

/* A value_info's type: present (main graph inputs/outputs must have one)
 * and of features the IR version has. */
static void chk_valueinfo(ChkCtx *c, const IrValueInfo *vi, const char *role,
                          bool need_type, const ChkScope *s)
{
    char where[320];
    snprintf(where, sizeof where, "%s '%s'%s%s", role, vi->value->name,
             s->up || s->fn ? " in " : "", s->up || s->fn ? s->label : "");
    if (!vi->value->name[0]) {
        chk_add(c->r, CHK_ERROR, "name-empty: %s has no name", where);
        return;
    }
    /* elem_type 0 is UNDEFINED: no more an element type than none at all.
     * An output without a type is tolerated (tolerate.h): chk_outputs_typed
     * judges it once inference has run. */
    bool output = !strcmp(role, "graph output");
    if (need_type && (!vi->type || vi->type->kind == IR_TYPE_NONE)) {
        if (!output)
            chk_add(c->r, CHK_ERROR, "value-type: %s has no type", where);
    }
    else if (need_type && vi->type->kind == IR_TYPE_TENSOR &&
             (!vi->type->has_elem_type || vi->type->elem_type == IR_UNDEFINED))
        chk_add(c->r, CHK_ERROR, "value-type: %s has no element type", where);
    chk_type_values(c, vi->type, where, 0);
    chk_type_features(c, vi->type, where, 0);
}

/* ---- attributes ----------------------------------------------------- */

/* How many value fields an attribute sets, and which AttributeType the
 * (last) one corresponds to. */
static int chk_attr_fields(const IrAttr *a, int *which)
{
    int n = 0;
#define CHK_F(cond, t) do { if (cond) { n++; *which = (t); } } while (0)
    CHK_F(a->has_f, 1); CHK_F(a->has_i, 2); CHK_F(a->has_s, 3);
    CHK_F(a->t != NULL, 4); CHK_F(a->g != NULL, 5);
    CHK_F(a->sparse_tensor != NULL, 11); CHK_F(a->tp != NULL, 13);
    CHK_F(a->n_floats > 0, 6); CHK_F(a->n_ints > 0, 7); CHK_F(a->n_strings > 0, 8);
    CHK_F(a->n_tensors > 0, 9); CHK_F(a->n_graphs > 0, 10);
    CHK_F(a->n_sparse > 0, 12); CHK_F(a->n_tps > 0, 14);
#undef CHK_F
    return n;
}

static int chk_graph(ChkCtx *c, IrGraph *g, ChkScope *up, const IrFunction *fn,
                     const char *label);

/* Checks one attribute's own consistency (type vs value field) and its
 * nested tensors and graphs. */
static void chk_attr_value(ChkCtx *c, IrAttr *a, const char *where, ChkScope *s)
{
    int which = 0;
    int n = chk_attr_fields(a, &which);
    if (!a->ref_attr_name) {
        bool list = a->has_type && a->type >= IR_AT_FLOATS && a->type <= IR_AT_TYPE_PROTOS &&
                    a->type != IR_AT_SPARSE_TENSOR && a->type != IR_AT_TYPE_PROTO;
        if (n > 1)
            chk_add(c->r, CHK_ERROR, "attr-value: %s: attribute '%s' sets %d value "
                    "fields", where, a->name, n);
        else if (n == 0 && !list && (a->has_type || c->ir < 2))
            chk_add(c->r, CHK_ERROR, "attr-value: %s: attribute '%s' has no value",
                    where, a->name);
        else if (n == 1 && a->has_type && a->type != which)
            chk_add(c->r, CHK_ERROR, "attr-value: %s: attribute '%s' is declared %s but "
                    "holds a %s value", where, a->name,
                    os_attr_type_name(a->type) ? os_attr_type_name(a->type) : "?",
                    os_attr_type_name(which));
    }
    if (!a->has_type && c->ir >= 2)
        chk_add(c->r, CHK_ERROR, "attr-type: %s: attribute '%s' has no type (required "
                "from IR version 2)", where, a->name);
    if (a->t)
        chk_tensor(c, a->t, where);
    for (size_t k = 0; k < a->n_tensors; k++)
        chk_tensor(c, a->tensors[k], where);
    if (a->sparse_tensor)
        chk_sparse(c, a->sparse_tensor, where);
    for (size_t k = 0; k < a->n_sparse; k++)
        chk_sparse(c, a->sparse_tensors[k], where);
    char label[400];
    if (a->g) {
        snprintf(label, sizeof label, "graph '%s' of %.300s", a->name, where);
        chk_graph(c, a->g, s, s->fn, label);
    }
    for (size_t k = 0; k < a->n_graphs; k++) {
        snprintf(label, sizeof label, "graph '%s'[%zu] of %.300s", a->name, k, where);
        chk_graph(c, a->graphs[k], s, s->fn, label);
    }
}

/* Checks a node's attributes against its schema (NULL: no schema). */
static void chk_attrs(ChkCtx *c, IrNode *n, const OsSchema *sc, const char *where,
                      ChkScope *s)
{
    KsSet names = {0};
    for (size_t i = 0; i < n->n_attr; i++) {
        IrAttr *a = n->attr[i];
        if (!a->name || !a->name[0]) {
            chk_add(c->r, CHK_ERROR, "attr-name: %s: attribute %zu has no name", where, i);
            continue;
        }
        if (!ks_add(&names, (const char *[]){a->name}, 1, 0))
            chk_add(c->r, CHK_ERROR, "attr-duplicate: %s: attribute '%s' appears "
                    "twice", where, a->name);
        if (sc) {
            const OsAttr *sa = os_attr(sc, a->name);
            if (!sa)
                chk_add(c->r, CHK_ERROR, "attr-unknown: %s: %s-%d has no attribute '%s'",
                        where, sc->op, sc->since, a->name);
            else if (a->has_type && a->type != sa->type)
                chk_add(c->r, CHK_ERROR, "attr-type: %s: attribute '%s' is %s, the "
                        "schema says %s", where, a->name,
                        os_attr_type_name(a->type) ? os_attr_type_name(a->type) : "?",
                        os_attr_type_name(sa->type));
        }
        chk_attr_value(c, a, where, s);
    }
    for (size_t k = 0; sc && k < sc->n_attr; k++)
        if (sc->attr[k].required && !ks_find(&names, (const char *[]){sc->attr[k].name},
                                             1, NULL))
            chk_add(c->r, CHK_ERROR, "attr-required: %s: required attribute '%s' is "
                    "missing", where, sc->attr[k].name);
    ks_free(&names);
}

/* ---- nodes ---------------------------------------------------------- */

/* Counts within min..max that the spec still forbids (BatchNormalization-9
 * allows 1 or 5 outputs, not 3), counted as written like onnx's checker:
 * trailing empty names count. */
static void chk_counts(ChkCtx *c, const IrNode *n, const OsSchema *sc, const char *where)
{
    char allowed[96];
    bool in_range = (int64_t)n->n_in >= sc->min_in &&
                    (sc->max_in < 0 || (int64_t)n->n_in <= sc->max_in);
    if (in_range && !os_in_count_ok(sc, n->n_in))
        chk_add(c->r, CHK_ERROR, "arity: %s: %zu inputs, the schema allows only %s",
                where, n->n_in, os_counts_str(sc, false, allowed, sizeof allowed));
    in_range = (int64_t)n->n_out >= sc->min_out &&
               (sc->max_out < 0 || (int64_t)n->n_out <= sc->max_out);
    if (in_range && !os_out_count_ok(sc, n->n_out))
        chk_add(c->r, CHK_ERROR, "arity: %s: %zu outputs, the schema allows only %s",
                where, n->n_out, os_counts_str(sc, true, allowed, sizeof allowed));
}

/* Arity and left-out required inputs/outputs against the schema. */
static void chk_arity(ChkCtx *c, const IrNode *n, const OsSchema *sc, const char *where)
{
    char in_max[24], out_max[24];
    snprintf(in_max, sizeof in_max, sc->max_in < 0 ? "any" : "%d", sc->max_in);
    snprintf(out_max, sizeof out_max, sc->max_out < 0 ? "any" : "%d", sc->max_out);
    if ((int64_t)n->n_in < sc->min_in || (sc->max_in >= 0 && (int64_t)n->n_in > sc->max_in))
        chk_add(c->r, CHK_ERROR, "arity: %s: %zu inputs, the schema allows %d..%s",
                where, n->n_in, sc->min_in, in_max);
    if ((int64_t)n->n_out < sc->min_out || (sc->max_out >= 0 && (int64_t)n->n_out > sc->max_out))
        chk_add(c->r, CHK_ERROR, "arity: %s: %zu outputs, the schema allows %d..%s",
                where, n->n_out, sc->min_out, out_max);
    chk_counts(c, n, sc, where);
    for (size_t i = 0; i < n->n_in; i++) {
        const OsParam *p = os_in_param(sc, i);
        if (!n->in[i] && p && !p->optional && !p->variadic)
            chk_add(c->r, CHK_ERROR, "input-missing: %s: required input %zu ('%s') is "
                    "left out", where, i, p->name);
    }
}

/* Checks that each input of n is defined before n. */
static void chk_inputs_defined(ChkCtx *c, const IrNode *n, ChkScope *s, const char *where)
{
    for (size_t i = 0; i < n->n_in; i++) {
        const IrValue *v = n->in[i];
        if (!v || chk_defined(s, v))
            continue;
        if (v->kind == IR_VAL_NODE)
            chk_add(c->r, CHK_ERROR, "topo-order: %s: input '%s' is produced by a later "
                    "node (convert and optimize put the nodes in order)", where, v->name);
        else
            chk_add(c->r, CHK_ERROR, "input-undefined: %s: input '%s' is not a graph "
                    "input, an initializer, or an earlier node's output", where, v->name);
    }
}

/* Node outputs must not reuse a name an enclosing scope defines. */
static void chk_outputs(ChkCtx *c, const IrNode *n, ChkScope *s, const char *where)
{
    for (size_t i = 0; i < n->n_out; i++) {
        const IrValue *v = n->out[i];
        if (!v)
            continue;
        if (s->g->parent && ir_graph_lookup(s->g->parent, v->name))
            chk_add(c->r, CHK_ERROR, "ssa: %s: output '%s' reuses a name of an "
                    "enclosing graph", where, v->name);
        chk_seen_add(s, v);
    }
}

/* Whether some model-local function lives in (normalized) domain dom. */
static bool chk_function_domain(const ChkCtx *c, const char *dom)
{
    return ks_find(&c->func_domains, (const char *[]){dom}, 1, NULL);
}

static void chk_node(ChkCtx *c, IrNode *n, ChkScope *s)
{
    char where[400];
    c->r->n_nodes++;
    int64_t fk = chk_function_of(c, n);
    const IrFunction *f = fk >= 0 ? c->m->functions[fk] : NULL;
    const char *dom = ir_domain_norm(n->domain);
    int64_t opset = chk_scope_opset(c, s->fn, n->domain);
    const OsSchema *sc = NULL;
    if (!n->op_type || !n->op_type[0]) {
        chk_where(s, n, 0, where, sizeof where);
        chk_add(c->r, CHK_ERROR, "op-unknown: %s: node has no op_type", where);
    } else if (f) {
        chk_where(s, n, 0, where, sizeof where);
    } else if (opset < 0) {
        chk_where(s, n, 0, where, sizeof where);
        chk_add(c->r, CHK_ERROR, "op-domain: %s: domain '%s' is not in opset_import",
                where, ir_domain_shown(dom));
    } else if (os_domain_max(dom) < 0) {
        chk_where(s, n, 0, where, sizeof where);
        /* A domain the model defines functions in is taken to hold only
         * them: a call that matches none calls nothing (otherwise a
         * function calling a missing one would pass as a custom op). */
        if (chk_function_domain(c, dom))
            chk_add(c->r, CHK_ERROR, "op-unknown: %s: domain '%s' has no model-local "
                    "function '%s'%s%s", where, dom, n->op_type,
                    n->overload && n->overload[0] ? " with overload " : "",
                    n->overload && n->overload[0] ? n->overload : "");
        else
            c->r->n_unchecked++;
    } else {
        sc = os_find(dom, n->op_type, opset);
        chk_where(s, n, sc ? sc->since : 0, where, sizeof where);
        if (!sc) {
            size_t nv;
            const OsSchema *v = os_versions(dom, n->op_type, &nv);
            if (v)
                chk_add(c->r, CHK_ERROR, "op-unknown: %s: %s first appears in opset %d "
                        "of %s; the model imports %lld", where, n->op_type, v[0].since,
                        ir_domain_shown(dom), (long long)opset);
            else
                chk_add(c->r, CHK_ERROR, "op-unknown: %s: %s is not an operator of %s",
                        where, n->op_type, ir_domain_shown(dom));
        }
    }
    if (n->overload && n->overload[0])
        chk_feature(c, 10, "a node overload", where);
    if (n->meta.n)
        chk_feature(c, 10, "node metadata_props", where);
    if (n->n_devcfg)
        chk_feature(c, 11, "node device configurations", where);
    for (size_t i = 0; i < n->n_attr; i++) {
        int32_t dt = irv_attr_dtype(n, n->attr[i]);
        if (dt < 0)
            continue;
        char what[120];
        snprintf(what, sizeof what, "element type %s (attribute '%s')",
                 ir_dtype_name(dt) ? ir_dtype_name(dt) : "?", n->attr[i]->name);
        chk_feature(c, irv_dtype_ir(dt), what, where);
    }
    if (sc)
        chk_arity(c, n, sc, where);
    chk_inputs_defined(c, n, s, where);
    chk_attrs(c, n, sc, where, s);
    chk_outputs(c, n, s, where);
}

/* ---- graphs --------------------------------------------------------- */

/* Initializer names unique; in IR < 4 each must also be a graph input. */
static void chk_inits(ChkCtx *c, IrGraph *g, ChkScope *s)
{
    char where[320];
    for (size_t k = 0; k < g->inits.n; k++) {
        const IrTensor *t = g->inits.p[k];
        snprintf(where, sizeof where, "initializer '%s'%s%s", t->name ? t->name : "",
                 s->up ? " in " : "", s->up ? s->label : "");
        if (!t->name || !t->name[0]) {
            chk_add(c->r, CHK_ERROR, "name-empty: initializer %zu%s%s has no name", k,
                    s->up ? " in " : "", s->up ? s->label : "");
            continue;
        }
        const IrValue *v = ir_graph_find_local(g, t->name);
        if (v && v->init != t)
            chk_add(c->r, CHK_ERROR, "ssa: %s: another initializer has the same name", where);
        if (v && v->kind == IR_VAL_NODE)
            chk_add(c->r, CHK_ERROR, "ssa: %s: a node also produces '%s'", where, t->name);
        if (c->ir && c->ir < 4 && !g->parent && v && v->kind != IR_VAL_INPUT)
            chk_warn(c->r, TOL_INIT_NOT_INPUT, "%s: before IR version 4 every "
                     "initializer must also be a graph input (read as a constant, as "
                     "from IR 4)", where);
        chk_tensor(c, t, where);
    }
    for (size_t k = 0; k < g->sparse_inits.n; k++) {
        const IrSparse *sp = g->sparse_inits.p[k];
        snprintf(where, sizeof where, "sparse initializer %zu", k);
        chk_feature(c, 6, "a sparse initializer", where);
        chk_sparse(c, sp, where);
    }
    if (g->n_qann)
        chk_feature(c, 5, "quantization_annotation", "graph");
}

/* Graph inputs: named, typed in the main graph, not listed twice. */
static void chk_graph_inputs(ChkCtx *c, IrGraph *g, ChkScope *s, bool main)
{
    /* one value per name in a graph: the same name is the same value */
    KsSet seen = {0};
    for (size_t k = 0; k < g->inputs.n; k++) {
        const IrValueInfo *vi = g->inputs.p[k];
        chk_valueinfo(c, vi, "graph input", main && !g->is_function, s);
        if (!ks_add(&seen, (const char *[]){vi->value->name}, 1, 0))
            chk_add(c->r, CHK_ERROR, "ssa: graph input '%s' is listed twice",
                    vi->value->name);
        if (g->parent && ir_graph_lookup(g->parent, vi->value->name))
            chk_add(c->r, CHK_ERROR, "ssa: input '%s' of %s reuses a name of an "
                    "enclosing graph", vi->value->name, s->label);
    }
    ks_free(&seen);
}

/* Graph outputs: each produced (in this graph or an enclosing one). */
static void chk_graph_outputs(ChkCtx *c, IrGraph *g, ChkScope *s, bool main)
{
    for (size_t k = 0; k < g->outputs.n; k++) {
        const IrValueInfo *vi = g->outputs.p[k];
        chk_valueinfo(c, vi, "graph output", main && !g->is_function, s);
        const IrValue *v = vi->value;
        if (v->name[0] && !chk_defined(s, v))
            chk_add(c->r, CHK_ERROR, "output-unproduced: graph output '%s'%s%s is not "
                    "produced by any node, input or initializer", v->name,
                    s->up || s->fn ? " of " : "", s->up || s->fn ? s->label : "");
    }
    for (size_t k = 0; k < g->value_info.n; k++) {
        const IrValueInfo *vi = g->value_info.p[k];
        char where[320];
        snprintf(where, sizeof where, "value_info '%s'%s%s", vi->value->name,
                 s->up || s->fn ? " in " : "", s->up || s->fn ? s->label : "");
        chk_type_values(c, vi->type, where, 0);
        chk_type_features(c, vi->type, "value_info", 0);
    }
}

static int chk_graph(ChkCtx *c, IrGraph *g, ChkScope *up, const IrFunction *fn,
                     const char *label)
{
    ChkScope s = {.g = g, .up = up, .fn = fn, .label = label};
    bool main = !up && !fn;
    chk_graph_inputs(c, g, &s, main);
    chk_inits(c, g, &s);
    for (IrNode *n = g->first; n; n = n->next, s.idx++)
        chk_node(c, n, &s);
    chk_graph_outputs(c, g, &s, main);
    chk_seen_free(&s);
    return 0;
}

/* ---- model ---------------------------------------------------------- */

static void chk_ir_version(ChkCtx *c)
{
    IrModel *m = c->m;
    if (!m->has_ir_version) {
        chk_add(c->r, CHK_ERROR, "ir-version: model: ir_version is missing");
        return;
    }
    c->ir = m->ir_version == C2_IR_VERSION ? 3 : m->ir_version;
    if (c->ir < 1 || c->ir > IRV_NEWEST) {
        chk_add(c->r, CHK_ERROR, "ir-version: model: ir_version %lld is not a known IR "
                "version (1..%d)", (long long)m->ir_version, IRV_NEWEST);
        c->ir = 0;
    }
}

static void chk_opsets(ChkCtx *c)
{
    IrModel *m = c->m;
    if (m->n_opsets == 0 && (c->ir == 0 || c->ir >= 3))
        chk_add(c->r, CHK_ERROR, "opset-import: model: opset_import is empty");
    for (size_t k = 0; k < m->n_opsets; k++) {
        const IrOpset *o = &m->opsets[k];
        const char *d = ir_domain_norm(o->domain);
        const char *shown = ir_domain_shown(d);
        int64_t v = o->has_version ? o->version : -1, before = -1;
        ks_find(&c->opsets, (const char *[]){d}, 1, &before);
        if (!ks_add(&c->opsets, (const char *[]){d}, 1, v)) {
            /* one domain at one version, said twice, is not ambiguous */
            if (before == v && v >= 0)
                chk_warn(c->r, TOL_OPSET_REPEATED, "model: domain '%s' is imported "
                         "twice, both at version %lld (read as one import)", shown,
                         (long long)v);
            else
                chk_add(c->r, CHK_ERROR, "opset-duplicate: model: domain '%s' is "
                        "imported twice, at versions %lld and %lld", shown,
                        (long long)before, (long long)v);
        }
        int max = os_domain_max(d);
        if (!o->has_version)
            chk_add(c->r, CHK_ERROR, "opset-range: model: the import of '%s' has no "
                    "version", shown);
        else if (o->version < 1 || (max >= 0 && o->version > max))
            chk_add(c->r, CHK_ERROR, "opset-range: model: opset %lld of '%s' is out of "
                    "range (1..%d)", (long long)o->version, shown, max >= 0 ? max : 0);
    }
}

/* Functions: unique (domain, name, overload); calls among them acyclic. */
static void chk_functions(ChkCtx *c)
{
    IrModel *m = c->m;
    if (m->n_functions)
        chk_feature(c, 8, "model-local functions", "model");
    for (size_t k = 0; k < m->n_functions; k++) {
        const IrFunction *f = m->functions[k];
        ks_add(&c->func_domains, (const char *[]){ir_domain_norm(f->domain)}, 1, 0);
        if (!f->name)
            continue;   /* calls nothing (the loader refuses it anyway) */
        const char *key[3];
        chk_func_key(f->name, f->domain, f->overload, key);
        if (!ks_add(&c->funcs, key, 3, (int64_t)k))
            chk_add(c->r, CHK_ERROR, "function-duplicate: function '%s' of domain "
                    "'%s' is defined twice", f->name, ir_domain_norm(f->domain));
    }
}

/* Depth-first search for a call cycle starting at function k. state:
 * 0 unvisited, 1 on the stack, 2 done. Returns true when a cycle exists. */
static bool chk_calls_cycle(const ChkCtx *c, size_t k, uint8_t *state, int depth)
{
    const IrModel *m = c->m;
    if (state[k] == 1)
        return true;
    if (state[k] == 2 || depth > 10000)
        return false;
    state[k] = 1;
    const IrGraph *b = m->functions[k]->body;
    for (const IrNode *n = b ? b->first : NULL; n; n = n->next) {
        int64_t j = chk_function_of(c, n);
        if (j >= 0 && chk_calls_cycle(c, (size_t)j, state, depth + 1))
            return true;
    }
    state[k] = 2;
    return false;
}

static bool chk_recursion(ChkCtx *c)
{
    IrModel *m = c->m;
    uint8_t *state = mem_alloc(m->n_functions + 1);
    bool bad = false;
    for (size_t k = 0; k < m->n_functions && !bad; k++) {
        if (chk_calls_cycle(c, k, state, 0)) {
            chk_add(c->r, CHK_ERROR, "function-recursion: function '%s' calls itself, "
                    "directly or through others", m->functions[k]->name ?
                    m->functions[k]->name : "");
            bad = true;
        }
    }
    free(state);
    return bad;
}

/* Notes from inference: declared types that disagree with inferred ones. */
static void chk_on_note(void *arg, const char *msg)
{
    chk_add(arg, CHK_NOTE, "declared-type: %s", msg);
}

/* Every check of chk_model, with c's look-up sets built as it goes. */
static void chk_run(ChkCtx *c);

/* After inference: a main-graph output declared without a type is
 * tolerated when inference gives it an element type (its type is then
 * that one), refused when it does not. */
static void chk_outputs_typed(ChkCtx *c)
{
    const IrGraph *g = c->m->graph;
    char a[96], shape[200];
    for (size_t k = 0; k < g->outputs.n; k++) {
        const IrValueInfo *vi = g->outputs.p[k];
        const IrType *t = vi->value->type;
        if ((vi->type && vi->type->kind != IR_TYPE_NONE) || !vi->value->name[0])
            continue;
        if (!t || (t->kind == IR_TYPE_TENSOR && (!t->has_elem_type ||
                                                 t->elem_type == IR_UNDEFINED)))
            chk_add(c->r, CHK_ERROR, "value-type: graph output '%s' has no type, and "
                    "inference cannot tell it", vi->value->name);
        else
            chk_warn(c->r, TOL_OUTPUT_UNTYPED, "graph output '%s' has no type (read as "
                     "the inferred %s %s)", vi->value->name, os_type_str(t, a, sizeof a),
                     tol_shape_str(t, shape, sizeof shape));
    }
}

/* tol_each_bad_shape's callback: one warning per contradicted shape. */
static void chk_on_bad_shape(void *arg, IrValueInfo *vi, const char *role)
{
    char decl[200], got[200];
    chk_warn(arg, TOL_DECLARED_SHAPE, "%s '%s': declared shape %s, inferred %s (read "
             "as the inferred one)", role, vi->value->name,
             tol_shape_str(vi->type, decl, sizeof decl),
             tol_shape_str(vi->value->type, got, sizeof got));
}

/* The inferred types of what g's nodes compute (and its subgraphs'):
 * a node can make values of a type the declared IR lacks (a Cast to
 * float8 at IR 8) whatever value_info says. */
static int chk_computed_types(const IrGraph *g, const IrWalkAt *at, void *arg)
{
    ChkCtx *c = arg;
    char where[400];
    for (const IrValue *v = g->values; v && at->depth < 64; v = v->hh.next) {
        if (!v->type || v->kind != IR_VAL_NODE || !v->producer)
            continue;
        const IrNode *n = v->producer;
        snprintf(where, sizeof where, "value '%.150s' (output of node '%.100s' (%.60s))",
                 v->name, n->name ? n->name : "", n->op_type ? n->op_type : "");
        chk_type_features(c, v->type, where, 0);
    }
    return 0;
}

size_t chk_model(IrModel *m, ChkReport *r)
{
    return chk_model_run(m, NULL, r);
}

size_t chk_model_run(IrModel *m, KvRunFn run, ChkReport *r)
{
    memset(r, 0, sizeof *r);
    ChkCtx c = {.m = m, .r = r, .run = run};
    chk_run(&c);
    ks_free(&c.opsets);
    ks_free(&c.funcs);
    ks_free(&c.func_domains);
    ks_free(&c.fn_opsets);
    return r->n_errors;
}

static void chk_run(ChkCtx *c)
{
    IrModel *m = c->m;
    ChkReport *r = c->r;
    chk_ir_version(c);
    chk_opsets(c);
    chk_functions(c);
    bool recursive = chk_recursion(c);
    if (!m->graph) {
        chk_add(r, CHK_ERROR, "graph-missing: model: there is no graph");
        return;
    }
    if (m->n_training)
        chk_feature(c, 7, "training_info", "model");
    if (m->n_configs)
        chk_feature(c, 11, "device configurations", "model");
    /* Not ir_each_graph: chk_graph threads each scope's names and
     * function down its subgraphs itself, and training algorithm graphs
     * are not checked here. */
    chk_graph(c, m->graph, NULL, NULL, "main graph");
    char label[300];
    for (size_t k = 0; k < m->n_functions; k++) {
        IrFunction *f = m->functions[k];
        snprintf(label, sizeof label, "function '%s'", f->name ? f->name : "");
        if (f->body)
            chk_graph(c, f->body, NULL, f, label);
    }
    for (size_t k = 0; k < m->n_training; k++) {
        if (m->training[k].initialization)
            chk_graph(c, m->training[k].initialization, NULL, NULL, "training initialization");
    }
    /* Inference assumes a sound structure: run it only then. */
    if (r->n_errors == 0 && !recursive) {
        IrError err = {{0}};
        InfOptions opt = {.use_value_info = true, .run = c->run, .note = chk_on_note,
                          .note_arg = r};
        if (inf_model(m, &opt, &err) < 0) {
            chk_add(r, CHK_ERROR, "%s", err.msg);
        } else {
            ir_each_graph_const(m, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, chk_computed_types, c);
            chk_outputs_typed(c);
            tol_each_bad_shape(m, chk_on_bad_shape, r);
        }
    }
    return;
}

/* ---- gates: what runs only on checked input ------------------------- */

int chk_require(IrModel *m, const char *what, IrError *err)
{
    ChkReport r;
    int rc = 0;
    if (chk_model(m, &r)) {
        const char *first = chk_first_error(&r);
        rc = ir_fail(err, "%s: %s", what, first ? first : "the checker refuses the model");
    }
    chk_report_free(&r);
    return rc;
}

/* Whether some attribute of n holds a graph. */
static bool chk_has_subgraph(const IrNode *n)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i]->g || n->attr[i]->n_graphs)
            return true;
    return false;
}

size_t chk_node_alone(IrModel *m, const IrFunction *fn, IrNode *n, ChkReport *r)
{
    memset(r, 0, sizeof *r);
    ChkCtx c = {.m = m, .r = r};
    chk_ir_version(&c);
    ChkScope s = {.g = n->graph, .fn = fn, .label = "its graph"};
    char where[400];
    chk_where(&s, n, 0, where, sizeof where);
    r->n_nodes = 1;
    if (!n->op_type || !n->op_type[0]) {
        chk_add(r, CHK_ERROR, "op-unknown: %s: node has no op_type", where);
        return r->n_errors;
    }
    if (chk_has_subgraph(n)) {
        /* a subgraph's names resolve in the scopes around it: only the
         * whole model's check can judge it */
        chk_add(r, CHK_ERROR, "subgraph: %s: a node with a subgraph is checked only "
                "within its model", where);
        return r->n_errors;
    }
    const char *dom = ir_domain_norm(n->domain);
    int64_t opset = ir_scope_opset(m, fn, n->domain);
    const OsSchema *sc = NULL;
    if (ir_model_function(m, n)) {
        ;   /* a call of a model-local function: no schema */
    } else if (opset < 0) {
        chk_add(r, CHK_ERROR, "op-domain: %s: domain '%s' is not in opset_import", where,
                ir_domain_shown(dom));
    } else if (os_domain_max(dom) < 0) {
        r->n_unchecked++;
    } else if (!(sc = os_find(dom, n->op_type, opset))) {
        chk_add(r, CHK_ERROR, "op-unknown: %s: %s is not an operator of %s at opset %lld",
                where, n->op_type, ir_domain_shown(dom), (long long)opset);
    } else {
        chk_where(&s, n, sc->since, where, sizeof where);
        chk_arity(&c, n, sc, where);
    }
    chk_attrs(&c, n, sc, where, &s);
    return r->n_errors;
}
