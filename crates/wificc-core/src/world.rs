//! The simulated world: components, routes, and the event loop that connects them.
//!
//! A packet follows a route: a list of hops, each a link (whose queue accepts it) or an
//! endpoint (a TCP sender or receiver, a ping responder or its origin). When a link delivers a
//! packet at the far end, the world hands it to the route's next hop. Endpoints react at once
//! (an ACK triggers sends; a data segment triggers an ACK), so one event can cascade through
//! several components within the same nanosecond; that cascade runs in FIFO order from a work
//! queue, keeping runs deterministic.
//!
//! Components own their next event (see `sim`): links schedule the end of the current
//! transmission and the next arrival, senders their pacing/RTO/reorder timers, receivers their
//! delayed-ACK timer. The world only dispatches.

use std::collections::VecDeque;

use crate::metrics::results::{
    FlowSeries, PingSeries, QueueSeries, QueueSummary, SeriesOf, WifiNodeSummary, WifiSeries,
};
use crate::metrics::Histogram;
use crate::net::link::{Link, Wake};
use crate::net::packet::{Emit, Kind, Packet, PacketRef, Packets, ICMP_HEADER, UDP_HEADER};
use crate::net::trace::{TraceLink, TraceWake};
use crate::net::wifi::{Bss, NodeStats, WifiOut};
use crate::sim::EventQueue;
use crate::tcp::receiver::{gro_merges, TcpReceiver};
use crate::tcp::sender::{Out, SenderTimer, TcpSender};
use crate::units::Nanos;

/// One hop of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    Link(u32),
    /// A trace-driven link direction.
    Trace(u32),
    /// A Wi-Fi BSS: from node `from` to node `to` (node 0 is the AP).
    Wifi {
        bss: u16,
        from: u16,
        to: u16,
    },
    /// TCP sender of flow n (ACKs end here).
    Sender(u32),
    /// TCP receiver of flow n (data ends here).
    Receiver(u32),
    /// Echo responder of ping n: turns a request into a reply on the ping's return route.
    PingEcho(u32),
    /// Origin of ping n: a reply ends here.
    PingOrigin(u32),
}

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

/// A Wi-Fi BSS and what the world records of it.
pub struct WifiBss {
    pub name: String,
    pub bss: Bss,
    /// Per-node statistics at the last sample, for per-step differences.
    last: Vec<NodeStats>,
    pub series: WifiSeries,
}

/// What the queue summaries count from an instant on: each link's busy time, each trace
/// link's delivered bytes, each BSS node's airtime.
#[derive(Debug, Clone, Default)]
struct Counters {
    busy: Vec<Nanos>,
    delivered: Vec<u64>,
    airtime: Vec<Vec<Nanos>>,
}

/// A span of the run the summaries cover: its bounds and the counters at its start (and at its
/// end once it has passed).
#[derive(Debug, Clone, Default)]
struct Window {
    from: Nanos,
    to: Nanos,
    at_from: Counters,
    at_to: Option<Counters>,
}

/// A queue the world records: a wired link's or a trace link's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueRef {
    Link(u32),
    Trace(u32),
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
    pub links: Vec<Link>,
    pub traces: Vec<TraceLink>,
    pub bsses: Vec<WifiBss>,
    pub routes: Vec<Vec<Hop>>,
    pub flows: Vec<Flow>,
    pub pings: Vec<Ping>,
    /// Queues whose series are recorded and summarised.
    pub watched: Vec<(QueueRef, QueueSeries)>,
    /// [warm-up, end of run]: the whole-run ("_all") summaries.
    whole: Window,
    /// The measurement window: from the first flow's start (not before the warm-up) to the last
    /// flow's stop, as Flent cuts its box, CDF and totals plots (`cutoff = (DELAY, -DELAY)`);
    /// the whole run when there is no flow.
    load: Window,
    /// TX completions reported by Wi-Fi (flow, truesize), drained after each BSS call.
    completed: Vec<(u32, u32)>,
    /// Sockets whose TSQ handler runs after a batch of completions.
    woken: Vec<u32>,
    pub step: Nanos,
    /// Summary statistics (percentiles, goodput) count from this time on.
    pub warmup: Nanos,
    /// Every packet in the network (see `net::packet::Packets`).
    pkts: Packets,
    /// Packets to hand to their next hop now, in order.
    work: VecDeque<PacketRef>,
    /// The segments of the GRO skb being built (reused).
    gro_batch: Vec<Packet>,
    /// Dropped packets being accounted (kept for its capacity).
    dropped: Vec<Packet>,
    timers: Vec<(Nanos, SenderTimer)>,
}

impl World {
    pub fn new(step: Nanos, warmup: Nanos) -> Self {
        World {
            queue: EventQueue::default(),
            links: Vec::new(),
            traces: Vec::new(),
            bsses: Vec::new(),
            completed: Vec::new(),
            woken: Vec::new(),
            routes: Vec::new(),
            flows: Vec::new(),
            pings: Vec::new(),
            watched: Vec::new(),
            whole: Window {
                from: warmup,
                to: Nanos::MAX,
                ..Window::default()
            },
            load: Window {
                from: warmup,
                to: Nanos::MAX,
                ..Window::default()
            },
            step,
            warmup,
            pkts: Packets::new(),
            work: VecDeque::new(),
            gro_batch: Vec::new(),
            dropped: Vec::new(),
            timers: Vec::new(),
        }
    }

    pub fn add_link(&mut self, mut link: Link) -> u32 {
        link.record_from = self.warmup;
        self.links.push(link);
        (self.links.len() - 1) as u32
    }

    pub fn add_trace(&mut self, mut link: TraceLink) -> u32 {
        link.record_from = self.warmup;
        self.traces.push(link);
        (self.traces.len() - 1) as u32
    }

    pub fn add_bss(&mut self, name: String, mut bss: Bss) -> u32 {
        bss.set_record_from(self.warmup);
        let last = bss.stats().nodes;
        for w in [&mut self.whole, &mut self.load] {
            w.at_from.airtime.push(vec![0; last.len()]);
        }
        self.bsses.push(WifiBss {
            name,
            bss,
            last,
            series: WifiSeries::default(),
        });
        (self.bsses.len() - 1) as u32
    }

    pub fn add_route(&mut self, hops: Vec<Hop>) -> u32 {
        self.routes.push(hops);
        (self.routes.len() - 1) as u32
    }

    pub fn add_flow(
        &mut self,
        name: String,
        sender: TcpSender,
        receiver: TcpReceiver,
        start: Nanos,
        stop: Nanos,
    ) -> u32 {
        let id = self.flows.len() as u32;
        self.flows.push(Flow {
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
        let id = self.pings.len() as u32;
        self.pings.push(Ping {
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
        self.load.from = from.max(self.warmup);
        self.load.to = to.max(self.load.from);
    }

    /// The measurement window's bounds.
    pub fn load_window(&self) -> (Nanos, Nanos) {
        (self.load.from, self.load.to)
    }

    fn counters(&self) -> Counters {
        Counters {
            busy: self.links.iter().map(|l| l.busy_time).collect(),
            delivered: self.traces.iter().map(|t| t.delivered_bytes).collect(),
            airtime: self
                .bsses
                .iter()
                .map(|w| w.bss.stats().nodes.iter().map(|n| n.airtime).collect())
                .collect(),
        }
    }

    /// Counters of `window` up to `end`: (at its start, at its end or now).
    fn span(&self, window: &Window, end: Nanos) -> (Counters, Counters, Nanos, Nanos) {
        let from = window.from.min(end);
        let to = window.to.min(end);
        let now = match &window.at_to {
            Some(c) if window.to <= end => c.clone(),
            _ => self.counters(),
        };
        (window.at_from.clone(), now, from, to)
    }

    pub fn watch(&mut self, q: QueueRef) {
        self.watched.push((q, QueueSeries::default()));
    }

    pub fn queue_name(&self, q: QueueRef) -> &str {
        match q {
            QueueRef::Link(l) => &self.links[l as usize].name,
            QueueRef::Trace(t) => &self.traces[t as usize].name,
        }
    }

    /// (packets, bytes, drops) queued now.
    fn backlog(&self, q: QueueRef) -> (u64, u64, u64) {
        match q {
            QueueRef::Link(l) => {
                let l = &self.links[l as usize];
                (
                    l.backlog_packets() as u64,
                    l.backlog_bytes(),
                    l.qdisc_stats().dropped,
                )
            }
            QueueRef::Trace(t) => {
                let t = &self.traces[t as usize];
                (
                    t.backlog_packets() as u64,
                    t.backlog_bytes(),
                    t.qdisc_stats().dropped,
                )
            }
        }
    }

    /// Summary of a watched queue: counters over [warm-up, `end`], utilisation over the
    /// measurement window (and over [warm-up, `end`] as `utilization_all`).
    pub fn queue_summary(&self, q: QueueRef, end: Nanos) -> QueueSummary {
        let ms = |v: Option<f64>| v.map(|x| x / 1e6);
        let utilization = |window: &Window| -> f64 {
            let (a, b, from, to) = self.span(window, end);
            match q {
                QueueRef::Link(l) => {
                    let l = l as usize;
                    let busy = b.busy[l] - a.busy.get(l).copied().unwrap_or(0);
                    busy as f64 / to.saturating_sub(from).max(1) as f64
                }
                QueueRef::Trace(t) => {
                    let t = t as usize;
                    let link = &self.traces[t];
                    let got = b.delivered[t] - a.delivered.get(t).copied().unwrap_or(0);
                    got as f64 / link.capacity_bytes(from, to).max(1) as f64
                }
            }
        };
        let (load, all) = (utilization(&self.load), utilization(&self.whole));
        match q {
            QueueRef::Link(l) => {
                let link = &self.links[l as usize];
                let st = link.qdisc_stats();
                QueueSummary {
                    name: link.name.clone(),
                    enqueued: st.enqueued,
                    dropped: st.dropped,
                    random_losses: link.random_losses,
                    ecn_marked: st.ecn_marked,
                    tx_packets: link.tx_packets,
                    utilization: load,
                    utilization_all: all,
                    max_backlog_pkts: link.max_backlog,
                    sojourn_p50_ms: ms(link.sojourn.quantile(0.50)),
                    sojourn_p95_ms: ms(link.sojourn.quantile(0.95)),
                    sojourn_p99_ms: ms(link.sojourn.quantile(0.99)),
                    signal_delay_p95_ms: None,
                }
            }
            QueueRef::Trace(t) => {
                let link = &self.traces[t as usize];
                let st = link.qdisc_stats();
                QueueSummary {
                    name: link.name.clone(),
                    enqueued: st.enqueued,
                    dropped: st.dropped,
                    random_losses: link.lost,
                    ecn_marked: st.ecn_marked,
                    tx_packets: link.delivered_packets,
                    utilization: load,
                    utilization_all: all,
                    max_backlog_pkts: link.max_backlog,
                    sojourn_p50_ms: ms(link.queueing_delay.quantile(0.50)),
                    sojourn_p95_ms: ms(link.queueing_delay.quantile(0.95)),
                    sojourn_p99_ms: ms(link.queueing_delay.quantile(0.99)),
                    signal_delay_p95_ms: ms(link.signal_delay().quantile(0.95)),
                }
            }
        }
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
            if self.step > 0 {
                self.queue.schedule(self.step, Event::Sample);
            }
            if self.warmup > 0 {
                self.queue.schedule(self.warmup, Event::Warmup);
            }
            if self.load.from > 0 {
                self.queue.schedule(self.load.from, Event::LoadStart);
            }
            if self.load.to < until {
                self.queue.schedule(self.load.to, Event::LoadEnd);
            }
        }
    }

    /// Let every lazy link carry out the starts due by now (see `net::link`), so that its
    /// backlog, counters and busy time are those of this instant.
    fn catch_up_links(&mut self) {
        let now = self.now();
        for id in 0..self.links.len() as u32 {
            if let Some(t) = self.links[id as usize].catch_up(now, &mut self.pkts) {
                self.queue.schedule(t, Event::LinkArrival(id));
            }
            self.handle_drops(Some(id));
        }
    }

    fn now(&self) -> Nanos {
        self.queue.now()
    }

    fn schedule_wake(&mut self, id: u32, wake: Wake) {
        if let Some(t) = wake.tx_done {
            self.queue.schedule(t, Event::LinkTxDone(id));
        }
        if let Some(t) = wake.arrival {
            self.queue.schedule(t, Event::LinkArrival(id));
        }
    }

    fn schedule_trace_wake(&mut self, id: u32, wake: TraceWake) {
        if let Some(t) = wake.opportunity {
            self.queue.schedule(t, Event::TraceOpportunity(id));
        }
        if let Some(t) = wake.arrival {
            self.queue.schedule(t, Event::TraceArrival(id));
        }
    }

    fn dispatch(&mut self, ev: Event) {
        let now = self.now();
        match ev {
            Event::LinkTxDone(id) => {
                let done = self.links[id as usize].tx_done(now, &mut self.pkts);
                self.schedule_wake(id, done.wake);
                if let Some(p) = done.arrived {
                    self.work.push_back(p);
                }
                if let Some((flow, truesize)) = done.completed {
                    self.with_sender(flow, |s, out| s.on_tx_complete(truesize, out));
                }
                self.handle_drops(Some(id));
            }
            Event::LinkArrival(id) => {
                if let Some(t) = self.links[id as usize].arrive(now, &mut self.work, &mut self.pkts)
                {
                    self.queue.schedule(t, Event::LinkArrival(id));
                }
                self.handle_drops(Some(id));
            }
            Event::TraceOpportunity(id) => {
                let wake = self.traces[id as usize].opportunity(now, &mut self.pkts);
                self.schedule_trace_wake(id, wake);
                self.handle_drops(None);
            }
            Event::TraceArrival(id) => {
                if let Some(t) = self.traces[id as usize].arrive(now, &mut self.work) {
                    self.queue.schedule(t, Event::TraceArrival(id));
                }
            }
            Event::WifiWake(b) => {
                let mut out = WifiOut {
                    pkts: &mut self.pkts,
                    delivered: &mut self.work,
                    completed: &mut self.completed,
                };
                if let Some(t) = self.bsses[b as usize].bss.wake(now, &mut out) {
                    self.queue.schedule(t, Event::WifiWake(b));
                }
                self.wifi_completions();
            }
            Event::SenderTimer(f, which) => self.with_sender(f, |s, out| s.on_timer(which, out)),
            Event::DelAck(f) => {
                let flow = &mut self.flows[f as usize];
                let mut acks = Emit {
                    pkts: &mut self.pkts,
                    work: &mut self.work,
                };
                if let Some(t) = flow.receiver.on_delack_timer(now, &mut acks) {
                    self.queue.schedule(t, Event::DelAck(f));
                }
            }
            Event::FlowStart(f) => self.with_sender(f, |s, out| s.start(out)),
            Event::FlowStop(f) => {
                let flow = &mut self.flows[f as usize];
                flow.sender.stop();
                flow.delivered_at_stop = Some(flow.receiver.delivered_bytes);
            }
            Event::Warmup => {
                self.catch_up_links();
                for flow in &mut self.flows {
                    if flow.start < now {
                        flow.delivered_at_from = flow.receiver.delivered_bytes;
                    }
                }
                self.queues_end_warmup();
            }
            Event::LoadStart => {
                self.catch_up_links();
                self.load.at_from = self.counters();
            }
            Event::LoadEnd => {
                self.catch_up_links();
                self.load.at_to = Some(self.counters());
            }
            Event::PingSend(p) => self.send_ping(p),
            Event::Sample => {
                self.catch_up_links();
                self.sample();
                self.queue.schedule(now + self.step, Event::Sample);
            }
        }
        self.forward_all();
    }

    /// Run `f` on flow `id`'s sender with an output context, then queue what it produced.
    fn with_sender(&mut self, id: u32, f: impl FnOnce(&mut TcpSender, &mut Out)) {
        let now = self.now();
        let flow = &mut self.flows[id as usize];
        let mut out = Out::new(now, &mut self.pkts, &mut self.work, &mut self.timers);
        f(&mut flow.sender, &mut out);
        for (t, which) in self.timers.drain(..) {
            self.queue.schedule(t, Event::SenderTimer(id, which));
        }
    }

    fn send_ping(&mut self, id: u32) {
        let now = self.now();
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
        self.queue
            .schedule(now + ping.interval, Event::PingSend(id));
        let r = self.pkts.insert(p);
        self.work.push_back(r);
    }

    /// Move every packet in the work queue to its next hop until the cascade settles.
    fn forward_all(&mut self) {
        while let Some(pkt) = self.work.pop_front() {
            let now = self.now();
            let p = &self.pkts[pkt];
            let hop = self.routes[p.route as usize][p.hop as usize];
            match hop {
                Hop::Link(l) => {
                    let wake = self.links[l as usize].accept(pkt, &mut self.pkts, now);
                    self.schedule_wake(l, wake);
                    self.handle_drops(Some(l));
                }
                Hop::Trace(t) => {
                    let wake = self.traces[t as usize].accept(pkt, &mut self.pkts, now);
                    self.schedule_trace_wake(t, wake);
                    self.handle_drops(None);
                }
                Hop::Wifi { bss, from, to } => {
                    let mut out = WifiOut {
                        pkts: &mut self.pkts,
                        delivered: &mut self.work,
                        completed: &mut self.completed,
                    };
                    if let Some(t) = self.bsses[bss as usize]
                        .bss
                        .accept(pkt, from, to, now, &mut out)
                    {
                        self.queue.schedule(t, Event::WifiWake(bss as u32));
                    }
                    self.wifi_completions();
                }
                Hop::Receiver(f) => {
                    let data = self.pkts.remove(pkt);
                    let flow = &mut self.flows[f as usize];
                    let delack = if flow.receiver.gro {
                        // GRO: the segments of this flow delivered with this one (one RX
                        // interrupt's batch, next in the work queue) that merge into its skb.
                        let mut batch = std::mem::take(&mut self.gro_batch);
                        let mut len = data.size;
                        batch.push(data);
                        while let Some(&next) = self.work.front() {
                            let p = &self.pkts[next];
                            let (first, last) = (&batch[0], &batch[batch.len() - 1]);
                            if self.routes[p.route as usize][p.hop as usize] != Hop::Receiver(f)
                                || !gro_merges(first, last, len, p)
                            {
                                break;
                            }
                            len += p.payload;
                            self.work.pop_front();
                            batch.push(self.pkts.remove(next));
                        }
                        let mut acks = Emit {
                            pkts: &mut self.pkts,
                            work: &mut self.work,
                        };
                        let t = flow.receiver.on_gro_skb(&batch, now, &mut acks);
                        batch.clear();
                        self.gro_batch = batch;
                        t
                    } else {
                        let mut acks = Emit {
                            pkts: &mut self.pkts,
                            work: &mut self.work,
                        };
                        flow.receiver.on_data(&data, now, &mut acks)
                    };
                    if let Some(t) = delack {
                        self.queue.schedule(t, Event::DelAck(f));
                    }
                }
                Hop::Sender(f) => {
                    let ack = self.pkts.remove(pkt);
                    self.with_sender(f, |s, out| s.on_ack(&ack, out));
                }
                Hop::PingEcho(p) => {
                    let reply = &mut self.pkts[pkt];
                    reply.set_kind(Kind::PingReply);
                    reply.route = self.pings[p as usize].return_route;
                    reply.hop = 0;
                    self.work.push_back(pkt);
                }
                Hop::PingOrigin(p) => {
                    let pkt = self.pkts.remove(pkt);
                    let ping = &mut self.pings[p as usize];
                    ping.received += 1;
                    let rtt = now - pkt.sent;
                    if pkt.sent >= self.warmup {
                        ping.rtt_all.record(rtt);
                    }
                    if pkt.sent >= self.load.from && pkt.sent <= self.load.to {
                        ping.rtt.record(rtt);
                    }
                    ping.series.push(pkt.sent, rtt);
                }
            }
        }
    }

    /// Release the TSQ charge of the packets a BSS reported complete (acknowledged by a Block
    /// Ack or finally dropped), then run the TSQ handler of each socket this unthrottled, once
    /// (in the order of their first completion), then count the drops (their TSQ charge is in
    /// `completed`).
    fn wifi_completions(&mut self) {
        let mut woken = std::mem::take(&mut self.woken);
        for &(flow, truesize) in &self.completed {
            if self.flows[flow as usize].sender.release_tx(truesize) {
                woken.push(flow);
            }
        }
        self.completed.clear();
        for &flow in &woken {
            self.with_sender(flow, |s, out| s.tsq_handler(out));
        }
        woken.clear();
        self.woken = woken;
        self.handle_drops(None);
    }

    /// Account packets a queue dropped; a drop at the sender's own NIC frees its TSQ charge.
    #[inline]
    fn handle_drops(&mut self, link: Option<u32>) {
        if !self.pkts.dropped().is_empty() {
            self.account_drops(link);
        }
    }

    /// Count each dropped packet against its flow, release the TSQ charge of a drop at the
    /// sender's own NIC, and free the packets.
    #[cold]
    fn account_drops(&mut self, link: Option<u32>) {
        let reports = link.is_some_and(|l| self.links[l as usize].reports_tx_completion);
        let mut dropped = std::mem::take(&mut self.dropped);
        self.pkts.remove_dropped(&mut dropped);
        for p in &dropped {
            if matches!(p.kind(), Kind::Data | Kind::Ack) {
                self.flows[p.flow as usize].drops += 1;
            }
            if let Some((flow, truesize)) = p.tsq_charge().filter(|_| reports) {
                self.with_sender(flow, |s, out| s.on_tx_complete(truesize, out));
            }
        }
        dropped.clear();
        self.dropped = dropped;
    }

    fn sample(&mut self) {
        let now = self.now();
        let step = self.step;
        for flow in &mut self.flows {
            let delivered = flow.receiver.delivered_bytes;
            let goodput_bps = (delivered - flow.last_delivered) as f64 * 8.0 * 1e9 / step as f64;
            flow.last_delivered = delivered;
            let active = now > flow.start && now <= flow.stop + step;
            if active {
                flow.series.record(now, goodput_bps, &flow.sender);
            }
        }
        self.sample_wifi(now);
        self.sample_queues(now);
    }

    /// Append each Wi-Fi node's A-MPDU sizes, airtime, collisions, retries and backlog over
    /// the step ending at `now` to its BSS's series.
    pub fn sample_wifi(&mut self, now: Nanos) {
        let step = self.step;
        for w in &mut self.bsses {
            let nodes = w.bss.stats().nodes;
            for (n, (cur, prev)) in nodes.iter().zip(&w.last).enumerate() {
                let d = cur.ampdu_size.since(&prev.ampdu_size);
                let q = |p: f64| d.quantile(p).unwrap_or(f64::NAN);
                let s = &mut w.series;
                s.t.push(crate::units::secs(now));
                s.node.push(n as u16);
                s.ampdu_mean.push(d.mean().unwrap_or(f64::NAN));
                s.ampdu_p10.push(q(0.1));
                s.ampdu_p50.push(q(0.5));
                s.ampdu_p90.push(q(0.9));
                s.airtime
                    .push((cur.airtime - prev.airtime) as f64 / step as f64);
                s.collisions.push(cur.collisions - prev.collisions);
                s.mpdu_retries.push(cur.mpdu_retries - prev.mpdu_retries);
                s.backlog.push(w.bss.backlog(n as u16) as u64);
            }
            w.last = nodes;
        }
    }

    /// The end of the warm-up for the queues: link utilisation, trace deliveries and Wi-Fi
    /// airtime count from now.
    pub fn queues_end_warmup(&mut self) {
        self.whole.at_from = self.counters();
        if self.load.from <= self.warmup {
            self.load.at_from = self.whole.at_from.clone();
        }
    }

    /// Append the backlog of every watched queue at `now` to its series.
    pub fn sample_queues(&mut self, now: Nanos) {
        for i in 0..self.watched.len() {
            let (packets, bytes, drops) = self.backlog(self.watched[i].0);
            self.watched[i].1.push(now, packets, bytes, drops);
        }
    }

    /// Per-node Wi-Fi summaries over [warm-up, `end`].
    pub fn wifi_summaries(&self, end: Nanos) -> Vec<WifiNodeSummary> {
        let ms = |v: Option<f64>| v.map(|x| x / 1e6);
        let share = |window: &Window| {
            let (a, b, from, to) = self.span(window, end);
            move |bss: usize, node: usize| {
                let before = a.airtime.get(bss).and_then(|n| n.get(node)).copied();
                (b.airtime[bss][node] - before.unwrap_or(0)) as f64
                    / to.saturating_sub(from).max(1) as f64
            }
        };
        let (load, all) = (share(&self.load), share(&self.whole));
        let mut out = Vec::new();
        for (b, w) in self.bsses.iter().enumerate() {
            for (n, st) in w.bss.stats().nodes.iter().enumerate() {
                let h = &st.ampdu_size;
                out.push(WifiNodeSummary {
                    bss: b as u32,
                    node: n as u16,
                    name: if n == 0 {
                        format!("{}-ap", w.name)
                    } else {
                        format!("{}-sta{n}", w.name)
                    },
                    ppdus: st.ppdus,
                    ampdu_mean: h.mean(),
                    ampdu_p10: h.quantile(0.1),
                    ampdu_p50: h.quantile(0.5),
                    ampdu_p90: h.quantile(0.9),
                    airtime: load(b, n),
                    airtime_all: all(b, n),
                    collisions: st.collisions,
                    mpdu_retries: st.mpdu_retries,
                    drops: st.drops(),
                    txq_sojourn_p50_ms: ms(st.txq_sojourn.quantile(0.5)),
                    txq_sojourn_p95_ms: ms(st.txq_sojourn.quantile(0.95)),
                    driver: w.bss.driver_of(n).kind.name(),
                    mcs_p50: st.mcs.quantile(0.5),
                    mcs_min: st.mcs.quantile(0.0),
                    mcs_max: st.mcs.quantile(1.0),
                    tx_completion_p50_ms: ms(st.tx_completion.quantile(0.5)),
                    tx_completion_p90_ms: ms(st.tx_completion.quantile(0.9)),
                    tx_interrupts: st.tx_interrupts,
                });
            }
        }
        out
    }

    /// Summaries over [warm-up, `end`] and series of the watched queues, in watch order (a
    /// series' id is its position).
    pub fn queue_results(&self, end: Nanos) -> (Vec<QueueSummary>, Vec<SeriesOf<QueueSeries>>) {
        let summaries = self
            .watched
            .iter()
            .map(|(q, _)| self.queue_summary(*q, end))
            .collect();
        let series = self
            .watched
            .iter()
            .enumerate()
            .map(|(i, (q, series))| SeriesOf {
                id: i as u32,
                name: self.queue_name(*q).to_string(),
                series: series.clone(),
            })
            .collect();
        (summaries, series)
    }

    pub fn events_processed(&self) -> u64 {
        self.queue.processed()
    }

    /// Packets in the network now: queued, on a wire or in the air, or held by a BSS for
    /// reordering or retransmission.
    pub fn packets_in_network(&self) -> usize {
        self.pkts.live()
    }
}
