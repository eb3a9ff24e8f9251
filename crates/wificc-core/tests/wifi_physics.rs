//! Wi-Fi scenario tests: the whole stack (TCP, TSQ, the BSS) against the analytic model of the
//! Wi-Fi 6 study and against the physics of contention and aggregation.

use serde_json::{json, Value};
use wificc_core::metrics::results::RunResult;
use wificc_core::scenario::{self, Scenario};

fn run(v: Value) -> RunResult {
    scenario::run(&Scenario::from_value(v).expect("valid scenario")).expect("run")
}

/// Future of TCP on Wi-Fi 6 (2021), eqs. 3-4: TxTw(k) = (k l + l_oh) 8 / r + t_oh,
/// Thr(k) = k l 8 / TxTw(k), with its Table 1's reference
/// l = 1500 B, l_oh = 48 B, r = 2.4 Gbit/s, t_oh = 0.5 ms.
fn thr(k: f64) -> f64 {
    let txtw = (k * 1500.0 + 48.0) * 8.0 / 2.4e9 + 0.5e-3;
    k * 1500.0 * 8.0 / txtw
}

/// A saturated station whose only limit is a static TSQ of k packets delivers Thr(k): the
/// aggregate holds exactly what TSQ lets below TCP. IP throughput = goodput x 1500 / 1448.
#[test]
fn analytic_mac_delivers_thr_k_under_a_static_tsq_of_k_packets() {
    for k in [1u32, 4, 16, 64, 71, 72, 200, 400, 799] {
        let r = run(json!({
            "duration": "4s", "warmup": "1s",
            "path": {"kind": "wifi", "rtt": "2.5ms", "backhaul": "10gbit",
                     "radio": {"chipset": "ax201", "driver": "generic", "ba_window": 1024, "hw_queue_depth": 1,
                               "mac": {"kind": "analytic", "t_oh": "0.5ms", "l_oh": 48, "rate": "2.4gbit"}}},
            "stack": {"tsq": format!("static:{k}p")},
            "flows": [{"cc": "cubic", "cc_params": {"hystart": false}}],
        }));
        let ip = r.flows[0].goodput_bps * 1500.0 / 1448.0;
        let ratio = ip / thr(k as f64);
        assert!(
            (ratio - 1.0).abs() < 0.03,
            "k = {k}: {ip} vs Thr(k) = {} ({ratio})",
            thr(k as f64)
        );
        let sta = &r.wifi[1];
        assert!(
            (sta.ampdu_mean.unwrap() - k as f64).abs() < 0.5,
            "k = {k}: A-MPDU {:?}",
            sta.ampdu_mean
        );
    }
}

/// Two stations uploading with the same CCA share the medium fairly (EDCA gives equal
/// transmission opportunities and equal aggregates under saturation).
#[test]
fn two_stations_share_fairly() {
    for cc in ["cubic", "bbr"] {
        let r = run(json!({
            "duration": "60s", "warmup": "10s",
            "path": {"kind": "wifi", "rtt": "2ms", "stations": 2,
                     "radio": {"chipset": "ath9k", "driver": "generic"}},
            "flows": [{"cc": cc, "client": 0}, {"cc": cc, "client": 1, "start": "0.5s"}],
        }));
        let jain = r.summary.jain.unwrap();
        assert!(
            jain >= 0.9,
            "{cc}: Jain {jain} ({:?})",
            r.flows.iter().map(|f| f.goodput_bps).collect::<Vec<_>>()
        );
        assert!(
            r.wifi[1].collisions > 0,
            "{cc}: no collisions between two saturated stations"
        );
    }
}

/// Aggregation grows with the backlog TSQ lets into the radio: a larger TSQ gives larger
/// A-MPDUs and (up to the link's capacity) more goodput; a static 1-packet TSQ disables
/// aggregation.
#[test]
fn tsq_controls_aggregation() {
    let upload = |tsq: &str, cc: &str| {
        run(json!({
            "duration": "10s", "warmup": "3s",
            "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath9k"}},
            "stack": {"tsq": tsq},
            "flows": [{"cc": cc}],
        }))
    };
    let one = upload("static:1p", "cubic");
    assert!((one.wifi[1].ampdu_mean.unwrap() - 1.0).abs() < 1e-9);
    let big = upload("static:64p", "cubic");
    assert!(big.wifi[1].ampdu_mean.unwrap() > 20.0);
    assert!(big.flows[0].goodput_bps > 3.0 * one.flows[0].goodput_bps);
    for cc in ["bbr", "cubic"] {
        let small = upload("1ms", cc).wifi[1].ampdu_mean.unwrap();
        let large = upload("8ms", cc).wifi[1].ampdu_mean.unwrap();
        assert!(
            large >= small,
            "{cc}: A-MPDU {small} at 1 ms TSQ, {large} at 8 ms"
        );
    }
}

/// A Block Ack frees its MPDUs' skbs together and the kernel's TSQ tasklet runs once after
/// the batch (`tcp_wfree`, `tcp_tsq_handler`): a socket is throttled at most once per
/// aggregate its station sends, not once per MPDU.
#[test]
fn a_block_ack_runs_the_tsq_handler_once() {
    let r = run(json!({
        "duration": "5s", "warmup": "1s",
        "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ax201"}},
        "stack": {"tsq": "1ms"},
        "flows": [{"cc": "cubic"}],
    }));
    let (throttled, ppdus) = (r.flows[0].tsq_throttled, r.wifi[1].ppdus);
    assert!(
        throttled > 100,
        "TSQ should bind at 1 ms: {throttled} throttles"
    );
    assert!(
        throttled <= ppdus,
        "{throttled} throttles for {ppdus} aggregates"
    );
}

/// iwlwifi (ax201): the Block Ack notifications reach the host behind the 2048 us interrupt
/// coalescing timer, and TSQ releases a packet only then. So a static TSQ of k packets lets at
/// most k packets out per coalescing period: goodput <= k x 1448 x 8 / 2048 us, whatever the
/// radio could carry; without the coalescing the same k packets cycle many times faster. The
/// TSQ handler runs once per interrupt, not once per Block Ack.
#[test]
fn coalesced_tx_completions_cap_a_static_tsq() {
    let upload = |driver: Value| {
        run(json!({
            "duration": "4s", "warmup": "1s",
            "path": {"kind": "wifi", "rtt": "2.5ms", "backhaul": "10gbit",
                     "radio": {"chipset": "ax201", "driver": driver}},
            "stack": {"tsq": "static:32p"},
            "flows": [{"cc": "cubic"}],
        }))
    };
    let r = upload(json!("iwlwifi"));
    let cap = 32.0 * 1448.0 * 8.0 / 2.048e-3;
    let (f, sta) = (&r.flows[0], &r.wifi[1]);
    assert!(
        f.goodput_bps <= cap && f.goodput_bps > 0.6 * cap,
        "{} vs cap {cap}",
        f.goodput_bps
    );
    assert!(sta.tx_completion_p50_ms.unwrap() >= 2.0);
    assert!(
        f.tsq_throttled <= sta.tx_interrupts && sta.tx_interrupts < sta.ppdus,
        "{} throttles, {} interrupts, {} PPDUs",
        f.tsq_throttled,
        sta.tx_interrupts,
        sta.ppdus
    );
    let fast = upload(json!({"kind": "iwlwifi", "tx_status": {}, "rx": {}}));
    assert!(
        fast.flows[0].goodput_bps > 2.0 * f.goodput_bps,
        "{} vs {}",
        fast.flows[0].goodput_bps,
        f.goodput_bps
    );
}

/// A download: data queue at the AP, TCP ACKs from the station; TSQ belongs to the server,
/// whose NIC completes packets long before they reach the radio.
#[test]
fn download_through_the_ap() {
    let r = run(json!({
        "duration": "10s", "warmup": "3s",
        "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath10k"}},
        "flows": [{"cc": "cubic", "direction": "down"}],
        "pings": [{}],
    }));
    assert!(r.flows[0].goodput_bps > 300e6, "{}", r.flows[0].goodput_bps);
    assert!(
        r.wifi[0].ampdu_mean.unwrap() > 10.0,
        "AP aggregates {:?}",
        r.wifi[0].ampdu_mean
    );
}

/// Under a static TSQ an skb fills the room left below TCP, and the TSQ handler runs once per
/// Block Ack. Unpaced cubic refills at once what each Block Ack freed, so its 32-packet budget
/// stays split across the two hardware-queue slots in small skbs; paced BBR lets the freed room
/// accumulate until its pacing time and hands down skbs that fill whole aggregates. Either
/// way the station's A-MPDUs are about as large as the skbs (measured: cubic 10.0 segments per
/// skb and 11.2 MPDUs per A-MPDU, 268 Mbit/s; bbr 28.9 and 28.5, 555 Mbit/s).
#[test]
fn under_a_static_tsq_the_skbs_a_cca_hands_down_set_the_aggregate_size() {
    let upload = |cc: &str, offloads: bool| {
        run(json!({
            "duration": "4s", "warmup": "1s",
            "path": {"kind": "wifi", "rtt": "2.5ms", "backhaul": "1gbit",
                     "radio": {"chipset": "ax201", "driver": "generic"}},
            "stack": {"tsq": "static:32p", "offloads": offloads},
            "flows": [{"cc": cc}],
        }))
    };
    let mut sizes = Vec::new();
    for cc in ["cubic", "bbr"] {
        let r = upload(cc, true);
        let (f, sta) = (&r.flows[0], &r.wifi[1]);
        assert_eq!(f.skb_segs_mean, f.segs_sent as f64 / f.skbs_sent as f64);
        assert!(f.skb_segs_mean <= 32.0, "{cc}: {}", f.skb_segs_mean);
        let ampdu = sta.ampdu_mean.expect("the station sent A-MPDUs");
        let ratio = ampdu / f.skb_segs_mean;
        assert!(
            (0.8..1.25).contains(&ratio),
            "{cc}: A-MPDU {} vs skb {}",
            ampdu,
            f.skb_segs_mean
        );
        sizes.push((f.skb_segs_mean, f.goodput_bps));
    }
    let ((cubic_skb, cubic_bps), (bbr_skb, bbr_bps)) = (sizes[0], sizes[1]);
    assert!(
        bbr_skb > 2.0 * cubic_skb && bbr_bps > 1.5 * cubic_bps,
        "{sizes:?}"
    );
    // Without offloads every skb is one segment.
    assert_eq!(upload("cubic", false).flows[0].skb_segs_mean, 1.0);
}

/// Every driver family, with MPDU errors, two stations, both directions and pings: the same
/// scenario and seed give identical results (every summary and series), and no packet is left
/// unaccounted for by the run's end (the packet store is checked by `packet_lifetime.rs`).
#[test]
fn every_driver_is_deterministic() {
    for driver in ["generic", "ath9k", "ath9k_htc", "ath10k", "iwlwifi"] {
        let doc = json!({
            "duration": "3s", "warmup": "0.5s", "seed": 7,
            "path": {"kind": "wifi", "rtt": "2ms", "stations": 2,
                     "radio": {"chipset": "ath9k", "driver": driver, "mpdu_error_rate": 0.05,
                               "station_mcs": [7, 4]}},
            "flows": [{"cc": "bbr", "client": 0}, {"cc": "cubic", "client": 1, "direction": "down"}],
            "pings": [{}],
        });
        let digest = |r: &RunResult| {
            serde_json::to_string(&(&r.flows, &r.pings, &r.wifi, &r.series)).unwrap()
        };
        let (a, b) = (run(doc.clone()), run(doc));
        assert_eq!(digest(&a), digest(&b), "{driver}");
        assert!(
            a.flows.iter().all(|f| f.goodput_bps > 1e6),
            "{driver}: {:?}",
            a.flows
        );
        assert!(a
            .wifi
            .iter()
            .all(|n| n.driver == driver || (n.node == 0 && driver == "iwlwifi")));
        if driver == "iwlwifi" {
            // A client-only chip's BSS has the firmware AP.
            assert_eq!(a.wifi[0].driver, "firmware");
        }
    }
}
