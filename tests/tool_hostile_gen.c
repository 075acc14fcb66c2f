/*
 * tool_hostile_gen.c - writes the hostile models of tests/hostile_models.h
 * to a folder, for tests/hostile_models.sh.
 *
 *   tool_hostile_gen OUT_DIR
 *
 * writes OUT_DIR/NAME.onnx for every case and prints one line per file:
 * "NAME RULE" (RULE is "load" when the loader must refuse it). Nothing is
 * committed: the files are built by the project on every run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hostile_models.h"

/* Writes buf to path; 0 or -1. */
static int gen_write(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(buf, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tool_hostile_gen OUT_DIR\n");
        return 2;
    }
    for (size_t i = 0; i < HM_N_CASES; i++) {
        const HmCase *c = &hm_cases[i];
        uint8_t *buf = NULL;
        size_t len = 0;
        IrError err;
        char path[4096];
        if (hm_bytes(c, &buf, &len, &err)) {
            fprintf(stderr, "tool_hostile_gen: %s: %s\n", c->name, err.msg);
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s.onnx", argv[1], c->name);
        if (gen_write(path, buf, len)) {
            perror(path);
            free(buf);
            return 1;
        }
        free(buf);
        printf("%s %s\n", c->name, c->rule ? c->rule : "load");
    }
    return 0;
}
