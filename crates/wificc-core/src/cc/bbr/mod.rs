//! BBR version 1 (Linux `net/ipv4/tcp_bbr.c`, 6.x) and the published variants built on it.
//!
//! BBR models the path with two numbers measured from the ACK stream: the bottleneck bandwidth,
//! a windowed maximum of delivery-rate samples over the last 10 packet-timed rounds, and the
//! round-trip propagation time, a windowed minimum of RTT samples over the last 10 seconds. It
//! paces at `pacing_gain x bw` and bounds the data in flight to `cwnd_gain x bw x min_rtt`
//! (plus allowances for TSO quanta and ACK aggregation). It does not back off on loss, except
//! for packet conservation during the first round of recovery and the long-term ("policer")
//! bandwidth estimate described below.
//!
//! The gains follow a state machine:
//!
//! ```text
//!          |
//!          V
//! +---> STARTUP  ----+      STARTUP   pacing and cwnd gain 2/ln 2 (739/256): the rate doubles
//! |        |         |                every round, until bw grew < 25% for 3 rounds
//! |        V         |      DRAIN     pacing gain 1/2.885 (88/256) until inflight <= BDP
//! |      DRAIN   ----+      PROBE_BW  cwnd gain 2; pacing gain cycles through
//! |        |         |                {5/4, 3/4, 1, 1, 1, 1, 1, 1}, one phase per min_rtt,
//! |        V         |                starting at a random phase other than 3/4
//! +---> PROBE_BW ----+      PROBE_RTT every 10 s without a new min_rtt: cwnd 4 for
//! |      ^    |      |                max(200 ms, one round), then back
//! |      +----+      |
//! |                  |
//! +---- PROBE_RTT <--+
//! ```
//!
//! Arithmetic is the kernel's, so results match it bit for bit: bandwidth is in packets per
//! microsecond scaled by 2^24 (`BW_SCALE`), gains are fractions of 256 (`BBR_UNIT`), the BDP is
//! rounded up, the pacing rate is 1% below `gain x bw`, time is the socket's microsecond clock
//! (`tp.now_us()`, the kernel's `tcp_mstamp`) and jiffies at HZ = 1000 (`tp.jiffies()`).
//! Intermediate products are computed in 128 bits, which gives the kernel's values wherever the
//! kernel's 64-bit products do not overflow.
//!
//! Beyond the core model the engine carries everything Linux BBRv1 does: the first-RTT pacing
//! rate from the handshake RTT (`bbr_init_pacing_rate_from_rtt`); pacing that only rises before
//! the pipe is full; the TSO send quantum (`bbr_tso_segs_goal`, `bbr_min_tso_segs`: 1 segment
//! below 1.2 Mbit/s, else 2) and the cwnd budget of three quanta (+2 segments in the probing
//! phase, `bbr_quantization_budget`); the in-network estimate at the next departure time
//! (`bbr_packets_in_net_at_edt`); restart after idle; packet conservation in the first round of
//! recovery, `bbr_save_cwnd` and undo; the ACK-aggregation allowance (`extra_acked`, added in
//! Linux 5.1 and switchable off here to model older kernels); and long-term bandwidth sampling,
//! which detects a token-bucket policer from two consecutive 4-to-16-round intervals with at
//! least 50/256 (about 20%) loss and consistent delivery rates, and then paces at their average
//! rate for 48 rounds.
//!
//! The min_rtt filter accepts a sample that is strictly below the current minimum (or any sample
//! once the window expired), as Linux does since 5.10 (commit 1b9e2a8c99a5, also in the stable
//! 5.4 series); older kernels refreshed the window on an equal sample too, which could postpone
//! PROBE_RTT forever when RTTs repeat exactly.
//!
//! Every constant is a parameter ([`Params`]) with the kernel's value as default. The variants
//! ([`bbrp`], [`bbrn`], [`apg`], [`pg`]) are this engine with other defaults and small hooks
//! ([`Variant`]), never a copy of it.
//!
//! Random draws (the ProbeBW start phase, BBR-PG's ProbeRTT interval) come from the `Rng`
//! handed to `init` and `cong_control`. The two callbacks that get no `Rng` yet may restart
//! gain cycling (`cwnd_event` leaving ProbeRTT after idle, `set_state` on RTO ending the
//! long-term bandwidth mode) draw from a stream seeded once from the `init` `Rng`.
//!
//! Source: Linux `net/ipv4/tcp_bbr.c` (v6.x), `lib/win_minmax.c`; N. Cardwell et al., "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016.

pub mod apg;
pub mod bbrn;
pub mod bbrp;
pub mod minmax;
pub mod pg;
#[cfg(test)]
mod testnet;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use self::minmax::WinMax;
use super::registry::{params_from, schema_of, CcInfo};
use super::{CongestionControl, ModelValue};
use crate::parse::{Dur, Rate};
use crate::sim::Rng;
use crate::tcp::rate_sample::RateSample;
use crate::tcp::sock::{
    CaEvent, CaState, PacingStatus, Sock, TCP_INFINITE_SSTHRESH, TCP_INIT_CWND,
};
use crate::units::{NSEC_PER_MSEC, NSEC_PER_USEC, USEC_PER_SEC};

/// Bandwidth is in packets per microsecond << `BW_SCALE` (one unit is about 715 bit/s at
/// 1500-byte packets). tcp_bbr.c `BW_SCALE`.
pub const BW_SCALE: u32 = 24;
/// tcp_bbr.c `BW_UNIT`.
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains and ratios are fractions of `BBR_UNIT`. tcp_bbr.c `BBR_SCALE`.
pub const BBR_SCALE: u32 = 8;
/// tcp_bbr.c `BBR_UNIT`: a gain of 1.
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// STARTUP gain `BBR_UNIT * 2885 / 1000 + 1` = 739 (2/ln 2 rounded up): the smallest gain
/// whose pacing rate doubles every round. tcp_bbr.c `bbr_high_gain`.
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// DRAIN gain `BBR_UNIT * 1000 / 2885` = 88, about 1/high_gain: drains STARTUP's queue in a
/// round. tcp_bbr.c `bbr_drain_gain`.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;

/// Nominal RTT (us) before any sample, for the initial pacing rate. tcp_bbr.c
/// `bbr_init_pacing_rate_from_rtt` (`USEC_PER_MSEC`).
const NOMINAL_RTT_US: u64 = 1000;
/// `GSO_LEGACY_MAX_SIZE` (include/linux/netdevice.h), bytes: the largest skb BBR budgets for.
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// `MAX_TCP_HEADER` = L1_CACHE_ALIGN(128 + MAX_HEADER) bytes (include/net/tcp.h) for an x86-64
/// distribution kernel: MAX_HEADER = LL_MAX_HEADER 128 (Wi-Fi with mesh) + 48 (IP tunnels) =
/// 176, so 304 aligned to 64-byte cache lines.
const MAX_TCP_HEADER: u64 = 320;
/// Cap of `bbr_tso_segs_goal` (a 7-bit field in older kernels): 0x7F segments.
const TSO_SEGS_GOAL_MAX: u32 = 0x7F;
/// Full-sized skbs budgeted in flight: one in the qdisc, one in TSO/GSO, one in the receiver's
/// GRO/delayed-ACK engine. tcp_bbr.c `bbr_quantization_budget`.
const QUANTA_IN_FLIGHT: u32 = 3;
/// Extra segments in the probing phase so that gain cycling lifts inflight above the BDP even
/// for small BDPs. tcp_bbr.c `bbr_quantization_budget`.
const PROBE_PHASE_EXTRA_SEGS: u32 = 2;
/// `ack_epoch_acked` is a 20-bit field: it saturates here. tcp_bbr.c `struct bbr`.
const ACK_EPOCH_ACKED_MAX: u32 = 0xF_FFFF;
/// `extra_acked_win_rtts` is a 5-bit field: it saturates here. tcp_bbr.c `struct bbr`.
const EXTRA_ACKED_WIN_RTTS_MAX: u32 = 0x1F;
/// Largest gain a parameter may take (keeps every product well inside 128 bits).
const GAIN_MAX: f64 = 64.0;

/// BBR's operating mode (tcp_bbr.c `enum bbr_mode`); the discriminant is what `model()` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Startup, Mode::Drain, Mode::ProbeBw, Mode::ProbeRtt];

    /// The kernel's name of the mode (`BBR_STARTUP`, ... in tcp_bbr.c), without the prefix.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        }
    }
}

/// The engine's parameters, each a constant of tcp_bbr.c with its value as default. Gains and
/// ratios are plain numbers (1.25) and are rounded to the nearest 1/256 (`BBR_UNIT`) as the
/// kernel stores them; the defaults are exact multiples of 1/256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// STARTUP pacing and cwnd gain, and DRAIN cwnd gain: 739/256 = 2.88671875
    /// (`bbr_high_gain`, 2/ln 2 rounded up).
    #[schemars(extend("x-unit" = "x"))]
    pub high_gain: f64,
    /// DRAIN pacing gain: 88/256 = 0.34375 (`bbr_drain_gain`, 1000/2885 truncated).
    #[schemars(extend("x-unit" = "x"))]
    pub drain_gain: f64,
    /// PROBE_BW cwnd gain: 2 (`bbr_cwnd_gain`).
    #[schemars(extend("x-unit" = "x"))]
    pub cwnd_gain: f64,
    /// Pacing gain of the probing phase (phase 0) of the PROBE_BW cycle: 5/4 (`bbr_pacing_gain[0]`).
    #[schemars(extend("x-unit" = "x"))]
    pub probe_bw_up_gain: f64,
    /// Pacing gain of the draining phase (phase 1): 3/4 (`bbr_pacing_gain[1]`). The other
    /// phases cruise at 1.
    #[schemars(extend("x-unit" = "x"))]
    pub probe_bw_down_gain: f64,
    /// Phases in the PROBE_BW cycle: 8 (`CYCLE_LEN`). The random start phase is drawn from the
    /// `cycle_len - 1` phases other than the draining one (`bbr_cycle_rand` = 7).
    #[schemars(extend("x-unit" = "phases"))]
    pub cycle_len: u32,
    /// Window of the bandwidth max filter, in rounds: 10 (`bbr_bw_rtts` = CYCLE_LEN + 2).
    #[schemars(extend("x-unit" = "rounds"))]
    pub bw_rtts: u32,
    /// Window of the min_rtt filter: 10 s (`bbr_min_rtt_win_sec`); whole milliseconds.
    pub min_rtt_win: Dur,
    /// Minimum time at `cwnd_min_target` in PROBE_RTT: 200 ms (`bbr_probe_rtt_mode_ms`); 0
    /// disables PROBE_RTT; whole milliseconds.
    pub probe_rtt_mode: Dur,
    /// Minimum cwnd, and the cwnd of PROBE_RTT, in packets: 4 (`bbr_cwnd_min_target`).
    #[schemars(extend("x-unit" = "packets"))]
    pub cwnd_min_target: u32,
    /// Below this pacing rate the TSO quantum is 1 segment, else 2: 1.2 Mbit/s (`bbr_min_tso_rate`).
    pub min_tso_rate: Rate,
    /// Pace this many percent below `gain x bw`: 1 (`bbr_pacing_margin_percent`).
    #[schemars(extend("x-unit" = "%"))]
    pub pacing_margin_percent: u32,
    /// STARTUP continues while bw grows by at least this factor per round: 1.25 (`bbr_full_bw_thresh`).
    #[schemars(extend("x-unit" = "x"))]
    pub full_bw_thresh: f64,
    /// Rounds without that growth before the pipe counts as full: 3 (`bbr_full_bw_cnt`).
    #[schemars(extend("x-unit" = "rounds"))]
    pub full_bw_cnt: u32,
    /// Minimum rounds in a long-term sampling interval: 4 (`bbr_lt_intvl_min_rtts`); an
    /// interval longer than 4x this is abandoned.
    #[schemars(extend("x-unit" = "rounds"))]
    pub lt_intvl_min_rtts: u32,
    /// Loss ratio (lost/delivered) from which an interval counts as lossy: 50/256 = 0.1953125
    /// (`bbr_lt_loss_thresh`).
    #[schemars(extend("x-unit" = "fraction"))]
    pub lt_loss_thresh: f64,
    /// Two intervals' rates are consistent if they differ by at most this fraction: 1/8
    /// (`bbr_lt_bw_ratio`) ...
    #[schemars(extend("x-unit" = "fraction"))]
    pub lt_bw_ratio: f64,
    /// ... or by at most this rate: 4 kbit/s (`bbr_lt_bw_diff`).
    pub lt_bw_diff: Rate,
    /// Rounds of PROBE_BW spent at the long-term rate before probing again: 48 (`bbr_lt_bw_max_rtts`).
    #[schemars(extend("x-unit" = "rounds"))]
    pub lt_bw_max_rtts: u32,
    /// Add the ACK-aggregation allowance to cwnd (Linux >= 5.1). `false` models 4.9 to 5.0.
    pub extra_acked: bool,
    /// Gain on the aggregation allowance: 1 (`bbr_extra_acked_gain`).
    #[schemars(extend("x-unit" = "x"))]
    pub extra_acked_gain: f64,
    /// Rounds per half of the aggregation max filter: 5 (`bbr_extra_acked_win_rtts`); at most 31.
    #[schemars(extend("x-unit" = "rounds"))]
    pub extra_acked_win_rtts: u32,
    /// Packets ACKed in one aggregation epoch after which it restarts: 2^20
    /// (`bbr_ack_epoch_acked_reset_thresh`).
    #[schemars(extend("x-unit" = "packets"))]
    pub ack_epoch_acked_reset_thresh: u32,
    /// The allowance is at most bw x this: 100 ms (`bbr_extra_acked_max_us`); whole microseconds.
    pub extra_acked_max: Dur,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            high_gain: f64::from(HIGH_GAIN) / f64::from(BBR_UNIT),
            drain_gain: f64::from(DRAIN_GAIN) / f64::from(BBR_UNIT),
            cwnd_gain: 2.0,
            probe_bw_up_gain: 1.25,
            probe_bw_down_gain: 0.75,
            cycle_len: 8,
            bw_rtts: 10,
            min_rtt_win: Dur(10_000 * NSEC_PER_MSEC),
            probe_rtt_mode: Dur(200 * NSEC_PER_MSEC),
            cwnd_min_target: 4,
            min_tso_rate: Rate(1_200_000),
            pacing_margin_percent: 1,
            full_bw_thresh: 1.25,
            full_bw_cnt: 3,
            lt_intvl_min_rtts: 4,
            lt_loss_thresh: 50.0 / f64::from(BBR_UNIT),
            lt_bw_ratio: 0.125,
            lt_bw_diff: Rate(4_000),
            lt_bw_max_rtts: 48,
            extra_acked: true,
            extra_acked_gain: 1.0,
            extra_acked_win_rtts: 5,
            ack_epoch_acked_reset_thresh: 1 << 20,
            extra_acked_max: Dur(100 * NSEC_PER_MSEC),
        }
    }
}

/// The parameters in the kernel's units, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knobs {
    pub high_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub up_gain: u32,
    pub down_gain: u32,
    pub cycle_len: u32,
    pub bw_rtts: u32,
    pub min_rtt_win_ms: u32,
    pub probe_rtt_mode_ms: u32,
    pub cwnd_min_target: u32,
    /// Bytes per second.
    pub min_tso_rate: u64,
    pub pacing_margin_percent: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub lt_intvl_min_rtts: u32,
    pub lt_loss_thresh: u32,
    pub lt_bw_ratio: u32,
    /// Bytes per second.
    pub lt_bw_diff: u64,
    pub lt_bw_max_rtts: u32,
    pub extra_acked: bool,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub ack_epoch_acked_reset_thresh: u32,
    pub extra_acked_max_us: u32,
}

/// A gain or ratio in 1/256 units; `positive` rejects values that round to 0.
pub(crate) fn to_unit(name: &str, v: f64, positive: bool) -> Result<u32, String> {
    let units = (v * f64::from(BBR_UNIT)).round();
    if !v.is_finite() || !(0.0..=GAIN_MAX).contains(&v) || (positive && units < 1.0) {
        let lower = if positive { "at least 1/256" } else { "0" };
        return Err(format!(
            "parameter {name} = {v}: expected a number from {lower} to {GAIN_MAX}"
        ));
    }
    Ok(units as u32)
}

/// An integer parameter in `lo..=hi`.
pub(crate) fn in_range(name: &str, v: u32, lo: u32, hi: u32) -> Result<u32, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "parameter {name} = {v}: expected an integer from {lo} to {hi}"
        ))
    }
}

/// A duration that is a whole number of `unit_ns`, returned in those units, in `lo..=hi`.
pub(crate) fn whole(
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

impl Params {
    /// Validate and convert to the kernel's units.
    pub fn knobs(&self) -> Result<Knobs, String> {
        // Jiffies are compared with wrapping 32-bit arithmetic: windows stay below 2^31 ms.
        let ms = |name, d| whole(name, d, NSEC_PER_MSEC, "milliseconds", 0, i32::MAX as u32);
        Ok(Knobs {
            high_gain: to_unit("high_gain", self.high_gain, true)?,
            drain_gain: to_unit("drain_gain", self.drain_gain, true)?,
            cwnd_gain: to_unit("cwnd_gain", self.cwnd_gain, true)?,
            up_gain: to_unit("probe_bw_up_gain", self.probe_bw_up_gain, true)?,
            down_gain: to_unit("probe_bw_down_gain", self.probe_bw_down_gain, true)?,
            cycle_len: in_range("cycle_len", self.cycle_len, 2, 1024)?,
            bw_rtts: in_range("bw_rtts", self.bw_rtts, 1, u32::MAX)?,
            min_rtt_win_ms: whole(
                "min_rtt_win",
                self.min_rtt_win,
                NSEC_PER_MSEC,
                "milliseconds",
                1,
                i32::MAX as u32,
            )?,
            probe_rtt_mode_ms: ms("probe_rtt_mode", self.probe_rtt_mode)?,
            cwnd_min_target: in_range("cwnd_min_target", self.cwnd_min_target, 1, u32::MAX)?,
            min_tso_rate: self.min_tso_rate.0 >> 3,
            pacing_margin_percent: in_range(
                "pacing_margin_percent",
                self.pacing_margin_percent,
                0,
                99,
            )?,
            full_bw_thresh: to_unit("full_bw_thresh", self.full_bw_thresh, true)?,
            full_bw_cnt: in_range("full_bw_cnt", self.full_bw_cnt, 1, u32::MAX)?,
            lt_intvl_min_rtts: in_range(
                "lt_intvl_min_rtts",
                self.lt_intvl_min_rtts,
                1,
                u32::MAX / 4,
            )?,
            lt_loss_thresh: to_unit("lt_loss_thresh", self.lt_loss_thresh, false)?,
            lt_bw_ratio: to_unit("lt_bw_ratio", self.lt_bw_ratio, false)?,
            lt_bw_diff: self.lt_bw_diff.0 / 8,
            lt_bw_max_rtts: in_range("lt_bw_max_rtts", self.lt_bw_max_rtts, 1, u32::MAX)?,
            extra_acked: self.extra_acked,
            extra_acked_gain: to_unit("extra_acked_gain", self.extra_acked_gain, false)?,
            extra_acked_win_rtts: in_range(
                "extra_acked_win_rtts",
                self.extra_acked_win_rtts,
                1,
                EXTRA_ACKED_WIN_RTTS_MAX,
            )?,
            ack_epoch_acked_reset_thresh: in_range(
                "ack_epoch_acked_reset_thresh",
                self.ack_epoch_acked_reset_thresh,
                1,
                u32::MAX,
            )?,
            extra_acked_max_us: whole(
                "extra_acked_max",
                self.extra_acked_max,
                NSEC_PER_USEC,
                "microseconds",
                0,
                u32::MAX,
            )?,
        })
    }
}

impl Knobs {
    /// Pacing gain of PROBE_BW phase `idx`: {up, down, 1, 1, ...} (tcp_bbr.c `bbr_pacing_gain`).
    pub fn cycle_gain(&self, idx: u32) -> u32 {
        match idx {
            0 => self.up_gain,
            1 => self.down_gain,
            _ => BBR_UNIT,
        }
    }
}

/// Linux `bbr_min_tso_segs`: 1 segment below `min_tso_rate`, else 2.
pub fn min_tso_segs(k: &Knobs, tp: &Sock) -> u32 {
    if tp.pacing_rate < k.min_tso_rate {
        1
    } else {
        2
    }
}

/// Linux `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate (`pacing_rate >>
/// sk_pacing_shift`), at most a legacy GSO skb, at least `min_tso_segs`, in segments.
pub fn tso_segs_goal(k: &Knobs, tp: &Sock) -> u32 {
    let per_shift = tp
        .pacing_rate
        .checked_shr(u32::from(tp.pacing_shift))
        .unwrap_or(0);
    let bytes = per_shift.min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
    let segs = (bytes / u64::from(tp.mss_cache.max(1))) as u32;
    segs.max(min_tso_segs(k, tp)).min(TSO_SEGS_GOAL_MAX)
}

/// The hooks through which a variant changes the engine. Each default is Linux BBRv1.
pub trait Variant: Send + 'static {
    /// Phases in the PROBE_BW cycle now.
    fn cycle_len(&self, k: &Knobs) -> u32 {
        k.cycle_len
    }
    /// Pacing gain of PROBE_BW phase `idx` (unless the long-term rate is in use).
    fn cycle_gain(&self, k: &Knobs, idx: u32) -> u32 {
        k.cycle_gain(idx)
    }
    /// Segments per skb that BBR budgets for (`bbr_tso_segs_goal`).
    fn tso_segs_goal(&self, k: &Knobs, tp: &Sock) -> u32 {
        tso_segs_goal(k, tp)
    }
    /// The `min_tso_segs` callback.
    fn min_tso_segs(&self, k: &Knobs, tp: &Sock) -> u32 {
        min_tso_segs(k, tp)
    }
    /// Window of the bandwidth max filter in rounds, given the current min_rtt (us, u32::MAX
    /// when unknown).
    fn bw_win_rounds(&self, k: &Knobs, _min_rtt_us: u32) -> u32 {
        k.bw_rtts
    }
    /// Window of the min_rtt filter (ms): how long without a new minimum before PROBE_RTT.
    fn min_rtt_win_ms(&self, k: &Knobs) -> u32 {
        k.min_rtt_win_ms
    }
    /// Called at the end of `init`.
    fn init(&mut self, _rng: &mut Rng) {}
    /// Called when PROBE_RTT is entered.
    fn on_probe_rtt(&mut self, _rng: &mut Rng) {}
    /// Called on every ACK after the min_rtt filter update, before the gains are set.
    fn on_ack(&mut self, _tp: &Sock, _rs: &RateSample, _min_rtt_us: u32) {}
    /// Called when a PROBE_BW cycle starts (the phase wraps to 0), with bw x min_rtt in
    /// packets << BW_SCALE (None while min_rtt is unknown).
    fn on_cycle_start(&mut self, _bdp: Option<u64>) {}
    /// Called after every cwnd computation, with bw x min_rtt as for `on_cycle_start`.
    fn on_cwnd_update(&mut self, _bdp: Option<u64>) {}
    /// Values added to the model report.
    fn model(&self, _out: &mut Vec<ModelValue>) {}
}

/// The Linux behaviour: no hook changed.
#[derive(Debug, Clone, Default)]
pub struct Linux;

impl Variant for Linux {}

/// `after(a, b)` on 32-bit wrapping timestamps (jiffies).
fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `tcp_stamp_us_delta`: t1 - t0 in us, 0 if negative.
fn stamp_us_delta(t1: u64, t0: u64) -> u32 {
    t1.saturating_sub(t0).min(u64::from(u32::MAX)) as u32
}

/// Stream id of the `Rng` used by callbacks that are not handed one.
const EVENT_STREAM: u64 = 0x6262_7231;

/// The BBRv1 engine (tcp_bbr.c `struct bbr` and its functions) with variant hooks `V`.
pub struct Bbr<V: Variant> {
    name: &'static str,
    k: Knobs,
    v: V,
    /// Draws for callbacks that get no `Rng` (seeded in `init`).
    event_rng: Rng,
    /// mss at the last callback, for reporting bw in bit/s.
    mss: u32,
    /// Last target cwnd computed (packets), for reporting.
    target_cwnd: u32,

    /// min_rtt (us, u32::MAX before any sample) and when it was measured (jiffies).
    min_rtt_us: u32,
    min_rtt_stamp: u32,
    /// End of PROBE_RTT's minimum stay (jiffies; 0 until inflight reached the target).
    probe_rtt_done_stamp: u32,
    /// Max filter of delivery rates (packets/us << BW_SCALE) over rounds.
    bw: WinMax,
    /// Packet-timed rounds, and the `delivered` count whose ACK ends the current one.
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    /// Start of the current PROBE_BW phase (us, delivered clock).
    cycle_mstamp: u64,
    mode: Mode,
    /// CA state seen on the previous ACK, for entering and leaving recovery.
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    /// Long-term (policer) sampling: interval in progress, its rounds, whether `lt_bw` is in
    /// use, and the interval's start (delivered, ms, lost, truncated to 32 bits as the kernel).
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u32,
    lt_last_delivered: u32,
    lt_last_stamp: u32,
    lt_last_lost: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    /// STARTUP has filled the pipe; `full_bw` is the bw of the last round that grew enough, and
    /// `full_bw_cnt` counts rounds since.
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: u32,
    has_seen_rtt: bool,
    /// Last good cwnd before recovery or PROBE_RTT cut it.
    prior_cwnd: u32,
    full_bw: u32,
    /// ACK aggregation: epoch start (us), the two windows' max excess (packets), packets ACKed
    /// in the epoch, rounds in the current window and its index.
    ack_epoch_mstamp: u64,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

impl<V: Variant> Bbr<V> {
    pub fn new(name: &'static str, k: Knobs, v: V) -> Self {
        Bbr {
            name,
            event_rng: Rng::new(0, EVENT_STREAM),
            mss: 0,
            target_cwnd: 0,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: WinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: k.high_gain,
            cwnd_gain: k.high_gain,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            k,
            v,
        }
    }

    fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// The bandwidth in use: the long-term estimate while policed, else the max filter.
    fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// Max excess ACKed over the last 5 to 10 rounds.
    fn max_extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// bw x min_rtt (packets << BW_SCALE), for the variants' BDP evaluations.
    fn bdp_scaled(&self) -> Option<u64> {
        (self.min_rtt_us != u32::MAX).then(|| u64::from(self.bw()) * u64::from(self.min_rtt_us))
    }

    /// `bbr_rate_bytes_per_sec`: a bw and gain in bytes per second, `pacing_margin_percent` below.
    fn rate_bytes_per_sec(&self, mss: u32, rate: u64, gain: u32) -> u64 {
        let r = (u128::from(rate) * u128::from(mss) * u128::from(gain)) >> BBR_SCALE;
        let r = r * u128::from(USEC_PER_SEC / 100 * u64::from(100 - self.k.pacing_margin_percent));
        u64::try_from(r >> BW_SCALE).unwrap_or(u64::MAX)
    }

    /// `bbr_bw_to_pacing_rate`, times the socket's global pacing multiplier `pacing_tp`.
    fn bw_to_pacing_rate(&self, tp: &Sock, bw: u64, gain: u32) -> u64 {
        let rate = self.rate_bytes_per_sec(tp.mss_cache, bw, gain);
        rate.saturating_mul(u64::from(tp.pacing_tp))
            .min(tp.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain x cwnd / srtt (1 ms before any sample).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut Sock) {
        let rtt_us = if tp.srtt_us != 0 {
            self.has_seen_rtt = true;
            u64::from(tp.srtt()).max(1)
        } else {
            NOMINAL_RTT_US
        };
        let bw = u64::from(tp.snd_cwnd) * BW_UNIT / rtt_us;
        tp.pacing_rate = self.bw_to_pacing_rate(tp, bw, self.k.high_gain);
    }

    /// `bbr_set_pacing_rate`: before the pipe is full the rate only rises.
    fn set_pacing_rate(&mut self, tp: &mut Sock, bw: u32, gain: u32) {
        let rate = self.bw_to_pacing_rate(tp, u64::from(bw), gain);
        if !self.has_seen_rtt && tp.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    fn tso_segs_goal(&self, tp: &Sock) -> u32 {
        self.v.tso_segs_goal(&self.k, tp)
    }

    /// `bbr_save_cwnd`: remember the last good cwnd before recovery or PROBE_RTT cut it.
    fn save_cwnd(&mut self, tp: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain) packets; the initial cwnd before any RTT sample.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u128::from(bw) * u128::from(self.min_rtt_us);
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        u32::try_from(bdp).unwrap_or(u32::MAX)
    }

    /// `bbr_quantization_budget`: room for three TSO quanta, rounded up to even, +2 in phase 0.
    fn quantization_budget(&self, tp: &Sock, cwnd: u32) -> u32 {
        let cwnd = cwnd.saturating_add(QUANTA_IN_FLIGHT.saturating_mul(self.tso_segs_goal(tp)));
        let mut cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(PROBE_PHASE_EXTRA_SEGS);
        }
        cwnd
    }

    /// `bbr_inflight`: the in-flight target for `gain`.
    fn inflight(&self, tp: &Sock, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: inflight minus what the bottleneck delivers before the
    /// next skb's departure time (plus that skb when probing).
    fn packets_in_net_at_edt(&self, tp: &Sock, inflight_now: u32) -> u32 {
        let edt_ns = tp.tcp_wstamp_ns.max(tp.now);
        let interval_us = (edt_ns - tp.now) / NSEC_PER_USEC;
        let delivered = (u128::from(self.bw()) * u128::from(interval_us)) >> BW_SCALE;
        let delivered = u32::try_from(delivered).unwrap_or(u32::MAX);
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt = at_edt.saturating_add(self.tso_segs_goal(tp));
        }
        at_edt.saturating_sub(delivered)
    }

    /// `bbr_ack_aggregation_cwnd`: extra cwnd for ACK aggregation, at most bw x extra_acked_max.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.k.extra_acked || self.k.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = u64::from(self.bw()) * u64::from(self.k.extra_acked_max_us) / BW_UNIT;
        let aggr =
            (u64::from(self.k.extra_acked_gain) * u64::from(self.max_extra_acked())) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first recovery round,
    /// restore on exit. Returns the cwnd and whether conservation applies.
    fn recover_or_restore(&mut self, tp: &Sock, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.snd_cwnd;
        if rs.losses > 0 {
            cwnd = (i64::from(cwnd) - i64::from(rs.losses)).max(1) as u32;
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered;
            cwnd = tp.packets_in_flight().saturating_add(acked);
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            (cwnd.max(tp.packets_in_flight().saturating_add(acked)), true)
        } else {
            (cwnd, false)
        }
    }

    /// `bbr_set_cwnd`: slow-start toward the target, or snap down to it once the pipe is full.
    fn set_cwnd(&mut self, tp: &mut Sock, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked != 0 {
            let (c, conserving) = self.recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self
                    .bdp(bw, gain)
                    .saturating_add(self.ack_aggregation_cwnd());
                let target = self.quantization_budget(tp, target);
                self.target_cwnd = target;
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(self.k.cwnd_min_target);
            }
        }
        tp.set_cwnd(cwnd.min(tp.snd_cwnd_clamp));
        if self.mode == Mode::ProbeRtt {
            tp.set_cwnd(tp.snd_cwnd.min(self.k.cwnd_min_target));
        }
    }

    /// `bbr_is_next_cycle_phase`: a phase lasts min_rtt; probing also waits for inflight to
    /// reach gain x BDP (or a loss); draining ends early once inflight is down to the BDP.
    fn is_next_cycle_phase(&self, tp: &Sock, rs: &RateSample) -> bool {
        let is_full_length = stamp_us_delta(tp.delivered_mstamp / NSEC_PER_USEC, self.cycle_mstamp)
            > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tp: &Sock) {
        let next = self.cycle_idx + 1;
        self.cycle_idx = if next >= self.v.cycle_len(&self.k) {
            0
        } else {
            next
        };
        self.cycle_mstamp = tp.delivered_mstamp / NSEC_PER_USEC;
        if self.cycle_idx == 0 {
            let bdp = self.bdp_scaled();
            self.v.on_cycle_start(bdp);
        }
    }

    fn update_cycle_phase(&mut self, tp: &Sock, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase, never the draining one.
    fn reset_probe_bw_mode(&mut self, tp: &Sock, rng: &mut Rng) {
        self.mode = Mode::ProbeBw;
        let len = self.v.cycle_len(&self.k);
        self.cycle_idx = len - 1 - rng.below(len - 1);
        self.advance_cycle_phase(tp);
    }

    fn reset_mode(&mut self, tp: &Sock, rng: &mut Rng) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(tp, rng);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &Sock) {
        self.lt_last_stamp = (tp.delivered_mstamp / NSEC_PER_MSEC) as u32;
        self.lt_last_delivered = tp.delivered as u32;
        self.lt_last_lost = tp.lost as u32;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, tp: &Sock) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, tp: &Sock, bw: u32) {
        if self.lt_bw != 0 {
            let diff = (bw.wrapping_sub(self.lt_bw) as i32).unsigned_abs();
            let close_ratio = u64::from(diff) * u64::from(BBR_UNIT)
                <= u64::from(self.k.lt_bw_ratio) * u64::from(self.lt_bw);
            let close_rate = self.rate_bytes_per_sec(tp.mss_cache, u64::from(diff), BBR_UNIT)
                <= self.k.lt_bw_diff;
            if close_ratio || close_rate {
                self.lt_bw = ((u64::from(bw) + u64::from(self.lt_bw)) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: measure delivery rate over intervals that start and end with a
    /// loss; a policer shows as two such intervals with high loss and the same rate.
    fn lt_bw_sampling(&mut self, tp: &Sock, rs: &RateSample, rng: &mut Rng) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= self.k.lt_bw_max_rtts {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp, rng);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < self.k.lt_intvl_min_rtts {
            return;
        }
        if self.lt_rtt_cnt > 4 * self.k.lt_intvl_min_rtts {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = (tp.lost as u32).wrapping_sub(self.lt_last_lost);
        let delivered = (tp.delivered as u32).wrapping_sub(self.lt_last_delivered);
        if delivered == 0
            || (u64::from(lost) << BBR_SCALE)
                < u64::from(self.k.lt_loss_thresh) * u64::from(delivered)
        {
            return;
        }
        let t = ((tp.delivered_mstamp / NSEC_PER_MSEC) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return;
        }
        if t >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let bw = u64::from(delivered) * BW_UNIT / u64::from(t * 1000);
        self.lt_bw_interval_done(tp, bw as u32);
    }

    /// `bbr_update_bw`: count rounds and feed the delivery-rate sample to the max filter.
    fn update_bw(&mut self, tp: &Sock, rs: &RateSample, rng: &mut Rng) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs, rng);
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        let bw = u32::try_from(bw).unwrap_or(u32::MAX);
        if !rs.is_app_limited || bw >= self.max_bw() {
            let win = self.v.bw_win_rounds(&self.k, self.min_rtt_us);
            self.bw.update(win, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the most data ACKed beyond bw x elapsed in an epoch, kept
    /// as a max over two windows of `extra_acked_win_rtts` rounds.
    fn update_ack_aggregation(&mut self, tp: &Sock, rs: &RateSample) {
        if !self.k.extra_acked
            || self.k.extra_acked_gain == 0
            || rs.acked_sacked == 0
            || rs.delivered < 0
            || rs.interval_us <= 0
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts =
                (self.extra_acked_win_rtts + 1).min(EXTRA_ACKED_WIN_RTTS_MAX);
            if self.extra_acked_win_rtts >= self.k.extra_acked_win_rtts {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let delivered_us = tp.delivered_mstamp / NSEC_PER_USEC;
        let epoch_us = stamp_us_delta(delivered_us, self.ack_epoch_mstamp);
        let mut expected = (u64::from(self.bw()) * u64::from(epoch_us) / BW_UNIT) as u32;
        if self.ack_epoch_acked <= expected
            || u64::from(self.ack_epoch_acked) + u64::from(rs.acked_sacked)
                >= u64::from(self.k.ack_epoch_acked_reset_thresh)
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

    /// `bbr_check_full_bw_reached`: the pipe is full after `full_bw_cnt` rounds of growth below
    /// `full_bw_thresh`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (u64::from(self.full_bw) * u64::from(self.k.full_bw_thresh)) >> BBR_SCALE;
        if u64::from(self.max_bw()) >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.k.full_bw_cnt;
    }

    /// `bbr_check_drain`: STARTUP -> DRAIN when full; DRAIN -> PROBE_BW when inflight <= BDP.
    fn check_drain(&mut self, tp: &mut Sock, rng: &mut Rng) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp, rng);
        }
    }

    /// `bbr_check_probe_rtt_done`: leave PROBE_RTT once its time is up, restoring cwnd.
    fn check_probe_rtt_done(&mut self, tp: &mut Sock, rng: &mut Rng) {
        if !(self.probe_rtt_done_stamp != 0 && after(tp.jiffies(), self.probe_rtt_done_stamp)) {
            return;
        }
        self.min_rtt_stamp = tp.jiffies();
        tp.set_cwnd(tp.snd_cwnd.max(self.prior_cwnd));
        self.reset_mode(tp, rng);
    }

    /// `bbr_update_min_rtt`: the min_rtt filter and the PROBE_RTT state machine.
    fn update_min_rtt(&mut self, tp: &mut Sock, rs: &RateSample, rng: &mut Rng) {
        let win_ms = self.v.min_rtt_win_ms(&self.k);
        let filter_expired = after(tp.jiffies(), self.min_rtt_stamp.wrapping_add(win_ms));
        if rs.rtt_us >= 0
            && (rs.rtt_us < i64::from(self.min_rtt_us) || (filter_expired && !rs.is_ack_delayed))
        {
            self.min_rtt_us = u32::try_from(rs.rtt_us).unwrap_or(u32::MAX);
            self.min_rtt_stamp = tp.jiffies();
        }
        if self.k.probe_rtt_mode_ms > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp = 0;
            self.v.on_probe_rtt(rng);
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken now are below the path rate: mark them app-limited.
            let mark = tp.delivered + u64::from(tp.packets_in_flight());
            tp.app_limited = mark.max(1);
            if self.probe_rtt_done_stamp == 0 && tp.packets_in_flight() <= self.k.cwnd_min_target {
                self.probe_rtt_done_stamp = tp.jiffies().wrapping_add(self.k.probe_rtt_mode_ms);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp, rng);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let k = &self.k;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (k.high_gain, k.high_gain),
            Mode::Drain => (k.drain_gain, k.high_gain),
            Mode::ProbeBw if self.lt_use_bw => (BBR_UNIT, k.cwnd_gain),
            Mode::ProbeBw => (self.v.cycle_gain(k, self.cycle_idx), k.cwnd_gain),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, tp: &mut Sock, rs: &RateSample, rng: &mut Rng) {
        self.update_bw(tp, rs, rng);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp, rng);
        self.update_min_rtt(tp, rs, rng);
        self.v.on_ack(tp, rs, self.min_rtt_us);
        self.update_gains();
    }
}

impl<V: Variant> CongestionControl for Bbr<V> {
    fn name(&self) -> &'static str {
        self.name
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut Sock, rng: &mut Rng) {
        let seed = u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());
        self.event_rng = Rng::new(seed, EVENT_STREAM);
        self.mss = tp.mss_cache;
        self.prior_cwnd = 0;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = tp.delivered;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = tp.min_rtt_us;
        self.min_rtt_stamp = tp.jiffies();
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.mode = Mode::Startup;
        self.pacing_gain = self.k.high_gain;
        self.cwnd_gain = self.k.high_gain;
        self.ack_epoch_mstamp = tp.now_us();
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
        tp.pacing_status = PacingStatus::Needed;
        self.v.init(rng);
    }

    /// `bbr_ssthresh`: entering recovery; remember cwnd, leave ssthresh alone.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample, rng: &mut Rng) {
        self.mss = tp.mss_cache;
        self.update_model(tp, rs, rng);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
        let bdp = self.bdp_scaled();
        self.v.on_cwnd_update(bdp);
    }

    /// `bbr_set_state`: an RTO ends the round and counts as a loss for long-term sampling.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            let rs = RateSample {
                losses: 1,
                ..RateSample::default()
            };
            let mut rng = self.event_rng.clone();
            self.lt_bw_sampling(tp, &rs, &mut rng);
            self.event_rng = rng;
        }
    }

    /// `bbr_cwnd_event`: restart after idle paces at bw (PROBE_BW) or may end PROBE_RTT.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if ev != CaEvent::TxStart || tp.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = tp.now_us();
        self.ack_epoch_acked = 0;
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(tp, self.bw(), BBR_UNIT);
        } else if self.mode == Mode::ProbeRtt {
            let mut rng = self.event_rng.clone();
            self.check_probe_rtt_done(tp, &mut rng);
            self.event_rng = rng;
        }
    }

    /// `bbr_undo_cwnd`: a spurious loss; restart full-pipe detection and long-term sampling.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    fn min_tso_segs(&self, tp: &Sock) -> Option<u32> {
        Some(self.v.min_tso_segs(&self.k, tp))
    }

    /// `bbr_sndbuf_expand`: 3 x cwnd, since BBR may slow-start during recovery.
    fn sndbuf_expand(&self) -> u32 {
        3
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    fn model(&self) -> Vec<ModelValue> {
        let unit = f64::from(BBR_UNIT);
        let bw_bps = (u128::from(self.bw()) * u128::from(self.mss) * 8 * u128::from(USEC_PER_SEC))
            >> BW_SCALE;
        let min_rtt = if self.min_rtt_us == u32::MAX {
            f64::NAN
        } else {
            f64::from(self.min_rtt_us)
        };
        let mut out = vec![
            ("bw_bps", bw_bps as f64),
            ("min_rtt_us", min_rtt),
            ("mode", f64::from(self.mode as u8)),
            ("pacing_gain", f64::from(self.pacing_gain) / unit),
            ("cwnd_gain", f64::from(self.cwnd_gain) / unit),
            ("cycle_idx", f64::from(self.cycle_idx)),
            ("cycle_len", f64::from(self.v.cycle_len(&self.k))),
            ("full_bw_reached", f64::from(u8::from(self.full_bw_reached))),
            ("extra_acked", f64::from(self.max_extra_acked())),
            ("lt_use_bw", f64::from(u8::from(self.lt_use_bw))),
            ("target_cwnd", f64::from(self.target_cwnd)),
        ];
        self.v.model(&mut out);
        out
    }
}

/// The parameter table of a BBR-family algorithm: the engine's knobs with the variant's
/// defaults (minus those the variant derives from its own parameters), then its own.
pub(crate) fn table<P: Serialize + Default>(engine: &Params, derived: &[&str]) -> Value {
    let mut out = object_of(engine);
    for key in derived {
        out.remove(*key);
    }
    out.extend(object_of(&P::default()));
    Value::Object(out)
}

/// The schema of [`table`]'s parameters: the engine's but `derived`, then `P`'s own.
pub(crate) fn table_schema<P: JsonSchema>(derived: &[&str]) -> Map<String, Value> {
    let mut out = schema_of::<Params>();
    for key in derived {
        out.remove(*key);
    }
    out.extend(schema_of::<P>());
    out
}

fn object_of<T: Serialize>(v: &T) -> Map<String, Value> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Split a scenario's parameter map between the engine's knobs (over the variant's defaults
/// `engine`) and the variant's own parameters `P`. Keys in `derived` are set by the variant
/// and may not be given; unknown keys are errors that list the valid ones.
pub(crate) fn parse<P: Serialize + DeserializeOwned + Default>(
    algo: &str,
    map: &Map<String, Value>,
    engine: &Params,
    derived: &[&str],
) -> Result<(Params, P), String> {
    let own_keys = object_of(&P::default());
    let mut engine_map = object_of(engine);
    let mut own_map = Map::new();
    for (key, value) in map {
        if own_keys.contains_key(key) {
            own_map.insert(key.clone(), value.clone());
        } else if engine_map.contains_key(key) && !derived.contains(&key.as_str()) {
            engine_map.insert(key.clone(), value.clone());
        } else {
            let valid = table::<P>(engine, derived);
            let names: Vec<&str> = valid
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(format!(
                "parameter {key} = {value}: not a parameter of {algo}; expected one of {}",
                names.join(", ")
            ));
        }
    }
    Ok((params_from(&engine_map)?, params_from(&own_map)?))
}

/// No parameters beyond the engine's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

pub const INFO: CcInfo = CcInfo {
    name: "bbr",
    summary: "BBRv1: model-based pacing at the max delivery rate, cwnd 2 x BDP (Linux tcp_bbr.c)",
    source: "Linux net/ipv4/tcp_bbr.c (6.x); Cardwell et al., ACM Queue 14(5), 2016",
    defaults: || table::<NoParams>(&Params::default(), &[]),
    schema: || table_schema::<NoParams>(&[]),
    make: |m| {
        let (params, NoParams {}) = parse::<NoParams>("bbr", m, &Params::default(), &[])?;
        Ok(Box::new(Bbr::new("bbr", params.knobs()?, Linux)))
    },
};

#[cfg(test)]
mod tests;
