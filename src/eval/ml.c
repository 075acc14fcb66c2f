/* The ai.onnx.ml ops: ArrayFeatureExtractor, Binarizer, CastMap,
 * CategoryMapper, DictVectorizer, FeatureVectorizer, Imputer, LabelEncoder
 * (1, 2, 4), LinearClassifier, LinearRegressor, Normalizer, OneHotEncoder,
 * Scaler, SVMClassifier, SVMRegressor, TreeEnsemble (5),
 * TreeEnsembleClassifier and TreeEnsembleRegressor (1, 3, 5), ZipMap.
 *
 * Where the spec is loose, the kernels follow the ONNX reference
 * implementation, which produced the node tests' expected outputs:
 * - "[N,C] or [C]" inputs: a 1-D input is one row; higher ranks flatten
 *   to dims[0] rows.
 * - Scores are computed in double and rounded once into the output type.
 * - The post transforms: LOGISTIC is 1/(1+e^-x), SOFTMAX is per row,
 *   SOFTMAX_ZERO is a softmax that keeps (near-)zero scores at zero and
 *   gives 0.5 everywhere when all are zero, PROBIT uses the Winitzki
 *   approximation of erfinv that ONNX Runtime and the reference use.
 * - The tree ensembles start each tree at its first node in attribute
 *   order (TreeEnsemble 5: at tree_roots), send NaN features the way
 *   nodes_missing_value_tracks_true says, and with MIN/MAX aggregation
 *   leave targets no leaf reached at the largest/smallest finite value of
 *   the working type. TreeEnsembleClassifier's binary case (all weights on
 *   one class) writes [1-s, s] (NONE, PROBIT) or [-s, s] before the
 *   transform.
 * - SVMClassifier follows libsvm: one-vs-one votes, pairwise decision
 *   values, and with prob_a/prob_b the pairwise-coupling probabilities.
 * - Lookups (LabelEncoder, CategoryMapper, ...) go through sorted tables;
 *   a repeated key maps to its last value, NaN keys match NaN inputs. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "base/fconv.h"

/* ---- shared helpers ------------------------------------------------- */

/* Stores a string element (the tensor owns the copy). */
static void ev_put_str(EvValue *t, size_t k, const void *p, size_t len)
{
    EvStr *s = (EvStr *)t->data + k;
    free(s->p);
    s->p = mem_alloc(len + 1);
    if (len)
        memcpy(s->p, p, len);
    s->len = len;
}

static bool ev_is_numeric(const EvValue *t)
{
    return t && t->kind == EV_TENSOR && t->dtype != IR_STRING &&
           (ev_dtype_is_float(t->dtype) || ev_dtype_is_int(t->dtype));
}

/* A numeric tensor input. */
static EvValue *ev_in_num(EvCtx *c, size_t i)
{
    EvValue *t = ev_in_tensor(c, i);
    if (t && !ev_is_numeric(t)) {
        ev_fail(c, "input %zu must be a numeric tensor", i);
        return NULL;
    }
    return t;
}

/* Rows and features of an "[N,C] or [C]" input. */
static int ev_rows(EvCtx *c, const EvValue *x, size_t *n, size_t *f)
{
    if (x->rank == 0)
        return ev_fail(c, "the input must be [N,C] or [C], not a scalar");
    *n = x->rank == 1 ? 1 : (size_t)x->dims[0];
    *f = x->rank == 1 ? (size_t)x->dims[0] : ev_dims_prod(x->dims, 1, x->rank);
    return 0;
}

/* A float list attribute as doubles, or the double-precision tensor
 * attribute `tname` when it is set (the *_as_tensor variants). *n = -1
 * when neither is there. */
static int ev_attr_dvec(EvCtx *c, const char *name, const char *tname,
                        double **v, long *n)
{
    *v = NULL;
    *n = -1;
    if (tname && ev_attr(c, tname)) {
        EvValue *t = ev_attr_tensor(c, tname);
        if (!t)
            return -1;
        if (!ev_is_numeric(t)) {
            ev_unref(t);
            return ev_fail(c, "attribute '%s' must be numeric", tname);
        }
        *v = ev_tmp(c, t->numel + 1, sizeof **v);
        for (size_t k = 0; k < t->numel; k++)
            (*v)[k] = ev_get_f(t, k);
        *n = (long)t->numel;
        ev_unref(t);
        return 0;
    }
    const float *f;
    long m = ev_attr_floats(c, name, &f);
    if (m < 0)
        return 0;
    *v = ev_tmp(c, (size_t)m + 1, sizeof **v);
    for (long k = 0; k < m; k++)
        (*v)[k] = f[k];
    *n = m;
    return 0;
}

/* A tensor attribute that must be there, as a new reference. */
static EvValue *ev_attr_tensor_req(EvCtx *c, const char *name)
{
    if (!ev_attr(c, name)) {
        ev_fail(c, "attribute '%s' is required", name);
        return NULL;
    }
    return ev_attr_tensor(c, name);
}

/* Class labels: exactly one of the int and string lists. */
typedef struct EvLabels {
    size_t n;
    const int64_t *ints;   /* NULL when labels are strings */
    const IrBytes *strs;
} EvLabels;

static int ev_labels(EvCtx *c, const char *iname, const char *sname,
                     EvLabels *L)
{
    long ni = ev_attr_ints(c, iname, &L->ints);
    long ns = ev_attr_strings(c, sname, &L->strs);
    if (ni > 0 && ns > 0)
        return ev_fail(c, "only one of '%s' and '%s' may be set", iname, sname);
    if (ni <= 0 && ns <= 0)
        return ev_fail(c, "one of '%s' and '%s' is required", iname, sname);
    L->n = (size_t)(ni > 0 ? ni : ns);
    if (ni <= 0)
        L->ints = NULL;
    return 0;
}

/* The label output: N labels, int64 or string. */
static EvValue *ev_label_out(EvCtx *c, const EvLabels *L, size_t n)
{
    int64_t d = (int64_t)n;
    return ev_out_tensor(c, 0, L->ints ? IR_INT64 : IR_STRING, 1, &d);
}

static void ev_label_set(EvValue *y, const EvLabels *L, size_t k, size_t idx)
{
    if (L->ints)
        ev_set_i(y, k, L->ints[idx]);
    else
        ev_put_str(y, k, L->strs[idx].data, L->strs[idx].len);
}

/* ---- post transforms ------------------------------------------------- */

enum { EV_PT_NONE, EV_PT_SOFTMAX, EV_PT_LOGISTIC, EV_PT_SOFTMAX_ZERO,
       EV_PT_PROBIT };

static int ev_post_code(EvCtx *c, const char *s, int *pt)
{
    static const char *const names[] = {"NONE", "SOFTMAX", "LOGISTIC",
                                        "SOFTMAX_ZERO", "PROBIT"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i])) {
            *pt = i;
            return 0;
        }
    return ev_fail(c, "post_transform '%s' is not one of NONE, SOFTMAX, "
                   "LOGISTIC, SOFTMAX_ZERO, PROBIT", s);
}

static int ev_post_attr(EvCtx *c, int *pt)
{
    return ev_post_code(c, ev_attr_s(c, "post_transform"), pt);
}

static double ev_logistic(double x)
{
    double v = 1.0 / (1.0 + exp(-fabs(x)));
    return x < 0 ? 1.0 - v : v;
}

static void ev_softmax(double *v, size_t n)
{
    double mx = -INFINITY, s = 0;
    for (size_t i = 0; i < n; i++)
        mx = v[i] > mx ? v[i] : mx;
    for (size_t i = 0; i < n; i++)
        s += v[i] = exp(v[i] - mx);
    for (size_t i = 0; i < n; i++)
        v[i] /= s;
}

/* Softmax over the non-zero scores; zeros stay (scaled) zeros. */
static void ev_softmax_zero(double *v, size_t n)
{
    double mx = -INFINITY, s = 0;
    for (size_t i = 0; i < n; i++)
        mx = v[i] > mx ? v[i] : mx;
    for (size_t i = 0; i < n; i++) {
        v[i] = v[i] > 1e-7 || v[i] < -1e-7 ? exp(v[i] - mx) : v[i] * exp(-mx);
        s += v[i];
    }
    for (size_t i = 0; i < n; i++)
        v[i] = s == 0 ? 0.5 : v[i] / s;
}

/* Winitzki's approximation of erfinv (a = 0.147). */
static double ev_erfinv(double x)
{
    double sgn = x < 0 ? -1.0 : 1.0;
    x = (1.0 - x) * (1.0 + x);
    if (x == 0)
        return 0;
    double lg = log(x);
    double v = 2.0 / (M_PI * 0.147) + 0.5 * lg;
    double v2 = lg / 0.147;
    return sgn * sqrt(-v + sqrt(v * v - v2));
}

static double ev_probit(double p)
{
    return 1.41421356 * ev_erfinv(2.0 * p - 1.0);
}

static void ev_post(int pt, double *v, size_t n)
{
    switch (pt) {
    case EV_PT_SOFTMAX: ev_softmax(v, n); break;
    case EV_PT_SOFTMAX_ZERO: ev_softmax_zero(v, n); break;
    case EV_PT_LOGISTIC:
        for (size_t i = 0; i < n; i++)
            v[i] = ev_logistic(v[i]);
        break;
    case EV_PT_PROBIT:
        for (size_t i = 0; i < n; i++)
            v[i] = ev_probit(v[i]);
        break;
    default: break;
    }
}

/* ---- sorted lookup tables ------------------------------------------- */

enum { EV_KEY_INT = 1, EV_KEY_FLOAT, EV_KEY_STR };

typedef struct EvKey {
    int64_t i;
    double f;
    const char *s;
    size_t len;
    size_t pos;     /* index in the attribute list */
} EvKey;

typedef struct EvKeys {
    int kind;
    size_t n;
    EvKey *k;
} EvKeys;

static int ev_key_cmp(int kind, const EvKey *a, const EvKey *b)
{
    if (kind == EV_KEY_INT)
        return (a->i > b->i) - (a->i < b->i);
    if (kind == EV_KEY_FLOAT) {
        bool an = isnan(a->f), bn = isnan(b->f);
        if (an || bn)
            return an - bn;  /* NaN sorts last and equals NaN */
        return (a->f > b->f) - (a->f < b->f);
    }
    size_t m = a->len < b->len ? a->len : b->len;
    int r = m ? memcmp(a->s, b->s, m) : 0;
    return r ? r : (a->len > b->len) - (a->len < b->len);
}

/* qsort has no context argument: one comparator per kind, ties broken by
 * position so that the last of equal keys is found last. */
#define EV_KEY_SORTER(name, kind)                                   \
    static int name(const void *pa, const void *pb)                 \
    {                                                               \
        const EvKey *a = pa, *b = pb;                               \
        int r = ev_key_cmp(kind, a, b);                             \
        return r ? r : (a->pos > b->pos) - (a->pos < b->pos);       \
    }
EV_KEY_SORTER(ev_key_sort_i, EV_KEY_INT)
EV_KEY_SORTER(ev_key_sort_f, EV_KEY_FLOAT)
EV_KEY_SORTER(ev_key_sort_s, EV_KEY_STR)

static void ev_keys_sort(EvKeys *K)
{
    int (*cmp)(const void *, const void *) =
        K->kind == EV_KEY_INT ? ev_key_sort_i
        : K->kind == EV_KEY_FLOAT ? ev_key_sort_f : ev_key_sort_s;
    if (K->n > 1)
        qsort(K->k, K->n, sizeof *K->k, cmp);
}

/* Position of the last key equal to probe, or -1. */
static long ev_keys_find(const EvKeys *K, const EvKey *probe)
{
    size_t lo = 0, hi = K->n;   /* first key greater than probe */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev_key_cmp(K->kind, &K->k[mid], probe) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ev_key_cmp(K->kind, &K->k[lo - 1], probe) != 0)
        return -1;
    return (long)K->k[lo - 1].pos;
}

static void ev_keys_ints(EvCtx *c, EvKeys *K, const int64_t *v, size_t n)
{
    K->kind = EV_KEY_INT;
    K->n = n;
    K->k = ev_tmp(c, n + 1, sizeof *K->k);
    for (size_t i = 0; i < n; i++) {
        K->k[i].i = v[i];
        K->k[i].pos = i;
    }
    ev_keys_sort(K);
}

static void ev_keys_strs(EvCtx *c, EvKeys *K, const IrBytes *v, size_t n)
{
    K->kind = EV_KEY_STR;
    K->n = n;
    K->k = ev_tmp(c, n + 1, sizeof *K->k);
    for (size_t i = 0; i < n; i++) {
        K->k[i].s = (const char *)v[i].data;
        K->k[i].len = v[i].len;
        K->k[i].pos = i;
    }
    ev_keys_sort(K);
}

/* The kind of key a tensor's elements make. */
static int ev_key_kind(int32_t dtype)
{
    return dtype == IR_STRING ? EV_KEY_STR
           : ev_dtype_is_float(dtype) ? EV_KEY_FLOAT : EV_KEY_INT;
}

/* Element k of a tensor as a lookup probe of the given kind. */
static void ev_probe(const EvValue *t, size_t k, int kind, EvKey *p)
{
    memset(p, 0, sizeof *p);
    if (kind == EV_KEY_STR) {
        const EvStr *s = (const EvStr *)t->data + k;
        p->s = s->p;
        p->len = s->len;
    } else if (kind == EV_KEY_FLOAT) {
        p->f = ev_get_f(t, k);
    } else {
        p->i = ev_get_i(t, k);
    }
}

/* Keys from a tensor (strings borrowed from it: it must outlive K). */
static void ev_keys_tensor(EvCtx *c, EvKeys *K, const EvValue *t)
{
    K->kind = ev_key_kind(t->dtype);
    K->n = t->numel;
    K->k = ev_tmp(c, t->numel + 1, sizeof *K->k);
    for (size_t i = 0; i < t->numel; i++) {
        ev_probe(t, i, K->kind, &K->k[i]);
        K->k[i].pos = i;
    }
    ev_keys_sort(K);
}

/* ---- ArrayFeatureExtractor, Binarizer -------------------------------- */

static int ev_array_feature_extractor(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    size_t m;
    int64_t *idx = x ? ev_in_ints(c, 1, &m) : NULL;
    if (!idx)
        return -1;
    if (x->rank == 0)
        return ev_fail(c, "X must have at least one dimension");
    int64_t last = x->dims[x->rank - 1];
    for (size_t j = 0; j < m; j++)
        if (idx[j] < 0 || idx[j] >= last)
            return ev_fail(c, "index %lld is out of range [0, %lld)",
                           (long long)idx[j], (long long)last);
    int64_t dims[EV_MAX_RANK];
    size_t r = x->rank == 1 ? 2 : x->rank;
    if (x->rank == 1)
        dims[0] = 1;
    else
        memcpy(dims, x->dims, (x->rank - 1) * sizeof *dims);
    dims[r - 1] = (int64_t)m;
    EvValue *z = ev_out_tensor(c, 0, x->dtype, r, dims);
    if (!z)
        return -1;
    size_t rows = ev_dims_prod(x->dims, 0, x->rank - 1), es = ev_dtype_size(x->dtype);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < m; j++) {
            size_t from = i * (size_t)last + (size_t)idx[j], to = i * m + j;
            if (x->dtype == IR_STRING) {
                const EvStr *s = (const EvStr *)x->data + from;
                ev_put_str(z, to, s->p, s->len);
            } else {
                memcpy((char *)z->data + to * es, (char *)x->data + from * es, es);
            }
        }
    return 0;
}

/* Values above the threshold become 1, the others 0; NaN stays NaN. */
static int ev_binarizer(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    if (!x)
        return -1;
    double th = ev_attr_f(c, "threshold");
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    bool fl = ev_dtype_is_float(x->dtype);
    for (size_t k = 0; k < x->numel; k++) {
        double v = fl ? ev_get_f(x, k) : 0;
        if (fl && isnan(v))
            ev_set_f(y, k, v);
        else if (fl)
            ev_set_i(y, k, v > th);
        else
            ev_set_i(y, k, (double)ev_get_i(x, k) > th);
    }
    return 0;
}

/* ---- maps: CastMap, DictVectorizer, ZipMap --------------------------- */

/* The map input: keys (1-D tensor) and values (tensor of as many). */
static EvValue *ev_in_map(EvCtx *c, size_t i)
{
    EvValue *m = ev_in(c, i);
    if (!m || m->kind != EV_MAP || !m->keys || !m->vals ||
        m->keys->kind != EV_TENSOR || m->vals->kind != EV_TENSOR ||
        m->keys->numel != m->vals->numel) {
        ev_fail(c, "input %zu must be a map of tensor values", i);
        return NULL;
    }
    return m;
}

static int ev_cmp_size(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Element k of src stored into dst[j], converting between strings and
 * numbers (CastMap's TO_STRING / TO_FLOAT / TO_INT64). */
static void ev_convert_elem(EvValue *dst, size_t j, const EvValue *src,
                            size_t k)
{
    if (dst->dtype == IR_STRING && src->dtype == IR_STRING) {
        const EvStr *s = (const EvStr *)src->data + k;
        ev_put_str(dst, j, s->p, s->len);
    } else if (dst->dtype == IR_STRING) {
        char buf[64];
        int len = ev_dtype_is_float(src->dtype)
            ? snprintf(buf, sizeof buf, "%f", ev_get_f(src, k))
            : snprintf(buf, sizeof buf, "%lld", (long long)ev_get_i(src, k));
        ev_put_str(dst, j, buf, (size_t)len);
    } else if (src->dtype == IR_STRING) {
        const char *p = ((const EvStr *)src->data)[k].p;
        ev_set_f(dst, j, p ? strtod(p, NULL) : 0);
    } else if (ev_dtype_is_float(src->dtype)) {
        ev_set_f(dst, j, ev_get_f(src, k));
    } else {
        ev_set_i(dst, j, ev_get_i(src, k));
    }
}

static int ev_cast_map(EvCtx *c)
{
    EvValue *m = ev_in_map(c, 0);
    if (!m)
        return -1;
    if (m->keys->dtype != IR_INT64)
        return ev_fail(c, "the map's keys must be int64");
    const char *to = ev_attr_s(c, "cast_to");
    const char *form = ev_attr_s(c, "map_form");
    int32_t dt = !strcmp(to, "TO_FLOAT") ? IR_FLOAT
                 : !strcmp(to, "TO_STRING") ? IR_STRING
                 : !strcmp(to, "TO_INT64") ? IR_INT64 : 0;
    if (!dt)
        return ev_fail(c, "cast_to '%s' is not supported", to);
    bool sparse = !strcmp(form, "SPARSE");
    if (!sparse && strcmp(form, "DENSE"))
        return ev_fail(c, "map_form '%s' is not DENSE or SPARSE", form);
    size_t n = m->keys->numel;
    int64_t max_map = ev_attr_i(c, "max_map");
    if (sparse && max_map < 0)
        return ev_fail(c, "max_map must not be negative");
    /* (key, index) pairs sorted by key. */
    int64_t *ord = ev_tmp(c, 2 * n + 2, sizeof *ord);
    for (size_t k = 0; k < n; k++) {
        ord[2 * k] = ev_get_i(m->keys, k);
        ord[2 * k + 1] = (int64_t)k;
        if (sparse && (ord[2 * k] < 0 || ord[2 * k] >= max_map))
            return ev_fail(c, "key %lld is outside [0, max_map)",
                           (long long)ord[2 * k]);
    }
    qsort(ord, n, 2 * sizeof *ord, ev_cmp_size);
    int64_t dims[2] = {1, sparse ? max_map : (int64_t)n};
    EvValue *y = ev_out_tensor(c, 0, dt, 2, dims);
    if (!y)
        return -1;
    if (sparse && dt == IR_STRING)
        for (int64_t j = 0; j < max_map; j++)
            ev_put_str(y, (size_t)j, "0", 1);
    for (size_t k = 0; k < n; k++)
        ev_convert_elem(y, sparse ? (size_t)ord[2 * k] : k, m->vals,
                        (size_t)ord[2 * k + 1]);
    return 0;
}

static int ev_dict_vectorizer(EvCtx *c)
{
    EvValue *m = ev_in_map(c, 0);
    if (!m)
        return -1;
    const int64_t *iv;
    const IrBytes *sv;
    long ni = ev_attr_ints(c, "int64_vocabulary", &iv);
    long ns = ev_attr_strings(c, "string_vocabulary", &sv);
    if ((ni > 0) == (ns > 0))
        return ev_fail(c, "exactly one vocabulary attribute must be set");
    EvKeys K;
    if (ni > 0)
        ev_keys_ints(c, &K, iv, (size_t)ni);
    else
        ev_keys_strs(c, &K, sv, (size_t)ns);
    if (ev_key_kind(m->keys->dtype) != K.kind)
        return ev_fail(c, "the map's key type does not match the vocabulary");
    int64_t dims[2] = {1, ni > 0 ? ni : ns};
    EvValue *y = ev_out_tensor(c, 0, m->vals->dtype, 2, dims);
    if (!y)
        return -1;
    for (size_t k = 0; k < m->keys->numel; k++) {
        EvKey p;
        ev_probe(m->keys, k, K.kind, &p);
        long at = ev_keys_find(&K, &p);
        if (at >= 0)
            ev_convert_elem(y, (size_t)at, m->vals, k);
    }
    return 0;
}

static int ev_zip_map(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    EvLabels L;
    size_t n, f;
    if (!x || ev_labels(c, "classlabels_int64s", "classlabels_strings", &L) ||
        ev_rows(c, x, &n, &f))
        return -1;
    if (x->dtype != IR_FLOAT)
        return ev_fail(c, "X must be a float tensor");
    if (f != L.n)
        return ev_fail(c, "X has %zu columns, there are %zu labels", f, L.n);
    int64_t d = (int64_t)L.n;
    EvValue *keys = ev_tensor_new(L.ints ? IR_INT64 : IR_STRING, 1, &d, NULL);
    for (size_t j = 0; j < L.n; j++)
        ev_label_set(keys, &L, j, j);
    EvValue *seq = ev_sequence_new();   /* handed over once filled */
    for (size_t i = 0; i < n; i++) {
        EvValue *mp = mem_alloc(sizeof *mp);
        mp->kind = EV_MAP;
        mp->refs = 1;
        mp->keys = ev_ref(keys);
        mp->vals = ev_tensor_new(IR_FLOAT, 1, &d, NULL);
        if (f)
            memcpy(mp->vals->data, (float *)x->data + i * f, f * sizeof(float));
        ev_sequence_push(seq, mp);
    }
    ev_unref(keys);
    ev_out_set(c, 0, seq);
    return 0;
}

/* ---- CategoryMapper, LabelEncoder, OneHotEncoder --------------------- */

static int ev_category_mapper(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    const int64_t *ci;
    const IrBytes *cs;
    long ni = ev_attr_ints(c, "cats_int64s", &ci);
    long ns = ev_attr_strings(c, "cats_strings", &cs);
    if (ni < 0 || ns < 0 || ni != ns)
        return ev_fail(c, "cats_int64s and cats_strings must have one length");
    EvKeys K;
    bool from_str = x->dtype == IR_STRING;
    if (!from_str && x->dtype != IR_INT64)
        return ev_fail(c, "X must be a string or int64 tensor");
    if (from_str)
        ev_keys_strs(c, &K, cs, (size_t)ns);
    else
        ev_keys_ints(c, &K, ci, (size_t)ni);
    EvValue *y = ev_out_tensor(c, 0, from_str ? IR_INT64 : IR_STRING, x->rank,
                               x->dims);
    if (!y)
        return -1;
    int64_t di = ev_attr_i(c, "default_int64");
    const char *ds = ev_attr_s(c, "default_string");
    for (size_t k = 0; k < x->numel; k++) {
        EvKey p;
        ev_probe(x, k, K.kind, &p);
        long at = ev_keys_find(&K, &p);
        if (from_str)
            ev_set_i(y, k, at >= 0 ? ci[at] : di);
        else if (at >= 0)
            ev_put_str(y, k, cs[at].data, cs[at].len);
        else
            ev_put_str(y, k, ds, strlen(ds));
    }
    return 0;
}

/* LabelEncoder-1: strings to their index in classes_strings, or int64
 * indexes back to the strings. */
static int ev_label_encoder1(EvCtx *c, const EvValue *x)
{
    const IrBytes *cs;
    long n = ev_attr_strings(c, "classes_strings", &cs);
    if (n < 0)
        n = 0;
    bool from_str = x->dtype == IR_STRING;
    if (!from_str && x->dtype != IR_INT64)
        return ev_fail(c, "X must be a string or int64 tensor");
    EvValue *y = ev_out_tensor(c, 0, from_str ? IR_INT64 : IR_STRING, x->rank,
                               x->dims);
    if (!y)
        return -1;
    int64_t di = ev_attr_i(c, "default_int64");
    const char *ds = ev_attr_s(c, "default_string");
    EvKeys K;
    ev_keys_strs(c, &K, cs, (size_t)n);
    for (size_t k = 0; k < x->numel; k++) {
        if (from_str) {
            EvKey p;
            ev_probe(x, k, EV_KEY_STR, &p);
            long at = ev_keys_find(&K, &p);
            ev_set_i(y, k, at >= 0 ? at : di);
            continue;
        }
        int64_t i = ev_get_i(x, k);
        if (i >= 0 && i < n)
            ev_put_str(y, k, cs[i].data, cs[i].len);
        else
            ev_put_str(y, k, ds, strlen(ds));
    }
    return 0;
}

/* A LabelEncoder key or value list as a 1-D tensor: the list attribute
 * that is set among ints/floats/strings, or (opset 4) the tensor one. */
static EvValue *ev_le_list(EvCtx *c, const char *pre)
{
    char name[32];
    snprintf(name, sizeof name, "%s_tensor", pre);
    if (c->ver >= 4 && ev_attr(c, name))
        return ev_attr_tensor(c, name);
    const int64_t *iv;
    const float *fv;
    const IrBytes *sv;
    snprintf(name, sizeof name, "%s_int64s", pre);
    long ni = ev_attr_ints(c, name, &iv);
    snprintf(name, sizeof name, "%s_floats", pre);
    long nf = ev_attr_floats(c, name, &fv);
    snprintf(name, sizeof name, "%s_strings", pre);
    long ns = ev_attr_strings(c, name, &sv);
    if ((ni >= 0) + (nf >= 0) + (ns >= 0) != 1) {
        ev_fail(c, "exactly one of the %s_* attributes must be set", pre);
        return NULL;
    }
    int64_t n = ni >= 0 ? ni : nf >= 0 ? nf : ns;
    EvValue *t = ev_tensor_new(ni >= 0 ? IR_INT64 : nf >= 0 ? IR_FLOAT
                                                            : IR_STRING,
                               1, &n, NULL);
    for (int64_t k = 0; k < n; k++) {
        if (ni >= 0)
            ev_set_i(t, (size_t)k, iv[k]);
        else if (nf >= 0)
            ev_set_f(t, (size_t)k, fv[k]);
        else
            ev_put_str(t, (size_t)k, sv[k].data, sv[k].len);
    }
    return t;
}

/* The value for keys not found: default_tensor (opset 4), else the
 * default_* attribute of the output's kind. */
static EvValue *ev_le_default(EvCtx *c, int32_t dtype)
{
    if (c->ver >= 4 && ev_attr(c, "default_tensor")) {
        EvValue *d = ev_attr_tensor(c, "default_tensor");
        if (d && (d->numel != 1 || (d->dtype == IR_STRING) != (dtype == IR_STRING))) {
            ev_unref(d);
            ev_fail(c, "default_tensor must hold one value of the output type");
            return NULL;
        }
        return d;
    }
    EvValue *d = ev_tensor_new(dtype, 0, NULL, NULL);
    if (dtype == IR_STRING) {
        const char *s = ev_attr_s(c, "default_string");
        ev_put_str(d, 0, s, strlen(s));
    } else if (ev_dtype_is_float(dtype)) {
        ev_set_f(d, 0, ev_attr_f(c, "default_float"));
    } else {
        ev_set_i(d, 0, ev_attr_i(c, "default_int64"));
    }
    return d;
}

static int ev_label_encoder_map(EvCtx *c, const EvValue *x, EvValue *keys,
                                EvValue *vals, EvValue *dflt)
{
    if (keys->numel != vals->numel)
        return ev_fail(c, "keys and values differ in length (%zu, %zu)",
                       keys->numel, vals->numel);
    if (ev_key_kind(keys->dtype) != ev_key_kind(x->dtype))
        return ev_fail(c, "X's element type does not match the keys'");
    EvKeys K;
    ev_keys_tensor(c, &K, keys);
    EvValue *y = ev_out_tensor(c, 0, vals->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    for (size_t k = 0; k < x->numel; k++) {
        EvKey p;
        ev_probe(x, k, K.kind, &p);
        long at = ev_keys_find(&K, &p);
        ev_convert_elem(y, k, at >= 0 ? vals : dflt, at >= 0 ? (size_t)at : 0);
    }
    return 0;
}

static int ev_label_encoder(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (c->ver < 2)
        return ev_label_encoder1(c, x);
    EvValue *keys = ev_le_list(c, "keys");
    EvValue *vals = keys ? ev_le_list(c, "values") : NULL;
    EvValue *dflt = vals ? ev_le_default(c, vals->dtype) : NULL;
    int rc = dflt ? ev_label_encoder_map(c, x, keys, vals, dflt) : -1;
    ev_unref(keys);
    ev_unref(vals);
    ev_unref(dflt);
    return rc;
}

static int ev_one_hot_encoder(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    const int64_t *ci;
    const IrBytes *cs;
    long ni = ev_attr_ints(c, "cats_int64s", &ci);
    long ns = ev_attr_strings(c, "cats_strings", &cs);
    EvKeys K;
    if (x->dtype == IR_STRING && ns > 0)
        ev_keys_strs(c, &K, cs, (size_t)ns);
    else if (x->dtype != IR_STRING && ni > 0)
        ev_keys_ints(c, &K, ci, (size_t)ni);
    else
        return ev_fail(c, "the categories attribute for X's type is missing");
    if (x->rank >= EV_MAX_RANK)
        return ev_fail(c, "X's rank is too large");
    int64_t dims[EV_MAX_RANK];
    if (x->rank)
        memcpy(dims, x->dims, x->rank * sizeof *dims);
    dims[x->rank] = (int64_t)K.n;
    EvValue *y = ev_out_tensor(c, 0, IR_FLOAT, x->rank + 1, dims);
    if (!y)
        return -1;
    bool zeros = ev_attr_i(c, "zeros") != 0;
    for (size_t k = 0; k < x->numel; k++) {
        EvKey p;
        ev_probe(x, k, K.kind, &p);   /* floats truncate to integers */
        long at = ev_keys_find(&K, &p);
        if (at >= 0)
            ((float *)y->data)[k * K.n + (size_t)at] = 1.0f;
        else if (!zeros)
            return ev_fail(c, "element %zu is not a known category", k);
    }
    return 0;
}

/* ---- FeatureVectorizer, Imputer, Normalizer, Scaler ------------------- */

static int ev_feature_vectorizer(EvCtx *c)
{
    const int64_t *dims;
    long nd = ev_attr_ints(c, "inputdimensions", &dims);
    if (nd < 0 || (size_t)nd != c->n_in)
        return ev_fail(c, "inputdimensions must give one size per input");
    size_t n = 0, total = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        EvValue *x = ev_in_num(c, i);
        size_t r, f;
        if (!x || ev_rows(c, x, &r, &f))
            return -1;
        if (i && r != n)
            return ev_fail(c, "input %zu has %zu rows, input 0 has %zu", i, r, n);
        if (dims[i] < 0 || !mem_add_size(total, (size_t)dims[i], &total))
            return ev_fail(c, "inputdimensions[%zu] is invalid", i);
        n = r;
    }
    int64_t od[2] = {(int64_t)n, (int64_t)total};
    EvValue *y = ev_out_tensor(c, 0, IR_FLOAT, 2, od);
    if (!y)
        return -1;
    /* Each input fills its inputdimensions columns: cut or zero-padded. */
    for (size_t i = 0, col = 0; i < c->n_in; col += (size_t)dims[i], i++) {
        const EvValue *x = c->in[i];
        size_t r, f;
        ev_rows(c, x, &r, &f);
        size_t w = f < (size_t)dims[i] ? f : (size_t)dims[i];
        for (size_t row = 0; row < n; row++)
            for (size_t j = 0; j < w; j++)
                ev_set_f(y, row * total + col + j, ev_get_f(x, row * f + j));
    }
    return 0;
}

static int ev_imputer(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    size_t n, f;
    if (!x || ev_rows(c, x, &n, &f))
        return -1;
    bool fl = ev_dtype_is_float(x->dtype);
    double *fv = NULL;
    long nv;
    const int64_t *iv = NULL;
    if (fl) {
        if (ev_attr_dvec(c, "imputed_value_floats", NULL, &fv, &nv))
            return -1;
    } else {
        nv = ev_attr_ints(c, "imputed_value_int64s", &iv);
    }
    if (nv <= 0 || ((size_t)nv != 1 && (size_t)nv != f))
        return ev_fail(c, "the imputed values must number 1 or %zu", f);
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    double rf = ev_attr_f(c, "replaced_value_float");
    int64_t ri = ev_attr_i(c, "replaced_value_int64");
    for (size_t k = 0; k < x->numel; k++) {
        size_t j = nv == 1 ? 0 : k % f;
        if (fl) {
            double v = ev_get_f(x, k);
            bool hit = isnan(rf) ? isnan(v) : v == rf;
            ev_set_f(y, k, hit ? fv[j] : v);
        } else {
            int64_t v = ev_get_i(x, k);
            ev_set_i(y, k, v == ri ? iv[j] : v);
        }
    }
    return 0;
}

static int ev_normalizer(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    size_t n, f;
    if (!x || ev_rows(c, x, &n, &f))
        return -1;
    const char *norm = ev_attr_s(c, "norm");
    int mode = !strcmp(norm, "MAX") ? 0 : !strcmp(norm, "L1") ? 1
               : !strcmp(norm, "L2") ? 2 : -1;
    if (mode < 0)
        return ev_fail(c, "norm '%s' is not MAX, L1 or L2", norm);
    EvValue *y = ev_out_tensor(c, 0, IR_FLOAT, x->rank, x->dims);
    if (!y)
        return -1;
    for (size_t i = 0; i < n; i++) {
        double d = 0;
        for (size_t j = 0; j < f; j++) {
            double v = ev_get_f(x, i * f + j);
            if (mode == 0)
                d = fabs(v) > d ? fabs(v) : d;
            else
                d += mode == 1 ? fabs(v) : v * v;
        }
        if (mode == 2)
            d = sqrt(d);
        for (size_t j = 0; j < f; j++) {
            double v = ev_get_f(x, i * f + j);
            ev_set_f(y, i * f + j, d != 0 ? v / d : v);
        }
    }
    return 0;
}

static int ev_scaler(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    if (!x)
        return -1;
    double *off, *sc;
    long no, ns;
    if (ev_attr_dvec(c, "offset", NULL, &off, &no) ||
        ev_attr_dvec(c, "scale", NULL, &sc, &ns))
        return -1;
    size_t f = x->rank ? (size_t)x->dims[x->rank - 1] : 1;
    if ((no > 1 && (size_t)no != f) || (ns > 1 && (size_t)ns != f) || !no || !ns)
        return ev_fail(c, "offset and scale must have 1 or %zu values", f);
    EvValue *y = ev_out_tensor(c, 0, IR_FLOAT, x->rank, x->dims);
    if (!y)
        return -1;
    for (size_t k = 0; k < x->numel; k++) {
        size_t j = f ? k % f : 0;
        double o = no < 0 ? 0 : off[no == 1 ? 0 : j];
        double s = ns < 0 ? 1 : sc[ns == 1 ? 0 : j];
        ev_set_f(y, k, (ev_get_f(x, k) - o) * s);
    }
    return 0;
}

/* ---- linear models ---------------------------------------------------- */

/* scores[N][E] = X W^T + b for E rows of coefficients. */
static double *ev_linear_scores(EvCtx *c, const EvValue *x, size_t n, size_t f,
                                const double *w, size_t e, const double *b,
                                long nb)
{
    size_t cells;
    if (!mem_mul_size(n, e, &cells)) {
        ev_fail(c, "too many scores");
        return NULL;
    }
    double *s = ev_tmp(c, cells + 1, sizeof *s);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < e; j++) {
            double acc = nb > 0 ? b[(size_t)nb == e ? j : 0] : 0;
            for (size_t k = 0; k < f; k++)
                acc += ev_get_f(x, i * f + k) * w[j * f + k];
            s[i * e + j] = acc;
        }
    return s;
}

static int ev_linear_regressor(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    size_t n, f;
    double *w, *b;
    long nw, nb;
    int pt;
    if (!x || ev_rows(c, x, &n, &f) || ev_post_attr(c, &pt) ||
        ev_attr_dvec(c, "coefficients", NULL, &w, &nw) ||
        ev_attr_dvec(c, "intercepts", NULL, &b, &nb))
        return -1;
    int64_t t = ev_attr_i(c, "targets");
    size_t want;
    if (t < 1 || nw < 0 || !mem_mul_size((size_t)t, f, &want) ||
        (size_t)nw != want)
        return ev_fail(c, "coefficients must hold targets x %zu values", f);
    if (nb > 0 && nb != t && nb != 1)
        return ev_fail(c, "intercepts must hold one value per target");
    double *s = ev_linear_scores(c, x, n, f, w, (size_t)t, b, nb);
    int64_t dims[2] = {(int64_t)n, t};
    EvValue *y = s ? ev_out_tensor(c, 0, IR_FLOAT, 2, dims) : NULL;
    if (!y)
        return -1;
    for (size_t i = 0; i < n; i++) {
        ev_post(pt, s + i * (size_t)t, (size_t)t);
        for (size_t j = 0; j < (size_t)t; j++)
            ev_set_f(y, i * (size_t)t + j, s[i * (size_t)t + j]);
    }
    return 0;
}

static int ev_linear_classifier(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    EvLabels L;
    size_t n, f;
    double *w, *b;
    long nw, nb;
    int pt;
    if (!x || ev_rows(c, x, &n, &f) || ev_post_attr(c, &pt) ||
        ev_labels(c, "classlabels_ints", "classlabels_strings", &L) ||
        ev_attr_dvec(c, "coefficients", NULL, &w, &nw) ||
        ev_attr_dvec(c, "intercepts", NULL, &b, &nb))
        return -1;
    if (nw <= 0 || !f || (size_t)nw % f)
        return ev_fail(c, "coefficients must hold a multiple of %zu values", f);
    size_t e = (size_t)nw / f;
    if (nb > 0 && (size_t)nb != e && nb != 1)
        return ev_fail(c, "intercepts must hold one value per class");
    double *s = ev_linear_scores(c, x, n, f, w, e, b, nb);
    if (!s)
        return -1;
    /* One score for two labels: the columns become [-s, s]. */
    size_t cols = e == 1 && L.n == 2 ? 2 : e;
    int64_t zd[2] = {(int64_t)n, (int64_t)cols};
    EvValue *y = ev_label_out(c, &L, n);
    EvValue *z = y ? ev_out_tensor(c, 1, IR_FLOAT, 2, zd) : NULL;
    double *row = ev_tmp(c, cols + 1, sizeof *row);
    if (!z || !row)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (cols != e) {
            row[0] = -s[i];
            row[1] = s[i];
        } else {
            memcpy(row, s + i * e, e * sizeof *row);
        }
        ev_post(pt, row, cols);
        size_t best = 0;
        for (size_t j = 0; j < cols; j++) {
            ev_set_f(z, i * cols + j, row[j]);
            if (row[j] > row[best])
                best = j;
        }
        if (cols == 1) {
            /* A lone score: over the threshold gives the first label, else
             * 0 (or the empty string). */
            double th = pt == EV_PT_NONE ? 0 : 0.5;
            if (row[0] >= th)
                ev_label_set(y, &L, i, 0);
            else if (L.ints)
                ev_set_i(y, i, 0);
            else
                ev_put_str(y, i, "", 0);
        } else if (best < L.n) {
            ev_label_set(y, &L, i, best);
        } else {
            return ev_fail(c, "class %zu has no label", best);
        }
    }
    return 0;
}

/* ---- SVMs ------------------------------------------------------------- */

enum { EV_K_LINEAR, EV_K_POLY, EV_K_RBF, EV_K_SIGMOID };

typedef struct EvKernelP {
    int type;
    double gamma, coef0;
    double degree;
} EvKernelP;

static int ev_kernel_attr(EvCtx *c, EvKernelP *k)
{
    const char *t = ev_attr_s(c, "kernel_type");
    k->type = !strcmp(t, "LINEAR") ? EV_K_LINEAR : !strcmp(t, "POLY") ? EV_K_POLY
              : !strcmp(t, "RBF") ? EV_K_RBF : !strcmp(t, "SIGMOID") ? EV_K_SIGMOID
              : -1;
    if (k->type < 0)
        return ev_fail(c, "kernel_type '%s' is not supported", t);
    const float *p;
    long n = ev_attr_floats(c, "kernel_params", &p);
    k->gamma = n > 0 ? p[0] : 0;
    k->coef0 = n > 1 ? p[1] : 0;
    k->degree = n > 2 ? (double)fc_i64_sat(p[2]) : 0;
    return 0;
}

/* The kernel between row x (f values of X from element off) and v. */
static double ev_kdot(const EvKernelP *k, const EvValue *x, size_t off,
                      const double *v, size_t f)
{
    double s = 0;
    if (k->type == EV_K_RBF) {
        for (size_t j = 0; j < f; j++) {
            double d = ev_get_f(x, off + j) - v[j];
            s += d * d;
        }
        return exp(-k->gamma * s);
    }
    for (size_t j = 0; j < f; j++)
        s += ev_get_f(x, off + j) * v[j];
    if (k->type == EV_K_POLY)
        return pow(s * k->gamma + k->coef0, k->degree);
    if (k->type == EV_K_SIGMOID)
        return tanh(s * k->gamma + k->coef0);
    return s;
}

static int ev_svm_regressor(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    size_t n, f;
    EvKernelP k;
    double *co, *sv, *rho;
    long nco, nsv, nrho;
    int pt;
    if (!x || ev_rows(c, x, &n, &f) || ev_post_attr(c, &pt) ||
        ev_kernel_attr(c, &k) ||
        ev_attr_dvec(c, "coefficients", NULL, &co, &nco) ||
        ev_attr_dvec(c, "support_vectors", NULL, &sv, &nsv) ||
        ev_attr_dvec(c, "rho", NULL, &rho, &nrho))
        return -1;
    int64_t ns = ev_attr_i(c, "n_supports");
    bool one_class = ev_attr_i(c, "one_class") != 0;
    if (ns < 0)
        return ev_fail(c, "n_supports must not be negative");
    if (ns > 0 && (nco < ns || nsv < 0 || (size_t)nsv != (size_t)ns * f))
        return ev_fail(c, "support_vectors and coefficients do not match "
                       "n_supports and the %zu features", f);
    if (ns == 0) {
        k.type = EV_K_LINEAR;
        if (nco < 0 || (size_t)nco != f)
            return ev_fail(c, "coefficients must hold %zu values", f);
    }
    int64_t dims[2] = {(int64_t)n, 1};
    EvValue *y = ev_out_tensor(c, 0, IR_FLOAT, 2, dims);
    if (!y)
        return -1;
    for (size_t i = 0; i < n; i++) {
        double s = nrho > 0 ? rho[0] : 0;
        if (ns > 0)
            for (int64_t j = 0; j < ns; j++)
                s += co[j] * ev_kdot(&k, x, i * f, sv + (size_t)j * f, f);
        else
            s += ev_kdot(&k, x, i * f, co, f);
        if (one_class)
            s = s > 0 ? 1 : -1;
        ev_post(pt, &s, 1);
        ev_set_f(y, i, s);
    }
    return 0;
}

/* libsvm's pairwise coupling (Wu, Lin and Weng): class probabilities p
 * from the k x k pairwise estimates r, iterated until the error is below
 * 0.005/k as libsvm does (so not exact). Q's off-diagonal entries are
 * -r[j][t] r[t][j] each; the Python reference sums them over j for every
 * entry, which only agrees for two classes. */
static void ev_multiclass_proba(size_t k, const double *r, double *p,
                                double *q, double *qp)
{
    for (size_t t = 0; t < k; t++) {
        p[t] = 1.0 / (double)k;
        q[t * k + t] = 0;
        for (size_t j = 0; j < t; j++) {
            q[t * k + t] += r[j * k + t] * r[j * k + t];
            q[t * k + j] = q[j * k + t];
        }
        for (size_t j = t + 1; j < k; j++) {
            q[t * k + t] += r[j * k + t] * r[j * k + t];
            q[t * k + j] = -r[j * k + t] * r[t * k + j];
        }
    }
    size_t max_iter = k > 100 ? k : 100;
    double eps = 0.005 / (double)k;
    for (size_t it = 0; it < max_iter; it++) {
        double pqp = 0, err = 0;
        for (size_t t = 0; t < k; t++) {
            qp[t] = 0;
            for (size_t j = 0; j < k; j++)
                qp[t] += q[t * k + j] * p[j];
            pqp += p[t] * qp[t];
        }
        for (size_t t = 0; t < k; t++)
            err = fabs(qp[t] - pqp) > err ? fabs(qp[t] - pqp) : err;
        if (err < eps)
            break;
        for (size_t t = 0; t < k; t++) {
            double diff = (-qp[t] + pqp) / q[t * k + t];
            p[t] += diff;
            pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) /
                  ((1 + diff) * (1 + diff));
            for (size_t j = 0; j < k; j++) {
                qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff);
                p[j] /= 1 + diff;
            }
        }
    }
}

typedef struct EvSvc {
    EvKernelP k;
    EvLabels L;
    size_t classes, vectors, f, pairs;
    double *co, *sv, *rho, *pa, *pb;
    long nco, nrho, npa, npb;
    size_t *start;          /* first support vector of each class */
    const int64_t *per;     /* vectors_per_class */
    bool all_pos;
} EvSvc;

/* Scores of one row in SVC mode: pairwise decision values and votes. */
static void ev_svc_row(const EvSvc *S, const EvValue *x, size_t off,
                       double *kern, double *scores, double *votes)
{
    for (size_t v = 0; v < S->vectors; v++)
        kern[v] = ev_kdot(&S->k, x, off, S->sv + v * S->f, S->f);
    memset(votes, 0, S->classes * sizeof *votes);
    size_t e = 0;
    for (size_t i = 0; i < S->classes; i++)
        for (size_t j = i + 1; j < S->classes; j++, e++) {
            double s = S->rho[e];
            for (int64_t v = 0; v < S->per[i]; v++)
                s += S->co[(j - 1) * S->vectors + S->start[i] + (size_t)v] *
                     kern[S->start[i] + (size_t)v];
            for (int64_t v = 0; v < S->per[j]; v++)
                s += S->co[i * S->vectors + S->start[j] + (size_t)v] *
                     kern[S->start[j] + (size_t)v];
            scores[e] = s;
            votes[s > 0 ? i : j] += 1;
        }
}

/* Class probabilities of one row from its pairwise decision values. */
static void ev_svc_proba(const EvSvc *S, const double *scores, double *r,
                         double *out, double *q, double *qp)
{
    size_t k = S->classes, e = 0;
    memset(r, 0, k * k * sizeof *r);
    for (size_t i = 0; i < k; i++)
        for (size_t j = i + 1; j < k; j++, e++) {
            double v = 1.0 - ev_logistic(scores[e] * S->pa[e] + S->pb[e]);
            v = v < 1e-7 ? 1e-7 : v > 1 - 1e-7 ? 1 - 1e-7 : v;
            r[i * k + j] = v;
            r[j * k + i] = 1 - v;
        }
    ev_multiclass_proba(k, r, out, q, qp);
}

static int ev_svc_setup(EvCtx *c, EvSvc *S, size_t f)
{
    long nsv;
    if (ev_kernel_attr(c, &S->k) ||
        ev_labels(c, "classlabels_ints", "classlabels_strings", &S->L) ||
        ev_attr_dvec(c, "coefficients", NULL, &S->co, &S->nco) ||
        ev_attr_dvec(c, "support_vectors", NULL, &S->sv, &nsv) ||
        ev_attr_dvec(c, "rho", NULL, &S->rho, &S->nrho) ||
        ev_attr_dvec(c, "prob_a", NULL, &S->pa, &S->npa) ||
        ev_attr_dvec(c, "prob_b", NULL, &S->pb, &S->npb))
        return -1;
    S->classes = S->L.n;
    S->f = f;
    S->pairs = S->classes * (S->classes - 1) / 2;
    long nper = ev_attr_ints(c, "vectors_per_class", &S->per);
    S->start = ev_tmp(c, S->classes + 1, sizeof *S->start);
    for (long i = 0; i < nper; i++) {
        if (S->per[i] < 0 || (size_t)i >= S->classes)
            return ev_fail(c, "vectors_per_class must list one count per class");
        S->start[i] = S->vectors;
        S->vectors += (size_t)S->per[i];
    }
    if (S->nco <= 0 || S->nrho <= 0)
        return ev_fail(c, "coefficients and rho are required");
    S->all_pos = true;
    for (long i = 0; i < S->nco; i++)
        S->all_pos = S->all_pos && S->co[i] >= 0;
    if (!S->vectors) {
        if ((size_t)S->nco != S->classes * f)
            return ev_fail(c, "coefficients must hold classes x %zu values", f);
        return 0;
    }
    if ((size_t)nper != S->classes || nsv < 0 || (size_t)nsv != S->vectors * f ||
        (size_t)S->nco < (S->classes - 1) * S->vectors ||
        (size_t)S->nrho < S->pairs)
        return ev_fail(c, "support vectors, coefficients and rho do not "
                       "match the classes and the %zu features", f);
    if (S->npa > 0 && ((size_t)S->npa < S->pairs || S->npb < S->npa))
        return ev_fail(c, "prob_a and prob_b need one value per class pair");
    return 0;
}

/* The label index and final scores of one row (reference semantics:
 * binary problems with one rho pick between the two labels, and a single
 * score column widens to two). Returns the score count. */
static size_t ev_svc_final(const EvSvc *S, int pt, const double *votes,
                           double *sc, size_t nsc, bool proba, size_t *label,
                           bool *label_is_value)
{
    const double *w = votes ? votes : sc;
    size_t nw = votes ? S->classes : nsc, best = 0;
    for (size_t i = 1; i < nw; i++)
        if (w[i] > w[best])
            best = i;
    double maxw = nw ? w[best] : 0;
    int extra = -1;
    *label_is_value = false;
    if (S->nrho == 1) {
        if (S->L.n == 2) {
            extra = 2;
            *label = !proba && S->all_pos && maxw >= 0.5 ? 1 : best;
        } else {
            *label_is_value = true;   /* 1 or 0 themselves */
            *label = maxw > 0 ? 1 : 0;
        }
    } else {
        *label = best;
    }
    if (nsc >= 2) {
        ev_post(pt, sc, nsc);
        return nsc;
    }
    double s = nsc ? sc[0] : 0;
    if (pt == EV_PT_PROBIT) {
        sc[0] = ev_probit(s);
        return 1;
    }
    if (extra < 2)
        return 1;
    sc[0] = -s;
    sc[1] = s;
    if (pt != EV_PT_NONE)
        ev_post(pt, sc, 2);
    return 2;
}

static int ev_svm_classifier(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    size_t n, f;
    int pt;
    EvSvc S = {0};
    if (!x || ev_rows(c, x, &n, &f) || ev_post_attr(c, &pt) ||
        ev_svc_setup(c, &S, f))
        return -1;
    bool svc = S.vectors > 0, proba = svc && S.npa > 0;
    size_t k = S.classes;
    size_t nsc = svc ? (proba ? k : S.pairs) : k;
    double *kern = ev_tmp(c, S.vectors + 1, sizeof *kern);
    double *raw = ev_tmp(c, S.pairs + k + 2, sizeof *raw);
    double *sc = ev_tmp(c, nsc + 2, sizeof *sc);
    double *votes = ev_tmp(c, k + 1, sizeof *votes);
    double *r = ev_tmp(c, k * k + 1, sizeof *r);
    double *q = ev_tmp(c, k * k + 1, sizeof *q);
    double *qp = ev_tmp(c, k + 1, sizeof *qp);
    EvValue *y = ev_label_out(c, &S.L, n), *z = NULL;
    if (!y)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (svc) {
            ev_svc_row(&S, x, i * f, kern, raw, votes);
            if (proba)
                ev_svc_proba(&S, raw, r, sc, q, qp);
            else
                memcpy(sc, raw, S.pairs * sizeof *sc);
        } else {
            for (size_t j = 0; j < k; j++)
                sc[j] = S.rho[0] + ev_kdot(&(EvKernelP){EV_K_LINEAR, 0, 0, 0},
                                           x, i * f, S.co + j * f, f);
        }
        size_t label;
        bool is_value;
        size_t m = ev_svc_final(&S, pt, svc ? votes : NULL, sc, nsc, proba,
                                &label, &is_value);
        if (!z) {
            int64_t zd[2] = {(int64_t)n, (int64_t)m};
            if (!(z = ev_out_tensor(c, 1, IR_FLOAT, 2, zd)))
                return -1;
        }
        for (size_t j = 0; j < m && j < (size_t)z->dims[1]; j++)
            ev_set_f(z, i * (size_t)z->dims[1] + j, sc[j]);
        if (is_value && S.L.ints)
            ev_set_i(y, i, (int64_t)label);
        else if (label < S.L.n)
            ev_label_set(y, &S.L, i, label);
    }
    if (!z) {
        int64_t zd[2] = {0, (int64_t)nsc};
        if (!ev_out_tensor(c, 1, IR_FLOAT, 2, zd))
            return -1;
    }
    return 0;
}

/* ---- tree ensembles (Regressor, Classifier) ---------------------------- */

enum { EV_BR_LEQ, EV_BR_LT, EV_BR_GTE, EV_BR_GT, EV_BR_EQ, EV_BR_NEQ,
       EV_BR_MEMBER, EV_BR_LEAF };

typedef struct EvTrees {
    size_t n;                 /* nodes */
    const int64_t *tid, *nid, *feat, *tnext, *fnext;
    const int64_t *miss;      /* may be NULL */
    double *thr;
    uint8_t *mode;
    size_t *t_idx, *f_idx;    /* resolved children */
    size_t n_trees, *roots;
    /* leaf weights, grouped by node: node i owns w_*[w_at[i] .. w_at[i+1]) */
    size_t *w_at;
    int64_t *w_id;
    double *w_val;
} EvTrees;

static int ev_mode_code(const IrBytes *s)
{
    static const char *const names[] = {"BRANCH_LEQ", "BRANCH_LT",
                                        "BRANCH_GTE", "BRANCH_GT",
                                        "BRANCH_EQ", "BRANCH_NEQ",
                                        "BRANCH_MEMBER", "LEAF"};
    for (int i = 0; i < 8; i++)
        if (s->len == strlen(names[i]) && !memcmp(s->data, names[i], s->len))
            return i;
    return -1;
}

/* Nodes sorted by (tree id, node id, index), for lookups. */
typedef struct EvNodeKey {
    int64_t tid, nid;
    size_t idx;
} EvNodeKey;

static int ev_node_order(const void *pa, const void *pb)
{
    const EvNodeKey *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->nid != b->nid)
        return a->nid < b->nid ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Index of node (tree, node), or SIZE_MAX. */
static size_t ev_find_node(const EvTrees *T, const EvNodeKey *ord,
                           int64_t tree, int64_t node)
{
    size_t lo = 0, hi = T->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ord[mid].tid < tree || (ord[mid].tid == tree && ord[mid].nid < node))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < T->n && ord[lo].tid == tree && ord[lo].nid == node)
        return ord[lo].idx;
    return SIZE_MAX;
}

/* The node attributes, checked for equal lengths. */
static int ev_trees_nodes(EvCtx *c, EvTrees *T)
{
    static const char *const req[] = {"nodes_treeids", "nodes_nodeids",
                                      "nodes_featureids", "nodes_truenodeids",
                                      "nodes_falsenodeids"};
    const int64_t **dst[] = {&T->tid, &T->nid, &T->feat, &T->tnext, &T->fnext};
    long len = -1;
    for (int i = 0; i < 5; i++) {
        long m = ev_attr_ints(c, req[i], dst[i]);
        if (m < 0 || (len >= 0 && m != len))
            return ev_fail(c, "'%s' is missing or its length differs from the "
                           "other nodes_* attributes", req[i]);
        len = m;
    }
    T->n = (size_t)len;
    const IrBytes *modes;
    long nm = ev_attr_strings(c, "nodes_modes", &modes);
    long nmiss = ev_attr_ints(c, "nodes_missing_value_tracks_true", &T->miss);
    double *thr;
    long nt;
    if (ev_attr_dvec(c, "nodes_values", "nodes_values_as_tensor", &thr, &nt))
        return -1;
    if (nm != len || (nt >= 0 && nt != len) || (nmiss > 0 && nmiss != len))
        return ev_fail(c, "nodes_modes, nodes_values and "
                       "nodes_missing_value_tracks_true must match the nodes");
    if (nmiss <= 0)
        T->miss = NULL;
    T->thr = nt >= 0 ? thr : ev_tmp(c, T->n + 1, sizeof *T->thr);
    T->mode = ev_tmp(c, T->n + 1, 1);
    for (size_t i = 0; i < T->n; i++) {
        int m = ev_mode_code(&modes[i]);
        if (m < 0 || m == EV_BR_MEMBER)
            return ev_fail(c, "node %zu has an unknown mode", i);
        T->mode[i] = (uint8_t)m;
    }
    return 0;
}

/* Children, roots (the first node of each tree id, trees in id order). */
static int ev_trees_link(EvCtx *c, EvTrees *T, const EvNodeKey *ord,
                         size_t f)
{
    T->t_idx = ev_tmp(c, T->n + 1, sizeof *T->t_idx);
    T->f_idx = ev_tmp(c, T->n + 1, sizeof *T->f_idx);
    T->roots = ev_tmp(c, T->n + 1, sizeof *T->roots);
    for (size_t i = 0; i < T->n; i++) {
        if (T->mode[i] == EV_BR_LEAF)
            continue;
        T->t_idx[i] = ev_find_node(T, ord, T->tid[i], T->tnext[i]);
        T->f_idx[i] = ev_find_node(T, ord, T->tid[i], T->fnext[i]);
        if (T->t_idx[i] == SIZE_MAX || T->f_idx[i] == SIZE_MAX)
            return ev_fail(c, "node %zu branches to a node its tree lacks", i);
        if (T->feat[i] < 0 || (size_t)T->feat[i] >= f)
            return ev_fail(c, "node %zu reads feature %lld of %zu", i,
                           (long long)T->feat[i], f);
    }
    for (size_t k = 0; k < T->n; k++) {
        size_t i = ord[k].idx;
        if (k && ord[k - 1].tid == ord[k].tid) {
            size_t *r = &T->roots[T->n_trees - 1];
            *r = i < *r ? i : *r;
        } else {
            T->roots[T->n_trees++] = i;
        }
    }
    return 0;
}

/* The weights (prefix "target" or "class"), grouped by their node. */
static int ev_trees_weights(EvCtx *c, EvTrees *T, const EvNodeKey *ord,
                            const char *pre)
{
    char a[40], b[40], d[40], e[40], g[48];
    snprintf(a, sizeof a, "%s_treeids", pre);
    snprintf(b, sizeof b, "%s_nodeids", pre);
    snprintf(d, sizeof d, "%s_ids", pre);
    snprintf(e, sizeof e, "%s_weights", pre);
    snprintf(g, sizeof g, "%s_weights_as_tensor", pre);
    const int64_t *wt, *wn, *wi;
    long n1 = ev_attr_ints(c, a, &wt), n2 = ev_attr_ints(c, b, &wn),
         n3 = ev_attr_ints(c, d, &wi), n4;
    double *wv;
    if (ev_attr_dvec(c, e, g, &wv, &n4))
        return -1;
    if (n1 < 0)
        n1 = n2 = n3 = n4 = 0;
    if (n2 != n1 || n3 != n1 || n4 != n1)
        return ev_fail(c, "the %s_* attributes differ in length", pre);
    size_t nw = (size_t)n1;
    size_t *node = ev_tmp(c, nw + 1, sizeof *node);
    T->w_at = ev_tmp(c, T->n + 2, sizeof *T->w_at);
    T->w_id = ev_tmp(c, nw + 1, sizeof *T->w_id);
    T->w_val = ev_tmp(c, nw + 1, sizeof *T->w_val);
    for (size_t k = 0; k < nw; k++) {
        node[k] = ev_find_node(T, ord, wt[k], wn[k]);
        if (node[k] == SIZE_MAX)
            return ev_fail(c, "%s weight %zu names a node that does not exist",
                           pre, k);
        T->w_at[node[k] + 1]++;
    }
    for (size_t i = 0; i < T->n; i++)
        T->w_at[i + 1] += T->w_at[i];
    size_t *fill = ev_tmp(c, T->n + 1, sizeof *fill);
    for (size_t k = 0; k < nw; k++) {
        size_t at = T->w_at[node[k]] + fill[node[k]]++;
        T->w_id[at] = wi[k];
        T->w_val[at] = wv[k];
    }
    return 0;
}

static int ev_trees_build(EvCtx *c, EvTrees *T, size_t f, const char *pre)
{
    if (ev_trees_nodes(c, T))
        return -1;
    EvNodeKey *ord = ev_tmp(c, T->n + 1, sizeof *ord);
    for (size_t i = 0; i < T->n; i++)
        ord[i] = (EvNodeKey){T->tid[i], T->nid[i], i};
    qsort(ord, T->n, sizeof *ord, ev_node_order);
    if (ev_trees_link(c, T, ord, f) || ev_trees_weights(c, T, ord, pre))
        return -1;
    return 0;
}

/* The leaf row x (f features at element off) reaches in tree t. */
static int ev_trees_leaf(EvCtx *c, const EvTrees *T, size_t t,
                         const EvValue *x, size_t off, size_t *leaf)
{
    size_t i = T->roots[t];
    for (size_t steps = 0; T->mode[i] != EV_BR_LEAF; steps++) {
        if (steps > T->n)
            return ev_fail(c, "tree %lld has a cycle", (long long)T->tid[i]);
        double v = ev_get_f(x, off + (size_t)T->feat[i]), th = T->thr[i];
        bool go;
        if (isnan(v))
            go = T->miss && T->miss[i];
        else
            switch (T->mode[i]) {
            case EV_BR_LEQ: go = v <= th; break;
            case EV_BR_LT: go = v < th; break;
            case EV_BR_GTE: go = v >= th; break;
            case EV_BR_GT: go = v > th; break;
            case EV_BR_EQ: go = v == th; break;
            default: go = v != th; break;
            }
        i = go ? T->t_idx[i] : T->f_idx[i];
    }
    *leaf = i;
    return 0;
}

static int ev_tree_regressor(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    size_t n, f;
    int pt;
    EvTrees T = {0};
    double *base;
    long nbase;
    if (!x || ev_rows(c, x, &n, &f) || ev_post_attr(c, &pt) ||
        ev_trees_build(c, &T, f, "target") ||
        ev_attr_dvec(c, "base_values", "base_values_as_tensor", &base, &nbase))
        return -1;
    int64_t nt = ev_attr_i_or(c, "n_targets", -1);
    for (size_t k = 0; nt < 0 && k < T.w_at[T.n]; k++)
        nt = T.w_id[k] + 1 > nt ? T.w_id[k] + 1 : nt;
    if (nt < 1)
        return ev_fail(c, "n_targets must be positive");
    for (size_t k = 0; k < T.w_at[T.n]; k++)
        if (T.w_id[k] < 0 || T.w_id[k] >= nt)
            return ev_fail(c, "target id %lld is outside [0, %lld)",
                           (long long)T.w_id[k], (long long)nt);
    if (nbase > 0 && nbase != nt)
        return ev_fail(c, "base_values must hold n_targets values");
    const char *agg = ev_attr_s(c, "aggregate_function");
    int ag = !strcmp(agg, "SUM") ? 0 : !strcmp(agg, "AVERAGE") ? 1
             : !strcmp(agg, "MIN") ? 2 : !strcmp(agg, "MAX") ? 3 : -1;
    if (ag < 0)
        return ev_fail(c, "aggregate_function '%s' is not supported", agg);
    int64_t dims[2] = {(int64_t)n, nt};
    EvValue *y = ev_out_tensor(c, 0, IR_FLOAT, 2, dims);
    if (!y || !n)   /* no rows: n_targets is not bounded by the output */
        return y ? 0 : -1;
    double *s = ev_tmp(c, (size_t)nt + 1, sizeof *s);
    if (!s)
        return -1;
    double big = x->dtype == IR_DOUBLE ? DBL_MAX : FLT_MAX;
    for (size_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < nt; j++)
            s[j] = ag == 2 ? big : ag == 3 ? -big : 0;
        for (size_t t = 0; t < T.n_trees; t++) {
            size_t leaf = 0;
            if (ev_trees_leaf(c, &T, t, x, i * f, &leaf))
                return -1;
            for (size_t k = T.w_at[leaf]; k < T.w_at[leaf + 1]; k++) {
                double w = T.w_val[k], *d = &s[T.w_id[k]];
                *d = ag <= 1 ? *d + w : ag == 2 ? (w < *d ? w : *d)
                                                : (w > *d ? w : *d);
            }
        }
        for (int64_t j = 0; j < nt; j++) {
            if (ag == 1 && T.n_trees)
                s[j] /= (double)T.n_trees;
            s[j] += nbase > 0 ? base[j] : 0;
        }
        ev_post(pt, s, (size_t)nt);
        for (int64_t j = 0; j < nt; j++)
            ev_set_f(y, i * (size_t)nt + (size_t)j, s[j]);
    }
    return 0;
}

/* Scores of one row of TreeEnsembleClassifier, widened and transformed;
 * returns the index of the winning column. */
static size_t ev_tree_class_row(const EvTrees *T, int pt, bool binary,
                                double *s, size_t cols)
{
    if (binary) {
        s[1] = s[0];
        s[0] = pt == EV_PT_NONE || pt == EV_PT_PROBIT ? 1 - s[1] : -s[1];
    }
    ev_post(pt, s, cols);
    size_t best = 0;
    for (size_t j = 1; j < cols; j++)
        if (s[j] > s[best])
            best = j;
    return best;
}

static int ev_tree_classifier(EvCtx *c)
{
    EvValue *x = ev_in_num(c, 0);
    size_t n, f;
    int pt;
    EvTrees T = {0};
    EvLabels L;
    double *base;
    long nbase;
    if (!x || ev_rows(c, x, &n, &f) || ev_post_attr(c, &pt) ||
        ev_labels(c, "classlabels_int64s", "classlabels_strings", &L) ||
        ev_trees_build(c, &T, f, "class") ||
        ev_attr_dvec(c, "base_values", "base_values_as_tensor", &base, &nbase))
        return -1;
    size_t nw = T.w_at[T.n];
    bool binary = nw > 0;
    for (size_t k = 0; k < nw; k++) {
        if (T.w_id[k] < 0 || (size_t)T.w_id[k] >= L.n)
            return ev_fail(c, "class id %lld is outside [0, %zu)",
                           (long long)T.w_id[k], L.n);
        binary = binary && T.w_id[k] == T.w_id[0];
    }
    if (nbase > 0 && (size_t)nbase != L.n)
        return ev_fail(c, "base_values must hold one value per class");
    if (L.n == 1 && (!binary || !L.ints || L.ints[0] != 1))
        return ev_fail(c, "a single class label is only supported as the "
                       "integer 1 of a binary model");
    size_t cols = binary && L.n == 1 ? 2 : L.n;
    int64_t zd[2] = {(int64_t)n, (int64_t)cols};
    EvValue *y = ev_label_out(c, &L, n);
    EvValue *z = y ? ev_out_tensor(c, 1, IR_FLOAT, 2, zd) : NULL;
    double *s = z ? ev_tmp(c, cols + 1, sizeof *s) : NULL;
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < cols; j++)
            s[j] = nbase > 0 && j < L.n ? base[j] : 0;
        for (size_t t = 0; t < T.n_trees; t++) {
            size_t leaf = 0;
            if (ev_trees_leaf(c, &T, t, x, i * f, &leaf))
                return -1;
            for (size_t k = T.w_at[leaf]; k < T.w_at[leaf + 1]; k++)
                s[T.w_id[k]] += T.w_val[k];
        }
        size_t best = ev_tree_class_row(&T, pt, binary, s, cols);
        for (size_t j = 0; j < cols; j++)
            ev_set_f(z, i * cols + j, s[j]);
        if (L.n == 1)
            ev_set_i(y, i, best == 1);
        else
            ev_label_set(y, &L, i, best);
    }
    return 0;
}

/* ---- TreeEnsemble (opset 5) ------------------------------------------ */

typedef struct EvTE {
    size_t n, n_leaves, n_trees;
    const int64_t *feat, *tnext, *fnext, *tleaf, *fleaf, *miss, *roots, *lt;
    EvValue *splits, *modes, *weights, *members;  /* owned */
    size_t *m_at, *m_len;   /* membership set of each MEMBER node */
} EvTE;

static void ev_te_free(EvTE *T)
{
    ev_unref(T->splits);
    ev_unref(T->modes);
    ev_unref(T->weights);
    ev_unref(T->members);
}

static int ev_te_lists(EvCtx *c, EvTE *T)
{
    static const char *const names[] = {"nodes_featureids", "nodes_truenodeids",
                                        "nodes_falsenodeids", "nodes_trueleafs",
                                        "nodes_falseleafs"};
    const int64_t **dst[] = {&T->feat, &T->tnext, &T->fnext, &T->tleaf,
                             &T->fleaf};
    long len = -1;
    for (int i = 0; i < 5; i++) {
        long m = ev_attr_ints(c, names[i], dst[i]);
        if (m < 0 || (len >= 0 && m != len))
            return ev_fail(c, "'%s' is missing or its length differs from the "
                           "other nodes_* attributes", names[i]);
        len = m;
    }
    T->n = (size_t)len;
    long nm = ev_attr_ints(c, "nodes_missing_value_tracks_true", &T->miss);
    if (nm > 0 && (size_t)nm != T->n)
        return ev_fail(c, "nodes_missing_value_tracks_true must match the nodes");
    if (nm <= 0)
        T->miss = NULL;
    long nr = ev_attr_ints(c, "tree_roots", &T->roots);
    long nl = ev_attr_ints(c, "leaf_targetids", &T->lt);
    if (nr < 0 || nl < 0)
        return ev_fail(c, "tree_roots and leaf_targetids are required");
    T->n_trees = (size_t)nr;
    T->n_leaves = (size_t)nl;
    if (!(T->splits = ev_attr_tensor_req(c, "nodes_splits")) ||
        !(T->modes = ev_attr_tensor_req(c, "nodes_modes")) ||
        !(T->weights = ev_attr_tensor_req(c, "leaf_weights")))
        return -1;
    if (ev_attr(c, "membership_values") &&
        !(T->members = ev_attr_tensor(c, "membership_values")))
        return -1;
    if (T->splits->numel != T->n || T->modes->numel != T->n ||
        T->weights->numel != T->n_leaves || !ev_is_numeric(T->splits) ||
        !ev_is_numeric(T->modes) || !ev_is_numeric(T->weights) ||
        (T->members && !ev_is_numeric(T->members)))
        return ev_fail(c, "nodes_splits/nodes_modes must match the nodes and "
                       "leaf_weights the leaves");
    return 0;
}

/* Checks every reference and splits membership_values into one NaN-ended
 * set per BRANCH_MEMBER node, in node order. */
static int ev_te_check(EvCtx *c, EvTE *T, size_t f, int64_t nt)
{
    T->m_at = ev_tmp(c, T->n + 1, sizeof *T->m_at);
    T->m_len = ev_tmp(c, T->n + 1, sizeof *T->m_len);
    size_t pos = 0, nmem = T->members ? T->members->numel : 0;
    for (size_t i = 0; i < T->n; i++) {
        int64_t m = ev_get_i(T->modes, i);
        if (m < EV_BR_LEQ || m > EV_BR_MEMBER)
            return ev_fail(c, "node %zu has unknown mode %lld", i, (long long)m);
        if (T->feat[i] < 0 || (size_t)T->feat[i] >= f)
            return ev_fail(c, "node %zu reads feature %lld of %zu", i,
                           (long long)T->feat[i], f);
        int64_t tn = T->tnext[i], fn = T->fnext[i];
        size_t tl = T->tleaf[i] ? T->n_leaves : T->n;
        size_t fl = T->fleaf[i] ? T->n_leaves : T->n;
        if (tn < 0 || (size_t)tn >= tl || fn < 0 || (size_t)fn >= fl)
            return ev_fail(c, "node %zu branches out of range", i);
        if (m != EV_BR_MEMBER)
            continue;
        T->m_at[i] = pos;
        while (pos < nmem && !isnan(ev_get_f(T->members, pos)))
            pos++;
        if (pos >= nmem)
            return ev_fail(c, "membership_values lacks the set of node %zu", i);
        T->m_len[i] = pos - T->m_at[i];
        pos++;
    }
    for (size_t t = 0; t < T->n_trees; t++)
        if (T->roots[t] < 0 || (size_t)T->roots[t] >= T->n)
            return ev_fail(c, "tree root %lld is not a node",
                           (long long)T->roots[t]);
    for (size_t k = 0; k < T->n_leaves; k++)
        if (T->lt[k] < 0 || T->lt[k] >= nt)
            return ev_fail(c, "leaf %zu targets %lld, outside [0, %lld)", k,
                           (long long)T->lt[k], (long long)nt);
    return 0;
}

static bool ev_te_go(const EvTE *T, size_t i, double v)
{
    if (isnan(v))
        return T->miss && T->miss[i];
    double th = ev_get_f(T->splits, i);
    switch (ev_get_i(T->modes, i)) {
    case EV_BR_LEQ: return v <= th;
    case EV_BR_LT: return v < th;
    case EV_BR_GTE: return v >= th;
    case EV_BR_GT: return v > th;
    case EV_BR_EQ: return v == th;
    case EV_BR_NEQ: return v != th;
    default:
        for (size_t k = 0; k < T->m_len[i]; k++)
            if (ev_get_f(T->members, T->m_at[i] + k) == v)
                return true;
        return false;
    }
}

/* The leaf row x (at element off) reaches from root r. */
static int ev_te_leaf(EvCtx *c, const EvTE *T, size_t r, const EvValue *x,
                      size_t off, size_t *leaf)
{
    size_t i = r;
    for (size_t steps = 0; steps <= T->n; steps++) {
        bool go = ev_te_go(T, i, ev_get_f(x, off + (size_t)T->feat[i]));
        size_t next = (size_t)(go ? T->tnext[i] : T->fnext[i]);
        if (go ? T->tleaf[i] : T->fleaf[i]) {
            *leaf = next;
            return 0;
        }
        i = next;
    }
    return ev_fail(c, "the tree at root %zu has a cycle", r);
}

/* Scores n rows of x into y: per target, the leaves' weights aggregated
 * over the trees, then the post transform. */
static int ev_te_run(EvCtx *c, const EvTE *T, const EvValue *x, size_t n,
                     size_t f, int64_t ag, int pt, EvValue *y)
{
    size_t nt = (size_t)y->dims[1];
    double *s = ev_tmp(c, nt + 1, sizeof *s);
    if (!s)
        return -1;
    double big = x->dtype == IR_DOUBLE ? DBL_MAX
                 : x->dtype == IR_FLOAT16 ? 65504.0 : FLT_MAX;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < nt; j++)
            s[j] = ag == 2 ? big : ag == 3 ? -big : 0;
        for (size_t t = 0; t < T->n_trees; t++) {
            size_t leaf = 0;
            if (ev_te_leaf(c, T, (size_t)T->roots[t], x, i * f, &leaf))
                return -1;
            double w = ev_get_f(T->weights, leaf), *d = &s[T->lt[leaf]];
            *d = ag == 1 ? *d + w : ag == 0 ? *d + w / (double)T->n_trees
                 : ag == 2 ? (w < *d ? w : *d) : (w > *d ? w : *d);
        }
        ev_post(pt, s, nt);
        for (size_t j = 0; j < nt; j++)
            ev_set_f(y, i * nt + j, s[j]);
    }
    return 0;
}

static int ev_tree_ensemble(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    size_t n, f;
    if (!x || ev_rows(c, x, &n, &f))
        return -1;
    if (!ev_dtype_is_float(x->dtype))
        return ev_fail(c, "X must be a float tensor");
    int64_t nt = ev_attr_i_or(c, "n_targets", -1);
    int64_t ag = ev_attr_i(c, "aggregate_function");
    int64_t pt = ev_attr_i(c, "post_transform");
    if (nt < 1 || ag < 0 || ag > 3 || pt < 0 || pt > 4)
        return ev_fail(c, "n_targets, aggregate_function or post_transform "
                       "is invalid");
    EvTE T = {0};
    int rc = ev_te_lists(c, &T) || ev_te_check(c, &T, f, nt) ? -1 : 0;
    int64_t dims[2] = {(int64_t)n, nt};
    EvValue *y = rc ? NULL : ev_out_tensor(c, 0, x->dtype, 2, dims);
    if (!y)
        rc = -1;
    else if (n)  /* with no rows, n_targets is not bounded by the output */
        rc = ev_te_run(c, &T, x, n, f, ag, (int)pt, y);
    ev_te_free(&T);
    return rc;
}

const EvOp ev_ops_ml[] = {
    {"ai.onnx.ml", "ArrayFeatureExtractor", ev_array_feature_extractor},
    {"ai.onnx.ml", "Binarizer", ev_binarizer},
    {"ai.onnx.ml", "CastMap", ev_cast_map},
    {"ai.onnx.ml", "CategoryMapper", ev_category_mapper},
    {"ai.onnx.ml", "DictVectorizer", ev_dict_vectorizer},
    {"ai.onnx.ml", "FeatureVectorizer", ev_feature_vectorizer},
    {"ai.onnx.ml", "Imputer", ev_imputer},
    {"ai.onnx.ml", "LabelEncoder", ev_label_encoder},
    {"ai.onnx.ml", "LinearClassifier", ev_linear_classifier},
    {"ai.onnx.ml", "LinearRegressor", ev_linear_regressor},
    {"ai.onnx.ml", "Normalizer", ev_normalizer},
    {"ai.onnx.ml", "OneHotEncoder", ev_one_hot_encoder},
    {"ai.onnx.ml", "Scaler", ev_scaler},
    {"ai.onnx.ml", "SVMClassifier", ev_svm_classifier},
    {"ai.onnx.ml", "SVMRegressor", ev_svm_regressor},
    {"ai.onnx.ml", "TreeEnsemble", ev_tree_ensemble},
    {"ai.onnx.ml", "TreeEnsembleClassifier", ev_tree_classifier},
    {"ai.onnx.ml", "TreeEnsembleRegressor", ev_tree_regressor},
    {"ai.onnx.ml", "ZipMap", ev_zip_map},
    {NULL, NULL, NULL}
};
