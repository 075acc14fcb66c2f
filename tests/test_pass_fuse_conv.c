/* test_pass_fuse_conv - the fusions into Conv and friends: fuse_bn,
 * fuse_conv_add, fuse_conv_mul and fuse_pad apply where they are exact
 * (outputs checked by tb_run on random inputs) and leave alone the models
 * where they are not. */
#include "eval/eval.h"
#include "passes_build.h"

/* Runs `passes` on the model `text`; checks the change count and that the
 * result has `n_a` nodes of op a and `n_b` of op b. */
static void fc_case(const char *what, const char *text, const char *passes, long want,
                    const char *a, size_t n_a, const char *b, size_t n_b)
{
    IrModel *m = tb_model(text);
    long ch;
    IrModel *o = tb_run(m, passes, &ch);
    T_CHECK(o && ch == want, "%s: %ld changes, want %ld", what, ch, want);
    T_CHECK(o && tb_count(o, a) == n_a, "%s: %zu %s, want %zu", what, o ? tb_count(o, a) : 0,
            a, n_a);
    T_CHECK(o && tb_count(o, b) == n_b, "%s: %zu %s, want %zu", what, o ? tb_count(o, b) : 0,
            b, n_b);
    ir_model_free(o);
    ir_model_free(m);
}

/* The BN parameters (C = 4) every BN case uses. */
#define BN_PARAMS "init s float 4 rand\ninit bb float 4 rand\ninit mu float 4 rand\n" \
                  "init var float 4 pos\n"
/* The Conv input and weight of the Add/Mul/Pad cases. */
#define CONV_HEAD "input x float 2,3,8,8\ninit W float 4,3,3,3 rand\n"

/* Every case: what, model, passes, changes wanted, then two op counts. */
typedef struct FcCase {
    const char *what, *text, *passes;
    long want;
    const char *a;
    size_t n_a;
    const char *b;
    size_t n_b;
} FcCase;

static const FcCase fc_cases[] = {
    /* fuse_bn applies */
    {"bn conv", "opset 13\ninput x float 2,3,8,8\ninit W float 4,3,3,3 rand\n"
     "init b float 4 rand\n" BN_PARAMS
     "y = Conv x,W,b pads=[1,1,1,1]\nz = BatchNormalization y,s,bb,mu,var epsilon=0.01\n"
     "output z\n", "fuse_bn", 1, "Conv", 1, "BatchNormalization", 0},
    {"bn conv group, no bias, opset 15", "opset 15\ninput x float 1,4,6,6\n"
     "init W float 4,2,3,3 rand\n" BN_PARAMS
     "y = Conv x,W group=2 strides=[2,2]\n"
     "z = BatchNormalization y,s,bb,mu,var training_mode=0\nw = Relu z\noutput w\n",
     "fuse_bn", 1, "Conv", 1, "BatchNormalization", 0},
    {"bn conv1d double, opset 7", "opset 7\ninput x double 2,3,9\n"
     "init W double 4,3,2 rand\ninit s double 4 rand\ninit bb double 4 rand\n"
     "init mu double 4 rand\ninit var double 4 pos\n"
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 1, "Conv", 1, "BatchNormalization", 0},
    {"bn convtranspose group 2", "opset 13\ninput x float 1,6,5,5\n"
     "init W float 6,2,3,3 rand\ninit b float 4 rand\n" BN_PARAMS
     "y = ConvTranspose x,W,b group=2 strides=[2,2]\n"
     "z = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 1, "ConvTranspose", 1, "BatchNormalization", 0},
    {"bn convtranspose group 1", "opset 13\ninput x float 1,3,5,5\n"
     "init W float 3,4,2,2 rand\n" BN_PARAMS
     "y = ConvTranspose x,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 1, "ConvTranspose", 1, "BatchNormalization", 0},
    {"bn gemm transB, C [N], beta", "opset 13\ninput a float 3,5\n"
     "init W float 4,5 rand\ninit c float 4 rand\n" BN_PARAMS
     "y = Gemm a,W,c transB=1 beta=0.5 alpha=2.0\n"
     "z = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 1, "Gemm", 1, "BatchNormalization", 0},
    {"bn gemm no C", "opset 13\ninput a float 3,5\ninit W float 5,4 rand\n" BN_PARAMS
     "y = Gemm a,W beta=3.0\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 1, "Gemm", 1, "BatchNormalization", 0},
    {"bn gemm C [M,1], transA", "opset 9\ninput a float 5,3\ninit W float 5,4 rand\n"
     "init c float 3,1 rand\n" BN_PARAMS
     "y = Gemm a,W,c transA=1\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 1, "Gemm", 1, "BatchNormalization", 0},
    {"bn matmul 2-D", "opset 13\ninput a float 3,5\ninit W float 5,4 rand\n" BN_PARAMS
     "y = MatMul a,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 1, "Gemm", 1, "MatMul", 0},
    {"bn old is_test", "opset 6\ninput x float 2,3,8,8\ninit W float 4,3,3,3 rand\n"
     BN_PARAMS "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var is_test=1\n"
     "output z\n", "fuse_bn", 1, "Conv", 1, "BatchNormalization", 0},
    /* fuse_bn must not */
    {"bn: conv output read twice", "opset 13\ninput x float 2,3,8,8\n"
     "init W float 4,3,3,3 rand\n" BN_PARAMS
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\nr = Relu y\noutput z\n"
     "output r\n", "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: conv output a graph output", "opset 13\ninput x float 2,3,8,8\n"
     "init W float 4,3,3,3 rand\n" BN_PARAMS
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\noutput y\n",
     "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: training_mode", "opset 15\ninput x float 2,3,8,8\n"
     "init W float 4,3,3,3 rand\n" BN_PARAMS
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var training_mode=1\noutput z\n",
     "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: statistics outputs (opset 9)", "opset 9\ninput x float 2,3,8,8\n"
     "init W float 4,3,3,3 rand\n" BN_PARAMS
     "y = Conv x,W\nz,m1,v1 = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: is_test=0 (opset 6)", "opset 6\ninput x float 2,3,8,8\n"
     "init W float 4,3,3,3 rand\n" BN_PARAMS
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: spatial=0 (opset 7)", "opset 7\ninput x float 2,3,8,8\n"
     "init W float 4,3,3,3 rand\ninit s float 4,6,6 rand\ninit bb float 4,6,6 rand\n"
     "init mu float 4,6,6 rand\ninit var float 4,6,6 pos\n"
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var spatial=0\noutput z\n",
     "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: scale not constant", "opset 13\ninput x float 2,3,8,8\ninput s float 4\n"
     "init W float 4,3,3,3 rand\ninit bb float 4 rand\ninit mu float 4 rand\n"
     "init var float 4 pos\n"
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: weight not constant", "opset 13\ninput x float 2,3,8,8\n"
     "input W float 4,3,3,3\n" BN_PARAMS
     "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 0, "Conv", 1, "BatchNormalization", 1},
    {"bn: matmul 3-D (BN axis is not the last)", "opset 13\ninput a float 2,4,5\n"
     "init W float 5,4 rand\n" BN_PARAMS
     "y = MatMul a,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 0, "MatMul", 1, "BatchNormalization", 1},
    {"bn: after Relu", "opset 13\ninput x float 2,4,5,5\n" BN_PARAMS
     "y = Relu x\nz = BatchNormalization y,s,bb,mu,var\noutput z\n",
     "fuse_bn", 0, "Relu", 1, "BatchNormalization", 1},
    /* fuse_conv_add / fuse_conv_mul apply */
    {"add [C,1,1], bias", "opset 13\n" CONV_HEAD "init b float 4 rand\n"
     "init k float 4,1,1 rand\ny = Conv x,W,b pads=[1,1,1,1]\nz = Add y,k\noutput z\n",
     "fuse_conv_add", 1, "Conv", 1, "Add", 0},
    {"add [1,C,1,1] first, no bias", "opset 13\n" CONV_HEAD "init k float 1,4,1,1 rand\n"
     "y = Conv x,W\nz = Add k,y\noutput z\n", "fuse_conv_add", 1, "Conv", 1, "Add", 0},
    {"add scalar", "opset 13\n" CONV_HEAD "init k float - 0.25\n"
     "y = Conv x,W\nz = Add y,k\nr = Relu z\noutput r\n", "fuse_conv_add", 1, "Conv", 1, "Add", 0},
    {"add legacy broadcast axis=1", "opset 6\n" CONV_HEAD "init k float 4 rand\n"
     "y = Conv x,W\nz = Add y,k broadcast=1 axis=1\noutput z\n", "fuse_conv_add", 1, "Conv", 1,
     "Add", 0},
    {"mul [C,1,1], bias", "opset 13\n" CONV_HEAD "init b float 4 rand\n"
     "init k float 4,1,1 rand\ny = Conv x,W,b\nz = Mul y,k\noutput z\n", "fuse_conv_mul", 1,
     "Conv", 1, "Mul", 0},
    {"mul scalar first, no bias, group", "opset 13\ninput x float 1,4,6,6\n"
     "init W float 4,2,3,3 rand\ninit k float 1 -1.5\ny = Conv x,W group=2\n"
     "z = Mul k,y\noutput z\n", "fuse_conv_mul", 1, "Conv", 1, "Mul", 0},
    {"add then mul, default pipeline", "opset 13\n" CONV_HEAD "init k float 4,1,1 rand\n"
     "init q float 4,1,1 rand\ny = Conv x,W\nz = Add y,k\nu = Mul z,q\noutput u\n",
     NULL, 6, "Conv", 1, "Mul", 0},
    /* ... must not */
    {"add [1,C,H,W]", "opset 13\n" CONV_HEAD "init k float 1,4,6,6 rand\n"
     "y = Conv x,W\nz = Add y,k\noutput z\n", "fuse_conv_add", 0, "Conv", 1, "Add", 1},
    {"add [C] (last axis)", "opset 13\ninput x float 2,3,8,8\ninit W float 6,3,3,3 rand\n"
     "init k float 6 rand\ny = Conv x,W\nz = Add y,k\noutput z\n", "fuse_conv_add", 0, "Conv", 1,
     "Add", 1},
    {"add [2,C,1,1] (grows the batch)", "opset 13\ninput x float 1,3,8,8\n"
     "init W float 4,3,3,3 rand\ninit k float 2,4,1,1 rand\n"
     "y = Conv x,W\nz = Add y,k\noutput z\n", "fuse_conv_add", 0, "Conv", 1, "Add", 1},
    {"add [1,1,C,1,1] (grows the rank)", "opset 13\n" CONV_HEAD
     "init k float 1,1,4,1,1 rand\ny = Conv x,W\nz = Add y,k\noutput z\n", "fuse_conv_add", 0,
     "Conv", 1, "Add", 1},
    {"add legacy broadcast at the last axis", "opset 6\n" CONV_HEAD "init k float 6 rand\n"
     "y = Conv x,W\nz = Add y,k broadcast=1\noutput z\n", "fuse_conv_add", 0, "Conv", 1, "Add", 1},
    {"add conv output read twice", "opset 13\n" CONV_HEAD "init k float 4,1,1 rand\n"
     "y = Conv x,W\nz = Add y,k\nr = Relu y\noutput z\noutput r\n", "fuse_conv_add", 0, "Conv", 1,
     "Add", 1},
    {"add conv output a graph output", "opset 13\n" CONV_HEAD "init k float 4,1,1 rand\n"
     "y = Conv x,W\nz = Add y,k\noutput z\noutput y\n", "fuse_conv_add", 0, "Conv", 1, "Add", 1},
    {"add not constant", "opset 13\n" CONV_HEAD "input k float 4,1,1\n"
     "y = Conv x,W\nz = Add y,k\noutput z\n", "fuse_conv_add", 0, "Conv", 1, "Add", 1},
    {"add weight not constant", "opset 13\ninput x float 2,3,8,8\ninput W float 4,3,3,3\n"
     "init k float 4,1,1 rand\ny = Conv x,W\nz = Add y,k\noutput z\n", "fuse_conv_add", 0, "Conv", 1,
     "Add", 1},
    {"mul [1,C,H,W]", "opset 13\n" CONV_HEAD "init k float 1,4,6,6 rand\n"
     "y = Conv x,W\nz = Mul y,k\noutput z\n", "fuse_conv_mul", 0, "Conv", 1, "Mul", 1},
    {"mul not constant", "opset 13\n" CONV_HEAD "input k float 4,1,1\n"
     "y = Conv x,W\nz = Mul y,k\noutput z\n", "fuse_conv_mul", 0, "Conv", 1, "Mul", 1},
    /* fuse_pad applies */
    {"pad attr (opset 10) into conv with pads", "opset 10\n" CONV_HEAD
     "p = Pad x pads=[0,0,1,2,0,0,3,0]\ny = Conv p,W pads=[1,0,0,1]\noutput y\n", "fuse_pad", 1,
     "Conv", 1, "Pad", 0},
    {"pad input (opset 13), value 0", "opset 13\n" CONV_HEAD
     "init pp int64 8 0,0,1,1,0,0,1,1\ninit v float - 0\n"
     "p = Pad x,pp,v mode=\"constant\"\ny = Conv p,W strides=[2,2]\noutput y\n", "fuse_pad", 1,
     "Conv", 1, "Pad", 0},
    {"pad axes (opset 18)", "opset 18\n" CONV_HEAD
     "init pp int64 4 2,0,1,2\ninit ax int64 2 -1,2\n"
     "p = Pad x,pp,,ax\ny = Conv p,W dilations=[2,1]\noutput y\n", "fuse_pad", 1,
     "Conv", 1, "Pad", 0},
    {"pad into avgpool count_include_pad=1", "opset 13\n" CONV_HEAD
     "init pp int64 8 0,0,1,0,0,0,0,1\n"
     "p = Pad x,pp\ny = AveragePool p kernel_shape=[3,3] count_include_pad=1 "
     "pads=[1,1,1,1]\noutput y\n", "fuse_pad", 1, "AveragePool", 1, "Pad", 0},
    {"pad into avgpool without pads", "opset 13\n" CONV_HEAD
     "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = AveragePool p kernel_shape=[3,3] strides=[2,2]\noutput y\n", "fuse_pad",
     1, "AveragePool", 1, "Pad", 0},
    /* fuse_pad must not */
    {"pad nonzero value", "opset 13\n" CONV_HEAD
     "init pp int64 8 0,0,1,1,0,0,1,1\ninit v float - 0.5\n"
     "p = Pad x,pp,v\ny = Conv p,W\noutput y\n", "fuse_pad", 0, "Conv", 1, "Pad", 1},
    {"pad nonzero value attr", "opset 10\n" CONV_HEAD
     "p = Pad x pads=[0,0,1,1,0,0,1,1] value=1.0\ny = Conv p,W\noutput y\n", "fuse_pad", 0,
     "Conv", 1, "Pad", 1},
    {"pad on the channel axis", "opset 13\n" CONV_HEAD "init W2 float 4,4,3,3 rand\n"
     "init pp int64 8 0,1,1,1,0,0,1,1\np = Pad x,pp\ny = Conv p,W2\noutput y\n", "fuse_pad", 0,
     "Conv", 1, "Pad", 1},
    {"pad reflect", "opset 13\n" CONV_HEAD "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp mode=\"reflect\"\ny = Conv p,W\noutput y\n", "fuse_pad", 0, "Conv", 1, "Pad",
     1},
    {"pad negative (crop)", "opset 13\n" CONV_HEAD "init pp int64 8 0,0,-1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = Conv p,W\noutput y\n", "fuse_pad", 0, "Conv", 1, "Pad", 1},
    {"pad not constant", "opset 13\n" CONV_HEAD "input pp int64 8\n"
     "p = Pad x,pp\ny = Conv p,W\noutput y\n", "fuse_pad", 0, "Conv", 1, "Pad", 1},
    {"pad conv auto_pad", "opset 13\n" CONV_HEAD "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = Conv p,W auto_pad=\"SAME_UPPER\"\noutput y\n", "fuse_pad", 0, "Conv",
     1, "Pad", 1},
    {"pad read twice", "opset 13\n" CONV_HEAD "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = Conv p,W\nr = Relu p\noutput y\noutput r\n", "fuse_pad", 0, "Conv", 1,
     "Pad", 1},
    {"pad a graph output", "opset 13\n" CONV_HEAD "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = Conv p,W\noutput y\noutput p\n", "fuse_pad", 0, "Conv", 1, "Pad", 1},
    {"pad into avgpool count_include_pad=0 with pads", "opset 13\n" CONV_HEAD
     "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = AveragePool p kernel_shape=[3,3] pads=[1,1,1,1]\noutput y\n", "fuse_pad",
     0, "AveragePool", 1, "Pad", 1},
    {"pad into avgpool ceil_mode", "opset 13\n" CONV_HEAD
     "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = AveragePool p kernel_shape=[3,3] strides=[2,2] ceil_mode=1 "
     "count_include_pad=1\noutput y\n", "fuse_pad", 0, "AveragePool", 1, "Pad", 1},
    {"pad into maxpool", "opset 13\n" CONV_HEAD "init pp int64 8 0,0,1,1,0,0,1,1\n"
     "p = Pad x,pp\ny = MaxPool p kernel_shape=[3,3]\noutput y\n", "fuse_pad", 0, "MaxPool", 1,
     "Pad", 1},
};

/* The default pipeline runs fuse_bn and drops the old weights. */
static void test_bn_pipeline(void)
{
    IrModel *m = tb_model("opset 13\ninput x float 2,3,8,8\ninit W float 4,3,3,3 rand\n"
                          BN_PARAMS "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\n"
                          "output z\n");
    long ch;
    IrModel *o = tb_run(m, NULL, &ch);
    T_CHECK(o && ch >= 1 && tb_count(o, "BatchNormalization") == 0 &&
            o->graph->inits.n == 2, "bn default pipeline: %ld changes, %zu inits", ch,
            o ? o->graph->inits.n : 0);
    ir_model_free(o);
    ir_model_free(m);
}

/* A tensor of random values in [lo, lo + 1). */
static EvValue *fc_rand(int32_t dtype, size_t rank, const int64_t *dims, double lo)
{
    IrError e;
    EvValue *t = ev_tensor_new(dtype, rank, dims, &e);
    for (size_t i = 0; i < t->numel; i++)
        ev_set_f(t, i, lo + tb_rand());
    return t;
}

/* A Constant node in g giving `name` a tensor of random values. */
static void fc_sub_const(IrGraph *g, const char *name, size_t rank, const int64_t *dims,
                         double lo)
{
    IrError e;
    EvValue *t = fc_rand(IR_FLOAT, rank, dims, lo);
    const char *out[1] = {name};
    IrNode *k = ir_node_new(g, NULL, "Constant", NULL, name, 0, NULL, 1, out, &e);
    ir_node_set_attr(k, ir_attr_tensor("value", ev_to_ir_tensor(t, NULL)));
    ev_unref(t);
}

/* A branch computing Conv(x) (+ BN when bn) from Constant nodes. */
static IrGraph *fc_branch(IrGraph *parent, const char *tag, bool bn)
{
    IrError e;
    IrGraph *g = ir_graph_new(parent);
    g->name = mem_strdup(tag);
    int64_t wd[4] = {4, 3, 3, 3}, c4 = 4;
    char nm[6][32];
    const char *roles[6] = {"W", "s", "bb", "mu", "var", "y"};
    for (size_t i = 0; i < 6; i++)
        snprintf(nm[i], sizeof nm[i], "%s_%s", tag, roles[i]);
    fc_sub_const(g, nm[0], 4, wd, -0.5);
    const char *in[5] = {"x", nm[0]}, *out[1] = {nm[5]};
    IrNode *conv = ir_node_new(g, NULL, "Conv", NULL, NULL, 2, in, 1, out, &e);
    if (bn) {
        for (size_t i = 1; i < 5; i++)
            fc_sub_const(g, nm[i], 1, &c4, i == 4 ? 0.5 : -0.5);
        char z[40];
        snprintf(z, sizeof z, "%s_z", tag);
        const char *bin[5] = {nm[5], nm[1], nm[2], nm[3], nm[4]}, *bout[1] = {z};
        IrNode *k = ir_node_new(g, NULL, "BatchNormalization", NULL, NULL, 5, bin, 1, bout, &e);
        ir_graph_add_output(g, k->out[0], NULL);
    } else {
        ir_graph_add_output(g, conv->out[0], NULL);
    }
    return g;
}

static size_t fc_count_in(const IrGraph *g, const char *op)
{
    size_t n = 0;
    for (const IrNode *k = g->first; k; k = k->next)
        n += strcmp(k->op_type, op) == 0;
    return n;
}

/* fuse_bn inside an If branch: the new weights are the branch's own
 * initializers (IR 8: a subgraph may hold them), and the default pipeline
 * makes the branch's Constant nodes initializers too. */
static void test_bn_subgraph(void)
{
    IrError e;
    IrModel *m = tb_model("opset 13\ninput x float 1,3,5,5\ninput c bool -\n");
    const char *in[1] = {"c"}, *out[1] = {"out"};
    IrNode *iff = ir_node_new(m->graph, NULL, "If", NULL, "if", 1, in, 1, out, &e);
    ir_node_set_attr(iff, ir_attr_graph("then_branch", fc_branch(m->graph, "t", true)));
    ir_node_set_attr(iff, ir_attr_graph("else_branch", fc_branch(m->graph, "e", false)));
    ir_graph_add_output(m->graph, iff->out[0], NULL);
    long ch;
    IrModel *o = tb_run(m, "fuse_bn", &ch);
    IrGraph *th = o ? ir_node_attr(o->graph->first, "then_branch")->g : NULL;
    T_CHECK(o && ch == 1 && o->graph->inits.n == 0, "bn subgraph: %ld changes", ch);
    T_CHECK(th && fc_count_in(th, "BatchNormalization") == 0 && fc_count_in(th, "Conv") == 1 &&
            fc_count_in(th, "Constant") == 5 && th->inits.n == 2,
            "bn subgraph: branch not folded into initializers");
    ir_model_free(o);
    o = tb_run(m, NULL, &ch);
    th = o ? ir_node_attr(o->graph->first, "then_branch")->g : NULL;
    T_CHECK(th && th->n_nodes == 1 && th->inits.n == 2, "bn subgraph default: %zu nodes",
            th ? th->n_nodes : 0);
    ir_model_free(o);
    ir_model_free(m);
}

/* Conv + BN in float16 (the builder writes float and double only) is
 * left alone: folded half-precision weights miss the verifier's tolerance
 * (see fuse_util.h). */
static void test_bn_float16(void)
{
    IrModel *m = tb_model("opset 13\ninput x float16 1,3,6,6\n"
                          "y = Conv x,W\nz = BatchNormalization y,s,bb,mu,var\noutput z\n");
    int64_t wd[4] = {4, 3, 3, 3}, c4 = 4;
    const char *nm[5] = {"W", "s", "bb", "mu", "var"};
    for (size_t i = 0; i < 5; i++) {
        EvValue *t = fc_rand(IR_FLOAT16, i ? 1 : 4, i ? &c4 : wd, i == 4 ? 0.5 : -0.5);
        ir_graph_add_init(m->graph, ev_to_ir_tensor(t, nm[i]));
        ev_unref(t);
    }
    long ch;
    IrModel *o = tb_run(m, "fuse_bn", &ch);
    T_CHECK(o && ch == 0 && tb_count(o, "BatchNormalization") == 1, "bn float16: %ld", ch);
    ir_model_free(o);
    ir_model_free(m);
}

int main(void)
{
    for (size_t i = 0; i < sizeof fc_cases / sizeof fc_cases[0]; i++) {
        const FcCase *k = &fc_cases[i];
        fc_case(k->what, k->text, k->passes, k->want, k->a, k->n_a, k->b, k->n_b);
    }
    test_bn_pipeline();
    test_bn_float16();
    test_bn_subgraph();
    return t_done("test_pass_fuse_conv");
}
