/*
 * The fetch path of diff/export/promote on a hostile tree, end to end
 * without a VM: the agent's sender (per-file limit, skipped entries
 * reported, hard links left out) feeding the host receiver with fetch's
 * rules. Nothing may land outside, nothing special may be created, and
 * every refusal must be listed with its reason.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/sandbox/fetch.h"

static char dir[64];

static void sh(const char *cmd)
{
	char full[4096];

	snprintf(full, sizeof(full), "cd %s && { %s ; }", dir, cmd);
	cr_assert_eq(system(full), 0, "failed: %s", cmd);
}

static void setup(void)
{
	strcpy(dir, "/tmp/mvm-fetch-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	sh("mkdir -p g/src g/.git/hooks out && echo ok > g/src/ok && echo 'touch /tmp/pwned' > g/.git/hooks/pre-commit &&"
	   "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > g/.git/config && echo 'x filter=evil' > g/.gitattributes &&"
	   "ln -s /etc/passwd g/passwd && ln -s loop g/loop && ln -s . g/self && ln -s self/../escape g/sneaky &&"
	   "mkfifo g/fifo && truncate -s 10G g/sparse && echo a > g/hard1 && ln g/hard1 g/hard2 &&"
	   "printf 'n\\n' > \"g/new$(printf '\\nline')\" && mkdir \"g/dir$(printf '\\t')tab\" && echo in > \"g/dir$(printf '\\t')tab/f\" &&"
	   "echo precious > escape");
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

TestSuite(promote_fetch, .init = setup, .fini = teardown);

static const char *why(const struct refusals *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->r[i].path, path))
			return l->r[i].why;
	return NULL;
}

Test(promote_fetch, hostile_tree_is_fetched_safely_and_refusals_are_listed)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .max_file = 1 << 20, .max_total = 1 << 30, .max_entries = 1000,
				.refused = &ref };
	char src[128], p[256];
	struct stat st;
	int sv[2], dfd, status;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	snprintf(src, sizeof(src), "%s/g", dir);
	pid = fork();
	if (pid == 0) {
		struct tree_opts t = { .max_file = 1 << 20, .report_skips = true, .skip_hardlinks = true };

		close(sv[0]);
		_exit(tree_send(sv[1], src, &t) ? 1 : 0);
	}
	close(sv[1]);
	snprintf(p, sizeof(p), "%s/out", dir);
	dfd = open(p, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(fetch_recv(sv[0], dfd, "t", &o), 0, "%s", o.err);
	waitpid(pid, &status, 0);
	cr_expect_eq(WEXITSTATUS(status), 0);
	close(dfd);
	close(sv[0]);

	/* What is fine arrives. */
	sh("test \"$(cat out/t/src/ok)\" = ok && test \"$(readlink out/t/loop)\" = loop && test -f out/t/.gitattributes");
	/* What is not, does not, and is listed with a reason. */
	cr_expect(why(&ref, ".git") && strstr(why(&ref, ".git"), "git metadata"));
	cr_expect_null(why(&ref, ".git/hooks"), "a refused directory's contents are not listed one by one");
	cr_expect(why(&ref, "passwd") && strstr(why(&ref, "passwd"), "outside"));
	cr_expect(why(&ref, "sneaky") && strstr(why(&ref, "sneaky"), "outside"), "s -> ., t -> s/../x");
	cr_expect(why(&ref, "fifo") && strstr(why(&ref, "fifo"), "FIFO"));
	cr_expect(why(&ref, "sparse") && strstr(why(&ref, "sparse"), "per-file limit"));
	cr_expect(why(&ref, "hard1") && strstr(why(&ref, "hard1"), "hard link"));
	cr_expect(why(&ref, "new\nline") && strstr(why(&ref, "new\nline"), "control character"));
	cr_expect(why(&ref, "dir\ttab") != NULL);
	cr_expect_null(why(&ref, "dir\ttab/f"));
	cr_expect_neq(lstat(strcat(strcpy(p, dir), "/out/t/.git"), &st), 0);
	cr_expect_neq(lstat(strcat(strcpy(p, dir), "/out/t/passwd"), &st), 0);
	cr_expect_neq(lstat(strcat(strcpy(p, dir), "/out/t/sneaky"), &st), 0);
	cr_expect_neq(lstat(strcat(strcpy(p, dir), "/out/t/fifo"), &st), 0);
	cr_expect_neq(lstat(strcat(strcpy(p, dir), "/out/t/sparse"), &st), 0);
	cr_expect_neq(lstat(strcat(strcpy(p, dir), "/out/t/hard2"), &st), 0);
	sh("test \"$(cat escape)\" = precious && test \"$(ls out)\" = t");
	refusals_free(&ref);
}

Test(promote_fetch, total_limit_fails_the_fetch)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .max_total = 2, .refused = &ref };
	char src[128], p[256];
	int sv[2], dfd;
	pid_t pid;

	sh("rm -rf g/sparse g/fifo && echo 0123456789 > g/big");
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	snprintf(src, sizeof(src), "%s/g", dir);
	pid = fork();
	if (pid == 0) {
		struct tree_opts t = { .report_skips = true };

		close(sv[0]);
		tree_send(sv[1], src, &t);
		_exit(0);
	}
	close(sv[1]);
	snprintf(p, sizeof(p), "%s/out", dir);
	dfd = open(p, O_RDONLY | O_DIRECTORY);
	cr_expect_neq(fetch_recv(sv[0], dfd, "t", &o), 0);
	cr_expect(strstr(o.err, "size limit"), "%s", o.err);
	close(dfd);
	close(sv[0]);
	waitpid(pid, NULL, 0);
	refusals_free(&ref);
}

Test(promote_fetch, skipped_entries_round_trip_and_are_checked)
{
	struct ap_entry e = { .kind = AP_SKIPPED, .size = 10ull << 30 }, d;
	uint8_t buf[2 * AP_PATH_MAX + 64];
	long n;

	strcpy(e.path, "dir/sparse");
	strcpy(e.target, "larger than the per-file limit");
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	cr_assert_eq(ap_entry_decode(buf, (size_t)n, &d), 0);
	cr_expect_eq(d.kind, AP_SKIPPED);
	cr_expect_eq(d.size, 10ull << 30);
	cr_expect_str_eq(d.target, "larger than the per-file limit");
	/* A skipped entry needs a reason and a safe path, like any other. */
	e.target[0] = 0;
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_expect_neq(ap_entry_decode(buf, (size_t)n, &d), 0);
	strcpy(e.target, "x");
	strcpy(e.path, "../escape");
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_expect_neq(ap_entry_decode(buf, (size_t)n, &d), 0);
}

Test(promote_fetch, skipped_root_is_an_error)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref };
	struct ap_entry e = { .kind = AP_SKIPPED };
	uint8_t buf[2 * AP_PATH_MAX + 64];
	char p[256];
	int sv[2], dfd;
	long n;

	strcpy(e.target, "a FIFO");
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(ap_write_frame(sv[1], AP_ENTRY, buf, (size_t)n), 0);
	cr_assert_eq(ap_write_frame(sv[1], AP_END, NULL, 0), 0);
	snprintf(p, sizeof(p), "%s/out", dir);
	dfd = open(p, O_RDONLY | O_DIRECTORY);
	cr_expect_neq(fetch_recv(sv[0], dfd, "t", &o), 0);
	cr_expect(strstr(o.err, "left out the root"), "%s", o.err);
	close(dfd);
	close(sv[0]);
	close(sv[1]);
	refusals_free(&ref);
}

Test(promote_fetch, a_silent_sender_fails_the_fetch)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .refused = &ref, .idle_s = 1 };
	struct ap_entry e = { .kind = AP_DIR, .mode = 0755 };
	uint8_t buf[2 * AP_PATH_MAX + 64];
	char p[256];
	int sv[2], dfd;
	long n = ap_entry_encode(&e, buf, sizeof(buf));

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(ap_write_frame(sv[1], AP_ENTRY, buf, (size_t)n), 0);
	snprintf(p, sizeof(p), "%s/out", dir);
	dfd = open(p, O_RDONLY | O_DIRECTORY);
	cr_expect_neq(fetch_recv(sv[0], dfd, "t", &o), 0);
	cr_expect(strstr(o.err, "sent nothing for 1 s"), "%s", o.err);
	close(dfd);
	close(sv[0]);
	close(sv[1]);
	refusals_free(&ref);
}
