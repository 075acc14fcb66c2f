# Sourced by the scripts that have ONNX Runtime judge (tests/ort_matrix.sh,
# adapter_ort.sh, ort_nodecount.sh): with $name and $ort set, ends the
# script as skipped ("SKIP ..." and "$name: 0 passed, 0 failed, 1 skipped")
# when node or the oracle at $ort is missing, or its npm packages can be
# neither found nor installed (tests/ort_ready.sh).
. tests/ort_ready.sh
if ! ort_ready "$ort"; then
    echo "SKIP $name: no node, no ../shared/tools/ort (ONNX Runtime), or its npm packages cannot be installed"
    echo "$name: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
