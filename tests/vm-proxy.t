#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The proxy's contract on the guest's kernel (ECHOLAB_KERNEL): tests/proxy.t
# in the qemu guest, every result relayed. What differs between kernels is
# the sockmap path (its verdict, the psock's work, SO_RCVLOWAT waking the
# verdict for bytes queued before the insertion, which sockets a SOCKHASH
# takes), the skmsg path's bypass (sk_msg and tcp_bpf's receive) and
# splice's; copy's read and write are the host's contract's.
# `make vm-check` runs this on each guest kernel; check-all runs the
# splice, sockmap and skmsg paths on every kernel and uring's on the
# first only:
# from 6.12 the guest's io_uring has every feature the proxy uses, the
# host's paths (Linux 6.18), which proxy.t covers natively (the same
# rule as vm-uring.t's). Cases, one guest boot for those picked, each
# with proxy.t's usage:
#   splice    proxy.t's user-proxy-splice
#   uring     proxy.t's user-proxy-uring
#   sockmap   proxy.t's user-proxy-sockmap
#   skmsg     proxy.t's user-proxy-skmsg
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="splice uring sockmap skmsg"
select_cases "$@"
root_or_bail_out

diag "the guest's kernel: $("$ECHOLAB_ROOT/vm/run-vm.sh" --print-kernel)"
relay_from_guest proxy.t "TESTS=proxy:usage$(printf ',user-proxy-%s' "${SELECTED[@]}")"
plan_at_end
