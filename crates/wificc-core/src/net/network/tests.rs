//! The network's dispatch with hand-computed times: what reaches the end of a route, and what
//! the hosts are told (TX completions at a host NIC, drops and whether they release a TSQ
//! charge), in one place.

use super::*;
use crate::net::packet::Kind;
use crate::net::qdisc::{Fifo, FifoLimit};
use crate::sim::EventQueue;

const MS: Nanos = 1_000_000;

impl Scheduler for EventQueue<NetEvent> {
    fn schedule(&mut self, at: Nanos, ev: NetEvent) {
        EventQueue::schedule(self, at, ev);
    }
}

/// What the hosts saw, in order.
#[derive(Debug, PartialEq)]
enum Seen {
    /// (host, seq, time)
    Arrived(u32, u64, Nanos),
    /// (flow, truesize, time)
    TxComplete(u32, u32, Nanos),
    /// (seq, at a host NIC, time)
    Dropped(u64, bool, Nanos),
}

#[derive(Default)]
struct Log(Vec<Seen>);

impl Hosts<EventQueue<NetEvent>> for Log {
    fn arrive(
        &mut self,
        net: &mut Network,
        _: &mut EventQueue<NetEvent>,
        pkt: PacketRef,
        hop: Hop,
        now: Nanos,
    ) {
        let p = net.pkts.remove(pkt);
        let Hop::Host(h) = hop else {
            panic!("{hop:?} is not a host");
        };
        self.0.push(Seen::Arrived(h, p.seq, now));
    }
    fn tx_complete(
        &mut self,
        _: &mut Network,
        _: &mut EventQueue<NetEvent>,
        flow: u32,
        truesize: u32,
        now: Nanos,
    ) {
        self.0.push(Seen::TxComplete(flow, truesize, now));
    }
    fn wifi_complete(
        &mut self,
        _: &mut Network,
        _: &mut EventQueue<NetEvent>,
        _: &[(u32, u32)],
        _: Nanos,
    ) {
        panic!("no BSS here");
    }
    fn dropped(
        &mut self,
        _: &mut Network,
        _: &mut EventQueue<NetEvent>,
        pkt: Packet,
        at_nic: bool,
        now: Nanos,
    ) {
        self.0.push(Seen::Dropped(pkt.seq, at_nic, now));
    }
}

/// A host NIC (`rate`, no delay, a pfifo of `limit` packets, reporting TX completion) then a
/// link of 80 Mbit/s and 5 ms with a 1-packet pfifo, then host 7.
fn network(rate: u64, limit: u32) -> Network {
    let mut net = Network::new(MS, 0);
    let mut nic = Link::new(
        "nic",
        rate,
        0,
        0,
        Fifo::new(FifoLimit::Packets(limit), false),
    );
    nic.reports_tx_completion = true;
    let nic = net.add_link(nic);
    let wan = net.add_link(Link::new(
        "wan",
        80_000_000,
        5 * MS,
        0,
        Fifo::new(FifoLimit::Packets(1), false),
    ));
    net.add_route(vec![Hop::Link(nic), Hop::Link(wan), Hop::Host(7)]);
    net
}

fn data(seq: u64, truesize: u32) -> Packet {
    let mut p = Packet::new(Kind::Data, 4, 0, 1000, 0);
    p.seq = seq;
    p.truesize = truesize;
    p
}

/// Run every event until `until`, as the simulator's loop does.
fn run(net: &mut Network, q: &mut EventQueue<NetEvent>, log: &mut Log, until: Nanos) {
    while let Some(ev) = q.pop_until(until) {
        net.handle(ev.event, ev.at, q, log);
        net.forward(ev.at, q, log);
    }
}

#[test]
fn packets_cross_their_route_and_the_hosts_hear_of_completions_and_drops() {
    // 1000 bytes take 1 ms at 8 Mbit/s and 100 us at 80 Mbit/s. Three packets at t = 0: #0
    // is sent at once, #1 waits in the NIC's 1-packet queue, #2 finds it full and is dropped
    // at the NIC (a drop there releases its TSQ charge: at_nic). #0 leaves the NIC at 1 ms
    // (TX completion), crosses the WAN link by 1.1 ms and arrives 5 ms later, 6.1 ms; #1 the
    // same 1 ms later.
    let (mut net, mut q, mut log) = (network(8_000_000, 1), EventQueue::default(), Log::default());
    for seq in 0..3 {
        let r = net.pkts.insert(data(seq, 2304));
        net.work.push_back(r);
    }
    net.forward(0, &mut q, &mut log);
    assert_eq!(log.0, [Seen::Dropped(2, true, 0)]);
    run(&mut net, &mut q, &mut log, 10 * MS);
    assert_eq!(
        log.0[1..],
        [
            Seen::TxComplete(4, 2304, MS),
            Seen::TxComplete(4, 2304, 2 * MS),
            Seen::Arrived(7, 0, 6_100_000),
            Seen::Arrived(7, 1, 7_100_000),
        ]
    );
    assert_eq!(
        net.packets(),
        0,
        "every packet delivered or dropped is freed"
    );
}

#[test]
fn a_drop_past_the_host_nic_releases_nothing() {
    // A 10 Gbit/s NIC with room for all three (800 ns each): #0 reaches the WAN link at
    // 800 ns and is sent at once, #1 waits in its 1-packet queue from 1600 ns, #2 finds it
    // full at 2400 ns: dropped there, not at a host NIC. Without a TSQ charge (truesize 0)
    // the NIC reports no completion.
    let (mut net, mut q, mut log) = (
        network(10_000_000_000, 10),
        EventQueue::default(),
        Log::default(),
    );
    for seq in 0..3 {
        let r = net.pkts.insert(data(seq, 0));
        net.work.push_back(r);
    }
    net.forward(0, &mut q, &mut log);
    run(&mut net, &mut q, &mut log, 10 * MS);
    assert_eq!(log.0[0], Seen::Dropped(2, false, 2400));
    let arrived: Vec<&Seen> = log
        .0
        .iter()
        .filter(|s| matches!(s, Seen::Arrived(..)))
        .collect();
    // #0 enters the WAN link at 800 ns and arrives 800 + 100 000 + 5 ms later; #1 waits until
    // #0 has left the serialiser.
    assert_eq!(
        arrived,
        [
            &Seen::Arrived(7, 0, 5_100_800),
            &Seen::Arrived(7, 1, 5_200_800)
        ]
    );
    assert!(
        !log.0.iter().any(|s| matches!(s, Seen::TxComplete(..))),
        "no truesize charged"
    );
}

#[test]
fn a_nic_that_orphans_skbs_reports_each_completion_when_its_transmission_starts() {
    // The same three packets through a NIC that orphans skbs as TUN and veth do: #0's charge
    // is released as it starts at 0, #1's as it starts at 1 ms (when #0 ends), not at the ends
    // of their transmissions (1 and 2 ms). What reaches the host is unchanged.
    let (mut net, mut q, mut log) = (network(8_000_000, 1), EventQueue::default(), Log::default());
    net.links[0].orphan_on_xmit = true;
    for seq in 0..3 {
        let r = net.pkts.insert(data(seq, 2304));
        net.work.push_back(r);
    }
    net.forward(0, &mut q, &mut log);
    run(&mut net, &mut q, &mut log, 10 * MS);
    assert_eq!(
        log.0,
        [
            Seen::TxComplete(4, 2304, 0),
            Seen::Dropped(2, true, 0),
            Seen::TxComplete(4, 2304, MS),
            Seen::Arrived(7, 0, 6_100_000),
            Seen::Arrived(7, 1, 7_100_000),
        ]
    );
}
