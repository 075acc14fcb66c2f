/*
 * milcheck.h - validation of a Core ML ML Program in memory (prefix
 * mck_) against the MIL operator table (src/coreml/milops.h), as src/analysis/check.h
 * validates an ONNX model against the ONNX operator table. The export
 * runs it on what it built before writing a package; the import runs it
 * on what a package held before raising it to ONNX.
 */
#ifndef OC_MILCHECK_H
#define OC_MILCHECK_H

#include "ir/ir.h"
#include "coreml/mil.h"

/* The deepest nesting of blocks (cond, while_loop) accepted: deeper
 * programs are refused rather than walked with an unbounded stack. */
#define MCK_MAX_DEPTH 64

/* 0 when m is a valid program: its specificationVersion is a target's
 * and no function declares a newer opset; every op exists at its
 * function's opset with every required parameter bound, no unknown
 * parameter, one argument for a non-variadic one; const-required
 * parameters bound to an immediate value or a constant value (as
 * coremltools judges one: the output of a const or constexpr_ op, or of
 * an op whose arguments are all constant); cond and while_loop holding
 * the blocks MIL gives them, other ops none; every
 * value defined before its readers and once in its scope (nested blocks
 * see the values of the blocks around them and may not redefine them;
 * sibling blocks may reuse names, as a while_loop's cond and body share
 * their input names); every function input a tensor of rank 1 or more
 * (Apple's loader refuses scalars there); every block output defined; an argument's
 * dtype, where known, within its parameter's, and the same as the other
 * arguments of its type variable; value and op names MIL identifiers
 * ([A-Za-z_][A-Za-z0-9_]*, no type name or keyword: coremltools' writer
 * renames any other); when the model description is filled in, its
 * inputs and outputs those of function main. Else -1 with one line in
 * err naming function, op (type and name), parameter and rule. */
int mck_model(const MilModel *m, IrError *err);

/* Whether name is a value or op name MIL accepts: [A-Za-z_][A-Za-z0-9_]*,
 * neither a keyword nor a dtype name (the export renames any other). */
bool mck_identifier(const char *name);

#endif
