#!/bin/sh
# big3g.sh - one ~3 GB transformer with external data, converted to opset 17
# and optimized with --verify, then both models run on the same input and
# their outputs compared (issue 7). A measurement, never a test.
#
# Usage (from the project root; `make bench-big3g` builds what it needs
# and runs it):
#   sh bench/big3g.sh [DIR]
# DIR: where the files go (a fresh subfolder, deleted at the end); default
# under build/. Environment: BIG3G_MB (default 3072), KEEP=1 keeps them.
# Each step runs once under /usr/bin/time -v (wall time, peak RSS).
set -u

BIG3G_MB=${BIG3G_MB:-3072}
KEEP=${KEEP:-0}
tool=build/onnx-convert
gen=build/bench/gen_model
cmp=build/bench/cmp_outputs
TIME=/usr/bin/time
. bench/timing.sh

for f in "$tool" "$gen" "$cmp"; do
    [ -x "$f" ] || { echo "big3g.sh: $f is missing; run 'make bench-big3g'" >&2; exit 1; }
done
[ -x "$TIME" ] || { echo "big3g.sh: needs $TIME (apt-get install time)" >&2; exit 1; }

# The model and the converted one (no larger: LayerNormalization fusion
# drops a few small tensors), plus room.
bench_workdir "${1:-build}" bench-3g $((2 * BIG3G_MB + 1024)) big3g.sh
mem=$(awk '/MemAvailable/ { printf "%d", $2 / 1024 }' /proc/meminfo)
echo "memory: $mem MB available"

rows=""
failed=0
# step LABEL CMD...: runs CMD once under time -v, shows its output, and
# adds a table row (FAILED instead of numbers when it exits non-zero).
step() {
    label=$1
    shift
    echo "== $label: $*"
    if $TIME -v -o "$work/time.txt" "$@" >"$work/step.log" 2>&1; then
        sed 's/^/   /' "$work/step.log"
        w=$(wall_of "$work/time.txt")
        r=$(($(rss_of "$work/time.txt") / 1024))
        rows="$rows| $label | $w | $r | ok |
"
    else
        sed 's/^/   /' "$work/step.log"
        rows="$rows| $label | FAILED | FAILED | exit status $(awk '/Exit status/ { print $3 }' "$work/time.txt") |
"
        failed=1
    fi
}

m=$work/model
o=$work/converted
mkdir -p "$m" "$o"
step "generate ${BIG3G_MB} MB (gen_model)" \
    "$gen" transformer --size-mb "$BIG3G_MB" --out "$m/model.onnx" \
    --external model.data --inputs "$work/inputs"
size=$(cat "$m/model.onnx" "$m/model.data" 2>/dev/null | wc -c)
echo "model: $(awk -v b="$size" 'BEGIN { printf "%.0f MB", b / 1048576 }') (.onnx plus model.data)"
cp "$m/model.onnx" "$work/warm.onnx" && rm -f "$work/warm.onnx"   # page cache
cat "$m/model.data" >/dev/null 2>&1
step "cp (floor)" sh -c 'cp "$1" "$3" && cp "$2" "$4"' cp2 \
    "$m/model.onnx" "$m/model.data" "$work/cp.onnx" "$work/cp.data"
rm -f "$work/cp.onnx" "$work/cp.data"
step "convert --opset 17 --optimize --verify" \
    "$tool" convert "$m/model.onnx" --opset 17 --optimize \
    --external-data converted.data -o "$o/converted.onnx" --verify
step "run original (--seed 1)" \
    "$tool" run "$m/model.onnx" --inputs "$work/inputs" --seed 1 -o "$work/out_original"
step "run converted (--seed 1)" \
    "$tool" run "$o/converted.onnx" --inputs "$work/inputs" --seed 1 -o "$work/out_converted"
step "compare outputs (cmp_outputs)" \
    "$cmp" "$work/out_original" "$work/out_converted"

echo
echo "MB are MiB; each step ran once, warm page cache."
echo
echo "| step | wall s | peak RSS MB | result |"
echo "|---|---:|---:|---|"
printf '%s' "$rows"
exit "$failed"
