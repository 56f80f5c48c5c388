#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kecho, in the qemu guest (this kernel may not load modules): boots the
# guest and runs tests/guest/kecho.sh there. `make vm-check` runs this.
# Its cases are tests/guest/kecho.sh's (see there), passed on to the
# guest: unbound, bound, kthread, bad-param, rmmod-busy,
# starvation-unbound, starvation-bound, starvation-kthread, dmesg.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS=$(TESTS='' bash "$ECHOLAB_ROOT/tests/guest/kecho.sh" --list)
select_cases "$@"
root_or_bail_out

# Relayed (tests/lib.sh): a guest whose kernel dies is told and run again once.
# The cases picked, passed on (none named: all of them).
picked=()
(($(wc -w <<<"$ALL_TESTS") == ${#SELECTED[@]})) || picked=(TESTS="kecho.sh:$(tr ' ' , <<<"${SELECTED[*]}")")
GUEST_TIMEOUT=900 relay_from_guest guest/kecho.sh "${picked[@]}"
plan_at_end
