//! The real-time loop: read packets from the hosts' TUN devices, run them through the
//! emulated path at wall-clock times, write them to their destinations when due.
//!
//! One iteration: note the time `now`; handle every path event due by then, in time order
//! (queue samples and the end of the warm-up are taken at their own model times on the way);
//! read what the last poll found waiting and inject it at `now`; then wait as
//! [`plan_wait`] says, in `ppoll` on the TUN descriptors (and standard input when it is the
//! stop control), with a zero timeout while spinning. Every event before `now` is handled
//! before a packet is injected at `now`, so the links see nondecreasing times.
//!
//! The run prints one JSON line when the network is ready ([`Ready`]: the namespaces, their
//! addresses, the clock origin, what is not reproduced) and one when it stops ([`Report`]:
//! delivery lateness, packet counters, and queue and Wi-Fi summaries and series in the
//! simulator's format).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::Ipv4Addr;

use serde::Serialize;
use wificc_core::metrics::results::{
    QueueSeries, QueueSummary, SeriesOf, WifiNodeSummary, WifiSeries,
};
use wificc_core::net::packet::{Ecn, Packet};
use wificc_core::scenario::{PathSpec, Scenario};
use wificc_core::units::{secs, Nanos, NSEC_PER_USEC};

use crate::acks::{AckPolicy, AckTracker};
use crate::clock::{plan_wait, Clock, Lateness, LatenessReport, Wait, WriteCostReport};
use crate::ip::{self, NotForwarded};
use crate::netns::{host_of, Network};
use crate::path::{EmuPath, Sink};
use crate::signals;
use crate::slots::Slots;
use crate::tun::{Poller, Tun};

/// Default spin window before a delivery, microseconds (see [`crate::clock`]): past the tail
/// of a real-time `ppoll`'s wake-up delay on a 2-core virtual machine (median 30 us, but 55-80
/// us seen, and a window of 30 us left 0.2-1.4% of a 5 Mbit/s LTE trace's or a 100 Mbit/s
/// flow's packets more than 100 us late). Measured against 30 us on the kernel checks' cells
/// (docs/fidelity.md): the emulator's own lateness within 100 us 99.1-99.9% -> 99.9-99.97% on
/// the Verizon trace with bbr (three seeds), 98.6% -> 99.0% on the segments check's 100 Mbit/s
/// bbr cell; its CPU time 1.1 -> 1.7 s over that 34 s trace run, 2.2 -> 3.4 s over 12 s at
/// 100 Mbit/s, 3.8 -> 6.1 s over 25 s of an ath9k download; at 400 Mbit/s and on ath10k's
/// 575 Mbit/s, where deliveries are closer than either window, 5-15% more.
pub const DEFAULT_SPIN_US: u64 = 100;
/// Default real-time priority (SCHED_FIFO 1..99; 0 keeps the normal scheduler): above the
/// kernel's threaded interrupt handlers (50) so that a wake-up is not queued behind them.
pub const DEFAULT_RT_PRIORITY: i32 = 60;
/// Most packets read from one device per iteration, so that due deliveries are not held up
/// by a burst on another device.
const READ_BATCH: usize = 64;
/// Read buffer: the largest IPv4 datagram.
const MAX_DATAGRAM: usize = 65_535;

/// How the loop runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Run tag: names are `wcc-<tag>-...`.
    pub tag: String,
    pub spin: Nanos,
    pub rt_priority: i32,
    /// Stop when standard input reaches its end or delivers a line.
    pub stdin_control: bool,
    /// Write every dropped TCP segment here as CSV (see [`Drops`]) when the run stops.
    pub drop_log: Option<std::path::PathBuf>,
}

/// A host as the ready line describes it.
#[derive(Debug, Serialize)]
pub struct HostInfo {
    /// "server" or "client".
    pub role: &'static str,
    /// Client index (None for the server).
    pub client: Option<usize>,
    /// Namespace and TUN device name.
    pub name: String,
    pub addr: String,
}

/// The line printed when the network is ready.
#[derive(Debug, Serialize)]
pub struct Ready {
    pub event: &'static str,
    pub tag: String,
    /// `CLOCK_MONOTONIC` nanoseconds of model time 0.
    pub origin_ns: u64,
    pub scheduler: String,
    pub hosts: Vec<HostInfo>,
    /// Scenario settings that the emulator does not reproduce, as sentences.
    pub notes: Vec<String>,
}

/// Packet counters.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct Counters {
    /// Datagrams read from the TUN devices.
    pub read: u64,
    /// Datagrams written to their destination.
    pub delivered: u64,
    /// Dropped by a queue (or the link's random loss).
    pub dropped: u64,
    /// Not IPv4, or shorter than their headers.
    pub malformed: u64,
    /// To an address that is not another emulated host.
    pub unroutable: u64,
    /// Writes to a TUN device that failed.
    pub write_errors: u64,
    /// Most datagrams held at once.
    pub max_held: u64,
}

/// Drops of one TCP connection direction (data or ACKs), by address and port.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TcpDrops {
    pub src: String,
    pub src_port: u16,
    pub dst: String,
    pub dst_port: u16,
    pub drops: u64,
}

/// Drops at one host's TUN device (None where the counters could not be read).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TunDrops {
    pub host: usize,
    pub rx_dropped: Option<u64>,
    pub tx_dropped: Option<u64>,
}

/// Drop counts by (source, source port, destination, destination port) of TCP packets.
type DropsByFlow = BTreeMap<(Ipv4Addr, u16, Ipv4Addr, u16), u64>;

/// The TCP drops: counted per connection direction, and with `--drop-log` each one listed
/// (model time, the connection, its sequence number and payload), with the SYNs read (their
/// sequence number is the connection's initial one, so that a drop's segment index can be
/// computed), so that where a queue's drops fall in a flow can be compared with the
/// simulator's.
#[derive(Default)]
struct Drops {
    by_flow: DropsByFlow,
    log: Option<Vec<(&'static str, Nanos, ip::Ipv4Info)>>,
}

impl Drops {
    fn record(&mut self, info: ip::Ipv4Info, at: Nanos) {
        let key = (info.src, info.ports.0, info.dst, info.ports.1);
        *self.by_flow.entry(key).or_default() += 1;
        self.note("drop", info, at);
    }

    /// List a packet as `kind` when the log is on (`drop`, or `syn`: a SYN read from a host).
    fn note(&mut self, kind: &'static str, info: ip::Ipv4Info, at: Nanos) {
        if let Some(log) = self.log.as_mut() {
            log.push((kind, at, info));
        }
    }

    /// The list as CSV: `kind,t_ns,src,src_port,dst,dst_port,seq,payload`, kind `drop` or
    /// `syn`.
    fn write_log(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "kind,t_ns,src,src_port,dst,dst_port,seq,payload")?;
        for (kind, t, i) in self.log.iter().flatten() {
            let (sp, dp) = i.ports;
            let (src, dst, seq, len) = (i.src, i.dst, i.tcp_seq, i.tcp_payload);
            writeln!(out, "{kind},{t},{src},{sp},{dst},{dp},{seq},{len}")?;
        }
        Ok(())
    }
}

/// The line printed when the run stops.
#[derive(Debug, Serialize)]
pub struct Report {
    pub event: &'static str,
    /// What ended the run.
    pub stopped_by: String,
    pub elapsed_s: f64,
    pub spin_us: f64,
    pub scheduler: String,
    /// CPU time the emulator used (user + system), seconds: the spinning and the kernel's
    /// processing of the packets it writes.
    pub cpu_s: f64,
    /// Times the emulator was preempted (involuntary context switches).
    pub preempted: u64,
    pub lateness: LatenessReport,
    /// How long the writes to each host took (the receiving kernel's processing runs in them).
    pub writes: Vec<WriteCostReport>,
    pub packets: Counters,
    /// Queue drops of each TCP connection direction that lost packets.
    pub tcp_drops: Vec<TcpDrops>,
    /// Each TCP connection direction's data segments and the ACKs its receiver sent.
    pub tcp_acks: Vec<AckPolicy>,
    /// Each host's TUN device's drops (index: host, 0 the server): `tx_dropped` counts packets
    /// its kernel sent that were lost before the emulator read them (the emulator was late),
    /// losses outside the emulated path.
    pub tun_drops: Vec<TunDrops>,
    pub queues: Vec<QueueSummary>,
    pub queue_series: Vec<SeriesOf<QueueSeries>>,
    /// Per-node Wi-Fi summaries (A-MPDU sizes at the AP and the stations), empty without a BSS.
    pub wifi: Vec<WifiNodeSummary>,
    pub wifi_series: Vec<SeriesOf<WifiSeries>>,
}

/// Writes due packets to their hosts and measures how late they are.
struct Deliver<'a> {
    tuns: &'a [&'a Tun],
    slots: &'a mut Slots,
    clock: Clock,
    lateness: &'a mut Lateness,
    counters: &'a mut Counters,
    tcp_drops: &'a mut Drops,
}

impl Sink for Deliver<'_> {
    fn deliver(&mut self, host: usize, pkt: Packet, at: Nanos) {
        if pkt.ecn() == Ecn::Ce {
            ip::set_ce(self.slots.bytes_mut(&pkt));
        }
        let actual = self.clock.now();
        match self.tuns[host].send(self.slots.bytes(&pkt)) {
            Ok(()) => {
                let end = self.clock.now();
                self.counters.delivered += 1;
                self.lateness.written(host, at, actual, end);
            }
            Err(_) => self.counters.write_errors += 1,
        }
        self.slots.release(&pkt);
    }

    fn dropped(&mut self, pkt: Packet, at: Nanos) {
        self.counters.dropped += 1;
        if let Ok(info) = ip::parse(self.slots.bytes(&pkt)) {
            if info.proto == ip::PROTO_TCP {
                self.tcp_drops.record(info, at);
            }
        }
        self.slots.release(&pkt);
    }
}

/// Ask for the real-time scheduler at `priority` (not inherited by children) and the finest
/// timer slack; returns a description of the scheduler in force.
fn realtime(priority: i32) -> String {
    // SAFETY: plain syscalls on the calling thread with valid arguments.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        if priority <= 0 {
            return "SCHED_OTHER".to_string();
        }
        let param = libc::sched_param {
            sched_priority: priority,
        };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param) == 0 {
            format!("SCHED_FIFO {priority}")
        } else {
            format!(
                "SCHED_OTHER (SCHED_FIFO {priority} refused: {})",
                io::Error::last_os_error()
            )
        }
    }
}

/// Build the network of `scenario`, print the ready line to `out`, run until a stop request,
/// print the report and return it. The namespaces are removed before this returns, on every
/// path.
pub fn run(scenario: &Scenario, opts: &Options, out: &mut impl Write) -> io::Result<Report> {
    let mut path = EmuPath::from_scenario(scenario)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    // A Wi-Fi station whose driver delivers through NAPI gets GRO on its device, as the
    // simulator's receiver does (`tcp::receiver`).
    let station_gro = match &scenario.path {
        PathSpec::Wifi(w) => w.radio.driver().is_ok_and(|d| d.gro),
        _ => false,
    };
    let mut network = Network::create(&opts.tag, path.hosts() - 1, &scenario.stack, station_gro)?;
    let scheduler = realtime(opts.rt_priority);
    let clock = Clock::start();
    let ready = Ready {
        event: "ready",
        tag: opts.tag.clone(),
        origin_ns: clock.origin(),
        scheduler: scheduler.clone(),
        hosts: network
            .hosts
            .iter()
            .enumerate()
            .map(|(h, host)| HostInfo {
                role: if h == 0 { "server" } else { "client" },
                client: h.checked_sub(1),
                name: host.name.clone(),
                addr: host.addr.to_string(),
            })
            .collect(),
        notes: network.notes.iter().cloned().chain(path.notes()).collect(),
    };
    writeln!(out, "{}", serde_json::to_string(&ready)?)?;
    out.flush()?;
    let result = Loop::new(scenario, opts, &network, clock).run(&mut path);
    let tun_drops = network
        .tun_drops()
        .into_iter()
        .enumerate()
        .map(|(host, d)| TunDrops {
            host,
            rx_dropped: d.map(|d| d.0),
            tx_dropped: d.map(|d| d.1),
        })
        .collect();
    let removed = network.remove();
    let (stopped_by, lateness, packets, drops, acks, end) = result?;
    if let Some(file) = &opts.drop_log {
        let mut w = io::BufWriter::new(std::fs::File::create(file)?);
        drops.write_log(&mut w)?;
        w.flush()?;
    }
    removed?;
    let (queues, queue_series) = path.queue_results(end);
    let (wifi, wifi_series) = path.wifi_results(end);
    let (cpu_s, preempted) = own_usage();
    let report = Report {
        event: "stats",
        stopped_by,
        elapsed_s: secs(end),
        spin_us: opts.spin as f64 / NSEC_PER_USEC as f64,
        scheduler,
        cpu_s,
        preempted,
        lateness: lateness.report(),
        writes: lateness.writes(),
        packets,
        tcp_drops: drops
            .by_flow
            .into_iter()
            .map(|((src, src_port, dst, dst_port), drops)| TcpDrops {
                src: src.to_string(),
                src_port,
                dst: dst.to_string(),
                dst_port,
                drops,
            })
            .collect(),
        tcp_acks: acks.report(),
        tun_drops,
        queues,
        queue_series,
        wifi,
        wifi_series,
    };
    writeln!(out, "{}", serde_json::to_string(&report)?)?;
    out.flush()?;
    Ok(report)
}

/// What the loop returns: why it stopped, lateness (with the write costs), counters, TCP
/// drops, end time.
type LoopResult = (String, Lateness, Counters, Drops, AckTracker, Nanos);

/// The loop's state.
struct Loop<'a> {
    tuns: Vec<&'a Tun>,
    poller: Poller,
    clock: Clock,
    spin: Nanos,
    step: Nanos,
    warmup: Nanos,
    /// Model time of the next queue sample.
    next_sample: Nanos,
    /// The warm-up has ended.
    warm: bool,
    stdin_control: bool,
    slots: Slots,
    lateness: Lateness,
    counters: Counters,
    tcp_drops: Drops,
    acks: AckTracker,
    buf: Vec<u8>,
}

impl<'a> Loop<'a> {
    fn new(scenario: &Scenario, opts: &Options, network: &'a Network, clock: Clock) -> Self {
        let tuns: Vec<&Tun> = network.hosts.iter().map(|h| &h.tun).collect();
        let mut fds: Vec<_> = tuns.iter().map(|t| t.fd()).collect();
        if opts.stdin_control {
            fds.push(libc::STDIN_FILENO);
        }
        Loop {
            poller: Poller::new(&fds),
            tuns,
            clock,
            spin: opts.spin,
            step: scenario.step.0,
            warmup: scenario.warmup.0,
            next_sample: scenario.step.0,
            warm: scenario.warmup.0 == 0,
            stdin_control: opts.stdin_control,
            slots: Slots::default(),
            lateness: Lateness::default(),
            counters: Counters::default(),
            tcp_drops: Drops {
                log: opts.drop_log.is_some().then(Vec::new),
                ..Drops::default()
            },
            acks: AckTracker::default(),
            buf: vec![0; MAX_DATAGRAM],
        }
    }

    fn run(mut self, path: &mut EmuPath) -> io::Result<LoopResult> {
        let stopped_by = loop {
            if let Some(sig) = signals::stop_requested() {
                break format!("signal {sig}");
            }
            self.catch_up(path, self.clock.now());
            for host in 0..self.tuns.len() {
                if self.poller.ready(host) {
                    self.read_from(host, path)?;
                }
            }
            if self.stdin_control && self.poller.ready(self.tuns.len()) {
                break stdin_stop();
            }
            let (next, delivery) = (path.next_event(), path.next_delivery());
            let timeout = match plan_wait(self.clock.now(), next, delivery, self.spin) {
                Wait::Sleep(ns) => ns,
                Wait::Spin => 0,
            };
            self.poller.wait(timeout)?;
        };
        let end = self.clock.now();
        Ok((
            stopped_by,
            self.lateness,
            self.counters,
            self.tcp_drops,
            self.acks,
            end,
        ))
    }

    /// Handle everything due by `now`: path events, and the queue samples and the end of the
    /// warm-up at their own model times between the events around them.
    fn catch_up(&mut self, path: &mut EmuPath, now: Nanos) {
        loop {
            let mark = if self.warm {
                self.next_sample
            } else {
                self.next_sample.min(self.warmup)
            };
            if mark > now {
                break;
            }
            self.advance(path, mark);
            if !self.warm && mark == self.warmup {
                path.end_warmup(mark, &mut self.sink());
                self.warm = true;
            }
            if mark == self.next_sample {
                path.sample(mark, &mut self.sink());
                self.next_sample += self.step;
            }
        }
        self.advance(path, now);
    }

    fn sink(&mut self) -> Deliver<'_> {
        Deliver {
            tuns: &self.tuns,
            slots: &mut self.slots,
            clock: self.clock,
            lateness: &mut self.lateness,
            counters: &mut self.counters,
            tcp_drops: &mut self.tcp_drops,
        }
    }

    fn advance(&mut self, path: &mut EmuPath, to: Nanos) {
        path.advance(to, &mut self.sink());
    }

    /// Read up to [`READ_BATCH`] datagrams from `host`'s device and inject each at the time it
    /// was read, after what was due before it (so a burst to read does not hold up deliveries).
    fn read_from(&mut self, host: usize, path: &mut EmuPath) -> io::Result<()> {
        for _ in 0..READ_BATCH {
            let Some(n) = self.tuns[host].recv(&mut self.buf)? else {
                return Ok(());
            };
            let now = self.clock.now();
            self.counters.read += 1;
            let datagram = &self.buf[..n];
            let info = match ip::parse(datagram) {
                Ok(info) => info,
                Err(NotForwarded::NotIpv4 | NotForwarded::Truncated) => {
                    self.counters.malformed += 1;
                    continue;
                }
            };
            self.acks.record(&info, now);
            if info.tcp_syn {
                self.tcp_drops.note("syn", info, now);
            }
            let route = host_of(info.dst, path.hosts()).and_then(|to| path.route(host, to));
            let Some(route) = route else {
                self.counters.unroutable += 1;
                continue;
            };
            let slot = self.slots.insert(datagram);
            self.counters.max_held = self.counters.max_held.max(self.slots.in_use() as u64);
            let pkt = info.packet(slot, route, now);
            self.catch_up(path, now);
            path.inject(pkt, now, &mut self.sink());
        }
        Ok(())
    }
}

/// CPU seconds (user + system) and involuntary context switches of this process so far.
fn own_usage() -> (f64, u64) {
    // SAFETY: getrusage fills the struct we own; zeroed is a valid initial value.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        secs(usage.ru_utime) + secs(usage.ru_stime),
        usage.ru_nivcsw as u64,
    )
}

/// Standard input is readable: a line or its end asks to stop. Reads what is there without
/// waiting for a full line (poll said it would not block).
fn stdin_stop() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: reading into a buffer we own, at most its length.
    let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
    if n <= 0 {
        "end of standard input".to_string()
    } else {
        let text = String::from_utf8_lossy(&buf[..n as usize]);
        format!("standard input {:?}", text.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::{parse, tests::tcp_datagram};

    /// Drops are counted per connection direction; with the log on, each drop and each SYN is
    /// listed in order as a CSV row.
    #[test]
    fn drops_are_counted_and_with_the_log_listed() {
        let mut syn = tcp_datagram(0, 0);
        syn[24..28].copy_from_slice(&1000u32.to_be_bytes());
        syn[33] = 0x02;
        let mut data = tcp_datagram(1448, 0);
        data[24..28].copy_from_slice(&(1001 + 1448u32).to_be_bytes());
        let (syn, data) = (parse(&syn).unwrap(), parse(&data).unwrap());

        let mut counted = Drops::default();
        counted.note("syn", syn, 5);
        counted.record(data, 7_000);
        assert!(counted.log.is_none());
        let key = (data.src, 40000, data.dst, 5201);
        assert_eq!(counted.by_flow.get(&key), Some(&1));

        let mut logged = Drops {
            log: Some(Vec::new()),
            ..Drops::default()
        };
        logged.note("syn", syn, 5);
        logged.record(data, 7_000);
        logged.record(data, 9_000);
        // A SYN that a queue drops is a drop.
        logged.record(syn, 9_500);
        assert_eq!(logged.by_flow.get(&key), Some(&3));
        let mut csv = Vec::new();
        logged.write_log(&mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "kind,t_ns,src,src_port,dst,dst_port,seq,payload\n\
             syn,5,198.18.1.1,40000,198.18.0.1,5201,1000,0\n\
             drop,7000,198.18.1.1,40000,198.18.0.1,5201,2449,1448\n\
             drop,9000,198.18.1.1,40000,198.18.0.1,5201,2449,1448\n\
             drop,9500,198.18.1.1,40000,198.18.0.1,5201,1000,0\n"
        );
    }
}
