/*
 * test_known - the one rule for "is this value known, and what is it"
 * (src/analysis/known.h), as inference, the adapters and the passes read it.
 *
 * Each model is built as text (passes_build.h), inferred, and kv_value is
 * asked about its values; the expected values are worked out by hand from
 * the model (shapes, divisions), never taken from the program.
 */
#include <stdio.h>
#include <unistd.h>

#include "analysis/infer.h"
#include "convert/convert.h"
#include "driver/job.h"
#include "analysis/known.h"
#include "passes_build.h"
#include "adapters/adapters.h"

/* Infers m; the value named `name` of its main graph. */
static const IrValue *kn_value(IrModel *m, const char *name)
{
    IrError err;
    InfOptions opt = {.use_value_info = true, .run = ev_prove_node};
    T_CHECK(inf_model(m, &opt, &err) == 0, "inference: %s", err.msg);
    return ir_graph_lookup(m->graph, name);
}

/* Whether value `name` is known with exactly these elements. */
static void kn_expect(IrModel *m, const char *name, size_t n, const double *want)
{
    const IrValue *v = ir_graph_lookup(m->graph, name);
    const IrTensor *t = kv_value(v);
    T_CHECK(t != NULL, "%s: not known", name);
    if (!t)
        return;
    IrError err;
    EvValue *e = ev_from_ir_tensor(t, &err);
    T_CHECK(e && e->numel == n, "%s: %zu elements, want %zu", name, e ? e->numel : 0, n);
    for (size_t k = 0; e && k < n && k < e->numel; k++)
        T_CHECK(ev_get_f(e, k) == want[k], "%s[%zu] = %g, want %g", name, k,
                ev_get_f(e, k), want[k]);
    ev_unref(e);
}

static void kn_unknown(IrModel *m, const char *name, const char *why)
{
    T_CHECK(kv_value(ir_graph_lookup(m->graph, name)) == NULL, "%s is known: %s", name, why);
}

/* Initializers, Constants and graph inputs. */
static void test_leaves(void)
{
    IrModel *m = tb_model("opset 13\n"
                          "input x float 2,3\n"
                          "init w float 3 1.5,2.5,3.5\n"
                          "f = Constant value_floats=[0.25,4.0]\n"
                          "i = Constant value_int=7\n"
                          "y = Add x,w\n"
                          "output y\n");
    kn_value(m, "x");
    kn_expect(m, "w", 3, (double[]){1.5, 2.5, 3.5});
    kn_expect(m, "f", 2, (double[]){0.25, 4.0});
    kn_expect(m, "i", 1, (double[]){7});
    kn_unknown(m, "x", "a graph input");
    kn_unknown(m, "y", "it reads a graph input");
    ir_model_free(m);
}

/* A graph input with an initializer is a default the caller may override:
 * not known from IR 4 on; in IR 3 every initializer had to be an input, and
 * there it is a constant. */
static void test_input_defaults(void)
{
    for (int ir = 3; ir <= 4; ir++) {
        IrModel *m = tb_model("opset 8\n"
                              "input x float 2\n"
                              "input d float 2\n"
                              "init d float 2 3.0,5.0\n"
                              "e = Mul d,d\n"
                              "y = Add x,e\n"
                              "output y\n");
        m->ir_version = ir;
        kn_value(m, "x");
        if (ir == 3) {
            kn_expect(m, "d", 2, (double[]){3, 5});
            kn_expect(m, "e", 2, (double[]){9, 25});
        } else {
            kn_unknown(m, "d", "an overridable default (IR 4)");
            kn_unknown(m, "e", "computed from an overridable default");
        }
        /* the adapters read the same rule */
        T_CHECK((ad_const(ir_graph_lookup(m->graph, "d")) != NULL) == (ir == 3),
                "IR %d: ad_const disagrees with kv_value", ir);
        ir_model_free(m);
    }
}

/* Upsample scales as old exporters compute them: size / Shape(x). */
static void test_shape_chain(void)
{
    IrModel *m = tb_model("opset 13\n"
                          "input x float 1,2,3,4\n"
                          "s = Shape x\n"
                          "n = Size x\n"
                          "sf = Cast s to=1\n"
                          "init size float 4 1.0,2.0,6.0,10.0\n"
                          "sc = Div size,sf\n"
                          "y = Resize x,,sc mode=\"nearest\"\n"
                          "output y\n");
    kn_value(m, "x");
    kn_expect(m, "s", 4, (double[]){1, 2, 3, 4});
    kn_expect(m, "n", 1, (double[]){24});
    kn_expect(m, "sc", 4, (double[]){1, 1, 2, 2.5});
    kn_unknown(m, "y", "it reads x's values");
    ir_model_free(m);
}

/* PyTorch's size 15 on width 7 at opset 9: Upsample by 15/7 = 2.142857f.
 * 7 x 2.142857f is 15 in float32, as onnx's shape inference and ONNX
 * Runtime compute it (14.9999995 exactly); the length is float32's
 * (src/schema/resize.h), so the shape is known. */
static void test_resize_len_f32(void)
{
    IrModel *m = tb_model("opset 9\n"
                          "input x float 1,2,7\n"
                          "init sc float 3 1.0,1.0,2.142857\n"
                          "y = Upsample x,sc mode=\"linear\"\n"
                          "s = Shape y\n"
                          "output s\n");
    kn_value(m, "x");
    kn_expect(m, "s", 3, (double[]){1, 2, 15});
    ir_model_free(m);
}

/* Shape-15's start/end, and a Gather of the one static dim of a shape
 * whose other dims are symbolic (proved by shape arithmetic). */
static void test_partial_shapes(void)
{
    IrModel *m = tb_model("opset 15\n"
                          "input x float N,3,8\n"
                          "s = Shape x start=1\n"
                          "t = Shape x start=-1\n"
                          "a = Shape x\n"
                          "init one int64 - 1\n"
                          "c = Gather a,one axis=0\n"
                          "init zero int64 - 0\n"
                          "b = Gather a,zero axis=0\n"
                          "y = Identity x\n"
                          "output y\n");
    kn_value(m, "x");
    kn_expect(m, "s", 2, (double[]){3, 8});
    kn_expect(m, "t", 1, (double[]){8});
    kn_expect(m, "c", 1, (double[]){3});
    kn_unknown(m, "a", "dim N is symbolic");
    kn_unknown(m, "b", "dim N is symbolic");
    ir_model_free(m);
}

/* What is never proved: random ops, large results, unknown dims. */
static void test_limits(void)
{
    IrModel *m = tb_model("opset 13\n"
                          "input x float 2,M\n"
                          "init big int64 1 100000\n"
                          "z = ConstantOfShape big\n"
                          "init small int64 1 3\n"
                          "k = ConstantOfShape small\n"
                          "r = RandomUniformLike k\n"
                          "s = Shape x\n"
                          "init a float 2,2 1.0\n"
                          "p = MatMul a,a\n"
                          "y = Identity x\n"
                          "output y\n");
    kn_value(m, "x");
    kn_unknown(m, "z", "more elements than KV_MAX_ELEMS");
    kn_unknown(m, "p", "a MatMul's work is not linear in its size (left to fold)");
    kn_expect(m, "k", 3, (double[]){0, 0, 0});
    kn_unknown(m, "r", "a random op");
    kn_unknown(m, "s", "dim M is unknown");
    ir_model_free(m);
}

/* convert --input-shape: fixed dims make Upsample's computed scales known,
 * so opset 9 -> 8 converts; without it the dims are symbolic and the
 * conversion is refused as needing a constant. */
static void test_input_shape_convert(void)
{
    IrModel *m = tb_model("opset 9\n"
                          "input x float 1,1,H,W\n"
                          "s = Shape x\n"
                          "hw = Slice s starts=[2] ends=[4]\n"
                          "hwf = Cast hw to=1\n"
                          "init two float 2 2.0\n"
                          "big = Mul hwf,two\n"
                          "sc2 = Div big,hwf\n"
                          "init ones float 2 1.0\n"
                          "scales = Concat ones,sc2 axis=0\n"
                          "y = Upsample x,scales mode=\"nearest\"\n"
                          "output y\n");
    m->ir_version = 4;
    IrValueInfo *y = m->graph->outputs.p[0];
    y->type = ir_type_tensor(1, 4, (int64_t[]){-1, -1, -1, -1});
    char dir[] = "/tmp/test_known_XXXXXX", in[128], out[160];
    T_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(in, sizeof in, "%s/in.onnx", dir);
    snprintf(out, sizeof out, "%s/out.onnx", dir);
    IrError err;
    T_CHECK(save_model_file(m, in, NULL, &err) == 0, "save: %s", err.msg);
    ir_model_free(m);
    for (int fixed = 0; fixed <= 1; fixed++) {
        JobOptions o = {.command = "convert", .cv = {.opset = 8},
                        .input_shape = {"x=1,1,3,5"}, .n_input_shape = (size_t)fixed};
        JobReport r = {0};
        int rc = job_convert(&o, in, out, &r, NULL);
        if (fixed)
            T_CHECK(rc == 0 && r.status == JOB_OK, "with --input-shape: %s", r.msg);
        else
            T_CHECK(rc < 0 && r.status == JOB_REFUSED && r.reason &&
                        !strcmp(r.reason, "not-constant"),
                    "without --input-shape: want a not-constant refusal, got '%s'", r.msg);
        job_report_free(&r);
        if (fixed) {
            IrModel *c = NULL;
            LoadOptions lo = {0};
            T_CHECK(load_model_file(out, &lo, &c, &err) == 0, "reload: %s", err.msg);
            const IrAttr *a = NULL;
            for (IrNode *k = c ? c->graph->first : NULL; k; k = k->next)
                if (!strcmp(k->op_type, "Upsample"))
                    a = ir_node_attr(k, "scales");
            T_CHECK(a && a->n_floats == 4 && a->floats[2] == 2.0f && a->floats[3] == 2.0f,
                    "Upsample-7 scales attribute [1,1,2,2] expected");
            /* the chain that computed the scales is read by nothing now */
            T_CHECK(c && c->graph->n_nodes == 1, "%zu nodes left, want the Upsample alone",
                    c ? c->graph->n_nodes : 0);
            ir_model_free(c);
        }
        unlink(out);
    }
    unlink(in);
    rmdir(dir);
}

/* Clip-11 -> 6: the bounds become attributes and their initializers go;
 * an initializer nobody read before the conversion stays. */
static void test_sweep_inits(void)
{
    IrModel *m = tb_model("opset 11\n"
                          "input x float 3\n"
                          "init lo float - -1.0\n"
                          "init hi float - 1.0\n"
                          "init spare float - 5.0\n"
                          "y = Clip x,lo,hi\n"
                          "output y\n");
    CvOptions o = {.opset = 6};
    CvReport r = {0};
    IrError err;
    T_CHECK(cv_convert(m, &o, &r, &err) == 0, "Clip 11 -> 6: %s", err.msg);
    cv_report_free(&r);
    bool lo = false, hi = false, spare = false;
    for (size_t i = 0; i < m->graph->inits.n; i++) {
        const IrTensor *t = m->graph->inits.p[i];
        lo = lo || !strcmp(t->name, "lo");
        hi = hi || !strcmp(t->name, "hi");
        spare = spare || !strcmp(t->name, "spare");
    }
    T_CHECK(!lo && !hi, "the consumed bounds' initializers are still there");
    T_CHECK(spare, "an initializer unread in the input was removed");
    ir_model_free(m);
}

/* One inference run proves at most KV_MAX_WORK elements: 300 Adds of a
 * 32768-element constant (98304 elements each) stop being proved after
 * 170, so a hostile model cannot make inference store gigabytes. */
static void test_work_bound(void)
{
    size_t cap = 64 * 300 + 64;
    char *text = malloc(cap), *p = text;
    p += snprintf(p, cap, "input x float 1\ninit a float 32768 1.0\n");
    for (int i = 0; i < 300; i++)
        p += snprintf(p, cap - (size_t)(p - text), "y%d = Add a,a\n", i);
    snprintf(p, cap - (size_t)(p - text), "z = Identity x\noutput z\n");
    IrModel *m = tb_model(text);
    free(text);
    kn_value(m, "x");
    size_t known = 0;
    for (int i = 0; i < 300; i++) {
        char name[16];
        snprintf(name, sizeof name, "y%d", i);
        known += kv_value(ir_graph_lookup(m->graph, name)) != NULL;
    }
    T_CHECK(known == KV_MAX_WORK / (3 * 32768), "%zu of 300 Adds proved, want %u", known,
            KV_MAX_WORK / (3 * 32768));
    ir_model_free(m);
}

int main(void)
{
    test_work_bound();
    test_sweep_inits();
    test_input_shape_convert();
    test_leaves();
    test_input_defaults();
    test_shape_chain();
    test_resize_len_f32();
    test_partial_shapes();
    test_limits();
    return t_done("test_known");
}
