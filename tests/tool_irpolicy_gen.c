/*
 * tool_irpolicy_gen.c - builds the models of tests/ir_policy.py from a
 * real model, through the IR API (issue 19, IR version policy).
 *
 *   tool_irpolicy_gen meta IN.onnx OUT.onnx
 *       IR 10, metadata_props on the graph, every node, every value_info
 *       (value_info written for every intermediate value first) and every
 *       initializer, as PyTorch's new exporter writes them.
 *   tool_irpolicy_gen func IN.onnx OUT.onnx
 *       IR 8; every Conv whose only reader is a Relu becomes a call of the
 *       model-local function local.ConvRelu(X, W, B), whose Conv takes
 *       its attributes by reference (strides, pads, ...) and whose Relu
 *       is a call of a second function, local.Act: calls in a body.
 *   tool_irpolicy_gen cast8 OUT.onnx IR
 *       IR as given, opset 19: Y = Cast(Cast(X, to=FLOAT8E4M3FN),
 *       to=FLOAT), a model whose declared types are all float.
 *   tool_irpolicy_gen ml OUT.onnx
 *       IR 7, ai.onnx 13 and ai.onnx.ml 2: Y = Binarizer(X).
 * Prints what it did on one line; exit 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/infer.h"
#include "io/load.h"
#include "io/save.h"

static int gen_fail(const char *what, const IrError *err)
{
    fprintf(stderr, "tool_irpolicy_gen: %s: %s\n", what, err ? err->msg : "failed");
    return 1;
}

static void gen_meta(IrStrMap *m, const char *key, const char *value)
{
    ir_strmap_set(m, key, value);
}

/* metadata_props everywhere the IR 10 fields allow them. */
static int gen_meta_model(IrModel *m)
{
    IrError err;
    if (inf_model(m, NULL, &err) < 0)
        return gen_fail("infer", &err);
    inf_write_value_info(m->graph);
    IrGraph *g = m->graph;
    gen_meta(&g->meta, "pkg.torch.onnx.class_hierarchy", "['Model']");
    size_t nodes = 0, infos = 0;
    for (IrNode *n = g->first; n; n = n->next, nodes++) {
        gen_meta(&n->meta, "pkg.torch.onnx.stack_trace", "File \"model.py\", line 1");
        gen_meta(&n->meta, "namespace", n->name ? n->name : "");
    }
    IrPtrList *lists[3] = {&g->inputs, &g->outputs, &g->value_info};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->n; i++, infos++)
            gen_meta(&((IrValueInfo *)lists[l]->p[i])->meta, "pkg.torch.onnx.name", "v");
    for (size_t i = 0; i < g->inits.n; i++)
        gen_meta(&((IrTensor *)g->inits.p[i])->meta, "pkg.torch.onnx.original", "w");
    m->ir_version = 10;
    m->has_ir_version = true;
    printf("meta: %zu nodes, %zu value_info, %zu initializers\n", nodes, infos, g->inits.n);
    return 0;
}

/* An attribute that refers to the calling node's attribute `name`. */
static IrAttr *gen_ref(const char *name, int type)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->ref_attr_name = mem_strdup(name);
    a->has_type = true;
    a->type = type;
    return a;
}

static IrFunction *gen_function(const char *name, IrGraph *body, int64_t opset)
{
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup(name);
    f->domain = mem_strdup("local");
    f->body = body;
    f->n_opsets = 2;
    f->opsets = mem_array(2, sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = opset};
    f->opsets[1] = (IrOpset){.domain = mem_strdup("local"), .has_version = true, .version = 1};
    return f;
}

/* local.Act(X) = Relu(X). */
static IrFunction *gen_act(int64_t opset, IrError *err)
{
    IrGraph *b = ir_graph_new(NULL);
    b->is_function = true;
    ir_graph_add_input(b, "X", NULL);
    const char *in[1] = {"X"}, *out[1] = {"Y"};
    IrNode *r = ir_node_new(b, NULL, "Relu", "", "relu", 1, in, 1, out, err);
    if (!r)
        return NULL;
    ir_graph_add_output(b, r->out[0], NULL);
    return gen_function("Act", b, opset);
}

/* local.ConvRelu(X, W, B) = Act(Conv(X, W, B) with the call's attributes). */
static IrFunction *gen_convrelu(int64_t opset, IrError *err)
{
    static const char *const ints[] = {"dilations", "kernel_shape", "pads", "strides"};
    IrGraph *b = ir_graph_new(NULL);
    b->is_function = true;
    ir_graph_add_input(b, "X", NULL);
    ir_graph_add_input(b, "W", NULL);
    ir_graph_add_input(b, "B", NULL);
    const char *in[3] = {"X", "W", "B"}, *mid[1] = {"C"}, *out[1] = {"Y"};
    IrNode *c = ir_node_new(b, NULL, "Conv", "", "conv", 3, in, 1, mid, err);
    IrNode *r = c ? ir_node_new(b, NULL, "Act", "local", "act", 1, mid, 1, out, err) : NULL;
    if (!r)
        return NULL;
    for (size_t i = 0; i < 4; i++)
        ir_node_set_attr(c, gen_ref(ints[i], 7));
    ir_node_set_attr(c, gen_ref("group", 2));
    ir_graph_add_output(b, r->out[0], NULL);
    IrFunction *f = gen_function("ConvRelu", b, opset);
    f->n_attr_names = 5;
    f->attr_names = mem_array(5, sizeof *f->attr_names);
    for (size_t i = 0; i < 4; i++)
        f->attr_names[i] = mem_strdup(ints[i]);
    f->attr_names[4] = mem_strdup("group");
    return f;
}

/* The call's copy of a Conv attribute (ints or int). */
static IrAttr *gen_copy_attr(const IrAttr *a)
{
    return a->has_i ? ir_attr_int(a->name, a->i) : ir_attr_ints(a->name, a->n_ints, a->ints);
}

/* Replaces Conv -> Relu by a call of ConvRelu. */
static int gen_call(IrGraph *g, IrNode *c, IrNode *r, size_t k, IrError *err)
{
    const char *in[3];
    for (size_t i = 0; i < 3; i++)
        in[i] = i < c->n_in && c->in[i] ? c->in[i]->name : "";
    char name[64], tmp[64];
    snprintf(name, sizeof name, "convrelu_%zu", k);
    snprintf(tmp, sizeof tmp, "convrelu_%zu_tmp", k);
    const char *out[1] = {tmp};
    IrNode *call = ir_node_new(g, c, "ConvRelu", "local", name, 3, in, 1, out, err);
    if (!call)
        return -1;
    for (size_t i = 0; i < c->n_attr; i++)
        if (c->attr[i]->name && strcmp(c->attr[i]->name, "auto_pad"))
            ir_node_set_attr(call, gen_copy_attr(c->attr[i]));
    ir_node_take_output(call, 0, r, 0);   /* frees the placeholder */
    ir_node_delete(r);
    ir_node_delete(c);
    return 0;
}

static int gen_func_model(IrModel *m)
{
    IrError err;
    int64_t opset = ir_model_opset(m, "");
    IrFunction *act = gen_act(opset, &err), *cr = act ? gen_convrelu(opset, &err) : NULL;
    if (!cr)
        return gen_fail("function", &err);
    IrGraph *g = m->graph;
    size_t k = 0;
    IR_FOR_NODES(g, n) {
        if (!n->op_type || strcmp(n->op_type, "Conv") || !n->out[0] ||
            n->out[0]->n_uses != 1 || ir_value_is_graph_output(n->out[0]))
            continue;
        IrNode *r = n->out[0]->uses[0].node;
        if (!r || !r->op_type || strcmp(r->op_type, "Relu"))
            continue;
        if (ir_node_attr(n, "auto_pad"))
            continue;
        if (gen_call(g, n, r, k++, &err) < 0)
            return gen_fail("call", &err);
    }
    ir_graph_collect(g);
    ir_graph_drop_stale_info(g);
    m->functions = mem_array(2, sizeof *m->functions);
    m->functions[0] = cr;
    m->functions[1] = act;
    m->n_functions = 2;
    ir_model_set_opset(m, "local", 1);
    m->ir_version = 8;
    m->has_ir_version = true;
    printf("func: %zu calls of local.ConvRelu\n", k);
    return k ? 0 : gen_fail("func", NULL);
}

/* X -> Cast(float8e4m3fn) -> Cast(float) -> Y at opset 19. */
static int gen_cast8(IrModel **out, int64_t ir)
{
    IrError err;
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = ir;
    ir_model_set_opset(m, "", 19);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("cast8");
    int64_t dims[1] = {4};
    ir_graph_add_input(m->graph, "X", ir_type_tensor(1, 1, dims));
    const char *x[1] = {"X"}, *h[1] = {"H"}, *y[1] = {"Y"};
    IrNode *a = ir_node_new(m->graph, NULL, "Cast", "", "to8", 1, x, 1, h, &err);
    IrNode *b = a ? ir_node_new(m->graph, NULL, "Cast", "", "back", 1, h, 1, y, &err) : NULL;
    if (!b)
        return gen_fail("cast8", &err);
    ir_node_set_attr(a, ir_attr_int("to", 17));
    ir_node_set_attr(b, ir_attr_int("to", 1));
    ir_graph_add_output(m->graph, b->out[0], ir_type_tensor(1, 1, dims));
    *out = m;
    printf("cast8: Cast to FLOAT8E4M3FN at IR %lld\n", (long long)ir);
    return 0;
}

/* Y = ai.onnx.ml Binarizer(X), IR 7, ai.onnx 13, ai.onnx.ml 2. */
static int gen_ml(IrModel **out)
{
    IrError err;
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", 13);
    ir_model_set_opset(m, "ai.onnx.ml", 2);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("ml");
    int64_t dims[1] = {4};
    ir_graph_add_input(m->graph, "X", ir_type_tensor(1, 1, dims));
    const char *x[1] = {"X"}, *y[1] = {"Y"};
    IrNode *b = ir_node_new(m->graph, NULL, "Binarizer", "ai.onnx.ml", "bin", 1, x, 1, y, &err);
    if (!b)
        return gen_fail("ml", &err);
    ir_graph_add_output(m->graph, b->out[0], ir_type_tensor(1, 1, dims));
    *out = m;
    printf("ml: Binarizer at ai.onnx.ml 2, IR 7\n");
    return 0;
}

int main(int argc, char **argv)
{
    IrError err;
    IrModel *m = NULL;
    int rc;
    if (argc == 4 && !strcmp(argv[1], "cast8")) {
        rc = gen_cast8(&m, atoi(argv[3]));
    } else if (argc == 3 && !strcmp(argv[1], "ml")) {
        rc = gen_ml(&m);
    } else if (argc == 4 && (!strcmp(argv[1], "meta") || !strcmp(argv[1], "func"))) {
        if (load_model_file(argv[2], NULL, &m, &err) < 0)
            return gen_fail(argv[2], &err);
        rc = !strcmp(argv[1], "meta") ? gen_meta_model(m) : gen_func_model(m);
    } else {
        fputs("usage: tool_irpolicy_gen meta|func IN.onnx OUT.onnx | cast8 OUT.onnx IR "
              "| ml OUT.onnx\n", stderr);
        return 2;
    }
    const char *path = !strcmp(argv[1], "cast8") || !strcmp(argv[1], "ml") ? argv[2] : argv[3];
    if (rc == 0 && save_model_file(m, path, NULL, &err) < 0)
        rc = gen_fail(path, &err);
    ir_model_free(m);
    return rc;
}
