# mvm — one Makefile. `make` builds build/mvm; `make test` runs everything.
BUILD   ?= build
CC      ?= gcc
PKGS    := slirp libcjson libseccomp
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
           -Wformat=2 -Wno-format-truncation -Wvla -Wimplicit-fallthrough
CFLAGS  ?= -O2 -g
override CFLAGS += -std=gnu11 $(WARN) -I. -MMD -MP -D_GNU_SOURCE
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libslirp (and the glib it drags in) is dlopen()ed only by VMMs with a NIC
# (devices/slirp_lib.c), so it is compiled against but never linked.
PKG_LIBS   = $(shell pkg-config --libs $(filter-out slirp,$(PKGS)) 2>/dev/null)
LDLIBS  += -lpthread

# Everything but main() goes into libmvm.a so unit tests reach the CLI parsers too.
# The product's folders, bottom layer first (docs/ARCHITECTURE.md).
PRODUCT_DIRS := common vmm devices devices/netpolicy images snapshots \
                tools/sandbox tools/promote tools/cli
LIB_SRCS  := $(sort $(filter-out tools/cli/mvm.c,$(foreach d,$(PRODUCT_DIRS),$(wildcard $(d)/*.c)))) \
             $(wildcard guest/agent/proto*.c guest/agent/tree*.c)
TOOL_SRCS := tools/cli/mvm.c
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))
GUEST_INIT_SRCS := $(sort $(wildcard guest/init/*.c))
GUEST_AGENT_SRCS := $(sort $(wildcard guest/agent/*.c))

LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
LIBMVM    := $(BUILD)/libmvm.a
DEPS_OK   := $(BUILD)/.deps-ok

.PHONY: tsan all deps guest test unit integration asan fuzz bench bench-boot \
        bench-image bench-exec bench-net bench-snapshot bench-guest-io demo clean format
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

$(LIBMVM): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/mvm: $(TOOL_OBJS) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(LIBMVM) $(PKG_LIBS) $(LDLIBS)

# Guest side: static binaries baked into the initramfs.
$(BUILD)/guest/mvm-init: $(GUEST_INIT_SRCS) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 -static -o $@ $(GUEST_INIT_SRCS)

# The agent shares guest/agent/proto*.c and tree*.c with the host (in libmvm.a).
$(BUILD)/guest/mvm-agent: $(GUEST_AGENT_SRCS) $(wildcard guest/agent/*.h) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 -static -o $@ $(GUEST_AGENT_SRCS)

guest: $(BUILD)/guest/mvm-init $(BUILD)/guest/mvm-agent | $(DEPS_OK)
	@tools/build-kernel.sh
	@tools/build-initramfs.sh $(BUILD)/guest

$(BUILD)/unit-tests: $(UNIT_OBJS) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(LIBMVM) $(PKG_LIBS) -lcriterion $(LDLIBS)

unit: $(BUILD)/unit-tests
	python3 tests/layers/check-layers.py
	$(BUILD)/unit-tests --jobs 2

# Root images in the store (images/build-NAME.sh via `mvm image build`):
# minimal takes seconds; debian (debootstrap, needs root and the network)
# took 3.3-4.7 min on the loaded 2-core dev VM and is reused afterwards.
# The test box sees the store read-only, so tests need them built here first.
.PHONY: images image-minimal image-debian test-images
IMAGE_DIR ?= $(or $(MVM_IMAGE_DIR),$(or $(XDG_DATA_HOME),$(HOME)/.local/share)/mvm/images)
images: image-minimal image-debian
image-minimal: $(BUILD)/mvm guest
	@MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build minimal
image-debian: $(BUILD)/mvm | $(DEPS_OK)
	@MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build debian
# `make test` builds both (well inside CI's budget); without root the
# debian image is left out and tests/integration/image-debian.sh skips.
test-images: image-minimal
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory image-debian; \
	else echo "images: not root, debian image not built (sudo make image-debian)"; fi

integration: $(BUILD)/mvm guest test-images
	MVM_IMAGE_DIR="$(IMAGE_DIR)" tests/run-integration.sh

test: unit integration

asan: | $(DEPS_OK)
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
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" build/tsan/tsan-tests

FUZZ_TIME ?= 20
fuzz: $(LIB_SRCS) $(FUZZ_SRCS) | $(DEPS_OK)
	@mkdir -p $(BUILD)/fuzz
	@set -e; for f in $(FUZZ_SRCS); do \
		n=$$(basename $$f .c); \
		echo "fuzz: $$n ($(FUZZ_TIME)s)"; \
		clang -std=gnu11 -g -O1 -I. -D_GNU_SOURCE $(PKG_CFLAGS) -fsanitize=fuzzer,address,undefined \
			-o $(BUILD)/fuzz/$$n $$f $(LIB_SRCS) $(PKG_LIBS) -lpthread; \
		mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		$(BUILD)/fuzz/$$n -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/$$n- $(BUILD)/fuzz/corpus-$$n 2>&1 | tail -3; \
	done

bench: bench-boot bench-image bench-exec bench-net bench-snapshot

bench-exec: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tests/bench/exec.sh

bench-boot: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh python3 tests/bench/boot.py

# Checkpoint/rollback/restore beside QEMU savevm/loadvm (tests/bench/snapshot.py).
bench-snapshot: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh python3 tests/bench/snapshot.py

# Guest download throughput: mvm beside QEMU -netdev user (tests/bench/net.sh).
bench-net: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tests/bench/net.sh

# Guest-visible disk I/O: mvm beside QEMU microvm (tests/bench/guest_io.sh).
bench-guest-io: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tests/bench/guest_io.sh

# qcow2 layer vs qemu-img bench on identical overlays (tests/bench/image.sh).
bench-image: $(BUILD)/mvm
	tests/bench/image.sh $(BUILD)

demo: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tools/demo.sh

format:
	clang-format -i $(LIB_SRCS) $(TOOL_SRCS) $(UNIT_SRCS) $(wildcard */*.h */*/*.h)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
