/*
 * compare.c - two models run on the same inputs and judged (prefix cmp_).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compare.h"

int cmp_parse_arg(CmpOptions *o, const char *const *argv, size_t *i, size_t argc,
                  char *why, size_t cap)
{
    const char *a = argv[*i];
    if (*i + 1 >= argc)
        return 0;
    const char *v = argv[*i + 1];
    size_t seed;
    if (!strcmp(a, "--inputs")) {
        o->inputs_dir = v;
    } else if (!strcmp(a, "--input-shape")) {
        if (o->n_input_shape == JOB_MAX_SHAPES) {
            snprintf(why, cap, "%s: too many inputs", a);
            return -1;
        }
        o->input_shape[o->n_input_shape++] = v;
    } else if (!strcmp(a, "--rtol") || !strcmp(a, "--atol")) {
        if (!job_parse_tol(v, a[2] == 'r' ? &o->rtol : &o->atol)) {
            snprintf(why, cap, "%s takes a positive number", a);
            return -1;
        }
    } else if (!strcmp(a, "--seed")) {
        if (!job_parse_size(v, &seed)) {
            snprintf(why, cap, "%s takes a non-negative integer", a);
            return -1;
        }
        o->seed = seed;
    } else {
        return job_parse_limit(&o->eval, argv, i, argc, why, cap);
    }
    ++*i;
    return 1;
}

/* Loads the model at path ready to run (sorted, checked, its tolerated
 * defects repaired, the --input-shape given): 0, or -1 with r->msg. */
static int cmp_load(const char *path, const CmpOptions *o, IrModel **m, CmpReport *r)
{
    IrError err;
    const char *rule;
    char msg[600];
    if (load_model_file(path, NULL, m, &err) < 0) {
        snprintf(r->msg, sizeof r->msg, "%s", err.msg);   /* it names the file */
        return -1;
    }
    int rc = job_prepare(*m, &rule, msg, sizeof msg);
    if (rc < 0)
        snprintf(r->msg, sizeof r->msg, "%s: %s", path, msg);
    for (size_t i = 0; rc == 0 && i < o->n_input_shape; i++) {
        rc = opt_set_input_shape(*m, o->input_shape[i], &err);
        if (rc < 0)
            snprintf(r->msg, sizeof r->msg, "%s: %s", path, err.msg);
    }
    if (rc < 0) {
        ir_model_free(*m);
        *m = NULL;
    }
    return rc;
}

int cmp_models(const char *a, const char *b, const CmpOptions *o, CmpReport *r)
{
    *r = (CmpReport){.result = -1, .case_inputs = o->inputs_dir != NULL};
    r->where.floor = -1;
    IrModel *ma = NULL, *mb = NULL, *wa = NULL, *wb = NULL;
    if (cmp_load(a, o, &ma, r) < 0 || cmp_load(b, o, &mb, r) < 0) {
        ir_model_free(ma);
        return r->result;
    }
    IrError err;
    /* the reference in float64 gives the floor; both, the float64
     * difference (none when a copy cannot be made: the tolerance alone) */
    if (pc_wide_copy(ma, &wa, &err) < 0)
        wa = NULL;
    if (wa && pc_wide_copy(mb, &wb, &err) < 0)
        wb = NULL;
    VfOptions vo = {.inputs_dir = o->inputs_dir, .seed = o->seed ? o->seed : 1,
                    .rtol = o->rtol, .atol = o->atol, .eval = o->eval,
                    .dim_used = &r->dim_used, .wide = wa, .wide_after = wb,
                    .figures = &r->figs, .n_figures = &r->n_figs, .where = &r->where,
                    .names = {a, b}};
    int rc = vf_compare(ma, mb, &vo, &err);
    r->result = rc == 0 ? 1 : rc;
    /* the verifier's words, less the prefix that names it */
    if (rc < 0)
        snprintf(r->msg, sizeof r->msg, "%s",
                 err.msg + (strncmp(err.msg, "verify: ", 8) ? 0 : 8));
    ir_model_free(wa);
    ir_model_free(wb);
    ir_model_free(ma);
    ir_model_free(mb);
    return r->result;
}

void cmp_json(Js *j, const char *a, const char *b, const CmpReport *r)
{
    js_open(j, '{', false);
    js_key(j, "schema");
    js_int(j, 1);
    js_key(j, "command");
    js_string(j, "compare");
    js_key(j, "a");
    js_string(j, a);
    js_key(j, "b");
    js_string(j, b);
    js_key(j, "result");
    js_string(j, r->result == 1 ? "equal" : r->result == -2 ? "differs" : "error");
    js_key(j, "message");
    js_string(j, r->result == 1 ? NULL : r->msg);
    js_key(j, "inputs");
    js_string(j, r->case_inputs ? "case" : "random");
    js_key(j, "open_dims");
    if (r->dim_used > 0)
        js_int(j, r->dim_used);
    else
        js_null(j);
    js_key(j, "outputs");
    js_open(j, '[', true);
    for (size_t i = 0; i < r->n_figs; i++)
        job_json_figure(j, &r->figs[i]);
    js_close(j, ']');
    js_key(j, "first_difference");
    job_json_where(j, &r->where);
    js_close(j, '}');
}

void cmp_report_free(CmpReport *r)
{
    free(r->figs);
    r->figs = NULL;
    r->n_figs = 0;
}
