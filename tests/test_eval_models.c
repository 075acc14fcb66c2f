/* The evaluator on real models: ../shared/models (PyTorch's outputs) and
 * the backend's light, simple and pytorch-* folders (see eval_corpus.h). */
#include "eval_corpus.h"

int main(int argc, char **argv)
{
    return eval_corpus_main(argc, argv, 1);
}
