#!/bin/sh
# hostile_cli.sh - the command line against bad input.
#
# Usage: sh tests/hostile_cli.sh PATH/TO/onnx-convert   (from the project root)
#
# For each bad input (a truncated model, random bytes, an empty file, a
# missing file, a folder), `convert BAD -o OUT` and `info BAD` must exit 1
# with exactly one line on stderr, and convert must leave nothing behind in
# OUT's folder (no OUT, no temporary file; an OUT that was there before stays
# as it was). Usage errors must exit 2. Ends with
# "hostile_cli: N passed, N failed" and exits non-zero on failure.

BIN=$1
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
    echo "usage: sh tests/hostile_cli.sh PATH/TO/onnx-convert" >&2
    exit 2
fi

LC_ALL=C
export LC_ALL

TALLY=hostile_cli
. "$(dirname "$0")/tally.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oc_hostile_cli.XXXXXX") || exit 1
trap 'rm -rf "${TMP:?}"' EXIT
trap 'exit 1' INT TERM
IN=$TMP/in
OUTDIR=$TMP/out
mkdir "$IN" "$OUTDIR" || exit 1
ERR=$TMP/stderr

# clean_out: empties OUTDIR (never anything else).
clean_out() {
    rm -rf "${OUTDIR:?}"/* "${OUTDIR:?}"/.[!.]* 2> /dev/null
}

# A real model to damage: the backend's test_abs, else one of testdata/.
good=""
for root in "${ONNX_BACKEND_DATA:-}" ../shared/testdata/onnx-backend \
            /usr/share/libonnx-testdata/data; do
    if [ -n "$root" ] && [ -f "$root/node/test_abs/model.onnx" ]; then
        good=$root/node/test_abs/model.onnx
        break
    fi
done
if [ -z "$good" ]; then
    for f in testdata/*.onnx; do
        if [ -f "$f" ]; then
            good=$f
            break
        fi
    done
fi

# Truncations: one byte short (never valid) and half the file.
if [ -n "$good" ]; then
    size=$(wc -c < "$good" | tr -d ' ')
    dd if="$good" of="$IN/truncated_1.onnx" bs=1 count=$((size - 1)) 2>/dev/null
    dd if="$good" of="$IN/truncated_half.onnx" bs=1 count=$((size / 2)) 2>/dev/null
else
    echo "hostile_cli: no model found to truncate; using a hand-made one"
    # ir_version 8, then a graph field whose length runs past the end.
    printf '\010\010\072\040\012\002' > "$IN/truncated_1.onnx"
fi

# Random bytes from a fixed seed. The first byte, 0x0f, is field 1 with
# wire type 7, which does not exist, so the input is never a valid model.
awk 'BEGIN { srand(12345); printf "\017";
             for (i = 0; i < 4000; i++) printf "%c", int(rand() * 256) }' \
    > "$IN/random.onnx"
# 0x00 is field number 0: invalid however the rest reads.
awk 'BEGIN { srand(777); printf "%c", 0;
             for (i = 0; i < 300; i++) printf "%c", int(rand() * 256) }' \
    > "$IN/random_zero.onnx"
: > "$IN/empty.onnx"
mkdir "$IN/a_folder.onnx"

# snippet FILE: the start of FILE on one line, for messages.
snippet() {
    dd if="$1" bs=300 count=1 2>/dev/null | tr '\n' '|'
}

# exactly_one_line FILE: one non-empty line, ended by a newline.
exactly_one_line() {
    [ "$(wc -l < "$1" | tr -d ' ')" = 1 ] &&
        [ "$(awk 'END { print NR }' "$1")" = 1 ] &&
        grep -q . "$1"
}

# leftovers: what is in OUTDIR besides the names given.
leftovers() {
    # shellcheck disable=SC2012 # the names are the script's own
    ls -A "$OUTDIR" | while read -r f; do
        keep=0
        for k in "$@"; do
            [ "$f" = "$k" ] && keep=1
        done
        [ $keep = 0 ] && printf '%s ' "$f"
    done
}

# check_rejected LABEL EXPECTED_STATUS CMD...: status and one stderr line.
check_rejected() {
    label=$1
    want=$2
    shift 2
    "$@" > /dev/null 2> "$ERR"
    rc=$?
    if [ "$rc" != "$want" ]; then
        bad "$label: exit status $rc, expected $want; stderr: $(snippet "$ERR")"
    elif ! exactly_one_line "$ERR"; then
        bad "$label: stderr is not exactly one line: $(snippet "$ERR")"
    else
        ok
    fi
}

for input in "$IN"/truncated_1.onnx "$IN"/truncated_half.onnx "$IN"/random.onnx \
             "$IN"/random_zero.onnx "$IN"/empty.onnx "$IN"/a_folder.onnx \
             "$IN"/missing.onnx; do
    [ -e "$input" ] || [ "${input##*/}" = missing.onnx ] || continue
    name=${input##*/}

    check_rejected "convert $name" 1 "$BIN" convert "$input" -o "$OUTDIR/out.onnx"
    left=$(leftovers)
    if [ -n "$left" ]; then
        bad "convert $name left files behind: $left"
        clean_out
    else
        ok
    fi

    # An OUT that existed before must survive a failed convert unchanged.
    printf 'previous contents\n' > "$OUTDIR/old.onnx"
    check_rejected "convert $name over an existing OUT" 1 \
        "$BIN" convert "$input" -o "$OUTDIR/old.onnx"
    left=$(leftovers old.onnx)
    if [ -n "$left" ]; then
        bad "convert $name over an existing OUT left files behind: $left"
    elif [ "$(cat "$OUTDIR/old.onnx" 2>/dev/null)" != "previous contents" ]; then
        bad "convert $name: the existing OUT was changed or removed"
    else
        ok
    fi
    clean_out

    check_rejected "info $name" 1 "$BIN" info "$input"
done

# A FIFO as the model: opening it for reading would wait for a writer
# forever; it must be refused like any other non-file. A watchdog kills
# the command after 10 s.
run_limited() {
    "$@" > /dev/null 2> "$ERR" &
    pid=$!
    n=0
    while kill -0 "$pid" 2> /dev/null && [ $n -lt 10 ]; do
        sleep 1
        n=$((n + 1))
    done
    # Our own unreaped child: its id cannot have been reused.
    kill "$pid" 2> /dev/null
    wait "$pid"
}
if mkfifo "$IN/fifo.onnx" 2> /dev/null; then
    for cmd in convert info; do
        if [ $cmd = convert ]; then
            run_limited "$BIN" convert "$IN/fifo.onnx" -o "$OUTDIR/out.onnx"
        else
            run_limited "$BIN" info "$IN/fifo.onnx"
        fi
        rc=$?
        if [ "$rc" != 1 ]; then
            bad "$cmd of a FIFO: exit status $rc, expected 1 (143: it blocked and was killed)"
        elif ! exactly_one_line "$ERR"; then
            bad "$cmd of a FIFO: stderr is not exactly one line: $(snippet "$ERR")"
        else
            ok
        fi
        clean_out
    done
fi

# A good model written into a folder that does not exist: refused cleanly.
if [ -n "$good" ]; then
    check_rejected "convert into a missing folder" 1 \
        "$BIN" convert "$good" -o "$OUTDIR/no/such/folder/out.onnx"
    left=$(leftovers)
    if [ -n "$left" ]; then
        bad "convert into a missing folder left files behind: $left"
    else
        ok
    fi
fi

# External data that would escape or clobber. A model with initializers is
# needed: the project's own, else one of ../shared/models.
weights=""
for f in testdata/small_cnn.onnx ../shared/models/vit_tiny_opset13/model.onnx; do
    if [ -f "$f" ]; then
        weights=$f
        break
    fi
done
if [ -n "$weights" ]; then
    # A side file named outside OUT's folder: refused (1 or 2), nothing
    # written anywhere.
    for ext in ../escaped.bin "$TMP/absolute.bin" sub/dir.bin; do
        "$BIN" convert "$weights" -o "$OUTDIR/out.onnx" --external-data "$ext" \
            --external-threshold 1 > /dev/null 2> "$ERR"
        rc=$?
        left=$(leftovers)
        if [ "$rc" != 1 ] && [ "$rc" != 2 ]; then
            bad "convert --external-data $ext: exit status $rc, expected 1 or 2"
        elif [ -n "$left" ] || [ -e "$TMP/escaped.bin" ] || [ -e "$TMP/absolute.bin" ]; then
            bad "convert --external-data $ext wrote files: $left"
        else
            ok
        fi
        clean_out
        rm -f "$TMP/escaped.bin" "$TMP/absolute.bin"
    done

    # The side file named like OUT itself: refuse, or write a model whose
    # tensors can be read back; never report success over lost data.
    "$BIN" convert "$weights" -o "$OUTDIR/out.onnx" --external-data out.onnx \
        --external-threshold 1 > /dev/null 2> "$ERR"
    rc=$?
    if [ "$rc" = 0 ]; then
        if "$BIN" convert "$OUTDIR/out.onnx" -o "$TMP/reread.onnx" > /dev/null 2> "$ERR"; then
            ok
        else
            bad "convert --external-data out.onnx -o out.onnx exited 0 but" \
                "the result cannot be read back: $(snippet "$ERR")"
        fi
    elif [ "$rc" = 1 ] || [ "$rc" = 2 ]; then
        left=$(leftovers)
        if [ -n "$left" ]; then
            bad "convert --external-data out.onnx -o out.onnx left files: $left"
        else
            ok
        fi
    else
        bad "convert --external-data out.onnx -o out.onnx: exit status $rc"
    fi
    clean_out
    rm -f "$TMP/reread.onnx"

    # Rewriting a model whose side file is being read (mapped) from the
    # same folder, in place and beside it: the data must survive. Tensors
    # are compared by writing them back inline (a threshold nothing meets).
    A=$TMP/a
    mkdir "$A"
    inline() {
        "$BIN" convert "$1" -o "$2" --external-data unused.bin \
            --external-threshold 1000000000000 > /dev/null 2>> "$ERR"
    }
    if "$BIN" convert "$weights" -o "$A/m.onnx" --external-data w.bin \
           --external-threshold 1 > /dev/null 2> "$ERR" &&
       inline "$weights" "$TMP/ref.onnx" && inline "$A/m.onnx" "$TMP/ref2.onnx" &&
       cmp -s "$TMP/ref.onnx" "$TMP/ref2.onnx"; then
        for step in beside in_place; do
            if [ $step = beside ]; then
                target=$A/m2.onnx
            else
                target=$A/m.onnx
            fi
            if "$BIN" convert "$A/m.onnx" -o "$target" > /dev/null 2> "$ERR" &&
               inline "$target" "$TMP/check.onnx" &&
               cmp -s "$TMP/check.onnx" "$TMP/ref.onnx"; then
                ok
            else
                bad "rewriting a model with external data ($step) lost it: $(snippet "$ERR")"
            fi
        done
    else
        bad "external data written with --external-data w.bin does not" \
            "read back as the original tensors: $(snippet "$ERR")"
    fi
fi

# External data that leads out of the folder by a link. The model and its
# side file are good; only the way to the file is not. The real bytes sit
# outside, so following the link would load fine: the refusal is the test,
# and where strace is installed, so is the absence of any successful open
# of a path outside the folder.
if [ -n "$weights" ]; then
    L=$TMP/links
    mkdir -p "$L/m" "$L/outside"
    if "$BIN" convert "$weights" -o "$L/m/model.onnx" --external-data w.bin \
           --external-threshold 1 > /dev/null 2> "$ERR"; then
        mv "$L/m/w.bin" "$L/outside/w.bin"
        for how in symlink-out hardlink symlink-in; do
            rm -f "$L/m/w.bin" "$L/m/real.bin"
            case $how in
            symlink-out) ln -s ../outside/w.bin "$L/m/w.bin" ;;
            hardlink) ln "$L/outside/w.bin" "$L/m/w.bin" ;;
            symlink-in) cp "$L/outside/w.bin" "$L/m/real.bin"
                        ln -s real.bin "$L/m/w.bin" ;;
            esac
            check_rejected "external data through a $how" 1 \
                "$BIN" convert "$L/m/model.onnx" -o "$OUTDIR/out.onnx"
            left=$(leftovers)
            [ -z "$left" ] || bad "external data through a $how: left $left"
            if command -v strace > /dev/null 2>&1; then
                strace -f -o "$TMP/trace" -e trace=open,openat,openat2 \
                    "$BIN" convert "$L/m/model.onnx" -o "$OUTDIR/out.onnx" > /dev/null 2>&1
                if grep -v ' = -1 ' "$TMP/trace" | grep -q 'outside'; then
                    bad "external data through a $how: a file outside the folder was opened"
                else
                    ok
                fi
            fi
            clean_out
        done
    else
        bad "could not write a model with external data: $(snippet "$ERR")"
    fi
fi

# Usage errors: exit 2, nothing written.
usage_in=${good:-$IN/truncated_1.onnx}
check_usage() {
    label=$1
    shift
    "$@" > /dev/null 2> "$ERR"
    rc=$?
    if [ "$rc" != 2 ]; then
        bad "$label: exit status $rc, expected 2; stderr: $(snippet "$ERR")"
    elif [ ! -s "$ERR" ]; then
        bad "$label: nothing on stderr"
    else
        ok
    fi
    left=$(leftovers)
    if [ -n "$left" ]; then
        bad "$label left files behind: $left"
        clean_out
    fi
}
check_usage "no arguments" "$BIN"
check_usage "unknown command" "$BIN" frobnicate "$usage_in"
check_usage "convert without -o" "$BIN" convert "$usage_in"
check_usage "convert with -o and no file" "$BIN" convert "$usage_in" -o
check_usage "convert without input" "$BIN" convert -o "$OUTDIR/out.onnx"
check_usage "convert with an unknown option" \
    "$BIN" convert "$usage_in" -o "$OUTDIR/out.onnx" --no-such-option
check_usage "info without a model" "$BIN" info

# The evaluator: a model it cannot run ends with exit 1, one line naming
# the input or node, and no output file in OUTDIR.
case_dir=""
[ -n "$good" ] && case_dir=$(dirname "$good")
if [ -n "$case_dir" ] && [ -d "$case_dir/test_data_set_0" ]; then
    check_run() {
        label=$1
        want_text=$2
        shift 2
        check_rejected "$label" 1 "$@"
        if ! grep -q -- "$want_text" "$ERR"; then
            bad "$label: the message does not name $want_text: $(snippet "$ERR")"
        fi
        left=$(leftovers)
        if [ -n "$left" ]; then
            bad "$label left files behind: $left"
            clean_out
        fi
    }
    mkdir "$TMP/no_inputs" "$TMP/wrong_type"
    check_run "run with a missing input file" "input_0.pb" \
        "$BIN" run "$good" --inputs "$TMP/no_inputs" -o "$OUTDIR/res"
    # test_abs's input is float; feed it the int64 expected output of another case.
    other=$(dirname "$case_dir")/test_argmax_default_axis_example/test_data_set_0/output_0.pb
    if [ -f "$other" ]; then
        cp "$other" "$TMP/wrong_type/input_0.pb"
        check_run "run with an input of the wrong type" "INT64" \
            "$BIN" run "$good" --inputs "$TMP/wrong_type" -o "$OUTDIR/res"
    fi
    check_run "test with a model that computes something else" "output 0" \
        "$BIN" test "$case_dir" --model "$(dirname "$case_dir")/test_neg/model.onnx"
    check_usage "run without -o" "$BIN" run "$good" --inputs "$case_dir/test_data_set_0"
    check_usage "test with a bad tolerance" "$BIN" test "$case_dir" --rtol -1

    # The converter: an opset it does not know, or a conversion it cannot do
    # correctly, ends with exit 1, one line naming why, and no output file.
    check_run "convert to an opset that does not exist" "opset 99" \
        "$BIN" convert "$good" -o "$OUTDIR/out.onnx" --opset 99
    check_run "convert to an opset where an op has no exact form" "(Erf" \
        "$BIN" convert "$(dirname "$case_dir")/test_erf/model.onnx" -o "$OUTDIR/out.onnx" --opset 8
    check_run "convert with an IR version that cannot hold the model" "ir_version" \
        "$BIN" convert "$(dirname "$case_dir")/test_identity_opt/model.onnx" \
        -o "$OUTDIR/out.onnx" --ir-version 7
    check_usage "convert with --opset 0" "$BIN" convert "$good" -o "$OUTDIR/out.onnx" --opset 0
    check_usage "convert with --opset abc" "$BIN" convert "$good" -o "$OUTDIR/out.onnx" --opset abc

    # The optimizer: an unknown pass name is refused, naming it.
    check_run "optimize with a pass that does not exist" "'nope'" \
        "$BIN" optimize "$good" -o "$OUTDIR/out.onnx" --passes identity,nope
    check_usage "optimize without -o" "$BIN" optimize "$good"
    # --input-shape naming an input the model lacks, or a wrong rank.
    check_run "optimize with --input-shape of a missing input" "'nope'" \
        "$BIN" optimize "$good" -o "$OUTDIR/out.onnx" --input-shape nope=1,2
    check_run "optimize with --input-shape of the wrong rank" "rank" \
        "$BIN" optimize "$good" -o "$OUTDIR/out.onnx" --input-shape x=3
fi

echo "hostile_cli: $passed passed, $failed failed"
[ "$failed" = 0 ]
