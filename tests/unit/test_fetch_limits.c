/*
 * The host enforces its own limits on a copy out, whatever a fake agent
 * sends: a file over the per-file limit, a flood of warnings, a million
 * directories, deep long paths by the ten thousand, a stall mid-file, and
 * symlinks into .git. Memory stays bounded throughout.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/sandbox/fetch.h"

static char dir[64];
static int sv[2], dfd;
static pid_t agent;

static void setup(void)
{
	strcpy(dir, "/tmp/mvm-flim-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
}

static void teardown(void)
{
	char cmd[128];

	if (agent > 0) {
		kill(agent, SIGKILL);
		waitpid(agent, NULL, 0);
	}
	close(sv[0]);
	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

TestSuite(fetch_limits, .init = setup, .fini = teardown, .timeout = 120);

/* Encoded by hand, as a lying agent would. */
static void entry(int fd, uint32_t kind, uint64_t size, const char *path, const char *target)
{
	uint8_t buf[2 * AP_PATH_MAX + 64];
	struct ap_wr w = { .buf = buf, .cap = sizeof(buf) };

	ap_put_u32(&w, kind);
	ap_put_u32(&w, kind == AP_DIR ? 0755 : 0644);
	ap_put_u64(&w, size);
	ap_put_str(&w, path);
	ap_put_str(&w, target ? target : "");
	if (ap_write_frame(fd, AP_ENTRY, buf, w.len))
		_exit(0);	/* the receiver gave up: fine */
}

/* Run @body as the fake agent in a child, writing to the other end of the socket. */
static void fake_agent(void (*body)(int fd))
{
	agent = fork();
	cr_assert(agent >= 0);
	if (agent == 0) {
		close(sv[0]);
		body(sv[1]);
		_exit(0);
	}
	close(sv[1]);
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void big_file(int fd)
{
	static char chunk[4096];

	entry(fd, AP_DIR, 0, "", NULL);
	entry(fd, AP_FILE, 1 << 20, "big", NULL);
	for (int i = 0; i < 256; i++)
		ap_write_frame(fd, AP_DATA, chunk, sizeof(chunk));
	ap_write_frame(fd, AP_END, NULL, 0);
}

Test(fetch_limits, a_file_over_the_per_file_limit_fails_the_copy)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref, .max_file = 1000, .max_total = 1 << 30 };
	char p[128];

	fake_agent(big_file);
	cr_assert_eq(fetch_recv(sv[0], dfd, "t", &o), -EFBIG);
	cr_assert(strstr(o.err, "per-file limit"), "%s", o.err);
	snprintf(p, sizeof(p), "%s/t/big", dir);
	cr_assert_neq(access(p, F_OK), 0, "the oversized file was written");
	refusals_free(&ref);
}

static void warn_flood(int fd)
{
	static char msg[4000];

	memset(msg, 'w', sizeof(msg) - 1);
	entry(fd, AP_DIR, 0, "", NULL);
	for (int i = 0; i < 20000; i++)
		ap_write_frame(fd, AP_WARN, msg, sizeof(msg) - 1);
	ap_write_frame(fd, AP_END, NULL, 0);
}

Test(fetch_limits, a_flood_of_warnings_is_counted_not_kept)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref };
	size_t kept = 0;

	fake_agent(warn_flood);
	cr_assert_eq(fetch_recv(sv[0], dfd, "t", &o), 0, "%s", o.err);
	for (size_t i = 0; i < ref.n; i++)
		kept += strlen(ref.r[i].path) + strlen(ref.r[i].why);
	cr_assert_leq(kept, REFUSALS_MAX_BYTES, "%zu bytes of warnings kept", kept);
	cr_assert_eq(ref.n + ref.dropped, 20000);
	refusals_free(&ref);
}

/* Refused (inside .git) so nothing is created: only the count can stop them. */
static void million_dirs(int fd)
{
	char p[64];

	entry(fd, AP_DIR, 0, "", NULL);
	entry(fd, AP_DIR, 0, ".git", NULL);
	for (int i = 0; i < 1000001; i++) {
		snprintf(p, sizeof(p), ".git/d%d", i);
		entry(fd, AP_DIR, 0, p, NULL);
	}
	ap_write_frame(fd, AP_END, NULL, 0);
}

Test(fetch_limits, a_million_directories_hit_the_entry_limit)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref, .max_entries = 1000000 };
	long rss = maxrss_kb();

	fake_agent(million_dirs);
	cr_assert_eq(fetch_recv(sv[0], dfd, "t", &o), -EFBIG, "%s", o.err);
	cr_assert(strstr(o.err, "too many"), "%s", o.err);
	cr_assert_lt(maxrss_kb() - rss, 64 << 10, "memory grew by %ld KiB", maxrss_kb() - rss);
	refusals_free(&ref);
}

/* 15 levels of 255-byte names, then directories with ~3.9 KB paths each. */
static void long_dirs(int fd)
{
	char p[AP_PATH_MAX] = "";
	size_t n = 0;

	entry(fd, AP_DIR, 0, "", NULL);
	for (int level = 0; level < 15; level++) {
		if (n)
			p[n++] = '/';
		memset(p + n, 'a' + level, 255);
		n += 255;
		p[n] = 0;
		entry(fd, AP_DIR, 0, p, NULL);
	}
	for (int i = 0; i < 10000; i++) {
		snprintf(p + n, sizeof(p) - n, "/%d", i);
		entry(fd, AP_DIR, 0, p, NULL);
	}
	ap_write_frame(fd, AP_END, NULL, 0);
}

Test(fetch_limits, many_long_directory_paths_keep_memory_bounded)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref };
	long rss = maxrss_kb();

	fake_agent(long_dirs);
	cr_assert_eq(fetch_recv(sv[0], dfd, "t", &o), 0, "%s", o.err);
	/* Before: every directory's path was kept until the end (~40 MB here). */
	cr_assert_lt(maxrss_kb() - rss, 16 << 10, "memory grew by %ld KiB", maxrss_kb() - rss);
	refusals_free(&ref);
}

static void stall_mid_file(int fd)
{
	entry(fd, AP_DIR, 0, "", NULL);
	entry(fd, AP_FILE, 100, "f", NULL);
	ap_write_frame(fd, AP_DATA, "0123456789", 10);
	pause();
}

Test(fetch_limits, a_stall_mid_file_fails_by_the_deadline)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref, .idle_s = 1 };

	fake_agent(stall_mid_file);
	cr_assert_neq(fetch_recv(sv[0], dfd, "t", &o), 0);
	cr_assert(strstr(o.err, "sent nothing for 1 s"), "%s", o.err);
	refusals_free(&ref);
}

static void git_links(int fd)
{
	entry(fd, AP_DIR, 0, "", NULL);
	entry(fd, AP_DIR, 0, "sub", NULL);
	entry(fd, AP_SYMLINK, 0, "hooks", ".git/hooks");
	entry(fd, AP_SYMLINK, 0, "sub/cfg", "../.GIT/config");
	entry(fd, AP_SYMLINK, 0, "repo", ".git");
	entry(fd, AP_SYMLINK, 0, "fine", "sub");
	ap_write_frame(fd, AP_END, NULL, 0);
}

Test(fetch_limits, symlinks_into_git_are_refused_like_git)
{
	static const char *refused[] = { "hooks", "sub/cfg", "repo" };
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref };
	struct stat st;
	char p[128];

	fake_agent(git_links);
	cr_assert_eq(fetch_recv(sv[0], dfd, "t", &o), 0, "%s", o.err);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(p, sizeof(p), "%s/t/%s", dir, refused[i]);
		cr_expect_neq(lstat(p, &st), 0, "%s was created", refused[i]);
	}
	snprintf(p, sizeof(p), "%s/t/fine", dir);
	cr_expect_eq(lstat(p, &st), 0);
	cr_expect_eq(ref.n, 3);
	for (size_t i = 0; i < ref.n; i++)
		cr_expect(strstr(ref.r[i].why, "git"), "%s: %s", ref.r[i].path, ref.r[i].why);
	refusals_free(&ref);
}
