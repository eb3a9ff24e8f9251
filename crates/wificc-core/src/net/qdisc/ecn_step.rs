//! Step ECN marking at a threshold of K packets, the switch behaviour DCTCP is designed for
//! (Alizadeh et al., "Data Center TCP", SIGCOMM 2010, section 3.1; RFC 8257 section 3.1).
//!
//! A tail-drop FIFO of `limit` packets that CE-marks an ECN-capable packet on arrival when the
//! instantaneous queue it joins already holds K packets or more; below K nothing is marked.
//! There is no averaging and no randomness, so the fraction of marked packets tracks the
//! fraction of time the queue sits above K, which is what DCTCP's `alpha` estimates. Not-ECT
//! packets are never marked and only dropped at the limit.
//!
//! Marking happens at enqueue, not dequeue: this is how the DCTCP paper's switches and Linux's
//! `red` qdisc configured for DCTCP (min = max = K, probability 1) mark, and the paper's
//! guideline for K (K > C x RTT / 7) is derived for it. (Marking at dequeue would deliver the
//! signal one queueing delay sooner; it is not what the K guideline assumes.)

use super::{set_ce, PacketQueue, Qdisc, QdiscStats};
use crate::net::packet::Packet;
use crate::units::{Bytes, Nanos};

/// Default marking threshold: 20 packets, the DCTCP paper's setting for 1 Gbit/s ports
/// (section 4; it uses 65 at 10 Gbit/s).
pub const ECN_STEP_K_PACKETS: u32 = 20;

/// The step-marking FIFO.
#[derive(Debug, Clone)]
pub struct EcnStep {
    q: PacketQueue,
    limit: u32,
    k: u32,
    stats: QdiscStats,
}

impl EcnStep {
    /// A FIFO of `limit` packets marking at `k` packets.
    pub fn new(limit: u32, k: u32) -> Self {
        EcnStep {
            q: PacketQueue::new(),
            limit,
            k,
            stats: QdiscStats::default(),
        }
    }
}

impl Qdisc for EcnStep {
    fn enqueue(&mut self, mut pkt: Packet, _now: Nanos, dropped: &mut Vec<Packet>) {
        self.stats.enqueued += 1;
        if self.q.len() >= self.limit as usize {
            self.stats.dropped += 1;
            dropped.push(pkt);
            return;
        }
        if self.q.len() >= self.k as usize && set_ce(&mut pkt) {
            self.stats.ecn_marked += 1;
        }
        self.q.push(pkt);
    }

    fn dequeue(&mut self, _now: Nanos, _dropped: &mut Vec<Packet>) -> Option<Packet> {
        let pkt = self.q.pop()?;
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
    use super::super::testutil::{assert_conserved, ect, pkt, seqs};
    use super::*;
    use crate::net::packet::Ecn;

    #[test]
    fn marks_exactly_from_k_packets_queued() {
        // K = 3: arrivals find 0, 1, 2 packets queued (unmarked), then 3 and 4 (marked).
        let mut q = EcnStep::new(100, 3);
        let mut dropped = Vec::new();
        for s in 0..5 {
            q.enqueue(ect(0, 1500, s, 0), 0, &mut dropped);
        }
        let out: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(0, &mut dropped))
            .map(|p| p.ecn)
            .collect();
        assert_eq!(out, vec![Ecn::Ect0, Ecn::Ect0, Ecn::Ect0, Ecn::Ce, Ecn::Ce]);
        assert_eq!(q.stats().ecn_marked, 2);
    }

    #[test]
    fn marking_follows_the_instantaneous_queue_down() {
        // K = 2: fill to 3, drain to 1, and the next arrival (joining 1 packet) is not marked.
        let mut q = EcnStep::new(100, 2);
        let mut dropped = Vec::new();
        for s in 0..3 {
            q.enqueue(ect(0, 1500, s, 0), 0, &mut dropped);
        }
        q.dequeue(0, &mut dropped);
        q.dequeue(0, &mut dropped);
        q.enqueue(ect(0, 1500, 3, 0), 0, &mut dropped);
        q.enqueue(ect(0, 1500, 4, 0), 0, &mut dropped);
        let out: Vec<(u64, Ecn)> = std::iter::from_fn(|| q.dequeue(0, &mut dropped))
            .map(|p| (p.seq, p.ecn))
            .collect();
        assert_eq!(out, vec![(2, Ecn::Ce), (3, Ecn::Ect0), (4, Ecn::Ce)]);
    }

    #[test]
    fn not_ect_is_never_marked_and_the_limit_tail_drops() {
        // Limit 3, K = 1: the Not-ECT packet joining 1 packet passes unmarked; the 4th arrival
        // is dropped whatever its ECN field.
        let mut q = EcnStep::new(3, 1);
        let mut dropped = Vec::new();
        q.enqueue(ect(0, 1500, 0, 0), 0, &mut dropped);
        q.enqueue(pkt(0, 1500, 1, 0), 0, &mut dropped);
        q.enqueue(ect(0, 1500, 2, 0), 0, &mut dropped);
        q.enqueue(ect(0, 1500, 3, 0), 0, &mut dropped);
        assert_eq!(seqs(&dropped), vec![3]);
        let out: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(0, &mut dropped))
            .map(|p| p.ecn)
            .collect();
        assert_eq!(out, vec![Ecn::Ect0, Ecn::NotEct, Ecn::Ce]);
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 4,
                dequeued: 3,
                dropped: 1,
                ecn_marked: 1
            }
        );
        assert_conserved(&q);
    }
}
