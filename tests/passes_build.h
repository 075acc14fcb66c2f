/*
 * passes_build.h - small models for pass tests, written as text (prefix tb_).
 *
 * One statement per line:
 *   opset 17                          the ai.onnx opset (default 13)
 *   input x float 1,3,8,8             a graph input (dims: numbers, or a
 *                                     name for a symbolic dim; "-" = scalar)
 *   init W float 4,3,3,3 rand         an initializer: "rand" = seeded values
 *                                     in [-1,1], "pos" = in [0.5,1.5] (for
 *                                     variances), or a list "1,2,3" (all
 *                                     elements, or one value repeated)
 *   y = Conv x,W,b pads=[1,1,1,1] group=1 epsilon=0.5 mode="constant"
 *   a,,c = Op x,,z                    empty names: left-out optionals
 *   output y                          a graph output (type left to inference)
 * Attribute values: 3 int, 0.5 float (has '.' or 'e'), [1,2] ints,
 * [1.0,2] floats, "s" string. Element types: float double float16
 * bfloat16 int64 int32 int8 uint8 bool.
 *
 * tb_run optimizes a copy with the given passes, checks that its outputs
 * equal the original's (evaluator, seeded random inputs) and returns it.
 */
#ifndef OC_PASSES_BUILD_H
#define OC_PASSES_BUILD_H

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "io/load.h"
#include "eval/eval.h"
#include "analysis/infer.h"
#include "passes/passes.h"
#include "io/save.h"
#include "t.h"
#include "eval/verify.h"

static inline int32_t tb_dtype(const char *s)
{
    static const struct { const char *n; int32_t t; } k[] = {
        {"float", IR_FLOAT}, {"uint8", IR_UINT8}, {"int8", IR_INT8},
        {"int32", IR_INT32}, {"int64", IR_INT64}, {"bool", IR_BOOL},
        {"float16", IR_FLOAT16}, {"double", IR_DOUBLE},
        {"bfloat16", IR_BFLOAT16},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strcmp(k[i].n, s))
            return k[i].t;
    return 0;
}

/* Parses "1,3,n,8" into dims; a symbolic dim gives -1 and its name in
 * sym[i] (caller frees). */
static inline size_t tb_dims(const char *s, int64_t *d, char **sym)
{
    size_t r = 0;
    if (!strcmp(s, "-"))
        return 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t && r < 8; t = strtok(NULL, ",")) {
        sym[r] = NULL;
        if (t[0] >= '0' && t[0] <= '9')
            d[r++] = strtoll(t, NULL, 10);
        else
            d[r] = -1, sym[r++] = mem_strdup(t);
    }
    return r;
}

static uint64_t tb_seed = 0x9e3779b97f4a7c15ull;
static inline double tb_rand(void)
{
    tb_seed ^= tb_seed << 13;
    tb_seed ^= tb_seed >> 7;
    tb_seed ^= tb_seed << 17;
    return (double)(tb_seed >> 11) / 9007199254740992.0;
}

static inline void tb_input(IrGraph *g, char *name, char *type, char *dims)
{
    int64_t d[8];
    char *sym[8] = {0};
    size_t r = tb_dims(dims ? dims : "-", d, sym);
    IrType *t = ir_type_tensor(tb_dtype(type), r, d);
    for (size_t i = 0; i < r; i++)
        if (sym[i]) {
            t->shape->dims[i].kind = IR_DIM_PARAM;
            t->shape->dims[i].param = sym[i];
        }
    ir_graph_add_input(g, name, t);
}

static inline void tb_init(IrGraph *g, char *name, char *type, char *dims, char *vals)
{
    int64_t d[8];
    char *sym[8] = {0};
    size_t r = tb_dims(dims, d, sym), n = 1;
    for (size_t i = 0; i < r; i++)
        free(sym[i]);           /* initializers have numeric dims */
    for (size_t i = 0; i < r; i++)
        n *= (size_t)d[i];
    int32_t dt = tb_dtype(type);
    double *v = calloc(n ? n : 1, sizeof *v);
    if (!strcmp(vals, "rand") || !strcmp(vals, "pos")) {
        for (size_t i = 0; i < n; i++)
            v[i] = vals[0] == 'r' ? tb_rand() * 2 - 1 : tb_rand() + 0.5;
    } else {
        size_t k = 0;
        for (char *t = strtok(vals, ","); t && k < n; t = strtok(NULL, ","))
            v[k++] = strtod(t, NULL);
        for (size_t i = k; i < n && k == 1; i++)
            v[i] = v[0];
    }
    size_t es = ir_dtype_bits(dt) >= 8 ? (size_t)ir_dtype_bits(dt) / 8 : 1;
    unsigned char *raw = calloc(n ? n : 1, es);
    for (size_t i = 0; i < n; i++) {
        if (dt == IR_FLOAT) { float f = (float)v[i]; memcpy(raw + 4 * i, &f, 4); }
        else if (dt == IR_DOUBLE) memcpy(raw + 8 * i, &v[i], 8);
        else if (dt == IR_INT64) { int64_t x = (int64_t)v[i]; memcpy(raw + 8 * i, &x, 8); }
        else if (dt == IR_INT32) { int32_t x = (int32_t)v[i]; memcpy(raw + 4 * i, &x, 4); }
        else if (dt == IR_FLOAT16) { uint16_t h = half_f32_to_f16((float)v[i]); memcpy(raw + 2 * i, &h, 2); }
        else if (dt == IR_BFLOAT16) { uint16_t h = half_f32_to_bf16((float)v[i]); memcpy(raw + 2 * i, &h, 2); }
        else raw[i] = (unsigned char)(int)v[i];
    }
    ir_graph_add_init(g, ir_tensor_new(name, dt, r, d, raw, n * es));
    free(raw);
    free(v);
}

/* One attribute "key=value". */
static inline IrAttr *tb_attr(char *kv)
{
    char *eq = strchr(kv, '=');
    *eq = 0;
    char *v = eq + 1;
    if (v[0] == '"') {
        v[strlen(v) - 1] = 0;
        return ir_attr_string(kv, v + 1);
    }
    if (v[0] == '[') {
        bool fl = strpbrk(v, ".e") != NULL;
        int64_t iv[64];
        float fv[64];
        size_t n = 0;
        v[strlen(v) - 1] = 0;
        for (char *t = strtok(v + 1, ","); t && n < 64; t = strtok(NULL, ","), n++)
            iv[n] = strtoll(t, NULL, 10), fv[n] = strtof(t, NULL);
        return fl ? ir_attr_floats(kv, n, fv) : ir_attr_ints(kv, n, iv);
    }
    if (strpbrk(v, ".e"))
        return ir_attr_float(kv, strtof(v, NULL));
    return ir_attr_int(kv, strtoll(v, NULL, 10));
}

/* Splits a comma list keeping empty entries; returns the count. */
static inline size_t tb_names(char *s, char **out, size_t cap)
{
    size_t n = 0;
    while (s && n < cap) {
        char *e = strchr(s, ',');
        if (e)
            *e = 0;
        out[n++] = s;
        s = e ? e + 1 : NULL;
    }
    return n;
}

static inline void tb_node(IrGraph *g, char **w, int n_w, int idx)
{
    char *outs[8], *ins[8];
    size_t n_o = tb_names(w[0], outs, 8), n_i = 0;
    int a = 3;
    if (n_w > 3 && !strchr(w[3], '='))
        n_i = tb_names(w[3], ins, 8), a = 4;
    char nm[32];
    snprintf(nm, sizeof nm, "n%d", idx);
    IrError e;
    IrNode *k = ir_node_new(g, NULL, w[2], NULL, nm, n_i, (const char *const *)ins, n_o,
                            (const char *const *)outs, &e);
    T_CHECK(k != NULL, "tb: node %s: %s", w[2], e.msg);
    for (; k && a < n_w; a++)
        ir_node_set_attr(k, tb_attr(w[a]));
}

/* Builds the model the text describes (IR version 8). */
static inline IrModel *tb_model(const char *text)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("g");
    char *copy = mem_strdup(text), *save = NULL;
    int idx = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *w[24];
        int n_w = 0;
        for (char *t = strtok(line, " "); t && n_w < 24; t = strtok(NULL, " "))
            w[n_w++] = t;
        if (n_w == 0)
            continue;
        if (!strcmp(w[0], "opset"))
            ir_model_set_opset(m, "", strtoll(w[1], NULL, 10));
        else if (!strcmp(w[0], "input"))
            tb_input(g, w[1], w[2], n_w > 3 ? w[3] : NULL);
        else if (!strcmp(w[0], "init"))
            tb_init(g, w[1], w[2], w[3], w[4]);
        else if (!strcmp(w[0], "output"))
            ir_graph_add_output(g, ir_graph_value(g, w[1]), NULL);
        else if (n_w > 2 && !strcmp(w[1], "="))
            tb_node(g, w, n_w, idx++);
    }
    free(copy);
    return m;
}

/* tb_model with the graph outputs' types declared as inference finds them
 * (the checker wants them declared); inference's results are dropped. */
static inline IrModel *tb_model_typed(const char *text)
{
    IrModel *m = tb_model(text);
    IrError err;
    if (inf_model(m, NULL, &err) < 0) {
        fprintf(stderr, "test model: %s\n", err.msg);
        exit(2);
    }
    for (size_t i = 0; i < m->graph->outputs.n; i++) {
        IrValueInfo *vi = m->graph->outputs.p[i];
        if (!vi->type)
            vi->type = ir_type_copy(vi->value->type);
    }
    ir_graph_clear_inferred(m->graph);
    return m;
}

/* Nodes of type op in the main graph. */
static inline size_t tb_count(const IrModel *m, const char *op)
{
    size_t n = 0;
    for (const IrNode *k = m->graph->first; k; k = k->next)
        n += strcmp(k->op_type, op) == 0;
    return n;
}

/* Optimizes a copy of m with options o (o->passes NULL = the default
 * pipeline), checks that the copy's outputs equal m's, and returns the
 * copy (caller frees; NULL when it could not be made) and the total
 * number of changes. */
static inline IrModel *tb_run_opts(const IrModel *m, const OptOptions *o, long *changes)
{
    uint8_t *buf;
    size_t len;
    IrError err;
    IrModel *copy = NULL;
    const char *what = o->passes ? o->passes : "default";
    *changes = -1;
    if (save_model_buffer(m, &buf, &len, &err) ||
        load_model_buffer(buf, len, NULL, "copy", NULL, &copy, &err)) {
        T_CHECK(0, "%s: the test model does not save/load: %s", what, err.msg);
        return NULL;
    }
    free(buf);
    OptStats st;
    if (opt_optimize(copy, o, &st, &err)) {
        T_CHECK(0, "%s: %s", what, err.msg);
        opt_stats_free(&st);
        return copy;
    }
    *changes = 0;
    for (size_t i = 0; i < st.n; i++)
        *changes += st.changes[i];
    opt_stats_free(&st);
    VfOptions vo = {.seed = 3};
    T_CHECK(vf_compare((IrModel *)m, copy, &vo, &err) == 0, "%s: outputs differ: %s", what,
            err.msg);
    return copy;
}

/* tb_run_opts with only a pass list. */
static inline IrModel *tb_run(const IrModel *m, const char *passes, long *changes)
{
    OptOptions o = {.passes = passes};
    return tb_run_opts(m, &o, changes);
}

#endif
