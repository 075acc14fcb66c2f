/*
 * milops.h - the MIL operator table (prefix milop_): every Core ML ML
 * Program op with the first target that has it and its parameters, per
 * version, as src/schema/opschema.h is for ONNX. Generated into
 * src/coreml/milops_table.c by src/coreml/milops_gen.py from coremltools' MIL op
 * definitions (../shared/tools/coremltools/src/coremltools/converters/mil/
 * mil/ops/defs/iOS15..), committed, so a build needs nothing of ../shared.
 *
 * Targets are indexes into mil_targets (mil.h): 0 = iOS15 (CoreML5), ...
 */
#ifndef OC_MILOPS_H
#define OC_MILOPS_H

#include <stdbool.h>
#include <stddef.h>

/* One input parameter of an op version. `types` lists the dtypes it takes
 * as MIL's names separated by '|' ("fp16|fp32"), or a type variable's
 * domain; NULL: any. */
typedef struct MilParam {
    const char *name;
    const char *types;
    bool optional;
    bool is_const;          /* must be a compile-time constant */
    bool variadic;          /* takes several arguments (concat's values) */
    const char *tvar;       /* the type variable ("T") whose dtype every
                               parameter naming it shares; NULL when the
                               domain is a fixed type */
} MilParam;

typedef struct MilOpSchema {
    const char *name;       /* "conv" */
    int since;              /* first target index of this version */
    size_t n_params;
    const MilParam *params;
} MilOpSchema;

extern const MilOpSchema milop_table[];
extern const size_t milop_table_n;

/* The version of op `name` in effect at target index `target`, or NULL
 * when the op does not exist (yet) there. */
const MilOpSchema *milop_find(const char *name, int target);
/* The first target index that has op `name`, or -1 for an unknown op. */
int milop_since(const char *name);

#endif
