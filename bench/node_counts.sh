#!/bin/sh
# Node counts of ../shared/models before and after the default optimizer
# pipeline, beside ONNX Runtime 1.30's basic level, as the table of bench/README.md.
# The standard-op check: ops outside ai.onnx in our output are listed.
#   sh bench/node_counts.sh [BUILD_DIR]      (from the project root)
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh ../shared/tools/ort/setup.sh >/dev/null 2>&1
count() { "$build/onnx-convert" info "$1" | awk '$1 == "nodes_total" { print $2 }'; }
echo "| model | nodes | onnx-convert optimize | ONNX Runtime basic | fused standard ops |"
echo "|---|---|---|---|---|"
for dir in ../shared/models/*/; do
    name=$(basename "$dir")
    "$build/onnx-convert" optimize "$dir/model.onnx" -o "$tmp/ours.onnx" --verify >"$tmp/log" 2>&1 ||
        { echo "$name: optimize failed: $(tail -n 1 "$tmp/log")" >&2; continue; }
    ort=-
    node bench/ort_basic.js "$dir/model.onnx" "$tmp/ort.onnx" 2>/dev/null && ort=$(count "$tmp/ort.onnx")
    "$build/onnx-convert" info "$tmp/ours.onnx" | awk '$1 ~ /^(ai\.|com\.|org\.)/ && NF == 3' >"$tmp/ops"
    fused=$(awk '$1 == "ai.onnx" && $2 ~ /^(LayerNormalization|Gelu|RMSNormalization|Attention)$/ {
        printf "%s%s %s", s, $2, $3; s = ", " }' "$tmp/ops")
    other=$(awk '$1 != "ai.onnx" { printf "%s.%s ", $1, $2 }' "$tmp/ops")
    [ -n "$other" ] && echo "$name: non-standard ops: $other" >&2
    echo "| $name | $(count "$dir/model.onnx") | $(count "$tmp/ours.onnx") | $ort | ${fused:--} |"
done

# Converted up first, so that the opset allows LayerNormalization (17) and
# Gelu (20); ONNX Runtime gets the same converted, unoptimized model.
echo
echo "| model, converted to | nodes | onnx-convert convert --optimize | ONNX Runtime basic | fused standard ops |"
echo "|---|---|---|---|---|"
for spec in "tinybert_opset14 17" "tinybert_opset14 20" "vit_tiny_opset13 17" "vit_tiny_opset13 20"; do
    set -- $spec
    model=../shared/models/$1/model.onnx
    "$build/onnx-convert" convert "$model" -o "$tmp/conv.onnx" --opset "$2" >/dev/null 2>&1 &&
    "$build/onnx-convert" convert "$model" -o "$tmp/ours.onnx" --opset "$2" --optimize --verify \
        >"$tmp/log" 2>&1 || { echo "$1 -> $2 failed: $(tail -n 1 "$tmp/log")" >&2; continue; }
    ort=-
    node bench/ort_basic.js "$tmp/conv.onnx" "$tmp/ort.onnx" 2>/dev/null && ort=$(count "$tmp/ort.onnx")
    fused=$("$build/onnx-convert" info "$tmp/ours.onnx" | awk '$1 == "ai.onnx" && NF == 3 &&
        $2 ~ /^(LayerNormalization|Gelu|RMSNormalization|Attention)$/ { printf "%s%s %s", s, $2, $3; s = ", " }')
    echo "| $1 -> opset $2 | $(count "$model") | $(count "$tmp/ours.onnx") | $ort | ${fused:--} |"
done
