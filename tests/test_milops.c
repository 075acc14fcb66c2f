/*
 * test_milops.c - the MIL operator table (src/coreml/milops.h) and the MIL
 * checker (src/coreml/milcheck.h): facts of the table read from coremltools'
 * op definitions, and mck_model on programs built here, one valid and
 * one breaking each rule, whose message must name the rule's element.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "coreml/mil.h"
#include "coreml/milcheck.h"
#include "coreml/milops.h"
#include "t.h"

/* ---- the table ------------------------------------------------------------ */

static const MilParam *param(const MilOpSchema *s, const char *name)
{
    for (size_t i = 0; s && i < s->n_params; i++)
        if (!strcmp(s->params[i].name, name))
            return &s->params[i];
    return NULL;
}

/* Whether the '|' list `types` holds the dtype name `t`. */
static int has_type(const MilParam *p, const char *t)
{
    if (!p || !p->types)
        return 0;
    size_t n = strlen(t);
    for (const char *s = p->types; (s = strstr(s, t)); s += n)
        if ((s == p->types || s[-1] == '|') && (s[n] == '|' || s[n] == 0))
            return 1;
    return 0;
}

/* The table is sorted by name, then target, with one entry per
 * (name, target), targets in range and parameter names unique. */
static void test_table_shape(void)
{
    int sorted = 1, ranged = 1, unique = 1;
    for (size_t i = 0; i < milop_table_n; i++) {
        const MilOpSchema *s = &milop_table[i];
        if (s->since < 0 || (size_t)s->since >= mil_targets_n)
            ranged = 0;
        if (i > 0) {
            int c = strcmp(milop_table[i - 1].name, s->name);
            if (c > 0 || (c == 0 && milop_table[i - 1].since >= s->since))
                sorted = 0;
        }
        for (size_t a = 0; a < s->n_params; a++)
            for (size_t b = 0; b < a; b++)
                if (!strcmp(s->params[a].name, s->params[b].name))
                    unique = 0;
    }
    T_CHECK(milop_table_n > 150, "table has %zu entries", milop_table_n);
    T_CHECK(sorted, "table sorted by name then since");
    T_CHECK(ranged, "every since is a target index");
    T_CHECK(unique, "parameter names unique per version");
}

static void test_conv(void)
{
    const MilOpSchema *c15 = milop_find("conv", 0);
    T_CHECK(milop_since("conv") == 0, "conv since iOS15");
    T_CHECK(c15 && c15->since == 0, "conv at iOS15");
    const MilParam *w = param(c15, "weight"), *pt = param(c15, "pad_type");
    const MilParam *x = param(c15, "x"), *b = param(c15, "bias");
    T_CHECK(w && !w->optional, "conv weight required");
    T_CHECK(x && !x->optional && !x->is_const && has_type(x, "fp16") && has_type(x, "fp32")
            && !has_type(x, "int32"), "conv x: fp16|fp32, not const");
    T_CHECK(pt && pt->optional && pt->is_const && has_type(pt, "string"),
            "conv pad_type: optional const string");
    T_CHECK(param(c15, "strides") && has_type(param(c15, "strides"), "int32"), "conv strides int32");
    T_CHECK(param(c15, "groups") && param(c15, "dilations") && param(c15, "pad"),
            "conv groups, dilations, pad");
    T_CHECK(x->tvar && w->tvar && !strcmp(x->tvar, w->tvar) && !param(c15, "strides")->tvar,
            "conv x and weight share a type variable; strides has a fixed type");
    T_CHECK(!param(c15, "padding"), "no such param");
    /* iOS17 made conv's bias a runtime input (no longer const) */
    const MilOpSchema *c16 = milop_find("conv", 1), *c17 = milop_find("conv", 2);
    T_CHECK(c16 == c15, "conv at iOS16 is the iOS15 version");
    T_CHECK(c17 && c17 != c15 && c17->since == 2, "conv has an iOS17 version");
    T_CHECK(b && b->is_const && param(c17, "bias") && !param(c17, "bias")->is_const,
            "conv bias const at iOS15, not at iOS17");
    T_CHECK(milop_find("conv", 4) == c17, "iOS26 sees the newest version");
}

/* Ops whose parameters changed at iOS16/iOS17: both versions visible. */
static void test_versions(void)
{
    const MilOpSchema *g15 = milop_find("gather", 0), *g16 = milop_find("gather", 1);
    const MilOpSchema *g17 = milop_find("gather", 2);
    T_CHECK(g15 && g16 && g17 && g15 != g16 && g16 != g17, "gather: three versions");
    T_CHECK(!param(g15, "batch_dims") && param(g16, "batch_dims"), "gather batch_dims from iOS16");
    T_CHECK(!param(g16, "validate_indices") && param(g17, "validate_indices"),
            "gather validate_indices from iOS17");
    const MilOpSchema *r15 = milop_find("reshape", 0), *r17 = milop_find("reshape", 3);
    T_CHECK(r15 && r17 && r17->since == 2, "reshape: an iOS17 version");
    T_CHECK(!has_type(param(r15, "x"), "int8") && has_type(param(r17, "x"), "int8"),
            "reshape x takes int8 from iOS17");
    T_CHECK(has_type(param(r17, "shape"), "int32") && !has_type(param(r17, "shape"), "fp32"),
            "reshape shape is integer");
    const MilOpSchema *cast15 = milop_find("cast", 0), *cast17 = milop_find("cast", 2);
    T_CHECK(cast15 != cast17 && has_type(param(cast17, "x"), "uint8")
            && !has_type(param(cast15, "x"), "uint8"), "cast x gains uint8 at iOS17");
}

/* Ops new at a target are absent below it. */
static void test_absent(void)
{
    T_CHECK(milop_since("resize") == 2, "resize since iOS17");
    T_CHECK(!milop_find("resize", 1) && milop_find("resize", 2), "resize absent at iOS16");
    T_CHECK(milop_since("scaled_dot_product_attention") == 3, "sdpa since iOS18");
    T_CHECK(!milop_find("scaled_dot_product_attention", 2), "sdpa absent at iOS17");
    T_CHECK(milop_since("write_state") == 3 && milop_since("read_state") == 3, "states at iOS18");
    T_CHECK(milop_since("pixel_unshuffle") == 1, "pixel_unshuffle since iOS16");
    T_CHECK(milop_since("frobnicate") == -1 && !milop_find("frobnicate", 4), "unknown op");
    T_CHECK(milop_since(NULL) == -1 && !milop_find(NULL, 0), "NULL name");
    T_CHECK(milop_since("_const_symbolic") == -1, "builder-only ops left out");
    T_CHECK(milop_since("coreml_update_state") == -1, "dialect ops left out");
}

static void test_special(void)
{
    const MilOpSchema *add = milop_find("add", 0);
    T_CHECK(param(add, "x")->tvar && param(add, "y")->tvar
            && !strcmp(param(add, "x")->tvar, param(add, "y")->tvar), "add: x and y one type");
    const MilOpSchema *k = milop_find("const", 0);
    T_CHECK(k && k->n_params == 0, "const: no input parameters (its value is an attribute)");
    const MilParam *v = param(milop_find("concat", 0), "values");
    const MilParam *ax = param(milop_find("concat", 0), "axis");
    T_CHECK(v && v->variadic && !ax->variadic && ax->is_const, "concat values variadic, axis const");
    const MilOpSchema *cond = milop_find("cond", 0), *wl = milop_find("while_loop", 0);
    T_CHECK(cond && cond->n_params == 1 && has_type(param(cond, "pred"), "bool"),
            "cond: pred only (branches are blocks)");
    T_CHECK(wl && wl->n_params == 1 && param(wl, "loop_vars")->variadic,
            "while_loop: loop_vars only");
}

/* The MIL ops issue 24's lowering names exist from the first target. */
static void test_lowering_ops(void)
{
    static const char *const ops[] = {
        "conv", "conv_transpose", "linear", "matmul", "batch_norm", "instance_norm",
        "layer_norm", "relu", "sigmoid", "tanh", "elu", "leaky_relu", "gelu", "softplus",
        "max_pool", "avg_pool", "reshape", "transpose", "concat", "split", "slice_by_index",
        "gather", "gather_nd", "squeeze", "expand_dims", "tile", "pad", "reduce_sum",
        "reduce_mean", "reduce_max", "softmax", "add", "mul", "real_div", "equal", "cast",
        "select", "clip", "upsample_nearest_neighbor", "resize_bilinear", "lstm", "gru",
        "cond", "while_loop",
    };
    size_t missing = 0;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (milop_since(ops[i]) != 0) {
            missing++;
            fprintf(stderr, "FAIL: %s since %d\n", ops[i], milop_since(ops[i]));
        }
    T_CHECK(missing == 0, "%zu lowering ops not at iOS15", missing);
}

/* Ops per target: non-decreasing, each later folder adds ops. */
static void test_counts(void)
{
    size_t n[8] = {0};
    for (size_t t = 0; t < mil_targets_n && t < 8; t++)
        for (size_t i = 0; i < milop_table_n; i++)
            if ((i == 0 || strcmp(milop_table[i - 1].name, milop_table[i].name))
                && milop_find(milop_table[i].name, (int)t))
                n[t]++;
    T_CHECK(n[0] >= 130 && n[0] <= 220, "iOS15 has %zu ops", n[0]);
    T_CHECK(n[1] > n[0] && n[2] > n[1] && n[3] > n[2], "ops per target %zu %zu %zu %zu",
            n[0], n[1], n[2], n[3]);
    T_CHECK(n[3] - n[0] < 60, "later targets add tens of ops, not hundreds");
    T_CHECK(n[4] >= n[3], "iOS26 keeps iOS18's ops");
}

/* ---- the checker ------------------------------------------------------------ */

static MilType ty(int32_t dtype, int rank, ...)
{
    int64_t d[8];
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank && i < 8; i++)
        d[i] = va_arg(ap, int);
    va_end(ap);
    return mil_type(dtype, rank, d);
}

static void attach(MilOp *op, MilBlock *b)
{
    op->blocks = mem_grow(op->blocks, op->n_blocks + 1, sizeof *op->blocks);
    op->blocks[op->n_blocks++] = b;
}

static void block_input(MilBlock *b, const char *name, const MilType *t)
{
    b->in = mem_grow(b->in, b->n_in + 1, sizeof *b->in);
    b->in[b->n_in++] = (MilNamedType){.name = mem_strdup(name), .type = mil_type_copy(t)};
}

/* One op with a single value input `x` and one output. */
static MilOp *unary(MilBlock *b, const char *type, const char *name, const char *in,
                    const char *out, const MilType *t)
{
    MilOp *op = mil_op_add(b, type, name);
    mil_op_in(op, "x", in);
    mil_op_out(op, out, t);
    return op;
}

/* iOS15: x -> conv(W, strides from a const op, pad_type immediate) ->
 * relu -> concat(values: two arguments) -> out. */
static MilModel *conv_model(const char *target)
{
    const MilTarget *t = mil_target_find(target);
    MilModel *m = mil_model_new(t);
    MilFunction *f = mil_function_add(m, "main", t->opset);
    MilType x = ty(MIL_FP32, 4, 1, 3, 8, 8), y = ty(MIL_FP32, 4, 1, 4, 6, 6);
    MilType cat = ty(MIL_FP32, 4, 1, 8, 6, 6);
    mil_function_input(f, "x", &x);
    int64_t wd[4] = {4, 3, 3, 3};
    mil_const_add(f->block, "W", mil_tensor_new(MIL_FP32, 4, wd, NULL));
    int32_t s[2] = {1, 1};
    mil_const_add(f->block, "s", mil_tensor_ints(s, 2));
    MilOp *c = mil_op_add(f->block, "conv", "conv_0");
    mil_op_in(c, "x", "x");
    mil_op_in(c, "weight", "W");
    mil_op_in(c, "strides", "s");
    mil_op_in_const(c, "pad_type", mil_tensor_string("valid"));
    mil_op_out(c, "y", &y);
    unary(f->block, "relu", "relu_0", "y", "z", &y);
    MilOp *k = mil_op_add(f->block, "concat", "cat_0");
    mil_op_in(k, "values", "z");
    mil_op_in(k, "values", "z");
    mil_op_in_const(k, "axis", mil_tensor_scalar_i32(1));
    mil_op_out(k, "out", &cat);
    mil_block_output(f->block, "out");
    mil_type_clear(&x);
    mil_type_clear(&y);
    mil_type_clear(&cat);
    return m;
}

/* iOS15: cond(p) whose branches read the outer x, then a while_loop
 * over n whose cond and body blocks share their input name (as
 * coremltools writes them). */
static MilModel *control_model(void)
{
    MilModel *m = mil_model_new(mil_target_find("iOS15"));
    MilFunction *f = mil_function_add(m, "main", "CoreML5");
    MilType x = ty(MIL_FP32, 1, 4), p = ty(MIL_BOOL, 0), p1 = ty(MIL_BOOL, 1, 1);
    mil_function_input(f, "x", &x);
    /* scalars cross as [1] (Apple's loader takes no rank-0 input) */
    mil_function_input(f, "p1", &p1);
    unary(f->block, "squeeze", "p_sq", "p1", "p", &p);
    mil_type_clear(&p1);
    MilOp *cond = mil_op_add(f->block, "cond", "cond_0");
    mil_op_in(cond, "pred", "p");
    MilBlock *yes = mil_block_new(), *no = mil_block_new();
    unary(yes, "relu", "relu_t", "x", "t_out", &x);
    mil_block_output(yes, "t_out");
    unary(no, "sigmoid", "sig_f", "x", "f_out", &x);
    mil_block_output(no, "f_out");
    attach(cond, yes);
    attach(cond, no);
    mil_op_out(cond, "co", &x);
    MilType n = ty(MIL_FP32, 0), n1 = ty(MIL_FP32, 1, 1);
    mil_function_input(f, "n1", &n1);
    unary(f->block, "squeeze", "n_sq", "n1", "n", &n);
    mil_type_clear(&n1);
    MilOp *wl = mil_op_add(f->block, "while_loop", "loop_0");
    mil_op_in(wl, "loop_vars", "n");
    MilBlock *cb = mil_block_new(), *body = mil_block_new();
    block_input(cb, "n_x0", &n);
    mil_const_add(cb, "lim", mil_tensor_scalar_f32(3.0f));
    MilOp *less = mil_op_add(cb, "less", "less_0");
    mil_op_in(less, "x", "n_x0");
    mil_op_in(less, "y", "lim");
    mil_op_out(less, "go", &p);
    mil_block_output(cb, "go");
    block_input(body, "n_x0", &n);
    unary(body, "exp", "exp_0", "n_x0", "nx", &n);
    mil_block_output(body, "nx");
    attach(wl, cb);
    attach(wl, body);
    mil_op_out(wl, "wo", &n);
    mil_block_output(f->block, "co");
    mil_block_output(f->block, "wo");
    mil_type_clear(&n);
    mil_type_clear(&x);
    mil_type_clear(&p);
    return m;
}

/* mck_model fails on m with a message holding every string given
 * (NULL-terminated); frees m. */
static void refuses(MilModel *m, const char *what, ...)
{
    IrError err = {{0}};
    int rc = mck_model(m, &err);
    T_CHECK(rc < 0, "%s: refused", what);
    if (getenv("MILOPS_VERBOSE"))   /* to read the messages */
        printf("%-28s %s\n", what, err.msg);
    va_list ap;
    va_start(ap, what);
    for (const char *s; (s = va_arg(ap, const char *));)
        T_CHECK(strstr(err.msg, s) != NULL, "%s: message '%s' lacks '%s'", what, err.msg, s);
    va_end(ap);
    T_CHECK(!strchr(err.msg, '\n'), "%s: one line", what);
    mil_model_free(m);
}

static void accepts(MilModel *m, const char *what)
{
    IrError err = {{0}};
    T_CHECK(mck_model(m, &err) == 0, "%s: %s", what, err.msg);
    mil_model_free(m);
}

static MilOp *find_op(MilModel *m, const char *type)
{
    MilBlock *b = m->fn[0]->block;
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, type))
            return b->ops[i];
    return NULL;
}

static void test_valid(void)
{
    accepts(conv_model("iOS15"), "conv at iOS15");
    accepts(conv_model("iOS17"), "conv at iOS17");
    accepts(conv_model("iOS26"), "conv at iOS26");
    accepts(control_model(), "cond and while_loop");
    /* a function at an older opset than the model's spec version */
    MilModel *m = conv_model("iOS15");
    m->spec_version = mil_target_find("iOS17")->spec_version;
    accepts(m, "CoreML5 function in an iOS17 model");
}

static void test_targets(void)
{
    MilModel *m = conv_model("iOS15");
    m->spec_version = 5;
    refuses(m, "spec version", "specificationVersion 5", NULL);
    m = conv_model("iOS17");
    m->spec_version = mil_target_find("iOS16")->spec_version;
    refuses(m, "opset above spec", "function main", "CoreML7", "specificationVersion 8", NULL);
    m = conv_model("iOS15");
    free(m->fn[0]->opset);
    m->fn[0]->opset = mem_strdup("CoreML99");
    refuses(m, "unknown opset", "function main", "CoreML99", NULL);
    m = conv_model("iOS15");
    mil_function_add(m, "main", "CoreML5");
    refuses(m, "two functions named main", "function main", "twice", NULL);
    m = mil_model_new(mil_target_find("iOS15"));
    refuses(m, "no function", "no function", NULL);
}

static void test_ops(void)
{
    MilModel *m = conv_model("iOS15");
    MilOp *relu = find_op(m, "relu");
    free(relu->type);
    relu->type = mem_strdup("frobnicate");
    refuses(m, "unknown op", "function main", "frobnicate 'relu_0'", "unknown op type", NULL);

    /* resize exists from iOS17: at iOS16 the message names the first target */
    m = conv_model("iOS16");
    MilType t = ty(MIL_FP32, 4, 1, 4, 6, 6);
    unary(m->fn[0]->block, "resize", "resize_0", "y", "rs", &t);
    refuses(m, "op too new", "resize 'resize_0'", "needs iOS17 (CoreML7)", "CoreML6", NULL);
    mil_type_clear(&t);
}

static void test_params(void)
{
    /* a required parameter unbound */
    MilModel *m = conv_model("iOS15");
    MilOp *c = find_op(m, "conv");
    free(c->in[1].param);
    c->in[1].param = mem_strdup("bias");
    refuses(m, "required param", "function main", "conv 'conv_0'", "param weight", "required", NULL);

    /* an unknown parameter */
    m = conv_model("iOS15");
    mil_op_in_const(find_op(m, "relu"), "alpha", mil_tensor_scalar_f32(0.5f));
    refuses(m, "unknown param", "relu 'relu_0'", "param alpha", "unknown parameter", NULL);

    /* a const-required parameter bound to a runtime value */
    m = conv_model("iOS15");
    MilType st = ty(MIL_INT32, 1, 2);
    mil_function_input(m->fn[0], "s_rt", &st);
    mil_type_clear(&st);
    c = find_op(m, "conv");
    free(c->in[2].args[0].name);
    c->in[2].args[0].name = mem_strdup("s_rt");
    refuses(m, "const param", "conv 'conv_0'", "param strides", "constant", "s_rt", NULL);

    /* ... while the same value is fine where no constant is needed */
    m = conv_model("iOS17");
    MilType bt = ty(MIL_FP32, 1, 4);
    mil_function_input(m->fn[0], "b_rt", &bt);
    mil_type_clear(&bt);
    mil_op_in(find_op(m, "conv"), "bias", "b_rt");
    accepts(m, "runtime bias at iOS17");
    m = conv_model("iOS16");
    bt = ty(MIL_FP32, 1, 4);
    mil_function_input(m->fn[0], "b_rt", &bt);
    mil_type_clear(&bt);
    mil_op_in(find_op(m, "conv"), "bias", "b_rt");
    refuses(m, "runtime bias at iOS16", "param bias", "constant", NULL);

    /* two arguments to a parameter that takes one */
    m = conv_model("iOS15");
    mil_op_in(find_op(m, "relu"), "x", "y");
    refuses(m, "non-variadic", "relu 'relu_0'", "param x", "takes one", NULL);

    /* an argument that is both a name and a value */
    m = conv_model("iOS15");
    find_op(m, "relu")->in[0].args[0].value = mil_tensor_scalar_f32(1);
    refuses(m, "name and value", "param x", "either", NULL);
}

static void test_ssa(void)
{
    /* a read before the definition */
    MilModel *m = conv_model("iOS15");
    MilOp *relu = find_op(m, "relu");
    free(relu->in[0].args[0].name);
    relu->in[0].args[0].name = mem_strdup("out");
    refuses(m, "use before def", "relu 'relu_0'", "param x", "'out'", "not defined", NULL);

    /* a name defined twice */
    m = conv_model("iOS15");
    relu = find_op(m, "relu");
    free(relu->out[0].name);
    relu->out[0].name = mem_strdup("y");
    refuses(m, "defined twice", "function main", "relu 'relu_0'", "'y'", "defined twice", NULL);

    /* an output that shadows a function input */
    m = conv_model("iOS15");
    relu = find_op(m, "relu");
    free(relu->out[0].name);
    relu->out[0].name = mem_strdup("x");
    refuses(m, "shadowing an input", "'x'", "defined twice", NULL);

    /* a block output nobody defines */
    m = conv_model("iOS15");
    mil_block_output(m->fn[0]->block, "zz");
    refuses(m, "block output", "function main", "block output 'zz'", NULL);

    /* a value of a branch read after the cond */
    m = control_model();
    MilType x = ty(MIL_FP32, 1, 4);
    unary(m->fn[0]->block, "relu", "leak", "t_out", "leaked", &x);
    mil_type_clear(&x);
    refuses(m, "branch value out of scope", "relu 'leak'", "'t_out'", "not defined", NULL);

    /* a block that reads its own op's output */
    m = control_model();
    MilOp *cond = find_op(m, "cond");
    free(cond->blocks[0]->ops[0]->in[0].args[0].name);
    cond->blocks[0]->ops[0]->in[0].args[0].name = mem_strdup("co");
    refuses(m, "block reads its op's output", "relu 'relu_t'", "'co'", NULL);

    /* a block input that redefines an outer value */
    m = control_model();
    MilOp *wl = find_op(m, "while_loop");
    free(wl->blocks[1]->in[0].name);
    wl->blocks[1]->in[0].name = mem_strdup("x");
    refuses(m, "block input shadows", "block input", "'x'", "defined twice", NULL);

    /* nesting beyond the limit is refused, not walked */
    m = mil_model_new(mil_target_find("iOS15"));
    MilFunction *f = mil_function_add(m, "main", "CoreML5");
    MilType p = ty(MIL_BOOL, 0), p1 = ty(MIL_BOOL, 1, 1);
    mil_function_input(f, "p1", &p1);
    unary(f->block, "squeeze", "p_sq", "p1", "p", &p);
    mil_type_clear(&p1);
    MilBlock *b = f->block;
    for (int i = 0; i < MCK_MAX_DEPTH + 5; i++) {
        MilOp *c = mil_op_add(b, "cond", NULL);
        mil_op_in(c, "pred", "p");
        MilBlock *inner = mil_block_new();
        attach(c, inner);
        attach(c, mil_block_new());
        b = inner;
    }
    mil_type_clear(&p);
    refuses(m, "deep nesting", "nested deeper", NULL);
}

static void test_dtypes(void)
{
    /* relu takes fp16|fp32: an int32 value is refused */
    MilModel *m = conv_model("iOS15");
    MilType it = ty(MIL_INT32, 1, 4);
    mil_function_input(m->fn[0], "ix", &it);
    unary(m->fn[0]->block, "relu", "relu_i", "ix", "iy", &it);
    mil_type_clear(&it);
    refuses(m, "value dtype", "relu 'relu_i'", "param x", "int32", "fp16|fp32", NULL);

    /* an immediate of the wrong dtype */
    m = conv_model("iOS15");
    MilOp *c = find_op(m, "conv");
    mil_tensor_free(c->in[3].args[0].value);
    c->in[3].args[0].value = mil_tensor_scalar_i32(0);
    refuses(m, "immediate dtype", "param pad_type", "int32", "string", NULL);

    /* a const op's declared output type must match its value */
    m = conv_model("iOS15");
    m->fn[0]->block->ops[0]->out[0].type.dtype = MIL_FP16;
    refuses(m, "const type", "const 'W'", "fp16", "fp32", NULL);

    /* a const without a value */
    m = conv_model("iOS15");
    mil_tensor_free(m->fn[0]->block->ops[1]->val);
    m->fn[0]->block->ops[1]->val = NULL;
    refuses(m, "const without value", "const 's'", "without a value", NULL);

    /* the iOS17 reshape takes int8 data, the iOS15 one does not */
    for (int k = 0; k < 2; k++) {
        m = conv_model(k ? "iOS17" : "iOS15");
        MilType i8 = ty(MIL_INT8, 1, 4);
        mil_function_input(m->fn[0], "q", &i8);
        MilOp *r = mil_op_add(m->fn[0]->block, "reshape", "rs");
        mil_op_in(r, "x", "q");
        int32_t sv[2] = {2, 2};
        mil_op_in_const(r, "shape", mil_tensor_ints(sv, 2));
        mil_op_out(r, "rq", &i8);
        mil_type_clear(&i8);
        if (k)
            accepts(m, "int8 reshape at iOS17");
        else
            refuses(m, "int8 reshape at iOS15", "reshape 'rs'", "int8", NULL);
    }
}

/* cond and while_loop hold the blocks MIL gives them; others none. */
static void test_blocks(void)
{
    MilModel *m = control_model();
    MilOp *cond = find_op(m, "cond");
    cond->n_blocks = 1;     /* the else block is handed to another model to free */
    MilBlock *no = cond->blocks[1];
    refuses(m, "cond with one block", "cond 'cond_0'", "blocks", "2 blocks, not 1", NULL);
    MilModel *holder = mil_model_new(mil_target_find("iOS15"));
    MilFunction *hf = mil_function_add(holder, "h", "CoreML5");
    attach(mil_op_add(hf->block, "cond", NULL), no);
    mil_model_free(holder);

    m = conv_model("iOS15");
    attach(find_op(m, "relu"), mil_block_new());
    refuses(m, "relu with a block", "relu 'relu_0'", "holds no blocks", NULL);

    m = control_model();
    MilOp *wl = find_op(m, "while_loop");
    mil_block_output(wl->blocks[1], "nx");
    refuses(m, "body returns two", "while_loop 'loop_0'", "block 1 returns 1 values, not 2", NULL);

    m = control_model();
    cond = find_op(m, "cond");
    mil_block_output(cond->blocks[0], "x");
    refuses(m, "branch returns two", "cond 'cond_0'", "block 0 returns 1 values, not 2", NULL);

    m = control_model();
    wl = find_op(m, "while_loop");
    MilType n = ty(MIL_FP32, 0);
    block_input(wl->blocks[0], "extra", &n);
    mil_type_clear(&n);
    refuses(m, "cond block inputs", "while_loop 'loop_0'", "block 0 takes 1 inputs, not 2", NULL);
}

/* Constness follows coremltools: computed from constants only. */
static void test_constness(void)
{
    /* strides = add(s, s2) of two const ops: a constant */
    MilModel *m = conv_model("iOS15");
    MilBlock *b = m->fn[0]->block;
    int32_t one[2] = {0, 0};
    MilOp *k2 = mil_const_add(b, "s2", mil_tensor_ints(one, 2));
    MilType st = ty(MIL_INT32, 1, 2);
    MilOp *add = mil_op_add(b, "add", "add_s");
    mil_op_in(add, "x", "s");
    mil_op_in(add, "y", "s2");
    mil_op_out(add, "s_sum", &st);
    /* move the two new ops before the conv (index 2) */
    memmove(&b->ops[4], &b->ops[2], 3 * sizeof *b->ops);
    b->ops[2] = k2;
    b->ops[3] = add;
    MilOp *c = find_op(m, "conv");
    free(c->in[2].args[0].name);
    c->in[2].args[0].name = mem_strdup("s_sum");
    accepts(m, "strides computed from consts");

    /* ... but not when one operand is a function input */
    m = conv_model("iOS15");
    b = m->fn[0]->block;
    mil_function_input(m->fn[0], "s_rt", &st);
    add = mil_op_add(b, "add", "add_s");
    mil_op_in(add, "x", "s");
    mil_op_in(add, "y", "s_rt");
    mil_op_out(add, "s_sum", &st);
    memmove(&b->ops[3], &b->ops[2], 3 * sizeof *b->ops);
    b->ops[2] = add;
    c = find_op(m, "conv");
    free(c->in[2].args[0].name);
    c->in[2].args[0].name = mem_strdup("s_sum");
    refuses(m, "strides from a runtime value", "param strides", "constant", "s_sum", NULL);
    mil_type_clear(&st);
}

/* Parameters of one type variable share their dtype. */
static void test_type_vars(void)
{
    MilModel *m = conv_model("iOS15");
    MilType h = ty(MIL_FP16, 4, 1, 4, 6, 6), f = ty(MIL_FP32, 4, 1, 4, 6, 6);
    mil_function_input(m->fn[0], "h", &h);
    MilOp *add = mil_op_add(m->fn[0]->block, "add", "add_mixed");
    mil_op_in(add, "x", "z");
    mil_op_in(add, "y", "h");
    mil_op_out(add, "sum", &f);
    refuses(m, "fp32 + fp16", "add 'add_mixed'", "param y", "fp16 differs from fp32 of param x",
            "type T", NULL);

    m = conv_model("iOS15");
    add = mil_op_add(m->fn[0]->block, "add", "add_same");
    mil_op_in(add, "x", "z");
    mil_op_in_const(add, "y", mil_tensor_scalar_f32(1));
    mil_op_out(add, "sum", &f);
    accepts(m, "fp32 + fp32 immediate");

    /* conv's x and weight share T */
    m = conv_model("iOS15");
    MilOp *w = m->fn[0]->block->ops[0];
    w->val->dtype = MIL_FP16;
    w->out[0].type.dtype = MIL_FP16;
    refuses(m, "conv fp16 weight on fp32 x", "conv 'conv_0'", "param weight", "fp16", "param x", NULL);
    mil_type_clear(&h);
    mil_type_clear(&f);
}

static void feature(MilFeature **list, size_t *n, const char *name)
{
    *list = mem_grow(*list, *n + 1, sizeof **list);
    (*list)[*n] = (MilFeature){.name = mem_strdup(name), .type = mil_type(MIL_FP32, 0, NULL)};
    (*n)++;
}

/* Names are MIL identifiers; the description matches function main. */
static void test_names(void)
{
    const char *bad[] = {"input.1", "/conv/Conv_output_0", "1x", "fp32", "list", "state", "bool"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        MilModel *m = conv_model("iOS15");
        MilType t = ty(MIL_FP32, 4, 1, 4, 6, 6);
        unary(m->fn[0]->block, "relu", "relu_n", "z", bad[i], &t);
        mil_type_clear(&t);
        char what[64];
        snprintf(what, sizeof what, "value named %s", bad[i]);
        refuses(m, what, "relu 'relu_n'", bad[i], "not a MIL identifier", NULL);
    }
    MilModel *m = conv_model("iOS15");
    MilOp *relu = find_op(m, "relu");
    free(relu->name);
    relu->name = mem_strdup("relu/0");
    refuses(m, "op name", "relu 'relu/0'", "name is not a MIL identifier", NULL);

    m = conv_model("iOS15");
    feature(&m->in, &m->n_in, "x");
    feature(&m->out, &m->n_out, "out");
    accepts(m, "description of main");
    m = conv_model("iOS15");
    feature(&m->in, &m->n_in, "x");
    feature(&m->out, &m->n_out, "z");
    refuses(m, "description output", "description", "output 'z'", "function main", NULL);
    m = conv_model("iOS15");
    feature(&m->out, &m->n_out, "out");
    refuses(m, "description count", "description", "0 inputs", "has 1", NULL);
}

/* Apple's loader takes a function input only as a tensor of rank 1 or
 * more ("Functions input of type int not supported" for a rank-0 one):
 * a scalar input is refused, as is a list; [1] is accepted. */
static void test_fn_inputs(void)
{
    MilModel *m = conv_model("iOS15");
    MilType s = {.dtype = MIL_INT32, .rank = 0};
    mil_function_input(m->fn[0], "n", &s);
    refuses(m, "rank-0 function input", "function input 'n'", "rank 0",
            "rank 1 or more", NULL);
    m = conv_model("iOS15");
    MilType l = ty(MIL_FP32, 1, 3);
    l.is_list = true;
    mil_function_input(m->fn[0], "l", &l);
    mil_type_clear(&l);
    refuses(m, "list function input", "function input 'l'", "a list", NULL);
    m = conv_model("iOS15");
    MilType one = ty(MIL_INT32, 1, 1);
    mil_function_input(m->fn[0], "n", &one);
    mil_type_clear(&one);
    accepts(m, "[1] function input");
}

/* Large programs are checked in linear time: a chain of 100k ops, a
 * function of 100k inputs described one by one, a concat of 100k
 * arguments (quadratic work would take minutes). The lists are sized
 * once here: growing them one entry at a time with the builders costs
 * quadratic copying under AddressSanitizer, whose realloc always moves. */
static void test_scale(void)
{
    enum { N = 100000 };
    MilModel *m = mil_model_new(mil_target_find("iOS15"));
    MilFunction *f = mil_function_add(m, "main", "CoreML5");
    MilBlock *b = f->block;
    MilType t = ty(MIL_FP32, 1, 4);
    char in[32], out[32];
    f->in = mem_array(N, sizeof *f->in);
    m->in = mem_array(N, sizeof *m->in);
    for (int i = 0; i < N; i++) {
        snprintf(in, sizeof in, "x%d", i);
        f->in[f->n_in++] = (MilNamedType){.name = mem_strdup(in), .type = mil_type_copy(&t)};
        m->in[m->n_in++] = (MilFeature){.name = mem_strdup(in), .type = mil_type_copy(&t)};
    }
    b->ops = mem_array(N + 1, sizeof *b->ops);
    for (int i = 0; i < N; i++) {
        MilOp *op = mem_alloc(sizeof *op);
        op->type = mem_strdup("relu");
        snprintf(in, sizeof in, i ? "v%d" : "x0", i - 1);
        snprintf(out, sizeof out, "v%d", i);
        mil_op_in(op, "x", in);
        mil_op_out(op, out, &t);
        b->ops[b->n_ops++] = op;
    }
    MilOp *cat = mem_alloc(sizeof *cat);
    cat->type = mem_strdup("concat");
    cat->name = mem_strdup("cat");
    mil_op_in_const(cat, "axis", mil_tensor_scalar_i32(0));
    mil_op_in(cat, "values", "x0");
    MilInput *vals = &cat->in[1];
    vals->args = mem_grow(vals->args, N, sizeof *vals->args);
    for (int i = 1; i < N; i++) {
        snprintf(in, sizeof in, "x%d", i);
        vals->args[vals->n_args++] = (MilArg){.name = mem_strdup(in)};
    }
    mil_op_out(cat, "all", &t);
    b->ops[b->n_ops++] = cat;
    mil_block_output(b, "all");
    feature(&m->out, &m->n_out, "all");
    mil_type_clear(&t);
    accepts(m, "100k ops, inputs and arguments");
}

int main(void)
{
    test_table_shape();
    test_conv();
    test_versions();
    test_absent();
    test_special();
    test_counts();
    test_lowering_ops();
    test_valid();
    test_targets();
    test_ops();
    test_params();
    test_ssa();
    test_dtypes();
    test_blocks();
    test_constness();
    test_type_vars();
    test_names();
    test_fn_inputs();
    test_scale();
    return t_done("test_milops");
}
