/*
 * The MCP session table of `mvm serve` (tools/serve/serve_mcp.h). The
 * caller holds the server's lock around every call. A session id is a
 * bearer secret within its tenant: 256 bits from getrandom, compared in
 * constant time, and only its tenant can use it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "tools/serve/serve_mcp.h"

void svm_init(struct svm_table *t, unsigned per_tenant, uint64_t idle_ms)
{
	memset(t, 0, sizeof(*t));
	t->per_tenant = per_tenant;
	t->idle_ms = idle_ms;
}

bool svm_id_ok(const char *id)
{
	size_t i;

	for (i = 0; id && id[i]; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return id && i == SVM_ID_HEX;
}

/* Both SVM_ID_HEX long (svm_id_ok): equal, in time independent of where they differ. */
static bool id_eq(const char *a, const char *b)
{
	unsigned char d = 0;

	for (size_t i = 0; i < SVM_ID_HEX; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* The live session @id of @tenant (NULL: any tenant), or NULL. */
static struct svm_session *find(struct svm_table *t, const char *tenant, const char *id)
{
	if (!svm_id_ok(id))
		return NULL;
	for (size_t i = 0; i < SVM_MAX; i++) {
		struct svm_session *s = &t->s[i];

		if (s->used && id_eq(s->id, id) && (!tenant || !strcmp(s->tenant, tenant)))
			return s;
	}
	return NULL;
}

void svm_expire(struct svm_table *t, uint64_t now_ms)
{
	for (size_t i = 0; i < SVM_MAX; i++) {
		struct svm_session *s = &t->s[i];

		if (s->used && !s->busy && now_ms - s->last_ms > t->idle_ms)
			memset(s, 0, sizeof(*s));
	}
}

unsigned svm_count(const struct svm_table *t, const char *tenant)
{
	unsigned n = 0;

	for (size_t i = 0; i < SVM_MAX; i++)
		n += t->s[i].used && !strcmp(t->s[i].tenant, tenant);
	return n;
}

static int new_id(char id[SVM_ID_HEX + 1])
{
	unsigned char r[SVM_ID_HEX / 2];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		got += n > 0 ? (size_t)n : 0;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(id + 2 * i, 3, "%02x", r[i]);
	explicit_bzero(r, sizeof(r));
	return 0;
}

int svm_open(struct svm_table *t, const char *tenant, uint64_t now_ms, char id[SVM_ID_HEX + 1])
{
	struct svm_session *free_slot = NULL;
	int ret;

	svm_expire(t, now_ms);
	if (svm_count(t, tenant) >= t->per_tenant)
		return -EUSERS;
	for (size_t i = 0; i < SVM_MAX && !free_slot; i++)
		if (!t->s[i].used)
			free_slot = &t->s[i];
	if (!free_slot)
		return -ENOSPC;
	do {
		ret = new_id(id);
	} while (!ret && find(t, NULL, id));	/* 2^-256, but cheap to rule out */
	if (ret)
		return ret;
	free_slot->used = true;
	free_slot->busy = 1;
	free_slot->last_ms = now_ms;
	free_slot->version[0] = '\0';
	snprintf(free_slot->id, sizeof(free_slot->id), "%s", id);
	snprintf(free_slot->tenant, sizeof(free_slot->tenant), "%s", tenant);
	return 0;
}

int svm_enter(struct svm_table *t, const char *tenant, const char *id, uint64_t now_ms, char *version)
{
	struct svm_session *s;

	svm_expire(t, now_ms);
	s = find(t, tenant, id);
	if (!s)
		return -ENOENT;
	s->busy++;
	s->last_ms = now_ms;
	if (version)
		snprintf(version, 16, "%s", s->version);
	return 0;
}

void svm_leave(struct svm_table *t, const char *id, const char *version, uint64_t now_ms)
{
	struct svm_session *s = find(t, NULL, id);

	/* Closed meanwhile (DELETE): nothing is left to update. */
	if (!s)
		return;
	if (s->busy)
		s->busy--;
	s->last_ms = now_ms;
	if (version)
		snprintf(s->version, sizeof(s->version), "%s", version);
}

int svm_close(struct svm_table *t, const char *tenant, const char *id)
{
	struct svm_session *s = find(t, tenant, id);

	if (!s)
		return -ENOENT;
	memset(s, 0, sizeof(*s));
	return 0;
}
