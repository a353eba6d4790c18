# proftop — hand-written Makefile. `make help` lists the targets.
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man/man1
THEMEDIR ?= $(PREFIX)/share/proftop/themes
ALLOCLIBDIR ?= $(PREFIX)/lib/proftop

CC       ?= cc
PKGS     := ncursesw libunwind-generic libelf libdw libdebuginfod zlib capstone libmicrohttpd libcurl
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
            libdevel-dprof-perl valgrind heaptrack procps bc python3 golang-go debuginfod curl rustc \
            openjdk-17-jdk-headless nodejs postgresql redis-server \
            libjemalloc2 libtcmalloc-minimal4 libcap2-bin lcov \
            libcurl4-openssl-dev protobuf-compiler chromium
# npm packages the tests need: speedscope's web app, which speedscope.sh opens in chromium.
NPM_PKGS := speedscope@1.25.0

BUILD    ?= build
SRCS     := $(wildcard src/*.c src/ui/*.c)
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
OBJS     := $(SRCS:src/%.c=$(BUILD)/%.o)
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/%.o)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
WORKLOAD_CXX_SRCS := $(wildcard tests/workloads/*.cpp)
WORKLOAD_RS_SRCS := $(wildcard tests/workloads/*.rs)
WORKLOAD_GO_SRCS := $(wildcard tests/workloads/*.go)
# The allocation-sampling library --mode alloc preloads (preload/alloc.c). Never built with the
# sanitizers' flags: it goes into programs that are not. Linked with what it uses only (the
# sections of allocrec.c it does not call dropped, no libm), and nothing left undefined.
ALLOC_LIB := $(BUILD)/libproftop-alloc.so
ALLOC_LIB_SRCS := preload/alloc.c preload/alloc_env.c src/shmring.c src/allocrec.c
WORKLOADS := $(WORKLOAD_SRCS:tests/workloads/%.c=$(BUILD)/workloads/%) \
             $(WORKLOAD_CXX_SRCS:tests/workloads/%.cpp=$(BUILD)/workloads/%) \
             $(WORKLOAD_RS_SRCS:tests/workloads/%.rs=$(BUILD)/workloads/%) \
             $(WORKLOAD_GO_SRCS:tests/workloads/%.go=$(BUILD)/workloads/%)


.PHONY: FORCE all deps test test-body test-asan-body unit it asan tsan demo bench fuzz man install clean help
# The sanitizer builds put their binary in their own tree so ./proftop stays the normal build.
PROFTOP_BIN ?= proftop
all: $(PROFTOP_BIN) $(ALLOC_LIB)

$(ALLOC_LIB): $(ALLOC_LIB_SRCS) preload/alloc_env.h include/proftop/shmring.h include/proftop/allocrec.h | $(BUILD)
	$(CC) -Iinclude -D_GNU_SOURCE -std=gnu11 $(WARN) -O2 -g -fPIC -shared -fvisibility=hidden \
	    -ftls-model=initial-exec -fasynchronous-unwind-tables -ffunction-sections \
	    -Wl,--gc-sections -Wl,-z,defs -pthread -o $@ $(ALLOC_LIB_SRCS) -ldl

$(PROFTOP_BIN): $(OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Each object is rebuilt when a header it includes changes: the compiler lists them (-MMD),
# each header a target of its own too (-MP), so a header moved or removed stops no build.
$(BUILD)/%.o: src/%.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# theme.c and allocrun.c have the themes' and the allocation library's directories built in:
# rebuild them when PREFIX (or THEMEDIR, ALLOCLIBDIR) changes, so `make install PREFIX=...`
# installs a binary that looks where they went.
$(BUILD)/themedir.stamp: FORCE | $(BUILD)
	@echo '$(THEMEDIR) $(ALLOCLIBDIR)' | cmp -s - $@ || echo '$(THEMEDIR) $(ALLOCLIBDIR)' > $@
$(BUILD)/ui/theme.o $(BUILD)/allocrun.o: $(BUILD)/themedir.stamp
FORCE:

$(BUILD) $(BUILD)/tests $(BUILD)/workloads:
	mkdir -p $@

-include $(OBJS:.o=.d)

# Workloads are the programs the integration tests profile: -O2 and no frame pointers, like the
# software users profile. Each may have link flags in tests/workloads/NAME.flags.
$(BUILD)/workloads/%: tests/workloads/%.c tests/workloads/burn.h tests/workloads/lies.h | $(BUILD)/workloads
	$(CC) -O2 -g -fomit-frame-pointer -pthread -o $@ $< \
	    $(shell cat tests/workloads/$*.flags 2>/dev/null)

$(BUILD)/workloads/%: tests/workloads/%.cpp tests/workloads/burn.h | $(BUILD)/workloads
	$(CXX) -O2 -g -fomit-frame-pointer -pthread -o $@ $< \
	    $(shell cat tests/workloads/$*.flags 2>/dev/null)

# Go's programs as `go build` makes them (with symbols and DWARF); its cache in the build tree,
# so that no HOME is needed.
$(BUILD)/workloads/%: tests/workloads/%.go | $(BUILD)/workloads
	GOCACHE=$(abspath $(BUILD))/go-cache GO111MODULE=off go build -o $@ $<

# Rust's programs as their users build them for profiling: optimised, with debug info.
$(BUILD)/workloads/%: tests/workloads/%.rs | $(BUILD)/workloads
	MAKEFLAGS= rustc -O -g -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) $(ALLOC_LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -o $@ $< $(LIB_OBJS) $(LDLIBS) $(shell pkg-config --libs cmocka)

-include $(UNIT_BINS:=.d)

deps:
	@sh tests/deps.sh $(DEB_PKGS)
	@sh tests/deps_npm.sh $(NPM_PKGS)

# T=NAME (or T="NAME ...") runs tests/unit/test_NAME.c's tests alone; without T, every unit test.
UNIT_CHOSEN := $(if $(T),$(patsubst %,$(BUILD)/tests/test_%,$(T)),$(UNIT_BINS))
unit: $(UNIT_CHOSEN)
	@sh tests/run_unit.sh $(UNIT_CHOSEN)

# T=NAME (or T="NAME ...") runs tests/integration/NAME.sh alone against ./proftop.
it: $(PROFTOP_BIN) $(ALLOC_LIB) $(WORKLOADS)
	@[ -n "$(T)" ] || { echo "make it T=NAME runs tests/integration/NAME.sh (ls tests/integration)"; exit 2; }
	@rc=0; for t in $(T); do PROFTOP_BIN=./$(PROFTOP_BIN) BUILD_DIR=$(BUILD) \
	    sh tests/integration/$$t.sh || rc=1; done; exit $$rc

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

# Under ThreadSanitizer: every unit test that starts threads, itself (pthread_create) or through
# a module that does (the ring → collector → snapshot readers, the HTTP server, the debuginfod
# fetcher, the diagnostics channel's writers). Not the allocation library's: it goes into
# programs built without TSan, uninstrumented, and its test calls it from signal handlers.
THREADED_HEADERS := $(patsubst src/%.c,-e proftop/%.h,$(shell grep -l pthread_create src/*.c src/ui/*.c))
TSAN_TESTS := $(patsubst tests/unit/%.c,build-tsan/tests/%,$(filter-out tests/unit/test_alloclib.c, \
              $(shell grep -l -e pthread_create $(THREADED_HEADERS) tests/unit/test_*.c)))
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

# The option lists of doc/proftop.1 and README.md come from src/options_table.c's table: `make
# man` writes them between each file's "options: begin" and "options: end" lines (and touches a
# file only when its list changed); test_options fails when a list differs from the table.
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

build-fuzz/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c -o $@ $<

build-fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -MMD -MP -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_TARGETS:=.d)

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
	@echo "make deps      install the Debian and npm packages the build and tests need (as root)"
	@echo "make demo      build and profile a bundled workload"
	@echo "make test      build and run every test"
	@echo "make unit      the unit tests (T=ring: tests/unit/test_ring.c alone)"
	@echo "make it T=tui  one integration script, tests/integration/tui.sh"
	@echo "make asan      the test suite under AddressSanitizer + UBSan"
	@echo "make tsan      the thread handoff tests under ThreadSanitizer"
	@echo "make fuzz      libFuzzer targets (FUZZ_SECONDS=60 each)"
	@echo "make bench     overhead and throughput benchmarks"
	@echo "make man       the option lists of doc/proftop.1 and README.md, from src/options_table.c"
	@echo "make install   PREFIX=$(PREFIX)"
