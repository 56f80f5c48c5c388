#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh --vm SERVER and run.sh compare --vm: each server measured in the
# qemu guest, raw files back on the host, plots drawn there.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

TMP=$(mktemp -d)
export ECHOLAB_TW_MAX=1000000	# function, not timing
trap 'rm -rf "$TMP"' EXIT

plan 21
# The release of the kernel the guest boots (ECHOLAB_KERNEL picks it).
kver=$("$ROOT/vm/run-vm.sh" --print-kernel)
diag "the guest's kernel: $kver"
# It boots from the suite's cache, never from an image installed in /boot.
# shellcheck source=vm/kernels.sh
source "$ROOT/vm/kernels.sh"	# kernel_find, KERNEL_CACHE, KERNEL_DEFAULT
kernel_find >/dev/null
image=$KERNEL_IMAGE
if [[ -n ${VM_KERNEL:-} && $KERNEL_VERSION == 6.1 ]]; then
	[[ $image == "$VM_KERNEL" ]]	# one of your own
else
	[[ $image == "$KERNEL_CACHE"/* && -f $image ]]
fi
ok $? "vm-run/the guest's kernel image is the cache's (or VM_KERNEL), not /boot's ($image)"

for server in user ebpf kecho; do
	out=$(VM_TIMEOUT=600 guest_run "$RUN" --vm "$server" -t 50 -r 2 -q)
	ok $? "vm-run/$server: run.sh --vm $server exits 0"
	raw=$(sed -n 's/^run.sh: raw samples: //p' <<<"$out")
	[[ -n $raw ]] && grep -q '^# where=vm' "$raw" && grep -qxF "# kernel=$kver" "$raw"
	ok $? "vm-run/$server: raw file back on the host, from the guest's kernel"
	is "$(grep -vc '^#' "$raw" 2>/dev/null)/$(grep -c 'ok$' "$raw" 2>/dev/null)" 100/100 \
		"vm-run/$server: 100 samples, all ok"
	[[ -n $raw ]] && rm -rf "$(dirname "$raw")"
done

# The bypass on the guest's kernel: side by side, really taken.
out=$(VM_TIMEOUT=600 guest_run "$RUN" --vm user --bypass -t 20 -r 1 -m 10)
ok $? "vm-bypass: run.sh --vm user --bypass exits 0"
dir=$(sed -n 's/^results: //p' <<<"$out")
rows=$(summary_rows "$dir/summary.md" 2>/dev/null | tr '\n' ,)
is "$rows" "user 200 0,user-bypass 200 0," "vm-bypass: user and user-bypass, 200 samples each, 0 failed"
redirected=$(sed -n 's/.*bypass: sockredir stopped.* msgs_redirected=\([0-9]*\).*/\1/p' <<<"$out")
((${redirected:-0} >= 400))
ok $? "vm-bypass: sockredir redirected both ways (msgs_redirected >= 400)"
diag "vm-bypass: msgs_redirected=${redirected:-none}"
[[ -n $dir && -d $dir ]] && rm -rf "$dir"

out=$(VM_TIMEOUT=900 guest_run "$RUN" compare --vm -t 20 -r 2 --repeat 1 --out "$TMP/vm")
rc=$?
ok "$rc" "vm-compare: exit 0"
((rc == 0)) || diag "vm-compare: exit $rc; its last words: $(tail -n 40 <<<"$out")"
is "$(tail -n1 <<<"$out")" "results: $TMP/vm" "vm-compare: last line names the directory"
# Every declared variant runs in the guest's kernel: none may go missing.
labels=$(variants | cut -d' ' -f1 | tr '\n' ' ')
rows=$(summary_rows "$TMP/vm/summary.md" | tr '\n' ,)
is "$rows" "$(for l in $labels; do printf '%s 40 0,' "$l"; done)" \
	"vm-compare: every declared variant ($labels), 40 samples each, 0 failed"
is "$(summary_rows "$TMP/vm/summary.md" Server | cut -d' ' -f1 | tr '\n' ' ')" \
	"$labels" "vm-compare: the server side (arrival_us) of every server"
[[ $(head -c 8 "$TMP/vm/boxplot.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]
ok $? "vm-compare: the host drew the box plot"

# A guest whose kernel dies: run-vm.sh says so with the kernel's last
# words and its own exit status (125); tests/lib.sh's relay_from_guest and
# guest_run read that line to run a file or command again.
start=$SECONDS
out=$("$ROOT/vm/run-vm.sh" --timeout 120 -- sh -c 'echo c > /proc/sysrq-trigger; sleep 200' 2>&1)
is "$?" 125 "vm-panic: run-vm.sh exits 125 when the guest's kernel dies"
like "$out" "kernel\\|.*(Kernel panic|sysrq).*" "vm-panic: the kernel's last words are told"
like "$out" "the guest ended without reporting an exit status" "vm-panic: run-vm.sh says the guest died"
diag "vm-panic: $((SECONDS - start)) s"

done_testing
