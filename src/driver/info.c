/*
 * info.c - the summary `onnx-convert info` prints (prefix info_).
 *
 * Both forms are built from one pass over the model (InfoStats) so that the
 * text and the JSON always state the same facts. Strings from the model are
 * untrusted: the JSON writer escapes them to valid RFC 8259 (invalid UTF-8
 * bytes become U+FFFD), the text writer shows control bytes, backslashes
 * and invalid UTF-8 bytes as escapes.
 *
 * The JSON object (keys always present, absent proto fields as null):
 *   schema (JS_REPORT_SCHEMA), path, command "info", status "ok",
 *   ir_version, ir_variant, variant_fields (null unless the PyTorch/Caffe2
 *   variant: [{field, type, count, onnx}]), producer {name, version},
 *   domain, model_version,
 *   opset_import [{domain ("" as "ai.onnx"), version}],
 *   graph (null when absent) {name, nodes, ops {domain: {op: count}},
 *     inputs/outputs [{name, type "seq(tensor(float))", elem_type "FLOAT"
 *     (a number for an unknown code; null for non-tensor types), shape
 *     [3, "N", null] (null dim = unset; shape null = unranked)}],
 *     initializers {count, bytes}, sparse_initializers {count, bytes}},
 *   nodes_total, ops_total (as ops, every graph), functions [{domain, name,
 *   overload, nodes}], subgraphs, metadata_props, training_info (counts).
 *
 * Operator counts merge the domain spellings that mean ai.onnx (absent, ""
 * and "ai.onnx") and are sorted by (domain, op_type). "Total" counts cover
 * every node in the file: the main graph and its subgraphs, function bodies
 * and their subgraphs, and training-info graphs.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "driver/info.h"
#include "ir/caffe2.h"
#include "base/json.h"

/* The newest IR version this tool knows (proto/onnx.proto's IR_VERSION). */
#define INFO_IR_NEWEST 14

const char *info_ir_variant(int64_t ir_version)
{
    if (ir_version == C2_IR_VERSION)
        return "PyTorch/Caffe2 variant of IR 3";
    if (ir_version > INFO_IR_NEWEST)
        return "newer than this tool knows";
    if (ir_version < 1)
        return "not a valid IR version";
    return NULL;
}

/* ---- a growable string --------------------------------------------- */

typedef struct Buf {
    char *s;     /* owned, NUL-terminated once anything was added */
    size_t len, cap;
} Buf;

/* Appends n bytes of p. */
static void buf_add(Buf *b, const char *p, size_t n)
{
    size_t need;
    if (!mem_add_size(b->len, n, &need) || !mem_add_size(need, 1, &need))
        abort();
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < need)
            if (!mem_mul_size(cap, 2, &cap))
                abort();
        b->s = mem_grow(b->s, cap, 1);
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void buf_puts(Buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_i64(Buf *b, int64_t v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%" PRId64, v);
    buf_puts(b, tmp);
}

/* The text so far ("" when nothing was added); borrowed from b. */
static const char *buf_str(const Buf *b)
{
    return b->s ? b->s : "";
}

static void buf_free(Buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

/* Appends s for a terminal: control bytes, DEL and bytes that are not
 * valid UTF-8 as \xNN, a backslash doubled, the rest as is. NULL appends
 * "-", the empty string "". */
static void buf_text(Buf *b, const char *s)
{
    if (!s || !*s) {
        buf_puts(b, s ? "\"\"" : "-");
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        size_t n = js_utf8_len(p + i, len - i);
        if (p[i] == '\\') {
            buf_puts(b, "\\\\");
        } else if (n == 0 || p[i] < 0x20 || p[i] == 0x7f) {
            char tmp[8];
            snprintf(tmp, sizeof tmp, "\\x%02x", p[i]);
            buf_puts(b, tmp);
        } else {
            buf_add(b, (const char *)p + i, n);
            i += n;
            continue;
        }
        i++;
    }
}

/* ---- types as strings ---------------------------------------------- */

/* "float", "int64", ... for a TensorProto.DataType, or "dtype(N)". */
static void buf_dtype(Buf *b, int32_t dtype)
{
    const char *name = ir_dtype_name(dtype);
    if (!name) {
        buf_puts(b, "dtype(");
        buf_i64(b, dtype);
        buf_puts(b, ")");
        return;
    }
    for (const char *p = name; *p; p++) {
        char c = (char)tolower((unsigned char)*p);
        buf_add(b, &c, 1);
    }
}

/* Appends ONNX's spelling of t: tensor(float), seq(tensor(int64)),
 * map(string,tensor(float)), optional(...), sparse_tensor(...),
 * opaque(domain,name). Unknown parts are "?". Raw model strings are
 * appended unescaped; the caller escapes the whole. */
static void buf_type(Buf *b, const IrType *t)
{
    if (!t) {
        buf_puts(b, "?");
        return;
    }
    switch (t->kind) {
    case IR_TYPE_TENSOR:
    case IR_TYPE_SPARSE_TENSOR:
        buf_puts(b, t->kind == IR_TYPE_TENSOR ? "tensor(" : "sparse_tensor(");
        if (t->has_elem_type)
            buf_dtype(b, t->elem_type);
        else
            buf_puts(b, "?");
        buf_puts(b, ")");
        break;
    case IR_TYPE_SEQUENCE:
    case IR_TYPE_OPTIONAL:
        buf_puts(b, t->kind == IR_TYPE_SEQUENCE ? "seq(" : "optional(");
        buf_type(b, t->elem);
        buf_puts(b, ")");
        break;
    case IR_TYPE_MAP:
        buf_puts(b, "map(");
        if (t->has_key_type)
            buf_dtype(b, t->key_type);
        else
            buf_puts(b, "?");
        buf_puts(b, ",");
        buf_type(b, t->elem);
        buf_puts(b, ")");
        break;
    case IR_TYPE_OPAQUE:
        buf_puts(b, "opaque(");
        buf_puts(b, t->opaque_domain ? t->opaque_domain : "");
        buf_puts(b, ",");
        buf_puts(b, t->opaque_name ? t->opaque_name : "");
        buf_puts(b, ")");
        break;
    case IR_TYPE_NONE:
        buf_puts(b, "none");
        break;
    default:
        buf_puts(b, "unknown");
        break;
    }
}

/* True when t carries a tensor shape field (tensor or sparse tensor). */
static bool type_has_shape_field(const IrType *t)
{
    return t && (t->kind == IR_TYPE_TENSOR || t->kind == IR_TYPE_SPARSE_TENSOR);
}

/* ---- statistics ------------------------------------------------------ */

/* How many nodes use one (domain, op_type). domain and op are borrowed from
 * the model (or "ai.onnx"); key is owned. */
typedef struct OpCount {
    char *key;
    const char *domain;
    const char *op;
    size_t n;
    UT_hash_handle hh;
} OpCount;

typedef struct OpTable {
    OpCount *head; /* uthash */
    size_t nodes;
} OpTable;

typedef struct InfoStats {
    OpTable main;      /* main graph only */
    OpTable total;     /* every graph in the file */
    size_t subgraphs;  /* below the main graph and the function bodies */
    size_t n_init;
    uint64_t init_bytes;
    size_t n_sparse;
    uint64_t sparse_bytes;
} InfoStats;

/* The domain a node count is filed under: the ai.onnx spellings merge. */
static const char *op_domain(const char *d)
{
    return ir_domain_shown(d);
}

/* Counts one node in tab. The key is length-prefixed so that no two
 * (domain, op) pairs share one. */
static void optable_add(OpTable *tab, const IrNode *n)
{
    const char *dom = op_domain(n->domain);
    const char *op = n->op_type ? n->op_type : "";
    Buf key = {0};
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%zu:", strlen(dom));
    buf_puts(&key, tmp);
    buf_puts(&key, dom);
    buf_puts(&key, op);
    OpCount *c = NULL;
    HASH_FIND(hh, tab->head, key.s, key.len, c);
    if (c) {
        buf_free(&key);
    } else {
        c = mem_alloc(sizeof *c);
        c->key = key.s; /* ownership moves to the table */
        c->domain = dom;
        c->op = op;
        HASH_ADD_KEYPTR(hh, tab->head, c->key, key.len, c);
    }
    c->n++;
    tab->nodes++;
}

static int opcount_cmp(const OpCount *a, const OpCount *b)
{
    int r = strcmp(a->domain, b->domain);
    return r ? r : strcmp(a->op, b->op);
}

static void optable_sort(OpTable *tab)
{
    HASH_SORT(tab->head, opcount_cmp);
}

static void optable_free(OpTable *tab)
{
    OpCount *c, *tmp;
    HASH_ITER(hh, tab->head, c, tmp) {
        HASH_DEL(tab->head, c);
        free(c->key);
        free(c);
    }
}

static void count_graph_flat(OpTable *tab, const IrGraph *g)
{
    for (const IrNode *n = g ? g->first : NULL; n; n = n->next)
        if (!n->dead)
            optable_add(tab, n);
}

/* Counts the nodes of one graph of a walk (the table sorts them after). */
static int count_graph_at(const IrGraph *g, const IrWalkAt *at, void *tab)
{
    count_graph_flat(tab, g);
    return 0;
}

/* Bytes of a sparse tensor's values and indices as stored. */
static uint64_t sparse_bytes(const IrSparse *s)
{
    uint64_t v = 0;
    if (s && s->values)
        v += ir_tensor_stored_bytes(s->values);
    if (s && s->indices)
        v += ir_tensor_stored_bytes(s->indices);
    return v;
}

/* Fills st from m; free with stats_free. */
static void stats_collect(InfoStats *st, const IrModel *m)
{
    memset(st, 0, sizeof *st);
    const IrGraph *g = m->graph;
    if (g) {
        count_graph_flat(&st->main, g);
        st->subgraphs += ir_graph_count_subgraphs(g);
        st->n_init = g->inits.n;
        for (size_t i = 0; i < g->inits.n; i++)
            if (g->inits.p[i])
                st->init_bytes += ir_tensor_stored_bytes(g->inits.p[i]);
        st->n_sparse = g->sparse_inits.n;
        for (size_t i = 0; i < g->sparse_inits.n; i++)
            st->sparse_bytes += sparse_bytes(g->sparse_inits.p[i]);
    }
    for (size_t i = 0; i < m->n_functions; i++) {
        const IrFunction *fn = m->functions[i];
        if (fn && fn->body)
            st->subgraphs += ir_graph_count_subgraphs(fn->body);
    }
    ir_each_graph_const(m, IR_WALK_ALL, count_graph_at, &st->total);
    optable_sort(&st->main);
    optable_sort(&st->total);
}

static void stats_free(InfoStats *st)
{
    optable_free(&st->main);
    optable_free(&st->total);
}

/* ---- JSON sections --------------------------------------------------- */

/* "ops": {"domain": {"op": count, ...}, ...} from a sorted table. */
static void json_ops(Js *j, const OpTable *tab)
{
    js_open(j, '{', false);
    const char *cur = NULL;
    for (const OpCount *c = tab->head; c; c = c->hh.next) {
        if (!cur || strcmp(cur, c->domain) != 0) {
            if (cur)
                js_close(j, '}');
            cur = c->domain;
            js_key(j, cur);
            js_open(j, '{', true);
        }
        js_key(j, c->op);
        js_uint(j, c->n);
    }
    if (cur)
        js_close(j, '}');
    js_close(j, '}');
}

/* A shape as [3, "N", null] (null: unset dimension); null when unranked
 * or when the type has no tensor shape. */
static void json_shape(Js *j, const IrType *t)
{
    if (!type_has_shape_field(t) || !t->shape) {
        js_null(j);
        return;
    }
    js_open(j, '[', true);
    for (size_t i = 0; i < t->shape->rank; i++) {
        const IrDim *d = &t->shape->dims[i];
        if (d->kind == IR_DIM_VALUE)
            js_int(j, d->value);
        else if (d->kind == IR_DIM_PARAM && d->param)
            js_string(j, d->param);
        else
            js_null(j);
    }
    js_close(j, ']');
}

/* "elem_type": the dtype name, the number for an unknown code, or null. */
static void json_elem_type(Js *j, const IrType *t)
{
    if (!type_has_shape_field(t) || !t->has_elem_type) {
        js_null(j);
        return;
    }
    const char *name = ir_dtype_name(t->elem_type);
    if (name)
        js_string(j, name);
    else
        js_int(j, t->elem_type);
}

/* The name a graph input/output is known by, or NULL. */
static const char *vi_name(const IrValueInfo *vi)
{
    if (!vi || vi->name_absent || !vi->value)
        return NULL;
    return vi->value->name;
}

/* One graph input or output as {"name","type","elem_type","shape"}. */
static void json_valueinfo(Js *j, const IrValueInfo *vi)
{
    const IrType *t = vi ? vi->type : NULL;
    js_open(j, '{', true);
    js_key(j, "name");
    js_string(j, vi_name(vi));
    js_key(j, "type");
    if (t) {
        Buf b = {0};
        buf_type(&b, t);
        js_string(j, buf_str(&b));
        buf_free(&b);
    } else {
        js_null(j);
    }
    js_key(j, "elem_type");
    json_elem_type(j, t);
    js_key(j, "shape");
    json_shape(j, t);
    /* what inference concluded, when it ran (info_* callers decide) */
    const IrType *inf = vi && vi->value ? vi->value->type : NULL;
    if (inf) {
        Buf b = {0};
        buf_type(&b, inf);
        js_key(j, "inferred_type");
        js_string(j, buf_str(&b));
        buf_free(&b);
        js_key(j, "inferred_shape");
        json_shape(j, inf);
    }
    js_close(j, '}');
}

static void json_valueinfos(Js *j, const IrPtrList *l)
{
    js_open(j, '[', false);
    for (size_t i = 0; i < l->n; i++)
        json_valueinfo(j, l->p[i]);
    js_close(j, ']');
}

/* {"count": n, "bytes": b} */
static void json_count_bytes(Js *j, size_t n, uint64_t bytes)
{
    js_open(j, '{', true);
    js_key(j, "count");
    js_uint(j, n);
    js_key(j, "bytes");
    js_uint(j, bytes);
    js_close(j, '}');
}

static void json_graph(Js *j, const IrGraph *g, const InfoStats *st)
{
    if (!g) {
        js_null(j);
        return;
    }
    js_open(j, '{', false);
    js_key(j, "name");
    js_string(j, g->name);
    js_key(j, "nodes");
    js_uint(j, st->main.nodes);
    js_key(j, "ops");
    json_ops(j, &st->main);
    js_key(j, "inputs");
    json_valueinfos(j, &g->inputs);
    js_key(j, "outputs");
    json_valueinfos(j, &g->outputs);
    js_key(j, "initializers");
    json_count_bytes(j, st->n_init, st->init_bytes);
    js_key(j, "sparse_initializers");
    json_count_bytes(j, st->n_sparse, st->sparse_bytes);
    js_close(j, '}');
}

static void json_opsets(Js *j, const IrModel *m)
{
    js_open(j, '[', false);
    for (size_t i = 0; i < m->n_opsets; i++) {
        const IrOpset *o = &m->opsets[i];
        js_open(j, '{', true);
        js_key(j, "domain");
        js_string(j, ir_domain_shown(o->domain));
        js_key(j, "version");
        js_opt_int(j, o->has_version, o->version);
        js_close(j, '}');
    }
    js_close(j, ']');
}

static void json_functions(Js *j, const IrModel *m)
{
    js_open(j, '[', false);
    for (size_t i = 0; i < m->n_functions; i++) {
        const IrFunction *fn = m->functions[i];
        if (!fn)
            continue;
        js_open(j, '{', true);
        js_key(j, "domain");
        js_string(j, fn->domain);
        js_key(j, "name");
        js_string(j, fn->name);
        js_key(j, "overload");
        js_string(j, fn->overload);
        js_key(j, "nodes");
        js_uint(j, fn->body ? fn->body->n_nodes : 0);
        js_close(j, '}');
    }
    js_close(j, ']');
}

/* The PyTorch/Caffe2 variant's fields present, [{field, type, count,
 * onnx}] (onnx: what standard ONNX reads under that number, or null), or
 * null when m is not the variant. */
static void json_variant_fields(Js *j, const IrModel *m)
{
    if (!c2_is_variant(m)) {
        js_null(j);
        return;
    }
    size_t n = c2_n_fields();
    size_t *counts = mem_array(n, sizeof *counts);
    c2_count(m, counts);
    js_open(j, '[', false);
    for (size_t i = 0; i < n; i++) {
        if (!counts[i])
            continue;
        const C2Field *d = &c2_fields()[i];
        js_open(j, '{', true);
        js_key(j, "field");
        js_string(j, d->name);
        js_key(j, "type");
        js_string(j, d->type);
        js_key(j, "count");
        js_uint(j, counts[i]);
        js_key(j, "onnx");
        js_string(j, d->onnx);
        js_close(j, '}');
    }
    js_close(j, ']');
    free(counts);
}

void info_print_json(FILE *f, const IrModel *m, const char *path)
{
    Js j;
    js_init(&j, f, 0);
    info_json(&j, m, path);
    fputc('\n', f);
}

void info_json(Js *j, const IrModel *m, const char *path)
{
    InfoStats st;
    stats_collect(&st, m);
    js_open(j, '{', false);
    js_report_head(j, path, "info", "ok");
    js_key(j, "ir_version");
    js_opt_int(j, m->has_ir_version, m->ir_version);
    js_key(j, "ir_variant");
    js_string(j, m->has_ir_version ? info_ir_variant(m->ir_version) : NULL);
    js_key(j, "variant_fields");
    json_variant_fields(j, m);
    js_key(j, "producer");
    js_open(j, '{', true);
    js_key(j, "name");
    js_string(j, m->producer_name);
    js_key(j, "version");
    js_string(j, m->producer_version);
    js_close(j, '}');
    js_key(j, "domain");
    js_string(j, m->domain);
    js_key(j, "model_version");
    js_opt_int(j, m->has_model_version, m->model_version);
    js_key(j, "opset_import");
    json_opsets(j, m);
    js_key(j, "graph");
    json_graph(j, m->graph, &st);
    js_key(j, "nodes_total");
    js_uint(j, st.total.nodes);
    js_key(j, "ops_total");
    json_ops(j, &st.total);
    js_key(j, "functions");
    json_functions(j, m);
    js_key(j, "subgraphs");
    js_uint(j, st.subgraphs);
    js_key(j, "metadata_props");
    js_uint(j, m->meta.n);
    js_key(j, "training_info");
    js_uint(j, m->n_training);
    js_close(j, '}');
    stats_free(&st);
}

/* ---- text form ------------------------------------------------------- */

#define TEXT_LABEL 16 /* width of the label column */

/* Columns a UTF-8 string takes on a terminal (one per code point; wide
 * characters are rare in model names and counted as one). */
static size_t text_width(const char *s, size_t len)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            w++;
    return w;
}

static void text_pad(FILE *f, size_t n)
{
    while (n--)
        fputc(' ', f);
}

/* "  label            value": the value already escaped. */
static void text_line(FILE *f, const char *label, const char *value)
{
    fprintf(f, "  %-*s %s\n", TEXT_LABEL, label, value);
}

/* A model string, escaped; "-" when absent. */
static void text_field(FILE *f, const char *label, const char *value)
{
    Buf b = {0};
    buf_text(&b, value);
    text_line(f, label, buf_str(&b));
    buf_free(&b);
}

static void text_count(FILE *f, const char *label, uint64_t n)
{
    fprintf(f, "  %-*s %" PRIu64 "\n", TEXT_LABEL, label, n);
}

/* One row of a table: the escaped cells. */
typedef struct Row {
    Buf cell[4];
} Row;

typedef struct Table {
    size_t n, cap;
    Row *rows;
    size_t ncol;
    size_t width[4];
} Table;

/* Appends an empty row of t; the cells are filled by the caller. */
static Row *table_row(Table *t)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 8;
        t->rows = mem_grow(t->rows, t->cap, sizeof *t->rows);
    }
    Row *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    return r;
}

/* Prints one row: cells padded to the column widths, right-aligned for
 * the columns in right_mask; no trailing blanks. */
static void table_print_row(FILE *f, const Table *t, const Row *r,
                            unsigned right_mask)
{
    size_t ncol = t->ncol;
    while (ncol > 0 && r->cell[ncol - 1].len == 0)
        ncol--;
    fputs("   ", f);
    for (size_t c = 0; c < ncol; c++) {
        const Buf *b = &r->cell[c];
        size_t pad = t->width[c] - text_width(buf_str(b), b->len);
        fputc(' ', f);
        if (right_mask & (1u << c))
            text_pad(f, pad);
        fputs(buf_str(b), f);
        if (!(right_mask & (1u << c)) && c + 1 < ncol)
            text_pad(f, pad);
    }
    fputc('\n', f);
}

/* Prints t indented by four spaces and frees it. */
static void table_print(FILE *f, Table *t, unsigned right_mask)
{
    for (size_t i = 0; i < t->n; i++)
        for (size_t c = 0; c < t->ncol; c++) {
            const Buf *b = &t->rows[i].cell[c];
            size_t w = text_width(buf_str(b), b->len);
            if (w > t->width[c])
                t->width[c] = w;
        }
    for (size_t i = 0; i < t->n; i++) {
        table_print_row(f, t, &t->rows[i], right_mask);
        for (size_t c = 0; c < t->ncol; c++)
            buf_free(&t->rows[i].cell[c]);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* Appends a shape for text: [3,N,?], "unranked" when absent, nothing when
 * the type has no tensor shape. */
static void buf_shape_text(Buf *b, const IrType *t)
{
    if (!type_has_shape_field(t))
        return;
    if (!t->shape) {
        buf_puts(b, "unranked");
        return;
    }
    buf_puts(b, "[");
    for (size_t i = 0; i < t->shape->rank; i++) {
        const IrDim *d = &t->shape->dims[i];
        if (i)
            buf_puts(b, ",");
        if (d->kind == IR_DIM_VALUE)
            buf_i64(b, d->value);
        else if (d->kind == IR_DIM_PARAM && d->param)
            buf_text(b, d->param);
        else
            buf_puts(b, "?");
    }
    buf_puts(b, "]");
}

/* "inputs (N)" and one aligned row per value: name, type, shape. */
static void text_valueinfos(FILE *f, const char *label, const IrPtrList *l)
{
    Table t = {.ncol = 4};
    fprintf(f, "  %s (%zu)\n", label, l->n);
    for (size_t i = 0; i < l->n; i++) {
        const IrValueInfo *vi = l->p[i];
        const IrType *ty = vi ? vi->type : NULL;
        Row *r = table_row(&t);
        buf_text(&r->cell[0], vi_name(vi));
        Buf tb = {0};
        buf_type(&tb, ty);
        buf_text(&r->cell[1], buf_str(&tb));
        buf_free(&tb);
        buf_shape_text(&r->cell[2], ty);
        /* the inferred type, when inference ran and it says more or else */
        const IrType *inf = vi && vi->value ? vi->value->type : NULL;
        if (inf) {
            Buf a = {0}, b = {0};
            buf_type(&a, inf);
            buf_puts(&a, " ");
            buf_shape_text(&a, inf);
            buf_type(&b, ty);
            buf_puts(&b, " ");
            buf_shape_text(&b, ty);
            if (strcmp(buf_str(&a), buf_str(&b)) != 0) {
                buf_puts(&r->cell[3], "inferred ");
                buf_puts(&r->cell[3], buf_str(&a));
            }
            buf_free(&a);
            buf_free(&b);
        }
    }
    table_print(f, &t, 0);
}

/* One aligned row per (domain, op): domain, op, count. */
static void text_ops(FILE *f, const OpTable *tab)
{
    Table t = {.ncol = 3};
    for (const OpCount *c = tab->head; c; c = c->hh.next) {
        Row *r = table_row(&t);
        buf_text(&r->cell[0], c->domain);
        buf_text(&r->cell[1], c->op);
        buf_i64(&r->cell[2], (int64_t)c->n);
    }
    table_print(f, &t, 1u << 2);
}

static void text_opsets(FILE *f, const IrModel *m)
{
    Buf b = {0};
    for (size_t i = 0; i < m->n_opsets; i++) {
        const IrOpset *o = &m->opsets[i];
        if (i)
            buf_puts(&b, ", ");
        buf_text(&b, ir_domain_shown(o->domain));
        buf_puts(&b, " ");
        if (o->has_version)
            buf_i64(&b, o->version);
        else
            buf_puts(&b, "?");
    }
    text_line(f, "opset_import", m->n_opsets ? buf_str(&b) : "(none)");
    buf_free(&b);
}

/* "7", "259 (PyTorch/Caffe2 variant of IR 3)" or "-". */
static void text_ir_version(FILE *f, const IrModel *m)
{
    Buf b = {0};
    if (m->has_ir_version) {
        const char *var = info_ir_variant(m->ir_version);
        buf_i64(&b, m->ir_version);
        if (var) {
            buf_puts(&b, " (");
            buf_puts(&b, var);
            buf_puts(&b, ")");
        }
    } else {
        buf_puts(&b, "-");
    }
    text_line(f, "ir_version", buf_str(&b));
    buf_free(&b);
}

/* For the PyTorch/Caffe2 variant: which of its own fields the model has
 * and how often ("TensorProto.strides x2 (ONNX reads 14 as
 * data_location), ..."). */
static void text_variant_fields(FILE *f, const IrModel *m)
{
    if (!c2_is_variant(m))
        return;
    size_t n = c2_n_fields();
    size_t *counts = mem_array(n, sizeof *counts);
    c2_count(m, counts);
    Buf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (!counts[i])
            continue;
        const C2Field *d = &c2_fields()[i];
        if (b.len)
            buf_puts(&b, ", ");
        buf_puts(&b, d->name);
        buf_puts(&b, " x");
        buf_i64(&b, (int64_t)counts[i]);
        if (d->onnx) {
            buf_puts(&b, " (ONNX reads ");
            buf_i64(&b, d->num);
            buf_puts(&b, " as ");
            buf_puts(&b, d->onnx);
            buf_puts(&b, ")");
        }
    }
    text_line(f, "variant_fields", b.len ? buf_str(&b) : "(none)");
    buf_free(&b);
    free(counts);
}

/* The model-level facts, and the counts that span all graphs. */
static void text_model(FILE *f, const IrModel *m, const char *path,
                       const InfoStats *st)
{
    Buf b = {0};
    fputs("model\n", f);
    text_field(f, "path", path);
    text_ir_version(f, m);
    text_variant_fields(f, m);
    buf_text(&b, m->producer_name);
    if (m->producer_version && *m->producer_version) {
        buf_puts(&b, " ");
        buf_text(&b, m->producer_version);
    }
    text_line(f, "producer", buf_str(&b));
    buf_free(&b);
    text_field(f, "domain", m->domain);
    if (m->has_model_version) {
        buf_i64(&b, m->model_version);
        text_line(f, "model_version", buf_str(&b));
        buf_free(&b);
    } else {
        text_line(f, "model_version", "-");
    }
    text_opsets(f, m);
    text_count(f, "functions", m->n_functions);
    text_count(f, "subgraphs", st->subgraphs);
    text_count(f, "nodes_total", st->total.nodes);
    text_count(f, "metadata_props", m->meta.n);
    text_count(f, "training_info", m->n_training);
}

static void text_graph(FILE *f, const IrGraph *g, const InfoStats *st)
{
    if (!g) {
        fputs("graph (absent)\n", f);
        return;
    }
    Buf b = {0};
    buf_text(&b, g->name);
    fprintf(f, "graph %s\n", buf_str(&b));
    buf_free(&b);
    text_count(f, "nodes", st->main.nodes);
    fprintf(f, "  %-*s %zu (%" PRIu64 " bytes)\n", TEXT_LABEL, "initializers",
            st->n_init, st->init_bytes);
    fprintf(f, "  %-*s %zu (%" PRIu64 " bytes)\n", TEXT_LABEL,
            "sparse_inits", st->n_sparse, st->sparse_bytes);
    text_valueinfos(f, "inputs", &g->inputs);
    text_valueinfos(f, "outputs", &g->outputs);
    fprintf(f, "  operators (%zu nodes)\n", st->main.nodes);
    text_ops(f, &st->main);
}

/* Only when other graphs add nodes: the main graph's list says it all
 * otherwise. */
static void text_total_ops(FILE *f, const InfoStats *st)
{
    if (st->total.nodes == st->main.nodes)
        return;
    fprintf(f, "operators in all graphs (%zu nodes: main graph, subgraphs, "
               "function bodies, training)\n", st->total.nodes);
    text_ops(f, &st->total);
}

static void text_functions(FILE *f, const IrModel *m)
{
    Table t = {.ncol = 4};
    if (m->n_functions == 0)
        return;
    fprintf(f, "functions (%zu)\n", m->n_functions);
    for (size_t i = 0; i < m->n_functions; i++) {
        const IrFunction *fn = m->functions[i];
        if (!fn)
            continue;
        Row *r = table_row(&t);
        buf_text(&r->cell[0], fn->domain);
        buf_text(&r->cell[1], fn->name);
        if (fn->overload)
            buf_text(&r->cell[2], fn->overload);
        buf_i64(&r->cell[3], fn->body ? (int64_t)fn->body->n_nodes : 0);
        buf_puts(&r->cell[3], " nodes");
    }
    table_print(f, &t, 0);
}

void info_print_text(FILE *f, const IrModel *m, const char *path)
{
    InfoStats st;
    stats_collect(&st, m);
    text_model(f, m, path, &st);
    text_graph(f, m->graph, &st);
    text_total_ops(f, &st);
    text_functions(f, m);
    stats_free(&st);
}
