#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sockmap behaviours of the guest's kernel (ECHOLAB_KERNEL: 6.1 by
# default; make vm-check KERNELS="6.1 6.12 7.2" runs this once per kernel),
# detected there by tests/guest/sockmap.sh and held to the kernel's column
# of tests/sockmap-kernels.txt. Its cases are tests/guest/sockmap.sh's
# (see there), passed on to the guest: preaccept-verdict, fin-verdict,
# map-removal-warning, splice-receive, bypass-fionread, bypass-poll,
# bypass-flow-control, every-behaviour.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS=$(TESTS='' bash "$ECHOLAB_ROOT/tests/guest/sockmap.sh" --list)
select_cases "$@"
root_or_bail_out

# Relayed (tests/lib.sh): a guest whose kernel dies is told and run again once.
# The cases picked, passed on (none named: all of them).
picked=()
(($(wc -w <<<"$ALL_TESTS") == ${#SELECTED[@]})) || picked=(TESTS="sockmap.sh:$(tr ' ' , <<<"${SELECTED[*]}")")
GUEST_TIMEOUT=900 relay_from_guest guest/sockmap.sh "${picked[@]}"
plan_at_end
