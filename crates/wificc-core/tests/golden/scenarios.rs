//! The golden scenarios and their digest, shared by the golden-results test (`tests/golden.rs`)
//! and the profile-guided-optimisation trainer (`examples/pgo_train.rs`), which runs the same
//! spread of models.

use serde_json::{json, Value};
use wificc_core::scenario::{self, Scenario};

/// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn wired(rate: &str, rtt: &str, qdisc: Value) -> Value {
    json!({"kind": "wired", "rate": rate, "rtt": rtt, "buffer": "1bdp", "qdisc": qdisc})
}

fn wifi(chipset: &str, stations: u32) -> Value {
    json!({"kind": "wifi", "rtt": "4ms", "stations": stations, "radio": {"chipset": chipset}})
}

/// The scenarios, by name, each `secs` long (the golden test runs five simulated seconds each,
/// so that the whole file runs in seconds).
pub fn scenarios(secs: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "wired-pfifo-cubic-reno-ping",
            json!({"duration": secs, "path": wired("50mbit", "20ms", json!({"kind": "pfifo"})),
                   "flows": [{"cc": "cubic"}, {"cc": "reno", "start": "1s"}], "pings": [{}]}),
        ),
        (
            "wired-bfifo-bbr-bbr3",
            json!({"duration": secs, "path": wired("100mbit", "10ms", json!({"kind": "bfifo"})),
                   "flows": [{"cc": "bbr"}, {"cc": "bbr3"}], "pings": [{"kind": "udp"}]}),
        ),
        (
            "wired-fq_codel-bbr2-cubic",
            json!({"duration": secs, "path": wired("50mbit", "40ms", json!({"kind": "fq_codel"})),
                   "flows": [{"cc": "bbr2"}, {"cc": "cubic", "direction": "down"}], "pings": [{}]}),
        ),
        (
            "wired-codel-vegas-veno",
            json!({"duration": secs, "path": wired("20mbit", "30ms", json!({"kind": "codel"})),
                   "flows": [{"cc": "vegas"}, {"cc": "veno"}]}),
        ),
        (
            "wired-pie-nv-yeah-highspeed",
            json!({"duration": secs, "path": wired("50mbit", "20ms", json!({"kind": "pie"})),
                   "flows": [{"cc": "nv"}, {"cc": "yeah"}, {"cc": "highspeed"}]}),
        ),
        (
            "wired-ecn_step-dctcp",
            json!({"duration": secs, "path": wired("1gbit", "2ms", json!({"kind": "ecn_step"})),
                   "flows": [{"cc": "dctcp"}, {"cc": "dctcp", "start": "2s"}]}),
        ),
        (
            "wired-pfifo_fast-bbr_pg-bbrn3",
            json!({"duration": secs, "path": wired("100mbit", "50ms", json!({"kind": "pfifo_fast"})),
                   "flows": [{"cc": "bbr_pg"}, {"cc": "bbrn3"}]}),
        ),
        (
            "wifi-generic-up-cubic",
            json!({"duration": secs,
                   "path": {"kind": "wifi", "rtt": "2.5ms", "backhaul": "1gbit",
                            "radio": {"chipset": "ax201", "driver": "generic"}},
                   "flows": [{"cc": "cubic"}], "pings": [{}]}),
        ),
        (
            "wifi-ath9k-4.19-bbrp-up-cubic-down",
            json!({"duration": secs, "path": wifi("ath9k", 1), "stack": {"kernel": "4.19", "tsq": "4ms"},
                   "flows": [{"cc": "bbrp"}, {"cc": "cubic", "direction": "down"}], "pings": [{}]}),
        ),
        (
            "wifi-ath9k-htc-5.13-bbrn-up",
            json!({"duration": secs, "path": wifi("ath9k-htc", 1), "stack": {"kernel": "5.13"},
                   "flows": [{"cc": "bbrn"}, {"cc": "bbr2"}], "pings": [{}]}),
        ),
        (
            "wifi-ath10k-2sta-bbr-down",
            json!({"duration": secs, "path": wifi("ath10k", 2),
                   "flows": [{"cc": "bbr", "direction": "down"}, {"cc": "cubic", "client": 1}],
                   "pings": [{"client": 1}]}),
        ),
        (
            "wifi-ax201-5.4-4sta-up",
            json!({"duration": secs, "path": wifi("ax201", 4), "stack": {"kernel": "5.4"},
                   "flows": [{"cc": "bbr2"}, {"cc": "cubic", "client": 1}, {"cc": "bbr", "client": 2},
                             {"cc": "reno", "client": 3, "direction": "down"}]}),
        ),
        (
            "wifi-ath9k-4.19-rrul-classes",
            json!({"duration": secs, "path": wifi("ath9k", 1), "stack": {"kernel": "4.19", "tsq": "4ms"},
                   "flows": [{"cc": "bbr", "dscp": 0}, {"cc": "bbr", "dscp": 8}, {"cc": "bbr", "dscp": 40},
                             {"cc": "bbr", "dscp": 46},
                             {"cc": "cubic", "dscp": 0, "direction": "down"},
                             {"cc": "cubic", "dscp": 46, "direction": "down"}],
                   "pings": [{}, {"kind": "udp", "dscp": 46, "start": "3ms"}, {"kind": "udp", "dscp": 8, "start": "7ms"}]}),
        ),
        (
            "trace-schedule-bbr_apg-bbr",
            json!({"duration": secs,
                   "path": {"kind": "trace", "rtt": "100ms",
                            "uplink": {"schedule": [{"at": "0s", "rate": "100mbit"}]},
                            "downlink": {"schedule": [{"at": "0s", "rate": "12mbit"}, {"at": "2s", "rate": "4mbit"},
                                                      {"at": "3500ms", "rate": "20mbit"}]}},
                   "flows": [{"cc": "bbr_apg", "direction": "down"}, {"cc": "bbr", "direction": "down"}],
                   "pings": [{}]}),
        ),
    ]
}

/// One run's digest, over everything it reports but the machine's speed and the model hash.
pub fn digest(v: Value) -> u64 {
    let s = Scenario::from_value(v).expect("valid golden scenario");
    let r = scenario::run(&s).expect("golden run");
    let mut summary = serde_json::to_value(&r.summary).expect("summary serialises");
    let fields = summary.as_object_mut().expect("summary is an object");
    for volatile in ["model", "wall_s", "speed", "events_per_s"] {
        fields.remove(volatile);
    }
    let text = serde_json::to_string(&(
        &summary, &r.flows, &r.pings, &r.queues, &r.wifi, &r.series, &r.profile,
    ))
    .expect("result serialises");
    fnv1a(text.as_bytes())
}
