/* The command's side of an exec: stdio, session, user, directory, environment. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "guest/agent/agent.h"

/* Defaults first, then the request's variables (which win by coming later in a lookup-free way: we drop overridden defaults). */
static char **build_env(const struct ap_exec *e)
{
	static char path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	static char home_root[] = "HOME=/root", home_other[] = "HOME=/";
	static char term_pty[] = "TERM=xterm-256color", term_plain[] = "TERM=dumb";
	static char lang[] = "LANG=C.UTF-8";
	char *defaults[] = { path, e->uid ? home_other : home_root,
			     (e->flags & AP_EXEC_PTY) ? term_pty : term_plain, lang };
	char **env = calloc((size_t)e->envc + 5, sizeof(char *));
	size_t k = 0;

	if (!env)
		_exit(125);
	for (size_t i = 0; i < 4; i++) {
		size_t klen = (size_t)(strchr(defaults[i], '=') - defaults[i]) + 1;
		bool overridden = false;

		for (int j = 0; j < e->envc; j++)
			overridden |= !strncmp(e->env[j], defaults[i], klen);
		if (!overridden)
			env[k++] = defaults[i];
	}
	for (int j = 0; j < e->envc; j++)
		env[k++] = e->env[j];
	return env;
}

static void reset_signals(void)
{
	sigset_t all;

	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
}

void agent_exec_child(const struct ap_exec *e, int in, int out, int err, bool pty)
{
	reset_signals();
	/* Own session and process group: KILL and timeouts reach every descendant. */
	setsid();
	if (pty && ioctl(in, TIOCSCTTY, 0))
		_exit(125);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(125);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	if (e->uid && (setgroups(0, NULL) || setgid(e->uid) || setuid(e->uid))) {
		dprintf(2, "mvm: cannot switch to uid %u: %s\n", e->uid, strerror(errno));
		_exit(125);
	}
	if (chdir(e->cwd[0] ? e->cwd : "/")) {
		dprintf(2, "mvm: cannot enter working directory %s: %s\n", e->cwd, strerror(errno));
		_exit(125);
	}
	/* execvp searches the PATH of the new environment. */
	environ = build_env(e);
	execvp(e->argv[0], e->argv);
	dprintf(2, "mvm: %s: %s\n", e->argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}
