# Sourced (POSIX sh): ort_ready DIR succeeds when ONNX Runtime's oracle at
# DIR (ort-check.js) can run: node is there and its npm packages are found
# beside it or in $NODE_PATH (tests/judges.sh puts them in BUILD/ort when
# ../shared is read-only), or can be installed beside it now.
ort_probe() {
    (cd "$1" && node -e "require('onnxruntime-node'); require('protobufjs')") >/dev/null 2>&1
}

ort_ready() {
    command -v node >/dev/null 2>&1 && [ -f "$1/ort-check.js" ] || return 1
    ort_probe "$1" && return 0
    sh "$1/setup.sh" >/dev/null 2>&1 && ort_probe "$1"
}
