/*
 * coreml/einsum.c - Core ML lowering and raising of the einsum family:
 * Einsum as MIL's einsum.
 *
 * MIL facts (coremltools' iOS15 einsum): two fp16/fp32 inputs of the same
 * rank, and only two equations up to renaming the letters (numbered by
 * first appearance over input 1, input 2, output):
 *   rank 4  "nchw,nwhu->nchu"   [0,1,2,3],[0,3,2,4]->[0,1,2,4]
 *   rank 3  "chw,whu->chu"      [0,1,2],[2,1,3]->[0,1,3]
 * that is a matmul over dims -1 and -3 with the others as batch.
 *
 * Refused, and why: every other equation (the error names it), an
 * equation without "->" or with "..." (MIL's parser takes neither), inputs
 * other than two of fp16/fp32. Einsums that other MIL ops could compute
 * (matmul, transpose, reduce_sum) are not rewritten here.
 */
#include <stdbool.h>
#include <string.h>

#include "rules.h"

#define ES_MAX 64

/* The equation's terms as letter numbers by first appearance; false when
 * it is not "a,b->c" of letters only. */
static bool es_parse(const char *eq, int terms[3][ES_MAX], size_t len[3])
{
    int num[128];
    int next = 0;
    size_t t = 0;
    memset(num, -1, sizeof num);
    memset(len, 0, 3 * sizeof *len);
    for (const char *p = eq; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == ' ')
            continue;
        if (ch == ',' && t == 0) {
            t = 1;
        } else if (ch == '-' && p[1] == '>' && t == 1) {
            t = 2;
            p++;
        } else if (ch < 128 && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
            if (len[t] == ES_MAX)
                return false;
            if (num[ch] < 0)
                num[ch] = next++;
            terms[t][len[t]++] = num[ch];
        } else {
            return false;
        }
    }
    return t == 2;
}

static bool es_is(const int *v, size_t n, const int *want, size_t nw)
{
    return n == nw && !memcmp(v, want, n * sizeof *v);
}

/* Whether eq is one of MIL's two equations. */
static bool es_supported(const char *eq)
{
    int t[3][ES_MAX];
    size_t n[3];
    static const int a4[] = {0, 1, 2, 3}, b4[] = {0, 3, 2, 4}, c4[] = {0, 1, 2, 4};
    static const int a3[] = {0, 1, 2}, b3[] = {2, 1, 3}, c3[] = {0, 1, 3};
    if (!es_parse(eq, t, n))
        return false;
    return (es_is(t[0], n[0], a4, 4) && es_is(t[1], n[1], b4, 4) && es_is(t[2], n[2], c4, 4)) ||
           (es_is(t[0], n[0], a3, 3) && es_is(t[1], n[1], b3, 3) && es_is(t[2], n[2], c3, 3));
}

static int lower_einsum(CmLower *c, const IrNode *n)
{
    char buf[160];
    const char *eq = cml_attr_s(n, "equation", buf, sizeof buf, "");
    if (strlen(eq) + 1 >= sizeof buf)
        return cml_refuse(c, "equation longer than %zu characters", sizeof buf - 2);
    if (n->n_in != 2)
        return cml_refuse(c, "%zu inputs: MIL's einsum takes two", n->n_in);
    for (size_t i = 0; i < 2; i++) {
        int32_t dt = cm_dtype_to_mil(cml_elem(n->in[i]));
        if (dt != MIL_FP32 && dt != MIL_FP16)
            return cml_refuse(c, "MIL's einsum takes fp16 and fp32 only");
    }
    if (!es_supported(eq))
        return cml_refuse(c, "equation '%s': MIL's einsum computes only 'nchw,nwhu->nchu' "
                             "and 'chw,whu->chu' (letters renamed)", eq);
    const char *a = cml_in(c, n, 0), *b = a ? cml_in(c, n, 1) : NULL;
    if (!b)
        return -1;
    MilOp *op = cml_op(c, "einsum");
    mil_op_in(op, "values", a);
    mil_op_in(op, "values", b);
    mil_op_in_const(op, "equation", mil_tensor_string(eq));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule es_lower[] = {
    {"Einsum", lower_einsum},
};

/* ---- raising -------------------------------------------------------------------- */

static int raise_einsum(CmRaise *r, const MilOp *op)
{
    const char *eq = cmr_string(cmr_const(r, op, "equation"));
    if (!eq || !es_supported(eq))
        return cmr_fail(r, "equation absent or not one MIL defines");
    const char *in[2] = {cmr_in(r, op, "values", 0), cmr_in(r, op, "values", 1)};
    IrNode *node;
    if (cmr_simple(r, op, "Einsum", 2, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_string("equation", eq));
    return 0;
}

static const CmRaiseRule es_raise[] = {
    {"einsum", raise_einsum},
};

CM_FAMILY(cm_family_einsum, "einsum", es_lower, es_raise);
