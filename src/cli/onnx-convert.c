/*
 * onnx-convert - the command line (prefix cli_).
 *
 * Exit status: 0 done; 1 the input was rejected or the operation is not
 * possible (one line on stderr, no output file left behind); 2 usage error.
 * This is the only place that prints or exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <sys/stat.h>

#include "check.h"
#include "convert.h"
#include "eval.h"
#include "infer.h"
#include "info.h"
#include "ir.h"
#include "load.h"
#include "opschema.h"
#include "../../passes/passes.h"
#include "save.h"
#include "verify.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

static const char cli_usage_text[] =
    "usage:\n"
    "  onnx-convert convert IN.onnx -o OUT.onnx [--opset N] [--opset-ml N]\n"
    "                       [--ir-version N] [--verify] [--external-data FILE]\n"
    "                       [--external-threshold BYTES] [--infer-shapes]\n"
    "                       [--optimize] [--passes a,b,c] [--stats]\n"
    "                       [--input-shape NAME=D1,D2,...]\n"
    "  onnx-convert optimize IN.onnx -o OUT.onnx [--passes a,b,c] [--verify]\n"
    "                       [--stats] [--input-shape NAME=D1,D2,...]\n"
    "  onnx-convert optimize --list-passes\n"
    "  onnx-convert info MODEL.onnx [--json] [--targets]\n"
    "  onnx-convert check MODEL.onnx [--all]\n"
    "  onnx-convert run MODEL.onnx --inputs DIR -o OUTDIR [--seed N]\n"
    "  onnx-convert test CASE_DIR [--model OTHER.onnx] [--rtol R] [--atol A]\n"
    "\n"
    "convert without --opset writes the model back unchanged (a round trip).\n"
    "--opset N converts ai.onnx to opset N (--opset-ml: ai.onnx.ml), one step\n"
    "at a time, and sets ir_version to what N needs unless --ir-version says.\n"
    "--verify evaluates the model before and after on the case's inputs\n"
    "(IN's folder/test_data_set_0) or seeded random ones, and fails on a\n"
    "difference.\n"
    "--external-data FILE moves every tensor of at least BYTES (default 1024)\n"
    "into FILE, beside OUT.onnx.\n"
    "--optimize (and the optimize command) runs the optimization passes\n"
    "(--passes: these, in this order) to a fixed point after any conversion;\n"
    "--stats prints how many changes each pass made. --input-shape fixes the\n"
    "dynamic dims of an input (repeat it for several), so more folds apply.\n"
    "--infer-shapes checks the model and writes the inferred types of\n"
    "intermediate values as value_info.\n"
    "info --targets tries every ai.onnx opset and prints, for each one it\n"
    "cannot reach, the first node that blocks it and why.\n"
    "check prints the first rule the model breaks (--all: every one) and\n"
    "exits 1, or says it is valid.\n"
    "run evaluates the model on DIR/input_K.pb and writes OUTDIR/output_K.pb.\n"
    "test runs every test_data_set_* of an ONNX backend-test case folder and\n"
    "compares the outputs: |got - want| <= atol + rtol*|want| for floats\n"
    "(defaults rtol 1e-3, atol 1e-7; NaN equals NaN), exact otherwise.\n";

static int cli_usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "onnx-convert: %s\n", msg);
    fputs(cli_usage_text, stderr);
    return CLI_USAGE;
}

static int cli_error(const IrError *err)
{
    fprintf(stderr, "onnx-convert: %s\n", err->msg);
    return CLI_FAIL;
}

/* Parses a non-negative decimal size; false on anything else. */
static bool cli_parse_size(const char *s, size_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > SIZE_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

/* Options of `convert`. */
#define CLI_MAX_SHAPES 64

typedef struct CliConvert {
    const char *in, *out;
    SaveOptions save;
    bool infer_shapes;       /* write inferred types as value_info */
    CvOptions cv;            /* --opset, --opset-ml, --ir-version */
    bool verify;
    bool optimize, stats;    /* --optimize / the optimize command, --stats */
    OptOptions opt;          /* --passes */
    const char *input_shape[CLI_MAX_SHAPES]; /* --input-shape NAME=DIMS */
    size_t n_input_shape;
} CliConvert;

/* Parses a positive opset or IR version. */
static bool cli_parse_version(const char *s, int64_t *out)
{
    size_t v;
    if (!cli_parse_size(s, &v) || v == 0 || v > 1000)
        return false;
    *out = (int64_t)v;
    return true;
}

/* Returns 0, or CLI_USAGE after printing why. */
static int cli_convert_args(int argc, char **argv, CliConvert *o)
{
    o->save.external_threshold = 1024;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "-o") && has_val) {
            o->out = argv[++i];
        } else if (!strcmp(a, "--external-data") && has_val) {
            o->save.external_file = argv[++i];
        } else if (!strcmp(a, "--external-threshold") && has_val) {
            if (!cli_parse_size(argv[++i], &o->save.external_threshold))
                return cli_usage("--external-threshold takes a byte count");
        } else if (!strcmp(a, "--opset") && has_val) {
            if (!cli_parse_version(argv[++i], &o->cv.opset))
                return cli_usage("--opset takes a positive opset number");
        } else if (!strcmp(a, "--opset-ml") && has_val) {
            if (!cli_parse_version(argv[++i], &o->cv.opset_ml))
                return cli_usage("--opset-ml takes a positive opset number");
        } else if (!strcmp(a, "--ir-version") && has_val) {
            if (!cli_parse_version(argv[++i], &o->cv.ir_version))
                return cli_usage("--ir-version takes a positive IR version");
        } else if (!strcmp(a, "--infer-shapes")) {
            o->infer_shapes = true;
        } else if (!strcmp(a, "--verify")) {
            o->verify = true;
        } else if (!strcmp(a, "--optimize")) {
            o->optimize = true;
        } else if (!strcmp(a, "--passes") && has_val) {
            o->optimize = true;
            o->opt.passes = argv[++i];
        } else if (!strcmp(a, "--stats")) {
            o->stats = true;
        } else if (!strcmp(a, "--input-shape") && has_val) {
            if (o->n_input_shape == CLI_MAX_SHAPES)
                return cli_usage("--input-shape: too many inputs");
            o->input_shape[o->n_input_shape++] = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "onnx-convert: unknown or incomplete option '%s'\n",
                    a);
            return cli_usage(NULL);
        } else if (!o->in) {
            o->in = a;
        } else {
            return cli_usage("convert takes one input model");
        }
    }
    if (!o->in || !o->out)
        return cli_usage("convert and optimize need IN.onnx and -o OUT.onnx");
    return 0;
}

/* The last use of a model before the process exits. Its memory goes back
 * to the system at exit at once, while freeing a 100k-node model piece by
 * piece takes a fifth of the whole run; sanitized builds still free it so
 * that the leak checker sees everything. */
static void cli_drop_model(IrModel *m)
{
#if defined(__SANITIZE_ADDRESS__)
    ir_model_free(m);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    ir_model_free(m);
#endif
#else
    (void)m;
#endif
}

/* Refuses (-1) a model the checker refuses, naming the first broken rule
 * as `check` does. */
static int cli_require_valid(IrModel *m, const char *path, IrError *err)
{
    ChkReport r;
    int rc = 0;
    if (chk_model(m, &r))
        rc = ir_fail(err, "%s: %s", path,
                     chk_first_error(&r) ? chk_first_error(&r) : "invalid");
    chk_report_free(&r);
    return rc;
}

/* Checks m and records the inferred types of intermediate values as
 * value_info. Refuses (-1) a model the checker refuses. */
static int cli_infer_shapes(IrModel *m, const char *path, IrError *err)
{
    if (cli_require_valid(m, path, err))
        return -1;
    inf_write_value_info(m->graph);
    return 0;
}

/* The folder of the case's first inputs when `in` sits in a backend-test
 * case folder (IN's folder/test_data_set_0/input_0.pb exists), else NULL. */
static char *cli_case_inputs(const char *in)
{
    const char *slash = strrchr(in, '/');
    size_t dl = slash ? (size_t)(slash - in) : 1;
    const char *dir = slash ? in : ".";
    char *p = malloc(dl + 40);
    if (!p)
        return NULL;
    snprintf(p, dl + 40, "%.*s/test_data_set_0", (int)dl, dir);
    char probe[4200];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/input_0.pb", p);
    if (stat(probe, &st) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

/* Prints what the conversion did, on one line. */
static void cli_convert_summary(const CliConvert *o, const IrModel *m,
                                int64_t from, int64_t from_ml, const CvReport *r)
{
    if (!o->cv.opset && !o->cv.opset_ml && !o->cv.ir_version)
        return;
    printf("converted");
    if (o->cv.opset && from > 0)
        printf(" opset %lld -> %lld,", (long long)from, (long long)ir_model_opset(m, ""));
    if (o->cv.opset_ml && from_ml > 0)
        printf(" ai.onnx.ml %lld -> %lld,", (long long)from_ml,
               (long long)ir_model_opset(m, "ai.onnx.ml"));
    printf(" %zu nodes adapted", r->adapted);
    static const char *const kinds[] = {"compatible", "attribute-input", "semantic",
                                        "rename", "expand", "attributes"};
    const char *sep = " (";
    for (int k = 0; k < 6; k++)
        if (r->by_kind[k]) {
            printf("%s%zu %s", sep, r->by_kind[k], kinds[k]);
            sep = ", ";
        }
    printf("%s, ir_version %lld -> %lld", r->adapted ? ")" : "", (long long)r->ir_from,
           (long long)r->ir_to);
    for (size_t i = 0; i < r->n_custom; i++)
        printf("; domain %s passed through (%zu nodes)", r->custom[i].domain,
               r->custom[i].nodes);
    printf("\n");
}

/* Prints what the optimizer did: one line, or one per pass (--stats). */
static void cli_optimize_summary(const CliConvert *o, const OptStats *st)
{
    long total = 0;
    for (size_t i = 0; i < st->n; i++)
        total += st->changes[i];
    printf("optimized: %zu -> %zu nodes, %ld changes in %d rounds\n", st->nodes_before,
           st->nodes_after, total, st->iterations);
    for (size_t i = 0; o->stats && i < st->n; i++)
        printf("  %-20s %ld\n", st->pass[i]->name, st->changes[i]);
}

/* Converts m as o says, optimizes it when asked, and with --verify
 * compares it with a fresh load of the input. */
static int cli_convert_model(const CliConvert *o, IrModel *m, IrError *err)
{
    int64_t from = ir_model_opset(m, ""), from_ml = ir_model_opset(m, "ai.onnx.ml");
    CvReport r = {0};
    int rc = cv_convert(m, &o->cv, &r, err);
    if (rc == 0)
        cli_convert_summary(o, m, from, from_ml, &r);
    cv_report_free(&r);
    for (size_t i = 0; rc == 0 && i < o->n_input_shape; i++)
        rc = opt_set_input_shape(m, o->input_shape[i], err);
    if (rc == 0 && o->optimize) {
        OptStats st;
        rc = opt_optimize(m, &o->opt, &st, err);
        if (rc == 0)
            cli_optimize_summary(o, &st);
        opt_stats_free(&st);
    }
    if (rc < 0 || !o->verify)
        return rc;
    IrModel *orig;
    if (load_model_file(o->in, NULL, &orig, err))
        return -1;
    VfOptions vo = {.seed = 1};
    char *dir = cli_case_inputs(o->in);
    vo.inputs_dir = dir;
    rc = vf_compare(orig, m, &vo, err);
    if (rc == 0)
        printf("verified: outputs equal on %s inputs\n", dir ? "the case's" : "random");
    free(dir);
    ir_model_free(orig);
    return rc;
}

/* `optimize --list-passes`. */
static int cli_list_passes(void)
{
    for (size_t i = 0; i < opt_passes_n; i++)
        printf("%-20s %s%s\n", opt_passes[i]->name, opt_passes[i]->what,
               opt_passes[i]->idempotent ? "" : " (not idempotent)");
    return CLI_OK;
}

static int cli_convert(int argc, char **argv, bool optimize)
{
    CliConvert o = {0};
    if (optimize && argc == 3 && !strcmp(argv[2], "--list-passes"))
        return cli_list_passes();
    o.optimize = optimize;
    int rc = cli_convert_args(argc, argv, &o);
    if (rc)
        return rc;
    IrError err;
    IrModel *m;
    if (load_model_file(o.in, NULL, &m, &err))
        return cli_error(&err);
    /* Converting or optimizing builds on the model's structure: a cycle,
     * an undefined value or data that does not fit its dims would give a
     * wrong model (or a crash deep in a pass), so such a model is refused
     * first. A plain round trip keeps any model as it is. */
    bool changes = o.cv.opset || o.cv.opset_ml || o.cv.ir_version || o.optimize;
    if (changes && cli_require_valid(m, o.in, &err) < 0) {
        ir_model_free(m);
        return cli_error(&err);
    }
    if (cli_convert_model(&o, m, &err) < 0 ||
        (o.infer_shapes && cli_infer_shapes(m, o.in, &err) < 0)) {
        ir_model_free(m);
        return cli_error(&err);
    }
    rc = save_model_file(m, o.out, &o.save, &err);
    cli_drop_model(m);
    if (rc)
        return cli_error(&err);
    return CLI_OK;
}

/* `info --targets`: tries the conversion to every ai.onnx opset and prints,
 * per opset, "yes" or the first node that blocks it and why. */
static int cli_targets(const char *path)
{
    IrError err;
    IrModel *m;
    if (load_model_file(path, NULL, &m, &err))
        return cli_error(&err);
    int64_t own = ir_model_opset(m, "");
    ir_model_free(m);
    if (own < 1) {
        printf("%s imports no ai.onnx opset: nothing to convert\n", path);
        return CLI_OK;
    }
    int64_t max = os_domain_max("");
    printf("%s (ai.onnx opset %lld), converted to each opset:\n", path, (long long)own);
    int reachable = 0;
    for (int64_t t = 1; t <= max; t++) {
        if (load_model_file(path, NULL, &m, &err))
            return cli_error(&err);
        CvOptions o = {.opset = t};
        CvReport r = {0};
        int rc = cv_convert(m, &o, &r, &err);
        if (rc == 0) {
            reachable++;
            printf("  %2lld  yes%s\n", (long long)t, t == own ? " (the model's own)" : "");
        } else {
            printf("  %2lld  no   %s\n", (long long)t, err.msg);
        }
        cv_report_free(&r);
        ir_model_free(m);
    }
    printf("%d of %lld opsets reachable\n", reachable, (long long)max);
    return CLI_OK;
}

static int cli_info(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false, targets = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--targets"))
            targets = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("info takes MODEL.onnx, --json and --targets");
        else if (!path)
            path = argv[i];
        else
            return cli_usage("info takes one model");
    }
    if (!path)
        return cli_usage("info needs MODEL.onnx");
    if (targets)
        return cli_targets(path);
    IrError err;
    IrModel *m;
    LoadOptions lo = {.skip_external = 1};
    if (load_model_file(path, &lo, &m, &err))
        return cli_error(&err);
    /* Inferred types show beside the declared ones; a model inference
     * refuses is still described (check says why). */
    IrError ierr;
    if (inf_model(m, NULL, &ierr) < 0)
        ir_graph_clear_inferred(m->graph);
    if (json)
        info_print_json(stdout, m, path);
    else
        info_print_text(stdout, m, path);
    cli_drop_model(m);
    if (fflush(stdout) || ferror(stdout)) {
        fputs("onnx-convert: cannot write to standard output\n", stderr);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* `check`: one line per error on stderr (the first only, unless --all),
 * exit 1; or a summary and any notes on stdout, exit 0. */
static int cli_check(int argc, char **argv)
{
    const char *path = NULL;
    bool all = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--all"))
            all = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("check takes MODEL.onnx and --all");
        else if (!path)
            path = argv[i];
        else
            return cli_usage("check takes one model");
    }
    if (!path)
        return cli_usage("check needs MODEL.onnx");
    IrError err;
    IrModel *m;
    if (load_model_file(path, NULL, &m, &err))
        return cli_error(&err);
    ChkReport r;
    size_t errors = chk_model(m, &r);
    for (size_t i = 0; i < r.n; i++) {
        if (r.items[i].sev != CHK_ERROR)
            continue;
        fprintf(stderr, "onnx-convert: %s: %s\n", path, r.items[i].msg);
        if (!all)
            break;
    }
    if (errors == 0) {
        printf("%s: valid: %zu nodes checked", path, r.n_nodes);
        if (r.n_unchecked)
            printf(", %zu of them in custom domains (no schema to check them against)",
                   r.n_unchecked);
        printf("\n");
        for (size_t i = 0; i < r.n; i++)
            if (r.items[i].sev == CHK_NOTE)
                printf("note: %s\n", r.items[i].msg);
    }
    chk_report_free(&r);
    cli_drop_model(m);
    return errors ? CLI_FAIL : CLI_OK;
}

/* Parses a finite non-negative number; false on anything else. */
static bool cli_parse_tol(const char *s, double *out)
{
    char *end;
    if (!s || !*s)
        return false;
    double v = strtod(s, &end);
    if (*end || !(v >= 0) || v > 1e300)
        return false;
    *out = v;
    return true;
}

/* `run`: outputs are written only when the whole model ran; a failure
 * part-way through writing removes what was written. */
static int cli_run(int argc, char **argv)
{
    const char *path = NULL, *in_dir = NULL, *out_dir = NULL;
    EvOptions opt = {0};
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--inputs") && i + 1 < argc)
            in_dir = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out_dir = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            size_t seed;
            if (!cli_parse_size(argv[++i], &seed))
                return cli_usage("--seed takes a non-negative integer");
            opt.seed = seed;
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("run takes MODEL.onnx --inputs DIR -o OUTDIR");
        else if (!path)
            path = argv[i];
        else
            return cli_usage("run takes one model");
    }
    if (!path || !in_dir || !out_dir)
        return cli_usage("run needs MODEL.onnx, --inputs DIR and -o OUTDIR");
    IrError err;
    IrModel *m;
    if (load_model_file(path, NULL, &m, &err))
        return cli_error(&err);
    EvValue **in = NULL, **out = NULL;
    size_t n_in = 0, n_out = 0;
    int rc = ev_inputs_read(m, in_dir, &in, &n_in, &err);
    if (!rc)
        rc = ev_model_run(m, &opt, n_in, in, &out, &n_out, &err);
    if (!rc && mkdir(out_dir, 0777) && errno != EEXIST)
        rc = ir_fail(&err, "%s: cannot create the folder", out_dir);
    size_t written = 0;
    char file[4096];
    for (; !rc && written < n_out; written++) {
        IrValueInfo *vi = m->graph->outputs.p[written];
        int len = snprintf(file, sizeof file, "%s/output_%zu.pb", out_dir, written);
        if (len < 0 || (size_t)len >= sizeof file) {
            rc = ir_fail(&err, "%s: path too long", out_dir);
            break;
        }
        rc = ev_value_write(out[written], vi->value->name, file, &err);
    }
    if (rc) {
        for (size_t k = 0; k + 1 < written; k++) {
            if (snprintf(file, sizeof file, "%s/output_%zu.pb", out_dir, k) > 0)
                remove(file);
        }
    } else {
        printf("%s: ran %zu nodes, wrote %zu outputs to %s\n", path,
               m->graph->n_nodes, n_out, out_dir);
    }
    for (size_t k = 0; k < n_in; k++)
        ev_unref(in[k]);
    for (size_t k = 0; k < n_out; k++)
        ev_unref(out[k]);
    free(in);
    free(out);
    ir_model_free(m);
    return rc ? cli_error(&err) : CLI_OK;
}

/* `test`: PASS on stdout, or the first difference on stderr and exit 1. */
static int cli_test(int argc, char **argv)
{
    const char *dir = NULL, *model = NULL;
    double rtol = 1e-3, atol = 1e-7;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model = argv[++i];
        else if (!strcmp(argv[i], "--rtol") && i + 1 < argc) {
            if (!cli_parse_tol(argv[++i], &rtol))
                return cli_usage("--rtol takes a non-negative number");
        } else if (!strcmp(argv[i], "--atol") && i + 1 < argc) {
            if (!cli_parse_tol(argv[++i], &atol))
                return cli_usage("--atol takes a non-negative number");
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("test takes CASE_DIR [--model M] [--rtol R] [--atol A]");
        else if (!dir)
            dir = argv[i];
        else
            return cli_usage("test takes one case folder");
    }
    if (!dir)
        return cli_usage("test needs CASE_DIR");
    IrError err;
    EvTestResult res;
    if (ev_test_case(dir, model, rtol, atol, &res, &err)) {
        fprintf(stderr, "onnx-convert: %s: %s\n", dir, err.msg);
        return CLI_FAIL;
    }
    printf("%s: PASS (%zu data sets)\n", dir, res.sets);
    return CLI_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(NULL);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "convert"))
        return cli_convert(argc, argv, false);
    if (!strcmp(cmd, "optimize"))
        return cli_convert(argc, argv, true);
    if (!strcmp(cmd, "info"))
        return cli_info(argc, argv);
    if (!strcmp(cmd, "check"))
        return cli_check(argc, argv);
    if (!strcmp(cmd, "run"))
        return cli_run(argc, argv);
    if (!strcmp(cmd, "test"))
        return cli_test(argc, argv);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        fputs(cli_usage_text, stdout);
        return CLI_OK;
    }
    fprintf(stderr, "onnx-convert: unknown command '%s'\n", cmd);
    return cli_usage(NULL);
}
