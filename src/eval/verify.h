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

#include "eval/eval.h"
#include "ir/ir.h"

/* Another model judged against the same run of the original, on the
 * same numbers as `after` (each in its own input types): a half result
 * widened. Saves running the original again. */
typedef struct VfAlso {
    IrModel *model;
    int32_t narrow;          /* as VfOptions.narrow, for this one */
    const char *note;        /* appended to the message when it differs */
} VfAlso;

/* What verification measured on one output. Float tensors are judged
 * element by element (see VF_FLOOR_MULT); the rest compare exactly and
 * carry only the name. */
typedef struct VfFigure {
    char name[160];
    bool floats;             /* a float tensor, judged with the figures */
    bool differs;            /* judged to differ */
    size_t numel;
    double max_err;          /* largest |after - before| (finite ones) */
    double tol;              /* the tolerance at that element */
    double floor;            /* the original's largest own rounding noise,
                                |before - before computed in float64|; -1
                                when the wide run was not had */
    size_t beyond;           /* elements past the tolerance */
    size_t noisy;            /* elements where the noise itself is past it */
    double wide_err;         /* largest difference of the two models both
                                computed in float64, relative to the
                                output's scale; -1 when not had */
} VfFigure;

/* Both models computed in float64 (pc_wide_copy of each) lose the
 * rounding of their own types: what still differs there is the
 * computation, and the constants a rewrite rounded to the model's type
 * (a folded or fused weight of a float16 model). Reported as
 * VfFigure.wide_err, not judged yet: a float16 model's fused weights move
 * its float64 outputs by about as much as its own noise. */

/* The judging rule against the noise floor: element k (error e, tolerance
 * t, the original's own noise f) passes when e <= t + VF_FLOOR_MULT * f.
 * When the converted model's float64 run is known too (same-type models:
 * not a half model against a wider one), an element past that still
 * passes when its own noise g (|after - after in float64|) covers it,
 * e <= t + VF_FLOOR_MULT * g, and the two float64 runs agree there within
 * t + f: rounding that flips a quantization step or a float16 rounding
 * lands on other elements in another computation, and there it is that
 * computation's own noise. Every element then stands on its own. Without
 * that run, the others are "unexplained", and the output still passes
 * when there are at most VF_FLOOR_MULT times as many of them as noisy
 * elements (f > t) and each is within t + VF_FLOOR_MULT times the largest
 * noise; on a model as noisy as float16 MobileNetV2 (963 of 1000 logits
 * noisy) that count excuses a weight changed by 20%. Chosen in
 * docs/evaluator.md ("The noise floor"). */
#define VF_FLOOR_MULT 4.0

/* Where two models' values first part (vf_locate): the original's node
 * whose output, under the same name in both, leaves the tolerance and its
 * floor first, in the original's order. */
#define VF_REGION_KEEP 24
typedef struct VfWhere {
    bool found;
    bool partial;            /* some values were not kept (memory): a
                                later node may have been named */
    char node[160];          /* the original's node ("" when unnamed) */
    char value[160];         /* its output that moved */
    char op_before[64];      /* "Resize-11": its op and version */
    char op_after[64];       /* the op computing that value after */
    char node_after[160];    /* and its node's name */
    double max_err, floor;   /* as VfFigure (floor -1: not had) */
    char why[400];           /* the judge's words */
    /* The original's nodes upstream of `node` whose values the other
     * model does not compute under the same name (a rewritten, fused or
     * dropped region): the difference may start in any of them. The
     * first VF_REGION_KEEP names, in the order found walking back, and
     * how many in all. */
    char region[VF_REGION_KEEP][160];
    size_t n_region;
} VfWhere;

/* Why vf_compare returned without a verdict it could stand by. */
typedef enum {
    VF_JUDGED = 0,           /* ran and judged (or failed on the result) */
    VF_NO_RUN,               /* the original does not run on the inputs */
    VF_NO_TIME               /* the deadline came first (*needed: about how
                                many seconds the whole would take) */
} VfStop;

typedef struct VfOptions {
    const char *inputs_dir;  /* folder of input_K.pb, or NULL: random */
    uint64_t seed;           /* for random inputs and random ops */
    int64_t dim_default;     /* size given to symbolic dims; 0: 2, then 8
                                and 32 while the original model refuses
                                to run on random inputs */
    int64_t *dim_used;       /* out (may be NULL): the size open dims of
                                random inputs got, 0 when none had one */
    double rtol, atol;       /* 0 = 1e-3 and 1e-5 */
    int32_t narrow;          /* judge within this half type's tolerance, as
                                if one model computed in it (0: when one
                                does); for a half model widened to float32,
                                whose weights keep the half rounding */
    EvOptions eval;          /* budgets of both runs (seed: from `seed`;
                                jitter: none) */
    const VfAlso *also;      /* n_also more models, judged after `after` */
    size_t n_also;
    uint64_t max_input_bytes; /* random inputs, all together; 0 = a quarter
                                 of eval.max_memory, or when that is 0 of the
                                 default budget but at most VF_MAX_INPUT_BYTES */
    IrModel *wide;           /* `before` computed in float64 (pc_wide_copy),
                                run on the same inputs for the noise floor;
                                NULL: judged by the tolerance alone */
    IrModel *wide_after;     /* `after` computed in float64: with `wide`,
                                VfFigure.wide_err; NULL: not had */
    VfFigure **figures;      /* out (may be NULL): one per output of `after`,
                                *n_figures of them (the caller frees) */
    size_t *n_figures;
    double deadline;         /* vf_now() past which no run goes on; 0 none.
                                The float64 runs come last and are dropped
                                first (no floor then) */
    VfStop *stop;            /* out (may be NULL) */
    const char *names[2];    /* what messages call the two models; NULL:
                                "the original model", "the converted model"
                                (compare gives their paths) */
    VfWhere *where;          /* out (may be NULL): on a difference, the
                                first node that made it (vf_locate; runs
                                each model again) */
    double *needed;          /* out with VF_NO_TIME (may be NULL) */
} VfOptions;

/* Seconds on a monotonic clock, for VfOptions.deadline. */
double vf_now(void);

/* Random inputs are made at most this large by default: a model declaring
 * a [100000,3,32,32] input is refused, naming --input-shape, rather than
 * fed 1.2 GB. */
#define VF_MAX_INPUT_BYTES (256ull << 20)

/* The tolerance of --verify when one model computes in float16 or
 * bfloat16 and the other in a wider float type (the narrower type
 * decides): outputs compare in double as |a - b| <= atol * scale +
 * rtol * |b|, scale being the largest |b| of that output (at least 1), since
 * a half model's error grows with the size of the values it sums, not
 * with each element. Measured on the shared models made half by hand
 * (docs/evaluator.md, "Verifying across float types"): MobileNetV2's
 * logits move by 1.9% of their range in float16 (ONNX Runtime's own
 * float16 run: 1.4%) and 10% in bfloat16; these leave ~1.3x room. */
#define VF_FLOAT16_RTOL  1e-2
#define VF_FLOAT16_ATOL  3e-2
#define VF_BFLOAT16_RTOL 5e-2
#define VF_BFLOAT16_ATOL 1.25e-1

/* Evaluates `before` and `after` on the same inputs and compares their
 * outputs. Where a float input's type differs between them (float32 in
 * one, float16 or bfloat16 in the other), both get the same numbers,
 * rounded to both types. Same-type models compare within o's rtol/atol;
 * when one computes in a narrower float type (see VF_FLOAT16_RTOL), float
 * outputs compare in double within that type's tolerance. Then each of
 * o->also, in turn, as `after` was. 0 when all are equal; -2 with err naming the first output that
 * differs; -1 with err saying why a model could not run. The evaluator
 * trusts what the checker checks: callers pass checked models
 * (chk_require), as job.c does. */
int vf_compare(IrModel *before, IrModel *after, const VfOptions *o, IrError *err);

/* One float tensor output: got (after) against want (before), each
 * element within atol * scale + rtol * |want| (scale: 1, or the largest
 * |want| when `scaled`, as for a half model) or within the original's own
 * noise |want - wide| by the rule of VF_FLOOR_MULT (wide NULL: none).
 * Fills fig; false with why naming the worst unexplained element.
 * (verify_floor.c) */
bool vf_floor_judge(const EvValue *got, const EvValue *want, const EvValue *wide,
                    const EvValue *wide_got, double rtol, double atol, bool scaled,
                    VfFigure *fig, char *why, size_t cap);
/* The largest difference of the two models' float64 runs of one output
 * (wa: the original's, wb: the converted one's) relative to the output's
 * largest |wa| (at least 1); -1 when they do not compare (shapes, NaN in
 * one only). (verify_floor.c) */
double vf_wide_diff(const EvValue *wb, const EvValue *wa);

/* What vf_locate runs: the models and each one's inputs (the same
 * numbers in each model's own types), and the judge's settings as
 * vf_compare had them for the outputs. */
typedef struct VfLocateIn {
    IrModel *before, *after, *wide;   /* wide may be NULL */
    IrModel *wide_after;              /* `after` in float64, or NULL */
    EvValue **in_a, **in_b, **in_wide, **in_wide_b;
    size_t n_in;
    int32_t narrow;
    double rtol, atol;
    EvOptions eval;
    double deadline;                  /* vf_now() past which no run goes on; 0 none */
} VfLocateIn;

/* The first node of x->before, in its order, whose output (a value of
 * the same name computed by x->after too) differs by vf_output_equal:
 * 0 with *where filled, -1 when none was found (or a run failed).
 * Values kept are bounded by a quarter of the memory budget.
 * (verify_locate.c) */
int vf_locate(const VfLocateIn *x, VfWhere *where);

/* got against want (and the original's float64 run `wide`, NULL: none),
 * as vf_compare judges an output: narrow is the half type one model
 * computes in (0: none). Fills fig; false with why. (verify.c) */
bool vf_output_equal(const EvValue *got, const EvValue *want, const EvValue *wide,
                     const EvValue *wide_got, int32_t narrow, double rtol, double atol,
                     VfFigure *fig, char *why, size_t cap);

/* "first difference at node 'x' (Conv-11 -> Conv-10): max error e, floor
 * f" in buf. Returns buf. */
const char *vf_where_text(const VfWhere *w, char *buf, size_t cap);

/* The inputs vf_compare feeds `m` with options o (its own or seeded random
 * ones): *in is an array of *n new values (ev_values_free). 0, or -1 with
 * err. For handing the same inputs to another judge (ONNX Runtime). */
int vf_make_inputs(IrModel *m, const VfOptions *o, EvValue ***in, size_t *n,
                   IrError *err);

#endif
