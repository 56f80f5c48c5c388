#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kecho's own tests (tests/guest/kecho.sh) natively, on a kernel that loads
# modules: a user's machine. tests/vm-kecho.t runs the same in the qemu
# guest, on every guest kernel; a kernel without modules (ours: 6.18,
# CONFIG_MODULES=n) skips this file by that fact. Its cases are
# tests/guest/kecho.sh's (see there): unbound, bound, kthread, bad-param,
# rmmod-busy, starvation-unbound, starvation-bound, starvation-kthread,
# dmesg.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS=$(TESTS='' bash "$ECHOLAB_ROOT/tests/guest/kecho.sh" --list)
select_cases "$@"
root_or_bail_out

fact no-modules >/dev/null && skip_all no-modules
# The cases picked, passed on (none named: all of them).
if (($(wc -w <<<"$ALL_TESTS") != ${#SELECTED[@]})); then
	TESTS="kecho.sh:$(tr ' ' , <<<"${SELECTED[*]}")"
	export TESTS
fi
exec bash "$ECHOLAB_ROOT/tests/guest/kecho.sh"
