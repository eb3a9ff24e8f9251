//! Queueing disciplines: the queue in front of a link's serialiser (a host's qdisc, a router's
//! egress buffer, a Wi-Fi TXQ).
//!
//! A qdisc holds packets between `enqueue` and `dequeue`: their references ([`PacketRef`]), the
//! packets themselves staying in their slots of [`Packets`]. It may refuse a packet at enqueue
//! (tail drop, or head drop of an older packet), and an AQM may drop or ECN-mark at dequeue.
//! Dropped packets are listed in `Packets::dropped` rather than vanishing, so the owner can
//! count them and release their TSQ charge (a drop in Linux frees the skb, which runs
//! `tcp_wfree`). A qdisc stamps `Packet::enqueued` when it keeps a packet; sojourn time is
//! `now - enqueued` at dequeue.
//!
//! The disciplines, each in its own file with its source:
//! - [`fifo`]: pfifo / bfifo tail drop (Linux sch_fifo.c) and head drop (Linux pfifo_head_drop,
//!   Mahimahi `drophead`);
//! - [`pfifo_fast`]: the three-band default qdisc of Linux (sch_generic.c);
//! - [`codel`]: CoDel (RFC 8289, Linux codel.h / codel_impl.h / sch_codel.c), whose state
//!   machine [`CodelVars`] is shared with fq_codel and the Wi-Fi TXQs;
//! - [`fq_codel`]: FQ-CoDel (RFC 8290, Linux sch_fq_codel.c);
//! - [`pie`]: PIE (RFC 8033, Linux sch_pie.c);
//! - [`ecn_step`]: DCTCP-style step marking at K packets;
//! - [`spec`]: the scenario-facing configuration that builds any of them.
//!
//! Every queue is a ring of references ([`PacketQueue`], a `VecDeque`) that stops allocating once it has
//! reached its largest occupancy, and every qdisc is a concrete type. An owner (a link, a host
//! NIC, a Wi-Fi TXQ) holds an [`AnyQdisc`]: the FIFOs most links and host NICs run and the
//! fq_codel of mac80211's TXQs are called directly (the FIFOs' enqueue and dequeue inline into
//! the link), any other qdisc through `Box<dyn Qdisc>`; there is no dynamic dispatch inside a
//! qdisc.

pub mod codel;
pub mod ecn_step;
pub mod fifo;
pub mod fq_codel;
pub mod pfifo_fast;
pub mod pie;
pub mod spec;

use std::collections::VecDeque;

use crate::net::packet::{Ecn, Packet, PacketRef, Packets};
use crate::units::{Bytes, Nanos};

pub use codel::{Codel, CodelParams, CodelSource, CodelStats, CodelVars, ControlLaw};
pub use ecn_step::step_fifo;
pub use fifo::{Fifo, FifoLimit};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use pfifo_fast::PfifoFast;
pub use pie::{Pie, PieParams};
pub use spec::QdiscSpec;

/// Counters every qdisc keeps. They satisfy `enqueued = dequeued + dropped + len()` at all
/// times: a packet refused at the tail counts as offered and dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QdiscStats {
    /// Packets offered to `enqueue` (accepted or not).
    pub enqueued: u64,
    /// Packets handed out by `dequeue`.
    pub dequeued: u64,
    /// Packets dropped: refused at the tail, pushed out at the head, or dropped by an AQM.
    pub dropped: u64,
    /// CE marks set (on ECT packets, or counted again on a packet already CE, as Linux's
    /// `INET_ECN_set_ce` does).
    pub ecn_marked: u64,
}

/// The interface every queueing discipline implements.
pub trait Qdisc: Send {
    /// Offer packet `pkt` (in `pkts`) at `now`; a packet the qdisc keeps has `now` as its
    /// enqueue time (`PacketQueue::push_stamped`). Any packet dropped as a consequence (this
    /// one, or an older one for head-drop and fq_codel's fat-flow drop) is dropped in `pkts`.
    fn enqueue(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos);
    /// Take the next packet to transmit, if any. AQM drops made on the way are dropped in
    /// `pkts`.
    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketRef>;
    /// Packets queued.
    fn len(&self) -> usize;
    /// Bytes queued (sum of `Packet::size`).
    fn bytes(&self) -> Bytes;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn stats(&self) -> QdiscStats;
    /// Linux `TCQ_F_CAN_BYPASS`: an idle device may send `pkt` straight through an empty
    /// work-conserving FIFO. True when this qdisc would have accepted `pkt` and handed it back
    /// unchanged at once; it then counts the packet as enqueued and dequeued. Qdiscs whose
    /// dequeue can do more than that (AQMs, flow queueing) keep the default, false.
    fn bypass(&mut self, _pkt: &Packet) -> bool {
        false
    }
}

/// A qdisc as its owner holds it: [`Fifo`], [`PfifoFast`] and [`FqCodel`] (boxed: it is large)
/// dispatched statically, every other kind behind the trait object.
pub enum AnyQdisc {
    Fifo(Fifo),
    PfifoFast(PfifoFast),
    FqCodel(Box<FqCodel>),
    Other(Box<dyn Qdisc>),
}

/// Call `$call` on whichever qdisc `$any` holds.
macro_rules! any_qdisc {
    ($any:expr, $q:ident => $call:expr) => {
        match $any {
            AnyQdisc::Fifo($q) => $call,
            AnyQdisc::PfifoFast($q) => $call,
            AnyQdisc::FqCodel($q) => $call,
            AnyQdisc::Other($q) => $call,
        }
    };
}

impl std::fmt::Debug for AnyQdisc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            AnyQdisc::Fifo(_) => "Fifo",
            AnyQdisc::PfifoFast(_) => "PfifoFast",
            AnyQdisc::FqCodel(_) => "FqCodel",
            AnyQdisc::Other(_) => "Other",
        };
        write!(f, "AnyQdisc::{kind} {{ len: {} }}", self.len())
    }
}

impl Qdisc for AnyQdisc {
    #[inline]
    fn enqueue(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        any_qdisc!(self, q => q.enqueue(pkt, pkts, now))
    }
    #[inline]
    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketRef> {
        any_qdisc!(self, q => q.dequeue(pkts, now))
    }
    #[inline]
    fn len(&self) -> usize {
        any_qdisc!(self, q => q.len())
    }
    #[inline]
    fn bytes(&self) -> Bytes {
        any_qdisc!(self, q => q.bytes())
    }
    #[inline]
    fn is_empty(&self) -> bool {
        any_qdisc!(self, q => q.is_empty())
    }
    fn stats(&self) -> QdiscStats {
        any_qdisc!(self, q => q.stats())
    }
    #[inline]
    fn bypass(&mut self, pkt: &Packet) -> bool {
        any_qdisc!(self, q => q.bypass(pkt))
    }
}

impl From<Fifo> for AnyQdisc {
    fn from(q: Fifo) -> Self {
        AnyQdisc::Fifo(q)
    }
}

impl From<PfifoFast> for AnyQdisc {
    fn from(q: PfifoFast) -> Self {
        AnyQdisc::PfifoFast(q)
    }
}

impl From<FqCodel> for AnyQdisc {
    fn from(q: FqCodel) -> Self {
        AnyQdisc::FqCodel(Box::new(q))
    }
}

impl AnyQdisc {
    /// Any other qdisc, behind the trait object.
    pub fn other(q: impl Qdisc + 'static) -> Self {
        AnyQdisc::Other(Box::new(q))
    }
}

/// A FIFO ring of packet references that keeps its byte count.
#[derive(Debug, Clone, Default)]
pub struct PacketQueue {
    q: VecDeque<PacketRef>,
    bytes: Bytes,
}

impl PacketQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, pkt: PacketRef, pkts: &Packets) {
        self.bytes += pkts[pkt].bytes();
        self.q.push_back(pkt);
    }

    /// Queue `pkt` with `now` as its enqueue time: a qdisc's `enqueue` stores packets this way.
    #[inline]
    pub fn push_stamped(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        let p = &mut pkts[pkt];
        p.enqueued = now;
        self.bytes += p.bytes();
        self.q.push_back(pkt);
    }

    #[inline]
    pub fn pop(&mut self, pkts: &Packets) -> Option<PacketRef> {
        let pkt = self.q.pop_front()?;
        self.bytes -= pkts[pkt].bytes();
        Some(pkt)
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    pub fn bytes(&self) -> Bytes {
        self.bytes
    }
}

/// Set CE on `pkt` if it is ECN-capable, as Linux `INET_ECN_set_ce`: true for an ECT packet
/// (now CE) and for one already CE, false for a Not-ECT packet (which the caller then drops or
/// lets through).
pub fn set_ce(pkt: &mut Packet) -> bool {
    match pkt.ecn() {
        Ecn::NotEct => false,
        Ecn::Ect0 | Ecn::Ce => {
            pkt.set_ecn(Ecn::Ce);
            true
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::Qdisc;
    use crate::net::packet::{Ecn, Kind, Packet, Packets};
    use crate::units::Nanos;

    /// A qdisc with the packets it holds: offers packets by value and hands back the ones it
    /// dequeues and drops, as values taken out of their slots.
    pub struct Held<Q> {
        pub q: Q,
        pub pkts: Packets,
        /// Every packet dropped so far, in order.
        pub dropped: Vec<Packet>,
    }

    impl<Q> std::ops::Deref for Held<Q> {
        type Target = Q;
        fn deref(&self) -> &Q {
            &self.q
        }
    }

    impl<Q> std::ops::DerefMut for Held<Q> {
        fn deref_mut(&mut self) -> &mut Q {
            &mut self.q
        }
    }

    impl<Q: Qdisc> Held<Q> {
        pub fn new(q: Q) -> Self {
            Held {
                q,
                pkts: Packets::new(),
                dropped: Vec::new(),
            }
        }

        fn collect_drops(&mut self) {
            self.pkts.remove_dropped(&mut self.dropped);
        }

        pub fn enqueue(&mut self, pkt: Packet, now: Nanos) {
            let r = self.pkts.insert(pkt);
            self.q.enqueue(r, &mut self.pkts, now);
            self.collect_drops();
        }

        pub fn dequeue(&mut self, now: Nanos) -> Option<Packet> {
            let got = self.q.dequeue(&mut self.pkts, now);
            self.collect_drops();
            got.map(|r| self.pkts.remove(r))
        }
    }

    /// A TCP data packet of `flow`, `size` bytes, segment `seq`, stamped `enqueued` at `t`.
    pub fn pkt(flow: u32, size: u32, seq: u64, t: Nanos) -> Packet {
        let mut p = Packet::new(Kind::Data, flow, 0, size, t);
        p.seq = seq;
        p
    }

    /// The same, ECN-capable (ECT(0)).
    pub fn ect(flow: u32, size: u32, seq: u64, t: Nanos) -> Packet {
        let mut p = pkt(flow, size, seq, t);
        p.set_ecn(Ecn::Ect0);
        p
    }

    pub fn seqs(pkts: &[Packet]) -> Vec<u64> {
        pkts.iter().map(|p| p.seq).collect()
    }

    /// Offered = dequeued + dropped + still queued, and the packets in slots are exactly the
    /// queued ones.
    pub fn assert_conserved<Q: Qdisc>(q: &Held<Q>) {
        let s = q.q.stats();
        let len = q.q.len();
        assert_eq!(
            s.enqueued,
            s.dequeued + s.dropped + len as u64,
            "{s:?}, len {len}"
        );
        assert_eq!(q.pkts.live(), len, "packets in slots");
        assert_eq!(
            q.dropped.len() as u64,
            s.dropped,
            "packets handed back as dropped"
        );
    }
}
