//! BBRp: BBRv1 with a stronger probing phase for Wi-Fi.
//!
//! On Wi-Fi the sender's own stack (TSQ, pacing) keeps too little data queued below TCP for the
//! access point or station to build large A-MPDU aggregates, so BBR's 5/4 probing phase rarely
//! finds more bandwidth. BBRp raises the pacing gain of the first PROBE_BW phase to
//! `bbrp_pace / 4` (default 6, a gain of 1.5) and changes nothing else: the phase still lasts
//! at least min_rtt and until inflight reaches that gain times the BDP (or a loss), the draining
//! phase stays at 3/4, and the two extra segments `bbr_quantization_budget` grants in phase 0
//! apply to this probing phase, since the kernel grants them by phase index, not by gain.
//! `bbrp_pace = 5` is Linux BBR exactly.
//!
//! Source: C. A. Grazia et al., "BBRp: Improving TCP BBR Performance over WLAN", IEEE Access 8,
//! 2020 (first published as "BBR+: Improving TCP BBR Performance over WLAN", C. A. Grazia,
//! N. Patriciello, M. Klapez, M. Casoni, IEEE ICC 2020); engine: Linux `net/ipv4/tcp_bbr.c`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{parse, table, table_schema, to_unit, Bbr, Linux, Params as EngineParams};
use crate::cc::registry::CcInfo;

/// Engine knob that `bbrp_pace` sets.
const DERIVED: &[&str] = &["probe_bw_up_gain"];

/// BBRp's own parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// First PROBE_BW pacing gain in quarters: the gain is `bbrp_pace / 4`. Default 6 (1.5),
    /// the value of the BBRp paper; 5 is Linux BBR.
    #[schemars(extend("x-unit" = "1/4"))]
    pub bbrp_pace: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { bbrp_pace: 6 }
    }
}

/// The engine parameters of BBRp with `pace`: Linux defaults with the probing gain pace/4.
pub fn engine_params(base: &EngineParams, pace: u32) -> EngineParams {
    EngineParams {
        probe_bw_up_gain: f64::from(pace) / 4.0,
        ..base.clone()
    }
}

pub const INFO: CcInfo = CcInfo {
    name: "bbrp",
    summary: "BBRp: BBRv1 whose probing pacing gain is bbrp_pace/4 (1.5) for Wi-Fi aggregation",
    source: "Grazia et al., IEEE Access 8, 2020; engine Linux net/ipv4/tcp_bbr.c",
    defaults: || table::<Params>(&EngineParams::default(), DERIVED),
    schema: || table_schema::<Params>(DERIVED),
    make: |m| {
        let (engine, own) = parse::<Params>("bbrp", m, &EngineParams::default(), DERIVED)?;
        let gain = f64::from(own.bbrp_pace) / 4.0;
        to_unit("bbrp_pace", gain, true).map_err(|_| {
            format!(
                "parameter bbrp_pace = {}: expected an integer from 1 to 256",
                own.bbrp_pace
            )
        })?;
        let knobs = engine_params(&engine, own.bbrp_pace).knobs()?;
        Ok(Box::new(Bbr::new("bbrp", knobs, Linux)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::bbr::testnet::Path;
    use crate::cc::bbr::BBR_UNIT;
    use crate::cc::CongestionControl;
    use crate::units::NSEC_PER_MSEC;
    use serde_json::{json, Map};

    fn build(pace: Option<u32>) -> Box<dyn CongestionControl> {
        let mut m = Map::new();
        if let Some(p) = pace {
            m.insert("bbrp_pace".into(), json!(p));
        }
        (INFO.make)(&m).unwrap()
    }

    #[test]
    fn the_probing_gain_is_pace_quarters() {
        // 6/4 = 1.5 = 384/256; 5/4 = 320/256 (Linux); 8/4 = 512/256.
        let base = EngineParams::default();
        for (pace, units) in [(6, 384), (5, 320), (8, 512)] {
            let k = engine_params(&base, pace).knobs().unwrap();
            assert_eq!(k.up_gain, units);
            assert_eq!(k.cycle_gain(0), units);
            assert_eq!(k.cycle_gain(1), BBR_UNIT * 3 / 4);
            assert_eq!(k.cycle_gain(2), BBR_UNIT);
        }
    }

    #[test]
    fn pace_five_is_linux_bbr_step_for_step() {
        // Same path, same seed: bbr and bbrp with bbrp_pace = 5 must produce the same
        // (cwnd, pacing rate) after every ACK for 25 s (startup, drain, gain cycling, two
        // PROBE_RTTs), while bbrp with the default pace 6 must not.
        let trace = |cc: &mut dyn CongestionControl| {
            let mut path = Path::new(12_000_000, 40 * NSEC_PER_MSEC, 3);
            path.start(cc);
            let mut out = Vec::new();
            path.run(cc, 25_000 * NSEC_PER_MSEC, |tp, _| {
                out.push((tp.snd_cwnd, tp.pacing_rate))
            });
            out
        };
        let bbr = trace(&mut *(crate::cc::bbr::INFO.make)(&Map::new()).unwrap());
        let bbrp5 = trace(&mut *build(Some(5)));
        let bbrp6 = trace(&mut *build(None));
        assert!(bbr.len() > 20_000, "{} ACKs", bbr.len());
        assert_eq!(bbr, bbrp5);
        assert_ne!(bbr, bbrp6);
    }

    #[test]
    fn the_probing_gain_is_set_only_through_bbrp_pace() {
        let mut m = Map::new();
        m.insert("probe_bw_up_gain".into(), json!(1.5));
        let err = (INFO.make)(&m).err().unwrap();
        assert!(
            err.starts_with("parameter probe_bw_up_gain = 1.5: not a parameter of bbrp"),
            "{err}"
        );
        let table = (INFO.defaults)();
        assert_eq!(table["bbrp_pace"], json!(6));
        assert!(table.get("probe_bw_up_gain").is_none());
        assert_eq!(table["probe_bw_down_gain"], json!(0.75));
        let mut m = Map::new();
        m.insert("bbrp_pace".into(), json!(0));
        let err = (INFO.make)(&m).err().unwrap();
        assert_eq!(
            err,
            "parameter bbrp_pace = 0: expected an integer from 1 to 256"
        );
    }
}
