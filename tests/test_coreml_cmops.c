/* The Core ML lowering of Einsum as matmul between transposes and reshapes
 * (src/coreml/einsum.c), of GridSample as MIL's resample
 * (src/coreml/sample.c), and the raising of matmul's transpose_x/y and of
 * resample: the MIL ops each equation or attribute set becomes, that the
 * round trip ONNX -> MIL -> ONNX evaluates equal on seeded random inputs,
 * the refusals with their reasons, and raised programs built by hand
 * against values worked out from MIL's documented semantics.
 *
 * The expected op sequences are the fewest transposes and reshapes each
 * equation needs, worked by hand from matmul's contract (batch dims first,
 * [M, K] x [K, N], transpose_x/y swap the last two dims), not our output. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "coreml/coreml.h"
#include "coreml_test.h"
#include "eval/eval.h"
#include "analysis/infer.h"
#include "coreml/mil.h"
#include "mlp_models.h"
#include "passes_build.h"
#include "t.h"
#include "eval/verify.h"

/* The non-const op types of main's block, space-separated. */
static void co_ops(const MilModel *mm, char *buf, size_t cap)
{
    const MilBlock *b = mm->fn[0]->block;
    buf[0] = 0;
    for (size_t i = 0; i < b->n_ops; i++)
        if (strcmp(b->ops[i]->type, "const"))
            snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", buf[0] ? " " : "",
                     b->ops[i]->type);
}

/* The first op of `type` in main's block. */
static const MilOp *co_op(const MilModel *mm, const char *type)
{
    const MilBlock *b = mm->fn[0]->block;
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, type))
            return b->ops[i];
    return NULL;
}

static bool co_flag(const MilModel *mm, const MilOp *op, const char *param)
{
    const MilTensor *t = cmt_param_of(mm, op, param);
    return t && t->dtype == MIL_BOOL && t->data[0];
}

/* Exports `text` (converted to CM_ONNX_OPSET), raises it back and has the
 * evaluator compare; returns the program (caller frees) or NULL after a
 * failed check. */
static MilModel *co_round_trip(const char *what, const char *text)
{
    IrModel *orig = tb_model_typed(text), *conv = tb_model_typed(text), *rt = NULL;
    MilModel *mm = NULL;
    IrError err = {{0}};
    CvOptions co = {.opset = CM_ONNX_OPSET};
    CvReport cr = {0};
    CmOptions o = {.target = -1};
    CmReport rep;
    int rc = cv_convert(conv, &co, &cr, &err);
    cv_report_free(&cr);
    if (rc == 0)
        rc = cm_export(conv, &o, &mm, &rep, &err);
    T_CHECK(rc == 0, "%s: export: %s", what, err.msg);
    if (rc == 0)
        rc = cm_import(mm, &rt, &err);
    if (rc == 0)
        rc = chk_require(rt, "round trip", &err);
    if (rc == 0) {
        VfOptions vo = {.seed = 5};
        rc = vf_compare(orig, rt, &vo, &err);
    }
    T_CHECK(rc == 0 || !mm, "%s: round trip: %s", what, err.msg);
    if (rc != 0) {
        mil_model_free(mm);
        mm = NULL;
    }
    ir_model_free(rt);
    ir_model_free(orig);
    ir_model_free(conv);
    return mm;
}

/* `text` must export to exactly the ops `ops` (consts aside), its matmul
 * with the transpose flags `flags` ("x", "y", "xy", ""), and round-trip
 * equal. */
static void co_einsum(const char *eq, const char *dims_a, const char *dims_b, const char *ops,
                      const char *flags)
{
    char text[512], got[256];
    snprintf(text, sizeof text, "opset 17\ninput a float %s\n%s%s%s"
             "y = Einsum a%s equation=\"%s\"\noutput y\n", dims_a,
             dims_b ? "input b float " : "", dims_b ? dims_b : "", dims_b ? "\n" : "",
             dims_b ? ",b" : "", eq);
    MilModel *mm = co_round_trip(eq, text);
    if (!mm)
        return;
    co_ops(mm, got, sizeof got);
    T_CHECK(!ops || !strcmp(got, ops), "%s: MIL ops '%s', expected '%s'", eq, got, ops);
    const MilOp *mat = co_op(mm, "matmul");
    if (flags && mat) {
        char f[3] = {0};
        size_t k = 0;
        if (co_flag(mm, mat, "transpose_x"))
            f[k++] = 'x';
        if (co_flag(mm, mat, "transpose_y"))
            f[k++] = 'y';
        T_CHECK(!strcmp(f, flags), "%s: matmul transposes '%s', expected '%s'", eq, f, flags);
    }
    mil_model_free(mm);
}

/* `text`, converted to CM_ONNX_OPSET, must be refused by the export with
 * `why` in the message. */
static void co_refuses(const char *what, const char *text, const char *why)
{
    IrModel *m = tb_model(text);
    MilModel *mm = NULL;
    IrError err = {{0}};
    CmOptions o = {.target = -1};
    CmReport rep;
    CvOptions co = {.opset = CM_ONNX_OPSET};
    CvReport cr = {0};
    int rc = cv_convert(m, &co, &cr, &err);
    cv_report_free(&cr);
    T_CHECK(rc == 0, "%s: convert: %s", what, err.msg);
    rc = rc < 0 ? 0 : cm_export(m, &o, &mm, &rep, &err);
    T_CHECK(rc < 0 && strstr(err.msg, why), "%s: expected a refusal with '%s', got %d: %s",
            what, why, rc, err.msg);
    mil_model_free(mm);
    ir_model_free(m);
}

static void test_einsum_matmul(void)
{
    /* attention scores: k's last two dims swapped by the matmul itself */
    co_einsum("bqd,bkd->bqk", "2,3,4", "2,5,4", "matmul", "y");
    co_einsum("bhqd,bhkd->bhqk", "2,3,4,5", "2,3,6,5", "matmul", "y");
    co_einsum("bij,bjk->bik", "2,3,4", "2,4,5", "matmul", "");
    /* (AB)^T = B^T A^T: the operands swapped, both flags, no transpose */
    co_einsum("ik,kj->ji", "3,4", "4,5", "matmul", "xy");
    /* x's contracted dim first: transpose_x */
    co_einsum("kb,kn->bn", "4,3", "4,5", "matmul", "x");
    /* heads after the sequence: h must move before q and k in both */
    co_einsum("bqhd,bkhd->bhqk", "2,3,4,5", "2,6,4,5", "transpose transpose matmul", NULL);
    /* two contracted letters merged into K; of x's two free letters the
     * first stays a batch dim of x alone (matmul broadcasts y's) */
    co_einsum("abcd,cde->abe", "2,3,4,5", "4,5,6", "reshape reshape matmul", "");
    /* matrix times vector: y enters 1-D, its N dim never made */
    co_einsum("ij,j->i", "3,4", "4", "matmul", "");
    /* dot product: both 1-D, a scalar */
    co_einsum("i,i->", "5", "5", "matmul", "");
    co_einsum("i,i", "5", "5", "matmul", "");
    /* outer product: K of size 1 made by reshapes */
    co_einsum("i,j->ij", "3", "4", "reshape reshape matmul", "");
    /* batched dot product */
    co_einsum("bi,bi->b", "3,4", "3,4", "reshape reshape matmul reshape", NULL);
    /* a letter of one input only is summed first */
    co_einsum("abc,bd->ad", "2,3,4", "3,5", "reduce_sum matmul", "");
    /* numpy's ellipsis, broadcast over batch dims of different ranks */
    co_einsum("...ij,...jk->...ik", "2,3,4,5", "3,5,6", "matmul", "");
    /* a projection: x's leading free letter a batch dim of x alone */
    co_einsum("bsd,de->bse", "2,3,4", "4,5", "matmul", "");
    co_einsum("b...d,bkd->b...k", "2,3,4", "2,5,4", "matmul", "y");
    /* an ellipsis dim of 1 against 5: matmul's batch broadcasting */
    co_einsum("...ij,...jk->...ik", "1,3,4", "5,4,6", "matmul", "");
    /* MIL's own einsum where it computes the equation */
    co_einsum("nchw,nwhu->nchu", "2,3,4,5", "2,5,4,6", "einsum", NULL);
}

/* int32 (matmul's i32, reduce_sum's) where MIL's einsum takes floats */
static void test_einsum_int(void)
{
    char ops[128];
    MilModel *mm = co_round_trip("int32 einsum", "opset 17\ninput a int32 2,3,4,5\n"
                                 "input b int32 2,5,4,6\n"
                                 "y = Einsum a,b equation=\"nchw,nwhu->nchu\"\noutput y\n");
    if (mm) {
        co_ops(mm, ops, sizeof ops);
        T_CHECK(!strstr(ops, "einsum") && strstr(ops, "matmul"), "int32 einsum: ops %s", ops);
    }
    mil_model_free(mm);
    mm = co_round_trip("int32 sum", "opset 17\ninput a int32 3,4\n"
                       "y = Einsum a equation=\"ij->j\"\noutput y\n");
    mil_model_free(mm);
}

/* dims unknown at export: reshapes take one as -1, no more */
static void test_einsum_dynamic(void)
{
    co_einsum("bqd,bkd->bqk", "N,3,4", "N,5,4", "matmul", "y");
    co_einsum("bsd,de->bse", "N,S,4", "4,5", "matmul", "");
    co_einsum("abcd,cde->abe", "N,3,4,5", "4,5,6", "reshape reshape matmul", "");
    co_refuses("two unknown dims merged", "opset 17\ninput a float N,M,4,5\n"
               "input b float 4,5,6\ny = Einsum a,b equation=\"abcd,cde->abe\"\noutput y\n",
               "more than one unknown dim");
}

static void test_einsum_one_input(void)
{
    co_einsum("ij->ji", "3,4", NULL, "transpose", NULL);
    co_einsum("ij->i", "3,4", NULL, "reduce_sum", NULL);
    co_einsum("ij->", "3,4", NULL, "reduce_sum", NULL);
    co_einsum("ij", "3,4", NULL, "identity", NULL);
    /* implicit output: the letters in alphabetical order, so a transpose */
    co_einsum("ji", "3,4", NULL, "transpose", NULL);
    co_einsum("abc->cb", "2,3,4", NULL, "reduce_sum transpose", NULL);
    co_einsum("...ij->...ji", "2,3,4,5", NULL, "transpose", NULL);
}

static void test_einsum_refused(void)
{
    co_refuses("diagonal", "opset 17\ninput a float 3,3\ny = Einsum a equation=\"ii->i\"\n"
               "output y\n", "letter 'i' twice in one input");
    co_refuses("batch diagonal", "opset 17\ninput a float 2,3,3\ninput b float 2,3\n"
               "y = Einsum a,b equation=\"bii,bi->b\"\noutput y\n", "a diagonal");
    co_refuses("three inputs", "opset 17\ninput a float 2,3\ninput b float 3,4\n"
               "input c float 4,5\ny = Einsum a,b,c equation=\"ij,jk,kl->il\"\noutput y\n",
               "3 inputs");
    co_refuses("rank mismatch", "opset 17\ninput a float 2,3,4\ninput b float 3,4\n"
               "y = Einsum a,b equation=\"ij,jk->ik\"\noutput y\n", "input 0 has rank 3");
}

/* ---- GridSample ------------------------------------------------------------------- */

/* GridSample (of opset `opset`) with `attrs` must become one resample
 * with these parameters. */
static void co_grid_opset(int opset, const char *attrs, const char *mode, const char *pad,
                          bool align)
{
    char text[512], what[160];
    snprintf(text, sizeof text, "opset %d\ninput x float 1,2,3,4\ninput g float 1,5,6,2\n"
             "y = GridSample x,g %s\noutput y\n", opset, attrs);
    snprintf(what, sizeof what, "GridSample %s", attrs);
    MilModel *mm = co_round_trip(what, text);
    const MilOp *op = mm ? co_op(mm, "resample") : NULL;
    T_CHECK(!mm || op, "%s: no resample", what);
    if (op) {
        const char *sm = cmt_param_of(mm, op, "sampling_mode")->strings[0];
        const char *pm = cmt_param_of(mm, op, "padding_mode")->strings[0];
        const char *cm = cmt_param_of(mm, op, "coordinates_mode")->strings[0];
        T_CHECK(!strcmp(sm, mode) && !strcmp(pm, pad) &&
                    !strcmp(cm, "normalized_minus_one_to_one") &&
                    co_flag(mm, op, "align_corners") == align,
                "%s: resample %s %s %s align %d", what, sm, pm, cm,
                co_flag(mm, op, "align_corners"));
    }
    mil_model_free(mm);
}

static void co_grid(const char *attrs, const char *mode, const char *pad, bool align)
{
    co_grid_opset(17, attrs, mode, pad, align);
}

static void test_grid_sample(void)
{
    co_grid("", "bilinear", "constant", false);
    co_grid("mode=\"nearest\" padding_mode=\"border\" align_corners=1", "nearest", "border",
            true);
    /* ONNX reflects about -1 and 1: the corner pixels' centres with
     * align_corners (MIL's reflection), the image's edges without
     * (MIL's symmetric) */
    co_grid("padding_mode=\"reflection\" align_corners=1", "bilinear", "reflection", true);
    co_grid("padding_mode=\"reflection\"", "bilinear", "symmetric", false);
    co_refuses("bicubic", "opset 17\ninput x float 1,2,3,4\ninput g float 1,5,6,2\n"
               "y = GridSample x,g mode=\"bicubic\"\noutput y\n", "bilinear or nearest only");
    co_refuses("cubic-20", "opset 20\ninput x float 1,2,3,4\ninput g float 1,5,6,2\n"
               "y = GridSample x,g mode=\"cubic\"\noutput y\n", "bilinear or nearest only");
    /* GridSample-20's names, converted to -16's */
    co_grid_opset(20, "mode=\"linear\" padding_mode=\"border\"", "bilinear", "border",
                  false);
}

/* ---- raising programs built by hand ---------------------------------------------- */

/* Runs the import of m on one input x (float, dims xd, values xv) and
 * compares its one output with want (n values); want NULL: the import
 * must fail with `why` in the message. */
static void co_run(const char *what, MilModel *m, size_t nx, const int64_t *xd,
                   const float *xv, size_t nx2, const int64_t *xd2, const float *xv2,
                   const double *want, size_t n, const char *why)
{
    IrModel *rt = NULL;
    IrError err = {{0}};
    int rc = cm_import(m, &rt, &err);
    if (!want) {
        T_CHECK(rc < 0 && strstr(err.msg, why), "%s: expected a refusal with '%s': %s", what,
                why, err.msg);
        ir_model_free(rt);
        return;
    }
    T_CHECK(rc == 0, "%s: import: %s", what, err.msg);
    if (rc == 0)
        rc = chk_require(rt, "import", &err);
    T_CHECK(rc == 0, "%s: raised model: %s", what, err.msg);
    EvValue *in[2] = {NULL, NULL};
    if (rc == 0) {
        in[0] = ev_tensor_new(IR_FLOAT, nx, xd, &err);
        in[1] = ev_tensor_new(IR_FLOAT, nx2, xd2, &err);
        memcpy(in[0]->data, xv, in[0]->numel * sizeof *xv);
        memcpy(in[1]->data, xv2, in[1]->numel * sizeof *xv2);
    }
    EvValue **out = NULL;
    size_t n_out = 0;
    EvOptions eo = {0};
    if (rc == 0) {
        rc = ev_model_run(rt, &eo, 2, in, &out, &n_out, &err);
        T_CHECK(rc == 0 && n_out == 1 && out[0]->numel == n, "%s: run: %s", what, err.msg);
    }
    for (size_t i = 0; rc == 0 && n_out == 1 && i < n && i < out[0]->numel; i++)
        T_CHECK(fabs(((float *)out[0]->data)[i] - want[i]) < 1e-4, "%s: y[%zu] = %g, want %g",
                what, i, ((float *)out[0]->data)[i], want[i]);
    for (size_t i = 0; i < n_out; i++)
        ev_unref(out[i]);
    free(out);
    ev_unref(in[0]);
    ev_unref(in[1]);
    ir_model_free(rt);
}

/* matmul(x [2,3,2], y [2,3,4], transpose_x) = x^T y per batch, and
 * matmul(x [2,2], y [4,2], transpose_y) = x y^T. */
static void test_raise_matmul(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS15", &f);
    int64_t xd[3] = {2, 3, 2}, yd[3] = {2, 3, 4}, od[3] = {2, 2, 4};
    MilType tx = mil_type(MIL_FP32, 3, xd), ty = mil_type(MIL_FP32, 3, yd),
            to = mil_type(MIL_FP32, 3, od);
    mm_input(m, f, "x", &tx);
    mm_input(m, f, "y", &ty);
    MilOp *o = mil_op_add(f->block, "matmul", "mm");
    mil_op_in(o, "x", "x");
    mil_op_in(o, "y", "y");
    mil_op_in_const(o, "transpose_x", mil_tensor_scalar_bool(true));
    mil_op_out(o, "z", &to);
    mm_output(m, f, "z", &to);
    float xv[12], yv[24];
    double want[16] = {0};
    for (int i = 0; i < 12; i++)
        xv[i] = (float)(i % 5) - 2;
    for (int i = 0; i < 24; i++)
        yv[i] = (float)(i % 7) - 3;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 3; k++)
                    want[b * 8 + i * 4 + j] += xv[b * 6 + k * 2 + i] * yv[b * 12 + k * 4 + j];
    co_run("matmul transpose_x rank 3", m, 3, xd, xv, 3, yd, yv, want, 16, NULL);
    mil_model_free(m);
    mil_type_clear(&tx);
    mil_type_clear(&ty);
    mil_type_clear(&to);

    m = mm_model("iOS15", &f);
    int64_t ad[2] = {2, 2}, bd[2] = {4, 2}, cd[2] = {2, 4};
    tx = mil_type(MIL_FP32, 2, ad);
    ty = mil_type(MIL_FP32, 2, bd);
    to = mil_type(MIL_FP32, 2, cd);
    mm_input(m, f, "x", &tx);
    mm_input(m, f, "y", &ty);
    o = mil_op_add(f->block, "matmul", "mm");
    mil_op_in(o, "x", "x");
    mil_op_in(o, "y", "y");
    mil_op_in_const(o, "transpose_y", mil_tensor_scalar_bool(true));
    mil_op_out(o, "z", &to);
    mm_output(m, f, "z", &to);
    double want2[8] = {0};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 2; k++)
                want2[i * 4 + j] += xv[i * 2 + k] * yv[j * 2 + k];
    co_run("matmul transpose_y rank 2", m, 2, ad, xv, 2, bd, yv, want2, 8, NULL);
    mil_model_free(m);
    mil_type_clear(&tx);
    mil_type_clear(&ty);
    mil_type_clear(&to);
}

/* transpose with MIL's negative perm [1, -3, -1] (coremltools writes it
 * for attention heads; ONNX's perm takes 0..rank-1 only): x [2,3,4]
 * becomes [3,2,4], plus y. */
static void test_raise_transpose_negative(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS15", &f);
    int64_t xd[3] = {2, 3, 4}, od[3] = {3, 2, 4};
    MilType tx = mil_type(MIL_FP32, 3, xd), to = mil_type(MIL_FP32, 3, od);
    mm_input(m, f, "x", &tx);
    mm_input(m, f, "y", &to);
    MilOp *o = mil_op_add(f->block, "transpose", "tr");
    mil_op_in(o, "x", "x");
    mil_op_in_const(o, "perm", mil_tensor_ints((int32_t[]){1, -3, -1}, 3));
    mil_op_out(o, "t", &to);
    o = mil_op_add(f->block, "add", "sum");
    mil_op_in(o, "x", "t");
    mil_op_in(o, "y", "y");
    mil_op_out(o, "z", &to);
    mm_output(m, f, "z", &to);
    float xv[24], yv[24];
    double want[24];
    for (int i = 0; i < 24; i++) {
        xv[i] = (float)i;
        yv[i] = 100.0f * (float)(i % 3);
    }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 4; c++)
                want[(a * 2 + b) * 4 + c] = xv[(b * 3 + a) * 4 + c] + yv[(a * 2 + b) * 4 + c];
    co_run("transpose perm [1,-3,-1]", m, 3, xd, xv, 3, od, yv, want, 24, NULL);
    mil_model_free(m);
    mil_type_clear(&tx);
    mil_type_clear(&to);
}

/* What the import gives passes the checker or is refused: here the add
 * of two bools (MIL's op checker would refuse the program first; the
 * import alone must not write what ONNX's Add does not take). */
static void test_import_gate(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS15", &f);
    int64_t xd[1] = {3};
    MilType tx = mil_type(MIL_FP32, 1, xd), tb = mil_type(MIL_BOOL, 1, xd);
    mm_input(m, f, "x", &tx);
    mm_input(m, f, "y", &tx);
    const char *names[2][2] = {{"x", "bx"}, {"y", "by"}};
    for (int i = 0; i < 2; i++) {
        MilOp *o = mil_op_add(f->block, "cast", names[i][1]);
        mil_op_in(o, "x", names[i][0]);
        mil_op_in_const(o, "dtype", mil_tensor_string("bool"));
        mil_op_out(o, names[i][1], &tb);
    }
    MilOp *o = mil_op_add(f->block, "add", "sum");
    mil_op_in(o, "x", "bx");
    mil_op_in(o, "y", "by");
    mil_op_out(o, "z", &tb);
    mm_output(m, f, "z", &tb);
    float v[3] = {0, 1, 2};
    co_run("add of bools", m, 1, xd, v, 1, xd, v, NULL, 0, "the ONNX model it gives is invalid");
    mil_model_free(m);
    mil_type_clear(&tx);
    mil_type_clear(&tb);
}

static const char *co_pad, *co_cmode;
static bool co_align;
static float co_pad_value;

/* resample of x [1,1,1,3] = {0, 10, 20} at n points (x, y) = (xs[i], 0),
 * with the parameters above; y must be want (NULL: refused with why). */
static void co_resample(const char *what, size_t n, const float *xs, const double *want,
                        const char *why)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS15", &f);
    int64_t xd[4] = {1, 1, 1, 3}, gd[4] = {1, 1, (int64_t)n, 2}, od[4] = {1, 1, 1, (int64_t)n};
    MilType tx = mil_type(MIL_FP32, 4, xd), tg = mil_type(MIL_FP32, 4, gd),
            to = mil_type(MIL_FP32, 4, od);
    mm_input(m, f, "x", &tx);
    mm_input(m, f, "g", &tg);
    MilOp *o = mil_op_add(f->block, "resample", "rs");
    mil_op_in(o, "x", "x");
    mil_op_in(o, "coordinates", "g");
    mil_op_in_const(o, "sampling_mode", mil_tensor_string("bilinear"));
    mil_op_in_const(o, "padding_mode", mil_tensor_string(co_pad));
    mil_op_in_const(o, "padding_value", mil_tensor_scalar_f32(co_pad_value));
    mil_op_in_const(o, "coordinates_mode", mil_tensor_string(co_cmode));
    mil_op_in_const(o, "align_corners", mil_tensor_scalar_bool(co_align));
    mil_op_out(o, "z", &to);
    mm_output(m, f, "z", &to);
    float xv[3] = {0, 10, 20}, gv[16] = {0};
    for (size_t i = 0; i < n; i++)
        gv[2 * i] = xs[i];
    /* y = 0 is the one row: normalized -1..1 without align_corners and
     * zero-to-one with it both put H = 1's row at 0 */
    co_run(what, m, 4, xd, xv, 4, gd, gv, want, n, why);
    mil_model_free(m);
    mil_type_clear(&tx);
    mil_type_clear(&tg);
    mil_type_clear(&to);
}

static void test_raise_resample(void)
{
    /* zero-to-one with align_corners: 0 -> pixel 0, 1 -> pixel 2 (W - 1),
     * 0.25 -> pixel 0.5 */
    co_pad = "border";
    co_cmode = "normalized_zero_to_one";
    co_align = true;
    co_pad_value = 0;
    static const float xs1[4] = {0, 1, 0.25f, 0.5f};
    static const double w1[4] = {0, 20, 5, 10};
    co_resample("zero_to_one aligned", 4, xs1, w1, NULL);
    /* symmetric without align_corners: -1 is the image's left edge, pixel
     * -0.5; x = -1.5 is pixel ((x + 1) * 3 - 1) / 2 = -1.25, between the
     * mirrored pixels -2 (= p1 = 10) and -1 (= p0 = 0): 0.25 * 10 */
    co_pad = "symmetric";
    co_cmode = "normalized_minus_one_to_one";
    co_align = false;
    static const float xs2[3] = {-1.5f, -1, 0};
    static const double w2[3] = {2.5, 0, 10};
    co_resample("symmetric unaligned", 3, xs2, w2, NULL);
    /* constant 0: beyond the right edge (x = 1 is pixel 2.5 of 3 unaligned)
     * half of p2 */
    co_pad = "constant";
    static const float xs3[2] = {1, 2};
    static const double w3[2] = {10, 0};
    co_resample("constant zero", 2, xs3, w3, NULL);
    co_pad_value = 1;
    co_resample("constant one", 2, xs3, NULL, "with a value other than 0");
    co_pad_value = 0;
    co_pad = "reflection";
    co_resample("reflection unaligned", 2, xs3, NULL, "without align_corners");
    co_pad = "symmetric";
    co_align = true;
    co_resample("symmetric aligned", 2, xs3, NULL, "with align_corners");
    co_pad = "border";
    co_cmode = "unnormalized";
    co_resample("unnormalized", 2, xs3, NULL, "coordinates_mode 'unnormalized'");
}

int main(void)
{
    test_einsum_matmul();
    test_einsum_dynamic();
    test_einsum_int();
    test_einsum_one_input();
    test_einsum_refused();
    test_grid_sample();
    test_raise_matmul();
    test_raise_transpose_negative();
    test_import_gate();
    test_raise_resample();
    return t_done("test_coreml_cmops");
}
