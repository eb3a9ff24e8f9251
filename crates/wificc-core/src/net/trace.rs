//! A trace-driven link direction with Mahimahi `mm-link` semantics, plus `mm-delay` and
//! `mm-loss`, and piecewise-constant rate schedules as a second source of capacity.
//!
//! **Delivery opportunities.** A Mahimahi trace (src/frontend/link_queue.cc in
//! ravinet/mahimahi) is a list of integer millisecond timestamps, one per line, nondecreasing.
//! Each line is one opportunity to deliver an MTU-sized packet at that millisecond; a timestamp
//! repeated k times gives k opportunities in that millisecond. The trace loops: its period is
//! its last timestamp, and loop L offers the same opportunities shifted by L periods (so a trace
//! that starts at 0 ms offers the last opportunity of one loop and the first of the next at the
//! same instant, as mm-link does). Time 0 of the trace is time 0 of the simulation.
//!
//! **Byte accounting.** mm-link reads packets from a TUN device opened without `IFF_NO_PI`, so
//! every packet it queues carries the 4-byte `struct tun_pi` in front of the IP datagram, and an
//! opportunity is worth 1504 bytes of that (`PACKET_SIZE` in link_queue.hh): exactly one
//! 1500-byte IP packet. At an opportunity, the link spends its 1504 bytes of credit on the
//! packet in transit and then on packets taken from the queue, in order; a packet whose bytes
//! are not all sent stays in transit and finishes at a later opportunity; several small packets
//! can leave at one opportunity; credit left when the queue runs empty is lost (it does not
//! carry over to the next opportunity). A packet leaves at the time of the opportunity that
//! sends its last byte. mm-link rejects packets larger than 1504 bytes; here such a packet
//! simply spans several opportunities. As in mm-link, opportunities that fall at or before the
//! arrival instant of a packet are used up before the packet joins the queue.
//!
//! **Queues, delay, loss.** The queue is any FIFO-ordered qdisc of [`crate::net::qdisc`]:
//! infinite (Mahimahi's default), droptail and drophead with a packet or byte limit (pfifo and
//! bfifo, with `head_drop` for drophead), CoDel and PIE (as Linux implements them), or ECN
//! step marking. A packet enters the queue when it arrives and is dequeued at the opportunity
//! that starts sending it, so an AQM sees sojourn = that opportunity's time - arrival. A fixed
//! one-way delay (`mm-delay`) follows the link: delivered packets travel a delay line. I.i.d.
//! loss (`mm-loss`, src/frontend/loss_queue.cc) drops each arriving packet with probability p,
//! drawn from the link's own random stream, before it reaches the queue.
//!
//! **Rate schedules.** A [`RateSchedule`] is a list of steps (start time, rate); it offers the
//! same 1500-byte opportunities, evenly spaced: the k-th opportunity comes at the first
//! nanosecond by which the schedule has carried k x 12000 bits (the MTU-sized datagram of
//! Mahimahi's scripts/mm-rate-to-events), counting the bits of every step before it, so a
//! change of rate keeps the fraction of an opportunity already accumulated.
//!
//! **Measurements** (Mahimahi's scripts/mm-delay-graph and scripts/mm-throughput-graph).
//! Per-packet queueing delay is delivery time - arrival time at the link (the delay line
//! excluded). Signal delay is "the minimum time for a message created at time t to get to the
//! receiver", sampled every millisecond t from the first to the last arrival millisecond of a
//! delivered packet: for a millisecond in which delivered packets arrived, the least of
//! (delivery - t) over them; for a millisecond without, the next millisecond's value + 1 ms.
//! Mahimahi's times are whole milliseconds, where (delivery - t) is the logged per-packet
//! delay; with nanosecond arrivals the same formula measures from the start of the
//! millisecond. Both are kept in [`Histogram`]s (p95 by the nearest-rank rule).
//!
//! The component has the shape of [`crate::net::link::Link`]: `accept` a packet, be woken at
//! the next opportunity (one pending event at most, armed only while packets wait) and at the
//! head arrival of the delay line (one pending event at most), and hand arrived packets to a
//! `VecDeque`.

use std::collections::VecDeque;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::link::DelayLine;
use super::packet::{PacketRef, Packets};
use super::qdisc::{AnyQdisc, Fifo, FifoLimit, Qdisc, QdiscSpec, QdiscStats};
use crate::metrics::Histogram;
use crate::parse::{show_secs, Dur, Rate};
use crate::sim::Rng;
use crate::units::{BitsPerSec, Bytes, Nanos, NSEC_PER_MSEC, NSEC_PER_SEC};

/// IP bytes one opportunity carries: one MTU-sized datagram (Mahimahi's trace format: each
/// line is the millisecond of one 1500-byte delivery opportunity).
pub const OPPORTUNITY_IP_BYTES: u32 = 1500;
/// Bytes of `struct tun_pi` (Linux include/uapi/linux/if_tun.h: u16 flags, u16 protocol) in
/// front of every packet mm-link reads from its TUN device (opened without `IFF_NO_PI`,
/// mahimahi src/util/netdevice.cc).
pub const TUN_PI_BYTES: u32 = 4;
/// Credit of one opportunity: mm-link's `PACKET_SIZE` (1504, link_queue.hh), one 1500-byte
/// datagram with its TUN header.
pub const OPPORTUNITY_BYTES: u32 = OPPORTUNITY_IP_BYTES + TUN_PI_BYTES;
/// Bits per opportunity for rate schedules: 12000 (PACKET_LENGTH of mm-rate-to-events).
const OPPORTUNITY_BITS: u128 = OPPORTUNITY_IP_BYTES as u128 * 8;
/// Largest trace timestamp accepted: 2^32 - 1 ms (49.7 days), far beyond any recorded trace,
/// so that a timestamp in nanoseconds fits in 64 bits with room for many loops.
pub const MAX_TRACE_MS: u64 = u32::MAX as u64;
/// Signal delay is sampled once per millisecond (mm-delay-graph).
pub const SIGNAL_DELAY_BIN: Nanos = NSEC_PER_MSEC;

/// A Mahimahi trace: opportunity times in milliseconds, nondecreasing, looping with a period
/// equal to the last timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    ms: Vec<u64>,
}

impl Trace {
    /// A trace from its timestamps; errors name the offending index.
    pub fn from_ms(ms: Vec<u64>) -> Result<Trace, String> {
        Trace::checked(ms, "trace", |i| format!("trace[{i}]"))
    }

    /// Check what mm-link checks (nondecreasing, not empty, lasting at least 1 ms) and the
    /// bound on timestamps; `whole` names the trace and `place(i)` its i-th timestamp.
    fn checked(
        ms: Vec<u64>,
        whole: &str,
        place: impl Fn(usize) -> String,
    ) -> Result<Trace, String> {
        for (i, &v) in ms.iter().enumerate() {
            if v > MAX_TRACE_MS {
                return Err(format!(
                    "{}: {v} ms: expected at most {MAX_TRACE_MS} ms",
                    place(i)
                ));
            }
            if i > 0 && v < ms[i - 1] {
                return Err(format!(
                    "{}: {v} ms is earlier than the timestamp before it ({} ms): expected \
                     nondecreasing timestamps",
                    place(i),
                    ms[i - 1]
                ));
            }
        }
        match ms.last() {
            None => Err(format!(
                "{whole}: no timestamps: expected at least one opportunity time in milliseconds"
            )),
            Some(0) => Err(format!(
                "{whole}: every timestamp is 0 ms: expected a trace lasting at least 1 ms (its \
                 last timestamp is its period)"
            )),
            Some(_) => Ok(Trace { ms }),
        }
    }

    /// The timestamps, in milliseconds.
    pub fn ms(&self) -> &[u64] {
        &self.ms
    }

    /// The loop period: the last timestamp.
    pub fn period(&self) -> Nanos {
        self.ms[self.ms.len() - 1] * NSEC_PER_MSEC
    }

    /// Opportunities per period.
    pub fn opportunities_per_period(&self) -> u64 {
        self.ms.len() as u64
    }

    /// Mean capacity in IP bits per second: one 1500-byte datagram per opportunity.
    pub fn mean_rate(&self) -> f64 {
        let bits = self.ms.len() as f64 * (OPPORTUNITY_IP_BYTES * 8) as f64;
        bits * NSEC_PER_SEC as f64 / self.period() as f64
    }

    /// Time of opportunity `n` (from 0): loop n / len, entry n % len.
    fn time_of(&self, n: u64) -> Nanos {
        let len = self.opportunities_per_period();
        (n / len) * self.period() + self.ms[(n % len) as usize] * NSEC_PER_MSEC
    }

    /// Opportunities at times <= `t`: every opportunity of the loops before the one `t` falls
    /// in (loop L ends at (L + 1) periods, which is <= t), plus those of that loop up to `t`.
    fn count_through(&self, t: Nanos) -> u64 {
        let loops = t / self.period();
        let into = t - loops * self.period();
        let within = self.ms.partition_point(|&m| m * NSEC_PER_MSEC <= into);
        loops * self.opportunities_per_period() + within as u64
    }
}

/// Largest trace file read, bytes: 64 MiB, some 9 million opportunities (the longest trace
/// Mahimahi ships, a 20-minute drive, is 3.4 MB). An assumption bounding memory, not a
/// format limit.
pub const MAX_TRACE_FILE_BYTES: u64 = 64 << 20;

/// A line of a trace file for an error: quoted when it could be a mistyped number (up to 20
/// characters of digits, signs, points and letters), else only its length, so that an error
/// never echoes the contents of some other file named as a trace.
fn shown_line(v: &str) -> String {
    let plausible = v.len() <= 20
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    if plausible {
        format!("{v:?}")
    } else {
        format!("a line of {} characters", v.chars().count())
    }
}

/// Reading Mahimahi trace files.
#[derive(Debug)]
pub struct TraceFile;

impl TraceFile {
    /// Load a trace file; errors name the file, the line and the value. Only a regular file
    /// of at most [`MAX_TRACE_FILE_BYTES`] is read: a device (`/dev/zero`) would be read until
    /// memory runs out, a FIFO would block the run for good.
    pub fn load(path: impl AsRef<Path>) -> Result<Trace, String> {
        use std::io::Read;
        let path = path.as_ref();
        let cannot = |e: &dyn std::fmt::Display| {
            format!("{}: cannot read the trace file: {e}", path.display())
        };
        let meta = std::fs::metadata(path).map_err(|e| cannot(&e))?;
        if !meta.is_file() {
            return Err(cannot(
                &"not a regular file (expected a Mahimahi trace file)",
            ));
        }
        if meta.len() > MAX_TRACE_FILE_BYTES {
            return Err(cannot(&format!(
                "{} bytes, expected at most {MAX_TRACE_FILE_BYTES} (a Mahimahi trace of hours \
                 is a few MB)",
                meta.len()
            )));
        }
        // Opened without blocking, in case the path was swapped for a FIFO since the check;
        // read at most one byte past the bound, in case the file grew.
        let mut open = std::fs::OpenOptions::new();
        open.read(true);
        // O_NONBLOCK: 0o4000 on Linux (include/uapi/asm-generic/fcntl.h).
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, 0o4000);
        let file = open.open(path).map_err(|e| cannot(&e))?;
        if !file.metadata().map_err(|e| cannot(&e))?.is_file() {
            return Err(cannot(
                &"not a regular file (expected a Mahimahi trace file)",
            ));
        }
        let mut bytes = Vec::new();
        file.take(MAX_TRACE_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| cannot(&e))?;
        if bytes.len() as u64 > MAX_TRACE_FILE_BYTES {
            return Err(cannot(&format!(
                "more than {MAX_TRACE_FILE_BYTES} bytes, expected at most that"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|_| cannot(&"not UTF-8 text"))?;
        TraceFile::parse(&path.display().to_string(), &text)
    }

    /// Parse the text of a trace file called `name`: one whole number of milliseconds per
    /// line (surrounding whitespace allowed, empty lines not, as mm-link).
    pub fn parse(name: &str, text: &str) -> Result<Trace, String> {
        let ms = text
            .lines()
            .enumerate()
            .map(|(i, line)| {
                let v = line.trim();
                v.parse::<u64>().map_err(|_| {
                    format!(
                        "{name}:{}: {}: expected a whole number of milliseconds",
                        i + 1,
                        shown_line(v)
                    )
                })
            })
            .collect::<Result<Vec<u64>, String>>()?;
        Trace::checked(ms, name, |i| format!("{name}:{}", i + 1))
    }
}

/// A piecewise-constant rate: step i runs at `rate` from its start until the next step's
/// start; the last step lasts forever.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateSchedule {
    steps: Vec<(Nanos, BitsPerSec)>,
    /// Capacity carried before each step starts, in bit-nanoseconds per second (rate x ns):
    /// exact integers, 10^9 per bit.
    carried: Vec<u128>,
}

impl RateSchedule {
    /// A schedule from (start, rate) steps: the first starts at 0, starts increase, and the
    /// last rate is positive (a zero rate elsewhere is an outage). Errors name the step.
    pub fn new(steps: Vec<(Nanos, BitsPerSec)>) -> Result<RateSchedule, String> {
        let Some(&(first, _)) = steps.first() else {
            return Err("schedule = []: expected at least one step".to_string());
        };
        if first != 0 {
            return Err(format!(
                "schedule[0].at = {:?}: expected \"0s\" (the first step starts the link)",
                show_secs(first)
            ));
        }
        for (i, w) in steps.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(format!(
                    "schedule[{}].at = {:?}: expected later than schedule[{i}].at = {:?}",
                    i + 1,
                    show_secs(w[1].0),
                    show_secs(w[0].0)
                ));
            }
        }
        let last = steps.len() - 1;
        if steps[last].1 == 0 {
            return Err(format!(
                "schedule[{last}].rate = \"0bit\": expected a positive rate (the last step lasts \
                 forever)"
            ));
        }
        let mut carried = Vec::with_capacity(steps.len());
        let mut total = 0u128;
        for (i, &(start, rate)) in steps.iter().enumerate() {
            carried.push(total);
            if let Some(&(end, _)) = steps.get(i + 1) {
                total = total.saturating_add(rate as u128 * (end - start) as u128);
            }
        }
        Ok(RateSchedule { steps, carried })
    }

    /// A single constant rate.
    pub fn constant(rate: BitsPerSec) -> Result<RateSchedule, String> {
        RateSchedule::new(vec![(0, rate)])
    }

    pub fn steps(&self) -> &[(Nanos, BitsPerSec)] {
        &self.steps
    }

    /// Time of opportunity `n` (from 0): the first nanosecond by which (n + 1) x 12000 bits
    /// have been carried. It falls in the first step whose end has carried that much (never a
    /// zero-rate step: that step carried nothing beyond the one before it).
    fn time_of(&self, n: u64) -> Nanos {
        let need = (n as u128 + 1) * OPPORTUNITY_BITS * NSEC_PER_SEC as u128;
        let i = self.carried[1..].partition_point(|&c| c < need);
        let (start, rate) = self.steps[i];
        start + (need - self.carried[i]).div_ceil(rate as u128) as Nanos
    }

    /// Opportunities at times <= `t`: whole 12000-bit units carried by `t`.
    fn count_through(&self, t: Nanos) -> u64 {
        let i = self.steps.partition_point(|&(s, _)| s <= t) - 1;
        let (start, rate) = self.steps[i];
        let carried = self.carried[i].saturating_add(rate as u128 * (t - start) as u128);
        (carried / (OPPORTUNITY_BITS * NSEC_PER_SEC as u128)) as u64
    }
}

/// Where a trace link's delivery opportunities come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opportunities {
    Trace(Trace),
    Schedule(RateSchedule),
}

impl Opportunities {
    /// Time of opportunity `n`, counting from 0; nondecreasing in `n`.
    pub fn time_of(&self, n: u64) -> Nanos {
        match self {
            Opportunities::Trace(t) => t.time_of(n),
            Opportunities::Schedule(s) => s.time_of(n),
        }
    }

    /// Number of opportunities at times <= `t`, so `time_of(count_through(t)) > t`.
    pub fn count_through(&self, t: Nanos) -> u64 {
        match self {
            Opportunities::Trace(tr) => tr.count_through(t),
            Opportunities::Schedule(s) => s.count_through(t),
        }
    }

    /// IP bytes the opportunities in (from, to] can carry (capacity for utilization, or a BDP).
    pub fn capacity_bytes(&self, from: Nanos, to: Nanos) -> Bytes {
        let n = self
            .count_through(to)
            .saturating_sub(self.count_through(from));
        n * OPPORTUNITY_IP_BYTES as Bytes
    }
}

/// What a trace link asks its owner to schedule.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TraceWake {
    /// Call [`TraceLink::opportunity`] then.
    pub opportunity: Option<Nanos>,
    /// Call [`TraceLink::arrive`] then: the head of the delay line is due.
    pub arrival: Option<Nanos>,
}

/// Mahimahi's signal delay, accumulated online. Deliveries leave a FIFO queue in arrival order,
/// so the arrival millisecond of delivered packets never decreases: a millisecond's value is
/// final once a later one appears, and the empty milliseconds before it follow from it.
#[derive(Debug, Clone, Default)]
struct SignalDelay {
    /// Final values, one per millisecond.
    closed: Histogram,
    /// The last millisecond recorded in `closed`.
    last_closed: Option<u64>,
    /// The latest arrival millisecond of a delivered packet, and the least delay measured from
    /// its start.
    open: Option<(u64, Nanos)>,
}

impl SignalDelay {
    fn delivered(&mut self, arrival: Nanos, delivery: Nanos, record_from: Nanos) {
        let bin = arrival / SIGNAL_DELAY_BIN;
        match self.open {
            Some((open, least)) if bin <= open => {
                let d = delivery.saturating_sub(open * SIGNAL_DELAY_BIN);
                self.open = Some((open, least.min(d)));
            }
            _ => {
                record_bins(self.open, self.last_closed, &mut self.closed, record_from);
                self.last_closed = self.open.map(|(b, _)| b);
                self.open = Some((bin, delivery - bin * SIGNAL_DELAY_BIN));
            }
        }
    }

    /// Every millisecond so far, the open one included.
    fn histogram(&self, record_from: Nanos) -> Histogram {
        let mut h = self.closed.clone();
        record_bins(self.open, self.last_closed, &mut h, record_from);
        h
    }
}

/// Record into `h` the millisecond `open` (bin, least delay) and the empty ones between it and
/// `last_closed`, each 1 ms more than the one after it; only those starting at or after
/// `record_from`.
fn record_bins(
    open: Option<(u64, Nanos)>,
    last_closed: Option<u64>,
    h: &mut Histogram,
    record_from: Nanos,
) {
    let Some((open, least)) = open else {
        return;
    };
    let first = last_closed.map_or(open, |b| b + 1);
    for bin in first.max(record_from.div_ceil(SIGNAL_DELAY_BIN))..=open {
        h.record(least + (open - bin) * SIGNAL_DELAY_BIN);
    }
}

/// One direction of a trace-driven link: loss -> queue -> opportunities -> delay line.
pub struct TraceLink {
    pub name: String,
    opportunities: Opportunities,
    /// Index of the next opportunity not yet used or skipped, and its time.
    next: u64,
    next_at: Nanos,
    qdisc: AnyQdisc,
    /// The packet being sent across opportunities, its TUN bytes still to send and its size.
    in_transit: Option<(PacketRef, u32, u32)>,
    /// An `opportunity` wake-up is scheduled.
    armed: bool,
    pub delay: Nanos,
    /// Probability that an arriving packet is lost (mm-loss).
    pub loss: f64,
    rng: Rng,
    wire: DelayLine,
    /// Per-packet queueing delay (arrival to delivery), for packets delivered after the
    /// warm-up.
    pub queueing_delay: Histogram,
    signal: SignalDelay,
    pub record_from: Nanos,
    pub delivered_packets: u64,
    pub delivered_bytes: Bytes,
    /// Packets dropped by the i.i.d. loss.
    pub lost: u64,
    pub max_backlog: usize,
}

impl TraceLink {
    /// A link fed by `opportunities`, with `qdisc` in front (`None`: infinite), a one-way
    /// `delay` after it, and i.i.d. `loss` drawn from `rng`.
    pub fn new(
        name: impl Into<String>,
        opportunities: Opportunities,
        qdisc: Option<AnyQdisc>,
        delay: Nanos,
        loss: f64,
        rng: Rng,
    ) -> Self {
        let next_at = opportunities.time_of(0);
        TraceLink {
            name: name.into(),
            opportunities,
            next: 0,
            next_at,
            qdisc: qdisc.unwrap_or_else(infinite_queue),
            in_transit: None,
            armed: false,
            delay,
            loss,
            rng,
            wire: DelayLine::default(),
            queueing_delay: Histogram::default(),
            signal: SignalDelay::default(),
            record_from: 0,
            delivered_packets: 0,
            delivered_bytes: 0,
            lost: 0,
            max_backlog: 0,
        }
    }

    /// A packet arrives at the link.
    pub fn accept(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) -> TraceWake {
        if self.rng.chance(self.loss) {
            self.lost += 1;
            pkts.drop_packet(pkt);
            return TraceWake::default();
        }
        let mut wake = TraceWake::default();
        self.serve(now, pkts, &mut wake);
        self.qdisc.enqueue(pkt, pkts, now);
        self.max_backlog = self.max_backlog.max(self.backlog_packets());
        self.arm(&mut wake);
        wake
    }

    /// The opportunity wake-up: use every opportunity due by `now`.
    pub fn opportunity(&mut self, now: Nanos, pkts: &mut Packets) -> TraceWake {
        self.armed = false;
        let mut wake = TraceWake::default();
        self.serve(now, pkts, &mut wake);
        self.arm(&mut wake);
        wake
    }

    /// The head of the delay line is due: move every packet due by `now` to `out`, and return
    /// when the next one is due.
    pub fn arrive(&mut self, now: Nanos, out: &mut VecDeque<PacketRef>) -> Option<Nanos> {
        self.wire.arrive(now, out)
    }

    fn has_work(&self) -> bool {
        self.in_transit.is_some() || !self.qdisc.is_empty()
    }

    /// Ask for a wake-up at the next opportunity if packets wait and none is pending.
    fn arm(&mut self, wake: &mut TraceWake) {
        if !self.armed && self.has_work() {
            self.armed = true;
            wake.opportunity = Some(self.next_at);
        }
    }

    /// Use the opportunities at times <= `now`; once nothing waits, the rest are skipped.
    fn serve(&mut self, now: Nanos, pkts: &mut Packets, wake: &mut TraceWake) {
        while self.next_at <= now {
            if !self.has_work() {
                self.next = self.next.max(self.opportunities.count_through(now));
                self.next_at = self.opportunities.time_of(self.next);
                return;
            }
            let t = self.next_at;
            self.next += 1;
            self.next_at = self.opportunities.time_of(self.next);
            self.send_at(t, pkts, wake);
        }
    }

    /// Spend one opportunity's credit at `t` on the packet in transit and then on queued
    /// packets; credit left when the queue is empty is lost.
    fn send_at(&mut self, t: Nanos, pkts: &mut Packets, wake: &mut TraceWake) {
        let mut credit = OPPORTUNITY_BYTES;
        while credit > 0 {
            let (pkt, left, size) = match self.in_transit.take() {
                Some(p) => p,
                None => match self.qdisc.dequeue(pkts, t) {
                    Some(p) => {
                        let size = pkts[p].size;
                        (p, size.saturating_add(TUN_PI_BYTES), size)
                    }
                    None => return,
                },
            };
            let sent = credit.min(left);
            credit -= sent;
            if sent == left {
                self.deliver(pkt, pkts, t, wake);
            } else {
                self.in_transit = Some((pkt, left - sent, size));
            }
        }
    }

    fn deliver(&mut self, pkt: PacketRef, pkts: &mut Packets, t: Nanos, wake: &mut TraceWake) {
        let p = &pkts[pkt];
        self.delivered_packets += 1;
        self.delivered_bytes += p.bytes();
        if t >= self.record_from {
            self.queueing_delay.record(t - p.enqueued);
        }
        self.signal.delivered(p.enqueued, t, self.record_from);
        if let Some(at) = self.wire.push(t + self.delay, pkt, pkts) {
            wake.arrival = Some(at);
        }
    }

    /// Signal delay, one value per millisecond from the warm-up on (see the module doc).
    pub fn signal_delay(&self) -> Histogram {
        self.signal.histogram(self.record_from)
    }

    /// IP bytes the link could carry in (from, to].
    pub fn capacity_bytes(&self, from: Nanos, to: Nanos) -> Bytes {
        self.opportunities.capacity_bytes(from, to)
    }

    /// Packets held and not yet delivered: queued, and the one in transit.
    pub fn backlog_packets(&self) -> usize {
        self.qdisc.len() + self.in_transit.is_some() as usize
    }

    /// IP bytes held and not yet delivered (the packet in transit counted whole).
    pub fn backlog_bytes(&self) -> Bytes {
        self.qdisc.bytes() + self.in_transit.map_or(0, |(_, _, size)| size as Bytes)
    }

    pub fn qdisc_stats(&self) -> QdiscStats {
        self.qdisc.stats()
    }
}

/// Mahimahi's `infinite` queue: a FIFO whose limit (2^32 - 1 packets) is never reached.
fn infinite_queue() -> AnyQdisc {
    Fifo::new(FifoLimit::Packets(u32::MAX), false).into()
}

/// One step of a rate schedule, as a scenario writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    /// When the step starts (the first at "0s").
    pub at: Dur,
    /// The link's rate from `at` on.
    pub rate: Rate,
}

/// A trace-driven link direction as a scenario writes it:
///
/// ```toml
/// trace = "Verizon-LTE-short.down"  # a Mahimahi trace file; or: schedule = [...]
/// queue = { kind = "pfifo", limit = "100p", head_drop = true }
/// delay = "50ms"
/// loss = 0.01
/// ```
///
/// or, with a rate schedule instead of a trace file:
///
/// ```toml
/// schedule = [{ at = "0s", rate = "12mbit" }, { at = "3s", rate = "24mbit" }]
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceLinkSpec {
    /// Path of a Mahimahi trace file. Exactly one of `trace` and `schedule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Rate steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Vec<RateStep>>,
    /// The queue; default none, Mahimahi's infinite queue. Droptail is pfifo / bfifo, drophead
    /// the same with `head_drop = true`; codel, pie and ecn_step are accepted too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QdiscSpec>,
    /// One-way delay after the link (mm-delay); default 0.
    #[serde(default = "no_delay")]
    pub delay: Dur,
    /// Probability that a packet is lost (mm-loss), in [0, 1); default 0.
    #[serde(default)]
    #[schemars(range(min = 0), extend("exclusiveMaximum" = 1))]
    pub loss: f64,
}

fn no_delay() -> Dur {
    Dur(0)
}

/// Where a spec's opportunities come from.
enum Source<'a> {
    File(&'a str),
    Schedule(RateSchedule),
}

impl TraceLinkSpec {
    /// Check everything that needs no file: one source, the schedule's steps, the queue's
    /// kind and parameters, the loss probability.
    pub fn validate(&self) -> Result<(), String> {
        self.source()?;
        if let Some(q) = &self.queue {
            if matches!(q, QdiscSpec::PfifoFast { .. } | QdiscSpec::FqCodel { .. }) {
                return Err(format!(
                    "queue.kind = {:?}: expected a FIFO queue as Mahimahi's (pfifo or bfifo for \
                     droptail, the same with head_drop for drophead, codel, pie or ecn_step)",
                    q.name()
                ));
            }
            q.validate().map_err(|e| format!("queue.{e}"))?;
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err(format!(
                "loss = {}: expected a probability in [0, 1)",
                self.loss
            ));
        }
        Ok(())
    }

    /// The trace file's path or the checked schedule: exactly one of them.
    fn source(&self) -> Result<Source<'_>, String> {
        match (&self.trace, &self.schedule) {
            (None, None) => Err("trace link: expected a trace (a Mahimahi trace file) or a \
                                 schedule (rate steps), got neither"
                .to_string()),
            (Some(path), Some(_)) => Err(format!(
                "trace = {path:?} and schedule: expected only one of them"
            )),
            (Some(path), None) => Ok(Source::File(path)),
            (None, Some(steps)) => {
                RateSchedule::new(steps.iter().map(|s| (s.at.0, s.rate.0)).collect())
                    .map(Source::Schedule)
            }
        }
    }

    /// Validate, then load the trace file or build the schedule.
    pub fn opportunities(&self) -> Result<Opportunities, String> {
        self.validate()?;
        match self.source()? {
            Source::File(path) => TraceFile::load(path).map(Opportunities::Trace),
            Source::Schedule(s) => Ok(Opportunities::Schedule(s)),
        }
    }

    /// Build the link from `opportunities` (from [`Self::opportunities`], which the owner may
    /// first use to size the BDP): `bdp_bytes` and `mtu` resolve the queue's limit,
    /// `queue_rng` is the queue's random stream (PIE), `loss_rng` the loss process's.
    pub fn build(
        &self,
        name: impl Into<String>,
        opportunities: Opportunities,
        bdp_bytes: Bytes,
        mtu: u32,
        queue_rng: Rng,
        loss_rng: Rng,
    ) -> Result<TraceLink, String> {
        self.validate()?;
        let qdisc = match &self.queue {
            Some(q) => Some(
                q.build(bdp_bytes, mtu, queue_rng)
                    .map_err(|e| format!("queue.{e}"))?,
            ),
            None => None,
        };
        Ok(TraceLink::new(
            name,
            opportunities,
            qdisc,
            self.delay.0,
            self.loss,
            loss_rng,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::packet::Packet;
    use super::super::qdisc::testutil::pkt;
    use super::*;
    use crate::sim::EventQueue;
    use proptest::collection::vec as any_vec;
    use proptest::test_runner::TestCaseError;
    use proptest::{prop_assert, proptest};

    const MS: Nanos = NSEC_PER_MSEC;

    #[derive(Debug, Clone, Copy)]
    enum Ev {
        Send(Packet),
        Opportunity,
        Arrival,
    }

    /// Drives one link with the world's discipline: every wake-up it asks for is scheduled,
    /// and at most one opportunity and one arrival event may be pending at any time.
    struct Run {
        link: TraceLink,
        pkts: Packets,
        q: EventQueue<Ev>,
        /// (time at the far end, seq) of every packet out of the delay line.
        out: Vec<(Nanos, u64)>,
        dropped: Vec<u64>,
        pending: [u32; 2],
        opportunity_events: u64,
    }

    impl Run {
        fn new(link: TraceLink) -> Run {
            Run {
                link,
                pkts: Packets::new(),
                q: EventQueue::default(),
                out: Vec::new(),
                dropped: Vec::new(),
                pending: [0, 0],
                opportunity_events: 0,
            }
        }

        fn send(&mut self, t: Nanos, size: u32, seq: u64) {
            self.q.schedule(t, Ev::Send(pkt(0, size, seq, t)));
        }

        fn wake(&mut self, w: TraceWake) {
            if let Some(t) = w.opportunity {
                assert_eq!(self.pending[0], 0, "a second opportunity event");
                self.pending[0] += 1;
                self.q.schedule(t, Ev::Opportunity);
            }
            if let Some(t) = w.arrival {
                assert_eq!(self.pending[1], 0, "a second arrival event");
                self.pending[1] += 1;
                self.q.schedule(t, Ev::Arrival);
            }
        }

        fn run(&mut self, until: Nanos) -> &mut Run {
            while let Some(s) = self.q.pop_until(until) {
                let now = s.at;
                match s.event {
                    Ev::Send(p) => {
                        let p = self.pkts.insert(p);
                        let w = self.link.accept(p, &mut self.pkts, now);
                        self.wake(w);
                    }
                    Ev::Opportunity => {
                        self.pending[0] -= 1;
                        self.opportunity_events += 1;
                        let w = self.link.opportunity(now, &mut self.pkts);
                        self.wake(w);
                    }
                    Ev::Arrival => {
                        self.pending[1] -= 1;
                        let mut out = VecDeque::new();
                        if let Some(t) = self.link.arrive(now, &mut out) {
                            self.wake(TraceWake {
                                opportunity: None,
                                arrival: Some(t),
                            });
                        }
                        for r in out {
                            self.out.push((now, self.pkts.remove(r).seq));
                        }
                    }
                }
                let mut dropped = Vec::new();
                self.pkts.remove_dropped(&mut dropped);
                self.dropped.extend(dropped.iter().map(|p| p.seq));
            }
            self
        }

        /// Delivery times in ms (as f64, for sub-millisecond schedules) in order.
        fn times_ms(&self) -> Vec<f64> {
            self.out
                .iter()
                .map(|&(t, _)| t as f64 / MS as f64)
                .collect()
        }

        fn seqs(&self) -> Vec<u64> {
            self.out.iter().map(|&(_, s)| s).collect()
        }
    }

    fn trace(ms: &[u64]) -> Opportunities {
        Opportunities::Trace(Trace::from_ms(ms.to_vec()).unwrap())
    }

    fn schedule(steps: &[(Nanos, BitsPerSec)]) -> Opportunities {
        Opportunities::Schedule(RateSchedule::new(steps.to_vec()).unwrap())
    }

    fn link(opp: Opportunities) -> TraceLink {
        TraceLink::new("l", opp, None, 0, 0.0, Rng::new(1, 1))
    }

    fn with_queue(opp: Opportunities, spec: &str) -> TraceLink {
        let spec: QdiscSpec = serde_json::from_str(spec).unwrap();
        let q = spec.build(0, 1500, Rng::new(1, 2)).unwrap();
        TraceLink::new("l", opp, Some(q), 0, 0.0, Rng::new(1, 1))
    }

    /// `n` packets of `size` bytes, seq 0.., all sent at `t`.
    fn burst(r: &mut Run, t: Nanos, n: u64, size: u32) {
        for s in 0..n {
            r.send(t, size, s);
        }
    }

    #[test]
    fn trace_file_errors_name_file_line_and_value() {
        let cases = [
            (
                "1\n2\nx\n",
                r#"t.down:3: "x": expected a whole number of milliseconds"#,
            ),
            (
                "1.5\n",
                r#"t.down:1: "1.5": expected a whole number of milliseconds"#,
            ),
            (
                "-3\n",
                r#"t.down:1: "-3": expected a whole number of milliseconds"#,
            ),
            (
                "1\n\n2\n",
                r#"t.down:2: "": expected a whole number of milliseconds"#,
            ),
            (
                "5\n3\n",
                "t.down:2: 3 ms is earlier than the timestamp before it (5 ms): expected \
                 nondecreasing timestamps",
            ),
            (
                "",
                "t.down: no timestamps: expected at least one opportunity time in milliseconds",
            ),
            (
                "0\n0\n",
                "t.down: every timestamp is 0 ms: expected a trace lasting at least 1 ms (its \
                 last timestamp is its period)",
            ),
            (
                "1\n4294967296\n",
                "t.down:2: 4294967296 ms: expected at most 4294967295 ms",
            ),
        ];
        for (text, msg) in cases {
            assert_eq!(
                TraceFile::parse("t.down", text).unwrap_err(),
                msg,
                "{text:?}"
            );
        }
        // Windows line ends and a missing final newline are fine.
        let t = TraceFile::parse("t.down", "0\r\n0\r\n7").unwrap();
        assert_eq!(t.ms(), &[0, 0, 7]);
        assert_eq!(
            Trace::from_ms(vec![3, 1]).unwrap_err(),
            "trace[1]: 1 ms is earlier than the timestamp before it (3 ms): expected \
             nondecreasing timestamps"
        );
        assert_eq!(
            Trace::from_ms(vec![]).unwrap_err(),
            "trace: no timestamps: expected at least one opportunity time in milliseconds"
        );
    }

    #[test]
    fn trace_files_load_from_disk() {
        let dir = std::env::temp_dir().join(format!("wificc-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tiny.down");
        std::fs::write(&path, "1\n3\n3\n5\n").unwrap();
        let t = TraceFile::load(&path).unwrap();
        assert_eq!(t.ms(), &[1, 3, 3, 5]);
        std::fs::write(&path, "1\n3\n2\n").unwrap();
        assert_eq!(
            TraceFile::load(&path).unwrap_err(),
            format!(
                "{}:3: 2 ms is earlier than the timestamp before it (3 ms): expected \
                 nondecreasing timestamps",
                path.display()
            )
        );
        // A line that is no number is quoted only when short; other files are not echoed.
        std::fs::write(&path, "1\nroot:x:0:0:root:/root:/bin/bash\n").unwrap();
        assert_eq!(
            TraceFile::load(&path).unwrap_err(),
            format!(
                "{}:2: a line of 31 characters: expected a whole number of milliseconds",
                path.display()
            )
        );
        // Only regular files: a directory, a device, a FIFO are refused before reading.
        for other in [dir.clone(), "/dev/zero".into()] {
            assert_eq!(
                TraceFile::load(&other).unwrap_err(),
                format!(
                    "{}: cannot read the trace file: not a regular file (expected a Mahimahi \
                     trace file)",
                    other.display()
                )
            );
        }
        let fifo = dir.join("fifo.down");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(TraceFile::load(&fifo)
                .unwrap_err()
                .ends_with("not a regular file (expected a Mahimahi trace file)"));
        }
        // Larger than the bound: refused from its size, unread.
        let big = dir.join("big.down");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_TRACE_FILE_BYTES + 1).unwrap();
        assert_eq!(
            TraceFile::load(&big).unwrap_err(),
            format!(
                "{}: cannot read the trace file: 67108865 bytes, expected at most 67108864 (a \
                 Mahimahi trace of hours is a few MB)",
                big.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let e = TraceFile::load(&path).unwrap_err();
        assert!(
            e.starts_with(&format!("{}: cannot read the trace file: ", path.display())),
            "{e}"
        );
    }

    #[test]
    fn trace_opportunities_loop_with_the_period() {
        // [1, 3, 3, 5]: period 5 ms, 4 opportunities per loop; loop L adds 5L ms.
        let o = trace(&[1, 3, 3, 5]);
        let times: Vec<Nanos> = (0..9).map(|n| o.time_of(n) / MS).collect();
        assert_eq!(times, vec![1, 3, 3, 5, 6, 8, 8, 10, 11]);
        // At or before: 0 ms none; 2.999 ms one; 3 ms three; 10 ms eight (1 3 3 5 6 8 8 10).
        assert_eq!(o.count_through(0), 0);
        assert_eq!(o.count_through(3 * MS - 1), 1);
        assert_eq!(o.count_through(3 * MS), 3);
        assert_eq!(o.count_through(10 * MS), 8);
        // 8 opportunities of 1500 B in (0, 10 ms]; mean rate 4 x 12000 bit / 5 ms = 9.6 Mbit/s.
        assert_eq!(o.capacity_bytes(0, 10 * MS), 12_000);
        assert_eq!(o.capacity_bytes(3 * MS, 5 * MS), 1_500);
        let Opportunities::Trace(t) = &o else {
            unreachable!()
        };
        assert_eq!(t.mean_rate(), 9.6e6);
        // A trace starting at 0: the end of one loop and the start of the next coincide.
        let o = trace(&[0, 2]);
        let times: Vec<Nanos> = (0..6).map(|n| o.time_of(n) / MS).collect();
        assert_eq!(times, vec![0, 2, 2, 4, 4, 6]);
        assert_eq!(o.count_through(2 * MS), 3);
    }

    #[test]
    fn full_packets_take_one_opportunity_each_and_the_trace_loops() {
        // 6 x 1500 B at 0 on [1, 3, 3, 5]: one per opportunity, at 1 3 3 5 then 6 8 (loop 2).
        let mut r = Run::new(link(trace(&[1, 3, 3, 5])));
        burst(&mut r, 0, 6, 1500);
        r.run(100 * MS);
        assert_eq!(r.times_ms(), vec![1.0, 3.0, 3.0, 5.0, 6.0, 8.0]);
        assert_eq!(r.seqs(), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(r.link.delivered_packets, 6);
        assert_eq!(r.link.delivered_bytes, 9000);
        assert_eq!(r.link.queueing_delay.max(), Some(8 * MS));
        assert_eq!(r.link.backlog_packets(), 0);
    }

    #[test]
    fn opportunities_at_the_arrival_instant_are_used_before_it() {
        // [2, 4]: opportunities at 2, 4, 6 ms. A packet arriving exactly at 2 ms misses the
        // 2 ms opportunity (mm-link rationalizes before enqueueing); 1 ns earlier it gets it.
        for (sent, delivered) in [(2 * MS, 4.0), (2 * MS - 1, 2.0), (2 * MS + 1, 4.0)] {
            let mut r = Run::new(link(trace(&[2, 4])));
            r.send(sent, 1500, 0);
            r.run(100 * MS);
            assert_eq!(r.times_ms(), vec![delivered], "sent at {sent} ns");
        }
        // Behind a backlog, the same holds: two packets at 0 and one at exactly 2 ms on
        // [2, 2, 4]: the first two use both 2 ms opportunities; the third leaves at 4 ms.
        let mut r = Run::new(link(trace(&[2, 2, 4])));
        burst(&mut r, 0, 2, 1000);
        r.send(2 * MS, 100, 2);
        r.run(100 * MS);
        assert_eq!(r.times_ms(), vec![2.0, 2.0, 4.0]);
    }

    #[test]
    fn bytes_carry_across_opportunities_as_mm_link_counts_them() {
        // 8 x 1000 B (1004 with the TUN header) at 0, one 1504 B opportunity per ms:
        //   1 ms: A 1004 -> A out, 500 left: B sends 500 (504 to go)
        //   2 ms: B 504 -> B out, 1000 left: C sends 1000 (4 to go)
        //   3 ms: C 4 -> C out, 1500 left: D 1004 out, 496 left: E sends 496 (508 to go)
        //   4 ms: E 508 -> E out, 996 left: F sends 996 (8 to go)
        //   5 ms: F 8 -> F out, 1496 left: G out, 492 left: H sends 492 (512 to go)
        //   6 ms: H 512 -> H out; the 992 B left are lost.
        let mut r = Run::new(link(trace(&[1])));
        burst(&mut r, 0, 8, 1000);
        r.run(100 * MS);
        assert_eq!(r.times_ms(), vec![1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0]);
        // 60 ACK-sized packets (52 B, 56 with the header) at 0:
        //   1 ms: 26 x 56 = 1456, 48 left: packet 26 sends 48 (8 to go)
        //   2 ms: packet 26 out, 1496 left: 26 more (27..52), 40 left: 53 sends 40 (16 to go)
        //   3 ms: 53 out, 1488 left: 54..59 (336 B) out.
        let mut r = Run::new(link(trace(&[1])));
        burst(&mut r, 0, 60, 52);
        r.run(100 * MS);
        let at = |ms: f64| {
            r.out
                .iter()
                .filter(|&&(t, _)| t == (ms * 1e6) as Nanos)
                .count()
        };
        assert_eq!((at(1.0), at(2.0), at(3.0)), (26, 27, 7));
        assert_eq!(r.seqs(), (0..60).collect::<Vec<u64>>());
    }

    #[test]
    fn credit_left_when_the_queue_empties_is_lost() {
        // 100 B at 0 leaves at 1 ms with 1400 B of credit unused; 100 B arriving at 1.5 ms
        // waits for the 2 ms opportunity.
        let mut r = Run::new(link(trace(&[1])));
        r.send(0, 100, 0);
        r.send(1_500_000, 100, 1);
        r.run(100 * MS);
        assert_eq!(r.times_ms(), vec![1.0, 2.0]);
    }

    #[test]
    fn idle_links_skip_opportunities_without_events() {
        // One packet at 0 and one at 1000.5 ms on a 1-per-ms trace: two opportunity events in
        // all, not one per millisecond of idleness.
        let mut r = Run::new(link(trace(&[1])));
        r.send(0, 1500, 0);
        r.send(1_000_500_000, 1500, 1);
        r.run(2_000 * MS);
        assert_eq!(r.times_ms(), vec![1.0, 1001.0]);
        assert_eq!(r.opportunity_events, 2);
    }

    #[test]
    fn droptail_and_drophead_by_packets_and_bytes() {
        // 5 x 1500 B at 0, limit 2 packets: tail drop keeps 0 1, head drop keeps 3 4.
        let mut r = Run::new(with_queue(
            trace(&[1]),
            r#"{"kind": "pfifo", "limit": "2p"}"#,
        ));
        burst(&mut r, 0, 5, 1500);
        r.run(100 * MS);
        assert_eq!((r.seqs(), r.dropped.clone()), (vec![0, 1], vec![2, 3, 4]));
        let spec = r#"{"kind": "pfifo", "limit": "2p", "head_drop": true}"#;
        let mut r = Run::new(with_queue(trace(&[1]), spec));
        burst(&mut r, 0, 5, 1500);
        r.run(100 * MS);
        assert_eq!((r.seqs(), r.dropped.clone()), (vec![3, 4], vec![0, 1, 2]));
        // 5 x 1000 B at 0, limit 3000 B: three fit; they leave at 1, 2, 3 ms (byte carry).
        let mut r = Run::new(with_queue(
            trace(&[1]),
            r#"{"kind": "bfifo", "limit": "3000b"}"#,
        ));
        burst(&mut r, 0, 5, 1000);
        r.run(100 * MS);
        assert_eq!((r.seqs(), r.dropped.clone()), (vec![0, 1, 2], vec![3, 4]));
        assert_eq!(r.times_ms(), vec![1.0, 2.0, 3.0]);
        let spec = r#"{"kind": "bfifo", "limit": "3000b", "head_drop": true}"#;
        let mut r = Run::new(with_queue(trace(&[1]), spec));
        burst(&mut r, 0, 5, 1000);
        r.run(100 * MS);
        assert_eq!((r.seqs(), r.dropped.clone()), (vec![2, 3, 4], vec![0, 1]));
        assert_eq!(r.link.qdisc_stats().dropped, 2);
    }

    #[test]
    fn the_packet_in_transit_is_outside_the_queue_limit() {
        // Limit 2 packets, 1000 B each. A, B at 0; at 1 ms A leaves and B is half sent (out of
        // the queue); C, D at 1.5 ms both fit. B out at 2 ms (C 4 B to go), C and D at 3 ms.
        let mut r = Run::new(with_queue(
            trace(&[1]),
            r#"{"kind": "pfifo", "limit": "2p"}"#,
        ));
        burst(&mut r, 0, 2, 1000);
        r.send(1_500_000, 1000, 2);
        r.send(1_500_000, 1000, 3);
        r.run(1_600_000);
        assert_eq!(
            (r.link.backlog_packets(), r.link.backlog_bytes()),
            (3, 3000)
        );
        r.run(100 * MS);
        assert!(r.dropped.is_empty());
        assert_eq!(r.times_ms(), vec![1.0, 2.0, 3.0, 3.0]);
        assert_eq!(r.link.max_backlog, 3);
    }

    #[test]
    fn codel_sees_the_opportunity_time_as_dequeue_time() {
        // 12 Mbit/s = one 1500 B packet per ms; 300 packets at 0: packet i is dequeued at
        // (i + 1) ms with sojourn (i + 1) ms. At 5 ms the sojourn reaches the 5 ms target:
        // first_above = 105 ms. The first dequeue after it, at 106 ms, drops packet 105 and
        // sends 106 in the same opportunity; the next drop is due at 106 + 100 = 206 ms.
        let mut r = Run::new(with_queue(
            schedule(&[(0, 12_000_000)]),
            r#"{"kind": "codel"}"#,
        ));
        burst(&mut r, 0, 300, 1500);
        r.run(205 * MS + MS / 2);
        assert_eq!(r.dropped, vec![105]);
        let at_106: Vec<u64> = r
            .out
            .iter()
            .filter(|o| o.0 == 106 * MS)
            .map(|o| o.1)
            .collect();
        assert_eq!(at_106, vec![106]);
        assert_eq!(r.out[104], (105 * MS, 104));
        r.run(206 * MS);
        assert_eq!(r.dropped.len(), 2);
    }

    #[test]
    fn infinite_queue_never_drops() {
        let mut r = Run::new(link(schedule(&[(0, 120_000_000)])));
        burst(&mut r, 0, 20_000, 1500);
        r.run(10_000 * MS);
        assert!(r.dropped.is_empty());
        assert_eq!(r.out.len(), 20_000);
        // 120 Mbit/s: one opportunity per 0.1 ms; the last packet leaves at 2000 ms.
        assert_eq!(r.out[19_999].0, 2_000 * MS);
    }

    #[test]
    fn pie_drops_under_overload_and_holds_the_delay_down() {
        // 12 Mbit/s offered 24 Mbit/s (2 packets per ms) for 3 s, measured from 2 s. An
        // infinite queue grows by one packet per ms (delays near 2 to 3 s); PIE (target 15 ms)
        // keeps its delay under twice its target, so it must drop nearly every second packet:
        // 6000 offered, 3000 ms of capacity plus a small backlog delivered.
        let offered = |queue: Option<&str>| {
            let mut l = match queue {
                Some(q) => with_queue(schedule(&[(0, 12_000_000)]), q),
                None => link(schedule(&[(0, 12_000_000)])),
            };
            l.record_from = 2_000 * MS;
            let mut r = Run::new(l);
            for i in 0..6000u64 {
                r.send(i * MS / 2, 1500, i);
            }
            r.run(20_000 * MS);
            r
        };
        let fifo = offered(None);
        let pie = offered(Some(r#"{"kind": "pie"}"#));
        let p95 = |r: &Run| r.link.queueing_delay.quantile(0.95).unwrap() / MS as f64;
        assert!(p95(&fifo) > 2_000.0, "{}", p95(&fifo));
        assert!(p95(&pie) < 30.0, "{}", p95(&pie));
        assert_eq!(pie.dropped.len() as u64, pie.link.qdisc_stats().dropped);
        assert_eq!(pie.out.len() + pie.dropped.len(), 6000);
        assert!(pie.dropped.len() > 2900, "{}", pie.dropped.len());
    }

    #[test]
    fn iid_loss_rate_over_many_packets() {
        // p = 0.1 over 100000 packets: binomial mean 10000, sd sqrt(100000 x 0.1 x 0.9) =
        // 94.9; allow 5 sd.
        let mut l = TraceLink::new("l", trace(&[1]), None, 0, 0.1, Rng::new(7, 3));
        let mut pkts = Packets::new();
        for i in 0..100_000u64 {
            let p = pkts.insert(pkt(0, 1500, i, i * MS));
            l.accept(p, &mut pkts, i * MS);
        }
        assert!((l.lost as f64 - 10_000.0).abs() < 5.0 * 94.9, "{}", l.lost);
        assert_eq!(pkts.dropped().len() as u64, l.lost);
        assert_eq!(l.qdisc_stats().enqueued + l.lost, 100_000);
        // No loss: nothing dropped.
        let mut l = TraceLink::new("l", trace(&[1]), None, 0, 0.0, Rng::new(7, 3));
        let mut pkts = Packets::new();
        for i in 0..1000u64 {
            let p = pkts.insert(pkt(0, 1500, i, i * MS));
            l.accept(p, &mut pkts, i * MS);
        }
        assert_eq!((l.lost, pkts.dropped().len()), (0, 0));
    }

    #[test]
    fn delay_line_follows_the_link() {
        // [1, 3, 3, 5] and 20 ms of delay: delivered at 1, 3, 3 ms, out at 21, 23, 23 ms.
        let l = TraceLink::new(
            "l",
            trace(&[1, 3, 3, 5]),
            None,
            20 * MS,
            0.0,
            Rng::new(1, 1),
        );
        let mut r = Run::new(l);
        burst(&mut r, 0, 3, 1500);
        r.run(22 * MS);
        assert_eq!(r.times_ms(), vec![21.0]);
        r.run(100 * MS);
        assert_eq!(r.times_ms(), vec![21.0, 23.0, 23.0]);
        // Queueing delay excludes the delay line.
        assert_eq!(r.link.queueing_delay.max(), Some(3 * MS));
    }

    /// One opportunity every 10 ms; packets arrive at 1.25, 1.5, 4 and 31 ms and leave at 10,
    /// 20, 30 and 40 ms.
    fn signal_run(record_from: Nanos) -> Run {
        let mut l = link(trace(&[10]));
        l.record_from = record_from;
        let mut r = Run::new(l);
        for (i, t) in [1_250_000, 1_500_000, 4 * MS, 31 * MS]
            .into_iter()
            .enumerate()
        {
            r.send(t, 1500, i as u64);
        }
        r.run(100 * MS);
        r
    }

    #[test]
    fn signal_delay_follows_mm_delay_graph() {
        // Per arrival millisecond t with deliveries, min(delivery - t), measured from the
        // start of t as Mahimahi, whose clock stamps an arrival at 1.25 ms as 1 ms:
        //   t = 1: min(10 - 1, 20 - 1) = 9; t = 4: 30 - 4 = 26; t = 31: 40 - 31 = 9.
        // Empty milliseconds take the next one's value + 1:
        //   t = 3, 2: 27, 28; t = 30 .. 5: 10 .. 35.
        // 31 samples: 9, 9, 10..=35 and 26, 27, 28 again; sum 18 + 585 + 81 = 684 ms.
        let r = signal_run(0);
        let s = r.link.signal_delay();
        assert_eq!(s.count(), 31);
        assert_eq!((s.min(), s.max()), (Some(9 * MS), Some(35 * MS)));
        assert_eq!(s.mean(), Some(684.0 * MS as f64 / 31.0));
        // p95, nearest rank ceil(0.95 x 31) = 30th of 31: 34 ms (within the 0.4% buckets).
        let p95 = s.quantile(0.95).unwrap();
        assert!((p95 - 34e6).abs() < 34e6 * 0.004, "{p95}");
        // Queueing delays from the arrival itself: 8.75, 18.5, 26, 9 ms, mean 15.5625 ms.
        let q = &r.link.queueing_delay;
        assert_eq!((q.count(), q.mean()), (4, Some(15.5625e6)));
        // Reading it does not close the last millisecond twice.
        assert_eq!(r.link.signal_delay().count(), 31);
    }

    #[test]
    fn signal_and_queueing_delay_count_from_the_warm_up() {
        // From 25 ms: deliveries at 30 and 40 ms (26 and 9 ms of queueing delay); signal
        // delay for milliseconds 25..=31: 15, 14, .., 10, 9 (sum 84 ms).
        let r = signal_run(25 * MS);
        let q = &r.link.queueing_delay;
        assert_eq!((q.count(), q.mean()), (2, Some(17.5e6)));
        let s = r.link.signal_delay();
        assert_eq!((s.count(), s.mean()), (7, Some(12e6)));
    }

    #[test]
    fn schedule_opportunities_are_evenly_spaced_and_carry_over_steps() {
        // 12 Mbit/s: 12000 bits per ms; 24 Mbit/s from 3 ms: every 0.5 ms.
        let o = schedule(&[(0, 12_000_000), (3 * MS, 24_000_000)]);
        let times: Vec<Nanos> = (0..6).map(|n| o.time_of(n)).collect();
        assert_eq!(
            times,
            vec![MS, 2 * MS, 3 * MS, 3_500_000, 4 * MS, 4_500_000]
        );
        assert_eq!(o.count_through(3_499_999), 3);
        assert_eq!(o.count_through(3_500_000), 4);
        // Stepping at 2.5 ms, half an opportunity is carried: the third comes after 6000
        // more bits at 24 Mbit/s (0.25 ms), at 2.75 ms, then every 0.5 ms.
        let o = schedule(&[(0, 12_000_000), (2_500_000, 24_000_000)]);
        let times: Vec<Nanos> = (0..4).map(|n| o.time_of(n)).collect();
        assert_eq!(times, vec![MS, 2 * MS, 2_750_000, 3_250_000]);
        // An outage from 2 to 5 ms: 1, 2, then 6, 7 ms.
        let o = schedule(&[(0, 12_000_000), (2 * MS, 0), (5 * MS, 12_000_000)]);
        let times: Vec<Nanos> = (0..4).map(|n| o.time_of(n)).collect();
        assert_eq!(times, vec![MS, 2 * MS, 6 * MS, 7 * MS]);
        assert_eq!(o.count_through(5 * MS), 2);
        // 7 Mbit/s: 1714285.7 ns apart, rounded up per opportunity; the 7th at exactly 12 ms.
        let o = schedule(&[(0, 7_000_000)]);
        assert_eq!((o.time_of(0), o.time_of(6)), (1_714_286, 12 * MS));
    }

    #[test]
    fn schedule_step_on_the_link() {
        // 8 x 1500 B at 0; 12 Mbit/s then 24 Mbit/s from 3 ms.
        let mut r = Run::new(link(schedule(&[(0, 12_000_000), (3 * MS, 24_000_000)])));
        burst(&mut r, 0, 8, 1500);
        r.run(100 * MS);
        assert_eq!(r.times_ms(), vec![1.0, 2.0, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5]);
    }

    #[test]
    fn schedule_errors_name_the_step() {
        let cases: [(Vec<(Nanos, BitsPerSec)>, &str); 4] = [
            (vec![], "schedule = []: expected at least one step"),
            (
                vec![(MS, 1)],
                r#"schedule[0].at = "0.001s": expected "0s" (the first step starts the link)"#,
            ),
            (
                vec![(0, 1), (3 * NSEC_PER_SEC, 2), (3 * NSEC_PER_SEC, 3)],
                r#"schedule[2].at = "3s": expected later than schedule[1].at = "3s""#,
            ),
            (
                vec![(0, 1), (NSEC_PER_SEC, 0)],
                r#"schedule[1].rate = "0bit": expected a positive rate (the last step lasts forever)"#,
            ),
        ];
        for (steps, msg) in cases {
            assert_eq!(
                RateSchedule::new(steps.clone()).unwrap_err(),
                msg,
                "{steps:?}"
            );
        }
        assert_eq!(RateSchedule::constant(5).unwrap().steps(), &[(0, 5)]);
    }

    #[test]
    fn spec_parses_with_defaults() {
        let s: TraceLinkSpec = toml::from_str(
            "trace = \"x.down\"\ndelay = \"50ms\"\nloss = 0.01\n\
             queue = { kind = \"pfifo\", limit = \"100p\", head_drop = true }",
        )
        .unwrap();
        assert_eq!(s.trace.as_deref(), Some("x.down"));
        assert_eq!((s.delay.0, s.loss), (50 * MS, 0.01));
        assert_eq!(s.queue.as_ref().map(|q| q.name()), Some("pfifo"));
        assert_eq!(s.validate(), Ok(()));
        let s: TraceLinkSpec = toml::from_str(
            "schedule = [{ at = \"0s\", rate = \"12mbit\" }, { at = \"3s\", rate = \"24mbit\" }]",
        )
        .unwrap();
        assert_eq!((s.delay.0, s.loss, s.queue.is_none()), (0, 0.0, true));
        assert_eq!(
            s.opportunities().unwrap(),
            schedule(&[(0, 12_000_000), (3 * NSEC_PER_SEC, 24_000_000)])
        );
        let back: TraceLinkSpec =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        let e = toml::from_str::<TraceLinkSpec>("trace = \"x\"\nlos = 0.1").unwrap_err();
        assert!(e.to_string().contains("unknown field `los`"), "{e}");
    }

    #[test]
    fn spec_errors_name_the_field_value_and_expectation() {
        let cases = [
            (
                "delay = \"5ms\"",
                "trace link: expected a trace (a Mahimahi trace file) or a schedule (rate \
                 steps), got neither",
            ),
            (
                "trace = \"a\"\nschedule = [{ at = 0, rate = \"1mbit\" }]",
                r#"trace = "a" and schedule: expected only one of them"#,
            ),
            (
                "schedule = [{ at = \"1s\", rate = \"1mbit\" }]",
                r#"schedule[0].at = "1s": expected "0s" (the first step starts the link)"#,
            ),
            (
                "trace = \"a\"\nloss = 1.0",
                "loss = 1: expected a probability in [0, 1)",
            ),
            (
                "trace = \"a\"\nloss = -0.5",
                "loss = -0.5: expected a probability in [0, 1)",
            ),
            (
                "trace = \"a\"\nqueue = { kind = \"fq_codel\" }",
                r#"queue.kind = "fq_codel": expected a FIFO queue as Mahimahi's (pfifo or bfifo for droptail, the same with head_drop for drophead, codel, pie or ecn_step)"#,
            ),
            (
                "trace = \"a\"\nqueue = { kind = \"pfifo\", limit = \"0p\" }",
                r#"queue.limit = "0p": expected a buffer of at least 1 packet"#,
            ),
        ];
        for (input, msg) in cases {
            let s: TraceLinkSpec = toml::from_str(input).unwrap();
            assert_eq!(s.validate().unwrap_err(), msg, "{input}");
        }
        let s: TraceLinkSpec = toml::from_str("trace = \"/nonexistent/x.down\"").unwrap();
        let e = s.opportunities().unwrap_err();
        assert!(
            e.starts_with("/nonexistent/x.down: cannot read the trace file"),
            "{e}"
        );
        // A byte-limited queue below the MTU is caught when the link is built.
        let s: TraceLinkSpec = toml::from_str(
            "schedule = [{ at = 0, rate = \"1mbit\" }]\nqueue = { kind = \"bfifo\", limit = \"1000b\" }",
        )
        .unwrap();
        let e = s
            .build(
                "l",
                s.opportunities().unwrap(),
                0,
                1500,
                Rng::new(1, 1),
                Rng::new(1, 2),
            )
            .err()
            .unwrap();
        assert_eq!(
            e,
            r#"queue.limit = "1000b": expected at least the MTU (1500 bytes)"#
        );
    }

    #[test]
    fn spec_builds_a_working_link() {
        // 12 Mbit/s, pfifo of 2 BDP with a BDP of 3000 B: 4 packets; 6 offered at 0, 4 leave.
        let s: TraceLinkSpec = toml::from_str(
            "schedule = [{ at = 0, rate = \"12mbit\" }]\ndelay = \"10ms\"\n\
             queue = { kind = \"pfifo\", limit = \"2bdp\" }",
        )
        .unwrap();
        let l = s
            .build(
                "l",
                s.opportunities().unwrap(),
                3000,
                1500,
                Rng::new(1, 1),
                Rng::new(1, 2),
            )
            .unwrap();
        let mut r = Run::new(l);
        burst(&mut r, 0, 6, 1500);
        r.run(100 * MS);
        assert_eq!(r.dropped, vec![4, 5]);
        assert_eq!(r.times_ms(), vec![11.0, 12.0, 13.0, 14.0]);
    }

    fn check_cursor(o: &Opportunities, t: Nanos) -> Result<(), TestCaseError> {
        let n = o.count_through(t);
        prop_assert!(o.time_of(n) > t);
        if n > 0 {
            prop_assert!(o.time_of(n - 1) <= t);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn trace_cursor_counts_what_it_times(
            mut ms in any_vec(0u64..50, 1..20),
            t in 0u64..500_000_000,
        ) {
            ms.sort_unstable();
            let last = ms.len() - 1;
            ms[last] += 1;
            let o = Opportunities::Trace(Trace::from_ms(ms).unwrap());
            check_cursor(&o, t)?;
            for n in 0..40 {
                prop_assert!(o.time_of(n) <= o.time_of(n + 1));
            }
        }

        #[test]
        fn schedule_cursor_counts_what_it_times(
            gaps in any_vec((1u64..20_000_000, 0u64..100_000_000), 0..5),
            last in 1u64..100_000_000,
            t in 0u64..200_000_000,
        ) {
            let mut steps = Vec::new();
            let mut at = 0;
            for (gap, rate) in gaps {
                steps.push((at, rate));
                at += gap;
            }
            steps.push((at, last));
            let o = Opportunities::Schedule(RateSchedule::new(steps).unwrap());
            check_cursor(&o, t)?;
            for n in 0..40 {
                prop_assert!(o.time_of(n) <= o.time_of(n + 1));
            }
        }
    }

    /// The real Verizon LTE downlink trace: its mean rate is the README's 5.0 Mbit/s. Reads
    /// `$WIFICC_TRACES/Verizon-LTE-short.down`, by default `../shared/traces` beside the
    /// project.
    #[test]
    #[ignore = "reads a trace file outside the repository"]
    fn verizon_lte_mean_rate_matches_its_readme() {
        let dir = std::env::var("WIFICC_TRACES").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces").to_string()
        });
        let t = TraceFile::load(Path::new(&dir).join("Verizon-LTE-short.down")).unwrap();
        assert_eq!(t.period(), 140 * NSEC_PER_SEC);
        let mbit = t.mean_rate() / 1e6;
        assert!((mbit - 5.0).abs() < 0.05, "{mbit} Mbit/s");
    }
}
