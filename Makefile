# onnx-convert build. `make` builds build/onnx-convert and the library
# (build/libonnxconvert.a and build/libonnxconvert.so.VERSION);
# `make check` runs every test and ends with "N passed, N failed, N skipped";
# `make demo` converts and optimizes a model from testdata/ and says what it did.

CC      ?= cc
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
# The Python package goes where /usr/bin/python3 looks for PREFIX: its
# folder for /usr/local (Debian: lib/python3.X/dist-packages), the same
# path below any other PREFIX, and Debian's own lib/python3/dist-packages
# for PREFIX=/usr. Computed on first use only, and once; PYTHONDIR=...
# overrides it.
PY_LOCAL_DIR = $(or $(shell /usr/bin/python3 -c \
    'import os, sysconfig; print(os.path.relpath(sysconfig.get_path("purelib"), "/usr/local"))' \
    2>/dev/null),lib/python3/dist-packages)
PYTHONDIR ?= $(eval PYTHONDIR := $(PREFIX)/$(if $(filter /usr /usr/,$(PREFIX)),lib/python3/dist-packages,$(PY_LOCAL_DIR)))$(PYTHONDIR)
BUILD   := build
ASAN    := build-asan
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
CFLAGS  ?= -O2 -g
INC     := -Isrc -I. -Iinclude -I$(BUILD)/gen
LIBS    := -lprotobuf-c -lopenblas -lm
# The normal build's objects go into the shared library too: position
# independent, and hidden unless include/onnxconvert.h marks them
# ONNXCONVERT_API, so that the .so exports only oc_*.
LIBFLAGS := -fPIC -fvisibility=hidden
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
# The tests again under clang: its UBSan also knows float-cast-overflow,
# which gcc's does not.
CLANG    := build-clang
CLANG_CC ?= clang
CLANG_SANFLAGS := -O1 -g -fsanitize=address,undefined,float-cast-overflow \
                  -fno-sanitize-recover=all -fno-omit-frame-pointer

# Debian packages the build needs (`make deps` installs them when it can).
DEB_PKGS := gcc make libprotobuf-c-dev protobuf-c-compiler uthash-dev libopenblas-dev
# and the tests (the install test, the man page, the JSON reports' parser)
CHECK_PKGS := pkgconf man-db python3
# and the Python package's tests (tests/install.sh installs it with pip)
CHECK_PKGS += python3-numpy python3-venv python3-pip
# A clone without ../shared beside it (and no $ONNX_BACKEND_DATA) runs the
# data tests on Debian's copy of the ONNX backend node tests (ONNX 1.12);
# what that data lacks is skipped and counted (tests/run.sh).
ifeq ($(ONNX_BACKEND_DATA)$(wildcard ../shared/testdata/onnx-backend),)
CHECK_PKGS += libonnx-testdata
endif
# and the second sanitized build (clang's UBSan catches float-to-integer overflow)
CHECK_PKGS += clang libclang-rt-14-dev
# and onnx 1.12's shape inference as a second opinion (tests/onnx_crosscheck.py;
# a test's judge only, never a dependency of the tool)
CHECK_PKGS += python3-onnx

# The product's rooms (docs/HACKING.md): src/ROOM/*.c, inference's op
# families in src/analysis/infer/, and the top-level adapters/ and passes/.
ROOMS   := base ir io schema analysis eval convert precision coreml driver
LIB_SRC := $(sort $(wildcard $(ROOMS:%=src/%/*.c) src/analysis/infer/*.c adapters/*.c passes/*.c))
# proto/NAME.proto -> $(BUILD)/gen/NAME.pb-c.[ch]: ONNX, and the Core ML
# messages the .mlpackage module reads and writes
PROTOS  := onnx coreml
GEN_SRC := $(PROTOS:%=$(BUILD)/gen/%.pb-c.c)
GEN_H   := $(PROTOS:%=$(BUILD)/gen/%.pb-c.h)
CLI_SRC := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TOOL_SRC := $(sort $(wildcard tests/tool_*.c))

# The library's version: the one written in the public header.
VERSION_PART = $(shell sed -n 's/^\#define ONNXCONVERT_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' include/onnxconvert.h)
MAJOR := $(call VERSION_PART,MAJOR)
MINOR := $(call VERSION_PART,MINOR)
PATCH := $(call VERSION_PART,PATCH)
VERSION := $(MAJOR).$(MINOR).$(PATCH)
SONAME  := libonnxconvert.so.$(MAJOR)
SHLIB   := libonnxconvert.so.$(VERSION)

OBJ      := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(PROTOS:%=$(BUILD)/obj/gen/%.pb-c.o)
ASAN_OBJ := $(LIB_SRC:%.c=$(ASAN)/obj/%.o) $(PROTOS:%=$(ASAN)/obj/gen/%.pb-c.o)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
ASAN_TESTS := $(TEST_SRC:tests/%.c=$(ASAN)/tests/%)
CLANG_OBJ := $(LIB_SRC:%.c=$(CLANG)/obj/%.o) $(PROTOS:%=$(CLANG)/obj/gen/%.pb-c.o)
# clang's sanitized run skips the three whole-corpus sweeps: gcc's
# sanitized build runs them already, and under clang they cost ~8 of make
# check's 30 minutes. What float-cast-overflow adds is covered by the unit,
# loader, evaluator, hostile-input and per-adapter tests it does run.
CLANG_SWEEPS := test_convert_matrix test_convert_models test_optimize_corpus
CLANG_TESTS := $(filter-out $(CLANG_SWEEPS:%=$(CLANG)/tests/%),$(TEST_SRC:tests/%.c=$(CLANG)/tests/%))
TOOLS    := $(TOOL_SRC:tests/%.c=$(BUILD)/tests/%)
# (defined before the `tests` rule, which names them as prerequisites)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCHES   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps check demo corpus-check install uninstall clean FORCE tests asan-tests clang-tests testdata bench bench-eval bench-big bench-big-tools bench-big3g opschema milops fuzz fuzz-deps
.SECONDARY:

all: $(BUILD)/onnx-convert $(BUILD)/libonnxconvert.a $(BUILD)/$(SHLIB)

# ---- generated protobuf code ----
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Iproto $<

# ---- normal build ----
HEADERS := $(wildcard include/*.h src/*/*.h src/*/*/*.h adapters/*.h passes/*.h)

# The normal build's compile flags; when they change (a new CFLAGS, or
# objects from before they were -fPIC) every object is built again.
FLAGS_NOW := $(CC) $(CSTD) $(CFLAGS) $(LIBFLAGS) $(WARN) $(INC)
$(BUILD)/flags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@
FORCE:

$(BUILD)/obj/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(LIBFLAGS) $(INC) -c $< -o $@

$(BUILD)/obj/%.o: %.c $(GEN_H) $(HEADERS) $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(LIBFLAGS) $(WARN) $(INC) $(VECFLAGS) -c $< -o $@

# The evaluator's loops are vectorized: gcc's default at -O2 (the "very
# cheap" cost model) leaves every loop whose length is not known or whose
# arrays may overlap scalar, which is all of them (tinybert's elementwise
# ops ran 4 floats at a time once this was on). Vectorizing elementwise
# float loops rounds each element as before; gcc never reorders a float sum
# without -ffast-math. Left out for a compiler that does not take the flag.
VECFLAGS :=
$(BUILD)/obj/src/eval/%.o: VECFLAGS = $(shell $(CC) -Werror -fvect-cost-model=dynamic \
    -c -x c /dev/null -o /dev/null 2>/dev/null && echo -fvect-cost-model=dynamic)

$(BUILD)/libonnxconvert.a: $(OBJ)
	rm -f $@
	ar rcs $@ $^

# The shared library, its soname link (what programs load) and its
# development link (what -lonnxconvert finds).
$(BUILD)/$(SHLIB): $(OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined $(CFLAGS) $^ $(LIBS) -o $@
	ln -sf $(SHLIB) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libonnxconvert.so

$(BUILD)/onnx-convert: $(CLI_SRC) src/cli/cli.h $(BUILD)/libonnxconvert.a
	$(CC) $(CSTD) $(CFLAGS) $(WARN) $(INC) $(CLI_SRC) $(BUILD)/libonnxconvert.a $(LIBS) -o $@

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(BUILD)/libonnxconvert.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) $(INC) -Itests $< $(BUILD)/libonnxconvert.a $(LIBS) -o $@

# ---- sanitized build (AddressSanitizer + UndefinedBehaviorSanitizer) ----
$(ASAN)/obj/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(SANFLAGS) $(INC) -c $< -o $@

$(ASAN)/obj/%.o: %.c $(GEN_H) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(SANFLAGS) $(WARN) $(INC) -c $< -o $@

$(ASAN)/libonnxconvert.a: $(ASAN_OBJ)
	rm -f $@
	ar rcs $@ $^

$(ASAN)/onnx-convert: $(CLI_SRC) src/cli/cli.h $(ASAN)/libonnxconvert.a
	$(CC) $(CSTD) $(SANFLAGS) $(WARN) $(INC) $(CLI_SRC) $(ASAN)/libonnxconvert.a $(LIBS) -o $@

$(ASAN)/tests/%: tests/%.c $(wildcard tests/*.h) $(ASAN)/libonnxconvert.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(SANFLAGS) $(WARN) $(INC) -Itests $< $(ASAN)/libonnxconvert.a $(LIBS) -o $@

# ---- the same sanitized tests built by clang ----
$(CLANG)/obj/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	@mkdir -p $(dir $@)
	$(CLANG_CC) $(CSTD) $(CLANG_SANFLAGS) $(INC) -c $< -o $@

$(CLANG)/obj/%.o: %.c $(GEN_H) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CLANG_CC) $(CSTD) $(CLANG_SANFLAGS) $(WARN) $(INC) -c $< -o $@

$(CLANG)/libonnxconvert.a: $(CLANG_OBJ)
	rm -f $@
	ar rcs $@ $^

$(CLANG)/onnx-convert: $(CLI_SRC) src/cli/cli.h $(CLANG)/libonnxconvert.a
	$(CLANG_CC) $(CSTD) $(CLANG_SANFLAGS) $(WARN) $(INC) $(CLI_SRC) $(CLANG)/libonnxconvert.a $(LIBS) -o $@

$(CLANG)/tests/%: tests/%.c $(wildcard tests/*.h) $(CLANG)/libonnxconvert.a
	@mkdir -p $(dir $@)
	$(CLANG_CC) $(CSTD) $(CLANG_SANFLAGS) $(WARN) $(INC) -Itests $< $(CLANG)/libonnxconvert.a $(LIBS) -o $@

tests: all $(TESTS) $(TOOLS) $(BENCHES)
asan-tests: $(ASAN)/onnx-convert $(ASAN_TESTS)
clang-tests: $(CLANG)/onnx-convert $(CLANG_TESTS)

# ---- entry points ----
deps:
	@missing=""; \
	for p in $(DEB_PKGS) $(if $(filter check,$(MAKECMDGOALS)),$(CHECK_PKGS)) $(if $(filter corpus-check,$(MAKECMDGOALS)),$(CORPUS_PKGS)); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null || exit 1; \
	  else \
	    echo "onnx-convert needs Debian packages that are missing; run:"; \
	    echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# The three builds of check (plain, sanitized, clang) use every core
# unless make was already given -j (then its job server shares them).
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: deps
	@$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS)) \
	  tests asan-tests clang-tests
	@CLANG_SWEEPS="$(CLANG_SWEEPS)" sh tests/run.sh $(BUILD) $(ASAN) $(CLANG)

demo: deps
	@$(MAKE) --no-print-directory all
	@sh tests/demo.sh $(BUILD)/onnx-convert

# The real-model corpus (issue 33): tests/corpus/gen.py exports it into
# $(CORPUS_DIR) (kept: only what is missing is exported again; point
# CORPUS_DIR at an earlier export, about 15 GB, to skip it), then
# tests/corpus/check.py runs every feature on every model file, judged by
# ONNX Runtime and Apple's loader (tests/judges.sh finds or installs them),
# and writes docs/corpus.md. On 2 idle cores: the export about 23 minutes
# the first time, the judging about 53.
CORPUS_PKGS := python3 python3-numpy python3-onnx python3-torch python3-torchvision
CORPUS_JOBS ?= 2
CORPUS_DIR ?= $(BUILD)/corpus
corpus-check: deps
	@$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS)) all
	/usr/bin/python3 tests/corpus/gen.py $(CORPUS_DIR) --jobs $(CORPUS_JOBS)
	@build=$(BUILD); . tests/judges.sh >/dev/null 2>&1; \
	  /usr/bin/python3 tests/corpus/check.py $(BUILD)/onnx-convert $(CORPUS_DIR) \
	    --jobs $(CORPUS_JOBS) --md docs/corpus.md --json $(BUILD)/corpus.json

# Regenerates the operator table from the ONNX operator data (the output
# is committed, so a normal build never needs ../shared).
OPSETS_JSON ?= ../shared/spec/onnx-opsets.json
opschema:
	python3 src/schema/opschema_gen.py $(OPSETS_JSON) src/schema/opschema_flags.txt src/schema/opschema_table.c

# Regenerates the MIL operator table from coremltools' op definitions
# (committed too).
MIL_DEFS ?= ../shared/tools/coremltools/src/coremltools/converters/mil/mil/ops/defs
milops:
	/usr/bin/python3 src/coreml/milops_gen.py $(MIL_DEFS) src/coreml/milops_table.c

# Rebuilds the models in testdata/ through the IR API (they are committed).
testdata: tests
	$(BUILD)/tests/tool_gen_models testdata

# `make install PREFIX=/usr/local` (DESTDIR=/stage puts the same tree under
# /stage, for packaging): the tool, its man page, the static and shared
# libraries, the public header and onnxconvert.pc, which names the real
# PREFIX (never DESTDIR). After installing to a system folder, run ldconfig.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(BUILD)/onnx-convert $(DESTDIR)$(BINDIR)/
	install -m 644 src/cli/onnx-convert.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(BUILD)/libonnxconvert.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/$(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libonnxconvert.so
	install -m 644 include/onnxconvert.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    include/onnxconvert.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/onnxconvert.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/onnxconvert.pc
	install -d $(DESTDIR)$(PYTHONDIR)/onnxconvert
	install -m 644 python/onnxconvert/*.py $(DESTDIR)$(PYTHONDIR)/onnxconvert/
	printf '# written by make install: where the library is\nLIBDIR = "%s"\n' \
	    '$(LIBDIR)' > $(DESTDIR)$(PYTHONDIR)/onnxconvert/_libdir.py

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/onnx-convert $(DESTDIR)$(MANDIR)/man1/onnx-convert.1 \
	    $(DESTDIR)$(LIBDIR)/libonnxconvert.a $(DESTDIR)$(LIBDIR)/$(SHLIB) \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libonnxconvert.so \
	    $(DESTDIR)$(INCLUDEDIR)/onnxconvert.h $(DESTDIR)$(LIBDIR)/pkgconfig/onnxconvert.pc
	rm -rf $(DESTDIR)$(PYTHONDIR)/onnxconvert

clean:
	rm -rf $(BUILD) $(ASAN) $(CLANG) $(FUZZ)

# ---- fuzzing (libFuzzer; needs Debian's clang and libclang-rt-14-dev) ----
# `make fuzz FUZZ_TIME=1800` runs the whole tool (tests/fuzz_target.h) on
# mutations of the seed models for that many seconds, one job. New inputs
# go to build-fuzz/corpus; an input that breaks something is written to
# build-fuzz/crash-* and belongs in tests/crashers/ (a regression test).
FUZZ      := build-fuzz
FUZZ_CC   ?= clang
FUZZ_TIME ?= 60
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined \
              -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_SEEDS ?= ../shared/testdata/onnx-backend/node
FUZZ_OBJ := $(LIB_SRC:%.c=$(FUZZ)/obj/%.o) $(PROTOS:%=$(FUZZ)/obj/gen/%.pb-c.o)

$(FUZZ)/obj/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(FUZZ_FLAGS) $(INC) -c $< -o $@

$(FUZZ)/obj/%.o: %.c $(GEN_H) $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(FUZZ_FLAGS) $(WARN) $(INC) -c $< -o $@

$(FUZZ)/fuzz_model: tests/fuzz_model.c tests/fuzz_target.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(CSTD) $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) $(INC) -Itests \
	    tests/fuzz_model.c $(FUZZ_OBJ) $(LIBS) -o $@

fuzz-deps:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 && \
	  [ -n "$$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -n 1)" ] || { \
	  echo "make fuzz needs clang and libFuzzer; run:"; \
	  echo "  sudo apt-get install -y clang libclang-rt-14-dev"; exit 1; }

fuzz: fuzz-deps $(FUZZ)/fuzz_model
	@mkdir -p $(FUZZ)/corpus $(FUZZ)/seeds
	@cp tests/crashers/* testdata/*.onnx $(FUZZ)/seeds/ 2>/dev/null || true
	@if [ -d "$(FUZZ_SEEDS)" ]; then \
	  for d in $(FUZZ_SEEDS)/*/; do \
	    [ -f "$$d/model.onnx" ] && cp "$$d/model.onnx" "$(FUZZ)/seeds/$$(basename $$d).onnx"; \
	  done; fi; true
	$(FUZZ)/fuzz_model -max_total_time=$(FUZZ_TIME) -timeout=20 -rss_limit_mb=4096 \
	    -max_len=65536 -print_final_stats=1 -artifact_prefix=$(FUZZ)/ \
	    $(FUZZ)/corpus $(FUZZ)/seeds

# ---- benchmarks (measurements; `make check` builds every one and runs
# each once on a tiny input, tests/bench_smoke.sh, so none breaks unseen) ----
# A bench program is its own file and the library: never the CLI's main.
$(BUILD)/bench/%: bench/%.c $(BUILD)/libonnxconvert.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) $(INC) $< $(BUILD)/libonnxconvert.a $(LIBS) -o $@

bench: $(BUILD)/bench/bench_loadsave
	$(BUILD)/bench/bench_loadsave

# The evaluator against ONNX Runtime (single-threaded both), for bench/README.md.
bench-eval: $(BUILD)/bench/bench_eval
	sh bench/bench_eval.sh

# What verification by default costs and says on the corpus (issue 36):
# every file with and without --no-verify, per feature (bench/verify_cost.py).
.PHONY: bench-verify
bench-verify: all
	/usr/bin/python3 bench/verify_cost.py $(BUILD)/onnx-convert $(CORPUS_DIR)

# The Python package against onnx.version_converter and ONNX Runtime's session.
.PHONY: bench-python bench-precision
bench-python: all
	/usr/bin/python3 bench/python_api.py

# Size, nodes and error per shared model per precision mode: the table of
# README.md ("Precision"); FULL=1 adds ONNX Runtime's error (docs/precision.md).
bench-precision: all
	/usr/bin/python3 bench/precision_table.py $(if $(FULL),--full)

# docs/coreml.md's op table (ONNX op -> MIL ops, first target, what the
# node tests refuse), measured by test_coreml and written between its
# markers; test_coreml fails while the page holds another.
.PHONY: coreml-table
coreml-table: $(BUILD)/tests/test_coreml
	CM_TABLE=$(BUILD)/coreml-table.md $(BUILD)/tests/test_coreml > /dev/null
	/usr/bin/python3 -c 'import sys; r = open("docs/coreml.md").read(); t = open(sys.argv[1]).read(); \
	b = "<!-- coreml-table: make coreml-table writes this -->\n"; e = "<!-- /coreml-table -->"; \
	i = r.index(b) + len(b); j = r.index(e, i); open("docs/coreml.md", "w").write(r[:i] + t + r[j:])' \
	    $(BUILD)/coreml-table.md

# Big models (issue 7): time and peak memory of load+save, conversions and
# optimize against cp of the same bytes, on generated models (~1 GB
# transformers, 10k/100k-node chains; BIG_MB=200 for a quick look), and a
# ~3 GB convert --optimize --verify. Free disk needed: about 4 x BIG_MB
# (4.6 GB at the default) and 7 GB; BIG_DIR=... puts the files elsewhere.
# `make bench-big-tools` only builds.
BENCH_BIG_TOOLS := $(BUILD)/onnx-convert $(BUILD)/bench/gen_model $(BUILD)/bench/cmp_outputs

bench-big-tools: $(BENCH_BIG_TOOLS)

bench-big: $(BENCH_BIG_TOOLS)
	sh bench/big.sh $(BIG_DIR)

bench-big3g: $(BENCH_BIG_TOOLS)
	sh bench/big3g.sh $(BIG_DIR)
