#!/bin/sh
# make demo: shows what onnx-convert does to a model this project ships.
# Usage: tests/demo.sh path/to/onnx-convert
set -e
bin=$1
model=testdata/small_cnn.onnx
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

step "what the model is" "onnx-convert info $model"
"$bin" info "$model"

step "a lossless round trip" "onnx-convert convert $model -o round.onnx"
"$bin" convert "$model" -o "$out/round.onnx"
if cmp -s "$model" "$out/round.onnx"; then
    echo "round.onnx is byte-for-byte the same as $model"
else
    echo "round.onnx differs from $model in bytes (field order); contents are equal"
fi

step "weights moved to a side file" \
     "onnx-convert convert $model -o split.onnx --external-data split.data"
"$bin" convert "$model" -o "$out/split.onnx" --external-data split.data
ls -l "$out/split.onnx" "$out/split.data" | awk '{print "  " $5 " bytes  " $NF}'
mkdir "$out/copy"
"$bin" convert "$out/split.onnx" -o "$out/copy/split.onnx"
if cmp -s "$out/split.data" "$out/copy/split.data"; then
    echo "split.onnx reloads with its side file, and writing it elsewhere carries the side file along"
else
    echo "side file differs after a second convert" >&2
    exit 1
fi

step "validated against the ONNX rules" "onnx-convert check $model"
"$bin" check "$model"

step "run by the reference evaluator" \
     "onnx-convert run $model --inputs testdata/small_cnn_data -o outputs"
"$bin" run "$model" --inputs testdata/small_cnn_data -o "$out/outputs"
# A backend-test case folder from the shipped data, to compare with the
# expected outputs (computed by an independent numpy forward pass).
mkdir -p "$out/case/test_data_set_0"
cp testdata/small_cnn_data/*.pb "$out/case/test_data_set_0/"
step "compared with the expected outputs" \
     "onnx-convert test case/ --model $model"
"$bin" test "$out/case" --model "$model"

step "converted down to opset 9 for an old runtime, and proved equal" \
     "onnx-convert convert $model -o old.onnx --opset 9 --verify"
"$bin" convert "$model" -o "$out/old.onnx" --opset 9 --verify
"$bin" test "$out/case" --model "$out/old.onnx"

tf=testdata/tiny_transformer.onnx
step "which opsets the transformer can be converted to" "onnx-convert info $tf --targets"
"$bin" info "$tf" --targets | awk 'NR == 1 || /no / || /reachable/' | cut -c1-150

step "converted up to opset 21 and down to 11" \
     "onnx-convert convert $tf -o t21.onnx --opset 21 --verify; ... --opset 11 --verify"
"$bin" convert "$tf" -o "$out/t21.onnx" --opset 21 --verify
"$bin" convert "$out/t21.onnx" -o "$out/t11.onnx" --opset 11 --verify

step "the CNN optimized (its BatchNormalization folds into the Conv), and proved equal" \
     "onnx-convert optimize $model -o cnn-opt.onnx --verify"
"$bin" optimize "$model" -o "$out/cnn-opt.onnx" --verify
"$bin" test "$out/case" --model "$out/cnn-opt.onnx"

step "the opset-21 transformer optimized: its erf GELU becomes one Gelu node" \
     "onnx-convert optimize t21.onnx -o t21-opt.onnx --stats --verify"
"$bin" optimize "$out/t21.onnx" -o "$out/t21-opt.onnx" --stats --verify | awk '!/ 0$/'

step "inferred types written into a model that declares none" \
     "onnx-convert convert $tf -o typed.onnx --infer-shapes"
"$bin" convert "$tf" -o "$out/typed.onnx" --infer-shapes
echo "  $(wc -c <"$tf") bytes before, $(wc -c <"$out/typed.onnx") bytes after: every intermediate value now carries its type and shape"
"$bin" check "$out/typed.onnx"

step "every model of a folder at once, two at a time, with a table" \
     "onnx-convert convert testdata --out-dir zoo9 --opset 9 --verify -j 2"
"$bin" convert testdata --out-dir "$out/zoo9" --opset 9 --verify -j 2

step "the CNN as a Core ML package (iOS15 and up), proved equal through its import" \
     "onnx-convert convert $model -o cnn.mlpackage --verify; onnx-convert info cnn.mlpackage"
"$bin" convert "$model" -o "$out/cnn.mlpackage" --verify
"$bin" info "$out/cnn.mlpackage" | sed -n '1,4p;/operations/,/^description/p' | sed '$d'
"$bin" convert "$out/cnn.mlpackage" -o "$out/back.onnx"
"$bin" test "$out/case" --model "$out/back.onnx"

step "what a conversion did, as JSON" "onnx-convert convert $model -o m9.onnx --opset 9 --json"
"$bin" convert "$model" -o "$out/m9.onnx" --opset 9 --json | sed -n '1,22p' 
echo "  ..."

step "machine-readable summary" "onnx-convert info --json $model"
"$bin" info --json "$model" | head -c 400
echo
echo
echo "Every pass: onnx-convert optimize --list-passes. Passes whose count is 0"
echo "are left out of the --stats listing above."
