//! What the network records of its components: the watched queues' backlog series, each
//! BSS's per-node series, and the counters the summaries measure over two windows, the whole
//! run after the warm-up ("_all") and the measurement window (the flows' span, as Flent cuts
//! its box, CDF and totals plots).

use super::Network;
use crate::metrics::results::{QueueSeries, QueueSummary, SeriesOf, WifiNodeSummary};
use crate::units::Nanos;

/// A queue the network records: a wired link's or a trace link's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueRef {
    Link(u32),
    Trace(u32),
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

pub(super) struct Records {
    /// Queues whose series are recorded and summarised.
    watched: Vec<(QueueRef, QueueSeries)>,
    /// [warm-up, end of run]: the whole-run ("_all") summaries.
    whole: Window,
    /// The measurement window: from the first flow's start (not before the warm-up) to the last
    /// flow's stop; the whole run when there is no flow.
    load: Window,
    step: Nanos,
    pub(super) warmup: Nanos,
}

impl Records {
    pub(super) fn new(step: Nanos, warmup: Nanos) -> Self {
        let window = Window {
            from: warmup,
            to: Nanos::MAX,
            ..Window::default()
        };
        Records {
            watched: Vec::new(),
            whole: window.clone(),
            load: window,
            step,
            warmup,
        }
    }

    /// A BSS of `nodes` nodes joins: its airtime counts from zero.
    pub(super) fn add_bss(&mut self, nodes: usize) {
        for w in [&mut self.whole, &mut self.load] {
            w.at_from.airtime.push(vec![0; nodes]);
        }
    }
}

impl Network {
    /// Record `q`'s backlog at every sample and summarise it.
    pub fn watch(&mut self, q: QueueRef) {
        self.records.watched.push((q, QueueSeries::default()));
    }

    /// The measurement window: [`from`, `to`] (clamped to the warm-up), the span of the flows.
    pub fn set_load_window(&mut self, from: Nanos, to: Nanos) {
        let load = &mut self.records.load;
        load.from = from.max(self.records.warmup);
        load.to = to.max(load.from);
    }

    /// The measurement window's bounds.
    #[inline]
    pub fn load_window(&self) -> (Nanos, Nanos) {
        (self.records.load.from, self.records.load.to)
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

    /// The end of the warm-up for the queues: link utilisation, trace deliveries and Wi-Fi
    /// airtime count from now. Lazy links must have caught up ([`Network::catch_up`]).
    pub fn queues_end_warmup(&mut self) {
        self.records.whole.at_from = self.counters();
        if self.records.load.from <= self.records.warmup {
            self.records.load.at_from = self.records.whole.at_from.clone();
        }
    }

    /// The measurement window opens now (lazy links caught up).
    pub fn load_start(&mut self) {
        self.records.load.at_from = self.counters();
    }

    /// The measurement window closes now (lazy links caught up).
    pub fn load_end(&mut self) {
        self.records.load.at_to = Some(self.counters());
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

    /// Append the backlog of every watched queue at `now` to its series (lazy links caught
    /// up).
    pub fn sample_queues(&mut self, now: Nanos) {
        for i in 0..self.records.watched.len() {
            let (packets, bytes, drops) = self.backlog(self.records.watched[i].0);
            self.records.watched[i].1.push(now, packets, bytes, drops);
        }
    }

    /// Append each Wi-Fi node's A-MPDU sizes, airtime, collisions, retries and backlog over
    /// the step ending at `now` to its BSS's series.
    pub fn sample_wifi(&mut self, now: Nanos) {
        let step = self.records.step;
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
        let (load, all) = (
            utilization(&self.records.load),
            utilization(&self.records.whole),
        );
        // (name, qdisc counters, random losses, packets sent, largest backlog, sojourn
        // histogram, 95th percentile of Mahimahi's signal delay).
        let (name, st, random_losses, tx_packets, max_backlog, sojourn, signal) = match q {
            QueueRef::Link(l) => {
                let link = &self.links[l as usize];
                let (st, lost, sent) = (link.qdisc_stats(), link.random_losses, link.tx_packets);
                (
                    &link.name,
                    st,
                    lost,
                    sent,
                    link.max_backlog,
                    &link.sojourn,
                    None,
                )
            }
            QueueRef::Trace(t) => {
                let link = &self.traces[t as usize];
                let (st, lost, sent) = (link.qdisc_stats(), link.lost, link.delivered_packets);
                let signal = link.signal_delay().quantile(0.95);
                let delay = &link.queueing_delay;
                (&link.name, st, lost, sent, link.max_backlog, delay, signal)
            }
        };
        QueueSummary {
            name: name.clone(),
            enqueued: st.enqueued,
            dropped: st.dropped,
            random_losses,
            ecn_marked: st.ecn_marked,
            tx_packets,
            utilization: load,
            utilization_all: all,
            max_backlog_pkts: max_backlog,
            sojourn_p50_ms: ms(sojourn.quantile(0.50)),
            sojourn_p95_ms: ms(sojourn.quantile(0.95)),
            sojourn_p99_ms: ms(sojourn.quantile(0.99)),
            signal_delay_p95_ms: ms(signal),
        }
    }

    /// Summaries over [warm-up, `end`] and series of the watched queues, in watch order (a
    /// series' id is its position).
    pub fn queue_results(&self, end: Nanos) -> (Vec<QueueSummary>, Vec<SeriesOf<QueueSeries>>) {
        let watched = &self.records.watched;
        let summaries = watched
            .iter()
            .map(|(q, _)| self.queue_summary(*q, end))
            .collect();
        let series = watched
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
        let (load, all) = (share(&self.records.load), share(&self.records.whole));
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

    /// The Wi-Fi series of every BSS, by BSS number.
    pub fn wifi_series(&self) -> Vec<SeriesOf<crate::metrics::results::WifiSeries>> {
        self.bsses
            .iter()
            .enumerate()
            .map(|(b, w)| SeriesOf {
                id: b as u32,
                name: w.name.clone(),
                series: w.series.clone(),
            })
            .collect()
    }
}
