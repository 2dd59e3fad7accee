/*
 * The config's User resolved with the image's own passwd and group files
 * (images/oci_user.c), as runtimes do: names and numbers, either part.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "images/oci_user.h"

static const char *pw = "root:x:0:0:root:/root:/bin/sh\n"
			"broken line\n"
			"app:x:1234:5678::/srv:/bin/sh\n"
			"web:x:33:33:www:/var/www:/usr/sbin/nologin";
static const char *gr = "root:x:0:\nstaff:x:50:app\n";
static char err[256];

static int resolve(const char *u, uint32_t *uid, uint32_t *gid)
{
	err[0] = 0;
	return oci_user_resolve(u, pw, gr, uid, gid, err, sizeof(err));
}

Test(oci_user, names_and_numbers)
{
	uint32_t uid, gid;

	cr_assert_eq(resolve("app", &uid, &gid), 0, "%s", err);
	cr_assert_eq(uid, 1234);
	cr_assert_eq(gid, 5678, "the passwd entry's group");
	cr_assert_eq(resolve("web", &uid, &gid), 0, "the last line without a newline");
	cr_assert_eq(uid, 33);
	cr_assert_eq(resolve("1234", &uid, &gid), 0);
	cr_assert_eq(gid, 5678, "a listed uid takes its group");
	cr_assert_eq(resolve("4000", &uid, &gid), 0);
	cr_assert_eq(uid, 4000);
	cr_assert_eq(gid, 0, "an unlisted uid: group 0");
	cr_assert_eq(resolve("app:staff", &uid, &gid), 0);
	cr_assert_eq(gid, 50);
	cr_assert_eq(resolve("4000:7", &uid, &gid), 0);
	cr_assert_eq(gid, 7);
}

Test(oci_user, refusals_say_why)
{
	uint32_t uid, gid;

	cr_assert_eq(resolve("nobody", &uid, &gid), -ENOENT);
	cr_assert(strstr(err, "/etc/passwd"), "%s", err);
	cr_assert_eq(resolve("app:nogroup", &uid, &gid), -ENOENT);
	cr_assert(strstr(err, "/etc/group"), "%s", err);
	cr_assert_eq(resolve("app:", &uid, &gid), -EINVAL);
	cr_assert_eq(resolve(":5", &uid, &gid), -EINVAL);
	cr_assert_eq(resolve("a:b:c", &uid, &gid), -EINVAL);
	cr_assert_eq(resolve("4294967295", &uid, &gid), -ENOENT, "not a valid id, and no such name");
	cr_assert_eq(oci_user_resolve("app", NULL, NULL, &uid, &gid, err, sizeof(err)), -ENOENT,
		     "no passwd file");
	cr_assert_eq(oci_user_resolve("0", NULL, NULL, &uid, &gid, err, sizeof(err)), 0);
	cr_assert_eq(uid, 0);
}
