/*
 * test_mlpackage - .mlpackage folders both ways (src/mlpackage*.c).
 *
 * Each hand-built program of mlp_models.h is written, read back and
 * compared with what was built: structure, types, names, const bytes,
 * the description's features and flexible ranges, metadata; which consts
 * went to weight.bin is checked against the blob file's own bytes. Then
 * broken packages (made here by editing written ones) must give a
 * one-line error naming the file, and never crash: truncated weight.bin,
 * a blob offset past the end, a bad sentinel, a blob of another dtype,
 * bad manifests, a missing model.mlmodel, protobuf garbage, nesting
 * deeper than the reader allows. Writing refuses to replace a folder that
 * is not a package and leaves nothing behind when it fails.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coreml.pb-c.h"
#include "mlp_models.h"
#include "coreml/mlpackage.h"
#include "t.h"

static char tmpdir[] = "/tmp/test_mlpackage.XXXXXX";

static char *path_of(const char *rel)
{
    size_t n = strlen(tmpdir) + strlen(rel) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", tmpdir, rel);
    return p;
}

/* ---- comparing programs ------------------------------------------------------- */

static bool type_eq(const MilType *a, const MilType *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->is_list != b->is_list)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

static bool tensor_eq(const MilTensor *a, const MilTensor *b)
{
    if (!a || !b)
        return a == b;
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes ||
        a->n_strings != b->n_strings)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    if (a->nbytes && memcmp(a->data, b->data, a->nbytes))
        return false;
    for (size_t i = 0; i < a->n_strings; i++)
        if (strcmp(a->strings[i], b->strings[i]))
            return false;
    return true;
}

static bool named_eq(const MilNamedType *a, size_t na, const MilNamedType *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i].name, b[i].name) || !type_eq(&a[i].type, &b[i].type))
            return false;
    return true;
}

static bool block_eq(const MilBlock *a, const MilBlock *b, const char **where);

static bool op_eq(const MilOp *a, const MilOp *b, const char **where)
{
    *where = a->name ? a->name : a->type;
    if (strcmp(a->type, b->type) || !a->name != !b->name ||
        (a->name && strcmp(a->name, b->name)) || a->n_in != b->n_in ||
        !named_eq(a->out, a->n_out, b->out, b->n_out) || !tensor_eq(a->val, b->val) ||
        a->n_blocks != b->n_blocks)
        return false;
    for (size_t i = 0; i < a->n_in; i++) {
        const MilInput *x = &a->in[i], *y = mil_op_input(b, x->param);
        if (!y || x->n_args != y->n_args)
            return false;
        for (size_t k = 0; k < x->n_args; k++) {
            const MilArg *p = &x->args[k], *q = &y->args[k];
            if (!p->name != !q->name || (p->name && strcmp(p->name, q->name)) ||
                !tensor_eq(p->value, q->value))
                return false;
        }
    }
    for (size_t i = 0; i < a->n_blocks; i++)
        if (!block_eq(a->blocks[i], b->blocks[i], where))
            return false;
    return true;
}

static bool block_eq(const MilBlock *a, const MilBlock *b, const char **where)
{
    if (!named_eq(a->in, a->n_in, b->in, b->n_in) || a->n_out != b->n_out ||
        a->n_ops != b->n_ops)
        return false;
    for (size_t i = 0; i < a->n_out; i++)
        if (strcmp(a->out[i], b->out[i]))
            return false;
    for (size_t i = 0; i < a->n_ops; i++)
        if (!op_eq(a->ops[i], b->ops[i], where))
            return false;
    return true;
}

/* A feature as it must read back: an input keeps its dims and ranges; an
 * output with an unknown dim has no shape in the file (as coremltools
 * writes it), so it reads back with an unknown rank. */
static bool feature_eq(const MilFeature *a, const MilFeature *b, bool input)
{
    if (strcmp(a->name, b->name) || a->type.dtype != b->type.dtype)
        return false;
    bool flexible = false;
    for (int i = 0; i < a->type.rank; i++)
        flexible |= a->type.dims[i] < 0;
    if (!input && flexible)
        return b->type.rank == -1;
    if (!type_eq(&a->type, &b->type))
        return false;
    if (!a->range_lo)
        return !b->range_lo;
    if (!b->range_lo)
        return false;
    for (int i = 0; i < a->type.rank; i++)
        if (a->range_lo[i] != b->range_lo[i] || a->range_hi[i] != b->range_hi[i])
            return false;
    return true;
}

static void check_same(const char *name, const MilModel *a, const MilModel *b)
{
    T_CHECK(a->spec_version == b->spec_version, "%s: spec %d read back as %d", name,
            a->spec_version, b->spec_version);
    T_CHECK(a->n_fn == b->n_fn, "%s: %zu functions read back as %zu", name, a->n_fn, b->n_fn);
    for (size_t i = 0; i < a->n_fn && i < b->n_fn; i++) {
        const MilFunction *f = a->fn[i], *g = b->fn[i];
        const char *where = "(block)";
        T_CHECK(!strcmp(f->name, g->name) && !strcmp(f->opset, g->opset), "%s: function", name);
        T_CHECK(named_eq(f->in, f->n_in, g->in, g->n_in), "%s: function inputs", name);
        T_CHECK(block_eq(f->block, g->block, &where), "%s: body differs at op '%s'", name, where);
    }
    T_CHECK(a->n_in == b->n_in && a->n_out == b->n_out, "%s: feature counts", name);
    for (size_t i = 0; i < a->n_in && i < b->n_in; i++)
        T_CHECK(feature_eq(&a->in[i], &b->in[i], true), "%s: input feature %zu", name, i);
    for (size_t i = 0; i < a->n_out && i < b->n_out; i++)
        T_CHECK(feature_eq(&a->out[i], &b->out[i], false), "%s: output feature %zu", name, i);
    T_CHECK(b->short_doc && !strcmp(a->short_doc, b->short_doc), "%s: short description", name);
    T_CHECK(a->n_meta == b->n_meta, "%s: metadata pairs", name);
    for (size_t i = 0; i < a->n_meta && i < b->n_meta; i++)
        T_CHECK(!strcmp(a->meta_keys[i], b->meta_keys[i]) &&
                    !strcmp(a->meta_values[i], b->meta_values[i]),
                "%s: metadata pair %zu", name, i);
}

/* ---- files ---------------------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
}

static uint64_t le(const uint8_t *p, size_t w)
{
    uint64_t v = 0;
    for (size_t i = w; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Every const that should be a blob is one in weight.bin: the blob file's
 * header counts them, and each record's bytes are the const's bytes. */
static void check_blobs(const char *name, const MilModel *m, const char *pkg)
{
    size_t expect = 0, n = 0;
    const MilBlock *b = m->fn[0]->block;
    for (size_t i = 0; i < b->n_ops; i++)
        expect += b->ops[i]->val && mlp_uses_blob(b->ops[i]->val, m->spec_version, 0);
    char wb[512];
    snprintf(wb, sizeof wb, "%s/Data/com.apple.CoreML/weights/weight.bin", pkg);
    uint8_t *f = slurp(wb, &n);
    if (!expect) {
        T_CHECK(!f, "%s: weight.bin written with no blob", name);
        free(f);
        return;
    }
    T_CHECK(f && n >= 64 && le(f, 4) == expect && le(f + 4, 4) == 2,
            "%s: weight.bin header (expected %zu blobs, version 2)", name, expect);
    if (!f || n < 64) {
        free(f);
        return;
    }
    uint64_t off = 64;
    for (size_t i = 0; i < b->n_ops; i++) {
        const MilTensor *t = b->ops[i]->val;
        if (!t || !mlp_uses_blob(t, m->spec_version, 0))
            continue;
        T_CHECK(off % 64 == 0 && off + 64 <= n && le(f + off, 4) == 0xDEADBEEFu,
                "%s: blob record of '%s' at %llu", name, b->ops[i]->name,
                (unsigned long long)off);
        if (off + 64 > n)
            break;
        uint64_t size = le(f + off + 8, 8), data = le(f + off + 16, 8);
        T_CHECK(size == t->nbytes && data == off + 64 && data + size <= n &&
                    !memcmp(f + data, t->data, t->nbytes),
                "%s: blob bytes of '%s'", name, b->ops[i]->name);
        off = (data + size + 63) / 64 * 64;
    }
    free(f);
}

static void roundtrip(const MmCase *c)
{
    MilModel *m = c->build();
    char rel[64];
    snprintf(rel, sizeof rel, "%s.mlpackage", c->name);
    char *pkg = path_of(rel);
    IrError err = {{0}};
    int rc = mlp_write(m, pkg, NULL, &err);
    T_CHECK(rc == 0, "%s: write: %s", c->name, err.msg);
    MilModel *back = NULL;
    if (!rc) {
        rc = mlp_read(pkg, &back, &err);
        T_CHECK(rc == 0, "%s: read: %s", c->name, err.msg);
    }
    if (back)
        check_same(c->name, m, back);
    if (!rc)
        check_blobs(c->name, m, pkg);
    /* writing again replaces the package (and writes the same bytes) */
    size_t n1 = 0, n2 = 0;
    char mp[512];
    snprintf(mp, sizeof mp, "%s/Data/com.apple.CoreML/model.mlmodel", pkg);
    uint8_t *b1 = slurp(mp, &n1);
    T_CHECK(mlp_write(m, pkg, NULL, &err) == 0, "%s: write over: %s", c->name, err.msg);
    uint8_t *b2 = slurp(mp, &n2);
    T_CHECK(b1 && b2 && n1 == n2 && !memcmp(b1, b2, n1), "%s: rewrite differs", c->name);
    free(b1);
    free(b2);
    mil_model_free(back);
    mil_model_free(m);
    free(pkg);
}

/* ---- broken packages ------------------------------------------------------------- */

/* Expects mlp_read to refuse pkg with one line containing `needle`. */
static void expect_refused(const char *what, const char *pkg, const char *needle)
{
    MilModel *m = NULL;
    IrError err = {{0}};
    int rc = mlp_read(pkg, &m, &err);
    if (getenv("MLP_VERBOSE"))
        printf("%s: %s\n", what, err.msg);
    T_CHECK(rc == -1 && !m, "%s: read should fail", what);
    T_CHECK(rc == 0 || (strstr(err.msg, needle) && !strchr(err.msg, '\n')),
            "%s: error should name '%s' on one line: %s", what, needle, err.msg);
    mil_model_free(m);
}

/* A fresh copy of a case's package at rel; its path (malloc'ed). */
static char *fresh(MilModel *(*build)(void), const char *rel)
{
    MilModel *m = build();
    char *pkg = path_of(rel);
    IrError err;
    if (mlp_write(m, pkg, NULL, &err))
        fprintf(stderr, "FAIL writing %s: %s\n", rel, err.msg);
    mil_model_free(m);
    return pkg;
}

static char *in_pkg(const char *pkg, const char *rel)
{
    size_t n = strlen(pkg) + strlen(rel) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", pkg, rel);
    return p;
}

#define MODEL_FILE "Data/com.apple.CoreML/model.mlmodel"
#define WEIGHT_FILE "Data/com.apple.CoreML/weights/weight.bin"

/* Applies edit to the "val" of every const at the top of main in
 * pkg's model.mlmodel, and writes the message back. */
static void edit_consts(const char *pkg, void (*edit)(Occoreml__Value *, const void *),
                        const void *arg)
{
    char *mp = in_pkg(pkg, MODEL_FILE);
    size_t n;
    uint8_t *b = slurp(mp, &n);
    Occoreml__Model *msg = b ? occoreml__model__unpack(NULL, n, b) : NULL;
    free(b);
    if (!msg) {
        free(mp);
        return;
    }
    Occoreml__Block *blk = msg->mlprogram->functions[0]->value->block_specializations[0]->value;
    for (size_t i = 0; i < blk->n_operations; i++)
        for (size_t k = 0; k < blk->operations[i]->n_attributes; k++)
            if (!strcmp(blk->operations[i]->attributes[k]->key, "val"))
                edit(blk->operations[i]->attributes[k]->value, arg);
    size_t len = occoreml__model__get_packed_size(msg);
    b = malloc(len);
    occoreml__model__pack(msg, b);
    spit(mp, b, len);
    free(b);
    occoreml__model__free_unpacked(msg, NULL);
    free(mp);
}

typedef struct BlobEdit {
    uint64_t offset;
    int32_t dtype;
} BlobEdit;

static void edit_blob(Occoreml__Value *v, const void *arg)
{
    const BlobEdit *e = arg;
    if (v->kind_case != OCCOREML__VALUE__KIND_BLOB_FILE_VALUE)
        return;
    if (e->offset)
        v->blobfilevalue->offset = e->offset;
    if (e->dtype)
        v->type->tensortype->datatype = (Occoreml__DataType)e->dtype;
}

/* Edits the blob reference of the matmul weight in model.mlmodel. */
static void edit_blob_ref(const char *pkg, uint64_t offset, int32_t dtype)
{
    BlobEdit e = {offset, dtype};
    edit_consts(pkg, edit_blob, &e);
}

/* An immediate const's first dimension declared as *arg. */
static void edit_dim(Occoreml__Value *v, const void *arg)
{
    Occoreml__TensorType *tt = v->type->tensortype;
    if (v->kind_case == OCCOREML__VALUE__KIND_IMMEDIATE_VALUE && tt->n_dimensions &&
        tt->dimensions[0]->kind_case == OCCOREML__DIMENSION__KIND_CONSTANT)
        tt->dimensions[0]->constant->size = *(const uint64_t *)arg;
}

static void test_broken(void)
{
    char *pkg = fresh(mm_matmul, "trunc.mlpackage");
    char *wb = in_pkg(pkg, WEIGHT_FILE);
    T_CHECK(truncate(wb, 1000) == 0, "truncate");
    expect_refused("truncated weight.bin", pkg, "weight.bin");
    free(wb);
    free(pkg);

    pkg = fresh(mm_matmul, "past.mlpackage");
    edit_blob_ref(pkg, (uint64_t)1 << 40, 0);
    expect_refused("blob offset past the end", pkg, "past the end");
    free(pkg);

    pkg = fresh(mm_matmul, "dtype.mlpackage");
    edit_blob_ref(pkg, 0, MIL_FP16);
    expect_refused("blob of another dtype", pkg, "dtype code");
    free(pkg);

    /* a sub-byte blob (compressed weights) must hold its elements packed,
     * the unused bits of its last byte counted: here float32's bytes
     * relabelled uint4 are 8 times too many */
    pkg = fresh(mm_matmul, "subbyte.mlpackage");
    edit_blob_ref(pkg, 0, MIL_UINT4);
    wb = in_pkg(pkg, WEIGHT_FILE);
    size_t nb;
    uint8_t *bb = slurp(wb, &nb);
    if (bb && nb > 72) {
        bb[68] = 11;    /* the record's dtype code: UInt4 */
        spit(wb, bb, nb);
    }
    free(bb);
    expect_refused("uint4 blob of unpacked size", pkg, "padding");
    free(wb);
    free(pkg);

    pkg = fresh(mm_matmul, "sentinel.mlpackage");
    wb = in_pkg(pkg, WEIGHT_FILE);
    size_t n;
    uint8_t *b = slurp(wb, &n);
    if (b && n > 64) {
        b[64] ^= 0xff;
        spit(wb, b, n);
    }
    free(b);
    expect_refused("bad sentinel", pkg, "sentinel");
    free(wb);
    free(pkg);

    pkg = fresh(mm_matmul, "version.mlpackage");
    wb = in_pkg(pkg, WEIGHT_FILE);
    b = slurp(wb, &n);
    if (b && n > 64) {
        b[4] = 7;
        spit(wb, b, n);
    }
    free(b);
    expect_refused("blob storage version", pkg, "storage version");
    free(wb);
    free(pkg);

    /* an immediate value declaring more (or far more) elements than it has */
    static const uint64_t dims[] = {3, (uint64_t)1 << 40, (uint64_t)1 << 62, UINT64_MAX};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        pkg = fresh(mm_conv, "dims.mlpackage");
        edit_consts(pkg, edit_dim, &dims[i]);
        expect_refused("immediate dims", pkg, "conv_");
        free(pkg);
    }

    /* a folder where a file should be */
    pkg = fresh(mm_matmul, "folders.mlpackage");
    wb = in_pkg(pkg, WEIGHT_FILE);
    unlink(wb);
    mkdir(wb, 0755);
    expect_refused("weight.bin a folder", pkg, "weight.bin");
    rmdir(wb);
    free(wb);
    wb = in_pkg(pkg, MODEL_FILE);
    unlink(wb);
    mkdir(wb, 0755);
    expect_refused("model.mlmodel a folder", pkg, "model.mlmodel");
    free(wb);
    free(pkg);

    /* links that lead out of the package */
    pkg = fresh(mm_matmul, "links.mlpackage");
    wb = in_pkg(pkg, WEIGHT_FILE);
    char *outside = path_of("outside.bin");
    T_CHECK(rename(wb, outside) == 0 && symlink(outside, wb) == 0, "link weight.bin");
    expect_refused("weight.bin a link out", pkg, "leads out");
    free(wb);
    wb = in_pkg(pkg, MODEL_FILE);
    T_CHECK(rename(wb, outside) == 0 && symlink(outside, wb) == 0, "link model.mlmodel");
    expect_refused("model.mlmodel a link out", pkg, "leads out");
    free(outside);
    free(wb);
    free(pkg);

    static const struct {
        const char *name, *text, *needle;
    } manifests[] = {
        {"manifest cut short", "{\"fileFormatVersion\": \"1.0.0\", ", "Manifest.json"},
        {"manifest not JSON", "\x01\x02garbage", "not valid JSON"},
        {"manifest without root", "{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {}}",
         "rootModelIdentifier"},
        {"manifest path escapes",
         "{\"fileFormatVersion\": \"1.0.0\", \"rootModelIdentifier\": \"a\", "
         "\"itemInfoEntries\": {\"a\": {\"path\": \"../../../etc/passwd\"}}}",
         "leaves the Data folder"},
        {"manifest from the future",
         "{\"fileFormatVersion\": \"2.0.0\", \"rootModelIdentifier\": \"a\"}",
         "fileFormatVersion"},
        {"manifest nested deep", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
         "deeper"},
        {"manifest empty", "", "empty"},
    };
    for (size_t i = 0; i < sizeof manifests / sizeof manifests[0]; i++) {
        pkg = fresh(mm_relu, "manifest.mlpackage");
        char *mf = in_pkg(pkg, "Manifest.json");
        spit(mf, manifests[i].text, strlen(manifests[i].text));
        expect_refused(manifests[i].name, pkg, manifests[i].needle);
        free(mf);
        free(pkg);
    }

    pkg = fresh(mm_relu, "nomodel.mlpackage");
    char *mp = in_pkg(pkg, MODEL_FILE);
    unlink(mp);
    expect_refused("missing model.mlmodel", pkg, "model.mlmodel");

    /* protobuf garbage: a field whose length runs past the end, then
     * bytes of every value */
    static const uint8_t bad1[] = {0x12, 0x7f, 0x01};
    spit(mp, bad1, sizeof bad1);
    expect_refused("protobuf length past the end", pkg, "model.mlmodel");
    uint8_t junk[4096];
    uint32_t s = 12345;
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < sizeof junk; i++) {
            s = s * 1103515245u + 12345u;
            junk[i] = (uint8_t)(s >> 16);
        }
        spit(mp, junk, sizeof junk);
        MilModel *m = NULL;
        IrError err;
        int rc = mlp_read(pkg, &m, &err);
        T_CHECK(rc == -1 || m, "garbage %d: neither a model nor an error", round);
        mil_model_free(m);
    }
    free(mp);
    free(pkg);

    char *none = path_of("absent.mlpackage");
    expect_refused("no package", none, "absent.mlpackage");
    free(none);
}

/* Single bytes of a good package's model.mlmodel changed one at a time:
 * every read gives a model or an error, never a crash (ASan watches). */
static void test_flipped_bytes(void)
{
    char *pkg = fresh(mm_control, "flip.mlpackage");
    char *mp = in_pkg(pkg, MODEL_FILE);
    size_t n;
    uint8_t *orig = slurp(mp, &n);
    int answered = 0;
    for (size_t i = 0; orig && i < n; i += 7) {
        orig[i] ^= 0x5a;
        spit(mp, orig, n);
        orig[i] ^= 0x5a;
        MilModel *m = NULL;
        IrError err;
        int rc = mlp_read(pkg, &m, &err);
        int ok = rc == 0 ? m != NULL : (int)(strlen(err.msg) > 0 && !strchr(err.msg, '\n'));
        if (!ok)
            fprintf(stderr, "flip %zu: rc %d: %s\n", i, rc, rc ? err.msg : "");
        answered += ok;
        mil_model_free(m);
    }
    T_CHECK(orig && answered == (int)((n + 6) / 7), "flipped bytes: %d of %zu reads answered",
            answered, (n + 6) / 7);
    free(orig);
    free(mp);
    free(pkg);
}

/* A description in the multi-function form (iOS18): the features of the
 * default function "main" instead of the model's own. */
static void test_function_description(void)
{
    char *pkg = fresh(mm_control, "fdesc.mlpackage");
    char *mp = in_pkg(pkg, MODEL_FILE);
    size_t n;
    uint8_t *b = slurp(mp, &n);
    Occoreml__Model *msg = b ? occoreml__model__unpack(NULL, n, b) : NULL;
    free(b);
    T_CHECK(msg != NULL, "fdesc: unpack");
    if (!msg) {
        free(mp);
        free(pkg);
        return;
    }
    Occoreml__ModelDescription *d = msg->description;
    Occoreml__FunctionDescription fd = OCCOREML__FUNCTION_DESCRIPTION__INIT, *fdp = &fd;
    fd.name = "main";
    fd.n_input = d->n_input;
    fd.input = d->input;
    fd.n_output = d->n_output;
    fd.output = d->output;
    size_t ni = d->n_input, no = d->n_output;
    d->n_input = d->n_output = 0;
    d->n_functions = 1;
    d->functions = &fdp;
    char *old_default = d->defaultfunctionname;
    d->defaultfunctionname = "main";
    size_t len = occoreml__model__get_packed_size(msg);
    b = malloc(len);
    occoreml__model__pack(msg, b);
    spit(mp, b, len);
    free(b);
    /* give the unpacked message its own pointers back before freeing it */
    d->n_input = ni;
    d->n_output = no;
    d->n_functions = 0;
    d->functions = NULL;
    d->defaultfunctionname = old_default;
    occoreml__model__free_unpacked(msg, NULL);
    MilModel *m = NULL;
    IrError err;
    T_CHECK(mlp_read(pkg, &m, &err) == 0 && m->n_in == 2 && m->n_out == 1 &&
                !strcmp(m->in[1].name, "n") && !strcmp(m->out[0].name, "y"),
            "fdesc: the default function's features should be the model's: %s",
            m ? "wrong features" : err.msg);
    mil_model_free(m);
    free(mp);
    free(pkg);
}

/* conds nested `depth` deep: written fine, refused on reading past the
 * wire check's nesting limit. */
static void test_deep(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS17", &f);
    int64_t d[] = {1};
    MilType t = mil_type(MIL_FP32, 1, d), tb = mil_type(MIL_BOOL, 0, NULL);
    mm_input(m, f, "x", &t);
    mil_const_add(f->block, "p", mil_tensor_scalar_bool(true));
    MilBlock *b = f->block;
    for (int i = 0; i < 60; i++) {
        char name[32];
        snprintf(name, sizeof name, "c%d", i);
        MilOp *op = mil_op_add(b, "cond", name);
        mil_op_in(op, "pred", "p");
        mil_op_out(op, i ? name : "y", &t);
        op->blocks = mem_array(1, sizeof *op->blocks);
        op->blocks[0] = mil_block_new();
        op->n_blocks = 1;
        b = op->blocks[0];
        snprintf(name, sizeof name, "c%d", i + 1);
        mil_block_output(b, i == 59 ? "x" : name);
    }
    mm_output(m, f, "y", &t);
    char *pkg = path_of("deep.mlpackage");
    IrError err;
    T_CHECK(mlp_write(m, pkg, NULL, &err) == 0, "deep: write: %s", err.msg);
    expect_refused("nesting", pkg, "nested deeper");
    free(pkg);
    mil_type_clear(&t);
    mil_type_clear(&tb);
    mil_model_free(m);
}

/* Counts the entries of tmpdir whose names start with prefix. */
static int count_named(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += !strncmp(e->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return n;
}

static void test_write_refusals(void)
{
    /* a folder that is not a package is never replaced */
    char *dir = path_of("notapkg.mlpackage");
    mkdir(dir, 0755);
    char *keep = in_pkg(dir, "keep.txt");
    spit(keep, "x", 1);
    MilModel *m = mm_relu();
    IrError err;
    T_CHECK(mlp_write(m, dir, NULL, &err) == -1 && strstr(err.msg, "not a Core ML package"),
            "writing over a plain folder should be refused: %s", err.msg);
    struct stat st;
    T_CHECK(stat(keep, &st) == 0, "the plain folder was touched");
    T_CHECK(count_named("notapkg.mlpackage.tmp") == 0, "a temporary folder was left behind");
    free(keep);
    free(dir);

    /* a model Core ML cannot describe (a bool input) fails before any file */
    m->in[0].type.dtype = MIL_BOOL;
    char *pkg = path_of("boolin.mlpackage");
    T_CHECK(mlp_write(m, pkg, NULL, &err) == -1 && strstr(err.msg, "input 'x'") &&
                !strchr(err.msg, '\n'),
            "a bool input should be refused naming it: %s", err.msg);
    T_CHECK(stat(pkg, &st) == -1 && count_named("boolin") == 0, "files left behind");
    free(pkg);
    mil_model_free(m);

    /* an opset newer than the model's target, and an unknown target */
    m = mm_matmul();
    m->spec_version = 6;
    pkg = path_of("opset.mlpackage");
    T_CHECK(mlp_write(m, pkg, NULL, &err) == -1 && strstr(err.msg, "CoreML7") &&
                strstr(err.msg, "newer"),
            "an opset above the target should be refused naming it: %s", err.msg);
    m->spec_version = 5;
    T_CHECK(mlp_write(m, pkg, NULL, &err) == -1 && strstr(err.msg, "specificationVersion 5"),
            "specificationVersion 5 should be refused: %s", err.msg);
    T_CHECK(count_named("opset") == 0, "files left behind");
    free(pkg);
    mil_model_free(m);

    /* a block output without a name */
    m = mm_relu();
    free(m->fn[0]->block->out[0]);
    m->fn[0]->block->out[0] = NULL;
    pkg = path_of("noout.mlpackage");
    T_CHECK(mlp_write(m, pkg, NULL, &err) == -1 && strstr(err.msg, "block output 0"),
            "a block output without a name should be refused: %s", err.msg);
    free(pkg);
    mil_model_free(m);

    /* an op without a type, named in the error */
    m = mm_relu();
    free(m->fn[0]->block->ops[0]->type);
    m->fn[0]->block->ops[0]->type = mem_strdup("");
    pkg = path_of("notype.mlpackage");
    T_CHECK(mlp_write(m, pkg, NULL, &err) == -1 && strstr(err.msg, "op 'y'"),
            "an op without a type should be refused naming it: %s", err.msg);
    T_CHECK(count_named("notype") == 0, "files left behind");
    free(pkg);
    mil_model_free(m);
}

/* The blob threshold: with 1, even the 4-element weight... is still
 * immediate when its dtype cannot be a blob (int32 before iOS18), and an
 * fp32 const of 4 elements goes to the blob file. */
static void test_threshold(void)
{
    int64_t d4[] = {4};
    MilTensor *f32 = mil_tensor_new(MIL_FP32, 1, d4, NULL);
    MilTensor *i32 = mil_tensor_new(MIL_INT32, 1, d4, NULL);
    T_CHECK(!mlp_uses_blob(f32, 6, 0) && mlp_uses_blob(f32, 6, 1), "fp32 threshold");
    T_CHECK(!mlp_uses_blob(i32, 8, 1) && mlp_uses_blob(i32, 9, 1),
            "int32 goes to the blob file from iOS18 only");
    mil_tensor_free(f32);
    mil_tensor_free(i32);
}

static int rm_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    for (size_t i = 0; i < MM_N_CASES; i++)
        roundtrip(&mm_cases[i]);
    test_threshold();
    test_broken();
    test_flipped_bytes();
    test_deep();
    test_function_description();
    test_write_refusals();
    rm_tree(tmpdir);
    return t_done("test_mlpackage");
}
