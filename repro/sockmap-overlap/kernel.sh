#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# repro/sockmap-overlap/kernel.sh - builds Debian's linux-source-7.2 twice,
# without and with 0001-tcp-*.patch (tcp_read_skb() hands on only the bytes
# at or after copied_seq), and runs run.sh in the guest on each: the
# before/after of WRITEUP.md. A long one-off (two kernel builds: about 20
# minutes for the first on 2 CPUs, a few for the second), not a CI test.
#
# Usage: kernel.sh [-w DIR] [-j JOBS] [-r RUNS] [-B | -R] [-- RUN.SH ARGS...]
#   -w DIR    where the source, the build and the images go (default
#             /var/cache/echolab/src; outside the repository)
#   -j JOBS   make -j (default 2; the build runs under nice -n 19)
#   -r RUNS   run.sh runs per kernel (default 2)
#   -B        build only: no guest runs
#   -R        run only: boot the images a previous build left in DIR/images
#   -h        this text
# Arguments after -- go to run.sh (e.g. -- -n '' for the control).
#
# Steps, each said on stderr as it starts:
#  1. fetch linux-source-7.2 (VERSION, 7.2.13-1) from Debian sid: the
#     .deb named by sid's Packages index, its SHA256 checked, curl, then
#     dpkg-deb -x and the tarball unpacked in DIR (nothing is installed;
#     no apt source is added)
#  2. flex, bison, m4 if the host lacks them: apt-get download and
#     dpkg-deb -x into DIR/tools (not installed either)
#  3. config: x86_64 defconfig + kvm_guest.config + kernel.config (this
#     directory), checked option by option; pahole for the BTF
#  4. build the unpatched bzImage in DIR/build, copy it to
#     DIR/images/vmlinuz-RELEASE-echolab-unpatched
#  5. apply the patch to the same tree, rebuild (incremental: tcp.o and
#     the link), copy to DIR/images/vmlinuz-RELEASE-echolab-patched
#  6. kecho.ko against the patched tree (make modules first, for
#     Module.symvers; built in a copy, DIR/kecho-build), copied to
#     DIR/images/kecho-RELEASE-echolab-patched.ko
#  7. for each image, RUNS times, under the machine's lock:
#     VM_KERNEL=IMAGE vm/run-vm.sh -- repro/sockmap-overlap/run.sh; each
#     output in DIR/results/, the summary lines printed
#  8. the suite's contract (tests/contract.t) for ebpf and kecho on the
#     patched kernel, kecho.ko added to the guest: the fix breaks neither
# The guest binaries must be built first: make -C repro/sockmap-overlap.
# Exit status: 0 done (whatever the runs found), 1 a step failed, 2 usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
readonly here repo
: "${VERSION:=7.2.13-1}"
readonly pkg=linux-source-7.2 mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly lock=${ECHOLAB_LOCK:-/work/echolab.lock}
dir=/var/cache/echolab/src jobs=2 runs=2 build=1 run=1

usage() {
	if [[ ${1:-2} == 0 ]]; then
		sed -n '/^# Usage:/,/^# Exit status/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	else
		echo "usage: kernel.sh [-w DIR] [-j JOBS] [-r RUNS] [-B | -R] [-- RUN.SH ARGS...] (-h: more)" >&2
	fi
	exit "${1:-2}"
}
say() { echo "kernel.sh: $*" >&2; }
die() {
	say "error: $*"
	exit 1
}

[[ ${1:-} != --help ]] || usage 0
while getopts w:j:r:BRh opt; do
	case $opt in
	w) dir=$OPTARG ;;
	j) jobs=$OPTARG ;;
	r) runs=$OPTARG ;;
	B) run=0 ;;
	R) build=0 ;;
	h) usage 0 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
run_args=("$@")
[[ $jobs =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] || usage 2
((build || run)) || { say "-B and -R together leave nothing to do"; usage 2; }
case $dir in
"$repo" | "$repo"/*) die "-w $dir is inside the repository: kernel source and binaries stay out of it" ;;
esac

patches=("$here"/0001-*.patch)
[[ -f ${patches[0]} ]] || die "no 0001-*.patch in $here"
patch_file=${patches[0]}
src=$dir/$pkg build_dir=$dir/build images=$dir/images
mkdir -p "$dir" "$images" || die "cannot create $dir"

step_fetch() {
	local deb=$dir/${pkg}_${VERSION}_all.deb entry file sum
	if [[ -f $src/Makefile ]]; then
		say "1. source: $src is there (remove it to unpack again)"
		return 0
	fi
	say "1. fetching $pkg $VERSION from sid's Packages index"
	command -v curl >/dev/null || die "curl not found"
	command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
	if [[ ! -f $deb ]]; then
		curl -sSfL -o "$dir/Packages.xz" "$mirror/dists/sid/main/binary-all/Packages.xz" ||
			die "cannot fetch sid's Packages.xz from $mirror"
		entry=$(xz -dc "$dir/Packages.xz" | awk -v p="$pkg" -v v="$VERSION" '
			/^Package: / { ok = ($2 == p) } ok && /^Version: / { ok = ($2 == v) }
			ok && /^(Filename|SHA256): / { print $2 } /^$/ { ok = 0 }')
		file=$(sed -n 1p <<<"$entry") sum=$(sed -n 2p <<<"$entry")
		[[ -n $file && -n $sum ]] ||
			die "sid has no $pkg $VERSION any more (VERSION=... for another; old ones: snapshot.debian.org)"
		say "   $mirror/$file"
		curl -sSfL -o "$deb.tmp" "$mirror/$file" || die "cannot fetch $file"
		echo "$sum  $deb.tmp" | sha256sum -c --quiet || die "$file: SHA256 differs from the index"
		mv "$deb.tmp" "$deb"
	fi
	rm -rf "$dir/deb"
	dpkg-deb -x "$deb" "$dir/deb" || die "dpkg-deb -x $deb failed"
	say "   unpacking $pkg.tar.xz into $dir"
	tar -C "$dir" -xJf "$dir/deb/usr/src/$pkg.tar.xz" || die "cannot unpack the tarball"
	[[ -f $src/Makefile ]] || die "the tarball has no $pkg/Makefile"
}

step_tools() {
	local t missing=() d
	for t in flex bison m4; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	if ((${#missing[@]})); then
		say "2. ${missing[*]} not on the host: unpacking them into $dir/tools (not installed)"
		mkdir -p "$dir/tools/debs"
		if [[ ! -x $dir/tools/root/usr/bin/bison || ! -x $dir/tools/root/usr/bin/flex ]]; then
			(cd "$dir/tools/debs" && apt-get download flex bison m4 libfl2 >/dev/null) ||
				die "apt-get download flex bison m4 failed (apt-get update first?)"
			for d in "$dir"/tools/debs/*.deb; do
				dpkg-deb -x "$d" "$dir/tools/root" || die "dpkg-deb -x $d failed"
			done
		fi
		export PATH=$dir/tools/root/usr/bin:$PATH
		export BISON_PKGDATADIR=$dir/tools/root/usr/share/bison M4=$dir/tools/root/usr/bin/m4
	else
		say "2. flex, bison, m4: on the host"
	fi
	for t in gcc make bc perl; do
		command -v "$t" >/dev/null || die "$t not found (apt-get install build-essential bc)"
	done
	command -v pahole >/dev/null ||
		die "pahole not found: CONFIG_DEBUG_INFO_BTF needs it (apt-get install dwarves); the tracer needs the BTF"
}

step_config() {
	local k v
	say "3. config: defconfig + kvm_guest.config + kernel.config in $build_dir"
	mkdir -p "$build_dir"
	make -C "$src" O="$build_dir" -s defconfig kvm_guest.config >/dev/null || die "make defconfig failed"
	"$src/scripts/kconfig/merge_config.sh" -m -O "$build_dir" "$build_dir/.config" \
		"$here/kernel.config" >/dev/null || die "merge_config.sh failed"
	make -C "$src" O="$build_dir" -s olddefconfig || die "make olddefconfig failed"
	while IFS='=' read -r k v; do
		if [[ $v == n ]]; then
			! grep -q "^$k=" "$build_dir/.config" || die "$k is still set (kernel.config wants it off)"
		else
			grep -q "^$k=$v\$" "$build_dir/.config" || die "$k is not $v in the config (a dependency missing?)"
		fi
	done < <(grep -E '^CONFIG_' "$here/kernel.config")
}

# build NAME: bzImage in the build dir, copied to images/
build_image() {
	local name=$1 start=$SECONDS rel log=$dir/build-$1.log
	say "   make -j$jobs bzImage (nice -n 19), log $log"
	nice -n 19 make -C "$src" O="$build_dir" -j"$jobs" bzImage >"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "the $name build failed ($log)"
	}
	rel=$(make -s -C "$src" O="$build_dir" kernelrelease)
	cp "$build_dir/arch/x86/boot/bzImage" "$images/vmlinuz-$rel-echolab-$name"
	say "   $images/vmlinuz-$rel-echolab-$name ($((SECONDS - start)) s)"
}

step_build() {
	say "4. building the unpatched kernel"
	if patch -d "$src" -p1 -R --dry-run -s -f <"$patch_file" >/dev/null 2>&1; then
		say "   the tree has the patch: reverting it first"
		patch -d "$src" -p1 -R -s <"$patch_file" || die "cannot revert $patch_file"
	fi
	build_image unpatched
	say "5. applying $(basename "$patch_file"), building the patched kernel"
	patch -d "$src" -p1 -s <"$patch_file" || die "$patch_file does not apply"
	build_image patched
	step_kecho
}

# kecho built against the patched tree, which the guest then loads.
step_kecho() {
	local rel kb=$dir/kecho-build log=$dir/build-modules.log
	say "6. kecho.ko for the patched kernel: make modules (log $log), then kecho in $kb"
	nice -n 19 make -C "$src" O="$build_dir" -j"$jobs" modules >"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "make modules failed ($log)"
	}
	rm -rf "$kb"
	mkdir -p "$kb"
	cp "$repo"/kecho/*.c "$repo/kecho/Kbuild" "$repo/common/defaults.h" "$kb/"
	make -C "$build_dir" M="$kb" modules >"$kb/build.log" 2>&1 || {
		tail -n 30 "$kb/build.log" >&2
		die "kecho did not build against $build_dir ($kb/build.log)"
	}
	rel=$(make -s -C "$src" O="$build_dir" kernelrelease)
	cp "$kb/kecho.ko" "$images/kecho-$rel-echolab-patched.ko"
	say "   $images/kecho-$rel-echolab-patched.ko"
}

step_run() {
	local name img imgs i out
	[[ -x $here/overlap-echo && -x $here/checked-client ]] ||
		die "the guest binaries are not built: make -C repro/sockmap-overlap"
	mkdir -p "$dir/results"
	for name in unpatched patched; do
		imgs=("$images"/vmlinuz-*-echolab-"$name")
		img=${imgs[0]}
		[[ -f $img ]] || die "no $name image in $images (build first: no -R)"
		for ((i = 1; i <= runs; i++)); do
			out=$dir/results/$name-$i.txt
			say "7. $name, run $i of $runs: flock $lock VM_KERNEL=$img vm/run-vm.sh -- repro/sockmap-overlap/run.sh ${run_args[*]}"
			VM_KERNEL=$img flock "$lock" "$repo/vm/run-vm.sh" --timeout 480 -- \
				repro/sockmap-overlap/run.sh -T 300 "${run_args[@]}" >"$out" 2>&1 || true
			grep -E '^(# kernel|overlap-echo: end|trace skbs|check |echoes=|run-vm.sh)' "$out" |
				sed "s/^/  $name $i| /" || say "   no summary: see $out"
		done
	done
	step_contract
}

# The suite's contract for ebpf and kecho, on the patched kernel.
step_contract() {
	local imgs kos out=$dir/results/contract-patched.txt
	imgs=("$images"/vmlinuz-*-echolab-patched)
	kos=("$images"/kecho-*-echolab-patched.ko)
	[[ -f ${kos[0]} ]] || die "no kecho.ko for the patched kernel in $images (build first: no -R)"
	say "8. flock $lock VM_KERNEL=${imgs[0]} vm/run-vm.sh --add ${kos[0]}:/lab/kecho/kecho.ko -- bash tests/contract.t ebpf kecho"
	VM_KERNEL=${imgs[0]} flock "$lock" "$repo/vm/run-vm.sh" --timeout 900 \
		--add "${kos[0]}:/lab/kecho/kecho.ko" -- bash tests/contract.t ebpf kecho >"$out" 2>&1 || true
	say "   $(grep -c '^ok' "$out") ok, $(grep -c '^not ok' "$out") not ok ($out)"
	grep '^not ok' "$out" | sed 's/^/  contract| /' || true
}

if ((build)); then
	step_fetch
	step_tools
	step_config
	step_build
fi
((run)) && step_run
say "done"
