//! BBR-APG: BBRv1 with a PROBE_BW cycle whose length adapts to how stable the path is.
//!
//! Linux BBR probes once every 8 phases (about 8 min_rtt). On cellular and Wi-Fi links whose
//! capacity changes quickly that is too slow to follow a rising rate; on a stable path it is
//! more often than needed. BBR-APG keeps the cycle shape {probe gain, drain gain, 1 x (len - 2)}
//! and varies `len`. On each evaluation it compares the path's BDP = bw x min_rtt with the BDP
//! at the previous evaluation:
//!
//! ```text
//! |BDP - prev| > tolerance x prev   ->  len = max(len_min, len - stride)   (changing: probe sooner)
//! otherwise                         ->  len = min(len_max, len + stride)   (stable: probe less)
//! ```
//!
//! with tolerance 1/4, stride 4, bounds 4 and 16, and `len` starting at 8 (Linux's cycle). The
//! first evaluation only records the BDP. The BDP is compared unrounded, in the engine's fixed
//! point (packets << 24), and the tolerance in 1/256 steps like every BBR ratio.
//!
//! When to evaluate is a parameter: `once_per_cycle` evaluates whenever a cycle starts (the
//! phase wraps to 0, so the new length applies to that cycle), as the algorithm is described;
//! `every_cwnd_update` evaluates after every cwnd computation (every ACK, in every mode, once
//! min_rtt is known), as the authors' kernel module does. The random start phase on entering
//! PROBE_BW is drawn over the `len - 1` phases of the current cycle other than the draining one.
//! A phase index at or beyond a shortened cycle's end wraps to 0 at the next phase change.
//!
//! Source: Zlomek, Brisson, Prabakaran and Wang, "Adaptive Low-Latency Communication Control for
//! Wireless Communications", EECS 557 project report, 2023, Algorithm 1 (cycle {probe, drain,
//! 1 x (len - 2)}, the |BDP - prev| > prev/4 rule, bounds 4..16, stride 4); engine: Linux
//! `net/ipv4/tcp_bbr.c`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    in_range, parse, table, table_schema, to_unit, Bbr, Knobs, Params as EngineParams, Variant,
    BBR_UNIT,
};
use crate::cc::registry::CcInfo;
use crate::cc::ModelValue;

/// Engine knob replaced by `apg_len_init`.
const DERIVED: &[&str] = &["cycle_len"];
/// Longest cycle a parameter may ask for.
const LEN_LIMIT: u32 = 1024;

/// When the cycle length is re-evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Eval {
    /// At the start of every PROBE_BW cycle.
    OncePerCycle,
    /// After every cwnd computation (the authors' module).
    EveryCwndUpdate,
}

/// BBR-APG's own parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Cycle length at the start: 8 (Linux's `CYCLE_LEN`).
    #[schemars(extend("x-unit" = "phases"))]
    pub apg_len_init: u32,
    /// Shortest cycle: 4.
    #[schemars(extend("x-unit" = "phases"))]
    pub apg_len_min: u32,
    /// Longest cycle: 16.
    #[schemars(extend("x-unit" = "phases"))]
    pub apg_len_max: u32,
    /// Change of length per evaluation: 4.
    #[schemars(extend("x-unit" = "phases"))]
    pub apg_stride: u32,
    /// Relative BDP change above which the path counts as changing: 0.25.
    #[schemars(extend("x-unit" = "fraction"))]
    pub apg_tolerance: f64,
    /// When to evaluate: `once_per_cycle` (default) or `every_cwnd_update`.
    pub apg_eval: Eval,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            apg_len_init: 8,
            apg_len_min: 4,
            apg_len_max: 16,
            apg_stride: 4,
            apg_tolerance: 0.25,
            apg_eval: Eval::OncePerCycle,
        }
    }
}

/// The adaptive cycle length.
#[derive(Debug, Clone)]
pub struct Apg {
    len: u32,
    min: u32,
    max: u32,
    stride: u32,
    /// Tolerance in 1/256.
    tolerance: u32,
    eval: Eval,
    prev_bdp: Option<u64>,
}

impl Apg {
    pub fn new(p: &Params) -> Result<Self, String> {
        let min = in_range("apg_len_min", p.apg_len_min, 2, LEN_LIMIT)?;
        let max = in_range("apg_len_max", p.apg_len_max, min, LEN_LIMIT)?;
        Ok(Apg {
            len: in_range("apg_len_init", p.apg_len_init, min, max)?,
            min,
            max,
            stride: in_range("apg_stride", p.apg_stride, 1, LEN_LIMIT)?,
            tolerance: to_unit("apg_tolerance", p.apg_tolerance, false)?,
            eval: p.apg_eval,
            prev_bdp: None,
        })
    }

    /// One evaluation with the current BDP (packets << BW_SCALE).
    fn evaluate(&mut self, bdp: u64) {
        if let Some(prev) = self.prev_bdp {
            let changed = u128::from(bdp.abs_diff(prev)) * u128::from(BBR_UNIT)
                > u128::from(prev) * u128::from(self.tolerance);
            self.len = if changed {
                self.len.saturating_sub(self.stride).max(self.min)
            } else {
                (self.len + self.stride).min(self.max)
            };
        }
        self.prev_bdp = Some(bdp);
    }
}

impl Variant for Apg {
    fn cycle_len(&self, _k: &Knobs) -> u32 {
        self.len
    }

    fn on_cycle_start(&mut self, bdp: Option<u64>) {
        if let (Eval::OncePerCycle, Some(b)) = (self.eval, bdp) {
            self.evaluate(b);
        }
    }

    fn on_cwnd_update(&mut self, bdp: Option<u64>) {
        if let (Eval::EveryCwndUpdate, Some(b)) = (self.eval, bdp) {
            self.evaluate(b);
        }
    }

    fn model(&self, out: &mut Vec<ModelValue>) {
        let prev = self
            .prev_bdp
            .map_or(f64::NAN, |b| b as f64 / super::BW_UNIT as f64);
        out.push(("apg_prev_bdp", prev));
    }
}

pub const INFO: CcInfo = CcInfo {
    name: "bbr_apg",
    summary: "BBR-APG: BBRv1 whose ProbeBW cycle length (4..16) adapts to BDP changes",
    source: "Zlomek et al., Adaptive Low-Latency Communication Control for Wireless \
             Communications (BBR-APG), EECS 557 report, 2023, Algorithm 1; engine Linux \
             net/ipv4/tcp_bbr.c",
    defaults: || table::<Params>(&EngineParams::default(), DERIVED),
    schema: || table_schema::<Params>(DERIVED),
    make: |m| {
        let (engine, own) = parse::<Params>("bbr_apg", m, &EngineParams::default(), DERIVED)?;
        let apg = Apg::new(&own)?;
        let knobs = EngineParams {
            cycle_len: own.apg_len_init,
            ..engine
        }
        .knobs()?;
        Ok(Box::new(Bbr::new("bbr_apg", knobs, apg)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::bbr::Mode;
    use crate::sim::Rng;
    use crate::tcp::sock::Sock;
    use serde_json::{json, Map};

    fn apg(eval: Eval) -> Apg {
        Apg::new(&Params {
            apg_eval: eval,
            ..Params::default()
        })
        .unwrap()
    }

    /// BDPs in packets, scaled as the engine passes them.
    fn scaled(pkts: u64) -> Option<u64> {
        Some(pkts << 24)
    }

    #[test]
    fn cycle_length_follows_the_bdp_trajectory_once_per_cycle() {
        // BDP per cycle start, and the expected length after each evaluation:
        //   100: first, recorded only                      len 8
        //   110: |10| <= 25 (100/4)       stable           len 12
        //   120: |10| <= 27.5             stable           len 16
        //   125: stable, already at the upper bound        len 16
        //   200: |75| > 31.25             changing         len 12
        //   100: |100| > 50               changing         len 8
        //    50: |50| > 25                changing         len 4
        //    60: |10| <= 12.5             stable           len 8
        //    75: |15| = 15 is not > 15    stable           len 12
        //   100: |25| > 18.75             changing         len 8
        let mut a = apg(Eval::OncePerCycle);
        let trajectory = [100, 110, 120, 125, 200, 100, 50, 60, 75, 100];
        let lens: Vec<u32> = trajectory
            .iter()
            .map(|&b| {
                a.on_cycle_start(scaled(b));
                a.cycle_len(&EngineParams::default().knobs().unwrap())
            })
            .collect();
        assert_eq!(lens, [8, 12, 16, 16, 12, 8, 4, 8, 12, 8]);
        // In this mode cwnd updates do not evaluate.
        a.on_cwnd_update(scaled(1000));
        assert_eq!(a.len, 8);
    }

    #[test]
    fn cycle_length_follows_the_bdp_trajectory_on_every_cwnd_update() {
        // Per-ACK BDPs: a steady path lengthens the cycle to 16 within 2 ACKs; a drop by a
        // third (90 -> 60: 30 > 22.5) shortens it, as does the rise back (60 -> 90).
        let mut a = apg(Eval::EveryCwndUpdate);
        let k = EngineParams::default().knobs().unwrap();
        let lens: Vec<u32> = [90, 90, 90, 90, 60, 60, 90, 90]
            .iter()
            .map(|&b| {
                a.on_cwnd_update(scaled(b));
                a.cycle_len(&k)
            })
            .collect();
        assert_eq!(lens, [8, 12, 16, 16, 12, 16, 12, 16]);
        // Cycle starts do not evaluate in this mode; an unknown BDP never does.
        a.on_cycle_start(scaled(1));
        a.on_cwnd_update(None);
        assert_eq!(a.len, 16);
    }

    #[test]
    fn the_engine_cycles_through_the_current_length() {
        // A cycle of 4 phases is {up, down, 1, 1}: from phase 3 the next phase is 0.
        let p = Params {
            apg_len_init: 4,
            apg_len_min: 4,
            apg_len_max: 4,
            ..Params::default()
        };
        let k = EngineParams {
            cycle_len: 4,
            ..EngineParams::default()
        }
        .knobs()
        .unwrap();
        let mut bbr = Bbr::new("bbr_apg", k.clone(), Apg::new(&p).unwrap());
        let mut tp = Sock::new(1448, 10);
        bbr.mode = Mode::ProbeBw;
        bbr.cycle_idx = 3;
        bbr.advance_cycle_phase(&tp);
        assert_eq!(bbr.cycle_idx, 0);
        let gains: Vec<u32> = (0..4).map(|i| bbr.v.cycle_gain(&k, i)).collect();
        assert_eq!(gains, [320, 192, 256, 256]);
        // The random start is drawn over len - 1 = 3 phases: start index 3 - {0,1,2} = 1..=3,
        // then one advance: phases {2, 3, 0}, never 1.
        let mut rng = Rng::new(5, 5);
        let mut seen = [false; 4];
        for _ in 0..200 {
            bbr.reset_probe_bw_mode(&tp, &mut rng);
            seen[bbr.cycle_idx as usize] = true;
        }
        assert_eq!(seen, [true, false, true, true]);
        // An index left beyond a shortened cycle wraps to 0.
        bbr.cycle_idx = 9;
        tp.delivered_mstamp = 1_000_000;
        bbr.advance_cycle_phase(&tp);
        assert_eq!((bbr.cycle_idx, bbr.cycle_mstamp), (0, 1000));
    }

    #[test]
    fn once_per_cycle_evaluates_when_the_phase_wraps_in_the_engine() {
        // ProbeBW with bw 2^24 / 100 (0.01 pkt/us) and min_rtt 10 ms: BDP = 100 packets.
        let k = EngineParams::default().knobs().unwrap();
        let mut bbr = Bbr::new("bbr_apg", k, apg(Eval::OncePerCycle));
        let tp = Sock::new(1448, 10);
        bbr.mode = Mode::ProbeBw;
        bbr.min_rtt_us = 10_000;
        bbr.bw.reset(0, (1 << 24) / 100);
        bbr.cycle_idx = 7;
        bbr.advance_cycle_phase(&tp); // first evaluation: recorded
        assert_eq!(bbr.v.prev_bdp, Some(167_772 * 10_000));
        bbr.cycle_idx = 7;
        bbr.advance_cycle_phase(&tp); // same BDP: stable
        assert_eq!(bbr.v.len, 12);
        bbr.cycle_idx = 3;
        bbr.advance_cycle_phase(&tp); // not a wrap: no evaluation
        assert_eq!((bbr.cycle_idx, bbr.v.len), (4, 12));
    }

    #[test]
    fn parameters() {
        let table = (INFO.defaults)();
        assert_eq!(table["apg_eval"], json!("once_per_cycle"));
        assert_eq!(table["apg_len_init"], json!(8));
        assert!(table.get("cycle_len").is_none());
        let mut m = Map::new();
        m.insert("apg_eval".into(), json!("every_cwnd_update"));
        m.insert("apg_len_init".into(), json!(12));
        assert!((INFO.make)(&m).is_ok());
        m.insert("apg_len_init".into(), json!(20));
        assert_eq!(
            (INFO.make)(&m).err().unwrap(),
            "parameter apg_len_init = 20: expected an integer from 4 to 16"
        );
        m.insert("apg_len_init".into(), json!(8));
        m.insert("apg_eval".into(), json!("sometimes"));
        let err = (INFO.make)(&m).err().unwrap();
        assert!(
            err.starts_with("parameter apg_eval = \"sometimes\": unknown variant"),
            "{err}"
        );
    }
}
