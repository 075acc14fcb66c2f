/*
 * tool_coreml_export.c - until the command line has `--to coreml`: loads
 * an ONNX model, converts it to CM_ONNX_OPSET, exports it to Core ML at
 * the lowest target that holds it and writes the package.
 *   tool_coreml_export IN.onnx OUT.mlpackage
 * Prints "target iOSNN (forced by MIL op OP)"; exit 1 with one line on
 * stderr when a step refuses.
 */
#include <stdio.h>

#include "convert.h"
#include "coreml.h"
#include "infer.h"
#include "load.h"
#include "mlpackage.h"

static int tce_fail(const char *step, const char *path, const char *msg)
{
    fprintf(stderr, "%s: %s: %s\n", path, step, msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tool_coreml_export IN.onnx OUT.mlpackage\n");
        return 2;
    }
    IrModel *m = NULL;
    IrError err;
    inf_init();
    if (load_model_file(argv[1], NULL, &m, &err) < 0)
        return tce_fail("load", argv[1], err.msg);
    CvOptions co = {.opset = CM_ONNX_OPSET};
    CvReport cr = {0};
    MilModel *mm = NULL;
    CmReport r;
    CmOptions o = {.target = -1};
    int rc = 0;
    if (cv_convert(m, &co, &cr, &err) < 0)
        rc = tce_fail("convert", argv[1], err.msg);
    else if (cm_export(m, &o, &mm, &r, &err) < 0)
        rc = tce_fail("export", argv[1], err.msg);
    else if (mlp_write(mm, argv[2], NULL, &err) < 0)
        rc = tce_fail("write", argv[2], err.msg);
    else
        printf("target %s (forced by MIL op %s)\n", mil_targets[r.target].name, r.forced_op);
    cv_report_free(&cr);
    mil_model_free(mm);
    ir_model_free(m);
    return rc;
}
