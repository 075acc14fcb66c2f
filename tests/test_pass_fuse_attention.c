/* test_pass_fuse_attention - fuse_attention: the scaled dot-product
 * attention chains exporters write on 4-D operands become Attention
 * (opset >= 23) with the chain's total scale; what is not exactly
 * Attention-23 (3-D inputs, other axes, broadcasting batch dims, masks that
 * grow the scores, the mask added before the scaling, shared
 * intermediates) stays. tb_run compares outputs before and after on
 * random inputs. */
#include <math.h>

#include "passes_check.h"

static const char AT[] = "opset 23\n"
                         "input q float 2,3,4,8\n"
                         "input k float 2,3,5,8\n"
                         "input v float 2,3,5,6\n"
                         "init c float - 0.35355\n"
                         "kt = Transpose k perm=[0,1,3,2]\n"
                         "s = MatMul q,kt\n"
                         "ss = Mul s,c\n"
                         "p = Softmax ss axis=-1\n"
                         "y = MatMul p,v\n"
                         "output y\n";

static const char *const P = "fuse_attention";
static const char *const ONE = "Attention=1 MatMul=0 Softmax=0 Transpose=0 Mul=0 Div=0 Add=0";

/* The fused node's scale attribute, or NaN. */
static double fused_scale(const char *text)
{
    IrModel *m = tb_model(text);
    long ch;
    IrModel *o = tb_run(m, P, &ch);
    double s = NAN;
    for (const IrNode *k = o ? o->graph->first : NULL; k; k = k->next) {
        const IrAttr *a = strcmp(k->op_type, "Attention") == 0 ? ir_node_attr(k, "scale") : NULL;
        if (a && a->has_f)
            s = a->f;
    }
    ir_model_free(o);
    ir_model_free(m);
    return s;
}

static void test_scales(void)
{
    check("at Mul after the product", edit(AT, NULL), P, 1, ONE);
    check("at default pipeline", edit(AT, NULL), NULL, -1, ONE);
    check("at Div after the product, Softmax axis 3",
          edit(AT, "init c float - 0.35355", "init c float - 2.828",
               "ss = Mul s,c", "ss = Div s,c", "axis=-1", "axis=3", NULL),
          P, 1, ONE);
    check("at constant first, Constant node, Softmax axis left out",
          edit(AT, "init c float - 0.35355\n", "c = Constant value_float=0.35355\n",
               "ss = Mul s,c", "ss = Mul c,s", " axis=-1", "", NULL),
          P, 1, "Attention=1 MatMul=0 Softmax=0 Mul=0 Constant=1");
    check("at Q pre-scaled", edit(AT, "s = MatMul q,kt\nss = Mul s,c\np = Softmax ss",
                                  "qs = Mul q,c\ns = MatMul qs,kt\np = Softmax s", NULL),
          P, 1, ONE);
    check("at Q divided", edit(AT, "init c float - 0.35355", "init c float - 2.828",
                               "s = MatMul q,kt\nss = Mul s,c\np = Softmax ss",
                               "qs = Div q,c\ns = MatMul qs,kt\np = Softmax s", NULL),
          P, 1, ONE);
    check("at both sides by sqrt(scale)",
          edit(AT, "init c float - 0.35355", "init c float - 0.5946",
               "s = MatMul q,kt\nss = Mul s,c\np = Softmax ss",
               "qs = Mul q,c\nks = Mul kt,c\ns = MatMul qs,ks\np = Softmax s", NULL),
          P, 1, ONE);
    check("at K scaled before the Transpose, no other scale",
          edit(AT, "kt = Transpose k", "kk = Mul c,k\nkt = Transpose kk",
               "ss = Mul s,c\np = Softmax ss", "p = Softmax s", NULL),
          P, 1, ONE);
    check("at no scale at all", edit(AT, "ss = Mul s,c\np = Softmax ss", "p = Softmax s", NULL),
          P, 1, ONE);
    double s = fused_scale(AT);
    T_CHECK(fabs(s - 0.35355) < 1e-6, "at scale %g, expected 0.35355", s);
    char *t = edit(AT, "init c float - 0.35355", "init c float - 0.5",
                   "s = MatMul q,kt\nss = Mul s,c\np = Softmax ss",
                   "qs = Mul q,c\nks = Mul kt,c\ns = MatMul qs,ks\nss = Div s,c\np = Softmax ss",
                   NULL);
    s = fused_scale(t);
    T_CHECK(fabs(s - 0.5) < 1e-7, "at both sides and a Div: scale %g, expected 0.5", s);
    free(t);
}

static void test_masks_types(void)
{
    const char *M = "Attention=1 MatMul=0 Softmax=0 Add=0";
    check("at constant mask [B,1,Sq,Skv]",
          edit(AT, "input v float 2,3,5,6\n", "input v float 2,3,5,6\ninit m float 2,1,4,5 rand\n",
               "p = Softmax ss", "a = Add ss,m\np = Softmax a", NULL),
          P, 1, M);
    check("at mask first, [Sq,1]",
          edit(AT, "input v float 2,3,5,6\n", "input v float 2,3,5,6\ninit m float 4,1 rand\n",
               "p = Softmax ss", "a = Add m,ss\np = Softmax a", NULL),
          P, 1, M);
    /* a mask computed at run time may hold a row of -inf: NaN in the
     * chain, 0 in Attention */
    check("at runtime mask stays",
          edit(AT, "input v float 2,3,5,6\n", "input v float 2,3,5,6\ninput m float 2,1,4,5\n",
               "p = Softmax ss", "a = Add ss,m\np = Softmax a", NULL),
          P, 0, "Attention=0 Softmax=1 Add=1");
    check("at constant causal mask with -inf",
          edit(AT, "init c float - 0.35355\n",
               "init c float - 0.35355\ninit m float 4,5 "
               "0,0,-inf,-inf,-inf,0,0,0,-inf,-inf,0,0,0,0,-inf,0,0,0,0,0\n",
               "p = Softmax ss", "a = Add ss,m\np = Softmax a", NULL),
          P, 1, M);
    check("at symbolic batch", edit(AT, "q float 2,", "q float b,", "k float 2,", "k float b,",
                                    "v float 2,", "v float b,", NULL),
          P, 1, ONE);
    check("at double",
          edit(AT, "q float", "q double", "k float", "k double", "v float", "v double",
               "c float", "c double", NULL),
          P, 1, ONE);
    /* float16: the chain rounds the scores twice, Attention once */
    check("at float16 stays",
          edit(AT, "q float", "q float16", "k float", "k float16", "v float", "v float16",
               "init c float - 0.35355", "init c float16 - 0.5", NULL),
          P, 0, "Attention=0 Softmax=1");
    check("at the Transpose read elsewhere stays",
          edit(AT, "output y\n", "output y\noutput kt\n", NULL), P, 1,
          "Attention=1 Transpose=1 Softmax=0");
    check("at Kt times Kt (Q is the Transpose's output)",
          edit(AT, "input k float 2,3,5,8", "input k float 2,3,4,4", "input v float 2,3,5,6",
               "input v float 2,3,4,6", "s = MatMul q,kt", "s = MatMul kt,kt", NULL),
          P, 1, "Attention=1 Transpose=1 Softmax=0");
    check("at Ks times Ks, both scaled by one Mul",
          edit(AT, "input k float 2,3,5,8", "input k float 2,3,4,4", "input v float 2,3,5,6",
               "input v float 2,3,4,6", "s = MatMul q,kt\nss = Mul s,c\np = Softmax ss",
               "ks = Mul kt,c\ns = MatMul ks,ks\np = Softmax s", NULL),
          P, 1, "Attention=1 Transpose=1 Mul=0 Softmax=0");
    check("at a shared Q scaling stays",
          edit(AT, "s = MatMul q,kt\nss = Mul s,c\np = Softmax ss",
               "qs = Mul q,c\ns = MatMul qs,kt\np = Softmax s", "output y\n",
               "output y\noutput qs\n", NULL),
          P, 1, "Attention=1 Mul=1 Softmax=0");
}

static void test_refuses(void)
{
    const char *NONE = "Attention=0 MatMul=2 Softmax=1";
    const char *MASK = "input v float 2,3,5,6\ninput m float ";
    check("at opset 22", edit(AT, "opset 23", "opset 22", NULL), P, 0, NONE);
    check("at Softmax axis 2", edit(AT, "axis=-1", "axis=2", NULL), P, 0, NONE);
    check("at scores read elsewhere", edit(AT, "output y\n", "output y\noutput s\n", NULL), P,
          0, NONE);
    check("at scaled scores read elsewhere",
          edit(AT, "output y\n", "output y\noutput ss\n", NULL), P, 0, NONE);
    check("at probabilities read elsewhere",
          edit(AT, "output y\n", "output y\noutput p\n", NULL), P, 0, NONE);
    check("at a non-scalar scale", edit(AT, "init c float - 0.35355", "init c float 5 rand", NULL),
          P, 0, NONE);
    check("at Transpose perm [0,2,1,3]",
          edit(AT, "q float 2,3,4,8", "q float 2,3,4,3", "k float 2,3,5,8", "k float 2,3,3,5",
               "perm=[0,1,3,2]", "perm=[0,2,1,3]", NULL),
          P, 0, NONE);
    check("at K given transposed", edit(AT, "input k float 2,3,5,8", "input kk float 2,3,8,5",
                                        "kt = Transpose k perm=[0,1,3,2]\n", "kt = Identity kk\n",
                                        NULL),
          "identity,fuse_attention", -1, NONE);
    check("at rank 3",
          edit(AT, "q float 2,3,4,8", "q float 6,4,8", "k float 2,3,5,8", "k float 6,5,8",
               "v float 2,3,5,6", "v float 6,5,6", "perm=[0,1,3,2]", "perm=[0,2,1]",
               "axis=-1", "axis=2", NULL),
          P, 0, NONE);
    check("at Q batch broadcast", edit(AT, "q float 2,3,4,8", "q float 1,3,4,8", NULL), P, 0,
          NONE);
    check("at a rank-5 mask",
          edit(AT, "input v float 2,3,5,6\n", "input v float 2,3,5,6\ninput m float 2,1,1,4,5\n",
               "p = Softmax ss", "a = Add ss,m\np = Softmax a", NULL),
          P, 0, NONE);
    char mask[128];
    snprintf(mask, sizeof mask, "%s2,3,4,5\n", MASK);
    check("at a mask that grows the scores",
          edit(AT, "q float 2,3,4,8", "q float 2,3,1,8", "input v float 2,3,5,6\n", mask,
               "p = Softmax ss", "a = Add ss,m\np = Softmax a", NULL),
          P, 0, NONE);
    snprintf(mask, sizeof mask, "%s2,1,4,5\n", MASK);
    check("at the mask added before the scale",
          edit(AT, "input v float 2,3,5,6\n", mask, "ss = Mul s,c\np = Softmax ss",
               "a = Add s,m\nss = Mul a,c\np = Softmax ss", NULL),
          P, 0, NONE);
    check("at a constant mask with a fully masked row",
          edit(AT, "init c float - 0.35355\n",
               "init c float - 0.35355\ninit m float 4,5 "
               "0,0,0,0,0,-inf,-inf,-inf,-inf,-inf,0,0,0,0,0,0,0,0,0,0\n",
               "p = Softmax ss", "a = Add ss,m\np = Softmax a", NULL),
          P, 0, NONE);
    check("at scores added to themselves",
          edit(AT, "p = Softmax ss", "a = Add ss,ss\np = Softmax a", NULL), P, 0, NONE);
    check("at V the probabilities",
          edit(AT, "input k float 2,3,5,8", "input k float 2,3,4,8", "y = MatMul p,v",
               "y = MatMul p,p", NULL),
          P, 0, NONE);
    check("at a zero scale", edit(AT, "init c float - 0.35355", "init c float - 0", NULL), P, 0,
          NONE);
}

int main(void)
{
    test_scales();
    test_masks_types();
    test_refuses();
    return t_done("test_pass_fuse_attention");
}
