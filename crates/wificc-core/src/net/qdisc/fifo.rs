//! Plain FIFO queues: pfifo (limit in packets) and bfifo (limit in bytes), with tail drop or
//! head drop.
//!
//! Tail drop is Linux `pfifo` / `bfifo` (net/sched/sch_fifo.c): a packet is accepted if the
//! queue stays within its limit with it (`qlen < limit`, or `backlog + len <= limit`), else the
//! arriving packet is dropped. Head drop is Linux `pfifo_head_drop` for a packet limit and
//! Mahimahi's `drophead` queue (src/packet/drop_head_packet_queue.hh) for either limit: the
//! arriving packet is always accepted, then the oldest packets are dropped until the queue is
//! within its limit again. Head drop keeps the freshest data and signals loss a full queue
//! earlier than tail drop (the dropped packet is the one that would have left next).
//!
//! For a byte limit with head drop, a packet larger than the whole limit ends up dropping every
//! packet ahead of it and then itself, as in Mahimahi.
//!
//! Optionally the FIFO CE-marks ECN-capable arrivals that find K packets or more queued: the
//! DCTCP step marking of [`super::ecn_step`], which documents it.

use super::{set_ce, PacketQueue, Qdisc, QdiscStats};
use crate::net::packet::{Packet, PacketRef, Packets};
use crate::units::{Bytes, Nanos};

/// What the FIFO's limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FifoLimit {
    Packets(u32),
    Bytes(Bytes),
}

/// A pfifo or bfifo queue.
#[derive(Debug, Clone)]
pub struct Fifo {
    q: PacketQueue,
    limit: FifoLimit,
    head_drop: bool,
    /// Step-marking threshold K, packets.
    mark_at: Option<u32>,
    stats: QdiscStats,
}

impl Fifo {
    pub fn new(limit: FifoLimit, head_drop: bool) -> Self {
        Fifo {
            q: PacketQueue::new(),
            limit,
            head_drop,
            mark_at: None,
            stats: QdiscStats::default(),
        }
    }

    /// CE-mark ECN-capable arrivals that find `k` packets or more queued.
    pub fn with_step_marking(mut self, k: u32) -> Self {
        self.mark_at = Some(k);
        self
    }

    /// Queue `pkt` at `now`, step-marking it if it joins K packets or more.
    fn push(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        if let Some(k) = self.mark_at {
            if self.q.len() >= k as usize && set_ce(&mut pkts[pkt]) {
                self.stats.ecn_marked += 1;
            }
        }
        self.q.push_stamped(pkt, pkts, now);
    }

    /// Would the queue be within its limit holding `len` packets of `bytes` bytes?
    fn within(&self, len: usize, bytes: Bytes) -> bool {
        match self.limit {
            FifoLimit::Packets(p) => len <= p as usize,
            FifoLimit::Bytes(b) => bytes <= b,
        }
    }
}

impl Qdisc for Fifo {
    #[inline]
    fn enqueue(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        self.stats.enqueued += 1;
        if self.head_drop {
            self.push(pkt, pkts, now);
            while !self.within(self.q.len(), self.q.bytes()) {
                let Some(old) = self.q.pop(pkts) else { break };
                self.stats.dropped += 1;
                pkts.drop_packet(old);
            }
        } else if self.within(self.q.len() + 1, self.q.bytes() + pkts[pkt].bytes()) {
            self.push(pkt, pkts, now);
        } else {
            self.stats.dropped += 1;
            pkts.drop_packet(pkt);
        }
    }

    #[inline]
    fn dequeue(&mut self, pkts: &mut Packets, _now: Nanos) -> Option<PacketRef> {
        let pkt = self.q.pop(pkts)?;
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

    fn bypass(&mut self, pkt: &Packet) -> bool {
        // An empty queue marks nothing (K >= 1) and, with or without head drop, keeps the
        // packet if it fits alone.
        if !self.q.is_empty() || self.mark_at == Some(0) || !self.within(1, pkt.bytes()) {
            return false;
        }
        self.stats.enqueued += 1;
        self.stats.dequeued += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_conserved, pkt, seqs, Held};
    use super::*;

    #[test]
    fn pfifo_tail_drop_refuses_the_arrival() {
        // Limit 3 packets; offer seq 0..5: 0, 1, 2 fit, 3 and 4 are refused.
        let mut q = Held::new(Fifo::new(FifoLimit::Packets(3), false));
        for s in 0..5 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        assert_eq!(seqs(&q.dropped), vec![3, 4]);
        assert_eq!((q.len(), q.bytes()), (3, 4500));
        assert_eq!(q.dequeue(0).map(|p| p.seq), Some(0));
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
    fn pfifo_head_drop_pushes_out_the_oldest() {
        // Limit 3 packets; offer seq 0..5: 3 pushes out 0, 4 pushes out 1; 2, 3, 4 remain.
        let mut q = Held::new(Fifo::new(FifoLimit::Packets(3), true));
        for s in 0..5 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        assert_eq!(seqs(&q.dropped), vec![0, 1]);
        let mut out = Vec::new();
        while let Some(p) = q.dequeue(0) {
            out.push(p.seq);
        }
        assert_eq!(out, vec![2, 3, 4]);
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 5,
                dequeued: 3,
                dropped: 2,
                ecn_marked: 0
            }
        );
        assert_conserved(&q);
    }

    #[test]
    fn bfifo_tail_drop_counts_bytes() {
        // Limit 3000 B: 1500 (total 1500) fits, 1000 (2500) fits, 600 would make 3100: refused,
        // 500 makes exactly 3000: fits (backlog + len <= limit).
        let mut q = Held::new(Fifo::new(FifoLimit::Bytes(3000), false));
        for (s, size) in [1500, 1000, 600, 500].into_iter().enumerate() {
            q.enqueue(pkt(0, size, s as u64, 0), 0);
        }
        assert_eq!(seqs(&q.dropped), vec![2]);
        assert_eq!((q.len(), q.bytes()), (3, 3000));
        assert_conserved(&q);
    }

    #[test]
    fn bfifo_head_drop_frees_enough_bytes_for_the_arrival() {
        // Limit 3000 B holding 1000 + 1000 + 1000; a 1500 B arrival makes 4500: dropping seq 0
        // leaves 3500 (still over), dropping seq 1 leaves 2500.
        let mut q = Held::new(Fifo::new(FifoLimit::Bytes(3000), true));
        for s in 0..3 {
            q.enqueue(pkt(0, 1000, s, 0), 0);
        }
        assert!(q.dropped.is_empty());
        q.enqueue(pkt(0, 1500, 3, 0), 0);
        assert_eq!(seqs(&q.dropped), vec![0, 1]);
        assert_eq!((q.len(), q.bytes()), (2, 2500));
        // An arrival larger than the whole limit flushes the queue and then itself.
        q.enqueue(pkt(0, 3001, 4, 0), 0);
        assert_eq!(seqs(&q.dropped), vec![0, 1, 2, 3, 4]);
        assert!(q.is_empty());
        assert_conserved(&q);
    }
}
