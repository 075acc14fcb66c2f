/*
 * api.c - the public C library (prefix oc_); the contract is in
 * include/onnxconvert.h.
 *
 * A thin layer over the internal modules. It checks what the caller
 * passes (NULLs, sizes, ranges) before any of it reaches code that trusts
 * its input, turns IrError messages into the per-thread oc_error() text,
 * and keeps the rules the command line keeps: a model is checked before it
 * is converted or optimized, and a model a failed conversion or
 * optimization left half changed is only ever freed.
 */
#include "onnxconvert.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"
#include "passes/passes.h"
#include "analysis/check.h"
#include "convert/convert.h"
#include "eval/eval.h"
#include "analysis/infer.h"
#include "driver/info.h"
#include "ir/ir.h"
#include "analysis/irver.h"
#include "driver/job.h"
#include "io/load.h"
#include "schema/opschema.h"
#include "io/save.h"
#include "driver/targets.h"

/* The public header repeats the IR's element type codes (it must
 * stand alone); both are ONNX's TensorProto.DataType, and every one is
 * checked here to be the same. */
#define OC_SAME_CODE(t) _Static_assert((int)OC_##t == (int)IR_##t, #t " differs");
OC_SAME_CODE(FLOAT) OC_SAME_CODE(UINT8) OC_SAME_CODE(INT8)
OC_SAME_CODE(UINT16) OC_SAME_CODE(INT16) OC_SAME_CODE(INT32)
OC_SAME_CODE(INT64) OC_SAME_CODE(STRING) OC_SAME_CODE(BOOL)
OC_SAME_CODE(FLOAT16) OC_SAME_CODE(DOUBLE) OC_SAME_CODE(UINT32)
OC_SAME_CODE(UINT64) OC_SAME_CODE(COMPLEX64) OC_SAME_CODE(COMPLEX128)
OC_SAME_CODE(BFLOAT16) OC_SAME_CODE(FLOAT8E4M3FN) OC_SAME_CODE(FLOAT8E4M3FNUZ)
OC_SAME_CODE(FLOAT8E5M2) OC_SAME_CODE(FLOAT8E5M2FNUZ) OC_SAME_CODE(UINT4)
OC_SAME_CODE(INT4) OC_SAME_CODE(FLOAT4E2M1) OC_SAME_CODE(FLOAT8E8M0)
OC_SAME_CODE(UINT2) OC_SAME_CODE(INT2)

struct oc_model {
    IrModel *ir;
    /* oc_set_eval_limits and oc_set_eval_seed (zeros: the defaults) */
    EvOptions limits;
    /* NULL, or the name of the call that failed halfway through changing
     * the IR: such a model must not be saved, evaluated or changed again. */
    const char *broken;
    /* the checker accepted the model as it is now: oc_evaluate runs only
     * such a model, and checks once, not at every call */
    bool valid;
    /* the file it was loaded from (NULL: from memory): oc_run_command's
     * --verify takes the inputs of the test case the file sits in, and
     * external data is read again from its folder */
    char *path;
};

/* ---- errors ---------------------------------------------------------- */

/* Room for an IrError message and a prefix naming the call. */
static _Thread_local char oc_msg[sizeof(((IrError *)0)->msg) + 128];

static int oc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int oc_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(oc_msg, sizeof oc_msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* The internal modules' messages already name the file, node or rule. */
static int oc_fail_ir(const IrError *err)
{
    return oc_fail("%s", err->msg);
}

static int oc_null(const char *fn, const char *what)
{
    return oc_fail("%s: %s is NULL", fn, what);
}

const char *oc_error(void)
{
    return oc_msg;
}

/* 0 when m may be used by `fn`; else -1 saying why. */
static int oc_usable(const oc_model *m, const char *fn)
{
    if (!m)
        return oc_null(fn, "the model");
    if (m->broken)
        return oc_fail("%s: a failed %s left this model half changed; it can only "
                       "be freed", fn, m->broken);
    return 0;
}

/* ---- the library ------------------------------------------------------ */

/* The lookup tables inference, the evaluator and the converter build on
 * first use are built here once, so that threads never race to build
 * them. Every model comes through a load, which calls oc_init. */
static pthread_once_t oc_once = PTHREAD_ONCE_INIT;

static void oc_build_tables(void)
{
    inf_init();
    ev_init();
    ad_init();
}

static void oc_init(void)
{
    pthread_once(&oc_once, oc_build_tables);
}

const char *oc_version(void)
{
    return ONNXCONVERT_VERSION;
}

int64_t oc_newest_opset(const char *domain)
{
    int max = os_domain_max(domain);
    if (max < 0)
        return oc_fail("oc_newest_opset: the operator table has no domain '%s'",
                       domain);
    return max;
}

int64_t oc_newest_ir_version(void)
{
    return IRV_NEWEST;
}

/* ---- loading and freeing ---------------------------------------------- */

/* Hands out a loaded IR model as *out (rc is the loader's status). */
static int oc_wrap(int rc, IrModel *ir, const IrError *err, oc_model **out)
{
    if (rc < 0)
        return oc_fail_ir(err);
    oc_model *m = mem_alloc(sizeof *m);
    m->ir = ir;
    *out = m;
    return 0;
}

int oc_load_file(const char *path, oc_model **out)
{
    if (!out)
        return oc_null(__func__, "out");
    *out = NULL;
    if (!path)
        return oc_null(__func__, "path");
    oc_init();
    IrModel *ir = NULL;
    IrError err;
    int rc = load_model_file(path, NULL, &ir, &err);
    if (oc_wrap(rc, ir, &err, out) < 0)
        return -1;
    (*out)->path = mem_strdup(path);
    return 0;
}

int oc_load_memory(const void *data, size_t size, oc_model **out)
{
    if (!out)
        return oc_null(__func__, "out");
    *out = NULL;
    if (!data)
        return oc_null(__func__, "data");
    if (size == 0)
        return oc_fail("oc_load_memory: the buffer is empty");
    oc_init();
    IrModel *ir = NULL;
    IrError err;
    /* No folder: a model with external data is refused by the loader. */
    int rc = load_model_buffer(data, size, NULL, "memory", NULL, &ir, &err);
    return oc_wrap(rc, ir, &err, out);
}

void oc_model_free(oc_model *m)
{
    if (!m)
        return;
    ir_model_free(m->ir);
    free(m->path);
    free(m);
}

/* ---- what a model is -------------------------------------------------- */

int64_t oc_model_opset(const oc_model *m, const char *domain)
{
    if (oc_usable(m, __func__) < 0)
        return -1;
    int64_t v = ir_model_opset(m->ir, domain ? domain : "");
    return v > 0 ? v : 0;
}

int64_t oc_model_ir_version(const oc_model *m)
{
    if (oc_usable(m, __func__) < 0)
        return -1;
    return m->ir->has_ir_version && m->ir->ir_version > 0 ? m->ir->ir_version : 0;
}

size_t oc_model_node_count(const oc_model *m)
{
    if (oc_usable(m, __func__) < 0)
        return 0;
    return opt_count_nodes(m->ir);
}

/* ---- checking, converting, optimizing --------------------------------- */

/* 0 when the checker accepts ir; else -1 with its first finding, which
 * starts with the rule's name (as `onnx-convert check` prints it).
 * *defects: the tolerated defects it found (tolerate.h). */
static int oc_require_valid(IrModel *ir, unsigned *defects)
{
    const char *rule;
    char msg[1024];
    if (job_validate(ir, &rule, msg, sizeof msg, defects) < 0)
        return oc_fail("%s", msg);
    return 0;
}

/* Before ir changes or runs: what `convert` and `optimize` require (job.h:
 * its nodes in topological order, the checker, then the defects it
 * tolerates repaired); -1 on a cycle or a finding. */
static int oc_sort_and_check(IrModel *ir)
{
    const char *rule;
    char msg[1024];
    if (job_prepare(ir, &rule, msg, sizeof msg) < 0)
        return oc_fail("%s", msg);
    return 0;
}

int oc_check(oc_model *m)
{
    if (oc_usable(m, __func__) < 0)
        return -1;
    unsigned defects = 0;
    int rc = oc_require_valid(m->ir, &defects);
    /* a model with tolerated defects is valid, but is repaired (by
     * oc_sort_and_check) before it runs */
    m->valid = rc == 0 && !defects;
    return rc;
}

/* 0 when v is 0 (keep) or in 1..max; else -1 naming the argument. */
static int oc_range(const char *fn, const char *what, int64_t v, int64_t max)
{
    if (v >= 0 && v <= max)
        return 0;
    return oc_fail("%s: %s %lld is not in 1..%lld (0 keeps the model's)", fn, what,
                   (long long)v, (long long)max);
}

/* An ir_version the converter cannot write (below 3, or below what the
 * target opsets need). */
static int oc_ir_check(const char *fn, const CvOptions *o)
{
    IrError err;
    if (cv_options_check(o, &err) < 0)
        return oc_fail("%s: %s", fn, err.msg);
    return 0;
}

/* oc_convert and oc_convert_ex; fn names the call in messages. Arguments
 * and the checker are settled before the converter touches the model, so
 * that only a refusal of the conversion itself breaks it. */
static int oc_convert_as(const char *fn, oc_model *m, const CvOptions *o)
{
    if (oc_usable(m, fn) < 0 ||
        oc_range(fn, "opset", o->opset, os_domain_max("")) < 0 ||
        oc_range(fn, "opset_ml", o->opset_ml, os_domain_max("ai.onnx.ml")) < 0 ||
        oc_range(fn, "ir_version", o->ir_version, IRV_NEWEST) < 0 ||
        oc_ir_check(fn, o) < 0 || oc_sort_and_check(m->ir) < 0)
        return -1;
    CvReport r = {0};
    IrError err;
    m->valid = false;   /* changed: checked again before it runs */
    int rc = cv_convert(m->ir, o, &r, &err);
    cv_report_free(&r);
    if (rc < 0) {
        m->broken = fn;
        return oc_fail_ir(&err);
    }
    return 0;
}

int oc_convert(oc_model *m, int64_t opset)
{
    if (opset == 0)
        return oc_fail("oc_convert: opset 0: give the opset to convert to");
    CvOptions o = {.opset = opset};
    return oc_convert_as(__func__, m, &o);
}

int oc_convert_ex(oc_model *m, int64_t opset, int64_t opset_ml, int64_t ir_version)
{
    CvOptions o = {.opset = opset, .opset_ml = opset_ml, .ir_version = ir_version};
    return oc_convert_as(__func__, m, &o);
}

int oc_expand(oc_model *m, const char *ops)
{
    IrError err;
    if (!ops || !ops[0])
        return oc_fail("oc_expand: no op to expand");
    if (cv_expand_check(ops, &err) < 0)
        return oc_fail("oc_expand: %s", err.msg);
    CvOptions o = {.expand = ops};
    return oc_convert_as(__func__, m, &o);
}

int oc_set_input_shape(oc_model *m, const char *spec)
{
    if (oc_usable(m, __func__) < 0)
        return -1;
    if (!spec)
        return oc_fail("oc_set_input_shape: no spec (NAME=DIMS)");
    IrError err;
    if (opt_set_input_shape(m->ir, spec, &err) < 0)
        return oc_fail_ir(&err);
    m->valid = false;   /* changed: checked again before it runs */
    return 0;
}

int oc_optimize(oc_model *m, const char *passes)
{
    if (oc_usable(m, __func__) < 0 || oc_sort_and_check(m->ir) < 0)
        return -1;
    OptOptions o = {.passes = passes};
    OptStats st;
    m->valid = false;   /* changed: checked again before it runs */
    IrError err;
    int rc = opt_optimize(m->ir, &o, &st, &err);
    /* A failure before the first round (an unknown pass name) changed
     * nothing; one during a round may have. */
    bool ran = st.iterations > 0;
    opt_stats_free(&st);
    if (rc < 0) {
        if (ran)
            m->broken = __func__;
        return oc_fail_ir(&err);
    }
    tol_fit_ir(m->ir, NULL);   /* IR 3 lists its initializers as inputs */
    return 0;
}

/* ---- evaluating -------------------------------------------------------- */

size_t oc_elem_size(int32_t elem_type)
{
    switch (elem_type) {
    /* Strings are not dense, and the evaluator keeps 4- and 2-bit
     * elements one per byte, which is no layout a caller would expect. */
    case OC_STRING: case OC_UINT4: case OC_INT4: case OC_FLOAT4E2M1:
    case OC_UINT2: case OC_INT2:
        return 0;
    default:
        return ev_dtype_size(elem_type);
    }
}

/* The bytes of a tensor of `name`: its element size times its dims (a
 * zero dim makes it empty whatever the others are), at most
 * EV_MAX_TENSOR_BYTES. -1 naming the tensor on a negative dim, an
 * unsupported type, a rank past EV_MAX_RANK or an overflow. */
static int oc_tensor_bytes(const char *name, int32_t elem_type, size_t rank,
                           const int64_t *dims, size_t *bytes)
{
    size_t n = oc_elem_size(elem_type);
    const char *tname = ir_dtype_name(elem_type);
    if (!n)
        return oc_fail("tensor '%s': element type %s is not one oc_evaluate takes "
                       "(dense numeric and bool tensors only)", name,
                       tname ? tname : "(unknown code)");
    if (rank > EV_MAX_RANK)
        return oc_fail("tensor '%s': rank %zu is past the limit of %d", name, rank,
                       EV_MAX_RANK);
    if (rank && !dims)
        return oc_fail("tensor '%s': dims is NULL for rank %zu", name, rank);
    bool empty = false;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return oc_fail("tensor '%s': dim %zu is negative (%lld)", name, i,
                           (long long)dims[i]);
        empty = empty || dims[i] == 0;
    }
    for (size_t i = 0; i < rank && !empty; i++)
        if ((uint64_t)dims[i] > SIZE_MAX || !mem_mul_size(n, (size_t)dims[i], &n))
            return oc_fail("tensor '%s': its size overflows", name);
    if (empty)
        n = 0;
    if (n > EV_MAX_TENSOR_BYTES)
        return oc_fail("tensor '%s': %zu bytes is past the limit of %llu", name, n,
                       (unsigned long long)EV_MAX_TENSOR_BYTES);
    *bytes = n;
    return 0;
}

/* Fills t with a copy of name, dims and `bytes` bytes of data (NULL data:
 * zeros). The copies are malloc'ed, since sizes come from models and
 * callers; -1 when memory runs out, with t partly filled for
 * oc_tensors_free. */
static int oc_tensor_fill(oc_tensor *t, const char *name, int32_t elem_type,
                          size_t rank, const int64_t *dims, const void *data,
                          size_t bytes)
{
    t->elem_type = elem_type;
    t->rank = rank;
    t->size = bytes;
    t->name = strdup(name);
    t->dims = malloc(rank ? rank * sizeof *dims : 1);
    t->data = data ? malloc(bytes ? bytes : 1) : calloc(bytes ? bytes : 1, 1);
    if (!t->name || !t->dims || !t->data)
        return oc_fail("tensor '%s': out of memory for %zu bytes", name, bytes);
    if (rank)
        memcpy(t->dims, dims, rank * sizeof *dims);
    if (data && bytes)
        memcpy(t->data, data, bytes);
    return 0;
}

/* A zero tensor shaped as graph input vi declares (open dims 1). */
static int oc_input_zeros(const IrValueInfo *vi, oc_tensor *t)
{
    const char *name = vi->value->name;
    const IrType *ty = vi->type;
    if (!ty || ty->kind != IR_TYPE_TENSOR || !ty->has_elem_type)
        return oc_fail("oc_model_inputs: input '%s' is not declared as a tensor with "
                       "an element type (oc_evaluate takes dense tensors only)", name);
    if (!ty->shape)
        return oc_fail("oc_model_inputs: input '%s' declares no shape", name);
    size_t rank = ty->shape->rank;
    if (rank > EV_MAX_RANK)
        return oc_fail("oc_model_inputs: input '%s': rank %zu is past the limit of %d",
                       name, rank, EV_MAX_RANK);
    int64_t dims[EV_MAX_RANK];
    for (size_t i = 0; i < rank; i++) {
        const IrDim *d = &ty->shape->dims[i];
        dims[i] = d->kind == IR_DIM_VALUE ? d->value : 1;
    }
    size_t bytes;
    if (oc_tensor_bytes(name, ty->elem_type, rank, dims, &bytes) < 0)
        return -1;
    return oc_tensor_fill(t, name, ty->elem_type, rank, dims, NULL, bytes);
}

int oc_model_inputs(const oc_model *m, oc_tensor **inputs, size_t *n_inputs)
{
    if (!inputs || !n_inputs)
        return oc_null(__func__, inputs ? "n_inputs" : "inputs");
    *inputs = NULL;
    *n_inputs = 0;
    if (oc_usable(m, __func__) < 0)
        return -1;
    if (!m->ir->graph)
        return oc_fail("oc_model_inputs: the model has no graph");
    IrValueInfo **feeds;
    size_t n = ev_model_feeds(m->ir, &feeds);
    oc_tensor *t = n ? mem_array(n, sizeof *t) : NULL;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++)
        rc = oc_input_zeros(feeds[k], &t[k]);
    free(feeds);
    if (rc < 0) {
        oc_tensors_free(t, n);
        return -1;
    }
    *inputs = t;
    *n_inputs = n;
    return 0;
}

/* The one tensor of `inputs` named `name`, or NULL saying why. */
static const oc_tensor *oc_find_input(const oc_tensor *inputs, size_t n,
                                      const char *name)
{
    const oc_tensor *hit = NULL;
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(inputs[i].name, name)) {
            hit = &inputs[i];
            count++;
        }
    if (count == 1)
        return hit;
    if (count == 0)
        oc_fail("oc_evaluate: input '%s' was not given (inputs are matched by name)",
                name);
    else
        oc_fail("oc_evaluate: input '%s' was given %zu times", name, count);
    return NULL;
}

/* An evaluator value holding a copy of caller tensor t, or NULL. */
static EvValue *oc_to_value(const oc_tensor *t)
{
    size_t bytes;
    if (oc_tensor_bytes(t->name, t->elem_type, t->rank, t->dims, &bytes) < 0)
        return NULL;
    if (t->size != bytes) {
        oc_fail("oc_evaluate: input '%s': %zu bytes given, its dims and element type "
                "take %zu", t->name, t->size, bytes);
        return NULL;
    }
    if (bytes && !t->data) {
        oc_fail("oc_evaluate: input '%s': data is NULL", t->name);
        return NULL;
    }
    IrError err;
    EvValue *v = ev_tensor_new(t->elem_type, t->rank, t->dims, &err);
    if (!v) {
        oc_fail("oc_evaluate: input '%s': %s", t->name, err.msg);
        return NULL;
    }
    if (bytes)
        memcpy(v->data, t->data, bytes);
    /* Kernels read a bool as 0 or 1, as the evaluator itself stores it. */
    if (t->elem_type == OC_BOOL)
        for (size_t i = 0; i < v->numel; i++)
            ((uint8_t *)v->data)[i] = ((uint8_t *)v->data)[i] != 0;
    return v;
}

/* Evaluator values for the model's feeds (n of them, in feeds' order),
 * from the caller's inputs matched by name; -1 with the reason. */
static int oc_bind_inputs(IrValueInfo **feeds, size_t n, const oc_tensor *inputs,
                          size_t n_inputs, EvValue **in)
{
    if (n_inputs != n)
        return oc_fail("oc_evaluate: the model has %zu inputs to feed, %zu were given",
                       n, n_inputs);
    for (size_t i = 0; i < n_inputs; i++)
        if (!inputs[i].name)
            return oc_fail("oc_evaluate: inputs[%zu] has no name", i);
    for (size_t k = 0; k < n; k++) {
        const oc_tensor *t = oc_find_input(inputs, n_inputs, feeds[k]->value->name);
        if (!t || !(in[k] = oc_to_value(t)))
            return -1;
    }
    return 0;
}

/* Copies evaluator output v (graph output `name`) into t. */
static int oc_from_value(const EvValue *v, const char *name, oc_tensor *t)
{
    if (!v || v->kind != EV_TENSOR)
        return oc_fail("oc_evaluate: output '%s' is not a tensor (oc_evaluate returns "
                       "dense tensors only)", name);
    size_t bytes;
    if (oc_tensor_bytes(name, v->dtype, v->rank, v->dims, &bytes) < 0)
        return -1;
    return oc_tensor_fill(t, name, v->dtype, v->rank, v->dims, v->data, bytes);
}

/* The caller's tensors for the n values of a run. */
static int oc_outputs(const IrGraph *g, EvValue **out, size_t n, oc_tensor **res)
{
    oc_tensor *t = n ? mem_array(n, sizeof *t) : NULL;
    for (size_t i = 0; i < n; i++) {
        const IrValueInfo *vi = g->outputs.p[i];
        if (oc_from_value(out[i], vi->value->name, &t[i]) < 0) {
            oc_tensors_free(t, n);
            return -1;
        }
    }
    *res = t;
    return 0;
}

/* 0 when m may run (fn names the call): usable, with a graph, and
 * accepted by the checker (checked once, until the model changes). */
static int oc_runnable(oc_model *m, const char *fn)
{
    if (oc_usable(m, fn) < 0)
        return -1;
    if (!m->ir->graph)
        return oc_fail("%s: the model has no graph", fn);
    /* the evaluator runs only what the checker accepts */
    if (!m->valid && oc_sort_and_check(m->ir) < 0) {
        char why[sizeof oc_msg];
        memcpy(why, oc_msg, sizeof why);
        return oc_fail("%s: %s", fn, why);
    }
    m->valid = true;
    return 0;
}

int oc_evaluate(oc_model *m, const oc_tensor *inputs, size_t n_inputs,
                oc_tensor **outputs, size_t *n_outputs)
{
    if (!outputs || !n_outputs)
        return oc_null(__func__, outputs ? "n_outputs" : "outputs");
    *outputs = NULL;
    *n_outputs = 0;
    if (oc_usable(m, __func__) < 0)
        return -1;
    if (n_inputs && !inputs)
        return oc_null(__func__, "inputs");
    if (oc_runnable(m, __func__) < 0)
        return -1;
    IrValueInfo **feeds;
    size_t n = ev_model_feeds(m->ir, &feeds);
    EvValue **in = mem_array(n + 1, sizeof *in);
    EvValue **out = NULL;
    size_t n_out = 0;
    IrError err;
    int rc = oc_bind_inputs(feeds, n, inputs, n_inputs, in);
    if (rc == 0 && (rc = ev_model_run(m->ir, &m->limits, n, in, &out, &n_out, &err)) < 0)
        oc_fail_ir(&err);
    if (rc == 0)
        rc = oc_outputs(m->ir->graph, out, n_out, outputs);
    if (rc == 0)
        *n_outputs = n_out;
    ev_values_free(in, n);
    ev_values_free(out, n_out);
    free(feeds);
    return rc;
}

/* ---- evaluating serialized values ------------------------------------- */

/* -1 naming the first buffer without a name, with NULL bytes for a
 * non-zero size, or with a name no feed has (an initializer's, or none);
 * then the one buffer per feed, in feeds' order, into by[]. */
static int oc_match_buffers(IrValueInfo **feeds, size_t n, const oc_buffer *b,
                            size_t nb, const oc_buffer **by)
{
    for (size_t i = 0; i < nb; i++) {
        if (!b[i].name)
            return oc_fail("oc_evaluate_pb: inputs[%zu] has no name", i);
        if (b[i].size && !b[i].data)
            return oc_fail("oc_evaluate_pb: input '%s': data is NULL for %zu bytes",
                           b[i].name, b[i].size);
        size_t k = 0;
        while (k < n && strcmp(feeds[k]->value->name, b[i].name))
            k++;
        if (k == n)
            return oc_fail("oc_evaluate_pb: input '%s' is not an input of the model "
                           "to feed (no graph input without an initializer has that "
                           "name)", b[i].name);
    }
    for (size_t k = 0; k < n; k++) {
        const char *name = feeds[k]->value->name;
        size_t count = 0;
        for (size_t i = 0; i < nb; i++)
            if (!strcmp(b[i].name, name)) {
                by[k] = &b[i];
                count++;
            }
        if (count != 1)
            return count ? oc_fail("oc_evaluate_pb: input '%s' was given %zu times",
                                   name, count)
                         : oc_fail("oc_evaluate_pb: input '%s' was not given (inputs "
                                   "are matched by name)", name);
    }
    return 0;
}

/* Decodes each feed's buffer as its declared type into in[]. */
static int oc_decode_feeds(IrValueInfo **feeds, size_t n, const oc_buffer **by,
                           EvValue **in)
{
    for (size_t k = 0; k < n; k++) {
        char what[300];
        snprintf(what, sizeof what, "input '%s'", feeds[k]->value->name);
        IrError err;
        if (ev_value_read_mem(by[k]->data, by[k]->size, feeds[k]->type, what, &in[k],
                              &err) < 0)
            return oc_fail("oc_evaluate_pb: %s", err.msg);
    }
    return 0;
}

/* The caller's buffers for the n values of a run, each named after its
 * graph output. */
static int oc_encode_outputs(const IrGraph *g, EvValue **out, size_t n,
                             oc_buffer **res)
{
    oc_buffer *b = mem_array(n + 1, sizeof *b);
    for (size_t i = 0; i < n; i++) {
        const IrValueInfo *vi = g->outputs.p[i];
        const char *name = vi->value->name;
        uint8_t *data;
        IrError err;
        if (!out[i]) {
            oc_buffers_free(b, n);
            return oc_fail("oc_evaluate_pb: output '%s' was not computed", name);
        }
        if (ev_value_write_mem(out[i], name, &data, &b[i].size, &err) < 0) {
            oc_buffers_free(b, n);
            return oc_fail("oc_evaluate_pb: output '%s': %s", name, err.msg);
        }
        b[i].data = data;
        b[i].name = mem_strdup(name);
    }
    *res = b;
    return 0;
}

int oc_evaluate_pb(oc_model *m, const oc_buffer *inputs, size_t n_inputs,
                   oc_buffer **outputs, size_t *n_outputs)
{
    if (!outputs || !n_outputs)
        return oc_null(__func__, outputs ? "n_outputs" : "outputs");
    *outputs = NULL;
    *n_outputs = 0;
    if (n_inputs && !inputs)
        return oc_null(__func__, "inputs");
    if (oc_runnable(m, __func__) < 0)
        return -1;
    IrValueInfo **feeds;
    size_t n = ev_model_feeds(m->ir, &feeds);
    const oc_buffer **by = mem_array(n + 1, sizeof *by);
    EvValue **in = mem_array(n + 1, sizeof *in);
    EvValue **out = NULL;
    size_t n_out = 0;
    IrError err;
    int rc = oc_match_buffers(feeds, n, inputs, n_inputs, by);
    if (rc == 0)
        rc = oc_decode_feeds(feeds, n, by, in);
    if (rc == 0 && (rc = ev_model_run(m->ir, &m->limits, n, in, &out, &n_out, &err)) < 0)
        oc_fail_ir(&err);
    if (rc == 0)
        rc = oc_encode_outputs(m->ir->graph, out, n_out, outputs);
    if (rc == 0)
        *n_outputs = n_out;
    ev_values_free(in, n);
    ev_values_free(out, n_out);
    free(by);
    free(feeds);
    return rc;
}

void oc_buffers_free(oc_buffer *b, size_t n)
{
    if (!b)
        return;
    for (size_t i = 0; i < n; i++) {
        free(b[i].name);
        free(b[i].data);
    }
    free(b);
}

int oc_set_eval_seed(oc_model *m, uint64_t seed)
{
    if (oc_usable(m, __func__) < 0)
        return -1;
    m->limits.seed = seed;
    return 0;
}

int oc_set_eval_limits(oc_model *m, uint64_t max_memory, uint64_t max_steps,
                       double timeout_seconds)
{
    if (oc_usable(m, __func__) < 0)
        return -1;
    if (!(timeout_seconds >= 0))
        return oc_fail("oc_set_eval_limits: the timeout must be 0 or more seconds");
    m->limits.max_memory = max_memory;
    m->limits.max_steps = max_steps;
    m->limits.timeout = timeout_seconds;
    return 0;
}

void oc_tensors_free(oc_tensor *t, size_t n)
{
    if (!t)
        return;
    for (size_t i = 0; i < n; i++) {
        free(t[i].name);
        free(t[i].dims);
        free(t[i].data);
    }
    free(t);
}

/* ---- saving ------------------------------------------------------------ */

int oc_save_file(const oc_model *m, const char *path)
{
    if (oc_usable(m, __func__) < 0)
        return -1;
    if (!path)
        return oc_null(__func__, "path");
    IrError err;
    return save_model_file(m->ir, path, NULL, &err) < 0 ? oc_fail_ir(&err) : 0;
}

int oc_save_memory(const oc_model *m, void **data, size_t *size)
{
    if (!data || !size)
        return oc_null(__func__, data ? "size" : "data");
    *data = NULL;
    *size = 0;
    if (oc_usable(m, __func__) < 0)
        return -1;
    uint8_t *buf;
    IrError err;
    if (save_model_buffer(m->ir, &buf, size, &err) < 0)
        return oc_fail_ir(&err);
    *data = buf;
    return 0;
}

void oc_free(void *p)
{
    free(p);
}

/* ---- the command line's commands and reports ---------------------------- */

/* The name of a model in messages and reports: its file, or "memory". */
static const char *oc_label(const oc_model *m)
{
    return m->path ? m->path : "memory";
}

/* A JobInput from which the stages that load the model again (--verify's
 * original, each target of info --targets) get m as it is now: its bytes
 * (freed with oc_input_free), external data from its file's folder. */
static int oc_input(const oc_model *m, JobInput *in)
{
    *in = (JobInput){.path = oc_label(m), .file = m->path != NULL};
    IrError err;
    uint8_t *buf;
    if (save_model_buffer(m->ir, &buf, &in->len, &err) < 0)
        return oc_fail_ir(&err);
    in->buf = buf;
    if (m->path) {
        const char *slash = strrchr(m->path, '/');
        char *dir = mem_strdup(slash ? m->path : ".");
        if (slash)
            dir[slash - m->path == 0 ? 1 : slash - m->path] = '\0';
        in->dir = dir;
    }
    return 0;
}

static void oc_input_free(JobInput *in)
{
    free((void *)in->buf);
    free((void *)in->dir);
}

/* Writes a JSON document with write(j, arg) into a new string *out (free
 * with oc_free); -1 when memory runs out. */
static int oc_json_string(char **out, void (*write)(Js *, const void *), const void *arg)
{
    size_t len;
    FILE *f = open_memstream(out, &len);
    if (!f)
        return oc_fail("out of memory writing a report");
    Js j;
    js_init(&j, f, 0);
    write(&j, arg);
    fputc('\n', f);
    if (fclose(f) != 0) {
        free(*out);
        *out = NULL;
        return oc_fail("out of memory writing a report");
    }
    return 0;
}

static void oc_write_report(Js *j, const void *r)
{
    job_json(j, r);
}

/* Parses the command's words into o; -1 naming the bad one. */
static int oc_command_args(JobOptions *o, const char *const *args, size_t n)
{
    char why[5000];
    for (size_t i = 0; i < n; i++)
        if (!args[i])
            return oc_fail("oc_run_command: argument %zu is NULL", i);
    for (size_t i = 0; i < n; i++) {
        int got = job_parse_arg(o, args, &i, n, why, sizeof why);
        if (got < 0)
            return oc_fail("oc_run_command: %s: %s", o->command, why);
        if (got == 0)
            return oc_fail("oc_run_command: %s: unknown or incomplete option '%s' (the "
                           "options of `onnx-convert %s --help` but -o, --out-dir, -j, "
                           "--json, --stats and --external-*)", o->command, args[i],
                           o->command);
    }
    if (job_options_check(o, why, sizeof why) < 0)
        return oc_fail("oc_run_command: %s: %s", o->command, why);
    /* the model handle holds ONNX: a package is the command line's to
     * write (onnx-convert convert IN -o OUT.mlpackage) */
    if (o->to_coreml)
        return oc_fail("oc_run_command: %s: --to coreml writes a Core ML package, which an "
                       "oc_model cannot hold; use the command line (onnx-convert convert "
                       "IN.onnx -o OUT.mlpackage)", o->command);
    /* an unknown pass is the caller's mistake, refused before anything
     * runs, as oc_optimize refuses it (the command line reports it as the
     * optimize stage's failure) */
    IrError err;
    if (o->opt.passes && opt_passes_check(o->opt.passes, &err) < 0)
        return oc_fail("oc_run_command: %s: %s", o->command, err.msg);
    return 0;
}

/* Whether a job that failed at stage may have changed the model: every
 * stage after the checker accepted it (sorting before does not change
 * what it computes). */
static bool oc_stage_changes(const char *stage)
{
    return strcmp(stage, dg_stage_name(DG_STAGE_CHECK)) &&
           strcmp(stage, dg_stage_name(DG_STAGE_LOAD));
}

int oc_run_command(oc_model *m, const char *command, const char *const *args,
                   size_t n_args, char **report)
{
    if (report)
        *report = NULL;
    if (!command)
        return oc_null(__func__, "command");
    if (oc_usable(m, __func__) < 0)
        return -1;
    if (strcmp(command, "convert") && strcmp(command, "optimize"))
        return oc_fail("oc_run_command: the command is convert or optimize, not '%s'", command);
    if (n_args && !args)
        return oc_null(__func__, "args");
    JobOptions o = {.command = command, .optimize = !strcmp(command, "optimize")};
    JobInput in;
    if (oc_command_args(&o, args, n_args) < 0 || oc_input(m, &in) < 0)
        return -1;
    JobReport r;
    m->valid = false;   /* changed: checked again before it runs */
    int rc = job_convert_model(&o, &in, m->ir, &r);
    oc_input_free(&in);
    if (rc < 0 && oc_stage_changes(r.stage))
        m->broken = __func__;
    if (rc < 0)
        oc_fail("%s", r.msg);
    if (report && oc_json_string(report, oc_write_report, &r) < 0)
        rc = -1;
    job_report_free(&r);
    return rc;
}

/* The start of a report call: report set to NULL, m usable. */
static int oc_report_start(oc_model *m, char **report, const char *fn)
{
    if (!report)
        return oc_null(fn, "report");
    *report = NULL;
    return oc_usable(m, fn);
}

int oc_check_report(oc_model *m, char **report)
{
    if (oc_report_start(m, report, __func__) < 0)
        return -1;
    JobReport r;
    int rc = job_check_model(oc_label(m), m->ir, false, &r);
    m->valid = rc == 0 && !r.defects;
    if (rc < 0)
        oc_fail("%s", r.msg);
    if (oc_json_string(report, oc_write_report, &r) < 0)
        rc = -1;
    job_report_free(&r);
    return rc;
}

static void oc_write_info(Js *j, const void *arg)
{
    const oc_model *m = arg;
    info_json(j, m->ir, oc_label(m));
}

int oc_info_report(oc_model *m, char **report)
{
    if (oc_report_start(m, report, __func__) < 0)
        return -1;
    /* inferred types show beside the declared ones, as `info` shows them;
     * a model inference refuses is still described */
    IrError err;
    InfOptions proving = {.use_value_info = true, .run = ev_prove_node};
    if (inf_model(m->ir, &proving, &err) < 0)
        ir_graph_clear_inferred(m->ir->graph);
    return oc_json_string(report, oc_write_info, m);
}

typedef struct OcTargets {
    const JobInput *in;
    int64_t own[TG_N], ir;
} OcTargets;

static void oc_write_targets(Js *j, const void *arg)
{
    const OcTargets *t = arg;
    tg_json(j, t->in, t->own, t->ir);
}

int oc_targets_report(oc_model *m, char **report)
{
    if (oc_report_start(m, report, __func__) < 0)
        return -1;
    JobInput in;
    if (oc_input(m, &in) < 0)
        return -1;
    OcTargets t = {.in = &in, .ir = oc_model_ir_version(m)};
    for (size_t d = 0; d < TG_N; d++)
        t.own[d] = ir_model_opset(m->ir, tg_domains[d].domain);
    int rc = oc_json_string(report, oc_write_targets, &t);
    oc_input_free(&in);
    return rc;
}
