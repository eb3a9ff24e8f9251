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
//! ([`Variant`]), never a copy of it. The machinery this engine shares with the v2/v3 engine
//! (fixed point, rate conversion, BDP, quantization budget, skb budget, ACK aggregation, the
//! PROBE_RTT hold) is in [`super::bbr_common`].
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
use super::bbr_common::{
    self as common, after, stamp_us_delta, AckAggregation, Budget, ProbeRttHold, RateRule,
    SendQuantum, TsoRule, EXTRA_ACKED_WIN_RTTS_MAX, V1_TSO_SEGS_GOAL_MAX,
};
pub(crate) use super::bbr_common::{in_range, whole};
pub use super::bbr_common::{Mode, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT};
use super::registry::{params_from, schema_of, CcInfo};
use super::{CongestionControl, ModelValue};
use crate::parse::{Dur, Rate};
use crate::sim::Rng;
use crate::tcp::rate_sample::RateSample;
use crate::tcp::sock::{
    CaEvent, CaState, PacingStatus, Sock, TCP_INFINITE_SSTHRESH, TCP_INIT_CWND,
};
use crate::units::{NSEC_PER_MSEC, NSEC_PER_USEC, USEC_PER_SEC};

pub use super::bbr_common::defaults::{DRAIN_GAIN, HIGH_GAIN};

/// Largest gain a parameter may take (keeps every product well inside 128 bits).
const GAIN_MAX: f64 = 64.0;

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
        use super::bbr_common::defaults as d;
        Params {
            high_gain: d::gain(d::HIGH_GAIN),
            drain_gain: d::gain(d::DRAIN_GAIN),
            cwnd_gain: d::gain(d::CWND_GAIN),
            probe_bw_up_gain: d::gain(d::PROBE_UP_GAIN),
            probe_bw_down_gain: d::gain(d::PROBE_DOWN_GAIN),
            cycle_len: 8,
            bw_rtts: 10,
            min_rtt_win: Dur(d::MIN_RTT_WIN_MS * NSEC_PER_MSEC),
            probe_rtt_mode: Dur(d::PROBE_RTT_MODE_MS * NSEC_PER_MSEC),
            cwnd_min_target: d::CWND_MIN_TARGET,
            min_tso_rate: Rate(d::MIN_TSO_RATE_BPS),
            pacing_margin_percent: d::PACING_MARGIN_PERCENT,
            full_bw_thresh: d::gain(d::FULL_BW_THRESH),
            full_bw_cnt: d::FULL_BW_CNT,
            lt_intvl_min_rtts: 4,
            lt_loss_thresh: 50.0 / f64::from(BBR_UNIT),
            lt_bw_ratio: 0.125,
            lt_bw_diff: Rate(4_000),
            lt_bw_max_rtts: 48,
            extra_acked: true,
            extra_acked_gain: d::gain(d::EXTRA_ACKED_GAIN),
            extra_acked_win_rtts: d::EXTRA_ACKED_WIN_RTTS,
            ack_epoch_acked_reset_thresh: d::ACK_EPOCH_ACKED_RESET_THRESH,
            extra_acked_max: Dur(d::EXTRA_ACKED_MAX_MS * NSEC_PER_MSEC),
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

/// Linux v1's skb budget: `bbr_min_tso_segs` (1 segment below `min_tso_rate`, else 2) and
/// `bbr_tso_segs_goal` (`pacing_rate >> sk_pacing_shift`, at most a legacy GSO skb and 0x7F
/// segments).
pub fn linux_tso_rule(k: &Knobs) -> TsoRule {
    TsoRule {
        min_rate: k.min_tso_rate,
        min_segs: 2,
        quantum: SendQuantum::PacingShift {
            rtt_shift: 0,
            max_segs: V1_TSO_SEGS_GOAL_MAX,
        },
    }
}

/// Linux `bbr_min_tso_segs`.
pub fn min_tso_segs(k: &Knobs, tp: &Sock) -> u32 {
    linux_tso_rule(k).min_tso_segs(tp)
}

/// Linux `bbr_tso_segs_goal`, in segments.
pub fn tso_segs_goal(k: &Knobs, tp: &Sock) -> u32 {
    linux_tso_rule(k).segs_goal(tp, u32::MAX)
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
    /// The skb budget: `bbr_min_tso_segs` and `bbr_tso_segs_goal`.
    fn tso_rule(&self, k: &Knobs) -> TsoRule {
        linux_tso_rule(k)
    }
    /// Segments per skb that BBR budgets for (`bbr_tso_segs_goal`).
    fn tso_segs_goal(&self, k: &Knobs, tp: &Sock) -> u32 {
        self.tso_rule(k).segs_goal(tp, u32::MAX)
    }
    /// The `min_tso_segs` callback.
    fn min_tso_segs(&self, k: &Knobs, tp: &Sock) -> u32 {
        self.tso_rule(k).min_tso_segs(tp)
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
    /// PROBE_RTT's minimum stay.
    probe_rtt: ProbeRttHold,
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
    /// ACK aggregation (`extra_acked`).
    aggr: AckAggregation,
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
            probe_rtt: ProbeRttHold::default(),
            bw: WinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
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
            aggr: AckAggregation::default(),
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
        self.aggr.max()
    }

    /// bw x min_rtt (packets << BW_SCALE), for the variants' BDP evaluations.
    fn bdp_scaled(&self) -> Option<u64> {
        (self.min_rtt_us != u32::MAX).then(|| u64::from(self.bw()) * u64::from(self.min_rtt_us))
    }

    /// v1's rate conversion: `bbr_pacing_margin_percent` below, no floor.
    fn rate_rule(&self) -> RateRule {
        RateRule {
            margin_percent: self.k.pacing_margin_percent,
            at_least_one: false,
        }
    }

    /// `bbr_rate_bytes_per_sec`: a bw and gain in bytes per second, `pacing_margin_percent` below.
    fn rate_bytes_per_sec(&self, mss: u32, rate: u64, gain: u32) -> u64 {
        self.rate_rule().bytes_per_sec(mss, rate, gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain x cwnd / srtt (1 ms before any sample).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut Sock) {
        self.has_seen_rtt = self.rate_rule().init_from_rtt(tp, self.k.high_gain);
    }

    /// `bbr_set_pacing_rate`: before the pipe is full the rate only rises.
    fn set_pacing_rate(&mut self, tp: &mut Sock, bw: u32, gain: u32) {
        let (rule, init_gain) = (self.rate_rule(), self.k.high_gain);
        rule.set(
            tp,
            bw,
            gain,
            init_gain,
            &mut self.has_seen_rtt,
            self.full_bw_reached,
        );
    }

    fn tso_segs_goal(&self, tp: &Sock) -> u32 {
        self.v.tso_segs_goal(&self.k, tp)
    }

    /// `bbr_save_cwnd`: remember the last good cwnd before recovery or PROBE_RTT cut it.
    fn save_cwnd(&mut self, tp: &Sock) {
        self.prior_cwnd = common::saved_cwnd(self.prior_cwnd, tp, self.prev_ca_state, self.mode);
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain) packets; the initial cwnd before any RTT sample.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        common::bdp(bw, self.min_rtt_us, gain, TCP_INIT_CWND)
    }

    /// `bbr_quantization_budget`: room for three TSO quanta, rounded up to even, +2 in phase 0.
    fn quantization_budget(&self, tp: &Sock, cwnd: u32) -> u32 {
        let probing = self.mode == Mode::ProbeBw && self.cycle_idx == 0;
        common::quantization_budget(cwnd, self.tso_segs_goal(tp), Budget::AddQuanta, probing)
    }

    /// `bbr_inflight`: the in-flight target for `gain`.
    fn inflight(&self, tp: &Sock, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: inflight minus what the bottleneck delivers before the
    /// next skb's departure time (plus that skb when probing).
    fn packets_in_net_at_edt(&self, tp: &Sock, inflight_now: u32) -> u32 {
        let goal = self.tso_segs_goal(tp);
        common::packets_in_net_at_edt(tp, self.bw(), inflight_now, self.pacing_gain, goal)
    }

    /// `bbr_ack_aggregation_cwnd`: extra cwnd for ACK aggregation, at most bw x extra_acked_max.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.k.extra_acked || self.k.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        self.aggr.cwnd(
            self.bw(),
            self.k.extra_acked_gain,
            self.k.extra_acked_max_us,
        )
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
                let bdp = self.bdp(bw, gain);
                let aggr = self.ack_aggregation_cwnd();
                let target = self.quantization_budget(tp, bdp.saturating_add(aggr));
                self.target_cwnd = target;
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(self.k.cwnd_min_target);
            }
        }
        common::apply_cwnd(tp, cwnd, self.mode, self.k.cwnd_min_target);
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
        if !self.k.extra_acked || self.k.extra_acked_gain == 0 {
            return;
        }
        self.aggr.update(
            tp,
            rs,
            self.bw(),
            self.round_start,
            self.k.extra_acked_win_rtts,
            self.k.ack_epoch_acked_reset_thresh,
        );
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
        if !self.probe_rtt.time_up(tp) {
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
        let due = self.k.probe_rtt_mode_ms > 0 && filter_expired && !self.idle_restart;
        let (mode, prior, prev) = (&mut self.mode, &mut self.prior_cwnd, self.prev_ca_state);
        if self.probe_rtt.enter(due, mode, prior, tp, prev) {
            self.v.on_probe_rtt(rng);
        }
        if self.mode == Mode::ProbeRtt {
            let (k, round_start) = (&self.k, self.round_start);
            let (next_round, check) =
                self.probe_rtt
                    .on_ack(tp, k.cwnd_min_target, k.probe_rtt_mode_ms, round_start);
            if let Some(delivered) = next_round {
                self.next_rtt_delivered = delivered;
            }
            if check {
                self.check_probe_rtt_done(tp, rng);
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
        self.probe_rtt = ProbeRttHold::default();
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
        self.aggr = AckAggregation::new(tp.now_us());
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
        if !self.aggr.restart_after_idle(tp, ev) {
            return;
        }
        self.idle_restart = true;
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
