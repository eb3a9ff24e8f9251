//! PIE, Proportional Integral controller Enhanced (RFC 8033; Linux net/sched/sch_pie.c and
//! include/net/pie.h).
//!
//! PIE drops (or ECN-marks) arriving packets at random with a probability `p` that a
//! proportional-integral controller updates every `tupdate` (15 ms) from the queueing delay:
//!
//! ```text
//! p += alpha * (qdelay - target) + beta * (qdelay - qdelay_old)
//! ```
//!
//! with target 15 ms, alpha 0.125 and beta 1.25 per second of delay error. While `p` is small
//! both gains are scaled down (RFC 8033; Linux: /2 below 10%, and a further /4 per
//! decade below 1%, down to /2048 below 0.0001%) so the controller does not jump; above 10% one
//! update may add at most 2%; a delay above 250 ms adds another 2%; two updates in a row with
//! no delay multiply `p` by 63/64. When `p` is 0 and the delay has stayed under target/2 for
//! two updates, the measurement state (burst allowance, de-randomisation) is reset.
//!
//! The queueing delay is either the sojourn time of the last dequeued packet (timestamps, the
//! Linux default) or, with `dq_rate_estimator`, Little's law: backlog / departure rate, the
//! rate averaged (weight 1/8) over dequeue cycles of at least 16 KiB (`QUEUE_THRESHOLD`).
//!
//! On enqueue, beyond the `limit` (1000 packets) a packet is tail-dropped. Otherwise no early
//! drop happens during the burst allowance (150 ms after a reset, consumed by the time that
//! passes between dequeues), when the delay is under target/2 and `p` under 20%, or when fewer
//! than two MTUs are queued. Otherwise the drop is de-randomised (RFC 8033):
//! `accu_prob` sums `p` over arrivals; below 0.85 nothing is dropped, from 8.5 on a drop is
//! certain, in between a packet is dropped with probability `p`; a drop clears `accu_prob`.
//! With ECN, an early "drop" of an ECN-capable packet becomes a CE mark while `p <= 10%`.
//! With `bytemode`, `p` is scaled by packet size / MTU.
//!
//! Linux arithmetic is kept: probabilities are fixed point with `MAX_PROB = 2^56 - 1` meaning
//! 1, times are psched ticks of 64 ns, `alpha` and `beta` are integers in units of 1/16. The
//! update timer is modelled exactly but lazily: pending updates run at the next enqueue or
//! dequeue (nothing they read changes between packet events), the first one `HZ/2` (500 ms)
//! after the qdisc is created at t = 0 as in `pie_init`. Random draws come from the qdisc's own
//! [`Rng`] stream (64 bits per draw, as `get_random_bytes(&rnd, 8)`).

use super::{set_ce, PacketQueue, Qdisc, QdiscStats};
use crate::net::packet::{Packet, PacketRef, Packets};
use crate::sim::Rng;
use crate::units::{Bytes, Nanos, NSEC_PER_MSEC, NSEC_PER_SEC};

/// Default target queueing delay: 15 ms (`pie_params_init`, RFC 8033).
pub const PIE_TARGET: Nanos = 15 * NSEC_PER_MSEC;
/// Default probability update interval: 15 ms (`pie_params_init`).
pub const PIE_TUPDATE: Nanos = 15 * NSEC_PER_MSEC;
/// Default packet limit (`pie_params_init`).
pub const PIE_LIMIT_PACKETS: u32 = 1000;
/// Default alpha, in 1/16: 2/16 = 0.125 (`pie_params_init`).
pub const PIE_ALPHA: u32 = 2;
/// Default beta, in 1/16: 20/16 = 1.25 (`pie_params_init`).
pub const PIE_BETA: u32 = 20;
/// Largest alpha or beta `tc` accepts (units of 1/16, so 2.0).
pub const PIE_MAX_GAIN: u32 = 32;
/// Probability 1 in fixed point (`MAX_PROB`, pie.h).
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// Psched ticks are 2^6 ns (`PSCHED_SHIFT`, include/net/pkt_sched.h).
const PSCHED_SHIFT: u32 = 6;
const PSCHED_TICKS_PER_SEC: u64 = NSEC_PER_SEC >> PSCHED_SHIFT;
/// Burst allowance after a reset: 150 ms (`pie_vars_init`, RFC 8033).
const BURST_ALLOWANCE: Nanos = 150 * NSEC_PER_MSEC;
/// Delay above which `p` gets an extra 2% per update (sch_pie.c, RFC 8033).
const HIGH_DELAY: Nanos = 250 * NSEC_PER_MSEC;
/// Bytes per departure-rate measurement cycle (`QUEUE_THRESHOLD`, pie.h).
const QUEUE_THRESHOLD: u64 = 16384;
/// Fixed-point shift of the departure rate (`PIE_SCALE`).
const PIE_SCALE: u32 = 8;
/// First probability update after creation: `HZ / 2` jiffies (`pie_init`).
const FIRST_UPDATE: Nanos = NSEC_PER_SEC / 2;

/// Nanoseconds to psched ticks (`PSCHED_NS2TICKS`).
fn ticks(ns: Nanos) -> u64 {
    ns >> PSCHED_SHIFT
}

/// PIE parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PieParams {
    pub target: Nanos,
    pub tupdate: Nanos,
    /// Packet limit.
    pub limit: u32,
    /// Units of 1/16.
    pub alpha: u32,
    /// Units of 1/16.
    pub beta: u32,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
    /// Device MTU, bytes (the two-MTU rule and bytemode).
    pub mtu: u32,
}

impl PieParams {
    /// Linux defaults (`pie_params_init`) for a device of `mtu` bytes.
    pub fn new(mtu: u32) -> Self {
        PieParams {
            target: PIE_TARGET,
            tupdate: PIE_TUPDATE,
            limit: PIE_LIMIT_PACKETS,
            alpha: PIE_ALPHA,
            beta: PIE_BETA,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
            mtu,
        }
    }
}

/// PIE state (Linux `struct pie_vars`); times in psched ticks, probabilities over `MAX_PROB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PieVars {
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    /// Last dequeue (timestamps) or start of the rate measurement; `None` when invalid.
    pub dq_tstamp: Option<u64>,
    pub prob: u64,
    pub accu_prob: u64,
    /// Bytes dequeued in the current rate measurement; `None` when not measuring.
    pub dq_count: Option<u64>,
    /// Departure rate, bytes per tick << `PIE_SCALE`.
    pub avg_dq_rate: u32,
}

impl Default for PieVars {
    fn default() -> Self {
        let mut v = PieVars {
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: None,
            prob: 0,
            accu_prob: 0,
            dq_count: None,
            avg_dq_rate: 0,
        };
        v.reset_measurement();
        v
    }
}

impl PieVars {
    /// `pie_vars_init`: restore the burst allowance and restart the measurements.
    fn reset_measurement(&mut self) {
        self.burst_time = ticks(BURST_ALLOWANCE);
        self.dq_tstamp = None;
        self.accu_prob = 0;
        self.dq_count = None;
        self.avg_dq_rate = 0;
    }

    /// `pie_drop_early`: should a packet of `size` bytes arriving to `backlog` bytes be
    /// dropped (or marked)?
    fn drop_early(&mut self, p: &PieParams, backlog: Bytes, size: u32, rng: &mut Rng) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < ticks(p.target) / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * p.mtu as Bytes {
            return false;
        }
        let local_prob = if p.bytemode && size <= p.mtu {
            size as u64 * (self.prob / p.mtu as u64)
        } else {
            self.prob
        };
        if local_prob == 0 {
            self.accu_prob = 0;
        } else {
            self.accu_prob = self.accu_prob.wrapping_add(local_prob);
        }
        if self.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if self.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        let rnd = ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64;
        if (rnd >> 8) < local_prob {
            self.accu_prob = 0;
            return true;
        }
        false
    }

    /// `pie_process_dequeue`: update the delay or rate measurement after `pkt` left at `now`,
    /// leaving `backlog` bytes, and consume burst allowance.
    fn process_dequeue(&mut self, p: &PieParams, pkt: &Packet, now: Nanos, backlog: Bytes) {
        let now = ticks(now);
        let dtime = if !p.dq_rate_estimator {
            self.qdelay = now.saturating_sub(ticks(pkt.enqueued));
            let dtime = self.dq_tstamp.map_or(0, |t| now.saturating_sub(t));
            self.dq_tstamp = Some(now);
            if backlog == 0 {
                self.qdelay = 0;
            }
            dtime
        } else {
            if backlog >= QUEUE_THRESHOLD && self.dq_count.is_none() {
                self.dq_tstamp = Some(now);
                self.dq_count = Some(0);
            }
            let (Some(count), Some(start)) = (self.dq_count, self.dq_tstamp) else {
                return;
            };
            let count = count + pkt.bytes();
            self.dq_count = Some(count);
            if count < QUEUE_THRESHOLD {
                return;
            }
            // The kernel keeps both in u32.
            let dtime = now.saturating_sub(start) as u32;
            if dtime == 0 {
                return;
            }
            let rate = ((count << PIE_SCALE) as u32) / dtime;
            self.avg_dq_rate = if self.avg_dq_rate == 0 {
                rate
            } else {
                self.avg_dq_rate - (self.avg_dq_rate >> 3) + (rate >> 3)
            };
            if backlog < QUEUE_THRESHOLD {
                self.dq_count = None;
            } else {
                self.dq_count = Some(0);
                self.dq_tstamp = Some(now);
            }
            dtime as u64
        };
        self.burst_time = self.burst_time.saturating_sub(dtime);
    }

    /// `pie_calculate_probability`: the periodic controller update with `backlog` bytes queued.
    pub fn calculate_probability(&mut self, p: &PieParams, backlog: Bytes) {
        let target = ticks(p.target);
        let (qdelay, qdelay_old) = if p.dq_rate_estimator {
            let old = self.qdelay;
            self.qdelay_old = old;
            let qdelay = if self.avg_dq_rate > 0 {
                (backlog << PIE_SCALE) / self.avg_dq_rate as u64
            } else {
                0
            };
            (qdelay, old)
        } else {
            (self.qdelay, self.qdelay_old)
        };
        // A zero delay with packets queued means the backlog is tiny: no update this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);

        let (alpha, beta) = self.scaled_gains(p);
        let mut delta = alpha
            .wrapping_mul(qdelay.wrapping_sub(target) as i64)
            .wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old) as i64));
        let oldprob = self.prob;
        if delta > (MAX_PROB / 50) as i64 && self.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        if qdelay > ticks(HIGH_DELAY) {
            delta += (MAX_PROB / 50) as i64;
        }
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        self.qdelay = qdelay;
        if self.qdelay < target / 2
            && self.qdelay_old < target / 2
            && self.prob == 0
            && (!p.dq_rate_estimator || self.avg_dq_rate > 0)
        {
            self.reset_measurement();
        }
        if !p.dq_rate_estimator {
            self.qdelay_old = qdelay;
        }
    }

    /// alpha and beta per tick of delay error, in `MAX_PROB` units, scaled down while `p`
    /// is small.
    fn scaled_gains(&self, p: &PieParams) -> (i64, i64) {
        let per_tick = MAX_PROB / PSCHED_TICKS_PER_SEC;
        let mut alpha = (p.alpha as u64 * per_tick) >> 4;
        let mut beta = (p.beta as u64 * per_tick) >> 4;
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        (alpha as i64, beta as i64)
    }
}

/// The pie qdisc.
#[derive(Debug, Clone)]
pub struct Pie {
    q: PacketQueue,
    params: PieParams,
    vars: PieVars,
    rng: Rng,
    next_update: Nanos,
    stats: QdiscStats,
    /// Packets tail-dropped at the limit.
    pub overlimit: u64,
}

impl Pie {
    pub fn new(params: PieParams, rng: Rng) -> Self {
        Pie {
            q: PacketQueue::new(),
            params,
            vars: PieVars::default(),
            rng,
            next_update: FIRST_UPDATE,
            stats: QdiscStats::default(),
            overlimit: 0,
        }
    }

    pub fn vars(&self) -> &PieVars {
        &self.vars
    }

    /// Drop probability, 0..=1 (Linux lets it exceed 1 transiently, as here).
    pub fn drop_probability(&self) -> f64 {
        self.vars.prob as f64 / MAX_PROB as f64
    }

    /// Run the probability updates due at or before `now`. Between packet events the backlog
    /// is constant, so once an update leaves the state unchanged all later ones would too.
    fn run_updates(&mut self, now: Nanos) {
        let step = self.params.tupdate;
        while self.next_update <= now {
            let before = self.vars;
            self.vars
                .calculate_probability(&self.params, self.q.bytes());
            self.next_update += step;
            if self.vars == before && self.next_update <= now {
                self.next_update += (now - self.next_update) / step * step + step;
            }
        }
    }

    fn drop(&mut self, pkt: PacketRef, pkts: &mut Packets) {
        self.vars.accu_prob = 0;
        self.stats.dropped += 1;
        pkts.drop_packet(pkt);
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        self.run_updates(now);
        self.stats.enqueued += 1;
        if self.q.len() >= self.params.limit as usize {
            self.overlimit += 1;
            self.drop(pkt, pkts);
            return;
        }
        let early =
            self.vars
                .drop_early(&self.params, self.q.bytes(), pkts[pkt].size, &mut self.rng);
        let accept = if !early {
            true
        } else if self.params.ecn && self.vars.prob <= MAX_PROB / 10 && set_ce(&mut pkts[pkt]) {
            self.stats.ecn_marked += 1;
            true
        } else {
            false
        };
        if accept {
            self.q.push_stamped(pkt, pkts, now);
        } else {
            self.drop(pkt, pkts);
        }
    }

    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketRef> {
        self.run_updates(now);
        let pkt = self.q.pop(pkts)?;
        self.vars
            .process_dequeue(&self.params, &pkts[pkt], now, self.q.bytes());
        self.stats.dequeued += 1;
        Some(pkt)
    }

    fn len(&self) -> usize {
        self.q.len()
    }

    fn bytes(&self) -> Bytes {
        self.q.bytes()
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_conserved, ect, pkt, seqs, Held};
    use super::*;
    use crate::net::packet::Ecn;

    const MS: Nanos = NSEC_PER_MSEC;

    fn params() -> PieParams {
        PieParams::new(1500)
    }

    /// Run one update with the last measured delay set to `qdelay_ms`.
    fn update(v: &mut PieVars, qdelay_ms: u64, backlog: Bytes) {
        v.qdelay = ticks(qdelay_ms * MS);
        v.calculate_probability(&params(), backlog);
    }

    #[test]
    fn probability_follows_a_delay_trajectory_at_low_probability() {
        // Ticks: target 15 ms = 234375, 20 ms = 312500, 30 ms = 468750, 10 ms = 156250.
        // Unscaled gains per tick: MAX_PROB / 15625000 = 4611686018;
        // alpha = 2 x that >> 4 = 576460752, beta = 20 x that >> 4 = 5764607522.
        let mut v = PieVars::default();
        // p = 0: below 10% halve, then /4 for each of 1%, 0.1%, ..., 0.0001%: >> 11 in all,
        // alpha 281474, beta 2814749. delta = 281474 x 78125 + 2814749 x 312500 = 901599218750.
        update(&mut v, 20, 100_000);
        assert_eq!(v.prob, 901_599_218_750);
        // p = 1.25e-5: below 0.001% (7.2e11)? no: >> 7, alpha 4503599, beta 45035996.
        // delta = 4503599 x 78125 + 0 = 351843671875 -> p = 1253442890625.
        update(&mut v, 20, 100_000);
        assert_eq!(v.prob, 1_253_442_890_625);
        // Same gains; delta = 4503599 x 234375 + 45035996 x 156250 = 8092405390625.
        update(&mut v, 30, 100_000);
        assert_eq!(v.prob, 9_345_848_281_250);
        // p = 1.3e-4 is above 0.01%: >> 5, alpha 18014398, beta 180143985;
        // delta = 18014398 x (-78125) + 180143985 x (-312500) = -57702370156250 < -p: p = 0.
        update(&mut v, 10, 100_000);
        assert_eq!(v.prob, 0);
        assert_eq!((v.qdelay, v.qdelay_old), (156_250, 156_250));
    }

    #[test]
    fn steps_above_ten_percent_are_capped_at_two_percent_plus_two_for_high_delay() {
        let mut v = PieVars {
            prob: MAX_PROB / 100 * 15,
            qdelay_old: ticks(50 * MS),
            ..PieVars::default()
        };
        // p = 15%, full gains: delta = 576460752 x 1328125 + 5764607522 x 781250 > 2%:
        // capped at 2 x (MAX_PROB / 100) -> 17%.
        update(&mut v, 100, 100_000);
        assert_eq!(v.prob, MAX_PROB / 100 * 17);
        // 300 ms > 250 ms: capped 2% plus 2% -> 21%.
        update(&mut v, 300, 100_000);
        assert_eq!(v.prob, MAX_PROB / 100 * 17 + 2 * (MAX_PROB / 50));
    }

    #[test]
    fn probability_decays_by_one_64th_when_the_delay_stays_zero() {
        // p = 5% (3602879701896395): halved gains, alpha 288230376; with qdelay = qdelay_old =
        // 0 and an empty queue, delta = -288230376 x 234375 = -67553994375000, then p -= p/64:
        // 3535325707521395 - 55239464180021 = 3480086243341374.
        let mut v = PieVars {
            prob: MAX_PROB / 100 * 5,
            ..PieVars::default()
        };
        update(&mut v, 0, 0);
        assert_eq!(v.prob, 3_480_086_243_341_374);
        // 3480086243341374 - 67553994375000 = 3412532248966374, minus 1/64 -> 3359211432576275.
        update(&mut v, 0, 0);
        assert_eq!(v.prob, 3_359_211_432_576_275);
        // With packets queued a zero delay skips the 1/64 decay: only delta applies.
        update(&mut v, 0, 3000);
        assert_eq!(v.prob, 3_359_211_432_576_275 - 67_553_994_375_000);
    }

    #[test]
    fn low_delay_with_zero_probability_restores_the_burst_allowance() {
        let mut v = PieVars {
            burst_time: 0,
            accu_prob: 5,
            ..PieVars::default()
        };
        update(&mut v, 1, 1500);
        // First update: qdelay_old was 0, qdelay 1 ms < 7.5 ms, p = 0: reset.
        assert_eq!((v.prob, v.burst_time, v.accu_prob), (0, ticks(150 * MS), 0));
    }

    #[test]
    fn derandomised_drops_need_accumulated_probability() {
        let p = params();
        let mut rng = Rng::new(1, 1);
        // p = 20% exactly (not below MAX_PROB / 5), no burst allowance, 3000 B queued.
        let mut v = PieVars {
            prob: MAX_PROB / 5,
            burst_time: 0,
            ..PieVars::default()
        };
        // accu 0.2, 0.4, 0.6, 0.8: below 0.85, never a drop and no random draw.
        let start = rng.clone();
        for _ in 0..4 {
            assert!(!v.drop_early(&p, 3000, 1500, &mut rng));
        }
        assert_eq!(
            rng.clone().next_u32(),
            start.clone().next_u32(),
            "a draw was consumed"
        );
        // accu 1.0: a draw decides; replay it on a copy of the stream.
        let mut replay = rng.clone();
        let rnd = ((replay.next_u32() as u64) << 32) | replay.next_u32() as u64;
        let expect = (rnd >> 8) < MAX_PROB / 5;
        assert_eq!(v.drop_early(&p, 3000, 1500, &mut rng), expect);
        assert_eq!(v.accu_prob == 0, expect);
        // From 8.5 on the drop is certain.
        v.accu_prob = (MAX_PROB / 2) * 17 - v.prob;
        assert!(v.drop_early(&p, 3000, 1500, &mut rng));
    }

    #[test]
    fn no_early_drop_during_burst_allowance_low_delay_or_short_queue() {
        let p = params();
        let mut rng = Rng::new(1, 1);
        let certain = (MAX_PROB / 2) * 17;
        // Burst allowance left.
        let mut v = PieVars {
            prob: MAX_PROB,
            accu_prob: certain,
            ..PieVars::default()
        };
        assert!(!v.drop_early(&p, 3000, 1500, &mut rng));
        // Delay 7 ms < 7.5 ms and p < 20%.
        let mut v = PieVars {
            prob: MAX_PROB / 5 - 1,
            qdelay: ticks(7 * MS),
            burst_time: 0,
            accu_prob: certain,
            ..PieVars::default()
        };
        assert!(!v.drop_early(&p, 3000, 1500, &mut rng));
        // Under two MTUs queued.
        let mut v = PieVars {
            prob: MAX_PROB,
            burst_time: 0,
            accu_prob: certain,
            ..PieVars::default()
        };
        assert!(!v.drop_early(&p, 2999, 1500, &mut rng));
        assert!(v.drop_early(&p, 3000, 1500, &mut rng));
    }

    #[test]
    fn bytemode_scales_probability_by_size() {
        // p = 0.5, 150 B packet: local p = 150 x (p / 1500) = 0.05 of MAX_PROB.
        let p = PieParams {
            bytemode: true,
            ..params()
        };
        let mut rng = Rng::new(1, 1);
        let mut v = PieVars {
            prob: MAX_PROB / 2,
            burst_time: 0,
            ..PieVars::default()
        };
        v.drop_early(&p, 3000, 150, &mut rng);
        assert_eq!(v.accu_prob, 150 * (MAX_PROB / 2 / 1500));
    }

    /// A pie qdisc past its burst allowance with `prob` and a certain next early drop.
    fn congested(params: PieParams, prob: u64) -> Held<Pie> {
        let mut q = Held::new(Pie::new(params, Rng::new(7, 3)));
        q.vars.burst_time = 0;
        q.vars.prob = prob;
        q.vars.qdelay = ticks(20 * MS);
        q
    }

    #[test]
    fn ecn_marks_below_ten_percent_and_drops_above() {
        let p = PieParams {
            ecn: true,
            ..params()
        };
        let mut q = congested(p, MAX_PROB / 10);
        q.enqueue(ect(0, 1500, 0, 0), 0);
        q.enqueue(ect(0, 1500, 1, 0), 0);
        // Two MTUs queued; accumulated probability forced to 8.5: ECT is marked, Not-ECT
        // dropped.
        q.vars.accu_prob = (MAX_PROB / 2) * 17;
        q.enqueue(ect(0, 1500, 2, 0), 0);
        q.vars.accu_prob = (MAX_PROB / 2) * 17;
        q.enqueue(pkt(0, 1500, 3, 0), 0);
        assert_eq!(seqs(&q.dropped), vec![3]);
        // Above 10% an ECT packet is dropped too.
        q.vars.prob = MAX_PROB / 10 + 1;
        q.vars.accu_prob = (MAX_PROB / 2) * 17;
        q.enqueue(ect(0, 1500, 4, 0), 0);
        assert_eq!(seqs(&q.dropped), vec![3, 4]);
        let out: Vec<(u64, Ecn)> = std::iter::from_fn(|| q.dequeue(0))
            .map(|p| (p.seq, p.ecn()))
            .collect();
        assert_eq!(out, vec![(0, Ecn::Ect0), (1, Ecn::Ect0), (2, Ecn::Ce)]);
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 5,
                dequeued: 3,
                dropped: 2,
                ecn_marked: 1
            }
        );
        assert_conserved(&q);
    }

    #[test]
    fn tail_drop_at_the_limit() {
        let mut q = Held::new(Pie::new(
            PieParams {
                limit: 2,
                ..params()
            },
            Rng::new(1, 1),
        ));
        for s in 0..3 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        assert_eq!(seqs(&q.dropped), vec![2]);
        assert_eq!(q.overlimit, 1);
        assert_conserved(&q);
    }

    #[test]
    fn updates_start_at_500_ms_and_repeat_every_tupdate() {
        // A standing queue: 10 packets enqueued at 0, one dequeued at 400 ms (sojourn 400 ms).
        let mut q = Held::new(Pie::new(params(), Rng::new(1, 1)));
        for s in 0..10 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        q.dequeue(400 * MS);
        assert_eq!(q.vars.qdelay, ticks(400 * MS));
        // Nothing updated before 500 ms.
        q.enqueue(pkt(0, 1500, 10, 499 * MS), 499 * MS);
        assert_eq!((q.vars.prob, q.next_update), (0, 500 * MS));
        // At 530 ms three updates (500, 515, 530) have run: replay them on a copy.
        let mut v = q.vars;
        for _ in 0..3 {
            v.calculate_probability(&params(), 10 * 1500);
        }
        q.enqueue(pkt(0, 1500, 11, 530 * MS), 530 * MS);
        assert_eq!(q.vars, v);
        assert!(q.drop_probability() > 0.0 && q.vars() == &v);
        assert_eq!(q.next_update, 545 * MS);
    }

    #[test]
    fn idle_updates_skip_ahead_once_nothing_changes() {
        // An empty qdisc: the first update resets the state, later ones change nothing, and a
        // packet an hour later finds the timer at the next 15 ms step after it.
        let mut q = Held::new(Pie::new(params(), Rng::new(1, 1)));
        let hour = 3600 * NSEC_PER_SEC;
        q.enqueue(pkt(0, 1500, 0, hour), hour);
        // Steps are 500 ms + k x 15 ms; the first after 3600 s: k = 239967, 3600.005 s.
        assert_eq!(q.next_update, 500 * MS + 239_967 * 15 * MS);
        assert_eq!(q.vars.prob, 0);
    }

    #[test]
    fn dequeues_consume_the_burst_allowance() {
        let mut q = Held::new(Pie::new(params(), Rng::new(1, 1)));
        for s in 0..5 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        // The first dequeue only starts the clock; each later one consumes the time since
        // the previous: 150 ms - 40 ms - 60 ms = 50 ms left.
        q.dequeue(10 * MS);
        assert_eq!(q.vars.burst_time, ticks(150 * MS));
        q.dequeue(50 * MS);
        q.dequeue(110 * MS);
        assert_eq!(
            q.vars.burst_time,
            ticks(150 * MS) - ticks(40 * MS) - ticks(60 * MS)
        );
        q.dequeue(200 * MS);
        assert_eq!(q.vars.burst_time, 0);
    }

    #[test]
    fn littles_law_delay_from_the_departure_rate() {
        // 30 x 1500 B queued; dequeues every 120 us (1875 ticks). Measurement starts at the
        // first dequeue (backlog 43500 >= 16384) at t = 0; the 11th dequeue (t = 1.2 ms =
        // 18750 ticks) brings the count to 16500 >= 16384: rate = (16500 << 8) / 18750 = 225.
        let p = PieParams {
            dq_rate_estimator: true,
            ..params()
        };
        let mut q = Held::new(Pie::new(p, Rng::new(1, 1)));
        for s in 0..30 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        for k in 0..11 {
            q.dequeue(k * 120_000);
        }
        assert_eq!(q.vars.avg_dq_rate, 225);
        // 19 packets (28500 B) left >= 16384: a new cycle starts now.
        assert_eq!((q.vars.dq_count, q.vars.dq_tstamp), (Some(0), Some(18_750)));
        // An update then estimates qdelay = (28500 << 8) / 225 = 32426 ticks (2.08 ms).
        let backlog = q.bytes();
        q.vars.calculate_probability(&p, backlog);
        assert_eq!(q.vars.qdelay, 32_426);
    }
}
