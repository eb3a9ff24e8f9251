// SPDX-License-Identifier: GPL-2.0
/* The running kernel's BBR (tcp_bbr.c, struct bbr in the kernel's BTF) seen on every ACK a BBR
 * socket receives (BTF tracepoint tcp_probe: fentry and kprobes are not available on the target
 * kernel). Per flow class (srtt above or below SPLIT_US): time spent at each pacing gain and the
 * number of phases entered, and the long-term (policer) sampler's transitions between
 * consecutive ACKs: state = 2 * lt_use_bw + lt_is_sampling, with lt_rtt_cnt before. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bbr_state.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 split_us = 30000;

struct last {
	__u32 state, rtt_cnt, gain;
	__u64 ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct last);
} lasts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct lt_key);
	__type(value, __u64);
} lt_trans SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct gain_key);
	__type(value, struct gain_val);
} gains SEC(".maps");

static void add(void *map, void *key, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(map, key);

	if (c)
		__sync_fetch_and_add(c, v);
	else
		bpf_map_update_elem(map, key, &v, BPF_NOEXIST);
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(on_probe, struct sock *sk, struct sk_buff *skb)
{
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	const struct tcp_congestion_ops *ops = BPF_CORE_READ(icsk, icsk_ca_ops);
	char name[5] = {};
	struct bbr *b;
	struct last *l, now_state;
	__u32 srtt, cls, gain;
	__u64 key = (__u64)sk, now = bpf_ktime_get_ns();

	bpf_probe_read_kernel_str(name, sizeof(name), ops->name);
	if (name[0] != 'b' || name[1] != 'b' || name[2] != 'r' || name[3] != 0)
		return 0; /* the kernel's bbr only */
	srtt = BPF_CORE_READ((struct tcp_sock *)sk, srtt_us) >> 3;
	if (!srtt)
		return 0;
	cls = srtt > split_us;
	b = (struct bbr *)((void *)icsk + bpf_core_field_offset(struct inet_connection_sock, icsk_ca_priv));
	now_state.state = BPF_CORE_READ_BITFIELD_PROBED(b, lt_use_bw) * 2 +
			  BPF_CORE_READ_BITFIELD_PROBED(b, lt_is_sampling);
	now_state.rtt_cnt = BPF_CORE_READ_BITFIELD_PROBED(b, lt_rtt_cnt);
	gain = BPF_CORE_READ_BITFIELD_PROBED(b, pacing_gain);
	now_state.gain = gain;
	now_state.ts = now;
	l = bpf_map_lookup_elem(&lasts, &key);
	if (!l) {
		bpf_map_update_elem(&lasts, &key, &now_state, BPF_ANY);
		return 0;
	}
	struct gain_key gk = { .cls = cls, .gain = l->gain };
	struct gain_val *gv = bpf_map_lookup_elem(&gains, &gk);
	if (!gv) {
		struct gain_val zero = {};
		bpf_map_update_elem(&gains, &gk, &zero, BPF_NOEXIST);
		gv = bpf_map_lookup_elem(&gains, &gk);
	}
	if (gv) {
		__sync_fetch_and_add(&gv->ns, now - l->ts);
		__sync_fetch_and_add(&gv->acks, 1);
		if (l->gain != gain)
			__sync_fetch_and_add(&gv->phases_left, 1);
	}
	/* A transition, or the interval restarted (lt_rtt_cnt fell while sampling). */
	if (l->state != now_state.state || (now_state.state == 1 && now_state.rtt_cnt < l->rtt_cnt)) {
		struct lt_key k = { .cls = cls, .prev = l->state, .next = now_state.state,
				    .rtt_cnt = l->rtt_cnt };
		add(&lt_trans, &k, 1);
	}
	*l = now_state;
	return 0;
}

/* Per-ACK events (ack_ev) for a user-space reader; off unless the loader sets per_ack. */
const volatile __u32 per_ack = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);
} events SEC(".maps");

static int is_bbr(struct sock *sk)
{
	const struct tcp_congestion_ops *ops =
		BPF_CORE_READ((struct inet_connection_sock *)sk, icsk_ca_ops);
	char name[5] = {};

	bpf_probe_read_kernel_str(name, sizeof(name), ops->name);
	return name[0] == 'b' && name[1] == 'b' && name[2] == 'r' && name[3] == 0;
}

static void fill_sock(struct ack_ev *e, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	struct bbr *b = (struct bbr *)((void *)icsk +
				       bpf_core_field_offset(struct inet_connection_sock, icsk_ca_priv));

	e->sk = (__u64)sk;
	e->ts_ns = bpf_ktime_get_ns();
	e->wstamp_ns = BPF_CORE_READ(tp, tcp_wstamp_ns);
	e->delivered_mstamp_us = BPF_CORE_READ(tp, delivered_mstamp);
	e->rack_mstamp_us = BPF_CORE_READ(tp, rack.mstamp);
	e->rack_rtt_us = BPF_CORE_READ(tp, rack.rtt_us);
	e->rack_reo_wnd_steps = BPF_CORE_READ(tp, rack.reo_wnd_steps);
	e->reordering = BPF_CORE_READ(tp, reordering);
	e->reord_seen = BPF_CORE_READ(tp, reord_seen);
	e->snd_una = BPF_CORE_READ(tp, snd_una);
	e->snd_nxt = BPF_CORE_READ(tp, snd_nxt);
	e->packets_out = BPF_CORE_READ(tp, packets_out);
	e->sacked_out = BPF_CORE_READ(tp, sacked_out);
	e->lost_out = BPF_CORE_READ(tp, lost_out);
	e->retrans_out = BPF_CORE_READ(tp, retrans_out);
	e->lost = BPF_CORE_READ(tp, lost);
	e->delivered = BPF_CORE_READ(tp, delivered);
	e->cwnd = BPF_CORE_READ(tp, snd_cwnd);
	e->srtt_us = BPF_CORE_READ(tp, srtt_us) >> 3;
	e->ca_state = BPF_CORE_READ_BITFIELD_PROBED(icsk, icsk_ca_state);
	e->min_rtt_us = BPF_CORE_READ(b, min_rtt_us);
	e->cycle_mstamp_us = BPF_CORE_READ(b, cycle_mstamp);
	e->bw = BPF_CORE_READ(b, bw.s[0].v);
	e->pacing_gain = BPF_CORE_READ_BITFIELD_PROBED(b, pacing_gain);
	e->cycle_idx = BPF_CORE_READ_BITFIELD_PROBED(b, cycle_idx);
	e->mode = BPF_CORE_READ_BITFIELD_PROBED(b, mode);
	e->lt_use_bw = BPF_CORE_READ_BITFIELD_PROBED(b, lt_use_bw);
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(on_probe_ev, struct sock *sk, struct sk_buff *skb)
{
	struct ack_ev *e;

	if (!per_ack || !is_bbr(sk))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	__builtin_memset(e, 0, sizeof(*e));
	fill_sock(e, sk);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* tcp_retransmit_skb fires after the skb went out again: seq/end_seq from its control block,
 * skb_mstamp_ns its new send time. */
SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(on_retransmit, const struct sock *sk, const struct sk_buff *skb)
{
	struct tcp_skb_cb *cb = (struct tcp_skb_cb *)((void *)skb + bpf_core_field_offset(struct sk_buff, cb));
	struct ack_ev *e;

	if (!per_ack || !is_bbr((struct sock *)sk))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	__builtin_memset(e, 0, sizeof(*e));
	fill_sock(e, (struct sock *)sk);
	e->kind = 1;
	e->seq = BPF_CORE_READ(cb, seq);
	e->end_seq = BPF_CORE_READ(cb, end_seq);
	e->skb_mstamp_ns = BPF_CORE_READ(skb, skb_mstamp_ns);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
