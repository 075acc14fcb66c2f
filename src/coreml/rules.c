/*
 * rules.c - the family rule tables of the Core ML export and import, and
 * how an op finds its rule (prefix cm_).
 */
#include "coreml/rules.h"

#include <string.h>

/* The families, in the order of src/schema/opschema_flags.txt's sections. */
const CmFamily *const cm_families[] = {
    &cm_family_activation, &cm_family_control, &cm_family_einsum, &cm_family_elementwise,
    &cm_family_index, &cm_family_nn, &cm_family_norm, &cm_family_quant, &cm_family_reduce,
    &cm_family_resize, &cm_family_rnn, &cm_family_sample, &cm_family_shape, &cm_family_tensor,
};
#define CM_N_FAMILIES (sizeof cm_families / sizeof cm_families[0])
const size_t cm_families_n = CM_N_FAMILIES;

CmLowerFn cm_lower_rule(const char *op)
{
    for (size_t f = 0; f < CM_N_FAMILIES; f++)
        for (size_t i = 0; i < cm_families[f]->n_lower; i++)
            if (!strcmp(cm_families[f]->lower[i].op, op))
                return cm_families[f]->lower[i].fn;
    return NULL;
}

bool cm_lowers(const char *op)
{
    return op && cm_lower_rule(op) != NULL;
}

CmRaiseFn cm_raise_rule(const char *op)
{
    for (size_t f = 0; f < CM_N_FAMILIES; f++)
        for (size_t i = 0; i < cm_families[f]->n_raise; i++)
            if (!strcmp(cm_families[f]->raise[i].op, op))
                return cm_families[f]->raise[i].fn;
    return NULL;
}

const CmMap *cm_map_onnx(const CmMap *t, size_t n, const char *onnx)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].onnx, onnx))
            return &t[i];
    return NULL;
}

const CmMap *cm_map_mil(const CmMap *t, size_t n, const char *mil)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].mil, mil))
            return &t[i];
    return NULL;
}
