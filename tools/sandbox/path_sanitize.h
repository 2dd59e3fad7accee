/*
 * What a guest-supplied path may be before the host writes it, diffs it or
 * names it in a report. Pure and lexical: callers still resolve beneath
 * their directory with O_NOFOLLOW; these checks decide what to refuse and
 * give the reason in words a reviewer understands. Symlink targets:
 * ap_link_inside() (guest/agent/proto.h).
 */
#ifndef MVM_PATH_SANITIZE_H
#define MVM_PATH_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

#define PS_NAME_MAX 255		/* bytes per component (NAME_MAX) */
#define PS_PATH_MAX 4095	/* bytes per relative path */

/*
 * NULL if @path (relative to a tree root, "" = the root) may be written
 * beneath it; else why not: absolute, empty/"."/".." component, a component
 * over PS_NAME_MAX, the whole over @max_len (0: PS_PATH_MAX), or a control
 * character (newline, tab, ESC, DEL...) in a name.
 */
const char *ps_path_refusal(const char *path, size_t max_len);
/* A component is ".git" (any case): git metadata, never read or exported. */
bool ps_is_git_meta(const char *path);
/*
 * For a terminal: copy @in to @out (@cap bytes) with control characters
 * (C0, DEL, C1), backslashes and bytes that are not UTF-8 escaped
 * (\n, \x1b, \\, \xff).
 */
void ps_escape(const char *in, char *out, size_t cap);
/* For JSON: only bytes that are not UTF-8 become \xHH (JSON escapes the rest itself). */
void ps_utf8_clean(const char *in, char *out, size_t cap);

#endif
