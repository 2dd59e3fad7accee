/* events.jsonl: every event kind, from the code that makes it, against the one schema;
 * and the capped, rotating writer behind it and console.log. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/events.h"
#include "common/rotlog.h"
#include "devices/netpolicy/net_filter.h"
#include "tools/sandbox/sandbox_vmm.h"
#include "tools/sandbox/snap_api.h"

static char dir[64], path[128];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/mvm-ev-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	unsetenv("MVM_LOG_MAX");
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

static off_t size_of(const char *p)
{
	struct stat st;

	return stat(p, &st) ? -1 : st.st_size;
}

/* "2026-12-04T20:31:12.123Z" */
static bool rfc3339_ms(const char *t)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";

	if (strlen(t) != sizeof(pat) - 1)
		return false;
	for (size_t i = 0; pat[i]; i++)
		if (pat[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != pat[i])
			return false;
	return true;
}

/* Each line of @p parses, matches the schema and has an RFC 3339 time;
 * returns how many lines of type @type it holds. */
static int check_file(const char *p, const char *type)
{
	char line[EVENT_LINE_MAX + 2], err[128];
	FILE *f = fopen(p, "r");
	int n = 0;

	cr_assert_not_null(f, "%s", p);
	while (fgets(line, sizeof(line), f)) {
		cJSON *ev = cJSON_Parse(line);

		cr_assert_not_null(ev, "not JSON: %s", line);
		cr_assert_eq(event_check(ev, err, sizeof(err)), 0, "%s: %s", err, line);
		cr_assert(rfc3339_ms(cJSON_GetObjectItem(ev, "time")->valuestring), "%s", line);
		n += !strcmp(cJSON_GetObjectItem(ev, "type")->valuestring, type);
		cJSON_Delete(ev);
	}
	fclose(f);
	return n;
}

TestSuite(events, .init = setup, .fini = teardown);

Test(events, every_kind_from_its_producer_matches_the_schema)
{
	static const char *plain[] = { "created", "started", "stopping", "paused", "resumed", "killed",
				       "snapshot", "restored" };
	struct net_event deny = { .type = "net-deny", .proto = "tcp", .port = 80 };
	struct net_event supp = { .type = "net-deny-suppressed", .suppressed = 9 };
	struct vm_result r = { .outcome = VM_PANIC };
	char err[128];

	/* Lifecycle (sb_event): no fields. */
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		cr_assert_eq(event_append(path, event_new(plain[i], 0)), 0, "%s", plain[i]);
	/* stopped, for every outcome; the message quotes the guest's console. */
	snprintf(r.message, sizeof(r.message), "Kernel panic \"x\\y\"\n\x01\x7f\xff");
	for (int o = VM_EXITED; o <= VM_ERROR + 1; o++) {
		r.outcome = (enum vm_outcome)o;
		cr_assert_eq(event_append(path, sb_stopped_event(&r)), 0, "outcome %d", o);
	}
	/* Checkpoints. */
	cr_assert_eq(event_append(path, snap_api_event("checkpoint", "t1")), 0);
	cr_assert_eq(event_append(path, snap_api_event("rollback", "t1")), 0);
	/* Network: with and without destination and name. */
	snprintf(deny.reason, sizeof(deny.reason), "not-allowlisted");
	cr_assert_eq(event_append(path, net_event_json(&deny)), 0);
	cr_assert_eq(net_addr_parse("198.51.100.20", &deny.dst), 0);
	snprintf(deny.name, sizeof(deny.name), "blocked.test");
	cr_assert_eq(event_append(path, net_event_json(&deny)), 0);
	cr_assert_eq(event_append(path, net_event_json(&supp)), 0);

	cr_assert_eq(check_file(path, "stopped"), VM_ERROR + 2);
	r.outcome = VM_PANIC;
	cJSON *st = sb_stopped_event(&r);
	const char *m = cJSON_GetObjectItem(st, "message")->valuestring;
	cr_assert_str_eq(m, "Kernel panic \"x\\y\"   \xff", "control characters reach the log");
	cJSON_Delete(st);
	cr_assert_eq(check_file(path, "net-deny"), 2);
	cr_assert_eq(check_file(path, "net-deny-suppressed"), 1);
	cr_assert_eq(check_file(path, "rollback"), 1);
	/* The writer refuses what the schema does not allow. */
	cJSON *bad = event_new("stopped", 0);
	cr_assert_eq(event_check(bad, err, sizeof(err)), -EINVAL, "missing fields accepted");
	cr_assert_eq(event_append(path, bad), -EINVAL);
}

Test(events, schema_refuses_unknown_missing_and_mistyped_fields)
{
	static const char *bad[] = {
		"{\"time\":\"2026-01-01T00:00:00.000Z\",\"type\":\"nope\"}",
		"{\"time\":1.5,\"type\":\"created\"}",
		"{\"type\":\"created\"}",
		"{\"time\":\"2026-01-01T00:00:00.000Z\",\"type\":\"created\",\"x\":1}",
		"{\"time\":\"2026-01-01T00:00:00.000Z\",\"type\":\"checkpoint\",\"tag\":3}",
		"{\"time\":\"2026-01-01T00:00:00.000Z\",\"type\":\"checkpoint\"}",
		"{\"time\":\"2026-01-01T00:00:00.000Z\",\"type\":\"net-deny-suppressed\","
		"\"suppressed\":\"9\"}",
		"{\"time\":\"2026-01-01T00:00:00.000Z\",\"type\":\"net-deny\",\"proto\":\"tcp\","
		"\"dst\":null,\"port\":null,\"name\":null,\"reason\":\"r\"}",
		"[1]",
	};
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *ev = cJSON_Parse(bad[i]);

		cr_assert_not_null(ev);
		cr_assert_eq(event_check(ev, err, sizeof(err)), -EINVAL, "accepted %s", bad[i]);
		cJSON_Delete(ev);
	}
}

Test(events, time_format_is_rfc3339_utc_ms)
{
	char t[32];

	event_time_format(1796416272123ull, t, sizeof(t));
	cr_assert_str_eq(t, "2026-12-04T20:31:12.123Z");
	event_time_format(5, t, sizeof(t));
	cr_assert_str_eq(t, "1970-01-01T00:00:00.005Z");
}

Test(events, events_file_is_capped_and_rotation_is_an_event)
{
	char old[160];
	int n = 0;

	setenv("MVM_LOG_MAX", "64K", 1);
	snprintf(old, sizeof(old), "%s.1", path);
	for (int i = 0; i < 2000; i++) {
		struct net_event ev = { .type = "net-deny", .proto = "udp", .port = (uint16_t)i };

		snprintf(ev.reason, sizeof(ev.reason), "not-allowlisted");
		cr_assert_eq(event_append(path, net_event_json(&ev)), 0);
	}
	cr_assert_leq(size_of(path), 32 << 10);
	cr_assert_leq(size_of(old), 32 << 10);
	cr_assert_gt(size_of(old), 16 << 10, "no rotated file kept");
	/* The newest events are kept; the rotation says what it dropped. */
	n = check_file(path, "log-rotated");
	cr_assert_eq(n, 1);
	cr_assert_eq(check_file(old, "log-rotated"), 1);
	unsetenv("MVM_LOG_MAX");
}

static int read_all(const char *p, char *buf, size_t cap)
{
	int fd = open(p, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, cap - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return (int)n;
}

Test(events, rotlog_keeps_newest_under_the_cap_and_counts_drops)
{
	static char buf[70000], got[70000];
	char p[160], old[160];
	struct rotlog l;
	size_t total = 0;

	snprintf(p, sizeof(p), "%s/console.log", dir);
	snprintf(old, sizeof(old), "%s.1", p);
	cr_assert_eq(rotlog_open(&l, p, 64 << 10, NULL), 0);
	/* 1 MiB in odd-sized writes, each byte tagged with its offset. */
	while (total < (1 << 20)) {
		size_t n = 1 + total % 4093;

		for (size_t i = 0; i < n; i++)
			buf[i] = (char)('a' + (total + i) % 26);
		cr_assert_eq(rotlog_write(&l, buf, n), (ssize_t)n);
		total += n;
	}
	cr_assert_leq(size_of(p), 32 << 10);
	cr_assert_leq(size_of(old), 32 << 10);
	cr_assert_gt(l.rotations, 30);
	/* Everything not in the two files was counted as dropped. */
	cr_assert_geq(l.dropped + (uint64_t)size_of(p) + (uint64_t)size_of(old), total);
	cr_assert_leq(l.dropped, total);
	/* The file starts with the marker, and ends with the newest byte. */
	cr_assert_gt(read_all(p, got, sizeof(got)), 0);
	cr_assert(!strncmp(got, "mvm: console.log rotated (", 26), "%s", got);
	cr_assert_eq(got[strlen(got) - 1], (char)('a' + (total - 1) % 26));
	/* A single write larger than half the cap keeps only its tail. */
	memset(buf, 'x', sizeof(buf));
	buf[sizeof(buf) - 1] = 'Z';
	cr_assert_eq(rotlog_write(&l, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	cr_assert_leq(size_of(p), 32 << 10);
	read_all(p, got, sizeof(got));
	cr_assert_eq(got[strlen(got) - 1], 'Z');
	rotlog_close(&l);
}

/* The relay's log (rotlog_attach_fixed): two files opened once, rotated by
 * copy and truncate; a PATH someone made huge beforehand (sparse: 1 GiB)
 * is never copied whole, and both files stay under the cap. */
Test(events, rotlog_fixed_files_rotate_in_place_under_the_cap)
{
	static char buf[4096];
	char p[160], old[160], got[256];
	struct rotlog l;
	int fd, ofd;

	snprintf(p, sizeof(p), "%s/relay.log", dir);
	snprintf(old, sizeof(old), "%s.1", p);
	fd = open(p, O_RDWR | O_APPEND | O_CREAT, 0600);
	ofd = open(old, O_RDWR | O_CREAT, 0600);
	cr_assert(fd >= 0 && ofd >= 0);
	cr_assert_eq(ftruncate(fd, 1ll << 30), 0);
	cr_assert_eq(rotlog_attach_fixed(&l, p, fd, ofd, 64 << 10), 0);
	memset(buf, 'r', sizeof(buf));
	buf[sizeof(buf) - 1] = '\n';
	for (int i = 0; i < 100; i++)
		cr_assert_eq(rotlog_write(&l, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	cr_assert_leq(size_of(p) + size_of(old), 64 << 10);
	cr_assert_gt(l.rotations, 5);
	cr_assert_geq(l.dropped, 1ull << 30, "the huge head was dropped, and counted");
	cr_assert_gt(read_all(p, got, sizeof(got)), 0);
	cr_assert(!strncmp(got, "mvm: relay.log rotated (", 24), "%s", got);
	rotlog_close(&l);
}

Test(events, rotlog_reopens_where_it_left_off)
{
	char p[160];
	struct rotlog l;

	snprintf(p, sizeof(p), "%s/console.log", dir);
	cr_assert_eq(rotlog_open(&l, p, 64 << 10, NULL), 0);
	cr_assert_eq(rotlog_write(&l, "hello\n", 6), 6);
	rotlog_close(&l);
	cr_assert_eq(rotlog_open(&l, p, 64 << 10, NULL), 0);
	cr_assert_eq(l.size, 6, "a restarted VMM counts what is already there");
	rotlog_close(&l);
}

/* A vCPU thread's console output (the serial port): 40 KiB in 1 KiB lines. */
static void *vcpu_writes(void *opaque)
{
	struct rotlog *l = opaque;
	char line[1024];

	memset(line, 'v', sizeof(line));
	for (int i = 0; i < 40; i++)
		cr_assert_eq(rotlog_write(l, line, sizeof(line)), (ssize_t)sizeof(line));
	return NULL;
}

Test(events, rotlog_deferred_rotation_is_left_to_the_rotator_thread)
{
	char p[160], old[160];
	struct rotlog l;
	pthread_t t;
	uint64_t kicks = 0;
	int kfd = eventfd(0, EFD_NONBLOCK);

	snprintf(p, sizeof(p), "%s/console.log", dir);
	snprintf(old, sizeof(old), "%s.1", p);
	cr_assert_eq(rotlog_open(&l, p, 64 << 10, NULL), 0);
	rotlog_defer_rotation(&l, kfd);
	/* Another thread never rotates (no rename, no open under seccomp): it
	 * kicks at 3/4 of the half, fills it, and drops the rest, counted. */
	cr_assert_eq(pthread_create(&t, NULL, vcpu_writes, &l), 0);
	pthread_join(t, NULL);
	cr_assert_eq(access(old, F_OK), -1, "the writer thread rotated");
	cr_assert_eq(size_of(p), 32 << 10, "the half is filled, not passed");
	cr_assert_eq(l.dropped, 8 << 10);
	cr_assert_eq(read(kfd, &kicks, sizeof(kicks)), 8);
	cr_assert_eq(kicks, 1, "one kick per due rotation");
	/* The rotator (the event loop) rotates on the kick; writers go on. */
	cr_assert_eq(rotlog_rotate_due(&l), 0);
	cr_assert_eq(size_of(old), 32 << 10);
	cr_assert_lt(size_of(p), 256, "the new file holds only the marker");
	cr_assert_eq(rotlog_rotate_due(&l), 0);
	cr_assert_eq(l.rotations, 1, "no rotation is due right after one");
	cr_assert_eq(pthread_create(&t, NULL, vcpu_writes, &l), 0);
	pthread_join(t, NULL);
	cr_assert_eq(read(kfd, &kicks, sizeof(kicks)), 8, "a new kick after the rotation");
	/* The rotator's own writes rotate as before. */
	cr_assert_eq(rotlog_write(&l, "x", 1), 1);
	cr_assert_eq(l.rotations, 2);
	rotlog_close(&l);	/* closes the kick fd too */
	cr_assert_eq(fcntl(kfd, F_GETFD), -1);
}

Test(events, log_max_from_env)
{
	cr_assert_eq(rotlog_max_from_env(), ROTLOG_DEFAULT_MAX);
	cr_assert_leq(ROTLOG_DEFAULT_MAX, 16ull << 20, "documented: at most 16 MiB by default");
	setenv("MVM_LOG_MAX", "2M", 1);
	cr_assert_eq(rotlog_max_from_env(), 2ull << 20);
	setenv("MVM_LOG_MAX", "1K", 1);
	cr_assert_eq(rotlog_max_from_env(), ROTLOG_MIN_MAX);
	setenv("MVM_LOG_MAX", "junk", 1);
	cr_assert_eq(rotlog_max_from_env(), ROTLOG_DEFAULT_MAX);
	unsetenv("MVM_LOG_MAX");
}

/* A sandbox's normal end (a reset) reads as one; a triple fault keeps its
 * own message, so a guest that crashed is not taken for one that stopped. */
Test(events, a_triple_fault_is_not_reported_as_a_reset)
{
	struct vm_result r = { .outcome = VM_REBOOT };
	cJSON *ev;

	snprintf(r.message, sizeof(r.message), "guest stopped before the command reported an "
		 "exit status (guest reset the machine)");
	ev = sb_stopped_event(&r);
	cr_assert_str_eq(cJSON_GetObjectItem(ev, "message")->valuestring,
			 "the guest reset (mvm stop, or a reboot inside the guest)");
	cJSON_Delete(ev);
	snprintf(r.message, sizeof(r.message), "guest stopped before the command reported an "
		 "exit status (vCPU 1 triple-faulted (KVM_EXIT_SHUTDOWN))");
	ev = sb_stopped_event(&r);
	cr_assert(strstr(cJSON_GetObjectItem(ev, "message")->valuestring,
			 "vCPU 1 triple-faulted"));
	cr_assert_str_eq(cJSON_GetObjectItem(ev, "outcome")->valuestring, "reboot");
	cJSON_Delete(ev);
}

/* console.log outlives restarts: each VMM begins and ends its part with a
 * line of its own, so the last boot's "reboot: Restarting system" is not
 * read as this one's (issue 26); the end says what the "stopped" event says. */
Test(events, the_vmm_marks_its_start_and_end_in_the_console)
{
	struct vm_result r = { .outcome = VM_REBOOT };
	char line[64];
	char big[1024];
	size_t n;

	n = sb_console_mark(big, sizeof(big), 1796529600123ULL, NULL);
	cr_assert_str_eq(big, "mvm: 2026-12-06T04:00:00.123Z VMM started: the guest boots\n");
	cr_assert_eq(n, strlen(big));
	snprintf(r.message, sizeof(r.message), "guest stopped before the command reported an "
		 "exit status (guest reset the machine)");
	sb_console_mark(big, sizeof(big), 1796529600123ULL, &r);
	cr_assert_str_eq(big, "mvm: 2026-12-06T04:00:00.123Z guest stopped (reboot): the guest "
			 "reset (mvm stop, or a reboot inside the guest)\n");
	r.outcome = VM_PANIC;
	snprintf(r.message, sizeof(r.message), "guest kernel panic: Kernel panic\x1b[2J");
	sb_console_mark(big, sizeof(big), 1796529600123ULL, &r);
	cr_assert(strstr(big, "guest stopped (panic): guest kernel panic: Kernel panic [2J\n"),
		  "%s", big);
	/* Cut, it stays one whole line. */
	n = sb_console_mark(line, sizeof(line), 1796529600123ULL, &r);
	cr_assert_eq(n, sizeof(line) - 1);
	cr_assert_eq(line[n - 1], '\n');
	cr_assert_eq(strchr(line, '\n'), line + n - 1);
}
