# SPDX-License-Identifier: GPL-2.0
# kinds.awk - each sample of a CPU profile into one kind of work, so that
# the kinds of the busy samples sum to 100%.
#
#   perf script -F comm,ip,sym,dso -i DATA | awk -v server=COMM -f kinds.awk
#
# A sample's kind is that of the first frame of its call chain, from the
# leaf up, that belongs to one: a copy inside tcp_recvmsg is a copy, the
# TCP receive that loopback runs inside tcp_sendmsg (the softirq on the way
# out of the send) is TCP receive, and a wake-up inside either is the
# scheduler's. A user-space leaf is the server's own code when the sample
# is the server's (COMM, perf's 15 characters of it), other otherwise;
# kecho's own code is its module's functions. Samples no frame claims are
# idle when the stack is the idle loop, other otherwise. Idle is reported
# beside the kinds, not among them.
#
# Output: "kind<TAB>samples" per kind (zeros included, in a fixed order),
# then "idle<TAB>samples" and "total<TAB>samples".

BEGIN {
	RS = ""
	FS = "\n"
	nk = split("tcp-receive tcp-send syscall epoll io_uring sockmap-kworkers scheduler copies server-code interrupts other", order, " ")
	for (i = 1; i <= nk; i++)
		n[order[i]] = 0
	server = substr(server, 1, 15)
	# Checked in this order on each frame: the narrow kinds before the
	# broad ones (__x64_sys_epoll_wait is epoll's, not the syscall's).
	re["copies"] = "^(rep_movs_alternative|rep_stos_alternative|copy_user_generic.*|copy_user_enhanced_fast_string|_copy_to_iter|_copy_from_iter.*|__copy_.*|copy_page.*|memcpy.*|__memcpy.*|memmove|__memmove|memset.*|__memset|csum_partial_copy.*|skb_copy_bits|clear_page.*)$"
	re["scheduler"] = "^(__schedule|schedule|schedule_.*|io_schedule.*|try_to_wake_up|ttwu_.*|wake_up_.*|__wake_up.*|wake_q_.*|pick_next_.*|__pick_next_.*|finish_task_switch.*|enqueue_task.*|dequeue_task.*|enqueue_entity|dequeue_entity|update_curr.*|update_load_avg|update_cfs_.*|sched_.*|__sched_.*|select_task_rq.*|check_preempt.*|wakeup_preempt.*|resched_curr.*|set_next_entity|put_prev_.*|psi_.*|autoremove_wake_function|default_wake_function|woken_wake_function|sysvec_reschedule_ipi|prepare_task_switch|__switch_to.*|switch_mm.*|context_switch|raw_spin_rq_.*|_raw_spin_lock_nested|__update_idle_core|newidle_balance|sched_balance_.*|load_balance|pick_task.*|migrate_.*|activate_task|deactivate_task|yield_to|do_sched_yield|__x64_sys_sched_yield)$"
	re["epoll"] = "^(ep_.*|__ep_.*|do_epoll_.*|__x64_sys_epoll.*|__do_sys_epoll.*|__se_sys_epoll.*|eventpoll_.*|sock_poll|tcp_poll|tcp_stream_is_readable)$"
	re["io_uring"] = "^(io_.*|__io_.*|__do_sys_io_uring_.*|__x64_sys_io_uring_.*|__se_sys_io_uring_.*|tctx_task_work.*)$"
	re["sockmap-kworkers"] = "^(sk_psock_.*|sk_skb_.*|sock_map_.*|sk_msg_.*|__sk_msg_.*|bpf_prog_.*|__bpf_prog_run.*|bpf_sk_redirect.*|bpf_msg_.*|bpf_sock_.*|bpf_trampoline_.*|tcp_bpf_.*|sk_psock|process_one_work|worker_thread|__queue_work|queue_work_on|queue_delayed_work_on|__queue_delayed_work|kick_pool|insert_work)$"
	re["tcp-receive"] = "^(tcp_v4_rcv|tcp_v4_do_rcv|tcp_rcv_.*|tcp_recvmsg.*|tcp_data_queue.*|tcp_ack.*|tcp_cleanup_rbuf|tcp_event_data_recv|tcp_queue_rcv|tcp_v4_early_demux|tcp_add_backlog|tcp_rcv_space_adjust|tcp_recv_.*|tcp_read_.*|tcp_check_space|tcp_grow_window|tcp_release_cb|__release_sock|release_sock|tcp_v4_fill_cb|tcp_inbound_.*|tcp_filter|tcp_urg|tcp_validate_incoming|tcp_try_rmem_schedule|tcp_data_ready|sock_def_readable|sk_data_ready|inet_recvmsg|sock_recvmsg.*|ip_rcv.*|ip_local_deliver.*|ip_protocol_deliver_rcu|ip_list_rcv.*|ip_sublist_rcv.*|__netif_receive_skb.*|netif_receive_skb.*|net_rx_action|__napi_poll|napi_.*|process_backlog|net_rps_.*|enqueue_to_backlog|netif_rx.*|__netif_rx|rps_trigger_softirq|get_rps_cpu|skb_defer_free_flush|sk_filter_trim_cap|inet_ehashfn|__inet_lookup_established|__inet_lookup_skb|skb_consume_udp)$"
	re["tcp-send"] = "^(tcp_sendmsg.*|tcp_write_xmit|__tcp_transmit_skb|tcp_transmit_skb|__tcp_push_pending_frames|tcp_push.*|tcp_stream_alloc_skb|tcp_skb_entail|tcp_send_ack|__tcp_send_ack.*|tcp_send_delayed_ack|tcp_send_mss|tcp_current_mss|tcp_rate_.*|tcp_event_new_data_sent|tcp_wfree|tcp_tsq_.*|tcp_small_queue_check.*|tcp_options_write|tcp_established_options|tcp_schedule_loss_probe|tcp_rearm_rto|ip_queue_xmit|__ip_queue_xmit|ip_local_out|__ip_local_out|ip_output|ip_finish_output.*|__dev_queue_xmit|dev_queue_xmit.*|dev_hard_start_xmit|loopback_xmit|veth_xmit|veth_forward_skb|neigh_.*output|sch_direct_xmit|validate_xmit_.*|inet_sendmsg|sk_stream_alloc_skb|skb_do_copy_data_nocache|sk_page_frag_refill|skb_page_frag_refill|sk_stream_wait_memory|__sk_mem_.*|sk_forced_mem_schedule)$"
	re["syscall"] = "^(entry_SYSCALL_64.*|do_syscall_64|syscall_exit_to_user_mode.*|exit_to_user_mode.*|syscall_enter_from_user_mode.*|syscall_return_via_sysret|entry_SYSRETQ.*|__x64_sys_.*|__se_sys_.*|__do_sys_.*|__sys_.*|___sys_.*|ksys_.*|x64_sys_call|__fdget.*|fdget.*|fput|__fput.*|sockfd_lookup_light|sock_sendmsg|__sock_sendmsg|sock_read_iter|sock_write_iter|security_socket_.*|apparmor_socket_.*|bpf_lsm_socket_.*|copy_msghdr_from_user|__copy_msghdr|import_iovec|__import_iovec|import_ubuf|move_addr_to_user|fpregs_restore_userregs|switch_fpu_return|restore_fpregs_from_fpstate|__x86_indirect_thunk.*|__x86_return_thunk|srso_.*|entry_IBPB|clear_bhb_loop|__rseq_handle_notify_resume|rseq_.*|__task_pid_nr_ns|vfs_read|vfs_write|new_sync_read|new_sync_write)$"
	# Interrupts taken and IPIs sent. Interrupts-off time lands where
	# interrupts come back on (cpu-clock is a timer): a leaf at
	# handle_softirqs is the entry and handler of the interrupt before it
	# (here mostly the IPI by which RPS hands a CPU its receive work). An
	# IPI sent is an APIC write, in a VM an exit: RPS's and wake-ups'.
	re["interrupts"] = "^(x2apic_send_IPI.*|__x2apic_send_IPI.*|default_send_IPI.*|native_send_call_func.*|native_smp_send_reschedule|send_call_function_single_ipi|__smp_call_single_queue|smp_call_function_single_async|generic_exec_single|arch_send_call_function.*|asm_sysvec_.*|sysvec_.*|__sysvec_.*|irq_exit_rcu|__irq_exit_rcu|handle_softirqs|__do_softirq|do_softirq.*|__local_bh_enable_ip|common_interrupt|asm_common_interrupt|hrtimer_.*|__hrtimer_.*|tick_.*|flush_smp_call_function_queue|__flush_smp_call_function_queue|generic_smp_call_function_single_interrupt)$"
	re["other"] = "^(rcu_.*|run_timer_softirq|__run_timers|perf_.*|__perf_.*)$"
	re["idle"] = "^(do_idle|cpu_startup_entry|default_idle.*|cpuidle_idle_call|arch_cpu_idle|pv_native_safe_halt|native_safe_halt|acpi_idle_.*|intel_idle.*|mwait_idle.*|poll_idle|start_secondary|rest_init|common_startup_64|secondary_startup_64.*|x86_64_start_.*|start_kernel|cpuidle_enter.*)$"
	nc = split("copies scheduler epoll io_uring sockmap-kworkers tcp-receive tcp-send syscall interrupts other idle", check, " ")
}

# kind_of SYM DSO: the kind this frame belongs to, or "".
function kind_of(sym, dso,    i) {
	if (dso == "[kecho]" || sym ~ /^kecho_/)
		return "server-code"
	for (i = 1; i <= nc; i++)
		if (sym ~ re[check[i]])
			return check[i]
	return ""
}

{
	comm = $1
	sub(/^[ \t]+/, "", comm)
	sub(/[ \t]+$/, "", comm)
	kind = ""
	for (f = 2; f <= NF && kind == ""; f++) {
		nw = split($f, w, " ")
		if (nw < 2)
			continue
		dso = w[nw]
		sym = (nw >= 3) ? w[2] : "[unknown]"
		sub(/\+0x[0-9a-f]+$/, "", sym)
		# A leaf outside the kernel: the CPU ran user code.
		if (f == 2 && dso !~ /^\((\[kernel\.kallsyms\]|\[kecho\]|\[bpf_prog\]|\[.*\.ko\]|\[unknown\])\)$/ && w[1] !~ /^ffff/) {
			kind = (comm == server) ? "server-code" : "other"
			break
		}
		gsub(/[()]/, "", dso)
		kind = kind_of(sym, dso)
	}
	if (kind == "")
		kind = "other"
	n[kind]++
	total++
}

END {
	for (i = 1; i <= nk; i++)
		printf "%s\t%d\n", order[i], n[order[i]]
	printf "idle\t%d\n", n["idle"]
	printf "total\t%d\n", total
}
