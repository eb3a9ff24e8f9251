//! The network: links, trace links and Wi-Fi BSSs joined by routes, the packets on them, and
//! the one dispatch that moves a packet from hop to hop. The simulator ([`crate::world::World`]
//! = network + endpoints + metrics) and the real-time emulator (`wificc-emu`: network + TUN
//! devices) both run packets through it; only what sits at the ends of the routes differs.
//!
//! A route is a list of hops. The network's own hops are [`Hop::Link`], [`Hop::Trace`] and
//! [`Hop::Wifi`]; any other hop is an endpoint, and a packet that reaches one is handed to the
//! [`Hosts`] (a TCP sender or receiver and the pings in the simulator, a TUN device in the
//! emulator). Components own their next event: a link asks for the end of its current
//! transmission and the arrival of the head of its delay line, a trace link for its next
//! delivery opportunity and head arrival, a BSS for its wake-ups. The network asks its
//! [`Scheduler`] for them ([`NetEvent`]) and handles them when the scheduler says they are due
//! ([`Network::handle`]).
//!
//! Packets a component delivers at the far end of its hop go onto the work queue
//! ([`Network::work`]), and so do the packets endpoints emit; [`Network::forward`] hands each,
//! in FIFO order, to its next hop until the cascade settles, so one event's consequences run
//! in a deterministic order within the same nanosecond. What a component reports besides
//! packets is passed to the hosts right after the call that produced it, in one place: the TX
//! completion of a host NIC ([`Hosts::tx_complete`]), a BSS's completions
//! ([`Hosts::wifi_complete`]) and every dropped packet ([`Hosts::dropped`]).

mod records;

use std::collections::VecDeque;

pub use records::QueueRef;
use records::Records;

use crate::metrics::results::WifiSeries;
use crate::net::link::{Link, Wake};
use crate::net::packet::{Packet, PacketRef, Packets};
use crate::net::trace::{TraceLink, TraceWake};
use crate::net::wifi::{Bss, NodeStats, WifiOut};
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
    /// Host n of the emulator (its TUN device): the packet leaves the network there.
    Host(u32),
}

/// An event a network component asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetEvent {
    /// Wired link: the end of the current transmission.
    LinkTxDone(u32),
    /// Wired link: the head of the delay line arrives.
    LinkArrival(u32),
    /// Trace link: the next delivery opportunity it needs.
    TraceOpportunity(u32),
    /// Trace link: the head of the delay line arrives.
    TraceArrival(u32),
    /// BSS: a wake-up it asked for (stale ones are ignored by the BSS).
    WifiWake(u32),
}

/// Where the network's events wait: the simulator's event queue, the emulator's pending
/// instants. A component asks only for events it has not pending, except a BSS, whose
/// wake-ups may repeat or turn stale.
pub trait Scheduler {
    fn schedule(&mut self, at: Nanos, ev: NetEvent);
}

/// What sits at the ends of the routes. Each call may emit packets onto `net`'s work queue and
/// schedule events.
pub trait Hosts<S: Scheduler> {
    /// `pkt` reached `hop`, an endpoint (not a link, trace link or BSS).
    fn arrive(&mut self, net: &mut Network, sched: &mut S, pkt: PacketRef, hop: Hop, now: Nanos);
    /// A host NIC that reports TX completion (`Link::reports_tx_completion`) finished sending a
    /// data packet charged `truesize` bytes to flow `flow`'s TCP Small Queues budget (or, one
    /// that orphans skbs, `Link::orphan_on_xmit`, started sending it: reported before the
    /// drops of the same call).
    fn tx_complete(
        &mut self,
        net: &mut Network,
        sched: &mut S,
        flow: u32,
        truesize: u32,
        now: Nanos,
    );
    /// A BSS's TX completions, (flow, truesize) of each data packet whose fate is known at the
    /// sender's radio (acknowledged by a Block Ack, or finally dropped), in order.
    fn wifi_complete(
        &mut self,
        net: &mut Network,
        sched: &mut S,
        completed: &[(u32, u32)],
        now: Nanos,
    );
    /// A queue, a loss process or a BSS dropped `pkt`. `at_nic`: it was dropped at a host NIC
    /// that reports TX completion, so the drop releases its TSQ charge (a BSS reports its drops
    /// in [`Hosts::wifi_complete`] instead).
    fn dropped(&mut self, net: &mut Network, sched: &mut S, pkt: Packet, at_nic: bool, now: Nanos);
}

/// A Wi-Fi BSS and what the network records of it.
pub struct WifiBss {
    pub name: String,
    pub bss: Bss,
    /// Per-node statistics at the last sample, for per-step differences.
    last: Vec<NodeStats>,
    pub series: WifiSeries,
}

pub struct Network {
    pub links: Vec<Link>,
    pub traces: Vec<TraceLink>,
    pub bsses: Vec<WifiBss>,
    pub routes: Vec<Vec<Hop>>,
    /// Every packet in the network and at its endpoints (see `net::packet::Packets`).
    pub pkts: Packets,
    /// Packets to hand to their next hop now, in order.
    pub work: VecDeque<PacketRef>,
    /// TX completions reported by a BSS, passed on after each BSS call.
    completed: Vec<(u32, u32)>,
    /// Dropped packets being passed on (kept for its capacity).
    dropped: Vec<Packet>,
    /// Released TSQ charges being passed on (kept for its capacity).
    released: Vec<(u32, u32)>,
    /// The watched queues' series, the Wi-Fi series and the summaries' windows.
    records: Records,
}

impl Network {
    /// An empty network whose series are sampled every `step` and whose summaries count from
    /// `warmup` on.
    pub fn new(step: Nanos, warmup: Nanos) -> Self {
        Network {
            links: Vec::new(),
            traces: Vec::new(),
            bsses: Vec::new(),
            routes: Vec::new(),
            pkts: Packets::new(),
            work: VecDeque::new(),
            completed: Vec::new(),
            dropped: Vec::new(),
            released: Vec::new(),
            records: Records::new(step, warmup),
        }
    }

    pub fn add_link(&mut self, mut link: Link) -> u32 {
        link.record_from = self.records.warmup;
        self.links.push(link);
        (self.links.len() - 1) as u32
    }

    pub fn add_trace(&mut self, mut link: TraceLink) -> u32 {
        link.record_from = self.records.warmup;
        self.traces.push(link);
        (self.traces.len() - 1) as u32
    }

    pub fn add_bss(&mut self, name: String, mut bss: Bss) -> u32 {
        bss.set_record_from(self.records.warmup);
        let last = bss.stats().nodes;
        self.records.add_bss(last.len());
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

    /// The propagation delay along `route`: its links' and trace links' delays (a BSS adds
    /// none of its own).
    pub fn propagation(&self, route: u32) -> Nanos {
        self.routes[route as usize]
            .iter()
            .map(|hop| match *hop {
                Hop::Link(l) => self.links[l as usize].delay,
                Hop::Trace(t) => self.traces[t as usize].delay,
                _ => 0,
            })
            .sum()
    }

    /// The hop `pkt` is at.
    #[inline]
    pub fn hop(&self, pkt: PacketRef) -> Hop {
        let p = &self.pkts[pkt];
        self.routes[p.route as usize][p.hop as usize]
    }

    /// Handle `ev`, due now. The packets it delivers wait on the work queue
    /// ([`Network::forward`]).
    #[inline(always)]
    pub fn handle<S: Scheduler, H: Hosts<S>>(
        &mut self,
        ev: NetEvent,
        now: Nanos,
        sched: &mut S,
        hosts: &mut H,
    ) {
        match ev {
            NetEvent::LinkTxDone(id) => {
                let done = self.links[id as usize].tx_done(now, &mut self.pkts);
                schedule_link(sched, id, done.wake);
                if let Some(p) = done.arrived {
                    self.work.push_back(p);
                }
                if let Some((flow, truesize)) = done.completed {
                    hosts.tx_complete(self, sched, flow, truesize, now);
                }
                self.pass_drops(Some(id), sched, hosts, now);
            }
            NetEvent::LinkArrival(id) => {
                if let Some(t) = self.links[id as usize].arrive(now, &mut self.work, &mut self.pkts)
                {
                    sched.schedule(t, NetEvent::LinkArrival(id));
                }
                self.pass_drops(Some(id), sched, hosts, now);
            }
            NetEvent::TraceOpportunity(id) => {
                let wake = self.traces[id as usize].opportunity(now, &mut self.pkts);
                schedule_trace(sched, id, wake);
                self.pass_drops(None, sched, hosts, now);
            }
            NetEvent::TraceArrival(id) => {
                if let Some(t) = self.traces[id as usize].arrive(now, &mut self.work) {
                    sched.schedule(t, NetEvent::TraceArrival(id));
                }
            }
            NetEvent::WifiWake(b) => {
                let mut out = WifiOut {
                    pkts: &mut self.pkts,
                    delivered: &mut self.work,
                    completed: &mut self.completed,
                };
                if let Some(t) = self.bsses[b as usize].bss.wake(now, &mut out) {
                    sched.schedule(t, NetEvent::WifiWake(b));
                }
                self.pass_completions(sched, hosts, now);
            }
        }
    }

    /// Hand every packet on the work queue to its next hop until the cascade settles: a
    /// network hop takes it in, an endpoint goes to the hosts.
    #[inline(always)]
    pub fn forward<S: Scheduler, H: Hosts<S>>(&mut self, now: Nanos, sched: &mut S, hosts: &mut H) {
        while let Some(pkt) = self.work.pop_front() {
            match self.hop(pkt) {
                Hop::Link(l) => {
                    let wake = self.links[l as usize].accept(pkt, &mut self.pkts, now);
                    schedule_link(sched, l, wake);
                    self.pass_drops(Some(l), sched, hosts, now);
                }
                Hop::Trace(t) => {
                    let wake = self.traces[t as usize].accept(pkt, &mut self.pkts, now);
                    schedule_trace(sched, t, wake);
                    self.pass_drops(None, sched, hosts, now);
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
                        sched.schedule(t, NetEvent::WifiWake(bss as u32));
                    }
                    self.pass_completions(sched, hosts, now);
                }
                hop => hosts.arrive(self, sched, pkt, hop, now),
            }
        }
    }

    /// Let every lazy link carry out the starts due by `now` (see `net::link`), so that its
    /// backlog, counters and busy time are those of this instant.
    pub fn catch_up<S: Scheduler, H: Hosts<S>>(
        &mut self,
        now: Nanos,
        sched: &mut S,
        hosts: &mut H,
    ) {
        for id in 0..self.links.len() as u32 {
            if let Some(t) = self.links[id as usize].catch_up(now, &mut self.pkts) {
                sched.schedule(t, NetEvent::LinkArrival(id));
            }
            self.pass_drops(Some(id), sched, hosts, now);
        }
    }

    /// Pass a BSS's TX completions to the hosts, then its drops (whose TSQ charges are among
    /// the completions).
    fn pass_completions<S: Scheduler, H: Hosts<S>>(
        &mut self,
        sched: &mut S,
        hosts: &mut H,
        now: Nanos,
    ) {
        if !self.completed.is_empty() {
            let mut completed = std::mem::take(&mut self.completed);
            hosts.wifi_complete(self, sched, &completed, now);
            completed.clear();
            self.completed = completed;
        }
        self.pass_drops(None, sched, hosts, now);
    }

    /// Pass what a component (`link`, or a trace link or BSS) reported in the packet store to
    /// the hosts: the TSQ charges a NIC that orphans skbs released (`Link::orphan_on_xmit`), as
    /// completions, then the packets dropped.
    #[inline(always)]
    fn pass_drops<S: Scheduler, H: Hosts<S>>(
        &mut self,
        link: Option<u32>,
        sched: &mut S,
        hosts: &mut H,
        now: Nanos,
    ) {
        if self.pkts.has_reports() {
            self.pass_reports(link, sched, hosts, now);
        }
    }

    #[cold]
    fn pass_reports<S: Scheduler, H: Hosts<S>>(
        &mut self,
        link: Option<u32>,
        sched: &mut S,
        hosts: &mut H,
        now: Nanos,
    ) {
        let mut released = std::mem::take(&mut self.released);
        self.pkts.take_released(&mut released);
        for &(flow, truesize) in &released {
            hosts.tx_complete(self, sched, flow, truesize, now);
        }
        released.clear();
        self.released = released;
        if self.pkts.dropped().is_empty() {
            return;
        }
        let at_nic = link.is_some_and(|l| self.links[l as usize].reports_tx_completion);
        let mut dropped = std::mem::take(&mut self.dropped);
        self.pkts.remove_dropped(&mut dropped);
        for pkt in dropped.drain(..) {
            hosts.dropped(self, sched, pkt, at_nic, now);
        }
        self.dropped = dropped;
    }

    /// Packets in the network and at its endpoints now: queued, on a wire or in the air, held
    /// by a BSS for reordering or retransmission, or waiting on the work queue.
    pub fn packets(&self) -> usize {
        self.pkts.live()
    }
}

fn schedule_link(sched: &mut impl Scheduler, id: u32, wake: Wake) {
    if let Some(t) = wake.tx_done {
        sched.schedule(t, NetEvent::LinkTxDone(id));
    }
    if let Some(t) = wake.arrival {
        sched.schedule(t, NetEvent::LinkArrival(id));
    }
}

fn schedule_trace(sched: &mut impl Scheduler, id: u32, wake: TraceWake) {
    if let Some(t) = wake.opportunity {
        sched.schedule(t, NetEvent::TraceOpportunity(id));
    }
    if let Some(t) = wake.arrival {
        sched.schedule(t, NetEvent::TraceArrival(id));
    }
}

#[cfg(test)]
mod tests;
