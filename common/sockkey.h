/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The SOCKHASH key of the suite's BPF objects (ebpf-echo/echo.bpf.c,
 * sockredir/sockredir.bpf.c).
 * Needs __u32 first (vmlinux.h on the BPF side, <linux/types.h> in userspace).
 */
#ifndef ECHOLAB_SOCKKEY_H
#define ECHOLAB_SOCKKEY_H

/*
 * One end of an IPv4 connection as the kernel names it from that end:
 * addresses in network byte order, ports in host byte order. The key of
 * its peer is the same four fields swapped.
 */
struct sock_key {
	__u32 local_ip4;
	__u32 remote_ip4;
	__u32 local_port;
	__u32 remote_port;
};

#endif
