# mvm — one Makefile. `make` builds build/mvm; `make test` runs everything.
BUILD   ?= build
CC      ?= gcc
PKGS    := slirp libcjson libseccomp nettle
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
           -Wformat=2 -Wno-format-truncation -Wvla -Wimplicit-fallthrough
CFLAGS  ?= -O2 -g
override CFLAGS += -std=gnu11 $(WARN) -I. -MMD -MP -D_GNU_SOURCE
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libslirp (and the glib it drags in) is linked only into the network helper
# mvm-net (tools/nethelper/), never into mvm: the VMM holding /dev/kvm and
# guest memory must not map them (docs/security.md).
PKG_LIBS   = $(shell pkg-config --libs $(filter-out slirp,$(PKGS)) 2>/dev/null)
# Nor libseccomp: its compiler runs at build time (seccomp-gen below), and
# mvm and mvm-net only install the programs it wrote.
MVM_LIBS   = $(shell pkg-config --libs $(filter-out slirp libseccomp,$(PKGS)) 2>/dev/null)
HELPER_LIBS = $(shell pkg-config --libs slirp 2>/dev/null)
LDLIBS  += -lpthread

# Everything but main() goes into libmvm.a so unit tests reach the CLI parsers too.
# The product's folders, bottom layer first (docs/ARCHITECTURE.md).
PRODUCT_DIRS := common vmm/confine vmm devices devices/netpolicy images snapshots \
                tools/sandbox tools/promote tools/mcp tools/cli
LIB_SRCS  := $(sort $(filter-out tools/cli/mvm.c,$(foreach d,$(PRODUCT_DIRS),$(wildcard $(d)/*.c)))) \
             $(wildcard guest/agent/proto*.c guest/agent/tree*.c)
TOOL_SRCS := tools/cli/mvm.c
HELPER_SRCS := tools/nethelper/mvm_net.c
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))
GUEST_INIT_SRCS := $(sort $(wildcard guest/init/*.c))
GUEST_AGENT_SRCS := $(sort $(wildcard guest/agent/*.c))
GUEST_WGET_SRCS := $(sort $(wildcard guest/wget/*.c))

# The seccomp tables as BPF, generated (vmm/confine/seccomp_prog.h).
# libseccomp's compiler (vmm/confine/gen/seccomp_build.c) is build-time only:
# the generator's and the unit tests', never in libmvm, mvm or mvm-net.
SC_BUILD_OBJ := $(BUILD)/obj/vmm/confine/gen/seccomp_build.o
SC_GEN_SRCS := vmm/confine/gen/seccomp_gen.c vmm/confine/gen/seccomp_build.c \
               $(addprefix vmm/confine/seccomp_,vcpu.c main.c blk.c nethelper.c relay.c keeper.c)
SC_PROGS  := $(BUILD)/gen/seccomp_progs.c
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/seccomp_progs.o
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
HELPER_OBJS := $(HELPER_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
LIBMVM    := $(BUILD)/libmvm.a
DEPS_OK   := $(BUILD)/.deps-ok

.PHONY: all deps guest test unit integration testhooks asan tsan fuzz fuzz-quick bench bench-boot \
        bench-image bench-exec bench-net bench-snapshot bench-start bench-guest-io bench-hash \
        bench-create-copy bench-browser demo clean format install
all: $(BUILD)/mvm guest

# `make deps` runs every time (cheap dpkg-query); the stamp only orders builds.
deps:
	@tools/deps.sh
$(DEPS_OK): tools/deps.sh
	@tools/deps.sh
	@mkdir -p $(@D) && touch $@

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/seccomp-gen: $(SC_GEN_SRCS:%.c=$(BUILD)/obj/%.o)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libseccomp 2>/dev/null)
$(SC_PROGS): $(BUILD)/seccomp-gen
	@mkdir -p $(@D)
	$(BUILD)/seccomp-gen $@
$(BUILD)/obj/gen/seccomp_progs.o: $(SC_PROGS)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) -c $< -o $@

$(LIBMVM): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# mvm starts its network helper from its own directory: one is never built
# without the other.
$(BUILD)/mvm: $(TOOL_OBJS) $(LIBMVM) | $(BUILD)/mvm-net
	$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(LIBMVM) $(MVM_LIBS) $(LDLIBS)

$(BUILD)/mvm-net: $(HELPER_OBJS) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(HELPER_OBJS) $(LIBMVM) $(HELPER_LIBS) $(LDLIBS)

PREFIX ?= /usr/local
install: $(BUILD)/mvm $(BUILD)/mvm-net
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/mvm $(BUILD)/mvm-net $(DESTDIR)$(PREFIX)/bin/

# Guest side: static binaries baked into the initramfs.
$(BUILD)/guest/mvm-init: $(GUEST_INIT_SRCS) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 -static -o $@ $(GUEST_INIT_SRCS)

# The agent shares guest/agent/proto*.c and tree*.c with the host (in libmvm.a).
$(BUILD)/guest/mvm-agent: $(GUEST_AGENT_SRCS) $(wildcard guest/agent/*.h) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 -static -o $@ $(GUEST_AGENT_SRCS)

# The guest's wget for http:// (guest/wget/wget.h: busybox 1.35's -T crashes).
# The linker's warning about getaddrinfo in a static binary does not apply:
# glibc >= 2.34 has the files and dns lookups in libc itself, no NSS modules.
$(BUILD)/guest/mvm-wget: $(GUEST_WGET_SRCS) guest/wget/wget.h | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 -static -o $@ $(GUEST_WGET_SRCS)

guest: $(BUILD)/guest/mvm-init $(BUILD)/guest/mvm-agent $(BUILD)/guest/mvm-wget | $(DEPS_OK)
	@tools/build-kernel.sh
	@tools/build-initramfs.sh $(BUILD)/guest

$(BUILD)/unit-tests: $(UNIT_OBJS) $(SC_BUILD_OBJ) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(SC_BUILD_OBJ) $(LIBMVM) $(PKG_LIBS) -lcriterion $(LDLIBS)

# Also: every mvm command README.md shows is still accepted (tests/docs/).
unit: $(BUILD)/unit-tests $(BUILD)/mvm
	python3 tests/layers/check-layers.py --self-test
	python3 tests/layers/check-layers.py
	tests/docs/check-readme-commands.sh --self-test $(BUILD)/mvm README.md examples/worked-example/README.md
	$(BUILD)/unit-tests --jobs 2

# Root images in the store (images/build-NAME.sh via `mvm image build`):
# minimal takes seconds; debian (debootstrap, needs root and the network)
# took 3.3-4.7 min on the loaded 2-core dev VM and is reused afterwards.
# The test box sees the store read-only, so tests need them built here first.
.PHONY: images image-minimal image-debian image-browser test-images
IMAGE_DIR ?= $(or $(MVM_IMAGE_DIR),$(or $(XDG_DATA_HOME),$(HOME)/.local/share)/mvm/images)
images: image-minimal image-debian image-browser
image-minimal: $(BUILD)/mvm guest
	@MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build minimal
image-debian: $(BUILD)/mvm | $(DEPS_OK)
	@MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build debian
# browser: debian + Chromium and its display stack (images/browser/). The
# guest scripts live in the image, so a store image built from other inputs
# than this checkout's is rebuilt (their hash is recorded in browser.json).
# Measured on the 2-core dev VM: 2.2 min from an empty package cache (1.2 GiB
# of files), 7 min while a kernel compiled beside it.
BROWSER_INPUTS := images/build-browser.sh images/image-lib.sh $(sort $(wildcard images/browser/*))
image-browser: $(BUILD)/mvm | $(DEPS_OK)
	@h=$$(cat $(BROWSER_INPUTS) | sha256sum | cut -c1-16); \
	if grep -Eq "\"inputs\":[[:space:]]*\"$$h\"" "$(IMAGE_DIR)/browser.json" 2>/dev/null; then \
		echo "image: browser is built from these inputs ($$h)"; \
		MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build browser >/dev/null; \
	else MVM_IMAGE_INPUTS=$$h MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build --force browser; fi
# The browser image's standard template (tools/template-browser.sh): Chromium
# started and idle, so `mvm create web --template browser` + `mvm browser web`
# answers CDP at once. It references the store's browser image: after a
# rebuild of the image, remove it and make it again. Made where KVM runs
# (the test box's template store is gone after it).
.PHONY: template-browser
template-browser: $(BUILD)/mvm image-browser
	MVM=$(BUILD)/mvm MVM_IMAGE_DIR="$(IMAGE_DIR)" tools/template-browser.sh browser

# `make test` builds them (well inside CI's budget); without root the
# Debian-based images are left out and their tests skip.
test-images: image-minimal
	@if [ "$$(id -u)" != 0 ]; then \
		echo "images: not root, debian and browser images not built (sudo make image-debian image-browser)"; \
	else $(MAKE) --no-print-directory image-debian image-browser; fi

# The official MCP TypeScript SDK client that tests/integration/mcp-*.sh
# drive `mvm mcp` with, at the version pinned in tests/mcp/package-lock.json.
MCP_CLIENT := tests/mcp/node_modules/.package-lock.json
$(MCP_CLIENT): tests/mcp/package.json tests/mcp/package-lock.json
	cd tests/mcp && npm ci --no-audit --no-fund
.PHONY: mcp-client
mcp-client: $(MCP_CLIENT)

# puppeteer-core (a CDP client, no browser of its own) for tests/integration/browser-*.sh
# and bench-browser, at the version pinned in tests/browser/package-lock.json.
BROWSER_CLIENT := tests/browser/node_modules/.package-lock.json
$(BROWSER_CLIENT): tests/browser/package.json tests/browser/package-lock.json
	cd tests/browser && npm ci --no-audit --no-fund
.PHONY: browser-client
browser-client: $(BROWSER_CLIENT)

# The same mvm with test hooks (tools/sandbox/test_attack.h), for
# tests/integration/confine-attack.sh only; never what users run.
testhooks: | $(DEPS_OK)
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/testhooks CFLAGS="-O2 -g -DMVM_TEST_HOOKS" \
		$(BUILD)/testhooks/mvm

integration: $(BUILD)/mvm guest test-images mcp-client browser-client testhooks
	MVM_IMAGE_DIR="$(IMAGE_DIR)" tests/run-integration.sh

# Unit tests plain and under ASan+UBSan, every fuzz target briefly, then the VMs.
test: unit asan fuzz-quick integration

# The relay's unit tests start build/mvm (a process of its own).
asan: $(BUILD)/mvm | $(DEPS_OK)
	$(MAKE) BUILD=build/asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" build/asan/unit-tests
	ASAN_OPTIONS=detect_leaks=1 build/asan/unit-tests --jobs 2

# The unit tests of code shared between threads (qcow2 under concurrent
# requests, virtio-blk's worker pool) under ThreadSanitizer, through a
# minimal stand-in for Criterion (tests/tsan/: Criterion's runner cannot
# start under TSan). A data race fails the run.
TSAN_TESTS := tests/unit/test_qcow2_concurrent.c tests/unit/test_blk_io.c tests/unit/qcow2_testutil.c
tsan: | $(DEPS_OK)
	$(MAKE) BUILD=build/tsan CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan" \
		LDFLAGS="-fsanitize=thread" build/tsan/libmvm.a
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -fsanitize=thread -Itests/tsan -I. $(PKG_CFLAGS) \
		-o build/tsan/tsan-tests tests/tsan/main.c $(TSAN_TESTS) build/tsan/libmvm.a $(PKG_LIBS) -lpthread
	MVM_SECCOMP=log TSAN_OPTIONS="halt_on_error=1 exitcode=66" build/tsan/tsan-tests

# Fuzzing (clang + libFuzzer): libmvm is instrumented once, every target
# links against it, and each starts from its seed corpus kept in the repo
# (tests/fuzz/corpus/NAME); what the fuzzer finds goes to build/fuzz/corpus-NAME.
FUZZ_BUILD  := $(BUILD)/fuzz
FUZZ_CFLAGS := -std=gnu11 -g -O1 -I. -D_GNU_SOURCE -fno-omit-frame-pointer -MMD -MP
FUZZ_SAN    := address,undefined
FUZZ_OBJS   := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS   := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_TIME  ?= 20
# `make test` runs every target this long (seconds): a smoke test that the
# seeds and a few thousand mutations of them pass, within CI's budget.
FUZZ_QUICK ?= 4

$(FUZZ_BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  FUZZCC  $<"
	@clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@
$(FUZZ_BUILD)/libmvm.a: $(FUZZ_OBJS)
	@rm -f $@
	@ar rcs $@ $^
$(FUZZ_BINS): $(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_BUILD)/libmvm.a
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< \
		$(FUZZ_BUILD)/libmvm.a $(PKG_LIBS) -lpthread

fuzz: $(FUZZ_BINS)
	@set -e; for b in $(FUZZ_BINS); do \
		n=$$(basename $$b); \
		echo "fuzz: $$n ($(FUZZ_TIME)s)"; \
		mkdir -p $(FUZZ_BUILD)/corpus-$$n; \
		if ! $$b -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/$$n- \
			$(FUZZ_BUILD)/corpus-$$n tests/fuzz/corpus/$$n > $(FUZZ_BUILD)/$$n.log 2>&1; then \
			tail -40 $(FUZZ_BUILD)/$$n.log; echo "fuzz: $$n FAILED (log: $(FUZZ_BUILD)/$$n.log)"; exit 1; \
		fi; \
		grep -E "stat::number_of_executed_units|Done" $(FUZZ_BUILD)/$$n.log | tr '\n' ' '; echo; \
	done

fuzz-quick:
	@$(MAKE) --no-print-directory fuzz FUZZ_TIME=$(FUZZ_QUICK)

bench: bench-boot bench-image bench-exec bench-net bench-snapshot bench-start

bench-exec: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tests/bench/exec.sh

bench-boot: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh python3 tests/bench/boot.py

# Checkpoint/rollback/restore beside QEMU savevm/loadvm (tests/bench/snapshot.py).
bench-snapshot: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh python3 tests/bench/snapshot.py

# New sandboxes cold and from a template beside QEMU cold boot and -incoming; density.
bench-start: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh python3 tests/bench/start.py

# A browser sandbox beside Chromium on the host (tests/bench/browser.py): create->CDP,
# CDP->loaded page, peak host RSS, as ratios. Installs the host peer (Debian's chromium).
bench-browser: $(BUILD)/mvm guest browser-client
	tools/deps.sh browser-peer
	tests/nested/maybe-nested.sh python3 tests/bench/browser.py

# Guest download throughput: mvm beside QEMU -netdev user (tests/bench/net.sh).
bench-net: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tests/bench/net.sh

# Guest-visible disk I/O: mvm beside QEMU microvm (tests/bench/guest_io.sh).
# The install workload's packages are fetched here, on the host (the nested
# box has no network): tests/bench/apt_repo.sh prints the repository.
bench-guest-io: $(BUILD)/mvm guest image-debian
	@case " $${MVM_BENCH_WORKLOADS:-install} " in *" install "*) \
		MVM_BENCH_APT_REPO=$$(tests/bench/apt_repo.sh "$(IMAGE_DIR)/debian.ext4") || exit 1;; esac; \
	export MVM_BENCH_APT_REPO MVM_IMAGE_DIR="$(IMAGE_DIR)"; \
	tests/nested/maybe-nested.sh tests/bench/guest_io.sh

# qcow2 layer vs qemu-img bench on identical overlays (tests/bench/image.sh).
bench-image: $(BUILD)/mvm
	tests/bench/image.sh $(BUILD)

# SHA-256 of a 200 MiB tree (tests/bench/gen_tree.py) through common/sha256.c.
$(BUILD)/bench/sha256_tree: tests/bench/sha256_tree.c $(LIBMVM)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIBMVM) $(PKG_LIBS) $(LDLIBS)
bench-hash: $(BUILD)/bench/sha256_tree
	@d=$$(mktemp -d); python3 tests/bench/gen_tree.py $$d/tree && $(BUILD)/bench/sha256_tree $$d/tree 5; \
		rc=$$?; rm -rf $$d; exit $$rc

# `mvm create --copy` of that tree: BENCH_BASE (another build's mvm) against
# this one, interleaved rounds (tests/bench/create_copy.sh).
BENCH_BASE ?= $(BUILD)/mvm
bench-create-copy: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh sh tests/bench/create_copy.sh $(BENCH_BASE) $(BUILD)/mvm 3

demo: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tools/demo.sh

format:
	clang-format -i $(LIB_SRCS) $(TOOL_SRCS) $(UNIT_SRCS) $(wildcard */*.h */*/*.h)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
