/*
 * compare.h - `onnx-convert compare A B`: two models of any origin run on
 * the same inputs and judged as verification judges a conversion (prefix
 * cmp_).
 *
 * A is the reference, B the candidate: each output of B is judged against
 * A's within the tolerance or A's own rounding noise (A computed again in
 * float64), and when they differ the first node of A, in its order, whose
 * output (a value of the same name in B) leaves that floor is named.
 * Inputs pair by position. Nothing here prints or exits.
 */
#ifndef OC_COMPARE_H
#define OC_COMPARE_H

#include "driver/job.h"

typedef struct CmpOptions {
    const char *inputs_dir;       /* a folder of input_K.pb, or NULL: random */
    const char *input_shape[JOB_MAX_SHAPES];   /* NAME=DIMS, given to both */
    size_t n_input_shape;
    double rtol, atol;            /* 0: verification's (1e-3, 1e-5) */
    uint64_t seed;                /* random inputs; 0: 1 */
    EvOptions eval;               /* budgets of each run */
} CmpOptions;

typedef struct CmpReport {
    int result;                   /* 1 equal, -2 differ, -1 could not compare */
    char msg[700];                /* with -2 or -1: why ("A.onnx: ..." when one
                                     model is at fault) */
    bool case_inputs;             /* inputs_dir was given */
    int64_t dim_used;             /* the size open dims got (0: none) */
    VfFigure *figs;               /* one per output (owned) */
    size_t n_figs;
    VfWhere where;                /* with -2: the first node that differs */
} CmpReport;

/* Compares the models at paths a and b (r filled in every case; free
 * with cmp_report_free). Returns r->result. */
int cmp_models(const char *a, const char *b, const CmpOptions *o, CmpReport *r);

/* Parses the option at argv[*i] (its value consumed): --inputs DIR,
 * --input-shape NAME=DIMS, --rtol R, --atol A, --seed N and the
 * evaluator's budgets. 1 taken, 0 not an option of compare, -1 with why. */
int cmp_parse_arg(CmpOptions *o, const char *const *argv, size_t *i, size_t argc,
                  char *why, size_t cap);

/* Writes r as one JSON object: {schema, command, a, b, result, message, inputs, open_dims,
 * outputs, first_difference} (docs/json.md). */
void cmp_json(Js *j, const char *a, const char *b, const CmpReport *r);

void cmp_report_free(CmpReport *r);

#endif
