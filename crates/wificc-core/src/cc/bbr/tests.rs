//! Engine tests: the kernel's arithmetic and state machine against hand-computed values, with
//! the engine driven through the trait by scripted sockets and rate samples.

use std::collections::HashMap;

use serde_json::Map;

use super::testnet::Path;
use super::*;
use crate::units::NSEC_PER_MSEC;

const BW_CENTI: u32 = (1 << 24) / 100; // 0.01 packet/us = 167772: 10 packets per ms

fn linux(p: Params) -> Bbr<Linux> {
    Bbr::new("bbr", p.knobs().unwrap(), Linux)
}

fn model(cc: &dyn CongestionControl) -> HashMap<&'static str, f64> {
    cc.model().into_iter().collect()
}

/// One ACK at `t_us`: `delivered` packets newly delivered over a 10 ms interval, RTT 10 ms.
/// `round` makes the sampled packet one sent after the current round began.
fn sample(tp: &mut Sock, t_us: u64, delivered: i64, round: bool) -> RateSample {
    let prior = if round { tp.delivered } else { 0 };
    tp.now = t_us * 1000;
    tp.delivered += delivered as u64;
    tp.delivered_mstamp = tp.now;
    RateSample {
        prior_delivered: prior,
        delivered,
        interval_us: 10_000,
        rtt_us: 10_000,
        acked_sacked: delivered as u32,
        prior_in_flight: tp.packets_in_flight(),
        ..RateSample::default()
    }
}

/// An engine in PROBE_BW with bw 0.01 packet/us and min_rtt 10 ms: BDP 100 packets.
fn probing(p: Params) -> (Bbr<Linux>, Sock, Rng) {
    let mut bbr = linux(p);
    let mut tp = Sock::new(1448, 10);
    let mut rng = Rng::new(11, 11);
    bbr.init(&mut tp, &mut rng);
    bbr.full_bw_reached = true;
    bbr.mode = Mode::ProbeBw;
    bbr.min_rtt_us = 10_000;
    bbr.bw.reset(0, BW_CENTI);
    tp.pacing_rate = 2_000_000; // 2000000 >> 10 = 1953 B: 1 segment, so the quantum is 2
    (bbr, tp, rng)
}

#[test]
fn constants_are_the_kernels() {
    // 256 x 2885 / 1000 + 1 = 739; 256 x 1000 / 2885 = 88.
    assert_eq!((HIGH_GAIN, DRAIN_GAIN), (739, 88));
    let k = Params::default().knobs().unwrap();
    assert_eq!((k.high_gain, k.drain_gain, k.cwnd_gain), (739, 88, 512));
    let cycle: Vec<u32> = (0..8).map(|i| k.cycle_gain(i)).collect();
    assert_eq!(cycle, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!(
        (
            k.cycle_len,
            k.bw_rtts,
            k.min_rtt_win_ms,
            k.probe_rtt_mode_ms
        ),
        (8, 10, 10_000, 200)
    );
    assert_eq!(
        (k.cwnd_min_target, k.min_tso_rate, k.pacing_margin_percent),
        (4, 150_000, 1)
    );
    assert_eq!((k.full_bw_thresh, k.full_bw_cnt), (320, 3));
    // lt: 4 rounds, loss 50/256, ratio 1/8 = 32/256, 4000 bit/s = 500 B/s, 48 rounds.
    assert_eq!(
        (
            k.lt_intvl_min_rtts,
            k.lt_loss_thresh,
            k.lt_bw_ratio,
            k.lt_bw_diff,
            k.lt_bw_max_rtts
        ),
        (4, 50, 32, 500, 48)
    );
    assert_eq!(
        (
            k.extra_acked_gain,
            k.extra_acked_win_rtts,
            k.ack_epoch_acked_reset_thresh,
            k.extra_acked_max_us
        ),
        (256, 5, 1 << 20, 100_000)
    );
}

#[test]
fn initial_pacing_rate_and_the_pacing_multiplier() {
    // No RTT yet: bw = 10 x 2^24 / 1000 us = 167772; rate = (167772 x 1448 x 739 >> 8)
    // x 990000 >> 24 = 41381651 B/s.
    let mut bbr = linux(Params::default());
    let mut tp = Sock::new(1448, 10);
    bbr.init(&mut tp, &mut Rng::new(1, 1));
    assert_eq!(tp.pacing_rate, 41_381_651);
    assert!(!bbr.has_seen_rtt);
    assert_eq!(tp.pacing_status, PacingStatus::Needed);
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    // srtt 20 ms: bw = 10 x 2^24 / 20000 = 8388; rate = 2068934 B/s.
    tp.srtt_us = 20_000 << 3;
    bbr.init(&mut tp, &mut Rng::new(1, 1));
    assert_eq!(tp.pacing_rate, 2_068_934);
    assert!(bbr.has_seen_rtt);
    // TP 2p doubles exactly what BBR computes; the socket's max pacing rate still caps it.
    tp.pacing_tp = 2;
    bbr.init(&mut tp, &mut Rng::new(1, 1));
    assert_eq!(tp.pacing_rate, 2 * 2_068_934);
    tp.max_pacing_rate = 3_000_000;
    bbr.init(&mut tp, &mut Rng::new(1, 1));
    assert_eq!(tp.pacing_rate, 3_000_000);
    // The margin: bw 0.01 packet/us at gain 1 is 14.48 MB/s, 1% below: 14335186 B/s.
    assert_eq!(
        bbr.rate_bytes_per_sec(1448, u64::from(BW_CENTI), BBR_UNIT),
        14_335_186
    );
    let no_margin = linux(Params {
        pacing_margin_percent: 0,
        ..Params::default()
    });
    assert_eq!(
        no_margin.rate_bytes_per_sec(1448, u64::from(BW_CENTI), BBR_UNIT),
        14_479_986
    );
}

#[test]
fn pacing_only_rises_until_the_pipe_is_full() {
    let (mut bbr, mut tp, _) = probing(Params::default());
    bbr.has_seen_rtt = true;
    tp.pacing_rate = 20_000_000;
    bbr.full_bw_reached = false;
    // 0.01 packet/us at gain 1 is 14335186 B/s, below the current rate: kept.
    bbr.set_pacing_rate(&mut tp, BW_CENTI, BBR_UNIT);
    assert_eq!(tp.pacing_rate, 20_000_000);
    bbr.full_bw_reached = true;
    bbr.set_pacing_rate(&mut tp, BW_CENTI, BBR_UNIT);
    assert_eq!(tp.pacing_rate, 14_335_186);
}

#[test]
fn tso_quantum_and_min_tso_segs() {
    let k = Params::default().knobs().unwrap();
    let at = |rate: u64, shift: u8| {
        let mut tp = Sock::new(1448, 10);
        tp.pacing_rate = rate;
        tp.pacing_shift = shift;
        (min_tso_segs(&k, &tp), tso_segs_goal(&k, &tp))
    };
    // 1.2 Mbit/s = 150000 B/s is the threshold (strictly below: 1 segment).
    assert_eq!(at(149_999, 10), (1, 1));
    assert_eq!(at(150_000, 10), (2, 2));
    // 10 MB/s >> 10 = 9765 B = 6 segments.
    assert_eq!(at(10_000_000, 10), (2, 6));
    // 10 MB/s >> 7 = 78125 B, capped at 65536 - 1 - 320 = 65215 B = 45 segments.
    assert_eq!(at(10_000_000, 7), (2, 45));
}

#[test]
fn bdp_and_quantization_budget() {
    let (mut bbr, tp, _) = probing(Params::default());
    // bw x min_rtt = 167772 x 10000 / 2^24 = 99.99994: rounded up to 100 (gain 1), 200 (gain
    // 2), 125 (gain 5/4: 124.99993).
    assert_eq!(
        (
            bbr.bdp(BW_CENTI, 256),
            bbr.bdp(BW_CENTI, 512),
            bbr.bdp(BW_CENTI, 320)
        ),
        (100, 200, 125)
    );
    // Budget: + 3 x 2-segment quanta, rounded up to even; + 2 in phase 0 of PROBE_BW.
    bbr.cycle_idx = 2;
    assert_eq!(bbr.inflight(&tp, BW_CENTI, 256), 106);
    assert_eq!(bbr.quantization_budget(&tp, 101), 108);
    bbr.cycle_idx = 0;
    assert_eq!(bbr.inflight(&tp, BW_CENTI, 256), 108);
    assert_eq!(bbr.inflight(&tp, BW_CENTI, 320), 134); // 125 + 6 = 131 -> 132, + 2
                                                       // No RTT sample ever: the initial window.
    bbr.min_rtt_us = u32::MAX;
    assert_eq!(bbr.bdp(BW_CENTI, 512), TCP_INIT_CWND);
}

#[test]
fn startup_drain_probe_bw_on_a_bandwidth_plateau() {
    // One ACK per 10 ms round; delivered 10, 20, 40, 40, ... packets per 10 ms: bw samples
    // 16777, 33554, 67108, 67108, ... (x 2^-24 packet/us). srtt = min_rtt = 10 ms from the
    // handshake. The aggregation allowance is off to keep the cwnd arithmetic short.
    let mut bbr = linux(Params {
        extra_acked: false,
        ..Params::default()
    });
    let mut tp = Sock::new(1448, 10);
    tp.srtt_us = 10_000 << 3;
    tp.min_rtt_us = 10_000;
    let mut rng = Rng::new(21, 4);
    bbr.init(&mut tp, &mut rng);
    // init: bw = 10 x 2^24 / 10000 = 16777, pacing (16777 x 1448 x 739 >> 8) x 990000 >> 24.
    assert_eq!(tp.pacing_rate, 4_138_115);
    let round =
        |bbr: &mut Bbr<Linux>, tp: &mut Sock, rng: &mut Rng, k: u64, d: i64, inflight: u32| {
            tp.packets_out = inflight;
            let rs = sample(tp, k * 10_000, d, true);
            bbr.cong_control(tp, &rs, rng);
            (bbr.mode, tp.pacing_rate, tp.snd_cwnd)
        };
    // Round 1: full_bw = 16777; pacing rate(16777, 739) = 4138115 is not above the current
    // rate. Target = BDP(16777, 739) = ceil(28.87) = 29, + 3 x 2 = 35 -> 36; cwnd 10 + 10.
    assert_eq!(
        round(&mut bbr, &mut tp, &mut rng, 1, 10, 10),
        (Mode::Startup, 4_138_115, 20)
    );
    // Round 2: 33554 >= 16777 x 1.25 = 20971: growth. Pacing 8276231 (>> 10 = 8082 B, 5
    // segments); target 58 + 15 = 73 -> 74; cwnd 20 + 20.
    assert_eq!(
        round(&mut bbr, &mut tp, &mut rng, 2, 20, 20),
        (Mode::Startup, 8_276_231, 40)
    );
    // Round 3: 67108 >= 41942: growth. Pacing 16552463 (16164 B, 11 segments); target
    // 116 + 33 = 149 -> 150; cwnd 40 + 40.
    assert_eq!(
        round(&mut bbr, &mut tp, &mut rng, 3, 40, 40),
        (Mode::Startup, 16_552_463, 80)
    );
    // Rounds 4 and 5: 67108 < 67108 x 1.25 = 83885: no growth (counts 1, 2); cwnd 120, 160.
    assert_eq!(
        round(&mut bbr, &mut tp, &mut rng, 4, 40, 80),
        (Mode::Startup, 16_552_463, 120)
    );
    assert_eq!(
        round(&mut bbr, &mut tp, &mut rng, 5, 40, 120),
        (Mode::Startup, 16_552_463, 160)
    );
    assert_eq!(bbr.full_bw_cnt, 2);
    // Round 6: third round without growth: full. DRAIN; ssthresh = inflight at gain 1 with the
    // 11-segment quantum = 40 + 33 = 73 -> 74. 100 in flight + 11 (the next skb, gain still
    // 739) > 74: stay. Pacing drops to rate(67108, 88) = 1971064 (1924 B per ms: quantum 2);
    // cwnd = min(160 + 40, BDP(67108, 739) 116 + 6 = 122).
    assert_eq!(
        round(&mut bbr, &mut tp, &mut rng, 6, 40, 100),
        (Mode::Drain, 1_971_064, 122)
    );
    assert_eq!(tp.snd_ssthresh, 74);
    // Round 7: DRAIN ends when inflight <= 40 + 3 x 2 = 46: 47 is not.
    assert_eq!(
        round(&mut bbr, &mut tp, &mut rng, 7, 40, 47),
        (Mode::Drain, 1_971_064, 122)
    );
    // Round 8: 46: PROBE_BW at a random phase drawn from the rng handed to cong_control.
    let mut expect = rng.clone();
    let start = 7 - expect.below(7);
    let phase = (start + 1) % 8;
    let (mode, rate, cwnd) = round(&mut bbr, &mut tp, &mut rng, 8, 40, 46);
    assert_eq!(mode, Mode::ProbeBw);
    assert_eq!(bbr.cycle_idx, phase);
    // PROBE_BW: cwnd gain 2: BDP 80 + 3 x quantum, rounded up to even, + 2 in phase 0.
    // Phase 0 (gain 320): pacing 7167507 (6999 B: 4 segments): 80 + 12 + 2 = 94.
    // Cruise (gain 256): pacing 5734006 (5599 B: 3 segments): 80 + 9 = 89 -> 90.
    let (want_rate, want_cwnd) = if phase == 0 {
        (7_167_507, 94)
    } else {
        (5_734_006, 90)
    };
    assert_eq!((rate, cwnd), (want_rate, want_cwnd), "phase {phase}");
}

/// Whether the current PROBE_BW phase ends on an ACK `elapsed_us` after it began, with
/// `prior` packets in flight before the ACK and `losses` newly lost.
fn phase_ends(bbr: &Bbr<Linux>, tp: &mut Sock, elapsed_us: u64, prior: u32, losses: u32) -> bool {
    tp.delivered_mstamp = elapsed_us * 1000;
    tp.now = tp.delivered_mstamp;
    let rs = RateSample {
        prior_in_flight: prior,
        losses,
        ..RateSample::default()
    };
    bbr.is_next_cycle_phase(tp, &rs)
}

#[test]
fn probing_phase_ends_after_min_rtt_and_inflight_at_target_or_loss() {
    let (mut bbr, mut tp, _) = probing(Params::default());
    bbr.cycle_idx = 0;
    bbr.update_gains();
    assert_eq!(bbr.pacing_gain, 320);
    // Target for gain 5/4: 125 + 6 -> 132, + 2 (phase 0) = 134. In flight at the next
    // departure = prior_in_flight + the next 2-segment skb.
    let check = phase_ends;
    assert!(!check(&bbr, &mut tp, 10_000, 200, 0)); // min_rtt not yet exceeded
    assert!(!check(&bbr, &mut tp, 10_001, 131, 0)); // 133 < 134
    assert!(check(&bbr, &mut tp, 10_001, 132, 0)); // 134
    assert!(check(&bbr, &mut tp, 10_001, 10, 1)); // a loss ends it
    assert!(!check(&bbr, &mut tp, 10_000, 10, 1)); // but not before min_rtt
                                                   // With the next departure 1 ms ahead, 167772 x 1000 >> 24 = 9 packets leave first:
                                                   // prior 141 + 2 - 9 = 134 reaches the target, 140 does not.
    tp.tcp_wstamp_ns = 10_001_000 + 1_000_000;
    assert!(check(&bbr, &mut tp, 10_001, 141, 0));
    assert!(!check(&bbr, &mut tp, 10_001, 140, 0));
}

#[test]
fn draining_phase_ends_at_min_rtt_or_inflight_at_bdp() {
    let (mut bbr, mut tp, _) = probing(Params::default());
    bbr.cycle_idx = 1;
    bbr.update_gains();
    assert_eq!(bbr.pacing_gain, 192);
    // Target at gain 1 in phase 1: 100 + 6 = 106; no next-skb term below gain 1.
    let check = |bbr: &Bbr<Linux>, tp: &mut Sock, elapsed_us, prior| {
        phase_ends(bbr, tp, elapsed_us, prior, 0)
    };
    assert!(check(&bbr, &mut tp, 5_000, 106));
    assert!(!check(&bbr, &mut tp, 5_000, 107));
    assert!(check(&bbr, &mut tp, 10_001, 500));
    // Cruise phases only count time.
    bbr.cycle_idx = 4;
    bbr.update_gains();
    assert!(!check(&bbr, &mut tp, 10_000, 0));
    assert!(check(&bbr, &mut tp, 10_001, 500));
}

#[test]
fn random_start_phase_is_never_the_draining_phase() {
    let (mut bbr, tp, _) = probing(Params::default());
    let mut rng = Rng::new(77, 3);
    let mut counts = [0u32; 8];
    for _ in 0..7_000 {
        let mut expect = rng.clone();
        bbr.reset_probe_bw_mode(&tp, &mut rng);
        // cycle_idx = 8 - 1 - below(7), then one advance.
        assert_eq!(bbr.cycle_idx, (8 - expect.below(7)) % 8);
        counts[bbr.cycle_idx as usize] += 1;
    }
    assert_eq!(counts[1], 0);
    // The other seven phases each get about 1000 of 7000.
    assert!(
        counts
            .iter()
            .enumerate()
            .all(|(i, &c)| i == 1 || (850..1150).contains(&c)),
        "{counts:?}"
    );
}

#[test]
fn probe_rtt_after_10_s_without_a_new_min_rtt() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    tp.snd_cwnd = 80;
    tp.srtt_us = 12_000 << 3;
    bbr.has_seen_rtt = true;
    bbr.min_rtt_stamp = 0;
    let ack = |bbr: &mut Bbr<Linux>,
               tp: &mut Sock,
               rng: &mut Rng,
               ms: u64,
               inflight: u32,
               round: bool| {
        tp.packets_out = inflight;
        let mut rs = sample(tp, ms * 1000, 1, round);
        rs.rtt_us = 12_000;
        rs.acked_sacked = 1;
        bbr.cong_control(tp, &rs, rng);
        (bbr.mode, tp.snd_cwnd)
    };
    // At 10000 ms the window (min_rtt_stamp 0 + 10000) has not passed ("after" is strict).
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_000, 60, false).0,
        Mode::ProbeBw
    );
    let cwnd = tp.snd_cwnd;
    // 10001 ms: expired. The 12 ms sample becomes min_rtt, PROBE_RTT starts, cwnd is saved
    // and capped at 4; samples are app-limited from here.
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_001, 60, false),
        (Mode::ProbeRtt, 4)
    );
    assert_eq!(
        (bbr.prior_cwnd, bbr.min_rtt_us, bbr.min_rtt_stamp),
        (cwnd, 12_000, 10_001)
    );
    assert_eq!(tp.app_limited, tp.delivered + 60);
    assert_eq!((bbr.pacing_gain, bbr.cwnd_gain), (256, 256));
    // 10050 ms: 4 in flight: 200 ms start now, and a round must also pass.
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_050, 4, false),
        (Mode::ProbeRtt, 4)
    );
    assert_eq!(bbr.probe_rtt.done_stamp, 10_250);
    // 10150 ms: the round ends; 10250 ms: the 200 ms are not over ("after" is strict).
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_150, 4, true),
        (Mode::ProbeRtt, 4)
    );
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_250, 4, false),
        (Mode::ProbeRtt, 4)
    );
    // 10251 ms: done. cwnd restored to the saved cwnd, then PROBE_BW's rule: min(cwnd + 1,
    // target), the target being at least BDP(12 ms) x 2 = 240.
    let (mode, cwnd_after) = ack(&mut bbr, &mut tp, &mut rng, 10_251, 4, false);
    assert_eq!((mode, cwnd_after), (Mode::ProbeBw, cwnd + 1));
    assert_eq!(bbr.min_rtt_stamp, 10_251);
}

#[test]
fn probe_rtt_lasts_at_least_one_round() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.has_seen_rtt = true;
    bbr.min_rtt_stamp = 0;
    // The current round ends with packets sent after delivered reached 1000; 5000 are
    // delivered by now.
    tp.delivered = 5_000;
    bbr.next_rtt_delivered = 1_000;
    let ack = |bbr: &mut Bbr<Linux>, tp: &mut Sock, rng: &mut Rng, ms: u64, prior: u64| {
        tp.packets_out = 4;
        let mut rs = sample(tp, ms * 1000, 1, false);
        rs.prior_delivered = prior;
        bbr.cong_control(tp, &rs, rng);
        bbr.mode
    };
    // 10001 ms: PROBE_RTT with 4 in flight: the 200 ms start, and the round restarts: it now
    // ends with packets sent after delivered reached 5001.
    assert_eq!(ack(&mut bbr, &mut tp, &mut rng, 10_001, 0), Mode::ProbeRtt);
    assert_eq!(
        (bbr.probe_rtt.done_stamp, bbr.next_rtt_delivered),
        (10_201, 5_001)
    );
    // 600 ms later, only packets sent before PROBE_RTT (delivered 3000 then) were ACKed: stay.
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_300, 3_000),
        Mode::ProbeRtt
    );
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_600, 3_000),
        Mode::ProbeRtt
    );
    // A packet sent within PROBE_RTT completes the round: leave.
    assert_eq!(
        ack(&mut bbr, &mut tp, &mut rng, 10_601, 5_001),
        Mode::ProbeBw
    );
}

#[test]
fn idle_restart_paces_at_bw_and_defers_probe_rtt() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.has_seen_rtt = true;
    tp.pacing_rate = 17_918_982; // phase 0: rate(167772, 320)
    tp.app_limited = 5;
    bbr.cwnd_event(&mut tp, CaEvent::TxStart);
    assert!(bbr.idle_restart);
    assert_eq!(tp.pacing_rate, 14_335_186); // rate(167772, 256)
                                            // The expired min_rtt filter does not start PROBE_RTT while restarting from idle.
    let rs = RateSample {
        rtt_us: 11_000,
        ..sample(&mut tp, 10_001_000, 0, false)
    };
    bbr.update_min_rtt(&mut tp, &rs, &mut rng);
    assert_eq!(bbr.mode, Mode::ProbeBw);
    assert!(bbr.idle_restart);
    // The first ACK that delivers data ends the restart; from the next one PROBE_RTT may start
    // (the 11 ms sample above refreshed the filter, so it expires 10 s later).
    let rs = RateSample {
        rtt_us: 11_000,
        ..sample(&mut tp, 10_002_000, 1, false)
    };
    bbr.update_min_rtt(&mut tp, &rs, &mut rng);
    assert!(!bbr.idle_restart);
    let rs = RateSample {
        rtt_us: 11_000,
        ..sample(&mut tp, 20_002_000, 1, false)
    };
    bbr.update_min_rtt(&mut tp, &rs, &mut rng);
    assert_eq!(bbr.mode, Mode::ProbeRtt);
    // A TX start in PROBE_RTT past its end leaves it (no round needed on this path), with a
    // phase from the engine's event stream, never the draining one.
    bbr.mode = Mode::ProbeRtt;
    bbr.prior_cwnd = 50;
    tp.snd_cwnd = 4;
    bbr.probe_rtt.done_stamp = 20_100;
    tp.app_limited = 5;
    tp.now = 20_101 * NSEC_PER_MSEC;
    bbr.cwnd_event(&mut tp, CaEvent::TxStart);
    assert_eq!(
        (bbr.mode, tp.snd_cwnd, bbr.min_rtt_stamp),
        (Mode::ProbeBw, 50, 20_101)
    );
    assert_ne!(bbr.cycle_idx, 1);
    // Without app_limited the event is ignored.
    tp.app_limited = 0;
    bbr.idle_restart = false;
    bbr.cwnd_event(&mut tp, CaEvent::TxStart);
    assert!(!bbr.idle_restart);
}

#[test]
fn ack_aggregation_allowance_and_its_switch() {
    let run = |on: bool| {
        let (mut bbr, mut tp, _) = probing(Params {
            extra_acked: on,
            ..Params::default()
        });
        tp.snd_cwnd = 200;
        bbr.aggr.ack_epoch_mstamp = 0;
        let agg = |bbr: &mut Bbr<Linux>, tp: &mut Sock, us: u64, acked: u32| {
            tp.delivered_mstamp = us * 1000;
            let rs = RateSample {
                delivered: 1,
                interval_us: 1,
                acked_sacked: acked,
                ..RateSample::default()
            };
            bbr.update_ack_aggregation(tp, &rs);
        };
        // 1000 us: expected 167772 x 1000 >> 24 = 9 >= 0 acked so far: new epoch at 1000 us,
        // 5 ACKed: extra 5.
        agg(&mut bbr, &mut tp, 1_000, 5);
        // 1100 us: expected 0 (0.99): 5 + 30 = 35 ACKed beyond it.
        agg(&mut bbr, &mut tp, 1_100, 30);
        // 2000 us: expected 9; 37 - 9 = 28 < 35.
        agg(&mut bbr, &mut tp, 2_000, 2);
        (bbr, tp)
    };
    let (mut bbr, tp) = run(true);
    assert_eq!(bbr.aggr.extra_acked, [35, 0]);
    // Allowance min(35 x 256 >> 8, 167772 x 100000 / 2^24 = 999) = 35, so the target grows
    // by 35: BDP 200 + 35 + 6 = 241 -> 242, + 2 in phase 0.
    assert_eq!(bbr.ack_aggregation_cwnd(), 35);
    bbr.cycle_idx = 3;
    let target = bbr.quantization_budget(&tp, bbr.bdp(BW_CENTI, 512) + bbr.ack_aggregation_cwnd());
    assert_eq!(target, 242);
    // Off (pre-5.1 kernels): nothing is measured and nothing is added.
    let (off, _) = run(false);
    assert_eq!(
        (off.aggr.extra_acked, off.ack_aggregation_cwnd()),
        ([0, 0], 0)
    );
    // The max spans two windows of 5 rounds: after 5 round starts the other slot is cleared
    // and used; after 10 the 35 is gone.
    let mut tp = tp;
    for i in 0..10 {
        bbr.round_start = true;
        tp.delivered_mstamp = (3_000 + i) * 1000;
        let rs = RateSample {
            delivered: 1,
            interval_us: 1,
            acked_sacked: 1,
            ..RateSample::default()
        };
        bbr.update_ack_aggregation(&tp, &rs);
        if i == 4 {
            assert_eq!(
                (bbr.aggr.extra_acked_win_idx, bbr.max_extra_acked()),
                (1, 35)
            );
        }
    }
    assert_eq!(bbr.aggr.extra_acked_win_idx, 0);
    assert!(bbr.max_extra_acked() < 35, "{:?}", bbr.aggr.extra_acked);
    // The excess is clamped at cwnd, and the allowance at bw x 100 ms: with cwnd 20 the 35
    // becomes 20; with bw 2^24 / 10000 (0.1 packet/ms) the cap is 1677 x 100000 / 2^24 = 9.
    let (mut small, mut tp2, _) = probing(Params::default());
    tp2.snd_cwnd = 20;
    small.aggr.ack_epoch_mstamp = 0;
    for (us, acked) in [(1_000, 5), (1_100, 30)] {
        tp2.delivered_mstamp = us * 1000;
        let rs = RateSample {
            delivered: 1,
            interval_us: 1,
            acked_sacked: acked,
            ..RateSample::default()
        };
        small.update_ack_aggregation(&tp2, &rs);
    }
    assert_eq!(small.ack_aggregation_cwnd(), 20);
    small.bw.reset(0, (1 << 24) / 10_000);
    assert_eq!(small.ack_aggregation_cwnd(), 9);
    // The allowance only applies once the pipe is full.
    bbr.full_bw_reached = false;
    assert_eq!(bbr.ack_aggregation_cwnd(), 0);
}

#[test]
fn long_term_bandwidth_detects_a_policer() {
    // A policer passing about 100 packets per 10 ms round and dropping 30 more (> 50/256 of
    // what it passes): one ACK per round. The max filter holds 2x the policed rate from before.
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.has_seen_rtt = true;
    bbr.bw.reset(0, 2 * BW_CENTI);
    let round = |bbr: &mut Bbr<Linux>, tp: &mut Sock, rng: &mut Rng, k: u64, delivered: i64| {
        tp.lost += 30;
        tp.packets_out = 50;
        let mut rs = sample(tp, k * 10_000, delivered, true);
        rs.losses = 30;
        bbr.cong_control(tp, &rs, rng);
    };
    // Round 1: the first loss starts sampling (interval from 10 ms, delivered 100, lost 30).
    round(&mut bbr, &mut tp, &mut rng, 1, 100);
    assert!(bbr.lt_is_sampling && bbr.lt_bw == 0);
    // Round 4: 4 rounds; lost 90 of 300 delivered over 30 ms: bw = 300 x 2^24 / 30000 =
    // 167772. First interval: remembered, a new one starts.
    for k in 2..=4 {
        round(&mut bbr, &mut tp, &mut rng, k, 100);
    }
    assert_eq!((bbr.lt_bw, bbr.lt_use_bw), (BW_CENTI, false));
    // Rounds 5-8 pass 105 each: 420 over 40 ms = 176160, lost 120 (120 x 256 >= 50 x 420).
    // |176160 - 167772| = 8388 <= 167772 / 8: consistent: policed at the mean, 171966.
    for k in 5..=8 {
        round(&mut bbr, &mut tp, &mut rng, k, 105);
        assert_eq!(bbr.lt_use_bw, k == 8);
    }
    assert_eq!(bbr.lt_bw, 171_966);
    // Pacing at the policed rate with gain 1 (rate(171966, 256)), not at 2x from the max filter.
    assert_eq!((bbr.pacing_gain, tp.pacing_rate), (256, 14_693_540));
    assert_eq!(model(&bbr)["lt_use_bw"], 1.0);
    // 48 rounds of PROBE_BW later the long-term mode ends and gain cycling restarts.
    for k in 9..=55 {
        round(&mut bbr, &mut tp, &mut rng, k, 100);
        assert!(bbr.lt_use_bw);
    }
    round(&mut bbr, &mut tp, &mut rng, 56, 100);
    assert!(!bbr.lt_use_bw);
}

#[test]
fn long_term_sampling_gives_up_on_long_light_loss_and_on_app_limits() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    // A loss starts an interval; then 1 lost per 100 delivered each round (1 x 256 < 50 x 100):
    // never lossy enough. After 16 = 4 x lt_intvl_min_rtts rounds the interval is dropped.
    bbr.round_start = true;
    for k in 1..=17 {
        tp.lost += 1;
        let mut rs = sample(&mut tp, k * 10_000, 100, true);
        rs.losses = 1;
        bbr.lt_bw_sampling(&tp, &rs, &mut rng);
        assert_eq!(
            (bbr.lt_is_sampling, bbr.lt_rtt_cnt),
            (k <= 16, if k <= 16 { k as u32 } else { 0 }),
            "round {k}"
        );
    }
    // An app-limited sample also ends sampling.
    let mut rs = sample(&mut tp, 180_000, 100, true);
    rs.losses = 1;
    bbr.lt_bw_sampling(&tp, &rs, &mut rng);
    assert!(bbr.lt_is_sampling);
    rs.is_app_limited = true;
    bbr.lt_bw_sampling(&tp, &rs, &mut rng);
    assert!(!bbr.lt_is_sampling);
}

#[test]
fn app_limited_samples_neither_lower_bw_nor_count_as_full_pipe_rounds() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.full_bw_reached = false;
    bbr.mode = Mode::Startup;
    bbr.full_bw = BW_CENTI;
    bbr.full_bw_cnt = 2;
    // 50 packets per 10 ms (half the filter's max), app-limited: not added to the filter, and
    // the round does not count toward the full pipe (it would be the third).
    let mut rs = sample(&mut tp, 10_000, 50, true);
    rs.is_app_limited = true;
    bbr.update_bw(&tp, &rs, &mut rng);
    bbr.check_full_bw_reached(&rs);
    assert_eq!(
        (bbr.max_bw(), bbr.full_bw_cnt, bbr.full_bw_reached),
        (BW_CENTI, 2, false)
    );
    // The next round's sample, not app-limited, is the third round without growth: full.
    let rs = sample(&mut tp, 20_000, 50, true);
    bbr.update_bw(&tp, &rs, &mut rng);
    bbr.check_full_bw_reached(&rs);
    assert!(bbr.full_bw_reached);
    // An app-limited sample above the maximum is taken: 200 per 10 ms = 335544.
    let mut rs = sample(&mut tp, 30_000, 200, true);
    rs.is_app_limited = true;
    bbr.update_bw(&tp, &rs, &mut rng);
    assert_eq!(bbr.max_bw(), 2 * BW_CENTI);
}

#[test]
fn app_limited_samples_below_the_max_are_not_kept_for_later() {
    // Round 1: 100 per 10 ms. Rounds 2-11: 50 per 10 ms, app-limited (ignored). Round 12:
    // 20 per 10 ms: the 100 is 11 rounds old, and nothing else was kept, so the max is 20
    // (a filter that had kept the app-limited 50s would say 50).
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.bw.reset(0, 0);
    for k in 1..=12u64 {
        let d = match k {
            1 => 100,
            12 => 20,
            _ => 50,
        };
        let mut rs = sample(&mut tp, k * 10_000, d, true);
        rs.is_app_limited = (2..=11).contains(&k);
        bbr.update_bw(&tp, &rs, &mut rng);
    }
    assert_eq!(bbr.max_bw(), 20 * (1 << 24) / 10_000);
}

#[test]
fn long_term_sampling_waits_for_the_first_loss() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.round_start = true;
    let rs = sample(&mut tp, 10_000, 100, true);
    bbr.lt_bw_sampling(&tp, &rs, &mut rng);
    assert!(!bbr.lt_is_sampling);
    let rs = RateSample { losses: 1, ..rs };
    bbr.lt_bw_sampling(&tp, &rs, &mut rng);
    assert!(bbr.lt_is_sampling);
    assert_eq!(
        (bbr.lt_last_delivered, bbr.lt_last_stamp, bbr.lt_rtt_cnt),
        (100, 10, 1)
    );
}

#[test]
fn an_expired_min_rtt_ignores_delayed_acks_but_still_probes() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.min_rtt_stamp = 0;
    let mut rs = sample(&mut tp, 10_001_000, 1, false);
    rs.rtt_us = 12_000;
    rs.is_ack_delayed = true;
    bbr.update_min_rtt(&mut tp, &rs, &mut rng);
    assert_eq!(
        (bbr.min_rtt_us, bbr.min_rtt_stamp, bbr.mode),
        (10_000, 0, Mode::ProbeRtt)
    );
    // A smaller sample is always taken, delayed or not.
    rs.rtt_us = 9_000;
    bbr.update_min_rtt(&mut tp, &rs, &mut rng);
    assert_eq!((bbr.min_rtt_us, bbr.min_rtt_stamp), (9_000, 10_001));
}

#[test]
fn startup_grows_cwnd_for_the_first_ten_deliveries_even_above_target() {
    let mut bbr = linux(Params::default());
    let mut tp = Sock::new(1448, 10);
    tp.max_pacing_rate = 100_000;
    let mut rng = Rng::new(1, 1);
    bbr.init(&mut tp, &mut rng);
    // Pacing capped at 100 kB/s: quantum 1 segment. No RTT sample: target = TCP_INIT_CWND
    // 10 + 3 x 1 = 13 -> 14. cwnd 40 is above it, but fewer than 10 packets were delivered,
    // so cwnd still grows by the 2 ACKed.
    tp.snd_cwnd = 40;
    let mut rs = sample(&mut tp, 1_000, 2, true);
    rs.rtt_us = -1;
    bbr.cong_control(&mut tp, &rs, &mut rng);
    assert_eq!(tp.snd_cwnd, 42);
    // With 10 delivered it stops.
    let mut rs = sample(&mut tp, 2_000, 8, true);
    rs.rtt_us = -1;
    rs.acked_sacked = 2;
    bbr.cong_control(&mut tp, &rs, &mut rng);
    assert_eq!(tp.snd_cwnd, 42);
}

#[test]
fn packet_conservation_in_recovery_and_restore_after() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.has_seen_rtt = true;
    tp.snd_cwnd = 150;
    bbr.cycle_idx = 3;
    // Entering recovery: ssthresh saves cwnd (replacing an older, larger one) and leaves
    // ssthresh unchanged.
    bbr.prior_cwnd = 300;
    assert_eq!(bbr.ssthresh(&tp), TCP_INFINITE_SSTHRESH);
    assert_eq!(bbr.prior_cwnd, 150);
    tp.ca_state = CaState::Recovery;
    // The current round ends with the packet that was delivered-count 1000 at send time.
    tp.delivered = 5_000;
    bbr.next_rtt_delivered = 1_000;
    let mut ack =
        |bbr: &mut Bbr<Linux>, tp: &mut Sock, t: u64, inflight: u32, losses: u32, prior: u64| {
            tp.packets_out = inflight;
            let mut rs = sample(tp, t, 2, false);
            rs.prior_delivered = prior;
            rs.losses = losses;
            bbr.cong_control(tp, &rs, &mut rng);
            tp.snd_cwnd
        };
    // First recovery ACK: cwnd = in flight 100 + 2 ACKed (the 3 losses are already out), and
    // a new round starts now: it ends with packets sent after delivered reached 5002.
    assert_eq!(ack(&mut bbr, &mut tp, 1_000, 100, 3, 0), 102);
    assert!(bbr.packet_conservation);
    assert_eq!(bbr.next_rtt_delivered, 5_002);
    // Still that round (2000 < 5002): at least in flight + ACKed, never less than now.
    assert_eq!(ack(&mut bbr, &mut tp, 2_000, 90, 0, 2_000), 102);
    // A save while in recovery keeps the larger of the two.
    assert_eq!(
        (bbr.ssthresh(&tp), bbr.prior_cwnd),
        (TCP_INFINITE_SSTHRESH, 150)
    );
    // The next round ends conservation: slow start toward the target, +2.
    assert_eq!(ack(&mut bbr, &mut tp, 3_000, 90, 0, 5_002), 104);
    // Leaving recovery restores the saved 150, then +2.
    tp.ca_state = CaState::Open;
    assert_eq!(ack(&mut bbr, &mut tp, 4_000, 90, 0, 0), 152);
    // Undo: full-pipe detection and long-term sampling restart; cwnd kept.
    bbr.full_bw = 7;
    bbr.full_bw_cnt = 2;
    bbr.lt_use_bw = true;
    assert_eq!(bbr.undo_cwnd(&tp), 152);
    assert_eq!((bbr.full_bw, bbr.full_bw_cnt, bbr.lt_use_bw), (0, 0, false));
    // An RTO: the round ends and counts as a loss for long-term sampling.
    bbr.full_bw = 7;
    bbr.set_state(&mut tp, CaState::Loss);
    assert_eq!(
        (
            bbr.prev_ca_state,
            bbr.full_bw,
            bbr.round_start,
            bbr.lt_is_sampling
        ),
        (CaState::Loss, 0, true, true)
    );
    // Losses on an ACK come off cwnd before the target rule (150 - 10 + 2 = 142).
    tp.ca_state = CaState::Open;
    bbr.prev_ca_state = CaState::Open;
    tp.snd_cwnd = 150;
    assert_eq!(ack(&mut bbr, &mut tp, 5_000, 90, 10, 0), 142);
}

#[test]
fn the_model_report() {
    let (mut bbr, mut tp, mut rng) = probing(Params::default());
    bbr.cycle_idx = 2;
    bbr.mss = 1448;
    let rs = sample(&mut tp, 1_000, 10, false);
    bbr.cong_control(&mut tp, &rs, &mut rng);
    let keys: Vec<&str> = bbr.model().iter().map(|&(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "bw_bps",
            "min_rtt_us",
            "mode",
            "pacing_gain",
            "cwnd_gain",
            "cycle_idx",
            "cycle_len",
            "full_bw_reached",
            "extra_acked",
            "lt_use_bw",
            "target_cwnd"
        ]
    );
    let m = model(&bbr);
    // 167772 x 1448 x 8 x 10^6 >> 24 = 115839889 bit/s (0.01 packet/us of 1448 bytes).
    assert_eq!(m["bw_bps"], 115_839_889.0);
    assert_eq!(
        (m["min_rtt_us"], m["mode"], m["cycle_len"]),
        (10_000.0, 2.0, 8.0)
    );
    assert_eq!(
        (m["pacing_gain"], m["cwnd_gain"], m["full_bw_reached"]),
        (1.0, 2.0, 1.0)
    );
    // Target: BDP at gain 2 = 200; + aggregation 10 (1 ms after the epoch began 9 packets
    // were expected and none was ACKed yet, so a new epoch starts with these 10); + 3
    // quanta of 9 segments (pacing 14335186 >> 10 = 13999 B): 237 -> 238.
    assert_eq!(
        (m["target_cwnd"], m["extra_acked"], tp.snd_cwnd),
        (238.0, 10.0, 20)
    );
    assert!(linux(Params::default()).model()[1].1.is_nan());
}

#[test]
fn a_path_run_goes_through_every_mode_and_measures_the_bottleneck() {
    // 12 Mbit/s of 1500-byte frames = 1000 packets/s of 1448-byte payload = 11.584 Mbit/s;
    // base RTT 40 ms. Over 12 s: STARTUP, DRAIN, PROBE_BW, one PROBE_RTT about 10 s after
    // the last min_rtt sample, and PROBE_BW again.
    let mut cc = (INFO.make)(&Map::new()).unwrap();
    let mut path = Path::new(12_000_000, 40 * NSEC_PER_MSEC, 1);
    path.start(&mut *cc);
    let mut modes: Vec<(u64, f64)> = Vec::new();
    let mut bw_bps = 0.0;
    path.run(&mut *cc, 12_000 * NSEC_PER_MSEC, |tp, cc| {
        let m = model(cc);
        if modes.last().map(|&(_, mode)| mode) != Some(m["mode"]) {
            modes.push((tp.now / NSEC_PER_MSEC, m["mode"]));
        }
        bw_bps = m["bw_bps"];
    });
    let sequence: Vec<f64> = modes.iter().map(|&(_, m)| m).collect();
    assert_eq!(sequence, [0.0, 1.0, 2.0, 3.0, 2.0], "{modes:?}");
    // STARTUP ends within the first second; PROBE_RTT lasts 200 ms plus at most a round.
    assert!(modes[1].0 < 1_000, "{modes:?}");
    let probe_rtt = modes[4].0 - modes[3].0;
    assert!((200..=250).contains(&probe_rtt), "{modes:?}");
    assert!((10_000..=11_000).contains(&modes[3].0), "{modes:?}");
    // The bandwidth estimate is the bottleneck's payload rate within 1%.
    assert!((bw_bps - 11_584_000.0).abs() < 115_840.0, "{bw_bps}");
}
