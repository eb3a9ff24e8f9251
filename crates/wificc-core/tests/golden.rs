//! Golden results: the full output of a dozen scenarios (every qdisc, every congestion control,
//! Wi-Fi up, down and with several stations under each driver, a trace path, RRUL's classes)
//! reduced to one digest each and compared with the digests committed in `golden/digests.txt`.
//!
//! A refactoring or a speed-up must leave every digest as it is. A model change that is meant
//! to change results updates them deliberately, in the same commit, with the reason in its
//! message:
//!
//! ```text
//! WIFICC_GOLDEN_UPDATE=1 cargo test --profile ci -p wificc-core --test golden
//! ```
//!
//! The digest covers everything a run reports except what measures the machine rather than the
//! model (`wall_s`, `speed`, `events_per_s`) and the model fingerprint (`summary.model`, which
//! changes with every edit of the sources): per-flow, ping, queue and Wi-Fi summaries, every
//! time series, the resolved kernel profile, and the run-wide totals. It is FNV-1a (64 bits) of
//! the JSON text, which serde_json writes with shortest round-trip floats: a change in the last
//! bit of any reported number changes the digest.

use std::collections::BTreeMap;
use std::path::PathBuf;

#[path = "golden/scenarios.rs"]
mod golden_scenarios;
use golden_scenarios::{digest, fnv1a, scenarios};

fn digests_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/digests.txt")
}

fn committed() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(digests_file()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, d)| (name.to_string(), d.trim().to_string()))
        .collect()
}

#[test]
fn fnv1a_matches_its_published_test_vectors() {
    // From the FNV reference test suite: "" and "a", "foobar".
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn every_golden_scenario_reproduces_its_committed_digest() {
    let computed: BTreeMap<String, String> = scenarios("5s")
        .into_iter()
        .map(|(name, v)| (name.to_string(), format!("{:016x}", digest(v))))
        .collect();
    if std::env::var_os("WIFICC_GOLDEN_UPDATE").is_some() {
        let mut text = String::from(
            "# name digest: FNV-1a of each golden scenario's full output (tests/golden.rs).\n",
        );
        for (name, d) in &computed {
            text.push_str(&format!("{name} {d}\n"));
        }
        std::fs::write(digests_file(), text).expect("write golden digests");
        return;
    }
    let want = committed();
    let differ: Vec<String> = computed
        .iter()
        .filter(|(name, d)| want.get(*name) != Some(d))
        .map(|(name, d)| {
            format!(
                "{name}: committed {}, now {d}",
                want.get(name).map_or("none", |s| s)
            )
        })
        .collect();
    let stale: Vec<&String> = want.keys().filter(|k| !computed.contains_key(*k)).collect();
    assert!(
        differ.is_empty() && stale.is_empty(),
        "golden results changed ({} of {}):\n  {}\nno longer a scenario: {stale:?}\n\
         If the change is intended, update with WIFICC_GOLDEN_UPDATE=1 (see tests/golden.rs).",
        differ.len(),
        computed.len(),
        differ.join("\n  ")
    );
}

#[test]
fn the_same_scenario_twice_gives_the_same_digest() {
    let (_, v) = scenarios("5s").swap_remove(8);
    assert_eq!(digest(v.clone()), digest(v));
}
