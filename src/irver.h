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

#include "ir.h"

/* The newest IR version this build knows (proto/onnx.proto is IR 13; IR
 * 14, which opset 28 needs, adds no field). The checker refuses newer
 * ones; the library reports it (oc_newest_ir_version). */
#define IRV_NEWEST 14

/* The IR version that introduced element type `dtype` (TensorProto code). */
int irv_dtype_ir(int32_t dtype);
/* Returns 0 when m holds only what IR version `ir` has, else -1 with err
 * naming the field and where it is. `ir_from` is the model's version
 * before conversion: when `ir` is older, fields the reader did not know
 * (kept as unknown) may belong to a version between the two, so they are
 * refused too. */
int irv_check(const IrModel *m, int64_t ir, int64_t ir_from, IrError *err);
/* For ir < 4: adds every initializer of the main graph that is not a graph
 * input to the inputs (with its tensor type), as IR 3 requires. */
void irv_fit(IrModel *m, int64_t ir);

#endif
