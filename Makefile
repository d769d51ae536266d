# allocmark: benchmark and compare allocator strategies.
#   make            build every strategy's executables with $(CC)
#   make test       build and run the test suite (last line: N passed, N failed)
#   make test-windows  MinGW-w64 build, its tests and a cell run under wine
#   make bench      run the benchmark matrix, write results/<run>/ (QUICK=1: small matrix)
#   make list       strategies, workloads and sizes
#   make check      the test suite under ASan+UBSan, TSan, valgrind and DEBUG=1, detection tests, short fuzzing
#   make fuzz       fuzz every strategy for FUZZ_SECONDS (default 60) each, with clang and libFuzzer
#   make fuzz-selftest  the fuzzer must find deliberate bugs (AM_FUZZ_INJECT) in two rows (part of make check)
#   DEBUG=1         build with the allocmark debug layer (header and canary per block) in build/<cc>-debug
#   make hyperfine  whole-process timings with hyperfine, into RUN (results/latest)
#   make compare RUNS="results/a results/b"   several runs side by side
# COMPILERS="gcc clang-14" (make bench, make hyperfine): one build folder each,
# one matrix; default: CC when given, else every one of gcc and clang on PATH.
# One executable per strategy and compiler: the strategy is chosen with
# -DAM_STRATEGY, so its fast path inlines into the containers (no vtable).

# the flags stamp rule below would otherwise be the first target
.DEFAULT_GOAL := all

CC ?= cc
OPT ?= -O2
PYTHON ?= python3
# the compiler's name, for the build folder: "gcc", "clang-16", ...
CCNAME := $(notdir $(firstword $(CC)))
# VARIANT separates sanitizer and debug builds from measured ones
DEBUG ?=
ifeq ($(DEBUG),1)
VARIANT ?= -debug
endif
VARIANT ?=
BUILD := build/$(CCNAME)$(VARIANT)

WARN := -Wall -Wextra -Werror
# MinGW-w64 (CC=x86_64-w64-mingw32-gcc): Windows executables. The C99 printf
# (%zu, %llu) instead of msvcrt's; psapi for the process memory counters;
# static so that no MinGW DLL (libwinpthread, libgcc) is needed to run them.
ifneq ($(findstring mingw,$(CC)),)
EXE := .exe
OS_CFLAGS := -D__USE_MINGW_ANSI_STDIO=1
OS_LIBS := -lpsapi -static
else
EXE :=
OS_CFLAGS :=
# -ldl: dlsym and dladdr name the malloc library (in libc from glibc 2.34, an
# empty libdl there; before, and on some other Unixes, a library of its own)
OS_LIBS := -lm -lpthread -ldl
endif
CFLAGS_ALL := -std=c11 $(OPT) -g $(WARN) $(OS_CFLAGS) -Iplatform -Iallocators -Icontainers -Iworkloads $(if $(filter 1,$(DEBUG)),-DAM_DEBUG=1) $(EXTRA_CFLAGS)
LDLIBS_ALL := $(OS_LIBS) $(EXTRA_LDFLAGS)

# Files the Makefile writes as it is read, and rewrites only when their text
# changes, so that what depends on them rebuilds only then; not for the goals
# that build nothing. $(call write_if_changed,file,command printing the text)
WRITES_FILES := $(if $(MAKECMDGOALS),$(filter-out clean help compare bench hyperfine,$(MAKECMDGOALS)),all)
write_if_changed = $(shell mkdir -p $(dir $(1)) && $(2) > $(1).new && \
  { cmp -s $(1).new $(1) && rm -f $(1).new || mv -f $(1).new $(1); })

# Objects depend on this stamp, which changes only when the flags do, so that
# `make bench OPT=-O3` after an -O2 build rebuilds instead of measuring stale code.
FLAGS_STAMP := $(BUILD)/flags.txt
FLAGS_TEXT := $(CC) $(CFLAGS_ALL) | $(LDLIBS_ALL)
ifneq ($(WRITES_FILES),)
$(call write_if_changed,$(FLAGS_STAMP),printf '%s\n' '$(FLAGS_TEXT)')
endif
$(FLAGS_STAMP): ;

# ---- the rows, read from allocators/strategies.txt ----
STRATEGY_LINES := $(shell awk '!/^\#/ && NF >= 4 {print $$1 "|" $$2 "|" $$3 "|" $$4}' allocators/strategies.txt)
row_field = $(word $(2),$(subst |, ,$(filter $(1)|%,$(STRATEGY_LINES))))
dash_empty = $(if $(filter -,$(1)),,$(subst ~, ,$(1)))
ALL_ROWS := $(foreach l,$(STRATEGY_LINES),$(firstword $(subst |, ,$(l))))
# a row that needs a library is built only where the library links (to a
# temporary file: the MinGW linker cannot write to /dev/null)
links = $(shell t=$$(mktemp) && printf 'int main(void){return 0;}\n' | $(CC) -x c - -o "$$t" $(1) 2>/dev/null && echo yes; rm -f "$$t")
ROWS := $(foreach r,$(ALL_ROWS),$(if $(call dash_empty,$(call row_field,$(r),4)),$(if $(call links,$(call dash_empty,$(call row_field,$(r),4))),$(r)),$(r)))
comma := ,
ifneq ($(ALLOCATORS),)
ROWS := $(filter $(subst $(comma), ,$(ALLOCATORS)),$(ROWS))
endif

PLATFORM_SRCS := $(if $(findstring mingw,$(CC)),platform/platform_win32.c,platform/platform_posix.c)
ROW_SRCS := allocators/allocator.c $(wildcard containers/*.c) $(wildcard workloads/*.c) runner/cell_main.c $(PLATFORM_SRCS)
# engines that several strategies build on, linked into every row
ROW_SRCS += allocators/boost_pool.c
# the counting wrapper of AM_STATS builds (empty in measured ones)
ROW_SRCS += allocators/counting.c
# A row compiles as two translation units: cell_main.c, and $(ROW_UNIT), which
# includes every other row source and the strategy's own .c (AM_STRATEGY_C).
# One unit a row instead of 24 is three times faster to build (clang spends
# 0.14 s starting on each file), and the cell's timing loop stays in a unit of
# its own, as before. Slow paths are AM_NOINLINE, so the unit does not pull
# them into the fast paths; the workloads' statics carry the file's name.
ROW_UNIT := $(BUILD)/row_unit.c
ROW_UNIT_SRCS := $(filter platform/%,$(ROW_SRCS)) $(filter-out runner/cell_main.c platform/%,$(ROW_SRCS))
hash := \#
ROW_UNIT_TEXT := /* generated by the Makefile from ROW_SRCS: the code of a row but its main */ \
	$(foreach f,$(ROW_UNIT_SRCS),\n$(hash)include "$(f)") \n$(hash)include AM_STRATEGY_C
ifneq ($(WRITES_FILES),)
$(call write_if_changed,$(ROW_UNIT),printf '%b\n' '$(ROW_UNIT_TEXT)' | sed 's/^ //; s/ $$//')
endif
$(ROW_UNIT): ;
# strategy-independent code the unit tests link directly
UNIT_OBJS := $(patsubst %.c,$(BUILD)/common/%.o,allocators/allocator.c allocators/boost_pool.c allocators/pool.c allocators/fast_pool.c)
STRATEGY_TESTS := $(basename $(notdir $(wildcard tests/strategy/*.c)))
# tests/strategy/test_<source>.c (test_monotonic.c ...) holds tests of one
# strategy source only: it is built for that source's rows, the rest for all
SOURCES := $(sort $(foreach r,$(ALL_ROWS),$(call row_field,$(r),2)))
tests_of = $(filter-out $(addprefix test_,$(filter-out $(call row_field,$(1),2),$(SOURCES))),$(STRATEGY_TESTS))
UNIT_TESTS := $(basename $(notdir $(wildcard tests/unit/*.c)))

.PHONY: all test test-windows bench list report clean help deps hyperfine compare compiler-info check fuzz fuzz-selftest
# objects shared by several links are never intermediate: keep them
.SECONDARY:
all: cells tests-build

# ---- per-row build: measured objects (AM_STATS=0) and counted objects (AM_STATS=1) ----
define ROW_RULES
$(1)_SRC := $(call row_field,$(1),2)
$(1)_FLAGS := -DAM_STRATEGY=$$($(1)_SRC) -DAM_STRATEGY_H='"$$($(1)_SRC).h"' -DAM_ROW_NAME='"$(1)"' $(call dash_empty,$(call row_field,$(1),3))
$(1)_LIBS := $(call dash_empty,$(call row_field,$(1),4))
$(1)_OBJS := $(BUILD)/$(1)/row_unit.o $(BUILD)/$(1)/runner/cell_main.o
$(1)_SOBJS := $(BUILD)/$(1)-stats/row_unit.o $(BUILD)/$(1)-stats/runner/cell_main.o

$(BUILD)/$(1)/row_unit.o: $(ROW_UNIT) $(FLAGS_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) -I. $$($(1)_FLAGS) -DAM_STRATEGY_C='"allocators/$$($(1)_SRC).c"' -DAM_STATS=0 -MMD -MP -c $$< -o $$@
$(BUILD)/$(1)-stats/row_unit.o: $(ROW_UNIT) $(FLAGS_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) -I. $$($(1)_FLAGS) -DAM_STRATEGY_C='"allocators/$$($(1)_SRC).c"' -DAM_STATS=1 -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) $$($(1)_FLAGS) -DAM_STATS=0 -MMD -MP -c $$< -o $$@
$(BUILD)/$(1)-stats/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) $$($(1)_FLAGS) -DAM_STATS=1 -MMD -MP -c $$< -o $$@
$(BUILD)/bin/am-cell-$(1)$(EXE): $$($(1)_OBJS)
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) -o $$@ $$^ $$($(1)_LIBS) $(LDLIBS_ALL)
$(BUILD)/bin/am-cell-$(1)-stats$(EXE): $$($(1)_SOBJS)
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) -o $$@ $$^ $$($(1)_LIBS) $(LDLIBS_ALL)
$(BUILD)/tests/$(1)/%$(EXE): tests/strategy/%.c $(BUILD)/common/tests/check.o $$(filter-out %/cell_main.o,$$($(1)_SOBJS))
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) $$($(1)_FLAGS) -DAM_STATS=1 -Itests -MMD -MP -o $$@ $$(filter %.c %.o,$$^) $$($(1)_LIBS) $(LDLIBS_ALL)
# the libFuzzer target (build it with clang and the flags tests/run_check.py passes)
$(BUILD)/fuzz/$(1)/fuzz_allocator$(EXE): fuzz/fuzz_allocator.c $$(filter-out %/cell_main.o,$$($(1)_SOBJS))
	@mkdir -p $$(@D)
	$$(CC) $(CFLAGS_ALL) $$($(1)_FLAGS) -DAM_STATS=1 -o $$@ $$^ $$($(1)_LIBS) $(LDLIBS_ALL) -fsanitize=fuzzer
-include $$($(1)_OBJS:.o=.d) $$($(1)_SOBJS:.o=.d) $$(foreach t,$(STRATEGY_TESTS),$(BUILD)/tests/$(1)/$$(t).d)
endef
$(foreach r,$(ROWS),$(eval $(call ROW_RULES,$(r))))

$(BUILD)/common/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@
$(BUILD)/unit/%$(EXE): tests/unit/%.c $(BUILD)/common/tests/check.o $(BUILD)/common/$(basename $(PLATFORM_SRCS)).o $(UNIT_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $^ $(LDLIBS_ALL)

CELLS := $(foreach r,$(ROWS),$(BUILD)/bin/am-cell-$(r)$(EXE) $(BUILD)/bin/am-cell-$(r)-stats$(EXE))
TEST_BINS := $(foreach r,$(ROWS),$(foreach t,$(call tests_of,$(r)),$(BUILD)/tests/$(r)/$(t)$(EXE))) \
             $(foreach t,$(UNIT_TESTS),$(BUILD)/unit/$(t)$(EXE))

.PHONY: cells tests-build fuzz-build
cells: $(CELLS)
tests-build: $(TEST_BINS)
fuzz-build: $(foreach r,$(ROWS),$(BUILD)/fuzz/$(r)/fuzz_allocator$(EXE))

# ---- the two commands ----
# make test: C tests of every strategy, unit tests, then the Python tests;
# tests/run_all.py prints the closing "N passed, N failed". It also runs the
# strategy tests under ASan+UBSan (build/<cc>-asan), unless told --no-sanitizers.
test:
	@$(PYTHON) tests/run_all.py --make "$(MAKE)" --build $(BUILD) --cc "$(CC)" $(if $(findstring -fsanitize,$(EXTRA_CFLAGS)),--no-sanitizers)

# make check: sanitizer, valgrind and debug-layer runs, detection tests and a
# short fuzzing run (tests/run_check.py; it ends with "N passed, N failed").
check:
	@$(PYTHON) tests/run_check.py --make "$(MAKE)" --cc "$(CC)"

FUZZ_SECONDS ?= 60
fuzz:
	@$(PYTHON) tests/run_check.py --make "$(MAKE)" --cc "$(CC)" --only fuzz --fuzz-seconds $(FUZZ_SECONDS)

# does the fuzzer find bugs? rows built with a deliberate one (-DAM_FUZZ_INJECT=n)
fuzz-selftest:
	@$(PYTHON) tests/run_check.py --make "$(MAKE)" --cc "$(CC)" --only fuzz-selftest

# make bench: install the malloc libraries where we may (root), then build the
# cells in a sub-make (rows are chosen when the Makefile is read, so a library
# installed here shows up only there), then run the matrix.
NPROC := $(shell nproc 2>/dev/null || echo 2)
BENCH_BASE := $(or $(BASELINE),monotonic$(comma)system)
# COMPILERS: the compiler commands, checked by runner/compilers.py before
# anything is built (a missing one: exit 2 naming it). CC given on the command
# line or in the environment means just that compiler.
ifeq ($(origin COMPILERS),undefined)
COMPILERS := $(if $(filter default,$(origin CC)),,$(CC))
endif
BENCH_ARGS := $(if $(ALLOCATORS),--allocators $(ALLOCATORS)) \
	$(if $(WORKLOADS),--workloads $(WORKLOADS)) $(if $(SIZES),--sizes $(SIZES)) \
	$(if $(SAMPLES),--samples $(SAMPLES)) $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(BASELINE),--baseline $(BASELINE)) \
	$(if $(SEED),--seed $(SEED)) $(if $(CPU),--cpu $(CPU)) $(if $(MEM_LIMIT),--mem-limit $(MEM_LIMIT)) $(if $(filter 1 yes,$(QUICK)),--quick) $(if $(OUT),--out $(OUT)) $(BENCH_FLAGS)
# shell snippets: $$ccs = the checked commands, then each one's cells built in
# build/<name>$(VARIANT)/ by a sub-make, $$names = those folders for --compilers
# QUICK=1 without COMPILERS measures one compiler: CC when given, else gcc
QUICK_CC := $(if $(filter 1 yes,$(QUICK)),$(if $(COMPILERS),,$(if $(filter command line environment,$(origin CC)),$(CC),gcc)))
CHECK_COMPILERS = ccs=$$($(PYTHON) runner/compilers.py $(or $(COMPILERS),$(QUICK_CC))) || exit 2
BUILD_EACH = names=; for cc in $$ccs; do \
	  $(MAKE) --no-print-directory -j$(NPROC) cells compiler-info CC=$$cc $(1) || exit 1; \
	  names="$$names$${names:+,}$${cc\#\#*/}$(VARIANT)"; done
bench:
	@$(CHECK_COMPILERS); \
	tools/need.sh --for "the system-jemalloc row" jemalloc libjemalloc-dev; \
	tools/need.sh --for "the system-tcmalloc row" tcmalloc_minimal libgoogle-perftools-dev; \
	tools/need.sh --for "the system-mimalloc row" mimalloc libmimalloc-dev; \
	$(call BUILD_EACH,$(if $(ALLOCATORS),ALLOCATORS=$(ALLOCATORS)$(comma)$(BENCH_BASE))); \
	$(PYTHON) runner/allocmark.py --compilers $$names $(BENCH_ARGS) && \
	{ $(PYTHON) report/report.py $(or $(OUT),results/latest) || [ $$? -eq 1 ]; }

# what meta.json says about this compiler: its command and every flag
compiler-info:
	@mkdir -p $(BUILD)
	@$(PYTHON) -c 'import json, os, sys; json.dump({"command": sys.argv[1], "opt": sys.argv[2], "flags": sys.argv[3]}, open(sys.argv[4] + ".tmp", "w")); os.replace(sys.argv[4] + ".tmp", sys.argv[4])' \
		'$(CC)' '$(OPT)' '$(CFLAGS_ALL) $(LDLIBS_ALL)' $(BUILD)/compiler.json

# make hyperfine: whole processes timed by hyperfine, written into RUN
RUN ?= results/latest
HF_ARGS := --run $(RUN) $(if $(HF_WORKLOAD),--workload $(HF_WORKLOAD)) $(if $(HF_SIZE),--size $(HF_SIZE)) \
	$(if $(HF_REPS),--reps $(HF_REPS)) $(if $(HF_RUNS),--runs $(HF_RUNS)) \
	$(if $(HF_STRATEGY),--strategy $(HF_STRATEGY)) $(if $(ALLOCATORS),--allocators $(ALLOCATORS))
hyperfine:
	@$(CHECK_COMPILERS); \
	tools/need.sh --for "make hyperfine" hyperfine hyperfine || exit 0; \
	$(call BUILD_EACH,$(if $(ALLOCATORS),ALLOCATORS=$(ALLOCATORS)$(comma)$(or $(HF_STRATEGY),system))); \
	$(PYTHON) runner/hyperfine.py --compilers $$names $(HF_ARGS)

# make compare RUNS="results/a results/b" [OUT=dir]
compare:
	@$(PYTHON) runner/compare.py $(RUNS) $(if $(OUT),--out $(OUT))

list: $(firstword $(CELLS))
	@$(PYTHON) runner/allocmark.py --list --compilers $(CCNAME)$(VARIANT)

# MinGW-w64 cross build, run under wine (installs both where it may, else skips)
test-windows:
	@MAKE="$(MAKE)" PYTHON="$(PYTHON)" sh tools/test_windows.sh

help:
	@sed -n '2,15p' Makefile | sed 's/^# \{0,1\}//'

clean:
	rm -rf build

-include $(BUILD)/common/tests/check.d $(UNIT_OBJS:.o=.d) $(BUILD)/common/$(basename $(PLATFORM_SRCS)).d

# ---- plots and report of one run (default: the newest); RUN=results/<id> picks another ----
RUN ?= results/latest
.PHONY: plots
plots:
	@$(PYTHON) report/plots.py $(RUN)
report:
	@$(PYTHON) report/report.py $(RUN)
