//! TCP-NV, "New Vegas" (Linux net/ipv4/tcp_nv.c, Lawrence Brakmo, 2016).
//!
//! NV avoids congestion like Vegas, by noticing the queue before it overflows, but it measures
//! the queue through the delivery rate rather than through the RTT alone. On every ACK that carries
//! an RTT sample it smooths the RTT (`avg = (rtt * nv_rtt_factor + avg * (256 - nv_rtt_factor)) /
//! 256`) and computes the rate at which data was delivered during that RTT,
//!
//! ```text
//! rate = delivered bytes * 80000 / avg_rtt_us        (units of 100 bit/s)
//! ```
//!
//! keeping the largest rate of the round. Once per round trip (when `snd_una` passes the `snd_nxt`
//! recorded at the start of the round) it turns that rate into the window that carries it over the
//! minimum RTT, `cwnd_by_slope = max_rate * min_rtt / (80000 * mss)`, and allows `nv_pad` packets
//! of queue on top: `max_win = cwnd_by_slope + nv_pad`.
//!
//! * `cwnd > max_win`: congestion. After at least `nv_rtt_min_cnt` rounds and
//!   `nv_dec_eval_min_calls` samples (`nv_ssthresh_eval_min_calls` while ssthresh is still
//!   infinite, i.e. in the first slow start), growth stops, ssthresh becomes
//!   `nv_ssthresh_factor / 8 * max_win` and cwnd sheds `nv_cong_dec_mult / 128` of the excess (at
//!   least 2 packets), or drops to `max_win` when the excess is 2 or less. While still collecting
//!   samples, growth stops if more than `nv_stop_rtt_cnt` rounds went by without a decision.
//! * `cwnd <= max_win - nv_pad_buffer`: no congestion. After `nv_inc_eval_min_calls` samples
//!   growth is allowed again.
//! * In between: hold, and keep collecting.
//!
//! After a decision the round counters start over and cwnd is kept at least `nv_min_cwnd`. Growth
//! itself happens in `cong_avoid`, only while allowed: slow start, then one packet per
//! `max(4, cwnd >> f)` ACKed packets for a growth factor `f >= 0` (Reno at 0), or per `cwnd << -f`
//! for `f < 0`. An RTO (the Loss state) lowers `f` by one, down to -8; every
//! `nv_cwnd_growth_rate_neg + 1` consecutive uncongested decisions raise a negative `f` by one, and
//! with `nv_cwnd_growth_rate_pos > 0` a non-negative `f` keeps rising the same way. Congestion
//! resets a positive `f` to 0.
//!
//! The minimum RTT follows path changes: a second minimum is collected alongside and replaces the
//! active one when the reset time comes, first 2 s after the start, then every `nv_reset_period`
//! scaled by a random factor in [3/4, 5/4) (drawn as `(384 + byte) / 512`). The very first sample
//! sets the minimum to twice its RTT, so the first decision cannot rest on one sample. With
//! `nv_base_rtt` set (the kernel takes it from a BPF_SOCK_OPS_BASE_RTT program), RTTs are clipped
//! to [80%, 100%] of it before they enter the minima.
//!
//! A round that brings a single ACK covering at least `min_cwnd - 1` segments suggests that
//! segmentation offload or ACK coalescing hides the per-packet RTTs: the per-connection minimum
//! window (from 4) grows by 2 up to 81, the round is stretched by that many segments, growth is
//! allowed, and no decision is taken. That minimum halves (not below 4) at each min-RTT reset.
//!
//! A loss sets ssthresh to `nv_loss_dec_factor / 1024` of cwnd (80%, at least 2); entering Loss,
//! Recovery or CWR stops growth until the next uncongested decision, and the round state starts
//! over when the connection is Open again. Samples are used only in the Open and Disorder states.
//! Undo is Reno's.
//!
//! Units: [`Sock`] counts sequence in segments, so the bytes acknowledged on an ACK are
//! `(snd_una - previous snd_una) * mss_cache` and the round boundary is a segment index (the
//! kernel's boundary `snd_nxt + min_cwnd * mss` bytes is `snd_nxt + min_cwnd` segments). The
//! delivered bytes come from [`AckSample::in_flight`], in bytes as in Linux. The random reset
//! factor is drawn from a stream seeded at `init` from the connection's [`Rng`]. The kernel keeps
//! a "catch-up" flag that nothing ever sets; it has no effect there and is not modelled.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{defaults_of, params_from, schema_of, CcInfo};
use super::{CongestionControl, ModelValue};
use crate::parse::Dur;
use crate::sim::Rng;
use crate::tcp::sock::{AckSample, CaState, Sock, TCP_INFINITE_SSTHRESH};
use crate::units::{NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

/// "No RTT yet" for the minima (tcp_nv.c `NV_INIT_RTT`, U32_MAX).
pub const NV_INIT_RTT_US: u32 = u32::MAX;
/// Initial per-connection minimum window, packets (tcp_nv.c `NV_MIN_CWND`).
pub const NV_MIN_CWND_PKTS: u32 = 4;
/// Step by which that minimum grows when offload hides RTTs, packets (`NV_MIN_CWND_GROW`).
pub const NV_MIN_CWND_GROW_PKTS: u32 = 2;
/// Bound on that minimum, packets: it stops at bound + 1 (`NV_TSO_CWND_BOUND`).
pub const NV_TSO_CWND_BOUND_PKTS: u32 = 80;
/// The first min-RTT reset comes this long after init (tcp_nv.c: `2 * HZ`).
pub const NV_FIRST_RESET_MS: u32 = 2_000;
/// Random reset factor (BASE + byte) >> SHIFT lies in [3/4, 5/4) (tcp_nv.c: 384, >> 9).
pub const NV_RESET_RAND_BASE: u64 = 384;
/// The random part of that factor is one random byte (tcp_nv.c: `get_random_bytes(&rand, 1)`).
pub const NV_RESET_RAND_VALUES: u32 = 256;
/// log2 of the denominator of that factor (512).
pub const NV_RESET_RAND_SHIFT: u32 = 9;
/// Bytes per microsecond to units of 100 bit/s: 8 bit * 1e6 us/s / 100 (tcp_nv.c: 80000).
pub const NV_RATE_SCALE: u64 = 80_000;
/// Bits per second in one rate unit.
pub const NV_RATE_UNIT_BPS: f64 = 100.0;
/// log2 of the denominator of the RTT smoothing weight `nv_rtt_factor` (tcp_nv.c: `>> 8`).
pub const NV_RTT_FACTOR_SHIFT: u32 = 8;
/// The lower RTT bound is base * 205 >> 8, about 80% (tcp_nv.c `tcpnv_init`).
pub const NV_LOWER_BOUND_MULT: u64 = 205;
/// log2 of the denominator of the lower-bound share (tcp_nv.c: `>> 8`).
pub const NV_LOWER_BOUND_SHIFT: u32 = 8;
/// log2 of the denominator of `nv_cong_dec_mult` (tcp_nv.c: `>> 7`, out of 128).
pub const NV_CONG_DEC_SHIFT: u32 = 7;
/// log2 of the denominator of `nv_loss_dec_factor` (tcp_nv.c: `>> 10`, out of 1024).
pub const NV_LOSS_DEC_SHIFT: u32 = 10;
/// log2 of the denominator of `nv_ssthresh_factor` (tcp_nv.c: `>> 3`, out of 8).
pub const NV_SSTHRESH_FACTOR_SHIFT: u32 = 3;
/// Smallest linear-increase divisor for a non-negative growth factor (tcp_nv.c: `max(4U, ..)`).
pub const NV_MIN_AI_CNT: u32 = 4;
/// Lowest growth factor: growth 2^-8 of Reno's (tcp_nv.c: `> -8`).
pub const NV_MIN_GROWTH_FACTOR: i8 = -8;
/// An excess of more than this many packets is decreased proportionally (tcp_nv.c: `> 2`).
pub const NV_PROPORTIONAL_DEC_MIN_PKTS: u32 = 2;
/// Smallest cwnd decrease when congested, and smallest ssthresh on loss, packets (`2U`).
pub const NV_MIN_DEC_PKTS: u32 = 2;
/// The per-connection sample and round counters are 8-bit and saturate here.
pub const NV_COUNTER_MAX: u32 = 255;
/// Stream id of the reset-period draws within the connection's seed.
const NV_RESET_STREAM: u64 = 0x6e76;

/// NV parameters: the kernel module parameters with their defaults, plus the base RTT a
/// BPF_SOCK_OPS_BASE_RTT program would supply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Queued packets allowed in the network on top of cwnd_by_slope (`nv_pad`, 10).
    #[schemars(extend("x-unit" = "packets"))]
    pub nv_pad: u32,
    /// Do not grow when cwnd is within this many packets of max_win (`nv_pad_buffer`, 2).
    #[schemars(extend("x-unit" = "packets"))]
    pub nv_pad_buffer: u32,
    /// Mean interval between min-RTT resets (`nv_reset_period`, 5 s).
    pub nv_reset_period: Dur,
    /// NV never decreases cwnd below this without losses, packets (`nv_min_cwnd`, 2).
    #[schemars(extend("x-unit" = "packets"))]
    pub nv_min_cwnd: u32,
    /// Share of the excess removed on congestion, /128 (`nv_cong_dec_mult`, 30 * 128 / 100 = 38).
    #[schemars(extend("x-unit" = "1/128"))]
    pub nv_cong_dec_mult: u32,
    /// On congestion ssthresh = this * max_win / 8 (`nv_ssthresh_factor`, 8).
    #[schemars(extend("x-unit" = "1/8"))]
    pub nv_ssthresh_factor: u32,
    /// Weight of a new RTT sample in the average, /256 (`nv_rtt_factor`, 128; 0 = no averaging).
    #[schemars(extend("x-unit" = "1/256"))]
    pub nv_rtt_factor: u32,
    /// cwnd kept on a loss, /1024 (`nv_loss_dec_factor`, 819 = 80%).
    #[schemars(extend("x-unit" = "1/1024"))]
    pub nv_loss_dec_factor: u32,
    /// Uncongested decisions (+1) per step up of a negative growth factor
    /// (`nv_cwnd_growth_rate_neg`, 8; 0 = never).
    #[schemars(extend("x-unit" = "decisions"))]
    pub nv_cwnd_growth_rate_neg: u32,
    /// Uncongested decisions (+1) per step up of a non-negative growth factor
    /// (`nv_cwnd_growth_rate_pos`, 0 = never: Reno-like growth).
    #[schemars(extend("x-unit" = "decisions"))]
    pub nv_cwnd_growth_rate_pos: u32,
    /// Samples needed before a decrease (`nv_dec_eval_min_calls`, 60).
    #[schemars(extend("x-unit" = "samples"))]
    pub nv_dec_eval_min_calls: u32,
    /// Samples needed before growth is allowed (`nv_inc_eval_min_calls`, 20).
    #[schemars(extend("x-unit" = "samples"))]
    pub nv_inc_eval_min_calls: u32,
    /// Samples needed before leaving the first slow start on congestion
    /// (`nv_ssthresh_eval_min_calls`, 30).
    #[schemars(extend("x-unit" = "samples"))]
    pub nv_ssthresh_eval_min_calls: u32,
    /// Rounds without a decision after which growth stops (`nv_stop_rtt_cnt`, 10).
    #[schemars(extend("x-unit" = "rounds"))]
    pub nv_stop_rtt_cnt: u32,
    /// Rounds needed before a congestion decision (`nv_rtt_min_cnt`, 2).
    #[schemars(extend("x-unit" = "rounds"))]
    pub nv_rtt_min_cnt: u32,
    /// Known base RTT bounding the RTTs used for the minimum; 0 = none (the kernel's
    /// BPF_SOCK_OPS_BASE_RTT value, none by default).
    pub nv_base_rtt: Dur,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            nv_pad: 10,
            nv_pad_buffer: 2,
            nv_reset_period: Dur(5 * NSEC_PER_SEC),
            nv_min_cwnd: 2,
            nv_cong_dec_mult: 30 * 128 / 100,
            nv_ssthresh_factor: 8,
            nv_rtt_factor: 128,
            nv_loss_dec_factor: 819,
            nv_cwnd_growth_rate_neg: 8,
            nv_cwnd_growth_rate_pos: 0,
            nv_dec_eval_min_calls: 60,
            nv_inc_eval_min_calls: 20,
            nv_ssthresh_eval_min_calls: 30,
            nv_stop_rtt_cnt: 10,
            nv_rtt_min_cnt: 2,
            nv_base_rtt: Dur(0),
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        at_most(
            "nv_rtt_factor",
            self.nv_rtt_factor,
            1 << NV_RTT_FACTOR_SHIFT,
            "a weight out of 256",
        )?;
        at_most(
            "nv_cong_dec_mult",
            self.nv_cong_dec_mult,
            1 << NV_CONG_DEC_SHIFT,
            "a share out of 128",
        )?;
        at_most(
            "nv_loss_dec_factor",
            self.nv_loss_dec_factor,
            1 << NV_LOSS_DEC_SHIFT,
            "a share out of 1024",
        )?;
        at_most(
            "nv_pad_buffer",
            self.nv_pad_buffer,
            self.nv_pad,
            "packets within nv_pad",
        )?;
        let counts = [
            ("nv_dec_eval_min_calls", self.nv_dec_eval_min_calls),
            ("nv_inc_eval_min_calls", self.nv_inc_eval_min_calls),
            (
                "nv_ssthresh_eval_min_calls",
                self.nv_ssthresh_eval_min_calls,
            ),
            ("nv_stop_rtt_cnt", self.nv_stop_rtt_cnt),
            ("nv_rtt_min_cnt", self.nv_rtt_min_cnt),
        ];
        for (name, v) in counts {
            at_most(name, v, NV_COUNTER_MAX, "an 8-bit count")?;
        }
        if self.nv_reset_period.0 < NSEC_PER_MSEC {
            return Err(format!(
                "parameter nv_reset_period = {}ns: expected at least 1ms",
                self.nv_reset_period.0
            ));
        }
        if self.nv_base_rtt.0 / NSEC_PER_USEC > u64::from(u32::MAX) {
            return Err(format!(
                "parameter nv_base_rtt = {}ns: expected at most {}us",
                self.nv_base_rtt.0,
                u32::MAX
            ));
        }
        Ok(())
    }
}

fn at_most(name: &str, v: u32, max: u32, what: &str) -> Result<(), String> {
    if v > max {
        Err(format!(
            "parameter {name} = {v}: expected 0..={max} ({what})"
        ))
    } else {
        Ok(())
    }
}

/// Milliseconds until the next min-RTT reset for a random byte `rand_byte` (0..=255):
/// `period * (384 + rand_byte) / 512`, i.e. [3/4, 5/4) of the period.
pub fn reset_interval_ms(period: Dur, rand_byte: u32) -> u32 {
    let period_ms = period.0 / NSEC_PER_MSEC;
    let ms = (period_ms * (NV_RESET_RAND_BASE + u64::from(rand_byte))) >> NV_RESET_RAND_SHIFT;
    u32::try_from(ms).unwrap_or(u32::MAX)
}

/// Linux `time_after_eq` on 32-bit jiffies (wrap-around safe).
fn time_after_eq(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) as i32 >= 0
}

fn rtt_or_nan(rtt_us: u32) -> f64 {
    if rtt_us == NV_INIT_RTT_US {
        f64::NAN
    } else {
        f64::from(rtt_us)
    }
}

/// TCP-NV (Linux `struct tcpnv`).
#[derive(Debug, Clone)]
pub struct Nv {
    p: Params,
    /// Random reset-period draws; reseeded from the connection's stream in `init`.
    rng: Rng,
    /// When the collected minimum replaces the active one (ms, `jiffies`).
    min_rtt_reset_ms: u32,
    /// Current growth factor: < 0 slower than Reno, 0 Reno, > 0 faster.
    cwnd_growth_factor: i8,
    /// Whether `cong_avoid` may grow cwnd.
    allow_cwnd_growth: bool,
    /// Start the round state over on the next return to Open.
    reset: bool,
    /// Samples since the last decision (saturates at 255).
    eval_call_cnt: u32,
    /// Per-connection minimum window grown when offload hides RTTs, packets.
    min_cwnd: u32,
    /// Rounds since the last decision (saturates at 255).
    rtt_cnt: u32,
    /// Smoothed RTT, microseconds (0 before the first sample).
    last_rtt_us: u32,
    /// Active minimum RTT, microseconds.
    min_rtt_us: u32,
    /// Minimum RTT collected for the next reset, microseconds.
    min_rtt_new_us: u32,
    /// Upper and lower RTT bounds from `nv_base_rtt` (0 = none), microseconds.
    base_rtt_us: u32,
    lower_bound_rtt_us: u32,
    /// Largest rate this round, units of 100 bit/s.
    rtt_max_rate: u32,
    /// The round ends when `snd_una` passes this segment index.
    rtt_start_seq: u64,
    /// `snd_una` at the previous sample (segment index).
    last_snd_una: u64,
    /// Consecutive uncongested decisions.
    no_cong_cnt: u32,
    /// Window for the last round's rate and the queue it implied (for the metrics).
    last_cwnd_by_slope: Option<u32>,
    last_queue_pkts: Option<i64>,
}

pub const INFO: CcInfo = CcInfo {
    name: "nv",
    summary:
        "TCP-NV (New Vegas): cwnd from the delivery rate over the minimum RTT plus a small queue",
    source: "Linux net/ipv4/tcp_nv.c (Brakmo)",
    defaults: defaults_of::<Params>,
    schema: schema_of::<Params>,
    make: |m| {
        let p = params_from::<Params>(m)?;
        p.validate()?;
        Ok(Box::new(Nv::new(p)))
    },
};

impl Nv {
    pub fn new(p: Params) -> Self {
        Nv {
            p,
            rng: Rng::new(0, NV_RESET_STREAM),
            min_rtt_reset_ms: 0,
            cwnd_growth_factor: 0,
            allow_cwnd_growth: false,
            reset: false,
            eval_call_cnt: 0,
            min_cwnd: NV_MIN_CWND_PKTS,
            rtt_cnt: 0,
            last_rtt_us: 0,
            min_rtt_us: NV_INIT_RTT_US,
            min_rtt_new_us: NV_INIT_RTT_US,
            base_rtt_us: 0,
            lower_bound_rtt_us: 0,
            rtt_max_rate: 0,
            rtt_start_seq: 0,
            last_snd_una: 0,
            no_cong_cnt: 0,
            last_cwnd_by_slope: None,
            last_queue_pkts: None,
        }
    }

    /// `tcpnv_reset`: start the round measurement over from `snd_una`.
    fn reset_round(&mut self, tp: &Sock) {
        self.reset = false;
        self.no_cong_cnt = 0;
        self.rtt_cnt = 0;
        self.last_rtt_us = 0;
        self.rtt_max_rate = 0;
        self.rtt_start_seq = tp.snd_una;
        self.eval_call_cnt = 0;
        self.last_snd_una = tp.snd_una;
    }

    /// `nv_get_bounded_rtt`: clip an RTT to [lower bound, base] when a base RTT is known.
    fn bounded_rtt(&self, rtt_us: u32) -> u32 {
        if self.lower_bound_rtt_us > 0 && rtt_us < self.lower_bound_rtt_us {
            self.lower_bound_rtt_us
        } else if self.base_rtt_us > 0 && rtt_us > self.base_rtt_us {
            self.base_rtt_us
        } else {
            rtt_us
        }
    }

    /// Fold one RTT sample into the average and return it.
    fn average_rtt(&mut self, rtt_us: u32) -> u32 {
        if self.p.nv_rtt_factor == 0 {
            return rtt_us;
        }
        let avg = if self.last_rtt_us > 0 {
            let new = u64::from(rtt_us) * u64::from(self.p.nv_rtt_factor);
            let old = u64::from(self.last_rtt_us)
                * u64::from((1 << NV_RTT_FACTOR_SHIFT) - self.p.nv_rtt_factor);
            ((new + old) >> NV_RTT_FACTOR_SHIFT) as u32
        } else {
            self.min_rtt_us = rtt_us.saturating_mul(2);
            rtt_us
        };
        self.last_rtt_us = avg;
        avg
    }

    /// Replace the active minimum by the collected one and schedule the next reset.
    fn reset_min_rtt(&mut self, now_ms: u32) {
        self.min_rtt_us = self.min_rtt_new_us;
        self.min_rtt_new_us = NV_INIT_RTT_US;
        let rand_byte = self.rng.below(NV_RESET_RAND_VALUES);
        self.min_rtt_reset_ms =
            now_ms.wrapping_add(reset_interval_ms(self.p.nv_reset_period, rand_byte));
        self.min_cwnd = (self.min_cwnd / 2).max(NV_MIN_CWND_PKTS);
    }

    /// The once-per-round decision, at the ACK that ends the round.
    fn end_round(&mut self, tp: &mut Sock, bytes_acked: u64) {
        self.rtt_start_seq = tp.snd_nxt;
        self.rtt_cnt = (self.rtt_cnt + 1).min(NV_COUNTER_MAX);

        // One ACK for a whole window: offload or coalescing hides the RTTs.
        let mss = u64::from(tp.mss_cache);
        if self.eval_call_cnt == 1
            && bytes_acked >= u64::from(self.min_cwnd - 1) * mss
            && self.min_cwnd <= NV_TSO_CWND_BOUND_PKTS
        {
            self.min_cwnd = (self.min_cwnd + NV_MIN_CWND_GROW_PKTS).min(NV_TSO_CWND_BOUND_PKTS + 1);
            self.rtt_start_seq = tp.snd_nxt + u64::from(self.min_cwnd);
            self.eval_call_cnt = 0;
            self.allow_cwnd_growth = true;
            return;
        }

        let cwnd_by_slope = (u64::from(self.rtt_max_rate) * u64::from(self.min_rtt_us)
            / (NV_RATE_SCALE * mss.max(1))) as u32;
        let max_win = cwnd_by_slope.saturating_add(self.p.nv_pad);
        self.last_cwnd_by_slope = Some(cwnd_by_slope);
        self.last_queue_pkts = Some(i64::from(tp.snd_cwnd) - i64::from(cwnd_by_slope));

        if tp.snd_cwnd > max_win {
            if self.rtt_cnt < self.p.nv_rtt_min_cnt {
                return;
            } else if tp.snd_ssthresh == TCP_INFINITE_SSTHRESH {
                if self.eval_call_cnt < self.p.nv_ssthresh_eval_min_calls {
                    return;
                }
            } else if self.eval_call_cnt < self.p.nv_dec_eval_min_calls {
                if self.allow_cwnd_growth && self.rtt_cnt > self.p.nv_stop_rtt_cnt {
                    self.allow_cwnd_growth = false;
                }
                return;
            }
            self.allow_cwnd_growth = false;
            let ssthresh = (u64::from(self.p.nv_ssthresh_factor) * u64::from(max_win))
                >> NV_SSTHRESH_FACTOR_SHIFT;
            tp.snd_ssthresh = u32::try_from(ssthresh).unwrap_or(u32::MAX);
            let excess = tp.snd_cwnd - max_win;
            if excess > NV_PROPORTIONAL_DEC_MIN_PKTS {
                let dec = ((u64::from(excess) * u64::from(self.p.nv_cong_dec_mult))
                    >> NV_CONG_DEC_SHIFT) as u32;
                tp.set_cwnd(tp.snd_cwnd - dec.max(NV_MIN_DEC_PKTS));
            } else if self.p.nv_cong_dec_mult > 0 {
                tp.set_cwnd(max_win);
            }
            if self.cwnd_growth_factor > 0 {
                self.cwnd_growth_factor = 0;
            }
            self.no_cong_cnt = 0;
        } else if tp.snd_cwnd <= max_win - self.p.nv_pad_buffer {
            if self.eval_call_cnt < self.p.nv_inc_eval_min_calls {
                return;
            }
            self.allow_cwnd_growth = true;
            self.no_cong_cnt += 1;
            let f = self.cwnd_growth_factor;
            let (rate_neg, rate_pos) = (
                self.p.nv_cwnd_growth_rate_neg,
                self.p.nv_cwnd_growth_rate_pos,
            );
            if (f < 0 && rate_neg > 0 && self.no_cong_cnt > rate_neg)
                || (f >= 0 && rate_pos > 0 && self.no_cong_cnt > rate_pos)
            {
                self.cwnd_growth_factor = f.saturating_add(1);
                self.no_cong_cnt = 0;
            }
        } else {
            return;
        }

        self.eval_call_cnt = 0;
        self.rtt_cnt = 0;
        self.rtt_max_rate = 0;
        if tp.snd_cwnd < self.p.nv_min_cwnd {
            tp.set_cwnd(self.p.nv_min_cwnd);
        }
    }
}

impl CongestionControl for Nv {
    fn name(&self) -> &'static str {
        "nv"
    }

    fn init(&mut self, tp: &mut Sock, rng: &mut Rng) {
        self.reset_round(tp);
        let base_us = (self.p.nv_base_rtt.0 / NSEC_PER_USEC) as u32;
        self.base_rtt_us = base_us;
        self.lower_bound_rtt_us =
            ((u64::from(base_us) * NV_LOWER_BOUND_MULT) >> NV_LOWER_BOUND_SHIFT) as u32;
        self.allow_cwnd_growth = true;
        self.min_rtt_reset_ms = tp.jiffies().wrapping_add(NV_FIRST_RESET_MS);
        self.min_rtt_us = NV_INIT_RTT_US;
        self.min_rtt_new_us = NV_INIT_RTT_US;
        self.min_cwnd = NV_MIN_CWND_PKTS;
        self.cwnd_growth_factor = 0;
        let seed = (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32());
        self.rng = Rng::new(seed, NV_RESET_STREAM);
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let kept =
            (u64::from(tp.snd_cwnd) * u64::from(self.p.nv_loss_dec_factor)) >> NV_LOSS_DEC_SHIFT;
        (kept as u32).max(NV_MIN_DEC_PKTS)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, mut acked: u32) {
        if !tp.is_cwnd_limited() || !self.allow_cwnd_growth {
            return;
        }
        if tp.in_slow_start() {
            acked = tp.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let f = self.cwnd_growth_factor;
        let cnt = if f < 0 {
            tp.snd_cwnd.saturating_mul(1 << f.unsigned_abs())
        } else {
            NV_MIN_AI_CNT.max(tp.snd_cwnd.checked_shr(f as u32).unwrap_or(0))
        };
        tp.cong_avoid_ai(cnt, acked);
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        match new_state {
            CaState::Open if self.reset => self.reset_round(tp),
            CaState::Loss | CaState::Cwr | CaState::Recovery => {
                self.reset = true;
                self.allow_cwnd_growth = false;
                if new_state == CaState::Loss {
                    self.cwnd_growth_factor = self.cwnd_growth_factor.min(0);
                    if self.p.nv_cwnd_growth_rate_neg > 0
                        && self.cwnd_growth_factor > NV_MIN_GROWTH_FACTOR
                    {
                        self.cwnd_growth_factor -= 1;
                    }
                }
            }
            _ => {}
        }
    }

    fn pkts_acked(&mut self, tp: &mut Sock, sample: &AckSample) {
        if sample.rtt_us < 0 || !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            return;
        }
        let bytes_acked = tp.snd_una.saturating_sub(self.last_snd_una) * u64::from(tp.mss_cache);
        self.last_snd_una = tp.snd_una;
        if sample.in_flight == 0 {
            return;
        }

        let rtt_us = u32::try_from(sample.rtt_us).unwrap_or(u32::MAX);
        let avg_rtt = self.average_rtt(rtt_us);
        let rate = u64::from(sample.in_flight) * NV_RATE_SCALE / u64::from(avg_rtt.max(1));
        self.rtt_max_rate = self
            .rtt_max_rate
            .max(u32::try_from(rate).unwrap_or(u32::MAX));
        self.eval_call_cnt = (self.eval_call_cnt + 1).min(NV_COUNTER_MAX);

        let bounded = self.bounded_rtt(avg_rtt);
        self.min_rtt_us = self.min_rtt_us.min(bounded);
        self.min_rtt_new_us = self.min_rtt_new_us.min(bounded);

        let now_ms = tp.jiffies();
        if time_after_eq(now_ms, self.min_rtt_reset_ms) {
            self.reset_min_rtt(now_ms);
        }

        if self.rtt_start_seq < tp.snd_una {
            self.end_round(tp, bytes_acked);
        }
    }

    fn model(&self) -> Vec<ModelValue> {
        let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
        vec![
            ("base_rtt_us", rtt_or_nan(self.min_rtt_us)),
            ("next_base_rtt_us", rtt_or_nan(self.min_rtt_new_us)),
            (
                "avg_rtt_us",
                if self.last_rtt_us == 0 {
                    f64::NAN
                } else {
                    f64::from(self.last_rtt_us)
                },
            ),
            (
                "max_rate_bps",
                f64::from(self.rtt_max_rate) * NV_RATE_UNIT_BPS,
            ),
            (
                "cwnd_by_slope_pkts",
                opt(self.last_cwnd_by_slope.map(f64::from)),
            ),
            ("queue_pkts", opt(self.last_queue_pkts.map(|q| q as f64))),
            (
                "growth_allowed",
                f64::from(u8::from(self.allow_cwnd_growth)),
            ),
            ("growth_factor", f64::from(self.cwnd_growth_factor)),
            ("min_cwnd_pkts", f64::from(self.min_cwnd)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// A cwnd-limited socket whose unacknowledged data starts at segment 100.
    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(MSS, cwnd);
        s.snd_ssthresh = ssthresh;
        s.max_packets_out = cwnd;
        s.is_cwnd_limited = true;
        s.snd_una = 100;
        s.snd_nxt = 100 + u64::from(cwnd);
        s
    }

    fn nv_with(p: Params, tp: &mut Sock) -> Nv {
        let mut cc = Nv::new(p);
        cc.init(tp, &mut Rng::new(7, 1));
        cc
    }

    fn nv(tp: &mut Sock) -> Nv {
        nv_with(Params::default(), tp)
    }

    fn ack(cc: &mut Nv, tp: &mut Sock, rtt_us: i64, delivered_pkts: u32) {
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us,
                in_flight: delivered_pkts * MSS,
            },
        );
    }

    /// `calls` samples, the last of which ACKs one segment past the round boundary. Every sample
    /// has the given RTT and reports 30 packets delivered over it.
    fn round(cc: &mut Nv, tp: &mut Sock, calls: u32, rtt_us: i64) {
        for _ in 1..calls {
            ack(cc, tp, rtt_us, 30);
        }
        tp.snd_una = cc.rtt_start_seq + 1;
        tp.snd_nxt = tp.snd_una + u64::from(tp.snd_cwnd);
        ack(cc, tp, rtt_us, 30);
    }

    #[test]
    fn rate_and_smoothed_rtt_per_sample() {
        let mut tp = sock(20, 10);
        let mut cc = nv(&mut tp);
        // First sample: avg = 10000, min = 2 * 10000 then 10000;
        // rate = 14480 B * 80000 / 10000 us = 115840 (x 100 bit/s = 11.584 Mbit/s).
        ack(&mut cc, &mut tp, 10_000, 10);
        assert_eq!(
            (cc.last_rtt_us, cc.min_rtt_us, cc.min_rtt_new_us),
            (10_000, 10_000, 10_000)
        );
        assert_eq!((cc.rtt_max_rate, cc.eval_call_cnt), (115_840, 1));
        // avg = (20000 * 128 + 10000 * 128) >> 8 = 15000; rate 14480 * 80000 / 15000 = 77226
        // does not beat the round's maximum.
        ack(&mut cc, &mut tp, 20_000, 10);
        assert_eq!(
            (cc.last_rtt_us, cc.min_rtt_us, cc.rtt_max_rate),
            (15_000, 10_000, 115_840)
        );
        // avg = (5000 * 128 + 15000 * 128) >> 8 = 10000; rate = 28960 * 80000 / 10000 = 231680.
        ack(&mut cc, &mut tp, 5_000, 20);
        assert_eq!(
            (cc.last_rtt_us, cc.rtt_max_rate, cc.eval_call_cnt),
            (10_000, 231_680, 3)
        );
        assert_eq!(cc.model()[3], ("max_rate_bps", 23_168_000.0));
    }

    #[test]
    fn growth_is_allowed_after_enough_uncongested_samples() {
        let mut tp = sock(20, 10);
        let mut cc = nv(&mut tp);
        cc.allow_cwnd_growth = false;
        // rate = 30 * 1448 * 80000 / 10000 = 347520; cwnd_by_slope = 347520 * 10000 /
        // (80000 * 1448) = 30; max_win = 40; cwnd 20 <= 40 - 2. But 19 samples < 20: wait.
        round(&mut cc, &mut tp, 19, 10_000);
        assert!(!cc.allow_cwnd_growth);
        assert_eq!(
            (cc.eval_call_cnt, cc.rtt_cnt, cc.last_cwnd_by_slope),
            (19, 1, Some(30))
        );
        // One more sample in the next round: 20 samples, growth allowed, counters start over.
        round(&mut cc, &mut tp, 1, 10_000);
        assert!(cc.allow_cwnd_growth);
        assert_eq!(
            (
                cc.eval_call_cnt,
                cc.rtt_cnt,
                cc.rtt_max_rate,
                cc.no_cong_cnt
            ),
            (0, 0, 0, 1)
        );
        assert_eq!(cc.rtt_start_seq, tp.snd_nxt);
        assert_eq!(tp.snd_cwnd, 20);
    }

    #[test]
    fn hold_between_max_win_minus_buffer_and_max_win() {
        // cwnd 39 in (38, 40]: neither congested nor free to grow.
        let mut tp = sock(39, 10);
        let mut cc = nv(&mut tp);
        cc.allow_cwnd_growth = false;
        round(&mut cc, &mut tp, 70, 10_000);
        round(&mut cc, &mut tp, 1, 10_000);
        assert_eq!(
            (tp.snd_cwnd, tp.snd_ssthresh, cc.allow_cwnd_growth),
            (39, 10, false)
        );
        assert_eq!((cc.eval_call_cnt, cc.rtt_cnt), (71, 2));
    }

    #[test]
    fn congestion_decreases_by_a_share_of_the_excess() {
        let mut tp = sock(100, 50);
        let mut cc = nv(&mut tp);
        // max_win 40 (see above). Round 1: only one round seen (< nv_rtt_min_cnt 2): wait.
        round(&mut cc, &mut tp, 30, 10_000);
        assert_eq!(tp.snd_cwnd, 100);
        // Round 2: 60 samples. ssthresh = 8 * 40 >> 3 = 40; excess 60 > 2:
        // dec = max(2, 60 * 38 >> 7 = 17) = 17, cwnd 83.
        round(&mut cc, &mut tp, 30, 10_000);
        assert_eq!(
            (tp.snd_cwnd, tp.snd_ssthresh, cc.allow_cwnd_growth),
            (83, 40, false)
        );
        assert_eq!(cc.last_queue_pkts, Some(70));
        // Growth stays off in cong_avoid.
        cc.cong_avoid(&mut tp, 100);
        assert_eq!(tp.snd_cwnd, 83);
    }

    #[test]
    fn small_excess_snaps_to_max_win() {
        let mut tp = sock(42, 20);
        let mut cc = nv(&mut tp);
        // Excess 42 - 40 = 2 is not above 2: cwnd = max_win = 40.
        round(&mut cc, &mut tp, 30, 10_000);
        round(&mut cc, &mut tp, 30, 10_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (40, 40));
    }

    #[test]
    fn first_slow_start_ends_after_fewer_samples() {
        let mut tp = sock(100, TCP_INFINITE_SSTHRESH);
        let mut cc = nv(&mut tp);
        round(&mut cc, &mut tp, 15, 10_000);
        // 29 samples over two rounds: not yet nv_ssthresh_eval_min_calls (30).
        round(&mut cc, &mut tp, 14, 10_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (100, TCP_INFINITE_SSTHRESH));
        // The 30th: ssthresh 40, cwnd 100 - 17 = 83.
        round(&mut cc, &mut tp, 1, 10_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (83, 40));
    }

    #[test]
    fn growth_stops_after_stop_rtt_cnt_rounds_without_decision() {
        let mut tp = sock(100, 50);
        let mut cc = nv(&mut tp);
        // Two samples a round: congested but too few samples for a decision (< 60). After more
        // than nv_stop_rtt_cnt (10) such rounds growth stops, cwnd untouched.
        for _ in 0..10 {
            round(&mut cc, &mut tp, 2, 10_000);
        }
        assert!(cc.allow_cwnd_growth);
        round(&mut cc, &mut tp, 2, 10_000);
        assert!(!cc.allow_cwnd_growth);
        assert_eq!((tp.snd_cwnd, cc.rtt_cnt, cc.eval_call_cnt), (100, 11, 22));
    }

    #[test]
    fn cwnd_is_kept_at_least_nv_min_cwnd() {
        let p = Params {
            nv_pad: 0,
            nv_pad_buffer: 0,
            nv_min_cwnd: 5,
            ..Params::default()
        };
        let mut tp = sock(4, 2);
        let mut cc = nv_with(p, &mut tp);
        // 3 packets per 10 ms: cwnd_by_slope 3 = max_win; excess 1: cwnd = 3, then raised to 5.
        for _ in 0..2 {
            for _ in 1..30 {
                ack(&mut cc, &mut tp, 10_000, 3);
            }
            tp.snd_una = cc.rtt_start_seq + 1;
            ack(&mut cc, &mut tp, 10_000, 3);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (5, 3));
    }

    #[test]
    fn loss_keeps_eighty_percent_and_slows_growth() {
        let mut tp = sock(100, 50);
        let mut cc = nv(&mut tp);
        // 100 * 819 >> 10 = 79; 2 * 819 >> 10 = 1, raised to 2.
        assert_eq!(cc.ssthresh(&tp), 79);
        assert_eq!(cc.ssthresh(&sock(2, 50)), 2);
        cc.cwnd_growth_factor = 2;
        cc.set_state(&mut tp, CaState::Loss);
        // A positive factor drops to 0, then one step below.
        assert_eq!(
            (cc.cwnd_growth_factor, cc.allow_cwnd_growth, cc.reset),
            (-1, false, true)
        );
        cc.set_state(&mut tp, CaState::Recovery);
        assert_eq!(cc.cwnd_growth_factor, -1);
        for _ in 0..10 {
            cc.set_state(&mut tp, CaState::Loss);
        }
        assert_eq!(cc.cwnd_growth_factor, -8);
        // Back to Open: the round state starts over at snd_una.
        cc.eval_call_cnt = 17;
        tp.snd_una = 500;
        cc.set_state(&mut tp, CaState::Open);
        assert_eq!(
            (
                cc.reset,
                cc.eval_call_cnt,
                cc.rtt_start_seq,
                cc.last_snd_una
            ),
            (false, 0, 500, 500)
        );
    }

    #[test]
    fn growth_factor_sets_the_linear_increase() {
        let mut tp = sock(10, 5);
        let mut cc = nv(&mut tp);
        // Factor 0: one packet per max(4, 10) = 10 ACKed packets.
        cc.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd, 11);
        // Factor -1: one per 11 << 1 = 22.
        cc.cwnd_growth_factor = -1;
        cc.cong_avoid(&mut tp, 21);
        assert_eq!(tp.snd_cwnd, 11);
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 12);
        // Factor 2: one per max(4, 12 >> 2 = 3) = 4.
        cc.cwnd_growth_factor = 2;
        tp.snd_cwnd_cnt = 0;
        cc.cong_avoid(&mut tp, 8);
        assert_eq!(tp.snd_cwnd, 14);
        // Slow start first, only while growth is allowed.
        let mut tp = sock(10, 100);
        cc.cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd, 15);
        cc.allow_cwnd_growth = false;
        cc.cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd, 15);
    }

    #[test]
    fn negative_growth_factor_recovers_after_uncongested_decisions() {
        let mut tp = sock(20, 10);
        let mut cc = nv(&mut tp);
        cc.cwnd_growth_factor = -1;
        // nv_cwnd_growth_rate_neg 8: the 9th uncongested decision steps the factor up.
        for _ in 0..8 {
            round(&mut cc, &mut tp, 20, 10_000);
        }
        assert_eq!((cc.cwnd_growth_factor, cc.no_cong_cnt), (-1, 8));
        round(&mut cc, &mut tp, 20, 10_000);
        assert_eq!((cc.cwnd_growth_factor, cc.no_cong_cnt), (0, 0));
        // With nv_cwnd_growth_rate_pos 0 a factor of 0 stays.
        for _ in 0..20 {
            round(&mut cc, &mut tp, 20, 10_000);
        }
        assert_eq!(cc.cwnd_growth_factor, 0);
    }

    #[test]
    fn reset_interval_is_three_quarters_to_five_quarters_of_the_period() {
        let five_s = Dur(5 * NSEC_PER_SEC);
        // 5000 * 384 >> 9 = 3750; 5000 * 512 >> 9 = 5000; 5000 * 639 >> 9 = 6240 (6240.2).
        assert_eq!(reset_interval_ms(five_s, 0), 3_750);
        assert_eq!(reset_interval_ms(five_s, 128), 5_000);
        assert_eq!(reset_interval_ms(five_s, 255), 6_240);
        // 1500 * 484 >> 9 = 1417 (1417.97).
        assert_eq!(reset_interval_ms(Dur(1_500 * NSEC_PER_MSEC), 100), 1_417);
    }

    #[test]
    fn base_rtt_is_replaced_every_reset_period() {
        // No averaging, so each sample is its own RTT; snd_una stays put (no round ends).
        let p = Params {
            nv_rtt_factor: 256,
            ..Params::default()
        };
        let mut tp = sock(20, 10);
        let mut cc = nv_with(p, &mut tp);
        cc.min_cwnd = 10;
        let at = |cc: &mut Nv, tp: &mut Sock, ms: u32, rtt_us: i64| {
            tp.now = u64::from(ms) * NSEC_PER_MSEC;
            ack(cc, tp, rtt_us, 10);
        };
        assert_eq!(cc.min_rtt_reset_ms, 2_000);
        at(&mut cc, &mut tp, 0, 10_000);
        at(&mut cc, &mut tp, 1_999, 12_000);
        assert_eq!((cc.min_rtt_us, cc.min_rtt_new_us), (10_000, 10_000));
        // First reset at 2 s: the collected minimum (still 10000) becomes active, collection
        // restarts, the next reset is 3750..6240 ms later, min_cwnd halves to max(5, 4).
        at(&mut cc, &mut tp, 2_000, 12_000);
        assert_eq!(
            (cc.min_rtt_us, cc.min_rtt_new_us, cc.min_cwnd),
            (10_000, NV_INIT_RTT_US, 5)
        );
        let next = cc.min_rtt_reset_ms;
        assert!((2_000 + 3_750..=2_000 + 6_240).contains(&next), "{next}");
        // The queue persists: only 12000 is collected from now on.
        at(&mut cc, &mut tp, 2_500, 12_000);
        at(&mut cc, &mut tp, next - 1, 12_000);
        assert_eq!((cc.min_rtt_us, cc.min_rtt_new_us), (10_000, 12_000));
        // Second reset: the base RTT rises to 12000; min_cwnd = max(2, 4) = 4.
        at(&mut cc, &mut tp, next, 12_000);
        assert_eq!(
            (cc.min_rtt_us, cc.min_rtt_new_us, cc.min_cwnd),
            (12_000, NV_INIT_RTT_US, 4)
        );
        assert!(cc.min_rtt_reset_ms > next);
    }

    #[test]
    fn reset_schedule_is_a_function_of_the_seed() {
        let draw = |seed: u64| {
            let mut tp = sock(20, 10);
            let mut cc = Nv::new(Params::default());
            cc.init(&mut tp, &mut Rng::new(seed, 1));
            (0..5)
                .map(|_| {
                    tp.now = u64::from(cc.min_rtt_reset_ms) * NSEC_PER_MSEC;
                    ack(&mut cc, &mut tp, 10_000, 10);
                    cc.min_rtt_reset_ms
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert!(draw(3)
            .windows(2)
            .all(|w| (3_750..=6_240).contains(&(w[1] - w[0]))));
    }

    #[test]
    fn known_base_rtt_bounds_the_minimum() {
        let p = Params {
            nv_base_rtt: Dur(9 * NSEC_PER_MSEC),
            ..Params::default()
        };
        // Lower bound 9000 * 205 >> 8 = 7207: a 5000 us sample counts as 7207.
        let mut tp = sock(20, 10);
        let mut cc = nv_with(p.clone(), &mut tp);
        ack(&mut cc, &mut tp, 5_000, 10);
        assert_eq!((cc.lower_bound_rtt_us, cc.min_rtt_us), (7_207, 7_207));
        // Upper bound 9000: a 20000 us first sample counts as 9000 (min would be 20000).
        let mut cc = nv_with(p, &mut tp);
        ack(&mut cc, &mut tp, 20_000, 10);
        assert_eq!((cc.min_rtt_us, cc.min_rtt_new_us), (9_000, 9_000));
    }

    #[test]
    fn one_ack_per_round_grows_the_offload_minimum() {
        let mut tp = sock(20, 10);
        let mut cc = nv(&mut tp);
        cc.allow_cwnd_growth = false;
        // A single sample ends the round and ACKs 4 segments >= (4 - 1): min_cwnd 4 -> 6 and
        // the round is stretched to snd_nxt + 6.
        tp.snd_una = 104;
        ack(&mut cc, &mut tp, 10_000, 4);
        assert_eq!(
            (cc.min_cwnd, cc.rtt_start_seq, cc.eval_call_cnt),
            (6, 120 + 6, 0)
        );
        assert!(cc.allow_cwnd_growth);
        assert_eq!(cc.last_cwnd_by_slope, None);
        // Next round: a sample without delivery data moves the ACK mark to 125; then the one
        // sample of the round ACKs 129 - 125 = 4 segments < (6 - 1): a normal evaluation.
        tp.snd_una = 125;
        ack(&mut cc, &mut tp, 10_000, 0);
        tp.snd_una = 129;
        tp.snd_nxt = 150;
        ack(&mut cc, &mut tp, 10_000, 4);
        assert_eq!(
            (cc.min_cwnd, cc.rtt_start_seq, cc.eval_call_cnt),
            (6, 150, 1)
        );
        assert_eq!(cc.last_cwnd_by_slope, Some(4));
    }

    #[test]
    fn samples_count_only_in_open_and_disorder_with_data_delivered() {
        let mut tp = sock(20, 10);
        let mut cc = nv(&mut tp);
        tp.ca_state = CaState::Recovery;
        tp.snd_una = 101;
        ack(&mut cc, &mut tp, 10_000, 10);
        assert_eq!((cc.eval_call_cnt, cc.last_snd_una), (0, 100));
        tp.ca_state = CaState::Disorder;
        ack(&mut cc, &mut tp, 10_000, 0);
        assert_eq!(
            (cc.eval_call_cnt, cc.last_snd_una, cc.last_rtt_us),
            (0, 101, 0)
        );
        ack(&mut cc, &mut tp, -1, 10);
        assert_eq!(cc.eval_call_cnt, 0);
        tp.snd_una = 100;
        ack(&mut cc, &mut tp, 10_000, 10);
        assert_eq!(cc.eval_call_cnt, 1);
    }

    #[test]
    fn parameters_are_validated_with_the_offending_value() {
        let err = |k: &str, v: serde_json::Value| {
            let mut m = serde_json::Map::new();
            m.insert(k.into(), v);
            (INFO.make)(&m).err().unwrap()
        };
        assert_eq!(
            err("nv_pad_buffer", serde_json::json!(11)),
            "parameter nv_pad_buffer = 11: expected 0..=10 (packets within nv_pad)"
        );
        assert_eq!(
            err("nv_rtt_factor", serde_json::json!(257)),
            "parameter nv_rtt_factor = 257: expected 0..=256 (a weight out of 256)"
        );
        assert_eq!(
            err("nv_dec_eval_min_calls", serde_json::json!(300)),
            "parameter nv_dec_eval_min_calls = 300: expected 0..=255 (an 8-bit count)"
        );
        assert_eq!(
            err("nv_reset_period", serde_json::json!("0s")),
            "parameter nv_reset_period = 0ns: expected at least 1ms"
        );
        assert!(err("nv_reset_period", serde_json::json!("soon"))
            .starts_with("parameter nv_reset_period = \"soon\":"));
        let mut m = serde_json::Map::new();
        m.insert("nv_reset_period".into(), serde_json::json!("10s"));
        m.insert("nv_pad".into(), serde_json::json!(20));
        assert!((INFO.make)(&m).is_ok());
    }

    #[test]
    fn defaults_are_the_kernel_module_parameters() {
        let d = (INFO.defaults)();
        assert_eq!(d["nv_cong_dec_mult"], 38);
        assert_eq!(d["nv_reset_period"], "5000000000ns");
        assert_eq!(d["nv_loss_dec_factor"], 819);
        assert_eq!(d["nv_base_rtt"], "0ns");
    }

    #[test]
    fn model_reports_base_rtt_queue_and_growth() {
        let mut tp = sock(100, 50);
        let mut cc = nv(&mut tp);
        let m = cc.model();
        assert!(m[0].1.is_nan() && m[4].1.is_nan() && m[5].1.is_nan());
        round(&mut cc, &mut tp, 30, 10_000);
        let m = cc.model();
        assert_eq!(m[0], ("base_rtt_us", 10_000.0));
        assert_eq!(m[4], ("cwnd_by_slope_pkts", 30.0));
        assert_eq!(m[5], ("queue_pkts", 70.0));
        assert_eq!(m[6], ("growth_allowed", 1.0));
        assert_eq!(m[8], ("min_cwnd_pkts", 4.0));
    }
}
