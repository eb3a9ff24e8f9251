//! Every packet ends: once every flow and ping has stopped and the network has drained, no
//! packet is left in the world's packet slots, whatever the path dropped on the way (tail
//! drop, head drop, AQM drops and marks, random loss, trace links, Wi-Fi TXQ overflow, MPDU
//! errors and the retry limit).

use serde_json::{json, Value};
use wificc_core::scenario::{self, Scenario};

/// Build `v`, run it to its end (every flow and ping stops at least 2 s earlier) and return
/// the packets left, and the packets in the network at the flows' stop.
fn left_after(v: Value, stop: u64) -> (usize, usize) {
    let s = Scenario::from_value(v).expect("valid scenario");
    let mut world = scenario::build(&s).expect("build");
    world.run(stop * 1_000_000_000);
    let busy = world.packets_in_network();
    world.run(s.duration.0);
    (world.packets_in_network(), busy)
}

#[test]
fn no_packet_outlives_the_flows_that_sent_it() {
    let cases = [
        json!({"duration": "6s",
               "path": {"kind": "wired", "rate": "20mbit", "rtt": "20ms", "buffer": "0.5bdp", "loss": 0.01},
               "flows": [{"cc": "cubic", "stop": "4s"}, {"cc": "bbr", "direction": "down", "stop": "4s"}],
               "pings": [{"stop": "4s"}]}),
        json!({"duration": "6s",
               "path": {"kind": "wired", "rate": "20mbit", "rtt": "20ms", "buffer": "0.3bdp",
                        "qdisc": {"kind": "pfifo", "head_drop": true}},
               "flows": [{"cc": "reno", "stop": "4s"}, {"cc": "reno", "stop": "4s"}]}),
        json!({"duration": "6s",
               "path": {"kind": "wired", "rate": "20mbit", "rtt": "20ms", "buffer": "4bdp",
                        "qdisc": {"kind": "fq_codel"}},
               "flows": [{"cc": "cubic", "stop": "4s"}, {"cc": "bbr", "stop": "4s"}],
               "pings": [{"stop": "4s", "kind": "udp"}]}),
        json!({"duration": "6s",
               "path": {"kind": "wired", "rate": "20mbit", "rtt": "20ms", "buffer": "4bdp",
                        "qdisc": {"kind": "pie", "ecn": true}},
               "stack": {"ecn": true},
               "flows": [{"cc": "cubic", "stop": "4s"}]}),
        json!({"duration": "8s",
               "path": {"kind": "trace", "rtt": "50ms",
                        "uplink": {"schedule": [{"at": "0s", "rate": "12mbit"}, {"at": "2s", "rate": "3mbit"}],
                                   "queue": {"kind": "codel"}, "loss": 0.01},
                        "downlink": {"schedule": [{"at": "0s", "rate": "24mbit"}],
                                     "queue": {"kind": "pfifo", "limit": "30p"}}},
               "flows": [{"cc": "cubic", "stop": "4s"}, {"cc": "bbr", "direction": "down", "stop": "4s"}]}),
        json!({"duration": "6s",
               "path": {"kind": "wifi", "rtt": "5ms", "stations": 2,
                        "radio": {"chipset": "ath9k", "mpdu_error_rate": 0.3, "retry_limit": 1,
                                  "txq": {"kind": "pfifo", "limit": 20}}},
               "stack": {"tsq": "static:200p"},
               "flows": [{"cc": "cubic", "client": 0, "stop": "4s"},
                         {"cc": "bbr", "client": 1, "direction": "down", "stop": "4s"}],
               "pings": [{"client": 1, "stop": "4s"}]}),
        // The same through each driver family's own paths (firmware rings, moderated TX
        // statuses and receptions, slots held until the status).
        json!({"duration": "6s",
               "path": {"kind": "wifi", "rtt": "5ms", "stations": 2,
                        "radio": {"chipset": "ath9k", "driver": "ath9k", "mpdu_error_rate": 0.3,
                                  "retry_limit": 1, "txq": {"kind": "pfifo", "limit": 20}}},
               "stack": {"tsq": "static:200p"},
               "flows": [{"cc": "cubic", "client": 0, "stop": "4s"},
                         {"cc": "bbr", "client": 1, "direction": "down", "stop": "4s"}],
               "pings": [{"client": 1, "stop": "4s"}]}),
        json!({"duration": "6s",
               "path": {"kind": "wifi", "rtt": "5ms", "stations": 2,
                        "radio": {"chipset": "ax201", "mpdu_error_rate": 0.3, "retry_limit": 1,
                                  "driver": {"kind": "iwlwifi", "ring": 16},
                                  "txq": {"kind": "pfifo", "limit": 20}}},
               "stack": {"tsq": "static:200p"},
               "flows": [{"cc": "cubic", "client": 0, "stop": "4s"},
                         {"cc": "bbr", "client": 1, "direction": "down", "stop": "4s"}],
               "pings": [{"client": 1, "stop": "4s"}]}),
        json!({"duration": "6s",
               "path": {"kind": "wifi", "rtt": "5ms", "stations": 2,
                        "radio": {"chipset": "ath10k", "mpdu_error_rate": 0.1, "retry_limit": 1,
                                  "driver": "ath9k_htc"}},
               "flows": [{"cc": "cubic", "client": 0, "stop": "4s"},
                         {"cc": "cubic", "client": 1, "direction": "down", "stop": "4s"}]}),
    ];
    for (i, v) in cases.into_iter().enumerate() {
        let (left, busy) = left_after(v, 4);
        assert!(
            busy > 0,
            "case {i}: the network should be busy when the flows stop"
        );
        assert_eq!(left, 0, "case {i}: packets left after the network drained");
    }
}
