#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sockmap behaviours of this machine's own kernel, detected and held
# to tests/sockmap-kernels.txt (tests/guest/sockmap.sh; the guest's
# kernels: tests/vm-sockmap.t).
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

fact no-btf >/dev/null && skip_all no-btf
fact no-cgroup2 >/dev/null && skip_all no-cgroup2
exec bash "$ROOT/tests/guest/sockmap.sh"
