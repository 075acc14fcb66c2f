/*
 * test_opschema.c - the operator table: lookups by opset, domains, flags,
 * attribute defaults, formal parameters, and type-string matching.
 * Expected values are facts of the ONNX specification (Operators.md /
 * Changelog.md), not output of this program.
 */
#include <float.h>
#include <string.h>

#include "ir/ir.h"
#include "schema/opschema.h"
#include "t.h"

static void test_lookup(void)
{
    const OsSchema *s = os_find("", "Add", 13);
    T_CHECK(s && s->since == 13, "Add at opset 13 is Add-13");
    s = os_find("ai.onnx", "Add", 12);
    T_CHECK(s && s->since == 7, "Add at opset 12 is Add-7 (ai.onnx alias)");
    s = os_find(NULL, "Add", 1);
    T_CHECK(s && s->since == 1, "Add at opset 1 is Add-1");
    T_CHECK(os_find("", "Gelu", 19) == NULL, "Gelu does not exist before opset 20");
    s = os_find("", "Gelu", 28);
    T_CHECK(s && s->since == 20, "Gelu at 28 is Gelu-20");
    T_CHECK(os_find("", "NoSuchOp", 28) == NULL, "unknown op");
    T_CHECK(os_find("ai.onnx.ml", "Add", 5) == NULL, "Add is not in ai.onnx.ml");
    s = os_find("ai.onnx.ml", "ZipMap", 5);
    T_CHECK(s && s->since == 1, "ZipMap-1 in ai.onnx.ml");
    s = os_find("", "Reshape", 4);
    T_CHECK(s && s->since == 1 && os_attr(s, "shape"), "Reshape-1 has a shape attribute");
    s = os_find("", "Reshape", 13);
    T_CHECK(s && s->since == 13 && s->next_since == 14, "Reshape-13, next is 14");
    size_t n;
    const OsSchema *v = os_versions("", "Softmax", &n);
    T_CHECK(v && n == 3 && v[0].since == 1 && v[1].since == 11 && v[2].since == 13,
            "Softmax versions 1, 11, 13");
}

static void test_domains(void)
{
    T_CHECK(os_domain_max("") == 28, "ai.onnx goes to 28");
    T_CHECK(os_domain_max("ai.onnx") == 28, "alias");
    T_CHECK(os_domain_max("ai.onnx.ml") == 5, "ai.onnx.ml goes to 5");
    T_CHECK(os_domain_max("com.example") == -1, "custom domain unknown");
    T_CHECK(strcmp(ir_domain_norm("ai.onnx"), "") == 0, "normalized");
}

static void test_flags(void)
{
    const OsSchema *add = os_find("", "Add", 14), *sub = os_find("", "Sub", 14);
    T_CHECK(add && (add->flags & OS_F_COMMUTATIVE), "Add is commutative");
    T_CHECK(sub && !(sub->flags & OS_F_COMMUTATIVE), "Sub is not commutative");
    const OsSchema *rn = os_find("", "RandomNormal", 28);
    T_CHECK(rn && (rn->flags & OS_F_RANDOM), "RandomNormal is random");
    const OsSchema *ln = os_find("", "LayerNormalization", 17);
    T_CHECK(ln && ln->n_fb > 0 && ln->fb_opsets, "LayerNormalization has a function body");
    const OsSchema *up = os_find("", "Upsample", 10);
    T_CHECK(up && (up->flags & OS_F_DEPRECATED), "Upsample-10 is deprecated");
    const OsSchema *iff = os_find("", "If", 13);
    T_CHECK(iff && (iff->flags & OS_F_CONTROL), "If has subgraphs");
    const OsSchema *relu = os_find("", "Relu", 14);
    T_CHECK(relu && (relu->flags & OS_F_CHEAP) && (relu->flags & OS_F_EXACT) &&
            !(relu->flags & OS_F_RANDOM), "Relu is cheap, exact and deterministic");
    /* the known-value rule runs only linear-work ops ahead of time; a
     * convolution can cost 2^32 steps on two 64k-element inputs */
    T_CHECK(!(os_op_flags("", "Conv") & OS_F_CHEAP) && !(os_op_flags("", "MatMul") & OS_F_CHEAP),
            "Conv and MatMul are not cheap");
    T_CHECK((os_op_flags("ai.onnx", "Shape") & OS_F_CHEAP) && os_op_flags("", "NoSuchOp") == 0,
            "os_op_flags: ai.onnx spelled out, and an unknown op");
    /* rounding ops are not exact: jitter must reach them */
    T_CHECK(!(os_op_flags("", "Add") & OS_F_EXACT) && !(os_op_flags("", "Conv") & OS_F_EXACT),
            "Add and Conv round");
    T_CHECK((os_op_flags("", "Loop") & OS_F_CONTROL) && (os_op_flags("", "Loop") & OS_F_EXACT),
            "Loop: control, outputs from its body");
}

static void test_attrs_params(void)
{
    const OsSchema *conv = os_find("", "Conv", 11);
    const OsAttr *a = conv ? os_attr(conv, "auto_pad") : NULL;
    T_CHECK(a && a->type == 3 && a->has_default && strcmp(a->def_s, "NOTSET") == 0,
            "Conv auto_pad is a STRING defaulting to NOTSET");
    a = conv ? os_attr(conv, "group") : NULL;
    T_CHECK(a && a->type == 2 && a->def_i == 1, "Conv group defaults to 1");
    T_CHECK(conv && conv->min_in == 2 && conv->max_in == 3, "Conv takes 2..3 inputs");
    T_CHECK(conv && os_in_param(conv, 2) && os_in_param(conv, 2)->optional,
            "Conv's bias is optional");
    const OsSchema *cast = os_find("", "Cast", 13);
    a = cast ? os_attr(cast, "to") : NULL;
    T_CHECK(a && a->required, "Cast 'to' is required");
    const OsSchema *concat = os_find("", "Concat", 13);
    const OsParam *p = concat ? os_in_param(concat, 5) : NULL;
    T_CHECK(p && p->variadic, "Concat's 6th input maps to its variadic parameter");
    T_CHECK(concat && concat->max_in == -1, "Concat takes any number of inputs");
    const OsSchema *mvn = os_find("", "MeanVarianceNormalization", 13);
    a = mvn ? os_attr(mvn, "axes") : NULL;
    T_CHECK(a && a->def_n == 3 && a->def_ints[0] == 0 && a->def_ints[2] == 3,
            "MVN axes default to [0, 2, 3]");
}

static void test_types(void)
{
    int64_t d[1] = {3};
    IrType *f = ir_type_tensor(1, 1, d), *i64 = ir_type_tensor(7, 1, d);
    IrType *seq = mem_alloc(sizeof *seq);
    seq->kind = IR_TYPE_SEQUENCE;
    seq->elem = ir_type_copy(i64);
    T_CHECK(os_type_matches("tensor(float)", f), "tensor(float)");
    T_CHECK(!os_type_matches("tensor(double)", f), "not double");
    T_CHECK(os_type_matches("seq(tensor(int64))", seq), "seq of int64");
    T_CHECK(!os_type_matches("seq(tensor(float))", seq), "seq of int64 is not of float");
    T_CHECK(!os_type_matches("tensor(int64)", seq), "a sequence is not a tensor");
    const OsSchema *relu = os_find("", "Relu", 13);
    T_CHECK(relu && os_param_allows(relu, &relu->in[0], f), "Relu-13 takes float");
    T_CHECK(relu && !os_param_allows(relu, &relu->in[0], i64), "Relu-13 refuses int64");
    const OsSchema *relu14 = os_find("", "Relu", 14);
    T_CHECK(relu14 && os_param_allows(relu14, &relu14->in[0], i64), "Relu-14 takes int64");
    char buf[64];
    T_CHECK(strcmp(os_type_str(seq, buf, sizeof buf), "seq(tensor(int64))") == 0,
            "type string: %s", buf);
    T_CHECK(os_dtype_from_name("float8e4m3fn", 12) == 17, "float8e4m3fn is 17");
    ir_type_free(f);
    ir_type_free(i64);
    ir_type_free(seq);
}

/* Float defaults the operator data rounds, corrected by the flags file
 * to onnx/defs' values: Clip-6's bounds are the float limits exactly,
 * the training optimizers' epsilon is 1e-6 (the data says 0). */
static void test_corrected_defaults(void)
{
    const OsSchema *clip = os_find("", "Clip", 6);
    const OsAttr *mx = clip ? os_attr(clip, "max") : NULL;
    const OsAttr *mn = clip ? os_attr(clip, "min") : NULL;
    T_CHECK(mx && mx->def_f == FLT_MAX, "Clip-6 max default is FLT_MAX");
    T_CHECK(mn && mn->def_f == -FLT_MAX, "Clip-6 min default is -FLT_MAX");
    const char *opt[] = {"Adagrad", "Adam"};
    for (size_t i = 0; i < 2; i++) {
        const OsSchema *s = os_find("ai.onnx.preview.training", opt[i], 1);
        const OsAttr *e = s ? os_attr(s, "epsilon") : NULL;
        T_CHECK(e && e->has_default && e->def_f == 1e-6f, "%s-1 epsilon default is 1e-6", opt[i]);
    }
}

/* Every op has a family, and the ones the issue names sit where it says. */
static void test_families(void)
{
    for (size_t i = 0; i < os_table_n; i++)
        T_CHECK(os_table[i].family && *os_table[i].family, "%s has a family", os_table[i].op);
    const OsSchema *s = os_find("", "Softmax", 13);
    T_CHECK(s && strcmp(s->family, "activation") == 0, "Softmax is an activation");
    s = os_find("", "Resize", 19);
    T_CHECK(s && strcmp(s->family, "resize") == 0, "Resize is in resize");
}

/* The shape-like inputs (shape_in=): by name, in every version that has
 * the input, and nothing else. */
static void test_shape_inputs(void)
{
    const OsSchema *rs = os_find("", "Reshape", 14), *up = os_find("", "Upsample", 9);
    const OsSchema *rz = os_find("", "Resize", 13), *rz10 = os_find("", "Resize", 10);
    const OsSchema *lp = os_find("", "Loop", 16), *add = os_find("", "Add", 14);
    T_CHECK(rs && !os_shape_input(rs, 0) && os_shape_input(rs, 1), "Reshape-14 shape");
    T_CHECK(up && !os_shape_input(up, 0) && os_shape_input(up, 1), "Upsample-9 scales");
    T_CHECK(rz && !os_shape_input(rz, 0) && os_shape_input(rz, 1) && os_shape_input(rz, 2) &&
            os_shape_input(rz, 3), "Resize-13 roi, scales, sizes");
    T_CHECK(rz10 && os_shape_input(rz10, 1), "Resize-10 scales (its input 1)");
    T_CHECK(lp && os_shape_input(lp, 0) && !os_shape_input(lp, 1) && !os_shape_input(lp, 2),
            "Loop-16: M only");
    T_CHECK(add && !os_shape_input(add, 0) && !os_shape_input(add, 1) &&
            !os_shape_input(add, 40), "Add has none");
}

int main(void)
{
    test_shape_inputs();
    test_corrected_defaults();
    test_families();
    test_lookup();
    test_domains();
    test_flags();
    test_attrs_params();
    test_types();
    return t_done("opschema");
}
