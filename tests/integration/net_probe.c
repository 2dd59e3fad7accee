// net_probe — what the minimal guest's busybox cannot do, for net-*.sh tests
// (built static on the test host, copied into the guest with --copy):
//   net_probe udp SRCPORT DST PORT TEXT   one UDP datagram from SRCPORT
//   net_probe conns DST PORT N            open N TCP connections and hold
//                                         them; prints "connected=C refused=R"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int addr(const char *ip, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

static int udp(char **av)
{
	struct sockaddr_in src, dst;
	int one = 1, fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (addr("0.0.0.0", av[0], &src) || addr(av[1], av[2], &dst) || fd < 0)
		return 2;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&src, sizeof(src))) {
		perror("bind");
		return 1;
	}
	if (sendto(fd, av[3], strlen(av[3]), 0, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		perror("sendto");
		return 1;
	}
	printf("sent\n");
	return 0;
}

static int conns(char **av)
{
	struct sockaddr_in dst;
	int n = atoi(av[2]), ok = 0, refused = 0;

	if (addr(av[0], av[1], &dst))
		return 2;
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct timeval tv = {.tv_sec = 20};

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) == 0)
			ok++; /* kept open until we exit */
		else if (errno == ECONNREFUSED || errno == ECONNRESET)
			refused++;
		else
			perror("connect");
	}
	printf("connected=%d refused=%d\n", ok, refused);
	return 0;
}

int main(int ac, char **av)
{
	if (ac == 6 && !strcmp(av[1], "udp"))
		return udp(av + 2);
	if (ac == 5 && !strcmp(av[1], "conns"))
		return conns(av + 2);
	fprintf(stderr, "usage: net_probe udp SRCPORT DST PORT TEXT | conns DST PORT N\n");
	return 2;
}
