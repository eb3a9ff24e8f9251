//! BBRv2 (alpha) and BBRv3: one engine, two logic versions, three registered names.
//!
//! Sources: google/bbr branch `v2alpha`, net/ipv4/tcp_bbr2.c (BBRv2 alpha); google/bbr branch
//! `v3`, net/ipv4/tcp_bbr.c (BBRv3, `BBR_VERSION` 3); IETF draft-ietf-ccwg-bbr (BBR congestion
//! control, the v3 algorithm in prose). Constants and arithmetic follow the kernel files.
//!
//! # Model
//! BBR keeps a model of the path: the bottleneck bandwidth `max_bw` (the larger of two
//! slots of a max filter that advances once per ProbeBW cycle) and the two-way propagation delay
//! `min_rtt` (a 10 s min filter, refreshed by a short ProbeRTT dip every 5 s without a new
//! minimum). Their product is the BDP. On top of this v2/v3 keep bounds learned from loss and
//! ECN: a long-term ceiling `inflight_hi` (the volume of data at which a probe saw loss above
//! 2% or CE marks above 50%) and short-term floors-of-caution `bw_lo`/`inflight_lo` (cut by
//! `beta` = 30% per round with loss, or by `ecn_factor x ecn_alpha` per round with CE marks,
//! while not probing). The bandwidth used is `min(max_bw, bw_lo)`; pacing rate is
//! `pacing_gain x bw x (1 - 1%)`; cwnd is `cwnd_gain x BDP` plus an allowance for ACK
//! aggregation (`extra_acked`), a TSO quantum budget, and is then capped by the bounds.
//!
//! # States
//! ```text
//!   STARTUP --(bw plateau, or loss/ECN too high)--> DRAIN --(inflight <= BDP)--> PROBE_BW
//!   PROBE_BW: DOWN --(inflight <= BDP and headroom)--> CRUISE --(probe time)--> REFILL
//!             REFILL --(one round)--> UP --(end of probe)--> DOWN ...
//!   any state --(no lower RTT for 5 s)--> PROBE_RTT (cwnd = BDP/2 for 200 ms and a round)
//!             --> PROBE_BW (CRUISE) if the pipe was filled, else STARTUP
//! ```
//! STARTUP paces at 2/ln2 (v2) or 4 ln2 (v3) times bw. DOWN (gain 0.75 v2, 0.91 v3) drains
//! the queue a probe built. CRUISE (1.0) holds inflight `inflight_headroom` (15%) below
//! inflight_hi. Time to probe comes at a random 2..3 s of wall clock, or earlier after
//! `min(63, BDP)` rounds (Reno coexistence; the round counter starts at a random 0..1).
//! REFILL (1.0) refills the pipe for one round with the lower bounds reset. UP (1.25) raises
//! inflight_hi by 1, 2, 4, ... packets per round (`bw_probe_up_cnt` = cwnd / 2^rounds ACKed
//! packets per increment) while cwnd-limited at it. A probe that loses more than 2% of its
//! flight cuts inflight_hi to `max(tx_in_flight, (1 - beta) x target inflight)` (at the exact
//! packet where the loss rate crossed 2% when the loss is reported through
//! `skb_marked_lost`) and goes to DOWN.
//!
//! # v2alpha and v3 logic differences (the `version` switch)
//! 1. Full-bandwidth estimator: v2 compares the max filter with the plateau level at round
//!    starts, in STARTUP only; v3 compares each non-app-limited sample, keeps a `full_bw_now`
//!    flag, and is reused in ProbeBW UP.
//! 2. End of ProbeBW UP: v2 after one min_rtt once inflight >= `probe_up_inflight_gain` x BDP;
//!    v3 once the bandwidth plateaus (3 rounds under 25% growth) while inflight_hi is not the
//!    limit (being cwnd-limited at inflight_hi restarts the estimator). Both also end when a
//!    probe that previously went too high reaches inflight_hi again, and on loss/ECN.
//! 3. STARTUP exit on loss/ECN sets inflight_hi to the BDP (v2) or to the larger of the BDP
//!    and the data delivered in the last round (v3).
//! 4. ECN: v2 tracks ecn_alpha on every round and uses ECN when enabled and min_rtt <= 5 ms;
//!    v3 tracks alpha only once ECN is usable (negotiated, enabled, `ecn_factor` > 0, min_rtt
//!    <= 5 ms) and counts ECE only then. CE fraction "too high" is `>=` the threshold in v2 and
//!    `>` in v3.
//! 5. The "latest round" rate and volume (floors for the bw_lo/inflight_lo cuts) are gathered
//!    inside the model update and restarted right after each per-round cut (v2), or gathered on
//!    every valid sample before the app-limited fast path and restarted at the end of the ACK
//!    (v3).
//! 6. An RTT sample equal to the ProbeRTT-window minimum refreshes its timestamp in v2 (`<=`),
//!    not in v3 (`<`).
//! 7. In UP, v2 drops the accumulated ACK credit for raising inflight_hi whenever it is not
//!    cwnd-limited at inflight_hi; v3 keeps it.
//! 8. v3 keeps bw_lo at least 1 (unit of 2^-24 packets/us).
//! 9. On RTO (`set_state(Loss)`) and on undo, v2 clears only the plateau level (and count on
//!    undo), v3 restarts the whole estimator; on RTO inflight_lo becomes the prior cwnd (v2)
//!    or max(cwnd, prior cwnd) (v3).
//! 10. The first round ends at the first ACK (v2: next_rtt_delivered 0) or when data sent
//!     after init is ACKed (v3).
//! 11. v3 forces the slow path (cwnd recomputation) after raising inflight_hi and after undo.
//!
//! Differences of constants only are parameters with per-name defaults ([`Params::bbr2`],
//! [`Params::bbr3`], [`Params::bbrn3`]); so are v2's switches (ECN cuts of bw_lo and bw_hi,
//! `refill_add_inc`, `drain_to_target`, `undo`), which v3 fixes at one setting.
//!
//! What this engine has in common with v1 (fixed point, rate conversion, BDP, quantization
//! budget, skb budget, ACK aggregation, the ProbeRTT hold) is the shared machinery of
//! [`super::bbr_common`], with v2/v3's choices passed as parameters. bbrn3's send quantum is
//! bbrn's: `send_quantum_interval` (1 ms) replaces the kernel's `sk_pacing_rate >>
//! sk_pacing_shift` in `bbr_tso_segs_goal` (the cwnd budget and the in-network estimate),
//! computed by the same code as bbrn's; the skb size (`bbr_tso_segs`) stays the kernel's rule,
//! as bbrn's skbs are the stack's.
//!
//! # Simulator notes
//! - Fixed point exactly as the kernel: gains in 1/256 (`BBR_SCALE` 8), bandwidth in
//!   packets/us x 2^24 (`BW_SCALE` 24). Intermediate products use 128 bits, so values the
//!   kernel computes without overflow come out identical and nothing can overflow.
//! - `tp.pacing_tp` (the "TP rate" multiplier) multiplies the pacing rate written to the
//!   socket. The TSO budget reads the socket's pacing rate, as the kernel reads
//!   `sk_pacing_rate`.
//! - `skb_marked_lost` receives one packet's record, so the lost skb's `pcount` is 1.
//! - The random probe wait is drawn from the `Rng` of the next `cong_control` when it is
//!   started from a hook without one (`cwnd_event`, `skb_marked_lost`); nothing reads it
//!   before then, so behaviour is unchanged.
//! - Not modelled: v3's Protective Load Balancing (flow-label rehash on ECN) and TLP loss-probe
//!   recovery (`CA_EVENT_TLP_RECOVERY`, not an event of this engine); receiver-side switches
//!   (precise ECE ACKs, fast ACK mode); v2's experimental `usage_based_cwnd` and the padding
//!   variant of `cwnd_tso_budget` (both off by default there).

mod params;
#[cfg(test)]
mod tests;

pub use params::{Config, Params, Version};

use super::bbr_common::{
    self as common, after, sat_u32, scale, AckAggregation, Budget, Mode, ProbeRttHold, RateRule,
    SendQuantum, TsoRule, BBR_SCALE, BBR_UNIT, BW_UNIT,
};
use super::registry::{schema_of, CcInfo};
use super::{CongestionControl, ModelValue};
use crate::sim::Rng;
use crate::tcp::rate_sample::{RateSample, TxState};
use crate::tcp::sock::{CaEvent, CaState, PacingStatus, Sock, TCP_INFINITE_SSTHRESH};

/// "No bound" for bw_lo, bw_hi, inflight_lo, inflight_hi and min_rtt (the kernel's `~0U`).
const UNSET: u32 = u32::MAX;
/// Saturation of the kernel's bit fields: rounds_since_probe (8 bits), loss_events_in_round
/// (4 bits); bw_probe_up_rounds is capped at 30 by the code.
const ROUNDS_SINCE_PROBE_MAX: u32 = 0xFF;
const LOSS_EVENTS_MAX: u32 = 0xF;
const PROBE_UP_ROUNDS_MAX: u32 = 30;
/// Packets per lost record handed to `skb_marked_lost` (`tcp_skb_pcount`).
const LOST_SKB_PCOUNT: i64 = 1;

/// ProbeBW phase (`bbr_pacing_gain_phase`); the value is the `phase` reported by
/// [`Bbr3::model`] (the kernel numbers them UP 0, DOWN 1, CRUISE 2, REFILL 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Down = 0,
    Cruise = 1,
    Refill = 2,
    Up = 3,
}

impl Phase {
    const ALL: [Phase; 4] = [Phase::Down, Phase::Cruise, Phase::Refill, Phase::Up];

    fn label(self) -> &'static str {
        match self {
            Phase::Down => "DOWN",
            Phase::Cruise => "CRUISE",
            Phase::Refill => "REFILL",
            Phase::Up => "UP",
        }
    }
}

/// The coded quantities of [`Bbr3::model`]: `state` (the mode) and `phase` (ProbeBW's), each
/// code with its name.
pub fn model_codes() -> [(&'static str, Vec<(u32, &'static str)>); 2] {
    [
        (
            "state",
            Mode::ALL.iter().map(|&m| (m as u32, m.label())).collect(),
        ),
        (
            "phase",
            Phase::ALL.iter().map(|&p| (p as u32, p.label())).collect(),
        ),
    ]
}

/// `bbr_ack_phase`: what the ACKs now arriving say about bandwidth probing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The BBRv2/v3 state block (`struct bbr`).
#[derive(Debug, Clone)]
pub struct Bbr3 {
    name: &'static str,
    cfg: Config,
    mss: u32,

    min_rtt_us: u32,
    min_rtt_stamp: u32,
    /// ProbeRTT's minimum stay.
    probe_rtt: ProbeRttHold,
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    round_start: bool,
    bw_probe_up_rounds: u32,
    try_fast_path: bool,
    idle_restart: bool,
    init_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw_cnt: u32,
    full_bw: u32,
    cycle_idx: Phase,
    has_seen_rtt: bool,
    prior_cwnd: u32,

    /// ACK aggregation (`extra_acked`).
    aggr: AckAggregation,

    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u64,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    bw_latest: u32,
    bw_lo: u32,
    /// v2's separate upper bound on bandwidth, only ever set by the ECN cut (`ecn_bw_hi`).
    bw_hi: u32,
    /// The two slots of the max-bandwidth filter (v2 `max_bw[]`, v3 `bw_hi[]`).
    max_bw: [u32; 2],
    inflight_latest: u32,
    inflight_lo: u32,
    inflight_hi: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    probe_wait_us: u32,
    /// A probe wait was started where no `Rng` was at hand; drawn before it is next read.
    probe_wait_pending: bool,
    ecn_eligible: bool,
    ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    got_ok_bw_probe_sample: bool,
    rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    ack_phase: AckPhase,
    loss_events_in_round: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
}

fn info_defaults(p: Params) -> serde_json::Value {
    serde_json::to_value(p).unwrap_or(serde_json::Value::Null)
}

fn make(
    name: &'static str,
    defaults: Params,
    m: &serde_json::Map<String, serde_json::Value>,
) -> Result<Box<dyn CongestionControl>, String> {
    let cfg = defaults.with_overrides(m)?;
    Ok(Box::new(Bbr3::new(name, cfg)))
}

pub const BBR2_INFO: CcInfo = CcInfo {
    name: "bbr2",
    summary: "BBRv2 alpha: model-based, ProbeBW DOWN/CRUISE/REFILL/UP, loss and ECN bounds",
    source: "google/bbr v2alpha branch net/ipv4/tcp_bbr2.c",
    defaults: || info_defaults(Params::bbr2()),
    schema: schema_of::<Params>,
    make: |m| make("bbr2", Params::bbr2(), m),
};

pub const BBR3_INFO: CcInfo = CcInfo {
    name: "bbr3",
    summary: "BBRv3: BBRv2 with bw-plateau probe exit, startup gain 2.77, DOWN gain 0.91",
    source: "google/bbr v3 branch net/ipv4/tcp_bbr.c; IETF draft-ietf-ccwg-bbr",
    defaults: || info_defaults(Params::bbr3()),
    schema: schema_of::<Params>,
    make: |m| make("bbr3", Params::bbr3(), m),
};

pub const BBRN3_INFO: CcInfo = CcInfo {
    name: "bbrn3",
    summary: "BBR-n on the BBRv3 engine: ProbeBW UP 1.5, DOWN 0.9, startup 2.885, 4-MSS quantum",
    source: "google/bbr v3 branch net/ipv4/tcp_bbr.c with BBR-n's gains and send quantum (PLoS ONE 2023)",
    defaults: || info_defaults(Params::bbrn3()),
    schema: schema_of::<Params>,
    make: |m| make("bbrn3", Params::bbrn3(), m),
};

impl Bbr3 {
    /// An instance in the state `init` leaves it in for a fresh socket.
    pub fn new(name: &'static str, cfg: Config) -> Self {
        Bbr3 {
            name,
            mss: 1448,
            min_rtt_us: UNSET,
            min_rtt_stamp: 0,
            probe_rtt: ProbeRttHold::default(),
            probe_rtt_min_us: UNSET,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            init_cwnd: 0,
            pacing_gain: cfg.startup_pacing_gain,
            cwnd_gain: cfg.startup_cwnd_gain,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0,
            cycle_idx: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            aggr: AckAggregation::default(),
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 1,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            bw_lo: UNSET,
            bw_hi: UNSET,
            max_bw: [0; 2],
            inflight_latest: 0,
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            probe_wait_pending: false,
            ecn_eligible: false,
            ecn_alpha: cfg.ecn_alpha_init,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            got_ok_bw_probe_sample: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            cfg,
        }
    }

    fn v3(&self) -> bool {
        self.cfg.version == Version::V3
    }

    // ---- bandwidth, BDP and rates ----

    /// Windowed max of the delivery-rate samples.
    fn max_bw(&self) -> u32 {
        self.max_bw[0].max(self.max_bw[1])
    }

    /// The bandwidth the controls use: the max filter capped by the bounds.
    fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo).min(self.bw_hi)
    }

    /// v2/v3's rate conversion: `margin_percent` below, at least 1 byte per second.
    fn rate_rule(margin_percent: u32) -> RateRule {
        RateRule {
            margin_percent,
            at_least_one: true,
        }
    }

    /// `bbr_rate_bytes_per_sec`: bw x mss x gain x (1 - margin), bytes per second, at least 1.
    fn rate_bytes_per_sec(&self, bw: u32, gain: u32, margin_percent: u32) -> u64 {
        Self::rate_rule(margin_percent).bytes_per_sec(self.mss, u64::from(bw), gain)
    }

    /// Initial pacing: startup gain x cwnd / srtt (or a nominal 1 ms before any sample).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut Sock) {
        let rule = Self::rate_rule(self.cfg.pacing_margin_percent);
        self.has_seen_rtt = rule.init_from_rtt(tp, self.cfg.startup_pacing_gain);
    }

    /// Pace at gain x bw; before the pipe is full only ever raise the rate.
    fn set_pacing_rate(&mut self, tp: &mut Sock, bw: u32, gain: u32) {
        let rule = Self::rate_rule(self.cfg.pacing_margin_percent);
        let init_gain = self.cfg.startup_pacing_gain;
        let full = self.full_bw_reached;
        rule.set(tp, bw, gain, init_gain, &mut self.has_seen_rtt, full);
    }

    /// The kernel's skb rule, `bbr_tso_segs_generic`: `sk_pacing_rate >> sk_pacing_shift` plus
    /// the min_rtt allowance, at least `bbr_min_tso_segs`.
    fn kernel_tso_rule(&self) -> TsoRule {
        TsoRule {
            min_rate: self.cfg.min_tso_rate_bytes,
            min_segs: self.cfg.min_tso_segs,
            quantum: SendQuantum::PacingShift {
                rtt_shift: self.cfg.tso_rtt_shift,
                max_segs: u32::MAX,
            },
        }
    }

    /// Smallest TSO skb in segments for the current pacing rate (`bbr_min_tso_segs`).
    fn min_tso_segs_now(&self, tp: &Sock) -> u32 {
        self.kernel_tso_rule().min_tso_segs(tp)
    }

    /// `bbr_tso_segs_goal`, the quantum of the cwnd budget and of the in-network estimate:
    /// the kernel's rule, or BBR-n's quantum when `send_quantum_interval` is set.
    fn tso_segs_goal(&self, tp: &Sock) -> u32 {
        let mut rule = self.kernel_tso_rule();
        if let Some(quantum) = self.cfg.send_quantum {
            rule.quantum = quantum;
        }
        rule.segs_goal(tp, self.min_rtt_us)
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain) packets, or the initial cwnd before any RTT.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        common::bdp(bw, self.min_rtt_us, gain, self.init_cwnd)
    }

    /// `bbr_quantization_budget`: room for three TSO skbs, the cwnd floor, and +2 in UP so that
    /// the probe gets above the BDP even when it is small.
    fn quantization_budget(&self, tp: &Sock, cwnd: u32) -> u32 {
        let budget = Budget::AtLeast {
            cwnd_min_target: self.cfg.cwnd_min_target,
        };
        let probing = self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up;
        common::quantization_budget(cwnd, self.tso_segs_goal(tp), budget, probing)
    }

    /// `bbr_inflight`: gain x BDP with the quantization budget.
    fn inflight(&self, tp: &Sock, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: inflight minus what the path delivers before the next skb's
    /// earliest departure time, plus that skb when inflight is being raised.
    fn packets_in_net_at_edt(&self, tp: &Sock, inflight_now: u32) -> u32 {
        let goal = self.tso_segs_goal(tp);
        common::packets_in_net_at_edt(tp, self.bw(), inflight_now, self.pacing_gain, goal)
    }

    /// How much we want in flight: the BDP, unless congestion has cut cwnd below it.
    fn target_inflight(&self, tp: &Sock) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.snd_cwnd)
    }

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    fn has_elapsed_in_phase(&self, tp: &Sock, interval_us: u32) -> bool {
        tp.now_us() > self.cycle_mstamp + interval_us as u64
    }

    // ---- cwnd ----

    /// Cwnd increment for ACK aggregation: gain x extra_acked, at most bw x 100 ms.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.cfg.extra_acked_gain == 0
            || !(self.full_bw_reached || self.cfg.extra_acked_in_startup)
        {
            return 0;
        }
        self.aggr.cwnd(
            self.bw(),
            self.cfg.extra_acked_gain,
            self.cfg.extra_acked_max_us,
        )
    }

    fn probe_rtt_cwnd(&self) -> u32 {
        if self.cfg.probe_rtt_cwnd_gain == 0 {
            return self.cfg.cwnd_min_target;
        }
        self.bdp(self.bw(), self.cfg.probe_rtt_cwnd_gain)
            .max(self.cfg.cwnd_min_target)
    }

    /// `bbr_set_cwnd`: grow toward the target (slow-start style) or, once the pipe was full,
    /// snap down to it; ProbeRTT caps it.
    fn set_cwnd(&mut self, tp: &mut Sock, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let target = self
                .bdp(bw, gain)
                .saturating_add(self.ack_aggregation_cwnd());
            let target = self.quantization_budget(tp, target);
            self.try_fast_path = false;
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked);
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(self.cfg.cwnd_min_target);
        }
        common::apply_cwnd(tp, cwnd, self.mode, self.probe_rtt_cwnd());
    }

    /// inflight_hi less the headroom fraction (at least 1 packet), at least the cwnd floor.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = scale(self.inflight_hi, self.cfg.inflight_headroom).max(1);
        self.inflight_hi
            .saturating_sub(headroom)
            .max(self.cfg.cwnd_min_target)
    }

    /// Cap cwnd by the bounds the current phase respects.
    fn bound_cwnd_for_inflight_model(&self, tp: &mut Sock) {
        let mut cap = UNSET;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || self.mode == Mode::ProbeBw {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(self.cfg.cwnd_min_target);
        tp.set_cwnd(cap.min(tp.snd_cwnd));
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, tp: &Sock) {
        self.prior_cwnd = common::saved_cwnd(self.prior_cwnd, tp, self.prev_ca_state, self.mode);
    }

    // ---- per-ACK sampling ----

    fn update_round_start(&mut self, tp: &Sock, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    /// Delivery-rate sample, packets/us x 2^24, rounded up.
    fn bw_sample(rs: &RateSample) -> u32 {
        if rs.interval_us <= 0 || rs.delivered < 0 {
            return 0;
        }
        sat_u32((rs.delivered as u128 * BW_UNIT as u128).div_ceil(rs.interval_us as u128))
    }

    fn sample_delivered(rs: &RateSample) -> u32 {
        sat_u32(rs.delivered.max(0) as u128)
    }

    /// `bbr_update_ack_aggregation`, with a 1-round window in STARTUP when
    /// `extra_acked_in_startup` (v2/v3).
    fn update_ack_aggregation(&mut self, tp: &Sock, rs: &RateSample) {
        if self.cfg.extra_acked_gain == 0 {
            return;
        }
        let win_rtts = if self.cfg.extra_acked_in_startup && !self.full_bw_reached {
            1
        } else {
            self.cfg.extra_acked_win_rtts
        };
        self.aggr.update(
            tp,
            rs,
            self.bw(),
            self.round_start,
            win_rtts,
            self.cfg.ack_epoch_reset_pkts,
        );
    }

    // ---- congestion signals and bounds ----

    fn take_max_bw_sample(&mut self, bw: u32) {
        self.max_bw[1] = self.max_bw[1].max(bw);
    }

    /// Keep the max of the last one or two ProbeBW cycles.
    fn advance_max_bw_filter(&mut self) {
        if self.max_bw[1] == 0 {
            return;
        }
        self.max_bw[0] = self.max_bw[1];
        self.max_bw[1] = 0;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// Multiplier for ECN cuts: 1 - ecn_factor x alpha.
    fn ecn_cut(&self) -> u32 {
        BBR_UNIT - scale(self.ecn_alpha, self.cfg.ecn_factor).min(BBR_UNIT)
    }

    /// Once per round while not probing: cut bw_lo/inflight_lo by beta after loss (not below
    /// what the last round delivered) and inflight_lo (and in v2 bw_lo) by the ECN cut.
    fn adapt_lower_bounds(&mut self, tp: &Sock) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        let mut ecn_bw_lo = UNSET;
        if self.ecn_in_round && self.ecn_eligible && self.cfg.ecn_factor != 0 {
            let cut = self.ecn_cut();
            if self.cfg.ecn_bw_lo && self.bw_lo == UNSET {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == UNSET {
                self.inflight_lo = tp.snd_cwnd;
            }
            ecn_inflight_lo = scale(self.inflight_lo, cut);
            if self.cfg.ecn_bw_lo {
                ecn_bw_lo = scale(self.bw_lo, cut);
            }
        }
        if self.loss_in_round {
            if self.bw_lo == UNSET {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == UNSET {
                self.inflight_lo = tp.snd_cwnd;
            }
            let keep = BBR_UNIT - self.cfg.beta;
            self.bw_lo = self.bw_latest.max(scale(self.bw_lo, keep));
            self.inflight_lo = self.inflight_latest.max(scale(self.inflight_lo, keep));
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.min(ecn_bw_lo);
        if self.v3() {
            self.bw_lo = self.bw_lo.max(1);
        }
    }

    /// v3: the rate and volume delivered in the latest round, and the loss-round clock.
    fn update_latest_delivery_signals(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u32) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(Self::sample_delivered(rs));
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
    }

    fn update_congestion_signals(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u32) {
        if !self.v3() {
            self.loss_round_start = false;
        }
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_max_bw_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if self.v3() {
            if !self.loss_round_start {
                return;
            }
        } else {
            self.bw_latest = self.bw_latest.max(sample_bw);
            self.inflight_latest = self.inflight_latest.max(Self::sample_delivered(rs));
            if rs.prior_delivered < self.loss_round_delivered {
                return;
            }
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
        self.adapt_lower_bounds(tp);
        self.loss_in_round = false;
        self.ecn_in_round = false;
        if !self.v3() {
            self.bw_latest = sample_bw;
            self.inflight_latest = Self::sample_delivered(rs);
        }
    }

    fn ecn_usable(&self, tp: &Sock) -> bool {
        match self.cfg.version {
            Version::V2 => self.cfg.ecn_enable,
            Version::V3 => self.cfg.ecn_enable && tp.ecn_ok && self.cfg.ecn_factor != 0,
        }
    }

    fn ecn_rtt_ok(&self) -> bool {
        self.cfg.ecn_max_rtt_us == 0 || self.min_rtt_us <= self.cfg.ecn_max_rtt_us
    }

    /// Once per round: EWMA of the CE-marked fraction of delivered packets.
    fn update_ecn_alpha(&mut self, tp: &Sock) {
        if self.v3() {
            if !self.ecn_eligible && self.ecn_usable(tp) && self.ecn_rtt_ok() {
                self.ecn_eligible = true;
            }
            if !self.ecn_eligible {
                return;
            }
        } else if self.cfg.ecn_factor == 0 {
            return;
        }
        if tp.delivered < self.alpha_last_delivered
            || tp.delivered_ce < self.alpha_last_delivered_ce
        {
            return;
        }
        let delivered = tp.delivered - self.alpha_last_delivered;
        let delivered_ce = tp.delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return;
        }
        if !self.v3() && !self.ecn_eligible && self.ecn_usable(tp) && self.ecn_rtt_ok() {
            self.ecn_eligible = true;
        }
        let ce_ratio = sat_u32(((delivered_ce as u128) << BBR_SCALE) / delivered as u128);
        let gain = self.cfg.ecn_alpha_gain;
        let alpha = scale(self.ecn_alpha, BBR_UNIT - gain).saturating_add(scale(ce_ratio, gain));
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio);
    }

    /// Does this sample's loss or CE rate say inflight is too high?
    fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh = scale(rs.tx_in_flight, self.cfg.loss_thresh);
            if rs.lost > loss_thresh as u64 {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible && self.cfg.ecn_thresh != 0
        {
            let ecn_thresh = (rs.delivered as u128 * self.cfg.ecn_thresh as u128) >> BBR_SCALE;
            let ce = rs.delivered_ce as u128;
            return if self.v3() {
                ce > ecn_thresh
            } else {
                ce >= ecn_thresh
            };
        }
        false
    }

    /// The inflight at which the loss rate of the flight ending with the lost packet crossed
    /// `loss_thresh`: solve (lost_prev + x) / (inflight_prev + x) = loss_thresh for x, round up.
    fn inflight_hi_from_lost_skb(&self, rs: &RateSample) -> u32 {
        let inflight_prev = rs.tx_in_flight as i64 - LOST_SKB_PCOUNT;
        let lost_prev = i64::try_from(rs.lost).unwrap_or(i64::MAX) - LOST_SKB_PCOUNT;
        if inflight_prev < 0 || lost_prev < 0 {
            return UNSET;
        }
        let loss_thresh = self.cfg.loss_thresh as i64;
        let loss_budget = (inflight_prev * loss_thresh + BBR_UNIT as i64 - 1) >> BBR_SCALE;
        let lost_prefix = if lost_prev >= loss_budget {
            0
        } else {
            ((loss_budget - lost_prev) << BBR_SCALE) / (BBR_UNIT as i64 - loss_thresh)
        };
        sat_u32((inflight_prev + lost_prefix) as u128)
    }

    // ---- STARTUP and DRAIN ----

    fn handle_queue_too_high_in_startup(&mut self, tp: &Sock) {
        self.full_bw_reached = true;
        let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
        self.inflight_hi = if self.v3() {
            bdp.max(self.inflight_latest)
        } else {
            bdp
        };
    }

    fn check_ecn_too_high_in_startup(&mut self, tp: &Sock, ce_ratio: u32) {
        if self.full_bw_reached
            || !self.ecn_eligible
            || self.cfg.full_ecn_cnt == 0
            || self.cfg.ecn_thresh == 0
        {
            return;
        }
        if ce_ratio >= self.cfg.ecn_thresh {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= self.cfg.full_ecn_cnt {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// Leave STARTUP after `full_loss_cnt` loss events in a recovery round whose loss rate is
    /// above `loss_thresh`, judged at the end of the round.
    fn check_loss_too_high_in_startup(&mut self, tp: &Sock, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < LOSS_EVENTS_MAX {
            self.loss_events_in_round += 1;
        }
        if self.cfg.full_loss_cnt != 0
            && self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.cfg.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Full-bandwidth (plateau) estimator; see the version differences.
    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.v3() {
            if self.full_bw_now || rs.is_app_limited {
                return;
            }
            let bw_thresh = scale(self.full_bw, self.cfg.full_bw_thresh);
            if sample_bw >= bw_thresh {
                self.reset_full_bw();
                self.full_bw = sample_bw;
                return;
            }
            if !self.round_start {
                return;
            }
            self.full_bw_cnt = self.full_bw_cnt.saturating_add(1);
            self.full_bw_now = self.full_bw_cnt >= self.cfg.full_bw_cnt;
            self.full_bw_reached |= self.full_bw_now;
        } else {
            if self.full_bw_reached || !self.round_start || rs.is_app_limited {
                return;
            }
            let bw_thresh = scale(self.full_bw, self.cfg.full_bw_thresh);
            if self.max_bw() >= bw_thresh {
                self.full_bw = self.max_bw();
                self.full_bw_cnt = 0;
                return;
            }
            self.full_bw_cnt = self.full_bw_cnt.saturating_add(1);
            self.full_bw_reached = self.full_bw_cnt >= self.cfg.full_bw_cnt;
        }
    }

    fn check_drain(&mut self, tp: &mut Sock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // Not used by BBR; marks the end of STARTUP for monitoring, as the kernel does.
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
        }
    }

    // ---- ProbeBW ----

    /// Draw the wait before the next probe: rounds in [0, rand_rounds), wall clock
    /// base + [0, rand).
    fn resolve_probe_wait(&mut self, rng: &mut Rng) {
        if !self.probe_wait_pending {
            return;
        }
        self.probe_wait_pending = false;
        self.rounds_since_probe = rng.below(self.cfg.bw_probe_rand_rounds);
        self.probe_wait_us = self
            .cfg
            .bw_probe_base_us
            .saturating_add(rng.below(self.cfg.bw_probe_rand_us));
    }

    fn phase_gain(&self, phase: Phase) -> u32 {
        match phase {
            Phase::Down => self.cfg.probe_down_gain,
            Phase::Cruise => self.cfg.probe_cruise_gain,
            Phase::Refill => self.cfg.probe_refill_gain,
            Phase::Up => self.cfg.probe_up_gain,
        }
    }

    fn set_cycle_idx(&mut self, phase: Phase) {
        self.cycle_idx = phase;
        self.try_fast_path = false;
    }

    /// Each round of UP doubles the growth of inflight_hi: one increment per
    /// cwnd / 2^rounds packets ACKed.
    fn raise_inflight_hi_slope(&mut self, tp: &Sock) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds.min(31);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(PROBE_UP_ROUNDS_MAX);
        self.bw_probe_up_cnt = (tp.snd_cwnd / growth_this_round).max(1);
    }

    fn probe_inflight_hi_upward(&mut self, tp: &Sock, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.snd_cwnd < self.inflight_hi {
            if !self.v3() {
                self.bw_probe_up_acks = 0;
            }
            return;
        }
        self.bw_probe_up_acks = self.bw_probe_up_acks.saturating_add(rs.acked_sacked);
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
            if self.v3() {
                self.try_fast_path = false;
            }
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    fn start_bw_probe_refill(&mut self, tp: &Sock, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        if self.inflight_hi != UNSET {
            self.inflight_hi = self.inflight_hi.saturating_add(self.cfg.refill_add_inc);
        }
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.got_ok_bw_probe_sample = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Refill);
    }

    fn start_bw_probe_up(&mut self, tp: &Sock, sample_bw: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_mstamp = tp.now_us();
        if self.v3() {
            self.reset_full_bw();
            self.full_bw = sample_bw;
        }
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope(tp);
    }

    /// Start a ProbeBW cycle: drain, and schedule the next probe at a random time.
    fn start_bw_probe_down(&mut self, tp: &Sock) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.probe_wait_pending = true;
        self.cycle_mstamp = tp.now_us();
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    /// v2's ECN cut of the bw_hi bound, when no sample of this probe was acceptable.
    fn handle_inflight_too_high_via_ecn(&mut self) {
        if self.cfg.ecn_bw_hi && self.ecn_eligible && !self.got_ok_bw_probe_sample {
            let cut = self.ecn_cut();
            if self.bw_hi == UNSET {
                self.bw_hi = self.max_bw();
            }
            self.bw_hi = scale(self.bw_hi, cut);
        }
    }

    /// Loss or ECN too high while probing: cut inflight_hi (once per probe) and go DOWN.
    fn handle_inflight_too_high(&mut self, tp: &Sock, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let cut = scale(self.target_inflight(tp), BBR_UNIT - self.cfg.beta);
            self.inflight_hi = rs.tx_in_flight.max(cut);
            self.handle_inflight_too_high_via_ecn();
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(tp);
        }
    }

    /// Track the feedback of a probe, cut inflight_hi when it went too high, raise the upper
    /// bounds when a higher level proved safe. True if it decided a phase change.
    fn adapt_upper_bounds(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u32) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs);
            }
            return false;
        }
        self.got_ok_bw_probe_sample |= self.bw_probe_samples;
        if self.inflight_hi == UNSET && self.bw_hi == UNSET {
            return false;
        }
        if rs.tx_in_flight > self.inflight_hi {
            self.inflight_hi = rs.tx_in_flight;
        }
        if sample_bw > self.bw_hi {
            self.bw_hi = sample_bw;
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.probe_inflight_hi_upward(tp, rs);
        }
        false
    }

    /// Reno coexistence: probe after as many rounds as a Reno flow with our BDP would take.
    fn is_reno_coexistence_probe_time(&self, tp: &Sock) -> bool {
        let mut rounds = self.cfg.bw_probe_max_rounds;
        if self.cfg.bw_probe_reno_gain != 0 {
            rounds = rounds.min(scale(self.target_inflight(tp), self.cfg.bw_probe_reno_gain));
        }
        self.rounds_since_probe >= rounds
    }

    fn check_time_to_probe_bw(&mut self, tp: &Sock, rng: &mut Rng) -> bool {
        self.resolve_probe_wait(rng);
        if self.cfg.ecn_reprobe_gain != 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            let volume = scale(self.inflight_hi, self.cfg.ecn_reprobe_gain);
            let n = volume.checked_ilog2().unwrap_or(0);
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        if self.has_elapsed_in_phase(tp, self.probe_wait_us)
            || self.is_reno_coexistence_probe_time(tp)
        {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    fn check_time_to_cruise(&self, tp: &Sock, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        let is_under_bdp = inflight <= self.inflight(tp, bw, BBR_UNIT);
        if self.cfg.drain_to_target {
            return is_under_bdp;
        }
        is_under_bdp || self.has_elapsed_in_phase(tp, self.min_rtt_us)
    }

    /// Is the UP probe over (other than by loss/ECN)? See the version differences.
    fn is_bw_probe_done(&mut self, tp: &Sock, inflight: u32, bw: u32, sample_bw: u32) -> bool {
        if self.prev_probe_too_high && inflight >= self.inflight_hi {
            self.stopped_risky_probe = true;
            return true;
        }
        if self.v3() {
            if tp.is_cwnd_limited && tp.snd_cwnd >= self.inflight_hi {
                self.reset_full_bw();
                self.full_bw = sample_bw;
                return false;
            }
            return self.full_bw_now;
        }
        self.has_elapsed_in_phase(tp, self.min_rtt_us)
            && inflight >= self.inflight(tp, bw, self.cfg.probe_up_inflight_gain)
    }

    /// The ProbeBW state machine.
    fn update_cycle_phase(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u32, rng: &mut Rng) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(tp, rs, sample_bw) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp, rng);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp, sample_bw);
                }
            }
            Phase::Up => {
                if self.is_bw_probe_done(tp, inflight, bw, sample_bw) {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tp);
                }
            }
            Phase::Down => {
                if !self.check_time_to_probe_bw(tp, rng)
                    && self.check_time_to_cruise(tp, inflight, bw)
                {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    // ---- min_rtt and ProbeRTT ----

    fn exit_probe_rtt(&mut self, tp: &Sock) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn check_probe_rtt_done(&mut self, tp: &mut Sock) {
        if !self.probe_rtt.time_up(tp) {
            return;
        }
        self.probe_rtt_min_stamp = tp.jiffies();
        tp.set_cwnd(tp.snd_cwnd.max(self.prior_cwnd));
        self.exit_probe_rtt(tp);
    }

    /// Track min_rtt (10 s window) and the ProbeRTT-window minimum (5 s); enter ProbeRTT when
    /// the latter expires, and leave it after 200 ms and a round at the reduced cwnd.
    fn update_min_rtt(&mut self, tp: &mut Sock, rs: &RateSample) {
        let now = tp.jiffies();
        let probe_rtt_expired = after(
            now,
            self.probe_rtt_min_stamp
                .wrapping_add(self.cfg.probe_rtt_win_ms),
        );
        if rs.rtt_us >= 0 {
            let rtt = sat_u32(rs.rtt_us as u128);
            let lower = if self.v3() {
                rtt < self.probe_rtt_min_us
            } else {
                rtt <= self.probe_rtt_min_us
            };
            if lower || (probe_rtt_expired && !rs.is_ack_delayed) {
                self.probe_rtt_min_us = rtt;
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = after(
            now,
            self.min_rtt_stamp.wrapping_add(self.cfg.min_rtt_win_ms),
        );
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        let due = self.cfg.probe_rtt_mode_ms > 0 && probe_rtt_expired && !self.idle_restart;
        let (mode, prior, prev) = (&mut self.mode, &mut self.prior_cwnd, self.prev_ca_state);
        if self.probe_rtt.enter(due, mode, prior, tp, prev) {
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            let (target, mode_ms) = (self.probe_rtt_cwnd(), self.cfg.probe_rtt_mode_ms);
            let (next_round, check) = self.probe_rtt.on_ack(tp, target, mode_ms, self.round_start);
            if let Some(delivered) = next_round {
                self.next_rtt_delivered = delivered;
            }
            if check {
                self.check_probe_rtt_done(tp);
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.cfg.startup_pacing_gain, self.cfg.startup_cwnd_gain),
            Mode::Drain => (self.cfg.drain_gain, self.cfg.startup_cwnd_gain),
            Mode::ProbeBw => {
                let mut cwnd_gain = self.cfg.cwnd_gain;
                if self.cycle_idx == Phase::Up {
                    cwnd_gain += self.cfg.probe_up_cwnd_gain;
                }
                (self.phase_gain(self.cycle_idx), cwnd_gain)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    fn update_model(&mut self, tp: &mut Sock, rs: &RateSample, sample_bw: u32, rng: &mut Rng) {
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sample_bw, rng);
        self.update_min_rtt(tp, rs);
    }

    /// App-limited ACK with no loss/ECN and a sample below the estimate: run only the state
    /// checks; skip cwnd/pacing too if they changed nothing. Returns whether to skip control.
    fn run_fast_path(
        &mut self,
        tp: &mut Sock,
        rs: &RateSample,
        sample_bw: u32,
        rng: &mut Rng,
    ) -> Option<bool> {
        if !(self.cfg.fast_path
            && self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round)
        {
            return None;
        }
        let (prev_mode, prev_min_rtt) = (self.mode, self.min_rtt_us);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sample_bw, rng);
        self.update_min_rtt(tp, rs);
        Some(self.mode == prev_mode && self.min_rtt_us == prev_min_rtt && self.try_fast_path)
    }

    fn note_loss(&mut self, tp: &Sock) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }
}

fn bw_bits_per_sec(cc: &Bbr3, bw: u32) -> f64 {
    if bw == UNSET {
        f64::INFINITY
    } else {
        (cc.rate_bytes_per_sec(bw, BBR_UNIT, 0) * 8) as f64
    }
}

fn bound(v: u32) -> f64 {
    if v == UNSET {
        f64::INFINITY
    } else {
        v as f64
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        self.name
    }

    fn init(&mut self, tp: &mut Sock, _rng: &mut Rng) {
        let mut fresh = Bbr3::new(self.name, self.cfg.clone());
        fresh.mss = tp.mss_cache;
        fresh.init_cwnd = tp.snd_cwnd.min(0x7F);
        fresh.prior_cwnd = tp.prior_cwnd;
        fresh.next_rtt_delivered = if fresh.v3() { tp.delivered } else { 0 };
        fresh.min_rtt_us = tp.min_rtt_us;
        fresh.probe_rtt_min_us = tp.min_rtt_us;
        fresh.min_rtt_stamp = tp.jiffies();
        fresh.probe_rtt_min_stamp = tp.jiffies();
        fresh.aggr = AckAggregation::new(tp.now_us());
        fresh.loss_round_delivered = tp.delivered + 1;
        *self = fresh;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.init_pacing_rate_from_rtt(tp);
        tp.pacing_status = PacingStatus::Needed;
    }

    /// Entering recovery: remember cwnd and the loss-adapted bounds for undo. BBR does not
    /// use ssthresh.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.snd_ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample, rng: &mut Rng) {
        self.mss = tp.mss_cache;
        self.resolve_probe_wait(rng);
        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(ROUNDS_SINCE_PROBE_MAX);
            self.update_ecn_alpha(tp);
        }
        self.ecn_in_round |= rs.is_ece && (self.ecn_eligible || !self.v3());
        let sample_bw = Self::bw_sample(rs);
        if self.v3() {
            self.update_latest_delivery_signals(tp, rs, sample_bw);
        }
        let fast = self.run_fast_path(tp, rs, sample_bw, rng);
        if fast != Some(true) {
            if fast.is_none() {
                self.update_model(tp, rs, sample_bw, rng);
            }
            self.update_gains();
            let bw = self.bw();
            self.set_pacing_rate(tp, bw, self.pacing_gain);
            self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model(tp);
        }
        if self.v3() && self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = Self::sample_delivered(rs);
        }
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            if self.v3() {
                self.reset_full_bw();
            } else {
                self.full_bw = 0;
            }
            if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
                self.inflight_lo = if self.v3() {
                    tp.snd_cwnd.max(self.prior_cwnd)
                } else {
                    self.prior_cwnd
                };
            }
        } else if self.prev_ca_state == CaState::Loss {
            tp.set_cwnd(tp.snd_cwnd.max(self.prior_cwnd));
            self.try_fast_path = false;
        }
    }

    /// Restarting after idle: pace at the estimated bandwidth (no probing gain) and do not
    /// enter ProbeRTT until data is ACKed again.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if !self.aggr.restart_after_idle(tp, ev) {
            return;
        }
        self.idle_restart = true;
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(tp, self.bw(), BBR_UNIT),
            Mode::ProbeRtt => self.check_probe_rtt_done(tp),
            Mode::Startup | Mode::Drain => {}
        }
    }

    /// Note the loss for this round; if it hit a packet sent while probing, rebuild the loss
    /// rate of its flight and, if too high, cut inflight_hi where the rate crossed the limit.
    fn skb_marked_lost(&mut self, tp: &mut Sock, tx: &TxState) {
        self.note_loss(tp);
        if !self.bw_probe_samples || tx.delivered_mstamp_us == 0 {
            return;
        }
        let mut rs = RateSample {
            tx_in_flight: tx.in_flight,
            lost: tp.lost.saturating_sub(tx.lost),
            is_app_limited: tx.is_app_limited,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            rs.tx_in_flight = self.inflight_hi_from_lost_skb(&rs);
            self.handle_inflight_too_high(tp, &rs);
        }
    }

    /// Spurious recovery: restart the plateau estimator and restore the bounds saved in
    /// `ssthresh`.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        if self.v3() {
            self.reset_full_bw();
        } else {
            self.full_bw = 0;
            self.full_bw_cnt = 0;
        }
        self.loss_in_round = false;
        if !self.cfg.undo {
            return tp.snd_cwnd;
        }
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        if self.v3() {
            self.try_fast_path = false;
        }
        self.prior_cwnd
    }

    fn min_tso_segs(&self, tp: &Sock) -> Option<u32> {
        Some(self.min_tso_segs_now(tp))
    }

    /// `bbr_tso_segs`: the skb size, always the kernel's rule. BBR-n's patch changes
    /// `bbr_tso_segs_goal` and `bbr_min_tso_segs` only, so bbrn's skbs are the stack's
    /// (`tcp_tso_autosize`, at least 4 segments) and bbrn3's are the v3 kernel's, alike.
    fn tso_segs(&self, tp: &Sock) -> Option<u32> {
        Some(self.kernel_tso_rule().segs_goal(tp, self.min_rtt_us))
    }

    /// 3 x cwnd: BBR may slow-start even during recovery.
    fn sndbuf_expand(&self) -> u32 {
        3
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    /// bw_bps, bw_hi (the max filter), bw_lo in bit/s without the pacing margin; min_rtt_us;
    /// state 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT; phase 0 DOWN, 1 CRUISE, 2 REFILL,
    /// 3 UP; pacing_gain and cwnd_gain as factors; inflight_hi and inflight_lo in packets;
    /// ecn_alpha in [0, 1]; loss_in_round 0 or 1. An absent bound is +inf.
    fn model(&self) -> Vec<ModelValue> {
        vec![
            ("bw_bps", bw_bits_per_sec(self, self.bw())),
            ("bw_hi", bw_bits_per_sec(self, self.max_bw())),
            ("bw_lo", bw_bits_per_sec(self, self.bw_lo)),
            ("min_rtt_us", bound(self.min_rtt_us)),
            ("state", self.mode as u32 as f64),
            ("phase", self.cycle_idx as u32 as f64),
            ("pacing_gain", self.pacing_gain as f64 / BBR_UNIT as f64),
            ("cwnd_gain", self.cwnd_gain as f64 / BBR_UNIT as f64),
            ("inflight_hi", bound(self.inflight_hi)),
            ("inflight_lo", bound(self.inflight_lo)),
            ("ecn_alpha", self.ecn_alpha as f64 / BBR_UNIT as f64),
            ("loss_in_round", if self.loss_in_round { 1.0 } else { 0.0 }),
        ]
    }
}
