#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh - install, with apt-get, every package the suite needs.
#
# Idempotent: packages already installed are left alone and only the missing
# ones are named and installed. Works without a terminal (CI). Then the
# guest's kernels CI boots (vm/kernels.sh fetch 6.1 6.12): downloaded and
# unpacked into the suite's cache, never installed: the host's /boot is not
# touched. sid's 7.2 (make vm-check's) is fetched on its first use.
#
# Root installs: as root, `make deps` (no sudo needed: it installs sudo, so
# the README's commands run verbatim after it); as a user, `sudo make deps`.
# A user without root gets the packages it lacks named and how to get root,
# and nothing is installed.
#
# Debian 12 is what this is tested on. Ubuntu (untested: see the README)
# names some packages differently, and has no Debian kernels for the guest.
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
	dwarves             # kecho: pahole, for the BTF of a module built against 6.12
	linux-source-6.1    # make lint: scripts/checkpatch.pl, inside its tarball
	xz-utils            # make lint: to unpack checkpatch.pl from that tarball
	qemu-system-x86     # vm: the qemu guest (TCG)
	busybox-static      # vm: the guest's userland
	cpio                # vm: packs the guest's initramfs
	liburing-dev        # uring: the io_uring server (liburing 2.3 in Debian 12)
	shellcheck          # make lint
	linux-perf          # ftrace/percall.sh: perf stat's tracepoint counters
	sockperf            # run.sh command: sockperf behind the bypass (seed 004)
	haproxy             # run.sh --proxy haproxy: the relay people deploy (splice-auto)
	nginx               # run.sh --proxy nginx: the other one,
	libnginx-mod-stream #   with its stream module (TCP)
	wrk                 # cmd/seed003.sh: seed 003's HTTP client, through nginx
	cargo               # make peers: tokio-echo (crates.io, Cargo.lock)
	golang-go           # make peers: go-echo (the standard library alone)
)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/common.sh
source "$root/lib/common.sh"
prog_name deps
# shellcheck source=vm/kernels.sh
source "$root/vm/kernels.sh"	# KERNEL_DEPS

# shellcheck source=/dev/null # OS_RELEASE: the tests point it elsewhere
DISTRO=$(. "${OS_RELEASE:-/etc/os-release}" 2>/dev/null && echo "${ID:-}")

missing_packages() {
	local pkg
	for pkg in "${PACKAGES[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
			grep -q 'install ok installed'; then
			echo "$pkg"
		fi
	done
}

# distro_names PACKAGE...: the names this distribution gives them. Ubuntu
# (untested here): bpftool lives in linux-tools-$(uname -r), the headers
# are the running kernel's, the kernel source is linux-source, and apt has
# no Debian kernel to fetch for the guest (its host loads modules: kecho
# runs natively there; vm/ needs VM_KERNEL).
distro_names() {
	local pkg
	for pkg in "$@"; do
		case $DISTRO:$pkg in
		ubuntu:bpftool | ubuntu:linux-perf) echo linux-tools-common "linux-tools-$(uname -r)" ;;
		ubuntu:linux-headers-amd64) echo "linux-headers-$(uname -r)" ;;
		ubuntu:linux-source-6.1) echo linux-source ;;
		*) echo "$pkg" ;;
		esac
	done | tr ' ' '\n'
}

# as_root: how to run this again as root, for a message. sudo is one of the
# packages it installs, so a machine without it (a container, say) is told
# to use root itself.
as_root() {
	if command -v sudo >/dev/null; then
		echo "run 'sudo make deps', or 'make deps' as root"
	else
		echo "run 'make deps' as root (e.g. su -c 'make deps'); sudo is not installed, and make deps installs it"
	fi
}

# Packages the apt sources do not have are named and left out.
available() {
	local pkg
	for pkg in "$@"; do
		if apt-cache show "$pkg" >/dev/null 2>&1; then
			echo "$pkg"
		else
			echo "deps: warning: no package '$pkg' in the apt sources; skipping it" >&2
		fi
	done
}

# The guest's kernels: into the cache, once (never installed: a kernel
# package would put its image in the host's /boot). Debian 12's, which
# CI boots; sid's (7.2, 138 MB) waits for its first use.
fetch_kernels() {
	local v
	for v in "${KERNEL_DEPS[@]}"; do
		"$root/vm/kernels.sh" show "$v" >/dev/null 2>&1 && continue
		if [[ $DISTRO == debian ]]; then
			"$root/vm/kernels.sh" fetch "$v"
		else
			"$root/vm/kernels.sh" fetch "$v" ||
				echo "deps: warning: no Debian kernel $v for the guest here (vm/README.md)" >&2
		fi
	done
	echo "deps: guest kernels: $("$root/vm/kernels.sh" list | cut -d' ' -f1-2 | paste -sd, | sed 's/,/, /g')"
}

# quiet_services PACKAGE...: Debian starts a service it installs where
# systemd runs (nginx's default site on port 80, HAProxy): the suite
# starts its own relays, so the ones just installed are stopped and
# disabled, and said so. One the machine had before is left alone.
quiet_services() {
	local pkg
	[[ -d /run/systemd/system ]] || return 0
	for pkg in "$@"; do
		[[ $pkg == nginx || $pkg == haproxy ]] || continue
		systemctl disable --now "$pkg" >/dev/null 2>&1 &&
			echo "deps: stopped and disabled the $pkg service Debian started (run.sh starts its own: run.sh SERVER --proxy $pkg)"
	done
}

# inferno (flame graphs for ftrace/profile.sh): not a Debian package; built
# with cargo into /usr/local, at the version this was tested with. cargo is
# rustup's in ~/.cargo, or the one on PATH, else Debian's (whose Rust may be
# too old for it: then it says so and goes on, and profile.sh draws no
# flame graph until inferno is there).
INFERNO_VERSION=0.12.8
install_inferno() {
	local cargo
	if command -v inferno-flamegraph >/dev/null && command -v inferno-collapse-perf >/dev/null; then
		echo "deps: inferno is installed ($(inferno-flamegraph --version 2>/dev/null))"
		return 0
	fi
	[[ $(id -u) -eq 0 ]] || { warn "inferno (flame graphs) is missing: $(as_root)"; return 0; }
	# rustup's first: Debian's (a package above, for make peers) is older.
	cargo=${HOME:-/root}/.cargo/bin/cargo
	[[ -x $cargo ]] || cargo=$(command -v cargo || true)
	if [[ -z $cargo ]]; then
		echo "deps: installing cargo (Debian's), to build inferno"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends cargo
		cargo=$(command -v cargo || true)
	fi
	echo "deps: building inferno $INFERNO_VERSION with $cargo (a minute or two)"
	if ! "$cargo" install --quiet --locked --root /usr/local inferno --version "$INFERNO_VERSION"; then
		warn "warning: could not build inferno $INFERNO_VERSION: flame graphs need it;" \
			"install a newer Rust (https://rustup.rs) and run make deps again as root"
	fi
}

main() {
	local missing
	command -v apt-get >/dev/null ||
		die "apt-get not found: install these packages with your package manager: ${PACKAGES[*]}"
	mapfile -t PACKAGES < <(distro_names "${PACKAGES[@]}")
	mapfile -t missing < <(missing_packages)
	if ((${#missing[@]} == 0)); then
		echo "deps: all ${#PACKAGES[@]} packages are installed"
	else
		[[ $(id -u) -eq 0 ]] ||
			die "installing ${missing[*]} needs root: $(as_root)"
		echo "deps: installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		mapfile -t missing < <(available "${missing[@]}")
		apt-get install -y -q --no-install-recommends "${missing[@]}"
		quiet_services "${missing[@]}"
	fi
	install_inferno
	[[ $(id -u) -eq 0 ]] || { "$root/vm/kernels.sh" list; return 0; }
	fetch_kernels
	echo "deps: done"
}

main "$@"
