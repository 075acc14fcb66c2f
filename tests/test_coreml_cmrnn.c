/* The Core ML lowering of the rnn family (LSTM, GRU, RNN) and of the
 * elementwise and activation ops MIL lacks (composed of MIL ops): MIL's
 * layouts asserted on the exported program (gate orders, biases,
 * peepholes, time reversal), ONNX -> MIL -> ONNX round trips judged by the
 * evaluator on shapes the backend node tests lack (bidirectional and
 * reverse GRU/RNN, layout 1, peepholes, ties of Round, signs of integer
 * Div and Mod, infinities), and the refusals naming their reason. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "coreml/coreml.h"
#include "coreml/mil.h"
#include "t.h"
#include "coreml_test.h"
#include "eval/verify.h"

/* ---- building models ------------------------------------------------------------ */

static IrModel *mk_model(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", CM_ONNX_OPSET);
    m->graph = ir_graph_new(NULL);
    return m;
}

static void mk_input(IrModel *m, const char *name, int32_t elem, size_t rank,
                     const int64_t *dims)
{
    ir_graph_add_input(m->graph, name, ir_type_tensor(elem, rank, dims));
}

/* An initializer of n elements of `elem` (float or int32/int64 given as
 * doubles). */
static void mk_init(IrModel *m, const char *name, int32_t elem, size_t rank,
                    const int64_t *dims, const double *v, size_t n)
{
    size_t w = elem == IR_INT64 ? 8 : elem == IR_INT8 || elem == IR_UINT8 ? 1 : 4;
    unsigned char *buf = calloc(n ? n : 1, w);
    for (size_t i = 0; i < n; i++) {
        if (elem == IR_FLOAT) {
            float f = (float)v[i];
            memcpy(buf + 4 * i, &f, 4);
        } else if (w == 1) {
            buf[i] = (unsigned char)(int)v[i];
        } else if (elem == IR_INT32) {
            int32_t k = (int32_t)v[i];
            memcpy(buf + 4 * i, &k, 4);
        } else {
            int64_t k = (int64_t)v[i];
            memcpy(buf + 8 * i, &k, 8);
        }
    }
    ir_graph_add_init(m->graph, ir_tensor_new(name, elem, (int)rank, dims, buf, n * w));
    free(buf);
}

/* Deterministic weights in [-0.5, 0.5). */
static void mk_weights(IrModel *m, const char *name, size_t rank, const int64_t *dims,
                       unsigned seed)
{
    size_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    double *v = malloc(n * sizeof *v);
    unsigned s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (double)((s >> 8) & 0xffff) / 65536.0 - 0.5;
    }
    mk_init(m, name, IR_FLOAT, rank, dims, v, n);
    free(v);
}

/* A node; its outputs become the graph's when `outputs`. */
static IrNode *mk_node(IrModel *m, const char *op, size_t n_in, const char *const *in,
                       size_t n_out, const char *const *out, bool outputs)
{
    IrError err;
    IrNode *n = ir_node_new(m->graph, NULL, op, "", "the_node", n_in, in, n_out, out, &err);
    for (size_t i = 0; n && outputs && i < n_out; i++)
        if (*out[i])
            ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, out[i]), NULL);
    return n;
}

/* ---- export, import, compare ----------------------------------------------------- */

static MilModel *export_of(IrModel *m, IrError *err)
{
    MilModel *mm = NULL;
    CmOptions o = {.target = -1};
    CmReport rep;
    if (cm_export(m, &o, &mm, &rep, err) < 0)
        return NULL;
    return mm;
}

/* ONNX -> MIL -> ONNX of m, compared with m on seeded random inputs. 0
 * equal, 1 refused, -1 failed; err says why. */
static int round_trip(IrModel *m, IrError *err)
{
    err->msg[0] = 0;
    MilModel *mm = export_of(m, err);
    if (!mm)
        return 1;
    IrModel *rt = NULL;
    int rc = cm_import(mm, &rt, err);
    mil_model_free(mm);
    if (rc < 0)
        return -1;
    rc = chk_require(rt, "round trip", err);
    if (rc == 0) {
        VfOptions vo = {.seed = 11};
        cm_retype_like(rt, m);
        rc = vf_compare(m, rt, &vo, err) == 0 ? 0 : -1;
    }
    ir_model_free(rt);
    return rc;
}

static void expect_equal(IrModel *m, const char *what)
{
    IrError err;
    int rc = round_trip(m, &err);
    T_CHECK(rc == 0, "%s: round trip %s: %s", what, rc == 1 ? "refused" : "differs", err.msg);
    ir_model_free(m);
}

static void expect_refused(IrModel *m, const char *what, const char *reason)
{
    IrError err;
    err.msg[0] = 0;
    MilModel *mm = export_of(m, &err);
    T_CHECK(!mm && strstr(err.msg, reason) && strstr(err.msg, "node '"),
            "%s: refused naming '%s' (got: %s)", what, reason, mm ? "exported" : err.msg);
    mil_model_free(mm);
    ir_model_free(m);
}

static size_t count_ops(const MilModel *mm, const char *type)
{
    size_t k = 0;
    while (cmt_find_op(mm, type, k))
        k++;
    return k;
}

static bool f32s_are(const MilTensor *t, const float *want, size_t n)
{
    if (!t || t->dtype != MIL_FP32 || t->nbytes != n * 4)
        return false;
    for (size_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, t->data + 4 * i, 4);
        if (f != want[i])
            return false;
    }
    return true;
}

/* ---- recurrent models ----------------------------------------------------------- */

typedef struct RnnCase {
    const char *op;         /* LSTM, GRU, RNN */
    const char *dir;
    int layout;
    bool bias, init_h, peep;
    size_t n_act;
    const char *acts[6];
    int lbr;
    double clip;            /* 0: none */
    const double *seq;      /* sequence_lens (B of them), or NULL */
} RnnCase;

enum { RT = 3, RB = 2, RI = 2, RH = 3 };

static IrModel *rnn_model(const RnnCase *rc)
{
    IrModel *m = mk_model();
    int64_t g = !strcmp(rc->op, "LSTM") ? 4 : !strcmp(rc->op, "GRU") ? 3 : 1;
    int64_t d = !strcmp(rc->dir, "bidirectional") ? 2 : 1;
    int64_t xd[3] = {RT, RB, RI}, hd[3] = {d, RB, RH};
    if (rc->layout) {
        xd[0] = RB, xd[1] = RT;
        hd[0] = RB, hd[1] = d;
    }
    mk_input(m, "X", IR_FLOAT, 3, xd);
    int64_t wd[3] = {d, g * RH, RI}, rd[3] = {d, g * RH, RH}, bd[2] = {d, 2 * g * RH};
    int64_t pd[2] = {d, 3 * RH}, sd[1] = {RB};
    mk_weights(m, "W", 3, wd, 1);
    mk_weights(m, "R", 3, rd, 2);
    const char *in[8] = {"X", "W", "R", "", "", "", "", ""};
    size_t n_in = 3;
    if (rc->bias) {
        mk_weights(m, "B", 2, bd, 3);
        in[3] = "B";
        n_in = 4;
    }
    if (rc->seq) {
        mk_init(m, "S", IR_INT32, 1, sd, rc->seq, RB);
        in[4] = "S";
        n_in = 5;
    }
    if (rc->init_h) {
        mk_input(m, "H0", IR_FLOAT, 3, hd);
        in[5] = "H0";
        n_in = 6;
    }
    if (rc->peep) {
        mk_weights(m, "P", 2, pd, 4);
        in[7] = "P";
        n_in = 8;
    }
    const char *out[3] = {"Y", "Y_h", "Y_c"};
    IrNode *n = mk_node(m, rc->op, n_in, in, g == 4 ? 3 : 2, out, true);
    ir_node_set_attr(n, ir_attr_int("hidden_size", RH));
    ir_node_set_attr(n, ir_attr_string("direction", rc->dir));
    if (rc->layout)
        ir_node_set_attr(n, ir_attr_int("layout", 1));
    if (rc->n_act)
        ir_node_set_attr(n, ir_attr_strings("activations", rc->n_act, rc->acts));
    if (rc->lbr)
        ir_node_set_attr(n, ir_attr_int("linear_before_reset", 1));
    if (rc->clip > 0)
        ir_node_set_attr(n, ir_attr_float("clip", (float)rc->clip));
    return m;
}

static void test_rnn_round_trips(void)
{
    static const double seq_full[RB] = {RT, RT};
    static const RnnCase cases[] = {
        {.op = "GRU", .dir = "forward", .bias = true, .init_h = true},
        {.op = "GRU", .dir = "reverse", .bias = true, .init_h = true},
        {.op = "GRU", .dir = "bidirectional", .bias = true, .init_h = true},
        {.op = "GRU", .dir = "bidirectional", .layout = 1, .init_h = true, .n_act = 4,
         .acts = {"Tanh", "Sigmoid", "Sigmoid", "Tanh"}},
        {.op = "RNN", .dir = "reverse", .layout = 1, .bias = true, .init_h = true},
        {.op = "RNN", .dir = "bidirectional", .bias = true, .n_act = 2,
         .acts = {"Tanh", "Sigmoid"}},
        {.op = "LSTM", .dir = "bidirectional", .bias = true, .init_h = true, .peep = true},
        {.op = "LSTM", .dir = "forward", .layout = 1, .bias = true, .init_h = true,
         .peep = true, .seq = seq_full, .n_act = 3, .acts = {"Tanh", "Sigmoid", "Tanh"}},
        {.op = "LSTM", .dir = "reverse", .bias = true},
        /* linear_before_reset 1: unrolled over time */
        {.op = "GRU", .dir = "forward", .bias = true, .init_h = true, .lbr = 1},
        {.op = "GRU", .dir = "reverse", .bias = true, .lbr = 1},
        {.op = "GRU", .dir = "bidirectional", .layout = 1, .bias = true, .init_h = true,
         .lbr = 1, .n_act = 4, .acts = {"Tanh", "Sigmoid", "Sigmoid", "Tanh"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s %s layout %d%s%s%s", cases[i].op, cases[i].dir,
                 cases[i].layout, cases[i].peep ? " peepholes" : "",
                 cases[i].n_act ? " activations" : "",
                 cases[i].lbr ? " linear_before_reset" : "");
        expect_equal(rnn_model(&cases[i]), what);
    }
}

static void test_rnn_refusals(void)
{
    static const double seq_short[RB] = {RT, RT - 1};
    RnnCase relu = {.op = "RNN", .dir = "forward", .n_act = 1, .acts = {"Relu"}};
    expect_refused(rnn_model(&relu), "RNN Relu", "activation Relu");
    RnnCase clip = {.op = "LSTM", .dir = "forward", .clip = 3};
    expect_refused(rnn_model(&clip), "LSTM clip", "clip");
    RnnCase gclip = {.op = "GRU", .dir = "forward", .clip = 3};
    expect_refused(rnn_model(&gclip), "GRU clip", "clip");
    RnnCase acts = {.op = "LSTM", .dir = "bidirectional", .n_act = 6,
                    .acts = {"Sigmoid", "Tanh", "Tanh", "Tanh", "Tanh", "Tanh"}};
    expect_refused(rnn_model(&acts), "LSTM directions' activations", "activations differ");
    RnnCase seq = {.op = "GRU", .dir = "forward", .seq = seq_short};
    expect_refused(rnn_model(&seq), "GRU sequence_lens", "sequence_lens");
}

/* MIL's gru stacks reset, output (new), update; ONNX update, reset,
 * hidden. The bias is Wb + Rb per gate. */
static void test_gru_layout(void)
{
    IrModel *m = mk_model();
    int64_t xd[3] = {2, 1, 1}, wd[3] = {1, 3, 1}, bd[2] = {1, 6};
    double w[3] = {1, 2, 3}, r[3] = {4, 5, 6}, b[6] = {1, 2, 3, 10, 20, 30};
    mk_input(m, "X", IR_FLOAT, 3, xd);
    mk_init(m, "W", IR_FLOAT, 3, wd, w, 3);
    mk_init(m, "R", IR_FLOAT, 3, wd, r, 3);
    mk_init(m, "B", IR_FLOAT, 2, bd, b, 6);
    const char *in[4] = {"X", "W", "R", "B"}, *out[2] = {"Y", "Y_h"};
    IrNode *n = mk_node(m, "GRU", 4, in, 2, out, true);
    ir_node_set_attr(n, ir_attr_int("hidden_size", 1));
    IrError err;
    MilModel *mm = export_of(m, &err);
    T_CHECK(mm != NULL, "GRU exports: %s", mm ? "" : err.msg);
    const MilOp *op = mm ? cmt_find_op(mm, "gru", 0) : NULL;
    static const float wi[3] = {2, 3, 1}, wh[3] = {5, 6, 4}, bb[3] = {22, 33, 11};
    T_CHECK(f32s_are(cmt_param_of(mm, op, "weight_ih"), wi, 3), "gru weight_ih gates r, o, z");
    T_CHECK(f32s_are(cmt_param_of(mm, op, "weight_hh"), wh, 3), "gru weight_hh gates r, o, z");
    T_CHECK(f32s_are(cmt_param_of(mm, op, "bias"), bb, 3), "gru bias = Wb + Rb, gates r, o, z");
    mil_model_free(mm);
    ir_model_free(m);
}

/* MIL's peephole is [input, forget, output]; ONNX's P input, output,
 * forget. A reverse GRU or LSTM is a forward op between two time
 * reversals; a bidirectional RNN two rnn ops joined by concat. */
static void test_peephole_and_reverse_layout(void)
{
    RnnCase pc = {.op = "LSTM", .dir = "forward", .peep = true};
    IrModel *m = rnn_model(&pc);
    IrError err;
    MilModel *mm = export_of(m, &err);
    const MilTensor *p = mm ? cmt_param_of(mm, cmt_find_op(mm, "lstm", 0), "peephole") : NULL;
    const IrTensor *pt = NULL;
    for (size_t i = 0; i < m->graph->inits.n; i++)
        if (!strcmp(((IrTensor *)m->graph->inits.p[i])->name, "P"))
            pt = m->graph->inits.p[i];
    bool ok = p && pt && p->nbytes == 3 * RH * 4;
    static const int perm[3] = {0, 2, 1};
    for (size_t g = 0; ok && g < 3; g++)
        ok = !memcmp(p->data + g * RH * 4, pt->raw.data + (size_t)perm[g] * RH * 4, RH * 4);
    T_CHECK(ok, "lstm peephole gates i, f, o from ONNX's i, o, f");
    mil_model_free(mm);
    ir_model_free(m);

    static const char *const ops[2][2] = {{"GRU", "gru"}, {"LSTM", "lstm"}};
    for (int i = 0; i < 2; i++) {
        RnnCase rc = {.op = ops[i][0], .dir = "reverse"};
        m = rnn_model(&rc);
        mm = export_of(m, &err);
        const MilTensor *d = mm ? cmt_param_of(mm, cmt_find_op(mm, ops[i][1], 0), "direction") : NULL;
        T_CHECK(mm && count_ops(mm, "reverse") == 2 && d && d->n_strings == 1 &&
                    !strcmp(d->strings[0], "forward"),
                "reverse %s: a forward %s between two reverse ops", ops[i][0], ops[i][1]);
        mil_model_free(mm);
        ir_model_free(m);
    }

    RnnCase lc = {.op = "GRU", .dir = "forward", .bias = true, .lbr = 1};
    m = rnn_model(&lc);
    mm = export_of(m, &err);
    T_CHECK(mm && count_ops(mm, "gru") == 0 && count_ops(mm, "linear") == 1 + 2 * RT,
            "GRU linear_before_reset 1: no gru op, one input linear and two per step");
    mil_model_free(mm);
    ir_model_free(m);

    RnnCase bc = {.op = "RNN", .dir = "bidirectional", .init_h = true};
    m = rnn_model(&bc);
    mm = export_of(m, &err);
    T_CHECK(mm && count_ops(mm, "rnn") == 2 && count_ops(mm, "concat") == 2 &&
                count_ops(mm, "split") == 1,
            "bidirectional RNN: two rnn ops, the state split, outputs concatenated");
    mil_model_free(mm);
    ir_model_free(m);
}

/* ---- elementwise: the values that tell the compositions apart -------------------- */

/* y = op(x * 0 + a[, b]) with a, b constants: x, an input of a's type,
 * keeps the node from being folded (its value is not known before the
 * run) while the op sees exactly a's values; attributes set by the
 * caller. */
static IrModel *const_model(const char *op, int32_t elem, size_t n, const double *a,
                            const double *b, IrNode **node)
{
    IrModel *m = mk_model();
    int64_t dims[1] = {(int64_t)n};
    double zero = 0;
    mk_input(m, "x", elem, 1, dims);
    mk_init(m, "zero", elem, 0, NULL, &zero, 1);
    mk_init(m, "a", elem, 1, dims, a, n);
    if (b)
        mk_init(m, "b", elem, 1, dims, b, n);
    const char *i1[2] = {"x", "zero"}, *o1[1] = {"x0"}, *i2[2] = {"x0", "a"}, *o2[1] = {"xa"};
    mk_node(m, "Mul", 2, i1, 1, o1, false);
    mk_node(m, "Add", 2, i2, 1, o2, false);
    const char *in[2] = {"xa", "b"}, *out[1] = {"y"};
    *node = mk_node(m, op, b ? 2 : 1, in, 1, out, true);
    return m;
}

static void test_elementwise(void)
{
    static const double ties[] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.49999997,
                                  3.7, -3.7, 1e8, 4.5, 16777215};
    static const double ix[] = {7, -7, 7, -7, 6, -6, 0, 5}, iy[] = {2, 2, -2, -2, -3, 4, 3, 5};
    /* the last two: x / y rounds up to an integer in float32 */
    static const double fx[] = {5.5, -5.5, 5.5, -5.5, 1, -0.25, 62.01174545288086,
                                -91.12327575683594},
                        fy[] = {2, 2, -2, -2, 0.3, 0.1, 1.4421336650848389, 2.7613115310668945};
    static const double wide[] = {-1e4, -3, -1e-3, 0, 1e-3, 0.7, 5, 1e4};
    static const double ge1[] = {1, 1.0001, 1.5, 2, 10, 1e4};
    static const double sh[] = {-2, -1, -0.5, 0, 0.5, 1, 2, -1.0001};
    IrNode *n;
    expect_equal(const_model("Round", IR_FLOAT, 13, ties, NULL, &n), "Round ties to even");
    expect_equal(const_model("Div", IR_INT32, 8, ix, iy, &n), "int32 Div truncates");
    expect_equal(const_model("Mod", IR_INT32, 8, ix, iy, &n), "int32 Mod fmod 0 floors");
    IrModel *m = const_model("Mod", IR_INT32, 8, ix, iy, &n);
    ir_node_set_attr(n, ir_attr_int("fmod", 1));
    expect_equal(m, "int32 Mod fmod 1 truncates");
    m = const_model("Mod", IR_FLOAT, 8, fx, fy, &n);
    ir_node_set_attr(n, ir_attr_int("fmod", 1));
    expect_equal(m, "float Mod fmod 1");
    expect_equal(const_model("Asinh", IR_FLOAT, 8, wide, NULL, &n), "Asinh");
    expect_equal(const_model("Acosh", IR_FLOAT, 6, ge1, NULL, &n), "Acosh");
    m = const_model("Celu", IR_FLOAT, 8, wide, NULL, &n);
    ir_node_set_attr(n, ir_attr_float("alpha", 2.0f));
    expect_equal(m, "Celu alpha 2");
    m = const_model("Shrink", IR_FLOAT, 8, sh, NULL, &n);
    ir_node_set_attr(n, ir_attr_float("lambd", 1.0f));
    ir_node_set_attr(n, ir_attr_float("bias", 0.5f));
    expect_equal(m, "Shrink lambd 1 bias 0.5");
    double inf[] = {INFINITY, -INFINITY, NAN, 1, -1e38};
    for (int k = 0; k < 4; k++) {
        m = const_model("IsInf", IR_FLOAT, 5, inf, NULL, &n);
        ir_node_set_attr(n, ir_attr_int("detect_positive", k & 1));
        ir_node_set_attr(n, ir_attr_int("detect_negative", k >> 1));
        char what[64];
        snprintf(what, sizeof what, "IsInf positive %d negative %d", k & 1, k >> 1);
        expect_equal(m, what);
    }
    expect_equal(const_model("IsNaN", IR_FLOAT, 5, inf, NULL, &n), "IsNaN");
    m = const_model("Mod", IR_FLOAT, 8, fx, fy, &n);
    expect_refused(m, "float Mod fmod 0", "fmod 1");
    static const double i8x[] = {7, -7}, i8y[] = {2, 2};
    expect_refused(const_model("Div", IR_INT8, 2, i8x, i8y, &n), "int8 Div", "int32 only");
    /* BitShift takes unsigned types only, which no Core ML input has: the
     * graph input is refused first, naming its type */
    m = const_model("BitShift", IR_UINT8, 2, i8y, i8y, &n);
    IrError err;
    MilModel *mm = export_of(m, &err);
    T_CHECK(!mm && strstr(err.msg, "'x' (UINT8) has no Core ML multi-array type"),
            "BitShift: its uint8 input is refused: %s", mm ? "exported" : err.msg);
    mil_model_free(mm);
    ir_model_free(m);
}

int main(void)
{
    test_gru_layout();
    test_peephole_and_reverse_layout();
    test_rnn_round_trips();
    test_rnn_refusals();
    test_elementwise();
    return t_done("test_coreml_cmrnn");
}
