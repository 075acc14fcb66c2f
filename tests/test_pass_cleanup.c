/* test_pass_cleanup - the cleanup passes: noop, dedup_init, cse and
 * value_info. Each case builds a small model, runs one pass (or a short
 * list), checks the change count and the op counts, and tb_run checks the
 * outputs before and after on random inputs. */
#include "passes_build.h"

/* Runs `passes` on the model `text`; checks the changes made and how many
 * nodes of `op` are left in the main graph. */
static void tc_case(const char *what, const char *text, const char *passes, long changes,
                    const char *op, size_t left)
{
    IrModel *m = tb_model(text);
    long ch;
    IrModel *o = tb_run(m, passes, &ch);
    T_CHECK(o && ch == changes, "%s: %ld changes, want %ld", what, ch, changes);
    size_t n = o ? tb_count(o, op) : 0;
    T_CHECK(o && n == left, "%s: %zu %s left, want %zu", what, n, op, left);
    ir_model_free(o);
    ir_model_free(m);
}

/* ---- noop ------------------------------------------------------------ */

static void tc_dropout(void)
{
    tc_case("dropout-13", "input x float 2,3\ny = Dropout x\nz = Relu y\noutput z\n", "noop",
            1, "Dropout", 0);
    tc_case("dropout-13 ratio", "input x float 2,3\ninit r float - 0.3\n"
            "y = Dropout x,r\nz = Relu y\noutput z\n", "noop", 1, "Dropout", 0);
    tc_case("dropout-10 mask unread", "opset 10\ninput x float 2,3\ny,m = Dropout x\n"
            "z = Relu y\noutput z\n", "noop", 1, "Dropout", 0);
    tc_case("dropout mask read", "input x float 2,3\ny,m = Dropout x\nz = Relu y\n"
            "w = Cast m to=1\noutput z\noutput w\n", "noop", 0, "Dropout", 1);
    tc_case("dropout mask is output", "input x float 2,3\ny,m = Dropout x\nz = Relu y\n"
            "output z\noutput m\n", "noop", 0, "Dropout", 1);
    tc_case("dropout training on", "input x float 2,3\ninit r float - 0.0\n"
            "init t bool - 1\ny = Dropout x,r,t\nz = Relu y\noutput z\n", "noop", 0,
            "Dropout", 1);
    tc_case("dropout training off", "input x float 2,3\ninit r float - 0.5\n"
            "init t bool - 0\ny = Dropout x,r,t\nz = Relu y\noutput z\n", "noop", 1,
            "Dropout", 0);
    tc_case("dropout training input", "input x float 2,3\ninput t bool -\n"
            "init r float - 0.0\ny = Dropout x,r,t\nz = Relu y\noutput z\n", "noop", 0,
            "Dropout", 1);
    tc_case("dropout-6 is_test", "opset 6\ninput x float 2,3\ny = Dropout x is_test=1\n"
            "z = Relu y\noutput z\n", "noop", 1, "Dropout", 0);
    tc_case("dropout-6 training", "opset 6\ninput x float 2,3\n"
            "y = Dropout x ratio=0.0\nz = Relu y\noutput z\n", "noop", 0, "Dropout", 1);
    tc_case("dropout graph output", "input x float 2,3\ny = Dropout x\noutput y\n", "noop", 0,
            "Dropout", 1);
}

static void tc_cast(void)
{
    tc_case("cast same", "input x float 2,3\ny = Cast x to=1\nz = Relu y\noutput z\n", "noop",
            1, "Cast", 0);
    tc_case("cast other", "input x float 2,3\ny = Cast x to=7\nz = Add y,y\noutput z\n",
            "noop", 0, "Cast", 1);
    tc_case("cast int same", "input x int32 4\ny = Cast x to=6\nz = Add y,y\noutput z\n",
            "noop", 1, "Cast", 0);
    tc_case("castlike same", "opset 15\ninput x float 2,3\ninput l float 1\n"
            "y = CastLike x,l\nz = Relu y\noutput z\n", "noop", 1, "CastLike", 0);
    tc_case("castlike other", "opset 15\ninput x float 2,3\ninput l double 1\n"
            "y = CastLike x,l\nz = Relu y\noutput z\n", "noop", 0, "CastLike", 1);
}

static void tc_reshape(void)
{
    tc_case("reshape same", "input x float 2,3,4\ninit s int64 3 0,-1,4\n"
            "y = Reshape x,s\nz = Relu y\noutput z\n", "noop", 1, "Reshape", 0);
    tc_case("reshape literal", "input x float 2,3,4\ninit s int64 3 2,3,4\n"
            "y = Reshape x,s\nz = Relu y\noutput z\n", "noop", 1, "Reshape", 0);
    tc_case("reshape other", "input x float 2,3,4\ninit s int64 2 2,12\n"
            "y = Reshape x,s\nz = Relu y\noutput z\n", "noop", 0, "Reshape", 1);
    tc_case("reshape swapped", "input x float 2,3,4\ninit s int64 3 3,2,4\n"
            "y = Reshape x,s\nz = Relu y\noutput z\n", "noop", 0, "Reshape", 1);
    tc_case("reshape symbolic", "input x float n,3,4\ninit s int64 3 0,3,4\n"
            "y = Reshape x,s\nz = Relu y\noutput z\n", "noop", 0, "Reshape", 1);
    tc_case("reshape shape input", "input x float 2,3,4\ninput s int64 3\ninit s int64 3 2,3,4\n"
            "y = Reshape x,s\nz = Relu y\noutput z\n", "noop", 0, "Reshape", 1);
    tc_case("reshape of shape", "input x float 2,3,4\ns = Shape x\n"
            "y = Reshape x,s\nz = Relu y\noutput z\n", "noop", 1, "Reshape", 0);
}

static void tc_shape_ops(void)
{
    tc_case("expand same", "input x float 2,3\ninit s int64 2 1,3\n"
            "y = Expand x,s\nz = Relu y\noutput z\n", "noop", 1, "Expand", 0);
    tc_case("expand grows", "input x float 2,3\ninit s int64 3 2,2,3\n"
            "y = Expand x,s\nz = Relu y\noutput z\n", "noop", 0, "Expand", 1);
    tc_case("expand broadcasts", "input x float 1,3\ninit s int64 2 4,3\n"
            "y = Expand x,s\nz = Relu y\noutput z\n", "noop", 0, "Expand", 1);
    tc_case("pad zero", "input x float 2,3\ninit p int64 4 0\n"
            "y = Pad x,p mode=\"reflect\"\nz = Relu y\noutput z\n", "noop", 1, "Pad", 0);
    tc_case("pad one", "input x float 2,3\ninit p int64 4 0,1,0,0\n"
            "y = Pad x,p\nz = Relu y\noutput z\n", "noop", 0, "Pad", 1);
    tc_case("pad-2 zero", "opset 2\ninput x float 2,3\ny = Pad x pads=[0,0,0,0]\n"
            "z = Relu y\noutput z\n", "noop", 1, "Pad", 0);
    tc_case("pad-2 one", "opset 2\ninput x float 2,3\ny = Pad x pads=[0,0,1,0]\n"
            "z = Relu y\noutput z\n", "noop", 0, "Pad", 1);
    tc_case("transpose id", "input x float 2,3,4\ny = Transpose x perm=[0,1,2]\n"
            "z = Relu y\noutput z\n", "noop", 1, "Transpose", 0);
    tc_case("transpose swap", "input x float 2,3,4\ny = Transpose x perm=[0,2,1]\n"
            "z = Relu y\noutput z\n", "noop", 0, "Transpose", 1);
    tc_case("transpose rank1", "input x float 5\ny = Transpose x\nz = Relu y\noutput z\n",
            "noop", 1, "Transpose", 0);
    tc_case("transpose reverse", "input x float 2,3\ny = Transpose x\nz = Relu y\noutput z\n",
            "noop", 0, "Transpose", 1);
    tc_case("concat one", "input x float 2,3\ny = Concat x axis=0\nz = Relu y\noutput z\n",
            "noop", 1, "Concat", 0);
    tc_case("concat two", "input x float 2,3\ny = Concat x,x axis=0\nz = Relu y\noutput z\n",
            "noop", 0, "Concat", 1);
    tc_case("split one", "input x float 2,3\ny = Split x axis=1\nz = Relu y\noutput z\n",
            "noop", 1, "Split", 0);
    tc_case("split sized", "input x float 2,3\ninit s int64 1 3\ny = Split x,s axis=1\n"
            "z = Relu y\noutput z\n", "noop", 1, "Split", 0);
    tc_case("split two", "input x float 2,4\ny,w = Split x axis=1\nz = Add y,w\noutput z\n",
            "noop", 0, "Split", 1);
}

static void tc_slice(void)
{
    tc_case("slice all", "input x float 2,3\ninit s int64 2 0,-3\ninit e int64 2 9,100\n"
            "y = Slice x,s,e\nz = Relu y\noutput z\n", "noop", 1, "Slice", 0);
    tc_case("slice axis", "input x float 2,3\ninit s int64 1 0\ninit e int64 1 3\n"
            "init a int64 1 -1\ninit p int64 1 1\ny = Slice x,s,e,a,p\nz = Relu y\noutput z\n",
            "noop", 1, "Slice", 0);
    tc_case("slice start", "input x float 2,3\ninit s int64 1 1\ninit e int64 1 3\n"
            "init a int64 1 1\ny = Slice x,s,e,a\nz = Relu y\noutput z\n", "noop", 0, "Slice",
            1);
    tc_case("slice end -1", "input x float 2,3\ninit s int64 1 0\ninit e int64 1 -1\n"
            "init a int64 1 1\ny = Slice x,s,e,a\nz = Relu y\noutput z\n", "noop", 0, "Slice",
            1);
    tc_case("slice step", "input x float 2,3\ninit s int64 1 0\ninit e int64 1 3\n"
            "init a int64 1 1\ninit p int64 1 2\ny = Slice x,s,e,a,p\nz = Relu y\noutput z\n",
            "noop", 0, "Slice", 1);
    tc_case("slice-9 all", "opset 9\ninput x float 2,3\n"
            "y = Slice x starts=[0,0] ends=[2,3]\nz = Relu y\noutput z\n", "noop", 1, "Slice",
            0);
    tc_case("slice-9 part", "opset 9\ninput x float 2,3\n"
            "y = Slice x starts=[0] ends=[2] axes=[1]\nz = Relu y\noutput z\n", "noop", 0,
            "Slice", 1);
}

/* ---- dedup_init ------------------------------------------------------ */

static void tc_dedup(void)
{
    const char *same = "input x float 2,3\ninit a float 2,3 1,2,3,4,5,6\n"
                       "init b float 2,3 1,2,3,4,5,6\ny = Add x,a\nz = Mul y,b\noutput z\n";
    tc_case("dedup same", same, "dedup_init", 1, "Add", 1);
    IrModel *m = tb_model(same);
    long ch;
    IrModel *o = tb_run(m, "dedup_init,unused_init", &ch);
    T_CHECK(o && ch == 2 && o->graph->inits.n == 1, "dedup: %ld changes, %zu inits", ch,
            o ? o->graph->inits.n : 0);
    T_CHECK(o && !strcmp(((IrTensor *)o->graph->inits.p[0])->name, "a"), "dedup keeps a");
    ir_model_free(o);
    ir_model_free(m);
    tc_case("dedup dims", "input x float 2,3\ninit a float 2,3 1,2,3,4,5,6\n"
            "init b float 3,2 1,2,3,4,5,6\ny = Add x,a\nz = MatMul y,b\noutput z\n",
            "dedup_init", 0, "MatMul", 1);
    tc_case("dedup values", "input x float 2,3\ninit a float 2,3 1,2,3,4,5,6\n"
            "init b float 2,3 1,2,3,4,5,7\ny = Add x,a\nz = Mul y,b\noutput z\n", "dedup_init",
            0, "Mul", 1);
    tc_case("dedup zero sign", "input x float 2\ninit a float 2 0.0,1\n"
            "init b float 2 -0.0,1\ny = Add x,a\nz = Div y,b\noutput z\n", "dedup_init", 0,
            "Div", 1);
    tc_case("dedup dtype", "input x int32 2\ninit a int32 2 1,2\ninit b int64 2 1,2\n"
            "y = Add x,a\nw = Cast y to=7\nz = Mul w,b\noutput z\n", "dedup_init", 0, "Mul", 1);
    tc_case("dedup graph input", "input x float 2,3\ninput b float 2,3\n"
            "init a float 2,3 1\ninit b float 2,3 1\ny = Add x,a\nz = Mul y,b\noutput z\n",
            "dedup_init", 0, "Mul", 1);
    tc_case("dedup three", "input x int64 2\ninit a int64 2 4,5\ninit b int64 2 4,5\n"
            "init c int64 2 4,5\ny = Add x,a\nw = Mul y,b\nz = Sub w,c\noutput z\n",
            "dedup_init", 2, "Sub", 1);
}

/* ---- cse ---------------------------------------------------------------- */

static void tc_cse(void)
{
    tc_case("cse relu", "input x float 2,3\na = Relu x\nb = Relu x\nz = Add a,b\noutput z\n",
            "cse", 1, "Relu", 1);
    tc_case("cse chain", "input x float 2,3\na = Relu x\nb = Relu x\nc = Exp a\nd = Exp b\n"
            "z = Add c,d\noutput z\n", "cse", 2, "Exp", 1);
    tc_case("cse attrs order", "input x float 2,3\ninput w float 4,3\n"
            "a = Gemm x,w transB=1 alpha=0.5\nb = Gemm x,w alpha=0.5 transB=1\n"
            "z = Add a,b\noutput z\n", "cse", 1, "Gemm", 1);
    tc_case("cse other attr", "input x float 2,3\na = LeakyRelu x alpha=0.1\n"
            "b = LeakyRelu x alpha=0.2\nz = Add a,b\noutput z\n", "cse", 0, "LeakyRelu", 2);
    tc_case("cse attr absent", "input x float 2,3\na = Softmax x axis=-1\nb = Softmax x\n"
            "z = Add a,b\noutput z\n", "cse", 0, "Softmax", 2);
    tc_case("cse input order", "input x float 2,3\ninput y float 2,3\na = Sub x,y\n"
            "b = Sub y,x\nz = Add a,b\noutput z\n", "cse", 0, "Sub", 2);
    tc_case("cse random", "input x float 2,3\na = RandomUniformLike x seed=1.0\n"
            "b = RandomUniformLike x seed=1.0\nz = Add a,b\noutput z\n", "cse", 0,
            "RandomUniformLike", 2);
    tc_case("cse output", "input x float 2,3\na = Relu x\nb = Relu x\nz = Add a,b\n"
            "output z\noutput b\n", "cse", 0, "Relu", 2);
    tc_case("cse constants", "a = Constant value_floats=[1.0,2.0]\n"
            "b = Constant value_floats=[1.0,2.0]\nz = Add a,b\noutput z\n", "cse", 1,
            "Constant", 1);
    tc_case("cse split", "input x float 2,4\na,b = Split x axis=1\nc,d = Split x axis=1\n"
            "e = Add a,d\nf = Add b,c\nz = Add e,f\noutput z\n", "cse", 1, "Split", 1);
    tc_case("cse split slots", "input x float 2,4\na,b = Split x axis=1\nc,d = Split x axis=1\n"
            "e = Add a,d\nz = Add e,c\noutput z\n", "cse", 1, "Split", 1);
}

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

/* The default pipeline with all of them. */
static void tc_default(void)
{
    tc_case("default", "input x float 2,3\ninit s int64 2 2,3\ninit a float 3 1\n"
            "init b float 3 1\nd = Dropout x\nr = Reshape d,s\nc = Cast r to=1\n"
            "e = Add c,a\nf = Add c,b\nz = Mul e,f\noutput z\n", NULL, 7, "Add", 1);
}

int main(void)
{
    tc_dropout();
    tc_cast();
    tc_reshape();
    tc_shape_ops();
    tc_slice();
    tc_dedup();
    tc_cse();
    tc_value_info();
    tc_default();
    return t_done("test_pass_cleanup");
}
