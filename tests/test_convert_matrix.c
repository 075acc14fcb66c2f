/* The conversion matrix over the 1802 ONNX backend node tests (see
 * convert_matrix.h), judged at the backend's tolerances. Of the conversions
 * to targets 7..26 whose types exist at the target, 93% must be ok (issue
 * 20), and nothing may be wrong. */
#include "convert_matrix.h"

int main(int argc, char **argv)
{
    CmRun r = {.rtol = 1e-3, .atol = 1e-7, .xfail_name = "eval-node"};
    /* wherever the other data tests find the backend data (corpus.h) */
    const char *root = corpus_backend_root();
    char node[4096];
    snprintf(node, sizeof node, "%s/node", root ? root : "");
    return cm_main(&r, argc, argv, "test_convert_matrix", "node tests",
                   root ? node : NULL, 93.0);
}
