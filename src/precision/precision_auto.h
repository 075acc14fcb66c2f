/*
 * precision_auto.h - accuracy-driven mixed precision, --auto (prefix pa_).
 *
 * `--dtype float16 --auto` converts the model, evaluates the original and
 * the result on the same inputs and, when the outputs differ by more than
 * the tolerance, keeps in float32 the fewest nodes it can find so that
 * they do not: nodes are ranked by the error their own half computation
 * adds, and a binary search over that ranking finds how many of the
 * worst must stay float32 (then a greedy pass drops any of them that is
 * not needed). A node kept is kept whole (PcOptions.keep_whole: the
 * Constants it reads and its bodies' nodes too); nodes holding bodies
 * rank first, their half error not being measurable alone. The work is
 * bounded: at most PA_MAX_EVALS(n) evaluations of a whole model for n
 * candidate nodes. When the error stays infinite, the refusal says which
 * output differs and how (a shape, a count, NaN or infinity).
 */
#ifndef OC_PRECISION_AUTO_H
#define OC_PRECISION_AUTO_H

#include <stddef.h>

#include "precision/precision.h"
#include "eval/verify.h"

/* The tolerance --auto aims at when --rtol is not given; --atol defaults
 * to the type's own (VF_FLOAT16_ATOL, VF_BFLOAT16_ATOL). */
#define PA_DEFAULT_RTOL 1e-2

typedef struct PaOptions {
    double rtol, atol;       /* 0: PA_DEFAULT_RTOL, the type's atol */
    VfOptions vf;            /* inputs (inputs_dir or seeded random), budgets */
} PaOptions;

/* What --auto did. Strings owned (pa_report_free). */
typedef struct PaReport {
    double rtol, atol;       /* the tolerance used */
    size_t candidates;       /* nodes the full conversion computes in half */
    double error_full;       /* the outputs' error fully converted */
    double error;            /* the error reached (<= 1: within tolerance) */
    size_t evaluations;      /* whole-model runs, the original's included */
    size_t n_kept;
    char **kept;             /* names of the nodes kept for accuracy */
} PaReport;

/* Converts m (sorted and valid, float32) as o->dtype says, keeping in
 * float32 the nodes needed for m's outputs to stay within a's tolerance
 * (the error of an output: max |got - want| / (atol * scale + rtol *
 * |want|), scale its largest |want| but at least 1). r gets
 * pc_convert's report, its kept entries for accuracy with reason
 * "--auto: ...", and ar what the search did. 0, or -1 with err (the
 * evaluator's message when a model cannot run; the model is then
 * unchanged or half changed: the job drops it). */
int pa_convert(IrModel *m, const PcOptions *o, const PaOptions *a, PcReport *r,
               PaReport *ar, IrError *err);

/* Evaluations --auto allows itself for n candidate nodes: the original,
 * the full conversion, a binary search (ceil(log2 n) + 1) and a greedy
 * pass in what is left. */
size_t pa_max_evals(size_t n);

void pa_report_free(PaReport *r);

#endif
