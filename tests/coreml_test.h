/*
 * coreml_test.h - what the Core ML tests read of an exported program:
 * an op of a type in function main's block, and the value bound to a
 * parameter (prefix cmt_).
 */
#ifndef OC_COREML_TEST_H
#define OC_COREML_TEST_H

#include <string.h>

#include "coreml/mil.h"

/* The nth op (from 0) of `type` in main's block, or NULL. */
static inline const MilOp *cmt_find_op(const MilModel *mm, const char *type, size_t nth)
{
    const MilBlock *b = mm->fn[0]->block;
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, type) && !nth--)
            return b->ops[i];
    return NULL;
}

/* The value bound to param: an immediate, or a const op's of main's
 * block; NULL otherwise. */
static inline const MilTensor *cmt_param_of(const MilModel *mm, const MilOp *op,
                                            const char *param)
{
    const MilInput *in = op ? mil_op_input(op, param) : NULL;
    if (!in || !in->n_args)
        return NULL;
    if (in->args[0].value)
        return in->args[0].value;
    const MilBlock *b = mm->fn[0]->block;
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, "const") && !strcmp(b->ops[i]->out[0].name, in->args[0].name))
            return b->ops[i]->val;
    return NULL;
}

#endif
