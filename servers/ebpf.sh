# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# ebpf: the sockmap server (ebpf-echo/): sock_ops puts the accepted sockets
# into a SOCKHASH, an sk_skb verdict redirects every received skb back out.
# Its loader attaches to a cgroup of its own and holds everything with its
# process: a kill -9 leaves only that (empty) cgroup, which clean removes.

server ebpf dir=ebpf-echo binary=ebpf-echo/ebpf-echo-server tools='cc clang bpftool' \
	needs='btf cgroup2' \
	bad_args='--backlog x;--addr 1.2.3;--bogus;stray' \
	trace='sk_psock_verdict_data_ready tcp_read_skb sk_psock_verdict_recv sk_psock_verdict_apply sk_psock_skb_redirect sk_psock_backlog skb_send_sock tcp_bpf_recvmsg' \
	work=sk_psock_backlog bpf_progs=echo_verdict

variant ebpf order=40 colour='#2ca02c'
# The same with its flow control off (--flow-limit 0): what that costs per
# echo. Only where compare --servers names it: it is the unsafe default of
# the past, never a server to run.
variant ebpf-noflow order=45 colour='#98df8a' args='-- --flow-limit 0' extra=1
# The verdict handing each skb on whole (--verdict-only): not exact on a
# network that reorders (common/exact.bpf.h); what exactness costs.
variant ebpf-verdict-only order=46 colour='#bcbd22' args='-- --verdict-only' extra=1

ebpf_unavailable() { bpf_cgroup_unavailable "the ebpf server"; }

ebpf_cgroup() { echo "$(cgroup2_mount)/ebpf-echo-$1"; }

ebpf_clean() {
	local cg progs
	cg=$(ebpf_cgroup "$1")
	if [[ -d $cg ]]; then
		[[ ! -s $cg/cgroup.procs ]] ||
			die "cgroup $cg still holds processes: $(tr '\n' ' ' <"$cg/cgroup.procs")"
		rmdir "$cg" || die "cannot remove $cg"
		say "removed the empty cgroup $cg left by a killed server"
	fi
	progs=$(bpftool prog show) || die "bpftool prog show failed: cannot check that the programs are gone"
	! grep -qE 'name (echo_sockops|echo_verdict) ' <<<"$progs" ||
		die "BPF programs echo_sockops/echo_verdict are still loaded ('bpftool prog show'); is another ebpf-echo-server running?"
	progs=$(bpftool cgroup tree) || die "bpftool cgroup tree failed: cannot check the attachments"
	! grep -q echo_sockops <<<"$progs" ||
		die "echo_sockops is still attached to a cgroup ('bpftool cgroup tree')"
}

ebpf_status() {
	echo "cgroup:      $(ebpf_cgroup "$(state server_port)")"
	# The kernel's counters, and the loader's in its object's .bss map.
	echo "counters:    $(bpf_counters "$(state pid)" echo_counters echo_bpf.bss)"
}

# Stops it, saying what its verdict did (the counters go with its maps):
# compare's log keeps the line, so that a run under netem shows the old
# bytes cut off (exact_cut_skbs, common/exact.bpf.h).
ebpf_stop() {
	local last
	last=$(bpf_counters "$(state pid)" echo_counters)
	default_stop
	[[ -z $last ]] || say "ebpf: kernel: $last"
}

# The sockets in its SOCKHASH: one per open connection, none after them.
ebpf_held() {
	bpftool map dump name echo_socks 2>/dev/null | sed -n 's/^Found \([0-9]*\) element.*/\1/p'
}
