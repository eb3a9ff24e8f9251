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
//! wired driver frees the skb on its TX-completion interrupt.

use std::collections::VecDeque;

use super::packet::{Kind, Packet};
use super::qdisc::{Qdisc, QdiscStats};
use crate::metrics::Histogram;
use crate::sim::Rng;
use crate::units::{tx_time, BitsPerSec, Nanos};

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
    /// Independent random loss: each arriving packet is dropped with this probability before it
    /// reaches the queue (a lossy medium, as netem/mm-loss), from its own random stream.
    loss: Option<(f64, Rng)>,
    /// Packets lost to `loss`.
    pub random_losses: u64,
    qdisc: Box<dyn Qdisc>,
    /// The serialiser is busy until then.
    busy_until: Nanos,
    /// A `tx_done` event is scheduled at `busy_until`.
    tx_pending: bool,
    /// Zero-delay link: the packet being serialised, handed over at `tx_done`.
    in_service: Option<Packet>,
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
    /// `busy_time` at the end of the warm-up.
    pub busy_at_warmup: Nanos,
    pub max_backlog: usize,
}

/// A fixed-delay line: a FIFO of (arrival time, packet) with packets entering in arrival-time
/// order, and one pending arrival event at most, for its head.
#[derive(Debug, Default)]
pub struct DelayLine {
    wire: VecDeque<(Nanos, Packet)>,
    arrival_pending: bool,
}

impl DelayLine {
    /// Put `pkt` on the line, due at `at`; returns `Some(at)` when an arrival event must be
    /// scheduled (none is pending).
    pub fn push(&mut self, at: Nanos, pkt: Packet) -> Option<Nanos> {
        self.wire.push_back((at, pkt));
        if self.arrival_pending {
            None
        } else {
            self.arrival_pending = true;
            Some(at)
        }
    }

    /// The arrival event: move every packet due by `now` to `out`, and return when the next
    /// one is due (the event to schedule next), if any.
    pub fn arrive(&mut self, now: Nanos, out: &mut VecDeque<Packet>) -> Option<Nanos> {
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
    pub arrived: Option<Packet>,
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
        qdisc: Box<dyn Qdisc>,
    ) -> Self {
        Link {
            name: name.into(),
            rate,
            delay,
            l2_overhead,
            reports_tx_completion: false,
            loss: None,
            random_losses: 0,
            qdisc,
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
            busy_at_warmup: 0,
            max_backlog: 0,
        }
    }

    /// Drop each arriving packet with probability `p`, drawing from `rng`.
    pub fn set_loss(&mut self, p: f64, rng: Rng) {
        self.loss = (p > 0.0).then_some((p, rng));
    }

    /// A packet arrives at the link's queue.
    pub fn accept(&mut self, mut pkt: Packet, now: Nanos, dropped: &mut Vec<Packet>) -> Wake {
        if let Some((p, rng)) = self.loss.as_mut() {
            if rng.chance(*p) {
                self.random_losses += 1;
                dropped.push(pkt);
                return Wake::default();
            }
        }
        pkt.enqueued = now;
        self.qdisc.enqueue(pkt, now, dropped);
        self.max_backlog = self.max_backlog.max(self.qdisc.len());
        if self.tx_pending {
            Wake::default()
        } else if now >= self.busy_until {
            self.start_next(now, dropped)
        } else {
            // Busy: make sure the serialiser wakes up to take the next packet.
            self.tx_pending = true;
            Wake {
                tx_done: Some(self.busy_until),
                arrival: None,
            }
        }
    }

    /// Start serialising the next queued packet, if any. The packet goes onto the wire at once
    /// (it arrives at end + delay); the end of serialisation needs an event only to start the
    /// next queued packet, to hand over a zero-delay packet, or to report TX completion.
    fn start_next(&mut self, now: Nanos, dropped: &mut Vec<Packet>) -> Wake {
        let Some(pkt) = self.qdisc.dequeue(now, dropped) else {
            return Wake::default();
        };
        if now >= self.record_from {
            self.sojourn.record(now - pkt.enqueued);
        }
        let dur = self.tx_time((pkt.size + self.l2_overhead) as u64);
        let end = now + dur;
        self.busy_time += dur;
        self.busy_until = end;
        self.tx_packets += 1;
        self.tx_bytes += pkt.size as u64;
        let mut wake = Wake::default();
        let mut pkt = pkt;
        if self.reports_tx_completion && pkt.kind == Kind::Data && pkt.truesize > 0 {
            self.completion = Some((pkt.flow, pkt.truesize));
            self.tx_pending = true;
            // The skb is freed at the host: no later hop may report its completion again.
            pkt.truesize = 0;
        }
        if self.delay == 0 {
            self.in_service = Some(pkt);
            self.tx_pending = true;
        } else {
            wake.arrival = self.wire.push(end + self.delay, pkt);
        }
        if !self.qdisc.is_empty() {
            self.tx_pending = true; // the next queued packet starts at `end`
        }
        if self.tx_pending {
            wake.tx_done = Some(end);
        }
        wake
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
    pub fn tx_done(&mut self, now: Nanos, dropped: &mut Vec<Packet>) -> Done {
        self.tx_pending = false;
        let arrived = self.in_service.take();
        let completed = self.completion.take();
        let wake = if self.qdisc.is_empty() {
            Wake::default()
        } else {
            self.start_next(now, dropped)
        };
        Done {
            arrived,
            completed,
            wake,
        }
    }

    /// The head of the delay line is due: move every packet due by `now` to `out`, and return
    /// when the next one is due.
    pub fn arrive(&mut self, now: Nanos, out: &mut VecDeque<Packet>) -> Option<Nanos> {
        self.wire.arrive(now, out)
    }

    /// Time spent transmitting since the warm-up.
    pub fn busy_after_warmup(&self) -> Nanos {
        self.busy_time - self.busy_at_warmup
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
