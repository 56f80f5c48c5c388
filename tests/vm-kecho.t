#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kecho, in the qemu guest (this kernel may not load modules): boots the
# guest and runs tests/guest/kecho.sh there. `make vm-check` runs this.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

need_guest
exec "$ROOT/vm/run-vm.sh" --timeout 900 -- bash tests/guest/kecho.sh
