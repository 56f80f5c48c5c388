#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kecho, in the qemu guest (this kernel may not load modules): boots the
# guest and runs tests/guest/kecho.sh there. `make vm-check` runs this.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
need_root_or_skip_all

# make check installs the guest's packages first: missing ones are a
# failure here, not a reason to skip.
if ! kver=$("$ROOT/vm/run-vm.sh" --print-kernel 2>&1); then
	echo "Bail out! no guest kernel: $kver"
	exit 1
fi
if ! "$RUN" vm-build >&2; then
	echo "Bail out! cannot build kecho.ko for the guest kernel $kver"
	exit 1
fi
exec "$ROOT/vm/run-vm.sh" --timeout 900 -- bash tests/guest/kecho.sh
