/*
 * job_coreml.c - the Core ML side of a job (prefix job_; declared in
 * job.h): reading a package, the export stage, writing the
 * package, and what the report and its JSON say of them. job.c drives;
 * nothing here calls back into it.
 */
#include "driver/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "coreml/milcheck.h"

bool job_is_mlpackage(const char *path)
{
    struct stat dir;
    if (!strcmp(path, "-") || stat(path, &dir) || !S_ISDIR(dir.st_mode))
        return false;
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (n >= 10 && !strncmp(path + n - 10, ".mlpackage", 10))
        return true;
    char *manifest = malloc(n + 16);
    if (!manifest)
        return false;
    snprintf(manifest, n + 16, "%.*s/Manifest.json", (int)n, path);
    struct stat st;
    bool has = !stat(manifest, &st) && S_ISREG(st.st_mode);
    free(manifest);
    return has;
}

int job_load_mlpackage(const char *path, IrModel **m, MilModel **mm, MlpStats *st,
                       IrError *err)
{
    *m = NULL;
    if (mm)
        *mm = NULL;
    MilModel *p;
    if (mlp_read_stats(path, &p, st, err) < 0)
        return -1;
    /* the import raises what the op table accepts: a program it refuses
     * is named as such, not half raised */
    IrError e;
    int rc = mck_model(p, &e);
    if (rc < 0)
        ir_fail(err, "%s: %s", path, e.msg);
    else if ((rc = cm_import(p, m, &e)) < 0)
        ir_fail(err, "%s: import: %s", path, e.msg);
    if (rc == 0 && mm)
        *mm = p;
    else
        mil_model_free(p);
    return rc;
}

/* Bytes of the consts of block b (and the blocks in it) that go to
 * weight.bin at specification version spec. */
static uint64_t job_blob_bytes(const MilBlock *b, int spec)
{
    uint64_t n = 0;
    for (size_t i = 0; i < b->n_ops; i++) {
        const MilOp *op = b->ops[i];
        if (op->val && mlp_uses_blob(op->val, spec, 0))
            n += op->val->nbytes;
        for (size_t k = 0; k < op->n_blocks; k++)
            n += job_blob_bytes(op->blocks[k], spec);
    }
    return n;
}

/* The export's refusal as the converter's: node, op, version; the kind
 * picks the reason. */
static int job_coreml_refused(JobReport *r, const IrError *err)
{
    const CmReport *c = &r->cm;
    DgReason why = DG_COREML_UNSUPPORTED;
    if (c->fail_kind && !strcmp(c->fail_kind, "target"))
        why = DG_COREML_TARGET;
    else if (c->fail_kind && !strcmp(c->fail_kind, "constant-parameter"))
        why = DG_COREML_CONSTANT;
    if (c->fail_op[0]) {
        r->node = mem_strdup(c->fail_node);
        r->op = mem_strdup(c->fail_op);
        r->domain = mem_strdup("");
        r->version = c->fail_version;
    }
    return job_end(r, c->fail_kind ? JOB_REFUSED : JOB_ERROR, DG_STAGE_COREML, why, err->msg);
}

/* The Core ML stage: lowers m to a program (*mm; NULL with -1) and checks
 * it as a package reader would; with `back`, also its import, retyped
 * like m, for the caller's --verify. */
int job_run_coreml(const JobOptions *o, JobReport *r, IrModel *m, MilModel **mm,
                   IrModel **back)
{
    IrError err;
    CmOptions co = {.target = o->coreml_target ? (int)(o->coreml_target - mil_targets) : -1};
    *mm = NULL;
    r->coreml = true;
    if (cm_export(m, &co, mm, &r->cm, &err) < 0)
        return job_coreml_refused(r, &err);
    r->coreml_done = true;
    r->coreml_weight_bytes = job_blob_bytes((*mm)->fn[0]->block, (*mm)->spec_version);
    int rc = 0;
    if (mck_model(*mm, &err) < 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s: the exported program: %s", r->path, err.msg);
        rc = job_end(r, JOB_ERROR, DG_STAGE_COREML, DG_COREML_INVALID, msg);
    } else if (back && cm_import(*mm, back, &err) < 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s: verify: the import of the export: %s", r->path,
                 err.msg);
        rc = job_end(r, JOB_ERROR, DG_STAGE_VERIFY, DG_LOAD, msg);
    } else if (back) {
        cm_retype_like(*back, m);
    }
    if (rc < 0) {
        mil_model_free(*mm);
        *mm = NULL;
    }
    return rc;
}

/* Writes the program of --to coreml as the package `out`. */
int job_save_mlpackage(JobReport *r, const MilModel *mm, const char *out)
{
    IrError err;
    if (!strcmp(out, "-"))
        return job_end(r, JOB_ERROR, DG_STAGE_SAVE, DG_SAVE,
                       "-: a Core ML package is a folder; it cannot go to standard output");
    if (mlp_write(mm, out, NULL, &err) < 0)
        return job_end(r, JOB_ERROR, DG_STAGE_SAVE, DG_SAVE, err.msg);
    r->output = mem_strdup(out);
    return 0;
}

/* Ops in block b and the blocks inside it. */
static size_t job_mil_ops(const MilBlock *b)
{
    size_t n = b->n_ops;
    for (size_t i = 0; i < b->n_ops; i++)
        for (size_t k = 0; k < b->ops[i]->n_blocks; k++)
            n += job_mil_ops(b->ops[i]->blocks[k]);
    return n;
}

/* What check reports of a package besides its import's findings. */
void job_describe_package(JobReport *r, const MilModel *mm, const MlpStats *st)
{
    r->package = true;
    r->pkg_target = NULL;
    for (size_t i = 0; i < mil_targets_n; i++)
        if (mil_targets[i].spec_version == mm->spec_version)
            r->pkg_target = &mil_targets[i];
    for (size_t i = 0; i < mm->n_fn; i++) {
        if (!strcmp(mm->fn[i]->name, "main"))
            snprintf(r->pkg_opset, sizeof r->pkg_opset, "%s", mm->fn[i]->opset);
        r->pkg_ops += job_mil_ops(mm->fn[i]->block);
    }
    r->pkg_blobs = *st;
}

/* "coreml": null without --to coreml; else the target chosen (null
 * until the export succeeded) and what it took. */
void job_json_coreml(Js *j, const JobReport *r)
{
    if (!r->coreml) {
        js_null(j);
        return;
    }
    const CmReport *c = &r->cm;
    const MilTarget *t = r->coreml_done ? &mil_targets[c->target] : NULL;
    js_open(j, '{', false);
    js_key(j, "target");
    js_string(j, t ? t->name : NULL);
    js_key(j, "opset");
    js_string(j, t ? t->opset : NULL);
    js_key(j, "specification_version");
    js_opt_int(j, t != NULL, t ? t->spec_version : 0);
    js_key(j, "lowest_target");
    js_string(j, t ? mil_targets[c->lowest].name : NULL);
    js_key(j, "forced_by");
    if (t && c->forced_op[0] && c->lowest > 0) {
        js_open(j, '{', true);
        js_key(j, "mil_op");
        js_string(j, c->forced_op);
        js_key(j, "node");
        js_string(j, c->forced_node);
        js_key(j, "op");
        js_string(j, c->forced_onnx_op);
        js_close(j, '}');
    } else {
        js_null(j);
    }
    js_key(j, "nodes");
    js_opt_int(j, t != NULL, (int64_t)c->n_nodes);
    js_key(j, "mil_ops");
    js_opt_int(j, t != NULL, (int64_t)c->n_ops);
    js_key(j, "consts");
    js_opt_int(j, t != NULL, (int64_t)c->n_consts);
    js_key(j, "weight_bytes");
    js_opt_int(j, t != NULL, (int64_t)r->coreml_weight_bytes);
    js_key(j, "io_changes");
    js_open(j, '[', false);
    for (size_t i = 0; t && i < c->n_io_notes && i < CM_MAX_IO_NOTES; i++) {
        const CmIoNote *e = &c->io_notes[i];
        js_open(j, '{', true);
        js_key(j, "kind");
        js_string(j, e->input ? "input" : "output");
        js_key(j, "name");
        js_string(j, e->onnx);
        js_key(j, "package_name");
        js_string(j, e->mil);
        js_key(j, "scalar_as_1");
        js_bool(j, e->scalar);
        js_close(j, '}');
    }
    js_close(j, ']');
    js_close(j, '}');
}

/* The Core ML export's refusal, beside the error's node and op: the MIL
 * op, the target it was lowered for and the first target that takes it. */
void job_json_coreml_error(Js *j, const JobReport *r)
{
    const CmReport *c = &r->cm;
    js_key(j, "mil_op");
    js_string(j, c->fail_mil_op[0] ? c->fail_mil_op : NULL);
    js_key(j, "first_target");
    js_string(j, c->fail_kind && c->fail_first >= 0 && (size_t)c->fail_first < mil_targets_n
                     ? mil_targets[c->fail_first].name : NULL);
}
