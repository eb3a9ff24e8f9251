//! DCTCP, Data Center TCP (Alizadeh et al., SIGCOMM 2010; RFC 8257), as Linux runs it
//! (net/ipv4/tcp_dctcp.c and tcp_dctcp.h).
//!
//! DCTCP reacts to the *extent* of congestion rather than its presence. Switches mark packets
//! CE once their queue exceeds a threshold K; the receiver echoes every mark exactly; the sender
//! keeps `alpha`, an EWMA of the fraction of delivered packets that were marked, updated once
//! per window of data (when snd_una passes the snd_nxt of the previous update):
//! `alpha = (1 - g) alpha + g F`, with `g = 2^-dctcp_shift_g` (1/16) and `F` the marked fraction
//! of that window from `tp.delivered_ce / tp.delivered`. Linux holds alpha in 1/1024 (0..=1024,
//! starting at `dctcp_alpha_on_init` = 1024) and decays it by `alpha >> g`, or by all of it
//! when that is 0: an alpha below 2^g drops straight to zero.
//! On ECN echo (the CWR reduction), `ssthresh = cwnd - cwnd * alpha / 2048`, at least 2: a
//! fully marked path halves cwnd, a lightly marked one barely reduces. Growth is Reno's.
//!
//! A real loss is still treated like Reno: entering Recovery, or an RTO (`CA_EVENT_LOSS`), sets
//! `ssthresh = cwnd / 2` (at least 2); undo restores the window held at that loss. Kernels
//! before 5.1 ("tcp: Ensure DCTCP reacts to losses", 2019) did not halve but offered
//! `dctcp_clamp_alpha_on_loss` (set alpha to its maximum on entering Loss); it is available
//! here as a parameter, on top of the current behaviour.
//!
//! DCTCP needs ECN: if the connection did not negotiate it (`tp.ecn_ok` false at `init`),
//! Linux falls back to plain Reno ("dctcp-reno"), and so does this module.
//!
//! The receiver side lives in the TCP engine: for a DCTCP connection, the receiver reports the
//! CE state of arriving data with `CA_EVENT_ECN_IS_CE` / `CA_EVENT_ECN_NO_CE`; this module keeps
//! that state (`ce_state`); on every change of it the engine must first send any delayed ACK
//! with the previous ECE state and acknowledging up to the previous `rcv_nxt`, then ACK
//! immediately, and it must set ECE on exactly the ACKs covering CE-marked data (no sticky ECE
//! until CWR). Linux's protective load balancing (PLB, flow-label rehash) has no counterpart:
//! wificc routes each flow on a single path.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::reno::{reno_cong_avoid, reno_ssthresh};
use super::{CongestionControl, ModelValue};
use crate::sim::Rng;
use crate::tcp::sock::{CaEvent, CaState, Sock};

/// alpha = 1 in fixed point (`DCTCP_MAX_ALPHA`, 1024).
pub const DCTCP_MAX_ALPHA: u32 = 1024;
/// Fixed-point bits of alpha (alpha is in 1/2^10).
const ALPHA_SHIFT: u32 = 10;
/// Largest `dctcp_shift_g` the kernel accepts (`param_set_uint_minmax(.., 0, 10)`).
const MAX_SHIFT_G: u32 = 10;

/// Module parameters of tcp_dctcp.ko, with the kernel's defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// EWMA gain g = 1/2^dctcp_shift_g (`dctcp_shift_g`, default 4: g = 1/16). 0..=10.
    #[schemars(extend("x-unit" = "log2"))]
    pub dctcp_shift_g: u32,
    /// Initial alpha in 1/1024 (`dctcp_alpha_on_init`, default 1024 = 1.0). 0..=1024.
    #[schemars(extend("x-unit" = "1/1024"))]
    pub dctcp_alpha_on_init: u32,
    /// Set alpha to 1024 on entering Loss (`dctcp_clamp_alpha_on_loss` of kernels before 5.1,
    /// default off).
    pub dctcp_clamp_alpha_on_loss: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            dctcp_shift_g: 4,
            dctcp_alpha_on_init: DCTCP_MAX_ALPHA,
            dctcp_clamp_alpha_on_loss: false,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), String> {
        if self.dctcp_shift_g > MAX_SHIFT_G {
            return Err(format!(
                "parameter dctcp_shift_g = {}: expected 0..={MAX_SHIFT_G} (g = 1/2^dctcp_shift_g)",
                self.dctcp_shift_g
            ));
        }
        if self.dctcp_alpha_on_init > DCTCP_MAX_ALPHA {
            return Err(format!(
                "parameter dctcp_alpha_on_init = {}: expected 0..={DCTCP_MAX_ALPHA} (alpha in 1/1024)",
                self.dctcp_alpha_on_init
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct Dctcp {
    p: Params,
    /// ECN was negotiated at init; without it this is Reno.
    ecn: bool,
    /// Marked fraction EWMA, 1/1024.
    alpha: u32,
    /// The current window ends when snd_una reaches this.
    next_seq: u64,
    /// `tp.delivered` and `tp.delivered_ce` at the start of the window.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// Receiver: whether the last data packet was CE-marked.
    ce_state: bool,
    /// cwnd at the last loss or reduction, for undo.
    loss_cwnd: u32,
}

pub const INFO: CcInfo = CcInfo {
    name: "dctcp",
    summary: "DCTCP: cwnd cut in proportion to the fraction of ECN-marked packets (needs ECN)",
    source: "Linux net/ipv4/tcp_dctcp.c; RFC 8257; Alizadeh et al., SIGCOMM 2010",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| Ok(Box::new(Dctcp::new(params_from::<Params>(m)?)?)),
};

impl Dctcp {
    pub fn new(p: Params) -> Result<Self, String> {
        p.validate()?;
        Ok(Dctcp {
            alpha: p.dctcp_alpha_on_init,
            p,
            ecn: false,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            ce_state: false,
            loss_cwnd: 0,
        })
    }

    /// Start a new observation window at the current snd_nxt.
    fn reset_window(&mut self, tp: &Sock) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// `dctcp_update_alpha`: once snd_una has reached the window's end, fold its marked
    /// fraction into alpha and start the next window.
    fn update_alpha(&mut self, tp: &Sock) {
        if tp.snd_una < self.next_seq {
            return;
        }
        let delivered = tp.delivered - self.old_delivered;
        let delivered_ce = tp.delivered_ce - self.old_delivered_ce;
        let g = self.p.dctcp_shift_g;
        // alpha -= alpha >> g, or all of alpha when that is 0 (the kernel's min_not_zero).
        let decay = match self.alpha >> g {
            0 => self.alpha,
            d => d,
        };
        let mut alpha = self.alpha - decay;
        if delivered_ce > 0 {
            let f = (delivered_ce << (ALPHA_SHIFT - g)) / delivered.max(1);
            alpha = (u64::from(alpha) + f).min(u64::from(DCTCP_MAX_ALPHA)) as u32;
        }
        self.alpha = alpha;
        self.reset_window(tp);
    }

    /// `dctcp_react_to_loss`: a real loss halves, as Reno.
    fn react_to_loss(&mut self, tp: &mut Sock) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = reno_ssthresh(tp);
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn init(&mut self, tp: &mut Sock, _rng: &mut Rng) {
        self.ecn = tp.ecn_ok;
        if self.ecn {
            self.alpha = self.p.dctcp_alpha_on_init;
            self.loss_cwnd = 0;
            self.ce_state = false;
            self.reset_window(tp);
        }
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        if !self.ecn {
            return reno_ssthresh(tp);
        }
        self.loss_cwnd = tp.snd_cwnd;
        let cut = (u64::from(tp.snd_cwnd) * u64::from(self.alpha)) >> (ALPHA_SHIFT + 1);
        (tp.snd_cwnd - cut as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        reno_cong_avoid(tp, acked);
    }

    fn in_ack_event(&mut self, tp: &mut Sock, _flags: u32) {
        if self.ecn {
            self.update_alpha(tp);
        }
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if !self.ecn {
            return;
        }
        if new_state == CaState::Recovery && tp.ca_state != CaState::Recovery {
            self.react_to_loss(tp);
        }
        if new_state == CaState::Loss && self.p.dctcp_clamp_alpha_on_loss {
            self.alpha = DCTCP_MAX_ALPHA;
        }
    }

    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if !self.ecn {
            return;
        }
        match ev {
            CaEvent::EcnIsCe => self.ce_state = true,
            CaEvent::EcnNoCe => self.ce_state = false,
            CaEvent::Loss => self.react_to_loss(tp),
            CaEvent::TxStart | CaEvent::CwndRestart | CaEvent::CompleteCwr => {}
        }
    }

    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        if self.ecn {
            tp.snd_cwnd.max(self.loss_cwnd)
        } else {
            tp.snd_cwnd.max(tp.prior_cwnd)
        }
    }

    /// `alpha` (0..=1, marked fraction EWMA), `ce_state` (receiver, 0/1), `ecn` (0 = fell back
    /// to Reno).
    fn model(&self) -> Vec<ModelValue> {
        vec![
            ("alpha", f64::from(self.alpha) / f64::from(DCTCP_MAX_ALPHA)),
            ("ce_state", f64::from(u8::from(self.ce_state))),
            ("ecn", f64::from(u8::from(self.ecn))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ecn_sock(cwnd: u32) -> Sock {
        let mut tp = Sock::new(1448, cwnd);
        tp.ecn_ok = true;
        tp
    }

    fn dctcp(p: Params, tp: &mut Sock) -> Dctcp {
        let mut cc = Dctcp::new(p).unwrap();
        cc.init(tp, &mut Rng::new(1, 0));
        cc
    }

    /// One window of data: `delivered` packets of which `ce` marked, all ACKed, with the next
    /// window sent; the ACK that completes it triggers the update.
    fn window(cc: &mut Dctcp, tp: &mut Sock, delivered: u64, ce: u64) {
        tp.delivered += delivered;
        tp.delivered_ce += ce;
        tp.snd_una = tp.snd_nxt;
        tp.snd_nxt += delivered.max(1);
        cc.in_ack_event(tp, 0);
    }

    #[test]
    fn alpha_follows_the_per_window_ewma() {
        // g = 1/16, alpha starts at 1024; each window: alpha -= alpha >> 4, then
        // += (ce << 6) / delivered (capped at 1024):
        //   (10, 0):  1024 - 64 = 960
        //   (10, 10): 960 - 60 = 900, + 640/10 = 64 -> 964
        //   (20, 5):  964 - 60 = 904, + 320/20 = 16 -> 920
        //   (40, 40): 920 - 57 = 863, + 2560/40 = 64 -> 927
        //   (7, 3):   927 - 57 = 870, + 192/7 = 27 -> 897
        //   (0, 0):   897 - 56 = 841 (nothing delivered: decay only)
        let mut tp = ecn_sock(10);
        tp.snd_nxt = 10;
        let mut cc = dctcp(Params::default(), &mut tp);
        assert_eq!(cc.alpha, 1024);
        let mut seen = Vec::new();
        for (d, ce) in [(10, 0), (10, 10), (20, 5), (40, 40), (7, 3), (0, 0)] {
            window(&mut cc, &mut tp, d, ce);
            seen.push(cc.alpha);
        }
        assert_eq!(seen, [960, 964, 920, 927, 897, 841]);
    }

    #[test]
    fn alpha_updates_once_per_window() {
        // ACKs inside the window (snd_una < next_seq) leave alpha alone, even with marks.
        let mut tp = ecn_sock(10);
        tp.snd_nxt = 10;
        let mut cc = dctcp(Params::default(), &mut tp);
        tp.snd_una = 9;
        tp.delivered = 9;
        tp.delivered_ce = 9;
        cc.in_ack_event(&mut tp, 0);
        assert_eq!(cc.alpha, 1024);
        // The 10th ACK closes the window: 10 delivered, 9 marked:
        // 1024 - 64 + (9 << 6) / 10 = 960 + 57 = 1017.
        tp.snd_una = 10;
        tp.delivered = 10;
        tp.snd_nxt = 20;
        cc.in_ack_event(&mut tp, 0);
        assert_eq!(
            (cc.alpha, cc.next_seq, cc.old_delivered, cc.old_delivered_ce),
            (1017, 20, 10, 9)
        );
    }

    #[test]
    fn small_alpha_decays_to_zero_and_shift_g_changes_the_gain() {
        // alpha 15 with g = 1/16: 15 >> 4 = 0, so all of it goes.
        let mut tp = ecn_sock(10);
        let p = Params {
            dctcp_alpha_on_init: 15,
            ..Params::default()
        };
        let mut cc = dctcp(p, &mut tp);
        window(&mut cc, &mut tp, 10, 0);
        assert_eq!(cc.alpha, 0);
        // g = 1/2 from alpha 0: (10 marked of 20) -> 0 + (10 << 9) / 20 = 256; then unmarked:
        // 256 - 128 = 128.
        let mut tp = ecn_sock(10);
        let p = Params {
            dctcp_shift_g: 1,
            dctcp_alpha_on_init: 0,
            ..Params::default()
        };
        let mut cc = dctcp(p, &mut tp);
        window(&mut cc, &mut tp, 20, 10);
        assert_eq!(cc.alpha, 256);
        window(&mut cc, &mut tp, 20, 0);
        assert_eq!(cc.alpha, 128);
    }

    #[test]
    fn ecn_reduction_is_proportional_to_alpha() {
        // cwnd - cwnd * alpha >> 11: alpha 1024 -> 100 - 50 = 50; alpha 920 -> 100 - 44 = 56
        // (92000 / 2048 = 44.9); alpha 0 -> 100; floor 2 (2 - 1 = 1 -> 2).
        let mut tp = ecn_sock(100);
        let mut cc = dctcp(Params::default(), &mut tp);
        assert_eq!(cc.ssthresh(&tp), 50);
        cc.alpha = 920;
        assert_eq!(cc.ssthresh(&tp), 56);
        cc.alpha = 0;
        assert_eq!(cc.ssthresh(&tp), 100);
        cc.alpha = 1024;
        assert_eq!(cc.ssthresh(&ecn_sock(2)), 2);
        assert_eq!(cc.loss_cwnd, 2);
    }

    #[test]
    fn real_loss_halves_and_undo_restores_the_loss_window() {
        let mut tp = ecn_sock(100);
        let mut cc = dctcp(Params::default(), &mut tp);
        cc.alpha = 100;
        cc.set_state(&mut tp, CaState::Recovery);
        assert_eq!((tp.snd_ssthresh, cc.loss_cwnd), (50, 100));
        // Already in Recovery: no second reaction.
        tp.ca_state = CaState::Recovery;
        tp.snd_cwnd = 60;
        cc.set_state(&mut tp, CaState::Recovery);
        assert_eq!((tp.snd_ssthresh, cc.loss_cwnd), (50, 100));
        assert_eq!(cc.undo_cwnd(&tp), 100);
        // RTO: the LOSS event halves too; alpha is kept unless clamping is asked for.
        cc.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!((tp.snd_ssthresh, cc.loss_cwnd), (30, 60));
        cc.set_state(&mut tp, CaState::Loss);
        assert_eq!(cc.alpha, 100);
        let p = Params {
            dctcp_clamp_alpha_on_loss: true,
            ..Params::default()
        };
        let mut clamping = dctcp(p, &mut tp);
        clamping.alpha = 100;
        clamping.set_state(&mut tp, CaState::Loss);
        assert_eq!(clamping.alpha, 1024);
    }

    #[test]
    fn ce_state_follows_the_receiver_events() {
        let mut tp = ecn_sock(10);
        let mut cc = dctcp(Params::default(), &mut tp);
        cc.cwnd_event(&mut tp, CaEvent::EcnIsCe);
        assert!(cc.ce_state);
        cc.cwnd_event(&mut tp, CaEvent::EcnIsCe);
        assert!(cc.ce_state);
        cc.cwnd_event(&mut tp, CaEvent::EcnNoCe);
        assert!(!cc.ce_state);
        assert_eq!(cc.model()[1], ("ce_state", 0.0));
    }

    #[test]
    fn without_ecn_it_is_reno() {
        // No ECN negotiated: ssthresh = cwnd / 2 whatever alpha, no alpha updates, Reno undo.
        let mut tp = Sock::new(1448, 100);
        let mut cc = dctcp(
            Params {
                dctcp_alpha_on_init: 0,
                ..Params::default()
            },
            &mut tp,
        );
        assert_eq!(cc.ssthresh(&tp), 50);
        window(&mut cc, &mut tp, 10, 10);
        assert_eq!(cc.alpha, 0);
        tp.prior_cwnd = 120;
        assert_eq!(cc.undo_cwnd(&tp), 120);
        assert_eq!(cc.model()[2], ("ecn", 0.0));
    }

    #[test]
    fn growth_is_reno() {
        let mut tp = ecn_sock(10);
        tp.snd_ssthresh = 10;
        tp.is_cwnd_limited = true;
        let mut cc = dctcp(Params::default(), &mut tp);
        for _ in 0..10 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 11);
    }

    #[test]
    fn parameters_are_validated_with_their_names() {
        let make = |v: serde_json::Value| (INFO.make)(v.as_object().unwrap()).map(|_| ());
        let err = make(serde_json::json!({ "dctcp_shift_g": 11 })).unwrap_err();
        assert!(
            err.contains("dctcp_shift_g = 11") && err.contains("0..=10"),
            "{err}"
        );
        let err = make(serde_json::json!({ "dctcp_alpha_on_init": 2000 })).unwrap_err();
        assert!(err.contains("dctcp_alpha_on_init = 2000"), "{err}");
        assert_eq!((INFO.defaults)()["dctcp_shift_g"], 4);
    }
}
