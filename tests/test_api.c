/*
 * test_api - the public C library (include/onnxconvert.h), call by call.
 *
 * Uses testdata/ (run from the project root) and small models built here
 * through the IR API and handed to the library as bytes. Checks real
 * outcomes: a conversion changes the opset and the converted model gives
 * the original's outputs on the same inputs (and the case's expected
 * ones); a model the checker refuses is refused naming the rule; a failed
 * conversion leaves a model that can only be freed; bad buffers, bad
 * tensors (count, name, type, dims, size, overflow) and NULLs each fail
 * with a one-line message; save and load round-trip; the error text is per
 * thread, and threads converting and evaluating models at once get the
 * results one thread gets.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/eval.h"
#include "ir/ir.h"
#include "analysis/irver.h"
#include "io/load.h"
#include "onnxconvert.h"
#include "schema/opschema.h"
#include "passes_build.h"
#include "io/save.h"
#include "t.h"

#define CNN "testdata/small_cnn.onnx"
#define CNN_INPUT "testdata/small_cnn_data/input_0.pb"
#define CNN_OUTPUT "testdata/small_cnn_data/output_0.pb"
#define TRANSFORMER "testdata/tiny_transformer.onnx"
#define TRANSFORMER_INPUT "testdata/tiny_transformer_data/input_0.pb"
#define TRANSFORMER_OUTPUT "testdata/tiny_transformer_data/output_0.pb"

static char tmpdir[256];

/* ---- helpers ------------------------------------------------------------ */

/* Removes the files the tests write, and the folder; false when something
 * else was left in it. */
static bool cleanup(void)
{
    static const char *const files[] = {"saved.onnx", "ext.onnx", "w.bin", "broken.onnx"};
    char path[600];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
        unlink(path);
    }
    return rmdir(tmpdir) == 0;
}

static void die(const char *what)
{
    fprintf(stderr, "test_api: cannot set up: %s\n", what);
    cleanup();
    exit(2);
}

#include "api_models.h"


/* Fails the check naming the last error when rc is not 0. */
#define T_OK(call) T_CHECK((call) == 0, "%s: %s", #call, oc_error())



/* A model of one node `op` (ai.onnx at `opset`, IR 8) from input x of
 * type xt to output y of type yt (types owned by the model). */
static IrModel *one_node(int64_t opset, const char *op, IrType *xt, IrType *yt)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", opset);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("g");
    ir_graph_add_input(g, "x", xt);
    const char *in[] = {"x"}, *out[] = {"y"};
    IrError err;
    if (!ir_node_new(g, NULL, op, "", "n", 1, in, 1, out, &err))
        die(err.msg);
    ir_graph_add_output(g, ir_graph_find_local(g, "y"), yt);
    return m;
}

static IrType *float_type(size_t rank, const int64_t *dims)
{
    return ir_type_tensor(OC_FLOAT, rank, dims);
}

static IrType *sequence_of_floats(void)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = IR_TYPE_SEQUENCE;
    t->elem = ir_type_tensor(OC_FLOAT, 1, (const int64_t[]){3});
    return t;
}

/* One input tensor for the model's only feed, read from a TensorProto
 * file (the case's input_0.pb). */
static oc_tensor *read_input(const oc_model *m, const char *path)
{
    oc_tensor *t;
    size_t n;
    if (oc_model_inputs(m, &t, &n) < 0 || n != 1)
        die("the model's inputs");
    IrTensor *it;
    IrError err;
    if (load_tensor_file(path, &it, &err) < 0)
        die(err.msg);
    EvValue *v = ev_from_ir_tensor(it, &err);
    if (!v || v->dtype != t->elem_type || v->numel * ev_dtype_size(v->dtype) != t->size)
        die("the case's input does not fit the model");
    memcpy(t->data, v->data, t->size);
    ev_unref(v);
    ir_tensor_free(it);
    return t;
}

/* Whether two float tensors hold the same shape and values within
 * |a - b| <= atol + rtol * |b|; why says the first difference. */
static bool floats_close(const oc_tensor *a, const oc_tensor *b, double rtol, double atol,
                         char *why, size_t cap)
{
    snprintf(why, cap, "equal");
    if (a->elem_type != OC_FLOAT || b->elem_type != OC_FLOAT || a->rank != b->rank ||
        a->size != b->size || (a->rank && memcmp(a->dims, b->dims, a->rank * 8))) {
        snprintf(why, cap, "type or shape differs");
        return false;
    }
    const float *x = a->data, *y = b->data;
    for (size_t i = 0; i < a->size / 4; i++)
        if (!(fabs((double)x[i] - y[i]) <= atol + rtol * fabs((double)y[i]))) {
            snprintf(why, cap, "element %zu: %g vs %g", i, x[i], y[i]);
            return false;
        }
    return true;
}

/* The outputs of m on `in` (one input); dies on failure. */
static oc_tensor *run(oc_model *m, const oc_tensor *in, size_t *n)
{
    oc_tensor *out;
    if (oc_evaluate(m, in, 1, &out, n) < 0)
        die(oc_error());
    return out;
}

/* Whether output 0 of `out` equals the TensorProto at path. */
static bool matches_file(const oc_tensor *out, const char *path, char *why, size_t cap)
{
    IrTensor *it;
    IrError err;
    if (load_tensor_file(path, &it, &err) < 0)
        die(err.msg);
    EvValue *v = ev_from_ir_tensor(it, &err);
    if (!v)
        die(err.msg);
    oc_tensor want = {.name = "want", .elem_type = v->dtype, .rank = v->rank,
                      .dims = v->dims, .data = v->data,
                      .size = v->numel * ev_dtype_size(v->dtype)};
    bool ok = floats_close(out, &want, 1e-3, 1e-5, why, cap);
    ev_unref(v);
    ir_tensor_free(it);
    return ok;
}

/* ---- the library --------------------------------------------------------- */

static void test_versions(void)
{
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", ONNXCONVERT_VERSION_MAJOR,
             ONNXCONVERT_VERSION_MINOR, ONNXCONVERT_VERSION_PATCH);
    T_CHECK(!strcmp(oc_version(), want) && !strcmp(ONNXCONVERT_VERSION, want),
            "oc_version %s, macros %s, string %s", oc_version(), want, ONNXCONVERT_VERSION);

    T_CHECK(oc_newest_opset("") == os_domain_max("") && oc_newest_opset("") >= 28,
            "newest ai.onnx %lld", (long long)oc_newest_opset(""));
    T_CHECK(oc_newest_opset("ai.onnx") == oc_newest_opset("") &&
            oc_newest_opset(NULL) == oc_newest_opset(""), "ai.onnx and NULL are \"\"");
    T_CHECK(oc_newest_opset("ai.onnx.ml") == os_domain_max("ai.onnx.ml") &&
            oc_newest_opset("ai.onnx.ml") >= 5, "newest ai.onnx.ml");
    T_CHECK(oc_newest_opset("com.example") == -1 && am_has(oc_error(), "com.example"),
            "unknown domain: %s", oc_error());
    T_CHECK(oc_newest_ir_version() == IRV_NEWEST && oc_newest_ir_version() >= 14,
            "newest IR %lld", (long long)oc_newest_ir_version());
}

/* The newest IR version is accepted by the checker, the next one not. */
static void test_newest_ir_is_the_checkers(void)
{
    int64_t d[] = {2};
    IrModel *ir = one_node(13, "Relu", float_type(1, d), float_type(1, d));
    ir->ir_version = oc_newest_ir_version();
    oc_model *m = am_from_ir(ir);
    T_OK(oc_check(m));
    oc_model_free(m);

    ir = one_node(13, "Relu", float_type(1, d), float_type(1, d));
    ir->ir_version = oc_newest_ir_version() + 1;
    m = am_from_ir(ir);
    T_CHECK(oc_check(m) == -1 && !strncmp(oc_error(), "ir-version:", 11),
            "IR newest+1: %s", oc_error());
    oc_model_free(m);
}

/* ---- loading -------------------------------------------------------------- */

static void test_load_file(void)
{
    oc_model *m = NULL;
    T_OK(oc_load_file(CNN, &m));
    T_CHECK(oc_model_opset(m, "") == 13 && oc_model_opset(m, "ai.onnx") == 13 &&
            oc_model_opset(m, NULL) == 13, "small_cnn opset %lld",
            (long long)oc_model_opset(m, ""));
    T_CHECK(oc_model_opset(m, "ai.onnx.ml") == 0, "no ai.onnx.ml import");
    T_CHECK(oc_model_ir_version(m) == 7, "ir_version %lld", (long long)oc_model_ir_version(m));
    T_CHECK(oc_model_node_count(m) == 10, "nodes %zu", oc_model_node_count(m));
    oc_model_free(m);

    m = (oc_model *)1;
    T_CHECK(oc_load_file("testdata/no_such_model.onnx", &m) == -1 && m == NULL &&
            am_has(oc_error(), "no_such_model.onnx"), "missing file: %s", oc_error());
    T_CHECK(oc_load_file("testdata", &m) == -1 && m == NULL && oc_error()[0],
            "a folder: %s", oc_error());
    T_CHECK(oc_load_file(NULL, &m) == -1 && am_has(oc_error(), "path is NULL"), "NULL path");
    T_CHECK(oc_load_file(CNN, NULL) == -1 && am_has(oc_error(), "out is NULL"), "NULL out");
}

/* The bytes of a file (dies on failure); *len set. */
static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path);
    uint8_t *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void test_load_memory(void)
{
    size_t len;
    uint8_t *bytes = read_all(CNN, &len);
    oc_model *m = NULL;
    T_OK(oc_load_memory(bytes, len, &m));
    memset(bytes, 0xff, len); /* the library keeps its own copy */
    T_CHECK(oc_model_opset(m, "") == 13 && oc_model_node_count(m) == 10,
            "from memory: opset %lld, %zu nodes", (long long)oc_model_opset(m, ""),
            oc_model_node_count(m));
    T_OK(oc_check(m));
    oc_model_free(m);

    free(bytes);
    bytes = read_all(CNN, &len);
    m = (oc_model *)1;
    T_CHECK(oc_load_memory(bytes, len / 2, &m) == -1 && m == NULL &&
            am_has(oc_error(), "memory") && !strchr(oc_error(), '\n'),
            "truncated: %s", oc_error());
    for (size_t i = 0; i < len; i++)
        bytes[i] = (uint8_t)(i * 131 + 7);
    T_CHECK(oc_load_memory(bytes, len, &m) == -1 && m == NULL && oc_error()[0],
            "garbage: %s", oc_error());
    T_CHECK(oc_load_memory(bytes, 0, &m) == -1 && am_has(oc_error(), "empty"),
            "empty: %s", oc_error());
    T_CHECK(oc_load_memory(NULL, 10, &m) == -1 && am_has(oc_error(), "data is NULL"),
            "NULL data: %s", oc_error());
    T_CHECK(oc_load_memory(bytes, len, NULL) == -1 && am_has(oc_error(), "out is NULL"),
            "NULL out");
    free(bytes);
}

/* A model whose initializer lives in a side file loads from its file (the
 * side file is read from beside it) but not from memory. */
static void test_external_data(void)
{
    int64_t d[] = {2};
    IrModel *ir = one_node(13, "Add", float_type(1, d), float_type(1, d));
    float w[2] = {1.5f, -2};
    ir_graph_add_init(ir->graph, ir_tensor_new("w", OC_FLOAT, 1, d, w, sizeof w));
    IrNode *add = ir->graph->first;
    ir_node_add_input(add, ir_graph_find_local(ir->graph, "w"));
    char path[512];
    snprintf(path, sizeof path, "%s/ext.onnx", tmpdir);
    SaveOptions so = {.external_file = "w.bin", .external_threshold = 0};
    IrError err;
    if (save_model_file(ir, path, &so, &err) < 0)
        die(err.msg);
    ir_model_free(ir);

    oc_model *m = am_load(path);
    float x[2] = {1, 1};
    oc_tensor in = {.name = "x", .elem_type = OC_FLOAT, .rank = 1, .dims = d,
                    .data = x, .size = sizeof x};
    oc_tensor *out = NULL;
    size_t n = 0;
    T_OK(oc_evaluate(m, &in, 1, &out, &n));
    T_CHECK(n == 1 && ((float *)out[0].data)[0] == 2.5f && ((float *)out[0].data)[1] == -1,
            "the side file's weights were read");
    oc_tensors_free(out, n);
    oc_model_free(m);

    size_t len;
    uint8_t *bytes = read_all(path, &len);
    m = (oc_model *)1;
    T_CHECK(oc_load_memory(bytes, len, &m) == -1 && m == NULL && am_has(oc_error(), "external"),
            "external data from memory: %s", oc_error());
    free(bytes);
}

static void test_null_models(void)
{
    T_CHECK(oc_model_opset(NULL, "") == -1 && am_has(oc_error(), "model is NULL"),
            "opset of NULL: %s", oc_error());
    T_CHECK(oc_model_ir_version(NULL) == -1, "ir_version of NULL");
    T_CHECK(oc_model_node_count(NULL) == 0 && am_has(oc_error(), "oc_model_node_count"),
            "nodes of NULL: %s", oc_error());
    T_CHECK(oc_check(NULL) == -1 && oc_convert(NULL, 13) == -1 &&
            oc_convert_ex(NULL, 13, 0, 0) == -1 && oc_optimize(NULL, NULL) == -1,
            "NULL model refused");
    oc_tensor *t = (oc_tensor *)1;
    size_t n = 1;
    T_CHECK(oc_model_inputs(NULL, &t, &n) == -1 && t == NULL && n == 0, "inputs of NULL");
    T_CHECK(oc_evaluate(NULL, NULL, 0, &t, &n) == -1 && t == NULL && n == 0,
            "evaluate NULL");
    void *data = (void *)1;
    size_t size = 1;
    T_CHECK(oc_save_memory(NULL, &data, &size) == -1 && data == NULL && size == 0,
            "save NULL");
    T_CHECK(oc_save_file(NULL, "x.onnx") == -1, "save NULL to a file");
    oc_model_free(NULL);
    oc_tensors_free(NULL, 3);
    oc_free(NULL);
    T_CHECK(1, "frees of NULL");
}

/* ---- checking ------------------------------------------------------------- */

static void test_check(void)
{
    oc_model *m = am_load(TRANSFORMER);
    T_OK(oc_check(m));
    oc_model_free(m);

    /* Relu reads a value nothing defines. */
    int64_t d[] = {2};
    IrModel *ir = one_node(13, "Relu", float_type(1, d), float_type(1, d));
    const char *in[] = {"ghost"}, *out[] = {"z"};
    IrError err;
    if (!ir_node_new(ir->graph, NULL, "Relu", "", "haunted", 1, in, 1, out, &err))
        die(err.msg);
    m = am_from_ir(ir);
    T_CHECK(oc_check(m) == -1 && !strncmp(oc_error(), "input-undefined:", 16) &&
            am_has(oc_error(), "haunted") && am_has(oc_error(), "ghost"),
            "undefined input: %s", oc_error());
    /* conversion and optimization refuse it with the same message, and
     * leave it usable */
    T_CHECK(oc_convert(m, 11) == -1 && !strncmp(oc_error(), "input-undefined:", 16),
            "convert an invalid model: %s", oc_error());
    T_CHECK(oc_optimize(m, NULL) == -1 && !strncmp(oc_error(), "input-undefined:", 16),
            "optimize an invalid model: %s", oc_error());
    T_CHECK(oc_model_opset(m, "") == 13 && oc_model_node_count(m) == 2,
            "refused model unchanged: opset %lld", (long long)oc_model_opset(m, ""));
    oc_model_free(m);

    /* an op that does not exist at the model's opset */
    ir = one_node(13, "Gelu", float_type(1, d), float_type(1, d));
    m = am_from_ir(ir);
    T_CHECK(oc_check(m) == -1 && !strncmp(oc_error(), "op-unknown:", 11),
            "Gelu at 13: %s", oc_error());
    oc_model_free(m);
}

/* ---- converting ---------------------------------------------------------- */

/* Converting changes the opset and IR version, and the converted model
 * gives the original's outputs and the case's expected ones. */
static void check_conversion(const char *path, const char *input, const char *expected,
                             int64_t opset, int64_t want_ir)
{
    char why[256];
    oc_model *m = am_load(path);
    oc_tensor *in = read_input(m, input);
    size_t n0, n1;
    oc_tensor *before = run(m, in, &n0);
    int64_t from = oc_model_opset(m, "");
    T_OK(oc_convert(m, opset));
    T_CHECK(oc_model_opset(m, "") == opset && oc_model_ir_version(m) == want_ir,
            "%s %lld -> %lld: now opset %lld, IR %lld", path, (long long)from,
            (long long)opset, (long long)oc_model_opset(m, ""),
            (long long)oc_model_ir_version(m));
    T_OK(oc_check(m));
    oc_tensor *after = run(m, in, &n1);
    T_CHECK(n0 == n1 && n0 >= 1, "%s: %zu outputs before, %zu after", path, n0, n1);
    for (size_t i = 0; i < n0 && i < n1; i++) {
        T_CHECK(!strcmp(before[i].name, after[i].name), "output names");
        T_CHECK(floats_close(&after[i], &before[i], 1e-4, 1e-5, why, sizeof why),
                "%s at opset %lld, output %s: %s", path, (long long)opset, after[i].name,
                why);
    }
    T_CHECK(matches_file(&after[0], expected, why, sizeof why), "%s at %lld vs %s: %s",
            path, (long long)opset, expected, why);
    oc_tensors_free(before, n0);
    oc_tensors_free(after, n1);
    oc_tensors_free(in, 1);
    oc_model_free(m);
}

static void test_convert(void)
{
    check_conversion(CNN, CNN_INPUT, CNN_OUTPUT, 9, 4);
    check_conversion(CNN, CNN_INPUT, CNN_OUTPUT, 7, 3);
    check_conversion(CNN, CNN_INPUT, CNN_OUTPUT, 21, 10);
    /* LayerNormalization expands into older ops */
    check_conversion(TRANSFORMER, TRANSFORMER_INPUT, TRANSFORMER_OUTPUT, 13, 7);
    check_conversion(TRANSFORMER, TRANSFORMER_INPUT, TRANSFORMER_OUTPUT, 20, 9);

    /* --expand through the library: LayerNormalization rewritten at the
     * model's own opset, the outputs unchanged (issue 20) */
    char why[256];
    oc_model *m = am_load(TRANSFORMER);
    oc_tensor *in = read_input(m, TRANSFORMER_INPUT);
    size_t n0, n1, nodes = oc_model_node_count(m);
    int64_t opset = oc_model_opset(m, "");
    oc_tensor *before = run(m, in, &n0);
    T_CHECK(oc_expand(m, "Relu") == -1 && am_has(oc_error(), "'Relu'"), "expand Relu: %s",
            oc_error());
    T_CHECK(oc_expand(m, "") == -1, "expand nothing");
    T_OK(oc_expand(m, "LayerNormalization"));
    T_CHECK(oc_model_opset(m, "") == opset && oc_model_node_count(m) > nodes,
            "expanded at opset %lld: %zu nodes, was %zu", (long long)opset,
            oc_model_node_count(m), nodes);
    oc_tensor *after = run(m, in, &n1);
    T_CHECK(n0 == n1 && n0 >= 1 && floats_close(&after[0], &before[0], 1e-4, 1e-5, why,
                                                 sizeof why), "expanded: %s", why);
    oc_tensors_free(before, n0);
    oc_tensors_free(after, n1);
    oc_tensors_free(in, 1);
    oc_model_free(m);

    /* a chosen IR version */
    m = am_load(CNN);
    T_OK(oc_convert_ex(m, 17, 0, 9));
    T_CHECK(oc_model_opset(m, "") == 17 && oc_model_ir_version(m) == 9,
            "opset 17 at IR 9: %lld, %lld", (long long)oc_model_opset(m, ""),
            (long long)oc_model_ir_version(m));
    /* 0 keeps the opset */
    T_OK(oc_convert_ex(m, 0, 0, 0));
    T_CHECK(oc_model_opset(m, "") == 17, "0 keeps the opset");

    /* arguments out of range are refused and leave the model usable */
    T_CHECK(oc_convert(m, oc_newest_opset("") + 1) == -1 && am_has(oc_error(), "opset"),
            "opset past the newest: %s", oc_error());
    T_CHECK(oc_convert(m, -3) == -1 && am_has(oc_error(), "-3"), "negative opset: %s",
            oc_error());
    T_CHECK(oc_convert(m, 0) == -1 && am_has(oc_error(), "oc_convert"), "opset 0: %s",
            oc_error());
    T_CHECK(oc_convert_ex(m, 13, oc_newest_opset("ai.onnx.ml") + 1, 0) == -1 &&
            am_has(oc_error(), "opset_ml"), "opset_ml past the newest: %s", oc_error());
    T_CHECK(oc_convert_ex(m, 13, 0, oc_newest_ir_version() + 1) == -1 &&
            am_has(oc_error(), "ir_version"), "IR past the newest: %s", oc_error());
    /* an IR below what the target opset needs, or below 3 (issue 19) */
    T_CHECK(oc_convert_ex(m, 17, 0, 4) == -1 && am_has(oc_error(), "ir_version 4 is below IR 8"),
            "opset 17 at IR 4: %s", oc_error());
    T_CHECK(oc_convert_ex(m, 0, 0, 2) == -1 && am_has(oc_error(), "3..14"), "IR 2: %s",
            oc_error());
    T_CHECK(oc_model_opset(m, "") == 17 && oc_model_ir_version(m) == 9,
            "still usable after refused arguments");
    oc_model_free(m);
}

/* A conversion the converter refuses leaves a model that only frees. */
static void test_convert_refused(void)
{
    oc_model *m = am_load(TRANSFORMER);
    /* Erf has no exact form before opset 9 */
    T_CHECK(oc_convert(m, 8) == -1 && am_has(oc_error(), "Erf"), "Erf to 8: %s", oc_error());
    char first[600];
    snprintf(first, sizeof first, "%s", oc_error());
    T_CHECK(!strchr(first, '\n'), "one line");
    void *data = NULL;
    size_t size = 0;
    T_CHECK(oc_save_memory(m, &data, &size) == -1 && data == NULL &&
            am_has(oc_error(), "half changed") && am_has(oc_error(), "oc_convert"),
            "save after a refusal: %s", oc_error());
    T_CHECK(oc_check(m) == -1 && am_has(oc_error(), "half changed"), "check after");
    T_CHECK(oc_convert(m, 17) == -1 && am_has(oc_error(), "half changed"), "convert after");
    T_CHECK(oc_optimize(m, NULL) == -1 && am_has(oc_error(), "half changed"), "optimize after");
    T_CHECK(oc_model_opset(m, "") == -1 && oc_model_node_count(m) == 0 &&
            oc_model_ir_version(m) == -1, "queries after");
    oc_tensor *t = NULL;
    size_t n = 0;
    T_CHECK(oc_model_inputs(m, &t, &n) == -1 && oc_evaluate(m, NULL, 0, &t, &n) == -1 &&
            am_has(oc_error(), "half changed"), "evaluate after");
    char path[512];
    snprintf(path, sizeof path, "%s/broken.onnx", tmpdir);
    struct stat st;
    T_CHECK(oc_save_file(m, path) == -1 && stat(path, &st) != 0, "no file written");
    oc_model_free(m);
}

/* An Upsample-9 whose scales come from Shape of an input with symbolic
 * dims: refused at 8 (Upsample-7's scales attribute needs them), converted
 * once oc_set_input_shape fixes the dims. */
static IrModel *upsample_from_shape(void)
{
    IrModel *ir = tb_model("opset 9\n"
                           "input x float 1,1,H,W\n"
                           "s = Shape x\n"
                           "sf = Cast s to=1\n"
                           "init two float 4 1.0,1.0,2.0,2.0\n"
                           "big = Mul sf,two\n"
                           "sc = Div big,sf\n"
                           "y = Upsample x,sc mode=\"nearest\"\n"
                           "output y\n");
    IrValueInfo *y = ir->graph->outputs.p[0];
    y->type = ir_type_tensor(1, 4, (int64_t[]){-1, -1, -1, -1});
    return ir;
}

static void test_input_shape(void)
{
    oc_model *m = am_from_ir(upsample_from_shape());
    T_CHECK(oc_convert(m, 8) == -1 && am_has(oc_error(), "constant"), "dims open: %s",
            oc_error());
    oc_model_free(m);
    m = am_from_ir(upsample_from_shape());
    T_CHECK(oc_set_input_shape(m, "x=1,1,3") == -1 && am_has(oc_error(), "x"),
            "a rank the model contradicts: %s", oc_error());
    T_CHECK(oc_set_input_shape(m, "nope=1") == -1, "an input the model lacks");
    T_OK(oc_set_input_shape(m, "x=1,1,3,5"));
    T_OK(oc_convert(m, 8));
    T_CHECK(oc_model_opset(m, "") == 8 && oc_model_node_count(m) == 1,
            "converted to 8 with the Upsample alone: opset %lld, %zu nodes",
            (long long)oc_model_opset(m, ""), oc_model_node_count(m));
    T_CHECK(oc_set_input_shape(NULL, "x=1") == -1, "a NULL model");
    oc_model_free(m);
}

/* ---- optimizing ----------------------------------------------------------- */

static void test_optimize(void)
{
    char why[256];
    oc_model *m = am_load(TRANSFORMER);
    oc_tensor *in = read_input(m, TRANSFORMER_INPUT);
    size_t n0, n1;
    oc_tensor *before = run(m, in, &n0);
    size_t nodes = oc_model_node_count(m);

    /* an unknown pass is refused before anything changes */
    T_CHECK(oc_optimize(m, "fold,no_such_pass") == -1 && am_has(oc_error(), "no_such_pass"),
            "unknown pass: %s", oc_error());
    T_CHECK(oc_optimize(m, "") == -1, "empty pass list");
    T_CHECK(oc_model_node_count(m) == nodes, "unchanged after an unknown pass");

    T_OK(oc_convert(m, 20));
    T_OK(oc_optimize(m, NULL));
    size_t after_nodes = oc_model_node_count(m);
    T_CHECK(after_nodes < nodes, "optimize: %zu -> %zu nodes", nodes, after_nodes);
    T_OK(oc_check(m));
    oc_tensor *after = run(m, in, &n1);
    T_CHECK(n0 == 1 && n1 == 1 && floats_close(&after[0], &before[0], 1e-4, 1e-5, why,
                                                sizeof why), "optimized outputs: %s", why);
    T_CHECK(matches_file(&after[0], TRANSFORMER_OUTPUT, why, sizeof why),
            "optimized vs expected: %s", why);
    /* a second run changes nothing */
    T_OK(oc_optimize(m, NULL));
    T_CHECK(oc_model_node_count(m) == after_nodes, "fixed point");
    oc_tensors_free(before, n0);
    oc_tensors_free(after, n1);
    oc_tensors_free(in, 1);
    oc_model_free(m);

    /* a pass list */
    m = am_load(CNN);
    T_OK(oc_optimize(m, "fuse_bn,dead_code"));
    T_CHECK(oc_model_node_count(m) == 9, "fuse_bn: %zu nodes", oc_model_node_count(m));
    oc_model_free(m);
}

/* ---- evaluating ----------------------------------------------------------- */

static void test_model_inputs(void)
{
    oc_model *m = am_load(CNN);
    oc_tensor *t = NULL;
    size_t n = 0;
    T_OK(oc_model_inputs(m, &t, &n));
    T_CHECK(n == 1 && !strcmp(t[0].name, "input") && t[0].elem_type == OC_FLOAT &&
            t[0].rank == 4 && t[0].dims[0] == 1 && t[0].dims[1] == 3 &&
            t[0].dims[2] == 32 && t[0].dims[3] == 32 && t[0].size == 3 * 32 * 32 * 4,
            "small_cnn's input");
    bool zero = true;
    for (size_t i = 0; n == 1 && i < t[0].size; i++)
        zero = zero && ((uint8_t *)t[0].data)[i] == 0;
    T_CHECK(zero, "zero-filled");
    /* the zeros evaluate: logits are the biases' path, probs sum to 1 */
    oc_tensor *out = NULL;
    size_t n_out = 0;
    T_OK(oc_evaluate(m, t, n, &out, &n_out));
    T_CHECK(n_out == 2 && !strcmp(out[0].name, "logits") && !strcmp(out[1].name, "probs") &&
            out[1].size == 40, "outputs");
    double sum = 0;
    for (size_t i = 0; n_out == 2 && i < 10; i++)
        sum += ((float *)out[1].data)[i];
    T_CHECK(fabs(sum - 1) < 1e-5, "softmax sums to %g", sum);
    oc_tensors_free(out, n_out);
    oc_tensors_free(t, n);
    oc_model_free(m);

    /* an open dim becomes 1 */
    int64_t d[] = {-1, 3};
    IrModel *ir = one_node(13, "Relu", float_type(2, d), float_type(2, d));
    IrShape *s = ((IrValueInfo *)ir->graph->inputs.p[0])->type->shape;
    s->dims[0].kind = IR_DIM_PARAM;
    s->dims[0].param = mem_strdup("N");
    m = am_from_ir(ir);
    T_OK(oc_model_inputs(m, &t, &n));
    T_CHECK(n == 1 && t[0].rank == 2 && t[0].dims[0] == 1 && t[0].dims[1] == 3 &&
            t[0].size == 12, "symbolic dim as 1");
    oc_tensors_free(t, n);
    oc_model_free(m);

    /* a sequence input is not a tensor */
    ir = one_node(13, "SequenceLength", sequence_of_floats(), ir_type_tensor(OC_INT64, 0, NULL));
    m = am_from_ir(ir);
    t = (oc_tensor *)1;
    T_CHECK(oc_model_inputs(m, &t, &n) == -1 && t == NULL && n == 0 &&
            am_has(oc_error(), "'x'") && am_has(oc_error(), "tensor"),
            "sequence input: %s", oc_error());
    oc_model_free(m);

    /* a string input is not dense */
    ir = one_node(13, "Identity", ir_type_tensor(OC_STRING, 1, (const int64_t[]){2}),
                  ir_type_tensor(OC_STRING, 1, (const int64_t[]){2}));
    m = am_from_ir(ir);
    T_CHECK(oc_model_inputs(m, &t, &n) == -1 && am_has(oc_error(), "STRING"),
            "string input: %s", oc_error());
    oc_model_free(m);
}

/* Expects oc_evaluate of small_cnn on `in` to fail with `part` in the
 * message and to hand out nothing. */
static void refuse(oc_model *m, const oc_tensor *in, size_t n, const char *part,
                   const char *what)
{
    oc_tensor *out = (oc_tensor *)1;
    size_t n_out = 7;
    int rc = oc_evaluate(m, in, n, &out, &n_out);
    T_CHECK(rc == -1 && out == NULL && n_out == 0 && am_has(oc_error(), part) &&
            !strchr(oc_error(), '\n'), "%s: rc %d, message '%s' (want '%s')", what, rc,
            oc_error(), part);
    if (rc == 0)
        oc_tensors_free(out, n_out);
}

/* One bad input for small_cnn (input 'input', FLOAT [1,3,32,32]). */
typedef struct BadInput {
    const char *what, *part;   /* the case; what the message must hold */
    int32_t elem_type;
    size_t rank;
    int64_t dims[65];
    size_t size;
    int missing;               /* NO_DATA or NO_DIMS: that pointer is NULL */
} BadInput;

enum { ALL = 0, NO_DATA = 1, NO_DIMS = 2 };

#define CNN_BYTES (3 * 32 * 32 * 4)

static const BadInput bad_inputs[] = {
    {"double for float", "element type DOUBLE", OC_DOUBLE, 4, {1, 3, 32, 32}, CNN_BYTES * 2, ALL},
    {"wrong dims, right size", "dim 2 is 16", OC_FLOAT, 4, {1, 3, 16, 64}, CNN_BYTES, ALL},
    {"wrong rank", "rank 3, the model declares 4", OC_FLOAT, 3, {1, 3, 1024}, CNN_BYTES, ALL},
    {"short size", "bytes given", OC_FLOAT, 4, {1, 3, 32, 32}, CNN_BYTES - 4, ALL},
    {"NULL data", "data is NULL", OC_FLOAT, 4, {1, 3, 32, 32}, CNN_BYTES, NO_DATA},
    {"negative dim", "negative", OC_FLOAT, 4, {1, -3, 32, 32}, CNN_BYTES, ALL},
    {"dims that overflow", "overflow", OC_FLOAT, 4, {1, INT64_MAX, INT64_MAX, 32}, CNN_BYTES, ALL},
    /* 2^39 bytes: no overflow, but past the 16 GiB a tensor may take */
    {"dims past the size limit", "limit", OC_FLOAT, 4, {1, 1 << 20, 1 << 12, 32}, CNN_BYTES, ALL},
    {"rank 65", "rank 65", OC_FLOAT, 65, {1, 3, 32, 32}, CNN_BYTES, ALL},
    {"NULL dims", "dims is NULL", OC_FLOAT, 4, {0}, CNN_BYTES, NO_DIMS},
    {"string tensor", "STRING", OC_STRING, 4, {1, 3, 32, 32}, CNN_BYTES, ALL},
    {"unknown type code", "element type", 99, 4, {1, 3, 32, 32}, CNN_BYTES, ALL},
    {"4-bit type", "INT4", OC_INT4, 4, {1, 3, 32, 32}, CNN_BYTES, ALL},
};

/* oc_set_eval_limits: a ConstantOfShape of 2^30 floats is refused under a
 * 64 MiB budget before it is allocated (naming node, op and budget), one
 * node is over a budget of 0.. steps, and the defaults come back with 0. */
static void test_eval_limits(void)
{
    IrModel *ir = one_node(17, "ConstantOfShape", ir_type_tensor(OC_INT64, 1, (const int64_t[]){1}),
                           ir_type_tensor(OC_FLOAT, 1, (const int64_t[]){-1}));
    oc_model *m = am_from_ir(ir);
    int64_t big = (int64_t)1 << 30, dims[1] = {1};
    oc_tensor in = {.name = "x", .elem_type = OC_INT64, .rank = 1, .dims = dims,
                    .data = &big, .size = sizeof big};
    oc_tensor *out = NULL;
    size_t n = 0;
    T_OK(oc_set_eval_limits(m, 64u << 20, 0, 0));
    T_CHECK(oc_evaluate(m, &in, 1, &out, &n) == -1 && out == NULL &&
            am_has(oc_error(), "node 'n' (ConstantOfShape") &&
            am_has(oc_error(), "memory budget of 64 MiB"), "2^30 floats in 64 MiB: %s", oc_error());
    int64_t small = 1000;
    in.data = &small;
    T_OK(oc_evaluate(m, &in, 1, &out, &n));
    T_CHECK(n == 1 && out && out[0].size == 4000, "1000 floats fit");
    oc_tensors_free(out, n);
    T_OK(oc_set_eval_limits(m, 0, 0, 30));
    T_OK(oc_evaluate(m, &in, 1, &out, &n));
    oc_tensors_free(out, n);
    T_CHECK(oc_set_eval_limits(m, 0, 0, -1) == -1 && am_has(oc_error(), "timeout"),
            "a negative timeout is refused");
    T_CHECK(oc_set_eval_limits(NULL, 0, 0, 0) == -1, "NULL model refused");
    oc_model_free(m);
}

static void test_evaluate_refusals(void)
{
    oc_model *m = am_load(CNN);
    oc_tensor *good;
    size_t n;
    if (oc_model_inputs(m, &good, &n) < 0)
        die(oc_error());
    oc_tensor t = good[0], two[2] = {good[0], good[0]};
    refuse(m, NULL, 0, "has 1 inputs to feed, 0 were given", "no inputs");
    refuse(m, two, 2, "has 1 inputs to feed, 2 were given", "two inputs");
    refuse(m, NULL, 1, "inputs is NULL", "NULL array");
    t.name = "other";
    refuse(m, &t, 1, "input 'input' was not given", "wrong name");
    t.name = NULL;
    refuse(m, &t, 1, "has no name", "no name");

    void *zeros = calloc(1, CNN_BYTES * 2);
    for (size_t i = 0; i < sizeof bad_inputs / sizeof *bad_inputs; i++) {
        const BadInput *b = &bad_inputs[i];
        t = (oc_tensor){.name = "input", .elem_type = b->elem_type, .rank = b->rank,
                        .dims = b->missing == NO_DIMS ? NULL : (int64_t *)b->dims,
                        .data = b->missing == NO_DATA ? NULL : zeros, .size = b->size};
        refuse(m, &t, 1, b->part, b->what);
    }
    free(zeros);
    T_CHECK(oc_evaluate(m, good, 1, NULL, &n) == -1 && am_has(oc_error(), "outputs is NULL"),
            "NULL outputs");

    /* after all that, the model still runs */
    oc_tensor *out;
    size_t n_out;
    T_OK(oc_evaluate(m, good, 1, &out, &n_out));
    oc_tensors_free(out, n_out);
    oc_tensors_free(good, n);
    oc_model_free(m);
}

static void test_evaluate_kinds(void)
{
    /* bools: any non-zero byte is true */
    int64_t d[] = {4};
    IrModel *ir = one_node(13, "Not", ir_type_tensor(OC_BOOL, 1, d),
                           ir_type_tensor(OC_BOOL, 1, d));
    oc_model *m = am_from_ir(ir);
    uint8_t bits[4] = {0, 1, 2, 255};
    oc_tensor in = {.name = "x", .elem_type = OC_BOOL, .rank = 1, .dims = d,
                    .data = bits, .size = 4};
    oc_tensor *out = NULL;
    size_t n = 0;
    T_OK(oc_evaluate(m, &in, 1, &out, &n));
    const uint8_t *y = n == 1 ? out[0].data : NULL;
    T_CHECK(y && out[0].elem_type == OC_BOOL && y[0] == 1 && y[1] == 0 && y[2] == 0 &&
            y[3] == 0, "Not on bools");
    T_CHECK(bits[2] == 2, "inputs only read");
    oc_tensors_free(out, n);
    oc_model_free(m);

    /* int64 and a scalar */
    ir = one_node(13, "Neg", ir_type_tensor(OC_INT64, 0, NULL), ir_type_tensor(OC_INT64, 0, NULL));
    m = am_from_ir(ir);
    int64_t v = 41;
    in = (oc_tensor){.name = "x", .elem_type = OC_INT64, .data = &v, .size = 8};
    T_OK(oc_evaluate(m, &in, 1, &out, &n));
    T_CHECK(n == 1 && out[0].rank == 0 && out[0].size == 8 &&
            *(int64_t *)out[0].data == -41, "Neg on an int64 scalar");
    oc_tensors_free(out, n);
    oc_model_free(m);

    /* an empty tensor */
    int64_t e[] = {0, 5};
    ir = one_node(13, "Relu", float_type(2, e), float_type(2, e));
    m = am_from_ir(ir);
    in = (oc_tensor){.name = "x", .elem_type = OC_FLOAT, .rank = 2, .dims = e};
    T_OK(oc_evaluate(m, &in, 1, &out, &n));
    T_CHECK(n == 1 && out[0].size == 0 && out[0].rank == 2 && out[0].dims[1] == 5,
            "empty tensor");
    oc_tensors_free(out, n);
    oc_model_free(m);

    /* a sequence output is refused */
    int64_t three[] = {3};
    ir = one_node(13, "SequenceConstruct", float_type(1, three), sequence_of_floats());
    m = am_from_ir(ir);
    float x[3] = {1, 2, 3};
    in = (oc_tensor){.name = "x", .elem_type = OC_FLOAT, .rank = 1, .dims = three,
                     .data = x, .size = sizeof x};
    out = (oc_tensor *)1;
    T_CHECK(oc_evaluate(m, &in, 1, &out, &n) == -1 && out == NULL && n == 0 &&
            am_has(oc_error(), "output 'y' is not a tensor"), "sequence output: %s",
            oc_error());
    oc_model_free(m);
}

/* ---- saving ---------------------------------------------------------------- */

static void test_save(void)
{
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/saved.onnx", tmpdir);
    snprintf(bad, sizeof bad, "%s/no/such/folder/x.onnx", tmpdir);
    oc_model *m = am_load(CNN);
    T_OK(oc_convert(m, 11));
    T_OK(oc_save_file(m, path));
    oc_model *back = am_load(path);
    T_CHECK(oc_model_opset(back, "") == 11 && oc_model_ir_version(back) == 6 &&
            oc_model_node_count(back) == oc_model_node_count(m), "file round trip");
    T_OK(oc_check(back));
    oc_model_free(back);
    T_CHECK(oc_save_file(m, bad) == -1 && am_has(oc_error(), "no/such/folder"),
            "unwritable path: %s", oc_error());
    T_CHECK(oc_save_file(m, NULL) == -1 && am_has(oc_error(), "path is NULL"), "NULL path");

    /* memory round trip: same bytes again, same outputs */
    void *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    T_OK(oc_save_memory(m, &a, &na));
    T_CHECK(oc_load_memory(a, na, &back) == 0, "load what was saved: %s", oc_error());
    T_OK(oc_save_memory(back, &b, &nb));
    T_CHECK(na > 1000 && na == nb && !memcmp(a, b, na), "same bytes: %zu, %zu", na, nb);
    oc_tensor *in = read_input(m, CNN_INPUT);
    size_t n1, n2;
    oc_tensor *o1 = run(m, in, &n1), *o2 = run(back, in, &n2);
    char why[256];
    T_CHECK(n1 == 2 && n2 == 2 && floats_close(&o2[0], &o1[0], 0, 0, why, sizeof why) &&
            floats_close(&o2[1], &o1[1], 0, 0, why, sizeof why), "same outputs: %s", why);
    oc_tensors_free(o1, n1);
    oc_tensors_free(o2, n2);
    oc_tensors_free(in, 1);
    T_CHECK(oc_save_memory(m, NULL, &na) == -1 && am_has(oc_error(), "data is NULL"),
            "NULL data");
    oc_free(a);
    oc_free(b);
    oc_model_free(back);
    oc_model_free(m);
}

/* ---- threads ---------------------------------------------------------------- */

/* One thread's work: load, convert, optimize and evaluate small_cnn at
 * its opset; the outputs' bytes land in res. */
typedef struct Job {
    int64_t opset;
    float res[20];
    int ok;
    char err[600];
} Job;

static void *job_run(void *arg)
{
    Job *j = arg;
    oc_model *m = NULL;
    oc_tensor *in = NULL, *out = NULL;
    size_t n_in = 0, n_out = 0;
    j->ok = oc_load_file(CNN, &m) == 0 && oc_convert(m, j->opset) == 0 &&
            oc_optimize(m, NULL) == 0 && oc_model_inputs(m, &in, &n_in) == 0 &&
            n_in == 1;
    for (size_t i = 0; j->ok && i < in[0].size / 4; i++)
        ((float *)in[0].data)[i] = (float)sin((double)i);
    j->ok = j->ok && oc_evaluate(m, in, n_in, &out, &n_out) == 0 && n_out == 2 &&
            out[0].size == 40 && out[1].size == 40;
    if (j->ok) {
        memcpy(j->res, out[0].data, 40);
        memcpy(j->res + 10, out[1].data, 40);
    }
    snprintf(j->err, sizeof j->err, "%s", oc_error());
    oc_tensors_free(in, n_in);
    oc_tensors_free(out, n_out);
    oc_model_free(m);
    return NULL;
}

/* oc_error of a thread that has not failed, after another one did. */
static void *fresh_error(void *arg)
{
    *(int *)arg = oc_error()[0] == 0;
    return NULL;
}

static void test_threads(void)
{
    T_CHECK(oc_load_file("testdata/none.onnx", &(oc_model *){NULL}) == -1, "a failure");
    int fresh = 0;
    pthread_t th;
    if (pthread_create(&th, NULL, fresh_error, &fresh))
        die("pthread_create");
    pthread_join(th, NULL);
    T_CHECK(fresh && am_has(oc_error(), "none.onnx"), "oc_error is per thread");

    enum { N = 6 };
    static const int64_t opsets[N] = {9, 11, 13, 17, 9, 20};
    Job alone[N], together[N];
    memset(alone, 0, sizeof alone);
    memset(together, 0, sizeof together);
    /* together first: the library's tables are built during the first
     * loads, while other threads already use them */
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        alone[i].opset = together[i].opset = opsets[i];
        if (pthread_create(&t[i], NULL, job_run, &together[i]))
            die("pthread_create");
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++)
        job_run(&alone[i]);
    for (int i = 0; i < N; i++)
        T_CHECK(alone[i].ok && together[i].ok &&
                !memcmp(alone[i].res, together[i].res, sizeof alone[i].res),
                "opset %lld on threads: ok %d/%d (%s / %s)", (long long)opsets[i],
                alone[i].ok, together[i].ok, alone[i].err, together[i].err);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/oc_test_api.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir))
        die("mkdtemp");
    test_threads();   /* first, while the library's tables are unbuilt */
    test_versions();
    test_newest_ir_is_the_checkers();
    test_load_file();
    test_load_memory();
    test_external_data();
    test_null_models();
    test_check();
    test_convert();
    test_convert_refused();
    test_input_shape();
    test_optimize();
    test_model_inputs();
    test_evaluate_refusals();
    test_eval_limits();
    test_evaluate_kinds();
    test_save();
    T_CHECK(cleanup(), "%s held files no test wrote", tmpdir);
    return t_done("test_api");
}
