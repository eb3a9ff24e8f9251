//! The emulated network: the links of a scenario's path, built by the simulator's own builder,
//! wired into routes between hosts and advanced by explicit times.
//!
//! Hosts are numbered 0 (the server) and 1..=N (the clients), as the namespaces are. The links
//! live in a wificc-core [`Network`] built by [`build_network`], exactly as for a simulation
//! (wired: each client's NIC, the bottleneck and its reverse with the scenario's qdisc, buffer,
//! loss and half the base RTT each; trace: Mahimahi-style trace links with their queues, delays
//! and losses; Wi-Fi: the BSS of the AP and its stations, the wired backhaul between the AP and
//! the server and the server's NIC), and the network keeps their queue series, Wi-Fi series and
//! summaries. The network's dispatch is the simulator's: only the ends of the routes differ.
//! The TCP endpoints and pings are the real ones in the namespaces, so a route is the
//! simulator's hop list from one host to another followed by [`Hop::Host`] of the destination,
//! whose TUN device the packet leaves by (the [`Sink`]): client c to the server through
//! `up[c]`, the server to client c through `down[c]`. On the Wi-Fi path client c is station
//! c + 1: a download crosses the server's NIC, the backhaul and the AP's radio (its TXQ,
//! hardware queue, EDCA contention and A-MPDU aggregation), an upload the station's radio and
//! the backhaul.
//!
//! The network asks for its events through a [`Scheduler`]; the path keeps them in arrays (a
//! wired link keeps at most two pending, the end of the current transmission and the arrival of
//! the head of its delay line; a trace link its next delivery opportunity and head arrival) and
//! a small heap per BSS (its wake-ups, which may repeat or turn stale, as in the simulator).
//! [`EmuPath::advance`] handles every event due by a given time, earliest first, each at its
//! own scheduled time. A packet that reaches its host is handed to the [`Sink`] with the time
//! it is due there; a packet a queue or a loss process drops is handed back too, so the owner
//! can free its bytes. Nothing here reads a clock: the real-time loop ([`crate::emulator`])
//! decides when to call, which is what makes this part testable against hand-computed times.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use wificc_core::metrics::results::{
    QueueSeries, QueueSummary, SeriesOf, WifiNodeSummary, WifiSeries,
};
use wificc_core::net::network::{Hop, Hosts, NetEvent, Network, Scheduler};
use wificc_core::net::packet::{Packet, PacketRef};
use wificc_core::scenario::{build_network, Scenario, ScenarioError};
use wificc_core::units::Nanos;

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
    /// A queue or a loss process dropped `pkt` at model time `at`.
    fn dropped(&mut self, pkt: Packet, at: Nanos);
}

/// The network's pending events: at most one per kind and link or trace link, every wake-up
/// each BSS asked for and has not had yet.
struct Pending {
    tx_at: Vec<Option<Nanos>>,
    link_arrival_at: Vec<Option<Nanos>>,
    opportunity_at: Vec<Option<Nanos>>,
    trace_arrival_at: Vec<Option<Nanos>>,
    wifi_wakes: Vec<BinaryHeap<Reverse<Nanos>>>,
}

impl Scheduler for Pending {
    fn schedule(&mut self, at: Nanos, ev: NetEvent) {
        match ev {
            NetEvent::LinkTxDone(l) => self.tx_at[l as usize] = Some(at),
            NetEvent::LinkArrival(l) => self.link_arrival_at[l as usize] = Some(at),
            NetEvent::TraceOpportunity(x) => self.opportunity_at[x as usize] = Some(at),
            NetEvent::TraceArrival(x) => self.trace_arrival_at[x as usize] = Some(at),
            NetEvent::WifiWake(b) => self.wifi_wakes[b as usize].push(Reverse(at)),
        }
    }
}

impl Pending {
    /// The earliest pending event, taken out of the pending set (with every repeat of a BSS's
    /// wake-up at the same instant).
    fn earliest(&self) -> Option<(Nanos, NetEvent)> {
        fn pending(
            at: &[Option<Nanos>],
            ev: fn(u32) -> NetEvent,
        ) -> impl Iterator<Item = (Nanos, NetEvent)> + '_ {
            at.iter()
                .enumerate()
                .filter_map(move |(i, t)| t.map(|t| (t, ev(i as u32))))
        }
        pending(&self.tx_at, NetEvent::LinkTxDone)
            .chain(pending(&self.link_arrival_at, NetEvent::LinkArrival))
            .chain(pending(&self.opportunity_at, NetEvent::TraceOpportunity))
            .chain(pending(&self.trace_arrival_at, NetEvent::TraceArrival))
            .chain(
                self.wifi_wakes.iter().enumerate().filter_map(|(b, wakes)| {
                    wakes.peek().map(|w| (w.0, NetEvent::WifiWake(b as u32)))
                }),
            )
            .min_by_key(|&(t, _)| t)
    }

    fn take(&mut self, t: Nanos, ev: NetEvent) {
        match ev {
            NetEvent::LinkTxDone(l) => self.tx_at[l as usize] = None,
            NetEvent::LinkArrival(l) => self.link_arrival_at[l as usize] = None,
            NetEvent::TraceOpportunity(x) => self.opportunity_at[x as usize] = None,
            NetEvent::TraceArrival(x) => self.trace_arrival_at[x as usize] = None,
            NetEvent::WifiWake(b) => {
                let wakes = &mut self.wifi_wakes[b as usize];
                while wakes.peek() == Some(&Reverse(t)) {
                    wakes.pop();
                }
            }
        }
    }
}

/// The hosts at the ends of the emulated routes: their TUN devices, through the owner's
/// [`Sink`].
struct Tun<'a, K: Sink>(&'a mut K);

impl<K: Sink> Hosts<Pending> for Tun<'_, K> {
    fn arrive(&mut self, net: &mut Network, _: &mut Pending, pkt: PacketRef, hop: Hop, now: Nanos) {
        let pkt = net.pkts.remove(pkt);
        match hop {
            Hop::Host(host) => self.0.deliver(host as usize, pkt, now),
            // The emulator's routes end at a host; a packet that reaches another endpoint has
            // nowhere to go and is freed as a drop.
            _ => self.0.dropped(pkt, now),
        }
    }

    /// A kernel sender's TSQ is released by the TUN driver, not by the emulated NIC.
    fn tx_complete(&mut self, _: &mut Network, _: &mut Pending, _: u32, _: u32, _: Nanos) {}

    /// A BSS's TX completions: there is no simulated sender to tell (the kernels' TSQ is
    /// released by the TUN driver), so they are discarded.
    fn wifi_complete(&mut self, _: &mut Network, _: &mut Pending, _: &[(u32, u32)], _: Nanos) {}

    fn dropped(&mut self, _: &mut Network, _: &mut Pending, pkt: Packet, _: bool, now: Nanos) {
        self.0.dropped(pkt, now);
    }
}

pub struct EmuPath {
    net: Network,
    pending: Pending,
    /// Route index by (from host, to host).
    route_of: Vec<Vec<Option<u32>>>,
    /// Whether a wired link, trace link or BSS is the last hop of a route: its events hand
    /// packets to a host, at their own time, so the real-time loop must not be late for them.
    link_delivers: Vec<bool>,
    trace_delivers: Vec<bool>,
    wifi_delivers: Vec<bool>,
}

impl EmuPath {
    /// The path of a validated scenario.
    /// A host shaper (`stack.host_shaper`) is not part of it: it is a qdisc on the host's TUN
    /// device, in the kernel ([`crate::netns`]).
    pub fn from_scenario(s: &Scenario) -> Result<EmuPath, ScenarioError> {
        let mut net = Network::new(s.step.0, s.warmup.0);
        let unshaped;
        let s = if s.stack.host_shaper.is_some() {
            let mut c = s.clone();
            c.stack.host_shaper = None;
            unshaped = c;
            &unshaped
        } else {
            s
        };
        let built = build_network(s, &mut net)?;
        let hosts = built.up.len() + 1;
        let mut route_of = vec![vec![None; hosts]; hosts];
        let mut link_delivers = vec![false; net.links.len()];
        let mut trace_delivers = vec![false; net.traces.len()];
        let mut wifi_delivers = vec![false; net.bsses.len()];
        for (c, (up, down)) in built.up.into_iter().zip(built.down).enumerate() {
            let client = c + 1;
            for (from, to, hops) in [(client, SERVER, up), (SERVER, client, down)] {
                match hops.last() {
                    Some(&Hop::Link(l)) => link_delivers[l as usize] = true,
                    Some(&Hop::Trace(x)) => trace_delivers[x as usize] = true,
                    Some(&Hop::Wifi { bss, .. }) => wifi_delivers[bss as usize] = true,
                    _ => {}
                }
                let route = hops.into_iter().chain([Hop::Host(to as u32)]).collect();
                route_of[from][to] = Some(net.add_route(route));
            }
        }
        Ok(EmuPath {
            pending: Pending {
                tx_at: vec![None; net.links.len()],
                link_arrival_at: vec![None; net.links.len()],
                opportunity_at: vec![None; net.traces.len()],
                trace_arrival_at: vec![None; net.traces.len()],
                wifi_wakes: vec![BinaryHeap::new(); net.bsses.len()],
            },
            net,
            route_of,
            link_delivers,
            trace_delivers,
            wifi_delivers,
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
        self.pending.earliest().map(|(t, _)| t)
    }

    /// The earliest pending event that may hand a packet to a host at its own time: the
    /// arrival at the end of a last hop, or, on a last hop without delay, the end of a
    /// transmission or a delivery opportunity, or any wake-up of a BSS that is a last hop (the
    /// end of a PPDU delivers; the path does not tell it from the other wake-ups). Other events
    /// only move packets between links; handling them late changes nothing, since each is
    /// handled at its scheduled time before anything later.
    pub fn next_delivery(&self) -> Option<Nanos> {
        let p = &self.pending;
        let links = self.net.links.iter().enumerate().flat_map(|(l, link)| {
            let tx = (self.link_delivers[l] && link.delay == 0).then_some(p.tx_at[l]);
            [
                p.link_arrival_at[l].filter(|_| self.link_delivers[l]),
                tx.flatten(),
            ]
        });
        let traces = self.net.traces.iter().enumerate().flat_map(|(x, trace)| {
            let opportunity =
                (self.trace_delivers[x] && trace.delay == 0).then_some(p.opportunity_at[x]);
            [
                p.trace_arrival_at[x].filter(|_| self.trace_delivers[x]),
                opportunity.flatten(),
            ]
        });
        let wifi = p
            .wifi_wakes
            .iter()
            .zip(&self.wifi_delivers)
            .filter(|&(_, &delivers)| delivers)
            .map(|(wakes, _)| wakes.peek().map(|w| w.0));
        links.chain(traces).chain(wifi).flatten().min()
    }

    /// A packet read from a host at `now` enters its route (`pkt.route`, `pkt.hop` 0).
    /// Every event due before `now` must have been handled ([`EmuPath::advance`]).
    pub fn inject(&mut self, pkt: Packet, now: Nanos, sink: &mut impl Sink) {
        let pkt = self.net.pkts.insert(pkt);
        self.net.work.push_back(pkt);
        self.net.forward(now, &mut self.pending, &mut Tun(sink));
    }

    /// Handle every event due at or before `now`, earliest first, each at its own time.
    pub fn advance(&mut self, now: Nanos, sink: &mut impl Sink) {
        let mut tun = Tun(sink);
        while let Some((t, ev)) = self.pending.earliest() {
            if t > now {
                break;
            }
            self.pending.take(t, ev);
            self.net.handle(ev, t, &mut self.pending, &mut tun);
            self.net.forward(t, &mut self.pending, &mut tun);
        }
    }

    /// The end of the warm-up at model time `t`: utilisation counts from here. The lazy
    /// links catch up first; their drops go to `sink`.
    pub fn end_warmup(&mut self, t: Nanos, sink: &mut impl Sink) {
        self.net.catch_up(t, &mut self.pending, &mut Tun(sink));
        self.net.queues_end_warmup();
    }

    /// Append the backlog of every reported queue, and the Wi-Fi nodes' figures over the step,
    /// at model time `t` to their series (the lazy links catch up first; their drops go to
    /// `sink`).
    pub fn sample(&mut self, t: Nanos, sink: &mut impl Sink) {
        self.net.catch_up(t, &mut self.pending, &mut Tun(sink));
        self.net.sample_queues(t);
        self.net.sample_wifi(t);
    }

    /// Summaries over [warm-up, `end`] and series of the reported queues, as the simulator
    /// reports them.
    pub fn queue_results(&self, end: Nanos) -> (Vec<QueueSummary>, Vec<SeriesOf<QueueSeries>>) {
        self.net.queue_results(end)
    }

    /// Per-node Wi-Fi summaries over [warm-up, `end`] (PPDUs, A-MPDU sizes, airtime,
    /// collisions, retries, drops) and series, as the simulator reports them; empty without
    /// a BSS.
    pub fn wifi_results(&self, end: Nanos) -> (Vec<WifiNodeSummary>, Vec<SeriesOf<WifiSeries>>) {
        (self.net.wifi_summaries(end), self.net.wifi_series())
    }

    /// What the path cannot reproduce with real senders, as sentences (empty for wired and
    /// trace paths).
    pub fn notes(&self) -> Vec<String> {
        if self.net.bsses.is_empty() {
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
        fn dropped(&mut self, pkt: Packet, _: Nanos) {
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
            p.net.packets(),
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
        p.sample(1_000_000, &mut out);
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
        p.sample(1_000_000, &mut out);
        let (nodes, series) = p.wifi_results(1_000_000);
        assert_eq!((nodes[1].ppdus, nodes[1].ampdu_mean), (1, Some(1.0)));
        let s = &series[0].series;
        assert_eq!((s.node.clone(), s.ampdu_mean[1]), (vec![0, 1], 1.0));
        assert!(s.ampdu_mean[0].is_nan(), "the AP sent nothing");
        assert_eq!(p.notes(), [WIFI_UPLOAD_NOTE]);
        assert!(wired().notes().is_empty());
    }
}
