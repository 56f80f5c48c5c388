#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# judge's interval math (tests/interval-test.c). Cases:
#   median     the median of none, one, odd and even counts
#   ranks      the order-statistic interval's ranks and coverage, n = 0 to 20
#   coverage   that coverage measured on uniform runs (n = 5, 9, 20)
#   random     the seeded generator: splitmix64's value, repeatable, even
#   bootstrap  the ratio intervals: known ends, seeds, empty and zero groups
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="median ranks coverage random bootstrap"
select_cases "$@"
exec "$ECHOLAB_ROOT/tests/build/interval-test" "${SELECTED[@]}"
