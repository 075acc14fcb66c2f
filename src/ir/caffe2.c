/*
 * caffe2.c - the PyTorch/Caffe2 variant of IR 3: its fields, where they
 * sit in the IR, and the conversion to a standard model (prefix c2_).
 *
 * The table is the variant's torch.proto (pytorch's caffe2/proto, the
 * "seed" copy of onnx.proto with package torch, its Version enum ending
 * IR_VERSION_NEWEST_ONNX = 3 and IR_VERSION_NEWEST = 0x103; the copy read
 * is ../shared/seeds/pytorch-caffe2-variant-proto.txt), message by
 * message against IR 3's onnx.proto, with onnx/onnx.proto for the
 * numbers ONNX gave the same slots later: every field the variant adds
 * or reads differently, under the variant's own name and type. The
 * messages not listed (AttributeProto, ValueInfoProto,
 * OperatorSetIdProto, StringStringEntryProto, TypeProto.Tensor and .Map,
 * TensorShapeProto.Dimension) are IR 3's field for field. Its caffe2
 * message types (DeviceOption) and the SPECIAL element type (51) have no
 * ONNX counterpart at all.
 */
#include "ir/caffe2.h"

#include <stdlib.h>
#include <string.h>

static const C2Field C2_FIELDS[] = {
    {C2_MODEL, 15, "ModelProto.methods", "repeated GraphProto", NULL, C2_DROP},
    {C2_MODEL, 16, "ModelProto.name", "string", NULL, C2_DROP},
    {C2_MODEL, 17, "ModelProto.annotations", "repeated AttributeProto", NULL, C2_DROP},
    {C2_MODEL, 51, "ModelProto.blob_lists", "repeated AttributeProto", NULL, C2_DROP},
    {C2_MODEL, 52, "ModelProto.plans", "repeated AttributeProto", NULL, C2_DROP},
    {C2_GRAPH, 14, "GraphProto.annotations", "repeated AttributeProto",
     "quantization_annotation", C2_DROP},
    {C2_NODE, 8, "NodeProto.annotations", "repeated AttributeProto", "overload", C2_DROP},
    {C2_NODE, 51, "NodeProto.device_option", "caffe2.DeviceOption", NULL, C2_DROP},
    {C2_NODE, 52, "NodeProto.aten_function", "string", NULL, C2_DROP},
    {C2_TENSOR, 13, "TensorProto.external_data", "string (a file name)",
     "external_data", C2_EXTFILE},
    {C2_TENSOR, 14, "TensorProto.strides", "repeated int64", "data_location", C2_STRIDES},
    {C2_TENSOR, 16, "TensorProto.alias", "string (an initializer's name)",
     "metadata_props", C2_ALIAS},
    {C2_TENSOR, 17, "TensorProto.annotations", "repeated AttributeProto", NULL, C2_DROP},
    {C2_TENSOR, 51, "TensorProto.device_option", "caffe2.DeviceOption", NULL, C2_DROP},
    {C2_TENSOR, 52, "TensorProto.require_gradient", "int64", NULL, C2_DROP},
    {C2_TENSOR, 53, "TensorProto.is_buffer", "int64", NULL, C2_DROP},
    {C2_SEGMENT, 51, "TensorProto.Segment.chuck_num", "int64", NULL, C2_DROP},
    {C2_SEGMENT, 52, "TensorProto.Segment.chuck_id", "int64", NULL, C2_DROP},
    {C2_SHAPE, 51, "TensorShapeProto.stride", "repeated Dimension", NULL, C2_DROP},
    {C2_TYPE, 51, "TypeProto.special_type", "SpecialBlob", NULL, C2_DROP},
    {C2_SEQUENCE, 51, "TypeProto.Sequence.elem_type_list", "repeated TypeProto", NULL, C2_DROP},
    {C2_SEQUENCE, 52, "TypeProto.Sequence.sequence_type", "SequenceType (LIST, TUPLE)", NULL,
     C2_DROP},
};

#define C2_N (sizeof C2_FIELDS / sizeof C2_FIELDS[0])

const C2Field *c2_fields(void) { return C2_FIELDS; }
size_t c2_n_fields(void) { return C2_N; }

int c2_find(C2Msg msg, uint32_t num)
{
    for (size_t i = 0; i < C2_N; i++)
        if (C2_FIELDS[i].msg == msg && C2_FIELDS[i].num == num)
            return (int)i;
    return -1;
}

bool c2_is_variant(const IrModel *m)
{
    return m->has_ir_version && m->ir_version == C2_IR_VERSION;
}

uint32_t c2_wire_num(uint32_t tag)
{
    return tag >= C2_TAG_BASE && tag - C2_TAG_BASE < C2_TAG_SPAN ? tag - C2_TAG_BASE
                                                                  : tag;
}

/* ---- walking every unknown-field list of the model ------------------ */

/* One visit: the list, which message it belongs to, its owner (an
 * IrModel, IrGraph, IrNode, IrTensor, IrSegment, IrShape or IrType) and
 * the graph it sits in (for TensorProto.alias). */
typedef struct C2Walk C2Walk;
struct C2Walk {
    int (*fn)(C2Walk *w, C2Msg msg, IrUnknown *u, void *owner, IrGraph *g);
    size_t *counts;
    bool keep;
    IrError *err;
    const char *value;   /* the value whose type is being walked, or NULL */
};

static int c2_walk_graph(C2Walk *w, IrGraph *g);

static int c2_walk_type(C2Walk *w, IrType *t, IrGraph *g)
{
    for (; t; t = t->elem) {
        if (w->fn(w, C2_TYPE, &t->unk, t, g))
            return -1;
        /* a sequence's own fields ride in the sub-message's list */
        if (t->kind == IR_TYPE_SEQUENCE && w->fn(w, C2_SEQUENCE, &t->inner_unk, t, g))
            return -1;
        if (t->shape && w->fn(w, C2_SHAPE, &t->shape->unk, t->shape, g))
            return -1;
    }
    return 0;
}

static int c2_walk_tensor(C2Walk *w, IrTensor *t, IrGraph *g)
{
    if (!t)
        return 0;
    if (t->segment && w->fn(w, C2_SEGMENT, &t->segment->unk, t->segment, g))
        return -1;
    return w->fn(w, C2_TENSOR, &t->unk, t, g);
}

static int c2_walk_sparse(C2Walk *w, IrSparse *s, IrGraph *g)
{
    if (!s)
        return 0;
    return c2_walk_tensor(w, s->values, g) || c2_walk_tensor(w, s->indices, g) ? -1 : 0;
}

static int c2_walk_attr(C2Walk *w, IrAttr *a, IrGraph *g)
{
    if (c2_walk_tensor(w, a->t, g) || c2_walk_sparse(w, a->sparse_tensor, g) ||
        c2_walk_type(w, a->tp, g) || (a->g && c2_walk_graph(w, a->g)))
        return -1;
    for (size_t i = 0; i < a->n_tensors; i++)
        if (c2_walk_tensor(w, a->tensors[i], g))
            return -1;
    for (size_t i = 0; i < a->n_sparse; i++)
        if (c2_walk_sparse(w, a->sparse_tensors[i], g))
            return -1;
    for (size_t i = 0; i < a->n_tps; i++)
        if (c2_walk_type(w, a->type_protos[i], g))
            return -1;
    for (size_t i = 0; i < a->n_graphs; i++)
        if (c2_walk_graph(w, a->graphs[i]))
            return -1;
    return 0;
}

static int c2_walk_graph(C2Walk *w, IrGraph *g)
{
    if (w->fn(w, C2_GRAPH, &g->unk, g, g))
        return -1;
    const IrPtrList *lists[3] = {&g->inputs, &g->outputs, &g->value_info};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            IrValueInfo *vi = lists[l]->p[i];
            w->value = vi->value ? vi->value->name : NULL;
            int rc = c2_walk_type(w, vi->type, g);
            w->value = NULL;
            if (rc)
                return -1;
        }
    for (size_t i = 0; i < g->inits.n; i++)
        if (c2_walk_tensor(w, g->inits.p[i], g))
            return -1;
    for (size_t i = 0; i < g->sparse_inits.n; i++)
        if (c2_walk_sparse(w, g->sparse_inits.p[i], g))
            return -1;
    for (IrNode *n = g->first; n; n = n->next) {
        if (w->fn(w, C2_NODE, &n->unk, n, g))
            return -1;
        for (size_t i = 0; i < n->n_attr; i++)
            if (c2_walk_attr(w, n->attr[i], g))
                return -1;
    }
    return 0;
}

static int c2_walk_top(IrGraph *g, const IrWalkAt *at, void *w)
{
    return c2_walk_graph(w, g);
}

/* The top graphs come from ir_each_graph; below them c2_walk_graph goes
 * on by itself, since it visits every message in file order (a node's
 * attributes, subgraphs among them, before the next node), and the
 * first hit is the one reported. */
static int c2_walk(C2Walk *w, IrModel *m)
{
    if (w->fn(w, C2_MODEL, &m->unk, m, m->graph))
        return -1;
    return ir_each_graph(m, IR_WALK_MAIN | IR_WALK_TRAINING | IR_WALK_FUNCTIONS, c2_walk_top,
                         w) ? -1 : 0;
}

/* The table index of unknown field f of message msg, or -1 when it is not
 * variant data. */
static int c2_index(C2Msg msg, const IrUnknownField *f)
{
    if (c2_wire_num(f->tag) == f->tag)
        return -1;
    return c2_find(msg, f->tag - C2_TAG_BASE);
}

/* ---- counting -------------------------------------------------------- */

static int c2_count_one(C2Walk *w, C2Msg msg, IrUnknown *u, void *owner, IrGraph *g)
{
    (void)owner;
    (void)g;
    for (size_t i = 0; i < u->n; i++) {
        int k = c2_index(msg, &u->f[i]);
        if (k >= 0)
            w->counts[k]++;
    }
    return 0;
}

size_t c2_count(const IrModel *m, size_t *counts)
{
    memset(counts, 0, C2_N * sizeof *counts);
    C2Walk w = {.fn = c2_count_one, .counts = counts};
    /* The walk only reads; the callbacks take non-const pointers because
     * standardizing shares the walk. */
    (void)c2_walk(&w, (IrModel *)m);
    size_t total = 0;
    for (size_t i = 0; i < C2_N; i++)
        total += counts[i];
    return total;
}

/* ---- standardizing ----------------------------------------------------- */

/* Reads one varint of p[0..len) at *i; false when it runs past the end. */
static bool c2_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *i < len; shift += 7) {
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* The payload of a length-delimited unknown field (protobuf-c keeps the
 * length in front of it); false when malformed. */
static bool c2_payload(const IrUnknownField *f, const uint8_t **p, size_t *n)
{
    size_t i = 0;
    uint64_t len;
    if (f->wire_type != 2 || !c2_varint(f->data, f->len, &i, &len) || len != f->len - i)
        return false;
    *p = f->data + i;
    *n = (size_t)len;
    return true;
}

/* Collects the strides of tensor t (packed or one varint per field) into
 * s[0 .. *n), at most cap. False on a malformed or overlong list. */
static bool c2_strides(const IrUnknown *u, int64_t *s, size_t cap, size_t *n)
{
    *n = 0;
    for (size_t k = 0; k < u->n; k++) {
        const IrUnknownField *f = &u->f[k];
        if (c2_index(C2_TENSOR, f) < 0 || C2_FIELDS[c2_index(C2_TENSOR, f)].fate != C2_STRIDES)
            continue;
        const uint8_t *p = f->data;
        size_t len = f->len;
        if (f->wire_type != 0 && !c2_payload(f, &p, &len))
            return false;
        size_t i = 0;
        while (i < len) {
            uint64_t v;
            if (*n == cap || !c2_varint(p, len, &i, &v))
                return false;
            s[(*n)++] = (int64_t)v;
            if (f->wire_type == 0)
                break;
        }
    }
    return true;
}

/* True when strides s[0..n) are what ONNX assumes for t: row-major and
 * dense (a dimension of size 1 may have any stride; an empty tensor has
 * no layout). */
static bool c2_row_major(const IrTensor *t, const int64_t *s, size_t n)
{
    if (n != t->ndims)
        return false;
    for (size_t k = 0; k < n; k++)
        if (t->dims[k] == 0)
            return true;
    int64_t want = 1;
    for (size_t k = n; k-- > 0;) {
        if (t->dims[k] != 1 && s[k] != want)
            return false;
        if (t->dims[k] > 0 && want > INT64_MAX / t->dims[k])
            return false;
        want *= t->dims[k];
    }
    return true;
}

static const char *c2_tname(const IrTensor *t)
{
    return t->name && *t->name ? t->name : "(unnamed)";
}

/* Refuses a tensor whose strides ONNX cannot express. */
static int c2_check_strides(C2Walk *w, const IrTensor *t)
{
    int64_t s[64];
    size_t n;
    if (!c2_strides(&t->unk, s, 64, &n) || !c2_row_major(t, s, n))
        return ir_fail(w->err, "tensor '%s': its PyTorch/Caffe2 TensorProto.strides "
                       "are not the row-major layout ONNX assumes; the data "
                       "would be read in the wrong order", c2_tname(t));
    return 0;
}

static bool c2_has_data(const IrTensor *t)
{
    return t->has_raw || t->n_float || t->n_int32 || t->n_string || t->n_int64 ||
           t->n_double || t->n_uint64 || t->external_data.n;
}

/* A malloc'ed copy of n elements of `size` bytes (NULL for none). */
static void *c2_dup(const void *p, size_t n, size_t size)
{
    if (!n || !p)
        return NULL;
    size_t bytes;
    if (!mem_mul_size(n, size, &bytes))
        abort(); /* the source array already has this size */
    void *q = mem_alloc(bytes);
    memcpy(q, p, bytes);
    return q;
}

/* Gives t (which has no data) a copy of src's data, type and dims. */
static void c2_copy_data(IrTensor *t, const IrTensor *src)
{
    if (!t->has_data_type) {
        t->has_data_type = src->has_data_type;
        t->data_type = src->data_type;
    }
    if (!t->ndims && src->ndims) {
        t->ndims = src->ndims;
        t->dims = c2_dup(src->dims, src->ndims, sizeof *src->dims);
    }
    t->n_float = src->n_float;
    t->float_data = c2_dup(src->float_data, src->n_float, sizeof(float));
    t->n_int32 = src->n_int32;
    t->int32_data = c2_dup(src->int32_data, src->n_int32, sizeof(int32_t));
    t->n_int64 = src->n_int64;
    t->int64_data = c2_dup(src->int64_data, src->n_int64, sizeof(int64_t));
    t->n_double = src->n_double;
    t->double_data = c2_dup(src->double_data, src->n_double, sizeof(double));
    t->n_uint64 = src->n_uint64;
    t->uint64_data = c2_dup(src->uint64_data, src->n_uint64, sizeof(uint64_t));
    t->n_string = src->n_string;
    t->string_data = mem_array(src->n_string + 1, sizeof *t->string_data);
    for (size_t i = 0; i < src->n_string; i++)
        t->string_data[i] = (IrBytes){src->string_data[i].len,
            c2_dup(src->string_data[i].data, src->string_data[i].len, 1)};
    const uint8_t *raw = src->has_raw ? src->raw.data : src->ext.data;
    size_t raw_len = src->has_raw ? src->raw.len : src->ext.len;
    if (src->has_raw || (src->ext.bound && src->ext.data)) {
        t->has_raw = true;
        t->raw = (IrBytes){raw_len, c2_dup(raw, raw_len, 1)};
    }
}

/* TensorProto.alias: "this tensor has the content of the initializer
 * named so". A tensor without data of its own takes a copy. */
static int c2_alias(C2Walk *w, IrTensor *t, const IrUnknownField *f, IrGraph *g)
{
    if (c2_has_data(t))
        return 0;
    char name[256];
    const uint8_t *p;
    size_t len;
    if (!c2_payload(f, &p, &len) || len >= sizeof name || memchr(p, 0, len))
        return ir_fail(w->err, "tensor '%s': malformed PyTorch/Caffe2 "
                       "TensorProto.alias", c2_tname(t));
    memcpy(name, p, len);
    name[len] = '\0';
    IrValue *v = g ? ir_graph_lookup(g, name) : NULL;
    if (!v || !v->init || v->init == t || !c2_has_data(v->init))
        return ir_fail(w->err, "tensor '%s': its PyTorch/Caffe2 TensorProto.alias "
                       "names '%s', which is no initializer with data",
                       c2_tname(t), name);
    c2_copy_data(t, v->init);
    return 0;
}

/* What happens to field k (the table index) of a list: 1 keep (renamed to
 * its own number), 0 remove. */
static int c2_fate(C2Walk *w, C2Msg msg, void *owner, IrGraph *g,
                   const IrUnknownField *f, int k, int *keep)
{
    const C2Field *d = &C2_FIELDS[k];
    *keep = 0;
    switch (d->fate) {
    case C2_EXTFILE:
        return ir_fail(w->err, "tensor '%s': its data is in the file named by "
                       "PyTorch/Caffe2 TensorProto.external_data, which this "
                       "tool does not read", c2_tname(owner));
    case C2_STRIDES:
        if (c2_check_strides(w, owner))
            return -1;
        break;
    case C2_ALIAS:
        if (c2_alias(w, owner, f, g))
            return -1;
        break;
    case C2_DROP:
        break;
    }
    (void)msg;
    if (w->keep && !d->onnx && d->fate == C2_DROP)
        *keep = 1;
    else if (d->fate != C2_ALIAS)
        w->counts[k]++;
    return 0;
}

/* Refuses the variant's SPECIAL element type (51), which ONNX never
 * defined: written as it is, the model would name a type no reader has. */
static int c2_check_dtype(C2Walk *w, C2Msg msg, const void *owner)
{
    if (msg == C2_TENSOR) {
        const IrTensor *t = owner;
        if (t->has_data_type && t->data_type == C2_DTYPE_SPECIAL)
            return ir_fail(w->err, "tensor '%s': element type SPECIAL (%d) of "
                           "PyTorch/Caffe2 has no ONNX equivalent", c2_tname(t),
                           C2_DTYPE_SPECIAL);
    }
    if (msg == C2_TYPE) {
        const IrType *t = owner;
        if (t->has_elem_type && t->elem_type == C2_DTYPE_SPECIAL)
            return ir_fail(w->err, "value '%s': element type SPECIAL (%d) of "
                           "PyTorch/Caffe2 has no ONNX equivalent",
                           w->value ? w->value : "", C2_DTYPE_SPECIAL);
    }
    return 0;
}

static int c2_std_one(C2Walk *w, C2Msg msg, IrUnknown *u, void *owner, IrGraph *g)
{
    if (c2_check_dtype(w, msg, owner))
        return -1;
    size_t out = 0;
    int rc = 0;
    for (size_t i = 0; i < u->n; i++) {
        IrUnknownField f = u->f[i];
        int k = c2_index(msg, &f);
        int keep = 1;
        if (k >= 0 && rc == 0 && c2_fate(w, msg, owner, g, &f, k, &keep))
            rc = -1;
        if (k >= 0 && rc == 0 && keep)
            f.tag = C2_FIELDS[k].num;
        if (k >= 0 && rc == 0 && !keep) {
            free(f.data);
            continue;
        }
        u->f[out++] = f;
    }
    u->n = out;
    return rc;
}

/* Resolves the aliases of one list's tensor (failures are left for
 * check and convert to name). */
static int c2_adopt_one(C2Walk *w, C2Msg msg, IrUnknown *u, void *owner, IrGraph *g)
{
    for (size_t i = 0; msg == C2_TENSOR && i < u->n; i++) {
        int k = c2_index(msg, &u->f[i]);
        if (k >= 0 && C2_FIELDS[k].fate == C2_ALIAS)
            (void)c2_alias(w, owner, &u->f[i], g);
    }
    return 0;
}

void c2_adopt(IrModel *m)
{
    IrError ignored;
    C2Walk w = {.fn = c2_adopt_one, .err = &ignored};
    (void)c2_walk(&w, m);
}

int c2_standardize(IrModel *m, bool keep, size_t *dropped, IrError *err)
{
    memset(dropped, 0, C2_N * sizeof *dropped);
    C2Walk w = {.fn = c2_std_one, .counts = dropped, .keep = keep, .err = err};
    if (c2_walk(&w, m))
        return -1;
    m->ir_version = 3;
    m->has_ir_version = true;
    return 0;
}
