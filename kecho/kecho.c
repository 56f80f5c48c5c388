// SPDX-License-Identifier: GPL-2.0
/*
 * kecho - an in-kernel TCP echo server.
 *
 * A listener kthread accepts connections. Each connection is then served
 * in one of three modes:
 *
 *   unbound  a work item on a WQ_UNBOUND workqueue (the default)
 *   bound    a work item on a per-CPU workqueue: it runs on the CPU that
 *            queued it, i.e. where the packet was received (cache locality)
 *   kthread  one kthread per connection, blocking in recv/send
 *
 * The workqueue modes are event driven: the socket's data_ready,
 * write_space and state_change callbacks queue the connection's work item,
 * which reads what is there without blocking, echoes it, and returns. No
 * worker is ever parked on an idle connection, so thousands of idle
 * connections cannot starve a new one.
 *
 * A connection ends with a FIN after the client's EOF has been echoed, and
 * its socket is released once the client has acknowledged it all (see
 * kecho_shut()). At rmmod, open connections are aborted (RST): the sockets
 * are gone when rmmod returns instead of lingering as orphans in FIN_WAIT.
 *
 * It listens on 127.0.0.1 unless addr= names another address: a lab
 * module must not open an in-kernel server to the network by default.
 *
 * Counters are in /proc/kecho.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/proc_fs.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/inet.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "defaults.h"

#define KECHO_BUF_SIZE	(16 * 1024)
/*
 * A per-CPU workqueue says so where the kernel has WQ_PERCPU (Kbuild looks;
 * 7.2 warns at alloc_workqueue() without it); before, that was the default.
 */
#ifdef KECHO_HAVE_WQ_PERCPU
#define KECHO_WQ_PERCPU	WQ_PERCPU
#else
#define KECHO_WQ_PERCPU	0
#endif
/* reads per work run before the work requeues itself to let others run */
#define KECHO_BUDGET	16
/* After the FIN, TCP gives up on a client that takes nothing for this long. */
#define KECHO_DRAIN_MS	5000

enum kecho_mode {
	KECHO_UNBOUND,
	KECHO_BOUND,
	KECHO_KTHREAD,
};

static const char * const kecho_mode_names[] = {
	[KECHO_UNBOUND] = "unbound",
	[KECHO_BOUND] = "bound",
	[KECHO_KTHREAD] = "kthread",
};

static __be32 listen_addr = htonl(INADDR_LOOPBACK);
static unsigned int port = ECHOLAB_PORT;
static unsigned int backlog = 4096;
static int mode = KECHO_UNBOUND;

static int kecho_set_uint(const char *val, const struct kernel_param *kp,
			  unsigned int min, unsigned int max)
{
	unsigned int n;

	if (kstrtouint(val, 0, &n) || n < min || n > max) {
		pr_err("invalid %s=%s: expected %u..%u\n",
		       kp->name, val, min, max);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = n;
	return 0;
}

static int kecho_set_port(const char *val, const struct kernel_param *kp)
{
	return kecho_set_uint(val, kp, 1, 65535);
}

/* An IPv4 dotted quad: four decimal parts, each at most 255. */
static int kecho_set_addr(const char *val, const struct kernel_param *kp)
{
	const char *end;
	__be32 a;

	if (!in4_pton(val, -1, (u8 *)&a, -1, &end) || *end) {
		pr_err("invalid %s=%s: expected an IPv4 address such as 127.0.0.1 or 0.0.0.0\n",
		       kp->name, val);
		return -EINVAL;
	}
	*(__be32 *)kp->arg = a;
	return 0;
}

static int kecho_get_addr(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%pI4\n", kp->arg);
}

static int kecho_set_backlog(const char *val, const struct kernel_param *kp)
{
	return kecho_set_uint(val, kp, 1, 65535);
}

static int kecho_set_mode(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(kecho_mode_names, val);

	if (i < 0) {
		pr_err("invalid mode=%s: expected unbound, bound or kthread\n",
		       val);
		return -EINVAL;
	}
	*(int *)kp->arg = i;
	return 0;
}

static int kecho_get_mode(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 kecho_mode_names[*(int *)kp->arg]);
}

static const struct kernel_param_ops kecho_port_ops = {
	.set = kecho_set_port,
	.get = param_get_uint,
};

static const struct kernel_param_ops kecho_addr_ops = {
	.set = kecho_set_addr,
	.get = kecho_get_addr,
};

static const struct kernel_param_ops kecho_backlog_ops = {
	.set = kecho_set_backlog,
	.get = param_get_uint,
};

static const struct kernel_param_ops kecho_mode_ops = {
	.set = kecho_set_mode,
	.get = kecho_get_mode,
};

module_param_cb(port, &kecho_port_ops, &port, 0444);
MODULE_PARM_DESC(port,
		 "TCP port to listen on, 1..65535 (default " ECHOLAB_PORT_STR ")");
module_param_cb(addr, &kecho_addr_ops, &listen_addr, 0444);
MODULE_PARM_DESC(addr,
		 "IPv4 address to listen on (default 127.0.0.1; 0.0.0.0: every interface, open to any host that can reach this machine)");
module_param_cb(backlog, &kecho_backlog_ops, &backlog, 0444);
MODULE_PARM_DESC(backlog,
		 "Accept queue length, 1..65535 (default 4096; not capped by net.core.somaxconn)");
module_param_cb(mode, &kecho_mode_ops, &mode, 0444);
MODULE_PARM_DESC(mode,
		 "unbound (WQ_UNBOUND workqueue, default), bound (per-CPU workqueue) or kthread (one kthread per connection)");

/* connection flags */
#define KECHO_STOP	0	/* rmmod: close at the next run */
#define KECHO_CLOSED	1	/* socket released, nothing left to do */
#define KECHO_SHUT	2	/* FIN queued behind the echo: draining */

struct kecho_conn {
	struct socket *sock;
	struct list_head node;		/* kecho_conns or kecho_zombies */
	char *buf;
	size_t off;			/* unsent bytes are buf[off, off + len) */
	size_t len;

	/* workqueue modes */
	struct work_struct work;
	/* one for the socket callbacks, one per queued run of @work */
	refcount_t refs;
	unsigned long flags;
	bool eof;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);

	/* kthread mode */
	struct task_struct *task;
};

static struct socket *kecho_listen_sock;
static struct task_struct *kecho_listener;
static struct workqueue_struct *kecho_wq;

/* kecho_lock protects kecho_conns, kecho_zombies and kecho_stopping */
static DEFINE_MUTEX(kecho_lock);
static LIST_HEAD(kecho_conns);
static LIST_HEAD(kecho_zombies);	/* kthread mode: finished threads */
static bool kecho_stopping;

static atomic_long_t kecho_open = ATOMIC_LONG_INIT(0);
static atomic_long_t kecho_total = ATOMIC_LONG_INIT(0);
static atomic_long_t kecho_errors = ATOMIC_LONG_INIT(0);
static atomic64_t kecho_bytes = ATOMIC64_INIT(0);

static int kecho_recv(struct socket *sock, void *buf, size_t len, int flags)
{
	struct msghdr msg = { .msg_flags = flags };
	struct kvec vec = { .iov_base = buf, .iov_len = len };

	return kernel_recvmsg(sock, &msg, &vec, 1, len, flags);
}

static int kecho_send(struct socket *sock, const void *buf, size_t len,
		      int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_NOSIGNAL };
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };
	int n = kernel_sendmsg(sock, &msg, &vec, 1, len);

	if (n > 0)
		atomic64_add(n, &kecho_bytes);
	return n ? n : -EIO;
}

/* Sleep until kthread_stop(): a kthread must not exit before it is called. */
static void kecho_wait_for_stop(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

static struct kecho_conn *kecho_conn_alloc(struct socket *sock)
{
	struct kecho_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	conn->buf = kmalloc(KECHO_BUF_SIZE, GFP_KERNEL);
	if (!conn->buf) {
		kfree(conn);
		return NULL;
	}
	conn->sock = sock;
	INIT_LIST_HEAD(&conn->node);
	return conn;
}

static void kecho_conn_free(struct kecho_conn *conn)
{
	kfree(conn->buf);
	kfree(conn);
}

/* Called with kecho_lock held. */
static void kecho_conn_add(struct kecho_conn *conn)
{
	list_add_tail(&conn->node, &kecho_conns);
	atomic_long_inc(&kecho_open);
	atomic_long_inc(&kecho_total);
}

/* ---- workqueue modes ---- */

/* Called with kecho_lock held, once the last reference is gone. */
static void kecho_conn_destroy(struct kecho_conn *conn)
{
	list_del(&conn->node);
	atomic_long_dec(&kecho_open);
	kecho_conn_free(conn);
}

static void kecho_conn_put(struct kecho_conn *conn)
{
	if (!refcount_dec_and_test(&conn->refs))
		return;
	mutex_lock(&kecho_lock);
	kecho_conn_destroy(conn);
	mutex_unlock(&kecho_lock);
}

/*
 * Queue a run of the connection's work; the run owns one reference.
 * The caller holds a reference that stays until we return (the callbacks'
 * one, under sk_callback_lock, a running work's, or the listener's), so
 * when the work is already pending, dropping ours is never the last put.
 */
static void kecho_queue(struct kecho_conn *conn)
{
	refcount_inc(&conn->refs);
	if (!queue_work(kecho_wq, &conn->work))
		refcount_dec(&conn->refs);
}

/* sk_data_ready and sk_state_change (FIN, RST): run the work */
static void kecho_data_ready(struct sock *sk)
{
	struct kecho_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn)
		kecho_queue(conn);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void kecho_write_space(struct sock *sk)
{
	struct kecho_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn && sk_stream_is_writeable(sk)) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		kecho_queue(conn);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void kecho_set_callbacks(struct kecho_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	conn->saved_data_ready = sk->sk_data_ready;
	conn->saved_write_space = sk->sk_write_space;
	conn->saved_state_change = sk->sk_state_change;
	sk->sk_user_data = conn;
	sk->sk_data_ready = kecho_data_ready;
	sk->sk_write_space = kecho_write_space;
	sk->sk_state_change = kecho_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * After this returns no callback can queue the work any more: a callback
 * that saw sk_user_data has finished under the read lock.
 */
static void kecho_restore_callbacks(struct kecho_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = conn->saved_data_ready;
	sk->sk_write_space = conn->saved_write_space;
	sk->sk_state_change = conn->saved_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Called from the work function only, which holds a reference. */
static void kecho_conn_close(struct kecho_conn *conn, int err)
{
	set_bit(KECHO_CLOSED, &conn->flags);
	kecho_restore_callbacks(conn);
	if (err)
		atomic_long_inc(&kecho_errors);
	if (test_bit(KECHO_STOP, &conn->flags))
		sock_no_linger(conn->sock->sk);
	sock_release(conn->sock);
	conn->sock = NULL;
	refcount_dec(&conn->refs);	/* the callbacks' reference */
}

/*
 * The client's EOF is echoed: a FIN goes behind the echo, and the socket
 * stays ours until the client has acknowledged everything. A kernel
 * socket's timers are stopped when it is released (tcp_close(): it holds
 * no reference on its netns), so an orphan that still needs one -- a
 * window probe while the client's window is below the MSS, a
 * retransmission -- keeps its echo for good (tests/hostile.t: LAST-ACK,
 * 603,400 bytes unsent, no timer). TCP_USER_TIMEOUT bounds the wait on a
 * client that takes nothing; either way the socket ends in TCP_CLOSE.
 */
static void kecho_shut(struct socket *sock)
{
	tcp_sock_set_user_timeout(sock->sk, KECHO_DRAIN_MS);
	kernel_sock_shutdown(sock, SHUT_WR);
}

/* 0 once the client acknowledged it all, -errno if TCP gave up, or
 * -EINPROGRESS.
 */
static int kecho_drained(struct socket *sock)
{
	if (READ_ONCE(sock->sk->sk_state) != TCP_CLOSE)
		return -EINPROGRESS;
	return -READ_ONCE(sock->sk->sk_err);
}

/* Send the pending bytes: 0 when all are sent, -EAGAIN to wait, or error */
static int kecho_flush(struct kecho_conn *conn)
{
	while (conn->len) {
		int n = kecho_send(conn->sock, conn->buf + conn->off,
				   conn->len, MSG_DONTWAIT);

		if (n < 0)
			return n;
		conn->off += n;
		conn->len -= n;
	}
	return 0;
}

static void kecho_work(struct work_struct *work)
{
	struct kecho_conn *conn = container_of(work, struct kecho_conn, work);
	int budget = KECHO_BUDGET;
	int err = 0;
	int n;

	if (test_bit(KECHO_CLOSED, &conn->flags))
		goto out;
	if (test_bit(KECHO_STOP, &conn->flags))
		goto close;

	for (;;) {
		err = kecho_flush(conn);
		if (err == -EAGAIN)
			goto out;	/* write_space queues us again */
		if (err)
			goto close;
		if (conn->eof) {
			/* half-close: all echoed, now FIN */
			if (!test_and_set_bit(KECHO_SHUT, &conn->flags))
				kecho_shut(conn->sock);
			err = kecho_drained(conn->sock);
			if (err == -EINPROGRESS)
				goto out;	/* state_change queues us */
			goto close;
		}
		if (!budget--) {
			kecho_queue(conn);
			goto out;
		}
		n = kecho_recv(conn->sock, conn->buf, KECHO_BUF_SIZE,
			       MSG_DONTWAIT);
		if (n == -EAGAIN)
			goto out;	/* data_ready queues us again */
		if (n < 0) {
			err = n;
			goto close;
		}
		if (n == 0)
			conn->eof = true;
		conn->off = 0;
		conn->len = n;
	}
close:
	kecho_conn_close(conn, err);
out:
	kecho_conn_put(conn);
}

static int kecho_work_start(struct kecho_conn *conn)
{
	/*
	 * One reference for the socket callbacks, one for us: once the
	 * callbacks are set, a work run may close the connection and drop
	 * the callbacks' reference before we are done here.
	 */
	refcount_set(&conn->refs, 2);
	INIT_WORK(&conn->work, kecho_work);
	mutex_lock(&kecho_lock);
	kecho_conn_add(conn);
	mutex_unlock(&kecho_lock);
	kecho_set_callbacks(conn);
	/* Data that arrived before the callbacks were set woke nobody. */
	kecho_queue(conn);
	kecho_conn_put(conn);
	return 0;
}

static void kecho_works_stop(void)
{
	struct kecho_conn *conn, *tmp;

	mutex_lock(&kecho_lock);
	list_for_each_entry_safe(conn, tmp, &kecho_conns, node) {
		if (!refcount_inc_not_zero(&conn->refs))
			continue;	/* its last work run is freeing it */
		set_bit(KECHO_STOP, &conn->flags);
		/*
		 * If the work was pending, that run sees KECHO_STOP, and it
		 * may have closed the connection and dropped its references
		 * already: then ours is the last one.
		 */
		if (!queue_work(kecho_wq, &conn->work) &&
		    refcount_dec_and_test(&conn->refs))
			kecho_conn_destroy(conn);
	}
	mutex_unlock(&kecho_lock);
	/*
	 * Every connection is closed, and its callbacks restored, by a run
	 * queued above; only then may the workqueue drain, which forbids
	 * queueing from the callbacks.
	 */
	flush_workqueue(kecho_wq);
	destroy_workqueue(kecho_wq);
	WARN_ON(!list_empty(&kecho_conns));
}

/* ---- kthread mode ---- */

static void kecho_reap(struct work_struct *work)
{
	struct kecho_conn *conn;

	for (;;) {
		mutex_lock(&kecho_lock);
		conn = list_first_entry_or_null(&kecho_zombies,
						struct kecho_conn, node);
		if (conn)
			list_del(&conn->node);
		mutex_unlock(&kecho_lock);
		if (!conn)
			break;
		kthread_stop(conn->task);
		kecho_conn_free(conn);
	}
}

static DECLARE_WORK(kecho_reap_work, kecho_reap);

/* kecho_shut(), then sleep until the socket is closed or rmmod begins
 * (which shuts it down: a state_change that wakes us).
 */
static int kecho_drain_blocking(struct socket *sock)
{
	int err;

	kecho_shut(sock);
	wait_event_interruptible(*sk_sleep(sock->sk),
				 (err = kecho_drained(sock)) != -EINPROGRESS ||
				 READ_ONCE(kecho_stopping) ||
				 kthread_should_stop());
	return err == -EINPROGRESS ? 0 : err;
}

static int kecho_echo_blocking(struct kecho_conn *conn)
{
	while (!kthread_should_stop()) {
		int n = kecho_recv(conn->sock, conn->buf, KECHO_BUF_SIZE, 0);
		int off = 0;

		if (n < 0)
			return n;
		if (n == 0)
			return kecho_drain_blocking(conn->sock);
		while (off < n) {
			int sent = kecho_send(conn->sock, conn->buf + off,
					      n - off, 0);

			if (sent < 0)
				return sent;
			off += sent;
		}
	}
	return 0;
}

static int kecho_thread(void *data)
{
	struct kecho_conn *conn = data;
	int err = kecho_echo_blocking(conn);

	/* at rmmod the socket is shut down under us: not an error */
	if (err && !READ_ONCE(kecho_stopping))
		atomic_long_inc(&kecho_errors);

	/* At rmmod the socket may be shut down until we leave the list. */
	mutex_lock(&kecho_lock);
	if (!kecho_stopping) {
		list_move_tail(&conn->node, &kecho_zombies);
		schedule_work(&kecho_reap_work);
	}
	mutex_unlock(&kecho_lock);

	if (READ_ONCE(kecho_stopping))
		sock_no_linger(conn->sock->sk);
	sock_release(conn->sock);
	conn->sock = NULL;
	atomic_long_dec(&kecho_open);
	kecho_wait_for_stop();
	return 0;
}

static int kecho_thread_start(struct kecho_conn *conn)
{
	struct task_struct *task;

	task = kthread_create(kecho_thread, conn, "kecho/%ld",
			      atomic_long_read(&kecho_total));
	if (IS_ERR(task))
		return PTR_ERR(task);
	conn->task = task;
	mutex_lock(&kecho_lock);
	kecho_conn_add(conn);
	mutex_unlock(&kecho_lock);
	wake_up_process(task);
	return 0;
}

static void kecho_threads_stop(void)
{
	struct kecho_conn *conn, *tmp;
	LIST_HEAD(doomed);

	mutex_lock(&kecho_lock);
	WRITE_ONCE(kecho_stopping, true);
	/* wakes a thread blocked in recv or send; it then ends by itself */
	list_for_each_entry(conn, &kecho_conns, node)
		kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	list_splice_init(&kecho_conns, &doomed);
	list_splice_init(&kecho_zombies, &doomed);
	mutex_unlock(&kecho_lock);

	cancel_work_sync(&kecho_reap_work);
	list_for_each_entry_safe(conn, tmp, &doomed, node) {
		list_del(&conn->node);
		kthread_stop(conn->task);
		kecho_conn_free(conn);
	}
}

/* ---- listener ---- */

static void kecho_accepted(struct socket *sock)
{
	struct kecho_conn *conn;
	int err = -ENOMEM;

	tcp_sock_set_nodelay(sock->sk);
	conn = kecho_conn_alloc(sock);
	if (!conn)
		goto err;
	if (mode == KECHO_KTHREAD)
		err = kecho_thread_start(conn);
	else
		err = kecho_work_start(conn);
	if (err)
		goto err_free;
	return;

err_free:
	kecho_conn_free(conn);
err:
	atomic_long_inc(&kecho_errors);
	sock_release(sock);
}

static int kecho_listen_thread(void *unused)
{
	while (!kthread_should_stop()) {
		struct socket *sock;
		int err = kernel_accept(kecho_listen_sock, &sock, 0);

		if (!err) {
			kecho_accepted(sock);
			continue;
		}
		if (err == -EINVAL) {
			/* the listen socket was shut down: rmmod */
			kecho_wait_for_stop();
			break;
		}
		if (kthread_should_stop())
			break;
		atomic_long_inc(&kecho_errors);
		schedule_timeout_interruptible(HZ / 100);
	}
	return 0;
}

static int kecho_listen_open(void)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = listen_addr,
		.sin_port = htons(port),
	};
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (err) {
		pr_err("cannot create the listen socket: %d\n", err);
		return err;
	}
	sock_set_reuseaddr(sock->sk);
	/* struct sockaddr * on 6.1 and 6.12, struct sockaddr_unsized * on 7.2 */
	err = kernel_bind(sock, (void *)&addr, sizeof(addr));
	if (err) {
		pr_err("cannot bind %pI4 port %u: %d%s\n", &listen_addr, port, err,
		       err == -EADDRINUSE ? " (port in use)" :
		       err == -EADDRNOTAVAIL ? " (no interface has addr=)" : "");
		goto err_release;
	}
	err = kernel_listen(sock, backlog);
	if (err) {
		pr_err("cannot listen on port %u: %d\n", port, err);
		goto err_release;
	}
	kecho_listen_sock = sock;
	return 0;

err_release:
	sock_release(sock);
	return err;
}

static void kecho_listen_close(void)
{
	/* makes a blocked kernel_accept() return -EINVAL */
	kernel_sock_shutdown(kecho_listen_sock, SHUT_RDWR);
	kthread_stop(kecho_listener);
	sock_release(kecho_listen_sock);
	kecho_listen_sock = NULL;
}

/* ---- /proc/kecho ---- */

static int kecho_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m,
		   "open=%ld total=%ld bytes=%lld errors=%ld mode=%s addr=%pI4 port=%u backlog=%u\n",
		   atomic_long_read(&kecho_open),
		   atomic_long_read(&kecho_total),
		   (long long)atomic64_read(&kecho_bytes),
		   atomic_long_read(&kecho_errors),
		   kecho_mode_names[mode], &listen_addr, port, backlog);
	return 0;
}

static int __init kecho_init(void)
{
	int err;

	if (mode != KECHO_KTHREAD) {
		kecho_wq = alloc_workqueue("kecho",
					   mode == KECHO_UNBOUND ? WQ_UNBOUND : KECHO_WQ_PERCPU,
					   0);
		if (!kecho_wq)
			return -ENOMEM;
	}
	if (!proc_create_single("kecho", 0444, NULL, kecho_stats_show)) {
		err = -ENOMEM;
		goto err_wq;
	}
	err = kecho_listen_open();
	if (err)
		goto err_proc;
	kecho_listener = kthread_run(kecho_listen_thread, NULL, "kecho-listen");
	if (IS_ERR(kecho_listener)) {
		err = PTR_ERR(kecho_listener);
		pr_err("cannot start the listener thread: %d\n", err);
		goto err_sock;
	}
	pr_info("listening on %pI4 port %u, mode=%s, backlog=%u\n",
		&listen_addr, port, kecho_mode_names[mode], backlog);
	if (listen_addr == htonl(INADDR_ANY))
		pr_warn("addr=0.0.0.0: listening on every interface: any host that can reach this machine can connect\n");
	return 0;

err_sock:
	sock_release(kecho_listen_sock);
err_proc:
	remove_proc_entry("kecho", NULL);
err_wq:
	if (kecho_wq)
		destroy_workqueue(kecho_wq);
	return err;
}

static void __exit kecho_exit(void)
{
	kecho_listen_close();
	if (mode == KECHO_KTHREAD)
		kecho_threads_stop();
	else
		kecho_works_stop();
	remove_proc_entry("kecho", NULL);
	pr_info("unloaded: total=%ld bytes=%lld errors=%ld\n",
		atomic_long_read(&kecho_total),
		(long long)atomic64_read(&kecho_bytes),
		atomic_long_read(&kecho_errors));
}

module_init(kecho_init);
module_exit(kecho_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("In-kernel TCP echo server (workqueue or kthread per connection)");
