//! Run a scenario file (TOML or JSON) and print its summary as JSON, without the Python front
//! end: `cargo run --release --example run_scenario -- scenario.toml [--series]`.

use std::process::ExitCode;

use wificc_core::scenario::{self, Format, Scenario};

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run_scenario FILE.toml|FILE.json");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let format = if path.ends_with(".json") {
        Format::Json
    } else {
        Format::Toml
    };
    let result = Scenario::parse(&text, format).and_then(|s| scenario::run(&s));
    match result {
        Ok(r) => {
            let mut out = serde_json::json!({"summary": r.summary, "flows": r.flows, "pings": r.pings, "queues": r.queues, "wifi": r.wifi});
            if std::env::args().any(|a| a == "--series") {
                out["series"] = serde_json::to_value(&r.series).unwrap_or_default();
            }
            println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            ExitCode::FAILURE
        }
    }
}
