/*
 * test_sgemm.c - the evaluator's float32 matrix product (src/eval/sgemm.c).
 *
 * Its promise: every element is the chain y = fma(a_k, b_k, y) over
 * k = 0..K-1 from +0, then alpha * y + beta * y_old, whatever the
 * element's position, the blocking (shapes that cross every block size
 * and leave partial tiles) or the kernel (plain C, AVX2, AVX-512). The
 * expected bits come from that definition written as the plainest loop.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/kernels.h"
#include "t.h"

typedef struct {
    size_t m, n, k;
    bool ta, tb;
    float alpha, beta;
} TsCase;

static const TsCase ts_cases[] = {
    {1, 1, 1, false, false, 1.0f, 0.0f},
    {3, 5, 7, false, false, 1.0f, 0.0f},
    {8, 32, 256, false, false, 1.0f, 0.0f},       /* one whole tile, one block */
    {37, 100, 300, false, false, 1.0f, 0.0f},     /* partial tiles, two blocks of K */
    {130, 1090, 600, false, false, 1.0f, 0.0f},   /* past MC, NC and KC */
    {9, 64, 513, true, false, 1.0f, 0.0f},        /* A transposed, B in place */
    {17, 40, 300, true, true, 1.0f, 0.0f},
    {20, 33, 70, false, true, 1.0f, 0.0f},        /* B transposed, packed */
    {1, 70, 1000, false, true, 1.0f, 0.0f},       /* the few-rows gather path */
    {4, 35, 5000, false, true, 0.5f, 2.0f},
    {12, 50, 600, false, false, 0.5f, 2.0f},      /* beta over several blocks */
    {12, 50, 200, false, false, -1.5f, 1.0f},     /* beta in one block */
    {6, 7, 0, false, false, 1.0f, 3.0f},          /* an empty sum */
    {128, 9, 576, false, false, 1.0f, 0.0f},      /* computed as y^T: few columns */
    {100, 5, 300, true, false, 0.5f, 2.0f},       /* y^T with beta, several blocks */
    {64, 7, 100, false, true, 1.0f, 0.0f},
    {40, 3, 50, true, true, -2.0f, 1.0f},
};

static float ts_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The definition, one element at a time. */
static void ts_expect(const TsCase *c, const float *a, const float *b, const float *y0,
                      float *y)
{
    for (size_t i = 0; i < c->m; i++)
        for (size_t j = 0; j < c->n; j++) {
            float s = 0.0f;
            for (size_t k = 0; k < c->k; k++) {
                float av = c->ta ? a[k * c->m + i] : a[i * c->k + k];
                float bv = c->tb ? b[j * c->k + k] : b[k * c->n + j];
                s = fmaf(av, bv, s);
            }
            float old = y0[i * c->n + j];
            y[i * c->n + j] = c->alpha == 1.0f && c->beta == 0.0f ? s
                              : c->beta == 0.0f ? c->alpha * s
                                                : c->alpha * s + c->beta * old;
        }
}

static void ts_case(const TsCase *c, int isa, const char *isa_name)
{
    size_t na = c->m * c->k, nb = c->k * c->n, ny = c->m * c->n;
    float *a = malloc((na + 1) * sizeof *a), *b = malloc((nb + 1) * sizeof *b);
    float *y0 = malloc(ny * sizeof *y0), *y = malloc(ny * sizeof *y);
    float *want = malloc(ny * sizeof *want);
    unsigned s = (unsigned)(c->m * 131 + c->n * 7 + c->k);
    for (size_t i = 0; i < na; i++)
        a[i] = ts_rand(&s);
    for (size_t i = 0; i < nb; i++)
        b[i] = ts_rand(&s) * 1000.0f;
    for (size_t i = 0; i < ny; i++)
        y0[i] = ts_rand(&s);
    ts_expect(c, a, b, y0, want);
    memcpy(y, y0, ny * sizeof *y);
    ev_sgemm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, a, c->ta ? c->m : c->k, b,
             c->tb ? c->k : c->n, c->beta, y, c->n);
    size_t bad = 0, first = 0;
    for (size_t i = ny; i-- > 0;)
        if (memcmp(&y[i], &want[i], sizeof *y) != 0) {
            bad++;
            first = i;
        }
    T_CHECK(bad == 0, "%s %zux%zux%zu ta=%d tb=%d: %zu elements differ from the fma "
            "chain, first [%zu]: %.9g, expected %.9g", isa_name, c->m, c->n, c->k,
            c->ta, c->tb, bad, first, bad ? y[first] : 0.0, bad ? want[first] : 0.0);
    free(a);
    free(b);
    free(y0);
    free(y);
    free(want);
}

/* Rows of identical weights give identical rows of output, wherever they
 * fall in a tile: OpenBLAS's sgemm broke this, and with it the softmax of
 * the backend's light_squeezenet. */
static void ts_identical_rows(const char *isa_name)
{
    size_t m = 37, n = 70, k = 300;
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    float *y = malloc(m * n * sizeof *y);
    unsigned s = 7;
    for (size_t kk = 0; kk < k; kk++) {
        float v = ts_rand(&s);
        for (size_t i = 0; i < m; i++)
            a[i * k + kk] = v;
    }
    for (size_t i = 0; i < k * n; i++)
        b[i] = ts_rand(&s) * 1e8f;
    ev_sgemm(false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, y, n);
    size_t bad = 0;
    for (size_t i = 1; i < m; i++)
        bad += memcmp(y + i * n, y, n * sizeof *y) != 0;
    T_CHECK(bad == 0, "%s: %zu of %zu rows with the first row's weights differ from it",
            isa_name, bad, m - 1);
    free(a);
    free(b);
    free(y);
}

int main(void)
{
    static const struct {
        int isa;
        const char *name;
    } isas[] = {{EV_SGEMM_C, "plain C"}, {EV_SGEMM_AVX2, "AVX2"},
                {EV_SGEMM_AVX512, "AVX-512"}};
    for (size_t q = 0; q < sizeof isas / sizeof *isas; q++) {
        if (!ev_sgemm_limit(isas[q].isa)) {
            T_SKIP("sgemm %s kernel: this CPU does not run it", isas[q].name);
            continue;
        }
        for (size_t i = 0; i < sizeof ts_cases / sizeof *ts_cases; i++)
            ts_case(&ts_cases[i], isas[q].isa, isas[q].name);
        ts_identical_rows(isas[q].name);
    }
    ev_sgemm_limit(EV_SGEMM_AVX512);
    return t_done("sgemm");
}
