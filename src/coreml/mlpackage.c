/*
 * mlpackage.c - writing a MilModel as an .mlpackage folder (prefix mlp_);
 * the reading half is mlpackage_read.c, the manifest's JSON
 * mlpackage_manifest.c. See mlpackage.h.
 *
 * Writing builds the whole Model message first (its pieces in an arena
 * freed in one call, strings borrowed from the MilModel), deciding on the
 * way which constants go to weight.bin and at which offsets, then writes
 * the three files into a new folder beside the target and moves it in.
 */
/* nftw */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "coreml.pb-c.h"
#include "coreml/mlpackage.h"
#include "coreml/mlpackage_int.h"

/* ---- facts of the blob file (MIL blob storage, version 2) ---------------- */

/* The blob file's element type codes per MIL dtype, and the first
 * specification version at which coremltools stores that dtype in the
 * blob file (the others stay immediate). MLP_NEVER: readable, never
 * written there (coremltools does not either). */
#define MLP_NEVER 1000
static const struct {
    int32_t mil;
    uint32_t code;
    int since_spec;
} mlp_blob_types[] = {
    {MIL_FP16, 1, 0},   {MIL_FP32, 2, 0},    {MIL_UINT8, 3, 0},
    {MIL_INT8, 4, 0},   {MIL_BF16, 5, MLP_NEVER},
    {MIL_INT16, 6, 9},  {MIL_UINT16, 7, 9},  {MIL_INT32, 14, 9},
    {MIL_UINT32, 15, 9},
    /* compressed weights, packed from the least significant bit */
    {MIL_INT4, 8, MLP_NEVER},  {MIL_UINT1, 9, MLP_NEVER},  {MIL_UINT2, 10, MLP_NEVER},
    {MIL_UINT4, 11, MLP_NEVER}, {MIL_UINT3, 12, MLP_NEVER}, {MIL_UINT6, 13, MLP_NEVER},
};

uint32_t mlp_blob_code(int32_t mil_dtype, int spec)
{
    for (size_t i = 0; i < sizeof mlp_blob_types / sizeof mlp_blob_types[0]; i++)
        if (mlp_blob_types[i].mil == mil_dtype && spec >= mlp_blob_types[i].since_spec)
            return mlp_blob_types[i].code;
    return 0;
}

int32_t mlp_blob_dtype(uint32_t code)
{
    for (size_t i = 0; i < sizeof mlp_blob_types / sizeof mlp_blob_types[0]; i++)
        if (mlp_blob_types[i].code == code)
            return mlp_blob_types[i].mil;
    return 0;
}

bool mlp_uses_blob(const MilTensor *t, int spec, size_t threshold)
{
    uint64_t n;
    size_t w = mil_dtype_size(t->dtype);
    if (!threshold)
        threshold = MLP_BLOB_MIN_ELEMS;
    return w && mlp_blob_code(t->dtype, spec) && mil_tensor_numel(t, &n) && n >= threshold &&
           n <= SIZE_MAX / w && t->nbytes == (size_t)n * w && t->data;
}

/* ---- multi-array element types of the model description ---------------- */

static const struct {
    int32_t mil;
    int code;
} mlp_array_types[] = {
    {MIL_FP32, OCCOREML__ARRAY_FEATURE_TYPE__ELEM_TYPE__ELEM_FLOAT32},
    {MIL_FP64, OCCOREML__ARRAY_FEATURE_TYPE__ELEM_TYPE__ELEM_DOUBLE},
    {MIL_INT32, OCCOREML__ARRAY_FEATURE_TYPE__ELEM_TYPE__ELEM_INT32},
    {MIL_INT8, OCCOREML__ARRAY_FEATURE_TYPE__ELEM_TYPE__ELEM_INT8},
    {MIL_FP16, OCCOREML__ARRAY_FEATURE_TYPE__ELEM_TYPE__ELEM_FLOAT16},
};

int mlp_array_code(int32_t mil_dtype)
{
    for (size_t i = 0; i < sizeof mlp_array_types / sizeof mlp_array_types[0]; i++)
        if (mlp_array_types[i].mil == mil_dtype)
            return mlp_array_types[i].code;
    return 0;
}

int32_t mlp_array_dtype(int code)
{
    for (size_t i = 0; i < sizeof mlp_array_types / sizeof mlp_array_types[0]; i++)
        if (mlp_array_types[i].code == code)
            return mlp_array_types[i].mil;
    return 0;
}

/* ---- errors --------------------------------------------------------------- */

int mlp_wrap(IrError *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = 0;
    /* the joined line is cut to the message's size */
    size_t np = strlen(prefix), no = strlen(old), cap = sizeof err->msg - 1;
    if (np > cap)
        np = cap;
    memcpy(err->msg, prefix, np);
    size_t at = np;
    for (const char *sep = ": "; *sep && at < cap; sep++)
        err->msg[at++] = *sep;
    if (no > cap - at)
        no = cap - at;
    memcpy(err->msg + at, old, no);
    err->msg[at + no] = 0;
    /* one line, as ir_fail keeps it: names from a file may hold any byte */
    for (char *p = err->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return -1;
}

/* ---- the arena the message tree is built in ---------------------------- */

typedef struct MlpArena {
    void **p;
    size_t n, cap;
} MlpArena;

/* A zeroed block owned by the arena. */
static void *mlp_new(MlpArena *a, size_t size)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 256;
        a->p = mem_grow(a->p, a->cap, sizeof *a->p);
    }
    void *q = mem_alloc(size ? size : 1);
    a->p[a->n++] = q;
    return q;
}

static void *mlp_new_array(MlpArena *a, size_t n, size_t size)
{
    size_t bytes;
    if (!mem_mul_size(n, size, &bytes))
        abort(); /* counts come from our own in-memory program */
    return mlp_new(a, bytes);
}

static void mlp_arena_free(MlpArena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->p[i]);
    free(a->p);
}

/* protobuf-c packs a proto3 string from a C string: "" for absent. */
static char *mlp_s(const char *s)
{
    return (char *)(s ? s : "");
}

/* ---- the writer ----------------------------------------------------------- */

typedef struct MlpBlob {
    const MilTensor *t;
    uint64_t off;           /* of its metadata record */
    uint32_t code;
} MlpBlob;

typedef struct MlpW {
    MlpArena a;
    const MilModel *m;
    size_t threshold;
    MlpBlob *blobs;
    size_t n_blobs;
    uint64_t end;           /* bytes of weight.bin so far */
    IrError *err;
} MlpW;

static uint64_t mlp_align(uint64_t x)
{
    return (x + MLP_BLOB_ALIGN - 1) / MLP_BLOB_ALIGN * MLP_BLOB_ALIGN;
}

static Occoreml__Dimension *mlp_w_dim(MlpW *w, int64_t d)
{
    Occoreml__Dimension *dim = mlp_new(&w->a, sizeof *dim);
    occoreml__dimension__init(dim);
    if (d >= 0) {
        Occoreml__Dimension__Known *k = mlp_new(&w->a, sizeof *k);
        occoreml__dimension__known__init(k);
        k->size = (uint64_t)d;
        dim->kind_case = OCCOREML__DIMENSION__KIND_CONSTANT;
        dim->constant = k;
    } else {
        Occoreml__Dimension__Unknown *u = mlp_new(&w->a, sizeof *u);
        occoreml__dimension__unknown__init(u);
        dim->kind_case = OCCOREML__DIMENSION__KIND_UNKNOWN;
        dim->unknown = u;
    }
    return dim;
}

/* A tensor ValueType; NULL with err for what Core ML cannot declare (an
 * unknown rank, an unknown dtype). */
static Occoreml__ValueType *mlp_w_tensor_type(MlpW *w, int32_t dtype, int rank,
                                              const int64_t *dims)
{
    if (rank < 0 || rank > MLP_MAX_RANK) {
        ir_fail(w->err, "rank %d cannot be written (Core ML types have a known rank "
                "of at most %d)", rank, MLP_MAX_RANK);
        return NULL;
    }
    if (!mil_dtype_name(dtype)) {
        ir_fail(w->err, "unknown dtype code %d", (int)dtype);
        return NULL;
    }
    Occoreml__TensorType *tt = mlp_new(&w->a, sizeof *tt);
    occoreml__tensor_type__init(tt);
    tt->datatype = (Occoreml__DataType)dtype;
    tt->rank = rank;
    tt->n_dimensions = (size_t)rank;
    tt->dimensions = mlp_new_array(&w->a, (size_t)rank, sizeof *tt->dimensions);
    for (int i = 0; i < rank; i++)
        tt->dimensions[i] = mlp_w_dim(w, dims[i]);
    Occoreml__ValueType *vt = mlp_new(&w->a, sizeof *vt);
    occoreml__value_type__init(vt);
    vt->kind_case = OCCOREML__VALUE_TYPE__KIND_TENSOR_TYPE;
    vt->tensortype = tt;
    return vt;
}

/* A MilType: a tensor, or a list of tensors of unknown length. */
static Occoreml__ValueType *mlp_w_type(MlpW *w, const MilType *t)
{
    Occoreml__ValueType *et = mlp_w_tensor_type(w, t->dtype, t->rank, t->dims);
    if (!et || !t->is_list)
        return et;
    Occoreml__ListType *lt = mlp_new(&w->a, sizeof *lt);
    occoreml__list_type__init(lt);
    lt->type = et;
    lt->length = mlp_w_dim(w, -1);
    Occoreml__ValueType *vt = mlp_new(&w->a, sizeof *vt);
    occoreml__value_type__init(vt);
    vt->kind_case = OCCOREML__VALUE_TYPE__KIND_LIST_TYPE;
    vt->listtype = lt;
    return vt;
}

static int mlp_w_named(MlpW *w, const MilNamedType *in, size_t n, size_t *n_out,
                       Occoreml__NamedValueType ***out)
{
    *n_out = n;
    *out = mlp_new_array(&w->a, n, sizeof **out);
    for (size_t i = 0; i < n; i++) {
        Occoreml__NamedValueType *nt = mlp_new(&w->a, sizeof *nt);
        occoreml__named_value_type__init(nt);
        if (!in[i].name || !*in[i].name)
            return ir_fail(w->err, "a value without a name");
        nt->name = in[i].name;
        nt->type = mlp_w_type(w, &in[i].type);
        if (!nt->type)
            return mlp_wrap(w->err, "value '%s'", in[i].name);
        (*out)[i] = nt;
    }
    return 0;
}

/* Little-endian element readers: the MilTensor's bytes are LE whatever
 * the host is. */
static uint64_t mlp_le(const uint8_t *p, size_t w)
{
    uint64_t v = 0;
    for (size_t i = w; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Fills tv with t's elements in the field MIL reads for its dtype. */
static int mlp_w_elements(MlpW *w, const MilTensor *t, size_t n, Occoreml__TensorValue *tv)
{
    const uint8_t *d = t->data;
    switch (t->dtype) {
    case MIL_FP32: case MIL_FP64: {
        bool f64 = t->dtype == MIL_FP64;
        if (f64) {
            Occoreml__TensorValue__Doubles *r = mlp_new(&w->a, sizeof *r);
            occoreml__tensor_value__doubles__init(r);
            r->n_values = n;
            r->values = mlp_new_array(&w->a, n, sizeof *r->values);
            for (size_t i = 0; i < n; i++) {
                uint64_t b = mlp_le(d + 8 * i, 8);
                memcpy(&r->values[i], &b, 8);
            }
            tv->kind_case = OCCOREML__TENSOR_VALUE__KIND_DOUBLES;
            tv->doubles = r;
        } else {
            Occoreml__TensorValue__Floats *r = mlp_new(&w->a, sizeof *r);
            occoreml__tensor_value__floats__init(r);
            r->n_values = n;
            r->values = mlp_new_array(&w->a, n, sizeof *r->values);
            for (size_t i = 0; i < n; i++) {
                uint32_t b = (uint32_t)mlp_le(d + 4 * i, 4);
                memcpy(&r->values[i], &b, 4);
            }
            tv->kind_case = OCCOREML__TENSOR_VALUE__KIND_FLOATS;
            tv->floats = r;
        }
        return 0;
    }
    case MIL_INT32: case MIL_INT16: case MIL_UINT16: {
        size_t wd = mil_dtype_size(t->dtype);
        Occoreml__TensorValue__Ints *r = mlp_new(&w->a, sizeof *r);
        occoreml__tensor_value__ints__init(r);
        r->n_values = n;
        r->values = mlp_new_array(&w->a, n, sizeof *r->values);
        for (size_t i = 0; i < n; i++) {
            uint64_t b = mlp_le(d + wd * i, wd);
            r->values[i] = t->dtype == MIL_INT32 ? (int32_t)(uint32_t)b
                           : t->dtype == MIL_INT16 ? (int16_t)(uint16_t)b : (int32_t)b;
        }
        tv->kind_case = OCCOREML__TENSOR_VALUE__KIND_INTS;
        tv->ints = r;
        return 0;
    }
    case MIL_INT64: case MIL_UINT64: {
        Occoreml__TensorValue__LongInts *r = mlp_new(&w->a, sizeof *r);
        occoreml__tensor_value__long_ints__init(r);
        r->n_values = n;
        r->values = mlp_new_array(&w->a, n, sizeof *r->values);
        for (size_t i = 0; i < n; i++)
            r->values[i] = (int64_t)mlp_le(d + 8 * i, 8);
        tv->kind_case = OCCOREML__TENSOR_VALUE__KIND_LONG_INTS;
        tv->longints = r;
        return 0;
    }
    case MIL_BOOL: {
        Occoreml__TensorValue__Bools *r = mlp_new(&w->a, sizeof *r);
        occoreml__tensor_value__bools__init(r);
        r->n_values = n;
        r->values = mlp_new_array(&w->a, n, sizeof *r->values);
        for (size_t i = 0; i < n; i++)
            r->values[i] = d[i] != 0;
        tv->kind_case = OCCOREML__TENSOR_VALUE__KIND_BOOLS;
        tv->bools = r;
        return 0;
    }
    case MIL_STRING: {
        if (t->n_strings != n)
            return ir_fail(w->err, "string tensor holds %zu strings for %zu elements",
                           t->n_strings, n);
        Occoreml__TensorValue__Strings *r = mlp_new(&w->a, sizeof *r);
        occoreml__tensor_value__strings__init(r);
        r->n_values = n;
        r->values = mlp_new_array(&w->a, n, sizeof *r->values);
        for (size_t i = 0; i < n; i++)
            r->values[i] = mlp_s(t->strings[i]);
        tv->kind_case = OCCOREML__TENSOR_VALUE__KIND_STRINGS;
        tv->strings = r;
        return 0;
    }
    case MIL_FP16: case MIL_BF16: case MIL_INT8: case MIL_UINT8: case MIL_UINT32: {
        Occoreml__TensorValue__Bytes *r = mlp_new(&w->a, sizeof *r);
        occoreml__tensor_value__bytes__init(r);
        r->values.len = t->nbytes;
        r->values.data = t->data;
        tv->kind_case = OCCOREML__TENSOR_VALUE__KIND_BYTES;
        tv->bytes = r;
        return 0;
    }
    default:
        return ir_fail(w->err, "dtype %s cannot be an immediate value",
                       mil_dtype_name(t->dtype) ? mil_dtype_name(t->dtype) : "?");
    }
}

/* Checks that t is a complete tensor (known dims, bytes for every
 * element); its element count in *n. */
static int mlp_w_check_tensor(MlpW *w, const MilTensor *t, size_t *n)
{
    uint64_t k;
    if (t->rank < 0 || !mil_tensor_numel(t, &k) || k > SIZE_MAX / 8)
        return ir_fail(w->err, "a constant without a known shape");
    *n = (size_t)k;
    size_t wd = mil_dtype_size(t->dtype);
    if (t->dtype != MIL_STRING && (!wd || t->nbytes != (size_t)k * wd || (k && !t->data)))
        return ir_fail(w->err, "a %s constant of %zu bytes for %zu elements",
                       mil_dtype_name(t->dtype) ? mil_dtype_name(t->dtype) : "?",
                       t->nbytes, (size_t)k);
    return 0;
}

/* An immediate Value holding t. */
static Occoreml__Value *mlp_w_immediate(MlpW *w, const MilTensor *t)
{
    size_t n = 0;
    if (mlp_w_check_tensor(w, t, &n))
        return NULL;
    Occoreml__ValueType *vt = mlp_w_tensor_type(w, t->dtype, t->rank, t->dims);
    if (!vt)
        return NULL;
    Occoreml__TensorValue *tv = mlp_new(&w->a, sizeof *tv);
    occoreml__tensor_value__init(tv);
    if (mlp_w_elements(w, t, n, tv))
        return NULL;
    Occoreml__Value__Immediate *im = mlp_new(&w->a, sizeof *im);
    occoreml__value__immediate__init(im);
    im->kind_case = OCCOREML__VALUE__IMMEDIATE__KIND_TENSOR;
    im->tensor = tv;
    Occoreml__Value *v = mlp_new(&w->a, sizeof *v);
    occoreml__value__init(v);
    v->type = vt;
    v->kind_case = OCCOREML__VALUE__KIND_IMMEDIATE_VALUE;
    v->immediatevalue = im;
    return v;
}

/* A Value referring to t's blob in weight.bin, whose place is reserved
 * now (the bytes are written after the message). */
static Occoreml__Value *mlp_w_blob(MlpW *w, const MilTensor *t)
{
    Occoreml__ValueType *vt = mlp_w_tensor_type(w, t->dtype, t->rank, t->dims);
    if (!vt)
        return NULL;
    uint64_t off = mlp_align(w->end);
    if (off > UINT64_MAX - MLP_BLOB_ALIGN - t->nbytes) {
        ir_fail(w->err, "weight.bin would exceed 2^64 bytes");
        return NULL;
    }
    w->blobs = mem_grow(w->blobs, w->n_blobs + 1, sizeof *w->blobs);
    w->blobs[w->n_blobs++] = (MlpBlob){t, off, mlp_blob_code(t->dtype, w->m->spec_version)};
    w->end = off + MLP_BLOB_ALIGN + t->nbytes;
    Occoreml__Value__BlobRef *br = mlp_new(&w->a, sizeof *br);
    occoreml__value__blob_ref__init(br);
    br->filename = MLP_BLOB_REF;
    br->offset = off;
    Occoreml__Value *v = mlp_new(&w->a, sizeof *v);
    occoreml__value__init(v);
    v->type = vt;
    v->kind_case = OCCOREML__VALUE__KIND_BLOB_FILE_VALUE;
    v->blobfilevalue = br;
    return v;
}

static Occoreml__Operation__AttributesEntry *mlp_w_attr(MlpW *w, const char *key,
                                                        Occoreml__Value *v)
{
    Occoreml__Operation__AttributesEntry *e = mlp_new(&w->a, sizeof *e);
    occoreml__operation__attributes_entry__init(e);
    e->key = (char *)key;
    e->value = v;
    return e;
}

static Occoreml__Block *mlp_w_block(MlpW *w, const MilBlock *b);

/* An op's inputs: one Argument per parameter, its bindings in order. */
static int mlp_w_inputs(MlpW *w, const MilOp *op, Occoreml__Operation *o)
{
    o->n_inputs = op->n_in;
    o->inputs = mlp_new_array(&w->a, op->n_in, sizeof *o->inputs);
    for (size_t i = 0; i < op->n_in; i++) {
        const MilInput *in = &op->in[i];
        if (!in->param || !*in->param || !in->n_args)
            return ir_fail(w->err, "input %zu without a parameter name or an argument", i);
        Occoreml__Argument *arg = mlp_new(&w->a, sizeof *arg);
        occoreml__argument__init(arg);
        arg->n_arguments = in->n_args;
        arg->arguments = mlp_new_array(&w->a, in->n_args, sizeof *arg->arguments);
        for (size_t k = 0; k < in->n_args; k++) {
            Occoreml__Argument__Binding *bd = mlp_new(&w->a, sizeof *bd);
            occoreml__argument__binding__init(bd);
            if (in->args[k].name) {
                bd->binding_case = OCCOREML__ARGUMENT__BINDING__BINDING_NAME;
                bd->name = in->args[k].name;
            } else if (in->args[k].value) {
                bd->binding_case = OCCOREML__ARGUMENT__BINDING__BINDING_VALUE;
                bd->value = mlp_w_immediate(w, in->args[k].value);
                if (!bd->value)
                    return mlp_wrap(w->err, "input '%s'", in->param);
            } else {
                return ir_fail(w->err, "input '%s': an argument with neither a name nor "
                               "a value", in->param);
            }
            arg->arguments[k] = bd;
        }
        Occoreml__Operation__InputsEntry *e = mlp_new(&w->a, sizeof *e);
        occoreml__operation__inputs_entry__init(e);
        e->key = in->param;
        e->value = arg;
        o->inputs[i] = e;
    }
    return 0;
}

/* The attributes: "name" (a scalar string), and a const's "val" (in the
 * blob file when it qualifies). */
static int mlp_w_attrs(MlpW *w, const MilOp *op, Occoreml__Operation *o)
{
    bool is_const = !strcmp(op->type, "const");
    if (is_const && !op->val)
        return ir_fail(w->err, "a const without a value");
    o->attributes = mlp_new_array(&w->a, 2, sizeof *o->attributes);
    if (op->name) {
        MilTensor name = {.dtype = MIL_STRING, .strings = (char **)&op->name, .n_strings = 1};
        Occoreml__Value *v = mlp_w_immediate(w, &name);
        if (!v)
            return -1;
        o->attributes[o->n_attributes++] = mlp_w_attr(w, "name", v);
    }
    if (op->val) {
        Occoreml__Value *v = mlp_uses_blob(op->val, w->m->spec_version, w->threshold)
                                 ? mlp_w_blob(w, op->val)
                                 : mlp_w_immediate(w, op->val);
        if (!v)
            return mlp_wrap(w->err, "its value");
        o->attributes[o->n_attributes++] = mlp_w_attr(w, "val", v);
    }
    return 0;
}

static Occoreml__Operation *mlp_w_op(MlpW *w, const MilOp *op)
{
    const char *nm = op->name ? op->name : op->n_out ? op->out[0].name : "?";
    if (!op->type || !*op->type) {
        ir_fail(w->err, "op '%s' has no type", nm);
        return NULL;
    }
    Occoreml__Operation *o = mlp_new(&w->a, sizeof *o);
    occoreml__operation__init(o);
    o->type = op->type;
    if (mlp_w_inputs(w, op, o) || mlp_w_attrs(w, op, o) ||
        mlp_w_named(w, op->out, op->n_out, &o->n_outputs, &o->outputs)) {
        mlp_wrap(w->err, "op '%s' (%s)", nm, op->type);
        return NULL;
    }
    o->n_blocks = op->n_blocks;
    o->blocks = mlp_new_array(&w->a, op->n_blocks, sizeof *o->blocks);
    for (size_t i = 0; i < op->n_blocks; i++) {
        o->blocks[i] = mlp_w_block(w, op->blocks[i]);
        if (!o->blocks[i]) {
            mlp_wrap(w->err, "op '%s' (%s), block %zu", nm, op->type, i);
            return NULL;
        }
    }
    return o;
}

static Occoreml__Block *mlp_w_block(MlpW *w, const MilBlock *b)
{
    if (!b) {
        ir_fail(w->err, "no block");
        return NULL;
    }
    Occoreml__Block *o = mlp_new(&w->a, sizeof *o);
    occoreml__block__init(o);
    if (mlp_w_named(w, b->in, b->n_in, &o->n_inputs, &o->inputs))
        return NULL;
    for (size_t i = 0; i < b->n_out; i++)
        if (!b->out[i] || !*b->out[i]) {
            ir_fail(w->err, "block output %zu has no name", i);
            return NULL;
        }
    o->n_outputs = b->n_out;
    o->outputs = b->out;
    o->n_operations = b->n_ops;
    o->operations = mlp_new_array(&w->a, b->n_ops, sizeof *o->operations);
    for (size_t i = 0; i < b->n_ops; i++)
        if (!(o->operations[i] = mlp_w_op(w, b->ops[i])))
            return NULL;
    return o;
}

static Occoreml__Program__FunctionsEntry *mlp_w_function(MlpW *w, const MilFunction *f)
{
    if (!f->name || !*f->name || !f->opset || !*f->opset) {
        ir_fail(w->err, "a function without a name or an opset");
        return NULL;
    }
    Occoreml__Function *fn = mlp_new(&w->a, sizeof *fn);
    occoreml__function__init(fn);
    fn->opset = f->opset;
    Occoreml__Function__BlockSpecializationsEntry *e = mlp_new(&w->a, sizeof *e);
    occoreml__function__block_specializations_entry__init(e);
    e->key = f->opset;
    if (mlp_w_named(w, f->in, f->n_in, &fn->n_inputs, &fn->inputs) ||
        !(e->value = mlp_w_block(w, f->block))) {
        mlp_wrap(w->err, "function '%s'", f->name);
        return NULL;
    }
    fn->n_block_specializations = 1;
    fn->block_specializations = mlp_new_array(&w->a, 1, sizeof *fn->block_specializations);
    fn->block_specializations[0] = e;
    Occoreml__Program__FunctionsEntry *fe = mlp_new(&w->a, sizeof *fe);
    occoreml__program__functions_entry__init(fe);
    fe->key = f->name;
    fe->value = fn;
    return fe;
}

/* The default shape of an input: a flexible dim at its lower bound (as
 * coremltools' RangeDim defaults), at least 1. */
static int64_t mlp_default_dim(const MilFeature *f, int i)
{
    if (f->type.dims[i] >= 0)
        return f->type.dims[i];
    int64_t lo = f->range_lo ? f->range_lo[i] : 1;
    return lo > 0 ? lo : 1;
}

/* A flexible input's range per dimension; a fixed dim is [d, d]. */
static Occoreml__ArrayFeatureType__RangePerDim *mlp_w_ranges(MlpW *w, const MilFeature *f)
{
    int r = f->type.rank;
    Occoreml__ArrayFeatureType__RangePerDim *rp = mlp_new(&w->a, sizeof *rp);
    occoreml__array_feature_type__range_per_dim__init(rp);
    rp->n_sizeranges = (size_t)r;
    rp->sizeranges = mlp_new_array(&w->a, (size_t)r, sizeof *rp->sizeranges);
    for (int i = 0; i < r; i++) {
        Occoreml__DimRange *dr = mlp_new(&w->a, sizeof *dr);
        occoreml__dim_range__init(dr);
        int64_t d = f->type.dims[i];
        int64_t lo = d >= 0 ? d : f->range_lo ? f->range_lo[i] : 1;
        int64_t hi = d >= 0 ? d : f->range_hi ? f->range_hi[i] : -1;
        dr->lowerbound = lo > 0 ? (uint64_t)lo : 0;
        dr->upperbound = hi < 0 ? -1 : hi;
        rp->sizeranges[i] = dr;
    }
    return rp;
}

/* A feature of the description: a multi-array. An input's flexible dims
 * become ranges around a default shape; an output whose shape is not
 * fully known declares none (as coremltools does). */
static Occoreml__FeatureDescription *mlp_w_feature(MlpW *w, const MilFeature *f, bool input)
{
    const char *nm = f->name ? f->name : "";
    int code = mlp_array_code(f->type.dtype);
    if (!*nm || !code || f->type.is_list || f->type.rank < 0 || f->type.rank > MLP_MAX_RANK) {
        ir_fail(w->err, "%s '%s': a Core ML multi-array needs a name, a known rank and "
                "one of fp16, fp32, fp64, int32, int8 (not %s%s)", input ? "input" : "output",
                nm, f->type.is_list ? "a list of " : "",
                mil_dtype_name(f->type.dtype) ? mil_dtype_name(f->type.dtype) : "?");
        return NULL;
    }
    Occoreml__ArrayFeatureType *at = mlp_new(&w->a, sizeof *at);
    occoreml__array_feature_type__init(at);
    at->datatype = (Occoreml__ArrayFeatureType__ElemType)code;
    int r = f->type.rank;
    bool flexible = false;
    for (int i = 0; i < r; i++)
        flexible |= f->type.dims[i] < 0;
    if (input || !flexible) {
        at->n_shape = (size_t)r;
        at->shape = mlp_new_array(&w->a, (size_t)r, sizeof *at->shape);
        for (int i = 0; i < r; i++)
            at->shape[i] = mlp_default_dim(f, i);
    }
    if (input && flexible) {
        at->flexibility_case = OCCOREML__ARRAY_FEATURE_TYPE__FLEXIBILITY_SHAPE_RANGE;
        at->shaperange = mlp_w_ranges(w, f);
    }
    Occoreml__FeatureType *ft = mlp_new(&w->a, sizeof *ft);
    occoreml__feature_type__init(ft);
    ft->kind_case = OCCOREML__FEATURE_TYPE__KIND_MULTI_ARRAY_TYPE;
    ft->multiarraytype = at;
    Occoreml__FeatureDescription *fd = mlp_new(&w->a, sizeof *fd);
    occoreml__feature_description__init(fd);
    fd->name = (char *)nm;
    fd->shortdescription = mlp_s(f->doc);
    fd->type = ft;
    return fd;
}

static Occoreml__Metadata *mlp_w_metadata(MlpW *w)
{
    const MilModel *m = w->m;
    Occoreml__Metadata *md = mlp_new(&w->a, sizeof *md);
    occoreml__metadata__init(md);
    md->shortdescription = mlp_s(m->short_doc);
    md->n_userdefined = m->n_meta;
    md->userdefined = mlp_new_array(&w->a, m->n_meta, sizeof *md->userdefined);
    for (size_t i = 0; i < m->n_meta; i++) {
        Occoreml__Metadata__UserDefinedEntry *e = mlp_new(&w->a, sizeof *e);
        occoreml__metadata__user_defined_entry__init(e);
        e->key = mlp_s(m->meta_keys[i]);
        e->value = mlp_s(m->meta_values[i]);
        md->userdefined[i] = e;
    }
    return md;
}

static Occoreml__ModelDescription *mlp_w_description(MlpW *w)
{
    const MilModel *m = w->m;
    Occoreml__ModelDescription *d = mlp_new(&w->a, sizeof *d);
    occoreml__model_description__init(d);
    d->n_input = m->n_in;
    d->input = mlp_new_array(&w->a, m->n_in, sizeof *d->input);
    for (size_t i = 0; i < m->n_in; i++)
        if (!(d->input[i] = mlp_w_feature(w, &m->in[i], true)))
            return NULL;
    d->n_output = m->n_out;
    d->output = mlp_new_array(&w->a, m->n_out, sizeof *d->output);
    for (size_t i = 0; i < m->n_out; i++)
        if (!(d->output[i] = mlp_w_feature(w, &m->out[i], false)))
            return NULL;
    d->metadata = mlp_w_metadata(w);
    return d;
}

/* Refuses what Core ML would: a specificationVersion that is no ML
 * Program target, a function whose opset is unknown or newer than it. */
static int mlp_w_versions(MlpW *w)
{
    const MilModel *m = w->m;
    bool known = false;
    for (size_t i = 0; i < mil_targets_n; i++)
        known |= mil_targets[i].spec_version == m->spec_version;
    if (!known)
        return ir_fail(w->err, "specificationVersion %d is not an ML Program target (%d..%d)",
                       m->spec_version, mil_targets[0].spec_version,
                       mil_targets[mil_targets_n - 1].spec_version);
    for (size_t i = 0; i < m->n_fn; i++) {
        const MilTarget *t = mil_target_of_opset(m->fn[i]->opset);
        if (!t || t->spec_version > m->spec_version)
            return ir_fail(w->err, "function '%s': opset %s %s specificationVersion %d",
                           m->fn[i]->name ? m->fn[i]->name : "?",
                           m->fn[i]->opset ? m->fn[i]->opset : "(none)",
                           t ? "is newer than the model's" : "is not an opset of any",
                           m->spec_version);
    }
    return 0;
}

/* The whole Model message (owned by w's arena), or NULL with err. */
static Occoreml__Model *mlp_w_model(MlpW *w)
{
    const MilModel *m = w->m;
    if (mlp_w_versions(w))
        return NULL;
    Occoreml__Program *p = mlp_new(&w->a, sizeof *p);
    occoreml__program__init(p);
    p->version = 1;
    p->n_functions = m->n_fn;
    p->functions = mlp_new_array(&w->a, m->n_fn, sizeof *p->functions);
    for (size_t i = 0; i < m->n_fn; i++)
        if (!(p->functions[i] = mlp_w_function(w, m->fn[i])))
            return NULL;
    Occoreml__Model *msg = mlp_new(&w->a, sizeof *msg);
    occoreml__model__init(msg);
    msg->specificationversion = m->spec_version;
    msg->mlprogram = p;
    if (!(msg->description = mlp_w_description(w)))
        return NULL;
    return msg;
}

/* ---- files ------------------------------------------------------------------ */

/* Writes all of buf to fd; errno on failure. */
static int mlp_write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return errno ? errno : EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Creates `path` and writes buf to it, flushed to disk. */
int mlp_write_file(const char *path, const void *buf, size_t n, IrError *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return ir_fail(err, "%s: %s", path, strerror(errno));
    int e = mlp_write_all(fd, buf, n);
    if (!e && fsync(fd))
        e = errno;
    if (close(fd) && !e)
        e = errno;
    if (e)
        return ir_fail(err, "%s: %s", path, strerror(e));
    return 0;
}

static void mlp_put(uint8_t *p, uint64_t v, size_t w)
{
    for (size_t i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* weight.bin: the storage header, then per blob its metadata record and
 * its bytes, each starting on a 64-byte boundary (the gaps are zeros). */
static int mlp_write_blobs(MlpW *w, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return ir_fail(w->err, "%s: %s", path, strerror(errno));
    uint8_t rec[MLP_BLOB_ALIGN] = {0};
    mlp_put(rec, w->n_blobs, 4);
    mlp_put(rec + 4, MLP_BLOB_VERSION, 4);
    int e = mlp_write_all(fd, rec, sizeof rec);
    uint64_t at = sizeof rec;
    static const uint8_t zeros[MLP_BLOB_ALIGN];
    for (size_t i = 0; i < w->n_blobs && !e; i++) {
        const MlpBlob *b = &w->blobs[i];
        if (b->off > at)
            e = mlp_write_all(fd, zeros, (size_t)(b->off - at));
        memset(rec, 0, sizeof rec);
        mlp_put(rec, MLP_BLOB_SENTINEL, 4);
        mlp_put(rec + 4, b->code, 4);
        mlp_put(rec + 8, b->t->nbytes, 8);
        mlp_put(rec + 16, b->off + MLP_BLOB_ALIGN, 8);
        if (!e)
            e = mlp_write_all(fd, rec, sizeof rec);
        if (!e)
            e = mlp_write_all(fd, b->t->data, b->t->nbytes);
        at = b->off + MLP_BLOB_ALIGN + b->t->nbytes;
    }
    if (!e && fsync(fd))
        e = errno;
    if (close(fd) && !e)
        e = errno;
    if (e)
        return ir_fail(w->err, "%s: %s", path, strerror(e));
    return 0;
}

/* A path made of a folder and a relative name (malloc'ed). */
char *mlp_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = mem_alloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int mlp_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st; (void)flag; (void)f;
    remove(p);
    return 0;
}

/* Removes a folder we made (or the old package we replaced), with
 * everything inside; symbolic links are removed, never followed. */
void mlp_remove_tree(const char *dir)
{
    nftw(dir, mlp_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new empty folder beside `path`, named after it (malloc'ed). */
static char *mlp_tmpdir(const char *path, IrError *err)
{
    size_t n = strlen(path) + 16;
    char *tmp = mem_alloc(n);
    snprintf(tmp, n, "%s.tmp-XXXXXX", path);
    if (!mkdtemp(tmp)) {
        ir_fail(err, "%s: cannot create a folder beside it: %s", path, strerror(errno));
        free(tmp);
        return NULL;
    }
    /* mkdtemp makes it private; a package is an ordinary folder. */
    chmod(tmp, 0755);
    return tmp;
}

/* Flushes a folder's entries to disk (best effort: some file systems
 * refuse fsync on folders), so that the files written into it survive a
 * crash once the package is moved into place. */
static void mlp_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Writes the three files of the package into the empty folder dir. */
static int mlp_fill(MlpW *w, const char *dir, const uint8_t *msg, size_t len)
{
    static const char *const sub[] = {"Data", MLP_DATA_DIR, MLP_DATA_DIR "/weights"};
    for (size_t i = 0; i < 3; i++) {
        char *p = mlp_join(dir, sub[i]);
        int bad = mkdir(p, 0777) ? errno : 0;
        if (bad)
            ir_fail(w->err, "%s: %s", p, strerror(bad));
        free(p);
        if (bad)
            return -1;
    }
    char *p = mlp_join(dir, MLP_DATA_DIR "/model.mlmodel");
    int rc = mlp_write_file(p, msg, len, w->err);
    free(p);
    if (!rc && w->n_blobs) {
        p = mlp_join(dir, MLP_DATA_DIR "/weights/weight.bin");
        rc = mlp_write_blobs(w, p);
        free(p);
    }
    if (rc || mlp_manifest_write(dir, w->err))
        return -1;
    static const char *const deep_first[] = {MLP_DATA_DIR "/weights", MLP_DATA_DIR, "Data"};
    for (size_t i = 0; i < 3; i++) {
        char *d = mlp_join(dir, deep_first[i]);
        mlp_fsync_dir(d);
        free(d);
    }
    mlp_fsync_dir(dir);
    return 0;
}

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* Whether `path` is a package folder (a real folder with a Manifest.json):
 * the only thing mlp_write replaces. */
static bool mlp_is_package(const char *path)
{
    struct stat st;
    if (lstat(path, &st) || !S_ISDIR(st.st_mode))
        return false;
    char *m = mlp_join(path, "Manifest.json");
    bool ok = !lstat(m, &st) && S_ISREG(st.st_mode);
    free(m);
    return ok;
}

/* Moves the complete folder tmp to path. An existing package is swapped
 * out in one step (renameat2 RENAME_EXCHANGE, so readers see the old or
 * the new package, never none) and then removed; where the kernel cannot
 * exchange, it is moved aside first and back if the move in fails. */
static int mlp_install(const char *tmp, const char *path, IrError *err)
{
    struct stat st;
    if (lstat(path, &st)) {
        if (errno != ENOENT)
            return ir_fail(err, "%s: %s", path, strerror(errno));
        if (rename(tmp, path))
            return ir_fail(err, "%s: %s", path, strerror(errno));
        return 0;
    }
    if (!mlp_is_package(path))
        return ir_fail(err, "%s exists and is not a Core ML package (no Manifest.json): "
                       "not replaced", path);
    if (!syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE)) {
        mlp_remove_tree(tmp);
        return 0;
    }
    size_t n = strlen(tmp) + 8;
    char *old = mem_alloc(n);
    snprintf(old, n, "%s.old", tmp);
    int rc = 0;
    if (rename(path, old)) {
        rc = ir_fail(err, "%s: %s", path, strerror(errno));
    } else if (rename(tmp, path)) {
        rc = ir_fail(err, "%s: %s", path, strerror(errno));
        rename(old, path);
    } else {
        mlp_remove_tree(old);
    }
    free(old);
    return rc;
}

/* `path` without trailing slashes (malloc'ed). */
static char *mlp_trim(const char *path)
{
    char *p = mem_strdup(path);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = 0;
    return p;
}

int mlp_write(const MilModel *m, const char *path, const MlpOptions *o, IrError *err)
{
    if (!m || !path || !*path)
        return ir_fail(err, "mlp_write: no model or no path");
    MlpW w = {.m = m, .err = err, .end = MLP_BLOB_ALIGN,
              .threshold = o && o->blob_min_elems ? o->blob_min_elems : MLP_BLOB_MIN_ELEMS};
    char *target = mlp_trim(path), *tmp = NULL;
    uint8_t *buf = NULL;
    int rc = -1;
    Occoreml__Model *msg = mlp_w_model(&w);
    if (!msg) {
        mlp_wrap(err, "%s", target);
        goto done;
    }
    size_t len = protobuf_c_message_get_packed_size(&msg->base);
    buf = mem_alloc(len ? len : 1);
    protobuf_c_message_pack(&msg->base, buf);
    if (!(tmp = mlp_tmpdir(target, err)))
        goto done;
    if (mlp_fill(&w, tmp, buf, len) || mlp_install(tmp, target, err)) {
        mlp_remove_tree(tmp);
        goto done;
    }
    /* the rename itself: an entry of the target's folder */
    char *slash = strrchr(target, '/');
    if (slash) {
        *slash = 0;
        mlp_fsync_dir(slash == target ? "/" : target);
    } else {
        mlp_fsync_dir(".");
    }
    rc = 0;
done:
    free(tmp);
    free(buf);
    free(target);
    free(w.blobs);
    mlp_arena_free(&w.a);
    return rc;
}
