/*
 * A store image's checksum in NAME.json (images/image_hash.c): recorded once,
 * the other fields kept, recomputed when the image is newer than its record,
 * refused when NAME.json is not a JSON object.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/sha256.h"
#include "images/image_hash.h"

static char dir[64], img[96], meta[96];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/mvm-imghash.XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(img, sizeof(img), "%s/x.ext4", dir);
	snprintf(meta, sizeof(meta), "%s/x.json", dir);
}

static void teardown(void)
{
	unlink(img);
	unlink(meta);
	rmdir(dir);
}

static void write_img(const char *text)
{
	cr_assert_eq(file_write_atomic(img, text), 0);
	cr_assert_eq(truncate(img, 1 << 20), 0);	/* a hole after the text: hashed as zeros */
}

static char *field(const char *name)
{
	char *text = file_read_text(meta, 65536), *v = NULL;
	cJSON *j = cJSON_Parse(text);
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, name);

	if (cJSON_IsString(s))
		v = strdup(s->valuestring);
	cJSON_Delete(j);
	free(text);
	return v;
}

static void expect_sha_of_img(void)
{
	char want[SHA256_HEX], *got = field("sha256");
	int fd = open(img, O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(sha256_fd_hex(fd, want), 0);
	close(fd);
	cr_assert(got, "no sha256 recorded");
	cr_assert_str_eq(got, want);
	free(got);
}

Test(image_hash, records_once_and_keeps_the_other_fields, .init = setup, .fini = teardown)
{
	char err[256] = "", *name;
	struct stat a, b;

	write_img("image one");
	cr_assert_eq(file_write_atomic(meta, "{\"name\": \"x\", \"inputs\": \"abc\"}"), 0);
	cr_assert_eq(image_record_sha256(img, meta, err, sizeof(err)), 0, "%s", err);
	expect_sha_of_img();
	name = field("inputs");
	cr_assert_str_eq(name, "abc");
	free(name);
	stat(meta, &a);
	cr_assert_eq(a.st_mode & 0777, 0644);
	cr_assert_eq(image_record_sha256(img, meta, err, sizeof(err)), 0, "%s", err);
	stat(meta, &b);
	cr_assert_eq(a.st_ino, b.st_ino, "a record that holds was rewritten");
}

Test(image_hash, an_image_newer_than_its_record_is_hashed_again, .init = setup, .fini = teardown)
{
	char err[256] = "";
	struct timespec past[2] = { { .tv_sec = 1000000 }, { .tv_sec = 1000000 } };

	write_img("image one");
	cr_assert_eq(file_write_atomic(meta, "{\"name\": \"x\"}"), 0);
	cr_assert_eq(image_record_sha256(img, meta, err, sizeof(err)), 0, "%s", err);
	write_img("image two");
	cr_assert_eq(utimensat(AT_FDCWD, meta, past, 0), 0);	/* the record predates the image */
	cr_assert_eq(image_record_sha256(img, meta, err, sizeof(err)), 0, "%s", err);
	expect_sha_of_img();
}

Test(image_hash, a_record_that_is_not_an_object_is_refused, .init = setup, .fini = teardown)
{
	char err[256] = "";

	write_img("image one");
	cr_assert_eq(file_write_atomic(meta, "[1, 2]"), 0);
	cr_assert_neq(image_record_sha256(img, meta, err, sizeof(err)), 0);
	cr_assert(strstr(err, "not a JSON object"), "%s", err);
	cr_assert_eq(image_record_sha256(img, "/nonexistent/x.json", err, sizeof(err)), -ENOENT);
}
