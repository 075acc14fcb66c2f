/* test_pass_fuse_norm - the fusions into standard ops: fuse_layernorm,
 * fuse_gelu, fuse_rmsnorm. Each applies to every operand order and
 * grouping it claims, refuses what it must (opset too low, eps in the
 * wrong place, wrong constants, shared intermediates, wrong axes), and
 * tb_run checks the outputs before and after on random inputs. */
#include "passes_check.h"

static const char LN[] = "opset 17\n"
                         "input x float 2,5,8\n"
                         "init two float - 2\n"
                         "init eps float - 1e-5\n"
                         "init g float 8 rand\n"
                         "init b float 8 rand\n"
                         "m = ReduceMean x axes=[-1]\n"
                         "d = Sub x,m\n"
                         "p = Pow d,two\n"
                         "v = ReduceMean p axes=[-1]\n"
                         "ve = Add v,eps\n"
                         "s = Sqrt ve\n"
                         "n = Div d,s\n"
                         "y1 = Mul n,g\n"
                         "y = Add y1,b\n"
                         "output y\n";

static void test_layernorm_applies(void)
{
    const char *P = "fuse_layernorm";
    const char *ONE = "LayerNormalization=1 ReduceMean=0 Sqrt=0 Mul=0 Add=0";
    check("ln plain", edit(LN, NULL), P, 1, ONE);
    check("ln default pipeline", edit(LN, NULL), NULL, -1, ONE);
    check("ln Mul(d,d), reciprocal, swapped operands",
          edit(LN, "p = Pow d,two", "p = Mul d,d", "ve = Add v,eps", "ve = Add eps,v",
               "n = Div d,s", "r = Reciprocal s\nn = Mul r,d", "y1 = Mul n,g", "y1 = Mul g,n",
               "y = Add y1,b", "y = Add b,y1", NULL),
          P, 1, "LayerNormalization=1 ReduceMean=0 Reciprocal=0 Mul=0 Add=0");
    check("ln Constant nodes, 1-element eps, positive axes",
          edit(LN, "init two float - 2\n", "two = Constant value_float=2.0\n",
               "init eps float - 1e-5\n", "eps = Constant value_floats=[1e-5]\n",
               "m = ReduceMean x axes=[-1]", "m = ReduceMean x axes=[2]", NULL),
          P, 1, "LayerNormalization=1 ReduceMean=0 Constant=2");
    check("ln opset 18 axes input",
          edit(LN, "opset 17\n", "opset 18\ninit ax int64 1 -1\n",
               "m = ReduceMean x axes=[-1]", "m = ReduceMean x,ax",
               "v = ReduceMean p axes=[-1]", "v = ReduceMean p,ax", NULL),
          P, 1, ONE);
    check("ln last two axes, broadcast gamma, no beta",
          edit(LN, "init g float 8 rand", "init g float 1,8 rand",
               "m = ReduceMean x axes=[-1]", "m = ReduceMean x axes=[-1,-2]",
               "v = ReduceMean p axes=[-1]", "v = ReduceMean p axes=[1,2]",
               "y = Add y1,b", "y = Identity y1", NULL),
          P, 1, "LayerNormalization=1 ReduceMean=0 Mul=0 Identity=1");
    check("ln no gamma, the division is the output",
          edit(LN, "y1 = Mul n,g\ny = Add y1,b\noutput y\n", "output n\n", NULL), P, 1,
          "LayerNormalization=1 Div=0 ReduceMean=0");
    /* double stays: the fused statistics would be float */
    check("ln double",
          edit(LN, "input x float", "input x double", "init two float", "init two double",
               "init eps float", "init eps double", "init g float", "init g double",
               "init b float", "init b double", NULL),
          P, 0, "LayerNormalization=0");
    /* gamma spans a non-normalized axis: the norm fuses, the Mul stays. */
    check("ln gamma of another shape stays a Mul",
          edit(LN, "init g float 8 rand", "init g float 5,1 rand", NULL), P, 1,
          "LayerNormalization=1 ReduceMean=0 Mul=1 Add=1");
}

static void test_layernorm_refuses(void)
{
    const char *P = "fuse_layernorm", *NONE = "LayerNormalization=0 ReduceMean=2";
    check("ln opset 13", edit(LN, "opset 17", "opset 13", NULL), P, 0, NONE);
    check("ln eps after the Sqrt",
          edit(LN, "ve = Add v,eps\ns = Sqrt ve\n", "sv = Sqrt v\ns = Add sv,eps\n", NULL), P, 0,
          NONE);
    check("ln d read elsewhere", edit(LN, "output y\n", "output y\noutput d\n", NULL), P, 0,
          NONE);
    check("ln sqrt read elsewhere",
          edit(LN, "output y\n", "z = Neg s\noutput y\noutput z\n", NULL), P, 0, NONE);
    check("ln axes differ",
          edit(LN, "v = ReduceMean p axes=[-1]", "v = ReduceMean p axes=[1]", NULL), P, 0,
          NONE);
    check("ln axes not the last",
          edit(LN, "m = ReduceMean x axes=[-1]", "m = ReduceMean x axes=[1]",
               "v = ReduceMean p axes=[-1]", "v = ReduceMean p axes=[1]", NULL),
          P, 0, NONE);
    check("ln Pow 3", edit(LN, "init two float - 2", "init two float - 3", NULL), P, 0, NONE);
    check("ln Sub reversed", edit(LN, "d = Sub x,m", "d = Sub m,x", NULL), P, 0, NONE);
    check("ln symbolic normalized dim",
          edit(LN, "2,5,8", "2,5,n", "init g float 8", "init g float 1", "init b float 8",
               "init b float 1", NULL),
          P, 0, NONE);
    check("ln mean of another tensor",
          edit(LN, "input x float 2,5,8\n", "input x float 2,5,8\ninput x2 float 2,5,8\n",
               "m = ReduceMean x axes", "m = ReduceMean x2 axes", NULL),
          P, 0, NONE);
}

/* ---- fuse_gelu ------------------------------------------------------------ */

static const char GE[] = "opset 20\n"
                         "input x float 3,16\n"
                         "init s2 float - 1.4142135\n"
                         "init one float - 1\n"
                         "init half float - 0.5\n"
                         "a = Div x,s2\n"
                         "e = Erf a\n"
                         "p = Add e,one\n"
                         "q = Mul x,p\n"
                         "y = Mul q,half\n"
                         "output y\n";

/* PyTorch's tanh form: 0.5 * (x * (1 + tanh(beta * (x + kappa * x*x*x)))). */
static const char GT[] = "opset 20\n"
                         "input x float 3,16\n"
                         "init beta float - 0.7978845608\n"
                         "init kappa float - 0.044715\n"
                         "init one float - 1\n"
                         "init half float - 0.5\n"
                         "x2 = Mul x,x\n"
                         "x3 = Mul x,x2\n"
                         "k3 = Mul kappa,x3\n"
                         "w = Add x,k3\n"
                         "u = Mul beta,w\n"
                         "t = Tanh u\n"
                         "p = Add one,t\n"
                         "q = Mul x,p\n"
                         "y = Mul half,q\n"
                         "output y\n";

static void test_gelu(void)
{
    const char *P = "fuse_gelu", *ONE = "Gelu=1 Erf=0 Mul=0 Add=0 Div=0";
    const char *TONE = "Gelu=1 Tanh=0 Mul=0 Add=0 Pow=0";
    check("gelu (x*(1+erf))*0.5", edit(GE, NULL), P, 1, ONE);
    check("gelu default pipeline", edit(GE, NULL), NULL, -1, ONE);
    check("gelu (0.5*x)*(1+erf), Mul by 1/sqrt2",
          edit(GE, "a = Div x,s2", "a = Mul r2,x", "init s2 float - 1.4142135",
               "init r2 float - 0.70710678", "q = Mul x,p\ny = Mul q,half",
               "q = Mul half,x\ny = Mul p,q", "p = Add e,one", "p = Add one,e", NULL),
          P, 1, ONE);
    check("gelu x*(0.5*(1+erf)), Constant nodes",
          edit(GE, "init half float - 0.5", "half = Constant value_float=0.5",
               "init one float - 1", "one = Constant value_floats=[1.0]",
               "q = Mul x,p\ny = Mul q,half", "q = Mul p,half\ny = Mul x,q", NULL),
          P, 1, "Gelu=1 Erf=0 Mul=0 Constant=2");
    check("gelu (x*(1+erf))/2",
          edit(GE, "init half float - 0.5", "init half float - 2", "y = Mul q,half",
               "y = Div q,half", NULL),
          P, 1, ONE);
    check("gelu tanh, PyTorch's order", edit(GT, NULL), P, 1, TONE);
    check("gelu tanh, Pow(x,3), other order",
          edit(GT, "x2 = Mul x,x\nx3 = Mul x,x2\n", "init three float - 3\nx3 = Pow x,three\n",
               "k3 = Mul kappa,x3", "k3 = Mul x3,kappa", "w = Add x,k3", "w = Add k3,x",
               "u = Mul beta,w", "u = Mul w,beta", "q = Mul x,p\ny = Mul half,q",
               "q = Mul x,half\ny = Mul q,p", NULL),
          P, 1, TONE);
    check("gelu tanh, (x*x)*x, Sum", edit(GT, "x3 = Mul x,x2", "x3 = Mul x2,x", "p = Add one,t",
                                            "p = Sum one,t", "w = Add x,k3", "w = Sum x,k3", NULL),
          P, 1, "Gelu=1 Tanh=0 Mul=0 Sum=0");
    check("gelu double",
          edit(GE, "input x float", "input x double", "init s2 float", "init s2 double",
               "init one float", "init one double", "init half float", "init half double",
               NULL),
          P, 1, ONE);

    const char *NONE = "Gelu=0 Erf=1";
    check("gelu opset 19", edit(GE, "opset 20", "opset 19", NULL), P, 0, NONE);
    check("gelu 0.5001", edit(GE, "- 0.5\n", "- 0.5001\n", NULL), P, 0, NONE);
    check("gelu Div by 1.5", edit(GE, "- 1.4142135", "- 1.5", NULL), P, 0, NONE);
    check("gelu 1 + erf read elsewhere", edit(GE, "output y\n", "output y\noutput p\n", NULL),
          P, 0, NONE);
    check("gelu 2 + erf", edit(GE, "init one float - 1", "init one float - 2", NULL), P, 0,
          NONE);
    check("gelu erf of another input",
          edit(GE, "input x float 3,16\n", "input x float 3,16\ninput z float 3,16\n",
               "a = Div x,s2", "a = Div z,s2", NULL),
          P, 0, NONE);
    check("gelu 0.5 of rank 3 broadcasts",
          edit(GE, "init half float - 0.5", "init half float 1,1,1 0.5", NULL), P, 0, NONE);
    check("gelu tanh kappa 0.05", edit(GT, "- 0.044715", "- 0.05", NULL), P, 0,
          "Gelu=0 Tanh=1");
    check("gelu tanh x^3 read elsewhere", edit(GT, "output y\n", "output y\noutput x3\n", NULL),
          P, 0, "Gelu=0 Tanh=1");
}

/* ---- fuse_rmsnorm --------------------------------------------------------- */

static const char RMS[] = "opset 23\n"
                          "input x float 2,4,8\n"
                          "init two float - 2\n"
                          "init eps float - 1e-6\n"
                          "init w float 8 rand\n"
                          "init ax int64 1 -1\n"
                          "p = Pow x,two\n"
                          "m = ReduceMean p,ax\n"
                          "s = Add m,eps\n"
                          "r = Sqrt s\n"
                          "i = Reciprocal r\n"
                          "n = Mul x,i\n"
                          "y = Mul w,n\n"
                          "output y\n";

static void test_rmsnorm(void)
{
    const char *P = "fuse_rmsnorm", *ONE = "RMSNormalization=1 ReduceMean=0 Mul=0 Sqrt=0";
    check("rms reciprocal", edit(RMS, NULL), P, 1, ONE);
    check("rms default pipeline", edit(RMS, NULL), NULL, -1, ONE);
    check("rms Div(x, sqrt), Mul(x,x), eps first",
          edit(RMS, "p = Pow x,two", "p = Mul x,x", "s = Add m,eps", "s = Add eps,m",
               "i = Reciprocal r\nn = Mul x,i", "n = Div x,r", NULL),
          P, 1, "RMSNormalization=1 ReduceMean=0 Mul=0 Div=0");
    check("rms 1/sqrt by Div, no weight",
          edit(RMS, "init w float 8 rand\n", "init one float - 1\n", "i = Reciprocal r",
               "i = Div one,r", "n = Mul x,i\ny = Mul w,n\noutput y", "n = Mul i,x\noutput n",
               NULL),
          P, 1, "RMSNormalization=1 Div=0 Mul=0");
    check("rms Pow(s, -0.5), broadcast weight, last two axes",
          edit(RMS, "r = Sqrt s\ni = Reciprocal r", "init mh float - -0.5\ni = Pow s,mh",
               "init w float 8 rand", "init w float 1,8 rand", "init ax int64 1 -1",
               "init ax int64 2 -2,-1", NULL),
          P, 1, "RMSNormalization=1 Pow=0 Mul=0");
    check("rms double",
          edit(RMS, "input x float", "input x double", "init two float", "init two double",
               "init eps float", "init eps double", "init w float", "init w double", NULL),
          P, 1, ONE);

    const char *NONE = "RMSNormalization=0 ReduceMean=1";
    check("rms opset 22", edit(RMS, "opset 23", "opset 22", NULL), P, 0, NONE);
    check("rms eps after the Sqrt",
          edit(RMS, "s = Add m,eps\nr = Sqrt s", "q = Sqrt m\nr = Add q,eps", NULL), P, 0,
          NONE);
    check("rms Pow -0.4",
          edit(RMS, "r = Sqrt s\ni = Reciprocal r", "init mh float - -0.4\ni = Pow s,mh", NULL),
          P, 0, NONE);
    check("rms mean square read elsewhere",
          edit(RMS, "output y\n", "output y\noutput m\n", NULL), P, 0, NONE);
    check("rms axis not the last", edit(RMS, "init ax int64 1 -1", "init ax int64 1 1", NULL),
          P, 0, NONE);
    check("rms square of another tensor",
          edit(RMS, "input x float 2,4,8\n", "input x float 2,4,8\ninput z float 2,4,8\n",
               "p = Pow x,two", "p = Pow z,two", NULL),
          P, 0, NONE);
}

int main(void)
{
    test_layernorm_applies();
    test_layernorm_refuses();
    test_gelu();
    test_rmsnorm();
    return t_done("test_pass_fuse_norm");
}
