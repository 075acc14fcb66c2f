/*
 * verify.h - proving that two models compute the same thing (prefix vf_).
 *
 * Used by `convert --verify` (and later `optimize --verify`): both models
 * are evaluated on the same inputs, the case's own (DIR/test_data_set_0 when
 * the model sits in a backend-test case folder) or seeded random values of
 * the declared types and shapes, and every output is compared.
 */
#ifndef OC_VERIFY_H
#define OC_VERIFY_H

#include <stdint.h>

#include "ir.h"

typedef struct VfOptions {
    const char *inputs_dir;  /* folder of input_K.pb, or NULL: random */
    uint64_t seed;           /* for random inputs and random ops */
    int64_t dim_default;     /* size given to symbolic dims (default 2) */
    double rtol, atol;       /* 0 = 1e-3 and 1e-5 */
} VfOptions;

/* Evaluates `before` and `after` on the same inputs and compares their
 * outputs. 0 when equal; -2 with err naming the first output that
 * differs; -1 with err saying why a model could not run. The evaluator
 * trusts what the checker checks: callers pass checked models
 * (chk_require), as job.c does. */
int vf_compare(IrModel *before, IrModel *after, const VfOptions *o, IrError *err);

#endif
