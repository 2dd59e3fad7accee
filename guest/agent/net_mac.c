/*
 * MAC: a sandbox started from a template inherits the template's running
 * kernel, whose NIC read its address from the device once, at boot. The
 * host gives each new sandbox its own address (config.json "mac", which
 * the VMM's virtio-net also reports); this sets it on the guest side, live
 * (virtio-net allows changing the address while the link is up). Software
 * that takes the MAC as a machine identity (DHCP client ids, UUIDv1, licence
 * checks) then sees distinct machines, as it would on a cold boot.
 */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/agent.h"

int agent_mac_apply(const uint8_t *mac)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), n = 0, ret = 0;

	if (!ifs || fd < 0) {
		ret = -errno;
		goto out;
	}
	for (i = ifs; i->if_index && !ret; i++) {
		struct ifreq r;

		memset(&r, 0, sizeof(r));
		strncpy(r.ifr_name, i->if_name, IFNAMSIZ - 1);
		if (ioctl(fd, SIOCGIFHWADDR, &r) || r.ifr_hwaddr.sa_family != ARPHRD_ETHER)
			continue;
		memcpy(r.ifr_hwaddr.sa_data, mac, 6);
		if (ioctl(fd, SIOCSIFHWADDR, &r))
			ret = -errno;
		else
			n++;
	}
out:
	if (fd >= 0)
		close(fd);
	if (ifs)
		if_freenameindex(ifs);
	return ret ? ret : n;
}

bool agent_mac_ok(const uint8_t *mac)
{
	static const uint8_t zero[6];

	/* Unicast (bit 0 of the first byte clear) and not all zeroes. */
	return !(mac[0] & 1) && memcmp(mac, zero, 6);
}

void agent_set_mac(int conn, const uint8_t *p, size_t len)
{
	int ret;

	if (len != 6 || !agent_mac_ok(p)) {
		agent_error(conn, "malformed MAC request");
		return;
	}
	ret = agent_mac_apply(p);
	if (ret < 0) {
		agent_error(conn, "setting the MAC address: %s", strerror(-ret));
		return;
	}
	ap_write_frame(conn, AP_OK, NULL, 0);
}
