// SPDX-License-Identifier: GPL-2.0
/* Loader of bbr_state.bpf.c: attach, wait SECONDS (or until SIGINT/SIGTERM), print the maps as
 * one JSON object per line:
 *   {"gain": {"class": C, "pacing_gain": G, "ns": N, "acks": A, "phases_left": P}}
 *   {"lt": {"class": C, "from": S, "to": S2, "lt_rtt_cnt": R, "count": N}}
 * Usage: bbr_state SECONDS [SPLIT_US [EVENTS.csv]]   (class 1: srtt above SPLIT_US, default 30000)
 * With EVENTS.csv, every ACK of a bbr socket (the state before tcp_ack) and every retransmitted
 * skb is written there as one CSV row (struct ack_ev; kind 0 an ACK, 1 a retransmission). */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "bbr_state.h"
#include "bbr_state.skel.h"

static volatile sig_atomic_t stop;

static FILE *events_out;

#define EV_FIELDS                                                                              \
	X(kind) X(sk) X(ts_ns) X(snd_una) X(snd_nxt) X(packets_out) X(sacked_out) X(lost_out)     \
	X(retrans_out) X(lost) X(delivered) X(delivered_mstamp_us) X(wstamp_ns) X(cwnd)          \
	X(srtt_us) X(ca_state) X(min_rtt_us) X(bw) X(pacing_gain) X(cycle_idx) X(cycle_mstamp_us) \
	X(mode) X(lt_use_bw) X(rack_rtt_us) X(rack_mstamp_us) X(rack_reo_wnd_steps) X(reordering) \
	X(reord_seen) X(seq) X(end_seq) X(skb_mstamp_ns)

static int on_event(void *ctx, void *data, size_t len)
{
	const struct ack_ev *e = data;
	const char *sep = "";

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
#define X(f)                                                                   \
	fprintf(events_out, "%s%llu", sep, (unsigned long long)e->f);          \
	sep = ",";
	EV_FIELDS
#undef X
	fputc('\n', events_out);
	return 0;
}

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
	if (argc > 3) {
		events_out = fopen(argv[3], "w");
		if (!events_out) {
			perror(argv[3]);
			return 1;
		}
		skel->rodata->per_ack = 1;
	}
	if (bbr_state_bpf__load(skel) || bbr_state_bpf__attach(skel)) {
		fprintf(stderr, "bbr_state: load/attach failed\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "bbr_state: attached\n");
	if (events_out) {
		struct ring_buffer *rb =
			ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
		const char *sep = "";

		if (!rb) {
			fprintf(stderr, "bbr_state: ring buffer failed\n");
			return 1;
		}
#define X(f)                                          \
	fprintf(events_out, "%s%s", sep, #f);         \
	sep = ",";
		EV_FIELDS
#undef X
		fputc('\n', events_out);
		time_t end = time(NULL) + seconds;

		while (time(NULL) < end && !stop)
			ring_buffer__poll(rb, 100);
		ring_buffer__consume(rb);
		ring_buffer__free(rb);
		fclose(events_out);
	} else {
		for (int i = 0; i < seconds && !stop; i++)
			sleep(1);
	}

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
