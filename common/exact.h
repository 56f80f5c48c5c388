/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What exact.bpf.h counts, in the counters of each verdict that uses it
 * (ebpf-echo's echo_counters, the proxy's proxy_counters). Needs __u64
 * first (vmlinux.h on the BPF side, <linux/types.h> in userspace).
 */
#ifndef ECHOLAB_EXACT_H
#define ECHOLAB_EXACT_H

struct exact_counters {
	__u64 exact_cut_skbs;		/* skbs whose old front was cut off */
	__u64 exact_cut_bytes;	/* ... the bytes cut: handed on before */
	__u64 exact_old_skbs;		/* skbs all of whose bytes were, dropped */
	__u64 exact_unknown;		/* sequence unreadable: handed on whole */
	__u64 exact_cut_failures;	/* a cut failed: the skb dropped */
};

#endif /* ECHOLAB_EXACT_H */
