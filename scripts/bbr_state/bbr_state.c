// SPDX-License-Identifier: GPL-2.0
/* Loader of bbr_state.bpf.c: attach, wait SECONDS (or until SIGINT/SIGTERM), print the maps as
 * one JSON object per line:
 *   {"gain": {"class": C, "pacing_gain": G, "ns": N, "acks": A, "phases_left": P}}
 *   {"lt": {"class": C, "from": S, "to": S2, "lt_rtt_cnt": R, "count": N}}
 * Usage: bbr_state SECONDS [SPLIT_US]   (class 1: srtt above SPLIT_US, default 30000) */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "bbr_state.h"
#include "bbr_state.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bbr_state_bpf *skel;
	int seconds;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SECONDS [SPLIT_US]\n", argv[0]);
		return 2;
	}
	seconds = atoi(argv[1]);
	skel = bbr_state_bpf__open();
	if (!skel)
		return 1;
	if (argc > 2)
		skel->rodata->split_us = (unsigned)atoi(argv[2]);
	if (bbr_state_bpf__load(skel) || bbr_state_bpf__attach(skel)) {
		fprintf(stderr, "bbr_state: load/attach failed\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "bbr_state: attached\n");
	for (int i = 0; i < seconds && !stop; i++)
		sleep(1);

	int fd = bpf_map__fd(skel->maps.gains);
	struct gain_key gk, gn;
	struct gain_val gv;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &gn) == 0) {
		bpf_map_lookup_elem(fd, &gn, &gv);
		printf("{\"gain\": {\"class\": %u, \"pacing_gain\": %u, \"ns\": %llu, \"acks\": %llu, "
		       "\"phases_left\": %llu}}\n",
		       gn.cls, gn.gain, (unsigned long long)gv.ns, (unsigned long long)gv.acks,
		       (unsigned long long)gv.phases_left);
		gk = gn;
		prev = &gk;
	}
	fd = bpf_map__fd(skel->maps.lt_trans);
	struct lt_key lk, ln;
	unsigned long long n;
	prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &ln) == 0) {
		bpf_map_lookup_elem(fd, &ln, &n);
		printf("{\"lt\": {\"class\": %u, \"from\": %u, \"to\": %u, \"lt_rtt_cnt\": %u, \"count\": %llu}}\n",
		       ln.cls, ln.prev, ln.next, ln.rtt_cnt, n);
		lk = ln;
		prev = &lk;
	}
	bbr_state_bpf__destroy(skel);
	return 0;
}
