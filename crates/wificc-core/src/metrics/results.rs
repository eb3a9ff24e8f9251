//! Per-run results: sampled series (every STEP) and summaries, in the column layout the Python
//! front end turns into DataFrames (`wificc.Result`). Times are seconds, RTTs milliseconds,
//! rates bits per second.

use serde::Serialize;

use crate::kernel::Profile;
use crate::tcp::sender::TcpSender;
use crate::units::{secs, Nanos};

/// Series of one TCP flow, sampled every STEP while it is active.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FlowSeries {
    pub t: Vec<f64>,
    pub goodput_bps: Vec<f64>,
    pub srtt_ms: Vec<f64>,
    pub cwnd: Vec<u32>,
    pub ssthresh: Vec<u32>,
    pub pacing_rate_bps: Vec<f64>,
    pub delivery_rate_bps: Vec<f64>,
    pub inflight: Vec<u32>,
    /// Bytes of this socket below TCP (the quantity TSQ limits).
    pub tsq_bytes: Vec<u64>,
    pub retrans: Vec<u64>,
    /// The congestion control's internal model: (time index, name, value) in long form.
    pub model_t: Vec<f64>,
    pub model_name: Vec<&'static str>,
    pub model_value: Vec<f64>,
}

/// Ping RTT samples, one per reply, keyed by send time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PingSeries {
    pub t: Vec<f64>,
    pub rtt_ms: Vec<f64>,
}

impl PingSeries {
    pub fn push(&mut self, sent: Nanos, rtt: Nanos) {
        self.t.push(secs(sent));
        self.rtt_ms.push(rtt as f64 / 1e6);
    }
}

/// Backlog of a watched queue, sampled every STEP.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QueueSeries {
    pub t: Vec<f64>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
    pub drops: Vec<u64>,
}

impl QueueSeries {
    pub fn push(&mut self, t: Nanos, packets: u64, bytes: u64, drops: u64) {
        self.t.push(secs(t));
        self.packets.push(packets);
        self.bytes.push(bytes);
        self.drops.push(drops);
    }
}

impl FlowSeries {
    /// Append one sample of a flow's state.
    pub fn record(&mut self, now: Nanos, goodput_bps: f64, tx: &TcpSender) {
        let s = self;
        let t = secs(now);
        let tp = &tx.tp;
        s.t.push(t);
        s.goodput_bps.push(goodput_bps);
        s.srtt_ms.push(tp.srtt() as f64 / 1e3);
        s.cwnd.push(tp.snd_cwnd);
        s.ssthresh.push(tp.snd_ssthresh);
        s.pacing_rate_bps.push(if tp.pacing_rate == u64::MAX {
            f64::NAN
        } else {
            tp.pacing_rate as f64 * 8.0
        });
        s.delivery_rate_bps.push(tx.delivery_rate_bps() as f64);
        s.inflight.push(tp.packets_in_flight());
        s.tsq_bytes.push(tx.below_bytes);
        s.retrans.push(tx.stats.retrans);
        for (name, value) in tx.cc.model() {
            s.model_t.push(t);
            s.model_name.push(name);
            s.model_value.push(value);
        }
    }
}

/// A-MPDU and airtime statistics of the Wi-Fi nodes, one row per node per STEP (long form).
#[derive(Debug, Clone, Default, Serialize)]
pub struct WifiSeries {
    pub t: Vec<f64>,
    pub node: Vec<u16>,
    /// MPDUs per A-MPDU sent in the step (NaN when none was sent).
    pub ampdu_mean: Vec<f64>,
    pub ampdu_p10: Vec<f64>,
    pub ampdu_p50: Vec<f64>,
    pub ampdu_p90: Vec<f64>,
    /// Share of the step's time this node spent transmitting.
    pub airtime: Vec<f64>,
    pub collisions: Vec<u64>,
    pub mpdu_retries: Vec<u64>,
    /// Packets in the node's TXQs.
    pub backlog: Vec<u64>,
}

/// Summary of one Wi-Fi node (the AP is node 0) over the run after the warm-up.
#[derive(Debug, Clone, Serialize)]
pub struct WifiNodeSummary {
    pub bss: u32,
    pub node: u16,
    pub name: String,
    pub ppdus: u64,
    pub ampdu_mean: Option<f64>,
    pub ampdu_p10: Option<f64>,
    pub ampdu_p50: Option<f64>,
    pub ampdu_p90: Option<f64>,
    /// Airtime used / length of the measurement window (the flows' span, as Flent cuts).
    pub airtime: f64,
    /// Airtime used / (duration - warmup).
    pub airtime_all: f64,
    pub collisions: u64,
    pub mpdu_retries: u64,
    pub drops: u64,
    pub txq_sojourn_p50_ms: Option<f64>,
    pub txq_sojourn_p95_ms: Option<f64>,
    /// The radio's driver family ("ath9k", "iwlwifi", ...).
    pub driver: &'static str,
    /// MCS (per stream) of the PPDUs sent: median, and lowest and highest.
    pub mcs_p50: Option<f64>,
    pub mcs_min: Option<f64>,
    pub mcs_max: Option<f64>,
    /// TX-completion latency, ms: from a packet's arrival at the radio to the host's
    /// processing of its TX status (what releases TCP Small Queues), acknowledged packets.
    pub tx_completion_p50_ms: Option<f64>,
    pub tx_completion_p90_ms: Option<f64>,
    /// TX-status interrupts processed (each runs the TSQ handlers once).
    pub tx_interrupts: u64,
}

/// Summary of one flow.
#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub id: u32,
    pub name: String,
    pub cc: String,
    /// "up" (client to server) or "down".
    pub direction: &'static str,
    /// DiffServ codepoint of the flow's packets (0..63), as its ping's `dscp`.
    pub dscp: u8,
    pub start_s: f64,
    pub stop_s: f64,
    /// Application goodput over [start + warmup, stop] (payload bytes delivered in order).
    pub goodput_bps: f64,
    pub bytes_delivered: u64,
    pub segs_sent: u64,
    pub retrans: u64,
    /// Retransmitted segments / segments sent.
    pub retrans_rate: f64,
    pub drops: u64,
    pub rto_count: u64,
    pub recoveries: u64,
    pub srtt_mean_ms: f64,
    pub cwnd_mean: f64,
    pub tsq_throttled: u64,
    pub max_tsq_bytes: u64,
    /// Sends let over the TSQ limit by the one-skb exception.
    pub tsq_exceptions: u64,
    /// Largest excess over the TSQ limit after any other send (<= 0: the limit held).
    pub tsq_max_excess: i64,
    /// Skbs handed below TCP (each GSO-segmented into segments), retransmissions included.
    pub skbs_sent: u64,
    /// Segments per skb: how much each send hands to the qdisc and radio at once.
    pub skb_segs_mean: f64,
    /// ACKs the flow's receiver sent over the whole run.
    pub acks_sent: u64,
}

/// Summary of one ping stream.
#[derive(Debug, Clone, Serialize)]
pub struct PingSummary {
    pub id: u32,
    pub name: String,
    pub kind: String,
    pub dscp: u8,
    pub sent: u64,
    pub received: u64,
    /// RTT percentiles of the pings sent in the measurement window: from the first flow's start
    /// (not before the warm-up) to the last flow's stop, as Flent cuts its box, CDF and totals
    /// plots; every ping after the warm-up when there is no flow.
    pub rtt_p10_ms: Option<f64>,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p90_ms: Option<f64>,
    pub rtt_p99_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    /// The same over every ping sent after the warm-up (idle periods included).
    pub rtt_all_p10_ms: Option<f64>,
    pub rtt_all_p50_ms: Option<f64>,
    pub rtt_all_p90_ms: Option<f64>,
    pub rtt_all_p99_ms: Option<f64>,
    pub rtt_all_mean_ms: Option<f64>,
}

/// Summary of one queue (a link's qdisc).
#[derive(Debug, Clone, Serialize)]
pub struct QueueSummary {
    pub name: String,
    pub enqueued: u64,
    pub dropped: u64,
    /// Packets lost to the link's random loss (not counted in `dropped`).
    pub random_losses: u64,
    pub ecn_marked: u64,
    pub tx_packets: u64,
    /// Busy time / length of the measurement window (the flows' span, as Flent cuts).
    pub utilization: f64,
    /// Busy time / (duration - warmup).
    pub utilization_all: f64,
    pub max_backlog_pkts: usize,
    pub sojourn_p50_ms: Option<f64>,
    pub sojourn_p95_ms: Option<f64>,
    pub sojourn_p99_ms: Option<f64>,
    /// Mahimahi's signal delay (trace links only): p95 over the milliseconds of the run.
    pub signal_delay_p95_ms: Option<f64>,
}

/// Run-wide summary.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// [`crate::MODEL`] of the simulator that ran it.
    pub model: &'static str,
    /// The kernel profile the hosts ran (`stack.kernel`).
    pub kernel: &'static str,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub seed: u64,
    pub events: u64,
    pub wall_s: f64,
    /// Simulated seconds per wall-clock second.
    pub speed: f64,
    pub events_per_s: f64,
    pub total_goodput_bps: f64,
    /// Jain's fairness index of the flows' goodputs.
    pub jain: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeriesOf<T> {
    pub id: u32,
    pub name: String,
    #[serde(flatten)]
    pub series: T,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSeries {
    pub flows: Vec<SeriesOf<FlowSeries>>,
    pub pings: Vec<SeriesOf<PingSeries>>,
    pub queues: Vec<SeriesOf<QueueSeries>>,
    pub wifi: Vec<SeriesOf<WifiSeries>>,
}

/// Everything a run produces.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub summary: RunSummary,
    pub flows: Vec<FlowSummary>,
    pub pings: Vec<PingSummary>,
    pub queues: Vec<QueueSummary>,
    pub wifi: Vec<WifiNodeSummary>,
    pub series: RunSeries,
    /// Every version-dependent behaviour of the kernel profile, as resolved for the run.
    pub profile: Profile,
}

/// Jain's fairness index (sum x)^2 / (n sum x^2); None for no flows or all zero.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    (n > 0.0 && s2 > 0.0).then(|| s * s / (n * s2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_of_equal_and_unequal_shares() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), Some(1.0));
        // (1+3)^2 / (2 * (1+9)) = 16/20
        assert_eq!(jain_index(&[1.0, 3.0]), Some(0.8));
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }
}
