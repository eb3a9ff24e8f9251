/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wbbr_core.h: BBR version 1 (Linux net/ipv4/tcp_bbr.c) as a BPF struct_ops congestion
 * control, with the hooks through which wificc's variants change it.
 *
 * BBR models the path with two numbers measured from the ACK stream: the bottleneck bandwidth,
 * a windowed maximum of delivery-rate samples over the last 10 packet-timed rounds, and the
 * round-trip propagation time, a windowed minimum of RTT samples over the last 10 seconds. It
 * paces at pacing_gain x bw and bounds the data in flight to cwnd_gain x bw x min_rtt (plus
 * allowances for TSO quanta and ACK aggregation). It does not back off on loss, except for
 * packet conservation in the first round of recovery and the long-term ("policer") bandwidth
 * estimate. The gains follow a state machine:
 *
 *          |
 *          V
 * +---> STARTUP  ----+      STARTUP   pacing and cwnd gain 2/ln 2 (739/256): the rate doubles
 * |        |         |                every round, until bw grew < 25% for 3 rounds
 * |        V         |      DRAIN     pacing gain 88/256 until inflight <= BDP
 * |      DRAIN   ----+      PROBE_BW  cwnd gain 2; pacing gain cycles through
 * |        |         |                {5/4, 3/4, 1, 1, 1, 1, 1, 1}, one phase per min_rtt,
 * |        V         |                starting at a random phase other than 3/4
 * +---> PROBE_BW ----+      PROBE_RTT every 10 s without a new min_rtt: cwnd 4 for
 * |      ^    |      |                max(200 ms, one round), then back
 * |      +----+      |
 * +---- PROBE_RTT <--+
 *
 * Everything Linux BBRv1 does is here, with the kernel's arithmetic (except that a value too
 * large for its field saturates where the kernel would truncate it): the first pacing rate
 * from the handshake RTT; pacing that only rises before the pipe is full, 1% below gain x bw;
 * the TSO quantum and the cwnd budget of three quanta (+2 segments in the probing phase); the
 * in-network estimate at the next departure time; restart after idle; packet conservation in
 * the first round of recovery and the saved cwnd; the ACK-aggregation allowance (extra_acked,
 * Linux >= 5.1, switchable off by the extra_acked knob); long-term bandwidth sampling, which
 * detects a token-bucket policer and then paces at its rate for 48 rounds. The min_rtt filter
 * takes a sample strictly below the minimum (or any sample once the window expired), as Linux
 * does since 5.10. What BPF changes is listed in wbbr.h (timestamps in ms, field widths) and
 * below (no get_info).
 *
 * Hooks. A variant defines any of these before including this file; each default is Linux:
 *
 *   WBBR_CYCLE_LEN(bbr)              phases in the PROBE_BW cycle (8; at most 32)
 *   WBBR_UP_GAIN(sk, bbr, rs)        pacing gain of phase 0, the probing phase (5/4)
 *   WBBR_DOWN_GAIN()                 pacing gain of phase 1, the draining phase (3/4)
 *   WBBR_FULL_BW_THRESH()            STARTUP goes on while bw grows by this factor (5/4)
 *   WBBR_CWND_MIN_TARGET()           minimum cwnd and PROBE_RTT's cwnd (4)
 *   WBBR_MIN_TSO_SEGS(sk)            the min_tso_segs callback (1 below 1.2 Mbit/s, else 2)
 *   WBBR_TSO_SEGS_GOAL(sk)           segments per skb BBR budgets for (bbr_tso_segs_goal)
 *   WBBR_BW_WIN_ROUNDS(bbr)          window of the bandwidth max filter in rounds (10)
 *   WBBR_MIN_RTT_WIN_MS(bbr)         window of the min_rtt filter in ms (10 000)
 *   WBBR_EXT_INIT(sk, bbr)           set up struct wbbr_ext at init
 *   WBBR_ON_PROBE_RTT(bbr)           PROBE_RTT was just entered
 *   WBBR_ON_CYCLE_START(bbr, bdp)    a PROBE_BW cycle starts (phase 0)
 *   WBBR_ON_CWND_UPDATE(bbr, bdp)    cwnd was just computed
 *
 * where bdp is bw x min_rtt in packets << BW_SCALE (the last two run only once min_rtt is
 * known). The gains are in 1/256.
 *
 * Kernel interface (net/ipv4/bpf_tcp_ca.c): a BPF congestion control may write snd_cwnd,
 * snd_ssthresh, app_limited (PROBE_RTT marks its samples app-limited), sk_pacing_rate and
 * sk_pacing_status (BBR asks for pacing by setting SK_PACING_NEEDED, which makes TCP pace on
 * its own timer when the qdisc is not fq), and its icsk_ca_priv. It may not provide get_info,
 * so `ss -i` shows no bbr:(bw, mrtt, ...) line for these algorithms.
 *
 * Source: Linux net/ipv4/tcp_bbr.c (v6.x); N. Cardwell et al., "BBR: Congestion-Based
 * Congestion Control", ACM Queue 14(5), 2016.
 */
#ifndef WBBR_CORE_H
#define WBBR_CORE_H

#include "wbbr.h"

/* ---- Constants of tcp_bbr.c ---- */

/* Phases in the Linux PROBE_BW cycle (CYCLE_LEN). */
#define BBR_CYCLE_LEN 8U
/* Window of the bandwidth max filter (rounds): CYCLE_LEN + 2 (bbr_bw_rtts). */
#define BBR_BW_RTTS (BBR_CYCLE_LEN + 2)
/* Window of the min_rtt filter: 10 s (bbr_min_rtt_win_sec), in ms. */
#define BBR_MIN_RTT_WIN_MS 10000U
/* Minimum time at the minimum cwnd in PROBE_RTT (ms, bbr_probe_rtt_mode_ms). */
#define BBR_PROBE_RTT_MODE_MS 200U
/* Below this pacing rate the TSO quantum is 1 segment (bits/s, bbr_min_tso_rate). */
#define BBR_MIN_TSO_RATE 1200000ULL
/* Pace this many percent below gain x bw (bbr_pacing_margin_percent). */
#define BBR_PACING_MARGIN_PERCENT 1ULL
/* STARTUP gain 2/ln 2 rounded up: 739/256, the smallest that doubles the rate every round. */
#define BBR_HIGH_GAIN (BBR_UNIT * 2885 / 1000 + 1)
/* DRAIN gain 1/2.885: 88/256, drains STARTUP's queue in about a round. */
#define BBR_DRAIN_GAIN (BBR_UNIT * 1000 / 2885)
/* PROBE_BW cwnd gain: 2, tolerates delayed and stretched ACKs. */
#define BBR_CWND_GAIN (BBR_UNIT * 2)
/* PROBE_BW phases 0 and 1: probe at 5/4, then drain at 3/4 (bbr_pacing_gain). */
#define BBR_UP_GAIN (BBR_UNIT * 5 / 4)
#define BBR_DOWN_GAIN (BBR_UNIT * 3 / 4)
/* Minimum cwnd (packets): two 2-packet ACK-every-other-packet sequences (bbr_cwnd_min_target). */
#define BBR_CWND_MIN_TARGET 4U
/* STARTUP ends after BBR_FULL_BW_CNT rounds growing by less than 5/4 (bbr_full_bw_thresh). */
#define BBR_FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define BBR_FULL_BW_CNT 3U
/* Long-term sampling: intervals of 4 to 16 rounds (bbr_lt_intvl_min_rtts). */
#define BBR_LT_INTVL_MIN_RTTS 4U
/* An interval is lossy from lost/delivered >= 50/256, about 20% (bbr_lt_loss_thresh). */
#define BBR_LT_LOSS_THRESH 50U
/* Two intervals' rates are consistent within 1/8 (bbr_lt_bw_ratio) ... */
#define BBR_LT_BW_RATIO (BBR_UNIT / 8)
/* ... or within 4 kbit/s, in bytes/s (bbr_lt_bw_diff). */
#define BBR_LT_BW_DIFF (4000 / 8)
/* Rounds paced at the long-term rate before probing again (bbr_lt_bw_max_rtts). */
#define BBR_LT_BW_MAX_RTTS 48U
/* Gain on the aggregation allowance: 1 (bbr_extra_acked_gain). */
#define BBR_EXTRA_ACKED_GAIN BBR_UNIT
/* Rounds per half of the aggregation max filter (bbr_extra_acked_win_rtts). */
#define BBR_EXTRA_ACKED_WIN_RTTS 5U
/* Packets ACKed in one aggregation epoch after which it restarts (bbr_ack_epoch_acked_reset_thresh). */
#define BBR_ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
/* The allowance is at most bw x 100 ms (bbr_extra_acked_max_us). */
#define BBR_EXTRA_ACKED_MAX_US (100U * 1000)
/* Largest values of the 20-bit ack_epoch_acked and 5-bit extra_acked_win_rtts fields. */
#define BBR_ACK_EPOCH_ACKED_MAX 0xFFFFFU
#define BBR_EXTRA_ACKED_WIN_RTTS_MAX 0x1FU
/* Full-sized skbs budgeted in flight: qdisc, TSO engine, receiver GRO (bbr_quantization_budget). */
#define BBR_QUANTA_IN_FLIGHT 3U
/* Extra segments in the probing phase so that gain cycling lifts inflight above small BDPs. */
#define BBR_PROBE_PHASE_EXTRA_SEGS 2U
/* Cap of bbr_tso_segs_goal (segments). */
#define BBR_TSO_SEGS_GOAL_MAX 0x7FU
/* include/net/tcp.h: any user may select this algorithm, as tcp_bbr.c registers itself. */
#define TCP_CONG_NON_RESTRICTED 0x1U

/* ---- Default hooks: Linux BBRv1 ---- */

/* tcp_bbr.c bbr_min_tso_segs: 1 segment below 1.2 Mbit/s, else 2. */
static __always_inline __u32 bbr_linux_min_tso_segs(const struct sock *sk)
{
	return sk->sk_pacing_rate < (BBR_MIN_TSO_RATE >> 3) ? 1 : 2;
}

#ifndef WBBR_CYCLE_LEN
#define WBBR_CYCLE_LEN(bbr) BBR_CYCLE_LEN
#endif
#ifndef WBBR_UP_GAIN
#define WBBR_UP_GAIN(sk, bbr, rs) BBR_UP_GAIN
#endif
#ifndef WBBR_DOWN_GAIN
#define WBBR_DOWN_GAIN() BBR_DOWN_GAIN
#endif
#ifndef WBBR_FULL_BW_THRESH
#define WBBR_FULL_BW_THRESH() BBR_FULL_BW_THRESH
#endif
#ifndef WBBR_CWND_MIN_TARGET
#define WBBR_CWND_MIN_TARGET() BBR_CWND_MIN_TARGET
#endif
#ifndef WBBR_MIN_TSO_SEGS
#define WBBR_MIN_TSO_SEGS(sk) bbr_linux_min_tso_segs(sk)
#endif
#ifndef WBBR_TSO_SEGS_GOAL
#define WBBR_TSO_SEGS_GOAL(sk) bbr_linux_tso_segs_goal(sk)
#endif
#ifndef WBBR_BW_WIN_ROUNDS
#define WBBR_BW_WIN_ROUNDS(bbr) BBR_BW_RTTS
#endif
#ifndef WBBR_MIN_RTT_WIN_MS
#define WBBR_MIN_RTT_WIN_MS(bbr) BBR_MIN_RTT_WIN_MS
#endif
#ifndef WBBR_EXT_INIT
#define WBBR_EXT_INIT(sk, bbr) ((void)0)
#endif
#ifndef WBBR_ON_PROBE_RTT
#define WBBR_ON_PROBE_RTT(bbr) ((void)0)
#endif
#ifndef WBBR_ON_CYCLE_START
#define WBBR_ON_CYCLE_START(bbr, bdp) ((void)0)
#endif
#ifndef WBBR_ON_CWND_UPDATE
#define WBBR_ON_CWND_UPDATE(bbr, bdp) ((void)0)
#endif

/*
 * tcp_bbr.c bbr_tso_segs_goal: about one pacing-shift interval of data (pacing_rate >>
 * sk_pacing_shift, 1 ms at the default shift 10), at most a legacy GSO skb, at least
 * min_tso_segs, at most 127 segments.
 */
static __always_inline __u32 bbr_linux_tso_segs_goal(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u64 bytes = wbbr_min(sk->sk_pacing_rate >> sk->sk_pacing_shift,
			       GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
	__u32 segs = wbbr_max((__u32)(bytes / tp->mss_cache), WBBR_MIN_TSO_SEGS(sk));

	return wbbr_min(segs, BBR_TSO_SEGS_GOAL_MAX);
}

/* ---- The model ---- */

static __always_inline __u32 bbr_max_bw(const struct wbbr *bbr)
{
	return bbr->bw.s[0].v;
}

/* The bandwidth in use: the long-term estimate while policed, else the max filter. */
static __always_inline __u32 bbr_bw(const struct wbbr *bbr)
{
	return bbr->lt_use_bw ? bbr->lt_bw : bbr_max_bw(bbr);
}

/* bw x min_rtt in packets << BW_SCALE, for the variants' BDP evaluations. */
static __always_inline __u64 bbr_bdp_scaled(const struct wbbr *bbr)
{
	return (__u64)bbr_bw(bbr) * bbr->min_rtt_us;
}

/* Max excess ACKed over the last 5 to 10 rounds. */
static __always_inline __u32 bbr_extra_acked(const struct wbbr *bbr)
{
	return wbbr_max(bbr->extra_acked[0], bbr->extra_acked[1]);
}

/* The cwnd gain of the current mode (tcp_bbr.c bbr_update_gains). */
static __always_inline __u32 bbr_cwnd_gain(const struct wbbr *bbr)
{
	switch (bbr->mode) {
	case WBBR_STARTUP:
	case WBBR_DRAIN:
		return BBR_HIGH_GAIN;
	case WBBR_PROBE_BW:
		return BBR_CWND_GAIN;
	default:
		return BBR_UNIT;
	}
}

/*
 * tcp_bbr.c bbr_rate_bytes_per_sec: bw (packets/us << BW_SCALE) times gain in bytes per
 * second, 1% below, in the kernel's order of operations. The guard saturates where the last
 * product would leave 64 bits (rates above about 10 Tbit/s at the largest gains).
 */
static __u64 bbr_rate_bytes_per_sec(const struct sock *sk, __u64 rate, __u32 gain)
{
	const __u64 per_sec = USEC_PER_SEC / 100 * (100 - BBR_PACING_MARGIN_PERCENT);

	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	if (rate > ~0ULL / per_sec)
		return ~0ULL >> BW_SCALE;
	return rate * per_sec >> BW_SCALE;
}

/* tcp_bbr.c bbr_bw_to_pacing_rate */
static __always_inline __u64 bbr_bw_to_pacing_rate(const struct sock *sk, __u64 bw, __u32 gain)
{
	return wbbr_min(bbr_rate_bytes_per_sec(sk, bw, gain), (__u64)sk->sk_max_pacing_rate);
}

/* tcp_bbr.c bbr_init_pacing_rate_from_rtt: high_gain x cwnd / srtt (1 ms before any sample). */
static void bbr_init_pacing_rate_from_rtt(struct sock *sk, struct wbbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 rtt_us = USEC_PER_MSEC;

	if (tp->srtt_us) {
		rtt_us = wbbr_max(tp->srtt_us >> 3, 1U);
		bbr->has_seen_rtt = 1;
	}
	sk->sk_pacing_rate =
		bbr_bw_to_pacing_rate(sk, (__u64)tp->snd_cwnd * BW_UNIT / rtt_us, BBR_HIGH_GAIN);
}

/* tcp_bbr.c bbr_set_pacing_rate: before the pipe is full the rate only rises. */
static void bbr_set_pacing_rate(struct sock *sk, struct wbbr *bbr, __u32 bw, __u32 gain)
{
	__u64 rate = bbr_bw_to_pacing_rate(sk, bw, gain);

	if (!bbr->has_seen_rtt && tcp_sk(sk)->srtt_us)
		bbr_init_pacing_rate_from_rtt(sk, bbr);
	if (bbr->full_bw_reached || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

/* tcp_bbr.c bbr_save_cwnd: remember the last good cwnd before recovery or PROBE_RTT cut it. */
static void bbr_save_cwnd(const struct sock *sk, struct wbbr *bbr)
{
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;

	if (bbr->prev_ca_state < TCP_CA_Recovery && bbr->mode != WBBR_PROBE_RTT)
		bbr->prior_cwnd = cwnd;
	else
		bbr->prior_cwnd = wbbr_max(bbr->prior_cwnd, cwnd);
}

/* tcp_bbr.c bbr_bdp: ceil(bw x min_rtt x gain) packets; TCP_INIT_CWND before any RTT sample. */
static __u32 bbr_bdp(const struct wbbr *bbr, __u32 bw, __u32 gain)
{
	__u64 w;

	if (bbr->min_rtt_us == ~0U)
		return TCP_INIT_CWND;
	w = (__u64)bw * bbr->min_rtt_us;
	return (__u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* tcp_bbr.c bbr_quantization_budget: room for three TSO quanta, even, +2 in phase 0. */
static __u32 bbr_quantization_budget(const struct sock *sk, const struct wbbr *bbr, __u32 cwnd)
{
	cwnd += BBR_QUANTA_IN_FLIGHT * WBBR_TSO_SEGS_GOAL(sk);
	cwnd = (cwnd + 1) & ~1U;
	if (bbr->mode == WBBR_PROBE_BW && bbr->cycle_idx == 0)
		cwnd += BBR_PROBE_PHASE_EXTRA_SEGS;
	return cwnd;
}

/* tcp_bbr.c bbr_inflight: the in-flight target for a gain. */
static __u32 bbr_inflight(const struct sock *sk, const struct wbbr *bbr, __u32 bw, __u32 gain)
{
	return bbr_quantization_budget(sk, bbr, bbr_bdp(bbr, bw, gain));
}

/*
 * tcp_bbr.c bbr_packets_in_net_at_edt: inflight minus what the bottleneck delivers before the
 * next skb's earliest departure time, plus that skb when probing.
 */
static __u32 bbr_packets_in_net_at_edt(const struct sock *sk, const struct wbbr *bbr,
				       __u32 inflight_now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u64 now_ns = tp->tcp_clock_cache;
	__u64 edt_ns = wbbr_max(tp->tcp_wstamp_ns, now_ns);
	__u64 interval_us = (edt_ns - now_ns) / NSEC_PER_USEC;
	__u64 interval_delivered = (__u64)bbr_bw(bbr) * interval_us >> BW_SCALE;
	__u32 inflight_at_edt = inflight_now;

	if (bbr->pacing_gain > BBR_UNIT)
		inflight_at_edt += WBBR_TSO_SEGS_GOAL(sk);
	if (interval_delivered >= inflight_at_edt)
		return 0;
	return inflight_at_edt - (__u32)interval_delivered;
}

/* tcp_bbr.c bbr_ack_aggregation_cwnd: extra cwnd for ACK aggregation, at most bw x 100 ms. */
static __u32 bbr_ack_aggregation_cwnd(const struct wbbr *bbr)
{
	__u32 max_aggr_cwnd, aggr_cwnd;

	if (!KNOB(extra_acked) || !bbr->full_bw_reached)
		return 0;
	max_aggr_cwnd = (__u32)((__u64)bbr_bw(bbr) * BBR_EXTRA_ACKED_MAX_US / BW_UNIT);
	aggr_cwnd = (BBR_EXTRA_ACKED_GAIN * bbr_extra_acked(bbr)) >> BBR_SCALE;
	return wbbr_min(aggr_cwnd, max_aggr_cwnd);
}

/*
 * tcp_bbr.c bbr_set_cwnd_to_recover_or_restore: packet conservation in the first round of
 * recovery (send as much as was ACKed), restore the saved cwnd on leaving it. Returns whether
 * conservation applies; the cwnd goes to *new_cwnd.
 */
static bool bbr_set_cwnd_to_recover_or_restore(struct sock *sk, struct wbbr *bbr,
					       const struct rate_sample *rs, __u32 acked,
					       __u32 *new_cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u8 prev_state = bbr->prev_ca_state;
	__u8 state = inet_csk(sk)->icsk_ca_state;
	__u32 cwnd = tp->snd_cwnd;

	if (rs->losses > 0)
		cwnd = (__u32)wbbr_max((__s32)cwnd - rs->losses, 1);

	if (state == TCP_CA_Recovery && prev_state != TCP_CA_Recovery) {
		bbr->packet_conservation = 1;
		bbr->next_rtt_delivered = tp->delivered;
		cwnd = tcp_packets_in_flight(tp) + acked;
	} else if (prev_state >= TCP_CA_Recovery && state < TCP_CA_Recovery) {
		cwnd = wbbr_max(cwnd, bbr->prior_cwnd);
		bbr->packet_conservation = 0;
	}
	bbr->prev_ca_state = state;

	if (bbr->packet_conservation) {
		*new_cwnd = wbbr_max(cwnd, tcp_packets_in_flight(tp) + acked);
		return true;
	}
	*new_cwnd = cwnd;
	return false;
}

/* tcp_bbr.c bbr_set_cwnd: slow-start toward the target, or snap down to it once full. */
static void bbr_set_cwnd(struct sock *sk, struct wbbr *bbr, const struct rate_sample *rs,
			 __u32 bw, __u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 acked = rs->acked_sacked;
	__u32 cwnd = tp->snd_cwnd, target_cwnd;

	if (acked && !bbr_set_cwnd_to_recover_or_restore(sk, bbr, rs, acked, &cwnd)) {
		target_cwnd = bbr_bdp(bbr, bw, gain) + bbr_ack_aggregation_cwnd(bbr);
		target_cwnd = bbr_quantization_budget(sk, bbr, target_cwnd);
		if (bbr->full_bw_reached)
			cwnd = wbbr_min(cwnd + acked, target_cwnd);
		else if (cwnd < target_cwnd || tp->delivered < TCP_INIT_CWND)
			cwnd = cwnd + acked;
		cwnd = wbbr_max(cwnd, WBBR_CWND_MIN_TARGET());
	}
	tp->snd_cwnd = wbbr_min(cwnd, tp->snd_cwnd_clamp);
	if (bbr->mode == WBBR_PROBE_RTT)
		tp->snd_cwnd = wbbr_min(tp->snd_cwnd, WBBR_CWND_MIN_TARGET());
}

/*
 * tcp_bbr.c bbr_is_next_cycle_phase: a phase lasts min_rtt; probing also waits for inflight to
 * reach gain x BDP (or a loss); draining ends early once inflight is down to the BDP.
 */
static bool bbr_is_next_cycle_phase(const struct sock *sk, const struct wbbr *bbr,
				    const struct rate_sample *rs)
{
	bool is_full_length =
		tcp_stamp_us_delta(tcp_sk(sk)->delivered_mstamp, bbr->cycle_mstamp) >
		bbr->min_rtt_us;
	__u32 inflight, bw;

	if (bbr->pacing_gain == BBR_UNIT)
		return is_full_length;

	inflight = bbr_packets_in_net_at_edt(sk, bbr, rs->prior_in_flight);
	bw = bbr_max_bw(bbr);
	if (bbr->pacing_gain > BBR_UNIT)
		return is_full_length &&
		       (rs->losses || inflight >= bbr_inflight(sk, bbr, bw, bbr->pacing_gain));
	return is_full_length || inflight <= bbr_inflight(sk, bbr, bw, BBR_UNIT);
}

/* tcp_bbr.c bbr_advance_cycle_phase, for a cycle whose length the variant may change. */
static void bbr_advance_cycle_phase(const struct sock *sk, struct wbbr *bbr)
{
	__u32 next = bbr->cycle_idx + 1;

	bbr->cycle_idx = next >= WBBR_CYCLE_LEN(bbr) ? 0 : next;
	bbr->cycle_mstamp = tcp_sk(sk)->delivered_mstamp;
	if (bbr->cycle_idx == 0 && bbr->min_rtt_us != ~0U)
		WBBR_ON_CYCLE_START(bbr, bbr_bdp_scaled(bbr));
}

static void bbr_update_cycle_phase(const struct sock *sk, struct wbbr *bbr,
				   const struct rate_sample *rs)
{
	if (bbr->mode == WBBR_PROBE_BW && bbr_is_next_cycle_phase(sk, bbr, rs))
		bbr_advance_cycle_phase(sk, bbr);
}

/* tcp_bbr.c bbr_reset_probe_bw_mode: enter PROBE_BW at a random phase, never the draining one. */
static void bbr_reset_probe_bw_mode(const struct sock *sk, struct wbbr *bbr)
{
	__u32 len = WBBR_CYCLE_LEN(bbr);

	bbr->mode = WBBR_PROBE_BW;
	bbr->cycle_idx = len - 1 - wbbr_random_below(len - 1);
	bbr_advance_cycle_phase(sk, bbr);
}

/* tcp_bbr.c bbr_reset_mode */
static void bbr_reset_mode(const struct sock *sk, struct wbbr *bbr)
{
	if (bbr->full_bw_reached)
		bbr_reset_probe_bw_mode(sk, bbr);
	else
		bbr->mode = WBBR_STARTUP;
}

/* ---- Long-term (policer) bandwidth ---- */

/* tcp_bbr.c bbr_reset_lt_bw_sampling_interval */
static void bbr_reset_lt_bw_sampling_interval(const struct sock *sk, struct wbbr *bbr)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	bbr->lt_last_stamp = (__u32)(tp->delivered_mstamp / USEC_PER_MSEC);
	bbr->lt_last_delivered = tp->delivered;
	bbr->lt_last_lost = tp->lost;
	bbr->lt_rtt_cnt = 0;
}

/* tcp_bbr.c bbr_reset_lt_bw_sampling */
static void bbr_reset_lt_bw_sampling(const struct sock *sk, struct wbbr *bbr)
{
	bbr->lt_bw = 0;
	bbr->lt_use_bw = 0;
	bbr->lt_is_sampling = 0;
	bbr_reset_lt_bw_sampling_interval(sk, bbr);
}

/* tcp_bbr.c bbr_lt_bw_interval_done: two consistent lossy intervals mean a policer. */
static void bbr_lt_bw_interval_done(const struct sock *sk, struct wbbr *bbr, __u32 bw)
{
	__u32 diff;

	if (bbr->lt_bw) {
		diff = bw > bbr->lt_bw ? bw - bbr->lt_bw : bbr->lt_bw - bw;
		if ((__u64)diff * BBR_UNIT <= (__u64)BBR_LT_BW_RATIO * bbr->lt_bw ||
		    bbr_rate_bytes_per_sec(sk, diff, BBR_UNIT) <= BBR_LT_BW_DIFF) {
			bbr->lt_bw = (__u32)(((__u64)bw + bbr->lt_bw) >> 1);
			bbr->lt_use_bw = 1;
			bbr->pacing_gain = BBR_UNIT;
			bbr->lt_rtt_cnt = 0;
			return;
		}
	}
	bbr->lt_bw = bw;
	bbr_reset_lt_bw_sampling_interval(sk, bbr);
}

/*
 * tcp_bbr.c bbr_lt_bw_sampling: measure the delivery rate over intervals that start and end
 * with a loss; a policer shows as two such intervals with high loss and the same rate. Takes
 * the two rate-sample fields it reads, so that set_state can pass an RTO's "one loss".
 */
static void bbr_lt_bw_sampling(const struct sock *sk, struct wbbr *bbr, int losses,
			       bool is_app_limited)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 lost, delivered, t;
	__u64 bw;

	if (bbr->lt_use_bw) {
		if (bbr->mode == WBBR_PROBE_BW && bbr->round_start &&
		    ++bbr->lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS) {
			bbr_reset_lt_bw_sampling(sk, bbr);
			bbr_reset_probe_bw_mode(sk, bbr);
		}
		return;
	}
	if (!bbr->lt_is_sampling) {
		if (!losses)
			return;
		bbr_reset_lt_bw_sampling_interval(sk, bbr);
		bbr->lt_is_sampling = 1;
	}
	if (is_app_limited) {
		bbr_reset_lt_bw_sampling(sk, bbr);
		return;
	}
	if (bbr->round_start)
		bbr->lt_rtt_cnt++;
	if (bbr->lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS)
		return;
	if (bbr->lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS) {
		bbr_reset_lt_bw_sampling(sk, bbr);
		return;
	}
	if (!losses)
		return;

	lost = tp->lost - bbr->lt_last_lost;
	delivered = tp->delivered - bbr->lt_last_delivered;
	if (!delivered || ((__u64)lost << BBR_SCALE) < (__u64)BBR_LT_LOSS_THRESH * delivered)
		return;

	t = (__u32)(tp->delivered_mstamp / USEC_PER_MSEC) - bbr->lt_last_stamp;
	if ((__s32)t < 1)
		return;
	if (t >= ~0U / USEC_PER_MSEC) {
		bbr_reset_lt_bw_sampling(sk, bbr);
		return;
	}
	bw = (__u64)delivered * BW_UNIT / (t * USEC_PER_MSEC);
	bbr_lt_bw_interval_done(sk, bbr, (__u32)bw);
}

/* ---- Per-ACK model update ---- */

/* tcp_bbr.c bbr_update_bw: count rounds and feed the delivery-rate sample to the max filter. */
static void bbr_update_bw(const struct sock *sk, struct wbbr *bbr, const struct rate_sample *rs)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u64 bw;

	bbr->round_start = 0;
	if (rs->delivered < 0 || rs->interval_us <= 0)
		return;

	if (!before(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tp->delivered;
		bbr->rtt_cnt++;
		bbr->round_start = 1;
		bbr->packet_conservation = 0;
	}

	bbr_lt_bw_sampling(sk, bbr, rs->losses, rs->is_app_limited);

	bw = (__u64)rs->delivered * BW_UNIT / (__u64)rs->interval_us;
	bw = wbbr_min(bw, 0xFFFFFFFFULL);
	if (!rs->is_app_limited || bw >= bbr_max_bw(bbr))
		minmax_running_max(&bbr->bw, WBBR_BW_WIN_ROUNDS(bbr), bbr->rtt_cnt, (__u32)bw);
}

/*
 * The current aggregation window's slot. BPF may not index the socket with a variable, so the
 * two slots are chosen by a branch.
 */
static __always_inline __u16 bbr_cur_extra_acked(const struct wbbr *bbr)
{
	return bbr->extra_acked_win_idx ? bbr->extra_acked[1] : bbr->extra_acked[0];
}

static __always_inline void bbr_set_extra_acked(struct wbbr *bbr, __u16 v)
{
	if (bbr->extra_acked_win_idx)
		bbr->extra_acked[1] = v;
	else
		bbr->extra_acked[0] = v;
}

/*
 * tcp_bbr.c bbr_update_ack_aggregation: the most data ACKed beyond bw x elapsed in an epoch,
 * kept as a max over two windows of 5 rounds each.
 */
static void bbr_update_ack_aggregation(const struct sock *sk, struct wbbr *bbr,
				       const struct rate_sample *rs)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 epoch_us, expected_acked, extra_acked;

	if (!KNOB(extra_acked) || rs->acked_sacked == 0 || rs->delivered < 0 ||
	    rs->interval_us <= 0)
		return;

	if (bbr->round_start) {
		bbr->extra_acked_win_rtts =
			wbbr_min(BBR_EXTRA_ACKED_WIN_RTTS_MAX, bbr->extra_acked_win_rtts + 1);
		if (bbr->extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS) {
			bbr->extra_acked_win_rtts = 0;
			bbr->extra_acked_win_idx = bbr->extra_acked_win_idx ? 0 : 1;
			bbr_set_extra_acked(bbr, 0);
		}
	}

	epoch_us = tcp_stamp_us_delta(tp->delivered_mstamp, bbr->ack_epoch_mstamp);
	expected_acked = (__u32)((__u64)bbr_bw(bbr) * epoch_us / BW_UNIT);
	if (bbr->ack_epoch_acked <= expected_acked ||
	    bbr->ack_epoch_acked + rs->acked_sacked >= BBR_ACK_EPOCH_ACKED_RESET_THRESH) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = tp->delivered_mstamp;
		expected_acked = 0;
	}

	bbr->ack_epoch_acked =
		wbbr_min(BBR_ACK_EPOCH_ACKED_MAX, bbr->ack_epoch_acked + rs->acked_sacked);
	extra_acked = bbr->ack_epoch_acked - expected_acked;
	extra_acked = wbbr_min(extra_acked, tp->snd_cwnd);
	if (extra_acked > bbr_cur_extra_acked(bbr))
		bbr_set_extra_acked(bbr, (__u16)wbbr_min(extra_acked, 0xFFFFU));
}

/* tcp_bbr.c bbr_check_full_bw_reached: full after 3 rounds of growth below the threshold. */
static void bbr_check_full_bw_reached(struct wbbr *bbr, const struct rate_sample *rs)
{
	__u32 bw_thresh;

	if (bbr->full_bw_reached || !bbr->round_start || rs->is_app_limited)
		return;

	bw_thresh = (__u32)((__u64)bbr->full_bw * WBBR_FULL_BW_THRESH() >> BBR_SCALE);
	if (bbr_max_bw(bbr) >= bw_thresh) {
		bbr->full_bw = bbr_max_bw(bbr);
		bbr->full_bw_cnt = 0;
		return;
	}
	++bbr->full_bw_cnt;
	bbr->full_bw_reached = bbr->full_bw_cnt >= BBR_FULL_BW_CNT;
}

/* tcp_bbr.c bbr_check_drain: STARTUP -> DRAIN when full; DRAIN -> PROBE_BW when drained. */
static void bbr_check_drain(struct sock *sk, struct wbbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (bbr->mode == WBBR_STARTUP && bbr->full_bw_reached) {
		bbr->mode = WBBR_DRAIN;
		tp->snd_ssthresh = bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT);
	}
	if (bbr->mode == WBBR_DRAIN &&
	    bbr_packets_in_net_at_edt(sk, bbr, tcp_packets_in_flight(tp)) <=
		    bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT))
		bbr_reset_probe_bw_mode(sk, bbr);
}

/* tcp_bbr.c bbr_check_probe_rtt_done: leave PROBE_RTT once its time is up, restoring cwnd. */
static void bbr_check_probe_rtt_done(struct sock *sk, struct wbbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 now = wbbr_now_ms(tp);

	if (!(bbr->probe_rtt_done_stamp && after(now, bbr->probe_rtt_done_stamp)))
		return;

	bbr->min_rtt_stamp = now;
	tp->snd_cwnd = wbbr_max(tp->snd_cwnd, bbr->prior_cwnd);
	bbr_reset_mode(sk, bbr);
}

/*
 * tcp_bbr.c bbr_update_min_rtt: the min_rtt filter, and PROBE_RTT: when the filter expires,
 * hold inflight at the minimum cwnd for max(200 ms, one round) to measure the path's RTT
 * without our own queue.
 */
static void bbr_update_min_rtt(struct sock *sk, struct wbbr *bbr, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 now = wbbr_now_ms(tp);
	bool filter_expired = after(now, bbr->min_rtt_stamp + WBBR_MIN_RTT_WIN_MS(bbr));
	__u32 inflight;

	if (rs->rtt_us >= 0 &&
	    (rs->rtt_us < (__s64)bbr->min_rtt_us || (filter_expired && !rs->is_ack_delayed))) {
		bbr->min_rtt_us = (__u32)wbbr_min(rs->rtt_us, 0xFFFFFFFFLL);
		bbr->min_rtt_stamp = now;
	}

	if (BBR_PROBE_RTT_MODE_MS > 0 && filter_expired && !bbr->idle_restart &&
	    bbr->mode != WBBR_PROBE_RTT) {
		bbr->mode = WBBR_PROBE_RTT;
		bbr_save_cwnd(sk, bbr);
		bbr->probe_rtt_done_stamp = 0;
		WBBR_ON_PROBE_RTT(bbr);
	}

	if (bbr->mode == WBBR_PROBE_RTT) {
		inflight = tcp_packets_in_flight(tp);
		/* Samples taken now are below the path's rate: mark them app-limited. */
		tp->app_limited = (tp->delivered + inflight) ?: 1;
		if (!bbr->probe_rtt_done_stamp && inflight <= WBBR_CWND_MIN_TARGET()) {
			bbr->probe_rtt_done_stamp = now + BBR_PROBE_RTT_MODE_MS;
			bbr->probe_rtt_round_done = 0;
			bbr->next_rtt_delivered = tp->delivered;
		} else if (bbr->probe_rtt_done_stamp) {
			if (bbr->round_start)
				bbr->probe_rtt_round_done = 1;
			if (bbr->probe_rtt_round_done)
				bbr_check_probe_rtt_done(sk, bbr);
		}
	}
	if (rs->delivered > 0)
		bbr->idle_restart = 0;
}

/* tcp_bbr.c bbr_update_gains (the cwnd gain follows from the mode: bbr_cwnd_gain). */
static void bbr_update_gains(const struct sock *sk, struct wbbr *bbr,
			     const struct rate_sample *rs)
{
	__u32 gain;

	switch (bbr->mode) {
	case WBBR_STARTUP:
		gain = BBR_HIGH_GAIN;
		break;
	case WBBR_DRAIN:
		gain = BBR_DRAIN_GAIN;
		break;
	case WBBR_PROBE_BW:
		if (bbr->lt_use_bw)
			gain = BBR_UNIT;
		else if (bbr->cycle_idx == 0)
			gain = WBBR_UP_GAIN(sk, bbr, rs);
		else if (bbr->cycle_idx == 1)
			gain = WBBR_DOWN_GAIN();
		else
			gain = BBR_UNIT;
		break;
	default:
		gain = BBR_UNIT;
		break;
	}
	bbr->pacing_gain = wbbr_min(gain, WBBR_PACING_GAIN_MAX);
}

/* tcp_bbr.c bbr_update_model */
static void bbr_update_model(struct sock *sk, struct wbbr *bbr, const struct rate_sample *rs)
{
	bbr_update_bw(sk, bbr, rs);
	bbr_update_ack_aggregation(sk, bbr, rs);
	bbr_update_cycle_phase(sk, bbr, rs);
	bbr_check_full_bw_reached(bbr, rs);
	bbr_check_drain(sk, bbr);
	bbr_update_min_rtt(sk, bbr, rs);
	bbr_update_gains(sk, bbr, rs);
}

/* ---- The tcp_congestion_ops callbacks ---- */

/* tcp_bbr.c bbr_main: the cong_control callback, run on every ACK with its rate sample. */
SEC("struct_ops")
void BPF_PROG(wbbr_main, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct wbbr *bbr = wbbr_of(sk);
	__u32 bw;

	bbr_update_model(sk, bbr, rs);
	bw = bbr_bw(bbr);
	bbr_set_pacing_rate(sk, bbr, bw, bbr->pacing_gain);
	bbr_set_cwnd(sk, bbr, rs, bw, bbr_cwnd_gain(bbr));
	if (bbr->min_rtt_us != ~0U)
		WBBR_ON_CWND_UPDATE(bbr, bbr_bdp_scaled(bbr));
}

/* tcp_bbr.c bbr_init */
SEC("struct_ops")
void BPF_PROG(wbbr_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct wbbr *bbr = wbbr_of(sk);

	bbr->prior_cwnd = 0;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	bbr->rtt_cnt = 0;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->prev_ca_state = TCP_CA_Open;
	bbr->packet_conservation = 0;

	bbr->probe_rtt_done_stamp = 0;
	bbr->probe_rtt_round_done = 0;
	bbr->min_rtt_us = tcp_min_rtt(tp);
	bbr->min_rtt_stamp = wbbr_now_ms(tp);

	minmax_reset(&bbr->bw, bbr->rtt_cnt, 0);

	bbr->has_seen_rtt = 0;
	bbr_init_pacing_rate_from_rtt(sk, bbr);

	bbr->round_start = 0;
	bbr->idle_restart = 0;
	bbr->full_bw_reached = 0;
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->cycle_mstamp = 0;
	bbr->cycle_idx = 0;
	bbr_reset_lt_bw_sampling(sk, bbr);
	bbr->mode = WBBR_STARTUP;
	bbr->pacing_gain = BBR_HIGH_GAIN;

	bbr->ack_epoch_mstamp = tp->tcp_mstamp;
	bbr->ack_epoch_acked = 0;
	bbr->extra_acked_win_rtts = 0;
	bbr->extra_acked_win_idx = 0;
	bbr->extra_acked[0] = 0;
	bbr->extra_acked[1] = 0;

	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
	WBBR_EXT_INIT(sk, bbr);
}

/* tcp_bbr.c bbr_sndbuf_expand: 3 x cwnd of send buffer, since BBR may slow-start in recovery. */
SEC("struct_ops")
__u32 BPF_PROG(wbbr_sndbuf_expand, struct sock *sk)
{
	return 3;
}

/* tcp_bbr.c bbr_undo_cwnd: a spurious loss; restart full-pipe detection and LT sampling. */
SEC("struct_ops")
__u32 BPF_PROG(wbbr_undo_cwnd, struct sock *sk)
{
	struct wbbr *bbr = wbbr_of(sk);

	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr_reset_lt_bw_sampling(sk, bbr);
	return tcp_sk(sk)->snd_cwnd;
}

/* tcp_bbr.c bbr_ssthresh: entering recovery; remember cwnd, leave ssthresh alone. */
SEC("struct_ops")
__u32 BPF_PROG(wbbr_ssthresh, struct sock *sk)
{
	bbr_save_cwnd(sk, wbbr_of(sk));
	return tcp_sk(sk)->snd_ssthresh;
}

/* tcp_bbr.c bbr_cwnd_event: restarting after idle paces at bw, or may end PROBE_RTT. */
SEC("struct_ops")
void BPF_PROG(wbbr_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct wbbr *bbr = wbbr_of(sk);

	if (event != CA_EVENT_TX_START || !tp->app_limited)
		return;
	bbr->idle_restart = 1;
	bbr->ack_epoch_mstamp = tp->tcp_mstamp;
	bbr->ack_epoch_acked = 0;
	if (bbr->mode == WBBR_PROBE_BW)
		bbr_set_pacing_rate(sk, bbr, bbr_bw(bbr), BBR_UNIT);
	else if (bbr->mode == WBBR_PROBE_RTT)
		bbr_check_probe_rtt_done(sk, bbr);
}

/* tcp_bbr.c bbr_set_state: an RTO ends the round and counts as a loss for LT sampling. */
SEC("struct_ops")
void BPF_PROG(wbbr_set_state, struct sock *sk, __u8 new_state)
{
	struct wbbr *bbr = wbbr_of(sk);

	if (new_state != TCP_CA_Loss)
		return;
	bbr->prev_ca_state = TCP_CA_Loss;
	bbr->full_bw = 0;
	bbr->round_start = 1;
	bbr_lt_bw_sampling(sk, bbr, 1, false);
}

/* The min_tso_segs callback: the smallest skb TCP may build, in segments. */
SEC("struct_ops")
__u32 BPF_PROG(wbbr_min_tso_segs, struct sock *sk)
{
	return WBBR_MIN_TSO_SEGS(sk);
}

#define WBBR_STR2(x) #x
#define WBBR_STR(x) WBBR_STR2(x)

/* The struct_ops map: its name is the algorithm's name. */
SEC(".struct_ops")
struct tcp_congestion_ops WBBR_NAME = {
	.init = (void *)wbbr_init,
	.cong_control = (void *)wbbr_main,
	.sndbuf_expand = (void *)wbbr_sndbuf_expand,
	.undo_cwnd = (void *)wbbr_undo_cwnd,
	.cwnd_event = (void *)wbbr_cwnd_event,
	.ssthresh = (void *)wbbr_ssthresh,
	.min_tso_segs = (void *)wbbr_min_tso_segs,
	.set_state = (void *)wbbr_set_state,
	.flags = TCP_CONG_NON_RESTRICTED,
	.name = WBBR_STR(WBBR_NAME),
};

char _license[] SEC("license") = "GPL";

#endif /* WBBR_CORE_H */
