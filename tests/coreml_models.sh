#!/bin/sh
# coreml_models.sh - every model of ../shared/models exports to Core ML
# (tool_coreml_export: converted to CM_ONNX_OPSET, lowered at the lowest
# target that holds it, written as a package), and Apple's loader
# (../shared/tools/coremltools/ct_check.py) accepts each package.
# Skips, saying so, without ../shared/models or the judge.
# Usage: sh tests/coreml_models.sh PATH/TO/tool_coreml_export  (from the project root)
tool=$1
judge=../shared/tools/coremltools/ct_check.py
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ! -d ../shared/models ] || [ ! -x "$judge" ] ||
    ! ../shared/tools/coremltools/setup.sh --no-selftest >/dev/null 2>&1; then
    echo "coreml_models: skipped (no ../shared/models or no coremltools judge)"
    exit 0
fi
for dir in ../shared/models/*/; do
    name=$(basename "$dir")
    [ -f "$dir/model.onnx" ] || continue
    if ! "$tool" "$dir/model.onnx" "$tmp/$name.mlpackage" >"$tmp/out" 2>&1; then
        echo "FAIL $name: $(tail -n 1 "$tmp/out")"
        failed=$((failed + 1))
        continue
    fi
    if line=$("$judge" "$tmp/$name.mlpackage" 2>&1); then
        echo "  $name: $(cat "$tmp/out"); ${line#ct_check: }" | cut -c1-160
        passed=$((passed + 1))
    else
        echo "FAIL $name: $line"
        failed=$((failed + 1))
    fi
done
echo "coreml_models: $passed passed, $failed failed"
