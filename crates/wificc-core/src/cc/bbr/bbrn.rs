//! BBR-n: BBRv1 tuned for 802.11n/ac uploads.
//!
//! BBR-n changes three things. Its PROBE_BW cycle probes harder and drains less:
//! {1.5, 0.9, 1, 1, 1, 1, 1, 1} instead of {1.25, 0.75, 1, ...} (7.5/5 and 4.5/5 in the paper;
//! 0.9 is 230/256 in the kernel's fixed point, like `BBR_UNIT * 9 / 10`). STARTUP keeps 2/ln 2.
//! And its send quantum is the one of the BBR Internet-Draft with a larger floor: a base of
//! 1 MSS below 1.2 Mbit/s and 4 MSS above, and
//!
//! ```text
//! quantum = max(min(pacing_rate x 1 ms, 64 KiB) / mss, base)   segments
//! ```
//!
//! where Linux BBR uses `pacing_rate >> sk_pacing_shift` with a floor of 2 and a cap of 127
//! segments (here the 64 KiB bound is the only cap). The quantum is both
//! what `min_tso_segs` returns to TCP (so skbs carry at least 4 segments, which the Wi-Fi MAC
//! can aggregate) and the unit of the cwnd quantization budget (three quanta, `bbr_tso_segs_goal`
//! in the engine). It is meant to run with a 4 ms TSQ budget (`sk_pacing_shift` 8), a setting
//! of the TCP stack, not of the congestion control. The quantum is the shared
//! [`SendQuantum::Interval`], which `bbrn3` (BBR-n on the v3 engine) uses too.
//!
//! The authors' public patch also changed two BBRv1 constants, which are exposed with the
//! patch's values as defaults, because that patch is the implementation the published
//! measurements come from: `full_bw_thresh` 1.5 (STARTUP continues only while the delivery
//! rate grows by at least 50% per round, so it ends sooner on links whose rate jumps with
//! aggregation size) and `cwnd_min_target` 10 (the floor of cwnd and the cwnd of PROBE_RTT,
//! enough for two 4-segment quanta in flight plus the receiver's delayed-ACK pair). Set them to
//! 1.25 and 4 for BBR-n as the paper's text alone describes it.
//!
//! Source: M. Ahsan, S. S. Muhammad, "TCP BBR-n: Increased throughput for wireless-AC
//! networks", PLoS ONE 18(12): e0295576, 2023, and the authors' public patch; send quantum:
//! draft-cardwell-iccrg-bbr-congestion-control, BBRSetSendQuantum; engine: Linux
//! `net/ipv4/tcp_bbr.c`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{in_range, parse, table, table_schema, Bbr, Knobs, Params as EngineParams, Variant};
use crate::cc::bbr_common::{SendQuantum, TsoRule};
use crate::cc::registry::CcInfo;
use crate::parse::{Dur, Size};
use crate::units::NSEC_PER_MSEC;

/// BBR-n's own parameters: the send quantum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Quantum floor in segments at or above `min_tso_rate` (below it the floor is 1): 4.
    #[schemars(extend("x-unit" = "segments"))]
    pub send_quantum_min_segs: u32,
    /// Time of data at the pacing rate in one quantum: 1 ms.
    pub send_quantum_interval: Dur,
    /// Largest quantum: 64 KiB (65536 bytes).
    pub send_quantum_max: Size,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            send_quantum_min_segs: 4,
            send_quantum_interval: Dur(NSEC_PER_MSEC),
            send_quantum_max: Size(64 * 1024),
        }
    }
}

/// BBR-n's engine defaults: gains 1.5 / 0.9, and the patch's growth threshold and minimum cwnd.
pub fn engine_defaults() -> EngineParams {
    EngineParams {
        probe_bw_up_gain: 1.5,
        probe_bw_down_gain: 0.9,
        full_bw_thresh: 1.5,
        cwnd_min_target: 10,
        ..EngineParams::default()
    }
}

/// The send-quantum hook; the quantum itself is the shared [`SendQuantum::Interval`], which
/// `bbrn3` uses too.
#[derive(Debug, Clone)]
pub struct Quantum {
    min_segs: u32,
    quantum: SendQuantum,
}

impl Quantum {
    pub fn new(p: &Params) -> Result<Self, String> {
        Ok(Quantum {
            quantum: SendQuantum::interval(p.send_quantum_interval, p.send_quantum_max)?,
            min_segs: in_range("send_quantum_min_segs", p.send_quantum_min_segs, 1, 1024)?,
        })
    }
}

impl Variant for Quantum {
    fn tso_rule(&self, k: &Knobs) -> TsoRule {
        TsoRule {
            min_rate: k.min_tso_rate,
            min_segs: self.min_segs,
            quantum: self.quantum,
        }
    }
}

pub const INFO: CcInfo = CcInfo {
    name: "bbrn",
    summary: "BBR-n: BBRv1 with ProbeBW gains 1.5/0.9 and a 1 ms, >= 4 MSS send quantum for Wi-Fi",
    source: "Ahsan & Muhammad, PLoS ONE 18(12) e0295576, 2023, and the authors' patch; engine Linux net/ipv4/tcp_bbr.c",
    defaults: || table::<Params>(&engine_defaults(), &[]),
    schema: || table_schema::<Params>(&[]),
    make: |m| {
        let (engine, own) = parse::<Params>("bbrn", m, &engine_defaults(), &[])?;
        Ok(Box::new(Bbr::new("bbrn", engine.knobs()?, Quantum::new(&own)?)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::bbr::{Mode, BBR_UNIT};
    use crate::sim::Rng;
    use crate::tcp::rate_sample::RateSample;
    use crate::tcp::sock::Sock;
    use serde_json::{json, Map};

    fn quantum() -> (Knobs, Quantum) {
        (
            engine_defaults().knobs().unwrap(),
            Quantum::new(&Params::default()).unwrap(),
        )
    }

    fn sock(pacing_rate: u64) -> Sock {
        let mut tp = Sock::new(1448, 10);
        tp.pacing_rate = pacing_rate;
        tp
    }

    #[test]
    fn gains_and_patch_constants() {
        let k = engine_defaults().knobs().unwrap();
        // 1.5 x 256 = 384; 0.9 x 256 = 230.4 -> 230 (= 256 * 9 / 10); startup 739 as Linux.
        assert_eq!(
            (
                k.cycle_gain(0),
                k.cycle_gain(1),
                k.cycle_gain(2),
                k.cycle_gain(7)
            ),
            (384, 230, 256, 256)
        );
        assert_eq!(k.high_gain, 739);
        assert_eq!(k.full_bw_thresh, BBR_UNIT * 3 / 2);
        assert_eq!(k.cwnd_min_target, 10);
    }

    #[test]
    fn quantum_around_the_low_rate_threshold() {
        let (k, q) = quantum();
        // 1.19 Mbit/s = 148750 B/s < 1.2 Mbit/s = 150000 B/s: base 1; 1 ms of data = 148 B,
        // 0 segments, so the quantum is the base, 1.
        assert_eq!(q.min_tso_segs(&k, &sock(148_750)), 1);
        assert_eq!(q.tso_segs_goal(&k, &sock(148_750)), 1);
        // 1.21 Mbit/s = 151250 B/s: base 4; 151 B is 0 segments: quantum 4.
        assert_eq!(q.min_tso_segs(&k, &sock(151_250)), 4);
        assert_eq!(q.tso_segs_goal(&k, &sock(151_250)), 4);
        // Linux BBR at 1.21 Mbit/s: 151250 >> 10 = 147 B -> 0 segments, floor 2.
        assert_eq!(crate::cc::bbr::tso_segs_goal(&k, &sock(151_250)), 2);
    }

    #[test]
    fn quantum_is_one_millisecond_of_data_up_to_64_kib() {
        let (k, q) = quantum();
        // 80 Mbit/s = 10 MB/s: 10000 B per ms = 6 segments of 1448 (6.9), above the base 4.
        assert_eq!(q.tso_segs_goal(&k, &sock(10_000_000)), 6);
        // 800 Mbit/s: 100000 B per ms, capped at 65536 B = 45 segments (45.26).
        assert_eq!(q.tso_segs_goal(&k, &sock(100_000_000)), 45);
        // Exactly at the cap: 65536 B per ms = 65.536 MB/s -> 45.
        assert_eq!(q.tso_segs_goal(&k, &sock(65_536_000)), 45);
    }

    #[test]
    fn the_quantum_sets_the_cwnd_budget_and_min_tso_segs() {
        let mut cc = (INFO.make)(&Map::new()).unwrap();
        let mut tp = Sock::new(1448, 10);
        let mut rng = Rng::new(1, 1);
        cc.init(&mut tp, &mut rng);
        // Initial pacing rate, no RTT yet: bw = 10 x 2^24 / 1000 us = 167772; rate =
        // (167772 x 1448 x 739 >> 8) x 990000 >> 24 = 41381651 B/s: 41381 B per ms is 28
        // segments, above the base 4.
        assert_eq!(tp.pacing_rate, 41_381_651);
        assert_eq!(cc.min_tso_segs(&tp), Some(4));
        let q = Quantum::new(&Params::default()).unwrap();
        assert_eq!(
            q.tso_segs_goal(&engine_defaults().knobs().unwrap(), &tp),
            28
        );
        // First ACK, srtt = min_rtt = 10 ms: the pacing rate is re-initialised from srtt:
        // bw = 10 x 2^24 / 10000 = 16777, rate = 4138115 B/s, 4138 B per ms = 2 segments, so
        // the quantum is the base 4. The 1-packet sample over 10 ms gives bw = 2^24 / 10000 =
        // 1677; BDP at gain 739 = ceil(1677 x 10000 x 739 / 256 / 2^24) = 3; budget 3 + 3 x 4
        // = 15, rounded up to even: 16. cwnd 10 is below it and grows by the ACKed packet.
        tp.now = 10_000_000;
        tp.delivered = 1;
        tp.delivered_mstamp = tp.now;
        tp.srtt_us = 10_000 << 3;
        tp.min_rtt_us = 10_000;
        let rs = RateSample {
            delivered: 1,
            interval_us: 10_000,
            rtt_us: 10_000,
            acked_sacked: 1,
            ..RateSample::default()
        };
        cc.cong_control(&mut tp, &rs, &mut rng);
        assert_eq!(tp.pacing_rate, 4_138_115);
        let model: std::collections::HashMap<_, _> = cc.model().into_iter().collect();
        assert_eq!(model["mode"], f64::from(Mode::Startup as u8));
        assert_eq!(model["target_cwnd"], 16.0);
        assert_eq!(tp.snd_cwnd, 11);
    }

    #[test]
    fn patch_constants_are_parameters() {
        let mut m = Map::new();
        m.insert("full_bw_thresh".into(), json!(1.25));
        m.insert("cwnd_min_target".into(), json!(4));
        m.insert("send_quantum_min_segs".into(), json!(2));
        assert!((INFO.make)(&m).is_ok());
        let table = (INFO.defaults)();
        assert_eq!(table["full_bw_thresh"], json!(1.5));
        assert_eq!(table["cwnd_min_target"], json!(10));
        assert_eq!(table["send_quantum_max"], json!("65536b"));
        m.insert("send_quantum_interval".into(), json!("1.5us"));
        let err = (INFO.make)(&m).err().unwrap();
        assert!(err.starts_with("parameter send_quantum_interval = \"1500ns\": expected a whole number of microseconds"), "{err}");
    }
}
