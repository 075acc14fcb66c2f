/*
 * job_args.c - the options of `convert` and `optimize` as words (prefix
 * job_).
 *
 * The command line and the C library's oc_run_command read the same
 * words through here, so an option means the same thing in both and the
 * library gives the bytes the command line writes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/job.h"

bool job_parse_size(const char *s, size_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > SIZE_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

bool job_parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end) {
        const char *u = strchr("KMGT", end[0] & ~0x20);
        if (!u || !*u || end[1])
            return false;
        shift = 10 * (unsigned)(u - "KMGT" + 1);
    }
    if (errno || v == 0 || v > (UINT64_MAX >> shift))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

/* A positive opset or IR version (at most 1000: anything above is a
 * typing slip, and the converter's own range check names the real bound). */
static bool job_parse_version(const char *s, int64_t *out)
{
    size_t v;
    if (!job_parse_size(s, &v) || v == 0 || v > 1000)
        return false;
    *out = (int64_t)v;
    return true;
}

static int job_why(char *why, size_t cap, const char *fmt, const char *a)
{
    snprintf(why, cap, fmt, a);
    return -1;
}

/* job_why with any arguments. */
static int job_whyf(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int job_whyf(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* A positive number of seconds (at most 1e9) into *out; false otherwise. */
static bool job_parse_seconds(const char *v, double *out)
{
    char *end;
    double t = strtod(v, &end);
    if (!*v || *end || !(t > 0) || t > 1e9)
        return false;
    *out = t;
    return true;
}

int job_parse_limit(EvOptions *e, const char *const *argv, size_t *i, size_t argc,
                    char *why, size_t cap)
{
    const char *a = argv[*i];
    if (*i + 1 >= argc)
        return 0;
    const char *v = argv[*i + 1];
    size_t n;
    if (!strcmp(a, "--max-memory")) {
        if (!job_parse_bytes(v, &e->max_memory))
            return job_why(why, cap, "%s takes a positive byte count (suffixes K, M, G, T)", a);
    } else if (!strcmp(a, "--max-steps")) {
        if (!job_parse_size(v, &n) || n == 0)
            return job_why(why, cap, "%s takes a positive number", a);
        e->max_steps = n;
    } else if (!strcmp(a, "--threads")) {
        if (!job_parse_size(v, &n) || n == 0 || n > 64)
            return job_why(why, cap, "%s takes a number of threads from 1 to 64", a);
        e->threads = n;
    } else if (!strcmp(a, "--timeout")) {
        if (!job_parse_seconds(v, &e->timeout))
            return job_why(why, cap, "%s takes a positive number of seconds", a);
    } else {
        return 0;
    }
    ++*i;
    return 1;
}

/* --to FORMAT and --coreml-target TARGET; 1, 0 or -1. */
static int job_format_arg(JobOptions *o, const char *const *argv, size_t *i, size_t argc,
                          char *why, size_t cap)
{
    const char *a = argv[*i];
    if (*i + 1 >= argc || (strcmp(a, "--to") && strcmp(a, "--coreml-target")))
        return 0;
    const char *v = argv[++*i];
    if (!strcmp(a, "--to")) {
        if (strcmp(v, "coreml") && strcmp(v, "onnx"))
            return job_whyf(why, cap, "--to takes coreml or onnx");
        o->to_coreml = !strcmp(v, "coreml");
        o->to_given = true;
        return 1;
    }
    o->coreml_target = mil_target_find(v);
    if (!o->coreml_target) {
        char names[200] = "";
        for (size_t k = 0; k < mil_targets_n; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     k ? ", " : "", mil_targets[k].name);
        return job_whyf(why, cap, "--coreml-target takes one of %s", names);
    }
    return 1;
}

/* The options only `convert` takes. */
static int job_convert_only(JobOptions *o, const char *const *argv, size_t *i, size_t argc,
                            char *why, size_t cap)
{
    const char *a = argv[*i];
    bool has_val = *i + 1 < argc;
    int64_t *target = NULL;
    int got = job_format_arg(o, argv, i, argc, why, cap);
    if (got)
        return got;
    if (!strcmp(a, "--opset") && has_val)
        target = &o->cv.opset;
    else if (!strcmp(a, "--opset-ml") && has_val)
        target = &o->cv.opset_ml;
    else if (!strcmp(a, "--ir-version") && has_val)
        target = &o->cv.ir_version;
    else if (!strcmp(a, "--optimize")) {
        o->optimize = true;
        return 1;
    } else if (!strcmp(a, "--expand") && has_val) {
        o->cv.expand = argv[++*i];
        return 1;
    } else {
        return 0;
    }
    if (!job_parse_version(argv[++*i], target))
        return job_why(why, cap, "%s takes a positive number", a);
    return 1;
}

/* Options with a value that convert and optimize share. */
static int job_shared_value(JobOptions *o, const char *const *argv, size_t *i, size_t argc,
                            char *why, size_t cap)
{
    const char *a = argv[*i];
    if (*i + 1 >= argc)
        return 0;
    const char *v = argv[*i + 1];
    if (!strcmp(a, "--passes")) {
        o->optimize = true;
        o->opt.passes = v;
    } else if (!strcmp(a, "--verify-budget")) {
        if (!job_parse_seconds(v, &o->verify_budget))
            return job_why(why, cap, "%s takes a positive number of seconds", a);
    } else if (!strcmp(a, "--input-shape")) {
        if (o->n_input_shape == JOB_MAX_SHAPES)
            return job_why(why, cap, "%s: too many inputs", a);
        o->input_shape[o->n_input_shape++] = v;
    } else {
        return job_parse_limit(&o->eval, argv, i, argc, why, cap);
    }
    ++*i;
    return 1;
}

bool job_parse_tol(const char *s, double *out)
{
    char *end;
    double t = strtod(s, &end);
    if (!*s || *end || !(t > 0) || !(t < 1e300))
        return false;
    *out = t;
    return true;
}

/* --auto and its options (src/precision/precision_auto.h). */
static int job_auto_arg(JobOptions *o, const char *const *argv, size_t *i, size_t argc,
                        char *why, size_t cap)
{
    const char *a = argv[*i];
    bool has_val = *i + 1 < argc;
    if (!strcmp(a, "--auto")) {
        o->pc_auto = true;
        return 1;
    }
    if (!has_val)
        return 0;
    if (!strcmp(a, "--inputs"))
        o->inputs = argv[*i + 1];
    else if (!strcmp(a, "--rtol") || !strcmp(a, "--atol")) {
        if (!job_parse_tol(argv[*i + 1], a[2] == 'r' ? &o->rtol : &o->atol))
            return job_why(why, cap, "%s takes a positive number", a);
    } else {
        return 0;
    }
    ++*i;
    return 1;
}

/* The precision options (src/precision/precision.h), which convert and optimize
 * share. */
static int job_precision_arg(JobOptions *o, const char *const *argv, size_t *i, size_t argc,
                             char *why, size_t cap)
{
    const char *a = argv[*i];
    bool has_val = *i + 1 < argc;
    const char *v = has_val ? argv[*i + 1] : NULL;
    if (!strcmp(a, "--keep-io-types"))
        o->pc.keep_io = true;
    else if (!strcmp(a, "--dtype-strict"))
        o->pc.strict = true;
    else if (!strcmp(a, "--dtype") && has_val) {
        o->pc.dtype = pc_dtype_parse(v);
        if (!o->pc.dtype)
            return job_why(why, cap, "%s takes float16, bfloat16 or float32", a);
        ++*i;
    } else if (!strcmp(a, "--store") && has_val) {
        if (strcmp(v, "float16"))
            return job_why(why, cap, "%s takes float16", a);
        o->pc.store = IR_FLOAT16;
        ++*i;
    } else if (!strcmp(a, "--keep-float32") && has_val) {
        o->pc.keep_ops = argv[++*i];
    } else if (!strcmp(a, "--keep-float32-node") && has_val) {
        o->pc.keep_nodes = argv[++*i];
    } else {
        return job_auto_arg(o, argv, i, argc, why, cap);
    }
    return 1;
}

/* Flags convert and optimize share. */
static bool job_shared_flag(JobOptions *o, const char *a)
{
    if (!strcmp(a, "--verify"))
        o->verify = true;
    else if (!strcmp(a, "--no-verify"))
        o->no_verify = true;
    else if (!strcmp(a, "--infer-shapes"))
        o->infer_shapes = true;
    else if (!strcmp(a, "--keep-metadata"))
        o->cv.keep_metadata = true;
    else
        return false;
    return true;
}

int job_parse_arg(JobOptions *o, const char *const *argv, size_t *i, size_t argc,
                  char *why, size_t cap)
{
    int got = strcmp(o->command, "convert") ? 0 : job_convert_only(o, argv, i, argc, why, cap);
    if (!got)
        got = job_shared_value(o, argv, i, argc, why, cap);
    if (!got && job_shared_flag(o, argv[*i]))
        got = 1;
    if (!got)
        got = job_precision_arg(o, argv, i, argc, why, cap);
    return got;
}

/* What --to coreml goes with: the lowering reads CM_ONNX_OPSET, the
 * package holds no ONNX IR version, ai.onnx.ml or value_info, and Core ML
 * has no bfloat16. */
static int job_coreml_check(const JobOptions *o, char *why, size_t cap)
{
    if (!o->to_coreml) {
        if (o->coreml_target)
            return job_whyf(why, cap, "--coreml-target goes with --to coreml");
        return 0;
    }
    if (o->cv.opset && o->cv.opset != CM_ONNX_OPSET)
        return job_whyf(why, cap, "--to coreml lowers the model from opset %d, to which "
                       "it converts first: leave --opset out", CM_ONNX_OPSET);
    if (o->cv.opset_ml || o->cv.ir_version || o->infer_shapes)
        return job_whyf(why, cap, "--opset-ml, --ir-version and --infer-shapes describe an "
                       "ONNX output; --to coreml writes a Core ML package");
    if (o->pc.dtype == IR_BFLOAT16)
        return job_whyf(why, cap, "Core ML has no bfloat16: --to coreml takes --dtype "
                       "float16 (or float32)");
    return 0;
}

int job_options_check(const JobOptions *o, char *why, size_t cap)
{
    IrError err;
    if (o->cv.expand && cv_expand_check(o->cv.expand, &err) < 0) {
        char ops[4096];
        cv_expandable(ops, sizeof ops);
        snprintf(why, cap, "--expand: %s; these have one: %s", err.msg, ops);
        return -1;
    }
    if (o->verify && o->no_verify && !o->verify_soft) {
        snprintf(why, cap, "--verify and --no-verify contradict each other");
        return -1;
    }
    if (o->pc.dtype && o->pc.store) {
        snprintf(why, cap, "--store float16 keeps the computation in float32; "
                 "it does not go with --dtype");
        return -1;
    }
    if ((o->pc.keep_io || o->pc.keep_ops || o->pc.keep_nodes) && !o->pc.dtype) {
        snprintf(why, cap, "--keep-io-types, --keep-float32 and --keep-float32-node "
                 "go with --dtype");
        return -1;
    }
    if (o->pc_auto && o->pc.dtype != IR_FLOAT16 && o->pc.dtype != IR_BFLOAT16) {
        snprintf(why, cap, "--auto goes with --dtype float16 or --dtype bfloat16");
        return -1;
    }
    if ((o->rtol > 0 || o->atol > 0 || o->inputs) && !o->pc_auto) {
        snprintf(why, cap, "--rtol, --atol and --inputs go with --auto");
        return -1;
    }
    if (o->pc.strict && !o->pc.dtype && !o->pc.store) {
        snprintf(why, cap, "--dtype-strict goes with --dtype or --store");
        return -1;
    }
    if (job_coreml_check(o, why, cap) < 0)
        return -1;
    if (cv_options_check(&o->cv, &err) < 0) {
        snprintf(why, cap, "--ir-version: %s", err.msg);
        return -1;
    }
    return 0;
}
