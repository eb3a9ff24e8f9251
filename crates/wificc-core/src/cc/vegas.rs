//! TCP Vegas (Linux net/ipv4/tcp_vegas.c and tcp_vegas.h; Brakmo and Peterson, "TCP Vegas: End
//! to End Congestion Avoidance on a Global Internet", IEEE JSAC 13(8), 1995).
//!
//! Vegas estimates how many of its own packets sit in the bottleneck queue and keeps that number
//! between `alpha` and `beta`. It keeps two RTT minima: `baseRTT`, the smallest RTT ever seen (the
//! propagation delay), and `minRTT`, the smallest RTT seen during the current round trip (the
//! propagation delay plus the queueing delay, with the delayed-ACK noise filtered out). Once per
//! round trip, when the ACK passes the `snd_nxt` recorded at the start of the round, it computes
//!
//! ```text
//! diff = cwnd * (minRTT - baseRTT) / baseRTT        (packets queued, integer division)
//! ```
//!
//! In congestion avoidance cwnd drops by one packet when `diff > beta`, grows by one when
//! `diff < alpha`, and holds otherwise. In slow start, `diff > gamma` ends slow start: cwnd is set
//! to what the measured rate fills in one baseRTT, `cwnd * baseRTT / minRTT + 1`, and ssthresh
//! follows it. Between the once-per-round decisions cwnd only grows by slow start. Every RTT sample
//! is counted as `rtt + 1` microseconds so that neither minimum can be zero.
//!
//! A round with fewer than [`VEGAS_MIN_RTT_SAMPLES`] RTT samples is likely to have seen only
//! delayed ACKs; that round falls back to Reno. Outside the Open state (recovery, loss, CWR) Vegas
//! is switched off and Reno runs on every ACK; returning to Open restarts the measurement with a
//! fresh round. A transmission start after idle or a cwnd restart re-initialises everything,
//! baseRTT included. Loss response (ssthresh) and undo are Reno's.
//!
//! [`VegasState`] holds the RTT bookkeeping, the per-round boundary and the state and event
//! handling; TCP YeAH (`yeah.rs`) reuses it as the kernel's YeAH reuses Vegas's exported hooks.
//!
//! Units follow this crate's [`Sock`]: the round boundary is a segment index (`snd_nxt`) where the
//! kernel keeps a byte sequence number; both step by whole segments, so "the ACK passed the
//! boundary" means the same thing. The ACK sequence the kernel passes to `cong_avoid` equals
//! `snd_una` at that point, so `snd_una` stands in for it. The kernel computes `diff` in 32 bits;
//! here it is computed in 64 bits, which differs only where the kernel's product would overflow.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::reno::{reno_cong_avoid, reno_ssthresh};
use super::{CongestionControl, ModelValue};
use crate::sim::Rng;
use crate::tcp::sock::{AckSample, CaEvent, CaState, Sock};

/// Sentinel for "no RTT sample yet" (the kernel initialises baseRTT and minRTT to 0x7fffffff).
pub const VEGAS_NO_RTT_US: u32 = 0x7fff_ffff;

/// Smallest number of RTT samples in a round for the Vegas decision; with fewer, the samples are
/// probably all from delayed ACKs and the round uses Reno (tcp_vegas.c: `cntRTT <= 2`).
pub const VEGAS_MIN_RTT_SAMPLES: u32 = 3;

/// Smallest cwnd Vegas sets, in packets (tcp_vegas.c clamps to 2 after each decision).
pub const VEGAS_MIN_CWND_PKTS: u32 = 2;

/// Vegas parameters, the kernel module parameters with their defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Lower bound of own packets queued in the network: below it cwnd grows (module parameter
    /// `alpha`, default 2).
    #[schemars(extend("x-unit" = "packets"))]
    pub alpha: u32,
    /// Upper bound of own packets queued: above it cwnd shrinks (module parameter `beta`,
    /// default 4).
    #[schemars(extend("x-unit" = "packets"))]
    pub beta: u32,
    /// Queued packets that end slow start (module parameter `gamma`, default 1).
    #[schemars(extend("x-unit" = "packets"))]
    pub gamma: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: 2,
            beta: 4,
            gamma: 1,
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        if self.alpha > self.beta {
            return Err(format!(
                "parameter alpha = {}: expected at most beta ({}), the band alpha..beta is where cwnd holds",
                self.alpha, self.beta
            ));
        }
        Ok(())
    }
}

/// The Vegas RTT bookkeeping (Linux `struct vegas`), shared with YeAH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VegasState {
    /// Whether the Vegas decision runs (only in the Open state).
    pub doing_vegas_now: bool,
    /// The round ends when an ACK passes this segment index (`snd_nxt` when the round began).
    pub beg_snd_nxt: u64,
    /// RTT samples taken this round.
    pub cnt_rtt: u32,
    /// Smallest RTT (+1) this round, microseconds.
    pub min_rtt_us: u32,
    /// Smallest RTT (+1) since the last (re)initialisation, microseconds.
    pub base_rtt_us: u32,
}

impl Default for VegasState {
    fn default() -> Self {
        VegasState {
            doing_vegas_now: false,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt_us: VEGAS_NO_RTT_US,
            base_rtt_us: VEGAS_NO_RTT_US,
        }
    }
}

impl VegasState {
    /// `tcp_vegas_init`: forget baseRTT and start measuring a new round.
    pub fn init(&mut self, tp: &Sock) {
        self.base_rtt_us = VEGAS_NO_RTT_US;
        self.enable(tp);
    }

    /// Switch the decision on and start a fresh round at the current `snd_nxt`.
    fn enable(&mut self, tp: &Sock) {
        self.doing_vegas_now = true;
        self.next_round(tp);
    }

    /// Start the next round: it ends when the ACK passes what has been sent so far.
    pub fn next_round(&mut self, tp: &Sock) {
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_us = VEGAS_NO_RTT_US;
    }

    /// `tcp_vegas_pkts_acked`: fold one RTT sample into both minima.
    pub fn pkts_acked(&mut self, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let vrtt = u32::try_from(sample.rtt_us.saturating_add(1)).unwrap_or(u32::MAX);
        self.base_rtt_us = self.base_rtt_us.min(vrtt);
        self.min_rtt_us = self.min_rtt_us.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// `tcp_vegas_state`: measure only in the Open state; entering it starts a new round.
    pub fn set_state(&mut self, tp: &Sock, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.doing_vegas_now = false;
        }
    }

    /// `tcp_vegas_cwnd_event`: sending again after idle makes every measurement stale.
    pub fn cwnd_event(&mut self, tp: &Sock, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tp);
        }
    }

    /// Whether this ACK ends the round (the kernel's `after(ack, beg_snd_nxt)`).
    pub fn round_ended(&self, tp: &Sock) -> bool {
        tp.snd_una > self.beg_snd_nxt
    }

    /// Whether the round has enough RTT samples for a delay-based decision.
    pub fn enough_samples(&self) -> bool {
        self.cnt_rtt >= VEGAS_MIN_RTT_SAMPLES
    }

    /// The RTT minima for the metrics (NaN before the first sample).
    pub fn model(&self) -> [ModelValue; 3] {
        [
            ("base_rtt_us", rtt_or_nan(self.base_rtt_us)),
            ("min_rtt_us", rtt_or_nan(self.min_rtt_us)),
            ("rtt_samples", self.cnt_rtt as f64),
        ]
    }
}

fn rtt_or_nan(rtt_us: u32) -> f64 {
    if rtt_us == VEGAS_NO_RTT_US {
        f64::NAN
    } else {
        rtt_us as f64
    }
}

/// Linux `tcp_current_ssthresh`: during a cwnd reduction ssthresh itself, otherwise at least
/// three quarters of cwnd.
fn current_ssthresh(tp: &Sock) -> u32 {
    if matches!(tp.ca_state, CaState::Cwr | CaState::Recovery) {
        tp.snd_ssthresh
    } else {
        tp.snd_ssthresh.max((tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2))
    }
}

/// TCP Vegas.
#[derive(Debug, Clone, Default)]
pub struct Vegas {
    p: Params,
    st: VegasState,
    /// `diff` of the last Vegas decision, in packets (None before the first).
    last_diff: Option<u64>,
}

pub const INFO: CcInfo = CcInfo {
    name: "vegas",
    summary: "Vegas: hold cwnd so that alpha..beta own packets are queued (delay-based)",
    source: "Linux net/ipv4/tcp_vegas.c; Brakmo and Peterson, IEEE JSAC 13(8), 1995",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| {
        let p = params_from::<Params>(m)?;
        p.validate()?;
        Ok(Box::new(Vegas::new(p)))
    },
};

impl Vegas {
    pub fn new(p: Params) -> Self {
        Vegas {
            p,
            st: VegasState::default(),
            last_diff: None,
        }
    }

    /// The once-per-round Vegas decision, with at least [`VEGAS_MIN_RTT_SAMPLES`] samples.
    fn decide(&mut self, tp: &mut Sock, acked: u32) {
        let rtt = u64::from(self.st.min_rtt_us);
        let base = u64::from(self.st.base_rtt_us);
        let cwnd = u64::from(tp.snd_cwnd);
        let target_cwnd = cwnd * base / rtt;
        let diff = cwnd * rtt.saturating_sub(base) / base;
        self.last_diff = Some(diff);

        if diff > u64::from(self.p.gamma) && tp.in_slow_start() {
            // The measured rate fills target_cwnd per baseRTT; +1 makes up for the truncation.
            tp.snd_cwnd = tp.snd_cwnd.min(target_cwnd as u32 + 1);
            tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        } else if diff > u64::from(self.p.beta) {
            tp.snd_cwnd = tp.snd_cwnd.saturating_sub(1);
            tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
        } else if diff < u64::from(self.p.alpha) {
            tp.snd_cwnd += 1;
        }
        tp.snd_cwnd = if tp.snd_cwnd < VEGAS_MIN_CWND_PKTS {
            VEGAS_MIN_CWND_PKTS
        } else {
            tp.snd_cwnd.min(tp.snd_cwnd_clamp)
        };
        tp.snd_ssthresh = current_ssthresh(tp);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, tp: &mut Sock, _rng: &mut Rng) {
        self.st.init(tp);
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if !self.st.doing_vegas_now {
            reno_cong_avoid(tp, acked);
        } else if self.st.round_ended(tp) {
            if self.st.enough_samples() {
                self.decide(tp, acked);
            } else {
                reno_cong_avoid(tp, acked);
            }
            self.st.next_round(tp);
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        }
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        self.st.set_state(tp, new_state);
    }

    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        self.st.cwnd_event(tp, ev);
    }

    fn pkts_acked(&mut self, _tp: &mut Sock, sample: &AckSample) {
        self.st.pkts_acked(sample);
    }

    fn model(&self) -> Vec<ModelValue> {
        let mut m = self.st.model().to_vec();
        m.push(("diff_pkts", self.last_diff.map_or(f64::NAN, |d| d as f64)));
        m.push(("vegas_on", f64::from(u8::from(self.st.doing_vegas_now))));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sock::TCP_INFINITE_SSTHRESH;

    /// A socket in congestion avoidance (or slow start when `ssthresh` is larger than `cwnd`)
    /// that has sent `snd_nxt` segments, all of which are unacknowledged.
    fn sock(cwnd: u32, ssthresh: u32, snd_nxt: u64) -> Sock {
        let mut s = Sock::new(1448, cwnd);
        s.snd_ssthresh = ssthresh;
        s.max_packets_out = cwnd;
        s.is_cwnd_limited = true;
        s.snd_nxt = snd_nxt;
        s
    }

    fn vegas(tp: &mut Sock) -> Vegas {
        let mut cc = Vegas::new(Params::default());
        cc.init(tp, &mut Rng::new(1, 1));
        cc
    }

    fn rtt(cc: &mut Vegas, tp: &mut Sock, rtt_us: i64) {
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us,
                in_flight: 0,
            },
        );
    }

    /// Feed `samples` RTTs, then the ACK that ends the round (one segment past its boundary,
    /// `acked` segments), while the sender keeps `cwnd` segments beyond it in flight.
    fn round(cc: &mut Vegas, tp: &mut Sock, samples: &[i64], acked: u32) {
        for &r in samples {
            rtt(cc, tp, r);
        }
        tp.snd_una = cc.st.beg_snd_nxt + 1;
        tp.snd_nxt = tp.snd_una + u64::from(tp.snd_cwnd);
        cc.cong_avoid(tp, acked);
    }

    #[test]
    fn rtt_samples_fold_into_both_minima_plus_one() {
        let mut tp = sock(10, TCP_INFINITE_SSTHRESH, 10);
        let mut cc = vegas(&mut tp);
        // vrtt = rtt + 1: 100 -> 101, 120 -> 121, 90 -> 91; a negative RTT is no sample.
        for r in [100, 120, -1, 90] {
            rtt(&mut cc, &mut tp, r);
        }
        assert_eq!(
            (cc.st.base_rtt_us, cc.st.min_rtt_us, cc.st.cnt_rtt),
            (91, 91, 3)
        );
        // A new round keeps baseRTT and forgets the round's minimum.
        cc.st.next_round(&tp);
        rtt(&mut cc, &mut tp, 199);
        assert_eq!(
            (cc.st.base_rtt_us, cc.st.min_rtt_us, cc.st.cnt_rtt),
            (91, 200, 1)
        );
    }

    #[test]
    fn once_per_round_decision_up_down_hold() {
        // Congestion avoidance: cwnd 20, ssthresh 10, the first round starts at snd_nxt 20.
        let mut tp = sock(20, 10, 20);
        let mut cc = vegas(&mut tp);
        // Round 1: RTTs 9999 us -> vrtt 10000 = baseRTT = minRTT; diff = 20 * 0 / 10000 = 0 < 2.
        round(&mut cc, &mut tp, &[9_999; 3], 1);
        assert_eq!(tp.snd_cwnd, 21);
        // ssthresh = max(10, 21/2 + 21/4 = 10 + 5) = 15.
        assert_eq!(tp.snd_ssthresh, 15);
        assert_eq!(cc.last_diff, Some(0));
        // Round 2: minRTT 13000; diff = 21 * 3000 / 10000 = 6 > beta 4: one packet down,
        // ssthresh = max(min(15, 20), 10 + 5) = 15.
        round(&mut cc, &mut tp, &[12_999, 13_499, 12_999], 1);
        assert_eq!(
            (tp.snd_cwnd, tp.snd_ssthresh, cc.last_diff),
            (20, 15, Some(6))
        );
        // Round 3: minRTT 11500; diff = 20 * 1500 / 10000 = 3, inside [2, 4]: hold.
        round(&mut cc, &mut tp, &[11_499; 4], 1);
        assert_eq!((tp.snd_cwnd, cc.last_diff), (20, Some(3)));
        // minRTT 12000; diff = 20 * 2000 / 10000 = 4 = beta: hold.
        round(&mut cc, &mut tp, &[11_999; 3], 1);
        assert_eq!((tp.snd_cwnd, cc.last_diff), (20, Some(4)));
        // Round 4: minRTT 11000; diff = 20 * 1000 / 10000 = 2 = alpha: still hold.
        round(&mut cc, &mut tp, &[10_999; 3], 1);
        assert_eq!((tp.snd_cwnd, cc.last_diff), (20, Some(2)));
        // Round 5: minRTT 10500; diff = 20 * 500 / 10000 = 1 < alpha: up.
        round(&mut cc, &mut tp, &[10_499; 3], 1);
        assert_eq!((tp.snd_cwnd, cc.last_diff), (21, Some(1)));
    }

    #[test]
    fn no_change_inside_a_round_in_congestion_avoidance() {
        let mut tp = sock(20, 10, 20);
        let mut cc = vegas(&mut tp);
        for _ in 0..3 {
            rtt(&mut cc, &mut tp, 9_999);
        }
        // snd_una 20 has not passed the boundary 20 (the kernel's after() is strict).
        tp.snd_una = 20;
        for _ in 0..40 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt, cc.st.cnt_rtt), (20, 0, 3));
    }

    #[test]
    fn slow_start_exits_when_diff_exceeds_gamma() {
        let mut tp = sock(40, TCP_INFINITE_SSTHRESH, 40);
        let mut cc = vegas(&mut tp);
        // Round 1 sets baseRTT 10000 and slow-starts: diff 0 <= gamma, cwnd 40 + 2 acked = 42.
        round(&mut cc, &mut tp, &[9_999; 3], 2);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (42, TCP_INFINITE_SSTHRESH));
        // Inside the next round, plain slow start on every ACK: 42 + 3 = 45.
        cc.cong_avoid(&mut tp, 3);
        assert_eq!(tp.snd_cwnd, 45);
        // Round 2: minRTT 12000; diff = 45 * 2000 / 10000 = 9 > gamma 1: leave slow start.
        // target = 45 * 10000 / 12000 = 37 (37.5 truncated); cwnd = min(45, 38) = 38;
        // ssthresh = min(inf, 38) = 38, then max(38, 19 + 9 = 28) = 38.
        round(&mut cc, &mut tp, &[11_999; 3], 2);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (38, 38));
        assert!(!tp.in_slow_start());
    }

    #[test]
    fn fewer_than_three_samples_fall_back_to_reno() {
        let mut tp = sock(20, 10, 20);
        let mut cc = vegas(&mut tp);
        tp.snd_cwnd_cnt = 19;
        // Two samples with a queue that Vegas would answer with a decrease (diff 20 > beta):
        // Reno instead completes its count of 20 ACKed packets and adds one.
        rtt(&mut cc, &mut tp, 9_999);
        round(&mut cc, &mut tp, &[19_999], 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (21, 0));
        assert_eq!(cc.last_diff, None);
        // The round was still closed: counters wiped, boundary moved to snd_nxt = 21 + 20.
        assert_eq!(
            (cc.st.cnt_rtt, cc.st.min_rtt_us, cc.st.beg_snd_nxt),
            (0, VEGAS_NO_RTT_US, 41)
        );
    }

    #[test]
    fn cwnd_never_below_two() {
        let mut tp = sock(2, 1, 2);
        let mut cc = vegas(&mut tp);
        // baseRTT 10000 from an earlier round; then minRTT 40000: diff = 2 * 30000 / 10000 = 6 > 4,
        // cwnd 2 - 1 = 1 is raised back to 2.
        rtt(&mut cc, &mut tp, 9_999);
        cc.st.next_round(&tp);
        round(&mut cc, &mut tp, &[39_999; 3], 1);
        assert_eq!((tp.snd_cwnd, cc.last_diff), (2, Some(6)));
    }

    #[test]
    fn loss_halves_and_recovery_runs_reno_until_open() {
        let mut tp = sock(40, 20, 40);
        let mut cc = vegas(&mut tp);
        round(&mut cc, &mut tp, &[9_999; 3], 1);
        assert_eq!(tp.snd_cwnd, 41);
        assert_eq!(cc.ssthresh(&tp), 20);
        cc.set_state(&mut tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        assert!(!cc.st.doing_vegas_now);
        // Reno on every ACK, round boundary or not: 41 ACKed packets at cwnd 41 add one.
        tp.snd_ssthresh = 20;
        for _ in 0..41 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 42);
        // Back to Open: a new round starts at snd_nxt, baseRTT survives.
        tp.snd_nxt = 300;
        cc.set_state(&mut tp, CaState::Open);
        assert!(cc.st.doing_vegas_now);
        assert_eq!(
            (cc.st.beg_snd_nxt, cc.st.cnt_rtt, cc.st.base_rtt_us),
            (300, 0, 10_000)
        );
    }

    #[test]
    fn restart_after_idle_forgets_base_rtt() {
        let mut tp = sock(10, 5, 10);
        let mut cc = vegas(&mut tp);
        rtt(&mut cc, &mut tp, 999);
        cc.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!(cc.st.base_rtt_us, 1_000);
        tp.snd_nxt = 77;
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(
            cc.st,
            VegasState {
                doing_vegas_now: true,
                beg_snd_nxt: 77,
                ..VegasState::default()
            }
        );
        rtt(&mut cc, &mut tp, 999);
        cc.cwnd_event(&mut tp, CaEvent::CwndRestart);
        assert_eq!(cc.st.base_rtt_us, VEGAS_NO_RTT_US);
    }

    #[test]
    fn alpha_beta_are_parameters() {
        let mut m = serde_json::Map::new();
        m.insert("alpha".into(), serde_json::json!(4));
        m.insert("beta".into(), serde_json::json!(6));
        let cc = (INFO.make)(&m).unwrap();
        assert_eq!(cc.name(), "vegas");
        let mut tp = sock(20, 10, 20);
        let mut cc = Vegas::new(Params {
            alpha: 4,
            beta: 6,
            gamma: 1,
        });
        cc.init(&mut tp, &mut Rng::new(1, 1));
        // baseRTT 10000 from an earlier round; then diff = 20 * 1500 / 10000 = 3 < alpha 4: up
        // (with the default alpha 2 it would hold).
        rtt(&mut cc, &mut tp, 9_999);
        cc.st.next_round(&tp);
        round(&mut cc, &mut tp, &[11_499; 3], 1);
        assert_eq!(tp.snd_cwnd, 21);
    }

    #[test]
    fn rejects_alpha_above_beta_and_unknown_keys() {
        let mut m = serde_json::Map::new();
        m.insert("alpha".into(), serde_json::json!(5));
        let err = (INFO.make)(&m).err().unwrap();
        assert_eq!(
            err,
            "parameter alpha = 5: expected at most beta (4), the band alpha..beta is where cwnd holds"
        );
        let mut m = serde_json::Map::new();
        m.insert("delta".into(), serde_json::json!(1));
        assert!((INFO.make)(&m)
            .err()
            .unwrap()
            .contains("unknown field `delta`"));
        let mut m = serde_json::Map::new();
        m.insert("beta".into(), serde_json::json!(-1));
        assert!((INFO.make)(&m)
            .err()
            .unwrap()
            .starts_with("parameter beta = -1:"));
    }

    #[test]
    fn model_reports_base_rtt_diff_and_state() {
        let mut tp = sock(20, 10, 20);
        let mut cc = vegas(&mut tp);
        let m = cc.model();
        assert!(m[0].1.is_nan() && m[3].1.is_nan());
        round(&mut cc, &mut tp, &[9_999, 10_999, 9_999], 1);
        rtt(&mut cc, &mut tp, 12_000);
        let m = cc.model();
        assert_eq!(m[0], ("base_rtt_us", 10_000.0));
        assert_eq!(m[1], ("min_rtt_us", 12_001.0));
        assert_eq!(m[2], ("rtt_samples", 1.0));
        assert_eq!(m[3], ("diff_pkts", 0.0));
        assert_eq!(m[4], ("vegas_on", 1.0));
    }
}
