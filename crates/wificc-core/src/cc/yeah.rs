//! TCP YeAH, "Yet Another Highspeed" TCP (Linux net/ipv4/tcp_yeah.c; Baiocchi, Castellani and
//! Vacirca, "YeAH-TCP: Yet Another Highspeed TCP", PFLDnet 2007).
//!
//! YeAH runs in one of two modes and switches once per round trip on a Vegas-style estimate of
//! its own backlog at the bottleneck. With `base` the smallest RTT ever seen and `rtt` the smallest
//! RTT of the round (both kept by [`VegasState`], the same bookkeeping as Vegas),
//!
//! ```text
//! queue = cwnd * (rtt - base) / rtt        (packets queued, integer division)
//! ```
//!
//! * Fast mode (Scalable TCP): while `queue <= alpha` and the queueing delay `rtt - base` is at
//!   most `base / phy`, cwnd grows by one packet per `min(cwnd, scalable_ai_cnt)` ACKed packets,
//!   i.e. about 1% per round trip on large windows.
//! * Slow mode (Reno): otherwise, one packet per cwnd ACKed packets. When the backlog also exceeds
//!   `alpha` packets, YeAH drains it at once ("precautionary decongestion"): cwnd drops by
//!   `min(queue / gamma, cwnd >> epsilon)`, not below `reno_count`, and ssthresh follows cwnd.
//!
//! `reno_count` estimates the cwnd a competing Reno flow would have: set to half of cwnd on the
//! first slow round, incremented on each later slow round, halved at each loss and reset to 2
//! after more than `zeta` fast rounds. On a loss, if fewer than `rho` consecutive rounds were slow
//! (YeAH thinks it is alone), cwnd loses only the estimated backlog, between `cwnd >> delta` and
//! half of cwnd; after `rho` or more slow rounds (competing with loss-based flows) it halves like
//! Reno. ssthresh is at least 2.
//!
//! Slow start is Reno's, with the ACKs left over when it reaches ssthresh going to the mode's
//! linear growth. A round with fewer than three RTT samples makes no mode decision. Nothing grows
//! and no round is evaluated on an ACK that finds the flow not cwnd-limited. State changes and
//! restart events are Vegas's. At init the cwnd clamp is capped at 0xffffffff/128 packets, as the
//! kernel does, so the integer arithmetic cannot overflow.
//!
//! The kernel's constants are `#define`s; here they are parameters with the kernel's values as
//! defaults. Units follow [`crate::tcp::sock::Sock`] as explained in `vegas.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::vegas::VegasState;
use super::{CongestionControl, ModelValue};
use crate::sim::Rng;
use crate::tcp::sock::{AckSample, CaEvent, CaState, Sock};

/// Largest cwnd clamp YeAH allows, in packets (tcp_yeah.c `tcp_yeah_init`: 0xffffffff/128).
pub const YEAH_CWND_CLAMP_PKTS: u32 = u32::MAX / 128;

/// Ceiling of the consecutive-slow-rounds counter (tcp_yeah.c: 0xffffff).
pub const YEAH_MAX_SLOW_ROUNDS: u32 = 0x00ff_ffff;

/// Smallest `reno_count` and ssthresh, in packets (tcp_yeah.c: `2U`).
pub const YEAH_MIN_WIN_PKTS: u32 = 2;

/// YeAH parameters: the kernel's `TCP_YEAH_*` and `TCP_SCALABLE_AI_CNT` constants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Packets queued at the bottleneck above which YeAH decongests (`TCP_YEAH_ALPHA`, 80).
    #[schemars(extend("x-unit" = "packets"))]
    pub alpha: u32,
    /// The decongestion removes queue / gamma packets (`TCP_YEAH_GAMMA`, 1).
    #[schemars(extend("x-unit" = "divisor"))]
    pub gamma: u32,
    /// log2 of the smallest fraction of cwnd removed on a loss (`TCP_YEAH_DELTA`, 3: 1/8).
    #[schemars(extend("x-unit" = "log2"))]
    pub delta: u32,
    /// log2 of the largest fraction of cwnd removed by decongestion (`TCP_YEAH_EPSILON`, 1: 1/2).
    #[schemars(extend("x-unit" = "log2"))]
    pub epsilon: u32,
    /// Queueing delay above base / phy means slow mode (`TCP_YEAH_PHY`, 8).
    #[schemars(extend("x-unit" = "divisor"))]
    pub phy: u32,
    /// Consecutive slow rounds after which a loss halves cwnd like Reno (`TCP_YEAH_RHO`, 16).
    #[schemars(extend("x-unit" = "rounds"))]
    pub rho: u32,
    /// Fast rounds after which `reno_count` is reset to 2 (`TCP_YEAH_ZETA`, 50).
    #[schemars(extend("x-unit" = "rounds"))]
    pub zeta: u32,
    /// Fast mode adds one packet per min(cwnd, this) ACKed packets (`TCP_SCALABLE_AI_CNT`, 100).
    #[schemars(extend("x-unit" = "packets"))]
    pub scalable_ai_cnt: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: 80,
            gamma: 1,
            delta: 3,
            epsilon: 1,
            phy: 8,
            rho: 16,
            zeta: 50,
            scalable_ai_cnt: 100,
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        let at_least_one = [
            ("gamma", self.gamma),
            ("phy", self.phy),
            ("scalable_ai_cnt", self.scalable_ai_cnt),
        ];
        if let Some((name, v)) = at_least_one.iter().find(|(_, v)| *v == 0) {
            return Err(format!(
                "parameter {name} = {v}: expected at least 1 (it divides)"
            ));
        }
        let shifts = [("delta", self.delta), ("epsilon", self.epsilon)];
        if let Some((name, v)) = shifts.iter().find(|(_, v)| *v > 31) {
            return Err(format!(
                "parameter {name} = {v}: expected 0..=31 (a shift of a 32-bit cwnd)"
            ));
        }
        Ok(())
    }
}

/// TCP YeAH.
#[derive(Debug, Clone)]
pub struct Yeah {
    p: Params,
    vegas: VegasState,
    /// Queue estimate of the last evaluated round, packets (`lastQ`).
    last_q: u32,
    /// Consecutive slow (Reno) rounds; 0 means fast (Scalable) mode (`doing_reno_now`).
    doing_reno_now: u32,
    /// Estimated cwnd of a competing Reno flow, packets.
    reno_count: u32,
    /// Fast rounds since the last loss or reset.
    fast_count: u32,
}

pub const INFO: CcInfo = CcInfo {
    name: "yeah",
    summary:
        "YeAH: Scalable growth while the estimated queue is small, Reno and decongestion otherwise",
    source: "Linux net/ipv4/tcp_yeah.c; Baiocchi, Castellani, Vacirca, PFLDnet 2007",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| {
        let p = params_from::<Params>(m)?;
        p.validate()?;
        Ok(Box::new(Yeah::new(p)))
    },
};

impl Yeah {
    pub fn new(p: Params) -> Self {
        Yeah {
            p,
            vegas: VegasState::default(),
            last_q: 0,
            doing_reno_now: 0,
            reno_count: YEAH_MIN_WIN_PKTS,
            fast_count: 0,
        }
    }

    fn in_fast_mode(&self) -> bool {
        self.doing_reno_now == 0
    }

    /// The once-per-round mode decision and decongestion.
    fn decide(&mut self, tp: &mut Sock) {
        let rtt = self.vegas.min_rtt_us;
        let base = self.vegas.base_rtt_us;
        let queue_delay_us = rtt.saturating_sub(base);
        let queue = (u64::from(tp.snd_cwnd) * u64::from(queue_delay_us) / u64::from(rtt)) as u32;

        if queue > self.p.alpha || queue_delay_us > base / self.p.phy {
            if queue > self.p.alpha && tp.snd_cwnd > self.reno_count {
                let reduction = (queue / self.p.gamma).min(tp.snd_cwnd >> self.p.epsilon);
                tp.set_cwnd((tp.snd_cwnd - reduction).max(self.reno_count));
                tp.snd_ssthresh = tp.snd_cwnd;
            }
            if self.reno_count <= YEAH_MIN_WIN_PKTS {
                self.reno_count = (tp.snd_cwnd >> 1).max(YEAH_MIN_WIN_PKTS);
            } else {
                self.reno_count = self.reno_count.saturating_add(1);
            }
            self.doing_reno_now = (self.doing_reno_now + 1).min(YEAH_MAX_SLOW_ROUNDS);
        } else {
            self.fast_count += 1;
            if self.fast_count > self.p.zeta {
                self.reno_count = YEAH_MIN_WIN_PKTS;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    fn init(&mut self, tp: &mut Sock, _rng: &mut Rng) {
        self.vegas.init(tp);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = YEAH_MIN_WIN_PKTS;
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(YEAH_CWND_CLAMP_PKTS);
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let half = (tp.snd_cwnd >> 1).max(YEAH_MIN_WIN_PKTS);
        let reduction = if self.doing_reno_now < self.p.rho {
            self.last_q.min(half).max(tp.snd_cwnd >> self.p.delta)
        } else {
            half
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(YEAH_MIN_WIN_PKTS);
        let left = i64::from(tp.snd_cwnd) - i64::from(reduction);
        left.max(i64::from(YEAH_MIN_WIN_PKTS)) as u32
    }

    fn cong_avoid(&mut self, tp: &mut Sock, mut acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            acked = tp.slow_start(acked);
        }
        if acked > 0 {
            let w = if self.in_fast_mode() {
                tp.snd_cwnd.min(self.p.scalable_ai_cnt)
            } else {
                tp.snd_cwnd
            };
            tp.cong_avoid_ai(w, acked);
        }
        if self.vegas.round_ended(tp) {
            if self.vegas.enough_samples() {
                self.decide(tp);
            }
            self.vegas.next_round(tp);
        }
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        self.vegas.set_state(tp, new_state);
    }

    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        self.vegas.cwnd_event(tp, ev);
    }

    fn pkts_acked(&mut self, _tp: &mut Sock, sample: &AckSample) {
        self.vegas.pkts_acked(sample);
    }

    fn model(&self) -> Vec<ModelValue> {
        let mut m = self.vegas.model().to_vec();
        m.extend([
            ("queue_pkts", f64::from(self.last_q)),
            ("mode_slow", f64::from(u8::from(!self.in_fast_mode()))),
            ("slow_rounds", f64::from(self.doing_reno_now)),
            ("reno_count", f64::from(self.reno_count)),
            ("fast_count", f64::from(self.fast_count)),
        ]);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cwnd-limited socket in congestion avoidance (ssthresh below cwnd) with `cwnd` in flight.
    fn sock(cwnd: u32) -> Sock {
        let mut s = Sock::new(1448, cwnd);
        s.snd_ssthresh = 2;
        s.max_packets_out = cwnd;
        s.is_cwnd_limited = true;
        s.snd_nxt = u64::from(cwnd);
        s
    }

    fn yeah(tp: &mut Sock) -> Yeah {
        let mut cc = Yeah::new(Params::default());
        cc.init(tp, &mut Rng::new(1, 1));
        cc
    }

    /// baseRTT `base_us` from an earlier round, then a round whose RTT samples are all `rtt_us`,
    /// closed by an ACK for one segment past the boundary.
    fn round(cc: &mut Yeah, tp: &mut Sock, base_us: u32, rtt_us: u32) {
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: i64::from(base_us) - 1,
                in_flight: 0,
            },
        );
        cc.vegas.next_round(tp);
        for _ in 0..3 {
            cc.pkts_acked(
                tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: i64::from(rtt_us) - 1,
                    in_flight: 0,
                },
            );
        }
        tp.snd_una = cc.vegas.beg_snd_nxt + 1;
        tp.snd_nxt = tp.snd_una + u64::from(tp.snd_cwnd);
        cc.cong_avoid(tp, 1);
    }

    #[test]
    fn fast_mode_grows_like_scalable_slow_mode_like_reno() {
        let mut tp = sock(200);
        let mut cc = yeah(&mut tp);
        // Fast mode: one packet per min(200, 100) = 100 ACKed packets.
        for _ in 0..100 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (201, 0));
        // Slow mode: one packet per cwnd = 201 ACKed packets.
        cc.doing_reno_now = 1;
        for _ in 0..200 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 201);
        cc.cong_avoid(&mut tp, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (202, 0));
    }

    #[test]
    fn slow_start_leftover_goes_to_linear_growth() {
        let mut tp = sock(10);
        tp.snd_ssthresh = 12;
        let mut cc = yeah(&mut tp);
        // Slow start takes cwnd 10 -> 12 with 2 of 5 ACKed packets; the other 3 count towards
        // fast-mode growth with w = min(12, 100) = 12.
        cc.cong_avoid(&mut tp, 5);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (12, 3));
    }

    #[test]
    fn queueing_delay_switches_to_slow_mode_without_decongestion() {
        let mut tp = sock(200);
        let mut cc = yeah(&mut tp);
        // queue = 200 * 2000 / 12000 = 33 <= 80, but the delay 2000 > 10000 / 8 = 1250: slow.
        round(&mut cc, &mut tp, 10_000, 12_000);
        assert_eq!(tp.snd_cwnd, 200);
        assert_eq!((cc.last_q, cc.doing_reno_now), (33, 1));
        // First slow round: reno_count = max(200 / 2, 2) = 100.
        assert_eq!(cc.reno_count, 100);
        // Delay 1250 is not above 10000 / 8: fast again, one fast round counted.
        round(&mut cc, &mut tp, 10_000, 11_250);
        // queue = 200 * 1250 / 11250 = 22.
        assert_eq!(
            (cc.last_q, cc.doing_reno_now, cc.fast_count, cc.reno_count),
            (22, 0, 1, 100)
        );
    }

    #[test]
    fn large_queue_triggers_precautionary_decongestion() {
        let mut tp = sock(600);
        let mut cc = yeah(&mut tp);
        cc.reno_count = 100;
        // queue = 600 * 5000 / 15000 = 200 > 80 and cwnd 600 > reno_count 100:
        // reduction = min(200 / 1, 600 >> 1 = 300) = 200, cwnd = max(400, 100) = 400 = ssthresh.
        round(&mut cc, &mut tp, 10_000, 15_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh, cc.last_q), (400, 400, 200));
        // reno_count was above 2: incremented.
        assert_eq!((cc.reno_count, cc.doing_reno_now), (101, 1));
        // queue = 400 * 30000 / 40000 = 300 > 80: reduction = min(300, 200) = 200 -> 200.
        round(&mut cc, &mut tp, 10_000, 40_000);
        assert_eq!(
            (tp.snd_cwnd, cc.reno_count, cc.doing_reno_now),
            (200, 102, 2)
        );
    }

    #[test]
    fn a_queue_of_exactly_alpha_is_not_decongested() {
        let mut tp = sock(480);
        let mut cc = yeah(&mut tp);
        // queue = 480 * 2000 / 12000 = 80, not above alpha: slow mode (delay 2000 > 1250) only.
        round(&mut cc, &mut tp, 10_000, 12_000);
        assert_eq!((tp.snd_cwnd, cc.last_q, cc.doing_reno_now), (480, 80, 1));
        // queue = 720 * 1250 / 11250 = 80 with a delay of 1250 <= 10000 / 8: stays fast.
        let mut tp = sock(720);
        let mut cc = yeah(&mut tp);
        round(&mut cc, &mut tp, 10_000, 11_250);
        assert_eq!(
            (tp.snd_cwnd, cc.last_q, cc.doing_reno_now, cc.fast_count),
            (720, 80, 0, 1)
        );
    }

    #[test]
    fn decongestion_stops_at_reno_count() {
        let mut tp = sock(150);
        let mut cc = yeah(&mut tp);
        cc.reno_count = 120;
        // queue = 150 * 30000 / 40000 = 112 > 80 and cwnd 150 > reno_count 120:
        // reduction = min(112, 150 >> 1 = 75) = 75, cwnd = max(150 - 75, 120) = 120.
        round(&mut cc, &mut tp, 10_000, 40_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh, cc.last_q), (120, 120, 112));
    }

    #[test]
    fn many_fast_rounds_reset_reno_count() {
        let mut tp = sock(100);
        let mut cc = yeah(&mut tp);
        cc.reno_count = 40;
        // No queueing delay: every round is fast; fast_count > zeta (50) resets the estimate.
        for _ in 0..50 {
            round(&mut cc, &mut tp, 10_000, 10_000);
        }
        assert_eq!((cc.fast_count, cc.reno_count), (50, 40));
        round(&mut cc, &mut tp, 10_000, 10_000);
        assert_eq!((cc.fast_count, cc.reno_count), (0, 2));
    }

    #[test]
    fn loss_removes_the_queue_alone_and_halves_when_competing() {
        let mut tp = sock(400);
        let mut cc = yeah(&mut tp);
        cc.reno_count = 101;
        cc.fast_count = 7;
        // Fewer than rho slow rounds: reduction = max(min(lastQ 33, 200), 400 >> 3 = 50) = 50.
        cc.last_q = 33;
        assert_eq!(cc.ssthresh(&tp), 350);
        assert_eq!((cc.fast_count, cc.reno_count), (0, 50));
        // reduction = max(min(120, 200), 50) = 120.
        cc.last_q = 120;
        assert_eq!(cc.ssthresh(&tp), 280);
        // reduction = max(min(300, 200), 50) = 200.
        cc.last_q = 300;
        assert_eq!(cc.ssthresh(&tp), 200);
        // rho = 16 consecutive slow rounds: Reno's half, whatever the queue.
        cc.last_q = 0;
        cc.doing_reno_now = 16;
        assert_eq!(cc.ssthresh(&tp), 200);
        // Never below 2: cwnd 3, reduction = max(min(5, max(1, 2)), 0) = 2, 3 - 2 = 1 -> 2.
        cc.doing_reno_now = 0;
        cc.last_q = 5;
        assert_eq!(cc.ssthresh(&sock(3)), 2);
    }

    #[test]
    fn no_round_is_evaluated_when_not_cwnd_limited() {
        let mut tp = sock(200);
        let mut cc = yeah(&mut tp);
        tp.is_cwnd_limited = false;
        round(&mut cc, &mut tp, 10_000, 20_000);
        assert_eq!(
            (tp.snd_cwnd, cc.doing_reno_now, cc.vegas.cnt_rtt),
            (200, 0, 3)
        );
    }

    #[test]
    fn too_few_samples_make_no_decision() {
        let mut tp = sock(200);
        let mut cc = yeah(&mut tp);
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 19_999,
                in_flight: 0,
            },
        );
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 9_999,
                in_flight: 0,
            },
        );
        tp.snd_una = cc.vegas.beg_snd_nxt + 1;
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(
            (cc.doing_reno_now, cc.fast_count, cc.vegas.cnt_rtt),
            (0, 0, 0)
        );
    }

    #[test]
    fn init_caps_the_cwnd_clamp() {
        let mut tp = sock(10);
        yeah(&mut tp);
        assert_eq!(tp.snd_cwnd_clamp, 33_554_431);
    }

    #[test]
    fn parameters_are_validated() {
        let mut m = serde_json::Map::new();
        m.insert("phy".into(), serde_json::json!(0));
        assert_eq!(
            (INFO.make)(&m).err().unwrap(),
            "parameter phy = 0: expected at least 1 (it divides)"
        );
        let mut m = serde_json::Map::new();
        m.insert("epsilon".into(), serde_json::json!(32));
        assert_eq!(
            (INFO.make)(&m).err().unwrap(),
            "parameter epsilon = 32: expected 0..=31 (a shift of a 32-bit cwnd)"
        );
        let mut m = serde_json::Map::new();
        m.insert("alpha".into(), serde_json::json!(20));
        assert!((INFO.make)(&m).is_ok());
    }

    #[test]
    fn model_reports_base_rtt_queue_and_mode() {
        let mut tp = sock(200);
        let mut cc = yeah(&mut tp);
        round(&mut cc, &mut tp, 10_000, 12_000);
        let m = cc.model();
        assert_eq!(m[0], ("base_rtt_us", 10_000.0));
        assert_eq!(m[3], ("queue_pkts", 33.0));
        assert_eq!(m[4], ("mode_slow", 1.0));
        assert_eq!(m[5], ("slow_rounds", 1.0));
        assert_eq!(m[6], ("reno_count", 100.0));
    }
}
