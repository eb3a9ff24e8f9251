//! TCP Veno (Fu & Liew, "TCP Veno: TCP Enhancement for Transmission over Wireless Access
//! Networks", IEEE JSAC 2003), as Linux runs it (net/ipv4/tcp_veno.c).
//!
//! Veno is Reno that uses a Vegas-style estimate of its own backlog in the bottleneck queue to
//! tell congestion from random (e.g. wireless) loss. With `base_rtt` the smallest RTT ever seen
//! and `rtt` the smallest since the previous ACK, the expected rate is `cwnd / base_rtt`, the
//! actual rate `cwnd / rtt`, and the packets queued are
//! `N = cwnd - cwnd * base_rtt / rtt = cwnd (rtt - base_rtt) / rtt`.
//! Linux keeps N with one fractional bit and compares it with `beta` = 3 packets:
//!
//! - N < beta (*non-congestive*): grow like Reno (one packet per RTT); a loss is taken as random
//!   and cuts cwnd by only 1/5 (`ssthresh = cwnd * 4/5`).
//! - N >= beta (*congestive*): grow one packet every *other* RTT (the counter toggles `inc`
//!   each time it fills), and a loss halves cwnd as in Reno.
//!
//! The estimate needs more than two RTT samples since Veno was (re)started, and is only used
//! in the Open state; otherwise Veno is Reno. It restarts at connection start, after idle
//! (`TX_START`, `CWND_RESTART`) and on returning to Open; the sample count is never cleared,
//! as in the kernel. RTTs are kept as `rtt_us + 1` so that neither can be zero.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::reno::reno_cong_avoid;
use super::{CongestionControl, ModelValue};
use crate::sim::Rng;
use crate::tcp::sock::{AckSample, CaEvent, CaState, Sock};

/// Fractional bits of N and beta (`V_PARAM_SHIFT`).
const V_PARAM_SHIFT: u32 = 1;
/// "No sample yet" for the RTT minima, µs (the kernel's 0x7fffffff).
const NO_RTT_US: u32 = 0x7fff_ffff;
/// Smallest cwnd Veno leaves after its own increase.
const MIN_CWND: u32 = 2;
/// Samples needed before the backlog estimate is used: more than this.
const MIN_RTT_SAMPLES: u32 = 2;

/// Veno's threshold (in the kernel a constant, not a module parameter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Backlog, in packets, from which the path is taken as congested (`beta`, default 3).
    #[schemars(extend("x-unit" = "packets"))]
    pub beta: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { beta: 3 }
    }
}

#[derive(Debug, Clone)]
pub struct Veno {
    /// beta << V_PARAM_SHIFT.
    beta: u32,
    /// Use the backlog estimate this RTT (Open state).
    doing_veno_now: bool,
    /// RTT samples since the start (never cleared).
    cntrtt: u32,
    /// Minimum of (RTT + 1 µs) since the last ACK processed.
    minrtt_us: u32,
    /// Minimum of (RTT + 1 µs) since (re)start: the propagation delay.
    basertt_us: u32,
    /// In the congestive state, increase on the next counter fill.
    inc: bool,
    /// N << V_PARAM_SHIFT from the last estimate.
    diff: u32,
}

pub const INFO: CcInfo = CcInfo {
    name: "veno",
    summary: "Veno: Reno with a backlog estimate separating random from congestive loss",
    source: "Linux net/ipv4/tcp_veno.c; Fu & Liew, IEEE JSAC 21(2), 2003",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| Ok(Box::new(Veno::new(params_from::<Params>(m)?)?)),
};

impl Veno {
    pub fn new(p: Params) -> Result<Self, String> {
        let beta = p.beta.checked_mul(1 << V_PARAM_SHIFT).ok_or_else(|| {
            format!(
                "parameter beta = {}: expected at most {} packets",
                p.beta,
                u32::MAX >> V_PARAM_SHIFT
            )
        })?;
        let mut v = Veno {
            beta,
            doing_veno_now: false,
            cntrtt: 0,
            minrtt_us: NO_RTT_US,
            basertt_us: NO_RTT_US,
            inc: true,
            diff: 0,
        };
        v.restart();
        Ok(v)
    }

    /// `tcp_veno_init`: forget the base RTT and turn the estimate on.
    fn restart(&mut self) {
        self.basertt_us = NO_RTT_US;
        self.inc = true;
        self.enable();
    }

    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.minrtt_us = NO_RTT_US;
    }

    /// N << 1 = 2 cwnd - floor(2 cwnd * base_rtt / rtt).
    fn backlog(&self, cwnd: u32) -> u32 {
        let expected = (u64::from(cwnd) * u64::from(self.basertt_us)) << V_PARAM_SHIFT;
        let expected = expected / u64::from(self.minrtt_us);
        (cwnd << V_PARAM_SHIFT).wrapping_sub(expected as u32)
    }

    fn congestive(&self) -> bool {
        self.diff >= self.beta
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn init(&mut self, _tp: &mut Sock, _rng: &mut Rng) {
        self.restart();
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let cwnd = tp.snd_cwnd;
        if self.congestive() {
            (cwnd >> 1).max(2)
        } else {
            (cwnd.saturating_mul(4) / 5).max(2)
        }
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if !self.doing_veno_now {
            reno_cong_avoid(tp, acked);
            return;
        }
        if !tp.is_cwnd_limited() {
            return;
        }
        if self.cntrtt <= MIN_RTT_SAMPLES {
            reno_cong_avoid(tp, acked);
        } else {
            self.diff = self.backlog(tp.snd_cwnd);
            let mut acked = acked;
            if tp.in_slow_start() {
                acked = tp.slow_start(acked);
            }
            if acked > 0 {
                if !self.congestive() {
                    let w = tp.snd_cwnd;
                    tp.cong_avoid_ai(w, acked);
                } else if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                    // Congestive: every other fill of the counter adds a packet.
                    if self.inc && tp.snd_cwnd < tp.snd_cwnd_clamp {
                        tp.snd_cwnd += 1;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    tp.snd_cwnd_cnt = 0;
                } else {
                    tp.snd_cwnd_cnt += acked;
                }
            }
            tp.snd_cwnd = tp.snd_cwnd.clamp(MIN_CWND, tp.snd_cwnd_clamp.max(MIN_CWND));
        }
        self.minrtt_us = NO_RTT_US;
    }

    fn set_state(&mut self, _tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    fn cwnd_event(&mut self, _tp: &mut Sock, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart();
        }
    }

    fn pkts_acked(&mut self, _tp: &mut Sock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let vrtt = u32::try_from(sample.rtt_us)
            .unwrap_or(NO_RTT_US - 1)
            .saturating_add(1);
        self.basertt_us = self.basertt_us.min(vrtt);
        self.minrtt_us = self.minrtt_us.min(vrtt);
        self.cntrtt = self.cntrtt.saturating_add(1);
    }

    /// `backlog` (N, packets), `base_rtt_us`, `congestive` (0/1), `veno_active` (0/1).
    fn model(&self) -> Vec<ModelValue> {
        vec![
            (
                "backlog",
                f64::from(self.diff) / f64::from(1u32 << V_PARAM_SHIFT),
            ),
            ("base_rtt_us", f64::from(self.basertt_us)),
            ("congestive", f64::from(u8::from(self.congestive()))),
            ("veno_active", f64::from(u8::from(self.doing_veno_now))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn veno() -> Veno {
        Veno::new(Params::default()).unwrap()
    }

    fn ca_sock(cwnd: u32) -> Sock {
        let mut tp = Sock::new(1448, cwnd);
        tp.snd_ssthresh = 2;
        tp.is_cwnd_limited = true;
        tp
    }

    /// One ACK of one packet carrying an RTT sample of `rtt_us`.
    fn ack(v: &mut Veno, tp: &mut Sock, rtt_us: i64) {
        v.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us,
                in_flight: 0,
            },
        );
        v.cong_avoid(tp, 1);
    }

    /// Veno with base RTT `base_us` (sample `base_us - 1`) after three ACKs, on another socket.
    fn primed_with(p: Params, base_us: i64) -> Veno {
        let mut v = Veno::new(p).unwrap();
        let mut tp = ca_sock(10);
        for _ in 0..3 {
            ack(&mut v, &mut tp, base_us - 1);
        }
        v
    }

    fn primed(base_us: i64) -> Veno {
        primed_with(Params::default(), base_us)
    }

    #[test]
    fn backlog_estimate_and_the_beta_boundary() {
        // cwnd 30, base RTT 100 (sample 99 + 1). N<<1 = 60 - floor(60 * 100 / rtt):
        //   rtt 109: 60 - floor(55.05) = 5 -> N = 2.5 < 3: non-congestive
        //   rtt 110: 60 - floor(54.55) = 6 -> N = 3: congestive
        //   rtt 150: 60 - 40 = 20 -> N = 10 (= 30 * (150 - 100) / 150)
        for (rtt_sample, diff, congestive) in [(108, 5, false), (109, 6, true), (149, 20, true)] {
            let mut v = primed(100);
            let mut tp = ca_sock(30);
            ack(&mut v, &mut tp, rtt_sample);
            assert_eq!(
                (v.diff, v.congestive()),
                (diff, congestive),
                "rtt {}",
                rtt_sample + 1
            );
        }
    }

    #[test]
    fn random_loss_cuts_a_fifth_congestive_loss_half() {
        // cwnd 100: non-congestive 100 * 4 / 5 = 80; congestive 100 / 2 = 50; floor 2.
        let mut v = primed(100);
        let mut tp = ca_sock(100);
        ack(&mut v, &mut tp, 99);
        assert_eq!(v.ssthresh(&tp), 80);
        ack(&mut v, &mut tp, 199);
        assert!(v.congestive());
        assert_eq!(v.ssthresh(&tp), 50);
        assert_eq!(v.ssthresh(&ca_sock(3)), 2);
        v.diff = 0;
        assert_eq!(v.ssthresh(&ca_sock(2)), 2);
    }

    /// ACKs (one packet each, RTT `rtt_us`) until cwnd has grown `grow` times; the count.
    fn acks_to_grow(v: &mut Veno, tp: &mut Sock, rtt_us: i64, grow: u32) -> u32 {
        let target = tp.snd_cwnd + grow;
        let mut n = 0;
        while tp.snd_cwnd < target {
            ack(v, tp, rtt_us);
            n += 1;
        }
        n
    }

    #[test]
    fn non_congestive_growth_is_reno() {
        // RTT at the base: N = 0. cwnd 30: 30 ACKs to 31, then 31 to 32.
        let mut v = primed(100);
        let mut tp = ca_sock(30);
        assert_eq!(acks_to_grow(&mut v, &mut tp, 99, 1), 30);
        assert_eq!(acks_to_grow(&mut v, &mut tp, 99, 1), 31);
    }

    #[test]
    fn congestive_growth_is_one_packet_every_other_rtt() {
        // RTT 150 vs base 100 at cwnd 30: N = 10 >= 3. The counter counts to cwnd (30 ACKs),
        // the 31st ACK adds a packet (inc was set) and clears it; the next fill at cwnd 31
        // (31 ACKs + 1) only re-arms inc; the one after (another 32) adds: 31 then 64 ACKs.
        let mut v = primed(100);
        let mut tp = ca_sock(30);
        assert_eq!(acks_to_grow(&mut v, &mut tp, 149, 1), 31);
        assert_eq!(acks_to_grow(&mut v, &mut tp, 149, 1), 64);
        assert_eq!(tp.snd_cwnd, 32);
    }

    #[test]
    fn reno_until_three_samples_and_outside_open() {
        // The first two samples leave Veno as Reno: at cwnd 2 the second ACK fills the counter
        // and adds a packet, and no estimate is made (had it been: N<<1 = 4 - floor(4 * 100 /
        // 150) = 2). The third sample gives the first estimate, 6 - floor(6 * 100 / 150) = 2.
        let mut v = veno();
        let mut tp = ca_sock(2);
        ack(&mut v, &mut tp, 99);
        ack(&mut v, &mut tp, 149);
        assert_eq!((tp.snd_cwnd, v.diff), (3, 0));
        ack(&mut v, &mut tp, 149);
        assert_eq!((v.cntrtt, v.diff), (3, 2));
        // Outside Open the estimate is off: Reno growth although congestive.
        let mut v = primed(100);
        let mut tp = ca_sock(30);
        v.set_state(&mut tp, CaState::Recovery);
        assert_eq!(acks_to_grow(&mut v, &mut tp, 149, 1), 30);
        v.set_state(&mut tp, CaState::Open);
        assert!(v.doing_veno_now);
    }

    #[test]
    fn idle_restart_forgets_the_base_rtt() {
        let mut v = primed(100);
        let mut tp = ca_sock(30);
        ack(&mut v, &mut tp, 149);
        v.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(
            (v.basertt_us, v.minrtt_us, v.inc),
            (NO_RTT_US, NO_RTT_US, true)
        );
        // The sample count survives: the next sample at 150 is the new base, N = 0.
        ack(&mut v, &mut tp, 149);
        assert_eq!((v.basertt_us, v.diff), (150, 0));
        assert_eq!(v.model()[0], ("backlog", 0.0));
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_and_beta_is_a_parameter() {
        let mut v = primed(100);
        let mut tp = ca_sock(30);
        tp.is_cwnd_limited = false;
        ack(&mut v, &mut tp, 99);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (30, 0));
        // beta = 11: N = 10 at rtt 150 is now non-congestive.
        let mut v = primed_with(Params { beta: 11 }, 100);
        let mut tp = ca_sock(30);
        ack(&mut v, &mut tp, 149);
        assert_eq!((v.diff, v.congestive()), (20, false));
        let make = |v: serde_json::Value| (INFO.make)(v.as_object().unwrap()).map(|_| ());
        assert_eq!(make(serde_json::json!({ "beta": 11 })), Ok(()));
        let err = make(serde_json::json!({ "beta": u32::MAX })).unwrap_err();
        assert!(err.contains("beta = 4294967295"), "{err}");
    }
}
