#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# judge's interval math: medians, the order-statistic interval's ranks and
# coverage, the seeded generator, the bootstrap's ratio intervals.
exec "$(dirname "$0")/build/interval-test"
