# proftop — hand-written Makefile. `make help` lists the targets.
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man/man1
THEMEDIR ?= $(PREFIX)/share/proftop/themes
ALLOCLIBDIR ?= $(PREFIX)/lib/proftop

CC       ?= cc
PKGS     := ncursesw libunwind-generic libelf libdw libdebuginfod zlib capstone libmicrohttpd
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
CPPFLAGS += -Iinclude -D_GNU_SOURCE -DPROFTOP_VERSION=\"$(VERSION)\" \
            -DPROFTOP_THEMEDIR=\"$(THEMEDIR)\" -DPROFTOP_ALLOCLIBDIR=\"$(ALLOCLIBDIR)\"
VERSION  := 0.1.0
ALL_CFLAGS = -std=gnu11 $(WARN) -pthread $(CFLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -liberty -pthread -lm

# Debian packages the build and the tests need (pkg-config names are checked by `make deps`).
DEB_PKGS := build-essential pkg-config libncurses-dev libunwind-dev libelf-dev libdw-dev libcapstone-dev \
            libdebuginfod-dev libmicrohttpd-dev libcmocka-dev \
            libiberty-dev clang libclang-rt-14-dev tmux linux-perf perl zlib1g-dev \
            libdevel-dprof-perl valgrind heaptrack procps bc python3 golang-go debuginfod curl \
            libjemalloc2 libtcmalloc-minimal4 libcap2-bin redis-server

BUILD    ?= build
SRCS     := $(wildcard src/*.c)
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
OBJS     := $(SRCS:src/%.c=$(BUILD)/%.o)
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/%.o)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
WORKLOAD_CXX_SRCS := $(wildcard tests/workloads/*.cpp)
# The allocation-sampling library --mode alloc preloads (preload/alloc.c). Never built with the
# sanitizers' flags: it goes into programs that are not. Linked with what it uses only (the
# sections of allocrec.c it does not call dropped, no libm), and nothing left undefined.
ALLOC_LIB := $(BUILD)/libproftop-alloc.so
ALLOC_LIB_SRCS := preload/alloc.c preload/alloc_env.c src/shmring.c src/allocrec.c
WORKLOADS := $(WORKLOAD_SRCS:tests/workloads/%.c=$(BUILD)/workloads/%) \
             $(WORKLOAD_CXX_SRCS:tests/workloads/%.cpp=$(BUILD)/workloads/%)


.PHONY: FORCE all deps test test-body test-asan-body unit asan tsan demo bench fuzz man install clean help
# The sanitizer builds put their binary in their own tree so ./proftop stays the normal build.
PROFTOP_BIN ?= proftop
all: $(PROFTOP_BIN) $(ALLOC_LIB)

$(ALLOC_LIB): $(ALLOC_LIB_SRCS) preload/alloc_env.h include/proftop/shmring.h include/proftop/allocrec.h | $(BUILD)
	$(CC) -Iinclude -D_GNU_SOURCE -std=gnu11 $(WARN) -O2 -g -fPIC -shared -fvisibility=hidden \
	    -ftls-model=initial-exec -fasynchronous-unwind-tables -ffunction-sections \
	    -Wl,--gc-sections -Wl,-z,defs -pthread -o $@ $(ALLOC_LIB_SRCS) -ldl

$(PROFTOP_BIN): $(OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: src/%.c $(wildcard include/proftop/*.h) | $(BUILD)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -c -o $@ $<

# theme.c and allocrun.c have the themes' and the allocation library's directories built in:
# rebuild them when PREFIX (or THEMEDIR, ALLOCLIBDIR) changes, so `make install PREFIX=...`
# installs a binary that looks where they went.
$(BUILD)/themedir.stamp: FORCE | $(BUILD)
	@echo '$(THEMEDIR) $(ALLOCLIBDIR)' | cmp -s - $@ || echo '$(THEMEDIR) $(ALLOCLIBDIR)' > $@
$(BUILD)/theme.o $(BUILD)/allocrun.o: $(BUILD)/themedir.stamp
FORCE:

$(BUILD) $(BUILD)/tests $(BUILD)/workloads:
	mkdir -p $@

-include $(OBJS:.o=.d)

# Workloads are the programs the integration tests profile: -O2 and no frame pointers, like the
# software users profile. Each may have link flags in tests/workloads/NAME.flags.
$(BUILD)/workloads/%: tests/workloads/%.c tests/workloads/burn.h | $(BUILD)/workloads
	$(CC) -O2 -g -fomit-frame-pointer -pthread -o $@ $< \
	    $(shell cat tests/workloads/$*.flags 2>/dev/null)

$(BUILD)/workloads/%: tests/workloads/%.cpp tests/workloads/burn.h | $(BUILD)/workloads
	$(CXX) -O2 -g -fomit-frame-pointer -pthread -o $@ $< \
	    $(shell cat tests/workloads/$*.flags 2>/dev/null)

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/unit_*.h) $(LIB_OBJS) $(ALLOC_LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS) $(shell pkg-config --libs cmocka)

deps:
	@sh tests/deps.sh $(DEB_PKGS)

unit: $(UNIT_BINS)
	@sh tests/run_unit.sh $(UNIT_BINS)

# pkg-config runs when make reads this file, so targets that may need `deps` first re-run make.
test: deps
	@$(MAKE) --no-print-directory test-body

test-body: $(PROFTOP_BIN) $(ALLOC_LIB) $(UNIT_BINS) $(WORKLOADS) $(FUZZ_TARGETS)
	@PROFTOP_BIN=./$(PROFTOP_BIN) PROFTOP_FUZZ_TARGETS="$(FUZZ_TARGETS)" sh tests/run_all.sh $(BUILD)

# The whole suite again with AddressSanitizer + UndefinedBehaviorSanitizer in a separate tree.
asan:
	@sh tests/deps.sh $(DEB_PKGS)
	@$(MAKE) --no-print-directory BUILD=build-asan PROFTOP_BIN=build-asan/proftop \
	    CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" test-asan-body

test-asan-body: $(PROFTOP_BIN) $(ALLOC_LIB) $(UNIT_BINS) $(WORKLOADS)
	@PROFTOP_BIN=$(PROFTOP_BIN) PROFTOP_SANITIZER=asan sh tests/run_all.sh $(BUILD)

# The tests of every handoff between threads under ThreadSanitizer: the ring, the diagnostics
# channel, ring → collector thread → snapshots read on other threads (the HTTP server's among
# them), and the debuginfod fetcher.
TSAN_TESTS := build-tsan/tests/test_ring build-tsan/tests/test_diag build-tsan/tests/test_collector \
              build-tsan/tests/test_shmring build-tsan/tests/test_serve \
              build-tsan/tests/test_fetch
tsan:
	$(MAKE) BUILD=build-tsan CC=clang CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" \
	    $(TSAN_TESTS)
	for t in $(TSAN_TESTS); do TSAN_OPTIONS=halt_on_error=1 $$t || exit 1; done

demo: deps
	@$(MAKE) --no-print-directory proftop $(BUILD)/workloads/split
	./proftop -- $(BUILD)/workloads/split 5

BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
# make test builds the benchmarks too, so that they keep compiling (it does not run them).
test-body: $(BENCH_BINS)

$(BUILD)/bench/%: bench/%.c $(LIB_OBJS)
	@mkdir -p $(BUILD)/bench
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

bench: proftop $(WORKLOADS) $(BENCH_BINS)
	@sh bench/run.sh $(BUILD)

# The option lists of doc/proftop.1 and README.md come from src/options.c's table: `make man`
# writes them between each file's "options: begin" and "options: end" lines (and touches a file
# only when its list changed); test_options fails when a list differs from the table.
man: $(BUILD)/gen_options
	$(call splice_options,doc/proftop.1,man)
	$(call splice_options,README.md,markdown)

# splice_options FILE FORM: FILE with the lines between its markers replaced by gen_options FORM.
define splice_options
	$(BUILD)/gen_options $(2) > $(BUILD)/options.$(2)
	awk -v list=$(BUILD)/options.$(2) '/options: end/ { on = 0 } !on { print } 	    /options: begin/ { while ((getline l < list) > 0) print l; on = 1; n++ } 	    END { exit on || n != 1 }' $(1) > $(1).new || { rm -f $(1).new; exit 1; }
	cmp -s $(1) $(1).new && rm $(1).new || mv $(1).new $(1)
endef

$(BUILD)/gen_options: doc/gen_options.c $(LIB_OBJS) | $(BUILD)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

fuzz: $(FUZZ_TARGETS)
	@sh tests/run_fuzz.sh $${FUZZ_SECONDS:-60} $(FUZZ_TARGETS)

# proftop's sources are instrumented once (coverage, ASan, UBSan) and linked into every target.
FUZZ_CFLAGS := $(CPPFLAGS) -std=gnu11 -g -O1 -pthread $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
FUZZ_OBJS := $(LIB_SRCS:src/%.c=build-fuzz/obj/%.o)
.SECONDARY: $(FUZZ_OBJS)

build-fuzz/obj/%.o: src/%.c $(wildcard include/proftop/*.h)
	@mkdir -p build-fuzz/obj
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<

build-fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) $(wildcard tests/unit/unit_*.h)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

install: proftop $(ALLOC_LIB)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(THEMEDIR) $(DESTDIR)$(ALLOCLIBDIR)
	install -m 0755 proftop $(DESTDIR)$(BINDIR)/proftop
	install -m 0644 $(ALLOC_LIB) $(DESTDIR)$(ALLOCLIBDIR)/libproftop-alloc.so
	install -m 0644 doc/proftop.1 $(DESTDIR)$(MANDIR)/proftop.1
	for t in themes/*.theme; do [ -e "$$t" ] && install -m 0644 "$$t" $(DESTDIR)$(THEMEDIR)/; done; true

clean:
	rm -rf build build-asan build-tsan build-fuzz proftop

help:
	@echo "make [all]     build ./proftop"
	@echo "make deps      install the Debian packages the build and tests need (apt-get, as root)"
	@echo "make demo      build and profile a bundled workload"
	@echo "make test      build and run every test"
	@echo "make asan      the test suite under AddressSanitizer + UBSan"
	@echo "make tsan      the thread handoff tests under ThreadSanitizer"
	@echo "make fuzz      libFuzzer targets (FUZZ_SECONDS=60 each)"
	@echo "make bench     overhead and throughput benchmarks"
	@echo "make man       the option lists of doc/proftop.1 and README.md, from src/options.c"
	@echo "make install   PREFIX=$(PREFIX)"
