#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh - install, with apt-get, every package the suite needs.
#
# Idempotent: packages already installed are left alone and only the missing
# ones are named and installed. Works without a terminal (CI).
set -euo pipefail

# package               what needs it
PACKAGES=(
	gcc                 # bench, user-echo-server, tests
	make                # the build
	libc6-dev           # C headers
	perl                # prove, the test runner
	iproute2            # ss: run.sh checks ports; ip: network namespaces
	procps              # sysctl: run.sh raises somaxconn/syn backlog
	util-linux          # setsid, prlimit
	sudo                # the README's commands run verbatim as root too
	gnuplot-nox         # make plots
	clang               # ebpf: compiles echo.bpf.c for the BPF target
	llvm                # ebpf: llvm-strip and friends for BPF objects
	libbpf-dev          # ebpf: libbpf, the loader library
	bpftool             # ebpf: vmlinux.h, skeleton; run.sh verifies cleanup with it
	libelf-dev          # ebpf: libbpf links against libelf
	zlib1g-dev          # ebpf: and zlib
	kmod                # kecho: insmod, rmmod
	linux-headers-amd64 # kecho: the kbuild tree it builds against
	linux-image-amd64   # vm: the guest's kernel (Debian 12: 6.1) and its modules
	linux-source-6.1    # make lint: scripts/checkpatch.pl, inside its tarball
	xz-utils            # make lint: to unpack checkpatch.pl from that tarball
	qemu-system-x86     # vm: the qemu guest (TCG)
	busybox-static      # vm: the guest's userland
	cpio                # vm: packs the guest's initramfs
	liburing-dev        # uring: the io_uring server (liburing 2.3 in Debian 12)
	shellcheck          # make lint
)

die() { echo "deps: $*" >&2; exit 1; }

missing_packages() {
	local pkg
	for pkg in "${PACKAGES[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
			grep -q 'install ok installed'; then
			echo "$pkg"
		fi
	done
}

# Ubuntu names some of these differently (bpftool lives in linux-tools).
available() {
	local pkg
	for pkg in "$@"; do
		if apt-cache show "$pkg" >/dev/null 2>&1; then
			echo "$pkg"
		elif [[ $pkg == bpftool ]]; then
			echo "deps: no 'bpftool' package here; using linux-tools-common and linux-tools-$(uname -r)" >&2
			echo linux-tools-common
			echo "linux-tools-$(uname -r)"
		elif [[ $pkg == linux-headers-amd64 ]]; then
			echo "deps: no '$pkg' here; using linux-headers-$(uname -r)" >&2
			echo "linux-headers-$(uname -r)"
		else
			echo "deps: warning: no package '$pkg' in the apt sources; skipping it" >&2
		fi
	done
}

main() {
	local missing
	command -v apt-get >/dev/null ||
		die "apt-get not found: install these packages with your package manager: ${PACKAGES[*]}"
	mapfile -t missing < <(missing_packages)
	if ((${#missing[@]} == 0)); then
		echo "deps: all ${#PACKAGES[@]} packages are installed"
		return 0
	fi
	[[ $(id -u) -eq 0 ]] ||
		die "installing ${missing[*]} needs root: run 'sudo make deps'"
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	mapfile -t missing < <(available "${missing[@]}")
	apt-get install -y -q --no-install-recommends "${missing[@]}"
	echo "deps: done"
}

main "$@"
