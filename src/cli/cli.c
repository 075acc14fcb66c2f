/*
 * cli.c - the helpers every file of the command line uses (prefix cli_;
 * declared in cli.h): option values, the end of a model, reports and
 * failures as the command line prints them. onnx-convert.c's main and
 * the commands call these; these call nothing of theirs.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"

bool cli_parse_size(const char *s, size_t *out)
{
    return job_parse_size(s, out);
}

bool cli_parse_bytes(const char *s, uint64_t *out)
{
    return job_parse_bytes(s, out);
}

int cli_limit_opt(EvOptions *e, char **argv, int *i, int argc)
{
    size_t k = (size_t)*i;
    char why[200];
    int got = job_parse_limit(e, (const char *const *)argv, &k, (size_t)argc, why, sizeof why);
    if (got < 0)
        fprintf(stderr, "onnx-convert: %s\n", why);
    *i = (int)k;
    return got;
}

bool cli_parse_jobs(const char *s, int *out)
{
    size_t v;
    if (!cli_parse_size(s, &v) || v == 0 || v > CLI_MAX_JOBS)
        return false;
    *out = (int)v;
    return true;
}

/* Freeing a 100k-node model piece by piece takes a fifth of the whole
 * run; sanitized builds still free it so that the leak checker sees
 * everything. */
void cli_drop_model(IrModel *m)
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

void cli_print_json(FILE *f, const JobReport *r)
{
    Js j;
    js_init(&j, f, 0);
    job_json(&j, r);
    fputc('\n', f);
}

/* Messages of the loader and the checker name the file; the converter's
 * and the evaluator's name the node, so batch output adds the path. */
void cli_print_failure(const char *path, const char *msg)
{
    size_t pl = strlen(path);
    if (!strncmp(msg, path, pl) && msg[pl] == ':')
        fprintf(stderr, "onnx-convert: %s\n", msg);
    else
        fprintf(stderr, "onnx-convert: %s: %s\n", path, msg);
}
