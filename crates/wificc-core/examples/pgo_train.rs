//! The training run of the profile-guided build (`scripts/pgo.sh`): the golden scenarios (every
//! qdisc and congestion control, Wi-Fi under each driver, a trace path, RRUL's classes) and the
//! speed benchmark's workloads (`benches/sim.rs`), so that the profile weighs the paths in the
//! proportions real studies exercise them. It also checks that the instrumented build still gives
//! the committed golden digests (instrumentation must not change a result).
//!
//! ```text
//! cargo run --release --example pgo_train [SECONDS]     # default 5 per scenario
//! ```

use serde_json::{json, Value};
use wificc_core::scenario::{self, Scenario};

#[path = "../tests/golden/scenarios.rs"]
#[allow(dead_code)]
mod golden_scenarios;

/// The benchmark's workloads (`benches/sim.rs`), `secs` long.
fn bench_workloads(secs: &str) -> Vec<(&'static str, Value)> {
    let ax201 = |driver: Option<&str>| {
        let mut radio = json!({"chipset": "ax201"});
        if let Some(d) = driver {
            radio["driver"] = json!(d);
        }
        json!({"kind": "wifi", "rtt": "2.5ms", "backhaul": "1gbit", "radio": radio})
    };
    let wired = json!({"kind": "wired", "rate": "1gbit", "rtt": "10ms", "buffer": "1bdp"});
    vec![
        (
            "wired cubic 1 Gbit/s",
            json!({"duration": secs, "path": wired, "flows": [{"cc": "cubic"}]}),
        ),
        (
            "wired bbr 1 Gbit/s",
            json!({"duration": secs, "path": wired, "flows": [{"cc": "bbr"}]}),
        ),
        (
            "ax201 cubic upload",
            json!({"duration": secs, "path": ax201(None), "flows": [{"cc": "cubic"}]}),
        ),
        (
            "ax201 cubic upload, 32 ms TSQ",
            json!({"duration": secs, "path": ax201(None), "stack": {"tsq": "32ms"}, "flows": [{"cc": "cubic"}]}),
        ),
        (
            "ax201 cubic upload, generic driver",
            json!({"duration": secs, "path": ax201(Some("generic")), "flows": [{"cc": "cubic"}]}),
        ),
    ]
}

fn main() {
    let secs = std::env::args().nth(1).unwrap_or_else(|| "5".into());
    let secs = format!("{secs}s");
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/digests.txt"
    ))
    .unwrap_or_default();
    let mut failed = Vec::new();
    for (name, v) in golden_scenarios::scenarios("5s") {
        let want = committed
            .lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
            .map(str::trim);
        let got = format!("{:016x}", golden_scenarios::digest(v));
        if want.is_some_and(|w| w != got) {
            failed.push(format!(
                "{name}: committed {}, now {got}",
                want.unwrap_or("")
            ));
        }
        eprintln!("pgo_train: {name}");
    }
    for (name, v) in bench_workloads(&secs) {
        let s = Scenario::from_value(v).expect("valid workload");
        scenario::run(&s).expect("workload runs");
        eprintln!("pgo_train: {name}");
    }
    if !failed.is_empty() {
        eprintln!(
            "pgo_train: the instrumented build changed golden results:\n  {}",
            failed.join("\n  ")
        );
        std::process::exit(1);
    }
}
