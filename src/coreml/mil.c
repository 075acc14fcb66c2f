/*
 * mil.c - building and freeing a Core ML ML Program in memory (prefix
 * mil_); see mil.h. The package format lives elsewhere: this file knows
 * nothing of protobuf or files.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ir/ir.h"
#include "coreml/mil.h"

/* iOS release -> specificationVersion and MIL opset (coremltools'
 * target table; facts of the published format). */
const MilTarget mil_targets[] = {
    {"iOS15", 6, "CoreML5"},
    {"iOS16", 7, "CoreML6"},
    {"iOS17", 8, "CoreML7"},
    {"iOS18", 9, "CoreML8"},
    {"iOS26", 10, "CoreML9"},
};
const size_t mil_targets_n = sizeof mil_targets / sizeof mil_targets[0];

const MilTarget *mil_target_find(const char *name)
{
    for (size_t i = 0; name && i < mil_targets_n; i++)
        if (!strcasecmp(mil_targets[i].name, name))
            return &mil_targets[i];
    return NULL;
}

const MilTarget *mil_target_of_opset(const char *opset)
{
    for (size_t i = 0; opset && i < mil_targets_n; i++)
        if (!strcmp(mil_targets[i].opset, opset))
            return &mil_targets[i];
    return NULL;
}

/* ---- types and tensors ------------------------------------------------------ */

size_t mil_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case MIL_BOOL: case MIL_INT8: case MIL_UINT8: case MIL_INT4: case MIL_UINT1:
    case MIL_UINT2: case MIL_UINT3: case MIL_UINT4: case MIL_UINT6:
        return 1;
    case MIL_FP16: case MIL_BF16: case MIL_INT16: case MIL_UINT16:
        return 2;
    case MIL_FP32: case MIL_INT32: case MIL_UINT32:
        return 4;
    case MIL_FP64: case MIL_INT64: case MIL_UINT64:
        return 8;
    default:
        return 0;
    }
}

int mil_dtype_bits(int32_t dtype)
{
    switch (dtype) {
    case MIL_UINT1: return 1;
    case MIL_UINT2: return 2;
    case MIL_UINT3: return 3;
    case MIL_INT4: case MIL_UINT4: return 4;
    case MIL_UINT6: return 6;
    default: return (int)mil_dtype_size(dtype) * 8;
    }
}

const char *mil_dtype_name(int32_t dtype)
{
    switch (dtype) {
    case MIL_BOOL: return "bool";
    case MIL_STRING: return "string";
    case MIL_FP16: return "fp16";
    case MIL_FP32: return "fp32";
    case MIL_FP64: return "fp64";
    case MIL_BF16: return "bf16";
    case MIL_INT8: return "int8";
    case MIL_INT16: return "int16";
    case MIL_INT32: return "int32";
    case MIL_INT64: return "int64";
    case MIL_INT4: return "int4";
    case MIL_UINT8: return "uint8";
    case MIL_UINT16: return "uint16";
    case MIL_UINT32: return "uint32";
    case MIL_UINT64: return "uint64";
    case MIL_UINT1: return "uint1";
    case MIL_UINT2: return "uint2";
    case MIL_UINT3: return "uint3";
    case MIL_UINT4: return "uint4";
    case MIL_UINT6: return "uint6";
    default: return NULL;
    }
}

static int64_t *mil_dims_copy(int rank, const int64_t *dims)
{
    if (rank <= 0)
        return NULL;
    int64_t *d = mem_array((size_t)rank, sizeof *d);
    if (dims)
        memcpy(d, dims, (size_t)rank * sizeof *d);
    return d;
}

MilType mil_type(int32_t dtype, int rank, const int64_t *dims)
{
    return (MilType){.dtype = dtype, .rank = rank, .dims = mil_dims_copy(rank, dims)};
}

MilType mil_type_copy(const MilType *t)
{
    MilType c = *t;
    c.dims = mil_dims_copy(t->rank, t->dims);
    c.dim_names = NULL;
    if (t->dim_names && t->rank > 0) {
        c.dim_names = mem_array((size_t)t->rank, sizeof *c.dim_names);
        for (int i = 0; i < t->rank; i++)
            c.dim_names[i] = mem_strdup(t->dim_names[i]);
    }
    return c;
}

void mil_type_clear(MilType *t)
{
    if (t->dim_names)
        for (int i = 0; i < t->rank; i++)
            free(t->dim_names[i]);
    free(t->dim_names);
    free(t->dims);
    memset(t, 0, sizeof *t);
}

bool mil_tensor_numel(const MilTensor *t, uint64_t *n)
{
    uint64_t k = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && k > UINT64_MAX / (uint64_t)t->dims[i]))
            return false;
        k *= (uint64_t)t->dims[i];
    }
    *n = k;
    return true;
}

MilTensor *mil_tensor_new(int32_t dtype, int rank, const int64_t *dims, const void *data)
{
    MilTensor *t = mem_alloc(sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    t->dims = mil_dims_copy(rank, dims);
    uint64_t n = 0;
    size_t w = mil_dtype_size(dtype);
    if (w && mil_tensor_numel(t, &n) && n <= SIZE_MAX / w) {
        t->nbytes = (size_t)n * w;
        t->data = mem_alloc(t->nbytes ? t->nbytes : 1);
        if (data && t->nbytes)
            memcpy(t->data, data, t->nbytes);
    }
    return t;
}

MilTensor *mil_tensor_scalar_i32(int32_t v)
{
    return mil_tensor_new(MIL_INT32, 0, NULL, &v);
}

MilTensor *mil_tensor_scalar_f32(float v)
{
    return mil_tensor_new(MIL_FP32, 0, NULL, &v);
}

MilTensor *mil_tensor_scalar_bool(bool v)
{
    uint8_t b = v;
    return mil_tensor_new(MIL_BOOL, 0, NULL, &b);
}

MilTensor *mil_tensor_ints(const int32_t *v, size_t n)
{
    int64_t d = (int64_t)n;
    return mil_tensor_new(MIL_INT32, 1, &d, v);
}

MilTensor *mil_tensor_string(const char *s)
{
    MilTensor *t = mem_alloc(sizeof *t);
    t->dtype = MIL_STRING;
    t->strings = mem_alloc(sizeof *t->strings);
    t->strings[0] = mem_strdup(s);
    t->n_strings = 1;
    return t;
}

MilTensor *mil_tensor_copy(const MilTensor *t)
{
    if (!t)
        return NULL;
    MilTensor *c = mil_tensor_new(t->dtype, t->rank, t->dims, NULL);
    if (t->nbytes) {
        free(c->data);
        c->data = mem_alloc(t->nbytes);
        memcpy(c->data, t->data, t->nbytes);
        c->nbytes = t->nbytes;
    }
    if (t->n_strings) {
        c->strings = mem_array(t->n_strings, sizeof *c->strings);
        for (size_t i = 0; i < t->n_strings; i++)
            c->strings[i] = mem_strdup(t->strings[i]);
        c->n_strings = t->n_strings;
    }
    return c;
}

void mil_tensor_free(MilTensor *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_strings; i++)
        free(t->strings[i]);
    free(t->strings);
    free(t->dims);
    free(t->data);
    free(t);
}

/* ---- building ---------------------------------------------------------------- */

MilModel *mil_model_new(const MilTarget *t)
{
    MilModel *m = mem_alloc(sizeof *m);
    m->spec_version = t ? t->spec_version : 0;
    return m;
}

MilBlock *mil_block_new(void)
{
    return mem_alloc(sizeof(MilBlock));
}

MilFunction *mil_function_add(MilModel *m, const char *name, const char *opset)
{
    MilFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup(name);
    f->opset = mem_strdup(opset);
    f->block = mil_block_new();
    m->fn = mem_grow(m->fn, m->n_fn + 1, sizeof *m->fn);
    m->fn[m->n_fn++] = f;
    return f;
}

static void mil_named_add(MilNamedType **list, size_t *n, const char *name, const MilType *t)
{
    *list = mem_grow(*list, *n + 1, sizeof **list);
    (*list)[*n] = (MilNamedType){.name = mem_strdup(name), .type = mil_type_copy(t)};
    (*n)++;
}

void mil_function_input(MilFunction *f, const char *name, const MilType *t)
{
    mil_named_add(&f->in, &f->n_in, name, t);
}

MilOp *mil_op_add(MilBlock *b, const char *type, const char *name)
{
    MilOp *op = mem_alloc(sizeof *op);
    op->type = mem_strdup(type);
    op->name = mem_strdup(name);
    if (b->n_ops >= b->cap_ops) {   /* doubling: a 100k-op program is linear */
        b->cap_ops = b->n_ops < 8 ? 16 : 2 * b->n_ops;
        b->ops = mem_grow(b->ops, b->cap_ops, sizeof *b->ops);
    }
    b->ops[b->n_ops++] = op;
    return op;
}

/* The input `param` of op, made when absent. */
static MilInput *mil_op_param(MilOp *op, const char *param)
{
    for (size_t i = 0; i < op->n_in; i++)
        if (!strcmp(op->in[i].param, param))
            return &op->in[i];
    op->in = mem_grow(op->in, op->n_in + 1, sizeof *op->in);
    op->in[op->n_in] = (MilInput){.param = mem_strdup(param)};
    return &op->in[op->n_in++];
}

static void mil_arg_add(MilOp *op, const char *param, MilArg a)
{
    MilInput *in = mil_op_param(op, param);
    in->args = mem_grow(in->args, in->n_args + 1, sizeof *in->args);
    in->args[in->n_args++] = a;
}

void mil_op_in(MilOp *op, const char *param, const char *name)
{
    mil_arg_add(op, param, (MilArg){.name = mem_strdup(name)});
}

void mil_op_in_const(MilOp *op, const char *param, MilTensor *t)
{
    mil_arg_add(op, param, (MilArg){.value = t});
}

void mil_op_out(MilOp *op, const char *name, const MilType *t)
{
    mil_named_add(&op->out, &op->n_out, name, t);
}

MilOp *mil_const_add(MilBlock *b, const char *name, MilTensor *t)
{
    MilOp *op = mil_op_add(b, "const", name);
    MilType ty = mil_type(t->dtype, t->rank, t->dims);
    mil_op_out(op, name, &ty);
    mil_type_clear(&ty);
    op->val = t;
    return op;
}

void mil_block_output(MilBlock *b, const char *name)
{
    b->out = mem_grow(b->out, b->n_out + 1, sizeof *b->out);
    b->out[b->n_out++] = mem_strdup(name);
}

/* ---- lookups ------------------------------------------------------------------ */

MilFunction *mil_function_find(const MilModel *m, const char *name)
{
    for (size_t i = 0; i < m->n_fn; i++)
        if (m->fn[i]->name && name && !strcmp(m->fn[i]->name, name))
            return m->fn[i];
    return NULL;
}

const MilInput *mil_op_input(const MilOp *op, const char *param)
{
    for (size_t i = 0; i < op->n_in; i++)
        if (!strcmp(op->in[i].param, param))
            return &op->in[i];
    return NULL;
}

/* ---- freeing ------------------------------------------------------------------ */

static void mil_named_free(MilNamedType *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].name);
        mil_type_clear(&l[i].type);
    }
    free(l);
}

static void mil_block_free(MilBlock *b);

static void mil_op_free(MilOp *op)
{
    for (size_t i = 0; i < op->n_in; i++) {
        for (size_t k = 0; k < op->in[i].n_args; k++) {
            free(op->in[i].args[k].name);
            mil_tensor_free(op->in[i].args[k].value);
        }
        free(op->in[i].args);
        free(op->in[i].param);
    }
    free(op->in);
    mil_named_free(op->out, op->n_out);
    for (size_t i = 0; i < op->n_blocks; i++)
        mil_block_free(op->blocks[i]);
    free(op->blocks);
    mil_tensor_free(op->val);
    free(op->type);
    free(op->name);
    free(op);
}

static void mil_block_free(MilBlock *b)
{
    if (!b)
        return;
    mil_named_free(b->in, b->n_in);
    for (size_t i = 0; i < b->n_out; i++)
        free(b->out[i]);
    free(b->out);
    for (size_t i = 0; i < b->n_ops; i++)
        mil_op_free(b->ops[i]);
    free(b->ops);
    free(b);
}

static void mil_features_free(MilFeature *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].doc);
        mil_type_clear(&l[i].type);
        free(l[i].range_lo);
        free(l[i].range_hi);
    }
    free(l);
}

void mil_model_free(MilModel *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_fn; i++) {
        MilFunction *f = m->fn[i];
        free(f->name);
        free(f->opset);
        mil_named_free(f->in, f->n_in);
        mil_block_free(f->block);
        free(f);
    }
    free(m->fn);
    mil_features_free(m->in, m->n_in);
    mil_features_free(m->out, m->n_out);
    free(m->short_doc);
    for (size_t i = 0; i < m->n_meta; i++) {
        free(m->meta_keys[i]);
        free(m->meta_values[i]);
    }
    free(m->meta_keys);
    free(m->meta_values);
    free(m);
}

/* The MIL type of value `name` as the block declares it (an input or an
 * op output), or NULL. */
const MilType *mil_function_type(const MilFunction *fn, const char *name)
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
