/*
 * The subset of JSON Schema that the MCP tools' input schemas use, checked
 * on arguments from the client: type (object, array, string, integer,
 * number, boolean), properties, required, additionalProperties (false or a
 * schema), items, enum (strings), minimum, maximum, minLength, maxLength,
 * maxItems, maxProperties, pattern (POSIX extended). Pure.
 */
#ifndef MVM_MCP_SCHEMA_H
#define MVM_MCP_SCHEMA_H

#include <cjson/cJSON.h>
#include <stddef.h>

/*
 * 0 if @v satisfies @schema; else -1 with a sentence naming the first
 * offending place ("/timeout must be an integer") in @err.
 */
int mcp_schema_check(const cJSON *schema, const cJSON *v, char *err, size_t errlen);

#endif
