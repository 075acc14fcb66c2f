/*
 * test_api_report - the C library's command and report calls
 * (oc_run_command, oc_check_report, oc_info_report, oc_targets_report).
 *
 * The promise under test is that the library does what the command line
 * does: oc_run_command with the command line's words writes the bytes the
 * command line's own job (job_convert, what `onnx-convert convert` runs)
 * writes, its report is the --json report, a refusal names the node, op
 * and step and breaks the model, while a usage mistake or a model the
 * checker refuses leaves it as it was; --verify and the targets' dry runs
 * load the model again from its bytes, external data from its folder.
 * Uses testdata/ (run from the project root) and models built here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "driver/job.h"
#include "io/load.h"
#include "onnxconvert.h"
#include "io/save.h"
#include "t.h"

#define CNN "testdata/small_cnn.onnx"

static char tmpdir[256];

static void die(const char *what)
{
    fprintf(stderr, "test_api_report: cannot set up: %s\n", what);
    exit(2);
}

#include "api_models.h"




/* One node `op` at ai.onnx `opset` from x to y, both tensors of `dtype`
 * and dims [2, 3]; `input` names the node's input (x, or an undefined
 * name for a model the checker refuses). */
static IrModel *one_node(int64_t opset, const char *op, int32_t dtype, const char *input)
{
    static const int64_t dims[] = {2, 3};
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", opset);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("g");
    ir_graph_add_input(g, "x", ir_type_tensor(dtype, 2, dims));
    const char *in[] = {input}, *out[] = {"y"};
    IrError err;
    if (!ir_node_new(g, NULL, op, "", "the_node", 1, in, 1, out, &err))
        die(err.msg);
    ir_graph_add_output(g, ir_graph_find_local(g, "y"), ir_type_tensor(dtype, 2, dims));
    return m;
}

/* The bytes of a file; NULL when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* What the command line writes for `convert IN -o OUT --opset 11
 * --optimize` (its job, in this process) against what the library
 * hands out for the same words. */
static void test_same_bytes_as_cli(void)
{
    char out[400];
    snprintf(out, sizeof out, "%s/cli.onnx", tmpdir);
    JobOptions o = {.command = "convert", .cv = {.opset = 11}, .optimize = true};
    JobReport r;
    T_CHECK(job_convert(&o, CNN, out, &r, NULL) == 0, "the CLI's job: %s", r.msg);
    job_report_free(&r);
    size_t cli_len = 0;
    uint8_t *cli = slurp(out, &cli_len);
    unlink(out);

    oc_model *m = am_load(CNN);
    const char *args[] = {"--opset", "11", "--optimize"};
    char *rep = NULL;
    T_CHECK(oc_run_command(m, "convert", args, 3, &rep) == 0, "convert: %s", oc_error());
    T_CHECK(am_has(rep, "\"status\": \"ok\"") && am_has(rep, "\"path\": \"" CNN "\""),
            "the report: %.300s", rep ? rep : "(none)");
    T_CHECK(am_has(rep, "\"optimization\""), "the report tells the optimizer ran");
    void *lib = NULL;
    size_t lib_len = 0;
    T_CHECK(oc_save_memory(m, &lib, &lib_len) == 0, "save: %s", oc_error());
    T_CHECK(cli && lib && cli_len == lib_len && !memcmp(cli, lib, cli_len),
            "the library's bytes (%zu) are the command line's (%zu)", lib_len, cli_len);
    T_CHECK(oc_model_opset(m, "") == 11, "converted to 11");
    oc_free(rep);
    oc_free(lib);
    free(cli);
    oc_model_free(m);
}

/* Mistakes of the caller fail before anything runs: no report, the
 * model as it was, a message naming the word. */
static void test_usage(void)
{
    oc_model *m = am_load(CNN);
    int64_t opset = oc_model_opset(m, "");
    size_t nodes = oc_model_node_count(m);
    char *rep = (char *)1;
    static const struct {
        const char *command;
        const char *args[3];
        size_t n;
        const char *says;
    } bad[] = {
        {"convert", {"--json"}, 1, "'--json'"},
        {"convert", {"-o", "x.onnx"}, 2, "'-o'"},
        {"convert", {"--opset", "abc"}, 2, "--opset takes a positive number"},
        {"convert", {"--opset"}, 1, "'--opset'"},
        {"optimize", {"--opset", "11"}, 2, "'--opset'"},
        {"optimize", {"--passes", "identity,nope"}, 2, "'nope'"},
        {"convert", {"--expand", "Relu"}, 2, "--expand"},
        {"convert", {"--max-memory", "0"}, 2, "--max-memory"},
        {"check", {"--all"}, 1, "convert or optimize"},
        /* an oc_model holds ONNX: a Core ML package is the command line's */
        {"convert", {"--to", "coreml"}, 2, "use the command line"},
        {"convert", {"--coreml-target", "iOS17"}, 2, "goes with --to coreml"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = oc_run_command(m, bad[i].command, bad[i].args, bad[i].n, &rep);
        T_CHECK(rc == -1 && rep == NULL && am_has(oc_error(), bad[i].says),
                "%s %s: rc %d, error '%s' should say %s", bad[i].command, bad[i].args[0],
                rc, oc_error(), bad[i].says);
    }
    const char *null_word[] = {"--opset", NULL};
    T_CHECK(oc_run_command(m, "convert", null_word, 2, NULL) == -1 &&
                am_has(oc_error(), "NULL"), "a NULL word: %s", oc_error());
    T_CHECK(oc_run_command(m, "convert", NULL, 1, NULL) == -1, "NULL args with n 1");
    T_CHECK(oc_run_command(NULL, "convert", NULL, 0, NULL) == -1, "a NULL model");
    T_CHECK(oc_run_command(m, NULL, NULL, 0, NULL) == -1, "a NULL command");
    T_CHECK(oc_model_opset(m, "") == opset && oc_model_node_count(m) == nodes,
            "the model is as it was and still usable");
    /* no option at all: writes the model back (and reports ok) */
    T_CHECK(oc_run_command(m, "convert", NULL, 0, NULL) == 0, "no options: %s", oc_error());
    oc_model_free(m);
}

/* A refusal: the report's error names node, op, domain and step; the
 * model is broken. */
static void test_refusal(void)
{
    oc_model *m = am_from_ir(one_node(13, "Neg", OC_INT64, "x"));
    const char *args[] = {"--opset", "5"};
    char *rep = NULL;
    T_CHECK(oc_run_command(m, "convert", args, 2, &rep) == -1, "Neg int64 to opset 5");
    T_CHECK(am_has(rep, "\"status\": \"refused\"") && am_has(rep, "\"node\": \"the_node\"") &&
                am_has(rep, "\"op\": \"Neg\"") && am_has(rep, "\"domain\": \"ai.onnx\"") &&
                am_has(rep, "\"from\": 6, \"to\": 5") && am_has(rep, "\"path\": \"memory\""),
            "the refusal's report: %.600s", rep ? rep : "(none)");
    T_CHECK(am_has(oc_error(), "the_node") && am_has(oc_error(), "Neg"), "oc_error: %s", oc_error());
    T_CHECK(oc_model_opset(m, "") == -1, "a refused model can only be freed");
    oc_free(rep);
    oc_model_free(m);
}

/* A model the checker refuses: status invalid, left as it was; the check
 * report lists the rule. */
static void test_invalid(void)
{
    oc_model *m = am_from_ir(one_node(13, "Relu", OC_FLOAT, "ghost"));
    char *rep = NULL;
    const char *args[] = {"--opset", "11"};
    T_CHECK(oc_run_command(m, "convert", args, 2, &rep) == -1, "an invalid model is refused");
    T_CHECK(am_has(rep, "\"status\": \"invalid\"") && am_has(rep, "\"stage\": \"check\"") &&
                am_has(rep, "\"reason\": \"input-undefined\""),
            "its report: %.500s", rep ? rep : "(none)");
    oc_free(rep);
    T_CHECK(oc_model_opset(m, "") == 13, "left as it was, still usable");
    rep = NULL;
    T_CHECK(oc_check_report(m, &rep) == -1, "check refuses it");
    T_CHECK(am_has(rep, "\"command\": \"check\"") && am_has(rep, "\"rule\": \"input-undefined\"") &&
                am_has(rep, "'ghost'") && am_has(rep, "\"errors_total\": 1"),
            "the check report: %.500s", rep ? rep : "(none)");
    T_CHECK(am_has(oc_error(), "input-undefined"), "oc_error is the finding: %s", oc_error());
    oc_free(rep);
    oc_model_free(m);

    m = am_from_ir(one_node(13, "Relu", OC_FLOAT, "x"));
    rep = NULL;
    T_CHECK(oc_check_report(m, &rep) == 0 && am_has(rep, "\"status\": \"ok\"") &&
                am_has(rep, "\"errors\": []"), "a valid model: %.300s", rep ? rep : "(none)");
    oc_free(rep);
    T_CHECK(oc_check_report(m, NULL) == -1, "NULL report");
    oc_model_free(m);
}

/* info: the model's facts; targets: every opset, the model unchanged. */
static void test_info_targets(void)
{
    oc_model *m = am_from_ir(one_node(13, "Neg", OC_INT64, "x"));
    char *rep = NULL;
    T_CHECK(oc_info_report(m, &rep) == 0, "info: %s", oc_error());
    T_CHECK(am_has(rep, "\"path\": \"memory\"") && am_has(rep, "\"Neg\": 1") &&
                am_has(rep, "\"ir_version\": 8") && am_has(rep, "\"elem_type\": \"INT64\""),
            "the info report: %.400s", rep ? rep : "(none)");
    oc_free(rep);
    rep = NULL;
    T_CHECK(oc_targets_report(m, &rep) == 0, "targets: %s", oc_error());
    /* Neg takes int64 from version 6: opsets 1..5 refuse, 6 on convert */
    T_CHECK(am_has(rep, "{\"opset\": 5, \"status\": \"refused\"") &&
                am_has(rep, "{\"opset\": 6, \"status\": \"ok\"") &&
                am_has(rep, "\"ai.onnx.ml\": null"),
            "the targets report: %.900s", rep ? rep : "(none)");
    oc_free(rep);
    T_CHECK(oc_model_opset(m, "") == 13 && oc_model_node_count(m) == 1,
            "targets changed nothing");
    oc_model_free(m);
}

/* --verify and targets of a model whose weights are in a side file: the
 * copy they load finds it beside the model's file. */
static void test_external_data(void)
{
    IrModel *ir;
    IrError err;
    if (load_model_file(CNN, NULL, &ir, &err) < 0)
        die(err.msg);
    char path[400], side[400];
    snprintf(path, sizeof path, "%s/ext.onnx", tmpdir);
    snprintf(side, sizeof side, "%s/w.bin", tmpdir);
    SaveOptions so = {.external_file = "w.bin", .external_threshold = 16};
    if (save_model_file(ir, path, &so, &err) < 0)
        die(err.msg);
    ir_model_free(ir);
    oc_model *m = am_load(path);
    const char *args[] = {"--opset", "11", "--verify"};
    char *rep = NULL;
    T_CHECK(oc_run_command(m, "convert", args, 3, &rep) == 0, "verify: %s", oc_error());
    T_CHECK(am_has(rep, "\"result\": \"equal\""), "verified equal: %.900s", rep ? rep : "(none)");
    oc_free(rep);
    rep = NULL;
    T_CHECK(oc_targets_report(m, &rep) == 0 && am_has(rep, "{\"opset\": 11, \"status\": \"ok\""),
            "targets of an external-data model: %.300s", rep ? rep : oc_error());
    oc_free(rep);
    oc_model_free(m);
    unlink(path);
    unlink(side);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_api_report.XXXXXX");
    if (!mkdtemp(tmpdir))
        die("mkdtemp");
    test_same_bytes_as_cli();
    test_usage();
    test_refusal();
    test_invalid();
    test_info_targets();
    test_external_data();
    T_CHECK(rmdir(tmpdir) == 0, "the tests left nothing behind in %s", tmpdir);
    return t_done("test_api_report");
}
