/*
 * targets.c - `info --targets` (prefix cli_).
 *
 * Each target is a dry run of `convert MODEL --opset T` (`--opset-ml T`
 * for ai.onnx.ml): job_convert with every stage but save. So a target
 * listed as reachable converts, and a refused one gives the stage, reason
 * and message convert gives; whatever convert comes to check or refuse,
 * this list follows without a change here.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opschema.h"

/* The domains a target is listed for: the model's domain key, its name
 * in the report, and what the text calls its targets. */
#define CLI_TG_N 2
static const struct {
    const char *domain, *name, *noun;
} cli_tg_domains[CLI_TG_N] = {
    {"", "ai.onnx", "opsets"},
    {"ai.onnx.ml", "ai.onnx.ml", "ai.onnx.ml opsets"},
};

/* Runs convert's stages for target t of domain d on path, writing
 * nothing. Returns true when it would convert; r is filled either way
 * (job_report_free). */
static bool cli_tg_try(const char *path, size_t d, int64_t t, JobReport *r)
{
    JobOptions o = {.command = "convert", .dry_run = true};
    if (d == 0)
        o.cv.opset = t;
    else
        o.cv.opset_ml = t;
    return job_convert(&o, path, NULL, r, NULL) == 0;
}

/* The text rows of one domain: "yes" or "no" and convert's message. */
static void cli_tg_text(const char *path, size_t d, int64_t own)
{
    int64_t max = os_domain_max(cli_tg_domains[d].domain);
    printf("%s (%s opset %lld), converted to each %s:\n", path, cli_tg_domains[d].name,
           (long long)own, d == 0 ? "opset" : "ai.onnx.ml opset (--opset-ml)");
    int reachable = 0;
    for (int64_t t = 1; t <= max; t++) {
        JobReport r;
        if (cli_tg_try(path, d, t, &r)) {
            reachable++;
            printf("  %2lld  yes%s\n", (long long)t, t == own ? " (the model's own)" : "");
        } else {
            printf("  %2lld  no   %s\n", (long long)t, r.msg);
        }
        job_report_free(&r);
    }
    printf("%d of %lld %s reachable\n", reachable, (long long)max, cli_tg_domains[d].noun);
}

/* The JSON rows of one domain, one line each; returns how many are ok. */
static int64_t cli_tg_json_rows(Js *j, const char *path, size_t d)
{
    int64_t max = os_domain_max(cli_tg_domains[d].domain), reachable = 0;
    js_open(j, '[', false);
    for (int64_t t = 1; t <= max; t++) {
        JobReport r;
        bool ok = cli_tg_try(path, d, t, &r);
        reachable += ok;
        js_open(j, '{', true);
        js_key(j, "opset");
        js_int(j, t);
        js_key(j, "status");
        js_string(j, job_status_name(r.status));
        js_key(j, "ir_version");
        js_opt_int(j, ok, r.ir_to);
        js_key(j, "error");
        job_json_error(j, &r);
        js_close(j, '}');
        job_report_free(&r);
    }
    js_close(j, ']');
    return reachable;
}

/* The report of docs/json.md ("info --targets"). */
static void cli_tg_json(const char *path, const int64_t own[CLI_TG_N], int64_t ir)
{
    Js j;
    js_init(&j, stdout, 0);
    js_open(&j, '{', false);
    js_report_head(&j, path, "info", "ok");
    js_key(&j, "ir_version");
    js_opt_int(&j, ir > 0, ir);
    js_key(&j, "opsets");
    js_open(&j, '{', true);
    for (size_t d = 0; d < CLI_TG_N; d++) {
        js_key(&j, cli_tg_domains[d].name);
        js_opt_int(&j, own[d] > 0, own[d]);
    }
    js_close(&j, '}');
    int64_t reachable[CLI_TG_N] = {0};
    js_key(&j, "targets");
    js_open(&j, '{', false);
    for (size_t d = 0; d < CLI_TG_N; d++) {
        js_key(&j, cli_tg_domains[d].name);
        if (own[d] > 0)
            reachable[d] = cli_tg_json_rows(&j, path, d);
        else
            js_null(&j);
    }
    js_close(&j, '}');
    js_key(&j, "reachable");
    js_open(&j, '{', true);
    for (size_t d = 0; d < CLI_TG_N; d++) {
        js_key(&j, cli_tg_domains[d].name);
        js_opt_int(&j, own[d] > 0, reachable[d]);
    }
    js_close(&j, '}');
    js_key(&j, "error");
    js_null(&j);
    js_close(&j, '}');
    fputc('\n', stdout);
}

int cli_targets(const char *path, bool json)
{
    IrError err;
    IrModel *m;
    if (job_load(path, NULL, &m, &err)) {
        if (json) {
            JobReport r;
            job_fail(&r, "info", path, DG_STAGE_LOAD, DG_LOAD, err.msg);
            cli_print_json(stdout, &r);
            job_report_free(&r);
        }
        cli_print_failure(path, err.msg);
        return CLI_FAIL;
    }
    int64_t own[CLI_TG_N];
    for (size_t d = 0; d < CLI_TG_N; d++)
        own[d] = ir_model_opset(m, cli_tg_domains[d].domain);
    int64_t ir = m->has_ir_version ? m->ir_version : 0;
    ir_model_free(m);
    if (json) {
        cli_tg_json(path, own, ir);
    } else if (own[0] < 1 && own[1] < 1) {
        printf("%s imports no ai.onnx or ai.onnx.ml opset: nothing to convert\n", path);
    } else {
        for (size_t d = 0; d < CLI_TG_N; d++)
            if (own[d] > 0)
                cli_tg_text(path, d, own[d]);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fputs("onnx-convert: cannot write to standard output\n", stderr);
        return CLI_FAIL;
    }
    return CLI_OK;
}
