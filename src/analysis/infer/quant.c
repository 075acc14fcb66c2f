/*
 * infer/quant.c - inference of the quantization ops: QuantizeLinear
 * (output_dtype), DequantizeLinear, DynamicQuantizeLinear, and the
 * integer and quantized forms of Conv and MatMul (ConvInteger,
 * QLinearConv, MatMulInteger, QLinearMatMul), which nn.c's Conv and
 * MatMul functions infer with the inputs that hold X and W.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* QLinearConv: x is input 0, w input 3. */
static int inf_qlinearconv(InfCtx *c) { return inf_conv_at(c, 0, 3); }

/* QLinearMatMul: a is input 0, b input 3. */
static int inf_qlinearmatmul(InfCtx *c) { return inf_matmul_at(c, 0, 3); }

/* QuantizeLinear: y like x; its type is y_zero_point's, else (opset 21+)
 * output_dtype's, else uint8. */
static int inf_quantize(InfCtx *c)
{
    int64_t od = c->since >= 21 ? inf_attr_i(c, "output_dtype") : 0;
    int32_t zp = inf_has_in(c, 2) ? inf_in_elem(c, 2) : 0;
    if (od != 0 && (od < 0 || od > INT32_MAX || !ir_dtype_name((int32_t)od)))
        return inf_fail(c, "attribute", "output_dtype %lld is not a data type",
                        (long long)od);
    if (od != 0 && zp != 0 && od != zp)
        return inf_fail(c, "type-constraint", "output_dtype %lld differs from y_zero_point's "
                        "type %d", (long long)od, zp);
    if (!inf_has_in(c, 2))
        inf_out_elem(c, 0, od != 0 ? (int32_t)od : IR_UINT8);
    else if (!zp && od != 0)
        inf_out_elem(c, 0, (int32_t)od);
    return inf_same_as_input(c, 0);
}

/* DequantizeLinear: y like x; float before opset 19, then the scale's
 * type, and from opset 23 output_dtype when set. */
static int inf_dequantize(InfCtx *c)
{
    if (c->since >= 23) {
        int64_t od = inf_attr_i(c, "output_dtype");
        if (od != 0 && (od < 0 || od > INT32_MAX || !ir_dtype_name((int32_t)od)))
            return inf_fail(c, "attribute", "output_dtype %lld is not a data type",
                            (long long)od);
        int32_t e = od != 0 ? (int32_t)od : inf_in_elem(c, 1);
        if (e)
            inf_out_elem(c, 0, e);
    }
    return inf_same_as_input(c, 0);
}

/* DynamicQuantizeLinear: y like x; y_scale and y_zero_point scalars. */
static int inf_dynquantize(InfCtx *c)
{
    inf_same_as_input(c, 0);
    inf_out_shape(c, 1, 0);
    inf_out_shape(c, 2, 0);
    return 0;
}

const InfOp inf_ops_quant[] = {
    {"", "ConvInteger", inf_conv},
    {"", "QLinearConv", inf_qlinearconv},
    {"", "MatMulInteger", inf_matmul},
    {"", "QLinearMatMul", inf_qlinearmatmul},
    {"", "QuantizeLinear", inf_quantize},
    {"", "DequantizeLinear", inf_dequantize},
    {"", "DynamicQuantizeLinear", inf_dynquantize},
    {NULL, NULL, NULL}};
