#!/bin/sh
# coreml_cmctl_ct.sh - Apple's loader judges the MIL ops the Loop and index
# lowerings emit (while_loop with cond inside, fill/expand_dims/concat for
# scan outputs, scatter_along_axis, scatter_nd, non_zero, one_hot,
# band_part, select masks, reduce_argmax, reduce_prod, reverse_sequence):
# every case of tests/coreml_cmctl_models.py that exports is written as a
# package by `onnx-convert convert -o X.mlpackage` and must pass ct_check.py.
#
# Usage: sh tests/coreml_cmctl_ct.sh PATH/TO/onnx-convert  (from the project root)
# Skipped when ../shared/tools/coremltools (or its setup) or /usr/bin/python3
# with onnx and numpy is absent. Ends with "coreml_cmctl_ct: N passed, N failed".
tool=$1
ct=${OC_CT_DIR:-../shared/tools/coremltools}
judge=$ct/ct_check.py
if [ -z "$tool" ] || [ ! -x "$tool" ]; then
    echo "usage: sh tests/coreml_cmctl_ct.sh PATH/TO/onnx-convert" >&2
    exit 2
fi
if [ ! -x "$judge" ] || ! "$ct/setup.sh" --no-selftest >/dev/null 2>&1; then
    echo "coreml_cmctl_ct: skipped (no coremltools judge)"
    exit 0
fi
TALLY=coreml_cmctl_ct
. "$(dirname "$0")/tally.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oc_cmctl_ct.XXXXXX") || exit 1
trap 'rm -rf "${tmp:?}"' EXIT
if ! /usr/bin/python3 tests/coreml_cmctl_models.py "$tmp/cases"; then
    echo "coreml_cmctl_ct: skipped (no onnx or numpy for /usr/bin/python3)"
    exit 0
fi
for dir in "$tmp"/cases/*/; do
    name=$(basename "$dir")
    [ -f "$dir/refuse" ] && continue
    if ! "$tool" convert "$dir/model.onnx" -o "$tmp/$name.mlpackage" >"$tmp/out" 2>&1; then
        bad "$name: export: $(tail -n 1 "$tmp/out")"
        continue
    fi
    if line=$("$judge" "$tmp/$name.mlpackage" 2>&1); then
        ok
        # each op the case is about is in the package Apple's loader read
        for op in $(cat "$dir/mil" 2>/dev/null); do
            case $line in
            *" $op:"*|*"($op:"*) ok ;;
            *) bad "$name: ct_check counted no '$op': $line" ;;
            esac
        done
    else
        bad "$name: $line"
    fi
done
echo "coreml_cmctl_ct: $passed passed, $failed failed"
