/*
 * fuzz_target.h - one fuzz input through the whole tool (prefix fz_).
 *
 * fz_run() is what `make fuzz` (tests/fuzz_model.c, libFuzzer) and the
 * regression test over tests/crashers/ (tests/test_crashers.c) both call:
 * load -> check -> save/reload -> convert -> check -> optimize -> check ->
 * save; then, on a fresh load, the evaluator on random inputs (as
 * --verify makes them, within 64 MiB and 100000 steps) when the checker
 * accepts the model, `info` (text and JSON) and `check --json`'s report.
 * Beyond "no crash, no leak, no hang" (the sanitizers and libFuzzer
 * watch those) it asserts what the tool promises, and aborts when a promise
 * breaks so that libFuzzer keeps the input:
 *   - every refusal is one line;
 *   - what we save loads again;
 *   - a model the checker accepts stays acceptable after a conversion or
 *     an optimization that succeeded (never write a wrong model silently).
 * External data is refused (no folder), so the fuzzer never touches files
 * (the report of job_check reads the input from an in-memory file).
 */
#ifndef OC_FUZZ_TARGET_H
#define OC_FUZZ_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/syscall.h>
#include <unistd.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "eval/eval.h"
#include "analysis/infer.h"
#include "driver/info.h"
#include "driver/job.h"
#include "io/load.h"
#include "passes/passes.h"
#include "io/save.h"
#include "eval/verify.h"

/* Breaks a promise: says which, then aborts (libFuzzer saves the input). */
static void fz_broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz: %s: %s\n", what, detail ? detail : "");
    abort();
}

static void fz_one_line(const IrError *err)
{
    if (!err->msg[0] || strchr(err->msg, '\n'))
        fz_broken("refusal is not one non-empty line", err->msg);
}

/* 0 if the checker accepts m. */
static size_t fz_check(IrModel *m)
{
    ChkReport r;
    size_t bad = chk_model(m, &r);
    chk_report_free(&r);
    return bad;
}

static void fz_still_valid(IrModel *m, const char *after)
{
    ChkReport r;
    if (chk_model(m, &r))
        fz_broken(after, chk_first_error(&r));
    chk_report_free(&r);
}

/* What we write must load again. */
static void fz_roundtrip(const IrModel *m)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    IrError err;
    if (save_model_buffer(m, &buf, &len, &err)) {
        fz_one_line(&err);
        return;
    }
    IrModel *back = NULL;
    if (load_model_buffer(buf, len, NULL, "saved", NULL, &back, &err))
        fz_broken("a saved model does not load", err.msg);
    ir_model_free(back);
    free(buf);
}

/* The target opset comes from the input's size, so that one corpus walks
 * conversions up and down across the whole range. */
static int64_t fz_target(size_t size)
{
    return 1 + (int64_t)(size % 28);
}

/* Where info and the JSON reports go: they must not crash, their text is
 * not looked at. */
static FILE *fz_sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    if (!f)
        fz_broken("cannot open /dev/null", NULL);
    return f;
}

/* The evaluator, as --verify runs it (the model against itself on
 * seeded random inputs), within a budget small enough for a fuzzer. */
static void fz_eval(IrModel *m)
{
    VfOptions vo = {.seed = 1, .max_input_bytes = 1u << 20,
                    .eval = {.max_memory = 64u << 20, .max_steps = 100000,
                             .timeout = 10}};
    IrError err;
    if (vf_compare(m, m, &vo, &err) < 0)
        fz_one_line(&err);
}

/* `info` and `info --json`, after inference as the command line does. */
static void fz_info(IrModel *m)
{
    IrError err;
    if (inf_model(m, NULL, &err) < 0)
        ir_graph_clear_inferred(m->graph);
    info_print_text(fz_sink(), m, "fuzz");
    info_print_json(fz_sink(), m, "fuzz");
}

/* check --json's report of the input, read from an in-memory file. */
static void fz_check_json(const uint8_t *data, size_t size)
{
    /* memfd_create through syscall(): its wrapper needs _GNU_SOURCE,
     * which the files including this one do not all define first. */
    int fd = (int)syscall(SYS_memfd_create, "fuzz", 0u);
    if (fd < 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (write(fd, data, size) == (ssize_t)size) {
        JobReport r;
        IrModel *keep = NULL;
        job_check(path, false, &r, &keep);
        ir_model_free(keep);
        Js j;
        js_init(&j, fz_sink(), 0);
        job_json(&j, &r);
        job_report_free(&r);
    }
    close(fd);
}

/* The evaluator and the reports, on a fresh load of the input. */
static void fz_run_more(const uint8_t *data, size_t size, bool valid)
{
    IrModel *m = NULL;
    IrError err;
    if (load_model_buffer(data, size, NULL, "fuzz", NULL, &m, &err))
        fz_broken("a model that loaded once does not load again", err.msg);
    if (valid)
        fz_eval(m);
    fz_info(m);
    ir_model_free(m);
    fz_check_json(data, size);
}

static int fz_run(const uint8_t *data, size_t size)
{
    IrModel *m = NULL;
    IrError err;
    if (load_model_buffer(data, size, NULL, "fuzz", NULL, &m, &err)) {
        fz_one_line(&err);
        return 0;
    }
    bool valid = fz_check(m) == 0;
    fz_roundtrip(m);
    CvOptions co = {.opset = fz_target(size)};
    CvReport cr = {0};
    if (cv_convert(m, &co, &cr, &err) == 0) {
        if (valid)
            fz_still_valid(m, "convert made a valid model invalid");
    } else {
        fz_one_line(&err);
        /* A refused conversion may leave m half-converted; the CLI drops
         * it, so must we. */
        ir_model_free(m);
        if (load_model_buffer(data, size, NULL, "fuzz", NULL, &m, &err))
            fz_broken("a model that loaded once does not load again", err.msg);
    }
    cv_report_free(&cr);
    OptOptions oo = {0};
    OptStats st;
    if (opt_optimize(m, &oo, &st, &err) == 0) {
        if (valid)
            fz_still_valid(m, "optimize made a valid model invalid");
        fz_roundtrip(m);
    } else {
        fz_one_line(&err);
    }
    opt_stats_free(&st);
    ir_model_free(m);
    fz_run_more(data, size, valid);
    return 0;
}

#endif
