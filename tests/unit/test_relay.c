/*
 * The browser relay process (tools/sandbox/relay*.c) on the host, against a
 * fake VMM (a process whose command line is `mvm vmm t1`) and a fake agent
 * behind vsock.sock: bytes go both ways exactly, the listening sockets are
 * on 127.0.0.1 only, a running relay is reused, a hostile agent answer
 * (ERROR, a line that never ends) closes that connection and not the
 * relay, at most RELAY_MAX_CONNS connections are served and each forward
 * keeps a reserve, another uid's connections are closed and take no slot,
 * an idle connection is closed, relay.log is capped, the relay is confined
 * (its own state directory is all it sees, no capability), and it goes
 * when the VMM goes and on relay_stop(). A local_web forward (noVNC's)
 * answers 403 to a foreign Origin or Host without reaching the guest,
 * passes one request per connection unless it is a WebSocket, and a relay
 * without that check is replaced.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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
#include "vmm/confine/caps.h"
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

/* The relay confines itself after the start returned (connections wait
 * in the backlog meanwhile): poll, with a deadline. Its status then. */
static void wait_confined(pid_t pid, char *status, size_t cap)
{
	char p[64];
	bool seccomp = false;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	for (int i = 0; i < 1000 && !seccomp; i++) {
		FILE *f = fopen(p, "r");
		size_t n = f ? fread(status, 1, cap - 1, f) : 0;

		status[n] = 0;
		if (f)
			fclose(f);
		seccomp = strstr(status, "Seccomp:\t2") != NULL;
		if (!seccomp)
			nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
	}
	cr_assert(seccomp, "the relay runs under its seccomp filter");
}

Test(relay, listens_on_loopback_only_and_is_confined)
{
	struct relay_info ri = start_relay();
	char line[512], want[64], status[4096];
	FILE *f;
	int hits = 0;

	for (int i = 0; i < ri.nfwd; i++) {
		snprintf(want, sizeof(want), ": 0100007F:%04X 00000000:0000 0A", ri.fwd[i].host);
		f = fopen("/proc/net/tcp", "r");
		while (f && fgets(line, sizeof(line), f))
			hits += strstr(line, want) != NULL;
		if (f)
			fclose(f);
	}
	cr_assert_eq(hits, ri.nfwd, "every listener is bound to 127.0.0.1");
	wait_confined(ri.pid, status, sizeof(status));
}

/* Its own state directory is the relay's whole file system: its own
 * vsock.sock is there, no other sandbox's socket, no /tmp or /run with a
 * user's agent or bus; and it holds no capability (this test runs as root
 * here, so it held them all before). */
Test(relay, sees_no_unix_socket_but_its_own_and_holds_no_capability)
{
	struct relay_info ri = start_relay();
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char status[4096], p[PATH_MAX + 64];
	int other = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(p, sizeof(p), "%s/t2", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/t2/api.sock", root);
	cr_assert_eq(bind(other, (struct sockaddr *)&a, sizeof(a)), 0);
	wait_confined(ri.pid, status, sizeof(status));
	cr_assert_eq(confine_caps_none(status), 1, "a capability is left:\n%s", status);
	snprintf(p, sizeof(p), "/proc/%d/root/vsock.sock", (int)ri.pid);
	cr_assert_eq(access(p, F_OK), 0, "its own vsock.sock is at its root");
	snprintf(p, sizeof(p), "/proc/%d/root%s/t2/api.sock", (int)ri.pid, root);
	cr_assert_neq(access(p, F_OK), 0, "another sandbox's api.sock is in its view");
	snprintf(p, sizeof(p), "/proc/%d/root/tmp", (int)ri.pid);
	cr_assert_neq(access(p, F_OK), 0, "/tmp is in its view");
	close(other);
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

/* Open @n connections to @port, each with a byte sent; how many echo it.
 * They stay open in @fds. */
static int hold(uint16_t port, int *fds, int n)
{
	int served = 0;
	char b[2];

	for (int i = 0; i < n; i++) {
		fds[i] = dial(port);
		cr_assert_eq(write(fds[i], "x", 1), 1);
	}
	for (int i = 0; i < n; i++)
		served += read(fds[i], b, 1) == 1;
	return served;
}

/* One forward's clients (a page hammering noVNC's port) cannot take the
 * slots the other forward needs: each keeps RELAY_FWD_RESERVE. */
Test(relay, serves_at_most_max_conns_and_each_forward_keeps_a_reserve)
{
	struct relay_info ri = start_relay();
	int fds[RELAY_MAX_CONNS + 6 + RELAY_FWD_RESERVE + 4], share = RELAY_MAX_CONNS - RELAY_FWD_RESERVE;

	cr_assert_eq(hold(relay_host_port(&ri, 6080), fds, RELAY_MAX_CONNS + 6), share);
	cr_assert_eq(hold(relay_host_port(&ri, 9222), fds + RELAY_MAX_CONNS + 6, RELAY_FWD_RESERVE + 4),
		     RELAY_FWD_RESERVE, "the other forward gets its reserve, and the total stays");
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close(fds[i]);
}

/* Another local user (nobody) reaches the port but is served nothing: each
 * of its connections is closed at once, takes no slot, and the owner's
 * client, connecting while they are held, is served. */
Test(relay, another_users_connections_are_refused_and_take_no_slot)
{
	struct relay_info ri = start_relay();
	int rep[2], go[2], fds[RELAY_MAX_CONNS + 4], served = -1, st;
	char b[8];
	pid_t kid;

	if (getuid() != 0)
		cr_skip_test("needs root to run a client as another uid");
	cr_assert_eq(pipe(rep), 0);
	cr_assert_eq(pipe(go), 0);
	kid = fork();
	cr_assert(kid >= 0);
	if (kid == 0) {
		close(go[1]);	/* so that the test's end, however it comes, ends the wait */
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		served = hold(relay_host_port(&ri, 9222), fds, RELAY_MAX_CONNS + 4);
		(void)!write(rep[1], &served, sizeof(served));
		(void)!read(go[0], b, 1);	/* hold them while the owner tries */
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	cr_assert_eq(read(rep[0], &served, sizeof(served)), (ssize_t)sizeof(served));
	cr_assert_eq(served, 0, "%d connections of uid 65534 were served", served);
	{
		int fd = dial(relay_host_port(&ri, 9222));

		cr_assert_eq(write(fd, "ping", 4), 4);
		cr_assert_eq(read(fd, b, 4), 4, "the owner is served while nobody holds connections");
		close(fd);
	}
	cr_assert_eq(write(go[1], "x", 1), 1);
	cr_assert_eq(waitpid(kid, &st, 0), kid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	{
		char p[PATH_MAX], log[8192] = "";
		int fd;
		ssize_t n;

		snprintf(p, sizeof(p), "%s/t1/relay.log", root);
		fd = open(p, O_RDONLY);
		n = fd >= 0 ? read(fd, log, sizeof(log) - 1) : 0;
		log[n > 0 ? n : 0] = 0;
		if (fd >= 0)
			close(fd);
		cr_assert(strstr(log, "refused a connection of uid 65534"), "relay.log: %s", log);
	}
}

/* A piped connection nobody uses is closed after the idle time (1 s here):
 * a client that stops reading or sending does not keep its slot. */
Test(relay, an_idle_connection_is_closed)
{
	struct relay_info ri;
	char b[8];
	int fd;

	setenv("MVM_RELAY_IDLE", "1", 1);
	ri = start_relay();
	fd = dial(relay_host_port(&ri, 9222));	/* reads time out after 20 s */
	cr_assert_eq(write(fd, "ping", 4), 4);
	cr_assert_eq(read(fd, b, 4), 4);
	cr_assert_eq(read(fd, b, sizeof(b)), 0, "the idle connection ends (not a read timeout)");
	close(fd);
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
		 "Origin: http://127.0.0.1:%u\r\nUpgrade: websocket\r\n\r\nRFB", vnc, vnc);
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

/* relay.log is capped like console.log (MVM_LOG_MAX; 64 KiB here): it and
 * relay.log.1 together stay under the cap however many lines the relay
 * writes (here one per refused request), and a marker says so. */
Test(relay, relay_log_is_capped)
{
	const struct relay_fwd g[1] = { { .guest = 6080, .local_web = true } };
	struct relay_info ri;
	char err[256] = "", bad[128], b[512], p[PATH_MAX], head[64] = "";
	struct stat a, o;
	int fd;

	setenv("MVM_LOG_MAX", "64K", 1);
	cr_assert_eq(relay_ensure("t1", mvm_exe(), g, 1, &ri, err, sizeof(err)), 0, "%s", err);
	snprintf(bad, sizeof(bad), "GET / HTTP/1.1\r\nHost: evil.example:%u\r\n\r\n",
		 relay_host_port(&ri, 6080));
	for (int i = 0; i < 1600; i++)	/* ~150 KiB of log lines */
		exchange(relay_host_port(&ri, 6080), bad, b, sizeof(b));
	snprintf(p, sizeof(p), "%s/t1/relay.log", root);
	cr_assert_eq(stat(p, &a), 0);
	fd = open(p, O_RDONLY);
	cr_assert_gt(read(fd, head, sizeof(head) - 1), 0);
	close(fd);
	strcat(p, ".1");
	cr_assert_eq(stat(p, &o), 0, "relay.log.1 holds the older part");
	cr_assert_leq(a.st_size + o.st_size, 64 << 10, "relay.log %lld + .1 %lld bytes",
		      (long long)a.st_size, (long long)o.st_size);
	cr_assert(!strncmp(head, "mvm: relay.log rotated", 22), "relay.log starts: %s", head);
	cr_assert(sb_pid_is(ri.pid, "relay", "t1"));
}

/* noVNC's forward carries one request per connection: after a checked head
 * that is no WebSocket handshake, the guest gets that head and the end of
 * the stream, never a second request on the kept-alive connection (it
 * would not be checked); after a handshake, what follows (frames) passes. */
Test(relay, local_web_forward_passes_one_request_per_connection)
{
	struct relay_info ri = start_web_relay();
	uint16_t vnc = relay_host_port(&ri, 6080);
	char first[256], two[512], b[1024];

	snprintf(first, sizeof(first), "GET /vnc.html HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Connection: keep-alive\r\n\r\n", vnc);
	snprintf(two, sizeof(two), "%sGET /websockify HTTP/1.1\r\nHost: evil.example:%u\r\n"
		 "Upgrade: websocket\r\n\r\n", first, vnc);
	exchange(vnc, two, b, sizeof(b));
	cr_assert_str_eq(b, first, "only the checked request reached the guest");
	{
		int fd = dial(vnc);
		size_t got = 0;
		ssize_t r;

		/* The client keeps its end open: the guest's end of the stream
		 * still comes back, so the client sees the connection end. */
		cr_assert_eq(ap_write_all(fd, first, strlen(first)), 0);
		while (got < sizeof(b) - 1 && (r = read(fd, b + got, sizeof(b) - 1 - got)) > 0)
			got += (size_t)r;
		b[got] = 0;
		cr_assert_eq(r, 0, "EOF, not a read timeout");
		cr_assert_str_eq(b, first);
		close(fd);
	}
	snprintf(two, sizeof(two), "GET /websockify HTTP/1.1\r\nHost: localhost:%u\r\n"
		 "Upgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n\x82\x03RFB", vnc);
	exchange(vnc, two, b, sizeof(b));
	cr_assert_str_eq(b, two, "a WebSocket's frames follow its handshake");
}

/* A dual-stack client (an AF_INET6 socket connecting to ::ffff:127.0.0.1,
 * as some runtimes do) is the owner's too: the kernel finds its socket by
 * the IPv4 addresses it uses. */
Test(relay, a_dual_stack_client_of_the_owner_is_served)
{
	struct relay_info ri = start_relay();
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(relay_host_port(&ri, 9222)) };
	struct timeval tv = { 20, 0 };
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	char b[4];

	cr_assert(fd >= 0);
	cr_assert_eq(inet_pton(AF_INET6, "::ffff:127.0.0.1", &a.sin6_addr), 1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	cr_assert_eq(write(fd, "ping", 4), 4);
	cr_assert_eq(read(fd, b, 4), 4, "served");
	cr_assert_eq(memcmp(b, "ping", 4), 0);
	close(fd);
}
