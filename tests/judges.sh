# Sourced (POSIX sh) by tests/run.sh and the corpus check before any test
# runs: makes the two judges we did not write usable, and tells every test
# where they are through the environment.
#
#   OC_ORT_DIR  the folder of ONNX Runtime's oracle (ort-check.js); its npm
#               packages are beside it, or in $NODE_PATH
#   OC_CT_DIR   the folder of Apple's loader (coremltools' ct_check.py),
#               set up (its native helpers built)
#
# ../shared may be a read-only copy without the judges' installed parts
# (CI's is): then ONNX Runtime's packages go into BUILD/ort/node_modules
# (NODE_PATH points there) and coremltools is copied into BUILD/coremltools
# and set up there. A judge that cannot be set up (no node, no network for
# npm, no compiler) is left out; the tests that need it then skip, named
# and counted, as before. Needs $build (the build folder) set.
judges_shared=${OC_SHARED:-../shared}/tools

# Whether a folder can be written (test -w does not see a read-only mount
# as root does not see permission bits; creating a file does).
judges_writable() {
    t="$1/.oc_write_probe.$$"
    (: >"$t") 2>/dev/null || return 1
    rm -f "$t"
}

. tests/ort_ready.sh

judges_ort() {
    OC_ORT_DIR=$judges_shared/ort
    export OC_ORT_DIR
    command -v node >/dev/null 2>&1 && [ -f "$OC_ORT_DIR/ort-check.js" ] || return 1
    ort_probe "$OC_ORT_DIR" && return 0
    judges_writable "$OC_ORT_DIR" && { ort_ready "$OC_ORT_DIR"; return; }
    sh "$OC_ORT_DIR/setup.sh" "$PWD/$build/ort" >/dev/null 2>&1 || return 1
    NODE_PATH=$PWD/$build/ort/node_modules${NODE_PATH:+:$NODE_PATH}
    export NODE_PATH
    ort_probe "$OC_ORT_DIR"
}

judges_coremltools() {
    OC_CT_DIR=$judges_shared/coremltools
    [ -f "$OC_CT_DIR/setup.sh" ] || return 1
    if ! judges_writable "$OC_CT_DIR/src/coremltools"; then
        # a copy beside the build; -u copies only what is newer, so that
        # the next run rebuilds nothing
        mkdir -p "$build/coremltools" &&
            cp -R -p -u "$OC_CT_DIR/." "$build/coremltools/" || return 1
        OC_CT_DIR=$PWD/$build/coremltools
    fi
    export OC_CT_DIR
    sh "$OC_CT_DIR/setup.sh" --no-selftest >/dev/null 2>&1
}

# Each judge counts as a check: ready passes; missing is a skip, or a
# failure in CI (CI=true), where they must run (issue 33). The counts go
# to judges_result as a "judges: ..." line for tests/run.sh to tally.
judges_p=0 judges_f=0 judges_s=0
judges_missing() {
    echo "SKIP judges: $1"
    if [ "${CI:-}" = true ]; then judges_f=$((judges_f + 1)); echo "FAIL judges: $1 in CI"
    else judges_s=$((judges_s + 1)); fi
}
if judges_ort; then
    echo "judges: ONNX Runtime ready ($OC_ORT_DIR${NODE_PATH:+, NODE_PATH=$NODE_PATH})"
    judges_p=$((judges_p + 1))
else
    judges_missing "ONNX Runtime not available (no node, or its npm packages cannot be installed)"
fi
if judges_coremltools; then
    echo "judges: Apple's Core ML loader ready ($OC_CT_DIR)"
    judges_p=$((judges_p + 1))
else
    judges_missing "Apple's Core ML loader not available (coremltools' setup failed)"
fi
judges_result="judges: $judges_p passed, $judges_f failed, $judges_s skipped"
