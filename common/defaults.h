/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The suite's defaults, named once. Every C program includes this file
 * (the servers, bench, the bypass, the BPF programs and kecho.ko), and
 * lib/common.sh reads the two #defines below from it: change a value here
 * and every part, C or shell, follows. Keep each on one line of the form
 * '#define NAME VALUE'.
 */
#ifndef ECHOLAB_DEFAULTS_H
#define ECHOLAB_DEFAULTS_H

/* The port every server listens on and every client connects to. */
#define ECHOLAB_PORT 12345

/* Where run.sh keeps the running server's state (bench reads its CPUs). */
#define ECHOLAB_STATE_DIR "/run/echolab"

/* The same, as text for usage messages: "default " ECHOLAB_PORT_STR. */
#define ECHOLAB_STR_(x) #x
#define ECHOLAB_STR(x) ECHOLAB_STR_(x)
#define ECHOLAB_PORT_STR ECHOLAB_STR(ECHOLAB_PORT)

#endif
