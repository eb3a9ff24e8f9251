// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbbr_pg: BBR-PG, BBRv1 with RTT-proportional probing, a time-based bandwidth window and a
 * randomised PROBE_RTT, for fairness between flows of different RTTs; registered as "wbbr_pg".
 *
 * Between BBRv1 flows the one with the longer RTT takes more than its share: its cwnd cap
 * (2 x bw x min_rtt) holds more of the shared queue, and its 10-round bandwidth window spans
 * more time. BBR-PG changes three things:
 *
 * 1. The probing gain (PROBE_BW phase 0 only) is multiplied by gamma = rtt / min_rtt, the
 *    queueing the flow currently sees, so that a flow facing a standing queue probes harder.
 *    rtt is the ACK's RTT sample, or the smoothed RTT when it carries none; gamma is recomputed
 *    on every ACK in 1/256 steps (truncated), is at least 1 and at most pg_gamma_max. The
 *    resulting pacing gain saturates at 4095/256, the most the state holds.
 * 2. The bandwidth max filter spans WIN = T_interval / min_rtt + 4 rounds, T_interval = 180 ms
 *    (integer division: 22 rounds at 10 ms, 7 at 50 ms), so that every flow remembers its
 *    bandwidth for about the same time. Before min_rtt is known it is Linux's 10 rounds.
 * 3. The PROBE_RTT interval (the min_rtt filter window) is drawn uniformly from whole
 *    milliseconds in [5 s, 15 s] at init and again each time PROBE_RTT is entered, so that
 *    flows do not synchronise their PROBE_RTTs.
 *
 * Knobs: pg_gamma_max 16 (the largest value, which leaves gamma uncapped in practice),
 * pg_t_interval_us 180000, pg_win_extra_rounds 4, pg_probe_rtt_min_ms 5000,
 * pg_probe_rtt_max_ms 15000 (an interval is drawn from [min, max(min, max)]), extra_acked 1.
 *
 * Source: Xu et al., "A Modified TCP BBR to Enable High Fairness in High-Speed Wireless
 * Networks", Future Internet 16(11), 392, 2024 (section 3); engine: Linux net/ipv4/tcp_bbr.c.
 */
#define WBBR_NAME wbbr_pg
#define WBBR_KNOBS(X)                                                                          \
	WBBR_COMMON_KNOBS(X)                                                                   \
	X(pg_gamma_max, 4096, 256, 4096, 256)                                                  \
	X(pg_t_interval_us, 180000, 1, 10000000, 1)                                            \
	X(pg_win_extra_rounds, 4, 0, 1024, 1)                                                  \
	X(pg_probe_rtt_min_ms, 5000, 1, 3600000, 1)                                            \
	X(pg_probe_rtt_max_ms, 15000, 1, 3600000, 1)

/* The current PROBE_RTT interval (the min_rtt window), ms. */
#define WBBR_EXT_FIELDS __u32 probe_rtt_ms;

#include "wbbr.h"

/* Linux's probing gain (5/4) and bandwidth window (rounds), which BBR-PG scales. */
#define PG_BASE_UP_GAIN (BBR_UNIT * 5 / 4)
#define PG_BASE_BW_RTTS 10U

/* A PROBE_RTT interval: uniform over whole milliseconds in [min, max]. */
static __always_inline void pg_draw_interval(struct wbbr *bbr)
{
	__u32 lo = KNOB(pg_probe_rtt_min_ms);
	__u32 hi = wbbr_max(KNOB(pg_probe_rtt_max_ms), lo);

	bbr->ext.probe_rtt_ms = lo + wbbr_random_below(hi - lo + 1);
}

/* The probing gain: 5/4 x gamma, gamma = rtt / min_rtt in [1, pg_gamma_max]. */
static __u32 pg_up_gain(const struct sock *sk, const struct wbbr *bbr,
			const struct rate_sample *rs)
{
	__u64 rtt = rs->rtt_us >= 0 ? (__u64)rs->rtt_us : tcp_sk(sk)->srtt_us >> 3;
	__u64 gamma = BBR_UNIT;

	if (rtt && bbr->min_rtt_us && bbr->min_rtt_us != ~0U) {
		gamma = wbbr_max(rtt * BBR_UNIT / bbr->min_rtt_us, (__u64)BBR_UNIT);
		gamma = wbbr_min(gamma, (__u64)KNOB(pg_gamma_max));
	}
	return (__u32)((PG_BASE_UP_GAIN * gamma) >> BBR_SCALE);
}

/* The bandwidth window: T_interval / min_rtt + extra rounds (10 until min_rtt is known). */
static __always_inline __u32 pg_bw_win_rounds(const struct wbbr *bbr)
{
	if (!bbr->min_rtt_us || bbr->min_rtt_us == ~0U)
		return PG_BASE_BW_RTTS;
	return KNOB(pg_t_interval_us) / bbr->min_rtt_us + KNOB(pg_win_extra_rounds);
}

#define WBBR_UP_GAIN(sk, bbr, rs) pg_up_gain(sk, bbr, rs)
#define WBBR_BW_WIN_ROUNDS(bbr) pg_bw_win_rounds(bbr)
#define WBBR_MIN_RTT_WIN_MS(bbr) ((bbr)->ext.probe_rtt_ms)
#define WBBR_EXT_INIT(sk, bbr) pg_draw_interval(bbr)
#define WBBR_ON_PROBE_RTT(bbr) pg_draw_interval(bbr)

#include "wbbr_core.h"
