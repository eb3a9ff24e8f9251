//! The trace-driven path end to end (Mahimahi semantics): TCP over a rate schedule and over a
//! trace file, with an infinite queue and 100 ms base RTT as in the BBR-APG study.
//! Each opportunity carries one 1500-byte IP packet, so goodput_max = rate x 1448 / 1500.

use serde_json::{json, Value};
use wificc_core::metrics::results::RunResult;
use wificc_core::scenario::{self, Scenario};

fn run(v: Value) -> RunResult {
    scenario::run(&Scenario::from_value(v).expect("valid scenario")).expect("run")
}

fn schedule_path(steps: Value) -> Value {
    json!({"kind": "trace", "rtt": "100ms", "uplink": {"schedule": [{"at": "0s", "rate": "100mbit"}]}, "downlink": {"schedule": steps}})
}

#[test]
fn download_fills_a_constant_rate_schedule() {
    let r = run(json!({
        "duration": "30s", "warmup": "10s",
        "path": schedule_path(json!([{"at": "0s", "rate": "12mbit"}])),
        "flows": [{"cc": "bbr", "direction": "down"}],
        "pings": [{}],
    }));
    let max = 12e6 * 1448.0 / 1500.0;
    let share = r.flows[0].goodput_bps / max;
    assert!((0.93..=1.0 + 1e-9).contains(&share), "bbr share {share}");
    let down = r.queues.iter().find(|q| q.name == "downlink").unwrap();
    assert!(
        down.utilization > 0.95,
        "downlink utilisation {}",
        down.utilization
    );
    assert!(down.signal_delay_p95_ms.is_some());
    // Idle-path RTT is 100 ms; BBR keeps the queue small on a constant link.
    let p50 = r.pings[0].rtt_p50_ms.unwrap();
    assert!((100.0..140.0).contains(&p50), "ping p50 {p50}");
}

#[test]
fn cubic_bloats_an_infinite_queue_while_bbr_does_not() {
    let run_cc = |cc: &str| {
        run(json!({
            "duration": "30s", "warmup": "10s",
            "path": schedule_path(json!([{"at": "0s", "rate": "12mbit"}])),
            "flows": [{"cc": cc, "direction": "down"}],
        }))
    };
    let q95 = |r: &RunResult| {
        r.queues
            .iter()
            .find(|q| q.name == "downlink")
            .unwrap()
            .sojourn_p95_ms
            .unwrap()
    };
    let (cubic, bbr) = (run_cc("cubic"), run_cc("bbr"));
    assert!(
        q95(&cubic) > 3.0 * q95(&bbr),
        "cubic p95 {} vs bbr {}",
        q95(&cubic),
        q95(&bbr)
    );
    assert!(
        q95(&cubic) > 200.0,
        "an infinite queue under cubic grows past 2 BDP-ms: {}",
        q95(&cubic)
    );
}

#[test]
fn bbr_follows_a_rate_step() {
    let r = run(json!({
        "duration": "20s", "step": "500ms",
        "path": schedule_path(json!([{"at": "0s", "rate": "12mbit"}, {"at": "3s", "rate": "24mbit"}])),
        "flows": [{"cc": "bbr", "direction": "down"}],
    }));
    let s = &r.series.flows[0].series;
    let mean = |from: f64, to: f64| {
        let v: Vec<f64> =
            s.t.iter()
                .zip(&s.goodput_bps)
                .filter(|(t, _)| **t > from && **t <= to)
                .map(|(_, g)| *g)
                .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(
        mean(1.0, 3.0) < 12.1e6,
        "before the step: {}",
        mean(1.0, 3.0)
    );
    let after = mean(10.0, 20.0);
    assert!(
        after > 0.9 * 24e6 * 1448.0 / 1500.0,
        "after the step: {after}"
    );
}

#[test]
fn trace_file_path_and_errors() {
    let dir = std::env::temp_dir().join(format!("wificc-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One opportunity per ms for 10 ms, twice in the 5th ms: 11 x 1500 B per 10 ms = 13.2 Mbit/s.
    let trace = dir.join("small.down");
    let lines: Vec<String> = (1..=10)
        .flat_map(|ms| if ms == 5 { vec![5, 5] } else { vec![ms] })
        .map(|m| m.to_string())
        .collect();
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let r = run(json!({
        "duration": "20s", "warmup": "5s",
        "path": {"kind": "trace", "rtt": "40ms", "uplink": {"schedule": [{"at": "0s", "rate": "100mbit"}]}, "downlink": {"trace": trace.to_str().unwrap()}},
        "flows": [{"cc": "cubic", "direction": "down"}],
    }));
    let max = 13.2e6 * 1448.0 / 1500.0;
    let share = r.flows[0].goodput_bps / max;
    assert!((0.95..=1.0 + 1e-9).contains(&share), "share {share}");
    let missing = Scenario::from_value(json!({
        "path": {"kind": "trace", "rtt": "40ms", "uplink": {"trace": "/nonexistent/x.up"}, "downlink": {"schedule": [{"at": "0s", "rate": "1mbit"}]}},
        "flows": [{}],
    }))
    .and_then(|s| scenario::run(&s).map(|_| ()))
    .unwrap_err();
    assert_eq!(missing.field, "path.uplink");
    assert!(
        missing.message.contains("/nonexistent/x.up"),
        "{}",
        missing.message
    );
    std::fs::remove_dir_all(&dir).ok();
}
