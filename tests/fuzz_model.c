/*
 * fuzz_model.c - the libFuzzer entry point (`make fuzz`); the work is in
 * fuzz_target.h, shared with the crasher regression test.
 */
#include "fuzz_target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_run(data, size);
}
