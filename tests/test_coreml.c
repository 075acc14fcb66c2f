/* The Core ML export and import (src/coreml/coreml.c): ONNX -> MIL -> ONNX
 * round trips judged by the evaluator on the shared models' own inputs and
 * on the backend node tests of every op the export lowers (counts per op
 * printed), the target chosen and named, and the refusals (an op no target
 * can express, a target below what the model needs). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "coreml/coreml.h"
#include "corpus.h"
#include "io/load.h"
#include "coreml/milops.h"
#include "t.h"
#include "coreml_test.h"
#include "eval/verify.h"

/* Converts m in place to CM_ONNX_OPSET; 0 or -1 with err. */
static int to_opset(IrModel *m, IrError *err)
{
    CvOptions o = {.opset = CM_ONNX_OPSET};
    CvReport r = {0};
    int rc = cv_convert(m, &o, &r, err);
    cv_report_free(&r);
    return rc;
}

typedef struct OpCount {
    char op[64];
    int pass, refused, failed, skipped;
    int frozen;             /* of the refused: equal once the inputs after
                               the first are frozen to the case's values */
    char mil[160];          /* MIL ops its exports used ("conv linear ...") */
    int target;             /* the highest target they needed */
    char why[3][120];       /* distinct refusal reasons, the first three */
    int n_why;
    char types[120];        /* input types Core ML lacks ("INT16 UINT8") */
} OpCount;

/* Whether op is the squeeze of a scalar input (passed as [1]), which
 * belongs to the model's boundary, not to the op lowered. */
static bool boundary_squeeze(const MilFunction *fn, const MilOp *op)
{
    if (strcmp(op->type, "squeeze") || !op->n_in || !op->in[0].n_args ||
        !op->in[0].args[0].name || op->n_out != 1 || op->out[0].type.rank != 0)
        return false;
    for (size_t i = 0; i < fn->n_in; i++)
        if (!strcmp(fn->in[i].name, op->in[0].args[0].name) && fn->in[i].type.rank == 1)
            return true;
    return false;
}

/* Notes the MIL ops of mm (top block) under c, for one-node tests: the
 * ONNX op -> MIL ops table is printed from these. */
static void note_mil_ops(OpCount *c, const MilModel *mm, int target)
{
    const MilBlock *b = mm->fn[0]->block;
    if (target > c->target)
        c->target = target;
    for (size_t i = 0; i < b->n_ops; i++) {
        const char *t = b->ops[i]->type;
        if (boundary_squeeze(mm->fn[0], b->ops[i]))
            continue;
        size_t len = strlen(t);
        const char *p = c->mil;
        bool seen = false;
        while ((p = strstr(p, t))) {
            seen |= (p == c->mil || p[-1] == ' ') && (p[len] == ' ' || !p[len]);
            p += len;
        }
        if (seen || !strcmp(t, "const") || strlen(c->mil) + len + 2 > sizeof c->mil)
            continue;
        if (c->mil[0])
            strcat(c->mil, " ");
        strcat(c->mil, t);
    }
}

/* Checks every op of mm against the MIL op table at mm's target: the op
 * exists there, and, where the table lists parameters (the generated
 * table does; the provisional one lists none), every parameter bound is
 * one of them, every required one is bound, and every const one is bound
 * to an immediate or a const op. Returns the number of findings (the
 * first printed). */
/* Whether `name` is a function input or an output of an op before op i
 * of b (SSA order: defined before read). */
static bool defined_before(const MilFunction *fn, const MilBlock *b, size_t i, const char *name)
{
    for (size_t k = 0; k < fn->n_in; k++)
        if (!strcmp(fn->in[k].name, name))
            return true;
    for (size_t j = 0; j < i; j++)
        for (size_t k = 0; k < b->ops[j]->n_out; k++)
            if (!strcmp(b->ops[j]->out[k].name, name))
                return true;
    return false;
}

static int conformance(const MilModel *mm, int target, const char *what)
{
    const MilBlock *b = mm->fn[0]->block;
    int bad = 0;
    for (size_t i = 0; i < b->n_ops; i++) {
        const MilOp *op = b->ops[i];
        for (size_t k = 0; k < op->n_in; k++)
            for (size_t a = 0; a < op->in[k].n_args; a++) {
                const char *nm = op->in[k].args[a].name;
                if (nm && !defined_before(mm->fn[0], b, i, nm) && !bad++)
                    fprintf(stderr, "%s: MIL op '%s' reads '%s' before it is defined\n", what,
                            op->type, nm);
            }
        if (!strcmp(op->type, "const"))
            continue;
        const MilOpSchema *s = milop_find(op->type, target);
        if (!s) {
            if (!bad++)
                fprintf(stderr, "%s: MIL op '%s' is not in %s's opset\n", what, op->type,
                        mil_targets[target].name);
            continue;
        }
        for (size_t k = 0; k < op->n_in && s->n_params; k++) {
            const MilParam *p = NULL;
            for (size_t j = 0; j < s->n_params; j++)
                if (!strcmp(s->params[j].name, op->in[k].param))
                    p = &s->params[j];
            bool is_const = op->in[k].n_args > 0;
            for (size_t a = 0; p && a < op->in[k].n_args; a++) {
                const MilArg *arg = &op->in[k].args[a];
                bool c = arg->value != NULL;
                for (size_t j = 0; !c && arg->name && j < b->n_ops; j++)
                    c = !strcmp(b->ops[j]->type, "const") &&
                        !strcmp(b->ops[j]->out[0].name, arg->name);
                is_const &= c;
            }
            if ((!p || (p->is_const && !is_const)) && !bad++)
                fprintf(stderr, "%s: MIL op '%s': parameter '%s' %s\n", what, op->type,
                        op->in[k].param, p ? "must be const" : "unknown");
        }
        for (size_t j = 0; j < s->n_params; j++)
            if (!s->params[j].optional && !mil_op_input(op, s->params[j].name) && !bad++)
                fprintf(stderr, "%s: MIL op '%s': required parameter '%s' missing\n", what,
                        op->type, s->params[j].name);
    }
    return bad;
}

/* ONNX -> MIL -> ONNX of `conv` (at CM_ONNX_OPSET), compared with `orig`
 * on DIR's inputs. Returns 0 equal, 1 refused by the export (reason in
 * err), -1 failed (err). `target` gets the target chosen. */
static int round_trip(IrModel *orig, IrModel *conv, const char *inputs, int *target,
                      CmReport *rep, IrError *err, OpCount *note)
{
    MilModel *mm = NULL;
    CmOptions o = {.target = -1};
    if (cm_export(conv, &o, &mm, rep, err) < 0)
        return 1;
    *target = rep->target;
    if (note)
        note_mil_ops(note, mm, rep->target);
    T_CHECK(conformance(mm, rep->target, "export") == 0, "export does not conform to the "
            "MIL op table (above)");
    IrModel *rt = NULL;
    int rc = cm_import(mm, &rt, err);
    mil_model_free(mm);
    if (rc < 0)
        return -1;
    cm_retype_like(rt, orig);
    rc = chk_require(rt, "round trip", err);
    if (rc == 0) {
        VfOptions vo = {.inputs_dir = inputs, .seed = 7};
        rc = vf_compare(orig, rt, &vo, err) == 0 ? 0 : -1;
    }
    ir_model_free(rt);
    return rc;
}

/* ---- the shared models ------------------------------------------------------------ */

static void test_shared_models(void)
{
    const char *root = "../shared/models";
    DIR *d = opendir(root);
    if (!d) {
        T_SKIP("../shared/models absent");
        return;
    }
    CorpusList names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            corpus_push(&names, strdup(e->d_name));
    closedir(d);
    corpus_sort(&names);
    for (size_t i = 0; i < names.n; i++) {
        char path[1024], inputs[1024];
        snprintf(path, sizeof path, "%s/%s/model.onnx", root, names.p[i]);
        snprintf(inputs, sizeof inputs, "%s/%s/test_data_set_0", root, names.p[i]);
        IrModel *orig = NULL, *conv = NULL;
        IrError err;
        if (load_model_file(path, NULL, &orig, &err) < 0 ||
            load_model_file(path, NULL, &conv, &err) < 0) {
            T_CHECK(0, "%s: %s", names.p[i], err.msg);
            ir_model_free(orig);
            continue;
        }
        int target = -1;
        CmReport rep;
        int rc = to_opset(conv, &err);
        T_CHECK(rc == 0, "%s: convert to %d: %s", names.p[i], CM_ONNX_OPSET, err.msg);
        if (rc == 0) {
            rc = round_trip(orig, conv, inputs, &target, &rep, &err, NULL);
            T_CHECK(rc == 0, "%s: %s", names.p[i], err.msg);
        }
        if (rc == 0)
            printf("model %-24s target %s (forced by MIL op %s of node '%s' (%s)), "
                   "%zu nodes lowered, %zu folded, %zu MIL ops\n",
                   names.p[i], mil_targets[target].name, rep.forced_op, rep.forced_node,
                   rep.forced_onnx_op, rep.n_nodes, rep.n_folded, rep.n_ops);
        ir_model_free(orig);
        ir_model_free(conv);
    }
    corpus_free(&names);
}

/* ---- the backend node tests --------------------------------------------------------- */

static OpCount counts[256];
static size_t n_counts;

static OpCount *count_of(const char *op)
{
    for (size_t i = 0; i < n_counts; i++)
        if (!strcmp(counts[i].op, op))
            return &counts[i];
    if (n_counts == sizeof counts / sizeof counts[0])
        return &counts[n_counts - 1];
    snprintf(counts[n_counts].op, sizeof counts[n_counts].op, "%s", op);
    return &counts[n_counts++];
}

/* The op a node test is counted under: its one node's op, or, for an
 * expanded test, the first op of its nodes that the export lowers; NULL
 * when some op of the model has no lowering (not a test of this export). */
static const char *test_op(const IrModel *m, bool *single)
{
    const char *first = NULL;
    size_t count = 0;
    IR_FOR_NODES(m->graph, n) {
        if (!cm_lowers(n->op_type) && strcmp(n->op_type, "Constant"))
            return NULL;
        if (strcmp(n->op_type, "Constant") && !count++)
            first = n->op_type;
    }
    *single = count == 1;
    return first;
}

/* Turns inputs 1.. of m into initializers holding the case's values (the
 * inputs stay, unused, so that the feeds keep their order): for lowerings
 * that need constant parameters (pads, axes, K) which a node test feeds. */
static int freeze_inputs(IrModel *m, const char *inputs, IrError *err)
{
    IrGraph *g = m->graph;
    for (size_t k = 1; k < g->inputs.n; k++) {
        IrValue *v = ((IrValueInfo *)g->inputs.p[k])->value;
        char path[1300];
        snprintf(path, sizeof path, "%s/input_%zu.pb", inputs, k);
        IrTensor *t;
        if (load_tensor_file(path, &t, err) < 0)
            return -1;
        free(t->name);
        t->name = ir_graph_fresh_name(g, v->name);
        IrValue *c = ir_graph_add_init(g, t);
        if (!c) {
            ir_tensor_free(t);
            return ir_fail(err, "cannot freeze '%s'", v->name);
        }
        if (ir_value_replace_uses(v, c, err) < 0)
            return -1;
    }
    return 0;
}

/* The round trip of a refused case again with its inputs frozen. */
static void node_case_frozen(IrModel *orig, const char *path, const char *inputs,
                             const char *name, OpCount *c, bool single)
{
    IrModel *conv = NULL;
    IrError err;
    if (load_model_file(path, NULL, &conv, &err) < 0)
        return;
    if (freeze_inputs(conv, inputs, &err) == 0 && to_opset(conv, &err) == 0) {
        int target;
        CmReport rep;
        int rc = round_trip(orig, conv, inputs, &target, &rep, &err, single ? c : NULL);
        T_CHECK(rc >= 0, "%s (frozen): %s", name, err.msg);
        c->frozen += rc == 0;
    }
    ir_model_free(conv);
}

/* Keeps the reason of a refusal ("node 'n' (Op-V): target T: WHY") for
 * the table, once per distinct reason, the first three. */
static void note_reason(OpCount *c, const char *msg)
{
    const char *gi = strstr(msg, "graph input '");
    const char *ty = gi ? strstr(gi, "' (") : NULL;
    if (ty && strstr(ty, ") has no Core ML multi-array type")) {
        char name[32];
        size_t n = strcspn(ty + 3, ")");
        snprintf(name, sizeof name, "%.*s", (int)(n < 31 ? n : 31), ty + 3);
        if (!strstr(c->types, name) && strlen(c->types) + strlen(name) + 3 < sizeof c->types)
            snprintf(c->types + strlen(c->types), sizeof c->types - strlen(c->types), "%s%s",
                     c->types[0] ? ", " : "", name);
        return;
    }
    const char *p = strstr(msg, ": target ");
    p = p ? strstr(p + 9, ": ") : NULL;
    char why[120];
    snprintf(why, sizeof why, "%.119s", p ? p + 2 : msg);
    for (char *q = why; *q; q++)
        if (*q == '|')
            *q = '/';       /* a table cell */
    for (int i = 0; i < c->n_why; i++)
        if (!strcmp(c->why[i], why))
            return;
    if (c->n_why < 3)
        snprintf(c->why[c->n_why++], sizeof c->why[0], "%s", why);
}

static void node_case(const char *dir, const char *name)
{
    char path[1200], inputs[1200];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
    snprintf(inputs, sizeof inputs, "%s/%s/test_data_set_0", dir, name);
    IrModel *orig = NULL, *conv = NULL;
    IrError err;
    if (load_model_file(path, NULL, &orig, &err) < 0)
        return;
    bool single;
    const char *op = test_op(orig, &single);
    if (!op || !corpus_is_dir(inputs) || load_model_file(path, NULL, &conv, &err) < 0) {
        ir_model_free(orig);
        return;
    }
    OpCount *c = count_of(op);
    if (to_opset(conv, &err) < 0) {
        c->skipped++;       /* not expressible at CM_ONNX_OPSET: the converter's matter */
    } else {
        int target;
        CmReport rep;
        err.msg[0] = 0;
        int rc = round_trip(orig, conv, inputs, &target, &rep, &err, single ? c : NULL);
        if (rc == 1) {
            c->refused++;
            T_CHECK((strstr(err.msg, "node '") || strstr(err.msg, "graph input '") ||
                     strstr(err.msg, "graph output '")) &&
                        strstr(err.msg, "target"),
                    "%s: refusal without node and target: %s", name, err.msg);
            if (getenv("CM_VERBOSE"))
                printf("refused %s: %s\n", name, err.msg);
            note_reason(c, err.msg);
            if (strstr(err.msg, "not constant") || strstr(err.msg, "not a constant"))
                node_case_frozen(orig, path, inputs, name, c, single);
        } else {
            T_CHECK(rc == 0, "%s: %s", name, err.msg);
            if (rc == 0)
                c->pass++;
            else
                c->failed++;
        }
    }
    ir_model_free(orig);
    ir_model_free(conv);
}

static void test_node_cases(void)
{
    const char *root = corpus_backend_root();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/node", root ? root : "");
    DIR *d = root ? opendir(dir) : NULL;
    if (!d) {
        T_SKIP("backend node tests absent");
        return;
    }
    CorpusList names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "test_", 5))
            corpus_push(&names, strdup(e->d_name));
    closedir(d);
    corpus_sort(&names);
    for (size_t i = 0; i < names.n; i++)
        node_case(dir, names.p[i]);
    corpus_free(&names);
    int pass = 0, refused = 0, failed = 0, frozen = 0;
    for (size_t i = 0; i < n_counts; i++) {
        printf("op %-22s %3d equal, %3d refused (%3d equal with inputs frozen), %3d failed, "
               "%3d not at opset %d; MIL: %s (%s)\n",
               counts[i].op, counts[i].pass, counts[i].refused, counts[i].frozen,
               counts[i].failed, counts[i].skipped, CM_ONNX_OPSET,
               counts[i].mil[0] ? counts[i].mil : "-", mil_targets[counts[i].target].name);
        pass += counts[i].pass;
        frozen += counts[i].frozen;
        refused += counts[i].refused;
        failed += counts[i].failed;
    }
    printf("node tests: %zu ops, %d equal after the round trip, %d refused (%d of them "
           "equal with their inputs frozen), %d failed\n",
           n_counts, pass, refused, frozen, failed);
}

/* ---- layouts: MIL's conventions asserted on the exported program -------------- */

/* x (float, dims) -> op(x, extra initializers...) -> y; attributes added by
 * the caller on the returned node. */
static IrModel *model_of(const char *op, size_t rank, const int64_t *dims, size_t n_extra,
                         IrTensor **extra, IrNode **node)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", CM_ONNX_OPSET);
    m->graph = ir_graph_new(NULL);
    ir_graph_add_input(m->graph, "x", ir_type_tensor(IR_FLOAT, rank, dims));
    const char *in[8] = {"x"};
    for (size_t i = 0; i < n_extra; i++) {
        in[i + 1] = extra[i] ? extra[i]->name : "";
        if (extra[i])
            ir_graph_add_init(m->graph, extra[i]);
    }
    const char *out[1] = {"y"};
    IrError err;
    *node = ir_node_new(m->graph, NULL, op, "", "the_node", 1 + n_extra, in, 1, out, &err);
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "y"), NULL);
    return m;
}

static int i32_at(const MilTensor *t, size_t i)
{
    int32_t v;
    memcpy(&v, t->data + 4 * i, 4);
    return v;
}

static float f32_at(const MilTensor *t, size_t i)
{
    float v;
    memcpy(&v, t->data + 4 * i, 4);
    return v;
}

static MilModel *export_ok(IrModel *m, const char *what)
{
    MilModel *mm = NULL;
    IrError err;
    CmOptions o = {.target = -1};
    T_CHECK(cm_export(m, &o, &mm, NULL, &err) == 0, "%s: %s", what, err.msg);
    return mm;
}

/* ONNX pads list every begin, then every end; MIL's pad pairs them per dim. */
static void test_conv_layout(void)
{
    int64_t xd[4] = {1, 1, 5, 5}, wd[4] = {1, 1, 3, 3};
    float w[9] = {0};
    IrTensor *ex[1] = {ir_tensor_new("w", IR_FLOAT, 4, wd, w, sizeof w)};
    IrNode *n;
    IrModel *m = model_of("Conv", 4, xd, 1, ex, &n);
    int64_t pads[4] = {1, 2, 3, 4};
    ir_node_set_attr(n, ir_attr_ints("pads", 4, pads));
    MilModel *mm = export_ok(m, "Conv");
    const MilTensor *p = mm ? cmt_param_of(mm, cmt_find_op(mm, "conv", 0), "pad") : NULL;
    T_CHECK(p && p->dims[0] == 4 && i32_at(p, 0) == 1 && i32_at(p, 1) == 3 &&
                i32_at(p, 2) == 2 && i32_at(p, 3) == 4,
            "conv pad is [top, bottom, left, right]");
    const MilTensor *pt = mm ? cmt_param_of(mm, cmt_find_op(mm, "conv", 0), "pad_type") : NULL;
    T_CHECK(pt && pt->n_strings == 1 && !strcmp(pt->strings[0], "custom"), "pad_type custom");
    mil_model_free(mm);
    ir_model_free(m);
}

/* linear's weight is [out, in]: Gemm's B [in, out] (transB 0) transposed. */
static void test_linear_layout(void)
{
    int64_t xd[2] = {2, 3}, bd[2] = {3, 4};
    float b[12];
    for (int i = 0; i < 12; i++)
        b[i] = (float)i;
    IrTensor *ex[1] = {ir_tensor_new("b", IR_FLOAT, 2, bd, b, sizeof b)};
    IrNode *n;
    IrModel *m = model_of("Gemm", 2, xd, 1, ex, &n);
    MilModel *mm = export_ok(m, "Gemm");
    const MilTensor *w = mm ? cmt_param_of(mm, cmt_find_op(mm, "linear", 0), "weight") : NULL;
    bool ok = w && w->rank == 2 && w->dims[0] == 4 && w->dims[1] == 3;
    for (int o = 0; ok && o < 4; o++)
        for (int i = 0; i < 3; i++)
            ok &= f32_at(w, (size_t)(o * 3 + i)) == b[i * 4 + o];
    T_CHECK(ok, "linear weight [out, in] = B transposed");
    mil_model_free(mm);
    ir_model_free(m);
}

/* MIL stacks LSTM gates input, forget, output, cell; ONNX input, output,
 * forget, cell; MIL's one bias is Wb + Rb. */
static void test_lstm_layout(void)
{
    int64_t xd[3] = {2, 1, 1}, wd[3] = {1, 4, 1}, rd[3] = {1, 4, 1}, bd[2] = {1, 8};
    float w[4] = {1, 2, 3, 4}, r[4] = {5, 6, 7, 8};
    float b[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    IrTensor *ex[3] = {ir_tensor_new("W", IR_FLOAT, 3, wd, w, sizeof w),
                       ir_tensor_new("R", IR_FLOAT, 3, rd, r, sizeof r),
                       ir_tensor_new("B", IR_FLOAT, 2, bd, b, sizeof b)};
    IrNode *n;
    IrModel *m = model_of("LSTM", 3, xd, 3, ex, &n);
    ir_node_set_attr(n, ir_attr_int("hidden_size", 1));
    MilModel *mm = export_ok(m, "LSTM");
    const MilOp *op = mm ? cmt_find_op(mm, "lstm", 0) : NULL;
    const MilTensor *wi = cmt_param_of(mm, op, "weight_ih"), *wh = cmt_param_of(mm, op, "weight_hh");
    const MilTensor *bb = cmt_param_of(mm, op, "bias");
    T_CHECK(wi && f32_at(wi, 0) == 1 && f32_at(wi, 1) == 3 && f32_at(wi, 2) == 2 &&
                f32_at(wi, 3) == 4,
            "weight_ih gates i, f, o, c");
    T_CHECK(wh && f32_at(wh, 0) == 5 && f32_at(wh, 1) == 7 && f32_at(wh, 2) == 6 &&
                f32_at(wh, 3) == 8,
            "weight_hh gates i, f, o, c");
    T_CHECK(bb && f32_at(bb, 0) == 11 && f32_at(bb, 1) == 33 && f32_at(bb, 2) == 22 &&
                f32_at(bb, 3) == 44,
            "bias = Wb + Rb, gates i, f, o, c");
    mil_model_free(mm);
    ir_model_free(m);
}

/* A negative step running past the start: MIL's end would wrap, so the
 * end is masked; ONNX's clamping is done before MIL sees it. */
static void test_slice_layout(void)
{
    int64_t xd[1] = {5}, one[1] = {1}, st = -1, en = -10, sp = -1;
    IrTensor *ex[4] = {ir_tensor_new("st", IR_INT64, 1, one, &st, 8),
                       ir_tensor_new("en", IR_INT64, 1, one, &en, 8), NULL,
                       ir_tensor_new("sp", IR_INT64, 1, one, &sp, 8)};
    IrNode *n;
    IrModel *m = model_of("Slice", 1, xd, 4, ex, &n);
    MilModel *mm = export_ok(m, "Slice");
    const MilOp *op = mm ? cmt_find_op(mm, "slice_by_index", 0) : NULL;
    const MilTensor *b = cmt_param_of(mm, op, "begin"), *em = cmt_param_of(mm, op, "end_mask");
    const MilTensor *s = cmt_param_of(mm, op, "stride");
    T_CHECK(b && i32_at(b, 0) == 4 && s && i32_at(s, 0) == -1 && em && em->data[0] == 1,
            "slice: begin 4, stride -1, end masked");
    mil_model_free(mm);
    ir_model_free(m);
}

/* ---- targets and refusals --------------------------------------------------------------- */

/* A one-node model over x [3,3]. */
static IrModel *one_node(const char *op, size_t n_extra, IrTensor **extra)
{
    int64_t dims[2] = {3, 3};
    IrNode *n;
    return model_of(op, 2, dims, n_extra, extra, &n);
}

/* ConvTranspose whose weight is a graph input: conv_transpose takes its
 * weight only as a constant at iOS15 and iOS16, and as any value from
 * iOS17. The lowest target is then iOS17, forced by that node; asking for
 * iOS15 or iOS16 refuses naming node, op, parameter and iOS17. */
static void test_const_param_targets(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", CM_ONNX_OPSET);
    m->graph = ir_graph_new(NULL);
    int64_t xd[4] = {1, 2, 3, 3}, wd[4] = {2, 1, 2, 2};
    ir_graph_add_input(m->graph, "x", ir_type_tensor(IR_FLOAT, 4, xd));
    ir_graph_add_input(m->graph, "w", ir_type_tensor(IR_FLOAT, 4, wd));
    const char *in[2] = {"x", "w"}, *out[1] = {"y"};
    IrError err;
    ir_node_new(m->graph, NULL, "ConvTranspose", "", "up", 2, in, 1, out, &err);
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "y"), NULL);
    MilModel *mm = NULL;
    CmReport rep;
    CmOptions lowest = {.target = -1};
    int ios17 = (int)(mil_target_find("iOS17") - mil_targets);
    T_CHECK(cm_export(m, &lowest, &mm, &rep, &err) == 0, "ConvTranspose, weight an input: %s",
            err.msg);
    T_CHECK(rep.target == ios17 && rep.lowest == ios17 &&
                !strcmp(rep.forced_op, "conv_transpose") && !strcmp(rep.forced_node, "up") &&
                !strcmp(rep.forced_onnx_op, "ConvTranspose"),
            "a non-constant weight forces iOS17, named by node and op (got %d %s %s %s)",
            rep.target, rep.forced_op, rep.forced_node, rep.forced_onnx_op);
    mil_model_free(mm);
    for (int t = 0; t < ios17; t++) {
        CmOptions asked = {.target = t};
        mm = NULL;
        T_CHECK(cm_export(m, &asked, &mm, &rep, &err) < 0 && !mm, "%s refused",
                mil_targets[t].name);
        T_CHECK(strstr(err.msg, "node 'up' (ConvTranspose-11)") &&
                    strstr(err.msg, "parameter 'weight'") &&
                    strstr(err.msg, "first target that takes it: iOS17"),
                "%s: the refusal names node, op, parameter and iOS17: %s",
                mil_targets[t].name, err.msg);
        T_CHECK(rep.fail_kind && !strcmp(rep.fail_kind, "target") &&
                    rep.fail_first == ios17 && !strcmp(rep.fail_mil_op, "conv_transpose") &&
                    !strcmp(rep.fail_op, "ConvTranspose"),
                "%s: report kind target, first iOS17", mil_targets[t].name);
    }
    ir_model_free(m);
}

static void test_targets(void)
{
    /* QuantizeLinear's quantize first exists at iOS17 */
    float scale = 0.5f;
    uint8_t zp = 3;
    IrTensor *ex[2] = {ir_tensor_new("s", IR_FLOAT, 0, NULL, &scale, 4),
                       ir_tensor_new("z", IR_UINT8, 0, NULL, &zp, 1)};
    IrModel *m = one_node("QuantizeLinear", 2, ex);
    /* a uint8 output has no Core ML multi-array type: dequantize it */
    {
        const char *in[3] = {"y", "s", "z"}, *out[1] = {"w"};
        IrError e;
        ir_node_new(m->graph, NULL, "DequantizeLinear", "", "dq", 3, in, 1, out, &e);
        ir_graph_point_output(m->graph, 0, ir_graph_find_local(m->graph, "w"));
    }
    MilModel *mm = NULL;
    CmReport rep;
    IrError err;
    CmOptions lowest = {.target = -1}, ios15 = {.target = 0};
    T_CHECK(cm_export(m, &lowest, &mm, &rep, &err) == 0, "QuantizeLinear: %s", err.msg);
    T_CHECK(rep.target == milop_since("quantize") && rep.target == 2 &&
                !strcmp(rep.forced_op, "quantize") && !strcmp(rep.forced_node, "the_node"),
            "QuantizeLinear forces iOS17 (got %d, %s)", rep.target, rep.forced_op);
    T_CHECK(mm && mm->spec_version == 8 && !strcmp(mm->fn[0]->opset, "CoreML7"),
            "iOS17 model: spec 8, CoreML7");
    mil_model_free(mm);
    mm = NULL;
    T_CHECK(cm_export(m, &ios15, &mm, &rep, &err) < 0 && !mm, "iOS15 refused");
    T_CHECK(!strcmp(err.msg, "node 'the_node' (QuantizeLinear-13): MIL op 'quantize' first "
                             "exists at iOS17; target iOS15"),
            "refusal names node, op and first target: %s", err.msg);
    T_CHECK(rep.fail_kind && !strcmp(rep.fail_kind, "target") &&
                !strcmp(rep.fail_node, "the_node") && !strcmp(rep.fail_op, "QuantizeLinear") &&
                !strcmp(rep.fail_mil_op, "quantize") && rep.fail_first == 2,
            "report: kind target, node, op, MIL op, first target iOS17 (%s %s %s %d)",
            rep.fail_kind ? rep.fail_kind : "-", rep.fail_node, rep.fail_mil_op,
            rep.fail_first);
    ir_model_free(m);

    test_const_param_targets();

    /* an op no target can express */
    m = one_node("Det", 0, NULL);
    T_CHECK(cm_export(m, &lowest, &mm, &rep, &err) < 0 && !mm && strstr(err.msg, "'the_node'") &&
                strstr(err.msg, "Det") && strstr(err.msg, "no Core ML lowering"),
            "Det refused: %s", err.msg);
    ir_model_free(m);

    /* float64 is refused, with the reason */
    m = one_node("Relu", 0, NULL);
    ((IrValueInfo *)m->graph->inputs.p[0])->type->elem_type = IR_DOUBLE;
    T_CHECK(cm_export(m, &lowest, &mm, &rep, &err) < 0 && strstr(err.msg, "float64"),
            "float64 refused: %s", err.msg);
    ir_model_free(m);

    /* the wrong opset is refused before anything */
    m = one_node("Relu", 0, NULL);
    ir_model_set_opset(m, "", 13);
    T_CHECK(cm_export(m, &lowest, &mm, &rep, &err) < 0 && strstr(err.msg, "opset"),
            "opset 13 refused: %s", err.msg);
    ir_model_free(m);
}

/* ---- names, symbolic dims, malformed programs ---------------------------------------- */

/* ONNX names that are not MIL identifiers are made into ones, unique, and
 * the description's features carry the same names; a symbolic dim is
 * flexible there. */
static void test_names_and_dims(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", CM_ONNX_OPSET);
    m->graph = ir_graph_new(NULL);
    IrType *t = ir_type_tensor(IR_FLOAT, 2, (int64_t[]){-1, 3});
    t->shape->dims[0].kind = IR_DIM_PARAM;
    t->shape->dims[0].param = mem_strdup("N");
    ir_graph_add_input(m->graph, "in:0", t);
    const char *in[1] = {"in:0"}, *out[1] = {"1/out"};
    IrError err;
    ir_node_new(m->graph, NULL, "Relu", "", "r", 1, in, 1, out, &err);
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "1/out"), NULL);
    MilModel *mm = export_ok(m, "names");
    const MilFunction *fn = mm ? mm->fn[0] : NULL;
    T_CHECK(fn && fn->n_in == 1 && !strcmp(fn->in[0].name, "in_0") &&
                fn->block->n_out == 1 && !strcmp(fn->block->out[0], "_1_out"),
            "MIL identifiers: %s, %s", fn ? fn->in[0].name : "", fn ? fn->block->out[0] : "");
    T_CHECK(mm && mm->n_in == 1 && mm->n_out == 1 && !strcmp(mm->in[0].name, "in_0") &&
                !strcmp(mm->out[0].name, "_1_out"),
            "features named as the function's values");
    T_CHECK(fn && fn->in[0].type.dim_names && fn->in[0].type.dim_names[0] &&
                !strcmp(fn->in[0].type.dim_names[0], "N") && mm->in[0].range_lo &&
                mm->in[0].range_lo[0] == 1 && mm->in[0].range_hi[0] == -1 &&
                mm->in[0].range_lo[1] == 3 && mm->in[0].range_hi[1] == 3,
            "symbolic dim N is flexible [1, unbounded]");
    IrModel *back = NULL;
    T_CHECK(mm && cm_import(mm, &back, &err) == 0, "import: %s", err.msg);
    const IrValueInfo *bi = back ? back->graph->inputs.p[0] : NULL;
    T_CHECK(bi && bi->type->shape->dims[0].kind == IR_DIM_PARAM &&
                !strcmp(bi->type->shape->dims[0].param, "N"),
            "the import keeps the symbol");
    ir_model_free(back);
    mil_model_free(mm);
    ir_model_free(m);
}

/* Every op the export emits, raised from a malformed op (no inputs, or
 * every parameter bound to an empty tensor): refused or raised, never a
 * crash (the sanitized build runs this). */
static void test_malformed_import(void)
{
    int refused = 0;
    for (size_t i = 0; i < milop_table_n; i++) {
        for (int variant = 0; variant < 2; variant++) {
            MilModel *mm = mil_model_new(&mil_targets[3]);
            MilFunction *fn = mil_function_add(mm, "main", "CoreML8");
            MilType t = mil_type(MIL_FP32, 1, (int64_t[]){2});
            mil_function_input(fn, "x", &t);
            MilOp *op = mil_op_add(fn->block, milop_table[i].name, "op");
            if (variant) {
                static const char *params[] = {"x", "y", "weight", "pad", "axes", "begin",
                                               "end", "values", "shape", "reps", "indices",
                                               "input", "scale", "initial_h", "initial_c",
                                               "weight_ih", "weight_hh", "dtype", "mode"};
                for (size_t k = 0; k < sizeof params / sizeof params[0]; k++)
                    mil_op_in_const(op, params[k], mil_tensor_new(MIL_INT32, 1,
                                                                  (int64_t[]){0}, NULL));
            }
            mil_op_out(op, "y", &t);
            mil_block_output(fn->block, "y");
            mil_type_clear(&t);
            IrModel *back = NULL;
            IrError err;
            err.msg[0] = 0;
            int rc = cm_import(mm, &back, &err);
            T_CHECK(rc == 0 || (rc < 0 && err.msg[0] && !back), "%s: no reason",
                    milop_table[i].name);
            refused += rc < 0;
            ir_model_free(back);
            mil_model_free(mm);
        }
    }
    T_CHECK(refused > 0, "malformed ops are refused");
}

static int op_cmp(const void *a, const void *b)
{
    return strcmp(((const OpCount *)a)->op, ((const OpCount *)b)->op);
}

/* docs/coreml.md's table of the lowering, measured on the node tests: ONNX
 * op, the MIL ops its exports used, the first target they need, equal
 * and refused counts and the refusal reasons. */
static char *coreml_table(void)
{
    qsort(counts, n_counts, sizeof counts[0], op_cmp);
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len,
                            "| ONNX op | MIL ops | first target | node tests equal / refused "
                            "| refused because (node tests) |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < n_counts; i++) {
        const OpCount *c = &counts[i];
        if (len + 1024 > cap)
            t = realloc(t, cap *= 2);
        len += (size_t)snprintf(t + len, cap - len, "| %s | %s | %s | %d / %d | ", c->op,
                                c->mil[0] ? c->mil : "-",
                                c->pass ? mil_targets[c->target].name : "-", c->pass,
                                c->refused);
        if (c->types[0])
            len += (size_t)snprintf(t + len, cap - len, "inputs of type %s (no Core ML "
                                    "multi-array type)%s", c->types, c->n_why ? "; " : "");
        for (int k = 0; k < c->n_why; k++)
            len += (size_t)snprintf(t + len, cap - len, "%s%s", k ? "; " : "", c->why[k]);
        len += (size_t)snprintf(t + len, cap - len, "%s |\n",
                                c->n_why || c->types[0] ? "" : "-");
    }
    return t;
}

#define TABLE_BEGIN "<!-- coreml-table: make coreml-table writes this -->\n"
#define TABLE_END "<!-- /coreml-table -->"

/* CM_TABLE=FILE writes the table there; otherwise docs/coreml.md's copy
 * (between the markers) must be it, so that the page cannot rot. */
static void test_doc_table(void)
{
    /* the page's counts are of ../shared's node tests, not of another
     * data set's (Debian's ONNX 1.12 copy has fewer) */
    const char *root = corpus_backend_root();
    if (!n_counts || !root || strcmp(root, CORPUS_BACKEND_DIR))
        return;
    char *t = coreml_table();
    const char *out = getenv("CM_TABLE");
    if (out) {
        FILE *f = fopen(out, "w");
        T_CHECK(f && fputs(t, f) >= 0 && fclose(f) == 0, "write %s", out);
        free(t);
        return;
    }
    FILE *f = fopen("docs/coreml.md", "r");
    char *readme = NULL;
    size_t n = 0;
    if (f) {
        readme = malloc(1 << 20);
        n = fread(readme, 1, (1 << 20) - 1, f);
        readme[n] = 0;
        fclose(f);
    }
    const char *a = readme ? strstr(readme, TABLE_BEGIN) : NULL;
    const char *b = a ? strstr(a, TABLE_END) : NULL;
    size_t tl = strlen(t);
    a = a ? a + strlen(TABLE_BEGIN) : NULL;
    T_CHECK(a && b && (size_t)(b - a) == tl && !memcmp(a, t, tl),
            "docs/coreml.md's Core ML table is the measured one (make coreml-table "
            "rewrites it)");
    free(readme);
    free(t);
}

int main(void)
{
    test_names_and_dims();
    test_malformed_import();
    test_conv_layout();
    test_linear_layout();
    test_lstm_layout();
    test_slice_layout();
    test_targets();
    test_shared_models();
    test_node_cases();
    test_doc_table();
    return t_done("test_coreml");
}
