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
# The Python package: where make install puts it (a folder the system's
# python3 searches, below PREFIX) and `pip install --no-index ./python` into
# a fresh virtual environment both import and convert a model as the
# installed tool does (tests/install_pycheck.py).
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

# ---- the Python package (make install, then pip in a virtual environment) --

# pycheck WHAT PYTHONPATH PYTHON ARGS...: tests/install_pycheck.py run by
# PYTHON (from $TMP, so that the checkout's python/ is not what gets
# imported); each of its "PASS"/"FAIL" lines is one check.
pycheck() {
    what=$1
    pypath=$2
    py=$3
    shift 3
    mkdir -p "$TMP/py_$what"
    (cd "$TMP" && PYTHONPATH=$pypath "$py" "$OLDPWD/tests/install_pycheck.py" "$@" \
        "$TMP/py_$what" $PYMODEL) \
        > "$TMP/py_$what.txt" 2>&1
    if ! grep -q '^PASS import onnxconvert$' "$TMP/py_$what.txt"; then
        bad "$what: import onnxconvert failed: $(tail -n 3 "$TMP/py_$what.txt" | tr '\n' ' ')"
        return
    fi
    while read -r verdict line; do
        case $verdict in
            PASS) ok ;;
            FAIL) bad "$what: $line" ;;
        esac
    done < "$TMP/py_$what.txt"
}

# A model of ../shared at opset 13 when there; else the checker builds one.
PYMODEL=
[ -f ../shared/models/vit_tiny_opset13/model.onnx ] &&
    PYMODEL=$(cd ../shared/models/vit_tiny_opset13 && pwd)/model.onnx

# make install's PYTHONDIR for PREFIX=/usr/local is a folder the system's
# python3 searches (so that `import onnxconvert` needs no PYTHONPATH there).
sysdir=$(make -s -n BUILD="$BUILD" install PREFIX=/usr/local DESTDIR= 2>/dev/null |
    sed -n 's|^install -d \(.*\)/onnxconvert$|\1|p')
check "PYTHONDIR for /usr/local ($sysdir) is on /usr/bin/python3's sys.path" \
    /usr/bin/python3 -c "import sys; d = '$sysdir'
sys.exit(not (d.startswith('/usr/local/lib/') and d in sys.path))"
# and for PREFIX=$U, the same path below it
pydir=$U/${sysdir#/usr/local/}
check "package installed in $pydir" test -f "$pydir/onnxconvert/__init__.py"
check "_libdir.py names LIBDIR" grep -qx "LIBDIR = \"$U/lib\"" "$pydir/onnxconvert/_libdir.py"
check "no library copied beside the installed package" \
    test ! -e "$pydir/onnxconvert/libonnxconvert.so.$MAJOR"
pycheck make_install "$pydir" /usr/bin/python3 "$pydir" \
    "$U/lib/libonnxconvert.so.$MAJOR" "$U/bin/onnx-convert" "$VERSION"

# pip install ./python into a fresh virtual environment that sees Debian's
# onnx and numpy, offline (--no-index: nothing may be downloaded, which
# also proves the build needs no setuptools or wheel), with pip's default
# build isolation. The wheel carries the checkout's build/ library.
V=$TMP/venv
find python | sort > "$TMP/python.before"
PIP=$V/bin/pip
# no user or site configuration, no cache outside $TMP, no version check
PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_CONFIG_FILE PIP_NO_CACHE_DIR PIP_DISABLE_PIP_VERSION_CHECK
if ! /usr/bin/python3 -m venv --system-site-packages "$V" > "$TMP/venv.log" 2>&1; then
    bad "python3 -m venv failed: $(tail -n 3 "$TMP/venv.log" | tr '\n' ' ')"
elif ! env -u PYTHONPATH $PIP install --no-index ./python > "$TMP/pip.log" 2>&1; then
    bad "pip install --no-index ./python failed: $(tail -n 5 "$TMP/pip.log" | tr '\n' ' ')"
else
    ok
    vdir=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    check "pip installed a platform wheel ($(grep -o 'onnxconvert-[^ ]*\.whl' "$TMP/pip.log" | head -n 1))" \
        grep -q "onnxconvert-$VERSION-py3-none-linux_[a-z0-9_]*\.whl" "$TMP/pip.log"
    check "the wheel's library is beside the package" \
        cmp -s "$vdir/onnxconvert/libonnxconvert.so.$MAJOR" "$BUILD/libonnxconvert.so.$VERSION"
    pycheck venv "" "$V/bin/python" "$vdir" \
        "$vdir/onnxconvert/libonnxconvert.so.$MAJOR" "$U/bin/onnx-convert" "$VERSION"
    $PIP show onnxconvert > "$TMP/pip.show" 2>&1
    check "pip show: version $VERSION, requires numpy" sh -c \
        "grep -qx 'Version: $VERSION' '$TMP/pip.show' && grep -qx 'Requires: numpy' '$TMP/pip.show'"
    # uninstalling goes by the wheel's RECORD: every file it listed goes
    $PIP uninstall -y onnxconvert > "$TMP/pip.log" 2>&1
    check "pip uninstall removes the package" test ! -e "$vdir/onnxconvert"
fi
find python | sort > "$TMP/python.after"
check "pip wrote nothing into python/" cmp -s "$TMP/python.before" "$TMP/python.after"

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
    # PREFIX=/usr: Debian's own folder for packages, which its python3 reads
    spy=$S/usr/lib/python3/dist-packages/onnxconvert
    check "staged: the Python package in usr/lib/python3/dist-packages" test -f "$spy/__init__.py"
    check "/usr/lib/python3/dist-packages is on /usr/bin/python3's path" \
        /usr/bin/python3 -c 'import sys; sys.exit("/usr/lib/python3/dist-packages" not in sys.path)'
    check "staged _libdir.py: LIBDIR /usr/lib, no DESTDIR" \
        grep -qx 'LIBDIR = "/usr/lib"' "$spy/_libdir.py"
else
    bad "make install DESTDIR=$S PREFIX=/usr failed: $(tail -n 5 "$TMP/make.log")"
fi

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
