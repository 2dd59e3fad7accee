/* Frame builders and checkers for the network policy's unit tests: frames
 * are built by hand (not by the code under test) and reply checksums are
 * verified with an independent byte-at-a-time sum. */
#ifndef MVM_NET_TESTUTIL_H
#define MVM_NET_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "devices/netpolicy/net_filter.h"

extern const uint8_t guest_mac[6], gw_mac[6];

uint16_t fold16(uint32_t acc);
uint32_t sum_bytes(const uint8_t *d, size_t n, uint32_t acc);
/* TCP header (no options) + @data into @t; returns its length. */
size_t l4_tcp(uint8_t *t, uint16_t sport, uint16_t dport, uint8_t flags, uint32_t seq,
	      uint32_t ack, const uint8_t *data, size_t dlen);
size_t l4_udp(uint8_t *u, uint16_t sport, uint16_t dport, const uint8_t *data, size_t dlen);
/* Ethernet + IPv4/IPv6 (by the form of @src) + @l4, every checksum set. */
size_t mk(uint8_t *f, const char *src, const char *dst, uint8_t proto, const uint8_t *l4,
	  size_t l4len);
size_t syn(uint8_t *f, const char *src, const char *dst, uint16_t dport);
size_t ack(uint8_t *f, const char *src, const char *dst, uint16_t dport);
size_t udp(uint8_t *f, const char *src, const char *dst, uint16_t dport, const uint8_t *data,
	   size_t dlen);
/* Check a reply frame (to the guest, checksums valid); returns the L4
 * offset and its protocol in *proto. */
size_t verify(const uint8_t *f, size_t len, uint8_t *proto);
uint32_t rd32(const uint8_t *p);

/* The fixture: a policy in allowlist mode on a fake clock (fake_now, ms),
 * its events recorded in events[] (n_events counts all, the first 64 kept). */
extern struct net_policy pol;
extern struct net_filter_result res;
extern uint64_t fake_now;
extern struct net_event events[64];
extern int n_events;
void net_setup(void);
void net_teardown(void);
void allow(const char *rule); /* asserts it parses */
enum net_verdict run(const uint8_t *f, size_t len); /* net_filter_frame into res */

#endif
