/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wbbr.h: what every wificc BPF congestion control shares before the algorithm itself: the
 * kernel constants BBR needs that BTF does not carry, the per-socket state, the knob map, and
 * small accessors for the kernel's tcp_sock. The algorithm is in wbbr_core.h.
 *
 * A variant file (wbbr.bpf.c, wbbrp.bpf.c, ...) is one compilation unit and one loadable
 * object. It defines, in this order:
 *
 *   WBBR_NAME        the registered congestion-control name (a C identifier, at most 15
 *                    characters), also the name of the struct_ops map;
 *   WBBR_KNOBS(X)    its knobs as X(name, default, min, max, scale) entries, starting with
 *                    WBBR_COMMON_KNOBS(X);
 *   WBBR_EXT_FIELDS  optionally, the fields of its own per-socket state, struct wbbr_ext
 *                    (at most 8 bytes);
 *
 * then includes this header, defines its hooks (see wbbr_core.h), and includes wbbr_core.h.
 *
 * Knobs. Every knob is a __u32 in the kernel's own units (gains in 1/256, times in the unit
 * their name ends with). They live in one global variable, wbbr_knobs, in the section
 * ".data.knobs", which libbpf turns into a one-element array map that user space may rewrite
 * at any time (`wificc bpf set`); the programs read it on every use, so a change applies to
 * every socket at its next ACK. The limits live in three read-only variables in
 * ".rodata.limits" (minimum, maximum and display scale of each knob, the scale being 256 for
 * gains written as decimals such as 1.25 and 1 otherwise), so that user space can validate a
 * new value against the same table the programs clamp with. Field names and order come from
 * the object's BTF; no other file repeats them.
 *
 * State. The kernel gives a congestion control ICSK_CA_PRIV_SIZE = 104 bytes in icsk_ca_priv
 * (13 u64s). struct wbbr holds everything Linux's struct bbr holds (tcp_bbr.c) in 96 bytes,
 * with two differences of width: the pacing gain has 12 bits instead of 10 (gains up to
 * 4095/256, needed by BBRp's pace and BBR-PG's gamma; larger gains saturate) and the PROBE_BW
 * phase index 5 bits instead of 3 (cycles up to 32 phases, needed by BBR-APG). The current
 * cwnd gain is not stored: it is a function of the mode, recomputed where it is used. The
 * variant's own 8 bytes follow. A static assertion checks the total against the kernel's own
 * icsk_ca_priv.
 *
 * Time. tcp_bbr.c keeps its second-scale timestamps in jiffies (tcp_jiffies32). BPF has no
 * portable HZ, so these timestamps are milliseconds of the socket's microsecond clock
 * (tcp_mstamp / 1000): the same durations as the kernel module at HZ = 1000, and finer than
 * the module on a kernel built with HZ = 250 (4 ms jiffies). The simulator's BBR also counts
 * milliseconds.
 *
 * Sources: Linux net/ipv4/tcp_bbr.c, include/net/tcp.h, include/net/inet_connection_sock.h,
 * lib/win_minmax.c (v6.x); net/ipv4/bpf_tcp_ca.c for what a BPF congestion control may write.
 */
#ifndef WBBR_H
#define WBBR_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#ifndef WBBR_NAME
#error "define WBBR_NAME before including wbbr.h"
#endif
#ifndef WBBR_KNOBS
#error "define WBBR_KNOBS(X) before including wbbr.h"
#endif

/* ---- Kernel constants that BTF does not carry (macros in the kernel headers) ---- */

/* include/linux/time64.h, include/vdso/time64.h */
#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_USEC 1000ULL
/* include/net/tcp.h: ssthresh meaning "none yet", and the initial cwnd (packets). */
#define TCP_INFINITE_SSTHRESH 0x7fffffffU
#define TCP_INIT_CWND 10U
/* include/linux/netdevice.h: the largest skb BBR budgets for (bytes). */
#define GSO_LEGACY_MAX_SIZE 65536ULL
/*
 * include/net/tcp.h: MAX_TCP_HEADER = L1_CACHE_ALIGN(128 + MAX_HEADER) bytes. On an x86-64
 * distribution kernel MAX_HEADER = LL_MAX_HEADER 128 + 48 (IP tunnels) = 176, so 304 rounded
 * up to a 64-byte cache line: 320. Only matters above about 500 Mbit/s, where it changes the
 * TSO goal by less than one segment.
 */
#define MAX_TCP_HEADER 320ULL

/* ---- Knobs ---- */

/* Knobs of every variant: the ACK-aggregation allowance (Linux >= 5.1); 0 models 4.9 to 5.0. */
#define WBBR_COMMON_KNOBS(X) X(extra_acked, 1, 0, 1, 1)

#define WBBR_KNOB_FIELD(name, def, lo, hi, scale) __u32 name;
#define WBBR_KNOB_DEFAULT(name, def, lo, hi, scale) .name = (def),
#define WBBR_KNOB_MIN(name, def, lo, hi, scale) .name = (lo),
#define WBBR_KNOB_MAX(name, def, lo, hi, scale) .name = (hi),
#define WBBR_KNOB_SCALE(name, def, lo, hi, scale) .name = (scale),
#define WBBR_KNOB_CHECK(name, def, lo, hi, scale)                                              \
	_Static_assert((lo) <= (def) && (def) <= (hi), "default of " #name " out of range");   \
	_Static_assert((scale) == 1 || (scale) == 256, "scale of " #name " is 1 or 256");

struct wbbr_knobs {
	WBBR_KNOBS(WBBR_KNOB_FIELD)
};

WBBR_KNOBS(WBBR_KNOB_CHECK)

/* Current values: written by user space, read by the programs. */
struct wbbr_knobs wbbr_knobs SEC(".data.knobs") = { WBBR_KNOBS(WBBR_KNOB_DEFAULT) };
/* Limits and display scale: read-only after load. */
const volatile struct wbbr_knobs wbbr_knobs_min SEC(".rodata.limits") = {
	WBBR_KNOBS(WBBR_KNOB_MIN)
};
const volatile struct wbbr_knobs wbbr_knobs_max SEC(".rodata.limits") = {
	WBBR_KNOBS(WBBR_KNOB_MAX)
};
const volatile struct wbbr_knobs wbbr_knobs_scale SEC(".rodata.limits") = {
	WBBR_KNOBS(WBBR_KNOB_SCALE)
};

static __always_inline __u32 wbbr_clamp(__u32 v, __u32 lo, __u32 hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* A knob's current value, clamped to its limits (user space validates too; this is the floor). */
#define KNOB(name) wbbr_clamp(wbbr_knobs.name, wbbr_knobs_min.name, wbbr_knobs_max.name)

/* ---- Fixed point (tcp_bbr.c) ---- */

/* Bandwidth is in packets per microsecond << BW_SCALE (one unit is about 715 bit/s). */
#define BW_SCALE 24
#define BW_UNIT (1ULL << BW_SCALE)
/* Gains and ratios are fractions of BBR_UNIT. */
#define BBR_SCALE 8
#define BBR_UNIT (1U << BBR_SCALE)
/* Largest pacing gain the state can hold (12 bits): 4095/256, about 16. */
#define WBBR_PACING_GAIN_MAX 0xFFFU

/* tcp_bbr.c enum bbr_mode */
enum wbbr_mode {
	WBBR_STARTUP,
	WBBR_DRAIN,
	WBBR_PROBE_BW,
	WBBR_PROBE_RTT,
};

/* ---- Per-socket state ---- */

#ifndef WBBR_EXT_FIELDS
#define WBBR_EXT_FIELDS
#endif

/* The variant's own state. */
struct wbbr_ext {
	WBBR_EXT_FIELDS
};

/*
 * The fields of tcp_bbr.c's struct bbr, same names and units; the u64 timestamps come first so
 * that nothing needs padding.
 */
struct wbbr {
	__u64 cycle_mstamp;	   /* start of the current PROBE_BW phase (us, delivered clock) */
	__u64 ack_epoch_mstamp;	   /* start of the ACK-aggregation epoch (us) */
	__u32 min_rtt_us;	   /* min RTT in the min_rtt window (~0 before any sample) */
	__u32 min_rtt_stamp;	   /* when min_rtt_us was measured (ms) */
	__u32 probe_rtt_done_stamp; /* end of PROBE_RTT's minimum stay (ms; 0 until reached) */
	struct minmax bw;	   /* max delivery rate over rounds, packets/us << BW_SCALE */
	__u32 rtt_cnt;		   /* packet-timed rounds elapsed */
	__u32 next_rtt_delivered;  /* tp->delivered at which the current round ends */
	__u32 lt_bw;		   /* long-term ("policer") rate, packets/us << BW_SCALE */
	__u32 lt_last_delivered;   /* long-term interval start: tp->delivered */
	__u32 lt_last_stamp;	   /* long-term interval start: delivered_mstamp (ms) */
	__u32 lt_last_lost;	   /* long-term interval start: tp->lost */
	__u32 prior_cwnd;	   /* last good cwnd before recovery or PROBE_RTT */
	__u32 full_bw;		   /* bw of the last round that grew enough in STARTUP */
	__u16 extra_acked[2];	   /* max excess packets ACKed in each aggregation window */
	__u32 pacing_gain : 12,	   /* current pacing gain (1/256) */
		cycle_idx : 5,	   /* current PROBE_BW phase */
		lt_rtt_cnt : 6,	   /* rounds in the long-term interval (at most 48) */
		mode : 2,	   /* enum wbbr_mode */
		prev_ca_state : 3, /* CA state on the previous ACK */
		full_bw_cnt : 2,   /* rounds without enough growth */
		extra_acked_win_idx : 1, has_seen_rtt : 1;
	__u32 ack_epoch_acked : 20, /* packets (S)ACKed in the aggregation epoch */
		extra_acked_win_rtts : 5, /* age of the current aggregation window (rounds) */
		packet_conservation : 1, round_start : 1, idle_restart : 1,
		probe_rtt_round_done : 1, lt_is_sampling : 1, lt_use_bw : 1, full_bw_reached : 1;
	struct wbbr_ext ext; /* the variant's own state */
};

/* The kernel's room for congestion-control state, taken from its own BTF. */
#define ICSK_CA_PRIV_SIZE sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv)
_Static_assert(sizeof(struct wbbr) <= ICSK_CA_PRIV_SIZE, "struct wbbr exceeds icsk_ca_priv");
_Static_assert(sizeof(struct wbbr_ext) <= 8, "struct wbbr_ext exceeds its 8 bytes");

/* ---- Accessors for the kernel's socket ---- */

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct wbbr *wbbr_of(const struct sock *sk)
{
	return (struct wbbr *)inet_csk(sk)->icsk_ca_priv;
}

/* include/net/tcp.h tcp_packets_in_flight */
static __always_inline __u32 tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* include/net/tcp.h tcp_min_rtt: the kernel's own windowed min RTT (us) */
static __always_inline __u32 tcp_min_rtt(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
}

/* The millisecond clock that stands in for tcp_jiffies32 (see Time above). */
static __always_inline __u32 wbbr_now_ms(const struct tcp_sock *tp)
{
	return (__u32)(tp->tcp_mstamp / USEC_PER_MSEC);
}

/* include/net/tcp.h before/after on 32-bit wrapping counters */
static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

/* include/net/tcp.h tcp_stamp_us_delta: t1 - t0 in us, 0 if negative */
static __always_inline __u32 tcp_stamp_us_delta(__u64 t1, __u64 t0)
{
	__s64 delta = (__s64)(t1 - t0);

	return delta > 0 ? (delta > 0xFFFFFFFFLL ? 0xFFFFFFFFU : (__u32)delta) : 0;
}

/* A uniform draw from [0, n) (the kernel's get_random_u32_below). */
static __always_inline __u32 wbbr_random_below(__u32 n)
{
	return (__u32)(((__u64)bpf_get_prandom_u32() * n) >> 32);
}

#define wbbr_min(a, b) ((a) < (b) ? (a) : (b))
#define wbbr_max(a, b) ((a) > (b) ? (a) : (b))

/*
 * Windowed running maximum (Kathleen Nichols' estimator, lib/win_minmax.c) over the kernel's
 * struct minmax: the best, second-best and third-best values of the window with the time each
 * was measured, the n-th best measured no earlier than the (n-1)-th. A new maximum, or a window
 * with nothing left in it, resets all three; as time passes without a new maximum, the second
 * and third choices are refreshed from the second quarter and second half of the window, so
 * that the best's replacement is recent when it ages out.
 */
static __always_inline __u32 minmax_reset(struct minmax *m, __u32 t, __u32 v)
{
	m->s[0].t = m->s[1].t = m->s[2].t = t;
	m->s[0].v = m->s[1].v = m->s[2].v = v;
	return v;
}

static __u32 minmax_running_max(struct minmax *m, __u32 win, __u32 t, __u32 v)
{
	__u32 dt;

	if (v >= m->s[0].v || t - m->s[2].t > win)
		return minmax_reset(m, t, v);
	if (v >= m->s[1].v) {
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = v;
	} else if (v >= m->s[2].v) {
		m->s[2].t = t;
		m->s[2].v = v;
	}

	dt = t - m->s[0].t;
	if (dt > win) {
		/* The best left the window: promote the others, at most twice. */
		m->s[0] = m->s[1];
		m->s[1] = m->s[2];
		m->s[2].t = t;
		m->s[2].v = v;
		if (t - m->s[0].t > win) {
			m->s[0] = m->s[1];
			m->s[1] = m->s[2];
		}
	} else if (m->s[1].t == m->s[0].t && dt > win / 4) {
		/* A quarter of the window passed with no second choice: take one from here. */
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = v;
	} else if (m->s[2].t == m->s[1].t && dt > win / 2) {
		/* Half the window passed with no third choice: take one from here. */
		m->s[2].t = t;
		m->s[2].v = v;
	}
	return m->s[0].v;
}

#endif /* WBBR_H */
