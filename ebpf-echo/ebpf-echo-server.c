// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* ebpf-echo-server: loads echo.bpf.c, moves itself into a cgroup of its
 * own, attaches sock_ops there and the stream verdict to the SOCKHASH,
 * then accepts connections. The kernel echoes the payload; this process
 * owns every socket, echoes whatever the kernel passed up instead, and
 * closes each socket once the client is done.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "defaults.h"
#include "listen.h"
#include "loader.h"
#include "server.h"
#include "echo.h"
#include "echo.skel.h"

#define DEFAULT_BACKLOG		4096
/* Listener (and so accepted socket) buffers; see README "Buffer sizes". */
#define DEFAULT_SNDBUF		(4 << 20)
#define DEFAULT_RCVBUF		(1 << 20)
#define READ_BUF		(64 << 10)
#define ACCEPTS_PER_EVENT	256
#define MAX_EVENTS		512
#define ACCEPT_PAUSE_MS		100	/* after EMFILE: retry this much later */
#define DRAIN_IDLE_MS		5000	/* give up on a silent half-closed peer */
#define TICK_MS			4	/* poll period while something waits */
#define SWEEP_MS		200	/* read quiet connections this often */

static struct env {
	struct server_opts srv;	/* --addr (this machine only), -p, -b */
	const char *btf_path;
	const char *cgroup_root;
	long sndbuf;
	long rcvbuf;
	long flow_limit;
	bool verdict_only;	/* exact.bpf.h off: skbs handed on whole */
} env = {
	.srv = { .port = ECHOLAB_PORT, .backlog = DEFAULT_BACKLOG,
		 .max_backlog = INT_MAX },
	.btf_path = LOADER_BTF,
	.sndbuf = DEFAULT_SNDBUF,
	.rcvbuf = DEFAULT_RCVBUF,
	.flow_limit = ECHO_FLOW_LIMIT,
};

struct conn {
	int fd;
	struct sock_key key;	/* as the BPF side sees the socket */
	__u64 cookie;		/* SO_COOKIE: its key in echo_flow, echo_echoed */
	bool in_map;		/* the kernel echoes for it (sock_ops inserted it) */
	__u64 echoed;		/* bytes this process sent into the socket */
	__u64 published;	/* ... the last value written to echo_echoed */
	__u32 events;		/* epoll interest, always EPOLLET */
	bool eof;		/* client sent FIN: echo the rest, then close */
	char *pend;		/* echo bytes the socket did not take yet */
	size_t pend_off, pend_len;
	__u64 acked;		/* tcpi_bytes_acked at the last drain check */
	long long drain_deadline;
	struct conn *drain_prev, *drain_next;
};

static struct server {
	int epfd, lfd, sigfd;
	int socks_fd;		/* the SOCKHASH */
	int echoed_fd;		/* echo_echoed: what we echoed, per socket */
	struct ring_buffer *passed;	/* echo_passed: who got bytes passed up */
	long long last_sweep;	/* see sweep_quiet_connections() */
	int max_fd;
	struct conn **conns;	/* indexed by fd */
	int nconns_max;
	struct conn *draining;
	bool accept_paused;
	long long accept_resume;
} srv = { .epfd = -1, .lfd = -1, .sigfd = -1, .socks_fd = -1, .echoed_fd = -1 };

/* In the BPF object's .bss once it is loaded (echo.h), before: here. */
static struct echo_userspace early, *us = &early;

static struct own_cgroup cg;		/* <root>/ebpf-echo-<port> */

const char *prog = "ebpf-echo-server";	/* cli.h: in every message */

static const char usage_text[] =
"Usage: ebpf-echo-server [-p PORT] [--addr ADDR] [-b BACKLOG] [-v] [--btf FILE]\n"
"                        [--cgroup-root DIR] [--sndbuf BYTES] [--rcvbuf BYTES]\n"
"                        [--flow-limit BYTES] [--verdict-only]\n"
"TCP echo server whose payload path runs in the kernel (sockmap + sk_skb).\n"
"\n"
"  -p, --port N           port to listen on (default " ECHOLAB_PORT_STR ")\n"
"      --addr ADDR        IPv4 address to listen on (default 127.0.0.1: this\n"
"                         machine only); 0.0.0.0 is every interface, open to\n"
"                         any host that can reach this machine\n"
"  -b, --backlog N        listen() backlog (default 4096; capped by\n"
"                         net.core.somaxconn)\n"
"  -v, --verbose          libbpf's messages and connection events on stderr\n"
"      --btf FILE         kernel BTF for CO-RE (default /sys/kernel/btf/vmlinux)\n"
"      --cgroup-root DIR  cgroup v2 directory to create our cgroup in\n"
"                         (default: the cgroup2 mount in /proc/self/mountinfo)\n"
"      --sndbuf BYTES     SO_SNDBUF of accepted sockets (default 4194304,\n"
"                         0 = kernel autotuning)\n"
"      --rcvbuf BYTES     SO_RCVBUF of accepted sockets (default 1048576,\n"
"                         0 = kernel autotuning)\n"
"      --flow-limit BYTES echo backlog per connection (received, not yet\n"
"                         acknowledged back) the kernel echoes; past it the\n"
"                         process takes over until the client catches up,\n"
"                         so TCP's window closes on a client that never\n"
"                         reads (default 1048576, at most half of the send\n"
"                         buffer; 0 = no limit: the kernel queues without\n"
"                         bound for such a client)\n"
"      --verdict-only     hand each skb on whole, as the kernel gives it: a\n"
"                         network that reorders then gets some bytes twice\n"
"                         (to measure what exactness costs; by default the\n"
"                         verdict cuts off bytes it echoed before)\n"
"  -h, --help             this text\n"
"\n"
"SIGUSR1 prints the counters line to stderr; SIGINT/SIGTERM stop cleanly.\n"
"Exit status: 0 clean stop, 1 runtime error, 2 bad arguments.\n";

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

enum { OPT_BTF = 256, OPT_CGROUP_ROOT, OPT_SNDBUF, OPT_RCVBUF,
       OPT_FLOW_LIMIT, OPT_VERDICT_ONLY };

/* The options of this server alone; server.c parses the shared ones. */
static void own_option(int c, const char *arg)
{
	switch (c) {
	case OPT_BTF:
		env.btf_path = arg;
		break;
	case OPT_CGROUP_ROOT:
		env.cgroup_root = arg;
		break;
	case OPT_SNDBUF:
		env.sndbuf = parse_num("--sndbuf", arg, 0, 1L << 30);
		break;
	case OPT_RCVBUF:
		env.rcvbuf = parse_num("--rcvbuf", arg, 0, 1L << 30);
		break;
	case OPT_FLOW_LIMIT:
		env.flow_limit = parse_num("--flow-limit", arg, 0, 1L << 30);
		break;
	case OPT_VERDICT_ONLY:
		env.verdict_only = true;
		break;
	}
}

/* Exits 2 with a message naming the option on a bad argument (cli.h). */
static void parse_args(int argc, char **argv)
{
	static const struct option own[] = {
		{ "btf", required_argument, NULL, OPT_BTF },
		{ "cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT },
		{ "sndbuf", required_argument, NULL, OPT_SNDBUF },
		{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
		{ "flow-limit", required_argument, NULL, OPT_FLOW_LIMIT },
		{ "verdict-only", no_argument, NULL, OPT_VERDICT_ONLY },
		{},
	};

	server_parse_args(argc, argv, &env.srv, own, own_option, usage);
}

/* ---- counters -------------------------------------------------------- */

static void print_counters(struct echo_bpf *skel)
{
	struct echo_counters sum;
	int err;

	err = loader_percpu_sum(skel->maps.echo_counters, &sum, sizeof(sum));
	if (err) {
		fprintf(stderr, "ebpf-echo-server: reading counters: %s\n",
			strerror(-err));
		return;
	}
	fprintf(stderr, "counters redirected_skbs=%llu redirected_bytes=%llu "
		"passed_skbs=%llu passed_bytes=%llu lookup_misses=%llu "
		"redirect_failures=%llu userspace_bytes=%llu fin_skbs=%llu "
		"inserted_socks=%llu insert_failures=%llu notify_failures=%llu "
		"userspace_wakeups=%llu held_back_skbs=%llu held_back_bytes=%llu "
		"backpressure_on=%llu backpressure_off=%llu no_flow_state=%llu\n",
		(unsigned long long)sum.redirected_skbs,
		(unsigned long long)sum.redirected_bytes,
		(unsigned long long)sum.passed_skbs,
		(unsigned long long)sum.passed_bytes,
		(unsigned long long)sum.lookup_misses,
		(unsigned long long)sum.redirect_failures,
		(unsigned long long)us->userspace_bytes,
		(unsigned long long)sum.fin_skbs,
		(unsigned long long)sum.inserted_socks,
		(unsigned long long)sum.insert_failures,
		(unsigned long long)sum.notify_failures,
		(unsigned long long)us->userspace_wakeups,
		(unsigned long long)sum.held_back_skbs,
		(unsigned long long)sum.held_back_bytes,
		(unsigned long long)sum.backpressure_on,
		(unsigned long long)sum.backpressure_off,
		(unsigned long long)sum.no_flow_state);
	fprintf(stderr, "exact %s: exact_cut_skbs=%llu exact_cut_bytes=%llu "
		"exact_old_skbs=%llu exact_unknown=%llu exact_cut_failures=%llu\n",
		env.verdict_only ? "off (--verdict-only)" : "on",
		(unsigned long long)sum.exact.exact_cut_skbs,
		(unsigned long long)sum.exact.exact_cut_bytes,
		(unsigned long long)sum.exact.exact_old_skbs,
		(unsigned long long)sum.exact.exact_unknown,
		(unsigned long long)sum.exact.exact_cut_failures);
	logv("userspace accepted=%llu preaccept_data=%llu closed=%llu "
	     "eagain_reads=%llu drain_timeouts=%llu\n",
	     (unsigned long long)us->accepted, (unsigned long long)us->preaccept_data,
	     (unsigned long long)us->closed,
	     (unsigned long long)us->eagain_reads,
	     (unsigned long long)us->drain_timeouts);
}

/* ---- connections ----------------------------------------------------- */

static void conn_set_events(struct conn *c, __u32 events)
{
	struct epoll_event ev = { .events = events | EPOLLET, .data.fd = c->fd };

	if (c->events != ev.events &&
	    epoll_ctl(srv.epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = ev.events;
}

static void resume_accepting(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = srv.lfd };

	if (!srv.accept_paused)
		return;
	if (epoll_ctl(srv.epfd, EPOLL_CTL_MOD, srv.lfd, &ev) == 0)
		srv.accept_paused = false;
}

static void drain_unlink(struct conn *c)
{
	if (c->drain_prev)
		c->drain_prev->drain_next = c->drain_next;
	else if (srv.draining == c)
		srv.draining = c->drain_next;
	if (c->drain_next)
		c->drain_next->drain_prev = c->drain_prev;
	c->drain_prev = c->drain_next = NULL;
}

/* Closing the socket also takes it out of the SOCKHASH. */
static void conn_close(struct conn *c)
{
	/* sock_ops deletes it too, at TCP_CLOSE; one written after that
	 * would stay behind.
	 */
	if (c->published)
		bpf_map_delete_elem(srv.echoed_fd, &c->cookie);
	drain_unlink(c);
	srv.conns[c->fd] = NULL;
	close(c->fd);
	free(c->pend);
	free(c);
	us->closed++;
	resume_accepting();
}

/* Send what the socket takes; keep the rest for the next EPOLLOUT. */
static int conn_send(struct conn *c, const char *data, size_t len)
{
	ssize_t n;
	char *p;

	while (len) {
		n = send(c->fd, data, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			break;
		}
		us->userspace_bytes += n;
		c->echoed += n;
		data += n;
		len -= n;
	}
	if (!len)
		return 0;
	p = malloc(len);
	if (!p)
		return -ENOMEM;
	memcpy(p, data, len);
	c->pend = p;
	c->pend_off = 0;
	c->pend_len = len;
	conn_set_events(c, EPOLLOUT);	/* and stop reading meanwhile */
	return 0;
}

/*
 * Tell the verdict how many of the bytes passed up to us are in the send
 * queue now: it hands the echo back to the kernel only when that is all
 * of them (echo.h, struct echo_flow). Counted after send() returned, so
 * never ahead of the socket.
 */
static void conn_publish(struct conn *c)
{
	if (!c->in_map || c->echoed == c->published)
		return;
	if (bpf_map_update_elem(srv.echoed_fd, &c->cookie, &c->echoed, BPF_ANY) == 0)
		c->published = c->echoed;
}

/* 0 once nothing is pending, -EAGAIN while the socket is full. */
static int conn_flush(struct conn *c)
{
	ssize_t n;

	while (c->pend_len) {
		n = send(c->fd, c->pend + c->pend_off, c->pend_len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		us->userspace_bytes += n;
		c->echoed += n;
		c->pend_off += n;
		c->pend_len -= n;
	}
	free(c->pend);
	c->pend = NULL;
	c->pend_off = 0;
	conn_publish(c);
	conn_set_events(c, EPOLLIN);
	return 0;
}

/* After the client's FIN: done once every byte it sent was echoed and
 * acknowledged; the kernel's redirect queue may still hold some.
 */
static bool conn_drained(struct conn *c)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (c->pend_len)
		return false;
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return true;
	/* bytes_received counts the FIN's sequence number too. */
	if (ti.tcpi_bytes_acked + 1 >= ti.tcpi_bytes_received)
		return true;
	if (ti.tcpi_bytes_acked != c->acked) {
		c->acked = ti.tcpi_bytes_acked;
		c->drain_deadline = now_ms() + DRAIN_IDLE_MS;
	}
	return false;
}

static bool conn_readable(struct conn *c);

/*
 * recv() returned 0: TCP has taken the FIN. Bytes the verdict passed up
 * may still come after it: with the kernel's own echo queued on the
 * socket's psock, a passed skb waits behind it there, and reaches the
 * receive queue only when the echo ahead of it has gone out. So a
 * draining connection goes on reading (EPOLLIN, and each tick) until
 * every byte is echoed and acknowledged. false: it was closed.
 */
static bool conn_start_drain(struct conn *c)
{
	if (c->eof)
		return true;	/* draining already */
	c->eof = true;
	conn_set_events(c, EPOLLIN);
	if (conn_drained(c)) {
		conn_close(c);
		return false;
	}
	c->drain_deadline = now_ms() + DRAIN_IDLE_MS;
	c->drain_next = srv.draining;
	if (srv.draining)
		srv.draining->drain_prev = c;
	srv.draining = c;
	return true;
}

static void check_draining(void)
{
	struct conn *c = srv.draining, *next;
	long long now = now_ms();

	for (; c; c = next) {
		next = c->drain_next;
		if (!c->pend_len && !conn_readable(c))
			continue;	/* closed */
		if (conn_drained(c)) {
			conn_close(c);
		} else if (now > c->drain_deadline) {
			logv("fd %d: peer half-closed and stopped reading, closing\n",
			     c->fd);
			us->drain_timeouts++;
			conn_close(c);
		}
	}
}

/* Edge-triggered: read until EAGAIN, unless the echo backs up.
 * false: the connection was closed. */
static bool conn_readable(struct conn *c)
{
	static char buf[READ_BUF];
	bool got = false;
	ssize_t n;

	for (;;) {
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n > 0) {
			got = true;
			if (conn_send(c, buf, n)) {
				conn_close(c);
				return false;
			}
			if (c->pend_len) {
				conn_publish(c);
				return true;	/* read on once EPOLLOUT flushed it */
			}
			continue;
		}
		if (n == 0) {
			conn_publish(c);
			return conn_start_drain(c);
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			/* Nothing for us: the kernel redirected it (this very
			 * recv() makes it do so for data that came before accept).
			 */
			if (!got)
				us->eagain_reads++;
			conn_publish(c);
			/* From now on the kernel echoes: every message would
			 * still wake us (EPOLLIN), so watch only for FIN and
			 * errors; echo_passed says when bytes come up to us.
			 */
			if (c->in_map && !c->eof)
				conn_set_events(c, EPOLLRDHUP);
			return true;
		}
		conn_close(c);	/* ECONNRESET and friends */
		return false;
	}
}

static void conn_event(int fd, __u32 events)
{
	struct conn *c = fd < srv.nconns_max ? srv.conns[fd] : NULL;
	int err;

	if (!c)
		return;
	us->userspace_wakeups++;
	if (events & (EPOLLERR | EPOLLHUP)) {
		conn_close(c);
		return;
	}
	if (c->pend_len) {
		err = conn_flush(c);
		if (err == -EAGAIN)
			return;
		if (err) {
			conn_close(c);
			return;
		}
	}
	if (conn_readable(c) && c->eof && !c->pend_len && conn_drained(c))
		conn_close(c);
}

/* -v statistics: did the client's data arrive before we accepted? */
static void count_preaccept_data(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) &&
	    ti.tcpi_bytes_received)
		us->preaccept_data++;
}

/* The socket's SOCKHASH key; true when sock_ops put it in the map. */
static bool conn_lookup_key(struct conn *c)
{
	struct sockaddr_in local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	socklen_t clen = sizeof(c->cookie);
	__u64 cookie;

	if (getsockname(c->fd, (struct sockaddr *)&local, &llen) ||
	    getpeername(c->fd, (struct sockaddr *)&peer, &plen) ||
	    getsockopt(c->fd, SOL_SOCKET, SO_COOKIE, &c->cookie, &clen) ||
	    local.sin_family != AF_INET)
		return false;
	c->key.local_ip4 = local.sin_addr.s_addr;
	c->key.remote_ip4 = peer.sin_addr.s_addr;
	c->key.local_port = ntohs(local.sin_port);
	c->key.remote_port = ntohs(peer.sin_port);
	/* A SOCKHASH lookup from userspace yields the socket's cookie. */
	return bpf_map_lookup_elem(srv.socks_fd, &c->key, &cookie) == 0;
}

/* echo_passed: the verdict passed bytes of this socket up to us. */
static int on_passed(void *ctx, void *data, size_t size)
{
	const struct sock_key *key = data;
	int fd;

	(void)ctx;
	if (size < sizeof(*key))
		return 0;
	for (fd = 0; fd <= srv.max_fd; fd++) {
		struct conn *c = srv.conns[fd];

		if (c && !memcmp(&c->key, key, sizeof(*key))) {
			if (!c->pend_len)
				conn_readable(c);
			break;
		}
	}
	return 0;	/* not yet accepted: its first read will find it */
}

/*
 * Quiet connections are read now and then anyway, so that nothing waits
 * for good when no notification comes: a full ring buffer, or a socket
 * taken out of the map by hand (bpftool map delete), whose bytes then go
 * to the plain receive queue without a word to us. One recv() per quiet
 * connection every SWEEP_MS, instead of a wakeup per message.
 */
static void sweep_quiet_connections(void)
{
	int fd;

	for (fd = 0; fd <= srv.max_fd; fd++) {
		struct conn *c = srv.conns[fd];

		if (c && !c->pend_len && !c->eof && !(c->events & EPOLLIN))
			conn_readable(c);
	}
	srv.last_sweep = now_ms();
}

static void accept_connections(void)
{
	/* Edge-triggered: after pre-accept data the kernel can leave the
	 * socket looking readable forever (README, "Kernel behaviour"), and a
	 * level-triggered loop would spin on EAGAIN.
	 */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET };
	int one = 1, i, fd;
	struct conn *c;

	for (i = 0; i < ACCEPTS_PER_EVENT; i++) {
		fd = accept4(srv.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				/* Leave them in the backlog until an fd frees up. */
				struct epoll_event off = { .events = 0, .data.fd = srv.lfd };

				logv("accept: %s, pausing\n", strerror(errno));
				if (epoll_ctl(srv.epfd, EPOLL_CTL_MOD, srv.lfd, &off) == 0) {
					srv.accept_paused = true;
					srv.accept_resume = now_ms() + ACCEPT_PAUSE_MS;
				}
				return;
			}
			continue;	/* ECONNABORTED: the client already left */
		}
		if (fd >= srv.nconns_max) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->events = ev.events;
		c->in_map = conn_lookup_key(c);
		ev.data.fd = fd;
		if (epoll_ctl(srv.epfd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		srv.conns[fd] = c;
		if (fd > srv.max_fd)
			srv.max_fd = fd;
		us->accepted++;
		if (verbose)
			count_preaccept_data(fd);
	}
}

/* ---- setup ----------------------------------------------------------- */

/* The listener (listen.h), its buffers passed on to the sockets it
 * accepts (README "Buffer sizes"); the fd or -errno, said why.
 */
static int listen_on_port(void)
{
	int fd, err;

	err = check_port_free(env.srv.addr, env.srv.port);
	if (err == -EADDRINUSE) {
		fprintf(stderr, "%s: port %d is busy (another server is listening "
			"on it); stop that server (see: ss -ltnp 'sport = :%d') "
			"or choose another port with -p\n", prog, env.srv.port,
			env.srv.port);
		return err;
	}
	if (err) {
		fprintf(stderr, "%s: bind to %s port %d: %s; %s\n", prog,
			inet_ntoa(env.srv.addr), env.srv.port, strerror(-err),
			bind_hint(-err));
		return err;
	}
	fd = open_listener_bufs(env.srv.addr, env.srv.port, env.srv.backlog, SOCK_NONBLOCK,
				env.sndbuf, env.rcvbuf);
	if (fd < 0)
		fprintf(stderr, "%s: cannot listen on %s port %d: %s; %s\n", prog,
			inet_ntoa(env.srv.addr), env.srv.port, strerror(-fd),
			bind_hint(-fd));
	return fd;
}

/* Checks whose failure has a clear cause and a clear remedy, in order. */
static int check_environment(void)
{
	int err;

	err = loader_preflight(prog, env.btf_path, &cg,
			       env.cgroup_root);
	if (err)
		return err;
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SOCKHASH, NULL) != 1 ||
	    libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SK_SKB, NULL) != 1 ||
	    libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SOCK_OPS, NULL) != 1) {
		fprintf(stderr, "ebpf-echo-server: this kernel lacks SOCKHASH maps, "
			"sk_skb or sock_ops programs (needs CONFIG_BPF_SYSCALL, "
			"CONFIG_BPF_STREAM_PARSER, CONFIG_CGROUP_BPF); use the "
			"'user' server instead\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* SIGUSR1 prints the counters; SIGINT, SIGTERM stop. */
static int setup_signals(void)
{
	static const int more[] = { SIGUSR1, 0 };

	srv.sigfd = stop_signalfd(more, SFD_NONBLOCK | SFD_CLOEXEC);
	return srv.sigfd < 0 ? srv.sigfd : 0;
}

/* Up to the hard limit: each connection is an fd. */
static int raise_fd_limit(void)
{
	struct rlimit rl;
	int err = raise_nofile_limit(0, &rl);

	if (err)
		return err;
	srv.nconns_max = rl.rlim_cur > (1 << 20) ? 1 << 20 : rl.rlim_cur;
	srv.conns = calloc(srv.nconns_max, sizeof(*srv.conns));
	return srv.conns ? 0 : -ENOMEM;
}

/* Returns false when asked to stop. */
static bool handle_signals(struct echo_bpf *skel)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(srv.sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			print_counters(skel);
		else
			stop = true;
	}
	return !stop;
}

static int serve(struct echo_bpf *skel)
{
	struct epoll_event ev = { .events = EPOLLIN }, events[MAX_EVENTS];
	int n, i, timeout;

	srv.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv.epfd < 0)
		return -errno;
	ev.data.fd = srv.lfd;
	if (epoll_ctl(srv.epfd, EPOLL_CTL_ADD, srv.lfd, &ev))
		return -errno;
	ev.data.fd = srv.sigfd;
	if (epoll_ctl(srv.epfd, EPOLL_CTL_ADD, srv.sigfd, &ev))
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(srv.passed);
	if (epoll_ctl(srv.epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;

	for (;;) {
		timeout = srv.draining || srv.accept_paused ? TICK_MS : SWEEP_MS;
		n = epoll_wait(srv.epfd, events, MAX_EVENTS, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < n; i++) {
			int fd = events[i].data.fd;

			if (fd == srv.sigfd) {
				if (!handle_signals(skel))
					return 0;
			} else if (fd == ring_buffer__epoll_fd(srv.passed)) {
				ring_buffer__consume(srv.passed);
			} else if (fd == srv.lfd) {
				accept_connections();
			} else {
				conn_event(fd, events[i].events);
			}
		}
		if (now_ms() - srv.last_sweep >= SWEEP_MS)
			sweep_quiet_connections();
		if (srv.draining)
			check_draining();
		if (srv.accept_paused && now_ms() >= srv.accept_resume)
			resume_accepting();
	}
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	struct bpf_link *link = NULL;
	struct echo_bpf *skel = NULL;
	char name[64];
	int err, fd;

	parse_args(argc, argv);
	loader_log(verbose);

	err = check_environment();
	if (err)
		return 1;
	err = raise_fd_limit();
	if (!err)
		err = setup_signals();
	if (err) {
		fprintf(stderr, "ebpf-echo-server: setup: %s\n", strerror(-err));
		return 1;
	}

	open_opts.btf_custom_path = env.btf_path;
	skel = echo_bpf__open_opts(&open_opts);
	if (!skel) {
		err = -errno;
		loader_open_failed(prog, -err);
		goto cleanup;
	}
	skel->rodata->server_port = env.srv.port;
	skel->rodata->flow_limit = env.flow_limit;
	skel->rodata->exact_seq = !env.verdict_only;

	err = echo_bpf__load(skel);
	if (err) {
		loader_load_failed(prog, -err);
		goto cleanup;
	}

	skel->bss->userspace = *us;
	us = &skel->bss->userspace;
	srv.socks_fd = bpf_map__fd(skel->maps.echo_socks);
	srv.echoed_fd = bpf_map__fd(skel->maps.echo_echoed);
	srv.passed = ring_buffer__new(bpf_map__fd(skel->maps.echo_passed),
				      on_passed, NULL, NULL);
	if (!srv.passed) {
		err = -errno;
		fprintf(stderr, "ebpf-echo-server: ring buffer: %s\n",
			strerror(-err));
		goto cleanup;
	}

	err = loader_attach_verdict(prog, skel->progs.echo_verdict,
				    skel->maps.echo_socks,
				    BPF_SK_SKB_STREAM_VERDICT,
				    "the stream verdict");
	if (err)
		goto cleanup;

	/* Our own cgroup, joined before the listener exists: the listener and
	 * the sockets it accepts belong to it, and nothing else on the box does.
	 */
	snprintf(name, sizeof(name), "ebpf-echo-%d", env.srv.port);
	err = cgroup_create(&cg, name);
	if (!err)
		err = cgroup_enter(&cg);
	if (err)
		goto cleanup;
	link = loader_attach_sockops(prog, skel->progs.echo_sockops, &cg);
	if (!link) {
		err = -errno;
		goto cleanup;
	}

	fd = listen_on_port();
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	srv.lfd = fd;
	if (!env.flow_limit)
		fprintf(stderr, "ebpf-echo-server: WARNING: --flow-limit 0: no flow "
			"control; a client that sends and never reads makes the "
			"kernel queue its bytes without bound (outside tcp_mem), "
			"until the machine runs out of memory (README \"Flow "
			"control\")\n");
	printf("listening on %s port %d (cgroup %s)\n", inet_ntoa(env.srv.addr),
	       env.srv.port, cg.path);
	fflush(stdout);
	warn_if_any_addr(env.srv.addr);

	err = serve(skel);
	if (err)
		fprintf(stderr, "ebpf-echo-server: event loop: %s\n", strerror(-err));

cleanup:
	if (srv.conns) {
		for (fd = 0; fd < srv.nconns_max; fd++)
			if (srv.conns[fd])
				conn_close(srv.conns[fd]);
	}
	if (srv.lfd >= 0) {
		close(srv.lfd);
		print_counters(skel);
	}
	if (srv.epfd >= 0)
		close(srv.epfd);
	ring_buffer__free(srv.passed);
	bpf_link__destroy(link);
	echo_bpf__destroy(skel);
	cgroup_remove(&cg);
	free(srv.conns);
	return err ? 1 : 0;
}
