/*
 * tool_mlpackage_gen - writes the hand-built programs of mlp_models.h as
 * DIR/NAME.mlpackage (for tests/coreml_ct.sh, which has Apple's loader
 * judge them), or reads a package and prints a one-line summary.
 *
 *   tool_mlpackage_gen write DIR
 *   tool_mlpackage_gen read PKG      "PKG: spec N, functions main[CoreML7], N ops, N consts"
 *   tool_mlpackage_gen copy IN OUT   reads IN and writes it again as OUT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_models.h"
#include "coreml/mlpackage.h"

static size_t count_ops(const MilBlock *b, size_t *consts)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_ops; i++) {
        n++;
        *consts += !strcmp(b->ops[i]->type, "const");
        for (size_t k = 0; k < b->ops[i]->n_blocks; k++)
            n += count_ops(b->ops[i]->blocks[k], consts);
    }
    return n;
}

static int cmd_read(const char *path)
{
    MilModel *m;
    IrError err;
    if (mlp_read(path, &m, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("%s: spec %d, functions", path, m->spec_version);
    size_t ops = 0, consts = 0;
    for (size_t i = 0; i < m->n_fn; i++) {
        printf(" %s[%s]", m->fn[i]->name, m->fn[i]->opset);
        ops += count_ops(m->fn[i]->block, &consts);
    }
    printf(", %zu ops, %zu consts, %zu inputs, %zu outputs\n", ops, consts, m->n_in, m->n_out);
    mil_model_free(m);
    return 0;
}

static int cmd_copy(const char *in, const char *out)
{
    MilModel *m = NULL;
    IrError err;
    int rc = mlp_read(in, &m, &err) || mlp_write(m, out, NULL, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    mil_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "read"))
        return cmd_read(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "copy"))
        return cmd_copy(argv[2], argv[3]);
    if (argc != 3 || strcmp(argv[1], "write")) {
        fprintf(stderr, "usage: tool_mlpackage_gen write DIR | read PKG | copy IN OUT\n");
        return 2;
    }
    for (size_t i = 0; i < MM_N_CASES; i++) {
        MilModel *m = mm_cases[i].build();
        size_t n = strlen(argv[2]) + strlen(mm_cases[i].name) + 16;
        char *path = malloc(n);
        snprintf(path, n, "%s/%s.mlpackage", argv[2], mm_cases[i].name);
        IrError err;
        int rc = mlp_write(m, path, NULL, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.msg);
        else
            printf("%s\n", path);
        free(path);
        mil_model_free(m);
        if (rc)
            return 1;
    }
    return 0;
}
