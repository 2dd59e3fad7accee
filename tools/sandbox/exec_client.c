/*
 * The host end of an exec: one poll loop moves local stdin to STDIN frames
 * and STDOUT/STDERR frames to local fds. Writing local output blocks, which
 * is the back-pressure: the agent's socket fills and it stops reading the
 * command. Local signals become KILL frames; window changes RESIZE frames.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/start_trace.h"
#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/path_sanitize.h"

#define RX_CAP  (AP_HDR_SIZE + AP_MAX_PAYLOAD)
#define TX_HIGH (256u << 10)
/* Control frames (KILL, RESIZE: 12 bytes each) are coalesced; this leaves room for all of them. */
#define TX_CTRL 64
#define TX_CAP  (TX_HIGH + AP_HDR_SIZE + AP_CHUNK + TX_CTRL)
/* After the command's own --timeout, how long the agent has to report its end. */
#define EXEC_GRACE_MS 30000

struct xc {
	int conn, sfd;
	const struct exec_io *io;
	uint8_t *rx; size_t rx_len;
	uint8_t *tx; size_t tx_off, tx_len;
	bool stdin_open, done, out_broken;
	uint64_t out_bytes, err_bytes;	/* written so far, against io->out_max */
	uint64_t kill_pending;		/* signals to forward (bit n: signal n), coalesced */
	bool resize_pending;
	int interrupts;			/* SIGINT/SIGTERM/SIGHUP seen: the second detaches */
	long deadline;			/* CLOCK_MONOTONIC ms; 0: none */
	struct ap_exit *x;
	char *err; size_t errlen;
	int ret;
};

/* Append a frame; -ENOBUFS (nothing written) if it does not fit even after compacting. */
static int queue(struct xc *c, uint16_t type, const void *p, size_t n)
{
	if (c->tx_off + c->tx_len + AP_HDR_SIZE + n > TX_CAP) {
		memmove(c->tx, c->tx + c->tx_off, c->tx_len);
		c->tx_off = 0;
	}
	if (c->tx_len + AP_HDR_SIZE + n > TX_CAP)
		return -ENOBUFS;
	ap_hdr_encode(c->tx + c->tx_off + c->tx_len, type, (uint32_t)n);
	if (n)
		memcpy(c->tx + c->tx_off + c->tx_len + AP_HDR_SIZE, p, n);
	c->tx_len += AP_HDR_SIZE + n;
	return 0;
}

static void fail(struct xc *c, int ret, const char *msg)
{
	if (!c->ret)
		snprintf(c->err, c->errlen, "%s", msg);
	c->ret = c->ret ? c->ret : ret;
	c->done = true;
}

static long now_ms(void)
{
	return (long)mono_now_ms();
}

static int queue_resize(struct xc *c)
{
	struct winsize ws;
	uint8_t b[4];
	struct ap_wr w = { .buf = b, .cap = sizeof(b) };

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws))
		return 0;
	ap_put_u16(&w, ws.ws_row);
	ap_put_u16(&w, ws.ws_col);
	return queue(c, AP_RESIZE, b, w.len);
}

/* Move pending control frames into the queue while they fit; the rest waits for room. */
static void flush_ctrl(struct xc *c)
{
	if (c->resize_pending && !queue_resize(c))
		c->resize_pending = false;
	for (unsigned sig = 1; sig < 64 && c->kill_pending; sig++) {
		uint8_t b[4];
		struct ap_wr w = { .buf = b, .cap = sizeof(b) };

		if (!(c->kill_pending & (1ull << sig)))
			continue;
		ap_put_u32(&w, sig);
		if (queue(c, AP_KILL, b, w.len))
			return;
		c->kill_pending &= ~(1ull << sig);
	}
}

/*
 * The first SIGINT/SIGTERM/SIGHUP goes to the command; a second one
 * detaches (closing the connection makes the agent kill the command).
 */
static void on_signal(struct xc *c)
{
	struct signalfd_siginfo si;

	while (read(c->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGWINCH) {
			c->resize_pending = true;
			continue;
		}
		if (++c->interrupts >= 2)
			return fail(c, -EINTR, "interrupted again: detached (the command is killed)");
		c->kill_pending |= 1ull << (si.ssi_signo & 63);
	}
	flush_ctrl(c);
}

/* Signals taken but not acted on must not kill us once they are unblocked again. */
static void on_signal_drain(int sfd)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == sizeof(si))
		;
}

/* A guest message for the terminal: cut to @cap, control characters escaped. */
static void guest_text(const uint8_t *p, size_t n, char *out, size_t cap)
{
	char raw[1024];

	snprintf(raw, sizeof(raw), "%.*s", (int)(n < sizeof(raw) ? n : sizeof(raw) - 1), (const char *)p);
	ps_escape(raw, out, cap);
}

/* A bounded caller (out_max) takes no more than that from the guest. */
static bool over_cap(struct xc *c, const struct ap_hdr *h)
{
	uint64_t *n = h->type == AP_STDOUT ? &c->out_bytes : &c->err_bytes;

	*n += h->len;
	return c->io->out_max && *n > c->io->out_max;
}

static void frame(struct xc *c, const struct ap_hdr *h, const uint8_t *p)
{
	char msg[1024];
	int fd = h->type == AP_STDOUT ? c->io->out_fd : c->io->err_fd;

	switch (h->type) {
	case AP_STDOUT:
	case AP_STDERR:
		if (over_cap(c, h))
			return fail(c, -EFBIG, "the command's output exceeds the limit");
		if (!c->out_broken && ap_write_all(fd, p, h->len))
			c->out_broken = true;	/* e.g. `| head`: drop the rest, keep running */
		return;
	case AP_WARN:
		guest_text(p, h->len, msg, sizeof(msg));
		fprintf(stderr, "mvm: %s\n", msg);
		return;
	case AP_EXIT:
		if (ap_exit_decode(p, h->len, c->x))
			return fail(c, -EPROTO, "malformed exit report from the agent");
		c->done = true;
		return;
	case AP_ERROR:
		guest_text(p, h->len, c->err, c->errlen);
		c->ret = -EREMOTEIO;
		c->done = true;
		return;
	default:
		fail(c, -EPROTO, "unexpected frame from the agent");
	}
}

static void read_conn(struct xc *c)
{
	ssize_t r = read(c->conn, c->rx + c->rx_len, RX_CAP - c->rx_len);
	long n;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0)
		return fail(c, -ECONNRESET, "lost the connection to the guest agent");
	c->rx_len += (size_t)r;
	while (!c->done && (n = ap_frame_size(c->rx, c->rx_len)) != 0) {
		struct ap_hdr h;

		if (n < 0 || ap_hdr_decode(c->rx, c->rx_len, &h))
			return fail(c, -EPROTO, "malformed frame from the agent");
		frame(c, &h, c->rx + AP_HDR_SIZE);
		memmove(c->rx, c->rx + n, c->rx_len - (size_t)n);
		c->rx_len -= (size_t)n;
	}
}

static void read_stdin(struct xc *c)
{
	uint8_t buf[AP_CHUNK];
	ssize_t r = read(c->io->in_fd, buf, sizeof(buf));

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Polled only below TX_HIGH: a chunk always fits (TX_CAP keeps room beyond it). */
	if (r <= 0) {
		c->stdin_open = false;
		r = 0;		/* an empty STDIN frame is EOF */
	}
	if (queue(c, AP_STDIN, buf, (size_t)r))
		fail(c, -ENOBUFS, "internal error: the send queue is full");
}

static void write_conn(struct xc *c)
{
	ssize_t w = write(c->conn, c->tx + c->tx_off, c->tx_len);

	if (w > 0) {
		c->tx_off += (size_t)w;
		c->tx_len -= (size_t)w;
		if (!c->tx_len)
			c->tx_off = 0;
	} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
		fail(c, -errno, "lost the connection to the guest agent");
	}
}

static void loop(struct xc *c)
{
	while (!c->done) {
		long left = c->deadline ? c->deadline - now_ms() : -1;
		struct pollfd p[3] = {
			{ .fd = c->conn, .events = POLLIN | (c->tx_len ? POLLOUT : 0) },
			{ .fd = c->stdin_open && c->tx_len < TX_HIGH ? c->io->in_fd : -1, .events = POLLIN },
			{ .fd = c->sfd, .events = POLLIN },
		};

		if (c->deadline && left <= 0)
			return fail(c, -ETIMEDOUT, "the guest did not end the command after its timeout");
		if (poll(p, 3, left > INT_MAX ? INT_MAX : (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return fail(c, -errno, "poll failed");
		}
		if (p[2].revents)
			on_signal(c);
		if (p[1].revents)
			read_stdin(c);
		if (p[0].revents & POLLOUT) {
			write_conn(c);
			flush_ctrl(c);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			read_conn(c);
	}
}

static int send_request(int conn, const struct ap_exec *e, char *err, size_t errlen)
{
	const struct timeval stall = { .tv_sec = 30 };	/* an agent that takes no request */
	uint8_t *buf = malloc(AP_MAX_PAYLOAD);
	long n = buf ? ap_exec_encode(e, buf, AP_MAX_PAYLOAD) : -ENOMEM;
	int ret;

	setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &stall, sizeof(stall));
	ret = n < 0 ? (int)n : ap_write_frame(conn, AP_EXEC, buf, (size_t)n);
	if (n < 0)
		snprintf(err, errlen, "the command and environment exceed %u bytes", AP_MAX_PAYLOAD);
	else if (ret)
		snprintf(err, errlen, "sending the command: %s", strerror(-ret));
	free(buf);
	return ret;
}

int agent_exec_run(int conn, const struct ap_exec *e, const struct exec_io *io,
		   struct ap_exit *x, char *err, size_t errlen)
{
	struct xc c = { .conn = conn, .io = io, .x = x, .err = err, .errlen = errlen,
			.stdin_open = io->in_fd >= 0 };
	struct termios saved, raw;
	bool restore = false;
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction dfl = { .sa_handler = SIG_DFL }, saved_act[3];
	sigset_t set, old;

	c.ret = send_request(conn, e, err, errlen);
	if (c.ret)
		return c.ret;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, &old);
	/*
	 * An ignored signal never reaches the signalfd: a shell starts
	 * background jobs with SIGINT ignored, yet `kill -INT` must still
	 * interrupt the exec. Blocked first, so nothing is delivered meanwhile.
	 */
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &dfl, &saved_act[i]);
	signal(SIGPIPE, SIG_IGN);
	c.sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	c.rx = malloc(RX_CAP);
	c.tx = malloc(TX_CAP);
	if (c.sfd < 0 || !c.rx || !c.tx) {
		fail(&c, -ENOMEM, "out of memory");
		goto out;
	}
	if (io->tty && !tcgetattr(STDIN_FILENO, &saved)) {
		raw = saved;
		cfmakeraw(&raw);
		restore = !tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	fcntl(conn, F_SETFL, O_NONBLOCK);
	if (e->timeout_ms)
		c.deadline = now_ms() + (long)e->timeout_ms + EXEC_GRACE_MS;
	loop(&c);
	if (restore)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
out:
	if (c.sfd >= 0) {
		on_signal_drain(c.sfd);
		close(c.sfd);
	}
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &saved_act[i], NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(c.rx);
	free(c.tx);
	return c.ret;
}

int agent_exec_named(const char *name, struct ap_exec *e, const struct exec_io *io,
		     struct ap_exit *x, char *err, size_t errlen)
{
	int fd = agent_connect(name, agent_wait_ms()), ret;
	struct winsize ws;

	start_trace("exec: connected");
	if (fd < 0) {
		snprintf(err, errlen, "cannot reach the agent of %s: %s", name, strerror(-fd));
		return fd;
	}
	if (io->tty && !ioctl(STDIN_FILENO, TIOCGWINSZ, &ws)) {
		e->rows = ws.ws_row;
		e->cols = ws.ws_col;
	}
	ret = agent_exec_run(fd, e, io, x, err, errlen);
	start_trace("exec: done");
	close(fd);
	return ret;
}
