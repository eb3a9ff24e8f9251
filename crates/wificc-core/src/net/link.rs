//! A wired link direction: egress qdisc -> serialiser -> propagation delay line.
//!
//! The serialiser sends one packet at a time at `rate`, each taking
//! (IP size + `l2_overhead`) x 8 / rate; the qdisc is only asked for the next packet when the
//! serialiser is free, so backlog (and any AQM decision) stays in the qdisc, as with a Linux
//! qdisc in front of a NIC. The delay line is a FIFO of (arrival time, packet): the link keeps at
//! most one pending event per stage (the current transmission's end, and the head arrival),
//! whatever the number of packets in flight on the wire. A full-duplex cable is two `Link`s.
//!
//! A link on a sending host's NIC reports TX completion (the end of serialisation) for TSQ, as a
//! wired driver frees the skb on its TX-completion interrupt; a virtual device that orphans the
//! skb when it takes it (`orphan_on_xmit`: TUN, veth) reports it when the transmission starts.
//!
//! A link with a propagation delay that reports no TX completion (a bottleneck, a backhaul)
//! serialises lazily: it has no end-of-transmission event. While packets wait, each starts when
//! the one before it ends, at `busy_until`; the link carries out those starts, each at its own
//! time, whenever it is next touched: a packet arrives at its queue, its arrival event fires, or
//! the world samples it. A qdisc's dequeue then sees exactly the queue and the time it would
//! have seen at an end-of-transmission event, since every enqueue comes after the starts due by
//! its time (a start and an enqueue at the same nanosecond: the start first). Nothing can
//! arrive at the far end before `busy_until + delay`, so an arrival event pending at the wire's
//! head or, with the wire empty, at that time keeps deliveries on time. This removes one event
//! per packet on a backlogged bottleneck.

use std::collections::VecDeque;

use super::packet::{PacketRef, Packets};
use super::qdisc::{AnyQdisc, Qdisc, QdiscStats};
use crate::metrics::Histogram;
use crate::sim::Rng;
use crate::units::{tx_time, BitsPerSec, Bytes, Nanos};

/// A token-bucket shaper at the root of a host's egress (`tc ... htb rate R ceil R burst B
/// cburst B`, one class): the link's qdisc is its leaf, and the serialiser behind it runs at the
/// device's own rate. As `net/sched/sch_htb.c` with `htb_hysteresis` 0 (the default): the class
/// may send while its tokens (time at `rate`) are at least 0 (`htb_class_mode`); a dequeue
/// charges the whole skb, `toks = min(toks + elapsed, buffer) - L2T(len)` (`htb_accnt_tokens`),
/// where `len` is `qdisc_pkt_len`, every segment's length; a class that cannot send is woken when
/// its tokens reach 0 (`htb_do_events`). A fresh class starts with a full bucket. The decision is
/// taken per skb, not per segment: the segments after an skb's first ([`Packet::skb_more`]) go
/// with it, charged at once, as htb hands the unsegmented skb to the device. Not modelled:
/// htb's floor on the tokens (`mbuffer`, 60 s of debt), and a leaf that interleaves another
/// flow's packets inside an skb (a DRR leaf such as fq_codel): such a packet is charged
/// without a check, so the long-run rate stays exact.
///
/// [`Packet::skb_more`]: crate::net::packet::Packet::skb_more
#[derive(Debug, Clone)]
pub struct Shaper {
    rate: BitsPerSec,
    /// The bucket's depth, in time at `rate` (htb's `buffer`).
    buffer: Nanos,
    /// Bytes the shaper adds to each packet's IP length (tc's `overhead`).
    overhead: u32,
    /// Tokens (ns at `rate`) at `checked`; may be negative.
    tokens: i64,
    checked: Nanos,
    /// The last packet let through had more segments of its skb behind it.
    open_skb: bool,
}

impl Shaper {
    /// A shaper of `rate` with a bucket of `burst` bytes, adding `overhead` bytes per packet.
    pub fn new(rate: BitsPerSec, burst: Bytes, overhead: u32) -> Self {
        let buffer = tx_time(burst, rate);
        Shaper {
            rate,
            buffer,
            overhead,
            tokens: buffer as i64,
            checked: 0,
            open_skb: false,
        }
    }

    fn tokens_at(&self, now: Nanos) -> i64 {
        let elapsed = now.saturating_sub(self.checked) as i64;
        self.tokens.saturating_add(elapsed).min(self.buffer as i64)
    }

    /// `None` when the next packet may go at `now`, else when the tokens reach 0.
    pub fn held_until(&self, now: Nanos) -> Option<Nanos> {
        let t = self.tokens_at(now);
        (!self.open_skb && t < 0).then(|| now.saturating_add(t.unsigned_abs()))
    }

    /// Let `bytes` (IP length) through at `now`; `more`: segments of its skb follow.
    pub fn charge(&mut self, now: Nanos, bytes: u32, more: bool) {
        let cost = tx_time(u64::from(bytes) + u64::from(self.overhead), self.rate);
        self.tokens = self
            .tokens_at(now)
            .saturating_sub(i64::try_from(cost).unwrap_or(i64::MAX));
        self.checked = now;
        self.open_skb = more;
    }
}

/// Ethernet framing on the wire per packet: preamble + SFD 8, header 14, FCS 4, inter-frame gap
/// 12 (IEEE 802.3).
pub const ETHERNET_OVERHEAD: u32 = 38;

pub struct Link {
    pub name: String,
    pub rate: BitsPerSec,
    pub delay: Nanos,
    pub l2_overhead: u32,
    /// End of serialisation counts as TX completion for the sender's TSQ.
    pub reports_tx_completion: bool,
    /// With `reports_tx_completion`: the driver orphans each skb in its `ndo_start_xmit`
    /// (`skb_orphan`, as TUN and veth do), so the completion comes when the packet leaves the
    /// qdisc, not at the end of its serialisation: it is listed in the packet store
    /// ([`Packets::release`]) as the transmission starts.
    pub orphan_on_xmit: bool,
    /// A token-bucket shaper gating the qdisc's dequeues (a host's htb root).
    pub shaper: Option<Shaper>,
    /// Independent random loss: each arriving packet is dropped with this probability before it
    /// reaches the queue (a lossy medium, as netem/mm-loss), from its own random stream.
    loss: Option<(f64, Rng)>,
    /// Packets lost to `loss`.
    pub random_losses: u64,
    qdisc: AnyQdisc,
    /// The serialiser is busy until then.
    busy_until: Nanos,
    /// A `tx_done` event is scheduled at `busy_until`.
    tx_pending: bool,
    /// Zero-delay link: the packet being serialised, handed over at `tx_done`.
    in_service: Option<PacketRef>,
    /// TX completion to report at `tx_done`: (flow, truesize) of the packet being serialised.
    completion: Option<(u32, u32)>,
    wire: DelayLine,
    /// The last (wire bytes, rate, serialisation time) computed: packets on a link mostly share
    /// one size, and the time is a division by the rate.
    last_tx_time: (u64, BitsPerSec, Nanos),
    /// Per-packet sojourn time in the qdisc (ns), after the warm-up.
    pub sojourn: Histogram,
    pub record_from: Nanos,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub busy_time: Nanos,
    pub max_backlog: usize,
}

/// A fixed-delay line: a FIFO of (arrival time, packet) with packets entering in arrival-time
/// order, and one pending arrival event at most, for its head.
#[derive(Debug, Default)]
pub struct DelayLine {
    wire: VecDeque<(Nanos, PacketRef)>,
    arrival_pending: bool,
}

impl DelayLine {
    /// Put `pkt` on the line, due at `at`, headed for the next hop of its route; returns
    /// `Some(at)` when an arrival event must be scheduled (none is pending).
    #[inline]
    pub fn push(&mut self, at: Nanos, pkt: PacketRef, pkts: &mut Packets) -> Option<Nanos> {
        pkts[pkt].hop += 1;
        self.wire.push_back((at, pkt));
        self.arm(at)
    }

    /// Ask for an arrival event at `at` unless one is pending: `Some(at)` when it must be
    /// scheduled. The event may find nothing due (a lazy link's probe for its next start).
    pub fn arm(&mut self, at: Nanos) -> Option<Nanos> {
        if self.arrival_pending {
            None
        } else {
            self.arrival_pending = true;
            Some(at)
        }
    }

    /// The arrival event: move every packet due by `now` to `out`, and return when the next
    /// one is due (the event to schedule next), if any.
    pub fn arrive(&mut self, now: Nanos, out: &mut VecDeque<PacketRef>) -> Option<Nanos> {
        while let Some(&(t, _)) = self.wire.front() {
            if t > now {
                return Some(t);
            }
            if let Some((_, pkt)) = self.wire.pop_front() {
                out.push_back(pkt);
            }
        }
        self.arrival_pending = false;
        None
    }
}

/// What a link asks its owner to schedule.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// Serialisation of the current packet ends.
    pub tx_done: Option<Nanos>,
    /// The head of the delay line arrives.
    pub arrival: Option<Nanos>,
}

/// What the end of a transmission produced.
#[derive(Debug, Default, Clone, Copy)]
pub struct Done {
    /// On a zero-delay link, the packet that just arrived at the far end.
    pub arrived: Option<PacketRef>,
    /// (flow, truesize) of a data packet whose TX completion is to be reported.
    pub completed: Option<(u32, u32)>,
    pub wake: Wake,
}

impl Link {
    pub fn new(
        name: impl Into<String>,
        rate: BitsPerSec,
        delay: Nanos,
        l2_overhead: u32,
        qdisc: impl Into<AnyQdisc>,
    ) -> Self {
        Link {
            name: name.into(),
            rate,
            delay,
            l2_overhead,
            reports_tx_completion: false,
            orphan_on_xmit: false,
            shaper: None,
            loss: None,
            random_losses: 0,
            qdisc: qdisc.into(),
            busy_until: 0,
            tx_pending: false,
            in_service: None,
            completion: None,
            wire: DelayLine::default(),
            last_tx_time: (0, rate, 0),
            sojourn: Histogram::default(),
            record_from: 0,
            tx_packets: 0,
            tx_bytes: 0,
            busy_time: 0,
            max_backlog: 0,
        }
    }

    /// Drop each arriving packet with probability `p`, drawing from `rng`.
    pub fn set_loss(&mut self, p: f64, rng: Rng) {
        self.loss = (p > 0.0).then_some((p, rng));
    }

    /// Whether the link serialises lazily (see the module doc): it has a delay line and no TX
    /// completion to report.
    #[inline]
    fn lazy(&self) -> bool {
        self.delay > 0 && !self.reports_tx_completion && self.shaper.is_none()
    }

    /// A lazy link carries out every start due by `now`, each at its own time (a no-op for
    /// other links). Returns the arrival event to schedule, if one is needed and none pending.
    pub fn catch_up(&mut self, now: Nanos, pkts: &mut Packets) -> Option<Nanos> {
        let mut arrival = None;
        if self.lazy() {
            while self.busy_until <= now && !self.qdisc.is_empty() {
                match self.start(self.busy_until, pkts) {
                    Some(at) => arrival = arrival.or(at),
                    None => break,
                }
            }
        }
        arrival
    }

    /// A lazy link's arrival event when the wire is empty: the next queued packet cannot
    /// arrive before the current transmission's end plus the delay.
    fn probe(&mut self) -> Option<Nanos> {
        if self.lazy() && !self.qdisc.is_empty() {
            self.wire.arm(self.busy_until + self.delay)
        } else {
            None
        }
    }

    /// What a lazy link asks for: only an arrival event, `arrival` or else its probe.
    fn lazy_wake(&mut self, arrival: Option<Nanos>) -> Wake {
        Wake {
            tx_done: None,
            arrival: arrival.or_else(|| self.probe()),
        }
    }

    /// A packet arrives at the link's queue.
    pub fn accept(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) -> Wake {
        let mut arrival = self.catch_up(now, pkts);
        if let Some((p, rng)) = self.loss.as_mut() {
            if rng.chance(*p) {
                self.random_losses += 1;
                pkts.drop_packet(pkt);
                return Wake {
                    tx_done: None,
                    arrival,
                };
            }
        }
        let idle = !self.tx_pending && now >= self.busy_until;
        // A shaper is no work-conserving qdisc: nothing bypasses it (TCQ_F_CAN_BYPASS).
        if idle && self.shaper.is_none() && self.qdisc.bypass(&pkts[pkt]) {
            self.max_backlog = self.max_backlog.max(1);
            pkts[pkt].enqueued = now;
            arrival = arrival.or(self.start_with(pkt, pkts, now));
            return self.after_start(arrival);
        }
        self.qdisc.enqueue(pkt, pkts, now);
        self.max_backlog = self.max_backlog.max(self.qdisc.len());
        if idle {
            if let Some(at) = self.start(now, pkts) {
                return self.after_start(arrival.or(at));
            }
            if let Some(at) = self.shaper_wake(now) {
                return Wake {
                    tx_done: Some(at),
                    arrival,
                };
            }
        }
        if self.lazy() {
            self.lazy_wake(arrival)
        } else if self.tx_pending || idle {
            Wake::default()
        } else {
            // Busy: make sure the serialiser wakes up to take the next packet.
            self.tx_pending = true;
            Wake {
                tx_done: Some(self.busy_until),
                arrival: None,
            }
        }
    }

    /// Dequeue the next packet and start serialising it at `at`: `None` when the qdisc had
    /// nothing to send or a shaper holds the queue back (the caller then asks for the wake-up of
    /// [`Link::shaper_wake`]), else the arrival event to schedule (see [`Link::start_with`]).
    #[inline]
    fn start(&mut self, at: Nanos, pkts: &mut Packets) -> Option<Option<Nanos>> {
        if let Some(shaper) = &self.shaper {
            if shaper.held_until(at).is_some() {
                return None;
            }
        }
        let pkt = self.qdisc.dequeue(pkts, at)?;
        if let Some(shaper) = self.shaper.as_mut() {
            let p = &pkts[pkt];
            shaper.charge(at, p.size, p.skb_more());
        }
        Some(self.start_with(pkt, pkts, at))
    }

    /// After a start found nothing to send at `now`: when the shaper lets the queue go, if it
    /// holds one back (the wake-up comes as an end-of-transmission event).
    fn shaper_wake(&mut self, now: Nanos) -> Option<Nanos> {
        if self.qdisc.is_empty() {
            return None;
        }
        let at = self.shaper.as_ref()?.held_until(now)?;
        self.tx_pending = true;
        Some(at)
    }

    /// Start serialising `pkt` at `at`. It goes onto the wire at once (it arrives at end +
    /// delay) or, on a zero-delay link, into service until the end. Returns the arrival
    /// event to schedule, if any.
    fn start_with(&mut self, pkt: PacketRef, pkts: &mut Packets, at: Nanos) -> Option<Nanos> {
        let p = &mut pkts[pkt];
        if at >= self.record_from {
            self.sojourn.record(at - p.enqueued);
        }
        let size = p.size;
        if let Some(charge) = p.tsq_charge().filter(|_| self.reports_tx_completion) {
            // The skb is freed at the host: no later hop may report its completion again.
            p.truesize = 0;
            if self.orphan_on_xmit {
                pkts.release(charge);
            } else {
                self.completion = Some(charge);
                self.tx_pending = true;
            }
        }
        let p = &mut pkts[pkt];
        let dur = self.tx_time((size + self.l2_overhead) as u64);
        let end = at + dur;
        self.busy_time += dur;
        self.busy_until = end;
        self.tx_packets += 1;
        self.tx_bytes += size as u64;
        if self.delay == 0 {
            p.hop += 1;
            self.in_service = Some(pkt);
            self.tx_pending = true;
            None
        } else {
            self.wire.push(end + self.delay, pkt, pkts)
        }
    }

    /// What a link asks for after a start: a lazy link only its arrival event; another link
    /// also the end of the transmission when it must start the next queued packet, hand over
    /// a zero-delay packet or report TX completion then.
    fn after_start(&mut self, arrival: Option<Nanos>) -> Wake {
        if self.lazy() {
            return self.lazy_wake(arrival);
        }
        if !self.qdisc.is_empty() {
            self.tx_pending = true; // the next queued packet starts at `end`
        }
        Wake {
            tx_done: self.tx_pending.then_some(self.busy_until),
            arrival,
        }
    }

    /// Serialisation time of `wire_bytes` at the link's rate.
    #[inline]
    fn tx_time(&mut self, wire_bytes: u64) -> Nanos {
        if (self.last_tx_time.0, self.last_tx_time.1) != (wire_bytes, self.rate) {
            self.last_tx_time = (wire_bytes, self.rate, tx_time(wire_bytes, self.rate));
        }
        self.last_tx_time.2
    }

    /// The serialiser's end-of-transmission event at `now` (= `busy_until`).
    pub fn tx_done(&mut self, now: Nanos, pkts: &mut Packets) -> Done {
        self.tx_pending = false;
        let arrived = self.in_service.take();
        let completed = self.completion.take();
        let wake = if self.qdisc.is_empty() {
            Wake::default()
        } else {
            match self.start(now, pkts) {
                Some(arrival) => self.after_start(arrival),
                None => Wake {
                    tx_done: self.shaper_wake(now),
                    arrival: None,
                },
            }
        };
        Done {
            arrived,
            completed,
            wake,
        }
    }

    /// The arrival event: move every packet due by `now` to `out`, and return when the next
    /// arrival event is due (a lazy link first carries out the starts due by `now`).
    pub fn arrive(
        &mut self,
        now: Nanos,
        out: &mut VecDeque<PacketRef>,
        pkts: &mut Packets,
    ) -> Option<Nanos> {
        self.catch_up(now, pkts);
        self.wire.arrive(now, out).or_else(|| self.probe())
    }

    pub fn backlog_packets(&self) -> usize {
        self.qdisc.len()
    }

    pub fn backlog_bytes(&self) -> u64 {
        self.qdisc.bytes()
    }

    pub fn qdisc_stats(&self) -> QdiscStats {
        self.qdisc.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Packet;
    use crate::net::qdisc::testutil::pkt;
    use crate::net::qdisc::{Codel, CodelParams, Fifo, FifoLimit, PfifoFast};
    use crate::units::NSEC_PER_MSEC;

    const MS: Nanos = NSEC_PER_MSEC;

    /// What a link did with the packets offered to it.
    #[derive(Debug, PartialEq)]
    struct Outcome {
        /// (arrival time, seq, hop) at the far end.
        delivered: Vec<(Nanos, u64, u32)>,
        dropped: Vec<u64>,
        sojourn: (u64, Option<f64>, Option<f64>, Option<u64>),
        stats: QdiscStats,
        busy_time: Nanos,
        tx_packets: u64,
        max_backlog: usize,
        /// Events handled: (ends of transmission, arrival events).
        events: (u32, u32),
    }

    /// Offer `offers` (time, packet) to `link` and handle its events in time order until
    /// nothing is pending; at the same nanosecond an end of transmission comes first, then an
    /// offer, then an arrival. Checks that the link never asks for an event already pending.
    fn drive(mut link: Link, offers: &[(Nanos, Packet)]) -> Outcome {
        let (mut tx_at, mut arrival_at) = (None::<Nanos>, None::<Nanos>);
        let (mut pkts, mut out) = (Packets::new(), VecDeque::new());
        let mut dropped = Vec::new();
        let mut delivered = Vec::new();
        let mut events = (0, 0);
        let apply = |w: Wake, tx_at: &mut Option<Nanos>, arrival_at: &mut Option<Nanos>| {
            if let Some(t) = w.tx_done {
                assert!(tx_at.is_none(), "a second end of transmission at {t}");
                *tx_at = Some(t);
            }
            if let Some(t) = w.arrival {
                assert!(arrival_at.is_none(), "a second arrival event at {t}");
                *arrival_at = Some(t);
            }
        };
        let mut i = 0;
        loop {
            let offer = offers.get(i).map(|o| o.0);
            let Some(t) = [tx_at, offer, arrival_at].into_iter().flatten().min() else {
                break;
            };
            if tx_at == Some(t) {
                tx_at = None;
                events.0 += 1;
                let done = link.tx_done(t, &mut pkts);
                assert!(done.arrived.is_none() && done.completed.is_none());
                apply(done.wake, &mut tx_at, &mut arrival_at);
            } else if offer == Some(t) {
                let p = pkts.insert(offers[i].1);
                let w = link.accept(p, &mut pkts, t);
                i += 1;
                apply(w, &mut tx_at, &mut arrival_at);
            } else {
                events.1 += 1;
                arrival_at = link.arrive(t, &mut out, &mut pkts);
                for r in out.drain(..) {
                    let p = pkts.remove(r);
                    delivered.push((t, p.seq, p.hop));
                }
            }
            pkts.remove_dropped(&mut dropped);
        }
        assert_eq!(pkts.live(), 0, "every packet delivered or dropped");
        assert!(link.qdisc.is_empty() && link.wire.wire.is_empty());
        let h = &link.sojourn;
        Outcome {
            delivered,
            dropped: dropped.iter().map(|p| p.seq).collect(),
            sojourn: (h.count(), h.quantile(0.5), h.quantile(0.99), h.max()),
            stats: link.qdisc_stats(),
            busy_time: link.busy_time,
            tx_packets: link.tx_packets,
            max_backlog: link.max_backlog,
            events,
        }
    }

    /// Bursty offers: runs of up to 30 packets, full-sized or ACK-sized, at random gaps.
    fn bursty(n: u64, seed: u64) -> Vec<(Nanos, Packet)> {
        let mut rng = Rng::new(seed, 1);
        let mut t = 0;
        let mut offers = Vec::new();
        while (offers.len() as u64) < n {
            t += rng.range_u64(0, 40 * MS);
            for _ in 0..rng.range_u64(1, 31) {
                let size = if rng.chance(0.3) { 52 } else { 1500 };
                offers.push((t, pkt(0, size, offers.len() as u64, t)));
                t += rng.range_u64(0, 2) * 100_000;
            }
        }
        offers
    }

    fn link(qdisc: AnyQdisc, lazy: bool) -> Link {
        let mut l = Link::new("l", 10_000_000, 5 * MS, 38, qdisc);
        // Reporting TX completion keeps a link eager; these packets have nothing to report.
        l.reports_tx_completion = !lazy;
        assert_eq!(l.lazy(), lazy);
        l
    }

    #[test]
    fn lazy_serialisation_gives_exactly_the_eager_links_deliveries_drops_and_sojourns() {
        let queues: [fn() -> AnyQdisc; 3] = [
            || Fifo::new(FifoLimit::Packets(20), false).into(),
            || PfifoFast::new(25).into(),
            || {
                let params = CodelParams {
                    target: 2 * MS,
                    interval: 20 * MS,
                    ..CodelParams::new(1500)
                };
                AnyQdisc::other(Codel::new(1000, params))
            },
        ];
        for (k, q) in queues.iter().enumerate() {
            let offers = bursty(3000, k as u64);
            let eager = drive(link(q(), false), &offers);
            let lazy = drive(link(q(), true), &offers);
            assert!(!eager.dropped.is_empty(), "queue {k}: the test should drop");
            assert!(eager.events.0 > 1000, "queue {k}: {:?}", eager.events);
            assert_eq!(lazy.events.0, 0);
            assert_eq!(
                Outcome {
                    events: eager.events,
                    ..lazy
                },
                eager,
                "queue {k}"
            );
            assert!(
                eager.delivered.iter().all(|d| d.2 == 1),
                "each hop advanced once"
            );
        }
    }

    #[test]
    fn a_lazy_link_starts_each_packet_when_the_one_before_ends() {
        // 1 Mbit/s, no L2 overhead: a 1500-byte packet takes 12 ms; 10 ms of delay.
        let mut l = Link::new("l", 1_000_000, 10 * MS, 0, PfifoFast::new(10));
        let mut pkts = Packets::new();
        let mut arrival = None;
        for seq in 0..3 {
            let p = pkts.insert(pkt(0, 1500, seq, 0));
            let w = l.accept(p, &mut pkts, 0);
            assert_eq!(w.tx_done, None);
            arrival = arrival.or(w.arrival);
        }
        assert_eq!(arrival, Some(22 * MS));
        // At 13 ms the second packet is on the wire and the third waits.
        assert_eq!(l.catch_up(13 * MS, &mut pkts), None);
        assert_eq!((l.backlog_packets(), l.tx_packets), (1, 2));
        let mut out = VecDeque::new();
        let mut at = Vec::new();
        let mut next = arrival;
        while let Some(t) = next {
            next = l.arrive(t, &mut out, &mut pkts);
            at.extend(out.drain(..).map(|p| (t / MS, pkts.remove(p).seq)));
        }
        assert_eq!(at, vec![(22, 0), (34, 1), (46, 2)]);
        assert_eq!(l.sojourn.quantile(1.0), Some(24.0 * MS as f64));
        assert_eq!(l.busy_time, 36 * MS);
        assert!(pkts.dropped().is_empty() && pkts.live() == 0);
    }

    /// Segments of skbs: `skbs` (time, segments) of 1500-byte packets, all but each skb's last
    /// marked `skb_more`.
    fn skbs(skbs: &[(Nanos, u64)]) -> Vec<(Nanos, Packet)> {
        let mut seq = 0;
        let mut offers = Vec::new();
        for &(t, n) in skbs {
            for i in 0..n {
                let mut p = pkt(0, 1500, seq, t);
                p.set_skb_more(i + 1 < n);
                offers.push((t, p));
                seq += 1;
            }
        }
        offers
    }

    #[test]
    fn a_shaper_lets_whole_skbs_through_as_its_tokens_allow() {
        // htb at 20 Mbit/s (400 ns a byte), burst 1600 bytes (640 us of tokens), in front of a
        // 10 Gbit/s NIC (1.2 us a packet) with 1 ms of delay. Two 2-segment skbs at 0, one at
        // 10 ms. The first skb leaves on the full bucket (640 - 600 us, then -558.8 us with its
        // second segment); the second waits until the tokens are back at 0 (2.4 + 557.6 us) and
        // its second segment goes with it although the tokens are negative; after the idle
        // gap the bucket is full again and the third leaves at once.
        let mut link = Link::new("nic", 10_000_000_000, MS, 0, PfifoFast::new(100));
        link.reports_tx_completion = true;
        link.shaper = Some(Shaper::new(20_000_000, 1600, 0));
        let got = drive(link, &skbs(&[(0, 2), (0, 2), (10 * MS, 2)]));
        let at: Vec<(Nanos, u64)> = got.delivered.iter().map(|d| (d.0, d.1)).collect();
        assert_eq!(
            at,
            vec![
                (1_001_200, 0),
                (1_002_400, 1),
                (1_561_200, 2),
                (1_562_400, 3),
                (11_001_200, 4),
                (11_002_400, 5)
            ]
        );
        // Ends of transmission at 1.2 and 2.4 us (the second finds the shaper holding), the
        // shaper's wake-up at 560 us, 561.2 us and 10.0012 ms (a last segment's end with
        // nothing behind it and no completion to report asks for no event).
        assert_eq!(got.events.0, 5);
    }

    #[test]
    fn a_shaper_charges_the_overhead_and_keeps_the_long_run_rate() {
        // 100 one-segment skbs of 1486 bytes + 14 of overhead at once through 12 Mbit/s
        // (1 ms each) with a bucket of one packet: the first leaves at 0 and empties the bucket
        // to exactly 0, which still lets the second go as the first ends (htb sends at tokens
        // >= 0); from then the k-th leaves at k - 1 ms.
        let mut link = Link::new("nic", 10_000_000_000, MS, 0, PfifoFast::new(1000));
        link.reports_tx_completion = true;
        link.shaper = Some(Shaper::new(12_000_000, 1500, 14));
        let offers: Vec<(Nanos, Packet)> = (0..100).map(|s| (0, pkt(0, 1486, s, 0))).collect();
        let got = drive(link, &offers);
        // Each arrives 1.1888 us (rounded up) of serialisation and 1 ms of delay later.
        assert_eq!(got.delivered.last(), Some(&(99 * MS + 1_189, 99, 1)));
        assert_eq!(got.delivered[1].0, MS + 2 * 1_189);
        assert_eq!(got.delivered[2].0, 2 * MS + 1_189);
        assert_eq!(got.max_backlog, 99);
    }

    #[test]
    fn an_extreme_shaper_saturates_instead_of_overflowing() {
        // 1 bit/s: each 65535 + 65535-byte packet costs about 1e15 ns of tokens; 20000 of them
        // exceed i64: the debt saturates at i64::MIN ns (292 years), the wake-up that far ahead.
        let mut s = Shaper::new(1, 1 << 30, 65_535);
        for i in 0..20_000 {
            s.charge(i, 65_535, false);
        }
        // (1 ns after the last charge, one token back.)
        assert_eq!(s.held_until(20_000), Some(20_000 + i64::MAX.unsigned_abs()));
    }

    #[test]
    fn an_idle_link_sends_through_an_empty_fifo_without_queueing() {
        let mut l = Link::new("l", 1_000_000, 10 * MS, 0, PfifoFast::new(10));
        let mut pkts = Packets::new();
        let p = pkts.insert(pkt(0, 1500, 0, 0));
        let w = l.accept(p, &mut pkts, 5 * MS);
        assert_eq!(w.arrival, Some(27 * MS));
        let st = l.qdisc_stats();
        assert_eq!((st.enqueued, st.dequeued, l.max_backlog), (1, 1, 1));
        assert_eq!(l.sojourn.max(), Some(0));
    }
}
