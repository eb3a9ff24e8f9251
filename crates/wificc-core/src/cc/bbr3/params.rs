//! Parameters of the BBRv2/v3 engine: the serde table a scenario sets, the defaults of each
//! registered variant, and their validation into the kernel's fixed-point units.
//!
//! Gains and fractions are written as decimals and stored as the kernel stores them: in units of
//! 1/256 (`BBR_UNIT`), rounded to the nearest unit. The defaults are the kernel's own integer
//! values written exactly (for example v3's startup gain is `BBR_UNIT * 277 / 100 + 1` = 710, so
//! the default is 710/256 = 2.7734375, not 2.77), so the defaults reproduce the kernel bit for
//! bit. Durations use the scenario duration syntax ("5s", "200ms") and are truncated to the
//! kernel's resolution: milliseconds (jiffies at HZ=1000) for the min-RTT and ProbeRTT timers,
//! microseconds for the others.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::cc::bbr_common::{in_range as count, SendQuantum, BBR_UNIT};
use crate::parse::{Dur, Rate, Size};
use crate::units::{NSEC_PER_MSEC, NSEC_PER_USEC};

/// Which release of the algorithm the engine follows where their logic (not just their
/// constants) differs; the list of differences is in the engine's module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    /// google/bbr `v2alpha` branch, net/ipv4/tcp_bbr2.c.
    V2,
    /// google/bbr `v3` branch, net/ipv4/tcp_bbr.c.
    V3,
}

/// Every constant of the engine. Defaults differ per registered name: see [`Params::bbr2`],
/// [`Params::bbr3`] and [`Params::bbrn3`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Logic version: "v2" or "v3".
    pub version: Version,
    /// STARTUP pacing gain (v2 `bbr_high_gain` 2/ln2 = 739/256; v3
    /// `bbr_startup_pacing_gain` 4 ln2 = 710/256).
    #[schemars(extend("x-unit" = "x"))]
    pub startup_pacing_gain: f64,
    /// STARTUP and DRAIN cwnd gain (v2 739/256; v3 2.0).
    #[schemars(extend("x-unit" = "x"))]
    pub startup_cwnd_gain: f64,
    /// DRAIN pacing gain, 1/2.885 = 88/256 in both.
    #[schemars(extend("x-unit" = "x"))]
    pub drain_gain: f64,
    /// ProbeBW cwnd gain, 2.0 in both.
    #[schemars(extend("x-unit" = "x"))]
    pub cwnd_gain: f64,
    /// ProbeBW UP pacing gain, 5/4 in both.
    #[schemars(extend("x-unit" = "x"))]
    pub probe_up_gain: f64,
    /// ProbeBW DOWN pacing gain (v2 3/4; v3 `BBR_UNIT * 91 / 100` = 232/256; the IETF draft
    /// writes 0.9).
    #[schemars(extend("x-unit" = "x"))]
    pub probe_down_gain: f64,
    /// ProbeBW CRUISE pacing gain, 1.0.
    #[schemars(extend("x-unit" = "x"))]
    pub probe_cruise_gain: f64,
    /// ProbeBW REFILL pacing gain, 1.0.
    #[schemars(extend("x-unit" = "x"))]
    pub probe_refill_gain: f64,
    /// Added to `cwnd_gain` during ProbeBW UP (v3 `bbr_bw_probe_cwnd_gain` 1 quarter = 0.25;
    /// v2 has none: 0).
    #[schemars(extend("x-unit" = "x"))]
    pub probe_up_cwnd_gain: f64,
    /// v2 only: UP ends once inflight reaches this multiple of the BDP after one min_rtt
    /// (`bbr_bw_probe_pif_gain` 5/4).
    #[schemars(extend("x-unit" = "x"))]
    pub probe_up_inflight_gain: f64,
    /// Bandwidth growth that counts as "still growing" (`bbr_full_bw_thresh` 5/4).
    #[schemars(extend("x-unit" = "x"))]
    pub full_bw_thresh: f64,
    /// Rounds without such growth before the pipe is deemed full (`bbr_full_bw_cnt` 3).
    #[schemars(extend("x-unit" = "rounds"))]
    pub full_bw_cnt: u32,
    /// Loss-marking events in one recovery round that (with loss above `loss_thresh`) end
    /// STARTUP (`bbr_full_loss_cnt`: v2 8, v3 6; 0 disables; at most 15).
    #[schemars(extend("x-unit" = "count"))]
    pub full_loss_cnt: u32,
    /// Consecutive rounds with CE ratio above `ecn_thresh` that end STARTUP
    /// (`bbr_full_ecn_cnt` 2; 0 disables; at most 3).
    #[schemars(extend("x-unit" = "rounds"))]
    pub full_ecn_cnt: u32,
    /// Smallest cwnd the engine sets, packets (`bbr_cwnd_min_target` 4).
    #[schemars(extend("x-unit" = "packets"))]
    pub cwnd_min_target: u32,
    /// ProbeRTT cwnd as a fraction of the BDP (`bbr_probe_rtt_cwnd_gain` 1/2; 0 means
    /// `cwnd_min_target`).
    #[schemars(extend("x-unit" = "x"))]
    pub probe_rtt_cwnd_gain: f64,
    /// Time without a lower RTT sample after which ProbeRTT starts (`bbr_probe_rtt_win_ms`
    /// 5 s); at most `min_rtt_window`.
    pub probe_rtt_interval: Dur,
    /// Time spent at the ProbeRTT cwnd, also at least one round (`bbr_probe_rtt_mode_ms`
    /// 200 ms; 0 disables ProbeRTT).
    pub probe_rtt_duration: Dur,
    /// Window of the min_rtt filter (`bbr_min_rtt_win_sec` 10 s).
    pub min_rtt_window: Dur,
    /// Multiplicative cut of bw_lo/inflight_lo per lossy round and of inflight_hi on
    /// excessive loss (`bbr_beta` 30% = 76/256).
    #[schemars(extend("x-unit" = "fraction"))]
    pub beta: f64,
    /// Loss rate of a probing flight above which inflight is "too high" (`bbr_loss_thresh`
    /// 2% = 5/256); below 1.
    #[schemars(extend("x-unit" = "fraction"))]
    pub loss_thresh: f64,
    /// Headroom left below inflight_hi when cruising (`bbr_inflight_headroom` 15% = 38/256).
    #[schemars(extend("x-unit" = "fraction"))]
    pub inflight_headroom: f64,
    /// Use ECN as a congestion signal. v2: the module switch `bbr_ecn_enable` (off). v3: the
    /// route's shallow-threshold ECN flag (`TCP_ECN_LOW`, off), which also needs ECN
    /// negotiated on the connection.
    pub ecn_enable: bool,
    /// EWMA gain of the CE-marked fraction (`bbr_ecn_alpha_gain` 1/16).
    #[schemars(extend("x-unit" = "fraction"))]
    pub ecn_alpha_gain: f64,
    /// Initial ecn_alpha (`bbr_ecn_alpha_init` 1.0).
    #[schemars(extend("x-unit" = "fraction"))]
    pub ecn_alpha_init: f64,
    /// inflight_lo is cut to (1 - ecn_factor x alpha) per marked round (`bbr_ecn_factor`
    /// 1/3 = 85/256; 0 disables the ECN response).
    #[schemars(extend("x-unit" = "fraction"))]
    pub ecn_factor: f64,
    /// CE fraction of a round above which inflight is "too high" (`bbr_ecn_thresh` 1/2).
    #[schemars(extend("x-unit" = "fraction"))]
    pub ecn_thresh: f64,
    /// ECN is used only on paths with min_rtt at most this (`bbr_ecn_max_rtt_us` 5 ms; 0 means
    /// any RTT).
    pub ecn_max_rtt: Dur,
    /// After a cycle with CE marks but no loss, re-probe at once with a first step of this
    /// fraction of inflight_hi (`bbr_ecn_reprobe_gain`: v2 0 = off, v3 1/2).
    #[schemars(extend("x-unit" = "fraction"))]
    pub ecn_reprobe_gain: f64,
    /// Also cut bw_lo on ECN (v2 `bbr_ecn_bw_lo` on; v3 has no such cut: off).
    pub ecn_bw_lo: bool,
    /// Cut a separate bw_hi bound on ECN when a probe's samples were all too high (v2
    /// `bbr_ecn_bw_hi` on; v3 has no such bound: off).
    pub ecn_bw_hi: bool,
    /// Reno-coexistence probe interval in rounds as a multiple of the target inflight
    /// (`bbr_bw_probe_reno_gain` 1.0; 0 disables).
    #[schemars(extend("x-unit" = "x"))]
    pub bw_probe_reno_gain: f64,
    /// Upper bound of that interval, rounds (`bbr_bw_probe_max_rounds` 63; at most 255).
    #[schemars(extend("x-unit" = "rounds"))]
    pub bw_probe_max_rounds: u32,
    /// The round counter starts at a random value below this (`bbr_bw_probe_rand_rounds` 2).
    #[schemars(extend("x-unit" = "rounds"))]
    pub bw_probe_rand_rounds: u32,
    /// Wall-clock probe interval: base (`bbr_bw_probe_base_us` 2 s) ...
    pub bw_probe_base: Dur,
    /// ... plus a uniform random part below this (`bbr_bw_probe_rand_us` 1 s).
    pub bw_probe_rand: Dur,
    /// Packets added to inflight_hi on entering REFILL (v2 `bbr_refill_add_inc` 0; at most 3).
    #[schemars(extend("x-unit" = "packets"))]
    pub refill_add_inc: u32,
    /// DOWN lasts until inflight is at most the BDP (on), rather than also ending after one
    /// min_rtt (off) (v2 `bbr_drain_to_target` on; v3 always on).
    pub drain_to_target: bool,
    /// Gain on the ACK-aggregation allowance added to the target cwnd (`bbr_extra_acked_gain`
    /// 1.0; 0 disables).
    #[schemars(extend("x-unit" = "x"))]
    pub extra_acked_gain: f64,
    /// Window of the extra_acked max filter, rounds (`bbr_extra_acked_win_rtts` 5; 1..=31).
    #[schemars(extend("x-unit" = "rounds"))]
    pub extra_acked_win_rtts: u32,
    /// The allowance is at most bw times this (`bbr_extra_acked_max_us` 100 ms).
    pub extra_acked_max: Dur,
    /// Use the allowance (with a 1-round window) during STARTUP too
    /// (`bbr_extra_acked_in_startup` on).
    pub extra_acked_in_startup: bool,
    /// Packets ACKed in one aggregation epoch after which the epoch restarts
    /// (`bbr_ack_epoch_acked_reset_thresh` 2^20).
    #[schemars(extend("x-unit" = "packets"))]
    pub ack_epoch_reset_pkts: u32,
    /// Pace this many percent below the bandwidth estimate (`bbr_pacing_margin_percent` 1).
    #[schemars(extend("x-unit" = "%"))]
    pub pacing_margin_percent: u32,
    /// The TSO budget gets 64 KB halved per 2^shift us of min_rtt (`bbr_tso_rtt_shift` 9;
    /// 0 disables).
    #[schemars(extend("x-unit" = "log2 us"))]
    pub tso_rtt_shift: u32,
    /// Minimum TSO segments per skb at or above `min_tso_rate` (v2/v3 2; BBR-n 4).
    #[schemars(extend("x-unit" = "segments"))]
    pub min_tso_segs: u32,
    /// BBR-n's send quantum: the quantum of the cwnd budget (`bbr_tso_segs_goal`) is this much
    /// data at the pacing rate, at most `send_quantum_max`, whatever `sk_pacing_shift` is
    /// (BBR-n 1 ms); the skb size stays the kernel's. 0 keeps the kernel's quantum:
    /// `sk_pacing_rate >> sk_pacing_shift` plus the `tso_rtt_shift` allowance (v2/v3).
    /// Otherwise a whole number of microseconds.
    pub send_quantum_interval: Dur,
    /// Largest BBR-n send quantum: 64 KiB; used only when send_quantum_interval is set.
    pub send_quantum_max: Size,
    /// Below this pacing rate an skb is one segment (v2 `bbr_min_tso_rate` 1.2 Mbit/s; v3 has
    /// no such rule: 0).
    pub min_tso_rate: Rate,
    /// Undo the loss response of a spurious recovery (`bbr_undo` on).
    pub undo: bool,
    /// Skip the model update on app-limited ACKs that carry no news (`bbr_fast_path` on).
    pub fast_path: bool,
}

impl Params {
    /// Google's BBRv2 alpha (`tcp_bbr2.c`, v2alpha branch).
    pub fn bbr2() -> Self {
        use crate::cc::bbr_common::defaults as d;
        Params {
            version: Version::V2,
            startup_pacing_gain: d::gain(d::HIGH_GAIN),
            startup_cwnd_gain: d::gain(d::HIGH_GAIN),
            drain_gain: d::gain(d::DRAIN_GAIN),
            cwnd_gain: d::gain(d::CWND_GAIN),
            probe_up_gain: d::gain(d::PROBE_UP_GAIN),
            probe_down_gain: d::gain(d::PROBE_DOWN_GAIN),
            probe_cruise_gain: 1.0,
            probe_refill_gain: 1.0,
            probe_up_cwnd_gain: 0.0,
            probe_up_inflight_gain: 1.25,
            full_bw_thresh: d::gain(d::FULL_BW_THRESH),
            full_bw_cnt: d::FULL_BW_CNT,
            full_loss_cnt: 8,
            full_ecn_cnt: 2,
            cwnd_min_target: d::CWND_MIN_TARGET,
            probe_rtt_cwnd_gain: 0.5,
            probe_rtt_interval: Dur(5_000 * NSEC_PER_MSEC),
            probe_rtt_duration: Dur(d::PROBE_RTT_MODE_MS * NSEC_PER_MSEC),
            min_rtt_window: Dur(d::MIN_RTT_WIN_MS * NSEC_PER_MSEC),
            beta: 76.0 / 256.0,
            loss_thresh: 5.0 / 256.0,
            inflight_headroom: 38.0 / 256.0,
            ecn_enable: false,
            ecn_alpha_gain: 1.0 / 16.0,
            ecn_alpha_init: 1.0,
            ecn_factor: 85.0 / 256.0,
            ecn_thresh: 0.5,
            ecn_max_rtt: Dur(5_000 * NSEC_PER_USEC),
            ecn_reprobe_gain: 0.0,
            ecn_bw_lo: true,
            ecn_bw_hi: true,
            bw_probe_reno_gain: 1.0,
            bw_probe_max_rounds: 63,
            bw_probe_rand_rounds: 2,
            bw_probe_base: Dur(2_000 * NSEC_PER_MSEC),
            bw_probe_rand: Dur(1_000 * NSEC_PER_MSEC),
            refill_add_inc: 0,
            drain_to_target: true,
            extra_acked_gain: d::gain(d::EXTRA_ACKED_GAIN),
            extra_acked_win_rtts: d::EXTRA_ACKED_WIN_RTTS,
            extra_acked_max: Dur(d::EXTRA_ACKED_MAX_MS * NSEC_PER_MSEC),
            extra_acked_in_startup: true,
            ack_epoch_reset_pkts: d::ACK_EPOCH_ACKED_RESET_THRESH,
            pacing_margin_percent: d::PACING_MARGIN_PERCENT,
            tso_rtt_shift: 9,
            min_tso_segs: 2,
            min_tso_rate: Rate(d::MIN_TSO_RATE_BPS),
            send_quantum_interval: Dur(0),
            send_quantum_max: Size(64 * 1024),
            undo: true,
            fast_path: true,
        }
    }

    /// Google's BBRv3 (`tcp_bbr.c`, v3 branch).
    pub fn bbr3() -> Self {
        Params {
            version: Version::V3,
            startup_pacing_gain: 710.0 / 256.0,
            startup_cwnd_gain: 2.0,
            probe_down_gain: 232.0 / 256.0,
            probe_up_cwnd_gain: 0.25,
            full_loss_cnt: 6,
            ecn_reprobe_gain: 0.5,
            ecn_bw_lo: false,
            ecn_bw_hi: false,
            min_tso_rate: Rate(0),
            ..Params::bbr2()
        }
    }

    /// BBR-n on the v3 engine: ProbeBW UP 1.5 and DOWN 0.9 (BBR-n's 7.5/5 and 4.5/5, stored as
    /// `BBR_UNIT * 3 / 2` and `BBR_UNIT * 9 / 10` = 230/256), startup pacing 2/ln2 as in
    /// BBR-n, and BBR-n's send quantum: min(pacing rate x 1 ms, 64 KB), at least 4 MSS, one
    /// MSS below 1.2 Mbit/s, computed by the same code as `bbrn`'s
    /// ([`crate::cc::bbr_common::SendQuantum::Interval`]), so it stays 1 ms of data whatever
    /// TSQ budget (`sk_pacing_shift`) the stack runs with. As in bbrn, the quantum sizes the cwnd
    /// budget and is the smallest skb; the skb size itself stays the kernel's. That quantum has
    /// no min_rtt term, so `tso_rtt_shift` is 0.
    pub fn bbrn3() -> Self {
        Params {
            startup_pacing_gain: crate::cc::bbr_common::defaults::gain(
                crate::cc::bbr_common::defaults::HIGH_GAIN,
            ),
            probe_up_gain: 1.5,
            probe_down_gain: 230.0 / 256.0,
            min_tso_segs: 4,
            min_tso_rate: Rate(1_200_000),
            tso_rtt_shift: 0,
            send_quantum_interval: Dur(NSEC_PER_MSEC),
            ..Params::bbr3()
        }
    }

    /// These defaults with the scenario's `overrides` on top; unknown or ill-typed keys and
    /// out-of-range values are errors naming the parameter.
    pub fn with_overrides(self, overrides: &Map<String, Value>) -> Result<Config, String> {
        let mut merged = match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => return Err("internal error: BBR parameters do not serialise to a table".into()),
        };
        for (k, v) in overrides {
            merged.insert(k.clone(), v.clone());
        }
        let p: Params = crate::cc::registry::params_from(&merged)?;
        Config::from_params(&p)
    }
}

/// Validated parameters in the units the engine computes with (gains in 1/256, times in
/// jiffies or microseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub version: Version,
    pub startup_pacing_gain: u32,
    pub startup_cwnd_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub probe_up_gain: u32,
    pub probe_down_gain: u32,
    pub probe_cruise_gain: u32,
    pub probe_refill_gain: u32,
    pub probe_up_cwnd_gain: u32,
    pub probe_up_inflight_gain: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub full_loss_cnt: u32,
    pub full_ecn_cnt: u32,
    pub cwnd_min_target: u32,
    pub probe_rtt_cwnd_gain: u32,
    pub probe_rtt_win_ms: u32,
    pub probe_rtt_mode_ms: u32,
    pub min_rtt_win_ms: u32,
    pub beta: u32,
    pub loss_thresh: u32,
    pub inflight_headroom: u32,
    pub ecn_enable: bool,
    pub ecn_alpha_gain: u32,
    pub ecn_alpha_init: u32,
    pub ecn_factor: u32,
    pub ecn_thresh: u32,
    pub ecn_max_rtt_us: u32,
    pub ecn_reprobe_gain: u32,
    pub ecn_bw_lo: bool,
    pub ecn_bw_hi: bool,
    pub bw_probe_reno_gain: u32,
    pub bw_probe_max_rounds: u32,
    pub bw_probe_rand_rounds: u32,
    pub bw_probe_base_us: u32,
    pub bw_probe_rand_us: u32,
    pub refill_add_inc: u32,
    pub drain_to_target: bool,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_max_us: u32,
    pub extra_acked_in_startup: bool,
    pub ack_epoch_reset_pkts: u32,
    pub pacing_margin_percent: u32,
    pub tso_rtt_shift: u32,
    pub min_tso_segs: u32,
    /// Pacing rate (bytes/s) below which an skb is one segment.
    pub min_tso_rate_bytes: u64,
    /// BBR-n's send quantum; None: the kernel's `bbr_tso_segs_goal`.
    pub send_quantum: Option<SendQuantum>,
    pub undo: bool,
    pub fast_path: bool,
}

/// Largest gain accepted (the kernel's 10/11-bit gain fields stop near 4 and 8).
const MAX_GAIN: f64 = 16.0;

fn fixed(name: &str, v: f64, lo: f64, hi: f64, what: &str) -> Result<u32, String> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok((v * BBR_UNIT as f64).round() as u32)
    } else {
        Err(format!("parameter {name} = {v}: expected {what}"))
    }
}

fn gain(name: &str, v: f64) -> Result<u32, String> {
    fixed(
        name,
        v,
        0.0,
        MAX_GAIN,
        &format!("a gain between 0 and {MAX_GAIN}"),
    )
}

fn fraction(name: &str, v: f64) -> Result<u32, String> {
    fixed(name, v, 0.0, 1.0, "a fraction between 0 and 1")
}

fn in_units(name: &str, d: Dur, unit: u64, unit_name: &str) -> Result<u32, String> {
    u32::try_from(d.0 / unit).map_err(|_| {
        format!(
            "parameter {name} = {}: expected at most {} {unit_name}",
            crate::parse::show_secs(d.0),
            u32::MAX
        )
    })
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config, String> {
        let probe_rtt_win_ms = in_units(
            "probe_rtt_interval",
            p.probe_rtt_interval,
            NSEC_PER_MSEC,
            "ms",
        )?;
        let min_rtt_win_ms = in_units("min_rtt_window", p.min_rtt_window, NSEC_PER_MSEC, "ms")?;
        if probe_rtt_win_ms > min_rtt_win_ms {
            return Err(format!(
                "parameter probe_rtt_interval = {}: expected at most min_rtt_window ({})",
                crate::parse::show_secs(p.probe_rtt_interval.0),
                crate::parse::show_secs(p.min_rtt_window.0)
            ));
        }
        let loss_thresh = fraction("loss_thresh", p.loss_thresh)?;
        if loss_thresh >= BBR_UNIT {
            return Err(format!(
                "parameter loss_thresh = {}: expected a fraction below 1 (at most 255/256)",
                p.loss_thresh
            ));
        }
        let send_quantum = match p.send_quantum_interval {
            Dur(0) => None,
            interval => Some(SendQuantum::interval(interval, p.send_quantum_max)?),
        };
        Ok(Config {
            version: p.version,
            startup_pacing_gain: gain("startup_pacing_gain", p.startup_pacing_gain)?,
            startup_cwnd_gain: gain("startup_cwnd_gain", p.startup_cwnd_gain)?,
            drain_gain: gain("drain_gain", p.drain_gain)?,
            cwnd_gain: gain("cwnd_gain", p.cwnd_gain)?,
            probe_up_gain: gain("probe_up_gain", p.probe_up_gain)?,
            probe_down_gain: gain("probe_down_gain", p.probe_down_gain)?,
            probe_cruise_gain: gain("probe_cruise_gain", p.probe_cruise_gain)?,
            probe_refill_gain: gain("probe_refill_gain", p.probe_refill_gain)?,
            probe_up_cwnd_gain: gain("probe_up_cwnd_gain", p.probe_up_cwnd_gain)?,
            probe_up_inflight_gain: gain("probe_up_inflight_gain", p.probe_up_inflight_gain)?,
            full_bw_thresh: gain("full_bw_thresh", p.full_bw_thresh)?,
            full_bw_cnt: count("full_bw_cnt", p.full_bw_cnt, 1, 255)?,
            full_loss_cnt: count("full_loss_cnt", p.full_loss_cnt, 0, 15)?,
            full_ecn_cnt: count("full_ecn_cnt", p.full_ecn_cnt, 0, 3)?,
            cwnd_min_target: count("cwnd_min_target", p.cwnd_min_target, 1, 1 << 16)?,
            probe_rtt_cwnd_gain: fraction("probe_rtt_cwnd_gain", p.probe_rtt_cwnd_gain)?,
            probe_rtt_win_ms,
            probe_rtt_mode_ms: in_units(
                "probe_rtt_duration",
                p.probe_rtt_duration,
                NSEC_PER_MSEC,
                "ms",
            )?,
            min_rtt_win_ms,
            beta: fraction("beta", p.beta)?,
            loss_thresh,
            inflight_headroom: fraction("inflight_headroom", p.inflight_headroom)?,
            ecn_enable: p.ecn_enable,
            ecn_alpha_gain: fraction("ecn_alpha_gain", p.ecn_alpha_gain)?,
            ecn_alpha_init: fraction("ecn_alpha_init", p.ecn_alpha_init)?,
            ecn_factor: fraction("ecn_factor", p.ecn_factor)?,
            ecn_thresh: fraction("ecn_thresh", p.ecn_thresh)?,
            ecn_max_rtt_us: in_units("ecn_max_rtt", p.ecn_max_rtt, NSEC_PER_USEC, "us")?,
            ecn_reprobe_gain: gain("ecn_reprobe_gain", p.ecn_reprobe_gain)?,
            ecn_bw_lo: p.ecn_bw_lo,
            ecn_bw_hi: p.ecn_bw_hi,
            bw_probe_reno_gain: gain("bw_probe_reno_gain", p.bw_probe_reno_gain)?,
            bw_probe_max_rounds: count("bw_probe_max_rounds", p.bw_probe_max_rounds, 0, 255)?,
            bw_probe_rand_rounds: count("bw_probe_rand_rounds", p.bw_probe_rand_rounds, 0, 255)?,
            bw_probe_base_us: in_units("bw_probe_base", p.bw_probe_base, NSEC_PER_USEC, "us")?,
            bw_probe_rand_us: in_units("bw_probe_rand", p.bw_probe_rand, NSEC_PER_USEC, "us")?,
            refill_add_inc: count("refill_add_inc", p.refill_add_inc, 0, 3)?,
            drain_to_target: p.drain_to_target,
            extra_acked_gain: gain("extra_acked_gain", p.extra_acked_gain)?,
            extra_acked_win_rtts: count("extra_acked_win_rtts", p.extra_acked_win_rtts, 1, 31)?,
            extra_acked_max_us: in_units(
                "extra_acked_max",
                p.extra_acked_max,
                NSEC_PER_USEC,
                "us",
            )?,
            extra_acked_in_startup: p.extra_acked_in_startup,
            ack_epoch_reset_pkts: count(
                "ack_epoch_reset_pkts",
                p.ack_epoch_reset_pkts,
                1,
                u32::MAX,
            )?,
            pacing_margin_percent: count("pacing_margin_percent", p.pacing_margin_percent, 0, 99)?,
            tso_rtt_shift: count("tso_rtt_shift", p.tso_rtt_shift, 0, 31)?,
            min_tso_segs: count("min_tso_segs", p.min_tso_segs, 1, 64)?,
            min_tso_rate_bytes: p.min_tso_rate.0 / 8,
            send_quantum,
            undo: p.undo,
            fast_path: p.fast_path,
        })
    }
}
