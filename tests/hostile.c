// SPDX-License-Identifier: GPL-2.0
/*
 * hostile - streams that check every byte of an echo, under flow control,
 * half-closes and resets.
 *
 *   hostile [-n CONNS] [-s SECONDS] [-S SEED] [-t TIMEOUT] HOST PORT
 *
 * CONNS connections at once (default 40) for SECONDS (default 20) against
 * an echo server on HOST PORT, one poll loop, every socket nonblocking.
 * Each connection sends messages of a random size from 1 B to 256 KiB
 * (sizes spread over every power of two), their bytes a stream of its own
 * (a hash of the connection's key and the byte's offset, so that any byte
 * can be checked, and a wrong one placed), and checks every byte that
 * comes back. Sending and receiving interleave, so a message larger than
 * every buffer on the way never deadlocks; the sender runs ahead of what
 * came back by one message or by up to 1 MiB (chosen per connection). The
 * reader pauses 0.05-0.5 s between bursts of reading (0-0.1 s each), and
 * a connection's receive buffer may be set small (8 or 64 KiB), so that
 * the server's send buffer and ours fill and TCP's flow control trips.
 *
 * A connection ends after 1-64 messages, chosen at random, either with a
 * half-close (shutdown(SHUT_WR), then every byte still due, then EOF, and
 * no byte more) or with a reset (SO_LINGER 0, close) while its last
 * message is half sent or half echoed; then a new connection takes its
 * place. When the time is up, every connection still open half-closes and
 * drains.
 *
 * Bounded: a connection that makes no progress for TIMEOUT seconds
 * (default 30) is a timeout, and the whole run ends within SECONDS + 60 s
 * (an alarm), whatever the server does. A timeout prints this end's
 * tcp_info and, with the server on this machine, its end's line of
 * /proc/net/tcp and what ss says of it; every line about a connection
 * names its port, to find it in a server's -v log.
 *
 * The seed (default: from the clock; printed) makes a run repeatable: the
 * connection numbered i makes the same choices, sends the same bytes, in
 * every run with that seed (how far it gets depends on the time).
 *
 * Output: one line,
 *   hostile connections=N halfcloses=A resets=B bytes_checked=X
 *           mismatches=M timeouts=T errors=E seed=S
 * and before it, on stderr, a line for each mismatch (the connection, the
 * offset, the byte expected and the byte that came, and what came instead:
 * a repeat of earlier bytes, bytes from later in the stream, or neither,
 * and for how long), timeout or error.
 *
 * Exit status: 0 when every byte was exact and every connection ended as
 * planned; 1 on any wrong byte, timeout or unexpected error; 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_MSG (256 << 10)
#define AHEAD_MAX (1 << 20)
#define MAX_CONNS 4096
#define CHUNK (64 << 10)
/* How far back (and ahead) a wrong byte is looked for in the stream. */
#define LOOK_BACK (256ULL << 20)

enum end { END_HALFCLOSE, END_RESET_SENT, END_RESET_ECHOED };

struct conn {
	int fd;
	int connecting;
	uint64_t id;	  /* the connection's number in this run */
	uint64_t key;	  /* its byte stream */
	uint64_t rng;	  /* its choices */
	uint64_t sent;	  /* bytes sent */
	uint64_t checked; /* bytes received and checked */
	uint64_t msg_end; /* the offset the current message ends at */
	uint64_t msg_start;
	uint64_t ahead;	  /* how far sending may run ahead of checking */
	int msgs_left;	  /* messages still to start, this one not counted */
	enum end end;
	uint64_t reset_at;	/* the offset (sent or checked) of the reset */
	int shut;		/* SHUT_WR done: draining */
	double pause_until;	/* reading paused until then */
	double read_until;	/* reading until then, then a pause */
	double progress;	/* the last time bytes moved */
};

static struct {
	uint64_t connections, halfcloses, resets, bytes, mismatches, timeouts, errors;
} total;

static int conns = 40, seconds = 20, timeout_s = 30, verbose;
static uint64_t seed;
static struct sockaddr_storage peer;
static socklen_t peer_len;
static uint64_t next_id;
static unsigned char rbuf[MAX_MSG], sbuf[CHUNK];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t rnd(struct conn *c)
{
	c->rng += 0x9e3779b97f4a7c15ULL;
	return mix(c->rng);
}

/* A number from LO to HI, both included. */
static uint64_t between(struct conn *c, uint64_t lo, uint64_t hi)
{
	return lo + rnd(c) % (hi - lo + 1);
}

static double seconds_between(struct conn *c, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rnd(c) >> 11) / (double)(1ULL << 53);
}

/* The byte at OFF of the stream KEY. */
static unsigned char stream_byte(uint64_t key, uint64_t off)
{
	return (unsigned char)(mix(key ^ mix(off >> 3)) >> ((off & 7) * 8));
}

/* N bytes of the stream KEY from OFF. */
static void stream_fill(uint64_t key, uint64_t off, unsigned char *b, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t w = mix(key ^ mix((off + i) >> 3));

		for (unsigned int k = (off + i) & 7; k < 8 && i < n; k++, i++)
			b[i] = (unsigned char)(w >> (k * 8));
	}
}

/* How many of B's N bytes equal the stream KEY's from OFF. */
static size_t stream_match(uint64_t key, uint64_t off, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (stream_byte(key, off + i) != b[i])
			break;
	return i;
}

/* A message's size: a power of two picked first, so that small messages
 * are as common as large ones. */
static uint64_t msg_size(struct conn *c)
{
	uint64_t bits = between(c, 0, 18), n = between(c, 1, 1ULL << bits);

	return n > MAX_MSG ? MAX_MSG : n;
}

static void say(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct conn *c, const char *fmt, ...)
{
	struct sockaddr_in6 me = { 0 };	/* large enough for either family */
	socklen_t len = sizeof(me);
	va_list ap;

	/* The port, to find the connection in a server's or proxy's -v log. */
	if (getsockname(c->fd, (struct sockaddr *)&me, &len))
		me.sin6_port = 0;
	fprintf(stderr, "hostile: connection %llu (port %u, %s%s, sent %llu, checked %llu): ",
		(unsigned long long)c->id, ntohs(me.sin6_port),
		c->end == END_HALFCLOSE ? "ends with a half-close" : "ends with a reset",
		c->shut ? ", half-closed" : "",
		(unsigned long long)c->sent, (unsigned long long)c->checked);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * The server's end of the connection, when it is on this machine (in this
 * network namespace): its line of /proc/net/tcp, whose tx_queue (bytes
 * not acknowledged yet, sent or not), rx_queue (not read) and timer tell
 * whether its TCP holds the echo or the server never read or sent it.
 */
static void say_peer_tcp(struct conn *c)
{
	struct sockaddr_in me, them;
	socklen_t len = sizeof(me);
	unsigned int lport, rport, st, tx, rx, tr;
	char line[512];
	FILE *f;

	if (getsockname(c->fd, (struct sockaddr *)&me, &len) || me.sin_family != AF_INET)
		return;
	memcpy(&them, &peer, sizeof(them));
	f = fopen("/proc/net/tcp", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %*u: %*x:%x %*x:%x %x %x:%x %x:",
			   &lport, &rport, &st, &tx, &rx, &tr) != 6 ||
		    lport != ntohs(them.sin_port) || rport != ntohs(me.sin_port))
			continue;
		len = (socklen_t)strcspn(line, "\n");
		while (len && line[len - 1] == ' ')
			len--;
		say(c, "  the server's end: state %u, tx_queue %u, rx_queue %u, timer %u "
		    "(/proc/net/tcp: %.*s)", st, tx, rx, tr, (int)len, line);
	}
	fclose(f);
	/* and ss's view of it: windows, what limits the sender, timers */
	snprintf(line, sizeof(line), "ss -tinmeHO state all '( sport = :%u and dport = :%u )' 2>&1",
		 ntohs(them.sin_port), ntohs(me.sin_port));
	f = popen(line, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		say(c, "  ss: %.*s", (int)strcspn(line, "\n"), line);
	pclose(f);
}

/* What this end's TCP says, to tell a server that stopped sending from a
 * client that stopped reading. */
static void say_tcp(struct conn *c)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int unread = -1;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
		say(c, "  TCP_INFO: %s", strerror(errno));
		return;
	}
	ioctl(c->fd, FIONREAD, &unread);
	say(c, "  this end: state %u, received %llu, unread %d, rcv_space %u, "
	    "the peer's window %u, probes %u, backoff %u, rto %u us",
	    ti.tcpi_state, (unsigned long long)ti.tcpi_bytes_received, unread,
	    ti.tcpi_rcv_space, ti.tcpi_snd_wnd, ti.tcpi_probes, ti.tcpi_backoff,
	    ti.tcpi_rto);
	say_peer_tcp(c);
}

/* The next message, or (none left) the end: a half-close or the reset's
 * arming. */
static void next_message(struct conn *c)
{
	uint64_t size = msg_size(c);

	c->msg_start = c->sent;
	c->msg_end = c->sent + size;
	if (c->msgs_left-- > 0 || c->end == END_HALFCLOSE)
		return;
	/* The last message of a connection that resets: half of it sent, or
	 * half of its echo checked (at a random point within it). */
	c->reset_at = c->msg_start + between(c, 0, size - 1);
}

static void drop(struct conn *c, int reset)
{
	if (reset) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(c->fd);
	c->fd = -1;
}

static int open_conn(struct conn *c, double t)
{
	static const int rcvbufs[] = { 0, 8 << 10, 64 << 10 };
	int rcvbuf;

	memset(c, 0, sizeof(*c));
	c->id = next_id++;
	c->key = mix(seed ^ mix(c->id * 2 + 1));
	c->rng = mix(seed ^ mix(c->id * 2));
	c->msgs_left = (int)between(c, 0, 63);
	/* Half of them half-close; half reset, in one of two places. */
	c->end = between(c, 0, 1) ? END_HALFCLOSE : (enum end)between(c, 1, 2);
	c->ahead = between(c, 0, 1) ? AHEAD_MAX : 1;
	rcvbuf = rcvbufs[between(c, 0, 2)];
	c->read_until = t + seconds_between(c, 0, 0.1);
	c->progress = t;
	next_message(c);

	c->fd = socket(peer.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		say(c, "socket: %s", strerror(errno));
		return -1;
	}
	if (rcvbuf)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (connect(c->fd, (struct sockaddr *)&peer, peer_len) && errno != EINPROGRESS) {
		say(c, "connect: %s", strerror(errno));
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	c->connecting = 1;
	total.connections++;
	if (verbose)
		say(c, "open: %d messages more, end %d, ahead %llu, rcvbuf %d", c->msgs_left,
		    c->end, (unsigned long long)c->ahead, rcvbuf);
	return 0;
}

/* What came instead of the stream at OFF: N bytes B (N > 0, B[0] wrong).
 * Looked for up to LOOK_BACK earlier and as far ahead as was sent. */
static void explain(struct conn *c, uint64_t off, const unsigned char *b, size_t n)
{
	size_t probe = n < 16 ? n : 16, len, zeros;
	uint64_t lo = off > LOOK_BACK ? off - LOOK_BACK : 0, p;

	for (zeros = 0; zeros < n && !b[zeros]; zeros++)
		;
	say(c, "MISMATCH at offset %llu: expected 0x%02x, got 0x%02x (%zu bytes read from there)",
	    (unsigned long long)off, stream_byte(c->key, off), b[0], n);
	if (zeros >= probe) {
		say(c, "  what came: %zu zero bytes", zeros);
		return;
	}
	/* Nearest first: the bytes just before, then further back. */
	for (p = off; p-- > lo;) {
		if (stream_match(c->key, p, b, probe) < probe)
			continue;
		len = stream_match(c->key, p, b, n);
		say(c, "  what came: a repeat of the stream from offset %llu (%llu bytes back), "
		       "%zu bytes long%s", (unsigned long long)p, (unsigned long long)(off - p),
		    len, len == n ? " (all that was read)" : "");
		return;
	}
	for (p = off + 1; p + probe <= c->sent; p++) {
		if (stream_match(c->key, p, b, probe) < probe)
			continue;
		len = stream_match(c->key, p, b, n);
		say(c, "  what came: the stream from offset %llu (%llu bytes skipped), %zu bytes long",
		    (unsigned long long)p, (unsigned long long)(p - off), len);
		return;
	}
	say(c, "  what came: no %zu bytes of this stream within %llu bytes back or what was "
	       "sent ahead: %02x %02x %02x %02x ...", probe, (unsigned long long)(off - lo),
	    b[0], n > 1 ? b[1] : 0, n > 2 ? b[2] : 0, n > 3 ? b[3] : 0);
	/* Wrong bytes in place: where the stream goes on as it should. */
	for (len = 1; len + probe <= n; len++)
		if (stream_match(c->key, off + len, b + len, probe) == probe)
			break;
	if (len + probe <= n)
		say(c, "  the stream goes on in place after %zu wrong bytes", len);
	else
		say(c, "  the stream does not go on in place within the %zu bytes read", n);
}

/* Receive and check; 1: the connection is over (or failed), 0: go on. */
static int do_read(struct conn *c, double t)
{
	size_t good, cap = sizeof(rbuf);
	ssize_t r;

	/* A reset while the echo is half checked: read up to its byte. */
	if (c->end == END_RESET_ECHOED && c->msgs_left < 0 && c->reset_at + 1 - c->checked < cap)
		cap = (size_t)(c->reset_at + 1 - c->checked);
	r = recv(c->fd, rbuf, cap, 0);

	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		say(c, "recv: %s", strerror(errno));
		total.errors++;
		return 1;
	}
	if (r == 0) {
		if (c->shut && c->checked == c->sent) {
			total.halfcloses++;
			return 1;
		}
		say(c, "EOF with %llu bytes still due", (unsigned long long)(c->sent - c->checked));
		total.errors++;
		return 1;
	}
	if ((uint64_t)r > c->sent - c->checked) {
		/* More than was sent: check what was due, then report the rest. */
		good = stream_match(c->key, c->checked, rbuf, (size_t)(c->sent - c->checked));
		if (good == c->sent - c->checked) {
			total.bytes += good;
			c->checked += good;
			say(c, "MISMATCH: %zd bytes more than were sent", r - (ssize_t)good);
			explain(c, c->checked, rbuf + good, (size_t)r - good);
			total.mismatches++;
			return 1;
		}
	} else {
		good = stream_match(c->key, c->checked, rbuf, (size_t)r);
	}
	total.bytes += good;
	c->checked += good;
	c->progress = t;
	if (good < (size_t)r) {
		explain(c, c->checked, rbuf + good, (size_t)r - good);
		total.mismatches++;
		return 1;
	}
	if (c->end == END_RESET_ECHOED && c->msgs_left < 0 && c->checked > c->reset_at) {
		total.resets++;
		return 2;
	}
	if (t >= c->read_until) {
		c->pause_until = t + seconds_between(c, 0.05, 0.5);
		c->read_until = c->pause_until + seconds_between(c, 0, 0.1);
	}
	return 0;
}

/* Send what is due; 1: the connection is over (or failed), 0: go on. */
static int do_write(struct conn *c, double t)
{
	for (;;) {
		uint64_t limit = c->msg_end;
		size_t n;
		ssize_t w;

		if (c->sent == c->msg_end) {
			if (c->msgs_left < 0) {
				/* Every message sent: the half-close, or the
				 * reset once the echo is half checked. */
				if (c->end != END_HALFCLOSE)
					return 0;
				if (!c->shut && shutdown(c->fd, SHUT_WR)) {
					say(c, "shutdown: %s", strerror(errno));
					total.errors++;
					return 1;
				}
				c->shut = 1;
				return 0;
			}
			if (c->sent - c->checked >= c->ahead)
				return 0;
			next_message(c);
		}
		if (c->end == END_RESET_SENT && c->msgs_left < 0) {
			if (c->sent >= c->reset_at) {
				total.resets++;
				return 2;
			}
			limit = c->reset_at;
		}
		n = limit - c->sent > CHUNK ? CHUNK : (size_t)(limit - c->sent);
		stream_fill(c->key, c->sent, sbuf, n);
		w = send(c->fd, sbuf, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			say(c, "send: %s", strerror(errno));
			total.errors++;
			return 1;
		}
		c->sent += (uint64_t)w;
		c->progress = t;
	}
}

/* Time is up: the connection half-closes after what it has sent. */
static void wind_down(struct conn *c)
{
	if (c->fd < 0 || c->shut)
		return;
	c->msgs_left = -1;
	c->end = END_HALFCLOSE;
	c->msg_end = c->sent;
}

static int connected(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		say(c, "connect: %s", strerror(err ? err : errno));
		total.errors++;
		return -1;
	}
	c->connecting = 0;
	return 0;
}

/* Whether the connection has something to send (or its half-close). */
static int wants_write(const struct conn *c)
{
	if (c->shut)
		return 0;
	if (c->sent < c->msg_end)
		return 1;
	if (c->msgs_left < 0)
		return c->end == END_HALFCLOSE;
	return c->sent - c->checked < c->ahead;
}

static void on_alarm(int sig)
{
	static const char msg[] = "hostile: the whole run took SECONDS + 60 s: stuck, giving up\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "hostile: %s\n", why);
	fprintf(stderr,
		"usage: hostile [-n CONNS] [-s SECONDS] [-S SEED] [-t TIMEOUT] [-v] HOST PORT\n"
		"  -n CONNS    connections at once (default 40, at most %d)\n"
		"  -s SECONDS  how long new connections are made (default 20)\n"
		"  -S SEED     the seed of every choice and byte (default: from the clock)\n"
		"  -t TIMEOUT  seconds a connection may go without progress (default 30)\n"
		"  -v          a line for each connection opened\n"
		"Each connection sends messages of 1 B to 256 KiB and checks every byte of\n"
		"the echo, reading in bursts with pauses of 0.05-0.5 s, and ends with a\n"
		"half-close and drain or a reset mid-message. Exit 0: all exact; 1: a\n"
		"wrong byte, a timeout or an error; 2: usage.\n",
		MAX_CONNS);
	return 2;
}

static int number(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int resolve(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	memcpy(&peer, ai->ai_addr, ai->ai_addrlen);
	peer_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* One connection's turn after poll: 0 to go on, else it is over. */
static int serve(struct conn *c, short revents, double t)
{
	int r;

	if (c->connecting) {
		if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
			return 0;
		if (connected(c))
			return 1;
		c->progress = t;
	}
	if ((revents & (POLLIN | POLLERR | POLLHUP)) && t >= c->pause_until) {
		r = do_read(c, t);
		if (r)
			return r;
	}
	if (!c->shut && (revents & (POLLOUT | POLLERR | POLLHUP))) {
		r = do_write(c, t);
		if (r)
			return r;
	}
	if (t - c->progress > timeout_s) {
		say(c, "TIMEOUT: no progress for %d s (%s)", timeout_s,
		    c->shut ? "draining after the half-close" : "sending and checking");
		say_tcp(c);
		total.timeouts++;
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct conn cs[MAX_CONNS];
	static struct pollfd pf[MAX_CONNS];
	int opt, open_n = 0, seeded = 0, done;
	long v;
	double t, end_at;

	while ((opt = getopt(argc, argv, "n:s:S:t:vh")) != -1) {
		switch (opt) {
		case 'n':
			if (number(optarg, 1, MAX_CONNS, &v))
				return usage("-n needs a number from 1 to 4096");
			conns = (int)v;
			break;
		case 's':
			if (number(optarg, 1, 86400, &v))
				return usage("-s needs a number of seconds from 1");
			seconds = (int)v;
			break;
		case 'S':
			errno = 0;
			seed = strtoull(optarg, NULL, 0);
			if (errno || !*optarg)
				return usage("-S needs a number");
			seeded = 1;
			break;
		case 't':
			if (number(optarg, 1, 3600, &v))
				return usage("-t needs a number of seconds from 1");
			timeout_s = (int)v;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			return usage(NULL);
		}
	}
	if (argc - optind != 2)
		return usage("HOST and PORT, no more");
	if (number(argv[optind + 1], 1, 65535, &v) || resolve(argv[optind], argv[optind + 1]))
		return usage("cannot resolve HOST PORT");
	if (!seeded)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned int)seconds + 60);

	t = now();
	end_at = t + seconds;
	for (int i = 0; i < conns; i++) {
		cs[i].fd = -1;
		if (open_conn(&cs[i], t))
			total.errors++;
		else
			open_n++;
	}
	done = 0;
	while (open_n) {
		double wait_s = 0.1;

		t = now();
		if (!done && t >= end_at) {
			done = 1;
			for (int i = 0; i < conns; i++)
				wind_down(&cs[i]);
		}
		for (int i = 0; i < conns; i++) {
			struct conn *c = &cs[i];

			pf[i].fd = c->fd;
			pf[i].events = 0;
			pf[i].revents = 0;
			if (c->fd < 0)
				continue;
			if (c->connecting) {
				pf[i].events = POLLOUT;
				continue;
			}
			/* Half-closed and paused: nothing to do, and a hang-up
			 * (both sides shut) would wake poll at once. */
			if (c->shut && t < c->pause_until)
				pf[i].fd = -1;
			if (t >= c->pause_until)
				pf[i].events |= POLLIN;
			else if (c->pause_until - t < wait_s)
				wait_s = c->pause_until - t;
			if (wants_write(c))
				pf[i].events |= POLLOUT;
		}
		if (poll(pf, (nfds_t)conns, (int)(wait_s * 1000) + 1) < 0 && errno != EINTR) {
			perror("hostile: poll");
			return 1;
		}
		t = now();
		for (int i = 0; i < conns; i++) {
			struct conn *c = &cs[i];
			int r;

			if (c->fd < 0)
				continue;
			r = serve(c, pf[i].revents, t);
			if (!r)
				continue;
			drop(c, r == 2);
			open_n--;
			if (!done && t < end_at) {
				if (open_conn(c, t))
					total.errors++;
				else
					open_n++;
			}
		}
	}
	printf("hostile connections=%llu halfcloses=%llu resets=%llu bytes_checked=%llu "
	       "mismatches=%llu timeouts=%llu errors=%llu seed=%llu\n",
	       (unsigned long long)total.connections, (unsigned long long)total.halfcloses,
	       (unsigned long long)total.resets, (unsigned long long)total.bytes,
	       (unsigned long long)total.mismatches, (unsigned long long)total.timeouts,
	       (unsigned long long)total.errors, (unsigned long long)seed);
	return total.mismatches || total.timeouts || total.errors ? 1 : 0;
}
