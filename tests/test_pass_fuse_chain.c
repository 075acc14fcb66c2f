/* test_pass_fuse_chain - the chain fusions (fuse_transpose, fuse_gemm,
 * fuse_reshape, fuse_cast, fuse_concat): each applies where it is exact
 * and leaves alone what it must not touch; tb_run checks outputs. */
#include "passes_build.h"

/* Runs `passes` over the model `text`; checks the change count (-1: any
 * positive) and the count of op `op` afterwards (-1: not checked). */
static IrModel *fc_case(const char *what, const char *text, const char *passes, long want_ch,
                        const char *op, long want_n)
{
    IrModel *m = tb_model(text);
    long ch;
    IrModel *o = tb_run(m, passes, &ch);
    ir_model_free(m);
    if (!o) {
        T_CHECK(0, "%s: no result", what);
        return NULL;
    }
    T_CHECK(want_ch < 0 ? ch > 0 : ch == want_ch, "%s: %ld changes, want %ld", what, ch,
            want_ch);
    if (op && want_n >= 0)
        T_CHECK((long)tb_count(o, op) == want_n, "%s: %zu %s nodes, want %ld", what,
                tb_count(o, op), op, want_n);
    return o;
}

/* fc_case that frees the result. */
static void fc_check(const char *what, const char *text, const char *passes, long want_ch,
                     const char *op, long want_n)
{
    ir_model_free(fc_case(what, text, passes, want_ch, op, want_n));
}

/* The INT attribute `name` of the first `op` node of m, or -99. */
static int64_t fc_attr(const IrModel *m, const char *op, const char *name)
{
    for (const IrNode *k = m->graph->first; k; k = k->next)
        if (!strcmp(k->op_type, op)) {
            const IrAttr *a = ir_node_attr(k, name);
            return a && a->has_i ? a->i : -99;
        }
    return -99;
}

static void test_transpose(void)
{
    const char *P = "fuse_transpose";
    fc_check("tr merge",
             "input x float 2,3,4\n"
             "t = Transpose x perm=[1,0,2]\n"
             "y = Transpose t perm=[0,2,1]\n"
             "output y\n", P, 1, "Transpose", 1);
    fc_check("tr cancel",
             "input x float 2,3,4\n"
             "t = Transpose x perm=[1,2,0]\n"
             "y = Transpose t perm=[2,0,1]\n"
             "z = Relu y\n"
             "output z\n", P, 1, "Transpose", 0);
    fc_check("tr cancel default perms",
             "input x float 2,3,4\n"
             "t = Transpose x\n"
             "y = Transpose t\n"
             "z = Relu y\n"
             "output z\n", P, 1, "Transpose", 0);
    fc_check("tr cancel into graph output keeps one",
             "input x float 2,3,4\n"
             "t = Transpose x perm=[1,0,2]\n"
             "y = Transpose t perm=[1,0,2]\n"
             "output y\n", P, 1, "Transpose", 1);
    fc_check("tr three in a row",
             "input x float 2,3,4\n"
             "t = Transpose x perm=[1,0,2]\n"
             "u = Transpose t perm=[0,2,1]\n"
             "y = Transpose u perm=[2,1,0]\n"
             "output y\n", P, 2, "Transpose", 1);
    fc_check("tr middle read elsewhere",
             "input x float 2,3,4\n"
             "t = Transpose x perm=[1,0,2]\n"
             "y = Transpose t perm=[0,2,1]\n"
             "w = Relu t\n"
             "output y\noutput w\n", P, 0, "Transpose", 2);
    fc_check("tr middle is a graph output",
             "input x float 2,3,4\n"
             "t = Transpose x perm=[1,0,2]\n"
             "y = Transpose t perm=[0,2,1]\n"
             "output y\noutput t\n", P, 0, "Transpose", 2);
}

static void test_gemm(void)
{
    const char *P = "fuse_gemm";
    fc_check("gemm matmul+add",
             "input a float 4,3\n"
             "init B float 3,5 rand\n"
             "init C float 5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\n", P, 1, "Gemm", 1);
    IrModel *o = fc_case("gemm add operands swapped, C column",
                         "input a float 4,3\n"
                         "input b float 3,5\n"
                         "init C float 4,1 rand\n"
                         "y = MatMul a,b\n"
                         "z = Add C,y\n"
                         "output z\n", P, 1, "MatMul", 0);
    T_CHECK(o && tb_count(o, "Add") == 0 && tb_count(o, "Gemm") == 1, "gemm swapped: ops");
    ir_model_free(o);
    fc_check("gemm double, scalar C",
             "input a double 4,3\n"
             "init B double 3,5 rand\n"
             "init C double - 0.5\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\n", P, 1, "Gemm", 1);
    fc_check("gemm int32 at opset 13",
             "input a int32 4,3\n"
             "init B int32 3,5 7\n"
             "init C int32 1,5 -3\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\n", P, 1, "Gemm", 1);
    fc_check("gemm opset 6, exact C",
             "opset 6\n"
             "input a float 4,3\n"
             "init B float 3,5 rand\n"
             "init C float 4,5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\n", P, 1, "Gemm", 1);
    fc_check("gemm opset 6, broadcast C refused",
             "opset 6\n"
             "input a float 4,3\n"
             "init B float 3,5 rand\n"
             "init C float 5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C broadcast=1\n"
             "output z\n", P, 0, "Gemm", 0);
    fc_check("gemm 3-D A refused",
             "input a float 2,4,3\n"
             "init B float 3,5 rand\n"
             "init C float 5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\n", P, 0, "Gemm", 0);
    fc_check("gemm C growing the result refused",
             "input a float 4,3\n"
             "init B float 3,5 rand\n"
             "init C float 2,4,5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\n", P, 0, "Gemm", 0);
    fc_check("gemm C widening a size-1 dim refused",
             "input a float 1,3\n"
             "init B float 3,5 rand\n"
             "init C float 4,5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\n", P, 0, "Gemm", 0);
    fc_check("gemm matmul output read elsewhere",
             "input a float 4,3\n"
             "init B float 3,5 rand\n"
             "init C float 5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "w = Relu y\n"
             "output z\noutput w\n", P, 0, "Gemm", 0);
    fc_check("gemm matmul output is a graph output",
             "input a float 4,3\n"
             "init B float 3,5 rand\n"
             "init C float 5 rand\n"
             "y = MatMul a,B\n"
             "z = Add y,C\n"
             "output z\noutput y\n", P, 0, "Gemm", 0);
    o = fc_case("gemm transposes into trans flags",
                "input x float 3,4\n"
                "input b float 5,3\n"
                "init C float 5 rand\n"
                "t = Transpose x perm=[1,0]\n"
                "u = Transpose b\n"
                "y = MatMul t,u\n"
                "z = Add y,C\n"
                "output z\n", P, 3, "Transpose", 0);
    T_CHECK(o && fc_attr(o, "Gemm", "transA") == 1 && fc_attr(o, "Gemm", "transB") == 1,
            "gemm trans flags set");
    ir_model_free(o);
    o = fc_case("gemm transpose into transB=1 clears it",
                "input a float 4,3\n"
                "input x float 3,5\n"
                "t = Transpose x perm=[1,0]\n"
                "z = Gemm a,t transB=1\n"
                "output z\n", P, 1, "Transpose", 0);
    T_CHECK(o && fc_attr(o, "Gemm", "transB") == 0, "gemm transB cleared");
    ir_model_free(o);
    fc_check("gemm transpose read elsewhere",
             "input x float 3,4\n"
             "input b float 3,5\n"
             "t = Transpose x perm=[1,0]\n"
             "z = Gemm t,b\n"
             "w = Relu t\n"
             "output z\noutput w\n", P, 0, "Transpose", 1);
}

static void test_reshape(void)
{
    const char *P = "fuse_reshape";
    fc_check("reshape of reshape",
             "input x float 2,3,4\n"
             "init s1 int64 2 6,4\n"
             "init s2 int64 2 -1,12\n"
             "m = Reshape x,s1\n"
             "y = Reshape m,s2\n"
             "output y\n", P, 1, "Reshape", 1);
    fc_check("reshape 0 resolved from the static middle",
             "input x float 2,3,4\n"
             "init s1 int64 2 6,4\n"
             "init s2 int64 3 0,2,2\n"
             "m = Reshape x,s1\n"
             "y = Reshape m,s2\n"
             "output y\n", P, 1, "Reshape", 1);
    fc_check("reshape 0 with an unknown middle dim refused",
             "input x float n,4,6\n"
             "init s1 int64 2 0,-1\n"
             "init s2 int64 3 0,4,6\n"
             "m = Reshape x,s1\n"
             "y = Reshape m,s2\n"
             "output y\n", P, 0, "Reshape", 2);
    fc_check("reshape allowzero=1 keeps a literal 0",
             "opset 14\n"
             "input x float 2,0,4\n"
             "init s1 int64 2 0,4\n"
             "init s2 int64 3 4,0,2\n"
             "m = Reshape x,s1 allowzero=1\n"
             "y = Reshape m,s2 allowzero=1\n"
             "output y\n", P, 1, "Reshape", 1);
    fc_check("flatten then reshape",
             "input x float 2,3,4\n"
             "init s int64 2 4,6\n"
             "m = Flatten x axis=2\n"
             "y = Reshape m,s\n"
             "output y\n", P, 1, "Flatten", 0);
    fc_check("unsqueeze then reshape",
             "input x float 2,3,4\n"
             "init a int64 1 0\n"
             "init s int64 2 -1,4\n"
             "m = Unsqueeze x,a\n"
             "y = Reshape m,s\n"
             "output y\n", P, 1, "Unsqueeze", 0);
    fc_check("reshape middle is a graph output",
             "input x float 2,3,4\n"
             "init s1 int64 2 6,4\n"
             "init s2 int64 2 -1,12\n"
             "m = Reshape x,s1\n"
             "y = Reshape m,s2\n"
             "output y\noutput m\n", P, 0, "Reshape", 2);
    fc_check("reshape middle read elsewhere",
             "input x float 2,3,4\n"
             "init s1 int64 2 6,4\n"
             "init s2 int64 2 -1,12\n"
             "m = Reshape x,s1\n"
             "y = Reshape m,s2\n"
             "w = Relu m\n"
             "output y\noutput w\n", P, 0, "Reshape", 2);
    fc_check("squeeze then unsqueeze cancel (opset 13)",
             "input x float 2,1,3\n"
             "init a int64 1 1\n"
             "init b int64 1 -2\n"
             "s = Squeeze x,a\n"
             "u = Unsqueeze s,b\n"
             "z = Relu u\n"
             "output z\n", P, 1, "Unsqueeze", 0);
    fc_check("unsqueeze then squeeze cancel (opset 11)",
             "opset 11\n"
             "input x float 2,3\n"
             "u = Unsqueeze x axes=[0,-1]\n"
             "s = Squeeze u axes=[3,0]\n"
             "z = Relu s\n"
             "output z\n", P, 1, "Squeeze", 0);
    fc_check("squeeze then unsqueeze, other axes",
             "opset 11\n"
             "input x float 2,1,3,1\n"
             "s = Squeeze x axes=[1]\n"
             "u = Unsqueeze s axes=[2]\n"
             "z = Relu u\n"
             "output z\n", P, 0, "Squeeze", 1);
    fc_check("squeeze then unsqueeze into a graph output",
             "opset 11\n"
             "input x float 2,1,3\n"
             "s = Squeeze x axes=[1]\n"
             "u = Unsqueeze s axes=[1]\n"
             "output u\n", P, 0, "Squeeze", 1);
    fc_check("unsqueeze of unsqueeze (opset 11)",
             "opset 11\n"
             "input x float 2,3\n"
             "m = Unsqueeze x axes=[0]\n"
             "y = Unsqueeze m axes=[2,-1]\n"
             "output y\n", P, 1, "Unsqueeze", 1);
    IrModel *o = fc_case("unsqueeze of unsqueeze (opset 13)",
                         "input x float 2,3\n"
                         "init a int64 2 -1,1\n"
                         "init b int64 1 1\n"
                         "m = Unsqueeze x,a\n"
                         "y = Unsqueeze m,b\n"
                         "output y\n", P, 1, "Unsqueeze", 1);
    T_CHECK(o && o->graph->outputs.n == 1, "unsqueeze2: one output");
    ir_model_free(o);
}

static void test_cast(void)
{
    const char *P = "fuse_cast";
    fc_check("cast float -> double -> float16",
             "input x float 3,4\n"
             "t = Cast x to=11\n"
             "y = Cast t to=10\n"
             "output y\n", P, 1, "Cast", 1);
    fc_check("cast int32 -> int64 -> float",
             "input x int32 3,4\n"
             "t = Cast x to=7\n"
             "y = Cast t to=1\n"
             "output y\n", P, 1, "Cast", 1);
    fc_check("cast float -> double -> float is x",
             "input x float 3,4\n"
             "t = Cast x to=11\n"
             "y = Cast t to=1\n"
             "z = Relu y\n"
             "output z\n", P, 1, "Cast", 0);
    fc_check("cast bool -> int32 -> float",
             "input x bool 3,4\n"
             "t = Cast x to=6\n"
             "y = Cast t to=1\n"
             "output y\n", P, 1, "Cast", 1);
    fc_check("cast through float16 refused",
             "input x float 3,4\n"
             "t = Cast x to=10\n"
             "y = Cast t to=1\n"
             "output y\n", P, 0, "Cast", 2);
    fc_check("cast through int32 refused",
             "input x float 3,4\n"
             "t = Cast x to=6\n"
             "y = Cast t to=1\n"
             "output y\n", P, 0, "Cast", 2);
    fc_check("cast int32 through float refused",
             "input x int32 3,4\n"
             "t = Cast x to=1\n"
             "y = Cast t to=11\n"
             "output y\n", P, 0, "Cast", 2);
    fc_check("cast int8 through uint8 refused",
             "input x int8 3,4\n"
             "t = Cast x to=2\n"
             "y = Cast t to=6\n"
             "output y\n", P, 0, "Cast", 2);
    fc_check("cast middle read elsewhere",
             "input x float 3,4\n"
             "t = Cast x to=11\n"
             "y = Cast t to=10\n"
             "w = Neg t\n"
             "output y\noutput w\n", P, 0, "Cast", 2);
}

static void test_concat(void)
{
    const char *P = "fuse_concat";
    fc_check("concat inline",
             "input a float 2,3\ninput b float 2,4\ninput c float 2,1\ninput d float 2,2\n"
             "m = Concat b,c axis=1\n"
             "y = Concat a,m,d axis=-1\n"
             "output y\n", P, 1, "Concat", 1);
    fc_check("concat nested twice",
             "input a float 2,3\ninput b float 2,4\ninput c float 2,1\n"
             "m = Concat b,c axis=1\n"
             "n = Concat m,a axis=1\n"
             "y = Concat a,n axis=1\n"
             "output y\n", P, 2, "Concat", 1);
    fc_check("concat on another axis",
             "input a float 2,3\ninput b float 2,3\ninput c float 4,3\n"
             "m = Concat a,b axis=0\n"
             "y = Concat m,c axis=1\n"
             "output y\n", P, 0, "Concat", 2);
    fc_check("concat inner read elsewhere",
             "input a float 2,3\ninput b float 2,4\n"
             "m = Concat a,b axis=1\n"
             "y = Concat m,a axis=1\n"
             "w = Relu m\n"
             "output y\noutput w\n", P, 0, "Concat", 2);
    fc_check("concat inner read twice",
             "input a float 2,3\ninput b float 2,4\n"
             "m = Concat a,b axis=1\n"
             "y = Concat m,m axis=1\n"
             "output y\n", P, 0, "Concat", 2);
}

static void test_slice(void)
{
    const char *P = "fuse_slice";
    fc_check("slice of slice",
             "input x float 4,5,6\n"
             "init s1 int64 1 1\ninit e1 int64 1 3\ninit a1 int64 1 0\n"
             "init s2 int32 2 -4,2\ninit e2 int32 2 100,-1\ninit a2 int32 2 -1,1\n"
             "init st int32 2 1\n"
             "m = Slice x,s1,e1,a1\n"
             "y = Slice m,s2,e2,a2,st\n"
             "output y\n", P, 1, "Slice", 1);
    fc_check("slice of slice, default axes",
             "input x float 4,5\n"
             "init s1 int64 1 1\ninit e1 int64 1 3\n"
             "init s2 int64 1 2\ninit e2 int64 1 9\ninit a2 int64 1 1\n"
             "m = Slice x,s1,e1\n"
             "y = Slice m,s2,e2,a2\n"
             "output y\n", P, 1, "Slice", 1);
    fc_check("slice of slice on the same axis",
             "input x float 4,5,6\n"
             "init s1 int64 1 1\ninit e1 int64 1 4\ninit a1 int64 1 1\n"
             "init s2 int64 1 1\ninit e2 int64 1 2\ninit a2 int64 1 -2\n"
             "m = Slice x,s1,e1,a1\n"
             "y = Slice m,s2,e2,a2\n"
             "output y\n", P, 0, "Slice", 2);
    fc_check("slice with step 2",
             "input x float 4,5,6\n"
             "init s1 int64 1 0\ninit e1 int64 1 4\ninit a1 int64 1 0\ninit t1 int64 1 2\n"
             "init s2 int64 1 1\ninit e2 int64 1 3\ninit a2 int64 1 1\n"
             "m = Slice x,s1,e1,a1,t1\n"
             "y = Slice m,s2,e2,a2\n"
             "output y\n", P, 0, "Slice", 2);
    fc_check("slice middle read elsewhere",
             "input x float 4,5\n"
             "init s1 int64 1 1\ninit e1 int64 1 3\ninit a1 int64 1 0\n"
             "init s2 int64 1 2\ninit e2 int64 1 9\ninit a2 int64 1 1\n"
             "m = Slice x,s1,e1,a1\n"
             "y = Slice m,s2,e2,a2\n"
             "output y\noutput m\n", P, 0, "Slice", 2);
    fc_check("slice with runtime starts",
             "input x float 4,5\ninput s1 int64 1\n"
             "init e1 int64 1 3\ninit a1 int64 1 0\n"
             "init s2 int64 1 2\ninit e2 int64 1 9\ninit a2 int64 1 1\n"
             "m = Slice x,s1,e1,a1\n"
             "y = Slice m,s2,e2,a2\n"
             "output y\n", P, 0, "Slice", 2);
}

int main(void)
{
    test_transpose();
    test_gemm();
    test_reshape();
    test_cast();
    test_concat();
    test_slice();
    return t_done("test_pass_fuse_chain");
}
