/*
 * convert.c - `convert` and `optimize` (prefix cli_).
 *
 * One model (-o) runs in this process; several, or --out-dir, go to the
 * batch runner. Either way the work is job_convert's, so a batch reports
 * what each single conversion reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Options with a value that only the command line has; 1, 0 or -1. */
static int cli_shared_value(CliOpts *o, char **argv, int *i, int argc)
{
    const char *a = argv[*i];
    if (*i + 1 >= argc)
        return 0;
    const char *v = argv[*i + 1];
    if (!strcmp(a, "-o"))
        o->out = v;
    else if (!strcmp(a, "--out-dir"))
        o->out_dir = v;
    else if (!strcmp(a, "-j")) {
        if (!cli_parse_jobs(v, &o->jobs)) {
            fprintf(stderr, "onnx-convert: -j takes a number of jobs, 1..%d\n", CLI_MAX_JOBS);
            return -1;
        }
    } else if (!strcmp(a, "--external-data"))
        o->job.save.external_file = v;
    else if (!strcmp(a, "--external-threshold")) {
        if (!cli_parse_size(v, &o->job.save.external_threshold)) {
            fputs("onnx-convert: --external-threshold takes a byte count\n", stderr);
            return -1;
        }
    } else
        return 0;
    ++*i;
    return 1;
}

/* Flags only the command line has; true when a was one. */
static bool cli_shared_flag(CliOpts *o, const char *a)
{
    if (!strcmp(a, "--stats"))
        o->stats = true;
    else if (!strcmp(a, "--json"))
        o->json = true;
    else
        return false;
    return true;
}

/* The options of the job itself (job_parse_arg); 1, 0 or -1. */
static int cli_job_arg(CliOpts *o, char **argv, int *i, int argc)
{
    size_t k = (size_t)*i;
    char why[300];
    int got = job_parse_arg(&o->job, (const char *const *)argv, &k, (size_t)argc, why,
                            sizeof why);
    if (got < 0)
        fprintf(stderr, "onnx-convert: %s\n", why);
    *i = (int)k;
    return got;
}

/* What --to coreml needs of the command line's own options. */
static int cli_coreml_consistent(const CliOpts *o)
{
    const char *cmd = o->command;
    if (!o->job.to_coreml)
        return 0;
    if (o->out && !strcmp(o->out, "-"))
        return cli_usage(cmd, "a Core ML package is a folder: give -o OUT.mlpackage, not -o -");
    if (o->job.save.external_file)
        return cli_usage(cmd, "--external-data is ONNX's; a Core ML package keeps its "
                              "weights in weight.bin");
    return 0;
}

/* -o NAME.mlpackage without --to means --to coreml. */
static void cli_format_of_output(CliOpts *o)
{
    size_t n = o->out ? strlen(o->out) : 0;
    while (n > 1 && o->out[n - 1] == '/')
        n--;
    if (!o->job.to_given && n > 10 && !strncmp(o->out + n - 10, ".mlpackage", 10))
        o->job.to_coreml = true;
}

/* Whether the options fit together; CLI_USAGE after saying why, or 0. */
static int cli_convert_consistent(const CliOpts *o)
{
    const char *cmd = o->command;
    if (!o->n_inputs)
        return cli_usage(cmd, "no input model");
    if (cli_coreml_consistent(o))
        return CLI_USAGE;
    if (o->out && o->out_dir)
        return cli_usage(cmd, "-o and --out-dir do not go together");
    if (!o->out && !o->out_dir)
        return cli_usage(cmd, "-o OUT.onnx (one model) or --out-dir DIR is needed");
    if (o->out && o->n_inputs > 1)
        return cli_usage(cmd, "-o takes one input model; use --out-dir for several");
    if (o->jobs && !o->out_dir)
        return cli_usage(cmd, "-j goes with --out-dir");
    if (o->out && !strcmp(o->out, "-") && o->job.save.external_file)
        return cli_usage(cmd, "-o - writes one stream: it cannot have --external-data");
    for (size_t i = 0; o->out_dir && i < o->n_inputs; i++)
        if (!strcmp(o->inputs[i], "-"))
            return cli_usage(cmd, "- (standard input) is one model: give -o, not --out-dir");
    if (o->out_dir && o->job.save.external_file)
        return cli_usage(cmd, "--external-data names one side file, which the models of "
                              "a batch would share; convert them one at a time");
    char why[5000];
    if (job_options_check(&o->job, why, sizeof why) < 0) {
        fprintf(stderr, "onnx-convert: %s: %s\n", cmd, why);
        return cli_usage(cmd, NULL);
    }
    return 0;
}

/* Returns 0, or CLI_USAGE after printing why. */
static int cli_convert_args(int argc, char **argv, CliOpts *o)
{
    o->job.save.external_threshold = 1024;
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    if (!o->inputs)
        return cli_usage(o->command, "out of memory");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int got = cli_job_arg(o, argv, &i, argc);
        if (!got)
            got = cli_shared_value(o, argv, &i, argc);
        if (got < 0)
            return cli_usage(o->command, NULL);
        if (got || cli_shared_flag(o, a))
            continue;
        if (a[0] == '-' && a[1]) {
            fprintf(stderr, "onnx-convert: %s: unknown or incomplete option '%s'\n",
                    o->command, a);
            return cli_usage(o->command, NULL);
        }
        o->inputs[o->n_inputs++] = argv[i];
    }
    cli_format_of_output(o);
    int rc = cli_convert_consistent(o);
    /* the command line verifies unless told not to (JobOptions.verify_soft) */
    if (!rc && !o->job.verify && !o->job.no_verify) {
        o->job.verify = true;
        o->job.verify_soft = true;
    }
    return rc;
}

/* The precision stage's line, and one line per node kept in float32. */
static void cli_precision_text(FILE *f, const PcReport *p)
{
    if (p->store)
        fprintf(f, "stored %zu initializers as float16", p->stored);
    else
        fprintf(f, "precision %s: %zu nodes converted, %zu kept, %zu Casts added",
                pc_dtype_word(p->dtype), p->nodes_converted, p->n_kept, p->casts);
    if (p->clamped)
        fprintf(f, ", %zu values clamped", p->clamped);
    fprintf(f, "; initializers %llu -> %llu bytes\n",
            (unsigned long long)p->init_bytes_before, (unsigned long long)p->init_bytes_after);
    for (size_t i = 0; i < p->n_kept; i++)
        fprintf(f, "  kept %s (%s): %s\n", p->kept[i].node, p->kept[i].op, p->kept[i].reason);
    if (p->hint[0])
        fprintf(f, "  %s\n", p->hint);
}

/* The Core ML export's line: the target and what forced it. */
/* One output's verification figures: "  output 'y': largest error 3e-07
 * (tolerance 1e-05), own rounding noise 2e-07". */
void cli_figure_text(FILE *f, const VfFigure *g)
{
    if (!g->floats) {
        fprintf(f, "  output '%s': %s\n", g->name, g->differs ? "differs" : "exact");
        return;
    }
    fprintf(f, "  output '%s': largest error %.3g (tolerance %.3g)", g->name, g->max_err,
            g->tol);
    if (g->floor >= 0)
        fprintf(f, ", the original's own rounding noise %.3g", g->floor);
    if (g->wide_err >= 0)
        fprintf(f, ", both in float64 %.2g apart", g->wide_err);
    if (g->beyond)
        fprintf(f, "; %zu of %zu elements past the tolerance%s", g->beyond, g->numel,
                g->differs ? "" : ", within the noise");
    if (g->differs)
        fprintf(f, ": differs");
    fputc('\n', f);
}

/* " (open dims at N)": the size --verify gave the inputs' symbolic and
 * unknown dims, which a dynamic model is verified at (static buffer). */
static const char *cli_open_dims(const JobReport *r)
{
    static char buf[48];
    if (r->verify_case || r->verify_dim <= 0)
        return "";
    snprintf(buf, sizeof buf, " (open dims at %lld)", (long long)r->verify_dim);
    return buf;
}

static void cli_coreml_text(FILE *f, const CliOpts *o, const JobReport *r)
{
    const CmReport *c = &r->cm;
    const MilTarget *t = &mil_targets[c->target];
    fprintf(f, "Core ML: target %s (MIL opset %s, specification version %d)", t->name,
            t->opset, t->spec_version);
    if (o->job.coreml_target)
        fprintf(f, ", as asked (the model needs %s)", mil_targets[c->lowest].name);
    if (c->lowest == 0)
        fputs(", the lowest: every MIL op used exists there", f);
    else if (c->forced_op[0])
        fprintf(f, "; %s forced by MIL op %s (node '%s', %s)", mil_targets[c->lowest].name,
                c->forced_op, c->forced_node, c->forced_onnx_op);
    fprintf(f, "; %zu ONNX nodes lowered to %zu MIL ops (%zu consts, %llu bytes in "
            "weight.bin)\n", c->n_nodes, c->n_ops, c->n_consts,
            (unsigned long long)r->coreml_weight_bytes);
    for (size_t i = 0; i < c->n_io_notes && i < CM_MAX_IO_NOTES; i++) {
        const CmIoNote *e = &c->io_notes[i];
        fprintf(f, "  %s '%s'", e->input ? "input" : "output", e->onnx);
        if (strcmp(e->onnx, e->mil))
            fprintf(f, " is named '%s' in the package (a MIL identifier)", e->mil);
        if (e->scalar)
            fprintf(f, "%s crosses as [1], squeezed inside (Apple's loader takes no scalar "
                    "input)", strcmp(e->onnx, e->mil) ? "," : "");
        fputc('\n', f);
    }
    if (c->n_io_notes > CM_MAX_IO_NOTES)
        fprintf(f, "  ... and %zu more inputs and outputs renamed\n",
                c->n_io_notes - CM_MAX_IO_NOTES);
}

void cli_convert_text(FILE *f, const CliOpts *o, const JobReport *r)
{
    if (r->sorted)
        fprintf(f, "sorted %zu node%s into topological order\n", r->sorted,
                r->sorted == 1 ? "" : "s");
    for (size_t i = 0; i < r->tol.n; i++)
        fprintf(f, "repaired %s\n", r->tol.items[i].msg);
    if (r->converting) {
        fputs("converted", f);
        if ((o->job.cv.opset || o->job.to_coreml) && r->opset_from > 0)
            fprintf(f, " opset %lld -> %lld,", (long long)r->opset_from,
                    (long long)r->opset_to);
        if (o->job.cv.opset_ml && r->ml_from > 0)
            fprintf(f, " ai.onnx.ml %lld -> %lld,", (long long)r->ml_from,
                    (long long)r->ml_to);
        fprintf(f, " %zu nodes adapted", r->cv.adapted);
        const char *sep = " (";
        for (size_t k = 0; k < JOB_N_KINDS; k++)
            if (r->cv.by_kind[k]) {
                fprintf(f, "%s%zu %s", sep, r->cv.by_kind[k], job_kind_names[k]);
                sep = ", ";
            }
        fprintf(f, "%s, ir_version %lld -> %lld", r->cv.adapted ? ")" : "",
                (long long)r->ir_from, (long long)r->ir_to);
        for (size_t i = 0; i < r->cv.n_custom; i++)
            fprintf(f, "; domain %s passed through (%zu nodes)", r->cv.custom[i].domain,
                    r->cv.custom[i].nodes);
        if (r->cv.ifs_taken)
            fprintf(f, "; %zu If node%s with a known condition replaced by the branch taken",
                    r->cv.ifs_taken, r->cv.ifs_taken == 1 ? "" : "s");
        fputc('\n', f);
    }
    for (size_t i = 0; i < r->cv.n_warnings; i++)
        fprintf(f, "warning: %s\n", r->cv.warnings[i]);
    if (r->cv.n_dropped) {
        fprintf(f, "dropped to fit IR %lld: ", (long long)r->ir_to);
        for (size_t i = 0; i < r->cv.n_dropped; i++)
            fprintf(f, "%s%s", i ? ", " : "", r->cv.dropped[i]);
        fputc('\n', f);
    }
    if (r->precision)
        cli_precision_text(f, &r->pc);
    if (r->pc_auto)
        fprintf(f, "--auto: %zu of %zu nodes kept float32, error %.3g of the tolerance "
                "(fully converted: %.3g), %zu evaluations\n", r->pa.n_kept,
                r->pa.candidates, r->pa.error, r->pa.error_full, r->pa.evaluations);
    if (r->optimized) {
        long total = 0;
        for (size_t i = 0; i < r->opt.n; i++)
            total += r->opt.changes[i];
        fprintf(f, "optimized: %zu -> %zu nodes, %ld changes in %d rounds\n",
                r->nodes_before, r->nodes_after, total, r->opt.iterations);
        for (size_t i = 0; o->stats && i < r->opt.n; i++)
            fprintf(f, "  %-20s %ld\n", r->opt.pass[i]->name, r->opt.changes[i]);
    }
    if (r->coreml_done)
        cli_coreml_text(f, o, r);
    if (r->verified == 1)
        fprintf(f, "verified: outputs equal on %s inputs%s%s\n",
                r->verify_case ? "the case's" : "random", cli_open_dims(r),
                r->coreml_done ? " after the round trip ONNX -> Core ML -> ONNX" : "");
    for (size_t i = 0; r->verified == 1 && i < r->n_verify_figs; i++)
        cli_figure_text(f, &r->verify_figs[i]);
    if (r->verify_state == JOB_VERIFY_EXACT)
        fprintf(f, "%s\n", r->verify_note);
    if (r->verify_state == JOB_VERIFY_SKIPPED)
        fprintf(f, "not verified: %s\n", r->verify_note);
}

/* `optimize --list-passes`. */
static int cli_list_passes(void)
{
    for (size_t i = 0; i < opt_passes_n; i++)
        printf("%-20s %s%s\n", opt_passes[i]->name, opt_passes[i]->what,
               opt_passes[i]->idempotent ? "" : " (not idempotent)");
    return CLI_OK;
}

/* One model, in this process. */
static int cli_convert_one(const CliOpts *o)
{
    JobReport r;
    IrModel *keep;
    int rc = job_convert(&o->job, o->inputs[0], o->out, &r, &keep);
    /* with -o - standard output carries the model: the report goes aside */
    FILE *report = strcmp(o->out, "-") ? stdout : stderr;
    if (o->json)
        cli_print_json(report, &r);
    else if (rc == 0)
        cli_convert_text(report, o, &r);
    if (rc < 0)
        cli_print_failure(o->inputs[0], r.msg);
    cli_drop_model(keep);
    job_report_free(&r);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}

int cli_convert(int argc, char **argv, const char *command)
{
    bool optimize = !strcmp(command, "optimize");
    if (optimize && argc == 3 && !strcmp(argv[2], "--list-passes"))
        return cli_list_passes();
    CliOpts o = {.command = command};
    o.job.command = command;
    o.job.optimize = optimize;
    int rc = cli_convert_args(argc, argv, &o);
    if (rc == 0)
        rc = o.out_dir ? cli_batch(&o) : cli_convert_one(&o);
    free(o.inputs);
    return rc;
}
