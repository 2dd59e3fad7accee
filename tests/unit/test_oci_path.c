/*
 * Names inside OCI layers (images/oci_path.c): cleaned to a relative path,
 * the hostile ones refused, whiteouts and opaque markers recognised.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "images/oci_path.h"

static int classify(const char *in, char *out, enum oci_path_kind *k)
{
	const char *why = NULL;
	int ret = oci_path_classify(in, out, OCI_PATH_MAX, k, &why);

	cr_assert(why);
	if (ret)
		cr_assert(*why, "a refusal says why (%s)", in);
	return ret;
}

Test(oci_path, cleans_what_tar_writers_produce)
{
	static const char *in[] = { "./etc/passwd", "etc//passwd", "etc/./passwd", "etc/passwd/",
				    "././etc/passwd" };
	char out[OCI_PATH_MAX];
	enum oci_path_kind k;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		cr_assert_eq(classify(in[i], out, &k), 0, "%s", in[i]);
		cr_assert_str_eq(out, "etc/passwd", "%s", in[i]);
		cr_assert_eq(k, OCI_PATH_ENTRY);
	}
	cr_assert_eq(classify("./", out, &k), 0);
	cr_assert_eq(k, OCI_PATH_ROOT);
	cr_assert_str_eq(out, "");
}

Test(oci_path, refuses_escapes_and_odd_names)
{
	static const char *bad[] = { "/etc/passwd", "../x", "a/../../x", "a/..", "..",
				     "a/b\nc", "a\tb", "x/\x7f", "a/.wh.b/c", "a/.wh..wh.plnk",
				     "a/.wh.", "a/.wh..", "a/.wh..." };
	char out[OCI_PATH_MAX], big[OCI_PATH_MAX + 16];
	enum oci_path_kind k;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(classify(bad[i], out, &k), -EINVAL, "%s accepted", bad[i]);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	cr_assert_eq(classify(big, out, &k), -EINVAL, "a component over 255 bytes");
	for (size_t i = 0; i + 2 < sizeof(big); i += 2)
		big[i] = 'a', big[i + 1] = '/';
	cr_assert_eq(classify(big, out, &k), -EINVAL, "over %d components", OCI_DEPTH_MAX);
	/* "..." is a name like any other. */
	cr_assert_eq(classify("a/...", out, &k), 0);
}

Test(oci_path, whiteouts_name_what_they_delete)
{
	char out[OCI_PATH_MAX];
	enum oci_path_kind k;

	cr_assert_eq(classify("./usr/.wh.lib", out, &k), 0);
	cr_assert_eq(k, OCI_PATH_WHITEOUT);
	cr_assert_str_eq(out, "usr/lib");
	cr_assert_eq(classify(".wh.top", out, &k), 0);
	cr_assert_eq(k, OCI_PATH_WHITEOUT);
	cr_assert_str_eq(out, "top");
	cr_assert_eq(classify("etc/conf.d/.wh..wh..opq", out, &k), 0);
	cr_assert_eq(k, OCI_PATH_OPAQUE);
	cr_assert_str_eq(out, "etc/conf.d");
	cr_assert_eq(classify(".wh..wh..opq", out, &k), 0);
	cr_assert_eq(k, OCI_PATH_OPAQUE);
	cr_assert_str_eq(out, "");
	/* Only the prefix makes a whiteout. */
	cr_assert_eq(classify("a/x.wh.b", out, &k), 0);
	cr_assert_eq(k, OCI_PATH_ENTRY);
}
