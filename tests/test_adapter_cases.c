/*
 * Hand-written adapter cases: small models described in tests/adapters/NAME.txt,
 * each converted to the targets it names and evaluated before and after on
 * the same seeded random inputs (verify.h), then converted back to its own
 * opset and evaluated again. A `refuse` line names a target that must be
 * refused, with the reason key. See tests/adapters/README for the format.
 *
 *   test_adapter_cases [-v] [--coverage FILE] [--ort-out DIR] [FILTER]
 *
 * --ort-out DIR writes, for ONNX Runtime to judge (tests/adapter_ort.sh),
 * each case as a backend-style folder DIR/FAMILY-NAME: model.onnx (the
 * original), test_data_set_0/input_K.pb (the seeded inputs the evaluator
 * was fed), and every model the conversion wrote (T.onnx, T-back.onnx;
 * mlT for ai.onnx.ml targets), listed in DIR/list.txt as
 * "CASE_DIR MODEL LABEL" lines. No expected outputs are written: ORT's
 * own run of the original is the reference.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "analysis/check.h"
#include "corpus.h"
#include "convert/convert.h"
#include "analysis/known.h"
#include "eval/eval.h"
#include "base/fconv.h"
#include "analysis/infer.h"
#include "io/load.h"
#include "schema/opschema.h"
#include "io/save.h"
#include "t.h"
#include "eval/verify.h"

#define CASES_DIR "tests/adapters"

static int verbose;
static FILE *coverage;
static const char *ort_dir;      /* --ort-out: where cases for ORT go */
static FILE *ort_list;
static char ort_case[1024];      /* the current case's folder, or "" */

/* One case being read. */
typedef struct Case {
    char name[128];
    char file[600];
    int line;
    IrModel *m;
    int64_t opset, opset_ml;
    int to[64], n_to, to_ml[16], n_to_ml;
    int refuse[32], n_refuse, refuse_ml[16], n_refuse_ml;
    char refuse_key[32][32], refuse_ml_key[16][32];
    int bad;                 /* a syntax error was reported */
} Case;

static void case_error(Case *c, const char *msg, const char *arg)
{
    T_CHECK(0, "%s:%d: case %s: %s%s%s", c->file, c->line, c->name, msg,
            arg ? ": " : "", arg ? arg : "");
    c->bad = 1;
}

/* ---- element types and values ---------------------------------------- */

static int32_t type_code(const char *s)
{
    /* the lower-case names of IR_DTYPES ("float", "int64", ...) */
    for (int32_t c = IR_FLOAT; ir_dtype_name(c); c++)
        if (!strcasecmp(s, ir_dtype_name(c)))
            return c;
    return 0;
}

/* Parses "2x3x4" or "scalar" into dims; returns the rank or -1. */
static int parse_dims(const char *s, int64_t *dims, int cap)
{
    if (!strcmp(s, "scalar"))
        return 0;
    int n = 0;
    while (*s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0 || n >= cap)
            return -1;
        dims[n++] = v;
        s = end;
        if (*s == 'x')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}

/* Encodes one number as element type `dt` at p; returns its size. A case
 * file's INT64_MAX reads as 2^63, which saturates back (fconv.h). */
static size_t encode(int32_t dt, double v, uint8_t *p)
{
    switch (dt) {
    case 1: { float f = (float)v; memcpy(p, &f, 4); return 4; }
    case 11: memcpy(p, &v, 8); return 8;
    case 10: { uint16_t h = half_f32_to_f16((float)v); memcpy(p, &h, 2); return 2; }
    case 16: { uint16_t h = half_f32_to_bf16((float)v); memcpy(p, &h, 2); return 2; }
    case 2: case 9: p[0] = (uint8_t)fc_i64_sat(v); return 1;
    case 3: p[0] = (uint8_t)(int8_t)fc_i64_sat(v); return 1;
    case 4: case 5: { uint16_t x = (uint16_t)fc_i64_sat(v); memcpy(p, &x, 2); return 2; }
    case 6: case 12: { uint32_t x = (uint32_t)fc_i64_sat(v); memcpy(p, &x, 4); return 4; }
    default: { int64_t x = fc_i64_sat(v); memcpy(p, &x, 8); return 8; }
    }
}

/* ---- lines ----------------------------------------------------------- */

/* Splits s in place at whitespace (quotes keep spaces); returns the count. */
static int split_words(char *s, char **w, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            break;
        w[n++] = s;
        int q = 0;
        while (*s && (q || !isspace((unsigned char)*s))) {
            if (*s == '"')
                q = !q;
            s++;
        }
        if (*s)
            *s++ = 0;
    }
    return n;
}

static void add_input(Case *c, char **w, int n)
{
    int64_t dims[16];
    int32_t dt = n >= 4 ? type_code(w[2]) : 0;
    int rank = n >= 4 ? parse_dims(w[3], dims, 16) : -1;
    if (!dt || rank < 0)
        return case_error(c, "input NAME TYPE DIMS", NULL);
    if (!ir_graph_add_input(c->m->graph, w[1], ir_type_tensor(dt, (size_t)rank, dims)))
        case_error(c, "input defined twice", w[1]);
}

/* const NAME TYPE DIMS = v1,v2,... (no values for an empty tensor) */
static void add_const(Case *c, char **w, int n)
{
    int64_t dims[16];
    int32_t dt = n >= 5 ? type_code(w[2]) : 0;
    int rank = n >= 5 ? parse_dims(w[3], dims, 16) : -1;
    if (!dt || rank < 0 || strcmp(w[4], "="))
        return case_error(c, "const NAME TYPE DIMS = VALUES", NULL);
    size_t cap = 16, len = 0;
    uint8_t *buf = malloc(cap);
    for (char *p = n >= 6 ? w[5] : ""; *p;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p) {
            free(buf);
            return case_error(c, "bad constant value", p);
        }
        if (len + 8 > cap)
            buf = realloc(buf, cap *= 2);
        len += encode(dt, v, buf + len);
        p = *end == ',' ? end + 1 : end;
    }
    IrTensor *t = ir_tensor_new(w[1], dt, (size_t)rank, dims, buf, len);
    free(buf);
    if (!ir_graph_add_init(c->m->graph, t)) {
        ir_tensor_free(t);
        case_error(c, "const defined twice", w[1]);
    }
}

/* A STRINGS attribute from "a","b",... (the IR has no constructor for one). */
static IrAttr *attr_strings(const char *name, char *body)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->has_type = true;
    a->type = 8;
    for (char *p = body; *p;) {
        char *e = strchr(p, ',');
        if (e)
            *e = 0;
        a->strings = mem_grow(a->strings, a->n_strings + 1, sizeof *a->strings);
        size_t l = strlen(p);
        if (l >= 2 && p[0] == '"') {
            p++;
            l -= 2;
        }
        a->strings[a->n_strings].data = mem_alloc(l + 1);
        memcpy(a->strings[a->n_strings].data, p, l);
        a->strings[a->n_strings++].len = l;
        if (!e)
            break;
        p = e + 1;
    }
    return a;
}

/* name=value: 1 (INT), 1.5 (FLOAT), [1,2] (INTS), [1.0,2] (FLOATS),
 * "s" (STRING), ["a","b"] (STRINGS). */
static IrAttr *parse_attr(char *w)
{
    char *eq = strchr(w, '=');
    if (!eq)
        return NULL;
    *eq = 0;
    char *v = eq + 1;
    size_t l = strlen(v);
    if (v[0] == '"' && l >= 2 && v[l - 1] == '"') {
        v[l - 1] = 0;
        return ir_attr_string(w, v + 1);
    }
    if (v[0] == '[' && l >= 2 && v[l - 1] == ']') {
        v[l - 1] = 0;
        v++;
        if (v[0] == '"')
            return attr_strings(w, v);
        if (strpbrk(v, ".eE") || strstr(v, "inf") || strstr(v, "nan")) {
            float fs[64];
            size_t n = 0;
            for (char *p = v; *p && n < 64;) {
                char *end;
                fs[n++] = strtof(p, &end);
                if (end == p)
                    return NULL;
                p = *end == ',' ? end + 1 : end;
            }
            return ir_attr_floats(w, n, fs);
        }
        int64_t xs[64];
        size_t n = 0;
        for (char *p = v; *p && n < 64;) {
            char *end;
            xs[n++] = strtoll(p, &end, 10);
            p = *end == ',' ? end + 1 : end;
            if (end == p && *p)
                return NULL;
        }
        return ir_attr_ints(w, n, xs);
    }
    char *end;
    if (strpbrk(v, ".eE") || strstr(v, "inf")) {
        float f = strtof(v, &end);
        return *end ? NULL : ir_attr_float(w, f);
    }
    long long i = strtoll(v, &end, 10);
    return *end ? NULL : ir_attr_int(w, i);
}

/* Splits "a,b,-" into names ("-" = left out, as ""). */
static int split_names(char *s, const char **out, int cap)
{
    int n = 0;
    for (char *p = s; *p && n < cap;) {
        char *e = strchr(p, ',');
        if (e)
            *e = 0;
        out[n++] = strcmp(p, "-") ? p : "";
        if (!e)
            break;
        p = e + 1;
    }
    return n;
}

/* node OP in,in -> out,out attr=v ...   (OP may be ml:OP for ai.onnx.ml) */
static void add_node(Case *c, char **w, int n)
{
    int arrow = 0;
    for (int i = 2; i < n && !arrow; i++)
        if (!strcmp(w[i], "->"))
            arrow = i;
    if (n < 4 || !arrow || arrow + 1 >= n)
        return case_error(c, "node OP INPUTS -> OUTPUTS [attr=value ...]", NULL);
    const char *ins[32], *outs[16];
    int ni = arrow == 3 ? split_names(w[2], ins, 32) : 0;
    if (arrow != 2 && arrow != 3)
        return case_error(c, "node: inputs are one comma-separated word", NULL);
    int no = split_names(w[arrow + 1], outs, 16);
    const char *op = w[1], *domain = NULL;
    if (!strncmp(op, "ml:", 3)) {
        op += 3;
        domain = "ai.onnx.ml";
    }
    /* node names are unique (ONNX Runtime refuses a model where they are
     * not): the op, then op_2, op_3 ... */
    char name[160];
    int same = 1;
    IR_FOR_NODES(c->m->graph, k)
        same += !strcmp(k->op_type, op);
    if (same > 1)
        snprintf(name, sizeof name, "%s_%d", op, same);
    else
        snprintf(name, sizeof name, "%s", op);
    IrError err;
    IrNode *k = ir_node_new(c->m->graph, NULL, op, domain, name, (size_t)ni, ins,
                            (size_t)no, outs, &err);
    if (!k)
        return case_error(c, err.msg, NULL);
    for (int i = arrow + 2; i < n; i++) {
        IrAttr *a = parse_attr(w[i]);
        if (!a)
            return case_error(c, "bad attribute", w[i]);
        ir_node_set_attr(k, a);
    }
}

static void add_output(Case *c, char **w, int n)
{
    IrValue *v = n >= 2 ? ir_graph_find_local(c->m->graph, w[1]) : NULL;
    if (!v)
        return case_error(c, "output names no value", n >= 2 ? w[1] : NULL);
    ir_graph_add_output(c->m->graph, v, NULL);
}

/* to / to-ml / refuse / refuse-ml lines. */
static void add_targets(Case *c, char **w, int n, int *list, int *cnt, int cap,
                        char (*keys)[32])
{
    for (int i = 1; i < n; i++) {
        if (keys && i == n - 1 && i > 1 && !isdigit((unsigned char)w[i][0])) {
            for (int k = 0; k < *cnt; k++)
                if (!keys[k][0])
                    snprintf(keys[k], 32, "%s", w[i]);
            return;
        }
        if (*cnt >= cap || !isdigit((unsigned char)w[i][0]))
            return case_error(c, "bad target", w[i]);
        if (keys)
            keys[*cnt][0] = 0;
        list[(*cnt)++] = atoi(w[i]);
    }
}

/* ---- running a case -------------------------------------------------- */

static void on_adapt(void *arg, const char *domain, const char *op, int from, int to)
{
    (void)arg;
    if (coverage)
        fprintf(coverage, "%s|%s|%d|%d 1\n", domain, op, from, to);
}

/* Gives graph outputs the inferred types (a model needs them). */
static int type_outputs(Case *c)
{
    IrError err;
    if (inf_model(c->m, NULL, &err) < 0) {
        case_error(c, "the model does not infer", err.msg);
        return -1;
    }
    IrGraph *g = c->m->graph;
    for (size_t i = 0; i < g->outputs.n; i++) {
        IrValueInfo *vi = g->outputs.p[i];
        if (!vi->type && vi->value->type)
            vi->type = ir_type_copy(vi->value->type);
    }
    ir_graph_clear_inferred(g);
    return 0;
}

/* Converts a copy of c->m to `opset` (ml: ai.onnx.ml); returns it or NULL. */
static IrModel *convert(const Case *c, const IrModel *from, int opset, int ml,
                        const char **reason, IrError *err)
{
    IrModel *m = corpus_copy_model(from);
    if (!m) {
        ir_fail(err, "copy failed");
        return NULL;
    }
    CvOptions o = {0};
    if (ml)
        o.opset_ml = opset;
    else
        o.opset = opset;
    CvReport r = {.on_adapt = on_adapt};
    int rc = cv_convert(m, &o, &r, err);
    *reason = r.reason;
    cv_report_free(&r);
    (void)c;
    if (rc) {
        ir_model_free(m);
        return NULL;
    }
    return m;
}

/* ---- cases for ONNX Runtime (--ort-out) ------------------------------ */

/* Writes the seeded inputs vf_compare feeds c->m into DIR/test_data_set_0,
 * named after the inputs. 0, or -1 with err. */
static int ort_write_inputs(const Case *c, const char *dir, IrError *err)
{
    VfOptions vo = {.seed = 7};      /* as judge() */
    EvValue **in;
    size_t n;
    if (vf_make_inputs(c->m, &vo, &in, &n, err) < 0)
        return -1;
    IrValueInfo **feeds;
    size_t nf = ev_model_feeds(c->m, &feeds);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n && i < nf; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
        rc = ev_value_write(in[i], feeds[i]->value->name, path, err);
    }
    free(feeds);
    ev_values_free(in, n);
    return rc;
}

/* Starts c's folder: the original model and its inputs. A case that
 * cannot be written is named and left out (ort_case stays ""). */
static void ort_begin(const Case *c)
{
    ort_case[0] = 0;
    if (!ort_list)
        return;
    const char *base = strrchr(c->file, '/') ? strrchr(c->file, '/') + 1 : c->file;
    int flen = (int)strcspn(base, ".");
    char dir[1024], sub[1100], path[1100];
    snprintf(dir, sizeof dir, "%s/%.*s-%s", ort_dir, flen, base, c->name);
    snprintf(sub, sizeof sub, "%s/test_data_set_0", dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    IrError err;
    mkdir(dir, 0777);
    mkdir(sub, 0777);
    if (save_model_file(c->m, path, NULL, &err) < 0 ||
        ort_write_inputs(c, dir, &err) < 0) {
        fprintf(stderr, "ort-out: %s: %s\n", c->name, err.msg);
        return;
    }
    snprintf(ort_case, sizeof ort_case, "%s", dir);
}

/* How ORT's outputs of m can be compared with its run of the original:
 * "random" when an op draws random numbers (the streams differ: type and
 * dims only), "unordered" when a TopK need not sort (the same elements in
 * any order), else "exact". */
static const char *ort_mode(const IrModel *m)
{
    const char *mode = "exact";
    IR_FOR_NODES(m->graph, k) {
        if (kv_random(m, k))
            return "random";
        const IrAttr *a = strcmp(k->op_type, "TopK") ? NULL : ir_node_attr(k, "sorted");
        if (a && a->i == 0)
            mode = "unordered";
    }
    return mode;
}

/* Writes one converted model of the current case, listed under `label`
 * with how to compare it (ort_mode of the original or of m). */
static void ort_save(const Case *c, const IrModel *m, const char *label)
{
    if (!ort_case[0])
        return;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.onnx", ort_case, label);
    IrError err;
    if (save_model_file(m, path, NULL, &err) < 0) {
        fprintf(stderr, "ort-out: %s: %s\n", path, err.msg);
        return;
    }
    const char *mode = ort_mode(c->m);
    if (!strcmp(mode, "exact"))
        mode = ort_mode(m);
    fprintf(ort_list, "%s %s %s %s\n", ort_case, path, label, mode);
}

/* Checks that `got` is valid and computes what `want` computes. */
static void judge(const Case *c, IrModel *want, IrModel *got, const char *what)
{
    ChkReport rep;
    int bad = chk_model(got, &rep);
    T_CHECK(!bad, "%s: %s: invalid: %s", c->name, what,
            bad && chk_first_error(&rep) ? chk_first_error(&rep) : "");
    chk_report_free(&rep);
    VfOptions vo = {.seed = 7};
    IrError err;
    T_CHECK(vf_compare(want, got, &vo, &err) == 0, "%s: %s: %s", c->name, what, err.msg);
}

static void run_target(const Case *c, int t, int ml)
{
    char what[64];
    snprintf(what, sizeof what, "%s %lld -> %d", ml ? "ml" : "opset",
             (long long)(ml ? c->opset_ml : c->opset), t);
    const char *reason;
    IrError err;
    IrModel *m = convert(c, c->m, t, ml, &reason, &err);
    T_CHECK(m != NULL, "%s: %s refused: %s", c->name, what, err.msg);
    if (!m)
        return;
    judge(c, c->m, m, what);
    char label[32];
    snprintf(label, sizeof label, "%s%d", ml ? "ml" : "", t);
    ort_save(c, m, label);
    IrModel *back = convert(c, m, (int)(ml ? c->opset_ml : c->opset), ml, &reason, &err);
    T_CHECK(back != NULL, "%s: %s and back refused: %s", c->name, what, err.msg);
    if (back) {
        strncat(what, " and back", sizeof what - strlen(what) - 1);
        judge(c, c->m, back, what);
        strncat(label, "-back", sizeof label - strlen(label) - 1);
        ort_save(c, back, label);
        ir_model_free(back);
    }
    ir_model_free(m);
}

static void run_refusal(const Case *c, int t, int ml, const char *key)
{
    const char *reason = NULL;
    IrError err;
    IrModel *m = convert(c, c->m, t, ml, &reason, &err);
    T_CHECK(m == NULL, "%s: converting to %s%d must be refused (%s)", c->name,
            ml ? "ml " : "", t, key);
    if (m) {
        ir_model_free(m);
        return;
    }
    T_CHECK(!key[0] || (reason && !strcmp(reason, key)),
            "%s: refused to %d for '%s', expected '%s': %s", c->name, t,
            reason ? reason : "?", key, err.msg);
}

static void run_case(Case *c)
{
    if (c->bad || type_outputs(c) < 0)
        return;
    if (verbose)
        printf("case %s\n", c->name);
    ort_begin(c);
    for (int i = 0; i < c->n_to; i++)
        run_target(c, c->to[i], 0);
    for (int i = 0; i < c->n_to_ml; i++)
        run_target(c, c->to_ml[i], 1);
    for (int i = 0; i < c->n_refuse; i++)
        run_refusal(c, c->refuse[i], 0, c->refuse_key[i]);
    for (int i = 0; i < c->n_refuse_ml; i++)
        run_refusal(c, c->refuse_ml[i], 1, c->refuse_ml_key[i]);
}

static void case_begin(Case *c, const char *file, int line, const char *name)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->file, sizeof c->file, "%s", file);
    c->line = line;
    c->m = ir_model_new();
    c->m->graph = ir_graph_new(NULL);
    c->m->graph->name = mem_strdup(name);
}

/* Applies one line of a case. */
static void case_line(Case *c, char **w, int n)
{
    if (!strcmp(w[0], "opset") && n == 2) {
        c->opset = atoi(w[1]);
        ir_model_set_opset(c->m, "", c->opset);
        c->m->has_ir_version = true;
        c->m->ir_version = cv_ir_for_opset(c->opset) > c->m->ir_version
                               ? cv_ir_for_opset(c->opset) : c->m->ir_version;
    } else if (!strcmp(w[0], "opset-ml") && n == 2) {
        c->opset_ml = atoi(w[1]);
        ir_model_set_opset(c->m, "ai.onnx.ml", c->opset_ml);
        c->m->has_ir_version = true;
        if (cv_ir_for_ml(c->opset_ml) > c->m->ir_version)
            c->m->ir_version = cv_ir_for_ml(c->opset_ml);
    } else if (!strcmp(w[0], "input")) {
        add_input(c, w, n);
    } else if (!strcmp(w[0], "const")) {
        add_const(c, w, n);
    } else if (!strcmp(w[0], "node")) {
        add_node(c, w, n);
    } else if (!strcmp(w[0], "output")) {
        add_output(c, w, n);
    } else if (!strcmp(w[0], "to")) {
        add_targets(c, w, n, c->to, &c->n_to, 64, NULL);
    } else if (!strcmp(w[0], "to-ml")) {
        add_targets(c, w, n, c->to_ml, &c->n_to_ml, 16, NULL);
    } else if (!strcmp(w[0], "refuse")) {
        add_targets(c, w, n, c->refuse, &c->n_refuse, 32, c->refuse_key);
    } else if (!strcmp(w[0], "refuse-ml")) {
        add_targets(c, w, n, c->refuse_ml, &c->n_refuse_ml, 16, c->refuse_ml_key);
    } else {
        case_error(c, "unknown line", w[0]);
    }
}

static int run_file(const char *path, const char *filter)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    int ln = 0, count = 0;
    Case c = {0};
    int open = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *w[256];
        int n = split_words(line, w, 256);
        if (n == 0)
            continue;
        if (!strcmp(w[0], "case") && n == 2) {
            if (open) {
                T_CHECK(0, "%s:%d: case without end", path, ln);
                ir_model_free(c.m);
            }
            case_begin(&c, path, ln, w[1]);
            open = 1;
        } else if (!open) {
            T_CHECK(0, "%s:%d: line outside a case", path, ln);
        } else if (!strcmp(w[0], "end")) {
            if (!filter || strstr(c.name, filter)) {
                run_case(&c);
                count++;
            }
            ir_model_free(c.m);
            open = 0;
        } else {
            c.line = ln;
            case_line(&c, w, n);
        }
    }
    if (open) {
        T_CHECK(0, "%s: last case has no end", path);
        ir_model_free(c.m);
    }
    fclose(f);
    return count;
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--coverage") && i + 1 < argc)
            coverage = fopen(argv[++i], "w");
        else if (!strcmp(argv[i], "--ort-out") && i + 1 < argc)
            ort_dir = argv[++i];
        else
            filter = argv[i];
    }
    if (ort_dir) {
        char p[1100];
        mkdir(ort_dir, 0777);
        snprintf(p, sizeof p, "%s/list.txt", ort_dir);
        ort_list = fopen(p, "w");
        if (!ort_list) {
            fprintf(stderr, "cannot write %s\n", p);
            return 2;
        }
    }
    DIR *d = opendir(CASES_DIR);
    struct dirent *e;
    char *names[256];
    int nn = 0;
    while (d && (e = readdir(d)) && nn < 256) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".txt"))
            names[nn++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    int cases = 0;
    for (int i = 0; i < nn; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CASES_DIR, names[i]);
        cases += run_file(path, filter);
        free(names[i]);
    }
    printf("adapter cases: %d run\n", cases);
    if (coverage)
        fclose(coverage);
    if (ort_list)
        fclose(ort_list);
    return t_done("test_adapter_cases");
}
