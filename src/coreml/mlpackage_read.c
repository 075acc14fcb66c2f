/*
 * mlpackage_read.c - an .mlpackage folder to a MilModel (prefix mlp_);
 * see mlpackage.h.
 *
 * The files are untrusted. model.mlmodel goes through load.c's wire check
 * (lengths, wire types, nesting of at most LOAD_MAX_DEPTH messages, no
 * NUL in strings) before protobuf-c decodes it, so the walk below recurses
 * no deeper than that. Each count and size is compared with what holds it
 * (a tensor's elements with its declared dims, a blob with the file's
 * length) before anything is allocated for it, so memory stays bounded by
 * the files' sizes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coreml.pb-c.h"
#include "io/load.h"
#include "coreml/mlpackage.h"
#include "coreml/mlpackage_int.h"

/* One blob file the model refers to, opened once. */
typedef struct MlpBlobFile {
    char *ref;              /* as the model names it */
    int fd;
    uint64_t size;
} MlpBlobFile;

typedef struct MlpR {
    char *root;             /* the package folder, resolved (realpath) */
    char *model_dir;        /* what "@model_path" stands for */
    MlpBlobFile *files;
    size_t n_files;
    MlpStats stats;
    IrError *err;
} MlpR;

static const char *mlp_dt(int32_t d)
{
    const char *s = mil_dtype_name(d);
    return s ? s : "?";
}

/* ---- types ------------------------------------------------------------------ */

static int mlp_r_tensor_type(MlpR *r, const Occoreml__TensorType *tt, MilType *out)
{
    int32_t dt = (int32_t)tt->datatype;
    if (!mil_dtype_size(dt) && dt != MIL_STRING)
        return ir_fail(r->err, "dtype code %d is not supported", (int)dt);
    if (tt->rank < 0 || tt->rank > MLP_MAX_RANK || (uint64_t)tt->rank != tt->n_dimensions)
        return ir_fail(r->err, "rank %lld with %zu dimensions (a rank 0..%d, one "
                       "dimension each, is required)", (long long)tt->rank,
                       tt->n_dimensions, MLP_MAX_RANK);
    int rank = (int)tt->rank;
    *out = mil_type(dt, rank, NULL);
    for (int i = 0; i < rank; i++) {
        const Occoreml__Dimension *d = tt->dimensions[i];
        if (d->kind_case == OCCOREML__DIMENSION__KIND_CONSTANT && d->constant->size <= INT64_MAX) {
            out->dims[i] = (int64_t)d->constant->size;
        } else if (d->kind_case == OCCOREML__DIMENSION__KIND_UNKNOWN && !d->unknown->variadic) {
            out->dims[i] = -1;
        } else {
            mil_type_clear(out);
            return ir_fail(r->err, "dimension %d is neither a size nor unknown (variadic "
                           "dimensions are not supported)", i);
        }
    }
    return 0;
}

/* A value type: a tensor, or a list of tensors. */
static int mlp_r_type(MlpR *r, const Occoreml__ValueType *vt, MilType *out)
{
    if (!vt)
        return ir_fail(r->err, "no type");
    if (vt->kind_case == OCCOREML__VALUE_TYPE__KIND_TENSOR_TYPE)
        return mlp_r_tensor_type(r, vt->tensortype, out);
    if (vt->kind_case == OCCOREML__VALUE_TYPE__KIND_LIST_TYPE && vt->listtype->type &&
        vt->listtype->type->kind_case == OCCOREML__VALUE_TYPE__KIND_TENSOR_TYPE) {
        if (mlp_r_tensor_type(r, vt->listtype->type->tensortype, out))
            return mlp_wrap(r->err, "list element");
        out->is_list = true;
        return 0;
    }
    return ir_fail(r->err, "a type other than a tensor or a list of tensors (kind %d)",
                   (int)vt->kind_case);
}

static int mlp_r_named(MlpR *r, Occoreml__NamedValueType *const *in, size_t n,
                       MilNamedType **out, size_t *n_out)
{
    for (size_t i = 0; i < n; i++) {
        if (!in[i]->name || !*in[i]->name)
            return ir_fail(r->err, "value %zu has no name", i);
        MilType t;
        if (mlp_r_type(r, in[i]->type, &t))
            return mlp_wrap(r->err, "value '%s'", in[i]->name);
        *out = mem_grow(*out, *n_out + 1, sizeof **out);
        (*out)[*n_out] = (MilNamedType){.name = mem_strdup(in[i]->name), .type = t};
        (*n_out)++;
    }
    return 0;
}

/* ---- values -------------------------------------------------------------------- */

static void mlp_put_le(uint8_t *p, uint64_t v, size_t w)
{
    for (size_t i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Checks that an immediate tensor keeps its elements in the field coremltools
 * uses for its dtype, n of them, and copies them into t->data. */
static void mlp_unpack_bits(MilTensor *t, size_t n, int bits);

static int mlp_r_elements(MlpR *r, const Occoreml__TensorValue *tv, MilTensor *t, size_t n)
{
    size_t w = mil_dtype_size(t->dtype);
    int bits = mil_dtype_bits(t->dtype);
    bool packed = bits > 0 && bits < 8;   /* coremltools packs them from the LSB */
    int want;
    size_t have;
    switch (t->dtype) {
    case MIL_FP32: want = OCCOREML__TENSOR_VALUE__KIND_FLOATS; break;
    case MIL_FP64: want = OCCOREML__TENSOR_VALUE__KIND_DOUBLES; break;
    case MIL_INT32: case MIL_INT16: case MIL_UINT16: want = OCCOREML__TENSOR_VALUE__KIND_INTS; break;
    case MIL_INT64: case MIL_UINT64: want = OCCOREML__TENSOR_VALUE__KIND_LONG_INTS; break;
    case MIL_BOOL: want = OCCOREML__TENSOR_VALUE__KIND_BOOLS; break;
    case MIL_STRING: want = OCCOREML__TENSOR_VALUE__KIND_STRINGS; break;
    case MIL_FP16: case MIL_BF16: case MIL_INT8: case MIL_UINT8: case MIL_UINT32:
    case MIL_INT4: case MIL_UINT1: case MIL_UINT2: case MIL_UINT3: case MIL_UINT4:
    case MIL_UINT6:
        want = OCCOREML__TENSOR_VALUE__KIND_BYTES; break;
    default:
        return ir_fail(r->err, "dtype %s cannot be an immediate value", mlp_dt(t->dtype));
    }
    if ((int)tv->kind_case != want)
        return ir_fail(r->err, "a %s value stored in field %d (expected field %d)",
                       mlp_dt(t->dtype), (int)tv->kind_case, want);
    switch (want) {
    case OCCOREML__TENSOR_VALUE__KIND_FLOATS: have = tv->floats->n_values; break;
    case OCCOREML__TENSOR_VALUE__KIND_DOUBLES: have = tv->doubles->n_values; break;
    case OCCOREML__TENSOR_VALUE__KIND_INTS: have = tv->ints->n_values; break;
    case OCCOREML__TENSOR_VALUE__KIND_LONG_INTS: have = tv->longints->n_values; break;
    case OCCOREML__TENSOR_VALUE__KIND_BOOLS: have = tv->bools->n_values; break;
    case OCCOREML__TENSOR_VALUE__KIND_STRINGS: have = tv->strings->n_values; break;
    default: have = w ? tv->bytes->values.len / w : 0;
        if (w && tv->bytes->values.len % w)
            have = (size_t)-1;
        if (packed)
            have = n <= SIZE_MAX / 8 && tv->bytes->values.len == (n * (size_t)bits + 7) / 8
                   ? n : (size_t)-1;
    }
    if (have != n)
        return ir_fail(r->err, "%zu %s elements stored for %zu declared", have,
                       mlp_dt(t->dtype), n);
    if (t->dtype == MIL_STRING) {
        t->strings = mem_array(n ? n : 1, sizeof *t->strings);
        for (size_t i = 0; i < n; i++)
            t->strings[i] = mem_strdup(tv->strings->values[i]);
        t->n_strings = n;
        return 0;
    }
    /* n elements arrived in the message, so n * w is bounded by its size */
    t->nbytes = n * w;
    t->data = mem_alloc(t->nbytes ? t->nbytes : 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        switch (want) {
        case OCCOREML__TENSOR_VALUE__KIND_FLOATS: {
            uint32_t b;
            memcpy(&b, &tv->floats->values[i], 4);
            v = b;
            break;
        }
        case OCCOREML__TENSOR_VALUE__KIND_DOUBLES:
            memcpy(&v, &tv->doubles->values[i], 8);
            break;
        case OCCOREML__TENSOR_VALUE__KIND_INTS: {
            int32_t x = tv->ints->values[i];
            if ((t->dtype == MIL_INT16 && (x < -32768 || x > 32767)) ||
                (t->dtype == MIL_UINT16 && (x < 0 || x > 65535)))
                return ir_fail(r->err, "element %zu (%d) out of range for %s", i, (int)x,
                               mlp_dt(t->dtype));
            v = (uint64_t)(int64_t)x;
            break;
        }
        case OCCOREML__TENSOR_VALUE__KIND_LONG_INTS:
            v = (uint64_t)tv->longints->values[i];
            break;
        case OCCOREML__TENSOR_VALUE__KIND_BOOLS:
            v = tv->bools->values[i] != 0;
            break;
        default:
            if (packed) {
                memcpy(t->data, tv->bytes->values.data, tv->bytes->values.len);
                mlp_unpack_bits(t, n, bits);
                return 0;
            }
            memcpy(t->data, tv->bytes->values.data, t->nbytes);
            return 0;
        }
        mlp_put_le(t->data + i * w, v, w);
    }
    return 0;
}

/* Whether the file `p` resolves to a place inside `root` (its links
 * followed): a package's files may not lead out of it. */
static bool mlp_inside(const char *root, const char *p)
{
    char *rp = realpath(p, NULL);
    size_t n = strlen(root);
    bool ok = rp && !strncmp(rp, root, n) && rp[n] == '/';
    free(rp);
    return ok;
}

/* The blob file `ref` names ("@model_path/weights/weight.bin"), opened
 * and its header checked on first use. */
static MlpBlobFile *mlp_r_blobfile(MlpR *r, const char *ref)
{
    for (size_t i = 0; i < r->n_files; i++)
        if (!strcmp(r->files[i].ref, ref))
            return &r->files[i];
    size_t np = strlen(MLP_BLOB_PREFIX);
    if (strncmp(ref, MLP_BLOB_PREFIX, np) || !mlp_safe_relpath(ref + np)) {
        ir_fail(r->err, "blob file \"%s\" is not a path below @model_path/", ref);
        return NULL;
    }
    char *path = mlp_join(r->model_dir, ref + np);
    if (!mlp_inside(r->root, path)) {
        ir_fail(r->err, "%s: missing, or leads out of the package", path);
        free(path);
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    uint8_t h[MLP_BLOB_ALIGN];
    int bad = 0;
    if (fd < 0 || fstat(fd, &st))
        bad = ir_fail(r->err, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        bad = ir_fail(r->err, "%s: not a regular file", path);
    else if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h)
        bad = ir_fail(r->err, "%s: shorter than its 64-byte header", path);
    else if ((h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24) != MLP_BLOB_VERSION)
        bad = ir_fail(r->err, "%s: storage version %u, expected %d", path,
                      (unsigned)(h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24),
                      MLP_BLOB_VERSION);
    free(path);
    if (bad) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    r->files = mem_grow(r->files, r->n_files + 1, sizeof *r->files);
    r->files[r->n_files] = (MlpBlobFile){mem_strdup(ref), fd, (uint64_t)st.st_size};
    return &r->files[r->n_files++];
}

static uint64_t mlp_get_le(const uint8_t *p, size_t w)
{
    uint64_t v = 0;
    for (size_t i = w; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Unpacks t's n elements of `bits` bits each (packed from the least
 * significant bit of each byte, as coremltools' blob writer packs them)
 * to one byte each; int4 is sign-extended. */
static void mlp_unpack_bits(MilTensor *t, size_t n, int bits)
{
    uint8_t *out = mem_alloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        for (int b = 0; b < bits; b++) {
            size_t bit = i * (size_t)bits + (size_t)b;
            v |= (unsigned)(t->data[bit / 8] >> (bit % 8) & 1) << b;
        }
        if (t->dtype == MIL_INT4 && v >= 8)
            v = (v - 16) & 0xff;
        out[i] = (uint8_t)v;
    }
    free(t->data);
    t->data = out;
    t->nbytes = n;
}

/* Reads t's bytes from its blob: the metadata record at `off` must carry
 * the sentinel, t's dtype and exactly t's byte count, all inside the file
 * (a sub-byte type: its packed bytes, the unused bits of the last one
 * counted in the record's padding). */
static int mlp_r_blob(MlpR *r, const Occoreml__Value__BlobRef *br, MilTensor *t, size_t n)
{
    MlpBlobFile *f = mlp_r_blobfile(r, br->filename ? br->filename : "");
    if (!f)
        return -1;
    uint8_t m[MLP_BLOB_ALIGN];
    uint64_t off = br->offset;
    if (off < MLP_BLOB_ALIGN || off > f->size || f->size - off < sizeof m ||
        pread(f->fd, m, sizeof m, (off_t)off) != (ssize_t)sizeof m)
        return ir_fail(r->err, "%s: blob offset %llu is past the end of the file (%llu bytes)",
                       f->ref, (unsigned long long)off, (unsigned long long)f->size);
    uint64_t sentinel = mlp_get_le(m, 4), code = mlp_get_le(m + 4, 4);
    uint64_t size = mlp_get_le(m + 8, 8), data = mlp_get_le(m + 16, 8);
    uint64_t pad = mlp_get_le(m + 24, 8);
    size_t w = mil_dtype_size(t->dtype);
    int bits = mil_dtype_bits(t->dtype);
    bool packed = bits > 0 && bits < 8;
    uint64_t want = packed ? ((uint64_t)n * (uint64_t)bits + 7) / 8 : (uint64_t)n * w;
    uint64_t want_pad = packed ? want * 8 - (uint64_t)n * (uint64_t)bits : 0;
    if (sentinel != MLP_BLOB_SENTINEL)
        return ir_fail(r->err, "%s: blob at offset %llu: bad sentinel 0x%llx", f->ref,
                       (unsigned long long)off, (unsigned long long)sentinel);
    if (mlp_blob_dtype((uint32_t)code) != t->dtype)
        return ir_fail(r->err, "%s: blob at offset %llu holds dtype code %llu, the value "
                       "declares %s", f->ref, (unsigned long long)off,
                       (unsigned long long)code, mlp_dt(t->dtype));
    if (!w || n > SIZE_MAX / w || size != want || pad != want_pad)
        return ir_fail(r->err, "%s: blob at offset %llu has %llu bytes (padding %llu bits), "
                       "the value declares %zu %s elements", f->ref, (unsigned long long)off,
                       (unsigned long long)size, (unsigned long long)pad, n, mlp_dt(t->dtype));
    if (data > f->size || f->size - data < size)
        return ir_fail(r->err, "%s: blob at offset %llu: its %llu bytes at %llu run past the "
                       "end of the file (%llu bytes)", f->ref, (unsigned long long)off,
                       (unsigned long long)size, (unsigned long long)data,
                       (unsigned long long)f->size);
    t->nbytes = (size_t)size;
    t->data = mem_alloc(t->nbytes ? t->nbytes : 1);
    for (size_t got = 0; got < t->nbytes;) {
        ssize_t k = pread(f->fd, t->data + got, t->nbytes - got, (off_t)(data + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return ir_fail(r->err, "%s: reading blob at offset %llu: %s", f->ref,
                           (unsigned long long)off, k ? strerror(errno) : "file shrank");
        got += (size_t)k;
    }
    r->stats.n_blobs++;
    r->stats.blob_bytes += size;
    if (packed)
        mlp_unpack_bits(t, n, bits);
    return 0;
}

/* A constant Value: immediate or in a blob; its type must be a tensor of
 * known dims. */
static MilTensor *mlp_r_value(MlpR *r, const Occoreml__Value *v)
{
    MilType ty;
    if (!v || mlp_r_type(r, v->type, &ty))
        return v ? NULL : (ir_fail(r->err, "no value"), NULL);
    MilTensor *t = NULL;
    uint64_t n = 1;
    for (int i = 0; i < ty.rank; i++)
        if (ty.dims[i] < 0 || (ty.dims[i] && n > UINT64_MAX / (uint64_t)ty.dims[i]))
            n = UINT64_MAX;
        else
            n *= (uint64_t)ty.dims[i];
    if (ty.is_list || n > SIZE_MAX / 8) {
        ir_fail(r->err, "a constant of %s type", ty.is_list ? "list" : "unknown or huge");
        goto fail;
    }
    t = mem_alloc(sizeof *t);
    t->dtype = ty.dtype;
    t->rank = ty.rank;
    t->dims = ty.dims;
    ty.dims = NULL;
    if (v->kind_case == OCCOREML__VALUE__KIND_IMMEDIATE_VALUE &&
        v->immediatevalue->kind_case == OCCOREML__VALUE__IMMEDIATE__KIND_TENSOR) {
        if (mlp_r_elements(r, v->immediatevalue->tensor, t, (size_t)n))
            goto fail;
    } else if (v->kind_case == OCCOREML__VALUE__KIND_BLOB_FILE_VALUE) {
        if (t->dtype == MIL_STRING) {
            ir_fail(r->err, "a string blob");
            goto fail;
        }
        if (mlp_r_blob(r, v->blobfilevalue, t, (size_t)n))
            goto fail;
    } else {
        ir_fail(r->err, "a value that is neither an immediate tensor nor a blob");
        goto fail;
    }
    mil_type_clear(&ty);
    return t;
fail:
    mil_type_clear(&ty);
    mil_tensor_free(t);
    return NULL;
}

/* ---- ops and blocks ------------------------------------------------------------ */

static int mlp_r_block(MlpR *r, const Occoreml__Block *in, MilBlock *b);

/* The attributes coremltools writes: "name", a const's "val", and the
 * parameters of iOS16's constexpr_* ops (compressed weights), which it
 * writes as attributes: they become the op's constant inputs. */
static int mlp_r_attrs(MlpR *r, const Occoreml__Operation *o, MilOp *op)
{
    bool is_const = !strcmp(o->type, "const");
    bool is_constexpr = !strncmp(o->type, "constexpr_", 10);
    for (size_t i = 0; i < o->n_attributes; i++) {
        const char *k = o->attributes[i]->key;
        if (!strcmp(k, "name") && !op->name) {
            MilTensor *t = mlp_r_value(r, o->attributes[i]->value);
            if (!t || t->dtype != MIL_STRING || t->rank || t->n_strings != 1) {
                mil_tensor_free(t);
                return t ? ir_fail(r->err, "attribute 'name' is not a string") : -1;
            }
            op->name = t->strings[0];
            t->strings[0] = NULL;
            mil_tensor_free(t);
        } else if (is_const && !strcmp(k, "val") && !op->val) {
            if (!(op->val = mlp_r_value(r, o->attributes[i]->value)))
                return mlp_wrap(r->err, "attribute 'val'");
        } else if (is_constexpr && *k && !mil_op_input(op, k)) {
            MilTensor *t = mlp_r_value(r, o->attributes[i]->value);
            if (!t)
                return mlp_wrap(r->err, "attribute '%s'", k);
            mil_op_in_const(op, k, t);
        } else {
            return ir_fail(r->err, "attribute '%s' is not supported here", k);
        }
    }
    if (is_const && (!op->val || o->n_inputs || o->n_outputs != 1))
        return ir_fail(r->err, "a const needs a value, no inputs and one output");
    return 0;
}

static int mlp_r_inputs(MlpR *r, const Occoreml__Operation *o, MilOp *op)
{
    for (size_t i = 0; i < o->n_inputs; i++) {
        const char *p = o->inputs[i]->key;
        const Occoreml__Argument *a = o->inputs[i]->value;
        if (!*p || mil_op_input(op, p))
            return ir_fail(r->err, "input %zu: an empty or repeated parameter name", i);
        if (!a || !a->n_arguments)
            return ir_fail(r->err, "input '%s' has no argument", p);
        for (size_t k = 0; k < a->n_arguments; k++) {
            const Occoreml__Argument__Binding *bd = a->arguments[k];
            if (bd->binding_case == OCCOREML__ARGUMENT__BINDING__BINDING_NAME && *bd->name) {
                mil_op_in(op, p, bd->name);
            } else if (bd->binding_case == OCCOREML__ARGUMENT__BINDING__BINDING_VALUE) {
                MilTensor *t = mlp_r_value(r, bd->value);
                if (!t)
                    return mlp_wrap(r->err, "input '%s'", p);
                mil_op_in_const(op, p, t);
            } else {
                return ir_fail(r->err, "input '%s': argument %zu is neither a name nor a "
                               "value", p, k);
            }
        }
    }
    return 0;
}

static int mlp_r_op(MlpR *r, const Occoreml__Operation *o, MilBlock *b, size_t idx)
{
    if (!o->type || !*o->type)
        return ir_fail(r->err, "op %zu has no type", idx);
    MilOp *op = mil_op_add(b, o->type, NULL);
    if (mlp_r_attrs(r, o, op) || mlp_r_inputs(r, o, op) ||
        mlp_r_named(r, o->outputs, o->n_outputs, &op->out, &op->n_out))
        goto fail;
    for (size_t i = 0; i < o->n_blocks; i++) {
        MilBlock *nb = mil_block_new();
        op->blocks = mem_grow(op->blocks, op->n_blocks + 1, sizeof *op->blocks);
        op->blocks[op->n_blocks++] = nb;
        if (mlp_r_block(r, o->blocks[i], nb)) {
            mlp_wrap(r->err, "block %zu", i);
            goto fail;
        }
    }
    return 0;
fail:
    return mlp_wrap(r->err, "op %zu '%s' (%s)", idx,
                    op->name ? op->name : op->n_out ? op->out[0].name : "?", o->type);
}

static int mlp_r_block(MlpR *r, const Occoreml__Block *in, MilBlock *b)
{
    if (mlp_r_named(r, in->inputs, in->n_inputs, &b->in, &b->n_in))
        return mlp_wrap(r->err, "block inputs");
    for (size_t i = 0; i < in->n_outputs; i++) {
        if (!*in->outputs[i])
            return ir_fail(r->err, "block output %zu has no name", i);
        mil_block_output(b, in->outputs[i]);
    }
    for (size_t i = 0; i < in->n_operations; i++)
        if (mlp_r_op(r, in->operations[i], b, i))
            return -1;
    return 0;
}

static int mlp_r_function(MlpR *r, const Occoreml__Program__FunctionsEntry *e, MilModel *m)
{
    const Occoreml__Function *f = e->value;
    if (!*e->key || mil_function_find(m, e->key))
        return ir_fail(r->err, "a function with an empty or repeated name '%s'", e->key);
    if (!f || !*f->opset)
        return ir_fail(r->err, "function '%s' has no opset", e->key);
    const Occoreml__Block *body = NULL;
    for (size_t i = 0; i < f->n_block_specializations; i++)
        if (!strcmp(f->block_specializations[i]->key, f->opset))
            body = f->block_specializations[i]->value;
    if (!body)
        return ir_fail(r->err, "function '%s' has no block for its opset %s", e->key, f->opset);
    MilFunction *fn = mil_function_add(m, e->key, f->opset);
    if (mlp_r_named(r, f->inputs, f->n_inputs, &fn->in, &fn->n_in) ||
        mlp_r_block(r, body, fn->block))
        return mlp_wrap(r->err, "function '%s'", e->key);
    return 0;
}

/* ---- the description -------------------------------------------------------------- */

/* A flexible shape's dims: a range per dim, or the enumerated shapes (a
 * dim that differs between them is unknown, its range their extremes). */
static int mlp_r_flex(MlpR *r, const Occoreml__ArrayFeatureType *at, MilFeature *f)
{
    int rank = f->type.rank;
    f->range_lo = mem_array((size_t)rank + 1, sizeof *f->range_lo);
    f->range_hi = mem_array((size_t)rank + 1, sizeof *f->range_hi);
    if (at->flexibility_case == OCCOREML__ARRAY_FEATURE_TYPE__FLEXIBILITY_SHAPE_RANGE) {
        if (at->shaperange->n_sizeranges != (size_t)rank)
            return ir_fail(r->err, "%zu ranges for rank %d", at->shaperange->n_sizeranges, rank);
        for (int i = 0; i < rank; i++) {
            const Occoreml__DimRange *d = at->shaperange->sizeranges[i];
            if (d->lowerbound > INT64_MAX ||
                (d->upperbound >= 0 && (uint64_t)d->upperbound < d->lowerbound))
                return ir_fail(r->err, "dimension %d: a bad range", i);
            f->range_lo[i] = (int64_t)d->lowerbound;
            f->range_hi[i] = d->upperbound < 0 ? -1 : d->upperbound;
        }
    } else {
        const Occoreml__ArrayFeatureType__ShapeList *sl = at->enumeratedshapes;
        if (!sl->n_shapes)
            return ir_fail(r->err, "no enumerated shapes");
        for (size_t s = 0; s < sl->n_shapes; s++) {
            if (sl->shapes[s]->n_shape != (size_t)rank)
                return ir_fail(r->err, "enumerated shape %zu has another rank", s);
            for (int i = 0; i < rank; i++) {
                int64_t d = sl->shapes[s]->shape[i];
                if (d < 0)
                    return ir_fail(r->err, "enumerated shape %zu: a negative size", s);
                f->range_lo[i] = s && f->range_lo[i] < d ? f->range_lo[i] : d;
                f->range_hi[i] = s && f->range_hi[i] > d ? f->range_hi[i] : d;
            }
        }
    }
    for (int i = 0; i < rank; i++)
        f->type.dims[i] = f->range_lo[i] == f->range_hi[i] ? f->range_lo[i] : -1;
    return 0;
}

static int mlp_r_feature(MlpR *r, const Occoreml__FeatureDescription *d, MilFeature *f)
{
    f->name = mem_strdup(d->name);
    if (*d->shortdescription)
        f->doc = mem_strdup(d->shortdescription);
    if (!*d->name || !d->type || d->type->kind_case != OCCOREML__FEATURE_TYPE__KIND_MULTI_ARRAY_TYPE)
        return ir_fail(r->err, "feature '%s': not a multi-array (kind %d)", d->name,
                       d->type ? (int)d->type->kind_case : 0);
    const Occoreml__ArrayFeatureType *at = d->type->multiarraytype;
    int32_t dt = mlp_array_dtype((int)at->datatype);
    if (!dt)
        return ir_fail(r->err, "feature '%s': element type %d is not known", d->name,
                       (int)at->datatype);
    size_t rank = at->n_shape;
    if (!rank && at->flexibility_case == OCCOREML__ARRAY_FEATURE_TYPE__FLEXIBILITY_SHAPE_RANGE)
        rank = at->shaperange->n_sizeranges;
    if (rank > MLP_MAX_RANK)
        return ir_fail(r->err, "feature '%s': rank %zu", d->name, rank);
    /* no shape: unknown (an output coremltools could not size) */
    f->type = mil_type(dt, rank ? (int)rank : -1, NULL);
    for (size_t i = 0; i < at->n_shape; i++) {
        if (at->shape[i] < 0)
            return ir_fail(r->err, "feature '%s': dimension %zu is negative", d->name, i);
        f->type.dims[i] = at->shape[i];
    }
    for (size_t i = at->n_shape; i < rank; i++)
        f->type.dims[i] = -1;
    if (at->flexibility_case != OCCOREML__ARRAY_FEATURE_TYPE__FLEXIBILITY__NOT_SET &&
        mlp_r_flex(r, at, f))
        return mlp_wrap(r->err, "feature '%s'", d->name);
    return 0;
}

static int mlp_r_features(MlpR *r, Occoreml__FeatureDescription *const *in, size_t n,
                          MilFeature **out, size_t *n_out)
{
    *out = mem_array(n ? n : 1, sizeof **out);
    for (size_t i = 0; i < n; i++) {
        (*n_out)++;
        if (mlp_r_feature(r, in[i], &(*out)[i]))
            return -1;
    }
    return 0;
}

static int mlp_r_description(MlpR *r, const Occoreml__ModelDescription *d, MilModel *m)
{
    if (!d)
        return ir_fail(r->err, "no model description");
    Occoreml__FeatureDescription *const *in = d->input, *const *out = d->output;
    size_t n_in = d->n_input, n_out = d->n_output;
    /* A model with several functions describes each apart (iOS18): the
     * default function's interface is the model's. */
    for (size_t i = 0; !n_in && !n_out && i < d->n_functions; i++)
        if (!strcmp(d->functions[i]->name, d->defaultfunctionname)) {
            in = d->functions[i]->input;
            n_in = d->functions[i]->n_input;
            out = d->functions[i]->output;
            n_out = d->functions[i]->n_output;
        }
    if (mlp_r_features(r, in, n_in, &m->in, &m->n_in) ||
        mlp_r_features(r, out, n_out, &m->out, &m->n_out))
        return mlp_wrap(r->err, "description");
    const Occoreml__Metadata *md = d->metadata;
    if (!md)
        return 0;
    if (*md->shortdescription)
        m->short_doc = mem_strdup(md->shortdescription);
    m->meta_keys = mem_array(md->n_userdefined + 1, sizeof *m->meta_keys);
    m->meta_values = mem_array(md->n_userdefined + 1, sizeof *m->meta_values);
    for (size_t i = 0; i < md->n_userdefined; i++) {
        m->meta_keys[i] = mem_strdup(md->userdefined[i]->key);
        m->meta_values[i] = mem_strdup(md->userdefined[i]->value);
    }
    m->n_meta = md->n_userdefined;
    return 0;
}

static int mlp_r_model(MlpR *r, const Occoreml__Model *msg, MilModel *m)
{
    if (!msg->mlprogram)
        return ir_fail(r->err, "not an ML Program (no mlProgram)");
    if (msg->specificationversion < mil_targets[0].spec_version ||
        msg->specificationversion > mil_targets[mil_targets_n - 1].spec_version)
        return ir_fail(r->err, "specificationVersion %d is not one of an ML Program "
                       "target (%d..%d)", (int)msg->specificationversion,
                       mil_targets[0].spec_version, mil_targets[mil_targets_n - 1].spec_version);
    m->spec_version = msg->specificationversion;
    const Occoreml__Program *p = msg->mlprogram;
    if (p->version != 1)
        return ir_fail(r->err, "program version %lld, expected 1", (long long)p->version);
    for (size_t i = 0; i < p->n_functions; i++)
        if (mlp_r_function(r, p->functions[i], m))
            return -1;
    return mlp_r_description(r, msg->description, m);
}

/* ---- the package -------------------------------------------------------------------- */

int mlp_read(const char *path, MilModel **out, IrError *err)
{
    return mlp_read_stats(path, out, NULL, err);
}

int mlp_read_stats(const char *path, MilModel **out, MlpStats *stats, IrError *err)
{
    *out = NULL;
    char *rel = NULL, *data = NULL, *model = NULL;
    MlpR r = {.err = err};
    MilModel *m = NULL;
    Occoreml__Model *msg = NULL;
    int rc = -1;
    struct stat st;
    if (stat(path, &st)) {
        ir_fail(err, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISDIR(st.st_mode)) {
        ir_fail(err, "%s: not a folder (an .mlpackage is one)", path);
        goto done;
    }
    if (mlp_manifest_read(path, &rel, err))
        goto done;
    data = mlp_join(path, "Data");
    model = mlp_join(data, rel);
    if (stat(model, &st)) {
        ir_fail(err, "%s: %s", model, strerror(errno));
        goto done;
    }
    r.root = realpath(path, NULL);
    if (!r.root || !mlp_inside(r.root, model)) {
        ir_fail(err, "%s: leads out of the package %s", model, path);
        goto done;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > MLP_MAX_MODEL_BYTES) {
        ir_fail(err, "%s: %llu bytes, more than the limit of %zu", model,
                (unsigned long long)st.st_size, MLP_MAX_MODEL_BYTES);
        goto done;
    }
    if (!(msg = load_message_file(model, &occoreml__model__descriptor, err)))
        goto done;
    r.model_dir = mem_strdup(model);
    *strrchr(r.model_dir, '/') = 0;
    m = mil_model_new(NULL);
    if (mlp_r_model(&r, msg, m)) {
        mlp_wrap(err, "%s", model);
        goto done;
    }
    *out = m;
    m = NULL;
    if (stats)
        *stats = r.stats;
    rc = 0;
done:
    if (msg)
        protobuf_c_message_free_unpacked(&msg->base, NULL);
    mil_model_free(m);
    for (size_t i = 0; i < r.n_files; i++) {
        close(r.files[i].fd);
        free(r.files[i].ref);
    }
    free(r.files);
    free(r.root);
    free(r.model_dir);
    free(rel);
    free(data);
    free(model);
    return rc;
}
