/*
 * milops_table.c - PROVISIONAL MIL op table (see milops.h): exactly the
 * ops the Core ML export emits, each with the first target whose opset
 * has it (checked against the folder of coremltools' op definitions that
 * first registers it: iOS15/ = 0, iOS16/ = 1, iOS17/ = 2, iOS18/ = 3).
 * Parameters are left empty here. The generated full table
 * (src/milops_gen.py) replaces this file; the code below the table only
 * implements milop_find and milop_since.
 */
#include <string.h>

#include "milops.h"

const MilOpSchema milop_table[] = {
    {"abs", 0, 0, NULL},
    {"acos", 0, 0, NULL},
    {"add", 0, 0, NULL},
    {"asin", 0, 0, NULL},
    {"atan", 0, 0, NULL},
    {"atanh", 0, 0, NULL},
    {"avg_pool", 0, 0, NULL},
    {"batch_norm", 0, 0, NULL},
    {"cast", 0, 0, NULL},
    {"ceil", 0, 0, NULL},
    {"clip", 0, 0, NULL},
    {"concat", 0, 0, NULL},
    {"const", 0, 0, NULL},
    {"cond", 0, 0, NULL},
    {"conv", 0, 0, NULL},
    {"conv_transpose", 0, 0, NULL},
    {"cos", 0, 0, NULL},
    {"cosh", 0, 0, NULL},
    {"cumsum", 0, 0, NULL},
    {"dequantize", 2, 0, NULL},
    {"elu", 0, 0, NULL},
    {"equal", 0, 0, NULL},
    {"erf", 0, 0, NULL},
    {"exp", 0, 0, NULL},
    {"expand_dims", 0, 0, NULL},
    {"fill", 0, 0, NULL},
    {"floor", 0, 0, NULL},
    {"gather", 0, 0, NULL},
    {"gather_along_axis", 0, 0, NULL},
    {"gather_nd", 0, 0, NULL},
    {"greater", 0, 0, NULL},
    {"greater_equal", 0, 0, NULL},
    {"identity", 0, 0, NULL},
    {"instance_norm", 0, 0, NULL},
    {"layer_norm", 0, 0, NULL},
    {"leaky_relu", 0, 0, NULL},
    {"less", 0, 0, NULL},
    {"less_equal", 0, 0, NULL},
    {"linear", 0, 0, NULL},
    {"log", 0, 0, NULL},
    {"logical_and", 0, 0, NULL},
    {"logical_not", 0, 0, NULL},
    {"logical_or", 0, 0, NULL},
    {"logical_xor", 0, 0, NULL},
    {"lstm", 0, 0, NULL},
    {"matmul", 0, 0, NULL},
    {"max_pool", 0, 0, NULL},
    {"maximum", 0, 0, NULL},
    {"minimum", 0, 0, NULL},
    {"mul", 0, 0, NULL},
    {"pad", 0, 0, NULL},
    {"pow", 0, 0, NULL},
    {"quantize", 2, 0, NULL},
    {"range_1d", 0, 0, NULL},
    {"real_div", 0, 0, NULL},
    {"reduce_argmax", 0, 0, NULL},
    {"reduce_argmin", 0, 0, NULL},
    {"reduce_l1_norm", 0, 0, NULL},
    {"reduce_l2_norm", 0, 0, NULL},
    {"reduce_log_sum", 0, 0, NULL},
    {"reduce_log_sum_exp", 0, 0, NULL},
    {"reduce_max", 0, 0, NULL},
    {"reduce_mean", 0, 0, NULL},
    {"reduce_min", 0, 0, NULL},
    {"reduce_prod", 0, 0, NULL},
    {"reduce_sum", 0, 0, NULL},
    {"reduce_sum_square", 0, 0, NULL},
    {"relu", 0, 0, NULL},
    {"reshape", 0, 0, NULL},
    {"rsqrt", 0, 0, NULL},
    {"select", 0, 0, NULL},
    {"shape", 0, 0, NULL},
    {"sigmoid", 0, 0, NULL},
    {"sigmoid_hard", 0, 0, NULL},
    {"sign", 0, 0, NULL},
    {"sin", 0, 0, NULL},
    {"sinh", 0, 0, NULL},
    {"slice_by_index", 0, 0, NULL},
    {"softmax", 0, 0, NULL},
    {"softplus", 0, 0, NULL},
    {"softsign", 0, 0, NULL},
    {"split", 0, 0, NULL},
    {"sqrt", 0, 0, NULL},
    {"squeeze", 0, 0, NULL},
    {"sub", 0, 0, NULL},
    {"tan", 0, 0, NULL},
    {"tanh", 0, 0, NULL},
    {"thresholded_relu", 0, 0, NULL},
    {"tile", 0, 0, NULL},
    {"topk", 0, 0, NULL},
    {"transpose", 0, 0, NULL},
};
const size_t milop_table_n = sizeof milop_table / sizeof milop_table[0];

const MilOpSchema *milop_find(const char *name, int target)
{
    const MilOpSchema *best = NULL;
    for (size_t i = 0; name && i < milop_table_n; i++)
        if (!strcmp(milop_table[i].name, name) && milop_table[i].since <= target &&
            (!best || milop_table[i].since > best->since))
            best = &milop_table[i];
    return best;
}

int milop_since(const char *name)
{
    int since = -1;
    for (size_t i = 0; name && i < milop_table_n; i++)
        if (!strcmp(milop_table[i].name, name) && (since < 0 || milop_table[i].since < since))
            since = milop_table[i].since;
    return since;
}
