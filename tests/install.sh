#!/bin/sh
# install.sh - `make install` and the installed library, as a user sees them.
#
# Usage: sh tests/install.sh [BUILD_DIR]   (from the project root, after make)
#
# Installs into a temporary folder with PREFIX (and once staged with
# DESTDIR), checks the layout, the shared library's soname, links and
# exports (only oc_*, and every function the header declares), the
# pkg-config file, that the header compiles as strict C99 and as C++; then
# builds the example program of docs/c-library.md with pkg-config against the shared
# library and against the static one, runs both on a testdata model and
# compares what they print and save with what the tool itself does.
# Writes nothing outside its temporary folder; ends with
# "install: N passed, N failed" and exits non-zero on failure.

BUILD=${1:-build}
LC_ALL=C
export LC_ALL
# Run from `make check`, the outer make's jobserver is not ours to share.
unset MAKEFLAGS MFLAGS MAKELEVEL

TALLY=install
. "$(dirname "$0")/tally.sh"

# check WHAT COMMAND...: one check, passed when COMMAND succeeds.
check() {
    what=$1
    shift
    if "$@" > /dev/null 2>&1; then ok; else bad "$what"; fi
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oc_install.XXXXXX") || exit 1
trap 'rm -rf "${TMP:?}"' EXIT
trap 'exit 1' INT TERM
CC=${CC:-cc}
MODEL=testdata/small_cnn.onnx
HEADER=include/onnxconvert.h

version_part() {
    sed -n "s/^#define ONNXCONVERT_VERSION_$1 \([0-9][0-9]*\)$/\1/p" $HEADER
}
MAJOR=$(version_part MAJOR)
VERSION=$MAJOR.$(version_part MINOR).$(version_part PATCH)

# ---- make install PREFIX=$TMP/usr -----------------------------------------

U=$TMP/usr
if ! make -s BUILD="$BUILD" install PREFIX="$U" DESTDIR= > "$TMP/make.log" 2>&1; then
    bad "make install PREFIX=$U failed:"
    tail -n 20 "$TMP/make.log" >&2
    echo "install: $passed passed, $failed failed"
    exit 1
fi
ok
for f in bin/onnx-convert lib/libonnxconvert.a lib/libonnxconvert.so.$VERSION \
         include/onnxconvert.h lib/pkgconfig/onnxconvert.pc share/man/man1/onnx-convert.1; do
    check "$f installed" test -f "$U/$f"
done
check "onnx-convert is executable" test -x "$U/bin/onnx-convert"
check "libonnxconvert.so.$MAJOR -> libonnxconvert.so.$VERSION" \
    test "$(readlink "$U/lib/libonnxconvert.so.$MAJOR")" = "libonnxconvert.so.$VERSION"
check "libonnxconvert.so -> libonnxconvert.so.$MAJOR" \
    test "$(readlink "$U/lib/libonnxconvert.so")" = "libonnxconvert.so.$MAJOR"
check "the public header only" test "$(ls "$U/include")" = "onnxconvert.h"
check "installed header is the source's" cmp -s "$U/include/onnxconvert.h" $HEADER
check "soname libonnxconvert.so.$MAJOR" sh -c \
    "readelf -d '$U/lib/libonnxconvert.so.$VERSION' | grep -q 'SONAME.*\[libonnxconvert.so.$MAJOR\]'"

# The shared library exports oc_* only, and every function the header marks.
nm -D --defined-only "$U/lib/libonnxconvert.so.$VERSION" | awk '{print $3}' | sort > "$TMP/exports"
others=$(grep -v '^oc_' "$TMP/exports")
if [ -n "$others" ]; then
    bad "exports other than oc_*: $(echo "$others" | head -n 5 | tr '\n' ' ')"
else
    ok
fi
sed -n 's/^ONNXCONVERT_API [^(]*[ *]\(oc_[a-z_]*\)(.*/\1/p' $HEADER | sort > "$TMP/declared"
if [ -s "$TMP/declared" ] && cmp -s "$TMP/declared" "$TMP/exports"; then
    ok
else
    bad "declared and exported functions differ: $(diff "$TMP/declared" "$TMP/exports" | grep '^[<>]' | tr '\n' ' ')"
fi

# The .pc file names the prefix it was installed to.
PC=$U/lib/pkgconfig/onnxconvert.pc
check ".pc prefix" grep -qx "prefix=$U" "$PC"
check ".pc version $VERSION" grep -qx "Version: $VERSION" "$PC"
PKG_CONFIG_PATH=$U/lib/pkgconfig
export PKG_CONFIG_PATH
check "pkg-config --modversion" test "$(pkg-config --modversion onnxconvert)" = "$VERSION"
check "pkg-config --cflags" test "$(pkg-config --cflags onnxconvert | sed 's/ *$//')" = "-I$U/include"
check "pkg-config --static --libs" sh -c \
    "pkg-config --static --libs onnxconvert | grep -q -- '-lonnxconvert -lprotobuf-c -lopenblas -lm'"

# ---- the header alone ----------------------------------------------------

printf '#include <onnxconvert.h>\nint main(void) { return oc_version()[0] == 0; }\n' > "$TMP/h.c"
check "header compiles as C99 -pedantic" $CC -std=c99 -Wall -Wextra -Werror -pedantic \
    -I"$U/include" -c "$TMP/h.c" -o "$TMP/h.o"
if command -v c++ > /dev/null 2>&1; then
    # linking proves the extern "C" guards: without them the names are mangled
    printf '#include <onnxconvert.h>\n#include <cstring>\nint main() { return std::strlen(oc_version()) == 0; }\n' > "$TMP/h.cc"
    check "header compiles and links as C++" sh -c "c++ -std=c++11 -Wall -Wextra -Werror \
        -pedantic '$TMP/h.cc' \$(pkg-config --cflags --libs onnxconvert) -o '$TMP/hpp' && \
        LD_LIBRARY_PATH='$U/lib' '$TMP/hpp'"
else
    echo "install: no C++ compiler, the C++ check is skipped"
fi

# ---- the example of docs/c-library.md ------------------------------------

sed -n '/^<!-- example: begin -->$/,/^<!-- example: end -->$/p' docs/c-library.md |
    sed -e '1,2d' -e '$d' | sed '$d' > "$TMP/example.c"
check "docs/c-library.md has the example" grep -q 'oc_load_file' "$TMP/example.c"

# What the tool says the same conversion and optimization give.
"$U/bin/onnx-convert" convert $MODEL --opset 9 --optimize -o "$TMP/tool.onnx" > "$TMP/tool.txt" 2>&1
want_nodes=$(sed -n 's/^optimized: [0-9]* -> \([0-9]*\) nodes.*/\1/p' "$TMP/tool.txt")
check "the tool optimizes the model" test -n "$want_nodes"

# run_example NAME ENV...: runs $TMP/NAME on the model, and checks what it
# printed and saved.
run_example() {
    name=$1
    shift
    out=$TMP/$name.onnx
    if ! env "$@" "$TMP/$name" $MODEL 9 "$out" > "$TMP/$name.txt" 2> "$TMP/$name.err"; then
        bad "$name failed: $(cat "$TMP/$name.err")"
        return
    fi
    ok
    check "$name: before" grep -qx "loaded $MODEL: opset 13, 10 nodes" "$TMP/$name.txt"
    check "$name: after" grep -qx "converted: opset 9, ir_version 4" "$TMP/$name.txt"
    check "$name: as many nodes as the tool ($want_nodes)" \
        grep -qx "optimized: $want_nodes nodes" "$TMP/$name.txt"
    check "$name: outputs" sh -c "grep -qx 'output logits: \[1,10\], 40 bytes' '$TMP/$name.txt' &&
        grep -qx 'output probs: \[1,10\], 40 bytes' '$TMP/$name.txt'"
    check "$name: saved" grep -qx "saved $out" "$TMP/$name.txt"
    check "$name: onnx-convert check accepts the saved model" "$U/bin/onnx-convert" check "$out"
    check "$name: the saved model is at opset 9" sh -c \
        "'$U/bin/onnx-convert' info '$out' | grep -q 'opset_import *ai.onnx 9'"
    # a missing model: exit 1, one line naming it
    env "$@" "$TMP/$name" "$TMP/missing.onnx" 9 "$TMP/x.onnx" > /dev/null 2> "$TMP/$name.err"
    st=$?
    check "$name: a missing model fails in one line" sh -c "test $st = 1 &&
        test \$(wc -l < '$TMP/$name.err') = 1 && grep -q 'example: .*missing.onnx' '$TMP/$name.err'"
    check "$name: nothing saved on failure" test ! -e "$TMP/x.onnx"
}

if $CC -std=c11 -Wall -Wextra -Werror "$TMP/example.c" $(pkg-config --cflags --libs onnxconvert) \
       -o "$TMP/example_shared" 2> "$TMP/cc.log"; then
    ok
    check "the example needs libonnxconvert.so.$MAJOR" sh -c \
        "readelf -d '$TMP/example_shared' | grep -q 'NEEDED.*\[libonnxconvert.so.$MAJOR\]'"
    run_example example_shared LD_LIBRARY_PATH="$U/lib"
else
    bad "the example does not build against the shared library: $(head -n 5 "$TMP/cc.log")"
fi

static_libs=$(pkg-config --static --libs onnxconvert | sed 's/-lonnxconvert/-l:libonnxconvert.a/')
if $CC -std=c11 -Wall -Wextra -Werror "$TMP/example.c" $(pkg-config --cflags onnxconvert) \
       $static_libs -o "$TMP/example_static" 2> "$TMP/cc.log"; then
    ok
    check "the static example needs no libonnxconvert.so" sh -c \
        "! readelf -d '$TMP/example_static' | grep -q libonnxconvert"
    run_example example_static
    check "static and shared print the same" sh -c \
        "sed 's/example_[a-z]*/X/' '$TMP/example_static.txt' > '$TMP/a' &&
         sed 's/example_[a-z]*/X/' '$TMP/example_shared.txt' > '$TMP/b' && cmp -s '$TMP/a' '$TMP/b'"
else
    bad "the example does not build against the static library: $(head -n 5 "$TMP/cc.log")"
fi

# ---- make uninstall ---------------------------------------------------------

make -s BUILD="$BUILD" uninstall PREFIX="$U" DESTDIR= > "$TMP/make.log" 2>&1
left=$(find "$U" ! -type d)
check "make uninstall removes every file ($left)" test -z "$left"

# ---- staged: DESTDIR=$TMP/stage PREFIX=/usr ----------------------------------

S=$TMP/stage
if make -s BUILD="$BUILD" install PREFIX=/usr DESTDIR="$S" > "$TMP/make.log" 2>&1; then
    ok
    check "staged: only usr/ under DESTDIR" test "$(ls "$S")" = "usr"
    for f in bin/onnx-convert lib/libonnxconvert.a lib/libonnxconvert.so.$VERSION \
             lib/libonnxconvert.so.$MAJOR lib/libonnxconvert.so include/onnxconvert.h \
             share/man/man1/onnx-convert.1; do
        check "staged: usr/$f" test -e "$S/usr/$f"
    done
    check "staged: no include/onnx-convert/" test ! -e "$S/usr/include/onnx-convert"
    spc=$S/usr/lib/pkgconfig/onnxconvert.pc
    check "staged .pc: prefix=/usr" grep -qx "prefix=/usr" "$spc"
    check "staged .pc: libdir=/usr/lib" grep -qx "libdir=/usr/lib" "$spc"
    check "staged .pc: includedir=/usr/include" grep -qx "includedir=/usr/include" "$spc"
    check "staged .pc: no DESTDIR in it" sh -c "! grep -q '$S' '$spc'"
else
    bad "make install DESTDIR=$S PREFIX=/usr failed: $(tail -n 5 "$TMP/make.log")"
fi

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
