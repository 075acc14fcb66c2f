/*
 * targets.c - `info --targets` (prefix tg_); see targets.h.
 */
#include "driver/targets.h"

#include "schema/opschema.h"

const TgDomain tg_domains[TG_N] = {
    {"", "ai.onnx", "opsets"},
    {"ai.onnx.ml", "ai.onnx.ml", "ai.onnx.ml opsets"},
};

bool tg_try(const JobInput *in, size_t d, int64_t t, JobReport *r)
{
    JobOptions o = {.command = "convert", .dry_run = true};
    if (d == 0)
        o.cv.opset = t;
    else
        o.cv.opset_ml = t;
    return job_convert_input(&o, in, NULL, r, NULL) == 0;
}

/* The JSON rows of one domain, one line each; returns how many are ok. */
static int64_t tg_json_rows(Js *j, const JobInput *in, size_t d)
{
    int64_t max = os_domain_max(tg_domains[d].domain), reachable = 0;
    js_open(j, '[', false);
    for (int64_t t = 1; t <= max; t++) {
        JobReport r;
        bool ok = tg_try(in, d, t, &r);
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

/* "NAME": value per domain, on one line. */
static void tg_json_per_domain(Js *j, const char *key, const int64_t own[TG_N],
                               const int64_t v[TG_N])
{
    js_key(j, key);
    js_open(j, '{', true);
    for (size_t d = 0; d < TG_N; d++) {
        js_key(j, tg_domains[d].name);
        js_opt_int(j, own[d] > 0, v[d]);
    }
    js_close(j, '}');
}

void tg_json(Js *j, const JobInput *in, const int64_t own[TG_N], int64_t ir)
{
    js_open(j, '{', false);
    js_report_head(j, in->path, "info", "ok");
    js_key(j, "ir_version");
    js_opt_int(j, ir > 0, ir);
    tg_json_per_domain(j, "opsets", own, own);
    int64_t reachable[TG_N] = {0};
    js_key(j, "targets");
    js_open(j, '{', false);
    for (size_t d = 0; d < TG_N; d++) {
        js_key(j, tg_domains[d].name);
        if (own[d] > 0)
            reachable[d] = tg_json_rows(j, in, d);
        else
            js_null(j);
    }
    js_close(j, '}');
    tg_json_per_domain(j, "reachable", own, reachable);
    js_key(j, "error");
    js_null(j);
    js_close(j, '}');
}
