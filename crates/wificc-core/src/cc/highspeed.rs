//! HighSpeed TCP (RFC 3649), as Linux runs it (net/ipv4/tcp_highspeed.c).
//!
//! HighSpeed TCP keeps Reno's AIMD shape but makes both constants depend on the window: above
//! 38 packets, a larger window adds more per RTT (`a(w)` packets) and gives back a smaller
//! fraction on loss (`b(w)`), so that a single flow can fill a long fat pipe at the loss rates
//! such a pipe actually has. RFC 3649 Appendix B tabulates `a(w)` and `b(w)` for 72 window
//! thresholds from 38 to 89053 packets; Linux stores that table with `b(w)` in 1/256 units and
//! `a(w)` as the row index + 1.
//!
//! The row in use, `ai`, is moved on each congestion-avoidance ACK so that
//! `threshold[ai - 1] < cwnd <= threshold[ai]` (the last row applies to every larger window).
//! Each ACKed call then adds `a(w) = ai + 1` to the linear counter and raises cwnd by one when
//! the counter reaches cwnd: `a(w)` packets per RTT. On loss,
//! `ssthresh = max(cwnd - cwnd * b(w) / 256, 2)` with the row last set in congestion avoidance
//! (slow start does not move it). Slow start is Reno's; so is undo.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::{CongestionControl, ModelValue};
use crate::sim::Rng;
use crate::tcp::sock::Sock;

/// One row of RFC 3649 Appendix B: up to `cwnd` packets, `a(w)` = row index + 1 and
/// `b(w)` = `md` / 256.
#[derive(Debug, Clone, Copy)]
struct AimdRow {
    cwnd: u32,
    md: u32,
}

const fn row(cwnd: u32, md: u32) -> AimdRow {
    AimdRow { cwnd, md }
}

/// The AIMD table (RFC 3649 Appendix B), with Linux's 1/256 fixed-point `b(w)`.
#[rustfmt::skip]
const AIMD: [AimdRow; 72] = [
    row(38, 128), row(118, 112), row(221, 104), row(347, 98), row(495, 93), row(663, 89),
    row(851, 86), row(1058, 83), row(1284, 81), row(1529, 78), row(1793, 76), row(2076, 74),
    row(2378, 72), row(2699, 71), row(3039, 69), row(3399, 68), row(3778, 66), row(4177, 65),
    row(4596, 64), row(5036, 62), row(5497, 61), row(5979, 60), row(6483, 59), row(7009, 58),
    row(7558, 57), row(8130, 56), row(8726, 55), row(9346, 54), row(9991, 53), row(10661, 52),
    row(11358, 52), row(12082, 51), row(12834, 50), row(13614, 49), row(14424, 48),
    row(15265, 48), row(16137, 47), row(17042, 46), row(17981, 45), row(18955, 45),
    row(19965, 44), row(21013, 43), row(22101, 43), row(23230, 42), row(24402, 41),
    row(25618, 41), row(26881, 40), row(28193, 39), row(29557, 39), row(30975, 38),
    row(32450, 38), row(33986, 37), row(35586, 36), row(37253, 36), row(38992, 35),
    row(40808, 35), row(42707, 34), row(44694, 33), row(46776, 33), row(48961, 32),
    row(51258, 32), row(53677, 31), row(56230, 30), row(58932, 30), row(61799, 29),
    row(64851, 28), row(68113, 28), row(71617, 27), row(75401, 26), row(79517, 26),
    row(84035, 25), row(89053, 24),
];

/// `b(w)` fixed-point shift: `md` is in 1/256.
const MD_SHIFT: u32 = 8;
/// Largest cwnd for which `cwnd * md` fits in 32 bits (md <= 128): 0xffffffff / 128.
const CWND_CLAMP_MAX: u32 = u32::MAX / 128;

/// HighSpeed TCP has no parameters (the kernel module has none).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {}

#[derive(Debug, Clone, Default)]
pub struct HighSpeed {
    /// Row of [`AIMD`] in use.
    ai: usize,
}

pub const INFO: CcInfo = CcInfo {
    name: "highspeed",
    summary: "HighSpeed TCP: AIMD whose increase and decrease depend on cwnd (RFC 3649 table)",
    source: "Linux net/ipv4/tcp_highspeed.c; RFC 3649",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| {
        params_from::<Params>(m)?;
        Ok(Box::new(HighSpeed::default()))
    },
};

impl HighSpeed {
    /// Move `ai` so that `AIMD[ai - 1].cwnd < cwnd <= AIMD[ai].cwnd` (or to the last row).
    fn update_row(&mut self, cwnd: u32) {
        while cwnd > AIMD[self.ai].cwnd && self.ai < AIMD.len() - 1 {
            self.ai += 1;
        }
        while self.ai > 0 && cwnd <= AIMD[self.ai - 1].cwnd {
            self.ai -= 1;
        }
    }

    /// `a(w)`: packets added per RTT in the current row.
    fn a(&self) -> u32 {
        self.ai as u32 + 1
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn init(&mut self, tp: &mut Sock, _rng: &mut Rng) {
        self.ai = 0;
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(CWND_CLAMP_MAX);
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let cwnd = tp.snd_cwnd;
        cwnd.saturating_sub(cwnd.saturating_mul(AIMD[self.ai].md) >> MD_SHIFT)
            .max(2)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            tp.slow_start(acked);
            return;
        }
        self.update_row(tp.snd_cwnd);
        if tp.snd_cwnd < tp.snd_cwnd_clamp {
            // cwnd += a(w) / cwnd per ACK, one call at a time whatever `acked` is.
            tp.snd_cwnd_cnt += self.a();
            if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                tp.snd_cwnd_cnt -= tp.snd_cwnd;
                tp.snd_cwnd += 1;
            }
        }
    }

    /// `a_w` (packets per RTT) and `b_w` (fraction given back on loss) of the current row.
    fn model(&self) -> Vec<ModelValue> {
        vec![
            ("a_w", f64::from(self.a())),
            (
                "b_w",
                f64::from(AIMD[self.ai].md) / f64::from(1u32 << MD_SHIFT),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca_sock(cwnd: u32) -> Sock {
        let mut tp = Sock::new(1448, cwnd);
        tp.snd_ssthresh = 2;
        tp.is_cwnd_limited = true;
        tp
    }

    /// The row chosen for `cwnd` starting from row `from`.
    fn row_for(from: usize, cwnd: u32) -> usize {
        let mut hs = HighSpeed { ai: from };
        hs.update_row(cwnd);
        hs.ai
    }

    #[test]
    fn table_is_rfc_3649_appendix_b() {
        // Strictly increasing thresholds, b(w) non-increasing from 0.5 down to 24/256 = 0.094.
        assert!(AIMD
            .windows(2)
            .all(|w| w[0].cwnd < w[1].cwnd && w[0].md >= w[1].md));
        assert_eq!((AIMD[0].cwnd, AIMD[0].md), (38, 128));
        assert_eq!((AIMD[71].cwnd, AIMD[71].md), (89053, 24));
    }

    #[test]
    fn row_lookup_at_boundary_windows() {
        // A row covers (previous threshold, its threshold].
        for (cwnd, ai) in [
            (1, 0),
            (38, 0),
            (39, 1),
            (118, 1),
            (119, 2),
            (1058, 7),
            (1059, 8),
            (84035, 70),
            (84036, 71),
            (89053, 71),
            (1_000_000, 71),
        ] {
            assert_eq!(row_for(0, cwnd), ai, "up from row 0, cwnd {cwnd}");
            assert_eq!(row_for(71, cwnd), ai, "down from row 71, cwnd {cwnd}");
        }
    }

    /// ACKs of one packet each until cwnd grows by one; returns how many it took.
    fn acks_to_grow(cwnd: u32) -> u32 {
        let mut hs = HighSpeed::default();
        let mut tp = ca_sock(cwnd);
        let mut n = 0;
        while tp.snd_cwnd == cwnd {
            hs.cong_avoid(&mut tp, 1);
            n += 1;
        }
        assert_eq!(tp.snd_cwnd, cwnd + 1);
        n
    }

    #[test]
    fn increase_is_a_w_per_rtt() {
        // cwnd 38: row 0, a = 1: 38 ACKs.        cwnd 1000: row 7, a = 8: ceil(1000/8) = 125.
        // cwnd 10000: row 29, a = 30: ceil(10000/30) = 334.
        // cwnd 84035: row 70, a = 71: ceil(84035/71) = 1184 (1183 * 71 = 83993 < 84035).
        assert_eq!(acks_to_grow(38), 38);
        assert_eq!(acks_to_grow(1000), 125);
        assert_eq!(acks_to_grow(10000), 334);
        assert_eq!(acks_to_grow(84035), 1184);
    }

    #[test]
    fn decrease_is_b_w_of_the_row() {
        // cwnd - cwnd * md >> 8:
        //   38:    38 - (38 * 128 = 4864) / 256 = 38 - 19 = 19
        //   1000:  1000 - (1000 * 83 = 83000) / 256 = 1000 - 324 = 676
        //   10000: 10000 - (10000 * 52 = 520000) / 256 = 10000 - 2031 = 7969
        //   84035: 84035 - (84035 * 25 = 2100875) / 256 = 84035 - 8206 = 75829
        for (cwnd, ssthresh) in [(38, 19), (1000, 676), (10000, 7969), (84035, 75829)] {
            let mut hs = HighSpeed::default();
            let mut tp = ca_sock(cwnd);
            hs.cong_avoid(&mut tp, 1);
            assert_eq!(hs.ssthresh(&tp), ssthresh, "cwnd {cwnd}");
        }
        // Floor of 2; and the row is only moved in congestion avoidance, so a window reached
        // in slow start is still cut by half.
        let mut hs = HighSpeed::default();
        assert_eq!(hs.ssthresh(&ca_sock(3)), 2);
        let mut tp = ca_sock(1000);
        tp.snd_ssthresh = 5000;
        tp.max_packets_out = 1000;
        hs.cong_avoid(&mut tp, 1);
        assert_eq!((tp.snd_cwnd, hs.ai), (1001, 0));
        assert_eq!(hs.ssthresh(&tp), 1001 - 500);
    }

    #[test]
    fn init_clamps_cwnd_and_model_reports_the_row() {
        let mut hs = HighSpeed::default();
        let mut tp = ca_sock(10);
        hs.init(&mut tp, &mut Rng::new(1, 0));
        assert_eq!(tp.snd_cwnd_clamp, 33_554_431);
        let mut tp = ca_sock(1000);
        hs.cong_avoid(&mut tp, 1);
        assert_eq!(hs.model(), vec![("a_w", 8.0), ("b_w", 83.0 / 256.0)]);
    }
}
