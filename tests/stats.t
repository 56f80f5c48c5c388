#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench's statistics on known data: percentiles, mean, sd, empty, single.
exec "$(dirname "$0")/build/stats-test"
