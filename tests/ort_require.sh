# Sourced by the scripts that have ONNX Runtime judge (tests/ort_matrix.sh,
# adapter_ort.sh, ort_nodecount.sh): with $name and $ort set, ends the
# script as skipped ("SKIP ..." and "$name: 0 passed, 0 failed, 1 skipped")
# when node or the oracle at $ort is missing, or its npm packages cannot
# be installed.
if ! command -v node >/dev/null 2>&1 || [ ! -f "$ort/ort-check.js" ]; then
    echo "SKIP $name: no node or no ../shared/tools/ort (ONNX Runtime)"
    echo "$name: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
sh "$ort/setup.sh" >/dev/null 2>&1 || {
    echo "SKIP $name: the oracle's npm packages cannot be installed"
    echo "$name: 0 passed, 0 failed, 1 skipped"
    exit 0
}
