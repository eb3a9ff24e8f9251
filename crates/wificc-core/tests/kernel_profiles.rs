//! Kernel profiles end to end: each version-dependent behaviour changes a run the way the
//! kernel source says (see `src/kernel.rs` for the commits).

use serde_json::{json, Value};
use wificc_core::metrics::results::RunResult;
use wificc_core::scenario::{self, Scenario};

fn run(v: Value) -> RunResult {
    scenario::run(&Scenario::from_value(v).expect("valid scenario")).expect("run")
}

fn with_kernel(mut v: Value, kernel: &str) -> RunResult {
    v["stack"]["kernel"] = json!(kernel);
    run(v)
}

/// The resolved profile is reported with the run.
#[test]
fn a_run_reports_its_kernel_and_profile() {
    let doc = json!({"duration": "1s", "path": {"kind": "wired", "rate": "10mbit", "rtt": "10ms"},
                     "stack": {}, "flows": [{"cc": "cubic"}]});
    let r = with_kernel(doc.clone(), "4.19");
    assert_eq!(r.summary.kernel, "4.19");
    assert_eq!(r.profile.limit_output_bytes, 262_144);
    assert_eq!(run(doc).summary.kernel, "6.12");
}

/// 4.19's BBR has no ACK-aggregation allowance (78dc70ebaa38 arrived in 5.1): on a Wi-Fi
/// download, whose ACKs come back in bursts, its cwnd stays near 2 BDP and it gets less.
#[test]
fn bbr_before_5_1_has_no_ack_aggregation_allowance() {
    let doc = json!({"duration": "8s", "warmup": "2s",
                     "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath9k"}},
                     "stack": {}, "flows": [{"cc": "bbr", "direction": "down"}]});
    let old = with_kernel(doc.clone(), "4.19");
    let new = with_kernel(doc.clone(), "5.4");
    assert!(
        old.flows[0].cwnd_mean < 0.6 * new.flows[0].cwnd_mean,
        "{} vs {}",
        old.flows[0].cwnd_mean,
        new.flows[0].cwnd_mean
    );
    // An explicit parameter wins over the profile (the rest of 4.19's profile stays).
    let mut explicit = doc;
    explicit["flows"][0]["cc_params"] = json!({"extra_acked": true});
    let forced = with_kernel(explicit, "4.19").flows[0].cwnd_mean;
    assert!(forced > 2.0 * old.flows[0].cwnd_mean, "{forced}");
}

/// Before 5.0 `tcp_limit_output_bytes` (256 KB) capped paced sockets too (c73e5807e4f6
/// lifted the cap for them and raised it to 1 MB): BBR on an ath9k upload with a 64 ms TSQ
/// keeps at most 256 KB + one skb below TCP on 4.19, far more on 5.4.
#[test]
fn limit_output_bytes_caps_paced_sockets_before_5_0() {
    let doc = json!({"duration": "6s", "warmup": "1s",
                     "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath9k"}},
                     "stack": {"tsq": "64ms"}, "flows": [{"cc": "bbr"}]});
    let old = with_kernel(doc.clone(), "4.19").flows[0].max_tsq_bytes;
    let new = with_kernel(doc, "5.4").flows[0].max_tsq_bytes;
    // One skb of 45 segments of 4352 B may cross the limit.
    assert!(old <= 262_144 + 45 * 4352, "{old}");
    assert!(new > 1_000_000, "{new}");
}

/// mac80211 sets the pacing shift of a Wi-Fi host's TCP sockets: 8 (4 ms) in 4.19
/// (36148c2bbfbe), 7 (8 ms) from 5.0 (5c14a4d05f68). The "default" TSQ of a station's upload
/// follows it; a wired host keeps the socket's 1 ms.
#[test]
fn the_default_tsq_of_a_wifi_host_is_mac80211s() {
    let wifi = json!({"duration": "6s", "warmup": "1s",
                      "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath9k"}},
                      "stack": {"limit_output_bytes": "100mb"}, "flows": [{"cc": "bbr"}]});
    let below = |k: &str| with_kernel(wifi.clone(), k).flows[0].max_tsq_bytes;
    let mut one_ms = wifi.clone();
    one_ms["stack"]["tsq"] = json!("1ms");
    let (b1, b419, b54) = (
        with_kernel(one_ms, "5.4").flows[0].max_tsq_bytes,
        below("4.19"),
        below("5.4"),
    );
    assert!(b1 < b419 && b419 < b54, "1 ms {b1}, 4.19 {b419}, 5.4 {b54}");
    let wired = json!({"duration": "3s", "path": {"kind": "wired", "rate": "100mbit", "rtt": "10ms"},
                       "stack": {}, "flows": [{"cc": "bbr"}]});
    let mut explicit = wired.clone();
    explicit["stack"]["tsq"] = json!("1ms");
    assert_eq!(
        with_kernel(wired, "5.4").flows[0].goodput_bps,
        with_kernel(explicit, "5.4").flows[0].goodput_bps
    );
}

/// Before 6.8 `cfg80211_classify8021d` maps EF to user priority 5 (AC_VI); from 6.8 (RFC
/// 8325 update, 6fdb8b8781d5) to 6 (AC_VO). On ath9k, whose driver does not aggregate voice,
/// an EF-marked upload then goes out in A-MPDUs on 4.19 and one frame per PPDU on 6.12.
#[test]
fn ef_is_video_before_6_8_and_voice_after() {
    let doc = json!({"duration": "4s", "warmup": "1s",
                     "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath9k"}},
                     "stack": {"tsq": "8ms"}, "flows": [{"cc": "cubic", "dscp": "EF"}]});
    let old = with_kernel(doc.clone(), "4.19");
    let new = with_kernel(doc, "6.12");
    assert!(
        old.wifi[1].ampdu_mean.unwrap() > 4.0,
        "{:?}",
        old.wifi[1].ampdu_mean
    );
    assert_eq!(new.wifi[1].ampdu_mean, Some(1.0));
}

/// The TCP skb's truesize: payload + 1280 before 6.3 (a 640-byte head in the 1024-byte kmalloc
/// class), + 896 with the small-head cache: a static TSQ of 64 KB holds fewer bytes of payload
/// on 6.1 than on 6.6.
#[test]
fn skb_truesize_follows_the_small_head_cache() {
    let doc = json!({"duration": "3s", "warmup": "1s",
                     "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ax201", "driver": "generic"}},
                     "stack": {"tsq": "static:64kb"}, "flows": [{"cc": "cubic"}]});
    let r61 = with_kernel(doc.clone(), "6.1");
    let r66 = with_kernel(doc, "6.6");
    assert_eq!(r61.profile.skb_overhead, 1280);
    assert_eq!(r66.profile.skb_overhead, 896);
    assert!(r61.flows[0].skb_segs_mean < r66.flows[0].skb_segs_mean);
}

/// 4.19 paces with an hrtimer armed one skb's time after each send (218af599fa63); from 4.20
/// the departure times carry over with a credit for late sends (ab408b6dc744, a7a2563064e9).
/// BBR on an ath9k upload with 1 ms TSQ sends late after every TSQ release: EDT catches up in
/// more, smaller skbs (and throttles more often); the hrtimer spaces them from "now", so room
/// accumulates into fewer, larger skbs.
#[test]
fn hrtimer_pacing_before_4_20_restarts_from_now() {
    let doc = |edt: Option<bool>| {
        let mut v = json!({"duration": "10s", "warmup": "2s",
                           "path": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath9k"}},
                           "stack": {"tsq": "1ms"}, "flows": [{"cc": "bbr"}]});
        if let Some(e) = edt {
            v["stack"]["edt_pacing"] = json!(e);
        }
        v
    };
    let default = with_kernel(doc(None), "4.19");
    let hrtimer = with_kernel(doc(Some(false)), "4.19");
    let edt = with_kernel(doc(Some(true)), "4.19");
    assert_eq!(default.flows[0].skbs_sent, hrtimer.flows[0].skbs_sent);
    let (h, e) = (&hrtimer.flows[0], &edt.flows[0]);
    assert!(
        h.skb_segs_mean > e.skb_segs_mean && h.tsq_throttled < e.tsq_throttled,
        "hrtimer {} segs/skb, {} throttles; EDT {}, {}",
        h.skb_segs_mean,
        h.tsq_throttled,
        e.skb_segs_mean,
        e.tsq_throttled
    );
}

/// iwlwifi's TFD queue for an HE station: 256 entries (224 usable) on 5.4, 1024 (896) from 6.1.
/// With a Block Ack window of 1024 the firmware's A-MPDUs can hold the whole ring: at most 224
/// MPDUs on 5.4, more on 6.12.
#[test]
fn iwlwifi_queue_depth_follows_the_kernel() {
    let doc = json!({"duration": "4s", "warmup": "1s",
                     "path": {"kind": "wifi", "rtt": "2.5ms", "backhaul": "1gbit",
                              "radio": {"chipset": "ax201", "ba_window": 1024}},
                     "stack": {"tsq": "32ms"}, "flows": [{"cc": "cubic"}]});
    let old = with_kernel(doc.clone(), "5.4");
    let new = with_kernel(doc, "6.12");
    assert!(
        old.wifi[1].ampdu_p90.unwrap() <= 224.0,
        "{:?}",
        old.wifi[1].ampdu_p90
    );
    assert!(
        new.wifi[1].ampdu_p90.unwrap() > 224.0,
        "{:?}",
        new.wifi[1].ampdu_p90
    );
}
