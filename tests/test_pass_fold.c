/*
 * test_pass_fold - constant folding (fold) and shape-only folding
 * (fold_shapes): where they apply, where they must not (random ops, folds
 * above the size bound, shapes that are not static), and outputs before
 * and after.
 */
#include "passes_build.h"

/* Runs `pass` with a fold limit on a copy of m (outputs compared). */
static IrModel *tf_run_limit(const IrModel *m, const char *pass, uint64_t limit, long *ch)
{
    OptOptions o = {.passes = pass, .fold_limit = limit};
    return tb_run_opts(m, &o, ch);
}

static void test_fold_chain(void)
{
    IrModel *m = tb_model("opset 11\n"
                          "input x float 2,3\n"
                          "init a float 3 1,2,3\n"
                          "init b float 3 0.5\n"
                          "c = Add a,b\n"
                          "d = Sqrt c\n"
                          "e = Unsqueeze d axes=[0]\n"
                          "y = Mul x,e\n"
                          "output y\n");
    long ch;
    IrModel *o = tb_run(m, "fold", &ch);
    T_CHECK(o && ch == 3 && o->graph->n_nodes == 1 && tb_count(o, "Mul") == 1,
            "fold chain: %ld changes, %zu nodes", ch, o ? o->graph->n_nodes : 0);
    /* the folded value is an initializer holding sqrt(1.5), sqrt(2.5), sqrt(3.5) */
    const IrValue *e = o ? ir_graph_find_local(o->graph, "e") : NULL;
    T_CHECK(e && e->kind == IR_VAL_INIT && e->init->ndims == 2 && e->init->dims[0] == 1 &&
            e->init->dims[1] == 3, "fold chain: e is a [1,3] initializer");
    ir_model_free(o);
    ir_model_free(m);
}

/* A folded graph output keeps its name; the graph keeps its interface. */
static void test_fold_output(void)
{
    IrModel *m = tb_model("input x float 2,3\n"
                          "init a float 3 1,2,3\n"
                          "y = Neg a\n"
                          "z = Relu x\n"
                          "output y\n"
                          "output z\n");
    long ch;
    IrModel *o = tb_run(m, "fold", &ch);
    T_CHECK(o && ch == 1 && tb_count(o, "Neg") == 0 && o->graph->outputs.n == 2,
            "fold output: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
}

/* Random ops and ops reading graph inputs never fold. */
static void test_fold_not(void)
{
    IrModel *m = tb_model("input x float 2,3\n"
                          "init a float 3 1,2,3\n"
                          "r = RandomUniformLike a seed=1.0\n"
                          "s = Add x,a\n"
                          "y = Add s,r\n"
                          "output y\n");
    long ch;
    IrModel *o = tb_run(m, "fold", &ch);
    T_CHECK(o && ch == 0 && o->graph->n_nodes == 3, "fold not: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
}

/* Expand to [1000,1000] floats (4 MB) from 12 bytes: above the default
 * 1 MiB bound, so it stays; a fold that shrinks the model is done, and a
 * larger bound lets the expansion through. */
static void test_fold_bound(void)
{
    IrModel *m = tb_model("input x float 1000,1000\n"
                          "init a float 1 2\n"
                          "init s int64 2 1000,1000\n"
                          "e = Expand a,s\n"
                          "y = Add x,e\n"
                          "output y\n");
    long ch;
    IrModel *o = tf_run_limit(m, "fold", 0, &ch);
    T_CHECK(o && ch == 0 && tb_count(o, "Expand") == 1, "fold bound: %ld changes", ch);
    ir_model_free(o);
    o = tf_run_limit(m, "fold", 8u << 20, &ch);
    T_CHECK(o && ch == 1 && tb_count(o, "Expand") == 0, "fold bound 8M: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
    m = tb_model("input x float 3\n"
                 "init big float 1000,1000 rand\n"
                 "init i int64 1 7\n"
                 "g = Gather big,i\n"
                 "r = Reshape g,s\n"
                 "init s int64 1 1000\n"
                 "t = Slice r,b,e\n"
                 "init b int64 1 0\n"
                 "init e int64 1 3\n"
                 "y = Add x,t\n"
                 "output y\n");
    o = tf_run_limit(m, "fold", 0, &ch);
    T_CHECK(o && ch == 3 && o->graph->n_nodes == 1, "fold shrink: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
}

/* ConstantOfShape and Tile blow up the same way. */
static void test_fold_bound_ops(void)
{
    IrModel *m = tb_model("input x float 600,600\n"
                          "init s int64 2 600,600\n"
                          "c = ConstantOfShape s\n"
                          "init a float 2,2 rand\n"
                          "init r int64 2 300,300\n"
                          "t = Tile a,r\n"
                          "u = Add x,c\n"
                          "y = Add u,t\n"
                          "output y\n");
    long ch;
    IrModel *o = tf_run_limit(m, "fold", 0, &ch);
    T_CHECK(o && ch == 0 && tb_count(o, "Tile") == 1 && tb_count(o, "ConstantOfShape") == 1,
            "fold bound ops: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
}

/* Outside the main graph's initializers (IR 3 here), folds become
 * Constant nodes. */
static void test_fold_constant_nodes(void)
{
    IrModel *m = tb_model("input x float 2,3\n"
                          "a = Constant value_float=2.0\n"
                          "b = Constant value_float=3.0\n"
                          "c = Mul a,b\n"
                          "y = Add x,c\n"
                          "output y\n");
    m->ir_version = 3;
    float two = 2, three = 3;   /* folds read Constant `value` tensors */
    ir_node_set_attr(m->graph->first, ir_attr_tensor("value", ir_tensor_new(NULL, 1, 0, NULL, &two, 4)));
    ir_node_remove_attr(m->graph->first, "value_float");
    ir_node_set_attr(m->graph->first->next, ir_attr_tensor("value", ir_tensor_new(NULL, 1, 0, NULL, &three, 4)));
    ir_node_remove_attr(m->graph->first->next, "value_float");
    long ch;
    IrModel *o = tb_run(m, "fold", &ch);
    T_CHECK(o && ch == 1 && tb_count(o, "Mul") == 0 && tb_count(o, "Constant") == 3,
            "fold constant nodes: %ld changes", ch);
    const IrValue *c = o ? ir_graph_find_local(o->graph, "c") : NULL;
    T_CHECK(c && c->kind == IR_VAL_NODE && !strcmp(c->producer->op_type, "Constant"),
            "fold constant nodes: c comes from a Constant");
    ir_model_free(o);
    ir_model_free(m);
}

static void test_fold_shapes(void)
{
    IrModel *m = tb_model("input x float 2,3,4\n"
                          "s = Shape x\n"
                          "n = Size x\n"
                          "y = Reshape x,s\n"
                          "output y\n"
                          "output n\n");
    long ch;
    IrModel *o = tb_run(m, "fold_shapes", &ch);
    T_CHECK(o && ch == 2 && tb_count(o, "Shape") == 0 && tb_count(o, "Size") == 0,
            "fold_shapes static: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
    /* n is symbolic: Shape stays, but its element 1 is known to be 3 */
    m = tb_model("input x float n,3\n"
                 "s = Shape x\n"
                 "init i int64 - 1\n"
                 "d = Gather s,i\n"
                 "init z int64 1 0\n"
                 "u = Unsqueeze d,z\n"
                 "init m1 int64 1 -1\n"
                 "t = Concat m1,u axis=0\n"
                 "y = Reshape x,t\n"
                 "output y\n"
                 "output s\n");
    o = tb_run(m, "fold_shapes", &ch);
    T_CHECK(o && tb_count(o, "Shape") == 1 && tb_count(o, "Reshape") == 1 &&
            tb_count(o, "Concat") == 0, "fold_shapes symbolic: %ld changes", ch);
    const IrValue *t = o ? ir_graph_find_local(o->graph, "t") : NULL;
    T_CHECK(t && t->kind == IR_VAL_INIT && t->init->dims[0] == 2, "fold_shapes: t constant");
    ir_model_free(o);
    ir_model_free(m);
}

/* An initializer that is also a graph input is a default the caller may
 * override: nothing reading it folds. */
static void test_fold_input_default(void)
{
    IrModel *m = tb_model("input x float 2,3\n"
                          "input a float 3\n"
                          "init a float 3 1,2,3\n"
                          "b = Neg a\n"
                          "y = Add x,b\n"
                          "output y\n");
    long ch;
    IrModel *o = tb_run(m, "fold", &ch);
    T_CHECK(o && ch == 0 && tb_count(o, "Neg") == 1, "fold input default: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
}

/* --input-shape makes a symbolic dim static; then Shape folds. Bad
 * requests are refused with a reason and change nothing. */
static void test_input_shape(void)
{
    IrModel *m = tb_model("input x float n,3\n"
                          "s = Shape x\n"
                          "y = Reshape x,s\n"
                          "output y\n");
    IrError e;
    static const char *const bad[] = {"q=4,3", "x=4", "x=4,5", "x=a,3", "x", "=4,3",
                                      "x=4,3,", "x=-1,3", "x=4,,3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        T_CHECK(opt_set_input_shape(m, bad[i], &e) < 0, "input shape: '%s' accepted", bad[i]);
    const IrType *t = ((IrValueInfo *)m->graph->inputs.p[0])->type;
    T_CHECK(t->shape->dims[0].kind == IR_DIM_PARAM, "input shape: refusals changed nothing");
    T_CHECK(opt_set_input_shape(m, "x=4,3", &e) == 0, "input shape: %s", e.msg);
    T_CHECK(t->shape->dims[0].kind == IR_DIM_VALUE && t->shape->dims[0].value == 4,
            "input shape: dim 0 is 4");
    long ch;
    IrModel *o = tb_run(m, "fold_shapes", &ch);
    T_CHECK(o && ch == 1 && tb_count(o, "Shape") == 0, "input shape: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
}

int main(void)
{
    test_fold_chain();
    test_fold_output();
    test_fold_not();
    test_fold_input_default();
    test_fold_bound();
    test_fold_bound_ops();
    test_fold_constant_nodes();
    test_fold_shapes();
    test_input_shape();
    return t_done("test_pass_fold");
}
