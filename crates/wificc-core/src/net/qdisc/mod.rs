//! Queueing disciplines: the queue in front of a link's serialiser (a host's qdisc, a router's
//! egress buffer, a Wi-Fi TXQ).
//!
//! A qdisc holds packets between `enqueue` and `dequeue`. It may refuse a packet at enqueue (tail
//! drop, or head drop of an older packet), and an AQM may drop or ECN-mark at dequeue. Dropped
//! packets are handed back through the `dropped` vector rather than vanishing, so the owner can
//! count them and release their TSQ charge (a drop in Linux frees the skb, which runs
//! `tcp_wfree`). Callers stamp `Packet::enqueued` before `enqueue`; sojourn time is
//! `now - enqueued` at dequeue.

use crate::net::packet::Packet;
use crate::units::{Bytes, Nanos};

/// Counters every qdisc keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QdiscStats {
    pub enqueued: u64,
    pub dequeued: u64,
    pub dropped: u64,
    pub ecn_marked: u64,
}

/// The interface every queueing discipline implements.
pub trait Qdisc: Send {
    /// Offer `pkt` (already stamped with its enqueue time) at `now`. Any packet dropped as a
    /// consequence (this one, or an older one for head-drop and fq_codel's fat-flow drop) is
    /// pushed to `dropped`.
    fn enqueue(&mut self, pkt: Packet, now: Nanos, dropped: &mut Vec<Packet>);
    /// Take the next packet to transmit, if any. AQM drops made on the way go to `dropped`.
    fn dequeue(&mut self, now: Nanos, dropped: &mut Vec<Packet>) -> Option<Packet>;
    /// Packets queued.
    fn len(&self) -> usize;
    /// Bytes queued (sum of `Packet::size`).
    fn bytes(&self) -> Bytes;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn stats(&self) -> QdiscStats;
}
