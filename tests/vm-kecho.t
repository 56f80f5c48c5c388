#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kecho, in the qemu guest (this kernel may not load modules): boots the
# guest and runs tests/guest/kecho.sh there. `make vm-check` runs this.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

# Relayed (tests/lib.sh): a guest whose kernel dies is told and run again once.
GUEST_TIMEOUT=900 relay_from_guest guest/kecho.sh
plan_at_end
