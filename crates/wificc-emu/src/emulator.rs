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
//! delivery lateness, packet counters, and queue summaries and series in the simulator's
//! format).

use std::io::{self, Write};

use serde::Serialize;
use wificc_core::metrics::results::{QueueSeries, QueueSummary, SeriesOf};
use wificc_core::net::packet::{Ecn, Packet};
use wificc_core::scenario::Scenario;
use wificc_core::units::{secs, Nanos, NSEC_PER_USEC};

use crate::clock::{plan_wait, Clock, Lateness, LatenessReport, Wait};
use crate::ip::{self, NotForwarded};
use crate::netns::{host_of, Network};
use crate::path::{EmuPath, Sink};
use crate::signals;
use crate::slots::Slots;
use crate::tun::{Poller, Tun};

/// Default spin window before an event, microseconds (see [`crate::clock`]).
pub const DEFAULT_SPIN_US: u64 = 50;
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

/// The line printed when the run stops.
#[derive(Debug, Serialize)]
pub struct Report {
    pub event: &'static str,
    /// What ended the run.
    pub stopped_by: String,
    pub elapsed_s: f64,
    pub spin_us: f64,
    pub scheduler: String,
    pub lateness: LatenessReport,
    pub packets: Counters,
    pub queues: Vec<QueueSummary>,
    pub queue_series: Vec<SeriesOf<QueueSeries>>,
}

/// Writes due packets to their hosts and measures how late they are.
struct Deliver<'a> {
    tuns: &'a [&'a Tun],
    slots: &'a mut Slots,
    clock: Clock,
    lateness: &'a mut Lateness,
    counters: &'a mut Counters,
}

impl Sink for Deliver<'_> {
    fn deliver(&mut self, host: usize, pkt: Packet, at: Nanos) {
        if pkt.ecn == Ecn::Ce {
            ip::set_ce(self.slots.bytes_mut(&pkt));
        }
        let actual = self.clock.now();
        match self.tuns[host].send(self.slots.bytes(&pkt)) {
            Ok(()) => {
                self.counters.delivered += 1;
                self.lateness.record(at, actual);
            }
            Err(_) => self.counters.write_errors += 1,
        }
        self.slots.release(&pkt);
    }

    fn dropped(&mut self, pkt: Packet) {
        self.counters.dropped += 1;
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
    let mut network = Network::create(&opts.tag, path.hosts() - 1, &scenario.stack)?;
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
        notes: network.notes.clone(),
    };
    writeln!(out, "{}", serde_json::to_string(&ready)?)?;
    out.flush()?;
    let result = Loop::new(scenario, opts, &network, clock).run(&mut path);
    let removed = network.remove();
    let (stopped_by, lateness, packets, end) = result?;
    removed?;
    let (queues, queue_series) = path.queue_results(end);
    let report = Report {
        event: "stats",
        stopped_by,
        elapsed_s: secs(end),
        spin_us: opts.spin as f64 / NSEC_PER_USEC as f64,
        scheduler,
        lateness: lateness.report(),
        packets,
        queues,
        queue_series,
    };
    writeln!(out, "{}", serde_json::to_string(&report)?)?;
    out.flush()?;
    Ok(report)
}

/// What the loop returns: why it stopped, lateness, counters, end time.
type LoopResult = (String, Lateness, Counters, Nanos);

/// The loop's state.
struct Loop<'a> {
    tuns: Vec<&'a Tun>,
    poller: Poller,
    clock: Clock,
    spin: Nanos,
    step: Nanos,
    warmup: Nanos,
    stdin_control: bool,
    slots: Slots,
    lateness: Lateness,
    counters: Counters,
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
            stdin_control: opts.stdin_control,
            slots: Slots::default(),
            lateness: Lateness::default(),
            counters: Counters::default(),
            buf: vec![0; MAX_DATAGRAM],
        }
    }

    fn run(mut self, path: &mut EmuPath) -> io::Result<LoopResult> {
        let mut next_sample = self.step;
        let mut warm = self.warmup == 0;
        let stopped_by = loop {
            if let Some(sig) = signals::stop_requested() {
                break format!("signal {sig}");
            }
            let now = self.clock.now();
            // Samples and the warm-up at their own model times, between the events around them.
            loop {
                let mark = if warm {
                    next_sample
                } else {
                    next_sample.min(self.warmup)
                };
                if mark > now {
                    break;
                }
                self.advance(path, mark);
                if !warm && mark == self.warmup {
                    path.end_warmup();
                    warm = true;
                }
                if mark == next_sample {
                    path.sample(mark);
                    next_sample += self.step;
                }
            }
            self.advance(path, now);
            for host in 0..self.tuns.len() {
                if self.poller.ready(host) {
                    self.read_from(host, path, now)?;
                }
            }
            if self.stdin_control && self.poller.ready(self.tuns.len()) {
                break stdin_stop();
            }
            let timeout = match plan_wait(self.clock.now(), path.next_event(), self.spin) {
                Wait::Sleep(ns) => ns,
                Wait::Spin => 0,
            };
            self.poller.wait(timeout)?;
        };
        let end = self.clock.now();
        Ok((stopped_by, self.lateness, self.counters, end))
    }

    fn sink(&mut self) -> Deliver<'_> {
        Deliver {
            tuns: &self.tuns,
            slots: &mut self.slots,
            clock: self.clock,
            lateness: &mut self.lateness,
            counters: &mut self.counters,
        }
    }

    fn advance(&mut self, path: &mut EmuPath, to: Nanos) {
        path.advance(to, &mut self.sink());
    }

    /// Read up to [`READ_BATCH`] datagrams from `host`'s device and inject them at `now`.
    fn read_from(&mut self, host: usize, path: &mut EmuPath, now: Nanos) -> io::Result<()> {
        for _ in 0..READ_BATCH {
            let Some(n) = self.tuns[host].recv(&mut self.buf)? else {
                return Ok(());
            };
            self.counters.read += 1;
            let datagram = &self.buf[..n];
            let info = match ip::parse(datagram) {
                Ok(info) => info,
                Err(NotForwarded::NotIpv4 | NotForwarded::Truncated) => {
                    self.counters.malformed += 1;
                    continue;
                }
            };
            let route = host_of(info.dst, path.hosts()).and_then(|to| path.route(host, to));
            let Some(route) = route else {
                self.counters.unroutable += 1;
                continue;
            };
            let slot = self.slots.insert(datagram);
            self.counters.max_held = self.counters.max_held.max(self.slots.in_use() as u64);
            let pkt = info.packet(slot, route, now);
            path.inject(pkt, now, &mut self.sink());
        }
        Ok(())
    }
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
