/*
 * test_verify_half.c - vf_compare across float types: a float32 model
 * against its float16 / bfloat16 twin (built here by hand, the same
 * weights in each type), either way round, and with float32 inputs and
 * outputs around a float16 body (--keep-io-types).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes_build.h"

/* n values in [-1, 1) from a local generator (tb_rand is shared by every
 * "rand" initializer, so twins would get different weights from it),
 * times `scale`, as "v1,v2,..." into buf. */
static void vh_values(char *buf, size_t cap, size_t n, uint64_t seed,
                      double scale)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t k = 0; k < n && len < cap; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double v = ((double)(seed >> 11) / 9007199254740992.0 * 2 - 1) * scale;
        len += (size_t)snprintf(buf + len, cap - len, "%s%.6f", k ? "," : "", v);
    }
}

/* A MatMul + Add + Relu model computing in type `t`, fed and read in `io`
 * (Casts around the body when they differ); weights scaled by `wscale`. */
static IrModel *vh_mlp(const char *io, const char *t, int32_t t_code,
                       double wscale)
{
    static char w[16 * 8 * 16], b[8 * 16], text[sizeof w + sizeof b + 512];
    vh_values(w, sizeof w, 16 * 8, 7, wscale);
    vh_values(b, sizeof b, 8, 11, 1);
    bool cast = strcmp(io, t) != 0;
    snprintf(text, sizeof text,
             "input x %s 4,16\n"
             "init W %s 16,8 %s\n"
             "init B %s 8 %s\n"
             "%s"
             "h = MatMul %s,W\n"
             "a = Add h,B\n"
             "%s = Relu a\n"
             "%s"
             "output y\n",
             io, t, w, t, b, cast ? "" : "", cast ? "xc" : "x",
             cast ? "r" : "y", cast ? "y = Cast r to=1\n" : "");
    if (cast) {
        char pre[64];
        snprintf(pre, sizeof pre, "xc = Cast x to=%d\n", (int)t_code);
        size_t l = strlen(pre), at = (size_t)(strstr(text, "h = MatMul") - text);
        memmove(text + at + l, text + at, strlen(text + at) + 1);
        memcpy(text + at, pre, l);
    }
    return tb_model(text);
}

/* y = Sin(x * 4096): a 2^-12 change of x moves y by about one radian, so
 * the two models agree only when fed the very same (rounded) inputs. */
static IrModel *vh_sin(const char *t)
{
    char text[256];
    snprintf(text, sizeof text,
             "input x %s 4,8\ninit K %s 1 4096\nm = Mul x,K\ny = Sin m\n"
             "output y\n", t, t);
    return tb_model(text);
}

static int vh_compare(IrModel *a, IrModel *b, IrError *err)
{
    VfOptions o = {.seed = 5};
    return vf_compare(a, b, &o, err);
}

static void vh_expect(IrModel *a, IrModel *b, int want, const char *what)
{
    IrError err = {0};
    int rc = vh_compare(a, b, &err);
    T_CHECK(rc == want, "%s: vf_compare gave %d, expected %d (%s)", what, rc,
            want, rc ? err.msg : "equal");
    ir_model_free(a);
    ir_model_free(b);
}

int main(void)
{
    /* twins agree, either way round */
    vh_expect(vh_mlp("float", "float", IR_FLOAT, 1),
              vh_mlp("float16", "float16", IR_FLOAT16, 1), 0, "f32 vs f16");
    vh_expect(vh_mlp("float16", "float16", IR_FLOAT16, 1),
              vh_mlp("float", "float", IR_FLOAT, 1), 0, "f16 vs f32");
    vh_expect(vh_mlp("float", "float", IR_FLOAT, 1),
              vh_mlp("bfloat16", "bfloat16", IR_BFLOAT16, 1), 0,
              "f32 vs bf16");
    vh_expect(vh_mlp("bfloat16", "bfloat16", IR_BFLOAT16, 1),
              vh_mlp("float", "float", IR_FLOAT, 1), 0, "bf16 vs f32");
    /* float32 inputs and outputs around a float16 body: still judged at
     * float16's tolerance */
    vh_expect(vh_mlp("float", "float", IR_FLOAT, 1),
              vh_mlp("float", "float16", IR_FLOAT16, 1), 0,
              "f32 vs f16 body with f32 io");
    /* the same inputs on both sides, rounded to both types */
    vh_expect(vh_sin("float"), vh_sin("float16"), 0, "sin f32 vs f16");
    vh_expect(vh_sin("bfloat16"), vh_sin("float"), 0, "sin bf16 vs f32");
    vh_expect(vh_sin("float16"), vh_sin("bfloat16"), 0, "sin f16 vs bf16");
    vh_expect(vh_mlp("float16", "float16", IR_FLOAT16, 1),
              vh_mlp("bfloat16", "bfloat16", IR_BFLOAT16, 1), 0,
              "f16 vs bf16");
    /* the tolerance still catches a wrong model: weights 10% off */
    vh_expect(vh_mlp("float", "float", IR_FLOAT, 1),
              vh_mlp("float16", "float16", IR_FLOAT16, 1.1), -2,
              "f32 vs wrong f16");
    vh_expect(vh_mlp("float", "float", IR_FLOAT, 1),
              vh_mlp("bfloat16", "bfloat16", IR_BFLOAT16, 1.3), -2,
              "f32 vs wrong bf16");
    /* same-type models keep the default 1e-3 / 1e-5: a 1% change fails */
    vh_expect(vh_mlp("float", "float", IR_FLOAT, 1),
              vh_mlp("float", "float", IR_FLOAT, 1.01), -2, "f32 vs f32 1%");
    vh_expect(vh_mlp("float16", "float16", IR_FLOAT16, 1),
              vh_mlp("float16", "float16", IR_FLOAT16, 1.01), -2,
              "f16 vs f16 1%");
    return t_done("verify_half");
}
