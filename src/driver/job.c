/*
 * job.c - one command on one model, and its report (prefix job_).
 *
 * The stages of a convert or optimize job, each of which can end it:
 * load, check (only when the model is to change or to run: a cycle or an
 * undefined value would otherwise give a wrong model, and the evaluator
 * runs only what the checker accepts), convert, input-shape,
 * optimize, verify, the checker again for --infer-shapes, save. The report
 * keeps what each stage did so that text and JSON say the same thing.
 */
#include "driver/job.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "adapters/adapters.h"
#include "analysis/infer.h"
#include "ir/topo.h"

const char *const job_kind_names[JOB_N_KINDS] = {
    "compatible", "attribute-input", "semantic", "rename", "expand", "attributes"};

const char *job_status_name(JobStatus s)
{
    switch (s) {
    case JOB_OK: return "ok";
    case JOB_INVALID: return "invalid";
    case JOB_REFUSED: return "refused";
    default: return "error";
    }
}

/* ---- the input "-" --------------------------------------------------- */

/* A model from standard input must fit ONNX's protobuf limit of 2 GiB
 * (bigger models keep their weights in external data, which a model read
 * from standard input cannot have: it has no folder). */
#define JOB_MAX_STDIN ((size_t)1 << 31)

/* Standard input is read once and kept: --verify and info --targets load
 * the input again. */
static struct {
    bool read;
    int rc;
    uint8_t *buf;
    size_t len;
    char msg[200];
} job_stdin;

static void job_read_stdin(void)
{
    job_stdin.read = true;
    size_t cap = 0, len = 0;
    uint8_t *buf = NULL;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : (size_t)1 << 16;
            uint8_t *nb = cap > JOB_MAX_STDIN ? NULL : realloc(buf, ncap);
            if (!nb) {
                snprintf(job_stdin.msg, sizeof job_stdin.msg, "-: standard input is "
                         "larger than %zu bytes (a model that big keeps its weights "
                         "in external data; give its path)", JOB_MAX_STDIN);
                free(buf);
                job_stdin.rc = -1;
                return;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, stdin);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(stdin) || len > JOB_MAX_STDIN) {
        snprintf(job_stdin.msg, sizeof job_stdin.msg, "-: %s",
                 len > JOB_MAX_STDIN ? "standard input is larger than 2 GiB"
                                     : "cannot read standard input");
        free(buf);
        job_stdin.rc = -1;
        return;
    }
    job_stdin.buf = buf;
    job_stdin.len = len;
}

bool job_is_folder(const char *path)
{
    struct stat st;
    return strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode);
}



int job_load(const char *in, const LoadOptions *opt, IrModel **m, IrError *err)
{
    if (job_is_folder(in))
        return job_load_mlpackage(in, m, NULL, NULL, err);
    if (strcmp(in, "-"))
        return load_model_file(in, opt, m, err);
    if (!job_stdin.read)
        job_read_stdin();
    if (job_stdin.rc) {
        *m = NULL;
        return ir_fail(err, "%s", job_stdin.msg);
    }
    return load_model_buffer(job_stdin.buf, job_stdin.len, NULL, "-", opt, m, err);
}

/* Copies the file at path to standard output. */
static int job_copy_out(const char *path, IrError *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ir_fail(err, "-: cannot read back the temporary copy");
    char buf[1 << 16];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, n, stdout) != n)
            rc = -1;
    if (ferror(f))
        rc = -1;
    fclose(f);
    if (rc || fflush(stdout) || ferror(stdout))
        return ir_fail(err, "-: cannot write to standard output");
    return 0;
}

/* Writes m to `out`, or to standard output for "-": a stream has no
 * folder for side files, so every tensor goes inline (a side-file name
 * with a threshold nothing reaches brings external tensors back inline),
 * through a temporary file so that a failure writes nothing. */
static int job_save(const IrModel *m, const char *out, const SaveOptions *so, IrError *err)
{
    if (strcmp(out, "-"))
        return save_model_file(m, out, so, err);
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/onnx-convert-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return ir_fail(err, "-: cannot create a temporary folder in %s",
                       tmp && *tmp ? tmp : "/tmp");
    char path[4200];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    SaveOptions inline_all = {.external_file = "unused.bin",
                              .external_threshold = SIZE_MAX};
    int rc = save_model_file(m, path, &inline_all, err);
    if (rc == 0)
        rc = job_copy_out(path, err);
    remove(path);
    rmdir(dir);
    return rc;
}



static void job_start(JobReport *r, const char *command, const char *path)
{
    memset(r, 0, sizeof *r);
    r->command = command;
    r->path = mem_strdup(path);
}

void job_fail(JobReport *r, const char *command, const char *path, DgStage stage,
              DgReason reason, const char *msg)
{
    job_start(r, command, path);
    job_end(r, JOB_ERROR, stage, reason, msg);
}

/* The checker's rule of a finding "RULE: WHERE: WHAT" (static storage:
 * one of chk_rules, or a tolerated defect's id), or "invalid". */
static const char *job_rule_of(const char *msg)
{
    for (size_t i = 0; chk_rules[i]; i++) {
        size_t n = strlen(chk_rules[i]);
        if (!strncmp(msg, chk_rules[i], n) && msg[n] == ':')
            return chk_rules[i];
    }
    int t = tol_of_message(msg);
    return t >= 0 ? tol_defects[t].id : "invalid";
}

DgDiag job_diag(const JobReport *r)
{
    DgDiag d = dg_none();
    d.stage = dg_stage_parse(r->stage);
    d.reason = dg_reason_parse(r->reason);
    if (!d.reason && r->reason && *r->reason) {
        d.reason = DG_RULE;        /* the checker's rule names the reason */
        d.rule = r->reason;
    }
    d.node = r->node;
    d.op = r->op;
    d.domain = r->domain;
    d.version = r->version;
    d.index = r->op ? r->index : -1;
    d.step_from = r->step_from;
    d.step_to = r->step_to;
    d.msg = r->msg;
    return d;
}

int job_validate(IrModel *m, const char **rule, char *msg, size_t cap, unsigned *defects)
{
    ChkReport c;
    int rc = 0;
    if (chk_model_run(m, ev_prove_node, &c)) {
        const char *first = chk_first_error(&c);
        *rule = job_rule_of(first ? first : "");
        snprintf(msg, cap, "%s", first ? first : "the model is invalid");
        rc = -1;
    }
    if (defects)
        *defects = c.defects;
    chk_report_free(&c);
    return rc;
}

int job_prepare(IrModel *m, const char **rule, char *msg, size_t cap)
{
    unsigned defects;
    IrError err;
    if (job_sort_model(m, NULL, msg, cap) < 0) {
        *rule = dg_reason_name(DG_TOPO_ORDER);
        return -1;
    }
    if (job_validate(m, rule, msg, cap, &defects) < 0)
        return -1;
    if (tol_repair(m, defects, ev_prove_node, NULL, &err) < 0) {
        *rule = dg_reason_name(DG_INFERENCE);
        snprintf(msg, cap, "%s", err.msg);
        return -1;
    }
    return 0;
}

int job_sort_model(IrModel *m, size_t *sorted, char *msg, size_t cap)
{
    IrError err;
    if (topo_sort_model(m, sorted, &err) < 0) {
        snprintf(msg, cap, "topo-order: %s", err.msg);
        return -1;
    }
    return 0;
}

/* Refuses (INVALID) a model the checker refuses, naming the first rule it
 * breaks as `check` does. */
static int job_require_valid(JobReport *r, IrModel *m)
{
    const char *rule;
    char first[512], msg[600];
    unsigned defects = 0;
    int rc = job_validate(m, &rule, first, sizeof first, &defects);
    r->defects |= defects;
    if (rc == 0)
        return 0;
    snprintf(msg, sizeof msg, "%s: %s", r->path, first);
    return job_end_as(r, JOB_INVALID, DG_STAGE_CHECK, rule, msg);
}

/* Repairs the tolerated defects the checker found in m (tolerate.h); what
 * was repaired goes to r->tol. */
static int job_repair(JobReport *r, IrModel *m)
{
    IrError err;
    char msg[700];
    r->repair_ran = true;
    if (tol_repair(m, r->defects, ev_prove_node, &r->tol, &err) == 0)
        return 0;
    snprintf(msg, sizeof msg, "%s: %s", r->path, err.msg);
    return job_end(r, JOB_INVALID, DG_STAGE_CHECK, DG_INFERENCE, msg);
}

/* Puts m's nodes in topological order before the checker sees it (tools
 * write graphs that are not, and ONNX Runtime runs them); a cycle is
 * refused as the checker's rule topo-order. */
static int job_sort(JobReport *r, IrModel *m)
{
    char why[600], msg[700];
    if (job_sort_model(m, &r->sorted, why, sizeof why) < 0) {
        snprintf(msg, sizeof msg, "%s: %s", r->path, why);
        return job_end(r, JOB_INVALID, DG_STAGE_CHECK, DG_TOPO_ORDER, msg);
    }
    r->sort_ran = true;
    return 0;
}

/* CvReport.on_adapt: counts nodes per (domain, op, from, to). */
static void job_on_adapt(void *arg, const char *domain, const char *op, int from, int to)
{
    JobReport *r = arg;
    for (size_t i = 0; i < r->n_adapt; i++) {
        JobAdapt *a = &r->adapt[i];
        if (a->from == from && a->to == to && !strcmp(a->op, op) &&
            !strcmp(a->domain, domain)) {
            a->nodes++;
            return;
        }
    }
    r->adapt = mem_grow(r->adapt, r->n_adapt + 1, sizeof *r->adapt);
    r->adapt[r->n_adapt++] = (JobAdapt){.domain = mem_strdup(domain), .op = mem_strdup(op),
                                        .from = from, .to = to, .nodes = 1};
}

/* Keeps the converter's refusal: key, node, op, step. */
static int job_refused(JobReport *r, const CvReport *cr, const IrError *err)
{
    JobStatus st = JOB_REFUSED;
    if (dg_reason_parse(cr->reason) == DG_INVALID_SOURCE)
        st = JOB_INVALID;
    r->node = mem_strdup(cr->fail_node);
    r->op = mem_strdup(cr->fail_op);
    r->domain = mem_strdup(cr->fail_domain);
    r->step_from = cr->fail_from;
    r->step_to = cr->fail_to;
    r->version = cr->fail_version;
    r->index = cr->fail_index;
    return job_end_as(r, st, DG_STAGE_CONVERT,
                      cr->reason ? cr->reason : dg_reason_name(DG_REFUSED), err->msg);
}

static int job_run_convert(const JobOptions *o, JobReport *r, IrModel *m)
{
    IrError err;
    cv_report_free(&r->cv);
    r->cv = (CvReport){.on_adapt = job_on_adapt, .on_adapt_arg = r};
    int rc = cv_convert(m, &o->cv, &r->cv, &err);
    if (rc < 0) {
        job_refused(r, &r->cv, &err);
        /* a refused conversion reports no counts (as before it held them) */
        cv_report_free(&r->cv);
        r->cv = (CvReport){0};
    } else {
        r->ir_to = r->cv.ir_to;
    }
    return rc;
}

/* The precision stage (--dtype, --store): after convert, so that it reads
 * the schemas of the target opset, and before optimize, so that the
 * passes clean up what it adds. */
static int job_run_precision(const JobOptions *o, JobReport *r, IrModel *m)
{
    IrError err;
    pc_report_free(&r->pc);
    pa_report_free(&r->pa);
    int rc;
    if (o->pc_auto) {
        /* --auto evaluates the models as --verify does: same budgets, same
         * seeded inputs unless --inputs gives them */
        PaOptions a = {.rtol = o->rtol, .atol = o->atol,
                       .vf = {.seed = 1, .eval = o->eval, .inputs_dir = o->inputs}};
        if (a.vf.eval.timeout <= 0)
            a.vf.eval.timeout = JOB_VERIFY_TIMEOUT;
        rc = pa_convert(m, &o->pc, &a, &r->pc, &r->pa, &err);
        r->pc_auto = rc == 0;
    } else {
        rc = pc_convert(m, &o->pc, &r->pc, &err);
    }
    if (rc < 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s: %s", r->path, err.msg);
        pc_report_free(&r->pc);
        pa_report_free(&r->pa);
        return job_end(r, JOB_ERROR, DG_STAGE_PRECISION, DG_PRECISION, msg);
    }
    r->precision = true;
    return 0;
}

static int job_run_optimize(const JobOptions *o, JobReport *r, IrModel *m)
{
    IrError err;
    opt_stats_free(&r->opt);
    if (opt_optimize(m, &o->opt, &r->opt, &err) < 0) {
        opt_stats_free(&r->opt);
        return job_end(r, JOB_ERROR, DG_STAGE_OPTIMIZE, DG_OPTIMIZE, err.msg);
    }
    r->optimized = true;
    return 0;
}





char *job_case_inputs(const char *in)
{
    if (!strcmp(in, "-"))   /* standard input has no folder */
        return NULL;
    const char *slash = strrchr(in, '/');
    size_t dl = slash ? (size_t)(slash - in) : 1;
    const char *dir = slash ? in : ".";
    size_t cap = dl + 40;
    char *p = malloc(cap);
    if (!p)
        return NULL;
    snprintf(p, cap, "%.*s/test_data_set_0", (int)dl, dir);
    size_t pcap = cap + 20;
    char *probe = malloc(pcap);
    struct stat sb;
    bool found = probe && snprintf(probe, pcap, "%s/input_0.pb", p) > 0 &&
                 stat(probe, &sb) == 0;
    free(probe);
    if (!found) {
        free(p);
        return NULL;
    }
    return p;
}

/* After a conversion to float16 or bfloat16, --verify judges the result
 * a second time, computed in float32 (pc_widen_copy), against the same
 * run of the original: only the rounding of the weights and of the
 * Casts' targets is left. The evaluator rounds every half op's result; a
 * runtime may not (ONNX Runtime on CPU runs the ops it has no half kernel
 * for in float32 and drops the Cast pairs around them), and where a
 * model's decisions (a detector's NMS and TopK) turn on that difference,
 * one arithmetic keeping the outputs says nothing about the other: both
 * must. *w gets the widened copy (free it); 0 or -1. */
static int job_verify_half(IrModel *m, int32_t half, IrModel **w, VfAlso *also,
                           IrError *err)
{
    if (pc_widen_copy(m, w, err) < 0)
        return -1;
    *also = (VfAlso){.model = *w, .narrow = half,
                     .note = "the converted model computed in float32, as runtimes "
                             "without half kernels run it; its outputs turn on half "
                             "rounding: --auto or --keep-float32-node keep such parts"};
    return 0;
}

/* Whether verification by default may skip evaluating: the conversion
 * only bumped versions, moved attributes to inputs and back, or added
 * and removed attributes whose defaults keep the meaning (AdKind); no
 * rewrite, expansion, optimization or precision change. */
static bool job_exact_by_construction(const JobOptions *o, const JobReport *r)
{
    if (!o->verify_soft || o->optimize || o->pc.dtype || o->to_coreml)
        return false;
    return r->cv.by_kind[AD_SEMANTIC] + r->cv.by_kind[AD_RENAME] +
           r->cv.by_kind[AD_EXPAND] == 0;
}

/* Verification by default that could not be had: reported, not failed. */
static int job_verify_skipped(JobReport *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int job_verify_skipped(JobReport *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->verify_note, sizeof r->verify_note, fmt, ap);
    va_end(ap);
    r->verify_state = JOB_VERIFY_SKIPPED;
    return 0;
}

/* What a stopped verification by default reports (stop from vf_compare,
 * msg its error). */
static int job_verify_stopped(const JobOptions *o, JobReport *r, VfStop stop, double needed,
                              const char *msg)
{
    double budget = o->verify_budget > 0 ? o->verify_budget : JOB_VERIFY_BUDGET;
    if (stop == VF_NO_TIME)
        return job_verify_skipped(r, "about %.0f s of evaluation needed, over the budget of "
                                  "%g s; --verify-budget SECONDS allows more, --verify "
                                  "forces it", needed > budget ? needed : budget, budget);
    return job_verify_skipped(r, "%s; give the inputs' sizes with --input-shape NAME=DIMS "
                              "(or a case folder's test_data_set_0)", msg);
}

/* A half model whose outputs moved past rounding: the message a user
 * can act on (which output, the first node that moved, and --auto, which
 * keeps in float32 the nodes that need it) in place of the element
 * detail, which would crowd the hint out of the line. */
static void job_half_differs(const JobOptions *o, const JobReport *r, char *msg, size_t cap)
{
    const VfFigure *f = NULL;
    for (size_t i = 0; i < r->n_verify_figs && !f; i++)
        if (r->verify_figs[i].differs)
            f = &r->verify_figs[i];
    if (!f || !r->verify_where.found)
        return;
    char where[700], size[120];
    if (f->floats && f->max_err > f->tol)
        snprintf(size, sizeof size, "largest error %.3g, tolerance %.3g", f->max_err, f->tol);
    else
        snprintf(size, sizeof size, "NaN or infinity where the original is finite");
    snprintf(msg, cap, "verify: output '%s' moves past %s rounding (%s); %s; --auto keeps in "
             "float32 the nodes that need it", f->name, pc_dtype_word(o->pc.dtype), size,
             vf_where_text(&r->verify_where, where, sizeof where));
}

/* Evaluates a fresh load of the input and m on the same inputs. */
static int job_run_verify(const JobOptions *o, const JobInput *in, JobReport *r,
                          IrModel *m)
{
    IrError err;
    IrModel *orig;
    r->verify_asked = true;
    /* --store float16 rounds the weights as asked and computes in float32
     * on them: what it changes is the request, not a rewrite to judge
     * against the original's outputs (a detector's boxes move with it) */
    if (job_exact_by_construction(o, r)) {
        r->verify_state = JOB_VERIFY_EXACT;
        snprintf(r->verify_note, sizeof r->verify_note, "exact by construction: only "
                 "version bumps, attributes moved to inputs and attribute defaults%s; not "
                 "evaluated (--verify evaluates)",
                 o->pc.store ? ", weights stored in float16 as asked (--store)" : "");
        return 0;
    }
    r->verify_state = JOB_VERIFY_EVALUATED;
    if (job_input_load(in, NULL, &orig, &err) < 0)
        return job_end(r, JOB_ERROR, DG_STAGE_VERIFY, DG_LOAD, err.msg);
    /* the input was sorted and its tolerated defects repaired before it
     * changed (job_stages): so is its copy */
    if (topo_sort_model(orig, NULL, &err) < 0) {
        ir_model_free(orig);
        return job_end(r, JOB_ERROR, DG_STAGE_VERIFY, DG_TOPO_ORDER, err.msg);
    }
    if (tol_repair(orig, r->defects, ev_prove_node, NULL, &err) < 0) {
        ir_model_free(orig);
        return job_end(r, JOB_ERROR, DG_STAGE_VERIFY, DG_INFERENCE, err.msg);
    }
    /* the evaluator runs only what the checker accepts: the input passed
     * (job_stages), the converted or optimized model must too */
    const char *rule;
    char first[512], msg[700];
    if (job_validate(m, &rule, first, sizeof first, NULL) < 0) {
        snprintf(msg, sizeof msg, "%s: verify: the result: %s", in->path, first);
        job_end_as(r, JOB_ERROR, DG_STAGE_VERIFY, rule, msg);
        ir_model_free(orig);
        return -1;
    }
    /* The original gets the --input-shape the output got, so that both
     * take the same (smaller) inputs. */
    for (size_t i = 0; i < o->n_input_shape; i++)
        if (opt_set_input_shape(orig, o->input_shape[i], &err) < 0) {
            ir_model_free(orig);
            return job_end(r, JOB_ERROR, DG_STAGE_INPUT_SHAPE, DG_INPUT_SHAPE, err.msg);
        }
    VfStop stop = VF_JUDGED;
    double needed = 0;
    VfOptions vo = {.seed = 1, .eval = o->eval, .dim_used = &r->verify_dim,
                    .figures = &r->verify_figs, .n_figures = &r->n_verify_figs,
                    .stop = &stop, .needed = &needed, .where = &r->verify_where};
    if (o->verify_soft)
        vo.deadline = vf_now() + (o->verify_budget > 0 ? o->verify_budget : JOB_VERIFY_BUDGET);
    /* the original in float64: its difference from the original's own run
     * is the rounding noise a conversion is judged against (none when the
     * copy cannot be made: the tolerance alone judges) */
    IrModel *floor = NULL, *floor_b = NULL;
    if (pc_wide_copy(orig, &floor, &err) < 0)
        floor = NULL;
    if (floor && pc_wide_copy(m, &floor_b, &err) < 0)
        floor_b = NULL;
    vo.wide = floor;
    vo.wide_after = floor_b;
    if (vo.eval.timeout <= 0)
        vo.eval.timeout = JOB_VERIFY_TIMEOUT;
    char *dir = !in->buf || in->file ? job_case_inputs(in->path) : NULL;
    vo.inputs_dir = dir;
    r->verify_case = dir != NULL;
    bool half = o->pc.dtype == IR_FLOAT16 || o->pc.dtype == IR_BFLOAT16;
    IrModel *wide = NULL;
    VfAlso also;
    int rc = half ? job_verify_half(m, o->pc.dtype, &wide, &also, &err) : 0;
    vo.also = half ? &also : NULL;
    vo.n_also = half ? 1 : 0;
    if (rc == 0)
        rc = vf_compare(orig, m, &vo, &err);
    ir_model_free(wide);
    ir_model_free(floor);
    ir_model_free(floor_b);
    r->verified = rc == 0 ? 1 : rc;
    free(dir);
    ir_model_free(orig);
    if (rc < 0 && o->verify_soft && stop != VF_JUDGED) {
        r->verified = 0;
        return job_verify_stopped(o, r, stop, needed, err.msg);
    }
    if (rc == -2 && half)
        job_half_differs(o, r, err.msg, sizeof err.msg);
    if (rc < 0)
        return job_end(r, JOB_ERROR, DG_STAGE_VERIFY, rc == -2 ? DG_DIFFERS : DG_EVAL, err.msg);
    return 0;
}

/* The Core ML stage and its --verify, which judges the program by its
 * import. *keep gets the program (NULL: freed here, as a dry run wants). */
static int job_stage_coreml(const JobOptions *o, const JobInput *in, JobReport *r,
                            IrModel *m, MilModel **keep)
{
    MilModel *mm;
    IrModel *back = NULL;
    int rc = job_run_coreml(o, r, m, &mm, o->verify ? &back : NULL);
    if (rc == 0 && back)
        rc = job_run_verify(o, in, r, back);
    ir_model_free(back);
    if (rc == 0 && keep)
        *keep = mm;
    else
        mil_model_free(mm);
    return rc;
}

/* Every stage after loading; the model is changed in place. With
 * --to coreml the program goes to *mm (NULL: made and dropped). */
static int job_stages(const JobOptions *o, const JobInput *in, JobReport *r, IrModel *m,
                      MilModel **mm)
{
    /* a model to change or to run (--verify) must pass the checker; the
     * defects it tolerates are repaired before anything reads the model */
    bool changes = r->converting || o->optimize || pc_wanted(&o->pc);
    /* verification by default has nothing to prove when nothing changes */
    bool verify = o->verify && (changes || !o->verify_soft);
    bool gate = changes || verify || o->infer_shapes;
    if (gate && (job_sort(r, m) < 0 || job_require_valid(r, m) < 0 ||
                 job_repair(r, m) < 0))
        return -1;
    /* before converting: dims it fixes make more values known (scales and
     * shapes computed from Shape), which some rewrites need */
    IrError err;
    for (size_t i = 0; i < o->n_input_shape; i++)
        if (opt_set_input_shape(m, o->input_shape[i], &err) < 0)
            return job_end(r, JOB_ERROR, DG_STAGE_INPUT_SHAPE, DG_INPUT_SHAPE, err.msg);
    if (r->converting && job_run_convert(o, r, m) < 0)
        return -1;
    if (pc_wanted(&o->pc) && job_run_precision(o, r, m) < 0)
        return -1;
    if (o->optimize && job_run_optimize(o, r, m) < 0)
        return -1;
    if (o->to_coreml)
        return job_stage_coreml(o, in, r, m, mm);
    /* what the IR version written asks (IR 3: initializers are inputs) */
    if (gate)
        tol_fit_ir(m, &r->tol);
    if (verify && job_run_verify(o, in, r, m) < 0)
        return -1;
    if (o->infer_shapes) {
        if (job_require_valid(r, m) < 0)
            return -1;
        inf_write_value_info(m->graph);
    }
    return 0;
}

/* The model's opsets, IR version and node count before any change. */
static void job_describe_before(JobReport *r, const IrModel *m)
{
    r->loaded = true;
    r->opset_from = ir_model_opset(m, "");
    r->ml_from = ir_model_opset(m, "ai.onnx.ml");
    r->ir_from = m->has_ir_version ? m->ir_version : 0;
    r->nodes_before = opt_count_nodes(m);
}

static void job_describe_after(JobReport *r, const IrModel *m)
{
    r->opset_to = ir_model_opset(m, "");
    r->ml_to = ir_model_opset(m, "ai.onnx.ml");
    r->ir_to = m->has_ir_version ? m->ir_version : 0;
    r->nodes_after = opt_count_nodes(m);
}

/* Hands m to *keep, or frees it. */
static void job_release(IrModel *m, IrModel **keep)
{
    if (keep)
        *keep = m;
    else
        ir_model_free(m);
}

int job_input_load(const JobInput *in, const LoadOptions *opt, IrModel **m, IrError *err)
{
    if (!in->buf)
        return job_load(in->path, opt, m, err);
    return load_model_buffer(in->buf, in->len, in->dir, in->path, opt, m, err);
}

/* The options as the stages take them: --to coreml converts to the
 * opset the lowering reads. */
static JobOptions job_effective(const JobOptions *o)
{
    JobOptions e = *o;
    if (e.to_coreml && !e.cv.opset)
        e.cv.opset = CM_ONNX_OPSET;
    return e;
}

static bool job_converting(const JobOptions *o)
{
    return o->cv.opset || o->cv.opset_ml || o->cv.ir_version || o->cv.expand;
}

/* job_convert_model, the program of --to coreml going to *mm. */
static int job_convert_model_mil(const JobOptions *o, const JobInput *in, IrModel *m,
                                 JobReport *r, MilModel **mm)
{
    JobOptions e = job_effective(o);
    job_start(r, o->command, in->path);
    r->converting = job_converting(&e);
    job_describe_before(r, m);
    if (job_stages(&e, in, r, m, mm) < 0)
        return -1;
    job_describe_after(r, m);
    return 0;
}

int job_convert_model(const JobOptions *o, const JobInput *in, IrModel *m, JobReport *r)
{
    return job_convert_model_mil(o, in, m, r, NULL);
}


int job_convert_input(const JobOptions *o, const JobInput *in, const char *out,
                      JobReport *r, IrModel **keep)
{
    if (keep)
        *keep = NULL;
    IrError err;
    IrModel *m;
    if (job_input_load(in, NULL, &m, &err) < 0) {
        job_fail(r, o->command, in->path, DG_STAGE_LOAD, DG_LOAD, err.msg);
        JobOptions e = job_effective(o);
        r->converting = job_converting(&e);
        r->coreml = o->to_coreml;
        return -1;
    }
    MilModel *mm = NULL;
    if (job_convert_model_mil(o, in, m, r, o->dry_run ? NULL : &mm) < 0) {
        ir_model_free(m);   /* half converted: never kept */
        return -1;
    }
    if (o->dry_run) {
        job_release(m, keep);
        return 0;
    }
    if (o->to_coreml) {
        int rc = job_save_mlpackage(r, mm, out);
        mil_model_free(mm);
        if (rc < 0)
            ir_model_free(m);
        else
            job_release(m, keep);
        return rc;
    }
    if (job_save(m, out, &o->save, &err) < 0) {
        ir_model_free(m);
        return job_end(r, JOB_ERROR, DG_STAGE_SAVE, DG_SAVE, err.msg);
    }
    r->output = mem_strdup(out);
    job_release(m, keep);
    return 0;
}

int job_convert(const JobOptions *o, const char *in, const char *out, JobReport *r,
                IrModel **keep)
{
    JobInput ji = {.path = in};
    return job_convert_input(o, &ji, out, r, keep);
}

int job_check_model(const char *path, IrModel *m, bool strict, JobReport *r)
{
    job_start(r, "check", path);
    job_describe_before(r, m);
    r->checked = true;
    size_t errors = chk_model_run(m, ev_prove_node, &r->chk);
    r->defects = r->chk.defects;
    const char *first = errors ? chk_first_error(&r->chk)
                               : strict ? chk_first_warning(&r->chk) : NULL;
    if (errors || (strict && r->chk.n_warnings)) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s: %s", path, first ? first : "invalid");
        return job_end_as(r, JOB_INVALID, DG_STAGE_CHECK, job_rule_of(first ? first : ""), msg);
    }
    return 0;
}



int job_check(const char *path, bool strict, JobReport *r, IrModel **keep)
{
    if (keep)
        *keep = NULL;
    IrError err;
    IrModel *m;
    MilModel *mm = NULL;
    MlpStats st = {0};
    int lrc = job_is_folder(path) ? job_load_mlpackage(path, &m, &mm, &st, &err)
                                  : job_load(path, NULL, &m, &err);
    if (lrc < 0) {
        job_fail(r, "check", path, DG_STAGE_LOAD, DG_LOAD, err.msg);
        return -1;
    }
    int rc = job_check_model(path, m, strict, r);
    if (mm)
        job_describe_package(r, mm, &st);
    mil_model_free(mm);
    job_release(m, keep);
    return rc;
}

void job_report_free(JobReport *r)
{
    free(r->path);
    free(r->output);
    free(r->node);
    free(r->op);
    free(r->domain);
    for (size_t i = 0; i < r->n_adapt; i++) {
        free(r->adapt[i].domain);
        free(r->adapt[i].op);
    }
    free(r->adapt);
    free(r->verify_figs);
    cv_report_free(&r->cv);
    opt_stats_free(&r->opt);
    pc_report_free(&r->pc);
    pa_report_free(&r->pa);
    if (r->checked)
        chk_report_free(&r->chk);
    memset(r, 0, sizeof *r);
}

/* ---- JSON ----------------------------------------------------------- */

/* {"from": a, "to": b}; null when the model imports no such domain; "to"
 * is null when nothing was written. */
static void job_json_pair(Js *j, bool loaded, int64_t from, bool done, int64_t to)
{
    if (!loaded || from <= 0) {
        js_null(j);
        return;
    }
    js_open(j, '{', true);
    js_key(j, "from");
    js_int(j, from);
    js_key(j, "to");
    js_opt_int(j, done, to);
    js_close(j, '}');
}

static void job_json_conversion(Js *j, const JobReport *r)
{
    if (!r->converting || r->status == JOB_INVALID || !r->loaded ||
        (r->stage && !strcmp(r->stage, "convert"))) {
        js_null(j);
        return;
    }
    js_open(j, '{', false);
    js_key(j, "adapted");
    js_uint(j, r->cv.adapted);
    js_key(j, "by_kind");
    js_open(j, '{', true);
    for (size_t k = 0; k < JOB_N_KINDS; k++) {
        js_key(j, job_kind_names[k]);
        js_uint(j, r->cv.by_kind[k]);
    }
    js_close(j, '}');
    js_key(j, "adapters");
    js_open(j, '[', false);
    for (size_t i = 0; i < r->n_adapt; i++) {
        const JobAdapt *a = &r->adapt[i];
        js_open(j, '{', true);
        js_key(j, "domain");
        js_string(j, a->domain);
        js_key(j, "op");
        js_string(j, a->op);
        js_key(j, "from");
        js_int(j, a->from);
        js_key(j, "to");
        js_opt_int(j, a->to != 0, a->to);   /* null: the op is gone there */
        js_key(j, "nodes");
        js_uint(j, a->nodes);
        js_close(j, '}');
    }
    js_close(j, ']');
    js_key(j, "ifs_taken");
    js_uint(j, r->cv.ifs_taken);
    js_key(j, "custom_domains");
    js_open(j, '[', false);
    for (size_t i = 0; i < r->cv.n_custom; i++) {
        js_open(j, '{', true);
        js_key(j, "domain");
        js_string(j, r->cv.custom[i].domain);
        js_key(j, "nodes");
        js_uint(j, r->cv.custom[i].nodes);
        js_close(j, '}');
    }
    js_close(j, ']');
    js_key(j, "warnings");
    js_open(j, '[', false);
    for (size_t i = 0; i < r->cv.n_warnings; i++)
        js_string(j, r->cv.warnings[i]);
    js_close(j, ']');
    js_close(j, '}');
}

static void job_json_optimization(Js *j, const JobReport *r)
{
    if (!r->optimized) {
        js_null(j);
        return;
    }
    js_open(j, '{', false);
    js_key(j, "rounds");
    js_int(j, r->opt.iterations);
    js_key(j, "passes");
    js_open(j, '[', false);
    for (size_t i = 0; i < r->opt.n; i++) {
        js_open(j, '{', true);
        js_key(j, "name");
        js_string(j, r->opt.pass[i]->name);
        js_key(j, "changes");
        js_int(j, r->opt.changes[i]);
        js_close(j, '}');
    }
    js_close(j, ']');
    js_close(j, '}');
}

/* precision's "auto" object (docs/json.md), null without --auto. */
static void job_json_auto(Js *j, const JobReport *r)
{
    if (!r->pc_auto) {
        js_null(j);
        return;
    }
    const PaReport *a = &r->pa;
    js_open(j, '{', false);
    js_key(j, "rtol");
    js_double(j, a->rtol);
    js_key(j, "atol");
    js_double(j, a->atol);
    js_key(j, "candidates");
    js_uint(j, a->candidates);
    js_key(j, "error_full");
    js_double(j, a->error_full);
    js_key(j, "error");
    js_double(j, a->error);
    js_key(j, "evaluations");
    js_uint(j, a->evaluations);
    js_key(j, "nodes_kept");
    js_open(j, '[', true);
    for (size_t i = 0; i < a->n_kept; i++)
        js_string(j, a->kept[i]);
    js_close(j, ']');
    js_close(j, '}');
}

/* The "precision" object (docs/json.md), null when the stage did not run. */
static void job_json_precision(Js *j, const JobReport *r)
{
    if (!r->precision) {
        js_null(j);
        return;
    }
    const PcReport *p = &r->pc;
    js_open(j, '{', false);
    js_key(j, "dtype");
    js_string(j, pc_dtype_word(p->dtype));
    js_key(j, "store");
    js_string(j, pc_dtype_word(p->store));
    js_key(j, "nodes_converted");
    js_uint(j, p->nodes_converted);
    js_key(j, "nodes_kept");
    js_open(j, '[', false);
    for (size_t i = 0; i < p->n_kept; i++) {
        js_open(j, '{', true);
        js_key(j, "node");
        js_string(j, p->kept[i].node);
        js_key(j, "op");
        js_string(j, p->kept[i].op);
        js_key(j, "reason");
        js_string(j, p->kept[i].reason);
        js_close(j, '}');
    }
    js_close(j, ']');
    js_key(j, "casts");
    js_uint(j, p->casts);
    js_key(j, "clamped");
    js_uint(j, p->clamped);
    js_key(j, "stored");
    js_uint(j, p->stored);
    js_key(j, "initializer_bytes");
    js_open(j, '{', true);
    js_key(j, "before");
    js_uint(j, p->init_bytes_before);
    js_key(j, "after");
    js_uint(j, p->init_bytes_after);
    js_close(j, '}');
    js_key(j, "auto");
    job_json_auto(j, r);
    js_key(j, "hint");
    js_string(j, p->hint[0] ? p->hint : NULL);
    js_close(j, '}');
}



/* One output's figures: {name, max_error, tolerance, floor, beyond,
 * noisy, elements, float64_difference}; floor null where the wide run was not had, the
 * numbers null for an output compared exactly (not a float tensor). */
void job_json_figure(Js *j, const VfFigure *f)
{
    js_open(j, '{', false);
    js_key(j, "name");
    js_string(j, f->name);
    js_key(j, "max_error");
    if (f->floats)
        js_double(j, f->max_err);
    else
        js_null(j);
    js_key(j, "tolerance");
    if (f->floats)
        js_double(j, f->tol);
    else
        js_null(j);
    js_key(j, "floor");
    if (f->floats && f->floor >= 0)
        js_double(j, f->floor);
    else
        js_null(j);
    js_key(j, "float64_difference");
    if (f->floats && f->wide_err >= 0)
        js_double(j, f->wide_err);
    else
        js_null(j);
    js_key(j, "beyond_tolerance");
    js_int(j, (int64_t)f->beyond);
    js_key(j, "noisy");
    js_int(j, (int64_t)f->noisy);
    js_key(j, "elements");
    js_int(j, (int64_t)f->numel);
    js_key(j, "differs");
    js_bool(j, f->differs);
    js_close(j, '}');
}

void job_json_where(Js *j, const VfWhere *w)
{
    if (!w->found) {
        js_null(j);
        return;
    }
    js_open(j, '{', false);
    js_key(j, "node");
    js_string(j, w->node);
    js_key(j, "value");
    js_string(j, w->value);
    js_key(j, "op");
    js_string(j, w->op_before);
    js_key(j, "became");
    js_string(j, w->op_after);
    js_key(j, "became_node");
    js_string(j, w->node_after);
    js_key(j, "max_error");
    js_double(j, w->max_err);
    js_key(j, "floor");
    if (w->floor >= 0)
        js_double(j, w->floor);
    else
        js_null(j);
    js_key(j, "region");
    js_open(j, '[', true);
    for (size_t i = 0; i < w->n_region && i < VF_REGION_KEEP; i++)
        js_string(j, w->region[i]);
    js_close(j, ']');
    js_key(j, "region_size");
    js_int(j, (int64_t)w->n_region);
    js_key(j, "partial");
    js_bool(j, w->partial);
    js_close(j, '}');
}

static void job_json_verification(Js *j, const JobReport *r)
{
    if (!r->verify_asked) {
        js_null(j);
        return;
    }
    js_open(j, '{', true);
    js_key(j, "result");
    if (r->verify_state == JOB_VERIFY_EXACT || r->verify_state == JOB_VERIFY_SKIPPED) {
        js_string(j, r->verify_state == JOB_VERIFY_EXACT ? "exact" : "not verified");
        js_key(j, "reason");
        js_string(j, r->verify_note);
        js_close(j, '}');
        return;
    }
    js_string(j, r->verified == 1 ? "equal" : r->verified == -2 ? "differs" : "error");
    js_key(j, "inputs");
    js_string(j, r->verify_case ? "case" : "random");
    if (r->verify_dim > 0) {
        js_key(j, "open_dims");
        js_int(j, r->verify_dim);
    }
    js_key(j, "outputs");
    js_open(j, '[', true);
    for (size_t i = 0; i < r->n_verify_figs; i++)
        job_json_figure(j, &r->verify_figs[i]);
    js_close(j, ']');
    js_key(j, "first_difference");
    job_json_where(j, &r->verify_where);
    js_close(j, '}');
}

void job_json_error(Js *j, const JobReport *r)
{
    if (r->status == JOB_OK) {
        js_null(j);
        return;
    }
    js_open(j, '{', false);
    js_key(j, "stage");
    js_string(j, r->stage);
    js_key(j, "reason");
    js_string(j, r->reason);
    js_key(j, "node");
    js_string(j, r->node);
    js_key(j, "op");
    js_string(j, r->op);
    js_key(j, "domain");
    js_string(j, r->op ? ir_domain_shown(r->domain) : NULL);
    js_key(j, "step");
    bool coreml = r->stage && !strcmp(r->stage, dg_stage_name(DG_STAGE_COREML));
    if (r->op && !coreml) {
        js_open(j, '{', true);
        js_key(j, "from");
        js_int(j, r->step_from);
        js_key(j, "to");
        js_int(j, r->step_to);
        js_close(j, '}');
    } else {
        js_null(j);
    }
    if (coreml)
        job_json_coreml_error(j, r);
    js_key(j, "message");
    js_string(j, r->msg);
    js_close(j, '}');
}

/* The findings of one severity: notes as strings, errors and warnings as
 * {"rule", "message"}. */
static void job_json_findings(Js *j, const JobReport *r, ChkSeverity sev)
{
    js_open(j, '[', false);
    for (size_t i = 0; r->checked && i < r->chk.n; i++) {
        const ChkItem *it = &r->chk.items[i];
        if (it->sev != sev)
            continue;
        if (sev == CHK_NOTE) {
            js_string(j, it->msg);
            continue;
        }
        js_open(j, '{', true);
        js_key(j, "rule");
        js_string(j, job_rule_of(it->msg));
        js_key(j, "message");
        js_string(j, it->msg);
        js_close(j, '}');
    }
    js_close(j, ']');
}

/* "package": null unless check read a Core ML package. */
static void job_json_package(Js *j, const JobReport *r)
{
    if (!r->package) {
        js_null(j);
        return;
    }
    js_open(j, '{', true);
    js_key(j, "target");
    js_string(j, r->pkg_target ? r->pkg_target->name : NULL);
    js_key(j, "opset");
    js_string(j, r->pkg_opset);
    js_key(j, "mil_ops");
    js_uint(j, r->pkg_ops);
    js_key(j, "blobs");
    js_uint(j, r->pkg_blobs.n_blobs);
    js_key(j, "blob_bytes");
    js_uint(j, r->pkg_blobs.blob_bytes);
    js_close(j, '}');
}

static void job_json_check(Js *j, const JobReport *r)
{
    js_key(j, "package");
    job_json_package(j, r);
    js_key(j, "nodes");
    js_opt_int(j, r->checked, (int64_t)r->chk.n_nodes);
    js_key(j, "unchecked_nodes");
    js_opt_int(j, r->checked, (int64_t)r->chk.n_unchecked);
    js_key(j, "errors");
    job_json_findings(j, r, CHK_ERROR);
    js_key(j, "errors_total");
    js_opt_int(j, r->checked, (int64_t)r->chk.n_errors);
    js_key(j, "warnings");
    job_json_findings(j, r, CHK_WARNING);
    js_key(j, "notes");
    job_json_findings(j, r, CHK_NOTE);
}

/* "repaired": null when the repair stage was not reached, else
 * [{"rule", "message"}] per tolerated defect repaired. */
static void job_json_repaired(Js *j, const JobReport *r)
{
    if (!r->repair_ran) {
        js_null(j);
        return;
    }
    js_open(j, '[', false);
    for (size_t i = 0; i < r->tol.n; i++) {
        js_open(j, '{', true);
        js_key(j, "rule");
        js_string(j, tol_defects[r->tol.items[i].id].id);
        js_key(j, "message");
        js_string(j, r->tol.items[i].msg);
        js_close(j, '}');
    }
    js_close(j, ']');
}

static void job_json_convert(Js *j, const JobReport *r)
{
    bool done = r->status == JOB_OK;
    js_key(j, "output");
    js_string(j, r->output);
    js_key(j, "opset");
    job_json_pair(j, r->loaded, r->opset_from, done, r->opset_to);
    js_key(j, "opset_ml");
    job_json_pair(j, r->loaded, r->ml_from, done, r->ml_to);
    js_key(j, "ir_version");
    job_json_pair(j, r->loaded, r->ir_from, done, r->ir_to);
    js_key(j, "nodes");
    if (r->loaded) {
        js_open(j, '{', true);
        js_key(j, "before");
        js_uint(j, r->nodes_before);
        js_key(j, "after");
        js_opt_int(j, done, (int64_t)r->nodes_after);
        js_close(j, '}');
    } else {
        js_null(j);
    }
    js_key(j, "sorted");
    js_opt_int(j, r->sort_ran, (int64_t)r->sorted);
    js_key(j, "repaired");
    job_json_repaired(j, r);
    js_key(j, "conversion");
    job_json_conversion(j, r);
    js_key(j, "dropped");
    if (done) {
        js_open(j, '[', false);
        for (size_t i = 0; i < r->cv.n_dropped; i++)
            js_string(j, r->cv.dropped[i]);
        js_close(j, ']');
    } else {
        js_null(j);
    }
    js_key(j, "precision");
    job_json_precision(j, r);
    js_key(j, "optimization");
    job_json_optimization(j, r);
    js_key(j, "coreml");
    job_json_coreml(j, r);
    js_key(j, "verification");
    job_json_verification(j, r);
}

void job_json(Js *j, const JobReport *r)
{
    js_open(j, '{', false);
    js_report_head(j, r->path, r->command, job_status_name(r->status));
    if (!strcmp(r->command, "check"))
        job_json_check(j, r);
    else
        job_json_convert(j, r);
    js_key(j, "error");
    job_json_error(j, r);
    js_close(j, '}');
}
