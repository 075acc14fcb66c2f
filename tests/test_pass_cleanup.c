/* test_pass_cleanup - the cleanup passes: noop, dedup_init, cse and
 * value_info. Each case builds a small model, runs one pass (or a short
 * list), checks the change count and the op counts, and tb_run checks the
 * outputs before and after on random inputs. */
#include "passes_build.h"

/* One case: the model `text` (with `tail` set, followed by a Relu of y
 * as the output), the passes to run, the changes they must make and how
 * many nodes of `op` must be left in the main graph. */
typedef struct TcCase {
    const char *what, *text, *passes;
    long changes;
    const char *op;
    size_t left;
    bool tail;
} TcCase;

static void tc_case(const TcCase *c)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s", c->text, c->tail ? "z = Relu y\noutput z\n" : "");
    IrModel *m = tb_model(text);
    long ch;
    IrModel *o = tb_run(m, c->passes, &ch);
    T_CHECK(o && ch == c->changes, "%s: %ld changes, want %ld", c->what, ch, c->changes);
    size_t n = o ? tb_count(o, c->op) : 0;
    T_CHECK(o && n == c->left, "%s: %zu %s left, want %zu", c->what, n, c->op, c->left);
    ir_model_free(o);
    ir_model_free(m);
}

#define TC_RUN(cases)                                                                              \
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)                                    \
    tc_case(&cases[i])

/* ---- noop ------------------------------------------------------------ */

static const TcCase tc_dropout_cases[] = {
    {"dropout-13", "input x float 2,3\ny = Dropout x\n", "noop", 1, "Dropout", 0, true},
    {"dropout-13 ratio",
     "input x float 2,3\ninit r float - 0.3\n"
     "y = Dropout x,r\n",
     "noop", 1, "Dropout", 0, true},
    {"dropout-10 mask unread", "opset 10\ninput x float 2,3\ny,m = Dropout x\n", "noop", 1,
     "Dropout", 0, true},
    {"dropout mask read",
     "input x float 2,3\ny,m = Dropout x\nz = Relu y\n"
     "w = Cast m to=1\noutput z\noutput w\n",
     "noop", 0, "Dropout", 1, false},
    {"dropout mask is output",
     "input x float 2,3\ny,m = Dropout x\nz = Relu y\n"
     "output z\noutput m\n",
     "noop", 0, "Dropout", 1, false},
    {"dropout training on",
     "input x float 2,3\ninit r float - 0.0\n"
     "init t bool - 1\ny = Dropout x,r,t\n",
     "noop", 0, "Dropout", 1, true},
    {"dropout training off",
     "input x float 2,3\ninit r float - 0.5\n"
     "init t bool - 0\ny = Dropout x,r,t\n",
     "noop", 1, "Dropout", 0, true},
    {"dropout training input",
     "input x float 2,3\ninput t bool -\n"
     "init r float - 0.0\ny = Dropout x,r,t\n",
     "noop", 0, "Dropout", 1, true},
    {"dropout-6 is_test", "opset 6\ninput x float 2,3\ny = Dropout x is_test=1\n", "noop", 1,
     "Dropout", 0, true},
    {"dropout-6 training",
     "opset 6\ninput x float 2,3\n"
     "y = Dropout x ratio=0.0\n",
     "noop", 0, "Dropout", 1, true},
    {"dropout graph output", "input x float 2,3\ny = Dropout x\noutput y\n", "noop", 0, "Dropout",
     1, false},
};

static const TcCase tc_cast_cases[] = {
    {"cast same", "input x float 2,3\ny = Cast x to=1\n", "noop", 1, "Cast", 0, true},
    {"cast other", "input x float 2,3\ny = Cast x to=7\nz = Add y,y\noutput z\n", "noop", 0, "Cast",
     1, false},
    {"cast int same", "input x int32 4\ny = Cast x to=6\nz = Add y,y\noutput z\n", "noop", 1,
     "Cast", 0, false},
    {"castlike same",
     "opset 15\ninput x float 2,3\ninput l float 1\n"
     "y = CastLike x,l\n",
     "noop", 1, "CastLike", 0, true},
    {"castlike other",
     "opset 15\ninput x float 2,3\ninput l double 1\n"
     "y = CastLike x,l\n",
     "noop", 0, "CastLike", 1, true},
};

static const TcCase tc_reshape_cases[] = {
    {"reshape same",
     "input x float 2,3,4\ninit s int64 3 0,-1,4\n"
     "y = Reshape x,s\n",
     "noop", 1, "Reshape", 0, true},
    {"reshape literal",
     "input x float 2,3,4\ninit s int64 3 2,3,4\n"
     "y = Reshape x,s\n",
     "noop", 1, "Reshape", 0, true},
    {"reshape other",
     "input x float 2,3,4\ninit s int64 2 2,12\n"
     "y = Reshape x,s\n",
     "noop", 0, "Reshape", 1, true},
    {"reshape swapped",
     "input x float 2,3,4\ninit s int64 3 3,2,4\n"
     "y = Reshape x,s\n",
     "noop", 0, "Reshape", 1, true},
    {"reshape symbolic",
     "input x float n,3,4\ninit s int64 3 0,3,4\n"
     "y = Reshape x,s\n",
     "noop", 0, "Reshape", 1, true},
    {"reshape shape input",
     "input x float 2,3,4\ninput s int64 3\ninit s int64 3 2,3,4\n"
     "y = Reshape x,s\n",
     "noop", 0, "Reshape", 1, true},
    {"reshape of shape",
     "input x float 2,3,4\ns = Shape x\n"
     "y = Reshape x,s\n",
     "noop", 1, "Reshape", 0, true},
};

static const TcCase tc_shape_ops_cases[] = {
    {"expand same",
     "input x float 2,3\ninit s int64 2 1,3\n"
     "y = Expand x,s\n",
     "noop", 1, "Expand", 0, true},
    {"expand grows",
     "input x float 2,3\ninit s int64 3 2,2,3\n"
     "y = Expand x,s\n",
     "noop", 0, "Expand", 1, true},
    {"expand broadcasts",
     "input x float 1,3\ninit s int64 2 4,3\n"
     "y = Expand x,s\n",
     "noop", 0, "Expand", 1, true},
    {"pad zero",
     "input x float 2,3\ninit p int64 4 0\n"
     "y = Pad x,p mode=\"reflect\"\n",
     "noop", 1, "Pad", 0, true},
    {"pad one",
     "input x float 2,3\ninit p int64 4 0,1,0,0\n"
     "y = Pad x,p\n",
     "noop", 0, "Pad", 1, true},
    {"pad-2 zero", "opset 2\ninput x float 2,3\ny = Pad x pads=[0,0,0,0]\n", "noop", 1, "Pad", 0,
     true},
    {"pad-2 one", "opset 2\ninput x float 2,3\ny = Pad x pads=[0,0,1,0]\n", "noop", 0, "Pad", 1,
     true},
    {"transpose id", "input x float 2,3,4\ny = Transpose x perm=[0,1,2]\n", "noop", 1, "Transpose",
     0, true},
    {"transpose swap", "input x float 2,3,4\ny = Transpose x perm=[0,2,1]\n", "noop", 0,
     "Transpose", 1, true},
    {"transpose rank1", "input x float 5\ny = Transpose x\n", "noop", 1, "Transpose", 0, true},
    {"transpose reverse", "input x float 2,3\ny = Transpose x\n", "noop", 0, "Transpose", 1, true},
    {"concat one", "input x float 2,3\ny = Concat x axis=0\n", "noop", 1, "Concat", 0, true},
    {"concat two", "input x float 2,3\ny = Concat x,x axis=0\n", "noop", 0, "Concat", 1, true},
    {"split one", "input x float 2,3\ny = Split x axis=1\n", "noop", 1, "Split", 0, true},
    {"split sized", "input x float 2,3\ninit s int64 1 3\ny = Split x,s axis=1\n", "noop", 1,
     "Split", 0, true},
    {"split two", "input x float 2,4\ny,w = Split x axis=1\nz = Add y,w\noutput z\n", "noop", 0,
     "Split", 1, false},
};

static const TcCase tc_slice_cases[] = {
    {"slice all",
     "input x float 2,3\ninit s int64 2 0,-3\ninit e int64 2 9,100\n"
     "y = Slice x,s,e\n",
     "noop", 1, "Slice", 0, true},
    {"slice axis",
     "input x float 2,3\ninit s int64 1 0\ninit e int64 1 3\n"
     "init a int64 1 -1\ninit p int64 1 1\ny = Slice x,s,e,a,p\n",
     "noop", 1, "Slice", 0, true},
    {"slice start",
     "input x float 2,3\ninit s int64 1 1\ninit e int64 1 3\n"
     "init a int64 1 1\ny = Slice x,s,e,a\n",
     "noop", 0, "Slice", 1, true},
    {"slice end -1",
     "input x float 2,3\ninit s int64 1 0\ninit e int64 1 -1\n"
     "init a int64 1 1\ny = Slice x,s,e,a\n",
     "noop", 0, "Slice", 1, true},
    {"slice step",
     "input x float 2,3\ninit s int64 1 0\ninit e int64 1 3\n"
     "init a int64 1 1\ninit p int64 1 2\ny = Slice x,s,e,a,p\n",
     "noop", 0, "Slice", 1, true},
    {"slice-9 all",
     "opset 9\ninput x float 2,3\n"
     "y = Slice x starts=[0,0] ends=[2,3]\n",
     "noop", 1, "Slice", 0, true},
    {"slice-9 part",
     "opset 9\ninput x float 2,3\n"
     "y = Slice x starts=[0] ends=[2] axes=[1]\n",
     "noop", 0, "Slice", 1, true},
};

/* ---- dedup_init ------------------------------------------------------ */

#define TC_SAME                                                                                    \
    "input x float 2,3\ninit a float 2,3 1,2,3,4,5,6\n"                                            \
    "init b float 2,3 1,2,3,4,5,6\ny = Add x,a\nz = Mul y,b\noutput z\n"

static const TcCase tc_dedup_cases[] = {
    {"dedup same", TC_SAME, "dedup_init", 1, "Add", 1, false},
    {"dedup dims",
     "input x float 2,3\ninit a float 2,3 1,2,3,4,5,6\n"
     "init b float 3,2 1,2,3,4,5,6\ny = Add x,a\nz = MatMul y,b\noutput z\n",
     "dedup_init", 0, "MatMul", 1, false},
    {"dedup values",
     "input x float 2,3\ninit a float 2,3 1,2,3,4,5,6\n"
     "init b float 2,3 1,2,3,4,5,7\ny = Add x,a\nz = Mul y,b\noutput z\n",
     "dedup_init", 0, "Mul", 1, false},
    {"dedup zero sign",
     "input x float 2\ninit a float 2 0.0,1\n"
     "init b float 2 -0.0,1\ny = Add x,a\nz = Div y,b\noutput z\n",
     "dedup_init", 0, "Div", 1, false},
    {"dedup dtype",
     "input x int32 2\ninit a int32 2 1,2\ninit b int64 2 1,2\n"
     "y = Add x,a\nw = Cast y to=7\nz = Mul w,b\noutput z\n",
     "dedup_init", 0, "Mul", 1, false},
    {"dedup graph input",
     "input x float 2,3\ninput b float 2,3\n"
     "init a float 2,3 1\ninit b float 2,3 1\ny = Add x,a\nz = Mul y,b\noutput z\n",
     "dedup_init", 0, "Mul", 1, false},
    {"dedup three",
     "input x int64 2\ninit a int64 2 4,5\ninit b int64 2 4,5\n"
     "init c int64 2 4,5\ny = Add x,a\nw = Mul y,b\nz = Sub w,c\noutput z\n",
     "dedup_init", 2, "Sub", 1, false},
};

/* The first of the equal initializers stays, the other goes. */
static void tc_dedup_keeps_first(void)
{
    IrModel *m = tb_model(TC_SAME);
    long ch;
    IrModel *o = tb_run(m, "dedup_init,unused_init", &ch);
    T_CHECK(o && ch == 2 && o->graph->inits.n == 1, "dedup: %ld changes, %zu inits", ch,
            o ? o->graph->inits.n : 0);
    T_CHECK(o && !strcmp(((IrTensor *)o->graph->inits.p[0])->name, "a"), "dedup keeps a");
    ir_model_free(o);
    ir_model_free(m);
}

/* ---- cse ---------------------------------------------------------------- */

static const TcCase tc_cse_cases[] = {
    {"cse relu", "input x float 2,3\na = Relu x\nb = Relu x\nz = Add a,b\noutput z\n", "cse", 1,
     "Relu", 1, false},
    {"cse chain",
     "input x float 2,3\na = Relu x\nb = Relu x\nc = Exp a\nd = Exp b\n"
     "z = Add c,d\noutput z\n",
     "cse", 2, "Exp", 1, false},
    {"cse attrs order",
     "input x float 2,3\ninput w float 4,3\n"
     "a = Gemm x,w transB=1 alpha=0.5\nb = Gemm x,w alpha=0.5 transB=1\n"
     "z = Add a,b\noutput z\n",
     "cse", 1, "Gemm", 1, false},
    {"cse other attr",
     "input x float 2,3\na = LeakyRelu x alpha=0.1\n"
     "b = LeakyRelu x alpha=0.2\nz = Add a,b\noutput z\n",
     "cse", 0, "LeakyRelu", 2, false},
    {"cse attr absent",
     "input x float 2,3\na = Softmax x axis=-1\nb = Softmax x\n"
     "z = Add a,b\noutput z\n",
     "cse", 0, "Softmax", 2, false},
    {"cse input order",
     "input x float 2,3\ninput y float 2,3\na = Sub x,y\n"
     "b = Sub y,x\nz = Add a,b\noutput z\n",
     "cse", 0, "Sub", 2, false},
    {"cse random",
     "input x float 2,3\na = RandomUniformLike x seed=1.0\n"
     "b = RandomUniformLike x seed=1.0\nz = Add a,b\noutput z\n",
     "cse", 0, "RandomUniformLike", 2, false},
    {"cse output",
     "input x float 2,3\na = Relu x\nb = Relu x\nz = Add a,b\n"
     "output z\noutput b\n",
     "cse", 0, "Relu", 2, false},
    {"cse constants",
     "a = Constant value_floats=[1.0,2.0]\n"
     "b = Constant value_floats=[1.0,2.0]\nz = Add a,b\noutput z\n",
     "cse", 1, "Constant", 1, false},
    {"cse split",
     "input x float 2,4\na,b = Split x axis=1\nc,d = Split x axis=1\n"
     "e = Add a,d\nf = Add b,c\nz = Add e,f\noutput z\n",
     "cse", 1, "Split", 1, false},
    {"cse split slots",
     "input x float 2,4\na,b = Split x axis=1\nc,d = Split x axis=1\n"
     "e = Add a,d\nz = Add e,c\noutput z\n",
     "cse", 1, "Split", 1, false},
};

/* ---- value_info ------------------------------------------------------- */

static void tc_value_info(void)
{
    IrModel *m = tb_model("input x float 2,3\na = Identity x\nb = Relu a\noutput b\n");
    ir_graph_add_value_info(m->graph, ir_graph_find_local(m->graph, "a"),
                            ir_type_tensor(1, 0, NULL));
    ir_graph_add_value_info(m->graph, ir_graph_find_local(m->graph, "b"),
                            ir_type_tensor(1, 0, NULL));
    long ch;
    IrModel *o = tb_run(m, "value_info", &ch);
    T_CHECK(o && ch == 0 && o->graph->value_info.n == 2, "value_info alone: %ld", ch);
    ir_model_free(o);
    o = tb_run(m, "identity,value_info", &ch);
    T_CHECK(o && ch == 2 && o->graph->value_info.n == 1, "value_info after identity: %ld", ch);
    T_CHECK(o && !ir_graph_find_local(o->graph, "a"), "value a is gone");
    ir_model_free(o);
    ir_model_free(m);
}

/* The default pipeline runs all of them. */
static const TcCase tc_default_cases[] = {
    {"default",
     "input x float 2,3\ninit s int64 2 2,3\ninit a float 3 1\n"
     "init b float 3 1\nd = Dropout x\nr = Reshape d,s\nc = Cast r to=1\n"
     "e = Add c,a\nf = Add c,b\nz = Mul e,f\noutput z\n",
     NULL, 7, "Add", 1, false},
};

int main(void)
{
    TC_RUN(tc_dropout_cases);
    TC_RUN(tc_cast_cases);
    TC_RUN(tc_reshape_cases);
    TC_RUN(tc_shape_ops_cases);
    TC_RUN(tc_slice_cases);
    TC_RUN(tc_dedup_cases);
    tc_dedup_keeps_first();
    TC_RUN(tc_cse_cases);
    tc_value_info();
    TC_RUN(tc_default_cases);
    return t_done("test_pass_cleanup");
}
