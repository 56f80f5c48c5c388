# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# kecho: the in-kernel server (kecho/kecho.ko): a listener kthread accepts,
# each connection is a work item on a CMWQ workqueue (mode=unbound, bound)
# or a kthread of its own (mode=kthread). Its arguments are module
# parameters; where modules cannot load it runs in the qemu guest (--vm).

server kecho dir=kecho binary=kecho/kecho.ko tools=cc kind=module needs='modules module-build' \
	bad_args='port=0;backlog=0;mode=foo;addr=1.2.3' \
	trace='kecho_work kernel_recvmsg kernel_sendmsg tcp_recvmsg tcp_sendmsg' \
	work=kecho_work

# An unbound workqueue runs its work items on any CPU, and so do kthread
# mode's threads (kthread_create names no CPU; the scheduler moves them to
# the client's): both are counted over every CPU. Counted over the
# server's alone, kthread mode read 0.70 of user's CPU per echo in the 6.1
# guest while the client's CPU per echo rose by 23 us and the server's sys
# time fell from 66 to 23 (results/20261127-sizes-vm-6.1, 1 KiB): its
# work had moved, not gone. A bound workqueue runs each item on the CPU
# that queued it, the receive softirq's: the server's.
variant kecho-unbound order=50 colour='#d62728' args='-- mode=unbound' cpu_scope=all
variant kecho-bound   order=60 colour='#ff7f0e' args='-- mode=bound'
variant kecho-kthread order=70 colour='#9467bd' args='-- mode=kthread' cpu_scope=all

# The kernel release kecho.ko was built for (no modinfo in the guest).
kecho_vermagic() {
	tr '\0' '\n' <"$(server_binary kecho)" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p'
}

kecho_unavailable() {
	if [[ ! -e /proc/modules ]]; then
		echo "kernel modules are disabled on this kernel (CONFIG_MODULES=n); run kecho in the qemu guest: sudo ./run.sh --vm kecho"
	elif [[ -s /etc/vm/no-module-build ]]; then
		# The guest's kernel, one the host cannot build kecho.ko for (7.2).
		echo "the guest's kernel has no kecho.ko: $(cat /etc/vm/no-module-build); boot 6.1 or 6.12 (--kernel)"
	elif [[ -e $(server_binary kecho) && $(kecho_vermagic) != "$(uname -r)" ]]; then
		echo "kecho/kecho.ko was built for $(kecho_vermagic), not for this kernel ($(uname -r)); rebuild it: make -C kecho clean && make kecho KDIR=/lib/modules/$(uname -r)/build"
	fi
}

# PORT ADDR ARGS...: module parameters (mode=bound, backlog=N); ADDR is
# the addr= parameter. ARGS come last: an addr= among them wins.
kecho_start() {
	local port=$1 addr=$2
	shift 2
	insmod "$(server_binary kecho)" port="$port" addr="$addr" "$@"
}

kecho_running() { module_loaded kecho; }

kecho_stop() { rmmod kecho || die "rmmod kecho failed; see dmesg"; }

kecho_clean() { ! module_loaded kecho || die "the kecho module is still loaded"; }

kecho_status() { echo "counters:    $(cat /proc/kecho 2>/dev/null)"; }

# The connections it has open (its counters' open=).
kecho_held() { sed -n 's/.*\bopen=\([0-9]*\).*/\1/p' /proc/kecho 2>/dev/null; }

# What ftrace/wq-latency.sh measures: a work item per connection on an
# unbound or a bound workqueue, or a kthread per connection.
kecho_modes() {
	echo "unbound mode=unbound"
	echo "bound mode=bound"
	echo "kthread mode=kthread"
}
