/*
 * The browser relay process (tools/sandbox/relay*.c) on the host, against a
 * fake VMM (a process whose command line is `mvm vmm t1`) and a fake agent
 * behind vsock.sock: bytes go both ways exactly, the listening sockets are
 * on 127.0.0.1 only, a running relay is reused, a hostile agent answer
 * (ERROR, a line that never ends) closes that connection and not the
 * relay, at most RELAY_MAX_CONNS connections are served, the relay is
 * confined, and it goes when the VMM goes and on relay_stop(). A local_web
 * forward (noVNC's) answers 403 to a foreign Origin or Host without
 * reaching the guest, and a relay without that check is replaced.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"

static char root[] = "/tmp/mvm-relay-test-XXXXXX";
static pid_t vmm, agent;

static void put_file(const char *name, const char *text)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* What the fake agent does with the next connections: "echo", "error",
 * "endless", "silent". */
static void set_mode(const char *m)
{
	put_file("mode", m);
}

/* A helper process holds no pipe of the test runner's (stdout, stderr). */
static void quiet(void)
{
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
}

static void agent_conn(int c)
{
	char line[32], mode[16] = "", p[PATH_MAX];
	uint8_t frame[AP_HDR_SIZE + 2], buf[65536];
	struct ap_hdr h;
	size_t n = 0;
	ssize_t r;
	int fd;

	snprintf(p, sizeof(p), "%s/mode", root);
	fd = open(p, O_RDONLY);
	if (fd >= 0) {
		r = read(fd, mode, sizeof(mode) - 1);
		mode[r > 0 ? r : 0] = 0;
		close(fd);
	}
	while (n < sizeof(line) - 1 && read(c, line + n, 1) == 1 && line[n] != '\n')
		n++;
	if (!strcmp(mode, "silent")) {
		pause();	/* never answers: the relay's set-up deadline ends it */
		_exit(0);
	}
	if (!strcmp(mode, "endless")) {
		memset(buf, 'A', 4096);
		while (write(c, buf, 4096) > 0)	/* an "OK" line that never ends */
			;
		_exit(0);
	}
	if (ap_write_all(c, "OK 1073741824\n", 14) || read(c, frame, sizeof(frame)) != sizeof(frame) ||
	    ap_hdr_decode(frame, AP_HDR_SIZE, &h) || h.type != AP_TCP || h.len != 2)
		_exit(1);
	if (!strcmp(mode, "error")) {
		ap_write_frame(c, AP_ERROR, "127.0.0.1:9: Connection refused", 31);
		_exit(0);
	}
	ap_write_frame(c, AP_OK, NULL, 0);
	while ((r = read(c, buf, sizeof(buf))) > 0)
		if (ap_write_all(c, buf, (size_t)r))
			break;
	shutdown(c, SHUT_WR);
	_exit(0);
}

static void fake_agent(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/t1/vsock.sock", root);
	cr_assert_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(l, 128), 0);
	agent = fork();
	cr_assert(agent >= 0);
	if (agent) {
		close(l);
		return;
	}
	signal(SIGCHLD, SIG_IGN);
	quiet();
	for (;;) {
		int c = accept(l, NULL, NULL);

		if (c >= 0 && fork() == 0)
			agent_conn(c);
		close(c);
	}
}

/* A process whose command line is "mvm vmm t1": sh running the script ./vmm. */
static void fake_vmm(void)
{
	char p[PATH_MAX], pid[32];
	int in[2];

	put_file("vmm", "read x\n");
	cr_assert_eq(pipe(in), 0);
	vmm = fork();
	cr_assert(vmm >= 0);
	if (vmm == 0) {
		if (chdir(root))
			_exit(1);
		dup2(in[0], 0);
		quiet();
		execl("/bin/sh", "mvm", "vmm", "t1", (char *)NULL);
		_exit(127);
	}
	close(in[0]);	/* in[1] stays open: the fake VMM waits until it is killed */
	/* Until the exec: before it, the pid is no VMM, and sb_vmm_pid() would
	 * take the sandbox for crashed (and remove its sockets). */
	for (int i = 0; i < 1000 && !sb_pid_is(vmm, "vmm", "t1"); i++)
		usleep(5000);
	cr_assert(sb_pid_is(vmm, "vmm", "t1"));
	snprintf(p, sizeof(p), "t1/pid");
	snprintf(pid, sizeof(pid), "%d", (int)vmm);
	put_file(p, pid);
}

static void setup(void)
{
	char p[PATH_MAX];

	cr_assert(mkdtemp(root));
	setenv("MVM_STATE_DIR", root, 1);
	snprintf(p, sizeof(p), "%s/t1", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	set_mode("echo");
	fake_vmm();
	fake_agent();
	signal(SIGPIPE, SIG_IGN);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	relay_stop("t1");
	if (agent > 0)
		kill(agent, SIGKILL);
	if (vmm > 0)
		kill(vmm, SIGKILL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	(void)!system(cmd);
}

TestSuite(relay, .init = setup, .fini = teardown, .timeout = 90);

/* The mvm binary beside this test binary (build/mvm), or, for make's
 * sanitizer trees (build/asan/unit-tests, no mvm built there), the one a
 * level up: the relay is a process of its own either way. */
static const char *mvm_exe(void)
{
	static char exe[PATH_MAX];
	char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	cr_assert(n > 0);
	dir[n] = 0;
	snprintf(exe, sizeof(exe), "%s/mvm", dirname(dir));
	if (access(exe, X_OK))
		snprintf(exe, sizeof(exe), "%s/../mvm", dir);
	cr_assert_eq(access(exe, X_OK), 0, "no mvm binary beside or above the tests (%s)", exe);
	return exe;
}

static struct relay_info start_relay(void)
{
	const struct relay_fwd g[2] = { { .guest = 9222 }, { .guest = 6080 } };
	struct relay_info ri;
	char err[256] = "";

	cr_assert_eq(relay_ensure("t1", mvm_exe(), g, 2, &ri, err, sizeof(err)), 0, "%s", err);
	cr_assert(relay_host_port(&ri, 9222) && relay_host_port(&ri, 6080));
	return ri;
}

static int dial(uint16_t port)
{
	int fd = ap_connect_loopback(port);
	struct timeval tv = { 20, 0 };

	cr_assert(fd >= 0, "connect: %s", strerror(-fd));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static bool gone(pid_t pid)
{
	const struct timespec ms20 = { 0, 20 * 1000000L };

	for (int i = 0; i < 500; i++) {
		if (!sb_pid_is(pid, "relay", "t1"))
			return true;
		nanosleep(&ms20, NULL);
	}
	return false;
}

Test(relay, carries_bytes_both_ways_and_is_reused)
{
	struct relay_info ri = start_relay(), again;
	static uint8_t out[4 << 20], in[4 << 20];
	size_t got = 0;
	ssize_t r;
	int fd = dial(relay_host_port(&ri, 9222));
	pid_t w;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + i / 4099);
	w = fork();
	if (w == 0) {
		_exit(ap_write_all(fd, out, sizeof(out)) || shutdown(fd, SHUT_WR));
	}
	while ((r = read(fd, in + got, sizeof(in) - got)) > 0)
		got += (size_t)r;
	cr_assert_eq(r, 0, "EOF after the echo (half-close passed on)");
	cr_assert_eq(got, sizeof(out));
	cr_assert_eq(memcmp(in, out, sizeof(out)), 0);
	waitpid(w, NULL, 0);
	close(fd);
	again = start_relay();
	cr_assert_eq(again.pid, ri.pid, "a running relay is reused");
	cr_assert_eq(relay_host_port(&again, 9222), relay_host_port(&ri, 9222));
}

Test(relay, listens_on_loopback_only_and_is_confined)
{
	struct relay_info ri = start_relay();
	char p[64], line[512], want[64];
	FILE *f;
	int hits = 0;
	bool seccomp = false;

	for (int i = 0; i < ri.nfwd; i++) {
		snprintf(want, sizeof(want), ": 0100007F:%04X 00000000:0000 0A", ri.fwd[i].host);
		f = fopen("/proc/net/tcp", "r");
		while (f && fgets(line, sizeof(line), f))
			hits += strstr(line, want) != NULL;
		if (f)
			fclose(f);
	}
	cr_assert_eq(hits, ri.nfwd, "every listener is bound to 127.0.0.1");
	/* The relay confines itself after the start returned (connections
	 * wait in the backlog meanwhile): poll, with a deadline. */
	snprintf(p, sizeof(p), "/proc/%d/status", (int)ri.pid);
	for (int i = 0; i < 1000 && !seccomp; i++) {
		f = fopen(p, "r");
		while (f && fgets(line, sizeof(line), f))
			seccomp |= !strncmp(line, "Seccomp:\t2", 10);
		if (f)
			fclose(f);
		if (!seccomp)
			nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
	}
	cr_assert(seccomp, "the relay runs under its seccomp filter");
}

/* An agent that answers ERROR, an endless line or nothing at all: that
 * connection is closed (the last by RELAY_SETUP_MS), and the relay goes on
 * serving. */
Test(relay, hostile_answers_close_the_connection_not_the_relay)
{
	static const char *modes[] = { "error", "endless", "silent" };
	struct relay_info ri = start_relay();
	char b[16];

	for (size_t i = 0; i < 3; i++) {
		int fd;

		set_mode(modes[i]);
		fd = dial(relay_host_port(&ri, 9222));	/* reads time out after 20 s */
		cr_assert_leq(read(fd, b, sizeof(b)), 0, "%s: the client sees the end", modes[i]);
		close(fd);
	}
	set_mode("echo");
	{
		int fd = dial(relay_host_port(&ri, 9222));

		cr_assert_eq(write(fd, "ping", 4), 4);
		cr_assert_eq(read(fd, b, 4), 4);
		cr_assert_eq(memcmp(b, "ping", 4), 0);
		close(fd);
	}
	cr_assert(sb_pid_is(ri.pid, "relay", "t1"));
}

Test(relay, serves_at_most_max_conns_at_once)
{
	struct relay_info ri = start_relay();
	int fds[RELAY_MAX_CONNS + 6], served = 0;
	char b[2];

	for (int i = 0; i < RELAY_MAX_CONNS + 6; i++) {
		fds[i] = dial(relay_host_port(&ri, 6080));
		cr_assert_eq(write(fds[i], "x", 1), 1);
	}
	for (int i = 0; i < RELAY_MAX_CONNS + 6; i++)
		served += read(fds[i], b, 1) == 1;
	cr_assert_eq(served, RELAY_MAX_CONNS);
	for (int i = 0; i < RELAY_MAX_CONNS + 6; i++)
		close(fds[i]);
}

Test(relay, goes_with_the_vmm)
{
	struct relay_info ri = start_relay();

	kill(vmm, SIGKILL);
	waitpid(vmm, NULL, 0);
	vmm = 0;
	cr_assert(gone(ri.pid), "the relay outlived its VMM");
}

Test(relay, stop_ends_it_and_forgets_it)
{
	struct relay_info ri = start_relay();
	char p[PATH_MAX];

	cr_assert_eq(relay_stop("t1"), 0);
	cr_assert(gone(ri.pid));
	snprintf(p, sizeof(p), "%s/t1/relay.json", root);
	cr_assert_neq(access(p, F_OK), 0);
}

static struct relay_info start_web_relay(void)
{
	const struct relay_fwd g[2] = { { .guest = 9222 }, { .guest = 6080, .local_web = true } };
	struct relay_info ri;
	char err[256] = "";

	cr_assert_eq(relay_ensure("t1", mvm_exe(), g, 2, &ri, err, sizeof(err)), 0, "%s", err);
	return ri;
}

/* Send @head on a new connection to @port; what comes back (at most @cap - 1
 * bytes, until EOF or the read timeout) into @b, NUL-terminated. */
static void exchange(uint16_t port, const char *head, char *b, size_t cap)
{
	int fd = dial(port);
	size_t got = 0;
	ssize_t r;

	cr_assert_eq(ap_write_all(fd, head, strlen(head)), 0);
	shutdown(fd, SHUT_WR);
	while (got < cap - 1 && (r = read(fd, b + got, cap - 1 - got)) > 0)
		got += (size_t)r;
	b[got] = 0;
	close(fd);
}

/* noVNC's forward: a request naming another Origin or Host gets a 403 from
 * the relay and never reaches the guest (the echo would send it back); one
 * naming this port passes byte for byte, in pieces too; the CDP forward
 * beside it is not checked (Chromium checks itself). */
Test(relay, local_web_forward_refuses_foreign_origins_and_hosts)
{
	struct relay_info ri = start_web_relay();
	uint16_t vnc = relay_host_port(&ri, 6080), cdp = relay_host_port(&ri, 9222);
	char good[256], bad[256], b[1024];

	snprintf(good, sizeof(good), "GET /websockify HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Origin: http://127.0.0.1:%u\r\n\r\nRFB", vnc, vnc);
	exchange(vnc, good, b, sizeof(b));
	cr_assert_str_eq(b, good, "the user's own page passes unchanged");
	snprintf(bad, sizeof(bad), "GET /websockify HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Origin: http://evil.example\r\n\r\n", vnc);
	exchange(vnc, bad, b, sizeof(b));
	cr_assert(!strncmp(b, "HTTP/1.1 403 ", 13), "a foreign Origin: %s", b);
	cr_assert_null(strstr(b, "evil"), "nothing of the request came back from the guest");
	snprintf(bad, sizeof(bad), "GET /vnc.html HTTP/1.1\r\nHost: evil.example:%u\r\n\r\n", vnc);
	exchange(vnc, bad, b, sizeof(b));
	cr_assert(!strncmp(b, "HTTP/1.1 403 ", 13), "a foreign Host: %s", b);
	exchange(cdp, bad, b, sizeof(b));
	cr_assert_str_eq(b, bad, "the CDP forward passes whatever comes");
	{
		int fd = dial(vnc);
		size_t got = 0, half = strlen(good) / 2;
		ssize_t r;

		cr_assert_eq(ap_write_all(fd, good, half), 0);
		usleep(100 * 1000);
		cr_assert_eq(ap_write_all(fd, good + half, strlen(good) - half), 0);
		shutdown(fd, SHUT_WR);
		while (got < sizeof(b) - 1 && (r = read(fd, b + got, sizeof(b) - 1 - got)) > 0)
			got += (size_t)r;
		b[got] = 0;
		close(fd);
		cr_assert_str_eq(b, good, "a head in two pieces");
	}
	cr_assert(sb_pid_is(ri.pid, "relay", "t1"));
}

/* A relay started without the check (an older mvm's) is not reused for a
 * forward that wants it. */
Test(relay, a_relay_without_the_check_is_replaced)
{
	struct relay_info plain = start_relay(), web = start_web_relay();

	cr_assert_neq(web.pid, plain.pid);
	cr_assert(gone(plain.pid));
	cr_assert_eq(start_web_relay().pid, web.pid, "the checking relay is reused");
}
