/* The control API served on a real event loop of a VM with no vCPUs (no KVM). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/sandbox/sandbox_api.h"
#include "vmm/vm.h"

static char sock[108];
static char replies[4][512];

static void call(const char *req, char *out, size_t cap)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	size_t len = 0;
	ssize_t n;

	strcpy(a.sun_path, sock);
	for (int i = 0; i < 100 && connect(fd, (struct sockaddr *)&a, sizeof(a)); i++)
		usleep(10000);
	(void)!write(fd, req, strlen(req));
	while (len < cap - 1 && (n = read(fd, out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = 0;
	close(fd);
}

static void *client(void *arg)
{
	call("{\"op\":\"status\"}\n", replies[0], sizeof(replies[0]));
	call("{\"op\":\"pause\"}\n", replies[1], sizeof(replies[1]));
	call("not json\n", replies[2], sizeof(replies[2]));
	call("{\"op\":\"shutdown\"}\n", replies[3], sizeof(replies[3]));
	return NULL;
}

Test(sandbox_api, status_pause_error_shutdown)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	struct sb_api *api;
	pthread_t t;

	snprintf(sock, sizeof(sock), "/tmp/mvm-api-test-%d.sock", (int)getpid());
	cr_assert_eq(ev_init(&vm->loop), 0);
	vm->t0 = mono_now_s();
	cr_assert_eq(sb_api_start(vm, "box", sock, &api), 0);
	pthread_create(&t, NULL, client, NULL);
	cr_assert_eq(ev_run(&vm->loop), 0, "the shutdown request ends the loop");
	pthread_join(t, NULL);
	cr_assert(strstr(replies[0], "\"status\":\"running\""), "%s", replies[0]);
	cr_assert(strstr(replies[0], "\"name\":\"box\""), "%s", replies[0]);
	cr_assert(strstr(replies[1], "\"ok\":true"), "%s", replies[1]);
	cr_assert(vm_is_paused(vm));
	cr_assert(strstr(replies[2], "\"ok\":false"), "%s", replies[2]);
	cr_assert(strstr(replies[3], "\"ok\":true"), "%s", replies[3]);
	cr_assert_eq(vm->result.outcome, VM_EXITED);
	sb_api_stop(api);
	cr_assert_neq(access(sock, F_OK), 0, "socket removed");
	ev_fini(&vm->loop);
	free(vm);
}
