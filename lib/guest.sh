# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # ARGS_WITHOUT_KERNEL: for its users
# lib/guest.sh - "the same command, in the qemu guest": the one helper that
# run.sh --vm, compare --vm, soak, the ftrace scripts' --vm and the tests
# use. The guest itself is vm/run-vm.sh; its kernels, vm/kernels.sh.

# shellcheck source=lib/registry.sh
source "$(dirname "${BASH_SOURCE[0]}")/registry.sh"
# shellcheck source=vm/kernels.sh
source "$ECHOLAB_ROOT/vm/kernels.sh"

VM_RUN=$ECHOLAB_ROOT/vm/run-vm.sh

# guest_build: everything the guest runs (servers, fronts, bench...),
# built, and each module server (kind=module) built for the kernel it boots
# ($ECHOLAB_KERNEL, default 6.1; none where its compiler is not here:
# 7.2); vm/run-vm.sh puts each where its declaration says.
guest_build() {
	local kver s
	kver=$("$VM_RUN" --print-kernel) || return 1
	make -C "$ECHOLAB_ROOT" --no-print-directory bench "${SERVERS[@]}" "${FRONTS[@]}" ftrace tests >/dev/null || {
		warn "the build for the guest failed: run 'make all tests' to see why"
		return 1
	}
	# Status 3: a kernel the host cannot build modules for (its compiler
	# is not here: 7.2); the guest says why its module servers cannot run.
	for s in "${SERVERS[@]}"; do
		[[ $(server_get "$s" kind) == module ]] || continue
		kernel_module "$(server_get "$s" dir)" >/dev/null || (($? == 3)) || {
			warn "building $s for the guest's kernel $kver failed: run 'vm/kernels.sh module $(server_get "$s" dir) ${ECHOLAB_KERNEL:-$KERNEL_DEFAULT}'"
			return 1
		}
	done
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

# guest_kernel_option ARGS...: --kernel VERSION (before any --) picks the
# guest's kernel (exported as ECHOLAB_KERNEL, for vm/run-vm.sh); only with
# --vm. ARGS_WITHOUT_KERNEL gets the other arguments.
guest_kernel_option() {
	local vm=0 given=''
	ARGS_WITHOUT_KERNEL=()
	while (($#)); do
		case $1 in
		--) ARGS_WITHOUT_KERNEL+=("$@"); break ;;
		--vm) vm=1; ARGS_WITHOUT_KERNEL+=("$1") ;;
		--kernel)
			(($# >= 2)) || usage_error "--kernel needs a version (${KERNEL_VERSIONS[*]})"
			kernel_check "$2" 2>/dev/null ||
				usage_error "--kernel $2: unknown kernel; the guest boots ${KERNEL_VERSIONS[*]}"
			given=$2
			shift
			;;
		*) ARGS_WITHOUT_KERNEL+=("$1") ;;
		esac
		shift
	done
	[[ -n $given ]] || return 0
	((vm)) || usage_error "--kernel picks the qemu guest's kernel: use it with --vm" \
		"(natively the kernel is the running one, $(uname -r))"
	given=$(kernel_name "$given")
	export ECHOLAB_KERNEL=$given
}
