//! Scenario tests of the wired path's physics: utilisation, queueing delay, losses, fairness and
//! the TSQ invariant, with tolerances stated against the formulas they come from.
//!
//! Path maximum TCP goodput: every full segment carries MSS = 1448 payload bytes in a frame of
//! MTU 1500 + 38 bytes of Ethernet framing, so goodput_max = rate x 1448 / 1538.

use serde_json::{json, Value};
use wificc_core::metrics::results::RunResult;
use wificc_core::scenario::{self, Scenario};

const RATE: f64 = 50e6;
const BASE_RTT_MS: f64 = 20.0;

fn max_goodput(rate: f64) -> f64 {
    rate * 1448.0 / 1538.0
}

fn run(v: Value) -> RunResult {
    let s = Scenario::from_value(v).expect("valid scenario");
    scenario::run(&s).expect("run")
}

/// One flow (+ ICMP ping) over 50 Mbit/s, 20 ms, with a drop-tail buffer of `buffer`.
fn one_flow(cc: &str, buffer: &str, seconds: u64) -> RunResult {
    run(json!({
        "duration": format!("{seconds}s"), "warmup": "5s",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms", "buffer": buffer},
        "flows": [{"cc": cc}],
        "pings": [{}],
    }))
}

#[test]
fn one_flow_utilisation_and_delay_on_a_one_bdp_buffer() {
    for (cc, min_share) in [("cubic", 0.95), ("bbr", 0.95), ("reno", 0.90)] {
        let r = one_flow(cc, "1bdp", 30);
        let share = r.flows[0].goodput_bps / max_goodput(RATE);
        assert!(
            share >= min_share,
            "{cc}: {:.1}% of the path maximum",
            share * 100.0
        );
        assert!(
            share <= 1.0 + 1e-9,
            "{cc}: goodput above the path maximum ({share})"
        );
        let p50 = r.pings[0].rtt_p50_ms.unwrap();
        match cc {
            // A loss-based flow keeps the drop-tail buffer partly full: the ping sees it.
            "cubic" => assert!(p50 >= 1.5 * BASE_RTT_MS, "cubic median ping {p50} ms"),
            // BBR paces at the estimated bandwidth and keeps little standing queue.
            "bbr" => assert!(p50 <= 1.35 * BASE_RTT_MS, "bbr median ping {p50} ms"),
            _ => {}
        }
    }
}

/// Retransmissions counted in the series after `from` seconds.
fn retrans_after(r: &RunResult, from: f64) -> u64 {
    let s = &r.series.flows[0].series;
    let at = |t: f64| s.t.iter().position(|&x| x >= t).map_or(0, |i| s.retrans[i]);
    s.retrans.last().copied().unwrap_or(0) - at(from)
}

#[test]
fn with_a_five_bdp_buffer_bbr_stops_losing_while_loss_based_ccas_fill_the_buffer() {
    let bbr = one_flow("bbr", "5bdp", 30);
    assert_eq!(
        retrans_after(&bbr, 5.0),
        0,
        "bbr retransmitted after startup"
    );
    // 5 BDP of 50 Mbit/s x 20 ms = 625,000 B -> 417 packets of 1500 B.
    let buffer_pkts = 417;
    for cc in ["cubic", "reno"] {
        let r = one_flow(cc, "5bdp", 30);
        let q = &r.queues[0];
        assert_eq!(q.name, "bottleneck");
        assert!(
            q.max_backlog_pkts as f64 >= 0.95 * buffer_pkts as f64,
            "{cc}: max backlog {}",
            q.max_backlog_pkts
        );
        assert!(retrans_after(&r, 5.0) > 0, "{cc}: no loss in steady state");
        // The standing queue shows in the ping: at least half the buffer (10 BDP-ms ~ 50 ms).
        assert!(
            r.pings[0].rtt_p50_ms.unwrap() >= BASE_RTT_MS + 0.5 * 100.0 * 0.5,
            "{cc}"
        );
    }
}

#[test]
fn two_cubic_flows_share_fairly() {
    let r = run(json!({
        "duration": "60s", "warmup": "10s",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic"}, {"cc": "cubic", "start": "1s"}],
    }));
    let jain = r.summary.jain.unwrap();
    assert!(jain >= 0.95, "Jain index {jain}");
    let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    assert!(total >= 0.95 * max_goodput(RATE), "total {total}");
}

/// The RTT through the path, from the ping's minimum, is the configured base RTT plus
/// serialisation: this pins the topology's delays.
#[test]
fn idle_ping_sees_the_base_rtt() {
    let r = run(json!({
        "duration": "3s",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms"},
        "pings": [{}],
    }));
    // Request and reply of 84 B (+38 framing): 2 x 122 x 8 / 50e6 = 39.04 us on the bottleneck
    // and 2 x 122 x 8 / 10e9 = 0.195 us on the two NICs.
    let expect_ms = 20.0 + (2.0 * 122.0 * 8.0 / 50e6 + 2.0 * 122.0 * 8.0 / 10e9) * 1e3;
    let got = r.pings[0].rtt_p50_ms.unwrap();
    assert!((got - expect_ms).abs() < 1e-3, "{got} vs {expect_ms}");
    assert_eq!(r.pings[0].sent, 15);
    assert_eq!(r.pings[0].received, 15);
}

/// TSQ: the bytes a socket has below TCP never exceed what the mode allows. The sender reports
/// the largest excess after any send (rate mode: limit + the skb just sent, as Linux checks the
/// limit before sending; static modes: the limit itself), and independently the host NIC's
/// queue can never hold more than the socket has below TCP.
#[test]
fn tsq_limit_holds_in_every_mode() {
    for (tsq, nic) in [
        ("1ms", "10gbit"),
        ("4ms", "10gbit"),
        ("1ms", "50mbit"),
        ("8ms", "50mbit"),
        ("static:10p", "50mbit"),
        ("static:30kb", "50mbit"),
    ] {
        for cc in ["cubic", "bbr"] {
            let r = run(json!({
                "duration": "10s",
                "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms", "buffer": "1bdp", "access_rate": nic},
                "stack": {"tsq": tsq},
                "flows": [{"cc": cc}],
            }));
            let f = &r.flows[0];
            assert!(
                f.tsq_max_excess <= 0,
                "{cc} {tsq} {nic}: excess {}",
                f.tsq_max_excess
            );
            let nic_q = r.queues.iter().find(|q| q.name == "client0-nic").unwrap();
            if tsq == "static:10p" {
                // At most 10 packets below TCP: at most 10 in the NIC queue (9 waiting behind
                // the one being serialised, as the dequeued packet leaves the queue).
                assert!(
                    nic_q.max_backlog_pkts <= 10,
                    "{cc}: NIC backlog {}",
                    nic_q.max_backlog_pkts
                );
            }
            if nic == "50mbit" {
                assert!(f.tsq_throttled > 0, "{cc} {tsq}: the limit never bound");
            }
        }
    }
    // Without TSQ the same sender floods its NIC queue: the limit is what kept it short.
    let r = run(json!({
        "duration": "10s",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms", "buffer": "1bdp", "access_rate": "50mbit"},
        "stack": {"tsq": "off"},
        "flows": [{"cc": "cubic"}],
    }));
    let nic_q = r.queues.iter().find(|q| q.name == "client0-nic").unwrap();
    assert!(
        nic_q.max_backlog_pkts > 100,
        "NIC backlog {}",
        nic_q.max_backlog_pkts
    );
}

/// BBR's mode sequence with Linux timings: Startup -> Drain -> ProbeBW, then ProbeRTT every
/// 10 s (bbr_min_rtt_win_sec) for at least 200 ms (bbr_probe_rtt_mode_ms) when min_rtt is not
/// refreshed (on a constant-delay path no RTT sample is ever strictly below the first minimum).
#[test]
fn bbr_mode_sequence_and_probe_rtt_timing() {
    let r = run(json!({
        "duration": "32s", "step": "5ms",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms", "buffer": "1bdp"},
        "flows": [{"cc": "bbr"}],
    }));
    let s = &r.series.flows[0].series;
    let modes: Vec<(f64, f64)> = s
        .model_t
        .iter()
        .zip(&s.model_name)
        .zip(&s.model_value)
        .filter(|((_, n), _)| **n == "mode")
        .map(|((t, _), v)| (*t, *v))
        .collect();
    // Collapse into (mode, first time, last time) runs.
    let mut runs: Vec<(u32, f64, f64)> = Vec::new();
    for (t, m) in modes {
        let m = m as u32;
        match runs.last_mut() {
            Some(last) if last.0 == m => last.2 = t,
            _ => runs.push((m, t, t)),
        }
    }
    let seq: Vec<u32> = runs.iter().map(|r| r.0).collect();
    assert_eq!(&seq[..3], &[0, 1, 2], "startup, drain, probe_bw: {seq:?}");
    let probe_rtt: Vec<&(u32, f64, f64)> = runs.iter().filter(|r| r.0 == 3).collect();
    assert!(
        probe_rtt.len() >= 2 && probe_rtt.len() <= 3,
        "ProbeRTT episodes: {probe_rtt:?}"
    );
    for (i, p) in probe_rtt.iter().enumerate() {
        let dur = p.2 - p.1 + 0.005;
        // 200 ms at cwnd 4, plus the round trip that must complete after it (~20 ms).
        assert!((0.2..0.3).contains(&dur), "ProbeRTT {i} lasted {dur} s");
        if i > 0 {
            let gap = p.1 - probe_rtt[i - 1].1;
            // Each ProbeRTT starts 10 s after the min_rtt stamp that the previous one refreshed.
            assert!((gap - 10.2).abs() < 0.1, "ProbeRTT interval {gap} s");
        }
    }
    assert!(
        (probe_rtt[0].1 - 10.0).abs() < 0.1,
        "first ProbeRTT at {} s",
        probe_rtt[0].1
    );
}

/// Between losses, cubic's cwnd follows W(t) = C (t - K)^3 + W_max (RFC 9438 / tcp_cubic.c,
/// C = 0.4, beta = 717/1024, K = cbrt(W_max (1 - beta) / C)), measured from the series of a
/// single flow on a large buffer.
#[test]
fn cubic_window_follows_the_cubic_function_between_losses() {
    let r = run(json!({
        "duration": "40s", "step": "10ms",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms", "buffer": "3bdp"},
        "flows": [{"cc": "cubic", "cc_params": {"fast_convergence": false}}],
    }));
    let s = &r.series.flows[0].series;
    // Loss events: where the retransmission count steps up.
    let losses: Vec<usize> = (1..s.retrans.len())
        .filter(|&i| s.retrans[i] > s.retrans[i - 1])
        .collect();
    assert!(
        losses.len() >= 4,
        "expected several loss epochs, got {}",
        losses.len()
    );
    let (a, b) = (losses[losses.len() - 2], losses[losses.len() - 1]);
    // W_max: the window when the loss was detected (no fast convergence).
    let w_max = s.cwnd[a - 3..=a].iter().copied().max().unwrap() as f64;
    let beta = 717.0 / 1024.0;
    let k = (w_max * (1.0 - beta) / 0.4).cbrt();
    // The epoch starts when recovery ends: the lowest window after the loss (PRR brings cwnd
    // down to ssthresh = beta x W_max over one round, then growth starts).
    let start = (a..b).min_by_key(|&i| s.cwnd[i]).unwrap();
    assert!(
        (s.cwnd[start] as f64 - beta * w_max).abs() <= 2.0,
        "epoch starts at {} for W_max {w_max}",
        s.cwnd[start]
    );
    let t0 = s.t[start];
    // tcp_cubic aims one min RTT (20 ms) ahead: cwnd(t) = W(t + min_rtt).
    let mut worst: f64 = 0.0;
    for i in start + 10..b.saturating_sub(2) {
        let t = s.t[i] - t0 + 0.020;
        let w = 0.4 * (t - k).powi(3) + w_max;
        worst = worst.max((s.cwnd[i] as f64 - w).abs() / w_max);
    }
    // Fixed-point rounding in the kernel's arithmetic, a 10 ms sampling grid and an epoch start
    // known to one step: within 3% of W_max.
    assert!(
        worst < 0.03,
        "worst relative deviation {worst} (W_max {w_max}, K {k})"
    );
}

/// The application's reads (`stack.read_delay`): behind the 20 Mbit/s shaper each skb's
/// segments arrive together, 1.8 ms apart. Read on arrival, every second segment is ACKed and
/// an skb's odd third one waits for the next skb; read 35 us after arrival, the window does not
/// advance while they are unread, so the read ACKs each skb whole: one ACK per skb (about
/// 3 segments, `skb_segs_mean`), and the smoothed RTT is shorter by the held segments' wait.
#[test]
fn reads_ack_each_burst_once() {
    let mut out = Vec::new();
    for delay in [json!(null), json!("35us")] {
        let r = run(json!({
            "duration": "10s", "warmup": "2s",
            "path": {"kind": "wired", "rate": "1gbit", "rtt": "20ms", "buffer": "1bdp"},
            "stack": {"host_shaper": {"rate": "20mbit"}, "tx_orphan": true,
                      "limit_output_bytes": "10kb", "read_delay": delay},
            "flows": [{"cc": "cubic"}],
        }));
        let f = &r.flows[0];
        out.push((
            f.segs_sent as f64 / f.acks_sent as f64,
            f.skb_segs_mean,
            f.goodput_bps,
        ));
    }
    let (on_arrival, read) = (out[0], out[1]);
    assert!((1.9..=2.1).contains(&on_arrival.0), "{on_arrival:?}");
    assert!((read.0 - read.1).abs() < 0.2 && read.0 > 2.5, "{read:?}");
    assert!((read.2 / on_arrival.2 - 1.0).abs() < 0.01, "{out:?}");
}

/// A host shaper (htb at 20 Mbit/s in front of a 10 Gbit/s NIC) is the path's bottleneck: it
/// charges each packet its IP length, so goodput approaches 20 Mbit/s x 1448 / 1500 (the NIC's
/// Ethernet framing is paid at 10 Gbit/s); the backlog waits in the host's qdisc: the 1 Gbit/s
/// path queues at most one skb, which the shaper lets through whole (at most GSO's 64 KB, 45
/// segments: slow start's first skbs, autosized from a pacing rate still far above the path's);
/// TSQ, with `tcp_limit_output_bytes` at 4 ms of the rate (as in the tsq-completion kernel
/// check), keeps the host's backlog short, so a ping through the same NIC sees little queueing.
#[test]
fn a_host_shaper_is_the_bottleneck_and_its_backlog_stays_at_the_host() {
    let max = 20e6 * 1448.0 / 1500.0;
    for cc in ["cubic", "bbr"] {
        let r = run(json!({
            "duration": "10s", "warmup": "2s",
            "path": {"kind": "wired", "rate": "1gbit", "rtt": "20ms", "buffer": "1bdp"},
            "stack": {"host_shaper": {"rate": "20mbit"}, "tx_orphan": true, "limit_output_bytes": "10kb"},
            "flows": [{"cc": cc}],
            "pings": [{}],
        }));
        let share = r.flows[0].goodput_bps / max;
        assert!((0.97..=1.001).contains(&share), "{cc}: {share}");
        let q = |name: &str| r.queues.iter().find(|q| q.name == name).unwrap();
        assert!(
            q("client0-nic").max_backlog_pkts >= 2,
            "{cc}: nothing waited at the shaper"
        );
        let path = q("bottleneck").max_backlog_pkts;
        assert!(
            (1..=45).contains(&path),
            "{cc}: {path} packets queued on the path"
        );
        let p50 = r.pings[0].rtt_p50_ms.unwrap();
        assert!((20.0..=26.0).contains(&p50), "{cc}: median ping {p50} ms");
        assert!(
            r.flows[0].tsq_max_excess <= 0 && r.flows[0].tsq_throttled > 0,
            "{cc}"
        );
    }
}
