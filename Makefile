# mvm — one Makefile. `make` builds build/mvm; `make test` runs everything.
BUILD   ?= build
CC      ?= gcc
PKGS    := slirp libcjson libseccomp nettle libmicrohttpd libarchive
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
           -Wformat=2 -Wno-format-truncation -Wvla -Wimplicit-fallthrough
CFLAGS  ?= -O2 -g
# Hardened code generation for every C file of mvm, mvm-net and the guest's
# binaries (issue 27 item 11; tests/build/check-hardening.py reads the ELF
# files). _FORTIFY_SOURCE=3 needs gcc >= 12 and glibc >= 2.34 (Debian 12:
# gcc 12.2, glibc 2.36), else 2; it needs optimisation (a -O0 build would
# fail on glibc's #warning under -Werror) and is left out under the
# sanitizers (ASan and TSan intercept the same functions; the checks would
# hide their reports). -frecord-gcc-switches keeps each file's options in the
# binary (.GCC.command.line) so the check can see the ones that leave no
# other trace (-fstack-clash-protection, -fcf-protection).
FORTIFY_LEVEL := $(shell printf '\043include <features.h>\nv=__GLIBC__ __GLIBC_MINOR__ __GNUC__\n' | \
                   $(CC) -E -P - 2>/dev/null | awk '/^v=/{ sub("v=",""); \
                   print (($$1 > 2 || $$2 >= 34) && $$3 >= 12) ? 3 : 2 }')
FORTIFY := $(if $(findstring -fsanitize,$(CFLAGS)),,$(if $(filter -O1 -O2 -O3 -Os -Og -Ofast,$(CFLAGS)),\
           -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=$(FORTIFY_LEVEL)))
CODE_HARDEN := -fstack-protector-strong -fstack-clash-protection -fcf-protection -fPIE \
               -frecord-gcc-switches
HARDEN_CFLAGS := $(CODE_HARDEN) $(FORTIFY)
# PIE, full RELRO (relro + now: the GOT is read-only once loaded), no
# executable stack. The guest's static binaries (always -O2) are static-pie.
HARDEN_LDFLAGS := -pie -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack
GUEST_HARDEN := $(CODE_HARDEN) -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=$(FORTIFY_LEVEL) \
                -static-pie -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack
override CFLAGS += -std=gnu11 $(WARN) -I. -MMD -MP -D_GNU_SOURCE $(HARDEN_CFLAGS)
override LDFLAGS += $(HARDEN_LDFLAGS)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libslirp (and the glib it drags in) is linked only into the network helper
# mvm-net (tools/nethelper/), never into mvm: the VMM holding /dev/kvm and
# guest memory must not map them (docs/security.md).
# libfdt (arm64 device trees, vmm/arch/arm64/) has no pkg-config file in
# Debian 12. The x86 mvm does not link it: nothing it runs uses a device tree.
PKG_LIBS   = $(shell pkg-config --libs $(filter-out slirp,$(PKGS)) 2>/dev/null) -lfdt
# Nor libseccomp: its compiler runs at build time (seccomp-gen below), and
# mvm and mvm-net only install the programs it wrote. Nor libmicrohttpd
# (GnuTLS) nor libarchive: `mvm serve` and `mvm image import` are the
# programs mvm-serve and mvm-oci beside it (tools/cli/cmd_beside.h); linked
# into mvm they raised every VMM's memory overhead from under 3 MiB to
# 4000 KiB (tests/integration/run-resources.sh). tests/build/check-needed.py
# (make unit) fails if mvm names one of them again.
# nettle is linked statically: with full RELRO (-z now, issue 27) loading
# libnettle.so and binding its symbols was most of every CLI start's cost
# (773k instructions for `mvm ls`; 394k static, 572k in the lazy-bound build
# before; docs/benchmarks.md). A nettle security update needs a rebuild.
NETTLE_LIBS := -Wl,-Bstatic -lnettle -Wl,-Bdynamic
MVM_LIBS   = $(shell pkg-config --libs libcjson 2>/dev/null) $(NETTLE_LIBS)
SERVE_LIBS = $(shell pkg-config --libs libmicrohttpd libcjson 2>/dev/null) $(NETTLE_LIBS)
OCI_LIBS   = $(shell pkg-config --libs libarchive libcjson 2>/dev/null) $(NETTLE_LIBS)
HELPER_LIBS = $(shell pkg-config --libs slirp 2>/dev/null)
LDLIBS  += -lpthread

# Everything but main() goes into libmvm.a so unit tests reach the CLI parsers too.
# The product's folders, bottom layer first (docs/ARCHITECTURE.md).
PRODUCT_DIRS := common vmm/confine vmm/arch/arm64 vmm/arch/x86 vmm devices devices/netpolicy images snapshots \
                tools/sandbox tools/promote tools/mcp tools/serve tools/cli
# The programs' main()s: mvm, and beside it mvm-serve and mvm-oci.
TOOL_SRCS := tools/cli/mvm.c
SERVE_SRCS := tools/cli/mvm_serve.c
OCI_SRCS  := tools/cli/mvm_oci.c
LIB_SRCS  := $(sort $(filter-out $(TOOL_SRCS) $(SERVE_SRCS) $(OCI_SRCS),\
                $(foreach d,$(PRODUCT_DIRS),$(wildcard $(d)/*.c)))) \
             $(wildcard guest/agent/proto*.c guest/agent/tree*.c)
HELPER_SRCS := tools/nethelper/mvm_net.c
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))
GUEST_INIT_SRCS := $(sort $(wildcard guest/init/*.c)) guest/init/arch/x86.c
GUEST_AGENT_SRCS := $(sort $(wildcard guest/agent/*.c))
GUEST_WGET_SRCS := $(sort $(wildcard guest/wget/*.c))

# The seccomp tables as BPF, generated (vmm/confine/seccomp_prog.h).
# libseccomp's compiler (vmm/confine/gen/seccomp_build.c) is build-time only:
# the generator's and the unit tests', never in libmvm, mvm or mvm-net.
SC_BUILD_OBJ := $(BUILD)/obj/vmm/confine/gen/seccomp_build.o
SC_GEN_SRCS := vmm/confine/gen/seccomp_gen.c vmm/confine/gen/seccomp_build.c \
               $(addprefix vmm/confine/seccomp_,vcpu.c main.c blk.c nethelper.c relay.c keeper.c) \
               vmm/arch/x86/seccomp_ioctls.c
SC_PROGS  := $(BUILD)/gen/seccomp_progs.c
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/seccomp_progs.o
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
SERVE_OBJS := $(SERVE_SRCS:%.c=$(BUILD)/obj/%.o)
OCI_OBJS  := $(OCI_SRCS:%.c=$(BUILD)/obj/%.o)
HELPER_OBJS := $(HELPER_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
LIBMVM    := $(BUILD)/libmvm.a
DEPS_OK   := $(BUILD)/.deps-ok

.PHONY: all deps guest test unit integration testhooks asan tsan fuzz fuzz-quick bench bench-boot bench-import \
        bench-image bench-exec bench-net bench-snapshot bench-start bench-serve bench-guest-io bench-hash \
        bench-create-copy bench-browser bench-count bench-builds bench-tstart bench-verify bench-snap-cost demo clean format install test-cluster
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

# mvm starts its network helper, and runs `serve` and `image import`, from
# its own directory (common/self_exe.h): one is never built without the others.
BESIDE := $(BUILD)/mvm-net $(BUILD)/mvm-serve $(BUILD)/mvm-oci
$(BUILD)/mvm: $(TOOL_OBJS) $(LIBMVM) | $(BESIDE)
	$(CC) $(LDFLAGS) $(MVM_LDFLAGS) -o $@ $(TOOL_OBJS) $(LIBMVM) $(MVM_LIBS) $(LDLIBS)

$(BUILD)/mvm-net: $(HELPER_OBJS) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(HELPER_OBJS) $(LIBMVM) $(HELPER_LIBS) $(LDLIBS)

$(BUILD)/mvm-serve: $(SERVE_OBJS) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(SERVE_OBJS) $(LIBMVM) $(SERVE_LIBS) $(LDLIBS)

$(BUILD)/mvm-oci: $(OCI_OBJS) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(OCI_OBJS) $(LIBMVM) $(OCI_LIBS) $(LDLIBS)

PREFIX ?= /usr/local
install: $(BUILD)/mvm $(BESIDE)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/mvm $(BESIDE) $(DESTDIR)$(PREFIX)/bin/

# Guest side: static binaries baked into the initramfs.
$(BUILD)/guest/mvm-init: $(GUEST_INIT_SRCS) guest/init/port.h Makefile | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 $(GUEST_HARDEN) -o $@ $(GUEST_INIT_SRCS)

# The agent shares guest/agent/proto*.c and tree*.c with the host (in libmvm.a).
$(BUILD)/guest/mvm-agent: $(GUEST_AGENT_SRCS) $(wildcard guest/agent/*.h) Makefile | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 $(GUEST_HARDEN) -o $@ $(GUEST_AGENT_SRCS)

# The guest's wget for http:// (guest/wget/wget.h: busybox 1.35's -T crashes).
# The linker's warning about getaddrinfo in a static binary does not apply:
# glibc >= 2.34 has the files and dns lookups in libc itself, no NSS modules.
$(BUILD)/guest/mvm-wget: $(GUEST_WGET_SRCS) guest/wget/wget.h Makefile | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 $(GUEST_HARDEN) -o $@ $(GUEST_WGET_SRCS)

guest: $(BUILD)/guest/mvm-init $(BUILD)/guest/mvm-agent $(BUILD)/guest/mvm-wget | $(DEPS_OK)
	@tools/build-kernel.sh
	@tools/build-initramfs.sh $(BUILD)/guest

$(BUILD)/unit-tests: $(UNIT_OBJS) $(SC_BUILD_OBJ) $(LIBMVM)
	$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(SC_BUILD_OBJ) $(LIBMVM) $(PKG_LIBS) -lcriterion $(LDLIBS)

# Also: every mvm command README.md shows is still accepted (tests/docs/),
# no test asserts on a duration (tests/lint/no-timing.py, tests/README.md),
# a failed create leaves nothing behind and `serve`/`image import` reach
# their programs (tests/cli/, KVM-free), the integration runner names a
# guest's own reset (tests/nested/check-runner.sh) and splits the suite
# over boxes (tests/nested/check-shards.sh), every binary we ship is hardened
# and mvm links none of mvm-serve's and mvm-oci's libraries (tests/build/).
GUEST_BINS := $(BUILD)/guest/mvm-init $(BUILD)/guest/mvm-agent $(BUILD)/guest/mvm-wget
unit: $(BUILD)/unit-tests $(BUILD)/mvm $(GUEST_BINS)
	python3 tests/build/check-hardening.py --self-test $(BUILD)/mvm $(BESIDE) $(GUEST_BINS)
	python3 tests/build/check-needed.py --self-test $(BUILD)/mvm
	tests/cli/beside.sh $(BUILD)/mvm
	python3 tests/layers/check-layers.py --self-test
	python3 tests/layers/check-layers.py
	python3 tests/lint/no-timing.py --self-test
	python3 tests/lint/no-timing.py
	tests/docs/check-readme-commands.sh --self-test $(BUILD)/mvm README.md examples/worked-example/README.md
	tests/cli/create-leaves-nothing.sh $(BUILD)/mvm
	tests/nested/check-runner.sh
	tests/nested/check-shards.sh
	@# The Python SDK's remote transport against a fake server (KVM-free), with a python3 that has pytest.
	@p=$$(for p in /usr/bin/python3 python3; do $$p -c 'import pytest' 2>/dev/null && { echo $$p; break; }; done); \
	[ -n "$$p" ] || { echo "make unit: no python3 with pytest (tools/deps.sh installs python3-pytest)" >&2; exit 1; }; \
	echo "$$p -m pytest -q sdk/python/tests/test_remote_unit.py"; $$p -m pytest -p no:cacheprovider -q sdk/python/tests/test_remote_unit.py
	$(BUILD)/unit-tests --jobs 2

# Root images in the store (images/build-NAME.sh via `mvm image build`):
# minimal takes seconds; debian (debootstrap, needs root and the network)
# took 3.3-4.7 min on the loaded 2-core dev VM and is reused afterwards.
# The test box sees the store read-only, so tests need them built here first.
.PHONY: images image-minimal image-debian image-browser image-dev test-images
IMAGE_DIR ?= $(or $(MVM_IMAGE_DIR),$(or $(XDG_DATA_HOME),$(HOME)/.local/share)/mvm/images)
images: image-minimal image-debian image-browser
image-minimal: $(BUILD)/mvm guest
	@MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build minimal
# A store image built from other recipe inputs than this checkout's is
# rebuilt: their hash is recorded in NAME.json (mvm image build reads
# MVM_IMAGE_INPUTS). $(call image_from_inputs,NAME,INPUT FILES)
define image_from_inputs
	@h=$$(cat $(2) | sha256sum | cut -c1-16); \
	if grep -Eq "\"inputs\":[[:space:]]*\"$$h\"" "$(IMAGE_DIR)/$(1).json" 2>/dev/null; then \
		echo "image: $(1) is built from these inputs ($$h)"; \
		MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build $(1) >/dev/null; \
	else MVM_IMAGE_INPUTS=$$h MVM_IMAGE_DIR="$(IMAGE_DIR)" $(BUILD)/mvm image build --force $(1); fi
endef
# debian: minbase + PostgreSQL (the worked example's database).
DEBIAN_INPUTS := images/build-debian.sh images/image-lib.sh
image-debian: $(BUILD)/mvm | $(DEPS_OK)
	$(call image_from_inputs,debian,$(DEBIAN_INPUTS))
# dev: Debian minbase + python3/pip/venv, nodejs/npm, git, build-essential, curl
# (tests/integration/image-dev.sh). Not part of `images`; part of `test-images`
# as root, so CI runs its test: built after debian, from the base debian left
# in the package cache (164 MB of packages, 781 MiB of files; 52 s warm on the
# quiet 2-core dev VM, docs/dev-image.md); the test skips without it.
DEV_INPUTS := images/build-dev.sh images/image-lib.sh
image-dev: $(BUILD)/mvm | $(DEPS_OK)
	$(call image_from_inputs,dev,$(DEV_INPUTS))
# browser: debian + Chromium and its display stack (images/browser/). The
# guest scripts live in the image, so a store image built from other inputs
# than this checkout's is rebuilt (their hash is recorded in browser.json).
# Measured on the 2-core dev VM: 2.2 min from an empty package cache (1.2 GiB
# of files), 7 min while a kernel compiled beside it.
BROWSER_INPUTS := images/build-browser.sh images/image-lib.sh $(sort $(wildcard images/browser/*))
image-browser: $(BUILD)/mvm | $(DEPS_OK)
	$(call image_from_inputs,browser,$(BROWSER_INPUTS))
# The browser image's standard template (tools/template-browser.sh): Chromium
# started and idle, so `mvm create web --template browser` + `mvm browser web`
# answers CDP at once. It references the store's browser image: after a
# rebuild of the image, remove it and make it again. Made where KVM runs
# (the test box's template store is gone after it).
.PHONY: template-browser
template-browser: $(BUILD)/mvm image-browser
	MVM=$(BUILD)/mvm MVM_IMAGE_DIR="$(IMAGE_DIR)" tools/template-browser.sh browser

# `make test` builds them (inside CI's budget); without root the
# Debian-based images are left out and their tests skip. debian first: it
# makes the bootstrapped base that browser and dev start from.
test-images: image-minimal
	@if [ "$$(id -u)" != 0 ]; then \
		echo "images: not root, debian, browser and dev images not built (sudo make image-debian image-browser image-dev)"; \
	else $(MAKE) --no-print-directory image-debian image-browser image-dev; fi

# The official MCP TypeScript SDK client that tests/integration/mcp-*.sh
# drive `mvm mcp` with, at the version pinned in tests/mcp/package-lock.json.
# Its node_modules are packed into one archive the tests unpack into their
# own directory (tests/integration/lib.sh, node_client), as Verdaccio's below.
MCP_CLIENT := tests/mcp/node_modules.tar
$(MCP_CLIENT): tests/mcp/package.json tests/mcp/package-lock.json
	cd tests/mcp && npm ci --no-audit --no-fund
	tar -cf $@.tmp --sort=name -C tests/mcp node_modules && mv -f $@.tmp $@
.PHONY: mcp-client
mcp-client: $(MCP_CLIENT)

# puppeteer-core (a CDP client, no browser of its own) for tests/integration/browser-*.sh
# and bench-browser, at the version pinned in tests/browser/package-lock.json.
# Packed for the tests like the MCP client's (bench-browser uses node_modules).
BROWSER_CLIENT := tests/browser/node_modules.tar
$(BROWSER_CLIENT): tests/browser/package.json tests/browser/package-lock.json
	cd tests/browser && npm ci --no-audit --no-fund
	tar -cf $@.tmp --sort=name -C tests/browser node_modules && mv -f $@.tmp $@
.PHONY: browser-client
browser-client: $(BROWSER_CLIENT)

# Verdaccio, the npm registry tests/integration/image-dev.sh runs on a test
# host (tests/integration/verdaccio.lib), at the version pinned in
# tests/verdaccio/package-lock.json: 6.8.0, the last that runs on node 20.
# Packed into one archive that the test unpacks into its own directory:
# node reads its 7,700 files at start, and over the test box's 9p share of
# the checkout that took minutes (from tmpfs, seconds).
REGISTRY_SERVER := tests/verdaccio/verdaccio.tar
$(REGISTRY_SERVER): tests/verdaccio/package.json tests/verdaccio/package-lock.json
	cd tests/verdaccio && npm ci --no-audit --no-fund
	tar -cf $@.tmp --sort=name -C tests/verdaccio node_modules && mv -f $@.tmp $@
.PHONY: registry-server
registry-server: $(REGISTRY_SERVER)

# The same mvm with test hooks (tools/sandbox/test_attack.h, devices/blk_io.c,
# common/io_census.h), for tests/integration/confine-attack.sh and
# blk-nonblocking.sh only; never what users run.
# Its disk system calls go through common/io_census_wrap.c (the same list
# there), counted per thread kind for tests/integration/blk-nonblocking.sh.
CENSUS_WRAP := pread pread64 pwrite pwrite64 preadv preadv64 pwritev pwritev64 \
               preadv2 pwritev2 fsync fdatasync fallocate fallocate64 sync_file_range \
               __pread_chk __pread64_chk
testhooks: | $(DEPS_OK)
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/testhooks CFLAGS="-O2 -g -DMVM_TEST_HOOKS" \
		MVM_LDFLAGS="$(foreach f,$(CENSUS_WRAP),-Wl,--wrap=$(f))" $(BUILD)/testhooks/mvm

integration: $(BUILD)/mvm guest test-images mcp-client browser-client registry-server testhooks
	MVM_IMAGE_DIR="$(IMAGE_DIR)" tests/run-integration.sh

# Slurm for real (issue 29): slurmctld and two slurmd nodes, each in its own
# network, UTS, mount and PID namespace, running mvm sandboxes through
# examples/slurm/ (tests/cluster/slurm.sh). Needs root and slurm-wlm + munge
# (`tools/deps.sh cluster`); runs in the nested box where /dev/kvm is not
# usable. Not part of `make test` (docs/cluster.md says how long it takes).
test-cluster: $(BUILD)/mvm guest image-minimal
	@tools/deps.sh cluster
	MVM_IMAGE_DIR="$(IMAGE_DIR)" tests/nested/maybe-nested.sh tests/cluster/slurm.sh

# arm64 (issue 31): the arm64 machine description, device-tree builder,
# register and vGIC plans (vmm/arch/arm64/) and their KVM calls
# (vmm/arch/arm64/kvm/, aarch64 only) compile for aarch64 with Debian's
# cross compiler, warning-free, and layout.h, regs.h and gic.h agree with
# the aarch64 <asm/kvm.h> (tests/build/arm64-layout-check.c). Compile only;
# make test-arm64 links and runs. About 3 s; not part of `make test`.
ARM64_CC ?= aarch64-linux-gnu-gcc
ARM64_HOST_SRCS := $(shell sed -n 's/^host //p' vmm/arch/arm64/srcs.list)
ARM64_DEVICE_SRCS := $(shell sed -n 's/^devices //p' vmm/arch/arm64/srcs.list)
ARM64_SRCS := $(sort $(wildcard vmm/arch/arm64/*.c vmm/arch/arm64/kvm/*.c)) $(ARM64_HOST_SRCS) \
              tests/build/arm64-layout-check.c
.PHONY: arm64-check
arm64-check: | $(DEPS_OK)
	@command -v $(ARM64_CC) >/dev/null || { echo "arm64-check: $(ARM64_CC) missing (make deps)"; exit 1; }
	@mkdir -p $(BUILD)/arm64/include $(BUILD)/arm64/obj
	@# libfdt's headers are architecture-neutral; the cross compiler does not
	@# search the build host's /usr/include, so it gets just these three.
	@cp /usr/include/libfdt.h /usr/include/libfdt_env.h /usr/include/fdt.h $(BUILD)/arm64/include/
	@for f in $(ARM64_SRCS); do \
		echo "  CC.arm64 $$f"; \
		$(ARM64_CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -isystem $(BUILD)/arm64/include -O2 \
			-c $$f -o $(BUILD)/arm64/obj/$$(basename $$f .c).o || exit 1; \
	done
	@# devices/ for aarch64 (the box's arm64-boot links them; the unit tests do not).
	@mkdir -p $(BUILD)/arm64/obj-dev
	@for f in $(ARM64_DEVICE_SRCS); do \
		echo "  CC.arm64 $$f"; \
		$(ARM64_CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -isystem $(BUILD)/arm64/include -O2 \
			-c $$f -o $(BUILD)/arm64/obj-dev/$$(basename $$f .c).o || exit 1; \
	done
	@# The arm64 box's probe (a main() of its own: kept out of obj/).
	@echo "  CC.arm64 tests/nested/arm64-kvm-probe.c"
	@$(ARM64_CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 -c tests/nested/arm64-kvm-probe.c \
		-o $(BUILD)/arm64/kvm-probe.o
	@for f in tests/nested/arm64-boot.c tests/nested/arm64-noseccomp.c tests/nested/arm64-guest-init.c; do \
		echo "  CC.arm64 $$f"; \
		$(ARM64_CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -isystem $(BUILD)/arm64/include -O2 \
			-c $$f -o $(BUILD)/arm64/$$(basename $$f .c).o || exit 1; \
	done
	@echo "arm64-check: ok ($(words $(ARM64_SRCS) $(ARM64_DEVICE_SRCS)) files and the box's programs for aarch64)"

# arm64 unit tests, cross-built and run under qemu-aarch64 user emulation
# (issue 31; first stage: no arm64 box yet). The pure arm64 code, its KVM
# call wrappers and the unit tests of vmm/arch/arm64/ link into one aarch64
# program with libfdt1:arm64 (Debian multiarch: `tools/deps.sh arm64` adds the
# architecture). Criterion is not multiarch-installable beside the host's
# (libcriterion3:arm64 replaces the amd64 one), so the same test files
# compile against tests/arm64/criterion/criterion.h and its runner.
ARM64_UNIT_SRCS := $(sort $(wildcard tests/unit/test_arm64_*.c tests/arm64/*.c))
ARM64_SEAM_SRCS := $(shell sed -n 's/^seam //p' vmm/arch/arm64/srcs.list)
ARM64_LIBDIR ?= /usr/lib/aarch64-linux-gnu
QEMU_AARCH64 ?= qemu-aarch64
# make test-arm64: the unit tests, then the real aarch64 mvm in the arm64
# box (tests/nested/box-arm64.sh mvm: `mvm run` returns a guest command's
# output and exit status; create, exec, cp, rm; the network allowlist with
# mvm-net). make test-arm64-unit: the unit tests alone.
.PHONY: test-arm64 test-arm64-unit
test-arm64: test-arm64-unit
	tests/nested/box-arm64.sh mvm
test-arm64-unit: arm64-check
	@tools/deps.sh arm64
	@command -v $(QEMU_AARCH64) >/dev/null || { echo "test-arm64: $(QEMU_AARCH64) missing (make deps: qemu-user)"; exit 1; }
	@test -e $(ARM64_LIBDIR)/libfdt.so.1 || { echo "test-arm64: libfdt1:arm64 missing (make deps)"; exit 1; }
	@mkdir -p $(BUILD)/arm64/unit
	@for f in $(ARM64_UNIT_SRCS); do \
		echo "  CC.arm64 $$f"; \
		$(ARM64_CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -Itests/arm64 -isystem $(BUILD)/arm64/include \
			-O2 -c $$f -o $(BUILD)/arm64/unit/$$(basename $$f .c).o || exit 1; \
	done
	@mkdir -p $(BUILD)/arm64/unit-seam
	@for f in $(ARM64_SEAM_SRCS); do \
		echo "  CC.arm64 $$f"; \
		$(ARM64_CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -isystem $(BUILD)/arm64/include \
			-O2 -c $$f -o $(BUILD)/arm64/unit-seam/$$(basename $$f .c).o || exit 1; \
	done
	@echo "  LD.arm64 $(BUILD)/arm64/unit-tests"
	@# The objects of this tree's sources only: a renamed file's old object may linger in obj/.
	@$(ARM64_CC) -o $(BUILD)/arm64/unit-tests $(BUILD)/arm64/unit/*.o \
		$(addprefix $(BUILD)/arm64/obj/,$(notdir $(ARM64_SRCS:.c=.o))) \
		$(addprefix $(BUILD)/arm64/unit-seam/,$(notdir $(ARM64_SEAM_SRCS:.c=.o))) \
		-L$(ARM64_LIBDIR) -l:libfdt.so.1 -lpthread
	@file $(BUILD)/arm64/unit-tests | grep -q "ARM aarch64" || { echo "test-arm64: not an aarch64 program"; exit 1; }
	$(QEMU_AARCH64) $(BUILD)/arm64/unit-tests

# The aarch64 mvm (issue 31): the same sources as build/mvm through the
# architecture seam (vmm/arch/arch.h), less x86's (vmm/arch/x86/ and the
# files vmm/arch/x86/srcs.list names), plus the arm64 KVM calls
# (vmm/arch/arm64/kvm/vcpu_arm64.c, vgic.c) and the arm64 side of the seam
# (vmm/arch/arm64/seam/). Dynamic, against Debian's arm64 libcjson and
# nettle (multiarch: `tools/deps.sh arm64`), with its seccomp programs
# for aarch64 (below). Beside it, build/arm64/mvm-net (the network helper,
# libslirp) and build/arm64/guest/ with mvm-init, mvm-agent and mvm-wget
# built static for aarch64.
X86_ONLY_SRCS := $(shell grep -v '^\#' vmm/arch/x86/srcs.list)
ARM64_MVM_SRCS := $(filter-out $(X86_ONLY_SRCS) vmm/arch/x86/%,$(LIB_SRCS)) \
                  vmm/arch/arm64/kvm/vcpu_arm64.c vmm/arch/arm64/kvm/vgic.c vmm/arch/arm64/kvm/vgic_state.c \
                  $(wildcard vmm/arch/arm64/seam/*.c)
ARM64_MVM_OBJS := $(ARM64_MVM_SRCS:%.c=$(BUILD)/arm64/mvm-obj/%.o) $(BUILD)/arm64/mvm-obj/gen/seccomp_progs.o
ARM64_TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/arm64/mvm-obj/%.o)
# -fcf-protection is x86's; arm64's branch protection (BTI, PAC) instead.
ARM64_HARDEN := -fstack-protector-strong -fstack-clash-protection -fPIE -mbranch-protection=standard \
                -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=$(FORTIFY_LEVEL)
ARM64_MVM_CFLAGS := -std=gnu11 $(WARN) -I. -isystem $(BUILD)/arm64/include -D_GNU_SOURCE -O2 -g \
                    -MMD -MP $(ARM64_HARDEN)
$(BUILD)/arm64/mvm-obj/%.o: %.c
	@mkdir -p $(@D) $(BUILD)/arm64/include
	@cp -u /usr/include/libfdt.h /usr/include/libfdt_env.h /usr/include/fdt.h $(BUILD)/arm64/include/
	@echo "  CC.arm64 $<"
	@$(ARM64_CC) $(ARM64_MVM_CFLAGS) -c $< -o $@
# The seccomp programs for aarch64: the same generator and tables as x86's,
# built for this host with arm64's ioctl list for the main thread instead of
# x86's, and run with --arch aarch64: libseccomp translates every table's
# system calls by name to aarch64's numbers (AUDIT_ARCH_AARCH64; calls
# aarch64 lacks, such as open or poll, left out). The tables' other ioctls
# (KVM_RUN, KVM_IRQ_LINE, FIONREAD, TCGETS, ...) encode the same on both.
ARM64_SC_GEN_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out vmm/arch/x86/%,$(SC_GEN_SRCS)) \
                     vmm/arch/arm64/seam/seccomp_ioctls.c)
$(BUILD)/arm64/seccomp-gen: $(ARM64_SC_GEN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libseccomp 2>/dev/null)
$(BUILD)/arm64/gen/seccomp_progs.c: $(BUILD)/arm64/seccomp-gen
	@mkdir -p $(@D)
	$(BUILD)/arm64/seccomp-gen --arch aarch64 $@
$(BUILD)/arm64/mvm-obj/gen/seccomp_progs.o: $(BUILD)/arm64/gen/seccomp_progs.c
	@mkdir -p $(@D)
	@echo "  CC.arm64 $<"
	@$(ARM64_CC) $(ARM64_MVM_CFLAGS) -c $< -o $@
# An archive, as libmvm.a: mvm takes only what it calls (not mvm-oci's libarchive code).
$(BUILD)/arm64/libmvm.a: $(ARM64_MVM_OBJS)
	@rm -f $@
	@aarch64-linux-gnu-ar rcs $@ $^
$(BUILD)/arm64/mvm: $(ARM64_TOOL_OBJS) $(BUILD)/arm64/libmvm.a
	@echo "  LD.arm64 $@"
	@$(ARM64_CC) -pie -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack -o $@ $^ \
		-L$(ARM64_LIBDIR) -l:libfdt.so.1 -lcjson -lnettle -lpthread
# The network helper beside it (mvm starts it from its own directory,
# common/self_exe.h): libslirp for aarch64 from Debian multiarch
# (libslirp-dev:arm64, Multi-Arch: same; it brings libglib2.0-0:arm64).
# Its seccomp program is the aarch64 one of the same table
# (vmm/confine/seccomp_nethelper.c, in gen/seccomp_progs.c above).
ARM64_HELPER_OBJS := $(HELPER_SRCS:%.c=$(BUILD)/arm64/mvm-obj/%.o)
$(BUILD)/arm64/mvm-net: $(ARM64_HELPER_OBJS) $(BUILD)/arm64/libmvm.a
	@echo "  LD.arm64 $@"
	@$(ARM64_CC) -pie -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack -o $@ $^ \
		-L$(ARM64_LIBDIR) -lslirp -lpthread
ARM64_GUEST_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -O2 -fstack-protector-strong \
                      -fstack-clash-protection -fPIE -mbranch-protection=standard \
                      -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=$(FORTIFY_LEVEL) -static-pie \
                      -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack
ARM64_GUEST_INIT_SRCS := $(sort $(wildcard guest/init/*.c)) guest/init/arch/arm64.c
$(BUILD)/arm64/guest/mvm-init: $(ARM64_GUEST_INIT_SRCS) guest/init/port.h Makefile
	@mkdir -p $(@D)
	$(ARM64_CC) $(ARM64_GUEST_CFLAGS) -o $@ $(ARM64_GUEST_INIT_SRCS)
$(BUILD)/arm64/guest/mvm-agent: $(GUEST_AGENT_SRCS) $(wildcard guest/agent/*.h) Makefile
	@mkdir -p $(@D)
	$(ARM64_CC) $(ARM64_GUEST_CFLAGS) -o $@ $(GUEST_AGENT_SRCS)
$(BUILD)/arm64/guest/mvm-wget: $(GUEST_WGET_SRCS) guest/wget/wget.h Makefile
	@mkdir -p $(@D)
	$(ARM64_CC) $(ARM64_GUEST_CFLAGS) -o $@ $(GUEST_WGET_SRCS)
.PHONY: arm64-mvm
arm64-mvm: $(BUILD)/arm64/mvm $(BUILD)/arm64/mvm-net $(BUILD)/arm64/guest/mvm-init $(BUILD)/arm64/guest/mvm-agent \
           $(BUILD)/arm64/guest/mvm-wget
-include $(ARM64_MVM_OBJS:.o=.d) $(ARM64_TOOL_OBJS:.o=.d) $(ARM64_HELPER_OBJS:.o=.d)

# The arm64 box: Debian's arm64 kernel in qemu-system-aarch64 with EL2
# emulated; mvm's arm64 KVM calls run against its /dev/kvm, then mvm's arm64
# VMM code boots the same kernel as a guest there, with mvm's virtio-rng,
# virtio-blk, virtio-console and virtio-vsock, to a /init that uses them,
# prints what it got and powers off (tests/nested/box-arm64.sh; it waits
# for the x86 box's lock). About a minute once the .debs are cached
# (23-45 s of box time).
.PHONY: arm64-box
arm64-box:
	@tools/deps.sh arm64
	tests/nested/box-arm64.sh probe

# Unit tests plain and under ASan+UBSan, every fuzz target briefly, and the VMs.
# The CPU-heavy builds come first; then the host-side checks run at low
# priority beside the integration suite, whose box leaves a core mostly idle
# (tests/run-beside.sh; about 10 min less on 2 cores than one after the other).
# `make unit asan fuzz-quick integration` runs them one after the other.
test: $(BUILD)/mvm $(BUILD)/unit-tests guest test-images mcp-client browser-client registry-server testhooks
	@tests/run-beside.sh $(BUILD)/host-checks.log \
		"$(MAKE) --no-print-directory unit asan fuzz-quick" \
		"$(MAKE) --no-print-directory integration"

# The relay's unit tests start build/mvm, the agent's build/guest/mvm-agent
# (processes of their own).
asan: $(BUILD)/mvm $(BUILD)/guest/mvm-agent | $(DEPS_OK)
	$(MAKE) BUILD=build/asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" build/asan/unit-tests
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=tests/unit/lsan.supp build/asan/unit-tests --jobs 2

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
# The seccomp tables are data (generated, not instrumented): a target whose
# code reaches the VMM's confinement through the archive links them too.
FUZZ_OBJS   := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o) $(BUILD)/obj/gen/seccomp_progs.o
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
			grep -m1 -A30 -E 'ERROR: |runtime error' $(FUZZ_BUILD)/$$n.log || tail -40 $(FUZZ_BUILD)/$$n.log; \
			grep -E '^(MS:|artifact_prefix)' $(FUZZ_BUILD)/$$n.log; \
			echo "fuzz: $$n FAILED (log: $(FUZZ_BUILD)/$$n.log)"; exit 1; \
		fi; \
		grep -E "stat::number_of_executed_units|Done" $(FUZZ_BUILD)/$$n.log | tr '\n' ' '; echo; \
	done

fuzz-quick:
	@$(MAKE) --no-print-directory fuzz FUZZ_TIME=$(FUZZ_QUICK)

bench: bench-boot bench-image bench-import bench-exec bench-net bench-snapshot bench-start

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

# mvm serve under concurrent clients beside the same operations done locally
# (tests/bench/serve.py): requests per second, p50/p99 per verb, api/local.
bench-serve: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh python3 tests/bench/serve.py

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

# The figures the box's wall clock could not settle, counted instead
# (tests/bench/count.sh): instructions (valgrind), system calls (strace -f)
# and context switches per unit of work, mvm beside its peer in one run.
# The net figure's peer is the build before the network helper:
# MVM_BENCH_BASELINE=$(tests/bench/count_baseline.sh DIR) builds it. The box
# boots without Landlock, which would keep valgrind from writing the VMM's
# count at its exit (docs/benchmarks.md, "Counted, not timed").
bench-count: $(BUILD)/mvm guest image-debian
	@case " $${MVM_COUNT_FIGURES:-install} " in *" install "*) \
		MVM_BENCH_APT_REPO=$$(tests/bench/apt_repo.sh "$(IMAGE_DIR)/debian.ext4") || exit 1;; esac; \
	export MVM_BENCH_APT_REPO MVM_IMAGE_DIR="$(IMAGE_DIR)"; \
	export MVM_NESTED_APPEND="$${MVM_NESTED_APPEND:-lsm=capability,yama}"; \
	tests/nested/maybe-nested.sh tests/bench/count.sh

# qcow2 layer vs qemu-img bench on identical overlays (tests/bench/image.sh).
bench-image: $(BUILD)/mvm
	tests/bench/image.sh $(BUILD)

# `mvm image import` of a 200 MiB OCI image against umoci unpack + mkfs.ext4 -d.
bench-import: $(BUILD)/mvm
	tests/bench/import.sh $(BUILD)

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

# BENCH_BASE's build (its own build/guest beside it) against this one on
# create, exec, cp, checkpoint, snapshot, restore and template start,
# interleaved rounds (tests/bench/builds.sh; MVM_B27_ROUNDS, 3).
bench-builds: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh bash tests/bench/builds.sh $(BENCH_BASE) $(BUILD)/mvm

# The CLI's instructions of a template start before the VMM, on this host
# without KVM (a fixture template; callgrind): this tree, and the source
# tree BENCH_BASE_SRC (built) when given. Deterministic.
bench-tstart: $(BUILD)/mvm $(LIBMVM)
	tests/bench/tstart_instr.sh $(BENCH_BASE_SRC) .

# A restore's check of a snapshot file, CRC-32C alone and with SHA-256, per
# MiB of non-zero memory (tests/bench/verify_file.c; host only, no KVM).
$(BUILD)/bench/verify_file: tests/bench/verify_file.c $(LIBMVM)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DHAVE_DIGEST -o $@ $< $(LIBMVM) $(PKG_LIBS) $(LDLIBS)
bench-verify: $(BUILD)/bench/verify_file
	@f=$$(mktemp /dev/shm/mvm-verify.XXXXXX); truncate -s 256M $$f && \
		yes mvm | head -c 104857600 | dd of=$$f bs=1M conv=notrunc status=none && \
		$(BUILD)/bench/verify_file $$f 20 crc | tail -n 1 && \
		$(BUILD)/bench/verify_file $$f 20 digest | tail -n 1; rc=$$?; rm -f $$f; exit $$rc

# What a snapshot's export costs the VMM besides writing memory: the build
# before issue 27 (CRC-32C), v2 (CRC-32C and SHA-256) and v3 (UMAC-128,
# re-read or taken while writing), CPU per non-zero MiB
# (tests/bench/snap_cost.c; host only, no KVM; instructions under cachegrind).
$(BUILD)/bench/snap_cost: tests/bench/snap_cost.c $(LIBMVM)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIBMVM) $(PKG_LIBS) $(LDLIBS)
bench-snap-cost: $(BUILD)/bench/snap_cost
	@for m in write crc v2 v3-reread v3; do $(BUILD)/bench/snap_cost $$m 64 15 || exit 1; done

demo: $(BUILD)/mvm guest
	tests/nested/maybe-nested.sh tools/demo.sh

format:
	clang-format -i $(LIB_SRCS) $(TOOL_SRCS) $(SERVE_SRCS) $(OCI_SRCS) $(UNIT_SRCS) $(wildcard */*.h */*/*.h)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
