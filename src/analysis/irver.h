/*
 * irver.h - what each IR version may hold (prefix irv_).
 *
 * A model written with an older ir_version must parse under that
 * version's onnx.proto with nothing unknown in it. irv_check finds the
 * first field (or element type, or type kind) that the version lacks;
 * irv_fit makes the changes that keep meaning (IR < 4 lists every
 * initializer as a graph input, as that version required).
 */
#ifndef OC_IRVER_H
#define OC_IRVER_H

#include <stdint.h>

#include "ir/ir.h"

/* The newest IR version this build knows (proto/onnx.proto is IR 13; IR
 * 14, which opset 28 needs, adds no field). The checker refuses newer
 * ones; the library reports it (oc_newest_ir_version). */
#define IRV_NEWEST 14

/* The IR version that introduced element type `dtype` (TensorProto code). */
int irv_dtype_ir(int32_t dtype);
/* The element type an attribute of n names when it is one of the ops'
 * data-type attributes (Cast.to, EyeLike.dtype, ...), else -1. */
int32_t irv_attr_dtype(const IrNode *n, const IrAttr *a);

/* The fields that carry no semantics: annotations a tool may drop without
 * changing what the model computes (proto/onnx.proto and IR.md). Each is
 * (id, the field as docs/converter.md and reports name it, the IR that introduced it).
 *   metadata_props of graph, node, value_info, function, tensor: free
 *     key/value annotations ("pkg.torch.onnx.stack_trace", ...);
 *   FunctionProto.value_info: type hints for a body's values, which
 *     inference recomputes (as a graph's value_info);
 *   GraphProto.quantization_annotation: describes how a tensor was
 *     quantized; the graph's nodes compute with explicit scales anyway;
 *   NodeProto.device_configurations, ModelProto.configuration: how to
 *     shard the model over devices, not what it computes.
 * Not annotations (content, kept or refused): functions, overloads, their
 * attribute defaults, training info, sparse tensors, types, doc_string
 * (IR 1: no version lacks it), ModelProto.metadata_props (IR 1 too). */
#define IRV_ANNOTATIONS(X)                                        \
    X(IRV_A_GRAPH_META, "GraphProto.metadata_props", 10)          \
    X(IRV_A_NODE_META, "NodeProto.metadata_props", 10)            \
    X(IRV_A_VI_META, "ValueInfoProto.metadata_props", 10)         \
    X(IRV_A_FN_META, "FunctionProto.metadata_props", 10)          \
    X(IRV_A_TENSOR_META, "TensorProto.metadata_props", 10)        \
    X(IRV_A_FN_VI, "FunctionProto.value_info", 10)                \
    X(IRV_A_QANN, "GraphProto.quantization_annotation", 5)        \
    X(IRV_A_NODE_DEVCFG, "NodeProto.device_configurations", 11)   \
    X(IRV_A_CONFIG, "ModelProto.configuration", 11)

#define IRV_A_ENUM(id, name, ir) id,
typedef enum { IRV_ANNOTATIONS(IRV_A_ENUM) IRV_N_ANN } IrvAnn;
#undef IRV_A_ENUM
/* The field names and IR versions, indexed by IrvAnn. */
extern const char *const irv_ann_name[IRV_N_ANN];
extern const int irv_ann_ir[IRV_N_ANN];

/* The lowest IR versions that hold m: `content` for everything but the
 * annotations, `annotations` for those (3 when nothing needs more).
 * Inferred value types count as content. */
typedef struct IrvNeed {
    int content, annotations;
} IrvNeed;
IrvNeed irv_need(const IrModel *m);
/* Drops every annotation that IR `ir` cannot hold, in every graph,
 * subgraph, function and training graph; counts[id] += the elements that
 * lost one. */
void irv_strip(IrModel *m, int64_t ir, size_t counts[IRV_N_ANN]);
/* Returns 0 when m holds only what IR version `ir` has, else -1 with err
 * naming the field and where it is: fields, declared and inferred types
 * (run inference first to check what the nodes compute, e.g. a CastLike to
 * float8) and the data-type attributes. `ir_from` is the model's version
 * before conversion: when `ir` is older, fields the reader did not know
 * (kept as unknown) may belong to a version between the two, so they are
 * refused too. */
int irv_check(const IrModel *m, int64_t ir, int64_t ir_from, IrError *err);
/* For ir < 4: adds every initializer of the main graph that is not a graph
 * input to the inputs (with its tensor type), as IR 3 requires. */
void irv_fit(IrModel *m, int64_t ir);

#endif
