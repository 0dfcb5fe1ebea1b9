# hermetic — build, test, install.  `make V=1` shows the commands.
.DELETE_ON_ERROR:
.SUFFIXES:

prefix ?= /usr/local
bindir ?= $(prefix)/bin
sbindir ?= $(prefix)/sbin
libdir ?= $(prefix)/lib
# The shim's directory; the CLI also looks next to itself and in
# ../lib/hermetic, so a tree installed under DESTDIR works where it lands.
shimdir ?= $(libdir)/hermetic
includedir ?= $(prefix)/include
datadir ?= $(prefix)/share
mandir ?= $(datadir)/man
bashcompdir ?= $(datadir)/bash-completion/completions
# The Python package (python/hermetic) and its pytest plugin: Debian's path
# for prefix=/usr (the .deb); elsewhere 'pip install ./python' is the way.
pythondir ?= $(prefix)/lib/python3/dist-packages
systemdunitdir ?= $(prefix)/lib/systemd/system
sysusersdir ?= $(prefix)/lib/sysusers.d
tmpfilesdir ?= $(prefix)/lib/tmpfiles.d
DESTDIR ?=

B := build
# make SANITIZE=address,undefined [check]: hermeticd, hermetic, libhermetic.a
# and the unit tests built with these sanitizers, in build/san. Never the
# shim (or the handle library), which is loaded into every enrolled process.
SANITIZE ?=
ifneq ($(SANITIZE),)
B := build/san
# (and enroll's child forked, not started with CLONE_VM: engine/clone_vm.c)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all \
	-DHERMETIC_NO_CLONE_VM
endif
ARCH := x86
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2)
endif

WARN := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS ?= -O2 -g
CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Ilib -I$(B) -DHERMETIC_VERSION='"$(VERSION)"' \
	-DHERMETIC_SHIMDIR='"$(shimdir)"'
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Iinclude -Ibpf/vmlinux/$(ARCH) -I$(B)

LIB_SRCS := $(filter-out lib/handle.c,$(wildcard lib/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
DAEMON_SRCS := $(wildcard daemon/*.c)
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(B)/%.o)
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(B)/%.o)
# The run engine (engine/README.md): a library the verbs link; it sees lib/,
# never cli/ (its headers are found only by the verbs).
ENGINE_SRCS := $(wildcard engine/*.c)
ENGINE_OBJS := $(ENGINE_SRCS:%.c=$(B)/%.o)
PRELOAD_SRCS := $(wildcard preload/*.c)
PRELOAD_OBJS := $(PRELOAD_SRCS:%.c=$(B)/pic/%.o)
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(B)/%.skel.h)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)

PRELOAD := $(B)/libhermetic-preload.so
VDSO := $(B)/libhermetic-vdso.so

.PHONY: all
all: $(B)/hermeticd $(B)/hermetic $(PRELOAD) $(VDSO) $(B)/libhermetic.so $(UNIT_BINS)

# --- BPF: .bpf.c -> .bpf.o -> .skel.h ---------------------------------------
$(B)/%.bpf.o: bpf/%.bpf.c bpf/*.bpf.h include/hermetic/*.h | $(B)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(B)/%.skel.h: $(B)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# --- user space -------------------------------------------------------------
$(B)/%.o: %.c include/hermetic/*.h lib/*.h | $(B)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -MMD -MP -c $< -o $@

$(B)/pic/%.o: %.c include/hermetic/*.h lib/*.h preload/*.h | $(B)
	$(call msg,CC-PIC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -MMD -MP -c $< -o $@

$(DAEMON_OBJS): $(BPF_SKELS)

$(B)/libhermetic.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/hermeticd: $(DAEMON_OBJS) $(B)/libhermetic.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -o $@ $^ -lbpf -lelf -lz -ljson-c -lsystemd -lzstd

$(CLI_OBJS): CFLAGS += -Iengine
# Moved from cli/ and not yet free of struct enroll, die() and cli.h: until
# each is, it alone may see cli/ (engine/README.md, "Not yet here").
ENGINE_CLI_OBJS := $(addprefix $(B)/engine/,inherited.o launch.o launch_child.o launch_identity.o reconnect.o \
	run.o run_start.o record.o record_index.o record_scopes.o record_streams.o)
$(ENGINE_CLI_OBJS): CFLAGS += -Icli -Iengine

$(B)/libhermetic-engine.a: $(ENGINE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# hermetic links none of json-c, zstd and zlib: cli/lazy_libs.c loads each
# on first use (most enrolls use none), by the SONAME of the library the
# linker finds for -ljson-c, -lzstd, -lz. The SONAMEs are read when the
# build runs, never when make parses this file: `make build-deps all` on a
# fresh root installs the -dev packages before this rule runs. A probe
# links an empty shared object against the library and reads its one
# NEEDED entry (a symbolic link or a linker script alike); the header
# changes only when a SONAME does.
LAZY_LIBS := json-c zstd z
OBJDUMP ?= objdump
$(B)/sonames.h: FORCE | $(B)
	$(Q)set -e; for l in $(LAZY_LIBS); do \
		$(CC) -shared -nostdlib -Wl,--no-as-needed -o $@.probe.so -l$$l; \
		n=$$($(OBJDUMP) -p $@.probe.so | awk '$$1 == "NEEDED" { print $$2 }'); \
		set -- $$n; case "$$#:$$n" in 1:lib*.so.*) ;; *) \
			echo "-l$$l: expected one NEEDED library, found '$$n'" >&2; exit 1;; esac; \
		printf '#define SONAME_%s "%s"\n' "$$(echo $$l | tr a-z- A-Z_)" "$$n"; \
	done >$@.tmp; rm -f $@.probe.so; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(B)/cli/lazy_libs.o $(B)/tests/lazy_libs: $(B)/sonames.h
.PHONY: FORCE
FORCE:

$(B)/hermetic: $(CLI_OBJS) $(B)/libhermetic-engine.a $(B)/libhermetic.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -o $@ $^ -ldl -pthread

# The shim links only libc (and libdl/libpthread, part of glibc 2.34+): it is
# loaded into every enrolled process, so it carries no other dependency.
# journal*.c use zstd: never linked into the shim, which carries only libc.
LIB_PIC_OBJS := $(filter-out $(B)/pic/lib/journal%.o,$(LIB_SRCS:%.c=$(B)/pic/%.o))
$(PRELOAD): $(PRELOAD_OBJS) $(LIB_PIC_OBJS) preload/preload.map
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -shared -fPIC -Wl,--version-script=preload/preload.map \
		-Wl,-z,now -Wl,-z,nodelete -o $@ $(PRELOAD_OBJS) $(LIB_PIC_OBJS) -ldl -lpthread

# The synthetic vDSO (docs/static.md): a freestanding DSO that processes
# without the shim get at exec in place of the kernel's. One PT_LOAD from
# offset 0 (vdso/vdso.lds), both hash tables and symbol versions (Go's and
# musl's parsers need them), no relocation, no TLS, no stack protector.
$(VDSO): vdso/vdso.c vdso/vdso.lds vdso/vdso.map include/hermetic/vdso.h include/hermetic/vclock.h | $(B)
	$(call msg,LD,$@)
	$(Q)$(CC) -O2 -g0 $(WARN) -std=gnu11 -Iinclude -fPIC -fno-stack-protector -ffreestanding \
		-fno-builtin -fno-asynchronous-unwind-tables -fcf-protection=none -nostdlib -shared \
		-Wl,-T,vdso/vdso.lds -Wl,--version-script=vdso/vdso.map -Wl,--hash-style=both \
		-Wl,-soname=linux-vdso.so.1 -Wl,-z,max-page-size=4096 -Wl,--no-undefined \
		-Wl,-Bsymbolic -Wl,--build-id=none -Wl,-z,noexecstack -o $@ vdso/vdso.c

# libhermetic.so: the public handle (include/hermetic/hermetic.h) for tests
# that link it; it forwards to the shim when the shim is loaded.
# SONAME libhermetic.so.0; libhermetic.so is the link-time name.
HANDLE_OBJS := $(addprefix $(B)/pic/lib/,handle.o scope.o lineage.o chacha20.o)
$(B)/libhermetic.so.0: $(HANDLE_OBJS) lib/handle.map
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -shared -Wl,-soname,libhermetic.so.0 -Wl,--version-script=lib/handle.map \
		-o $@ $(HANDLE_OBJS) -ldl

$(B)/libhermetic.so: $(B)/libhermetic.so.0
	$(Q)ln -sf libhermetic.so.0 $@

# A unit test that includes a verb's source file names it (and anything
# else it needs made) as a prerequisite below: only the test's own .c and
# the archives are compiled and linked.
$(B)/tests/%: tests/unit/%.c $(B)/libhermetic-engine.a $(B)/libhermetic.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Iengine $(SAN_FLAGS) -o $@ $< $(filter %.a,$^) -ljson-c -lzstd -lz -lm
$(B)/tests/hunt: cli/hunt_stats.c cli/hunt_axes.c cli/hunt.h tests/unit/die_stub.h
$(B)/tests/checkdet_pids: cli/checkdet_pids.c cli/checkdet.h tests/unit/die_stub.h
$(B)/tests/lazy_libs: cli/lazy_libs.c cli/lazy_open.c cli/lazy_libs.h

$(B):
	$(Q)mkdir -p $(B)

# Headers that moved to engine/, still named by the .d files of a build made
# before (-MP covers those made since): no rule is needed to remake them.
cli/phases.h cli/record.h cli/record_int.h:
-include $(shell find $(B) \( -path $(B)/deb -o -path $(B)/debroot \) -prune -o -name '*.d' -type f -print 2>/dev/null)

# --- maintenance --------------------------------------------------------------
.PHONY: vmlinux
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > bpf/vmlinux/$(ARCH)/vmlinux.h

# make deps: what building and every test need (CI); make build-deps: only
# what building (and make demo) needs.
.PHONY: deps build-deps
deps:
	@tests/deps.sh
build-deps:
	@tests/deps.sh build

# CHECK=PATTERN... runs only the tests whose names contain one of them.
# With SANITIZE, tests/run.sh also fails a test whose processes left a
# sanitizer report.
CHECK ?=
.PHONY: check
check: deps all
	@HERMETIC_BUILD=$(abspath $(B)) HERMETIC_SANITIZE=$(SANITIZE) tests/run.sh $(CHECK)

.PHONY: bench
bench: deps all
	@tests/bench/bench.sh

FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz: deps
	@tests/fuzz/run.sh $(FUZZ_SECONDS)

.PHONY: vm-test
vm-test: deps all
	@tests/vm/run.sh

.PHONY: demo
demo: build-deps all
	@tests/demo.sh

.PHONY: install
install: all install-python
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) $(DESTDIR)$(libdir) \
		$(DESTDIR)$(includedir)/hermetic $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man8
	install -m 0755 $(B)/hermetic $(DESTDIR)$(bindir)/hermetic
	install -m 0755 $(B)/hermeticd $(DESTDIR)$(sbindir)/hermeticd
	install -d $(DESTDIR)$(shimdir)
	install -m 0755 $(PRELOAD) $(DESTDIR)$(shimdir)/libhermetic-preload.so
	install -m 0644 $(VDSO) $(DESTDIR)$(shimdir)/libhermetic-vdso.so
	install -m 0644 $(B)/libhermetic.so.0 $(DESTDIR)$(libdir)/libhermetic.so.0
	ln -sf libhermetic.so.0 $(DESTDIR)$(libdir)/libhermetic.so
	install -m 0644 include/hermetic/hermetic.h $(DESTDIR)$(includedir)/hermetic/hermetic.h
	install -m 0644 docs/hermetic.1 $(DESTDIR)$(mandir)/man1/hermetic.1
	install -m 0644 docs/hermeticd.8 $(DESTDIR)$(mandir)/man8/hermeticd.8
	install -d $(DESTDIR)$(bashcompdir)
	install -m 0644 packaging/bash-completion/hermetic $(DESTDIR)$(bashcompdir)/hermetic
	install -m 0644 packaging/bash-completion/hermetic $(DESTDIR)$(bashcompdir)/hermeticd
	install -d $(DESTDIR)$(systemdunitdir) $(DESTDIR)$(sysusersdir) $(DESTDIR)$(tmpfilesdir)
	install -m 0644 packaging/systemd/hermeticd.socket $(DESTDIR)$(systemdunitdir)/hermeticd.socket
	sed 's|/usr/sbin/hermeticd|$(sbindir)/hermeticd|' packaging/systemd/hermeticd.service \
		> $(DESTDIR)$(systemdunitdir)/hermeticd.service
	chmod 0644 $(DESTDIR)$(systemdunitdir)/hermeticd.service
	install -m 0644 packaging/sysusers.d/hermetic.conf $(DESTDIR)$(sysusersdir)/hermetic.conf
	install -m 0644 packaging/tmpfiles.d/hermetic.conf $(DESTDIR)$(tmpfilesdir)/hermetic.conf

# What pip would install from python/, by hand: the modules and a dist-info
# whose entry point loads the pytest plugin.
PYDIST := $(DESTDIR)$(pythondir)/hermetic-$(VERSION).dist-info
.PHONY: install-python
install-python:
	install -d $(DESTDIR)$(pythondir)/hermetic $(PYDIST)
	install -m 0644 python/hermetic/*.py $(DESTDIR)$(pythondir)/hermetic/
	printf 'Metadata-Version: 2.1\nName: hermetic\nVersion: %s\nSummary: %s\nLicense: MIT\n' \
		'$(VERSION)' 'Python handle and pytest plugin for hermetic runs' >$(PYDIST)/METADATA
	printf '[pytest11]\nhermetic = hermetic.pytest_plugin\n' >$(PYDIST)/entry_points.txt
	printf 'hermetic\n' >$(PYDIST)/top_level.txt

# make deb: a .deb from packaging/debian with dpkg-buildpackage, built in a
# copy of the tree under build/deb; the packages land in build/ (hermetic,
# and python3-hermetic with the Python package).
DEB := $(B)/hermetic_$(VERSION)_amd64.deb
DEB_SRCS := $(shell find Makefile VERSION LICENSE bpf cli daemon docs engine include lib packaging preload vdso \
	python -type f ! -path '*/__pycache__/*' 2>/dev/null)
.PHONY: deb
deb: $(DEB)
	@echo "$(DEB)"

$(DEB): $(DEB_SRCS)
	$(Q)rm -rf $(B)/deb && mkdir -p $(B)/deb/hermetic-$(VERSION)
	$(Q)tar -c --exclude=./build --exclude=./.git . | tar -x -C $(B)/deb/hermetic-$(VERSION)
	$(Q)cd $(B)/deb/hermetic-$(VERSION) && rm -rf debian && cp -a packaging/debian debian && \
		cp packaging/sysusers.d/hermetic.conf debian/hermetic.sysusers
	$(call msg,DPKG,$(DEB))
	$(Q)cd $(B)/deb/hermetic-$(VERSION) && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; exit 1; }
	$(Q)cp $(B)/deb/hermetic_$(VERSION)_amd64.deb $(DEB)
	$(Q)cp $(B)/deb/python3-hermetic_$(VERSION)_all.deb $(B)/

.PHONY: clean
clean:
	rm -rf $(B)
