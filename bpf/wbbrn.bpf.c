// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbbrn: BBR-n, BBRv1 tuned for 802.11n/ac uploads, registered as "wbbrn".
 *
 * BBR-n changes three things. Its PROBE_BW cycle probes harder and drains less: {1.5, 0.9, 1,
 * 1, 1, 1, 1, 1} instead of {1.25, 0.75, 1, ...} (7.5/5 and 4.5/5 in the paper; 0.9 is 230/256
 * in the kernel's fixed point). STARTUP keeps 2/ln 2. And its send quantum is the BBR
 * Internet-Draft's with a larger floor: a base of 1 segment below 1.2 Mbit/s and 4 above, and
 *
 *     quantum = max(min(pacing_rate x 1 ms, 64 KiB) / mss, base)   segments
 *
 * where Linux BBR uses pacing_rate >> sk_pacing_shift with a floor of 2 and a cap of 127
 * segments. The quantum is what min_tso_segs returns to TCP (so skbs carry at least 4 segments,
 * which the Wi-Fi MAC can aggregate) and the unit of the cwnd quantization budget. BBR-n is
 * meant to run with a 4 ms TSQ budget (sk_pacing_shift 8), which is a driver setting that a
 * BPF congestion control cannot change.
 *
 * The authors' public patch also changed two BBRv1 constants; they are knobs with the patch's
 * values as defaults, because the published measurements come from that patch:
 * full_bw_thresh 1.5 (STARTUP continues only while the delivery rate grows by at least 50% per
 * round) and cwnd_min_target 10 (the floor of cwnd and the cwnd of PROBE_RTT). Set them to 1.25
 * and 4 for BBR-n as the paper's text alone describes it.
 *
 * Knobs: probe_bw_up_gain 1.5, probe_bw_down_gain 0.9 (230/256), full_bw_thresh 1.5,
 * cwnd_min_target 10 packets, send_quantum_min_segs 4, send_quantum_interval_us 1000,
 * send_quantum_max_bytes 65536, extra_acked 1.
 *
 * Source: M. Ahsan, S. S. Muhammad, "TCP BBR-n: Increased throughput for wireless-AC
 * networks", PLoS ONE 18(12): e0295576, 2023, and the authors' public patch; send quantum:
 * draft-cardwell-iccrg-bbr-congestion-control (BBRSetSendQuantum); engine: Linux
 * net/ipv4/tcp_bbr.c.
 */
#define WBBR_NAME wbbrn
#define WBBR_KNOBS(X)                                                                          \
	WBBR_COMMON_KNOBS(X)                                                                   \
	X(probe_bw_up_gain, 384, 1, 4095, 256)                                                 \
	X(probe_bw_down_gain, 230, 1, 4095, 256)                                               \
	X(full_bw_thresh, 384, 1, 4095, 256)                                                   \
	X(cwnd_min_target, 10, 1, 65535, 1)                                                    \
	X(send_quantum_min_segs, 4, 1, 1024, 1)                                                \
	X(send_quantum_interval_us, 1000, 1, 1000000, 1)                                       \
	X(send_quantum_max_bytes, 65536, 1, 16777216, 1)

#include "wbbr.h"

/* Below 1.2 Mbit/s (bytes/s) the quantum's base is one segment (bbr_min_tso_rate). */
#define BBRN_LOW_RATE (1200000ULL >> 3)

/* The quantum's base: 1 segment at low rates, else send_quantum_min_segs. */
static __always_inline __u32 bbrn_min_tso_segs(const struct sock *sk)
{
	return sk->sk_pacing_rate < BBRN_LOW_RATE ? 1 : KNOB(send_quantum_min_segs);
}

/* The send quantum: min(pacing_rate x interval, max bytes) / mss, at least the base. */
static __always_inline __u32 bbrn_tso_segs_goal(const struct sock *sk)
{
	__u64 rate = sk->sk_pacing_rate;
	__u64 interval_us = KNOB(send_quantum_interval_us);
	__u64 max_bytes = KNOB(send_quantum_max_bytes);
	__u64 bytes = max_bytes;
	__u64 segs;

	/* Below this rate rate x interval fits in 64 bits and stays under max_bytes x 10^6. */
	if (rate <= max_bytes * USEC_PER_SEC / interval_us)
		bytes = wbbr_min(rate * interval_us / USEC_PER_SEC, max_bytes);
	segs = bytes / tcp_sk(sk)->mss_cache;
	return wbbr_max((__u32)segs, bbrn_min_tso_segs(sk));
}

#define WBBR_UP_GAIN(sk, bbr, rs) KNOB(probe_bw_up_gain)
#define WBBR_DOWN_GAIN() KNOB(probe_bw_down_gain)
#define WBBR_FULL_BW_THRESH() KNOB(full_bw_thresh)
#define WBBR_CWND_MIN_TARGET() KNOB(cwnd_min_target)
#define WBBR_MIN_TSO_SEGS(sk) bbrn_min_tso_segs(sk)
#define WBBR_TSO_SEGS_GOAL(sk) bbrn_tso_segs_goal(sk)

#include "wbbr_core.h"
