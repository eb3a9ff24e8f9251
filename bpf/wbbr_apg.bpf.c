// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbbr_apg: BBR-APG, BBRv1 with a PROBE_BW cycle whose length adapts to how stable the path
 * is, registered as "wbbr_apg".
 *
 * Linux BBR probes once every 8 phases (about 8 min_rtt). On cellular and Wi-Fi links whose
 * capacity changes quickly that is too slow to follow a rising rate; on a stable path it is
 * more often than needed. BBR-APG keeps the cycle shape {probe gain, drain gain, 1 x (len - 2)}
 * and varies len. On each evaluation it compares the path's BDP = bw x min_rtt with the BDP at
 * the previous evaluation:
 *
 *     |BDP - prev| > tolerance x prev  ->  len = max(len_min, len - stride)  (changing: probe sooner)
 *     otherwise                        ->  len = min(len_max, len + stride)  (stable: probe less)
 *
 * with tolerance 1/4, stride 4, bounds 4 and 16, and len starting at 8 (Linux's cycle). The
 * first evaluation only records the BDP. The BDP is kept in 1/256 packets (the simulator keeps
 * it in 1/2^24: the two can differ only when the change is within 1/256 packet of the
 * tolerance), the tolerance in 1/256 steps like every BBR ratio.
 *
 * apg_eval chooses when to evaluate: 0 whenever a cycle starts (the phase wraps to 0, so the
 * new length applies to that cycle), as the algorithm is described; 1 after every cwnd
 * computation (every ACK once min_rtt is known), as the authors' kernel module does. The
 * random start phase on entering PROBE_BW is drawn over the len - 1 phases of the current cycle
 * other than the draining one; a phase index beyond a shortened cycle's end wraps to 0 at the
 * next phase change.
 *
 * Knobs: apg_len_init 8, apg_len_min 4, apg_len_max 16 (at most 32, the phase index has 5
 * bits; the length stays within [apg_len_min, max(apg_len_min, apg_len_max)]), apg_stride 4,
 * apg_tolerance 0.25, apg_eval 0, extra_acked 1.
 *
 * Source: Zlomek et al., "Adaptive Low-Latency Communication Control for Wireless
 * Communications" (BBR-APG), EECS 557 report, 2023, Algorithm 1; engine: Linux
 * net/ipv4/tcp_bbr.c.
 */
#define WBBR_NAME wbbr_apg
#define WBBR_KNOBS(X)                                                                          \
	WBBR_COMMON_KNOBS(X)                                                                   \
	X(apg_len_init, 8, 2, 32, 1)                                                           \
	X(apg_len_min, 4, 2, 32, 1)                                                            \
	X(apg_len_max, 16, 2, 32, 1)                                                           \
	X(apg_stride, 4, 1, 32, 1)                                                             \
	X(apg_tolerance, 64, 0, 4095, 256)                                                     \
	X(apg_eval, 0, 0, 1, 1)

/* apg_eval values */
#define APG_EVAL_ONCE_PER_CYCLE 0
#define APG_EVAL_EVERY_CWND_UPDATE 1

/* The BDP at the previous evaluation (1/256 packets), the cycle length, and whether
 * prev_bdp holds an evaluation yet. */
#define WBBR_EXT_FIELDS                                                                        \
	__u32 prev_bdp;                                                                        \
	__u8 len;                                                                              \
	__u8 has_prev;

#include "wbbr.h"

/* The bounds of the cycle length, ordered even if the knobs are not. */
static __always_inline __u32 apg_len_min(void)
{
	return KNOB(apg_len_min);
}

static __always_inline __u32 apg_len_max(void)
{
	return wbbr_max(KNOB(apg_len_max), apg_len_min());
}

static __always_inline void apg_init(struct wbbr *bbr)
{
	bbr->ext.len = wbbr_clamp(KNOB(apg_len_init), apg_len_min(), apg_len_max());
	bbr->ext.prev_bdp = 0;
	bbr->ext.has_prev = 0;
}

/* One evaluation with the current BDP (packets << BW_SCALE). */
static void apg_evaluate(struct wbbr *bbr, __u64 bdp_scaled)
{
	__u32 bdp = (__u32)wbbr_min(bdp_scaled >> (BW_SCALE - BBR_SCALE), 0xFFFFFFFFULL);
	__u32 prev = bbr->ext.prev_bdp, len = bbr->ext.len, stride = KNOB(apg_stride);
	__u32 lo = apg_len_min(), hi = apg_len_max();
	__u64 diff;

	if (bbr->ext.has_prev) {
		diff = bdp > prev ? bdp - prev : prev - bdp;
		if (diff * BBR_UNIT > (__u64)prev * KNOB(apg_tolerance))
			len = len > lo + stride ? len - stride : lo;
		else
			len = wbbr_min(len + stride, hi);
		bbr->ext.len = len;
	}
	bbr->ext.prev_bdp = bdp;
	bbr->ext.has_prev = 1;
}

#define WBBR_CYCLE_LEN(bbr) ((__u32)(bbr)->ext.len)
#define WBBR_EXT_INIT(sk, bbr) apg_init(bbr)
#define WBBR_ON_CYCLE_START(bbr, bdp)                                                          \
	do {                                                                                   \
		if (KNOB(apg_eval) == APG_EVAL_ONCE_PER_CYCLE)                                 \
			apg_evaluate(bbr, bdp);                                                \
	} while (0)
#define WBBR_ON_CWND_UPDATE(bbr, bdp)                                                          \
	do {                                                                                   \
		if (KNOB(apg_eval) == APG_EVAL_EVERY_CWND_UPDATE)                              \
			apg_evaluate(bbr, bdp);                                                \
	} while (0)

#include "wbbr_core.h"
