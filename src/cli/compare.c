/*
 * compare.c - `onnx-convert compare A.onnx B.onnx`: the verdict and the
 * figures on stdout, the difference (and where it starts) on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "driver/compare.h"

static void cli_compare_text(const char *a, const char *b, const CmpReport *r)
{
    if (r->result == -1) {
        fprintf(stderr, "onnx-convert: %s\n", r->msg);
        return;
    }
    printf("%s against %s: %s on %s inputs", b, a,
           r->result == 1 ? "equal" : "differs", r->case_inputs ? "the folder's" : "random");
    if (r->dim_used > 0)
        printf(" (open dims at %lld)", (long long)r->dim_used);
    printf("\n");
    for (size_t i = 0; i < r->n_figs; i++)
        cli_figure_text(stdout, &r->figs[i]);
    if (r->result == -2)   /* the message names B */
        fprintf(stderr, "onnx-convert: %s\n", r->msg);
}

int cli_compare(int argc, char **argv)
{
    const char *path[2] = {NULL, NULL};
    CmpOptions o = {0};
    bool json = false;
    char why[300];
    for (size_t i = 2; i < (size_t)argc; i++) {
        int got = cmp_parse_arg(&o, (const char *const *)argv, &i, (size_t)argc, why,
                                sizeof why);
        if (got < 0)
            return cli_usage("compare", why);
        if (got)
            continue;
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("compare", "compare takes A.onnx B.onnx [--inputs DIR]");
        else if (!path[0])
            path[0] = argv[i];
        else if (!path[1])
            path[1] = argv[i];
        else
            return cli_usage("compare", "compare takes two models");
    }
    if (!path[1])
        return cli_usage("compare", "compare needs two models: A.onnx B.onnx");
    CmpReport r;
    cmp_models(path[0], path[1], &o, &r);
    if (json) {
        Js j;
        js_init(&j, stdout, 0);
        cmp_json(&j, path[0], path[1], &r);
        fputc('\n', stdout);
    } else {
        cli_compare_text(path[0], path[1], &r);
    }
    int rc = r.result == 1 ? CLI_OK : CLI_FAIL;
    cmp_report_free(&r);
    return rc;
}
