/*
 * The JSON control API a sandbox's VMM serves on api.sock (docs/api.md):
 * one request line, one response line, on the VMM's event loop.
 */
#ifndef MVM_SANDBOX_API_H
#define MVM_SANDBOX_API_H

struct vm;
struct sb_api;

/* Listen on @sock_path (relative to the state directory, the VMM's cwd). */
int sb_api_start(struct vm *vm, const char *name, const char *sock_path, struct sb_api **out);
void sb_api_stop(struct sb_api *a);

#endif
