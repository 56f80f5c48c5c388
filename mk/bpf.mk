# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# mk/bpf.mk - CO-RE BPF programs and their skeletons, libbpf-bootstrap's way:
#   NAME.bpf.c + NAME.h -> $(OUTPUT)/NAME.bpf.o   (clang -target bpf, vmlinux.h)
#                       -> $(OUTPUT)/NAME.skel.h  (bpftool gen skeleton, NAME_bpf)
# vmlinux.h is dumped from the running kernel's BTF (VMLINUX_BTF=). A
# directory includes this, then builds its loaders from $(OUTPUT)/*.o with
# $(CFLAGS), linked with $(LDLIBS). Both sides find common/'s headers
# (defaults.h, sockkey.h, loader.h...); a directory that compiles common/'s
# sources sets VPATH to it. Used by ebpf-echo/, sockredir/ and ftrace/.

OUTPUT ?= build
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
COMMON := $(dir $(lastword $(MAKEFILE_LIST)))../common

include $(dir $(lastword $(MAKEFILE_LIST)))need.mk
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(call need,$(CC),gcc)
$(call need,$(CLANG),clang)
$(call need,$(BPFTOOL),bpftool)
$(call need-header,bpf/libbpf.h,libbpf-dev)
$(call need-header,gelf.h,libelf-dev)
$(call need-header,zlib.h,zlib1g-dev)
$(if $(wildcard $(VMLINUX_BTF)),,$(error $(VMLINUX_BTF) not found: this kernel \
	has no BTF (CONFIG_DEBUG_INFO_BTF=y is needed); pass VMLINUX_BTF=/path/to/vmlinux))
endif

# __TARGET_ARCH_x86 for x86_64, arm64 for aarch64, ... (bpf_tracing.h names)
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/s390x/s390/' -e 's/riscv64/riscv/')

CFLAGS ?= -g -O2
CFLAGS += -Wall -Wextra -I$(OUTPUT) -I. -I$(COMMON)
# BPF_PROG() names a ctx that its programs need not use.
BPF_CFLAGS := -g -O2 -Wall -Wextra -Wno-unused-parameter -target bpf -D__TARGET_ARCH_$(ARCH) \
	-I$(OUTPUT) -I. -I$(COMMON)
LDLIBS := -lbpf -lelf -lz

# Keep the objects and skeletons between the pattern rules (intermediates).
.SECONDARY:

$(OUTPUT):
	mkdir -p $@

# Depends on the BTF file, so a new kernel regenerates it.
$(OUTPUT)/vmlinux.h: $(VMLINUX_BTF) | $(OUTPUT)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp
	mv $@.tmp $@

$(OUTPUT)/%.bpf.o: %.bpf.c %.h $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o | $(OUTPUT)
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp
	mv $@.tmp $@

$(OUTPUT)/%.o: %.c | $(OUTPUT)
	$(CC) $(CFLAGS) -c $< -o $@
