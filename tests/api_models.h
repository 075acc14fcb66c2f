/*
 * api_models.h - models handed to the C library in the tests (prefix am_).
 *
 * The file that includes this defines `static void die(const char *what)`
 * first: it ends a test whose set-up failed (exit 2).
 */
#ifndef OC_API_MODELS_H
#define OC_API_MODELS_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnxconvert.h"
#include "io/save.h"

/* Hands an IR model to the library as bytes (and frees it). */
static inline oc_model *am_from_ir(IrModel *ir)
{
    uint8_t *buf;
    size_t len;
    IrError err;
    if (save_model_buffer(ir, &buf, &len, &err) < 0)
        die(err.msg);
    ir_model_free(ir);
    oc_model *m = NULL;
    if (oc_load_memory(buf, len, &m) < 0)
        die(oc_error());
    free(buf);
    return m;
}

/* The model file at path, loaded by the library. */
static inline oc_model *am_load(const char *path)
{
    oc_model *m = NULL;
    if (oc_load_file(path, &m) < 0)
        die(oc_error());
    return m;
}

/* Whether s holds part (false for a NULL s). */
static inline bool am_has(const char *s, const char *part)
{
    return s && strstr(s, part) != NULL;
}

#endif
