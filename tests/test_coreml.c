/* The Core ML export and import (src/coreml.c): ONNX -> MIL -> ONNX
 * round trips judged by the evaluator on the shared models' own inputs and
 * on the backend node tests of every op the export lowers (counts per op
 * printed), the target chosen and named, and the refusals (an op no target
 * can express, a target below what the model needs). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "convert.h"
#include "coreml.h"
#include "corpus.h"
#include "load.h"
#include "milops.h"
#include "t.h"
#include "verify.h"

/* Converts m in place to CM_ONNX_OPSET; 0 or -1 with err. */
static int to_opset(IrModel *m, IrError *err)
{
    CvOptions o = {.opset = CM_ONNX_OPSET};
    CvReport r = {0};
    int rc = cv_convert(m, &o, &r, err);
    cv_report_free(&r);
    return rc;
}

/* Core ML computes int64 as int32: where the round trip's input or output
 * is int32 and the original's int64, a Cast at the boundary lets the
 * evaluator feed and compare both with the original's data. */
static void retype_inputs(IrModel *rt, const IrModel *orig)
{
    IrGraph *g = rt->graph;
    for (size_t i = 0; i < g->inputs.n && i < orig->graph->inputs.n; i++) {
        IrValueInfo *vi = g->inputs.p[i];
        const IrValueInfo *ov = orig->graph->inputs.p[i];
        if (!vi->type || !ov->type || vi->type->elem_type == ov->type->elem_type)
            continue;
        IrValue *v = vi->value;
        char *nn = ir_graph_fresh_name(g, v->name);
        const char *in[1] = {v->name}, *out[1] = {nn};
        IrError err;
        IrNode *cast = ir_node_new(g, g->first, "Cast", "", nn, 1, in, 1, out, &err);
        free(nn);
        if (!cast)
            continue;
        ir_node_set_attr(cast, ir_attr_int("to", vi->type->elem_type));
        size_t nu = v->n_uses;
        IrUse *uses = ir_alloc_array(nu ? nu : 1, sizeof *uses);
        memcpy(uses, v->uses, nu * sizeof *uses);
        for (size_t k = 0; k < nu; k++)
            if (uses[k].node && uses[k].node != cast)
                ir_node_set_input(uses[k].node, uses[k].index, cast->out[0]);
        free(uses);
        vi->type->elem_type = ov->type->elem_type;
    }
    for (size_t i = 0; i < g->outputs.n && i < orig->graph->outputs.n; i++) {
        IrValueInfo *vi = g->outputs.p[i];
        const IrValueInfo *ov = orig->graph->outputs.p[i];
        if (!vi->type || !ov->type || !ov->type->has_elem_type ||
            vi->type->elem_type == ov->type->elem_type)
            continue;
        IrValue *v = vi->value;
        char *keep = ir_strdup(v->name), *nn = ir_graph_fresh_name(g, v->name);
        IrError err;
        if (ir_value_rename(v, nn, &err) == 0) {
            const char *in[1] = {nn}, *out[1] = {keep};
            IrNode *cast = ir_node_new(g, NULL, "Cast", "", keep, 1, in, 1, out, &err);
            if (cast) {
                ir_node_set_attr(cast, ir_attr_int("to", ov->type->elem_type));
                ir_graph_point_output(g, i, cast->out[0]);
                vi->type->elem_type = ov->type->elem_type;
            }
        }
        free(keep);
        free(nn);
    }
}

/* ONNX -> MIL -> ONNX of `conv` (at CM_ONNX_OPSET), compared with `orig`
 * on DIR's inputs. Returns 0 equal, 1 refused by the export (reason in
 * err), -1 failed (err). `target` gets the target chosen. */
static int round_trip(IrModel *orig, IrModel *conv, const char *inputs, int *target,
                      CmReport *rep, IrError *err)
{
    MilModel *mm = NULL;
    CmOptions o = {.target = -1};
    if (cm_export(conv, &o, &mm, rep, err) < 0)
        return 1;
    *target = rep->target;
    IrModel *rt = NULL;
    int rc = cm_import(mm, &rt, err);
    mil_model_free(mm);
    if (rc < 0)
        return -1;
    retype_inputs(rt, orig);
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
            rc = round_trip(orig, conv, inputs, &target, &rep, &err);
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

typedef struct OpCount {
    char op[64];
    int pass, refused, failed, skipped;
} OpCount;

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
static const char *test_op(const IrModel *m)
{
    const char *first = NULL;
    IR_FOR_NODES(m->graph, n) {
        if (!cm_lowers(n->op_type) && strcmp(n->op_type, "Constant"))
            return NULL;
        if (!first && strcmp(n->op_type, "Constant"))
            first = n->op_type;
    }
    return first;
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
    const char *op = test_op(orig);
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
        int rc = round_trip(orig, conv, inputs, &target, &rep, &err);
        if (rc == 1) {
            c->refused++;
            T_CHECK((strstr(err.msg, "node '") || strstr(err.msg, "graph input '")) &&
                        strstr(err.msg, "target"),
                    "%s: refusal without node and target: %s", name, err.msg);
            if (getenv("CM_VERBOSE"))
                printf("refused %s: %s\n", name, err.msg);
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
    int pass = 0, refused = 0, failed = 0;
    for (size_t i = 0; i < n_counts; i++) {
        printf("op %-22s %3d equal, %3d refused, %3d failed, %3d not at opset %d\n",
               counts[i].op, counts[i].pass, counts[i].refused, counts[i].failed,
               counts[i].skipped, CM_ONNX_OPSET);
        pass += counts[i].pass;
        refused += counts[i].refused;
        failed += counts[i].failed;
    }
    printf("node tests: %zu ops, %d equal after the round trip, %d refused, %d failed\n",
           n_counts, pass, refused, failed);
}

/* ---- targets and refusals --------------------------------------------------------------- */

/* x [3,3] float -> op -> y, at CM_ONNX_OPSET. */
static IrModel *one_node(const char *op, size_t n_extra, IrTensor **extra)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", CM_ONNX_OPSET);
    m->graph = ir_graph_new(NULL);
    int64_t dims[2] = {3, 3};
    ir_graph_add_input(m->graph, "x", ir_type_tensor(IR_FLOAT, 2, dims));
    const char *in[4] = {"x"};
    for (size_t i = 0; i < n_extra; i++) {
        in[i + 1] = extra[i]->name;
        ir_graph_add_init(m->graph, extra[i]);
    }
    const char *out[1] = {"y"};
    IrError err;
    IrNode *n = ir_node_new(m->graph, NULL, op, "", "the_node", 1 + n_extra, in, 1, out, &err);
    (void)n;
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "y"), NULL);
    return m;
}

static void test_targets(void)
{
    /* QuantizeLinear's quantize first exists at iOS17 */
    float scale = 0.5f;
    uint8_t zp = 3;
    IrTensor *ex[2] = {ir_tensor_new("s", IR_FLOAT, 0, NULL, &scale, 4),
                       ir_tensor_new("z", IR_UINT8, 0, NULL, &zp, 1)};
    IrModel *m = one_node("QuantizeLinear", 2, ex);
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
    ir_model_free(m);

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

int main(void)
{
    test_targets();
    test_shared_models();
    test_node_cases();
    return t_done("test_coreml");
}
