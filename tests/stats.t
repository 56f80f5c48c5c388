#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench's statistics on known data (tests/stats-test.c). Cases:
#   empty       no sample: n=0, every figure nan
#   single      one sample: every percentile and the mean are it, sd 0
#   1-to-100    1..100 shuffled: nearest-rank percentiles, mean, sd, sorted in place
#   1-to-1000   p99.9 is rank 999, not the maximum
#   known       mean, sd and percentiles of a small set done by hand
#   offset      mean and sd around 1e9 (Welford's, not the naive sum)
#   percentile  stats_percentile's edges: p0, rank boundaries, p100
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="empty single 1-to-100 1-to-1000 known offset percentile"
select_cases "$@"
exec "$ECHOLAB_ROOT/tests/build/stats-test" "${SELECTED[@]}"
