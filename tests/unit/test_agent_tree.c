/* Tree transfer receiver against a hostile sender: nothing may land outside the destination. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "guest/agent/tree.h"

static char dir[64];
static int sv[2], dfd;

static void setup(void)
{
	strcpy(dir, "/tmp/mvm-tree-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	int big = 4 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
}

static void teardown(void)
{
	char cmd[128];

	close(sv[0]);
	close(sv[1]);
	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

static void entry(uint32_t kind, uint32_t mode, uint64_t size, const char *path, const char *target)
{
	uint8_t buf[2 * AP_PATH_MAX + 64];
	struct ap_wr w = { .buf = buf, .cap = sizeof(buf) };

	/* Encoded by hand: the real encoder would not produce some of these. */
	ap_put_u32(&w, kind);
	ap_put_u32(&w, mode);
	ap_put_u64(&w, size);
	ap_put_str(&w, path);
	ap_put_str(&w, target ? target : "");
	cr_assert_eq(ap_write_frame(sv[0], AP_ENTRY, buf, w.len), 0);
}

static void data(const char *s)
{
	cr_assert_eq(ap_write_frame(sv[0], AP_DATA, s, strlen(s)), 0);
}

static void end(void)
{
	cr_assert_eq(ap_write_frame(sv[0], AP_END, NULL, 0), 0);
}

static int recv_into(const char *name, uint64_t max)
{
	struct tree_opts o = { .max_bytes = max };

	shutdown(sv[0], SHUT_WR);
	return tree_recv(sv[1], dfd, name, &o);
}

static bool exists(const char *rel)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return lstat(p, &st) == 0;
}

TestSuite(agent_tree, .init = setup, .fini = teardown);

Test(agent_tree, good_tree)
{
	entry(AP_DIR, 0755, 0, "", NULL);
	entry(AP_DIR, 0700, 0, "d", NULL);
	entry(AP_FILE, 0640, 5, "d/f", NULL);
	data("hel");
	data("lo");
	entry(AP_SYMLINK, 0777, 0, "d/l", "f");
	end();
	cr_assert_eq(recv_into("t", 0), 0);
	cr_assert(exists("t/d/f"));
	cr_assert(exists("t/d/l"));
}

Test(agent_tree, dotdot_path_refused)
{
	entry(AP_DIR, 0755, 0, "", NULL);
	entry(AP_FILE, 0644, 1, "../evil", NULL);
	data("x");
	end();
	cr_assert_neq(recv_into("t", 0), 0);
	cr_assert_not(exists("evil"));
}

Test(agent_tree, absolute_path_refused)
{
	entry(AP_DIR, 0755, 0, "", NULL);
	entry(AP_FILE, 0644, 1, "/tmp/mvm-tree-evil", NULL);
	data("x");
	end();
	cr_assert_neq(recv_into("t", 0), 0);
	cr_assert_neq(access("/tmp/mvm-tree-evil", F_OK), 0);
}

Test(agent_tree, no_write_through_inside_symlink)
{
	/* A link that stays inside is kept, but is never followed by later entries. */
	entry(AP_DIR, 0755, 0, "", NULL);
	entry(AP_DIR, 0755, 0, "d", NULL);
	entry(AP_SYMLINK, 0777, 0, "l", "d");
	entry(AP_FILE, 0644, 1, "l/x", NULL);
	data("x");
	end();
	cr_assert_neq(recv_into("t", 0), 0);
	cr_assert_not(exists("t/d/x"));
}

Test(agent_tree, outside_symlink_skipped_then_unused)
{
	entry(AP_DIR, 0755, 0, "", NULL);
	entry(AP_SYMLINK, 0777, 0, "out", "/tmp");
	entry(AP_SYMLINK, 0777, 0, "up", "../..");
	entry(AP_FILE, 0644, 1, "out/mvm-tree-evil2", NULL);
	data("x");
	end();
	cr_assert_neq(recv_into("t", 0), 0);
	cr_assert_not(exists("t/out"));
	cr_assert_not(exists("t/up"));
	cr_assert_neq(access("/tmp/mvm-tree-evil2", F_OK), 0);
}

Test(agent_tree, extra_data_and_limits)
{
	entry(AP_FILE, 0644, 2, "", NULL);
	data("abc");		/* more than announced */
	end();
	cr_assert_eq(recv_into("f", 0), -EPROTO);
}

Test(agent_tree, size_limit)
{
	entry(AP_FILE, 0644, 10, "", NULL);
	data("0123456789");
	end();
	cr_assert_eq(recv_into("f", 9), -EFBIG);
	cr_assert_not(exists("f"));
}

Test(agent_tree, existing_fifo_not_opened)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/f", dir);
	cr_assert_eq(mkfifo(p, 0600), 0);
	entry(AP_FILE, 0644, 1, "", NULL);
	data("x");
	end();
	cr_assert_eq(recv_into("f", 0), -EEXIST, "must refuse, not block on the FIFO");
}

Test(agent_tree, setuid_dropped_on_host)
{
	char p[128];
	struct stat st;

	entry(AP_FILE, 04755, 1, "", NULL);
	data("x");
	end();
	cr_assert_eq(recv_into("f", 0), 0);
	snprintf(p, sizeof(p), "%s/f", dir);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
}

Test(agent_tree, error_frame_from_sender)
{
	entry(AP_DIR, 0755, 0, "", NULL);
	cr_assert_eq(ap_write_frame(sv[0], AP_ERROR, "disk on fire", 12), 0);
	struct tree_opts o = { 0 };
	shutdown(sv[0], SHUT_WR);
	cr_assert_eq(tree_recv(sv[1], dfd, "t", &o), -EREMOTEIO);
	cr_assert_str_eq(o.err, "disk on fire");
}

Test(agent_tree, truncated_stream)
{
	entry(AP_DIR, 0755, 0, "", NULL);
	entry(AP_FILE, 0644, 100, "f", NULL);
	data("short");
	cr_assert_neq(recv_into("t", 0), 0);
}

Test(agent_tree, entry_limit)
{
	struct tree_opts o = { .max_entries = 3 };

	entry(AP_DIR, 0755, 0, "", NULL);
	entry(AP_DIR, 0755, 0, "a", NULL);
	entry(AP_DIR, 0755, 0, "b", NULL);
	entry(AP_DIR, 0755, 0, "c", NULL);
	end();
	shutdown(sv[0], SHUT_WR);
	cr_assert_eq(tree_recv(sv[1], dfd, "t", &o), -EFBIG);
	cr_assert_not(exists("t/c"));
}
