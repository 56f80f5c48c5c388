#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The io_uring server on the guest's kernel (ECHOLAB_KERNEL): its own tests
# (tests/uring.t) and its contract (tests/contract.t), where its features
# differ from the host's: 6.1 has no minimum wait, so the batched wait
# falls back to waiting for one; 6.12 has every feature. `make vm-check`
# runs this on each guest kernel. Cases: uring.t's (see there), passed on
# to the guest (while uring.t declares none, one case 'uring' runs it
# whole), then:
#   contract  contract.t's uring variants (TESTS=contract:uring) in the guest
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
URING_T=$ECHOLAB_ROOT/tests/uring.t
uring_cases=uring
if grep -q '^select_cases' "$URING_T"; then
	uring_cases=$(TESTS='' bash "$URING_T" --list | tr '\n' ' ')
fi
ALL_TESTS="$uring_cases contract"
select_cases "$@"
root_or_bail_out

diag "the guest's kernel: $("$ECHOLAB_ROOT/vm/run-vm.sh" --print-kernel)"
# uring.t's cases picked, passed on (all of them: none named).
picked=()
for c in $uring_cases; do
	case_selected "$c" && picked+=("$c")
done
if ((${#picked[@]} == 0)); then
	:
elif [[ $uring_cases == uring || ${#picked[@]} == "$(wc -w <<<"$uring_cases")" ]]; then
	relay_from_guest uring.t
else
	relay_from_guest uring.t TESTS="uring:$(tr ' ' , <<<"${picked[*]}")"
fi
case_selected contract && relay_from_guest contract.t TESTS=contract:uring
plan_at_end
