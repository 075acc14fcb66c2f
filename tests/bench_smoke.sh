#!/bin/sh
# bench_smoke.sh - every bench program (bench/*.c, built by `make check`)
# runs once on a tiny input and exits 0, so that a benchmark cannot break
# unseen. Times are printed by the programs but never judged.
# Usage: sh tests/bench_smoke.sh BUILD_DIR   (from the project root)
build=${1:-build}
tool=$build/onnx-convert
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# One tiny case folder (a chain of 16 nodes with its input), made by
# gen_model: the input of bench_eval and of two `run`s for cmp_outputs.
smoke_gen_model() {
    mkdir -p "$tmp/case"
    "$1" chain --nodes 16 --out "$tmp/case/model.onnx" \
        --inputs "$tmp/case/test_data_set_0" >"$tmp/out" 2>&1 &&
        [ -s "$tmp/case/model.onnx" ] && [ -s "$tmp/case/test_data_set_0/input_0.pb" ] &&
        "$1" transformer --layers 1 --hidden 16 --heads 2 --seq 4 \
            --out "$tmp/tr.onnx" >>"$tmp/out" 2>&1 && [ -s "$tmp/tr.onnx" ]
}
smoke_bench_eval() {
    "$1" "$tmp/case" 1 >"$tmp/out" 2>&1 && grep -q "case [0-9.]" "$tmp/out"
}
smoke_bench_loadsave() {
    "$1" --quick "$tmp" >"$tmp/out" 2>&1 && grep -q "^nodes 1k" "$tmp/out"
}
smoke_cmp_outputs() {
    "$tool" run "$tmp/case/model.onnx" --inputs "$tmp/case/test_data_set_0" \
        -o "$tmp/a" >/dev/null 2>&1 &&
        "$tool" run "$tmp/case/model.onnx" --inputs "$tmp/case/test_data_set_0" \
            -o "$tmp/b" >/dev/null 2>&1 &&
        "$1" "$tmp/a" "$tmp/b" >"$tmp/out" 2>&1 || return 1
    # and a difference is seen: a folder against an empty one
    mkdir -p "$tmp/empty"
    ! "$1" "$tmp/a" "$tmp/empty" >/dev/null 2>&1
}

# gen_model first: the others use its case folder.
for src in bench/gen_model.c $(ls bench/*.c | grep -v '^bench/gen_model\.c$'); do
    name=$(basename "$src" .c)
    bin=$build/bench/$name
    if [ ! -x "$bin" ]; then
        bad "$name: $bin was not built"
        continue
    fi
    if ! command -v "smoke_$name" >/dev/null 2>&1; then
        bad "$name: no smoke case in tests/bench_smoke.sh"
        continue
    fi
    if "smoke_$name" "$bin"; then
        ok
    else
        bad "$name"
        tail -n 5 "$tmp/out"
    fi
done
# bench/python_api.py (a script): once on the same case, without ONNX
# Runtime; both converters time the case's conversion (a number in each).
if ONNXCONVERT_LIBRARY=$build/libonnxconvert.so.0 /usr/bin/python3 bench/python_api.py \
        --runs 1 --no-ort "$tmp/case" >"$tmp/out" 2>&1 &&
        grep -Eq '^\| case \| 13 -> 1[24] \| [0-9.]+ \| [0-9.]+ \|' "$tmp/out"; then
    ok
else
    bad python_api
    tail -n 5 "$tmp/out"
fi
echo "bench_smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
