//! CoDel, Controlled Delay (Nichols and Jacobson; RFC 8289; Linux include/net/codel.h,
//! include/net/codel_impl.h and net/sched/sch_codel.c).
//!
//! CoDel judges a queue by the sojourn time of the packets it dequeues. While sojourn stays
//! below `target` (5 ms), or the queue holds at most one MTU after the dequeue, nothing happens.
//! When sojourn has stayed at or above target for a whole `interval` (100 ms, about a worst-case
//! RTT), CoDel enters the dropping state: it drops the packet at hand, dequeues the next, and
//! schedules the next drop with the control law
//!
//! ```text
//! drop_next = t + interval / sqrt(count)
//! ```
//!
//! where `count` is the number of drops since entering, so the drop rate rises as the square
//! root of time until sojourn falls below target, which ends the dropping state. On re-entry
//! soon after leaving (within 16 intervals of the last scheduled drop), CoDel resumes from the
//! drop rate that last controlled the queue: `count = count - lastcount` when that difference
//! exceeds 1, else `count = 1`. With ECN enabled, an ECN-capable packet is CE-marked instead
//! of dropped (and stays in the stream); a Not-ECT packet is still dropped. Independently, an
//! optional `ce_threshold` CE-marks every ECT packet whose sojourn exceeds it (the
//! DCTCP/L4S-style shallow marking that Linux added to CoDel).
//!
//! Linux keeps `1/sqrt(count)` as a Q0.16 fixed-point number refreshed by one Newton step per
//! change of `count` (`codel_Newton_step`) instead of computing a square root. The
//! approximation is coarse for small counts (count 2 gives interval/2, not interval/sqrt 2),
//! and that is what every Linux CoDel, fq_codel and mac80211 TXQ does, so it is the default
//! ([`ControlLaw::Linux`]); [`ControlLaw::Exact`] computes `interval / sqrt(count)` to the
//! nanosecond as in RFC 8289's pseudocode. Time is kept in nanoseconds, not in Linux's
//! 1.024 us units.
//!
//! [`CodelVars::dequeue`] is the state machine alone, generic over where packets come from
//! ([`CodelSource`]): the [`Codel`] qdisc below runs it over one FIFO, fq_codel over each flow
//! queue, the Wi-Fi TXQs (mac80211 fq_codel, target 20 ms) over theirs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{set_ce, PacketQueue, Qdisc, QdiscStats};
use crate::net::packet::{Packet, PacketRef, Packets};
use crate::units::{Bytes, Nanos, NSEC_PER_MSEC};

/// Default target sojourn time: 5 ms (Linux `codel_params_init`, RFC 8289).
pub const CODEL_TARGET: Nanos = 5 * NSEC_PER_MSEC;
/// Default interval: 100 ms (Linux `codel_params_init`, RFC 8289).
pub const CODEL_INTERVAL: Nanos = 100 * NSEC_PER_MSEC;
/// Default packet limit of the codel qdisc (`DEFAULT_CODEL_LIMIT`, sch_codel.c).
pub const CODEL_LIMIT_PACKETS: u32 = 1000;
/// Re-entry window: resume the previous drop rate if re-entering within this many intervals
/// of the last scheduled drop (codel_impl.h, RFC 8289).
const REENTRY_INTERVALS: u64 = 16;
/// Shift from the Q0.16 `rec_inv_sqrt` to a Q0.32 number (`REC_INV_SQRT_SHIFT`, codel.h).
const REC_INV_SQRT_SHIFT: u32 = 16;
/// `rec_inv_sqrt` for count 1: the largest Q0.16 value, ~1.0 (`~0U >> REC_INV_SQRT_SHIFT`).
const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// How `interval / sqrt(count)` is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlLaw {
    /// Linux: Q0.16 reciprocal square root, one Newton step per change of count.
    #[default]
    Linux,
    /// RFC 8289: the exact quotient, rounded down to the nanosecond.
    Exact,
}

/// CoDel parameters (Linux `struct codel_params`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodelParams {
    pub target: Nanos,
    pub interval: Nanos,
    /// Bytes: no drop while the backlog left after a dequeue is at most this (one MTU).
    pub mtu: u32,
    /// CE-mark ECT packets instead of dropping them.
    pub ecn: bool,
    /// CE-mark ECT packets whose sojourn exceeds this, independently of the control law.
    pub ce_threshold: Option<Nanos>,
    pub law: ControlLaw,
}

impl CodelParams {
    /// Linux defaults (`codel_params_init`) for a device of `mtu` bytes: target 5 ms,
    /// interval 100 ms, no ECN, no CE threshold.
    pub fn new(mtu: u32) -> Self {
        CodelParams {
            target: CODEL_TARGET,
            interval: CODEL_INTERVAL,
            mtu,
            ecn: false,
            ce_threshold: None,
            law: ControlLaw::Linux,
        }
    }

    /// The control law: `t + interval / sqrt(count)`.
    fn control_law(&self, t: Nanos, vars: &CodelVars) -> Nanos {
        match self.law {
            ControlLaw::Linux => {
                let scale = (vars.rec_inv_sqrt as u128) << REC_INV_SQRT_SHIFT;
                t + ((self.interval as u128 * scale) >> 32) as Nanos
            }
            ControlLaw::Exact => {
                let i = self.interval as u128;
                t + isqrt(i * i / vars.count.max(1) as u128) as Nanos
            }
        }
    }
}

/// Per-queue CoDel state (Linux `struct codel_vars`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state, plus fq_codel's overflow drops.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/sqrt(count) in Q0.16 (Linux control law only).
    pub rec_inv_sqrt: u16,
    /// When sojourn will have been above target for an interval; `None` while below.
    pub first_above_time: Option<Nanos>,
    /// Time of the next drop, or of the last one.
    pub drop_next: Nanos,
    /// Sojourn time of the last dequeued packet.
    pub ldelay: Nanos,
}

/// CoDel counters (Linux `struct codel_stats`, cumulative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CodelStats {
    /// Largest packet seen at dequeue, bytes.
    pub maxpacket: u32,
    /// Packets dropped by the control law.
    pub drops: u64,
    /// Packets CE-marked instead of dropped.
    pub ecn_mark: u64,
    /// Packets CE-marked for exceeding `ce_threshold`.
    pub ce_mark: u64,
}

/// Where the state machine takes packets from.
pub trait CodelSource {
    /// Remove the head packet (updating any backlog the owner keeps).
    fn pop(&mut self, pkts: &Packets) -> Option<PacketRef>;
    /// Bytes left in the queue the MTU rule looks at, after the last `pop` (Linux passes the
    /// qdisc's total backlog, also for fq_codel).
    fn backlog(&self) -> Bytes;
}

impl CodelSource for PacketQueue {
    fn pop(&mut self, pkts: &Packets) -> Option<PacketRef> {
        PacketQueue::pop(self, pkts)
    }
    fn backlog(&self) -> Bytes {
        self.bytes()
    }
}

/// floor(sqrt(n)), by Newton's iteration from an over-estimate.
fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let mut x = 1u128 << (128 - n.leading_zeros()).div_ceil(2);
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

impl CodelVars {
    /// One Newton step of `rec_inv_sqrt` towards 1/sqrt(count) (`codel_Newton_step`), with
    /// the kernel's wrapping u32/u64 arithmetic.
    fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = (invsqrt * invsqrt) >> 32;
        let val = (3u64 << 32).wrapping_sub((self.count as u64).wrapping_mul(invsqrt2)) >> 2;
        let val = val.wrapping_mul(invsqrt) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `codel_should_drop`: record `pkt`'s sojourn and say whether it has been above target
    /// for at least an interval.
    fn should_drop(
        &mut self,
        pkt: Option<&Packet>,
        backlog: Bytes,
        p: &CodelParams,
        stats: &mut CodelStats,
        now: Nanos,
    ) -> bool {
        let Some(pkt) = pkt else {
            self.first_above_time = None;
            return false;
        };
        self.ldelay = now.saturating_sub(pkt.enqueued);
        stats.maxpacket = stats.maxpacket.max(pkt.size);
        if self.ldelay < p.target || backlog <= p.mtu as Bytes {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + p.interval);
                false
            }
            Some(t) => now > t,
        }
    }

    /// `codel_dequeue`: take the next packet from `src` at `now`, dropping (in `pkts`) or
    /// CE-marking as the control law says.
    pub fn dequeue<S: CodelSource>(
        &mut self,
        src: &mut S,
        p: &CodelParams,
        stats: &mut CodelStats,
        pkts: &mut Packets,
        now: Nanos,
    ) -> Option<PacketRef> {
        let mut pkt = src.pop(pkts);
        if pkt.is_none() {
            self.dropping = false;
            return None;
        }
        let drop = self.should_drop(pkt.map(|r| &pkts[r]), src.backlog(), p, stats, now);
        if self.dropping {
            if !drop {
                self.dropping = false;
            } else {
                while self.dropping && now >= self.drop_next {
                    let Some(head) = pkt.take() else { break };
                    self.count = self.count.wrapping_add(1);
                    self.newton_step();
                    if p.ecn && set_ce(&mut pkts[head]) {
                        stats.ecn_mark += 1;
                        self.drop_next = p.control_law(self.drop_next, self);
                        pkt = Some(head);
                        break;
                    }
                    stats.drops += 1;
                    pkts.drop_packet(head);
                    pkt = src.pop(pkts);
                    if self.should_drop(pkt.map(|r| &pkts[r]), src.backlog(), p, stats, now) {
                        self.drop_next = p.control_law(self.drop_next, self);
                    } else {
                        self.dropping = false;
                    }
                }
            }
        } else if drop {
            if let Some(head) = pkt.take() {
                if p.ecn && set_ce(&mut pkts[head]) {
                    stats.ecn_mark += 1;
                    pkt = Some(head);
                } else {
                    stats.drops += 1;
                    pkts.drop_packet(head);
                    pkt = src.pop(pkts);
                    self.should_drop(pkt.map(|r| &pkts[r]), src.backlog(), p, stats, now);
                }
            }
            self.dropping = true;
            self.enter_dropping(p, now);
        }
        if let (Some(head), Some(ce)) = (pkt, p.ce_threshold) {
            if self.ldelay > ce && set_ce(&mut pkts[head]) {
                stats.ce_mark += 1;
            }
        }
        pkt
    }

    /// Choose the starting drop rate on entering the dropping state and schedule the next
    /// drop: resume `count - lastcount` if the last episode ended recently, else start at 1.
    fn enter_dropping(&mut self, p: &CodelParams, now: Nanos) {
        let delta = self.count.wrapping_sub(self.lastcount);
        let since_next = now as i128 - self.drop_next as i128;
        if delta > 1 && since_next < (REENTRY_INTERVALS * p.interval) as i128 {
            self.count = delta;
            self.newton_step();
        } else {
            self.count = 1;
            self.rec_inv_sqrt = REC_INV_SQRT_ONE;
        }
        self.lastcount = self.count;
        self.drop_next = p.control_law(now, self);
    }
}

/// The codel qdisc (sch_codel.c): a tail-drop FIFO of `limit` packets managed by CoDel.
#[derive(Debug, Clone)]
pub struct Codel {
    q: PacketQueue,
    limit: u32,
    params: CodelParams,
    vars: CodelVars,
    cstats: CodelStats,
    enqueued: u64,
    dequeued: u64,
    overlimit: u64,
}

impl Codel {
    pub fn new(limit: u32, params: CodelParams) -> Self {
        Codel {
            q: PacketQueue::new(),
            limit,
            params,
            vars: CodelVars::default(),
            cstats: CodelStats::default(),
            enqueued: 0,
            dequeued: 0,
            overlimit: 0,
        }
    }

    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        self.enqueued += 1;
        if self.q.len() < self.limit as usize {
            self.q.push_stamped(pkt, pkts, now);
        } else {
            self.overlimit += 1;
            pkts.drop_packet(pkt);
        }
    }

    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketRef> {
        let pkt = self
            .vars
            .dequeue(&mut self.q, &self.params, &mut self.cstats, pkts, now)?;
        self.dequeued += 1;
        Some(pkt)
    }

    fn len(&self) -> usize {
        self.q.len()
    }

    fn bytes(&self) -> Bytes {
        self.q.bytes()
    }

    fn stats(&self) -> QdiscStats {
        QdiscStats {
            enqueued: self.enqueued,
            dequeued: self.dequeued,
            dropped: self.overlimit + self.cstats.drops,
            ecn_marked: self.cstats.ecn_mark + self.cstats.ce_mark,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_conserved, ect, pkt, seqs, Held};
    use super::*;
    use crate::net::packet::Ecn;

    const MS: Nanos = NSEC_PER_MSEC;

    fn params(law: ControlLaw) -> CodelParams {
        CodelParams {
            law,
            ..CodelParams::new(1500)
        }
    }

    /// `n` full-size packets, seq 0.., all enqueued at t = 0.
    fn backlog(n: u64) -> Vec<Packet> {
        (0..n).map(|s| pkt(0, 1500, s, 0)).collect()
    }

    /// CoDel's state machine over a plain queue.
    struct Run {
        q: PacketQueue,
        pkts: Packets,
        p: CodelParams,
        v: CodelVars,
        st: CodelStats,
        /// Every packet dropped so far.
        dropped: Vec<Packet>,
    }

    impl Run {
        fn new(backlog: Vec<Packet>, p: CodelParams) -> Self {
            let mut r = Run {
                q: PacketQueue::new(),
                pkts: Packets::new(),
                p,
                v: CodelVars::default(),
                st: CodelStats::default(),
                dropped: Vec::new(),
            };
            r.refill(backlog);
            r
        }

        /// Replace the queue's packets by `backlog`.
        fn refill(&mut self, backlog: Vec<Packet>) {
            (self.q, self.pkts) = (PacketQueue::new(), Packets::new());
            for p in backlog {
                let r = self.pkts.insert(p);
                self.q.push(r, &self.pkts);
            }
        }

        /// Dequeue at `t`: the packet handed out and the packets dropped by this call.
        fn dequeue(&mut self, t: Nanos) -> (Option<Packet>, Vec<Packet>) {
            let got = self
                .v
                .dequeue(&mut self.q, &self.p, &mut self.st, &mut self.pkts, t);
            let mut dropped = Vec::new();
            self.pkts.remove_dropped(&mut dropped);
            self.dropped.extend(&dropped);
            (got.map(|r| self.pkts.remove(r)), dropped)
        }

        /// Dequeue at `t`; return (seq returned, seqs dropped by this call).
        fn deq(&mut self, t: Nanos) -> (Option<u64>, Vec<u64>) {
            let (got, dropped) = self.dequeue(t);
            (got.map(|p| p.seq), seqs(&dropped))
        }
    }

    #[test]
    fn first_drop_after_one_interval_above_target() {
        let mut r = Run::new(backlog(20), params(ControlLaw::Exact));
        // 10 ms: sojourn 10 ms >= 5 ms target, 28500 B left > MTU: first_above = 110 ms.
        assert_eq!(r.deq(10 * MS), (Some(0), vec![]));
        assert_eq!(r.v.first_above_time, Some(110 * MS));
        // 110 ms is not yet after first_above: no drop.
        assert_eq!(r.deq(110 * MS), (Some(1), vec![]));
        assert!(!r.v.dropping);
        // 1 ns later: drop seq 2, deliver seq 3, count 1, next drop one interval later.
        assert_eq!(r.deq(110 * MS + 1), (Some(3), vec![2]));
        assert!(r.v.dropping);
        assert_eq!((r.v.count, r.v.lastcount), (1, 1));
        assert_eq!(r.v.drop_next, 210 * MS + 1);
        assert_eq!(r.st.drops, 1);
    }

    /// Enter the dropping state at T = 110 ms + 1 ns and then dequeue exactly at each
    /// scheduled drop (and 1 ns before it, which must not drop); return the drop times.
    fn drop_times(law: ControlLaw) -> Vec<Nanos> {
        let mut r = Run::new(backlog(100), params(law));
        r.deq(10 * MS);
        let mut times = vec![];
        let (_, d) = r.deq(110 * MS + 1);
        assert_eq!(d.len(), 1);
        times.push(110 * MS + 1);
        for _ in 0..4 {
            let next = r.v.drop_next;
            assert_eq!(r.deq(next - 1).1.len(), 0, "early drop before {next}");
            assert_eq!(r.deq(next).1.len(), 1, "no drop at {next}");
            times.push(next);
        }
        times
    }

    fn gaps(t: &[Nanos]) -> Vec<Nanos> {
        t.windows(2).map(|w| w[1] - w[0]).collect()
    }

    #[test]
    fn exact_drop_spacing_is_interval_over_sqrt_count() {
        // 100 ms / sqrt(c) for c = 1..4, floored to the ns:
        // 100000000, 70710678.1 -> 70710678, 57735026.9 -> 57735026, 50000000.
        assert_eq!(
            gaps(&drop_times(ControlLaw::Exact)),
            vec![100_000_000, 70_710_678, 57_735_026, 50_000_000]
        );
    }

    #[test]
    fn linux_drop_spacing_follows_the_newton_approximation() {
        // rec_inv_sqrt (Q0.16) and spacing = (100e6 * (rec << 16)) >> 32:
        // c=1: 0xFFFF = 65535 -> 99998474 ns.
        // c=2: Newton from 65535: inv = 65535 << 16 = 4294901760, inv2 = inv^2 >> 32 =
        //      4294836225, val = (3 << 32) - 2 inv2 = 4295229438, >> 2 = 1073807359,
        //      (val inv) >> 31 = 2147581948, >> 16 = 32769
        //      -> (100e6 (32769 << 16)) >> 32 = 50001525 ns.
        // c=3: from 32769 -> 36864 -> 56250000 ns.  c=4: from 36864 -> 31968 -> 48779296 ns.
        assert_eq!(
            gaps(&drop_times(ControlLaw::Linux)),
            vec![99_998_474, 50_001_525, 56_250_000, 48_779_296]
        );
    }

    #[test]
    fn reentry_resumes_the_previous_drop_rate() {
        let mut r = Run::new(backlog(30), params(ControlLaw::Exact));
        r.deq(10 * MS);
        r.deq(110 * MS + 1); // enter: count 1, lastcount 1, drop_next 210 ms + 1
        r.deq(210 * MS + 1); // count 2, drop_next 280710679
        r.deq(280_710_679); // count 3, drop_next 280710679 + 57735026 = 338445705
        assert_eq!((r.v.count, r.v.drop_next), (3, 338_445_705));
        // Fresh packets: sojourn 1 ms at 301 ms is below target, leaving the dropping state.
        r.refill((100..120).map(|s| pkt(0, 1500, s, 300 * MS)).collect());
        assert_eq!(r.deq(301 * MS), (Some(100), vec![]));
        assert!(!r.v.dropping);
        // Above target again from 310 ms; ok to drop after 410 ms.
        r.deq(310 * MS);
        // Re-entry at 410 ms + 1: delta = count - lastcount = 3 - 1 = 2 > 1 and
        // now - drop_next = 410000001 - 338445705 = 71554296 < 16 intervals: count = 2,
        // next drop at now + 100 ms / sqrt 2 = 410000001 + 70710678.
        assert_eq!(r.deq(410 * MS + 1), (Some(103), vec![102]));
        assert_eq!((r.v.count, r.v.lastcount), (2, 2));
        assert_eq!(r.v.drop_next, 410_000_001 + 70_710_678);
    }

    #[test]
    fn reentry_after_sixteen_intervals_restarts_at_one() {
        let mut r = Run::new(backlog(30), params(ControlLaw::Exact));
        r.deq(10 * MS);
        r.deq(110 * MS + 1);
        r.deq(210 * MS + 1);
        r.deq(280_710_679); // count 3, lastcount 1, drop_next 338445705
                            // Leave, then come back more than 16 x 100 ms after drop_next.
        let t0 = 338_445_705 + 1600 * MS;
        r.refill((100..120).map(|s| pkt(0, 1500, s, t0)).collect());
        r.deq(t0 + MS);
        assert!(!r.v.dropping);
        r.deq(t0 + 10 * MS);
        let (_, d) = r.deq(t0 + 110 * MS + 1);
        assert_eq!(d, vec![102]);
        assert_eq!((r.v.count, r.v.lastcount), (1, 1));
        assert_eq!(r.v.drop_next, t0 + 110 * MS + 1 + 100 * MS);
    }

    #[test]
    fn no_drop_while_at_most_one_mtu_remains() {
        // Two packets with a huge sojourn: after each dequeue at most 1500 B remain.
        let mut r = Run::new(backlog(2), params(ControlLaw::Exact));
        assert_eq!(r.deq(500 * MS), (Some(0), vec![]));
        assert_eq!(r.deq(900 * MS), (Some(1), vec![]));
        assert_eq!(r.v.first_above_time, None);
        assert_eq!(r.st.maxpacket, 1500);
        // An empty queue leaves the dropping state and returns nothing.
        assert_eq!(r.deq(901 * MS), (None, vec![]));
    }

    #[test]
    fn ecn_marks_ect_packets_and_drops_not_ect() {
        // seq 2 is Not-ECT, the rest ECT(0).
        let q = (0..20)
            .map(|s| {
                if s == 2 {
                    pkt(0, 1500, s, 0)
                } else {
                    ect(0, 1500, s, 0)
                }
            })
            .collect();
        let p = CodelParams {
            ecn: true,
            ..params(ControlLaw::Exact)
        };
        let mut r = Run::new(q, p);
        let mut out = Vec::new();
        let mut go = |r: &mut Run, t| {
            let (got, dropped) = r.dequeue(t);
            let got = got.unwrap();
            out.push((got.seq, got.ecn(), dropped.len()));
        };
        go(&mut r, 10 * MS);
        // Entry: seq 1 is marked, not dropped; dropping state, next "drop" at 210 ms + 1.
        go(&mut r, 110 * MS + 1);
        assert!(r.v.dropping);
        assert_eq!(r.v.drop_next, 210 * MS + 1);
        // At 210 ms + 1 the head (seq 2) is Not-ECT: dropped; seq 3 is delivered unmarked
        // because the next drop is now 70.7 ms away.
        go(&mut r, 210 * MS + 1);
        // At the next scheduled time seq 4 is marked.
        let next = r.v.drop_next;
        go(&mut r, next);
        assert_eq!(
            out,
            vec![
                (0, Ecn::Ect0, 0),
                (1, Ecn::Ce, 0),
                (3, Ecn::Ect0, 1),
                (4, Ecn::Ce, 0)
            ]
        );
        assert_eq!(seqs(&r.dropped), vec![2]);
        assert_eq!((r.st.ecn_mark, r.st.drops, r.v.count), (2, 1, 3));
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it() {
        let q = vec![ect(0, 1500, 0, 0), ect(0, 1500, 1, 0), pkt(0, 1500, 2, 0)];
        let p = CodelParams {
            ce_threshold: Some(MS),
            ..params(ControlLaw::Linux)
        };
        let mut r = Run::new(q, p);
        let mut st = Vec::new();
        // Sojourn 1 ms is not above the 1 ms threshold; 1 ms + 1 ns is; Not-ECT is left alone.
        for t in [MS, MS + 1, MS + 2] {
            let got = r.dequeue(t).0.unwrap();
            st.push(got.ecn());
        }
        assert_eq!(st, vec![Ecn::Ect0, Ecn::Ce, Ecn::NotEct]);
        assert_eq!(r.st.ce_mark, 1);
    }

    #[test]
    fn codel_qdisc_tail_drops_at_its_limit_and_counts() {
        let mut q = Held::new(Codel::new(3, params(ControlLaw::Exact)));
        for s in 0..5 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        assert_eq!(seqs(&q.dropped), vec![3, 4]);
        assert_eq!(q.dequeue(MS).map(|p| p.seq), Some(0));
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 5,
                dequeued: 1,
                dropped: 2,
                ecn_marked: 0
            }
        );
        assert_conserved(&q);
    }

    #[test]
    fn codel_qdisc_counts_aqm_drops() {
        let mut q = Held::new(Codel::new(1000, params(ControlLaw::Exact)));
        for s in 0..10 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        q.dequeue(10 * MS);
        assert_eq!(q.dequeue(110 * MS + 1).map(|p| p.seq), Some(2));
        assert_eq!(seqs(&q.dropped), vec![1]);
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 10,
                dequeued: 2,
                dropped: 1,
                ecn_marked: 0
            }
        );
        assert!(q.vars().dropping);
        assert_conserved(&q);
    }

    #[test]
    fn isqrt_is_the_floor() {
        assert_eq!(
            [0, 1, 2, 3, 4, 15, 16, 17].map(isqrt),
            [0, 1, 1, 1, 2, 3, 4, 4]
        );
        assert_eq!(isqrt(10u128.pow(16) / 2), 70_710_678);
        assert_eq!(isqrt(u128::MAX), u64::MAX as u128);
    }
}
