//! Every registered congestion control on the wired reference path: it must move data without
//! stalls and report utilisation and ping; and with 1% random loss the BBR family (which does
//! not treat isolated losses as congestion) keeps the link busy while loss-based AIMD cannot.
//! Reno's steady state under random loss p is ~ 1.22 MSS / (RTT sqrt(p)) (Mathis et al. 1997):
//! 1.22 x 1448 x 8 / (0.02 x 0.1) = 7.1 Mbit/s, 15% of the 47 Mbit/s path.

use serde_json::json;
use wificc_core::cc::registry;
use wificc_core::metrics::results::RunResult;
use wificc_core::scenario::{self, Scenario};

const MAX_GOODPUT: f64 = 50e6 * 1448.0 / 1538.0;

fn run(cc: &str, loss: f64) -> RunResult {
    let s = Scenario::from_value(json!({
        "duration": "25s", "warmup": "5s",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms", "buffer": "1bdp", "loss": loss},
        "flows": [{"cc": cc}],
        "pings": [{}],
    }))
    .unwrap();
    scenario::run(&s).unwrap()
}

#[test]
fn every_cca_fills_a_clean_path_without_stalls() {
    for info in registry::all() {
        let r = run(info.name, 0.0);
        let f = &r.flows[0];
        let share = f.goodput_bps / MAX_GOODPUT;
        assert!(
            share > 0.85,
            "{}: {:.1}% of the path",
            info.name,
            share * 100.0
        );
        // No stall: every 200 ms sample after the warm-up delivered data.
        let s = &r.series.flows[0].series;
        let idle =
            s.t.iter()
                .zip(&s.goodput_bps)
                .filter(|(t, g)| **t > 5.0 && **g == 0.0)
                .count();
        assert_eq!(idle, 0, "{}: {idle} idle samples", info.name);
        assert_eq!(f.rto_count, 0, "{}: retransmission timeouts", info.name);
        assert!(r.pings[0].rtt_p50_ms.is_some(), "{}: no ping", info.name);
        assert!(
            r.queues[0].utilization > 0.85,
            "{}: utilisation {}",
            info.name,
            r.queues[0].utilization
        );
    }
}

#[test]
fn bbr_family_keeps_the_link_busy_under_one_percent_random_loss() {
    for cc in [
        "bbr", "bbrp", "bbrn", "bbr_apg", "bbr_pg", "bbr2", "bbr3", "bbrn3",
    ] {
        let r = run(cc, 0.01);
        let share = r.flows[0].goodput_bps / MAX_GOODPUT;
        assert!(share > 0.60, "{cc}: {:.1}% under 1% loss", share * 100.0);
        assert!(r.queues[0].random_losses > 0);
    }
    for cc in ["reno", "cubic"] {
        let share = run(cc, 0.01).flows[0].goodput_bps / MAX_GOODPUT;
        assert!(share < 0.60, "{cc}: {:.1}% under 1% loss", share * 100.0);
    }
}

/// DCTCP with ECN step marking at K packets (RFC 8257, the DCTCP paper's switch): the queue
/// stays near K, nothing is dropped, the link stays busy; loss-based reno on the same marking
/// queue (no ECN) fills the buffer instead.
#[test]
fn dctcp_holds_the_queue_at_the_marking_threshold() {
    let run_cc = |cc: &str| {
        let s = Scenario::from_value(json!({
            "duration": "20s", "warmup": "5s",
            "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms",
                     "qdisc": {"kind": "ecn_step", "limit": "200p", "k": 20}},
            "flows": [{"cc": cc}],
        }))
        .unwrap();
        scenario::run(&s).unwrap()
    };
    let d = run_cc("dctcp");
    let q = &d.queues[0];
    assert!(q.ecn_marked > 0, "no CE marks");
    assert_eq!(
        q.dropped, 0,
        "DCTCP should not overflow a 200-packet buffer"
    );
    assert!(
        d.flows[0].goodput_bps / MAX_GOODPUT > 0.95,
        "{}",
        d.flows[0].goodput_bps
    );
    // K = 20 packets of 1538 B at 50 Mbit/s drain in 4.92 ms; the queue oscillates around K.
    let p95 = q.sojourn_p95_ms.unwrap();
    assert!(p95 < 2.0 * 4.92, "p95 sojourn {p95} ms");
    let r = run_cc("reno");
    assert!(
        r.queues[0].dropped > 0,
        "reno ignores CE without ECN and overflows"
    );
    assert!(r.queues[0].sojourn_p95_ms.unwrap() > 3.0 * p95);
}
