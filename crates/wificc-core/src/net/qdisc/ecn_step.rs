//! Step ECN marking at a threshold of K packets, the switch behaviour DCTCP is designed for
//! (Alizadeh et al., "Data Center TCP", SIGCOMM 2010; RFC 8257).
//!
//! A tail-drop FIFO of `limit` packets that CE-marks an ECN-capable packet on arrival when the
//! instantaneous queue it joins already holds K packets or more; below K nothing is marked.
//! There is no averaging and no randomness, so the fraction of marked packets tracks the
//! fraction of time the queue sits at or above K, which is what DCTCP's `alpha` estimates.
//! Not-ECT packets are never marked and only dropped at the limit, so pings and non-ECN flows
//! sharing the queue see plain tail drop (Linux `red` in this role drops them above K unless
//! its `nodrop` flag is set).
//!
//! Marking happens at enqueue, not dequeue: this is how the DCTCP paper's switches and Linux's
//! `red` qdisc configured for DCTCP (min = max = K, probability 1, compared with the backlog
//! the arrival finds) mark, and the paper's guideline for K (K > C x RTT / 7) is derived for
//! it. Marking at dequeue would deliver the signal one queueing delay sooner but is not what
//! the K guideline assumes.
//!
//! It is a [`Fifo`] with step marking; `Fifo::with_step_marking` also combines it with a byte
//! limit or head drop.

use super::fifo::{Fifo, FifoLimit};

/// Default marking threshold: 20 packets, the DCTCP paper's setting for 1 Gbit/s ports
/// (it uses 65 at 10 Gbit/s).
pub const ECN_STEP_K_PACKETS: u32 = 20;

/// A tail-drop FIFO of `limit` packets marking at `k` packets.
pub fn step_fifo(limit: u32, k: u32) -> Fifo {
    Fifo::new(FifoLimit::Packets(limit), false).with_step_marking(k)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_conserved, ect, pkt, seqs, Held};
    use super::super::{Qdisc, QdiscStats};
    use super::*;
    use crate::net::packet::Ecn;

    #[test]
    fn marks_exactly_from_k_packets_queued() {
        // K = 3: arrivals find 0, 1, 2 packets queued (unmarked), then 3 and 4 (marked).
        let mut q = Held::new(step_fifo(100, 3));
        for s in 0..5 {
            q.enqueue(ect(0, 1500, s, 0), 0);
        }
        let out: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(0))
            .map(|p| p.ecn())
            .collect();
        assert_eq!(out, vec![Ecn::Ect0, Ecn::Ect0, Ecn::Ect0, Ecn::Ce, Ecn::Ce]);
        assert_eq!(q.stats().ecn_marked, 2);
    }

    #[test]
    fn marking_follows_the_instantaneous_queue_down() {
        // K = 2: fill to 3, drain to 1, and the next arrival (joining 1 packet) is not marked.
        let mut q = Held::new(step_fifo(100, 2));
        for s in 0..3 {
            q.enqueue(ect(0, 1500, s, 0), 0);
        }
        q.dequeue(0);
        q.dequeue(0);
        q.enqueue(ect(0, 1500, 3, 0), 0);
        q.enqueue(ect(0, 1500, 4, 0), 0);
        let out: Vec<(u64, Ecn)> = std::iter::from_fn(|| q.dequeue(0))
            .map(|p| (p.seq, p.ecn()))
            .collect();
        assert_eq!(out, vec![(2, Ecn::Ce), (3, Ecn::Ect0), (4, Ecn::Ce)]);
    }

    #[test]
    fn not_ect_is_never_marked_and_the_limit_tail_drops() {
        // Limit 3, K = 1: the Not-ECT packet joining 1 packet passes unmarked; the 4th arrival
        // is dropped whatever its ECN field.
        let mut q = Held::new(step_fifo(3, 1));
        q.enqueue(ect(0, 1500, 0, 0), 0);
        q.enqueue(pkt(0, 1500, 1, 0), 0);
        q.enqueue(ect(0, 1500, 2, 0), 0);
        q.enqueue(ect(0, 1500, 3, 0), 0);
        assert_eq!(seqs(&q.dropped), vec![3]);
        let out: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(0))
            .map(|p| p.ecn())
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
