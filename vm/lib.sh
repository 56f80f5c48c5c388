# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# vm/lib.sh - "the same command, in the qemu guest": the one helper that
# run.sh --vm, run.sh compare --vm and the ftrace scripts' --vm use.
# Source servers/lib.sh first (SERVERS, ECHOLAB_ROOT).

VM_RUN=$ECHOLAB_ROOT/vm/run-vm.sh

# shellcheck source=vm/kernels.sh
source "$ECHOLAB_ROOT/vm/kernels.sh"

# guest_build: everything the guest runs, built, and kecho.ko for the
# kernel it boots ($ECHOLAB_KERNEL, default 6.1): kecho/kecho.ko when it
# was built for that kernel, else kecho/build/RELEASE/kecho.ko, which
# run-vm.sh puts in kecho/ in the guest.
guest_build() {
	local kver
	kver=$("$VM_RUN" --print-kernel) || return 1
	make -C "$ECHOLAB_ROOT" --no-print-directory bench "${SERVERS[@]}" ftrace tests >/dev/null || {
		echo "vm: the build failed: run 'make all' to see why" >&2
		return 1
	}
	kernel_kecho >/dev/null || {
		echo "vm: building kecho.ko for $kver failed: run 'vm/kernels.sh kecho ${ECHOLAB_KERNEL:-$KERNEL_DEFAULT}'" >&2
		return 1
	}
}

# in_guest OUT TIMEOUT COMMAND...: builds what the guest needs, then runs
# COMMAND (from the repository's root, with ECHOLAB_WHERE=vm) in the guest,
# whose /out is OUT here; its output names OUT wherever it says /out.
# Returns COMMAND's status (run-vm.sh's own: 124 timeout, 125 guest died).
in_guest() {
	local out=$1 timeout=$2
	shift 2
	guest_build || return 1
	mkdir -p "$out"
	"$VM_RUN" --timeout "$timeout" --out "$out" -- env ECHOLAB_WHERE=vm "$@" |
		sed -u "s#/out\([/\` ]\|$\)#$out\1#g"
	return "${PIPESTATUS[0]}"
}
