/*
 * load.c - .onnx bytes to IR (prefix load_).
 *
 * Three steps: load_wire_check walks the wire format against the schema so
 * protobuf-c only decodes well-formed input of bounded depth; protobuf-c
 * decodes; the load_*_msg functions move the decoded data into the IR. They
 * take over protobuf-c's heap buffers (strings, arrays, bytes, unknown
 * fields) instead of copying them, leaving NULL behind so that
 * protobuf_c_message_free_unpacked frees only the skeleton. That is safe
 * because protobuf-c uses the system allocator (we pass NULL).
 */
#include "io/load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "ir/caffe2.h"
#include "base/guard.h"
#include "io/load_borrow.h"
#include "io/load_caffe2.h"
#include "onnx.pb-c.h"

/* What one load needs besides the message being converted. */
typedef struct LoadCtx {
    IrModel *model;
    const char *what;     /* file name for messages */
    const char *dir;      /* external data root, or NULL */
    char *dir_real;       /* realpath(dir) */
    bool skip_external;
    IrError *err;
    const LbHoles *holes; /* raw_data left in the mapped file, or NULL */
    bool *hole_used;      /* one flag per hole */
    size_t n_nodes;       /* nodes loaded so far, all scopes */
    size_t max_nodes;     /* LOAD_MAX_NODES unless LoadOptions says */
    const char *node;     /* the node whose attributes are loading, for
                             messages about their (often unnamed) tensors */
} LoadCtx;

/* ---- wire format check --------------------------------------------- */

/* Reads a varint at p[*i..len); false when it is truncated or longer than
 * ten bytes. */
static bool load_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*i >= len)
            return false;
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* The wire type a field of this type uses when not packed. */
static unsigned load_wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    default:
        return 0;
    }
}

/* Checks a packed run of scalars: whole fixed-size elements, or varints
 * that all end inside the run. */
static int load_check_packed(const uint8_t *p, size_t len, unsigned wt,
                             size_t off, const char *field, IrError *err)
{
    if (wt == 1 || wt == 5) {
        size_t w = wt == 1 ? 8 : 4;
        if (len % w)
            return ir_fail(err, "byte %zu: packed field '%s' has a length "
                           "that is not a multiple of %zu", off, field, w);
        return 0;
    }
    size_t i = 0;
    uint64_t v;
    while (i < len)
        if (!load_varint(p, len, &i, &v))
            return ir_fail(err, "byte %zu: packed field '%s' ends inside "
                           "a varint", off, field);
    return 0;
}

static int load_check_msg(const uint8_t *p, size_t len,
                          const ProtobufCMessageDescriptor *d, int depth,
                          size_t base, IrError *err);

/* Checks one length-delimited field body against its descriptor (fd is
 * NULL for an unknown field of message d). */
static int load_check_delimited(const uint8_t *p, size_t n,
                                const ProtobufCMessageDescriptor *d,
                                const ProtobufCFieldDescriptor *fd,
                                int depth, size_t off, IrError *err)
{
    if (!fd)
        return 0; /* unknown field: kept as opaque bytes */
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
        return load_check_msg(p, n, fd->descriptor, depth + 1, off, err);
    /* protobuf-c hands strings over as C strings: a NUL would silently cut
     * the name short (and might make it another value's name). */
    if (fd->type == PROTOBUF_C_TYPE_STRING && memchr(p, 0, n))
        return ir_fail(err, "byte %zu: string field '%s' of %s contains a "
                       "NUL byte", off, fd->name, d->short_name);
    unsigned want = load_wire_type_of(fd->type);
    if (want == 2)
        return 0;
    if (fd->label != PROTOBUF_C_LABEL_REPEATED)
        return ir_fail(err, "byte %zu: field '%s' of %s has the wrong wire "
                       "type (2, expected %u)", off, fd->name, d->short_name,
                       want);
    return load_check_packed(p, n, want, off, fd->name, err);
}

/* Walks the fields of one message occupying p[0..len), which starts at
 * byte `base` of the file. */
static int load_check_msg(const uint8_t *p, size_t len,
                          const ProtobufCMessageDescriptor *d, int depth,
                          size_t base, IrError *err)
{
    if (depth > LOAD_MAX_DEPTH)
        return ir_fail(err, "byte %zu: messages nested deeper than %d "
                       "levels (%s)", base, LOAD_MAX_DEPTH, d->short_name);
    size_t i = 0;
    while (i < len) {
        size_t at = base + i;
        uint64_t key, v;
        if (!load_varint(p, len, &i, &key))
            return ir_fail(err, "byte %zu: truncated field key in %s", at,
                           d->short_name);
        uint64_t num = key >> 3;
        unsigned wt = key & 7;
        if (num == 0 || num > 536870911u)
            return ir_fail(err, "byte %zu: invalid field number %llu in %s",
                           at, (unsigned long long)num, d->short_name);
        const ProtobufCFieldDescriptor *fd =
            protobuf_c_message_descriptor_get_field(d, (unsigned)num);
        if (fd && wt != 2 && wt != load_wire_type_of(fd->type))
            return ir_fail(err, "byte %zu: field '%s' of %s has the wrong "
                           "wire type (%u, expected %u)", at, fd->name,
                           d->short_name, wt, load_wire_type_of(fd->type));
        switch (wt) {
        case 0:
            if (!load_varint(p, len, &i, &v))
                return ir_fail(err, "byte %zu: bad varint in %s", at,
                               d->short_name);
            break;
        case 1:
        case 5: {
            size_t w = wt == 1 ? 8 : 4;
            if (len - i < w)
                return ir_fail(err, "byte %zu: truncated fixed-size field "
                               "in %s", at, d->short_name);
            i += w;
            break;
        }
        case 2:
            if (!load_varint(p, len, &i, &v))
                return ir_fail(err, "byte %zu: bad length in %s", at,
                               d->short_name);
            if (v > len - i)
                return ir_fail(err, "byte %zu: length %llu of %s.%s runs "
                               "past the end of its message", at,
                               (unsigned long long)v, d->short_name,
                               fd ? fd->name : "(unknown field)");
            if (load_check_delimited(p + i, (size_t)v, d, fd, depth,
                                     base + i, err))
                return -1;
            i += (size_t)v;
            break;
        default:
            return ir_fail(err, "byte %zu: unsupported wire type %u in %s",
                           at, wt, d->short_name);
        }
    }
    return 0;
}

int load_wire_check(const uint8_t *buf, size_t len, IrError *err)
{
    return load_check_msg(buf, len, &onnx__model_proto__descriptor, 1, 0, err);
}

/* ---- taking over decoded data ---------------------------------------- */

/* Moves the unknown fields of a decoded message into u. */
static void load_unknown(ProtobufCMessage *m, IrUnknown *u)
{
    u->n = m->n_unknown_fields;
    if (!u->n)
        return;
    u->f = mem_array(u->n, sizeof *u->f);
    for (size_t i = 0; i < u->n; i++) {
        ProtobufCMessageUnknownField *f = &m->unknown_fields[i];
        u->f[i] = (IrUnknownField){f->tag, (uint8_t)f->wire_type, f->len,
                                   f->data};
        f->data = NULL;
    }
    m->n_unknown_fields = 0;
}

/* Takes a string field: returns it and leaves NULL in its place. */
static char *load_take(char **s)
{
    char *r = *s;
    *s = NULL;
    return r;
}

static IrBytes load_take_bytes(ProtobufCBinaryData *b)
{
    IrBytes r = {b->len, b->data};
    b->data = NULL;
    b->len = 0;
    return r;
}

/* Takes a repeated scalar array: *n and *arr are cleared. */
#define LOAD_TAKE_ARRAY(dst_n, dst, src_n, src) \
    do {                                        \
        (dst_n) = (src_n);                      \
        (dst) = (src);                          \
        (src_n) = 0;                            \
        (src) = NULL;                           \
    } while (0)

static void load_strmap(size_t n, Onnx__StringStringEntryProto **e,
                        IrStrMap *m)
{
    m->n = n;
    if (!n)
        return;
    m->p = mem_array(n, sizeof *m->p);
    for (size_t i = 0; i < n; i++) {
        m->p[i].key = load_take(&e[i]->key);
        m->p[i].value = load_take(&e[i]->value);
        load_unknown(&e[i]->base, &m->p[i].unk);
    }
}

static void load_opsets(size_t n, Onnx__OperatorSetIdProto **src,
                        size_t *dn, IrOpset **dst)
{
    *dn = n;
    *dst = n ? mem_array(n, sizeof **dst) : NULL;
    for (size_t i = 0; i < n; i++) {
        (*dst)[i].domain = load_take(&src[i]->domain);
        (*dst)[i].has_version = src[i]->has_version;
        (*dst)[i].version = src[i]->version;
        load_unknown(&src[i]->base, &(*dst)[i].unk);
    }
}

static IrBytes *load_bytes_list(size_t n, ProtobufCBinaryData *src)
{
    if (!n)
        return NULL;
    IrBytes *b = mem_array(n, sizeof *b);
    for (size_t i = 0; i < n; i++)
        b[i] = load_take_bytes(&src[i]);
    return b;
}

static char **load_str_list(size_t n, char **src)
{
    if (!n)
        return NULL;
    char **s = mem_array(n, sizeof *s);
    for (size_t i = 0; i < n; i++)
        s[i] = load_take(&src[i]);
    return s;
}

/* ---- limits (load.h) --------------------------------------------------- */

/* Refuses a name longer than LOAD_MAX_NAME; `what` says whose it is. Only
 * the start of the name is shown: it may be megabytes long. */
static int load_name_ok(LoadCtx *c, const char *s, const char *what)
{
    if (!s || strnlen(s, (size_t)LOAD_MAX_NAME + 1) <= LOAD_MAX_NAME)
        return 0;
    return ir_fail(c->err, "%s: %s ('%.32s...') is longer than %d bytes "
                   "(LOAD_MAX_NAME)", c->what, what, s, LOAD_MAX_NAME);
}

/* A name short enough to show whole in a message about something else
 * (the name itself may be what is too long). */
static const char *load_shown(const char *s)
{
    return s && strnlen(s, 65) <= 64 ? s : "";
}

/* "tensor 'NAME' of node 'N'" in buf[160], for messages. */
static const char *load_tensor_label(const LoadCtx *c, const char *name, char *buf)
{
    snprintf(buf, 160, "tensor '%s'%s%s%s", load_shown(name),
             c->node ? " of node '" : "", c->node ? load_shown(c->node) : "",
             c->node ? "'" : "");
    return buf;
}

/* Refuses dims of more than LOAD_MAX_RANK entries, or declaring more than
 * LOAD_MAX_TENSOR_BYTES or a product that overflows 64 bits. A negative
 * dim declares no size: that is the checker's tensor-dims rule, and every
 * later step treats such a tensor as having no elements it can read. */
static int load_dims_ok(LoadCtx *c, const char *name, int32_t dtype,
                        size_t ndims, const int64_t *dims)
{
    char tname[160];
    if (ndims > LOAD_MAX_RANK)
        return ir_fail(c->err, "%s: %s has rank %zu, more than %d "
                       "(LOAD_MAX_RANK)", c->what, load_tensor_label(c, name, tname),
                       ndims, LOAD_MAX_RANK);
    for (size_t k = 0; k < ndims; k++)
        if (dims[k] <= 0)
            return 0; /* no elements, or negative: nothing to size */
    uint64_t numel = 1, bytes = 0;
    /* a type of no fixed width is sized as bytes */
    int32_t sized = ir_dtype_bits(dtype) > 0 ? dtype : IR_UINT8;
    bool over = false;
    for (size_t k = 0; k < ndims && !over; k++) {
        over = numel > UINT64_MAX / (uint64_t)dims[k];
        numel *= over ? 1 : (uint64_t)dims[k];
    }
    if (over || !ir_dtype_bytes(sized, numel, &bytes))
        return ir_fail(c->err, "%s: tensor-overflow: %s: the product of its "
                       "%zu dims overflows 64 bits", c->what,
                       load_tensor_label(c, name, tname), ndims);
    if (bytes > LOAD_MAX_TENSOR_BYTES)
        return ir_fail(c->err, "%s: %s declares %llu bytes, more than "
                       "%llu (LOAD_MAX_TENSOR_BYTES)", c->what,
                       load_tensor_label(c, name, tname),
                       (unsigned long long)bytes,
                       (unsigned long long)LOAD_MAX_TENSOR_BYTES);
    return 0;
}

/* Refuses a declared type whose shape (at any nesting) has more than
 * LOAD_MAX_RANK dims. */
static int load_type_ok(LoadCtx *c, const Onnx__TypeProto *tp,
                        const char *name)
{
    for (int depth = 0; tp && depth <= LOAD_MAX_DEPTH; depth++) {
        const Onnx__TensorShapeProto *sh =
            tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
                ? tp->tensor_type->shape
            : tp->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE
                ? tp->sparse_tensor_type->shape : NULL;
        if (sh && sh->n_dim > LOAD_MAX_RANK)
            return ir_fail(c->err, "%s: the type of '%s' has a shape of rank "
                           "%zu, more than %d (LOAD_MAX_RANK)", c->what,
                           load_shown(name), sh->n_dim, LOAD_MAX_RANK);
        tp = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE
                 ? tp->sequence_type->elem_type
             : tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE
                 ? tp->optional_type->elem_type
             : tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE
                 ? tp->map_type->value_type : NULL;
    }
    return 0;
}

/* A list of names (inputs, outputs) within LOAD_MAX_NAME. */
static int load_names_ok(LoadCtx *c, size_t n, char **names, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (load_name_ok(c, names[i], what))
            return -1;
    return 0;
}

static int load_valueinfos_ok(LoadCtx *c, size_t n,
                              Onnx__ValueInfoProto **vi, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (load_name_ok(c, vi[i]->name, what) ||
            load_type_ok(c, vi[i]->type, vi[i]->name))
            return -1;
    return 0;
}

/* One name of a node; the message (naming the node) is only formatted
 * when the name is too long, since this runs for every node. */
static int load_node_name_ok(LoadCtx *c, const char *s, const char *field,
                             const char *id)
{
    if (!s || strnlen(s, (size_t)LOAD_MAX_NAME + 1) <= LOAD_MAX_NAME)
        return 0;
    char what[128];
    snprintf(what, sizeof what, "%s of node '%s'", field, id);
    return load_name_ok(c, s, what);
}

/* A node's names (its own, op_type, domain, overload, inputs, outputs,
 * attribute names) and its attributes' declared types. */
static int load_node_ok(LoadCtx *c, const Onnx__NodeProto *np)
{
    if (load_name_ok(c, np->name, "the name of a node"))
        return -1;
    const char *id = load_shown(np->name);
    if (load_node_name_ok(c, np->op_type, "the op_type", id) ||
        load_node_name_ok(c, np->domain, "the domain", id) ||
        load_node_name_ok(c, np->overload, "the overload", id))
        return -1;
    for (size_t i = 0; i < np->n_input; i++)
        if (load_node_name_ok(c, np->input[i], "an input name", id))
            return -1;
    for (size_t i = 0; i < np->n_output; i++)
        if (load_node_name_ok(c, np->output[i], "an output name", id))
            return -1;
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (load_node_name_ok(c, a->name, "an attribute name", id) ||
            load_node_name_ok(c, a->ref_attr_name, "an attribute name", id) ||
            load_type_ok(c, a->tp, a->name))
            return -1;
        for (size_t k = 0; k < a->n_type_protos; k++)
            if (load_type_ok(c, a->type_protos[k], a->name))
                return -1;
    }
    return 0;
}

/* A graph's own names and declared types (its nodes are checked one by
 * one as they load). */
static int load_graph_ok(LoadCtx *c, const Onnx__GraphProto *gp)
{
    if (load_name_ok(c, gp->name, "the name of a graph") ||
        load_valueinfos_ok(c, gp->n_input, gp->input, "a graph input name") ||
        load_valueinfos_ok(c, gp->n_output, gp->output,
                           "a graph output name") ||
        load_valueinfos_ok(c, gp->n_value_info, gp->value_info,
                           "a value_info name"))
        return -1;
    for (size_t i = 0; i < gp->n_initializer; i++)
        if (load_name_ok(c, gp->initializer[i]->name,
                         "the name of an initializer"))
            return -1;
    for (size_t i = 0; i < gp->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *sp = gp->sparse_initializer[i];
        if (sp->values && load_name_ok(c, sp->values->name,
                                       "the name of a sparse initializer"))
            return -1;
    }
    return 0;
}

static int load_opsets_ok(LoadCtx *c, size_t n, Onnx__OperatorSetIdProto **o)
{
    for (size_t i = 0; i < n; i++)
        if (load_name_ok(c, o[i]->domain, "the domain of an opset import"))
            return -1;
    return 0;
}

static int load_function_ok(LoadCtx *c, const Onnx__FunctionProto *fp)
{
    char what[128];
    if (load_name_ok(c, fp->name, "the name of a function"))
        return -1;
    const char *id = load_shown(fp->name);
    snprintf(what, sizeof what, "the domain of function '%s'", id);
    if (load_name_ok(c, fp->domain, what))
        return -1;
    snprintf(what, sizeof what, "the overload of function '%s'", id);
    if (load_name_ok(c, fp->overload, what))
        return -1;
    snprintf(what, sizeof what, "a name in function '%s'", id);
    if (load_names_ok(c, fp->n_input, fp->input, what) ||
        load_names_ok(c, fp->n_output, fp->output, what) ||
        load_names_ok(c, fp->n_attribute, fp->attribute, what) ||
        load_valueinfos_ok(c, fp->n_value_info, fp->value_info, what) ||
        load_opsets_ok(c, fp->n_opset_import, fp->opset_import))
        return -1;
    for (size_t i = 0; i < fp->n_attribute_proto; i++)
        if (load_name_ok(c, fp->attribute_proto[i]->name, what))
            return -1;
    return 0;
}

/* ---- types ----------------------------------------------------------- */

static IrShape *load_shape(Onnx__TensorShapeProto *sp)
{
    if (!sp)
        return NULL;
    IrShape *s = mem_alloc(sizeof *s);
    s->rank = sp->n_dim;
    s->dims = mem_array(sp->n_dim ? sp->n_dim : 1, sizeof *s->dims);
    for (size_t i = 0; i < sp->n_dim; i++) {
        Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        IrDim *o = &s->dims[i];
        if (d->value_case ==
            ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            o->kind = IR_DIM_VALUE;
            o->value = d->dim_value;
        } else if (d->value_case ==
                   ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            o->kind = IR_DIM_PARAM;
            o->param = load_take(&d->dim_param);
        }
        o->denotation = load_take(&d->denotation);
        load_unknown(&d->base, &o->unk);
    }
    load_unknown(&sp->base, &s->unk);
    return s;
}

static IrType *load_type(Onnx__TypeProto *tp)
{
    if (!tp)
        return NULL;
    IrType *t = mem_alloc(sizeof *t);
    t->denotation = load_take(&tp->denotation);
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        t->kind = IR_TYPE_TENSOR;
        t->has_elem_type = tp->tensor_type->has_elem_type;
        t->elem_type = tp->tensor_type->elem_type;
        t->shape = load_shape(tp->tensor_type->shape);
        load_unknown(&tp->tensor_type->base, &t->inner_unk);
        break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        t->kind = IR_TYPE_SPARSE_TENSOR;
        t->has_elem_type = tp->sparse_tensor_type->has_elem_type;
        t->elem_type = tp->sparse_tensor_type->elem_type;
        t->shape = load_shape(tp->sparse_tensor_type->shape);
        load_unknown(&tp->sparse_tensor_type->base, &t->inner_unk);
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        t->kind = IR_TYPE_SEQUENCE;
        t->elem = load_type(tp->sequence_type->elem_type);
        load_unknown(&tp->sequence_type->base, &t->inner_unk);
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        t->kind = IR_TYPE_OPTIONAL;
        t->elem = load_type(tp->optional_type->elem_type);
        load_unknown(&tp->optional_type->base, &t->inner_unk);
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        t->kind = IR_TYPE_MAP;
        t->has_key_type = tp->map_type->has_key_type;
        t->key_type = tp->map_type->key_type;
        t->elem = load_type(tp->map_type->value_type);
        load_unknown(&tp->map_type->base, &t->inner_unk);
        break;
    case ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE:
        t->kind = IR_TYPE_OPAQUE;
        t->opaque_domain = load_take(&tp->opaque_type->domain);
        t->opaque_name = load_take(&tp->opaque_type->name);
        load_unknown(&tp->opaque_type->base, &t->inner_unk);
        break;
    default:
        t->kind = IR_TYPE_NONE;
        break;
    }
    load_unknown(&tp->base, &t->unk);
    return t;
}

/* ---- external data ---------------------------------------------------- */

/* Parses a decimal offset or length: digits only, no overflow. */
static bool load_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* A location must be a relative path with no ".." component. */
static bool load_location_ok(const char *loc)
{
    if (!*loc || loc[0] == '/')
        return false;
    const char *p = loc;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return false;
        if (!e)
            break;
        p = e + 1;
    }
    return true;
}

/* Keeps fd open for save's file-to-file copies when the file is big
 * enough to matter; small files are written from the mapping. */
static int load_keep_fd(int fd, size_t len)
{
    if (len >= LOAD_KEEP_FD_BYTES)
        return fd;
    close(fd);
    return -1;
}

/* Without openat2 (kernels before 5.6): the resolved path must lie inside
 * the folder, the last step must not be a link, and the file opened must
 * be the one that was checked. */
static int load_open_checked(LoadCtx *c, const char *loc)
{
    size_t n = strlen(c->dir_real) + strlen(loc) + 2;
    char *joined = mem_alloc(n);
    snprintf(joined, n, "%s/%s", c->dir_real, loc);
    char *real = realpath(joined, NULL);
    int fd = -1, e = errno;
    size_t dl = strlen(c->dir_real);
    if (!real) {
        e = errno;
    } else if (strncmp(real, c->dir_real, dl) ||
               !(real[dl] == '/' || (dl == 1 && c->dir_real[0] == '/'))) {
        e = EXDEV;
    } else if (strcmp(real, joined)) {
        e = ELOOP; /* a link somewhere on the way */
    } else {
        fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
        e = errno;
        struct stat a, b;
        if (fd >= 0 && (fstat(fd, &a) || stat(real, &b) || a.st_dev != b.st_dev ||
                        a.st_ino != b.st_ino)) {
            close(fd);
            fd = -1;
            e = ELOOP;
        }
    }
    free(joined);
    free(real);
    errno = e;
    return fd;
}

/* Why opening an external data file failed, for the message. */
static const char *load_open_why(int e)
{
    switch (e) {
    case ELOOP:
        return "it is, or goes through, a symbolic link";
    case EXDEV:
        return "it resolves outside the model's folder";
    default:
        return strerror(e);
    }
}

/* Opens `loc` below the model's folder without following any symbolic
 * link, and with the kernel guaranteeing that no step leaves the folder
 * (openat2 RESOLVE_BENEATH): a link swapped in between a check and the
 * open cannot redirect it. Returns the fd, or -1 with errno set. */
static bool load_no_openat2;

void load_test_no_openat2(bool on)
{
    load_no_openat2 = on;
}

static int load_open_beneath(LoadCtx *c, const char *loc)
{
#ifdef SYS_openat2
    if (load_no_openat2)
        return load_open_checked(c, loc);
    int dfd = open(c->dir_real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    struct open_how how = {
        .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    int fd = (int)syscall(SYS_openat2, dfd, loc, &how, sizeof how);
    int e = errno;
    close(dfd);
    errno = e;
    if (fd >= 0 || errno != ENOSYS)
        return fd;
#endif
    return load_open_checked(c, loc);
}

/* Maps the external file at `loc` (once per location) after checking that
 * it is a regular file inside the model's folder with no other name (a
 * hard link could be a file from anywhere). Returns the mapping or NULL
 * with the error set. */
/* Unmaps what load_map_file or an external tensor mapped (and unlists it
 * from the signal guard); IrMapping.release of every mapping we make. */
static void load_unmap(void *base, size_t len)
{
    guard_map_remove(base);
    munmap(base, len);
}

static IrMapping *load_map_external(LoadCtx *c, const char *tname,
                                    const char *loc)
{
    IrModel *m = c->model;
    for (size_t i = 0; i < m->n_maps; i++)
        if (m->maps[i].location && !strcmp(m->maps[i].location, loc))
            return &m->maps[i];
    int fd = load_open_beneath(c, loc);
    if (fd < 0) {
        ir_fail(c->err, "%s: tensor '%s': external data file '%s' cannot be "
                "opened: %s", c->what, tname, loc, load_open_why(errno));
        return NULL;
    }
    struct stat st;
    const char *bad = NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode))
        bad = "is not a readable regular file";
    else if (st.st_nlink != 1)
        bad = "has more than one hard link (it may be a file from outside "
              "the model's folder)";
    if (bad) {
        ir_fail(c->err, "%s: tensor '%s': external data '%s' %s", c->what,
                tname, loc, bad);
        close(fd);
        return NULL;
    }
    void *base = NULL;
    if (st.st_size > 0) {
        base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (base == MAP_FAILED) {
            ir_fail(c->err, "%s: tensor '%s': cannot map '%s': %s", c->what,
                    tname, loc, strerror(errno));
            close(fd);
            return NULL;
        }
    }
    m->maps = mem_grow(m->maps, m->n_maps + 1, sizeof *m->maps);
    IrMapping *mp = &m->maps[m->n_maps++];
    size_t n = strlen(c->dir) + strlen(loc) + 2;
    char *path = mem_alloc(n);
    snprintf(path, n, "%s/%s", c->dir, loc);
    *mp = (IrMapping){path, mem_strdup(loc), base, (size_t)st.st_size,
                      load_keep_fd(fd, (size_t)st.st_size), base ? load_unmap : NULL};
    guard_map_add(base, mp->len, path);
    return mp;
}

static const char *load_strmap_get(const IrStrMap *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->p[i].key && !strcmp(m->p[i].key, key))
            return m->p[i].value ? m->p[i].value : "";
    return NULL;
}

/* Binds an EXTERNAL tensor to its bytes, with every check the spec's
 * location/offset/length keys need. */
static int load_external(LoadCtx *c, IrTensor *t)
{
    const char *tname = t->name ? t->name : "";
    const IrStrMap *x = &t->external_data;
    /* Readers differ on which of two equal keys wins (onnx takes the
     * last): such a tensor means different things to different tools. */
    for (size_t i = 0; i < x->n; i++)
        for (size_t j = 0; j < i; j++)
            if (x->p[i].key && x->p[j].key && !strcmp(x->p[i].key, x->p[j].key))
                return ir_fail(c->err, "%s: tensor '%s': external data key "
                               "'%s' is given twice", c->what, tname,
                               x->p[i].key);
    if (c->skip_external)
        return 0;
    if (!c->dir)
        return ir_fail(c->err, "%s: tensor '%s' has external data but the "
                       "model was not loaded from a folder", c->what, tname);
    const char *loc = load_strmap_get(&t->external_data, "location");
    if (!loc)
        return ir_fail(c->err, "%s: tensor '%s': external data has no "
                       "location", c->what, tname);
    if (!*loc)
        return ir_fail(c->err, "%s: tensor '%s': external data location is "
                       "empty", c->what, tname);
    if (!load_location_ok(loc))
        return ir_fail(c->err, "%s: tensor '%s': external data location '%s' "
                       "must be a relative path without '..'", c->what,
                       tname, loc);
    const char *so = load_strmap_get(&t->external_data, "offset");
    const char *sl = load_strmap_get(&t->external_data, "length");
    uint64_t off = 0, len = 0;
    if (so && !load_parse_size(so, &off))
        return ir_fail(c->err, "%s: tensor '%s': external data offset '%s' "
                       "is not a number", c->what, tname, so);
    if (sl && !load_parse_size(sl, &len))
        return ir_fail(c->err, "%s: tensor '%s': external data length '%s' "
                       "is not a number", c->what, tname, sl);
    IrMapping *mp = load_map_external(c, tname, loc);
    if (!mp)
        return -1;
    if (off > mp->len)
        return ir_fail(c->err, "%s: tensor '%s': external data offset %llu "
                       "is past the end of '%s' (%zu bytes)", c->what, tname,
                       (unsigned long long)off, loc, mp->len);
    if (sl && len > mp->len - off)
        return ir_fail(c->err, "%s: tensor '%s': external data offset %llu "
                       "length %llu runs past the end of '%s' (%zu bytes)",
                       c->what, tname, (unsigned long long)off,
                       (unsigned long long)len, loc, mp->len);
    if (!sl)
        len = mp->len - off;
    t->ext.data = mp->base ? (const uint8_t *)mp->base + off : NULL;
    t->ext.len = (size_t)len;
    t->ext.bound = true;
    return 0;
}

/* ---- tensors ---------------------------------------------------------- */

/* Points t at its raw_data where lb_strip left it in the mapped file, and
 * drops the ticket that stood in for it (it is not a field of the model). */
static void load_borrowed_raw(LoadCtx *c, Onnx__TensorProto *tp, IrTensor *t)
{
    ProtobufCMessage *m = &tp->base;
    for (size_t i = 0; c->holes && i < m->n_unknown_fields; i++) {
        IrBytes b;
        if (!lb_take(c->holes, c->hole_used, &m->unknown_fields[i], &b))
            continue;
        t->has_raw = true;
        t->raw = b;
        t->raw_borrowed = true;
        free(m->unknown_fields[i].data);
        memmove(&m->unknown_fields[i], &m->unknown_fields[i + 1],
                (m->n_unknown_fields - i - 1) * sizeof *m->unknown_fields);
        m->n_unknown_fields--;
        return;
    }
}

static IrTensor *load_tensor(LoadCtx *c, Onnx__TensorProto *tp)
{
    if (!tp)
        return NULL;
    IrTensor *t = mem_alloc(sizeof *t);
    t->name = load_take(&tp->name);
    t->doc_string = load_take(&tp->doc_string);
    t->has_data_type = tp->has_data_type;
    t->data_type = tp->data_type;
    LOAD_TAKE_ARRAY(t->ndims, t->dims, tp->n_dims, tp->dims);
    if (tp->segment) {
        t->segment = mem_alloc(sizeof *t->segment);
        t->segment->has_begin = tp->segment->has_begin;
        t->segment->begin = tp->segment->begin;
        t->segment->has_end = tp->segment->has_end;
        t->segment->end = tp->segment->end;
        load_unknown(&tp->segment->base, &t->segment->unk);
    }
    LOAD_TAKE_ARRAY(t->n_float, t->float_data, tp->n_float_data, tp->float_data);
    LOAD_TAKE_ARRAY(t->n_int32, t->int32_data, tp->n_int32_data, tp->int32_data);
    t->n_string = tp->n_string_data;
    t->string_data = load_bytes_list(tp->n_string_data, tp->string_data);
    LOAD_TAKE_ARRAY(t->n_int64, t->int64_data, tp->n_int64_data, tp->int64_data);
    LOAD_TAKE_ARRAY(t->n_double, t->double_data, tp->n_double_data,
                    tp->double_data);
    LOAD_TAKE_ARRAY(t->n_uint64, t->uint64_data, tp->n_uint64_data,
                    tp->uint64_data);
    t->has_raw = tp->has_raw_data;
    t->raw = load_take_bytes(&tp->raw_data);
    load_strmap(tp->n_external_data, tp->external_data, &t->external_data);
    t->has_data_location = tp->has_data_location;
    t->data_location = (int)tp->data_location;
    load_strmap(tp->n_metadata_props, tp->metadata_props, &t->meta);
    load_borrowed_raw(c, tp, t);
    load_unknown(&tp->base, &t->unk);
    if (t->has_data_location && t->data_location == 1 && load_external(c, t)) {
        ir_tensor_free(t);
        return NULL;
    }
    return t;
}

/* load_tensor within LOAD_MAX_RANK and LOAD_MAX_TENSOR_BYTES, checked
 * before any payload (or external file) is touched. */
static IrTensor *load_tensor_bounded(LoadCtx *c, Onnx__TensorProto *tp)
{
    if (tp && load_dims_ok(c, tp->name, tp->data_type, tp->n_dims, tp->dims))
        return NULL;
    return load_tensor(c, tp);
}

/* A tensor that is allowed to be absent: *ok turns false on an error. */
static IrTensor *load_opt_tensor(LoadCtx *c, Onnx__TensorProto *tp, bool *ok)
{
    if (!tp)
        return NULL;
    IrTensor *t = load_tensor_bounded(c, tp);
    if (!t)
        *ok = false;
    return t;
}

static IrSparse *load_sparse(LoadCtx *c, Onnx__SparseTensorProto *sp)
{
    /* the dense shape is a tensor's declared size like any other */
    if (load_dims_ok(c, sp->values ? sp->values->name : NULL,
                     sp->values ? sp->values->data_type : 0, sp->n_dims,
                     sp->dims))
        return NULL;
    IrSparse *s = mem_alloc(sizeof *s);
    bool ok = true;
    s->values = load_opt_tensor(c, sp->values, &ok);
    s->indices = load_opt_tensor(c, sp->indices, &ok);
    LOAD_TAKE_ARRAY(s->ndims, s->dims, sp->n_dims, sp->dims);
    load_unknown(&sp->base, &s->unk);
    if (!ok) {
        ir_sparse_free(s);
        return NULL;
    }
    return s;
}

/* ---- graphs ----------------------------------------------------------- */

static IrGraph *load_graph(LoadCtx *c, Onnx__GraphProto *gp, IrGraph *parent);

static IrAttr *load_attr(LoadCtx *c, Onnx__AttributeProto *ap, IrGraph *g)
{
    IrAttr *a = mem_alloc(sizeof *a);
    bool ok = true;
    a->name = load_take(&ap->name);
    a->ref_attr_name = load_take(&ap->ref_attr_name);
    a->doc_string = load_take(&ap->doc_string);
    a->has_type = ap->has_type;
    a->type = (int)ap->type;
    a->has_f = ap->has_f;
    a->f = ap->f;
    a->has_i = ap->has_i;
    a->i = ap->i;
    a->has_s = ap->has_s;
    a->s = load_take_bytes(&ap->s);
    a->t = load_opt_tensor(c, ap->t, &ok);
    if (ok && ap->g && !(a->g = load_graph(c, ap->g, g)))
        ok = false;
    if (ok && ap->sparse_tensor &&
        !(a->sparse_tensor = load_sparse(c, ap->sparse_tensor)))
        ok = false;
    a->tp = load_type(ap->tp);
    LOAD_TAKE_ARRAY(a->n_floats, a->floats, ap->n_floats, ap->floats);
    LOAD_TAKE_ARRAY(a->n_ints, a->ints, ap->n_ints, ap->ints);
    a->n_strings = ap->n_strings;
    a->strings = load_bytes_list(ap->n_strings, ap->strings);
    a->tensors = mem_array(ap->n_tensors + 1, sizeof *a->tensors);
    for (size_t i = 0; ok && i < ap->n_tensors; i++, a->n_tensors++)
        ok = (a->tensors[i] = load_tensor_bounded(c, ap->tensors[i])) != NULL;
    a->graphs = mem_array(ap->n_graphs + 1, sizeof *a->graphs);
    for (size_t i = 0; ok && i < ap->n_graphs; i++, a->n_graphs++)
        ok = (a->graphs[i] = load_graph(c, ap->graphs[i], g)) != NULL;
    a->sparse_tensors = mem_array(ap->n_sparse_tensors + 1,
                                       sizeof *a->sparse_tensors);
    for (size_t i = 0; ok && i < ap->n_sparse_tensors; i++, a->n_sparse++)
        ok = (a->sparse_tensors[i] = load_sparse(c, ap->sparse_tensors[i]));
    a->n_tps = ap->n_type_protos;
    a->type_protos = mem_array(a->n_tps + 1, sizeof *a->type_protos);
    for (size_t i = 0; i < a->n_tps; i++)
        a->type_protos[i] = load_type(ap->type_protos[i]);
    load_unknown(&ap->base, &a->unk);
    if (!ok) {
        /* The half-built subgraphs' outer uses must not outlive them. */
        ir_attr_free(a);
        return NULL;
    }
    return a;
}

static void load_shard_spec(Onnx__ShardingSpecProto *sp, IrShardSpec *s)
{
    s->tensor_name = load_take(&sp->tensor_name);
    LOAD_TAKE_ARRAY(s->n_device, s->device, sp->n_device, sp->device);
    s->n_groups = sp->n_index_to_device_group_map;
    s->groups = mem_array(s->n_groups + 1, sizeof *s->groups);
    for (size_t i = 0; i < s->n_groups; i++) {
        Onnx__IntIntListEntryProto *e = sp->index_to_device_group_map[i];
        s->groups[i].has_key = e->has_key;
        s->groups[i].key = e->key;
        LOAD_TAKE_ARRAY(s->groups[i].n, s->groups[i].v, e->n_value, e->value);
        load_unknown(&e->base, &s->groups[i].unk);
    }
    s->n_dims = sp->n_sharded_dim;
    s->dims = mem_array(s->n_dims + 1, sizeof *s->dims);
    for (size_t i = 0; i < s->n_dims; i++) {
        Onnx__ShardedDimProto *d = sp->sharded_dim[i];
        IrShardedDim *o = &s->dims[i];
        o->has_axis = d->has_axis;
        o->axis = d->axis;
        o->n = d->n_simple_sharding;
        o->simple = mem_array(o->n + 1, sizeof *o->simple);
        for (size_t j = 0; j < o->n; j++) {
            Onnx__SimpleShardedDimProto *x = d->simple_sharding[j];
            IrSimpleShard *y = &o->simple[j];
            if (x->dim_case == ONNX__SIMPLE_SHARDED_DIM_PROTO__DIM_DIM_VALUE) {
                y->kind = IR_DIM_VALUE;
                y->dim_value = x->dim_value;
            } else if (x->dim_case ==
                       ONNX__SIMPLE_SHARDED_DIM_PROTO__DIM_DIM_PARAM) {
                y->kind = IR_DIM_PARAM;
                y->dim_param = load_take(&x->dim_param);
            }
            y->has_num_shards = x->has_num_shards;
            y->num_shards = x->num_shards;
            load_unknown(&x->base, &y->unk);
        }
        load_unknown(&d->base, &o->unk);
    }
    load_unknown(&sp->base, &s->unk);
}

static void load_devcfgs(IrNode *n, Onnx__NodeProto *np)
{
    n->n_devcfg = np->n_device_configurations;
    if (!n->n_devcfg)
        return;
    n->devcfg = mem_array(n->n_devcfg, sizeof *n->devcfg);
    for (size_t i = 0; i < n->n_devcfg; i++) {
        Onnx__NodeDeviceConfigurationProto *d = np->device_configurations[i];
        IrNodeDevCfg *o = &n->devcfg[i];
        o->configuration_id = load_take(&d->configuration_id);
        o->n_specs = d->n_sharding_spec;
        o->specs = mem_array(o->n_specs + 1, sizeof *o->specs);
        for (size_t j = 0; j < o->n_specs; j++)
            load_shard_spec(d->sharding_spec[j], &o->specs[j]);
        o->has_pipeline_stage = d->has_pipeline_stage;
        o->pipeline_stage = d->pipeline_stage;
        load_unknown(&d->base, &o->unk);
    }
}

/* Creates the node with its outputs defined in g; inputs and attributes
 * come later, once every value of g exists (nodes may refer forward, and
 * subgraphs may name any value of g). */
static IrNode *load_node_shell(LoadCtx *c, Onnx__NodeProto *np, IrGraph *g)
{
    if (load_node_ok(c, np))
        return NULL;
    IrNode *n = mem_alloc(sizeof *n);
    n->graph = g;
    n->prev = g->last;
    if (g->last)
        g->last->next = n;
    else
        g->first = n;
    g->last = n;
    g->n_nodes++;
    n->name = load_take(&np->name);
    n->op_type = load_take(&np->op_type);
    n->domain = load_take(&np->domain);
    n->overload = load_take(&np->overload);
    n->doc_string = load_take(&np->doc_string);
    n->n_out = np->n_output;
    n->out = mem_array(n->n_out + 1, sizeof *n->out);
    n->in = mem_array(np->n_input + 1, sizeof *n->in);
    n->cap_in = np->n_input + 1;
    n->attr = mem_array(np->n_attribute + 1, sizeof *n->attr);
    for (size_t i = 0; i < np->n_output; i++) {
        const char *name = np->output[i];
        if (!name[0])
            continue;
        IrValue *v = ir_graph_value(g, name);
        if (v->kind != IR_VAL_UNDEF) {
            ir_fail(c->err, "%s: ssa: node '%s' (%s): output '%s' is already "
                    "defined in graph '%s'", c->what, n->name ? n->name : "",
                    n->op_type ? n->op_type : "", name,
                    g->name ? g->name : "");
            return NULL;
        }
        v->kind = IR_VAL_NODE;
        v->producer = n;
        v->producer_index = i;
        n->out[i] = v;
    }
    load_strmap(np->n_metadata_props, np->metadata_props, &n->meta);
    load_devcfgs(n, np);
    load_unknown(&np->base, &n->unk);
    return n;
}

/* Loads a node's attributes (subgraphs included) and binds its inputs. */
static int load_node_body(LoadCtx *c, Onnx__NodeProto *np, IrNode *n)
{
    const char *outer = c->node;
    for (size_t i = 0; i < np->n_attribute; i++) {
        c->node = n->name ? n->name : "";
        IrAttr *a = load_attr(c, np->attribute[i], n->graph);
        c->node = outer;
        if (!a)
            return -1;
        n->attr[n->n_attr++] = a;
        if (a->g || a->n_graphs)
            n->graph->may_nest = true;
        if (a->g)
            a->g->owner = n;
        for (size_t k = 0; k < a->n_graphs; k++)
            a->graphs[k]->owner = n;
    }
    n->n_in = np->n_input;
    for (size_t i = 0; i < np->n_input; i++) {
        const char *name = np->input[i];
        if (!name[0])
            continue;
        IrValue *v = ir_graph_lookup(n->graph, name);
        if (!v)
            v = ir_graph_value(n->graph, name);
        ir_node_set_input(n, i, v);
    }
    return 0;
}

/* A ValueInfoProto bound to the value of that name seen from g. */
static IrValueInfo *load_valueinfo(Onnx__ValueInfoProto *vp, IrGraph *g,
                                   bool define_input)
{
    IrValueInfo *vi = mem_alloc(sizeof *vi);
    const char *name = vp->name ? vp->name : "";
    vi->name_absent = vp->name == NULL;
    IrValue *v = define_input ? NULL : ir_graph_lookup(g, name);
    if (!v)
        v = ir_graph_value(g, name);
    if (define_input)
        v->kind = IR_VAL_INPUT;
    vi->value = v;
    v->n_infos++;
    vi->type = load_type(vp->type);
    vi->doc_string = load_take(&vp->doc_string);
    load_strmap(vp->n_metadata_props, vp->metadata_props, &vi->meta);
    load_unknown(&vp->base, &vi->unk);
    return vi;
}

/* Registers the graph's initializers (dense and sparse) as values. */
static int load_inits_of(LoadCtx *c, Onnx__GraphProto *gp, IrGraph *g)
{
    for (size_t i = 0; i < gp->n_initializer; i++) {
        IrTensor *t = load_tensor_bounded(c, gp->initializer[i]);
        if (!t)
            return -1;
        IrValue *v = ir_graph_value(g, t->name ? t->name : "");
        if (v->kind == IR_VAL_UNDEF)
            v->kind = IR_VAL_INIT;
        if (!v->init)
            v->init = t;
        ir_ptrlist_push(&g->inits, t);
    }
    for (size_t i = 0; i < gp->n_sparse_initializer; i++) {
        IrSparse *s = load_sparse(c, gp->sparse_initializer[i]);
        if (!s)
            return -1;
        const char *name = s->values && s->values->name ? s->values->name : "";
        IrValue *v = ir_graph_value(g, name);
        if (v->kind == IR_VAL_UNDEF)
            v->kind = IR_VAL_INIT;
        if (!v->sparse_init)
            v->sparse_init = s;
        ir_ptrlist_push(&g->sparse_inits, s);
    }
    return 0;
}

static int load_inits(LoadCtx *c, Onnx__GraphProto *gp, IrGraph *g)
{
    /* a subgraph's initializers are no attribute tensors of its node */
    const char *outer = c->node;
    c->node = NULL;
    int rc = load_inits_of(c, gp, g);
    c->node = outer;
    return rc;
}

static void load_qann(Onnx__GraphProto *gp, IrGraph *g)
{
    g->n_qann = gp->n_quantization_annotation;
    if (!g->n_qann)
        return;
    g->qann = mem_array(g->n_qann, sizeof *g->qann);
    for (size_t i = 0; i < g->n_qann; i++) {
        Onnx__TensorAnnotation *a = gp->quantization_annotation[i];
        g->qann[i].tensor_name = load_take(&a->tensor_name);
        load_strmap(a->n_quant_parameter_tensor_names,
                    a->quant_parameter_tensor_names, &g->qann[i].params);
        load_unknown(&a->base, &g->qann[i].unk);
    }
}

/* Loads the nodes of a graph or function body in two passes (see
 * load_node_shell). */
static int load_nodes(LoadCtx *c, size_t n, Onnx__NodeProto **np, IrGraph *g)
{
    /* counted before anything is built: c->n_nodes never passes the limit */
    if (n > c->max_nodes - c->n_nodes)
        return ir_fail(c->err, "%s: the model has more than %zu nodes in all "
                       "its graphs (LOAD_MAX_NODES)", c->what, c->max_nodes);
    c->n_nodes += n;
    IrNode **made = mem_array(n + 1, sizeof *made);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (!(made[i] = load_node_shell(c, np[i], g)))
            rc = -1;
    for (size_t i = 0; i < n && !rc; i++)
        rc = load_node_body(c, np[i], made[i]);
    free(made);
    return rc;
}

/* Appends an output entry through the IR call that records a subgraph
 * output naming an outer value as a use of that value. */
static void load_output(IrGraph *g, IrValueInfo *vi)
{
    IrValueInfo *made = ir_graph_add_output(g, vi->value, NULL);
    made->name_absent = vi->name_absent;
    made->type = vi->type;
    made->doc_string = vi->doc_string;
    made->meta = vi->meta;
    made->unk = vi->unk;
    vi->value->n_infos--;
    free(vi);
}

static IrGraph *load_graph(LoadCtx *c, Onnx__GraphProto *gp, IrGraph *parent)
{
    if (load_graph_ok(c, gp))
        return NULL;
    IrGraph *g = ir_graph_new(parent);
    g->name = load_take(&gp->name);
    g->doc_string = load_take(&gp->doc_string);
    for (size_t i = 0; i < gp->n_input; i++)
        ir_ptrlist_push(&g->inputs, load_valueinfo(gp->input[i], g, true));
    if (load_inits(c, gp, g) || load_nodes(c, gp->n_node, gp->node, g)) {
        ir_graph_free(g);
        return NULL;
    }
    for (size_t i = 0; i < gp->n_output; i++)
        load_output(g, load_valueinfo(gp->output[i], g, false));
    for (size_t i = 0; i < gp->n_value_info; i++)
        ir_ptrlist_push(&g->value_info,
                        load_valueinfo(gp->value_info[i], g, false));
    load_qann(gp, g);
    load_strmap(gp->n_metadata_props, gp->metadata_props, &g->meta);
    load_unknown(&gp->base, &g->unk);
    return g;
}

/* A bare name in a function's input/output list, as a ValueInfo. */
static IrValueInfo *load_name_info(IrGraph *g, const char *name, bool input)
{
    IrValueInfo *vi = mem_alloc(sizeof *vi);
    IrValue *v = ir_graph_value(g, name);
    if (input)
        v->kind = IR_VAL_INPUT;
    vi->value = v;
    v->n_infos++;
    return vi;
}

static IrFunction *load_function(LoadCtx *c, Onnx__FunctionProto *fp)
{
    if (load_function_ok(c, fp))
        return NULL;
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = load_take(&fp->name);
    f->domain = load_take(&fp->domain);
    f->overload = load_take(&fp->overload);
    f->doc_string = load_take(&fp->doc_string);
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    IrGraph *g = f->body;
    for (size_t i = 0; i < fp->n_input; i++)
        ir_ptrlist_push(&g->inputs, load_name_info(g, fp->input[i], true));
    f->n_attr_names = fp->n_attribute;
    f->attr_names = load_str_list(fp->n_attribute, fp->attribute);
    f->attr = mem_array(fp->n_attribute_proto + 1, sizeof *f->attr);
    int rc = 0;
    for (size_t i = 0; i < fp->n_attribute_proto && !rc; i++, f->n_attr++)
        if (!(f->attr[i] = load_attr(c, fp->attribute_proto[i], g)))
            rc = -1;
    if (!rc)
        rc = load_nodes(c, fp->n_node, fp->node, g);
    if (rc) {
        ir_function_free(f);
        return NULL;
    }
    for (size_t i = 0; i < fp->n_output; i++)
        ir_ptrlist_push(&g->outputs, load_name_info(g, fp->output[i], false));
    for (size_t i = 0; i < fp->n_value_info; i++)
        ir_ptrlist_push(&g->value_info,
                        load_valueinfo(fp->value_info[i], g, false));
    load_opsets(fp->n_opset_import, fp->opset_import, &f->n_opsets, &f->opsets);
    load_strmap(fp->n_metadata_props, fp->metadata_props, &f->meta);
    load_unknown(&fp->base, &f->unk);
    return f;
}

static int load_training(LoadCtx *c, Onnx__ModelProto *mp, IrModel *m)
{
    m->training = mem_array(mp->n_training_info + 1, sizeof *m->training);
    for (size_t i = 0; i < mp->n_training_info; i++) {
        Onnx__TrainingInfoProto *tp = mp->training_info[i];
        IrTraining *t = &m->training[m->n_training++];
        if (tp->initialization &&
            !(t->initialization = load_graph(c, tp->initialization, NULL)))
            return -1;
        if (tp->algorithm && !(t->algorithm = load_graph(c, tp->algorithm, NULL)))
            return -1;
        load_strmap(tp->n_initialization_binding, tp->initialization_binding,
                    &t->init_binding);
        load_strmap(tp->n_update_binding, tp->update_binding,
                    &t->update_binding);
        load_unknown(&tp->base, &t->unk);
    }
    return 0;
}

static void load_configs(Onnx__ModelProto *mp, IrModel *m)
{
    m->n_configs = mp->n_configuration;
    if (!m->n_configs)
        return;
    m->configs = mem_array(m->n_configs, sizeof *m->configs);
    for (size_t i = 0; i < m->n_configs; i++) {
        Onnx__DeviceConfigurationProto *d = mp->configuration[i];
        IrDevCfg *o = &m->configs[i];
        o->name = load_take(&d->name);
        o->has_num_devices = d->has_num_devices;
        o->num_devices = d->num_devices;
        o->n_device = d->n_device;
        o->device = load_str_list(d->n_device, d->device);
        load_unknown(&d->base, &o->unk);
    }
}

static int load_model_msg(LoadCtx *c, Onnx__ModelProto *mp, IrModel *m)
{
    if (load_opsets_ok(c, mp->n_opset_import, mp->opset_import))
        return -1;
    m->has_ir_version = mp->has_ir_version;
    m->ir_version = mp->ir_version;
    load_opsets(mp->n_opset_import, mp->opset_import, &m->n_opsets, &m->opsets);
    m->producer_name = load_take(&mp->producer_name);
    m->producer_version = load_take(&mp->producer_version);
    m->domain = load_take(&mp->domain);
    m->has_model_version = mp->has_model_version;
    m->model_version = mp->model_version;
    m->doc_string = load_take(&mp->doc_string);
    load_strmap(mp->n_metadata_props, mp->metadata_props, &m->meta);
    load_configs(mp, m);
    load_unknown(&mp->base, &m->unk);
    if (mp->graph && !(m->graph = load_graph(c, mp->graph, NULL)))
        return -1;
    if (load_training(c, mp, m))
        return -1;
    m->functions = mem_array(mp->n_functions + 1, sizeof *m->functions);
    for (size_t i = 0; i < mp->n_functions; i++) {
        if (!(m->functions[i] = load_function(c, mp->functions[i])))
            return -1;
        m->n_functions++;
    }
    return 0;
}

/* ---- entry points ------------------------------------------------------ */

/* Decodes a checked ModelProto (bytes from lb_strip when holes is set)
 * into *out. */
static int load_decode(const uint8_t *buf, size_t len, const char *dir,
                       const char *what, const LoadOptions *opt,
                       const LbHoles *holes, IrModel **out, IrError *err)
{
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    if (!mp)
        return ir_fail(err, "%s: not a valid ONNX model: protobuf decoding "
                       "failed", what);
    IrModel *m = ir_model_new();
    LoadCtx c = {.model = m, .what = what, .dir = dir,
                 .skip_external = opt && opt->skip_external, .err = err};
    c.max_nodes = opt && opt->max_nodes ? opt->max_nodes : LOAD_MAX_NODES;
    if (holes && holes->n) {
        c.holes = holes;
        c.hole_used = mem_array(holes->n, sizeof *c.hole_used);
    }
    if (dir)
        c.dir_real = realpath(dir, NULL);
    if (dir && !c.dir_real)
        c.dir = NULL;
    m->dir = mem_strdup(dir);
    int rc = load_model_msg(&c, mp, m);
    if (rc == 0 && c2_is_variant(m))
        c2_adopt(m);
    /* Every ticket must have found its tensor; if one did not (a tensor
     * the IR does not keep), the caller decodes the ordinary way. */
    for (size_t i = 0; rc == 0 && c.hole_used && i < holes->n; i++)
        if (!c.hole_used[i])
            rc = 1;
    free(c.hole_used);
    free(c.dir_real);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (rc) {
        ir_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* The wire check, with the file's name in front of its message. */
static int load_checked(const uint8_t *buf, size_t len, const char *what,
                        IrError *err)
{
    if (!len)
        return ir_fail(err, "%s: empty input", what);
    if (load_wire_check(buf, len, err)) {
        char tmp[sizeof err->msg];
        snprintf(tmp, sizeof tmp, "%s", err->msg);
        return ir_fail(err, "%s: not a valid ONNX model: %s", what, tmp);
    }
    return 0;
}

/* A model in memory, the PyTorch/Caffe2 variant included: that one is
 * decoded from lc2_rewrite's copy, with its own field meanings. */
static int load_buffer(const uint8_t *buf, size_t len, const char *dir,
                       const char *what, const LoadOptions *opt, IrModel **out,
                       IrError *err)
{
    uint8_t *copy = NULL;
    size_t clen = 0;
    if (lc2_rewrite(buf, len, LOAD_MAX_DEPTH, &copy, &clen, err)) {
        char tmp[sizeof err->msg];
        snprintf(tmp, sizeof tmp, "%s", err->msg);
        return ir_fail(err, "%s: %s", what, tmp);
    }
    int rc = copy ? load_checked(copy, clen, what, err)
                  : load_checked(buf, len, what, err);
    if (rc == 0)
        rc = copy ? load_decode(copy, clen, dir, what, opt, NULL, out, err)
                  : load_decode(buf, len, dir, what, opt, NULL, out, err);
    free(copy);
    return rc ? -1 : 0;
}

int load_model_buffer(const uint8_t *buf, size_t len, const char *dir,
                      const char *what, const LoadOptions *opt, IrModel **out,
                      IrError *err)
{
    *out = NULL;
    what = what ? what : "model";
    if (!len)
        return ir_fail(err, "%s: empty input", what);
    return load_buffer(buf, len, dir, what, opt, out, err);
}


/* Records that m was read from `path` without borrowing from a mapping:
 * save still asks which file a model came from (a rewrite in place). */
static void load_note_source(IrModel *m, const char *path)
{
    m->maps = mem_grow(m->maps, m->n_maps + 1, sizeof *m->maps);
    m->maps[m->n_maps++] = (IrMapping){mem_strdup(path), NULL, NULL, 0, -1, NULL};
}

/* Loads a mapped model file, borrowing its raw_data where it can; on
 * success the model owns the mapping (it holds the borrowed bytes). */
static int load_mapped(void *base, size_t len, int fd, const char *path,
                       const char *dir, const LoadOptions *opt,
                       IrModel **out, IrError *err)
{
    if (len && lc2_ir_variant(base, len)) {
        /* The variant is decoded from a renumbered copy: nothing borrowed. */
        int rc = load_buffer(base, len, dir, path, opt, out, err);
        load_unmap(base, len);
        close(fd);
        if (rc == 0)
            load_note_source(*out, path);
        return rc;
    }
    if (load_checked(base, len, path, err)) {
        load_unmap(base, len);
        close(fd);
        return -1;
    }
    LbHoles holes;
    size_t slen = 0;
    uint8_t *small = lb_strip(base, len, &holes, &slen);
    int rc = 1;
    if (small)
        rc = load_decode(small, slen, dir, path, opt, &holes, out, err);
    free(small);
    free(holes.h);
    if (rc == 0) {
        IrModel *m = *out;
        m->maps = mem_grow(m->maps, m->n_maps + 1, sizeof *m->maps);
        m->maps[m->n_maps++] = (IrMapping){mem_strdup(path), NULL, base, len,
                                           load_keep_fd(fd, len),
                                           base ? load_unmap : NULL};
        return 0;
    }
    if (rc == 1)
        rc = load_decode(base, len, dir, path, opt, NULL, out, err) ? -1 : 0;
    load_unmap(base, len);
    close(fd);
    if (rc == 0)
        load_note_source(*out, path);
    return rc;
}

/* Maps a whole file read-only; *base is NULL for an empty file. *fd stays
 * open (the caller closes it). */
static int load_map_file(const char *path, void **base, size_t *len, int *fd,
                         IrError *err)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (*fd < 0)
        return ir_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) || !S_ISREG(st.st_mode)) {
        close(*fd);
        return ir_fail(err, "%s: not a regular file", path);
    }
    *len = (size_t)st.st_size;
    *base = NULL;
    if (*len) {
        *base = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, *fd, 0);
        if (*base == MAP_FAILED) {
            close(*fd);
            return ir_fail(err, "%s: cannot map: %s", path, strerror(errno));
        }
        guard_map_add(*base, *len, path);
    }
    return 0;
}

/* The folder part of a path ("." when there is none). Caller frees. */
static char *load_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return mem_strdup(".");
    if (slash == path)
        return mem_strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = mem_alloc(n + 1);
    memcpy(d, path, n);
    return d;
}

int load_model_file(const char *path, const LoadOptions *opt, IrModel **out,
                    IrError *err)
{
    void *base;
    size_t len;
    int fd;
    *out = NULL;
    if (load_map_file(path, &base, &len, &fd, err))
        return -1;
    if (!len) {
        close(fd);
        return ir_fail(err, "%s: empty file", path);
    }
    char *dir = load_dirname(path);
    int rc = load_mapped(base, len, fd, path, dir, opt, out, err);
    free(dir);
    return rc;
}

int load_tensor_file(const char *path, IrTensor **out, IrError *err)
{
    void *base;
    size_t len;
    int fd;
    *out = NULL;
    if (load_map_file(path, &base, &len, &fd, err))
        return -1;
    close(fd);
    IrError sub;
    if (load_check_msg(base, len, &onnx__tensor_proto__descriptor, 1, 0,
                       &sub)) {
        if (base)
            load_unmap(base, len);
        return ir_fail(err, "%s: not a valid TensorProto: %s", path, sub.msg);
    }
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, base);
    if (base)
        load_unmap(base, len);
    if (!tp)
        return ir_fail(err, "%s: not a valid TensorProto", path);
    LoadCtx c = {.what = path, .skip_external = true, .err = err};
    *out = load_tensor_bounded(&c, tp);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return *out ? 0 : -1;
}

int load_map_readonly(const char *path, const void **base, size_t *len,
                      IrError *err)
{
    void *b;
    int fd;
    if (load_map_file(path, &b, len, &fd, err))
        return -1;
    close(fd);
    *base = b;
    return 0;
}

void load_unmap_readonly(const void *base, size_t len)
{
    if (base)
        load_unmap((void *)base, len);
}

void *load_message_buffer(const uint8_t *buf, size_t len,
                          const void *descriptor, const char *what,
                          IrError *err)
{
    const ProtobufCMessageDescriptor *d = descriptor;
    IrError sub;
    if (len && !buf) {
        ir_fail(err, "%s: no bytes (NULL) for %zu bytes", what, len);
        return NULL;
    }
    if (load_check_msg(buf, len, d, 1, 0, &sub)) {
        ir_fail(err, "%s: not a valid %s: %s", what, d->short_name, sub.msg);
        return NULL;
    }
    /* protobuf-c copies every field out of buf: nothing borrows it. */
    static const uint8_t none[1];
    ProtobufCMessage *msg =
        protobuf_c_message_unpack(d, NULL, len, len ? buf : none);
    if (!msg)
        ir_fail(err, "%s: not a valid %s", what, d->short_name);
    return msg;
}

void *load_message_file(const char *path, const void *descriptor,
                        IrError *err)
{
    const void *base;
    size_t len;
    if (load_map_readonly(path, &base, &len, err))
        return NULL;
    void *msg = load_message_buffer(base, len, descriptor, path, err);
    load_unmap_readonly(base, len);
    return msg;
}

IrTensor *load_tensor_message(void *tensor_proto, const char *what,
                              IrError *err)
{
    LoadCtx c = {.what = what, .skip_external = true, .err = err};
    return load_tensor_bounded(&c, tensor_proto);
}
