/* The path sanitiser: what a hostile guest's names may and may not become on the host. */
#include <criterion/criterion.h>
#include <string.h>

#include "guest/agent/proto.h"
#include "tools/sandbox/path_sanitize.h"

Test(promote_paths, plain_relative_paths_pass)
{
	cr_expect_null(ps_path_refusal("", 0));
	cr_expect_null(ps_path_refusal("a", 0));
	cr_expect_null(ps_path_refusal("src/main.c", 0));
	cr_expect_null(ps_path_refusal("with space/é.txt", 0));
	cr_expect_null(ps_path_refusal("..hidden/x..y", 0));
}

Test(promote_paths, escapes_are_refused_with_a_reason)
{
	cr_expect_str_eq(ps_path_refusal("/etc/passwd", 0), "absolute path");
	cr_expect_str_eq(ps_path_refusal("../x", 0), "'.' or '..' in the path");
	cr_expect_str_eq(ps_path_refusal("a/../../x", 0), "'.' or '..' in the path");
	cr_expect_str_eq(ps_path_refusal("a/./b", 0), "'.' or '..' in the path");
	cr_expect_str_eq(ps_path_refusal("a//b", 0), "empty path component");
	cr_expect_str_eq(ps_path_refusal("a/", 0), "empty path component");
}

Test(promote_paths, control_characters_are_refused)
{
	cr_expect_not_null(ps_path_refusal("evil\nname", 0));
	cr_expect_not_null(ps_path_refusal("dir/tab\there", 0));
	cr_expect_not_null(ps_path_refusal("esc\x1b[31m", 0));
	cr_expect_not_null(ps_path_refusal("del\x7f", 0));
}

Test(promote_paths, over_long_names_and_paths_are_refused)
{
	char name[300], path[5000];

	memset(name, 'n', 256);
	name[256] = 0;
	cr_expect_str_eq(ps_path_refusal(name, 0), "name too long");
	name[255] = 0;
	cr_expect_null(ps_path_refusal(name, 0));
	for (size_t i = 0; i < 4500; i += 2)
		memcpy(path + i, "d/", 2);
	path[4499] = 0;
	cr_expect_str_eq(ps_path_refusal(path, 0), "path too long");
	cr_expect_str_eq(ps_path_refusal("abcdef/ghi", 5), "path too long");
}

Test(promote_paths, symlinks_must_stay_inside_whatever_other_links_do)
{
	cr_expect(ap_link_inside("a", "b"));
	cr_expect(ap_link_inside("d/l", "../x"));
	cr_expect(ap_link_inside("d/e/l", "../../x/y"));
	cr_expect(ap_link_inside("loop", "loop"));
	cr_expect(ap_link_inside("l", "."));
	cr_expect_not(ap_link_inside("l", "/etc/passwd"));
	cr_expect_not(ap_link_inside("l", ".."));
	cr_expect_not(ap_link_inside("d/l", "../../x"));
	/* With "s -> .", "s/../x" leaves the tree: ".." after a name is refused. */
	cr_expect_not(ap_link_inside("t", "s/../x"));
	cr_expect_not(ap_link_inside("d/t", "x/../../y"));
	cr_expect_not(ap_link_inside("l", ""));
}

Test(promote_paths, git_metadata_in_any_case_at_any_depth)
{
	cr_expect(ps_is_git_meta(".git"));
	cr_expect(ps_is_git_meta(".git/hooks/pre-commit"));
	cr_expect(ps_is_git_meta("sub/.GIT/config"));
	cr_expect_not(ps_is_git_meta(".gitattributes"));
	cr_expect_not(ps_is_git_meta("a.git/x"));
	cr_expect_not(ps_is_git_meta("src/git"));
}

Test(promote_paths, escape_makes_names_printable)
{
	char out[64];

	ps_escape("a\nb\x1b[0m\\", out, sizeof(out));
	cr_expect_str_eq(out, "a\\nb\\x1b[0m\\\\");
	ps_escape("0123456789", out, 8);
	cr_expect_eq(strlen(out), 3);
	/* Not UTF-8, and C1 controls (U+009B is CSI): escaped; real UTF-8 kept. */
	ps_escape("a\xff\xc2\x9b[2Jé", out, sizeof(out));
	cr_expect_str_eq(out, "a\\xff\\xc2\\x9b[2Jé");
	ps_utf8_clean("new\nline\xfe", out, sizeof(out));
	cr_expect_str_eq(out, "new\nline\\xfe");
}
