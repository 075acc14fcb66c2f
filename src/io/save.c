/*
 * save.c - IR to .onnx bytes (prefix save_).
 *
 * The IR is turned into a skeleton of protobuf-c message structs whose
 * strings, arrays and tensor bytes point into the IR itself; the skeleton
 * lives in an arena freed in one call. protobuf-c then packs it straight
 * into the output stream, so no second copy of the weights is ever made.
 * Nothing here writes to the IR (the casts from const are for protobuf-c's
 * non-const field types only).
 */
#include "io/save.h"

#include "ir/caffe2.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/guard.h"
#include "io/load.h"
#include "onnx.pb-c.h"
#include "io/save_out.h"

/* ---- arena for the skeleton ------------------------------------------ */

typedef struct SaveChunk {
    struct SaveChunk *next;
    size_t used, cap;
    max_align_t data[];
} SaveChunk;

/* One file's worth of external tensor bytes to write. */
typedef struct SaveExtWrite {
    const char *location;   /* relative name beside the model */
    Onnx__StringStringEntryProto *entry; /* the skeleton's location entry,
                                            renamed when the file is */
    char *norm;             /* location with "." and empty steps dropped */
    uint64_t offset;
    const uint8_t *data;
    size_t len;
} SaveExtWrite;

typedef struct SaveCtx {
    SaveChunk *chunks;
    const SaveOptions *opt;
    size_t n_ext, cap_ext;
    SaveExtWrite *ext;      /* bytes the side files must hold */
    uint64_t side_end;      /* next free offset in opt->external_file */
    IrError *err;
    int failed;
    const IrModel *model;   /* whose mappings the side files copy from */
    bool collect;           /* only list external locations (of a model
                               loaded without its external data) */
    uint64_t inline_bytes;  /* tensor payload bytes inside the message */
} SaveCtx;

/* Zeroed memory that lives until save_ctx_free. */
static void *save_alloc(SaveCtx *c, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!n)
        n = sizeof(max_align_t);
    SaveChunk *k = c->chunks;
    if (!k || k->cap - k->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        k = mem_alloc(sizeof *k + cap);
        k->cap = cap;
        k->next = c->chunks;
        c->chunks = k;
    }
    void *p = (char *)k->data + k->used;
    k->used += n;
    memset(p, 0, n);
    return p;
}

static void *save_array(SaveCtx *c, size_t n, size_t size)
{
    size_t total;
    if (!mem_mul_size(n, size, &total))
        abort(); /* n counts objects already in memory */
    return save_alloc(c, total);
}

static void save_ctx_free(SaveCtx *c)
{
    while (c->chunks) {
        SaveChunk *n = c->chunks->next;
        free(c->chunks);
        c->chunks = n;
    }
    free(c->ext);
}

/* ---- small pieces ------------------------------------------------------ */

static void save_unknown(SaveCtx *c, ProtobufCMessage *m, const IrUnknown *u)
{
    if (!u->n)
        return;
    m->n_unknown_fields = u->n;
    m->unknown_fields = save_array(c, u->n, sizeof *m->unknown_fields);
    for (size_t i = 0; i < u->n; i++) {
        ProtobufCMessageUnknownField *f = &m->unknown_fields[i];
        /* Variant data goes back under the variant's own number. */
        f->tag = c2_wire_num(u->f[i].tag);
        f->wire_type = (ProtobufCWireType)u->f[i].wire_type;
        f->len = u->f[i].len;
        f->data = u->f[i].data;
    }
}

static ProtobufCBinaryData save_bytes(const IrBytes *b)
{
    return (ProtobufCBinaryData){b->len, b->data};
}

static ProtobufCBinaryData *save_bytes_list(SaveCtx *c, size_t n,
                                            const IrBytes *b)
{
    ProtobufCBinaryData *d = save_array(c, n, sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = save_bytes(&b[i]);
    return d;
}

static Onnx__StringStringEntryProto **save_strmap(SaveCtx *c,
                                                  const IrStrMap *m)
{
    Onnx__StringStringEntryProto **e = save_array(c, m->n, sizeof *e);
    for (size_t i = 0; i < m->n; i++) {
        e[i] = save_alloc(c, sizeof **e);
        onnx__string_string_entry_proto__init(e[i]);
        e[i]->key = m->p[i].key;
        e[i]->value = m->p[i].value;
        save_unknown(c, &e[i]->base, &m->p[i].unk);
    }
    return e;
}

static Onnx__OperatorSetIdProto **save_opsets(SaveCtx *c, size_t n,
                                              const IrOpset *o)
{
    Onnx__OperatorSetIdProto **e = save_array(c, n, sizeof *e);
    for (size_t i = 0; i < n; i++) {
        e[i] = save_alloc(c, sizeof **e);
        onnx__operator_set_id_proto__init(e[i]);
        e[i]->domain = o[i].domain;
        e[i]->has_version = o[i].has_version;
        e[i]->version = o[i].version;
        save_unknown(c, &e[i]->base, &o[i].unk);
    }
    return e;
}

/* ---- types ------------------------------------------------------------- */

static Onnx__TensorShapeProto *save_shape(SaveCtx *c, const IrShape *s)
{
    if (!s)
        return NULL;
    Onnx__TensorShapeProto *sp = save_alloc(c, sizeof *sp);
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = s->rank;
    sp->dim = save_array(c, s->rank, sizeof *sp->dim);
    for (size_t i = 0; i < s->rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = save_alloc(c, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        const IrDim *o = &s->dims[i];
        if (o->kind == IR_DIM_VALUE) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = o->value;
        } else if (o->kind == IR_DIM_PARAM) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = o->param ? o->param : "";
        }
        d->denotation = o->denotation;
        save_unknown(c, &d->base, &o->unk);
        sp->dim[i] = d;
    }
    save_unknown(c, &sp->base, &s->unk);
    return sp;
}

static Onnx__TypeProto *save_type(SaveCtx *c, const IrType *t);

/* The oneof member of a TypeProto. */
static void save_type_member(SaveCtx *c, const IrType *t, Onnx__TypeProto *tp)
{
    switch (t->kind) {
    case IR_TYPE_TENSOR:
    case IR_TYPE_SPARSE_TENSOR: {
        /* TypeProto.Tensor and .SparseTensor share one layout. */
        Onnx__TypeProto__Tensor *x = save_alloc(c, sizeof *x);
        if (t->kind == IR_TYPE_TENSOR) {
            onnx__type_proto__tensor__init(x);
            tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
            tp->tensor_type = x;
        } else {
            onnx__type_proto__sparse_tensor__init(
                (Onnx__TypeProto__SparseTensor *)x);
            tp->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
            tp->sparse_tensor_type = (Onnx__TypeProto__SparseTensor *)x;
        }
        x->has_elem_type = t->has_elem_type;
        x->elem_type = t->elem_type;
        x->shape = save_shape(c, t->shape);
        save_unknown(c, &x->base, &t->inner_unk);
        break;
    }
    case IR_TYPE_SEQUENCE: {
        Onnx__TypeProto__Sequence *x = save_alloc(c, sizeof *x);
        onnx__type_proto__sequence__init(x);
        x->elem_type = save_type(c, t->elem);
        save_unknown(c, &x->base, &t->inner_unk);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        tp->sequence_type = x;
        break;
    }
    case IR_TYPE_OPTIONAL: {
        Onnx__TypeProto__Optional *x = save_alloc(c, sizeof *x);
        onnx__type_proto__optional__init(x);
        x->elem_type = save_type(c, t->elem);
        save_unknown(c, &x->base, &t->inner_unk);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
        tp->optional_type = x;
        break;
    }
    case IR_TYPE_MAP: {
        Onnx__TypeProto__Map *x = save_alloc(c, sizeof *x);
        onnx__type_proto__map__init(x);
        x->has_key_type = t->has_key_type;
        x->key_type = t->key_type;
        x->value_type = save_type(c, t->elem);
        save_unknown(c, &x->base, &t->inner_unk);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        tp->map_type = x;
        break;
    }
    case IR_TYPE_OPAQUE: {
        Onnx__TypeProto__Opaque *x = save_alloc(c, sizeof *x);
        onnx__type_proto__opaque__init(x);
        x->domain = t->opaque_domain;
        x->name = t->opaque_name;
        save_unknown(c, &x->base, &t->inner_unk);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE;
        tp->opaque_type = x;
        break;
    }
    default:
        break;
    }
}

static Onnx__TypeProto *save_type(SaveCtx *c, const IrType *t)
{
    if (!t)
        return NULL;
    Onnx__TypeProto *tp = save_alloc(c, sizeof *tp);
    onnx__type_proto__init(tp);
    save_type_member(c, t, tp);
    tp->denotation = t->denotation;
    save_unknown(c, &tp->base, &t->unk);
    return tp;
}

/* ---- tensors ------------------------------------------------------------ */

static void save_ext_push(SaveCtx *c, const char *loc,
                          Onnx__StringStringEntryProto *entry, uint64_t off,
                          const uint8_t *data, size_t len)
{
    if (c->n_ext == c->cap_ext) {
        c->cap_ext = c->cap_ext ? c->cap_ext * 2 : 16;
        c->ext = mem_grow(c->ext, c->cap_ext, sizeof *c->ext);
    }
    c->ext[c->n_ext++] = (SaveExtWrite){loc, entry, NULL, off, data, len};
}

/* The offset a bound external tensor had, from its external_data keys. */
static uint64_t save_ext_offset(const IrTensor *t)
{
    for (size_t i = 0; i < t->external_data.n; i++) {
        const IrStrPair *p = &t->external_data.p[i];
        if (p->key && p->value && !strcmp(p->key, "offset"))
            return strtoull(p->value, NULL, 10);
    }
    return 0;
}

static const char *save_ext_location(const IrTensor *t)
{
    for (size_t i = 0; i < t->external_data.n; i++) {
        const IrStrPair *p = &t->external_data.p[i];
        if (p->key && !strcmp(p->key, "location"))
            return p->value;
    }
    return NULL;
}

/* Moves a tensor's payload into the one side file the options name: the
 * proto gets location/offset/length and loses raw_data. */
static void save_to_side_file(SaveCtx *c, const IrTensor *t,
                              Onnx__TensorProto *tp, const uint8_t *data,
                              size_t len)
{
    /* 4096-byte alignment lets readers map each tensor directly. */
    uint64_t off = (c->side_end + 4095) / 4096 * 4096;
    c->side_end = off + len;
    tp->has_raw_data = 0;
    tp->raw_data = (ProtobufCBinaryData){0, NULL};
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp->n_external_data = 3;
    tp->external_data = save_array(c, 3, sizeof *tp->external_data);
    const char *keys[3] = {"location", "offset", "length"};
    for (int i = 0; i < 3; i++) {
        Onnx__StringStringEntryProto *e = save_alloc(c, sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = (char *)keys[i];
        if (i == 0) {
            e->value = (char *)c->opt->external_file;
        } else {
            e->value = save_alloc(c, 24);
            snprintf(e->value, 24, "%llu",
                     (unsigned long long)(i == 1 ? off : len));
        }
        tp->external_data[i] = e;
    }
    save_ext_push(c, c->opt->external_file, tp->external_data[0], off, data,
                  len);
}

/* Decides where an external or large tensor's bytes go. */
static void save_tensor_payload(SaveCtx *c, const IrTensor *t,
                                Onnx__TensorProto *tp)
{
    bool external = t->has_data_location && t->data_location == 1;
    if (external && c->collect) {
        const char *loc = save_ext_location(t);
        if (loc)
            save_ext_push(c, loc, NULL, 0, NULL, 0);
        return;
    }
    if (external && !t->ext.bound) {
        c->failed = 1;
        ir_fail(c->err, "tensor '%s': external data was not loaded",
                t->name ? t->name : "");
        return;
    }
    const SaveOptions *o = c->opt;
    if (o && o->external_file) {
        const uint8_t *data = external ? t->ext.data : t->raw.data;
        size_t len = external ? t->ext.len : t->raw.len;
        if ((external || t->has_raw) && len >= o->external_threshold) {
            save_to_side_file(c, t, tp, data, len);
            return;
        }
        if (external) {
            /* Too small for the side file: bring it back inline. */
            tp->has_data_location = 0;
            tp->n_external_data = 0;
            tp->has_raw_data = 1;
            tp->raw_data = (ProtobufCBinaryData){len, (uint8_t *)data};
        }
        return;
    }
    if (external) {
        const char *loc = save_ext_location(t);
        Onnx__StringStringEntryProto *e = NULL;
        for (size_t i = 0; i < tp->n_external_data && !e; i++)
            if (tp->external_data[i]->key &&
                !strcmp(tp->external_data[i]->key, "location"))
                e = tp->external_data[i];
        if (loc)
            save_ext_push(c, loc, e, save_ext_offset(t), t->ext.data,
                          t->ext.len);
    }
}

static Onnx__TensorProto *save_tensor(SaveCtx *c, const IrTensor *t)
{
    if (!t)
        return NULL;
    Onnx__TensorProto *tp = save_alloc(c, sizeof *tp);
    onnx__tensor_proto__init(tp);
    tp->name = t->name;
    tp->doc_string = t->doc_string;
    tp->has_data_type = t->has_data_type;
    tp->data_type = t->data_type;
    tp->n_dims = t->ndims;
    tp->dims = t->dims;
    if (t->segment) {
        Onnx__TensorProto__Segment *s = save_alloc(c, sizeof *s);
        onnx__tensor_proto__segment__init(s);
        s->has_begin = t->segment->has_begin;
        s->begin = t->segment->begin;
        s->has_end = t->segment->has_end;
        s->end = t->segment->end;
        save_unknown(c, &s->base, &t->segment->unk);
        tp->segment = s;
    }
    tp->n_float_data = t->n_float;
    tp->float_data = t->float_data;
    tp->n_int32_data = t->n_int32;
    tp->int32_data = t->int32_data;
    tp->n_string_data = t->n_string;
    tp->string_data = save_bytes_list(c, t->n_string, t->string_data);
    tp->n_int64_data = t->n_int64;
    tp->int64_data = t->int64_data;
    tp->n_double_data = t->n_double;
    tp->double_data = t->double_data;
    tp->n_uint64_data = t->n_uint64;
    tp->uint64_data = t->uint64_data;
    tp->has_raw_data = t->has_raw;
    tp->raw_data = save_bytes(&t->raw);
    tp->n_external_data = t->external_data.n;
    tp->external_data = save_strmap(c, &t->external_data);
    tp->has_data_location = t->has_data_location;
    tp->data_location = (Onnx__TensorProto__DataLocation)t->data_location;
    tp->n_metadata_props = t->meta.n;
    tp->metadata_props = save_strmap(c, &t->meta);
    save_unknown(c, &tp->base, &t->unk);
    save_tensor_payload(c, t, tp);
    c->inline_bytes += tp->raw_data.len + 4 * (t->n_float + t->n_int32) +
                       8 * (t->n_int64 + t->n_double + t->n_uint64);
    for (size_t i = 0; i < t->n_string; i++)
        c->inline_bytes += t->string_data[i].len;
    return tp;
}

static Onnx__SparseTensorProto *save_sparse(SaveCtx *c, const IrSparse *s)
{
    Onnx__SparseTensorProto *sp = save_alloc(c, sizeof *sp);
    onnx__sparse_tensor_proto__init(sp);
    sp->values = save_tensor(c, s->values);
    sp->indices = save_tensor(c, s->indices);
    sp->n_dims = s->ndims;
    sp->dims = s->dims;
    save_unknown(c, &sp->base, &s->unk);
    return sp;
}

/* ---- graphs ------------------------------------------------------------- */

static Onnx__GraphProto *save_graph(SaveCtx *c, const IrGraph *g);

static Onnx__AttributeProto *save_attr(SaveCtx *c, const IrAttr *a)
{
    Onnx__AttributeProto *ap = save_alloc(c, sizeof *ap);
    onnx__attribute_proto__init(ap);
    ap->name = a->name;
    ap->ref_attr_name = a->ref_attr_name;
    ap->doc_string = a->doc_string;
    ap->has_type = a->has_type;
    ap->type = (Onnx__AttributeProto__AttributeType)a->type;
    ap->has_f = a->has_f;
    ap->f = a->f;
    ap->has_i = a->has_i;
    ap->i = a->i;
    ap->has_s = a->has_s;
    ap->s = save_bytes(&a->s);
    ap->t = save_tensor(c, a->t);
    ap->g = a->g ? save_graph(c, a->g) : NULL;
    ap->sparse_tensor = a->sparse_tensor ? save_sparse(c, a->sparse_tensor) : NULL;
    ap->tp = save_type(c, a->tp);
    ap->n_floats = a->n_floats;
    ap->floats = a->floats;
    ap->n_ints = a->n_ints;
    ap->ints = a->ints;
    ap->n_strings = a->n_strings;
    ap->strings = save_bytes_list(c, a->n_strings, a->strings);
    ap->n_tensors = a->n_tensors;
    ap->tensors = save_array(c, a->n_tensors, sizeof *ap->tensors);
    for (size_t i = 0; i < a->n_tensors; i++)
        ap->tensors[i] = save_tensor(c, a->tensors[i]);
    ap->n_graphs = a->n_graphs;
    ap->graphs = save_array(c, a->n_graphs, sizeof *ap->graphs);
    for (size_t i = 0; i < a->n_graphs; i++)
        ap->graphs[i] = save_graph(c, a->graphs[i]);
    ap->n_sparse_tensors = a->n_sparse;
    ap->sparse_tensors = save_array(c, a->n_sparse, sizeof *ap->sparse_tensors);
    for (size_t i = 0; i < a->n_sparse; i++)
        ap->sparse_tensors[i] = save_sparse(c, a->sparse_tensors[i]);
    ap->n_type_protos = a->n_tps;
    ap->type_protos = save_array(c, a->n_tps, sizeof *ap->type_protos);
    for (size_t i = 0; i < a->n_tps; i++)
        ap->type_protos[i] = save_type(c, a->type_protos[i]);
    save_unknown(c, &ap->base, &a->unk);
    return ap;
}

static Onnx__ShardingSpecProto *save_shard_spec(SaveCtx *c,
                                                const IrShardSpec *s)
{
    Onnx__ShardingSpecProto *sp = save_alloc(c, sizeof *sp);
    onnx__sharding_spec_proto__init(sp);
    sp->tensor_name = s->tensor_name;
    sp->n_device = s->n_device;
    sp->device = s->device;
    sp->n_index_to_device_group_map = s->n_groups;
    sp->index_to_device_group_map = save_array(c, s->n_groups, sizeof(void *));
    for (size_t i = 0; i < s->n_groups; i++) {
        Onnx__IntIntListEntryProto *e = save_alloc(c, sizeof *e);
        onnx__int_int_list_entry_proto__init(e);
        e->has_key = s->groups[i].has_key;
        e->key = s->groups[i].key;
        e->n_value = s->groups[i].n;
        e->value = s->groups[i].v;
        save_unknown(c, &e->base, &s->groups[i].unk);
        sp->index_to_device_group_map[i] = e;
    }
    sp->n_sharded_dim = s->n_dims;
    sp->sharded_dim = save_array(c, s->n_dims, sizeof(void *));
    for (size_t i = 0; i < s->n_dims; i++) {
        const IrShardedDim *d = &s->dims[i];
        Onnx__ShardedDimProto *dp = save_alloc(c, sizeof *dp);
        onnx__sharded_dim_proto__init(dp);
        dp->has_axis = d->has_axis;
        dp->axis = d->axis;
        dp->n_simple_sharding = d->n;
        dp->simple_sharding = save_array(c, d->n, sizeof(void *));
        for (size_t j = 0; j < d->n; j++) {
            const IrSimpleShard *y = &d->simple[j];
            Onnx__SimpleShardedDimProto *x = save_alloc(c, sizeof *x);
            onnx__simple_sharded_dim_proto__init(x);
            if (y->kind == IR_DIM_VALUE) {
                x->dim_case = ONNX__SIMPLE_SHARDED_DIM_PROTO__DIM_DIM_VALUE;
                x->dim_value = y->dim_value;
            } else if (y->kind == IR_DIM_PARAM) {
                x->dim_case = ONNX__SIMPLE_SHARDED_DIM_PROTO__DIM_DIM_PARAM;
                x->dim_param = y->dim_param ? y->dim_param : "";
            }
            x->has_num_shards = y->has_num_shards;
            x->num_shards = y->num_shards;
            save_unknown(c, &x->base, &y->unk);
            dp->simple_sharding[j] = x;
        }
        save_unknown(c, &dp->base, &d->unk);
        sp->sharded_dim[i] = dp;
    }
    save_unknown(c, &sp->base, &s->unk);
    return sp;
}

static void save_devcfgs(SaveCtx *c, const IrNode *n, Onnx__NodeProto *np)
{
    np->n_device_configurations = n->n_devcfg;
    np->device_configurations = save_array(c, n->n_devcfg, sizeof(void *));
    for (size_t i = 0; i < n->n_devcfg; i++) {
        const IrNodeDevCfg *d = &n->devcfg[i];
        Onnx__NodeDeviceConfigurationProto *dp = save_alloc(c, sizeof *dp);
        onnx__node_device_configuration_proto__init(dp);
        dp->configuration_id = d->configuration_id;
        dp->n_sharding_spec = d->n_specs;
        dp->sharding_spec = save_array(c, d->n_specs, sizeof(void *));
        for (size_t j = 0; j < d->n_specs; j++)
            dp->sharding_spec[j] = save_shard_spec(c, &d->specs[j]);
        dp->has_pipeline_stage = d->has_pipeline_stage;
        dp->pipeline_stage = d->pipeline_stage;
        save_unknown(c, &dp->base, &d->unk);
        np->device_configurations[i] = dp;
    }
}

/* Value names as a string list; a left-out optional slot is "". */
static char **save_names(SaveCtx *c, size_t n, IrValue *const *v)
{
    char **s = save_array(c, n, sizeof *s);
    for (size_t i = 0; i < n; i++)
        s[i] = v[i] ? v[i]->name : "";
    return s;
}

static Onnx__NodeProto *save_node(SaveCtx *c, const IrNode *n)
{
    Onnx__NodeProto *np = save_alloc(c, sizeof *np);
    onnx__node_proto__init(np);
    np->n_input = n->n_in;
    np->input = save_names(c, n->n_in, n->in);
    np->n_output = n->n_out;
    np->output = save_names(c, n->n_out, n->out);
    np->name = n->name;
    np->op_type = n->op_type;
    np->domain = n->domain;
    np->overload = n->overload;
    np->doc_string = n->doc_string;
    np->n_attribute = n->n_attr;
    np->attribute = save_array(c, n->n_attr, sizeof *np->attribute);
    for (size_t i = 0; i < n->n_attr; i++)
        np->attribute[i] = save_attr(c, n->attr[i]);
    np->n_metadata_props = n->meta.n;
    np->metadata_props = save_strmap(c, &n->meta);
    save_devcfgs(c, n, np);
    save_unknown(c, &np->base, &n->unk);
    return np;
}

static Onnx__ValueInfoProto *save_valueinfo(SaveCtx *c, const IrValueInfo *vi)
{
    Onnx__ValueInfoProto *vp = save_alloc(c, sizeof *vp);
    onnx__value_info_proto__init(vp);
    vp->name = vi->name_absent ? NULL : vi->value->name;
    vp->type = save_type(c, vi->type);
    vp->doc_string = vi->doc_string;
    vp->n_metadata_props = vi->meta.n;
    vp->metadata_props = save_strmap(c, &vi->meta);
    save_unknown(c, &vp->base, &vi->unk);
    return vp;
}

static Onnx__ValueInfoProto **save_vilist(SaveCtx *c, const IrPtrList *l)
{
    Onnx__ValueInfoProto **v = save_array(c, l->n, sizeof *v);
    for (size_t i = 0; i < l->n; i++)
        v[i] = save_valueinfo(c, l->p[i]);
    return v;
}

static Onnx__NodeProto **save_nodes(SaveCtx *c, const IrGraph *g)
{
    Onnx__NodeProto **v = save_array(c, g->n_nodes, sizeof *v);
    size_t i = 0;
    for (const IrNode *n = g->first; n && i < g->n_nodes; n = n->next)
        v[i++] = save_node(c, n);
    return v;
}

static Onnx__GraphProto *save_graph(SaveCtx *c, const IrGraph *g)
{
    Onnx__GraphProto *gp = save_alloc(c, sizeof *gp);
    onnx__graph_proto__init(gp);
    gp->n_node = g->n_nodes;
    gp->node = save_nodes(c, g);
    gp->name = g->name;
    gp->n_initializer = g->inits.n;
    gp->initializer = save_array(c, g->inits.n, sizeof *gp->initializer);
    for (size_t i = 0; i < g->inits.n; i++)
        gp->initializer[i] = save_tensor(c, g->inits.p[i]);
    gp->n_sparse_initializer = g->sparse_inits.n;
    gp->sparse_initializer = save_array(c, g->sparse_inits.n, sizeof(void *));
    for (size_t i = 0; i < g->sparse_inits.n; i++)
        gp->sparse_initializer[i] = save_sparse(c, g->sparse_inits.p[i]);
    gp->doc_string = g->doc_string;
    gp->n_input = g->inputs.n;
    gp->input = save_vilist(c, &g->inputs);
    gp->n_output = g->outputs.n;
    gp->output = save_vilist(c, &g->outputs);
    gp->n_value_info = g->value_info.n;
    gp->value_info = save_vilist(c, &g->value_info);
    gp->n_quantization_annotation = g->n_qann;
    gp->quantization_annotation = save_array(c, g->n_qann, sizeof(void *));
    for (size_t i = 0; i < g->n_qann; i++) {
        Onnx__TensorAnnotation *a = save_alloc(c, sizeof *a);
        onnx__tensor_annotation__init(a);
        a->tensor_name = g->qann[i].tensor_name;
        a->n_quant_parameter_tensor_names = g->qann[i].params.n;
        a->quant_parameter_tensor_names = save_strmap(c, &g->qann[i].params);
        save_unknown(c, &a->base, &g->qann[i].unk);
        gp->quantization_annotation[i] = a;
    }
    gp->n_metadata_props = g->meta.n;
    gp->metadata_props = save_strmap(c, &g->meta);
    save_unknown(c, &gp->base, &g->unk);
    return gp;
}

/* A function body's formal inputs/outputs are bare names. */
static char **save_vinames(SaveCtx *c, const IrPtrList *l)
{
    char **s = save_array(c, l->n, sizeof *s);
    for (size_t i = 0; i < l->n; i++)
        s[i] = ((IrValueInfo *)l->p[i])->value->name;
    return s;
}

static Onnx__FunctionProto *save_function(SaveCtx *c, const IrFunction *f)
{
    Onnx__FunctionProto *fp = save_alloc(c, sizeof *fp);
    onnx__function_proto__init(fp);
    const IrGraph *g = f->body;
    fp->name = f->name;
    fp->n_input = g->inputs.n;
    fp->input = save_vinames(c, &g->inputs);
    fp->n_output = g->outputs.n;
    fp->output = save_vinames(c, &g->outputs);
    fp->n_attribute = f->n_attr_names;
    fp->attribute = f->attr_names;
    fp->n_attribute_proto = f->n_attr;
    fp->attribute_proto = save_array(c, f->n_attr, sizeof(void *));
    for (size_t i = 0; i < f->n_attr; i++)
        fp->attribute_proto[i] = save_attr(c, f->attr[i]);
    fp->n_node = g->n_nodes;
    fp->node = save_nodes(c, g);
    fp->doc_string = f->doc_string;
    fp->n_opset_import = f->n_opsets;
    fp->opset_import = save_opsets(c, f->n_opsets, f->opsets);
    fp->domain = f->domain;
    fp->overload = f->overload;
    fp->n_value_info = g->value_info.n;
    fp->value_info = save_vilist(c, &g->value_info);
    fp->n_metadata_props = f->meta.n;
    fp->metadata_props = save_strmap(c, &f->meta);
    save_unknown(c, &fp->base, &f->unk);
    return fp;
}

static Onnx__TrainingInfoProto *save_training(SaveCtx *c, const IrTraining *t)
{
    Onnx__TrainingInfoProto *tp = save_alloc(c, sizeof *tp);
    onnx__training_info_proto__init(tp);
    tp->initialization = t->initialization ? save_graph(c, t->initialization)
                                           : NULL;
    tp->algorithm = t->algorithm ? save_graph(c, t->algorithm) : NULL;
    tp->n_initialization_binding = t->init_binding.n;
    tp->initialization_binding = save_strmap(c, &t->init_binding);
    tp->n_update_binding = t->update_binding.n;
    tp->update_binding = save_strmap(c, &t->update_binding);
    save_unknown(c, &tp->base, &t->unk);
    return tp;
}

static Onnx__DeviceConfigurationProto **save_configs(SaveCtx *c,
                                                     const IrModel *m)
{
    Onnx__DeviceConfigurationProto **v = save_array(c, m->n_configs,
                                                    sizeof *v);
    for (size_t i = 0; i < m->n_configs; i++) {
        const IrDevCfg *d = &m->configs[i];
        v[i] = save_alloc(c, sizeof *v[i]);
        onnx__device_configuration_proto__init(v[i]);
        v[i]->name = d->name;
        v[i]->has_num_devices = d->has_num_devices;
        v[i]->num_devices = d->num_devices;
        v[i]->n_device = d->n_device;
        v[i]->device = d->device;
        save_unknown(c, &v[i]->base, &d->unk);
    }
    return v;
}

/* The whole skeleton of m, or NULL with c->err set. */
static Onnx__ModelProto *save_model_msg(SaveCtx *c, const IrModel *m)
{
    Onnx__ModelProto *mp = save_alloc(c, sizeof *mp);
    onnx__model_proto__init(mp);
    mp->has_ir_version = m->has_ir_version;
    mp->ir_version = m->ir_version;
    mp->n_opset_import = m->n_opsets;
    mp->opset_import = save_opsets(c, m->n_opsets, m->opsets);
    mp->producer_name = m->producer_name;
    mp->producer_version = m->producer_version;
    mp->domain = m->domain;
    mp->has_model_version = m->has_model_version;
    mp->model_version = m->model_version;
    mp->doc_string = m->doc_string;
    mp->graph = m->graph ? save_graph(c, m->graph) : NULL;
    mp->n_metadata_props = m->meta.n;
    mp->metadata_props = save_strmap(c, &m->meta);
    mp->n_training_info = m->n_training;
    mp->training_info = save_array(c, m->n_training, sizeof(void *));
    for (size_t i = 0; i < m->n_training; i++)
        mp->training_info[i] = save_training(c, &m->training[i]);
    mp->n_functions = m->n_functions;
    mp->functions = save_array(c, m->n_functions, sizeof(void *));
    for (size_t i = 0; i < m->n_functions; i++)
        mp->functions[i] = save_function(c, m->functions[i]);
    mp->n_configuration = m->n_configs;
    mp->configuration = save_configs(c, m);
    save_unknown(c, &mp->base, &m->unk);
    return c->failed ? NULL : mp;
}

/* ---- output ---------------------------------------------------------------- */

/* A ProtobufCBuffer that streams into a FILE. */
typedef struct SaveFileBuf {
    ProtobufCBuffer base;
    FILE *f;
    int failed;
} SaveFileBuf;

static void save_file_append(ProtobufCBuffer *b, size_t len,
                             const uint8_t *data)
{
    SaveFileBuf *fb = (SaveFileBuf *)b;
    if (!fb->failed && len && fwrite(data, 1, len, fb->f) != len)
        fb->failed = 1;
}

static int save_pack_stream(const ProtobufCMessage *msg, FILE *f, IrError *err)
{
    SaveFileBuf fb = {{save_file_append}, f, 0};
    protobuf_c_message_pack_to_buffer(msg, &fb.base);
    if (fb.failed || ferror(f))
        return ir_fail(err, "write failed: %s", strerror(errno));
    return 0;
}

/* Protobuf messages are limited to 2 GiB (readers use 32-bit sizes, and
 * other tools corrupt or refuse what is bigger). */
static int save_too_big(uint64_t n, const char *what, IrError *err)
{
    return ir_fail(err, "%s: the model would be %llu bytes, over protobuf's "
                   "2 GiB limit for one message; write the weights to a side "
                   "file with --external-data FILE", what, (unsigned long long)n);
}

/* Refuses before anything is written when the tensors alone pass the
 * limit; near it, sizes the whole message (a walk over the structure, not
 * the bytes). Below half the limit, the writers count what they write. */
static int save_size_ok(const SaveCtx *c, const ProtobufCMessage *msg,
                        const char *what, IrError *err)
{
    if (c->inline_bytes > SAVE_MAX_MESSAGE)
        return save_too_big(c->inline_bytes, what, err);
    if (c->inline_bytes <= SAVE_MAX_MESSAGE / 2)
        return 0;
    size_t n = protobuf_c_message_get_packed_size(msg);
    return n > SAVE_MAX_MESSAGE ? save_too_big(n, what, err) : 0;
}

int save_model_stream(const IrModel *m, FILE *f, IrError *err)
{
    SaveCtx c = {.err = err};
    Onnx__ModelProto *mp = save_model_msg(&c, m);
    /* A stream cannot be taken back: size it exactly first. */
    size_t n = mp ? protobuf_c_message_get_packed_size(&mp->base) : 0;
    int rc = !mp ? -1 : n > SAVE_MAX_MESSAGE ? save_too_big(n, "output", err) : 0;
    if (!rc)
        rc = save_pack_stream(&mp->base, f, err);
    save_ctx_free(&c);
    return rc;
}

int save_model_buffer(const IrModel *m, uint8_t **buf, size_t *len,
                      IrError *err)
{
    SaveCtx c = {.err = err};
    *buf = NULL;
    *len = 0;
    Onnx__ModelProto *mp = save_model_msg(&c, m);
    if (!mp) {
        save_ctx_free(&c);
        return -1;
    }
    size_t n = protobuf_c_message_get_packed_size(&mp->base);
    if (n > SAVE_MAX_MESSAGE) {
        save_ctx_free(&c);
        return save_too_big(n, "output", err);
    }
    *buf = mem_alloc(n);
    *len = protobuf_c_message_pack(&mp->base, *buf);
    save_ctx_free(&c);
    return 0;
}

/* ---- target files ---------------------------------------------------------- */

/* Test-only: the point of a save at which to _exit (see save.h). */
static const char *save_die_point;

void save_test_die_at(const char *point)
{
    save_die_point = point;
}

static void save_maybe_die(const char *point)
{
    if (save_die_point && !strcmp(save_die_point, point))
        _exit(99);
}

static const char *save_kind(mode_t m)
{
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" :
           S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
           S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Refuses to replace `path`, which is not a regular file. A FIFO or a
 * device is most often /dev/stdout or a pipe: the message names `-o -`. */
static void save_not_regular(IrError *err, const char *path, mode_t m)
{
    ir_fail(err, "%s: is %s, not a regular file: refusing to replace it%s",
            path, save_kind(m),
            S_ISFIFO(m) || S_ISCHR(m) ? " (to write to standard output, use -o -)" : "");
}

/* The folder part of a path ("." when there is none). Caller frees. */
static char *save_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return mem_strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = mem_alloc(n + 1);
    memcpy(d, path, n);
    return d;
}

static char *save_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = mem_alloc(n);
    snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* The file that writing `path` replaces, symbolic links followed (the
 * link stays; the file it names is replaced in its own folder); *exists
 * and *st describe it. Anything but a regular file is refused, as is a
 * missing folder. Returns a malloc'ed path, or NULL with err set. */
static char *save_target(const char *path, struct stat *st, bool *exists,
                         IrError *err)
{
    struct stat fs;
    if (stat(path, &fs) == 0 && !S_ISREG(fs.st_mode)) {
        save_not_regular(err, path, fs.st_mode);
        return NULL;
    }
    char *p = mem_strdup(path);
    for (int hops = 0; hops < 40; hops++) {
        if (lstat(p, st) != 0) {
            char *d = save_dirname(p);
            struct stat ds;
            bool ok = errno == ENOENT && stat(d, &ds) == 0 && S_ISDIR(ds.st_mode);
            if (!ok)
                ir_fail(err, "%s: cannot write: folder '%s' does not exist "
                        "or cannot be read", path, d);
            free(d);
            *exists = false;
            if (ok)
                return p;
            free(p);
            return NULL;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = true;
            if (S_ISREG(st->st_mode))
                return p;
            save_not_regular(err, path, st->st_mode);
            free(p);
            return NULL;
        }
        char buf[4096];
        ssize_t n = readlink(p, buf, sizeof buf - 1);
        if (n < 0)
            break;
        buf[n] = 0;
        char *d = save_dirname(p);
        char *next = buf[0] == '/' ? mem_strdup(buf) : save_join(d, buf);
        free(d);
        free(p);
        p = next;
    }
    ir_fail(err, "%s: cannot write: a symbolic link that cannot be followed",
            path);
    free(p);
    return NULL;
}

/* Gives a finished temporary file the mode (and owner, when we may) of
 * the file it replaces, or the usual 0666 less the umask. */
static void save_final_mode(int fd, bool exists, const struct stat *st)
{
    if (exists) {
        if (st->st_uid != geteuid() || st->st_gid != getegid())
            if (fchown(fd, st->st_uid, st->st_gid)) {
                /* not permitted: the file stays ours */
            }
        fchmod(fd, st->st_mode & 07777);
        return;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
}

/* Finishes the writes to fd, sets its mode and closes it: 0, or -1 with
 * err naming `what`. When the rename that follows replaces a file (a
 * model rewritten), the data is made durable first: a crash between the
 * rename and the write-back must never cost the old file. A new file is
 * left to the system's write-back, as cp does: after a crash it may be
 * missing or short, but nothing that was there before is lost. */
static int save_tmp_finish(SoFile *f, bool durable, bool exists,
                           const struct stat *st, const char *what,
                           IrError *err)
{
    int e = so_finish(f);
    if (!e && durable && fsync(f->fd) != 0)
        e = errno;
    if (!e)
        save_final_mode(f->fd, exists, st);
    if (close(f->fd) != 0 && !e)
        e = errno;
    if (e && f->shrunk)
        return ir_fail(err, "%s: file changed size while being read",
                       f->shrunk);
    if (e)
        return ir_fail(err, "%s: write failed: %s", what, strerror(e));
    return 0;
}

/* A temporary file beside `target`: its fd, or -1 with err set. */
static int save_tmp_open(const char *target, char **tmp, IrError *err)
{
    size_t n = strlen(target) + 8;
    char *prefix = mem_alloc(n);
    snprintf(prefix, n, "%s.tmp-", target);
    int fd = guard_tmp_open(prefix, tmp);
    free(prefix);
    if (fd < 0)
        ir_fail(err, "%s: cannot create: %s", target, strerror(errno));
    return fd;
}

/* ---- side files -------------------------------------------------------------- */

/* A location with empty and "." steps dropped: "./a//b" is "a/b". */
static char *save_norm(SaveCtx *c, const char *loc)
{
    char *s = save_alloc(c, strlen(loc) + 1);
    size_t n = 0;
    for (const char *p = loc; *p;) {
        const char *e = strchr(p, '/');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k && !(k == 1 && p[0] == '.')) {
            if (n)
                s[n++] = '/';
            memcpy(s + n, p, k);
            n += k;
        }
        p += k + (e ? 1 : 0);
    }
    s[n] = 0;
    return s;
}

static int save_cmp_norm(const void *a, const void *b)
{
    const SaveExtWrite *x = *(SaveExtWrite *const *)a;
    const SaveExtWrite *y = *(SaveExtWrite *const *)b;
    int r = strcmp(x->norm, y->norm);
    return r ? r : (x < y ? -1 : x > y);
}

/* The name a side file would rather have: its location less the suffix
 * a rewrite in place added (".oc-" and 8 letters or digits), so that
 * rewriting a model again and again alternates between two names. */
static const char *save_preferred(SaveCtx *c, const char *norm)
{
    size_t n = strlen(norm);
    if (n <= 12 || strncmp(norm + n - 12, ".oc-", 4) || norm[n - 13] == '/')
        return norm;
    for (size_t i = n - 8; i < n; i++)
        if (!isalnum((unsigned char)norm[i]))
            return norm;
    char *s = save_alloc(c, n - 11);
    memcpy(s, norm, n - 12);
    return s;
}

/* The side files being written, for the commit or the undo. */
typedef struct SaveSides {
    size_t n;
    char **made;            /* full paths of files created */
} SaveSides;

static void save_sides_end(SaveSides *s, bool commit)
{
    for (size_t i = 0; i < s->n; i++) {
        if (commit)
            guard_forget(s->made[i]);
        else
            guard_discard(s->made[i]);
        free(s->made[i]);
    }
    free(s->made);
    s->made = NULL;
    s->n = 0;
}

/* Writes the writes w[0..n) (all of one file) into a new file beside the
 * model and names it: `norm` itself when no such file exists yet, else
 * the temporary name (an existing file is never overwritten: the model
 * it belongs to stays valid until the new model replaces it). Sets each
 * tensor's location to the name. */
static int save_side_file(SaveCtx *c, const char *dir, SaveExtWrite **w,
                          size_t n, bool durable, SaveSides *s, IrError *err)
{
    const char *norm = save_preferred(c, w[0]->norm);
    char *full = save_join(dir, norm);
    size_t pl = strlen(full) + 8;
    char *prefix = mem_alloc(pl);
    snprintf(prefix, pl, "%s.oc-", full);
    char *tmp = NULL;
    int fd = guard_tmp_open(prefix, &tmp);
    free(prefix);
    if (fd < 0) {
        ir_fail(err, "%s: cannot create: %s", full, strerror(errno));
        free(full);
        return -1;
    }
    s->made = mem_grow(s->made, s->n + 1, sizeof *s->made);
    s->made[s->n++] = tmp;
    SoFile f;
    so_init(&f, fd, c->model);
    for (size_t j = 0; j < n; j++) {
        if (!w[j]->len)
            continue;
        so_seek(&f, w[j]->offset);
        so_write(&f, w[j]->data, w[j]->len);
    }
    struct stat none = {0};
    if (save_tmp_finish(&f, durable, false, &none, full, err)) {
        free(full);
        return -1;
    }
    const char *name = tmp + strlen(dir) + 1;
    /* Claim `norm` only if nothing has it (no replace, even in a race). */
    if (link(tmp, full) == 0) {
        unlink(tmp);
        guard_forget(tmp);
        guard_keep(full);
        free(tmp);
        s->made[s->n - 1] = full;
        name = norm;
    } else {
        free(full);
    }
    char *kept = save_alloc(c, strlen(name) + 1);
    strcpy(kept, name);
    for (size_t j = 0; j < n; j++)
        if (w[j]->entry)
            w[j]->entry->value = kept;
    return 0;
}

/* Writes every side file c->ext lists, one per distinct normalised
 * location, each tensor at its offset. */
static int save_side_files(SaveCtx *c, const char *dir, const char *model_base,
                           bool durable, SaveSides *s, IrError *err)
{
    if (!c->n_ext)
        return 0;
    SaveExtWrite **v = mem_array(c->n_ext, sizeof *v);
    for (size_t i = 0; i < c->n_ext; i++) {
        c->ext[i].norm = save_norm(c, c->ext[i].location);
        v[i] = &c->ext[i];
    }
    qsort(v, c->n_ext, sizeof *v, save_cmp_norm);
    int rc = 0;
    for (size_t i = 0, j; i < c->n_ext && !rc; i = j) {
        for (j = i + 1; j < c->n_ext && !strcmp(v[j]->norm, v[i]->norm); j++)
            ;
        if (!strcmp(v[i]->norm, model_base))
            rc = ir_fail(err, "%s/%s: external data location '%s' is the "
                         "output model itself", dir, model_base,
                         v[i]->location);
        else
            rc = save_side_file(c, dir, v + i, j - i, durable, s, err);
    }
    free(v);
    return rc;
}

/* Whether the input model's own file is the one `old` describes (a
 * rewrite in place); asked before the new model replaces it. */
static bool save_in_place(const IrModel *m, const struct stat *old)
{
    struct stat st;
    for (size_t i = 0; i < m->n_maps; i++)
        if (!m->maps[i].location && m->maps[i].path &&
            stat(m->maps[i].path, &st) == 0 && st.st_dev == old->st_dev &&
            st.st_ino == old->st_ino)
            return true;
    return false;
}

/* Whether the input model reads the file `st` describes. */
static bool save_input_uses(const IrModel *m, const struct stat *st)
{
    struct stat x;
    for (size_t i = 0; i < m->n_maps; i++)
        if (m->maps[i].location && m->maps[i].path &&
            stat(m->maps[i].path, &x) == 0 && x.st_dev == st->st_dev &&
            x.st_ino == st->st_ino)
            return true;
    return false;
}

/* A side file the replaced model used, to remove once it is replaced. */
typedef struct SaveOld {
    size_t n;
    char **path;
    struct stat *st;        /* the file as it was: only that one goes */
} SaveOld;

/* Lists the side files of the model at `target` (about to be replaced),
 * less those the input model still reads, unless the input is that very
 * model. A target that does not load lists nothing. */
static void save_old_sides(const IrModel *m, const char *target,
                           const char *dir, bool in_place, SaveOld *o)
{
    LoadOptions lo = {.skip_external = 1};
    IrModel *old = NULL;
    IrError e;
    if (load_model_file(target, &lo, &old, &e))
        return;
    SaveCtx c = {.err = &e, .collect = true};
    save_model_msg(&c, old);
    for (size_t i = 0; i < c.n_ext; i++) {
        /* Loaded without its external data, the old model's locations
         * were never checked: only plain names in the folder are taken,
         * so that no link on the way and no ".." can lead elsewhere. */
        const char *norm = save_norm(&c, c.ext[i].location);
        if (!*norm || strchr(norm, '/') || !strcmp(norm, ".."))
            continue;
        char *full = save_join(dir, norm);
        struct stat st;
        bool dup = false;
        for (size_t j = 0; j < o->n && !dup; j++)
            dup = !strcmp(o->path[j], full);
        if (dup || lstat(full, &st) || !S_ISREG(st.st_mode) ||
            (!in_place && save_input_uses(m, &st))) {
            free(full);
            continue;
        }
        o->path = mem_grow(o->path, o->n + 1, sizeof *o->path);
        o->st = mem_grow(o->st, o->n + 1, sizeof *o->st);
        o->path[o->n] = full;
        o->st[o->n++] = st;
    }
    save_ctx_free(&c);
    ir_model_free(old);
}

/* Removes the listed files that are still the files listed (never one
 * this save created under a name that was free), and frees the list. */
static void save_old_drop(SaveOld *o, bool remove)
{
    for (size_t i = 0; i < o->n; i++) {
        struct stat st;
        if (remove && lstat(o->path[i], &st) == 0 &&
            st.st_dev == o->st[i].st_dev && st.st_ino == o->st[i].st_ino)
            unlink(o->path[i]);
        free(o->path[i]);
    }
    free(o->path);
    free(o->st);
}

/* ---- writing a file ---------------------------------------------------------- */

/* Packs msg into a temporary file beside `target` and renames it over
 * target; the temporary file never outlives a failure. */
static int save_packed(const ProtobufCMessage *msg, const IrModel *m,
                       const char *target, bool exists, const struct stat *st,
                       const char *what, IrError *err)
{
    char *tmp = NULL;
    int fd = save_tmp_open(target, &tmp, err);
    if (fd < 0)
        return -1;
    SoFile f;
    so_init(&f, fd, m);
    protobuf_c_message_pack_to_buffer(msg, &f.base);
    uint64_t written = f.total;
    int rc = save_tmp_finish(&f, exists, exists, st, what, err);
    if (!rc && written > SAVE_MAX_MESSAGE)
        rc = save_too_big(written, what, err);
    if (!rc)
        save_maybe_die("before-model-rename");
    if (!rc && rename(tmp, target))
        rc = ir_fail(err, "%s: cannot rename into place: %s", what,
                     strerror(errno));
    if (rc)
        guard_discard(tmp);
    else
        guard_forget(tmp);
    free(tmp);
    return rc;
}

int save_model_file(const IrModel *m, const char *path,
                    const SaveOptions *opt, IrError *err)
{
    SaveCtx c = {.opt = opt, .err = err, .model = m};
    if (opt && opt->external_file &&
        (strchr(opt->external_file, '/') || !opt->external_file[0] ||
         !strcmp(opt->external_file, ".") || !strcmp(opt->external_file, "..")))
        return ir_fail(err, "%s: external data file '%s' must be a plain file "
                       "name", path, opt->external_file);
    struct stat st;
    bool exists = false;
    char *target = save_target(path, &st, &exists, err);
    if (!target)
        return -1;
    char *dir = save_dirname(target);
    const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
    int rc = 0;
    if (opt && opt->external_file && !strcmp(base, opt->external_file))
        rc = ir_fail(err, "%s: the external data file cannot be the model "
                     "file itself", path);
    Onnx__ModelProto *mp = rc ? NULL : save_model_msg(&c, m);
    if (!mp)
        rc = -1;
    if (!rc)
        rc = save_size_ok(&c, &mp->base, path, err);
    SaveSides sides = {0};
    SaveOld olds = {0};
    if (!rc && exists)
        save_old_sides(m, target, dir, save_in_place(m, &st), &olds);
    if (!rc)
        rc = save_side_files(&c, dir, base, exists, &sides, err);
    if (!rc)
        save_maybe_die("after-side-files");
    if (!rc)
        rc = save_packed(&mp->base, m, target, exists, &st, path, err);
    save_sides_end(&sides, rc == 0);
    if (!rc)
        save_maybe_die("after-model-rename");
    save_old_drop(&olds, rc == 0);
    free(dir);
    free(target);
    save_ctx_free(&c);
    return rc;
}

int save_tensor_file(const IrTensor *t, const char *path, IrError *err)
{
    SaveCtx c = {.err = err};
    Onnx__TensorProto *tp = save_tensor(&c, t);
    int rc = !tp || c.failed ? -1 : 0;
    struct stat st;
    bool exists = false;
    char *target = rc ? NULL : save_target(path, &st, &exists, err);
    if (!target)
        rc = -1;
    if (!rc)
        rc = save_packed(&tp->base, NULL, target, exists, &st, path, err);
    free(target);
    save_ctx_free(&c);
    return rc;
}

int save_bytes_file(const uint8_t *data, size_t len, const char *path,
                    IrError *err)
{
    struct stat st;
    bool exists = false;
    char *target = save_target(path, &st, &exists, err);
    if (!target)
        return -1;
    char *tmp = NULL;
    int fd = save_tmp_open(target, &tmp, err);
    int rc = fd < 0 ? -1 : 0;
    if (!rc) {
        SoFile f;
        so_init(&f, fd, NULL);
        so_write(&f, data, len);
        rc = save_tmp_finish(&f, exists, exists, &st, path, err);
        if (!rc && rename(tmp, target))
            rc = ir_fail(err, "%s: cannot rename into place: %s", path,
                         strerror(errno));
        if (rc)
            guard_discard(tmp);
        else
            guard_forget(tmp);
    }
    free(tmp);
    free(target);
    return rc;
}

void save_cleanup_on_signals(const char *prog)
{
    guard_install_signals(prog);
}
