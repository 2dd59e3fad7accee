/*
 * One exec: start the command on pipes or a PTY, then one poll loop moves
 * STDIN frames to the command and its output to STDOUT/STDERR frames.
 * Back-pressure both ways: we stop reading the command's output while the
 * client is slow (bounded out buffer) and stop reading the client while the
 * command does not drain its stdin (bounded stdin buffer).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

#define OUT_HIGH   (256u << 10)		/* stop reading the command's output above this */
#define OUT_CAP    (OUT_HIGH + AP_HDR_SIZE + AP_CHUNK + 64)
#define IN_HIGH    (256u << 10)		/* stop reading the client above this */
#define IN_CAP     (IN_HIGH + AP_MAX_PAYLOAD)
#define RX_CAP     (AP_HDR_SIZE + AP_MAX_PAYLOAD)
#define DRAIN_MS   500			/* output grace after the command exits */

struct xs {
	int conn, sfd;
	pid_t pid;
	int in_fd, out_fd, err_fd;	/* -1 once closed */
	bool pty, want_stdin, stdin_eof, conn_gone;
	bool exited, timed_out;
	int status;
	uint64_t deadline, exit_at;
	uint8_t *rx; size_t rx_len;		/* frames from the client */
	uint8_t *ib; size_t ib_off, ib_len;	/* bytes for the command's stdin */
	uint8_t *ob; size_t ob_off, ob_len;	/* frames for the client */
};

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void kill_all(struct xs *x, int sig)
{
	if (!x->exited)
		kill(-x->pid, sig);
}

static int spawn(struct xs *x, struct ap_exec *e)
{
	int in[2] = { -1, -1 }, out[2], err[2], master = -1, slave = -1;

	if (x->pty) {
		struct winsize ws = { .ws_row = e->rows ? e->rows : 24, .ws_col = e->cols ? e->cols : 80 };

		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (master < 0 || grantpt(master) || unlockpt(master))
			return -errno;
		slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (slave < 0)
			return -errno;
		ioctl(slave, TIOCSWINSZ, &ws);
		x->pid = fork();
		if (x->pid == 0)
			agent_exec_child(e, slave, slave, slave, true);
		close(slave);
		x->in_fd = x->out_fd = master;
		x->err_fd = -1;
	} else {
		if ((x->want_stdin ? pipe2(in, O_CLOEXEC) : ((in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)) ||
		    pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
			return -errno;
		x->pid = fork();
		if (x->pid == 0)
			agent_exec_child(e, in[0], out[1], err[1], false);
		close(in[0]);
		close(out[1]);
		close(err[1]);
		x->in_fd = in[1];
		x->out_fd = out[0];
		x->err_fd = err[0];
	}
	if (x->pid < 0)
		return -errno;
	for (int *fd = &x->in_fd; fd <= &x->err_fd; fd++)
		if (*fd >= 0)
			fcntl(*fd, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Append a frame to the client's buffer (room is guaranteed by OUT_CAP). */
static void queue_frame(struct xs *x, uint16_t type, const void *p, size_t n)
{
	if (x->ob_off && x->ob_off + x->ob_len + AP_HDR_SIZE + n > OUT_CAP) {
		memmove(x->ob, x->ob + x->ob_off, x->ob_len);
		x->ob_off = 0;
	}
	ap_hdr_encode(x->ob + x->ob_off + x->ob_len, type, (uint32_t)n);
	memcpy(x->ob + x->ob_off + x->ob_len + AP_HDR_SIZE, p, n);
	x->ob_len += AP_HDR_SIZE + n;
}

static void pump_output(struct xs *x, int *fd, uint16_t type)
{
	uint8_t buf[AP_CHUNK];
	ssize_t r = read(*fd, buf, sizeof(buf));

	if (r > 0) {
		queue_frame(x, type, buf, (size_t)r);
		return;
	}
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* EOF; EIO is a PTY whose last holder closed it. */
	if (*fd == x->in_fd)
		x->in_fd = -1;
	close(*fd);
	*fd = -1;
}

static void flush_client(struct xs *x)
{
	ssize_t w = write(x->conn, x->ob + x->ob_off, x->ob_len);

	if (w > 0) {
		x->ob_off += (size_t)w;
		x->ob_len -= (size_t)w;
		if (!x->ob_len)
			x->ob_off = 0;
	} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
		x->conn_gone = true;	/* client left: the command goes too */
		x->ob_len = 0;
		kill_all(x, SIGKILL);
	}
}

static void feed_stdin(struct xs *x)
{
	ssize_t w = write(x->in_fd, x->ib + x->ib_off, x->ib_len);

	if (w > 0) {
		x->ib_off += (size_t)w;
		x->ib_len -= (size_t)w;
	} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
		x->ib_len = 0;		/* the command closed its stdin: drop the rest */
		if (!x->pty) {
			close(x->in_fd);
			x->in_fd = -1;
		}
	}
	if (!x->ib_len)
		x->ib_off = 0;
	if (!x->ib_len && x->stdin_eof && x->in_fd >= 0) {
		if (x->pty) {
			(void)!write(x->in_fd, "\x04", 1);	/* VEOF at line start */
		} else {
			close(x->in_fd);
			x->in_fd = -1;
		}
		x->stdin_eof = false;
	}
}

/* One complete frame from the client. */
static void client_frame(struct xs *x, const struct ap_hdr *h, const uint8_t *p)
{
	struct ap_rd r = { .p = p, .len = h->len };
	uint32_t sig;

	switch (h->type) {
	case AP_STDIN:
		if (!x->want_stdin || x->in_fd < 0)
			return;
		if (!h->len) {
			x->stdin_eof = true;
			return;
		}
		if (x->ib_off + x->ib_len + h->len > IN_CAP) {
			memmove(x->ib, x->ib + x->ib_off, x->ib_len);
			x->ib_off = 0;
		}
		memcpy(x->ib + x->ib_off + x->ib_len, p, h->len);
		x->ib_len += h->len;
		return;
	case AP_KILL:
		sig = ap_get_u32(&r);
		if (!r.err && sig >= 1 && sig < (uint32_t)NSIG)
			kill_all(x, (int)sig);
		return;
	case AP_RESIZE: {
		struct winsize ws = { .ws_row = ap_get_u16(&r), .ws_col = ap_get_u16(&r) };

		if (x->pty && !r.err && x->out_fd >= 0)
			ioctl(x->out_fd, TIOCSWINSZ, &ws);
		return;
	}
	default:		/* anything else is a broken client */
		x->conn_gone = true;
		kill_all(x, SIGKILL);
	}
}

static void parse_frames(struct xs *x);

static void read_client(struct xs *x)
{
	ssize_t r = read(x->conn, x->rx + x->rx_len, RX_CAP - x->rx_len);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		x->conn_gone = true;
		kill_all(x, SIGKILL);
		return;
	}
	x->rx_len += (size_t)r;
	parse_frames(x);
}

/* Frames already received, as far as the stdin buffer has room (back-pressure). */
static void parse_frames(struct xs *x)
{
	long n;

	while (!x->conn_gone && x->ib_len < IN_HIGH && (n = ap_frame_size(x->rx, x->rx_len)) != 0) {
		struct ap_hdr h;

		if (n < 0 || ap_hdr_decode(x->rx, x->rx_len, &h)) {
			x->conn_gone = true;
			kill_all(x, SIGKILL);
			return;
		}
		client_frame(x, &h, x->rx + AP_HDR_SIZE);
		memmove(x->rx, x->rx + n, x->rx_len - (size_t)n);
		x->rx_len -= (size_t)n;
	}
}

static void reap(struct xs *x)
{
	struct signalfd_siginfo si;

	while (read(x->sfd, &si, sizeof(si)) == sizeof(si))
		;
	if (!x->exited && waitpid(x->pid, &x->status, WNOHANG) == x->pid) {
		x->exited = true;
		x->exit_at = now_ms();
	}
}

static bool finished(const struct xs *x)
{
	if (x->conn_gone)
		return x->exited;
	if (!x->exited)
		return false;
	return (x->out_fd < 0 && x->err_fd < 0) || now_ms() - x->exit_at > DRAIN_MS;
}

static int poll_timeout(struct xs *x)
{
	uint64_t now = now_ms(), t = 60000;

	if (x->deadline && !x->timed_out) {
		if (now >= x->deadline) {
			x->timed_out = true;
			kill_all(x, SIGKILL);
		} else {
			t = x->deadline - now;
		}
	}
	if (x->exited)
		t = t < DRAIN_MS / 5 ? t : DRAIN_MS / 5;
	return (int)t;
}

static void loop(struct xs *x)
{
	while (!finished(x)) {
		struct pollfd p[5] = {
			{ .fd = x->sfd, .events = POLLIN },
			{ .fd = x->conn_gone ? -1 : x->conn,
			  .events = (x->ib_len < IN_HIGH && x->rx_len < RX_CAP ? POLLIN : 0) |
				    (x->ob_len ? POLLOUT : 0) },
			{ .fd = x->ob_len < OUT_HIGH ? x->out_fd : -1, .events = POLLIN },
			{ .fd = x->ob_len < OUT_HIGH ? x->err_fd : -1, .events = POLLIN },
			{ .fd = x->ib_len ? x->in_fd : -1, .events = POLLOUT },
		};

		if (poll(p, 5, poll_timeout(x)) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			reap(x);
		if (p[1].revents & POLLOUT)
			flush_client(x);
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			read_client(x);
		if (p[2].revents)
			pump_output(x, &x->out_fd, AP_STDOUT);
		if (p[3].revents)
			pump_output(x, &x->err_fd, AP_STDERR);
		if ((p[4].revents && x->ib_len) || (x->stdin_eof && !x->ib_len)) {
			feed_stdin(x);
			parse_frames(x);
		}
		reap(x);
	}
}

static void report(struct xs *x)
{
	struct ap_exit ex = { .kind = AP_EXITED, .timed_out = x->timed_out };
	uint8_t b[16];
	long n;

	if (WIFSIGNALED(x->status)) {
		ex.kind = AP_SIGNALED;
		ex.code = (uint32_t)WTERMSIG(x->status);
	} else {
		ex.code = (uint32_t)WEXITSTATUS(x->status);
	}
	n = ap_exit_encode(&ex, b, sizeof(b));
	queue_frame(x, AP_EXIT, b, (size_t)n);
	fcntl(x->conn, F_SETFL, 0);
	ap_write_all(x->conn, x->ob + x->ob_off, x->ob_len);
}

int agent_exec(int conn, struct ap_exec *e)
{
	struct xs x = { .conn = conn, .pty = e->flags & AP_EXEC_PTY,
			.want_stdin = e->flags & AP_EXEC_STDIN, .in_fd = -1, .out_fd = -1, .err_fd = -1 };
	sigset_t set;
	int ret;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	x.sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	x.rx = malloc(RX_CAP);
	x.ib = malloc(IN_CAP);
	x.ob = malloc(OUT_CAP);
	if (x.sfd < 0 || !x.rx || !x.ib || !x.ob) {
		ret = -ENOMEM;
		agent_error(conn, "agent out of resources");
		goto out;
	}
	ret = spawn(&x, e);
	if (ret) {
		agent_error(conn, "cannot start %s: %s", e->argv[0], strerror(-ret));
		goto out;
	}
	if (e->timeout_ms)
		x.deadline = now_ms() + e->timeout_ms;
	fcntl(conn, F_SETFL, O_NONBLOCK);
	loop(&x);
	if (!x.exited) {
		kill_all(&x, SIGKILL);
		waitpid(x.pid, &x.status, 0);
	}
	if (!x.conn_gone)
		report(&x);
out:
	free(x.rx);
	free(x.ib);
	free(x.ob);
	return ret;
}
