/*
 * test_api_pb - oc_evaluate_pb, oc_buffers_free and oc_set_eval_seed
 * (include/onnxconvert.h): values as serialized ONNX messages.
 *
 * Inputs are encoded here by hand, field by field from onnx.proto's
 * numbers (not with the library's encoder); outputs are decoded with
 * protobuf-c's generated code and compared with values written by hand.
 * Covers strings, a sequence, a map (in: CastMap; out: ZipMap's sequence
 * of maps), optionals (empty and holding a tensor), float16, a 4-bit
 * output, the seed, and the refusals: an unknown name, a missing or
 * repeated input, the wrong kind of message, truncated bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx.pb-c.h"
#include "onnxconvert.h"
#include "io/save.h"
#include "t.h"

static bool has(const char *s, const char *part)
{
    return s && strstr(s, part) != NULL;
}

#define T_OK(call) T_CHECK((call) == 0, "%s: %s", #call, oc_error())

static void die(const char *what)
{
    fprintf(stderr, "test_api_pb: cannot set up: %s\n", what);
    exit(1);
}

#include "api_models.h"

/* ---- a hand encoder (protobuf wire format) -------------------------- */

typedef struct Pb {
    uint8_t b[1024];
    size_t n;
} Pb;

static void pb_varint(Pb *p, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        p->b[p->n++] = byte | (v ? 0x80 : 0);
    } while (v);
}

static void pb_int(Pb *p, unsigned field, uint64_t v)
{
    pb_varint(p, (uint64_t)field << 3);
    pb_varint(p, v);
}

static void pb_bytes(Pb *p, unsigned field, const void *d, size_t n)
{
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, n);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void pb_msg(Pb *p, unsigned field, const Pb *sub)
{
    pb_bytes(p, field, sub->b, sub->n);
}

/* TensorProto fields: dims 1, data_type 2, string_data 6, raw_data 9. */
static Pb tensor_raw(int32_t type, size_t rank, const int64_t *dims, const void *raw,
                     size_t n)
{
    Pb t = {0};
    for (size_t i = 0; i < rank; i++)
        pb_int(&t, 1, (uint64_t)dims[i]);
    pb_int(&t, 2, (uint64_t)type);
    pb_bytes(&t, 9, raw, n);
    return t;
}

/* ---- models --------------------------------------------------------- */

/* One node `op` of `domain` reading x (n_in times) into y, at ai.onnx
 * `opset` (and ai.onnx.ml 1 when domain is it). Types owned by the model. */
static IrModel *one_node(int64_t opset, const char *domain, const char *op, size_t n_in,
                         IrType *xt, IrType *yt, IrNode **node)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 10;
    ir_model_set_opset(m, "", opset);
    if (*domain)
        ir_model_set_opset(m, domain, 1);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("g");
    ir_graph_add_input(g, "x", xt);
    const char *in[] = {"x", "x"}, *out[] = {"y"};
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, domain, "n", n_in, in, 1, out, &err);
    if (!n)
        die(err.msg);
    if (node)
        *node = n;
    ir_graph_add_output(g, ir_graph_find_local(g, "y"), yt);
    return m;
}

static IrType *wrap(IrTypeKind kind, IrType *elem)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = kind;
    t->elem = elem;
    return t;
}

static IrType *tensor_of(int32_t type)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = IR_TYPE_TENSOR;
    t->has_elem_type = true;
    t->elem_type = type;
    return t;
}

static IrType *map_of(int32_t key, int32_t value)
{
    IrType *t = wrap(IR_TYPE_MAP, tensor_of(value));
    t->has_key_type = true;
    t->key_type = key;
    return t;
}

/* Runs m on one input x of `p`'s bytes; the outputs, or NULL. */
static oc_buffer *run1(oc_model *m, const Pb *p, size_t *n)
{
    oc_buffer in = {.name = "x", .data = (void *)p->b, .size = p->n};
    oc_buffer *out = NULL;
    *n = 0;
    if (oc_evaluate_pb(m, &in, 1, &out, n) < 0)
        return NULL;
    return out;
}

static Onnx__TensorProto *unpack_tensor(const oc_buffer *b)
{
    return onnx__tensor_proto__unpack(NULL, b->size, b->data);
}

/* ---- the kinds ------------------------------------------------------- */

/* StringConcat(x, x) on ["ab", "" , "é"]: strings in and out. */
static void test_strings(void)
{
    int64_t d[] = {3};
    oc_model *m = am_from_ir(one_node(20, "", "StringConcat", 2, ir_type_tensor(OC_STRING, 1, d),
                                   ir_type_tensor(OC_STRING, 1, d), NULL));
    Pb x = {0};
    pb_int(&x, 1, 3);
    pb_int(&x, 2, OC_STRING);
    pb_bytes(&x, 6, "ab", 2);
    pb_bytes(&x, 6, "", 0);
    pb_bytes(&x, 6, "\xc3\xa9", 2);
    size_t n;
    oc_buffer *out = run1(m, &x, &n);
    T_CHECK(out && n == 1, "StringConcat ran: %s", oc_error());
    Onnx__TensorProto *t = out ? unpack_tensor(&out[0]) : NULL;
    T_CHECK(t && t->data_type == OC_STRING && t->n_dims == 1 && t->dims[0] == 3 &&
            t->n_string_data == 3 && t->string_data[0].len == 4 &&
            !memcmp(t->string_data[0].data, "abab", 4) && t->string_data[1].len == 0 &&
            t->string_data[2].len == 4 &&
            !memcmp(t->string_data[2].data, "\xc3\xa9\xc3\xa9", 4),
            "strings doubled");
    T_CHECK(out && !strcmp(out[0].name, "y") && t && t->name && !strcmp(t->name, "y"),
            "the output buffer and its message are named after the graph output");
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);
}

/* Identity-16 on a sequence of two float tensors: a SequenceProto in and
 * out; SequenceLength gives 2. */
static void test_sequence(void)
{
    float a[2] = {1.5f, -2}, b[1] = {4};
    Pb seq = {0};
    pb_int(&seq, 2, 1);   /* elem_type TENSOR */
    Pb ta = tensor_raw(OC_FLOAT, 1, (int64_t[]){2}, a, sizeof a);
    Pb tb = tensor_raw(OC_FLOAT, 1, (int64_t[]){1}, b, sizeof b);
    pb_msg(&seq, 3, &ta);
    pb_msg(&seq, 3, &tb);

    oc_model *m = am_from_ir(one_node(16, "", "Identity", 1, wrap(IR_TYPE_SEQUENCE, tensor_of(OC_FLOAT)),
                                   wrap(IR_TYPE_SEQUENCE, tensor_of(OC_FLOAT)), NULL));
    size_t n;
    oc_buffer *out = run1(m, &seq, &n);
    T_CHECK(out && n == 1, "Identity on a sequence ran: %s", oc_error());
    Onnx__SequenceProto *s = out ? onnx__sequence_proto__unpack(NULL, out[0].size,
                                                                out[0].data) : NULL;
    bool ok = s && s->elem_type == 1 && s->n_tensor_values == 2;
    for (size_t i = 0; ok && i < 2; i++) {
        Onnx__TensorProto *t = s->tensor_values[i];
        const float *want = i ? b : a;
        size_t k = i ? 1 : 2;
        ok = t->data_type == OC_FLOAT && t->n_dims == 1 && t->dims[0] == (int64_t)k &&
             t->raw_data.len == k * 4 && !memcmp(t->raw_data.data, want, k * 4);
    }
    T_CHECK(ok, "the sequence came back with both tensors");
    if (s)
        onnx__sequence_proto__free_unpacked(s, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);

    m = am_from_ir(one_node(11, "", "SequenceLength", 1, wrap(IR_TYPE_SEQUENCE, tensor_of(OC_FLOAT)),
                         ir_type_tensor(OC_INT64, 0, NULL), NULL));
    out = run1(m, &seq, &n);
    Onnx__TensorProto *t = out ? unpack_tensor(&out[0]) : NULL;
    int64_t len = 0;
    if (t && t->raw_data.len == 8)
        memcpy(&len, t->raw_data.data, 8);
    T_CHECK(t && t->n_dims == 0 && t->data_type == OC_INT64 && len == 2,
            "SequenceLength of the sequence is 2: %s", oc_error());
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);
}

/* A MapProto in: CastMap (ai.onnx.ml) of {3: 0.5, 1: 1.5} is [[1.5, 0.5]]
 * (values ordered by key). A sequence of maps out: ZipMap of [[7, 8]] with
 * labels 10, 20 is [{10: 7, 20: 8}]. */
static void test_map(void)
{
    IrNode *node;
    oc_model *m = am_from_ir(one_node(13, "ai.onnx.ml", "CastMap", 1, map_of(OC_INT64, OC_FLOAT),
                                   ir_type_tensor(OC_FLOAT, 2, (int64_t[]){1, 2}), &node));
    float v0 = 0.5f, v1 = 1.5f;
    Pb vals = {0}, mp = {0};
    pb_int(&vals, 2, 1);
    Pb s0 = tensor_raw(OC_FLOAT, 0, NULL, &v0, 4), s1 = tensor_raw(OC_FLOAT, 0, NULL, &v1, 4);
    pb_msg(&vals, 3, &s0);
    pb_msg(&vals, 3, &s1);
    pb_int(&mp, 2, OC_INT64);
    pb_int(&mp, 3, 3);
    pb_int(&mp, 3, 1);
    pb_msg(&mp, 5, &vals);
    size_t n;
    oc_buffer *out = run1(m, &mp, &n);
    Onnx__TensorProto *t = out ? unpack_tensor(&out[0]) : NULL;
    float got[2] = {0, 0};
    if (t && t->raw_data.len == 8)
        memcpy(got, t->raw_data.data, 8);
    T_CHECK(t && t->n_dims == 2 && t->dims[1] == 2 && got[0] == 1.5f && got[1] == 0.5f,
            "CastMap of a MapProto: %s", oc_error());
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    oc_buffers_free(out, n);

    /* keys and values that do not pair up are refused */
    Pb odd = mp;
    pb_int(&odd, 3, 9);
    out = run1(m, &odd, &n);
    T_CHECK(!out && has(oc_error(), "3 keys and 2 values"), "a map of 3 keys, 2 values: %s",
            oc_error());
    oc_model_free(m);

    IrModel *ir = one_node(13, "ai.onnx.ml", "ZipMap", 1,
                           ir_type_tensor(OC_FLOAT, 2, (int64_t[]){1, 2}),
                           wrap(IR_TYPE_SEQUENCE, map_of(OC_INT64, OC_FLOAT)), &node);
    ir_node_set_attr(node, ir_attr_ints("classlabels_int64s", 2, (int64_t[]){10, 20}));
    m = am_from_ir(ir);
    float x[2] = {7, 8};
    Pb xt = tensor_raw(OC_FLOAT, 2, (int64_t[]){1, 2}, x, sizeof x);
    out = run1(m, &xt, &n);
    Onnx__SequenceProto *s = out ? onnx__sequence_proto__unpack(NULL, out[0].size,
                                                                out[0].data) : NULL;
    Onnx__MapProto *p = s && s->n_map_values == 1 ? s->map_values[0] : NULL;
    bool ok = p && s->elem_type == 4 && p->key_type == OC_INT64 && p->n_keys == 2 &&
              p->keys[0] == 10 && p->keys[1] == 20 && p->values &&
              p->values->n_tensor_values == 2;
    for (size_t i = 0; ok && i < 2; i++) {
        Onnx__TensorProto *e = p->values->tensor_values[i];
        float f = 0;
        if (e->raw_data.len == 4)
            memcpy(&f, e->raw_data.data, 4);
        ok = e->n_dims == 0 && e->data_type == OC_FLOAT && f == x[i];
    }
    T_CHECK(ok, "ZipMap gives a SequenceProto of one MapProto {10: 7, 20: 8}: %s",
            oc_error());
    if (s)
        onnx__sequence_proto__free_unpacked(s, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);
}

/* OptionalHasElement-18 of an empty OptionalProto is false, of one holding
 * a tensor true; Identity-16 gives an optional back as an OptionalProto. */
static void test_optional(void)
{
    IrType *ot = wrap(IR_TYPE_OPTIONAL, tensor_of(OC_FLOAT));
    oc_model *m = am_from_ir(one_node(18, "", "OptionalHasElement", 1, ot,
                                   ir_type_tensor(OC_BOOL, 0, NULL), NULL));
    Pb none = {0}, some = {0};
    pb_int(&none, 2, 0);
    float v = 3;
    Pb t3 = tensor_raw(OC_FLOAT, 0, NULL, &v, 4);
    pb_int(&some, 2, 1);
    pb_msg(&some, 3, &t3);
    for (int full = 0; full < 2; full++) {
        size_t n;
        oc_buffer *out = run1(m, full ? &some : &none, &n);
        Onnx__TensorProto *t = out ? unpack_tensor(&out[0]) : NULL;
        T_CHECK(t && t->data_type == OC_BOOL && t->raw_data.len == 1 &&
                t->raw_data.data[0] == full, "OptionalHasElement %s: %s",
                full ? "of a value" : "of none", oc_error());
        if (t)
            onnx__tensor_proto__free_unpacked(t, NULL);
        oc_buffers_free(out, n);
    }
    oc_model_free(m);

    m = am_from_ir(one_node(16, "", "Identity", 1, wrap(IR_TYPE_OPTIONAL, tensor_of(OC_FLOAT)),
                         wrap(IR_TYPE_OPTIONAL, tensor_of(OC_FLOAT)), NULL));
    size_t n;
    oc_buffer *out = run1(m, &some, &n);
    Onnx__OptionalProto *o = out ? onnx__optional_proto__unpack(NULL, out[0].size,
                                                                out[0].data) : NULL;
    float got = 0;
    if (o && o->tensor_value && o->tensor_value->raw_data.len == 4)
        memcpy(&got, o->tensor_value->raw_data.data, 4);
    T_CHECK(o && o->elem_type == 1 && got == 3, "an optional tensor comes back: %s",
            oc_error());
    if (o)
        onnx__optional_proto__free_unpacked(o, NULL);
    oc_buffers_free(out, n);
    out = run1(m, &none, &n);
    o = out ? onnx__optional_proto__unpack(NULL, out[0].size, out[0].data) : NULL;
    T_CHECK(o && !o->tensor_value && !o->sequence_value && o->elem_type == 0,
            "an empty optional comes back empty: %s", oc_error());
    if (o)
        onnx__optional_proto__free_unpacked(o, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);
}

/* Neg on float16 [1, -2, 0.5]: bit patterns 3C00 C000 3800 -> BC00 4000 B800.
 * Cast-21 of floats [1, -2, 3] to INT4: packed low nibble first, E1 03. */
static void test_small_types(void)
{
    int64_t d[] = {3};
    oc_model *m = am_from_ir(one_node(13, "", "Neg", 1, ir_type_tensor(OC_FLOAT16, 1, d),
                                   ir_type_tensor(OC_FLOAT16, 1, d), NULL));
    const uint8_t in[6] = {0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38};
    const uint8_t want[6] = {0x00, 0xbc, 0x00, 0x40, 0x00, 0xb8};
    Pb x = tensor_raw(OC_FLOAT16, 1, d, in, sizeof in);
    size_t n;
    oc_buffer *out = run1(m, &x, &n);
    Onnx__TensorProto *t = out ? unpack_tensor(&out[0]) : NULL;
    T_CHECK(t && t->data_type == OC_FLOAT16 && t->raw_data.len == 6 &&
            !memcmp(t->raw_data.data, want, 6), "Neg on float16: %s", oc_error());
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);

    IrNode *node;
    IrModel *ir = one_node(21, "", "Cast", 1, ir_type_tensor(OC_FLOAT, 1, d),
                           ir_type_tensor(OC_INT4, 1, d), &node);
    ir_node_set_attr(node, ir_attr_int("to", OC_INT4));
    m = am_from_ir(ir);
    float f[3] = {1, -2, 3};
    x = tensor_raw(OC_FLOAT, 1, d, f, sizeof f);
    out = run1(m, &x, &n);
    t = out ? unpack_tensor(&out[0]) : NULL;
    T_CHECK(t && t->data_type == OC_INT4 && t->raw_data.len == 2 &&
            t->raw_data.data[0] == 0xe1 && t->raw_data.data[1] == 0x03,
            "Cast to INT4 packs two per byte: %s", oc_error());
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);
}

/* RandomUniformLike: one seed gives one output, another seed another, and
 * oc_evaluate draws from the same seed as oc_evaluate_pb. */
static void test_seed(void)
{
    int64_t d[] = {8};
    oc_model *m = am_from_ir(one_node(13, "", "RandomUniformLike", 1, ir_type_tensor(OC_FLOAT, 1, d),
                                   ir_type_tensor(OC_FLOAT, 1, d), NULL));
    float z[8] = {0};
    Pb x = tensor_raw(OC_FLOAT, 1, d, z, sizeof z);
    float got[3][8];
    uint64_t seeds[3] = {7, 7, 8};
    for (int i = 0; i < 3; i++) {
        T_OK(oc_set_eval_seed(m, seeds[i]));
        size_t n;
        oc_buffer *out = run1(m, &x, &n);
        Onnx__TensorProto *t = out ? unpack_tensor(&out[0]) : NULL;
        memset(got[i], 0, sizeof got[i]);
        if (t && t->raw_data.len == sizeof got[i])
            memcpy(got[i], t->raw_data.data, sizeof got[i]);
        T_CHECK(t, "RandomUniformLike ran: %s", oc_error());
        if (t)
            onnx__tensor_proto__free_unpacked(t, NULL);
        oc_buffers_free(out, n);
    }
    T_CHECK(!memcmp(got[0], got[1], sizeof got[0]), "the same seed, the same draws");
    T_CHECK(memcmp(got[0], got[2], sizeof got[0]) != 0, "another seed, other draws");
    oc_tensor in = {.name = "x", .elem_type = OC_FLOAT, .rank = 1, .dims = d, .data = z,
                    .size = sizeof z};
    oc_tensor *out = NULL;
    size_t n = 0;
    T_OK(oc_set_eval_seed(m, 7));
    T_OK(oc_evaluate(m, &in, 1, &out, &n));
    T_CHECK(n == 1 && !memcmp(out[0].data, got[0], sizeof got[0]),
            "oc_evaluate uses the seed too");
    oc_tensors_free(out, n);
    T_CHECK(oc_set_eval_seed(NULL, 1) == -1 && has(oc_error(), "NULL"), "NULL model");
    oc_model_free(m);
}

/* ---- refusals -------------------------------------------------------- */

static void refuse(oc_model *m, const oc_buffer *in, size_t n_in, const char *part,
                   const char *what)
{
    oc_buffer *out = (oc_buffer *)1;
    size_t n = 7;
    int rc = oc_evaluate_pb(m, in, n_in, &out, &n);
    T_CHECK(rc == -1 && out == NULL && n == 0 && has(oc_error(), part),
            "%s: rc %d, message '%s', expected '%s'", what, rc, oc_error(), part);
}

static void test_refusals(void)
{
    int64_t d[] = {2};
    oc_model *m = am_from_ir(one_node(13, "", "Relu", 1, ir_type_tensor(OC_FLOAT, 1, d),
                                   ir_type_tensor(OC_FLOAT, 1, d), NULL));
    float f[2] = {-1, 2};
    Pb x = tensor_raw(OC_FLOAT, 1, d, f, sizeof f);
    oc_buffer good = {.name = "x", .data = x.b, .size = x.n};
    oc_buffer b = good, two[2] = {good, good};
    b.name = "ghost";
    refuse(m, &b, 1, "input 'ghost' is not an input of the model", "an unknown name");
    oc_buffer both[2] = {good, b};
    refuse(m, both, 2, "input 'ghost'", "an unknown name beside the right one");
    refuse(m, two, 2, "input 'x' was given 2 times", "one input twice");
    refuse(m, NULL, 0, "input 'x' was not given", "no inputs");
    refuse(m, NULL, 1, "inputs is NULL", "NULL array");
    b = good;
    b.name = NULL;
    refuse(m, &b, 1, "has no name", "no name");
    b = good;
    b.data = NULL;
    refuse(m, &b, 1, "data is NULL", "NULL data");
    b = good;
    b.size = x.n - 3;
    refuse(m, &b, 1, "input 'x': not a valid TensorProto", "truncated bytes");
    /* a SequenceProto for a tensor input: field 3 of a TensorProto is a
     * Segment, not a tensor, and the elem_type varint is field 2 (an
     * int32 data_type 1): so it decodes to no tensor the input takes */
    Pb seq = {0};
    pb_int(&seq, 2, 1);
    pb_msg(&seq, 3, &x);
    b = (oc_buffer){.name = "x", .data = seq.b, .size = seq.n};
    refuse(m, &b, 1, "input 'x'", "a SequenceProto where a tensor is declared");
    float dd[2] = {1, 2};
    Pb wrong = tensor_raw(OC_DOUBLE, 1, (int64_t[]){1}, dd, 8);
    b = (oc_buffer){.name = "x", .data = wrong.b, .size = wrong.n};
    refuse(m, &b, 1, "element type DOUBLE", "a double tensor for a float input");
    T_CHECK(oc_evaluate_pb(m, &good, 1, NULL, &(size_t){0}) == -1 &&
            has(oc_error(), "outputs is NULL"), "NULL outputs");
    T_CHECK(oc_evaluate_pb(NULL, &good, 1, &(oc_buffer *){NULL}, &(size_t){0}) == -1 &&
            has(oc_error(), "the model is NULL"), "NULL model");

    /* the model still runs after all that */
    size_t n;
    oc_buffer *out = run1(m, &x, &n);
    Onnx__TensorProto *t = out ? unpack_tensor(&out[0]) : NULL;
    float got[2] = {9, 9};
    if (t && t->raw_data.len == 8)
        memcpy(got, t->raw_data.data, 8);
    T_CHECK(got[0] == 0 && got[1] == 2, "Relu after the refusals: %s", oc_error());
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    oc_buffers_free(out, n);
    oc_model_free(m);

    /* a sequence input given a TensorProto */
    m = am_from_ir(one_node(11, "", "SequenceLength", 1, wrap(IR_TYPE_SEQUENCE, tensor_of(OC_FLOAT)),
                         ir_type_tensor(OC_INT64, 0, NULL), NULL));
    refuse(m, &good, 1, "not a valid SequenceProto", "a TensorProto where a sequence is declared");
    oc_model_free(m);

    /* the checker first: a model it refuses runs nothing */
    IrModel *ir = one_node(13, "", "Relu", 1, ir_type_tensor(OC_FLOAT, 1, d),
                           ir_type_tensor(OC_FLOAT, 1, d), NULL);
    ir->graph->first->op_type[0] = 'r';
    m = am_from_ir(ir);
    refuse(m, &good, 1, "oc_evaluate_pb: ", "a model the checker refuses");
    oc_model_free(m);
    oc_buffers_free(NULL, 3);
}

int main(void)
{
    test_strings();
    test_sequence();
    test_map();
    test_optional();
    test_small_types();
    test_seed();
    test_refusals();
    return t_done("test_api_pb");
}
