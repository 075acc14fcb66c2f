/*
 * onnx-convert.c - the command line's entry: commands, --help, --version,
 * and the one-model commands info, check, run and test (prefix cli_; the
 * files of the command line are described in cli.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <sys/stat.h>

#include "analysis/check.h"
#include "cli/cli.h"
#include "convert/convert.h"
#include "eval/eval.h"
#include "analysis/infer.h"
#include "coreml/info_mil.h"
#include "driver/info.h"
#include "ir/ir.h"
#include "io/load.h"
#include "schema/opschema.h"
#include "passes/passes.h"
#include "io/save.h"
#include "ir/topo.h"
#include "eval/verify.h"

/* A failure of the model at path: one line naming it. */
static int cli_error(const char *path, const IrError *err)
{
    cli_print_failure(path, err->msg);
    return CLI_FAIL;
}

/* The gate before `run` and `test` evaluate m (loaded from `what`): its
 * nodes put in topological order first (the evaluator walks the list, and
 * tools write graphs out of order that ONNX Runtime runs), then the
 * checker, then the defects it tolerates repaired (tolerate.h: a -1 dim
 * read as unknown, ...). -1 with err "WHAT: RULE: ..." on a cycle or a
 * finding. */
static int cli_runnable(IrModel *m, const char *what, IrError *err)
{
    const char *rule;
    char msg[600];
    if (job_prepare(m, &rule, msg, sizeof msg) < 0)
        return ir_fail(err, "%s: %s", what, msg);
    return 0;
}

static int cli_convert_cmd(int argc, char **argv)
{
    return cli_convert(argc, argv, "convert");
}

static int cli_optimize_cmd(int argc, char **argv)
{
    return cli_convert(argc, argv, "optimize");
}

/* `info` of a Core ML package (a folder): the program's summary. */
static int cli_info_mlpackage(const char *path, bool json)
{
    MilModel *m;
    MlpStats st;
    IrError err;
    if (mlp_read_stats(path, &m, &st, &err)) {
        if (json) {
            JobReport r;
            job_fail(&r, "info", path, DG_STAGE_LOAD, DG_LOAD, err.msg);
            cli_print_json(stdout, &r);
            job_report_free(&r);
        }
        return cli_error(path, &err);
    }
    if (json)
        info_mil_print_json(stdout, m, &st, path);
    else
        info_mil_print_text(stdout, m, &st, path);
    mil_model_free(m);
    if (fflush(stdout) || ferror(stdout)) {
        fputs("onnx-convert: cannot write to standard output\n", stderr);
        return CLI_FAIL;
    }
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
            return cli_usage("info", "info takes MODEL.onnx, --json and --targets");
        else if (!path)
            path = argv[i];
        else
            return cli_usage("info", "info takes one model");
    }
    if (!path)
        return cli_usage("info", "info needs MODEL.onnx");
    if (targets)
        return cli_targets(path, json);
    struct stat pst;
    if (!stat(path, &pst) && S_ISDIR(pst.st_mode))
        return cli_info_mlpackage(path, json);
    IrError err;
    IrModel *m;
    LoadOptions lo = {.skip_external = 1};
    if (job_load(path, &lo, &m, &err)) {
        if (json) {
            JobReport r;
            job_fail(&r, "info", path, DG_STAGE_LOAD, DG_LOAD, err.msg);
            cli_print_json(stdout, &r);
            job_report_free(&r);
        }
        return cli_error(path, &err);
    }
    /* Inferred types show beside the declared ones; a model inference
     * refuses is still described (check says why). */
    IrError ierr;
    InfOptions proving = {.use_value_info = true, .run = ev_prove_node};
    if (inf_model(m, &proving, &ierr) < 0)
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

/* Prints what check found in the text form: the errors on stderr (the
 * first only, unless --all; with --strict the warnings count as errors),
 * or a summary, the warnings (tolerated defects) and any notes on
 * stdout. */
static void cli_check_text(const JobReport *r, bool all, bool strict)
{
    if (!r->checked) {
        cli_print_failure(r->path, r->msg);
        return;
    }
    const ChkReport *c = &r->chk;
    bool refused = c->n_errors || (strict && c->n_warnings);
    ChkSeverity sev = c->n_errors ? CHK_ERROR : CHK_WARNING;
    for (size_t i = 0; refused && i < c->n; i++) {
        if (c->items[i].sev != sev)
            continue;
        fprintf(stderr, "onnx-convert: %s: %s\n", r->path, c->items[i].msg);
        if (!all)
            break;
    }
    if (refused)
        return;
    if (r->package)
        printf("%s: valid Core ML package: target %s (%s), %zu MIL ops, %zu blobs (%llu "
               "bytes) in weight.bin; its import to ONNX: ", r->path,
               r->pkg_target ? r->pkg_target->name : "?", r->pkg_opset, r->pkg_ops,
               r->pkg_blobs.n_blobs, (unsigned long long)r->pkg_blobs.blob_bytes);
    else
        printf("%s: ", r->path);
    printf("valid: %zu nodes checked", c->n_nodes);
    if (c->n_unchecked)
        printf(", %zu of them in custom domains (no schema to check them against)",
               c->n_unchecked);
    if (c->n_warnings)
        printf("; %zu warning%s: defects other tools write, which convert and optimize "
               "repair and check --strict refuses (docs/tolerated.md)", c->n_warnings,
               c->n_warnings == 1 ? "" : "s");
    printf("\n");
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].sev == CHK_WARNING)
            printf("warning: %s\n", c->items[i].msg);
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].sev == CHK_NOTE)
            printf("note: %s\n", c->items[i].msg);
}

/* `check`: one model here, several (or -j) through the batch runner. */
static int cli_check(int argc, char **argv)
{
    CliOpts o = {.command = "check"};
    o.inputs = calloc((size_t)argc, sizeof *o.inputs);
    if (!o.inputs)
        return cli_usage("check", "out of memory");
    int rc = 0;
    for (int i = 2; i < argc && rc == 0; i++) {
        if (!strcmp(argv[i], "--all"))
            o.all = true;
        else if (!strcmp(argv[i], "--strict"))
            o.strict = true;
        else if (!strcmp(argv[i], "--json"))
            o.json = true;
        else if (!strcmp(argv[i], "-j") && i + 1 < argc) {
            if (!cli_parse_jobs(argv[++i], &o.jobs))
                rc = cli_usage("check", "-j takes a number of jobs, 1..256");
        } else if (argv[i][0] == '-' && argv[i][1])
            rc = cli_usage("check", "check takes MODEL..., --all, --strict, --json and -j N");
        else
            o.inputs[o.n_inputs++] = argv[i];
    }
    if (rc == 0 && !o.n_inputs)
        rc = cli_usage("check", "check needs MODEL.onnx");
    for (size_t i = 0; rc == 0 && o.n_inputs > 1 && i < o.n_inputs; i++)
        if (!strcmp(o.inputs[i], "-"))
            rc = cli_usage("check", "- (standard input) is one model: check it alone");
    struct stat st;
    bool one_folder = rc == 0 && o.n_inputs == 1 && stat(o.inputs[0], &st) == 0 &&
                      S_ISDIR(st.st_mode) && !job_is_mlpackage(o.inputs[0]);
    if (rc == 0 && (o.n_inputs > 1 || o.jobs || one_folder)) {
        rc = cli_batch(&o);
    } else if (rc == 0) {
        JobReport r;
        IrModel *keep;
        rc = job_check(o.inputs[0], o.strict, &r, &keep) < 0 ? CLI_FAIL : CLI_OK;
        if (o.json)
            cli_print_json(stdout, &r);
        if (!o.json || rc)
            cli_check_text(&r, o.all, o.strict);
        cli_drop_model(keep);
        job_report_free(&r);
    }
    free(o.inputs);
    return rc;
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
    int lim;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--inputs") && i + 1 < argc)
            in_dir = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out_dir = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            size_t seed;
            if (!cli_parse_size(argv[++i], &seed))
                return cli_usage("run", "--seed takes a non-negative integer");
            opt.seed = seed;
        } else if ((lim = cli_limit_opt(&opt, argv, &i, argc)) != 0) {
            if (lim < 0)
                return cli_usage("run", NULL);
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("run", "run takes MODEL.onnx --inputs DIR -o OUTDIR");
        else if (!path)
            path = argv[i];
        else
            return cli_usage("run", "run takes one model");
    }
    if (!path || !in_dir || !out_dir)
        return cli_usage("run", "run needs MODEL.onnx, --inputs DIR and -o OUTDIR");
    IrError err;
    IrModel *m;
    if (load_model_file(path, NULL, &m, &err))
        return cli_error(path, &err);
    /* the evaluator runs only what the checker accepts */
    if (cli_runnable(m, path, &err)) {
        ir_model_free(m);
        return cli_error(path, &err);
    }
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
    return rc ? cli_error(path, &err) : CLI_OK;
}

/* `test`: PASS on stdout, or the first difference on stderr and exit 1. */
static int cli_test(int argc, char **argv)
{
    const char *dir = NULL, *model = NULL;
    double rtol = 1e-3, atol = 1e-7;
    EvOptions opt = {0};
    int lim;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model = argv[++i];
        else if ((lim = cli_limit_opt(&opt, argv, &i, argc)) != 0) {
            if (lim < 0)
                return cli_usage("test", NULL);
        }
        else if (!strcmp(argv[i], "--rtol") && i + 1 < argc) {
            if (!cli_parse_tol(argv[++i], &rtol))
                return cli_usage("test", "--rtol takes a non-negative number");
        } else if (!strcmp(argv[i], "--atol") && i + 1 < argc) {
            if (!cli_parse_tol(argv[++i], &atol))
                return cli_usage("test", "--atol takes a non-negative number");
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("test", "test takes CASE_DIR [--model M] [--rtol R] [--atol A]");
        else if (!dir)
            dir = argv[i];
        else
            return cli_usage("test", "test takes one case folder");
    }
    if (!dir)
        return cli_usage("test", "test needs CASE_DIR");
    char path[4096];
    if (!model) {
        int len = snprintf(path, sizeof path, "%s/model.onnx", dir);
        if (len < 0 || (size_t)len >= sizeof path) {
            fprintf(stderr, "onnx-convert: %s: path too long\n", dir);
            return CLI_FAIL;
        }
        model = path;
    }
    IrError err;
    EvTestResult res;
    IrModel *m;
    if (load_model_file(model, NULL, &m, &err))
        return cli_error(model, &err);
    /* the evaluator runs only what the checker accepts */
    if (cli_runnable(m, model, &err)) {
        ir_model_free(m);
        return cli_error(model, &err);
    }
    int rc = ev_test_case_model_opt(dir, m, &opt, rtol, atol, &res, &err);
    ir_model_free(m);
    if (rc)
        return cli_error(dir, &err);
    printf("%s: PASS (%zu data sets)\n", dir, res.sets);
    return CLI_OK;
}

/* `COMMAND --help` or `-h` anywhere after a command. */
static bool cli_wants_help(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

/* `--name=value` becomes `--name value`, so that every option with a
 * value takes either form; a value containing '=' (--input-shape=x=1,3)
 * keeps it. Returns the new argv (argc updated); the option names split
 * off live in *store. Free both. */
static char **cli_split_equals(int *argc, char **argv, char **store)
{
    size_t total = 1;
    for (int i = 0; i < *argc; i++)
        if (!mem_add_size(total, strlen(argv[i]) + 1, &total))
            abort();
    char **out = mem_array((size_t)*argc * 2 + 1, sizeof *out);
    char *next = *store = mem_alloc(total);
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        char *a = argv[i], *eq = strchr(a, '=');
        if (i >= 2 && !strncmp(a, "--", 2) && eq && eq > a + 2) {
            size_t len = (size_t)(eq - a);
            memcpy(next, a, len);
            next[len] = '\0';
            out[n++] = next;
            next += len + 1;
            out[n++] = eq + 1;
        } else {
            out[n++] = a;
        }
    }
    *argc = n;
    return out;
}

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} cli_commands[] = {
    {"convert", cli_convert_cmd}, {"optimize", cli_optimize_cmd},
    {"info", cli_info},           {"check", cli_check},
    {"run", cli_run},             {"test", cli_test},
    {"compare", cli_compare},
};

/* Runs the command argv[1] names. */
static int cli_dispatch(int argc, char **argv)
{
    /* Temporary files go on SIGINT/SIGTERM; a mapped input that shrinks
     * is an error line, not SIGBUS. */
    save_cleanup_on_signals("onnx-convert");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") ||
        (!strcmp(cmd, "help") && argc <= 3)) {
        cli_help(stdout, argc == 3 ? argv[2] : NULL);
        return CLI_OK;
    }
    if (!strcmp(cmd, "--version") && argc == 2) {
        cli_version(stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++) {
        if (strcmp(cmd, cli_commands[i].name))
            continue;
        if (cli_wants_help(argc, argv)) {
            cli_help(stdout, cmd);
            return CLI_OK;
        }
        return cli_commands[i].run(argc, argv);
    }
    char msg[200];
    snprintf(msg, sizeof msg, "unknown command '%.100s'", cmd);
    return cli_usage(NULL, msg);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(NULL, "a command is needed: convert, optimize, check, info, "
                               "run, test or compare");
    char *store;
    char **args = cli_split_equals(&argc, argv, &store);
    int rc = cli_dispatch(argc, args);
    free(args);
    free(store);
    return rc;
}
