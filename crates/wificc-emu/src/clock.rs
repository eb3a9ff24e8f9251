//! The wall clock of the emulation, how to wait for the next event, and how late deliveries
//! are.
//!
//! **Clock.** Model time is nanoseconds of `CLOCK_MONOTONIC` since the emulator's origin, the
//! instant its network was ready; the origin is published so that traffic generators
//! (`python/wificc/emu/traffic.py`, whose `time.monotonic_ns()` reads the same clock) can start flows
//! and pings at scenario times.
//!
//! **Waiting.** A sleeping process wakes some tens of microseconds after its timer on an idle
//! machine and later on a busy one. Only events that hand a packet to a host need that
//! precision: for them the loop sleeps (in `ppoll`, so that a packet to read wakes it) until
//! `spin` before the event and spins on the clock for the rest; it sleeps right up to any
//! other event ([`plan_wait`]). Spinning for every event would keep a real-time process on the
//! CPU nearly all the time at tens of Mbit/s, and the kernel's real-time throttling
//! (`sched_rt_runtime_us`, 95% of each second) would then stop it for tens of milliseconds.
//! With nothing pending the loop sleeps up to [`IDLE_WAIT`] at a time, so that a stop request
//! is seen promptly.
//!
//! **Lateness.** For every packet written to its destination, actual minus scheduled delivery
//! time, in a [`Histogram`]; the report gives p50, p99, the maximum and the fraction within
//! [`ON_TIME`] (100 us), the figures of merit of a real-time link emulator.
//!
//! **Write cost.** A write to a TUN device runs the receiving kernel's input path (IP, TCP,
//! the ACK it sends, the data an ACK releases) in the emulator's own call, so a write takes
//! microseconds and the packets due after it wait for it. [`WriteCosts`] records how long
//! each write took, per destination host: its total over the run's wall time is the share the
//! kernels' processing took of the loop, the first thing to look at when the loop is late.

use serde::Serialize;
use wificc_core::metrics::Histogram;
use wificc_core::units::{Nanos, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

/// Longest sleep with nothing scheduled: bounds how long a stop request waits.
pub const IDLE_WAIT: Nanos = 50 * NSEC_PER_MSEC;
/// A delivery within this of its scheduled time counts as on time.
pub const ON_TIME: Nanos = 100 * NSEC_PER_USEC;

/// `CLOCK_MONOTONIC` now, in nanoseconds.
pub fn monotonic_ns() -> Nanos {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as Nanos * NSEC_PER_SEC + ts.tv_nsec as Nanos
}

/// Model time: monotonic nanoseconds since an origin.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Nanos,
}

impl Clock {
    /// A clock whose time 0 is now.
    pub fn start() -> Clock {
        Clock {
            origin: monotonic_ns(),
        }
    }

    /// The origin, in `CLOCK_MONOTONIC` nanoseconds.
    pub fn origin(&self) -> Nanos {
        self.origin
    }

    pub fn now(&self) -> Nanos {
        monotonic_ns().saturating_sub(self.origin)
    }
}

/// What the loop does until the next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Sleep at most this long (woken early by a packet to read).
    Sleep(Nanos),
    /// The event is within the spin window (or due): check the clock again at once.
    Spin,
}

/// How to wait at `now` for the next event `next`, of which the next delivery to a host is
/// `delivery`, with a spin window of `spin` before deliveries.
pub fn plan_wait(now: Nanos, next: Option<Nanos>, delivery: Option<Nanos>, spin: Nanos) -> Wait {
    let wake = match (next, delivery) {
        (None, None) => return Wait::Sleep(IDLE_WAIT),
        (Some(t), None) => t,
        (None, Some(d)) => d.saturating_sub(spin),
        (Some(t), Some(d)) => t.min(d.saturating_sub(spin)),
    };
    if wake > now {
        Wait::Sleep((wake - now).min(IDLE_WAIT))
    } else {
        Wait::Spin
    }
}

/// Delivery lateness of every packet written, and of the first packet of every batch: the
/// packets due at one instant (an A-MPDU released by the reorder buffer, a burst leaving a
/// link together) are written one after another, so the later ones in a batch are late by the
/// writes before them even when the loop reached the instant on time.
///
/// **The emulator's own lateness** (`own`). A host takes its packets one at a time: a write
/// runs the host's input path (IP, TCP, the ACK it sends) for that packet, as a real host's
/// driver hands an A-MPDU's frames to the stack one after another (ath9k's RX tasklet, a NAPI
/// poll). A packet due while the write of the packet before it to the same host still ran
/// would have waited for that host on real hardware too; its own lateness counts from the later
/// of its time and the end of that write. Time spent writing to other hosts (whose kernels run
/// on their own CPUs on real hardware, here in the emulator's call) and in waking up counts.
#[derive(Debug, Clone, Default)]
pub struct Lateness {
    all: OnTime,
    batches: OnTime,
    own: OnTime,
    last_scheduled: Option<Nanos>,
    writes: WriteCosts,
}

/// A lateness histogram and its count within [`ON_TIME`].
#[derive(Debug, Clone, Default)]
struct OnTime {
    hist: Histogram,
    on_time: u64,
}

impl OnTime {
    fn record(&mut self, late: Nanos) {
        self.hist.record(late);
        if late <= ON_TIME {
            self.on_time += 1;
        }
    }

    fn within(&self) -> Option<f64> {
        let n = self.hist.count();
        (n > 0).then(|| self.on_time as f64 / n as f64)
    }
}

/// The lateness report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatenessReport {
    pub packets: u64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
    pub mean_us: Option<f64>,
    /// Fraction delivered within 100 us of the scheduled time (None before any delivery).
    pub within_100us: Option<f64>,
    /// The emulator's own lateness (see [`Lateness`]): p99 and the fraction within 100 us.
    pub own_p99_us: Option<f64>,
    pub own_within_100us: Option<f64>,
    /// Batches: runs of consecutive packets due at the same instant.
    pub batches: u64,
    /// Lateness of the first packet of each batch: when the loop reached the instant.
    pub batch_p50_us: Option<f64>,
    pub batch_p99_us: Option<f64>,
    pub batch_within_100us: Option<f64>,
}

/// The writes to each host (index 0 the server): when the last one ended, and how long each
/// took.
#[derive(Debug, Clone, Default)]
pub struct WriteCosts {
    hosts: Vec<HostWrites>,
}

#[derive(Debug, Clone, Default)]
struct HostWrites {
    free_at: Nanos,
    took: Histogram,
}

/// The write-cost report of one host.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WriteCostReport {
    pub host: usize,
    pub packets: u64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
    /// Sum of the write times, seconds.
    pub total_s: f64,
}

impl WriteCosts {
    /// A write to `host` from `start` to `end`; returns when the write before it to that host
    /// ended (0 for the first).
    pub fn record(&mut self, host: usize, start: Nanos, end: Nanos) -> Nanos {
        if self.hosts.len() <= host {
            self.hosts.resize_with(host + 1, HostWrites::default);
        }
        let h = &mut self.hosts[host];
        h.took.record(end.saturating_sub(start));
        std::mem::replace(&mut h.free_at, end)
    }

    /// One report per host written to, in host order.
    pub fn report(&self) -> Vec<WriteCostReport> {
        let us = |ns: Option<f64>| ns.map(|v| v / NSEC_PER_USEC as f64);
        self.hosts
            .iter()
            .enumerate()
            .map(|(host, h)| (host, &h.took))
            .filter(|(_, h)| h.count() > 0)
            .map(|(host, h)| WriteCostReport {
                host,
                packets: h.count(),
                p50_us: us(h.quantile(0.50)),
                p99_us: us(h.quantile(0.99)),
                max_us: us(h.max().map(|m| m as f64)),
                total_s: h.sum() as f64 / NSEC_PER_SEC as f64,
            })
            .collect()
    }
}

impl Lateness {
    /// A packet scheduled at `scheduled` was written at `actual`.
    /// Packets are recorded in the order they are written; one due at the same instant as the
    /// packet before it belongs to that packet's batch.
    pub fn record(&mut self, scheduled: Nanos, actual: Nanos) {
        let late = actual.saturating_sub(scheduled);
        self.all.record(late);
        if self.last_scheduled != Some(scheduled) {
            self.batches.record(late);
            self.last_scheduled = Some(scheduled);
        }
    }

    /// A packet due at `scheduled` was written to `host` from `start` to `end`.
    pub fn written(&mut self, host: usize, scheduled: Nanos, start: Nanos, end: Nanos) {
        self.record(scheduled, start);
        let free_at = self.writes.record(host, start, end);
        self.own
            .record(start.saturating_sub(scheduled.max(free_at)));
    }

    /// How long the writes to each host took.
    pub fn writes(&self) -> Vec<WriteCostReport> {
        self.writes.report()
    }

    pub fn report(&self) -> LatenessReport {
        let us = |ns: Option<f64>| ns.map(|v| v / NSEC_PER_USEC as f64);
        let (all, batches) = (&self.all.hist, &self.batches.hist);
        LatenessReport {
            packets: all.count(),
            p50_us: us(all.quantile(0.50)),
            p99_us: us(all.quantile(0.99)),
            max_us: us(all.max().map(|m| m as f64)),
            mean_us: us(all.mean()),
            within_100us: self.all.within(),
            own_p99_us: us(self.own.hist.quantile(0.99)),
            own_within_100us: self.own.within(),
            batches: batches.count(),
            batch_p50_us: us(batches.quantile(0.50)),
            batch_p99_us: us(batches.quantile(0.99)),
            batch_within_100us: self.batches.within(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_costs_are_kept_per_host_and_summed() {
        let mut w = WriteCosts::default();
        assert!(w.report().is_empty());
        assert_eq!(w.record(0, 0, 5_000), 0);
        // three writes of 10, 30 and 20 us, each returning the end of the one before
        let mut ended = Vec::new();
        for (start, took) in [(100_000, 10_000), (200_000, 30_000), (300_000, 20_000)] {
            ended.push(w.record(1, start, start + took));
        }
        assert_eq!(ended, [0, 110_000, 230_000]);
        // host 2 never written to: left out
        w.record(3, 0, 100);
        let r = w.report();
        assert_eq!(
            r.iter().map(|c| (c.host, c.packets)).collect::<Vec<_>>(),
            [(0, 1), (1, 3), (3, 1)]
        );
        assert_eq!(r[0].p50_us, Some(5.0));
        assert_eq!(r[0].max_us, Some(5.0));
        assert_eq!(r[1].max_us, Some(30.0));
        // nearest rank of three: the second, 20 us (to the histogram's bucket)
        let p50 = r[1].p50_us.unwrap();
        assert!((p50 - 20.0).abs() < 0.2, "{p50}");
        assert!((r[1].total_s - 60e-6).abs() < 1e-15);
        assert_eq!(r[2].p99_us, Some(0.1));
    }

    #[test]
    fn waits_sleep_until_the_spin_window_of_deliveries_then_spin() {
        let spin = 50 * NSEC_PER_USEC;
        let ms = NSEC_PER_MSEC;
        // A delivery 1 ms away, nothing before it: sleep 1 ms - 50 us = 950 us.
        assert_eq!(plan_wait(0, Some(ms), Some(ms), spin), Wait::Sleep(950_000));
        // A delivery 50 us away or less, or overdue: spin.
        assert_eq!(plan_wait(0, Some(spin), Some(spin), spin), Wait::Spin);
        assert_eq!(plan_wait(10, Some(5), Some(5), spin), Wait::Spin);
        // One nanosecond beyond the window: sleep 1 ns.
        assert_eq!(
            plan_wait(0, Some(spin + 1), Some(spin + 1), spin),
            Wait::Sleep(1)
        );
        // Another event 20 us away, the delivery 1 ms away: sleep right up to the event.
        assert_eq!(
            plan_wait(0, Some(20_000), Some(ms), spin),
            Wait::Sleep(20_000)
        );
        // Only non-delivery events: no spin window.
        assert_eq!(plan_wait(0, Some(20_000), None, spin), Wait::Sleep(20_000));
        assert_eq!(plan_wait(30_000, Some(20_000), None, spin), Wait::Spin);
        // Far or nothing pending: sleep at most the idle wait.
        let far = Some(10 * NSEC_PER_SEC);
        assert_eq!(plan_wait(0, far, far, spin), Wait::Sleep(IDLE_WAIT));
        assert_eq!(plan_wait(0, None, None, spin), Wait::Sleep(IDLE_WAIT));
    }

    #[test]
    fn lateness_report_counts_on_time_deliveries() {
        // Lateness 0, 40, 100 and 250 us: three of four within 100 us; p50 is the 2nd of 4
        // by nearest rank (40 us), p99 and max the 4th (250 us); mean 97.5 us. Values are
        // exact to the histogram's resolution (0.4%).
        let mut l = Lateness::default();
        for (s, a) in [(1000, 1000), (0, 40_000), (5_000, 105_000), (0, 250_000)] {
            l.record(s, a);
        }
        let r = l.report();
        assert_eq!(r.packets, 4);
        assert_eq!(r.within_100us, Some(0.75));
        assert!((r.p50_us.unwrap() - 40.0).abs() < 0.2, "{r:?}");
        assert!((r.p99_us.unwrap() - 250.0).abs() < 1.0, "{r:?}");
        assert_eq!(r.max_us, Some(250.0));
        assert_eq!(r.mean_us, Some(97.5));
        // An early write (actual before scheduled) counts as on time, lateness 0.
        l.record(10, 5);
        assert_eq!(l.report().within_100us, Some(0.8));
        assert_eq!(Lateness::default().report().within_100us, None);
        assert_eq!(Lateness::default().report().batch_within_100us, None);
    }

    #[test]
    fn own_lateness_leaves_out_the_wait_for_the_hosts_previous_packet() {
        // Host 1: three packets due at 0, written from 10, 40 and 70 us, each write 30 us:
        // late 10, 40, 70 us; own 10, 0, 0 (each started as the write before it ended).
        // Host 0: one due at 50 us written from 100 us (after host 1's second write): own 50.
        // Host 1 again: due at 80 us, written from 230 us, its previous write ended at 100:
        // own 130 us (the loop was elsewhere), late 150 us.
        let mut l = Lateness::default();
        l.written(1, 0, 10_000, 40_000);
        l.written(1, 0, 40_000, 70_000);
        l.written(1, 0, 70_000, 100_000);
        l.written(0, 50_000, 100_000, 110_000);
        l.written(1, 80_000, 230_000, 240_000);
        let r = l.report();
        assert_eq!(r.packets, 5);
        // all: 10, 40, 70, 50, 150 -> four of five within 100 us
        assert_eq!(r.within_100us, Some(0.8));
        // own: 10, 0, 0, 50, 130 -> four of five, p99 the largest
        assert_eq!(r.own_within_100us, Some(0.8));
        assert!((r.own_p99_us.unwrap() - 130.0).abs() < 0.6, "{r:?}");
        // every write's duration, per host: three of 30 us and one of 10 us to host 1
        let w = l.writes();
        assert_eq!(
            w.iter().map(|c| (c.host, c.packets)).collect::<Vec<_>>(),
            [(0, 1), (1, 4)]
        );
        assert!((w[1].total_s - 100e-6).abs() < 1e-15);
        let mut calm = Lateness::default();
        calm.written(1, 0, 10_000, 40_000);
        calm.written(1, 0, 40_000, 70_000);
        calm.written(1, 0, 70_000, 100_000);
        calm.written(1, 0, 100_000, 130_000);
        let r = calm.report();
        // the fourth is 100 us late behind its host's three writes, its own lateness 0
        assert_eq!((r.within_100us, r.own_within_100us), (Some(1.0), Some(1.0)));
        calm.written(1, 0, 131_000, 132_000);
        assert_eq!(calm.report().within_100us, Some(0.8));
        assert_eq!(calm.report().own_within_100us, Some(1.0));
        assert_eq!(Lateness::default().report().own_within_100us, None);
    }

    #[test]
    fn a_batch_is_late_by_its_first_packet() {
        // Three packets due at 0 written 10, 60 and 110 us late (one batch, late 10 us), then
        // two due at 1 ms written 150 and 200 us late (a batch late 150 us), then one due at
        // 2 ms on time: batches 3, one late; packets 6, two late (110, 150, 200: three).
        let mut l = Lateness::default();
        let us = NSEC_PER_USEC;
        for (s, a) in [
            (0, 10 * us),
            (0, 60 * us),
            (0, 110 * us),
            (1000 * us, 1150 * us),
            (1000 * us, 1200 * us),
            (2000 * us, 2000 * us),
        ] {
            l.record(s, a);
        }
        let r = l.report();
        assert_eq!((r.packets, r.batches), (6, 3));
        assert_eq!(r.within_100us, Some(0.5));
        assert_eq!(r.batch_within_100us, Some(2.0 / 3.0));
        assert!((r.batch_p50_us.unwrap() - 10.0).abs() < 0.1, "{r:?}");
        assert!((r.batch_p99_us.unwrap() - 150.0).abs() < 1.0, "{r:?}");
    }

    #[test]
    fn clock_counts_from_its_origin() {
        let c = Clock::start();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        assert!(c.origin() + b <= monotonic_ns());
    }
}
