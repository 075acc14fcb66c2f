/*
 * test_caffe2.c - models in the PyTorch/Caffe2 variant of IR 3
 * (ir_version 0x103, the seed onnx.proto of package torch).
 *
 * The model is written field by field (wire.h) with every field of the
 * variant that standard onnx.proto lacks or reads differently. Checked:
 * the loader reads the reused numbers with the variant's meaning (none of
 * them shows up as an ONNX field), `info` lists the extras, `check`
 * accepts the model, a plain round trip keeps the variant, and conversion
 * to opsets 7, 9, 13 and 17 writes a standard model with every standard
 * field intact, the extras dropped and reported (or kept as unknown fields
 * with keep_metadata), which the evaluator runs to outputs computed here
 * by hand. The fields follow the variant's torch.proto
 * (../shared/seeds/pytorch-caffe2-variant-proto.txt); a second model
 * carries TypeProto.Sequence's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "eval/eval.h"
#include "driver/info.h"
#include "ir/ir.h"
#include "io/load.h"
#include "io/save.h"
#include "t.h"
#include "wire.h"

/* ---- the model's numbers ------------------------------------------------ */

static const float X_IN[9] = {1, -2, 3, -4, 5, -6, 7, -8, 9};
static const float W_DATA[4] = {0.5f, -1, 2, 0.25f};
static const float B_DATA[1] = {0.1f};
static const float K_DATA[4] = {-3, 1, -0.5f, 2};
static const float G_DATA[12] = {1, 0, -1, 2, 0.5f, 0.5f, 0.5f, 0.5f, -2, 1, 0, 3};
static const float CB_DATA[3] = {0.5f, -0.5f, 1};

/* Y = Gemm(Flatten(Relu(Conv(X, W, B) + K)), G, Cb, transB=1), by hand. */
static void expected_y(float y[3])
{
    float f[4];
    for (int oh = 0; oh < 2; oh++)
        for (int ow = 0; ow < 2; ow++) {
            float c = B_DATA[0];
            for (int kh = 0; kh < 2; kh++)
                for (int kw = 0; kw < 2; kw++)
                    c += X_IN[(oh + kh) * 3 + ow + kw] * W_DATA[kh * 2 + kw];
            float a = c + K_DATA[oh * 2 + ow];
            f[oh * 2 + ow] = a > 0 ? a : 0;
        }
    for (int j = 0; j < 3; j++) {
        y[j] = CB_DATA[j];
        for (int k = 0; k < 4; k++)
            y[j] += f[k] * G_DATA[j * 4 + k];
    }
}

/* ---- writing it --------------------------------------------------------- */

static void put_floats(WireBuf *b, uint32_t field, size_t n, const float *v)
{
    uint32_t bits[16];
    memcpy(bits, v, n * sizeof *v);
    wire_fpacked_f32(b, field, n, bits);
}

/* AttributeProto {name, s, type STRING}: the variant's annotations. */
static void put_str_attr(WireBuf *b, uint32_t field, const char *name, const char *s)
{
    WireBuf a = {0};
    wire_fstr(&a, 1, name);
    wire_fstr(&a, 4, s);
    wire_fvarint(&a, 20, 3);
    wire_fmsg(b, field, &a);
}

static void put_int_attr(WireBuf *b, const char *name, int64_t v)
{
    WireBuf a = {0};
    wire_fstr(&a, 1, name);
    wire_fvarint(&a, 3, (uint64_t)v);
    wire_fvarint(&a, 20, 2);
    wire_fmsg(b, 5, &a);
}

static void put_ints_attr(WireBuf *b, const char *name, size_t n, const int64_t *v)
{
    WireBuf a = {0};
    wire_fstr(&a, 1, name);
    for (size_t i = 0; i < n; i++)
        wire_fvarint(&a, 8, (uint64_t)v[i]);
    wire_fvarint(&a, 20, 7);
    wire_fmsg(b, 5, &a);
}

static void put_float_attr(WireBuf *b, const char *name, float v)
{
    WireBuf a = {0};
    wire_fstr(&a, 1, name);
    wire_ffloat(&a, 2, v);
    wire_fvarint(&a, 20, 1);
    wire_fmsg(b, 5, &a);
}

/* caffe2.DeviceOption {device_type 1 (CUDA), device_id 0}. */
static void put_device(WireBuf *b, uint32_t field)
{
    WireBuf d = {0};
    wire_fvarint(&d, 1, 1);
    wire_fvarint(&d, 2, 0);
    wire_fmsg(b, field, &d);
}

/* ValueInfoProto of a float tensor; `stride` adds the variant's
 * TensorShapeProto.stride (51), `special` replaces the tensor type by the
 * variant's TypeProto.special_type (51). */
static void put_vi(WireBuf *b, uint32_t field, const char *name, size_t rank,
                   const int64_t *dims, const char *doc, bool stride, bool special)
{
    WireBuf vi = {0}, tp = {0}, tt = {0}, sh = {0}, d = {0};
    wire_fstr(&vi, 1, name);
    if (special) {
        wire_fstr(&d, 1, "caffe2::Tensor");
        wire_fmsg(&tp, 51, &d);
    } else {
        for (size_t i = 0; i < rank; i++) {
            wire_fvarint(&d, 1, (uint64_t)dims[i]);
            wire_fmsg(&sh, 1, &d);
        }
        for (size_t i = 0; stride && i < rank; i++) {
            wire_fvarint(&d, 1, 1);
            wire_fmsg(&sh, 51, &d);
        }
        wire_fvarint(&tt, 1, 1);
        wire_fmsg(&tt, 2, &sh);
        wire_fmsg(&tp, 1, &tt);
    }
    wire_fmsg(&vi, 2, &tp);
    if (doc)
        wire_fstr(&vi, 3, doc);
    wire_fmsg(b, field, &vi);
}

/* A float TensorProto: dims, name, doc, data (float_data, or raw_data when
 * raw) and the variant's per-tensor fields as asked. */
typedef struct TensorSpec {
    const char *name, *doc;
    size_t rank;
    int64_t dims[4];
    const float *data;
    size_t n;
    bool raw;
    const int64_t *strides;  /* TensorProto.strides (14), packed */
    const char *alias;       /* TensorProto.alias (16) */
    const char *ext_file;    /* TensorProto.external_data (13), a string */
    bool extras;             /* annotations, device_option, require_gradient,
                                is_buffer */
    bool segment;            /* a Segment with the variant's chunk fields */
    int dtype;               /* 0: FLOAT */
} TensorSpec;

static void put_tensor(WireBuf *b, uint32_t field, const TensorSpec *s)
{
    WireBuf t = {0};
    for (size_t i = 0; i < s->rank; i++)
        wire_fvarint(&t, 1, (uint64_t)s->dims[i]);
    wire_fvarint(&t, 2, s->dtype ? (uint64_t)s->dtype : 1);
    if (s->segment) {
        WireBuf g = {0};
        wire_fvarint(&g, 1, 0);
        wire_fvarint(&g, 2, (uint64_t)s->n);
        wire_fvarint(&g, 51, 1);
        wire_fvarint(&g, 52, 0);
        wire_fmsg(&t, 3, &g);
    }
    if (s->data && !s->raw)
        put_floats(&t, 4, s->n, s->data);
    if (s->name)
        wire_fstr(&t, 8, s->name);
    if (s->data && s->raw)
        wire_fbytes(&t, 9, s->data, s->n * sizeof(float));
    if (s->doc)
        wire_fstr(&t, 12, s->doc);
    if (s->ext_file)
        wire_fstr(&t, 13, s->ext_file);
    if (s->strides)
        wire_fpacked_i64(&t, 14, s->rank, s->strides);
    if (s->alias)
        wire_fstr(&t, 16, s->alias);
    if (s->extras) {
        put_str_attr(&t, 17, "origin", "conv1.weight");
        put_device(&t, 51);
        wire_fvarint(&t, 52, 1);
        wire_fvarint(&t, 53, 0);
    }
    wire_fmsg(b, field, &t);
}

static void put_node_head(WireBuf *n, const char *name, const char *op,
                          const char *doc)
{
    wire_fstr(n, 3, name);
    wire_fstr(n, 4, op);
    wire_fstr(n, 6, doc);
}

static const int64_t D_X[4] = {1, 1, 3, 3}, D_W[4] = {1, 1, 2, 2},
                     D_B[1] = {1}, D_G[2] = {3, 4}, D_CB[1] = {3},
                     D_F[2] = {1, 4}, D_Y[2] = {1, 3}, D_U[1] = {2};
static const float U_DATA[2] = {7, 8};

/* The variant's variations on the one model. */
typedef struct Variant {
    const int64_t *w_strides;   /* TensorProto.strides of W */
    const char *k_alias;        /* alias of the Constant's value */
    const char *ext_file;       /* TensorProto.external_data on W */
    bool special;               /* U has the variant's element type SPECIAL */
} Variant;

static const int64_t ROW_MAJOR[4] = {4, 4, 2, 1};

static void put_nodes(WireBuf *g)
{
    WireBuf n = {0};
    /* Conv, with all three of the variant's node fields. */
    wire_fstr(&n, 1, "X");
    wire_fstr(&n, 1, "W");
    wire_fstr(&n, 1, "B");
    wire_fstr(&n, 2, "C");
    put_node_head(&n, "conv1", "Conv", "the conv");
    put_ints_attr(&n, "kernel_shape", 2, (const int64_t[]){2, 2});
    put_str_attr(&n, 8, "engine", "CUDNN");
    put_device(&n, 51);
    wire_fstr(&n, 52, "aten::_convolution");
    wire_fmsg(g, 1, &n);
}

static void put_constant(WireBuf *g, const Variant *v)
{
    WireBuf n = {0}, a = {0};
    wire_fstr(&n, 2, "K");
    put_node_head(&n, "const1", "Constant", "the constant");
    wire_fstr(&a, 1, "value");
    TensorSpec k = {.name = "K_value", .doc = "aliased", .rank = 4,
                    .dims = {1, 1, 2, 2}, .alias = v->k_alias};
    if (!v->k_alias) {
        k.data = K_DATA;
        k.n = 4;
    }
    put_tensor(&a, 5, &k);
    wire_fvarint(&a, 20, 4);
    wire_fmsg(&n, 5, &a);
    wire_fmsg(g, 1, &n);
}

static void put_tail_nodes(WireBuf *g)
{
    WireBuf n = {0};
    wire_fstr(&n, 1, "C");
    wire_fstr(&n, 1, "K");
    wire_fstr(&n, 2, "A");
    put_node_head(&n, "add1", "Add", "the add");
    wire_fmsg(g, 1, &n);
    wire_fstr(&n, 1, "A");
    wire_fstr(&n, 2, "R");
    put_node_head(&n, "relu1", "Relu", "the relu");
    wire_fmsg(g, 1, &n);
    wire_fstr(&n, 1, "R");
    wire_fstr(&n, 2, "F");
    put_node_head(&n, "flat1", "Flatten", "the flatten");
    put_int_attr(&n, "axis", 1);
    wire_fmsg(g, 1, &n);
    wire_fstr(&n, 1, "F");
    wire_fstr(&n, 1, "G");
    wire_fstr(&n, 1, "Cb");
    wire_fstr(&n, 2, "Y");
    put_node_head(&n, "gemm1", "Gemm", "the gemm");
    put_float_attr(&n, "alpha", 1.0f);
    put_float_attr(&n, "beta", 1.0f);
    put_int_attr(&n, "transB", 1);
    wire_fmsg(g, 1, &n);
}

static void put_inits(WireBuf *g, const Variant *v)
{
    TensorSpec w = {.name = "W", .doc = "conv weight", .rank = 4, .dims = {1, 1, 2, 2},
                    .data = W_DATA, .n = 4, .strides = v->w_strides,
                    .ext_file = v->ext_file, .extras = true};
    TensorSpec b = {.name = "B", .doc = "conv bias", .rank = 1, .dims = {1},
                    .data = B_DATA, .n = 1, .raw = true};
    TensorSpec k = {.name = "Kinit", .rank = 4, .dims = {1, 1, 2, 2}, .data = K_DATA, .n = 4};
    TensorSpec gm = {.name = "G", .rank = 2, .dims = {3, 4}, .data = G_DATA, .n = 12};
    TensorSpec cb = {.name = "Cb", .rank = 1, .dims = {3}, .data = CB_DATA, .n = 3};
    TensorSpec u = {.name = "U", .rank = 1, .dims = {2}, .data = U_DATA, .n = 2,
                    .segment = true, .dtype = v->special ? 51 : 1};
    const TensorSpec *all[6] = {&w, &b, &k, &gm, &cb, &u};
    for (int i = 0; i < 6; i++)
        put_tensor(g, 5, all[i]);
}

static void put_graph(WireBuf *m, const Variant *v)
{
    WireBuf g = {0};
    put_nodes(&g);
    put_constant(&g, v);
    put_tail_nodes(&g);
    wire_fstr(&g, 2, "tiny_graph");
    put_inits(&g, v);
    wire_fstr(&g, 10, "graph doc");
    /* IR 3: every initializer is also a graph input. */
    put_vi(&g, 11, "X", 4, D_X, "the image", true, false);
    put_vi(&g, 11, "W", 4, D_W, NULL, false, false);
    put_vi(&g, 11, "B", 1, D_B, NULL, false, false);
    put_vi(&g, 11, "Kinit", 4, D_W, NULL, false, false);
    put_vi(&g, 11, "G", 2, D_G, NULL, false, false);
    put_vi(&g, 11, "Cb", 1, D_CB, NULL, false, false);
    put_vi(&g, 11, "U", 1, D_U, NULL, false, false);
    put_vi(&g, 12, "Y", 2, D_Y, "the scores", false, false);
    put_vi(&g, 13, "F", 2, D_F, "flat doc", false, false);
    put_vi(&g, 13, "A", 4, D_W, NULL, false, true);
    put_str_attr(&g, 14, "engine", "SIMPLE");
    wire_fmsg(m, 7, &g);
}

/* The whole model: ir_version 0x103, opset 7, every extra field. */
static void build_model(WireBuf *m, const Variant *v)
{
    WireBuf x = {0};
    wire_fvarint(m, 1, 0x103);
    wire_fstr(&x, 1, "");
    wire_fvarint(&x, 2, 7);
    wire_fmsg(m, 8, &x);
    wire_fstr(m, 2, "pytorch");
    wire_fstr(m, 3, "0.4.1");
    wire_fstr(m, 4, "org.example");
    wire_fvarint(m, 5, 3);
    wire_fstr(m, 6, "model doc");
    put_graph(m, v);
    wire_fstr(&x, 1, "author");
    wire_fstr(&x, 2, "tests");
    wire_fmsg(m, 14, &x);
    wire_fstr(&x, 2, "init_net");
    wire_fmsg(m, 15, &x);                 /* methods */
    wire_fstr(m, 16, "tiny");             /* name */
    put_str_attr(m, 17, "project", "p");  /* annotations */
    put_str_attr(m, 51, "blobs", "W");    /* blob_lists */
    put_str_attr(m, 52, "plan", "none");  /* plans */
}

/* The variant's fields the full model has, by the name conversion
 * reports them under. */
static const char *const DROPPED[] = {
    "ModelProto.methods", "ModelProto.name", "ModelProto.annotations",
    "ModelProto.blob_lists", "ModelProto.plans", "GraphProto.annotations",
    "NodeProto.annotations", "NodeProto.device_option", "NodeProto.aten_function",
    "TensorProto.strides", "TensorProto.annotations", "TensorProto.device_option",
    "TensorProto.require_gradient", "TensorProto.is_buffer",
    "TensorProto.Segment.chuck_num", "TensorProto.Segment.chuck_id",
    "TensorShapeProto.stride", "TypeProto.special_type",
};
#define N_DROPPED (sizeof DROPPED / sizeof DROPPED[0])

/* ---- helpers ---------------------------------------------------------------- */

static char g_dir[64];

/* Writes the model to DIR/name and loads it from the file. */
static IrModel *load_variant(const Variant *v, const char *name, IrError *err)
{
    WireBuf b = {0};
    build_model(&b, v);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b.p, 1, b.n, f) != b.n || fclose(f)) {
        perror(path);
        abort();
    }
    free(b.p);
    IrModel *m = NULL;
    if (load_model_file(path, NULL, &m, err))
        return NULL;
    return m;
}

static IrNode *node_named(const IrGraph *g, const char *name)
{
    for (IrNode *n = g->first; n; n = n->next)
        if (n->name && !strcmp(n->name, name))
            return n;
    return NULL;
}

static IrTensor *init_named(const IrGraph *g, const char *name)
{
    for (size_t i = 0; i < g->inits.n; i++) {
        IrTensor *t = g->inits.p[i];
        if (t->name && !strcmp(t->name, name))
            return t;
    }
    return NULL;
}

static IrValueInfo *vi_named(const IrPtrList *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        IrValueInfo *vi = l->p[i];
        if (vi->value && vi->value->name && !strcmp(vi->value->name, name))
            return vi;
    }
    return NULL;
}

static IrAttr *attr_named(const IrNode *n, const char *name)
{
    for (size_t i = 0; n && i < n->n_attr; i++)
        if (n->attr[i]->name && !strcmp(n->attr[i]->name, name))
            return n->attr[i];
    return NULL;
}

static bool str_is(const char *s, const char *want)
{
    return s && !strcmp(s, want);
}

/* Float values of tensor t (float_data or raw_data). */
static bool tensor_floats(const IrTensor *t, const float *want, size_t n)
{
    if (!t || !t->has_data_type || t->data_type != IR_FLOAT)
        return false;
    if (t->n_float == n)
        return !memcmp(t->float_data, want, n * sizeof *want);
    if (t->has_raw && t->raw.len == n * sizeof(float))
        return !memcmp(t->raw.data, want, n * sizeof *want);
    return false;
}

/* ---- what loading gives ------------------------------------------------------ */

/* The numbers the variant reuses must not come out as the ONNX fields of
 * those numbers, and the standard fields must all be there. */
static void t_load(void)
{
    IrError err;
    Variant v = {.w_strides = ROW_MAJOR, .k_alias = "Kinit"};
    IrModel *m = load_variant(&v, "load.onnx", &err);
    T_CHECK(m != NULL, "the variant model loads: %s", m ? "" : err.msg);
    if (!m)
        return;
    IrGraph *g = m->graph;
    IrNode *conv = node_named(g, "conv1");
    IrTensor *w = init_named(g, "W");
    T_CHECK(conv && !conv->overload, "NodeProto 8 (annotations) is not read as overload");
    T_CHECK(conv && conv->n_attr == 1, "Conv keeps its one attribute");
    T_CHECK(w && !w->has_data_location,
            "TensorProto 14 (strides) is not read as data_location");
    T_CHECK(w && w->meta.n == 0 && w->external_data.n == 0,
            "TensorProto 16/13 are not read as metadata_props/external_data");
    T_CHECK(g->n_qann == 0, "GraphProto 14 (annotations) is not read as "
            "quantization_annotation");
    IrNode *k = node_named(g, "const1");
    IrAttr *kv = attr_named(k, "value");
    T_CHECK(kv && kv->t && kv->t->meta.n == 0 && kv->t->external_data.n == 0,
            "the alias of the Constant's value is no ONNX field");
    T_CHECK(w && tensor_floats(w, W_DATA, 4), "W's data as written");
    T_CHECK(str_is(m->producer_name, "pytorch") && str_is(g->name, "tiny_graph") &&
            str_is(g->doc_string, "graph doc") && str_is(conv ? conv->doc_string : NULL,
            "the conv"), "the standard fields are read");
    ChkReport r = {0};
    size_t errors = chk_model(m, &r);
    T_CHECK(errors == 0, "check accepts the variant model: %s",
            errors ? chk_first_error(&r) : "");
    chk_report_free(&r);
    ir_model_free(m);
}

/* ---- info ------------------------------------------------------------------ */

static char *info_of(const IrModel *m, bool json)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f)
        abort();
    if (json)
        info_print_json(f, m, "x.onnx");
    else
        info_print_text(f, m, "x.onnx");
    fclose(f);
    return s;
}

/* `"field": "NAME"` followed (in the same object) by `"count": N`. */
static bool json_has_count(const char *js, const char *name, int count)
{
    char key[128], cnt[32];
    snprintf(key, sizeof key, "\"%s\"", name);
    snprintf(cnt, sizeof cnt, "\"count\": %d", count);
    const char *p = strstr(js, key);
    const char *e = p ? strchr(p, '}') : NULL;
    const char *c = p ? strstr(p, cnt) : NULL;
    return p && e && c && c < e;
}

static void t_info(void)
{
    IrError err;
    Variant v = {.w_strides = ROW_MAJOR, .k_alias = "Kinit"};
    IrModel *m = load_variant(&v, "info.onnx", &err);
    T_CHECK(m != NULL, "loads: %s", m ? "" : err.msg);
    if (!m)
        return;
    char *js = info_of(m, true);
    char *txt = info_of(m, false);
    T_CHECK(strstr(js, "\"variant_fields\"") != NULL, "info --json has variant_fields");
    for (size_t i = 0; i < N_DROPPED; i++) {
        /* One of each, but a Dimension of stride per axis of X. */
        int want = strcmp(DROPPED[i], "TensorShapeProto.stride") ? 1 : 4;
        T_CHECK(json_has_count(js, DROPPED[i], want), "info --json lists %s x%d",
                DROPPED[i], want);
        T_CHECK(strstr(txt, DROPPED[i]) != NULL, "info lists %s", DROPPED[i]);
    }
    T_CHECK(json_has_count(js, "TensorProto.alias", 1), "info --json lists the alias");
    T_CHECK(strstr(txt, "variant_fields") && strstr(txt, "NodeProto.annotations x1"),
            "info's text names the field and its count");
    free(js);
    free(txt);
    ir_model_free(m);
}

/* ---- round trip and conversion -------------------------------------------- */

/* A model from its own serialization. */
static IrModel *reload(const IrModel *m, IrError *err)
{
    uint8_t *buf;
    size_t len;
    if (save_model_buffer(m, &buf, &len, err))
        return NULL;
    IrModel *out = NULL;
    int rc = load_model_buffer(buf, len, NULL, "saved", NULL, &out, err);
    free(buf);
    return rc ? NULL : out;
}

/* Saved without conversion, the model stays the variant with its fields. */
static void t_round_trip(void)
{
    IrError err;
    Variant v = {.w_strides = ROW_MAJOR, .k_alias = "Kinit"};
    IrModel *m = load_variant(&v, "rt.onnx", &err);
    IrModel *back = m ? reload(m, &err) : NULL;
    T_CHECK(back != NULL, "round trip: %s", back ? "" : err.msg);
    if (back) {
        char *a = info_of(m, true), *b = info_of(back, true);
        T_CHECK(back->ir_version == 0x103 && strstr(b, "\"variant_fields\"") &&
                !strcmp(a, b), "the round trip keeps the variant and its fields");
        free(a);
        free(b);
        ir_model_free(back);
    }
    ir_model_free(m);
}

static bool dropped_has(const CvReport *r, const char *name)
{
    for (size_t i = 0; i < r->n_dropped; i++)
        if (strstr(r->dropped[i], name))
            return true;
    return false;
}

/* No unknown field anywhere the variant put one. */
static bool no_unknown(const IrModel *m)
{
    const IrGraph *g = m->graph;
    if (m->unk.n || g->unk.n)
        return false;
    for (const IrNode *n = g->first; n; n = n->next) {
        if (n->unk.n)
            return false;
        for (size_t i = 0; i < n->n_attr; i++)
            if (n->attr[i]->t && n->attr[i]->t->unk.n)
                return false;
    }
    for (size_t i = 0; i < g->inits.n; i++) {
        const IrTensor *t = g->inits.p[i];
        if (t->unk.n || (t->segment && t->segment->unk.n))
            return false;
    }
    const IrPtrList *l[3] = {&g->inputs, &g->outputs, &g->value_info};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < l[k]->n; i++) {
            const IrType *t = ((IrValueInfo *)l[k]->p[i])->type;
            if (t && (t->unk.n || (t->shape && t->shape->unk.n)))
                return false;
        }
    return true;
}

/* Every standard field of the written model, after conversion. */
static void check_standard(const IrModel *m, const char *what)
{
    const IrGraph *g = m->graph;
    T_CHECK(str_is(m->producer_name, "pytorch") && str_is(m->producer_version, "0.4.1") &&
            str_is(m->domain, "org.example") && m->model_version == 3 &&
            str_is(m->doc_string, "model doc"), "%s: model fields", what);
    T_CHECK(m->meta.n == 1 && str_is(m->meta.p[0].key, "author") &&
            str_is(m->meta.p[0].value, "tests"), "%s: metadata_props", what);
    T_CHECK(g && str_is(g->name, "tiny_graph") && str_is(g->doc_string, "graph doc"),
            "%s: graph name and doc", what);
    if (!g)
        return;
    static const char *const nodes[][2] = {
        {"conv1", "the conv"}, {"const1", "the constant"}, {"add1", "the add"},
        {"relu1", "the relu"}, {"flat1", "the flatten"}, {"gemm1", "the gemm"}};
    for (int i = 0; i < 6; i++) {
        IrNode *n = node_named(g, nodes[i][0]);
        T_CHECK(n && str_is(n->doc_string, nodes[i][1]) && !n->overload,
                "%s: node %s with its doc", what, nodes[i][0]);
    }
    IrAttr *ks = attr_named(node_named(g, "conv1"), "kernel_shape");
    T_CHECK(ks && ks->n_ints == 2 && ks->ints[0] == 2 && ks->ints[1] == 2,
            "%s: Conv kernel_shape", what);
    IrAttr *tb = attr_named(node_named(g, "gemm1"), "transB");
    T_CHECK(tb && tb->i == 1, "%s: Gemm transB", what);
    IrAttr *kv = attr_named(node_named(g, "const1"), "value");
    T_CHECK(kv && kv->t && str_is(kv->t->name, "K_value") &&
            str_is(kv->t->doc_string, "aliased") && tensor_floats(kv->t, K_DATA, 4),
            "%s: the Constant's value took the aliased initializer's data", what);
    IrTensor *w = init_named(g, "W"), *b = init_named(g, "B");
    T_CHECK(w && str_is(w->doc_string, "conv weight") && tensor_floats(w, W_DATA, 4) &&
            !w->has_data_location, "%s: initializer W", what);
    T_CHECK(b && str_is(b->doc_string, "conv bias") && tensor_floats(b, B_DATA, 1),
            "%s: initializer B", what);
    T_CHECK(tensor_floats(init_named(g, "G"), G_DATA, 12) &&
            tensor_floats(init_named(g, "Cb"), CB_DATA, 3) &&
            tensor_floats(init_named(g, "Kinit"), K_DATA, 4) &&
            tensor_floats(init_named(g, "U"), U_DATA, 2), "%s: the other initializers",
            what);
    IrValueInfo *x = vi_named(&g->inputs, "X"), *y = vi_named(&g->outputs, "Y");
    IrValueInfo *f = vi_named(&g->value_info, "F");
    T_CHECK(x && str_is(x->doc_string, "the image") && x->type && x->type->shape &&
            x->type->shape->rank == 4, "%s: input X", what);
    T_CHECK(y && str_is(y->doc_string, "the scores"), "%s: output Y", what);
    T_CHECK(f && str_is(f->doc_string, "flat doc") && f->type && f->type->shape &&
            f->type->shape->rank == 2, "%s: value_info F", what);
}

/* Runs m on X_IN and compares Y with the hand-computed values. */
static void check_runs(IrModel *m, const char *what)
{
    IrError err;
    float want[3];
    expected_y(want);
    EvValue *in = ev_tensor_new(1, 4, D_X, &err);
    T_CHECK(in != NULL, "%s: input tensor", what);
    if (!in)
        return;
    memcpy(in->data, X_IN, sizeof X_IN);
    EvValue **out = NULL;
    size_t n_out = 0;
    int rc = ev_model_run(m, NULL, 1, &in, &out, &n_out, &err);
    T_CHECK(rc == 0 && n_out == 1, "%s: runs: %s", what, rc ? err.msg : "");
    if (rc == 0 && n_out == 1) {
        const float *y = out[0]->data;
        bool ok = out[0]->numel == 3;
        for (int j = 0; ok && j < 3; j++)
            ok = fabsf(y[j] - want[j]) <= 1e-5f * (1 + fabsf(want[j]));
        T_CHECK(ok, "%s: Y = [%g %g %g], want [%g %g %g]", what, ok ? 0 : y[0],
                ok ? 0 : y[1], ok ? 0 : y[2], want[0], want[1], want[2]);
    }
    if (rc == 0)
        ev_values_free(out, n_out);
    ev_unref(in);
}

static void t_convert_to(int64_t opset)
{
    char what[64], name[64];
    snprintf(what, sizeof what, "opset %lld", (long long)opset);
    snprintf(name, sizeof name, "cv%lld.onnx", (long long)opset);
    IrError err;
    Variant v = {.w_strides = ROW_MAJOR, .k_alias = "Kinit"};
    IrModel *m = load_variant(&v, name, &err);
    T_CHECK(m != NULL, "%s: loads: %s", what, m ? "" : err.msg);
    if (!m)
        return;
    CvOptions o = {.opset = opset};
    CvReport r = {0};
    int rc = cv_convert(m, &o, &r, &err);
    T_CHECK(rc == 0, "%s: converts: %s", what, rc ? err.msg : "");
    for (size_t i = 0; rc == 0 && i < N_DROPPED; i++)
        T_CHECK(dropped_has(&r, DROPPED[i]), "%s: reports dropping %s", what, DROPPED[i]);
    T_CHECK(rc != 0 || !dropped_has(&r, "TensorProto.alias"),
            "%s: the alias is mapped, not dropped", what);
    cv_report_free(&r);
    IrModel *back = rc == 0 ? reload(m, &err) : NULL;
    T_CHECK(rc != 0 || back, "%s: reloads: %s", what, back ? "" : err.msg);
    if (back) {
        T_CHECK(back->ir_version >= 3 && back->ir_version <= 14,
                "%s: a standard ir_version (%lld)", what, (long long)back->ir_version);
        T_CHECK(ir_model_opset(back, "") == opset, "%s: opset", what);
        T_CHECK(no_unknown(back), "%s: no variant field left", what);
        check_standard(back, what);
        ChkReport cr = {0};
        size_t errors = chk_model(back, &cr);
        T_CHECK(errors == 0, "%s: check accepts it: %s", what,
                errors ? chk_first_error(&cr) : "");
        chk_report_free(&cr);
        check_runs(back, what);
        ir_model_free(back);
    }
    ir_model_free(m);
}

/* With keep_metadata, the fields whose numbers ONNX leaves free stay as
 * unknown fields under their own numbers; reused numbers never do. */
static void t_keep(void)
{
    IrError err;
    Variant v = {.w_strides = ROW_MAJOR, .k_alias = "Kinit"};
    IrModel *m = load_variant(&v, "keep.onnx", &err);
    if (!m) {
        T_CHECK(0, "keep: loads: %s", err.msg);
        return;
    }
    CvOptions o = {.opset = 13, .keep_metadata = true};
    CvReport r = {0};
    int rc = cv_convert(m, &o, &r, &err);
    T_CHECK(rc == 0, "keep: converts: %s", rc ? err.msg : "");
    T_CHECK(rc != 0 || (dropped_has(&r, "NodeProto.annotations") &&
            dropped_has(&r, "GraphProto.annotations") &&
            dropped_has(&r, "TensorProto.strides") &&
            !dropped_has(&r, "ModelProto.name") && !dropped_has(&r, "NodeProto.aten_function")),
            "keep: only fields of reused numbers are dropped");
    cv_report_free(&r);
    IrModel *back = rc == 0 ? reload(m, &err) : NULL;
    if (back) {
        bool name16 = false;
        for (size_t i = 0; i < back->unk.n; i++)
            name16 |= back->unk.f[i].tag == 16 && back->unk.f[i].len == 5 &&
                      !memcmp(back->unk.f[i].data, "\4tiny", 5);
        IrNode *conv = node_named(back->graph, "conv1");
        bool n52 = false, n8 = false;
        for (size_t i = 0; conv && i < conv->unk.n; i++) {
            n52 |= conv->unk.f[i].tag == 52;
            n8 |= conv->unk.f[i].tag == 8;
        }
        T_CHECK(name16 && n52 && !n8 && conv && !conv->overload,
                "keep: ModelProto.name and NodeProto.aten_function kept as unknown "
                "fields 16 and 52; nothing under 8");
        check_standard(back, "keep");
        check_runs(back, "keep");
        ir_model_free(back);
    }
    ir_model_free(m);
}

/* ---- TypeProto.Sequence ------------------------------------------------ */

/* A tensor(float) [2] TypeProto into b as field `field`. */
static void put_float2_type(WireBuf *b, uint32_t field)
{
    WireBuf tp = {0}, tt = {0}, sh = {0}, d = {0};
    wire_fvarint(&d, 1, 2);
    wire_fmsg(&sh, 1, &d);
    wire_fvarint(&tt, 1, 1);
    wire_fmsg(&tt, 2, &sh);
    wire_fmsg(&tp, 1, &tt);
    wire_fmsg(b, field, &tp);
}

/* ir_version 0x103, opset 11: S = SequenceConstruct(X, X), S declared as
 * the variant's sequence: elem_type, elem_type_list (51) and
 * sequence_type (52) LIST. */
static IrModel *load_sequence(IrError *err)
{
    WireBuf m = {0}, x = {0}, g = {0}, n = {0}, vi = {0}, tp = {0}, sq = {0};
    wire_fvarint(&m, 1, 0x103);
    wire_fstr(&x, 1, "");
    wire_fvarint(&x, 2, 11);
    wire_fmsg(&m, 8, &x);
    wire_fstr(&n, 1, "X");
    wire_fstr(&n, 1, "X");
    wire_fstr(&n, 2, "S");
    put_node_head(&n, "seq1", "SequenceConstruct", "the list");
    wire_fmsg(&g, 1, &n);
    wire_fstr(&g, 2, "seq_graph");
    wire_fstr(&vi, 1, "X");
    put_float2_type(&vi, 2);
    wire_fmsg(&g, 11, &vi);
    put_float2_type(&sq, 1);
    put_float2_type(&sq, 51);
    put_float2_type(&sq, 51);
    wire_fvarint(&sq, 52, 1);
    wire_fmsg(&tp, 4, &sq);
    wire_fstr(&vi, 1, "S");
    wire_fmsg(&vi, 2, &tp);
    wire_fmsg(&g, 12, &vi);
    wire_fmsg(&m, 7, &g);
    IrModel *out = NULL;
    int rc = load_model_buffer(m.p, m.n, NULL, "seq", NULL, &out, err);
    free(m.p);
    return rc ? NULL : out;
}

/* The declared type of output S, a sequence of tensor(float). */
static const IrType *seq_type(const IrModel *m)
{
    IrValueInfo *s = vi_named(&m->graph->outputs, "S");
    const IrType *t = s ? s->type : NULL;
    return t && t->kind == IR_TYPE_SEQUENCE && t->elem && t->elem->kind == IR_TYPE_TENSOR &&
           t->elem->elem_type == 1 ? t : NULL;
}

/* TypeProto.Sequence's two fields: listed by info, dropped and reported
 * by conversion (nothing left inside the standard model), kept under
 * their own numbers with keep_metadata (ONNX leaves 51 and 52 free). */
static void t_sequence(void)
{
    IrError err;
    IrModel *m = load_sequence(&err);
    T_CHECK(m && seq_type(m), "the variant's sequence loads: %s", m ? "no sequence" : err.msg);
    if (!m || !seq_type(m)) {
        ir_model_free(m);
        return;
    }
    char *js = info_of(m, true);
    T_CHECK(json_has_count(js, "TypeProto.Sequence.elem_type_list", 2) &&
            json_has_count(js, "TypeProto.Sequence.sequence_type", 1),
            "info --json lists the sequence's variant fields");
    free(js);
    for (int keep = 0; keep <= 1; keep++) {
        IrModel *c = keep ? m : load_sequence(&err);
        CvOptions o = {.opset = 11, .keep_metadata = keep};
        CvReport r = {0};
        int rc = c ? cv_convert(c, &o, &r, &err) : -1;
        T_CHECK(rc == 0, "sequence keep=%d: converts: %s", keep, rc ? err.msg : "");
        bool listed = dropped_has(&r, "TypeProto.Sequence.elem_type_list") &&
                      dropped_has(&r, "TypeProto.Sequence.sequence_type");
        T_CHECK(rc != 0 || listed == !keep, "sequence keep=%d: %s reported dropped", keep,
                keep ? "not" : "both");
        cv_report_free(&r);
        IrModel *back = rc == 0 ? reload(c, &err) : NULL;
        const IrType *t = back ? seq_type(back) : NULL;
        size_t n51 = 0, n52 = 0;
        for (size_t i = 0; t && i < t->inner_unk.n; i++) {
            n51 += t->inner_unk.f[i].tag == 51;
            n52 += t->inner_unk.f[i].tag == 52;
        }
        T_CHECK(t && !t->unk.n && t->inner_unk.n == n51 + n52 &&
                n51 == (keep ? 2u : 0u) && n52 == (keep ? 1u : 0u),
                "sequence keep=%d: %s inside the written sequence type", keep,
                keep ? "the two fields under 51 and 52" : "no variant field");
        ir_model_free(back);
        if (!keep)
            ir_model_free(c);
    }
    ir_model_free(m);
}

/* What has no standard form is refused by name, never written wrong. */
static void t_refusals(void)
{
    static const int64_t transposed[4] = {4, 4, 1, 2};
    const struct {
        Variant v;
        const char *want;
    } cases[] = {
        {{.w_strides = transposed, .k_alias = "Kinit"}, "strides"},
        {{.w_strides = ROW_MAJOR, .k_alias = "nowhere"}, "alias"},
        {{.w_strides = ROW_MAJOR, .k_alias = "Kinit", .ext_file = "w.bin"},
         "external_data"},
        {{.w_strides = ROW_MAJOR, .k_alias = "Kinit", .special = true}, "SPECIAL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IrError err;
        IrModel *m = load_variant(&cases[i].v, "refuse.onnx", &err);
        T_CHECK(m != NULL, "refusal %zu: loads: %s", i, m ? "" : err.msg);
        if (!m)
            continue;
        IrTensor *w = init_named(m->graph, "W");
        T_CHECK(w && !w->external_data.n && !w->has_data_location,
                "refusal %zu: W's variant fields are no ONNX fields", i);
        CvOptions o = {.opset = 9};
        CvReport r = {0};
        int rc = cv_convert(m, &o, &r, &err);
        T_CHECK(rc < 0 && strstr(err.msg, cases[i].want) &&
                (strstr(err.msg, "'W'") || strstr(err.msg, "'K_value'") ||
                 strstr(err.msg, "'U'")),
                "refusal %zu: refused naming the tensor and %s: %s", i, cases[i].want,
                rc < 0 ? err.msg : "converted");
        cv_report_free(&r);
        ir_model_free(m);
    }
}

/* Input the renumbering must survive: a private number of its own
 * (refused by name), a truncated file, nesting past the loader's depth
 * limit. Each fails cleanly with a message. */
static void t_hostile(void)
{
    IrError err;
    IrModel *m = NULL;
    WireBuf b = {0};
    wire_fvarint(&b, 1, 0x103);
    wire_fstr(&b, 536870400u + 16, "mine");
    int rc = load_model_buffer(b.p, b.n, NULL, "clash", NULL, &m, &err);
    T_CHECK(rc < 0 && strstr(err.msg, "536870416") && strstr(err.msg, "reserves"),
            "a private field number in the input is refused: %s", rc ? err.msg : "loaded");
    ir_model_free(m);
    m = NULL;
    free(b.p);
    b = (WireBuf){0};
    build_model(&b, &(Variant){.w_strides = ROW_MAJOR, .k_alias = "Kinit"});
    for (size_t cut = 1; cut < b.n; cut += b.n / 7 + 1) {
        rc = load_model_buffer(b.p, b.n - cut, NULL, "cut", NULL, &m, &err);
        T_CHECK(rc < 0 && err.msg[0], "a variant model cut %zu bytes short is refused", cut);
        ir_model_free(m);
        m = NULL;
    }
    free(b.p);
    /* Graph > Node > Attribute > Graph ... 200 times: 600 levels. */
    WireBuf g = {0};
    for (int i = 0; i < 200; i++) {
        WireBuf a = {0}, n = {0}, outer = {0};
        wire_fstr(&a, 1, "then_branch");
        wire_fmsg(&a, 6, &g);
        wire_fvarint(&a, 20, 5);
        wire_fstr(&n, 4, "If");
        wire_fvarint(&n, 51, 1);
        wire_fmsg(&n, 5, &a);
        wire_fmsg(&outer, 1, &n);
        g = outer;
    }
    b = (WireBuf){0};
    wire_fvarint(&b, 1, 0x103);
    wire_fmsg(&b, 7, &g);
    rc = load_model_buffer(b.p, b.n, NULL, "deep", NULL, &m, &err);
    T_CHECK(rc < 0 && strstr(err.msg, "nested"), "a variant nested 600 deep is refused: %s",
            rc ? err.msg : "loaded");
    ir_model_free(m);
    free(b.p);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/test_caffe2.XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    ev_init();
    t_load();
    t_info();
    t_round_trip();
    static const int64_t opsets[] = {7, 9, 13, 17};
    for (size_t i = 0; i < sizeof opsets / sizeof opsets[0]; i++)
        t_convert_to(opsets[i]);
    t_keep();
    t_sequence();
    t_refusals();
    t_hostile();
    static const char *const files[] = {"load.onnx", "info.onnx", "rt.onnx", "cv7.onnx",
        "cv9.onnx", "cv13.onnx", "cv17.onnx", "keep.onnx", "refuse.onnx"};
    char path[128];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", g_dir, files[i]);
        unlink(path);
    }
    rmdir(g_dir);
    return t_done("test_caffe2");
}
