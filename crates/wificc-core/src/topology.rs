//! Topologies: building a [`World`] from a validated [`Scenario`], running it, and
//! summarising the result.
//!
//! Every path preset produces, for each client host, the hops from the client to the server
//! (`up`) and back (`down`); flows and pings are routes over those hops, in the direction they
//! run. Host NICs (the host qdisc in front of a serialiser whose end is TX completion for TSQ)
//! are shared by all the traffic of their host.
//!
//! `wired` is a dumbbell: each client host's NIC (`access_rate`) feeds router R1; R1 -> R2 is
//! the bottleneck (rate, half the base RTT, the bottleneck qdisc and buffer, optional random
//! loss) and R2 -> R1 its reverse direction (same settings); the server's NIC feeds R2. The far
//! side of each direction delivers straight to the receiving host: an ingress port faster than
//! the bottleneck adds no queue, only a serialisation time below a microsecond at 10 Gbit/s, so
//! it is not modelled. A client's extra RTT (`client_rtt`) is propagation delay on its NIC link,
//! which every round trip it takes part in crosses once. `trace` replaces the bottleneck by two
//! trace-driven links (Mahimahi mm-link) with mm-delay of half the base RTT each.

use serde_json::{Map, Value};

use crate::cc;
use crate::kernel::Profile;
use crate::metrics::results::{
    jain_index, FlowSummary, PingSummary, RunResult, RunSeries, RunSummary, SeriesOf,
};
use crate::net::link::Link;
use crate::net::network::Network;
use crate::net::qdisc::QdiscSpec;
use crate::net::trace::TraceLinkSpec;
use crate::net::wifi::{Bss, DriverKind};
use crate::scenario::{
    err, Direction, PathSpec, PingKindSpec, Scenario, ScenarioError, TracePathSpec, WifiPathSpec,
    WiredSpec,
};
use crate::sim::Rng;
use crate::tcp::receiver::{EcnEcho, TcpReceiver};
use crate::tcp::sender::TcpSender;
use crate::units::{secs, Nanos, NSEC_PER_SEC};
use crate::world::{Hop, PingKind, QueueRef, World};

/// A built path: for each client, the hops from it to the server (`up`) and back (`down`).
pub struct Net {
    pub up: Vec<Vec<Hop>>,
    pub down: Vec<Vec<Hop>>,
}

/// A host NIC: the host qdisc in front of a serialiser whose end is TX completion for TSQ.
fn host_nic(
    s: &Scenario,
    name: String,
    rate: u64,
    delay: u64,
    l2: u32,
    stream: u64,
) -> Result<Link, ScenarioError> {
    let q = s.stack.host_qdisc(Rng::new(s.seed, stream))?;
    let mut nic = Link::new(name, rate, delay, l2, q);
    nic.reports_tx_completion = true;
    nic.orphan_on_xmit = s.stack.tx_orphan;
    nic.shaper = s.stack.host_shaper.map(|h| h.build());
    Ok(nic)
}

/// The client hosts' NICs (client `c` with extra one-way delay `extra(c)`) and the server's NIC,
/// all watched, and the per-client hop lists through the path's two directions: client NIC then
/// `up_hop` towards the server, server NIC then `down_hop` back.
fn dumbbell(
    s: &Scenario,
    net: &mut Network,
    clients: u32,
    nic_rate: u64,
    l2: u32,
    extra: impl Fn(u32) -> u64,
    (up_hop, down_hop): (Hop, Hop),
) -> Result<Net, ScenarioError> {
    let mut client_nic = Vec::new();
    for c in 0..clients {
        let nic = host_nic(
            s,
            format!("client{c}-nic"),
            nic_rate,
            extra(c),
            l2,
            300 + c as u64,
        )?;
        client_nic.push(net.add_link(nic));
    }
    let server_nic = net.add_link(host_nic(s, "server-nic".into(), nic_rate, 0, l2, 299)?);
    for &l in client_nic.iter().chain([&server_nic]) {
        net.watch(QueueRef::Link(l));
    }
    Ok(Net {
        up: client_nic
            .iter()
            .map(|&c| vec![Hop::Link(c), up_hop])
            .collect(),
        down: client_nic
            .iter()
            .map(|_| vec![Hop::Link(server_nic), down_hop])
            .collect(),
    })
}

fn build_wired(s: &Scenario, w: &WiredSpec, net: &mut Network) -> Result<Net, ScenarioError> {
    let mtu = s.stack.mtu;
    let bdp = w.bdp_bytes();
    let mut stream = 100u64;
    let mut qdisc = |spec: &QdiscSpec, field: &str| {
        stream += 1;
        spec.build(bdp, mtu, Rng::new(s.seed, stream))
            .map_err(|m| err(field, m))
    };
    let bottleneck_spec = match w.buffer {
        Some(b) => w.qdisc.clone().with_limit(b),
        None => w.qdisc.clone(),
    };
    let half = w.rtt.0 / 2;
    let mut fwd = Link::new(
        "bottleneck",
        w.rate.0,
        half,
        w.l2_overhead,
        qdisc(&bottleneck_spec, "path.qdisc")?,
    );
    fwd.set_loss(w.loss, Rng::new(s.seed, 200));
    let bottleneck = net.add_link(fwd);
    let mut rev = Link::new(
        "bottleneck-rev",
        w.rate.0,
        w.rtt.0 - half,
        w.l2_overhead,
        qdisc(&bottleneck_spec, "path.qdisc")?,
    );
    rev.set_loss(w.loss, Rng::new(s.seed, 201));
    let reverse = net.add_link(rev);
    net.watch(QueueRef::Link(bottleneck));
    net.watch(QueueRef::Link(reverse));
    let extra = |c: u32| w.client_rtt.get(c as usize).map_or(0, |d| d.0);
    dumbbell(
        s,
        net,
        w.clients,
        w.access_rate.0,
        w.l2_overhead,
        extra,
        (Hop::Link(bottleneck), Hop::Link(reverse)),
    )
}

/// A flow's congestion-control parameters with the kernel profile's defaults for those it
/// leaves open: BBR's ACK-aggregation allowance (`extra_acked`) arrived in 5.1, so an earlier
/// kernel's BBR (and the variants built on it) runs without it.
fn kernel_cc_params(profile: &Profile, cc: &str, given: &Map<String, Value>) -> Map<String, Value> {
    let mut params = given.clone();
    let has = |key: &str| {
        cc::registry::find(cc)
            .and_then(|info| (info.defaults)().get(key).cloned())
            .is_some()
    };
    if !profile.bbr_extra_acked && !params.contains_key("extra_acked") && has("extra_acked") {
        params.insert("extra_acked".into(), Value::Bool(false));
    }
    params
}

fn build_wifi(s: &Scenario, w: &WifiPathSpec, net: &mut Network) -> Result<Net, ScenarioError> {
    let profile = s.stack.profile();
    let mut radio = w.radio.clone();
    let kind = radio.driver().map_err(|m| err("path.radio", m))?.kind;
    if kind == DriverKind::Iwlwifi && radio.driver.ring.is_none() {
        // The kernel's TFD queue, stopped while fewer than n/8 entries are free.
        let n = profile.iwlwifi_he_queue;
        radio.driver.ring = Some(n - n / 8);
    }
    let bss = Bss::new(&radio, w.stations as u16, Rng::new(s.seed, 500))
        .map_err(|m| err("path.radio", m))?;
    let mut bss = bss;
    bss.set_dscp_map(profile.dscp_map);
    let b = net.add_bss("wifi".into(), bss);
    let mut backhaul_spec = w.backhaul_qdisc.clone();
    if let Some(buf) = w.backhaul_buffer {
        backhaul_spec = backhaul_spec.with_limit(buf);
    }
    let (bdp, mtu) = (w.bdp_bytes(), s.stack.mtu);
    let queue = |stream: u64| {
        backhaul_spec
            .build(bdp, mtu, Rng::new(s.seed, stream))
            .map_err(|m| err("path.backhaul_qdisc", m))
    };
    let half = w.rtt.0 / 2;
    let up = net.add_link(Link::new(
        "backhaul",
        w.backhaul.0,
        half,
        w.l2_overhead,
        queue(501)?,
    ));
    let down = net.add_link(Link::new(
        "backhaul-rev",
        w.backhaul.0,
        w.rtt.0 - half,
        w.l2_overhead,
        queue(502)?,
    ));
    let server_nic = net.add_link(host_nic(
        s,
        "server-nic".into(),
        w.access_rate.0,
        0,
        w.l2_overhead,
        299,
    )?);
    for l in [up, down, server_nic] {
        net.watch(QueueRef::Link(l));
    }
    let bss = b as u16;
    Ok(Net {
        up: (1..=w.stations as u16)
            .map(|sta| {
                vec![
                    Hop::Wifi {
                        bss,
                        from: sta,
                        to: 0,
                    },
                    Hop::Link(up),
                ]
            })
            .collect(),
        down: (1..=w.stations as u16)
            .map(|sta| {
                vec![
                    Hop::Link(server_nic),
                    Hop::Link(down),
                    Hop::Wifi {
                        bss,
                        from: 0,
                        to: sta,
                    },
                ]
            })
            .collect(),
    })
}

fn build_trace(s: &Scenario, t: &TracePathSpec, net: &mut Network) -> Result<Net, ScenarioError> {
    let mtu = s.stack.mtu;
    let half = t.rtt.0 / 2;
    let mut direction = |spec: &TraceLinkSpec,
                         field: &str,
                         name: &str,
                         delay: u64,
                         stream: u64|
     -> Result<u32, ScenarioError> {
        let opportunities = spec.opportunities().map_err(|m| err(field, m))?;
        // BDP at the link's mean rate over its first 10 s (one trace period or more).
        let mean_bytes_per_s = opportunities.capacity_bytes(0, 10 * NSEC_PER_SEC) / 10;
        let bdp = (mean_bytes_per_s as u128 * t.rtt.0 as u128 / NSEC_PER_SEC as u128) as u64;
        let mut spec = spec.clone();
        spec.delay.0 += delay;
        let link = spec
            .build(
                name,
                opportunities,
                bdp,
                mtu,
                Rng::new(s.seed, stream),
                Rng::new(s.seed, stream + 1),
            )
            .map_err(|m| err(field, m))?;
        let id = net.add_trace(link);
        net.watch(QueueRef::Trace(id));
        Ok(id)
    };
    let up = direction(&t.uplink, "path.uplink", "uplink", half, 400)?;
    let down = direction(
        &t.downlink,
        "path.downlink",
        "downlink",
        t.rtt.0 - half,
        402,
    )?;
    dumbbell(
        s,
        net,
        t.clients,
        t.access_rate.0,
        t.l2_overhead,
        |_| 0,
        (Hop::Trace(up), Hop::Trace(down)),
    )
}

/// Add the links of a (validated) scenario's path to `net` and watch their queues, as for a
/// simulation; the real-time emulator (`crates/wificc-emu`) drives the same links with the
/// wall clock.
pub fn build_network(s: &Scenario, net: &mut Network) -> Result<Net, ScenarioError> {
    match &s.path {
        PathSpec::Wired(w) => build_wired(s, w, net),
        PathSpec::Trace(t) => build_trace(s, t, net),
        PathSpec::Wifi(w) => build_wifi(s, w, net),
    }
}

/// Build the world a scenario describes.
pub fn build(s: &Scenario) -> Result<World, ScenarioError> {
    s.validate()?;
    let mut world = World::new(s.step.0, s.warmup.0);
    let net = build_network(s, &mut world.net)?;
    for (i, f) in s.flows.iter().enumerate() {
        let id = i as u32;
        let c = f.client as usize;
        let (fwd, back) = match f.direction {
            Direction::Up => (&net.up[c], &net.down[c]),
            Direction::Down => (&net.down[c], &net.up[c]),
        };
        let data_route = world.add_route(fwd.iter().copied().chain([Hop::Receiver(id)]).collect());
        let ack_route = world.add_route(back.iter().copied().chain([Hop::Sender(id)]).collect());
        let params = kernel_cc_params(&s.stack.profile(), &f.cc, &f.cc_params);
        let cc =
            cc::build(&f.cc, &params).map_err(|e| err(format!("flows[{i}].cc"), e.to_string()))?;
        let station = matches!((&s.path, f.direction), (PathSpec::Wifi(_), Direction::Up));
        let mut cfg = s.stack.sender_config(&f.cc, station);
        // A station's Wi-Fi driver without TSO: the kernel segments its skbs in software.
        if let (PathSpec::Wifi(w), Direction::Up) = (&s.path, f.direction) {
            let driver = w.radio.driver().map_err(|m| err("path.radio", m))?;
            cfg.software_gso = (!driver.tso).then_some(driver.sg);
        }
        let ecn = if f.cc == "dctcp" {
            EcnEcho::Dctcp
        } else {
            EcnEcho::Classic
        };
        let dscp = f.dscp.value();
        let sender = TcpSender::new(
            id,
            data_route,
            dscp,
            cfg,
            cc,
            Rng::new(s.seed, 1000 + i as u64),
            f.bytes.map(|b| b.0),
        );
        let mut receiver = TcpReceiver::new(id, ack_route, dscp, ecn);
        receiver.delayed_ack_enabled = s.stack.delayed_ack;
        receiver.read_delay = s.stack.read_delay.map(|d| d.0);
        receiver.set_sack_compression(
            world.net.propagation(data_route) + world.net.propagation(ack_route),
        );
        // A download's receiver is a station: its driver says whether GRO merges what it
        // receives.
        if let (PathSpec::Wifi(w), Direction::Down) = (&s.path, f.direction) {
            receiver.gro = w.radio.driver().map_err(|m| err("path.radio", m))?.gro;
        }
        let name = f
            .name
            .clone()
            .unwrap_or_else(|| format!("{}-{}-{i}", f.cc, f.direction.as_str()));
        let stop = f.stop.map_or(s.duration.0, |d| d.0.min(s.duration.0));
        world.add_flow(name, sender, receiver, f.start.0, stop);
    }
    if !s.flows.is_empty() {
        let from = s.flows.iter().map(|f| f.start.0).min().unwrap_or(0);
        let to = s
            .flows
            .iter()
            .map(|f| f.stop.map_or(s.duration.0, |d| d.0.min(s.duration.0)))
            .max()
            .unwrap_or(s.duration.0);
        world.set_load_window(from, to);
    }
    for (i, p) in s.pings.iter().enumerate() {
        let c = p.client as usize;
        let id = i as u32;
        let out = world.add_route(
            net.up[c]
                .iter()
                .copied()
                .chain([Hop::PingEcho(id)])
                .collect(),
        );
        let back = world.add_route(
            net.down[c]
                .iter()
                .copied()
                .chain([Hop::PingOrigin(id)])
                .collect(),
        );
        let kind = match p.kind {
            PingKindSpec::Icmp => PingKind::Icmp,
            PingKindSpec::Udp => PingKind::Udp,
        };
        let name = p.name.clone().unwrap_or_else(|| {
            format!(
                "{}-ping-{i}",
                match kind {
                    PingKind::Icmp => "icmp",
                    PingKind::Udp => "udp",
                }
            )
        });
        let stop = p.stop.map_or(s.duration.0, |d| d.0);
        world.add_ping(
            name,
            kind,
            p.dscp.value(),
            out,
            back,
            p.interval.0,
            p.start.0,
            stop,
        );
    }
    Ok(world)
}

/// Run a scenario to completion and summarise it.
pub fn run(s: &Scenario) -> Result<RunResult, ScenarioError> {
    let mut world = build(s)?;
    let wall = std::time::Instant::now();
    world.run(s.duration.0);
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(summarise(s, &world, wall_s))
}

/// [`run`], calling `report` with the simulated time reached every `every` of simulated time
/// ([`World::run_reporting`]); `None` when `report` stopped the run.
pub fn run_reporting(
    s: &Scenario,
    every: Nanos,
    report: &mut dyn FnMut(Nanos) -> bool,
) -> Result<Option<RunResult>, ScenarioError> {
    let mut world = build(s)?;
    let wall = std::time::Instant::now();
    if !world.run_reporting(s.duration.0, every, report) {
        return Ok(None);
    }
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(Some(summarise(s, &world, wall_s)))
}

fn ms(ns: Option<f64>) -> Option<f64> {
    ns.map(|v| v / 1e6)
}

fn summarise(s: &Scenario, world: &World, wall_s: f64) -> RunResult {
    let horizon = s.duration.0;
    let flows: Vec<FlowSummary> = world
        .ends
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let from = f.start.max(s.warmup.0);
            let span = f.stop.saturating_sub(from).max(1);
            let delivered = f.delivered_in_window();
            let st = &f.sender.stats;
            // srtt and cwnd means over the flow's samples from the warm-up (or its start) to its
            // stop.
            let (from, to) = (secs(f.start.max(s.warmup.0)), secs(f.stop));
            let kept: Vec<usize> = (0..f.series.t.len())
                .filter(|&k| (from..=to).contains(&f.series.t[k]))
                .collect();
            let n = kept.len().max(1) as f64;
            FlowSummary {
                id: i as u32,
                name: f.name.clone(),
                cc: f.sender.cc.name().to_string(),
                direction: s.flows[i].direction.as_str(),
                dscp: f.sender.dscp,
                start_s: secs(f.start),
                stop_s: secs(f.stop),
                goodput_bps: delivered as f64 * 8.0 / secs(span),
                bytes_delivered: f.receiver.delivered_bytes,
                segs_sent: st.segs_sent,
                retrans: st.retrans,
                retrans_rate: if st.segs_sent > 0 {
                    st.retrans as f64 / st.segs_sent as f64
                } else {
                    0.0
                },
                drops: f.drops,
                rto_count: st.rto_count,
                recoveries: st.recoveries,
                srtt_mean_ms: kept.iter().map(|&k| f.series.srtt_ms[k]).sum::<f64>() / n,
                cwnd_mean: kept.iter().map(|&k| f.series.cwnd[k] as f64).sum::<f64>() / n,
                tsq_throttled: st.tsq_throttled,
                max_tsq_bytes: st.max_below_bytes,
                tsq_exceptions: st.tsq_exceptions,
                tsq_max_excess: st.tsq_max_excess,
                skbs_sent: st.skbs_sent,
                skb_segs_mean: if st.skbs_sent > 0 {
                    st.segs_sent as f64 / st.skbs_sent as f64
                } else {
                    0.0
                },
                acks_sent: f.receiver.acks_sent,
            }
        })
        .collect();
    let pings = world
        .ends
        .pings
        .iter()
        .enumerate()
        .map(|(i, p)| PingSummary {
            id: i as u32,
            name: p.name.clone(),
            kind: match p.kind {
                PingKind::Icmp => "icmp".into(),
                PingKind::Udp => "udp".into(),
            },
            dscp: p.dscp,
            sent: p.sent,
            received: p.received,
            rtt_p10_ms: ms(p.rtt.quantile(0.10)),
            rtt_p50_ms: ms(p.rtt.quantile(0.50)),
            rtt_p90_ms: ms(p.rtt.quantile(0.90)),
            rtt_p99_ms: ms(p.rtt.quantile(0.99)),
            rtt_mean_ms: ms(p.rtt.mean()),
            rtt_all_p10_ms: ms(p.rtt_all.quantile(0.10)),
            rtt_all_p50_ms: ms(p.rtt_all.quantile(0.50)),
            rtt_all_p90_ms: ms(p.rtt_all.quantile(0.90)),
            rtt_all_p99_ms: ms(p.rtt_all.quantile(0.99)),
            rtt_all_mean_ms: ms(p.rtt_all.mean()),
        })
        .collect();
    let (queues, queue_series) = world.queue_results(horizon);
    let goodputs: Vec<f64> = flows.iter().map(|f: &FlowSummary| f.goodput_bps).collect();
    let events = world.events_processed();
    let series = RunSeries {
        flows: world
            .ends
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| SeriesOf {
                id: i as u32,
                name: f.name.clone(),
                series: f.series.clone(),
            })
            .collect(),
        pings: world
            .ends
            .pings
            .iter()
            .enumerate()
            .map(|(i, p)| SeriesOf {
                id: i as u32,
                name: p.name.clone(),
                series: p.series.clone(),
            })
            .collect(),
        queues: queue_series,
        wifi: world.wifi_series(),
    };
    RunResult {
        summary: RunSummary {
            model: crate::MODEL,
            kernel: s.stack.profile().kernel.name(),
            duration_s: secs(horizon),
            warmup_s: secs(s.warmup.0),
            seed: s.seed,
            events,
            wall_s,
            speed: if wall_s > 0.0 {
                secs(horizon) / wall_s
            } else {
                f64::INFINITY
            },
            events_per_s: if wall_s > 0.0 {
                events as f64 / wall_s
            } else {
                f64::INFINITY
            },
            total_goodput_bps: goodputs.iter().sum(),
            jain: jain_index(&goodputs),
        },
        flows,
        pings,
        queues,
        wifi: world.wifi_summaries(horizon),
        series,
        profile: s.stack.profile(),
    }
}
