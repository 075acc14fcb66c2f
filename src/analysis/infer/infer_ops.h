/*
 * infer/infer_ops.h - private to src/analysis/infer/: what op functions of several
 * families share. The helpers are defined in common.c (each with its
 * comment there); Conv's and MatMul's functions stay in nn.c and are
 * borrowed by quant.c, whose ConvInteger/QLinearConv and
 * MatMulInteger/QLinearMatMul have the same shapes.
 */
#ifndef OC_INFER_OPS_H
#define OC_INFER_OPS_H

#include "analysis/infer.h"

/* Longest list of elements tracked as a symval (as the driver does). */
#define INF_T_MAX_SYMVAL 64
/* Largest rank built from a length read from the file (a declared dim,
 * a constant's length): larger means a malformed file, left unknown. */
#define INF_T_MAX_RANK 4096

/* common.c: types of control flow and sequence outputs */
const IrType *inf_known(const IrType *t);
void inf_type_clean(IrType *t);
IrType *inf_type_dup(const IrType *t);
void inf_type_strip(IrType *t);
IrType *inf_wrap(IrTypeKind kind, IrType *elem);
IrShape *inf_shape_union(const IrShape *a, const IrShape *b);
int inf_type_union(const IrType *a, const IrType *b, IrType **out);
const IrShape *inf_tshape(const IrType *t);
IrShape *inf_shape_drop(const IrShape *s, size_t at);
IrShape *inf_shape_insert(const IrShape *s, size_t at, const IrDim *d);
const IrNode *inf_in_producer(const InfCtx *c, size_t i, const char *op);

/* common.c: op functions of ops whose output is shaped like an input */
int inf_unary(InfCtx *c);
int inf_same(InfCtx *c);
int inf_axis_same(InfCtx *c);
int inf_like_input0(InfCtx *c);

/* common.c: dims, ranks and axes */
void inf_dim_div(IrDim *dst, const IrDim *a, int64_t b);
void inf_out_copy(InfCtx *c, size_t o, const IrShape *s);
int inf_need_rank(InfCtx *c, size_t i, int want, const char *what);
int inf_check_axis(InfCtx *c, size_t i);
IrShape *inf_sub_shape(const IrShape *s, size_t from, size_t to);
void inf_scalar_in_dim(const InfCtx *c, size_t i, IrDim *d);
int32_t inf_dtype_attr(InfCtx *c, const char *name);

/* common.c: shape tensors */
void inf_t_out_dims(InfCtx *c, size_t o, const IrShape *s);
IrShape *inf_t_shape_of_ints(const int64_t *v, size_t n);
IrShape *inf_t_in_dims(const InfCtx *c, size_t i);
int64_t inf_t_in_len(const InfCtx *c, size_t i);
const IrShape *inf_t_symval(const InfCtx *c, size_t i);
int inf_t_ints(const InfCtx *c, bool from_attr, const char *attr,
               size_t in, int64_t **v, size_t *n);
int inf_t_axes(InfCtx *c, const char *what, const int64_t *v, size_t n,
               int rank, int extra, bool no_dups, int *out);
bool inf_t_dtype_ok(int64_t d);
int inf_t_merge_dim(IrDim *m, const IrDim *x);

/* nn.c: Conv and MatMul, with the inputs that hold X and W (A and B) */
int inf_conv_at(InfCtx *c, size_t xi, size_t wi);
/* elementwise.c: broadcasts every present input into output 0 */
int inf_bcast_all(InfCtx *c);
int inf_conv(InfCtx *c);
int inf_matmul_at(InfCtx *c, size_t ai, size_t bi);
int inf_matmul(InfCtx *c);

#endif
