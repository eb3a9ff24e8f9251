//! The machinery both BBR engines share: the v1 engine ([`super::bbr`], Linux
//! `net/ipv4/tcp_bbr.c`, and the variants built on it) and the v2/v3 engine ([`super::bbr3`],
//! google/bbr `v2alpha` tcp_bbr2.c and `v3` tcp_bbr.c).
//!
//! Each item mirrors a function or constant that the kernel files have in common; where the
//! releases differ (the TSO send quantum, the cwnd quantization budget, the floor of the rate
//! conversion, the window of the ACK-aggregation filter in STARTUP) the difference is a
//! parameter the engine passes, named after the release that uses it. The engines keep only
//! what is theirs: their state machines and the state they alone carry.

use crate::parse::{Dur, Size};
use crate::tcp::config::{GSO_LEGACY_MAX_SIZE, MAX_TCP_HEADER};
use crate::tcp::rate_sample::RateSample;
use crate::tcp::sock::{CaEvent, CaState, Sock};
use crate::units::{NSEC_PER_SEC, NSEC_PER_USEC, USEC_PER_SEC};

/// Bandwidth is in packets per microsecond << `BW_SCALE` (one unit is about 715 bit/s at
/// 1500-byte packets). tcp_bbr.c `BW_SCALE`.
pub const BW_SCALE: u32 = 24;
/// tcp_bbr.c `BW_UNIT`.
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains and ratios are fractions of `BBR_UNIT`. tcp_bbr.c `BBR_SCALE`.
pub const BBR_SCALE: u32 = 8;
/// tcp_bbr.c `BBR_UNIT`: a gain of 1.
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Nominal RTT (us) before any sample, for the initial pacing rate.
/// `bbr_init_pacing_rate_from_rtt` (`USEC_PER_MSEC`).
pub const NOMINAL_RTT_US: u64 = 1000;
/// `ack_epoch_acked` is a 20-bit field: it saturates here. `struct bbr` (v1 and v3).
pub const ACK_EPOCH_ACKED_MAX: u32 = 0xF_FFFF;
/// `extra_acked_win_rtts` is a 5-bit field: it saturates here. `struct bbr` (v1 and v3).
pub const EXTRA_ACKED_WIN_RTTS_MAX: u32 = 0x1F;
/// Full-sized skbs budgeted in flight: one in the qdisc, one in TSO/GSO, one in the receiver's
/// GRO/delayed-ACK engine. `bbr_quantization_budget` (v1 and v3).
pub const QUANTA_IN_FLIGHT: u32 = 3;
/// Extra segments in the probing phase so that probing lifts inflight above the BDP even for
/// small BDPs. `bbr_quantization_budget` (v1 and v3).
pub const PROBE_PHASE_EXTRA_SEGS: u32 = 2;
/// v1's cap of `bbr_tso_segs_goal` (a 7-bit field in older kernels): 0x7F segments.
pub const V1_TSO_SEGS_GOAL_MAX: u32 = 0x7F;

/// The defaults both releases share, in the kernel's units (tcp_bbr.c v1 constants and the
/// same-named v2alpha/v3 module parameters). The engines' parameter tables start from these.
pub mod defaults {
    use super::BBR_UNIT;

    /// STARTUP gain `BBR_UNIT * 2885 / 1000 + 1` = 739 (2/ln 2 rounded up): the smallest gain
    /// whose pacing rate doubles every round. `bbr_high_gain` (v1, v2alpha).
    pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
    /// DRAIN gain `BBR_UNIT * 1000 / 2885` = 88, about 1/high_gain: drains STARTUP's queue in
    /// a round. `bbr_drain_gain`.
    pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
    /// PROBE_BW cwnd gain 2. `bbr_cwnd_gain`.
    pub const CWND_GAIN: u32 = BBR_UNIT * 2;
    /// Pacing gain of the probing phase, 5/4. v1 `bbr_pacing_gain[0]`, v3 `BBR_BW_PROBE_UP`.
    pub const PROBE_UP_GAIN: u32 = BBR_UNIT * 5 / 4;
    /// Pacing gain of the draining phase, 3/4. v1 `bbr_pacing_gain[1]`, v2alpha DOWN.
    pub const PROBE_DOWN_GAIN: u32 = BBR_UNIT * 3 / 4;
    /// STARTUP continues while bw grows by 25% a round (`bbr_full_bw_thresh`) ...
    pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
    /// ... for at most 3 rounds without (`bbr_full_bw_cnt`).
    pub const FULL_BW_CNT: u32 = 3;
    /// Window of the min_rtt filter, ms (`bbr_min_rtt_win_sec` 10).
    pub const MIN_RTT_WIN_MS: u64 = 10_000;
    /// Minimum stay in PROBE_RTT, ms (`bbr_probe_rtt_mode_ms`).
    pub const PROBE_RTT_MODE_MS: u64 = 200;
    /// Smallest cwnd, packets (`bbr_cwnd_min_target`).
    pub const CWND_MIN_TARGET: u32 = 4;
    /// Below this pacing rate a quantum is one segment, bit/s (`bbr_min_tso_rate`).
    pub const MIN_TSO_RATE_BPS: u64 = 1_200_000;
    /// Pace 1% below the estimate (`bbr_pacing_margin_percent`).
    pub const PACING_MARGIN_PERCENT: u32 = 1;
    /// ACK-aggregation allowance: gain 1 (`bbr_extra_acked_gain`), filter of 5-round halves
    /// (`bbr_extra_acked_win_rtts`), at most 100 ms of data (`bbr_extra_acked_max_us`), epoch
    /// restarted after 2^20 packets (`bbr_ack_epoch_acked_reset_thresh`).
    pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
    pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
    pub const EXTRA_ACKED_MAX_MS: u64 = 100;
    pub const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;

    /// A gain in `BBR_UNIT`s as the plain number a parameter table holds (exact: the units
    /// are small integers).
    pub fn gain(units: u32) -> f64 {
        f64::from(units) / f64::from(BBR_UNIT)
    }
}

/// BBR's operating mode (`enum bbr_mode`, numbered alike in every release); the discriminant
/// is what the engines' `model()` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Startup, Mode::Drain, Mode::ProbeBw, Mode::ProbeRtt];

    /// The kernel's name of the mode (`BBR_STARTUP`, ...), without the prefix.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        }
    }
}

/// `after(a, b)` (include/net/tcp.h) on 32-bit wrapping timestamps (jiffies): a is later.
pub fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `tcp_stamp_us_delta` (include/net/tcp.h): t1 - t0 in us, 0 if negative.
pub fn stamp_us_delta(t1: u64, t0: u64) -> u32 {
    t1.saturating_sub(t0).min(u64::from(u32::MAX)) as u32
}

/// A 128-bit intermediate as a u32, saturating (the kernel's values never reach the limit).
pub fn sat_u32(v: u128) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// `x * frac >> BBR_SCALE`, the kernel's way to scale by a gain.
pub fn scale(x: u32, frac: u32) -> u32 {
    sat_u32((u128::from(x) * u128::from(frac)) >> BBR_SCALE)
}

/// An integer parameter in `lo..=hi`.
pub fn in_range(name: &str, v: u32, lo: u32, hi: u32) -> Result<u32, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "parameter {name} = {v}: expected an integer from {lo} to {hi}"
        ))
    }
}

/// A duration that is a whole number of `unit_ns`, returned in those units, in `lo..=hi`.
pub fn whole(
    name: &str,
    d: Dur,
    unit_ns: u64,
    unit: &str,
    lo: u32,
    hi: u32,
) -> Result<u32, String> {
    let n = d.0 / unit_ns;
    if n * unit_ns != d.0 || n < u64::from(lo) || n > u64::from(hi) {
        return Err(format!(
            "parameter {name} = \"{}ns\": expected a whole number of {unit} from {lo} to {hi}",
            d.0
        ));
    }
    Ok(n as u32)
}

/// How a release converts bandwidth to a pacing rate (`bbr_rate_bytes_per_sec`,
/// `bbr_bw_to_pacing_rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateRule {
    /// Pace this many percent below `gain x bw` (`bbr_pacing_margin_percent`; v1 has it as a
    /// constant, v2/v3 as an argument).
    pub margin_percent: u32,
    /// v2alpha and v3 return at least 1 byte per second (`max(rate, 1ULL)`); v1 does not.
    pub at_least_one: bool,
}

impl RateRule {
    /// `bbr_rate_bytes_per_sec`: `bw` (packets/us << BW_SCALE) x mss x gain, the margin below,
    /// in bytes per second.
    pub fn bytes_per_sec(self, mss: u32, bw: u64, gain: u32) -> u64 {
        let r = (u128::from(bw) * u128::from(mss) * u128::from(gain)) >> BBR_SCALE;
        let r = r * u128::from(USEC_PER_SEC / 100 * u64::from(100 - self.margin_percent));
        let rate = u64::try_from(r >> BW_SCALE).unwrap_or(u64::MAX);
        if self.at_least_one {
            rate.max(1)
        } else {
            rate
        }
    }

    /// `bbr_bw_to_pacing_rate`: capped at the socket's `sk_max_pacing_rate`, after the socket's
    /// global pacing multiplier `pacing_tp` (the "TP rate" 1p/2p/3p; at least 1).
    pub fn pacing_rate(self, tp: &Sock, bw: u64, gain: u32) -> u64 {
        let rate = self.bytes_per_sec(tp.mss_cache, bw, gain);
        rate.saturating_mul(u64::from(tp.pacing_tp.max(1)))
            .min(tp.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt`: `gain x cwnd / srtt` (a nominal 1 ms before any RTT
    /// sample). Returns whether an RTT sample was used (`has_seen_rtt`).
    pub fn init_from_rtt(self, tp: &mut Sock, gain: u32) -> bool {
        let (rtt_us, seen) = if tp.srtt_us != 0 {
            (u64::from(tp.srtt()).max(1), true)
        } else {
            (NOMINAL_RTT_US, false)
        };
        let bw = sat_u32(u128::from(tp.snd_cwnd) * u128::from(BW_UNIT) / u128::from(rtt_us));
        tp.pacing_rate = self.pacing_rate(tp, u64::from(bw), gain);
        seen
    }

    /// `bbr_set_pacing_rate`: pace at `gain x bw`, after re-initialising from the first srtt
    /// (at `init_gain`); before the pipe is full the rate only rises.
    pub fn set(
        self,
        tp: &mut Sock,
        bw: u32,
        gain: u32,
        init_gain: u32,
        has_seen_rtt: &mut bool,
        full_bw_reached: bool,
    ) {
        let rate = self.pacing_rate(tp, u64::from(bw), gain);
        if !*has_seen_rtt && tp.srtt_us != 0 {
            *has_seen_rtt = self.init_from_rtt(tp, init_gain);
        }
        if full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }
}

/// `bbr_bdp`: ceil(bw x min_rtt x gain) packets; `init_cwnd` while min_rtt is unknown
/// (`~0U`; v1 uses `TCP_INIT_CWND`, v3 the cwnd at init).
pub fn bdp(bw: u32, min_rtt_us: u32, gain: u32, init_cwnd: u32) -> u32 {
    if min_rtt_us == u32::MAX {
        return init_cwnd;
    }
    let w = u128::from(bw) * u128::from(min_rtt_us);
    sat_u32(((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT)))
}

/// The cwnd budget for TSO quanta in flight (`bbr_quantization_budget`); the releases differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// v1: add three quanta, round up to even (fewer delayed ACKs).
    AddQuanta,
    /// v2/v3: at least three quanta and at least `cwnd_min_target`.
    AtLeast { cwnd_min_target: u32 },
}

/// `bbr_quantization_budget`: room for `QUANTA_IN_FLIGHT` skbs of `tso_goal` segments, and
/// two more segments while probing up (v1 PROBE_BW phase 0, v3 ProbeBW UP).
pub fn quantization_budget(cwnd: u32, tso_goal: u32, budget: Budget, probing_up: bool) -> u32 {
    let quanta = QUANTA_IN_FLIGHT.saturating_mul(tso_goal);
    let cwnd = match budget {
        Budget::AddQuanta => cwnd.saturating_add(quanta).saturating_add(1) & !1,
        Budget::AtLeast { cwnd_min_target } => cwnd.max(quanta).max(cwnd_min_target),
    };
    if probing_up {
        cwnd.saturating_add(PROBE_PHASE_EXTRA_SEGS)
    } else {
        cwnd
    }
}

/// `bbr_packets_in_net_at_edt`: `inflight_now` minus what the bottleneck (at `bw`) delivers
/// before the next skb's earliest departure time, plus that skb (`tso_goal` segments) when
/// the pacing gain is above 1.
pub fn packets_in_net_at_edt(
    tp: &Sock,
    bw: u32,
    inflight_now: u32,
    pacing_gain: u32,
    tso_goal: u32,
) -> u32 {
    let edt_ns = tp.tcp_wstamp_ns.max(tp.now);
    let interval_us = (edt_ns - tp.now) / NSEC_PER_USEC;
    let delivered = sat_u32((u128::from(bw) * u128::from(interval_us)) >> BW_SCALE);
    let mut at_edt = inflight_now;
    if pacing_gain > BBR_UNIT {
        at_edt = at_edt.saturating_add(tso_goal);
    }
    at_edt.saturating_sub(delivered)
}

/// `bbr_save_cwnd`: the last good cwnd before recovery or PROBE_RTT cut it.
pub fn saved_cwnd(prior_cwnd: u32, tp: &Sock, prev_ca_state: CaState, mode: Mode) -> u32 {
    if prev_ca_state < CaState::Recovery && mode != Mode::ProbeRtt {
        tp.snd_cwnd
    } else {
        prior_cwnd.max(tp.snd_cwnd)
    }
}

/// The end of `bbr_set_cwnd`: apply `cwnd` within the clamp; in PROBE_RTT at most
/// `probe_rtt_cwnd`.
pub fn apply_cwnd(tp: &mut Sock, cwnd: u32, mode: Mode, probe_rtt_cwnd: u32) {
    tp.set_cwnd(cwnd.min(tp.snd_cwnd_clamp));
    if mode == Mode::ProbeRtt {
        tp.set_cwnd(tp.snd_cwnd.min(probe_rtt_cwnd));
    }
}

/// How big an skb the engine budgets for: `bbr_tso_segs_goal` and `bbr_min_tso_segs`, or
/// BBR-n's send quantum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsoRule {
    /// Below this pacing rate (bytes/s) a quantum is one segment (`bbr_min_tso_rate`;
    /// v3 has no such rule: 0).
    pub min_rate: u64,
    /// The smallest quantum at or above `min_rate`, segments (Linux 2; BBR-n 4).
    pub min_segs: u32,
    pub quantum: SendQuantum,
}

/// The size rule of the send quantum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendQuantum {
    /// Linux `bbr_tso_segs_goal`: `sk_pacing_rate >> sk_pacing_shift` bytes (about 1 ms at
    /// the default shift 10), plus v3's min_rtt allowance of 64 KB halved per
    /// 2^`rtt_shift` us of min_rtt (`bbr_tso_rtt_shift`; 0 for v1), at most
    /// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` bytes and `max_segs` segments (v1 0x7F).
    PacingShift { rtt_shift: u32, max_segs: u32 },
    /// BBR-n's quantum (draft-cardwell-iccrg-bbr-congestion-control `BBRSetSendQuantum`):
    /// `pacing_rate x interval_ns`, at most `max_bytes`, whatever `sk_pacing_shift` is.
    Interval { interval_ns: u64, max_bytes: u64 },
}

impl SendQuantum {
    /// BBR-n's quantum from its parameters: `interval` a whole number of microseconds (at least
    /// one), `max` at least one byte.
    pub fn interval(interval: Dur, max: Size) -> Result<SendQuantum, String> {
        let interval_us = whole(
            "send_quantum_interval",
            interval,
            NSEC_PER_USEC,
            "microseconds",
            1,
            u32::MAX,
        )?;
        if max.0 == 0 {
            return Err("parameter send_quantum_max = \"0b\": expected at least one byte".into());
        }
        Ok(SendQuantum::Interval {
            interval_ns: u64::from(interval_us) * NSEC_PER_USEC,
            max_bytes: max.0,
        })
    }
}

impl TsoRule {
    /// `bbr_min_tso_segs`: 1 segment below `min_rate`, else `min_segs`.
    pub fn min_tso_segs(&self, tp: &Sock) -> u32 {
        if tp.pacing_rate < self.min_rate {
            1
        } else {
            self.min_segs
        }
    }

    /// `bbr_tso_segs_goal` (v1 tcp_bbr.c; v3 `bbr_tso_segs_generic` with the legacy GSO size
    /// and mss_cache) or BBR-n's send quantum, in segments, at least `min_tso_segs`.
    pub fn segs_goal(&self, tp: &Sock, min_rtt_us: u32) -> u32 {
        let mss = u64::from(tp.mss_cache.max(1));
        let segs = match self.quantum {
            SendQuantum::PacingShift {
                rtt_shift,
                max_segs,
            } => {
                let mut bytes = tp
                    .pacing_rate
                    .checked_shr(u32::from(tp.pacing_shift))
                    .unwrap_or(0);
                if rtt_shift != 0 {
                    let r = min_rtt_us >> rtt_shift;
                    if r < u32::BITS {
                        bytes += u64::from(GSO_LEGACY_MAX_SIZE >> r);
                    }
                }
                let bytes = bytes.min(u64::from(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER));
                let segs = (bytes / mss) as u32;
                return segs.max(self.min_tso_segs(tp)).min(max_segs);
            }
            SendQuantum::Interval {
                interval_ns,
                max_bytes,
            } => {
                let per_interval =
                    u128::from(tp.pacing_rate) * u128::from(interval_ns) / u128::from(NSEC_PER_SEC);
                sat_u32(per_interval.min(u128::from(max_bytes)) / u128::from(mss))
            }
        };
        segs.max(self.min_tso_segs(tp))
    }
}

/// The ACK-aggregation estimator (`bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`,
/// Linux 5.1+ and v2/v3): the most data ACKed beyond `bw x elapsed` in an ACK epoch, kept as
/// a max over two windows of rounds.
#[derive(Debug, Clone, Default)]
pub struct AckAggregation {
    /// Start of the current epoch (us, delivered clock) and packets ACKed in it.
    pub ack_epoch_mstamp: u64,
    pub ack_epoch_acked: u32,
    /// The two windows' max excess (packets), rounds in the current window and its index.
    pub extra_acked: [u32; 2],
    pub extra_acked_win_rtts: u32,
    pub extra_acked_win_idx: usize,
}

impl AckAggregation {
    /// A fresh estimator whose first epoch starts at `now_us` (`bbr_init`).
    pub fn new(now_us: u64) -> Self {
        AckAggregation {
            ack_epoch_mstamp: now_us,
            ..AckAggregation::default()
        }
    }

    /// `bbr_cwnd_event`'s first half: on a restart from idle (`CA_EVENT_TX_START` while
    /// app-limited) the epoch restarts now. Returns whether it was such a restart.
    pub fn restart_after_idle(&mut self, tp: &Sock, ev: CaEvent) -> bool {
        if ev != CaEvent::TxStart || tp.app_limited == 0 {
            return false;
        }
        self.ack_epoch_mstamp = tp.now_us();
        self.ack_epoch_acked = 0;
        true
    }

    /// Max excess over the last one to two windows.
    pub fn max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_update_ack_aggregation` once the engine has checked that it is enabled: at a round
    /// start, advance the window after `win_rtts` rounds (v1 `bbr_extra_acked_win_rtts`; v3
    /// uses 1 in STARTUP); then the excess of this epoch over `bw` (an epoch restarts when the
    /// ACKs fall behind bw or after `reset_thresh` packets).
    pub fn update(
        &mut self,
        tp: &Sock,
        rs: &RateSample,
        bw: u32,
        round_start: bool,
        win_rtts: u32,
        reset_thresh: u32,
    ) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if round_start {
            self.extra_acked_win_rtts =
                (self.extra_acked_win_rtts + 1).min(EXTRA_ACKED_WIN_RTTS_MAX);
            if self.extra_acked_win_rtts >= win_rtts {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let delivered_us = tp.delivered_mstamp / NSEC_PER_USEC;
        let epoch_us = stamp_us_delta(delivered_us, self.ack_epoch_mstamp);
        let mut expected = sat_u32(u128::from(bw) * u128::from(epoch_us) / u128::from(BW_UNIT));
        if self.ack_epoch_acked <= expected
            || u64::from(self.ack_epoch_acked) + u64::from(rs.acked_sacked)
                >= u64::from(reset_thresh)
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = delivered_us;
            expected = 0;
        }
        self.ack_epoch_acked = self
            .ack_epoch_acked
            .saturating_add(rs.acked_sacked)
            .min(ACK_EPOCH_ACKED_MAX);
        let extra = self
            .ack_epoch_acked
            .saturating_sub(expected)
            .min(tp.snd_cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_ack_aggregation_cwnd` once the engine has checked that it applies: `gain x` the
    /// max excess, at most `bw x max_us`.
    pub fn cwnd(&self, bw: u32, gain: u32, max_us: u32) -> u32 {
        let max_aggr = sat_u32(u128::from(bw) * u128::from(max_us) / u128::from(BW_UNIT));
        scale(self.max(), gain).min(max_aggr)
    }
}

/// The PROBE_RTT hold (`bbr_update_min_rtt`'s second half, `bbr_check_probe_rtt_done`): once
/// inflight is down to the PROBE_RTT cwnd, stay `probe_rtt_mode_ms` and at least one round.
#[derive(Debug, Clone, Default)]
pub struct ProbeRttHold {
    /// End of the minimum stay (jiffies; 0 until inflight reached the target).
    pub done_stamp: u32,
    /// A round has ended since the stay started.
    pub round_done: bool,
}

impl ProbeRttHold {
    /// `bbr_update_min_rtt`'s entry to PROBE_RTT: when `due` (PROBE_RTT enabled, its window
    /// expired, not restarting from idle) and not in it yet, switch `mode`, save cwnd
    /// (`bbr_save_cwnd`) and reset the stay. Returns whether it entered.
    pub fn enter(
        &mut self,
        due: bool,
        mode: &mut Mode,
        prior_cwnd: &mut u32,
        tp: &Sock,
        prev_ca_state: CaState,
    ) -> bool {
        if !due || *mode == Mode::ProbeRtt {
            return false;
        }
        // As the kernel: the mode first, so that the saved cwnd is the larger of the two.
        *mode = Mode::ProbeRtt;
        *prior_cwnd = saved_cwnd(*prior_cwnd, tp, prev_ca_state, *mode);
        self.done_stamp = 0;
        true
    }

    /// One ACK in PROBE_RTT: mark the samples app-limited (they are below the path rate);
    /// start the stay once inflight is at most `cwnd_target` (a round starts then: returns
    /// the new `next_rtt_delivered`). Returns (`next_rtt_delivered` to set, whether the stay
    /// may be over and `time_up` should be checked).
    pub fn on_ack(
        &mut self,
        tp: &mut Sock,
        cwnd_target: u32,
        mode_ms: u32,
        round_start: bool,
    ) -> (Option<u64>, bool) {
        let mark = tp.delivered + u64::from(tp.packets_in_flight());
        tp.app_limited = mark.max(1);
        if self.done_stamp == 0 && tp.packets_in_flight() <= cwnd_target {
            self.done_stamp = tp.jiffies().wrapping_add(mode_ms);
            self.round_done = false;
            return (Some(tp.delivered), false);
        }
        if self.done_stamp != 0 {
            self.round_done |= round_start;
            return (None, self.round_done);
        }
        (None, false)
    }

    /// `bbr_check_probe_rtt_done`'s test: the stay started and its time has passed.
    pub fn time_up(&self, tp: &Sock) -> bool {
        self.done_stamp != 0 && after(tp.jiffies(), self.done_stamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock_at(rate: u64, shift: u8) -> Sock {
        let mut tp = Sock::new(1448, 10);
        tp.pacing_rate = rate;
        tp.pacing_shift = shift;
        tp
    }

    const BBRN: TsoRule = TsoRule {
        min_rate: 150_000,
        min_segs: 4,
        quantum: SendQuantum::Interval {
            interval_ns: 1_000_000,
            max_bytes: 65_536,
        },
    };

    #[test]
    fn the_interval_quantum_ignores_the_pacing_shift() {
        // 20 MB/s: 1 ms of data is 20000 B = 13 segments of 1448 (13.8), at any shift; the
        // kernel rule at shift 8 takes 20000000 >> 8 = 78125 B, capped at 65215 B = 45.
        let linux = TsoRule {
            min_rate: 150_000,
            min_segs: 2,
            quantum: SendQuantum::PacingShift {
                rtt_shift: 0,
                max_segs: V1_TSO_SEGS_GOAL_MAX,
            },
        };
        for shift in [8, 10] {
            assert_eq!(BBRN.segs_goal(&sock_at(20_000_000, shift), u32::MAX), 13);
        }
        assert_eq!(linux.segs_goal(&sock_at(20_000_000, 8), u32::MAX), 45);
        // 20000000 >> 10 = 19531 B = 13 segments.
        assert_eq!(linux.segs_goal(&sock_at(20_000_000, 10), u32::MAX), 13);
    }

    #[test]
    fn quantization_budget_per_release() {
        // v1: 10 + 3 x 4 = 22, even; 11 + 12 = 23 -> 24; +2 in phase 0.
        assert_eq!(quantization_budget(10, 4, Budget::AddQuanta, false), 22);
        assert_eq!(quantization_budget(11, 4, Budget::AddQuanta, false), 24);
        assert_eq!(quantization_budget(11, 4, Budget::AddQuanta, true), 26);
        // v3: max(10, 12, 4) = 12; max(30, 12, 4) = 30; +2 in UP.
        let v3 = Budget::AtLeast { cwnd_min_target: 4 };
        assert_eq!(quantization_budget(10, 4, v3, false), 12);
        assert_eq!(quantization_budget(30, 4, v3, true), 32);
    }

    #[test]
    fn rate_floor_is_a_release_difference() {
        // bw 1 unit (2^-24 packets/us) x 1448 B: 1448 x 990000 >> 24 = 85 B/s; bw 0: 0 in
        // v1, 1 in v2/v3.
        let v1 = RateRule {
            margin_percent: 1,
            at_least_one: false,
        };
        let v3 = RateRule {
            at_least_one: true,
            ..v1
        };
        assert_eq!(v1.bytes_per_sec(1448, 1, BBR_UNIT), 85);
        assert_eq!(
            (
                v1.bytes_per_sec(1448, 0, BBR_UNIT),
                v3.bytes_per_sec(1448, 0, BBR_UNIT)
            ),
            (0, 1)
        );
    }
}
