// SPDX-License-Identifier: GPL-2.0
/* The run's settings (settings.h), with the command line's defaults. */
#include "defaults.h"
#include "settings.h"

struct settings cfg = {
	.threads = 1000,
	.rounds = 10,
	.messages = 1,
	.size = 64,
	.host = "127.0.0.1",
	.port = ECHOLAB_PORT,
	.timeout_ms = 5000,
	.sched_idle = true,
	.poisson = true,
};

volatile sig_atomic_t stop;
