/*
 * cli.h - what the command line's files share (prefix cli_).
 *
 * onnx-convert.c parses the command and runs the one-model commands,
 * cli.c holds the helpers they all share (option values, reports),
 * convert.c runs convert and optimize on one model, compare.c compares
 * two models, batch.c runs a command
 * over many models in worker processes, targets.c runs info --targets,
 * help.c holds every --help text
 * (the man page onnx-convert.1 names the same options; a test compares).
 *
 * Exit status: 0 done; 1 a model was rejected or an operation is not
 * possible (one line on stderr, no output file left behind); 2 usage
 * error. Only these files print or exit.
 */
#ifndef OC_CLI_H
#define OC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "eval/eval.h"
#include "ir/ir.h"
#include "driver/job.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

#define CLI_MAX_JOBS 256

/* The options of convert, optimize and check. */
typedef struct CliOpts {
    const char *command;        /* "convert", "optimize", "check" */
    char **inputs;              /* the models (or folders) named */
    size_t n_inputs;
    const char *out, *out_dir;  /* -o, --out-dir */
    int jobs;                   /* -j (0: not given) */
    bool json, stats, all;      /* --json, --stats, check --all */
    bool strict;                /* check --strict: tolerated defects refused */
    JobOptions job;
} CliOpts;

/* help.c: the help of `command` (NULL: the overview) on f. */
void cli_help(FILE *f, const char *command);
/* Prints "onnx-convert: MSG" (when msg is set) and "see onnx-convert
 * COMMAND --help" on stderr; returns CLI_USAGE. */
int cli_usage(const char *command, const char *msg);
/* --version. */
void cli_version(FILE *f);

/* cli.c: parses a non-negative decimal size. */
bool cli_parse_size(const char *s, size_t *out);
/* Parses a byte count with an optional suffix K, M, G or T (powers of
 * 1024): --max-memory. */
bool cli_parse_bytes(const char *s, uint64_t *out);
/* The evaluator's budgets (--max-memory, --max-steps, --timeout) at
 * argv[*i] into *e: 1 when it was one (its value consumed), 0 when not,
 * -1 after printing why its value is wrong. */
int cli_limit_opt(EvOptions *e, char **argv, int *i, int argc);
/* Parses -j N (1..CLI_MAX_JOBS). */
bool cli_parse_jobs(const char *s, int *out);
/* The last use of a model before the process exits (not freed outside
 * sanitized builds: exiting returns its memory at once). */
void cli_drop_model(IrModel *m);
/* Prints a report as one JSON document on f (an object with "schema"). */
void cli_print_json(FILE *f, const JobReport *r);
/* Writes a model's one-line failure on stderr, naming its path. */
void cli_print_failure(const char *path, const char *msg);

/* convert.c */
int cli_convert(int argc, char **argv, const char *command);
/* One output's verification figures, as a text line. */
void cli_figure_text(FILE *f, const VfFigure *g);
/* compare.c: `compare A B`. */
int cli_compare(int argc, char **argv);
/* The text lines a successful convert or optimize prints. */
void cli_convert_text(FILE *f, const CliOpts *o, const JobReport *r);

/* targets.c: `info --targets [--json]`: convert's stages (writing
 * nothing) for every ai.onnx target, and every ai.onnx.ml target when the
 * model imports it. */
int cli_targets(const char *path, bool json);

/* batch.c: runs o->command over every input (folders searched for *.onnx)
 * with o->jobs workers; prints failures as they happen, a progress line
 * on a terminal, and a table (or the JSON document) at the end. */
int cli_batch(CliOpts *o);

#endif
