/*
 * test_eval_gridsample - the evaluator's GridSample computes a float
 * grid's coordinates in float, as the spec's reference implementation
 * (and ONNX Runtime) do, so that a model whose GridSample was expanded
 * into float ops (adapters/sample.c) verifies against it on long axes.
 *
 * On an axis of 4096 pixels float rounds ((g + 1) * 4096 - 1) / 2 by up to
 * about 2^-12; with X a ramp of slope 1000 that moves the output by up to
 * about 0.25, which the test sees: the expected values are computed here,
 * in float, from the spec's formula (the grid points are checked to round
 * differently in float and double).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "ir/ir.h"
#include "t.h"

enum { W = 4096, NPTS = 8 };

static void die(const char *what)
{
    fprintf(stderr, "test_eval_gridsample: cannot build the model: %s\n", what);
    exit(2);
}

/* GridSample-16 of X [1, 1, 1, W] at grid [1, 1, NPTS, 2], mode linear,
 * padding `pad`, align_corners `align`. */
static IrModel *gs_model(const char *pad, int align)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 16);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("g");
    int64_t xd[4] = {1, 1, 1, W}, gd[4] = {1, 1, NPTS, 2};
    ir_graph_add_input(m->graph, "x", ir_type_tensor(1, 4, xd));
    ir_graph_add_input(m->graph, "grid", ir_type_tensor(1, 4, gd));
    const char *in[2] = {"x", "grid"}, *out[1] = {"y"};
    IrError err;
    IrNode *n = ir_node_new(m->graph, NULL, "GridSample", "", "gs", 2, in, 1, out, &err);
    if (!n)
        die(err.msg);
    ir_node_set_attr(n, ir_attr_string("padding_mode", pad));
    ir_node_set_attr(n, ir_attr_int("align_corners", align));
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "y"), NULL);
    return m;
}

/* The spec's unnormalized coordinate, in float as the grid's type. */
static float coord(float g, int align)
{
    return align ? (g + 1.0f) / 2.0f * (float)(W - 1) : ((g + 1.0f) * (float)W - 1.0f) / 2.0f;
}

/* One model: x[k] = 1000 * (k - 2048); grid points near the middle whose
 * float and double coordinates differ. The linear sample at coordinate c
 * (inside the axis) is 1000 * (c - 2048), exact in double. */
static void check(const char *pad, int align)
{
    float *xv = malloc(W * sizeof *xv), gv[2 * NPTS];
    for (int k = 0; k < W; k++)
        xv[k] = 1000.0f * (float)(k - 2048);
    int differ = 0;
    for (int i = 0; i < NPTS; i++) {
        gv[2 * i] = 0.0123457f + 0.000731f * (float)i;  /* x: the long axis */
        gv[2 * i + 1] = 0.0f;                           /* y: the one row */
        double gd = gv[2 * i];
        double xd = align ? (gd + 1) / 2 * (W - 1) : ((gd + 1) * W - 1) / 2;
        differ += fabs(xd - (double)coord(gv[2 * i], align)) > 1e-5;
    }
    T_CHECK(differ > 0, "%s/%d: the chosen points round differently in float", pad, align);
    int64_t xd4[4] = {1, 1, 1, W}, gd4[4] = {1, 1, NPTS, 2};
    EvValue *in[2] = {ev_tensor_new(IR_FLOAT, 4, xd4, NULL), ev_tensor_new(IR_FLOAT, 4, gd4, NULL)};
    if (!in[0] || !in[1])
        die("tensor");
    memcpy(in[0]->data, xv, W * sizeof *xv);
    memcpy(in[1]->data, gv, sizeof gv);
    IrModel *m = gs_model(pad, align);
    EvValue **res = NULL;
    size_t n_res = 0;
    IrError err;
    int rc = ev_model_run(m, NULL, 2, in, &res, &n_res, &err);
    T_CHECK(rc == 0 && n_res == 1, "%s/%d: runs (%s)", pad, align, rc ? err.msg : "");
    for (int i = 0; rc == 0 && n_res == 1 && i < NPTS; i++) {
        double want = (float)(1000.0 * ((double)coord(gv[2 * i], align) - 2048.0));
        double got = ((const float *)res[0]->data)[i];
        T_CHECK(fabs(got - want) <= 1e-6 * fabs(want) + 1e-3,
                "%s/%d point %d: %.6f, the float coordinate gives %.6f", pad, align, i, got,
                want);
    }
    for (size_t i = 0; i < n_res; i++)
        ev_unref(res[i]);
    free(res);
    ev_unref(in[0]);
    ev_unref(in[1]);
    ir_model_free(m);
    free(xv);
}

int main(void)
{
    check("zeros", 0);
    check("zeros", 1);
    check("border", 0);
    check("reflection", 1);
    return t_done("test_eval_gridsample");
}
