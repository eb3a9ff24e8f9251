//! CUBIC with HyStart, as Linux runs it (net/ipv4/tcp_cubic.c, "v2.3"; the curve is also
//! specified in RFC 9438, HyStart in Ha & Rhee, "Taming the Elephants: New TCP Slow Start").
//!
//! **Window curve.** After a loss at window `W_max`, CUBIC grows cwnd along
//! `W(t) = C (t - K)^3 + W_max`, with `t` the time since the first ACK after the reduction (the
//! *epoch start*), `C = bic_scale * 10 / 1024 ≈ 0.4` packets/s³ and `K = cbrt((W_max - cwnd) / C)`
//! the time at which the curve returns to `W_max`. The growth is concave up to `W_max` and convex
//! beyond it. Linux evaluates the curve in fixed point: time in units of 1/1024 s
//! (`BICTCP_HZ`), `K` from an integer cube root of `cube_factor * (W_max - cwnd)` with
//! `cube_factor = 2^40 / (bic_scale * 10)`, and the curve one minimum RTT ahead of now, so that
//! cwnd reaches the target in one round. The target becomes `cnt`, the number of ACKed packets
//! per one-packet increase, fed to `tcp_cong_avoid_ai`. `cnt` is recomputed at most once per
//! jiffy and, while cwnd is unchanged, at most every HZ/32 jiffies; it is capped at 20 before the
//! first loss (at least 5% growth per RTT) and floored at 2 (at most 1.5x per RTT).
//!
//! **Reduction.** On loss, `ssthresh = cwnd * beta / 1024` (beta = 717, i.e. 0.7) and
//! `W_max = cwnd`; with *fast convergence*, a loss below the previous `W_max` sets
//! `W_max = cwnd * (1 + beta) / 2`, releasing bandwidth to newer flows.
//!
//! **Reno-friendly region.** CUBIC also runs an estimate of the window an AIMD flow with the same
//! beta would have (`tcp_cwnd`, one packet per `cwnd * beta_scale / 8` ACKed packets, with
//! `beta_scale = 8 (1 + beta) / 3 / (1 - beta)` — the AIMD(3(1-β)/(1+β), β) rule), and grows at
//! least as fast as that estimate.
//!
//! **HyStart** ends slow start before the first loss. Each round (from the ACK that passes the
//! previous round's `snd_nxt`) it watches two signals, once cwnd ≥ `hystart_low_window`:
//! the *ACK train* — ACKs arriving at most `hystart_ack_delta_us` apart have spanned more than
//! half of (minimum RTT + an allowance for TSO/GRO batching of at most 1 ms), or all of it when
//! the socket is paced: the pipe is full; and *delay* — from the round's 9th RTT sample on, the
//! round's minimum RTT exceeds the connection minimum by `clamp(min_rtt / 8, 4 ms, 16 ms)`.
//! Either sets `ssthresh = cwnd`. RTT samples within 1 s of an epoch start are ignored (they
//! carry the recovery's queue).
//!
//! Divergences from the kernel, none visible in realistic runs: the cube root is the exact
//! integer floor (the kernel's table-plus-one-Newton-step estimate has ~0.2% average error);
//! where the kernel's 64-bit cube product or 32-bit window products would wrap (|t - K| > 347 s,
//! cwnd > 2 million packets) the arithmetic saturates or widens instead; the epoch start is an
//! `Option` rather than jiffies with 0 meaning "none" (the simulated clock starts at 0).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::reno::cwnd_limited_slow_start;
use super::{CongestionControl, ModelValue};
use crate::sim::Rng;
use crate::tcp::config::GSO_LEGACY_MAX_SIZE;
use crate::tcp::sock::{AckSample, CaEvent, CaState, PacingStatus, Sock};
use crate::units::{NSEC_PER_MSEC, USEC_PER_SEC};

/// Fixed-point scale of `beta` (`BICTCP_BETA_SCALE`): beta 717 means 717/1024.
const BETA_SCALE: u32 = 1024;
/// CUBIC's time unit is 2^-10 s (`BICTCP_HZ` = 10).
const BICTCP_HZ_SHIFT: u32 = 10;
/// The kernel tick rate `Sock::jiffies` models (HZ = 1000: one jiffy is 1 ms).
const HZ: u32 = 1000;
/// Microseconds per jiffy at HZ = 1000 (`usecs_to_jiffies` rounds up to this).
const USEC_PER_JIFFY: u32 = 1000;
/// While cwnd is unchanged, `cnt` is refreshed only after this many jiffies (HZ/32 = 31 ms).
const CNT_REFRESH_JIFFIES: i32 = (HZ / 32) as i32;
/// RTT samples are ignored for this many jiffies after an epoch start (HZ = 1 s).
const EPOCH_RTT_HOLDOFF_JIFFIES: i32 = HZ as i32;
/// Floor of `cnt`: at most one packet per 2 ACKed, i.e. at most 1.5x per RTT.
const MIN_CNT: u32 = 2;
/// Cap of `cnt` before the first loss (`W_max` = 0): at least 5% growth per RTT.
const FIRST_EPOCH_MAX_CNT: u32 = 20;
/// At or above the curve, `cnt = 100 * cwnd` (one packet per 100 RTTs).
const ABOVE_CURVE_CNT_PER_CWND: u32 = 100;

/// `hystart_detect` bit: ACK-train detection (`HYSTART_ACK_TRAIN`).
pub const HYSTART_ACK_TRAIN: u32 = 0x1;
/// `hystart_detect` bit: delay-increase detection (`HYSTART_DELAY`).
pub const HYSTART_DELAY: u32 = 0x2;
/// RTT samples per round before the delay test applies (`HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Lower clamp of the delay-increase threshold, µs (`HYSTART_DELAY_MIN`, 4 ms).
const HYSTART_DELAY_MIN_US: u32 = 4000;
/// Upper clamp of the delay-increase threshold, µs (`HYSTART_DELAY_MAX`, 16 ms).
const HYSTART_DELAY_MAX_US: u32 = 16000;
/// The delay threshold is min_rtt >> 3 (one eighth) before clamping.
const HYSTART_DELAY_THRESH_SHIFT: u32 = 3;
/// Cap of the ACK-train TSO/GRO allowance, µs (`USEC_PER_MSEC` in `hystart_ack_delay`).
const HYSTART_ACK_DELAY_MAX_US: u64 = 1000;
/// `sk_gso_max_size` of a default device: `GSO_LEGACY_MAX_SIZE`, 65536 bytes.
const GSO_MAX_SIZE_BYTES: u64 = GSO_LEGACY_MAX_SIZE as u64;
/// The ACK-train allowance is the time to send this many GSO packets at the pacing rate: one
/// in flight and one in the qdisc, doubled because slow start paces at 200%.
const HYSTART_ACK_DELAY_GSO_PACKETS: u64 = 4;

/// Module parameters of tcp_cubic.ko, with the kernel's defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Lower `W_max` below the last loss window (`fast_convergence`, default on).
    pub fast_convergence: bool,
    /// Multiplicative decrease, /1024 (`beta`, default 717 ≈ 0.7). 1..=1023.
    #[schemars(extend("x-unit" = "1/1024"))]
    pub beta: u32,
    /// Initial ssthresh in packets, 0 for none (`initial_ssthresh`, default 0); only applied
    /// when HyStart is off, as in the kernel.
    #[schemars(extend("x-unit" = "packets"))]
    pub initial_ssthresh: u32,
    /// Cubic scale C, /1024 after a x10 factor: C = bic_scale * 10 / 1024 (`bic_scale`,
    /// default 41 → C ≈ 0.4). At least 1.
    #[schemars(extend("x-unit" = "1/1024 (x10)"))]
    pub bic_scale: u32,
    /// Grow at least as fast as the AIMD estimate (`tcp_friendliness`, default on).
    pub tcp_friendliness: bool,
    /// Hybrid slow start (`hystart`, default on).
    pub hystart: bool,
    /// Detection methods: 1 = ACK train, 2 = delay, 3 = both (`hystart_detect`, default 3).
    #[schemars(extend("x-unit" = "bit mask"))]
    pub hystart_detect: u32,
    /// cwnd from which HyStart acts, packets (`hystart_low_window`, default 16).
    #[schemars(extend("x-unit" = "packets"))]
    pub hystart_low_window: u32,
    /// Largest ACK spacing that continues a train, µs (`hystart_ack_delta_us`, default 2000).
    #[schemars(extend("x-unit" = "us"))]
    pub hystart_ack_delta_us: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            fast_convergence: true,
            beta: 717,
            initial_ssthresh: 0,
            bic_scale: 41,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
        }
    }
}

impl Params {
    /// Reject values the kernel's arithmetic cannot use.
    pub fn validate(&self) -> Result<(), String> {
        if self.beta == 0 || self.beta >= BETA_SCALE {
            return Err(format!(
                "parameter beta = {}: expected 1..=1023 (the decrease factor in 1/1024)",
                self.beta
            ));
        }
        if self.bic_scale == 0 {
            return Err(
                "parameter bic_scale = 0: expected at least 1 (C = bic_scale * 10 / 1024)".into(),
            );
        }
        if self.hystart_detect > (HYSTART_ACK_TRAIN | HYSTART_DELAY) {
            return Err(format!(
                "parameter hystart_detect = {}: expected 0..=3 (1 = ACK train, 2 = delay, 3 = both)",
                self.hystart_detect
            ));
        }
        Ok(())
    }
}

/// Why HyStart ended slow start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HystartExit {
    AckTrain,
    Delay,
}

impl HystartExit {
    /// The model's `hystart_exit` codes with their names (0: HyStart has not ended slow start).
    pub fn codes() -> [(u32, &'static str); 3] {
        let code = |e: HystartExit| e.code() as u32;
        [
            (0, "none"),
            (code(HystartExit::AckTrain), "ack_train"),
            (code(HystartExit::Delay), "delay"),
        ]
    }

    /// Code reported in the model: 1 = ACK train, 2 = delay (the `hystart_detect` bits).
    fn code(self) -> f64 {
        match self {
            HystartExit::AckTrain => HYSTART_ACK_TRAIN as f64,
            HystartExit::Delay => HYSTART_DELAY as f64,
        }
    }
}

/// HyStart's per-round state.
#[derive(Debug, Clone, Default)]
struct Hystart {
    /// Samples taken this round (at most `HYSTART_MIN_SAMPLES` count).
    sample_cnt: u8,
    /// Set once slow start has been ended; cleared only by a timeout (Loss state).
    exit: Option<HystartExit>,
    /// Start of this round, µs.
    round_start_us: u64,
    /// The round ends when snd_una passes this (snd_nxt at the round start).
    end_seq: u64,
    /// Time of the last ACK of the current train, µs.
    last_ack_us: u64,
    /// Minimum RTT of this round's samples, µs.
    curr_rtt_us: u32,
}

#[derive(Debug, Clone)]
pub struct Cubic {
    p: Params,
    /// AIMD estimate step: one packet per `cwnd * beta_scale / 8` ACKed.
    beta_scale: u32,
    /// C in 1/1024 units: `bic_scale * 10`.
    cube_rtt_scale: u64,
    /// `2^40 / (bic_scale * 10)`: K^3 (in 1/1024 s) per packet of `W_max - cwnd`.
    cube_factor: u64,
    /// ACKed packets per one-packet increase.
    cnt: u32,
    /// `W_max`, packets.
    last_max_cwnd: u32,
    /// cwnd and time (jiffies) of the last `cnt` computation.
    last_cwnd: u32,
    last_time: u32,
    /// The curve's plateau: `W_max`, or cwnd when the epoch began above it.
    origin_point: u32,
    /// K in 1/1024 s.
    k: u32,
    /// Minimum RTT seen, µs (0 before the first sample).
    delay_min_us: u32,
    /// Epoch start, jiffies.
    epoch_start: Option<u32>,
    /// ACKed packets not yet credited to the AIMD estimate.
    ack_cnt: u32,
    /// AIMD (Reno-friendly) window estimate, packets.
    tcp_cwnd: u32,
    hystart: Hystart,
}

pub const INFO: CcInfo = CcInfo {
    name: "cubic",
    summary: "CUBIC with HyStart: cubic window growth around the last loss window, beta 0.7",
    source: "Linux net/ipv4/tcp_cubic.c; RFC 9438; Ha & Rhee, HyStart (2008)",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| Ok(Box::new(Cubic::new(params_from::<Params>(m)?)?)),
};

/// Floor of the cube root of `a`, exact over all of u64 (digit-by-digit: one result bit per
/// three bits of `a`, from the top).
pub fn cube_root(a: u64) -> u32 {
    let mut rem = a;
    let mut root: u64 = 0;
    for shift in (0..=63u32).rev().step_by(3) {
        root <<= 1;
        // (2r + 1)^3 - (2r)^3 = 3 (2r)(2r + 1) + 1: what setting the new bit adds to root^3.
        let step = 3 * root * (root + 1) + 1;
        if (rem >> shift) >= step {
            rem -= step << shift;
            root += 1;
        }
    }
    root as u32
}

/// `usecs_to_jiffies` at HZ = 1000: rounds up.
fn usecs_to_jiffies(us: u32) -> u64 {
    u64::from(us.div_ceil(USEC_PER_JIFFY))
}

/// Signed jiffies elapsed from `from` to `to` (the kernel's `(s32)(to - from)`).
fn jiffies_since(to: u32, from: u32) -> i32 {
    to.wrapping_sub(from) as i32
}

impl Cubic {
    pub fn new(p: Params) -> Result<Self, String> {
        p.validate()?;
        let beta_scale = 8 * (BETA_SCALE + p.beta) / 3 / (BETA_SCALE - p.beta);
        let cube_rtt_scale = u64::from(p.bic_scale) * 10;
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ_SHIFT)) / cube_rtt_scale;
        Ok(Cubic {
            p,
            beta_scale,
            cube_rtt_scale,
            cube_factor,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            hystart: Hystart::default(),
        })
    }

    /// `bictcp_reset`: forget the curve, the AIMD estimate, the minimum RTT and HyStart's exit.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin_point = 0;
        self.k = 0;
        self.delay_min_us = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.hystart.exit = None;
    }

    /// `bictcp_hystart_reset`: start a HyStart round now, ending at the current snd_nxt.
    fn hystart_reset(&mut self, tp: &Sock) {
        let h = &mut self.hystart;
        h.round_start_us = tp.now_us();
        h.last_ack_us = h.round_start_us;
        h.end_seq = tp.snd_nxt;
        h.curr_rtt_us = u32::MAX;
        h.sample_cnt = 0;
    }

    /// Begin an epoch at `now`: place the curve so that it passes through `cwnd` now and
    /// reaches its plateau (`W_max`, or `cwnd` if already above) after K.
    fn start_epoch(&mut self, now: u32, cwnd: u32, acked: u32) {
        self.epoch_start = Some(now);
        self.ack_cnt = acked;
        self.tcp_cwnd = cwnd;
        if self.last_max_cwnd <= cwnd {
            self.k = 0;
            self.origin_point = cwnd;
        } else {
            self.k = cube_root(self.cube_factor * u64::from(self.last_max_cwnd - cwnd));
            self.origin_point = self.last_max_cwnd;
        }
    }

    /// The curve one minimum RTT after `now`, packets.
    fn curve_target(&self, now: u32, epoch_start: u32) -> u32 {
        let elapsed = u64::try_from(jiffies_since(now, epoch_start)).unwrap_or(0);
        let t =
            ((elapsed + usecs_to_jiffies(self.delay_min_us)) << BICTCP_HZ_SHIFT) / u64::from(HZ);
        let k = u64::from(self.k);
        let offs = t.abs_diff(k);
        let cube = self
            .cube_rtt_scale
            .saturating_mul(offs.saturating_mul(offs).saturating_mul(offs));
        let delta = u32::try_from(cube >> (10 + 3 * BICTCP_HZ_SHIFT)).unwrap_or(u32::MAX);
        if t < k {
            self.origin_point.saturating_sub(delta)
        } else {
            self.origin_point.saturating_add(delta)
        }
    }

    /// Let the AIMD estimate absorb the ACKed packets, and grow at least as fast as it does.
    fn reno_friendly(&mut self, cwnd: u32) {
        // The kernel loops while ack_cnt > step; a zero step (cwnd * beta_scale < 8, possible
        // only with a tiny beta) would never end there, and is taken as 1 here.
        let step = (cwnd.saturating_mul(self.beta_scale) >> 3).max(1);
        if self.ack_cnt > step {
            let n = (self.ack_cnt - 1) / step;
            self.ack_cnt -= n * step;
            self.tcp_cwnd = self.tcp_cwnd.saturating_add(n);
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
    }

    /// `bictcp_update`: refresh `cnt` for the current cwnd.
    fn update(&mut self, now: u32, cwnd: u32, acked: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && jiffies_since(now, self.last_time) <= CNT_REFRESH_JIFFIES {
            return;
        }
        // The curve is evaluated at most once per jiffy; a reduction (epoch end) forces it.
        let same_jiffy = self.epoch_start.is_some() && now == self.last_time;
        if !same_jiffy {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch_start = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.start_epoch(now, cwnd, acked);
                    now
                }
            };
            let target = self.curve_target(now, epoch_start);
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                ABOVE_CURVE_CNT_PER_CWND.saturating_mul(cwnd)
            };
            if self.last_max_cwnd == 0 {
                self.cnt = self.cnt.min(FIRST_EPOCH_MAX_CNT);
            }
        }
        if self.p.tcp_friendliness {
            self.reno_friendly(cwnd);
        }
        self.cnt = self.cnt.max(MIN_CNT);
    }

    /// `hystart_ack_delay`: allowance for TSO/GRO batching, µs.
    fn hystart_ack_delay(tp: &Sock) -> u64 {
        if tp.pacing_rate == 0 {
            return 0;
        }
        let us = GSO_MAX_SIZE_BYTES * HYSTART_ACK_DELAY_GSO_PACKETS * USEC_PER_SEC / tp.pacing_rate;
        us.min(HYSTART_ACK_DELAY_MAX_US)
    }

    fn hystart_found(&mut self, tp: &mut Sock, why: HystartExit) {
        self.hystart.exit.get_or_insert(why);
        tp.snd_ssthresh = tp.snd_cwnd;
    }

    /// `hystart_update`: one RTT sample during slow start.
    fn hystart_update(&mut self, tp: &mut Sock, delay_us: u32) {
        if tp.snd_una > self.hystart.end_seq {
            self.hystart_reset(tp);
        }
        if tp.snd_cwnd < self.p.hystart_low_window {
            return;
        }
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = tp.now_us();
            if now.saturating_sub(self.hystart.last_ack_us)
                <= u64::from(self.p.hystart_ack_delta_us)
            {
                self.hystart.last_ack_us = now;
                let mut threshold = u64::from(self.delay_min_us) + Self::hystart_ack_delay(tp);
                // Unpaced, a full pipe shows as a train spanning half the minimum RTT; pacing
                // may have spread slow-start packets over up to the whole of it.
                if tp.pacing_status == PacingStatus::None {
                    threshold >>= 1;
                }
                if now.saturating_sub(self.hystart.round_start_us) > threshold {
                    self.hystart_found(tp, HystartExit::AckTrain);
                }
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            let h = &mut self.hystart;
            h.curr_rtt_us = h.curr_rtt_us.min(delay_us);
            if h.sample_cnt < HYSTART_MIN_SAMPLES {
                h.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min_us >> HYSTART_DELAY_THRESH_SHIFT)
                    .clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if h.curr_rtt_us > self.delay_min_us.saturating_add(thresh) {
                    self.hystart_found(tp, HystartExit::Delay);
                }
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, tp: &mut Sock, _rng: &mut Rng) {
        self.reset();
        if self.p.hystart {
            self.hystart_reset(tp);
        } else if self.p.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.p.initial_ssthresh;
        }
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.epoch_start = None;
        let cwnd = u64::from(tp.snd_cwnd);
        let beta = u64::from(self.p.beta);
        let scale = u64::from(BETA_SCALE);
        self.last_max_cwnd = if tp.snd_cwnd < self.last_max_cwnd && self.p.fast_convergence {
            ((cwnd * (scale + beta)) / (2 * scale)) as u32
        } else {
            tp.snd_cwnd
        };
        ((cwnd * beta / scale) as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if let Some(acked) = cwnd_limited_slow_start(tp, acked) {
            self.update(tp.jiffies(), tp.snd_cwnd, acked);
            tp.cong_avoid_ai(self.cnt, acked);
        }
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        // Restarting after idle: shift the epoch by the idle time so that the curve resumes
        // where it was rather than jumping ahead.
        let now = tp.jiffies();
        let idle = jiffies_since(now, (tp.lsndtime / NSEC_PER_MSEC) as u32);
        if let Some(start) = self.epoch_start {
            if idle > 0 {
                let shifted = start.wrapping_add(idle as u32);
                self.epoch_start = Some(if jiffies_since(shifted, now) > 0 {
                    now
                } else {
                    shifted
                });
            }
        }
    }

    fn pkts_acked(&mut self, tp: &mut Sock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        if let Some(start) = self.epoch_start {
            if jiffies_since(tp.jiffies(), start) < EPOCH_RTT_HOLDOFF_JIFFIES {
                return;
            }
        }
        let delay = u32::try_from(sample.rtt_us).unwrap_or(u32::MAX).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        if self.hystart.exit.is_none() && tp.in_slow_start() && self.p.hystart {
            self.hystart_update(tp, delay);
        }
    }

    /// `w_max` and `origin_point` (packets), `k_s` (s), `epoch_start_s` (s, NaN outside an
    /// epoch), `cnt`, `tcp_cwnd` (AIMD estimate), `delay_min_us`, `hystart_exit`
    /// (0 = not yet, 1 = ACK train, 2 = delay).
    fn model(&self) -> Vec<ModelValue> {
        let epoch_start_s = self
            .epoch_start
            .map_or(f64::NAN, |j| f64::from(j) / f64::from(HZ));
        vec![
            ("w_max", f64::from(self.last_max_cwnd)),
            ("origin_point", f64::from(self.origin_point)),
            (
                "k_s",
                f64::from(self.k) / f64::from(1u32 << BICTCP_HZ_SHIFT),
            ),
            ("epoch_start_s", epoch_start_s),
            ("cnt", f64::from(self.cnt)),
            ("tcp_cwnd", f64::from(self.tcp_cwnd)),
            ("delay_min_us", f64::from(self.delay_min_us)),
            (
                "hystart_exit",
                self.hystart.exit.map_or(0.0, HystartExit::code),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};

    fn cubic() -> Cubic {
        Cubic::new(Params::default()).unwrap()
    }

    fn rng() -> Rng {
        Rng::new(1, 0)
    }

    /// A socket that always uses its whole window.
    fn sock(cwnd: u32) -> Sock {
        let mut tp = Sock::new(1448, cwnd);
        tp.is_cwnd_limited = true;
        tp.max_packets_out = u32::MAX / 2;
        tp
    }

    fn rtt_sample(rtt_us: i64) -> AckSample {
        AckSample {
            pkts_acked: 1,
            rtt_us,
            in_flight: 0,
        }
    }

    /// One round trip of an ACK clock: cwnd ACKs, each for one packet, evenly spread over
    /// `rtt`, each carrying an RTT sample of `rtt`. `at` is called after every ACK.
    fn ack_round(cc: &mut Cubic, tp: &mut Sock, rtt: Nanos, at: &mut dyn FnMut(&Cubic, &Sock)) {
        let n = tp.snd_cwnd;
        for _ in 0..n {
            tp.now += rtt / Nanos::from(n);
            tp.snd_una += 1;
            cc.pkts_acked(tp, &rtt_sample((rtt / NSEC_PER_USEC) as i64));
            cc.cong_avoid(tp, 1);
            at(cc, tp);
        }
    }

    #[test]
    fn cube_root_is_the_exact_floor() {
        // Perfect cubes and their neighbours: floor(cbrt(n^3 - 1)) = n - 1.
        for n in [1u64, 2, 3, 10, 1000, 4316, 65_535, 2_642_245] {
            assert_eq!(cube_root(n * n * n), n as u32, "{n}^3");
            assert_eq!(cube_root(n * n * n - 1), (n - 1) as u32, "{n}^3 - 1");
            assert_eq!(cube_root(n * n * n + 1), n as u32, "{n}^3 + 1");
        }
        assert_eq!(cube_root(0), 0);
        // 2642245^3 = 18446724184312856125 <= u64::MAX < 2642246^3.
        assert_eq!(cube_root(u64::MAX), 2_642_245);
        // Exhaustively against the definition for small arguments.
        for a in 0..100_000u64 {
            let r = u64::from(cube_root(a));
            assert!(r * r * r <= a && (r + 1) * (r + 1) * (r + 1) > a, "{a}");
        }
    }

    #[test]
    fn k_in_kernel_fixed_point() {
        // cube_factor = 2^40 / 410 = 2681735677. W_max - cwnd = 30:
        // K = floor(cbrt(2681735677 * 30)) = floor(cbrt(80452070310)) = 4316 (1/1024 s),
        // i.e. 4.215 s = cbrt(30 / 0.4004).
        let mut cc = cubic();
        assert_eq!(cc.cube_factor, 2_681_735_677);
        cc.last_max_cwnd = 100;
        cc.start_epoch(0, 70, 1);
        assert_eq!((cc.k, cc.origin_point), (4316, 100));
        // Starting at or above W_max: K = 0, plateau at cwnd.
        cc.start_epoch(0, 120, 1);
        assert_eq!((cc.k, cc.origin_point), (0, 120));
    }

    /// A socket just out of a loss at `w_max` at 10 s (cwnd = ssthresh), after one RTT sample
    /// of `rtt` outside any epoch set the minimum RTT.
    fn after_loss(cc: &mut Cubic, w_max: u32, rtt: Nanos) -> Sock {
        let mut tp = sock(w_max);
        cc.init(&mut tp, &mut rng());
        cc.pkts_acked(&mut tp, &rtt_sample((rtt / NSEC_PER_USEC) as i64));
        tp.now = 10 * NSEC_PER_SEC;
        tp.snd_ssthresh = cc.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        tp
    }

    #[test]
    fn window_follows_the_cubic_curve_between_losses() {
        // W_max = 1000 packets, RTT 100 ms. The loss leaves cwnd = ssthresh = 1000*717/1024 = 700
        // and K = cbrt((1000 - 700) / C) with C = 410/1024: cbrt(749.3) = 9.084 s. The AIMD
        // estimate grows 8/15 packet per RTT (700 + 5.3 t/s, 764 at 12 s), far below the
        // curve, so cwnd should follow W(t) = C (t - K)^3 + 1000, t from the epoch start:
        //   t = 1 s: 1000 + 0.4004 * (-8.084)^3 = 788.5     t = 9.084 s: 1000
        //   t = 3 s: 1000 + 0.4004 * (-6.084)^3 = 909.8     t = 11 s: 1002.8
        //   t = 6 s: 1000 + 0.4004 * (-3.084)^3 = 988.3     t = 12 s: 1009.9
        let rtt = 100 * NSEC_PER_MSEC;
        let mut cc = cubic();
        let mut tp = after_loss(&mut cc, 1000, rtt);
        assert_eq!(tp.snd_cwnd, 700);

        let c = 410.0 / 1024.0;
        let k = (300.0f64 / c).cbrt();
        let checkpoints = [1.0, 3.0, 6.0, k, 11.0, 12.0];
        let mut checked = 0;
        let mut first_epoch = None;
        while checked < checkpoints.len() {
            ack_round(&mut cc, &mut tp, rtt, &mut |cc, tp| {
                let epoch = cc.epoch_start.expect("in an epoch");
                assert_eq!(*first_epoch.get_or_insert(epoch), epoch, "a single epoch");
                let t = tp.now as f64 / 1e9 - f64::from(epoch) / 1e3;
                if checked < checkpoints.len() && t >= checkpoints[checked] {
                    let w = c * (t - k).powi(3) + 1000.0;
                    let cwnd = f64::from(tp.snd_cwnd);
                    assert!(
                        (cwnd - w).abs() <= 1.0,
                        "t = {t:.3} s: cwnd {cwnd} vs W(t) = {w:.2}"
                    );
                    checked += 1;
                }
            });
        }
    }

    #[test]
    fn loss_cuts_to_beta_and_fast_convergence_lowers_w_max() {
        let mut cc = cubic();
        // First loss: ssthresh = 100 * 717 / 1024 = 70.02 -> 70, W_max = 100.
        assert_eq!(cc.ssthresh(&sock(100)), 70);
        assert_eq!(cc.last_max_cwnd, 100);
        // A loss below W_max: W_max = 80 * (1024 + 717) / 2048 = 68.01 -> 68;
        // ssthresh = 80 * 717 / 1024 = 56.02 -> 56.
        assert_eq!(cc.ssthresh(&sock(80)), 56);
        assert_eq!(cc.last_max_cwnd, 68);
        // Without fast convergence W_max is the loss window itself.
        let mut plain = Cubic::new(Params {
            fast_convergence: false,
            ..Params::default()
        })
        .unwrap();
        plain.ssthresh(&sock(100));
        plain.ssthresh(&sock(80));
        assert_eq!(plain.last_max_cwnd, 80);
        // Floor of 2: 2 * 717 / 1024 = 1.4 -> 2.
        assert_eq!(cc.ssthresh(&sock(2)), 2);
        // The reduction ends the epoch.
        assert_eq!(cc.epoch_start, None);
    }

    #[test]
    fn reno_friendly_region_grows_at_least_as_the_aimd_estimate() {
        // Small window: W_max = 20, RTT 40 ms. After the loss cwnd = 20*717/1024 = 14 and
        // K = cbrt(6 / 0.4004) = 2.466 s; over 100 RTTs (4 s) the curve alone reaches only
        // W(4 s) = 20 + 0.4004 * (4 - 2.466)^3 = 21.4. The AIMD rule of RFC 9438 with
        // beta = 0.7 adds 3 (1 - 0.7) / (1 + 0.7) = 0.529 packet per RTT:
        // W_est = 14 + 100 * 0.529 = 66.9. CUBIC credits one packet per 15/8 cwnd ACKed
        // (0.533 per RTT), folding ACKs in when cwnd changes or every HZ/32 = 31 ms (< 1 RTT
        // here), and then follows its estimate: it must be within a packet of W_est.
        let rtt = 40 * NSEC_PER_MSEC;
        let run = |params: Params| {
            let mut cc = Cubic::new(params).unwrap();
            let mut tp = after_loss(&mut cc, 20, rtt);
            assert_eq!(tp.snd_cwnd, 14);
            for _ in 0..100 {
                ack_round(&mut cc, &mut tp, rtt, &mut |_, _| {});
            }
            f64::from(tp.snd_cwnd)
        };
        let w_est = 14.0 + 100.0 * 3.0 * (1.0 - 0.7) / 1.7;
        let cwnd = run(Params::default());
        assert!(
            (cwnd - w_est).abs() <= 1.0,
            "cwnd {cwnd} vs W_est {w_est:.1}"
        );
        // Without tcp_friendliness the same run stays on the curve.
        let cwnd = run(Params {
            tcp_friendliness: false,
            ..Params::default()
        });
        assert!((cwnd - 21.4).abs() <= 1.0, "cwnd {cwnd} vs W(4 s) = 21.4");
    }

    #[test]
    fn cnt_is_capped_before_the_first_loss_and_floored_at_two() {
        // Slow start ended by HyStart at cwnd 100 with no loss yet: W_max = 0, so the epoch
        // starts on the plateau (K = 0, origin 100) and the curve target barely exceeds
        // cwnd: cnt would be huge, the first-epoch cap makes it 20.
        let mut cc = cubic();
        let mut tp = sock(100);
        tp.snd_ssthresh = 100;
        tp.now = 5 * NSEC_PER_SEC;
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(cc.cnt, 20);
        // An AIMD estimate far above cwnd: max_cnt = 100 / (400 - 100) = 0, floored to 2.
        cc.tcp_cwnd = 400;
        tp.now += 50 * NSEC_PER_MSEC;
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(cc.cnt, 2);
    }

    /// Socket in slow start at `cwnd` whose first HyStart round covers `cwnd` packets, with
    /// the minimum RTT set by one earlier sample.
    fn slow_start_round(cc: &mut Cubic, cwnd: u32, min_rtt_us: i64) -> Sock {
        let mut tp = sock(cwnd);
        cc.init(&mut tp, &mut rng());
        cc.pkts_acked(&mut tp, &rtt_sample(min_rtt_us));
        assert_eq!(cc.delay_min_us, min_rtt_us as u32);
        tp.snd_nxt = u64::from(cwnd);
        tp
    }

    /// The next ACK of a round, `spacing_us` after the previous one, with RTT `rtt_us`.
    fn hystart_ack(cc: &mut Cubic, tp: &mut Sock, spacing_us: u64, rtt_us: i64) {
        tp.now += spacing_us * NSEC_PER_USEC;
        tp.snd_una += 1;
        cc.pkts_acked(tp, &rtt_sample(rtt_us));
    }

    /// Move to the next round: snd_una passes the round's end and snd_nxt moves a window on.
    fn next_round(tp: &mut Sock) {
        tp.snd_una = tp.snd_nxt;
        tp.snd_nxt += u64::from(tp.snd_cwnd);
    }

    #[test]
    fn hystart_delay_exit_on_rtt_increase() {
        // delay_min = 100 ms: threshold = clamp(100000 >> 3, 4000, 16000) = 12500 us, so the
        // round's minimum of its first 8 samples must exceed 112500 us; the test applies from
        // the 9th sample on. ACKs 5 ms apart never form a train (> 2000 us).
        let mut cc = cubic();
        let mut tp = slow_start_round(&mut cc, 20, 100_000);
        for _ in 0..20 {
            hystart_ack(&mut cc, &mut tp, 5000, 100_000);
        }
        next_round(&mut tp);
        for _ in 0..20 {
            hystart_ack(&mut cc, &mut tp, 5000, 112_500);
        }
        assert_eq!(cc.hystart.exit, None, "112.5 ms is not above the threshold");
        next_round(&mut tp);
        for _ in 0..9 {
            assert_eq!(cc.hystart.exit, None);
            hystart_ack(&mut cc, &mut tp, 5000, 112_501);
        }
        assert_eq!(cc.hystart.exit, Some(HystartExit::Delay));
        assert_eq!(tp.snd_ssthresh, 20);
        assert_eq!(cc.model().last(), Some(&("hystart_exit", 2.0)));
    }

    #[test]
    fn hystart_delay_threshold_is_clamped_to_4_and_16_ms() {
        // delay_min 20 ms: 20000 >> 3 = 2500 -> 4000; exit needs > 24000 us.
        // delay_min 200 ms: 25000 -> 16000; exit needs > 216000 us.
        for (min_rtt, quiet, exits) in [(20_000, 24_000, 24_001), (200_000, 216_000, 216_001)] {
            let mut cc = cubic();
            let mut tp = slow_start_round(&mut cc, 20, min_rtt);
            for _ in 0..15 {
                hystart_ack(&mut cc, &mut tp, 5000, quiet);
            }
            assert_eq!(cc.hystart.exit, None, "min {min_rtt}: {quiet}");
            next_round(&mut tp);
            for _ in 0..9 {
                hystart_ack(&mut cc, &mut tp, 5000, exits);
            }
            assert_eq!(
                cc.hystart.exit,
                Some(HystartExit::Delay),
                "min {min_rtt}: {exits}"
            );
        }
    }

    #[test]
    fn hystart_ack_train_exit() {
        // delay_min 40 ms, unpaced, no pacing rate: threshold = (40000 + 0) / 2 = 20000 us.
        // ACKs 1 ms apart continue the train; the round starts at the first ACK (k = 0), so
        // the k-th later ACK is k ms after the round start and triggers once k * 1000 > 20000:
        // k = 21.
        let mut cc = cubic();
        let mut tp = slow_start_round(&mut cc, 32, 40_000);
        hystart_ack(&mut cc, &mut tp, 1000, 40_000);
        for _ in 1..=20 {
            hystart_ack(&mut cc, &mut tp, 1000, 40_000);
        }
        assert_eq!(cc.hystart.exit, None);
        hystart_ack(&mut cc, &mut tp, 1000, 40_000);
        assert_eq!(cc.hystart.exit, Some(HystartExit::AckTrain));
        assert_eq!(tp.snd_ssthresh, 32);
        assert_eq!(cc.model().last(), Some(&("hystart_exit", 1.0)));
    }

    #[test]
    fn hystart_ack_train_when_paced_waits_a_whole_min_rtt_plus_tso_allowance() {
        // Paced at 131072000 B/s: allowance = 65536 * 4 * 1e6 / 131072000 = 2000 us, capped at
        // 1000. Threshold = 40000 + 1000 = 41000 us (not halved): k = 41 is not enough, k = 42 is.
        let mut cc = cubic();
        let mut tp = slow_start_round(&mut cc, 64, 40_000);
        tp.pacing_status = PacingStatus::Needed;
        tp.pacing_rate = 131_072_000;
        hystart_ack(&mut cc, &mut tp, 1000, 40_000);
        for _ in 1..=41 {
            hystart_ack(&mut cc, &mut tp, 1000, 40_000);
        }
        assert_eq!(cc.hystart.exit, None);
        hystart_ack(&mut cc, &mut tp, 1000, 40_000);
        assert_eq!(cc.hystart.exit, Some(HystartExit::AckTrain));
    }

    #[test]
    fn hystart_ack_delay_allowance() {
        // 65536 * 4 * 1e6 / rate, at most 1000 us; 0 without a pacing rate.
        let mut tp = sock(10);
        assert_eq!(Cubic::hystart_ack_delay(&tp), 0);
        tp.pacing_rate = 524_288_000;
        assert_eq!(Cubic::hystart_ack_delay(&tp), 500);
        tp.pacing_rate = 1_000_000_000;
        assert_eq!(Cubic::hystart_ack_delay(&tp), 262);
        tp.pacing_rate = 1_000_000;
        assert_eq!(Cubic::hystart_ack_delay(&tp), 1000);
    }

    #[test]
    fn hystart_no_exit_when_acks_are_spread_or_window_small() {
        // ACKs 3 ms apart break the train; all RTTs equal the minimum: no exit in 32 ACKs.
        let mut cc = cubic();
        let mut tp = slow_start_round(&mut cc, 32, 40_000);
        for _ in 0..32 {
            hystart_ack(&mut cc, &mut tp, 3000, 40_000);
        }
        assert_eq!(cc.hystart.exit, None);
        // Below hystart_low_window (16) a doubled RTT is ignored; at 16 the 9th sample exits.
        for (cwnd, exit) in [(15, None), (16, Some(HystartExit::Delay))] {
            let mut cc = cubic();
            let mut tp = slow_start_round(&mut cc, cwnd, 40_000);
            for _ in 0..9 {
                hystart_ack(&mut cc, &mut tp, 1000, 80_000);
            }
            assert_eq!(cc.hystart.exit, exit, "cwnd {cwnd}");
        }
    }

    #[test]
    fn idle_restart_shifts_the_epoch() {
        let mut cc = cubic();
        let mut tp = sock(50);
        // Epoch began at 1000 jiffies; last send at 5 s; restart at 8 s: shift by 3000.
        cc.epoch_start = Some(1000);
        tp.lsndtime = 5 * NSEC_PER_SEC;
        tp.now = 8 * NSEC_PER_SEC;
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, Some(4000));
        // A shift past now is capped at now: 7000 + 3000 > 8000.
        cc.epoch_start = Some(7000);
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, Some(8000));
        // Outside an epoch nothing changes.
        cc.epoch_start = None;
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, None);
    }

    #[test]
    fn rtt_samples_ignored_for_one_second_after_epoch_start() {
        let mut cc = cubic();
        let mut tp = sock(50);
        tp.snd_ssthresh = 10;
        cc.epoch_start = Some(2000);
        tp.now = 2999 * NSEC_PER_MSEC;
        cc.pkts_acked(&mut tp, &rtt_sample(30_000));
        assert_eq!(cc.delay_min_us, 0);
        tp.now = 3000 * NSEC_PER_MSEC;
        cc.pkts_acked(&mut tp, &rtt_sample(30_000));
        assert_eq!(cc.delay_min_us, 30_000);
        // A zero RTT counts as 1 us.
        cc.epoch_start = None;
        cc.pkts_acked(&mut tp, &rtt_sample(0));
        assert_eq!(cc.delay_min_us, 1);
    }

    #[test]
    fn timeout_resets_the_model_and_undo_restores_prior_cwnd() {
        let mut cc = cubic();
        let mut tp = sock(100);
        cc.init(&mut tp, &mut rng());
        cc.ssthresh(&tp);
        cc.hystart.exit = Some(HystartExit::Delay);
        cc.delay_min_us = 5000;
        tp.snd_nxt = 900;
        cc.set_state(&mut tp, CaState::Loss);
        assert_eq!(
            (cc.last_max_cwnd, cc.delay_min_us, cc.hystart.exit),
            (0, 0, None)
        );
        assert_eq!(cc.hystart.end_seq, 900);
        // Entering Recovery keeps the model.
        cc.ssthresh(&tp);
        cc.set_state(&mut tp, CaState::Recovery);
        assert_eq!(cc.last_max_cwnd, 100);
        // Undo is Reno's: max(cwnd, prior_cwnd).
        tp.snd_cwnd = 70;
        tp.prior_cwnd = 100;
        assert_eq!(cc.undo_cwnd(&tp), 100);
    }

    #[test]
    fn initial_ssthresh_applies_only_without_hystart() {
        let with = Cubic::new(Params {
            initial_ssthresh: 64,
            ..Params::default()
        });
        let mut tp = sock(10);
        with.unwrap().init(&mut tp, &mut rng());
        assert_eq!(tp.snd_ssthresh, crate::tcp::sock::TCP_INFINITE_SSTHRESH);
        let without = Cubic::new(Params {
            initial_ssthresh: 64,
            hystart: false,
            ..Params::default()
        });
        without.unwrap().init(&mut tp, &mut rng());
        assert_eq!(tp.snd_ssthresh, 64);
    }

    #[test]
    fn parameters_are_validated_with_their_names() {
        let make = |v: serde_json::Value| (INFO.make)(v.as_object().unwrap()).map(|_| ());
        let err = make(serde_json::json!({ "beta": 1024 })).unwrap_err();
        assert!(
            err.contains("beta = 1024") && err.contains("1..=1023"),
            "{err}"
        );
        let err = make(serde_json::json!({ "hystart_detect": 4 })).unwrap_err();
        assert!(err.contains("hystart_detect = 4"), "{err}");
        let err = make(serde_json::json!({ "bic_scale": 0 })).unwrap_err();
        assert!(err.contains("bic_scale = 0"), "{err}");
        let ok = serde_json::json!({ "hystart_low_window": 8, "fast_convergence": false });
        assert_eq!(make(ok), Ok(()));
        let defaults = (INFO.defaults)();
        assert_eq!(defaults["beta"], 717);
        assert_eq!(defaults["hystart_ack_delta_us"], 2000);
    }
}
