/* The agent wire protocol: round trips, truncated, oversized and hostile frames. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/proto.h"

static uint8_t buf[AP_MAX_PAYLOAD + 16];

Test(agent_proto, exec_round_trip)
{
	char *argv[] = { "sh", "-c", "echo hi", NULL };
	char *env[] = { "A=1", "B=x=y", NULL };
	struct ap_exec e = { .flags = AP_EXEC_PTY | AP_EXEC_STDIN, .uid = 1000,
			     .timeout_ms = 5000, .rows = 24, .cols = 80, .cwd = "/tmp",
			     .argc = 3, .argv = argv, .envc = 2, .env = env }, d;
	long n = ap_exec_encode(&e, buf, sizeof(buf));

	cr_assert_gt(n, 0);
	cr_assert_eq(ap_exec_decode(buf, (size_t)n, &d), 0);
	cr_assert_eq(d.flags, e.flags);
	cr_assert_eq(d.uid, 1000);
	cr_assert_eq(d.timeout_ms, 5000);
	cr_assert_eq(d.rows, 24);
	cr_assert_eq(d.cols, 80);
	cr_assert_str_eq(d.cwd, "/tmp");
	cr_assert_eq(d.argc, 3);
	cr_assert_str_eq(d.argv[2], "echo hi");
	cr_assert_null(d.argv[3]);
	cr_assert_str_eq(d.env[1], "B=x=y");
	cr_assert_null(d.env[2]);
	ap_exec_free(&d);
}

Test(agent_proto, exec_every_truncation_rejected)
{
	char *argv[] = { "true", NULL };
	struct ap_exec e = { .cwd = "", .argc = 1, .argv = argv }, d;
	long n = ap_exec_encode(&e, buf, sizeof(buf));

	cr_assert_gt(n, 0);
	for (long cut = 0; cut < n; cut++)
		cr_assert_eq(ap_exec_decode(buf, (size_t)cut, &d), -EPROTO, "cut at %ld", cut);
	buf[n] = 0;
	cr_assert_eq(ap_exec_decode(buf, (size_t)n + 1, &d), -EPROTO, "trailing byte");
}

Test(agent_proto, exec_hostile_fields)
{
	struct ap_wr w = { .buf = buf, .cap = sizeof(buf) };
	struct ap_exec d;

	/* Unknown flag. */
	ap_put_u32(&w, 0x80);
	cr_assert_eq(ap_exec_decode(buf, w.len, &d), -EPROTO);
	/* A huge argc with no bytes behind it must not allocate or read. */
	w = (struct ap_wr){ .buf = buf, .cap = sizeof(buf) };
	ap_put_u32(&w, 0); ap_put_u32(&w, 0); ap_put_u32(&w, 0); ap_put_u16(&w, 0); ap_put_u16(&w, 0);
	ap_put_str(&w, "");
	ap_put_u32(&w, 0xffffffffu);
	cr_assert_eq(ap_exec_decode(buf, w.len, &d), -EPROTO);
	/* A string length past the payload. */
	w = (struct ap_wr){ .buf = buf, .cap = sizeof(buf) };
	ap_put_u32(&w, 0); ap_put_u32(&w, 0); ap_put_u32(&w, 0); ap_put_u16(&w, 0); ap_put_u16(&w, 0);
	ap_put_u32(&w, 1000);
	cr_assert_eq(ap_exec_decode(buf, w.len, &d), -EPROTO);
	/* No argv, empty argv[0], NUL inside a string, env without '='. */
	char *none[] = { NULL }, *empty[] = { "", NULL }, *ok[] = { "x", NULL }, *badenv[] = { "NOEQ", NULL };
	struct ap_exec e = { .cwd = "", .argv = none };
	long n = ap_exec_encode(&e, buf, sizeof(buf));
	cr_assert_eq(ap_exec_decode(buf, (size_t)n, &d), -EPROTO);
	e.argc = 1; e.argv = empty;
	n = ap_exec_encode(&e, buf, sizeof(buf));
	cr_assert_eq(ap_exec_decode(buf, (size_t)n, &d), -EPROTO);
	e.argv = ok; e.envc = 1; e.env = badenv;
	n = ap_exec_encode(&e, buf, sizeof(buf));
	cr_assert_eq(ap_exec_decode(buf, (size_t)n, &d), -EPROTO);
	e.envc = 0;
	n = ap_exec_encode(&e, buf, sizeof(buf));
	cr_assert_eq(ap_exec_decode(buf, (size_t)n, &d), 0);
	ap_exec_free(&d);
	/* argv[0] "x" is at n-5 (u32 envc=0 follows it); make it a NUL. */
	buf[n - 5] = 0;
	cr_assert_eq(ap_exec_decode(buf, (size_t)n, &d), -EPROTO);
}

Test(agent_proto, header_checks)
{
	uint8_t h[AP_HDR_SIZE];
	struct ap_hdr d;

	ap_hdr_encode(h, AP_STDOUT, 5);
	cr_assert_eq(ap_hdr_decode(h, 7, &d), -EAGAIN);
	cr_assert_eq(ap_hdr_decode(h, 8, &d), 0);
	cr_assert_eq(d.type, AP_STDOUT);
	cr_assert_eq(d.len, 5);
	ap_hdr_encode(h, AP_STDOUT, AP_MAX_PAYLOAD + 1);
	cr_assert_eq(ap_hdr_decode(h, 8, &d), -EMSGSIZE, "oversized frame");
	ap_hdr_encode(h, 0, 1);
	cr_assert_eq(ap_hdr_decode(h, 8, &d), -EPROTO, "type 0");
	ap_hdr_encode(h, AP_TYPE_MAX + 1, 1);
	cr_assert_eq(ap_hdr_decode(h, 8, &d), -EPROTO, "unknown type");
	ap_hdr_encode(h, AP_OK, 0);
	h[7] = 1;
	cr_assert_eq(ap_hdr_decode(h, 8, &d), -EPROTO, "reserved bits");
}

Test(agent_proto, frame_size_incremental)
{
	uint8_t f[AP_HDR_SIZE + 3];

	ap_hdr_encode(f, AP_DATA, 3);
	memcpy(f + AP_HDR_SIZE, "abc", 3);
	for (size_t n = 0; n < sizeof(f); n++)
		cr_assert_eq(ap_frame_size(f, n), 0, "need more at %zu", n);
	cr_assert_eq(ap_frame_size(f, sizeof(f)), (long)sizeof(f));
	ap_hdr_encode(f, AP_DATA, 0xffffffffu);
	cr_assert_eq(ap_frame_size(f, sizeof(f)), -EMSGSIZE);
}

static int pair[2];

static void make_pair(void)
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
}

Test(agent_proto, read_frame_truncated_and_oversized, .init = make_pair)
{
	static uint8_t rb[1024 + 1];
	uint8_t h[AP_HDR_SIZE];
	struct ap_hdr d;

	/* A frame cut inside its payload is -EIO, not a short success. */
	ap_hdr_encode(h, AP_STDOUT, 10);
	cr_assert_eq(write(pair[1], h, sizeof(h)), (ssize_t)sizeof(h));
	cr_assert_eq(write(pair[1], "abc", 3), 3);
	close(pair[1]);
	cr_assert_eq(ap_read_frame(pair[0], &d, rb, 1024), -EIO);
	close(pair[0]);

	/* A frame larger than the reader's buffer is refused before reading it. */
	make_pair();
	ap_hdr_encode(h, AP_STDOUT, 2048);
	cr_assert_eq(write(pair[1], h, sizeof(h)), (ssize_t)sizeof(h));
	cr_assert_eq(ap_read_frame(pair[0], &d, rb, 1024), -EMSGSIZE);
	close(pair[0]);
	close(pair[1]);

	/* A header cut short is -EIO; clean EOF is 0; a good frame is 1. */
	make_pair();
	cr_assert_eq(ap_write_frame(pair[1], AP_OK, NULL, 0), 0);
	cr_assert_eq(write(pair[1], h, 3), 3);
	close(pair[1]);
	cr_assert_eq(ap_read_frame(pair[0], &d, rb, 1024), 1);
	cr_assert_eq(d.type, AP_OK);
	cr_assert_eq(ap_read_frame(pair[0], &d, rb, 1024), -EIO);
	close(pair[0]);
	make_pair();
	close(pair[1]);
	cr_assert_eq(ap_read_frame(pair[0], &d, rb, 1024), 0);
	close(pair[0]);
}

Test(agent_proto, entry_round_trip_and_paths)
{
	struct ap_entry e = { .kind = AP_FILE, .mode = 04755, .size = 1ull << 40 }, d;
	long n;

	strcpy(e.path, "a/b/c.txt");
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_assert_eq(ap_entry_decode(buf, (size_t)n, &d), 0);
	cr_assert_eq(d.size, 1ull << 40);
	cr_assert_eq(d.mode, 04755);
	cr_assert_str_eq(d.path, "a/b/c.txt");
	static const char *bad[] = { "/etc/passwd", "..", "a/../../x", "a//b", "./a", "a/", "a/." };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(e.path, bad[i]);
		n = ap_entry_encode(&e, buf, sizeof(buf));
		cr_assert_eq(ap_entry_decode(buf, (size_t)n, &d), -EPROTO, "%s accepted", bad[i]);
	}
	e.kind = AP_DIR;
	strcpy(e.path, "d");
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_assert_eq(ap_entry_decode(buf, (size_t)n, &d), -EPROTO, "dir with a size");
	e.kind = 9;
	e.size = 0;
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_assert_eq(ap_entry_decode(buf, (size_t)n, &d), -EPROTO, "device node kind");
}

Test(agent_proto, link_inside)
{
	cr_assert(ap_link_inside("a/b", "c"));
	cr_assert(ap_link_inside("a/b", "../c"));
	cr_assert_not(ap_link_inside("a/b", "../../c"));
	cr_assert_not(ap_link_inside("b", "../c"));
	cr_assert_not(ap_link_inside("b", "/etc/passwd"));
	cr_assert_not(ap_link_inside("a/b", "x/../../../c"));
	/* If a/x -> "..", x/.. is above the root: ".." after a name is refused. */
	cr_assert_not(ap_link_inside("a/b", "./x/../y"));
	cr_assert_not(ap_link_inside("t", "s/../x"));
	cr_assert(ap_link_inside("a/b/c", "../../x/y"));
}

Test(agent_proto, exit_codec)
{
	struct ap_exit x = { AP_SIGNALED, 9, 1 }, d;
	long n = ap_exit_encode(&x, buf, sizeof(buf));

	cr_assert_eq(ap_exit_decode(buf, (size_t)n, &d), 0);
	cr_assert_eq(d.code, 9);
	cr_assert_eq(d.timed_out, 1);
	cr_assert_eq(ap_exit_decode(buf, (size_t)n - 1, &d), -EPROTO);
	x.code = 300;
	n = ap_exit_encode(&x, buf, sizeof(buf));
	cr_assert_eq(ap_exit_decode(buf, (size_t)n, &d), -EPROTO);
}
