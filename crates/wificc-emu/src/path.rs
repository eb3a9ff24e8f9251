//! The emulated network: the links of a scenario's path, built by the simulator's own builder,
//! wired into routes between hosts and advanced by explicit times.
//!
//! Hosts are numbered 0 (the server) and 1..=N (the clients), as the namespaces are. The links
//! live in a wificc-core [`World`] built by [`build_network`], exactly as for a simulation
//! (wired: each client's NIC, the bottleneck and its reverse with the scenario's qdisc, buffer,
//! loss and half the base RTT each; trace: Mahimahi-style trace links with their queues, delays
//! and losses; Wi-Fi: the BSS of the AP and its stations, the wired backhaul between the AP and
//! the server and the server's NIC), and the world keeps their queue series, Wi-Fi series and
//! summaries. Only the world's links are used: the TCP endpoints and pings are the real ones in
//! the namespaces. A route is the simulator's hop list from one host to another followed by the
//! destination host: client c to the server through `up[c]`, the server to client c through
//! `down[c]`. On the Wi-Fi path client c is station c + 1: a download crosses the server's NIC,
//! the backhaul and the AP's radio (its TXQ, hardware queue, EDCA contention and A-MPDU
//! aggregation), an upload the station's radio and the backhaul.
//!
//! A wired link keeps at most two pending events, the end of the current transmission and the
//! arrival of the head of its delay line ([`Link`]); a trace link the next delivery
//! opportunity it needs and the head arrival of its delay line ([`TraceLink`]). A BSS asks
//! for wake-ups ([`Bss::accept`], [`Bss::wake`]: a backoff reaching zero, the end of a PPDU,
//! when the receiver takes the intact MPDUs, the end of a Block Ack) and ignores those that
//! turned stale, as in the simulator, so the path keeps every instant it asked for in a small
//! heap. The path keeps the pending events in arrays and [`EmuPath::advance`] handles every
//! event due by a given time, earliest first, each at its own scheduled time. A packet that
//! leaves its last link is handed to the [`Sink`] with the time it is due at its host; a packet
//! a queue or a loss process drops is handed back too, so the owner can free its bytes. Nothing
//! here reads a clock: the real-time loop ([`crate::emulator`]) decides when to call, which is
//! what makes this part testable against hand-computed times.
//!
//! [`Link`]: wificc_core::net::link::Link
//! [`TraceLink`]: wificc_core::net::trace::TraceLink
//! [`Bss::accept`]: wificc_core::net::wifi::Bss::accept
//! [`Bss::wake`]: wificc_core::net::wifi::Bss::wake

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use wificc_core::metrics::results::{
    QueueSeries, QueueSummary, SeriesOf, WifiNodeSummary, WifiSeries,
};
use wificc_core::net::packet::{Packet, PacketRef, Packets};
use wificc_core::net::wifi::WifiOut;
use wificc_core::scenario::{build_network, Scenario, ScenarioError};
use wificc_core::units::Nanos;
use wificc_core::world::{Hop, World};

/// The server's host number; client c is host c + 1.
pub const SERVER: usize = 0;

/// What a Wi-Fi path adds to the notes of a run.
pub const WIFI_UPLOAD_NOTE: &str = "path.kind = wifi: uploads cross the station's radio, but \
     the sender's TSQ is not reproduced through TUN, so upload aggregation depends only on what \
     the kernel hands over at once (downloads aggregate at the AP as in the simulator)";

/// Where the packets that leave the path go.
pub trait Sink {
    /// `pkt` is due at `host` at time `at`.
    fn deliver(&mut self, host: usize, pkt: Packet, at: Nanos);
    /// A queue or a loss process dropped `pkt`.
    fn dropped(&mut self, pkt: Packet);
}

/// A pending event of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    /// Wired link: the end of the current transmission.
    TxDone(usize),
    /// Wired link: the head of the delay line arrives.
    LinkArrival(usize),
    /// Trace link: the next delivery opportunity it needs.
    Opportunity(usize),
    /// Trace link: the head of the delay line arrives.
    TraceArrival(usize),
    /// BSS: a wake-up it asked for.
    WifiWake(usize),
}

/// A route: links, then the destination host.
struct Route {
    hops: Vec<Hop>,
    to: usize,
}

pub struct EmuPath {
    world: World,
    tx_at: Vec<Option<Nanos>>,
    link_arrival_at: Vec<Option<Nanos>>,
    opportunity_at: Vec<Option<Nanos>>,
    trace_arrival_at: Vec<Option<Nanos>>,
    /// Every wake-up each BSS asked for and has not had yet.
    wifi_wakes: Vec<BinaryHeap<Reverse<Nanos>>>,
    routes: Vec<Route>,
    /// Route index by (from host, to host).
    route_of: Vec<Vec<Option<u32>>>,
    /// Whether a wired or trace link is the last hop of a route: its events hand packets to a
    /// host, at their own time, so the real-time loop must not be late for them.
    link_delivers: Vec<bool>,
    trace_delivers: Vec<bool>,
    wifi_delivers: Vec<bool>,
    /// The packets on the path (see `wificc_core::net::packet::Packets`).
    pkts: Packets,
    arrived: VecDeque<PacketRef>,
    /// TX completions a BSS reports for the senders' TCP Small Queues: there is no simulated
    /// sender to tell (the kernels' TSQ is released by the TUN driver), so they are discarded.
    completed: Vec<(u32, u32)>,
}

impl EmuPath {
    /// The path of a validated scenario.
    pub fn from_scenario(s: &Scenario) -> Result<EmuPath, ScenarioError> {
        let mut world = World::new(s.step.0, s.warmup.0);
        let net = build_network(s, &mut world)?;
        let hosts = net.up.len() + 1;
        let mut routes = Vec::new();
        let mut route_of = vec![vec![None; hosts]; hosts];
        for (c, (up, down)) in net.up.into_iter().zip(net.down).enumerate() {
            let client = c + 1;
            route_of[client][SERVER] = Some(routes.len() as u32);
            routes.push(Route {
                hops: up,
                to: SERVER,
            });
            route_of[SERVER][client] = Some(routes.len() as u32);
            routes.push(Route {
                hops: down,
                to: client,
            });
        }
        let mut link_delivers = vec![false; world.links.len()];
        let mut trace_delivers = vec![false; world.traces.len()];
        let mut wifi_delivers = vec![false; world.bsses.len()];
        for route in &routes {
            match route.hops.last() {
                Some(&Hop::Link(l)) => link_delivers[l as usize] = true,
                Some(&Hop::Trace(x)) => trace_delivers[x as usize] = true,
                Some(&Hop::Wifi { bss, .. }) => wifi_delivers[bss as usize] = true,
                _ => {}
            }
        }
        Ok(EmuPath {
            tx_at: vec![None; world.links.len()],
            link_arrival_at: vec![None; world.links.len()],
            opportunity_at: vec![None; world.traces.len()],
            trace_arrival_at: vec![None; world.traces.len()],
            wifi_wakes: vec![BinaryHeap::new(); world.bsses.len()],
            world,
            routes,
            route_of,
            link_delivers,
            trace_delivers,
            wifi_delivers,
            pkts: Packets::new(),
            arrived: VecDeque::new(),
            completed: Vec::new(),
        })
    }

    /// Number of hosts (server and clients).
    pub fn hosts(&self) -> usize {
        self.route_of.len()
    }

    /// The route from host `from` to host `to`, if they are connected.
    pub fn route(&self, from: usize, to: usize) -> Option<u32> {
        *self.route_of.get(from)?.get(to)?
    }

    /// The earliest pending event.
    pub fn next_event(&self) -> Option<Nanos> {
        self.earliest().map(|(t, _)| t)
    }

    /// The earliest pending event that may hand a packet to a host at its own time: the
    /// arrival at the end of a last hop, or, on a last hop without delay, the end of a
    /// transmission or a delivery opportunity, or any wake-up of a BSS that is a last hop (the
    /// end of a PPDU delivers; the path does not tell it from the other wake-ups). Other events
    /// only move packets between links; handling them late changes nothing, since each is
    /// handled at its scheduled time before anything later.
    pub fn next_delivery(&self) -> Option<Nanos> {
        let links = self.world.links.iter().enumerate().flat_map(|(l, link)| {
            let tx = (self.link_delivers[l] && link.delay == 0).then_some(self.tx_at[l]);
            [
                self.link_arrival_at[l].filter(|_| self.link_delivers[l]),
                tx.flatten(),
            ]
        });
        let traces = self.world.traces.iter().enumerate().flat_map(|(x, trace)| {
            let opportunity =
                (self.trace_delivers[x] && trace.delay == 0).then_some(self.opportunity_at[x]);
            [
                self.trace_arrival_at[x].filter(|_| self.trace_delivers[x]),
                opportunity.flatten(),
            ]
        });
        let wifi = self
            .wifi_wakes
            .iter()
            .zip(&self.wifi_delivers)
            .filter(|&(_, &delivers)| delivers)
            .map(|(wakes, _)| wakes.peek().map(|w| w.0));
        links.chain(traces).chain(wifi).flatten().min()
    }

    fn earliest(&self) -> Option<(Nanos, Due)> {
        fn pending(
            at: &[Option<Nanos>],
            due: fn(usize) -> Due,
        ) -> impl Iterator<Item = (Nanos, Due)> + '_ {
            at.iter()
                .enumerate()
                .filter_map(move |(i, t)| t.map(|t| (t, due(i))))
        }
        pending(&self.tx_at, Due::TxDone)
            .chain(pending(&self.link_arrival_at, Due::LinkArrival))
            .chain(pending(&self.opportunity_at, Due::Opportunity))
            .chain(pending(&self.trace_arrival_at, Due::TraceArrival))
            .chain(
                self.wifi_wakes
                    .iter()
                    .enumerate()
                    .filter_map(|(b, wakes)| wakes.peek().map(|w| (w.0, Due::WifiWake(b)))),
            )
            .min_by_key(|&(t, _)| t)
    }

    /// A packet read from a host at `now` enters its route (`pkt.route`, `pkt.hop` 0).
    /// Every event due before `now` must have been handled ([`EmuPath::advance`]).
    pub fn inject(&mut self, pkt: Packet, now: Nanos, sink: &mut impl Sink) {
        let pkt = self.pkts.insert(pkt);
        self.forward(pkt, now, sink);
        self.flush_drops(sink);
    }

    /// Handle every event due at or before `now`, earliest first, each at its own time.
    pub fn advance(&mut self, now: Nanos, sink: &mut impl Sink) {
        while let Some((t, due)) = self.earliest() {
            if t > now {
                break;
            }
            match due {
                Due::TxDone(l) => {
                    self.tx_at[l] = None;
                    let done = self.world.links[l].tx_done(t, &mut self.pkts);
                    self.arm_link(l, done.wake.tx_done, done.wake.arrival);
                    if let Some(pkt) = done.arrived {
                        self.next_hop(pkt, t, sink);
                    }
                }
                Due::LinkArrival(l) => {
                    let mut arrived = std::mem::take(&mut self.arrived);
                    self.link_arrival_at[l] =
                        self.world.links[l].arrive(t, &mut arrived, &mut self.pkts);
                    self.forward_arrived(&mut arrived, t, sink);
                }
                Due::Opportunity(x) => {
                    self.opportunity_at[x] = None;
                    let wake = self.world.traces[x].opportunity(t, &mut self.pkts);
                    self.arm_trace(x, wake.opportunity, wake.arrival);
                }
                Due::TraceArrival(x) => {
                    let mut arrived = std::mem::take(&mut self.arrived);
                    self.trace_arrival_at[x] = self.world.traces[x].arrive(t, &mut arrived);
                    self.forward_arrived(&mut arrived, t, sink);
                }
                Due::WifiWake(b) => {
                    let wakes = &mut self.wifi_wakes[b];
                    while wakes.peek() == Some(&Reverse(t)) {
                        wakes.pop();
                    }
                    let mut arrived = std::mem::take(&mut self.arrived);
                    let mut out = WifiOut {
                        pkts: &mut self.pkts,
                        delivered: &mut arrived,
                        completed: &mut self.completed,
                    };
                    if let Some(next) = self.world.bsses[b].bss.wake(t, &mut out) {
                        self.wifi_wakes[b].push(Reverse(next));
                    }
                    self.completed.clear();
                    self.forward_arrived(&mut arrived, t, sink);
                }
            }
            self.flush_drops(sink);
        }
    }

    /// Move every packet that arrived at the end of a link on to its next hop.
    fn forward_arrived(
        &mut self,
        arrived: &mut VecDeque<PacketRef>,
        t: Nanos,
        sink: &mut impl Sink,
    ) {
        while let Some(pkt) = arrived.pop_front() {
            self.next_hop(pkt, t, sink);
        }
        self.arrived = std::mem::take(arrived);
    }

    /// The component that held `pkt` has already advanced it to its next hop.
    fn next_hop(&mut self, pkt: PacketRef, now: Nanos, sink: &mut impl Sink) {
        self.forward(pkt, now, sink);
    }

    /// Take `pkt` through its current hop at `now`.
    fn forward(&mut self, pkt: PacketRef, now: Nanos, sink: &mut impl Sink) {
        let p = &self.pkts[pkt];
        let route = &self.routes[p.route as usize];
        match route.hops.get(p.hop as usize) {
            Some(&Hop::Link(l)) => {
                let l = l as usize;
                let wake = self.world.links[l].accept(pkt, &mut self.pkts, now);
                self.arm_link(l, wake.tx_done, wake.arrival);
            }
            Some(&Hop::Trace(x)) => {
                let x = x as usize;
                let wake = self.world.traces[x].accept(pkt, &mut self.pkts, now);
                self.arm_trace(x, wake.opportunity, wake.arrival);
            }
            Some(&Hop::Wifi { bss, from, to }) => {
                let b = bss as usize;
                // A packet entering a TXQ is not delivered anywhere yet: `received` stays empty.
                let mut received = VecDeque::new();
                let mut out = WifiOut {
                    pkts: &mut self.pkts,
                    delivered: &mut received,
                    completed: &mut self.completed,
                };
                if let Some(t) = self.world.bsses[b].bss.accept(pkt, from, to, now, &mut out) {
                    self.wifi_wakes[b].push(Reverse(t));
                }
                self.completed.clear();
            }
            Some(_) | None => {
                let to = route.to;
                sink.deliver(to, self.pkts.remove(pkt), now)
            }
        }
    }

    /// Record the events a link asked for (it asks only for events it has not pending).
    fn arm_link(&mut self, l: usize, tx_done: Option<Nanos>, arrival: Option<Nanos>) {
        if tx_done.is_some() {
            self.tx_at[l] = tx_done;
        }
        if arrival.is_some() {
            self.link_arrival_at[l] = arrival;
        }
    }

    fn arm_trace(&mut self, x: usize, opportunity: Option<Nanos>, arrival: Option<Nanos>) {
        if opportunity.is_some() {
            self.opportunity_at[x] = opportunity;
        }
        if arrival.is_some() {
            self.trace_arrival_at[x] = arrival;
        }
    }

    /// Let every lazy link carry out the starts due by `t` (see `wificc_core::net::link`), so
    /// that its backlog and counters are those of that instant. Its drops are passed on with
    /// the next event's.
    fn catch_up_links(&mut self, t: Nanos) {
        for l in 0..self.world.links.len() {
            let arrival = self.world.links[l].catch_up(t, &mut self.pkts);
            self.arm_link(l, None, arrival);
        }
    }

    fn flush_drops(&mut self, sink: &mut impl Sink) {
        if self.pkts.dropped().is_empty() {
            return;
        }
        let mut dropped = Vec::new();
        self.pkts.remove_dropped(&mut dropped);
        for pkt in dropped {
            sink.dropped(pkt);
        }
    }

    /// The end of the warm-up at model time `t`: utilisation counts from here.
    pub fn end_warmup(&mut self, t: Nanos) {
        self.catch_up_links(t);
        self.world.queues_end_warmup();
    }

    /// Append the backlog of every reported queue, and the Wi-Fi nodes' figures over the step,
    /// at model time `t` to their series.
    pub fn sample(&mut self, t: Nanos) {
        self.catch_up_links(t);
        self.world.sample_queues(t);
        self.world.sample_wifi(t);
    }

    /// Summaries over [warm-up, `end`] and series of the reported queues, as the simulator
    /// reports them.
    pub fn queue_results(&self, end: Nanos) -> (Vec<QueueSummary>, Vec<SeriesOf<QueueSeries>>) {
        self.world.queue_results(end)
    }

    /// Per-node Wi-Fi summaries over [warm-up, `end`] (PPDUs, A-MPDU sizes, airtime,
    /// collisions, retries, drops) and series, as the simulator reports them; empty without
    /// a BSS.
    pub fn wifi_results(&self, end: Nanos) -> (Vec<WifiNodeSummary>, Vec<SeriesOf<WifiSeries>>) {
        let series = self
            .world
            .bsses
            .iter()
            .enumerate()
            .map(|(b, w)| SeriesOf {
                id: b as u32,
                name: w.name.clone(),
                series: w.series.clone(),
            })
            .collect();
        (self.world.wifi_summaries(end), series)
    }

    /// What the path cannot reproduce with real senders, as sentences (empty for wired and
    /// trace paths).
    pub fn notes(&self) -> Vec<String> {
        if self.world.bsses.is_empty() {
            return Vec::new();
        }
        vec![WIFI_UPLOAD_NOTE.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wificc_core::net::packet::Kind;
    use wificc_core::scenario::Format;
    use wificc_core::sim::Rng;

    #[derive(Default)]
    struct Collect {
        delivered: Vec<(usize, u64, Nanos)>,
        dropped: Vec<u64>,
    }

    impl Sink for Collect {
        fn deliver(&mut self, host: usize, pkt: Packet, at: Nanos) {
            self.delivered.push((host, pkt.seq, at));
        }
        fn dropped(&mut self, pkt: Packet) {
            self.dropped.push(pkt.seq);
        }
    }

    fn scenario(path: &str) -> Scenario {
        Scenario::parse(&format!(r#"{{"path": {path}}}"#), Format::Json).unwrap()
    }

    /// 10 Mbit/s, 20 ms RTT, a 1-packet pfifo bottleneck buffer, one client; default 10 Gbit/s
    /// NICs and 38 bytes of Ethernet framing.
    fn wired() -> EmuPath {
        let s = scenario(r#"{"kind": "wired", "rate": "10mbit", "rtt": "20ms", "buffer": "1p"}"#);
        EmuPath::from_scenario(&s).unwrap()
    }

    fn pkt(p: &EmuPath, from: usize, to: usize, size: u32, slot: u64) -> Packet {
        let mut pkt = Packet::new(Kind::Data, 1, p.route(from, to).unwrap(), size, 0);
        pkt.seq = slot;
        pkt
    }

    #[test]
    fn routes_join_each_client_and_the_server() {
        let s = scenario(r#"{"kind": "wired", "rate": "10mbit", "rtt": "20ms", "clients": 2}"#);
        let p = EmuPath::from_scenario(&s).unwrap();
        assert_eq!(p.hosts(), 3);
        for c in [1, 2] {
            assert!(p.route(c, SERVER).is_some() && p.route(SERVER, c).is_some());
        }
        assert_eq!(p.route(1, 2), None, "clients reach only the server");
        assert_eq!(p.route(0, 5), None);
        let (queues, series) = p.queue_results(1);
        let names: Vec<&str> = queues.iter().map(|q| q.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bottleneck",
                "bottleneck-rev",
                "client0-nic",
                "client1-nic",
                "server-nic"
            ]
        );
        assert_eq!(series.len(), 5);
    }

    #[test]
    fn packets_arrive_at_the_times_the_links_compute() {
        // A 1500-byte packet is 1538 bytes on the wire. Client NIC at 10 Gbit/s:
        // ceil(1538 x 8 / 10e9 s) = ceil(1230.4 ns) = 1231 ns, no delay. Bottleneck at
        // 10 Mbit/s: 1538 x 8 / 10e6 s = 1 230 400 ns, then 10 ms (half the RTT).
        // Three packets read at t = 0 from the client:
        //  #0 leaves the NIC at 1231, bottleneck 1231 .. 1 231 631, due 11 231 631;
        //  #1 leaves the NIC at 2462 and waits (the buffer holds 1), sent 1 231 631 ..
        //     2 462 031, due 12 462 031;
        //  #2 leaves the NIC at 3693 and finds the 1-packet buffer full: dropped.
        let mut p = wired();
        let mut out = Collect::default();
        for slot in 0..3 {
            let pk = pkt(&p, 1, SERVER, 1500, slot);
            p.inject(pk, 0, &mut out);
        }
        // The client NIC's transmission ends first; the first event that can reach a host is
        // the bottleneck's arrival, known once the packet is on the bottleneck.
        assert_eq!(p.next_event(), Some(1231));
        assert_eq!(p.next_delivery(), None);
        p.advance(1231, &mut out);
        assert_eq!(p.next_delivery(), Some(11_231_631));
        p.advance(3692, &mut out);
        assert!(out.dropped.is_empty());
        p.advance(3693, &mut out);
        assert_eq!(out.dropped, [2]);
        p.advance(11_231_630, &mut out);
        assert!(out.delivered.is_empty());
        p.advance(20_000_000, &mut out);
        assert_eq!(
            out.delivered,
            [(SERVER, 0, 11_231_631), (SERVER, 1, 12_462_031)]
        );
        assert_eq!(p.next_event(), None);
        // The reverse direction crosses the server NIC and the reverse bottleneck:
        // read at 20 ms, due 20 000 000 + 1231 + 1 230 400 + 10 000 000 = 31 231 631.
        let back = pkt(&p, SERVER, 1, 1500, 9);
        p.inject(back, 20_000_000, &mut out);
        p.advance(40_000_000, &mut out);
        assert_eq!(out.delivered[2], (1, 9, 31_231_631));
        assert_eq!(
            p.pkts.live(),
            0,
            "every packet delivered or dropped has left the path"
        );
    }

    #[test]
    fn queue_reports_follow_the_links() {
        let mut p = wired();
        let mut out = Collect::default();
        for slot in 0..3 {
            let pk = pkt(&p, 1, SERVER, 1500, slot);
            p.inject(pk, 0, &mut out);
        }
        // At 1 ms packet #0 is being sent and #1 waits in the buffer (1 packet, 1500 bytes);
        // #2 was dropped.
        p.advance(1_000_000, &mut out);
        p.sample(1_000_000);
        p.advance(20_000_000, &mut out);
        let (queues, series) = p.queue_results(20_000_000);
        let s = &series[0].series;
        assert_eq!(
            (s.t[0], s.packets[0], s.bytes[0], s.drops[0]),
            (0.001, 1, 1500, 1)
        );
        let q = &queues[0];
        assert_eq!(q.name, "bottleneck");
        assert_eq!((q.enqueued, q.dropped, q.tx_packets), (3, 1, 2));
        // Busy 2 x 1 230 400 ns of 20 ms.
        assert!((q.utilization - 2.0 * 1_230_400.0 / 20e6).abs() < 1e-12);
    }

    #[test]
    fn trace_links_deliver_at_their_opportunities() {
        // A 12 Mbit/s schedule gives one 1500-byte opportunity every 1500 x 8 / 12e6 s = 1 ms
        // (at 1, 2, 3 ms ...); mm-delay adds half the 10 ms RTT. Two 1500-byte packets reach
        // the uplink at 1231 ns (after the client NIC, as above; the second at 2462 ns): the
        // first leaves at the 1 ms opportunity, the second at 2 ms; due 6 ms and 7 ms.
        let s = scenario(
            r#"{"kind": "trace", "rtt": "10ms",
                "uplink": {"schedule": [{"at": "0s", "rate": "12mbit"}]},
                "downlink": {"schedule": [{"at": "0s", "rate": "12mbit"}]}}"#,
        );
        let mut p = EmuPath::from_scenario(&s).unwrap();
        let mut out = Collect::default();
        for slot in 0..2 {
            let pk = pkt(&p, 1, SERVER, 1500, slot);
            p.inject(pk, 0, &mut out);
        }
        p.advance(10_000_000, &mut out);
        assert_eq!(
            out.delivered,
            [(SERVER, 0, 6_000_000), (SERVER, 1, 7_000_000)]
        );
        let (queues, _) = p.queue_results(10_000_000);
        assert_eq!(queues[0].name, "uplink");
        assert_eq!(queues[0].tx_packets, 2);
    }

    /// One ath9k station, 2 ms base RTT over the default 10 Gbit/s backhaul and server NIC;
    /// the generic driver (no interrupt moderation), whose timing these tests pin.
    fn wifi(seed: u64) -> EmuPath {
        let s = Scenario::parse(
            &format!(
                r#"{{"seed": {seed}, "path": {{"kind": "wifi", "rtt": "2ms",
                     "radio": {{"chipset": "ath9k", "driver": "generic"}}}}}}"#
            ),
            Format::Json,
        )
        .unwrap();
        EmuPath::from_scenario(&s).unwrap()
    }

    /// The backoff the AP draws after its first exchange: the BSS's stream (stream 500 of the
    /// seed, as the simulator's builder seeds it) first gives two 32-bit words to the TXQs'
    /// hash seed, then the post-backoff, uniform in [0, CWmin(BE) = 15].
    fn first_backoff(seed: u64) -> u64 {
        let mut r = Rng::new(seed, 500);
        r.next_u32();
        r.next_u32();
        r.range_u64(0, 15)
    }

    #[test]
    fn a_download_crosses_the_aps_radio_at_the_times_the_bss_computes() {
        // ath9k: HT40, 2 streams, MCS7, short GI: 2 x 108 x 6 x 5/6 = 1080 data bits per
        // 3.6 us symbol; preamble 20 + 8 + 4 + 2 x 4 = 40 us. One 1500-byte datagram is a
        // 4 + 26 + 8 + 1500 + 4 = 1542-byte PSDU: 16 + 8 x 1542 + 6 = 12358 bits, 12 symbols,
        // 43.2 us, rounded up to whole 4 us symbols (short GI): 44 us; PPDU 84 us. Block Ack
        // (24 + 8 bytes at 24 Mbit/s): 20 + 3 x 4 = 32 us after SIFS 16 us. AIFS[BE] = 16 +
        // 3 x 9 = 43 us.
        //
        // Two datagrams read from the server at t = 0 leave its NIC at 1231 and 2462 ns, the
        // backhaul at 2462 and 3693 ns, and reach the AP 1 ms later: 1 002 462, 1 003 693.
        // #0 finds the medium idle for longer than AIFS and no backoff pending: its PPDU
        // starts at once and the station has it at 1 002 462 + 84 000 = 1 086 462; the
        // exchange ends at 1 086 462 + 16 000 + 32 000 = 1 134 462. #1 waits in the hardware
        // queue; after the Block Ack the AP draws a backoff of b slots, so #1's PPDU starts
        // AIFS + b x 9 us after 1 134 462 and arrives 84 us later.
        for seed in [1, 2, 3] {
            let mut p = wifi(seed);
            let mut out = Collect::default();
            for slot in 0..2 {
                let pk = pkt(&p, SERVER, 1, 1500, slot);
                p.inject(pk, 0, &mut out);
            }
            assert_eq!(p.next_event(), Some(1231));
            assert_eq!(p.next_delivery(), None, "nothing has reached the AP");
            p.advance(1_002_462, &mut out);
            // The AP runs at once; the first thing that may deliver is its next wake-up.
            assert_eq!(p.next_delivery(), Some(1_002_462 + 84_000));
            p.advance(10_000_000, &mut out);
            let b = first_backoff(seed);
            let second = 1_134_462 + 43_000 + b * 9_000 + 84_000;
            assert_eq!(
                out.delivered,
                [(1, 0, 1_086_462), (1, 1, second)],
                "seed {seed}, backoff {b}"
            );
            assert_eq!(p.next_event(), None);
            let (nodes, series) = p.wifi_results(10_000_000);
            let ap = &nodes[0];
            assert_eq!(
                (ap.name.as_str(), ap.ppdus, ap.ampdu_mean),
                ("wifi-ap", 2, Some(1.0))
            );
            assert_eq!((nodes[1].name.as_str(), nodes[1].ppdus), ("wifi-sta1", 0));
            assert_eq!(series.len(), 1);
        }
        // Seeds 1 to 3 draw different backoffs, so the test sees the stream.
        let draws: Vec<u64> = [1, 2, 3].into_iter().map(first_backoff).collect();
        assert!(draws[0] != draws[1] || draws[1] != draws[2], "{draws:?}");
    }

    #[test]
    fn an_upload_crosses_the_stations_radio_then_the_backhaul() {
        // A 1500-byte datagram read from the station at t = 0: the medium has been idle for
        // AIFS at 43 us, the PPDU ends at 127 us, the backhaul takes 1231 ns and 1 ms of
        // propagation: due at the server at 1 128 231 ns.
        let mut p = wifi(1);
        let mut out = Collect::default();
        let pk = pkt(&p, 1, SERVER, 1500, 4);
        p.inject(pk, 0, &mut out);
        p.advance(2_000_000, &mut out);
        assert_eq!(out.delivered, [(SERVER, 4, 1_128_231)]);
        // Sampled at 1 ms: one PPDU of one MPDU from the station in that step.
        let mut p = wifi(1);
        let pk = pkt(&p, 1, SERVER, 1500, 4);
        p.inject(pk, 0, &mut out);
        p.advance(1_000_000, &mut out);
        p.sample(1_000_000);
        let (nodes, series) = p.wifi_results(1_000_000);
        assert_eq!((nodes[1].ppdus, nodes[1].ampdu_mean), (1, Some(1.0)));
        let s = &series[0].series;
        assert_eq!((s.node.clone(), s.ampdu_mean[1]), (vec![0, 1], 1.0));
        assert!(s.ampdu_mean[0].is_nan(), "the AP sent nothing");
        assert_eq!(p.notes(), [WIFI_UPLOAD_NOTE]);
        assert!(wired().notes().is_empty());
    }
}
