/*
 * infer.c - the inference driver and the helpers op functions use
 * (prefix inf_). The op functions live in src/analysis/infer/, one file per family.
 */
#include "analysis/infer.h"
#include "analysis/known.h"
#include "base/keyset.h"
#include "ir/diag.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Constants larger than this are not read for shape purposes: shapes,
 * axes, pads and scales are small, and a huge read would only cost time. */
#define INF_MAX_CONST_ELEMS 4096
/* Tensors with at most this many integer elements get a symval. */
#define INF_MAX_SYMVAL 64
/* Nesting of model-local function calls followed; deeper calls stay
 * unknown (the checker refuses recursion). */
#define INF_MAX_CALL_DEPTH 32

static int inf_graph_nodes(InfCtx *parent, IrGraph *g);

/* ---- op function registry ------------------------------------------ */

const InfFamily inf_families[] = {
    {"activation", inf_ops_activation},
    {"attention", inf_ops_attention},
    {"control", inf_ops_control},
    {"einsum", inf_ops_einsum},
    {"elementwise", inf_ops_elementwise},
    {"index", inf_ops_index},
    {"misc", inf_ops_misc},
    {"ml", inf_ops_ml},
    {"nn", inf_ops_nn},
    {"norm", inf_ops_norm},
    {"quant", inf_ops_quant},
    {"random", inf_ops_random},
    {"reduce", inf_ops_reduce},
    {"resize", inf_ops_resize},
    {"rnn", inf_ops_rnn},
    {"sample", inf_ops_sample},
    {"sequence", inf_ops_sequence},
    {"shape", inf_ops_shape},
    {"signal", inf_ops_signal},
    {"string", inf_ops_string},
    {"tensor", inf_ops_tensor},
    {"training", inf_ops_training},
};
const size_t inf_families_n = sizeof inf_families / sizeof *inf_families;

/* The op function of (domain, op), or NULL. A linear scan per call would
 * cost 200 string compares per node; a sorted index is built once. */
static const InfOp **inf_index;
static size_t inf_index_n;

static int inf_index_cmp(const void *a, const void *b)
{
    const InfOp *x = *(const InfOp *const *)a, *y = *(const InfOp *const *)b;
    int c = strcmp(x->domain, y->domain);
    return c ? c : strcmp(x->op, y->op);
}

static void inf_index_build(void)
{
    size_t n = 0;
    for (size_t t = 0; t < inf_families_n; t++)
        for (const InfOp *o = inf_families[t].ops; o->op; o++)
            n++;
    const InfOp **idx = mem_array(n ? n : 1, sizeof *idx);
    n = 0;
    for (size_t t = 0; t < inf_families_n; t++)
        for (const InfOp *o = inf_families[t].ops; o->op; o++)
            idx[n++] = o;
    qsort(idx, n, sizeof *idx, inf_index_cmp);
    inf_index_n = n;
    inf_index = idx;
}

void inf_init(void)
{
    if (!inf_index)
        inf_index_build();
}

static InfFn inf_lookup(const char *domain, const char *op)
{
    inf_init();
    InfOp key = {domain, op, NULL};
    const InfOp *kp = &key;
    const InfOp **hit = bsearch(&kp, inf_index, inf_index_n, sizeof *inf_index,
                                inf_index_cmp);
    return hit ? (*hit)->fn : NULL;
}

/* ---- errors -------------------------------------------------------- */

int inf_fail(InfCtx *c, const char *rule, const char *fmt, ...)
{
    char what[400], label[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ir_fail(c->err, "%s: %s: %s", rule,
                   dg_node_label(c->node, c->since, label, sizeof label), what);
}

/* ---- inputs -------------------------------------------------------- */

size_t inf_n_in(const InfCtx *c) { return c->node->n_in; }
size_t inf_n_out(const InfCtx *c) { return c->node->n_out; }

bool inf_has_in(const InfCtx *c, size_t i)
{
    return i < c->node->n_in && c->node->in[i];
}

bool inf_has_out(const InfCtx *c, size_t i)
{
    return i < c->node->n_out && c->node->out[i];
}

const IrType *inf_in(const InfCtx *c, size_t i)
{
    return inf_has_in(c, i) ? c->node->in[i]->type : NULL;
}

int32_t inf_in_elem(const InfCtx *c, size_t i)
{
    const IrType *t = inf_in(c, i);
    if (!t || (t->kind != IR_TYPE_TENSOR && t->kind != IR_TYPE_SPARSE_TENSOR) ||
        !t->has_elem_type)
        return 0;
    return t->elem_type;
}

const IrShape *inf_in_shape(const InfCtx *c, size_t i)
{
    const IrType *t = inf_in(c, i);
    if (!t || (t->kind != IR_TYPE_TENSOR && t->kind != IR_TYPE_SPARSE_TENSOR))
        return NULL;
    return t->shape;
}

int inf_in_rank(const InfCtx *c, size_t i)
{
    const IrShape *s = inf_in_shape(c, i);
    return s ? (int)s->rank : -1;
}

const IrShape *inf_in_symval(const InfCtx *c, size_t i)
{
    return inf_has_in(c, i) ? c->node->in[i]->symval : NULL;
}

/* The tensor a Constant node holds in its `value` attribute, or NULL. */
/* The known value of v (src/analysis/known.h: the one rule). */
const IrTensor *inf_value_const(const IrValue *v)
{
    return kv_value(v);
}

const IrTensor *inf_in_const(const InfCtx *c, size_t i)
{
    return inf_has_in(c, i) ? inf_value_const(c->node->in[i]) : NULL;
}

/* Reads a small integer (or bool) tensor, flattened, with the IR's one
 * decoder; the 4- and 2-bit types are not read here. */
bool inf_tensor_ints(const IrTensor *t, int64_t **v, size_t *n)
{
    if (ir_dtype_bits(t->data_type) > 0 && ir_dtype_bits(t->data_type) < 8)
        return false;
    return ir_tensor_to_i64s(t, INF_MAX_CONST_ELEMS, v, n);
}

/* Reads a small float, double, float16 or bfloat16 tensor, flattened. */
bool inf_tensor_floats(const IrTensor *t, double **v, size_t *n)
{
    int32_t d = t->data_type;
    if (d != IR_FLOAT && d != IR_FLOAT16 && d != IR_DOUBLE && d != IR_BFLOAT16)
        return false;
    return ir_tensor_to_f64s(t, INF_MAX_CONST_ELEMS, v, n);
}

/* value_int / value_ints of a Constant node (opset 12+). */
static bool inf_constant_attr_ints(const IrNode *n, int64_t **v, size_t *cnt)
{
    if (!n || !n->op_type || strcmp(n->op_type, "Constant") != 0)
        return false;
    const IrAttr *a = ir_node_attr(n, "value_int");
    if (a && a->has_i) {
        *v = mem_alloc(sizeof **v);
        **v = a->i;
        *cnt = 1;
        return true;
    }
    a = ir_node_attr(n, "value_ints");
    if (a) {
        *v = mem_array(a->n_ints ? a->n_ints : 1, sizeof **v);
        memcpy(*v, a->ints, a->n_ints * sizeof **v);
        *cnt = a->n_ints;
        return true;
    }
    return false;
}

/* Elements of value v as known integers, from its constant or symval. */
bool inf_value_ints(const IrValue *v, int64_t **out, size_t *n)
{
    const IrTensor *t = inf_value_const(v);
    if (t)
        return inf_tensor_ints(t, out, n);
    if (v->kind == IR_VAL_NODE && inf_constant_attr_ints(v->producer, out, n))
        return true;
    if (!v->symval)
        return false;
    for (size_t k = 0; k < v->symval->rank; k++)
        if (v->symval->dims[k].kind != IR_DIM_VALUE)
            return false;
    *n = v->symval->rank;
    *out = mem_array(*n ? *n : 1, sizeof **out);
    for (size_t k = 0; k < *n; k++)
        (*out)[k] = v->symval->dims[k].value;
    return true;
}

bool inf_in_ints(const InfCtx *c, size_t i, int64_t **v, size_t *n)
{
    return inf_has_in(c, i) && inf_value_ints(c->node->in[i], v, n);
}

bool inf_value_floats(const IrValue *val, double **v, size_t *n)
{
    if (!val)
        return false;
    const IrTensor *t = inf_value_const(val);
    if (t)
        return inf_tensor_floats(t, v, n);
    if (val->kind == IR_VAL_NODE && val->producer && val->producer->op_type &&
        strcmp(val->producer->op_type, "Constant") == 0) {
        const IrAttr *a = ir_node_attr(val->producer, "value_floats");
        const IrAttr *f = ir_node_attr(val->producer, "value_float");
        if (a) {
            *n = a->n_floats;
            *v = mem_array(*n ? *n : 1, sizeof **v);
            for (size_t k = 0; k < *n; k++)
                (*v)[k] = a->floats[k];
            return true;
        }
        if (f && f->has_f) {
            *n = 1;
            *v = mem_alloc(sizeof **v);
            **v = f->f;
            return true;
        }
    }
    return false;
}

bool inf_in_floats(const InfCtx *c, size_t i, double **v, size_t *n)
{
    return inf_has_in(c, i) && inf_value_floats(c->node->in[i], v, n);
}

/* ---- attributes ---------------------------------------------------- */

const IrAttr *inf_attr(const InfCtx *c, const char *name)
{
    const IrAttr *a = ir_node_attr(c->node, name);
    if (!a || !a->ref_attr_name)
        return a;
    /* inside a function body: the call site's attribute, else the
     * function's default */
    if (c->call) {
        const IrAttr *r = ir_node_attr(c->call, a->ref_attr_name);
        if (r)
            return r;
    }
    if (c->fn)
        for (size_t k = 0; k < c->fn->n_attr; k++)
            if (c->fn->attr[k]->name && strcmp(c->fn->attr[k]->name, a->ref_attr_name) == 0)
                return c->fn->attr[k];
    return NULL;
}

bool inf_attr_has(const InfCtx *c, const char *name)
{
    return inf_attr(c, name) != NULL;
}

int64_t inf_attr_i_or(const InfCtx *c, const char *name, int64_t dflt)
{
    const IrAttr *a = inf_attr(c, name);
    if (a && a->has_i)
        return a->i;
    const OsAttr *s = c->schema ? os_attr(c->schema, name) : NULL;
    return s && s->has_default && s->type == IR_AT_INT ? s->def_i : dflt;
}

float inf_attr_f_or(const InfCtx *c, const char *name, float dflt)
{
    const IrAttr *a = inf_attr(c, name);
    if (a && a->has_f)
        return a->f;
    const OsAttr *s = c->schema ? os_attr(c->schema, name) : NULL;
    return s && s->has_default && s->type == IR_AT_FLOAT ? s->def_f : dflt;
}

const char *inf_attr_s_or(InfCtx *c, const char *name, const char *dflt)
{
    const IrAttr *a = inf_attr(c, name);
    if (a && a->has_s) {
        /* bytes are not NUL-terminated; the loader refused inner NULs */
        InfCtx *w = c;
        if (a->s.len >= sizeof w->sbuf)
            return NULL;
        if (a->s.len)
            memcpy(w->sbuf, a->s.data, a->s.len);
        w->sbuf[a->s.len] = '\0';
        return w->sbuf;
    }
    const OsAttr *s = c->schema ? os_attr(c->schema, name) : NULL;
    return s && s->has_default && s->type == IR_AT_STRING ? s->def_s : dflt;
}

int64_t inf_attr_i(const InfCtx *c, const char *name)
{
    return inf_attr_i_or(c, name, 0);
}

float inf_attr_f(const InfCtx *c, const char *name)
{
    return inf_attr_f_or(c, name, 0.0f);
}

const char *inf_attr_s(InfCtx *c, const char *name)
{
    return inf_attr_s_or(c, name, NULL);
}

long inf_attr_ints(const InfCtx *c, const char *name, const int64_t **v)
{
    const IrAttr *a = inf_attr(c, name);
    if (a && (a->n_ints || (a->has_type && a->type == IR_AT_INTS))) {
        *v = a->ints;
        return (long)a->n_ints;
    }
    const OsAttr *s = c->schema ? os_attr(c->schema, name) : NULL;
    if (s && s->has_default && s->type == IR_AT_INTS) {
        *v = s->def_ints;
        return s->def_n;
    }
    *v = NULL;
    return -1;
}

long inf_attr_floats(const InfCtx *c, const char *name, const float **v)
{
    const IrAttr *a = inf_attr(c, name);
    if (a && (a->n_floats || (a->has_type && a->type == IR_AT_FLOATS))) {
        *v = a->floats;
        return (long)a->n_floats;
    }
    const OsAttr *s = c->schema ? os_attr(c->schema, name) : NULL;
    if (s && s->has_default && s->type == IR_AT_FLOATS) {
        *v = s->def_floats;
        return s->def_n;
    }
    *v = NULL;
    return -1;
}

/* ---- outputs ------------------------------------------------------- */

const IrType *inf_out(const InfCtx *c, size_t i)
{
    return inf_has_out(c, i) ? c->node->out[i]->type : NULL;
}

void inf_out_type(InfCtx *c, size_t i, IrType *t)
{
    if (!inf_has_out(c, i)) {
        ir_type_free(t);
        return;
    }
    IrValue *v = c->node->out[i];
    ir_type_free(v->type);
    v->type = t;
}

/* Output i as a tensor type (created if missing or of another kind). */
static IrType *inf_out_tensor(InfCtx *c, size_t i)
{
    IrValue *v = c->node->out[i];
    if (!v->type || v->type->kind != IR_TYPE_TENSOR) {
        ir_type_free(v->type);
        v->type = mem_alloc(sizeof *v->type);
        v->type->kind = IR_TYPE_TENSOR;
    }
    return v->type;
}

IrShape *inf_out_shape(InfCtx *c, size_t i, size_t rank)
{
    if (!inf_has_out(c, i))
        return NULL;
    IrType *t = inf_out_tensor(c, i);
    ir_shape_free(t->shape);
    t->shape = ir_shape_new(rank);
    return t->shape;
}

void inf_out_elem(InfCtx *c, size_t i, int32_t elem)
{
    if (!inf_has_out(c, i))
        return;
    IrType *t = inf_out_tensor(c, i);
    t->has_elem_type = elem != 0;
    t->elem_type = elem;
}

void inf_out_symval(InfCtx *c, size_t i, IrShape *sv)
{
    if (!inf_has_out(c, i)) {
        ir_shape_free(sv);
        return;
    }
    IrValue *v = c->node->out[i];
    ir_shape_free(v->symval);
    v->symval = sv;
}

int inf_out_shape_of(InfCtx *c, size_t o, size_t i)
{
    const IrShape *s = inf_in_shape(c, i);
    if (!s || !inf_has_out(c, o))
        return 0;
    IrType *t = inf_out_tensor(c, o);
    ir_shape_free(t->shape);
    t->shape = ir_shape_copy(s);
    for (size_t k = 0; k < t->shape->rank; k++) {
        free(t->shape->dims[k].denotation);
        t->shape->dims[k].denotation = NULL;
    }
    return 0;
}

int inf_same_as_input(InfCtx *c, size_t i)
{
    return inf_out_shape_of(c, 0, i);
}

/* ---- dims ---------------------------------------------------------- */

bool inf_dim_known(const IrDim *d) { return d->kind == IR_DIM_VALUE; }

void inf_dim_unknown(IrDim *d)
{
    free(d->param);
    d->param = NULL;
    d->kind = IR_DIM_UNSET;
    d->value = 0;
}

void inf_dim_set(IrDim *d, int64_t value)
{
    inf_dim_unknown(d);
    d->kind = IR_DIM_VALUE;
    d->value = value;
}

void inf_dim_copy(IrDim *dst, const IrDim *src)
{
    if (dst == src)
        return;
    inf_dim_unknown(dst);
    dst->kind = src->kind;
    dst->value = src->value;
    dst->param = src->kind == IR_DIM_PARAM ? mem_strdup(src->param) : NULL;
    if (dst->kind == IR_DIM_PARAM && !dst->param)
        dst->kind = IR_DIM_UNSET;
}

bool inf_dim_same(const IrDim *a, const IrDim *b)
{
    if (a->kind == IR_DIM_VALUE && b->kind == IR_DIM_VALUE)
        return a->value == b->value;
    if (a->kind == IR_DIM_PARAM && b->kind == IR_DIM_PARAM)
        return a->param && b->param && a->param[0] && strcmp(a->param, b->param) == 0;
    return false;
}

bool inf_dim_differ(const IrDim *a, const IrDim *b)
{
    return a->kind == IR_DIM_VALUE && b->kind == IR_DIM_VALUE && a->value != b->value;
}

/* Moves r into dst (r's symbol is owned and handed over). Safe when r was
 * computed from dst itself. */
static void inf_dim_take(IrDim *dst, IrDim *r)
{
    free(dst->param);
    dst->kind = r->kind;
    dst->value = r->value;
    dst->param = r->param;
}

/* r = x, with an owned copy of x's symbol. */
static void inf_dim_dup(IrDim *r, const IrDim *x)
{
    r->kind = x->kind;
    r->value = x->value;
    r->param = x->kind == IR_DIM_PARAM ? mem_strdup(x->param) : NULL;
    if (r->kind == IR_DIM_PARAM && !r->param)
        r->kind = IR_DIM_UNSET;
}

/* Signed products and sums: shape values (symval) may be negative, e.g.
 * the -1 of a Reshape target. Overflow leaves the result unknown. */
void inf_dim_mul(IrDim *dst, const IrDim *a, const IrDim *b)
{
    IrDim r = {0};
    int64_t v;
    if (inf_dim_known(a) && inf_dim_known(b)) {
        if (!__builtin_mul_overflow(a->value, b->value, &v)) {
            r.kind = IR_DIM_VALUE;
            r.value = v;
        }
    } else if (inf_dim_known(a) && a->value == 1) {
        inf_dim_dup(&r, b);
    } else if (inf_dim_known(b) && b->value == 1) {
        inf_dim_dup(&r, a);
    } else if ((inf_dim_known(a) && a->value == 0) || (inf_dim_known(b) && b->value == 0)) {
        r.kind = IR_DIM_VALUE;
    }
    inf_dim_take(dst, &r);
}

void inf_dim_add(IrDim *dst, const IrDim *a, const IrDim *b)
{
    IrDim r = {0};
    int64_t v;
    if (inf_dim_known(a) && inf_dim_known(b)) {
        if (!__builtin_add_overflow(a->value, b->value, &v)) {
            r.kind = IR_DIM_VALUE;
            r.value = v;
        }
    } else if (inf_dim_known(a) && a->value == 0) {
        inf_dim_dup(&r, b);
    } else if (inf_dim_known(b) && b->value == 0) {
        inf_dim_dup(&r, a);
    }
    inf_dim_take(dst, &r);
}

void inf_dims_product(IrDim *dst, const IrShape *s, size_t from, size_t to)
{
    IrDim acc = {.kind = IR_DIM_VALUE, .value = 1};
    for (size_t k = from; k < to && k < s->rank; k++)
        inf_dim_mul(&acc, &acc, &s->dims[k]);
    inf_dim_copy(dst, &acc);
    inf_dim_unknown(&acc);
}

int inf_broadcast(InfCtx *c, const IrShape *const *shapes, size_t n,
                  IrShape **out)
{
    size_t rank = 0;
    for (size_t k = 0; k < n; k++)
        if (shapes[k]->rank > rank)
            rank = shapes[k]->rank;
    IrShape *s = ir_shape_new(rank);
    for (size_t d = 0; d < rank; d++) {
        IrDim *o = &s->dims[d];
        bool all_one = true, unknown = false;
        const IrDim *known = NULL, *sym = NULL;
        for (size_t k = 0; k < n; k++) {
            if (rank - d > shapes[k]->rank)
                continue; /* missing leading dim: 1 */
            const IrDim *x = &shapes[k]->dims[d - (rank - shapes[k]->rank)];
            if (x->kind == IR_DIM_VALUE) {
                if (x->value == 1)
                    continue;
                all_one = false;
                if (known && known->value != x->value) {
                    ir_shape_free(s);
                    return inf_fail(c, "broadcast", "dimension %zu: %lld and %lld "
                                    "cannot broadcast", d, (long long)known->value,
                                    (long long)x->value);
                }
                known = x;
            } else {
                all_one = false;
                if (x->kind == IR_DIM_PARAM && (!sym || inf_dim_same(sym, x)) && !unknown)
                    sym = x;
                else
                    unknown = true;
            }
        }
        if (known)
            inf_dim_set(o, known->value);
        else if (all_one)
            inf_dim_set(o, 1);
        else if (sym && !unknown)
            inf_dim_copy(o, sym);
        /* else: unknown (a symbol might be 1 and broadcast) */
    }
    *out = s;
    return 0;
}

int inf_axis(InfCtx *c, const char *what, int64_t axis, int rank, int extra,
             int *out)
{
    int64_t r = (int64_t)rank + extra;
    if (axis < -r || axis >= r)
        return inf_fail(c, "axis", "%s %lld is out of range for rank %d", what,
                        (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + r : axis);
    return 0;
}

/* ---- the generic step: type variables ------------------------------ */

/* Binds each type variable of c->schema from the node's inputs and checks
 * them against the constraints. Returns the binding for variable k in
 * bound[k] (borrowed types), or -1 on a violation. */
static int inf_bind_vars(InfCtx *c, const IrType **bound)
{
    const OsSchema *s = c->schema;
    char a[96], b[96];
    for (size_t i = 0; i < c->node->n_in; i++) {
        const IrType *t = inf_in(c, i);
        const OsParam *p = os_in_param(s, i);
        if (!t || !p || t->kind == IR_TYPE_NONE)
            continue;
        if (!os_param_allows(s, p, t))
            return inf_fail(c, "type-constraint", "input %zu ('%s') has type %s, "
                            "which %s does not allow", i, c->node->in[i]->name,
                            os_type_str(t, a, sizeof a), p->type);
        for (size_t k = 0; k < s->n_tc; k++) {
            if (strcmp(s->tc[k].name, p->type) != 0 || p->heterogeneous)
                continue;
            if (!bound[k]) {
                bound[k] = t;
            } else if (!os_type_matches(os_type_str(bound[k], a, sizeof a), t) &&
                       !strchr(a, '?')) {
                return inf_fail(c, "type-constraint", "input %zu ('%s') has type %s "
                                "but %s is already %s", i, c->node->in[i]->name,
                                os_type_str(t, b, sizeof b), p->type, a);
            }
        }
    }
    return 0;
}

/* The element-level type of a fixed type string with no variables
 * ("tensor(int64)"), or NULL when it is not a plain tensor type. */
static IrType *inf_type_from_string(const char *ts)
{
    if (strncmp(ts, "tensor(", 7) != 0)
        return NULL;
    const char *e = ts + 7;
    size_t len = strcspn(e, ")");
    int32_t d = os_dtype_from_name(e, len);
    if (!d)
        return NULL;
    IrType *t = mem_alloc(sizeof *t);
    t->kind = IR_TYPE_TENSOR;
    t->has_elem_type = true;
    t->elem_type = d;
    return t;
}

/* Gives outputs the element types the bound variables (or a variable
 * allowed exactly one type, or a fixed type) determine; shapes unknown. */
static void inf_generic_outputs(InfCtx *c, const IrType *const *bound)
{
    const OsSchema *s = c->schema;
    for (size_t i = 0; i < c->node->n_out; i++) {
        const OsParam *p = os_out_param(s, i);
        if (!p || !c->node->out[i] || p->heterogeneous)
            continue;
        IrType *t = NULL;
        const OsTypeCons *tc = os_tc(s, p->type);
        if (!tc) {
            t = inf_type_from_string(p->type);
        } else {
            size_t k = (size_t)(tc - s->tc);
            if (bound[k]) {
                t = ir_type_copy(bound[k]);
                if (t->kind == IR_TYPE_TENSOR || t->kind == IR_TYPE_SPARSE_TENSOR) {
                    ir_shape_free(t->shape);
                    t->shape = NULL;
                }
                free(t->denotation);
                t->denotation = NULL;
            } else if (tc->n == 1) {
                t = inf_type_from_string(tc->types[0]);
            }
        }
        if (t)
            inf_out_type(c, i, t);
    }
}

/* Checks each output's type against the schema. */
static int inf_check_outputs(InfCtx *c)
{
    char a[96];
    for (size_t i = 0; i < c->node->n_out; i++) {
        const IrType *t = inf_out(c, i);
        const OsParam *p = os_out_param(c->schema, i);
        if (t && p && !os_param_allows(c->schema, p, t))
            return inf_fail(c, "type-constraint", "output %zu ('%s') would have "
                            "type %s, which %s does not allow", i,
                            c->node->out[i]->name, os_type_str(t, a, sizeof a), p->type);
    }
    return 0;
}

/* ---- declared types ------------------------------------------------ */

static void inf_note(InfCtx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void inf_note(InfCtx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (!c->opt || !c->opt->note)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->opt->note(c->opt->note_arg, msg);
}

/* Makes the dim_value -1 of t (and of the types inside it) unknown
 * dimensions: some exporters declare an unknown dimension so
 * (tolerate.h), and as a size it would be carried along. Returns t. */
static IrType *inf_unset_minus_one(IrType *t)
{
    for (IrType *e = t; e; e = e->elem)
        for (size_t k = 0; e->shape && k < e->shape->rank; k++)
            if (ir_dim_minus_one(&e->shape->dims[k]))
                inf_dim_unknown(&e->shape->dims[k]);
    return t;
}

/* A declared type as inference reads it (inf_unset_minus_one). */
static IrType *inf_decl_copy(const IrType *t)
{
    return inf_unset_minus_one(ir_type_copy(t));
}

/* Fills what `got` leaves unknown from `decl` (a declared type), noting
 * disagreements. Shapes that disagree are noted only in function bodies:
 * elsewhere the checker finds them once inference is done (tolerate.h,
 * declared-shape), where the type of every value is known. Returns the
 * merged type (got, changed in place, or a copy of decl when got is
 * NULL). */
static IrType *inf_merge(InfCtx *c, IrType *got, const IrType *decl,
                         const char *name)
{
    if (!decl || decl->kind == IR_TYPE_NONE)
        return got;
    if (!got)
        return inf_decl_copy(decl);
    if (got->kind != decl->kind) {
        inf_note(c, "value '%s': inferred kind %d, declared %d", name, got->kind, decl->kind);
        return got;
    }
    if (got->kind != IR_TYPE_TENSOR)
        return got;
    if (!got->has_elem_type && decl->has_elem_type) {
        got->has_elem_type = true;
        got->elem_type = decl->elem_type;
    } else if (decl->has_elem_type && decl->elem_type != got->elem_type) {
        inf_note(c, "value '%s': inferred element type %s, declared %s", name,
                 ir_dtype_name(got->elem_type), ir_dtype_name(decl->elem_type));
    }
    if (!decl->shape)
        return got;
    if (!got->shape) {
        got->shape = ir_shape_copy(decl->shape);
        inf_unset_minus_one(got);
        return got;
    }
    bool body = c->fn != NULL;
    if (got->shape->rank != decl->shape->rank) {
        if (body)
            inf_note(c, "value '%s': inferred rank %zu, declared %zu", name,
                     got->shape->rank, decl->shape->rank);
        return got;
    }
    for (size_t k = 0; k < got->shape->rank; k++) {
        IrDim *g = &got->shape->dims[k];
        const IrDim *d = &decl->shape->dims[k];
        if (ir_dim_minus_one(d))
            continue;
        if (inf_dim_differ(g, d)) {
            if (body)
                inf_note(c, "value '%s': dimension %zu inferred %lld, declared %lld",
                         name, k, (long long)g->value, (long long)d->value);
        } else if (!inf_dim_known(g) && d->kind != IR_DIM_UNSET) {
            inf_dim_copy(g, d);
        }
    }
    return got;
}

/* ---- seeding a graph ----------------------------------------------- */

/* A tensor type for initializer t. */
static IrType *inf_tensor_type(const IrTensor *t)
{
    IrType *ty = mem_alloc(sizeof *ty);
    ty->kind = IR_TYPE_TENSOR;
    ty->has_elem_type = t->has_data_type;
    ty->elem_type = t->data_type;
    ty->shape = ir_shape_new(t->ndims);
    for (size_t k = 0; k < t->ndims; k++)
        inf_dim_set(&ty->shape->dims[k], t->dims[k]);
    return ty;
}

/* Sets v->symval from its constant when it is a small integer tensor. */
static void inf_const_symval(IrValue *v)
{
    int64_t *vals;
    size_t n;
    const IrTensor *t = inf_value_const(v);
    if (v->symval || (t && t->ndims > 1))
        return;
    if (!t && !(v->kind == IR_VAL_NODE && v->producer &&
                v->producer->op_type && strcmp(v->producer->op_type, "Constant") == 0))
        return;
    if (!inf_value_ints(v, &vals, &n))
        return;
    if (n <= INF_MAX_SYMVAL) {
        v->symval = ir_shape_new(n);
        for (size_t k = 0; k < n; k++)
            inf_dim_set(&v->symval->dims[k], vals[k]);
    }
    free(vals);
}

/* Types of g's formal inputs (declared, else given) and initializers;
 * with use_value_info, declared intermediate types as a starting point. */
static void inf_seed(InfCtx *c, IrGraph *g, size_t n_in,
                     const IrType *const *in_types)
{
    for (size_t k = 0; k < g->inputs.n; k++) {
        IrValueInfo *vi = g->inputs.p[k];
        IrValue *v = vi->value;
        ir_type_free(v->type);
        v->type = NULL;
        if (vi->type && vi->type->kind != IR_TYPE_NONE)
            v->type = inf_decl_copy(vi->type);
        else if (k < n_in && in_types[k])
            v->type = ir_type_copy(in_types[k]);
        else if (v->init)
            v->type = inf_tensor_type(v->init);
        /* a declared input type missing what the caller knows */
        if (k < n_in && in_types[k] && vi->type)
            v->type = inf_merge(c, v->type, in_types[k], v->name);
    }
    for (size_t k = 0; k < g->inits.n; k++) {
        IrTensor *t = g->inits.p[k];
        IrValue *v = t->name ? ir_graph_find_local(g, t->name) : NULL;
        if (!v)
            continue;
        if (!v->type)
            v->type = inf_tensor_type(t);
        inf_const_symval(v);
    }
    for (size_t k = 0; k < g->sparse_inits.n; k++) {
        IrSparse *sp = g->sparse_inits.p[k];
        const char *name = sp->values ? sp->values->name : NULL;
        IrValue *v = name ? ir_graph_find_local(g, name) : NULL;
        if (!v || v->type)
            continue;
        v->type = mem_alloc(sizeof *v->type);
        v->type->kind = IR_TYPE_TENSOR;
        v->type->has_elem_type = sp->values->has_data_type;
        v->type->elem_type = sp->values->data_type;
        v->type->shape = ir_shape_new(sp->ndims);
        for (size_t d = 0; d < sp->ndims; d++)
            inf_dim_set(&v->type->shape->dims[d], sp->dims[d]);
    }
}

/* The declared (value_info) types of one graph, by value: looked up once
 * per node output, so a scan of the list per output would be quadratic on
 * models that declare every value. */
struct InfDecl {
    const IrValue *v;
    const IrType *t;
    UT_hash_handle hh;
};

static struct InfDecl *inf_decl_build(const IrGraph *g)
{
    struct InfDecl *map = NULL, *e;
    for (size_t k = 0; k < g->value_info.n; k++) {
        const IrValueInfo *vi = g->value_info.p[k];
        HASH_FIND_PTR(map, &vi->value, e);
        if (e || !vi->type)
            continue; /* the first declaration wins */
        e = mem_alloc(sizeof *e);
        e->v = vi->value;
        e->t = vi->type;
        HASH_ADD_PTR(map, v, e);
    }
    return map;
}

static void inf_decl_free(struct InfDecl *map)
{
    struct InfDecl *e, *tmp;
    HASH_ITER(hh, map, e, tmp) {
        HASH_DEL(map, e);
        free(e);
    }
}

/* Declared type of an intermediate value, or NULL. */
static const IrType *inf_declared(const InfCtx *c, const IrValue *v)
{
    struct InfDecl *e = NULL;
    if (v->n_infos && c->decl)
        HASH_FIND_PTR(c->decl, &v, e);
    return e ? e->t : NULL;
}

/* ---- one node ------------------------------------------------------ */

/* Reports every value of g (inputs, node outputs, subgraphs) to the
 * caller's body_type hook. */
static int inf_report_graph(const IrGraph *g, const IrWalkAt *at, void *arg)
{
    const InfCtx *c = arg;
    for (size_t i = 0; i < g->inputs.n; i++) {
        const IrValueInfo *vi = g->inputs.p[i];
        c->opt->body_type(c->opt->body_arg, vi->value, vi->value->type);
    }
    for (const IrNode *n = g->first; n; n = n->next)
        for (size_t i = 0; i < n->n_out; i++)
            if (n->out[i])
                c->opt->body_type(c->opt->body_arg, n->out[i], n->out[i]->type);
    return 0;
}

/* The hook keeps one entry per value, so the walk's order does not
 * matter (each value is reported once per call). */
static void inf_report_body(const InfCtx *c, const IrGraph *g)
{
    ir_graph_each_subgraph_const(g, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, inf_report_graph,
                                 (void *)c);
}

/* Infers a call of a model-local function by inferring its body with the
 * call's input types, then taking the body's output types. */
static int inf_call(InfCtx *c, IrFunction *f)
{
    IrGraph *body = f->body;
    if (!body || c->depth >= INF_MAX_CALL_DEPTH)
        return 0;
    InfCtx sub = *c;
    sub.call = c->node;
    sub.fn = f;
    sub.depth = c->depth + 1;
    size_t n_in = body->inputs.n < c->node->n_in ? body->inputs.n : c->node->n_in;
    /* Copies: when a function calls itself (a model the checker refuses,
     * but info and the converter infer it anyway) the call's arguments are
     * the body's own inputs, whose types inf_seed frees first. */
    IrType **types = mem_array(n_in ? n_in : 1, sizeof *types);
    for (size_t k = 0; k < n_in; k++)
        types[k] = ir_type_copy(inf_in(c, k));
    inf_seed(&sub, body, n_in, (const IrType *const *)types);
    for (size_t k = 0; k < n_in; k++)
        ir_type_free(types[k]);
    free(types);
    int rc = inf_graph_nodes(&sub, body);
    for (size_t k = 0; rc == 0 && k < c->node->n_out && k < body->outputs.n; k++) {
        const IrValueInfo *vi = body->outputs.p[k];
        if (c->node->out[k] && vi->value->type)
            inf_out_type(c, k, ir_type_copy(vi->value->type));
    }
    if (rc == 0 && c->opt && c->opt->body_type)
        inf_report_body(c, body);
    ir_graph_clear_inferred(body);
    return rc;
}

/* Not ir_graph_each_subgraph: one node's subgraphs, one level, each
 * inferred in c's scope (nested ones follow from inf_subgraph itself). */
int inf_other_subgraphs(InfCtx *c, const char *skip)
{
    for (size_t a = 0; a < c->node->n_attr; a++) {
        IrAttr *at = c->node->attr[a];
        if (skip && at->name && strcmp(at->name, skip) == 0)
            continue;
        if (at->g && inf_subgraph(c, at->g, 0, NULL) < 0)
            return -1;
        for (size_t k = 0; k < at->n_graphs; k++)
            if (inf_subgraph(c, at->graphs[k], 0, NULL) < 0)
                return -1;
    }
    return 0;
}

/* What ir_model_function finds, through c's index when there is one. */
static IrFunction *inf_function_of(const InfCtx *c, const IrNode *n)
{
    if (!c->funcs)
        return ir_model_function(c->model, n);
    int64_t k;
    const char *key[3] = {n->op_type, ir_domain_norm(n->domain),
                          n->overload ? n->overload : ""};
    return n->op_type && ks_find(c->funcs, key, 3, &k) ? c->model->functions[k] : NULL;
}

/* What ir_scope_opset says, through c's index of the model's imports
 * when there is one (a function's own imports are searched in turn). */
static int64_t inf_scope_opset(const InfCtx *c, const char *domain)
{
    if (!c->opsets)
        return ir_scope_opset(c->model, c->fn, domain);
    for (size_t k = 0; c->fn && k < c->fn->n_opsets; k++)
        if (!strcmp(ir_domain_norm(c->fn->opsets[k].domain), ir_domain_norm(domain)))
            return c->fn->opsets[k].has_version ? c->fn->opsets[k].version : -1;
    int64_t v;
    const char *key[1] = {ir_domain_norm(domain)};
    return ks_find(c->opsets, key, 1, &v) ? v : -1;
}

static int inf_node(InfCtx *parent, IrNode *n)
{
    InfCtx c = *parent;
    c.node = n;
    c.schema = NULL;
    c.since = 0;
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i]) {
            /* a re-run (loop bodies, functions) must not keep old results */
            ir_type_free(n->out[i]->type);
            n->out[i]->type = NULL;
            ir_shape_free(n->out[i]->symval);
            n->out[i]->symval = NULL;
            ir_tensor_free(n->out[i]->known);
            n->out[i]->known = NULL;
        }
    IrFunction *f = inf_function_of(&c, n);
    bool forced = c.force_opset > 0 &&
                  strcmp(ir_domain_norm(n->domain), c.force_domain) == 0;
    c.opset = forced ? c.force_opset : inf_scope_opset(&c, n->domain);
    if (!f && n->op_type && c.opset > 0)
        c.schema = os_find(n->domain, n->op_type, c.opset);
    int rc = 0;
    bool subs_done = false;
    if (f) {
        rc = inf_call(&c, f);
    } else if (c.schema) {
        c.since = c.schema->since;
        const IrType *bound[32] = {0};
        if (c.schema->n_tc > 32)
            return 0;
        rc = inf_bind_vars(&c, bound);
        if (rc == 0)
            inf_generic_outputs(&c, bound);
        InfFn fn = rc == 0 ? inf_lookup(c.schema->domain, c.schema->op) : NULL;
        if (fn) {
            rc = fn(&c);
            subs_done = c.schema->flags & OS_F_CONTROL;
        }
        if (rc == 0)
            rc = inf_check_outputs(&c);
    }
    if (rc == 0 && !subs_done)
        rc = inf_other_subgraphs(&c, NULL);
    if (rc < 0)
        return -1;
    for (size_t i = 0; i < n->n_out; i++) {
        IrValue *v = n->out[i];
        if (!v)
            continue;
        if (c.opt && c.opt->use_value_info && !ir_value_is_graph_output(v))
            v->type = inf_merge(&c, v->type, inf_declared(&c, v), v->name);
    }
    /* values proved ahead of time: only where the node is read at the
     * scope's own opset and once (not per call of a function body) */
    if (!forced && !c.call && !c.fn)
        kv_infer_node(c.model, n, c.opt ? c.opt->run : NULL);
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i])
            inf_const_symval(n->out[i]);
    return 0;
}

static int inf_graph_nodes(InfCtx *parent, IrGraph *g)
{
    InfCtx c = *parent;
    int rc = 0;
    c.decl = c.opt && c.opt->use_value_info ? inf_decl_build(g) : NULL;
    for (IrNode *n = g->first; n && rc == 0; n = n->next)
        rc = inf_node(&c, n);
    inf_decl_free(c.decl);
    return rc;
}

int inf_subgraph(InfCtx *c, IrGraph *g, size_t n_in,
                 const IrType *const *in_types)
{
    if (c->depth > 4 * INF_MAX_CALL_DEPTH)
        return 0;
    InfCtx sub = *c;
    sub.depth = c->depth + 1;
    inf_seed(&sub, g, n_in, in_types);
    return inf_graph_nodes(&sub, g);
}

static void inf_model_index(const IrModel *m, KsSet *opsets, KsSet *funcs);
static int inf_model_graphs(InfCtx *pc);

int inf_model(IrModel *m, const InfOptions *opt, IrError *err)
{
    static const InfOptions dflt = {.use_value_info = true};
    if (!m->graph)
        return 0;
    ir_graph_clear_inferred(m->graph);
    kv_begin_run(m);
    KsSet opsets = {0}, funcs = {0};
    inf_model_index(m, &opsets, &funcs);
    InfCtx c = {.model = m, .opt = opt ? opt : &dflt, .err = err,
                .opsets = &opsets, .funcs = &funcs};
    int rc = inf_model_graphs(&c);
    ks_free(&opsets);
    ks_free(&funcs);
    return rc;
}

/* Indexes m's imports (normalized domain -> version) and functions
 * ((name, domain, overload) -> index); the first of equals wins, as in
 * ir_model_opset and ir_model_function. */
static void inf_model_index(const IrModel *m, KsSet *opsets, KsSet *funcs)
{
    for (size_t k = 0; k < m->n_opsets; k++) {
        const IrOpset *o = &m->opsets[k];
        ks_add(opsets, (const char *[]){ir_domain_norm(o->domain)}, 1,
               o->has_version ? o->version : -1);
    }
    for (size_t k = 0; k < m->n_functions; k++) {
        const IrFunction *f = m->functions[k];
        const char *key[3] = {f->name, ir_domain_norm(f->domain),
                              f->overload ? f->overload : ""};
        if (f->name)
            ks_add(funcs, key, 3, (int64_t)k);
    }
}

/* Infers one top graph; its subgraphs are inferred by their nodes, in
 * the scope they see. Training graphs are top-level graphs of their own;
 * a name they take from the main graph (an initializer) stays untyped. */
static int inf_top_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    InfCtx *c = arg;
    if (at->training)
        ir_graph_clear_inferred(g);
    inf_seed(c, g, 0, NULL);
    return inf_graph_nodes(c, g) < 0 ? -1 : 0;
}

static int inf_model_graphs(InfCtx *pc)
{
    InfCtx c = *pc;
    return ir_each_graph(c.model, IR_WALK_MAIN | IR_WALK_TRAINING, inf_top_graph, &c);
}

int inf_node_at(IrModel *m, IrNode *n, const char *domain, int64_t opset, IrError *err)
{
    static const InfOptions plain = {.use_value_info = false};
    InfCtx c = {.model = m, .opt = &plain, .err = err, .force_opset = opset,
                .force_domain = ir_domain_norm(domain)};
    return inf_node(&c, n);
}

/* ---- writing results ------------------------------------------------ */

/* A graph output declared without a shape (or element type) takes the
 * inferred one; a declared shape is the model's interface and stays. */
static size_t inf_fill_output(IrValueInfo *vi)
{
    const IrType *t = vi->value->type;
    if (!t || t->kind != IR_TYPE_TENSOR)
        return 0;
    if (!vi->type) {
        vi->type = ir_type_copy(t);
        return 1;
    }
    if (vi->type->kind != IR_TYPE_TENSOR)
        return 0;
    size_t changed = 0;
    if (!vi->type->has_elem_type && t->has_elem_type) {
        vi->type->has_elem_type = true;
        vi->type->elem_type = t->elem_type;
        changed = 1;
    }
    if (!vi->type->shape && t->shape) {
        vi->type->shape = ir_shape_copy(t->shape);
        changed = 1;
    }
    return changed;
}

/* Adds one graph's value_info (to *added); each graph's list is its
 * own, so the walk's order does not matter. */
static int inf_write_graph_info(IrGraph *g, const IrWalkAt *at, void *arg)
{
    size_t added = 0;
    for (size_t k = 0; k < g->outputs.n; k++)
        added += inf_fill_output(g->outputs.p[k]);
    for (IrNode *n = g->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_out; i++) {
            IrValue *v = n->out[i];
            if (v && v->type && !v->n_infos && !ir_value_is_graph_output(v)) {
                ir_graph_add_value_info(g, v, ir_type_copy(v->type));
                added++;
            }
        }
    }
    *(size_t *)arg += added;
    return 0;
}

size_t inf_write_value_info(IrGraph *g)
{
    size_t added = 0;
    ir_graph_each_subgraph(g, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, inf_write_graph_info, &added);
    return added;
}
