//! BBR-PG: BBRv1 with RTT-proportional probing, a time-based bandwidth window and randomised
//! PROBE_RTT, for fairness between flows of different RTTs.
//!
//! Between BBRv1 flows the one with the longer RTT takes more than its share: its cwnd cap
//! (2 x bw x min_rtt) holds more of the shared queue, and its 10-round bandwidth window spans
//! more time. BBR-PG changes three things:
//!
//! 1. The probing gain (PROBE_BW phase 0 only) is multiplied by gamma = rtt / min_rtt, the
//!    queueing the flow currently sees: a flow facing a standing queue probes harder, which
//!    pushes the shares of competing flows toward equality. `rtt` is the latest RTT sample
//!    (`rs.rtt_us`), or the smoothed RTT when the ACK carries none; gamma is recomputed on every
//!    ACK in 1/256 steps (truncated), is at least 1 (a sample below min_rtt is an artefact of an
//!    expired min_rtt, not negative queueing) and at most the optional cap `pg_gamma_max`.
//! 2. The bandwidth max filter spans WIN = T_interval / RTT + 4 rounds, T_interval = 180 ms,
//!    with RTT the current min_rtt estimate (integer division: 22 rounds at 10 ms, 7 at 50 ms),
//!    so every flow remembers its bandwidth for about the same time. WIN is recomputed on every
//!    bandwidth sample, so it follows min_rtt at once; before min_rtt is known it is Linux's
//!    10 rounds.
//! 3. The PROBE_RTT interval (the min_rtt filter window) is drawn uniformly from whole
//!    milliseconds in [5 s, 15 s] at `init` and again each time PROBE_RTT is entered, so that
//!    flows do not synchronise their PROBE_RTTs.
//!
//! Source: Xu, Pan, Tan, Cheng, Li and Li, "A Modified TCP BBR to Enable High Fairness in
//! High-Speed Wireless Networks", Future Internet 16(11), 392, 2024 (section 3); engine: Linux
//! `net/ipv4/tcp_bbr.c`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    in_range, parse, table, table_schema, to_unit, whole, Bbr, Knobs, Params as EngineParams,
    Variant, BBR_UNIT,
};
use crate::cc::registry::CcInfo;
use crate::cc::ModelValue;
use crate::parse::Dur;
use crate::sim::Rng;
use crate::tcp::rate_sample::RateSample;
use crate::tcp::sock::Sock;
use crate::units::{NSEC_PER_MSEC, NSEC_PER_USEC};

/// BBR-PG's own parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Upper bound on gamma; none by default.
    #[schemars(extend("x-unit" = "x"))]
    pub pg_gamma_max: Option<f64>,
    /// Time the bandwidth filter should span: 180 ms (whole microseconds).
    pub pg_t_interval: Dur,
    /// Rounds added to T_interval / RTT: 4.
    #[schemars(extend("x-unit" = "rounds"))]
    pub pg_win_extra_rounds: u32,
    /// Shortest PROBE_RTT interval: 5 s (whole milliseconds).
    pub pg_probe_rtt_interval_min: Dur,
    /// Longest PROBE_RTT interval: 15 s (whole milliseconds).
    pub pg_probe_rtt_interval_max: Dur,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            pg_gamma_max: None,
            pg_t_interval: Dur(180 * NSEC_PER_MSEC),
            pg_win_extra_rounds: 4,
            pg_probe_rtt_interval_min: Dur(5_000 * NSEC_PER_MSEC),
            pg_probe_rtt_interval_max: Dur(15_000 * NSEC_PER_MSEC),
        }
    }
}

/// BBR-PG's state.
#[derive(Debug, Clone)]
pub struct Pg {
    /// gamma in 1/256.
    gamma: u32,
    gamma_max: Option<u32>,
    t_interval_us: u32,
    extra_rounds: u32,
    interval_min_ms: u32,
    interval_max_ms: u32,
    /// The current PROBE_RTT interval (min_rtt window), ms.
    interval_ms: u32,
}

impl Pg {
    pub fn new(p: &Params) -> Result<Self, String> {
        let gamma_max = match p.pg_gamma_max {
            Some(g) if g >= 1.0 => Some(to_unit("pg_gamma_max", g, true)?),
            Some(g) => {
                return Err(format!(
                    "parameter pg_gamma_max = {g}: expected a number of at least 1"
                ))
            }
            None => None,
        };
        let ms = |name, d| whole(name, d, NSEC_PER_MSEC, "milliseconds", 1, i32::MAX as u32);
        let interval_min_ms = ms("pg_probe_rtt_interval_min", p.pg_probe_rtt_interval_min)?;
        let interval_max_ms = ms("pg_probe_rtt_interval_max", p.pg_probe_rtt_interval_max)?;
        if interval_max_ms < interval_min_ms {
            return Err(format!(
                "parameter pg_probe_rtt_interval_max = \"{}ns\": expected at least pg_probe_rtt_interval_min",
                p.pg_probe_rtt_interval_max.0
            ));
        }
        Ok(Pg {
            gamma: BBR_UNIT,
            gamma_max,
            t_interval_us: whole(
                "pg_t_interval",
                p.pg_t_interval,
                NSEC_PER_USEC,
                "microseconds",
                1,
                u32::MAX,
            )?,
            extra_rounds: in_range("pg_win_extra_rounds", p.pg_win_extra_rounds, 0, 1 << 20)?,
            interval_min_ms,
            interval_max_ms,
            interval_ms: interval_min_ms,
        })
    }

    /// A PROBE_RTT interval: uniform over whole milliseconds in [min, max].
    fn draw_interval(&self, rng: &mut Rng) -> u32 {
        rng.range_u64(
            u64::from(self.interval_min_ms),
            u64::from(self.interval_max_ms),
        ) as u32
    }
}

impl Variant for Pg {
    fn cycle_gain(&self, k: &Knobs, idx: u32) -> u32 {
        let gain = k.cycle_gain(idx);
        if idx == 0 {
            ((u64::from(gain) * u64::from(self.gamma)) >> super::BBR_SCALE).min(u64::from(u32::MAX))
                as u32
        } else {
            gain
        }
    }

    fn bw_win_rounds(&self, k: &Knobs, min_rtt_us: u32) -> u32 {
        if min_rtt_us == 0 || min_rtt_us == u32::MAX {
            k.bw_rtts
        } else {
            (self.t_interval_us / min_rtt_us).saturating_add(self.extra_rounds)
        }
    }

    fn min_rtt_win_ms(&self, _k: &Knobs) -> u32 {
        self.interval_ms
    }

    fn init(&mut self, rng: &mut Rng) {
        self.interval_ms = self.draw_interval(rng);
    }

    fn on_probe_rtt(&mut self, rng: &mut Rng) {
        self.interval_ms = self.draw_interval(rng);
    }

    fn on_ack(&mut self, tp: &Sock, rs: &RateSample, min_rtt_us: u32) {
        let rtt = if rs.rtt_us >= 0 {
            u64::try_from(rs.rtt_us).unwrap_or(0)
        } else {
            u64::from(tp.srtt())
        };
        if rtt == 0 || min_rtt_us == 0 || min_rtt_us == u32::MAX {
            self.gamma = BBR_UNIT;
            return;
        }
        let gamma = (rtt * u64::from(BBR_UNIT) / u64::from(min_rtt_us)).max(u64::from(BBR_UNIT));
        let gamma = self.gamma_max.map_or(gamma, |m| gamma.min(u64::from(m)));
        self.gamma = u32::try_from(gamma).unwrap_or(u32::MAX);
    }

    fn model(&self, out: &mut Vec<ModelValue>) {
        out.push(("gamma", f64::from(self.gamma) / f64::from(BBR_UNIT)));
        out.push(("probe_rtt_interval_ms", f64::from(self.interval_ms)));
    }
}

pub const INFO: CcInfo = CcInfo {
    name: "bbr_pg",
    summary:
        "BBR-PG: BBRv1 probing at gain x rtt/min_rtt, a 180 ms bw window, ProbeRTT every 5..15 s",
    source:
        "Xu et al., A Modified TCP BBR to Enable High Fairness in High-Speed Wireless Networks, \
             Future Internet 16(11), 392, 2024, section 3; engine Linux net/ipv4/tcp_bbr.c",
    defaults: || table::<Params>(&EngineParams::default(), &[]),
    schema: || table_schema::<Params>(&[]),
    make: |m| {
        let (engine, own) = parse::<Params>("bbr_pg", m, &EngineParams::default(), &[])?;
        Ok(Box::new(Bbr::new(
            "bbr_pg",
            engine.knobs()?,
            Pg::new(&own)?,
        )))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::bbr::Mode;
    use crate::cc::CongestionControl;
    use crate::tcp::sock::CaState;
    use serde_json::{json, Map};

    fn engine(p: &Params) -> Bbr<Pg> {
        Bbr::new(
            "bbr_pg",
            EngineParams::default().knobs().unwrap(),
            Pg::new(p).unwrap(),
        )
    }

    fn rs_rtt(rtt_us: i64) -> RateSample {
        RateSample {
            rtt_us,
            ..RateSample::default()
        }
    }

    #[test]
    fn gamma_scales_only_the_probing_phase() {
        let mut bbr = engine(&Params::default());
        let tp = Sock::new(1448, 10);
        bbr.mode = Mode::ProbeBw;
        bbr.min_rtt_us = 10_000;
        // rtt 15 ms over min_rtt 10 ms: gamma = 15000 x 256 / 10000 = 384 (1.5).
        bbr.v.on_ack(&tp, &rs_rtt(15_000), bbr.min_rtt_us);
        assert_eq!(bbr.v.gamma, 384);
        // Phase 0: 320 x 384 >> 8 = 480 (1.875); the other phases keep their gains.
        let gains: Vec<u32> = (0..8)
            .map(|i| {
                bbr.cycle_idx = i;
                bbr.update_gains();
                bbr.pacing_gain
            })
            .collect();
        assert_eq!(gains, [480, 192, 256, 256, 256, 256, 256, 256]);
        // The long-term (policer) rate overrides gamma as it overrides every PROBE_BW gain.
        bbr.cycle_idx = 0;
        bbr.lt_use_bw = true;
        bbr.update_gains();
        assert_eq!(bbr.pacing_gain, 256);
    }

    #[test]
    fn gamma_falls_back_to_srtt_and_respects_floor_and_cap() {
        let mut tp = Sock::new(1448, 10);
        tp.srtt_us = 20_000 << 3;
        let mut pg = Pg::new(&Params::default()).unwrap();
        // No RTT sample on this ACK: srtt 20 ms / 10 ms = 512 (2.0).
        pg.on_ack(&tp, &rs_rtt(-1), 10_000);
        assert_eq!(pg.gamma, 512);
        // 12345 us / 10000 us: 12345 x 256 / 10000 = 316.03 -> 316 (truncated).
        pg.on_ack(&tp, &rs_rtt(12_345), 10_000);
        assert_eq!(pg.gamma, 316);
        // A sample below min_rtt gives gamma 1, not less.
        pg.on_ack(&tp, &rs_rtt(9_000), 10_000);
        assert_eq!(pg.gamma, 256);
        // Cap 1.2 = 307/256: 1.5 is cut to 307; the probing gain is 320 x 307 >> 8 = 383.
        let mut capped = Pg::new(&Params {
            pg_gamma_max: Some(1.2),
            ..Params::default()
        })
        .unwrap();
        capped.on_ack(&tp, &rs_rtt(15_000), 10_000);
        assert_eq!(capped.gamma, 307);
        assert_eq!(
            capped.cycle_gain(&EngineParams::default().knobs().unwrap(), 0),
            383
        );
        // Unknown min_rtt: gamma 1.
        pg.on_ack(&tp, &rs_rtt(15_000), u32::MAX);
        assert_eq!(pg.gamma, 256);
    }

    #[test]
    fn bandwidth_window_in_rounds() {
        let k = EngineParams::default().knobs().unwrap();
        let pg = Pg::new(&Params::default()).unwrap();
        // 180 ms / 10 ms + 4 = 22; 180 ms / 50 ms = 3 (3.6 truncated) + 4 = 7; unknown: 10.
        assert_eq!(pg.bw_win_rounds(&k, 10_000), 22);
        assert_eq!(pg.bw_win_rounds(&k, 50_000), 7);
        assert_eq!(pg.bw_win_rounds(&k, u32::MAX), 10);
    }

    #[test]
    fn the_engine_forgets_a_bandwidth_peak_after_win_rounds() {
        // min_rtt 50 ms: WIN = 7 rounds. One sample per round: a peak of 100 packets per
        // 10 ms in round 1, then 50 per 10 ms. The max filter keeps the peak while it is at
        // most 7 rounds old (through round 8) and drops it in round 9; Linux's 10-round window
        // keeps it through round 11.
        let run = |linux: bool| -> Vec<u32> {
            let mut bbr = engine(&Params::default());
            let mut tp = Sock::new(1448, 10);
            let mut rng = Rng::new(1, 1);
            bbr.init(&mut tp, &mut rng);
            bbr.min_rtt_us = if linux { u32::MAX } else { 50_000 };
            (1..=12)
                .map(|round| {
                    let delivered = if round == 1 { 100 } else { 50 };
                    let rs = RateSample {
                        prior_delivered: tp.delivered,
                        delivered,
                        interval_us: 10_000,
                        ..RateSample::default()
                    };
                    tp.delivered += delivered as u64;
                    bbr.update_bw(&tp, &rs, &mut rng);
                    bbr.max_bw()
                })
                .collect()
        };
        let peak = 100 * (1 << 24) / 10_000;
        let low = 50 * (1 << 24) / 10_000;
        let mut pg = vec![peak; 8];
        pg.extend([low; 4]);
        assert_eq!(run(false), pg);
        let mut linux = vec![peak; 11];
        linux.push(low);
        assert_eq!(run(true), linux);
    }

    #[test]
    fn probe_rtt_intervals_are_uniform_on_5_to_15_s() {
        // 20000 draws in 10 bins of 1 s (the last also holds 15000 ms: 1001 of the 10001
        // values, a tenth of a bin more): chi-square against the exact bin probabilities,
        // df = 9, must stay below 27.88 (p = 0.001); Kolmogorov-Smirnov distance below
        // 1.95 / sqrt(20000) = 0.0138 (p = 0.001).
        let pg = Pg::new(&Params::default()).unwrap();
        let mut rng = Rng::new(2024, 7);
        let n = 20_000;
        let draws: Vec<u32> = (0..n).map(|_| pg.draw_interval(&mut rng)).collect();
        assert!(draws.iter().all(|&d| (5_000..=15_000).contains(&d)));
        let mut bins = [0u32; 10];
        for &d in &draws {
            bins[(((d - 5_000) / 1_000) as usize).min(9)] += 1;
        }
        let chi2: f64 = bins
            .iter()
            .enumerate()
            .map(|(i, &o)| {
                let values = if i == 9 { 1001.0 } else { 1000.0 };
                let e = f64::from(n) * values / 10_001.0;
                (f64::from(o) - e).powi(2) / e
            })
            .sum();
        assert!(chi2 < 27.88, "chi-square {chi2}, bins {bins:?}");
        let mut sorted = draws.clone();
        sorted.sort_unstable();
        let d_max = sorted
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let cdf = f64::from(x - 5_000 + 1) / 10_001.0;
                let lo = i as f64 / f64::from(n);
                let hi = (i + 1) as f64 / f64::from(n);
                (cdf - lo).abs().max((hi - cdf).abs())
            })
            .fold(0.0, f64::max);
        assert!(d_max < 0.0138, "KS distance {d_max}");
    }

    #[test]
    fn probe_rtt_comes_after_the_drawn_interval_and_redraws_it() {
        let mut bbr = engine(&Params::default());
        let mut tp = Sock::new(1448, 10);
        let mut rng = Rng::new(9, 9);
        let mut expect = rng.clone();
        bbr.init(&mut tp, &mut rng);
        // init draws two u32 for the event stream, then the interval.
        expect.next_u32();
        expect.next_u32();
        let first = expect.range_u64(5_000, 15_000) as u32;
        assert_eq!(bbr.v.interval_ms, first);
        bbr.min_rtt_us = 10_000;
        bbr.full_bw_reached = true;
        bbr.mode = Mode::ProbeBw;
        tp.ca_state = CaState::Open;
        // ACKs with an RTT above min_rtt: the filter expires once jiffies > stamp + interval.
        let ack = |bbr: &mut Bbr<Pg>, tp: &mut Sock, rng: &mut Rng, ms: u64| {
            tp.now = ms * NSEC_PER_MSEC;
            bbr.update_min_rtt(tp, &rs_rtt(12_000), rng);
        };
        ack(&mut bbr, &mut tp, &mut rng, u64::from(first));
        assert_eq!(bbr.mode, Mode::ProbeBw);
        let mut expect = rng.clone();
        ack(&mut bbr, &mut tp, &mut rng, u64::from(first) + 1);
        assert_eq!(bbr.mode, Mode::ProbeRtt);
        assert_eq!(bbr.v.interval_ms, expect.range_u64(5_000, 15_000) as u32);
        let model: std::collections::HashMap<_, _> = bbr.model().into_iter().collect();
        assert_eq!(model["probe_rtt_interval_ms"], f64::from(bbr.v.interval_ms));
        assert_eq!(model["gamma"], 1.0);
    }

    #[test]
    fn parameters() {
        let table = (INFO.defaults)();
        assert_eq!(table["pg_gamma_max"], json!(null));
        assert_eq!(table["pg_t_interval"], json!("180000000ns"));
        let mut m = Map::new();
        m.insert("pg_gamma_max".into(), json!(0.5));
        assert_eq!(
            (INFO.make)(&m).err().unwrap(),
            "parameter pg_gamma_max = 0.5: expected a number of at least 1"
        );
        m.insert("pg_gamma_max".into(), json!(2));
        m.insert("pg_probe_rtt_interval_min".into(), json!("20s"));
        let err = (INFO.make)(&m).err().unwrap();
        assert!(
            err.starts_with("parameter pg_probe_rtt_interval_max"),
            "{err}"
        );
    }
}
