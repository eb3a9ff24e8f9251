//! A run's progress hook (`World::run_reporting`, `api::run_text_reporting`): when it is called,
//! that it leaves results exactly as a run without it, and that returning false stops the run.

use serde_json::Value;
use wificc_core::api;
use wificc_core::scenario::Format;

const MS: u64 = 1_000_000;

/// One reno upload for 1 s over 10 Mbit/s, 20 ms.
const SCENARIO: &str = r#"
duration = "1s"
[path]
kind = "wired"
rate = "10mbit"
rtt = "20ms"
[[flows]]
cc = "reno"
"#;

/// The results without what measures the machine (wall time and the rates derived from it).
fn model_only(mut v: Value) -> Value {
    let summary = v["summary"].as_object_mut().expect("summary");
    for key in ["wall_s", "speed", "events_per_s"] {
        summary.remove(key);
    }
    v
}

#[test]
fn reports_every_100ms_of_simulated_time_and_leaves_results_as_they_are() {
    let plain = api::run_text(SCENARIO, Format::Toml).expect("runs");
    let mut reports: Vec<(u64, u64)> = Vec::new();
    let reported = api::run_text_reporting(SCENARIO, Format::Toml, 100 * MS, &mut |done, total| {
        reports.push((done, total));
        true
    })
    .expect("runs")
    .expect("not stopped");
    assert_eq!(model_only(reported), model_only(plain));
    // At every multiple of 100 ms before the end, once the events due by then have run: 9 in a
    // 1 s run (none at the end itself).
    let expected: Vec<(u64, u64)> = (1..10).map(|k| (k * 100 * MS, 1000 * MS)).collect();
    assert_eq!(reports, expected);
}

#[test]
fn a_report_that_returns_false_stops_the_run() {
    let mut calls = 0;
    let outcome = api::run_text_reporting(SCENARIO, Format::Toml, 100 * MS, &mut |_, _| {
        calls += 1;
        calls < 3
    })
    .expect("runs");
    assert!(outcome.is_none());
    assert_eq!(calls, 3);
}

#[test]
fn a_bad_scenario_is_an_error_before_any_report() {
    let mut calls = 0;
    let outcome =
        api::run_text_reporting("duration = \"-1s\"", Format::Toml, 100 * MS, &mut |_, _| {
            calls += 1;
            true
        });
    assert!(outcome.is_err());
    assert_eq!(calls, 0);
}
