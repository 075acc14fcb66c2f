/* Miscellaneous ops (ai.onnx): NonMaxSuppression-10/11,
 * TfIdfVectorizer-9, ImageDecoder-20.
 *
 * - NonMaxSuppression: per (batch, class), boxes whose score passes
 *   score_threshold (strictly greater, when given) are taken in decreasing
 *   score order (equal scores: lower box index first); a box is kept when
 *   its IoU with every box kept before it is not above iou_threshold, until
 *   max_output_boxes_per_class are kept (absent or 0: none). Boxes with zero
 *   area overlap nothing. Output rows [batch, class, box] in batch, class,
 *   selection order. IoU is computed in float, as the tests' producer does,
 *   so that boundary cases decide the same way. Versions 10 and 11 agree.
 * - TfIdfVectorizer: the pool holds n-grams of lengths 1..K, those of
 *   length n starting at ngram_counts[n-1]; the j-th n-gram of the pool
 *   counts into output ngram_indexes[j] and has weight weights[j]. Every
 *   n in [min_gram_length, max_gram_length] and every skip in
 *   [0, max_skip_count] is tried from every start position (unigrams once);
 *   the output width is max(ngram_indexes) + 1.
 * - ImageDecoder needs an image codec; this build has none, so it fails. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

/* ---- NonMaxSuppression ------------------------------------------------ */

typedef struct EvNmsCand {
    float score;
    size_t box;
} EvNmsCand;

/* Decreasing score, then increasing box index (a total order: NaN scores
 * never get here). */
static int ev_nms_cmp(const void *a, const void *b)
{
    const EvNmsCand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->box < y->box ? -1 : x->box > y->box;
}

/* Corners (ymin, xmin, ymax, xmax) of a box in either encoding. */
static void ev_nms_corners(const float *b, bool center, float out[4])
{
    if (center) {
        float xc = b[0], yc = b[1], w = b[2] / 2.0f, h = b[3] / 2.0f;
        out[0] = yc - h;
        out[1] = xc - w;
        out[2] = yc + h;
        out[3] = xc + w;
        return;
    }
    out[0] = b[0] < b[2] ? b[0] : b[2];
    out[1] = b[1] < b[3] ? b[1] : b[3];
    out[2] = b[0] < b[2] ? b[2] : b[0];
    out[3] = b[1] < b[3] ? b[3] : b[1];
}

static float ev_nms_iou(const float a[4], const float b[4])
{
    float area_a = (a[2] - a[0]) * (a[3] - a[1]);
    float area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (!(area_a > 0) || !(area_b > 0))
        return 0;
    float y0 = a[0] > b[0] ? a[0] : b[0], x0 = a[1] > b[1] ? a[1] : b[1];
    float y1 = a[2] < b[2] ? a[2] : b[2], x1 = a[3] < b[3] ? a[3] : b[3];
    if (!(y1 > y0) || !(x1 > x0))
        return 0;
    float inter = (y1 - y0) * (x1 - x0);
    return inter / (area_a + area_b - inter);
}

/* A scalar (or one-element) optional input as a double; dflt if absent. */
static int ev_nms_scalar(EvCtx *c, size_t i, double dflt, double *out,
                         bool *given)
{
    EvValue *v = ev_in(c, i);
    *out = dflt;
    if (given)
        *given = v != NULL;
    if (!v)
        return 0;
    if (v->kind != EV_TENSOR || v->numel != 1 || v->rank > 1)
        return ev_fail(c, "input %zu must hold one value", i);
    *out = ev_dtype_is_float(v->dtype) ? ev_get_f(v, 0)
                                       : (double)ev_get_i(v, 0);
    return 0;
}

static int ev_non_max_suppression(EvCtx *c)
{
    EvValue *boxes = ev_in_tensor(c, 0);
    EvValue *scores = boxes ? ev_in_tensor(c, 1) : NULL;
    if (!scores)
        return -1;
    if (boxes->dtype != IR_FLOAT || scores->dtype != IR_FLOAT)
        return ev_fail(c, "boxes and scores must be float tensors");
    if (boxes->rank != 3 || boxes->dims[2] != 4)
        return ev_fail(c, "boxes must be [num_batches, spatial_dimension, 4]");
    if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
        scores->dims[2] != boxes->dims[1])
        return ev_fail(c, "scores must be [num_batches, num_classes, "
                          "spatial_dimension] matching boxes");
    int64_t center = ev_attr_i(c, "center_point_box");
    if (center != 0 && center != 1)
        return ev_fail(c, "center_point_box must be 0 or 1");
    double max_out, iou_th, score_th;
    bool has_score_th;
    EvValue *mo = ev_in(c, 2);
    if (mo && mo->kind == EV_TENSOR && ev_dtype_is_float(mo->dtype))
        return ev_fail(c, "max_output_boxes_per_class must be an integer");
    if (ev_nms_scalar(c, 2, 0, &max_out, NULL) ||
        ev_nms_scalar(c, 3, 0, &iou_th, NULL) ||
        ev_nms_scalar(c, 4, 0, &score_th, &has_score_th))
        return -1;
    size_t nb = (size_t)boxes->dims[0], ns = (size_t)boxes->dims[1],
           nc = (size_t)scores->dims[1];
    size_t per_class = max_out <= 0 ? 0 : max_out < (double)ns ? (size_t)max_out : ns;
    if (!per_class) {
        int64_t none[2] = {0, 3};
        return ev_out_tensor(c, 0, IR_INT64, 2, none) ? 0 : -1;
    }
    size_t cap;
    if (!mem_mul_size(nb, nc, &cap) || !mem_mul_size(cap, per_class, &cap))
        return ev_fail(c, "too many boxes");
    size_t *sel = ev_tmp(c, cap ? cap : 1, sizeof *sel);
    size_t *count = ev_tmp(c, nb * nc, sizeof *count);
    EvNmsCand *cand = ev_tmp(c, ns ? ns : 1, sizeof *cand);
    float(*corner)[4] = ev_tmp(c, ns ? ns : 1, sizeof *corner);
    if (!sel || !count || !cand || !corner)
        return -1;
    const float *bx = boxes->data, *sc = scores->data;
    float fiou = (float)iou_th, fscore = (float)score_th;
    size_t total = 0;
    for (size_t b = 0; b < nb; b++) {
        for (size_t s = 0; s < ns; s++)
            ev_nms_corners(bx + (b * ns + s) * 4, center, corner[s]);
        for (size_t k = 0; k < nc; k++) {
            const float *row = sc + (b * nc + k) * ns;
            size_t n = 0, kept = 0, *mine = sel + total;
            for (size_t s = 0; s < ns; s++)
                if (!isnan(row[s]) && (!has_score_th || row[s] > fscore))
                    cand[n++] = (EvNmsCand){row[s], s};
            qsort(cand, n, sizeof *cand, ev_nms_cmp);
            for (size_t i = 0; i < n && kept < per_class; i++) {
                bool ok = true;
                for (size_t j = 0; j < kept && ok; j++)
                    ok = !(ev_nms_iou(corner[cand[i].box], corner[mine[j]]) >
                           fiou);
                if (ok)
                    mine[kept++] = cand[i].box;
            }
            count[b * nc + k] = kept;
            total += kept;
        }
    }
    int64_t dims[2] = {(int64_t)total, 3};
    EvValue *y = ev_out_tensor(c, 0, IR_INT64, 2, dims);
    if (!y)
        return -1;
    int64_t *out = y->data;
    size_t r = 0;
    for (size_t b = 0; b < nb; b++)
        for (size_t k = 0; k < nc; k++)
            for (size_t j = 0; j < count[b * nc + k]; j++, r++) {
                out[r * 3] = (int64_t)b;
                out[r * 3 + 1] = (int64_t)k;
                out[r * 3 + 2] = (int64_t)sel[r];
            }
    return 0;
}

/* ---- TfIdfVectorizer -------------------------------------------------- */

typedef struct EvTfIdf {
    size_t k_max;             /* longest n-gram in the pool */
    const int64_t *counts;    /* ngram_counts: start of each length */
    size_t pool_n;            /* items in the pool */
    const int64_t *pool_i;    /* pool_int64s, or */
    const IrBytes *pool_s;    /* pool_strings */
    const int64_t *index;     /* ngram_indexes */
    size_t n_grams;
    size_t first_gram[65];    /* global gram number of the first n-gram */
} EvTfIdf;

static int ev_tfidf_pool(EvCtx *c, EvTfIdf *t)
{
    long nc = ev_attr_ints(c, "ngram_counts", &t->counts);
    long ni = ev_attr_ints(c, "ngram_indexes", &t->index);
    long npi = ev_attr_ints(c, "pool_int64s", &t->pool_i);
    long nps = ev_attr_strings(c, "pool_strings", &t->pool_s);
    if (nc < 0 || ni < 0)
        return ev_fail(c, "ngram_counts and ngram_indexes are required");
    if ((npi < 0) == (nps < 0))
        return ev_fail(c, "exactly one of pool_int64s and pool_strings is "
                          "needed");
    if (nc > 64)
        return ev_fail(c, "n-grams longer than 64 are not supported");
    t->k_max = (size_t)nc;
    t->pool_n = (size_t)(npi >= 0 ? npi : nps);
    size_t grams = 0;
    for (size_t n = 1; n <= t->k_max; n++) {
        int64_t start = t->counts[n - 1];
        int64_t end = n < t->k_max ? t->counts[n] : (int64_t)t->pool_n;
        if (start < 0 || end < start || (uint64_t)end > t->pool_n)
            return ev_fail(c, "ngram_counts do not fit the pool");
        if ((uint64_t)(end - start) % n)
            return ev_fail(c, "the %zu-grams of the pool are not a whole "
                           "number", n);
        t->first_gram[n - 1] = grams;
        grams += (size_t)(end - start) / n;
    }
    t->first_gram[t->k_max] = grams;
    if (grams != (size_t)ni)
        return ev_fail(c, "ngram_indexes has %ld entries, the pool %zu "
                       "n-grams", ni, grams);
    t->n_grams = grams;
    for (size_t j = 0; j < grams; j++)
        if (t->index[j] < 0 || t->index[j] >= INT64_MAX)
            return ev_fail(c, "ngram_indexes entry out of range");
    return 0;
}

/* Does pool item p equal input element x[k]? */
static bool ev_tfidf_eq(const EvTfIdf *t, size_t p, const EvValue *x,
                        size_t k)
{
    if (t->pool_s) {
        const EvStr *s = &((const EvStr *)x->data)[k];
        return s->len == t->pool_s[p].len &&
               (!s->len || !memcmp(s->p, t->pool_s[p].data, s->len));
    }
    return t->pool_i[p] == ev_get_i(x, k);
}

/* The gram number of the n-gram x[pos], x[pos+step], ... in the pool, or
 * SIZE_MAX. */
static size_t ev_tfidf_find(const EvTfIdf *t, const EvValue *x, size_t pos,
                            size_t step, size_t n)
{
    size_t start = (size_t)t->counts[n - 1];
    size_t count = t->first_gram[n] - t->first_gram[n - 1];
    for (size_t g = 0; g < count; g++) {
        size_t p = start + g * n, i = 0;
        while (i < n && ev_tfidf_eq(t, p + i, x, pos + i * step))
            i++;
        if (i == n)
            return t->first_gram[n - 1] + g;
    }
    return SIZE_MAX;
}

static int ev_tfidf_vectorizer(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    EvTfIdf t;
    memset(&t, 0, sizeof t);
    if (ev_tfidf_pool(c, &t))
        return -1;
    bool strings = t.pool_s != NULL;
    if (strings ? x->dtype != IR_STRING
                : (x->dtype != IR_INT32 && x->dtype != IR_INT64))
        return ev_fail(c, "X's type does not match the pool's");
    if (x->rank != 1 && x->rank != 2)
        return ev_fail(c, "X must be 1-D or 2-D");
    const char *mode = ev_attr_s_or(c, "mode", "");
    int m = !mode ? -1 : !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1
          : !strcmp(mode, "TFIDF") ? 2 : -1;
    if (m < 0)
        return ev_fail(c, "mode must be TF, IDF or TFIDF");
    int64_t gmin = ev_attr_i_or(c, "min_gram_length", -1);
    int64_t gmax = ev_attr_i_or(c, "max_gram_length", -1);
    int64_t skip = ev_attr_i_or(c, "max_skip_count", -1);
    if (gmin < 1 || gmax < gmin || skip < 0)
        return ev_fail(c, "need 1 <= min_gram_length <= max_gram_length and "
                          "max_skip_count >= 0");
    const float *w = NULL;
    long nw = ev_attr_floats(c, "weights", &w);
    if (nw >= 0 && (size_t)nw != t.n_grams)
        return ev_fail(c, "weights must have one entry per n-gram");
    int64_t width = 0;
    for (size_t j = 0; j < t.n_grams; j++)
        width = t.index[j] + 1 > width ? t.index[j] + 1 : width;
    size_t rows = x->rank == 2 ? (size_t)x->dims[0] : 1;
    size_t len = (size_t)x->dims[x->rank - 1];
    int64_t dims[2] = {x->rank == 2 ? x->dims[0] : width, width};
    EvValue *y = ev_out_tensor(c, 0, IR_FLOAT, x->rank, dims);
    if (!y)
        return -1;
    double *cnt = ev_tmp(c, t.n_grams ? t.n_grams : 1, sizeof *cnt);
    if (!cnt)
        return -1;
    size_t top = (uint64_t)gmax < t.k_max ? (size_t)gmax : t.k_max;
    /* a skip of len or more fits no 2-gram */
    size_t skips = (uint64_t)skip < len ? (size_t)skip : len;
    for (size_t r = 0; r < rows; r++) {
        memset(cnt, 0, (t.n_grams ? t.n_grams : 1) * sizeof *cnt);
        for (size_t n = (size_t)gmin; n <= top; n++)
            for (size_t s = 0; s <= (n == 1 ? 0 : skips); s++)
                for (size_t i = 0; i < len; i++) {
                    /* the last item, i + (n-1)(s+1), must be in the row */
                    if ((n - 1) * (s + 1) >= len - i)
                        break;
                    size_t g = ev_tfidf_find(&t, x, r * len + i, s + 1, n);
                    if (g != SIZE_MAX)
                        cnt[g] += 1;
                }
        float *out = (float *)y->data + r * (size_t)width;
        for (size_t j = 0; j < t.n_grams; j++) {
            double wt = nw >= 0 ? w[j] : 1.0;
            double v = m == 0 ? cnt[j] : m == 1 ? (cnt[j] > 0 ? wt : 0)
                                                : cnt[j] * wt;
            out[t.index[j]] += (float)v;
        }
    }
    return 0;
}

/* ---- ImageDecoder ----------------------------------------------------- */

static int ev_image_decoder(EvCtx *c)
{
    return ev_fail(c, "ImageDecoder needs an image codec this build does "
                      "not have");
}

const EvOp ev_ops_misc[] = {
    {"", "NonMaxSuppression", ev_non_max_suppression},
    {"", "TfIdfVectorizer", ev_tfidf_vectorizer},
    {"", "ImageDecoder", ev_image_decoder},
    {NULL, NULL, NULL},
};
