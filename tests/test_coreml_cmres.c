/* The Core ML lowering of Resize, DepthToSpace/SpaceToDepth, LRN,
 * LpNormalization, MeanVarianceNormalization, LpPool/GlobalLpPool and
 * Einsum (src/coreml/resize.c, tensor.c, norm.c, nn.c, einsum.c): which
 * MIL op each ONNX attribute combination becomes, that the round trip
 * ONNX -> MIL -> ONNX evaluates equal on seeded random inputs, and that
 * every combination no MIL op computes alike is refused with its reason.
 *
 * The expected MIL op of each Resize case comes from the MIL ops' sampling
 * rules worked by hand (see the comments), not from our output. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "coreml/coreml.h"
#include "analysis/infer.h"
#include "eval/eval.h"
#include "coreml/mil.h"
#include "mlp_models.h"
#include "passes_build.h"
#include "t.h"
#include "eval/verify.h"

/* Whether the exported main block has an op of type `op`. */
static bool cr_has_op(const MilModel *mm, const char *op)
{
    const MilBlock *b = mm->fn[0]->block;
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, op))
            return true;
    return false;
}

/* Exports `text` (converted to CM_ONNX_OPSET); a MIL op named `op` must be
 * emitted (NULL: none checked) and the round trip must evaluate equal. */
static void cr_lowers(const char *what, const char *text, const char *op)
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
    if (rc == 0 && op)
        T_CHECK(cr_has_op(mm, op), "%s: no MIL op %s emitted", what, op);
    if (rc == 0) {
        rc = cm_import(mm, &rt, &err);
        T_CHECK(rc == 0, "%s: import: %s", what, err.msg);
    }
    if (rc == 0) {
        rc = chk_require(rt, "round trip", &err);
        T_CHECK(rc == 0, "%s: raised model: %s", what, err.msg);
    }
    if (rc == 0) {
        VfOptions vo = {.seed = 11};
        rc = vf_compare(orig, rt, &vo, &err);
        T_CHECK(rc == 0, "%s: round trip differs: %s", what, err.msg);
    }
    mil_model_free(mm);
    ir_model_free(rt);
    ir_model_free(orig);
    ir_model_free(conv);
}

/* Exports `text`; it must be refused with a message holding `why`. */
static void cr_refuses(const char *what, const char *text, const char *why)
{
    IrModel *conv = tb_model_typed(text);
    MilModel *mm = NULL;
    IrError err = {{0}};
    CvOptions co = {.opset = CM_ONNX_OPSET};
    CvReport cr = {0};
    CmOptions o = {.target = -1};
    CmReport rep;
    int rc = cv_convert(conv, &co, &cr, &err);
    cv_report_free(&cr);
    T_CHECK(rc == 0, "%s: convert: %s", what, err.msg);
    if (rc == 0) {
        rc = cm_export(conv, &o, &mm, &rep, &err);
        T_CHECK(rc < 0, "%s: exported, expected a refusal (%s)", what, why);
        T_CHECK(rc == 0 || strstr(err.msg, why), "%s: refusal '%s' lacks '%s'", what, err.msg,
                why);
    }
    mil_model_free(mm);
    ir_model_free(conv);
}

/* Like cr_refuses, for models too large to convert and run: the export
 * alone must refuse. */
static void cr_refuses_only(const char *what, const char *text, const char *why)
{
    IrModel *m = tb_model(text);
    MilModel *mm = NULL;
    IrError err = {{0}};
    CmOptions o = {.target = -1};
    CmReport rep;
    int rc = cm_export(m, &o, &mm, &rep, &err);
    T_CHECK(rc < 0 && strstr(err.msg, why), "%s: expected a refusal with '%s', got %d: %s",
            what, why, rc, err.msg);
    mil_model_free(mm);
    ir_model_free(m);
}

#define CR_HEAD "opset 17\ninput x float 1,2,3,4\n"

static void test_resize_nearest(void)
{
    /* asymmetric floor by whole factors: floor(i/k) is
     * upsample_nearest_neighbor's rule */
    cr_lowers("nearest asymmetric floor x2,x3",
              CR_HEAD "init s float 4 1,1,2,3\n"
                      "y = Resize x,,s mode=\"nearest\" coordinate_transformation_mode="
                      "\"asymmetric\" nearest_mode=\"floor\"\noutput y\n",
              "upsample_nearest_neighbor");
    /* half_pixel round_prefer_ceil is floor((i+0.5)*in/out), the rule of
     * resize_nearest_neighbor, at any sizes: 3->5 and 4->7 */
    cr_lowers("nearest half_pixel round_prefer_ceil 3x4->5x7",
              CR_HEAD "init z int64 4 1,2,5,7\n"
                      "y = Resize x,,,z mode=\"nearest\" nearest_mode=\"round_prefer_ceil\"\n"
                      "output y\n",
              "resize_nearest_neighbor");
    /* half_pixel round_prefer_ceil, 2->3 (and 4->6): round-half-up of
     * (i+0.5)/1.5-0.5 is floor((i+0.5)/1.5): 0,1,1 (0,1,1,2,3,3) */
    cr_lowers("nearest half_pixel round_prefer_ceil x1.5",
              "opset 17\ninput x float 1,1,2,4\ninit z int64 4 1,1,3,6\n"
              "y = Resize x,,,z mode=\"nearest\" nearest_mode=\"round_prefer_ceil\"\n"
              "output y\n",
              "resize_nearest_neighbor");
    /* half_pixel round_prefer_floor by 2: i/2-0.25 never ties, rounds to
     * floor(i/2) */
    cr_lowers("nearest half_pixel x2 (the ONNX defaults)",
              CR_HEAD "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"nearest\"\noutput y\n",
              "upsample_nearest_neighbor");
    /* No MIL resize op picks these pixels: each resized axis becomes a
     * gather of a constant index table. ties: 2->3 gives coordinate 0.5
     * at i=1, ONNX rounds it down, MIL up */
    cr_lowers("nearest half_pixel round_prefer_floor x1.5",
              "opset 17\ninput x float 1,1,2,2\ninit z int64 4 1,1,3,3\n"
              "y = Resize x,,,z mode=\"nearest\"\noutput y\n",
              "gather");
    cr_lowers("nearest asymmetric round_prefer_ceil",
              CR_HEAD "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"nearest\" "
                      "coordinate_transformation_mode=\"asymmetric\" "
                      "nearest_mode=\"round_prefer_ceil\"\noutput y\n",
              "gather");
    cr_lowers("nearest align_corners floor",
              CR_HEAD "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"nearest\" "
                      "coordinate_transformation_mode=\"align_corners\" "
                      "nearest_mode=\"floor\"\noutput y\n",
              "gather");
    /* PyTorch's F.interpolate(mode="nearest", size=(11, 13)) from 5x6 */
    cr_lowers("nearest asymmetric floor 5x6->11x13",
              "opset 17\ninput x float 1,2,5,6\ninit z int64 4 1,2,11,13\n"
              "y = Resize x,,,z mode=\"nearest\" coordinate_transformation_mode="
              "\"asymmetric\" nearest_mode=\"floor\"\noutput y\n",
              "gather");
    /* F.interpolate(mode="nearest", scale_factor=2.2) from 5x6: output 11
     * of the last dim is at 11 / 2.2f, 5 in float32 (ONNX Runtime,
     * PyTorch) and 4.9999999 exactly; the pick is float32's (src/schema/resize.h),
     * baked into the gather (tests/resize_rounding_ort.py has ORT judge it) */
    cr_lowers("nearest asymmetric floor by scales 2.2",
              "opset 17\ninput x float 1,2,5,6\ninit s float 4 1,1,2.2,2.2\n"
              "y = Resize x,,s mode=\"nearest\" coordinate_transformation_mode="
              "\"asymmetric\" nearest_mode=\"floor\"\noutput y\n",
              "gather");
    cr_lowers("nearest, channels and batch resized",
              CR_HEAD "init s float 4 2,2,2,1\ny = Resize x,,s mode=\"nearest\"\noutput y\n",
              "gather");
}

static void test_resize_linear(void)
{
    cr_lowers("linear half_pixel 3x4->5x7",
              CR_HEAD "init z int64 4 1,2,5,7\ny = Resize x,,,z mode=\"linear\"\noutput y\n",
              "resize_bilinear");
    cr_lowers("linear pytorch_half_pixel 3x4->5x7",
              CR_HEAD "init z int64 4 1,2,5,7\ny = Resize x,,,z mode=\"linear\" "
                      "coordinate_transformation_mode=\"pytorch_half_pixel\"\noutput y\n",
              "resize_bilinear");
    cr_lowers("linear align_corners x2",
              CR_HEAD "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"linear\" "
                      "coordinate_transformation_mode=\"align_corners\"\noutput y\n",
              "resize_bilinear");
    cr_lowers("linear asymmetric 3x4->2x7",
              CR_HEAD "init z int64 4 1,2,2,7\ny = Resize x,,,z mode=\"linear\" "
                      "coordinate_transformation_mode=\"asymmetric\"\noutput y\n",
              "resize_bilinear");
    /* PyTorch's Upsample at opset 9 by scale_factor = 15/7 from width 7:
     * floor(7 x 2.142857f) is 15 in float32 (onnx's shape inference, ONNX
     * Runtime, PyTorch), 14.9999995 exactly; the length is float32's.
     * ONNX samples i / 2.142857f, resize_bilinear DEFAULT i x 7/15: equal
     * to a rounding */
    cr_lowers("linear asymmetric, output length on a rounding boundary",
              "opset 17\ninput x float 1,2,7\ninit s float 3 1,1,2.142857\n"
              "y = Resize x,,s mode=\"linear\" coordinate_transformation_mode="
              "\"asymmetric\"\noutput y\n",
              "resize_bilinear");
    cr_lowers("linear half_pixel, only W resized",
              CR_HEAD "init s float 4 1,1,1,0.5\ny = Resize x,,s mode=\"linear\"\noutput y\n",
              "resize_bilinear");
    /* an empty sizes beside scales is not given (Resize-11's spelling),
     * also when it comes through a Cast, as in float16 models: the scales
     * resize, x2 align_corners as above */
    cr_lowers("linear align_corners x2, sizes a Cast of an empty constant",
              CR_HEAD "init s float 4 1,1,2,2\ninit e float16 0 0\nzc = Cast e to=7\n"
                      "y = Resize x,,s,zc mode=\"linear\" "
                      "coordinate_transformation_mode=\"align_corners\"\noutput y\n",
              "resize_bilinear");
    /* What no MIL resize op samples becomes a product with a constant
     * matrix per resized axis. scale 0.6 on 4: ONNX divides by 0.6, MIL
     * by out/in = 0.5 */
    cr_lowers("linear half_pixel scale 0.6",
              CR_HEAD "init s float 4 1,1,1,0.6\ny = Resize x,,s mode=\"linear\"\noutput y\n",
              "matmul");
    /* pytorch_half_pixel to length 1 samples 0; UNALIGN_CORNERS the
     * centre, and the other grids divide by 0 there */
    cr_lowers("linear pytorch_half_pixel to length 1",
              CR_HEAD "init z int64 4 1,2,1,4\ny = Resize x,,,z mode=\"linear\" "
                      "coordinate_transformation_mode=\"pytorch_half_pixel\"\noutput y\n",
              "gather");
    /* F.interpolate(mode="bilinear", scale_factor=2.2): 5x6 -> 11x13,
     * sampled by 2.2 where MIL samples by 13/6 */
    cr_lowers("linear half_pixel 5x6->11x13 by scales",
              "opset 17\ninput x float 1,2,5,6\ninit s float 4 1,1,2.2,2.2\n"
              "y = Resize x,,s mode=\"linear\"\noutput y\n",
              "matmul");
    cr_lowers("cubic", CR_HEAD "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"cubic\"\n"
                               "output y\n",
              "matmul");
    cr_lowers("cubic a=-0.5 exclude_outside, shrinking",
              CR_HEAD "init z int64 4 1,2,2,3\ny = Resize x,,,z mode=\"cubic\" "
                      "cubic_coeff_a=-0.5 exclude_outside=1\noutput y\n",
              "matmul");
    cr_lowers("channels resized, linear",
              CR_HEAD "init s float 4 1,2,2,2\ny = Resize x,,s mode=\"linear\"\noutput y\n",
              "transpose");
    /* trilinear: F.interpolate on a 5-D input */
    cr_lowers("trilinear rank 5",
              "opset 17\ninput x float 1,2,3,4,5\ninit z int64 5 1,2,5,7,4\n"
              "y = Resize x,,,z mode=\"linear\" coordinate_transformation_mode="
              "\"align_corners\"\noutput y\n",
              "matmul");
    cr_lowers("linear rank 1", "opset 17\ninput x float 6\ninit z int64 1 9\n"
                               "y = Resize x,,,z mode=\"linear\"\noutput y\n",
              "matmul");
    /* a crop reaching outside the input: extrapolation_value there */
    cr_lowers("tf_crop_and_resize, crop past the edges",
              CR_HEAD "init r float 8 0,0,-0.5,0.2,1,1,1.5,0.9\ninit z int64 4 1,2,5,7\n"
                      "y = Resize x,r,,z mode=\"linear\" extrapolation_value=7.0 "
                      "coordinate_transformation_mode=\"tf_crop_and_resize\"\noutput y\n",
              "add");
    cr_lowers("cubic, float16", "opset 17\ninput x float16 1,2,3,4\ninit z int64 4 1,2,5,7\n"
                                "y = Resize x,,,z mode=\"cubic\"\noutput y\n",
              "matmul");
    cr_lowers("rank 2 by 1: nothing resized", "opset 17\ninput x float 3,4\n"
                                               "init s float 2 1,1\n"
                                               "y = Resize x,,s mode=\"cubic\"\noutput y\n",
              "identity");
    cr_refuses_only("cubic, matrix too large",
                    "opset 17\ninput x float 1,1,1,4096\ninit z int64 4 1,1,1,4100\n"
                    "y = Resize x,,,z mode=\"cubic\"\noutput y\n",
                    "needs a matrix of more than");
    cr_refuses("scales computed",
               CR_HEAD "input s float 4\ny = Resize x,,s mode=\"nearest\"\noutput y\n",
               "not a constant");
    cr_lowers("rank 2", "opset 17\ninput x float 3,4\ninit s float 2 2,2\n"
                        "y = Resize x,,s mode=\"nearest\"\noutput y\n",
              "gather");
    cr_lowers("tf_crop_and_resize",
              CR_HEAD "init r float 8 0,0,0,0,1,1,1,1\ninit z int64 4 1,2,5,7\n"
                      "y = Resize x,r,,z mode=\"linear\" "
                      "coordinate_transformation_mode=\"tf_crop_and_resize\"\noutput y\n",
              "matmul");
    cr_refuses("tf_crop_and_resize, roi computed",
               CR_HEAD "input r float 8\ninit z int64 4 1,2,5,7\n"
                       "y = Resize x,r,,z mode=\"linear\" "
                       "coordinate_transformation_mode=\"tf_crop_and_resize\"\noutput y\n",
               "roi that is not a constant");
    cr_refuses("int32 input", "opset 17\ninput x int32 1,2,3,4\ninit s float 4 1,1,2,2\n"
                              "y = Resize x,,s mode=\"nearest\"\noutput y\n",
               "fp16 and fp32 only");
}

#define CR_DYN "opset 17\ninput x float N,2,H,W\n"

/* Input dims unknown: only what equals a MIL op at every size lowers. */
static void test_resize_dynamic(void)
{
    cr_lowers("dynamic nearest asymmetric floor x2,x3",
              CR_DYN "init s float 4 1,1,2,3\ny = Resize x,,s mode=\"nearest\" "
                     "coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\"\n"
                     "output y\n",
              "upsample_nearest_neighbor");
    cr_lowers("dynamic nearest half_pixel x3,x2",
              CR_DYN "init s float 4 1,1,3,2\ny = Resize x,,s mode=\"nearest\"\noutput y\n",
              "upsample_nearest_neighbor");
    cr_lowers("dynamic nearest half_pixel x3,x2, sizes a Cast of an empty constant",
              CR_DYN "init s float 4 1,1,3,2\ninit e float16 0 0\nzc = Cast e to=7\n"
                     "y = Resize x,,s,zc mode=\"nearest\"\noutput y\n",
              "upsample_nearest_neighbor");
    cr_lowers("dynamic linear half_pixel x2",
              CR_DYN "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"linear\"\noutput y\n",
              "upsample_bilinear");
    cr_lowers("dynamic linear align_corners x3,x2",
              CR_DYN "init s float 4 1,1,3,2\ny = Resize x,,s mode=\"linear\" "
                     "coordinate_transformation_mode=\"align_corners\"\noutput y\n",
              "upsample_bilinear");
    cr_refuses("dynamic linear asymmetric x2",
               CR_DYN "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"linear\" "
                      "coordinate_transformation_mode=\"asymmetric\"\noutput y\n",
               "by whole factors of input dims unknown here");
    cr_refuses("dynamic nearest asymmetric round_prefer_floor x2",
               CR_DYN "init s float 4 1,1,2,2\ny = Resize x,,s mode=\"nearest\" "
                      "coordinate_transformation_mode=\"asymmetric\"\noutput y\n",
               "samples other pixels");
    cr_refuses("dynamic x1.5", CR_DYN "init s float 4 1,1,1.5,2\n"
                                      "y = Resize x,,s mode=\"nearest\"\noutput y\n",
               "whole factors");
    cr_lowers("const sizes of dynamic H,W, linear",
              "opset 17\ninput x float 1,2,H,W\ninit z int64 4 1,2,5,7\n"
              "y = Resize x,,,z mode=\"linear\"\noutput y\n",
              "resize_bilinear");
    cr_lowers("const sizes of dynamic H,W, nearest round_prefer_ceil",
              "opset 17\ninput x float 1,2,H,W\ninit z int64 4 1,2,5,7\n"
              "y = Resize x,,,z mode=\"nearest\" nearest_mode=\"round_prefer_ceil\"\n"
              "output y\n",
              "resize_nearest_neighbor");
    cr_refuses("const sizes of dynamic H,W, nearest round_prefer_floor",
               "opset 17\ninput x float 1,2,H,W\ninit z int64 4 1,2,5,7\n"
               "y = Resize x,,,z mode=\"nearest\"\noutput y\n",
               "to const sizes of input dims unknown here");
    /* too long to check index by index: the formulas decide */
    cr_refuses_only("sizes of 2^31-1, nearest round_prefer_floor",
                    CR_HEAD "init z int64 4 1,2,3,2147483647\n"
                            "y = Resize x,,,z mode=\"nearest\"\noutput y\n",
                    "to const sizes of input dims unknown here");
    cr_refuses("const sizes of a dynamic batch",
               "opset 17\ninput x float N,2,3,4\ninit z int64 4 1,2,6,8\n"
               "y = Resize x,,,z mode=\"nearest\"\noutput y\n",
               "change a leading dim");
}

static void test_depth_space(void)
{
    cr_lowers("DepthToSpace DCR", "opset 17\ninput x float 1,8,2,3\n"
                                  "y = DepthToSpace x blocksize=2\noutput y\n",
              "depth_to_space");
    cr_lowers("DepthToSpace CRD", "opset 17\ninput x float 2,8,2,3\n"
                                  "y = DepthToSpace x blocksize=2 mode=\"CRD\"\noutput y\n",
              "pixel_shuffle");
    cr_lowers("SpaceToDepth", "opset 17\ninput x float 1,2,4,6\n"
                              "y = SpaceToDepth x blocksize=2\noutput y\n",
              "space_to_depth");
    cr_refuses("DepthToSpace int32", "opset 17\ninput x int32 1,8,2,3\n"
                                     "y = DepthToSpace x blocksize=2\noutput y\n",
               "fp16 and fp32 only");
}

static void test_norms(void)
{
    cr_lowers("LRN size 3", "opset 17\ninput x float 1,5,3,3\n"
                            "y = LRN x size=3 alpha=0.001 beta=0.5 bias=2.0\noutput y\n",
              "local_response_norm");
    cr_lowers("LRN rank 3", "opset 17\ninput x float 2,6,5\ny = LRN x size=5\noutput y\n",
              "local_response_norm");
    cr_refuses("LRN size 4", "opset 17\ninput x float 1,5,3,3\ny = LRN x size=4\noutput y\n",
               "only odd sizes");
    cr_refuses("LRN rank 5", "opset 17\ninput x float 1,5,3,3,2\ny = LRN x size=3\noutput y\n",
               "rank 3 or 4");
    cr_lowers("LpNormalization p=2 axis 1", "opset 17\ninput x float 2,3,4\n"
                                            "y = LpNormalization x axis=1 p=2\noutput y\n",
              "reduce_l2_norm");
    cr_lowers("LpNormalization p=1 last axis", "opset 17\ninput x float 2,3,4\n"
                                               "y = LpNormalization x p=1\noutput y\n",
              "reduce_l1_norm");
    /* a zero vector stays zero, as ONNX's reference keeps it */
    cr_lowers("LpNormalization of zeros", "opset 17\ninput x float 2,3\ninit z float 2,3 0\n"
                                          "a = Mul x,z\ny = LpNormalization a axis=0\n"
                                          "output y\n",
              "maximum");
    cr_lowers("MeanVarianceNormalization default axes",
              "opset 17\ninput x float 2,3,4,5\ny = MeanVarianceNormalization x\noutput y\n",
              "reduce_mean");
    cr_lowers("MeanVarianceNormalization axes [1]",
              "opset 17\ninput x float 2,3,4\ny = MeanVarianceNormalization x axes=[1]\n"
              "output y\n",
              "real_div");
}

static void test_pools(void)
{
    cr_lowers("LpPool p=3 pads strides",
              "opset 17\ninput x float 1,2,5,6\ny = LpPool x kernel_shape=[2,3] p=3 "
              "pads=[1,0,0,1] strides=[2,1]\noutput y\n",
              "avg_pool");
    cr_lowers("LpPool p=2 1-d", "opset 17\ninput x float 1,2,7\n"
                                "y = LpPool x kernel_shape=[3] p=2\noutput y\n",
              "avg_pool");
    cr_lowers("LpPool p=1 SAME_UPPER", "opset 17\ninput x float 1,2,5,5\n"
                                       "y = LpPool x kernel_shape=[2,2] p=1 "
                                       "auto_pad=\"SAME_UPPER\"\noutput y\n",
              "abs");
    cr_lowers("GlobalLpPool p=2", "opset 17\ninput x float 2,3,4,5\n"
                                  "y = GlobalLpPool x p=2\noutput y\n",
              "reduce_l2_norm");
    cr_lowers("GlobalLpPool p=1", "opset 17\ninput x float 2,3,4\n"
                                  "y = GlobalLpPool x p=1\noutput y\n",
              "reduce_l1_norm");
    cr_lowers("GlobalLpPool p=3", "opset 17\ninput x float 2,3,4,5\n"
                                  "y = GlobalLpPool x p=3\noutput y\n",
              "reduce_sum");
}

static void test_einsum(void)
{
    cr_lowers("Einsum nchw,nwhu->nchu",
              "opset 17\ninput a float 2,3,4,5\ninput b float 2,5,4,6\n"
              "y = Einsum a,b equation=\"nchw,nwhu->nchu\"\noutput y\n",
              "einsum");
    cr_lowers("Einsum renamed rank 3",
              "opset 17\ninput a float 3,4,5\ninput b float 5,4,2\n"
              "y = Einsum a,b equation=\"ikj,jkl->ikl\"\noutput y\n",
              "einsum");
    /* other equations are matmuls (test_coreml_cmops has the rest) */
    cr_lowers("Einsum batch matmul",
              "opset 17\ninput a float 2,3,4\ninput b float 2,4,5\n"
              "y = Einsum a,b equation=\"bij,bjk->bik\"\noutput y\n",
              "matmul");
    cr_lowers("Einsum implicit output",
              "opset 17\ninput a float 3,4,5\ninput b float 5,4,2\n"
              "y = Einsum a,b equation=\"ikj,jkl\"\noutput y\n",
              "matmul");
}

/* ---- raising: the MIL ops' documented grids -------------------------------------- */

/* A program resizing x [1,1,1,2] = {0, 10} along W with MIL op `op` (its
 * size/scale params set by the caller through `set`), raised to ONNX and
 * run by the evaluator; y must be 10 * want (n values), or, want NULL,
 * the import must fail. */
static void cr_raise(const char *what, const char *target, const char *op, int64_t n,
                     void (*set)(MilOp *), const double *want)
{
    MilFunction *f;
    MilModel *m = mm_model(target, &f);
    int64_t xd[4] = {1, 1, 1, 2}, yd[4] = {1, 1, 1, n};
    MilType tx = mil_type(MIL_FP32, 4, xd), ty = mil_type(MIL_FP32, 4, yd);
    mm_input(m, f, "x", &tx);
    MilOp *o = mil_op_add(f->block, op, "r");
    mil_op_in(o, "x", "x");
    set(o);
    mil_op_out(o, "y", &ty);
    mm_output(m, f, "y", &ty);
    IrModel *rt = NULL;
    IrError err = {{0}};
    int rc = cm_import(m, &rt, &err);
    if (!want) {
        T_CHECK(rc < 0, "%s: raised, expected a refusal", what);
    } else {
        T_CHECK(rc == 0, "%s: import: %s", what, err.msg);
    }
    EvValue *x = rc == 0 && want ? ev_tensor_new(IR_FLOAT, 4, xd, &err) : NULL;
    EvValue **out = NULL;
    size_t n_out = 0;
    if (x) {
        ((float *)x->data)[0] = 0;
        ((float *)x->data)[1] = 10;
        EvOptions eo = {0};
        rc = ev_model_run(rt, &eo, 1, &x, &out, &n_out, &err);
        T_CHECK(rc == 0 && n_out == 1 && out[0]->numel == (size_t)n, "%s: run: %s", what,
                err.msg);
        for (int64_t i = 0; rc == 0 && n_out == 1 && i < n && (size_t)i < out[0]->numel; i++)
            T_CHECK(fabs(((float *)out[0]->data)[i] - 10 * want[i]) < 1e-4,
                    "%s: y[%lld] = %g, MIL's grid gives %g", what, (long long)i,
                    ((float *)out[0]->data)[i], 10 * want[i]);
        for (size_t i = 0; i < n_out; i++)
            ev_unref(out[i]);
        free(out);
        ev_unref(x);
    }
    mil_type_clear(&tx);
    mil_type_clear(&ty);
    ir_model_free(rt);
    mil_model_free(m);
}

static const char *cr_mode;
static int32_t cr_size;
static float cr_scale;
static bool cr_align, cr_half, cr_set_half;

static void cr_set_target(MilOp *o)
{
    mil_op_in_const(o, "target_size_height", mil_tensor_scalar_i32(1));
    mil_op_in_const(o, "target_size_width", mil_tensor_scalar_i32(cr_size));
    if (cr_mode)
        mil_op_in_const(o, "sampling_mode", mil_tensor_string(cr_mode));
}

static void cr_set_scale(MilOp *o)
{
    mil_op_in_const(o, "scale_factor_height", mil_tensor_scalar_f32(1));
    mil_op_in_const(o, "scale_factor_width", mil_tensor_scalar_f32(cr_scale));
    if (cr_mode)
        mil_op_in_const(o, "align_corners", mil_tensor_scalar_bool(cr_align));
    if (cr_set_half)
        mil_op_in_const(o, "half_pixel_centers", mil_tensor_scalar_bool(cr_half));
}

/* The grid points coremltools documents for resize_bilinear with Xin = 2
 * (iOS15 image_resizing.py, sampling_mode notes), and the rules of the
 * other ops, read back through the import. */
static void test_raise(void)
{
    static const struct {
        const char *mode;
        int32_t n;
        double g[6];
    } grids[] = {
        {"UNALIGN_CORNERS", 5, {0, 0.1, 0.5, 0.9, 1}},
        {"UNALIGN_CORNERS", 6, {0, 0, 1 / 3.0, 2 / 3.0, 1, 1}},
        {"STRICT_ALIGN_CORNERS", 5, {0, 0.25, 0.5, 0.75, 1}},
        {"STRICT_ALIGN_CORNERS", 6, {0, 0.2, 0.4, 0.6, 0.8, 1}},
        {"DEFAULT", 5, {0, 0.4, 0.8, 1, 1}},
        {"DEFAULT", 6, {0, 1 / 3.0, 2 / 3.0, 1, 1, 1}},
        {NULL, 6, {0, 1 / 3.0, 2 / 3.0, 1, 1, 1}},      /* DEFAULT by default */
    };
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "resize_bilinear %s 2->%d",
                 grids[i].mode ? grids[i].mode : "(default)", grids[i].n);
        cr_mode = grids[i].mode;
        cr_size = grids[i].n;
        cr_raise(what, "iOS15", "resize_bilinear", grids[i].n, cr_set_target, grids[i].g);
    }
    /* ALIGN_CORNERS samples the centre for a length-1 output (here H),
     * which align_corners does not */
    cr_mode = "ALIGN_CORNERS";
    cr_size = 5;
    cr_raise("resize_bilinear ALIGN_CORNERS to height 1", "iOS15", "resize_bilinear", 5,
             cr_set_target, NULL);
    cr_mode = "OFFSET_CORNERS";
    cr_size = 5;
    cr_raise("resize_bilinear OFFSET_CORNERS", "iOS15", "resize_bilinear", 5, cr_set_target,
             NULL);
    /* TensorFlow's half-pixel nearest: floor((i + 0.5) * 2/3) = 0, 1, 1 */
    static const double nn3[] = {0, 1, 1};
    cr_mode = NULL;
    cr_size = 3;
    cr_raise("resize_nearest_neighbor 2->3", "iOS15", "resize_nearest_neighbor", 3,
             cr_set_target, nn3);
    static const double up2[] = {0, 0, 1, 1};
    cr_scale = 2;
    cr_set_half = false;
    cr_raise("upsample_nearest_neighbor x2", "iOS15", "upsample_nearest_neighbor", 4,
             cr_set_scale, up2);
    cr_scale = 1.5f;
    cr_raise("upsample_nearest_neighbor x1.5", "iOS15", "upsample_nearest_neighbor", 3,
             cr_set_scale, NULL);
    /* upsample_bilinear by 2: align_corners i/3; else (i + 0.5)/2 - 0.5
     * clamped (the same grids as STRICT and UNALIGN) */
    static const double ac[] = {0, 1 / 3.0, 2 / 3.0, 1}, hp[] = {0, 0.25, 0.75, 1};
    cr_scale = 2;
    cr_mode = "set";
    cr_align = true;
    cr_raise("upsample_bilinear align_corners", "iOS15", "upsample_bilinear", 4,
             cr_set_scale, ac);
    cr_align = false;
    cr_raise("upsample_bilinear not align_corners", "iOS15", "upsample_bilinear", 4,
             cr_set_scale, hp);
    cr_set_half = true;
    cr_half = true;
    cr_raise("upsample_bilinear half_pixel_centers (iOS16)", "iOS16", "upsample_bilinear", 4,
             cr_set_scale, hp);
    cr_align = true;
    cr_raise("upsample_bilinear both", "iOS16", "upsample_bilinear", 4, cr_set_scale, NULL);
    cr_set_half = false;
}

/* iOS17's resize to a computed shape {0, n} (0: x's H kept), raised and
 * run on x = {0, 10}; y must be 10 * want, or the import must fail. */
static void cr_raise17(const char *what, const char *interp, const char *mode, int32_t n,
                       const double *want)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS17", &f);
    int64_t xd[4] = {1, 1, 1, 2}, sd[1] = {2}, yd[4] = {1, 1, 1, n};
    MilType tx = mil_type(MIL_FP32, 4, xd), ts = mil_type(MIL_INT32, 1, sd);
    MilType ty = mil_type(MIL_FP32, 4, yd);
    mm_input(m, f, "x", &tx);
    mm_input(m, f, "s", &ts);
    MilOp *o = mil_op_add(f->block, "resize", "r");
    mil_op_in(o, "x", "x");
    mil_op_in(o, "shape", "s");
    uint32_t two = 2;
    mil_op_in_const(o, "resized_dims", mil_tensor_new(MIL_UINT32, 0, NULL, &two));
    if (interp)
        mil_op_in_const(o, "interpolation_mode", mil_tensor_string(interp));
    if (mode)
        mil_op_in_const(o, "sampling_mode", mil_tensor_string(mode));
    mil_op_out(o, "y", &ty);
    mm_output(m, f, "y", &ty);
    IrModel *rt = NULL;
    IrError err = {{0}};
    int rc = cm_import(m, &rt, &err);
    T_CHECK(want ? rc == 0 : rc < 0, "%s: import: %s", what, want ? err.msg : "raised");
    EvValue *in[2] = {NULL, NULL};
    if (rc == 0 && want) {
        in[0] = ev_tensor_new(IR_FLOAT, 4, xd, &err);
        in[1] = ev_tensor_new(IR_INT32, 1, sd, &err);
    }
    if (in[0] && in[1]) {
        ((float *)in[0]->data)[0] = 0;
        ((float *)in[0]->data)[1] = 10;
        ((int32_t *)in[1]->data)[0] = 0;
        ((int32_t *)in[1]->data)[1] = n;
        EvValue **out = NULL;
        size_t n_out = 0;
        EvOptions eo = {0};
        rc = ev_model_run(rt, &eo, 2, in, &out, &n_out, &err);
        T_CHECK(rc == 0 && n_out == 1 && out[0]->numel == (size_t)n, "%s: run: %s", what,
                err.msg);
        for (int32_t i = 0; rc == 0 && n_out == 1 && i < n && (size_t)i < out[0]->numel; i++)
            T_CHECK(fabs(((float *)out[0]->data)[i] - 10 * want[i]) < 1e-4,
                    "%s: y[%d] = %g, MIL's grid gives %g", what, i,
                    ((float *)out[0]->data)[i], 10 * want[i]);
        for (size_t i = 0; i < n_out; i++)
            ev_unref(out[i]);
        free(out);
    }
    ev_unref(in[0]);
    ev_unref(in[1]);
    mil_type_clear(&tx);
    mil_type_clear(&ts);
    mil_type_clear(&ty);
    ir_model_free(rt);
    mil_model_free(m);
}

static void test_raise17(void)
{
    static const double def5[] = {0, 0.4, 0.8, 1, 1}, un5[] = {0, 0.1, 0.5, 0.9, 1};
    static const double st6[] = {0, 0.2, 0.4, 0.6, 0.8, 1}, nn3[] = {0, 1, 1};
    cr_raise17("resize LINEAR (default) DEFAULT 2->5", NULL, NULL, 5, def5);
    cr_raise17("resize LINEAR UNALIGN_CORNERS 2->5", "LINEAR", "UNALIGN_CORNERS", 5, un5);
    cr_raise17("resize LINEAR STRICT_ALIGN_CORNERS 2->6", "LINEAR", "STRICT_ALIGN_CORNERS", 6,
               st6);
    cr_raise17("resize NEAREST_NEIGHBOR 2->3", "NEAREST_NEIGHBOR", NULL, 3, nn3);
    cr_raise17("resize LINEAR OFFSET_CORNERS", "LINEAR", "OFFSET_CORNERS", 5, NULL);
    cr_raise17("resize NEAREST_NEIGHBOR ALIGN_CORNERS", "NEAREST_NEIGHBOR", "ALIGN_CORNERS", 5,
               NULL);
}

/* The source index (into x [1, xc, xh, xw]) of y element (c, h, w) for
 * block size 2, by each op's definition (TensorFlow's depth_to_space and
 * space_to_depth, torch's pixel_shuffle and pixel_unshuffle). */
static int64_t cr_src(const char *op, int64_t xc, int64_t xh, int64_t xw, int64_t c, int64_t h,
                      int64_t w)
{
    int64_t cc, hh, ww;
    if (!strcmp(op, "depth_to_space")) {         /* DCR */
        int64_t co = xc / 4;
        cc = ((h % 2) * 2 + w % 2) * co + c, hh = h / 2, ww = w / 2;
    } else if (!strcmp(op, "pixel_shuffle")) {   /* CRD */
        cc = c * 4 + (h % 2) * 2 + w % 2, hh = h / 2, ww = w / 2;
    } else if (!strcmp(op, "space_to_depth")) {
        int64_t blk = c / xc;
        cc = c % xc, hh = h * 2 + blk / 2, ww = w * 2 + blk % 2;
    } else {                                     /* pixel_unshuffle */
        int64_t blk = c % 4;
        cc = c / 4, hh = h * 2 + blk / 2, ww = w * 2 + blk % 2;
    }
    return (cc * xh + hh) * xw + ww;
}

/* MIL op `op` (block size 2) on x = 0, 1, 2, ... raised and run: y must
 * follow the op's definition. */
static void cr_raise_block(const char *target, const char *op, const char *param,
                           const int64_t *xd, const int64_t *yd)
{
    MilFunction *f;
    MilModel *m = mm_model(target, &f);
    MilType tx = mil_type(MIL_FP32, 4, xd), ty = mil_type(MIL_FP32, 4, yd);
    mm_input(m, f, "x", &tx);
    MilOp *o = mil_op_add(f->block, op, "b");
    mil_op_in(o, "x", "x");
    uint32_t two = 2;
    mil_op_in_const(o, param, strcmp(op, "pixel_unshuffle")
                                  ? mil_tensor_scalar_i32(2)
                                  : mil_tensor_new(MIL_UINT32, 0, NULL, &two));
    mil_op_out(o, "y", &ty);
    mm_output(m, f, "y", &ty);
    IrModel *rt = NULL;
    IrError err = {{0}};
    int rc = cm_import(m, &rt, &err);
    T_CHECK(rc == 0, "%s: import: %s", op, err.msg);
    EvValue *x = rc == 0 ? ev_tensor_new(IR_FLOAT, 4, xd, &err) : NULL;
    if (x) {
        for (size_t i = 0; i < x->numel; i++)
            ((float *)x->data)[i] = (float)i;
        EvValue **out = NULL;
        size_t n_out = 0, bad = 0;
        EvOptions eo = {0};
        rc = ev_model_run(rt, &eo, 1, &x, &out, &n_out, &err);
        T_CHECK(rc == 0 && n_out == 1 && out[0]->numel == x->numel, "%s: run: %s", op,
                err.msg);
        for (int64_t c = 0; rc == 0 && n_out == 1 && out[0]->numel == x->numel && c < yd[1];
             c++)
            for (int64_t h = 0; h < yd[2]; h++)
                for (int64_t w = 0; w < yd[3]; w++)
                    bad += ((float *)out[0]->data)[(c * yd[2] + h) * yd[3] + w] !=
                           (float)cr_src(op, xd[1], xd[2], xd[3], c, h, w);
        T_CHECK(bad == 0, "%s: %zu elements differ from the op's definition", op, bad);
        for (size_t i = 0; i < n_out; i++)
            ev_unref(out[i]);
        free(out);
        ev_unref(x);
    }
    mil_type_clear(&tx);
    mil_type_clear(&ty);
    ir_model_free(rt);
    mil_model_free(m);
}

static void test_raise_blocks(void)
{
    static const int64_t deep[4] = {1, 12, 2, 3}, wide[4] = {1, 3, 4, 6};
    cr_raise_block("iOS15", "depth_to_space", "block_size", deep, wide);
    cr_raise_block("iOS15", "pixel_shuffle", "upscale_factor", deep, wide);
    cr_raise_block("iOS15", "space_to_depth", "block_size", wide, deep);
    cr_raise_block("iOS16", "pixel_unshuffle", "downscale_factor", wide, deep);
}

int main(void)
{
    test_raise_blocks();
    test_raise17();
    test_raise();
    test_resize_nearest();
    test_resize_linear();
    test_resize_dynamic();
    test_depth_space();
    test_norms();
    test_pools();
    test_einsum();
    return t_done("test_coreml_cmres");
}
