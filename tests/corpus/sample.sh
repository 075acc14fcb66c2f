#!/bin/sh
# make check's share of the real-model corpus (issue 33): tests/corpus/gen.py
# --sample exports the fixed sample (every family of model and every kind
# of file; kept in BUILD/corpus-sample between runs, only what is missing
# is exported again), then tests/corpus/check.py --sample runs every
# feature on it and prints "corpus: N passed, N failed", a refusal or
# failure passing only when tests/corpus/expected.txt lists it.
#
#   sh tests/corpus/sample.sh BUILD_DIR      (from the project root; after
#                                             tests/judges.sh, which says
#                                             where the judges are)
# Prints "corpus: skipped (no torch)" when Debian's python3 has no torch.
build=${1:-build}
py=/usr/bin/python3
if ! $py -c 'import torch, torchvision, onnx' >/dev/null 2>&1; then
    echo "corpus: skipped (no torch)"
    exit 0
fi
if [ ! -f tests/corpus/gen.py ]; then
    echo "corpus: skipped (no tests/corpus/gen.py in this tree)"
    exit 0
fi
out=$build/corpus-sample
if ! $py tests/corpus/gen.py "$out" --sample --jobs 2 >"$build/corpus-sample-gen.log" 2>&1; then
    tail -n 5 "$build/corpus-sample-gen.log"
    echo "corpus: 0 passed, 1 failed (gen.py --sample failed: $build/corpus-sample-gen.log)"
    exit 1
fi
exec $py tests/corpus/check.py "$build/onnx-convert" "$out" --sample --jobs 2 \
    --work "$build/corpus-sample-check" --json "$build/corpus-sample.json"
