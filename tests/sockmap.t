#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sockmap behaviours of this machine's own kernel, detected and held
# to tests/sockmap-kernels.txt (tests/guest/sockmap.sh; the guest's
# kernels: tests/vm-sockmap.t). Its cases are tests/guest/sockmap.sh's
# (see there), passed on to it: preaccept-verdict, fin-verdict,
# map-removal-warning, splice-receive, bypass-fionread, bypass-poll,
# bypass-flow-control, every-behaviour.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS=$(TESTS='' bash "$ECHOLAB_ROOT/tests/guest/sockmap.sh" --list)
select_cases "$@"
root_or_bail_out

fact no-btf >/dev/null && skip_all no-btf
fact no-cgroup2 >/dev/null && skip_all no-cgroup2
# The cases picked, passed on (none named: all of them).
if (($(wc -w <<<"$ALL_TESTS") != ${#SELECTED[@]})); then
	TESTS="sockmap.sh:$(tr ' ' , <<<"${SELECTED[*]}")"
	export TESTS
fi
exec bash "$ECHOLAB_ROOT/tests/guest/sockmap.sh"
