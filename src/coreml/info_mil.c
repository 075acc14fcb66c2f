/*
 * info_mil.c - what `onnx-convert info` prints for a Core ML package
 * (prefix info_mil_): the target, each function's opset and op counts, the
 * description's inputs and outputs, the weights (blobs in weight.bin and
 * immediate consts) and the metadata. Same layout as the ONNX summary in
 * info.c: a heading per section, one fact per line.
 */
#include "coreml/info_mil.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"

/* Writes s for a terminal, as info.c does for ONNX names: control bytes,
 * DEL and invalid UTF-8 as \xNN, a backslash doubled; NULL as "-". */
static void info_mil_str(FILE *f, const char *s)
{
    if (!s) {
        fputc('-', f);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        size_t n = js_utf8_len(p + i, len - i);
        if (p[i] == '\\') {
            fputs("\\\\", f);
        } else if (n == 0 || p[i] < 0x20 || p[i] == 0x7f) {
            fprintf(f, "\\x%02x", p[i]);
        } else {
            fwrite(p + i, 1, n, f);
            i += n;
            continue;
        }
        i++;
    }
}

/* One op type and how many ops have it. */
typedef struct InfoOpCount {
    const char *type;
    size_t n;
} InfoOpCount;

typedef struct InfoMilCounts {
    InfoOpCount *ops;
    size_t n_types, n_ops, n_consts;
    uint64_t const_bytes;
} InfoMilCounts;

static void info_mil_count(InfoMilCounts *c, const MilBlock *b)
{
    for (size_t i = 0; i < b->n_ops; i++) {
        const MilOp *op = b->ops[i];
        size_t k = 0;
        while (k < c->n_types && strcmp(c->ops[k].type, op->type))
            k++;
        if (k == c->n_types) {
            c->ops = mem_grow(c->ops, c->n_types + 1, sizeof *c->ops);
            c->ops[c->n_types++] = (InfoOpCount){op->type, 0};
        }
        c->ops[k].n++;
        c->n_ops++;
        if (op->val) {
            c->n_consts++;
            c->const_bytes += op->val->nbytes;
        }
        for (size_t j = 0; j < op->n_blocks; j++)
            info_mil_count(c, op->blocks[j]);
    }
}

static int info_op_cmp(const void *a, const void *b)
{
    return strcmp(((const InfoOpCount *)a)->type, ((const InfoOpCount *)b)->type);
}

/* "fp32 [1,3,224,224]"; a flexible dim as "lo..hi" (hi "*" when open). */
static void info_mil_type(FILE *f, const MilType *t, const int64_t *lo, const int64_t *hi)
{
    const char *dn = mil_dtype_name(t->dtype);
    fprintf(f, "%s%s%s", t->is_list ? "list of " : "", dn ? dn : "?", t->rank < 0 ? " [?]" : " [");
    for (int i = 0; i < t->rank; i++) {
        if (i)
            fputc(',', f);
        if (t->dims[i] >= 0)
            fprintf(f, "%lld", (long long)t->dims[i]);
        else if (lo && hi && hi[i] >= 0)
            fprintf(f, "%lld..%lld", (long long)lo[i], (long long)hi[i]);
        else if (lo)
            fprintf(f, "%lld..*", (long long)lo[i]);
        else
            fputc('?', f);
    }
    if (t->rank >= 0)
        fputc(']', f);
}

static void info_mil_features(FILE *f, const char *what, const MilFeature *l, size_t n)
{
    fprintf(f, "  %s (%zu)\n", what, n);
    for (size_t i = 0; i < n; i++) {
        fputs("    ", f);
        info_mil_str(f, l[i].name);
        fputc(' ', f);
        info_mil_type(f, &l[i].type, l[i].range_lo, l[i].range_hi);
        fputc('\n', f);
    }
}

/* The target whose specificationVersion m declares, or NULL. */
static const MilTarget *info_mil_target(const MilModel *m)
{
    for (size_t i = 0; i < mil_targets_n; i++)
        if (mil_targets[i].spec_version == m->spec_version)
            return &mil_targets[i];
    return NULL;
}

void info_mil_print_text(FILE *f, const MilModel *m, const MlpStats *st, const char *path)
{
    const MilTarget *t = info_mil_target(m);
    fprintf(f, "Core ML package\n");
    fputs("  path             ", f);
    info_mil_str(f, path);
    fputc('\n', f);
    fprintf(f, "  target           %s (specificationVersion %d)\n", t ? t->name : "?",
            m->spec_version);
    fprintf(f, "  functions        %zu\n", m->n_fn);
    InfoMilCounts all = {0};
    for (size_t i = 0; i < m->n_fn; i++) {
        InfoMilCounts c = {0};
        info_mil_count(&c, m->fn[i]->block);
        all.n_consts += c.n_consts;
        all.const_bytes += c.const_bytes;
        fputs("function ", f);
        info_mil_str(f, m->fn[i]->name);
        fputs("\n  opset            ", f);
        info_mil_str(f, m->fn[i]->opset);
        fputc('\n', f);
        fprintf(f, "  inputs (%zu)\n", m->fn[i]->n_in);
        for (size_t k = 0; k < m->fn[i]->n_in; k++) {
            fputs("    ", f);
            info_mil_str(f, m->fn[i]->in[k].name);
            fputc(' ', f);
            info_mil_type(f, &m->fn[i]->in[k].type, NULL, NULL);
            fputc('\n', f);
        }
        qsort(c.ops, c.n_types, sizeof *c.ops, info_op_cmp);
        fprintf(f, "  operations (%zu ops)\n", c.n_ops);
        for (size_t k = 0; k < c.n_types; k++) {
            fputs("    ", f);
            info_mil_str(f, c.ops[k].type);
            fprintf(f, " %zu\n", c.ops[k].n);
        }
        free(c.ops);
    }
    fprintf(f, "description\n");
    info_mil_features(f, "inputs", m->in, m->n_in);
    info_mil_features(f, "outputs", m->out, m->n_out);
    fprintf(f, "weights\n");
    fprintf(f, "  consts           %zu (%llu bytes)\n", all.n_consts,
            (unsigned long long)all.const_bytes);
    if (st)
        fprintf(f, "  in weight.bin    %zu blobs (%llu bytes)\n", st->n_blobs,
                (unsigned long long)st->blob_bytes);
    fprintf(f, "metadata (%zu)\n", m->n_meta + (m->short_doc != NULL));
    if (m->short_doc) {
        fputs("  description      ", f);
        info_mil_str(f, m->short_doc);
        fputc('\n', f);
    }
    for (size_t i = 0; i < m->n_meta; i++) {
        fputs("  ", f);
        info_mil_str(f, m->meta_keys[i]);
        fputs(" = ", f);
        info_mil_str(f, m->meta_values[i]);
        fputc('\n', f);
    }
}

/* ---- JSON ----------------------------------------------------------- */

/* {"name", "dtype", "shape"}: shape's unknown dims null, a flexible dim
 * {"min", "max"} (max null when open); "list" when it is one. */
static void info_mil_json_type(Js *j, const char *name, const MilType *t, const int64_t *lo,
                               const int64_t *hi)
{
    js_open(j, '{', true);
    js_key(j, "name");
    js_string(j, name);
    js_key(j, "dtype");
    js_string(j, mil_dtype_name(t->dtype));
    js_key(j, "list");
    js_bool(j, t->is_list);
    js_key(j, "shape");
    if (t->rank < 0) {
        js_null(j);
    } else {
        js_open(j, '[', true);
        for (int i = 0; i < t->rank; i++) {
            if (t->dims[i] >= 0) {
                js_int(j, t->dims[i]);
            } else if (lo) {
                js_open(j, '{', true);
                js_key(j, "min");
                js_int(j, lo[i]);
                js_key(j, "max");
                js_opt_int(j, hi && hi[i] >= 0, hi ? hi[i] : 0);
                js_close(j, '}');
            } else {
                js_null(j);
            }
        }
        js_close(j, ']');
    }
    js_close(j, '}');
}

static void info_mil_json_features(Js *j, const MilFeature *l, size_t n)
{
    js_open(j, '[', false);
    for (size_t i = 0; i < n; i++)
        info_mil_json_type(j, l[i].name, &l[i].type, l[i].range_lo, l[i].range_hi);
    js_close(j, ']');
}

/* One function: name, opset, inputs, op counts; its consts are added to
 * *all. */
static void info_mil_json_function(Js *j, const MilFunction *fn, InfoMilCounts *all)
{
    InfoMilCounts c = {0};
    info_mil_count(&c, fn->block);
    all->n_consts += c.n_consts;
    all->const_bytes += c.const_bytes;
    js_open(j, '{', false);
    js_key(j, "name");
    js_string(j, fn->name);
    js_key(j, "opset");
    js_string(j, fn->opset);
    js_key(j, "inputs");
    js_open(j, '[', false);
    for (size_t k = 0; k < fn->n_in; k++)
        info_mil_json_type(j, fn->in[k].name, &fn->in[k].type, NULL, NULL);
    js_close(j, ']');
    js_key(j, "ops_total");
    js_uint(j, c.n_ops);
    js_key(j, "ops");
    qsort(c.ops, c.n_types, sizeof *c.ops, info_op_cmp);
    js_open(j, '{', false);
    for (size_t k = 0; k < c.n_types; k++) {
        js_key(j, c.ops[k].type);
        js_uint(j, c.ops[k].n);
    }
    js_close(j, '}');
    free(c.ops);
    js_close(j, '}');
}

void info_mil_print_json(FILE *f, const MilModel *m, const MlpStats *st, const char *path)
{
    Js jj, *j = &jj;
    js_init(j, f, 0);
    const MilTarget *t = info_mil_target(m);
    js_open(j, '{', false);
    js_report_head(j, path, "info", "ok");
    js_key(j, "format");
    js_string(j, "coreml");
    js_key(j, "target");
    js_string(j, t ? t->name : NULL);
    js_key(j, "specification_version");
    js_int(j, m->spec_version);
    js_key(j, "functions");
    InfoMilCounts all = {0};
    js_open(j, '[', false);
    for (size_t i = 0; i < m->n_fn; i++)
        info_mil_json_function(j, m->fn[i], &all);
    js_close(j, ']');
    js_key(j, "inputs");
    info_mil_json_features(j, m->in, m->n_in);
    js_key(j, "outputs");
    info_mil_json_features(j, m->out, m->n_out);
    js_key(j, "weights");
    js_open(j, '{', true);
    js_key(j, "consts");
    js_uint(j, all.n_consts);
    js_key(j, "bytes");
    js_uint(j, all.const_bytes);
    js_key(j, "blobs");
    js_uint(j, st ? st->n_blobs : 0);
    js_key(j, "blob_bytes");
    js_uint(j, st ? st->blob_bytes : 0);
    js_close(j, '}');
    js_key(j, "description");
    js_string(j, m->short_doc);
    js_key(j, "metadata");
    js_open(j, '{', false);
    for (size_t i = 0; i < m->n_meta; i++) {
        js_key(j, m->meta_keys[i]);
        js_string(j, m->meta_values[i]);
    }
    js_close(j, '}');
    js_close(j, '}');
    fputc('\n', f);
}
