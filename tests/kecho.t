#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kecho's own tests (tests/guest/kecho.sh) natively, on a kernel that loads
# modules: a user's machine. tests/vm-kecho.t runs the same in the qemu
# guest, on every guest kernel; a kernel without modules (ours: 6.18,
# CONFIG_MODULES=n) skips this file by that fact.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

fact no-modules >/dev/null && skip_all no-modules
exec bash "$ROOT/tests/guest/kecho.sh"
