# allocmark: benchmark and compare allocator strategies. `make help` lists the goals.
# One executable per strategy (a row of allocators/strategies.txt) and compiler:
# the strategy is chosen with -DAM_STRATEGY, so its fast path inlines into the
# containers (no vtable). Reading this Makefile writes nothing and builds nothing:
# every file is made by a recipe, so `make -n` leaves the tree as it was.

.DEFAULT_GOAL := all

# make's built-in CC is "cc"; a compiler named by the user (command line or
# environment) also decides make bench's compilers (COMPILERS, below)
CC_GIVEN := $(filter-out default,$(origin CC))
# ... otherwise gcc by its name, so that make test builds the build/gcc that
# make bench measures (bench builds gcc and clang by name)
ifeq ($(CC_GIVEN),)
CC := $(if $(wildcard $(addsuffix /gcc,$(subst :, ,$(PATH)))),gcc,cc)
endif
OPT ?= -O2
# The C++ rows (a strategy source with a .cc file: pmr.cc, boost_lib.cc ...) compile
# that file with the C++ compiler of CC's family: g++ beside gcc, clang++ beside
# clang, c++ beside cc; CXX= names another. Only those files are C++.
ifeq ($(filter-out default,$(origin CXX)),)
CXX := $(patsubst %cc,%c++,$(subst clang,clang++,$(subst gcc,g++,$(CC))))
endif
# the row every cell is timed beside (cell/partner.h; below)
PARTNER ?= minimal
PYTHON ?= python3

# ---- the variables a user gives ----
# Every variable this Makefile reads from its command line (LINKED_ROWS: from
# the Makefile itself, a line a row). A value holding a newline is refused: make would cut the recipe there and hand the shell half
# a quoted word. A variable make does not know that looks like one of these
# (QUIK=1, quick=1, ALLOCATOR=) is refused too (tools/make_vars.py), and so is
# a value a switch does not know (QUICK=true): each would start the full
# default run without a word.
USER_VARS := CC CXX OPT TEST_OPT ALIGN DEBUG VARIANT EXTRA_CFLAGS EXTRA_LDFLAGS PARTNER PYTHON V EXTERNAL ALLOCATORS VIRTUAL \
	COMPILERS QUICK WORKLOADS SUITE SIZES SAMPLES ROUNDS SEED BASELINE CPU LAYOUT MEM_LIMIT OUT MARGIN REVISITS BUDGET \
	BENCH_FLAGS SHARD MERGE RUN RUNS BASE HF_WORKLOAD HF_SIZE HF_REPS HF_RUNS HF_STRATEGY FUZZ_SECONDS TRACE LINKED_ROWS
define am_newline


endef
$(foreach v,$(filter-out LINKED_ROWS,$(USER_VARS)),$(if $(findstring $(am_newline),$(value $(v))),$(error allocmark: $(v)= holds a newline, \
	which make cannot pass to a command whole; give a value without one)))
GIVEN_VARS := $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v)))
ifneq ($(filter-out $(USER_VARS),$(GIVEN_VARS)),)
VARS_NOTE := $(shell $(PYTHON) tools/make_vars.py $(USER_VARS) -- $(filter-out $(USER_VARS),$(GIVEN_VARS)))
$(if $(VARS_NOTE),$(error allocmark: $(VARS_NOTE)))
endif
# switch_check: the switch $(1) holds one of the values $(2), or nothing
switch_check = $(if $(filter-out $(2),$($(1))),$(error allocmark: $(1)=$($(1)) is not a value $(1) knows: give \
	one of $(2), or leave it out))
$(call switch_check,QUICK,1 yes 0 no)
$(call switch_check,LAYOUT,random fixed shifted)
$(foreach s,VIRTUAL DEBUG V,$(call switch_check,$(s),1 0))
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
PLATFORM_SRC := platform/platform_win32.c
else
EXE :=
OS_CFLAGS :=
# -ldl: dlsym and dladdr name the malloc library (in libc from glibc 2.34, an
# empty libdl there; before, and on some other Unixes, a library of its own)
OS_LIBS := -lm -lpthread -ldl
PLATFORM_SRC := platform/platform_posix.c
endif
# Every function and every loop the compiler aligns starts on a cache line
# (64 bytes), so that a loop's speed is its code's and not the accident of
# where the code before it ends. Without the first the same code ran at two
# speeds in one executable: clang's minimal ran alloc_pair 0-45% slower than
# the partner beside it (the same row) from one process to another. Without
# the second gcc's thrash_pool ran 1.5 us a repetition in some rows and 2.2-2.9
# in others, its inner loop across a line or not (docs/measurements.md, "The
# same code at two alignments").
ALIGN := -falign-functions=64 -falign-loops=64
# No debug information by default: it took a third of a row unit's compile
# time (2.9 s against 1.9) and changes none of its code (objdump -d the same
# with and without it); a count strips it anyway (runner/plain_copies.py).
# DEBUG=1 builds have it, make check's sanitizer builds add it for their
# reports, and EXTRA_CFLAGS=-g gives it to a build to be read line by line.
DEBUG_INFO := $(if $(filter 1,$(DEBUG)),-g)
CFLAGS_ALL := -std=c11 $(OPT) $(DEBUG_INFO) $(WARN) $(ALIGN) $(OS_CFLAGS) -Iplatform -Iallocators -Icontainers -Iworkloads $(if $(filter 1,$(DEBUG)),-DAM_DEBUG=1) $(EXTRA_CFLAGS)
# The strategy tests (tests/strategy/*.c, one binary a row and file) are
# compiled at TEST_OPT: they check what the code does, and at -O1 they build
# in three quarters of -O2's time, the largest part of make test's build
# (docs/measurements.md, "make test"); inline functions still inline. make
# check builds them at -O2, the optimisation the cells are measured at,
# under each sanitizer and DEBUG=1 (tests/run_check.py).
TEST_OPT ?= -O1
CFLAGS_TEST := $(TEST_OPT) $(filter-out $(OPT),$(CFLAGS_ALL))
LDLIBS_ALL := $(OS_LIBS) $(EXTRA_LDFLAGS)
# A C++ row's .cc as C++17 with the C flags but the standard; its fast paths
# are extern "C" calls that link-time optimisation inlines into the C unit,
# which for those rows is built with -flto too, and with -fexceptions so that
# a call that catches (std::bad_alloc) may inline into C. The C++ library is
# linked by name, so that the C driver links every cell.
CXXFLAGS_ALL := -std=c++17 $(filter-out -std=c11,$(CFLAGS_ALL))
CXX_ROW_CFLAGS := -flto=auto -fexceptions
# the .cc as a release build of C++ is compiled: without its libraries' asserts (Boost's)
CXX_NDEBUG := -DNDEBUG
CXX_ROW_LIBS := -lstdc++
# clang's C driver links the sanitizers' C runtime only; UBSan's checks of a
# C++ row's virtual calls (vptr) are in its C++ runtime (gcc's is one library)
CXX_ROW_LIBS += $(if $(and $(findstring clang,$(CC)),$(findstring -fsanitize,$(EXTRA_LDFLAGS))),-fsanitize-link-c++-runtime)

.PHONY: FORCE
FORCE:

# ---- the flags stamp ----
# Every object depends on this file, rewritten only when the flags change, so
# that `make bench OPT=-O3` after an -O2 build rebuilds instead of measuring
# stale code. Reading the old text is all the Makefile does here; the recipe
# writes the new one.
FLAGS_STAMP := $(BUILD)/flags.txt
FLAGS_TEXT := $(CC) $(CFLAGS_ALL) | $(LDLIBS_ALL) | partner $(PARTNER)
ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_TEXT))
$(FLAGS_STAMP): FORCE
endif
$(FLAGS_STAMP):
	@mkdir -p $(@D)
	@printf '%s\n' '$(FLAGS_TEXT)' > $@
# the strategy tests' optimisation: a stamp of its own, so that TEST_OPT
# rebuilds the tests and nothing else
TEST_STAMP := $(BUILD)/testflags.txt
ifneq ($(file <$(TEST_STAMP)),$(TEST_OPT))
$(TEST_STAMP): FORCE
endif
$(TEST_STAMP):
	@mkdir -p $(@D)
	@printf '%s\n' '$(TEST_OPT)' > $@
# the C++ rows' compiler and flags: a stamp of their own, so that flags.txt
# keeps its three fields (cc flags | ldlibs | partner) for the tools that read it
CXX_STAMP := $(BUILD)/cxxflags.txt
CXX_TEXT := $(CXX) $(CXXFLAGS_ALL) $(CXX_ROW_CFLAGS) $(CXX_NDEBUG)
ifneq ($(file <$(CXX_STAMP)),$(CXX_TEXT))
$(CXX_STAMP): FORCE
endif
$(CXX_STAMP):
	@mkdir -p $(@D)
	@printf '%s\n' '$(CXX_TEXT)' > $@

# ---- the rows, read from allocators/strategies.txt ----
# one word a row: row|source|cflags|libs ("-" for none, "~" for a space)
STRATEGY_LINES := $(shell awk '!/^\#/ && NF >= 4 {print $$1 "|" $$2 "|" $$3 "|" $$4}' allocators/strategies.txt)

# EXTERNAL=name:/path/to/libfoo.so (several: comma-separated): a row
# system-<name> for any malloc library, the system source linked against that
# file, with an rpath to its folder so that the cell finds it at run time.
# Bad input stops make before anything runs (exit status 2).
ext_comma := ,
EXTERNAL_ITEMS := $(subst $(ext_comma), ,$(EXTERNAL))
ext_name = $(firstword $(subst :, ,$(1)))
ext_path = $(abspath $(patsubst $(call ext_name,$(1)):%,%,$(1)))
NAME_CHARS := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z \
	0 1 2 3 4 5 6 7 8 9 _ -
# what is left of a name without the characters a row name may have: empty when well formed
name_rest = $(strip $(eval am_rest := $(1))$(foreach c,$(NAME_CHARS),$(eval am_rest := $(subst $(c),,$(am_rest))))$(am_rest))
ext_error = $(error allocmark: EXTERNAL=$(EXTERNAL): $(1) (want EXTERNAL=name:/path/to/libfoo.so, \
	several separated by commas; a name of letters, digits, _ and -))
ext_check = $(if $(filter-out 2,$(words $(subst :, ,$(1)))),$(call ext_error,'$(1)' is not name:path), \
	$(if $(call name_rest,$(call ext_name,$(1))),$(call ext_error,the name '$(call ext_name,$(1))' has characters other than letters$(ext_comma) digits$(ext_comma) _ and -)) \
	$(if $(wildcard $(call ext_path,$(1))),,$(call ext_error,no file $(call ext_path,$(1)))) \
	$(if $(wildcard $(call ext_path,$(1))/.),$(call ext_error,$(call ext_path,$(1)) is a folder)) \
	$(if $(filter system-$(call ext_name,$(1))|%,$(STRATEGY_LINES)),$(call ext_error,row system-$(call ext_name,$(1)) exists already)))
$(foreach e,$(EXTERNAL_ITEMS),$(call ext_check,$(e)))
EXTERNAL_ROWS := $(foreach e,$(EXTERNAL_ITEMS),system-$(call ext_name,$(e)))
$(if $(filter-out $(words $(EXTERNAL_ROWS)),$(words $(sort $(EXTERNAL_ROWS)))),$(call ext_error,a name given twice))
STRATEGY_LINES += $(foreach e,$(EXTERNAL_ITEMS),system-$(call ext_name,$(e))|system|-|$(call \
	ext_path,$(e))~-Wl$(ext_comma)-rpath$(ext_comma)$(dir $(call ext_path,$(e))))
# <row>@virtual: every row again (but the A/A control, a second build of a
# row), its strategy reached through a table of function pointers
# (-DAM_VIRTUAL=1, allocator.h), as std::pmr containers reach theirs; built
# with VIRTUAL=1 or when named in ALLOCATORS
VIRTUAL_SUFFIX := @virtual
base_row = $(patsubst %$(VIRTUAL_SUFFIX),%,$(1))
row_field = $(word $(2),$(subst |, ,$(filter $(call base_row,$(1))|%,$(STRATEGY_LINES))))
dash_empty = $(if $(filter -,$(1)),,$(subst ~, ,$(1)))
ALL_ROWS := $(foreach l,$(STRATEGY_LINES),$(firstword $(subst |, ,$(l))))
PLAIN_ROWS := $(strip $(foreach r,$(ALL_ROWS),$(if $(call dash_empty,$(call row_field,$(r),4)),,$(r))))
row_source = $(call row_field,$(1),2)
row_libs = $(call dash_empty,$(call row_field,$(1),4))
row_cflags = -DAM_STRATEGY=$(call row_source,$(1)) -DAM_STRATEGY_H='"$(call row_source,$(1)).h"' \
	-DAM_STRATEGY_C='"$(call row_source,$(1)).c"' -DAM_ROW_NAME='"$(1)"' $(call dash_empty,$(call row_field,$(1),3)) \
	$(if $(filter %$(VIRTUAL_SUFFIX),$(1)),-DAM_VIRTUAL=1)
# a C++ row: its source has a .cc beside its .h and .c; row_cxx is that file,
# empty for a C row, and cxx_objs the row variant's object of it
row_cxx = $(wildcard allocators/$(call row_source,$(1)).cc)
cxx_cflags = $(if $(call row_cxx,$(1)),$(CXX_ROW_CFLAGS))
cxx_libs = $(if $(call row_cxx,$(1)),$(CXX_ROW_LIBS))
cxx_objs = $(if $(call row_cxx,$(call variant_row,$(1))),$(BUILD)/$(1)/row_cxx.o)
CXX_ROWS := $(strip $(foreach r,$(ALL_ROWS),$(if $(call row_cxx,$(r)),$(r))))
# ... which a dry run without the probe's list leaves out, as rows with libraries
PLAIN_ROWS := $(filter-out $(CXX_ROWS),$(PLAIN_ROWS))
# tests/strategy/test_<source>.c (test_monotonic.c ...) holds tests of one
# strategy source only: it is built for that source's rows, the rest for all
STRATEGY_TESTS := $(basename $(notdir $(wildcard tests/strategy/*.c)))
SOURCES := $(sort $(foreach r,$(ALL_ROWS),$(call row_field,$(r),2)))
tests_of = $(filter-out $(addprefix test_,$(filter-out $(call row_field,$(1),2),$(SOURCES))),$(STRATEGY_TESTS))
UNIT_TESTS := $(basename $(notdir $(wildcard tests/unit/*.c)))
comma := ,

# ---- which rows link: the library probe ----
# A row linked against a library (-ljemalloc ...) is built only where that
# library links. This recipe finds out once a build (a library may have been
# installed since the last one); the file changes only when the list does.
ROWS_FILE := $(BUILD)/rows.txt
$(ROWS_FILE): allocators/strategies.txt $(FLAGS_STAMP) FORCE
	@sh tools/rows_that_link.sh $@ "$(CC)" "$(EXE)" "$(CXX) $(CXXFLAGS_ALL)" \
		$(foreach r,$(ALL_ROWS),$(r):$(call row_field,$(r),4)$(if $(call row_cxx,$(r)),:$(call row_cxx,$(r)):$(call row_field,$(r),3)))

# The goals that build every row. make fixes a goal's prerequisites before any
# recipe runs, so these run in a sub-make given the rows that link
# (LINKED_ROWS). A dry run (make -n) has no probe result on a fresh tree, and
# shows the rows that need no library.
ROW_GOALS := all cells tests-build fuzz-build
.PHONY: $(ROW_GOALS)
ifeq ($(origin LINKED_ROWS),undefined)
ASKED := $(if $(MAKECMDGOALS),$(filter $(ROW_GOALS),$(MAKECMDGOALS)),all)
ifneq ($(ASKED),)
$(firstword $(ASKED)): $(ROWS_FILE)
	+@$(MAKE) --no-print-directory $(ASKED) LINKED_ROWS="$$(cat $(ROWS_FILE) 2>/dev/null || echo $(PLAIN_ROWS))"
$(wordlist 2,$(words $(ASKED)),$(ASKED)): $(firstword $(ASKED))
	@:
endif
else
ROWS := $(filter $(LINKED_ROWS),$(ALL_ROWS))
ifneq ($(ALLOCATORS),)
ROWS := $(filter $(subst $(comma), ,$(ALLOCATORS)),$(ROWS) $(addsuffix $(VIRTUAL_SUFFIX),$(filter-out control,$(ROWS))))
endif
ifeq ($(VIRTUAL),1)
ROWS += $(filter-out $(ROWS),$(addsuffix $(VIRTUAL_SUFFIX),$(filter-out %$(VIRTUAL_SUFFIX) control,$(ROWS))))
endif
all: cells tests-build
cells: $(foreach r,$(ROWS),$(BUILD)/bin/am-cell-$(r)$(EXE) $(BUILD)/bin/am-cell-$(r)-stats$(EXE))
tests-build: $(foreach r,$(ROWS),$(foreach t,$(call tests_of,$(r)),$(BUILD)/tests/$(r)/$(t)$(EXE))) \
             $(foreach t,$(UNIT_TESTS),$(BUILD)/unit/$(t)$(EXE))
fuzz-build: $(foreach r,$(ROWS),$(BUILD)/fuzz/$(r)/fuzz_allocator$(EXE))
endif

# the prerequisites of a rule below may name what its stem decides ($$*)
.SECONDEXPANSION:

# ---- a row's cells: cell/row_unit.c (every source but the cell's main) and
# cell/cell_main.c (the timing loop), two translation units ----
# A row's objects are built twice, in build/<cc>/<row>/ measured (AM_STATS=0)
# and in build/<cc>/<row>-stats/ counted (AM_STATS=1, the counting wrapper); the
# same rules make both, the folder's name says which.
# V=1 shows every compiler command; by default a cell says one line when
# linked, and a failure shows the compiler's message and make's target
ifeq ($(V),1)
Q :=
say_cell = @:
else
Q := @
say_cell = @$(if $(filter %-stats,$(1)),:,echo "  built $(CCNAME)$(VARIANT) $(1)")
endif
variant_row = $(patsubst %-stats,%,$(1))
variant_stats = $(if $(filter %-stats,$(1)),1,0)
compile_variant = $(CC) $(CFLAGS_ALL) $(call row_cflags,$(call variant_row,$*)) \
	-DAM_STATS=$(call variant_stats,$*) -MMD -MP -c $< -o $@
$(BUILD)/%/row_unit.o: cell/row_unit.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(compile_variant) $(call cxx_cflags,$(call variant_row,$*))
# a C++ row's .cc, with the row's defines as its C unit has them
$(BUILD)/%/row_cxx.o: $$(call row_cxx,$$(call variant_row,$$*)) $(FLAGS_STAMP) $(CXX_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CXX) $(CXXFLAGS_ALL) $(call row_cflags,$(call variant_row,$*)) -DAM_STATS=$(call variant_stats,$*) \
		$(CXX_ROW_CFLAGS) $(CXX_NDEBUG) -MMD -MP -c $< -o $@
$(BUILD)/%/cell_main.o: cell/cell_main.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(compile_variant)
# Each cell also holds its partner (cell/partner.h): the PARTNER row's unit,
# compiled once a build with every global name prefixed (AM_PARTNER_BUILD),
# timed beside the row in the same process. A partner must need no library
# of its own and be no @virtual twin: it is linked into every row's cell.
$(if $(filter $(PARTNER),$(ALL_ROWS)),,$(error allocmark: PARTNER=$(PARTNER) is not a row of allocators/strategies.txt))
$(if $(call row_cxx,$(PARTNER)),$(error allocmark: PARTNER=$(PARTNER) is a C++ row: it cannot be every cell's partner; \
	choose a C row (monotonic, minimal, pool ...)))
$(if $(call row_libs,$(PARTNER)),$(error allocmark: PARTNER=$(PARTNER) links a library of its own ($(call row_libs,$(PARTNER))): \
	it cannot be every cell's partner; choose a row without one (monotonic, minimal, pool ...)))
PARTNER_OBJ := $(BUILD)/partner-$(PARTNER)/row_unit.o
$(BUILD)/partner-%/row_unit.o: cell/row_unit.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_ALL) $(call row_cflags,$*) -DAM_STATS=0 -DAM_PARTNER_BUILD=1 -MMD -MP -c $< -o $@
# The trace reader (recorder/trace_read.c), which cell_main.c calls to decode
# --trace FILE, is one object a build linked into every cell, not part of the
# row's unit: there its code changed what the compiler inlined in every row.
TRACE_READ_OBJ := $(BUILD)/common/recorder/trace_read.o
$(BUILD)/bin/am-cell-%$(EXE): $(BUILD)/%/row_unit.o $(BUILD)/%/cell_main.o $(PARTNER_OBJ) $(TRACE_READ_OBJ) $$(call cxx_objs,$$*)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_ALL) $(call cxx_cflags,$(call variant_row,$*)) -o $@ $^ $(call row_libs,$(call variant_row,$*)) \
		$(call cxx_libs,$(call variant_row,$*)) $(LDLIBS_ALL)
	$(call say_cell,$*)

# the libFuzzer target of a row (build it with clang and the flags tests/run_check.py passes)
$(BUILD)/fuzz/%/fuzz_allocator$(EXE): fuzz/fuzz_allocator.c $(BUILD)/%-stats/row_unit.o $$(call cxx_objs,$$*-stats) \
		$(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(call row_cflags,$*) $(call cxx_cflags,$*) -DAM_STATS=1 -o $@ $(filter-out $(FLAGS_STAMP),$^) \
		$(call row_libs,$*) $(call cxx_libs,$*) $(LDLIBS_ALL) -fsanitize=fuzzer

# build/<cc>/tests/<row>/<test>: tests/strategy/<test>.c with the row's counted code
test_row = $(patsubst %/,%,$(dir $(1)))
$(BUILD)/tests/%$(EXE): tests/strategy/$$(notdir $$*).c $(BUILD)/common/tests/check.o \
		$(BUILD)/$$(call test_row,$$*)-stats/row_unit.o $$(call cxx_objs,$$(call test_row,$$*)-stats) $(FLAGS_STAMP) \
		$(TEST_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_TEST) $(call row_cflags,$(call test_row,$*)) $(call cxx_cflags,$(call test_row,$*)) -DAM_STATS=1 \
		-Itests -MMD -MP -o $@ $(filter %.c %.o,$^) $(call row_libs,$(call test_row,$*)) \
		$(call cxx_libs,$(call test_row,$*)) $(LDLIBS_ALL)

# ---- strategy-independent code: the unit tests and the test harness ----
UNIT_OBJS := $(patsubst %.c,$(BUILD)/common/%.o,allocators/allocator.c allocators/boost_pool.c \
	allocators/pool.c recorder/trace_read.c allocators/fast_pool.c $(PLATFORM_SRC))
$(BUILD)/common/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@
$(BUILD)/unit/%$(EXE): tests/unit/%.c $(BUILD)/common/tests/check.o $(UNIT_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Itests -MMD -MP -o $@ $(filter %.c %.o,$^) $(LDLIBS_ALL)

# the cell's sources lived in runner/ before cell/: an older build's .d files
# still name them, and these empty rules let such an object be rebuilt instead
# of stopping make
runner/row_unit.c runner/cell_main.c: ;

# objects shared by several links are never intermediate: keep them
.SECONDARY:
-include $(wildcard $(BUILD)/*/*.d $(BUILD)/tests/*/*.d $(BUILD)/common/*/*.d)

# ---- the commands ----
.PHONY: test test-windows bench count list report plots clean help hyperfine preload compare compiler-info check fuzz fuzz-selftest \
	record trace-info
# A value a user gives (ALLOCATORS=, OUT=, RUN= ...) reaches the shell only as
# one quoted word, so that `;`, spaces or quotes in it are the program's to
# refuse (exit 2), never the shell's to run. shell_words: each word of a list.
shell_word = '$(subst ','\'',$(1))'
shell_words = $(foreach w,$(1),$(call shell_word,$(w)))
# --option 'value' when the value is given
opt = $(if $(2),$(1) $(call shell_word,$(2)))
# GNU make exits 2 whenever a recipe fails; a goal whose command has exit
# statuses of its own records that status for tools/make.sh, which exits with it
KEEP_STATUS = st=$$?; [ -z "$$AM_STATUS_FILE" ] || echo $$st > "$$AM_STATUS_FILE"; exit $$st
# Scripts that run make themselves are given $(SUBMAKE): make runs a recipe
# line naming $$(MAKE) even under `make -n`, and a dry run must run nothing.
SUBMAKE = $(MAKE)
# The libraries of the system-jemalloc, -tcmalloc, -mimalloc, -tbbmalloc and
# -scudo rows: installed where we may (root), else those rows are left out, with
# a message. need_row checks that the row's own libs (strategies.txt) link.
need_malloc = CC="$(CC)" tools/need.sh --for "the $(1) row" $(2) $(3)
need_row = CC="$(CC)" tools/need.sh --for "the $(1) row" --libs "$(call row_libs,$(1))" $(2)
# The C++ rows' compiler (g++, or clang++, which comes with clang) and Boost's headers
NEED_CXX = CXX="$(CXX)" tools/need.sh --for "the C++ rows (pmr-*, boost-*)" $(firstword $(CXX)) \
	$(if $(findstring clang,$(CXX)),clang,g++) && \
	CXX="$(CXX)" tools/need.sh --for "the boost-* rows" --cxx-header boost/pool/pool.hpp libboost-dev
NEED_MALLOCS = $(NEED_CXX); \
	$(call need_malloc,system-jemalloc,jemalloc,libjemalloc-dev); \
	$(call need_malloc,system-tcmalloc,tcmalloc_minimal,libgoogle-perftools-dev); \
	$(call need_malloc,system-mimalloc,mimalloc,libmimalloc-dev); \
	$(call need_row,system-tbbmalloc,libtbb-dev); \
	$(call need_row,system-scudo,libclang-rt-14-dev)

# make test: C tests of every row and unit tests, the Python tests beside them;
# tests/run_all.py prints the closing "N passed, N failed, N skipped". The
# sanitizers are make check's (every row under ASan+UBSan, TSan, valgrind).
test:
	@$(NEED_MALLOCS); \
	tools/need.sh --for "the count tests (test_counts.py)" valgrind valgrind; \
	$(PYTHON) tests/run_all.py --make "$(SUBMAKE)" --build $(BUILD) --cc "$(CC)"

# make check: sanitizer, valgrind and debug-layer runs, detection tests and a
# short fuzzing run (tests/run_check.py, docs/check.md)
check:
	@$(PYTHON) tests/run_check.py --make "$(SUBMAKE)" --cc "$(CC)"

FUZZ_SECONDS ?= 60
fuzz:
	@$(PYTHON) tests/run_check.py --make "$(SUBMAKE)" --cc "$(CC)" --only fuzz --fuzz-seconds $(call shell_word,$(FUZZ_SECONDS))

# does the fuzzer find bugs? rows built with a deliberate one (-DAM_FUZZ_INJECT=n)
fuzz-selftest:
	@$(PYTHON) tests/run_check.py --make "$(SUBMAKE)" --cc "$(CC)" --only fuzz-selftest

# make bench: install the malloc libraries where we may, build each compiler's
# cells in build/<name>$(VARIANT)/, then run the matrix. A report with damaged
# files is still a report (its 1); one that cannot be written is a run folder
# that could not be written (4).
BENCH_BASE := $(or $(BASELINE),minimal$(comma)system)
# COMPILERS: the compiler commands, checked by runner/compilers.py before
# anything is built (a missing one: exit 2 naming it). CC given on the command
# line or in the environment means just that compiler.
ifeq ($(origin COMPILERS),undefined)
COMPILERS := $(if $(CC_GIVEN),$(CC))
endif
BENCH_ARGS := $(call opt,--allocators,$(ALLOCATORS)$(if $(ALLOCATORS),$(foreach r,$(EXTERNAL_ROWS),$(comma)$(r)))) \
	$(call opt,--workloads,$(WORKLOADS)) $(call opt,--suite,$(SUITE)) $(call opt,--sizes,$(SIZES)) \
	$(call opt,--samples,$(SAMPLES)) $(call opt,--rounds,$(ROUNDS)) $(call opt,--baseline,$(BASELINE)) \
	$(call opt,--seed,$(SEED)) $(call opt,--cpu,$(CPU)) $(call opt,--layout,$(LAYOUT)) $(call opt,--mem-limit,$(MEM_LIMIT)) \
	$(if $(filter 1 yes,$(QUICK)),--quick) $(call opt,--out,$(OUT)) \
	$(call opt,--margin,$(MARGIN)) $(call opt,--revisits,$(REVISITS)) $(call opt,--budget,$(BUDGET)) \
	$(if $(filter 1,$(VIRTUAL)),--virtual) $(foreach t,$(TRACE),--trace $(call shell_word,$(t))) \
	$(if $(TRACE)$(WORKLOADS)$(SUITE),,--shipped-traces) $(call shell_words,$(BENCH_FLAGS))
# shell snippets: $$ccs = the checked commands, then each one's cells built in
# build/<name>$(VARIANT)/ by a sub-make, $$names = those folders for --compilers
# QUICK=1 without COMPILERS measures one compiler: CC when given, else gcc
QUICK_CC := $(if $(filter 1 yes,$(QUICK)),$(if $(COMPILERS),,$(if $(CC_GIVEN),$(CC),gcc)))
CHECK_COMPILERS = ccs=$$($(PYTHON) -m runner.compilers $(call shell_words,$(or $(COMPILERS),$(QUICK_CC)))) || exit 2
BUILD_EACH = names=; for cc in $$ccs; do \
	  $(SUBMAKE) --no-print-directory -j$$(nproc 2>/dev/null || echo 2) cells compiler-info CC=$$cc $(1) || exit 1; \
	  names="$$names$${names:+,}$${cc\#\#*/}$(VARIANT)"; done
# an EXTERNAL row its library did not let link (the probe said why) is bad input
CHECK_EXTERNAL = for n in $$(echo $$names | tr , ' '); do for r in $(EXTERNAL_ROWS); do \
	  [ -e build/$$n/bin/am-cell-$$r$(EXE) ] || { echo "allocmark: EXTERNAL: row $$r is not built in build/$$n:" \
	  "its library does not link as a malloc library (see above)" >&2; exit 2; }; done; done
bench:
	@$(CHECK_COMPILERS); \
	$(NEED_MALLOCS); \
	$(call BUILD_EACH,$(if $(ALLOCATORS),$(call shell_word,ALLOCATORS=$(ALLOCATORS)$(comma)$(BENCH_BASE)$(foreach r,$(EXTERNAL_ROWS),$(comma)$(r))))); \
	$(CHECK_EXTERNAL); \
	AM_EXTERNAL=$(call shell_word,$(EXTERNAL)) $(PYTHON) -m runner.allocmark --compilers $$names $(BENCH_ARGS) && \
	{ $(PYTHON) -m report.report $(call shell_word,$(or $(OUT),results/latest)); [ $$? -le 1 ] || (exit 4); }; \
	$(KEEP_STATUS)

# make count: each compiler's cells built as for make bench, then every
# one-thread cell counted under valgrind (runner/counts.py); SHARD=i/N one
# part of the matrix, MERGE="part1 part2" the parts merged into OUT; TRACE as
# for make bench
COUNT_ARGS := $(call opt,--allocators,$(ALLOCATORS)) $(call opt,--workloads,$(WORKLOADS)) \
	$(call opt,--suite,$(SUITE)) $(call opt,--sizes,$(SIZES)) $(call opt,--baseline,$(BASELINE)) \
	$(call opt,--seed,$(SEED)) $(if $(filter 1 yes,$(QUICK)),--quick) $(call opt,--out,$(OUT)) \
	$(call opt,--shard,$(SHARD)) $(foreach t,$(TRACE),--trace $(call shell_word,$(t)))
count:
	@$(if $(MERGE),$(PYTHON) -m runner.allocmark --merge $(call shell_words,$(MERGE)) $(call opt,--out,$(OUT)); \
	$(KEEP_STATUS);) \
	$(CHECK_COMPILERS); \
	$(NEED_MALLOCS); \
	tools/need.sh --for "make count" valgrind valgrind || exit 2; \
	$(call BUILD_EACH,$(if $(ALLOCATORS),$(call shell_word,ALLOCATORS=$(ALLOCATORS)$(comma)$(BENCH_BASE)))); \
	$(PYTHON) -m runner.allocmark --count --compilers $$names $(COUNT_ARGS); \
	$(KEEP_STATUS)

# what meta.json says about this compiler: its command and every flag
compiler-info:
	@mkdir -p $(BUILD)
	@$(PYTHON) -c 'import json, os, sys; json.dump({"command": sys.argv[1], "opt": sys.argv[2], "flags": sys.argv[3]}, open(sys.argv[4] + ".tmp", "w")); os.replace(sys.argv[4] + ".tmp", sys.argv[4])' \
		'$(CC)' '$(OPT)' '$(CFLAGS_ALL) $(LDLIBS_ALL)' $(BUILD)/compiler.json

# make hyperfine: whole processes timed by hyperfine, written into RUN
RUN ?= results/latest
HF_ARGS := --run $(call shell_word,$(RUN)) $(call opt,--workload,$(HF_WORKLOAD)) $(call opt,--size,$(HF_SIZE)) \
	$(call opt,--reps,$(HF_REPS)) $(call opt,--runs,$(HF_RUNS)) \
	$(call opt,--strategy,$(HF_STRATEGY)) $(call opt,--allocators,$(ALLOCATORS))
hyperfine:
	@$(CHECK_COMPILERS); \
	tools/need.sh --for "make hyperfine" hyperfine hyperfine || exit 0; \
	$(call BUILD_EACH,$(if $(ALLOCATORS),$(call shell_word,ALLOCATORS=$(ALLOCATORS)$(comma)$(or $(HF_STRATEGY),system)))); \
	$(PYTHON) -m runner.hyperfine --compilers $$names $(HF_ARGS); \
	$(KEEP_STATUS)

# make preload CMD='program args' [TRACE=its trace] [RUN=folder]: the program
# itself under each malloc library (LD_PRELOAD), timed in rounds by hyperfine,
# beside the replay of TRACE in RUN (runner/preload.py); the malloc rows' cells
# are built first, as their links name each library's file
MALLOC_ROWS := $(strip $(foreach r,$(ALL_ROWS),$(if $(and $(filter system,$(call row_source,$(r))),$(filter \
	-,$(call row_field,$(r),3))),$(r))))
MALLOC_ROWS_LIST := $(subst $(eval) ,$(comma),$(MALLOC_ROWS))
preload:
	@if [ -z $(call shell_word,$(CMD)) ]; then echo "allocmark: make preload needs CMD='program and its arguments'" >&2; exit 2; fi; \
	$(PYTHON) -m runner.preload --check --cmd $(call shell_word,$(CMD)) $(call opt,--allocators,$(ALLOCATORS)) || exit 2; \
	tools/need.sh --for "make preload" hyperfine hyperfine || exit 0; \
	$(SUBMAKE) --no-print-directory -j$$(nproc 2>/dev/null || echo 2) cells \
		ALLOCATORS=$(call shell_word,$(or $(ALLOCATORS),$(MALLOC_ROWS_LIST))) || exit 1; \
	$(PYTHON) -m runner.preload --cmd $(call shell_word,$(CMD)) --run $(call shell_word,$(RUN)) \
		--compiler $(CCNAME)$(VARIANT) $(call opt,--trace,$(TRACE)) $(call opt,--allocators,$(ALLOCATORS)) \
		$(call opt,--rounds,$(ROUNDS)) $(call opt,--seed,$(SEED)); $(KEEP_STATUS)

# make compare RUNS="results/a results/b" [BASE=results/x] [MARGIN=0.02] [OUT=dir]
compare:
	@$(PYTHON) -m runner.compare $(call opt,--base,$(BASE)) $(call shell_words,$(RUNS)) $(call opt,--margin,$(MARGIN)) \
		$(call opt,--out,$(OUT)); $(KEEP_STATUS)

# the system row needs no library: its cell lists what every cell knows
list: $(BUILD)/bin/am-cell-system$(EXE)
	@AM_EXTERNAL=$(call shell_word,$(EXTERNAL)) $(PYTHON) -m runner.allocmark --list --compilers $(CCNAME)$(VARIANT)

# ---- make record and make trace-info (recorder/, docs/trace.md) ----
# The recording library is LD_PRELOAD on Linux with glibc, built only there;
# the trace reader and trace-info are portable C11. Both live in $(BUILD)/recorder/.
UNAME := $(shell uname -s 2>/dev/null)
RECORDER_LIB := $(BUILD)/recorder/libamrecord.so
TRACE_INFO := $(BUILD)/recorder/am-trace-info$(EXE)
# the library is every recorder/record_*.c (tests/python/test_recorder.py
# builds the same files into a variant of its own)
RECORDER_SRC := $(wildcard recorder/record_*.c)
$(RECORDER_LIB): $(RECORDER_SRC) recorder/record.h recorder/trace_format.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(OPT) -g $(WARN) -fPIC -shared -fvisibility=hidden -o $@ $(RECORDER_SRC) -ldl -lpthread
$(TRACE_INFO): recorder/trace_info.c recorder/trace_read.c recorder/trace_read.h recorder/trace_format.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -o $@ recorder/trace_info.c recorder/trace_read.c $(EXTRA_LDFLAGS)
# TRACE and CMD reach recorder/record.py as one word each, never a shell: it
# splits CMD into the program and its arguments itself
ifeq ($(UNAME)$(EXE),Linux)
record: $(RECORDER_LIB)
	@$(PYTHON) recorder/record.py --lib $(RECORDER_LIB) --trace $(call shell_word,$(TRACE)) \
		--cmd $(call shell_word,$(CMD)); $(KEEP_STATUS)
else
record:
	@echo "allocmark: make record needs Linux with glibc (an LD_PRELOAD library); make trace-info reads traces anywhere" >&2; exit 2
endif
trace-info: $(TRACE_INFO)
	@$(TRACE_INFO) $(call shell_word,$(TRACE)); $(KEEP_STATUS)

# MinGW-w64 cross build, run under wine (installs both where it may, else skips)
test-windows:
	@MAKE="$(SUBMAKE)" PYTHON="$(PYTHON)" sh tools/test_windows.sh

# plots and report of one run (default: the newest); RUN=results/<id> picks another
plots:
	@$(PYTHON) -m report.plots $(call shell_word,$(RUN)); $(KEEP_STATUS)
report:
	@$(PYTHON) -m report.report $(call shell_word,$(RUN)); $(KEEP_STATUS)

clean:
	rm -rf build

define HELP
allocmark: benchmark and compare allocator strategies (README.md, docs/).

  make               build every row's cells and tests with $(CC), in $(BUILD)/
  make test          build and run the test suite; ends "N passed, N failed, N skipped"
  make bench         run the benchmark matrix into results/<run>/ (docs/bench.md); ends with each
                     workload's fastest group, the full tables in results/<run>/tables.txt
  make count         instructions and simulated cache misses per operation of every one-thread
                     cell under valgrind, into OUT's counts.csv (docs/bench.md, Counts), and
                     beside the times in OUT's tables when it holds a timed run;
                     SHARD=i/N one part of the matrix; MERGE="a b" OUT=c the parts merged
  make check         the tests under ASan+UBSan, TSan, valgrind and DEBUG=1, detection
                     tests, short fuzzing (docs/check.md)
  make list          strategies, workloads and sizes
  make report        the HTML report of RUN (default results/latest); make plots: its plots
  make compare RUNS="results/a results/b"   several runs side by side (docs/compilers.md)
  make compare BASE=results/a RUNS=results/b   the regression gate: fails when a cell moved beyond
                     the noise or the run cannot be judged (docs/bench.md)
  tools/make.sh GOAL ...   make GOAL, exiting with its command's own status, which make turns into 2:
                     compare 1 moved, 3 cannot be judged, 2 bad input; bench 3 every cell
                     failed, 4 run folder not written (docs/bench.md, Exit statuses through make);
                     record the program's own status
  make hyperfine     whole-process timings with hyperfine, into RUN (docs/compilers.md)
  make record TRACE=FILE CMD='program and its arguments'   run the program under the recorder
                     (Linux, glibc): its malloc, free ... calls into FILE, one trace a process
                     (docs/trace.md); exits with the program's status, 2 when it cannot start
  make preload CMD='program args' [TRACE=FILE]   the program itself under each malloc library
                     (LD_PRELOAD), timed in rounds by hyperfine, held against the replay of its
                     trace in RUN (docs/trace.md, "Held against the program")
  make trace-info TRACE=FILE   a trace's profile: calls by kind, threads, sizes, lifetimes, peak
                     and final live bytes, cross-thread frees; a cut trace says where it ends
  make fuzz          fuzz every row for FUZZ_SECONDS (default 60) each, clang + libFuzzer
  make fuzz-selftest the fuzzer must find deliberate bugs (AM_FUZZ_INJECT) in two rows
  make test-windows  MinGW-w64 build, its tests and a cell per row under wine (docs/windows.md)
  make cells | tests-build | fuzz-build   build just those (a line a row; V=1: every command)
  make clean         remove build/

Variables (make VAR=value ...):
  CC=clang           the compiler (default gcc), built in build/<its name>/
  CXX=clang++        the C++ compiler of the C++ rows (pmr-*, boost-*; default: CC's sibling,
                     g++ beside gcc, clang++ beside clang); rows it cannot build are left out
  OPT="-O3"          optimisation flags (default -O2); EXTRA_CFLAGS, EXTRA_LDFLAGS: more
                     (EXTRA_CFLAGS=-g: debug information, which builds leave out but DEBUG=1's)
  TEST_OPT=-O2       the strategy tests' optimisation (default -O1; make check builds them at -O2)
  ALIGN=             functions and loops not aligned to a cache line (docs/compilers.md)
  DEBUG=1            the debug layer (a header and canary per block), in build/<cc>-debug/
  ALLOCATORS=a,b     only these rows (of allocators/strategies.txt, or their <row>@virtual twins)
  EXTERNAL=name:/path/to/libfoo.so   a row system-<name>: the system row linked against that
                     malloc library (comma-separated for several); it takes a malloc library,
                     not a row: a C++ row is not a malloc and has no EXTERNAL form
  VIRTUAL=1          also every row's <row>@virtual twin: its strategy through a table of
                     function pointers (run-time binding, as std::pmr); built and measured;
                     the C++ rows have twins too (pmr-monotonic@virtual)
  COMPILERS="gcc clang"  make bench, count and hyperfine: one build folder each, one matrix
  QUICK=1            make bench: the small matrix
  WORKLOADS= SUITE= SIZES= SAMPLES= ROUNDS= SEED= BASELINE= CPU= MEM_LIMIT= OUT=   make bench (docs/bench.md)
  MARGIN=0.02 REVISITS=   make bench and compare: the practical margin of a mark; revisits (docs/bench.md)
  BUDGET=S           make bench: seconds the run may take: rounds past the sixth and revisits stop there (QUICK=1: 55)
  LAYOUT=fixed       make bench: address-space randomization off for the cells (Linux): each
                     executable's processes at the same addresses, narrower intervals;
  LAYOUT=shifted     the same, and visit N of every cell moves its heap and mappings as
                     placement N of one fixed sequence: every run the same placements; default
                     random, a new layout each process (docs/bench.md, "Layout")
  TRACE="a.trace b.trace"   make bench and count: each recorded trace replayed through every strategy, the
                     workload trace:NAME (NAME: the file's name without its extension); alone,
                     the run measures the traces alone, WORKLOADS= adds others (docs/trace.md).
                     Without TRACE, WORKLOADS and SUITE, make bench adds the traces in traces/
                     to the default suite (QUICK=1: python-csv)
  V=1                every compiler command of the build (default: a line a row)
  PARTNER=minimal    the row every one-thread cell is timed beside, sample by sample, in its own
                     process (docs/bench.md, "The partner"); a row without a library of its own
endef
help:
	@:$(info $(HELP))
