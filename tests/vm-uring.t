#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The io_uring server on the guest's kernel (ECHOLAB_KERNEL): its own tests
# (tests/uring.t) and its contract (tests/contract.t), where its features
# differ from the host's: 6.1 has no minimum wait, so the batched wait
# falls back to waiting for one; 6.12 has every feature. `make vm-check`
# runs this on each guest kernel.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

diag "the guest's kernel: $("$ROOT/vm/run-vm.sh" --print-kernel)"
relay_from_guest uring.t
relay_from_guest contract.t TESTS=contract:uring
plan_at_end
