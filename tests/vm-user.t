#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# user's splice path on the guest's kernel (ECHOLAB_KERNEL): contract.t's
# user-splice cases run there, every result relayed. splice between a
# socket and a pipe is what differs between kernels (a bypassed socket's
# bytes never reach a splicing reader on 6.1 and 6.18, run.sh client
# says); user's read and write are the host's contract's. `make
# vm-check` runs this on each guest kernel. Case:
#   contract  contract.t's user-splice variant (TESTS=contract:user-splice)
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="contract"
select_cases "$@"
root_or_bail_out

diag "the guest's kernel: $("$ECHOLAB_ROOT/vm/run-vm.sh" --print-kernel)"
case_selected contract && relay_from_guest contract.t TESTS=contract:user-splice
plan_at_end
