//! Congestion controls.
//!
//! [`CongestionControl`] mirrors Linux `struct tcp_congestion_ops` (include/net/tcp.h): the TCP
//! engine calls the same hooks at the same points as `net/ipv4/tcp_input.c` and `tcp_output.c`,
//! and an algorithm manipulates the same [`Sock`] fields as its kernel module. An algorithm
//! that implements `cong_control` (the BBR family) owns cwnd and pacing entirely; the others get
//! `cong_avoid`, `ssthresh` and PRR during recovery, and the engine computes their pacing rate as
//! `tcp_update_pacing_rate` does.
//!
//! Each algorithm lives in its own file with a `Params` struct (serde, documented defaults);
//! [`registry`] maps names to constructors.

pub mod bbr;
pub mod bbr3;
pub mod bbr_common;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod nv;
pub mod registry;
pub mod reno;
pub mod vegas;
pub mod veno;
pub mod yeah;

use crate::sim::Rng;
use crate::tcp::rate_sample::{RateSample, TxState};
use crate::tcp::sock::{AckSample, CaEvent, CaState, Sock};

pub use registry::{build, names, CcError, CcInfo, ParamInfo};

/// A coded model quantity: the algorithms that report it, its name, and each code's name.
pub type CodedQuantity = (Vec<&'static str>, &'static str, Vec<(u32, &'static str)>);

/// The quantities of the algorithms' models ([`CongestionControl::model`]) that are codes,
/// each with the algorithms that report it and the name of every code: what `model_series`
/// labels and the reference lists.
pub fn model_codes() -> Vec<CodedQuantity> {
    let bbr_family: Vec<&str> = [
        &bbr::INFO,
        &bbr::bbrp::INFO,
        &bbr::bbrn::INFO,
        &bbr::apg::INFO,
        &bbr::pg::INFO,
    ]
    .iter()
    .map(|i| i.name)
    .collect();
    let v3: Vec<&str> = [&bbr3::BBR2_INFO, &bbr3::BBR3_INFO, &bbr3::BBRN3_INFO]
        .iter()
        .map(|i| i.name)
        .collect();
    let mut out = vec![(
        bbr_family,
        "mode",
        bbr::Mode::ALL
            .iter()
            .map(|&m| (m as u32, m.label()))
            .collect(),
    )];
    for (quantity, codes) in bbr3::model_codes() {
        out.push((v3.clone(), quantity, codes));
    }
    out.push((
        vec![cubic::INFO.name],
        "hystart_exit",
        cubic::HystartExit::codes().to_vec(),
    ));
    out
}

/// One named value of an algorithm's internal model, reported to the metrics every STEP
/// (e.g. `bw_bps`, `min_rtt_us`, `mode`, `pacing_gain`, `cycle_len`, `inflight_hi`).
pub type ModelValue = (&'static str, f64);

/// Linux `tcp_congestion_ops`. Default methods do what the kernel does when a hook is NULL.
pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;

    /// `init`: called once when the connection is established.
    fn init(&mut self, _tp: &mut Sock, _rng: &mut Rng) {}

    /// `ssthresh`: slow-start threshold after a loss (entering Recovery or Loss).
    fn ssthresh(&mut self, tp: &Sock) -> u32;

    /// `cong_avoid`: grow cwnd on an ACK (only for algorithms without `cong_control`).
    fn cong_avoid(&mut self, _tp: &mut Sock, _acked: u32) {}

    /// Whether this algorithm implements `cong_control` (then it alone sets cwnd and pacing).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `cong_control`: called on every ACK with the rate sample.
    fn cong_control(&mut self, _tp: &mut Sock, _rs: &RateSample, _rng: &mut Rng) {}

    /// `set_state`: called before `tp.ca_state` changes to `new_state`.
    fn set_state(&mut self, _tp: &mut Sock, _new_state: CaState) {}

    /// `cwnd_event`.
    fn cwnd_event(&mut self, _tp: &mut Sock, _ev: CaEvent) {}

    /// `in_ack_event` with CA_ACK_* flags.
    fn in_ack_event(&mut self, _tp: &mut Sock, _flags: u32) {}

    /// `pkts_acked`: per-ACK RTT sample and count.
    fn pkts_acked(&mut self, _tp: &mut Sock, _sample: &AckSample) {}

    /// `skb_marked_lost` (BBRv2/v3): a packet was just marked lost; `tx` is what was recorded
    /// when it was sent.
    fn skb_marked_lost(&mut self, _tp: &mut Sock, _tx: &TxState) {}

    /// `undo_cwnd`: cwnd to restore after a spurious loss signal. Kernel default:
    /// max(cwnd, prior_cwnd) (`tcp_reno_undo_cwnd`).
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    /// `min_tso_segs`: None means the kernel default (`sysctl_tcp_min_tso_segs`, 2).
    fn min_tso_segs(&self, _tp: &Sock) -> Option<u32> {
        None
    }

    /// `tso_segs` (BBRv2/v3 trees): the CCA sizes each skb itself, in segments. None means the
    /// engine's `tcp_tso_autosize` with `min_tso_segs`.
    fn tso_segs(&self, _tp: &Sock) -> Option<u32> {
        None
    }

    /// `sndbuf_expand` multiplier (kernel default 2).
    fn sndbuf_expand(&self) -> u32 {
        2
    }

    /// Whether the algorithm asks TCP to enforce pacing (`sk_pacing_status = SK_PACING_NEEDED`).
    fn wants_pacing(&self) -> bool {
        false
    }

    /// The algorithm's internal model, for metrics.
    fn model(&self) -> Vec<ModelValue> {
        Vec::new()
    }
}

#[cfg(test)]
mod model_code_tests {
    use super::*;
    use serde_json::Map;

    /// Every coded quantity is one its algorithms report, and its codes are distinct.
    #[test]
    fn coded_quantities_are_in_the_models() {
        let codes = model_codes();
        assert_eq!(codes.len(), 4);
        for (ccs, quantity, names) in &codes {
            assert!(!ccs.is_empty());
            for name in ccs {
                let cc = build(name, &Map::new()).unwrap();
                assert!(
                    cc.model().iter().any(|(q, _)| q == quantity),
                    "{name} reports no {quantity}"
                );
            }
            let mut seen: Vec<u32> = names.iter().map(|c| c.0).collect();
            seen.dedup();
            assert_eq!(seen.len(), names.len(), "{quantity}");
        }
        // BBR's modes as tcp_bbr.c numbers them.
        assert_eq!(
            codes[0].2,
            vec![
                (0, "STARTUP"),
                (1, "DRAIN"),
                (2, "PROBE_BW"),
                (3, "PROBE_RTT")
            ]
        );
        // v2/v3 number their modes as v1, and their ProbeBW phases DOWN, CRUISE, REFILL, UP.
        assert_eq!(codes[1].1, "state");
        assert_eq!(codes[1].2, codes[0].2);
        assert_eq!(
            codes[2].2,
            vec![(0, "DOWN"), (1, "CRUISE"), (2, "REFILL"), (3, "UP")]
        );
        assert_eq!(
            codes[3].2,
            vec![(0, "none"), (1, "ack_train"), (2, "delay")]
        );
    }
}
