/* resize.h - the arithmetic of Resize and Upsample that the evaluator
 * (src/eval/resize.c), inference (src/analysis/infer/resize.c), the table lowering
 * (adapters/resize_lower.c) and Core ML (src/coreml/resize.c) share: the
 * output length from a scale, the coordinate transformation and the
 * nearest pick. Prefix rsz_.
 *
 * Precision, where the spec's formulas do not say it (docs/converter.md,
 * "Resize arithmetic"): scales are float32 tensors, and
 * - an output length from a scale is floor(in * scale) computed in
 *   float32, as ONNX's own shape inference, ONNX Runtime and PyTorch
 *   compute it: PyTorch's size 15 on 7 exports scale 15/7 = 2.142857f, and
 *   7 x 2.142857f is 15 in float32, 14.9999995 in exact arithmetic;
 * - the coordinate a nearest resize rounds is computed in float32 too, in
 *   the order the spec writes the formula, as ONNX Runtime does: output 11
 *   at scale 2.2f is 11 / 2.2f = 5 in float32 (and in decimal), 4.9999999
 *   exactly; a pick is discrete, so only one arithmetic can agree with
 *   the runtimes;
 * - linear and cubic coordinates stay in double: their weights move by a
 *   rounding there, which no tolerance notices. */
#ifndef ONNXCONVERT_RESIZE_H
#define ONNXCONVERT_RESIZE_H

#include <stdbool.h>
#include <stdint.h>

/* coordinate_transformation_mode and nearest_mode, in the order of the
 * name tables below */
enum {
    RSZ_HALF_PIXEL, RSZ_HALF_PIXEL_SYM, RSZ_PYTORCH, RSZ_ALIGN,
    RSZ_ASYMMETRIC, RSZ_TF_NN, RSZ_CROP, RSZ_N_CTM
};
enum {
    RSZ_ROUND_FLOOR, RSZ_ROUND_CEIL, RSZ_FLOOR, RSZ_CEIL, RSZ_N_NM,
    RSZ_SIMPLE = RSZ_N_NM   /* Upsample / Resize-10: floor up, ceil down */
};
extern const char *const rsz_ctm_names[RSZ_N_CTM];
extern const char *const rsz_nm_names[RSZ_N_NM];

/* One resized axis as the formulas see it. */
typedef struct RszAxis {
    int64_t in, out;
    double scale;    /* out / in with sizes, else the given scale */
    double outf;     /* output length as a real number: scale * in with scales */
    double lo, hi;   /* roi of tf_crop_and_resize (0 and 1 otherwise) */
} RszAxis;

/* floor(in * scale) in float32 (see above); -1 when it is not a finite
 * length below 2^53 (a scale that is not positive, NaN, overflow). */
int64_t rsz_len(int64_t in, double scale);

/* x_original of output index x in double; *outside when
 * tf_crop_and_resize reads outside the input. */
double rsz_coord(int ctm, const RszAxis *a, int64_t x, bool *outside);

/* The input index nearest mode nm picks for output index x (float32
 * coordinates, see above), clamped to the axis; -1 when outside the crop. */
int64_t rsz_nearest(int ctm, int nm, const RszAxis *a, int64_t x);

#endif
