/* A small JSON Schema checker for tool arguments (tools/mcp/mcp_schema.h). */
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tools/mcp/mcp_schema.h"

static int check(const cJSON *s, const cJSON *v, char *at, size_t atcap, char *err, size_t errlen);

static const char *type_of(const cJSON *v)
{
	if (cJSON_IsObject(v))
		return "an object";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	return "null";
}

static bool type_ok(const char *t, const cJSON *v)
{
	if (!strcmp(t, "object"))
		return cJSON_IsObject(v);
	if (!strcmp(t, "array"))
		return cJSON_IsArray(v);
	if (!strcmp(t, "string"))
		return cJSON_IsString(v);
	if (!strcmp(t, "boolean"))
		return cJSON_IsBool(v);
	if (!strcmp(t, "number"))
		return cJSON_IsNumber(v) && isfinite(v->valuedouble);
	if (!strcmp(t, "integer"))
		return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
		       v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9007199254740992.0;
	return false;
}

#define FAIL(...) do { \
		int _n = snprintf(err, errlen, "%s ", at[0] ? at : "the arguments"); \
		if (_n > 0 && (size_t)_n < errlen) \
			snprintf(err + _n, errlen - (size_t)_n, __VA_ARGS__); \
		return -1; \
	} while (0)

/* Code points, not bytes: what JSON Schema's lengths count. */
static size_t utf8_len(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static int check_string(const cJSON *s, const cJSON *v, const char *at, char *err, size_t errlen)
{
	const cJSON *min = cJSON_GetObjectItem(s, "minLength"), *max = cJSON_GetObjectItem(s, "maxLength");
	const cJSON *pat = cJSON_GetObjectItem(s, "pattern"), *en = cJSON_GetObjectItem(s, "enum");
	size_t len = utf8_len(v->valuestring);

	if (cJSON_IsNumber(min) && len < (size_t)min->valuedouble)
		FAIL("must have at least %d characters", min->valueint);
	if (cJSON_IsNumber(max) && len > (size_t)max->valuedouble)
		FAIL("must have at most %d characters", max->valueint);
	if (cJSON_IsString(pat)) {
		regex_t re;
		int nomatch;

		if (regcomp(&re, pat->valuestring, REG_EXTENDED | REG_NOSUB))
			FAIL("cannot be checked (bad pattern in the schema)");
		nomatch = regexec(&re, v->valuestring, 0, NULL, 0);
		regfree(&re);
		if (nomatch)
			FAIL("must match %s", pat->valuestring);
	}
	if (cJSON_IsArray(en)) {
		const cJSON *e;

		cJSON_ArrayForEach(e, en)
			if (cJSON_IsString(e) && !strcmp(e->valuestring, v->valuestring))
				return 0;
		FAIL("must be one of the documented values");
	}
	return 0;
}

static int check_number(const cJSON *s, const cJSON *v, const char *at, char *err, size_t errlen)
{
	const cJSON *min = cJSON_GetObjectItem(s, "minimum"), *max = cJSON_GetObjectItem(s, "maximum");

	if (cJSON_IsNumber(min) && v->valuedouble < min->valuedouble)
		FAIL("must be at least %g", min->valuedouble);
	if (cJSON_IsNumber(max) && v->valuedouble > max->valuedouble)
		FAIL("must be at most %g", max->valuedouble);
	return 0;
}

/* @v (at @at + "/" + @seg) against @s; @at is restored after. */
static int check_child(const cJSON *s, const cJSON *v, const char *seg, char *at, size_t atcap,
		       char *err, size_t errlen)
{
	size_t base = strlen(at);
	int r;

	snprintf(at + base, atcap - base, "/%.64s", seg);
	r = check(s, v, at, atcap, err, errlen);
	at[base] = 0;
	return r;
}

static int check_object(const cJSON *s, const cJSON *v, char *at, size_t atcap, char *err, size_t errlen)
{
	const cJSON *props = cJSON_GetObjectItem(s, "properties"), *req = cJSON_GetObjectItem(s, "required");
	const cJSON *addl = cJSON_GetObjectItem(s, "additionalProperties");
	const cJSON *maxp = cJSON_GetObjectItem(s, "maxProperties"), *e;

	if (cJSON_IsNumber(maxp) && cJSON_GetArraySize(v) > maxp->valueint)
		FAIL("must have at most %d members", maxp->valueint);
	cJSON_ArrayForEach(e, req)
		if (cJSON_IsString(e) && !cJSON_GetObjectItemCaseSensitive(v, e->valuestring))
			FAIL("must have the member \"%s\"", e->valuestring);
	cJSON_ArrayForEach(e, v) {
		const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, e->string);
		int r;

		if (!ps && cJSON_IsFalse(addl))
			FAIL("has an unknown member \"%.64s\"", e->string);
		if (!ps)
			ps = cJSON_IsObject(addl) ? addl : NULL;
		if (!ps)
			continue;
		r = check_child(ps, e, e->string, at, atcap, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

static int check_array(const cJSON *s, const cJSON *v, char *at, size_t atcap, char *err, size_t errlen)
{
	const cJSON *items = cJSON_GetObjectItem(s, "items"), *maxi = cJSON_GetObjectItem(s, "maxItems"), *e;
	int i = 0;

	if (cJSON_IsNumber(maxi) && cJSON_GetArraySize(v) > maxi->valueint)
		FAIL("must have at most %d items", maxi->valueint);
	if (!cJSON_IsObject(items))
		return 0;
	cJSON_ArrayForEach(e, v) {
		char idx[16];
		int r;

		snprintf(idx, sizeof(idx), "%d", i++);
		r = check_child(items, e, idx, at, atcap, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

static int check(const cJSON *s, const cJSON *v, char *at, size_t atcap, char *err, size_t errlen)
{
	const cJSON *t = cJSON_GetObjectItem(s, "type");

	if (cJSON_IsString(t) && !type_ok(t->valuestring, v)) {
		bool vowel = strchr("aeiou", t->valuestring[0]) != NULL;

		FAIL("must be %s %s, not %s", vowel ? "an" : "a", t->valuestring, type_of(v));
	}
	if (cJSON_IsString(v))
		return check_string(s, v, at, err, errlen);
	if (cJSON_IsNumber(v))
		return check_number(s, v, at, err, errlen);
	if (cJSON_IsObject(v))
		return check_object(s, v, at, atcap, err, errlen);
	if (cJSON_IsArray(v))
		return check_array(s, v, at, atcap, err, errlen);
	return 0;
}

int mcp_schema_check(const cJSON *schema, const cJSON *v, char *err, size_t errlen)
{
	char at[512] = "";

	return check(schema, v, at, sizeof(at), err, errlen);
}
