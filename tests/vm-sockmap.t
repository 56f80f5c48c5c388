#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sockmap behaviours of the guest's kernel (ECHOLAB_KERNEL: 6.1 by
# default; make vm-check KERNELS="6.1 6.12" runs this once per kernel),
# detected there by tests/guest/sockmap.sh and held to the kernel's column
# of tests/sockmap-kernels.txt.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

# Relayed (tests/lib.sh): a guest whose kernel dies is told and run again once.
GUEST_TIMEOUT=900 relay_from_guest guest/sockmap.sh
plan_at_end
