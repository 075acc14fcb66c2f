/*
 * job.h - one command on one model, and the report of what it did
 * (prefix job_).
 *
 * `convert`, `optimize` and `check` run through here, one model at a time
 * or many in a batch; the report is what the command line prints, as text
 * or as the JSON object of docs/json.md (job_json). Nothing here
 * prints or exits.
 */
#ifndef OC_JOB_H
#define OC_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "coreml/coreml.h"
#include "ir/diag.h"
#include "eval/eval.h"
#include "eval/verify.h"
#include "base/json.h"
#include "io/load.h"
#include "coreml/mlpackage.h"
#include "precision/precision.h"
#include "precision/precision_auto.h"
#include "io/save.h"
#include "analysis/tolerate.h"
#include "passes/passes.h"

/* How a model's job ended. The names (job_status_name) are the JSON
 * "status" values. */
typedef enum {
    JOB_OK = 0,     /* done: written (convert, optimize) or valid (check) */
    JOB_INVALID,    /* the checker refused the model */
    JOB_REFUSED,    /* no exact conversion exists (the converter's refusal) */
    JOB_ERROR       /* anything else: unreadable, verification failed, ... */
} JobStatus;

/* Nodes one adapter was applied to: (domain, op, version from -> to). */
typedef struct JobAdapt {
    char *domain, *op;
    int from, to;
    size_t nodes;
} JobAdapt;

/* --input-shape given at most this often in one command */
#define JOB_MAX_SHAPES 64

typedef struct JobOptions {
    const char *command;         /* "convert" or "optimize" */
    CvOptions cv;                /* --opset, --opset-ml, --ir-version */
    bool optimize;
    OptOptions opt;              /* --passes */
    PcOptions pc;                /* --dtype, --store and their options */
    bool pc_auto;                /* --auto: keep what accuracy needs float32 */
    double rtol, atol;           /* --rtol, --atol of --auto (0: defaults) */
    const char *inputs;          /* --inputs DIR of --auto (NULL: random) */
    bool verify, infer_shapes;
    /* Verification by default (the command line's convert and optimize):
     * verify is set with it. A rewrite exact by construction is not
     * evaluated; evaluation stops at verify_budget seconds; what cannot be
     * verified (no time, inputs the original refuses) is reported and the
     * model written. A result that differs still fails. */
    bool verify_soft;
    bool no_verify;              /* --no-verify */
    double verify_budget;        /* --verify-budget SECONDS (0: JOB_VERIFY_BUDGET) */
    SaveOptions save;
    const char *input_shape[JOB_MAX_SHAPES];  /* --input-shape NAME=DIMS */
    size_t n_input_shape;
    EvOptions eval;              /* --verify's budgets (timeout 0: JOB_VERIFY_TIMEOUT) */
    /* --to coreml: after the stages above (the converter takes the model
     * to CM_ONNX_OPSET first), the model is lowered to a Core ML ML
     * Program and written as a package folder; coreml_target is
     * --coreml-target, NULL: the lowest target that holds the model.
     * --verify then judges the export by its import. */
    bool to_coreml;
    bool to_given;               /* --to was given (else -o's suffix decides) */
    const MilTarget *coreml_target;
    /* every stage but save: `info --targets` asks what convert would do
     * through the very same stages, so that the two cannot disagree */
    bool dry_run;
} JobOptions;

/* Seconds --verify runs each model at most unless --timeout says: a
 * runaway Loop in a model to convert must not hang a script. */
#define JOB_VERIFY_TIMEOUT 600

/* Seconds verification by default may take in all (--verify-budget). */
#define JOB_VERIFY_BUDGET 30

/* What verification did with a job's result. */
typedef enum {
    JOB_VERIFY_NONE = 0,         /* not asked (--no-verify, nothing to do) */
    JOB_VERIFY_EVALUATED,        /* both models ran: JobReport.verified says how */
    JOB_VERIFY_EXACT,            /* not evaluated: exact by construction */
    JOB_VERIFY_SKIPPED           /* not verified: verify_note says why */
} JobVerify;

/* What a job did; every string is owned (job_report_free). */
typedef struct JobReport {
    const char *command;
    char *path, *output;         /* output: NULL unless written */
    JobStatus status;
    /* a failure: the stage ("load", "check", "convert", "input-shape",
     * "precision", "optimize", "verify", "save", "run"), a short key (the converter's
     * reason, the checker's rule, "differs", ...), the node, op, domain
     * and opset step when a node is to blame, and the one-line message */
    const char *stage, *reason;
    char *node, *op, *domain;
    int64_t step_from, step_to;
    int version;                 /* the op's version there, 0 unknown */
    long long index;             /* an unnamed node's position, -1 unknown */
    char msg[512];
    bool loaded;                 /* the fields below describe the model */
    bool converting;             /* --opset, --opset-ml or --ir-version */
    int64_t opset_from, opset_to, ml_from, ml_to, ir_from, ir_to;
    size_t nodes_before, nodes_after;
    /* the converter's report (adapted, by_kind, custom, dropped,
     * ifs_taken), held as it is; all zero unless the conversion succeeded */
    CvReport cv;
    size_t n_adapt;
    JobAdapt *adapt;
    bool sort_ran;               /* the model was put in topological order */
    size_t sorted;               /* nodes that moved (topo.h) */
    unsigned defects;            /* the tolerated defects the checker found
                                    (bits 1u << TolId) */
    bool repair_ran;             /* tol: what was repaired of them */
    TolReport tol;
    bool precision;              /* the precision stage ran */
    PcReport pc;                 /* what it did */
    bool pc_auto;                /* --auto ran: pa says what it did */
    PaReport pa;
    bool optimized;
    OptStats opt;                /* the optimizer's report (passes, changes,
                                    iterations), held as it is */
    bool verify_asked, verify_case; /* on the case's own inputs */
    int64_t verify_dim;          /* the size random inputs' open dims got
                                    (0: none had one) */
    int verified;                /* 1 equal, -2 differs, -1 could not run,
                                    0 not reached */
    JobVerify verify_state;
    char verify_note[600];       /* why not verified, or why exact */
    VfFigure *verify_figs;       /* per output: largest error, tolerance,
                                    the original's own noise (owned) */
    size_t n_verify_figs;
    VfWhere verify_where;        /* on a difference: the first node that made
                                    it (found false: not located) */
    bool coreml;                 /* --to coreml was asked: cm says what the
                                    export did, or why it refused */
    bool coreml_done;            /* the export succeeded */
    CmReport cm;
    uint64_t coreml_weight_bytes; /* bytes of the consts written to weight.bin
                                    (0 until written) */
    /* check of a Core ML package: what it holds (the checker's findings
     * are its import's) */
    bool package;
    const MilTarget *pkg_target; /* NULL: a specificationVersion no target has */
    char pkg_opset[32];          /* function main's */
    size_t pkg_ops;              /* ops of every function, nested ones too */
    MlpStats pkg_blobs;
    bool checked;                /* check: chk holds the findings */
    ChkReport chk;
} JobReport;

/* Converts and/or optimizes `in` as o says and writes `out` ("-":
 * standard output; `in` "-": standard input, as job_load; with
 * o->dry_run nothing is written and `out` may be NULL). Returns 0 or
 * -1; either way r says what happened (r->msg: why it failed). When
 * `keep` is not NULL the model is handed over there (or NULL), so that a
 * process about to exit need not free it. */
int job_convert(const JobOptions *o, const char *in, const char *out,
                JobReport *r, IrModel **keep);

/* Where a job's model comes from, and where --verify and info --targets
 * load it again from: the file `path` ("-": standard input), or, when buf
 * is set, the serialized model buf (len bytes; external data relative to
 * the folder dir, NULL: none) that `path` only names in messages. `file`:
 * path is the model's file even so, so --verify takes the inputs of the
 * test case it sits in (job_case_inputs). */
typedef struct JobInput {
    const char *path;
    const uint8_t *buf;
    size_t len;
    const char *dir;
    bool file;
} JobInput;

/* job_convert for a JobInput. */
int job_convert_input(const JobOptions *o, const JobInput *in, const char *out,
                      JobReport *r, IrModel **keep);

/* The stages of job_convert after loading, on m, which the caller loaded
 * from `in` and keeps (changed in place, half changed on failure); r is
 * started here. Nothing is written. */
int job_convert_model(const JobOptions *o, const JobInput *in, IrModel *m, JobReport *r);

/* Loads a fresh copy of the model `in` names. */
int job_input_load(const JobInput *in, const LoadOptions *opt, IrModel **m, IrError *err);

/* The checker's findings on m (loaded from `path`, a name in messages)
 * as job_check reports them; m is not changed in any way callers see.
 * strict: a tolerated defect (a warning) makes the model invalid too,
 * named by the first one's rule. */
int job_check_model(const char *path, IrModel *m, bool strict, JobReport *r);

/* Parses the option of `o->command` ("convert" or "optimize") at argv[*i]
 * into o, as the command line takes it: 1 when it was one (*i moves to
 * its value when it has one), 0 when it is none of the job's options (-o,
 * --out-dir, -j, --json, --stats and --external-* are the command line's
 * own), -1 when its value is wrong, with why ("--opset takes a positive
 * number"). job_parse_limit does the same for the evaluator's budgets
 * (--max-memory, --max-steps, --timeout) alone (`run` takes those too).
 * job_options_check: whether the options fit together (--expand's ops,
 * --ir-version against the opsets); 0, or -1 with why. (job_args.c) */
int job_parse_arg(JobOptions *o, const char *const *argv, size_t *i, size_t argc,
                  char *why, size_t cap);
int job_parse_limit(EvOptions *e, const char *const *argv, size_t *i, size_t argc,
                    char *why, size_t cap);
int job_options_check(const JobOptions *o, char *why, size_t cap);
/* A non-negative decimal; a byte count with an optional suffix K, M, G or
 * T (powers of 1024). */
bool job_parse_size(const char *s, size_t *out);
/* A tolerance (--rtol, --atol): a positive finite number. */
bool job_parse_tol(const char *s, double *out);
bool job_parse_bytes(const char *s, uint64_t *out);

/* Loads the model `in` (load_model_file), or for "-" the model on
 * standard input: read into memory once (at most 2 GiB, no external
 * data) and loaded from there as often as asked. A folder is read as a
 * Core ML package: checked against the MIL op table and imported to
 * ONNX at CM_ONNX_OPSET (job_load_mlpackage). */
int job_load(const char *in, const LoadOptions *opt, IrModel **m, IrError *err);

/* Reads the Core ML package folder `path` (mlp_read), checks its program
 * (mck_model) and imports it (cm_import). *mm, when not NULL, receives
 * the program (the caller frees it); st the blobs read. 0 or -1 with err
 * naming the package and what is at fault. */
int job_load_mlpackage(const char *path, IrModel **m, MilModel **mm, MlpStats *st,
                       IrError *err);
/* Whether `path` names a folder (what job_load reads as a package), and
 * whether it is one: a folder named *.mlpackage or holding Manifest.json
 * (what a batch or check takes as one model rather than a folder to
 * search). */
bool job_is_folder(const char *path);
bool job_is_mlpackage(const char *path);

/* Checks `path`: 0 valid, -1 with r->status INVALID or ERROR (strict:
 * as job_check_model). */
int job_check(const char *path, bool strict, JobReport *r, IrModel **keep);

/* The failure of r as the one diagnostic (diag.h), borrowing r's
 * strings: what batch mode's summary prints. */
DgDiag job_diag(const JobReport *r);

/* "Check before converting", for every caller that changes a model (the
 * command line, batch mode, the C library): job_sort_model puts m's nodes
 * in topological order (*sorted: nodes that moved; may be NULL), or fails
 * with msg "topo-order: WHY"; job_validate is 0 when the checker accepts
 * m, else -1 with *rule its first finding's rule (static storage;
 * "invalid" when it names none) and msg the finding ("RULE: WHERE:
 * WHAT"). msg is cut to cap. *defects (may be NULL) gets the tolerated
 * defects the checker found (bits 1u << TolId), which tol_repair then
 * repairs. job_prepare does all three (a cycle's rule is "topo-order"). */
int job_sort_model(IrModel *m, size_t *sorted, char *msg, size_t cap);
int job_validate(IrModel *m, const char **rule, char *msg, size_t cap, unsigned *defects);
int job_prepare(IrModel *m, const char **rule, char *msg, size_t cap);

/* A failure that happened outside a job (a batch worker that died). */
void job_fail(JobReport *r, const char *command, const char *path,
              DgStage stage, DgReason reason, const char *msg);

void job_report_free(JobReport *r);

/* The names of the adapter kinds (AdKind order): the keys of the
 * report's by_kind, and the words of the text summary. */
#define JOB_N_KINDS 6
extern const char *const job_kind_names[JOB_N_KINDS];

/* "ok", "invalid", "refused", "error". */
const char *job_status_name(JobStatus s);

/* Writes the report as one JSON object (docs/json.md). */
void job_json(Js *j, const JobReport *r);
/* Writes the report's "error" value alone: null when ok, else the object
 * of stage, reason, node, op, domain, step and message. */
void job_json_error(Js *j, const JobReport *r);
/* Writes where two models first part: null when not located, else
 * {node, value, op, became, became_node, max_error, floor, region,
 * region_size, partial} (docs/json.md; also `compare`'s). */
void job_json_where(Js *j, const VfWhere *w);
/* Writes one output's verification figures (docs/json.md). */
void job_json_figure(Js *j, const VfFigure *f);

/* The folder of a backend-test case's first inputs when `in` sits in one
 * (IN's folder/test_data_set_0/input_0.pb exists), else NULL; owned. */
char *job_case_inputs(const char *in);

/* ---- inside the driver: how a job ends (job_report.c) and its Core ML
 * stage (job_coreml.c), which job.c drives; neither calls back into job.c */

/* Ends the job: status, stage, reason (its JSON name: a DgReason's or a
 * checker rule's, static storage) and the one-line message; returns -1. */
int job_end_as(JobReport *r, JobStatus st, DgStage stage, const char *reason,
               const char *msg);
int job_end(JobReport *r, JobStatus st, DgStage stage, DgReason reason, const char *msg);

/* The Core ML stage (job_coreml.c): lowers m to a program (*mm; NULL with
 * -1) and checks it as a package reader would; with `back`, also its
 * import, retyped like m, for the caller's --verify. */
int job_run_coreml(const JobOptions *o, JobReport *r, IrModel *m, MilModel **mm,
                   IrModel **back);
/* Writes the program of --to coreml as the package `out`. */
int job_save_mlpackage(JobReport *r, const MilModel *mm, const char *out);
/* What check reports of a package besides its import's findings. */
void job_describe_package(JobReport *r, const MilModel *mm, const MlpStats *st);
/* The report's "coreml" object, and the export's refusal beside an
 * error's node and op. */
void job_json_coreml(Js *j, const JobReport *r);
void job_json_coreml_error(Js *j, const JobReport *r);

#endif
