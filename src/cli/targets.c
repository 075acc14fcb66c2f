/*
 * targets.c - `info --targets` as text (prefix cli_); the dry runs and
 * the JSON report are src/driver/targets.c's, shared with the C library.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "schema/opschema.h"
#include "driver/targets.h"

/* The text rows of one domain: "yes" or "no" and convert's message. */
static void cli_tg_text(const char *path, size_t d, int64_t own)
{
    JobInput in = {.path = path};
    int64_t max = os_domain_max(tg_domains[d].domain);
    printf("%s (%s opset %lld), converted to each %s:\n", path, tg_domains[d].name,
           (long long)own, d == 0 ? "opset" : "ai.onnx.ml opset (--opset-ml)");
    int reachable = 0;
    for (int64_t t = 1; t <= max; t++) {
        JobReport r;
        if (tg_try(&in, d, t, &r)) {
            reachable++;
            printf("  %2lld  yes%s\n", (long long)t, t == own ? " (the model's own)" : "");
        } else {
            printf("  %2lld  no   %s\n", (long long)t, r.msg);
        }
        job_report_free(&r);
    }
    printf("%d of %lld %s reachable\n", reachable, (long long)max, tg_domains[d].noun);
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
    int64_t own[TG_N];
    for (size_t d = 0; d < TG_N; d++)
        own[d] = ir_model_opset(m, tg_domains[d].domain);
    int64_t ir = m->has_ir_version ? m->ir_version : 0;
    ir_model_free(m);
    if (json) {
        JobInput in = {.path = path};
        Js j;
        js_init(&j, stdout, 0);
        tg_json(&j, &in, own, ir);
        fputc('\n', stdout);
    } else if (own[0] < 1 && own[1] < 1) {
        printf("%s imports no ai.onnx or ai.onnx.ml opset: nothing to convert\n", path);
    } else {
        for (size_t d = 0; d < TG_N; d++)
            if (own[d] > 0)
                cli_tg_text(path, d, own[d]);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fputs("onnx-convert: cannot write to standard output\n", stderr);
        return CLI_FAIL;
    }
    return CLI_OK;
}
