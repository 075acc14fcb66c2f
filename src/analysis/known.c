/*
 * known.c - whether a value is known before the model runs (see known.h).
 */
#include <string.h>

#include "analysis/known.h"
#include "schema/opschema.h"

/* ---- reading -------------------------------------------------------- */

/* A Constant node's `value` tensor (the other value_* forms are proved by
 * kv_infer_node into IrValue.known). */
static const IrTensor *kv_constant_value(const IrNode *n)
{
    if (!n || n->dead || !n->op_type || strcmp(n->op_type, "Constant") != 0 ||
        ir_domain_norm(n->domain)[0])
        return NULL;
    const IrAttr *a = ir_node_attr(n, "value");
    return a && !a->ref_attr_name ? a->t : NULL;
}

const IrTensor *kv_value(const IrValue *v)
{
    if (!v)
        return NULL;
    if (v->known)
        return v->known;
    switch (v->kind) {
    case IR_VAL_INIT:
        return v->init;
    case IR_VAL_INPUT:
        return v->known_input ? v->init : NULL;
    case IR_VAL_NODE:
        return kv_constant_value(v->producer);
    default:
        return NULL;
    }
}

/* The work proofs took in this thread's inference run (KV_MAX_WORK):
 * reset at each run (kv_begin_run); per thread, as runs on different
 * threads infer different models. */
static _Thread_local size_t kv_work;

const IrTensor *kv_proved(const IrValue *v)
{
    return v ? v->known : NULL;
}

void kv_begin_run(IrModel *m)
{
    kv_work = 0;
    if (!m->graph || !m->has_ir_version || m->ir_version >= 4)
        return;
    for (size_t k = 0; k < m->graph->inputs.n; k++) {
        IrValueInfo *vi = m->graph->inputs.p[k];
        if (vi->value && vi->value->init)
            vi->value->known_input = true;
    }
}

/* ---- proving -------------------------------------------------------- */

static bool kv_domain_ok(const char *d)
{
    d = ir_domain_norm(d);
    return !d[0] || !strcmp(d, "ai.onnx.ml");
}

/* Whether Dropout node n draws a mask: in training mode (is_test 0 before
 * version 7; a training_mode input not known false from 12) with a ratio
 * not known to be 0 (a ratio of 0 keeps every element). */
static bool kv_dropout_training(const IrModel *m, const IrNode *n)
{
    int64_t opset = m ? ir_model_opset(m, n->domain) : 0;
    const OsSchema *s = opset > 0 ? os_find(n->domain, n->op_type, opset) : NULL;
    if (!s)
        return true;
    if (s->since < 12) {
        const IrAttr *t = ir_node_attr(n, "is_test");
        const IrAttr *r = ir_node_attr(n, "ratio");
        return s->since < 7 && (!t || t->i == 0) && !(r && r->has_f && r->f == 0.0f);
    }
    if (n->n_in < 3 || !n->in[2])
        return false;
    const IrTensor *tm = kv_value(n->in[2]);
    const IrTensor *ratio = n->n_in > 1 && n->in[1] ? kv_value(n->in[1]) : NULL;
    int64_t v;
    double r;
    if (ratio && ir_tensor_get_f64(ratio, 0, &r) && r == 0.0)
        return false;
    return !(tm && ir_tensor_get_i64(tm, 0, &v) && v == 0);
}

/* kv_random with n's table entry s (flags apply to every version, so the
 * first entry tells) already looked up. */
static bool kv_random_in(const IrModel *m, const IrNode *n, const OsSchema *s)
{
    if (!s)
        return false;
    if (s->flags & OS_F_RANDOM)
        return true;
    return !strcmp(n->op_type, "Dropout") && kv_domain_ok(n->domain) &&
           kv_dropout_training(m, n);
}

bool kv_random(const IrModel *m, const IrNode *n)
{
    size_t nv;
    return n->op_type && kv_random_in(m, n, os_versions(n->domain, n->op_type, &nv));
}

bool kv_deterministic(const IrModel *m, const IrNode *n)
{
    if (!n->op_type || !kv_domain_ok(n->domain))
        return false;
    /* the operator table says which ops are random or run graphs */
    size_t nv;
    const OsSchema *s = os_versions(n->domain, n->op_type, &nv);
    if (kv_random_in(m, n, s) || (s && (s->flags & OS_F_CONTROL)))
        return false;
    for (size_t a = 0; a < n->n_attr; a++)
        if (n->attr[a]->ref_attr_name || n->attr[a]->g || n->attr[a]->n_graphs)
            return false;
    return true;
}

/* Elements of t, or SIZE_MAX past KV_MAX_ELEMS (or a negative dim). */
static size_t kv_numel(const int64_t *dims, size_t rank)
{
    size_t n = 1;
    for (size_t k = 0; k < rank; k++) {
        if (dims[k] < 0 || (dims[k] > 0 && n > KV_MAX_ELEMS / (size_t)dims[k]))
            return SIZE_MAX;
        n *= (size_t)dims[k];
    }
    return n;
}

/* The static shape of v's inferred tensor type into dims (rank <= cap);
 * -1 when not a tensor of static shape. */
static int kv_static_shape(const IrValue *v, int64_t *dims, size_t cap)
{
    size_t rank;
    return v && ir_type_static_dims(v->type, dims, cap, &rank) ? (int)rank : -1;
}

/* Stores a proved int64 vector (or scalar when rank0) as v's value. */
static void kv_set_ints(IrValue *v, int32_t dtype, bool rank0, const int64_t *x, size_t n)
{
    int64_t dims[1] = {(int64_t)n};
    uint8_t *raw = mem_array(n ? n : 1, 8), *p = raw;
    size_t size = dtype == IR_INT32 ? 4 : 8;
    for (size_t k = 0; k < n; k++)          /* little-endian, as raw_data is */
        for (size_t b = 0; b < size; b++)
            *p++ = (uint8_t)((uint64_t)x[k] >> (8 * b));
    v->known = ir_tensor_new(v->name, dtype, rank0 ? 0 : 1, dims, raw, n * size);
    free(raw);
}

/* Shape (with Shape-15's start/end) and Size of a static shape. */
static bool kv_shape_op(IrNode *n)
{
    bool shape = !strcmp(n->op_type, "Shape"), size = !strcmp(n->op_type, "Size");
    if ((!shape && !size) || n->n_in < 1 || n->n_out < 1 || !n->out[0])
        return false;
    int64_t dims[KV_MAX_RANK];
    int r = kv_static_shape(n->in[0], dims, KV_MAX_RANK);
    if (r < 0)
        return true;
    if (size) {
        size_t numel = kv_numel(dims, (size_t)r);
        if (numel != SIZE_MAX)
            kv_set_ints(n->out[0], IR_INT64, true, (int64_t[]){(int64_t)numel}, 1);
        return true;
    }
    const IrAttr *sa = ir_node_attr(n, "start"), *ea = ir_node_attr(n, "end");
    int64_t s = sa && sa->has_i ? sa->i : 0, e = ea && ea->has_i ? ea->i : r;
    s = s < 0 ? s + r : s;
    e = e < 0 ? e + r : e;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    kv_set_ints(n->out[0], IR_INT64, false, dims + s, e > s ? (size_t)(e - s) : 0);
    return true;
}

/* A small integer tensor whose every element shape arithmetic proved. */
static void kv_from_symval(IrValue *v)
{
    const IrShape *sv = v->symval;
    const IrType *t = v->type;
    if (v->known || !sv || !t || t->kind != IR_TYPE_TENSOR || !t->shape ||
        t->shape->rank > 1 || !t->has_elem_type ||
        (t->elem_type != IR_INT64 && t->elem_type != IR_INT32))
        return;
    bool rank0 = t->shape->rank == 0;
    if ((rank0 && sv->rank != 1) ||
        (!rank0 && (t->shape->dims[0].kind != IR_DIM_VALUE ||
                    t->shape->dims[0].value != (int64_t)sv->rank)))
        return;
    int64_t x[64];
    if (sv->rank > sizeof x / sizeof x[0])
        return;
    for (size_t k = 0; k < sv->rank; k++) {
        if (sv->dims[k].kind != IR_DIM_VALUE)
            return;
        x[k] = sv->dims[k].value;
    }
    kv_set_ints(v, t->elem_type, rank0, x, sv->rank);
}

/* Whether every present input of n is known and small (and at least one
 * is present, unless n is a Constant); adds their elements to *work. */
static bool kv_inputs_known(const IrNode *n, size_t *work)
{
    bool any = false;
    for (size_t i = 0; i < n->n_in; i++) {
        const IrTensor *t = n->in[i] ? kv_value(n->in[i]) : NULL;
        if (!n->in[i])
            continue;
        size_t numel = t ? kv_numel(t->dims, t->ndims) : SIZE_MAX;
        if (numel == SIZE_MAX)
            return false;
        *work += numel;
        any = true;
    }
    return any || !strcmp(n->op_type, "Constant");
}

/* Whether every output's inferred shape is static and small: known before
 * running, so that a Range or Tile of huge extent is never allocated;
 * adds their elements to *work. */
static bool kv_outputs_small(const IrNode *n, size_t *work)
{
    int64_t dims[KV_MAX_RANK];
    for (size_t i = 0; i < n->n_out; i++) {
        if (!n->out[i])
            continue;
        int r = kv_static_shape(n->out[i], dims, KV_MAX_RANK);
        size_t numel = r < 0 ? SIZE_MAX : kv_numel(dims, (size_t)r);
        if (numel == SIZE_MAX)
            return false;
        *work += numel;
    }
    return true;
}

/* Runs n on its known inputs through `run`; keeps the small tensor
 * outputs. */
static void kv_run(IrModel *m, IrNode *n, KvRunFn run)
{
    size_t work = 0;
    /* only ops whose work is linear in what they read and write (the
     * table's `cheap`): inference runs on every model it reads, hostile
     * ones included */
    if (!run || n->n_in > KV_MAX_IO || n->n_out > KV_MAX_IO ||
        !(os_op_flags(n->domain, n->op_type) & OS_F_CHEAP) ||
        !kv_inputs_known(n, &work) || !kv_outputs_small(n, &work) ||
        work > KV_MAX_WORK - kv_work)
        return;
    kv_work += work;
    const IrTensor *in[KV_MAX_IO] = {0};
    IrTensor *out[KV_MAX_IO] = {0};
    for (size_t i = 0; i < n->n_in; i++)
        in[i] = n->in[i] ? kv_value(n->in[i]) : NULL;
    if (run(m, n, in, out) == 0)
        for (size_t i = 0; i < n->n_out; i++) {
            IrValue *v = n->out[i];
            size_t numel = out[i] ? kv_numel(out[i]->dims, out[i]->ndims) : SIZE_MAX;
            if (v && numel != SIZE_MAX && !v->known) {
                v->known = out[i];
                out[i] = NULL;
            }
        }
    for (size_t i = 0; i < n->n_out; i++)
        ir_tensor_free(out[i]);
}

void kv_infer_node(IrModel *m, IrNode *n, KvRunFn run)
{
    if (!n || n->dead || !n->op_type || !kv_domain_ok(n->domain))
        return;
    bool constant_value = kv_constant_value(n) != NULL;
    if (!constant_value && !kv_shape_op(n) && kv_deterministic(m, n))
        kv_run(m, n, run);
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i])
            kv_from_symval(n->out[i]);
}
