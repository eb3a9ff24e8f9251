//! The simulated world: the network, the endpoints at the ends of its routes, and the event
//! loop that connects them.
//!
//! The network ([`Network`]) holds the links, trace links and BSSs, the routes and the packets,
//! and moves a packet from hop to hop. At the end of a route is an endpoint (a TCP sender or
//! receiver, a ping responder or its origin), which reacts at once (an ACK triggers sends; a
//! data segment triggers an ACK), so one event can cascade through several components within
//! the same nanosecond; that cascade runs in FIFO order from the network's work queue, keeping
//! runs deterministic.
//!
//! Components own their next event (see `sim`): links schedule the end of the current
//! transmission and the next arrival, senders their pacing/RTO/reorder timers, receivers their
//! delayed-ACK timer. The world only dispatches.

use crate::metrics::results::{
    FlowSeries, PingSeries, QueueSeries, QueueSummary, SeriesOf, WifiNodeSummary, WifiSeries,
};
use crate::metrics::Histogram;
use crate::net::network::{Hosts, NetEvent, Network, Scheduler};
use crate::net::packet::{Emit, Kind, Packet, PacketRef, ICMP_HEADER, UDP_HEADER};
use crate::sim::EventQueue;
use crate::tcp::receiver::{gro_merges, TcpReceiver};
use crate::tcp::sender::{Out, SenderTimer, TcpSender};
use crate::units::Nanos;

pub use crate::net::network::{Hop, QueueRef};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    LinkTxDone(u32),
    LinkArrival(u32),
    TraceOpportunity(u32),
    TraceArrival(u32),
    WifiWake(u32),
    SenderTimer(u32, SenderTimer),
    DelAck(u32),
    FlowStart(u32),
    FlowStop(u32),
    PingSend(u32),
    Sample,
    /// End of the warm-up: snapshot counters that summaries measure from.
    Warmup,
    /// The measurement window opens or closes: queue counters are recorded.
    LoadStart,
    LoadEnd,
}

/// A TCP connection: sender, receiver, and what the summary needs to know about it.
pub struct Flow {
    pub name: String,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub start: Nanos,
    pub stop: Nanos,
    /// Packets of this flow dropped in queues.
    pub drops: u64,
    pub series: FlowSeries,
    last_delivered: u64,
    delivered_at_from: u64,
    delivered_at_stop: Option<u64>,
}

impl Flow {
    /// Payload bytes delivered between max(start, warm-up) and the flow's stop.
    pub fn delivered_in_window(&self) -> u64 {
        self.delivered_at_stop
            .unwrap_or(self.receiver.delivered_bytes)
            - self.delivered_at_from
    }
}

/// ICMP or UDP echo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingKind {
    Icmp,
    Udp,
}

pub struct Ping {
    pub name: String,
    pub kind: PingKind,
    pub dscp: u8,
    pub route: u32,
    pub return_route: u32,
    pub interval: Nanos,
    pub start: Nanos,
    pub stop: Nanos,
    pub sent: u64,
    pub received: u64,
    /// RTTs of the pings sent in the measurement window (the flows' span, as Flent cuts).
    pub rtt: Histogram,
    /// RTTs of every ping sent after the warm-up.
    pub rtt_all: Histogram,
    pub series: PingSeries,
}

pub struct World {
    pub queue: EventQueue<Event>,
    /// Links, trace links, BSSs, routes and the packets on them.
    pub net: Network,
    /// The flows and pings at the ends of the routes.
    pub ends: Endpoints,
    pub step: Nanos,
    /// Summary statistics (percentiles, goodput) count from this time on.
    pub warmup: Nanos,
}

/// What sits at the ends of the simulator's routes: each flow's TCP sender and receiver, each
/// ping's origin and echo responder.
pub struct Endpoints {
    pub flows: Vec<Flow>,
    pub pings: Vec<Ping>,
    warmup: Nanos,
    /// The segments of the GRO skb being built (reused).
    gro_batch: Vec<Packet>,
    /// Sockets whose TSQ handler runs after a batch of Wi-Fi completions.
    woken: Vec<u32>,
    timers: Vec<(Nanos, SenderTimer)>,
}

impl Scheduler for EventQueue<Event> {
    #[inline(always)]
    fn schedule(&mut self, at: Nanos, ev: NetEvent) {
        let ev = match ev {
            NetEvent::LinkTxDone(id) => Event::LinkTxDone(id),
            NetEvent::LinkArrival(id) => Event::LinkArrival(id),
            NetEvent::TraceOpportunity(id) => Event::TraceOpportunity(id),
            NetEvent::TraceArrival(id) => Event::TraceArrival(id),
            NetEvent::WifiWake(id) => Event::WifiWake(id),
        };
        EventQueue::schedule(self, at, ev);
    }
}

impl World {
    pub fn new(step: Nanos, warmup: Nanos) -> Self {
        World {
            queue: EventQueue::default(),
            net: Network::new(step, warmup),
            ends: Endpoints {
                flows: Vec::new(),
                pings: Vec::new(),
                warmup,
                gro_batch: Vec::new(),
                woken: Vec::new(),
                timers: Vec::new(),
            },
            step,
            warmup,
        }
    }

    pub fn add_route(&mut self, hops: Vec<Hop>) -> u32 {
        self.net.add_route(hops)
    }

    pub fn add_flow(
        &mut self,
        name: String,
        sender: TcpSender,
        receiver: TcpReceiver,
        start: Nanos,
        stop: Nanos,
    ) -> u32 {
        let flows = &mut self.ends.flows;
        let id = flows.len() as u32;
        flows.push(Flow {
            name,
            sender,
            receiver,
            start,
            stop,
            drops: 0,
            series: FlowSeries::default(),
            last_delivered: 0,
            delivered_at_from: 0,
            delivered_at_stop: None,
        });
        self.queue.schedule(start, Event::FlowStart(id));
        self.queue.schedule(stop, Event::FlowStop(id));
        id
    }

    #[allow(clippy::too_many_arguments)]
    pub fn add_ping(
        &mut self,
        name: String,
        kind: PingKind,
        dscp: u8,
        route: u32,
        return_route: u32,
        interval: Nanos,
        start: Nanos,
        stop: Nanos,
    ) -> u32 {
        let pings = &mut self.ends.pings;
        let id = pings.len() as u32;
        pings.push(Ping {
            name,
            kind,
            dscp,
            route,
            return_route,
            interval,
            start,
            stop,
            sent: 0,
            received: 0,
            rtt: Histogram::default(),
            rtt_all: Histogram::default(),
            series: PingSeries::default(),
        });
        self.queue.schedule(start, Event::PingSend(id));
        id
    }

    /// The measurement window: [`from`, `to`] (clamped to the warm-up), the span of the flows.
    pub fn set_load_window(&mut self, from: Nanos, to: Nanos) {
        self.net.set_load_window(from, to);
    }

    /// The measurement window's bounds.
    pub fn load_window(&self) -> (Nanos, Nanos) {
        self.net.load_window()
    }

    /// Run until simulated time `until`.
    pub fn run(&mut self, until: Nanos) {
        self.schedule_start(until);
        while let Some(ev) = self.queue.pop_until(until) {
            self.dispatch(ev.event);
        }
        self.queue.advance_to(until);
        self.catch_up_links();
    }

    /// Run until simulated time `until`, calling `report` with the simulated time reached at
    /// every multiple of `every` before `until`, once every event due by then has run. The run
    /// goes in spans of `every`, each the loop of [`World::run`] (no cost per event), and the
    /// report does not touch the world, so results are those of [`World::run`]. When `report`
    /// returns false the run stops there (a front end's interruption) and this returns false;
    /// true when it ended at `until`.
    pub fn run_reporting(
        &mut self,
        until: Nanos,
        every: Nanos,
        report: &mut dyn FnMut(Nanos) -> bool,
    ) -> bool {
        self.schedule_start(until);
        let every = every.max(1);
        let mut stop = every.min(until);
        loop {
            while let Some(ev) = self.queue.pop_until(stop) {
                self.dispatch(ev.event);
            }
            if stop >= until {
                break;
            }
            if !report(stop) {
                return false;
            }
            stop = stop.saturating_add(every).min(until);
        }
        self.queue.advance_to(until);
        self.catch_up_links();
        true
    }

    /// The events a run schedules before its first: sampling, the warm-up's and the load
    /// window's ends (once, on the first call).
    fn schedule_start(&mut self, until: Nanos) {
        if self.queue.processed() == 0 {
            let (from, to) = self.net.load_window();
            if self.step > 0 {
                self.queue.schedule(self.step, Event::Sample);
            }
            if self.warmup > 0 {
                self.queue.schedule(self.warmup, Event::Warmup);
            }
            if from > 0 {
                self.queue.schedule(from, Event::LoadStart);
            }
            if to < until {
                self.queue.schedule(to, Event::LoadEnd);
            }
        }
    }

    /// Let every lazy link carry out the starts due by now (see `net::link`), so that its
    /// backlog, counters and busy time are those of this instant.
    fn catch_up_links(&mut self) {
        let now = self.now();
        self.net.catch_up(now, &mut self.queue, &mut self.ends);
    }

    fn now(&self) -> Nanos {
        self.queue.now()
    }

    fn dispatch(&mut self, ev: Event) {
        let now = self.now();
        let (net, queue, ends) = (&mut self.net, &mut self.queue, &mut self.ends);
        match ev {
            Event::LinkTxDone(id) => net.handle(NetEvent::LinkTxDone(id), now, queue, ends),
            Event::LinkArrival(id) => net.handle(NetEvent::LinkArrival(id), now, queue, ends),
            Event::TraceOpportunity(id) => {
                net.handle(NetEvent::TraceOpportunity(id), now, queue, ends)
            }
            Event::TraceArrival(id) => net.handle(NetEvent::TraceArrival(id), now, queue, ends),
            Event::WifiWake(b) => net.handle(NetEvent::WifiWake(b), now, queue, ends),
            Event::SenderTimer(f, which) => {
                ends.with_sender(net, queue, f, now, |s, out| s.on_timer(which, out))
            }
            Event::DelAck(f) => {
                let flow = &mut ends.flows[f as usize];
                let mut acks = Emit {
                    pkts: &mut net.pkts,
                    work: &mut net.work,
                };
                for t in flow.receiver.on_delack_timer(now, &mut acks).times() {
                    queue.schedule(t, Event::DelAck(f));
                }
            }
            Event::FlowStart(f) => ends.with_sender(net, queue, f, now, |s, out| s.start(out)),
            Event::FlowStop(f) => {
                let flow = &mut ends.flows[f as usize];
                flow.sender.stop();
                flow.delivered_at_stop = Some(flow.receiver.delivered_bytes);
            }
            Event::Warmup => {
                net.catch_up(now, queue, ends);
                for flow in &mut ends.flows {
                    if flow.start < now {
                        flow.delivered_at_from = flow.receiver.delivered_bytes;
                    }
                }
                net.queues_end_warmup();
            }
            Event::LoadStart => {
                net.catch_up(now, queue, ends);
                net.load_start();
            }
            Event::LoadEnd => {
                net.catch_up(now, queue, ends);
                net.load_end();
            }
            Event::PingSend(p) => ends.send_ping(net, queue, p, now),
            Event::Sample => {
                net.catch_up(now, queue, ends);
                ends.sample_flows(now, self.step);
                net.sample_wifi(now);
                net.sample_queues(now);
                queue.schedule(now + self.step, Event::Sample);
            }
        }
        net.forward(now, queue, ends);
    }

    /// Summaries over [warm-up, `end`] and series of the watched queues, in watch order (a
    /// series' id is its position).
    pub fn queue_results(&self, end: Nanos) -> (Vec<QueueSummary>, Vec<SeriesOf<QueueSeries>>) {
        self.net.queue_results(end)
    }

    /// Per-node Wi-Fi summaries over [warm-up, `end`].
    pub fn wifi_summaries(&self, end: Nanos) -> Vec<WifiNodeSummary> {
        self.net.wifi_summaries(end)
    }

    /// The Wi-Fi series of every BSS, by BSS number.
    pub fn wifi_series(&self) -> Vec<SeriesOf<WifiSeries>> {
        self.net.wifi_series()
    }

    pub fn events_processed(&self) -> u64 {
        self.queue.processed()
    }

    /// Packets in the network now: queued, on a wire or in the air, or held by a BSS for
    /// reordering or retransmission.
    pub fn packets_in_network(&self) -> usize {
        self.net.packets()
    }
}

impl Endpoints {
    /// Run `f` on flow `id`'s sender with an output context, then schedule the timers it set.
    #[inline]
    fn with_sender(
        &mut self,
        net: &mut Network,
        queue: &mut EventQueue<Event>,
        id: u32,
        now: Nanos,
        f: impl FnOnce(&mut TcpSender, &mut Out),
    ) {
        let flow = &mut self.flows[id as usize];
        let mut out = Out::new(now, &mut net.pkts, &mut net.work, &mut self.timers);
        f(&mut flow.sender, &mut out);
        for (t, which) in self.timers.drain(..) {
            queue.schedule(t, Event::SenderTimer(id, which));
        }
    }

    fn send_ping(&mut self, net: &mut Network, queue: &mut EventQueue<Event>, id: u32, now: Nanos) {
        let ping = &mut self.pings[id as usize];
        if now >= ping.stop {
            return;
        }
        let size = match ping.kind {
            PingKind::Icmp => ICMP_HEADER + 56, // ping's default 56 data bytes
            PingKind::Udp => UDP_HEADER + 48,
        };
        let mut p = Packet::new(Kind::PingRequest, id, ping.route, size, now);
        p.seq = ping.sent;
        p.dscp = ping.dscp;
        ping.sent += 1;
        queue.schedule(now + ping.interval, Event::PingSend(id));
        let r = net.pkts.insert(p);
        net.work.push_back(r);
    }

    /// Append each active flow's goodput over the step ending at `now` and its sender's state
    /// to its series.
    fn sample_flows(&mut self, now: Nanos, step: Nanos) {
        for flow in &mut self.flows {
            let delivered = flow.receiver.delivered_bytes;
            let goodput_bps = (delivered - flow.last_delivered) as f64 * 8.0 * 1e9 / step as f64;
            flow.last_delivered = delivered;
            let active = now > flow.start && now <= flow.stop + step;
            if active {
                flow.series.record(now, goodput_bps, &flow.sender);
            }
        }
    }

    /// Data reaching flow `f`'s receiver. With GRO, the segments of this flow delivered with
    /// this one (one RX interrupt's batch, next on the work queue) that merge into its skb are
    /// taken with it.
    #[inline]
    fn receive(
        &mut self,
        net: &mut Network,
        queue: &mut EventQueue<Event>,
        pkt: PacketRef,
        f: u32,
        now: Nanos,
    ) {
        let data = net.pkts.remove(pkt);
        let flow = &mut self.flows[f as usize];
        let delack = if flow.receiver.gro {
            let mut batch = std::mem::take(&mut self.gro_batch);
            let mut len = data.size;
            batch.push(data);
            while let Some(&next) = net.work.front() {
                let p = &net.pkts[next];
                let (first, last) = (&batch[0], &batch[batch.len() - 1]);
                if net.hop(next) != Hop::Receiver(f) || !gro_merges(first, last, len, p) {
                    break;
                }
                len += p.payload;
                net.work.pop_front();
                batch.push(net.pkts.remove(next));
            }
            let mut acks = Emit {
                pkts: &mut net.pkts,
                work: &mut net.work,
            };
            let t = flow.receiver.on_gro_skb(&batch, now, &mut acks);
            batch.clear();
            self.gro_batch = batch;
            t
        } else {
            let mut acks = Emit {
                pkts: &mut net.pkts,
                work: &mut net.work,
            };
            flow.receiver.on_data(&data, now, &mut acks)
        };
        for t in delack.times() {
            queue.schedule(t, Event::DelAck(f));
        }
    }

    /// A ping reply reaching its origin: its RTT counts in the measurement window's
    /// histogram when sent in that window, in the whole run's when sent after the warm-up.
    fn ping_reply(&mut self, net: &mut Network, pkt: PacketRef, p: u32, now: Nanos) {
        let pkt = net.pkts.remove(pkt);
        let ping = &mut self.pings[p as usize];
        ping.received += 1;
        let rtt = now - pkt.sent;
        if pkt.sent >= self.warmup {
            ping.rtt_all.record(rtt);
        }
        let (from, to) = net.load_window();
        if pkt.sent >= from && pkt.sent <= to {
            ping.rtt.record(rtt);
        }
        ping.series.push(pkt.sent, rtt);
    }
}

impl Hosts<EventQueue<Event>> for Endpoints {
    #[inline(always)]
    fn arrive(
        &mut self,
        net: &mut Network,
        queue: &mut EventQueue<Event>,
        pkt: PacketRef,
        hop: Hop,
        now: Nanos,
    ) {
        match hop {
            Hop::Receiver(f) => self.receive(net, queue, pkt, f, now),
            Hop::Sender(f) => {
                let ack = net.pkts.remove(pkt);
                self.with_sender(net, queue, f, now, |s, out| s.on_ack(&ack, out));
            }
            Hop::PingEcho(p) => {
                let reply = &mut net.pkts[pkt];
                reply.set_kind(Kind::PingReply);
                reply.route = self.pings[p as usize].return_route;
                reply.hop = 0;
                net.work.push_back(pkt);
            }
            Hop::PingOrigin(p) => self.ping_reply(net, pkt, p, now),
            Hop::Link(_) | Hop::Trace(_) | Hop::Wifi { .. } | Hop::Host(_) => {
                // The network takes its own hops; the simulator's routes end at an endpoint.
                debug_assert!(false, "{hop:?} is not a simulator endpoint");
                net.pkts.remove(pkt);
            }
        }
    }

    #[inline(always)]
    fn tx_complete(
        &mut self,
        net: &mut Network,
        queue: &mut EventQueue<Event>,
        flow: u32,
        truesize: u32,
        now: Nanos,
    ) {
        self.with_sender(net, queue, flow, now, |s, out| {
            s.on_tx_complete(truesize, out)
        });
    }

    /// Release the TSQ charge of the packets a BSS reported complete, then run the TSQ
    /// handler of each socket this unthrottled, once, in the order of their first completion.
    fn wifi_complete(
        &mut self,
        net: &mut Network,
        queue: &mut EventQueue<Event>,
        completed: &[(u32, u32)],
        now: Nanos,
    ) {
        let mut woken = std::mem::take(&mut self.woken);
        for &(flow, truesize) in completed {
            if self.flows[flow as usize].sender.release_tx(truesize) {
                woken.push(flow);
            }
        }
        for &flow in &woken {
            self.with_sender(net, queue, flow, now, |s, out| s.tsq_handler(out));
        }
        woken.clear();
        self.woken = woken;
    }

    /// Count a dropped data packet or ACK against its flow; a drop at the sender's own NIC
    /// frees its TSQ charge.
    fn dropped(
        &mut self,
        net: &mut Network,
        queue: &mut EventQueue<Event>,
        pkt: Packet,
        at_nic: bool,
        now: Nanos,
    ) {
        if matches!(pkt.kind(), Kind::Data | Kind::Ack) {
            self.flows[pkt.flow as usize].drops += 1;
        }
        #[cfg(feature = "ack-log")]
        if pkt.kind() == Kind::Data {
            crate::tcp::ack_log::record_drop(pkt.flow, pkt.seq, now);
        }
        if let Some((flow, truesize)) = pkt.tsq_charge().filter(|_| at_nic) {
            self.with_sender(net, queue, flow, now, |s, out| {
                s.on_tx_complete(truesize, out)
            });
        }
    }
}
