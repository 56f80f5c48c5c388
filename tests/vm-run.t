#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh --vm SERVER and run.sh compare --vm: each server measured in the
# qemu guest, raw files back on the host, plots drawn there. Cases:
#   kernel-image       the guest boots the suite's cached kernel (or
#                      VM_KERNEL), never /boot's
#   user, ebpf, kecho  run.sh --vm SERVER: 100 samples, the raw file back
#                      on the host, from the guest's kernel (check-all
#                      runs user's, make vm-check all three: Makefile,
#                      VM_ONLY)
#   bypass             run.sh --vm user --bypass: both side by side, the
#                      bypass really taken (msgs_redirected)
#   compare            run.sh compare --vm: every declared variant, both
#                      sides, the box plot drawn on the host
#   panic              a guest whose kernel dies: run-vm.sh exits 125 and
#                      tells the kernel's last words
#   reboot             a guest that did not boot is booted again, once,
#                      saying so; a second failed boot is 125; a command
#                      that fails is not run again
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="kernel-image user ebpf kecho bypass compare panic reboot"
select_cases "$@"
root_or_bail_out

TMP=$(mktemp -d)
export ECHOLAB_TW_MAX=1000000	# function, not timing
trap 'rm -rf "$TMP"' EXIT

# The release of the kernel the guest boots (ECHOLAB_KERNEL picks it).
kver=$("$ECHOLAB_ROOT/vm/run-vm.sh" --print-kernel)
diag "the guest's kernel: $kver"

# It boots from the suite's cache, never from an image installed in /boot.
test_kernel_image() {
	local image
	# shellcheck source=vm/kernels.sh
	source "$ECHOLAB_ROOT/vm/kernels.sh"	# kernel_find, KERNEL_CACHE, KERNEL_DEFAULT
	kernel_find >/dev/null
	image=$KERNEL_IMAGE
	if [[ -n ${VM_KERNEL:-} && $KERNEL_VERSION == 6.1 ]]; then
		[[ $image == "$VM_KERNEL" ]]	# one of your own
	else
		[[ $image == "$KERNEL_CACHE"/* && -f $image ]]
	fi
	ok $? "the guest's kernel image is the cache's (or VM_KERNEL), not /boot's ($image)"
}

# vm_server SERVER: run.sh --vm SERVER, its raw file back here.
vm_server() {
	local server=$1 out raw
	out=$(VM_TIMEOUT=600 guest_run "$RUN" --vm "$server" -t 50 -r 2 -q)
	ok $? "run.sh --vm $server exits 0"
	raw=$(sed -n 's/^run.sh: raw samples: //p' <<<"$out")
	[[ -n $raw ]] && grep -q '^# where=vm' "$raw" && grep -qxF "# kernel=$kver" "$raw"
	ok $? "raw file back on the host, from the guest's kernel"
	is "$(grep -vc '^#' "$raw" 2>/dev/null)/$(grep -c 'ok$' "$raw" 2>/dev/null)" 100/100 \
		"100 samples, all ok"
	[[ -n $raw ]] && rm -rf "$(dirname "$raw")"
}
test_user() { vm_server user; }
test_ebpf() { vm_server ebpf; }
test_kecho() { vm_server kecho; }

# The bypass on the guest's kernel: side by side, really taken.
test_bypass() {
	local out dir rows redirected
	out=$(VM_TIMEOUT=600 guest_run "$RUN" --vm user --bypass -t 20 -r 1 -m 10)
	ok $? "run.sh --vm user --bypass exits 0"
	dir=$(sed -n 's/^results: //p' <<<"$out")
	rows=$(summary_rows "$dir/summary.md" 2>/dev/null | tr '\n' ,)
	is "$rows" "user 200 0,user-bypass 200 0," "user and user-bypass, 200 samples each, 0 failed"
	redirected=$(sed -n 's/.*bypass: sockredir stopped.* msgs_redirected=\([0-9]*\).*/\1/p' <<<"$out")
	((${redirected:-0} >= 400))
	ok $? "sockredir redirected both ways (msgs_redirected >= 400)"
	diag "bypass: msgs_redirected=${redirected:-none}"
	[[ -n $dir && -d $dir ]] && rm -rf "$dir"
}

test_compare() {
	local out rc labels rows
	out=$(VM_TIMEOUT=900 guest_run "$RUN" compare --vm -t 20 -r 2 --repeat 1 --out "$TMP/vm")
	rc=$?
	ok "$rc" "exit 0"
	((rc == 0)) || diag "compare: exit $rc; its last words: $(tail -n 40 <<<"$out")"
	is "$(tail -n1 <<<"$out")" "results: $TMP/vm" "last line names the directory"
	# Every declared variant runs in the guest's kernel: none may go missing.
	labels=$(variants | cut -d' ' -f1 | tr '\n' ' ')
	rows=$(summary_rows "$TMP/vm/summary.md" | tr '\n' ,)
	is "$rows" "$(for l in $labels; do printf '%s 40 0,' "$l"; done)" \
		"every declared variant ($labels), 40 samples each, 0 failed"
	is "$(summary_rows "$TMP/vm/summary.md" Server | cut -d' ' -f1 | tr '\n' ' ')" \
		"$labels" "the server side (arrival_us) of every server"
	[[ $(head -c 8 "$TMP/vm/boxplot.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]
	ok $? "the host drew the box plot"
}

# A guest whose kernel dies: run-vm.sh says so with the kernel's last
# words and its own exit status (125); tests/lib.sh's relay_from_guest and
# guest_run read that line to run a file or command again.
test_panic() {
	local start out
	start=$SECONDS
	out=$("$ECHOLAB_ROOT/vm/run-vm.sh" --timeout 120 -- sh -c 'echo c > /proc/sysrq-trigger; sleep 200' 2>&1)
	is "$?" 125 "run-vm.sh exits 125 when the guest's kernel dies"
	like "$out" "kernel\\|.*(Kernel panic|sysrq).*" "the kernel's last words are told"
	like "$out" "the guest ended without reporting an exit status" "run-vm.sh says the guest died"
	[[ $out != *"booting again"* ]]
	ok $? "a kernel that died under the command is not booted again"
	diag "panic: $((SECONDS - start)) s"
}

# A guest that did not boot (VM_FAIL_BOOTS: its kernel panics before init
# runs) is booted again, once, and says so; a command that fails inside a
# booted guest runs once, its status returned.
test_reboot() {
	local start=$SECONDS out rc
	out=$(VM_FAIL_BOOTS=1 "$ECHOLAB_ROOT/vm/run-vm.sh" --timeout 180 -- uname -r 2>&1)
	rc=$?
	is "$rc" 0 "a boot that failed, then one that did not: the command's status (0)"
	like "$out" "run-vm.sh: the guest did not boot \\(.*\\); booting again, once" "run-vm.sh says it boots again"
	like "$out" "kernel\\|.*Kernel panic" "with the failed boot's kernel panic"
	is "$(grep -cxF "$kver" <<<"$out")" 1 "the command ran once, in the second boot"
	like "$out" "guest up in .*2 boots" "the summary counts two boots"
	out=$(VM_FAIL_BOOTS=2 VM_LOG_LINES=5 "$ECHOLAB_ROOT/vm/run-vm.sh" --timeout 180 -- uname -r 2>&1)
	is "$?" 125 "two failed boots: exit 125"
	like "$out" "the guest did not boot, twice" "and it says so"
	is "$(grep -c "booting again" <<<"$out")" 1 "booted again once only"
	out=$("$ECHOLAB_ROOT/vm/run-vm.sh" --timeout 120 -- sh -c 'echo ran; exit 3' 2>&1)
	is "$?" 3 "a command that fails: its status (3)"
	is "$(grep -c '^ran' <<<"$out")" 1 "it ran once"
	[[ $out != *"booting again"* ]]
	ok $? "a guest that booted is not booted again"
	diag "reboot: $((SECONDS - start)) s"
}

run_tests
plan_at_end
