/* Helpers the evaluator's family files share (private to src/eval/).
 *
 * Each one lives in the family file named above its block; another family
 * that needs it includes this header instead of keeping a copy. */
#ifndef OC_EVAL_KERNELS_H
#define OC_EVAL_KERNELS_H

#include "eval/eval.h"

/* ---- elementwise.c: element classes and the unary map ---------------- */

/* The IR's element type classes (ir_dtype_class) as bits, so that a
 * kernel can accept several. */
enum {
    EV_CF = 1,      /* floating point (float, double, 16-, 8-, 4-bit floats) */
    EV_CS = 2,      /* signed integers */
    EV_CU = 4,      /* unsigned integers */
    EV_CB = 8,      /* bool */
    EV_CSTR = 16,   /* string */
    EV_CX = 32      /* complex and unknown */
};
#define EV_CNUM (EV_CF | EV_CS | EV_CU)
#define EV_CINT (EV_CS | EV_CU)

/* The class of an element type (EV_CX for complex and unknown codes). */
unsigned ev_class(int32_t dt);
/* The type's name, "unknown" for a code the IR does not know. */
const char *ev_dt_name(int32_t dt);
/* 0 when t's element class is in mask, else fails naming the type. */
int ev_need(EvCtx *c, const EvValue *t, unsigned mask);

typedef double (*EvFn1)(double x, const double *p);

/* Float32 loops written out for the activations real models are made of. */
enum { EV_FAST_NONE, EV_FAST_RELU, EV_FAST_SIGMOID, EV_FAST_TANH,
       EV_FAST_ERF, EV_FAST_SQRT };

/* Integer forms of the unary ops that accept integers. */
enum { EV_I_NONE, EV_I_ABS, EV_I_NEG, EV_I_SIGN, EV_I_RELU, EV_I_NOT };

/* Y = f(X) elementwise, same type and shape. Integers use iop when given,
 * else go through f in double (Erf, Shrink on integers); float32 takes
 * the loop `fast` names when there is one. The loops stay in
 * elementwise.c, where they inline; the activation family calls in. */
int ev_map1(EvCtx *c, EvFn1 f, const double *p, unsigned mask, int iop,
            int fast);
/* A unary op of floating types only. */
static inline int ev_float1(EvCtx *c, EvFn1 f, const double *p)
{
    return ev_map1(c, f, p, EV_CF, EV_I_NONE, EV_FAST_NONE);
}

/* ---- shape.c: element copies and strided views ----------------------- */

/* Tile doubles the rank. */
#define EV_VIEW_MAX (2 * EV_MAX_RANK)

/* dst[doff + sum i_k*ds[k]] = src[soff + sum i_k*ss[k]] for every index i
 * of dims; strides and offsets count elements (source strides may be 0
 * for broadcasting or negative for reversed slices). */
typedef struct EvView {
    size_t rank;
    int64_t dims[EV_VIEW_MAX];
    int64_t ss[EV_VIEW_MAX];
    int64_t ds[EV_VIEW_MAX];
    int64_t soff, doff;
} EvView;

/* d = a malloc'ed copy of s (d's old string freed). */
void ev_str_set(EvStr *d, const EvStr *s);
/* Sets every element of a fresh (zeroed) dst to src[si]. */
void ev_fill(EvValue *dst, const EvValue *src, size_t si);
/* Row-major strides in elements. An empty tensor may have dims whose
 * product overflows (e.g. [0, 2^40, 2^40]); the unsigned product wraps
 * harmlessly there, and kernels use no stride of an empty tensor. */
void ev_istrides(size_t rank, const int64_t *dims, int64_t *st);
/* A view over dims writing a dense destination; source strides 0. */
void ev_view_init(EvView *v, size_t rank, const int64_t *dims);
/* Copies the elements v describes from src into dst (same dtype). The
 * view is collapsed in place. */
void ev_view_copy(EvValue *dst, const EvValue *src, EvView *v);
/* Copies the part of x that survives cropping into a constant-filled y:
 * per axis, x shifted by beg (negative beg/end crop). */
void ev_place(EvValue *y, const EvValue *x, const int64_t *beg,
              const int64_t *end);

/* ---- shape.c: reading inputs and attributes -------------------------- */

/* Integer input i (present) as int64s in ev_tmp memory. */
int ev_ints(EvCtx *c, size_t i, const int64_t **v, size_t *n);
/* An INTS attribute: 1 present, 0 absent (fails when required). */
int ev_attr_list(EvCtx *c, const char *name, bool required,
                 const int64_t **v, size_t *n);
/* The single element of input i as int64 (scalar or one-element). */
int ev_scalar_int(EvCtx *c, size_t i, int64_t *out);
/* a*b for dims, failing on overflow. */
int ev_mul_dim(EvCtx *c, int64_t a, int64_t b, int64_t *out);
/* The tensor attribute `name`, which is present: a new reference, or
 * NULL with failure set. */
EvValue *ev_attr_value(EvCtx *c, const char *name);

/* ---- nn.c: window geometry, convolutions, matrix products ------------- */

/* Window geometry of convolutions and pools (see nn.c's top comment). */
typedef struct EvGeom {
    size_t n;                        /* spatial axes */
    int64_t k[EV_MAX_RANK];          /* kernel taps */
    int64_t s[EV_MAX_RANK];          /* strides */
    int64_t d[EV_MAX_RANK];          /* dilations */
    int64_t pb[EV_MAX_RANK];         /* pads at the beginning (may be < 0) */
    int64_t pe[EV_MAX_RANK];         /* pads at the end */
    int64_t img[EV_MAX_RANK];        /* image extents */
    int64_t grid[EV_MAX_RANK];       /* window positions */
    size_t k_sz, img_sz, grid_sz;    /* products of the above */
} EvGeom;

/* A numpy matmul: [..., m, k] x [..., k, n] with broadcast batch axes. */
typedef struct EvMM {
    size_t m, n, k;
    size_t brank, nb;                  /* batch axes and their product */
    int64_t bdims[EV_MAX_RANK];
    size_t astr[EV_MAX_RANK];          /* matrix strides per batch axis */
    size_t bstr[EV_MAX_RANK];          /* (0 where the operand broadcasts) */
    bool b_single;                     /* B has no batch: one tall product */
} EvMM;

/* Optional input i: NULL when absent, else it must be a tensor of dtype. */
int ev_opt_tensor(EvCtx *c, size_t i, int32_t dtype, const char *what,
                  EvValue **out);
/* Reads the window attributes of a conv or pool over x's spatial axes and
 * derives the grid. wk: the weight's kernel dims (NULL for pools). */
int ev_win_read(EvCtx *c, const EvValue *x, const int64_t *wk, bool ceil,
                EvGeom *g);
/* Checks X [N, C, D...] against W [M, C/group, k...] (or, transposed,
 * W [C, M/group, k...]) and reads group. */
int ev_conv_shapes(EvCtx *c, const EvValue *x, const EvValue *w,
                   bool transposed, size_t *groups);
/* y [nb, co, grid] = conv(x [nb, ci, img], w [co, ci/groups, k]) + b. */
int ev_conv_core(EvCtx *c, bool dbl, const EvGeom *g, size_t nb, size_t ci,
                 size_t co, size_t groups, const void *x, const void *w,
                 const void *b, void *y);
/* The output [N, M, grid...] of a conv. */
EvValue *ev_conv_out(EvCtx *c, int32_t dtype, const EvValue *x, int64_t m,
                     const EvGeom *g);
/* Shapes of A x B; the output shape into rank/dims. 1-D A gains a leading
 * 1 and 1-D B a trailing 1, both dropped from the output. */
int ev_mm_shape(EvCtx *c, const EvValue *a, const EvValue *b, EvMM *mm,
                size_t *rank, int64_t *dims);
/* y = a x b in float or double, one gemm per batch (or one in all when B
 * has no batch axes: A's batches stack into a tall matrix). */
int ev_mm_real(EvCtx *c, const EvMM *mm, bool dbl, const void *a,
               const void *b, void *y);
/* int8 or uint8: the operand types of the integer products. */
static inline bool ev_is_8bit(int32_t dt)
{
    return dt == IR_INT8 || dt == IR_UINT8;
}

/* ---- index.c ------------------------------------------------------------ */

/* A new output shaped like t (zeroed). */
EvValue *ev_out_like(EvCtx *c, size_t i, const EvValue *t);

/* ---- attention.c and its neighbours: elements as doubles ------------- */

/* Element k of t (float read directly: these sit in per-element loops of
 * attention, activation, sample, reduce and einsum, so they are inline
 * here). */
static inline double ev_at_get(const EvValue *t, size_t k)
{
    return t->dtype == IR_FLOAT ? ((const float *)t->data)[k]
                                : ev_get_f(t, k);
}

static inline void ev_at_put(EvValue *t, size_t k, double v)
{
    if (t->dtype == IR_FLOAT)
        ((float *)t->data)[k] = (float)v;
    else
        ev_set_f(t, k, v);
}

/* v as stored in element type dt (where the function body computes in
 * the input type, e.g. a float16 MatMul). */
static inline double ev_at_round(int32_t dt, double v)
{
    switch (dt) {
    case IR_FLOAT:
        return (float)v;
    case IR_FLOAT16:
        return half_f16_to_f32(half_f32_to_f16((float)v));
    case IR_BFLOAT16:
        return half_bf16_to_f32(half_f32_to_bf16((float)v));
    default:
        return v;
    }
}

/* ---- sgemm.c: the float32 matrix product ------------------------------ */

/* y[m x n] = alpha * op(a) * op(b) + beta * y, row-major (op transposes
 * when ta/tb). Every sum is one chain of fused multiply-adds in k order,
 * so an element does not depend on its position, the blocking, the
 * thread count or the CPU; y is not read when beta is 0. */
void ev_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha,
              const float *a, size_t lda, const float *b, size_t ldb, float beta,
              float *y, size_t ldy);
/* Its kernels: plain C, AVX2 + FMA, AVX-512. */
enum { EV_SGEMM_C, EV_SGEMM_AVX2, EV_SGEMM_AVX512 };
/* Holds ev_sgemm to kernels up to isa (for tests, which compare their
 * bits); false when this CPU cannot run isa's own kernel. */
int ev_sgemm_limit(int isa);

#endif
