#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The proxy's contract on the guest's kernel (ECHOLAB_KERNEL): tests/proxy.t
# in the qemu guest, every result relayed. What differs between kernels is
# the sockmap path (its verdict, the psock's work, SO_RCVLOWAT waking the
# verdict for bytes queued before the insertion, which sockets a SOCKHASH
# takes) and splice's; copy's read and write are the host's contract's.
# `make vm-check` runs this on each guest kernel. Case:
#   contract  proxy.t's usage, splice, uring and sockmap cases
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="contract"
select_cases "$@"
root_or_bail_out

diag "the guest's kernel: $("$ECHOLAB_ROOT/vm/run-vm.sh" --print-kernel)"
case_selected contract && relay_from_guest proxy.t TESTS=proxy:usage,user-proxy-splice,user-proxy-uring,user-proxy-sockmap
plan_at_end
