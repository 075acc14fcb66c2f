/* Random ops (ai.onnx): RandomUniform-1/22, RandomNormal-1/22,
 * RandomUniformLike-1/22, RandomNormalLike-1/22, Multinomial-7/22,
 * Bernoulli-15/22.
 *
 * Values come from the run's generator (ev_random), or, when the node has
 * a `seed` attribute, from a generator of this node seeded by it, so that a
 * seeded node gives the same values on every run. No attempt is made to
 * reproduce another implementation's generator: the node tests that expect
 * numpy's exact draws cannot pass.
 *
 * - Normal draws use Box-Muller (both values of each pair).
 * - The *Like ops take only the input's shape; their dtype defaults to the
 *   input's type, which must then be a float type.
 * - Multinomial's input holds unnormalized log-probabilities per row.
 * - Bernoulli gives 1 with probability p (the spec's text; its function
 *   body, which compares the draw the other way round, is not followed). */
#include <math.h>
#include <string.h>

#include "eval/eval.h"

/* One node's source of uniform doubles in [0, 1). */
typedef struct EvRng {
    EvCtx *c;
    bool seeded;
    uint64_t state;     /* splitmix64, when seeded */
    bool has_spare;     /* Box-Muller's second value */
    double spare;
} EvRng;

static void ev_rng_init(EvCtx *c, EvRng *r)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    if (ev_attr(c, "seed")) {
        float seed = ev_attr_f_or(c, "seed", 0.0f);
        uint32_t bits;
        memcpy(&bits, &seed, sizeof bits);
        r->seeded = true;
        r->state = 0x243f6a8885a308d3ull ^ bits;
    }
}

static double ev_rng_uniform(EvRng *r)
{
    if (!r->seeded)
        return ev_random(r->c);
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static double ev_rng_normal(EvRng *r)
{
    if (r->has_spare) {
        r->has_spare = false;
        return r->spare;
    }
    double u1 = 1.0 - ev_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = ev_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
    r->spare = rad * sin(th);
    r->has_spare = true;
    return rad * cos(th);
}

/* The output type: the dtype attribute, else dflt (-1: none). */
static int ev_random_dtype(EvCtx *c, int64_t dflt, int32_t *dt)
{
    int64_t v = ev_attr_i_or(c, "dtype", dflt);
    if (v < 0)
        return ev_fail(c, "dtype is required: the input is not a float "
                          "tensor");
    if (v > INT32_MAX || !ev_dtype_is_real((int32_t)v))
        return ev_fail(c, "unsupported dtype %lld", (long long)v);
    *dt = (int32_t)v;
    return 0;
}

/* Fills t with low + (high-low)*U or mean + scale*N. */
static void ev_random_fill(EvCtx *c, EvValue *t, bool normal, double a,
                           double b)
{
    EvRng r;
    ev_rng_init(c, &r);
    for (size_t k = 0; k < t->numel; k++) {
        double v = normal ? a + b * ev_rng_normal(&r)
                          : a + (b - a) * ev_rng_uniform(&r);
        ev_set_f(t, k, v);
    }
}

static int ev_random_common(EvCtx *c, bool normal, bool like)
{
    int32_t dt;
    size_t rank;
    const int64_t *dims;
    if (like) {
        EvValue *x = ev_in_tensor(c, 0);
        if (!x)
            return -1;
        if (ev_random_dtype(c, ev_dtype_is_real(x->dtype) ? x->dtype : -1,
                            &dt))
            return -1;
        rank = x->rank;
        dims = x->dims;
    } else {
        if (ev_random_dtype(c, IR_FLOAT, &dt))
            return -1;
        long n = ev_attr_ints(c, "shape", &dims);
        if (n < 0)
            return ev_fail(c, "shape attribute is required");
        for (long k = 0; k < n; k++)
            if (dims[k] < 0)
                return ev_fail(c, "shape has a negative dim");
        rank = (size_t)n;
    }
    EvValue *y = ev_out_tensor(c, 0, dt, rank, dims);
    if (!y)
        return -1;
    if (normal)
        ev_random_fill(c, y, true, ev_attr_f(c, "mean"),
                       ev_attr_f_or(c, "scale", 1.0f));
    else
        ev_random_fill(c, y, false, ev_attr_f(c, "low"),
                       ev_attr_f_or(c, "high", 1.0f));
    return 0;
}

static int ev_random_uniform(EvCtx *c) { return ev_random_common(c, false, false); }
static int ev_random_normal(EvCtx *c) { return ev_random_common(c, true, false); }
static int ev_random_uniform_like(EvCtx *c) { return ev_random_common(c, false, true); }
static int ev_random_normal_like(EvCtx *c) { return ev_random_common(c, true, true); }

/* ---- Multinomial ------------------------------------------------------ */

static int ev_multinomial(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (!ev_dtype_is_real(x->dtype))
        return ev_fail(c, "input must be a float tensor");
    if (x->rank != 2)
        return ev_fail(c, "input must be [batch_size, class_size]");
    int64_t dtype = ev_attr_i(c, "dtype");
    if (dtype != IR_INT32 && dtype != IR_INT64)
        return ev_fail(c, "dtype must be int32 or int64");
    int64_t samples = ev_attr_i(c, "sample_size");
    if (samples < 0)
        return ev_fail(c, "sample_size must not be negative");
    size_t rows = (size_t)x->dims[0], classes = (size_t)x->dims[1];
    int64_t dims[2] = {x->dims[0], samples};
    EvValue *y = ev_out_tensor(c, 0, (int32_t)dtype, 2, dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    if (!classes)
        return ev_fail(c, "class_size is 0");
    double *cum = ev_tmp(c, classes, sizeof *cum);
    if (!cum)
        return -1;
    EvRng r;
    ev_rng_init(c, &r);
    for (size_t b = 0; b < rows; b++) {
        double mx = -INFINITY, total = 0;
        for (size_t k = 0; k < classes; k++) {
            double v = ev_get_f(x, b * classes + k);
            if (isnan(v) || v == INFINITY)
                return ev_fail(c, "row %zu holds NaN or +Inf", b);
            mx = v > mx ? v : mx;
        }
        if (mx == -INFINITY)
            return ev_fail(c, "row %zu has no class with a probability", b);
        for (size_t k = 0; k < classes; k++) {
            total += exp(ev_get_f(x, b * classes + k) - mx);
            cum[k] = total;
        }
        for (size_t s = 0; s < (size_t)samples; s++) {
            double u = ev_rng_uniform(&r) * total;
            size_t k = 0;
            while (k + 1 < classes && !(u < cum[k]))
                k++;
            ev_set_i(y, b * (size_t)samples + s, (int64_t)k);
        }
    }
    return 0;
}

/* ---- Bernoulli -------------------------------------------------------- */

static bool ev_bernoulli_type(int32_t dt)
{
    return ev_dtype_is_real(dt) || dt == IR_BOOL ||
           (ev_dtype_is_int(dt) && ev_dtype_size(dt) >= 1 &&
            dt != IR_INT4 && dt != IR_UINT4 && dt != IR_INT2 && dt != IR_UINT2);
}

static int ev_bernoulli(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (!ev_dtype_is_real(x->dtype))
        return ev_fail(c, "input must be a float tensor");
    int64_t dt = ev_attr_i_or(c, "dtype", x->dtype);
    if (dt < 0 || dt > INT32_MAX || !ev_bernoulli_type((int32_t)dt))
        return ev_fail(c, "unsupported dtype %lld", (long long)dt);
    EvValue *y = ev_out_tensor(c, 0, (int32_t)dt, x->rank, x->dims);
    if (!y)
        return -1;
    EvRng r;
    ev_rng_init(c, &r);
    for (size_t k = 0; k < x->numel; k++) {
        double p = ev_get_f(x, k);
        if (!(p >= 0 && p <= 1))
            return ev_fail(c, "probability %g at element %zu is outside "
                           "[0, 1]", p, k);
        ev_set_i(y, k, ev_rng_uniform(&r) < p);
    }
    return 0;
}

const EvOp ev_ops_random[] = {
    {"", "RandomUniform", ev_random_uniform},
    {"", "RandomNormal", ev_random_normal},
    {"", "RandomUniformLike", ev_random_uniform_like},
    {"", "RandomNormalLike", ev_random_normal_like},
    {"", "Multinomial", ev_multinomial},
    {"", "Bernoulli", ev_bernoulli},
    {NULL, NULL, NULL},
};
