#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command in a qemu guest that boots a Debian kernel (6.1, 6.12 or
# 7.2, from the suite's cache), a kernel that can load modules (the host's
# may not: CONFIG_MODULES=n).
#
#   vm/run-vm.sh [OPTIONS] -- COMMAND [ARG...]
#
#   --kernel VERSION the guest's kernel: 6.1 (default, or $ECHOLAB_KERNEL),
#                    6.12 or 7.2 (newest: Debian sid's), fetched into the
#                    cache on first use (vm/kernels.sh: where each comes
#                    from; never /boot)
#   --timeout SEC    bound on the whole run, boot included (default 600)
#   --out DIR        shared read-write with the guest as /out (9p); results
#                    written there come back to the host, plus dmesg.txt
#   --add HOST[:GUEST]
#                    also copy HOST (a file or directory) into the guest, at
#                    GUEST or the same path; ELF files bring their libraries
#   --tap NETNS:IFNAME:ADDR/PREFIX
#                    a network card (virtio-net) joined to a tap device
#                    IFNAME that qemu makes in the host's namespace NETNS
#                    (which must exist); the guest's eth0 gets ADDR/PREFIX.
#                    The host's end of the tap is the caller's to address
#   --kernel-log     also show the kernel's messages (up to KERN_INFO) on our
#                    output; they always go to a log whose last lines are
#                    printed when the guest hangs or dies (a soft lockup
#                    panics it: softlockup_panic=1)
#   --print-kernel   print the release of the kernel the guest would boot
#                    (what the suite's modules must be built for), and exit
#   -h, --help
#
# The guest gets busybox, the repository at /lab (built binaries included,
# with their shared libraries), the servers' modules built for its kernel
# (none on 7.2: its compiler is not here; /etc/vm/no-module-build says why), bash,
# iproute2 (tc for netem, whose module it loads), nsenter and bpftool.
# COMMAND runs as root in /lab with OUT=/out; its output streams to stdout
# and its exit status is this script's. Own failures: 2 usage, 124 timeout,
# 125 the guest or qemu failed. A guest that did not boot (its kernel died
# or hung before init started COMMAND) is booted again, once, saying so on
# stderr; COMMAND itself, failing or not, runs once.
#
# Environment: ECHOLAB_KERNEL (--kernel's default), VM_KERNEL (an image to
# boot instead of 6.1's, its modules in /lib/modules, or none when it has
# everything built in; default: 6.1's, from the cache vm/kernels.sh fetches into),
# VM_TAP (--tap's default), VM_SMP (2), VM_MEM (2G), VM_CPUS (the host CPUs qemu's threads may run
# on, every thread of it: taskset's list; default: any), VM_TCG_THREAD (multi: a host thread per vCPU;
# single: one for all, about 1.4 x slower), VM_TOOLS (more host commands to copy in),
# VM_APPEND (more kernel command line, e.g. slub_debug=FZP), VM_LOG_LINES
# (60: how much of the kernel log a failure shows), VM_BOOT_TIMEOUT (120:
# seconds for the guest to boot before it counts as not booting),
# VM_FAIL_BOOTS (0; for tests: the first N boots fail, a kernel panic).
#
# Example:
#   vm/run-vm.sh -- sh -c 'insmod kecho/kecho.ko && cat /proc/kecho'
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly repo
# shellcheck source=lib/registry.sh
source "$repo/lib/registry.sh"
# shellcheck source=vm/kernels.sh
source "$repo/vm/kernels.sh"
guest_modules=(virtio_pci 9pnet_virtio 9p veth inet_diag tcp_diag sch_netem)
# --tap's network card (virtio_net needs net_failover, which needs failover)
readonly tap_modules=(failover net_failover virtio_net)
readonly default_tools=(bash ip ss tc nsenter bpftool)

timeout_s=600
kversion=${ECHOLAB_KERNEL:-$KERNEL_DEFAULT}
no_module_build=
out_dir=
kernel_log=0
adds=()
tap=${VM_TAP:-}	# --tap NETNS:IFNAME:ADDR/PREFIX
stage=
modules_ko=()
workdir=
qemu_pid=
watchdog=

prog_name run-vm.sh "vm/run-vm.sh --help"

# fail MESSAGE: the guest or qemu failed (exit 125; usage errors are 2).
fail() {
	warn "$*"
	exit 125
}

usage() {
	sed -n '/^# Run a command/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

# shellcheck disable=SC2317  # trap handlers
cleanup() {
	if [[ -n $qemu_pid ]]; then
		kill -TERM "$qemu_pid" 2>/dev/null || true
	fi
	if [[ -n $watchdog ]]; then
		kill "$watchdog" 2>/dev/null || true
	fi
	if [[ -n $workdir ]]; then
		rm -rf "$workdir"
	fi
}

# shellcheck disable=SC2317
on_signal() {
	warn "interrupted; stopping the guest"
	exit 130
}

parse_args() {
	while (($#)); do
		case $1 in
		--timeout)
			(($# >= 2)) || usage_error "--timeout needs a value"
			[[ $2 =~ ^[1-9][0-9]*$ ]] || usage_error "--timeout: not a number of seconds: $2"
			timeout_s=$2
			shift 2
			;;
		--kernel)
			(($# >= 2)) || usage_error "--kernel needs a version (${KERNEL_VERSIONS[*]})"
			kernel_check "$2" 2>/dev/null ||
				usage_error "--kernel $2: unknown; the guest boots ${KERNEL_VERSIONS[*]}"
			kversion=$(kernel_name "$2")
			shift 2
			;;
		--out)
			(($# >= 2)) || usage_error "--out needs a directory"
			out_dir=$2
			shift 2
			;;
		--add)
			(($# >= 2)) || usage_error "--add needs HOST[:GUEST]"
			adds+=("$2")
			shift 2
			;;
		--tap)
			(($# >= 2)) || usage_error "--tap needs NETNS:IFNAME:ADDR/PREFIX"
			tap=$2
			shift 2
			;;
		--kernel-log)
			kernel_log=1
			shift
			;;
		--print-kernel)
			find_kernel
			echo "$kver"
			exit 0
			;;
		-h | --help)
			usage
			exit 0
			;;
		--)
			shift
			break
			;;
		*)
			usage_error "unknown option '$1' (the command goes after --; see --help)"
			;;
		esac
	done
	(($#)) || usage_error "no command given: vm/run-vm.sh [OPTIONS] -- COMMAND [ARG...]"
	command_args=("$@")
}

find_kernel() {
	local why
	kernel_check "$kversion" 2>/dev/null ||
		usage_error "unknown kernel '$kversion' (ECHOLAB_KERNEL?); the guest boots ${KERNEL_VERSIONS[*]}"
	kversion=$(kernel_name "$kversion")
	if ! why=$(kernel_find "$kversion" 2>&1); then
		[[ $kversion != 6.1 || -z ${VM_KERNEL:-} ]] || fail "$why"
		warn "kernel $kversion is not in the cache yet; fetching it (once)"
		kernel_fetch "$kversion" >&2 || fail "cannot fetch kernel $kversion: $why"
	fi
	kernel_find "$kversion" || fail "kernel $kversion: not usable"
	kernel=$KERNEL_IMAGE
	kver=$KERNEL_RELEASE
	moddir=$KERNEL_MODDIR
	command -v qemu-system-x86_64 >/dev/null ||
		fail "qemu-system-x86_64 not found: apt-get install qemu-system-x86 (or 'make deps')"
	if [[ ! -x /bin/busybox ]] || ! file_is_static /bin/busybox; then
		fail "a static /bin/busybox is needed: apt-get install busybox-static (or 'make deps')"
	fi
}

file_is_static() {
	! ldd "$1" >/dev/null 2>&1
}

is_elf() {
	[[ -f $1 && $(head -c 4 "$1" | od -An -c | tr -d ' ') == '177ELF' ]]
}

# copy_file HOST GUEST: the file, and for a dynamic ELF its libraries
copy_file() {
	local src=$1 dst=$2
	mkdir -p "$stage$(dirname "$dst")"
	cp -L "$src" "$stage$dst"
	copy_libs "$src"
}

# the shared libraries (and the loader) of an ELF file, at their host paths
copy_libs() {
	local lib
	is_elf "$1" || return 0
	while read -r lib; do
		[[ -e $stage$lib ]] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done < <(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' || true)
}

# copy_tree HOSTDIR GUESTDIR: without .git, the --out directory and the
# measured results (100+ MB of raw samples the guest's RAM would hold)
copy_tree() {
	local src=$1 dst=$2 f
	local skip=(--exclude=./.git --exclude='./results/20*' --exclude=./results/runs)
	if [[ -n $out_dir && $out_dir == "$src"/* ]]; then
		skip+=("--exclude=.${out_dir#"$src"}")
	fi
	mkdir -p "$stage$dst"
	tar -C "$src" "${skip[@]}" -cf - . | tar -C "$stage$dst" -xf -
	while IFS= read -r -d '' f; do
		copy_libs "$src/${f#./}"
	done < <(cd "$stage$dst" && find . -type f -perm -u+x -print0)
}

# module_builtin NAME: the kernel has it built in (6.12, 7.2: virtio_pci),
# by its modules.builtin, else (a kernel that ships none) by the module
# names in modules.builtin.modinfo, else by its config's CONFIG_NAME=y
# (virtio_pci: CONFIG_VIRTIO_PCI).
module_builtin() {
	local name=$1
	if [[ -f $moddir/modules.builtin ]]; then
		grep -qE "/${name}\.ko\$" "$moddir/modules.builtin"
	elif [[ -f $moddir/modules.builtin.modinfo ]]; then
		tr '\0' '\n' <"$moddir/modules.builtin.modinfo" | grep -q "^${name}\."
	else
		grep -qx "CONFIG_${name^^}=y" "$moddir/config" 2>/dev/null
	fi
}

# modules (with their dependencies, in load order) from modules.dep
module_load_order() {
	local name line dep deps i
	local -A seen=()
	# VM_KERNEL with everything built in: no modules.dep, nothing to load
	[[ -f $moddir/modules.dep ]] || return 0
	for name in "${guest_modules[@]}"; do
		# built in: nothing to load
		module_builtin "$name" && continue
		line=$(grep -E "/${name}\.ko(\.[a-z]+)?:" "$moddir/modules.dep") ||
			fail "module $name not found in $moddir/modules.dep"
		read -ra deps <<<"${line#*:}"
		for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
			dep=${deps[i]}
			[[ -n ${seen[$dep]:-} ]] || { seen[$dep]=1; echo "$dep"; }
		done
		dep=${line%%:*}
		[[ -n ${seen[$dep]:-} ]] || { seen[$dep]=1; echo "$dep"; }
	done
}

# shell-quote each argument for the guest's sh
quote_args() {
	local a q=\'
	for a in "$@"; do
		printf "'%s' " "${a//$q/$q\\$q$q}"
	done
}

write_init() {
	cat >"$stage/init" <<EOF
#!/bin/sh
# guest init, generated by vm/run-vm.sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb VM=1 LAB=/lab OUT=/out
mount -t devtmpfs devtmpfs /dev
exec </dev/ttyS0 >/dev/ttyS0 2>&1	# the kernel log has its own port
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# bash process substitution <(...) needs /dev/fd
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
hostname echolab-vm
ip link set lo up
while read -r m; do
	insmod "/lib/modules/$kver/\$m" || echo "init: insmod \$m failed"
done </etc/vm/modules
if [ -n "${tap:+y}" ]; then
	ip addr add ${tap##*:} dev eth0 && ip link set eth0 up ||
		echo "init: cannot bring eth0 up with ${tap##*:}"
fi
if [ -n "${out_dir:+y}" ]; then
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out ||
		echo "init: cannot mount the 9p share /out"
fi
# The kernel booted on one vCPU (maxcpus=1, run-vm.sh): the others come
# up now, its boot-time text patching (modules' too) done.
for f in /sys/devices/system/cpu/cpu*/online; do
	[ -e "\$f" ] || continue	# one vCPU: cpu0 has no online file
	[ "\$(cat "\$f")" = 1 ] || echo 1 >"\$f" || echo "init: cannot bring \${f%/online} online"
done
stty -onlcr
ulimit -n 65536
read -r up _ </proc/uptime
echo "boot=\$up" >/dev/ttyS1
cd /lab
sh /etc/vm/command </dev/null
rc=\$?
if grep -q ' /out 9p ' /proc/mounts; then
	dmesg >/out/dmesg.txt
	sync
	umount /out
fi
echo "exit=\$rc" >/dev/ttyS1
echo 0 >/proc/sys/kernel/printk
poweroff -f
EOF
	chmod 755 "$stage/init"
}

build_initramfs() {
	local d t tool path spec src dst
	stage=$workdir/root
	mkdir -p "$stage"/usr/{bin,sbin,lib,lib64}
	for d in bin sbin lib lib64; do
		ln -s "usr/$d" "$stage/$d"
	done
	mkdir -p "$stage"/{dev,proc,sys,tmp,run,root,etc/vm,out,lab}
	chmod 1777 "$stage/tmp"
	mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true

	cp /bin/busybox "$stage/usr/bin/busybox"
	while read -r path; do
		[[ -e $stage/$path || -L $stage/$path ]] ||
			ln -s /usr/bin/busybox "$stage/$path"
	done < <(/bin/busybox --list-full)

	read -ra t <<<"${VM_TOOLS:-}"
	for tool in "${default_tools[@]}" "${t[@]}"; do
		path=$(command -v "$tool" 2>/dev/null) || continue
		rm -f "$stage$path"
		copy_file "$path" "$path"
	done

	# busybox sh runs its own applets before PATH (its ip has no netns)
	if [[ -x $stage/usr/bin/bash ]]; then
		ln -sf bash "$stage/usr/bin/sh"
	fi

	# At /lib/modules/RELEASE in the guest, wherever they are here;
	# compressed ones (6.12: .ko.xz) unpacked, for busybox's insmod.
	module_load_order | while read -r path; do
		mkdir -p "$stage/lib/modules/$kver/$(dirname "$path")"
		case $path in
		*.xz) xz -dc "$moddir/$path" >"$stage/lib/modules/$kver/${path%.xz}" ;;
		*) cp "$moddir/$path" "$stage/lib/modules/$kver/$path" ;;
		esac
		echo "${path%.xz}"
	done >"$stage/etc/vm/modules"

	copy_tree "$repo" /lab
	for spec in "${modules_ko[@]}"; do
		if [[ ${spec%%:*} == /dev/null ]]; then
			rm -f "$stage/lab/${spec#*:}"
		else
			cp "${spec%%:*}" "$stage/lab/${spec#*:}"
		fi
	done
	[[ -z $no_module_build ]] || echo "$no_module_build" >"$stage/etc/vm/no-module-build"
	for spec in "${adds[@]}"; do
		src=${spec%%:*}
		dst=${spec#*:}
		[[ $spec == *:* ]] || dst=$(realpath "$src")
		[[ -e $src ]] || usage_error "--add: $src does not exist"
		if [[ -d $src ]]; then
			copy_tree "$(realpath "$src")" "$dst"
		else
			rm -f "$stage$dst"
			copy_file "$src" "$dst"
		fi
	done

	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
	printf 'root:x:0:\n' >"$stage/etc/group"
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$stage/etc/hosts"
	{
		echo "cd /lab || exit 125"
		quote_args "${command_args[@]}"
		echo
	} >"$stage/etc/vm/command"
	write_init

	(cd "$stage" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) \
		>"$workdir/initramfs.cpio"
}

# The suite's modules (kind=module in servers/) built for the guest's
# kernel (vm/kernels.sh builds each when the one in its directory is for
# another kernel): the guest finds each at its declared binary path.
# A kernel the host cannot build modules for (its compiler is not here:
# 7.2) gets none, and the guest is told why in /etc/vm/no-module-build (a
# module server's need module-build, lib/registry.sh); a copy of the
# repository's own module, built for another kernel, is left out.
build_modules() {
	local s dir ko rc
	[[ -f $moddir/modules.dep ]] || return 0	# no modules (VM_KERNEL)
	for s in "${SERVERS[@]}"; do
		[[ $(server_get "$s" kind) == module ]] || continue
		dir=$(server_get "$s" dir)
		[[ -f $repo/$dir/Kbuild ]] || continue
		rc=0
		ko=$(kernel_module "$dir" "$kversion" 2>"$workdir/module.err") || rc=$?
		if ((rc == 3)); then
			no_module_build=$(sed 's/^kernels: //' "$workdir/module.err")
			modules_ko+=("/dev/null:$(server_get "$s" binary)")
			warn "$no_module_build"
			continue
		fi
		cat "$workdir/module.err" >&2
		if ((rc == 0)); then
			modules_ko+=("$ko:$(server_get "$s" binary)")
		else
			warn "warning: no $s module for $kver: vm/kernels.sh module $dir $kversion says why"
		fi
	done
}

# The end of the guest kernel's log, for a guest that hung or died.
kernel_log_tail() {
	local log=$workdir/kernel.log
	[[ -s $log ]] || return 0
	echo "run-vm.sh: the last lines of the guest kernel's log:" >&2
	tr -d '\r' <"$log" | tail -n "${VM_LOG_LINES:-60}" | sed 's/^/  kernel| /' >&2
}

# qemu_command [KERNEL_ARG...]: the qemu command line, in the array qemu.
qemu_command() {
	local console=ttyS2
	# The kernel's messages always go to a file of their own (ttyS2), told
	# when the guest fails; --kernel-log also puts them on our output.
	((kernel_log)) && console="ttyS2 console=ttyS0"
	# softlockup_panic: a CPU stuck in the kernel ends the guest in seconds,
	# with the stack in the log, instead of running into --timeout.
	# maxcpus=1: the kernel boots on one vCPU and init brings the others up
	# just before the command (docs/guest.md, "A guest that did not boot");
	# noreplace-smp keeps its SMP instructions, so that patches nothing.
	qemu=(qemu-system-x86_64 -accel "tcg,thread=${VM_TCG_THREAD:-multi}" -cpu max
		-smp "${VM_SMP:-2}" -m "${VM_MEM:-2G}"
		-nographic -nodefaults -no-user-config -no-reboot
		-bios qboot.rom
		-kernel "$kernel" -initrd "$workdir/initramfs.cpio"
		-append "console=$console rdinit=/init edd=off panic=-1 softlockup_panic=1 loglevel=7 maxcpus=1 noreplace-smp ${VM_APPEND:-} $*"
		-serial stdio -serial "file:$workdir/status"
		-serial "file:$workdir/kernel.log")
	if [[ -n $tap ]]; then
		local ifname=${tap#*:}
		qemu+=(-netdev "tap,id=net0,ifname=${ifname%%:*},script=no,downscript=no"
			-device "virtio-net-pci,netdev=net0")
		# qemu makes the tap where it runs: in NETNS.
		qemu=(nsenter "--net=/run/netns/${tap%%:*}" "${qemu[@]}")
	fi
	[[ -z ${VM_CPUS:-} ]] || qemu=(taskset -c "$VM_CPUS" "${qemu[@]}")
	if [[ -n $out_dir ]]; then
		qemu+=(-fsdev "local,id=out,path=$out_dir,security_model=none"
			-device "virtio-9p-pci,fsdev=out,mount_tag=out")
	fi
}

# boot_watchdog QEMU_PID LIMIT: ends a guest that has not said it is up
# (init's boot= line) within LIMIT seconds; run in the background.
boot_watchdog() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		grep -q '^boot=' "$workdir/status" 2>/dev/null && return 0
		sleep 0.2
	done
	: >"$workdir/boot-hung"
	kill -TERM "$1" 2>/dev/null || true
}

# boot_once [KERNEL_ARGS...]: one run of qemu, to its end; sets qemu_rc,
# boot (init's time to the command, empty when the guest never got there)
# and exit_code (the command's status, empty when it did not report one).
boot_once() {
	local qemu remaining status limit=${VM_BOOT_TIMEOUT:-120}
	qemu_command "$@"
	rm -f "$workdir/status" "$workdir/kernel.log" "$workdir/boot-hung"
	qemu_rc=0
	remaining=$((timeout_s - SECONDS > 1 ? timeout_s - SECONDS : 1))
	timeout --kill-after=10 "$remaining" "${qemu[@]}" </dev/null &
	qemu_pid=$!
	boot_watchdog "$qemu_pid" "$limit" </dev/null >/dev/null 2>&1 &
	watchdog=$!
	wait "$qemu_pid" || qemu_rc=$?
	qemu_pid=
	kill "$watchdog" 2>/dev/null || true
	wait "$watchdog" 2>/dev/null || true
	watchdog=
	status=$(cat "$workdir/status" 2>/dev/null || true)
	boot=$(sed -n 's/^boot=//p' <<<"$status" | tr -d '\r')
	exit_code=$(sed -n 's/^exit=//p' <<<"$status" | tr -d '\r')
	if [[ -e $workdir/boot-hung ]]; then
		boot_failure="not up within ${limit}s (VM_BOOT_TIMEOUT)"
	elif [[ -z $boot ]] && ((qemu_rc != 124 && qemu_rc != 137)); then
		boot_failure="it ended before init started the command, qemu status $qemu_rc"
	else
		boot_failure=
	fi
}

# Boots the guest and runs the command. A guest that did not boot (its
# kernel died, or it hung, before init started the command) is booted
# again, once, saying so: under TCG a boot can die for the emulator's
# sake (docs/guest.md). A command that failed, or a kernel that died
# under it, is never run again here. VM_FAIL_BOOTS=N (for tests) makes
# the first N boots fail: init is a file that does not exist, so the
# kernel panics finding no root.
run_qemu() {
	local start=$SECONDS attempt fails=${VM_FAIL_BOOTS:-0} extra
	for attempt in 1 2; do
		extra=()
		((attempt <= fails)) && extra=(rdinit=/no-init-VM_FAIL_BOOTS)
		boot_once "${extra[@]}"
		[[ -n $boot_failure ]] || break
		kernel_log_tail
		((attempt == 1)) || fail "the guest did not boot, twice ($boot_failure)"
		warn "the guest did not boot ($boot_failure); booting again, once"
	done
	if ((qemu_rc == 124 || qemu_rc == 137)) || [[ -z $exit_code ]]; then
		kernel_log_tail
	fi
	if ((qemu_rc == 124 || qemu_rc == 137)); then
		echo "run-vm.sh: timed out after ${timeout_s}s; qemu killed" \
			"(raise --timeout, or look for a hung command above)" >&2
		exit 124
	fi
	if [[ -z $exit_code ]]; then
		fail "the guest ended without reporting an exit status" \
			"(qemu status $qemu_rc; the kernel's last words are above)"
	fi
	((attempt == 1)) || attempt="$attempt boots, "
	warn "guest up in ${boot:-?}s, command exit $exit_code, wall ${SECONDS}s total" \
		"(${attempt#1}$((SECONDS - start))s in qemu)"
	exit "$exit_code"
}

# check_tap: --tap's value, and its network card's modules to load.
check_tap() {
	[[ -n $tap ]] || return 0
	[[ $tap =~ ^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]{1,15}:[0-9.]+/[0-9]+$ ]] ||
		usage_error "--tap: '$tap' is not NETNS:IFNAME:ADDR/PREFIX (e.g. echolab-svm:echolab-tap0:10.213.1.2/30)"
	[[ -e /run/netns/${tap%%:*} ]] ||
		usage_error "--tap: no network namespace '${tap%%:*}' (ip netns add ${tap%%:*})"
	guest_modules+=("${tap_modules[@]}")
}

main() {
	parse_args "$@"
	check_tap
	find_kernel
	if [[ -n $out_dir ]]; then
		mkdir -p "$out_dir"
		out_dir=$(realpath "$out_dir")
	fi
	trap cleanup EXIT
	trap on_signal INT TERM
	workdir=$(mktemp -d "${TMPDIR:-/tmp}/run-vm.XXXXXX")
	build_modules
	build_initramfs
	run_qemu
}

main "$@"
