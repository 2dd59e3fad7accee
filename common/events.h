/*
 * The one writer of events.jsonl: lifecycle (created, started, stopped...),
 * checkpoint and network events, one JSON object per line, each checked
 * against one schema (docs/api.md, "Events"). "time" is always an RFC 3339
 * UTC string with milliseconds ("2026-12-04T20:31:12.123Z").
 */
#ifndef MVM_EVENTS_H
#define MVM_EVENTS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Longest line the writer produces (larger events are refused). */
#define EVENT_LINE_MAX 4096

/* Wall clock in ms since the epoch (events are read next to other logs). */
uint64_t event_now_ms(void);
/* "YYYY-MM-DDTHH:MM:SS.mmmZ" for @ms into @buf (>= 25 bytes). */
void event_time_format(uint64_t ms, char *buf, size_t cap);

/* A new event {"time":@ms (0: now),"type":@type}; the caller adds the
 * fields its type has. NULL when out of memory. */
cJSON *event_new(const char *type, uint64_t ms);

/* 0 when @ev has exactly the fields its type has, of their JSON types;
 * else -EINVAL and what is wrong in @err. Unknown types are refused. */
int event_check(const cJSON *ev, char *err, size_t errlen);

/* @ev checked and printed as one line (no newline) into @buf. Its length,
 * -EINVAL (does not match the schema) or -ENOSPC. */
int event_format(const cJSON *ev, char *buf, size_t cap);

/* Append @ev to @path (capped with one rotation, rotlog.h, MVM_LOG_MAX)
 * and free it; NULL @ev is -ENOMEM. 0 or -errno. */
int event_append(const char *path, cJSON *ev);

#endif
