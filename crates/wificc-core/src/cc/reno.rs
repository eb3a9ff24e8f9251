//! TCP NewReno congestion avoidance (Linux `tcp_reno_*` in net/ipv4/tcp_cong.c, RFC 5681).
//!
//! Slow start doubles cwnd per round until ssthresh; congestion avoidance adds one packet per
//! cwnd of ACKed packets (`tcp_cong_avoid_ai`); on loss ssthresh = max(cwnd/2, 2). NewReno's
//! partial-ACK handling (RFC 6582) is in the recovery engine (`tcp::sender`), shared by all
//! loss-based algorithms, as in Linux.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::CongestionControl;
use crate::tcp::sock::Sock;

/// Reno has no parameters of its own.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {}

#[derive(Debug, Clone, Default)]
pub struct Reno;

pub const INFO: CcInfo = CcInfo {
    name: "reno",
    summary: "NewReno: slow start, AIMD with beta 1/2",
    source:
        "Linux net/ipv4/tcp_cong.c (tcp_reno_cong_avoid, tcp_reno_ssthresh); RFC 5681, RFC 6582",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| {
        params_from::<Params>(m)?;
        Ok(Box::new(Reno))
    },
};

/// The opening of `tcp_reno_cong_avoid`, shared by algorithms that only change the
/// congestion-avoidance step (cubic): no growth unless cwnd-limited, then slow start up to
/// ssthresh. Returns the ACKed packets left for congestion avoidance, or None when done.
pub fn cwnd_limited_slow_start(tp: &mut Sock, acked: u32) -> Option<u32> {
    if !tp.is_cwnd_limited() {
        return None;
    }
    if tp.in_slow_start() {
        let left = tp.slow_start(acked);
        return (left > 0).then_some(left);
    }
    Some(acked)
}

/// `tcp_reno_cong_avoid`, shared by algorithms that fall back to Reno growth.
pub fn reno_cong_avoid(tp: &mut Sock, acked: u32) {
    if let Some(acked) = cwnd_limited_slow_start(tp, acked) {
        let w = tp.snd_cwnd;
        tp.cong_avoid_ai(w, acked);
    }
}

/// `tcp_reno_ssthresh`: half the window, at least 2.
pub fn reno_ssthresh(tp: &Sock) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        reno_cong_avoid(tp, acked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(1448, cwnd);
        s.snd_ssthresh = ssthresh;
        s.max_packets_out = cwnd;
        s.is_cwnd_limited = true;
        s
    }

    #[test]
    fn slow_start_then_linear() {
        let mut tp = sock(10, 20);
        let mut cc = Reno;
        cc.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd, 20);
        // At ssthresh: 20 ACKed packets add exactly one.
        for _ in 0..20 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
    }

    #[test]
    fn halves_on_loss_with_floor_two() {
        let mut cc = Reno;
        assert_eq!(cc.ssthresh(&sock(40, 100)), 20);
        assert_eq!(cc.ssthresh(&sock(3, 100)), 2);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut tp = sock(30, 10);
        tp.is_cwnd_limited = false;
        tp.max_packets_out = 5;
        Reno.cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd, 30);
    }

    #[test]
    fn rejects_unknown_parameters() {
        let mut m = serde_json::Map::new();
        m.insert("beta".into(), serde_json::json!(0.7));
        let err = (INFO.make)(&m).err().unwrap();
        assert!(err.contains("unknown field `beta`"), "{err}");
    }
}
