/*
 * eval/sgemm.c - the float32 matrix product of the evaluator's Conv, Gemm,
 * MatMul, attention and RNN kernels.
 *
 * Why not OpenBLAS's sgemm: its kernels round a row differently depending
 * on where it falls in their blocking, and the rounding differs between
 * kernels (measured: a Conv of 37 channels with identical weights gives
 * 551 elements that differ between channels under OpenBLAS's Haswell
 * kernels, none under its SkylakeX ones), so the backend's
 * light_squeezenet, whose logits are near 1e10, got a wrong softmax on
 * some machines. Summing in double (dgemm) fixed that at half the speed.
 *
 * Here every element of the product is one chain of fused multiply-adds
 * in the order k = 0, 1, ..., K-1, starting from +0: y = fma(a_k, b_k, y).
 * The chain does not depend on the element's row or column, on the
 * blocking, on the thread count or on the machine: the AVX-512, the AVX2
 * and the plain C kernel below compute the same bits (the plain one calls
 * fmaf, which rounds once as the vector instructions do).
 *
 * The blocking is the usual one (pack a KC x NC block of B into column
 * panels of NR, an MC x KC block of A into row panels of MR, then an
 * MR x NR tile of accumulators per pair of panels); a tile's partial sums
 * go back to Y between blocks of K, which keeps the chain unchanged since
 * a float stored is the float loaded.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/mem.h"
#include "eval/kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EV_SG_X86 1
#else
#define EV_SG_X86 0
#endif

enum {
    EV_SG_MR = 8,     /* rows of a tile */
    EV_SG_NR = 32,    /* columns of a tile: two AVX-512 vectors */
    EV_SG_KC = 256,   /* K per block: an A panel and a B panel fit L1 */
    EV_SG_MC = 128,   /* rows of A per packed block (128 KB) */
    EV_SG_NC = 1024   /* columns of B per packed block (1 MB) */
};

/* t[MR x NR] (rows ldt apart) = t, or +0 when zero, plus the product of
 * MR rows of A (element (r, k) at a[r * rs + k * ks]) and a B panel,
 * element by element in k order. A is read in place when it can be:
 * packing the weights of every convolution tile cost a fifth of a run. */
typedef void (*EvSgMicro)(size_t kc, const float *a, size_t rs, size_t ks,
                          const float *bp, size_t bs, float *t, size_t ldt, bool zero);

static void ev_sg_micro_c(size_t kc, const float *a, size_t rs, size_t ks,
                          const float *bp, size_t bs, float *t, size_t ldt, bool zero)
{
    for (size_t r = 0; zero && r < EV_SG_MR; r++)
        for (size_t j = 0; j < EV_SG_NR; j++)
            t[r * ldt + j] = 0.0f;
    for (size_t k = 0; k < kc; k++)
        for (size_t r = 0; r < EV_SG_MR; r++) {
            float av = a[r * rs + k * ks];
            float *tr = t + r * ldt;
            for (size_t j = 0; j < EV_SG_NR; j++)
                tr[j] = fmaf(av, bp[k * bs + j], tr[j]);
        }
}

#if EV_SG_X86
__attribute__((target("avx512f")))
static void ev_sg_micro_512(size_t kc, const float *a, size_t rs, size_t ks,
                            const float *bp, size_t bs, float *t, size_t ldt, bool zero)
{
    __m512 c[EV_SG_MR][2];
#pragma GCC unroll 8
    for (size_t r = 0; r < EV_SG_MR; r++) {
        c[r][0] = zero ? _mm512_setzero_ps() : _mm512_loadu_ps(t + r * ldt);
        c[r][1] = zero ? _mm512_setzero_ps() : _mm512_loadu_ps(t + r * ldt + 16);
    }
    for (size_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(bp + k * bs);
        __m512 b1 = _mm512_loadu_ps(bp + k * bs + 16);
#pragma GCC unroll 8
        for (size_t r = 0; r < EV_SG_MR; r++) {
            __m512 av = _mm512_set1_ps(a[r * rs + k * ks]);
            c[r][0] = _mm512_fmadd_ps(av, b0, c[r][0]);
            c[r][1] = _mm512_fmadd_ps(av, b1, c[r][1]);
        }
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < EV_SG_MR; r++) {
        _mm512_storeu_ps(t + r * ldt, c[r][0]);
        _mm512_storeu_ps(t + r * ldt + 16, c[r][1]);
    }
}

/* AVX2 has 16 registers: the tile goes as four 4 x 16 quarters. */
__attribute__((target("avx2,fma")))
static void ev_sg_micro_256(size_t kc, const float *a, size_t rs, size_t ks,
                            const float *bp, size_t bs, float *t, size_t ldt, bool zero)
{
    for (size_t h = 0; h < EV_SG_MR; h += 4)
        for (size_t v = 0; v < EV_SG_NR; v += 16) {
            __m256 c[4][2];
#pragma GCC unroll 4
            for (size_t r = 0; r < 4; r++) {
                float *tr = t + (h + r) * ldt + v;
                c[r][0] = zero ? _mm256_setzero_ps() : _mm256_loadu_ps(tr);
                c[r][1] = zero ? _mm256_setzero_ps() : _mm256_loadu_ps(tr + 8);
            }
            for (size_t k = 0; k < kc; k++) {
                __m256 b0 = _mm256_loadu_ps(bp + k * bs + v);
                __m256 b1 = _mm256_loadu_ps(bp + k * bs + v + 8);
#pragma GCC unroll 4
                for (size_t r = 0; r < 4; r++) {
                    __m256 av = _mm256_set1_ps(a[(h + r) * rs + k * ks]);
                    c[r][0] = _mm256_fmadd_ps(av, b0, c[r][0]);
                    c[r][1] = _mm256_fmadd_ps(av, b1, c[r][1]);
                }
            }
#pragma GCC unroll 4
            for (size_t r = 0; r < 4; r++) {
                _mm256_storeu_ps(t + (h + r) * ldt + v, c[r][0]);
                _mm256_storeu_ps(t + (h + r) * ldt + v + 8, c[r][1]);
            }
        }
}
#endif

/* The kernels this CPU may run, at most ev_sg_cap (tests lower it to
 * compare the kernels' bits). */
static _Atomic int ev_sg_cap = EV_SGEMM_AVX512;

static bool ev_sg_has(int isa)
{
#if EV_SG_X86
    if (isa == EV_SGEMM_AVX512)
        return ev_sg_cap >= isa && __builtin_cpu_supports("avx512f");
    if (isa == EV_SGEMM_AVX2)
        return ev_sg_cap >= isa && __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("fma");
#endif
    return isa == EV_SGEMM_C;
}

int ev_sgemm_limit(int isa)
{
    ev_sg_cap = isa;
    return ev_sg_has(isa);
}

/* A few rows of A times a transposed B (a fully connected layer at batch
 * 1: B is its [n, k] weight), where packing B would copy the whole weight
 * for one row of products. Columns [j, j+W) of rows i < m go at once, B's
 * elements gathered across W of its rows, the same chains as the tiles. */
enum { EV_SG_FEW = 4 };

/* s[i * 16 + c] = the sum of row i and column j + c, c < W. */
typedef void (*EvSgFew)(size_t m, size_t k, const float *a, size_t lda, const float *b,
                        size_t ldb, size_t j, float *s);

static void ev_sg_few_c(size_t m, size_t k, const float *a, size_t lda, const float *b,
                        size_t ldb, size_t j, float *s)
{
    for (size_t i = 0; i < m; i++) {
        float acc = 0.0f;
        for (size_t kk = 0; kk < k; kk++)
            acc = fmaf(a[i * lda + kk], b[j * ldb + kk], acc);
        s[i * 16] = acc;
    }
}

#if EV_SG_X86
/* col[c][r] = b[r * ldb + c] for r, c < 16: the usual four rounds of
 * shuffles (pairs of floats, of doubles, of 128-bit lanes twice). */
__attribute__((target("avx512f")))
static void ev_sg_t16(const float *b, size_t ldb, __m512 *col)
{
    __m512 r[16], t[16];
    for (size_t i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(b + i * ldb);
    for (size_t i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (size_t i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    for (size_t h = 0; h < 16; h += 8)
        for (size_t i = 0; i < 4; i++) {
            t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
            t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
        }
    for (size_t i = 0; i < 8; i++) {
        col[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        col[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    }
}

__attribute__((target("avx512f")))
static void ev_sg_few_512(size_t m, size_t k, const float *a, size_t lda, const float *b,
                          size_t ldb, size_t j, float *s)
{
    __m512 acc[EV_SG_FEW];
    int32_t at[16];
    for (size_t c = 0; c < 16; c++)
        at[c] = (int32_t)(c * ldb);
    __m512i idx = _mm512_loadu_si512(at);
    for (size_t i = 0; i < EV_SG_FEW; i++)
        acc[i] = _mm512_setzero_ps();
    const float *bj = b + j * ldb;
    size_t kk = 0;
    /* 16 x 16 blocks of B read as rows and turned into columns in
     * registers: a quarter of a shuffle per element where the gather
     * below takes one load per element */
    for (; kk + 16 <= k; kk += 16) {
        __m512 col[16];
        ev_sg_t16(bj + kk, ldb, col);
        for (size_t c = 0; c < 16; c++)
            for (size_t i = 0; i < m; i++)
                acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + kk + c]), col[c], acc[i]);
    }
    for (; kk < k; kk++) {
        __m512 bv = _mm512_i32gather_ps(idx, bj + kk, 4);
        for (size_t i = 0; i < m; i++)
            acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + kk]), bv, acc[i]);
    }
    for (size_t i = 0; i < m; i++)
        _mm512_storeu_ps(s + i * 16, acc[i]);
}

__attribute__((target("avx2,fma")))
static void ev_sg_few_256(size_t m, size_t k, const float *a, size_t lda, const float *b,
                          size_t ldb, size_t j, float *s)
{
    __m256 acc[EV_SG_FEW];
    int32_t at[8];
    for (size_t c = 0; c < 8; c++)
        at[c] = (int32_t)(c * ldb);
    __m256i idx = _mm256_loadu_si256((const __m256i *)at);
    for (size_t i = 0; i < EV_SG_FEW; i++)
        acc[i] = _mm256_setzero_ps();
    const float *bj = b + j * ldb;
    for (size_t kk = 0; kk < k; kk++) {
        __m256 bv = _mm256_i32gather_ps(bj + kk, idx, 4);
        for (size_t i = 0; i < m; i++)
            acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(a[i * lda + kk]), bv, acc[i]);
    }
    for (size_t i = 0; i < m; i++)
        _mm256_storeu_ps(s + i * 16, acc[i]);
}
#endif

/* y = alpha a b^T + beta y for m <= EV_SG_FEW rows (y not read when beta
 * is 0). */
static void ev_sg_few(size_t m, size_t n, size_t k, float alpha, const float *a,
                      size_t lda, const float *b, size_t ldb, float beta, float *y,
                      size_t ldy)
{
    size_t w = 1, j = 0;
    EvSgFew vec = NULL;
#if EV_SG_X86
    /* the gather's offsets are 32-bit: 16 rows of B must fit them */
    if (ldb <= INT32_MAX / 16 && ev_sg_has(EV_SGEMM_AVX512))
        vec = ev_sg_few_512, w = 16;
    else if (ldb <= INT32_MAX / 8 && ev_sg_has(EV_SGEMM_AVX2))
        vec = ev_sg_few_256, w = 8;
#endif
    float s[EV_SG_FEW * 16];
    while (j < n) {
        size_t wj = vec && j + w <= n ? w : 1;
        (wj > 1 ? vec : ev_sg_few_c)(m, k, a, lda, b, ldb, j, s);
        for (size_t i = 0; i < m; i++)
            for (size_t c = 0; c < wj; c++) {
                float *p = y + i * ldy + j + c;
                float v = s[i * 16 + c];
                *p = alpha == 1.0f && beta == 0.0f ? v
                     : beta == 0.0f               ? alpha * v
                                                  : alpha * v + beta * *p;
            }
        j += wj;
    }
}

/* The widest kernel this CPU runs; all give the same bits. */
static EvSgMicro ev_sg_pick(void)
{
#if EV_SG_X86
    if (ev_sg_has(EV_SGEMM_AVX512))
        return ev_sg_micro_512;
    if (ev_sg_has(EV_SGEMM_AVX2))
        return ev_sg_micro_256;
#endif
    return ev_sg_micro_c;
}

typedef struct EvSgArgs {
    bool ta, tb;
    const float *a, *b;
    size_t lda, ldb;
} EvSgArgs;

/* Where the micro kernel reads MR rows of op(A) from row i, depth p0. */
typedef struct EvSgRows {
    const float *a;
    size_t rs, ks;
} EvSgRows;

/* Rows [i, i+h) of op(A), depth [p0, p0+kc): in place when all MR rows
 * exist, else packed into ap as [k][MR] with the missing rows zero. */
static EvSgRows ev_sg_rows(const EvSgArgs *g, size_t i, size_t h, size_t p0, size_t kc,
                           float *ap)
{
    size_t rs = g->ta ? 1 : g->lda, ks = g->ta ? g->lda : 1;
    const float *a = g->a + i * rs + p0 * ks;
    if (h == EV_SG_MR)
        return (EvSgRows){a, rs, ks};
    for (size_t k = 0; k < kc; k++)
        for (size_t r = 0; r < EV_SG_MR; r++)
            ap[k * EV_SG_MR + r] = r < h ? a[r * rs + k * ks] : 0.0f;
    return (EvSgRows){ap, 1, EV_SG_MR};
}

/* Columns [j0, j0+nc) and depth [p0, p0+kc) of op(B) as NR-column panels,
 * [panel][k][NR], the columns past n zero. */
static void ev_sg_pack_b(const EvSgArgs *g, size_t j0, size_t nc, size_t p0, size_t kc,
                         float *bp)
{
    for (size_t q = 0; q < nc; q += EV_SG_NR, bp += kc * EV_SG_NR) {
        size_t w = nc - q < EV_SG_NR ? nc - q : EV_SG_NR;
        if (g->tb) {
            for (size_t j = 0; j < w; j++) {
                const float *s = g->b + (j0 + q + j) * g->ldb + p0;
                for (size_t k = 0; k < kc; k++)
                    bp[k * EV_SG_NR + j] = s[k];
            }
        } else if (w == EV_SG_NR) {   /* a whole panel: fixed-size copies */
            const float *s = g->b + p0 * g->ldb + j0 + q;
            for (size_t k = 0; k < kc; k++)
                memcpy(bp + k * EV_SG_NR, s + k * g->ldb, EV_SG_NR * sizeof *bp);
            continue;
        } else {
            const float *s = g->b + p0 * g->ldb + j0 + q;
            for (size_t k = 0; k < kc; k++)
                memcpy(bp + k * EV_SG_NR, s + k * g->ldb, w * sizeof *bp);
        }
        for (size_t k = 0; k < kc; k++)
            for (size_t j = w; j < EV_SG_NR; j++)
                bp[k * EV_SG_NR + j] = 0.0f;
    }
}

/* Where a tile's sums go: partial sums are stored as they are; the last
 * block of K stores alpha * sum + beta * y (y not read when beta is 0). */
typedef struct EvSgOut {
    float *y;
    size_t ldy;
    float alpha, beta;
} EvSgOut;

/* One MR x NR tile at (i, j) of y, mr x nr of it inside y. */
static void ev_sg_tile(EvSgMicro micro, size_t kc, EvSgRows a, const float *bp,
                       size_t bs, const EvSgOut *o, size_t i, size_t j, size_t mr, size_t nr,
                       bool first, bool last)
{
    bool plain = !last || (o->alpha == 1.0f && o->beta == 0.0f);
    if (plain && mr == EV_SG_MR && nr == EV_SG_NR) {   /* in place */
        micro(kc, a.a, a.rs, a.ks, bp, bs, o->y + i * o->ldy + j, o->ldy, first);
        return;
    }
    float t[EV_SG_MR * EV_SG_NR];
    for (size_t r = 0; !first && r < mr; r++)
        memcpy(t + r * EV_SG_NR, o->y + (i + r) * o->ldy + j, nr * sizeof *t);
    micro(kc, a.a, a.rs, a.ks, bp, bs, t, EV_SG_NR, first);
    for (size_t r = 0; r < mr; r++) {
        float *yr = o->y + (i + r) * o->ldy + j;
        const float *tr = t + r * EV_SG_NR;
        if (plain)
            memcpy(yr, tr, nr * sizeof *yr);
        else
            for (size_t c = 0; c < nr; c++)
                yr[c] = o->beta == 0.0f ? o->alpha * tr[c]
                                        : o->alpha * tr[c] + o->beta * yr[c];
    }
}

/* The blocked product into o->y; beta is 0 or K fits one block (the
 * caller sees to it), so partial sums never overwrite a y still needed. */
static void ev_sg_blocked(const EvSgArgs *g, size_t m, size_t n, size_t k,
                          const EvSgOut *o)
{
    EvSgMicro micro = ev_sg_pick();
    size_t bp_n = (EV_SG_NC + EV_SG_NR) * EV_SG_KC;
    float ap[EV_SG_MR * EV_SG_KC];   /* the last rows, when fewer than MR */
    float *bp = ev_block_get(bp_n * sizeof *bp, false);
    /* K in equal blocks: a short last block would cost a tile pass */
    size_t n_kb = (k + EV_SG_KC - 1) / EV_SG_KC, kb = (k + n_kb - 1) / n_kb;
    for (size_t j0 = 0; j0 < n; j0 += EV_SG_NC) {
        size_t nc = n - j0 < EV_SG_NC ? n - j0 : EV_SG_NC;
        for (size_t p0 = 0; p0 < k; p0 += kb) {
            size_t kc = k - p0 < kb ? k - p0 : kb;
            bool first = p0 == 0, last = p0 + kc == k;
            /* B's rows are read in place when every panel is whole */
            bool direct = !g->tb && nc % EV_SG_NR == 0;
            if (!direct)
                ev_sg_pack_b(g, j0, nc, p0, kc, bp);
            for (size_t i0 = 0; i0 < m; i0 += EV_SG_MC) {
                size_t mc = m - i0 < EV_SG_MC ? m - i0 : EV_SG_MC;
                for (size_t q = 0; q < nc; q += EV_SG_NR)
                    for (size_t p = 0; p < mc; p += EV_SG_MR) {
                        size_t h = mc - p < EV_SG_MR ? mc - p : EV_SG_MR;
                        EvSgRows a = ev_sg_rows(g, i0 + p, h, p0, kc, ap);
                        const float *b = direct ? g->b + p0 * g->ldb + j0 + q : bp + q * kc;
                        ev_sg_tile(micro, kc, a, b, direct ? g->ldb : EV_SG_NR, o, i0 + p, j0 + q, h,
                                   nc - q < EV_SG_NR ? nc - q : EV_SG_NR, first, last);
                    }
            }
        }
    }
    ev_block_put(bp, bp_n * sizeof *bp);
}

void ev_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha,
              const float *a, size_t lda, const float *b, size_t ldb, float beta,
              float *y, size_t ldy)
{
    if (m == 0 || n == 0)
        return;
    EvSgArgs g = {ta, tb, a, b, lda, ldb};
    if (k == 0) {   /* an empty sum is +0 */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                y[i * ldy + j] = beta == 0.0f ? 0.0f : beta * y[i * ldy + j];
        return;
    }
    if (m <= EV_SG_FEW && tb && !ta) {
        ev_sg_few(m, n, k, alpha, a, lda, b, ldb, beta, y, ldy);
        return;
    }
    if (beta == 0.0f || k <= EV_SG_KC) {
        EvSgOut o = {y, ldy, alpha, beta};
        ev_sg_blocked(&g, m, n, k, &o);
        return;
    }
    /* beta with several blocks of K: the sums go to scratch first */
    float *s = ev_block_get(m * n * sizeof *s, false);
    EvSgOut o = {s, n, 1.0f, 0.0f};
    ev_sg_blocked(&g, m, n, k, &o);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            y[i * ldy + j] = alpha * s[i * n + j] + beta * y[i * ldy + j];
    ev_block_put(s, m * n * sizeof *s);
}
