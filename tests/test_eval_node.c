/* The evaluator on the 1802 ONNX backend node tests (see eval_corpus.h). */
#include "eval_corpus.h"

int main(int argc, char **argv)
{
    return eval_corpus_main(argc, argv, 0);
}
