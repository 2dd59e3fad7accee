/*
 * The state directory check behind `mvm create` and `mvm run`: a directory
 * whose file system cannot hold unix sockets is named, with what to do,
 * before a sandbox is half made there. /sys/kernel stands in for 9p: bind()
 * fails there for everyone, root included.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sock_probe.h"

Test(sock_probe, a_local_directory_passes_and_is_left_clean)
{
	char dir[] = "/tmp/mvm-sockprobe-XXXXXX", err[512] = "";
	struct dirent *e;
	DIR *d;
	int n = 0;

	cr_assert_not_null(mkdtemp(dir));
	cr_expect_eq(sock_probe_dir(dir, err, sizeof(err)), 0, "%s", err);
	d = opendir(dir);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || strncmp(e->d_name, ".mvm", 4) == 0;
	closedir(d);
	cr_expect_eq(n, 0, "the probe socket was removed");
	rmdir(dir);
}

Test(sock_probe, a_directory_without_socket_support_is_named_with_the_fix)
{
	char err[512] = "";

	if (access("/sys/kernel", F_OK))
		cr_skip_test("no sysfs");
	cr_expect_lt(sock_probe_dir("/sys/kernel", err, sizeof(err)), 0);
	cr_expect_neq(strstr(err, "/sys/kernel cannot hold the unix sockets"), NULL, "%s", err);
	cr_expect_neq(strstr(err, "bind"), NULL, "%s", err);
	cr_expect_neq(strstr(err, "MVM_STATE_DIR"), NULL, "%s", err);
}

Test(sock_probe, prepare_root_refuses_such_a_state_dir_before_creating_anything)
{
	char err[512] = "", dir[PATH_MAX];

	if (access("/sys/kernel", F_OK))
		cr_skip_test("no sysfs");
	setenv("MVM_STATE_DIR", "/sys/kernel", 1);
	cr_expect_lt(sb_prepare_root(err, sizeof(err)), 0);
	cr_expect_neq(strstr(err, "MVM_STATE_DIR"), NULL, "%s", err);
	cr_expect_eq(sb_path("probe-name", NULL, dir, sizeof(dir)), 0);
	cr_expect_neq(access(dir, F_OK), 0);
}

/* A VMM that stopped accepting (hung, or paused in a debugger): its backlog
 * fills, and a CLI's connect gives up at its deadline instead of hanging. */
Test(sock_probe, connect_to_a_listener_that_never_accepts_has_a_deadline, .timeout = 60)
{
	char dir[] = "/tmp/mvm-sockprobe-XXXXXX", path[128];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int lfd, fds[8], n = 0, ret = 0;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/api.sock", dir);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(lfd, 0), 0);
	/* Fill the backlog (a backlog of 0 still takes one or two). */
	while (n < 8 && (ret = unix_connect_by(path, 200)) >= 0)
		fds[n++] = ret;
	cr_assert_lt(n, 8, "the backlog never filled");
	/* It returns, and says why: -ETIMEDOUT. A connect that never gave
	 * up would hang and meet the test's .timeout (a hang guard). */
	ret = unix_connect_by(path, 300);
	cr_expect_eq(ret, -ETIMEDOUT);
	while (n)
		close(fds[--n]);
	close(lfd);
	unlink(path);
	rmdir(dir);
}
