//! Scripted-socket tests of the BBRv2/v3 engine. Each test drives the engine through the
//! `CongestionControl` hooks with hand-built `Sock` states and rate samples and checks the
//! kernel's fixed-point results, computed by hand in the comments.
//!
//! Notation in the comments: rate(bw, g) = bw x 1448 x g >> 8 x 990000 >> 24 bytes/s (the
//! kernel's pacing-rate conversion with its 1% margin); bdp(bw, g) at 10 ms =
//! ceil(bw x 10000 x g / 256 / 2^24); tso(r) = max((r >> 10 + 64 KB >> (min_rtt >> 9)) / 1448, 2).

use serde_json::{json, Map, Value};

use super::*;
use crate::parse::Dur;
use crate::tcp::sock::CaState;
use crate::units::NSEC_PER_MSEC;

const MSS: u32 = 1448;
/// The bandwidth of 40 packets per 10 ms: ceil(40 x 2^24 / 10000) = 67109.
const BW40: u32 = 67_109;

fn config(p: Params) -> Config {
    Config::from_params(&p).unwrap()
}

struct Harness {
    tp: Sock,
    cc: Bbr3,
    rng: Rng,
}

/// Deterministic probe timing: wait exactly 2 s, round counter starts at 0.
fn fixed_wait(p: Params) -> Params {
    Params {
        bw_probe_rand: Dur(0),
        bw_probe_rand_rounds: 0,
        ..p
    }
}

impl Harness {
    /// A connection with cwnd 10 whose handshake measured `rtt_us`, 100 packets out.
    fn with_rtt(p: Params, rtt_us: u32) -> Harness {
        let mut tp = Sock::new(MSS, 10);
        tp.srtt_us = rtt_us << 3;
        tp.min_rtt_us = rtt_us;
        tp.packets_out = 100;
        let mut rng = Rng::new(7, 3);
        let mut cc = Bbr3::new("test", config(p));
        cc.init(&mut tp, &mut rng);
        Harness { tp, cc, rng }
    }

    fn new(p: Params) -> Harness {
        Harness::with_rtt(p, 10_000)
    }

    /// Move the clock to `t_us`, deliver `delivered` packets, and build the sample of a packet
    /// sent when `prior_delivered` had been delivered, over 10 ms, RTT 10 ms.
    fn sample(&mut self, t_us: u64, prior_delivered: u64, delivered: u32) -> RateSample {
        self.tp.now = t_us * 1000;
        self.tp.delivered_mstamp = self.tp.now;
        self.tp.delivered += delivered as u64;
        RateSample {
            prior_delivered,
            delivered: delivered as i64,
            interval_us: 10_000,
            rtt_us: 10_000,
            acked_sacked: delivered,
            prior_in_flight: 30,
            ..RateSample::default()
        }
    }

    /// A sample that starts a new round (its packet was sent after the last round ended).
    fn round(&mut self, t_us: u64, delivered: u32) -> RateSample {
        let prior = self.tp.delivered;
        self.sample(t_us, prior, delivered)
    }

    /// A sample inside the current round.
    fn mid(&mut self, t_us: u64, delivered: u32) -> RateSample {
        self.sample(t_us, 0, delivered)
    }

    fn ack(&mut self, rs: RateSample) {
        self.cc.cong_control(&mut self.tp, &rs, &mut self.rng);
    }

    /// ACK a `round` sample as built, without changes.
    fn ack_round(&mut self, t_us: u64, delivered: u32) {
        let rs = self.round(t_us, delivered);
        self.ack(rs);
    }

    /// ACK a `mid` sample as built, without changes.
    fn ack_mid(&mut self, t_us: u64, delivered: u32) {
        let rs = self.mid(t_us, delivered);
        self.ack(rs);
    }

    /// STARTUP on samples of 10, 20, 40, 40, 40, 40 packets per 10 ms round: the bandwidth
    /// stops growing by 25% after round 3, so round 6 is the third flat round and enters
    /// DRAIN. Round 7 (30 packets in flight) leaves DRAIN for ProbeBW DOWN, where an
    /// inflight of 50 keeps it. Time is 70 ms, delivered 230.
    fn fill_pipe(&mut self) {
        for (k, d) in [10, 20, 40, 40, 40, 40].into_iter().enumerate() {
            self.ack_round(10_000 * (k as u64 + 1), d);
        }
        assert_eq!(self.cc.mode, Mode::Drain);
        self.tp.packets_out = 30;
        let mut rs = self.round(70_000, 40);
        rs.prior_in_flight = 50;
        self.ack(rs);
        assert_eq!(
            (self.cc.mode, self.cc.cycle_idx),
            (Mode::ProbeBw, Phase::Down)
        );
    }

    /// `fill_pipe`, then round 8 at 80 ms with 41 in flight: CRUISE. Delivered 270.
    fn reach_cruise(&mut self) {
        self.fill_pipe();
        let mut rs = self.round(80_000, 40);
        rs.prior_in_flight = 41;
        self.ack(rs);
        assert_eq!(self.cc.cycle_idx, Phase::Cruise);
    }

    /// `reach_cruise` with a 2 s probe wait, then REFILL at 2.070001 s and UP one round later
    /// (2.08 s), on a 40-packet sample.
    fn reach_up(&mut self) {
        self.reach_cruise();
        self.ack_mid(2_070_001, 1);
        assert_eq!(self.cc.cycle_idx, Phase::Refill);
        self.ack_round(2_080_000, 40);
        assert_eq!(self.cc.cycle_idx, Phase::Up);
    }
}

/// rate(bw, gain) with the 1% margin, as the kernel converts.
fn pacing(bw: u64, gain: u64) -> u64 {
    (((bw * MSS as u64 * gain) >> 8) * 990_000) >> 24
}

#[test]
fn gains_and_thresholds_are_the_kernels_fixed_point_values() {
    // v2: 2885/1000 x 256 + 1 = 739; 1000/2885 x 256 = 88; 3/4 = 192; 30% = 76; 2% = 5;
    // 15% = 38; 1/3 = 85; 1.2 Mbit/s = 150000 B/s.
    let v2 = config(Params::bbr2());
    assert_eq!(
        (
            v2.startup_pacing_gain,
            v2.startup_cwnd_gain,
            v2.drain_gain,
            v2.cwnd_gain
        ),
        (739, 739, 88, 512)
    );
    assert_eq!(
        (
            v2.probe_up_gain,
            v2.probe_down_gain,
            v2.probe_cruise_gain,
            v2.probe_refill_gain
        ),
        (320, 192, 256, 256)
    );
    assert_eq!((v2.beta, v2.loss_thresh, v2.inflight_headroom), (76, 5, 38));
    assert_eq!(
        (
            v2.ecn_alpha_gain,
            v2.ecn_factor,
            v2.ecn_thresh,
            v2.ecn_alpha_init
        ),
        (16, 85, 128, 256)
    );
    assert_eq!(
        (
            v2.full_loss_cnt,
            v2.full_ecn_cnt,
            v2.probe_up_cwnd_gain,
            v2.ecn_reprobe_gain
        ),
        (8, 2, 0, 0)
    );
    assert_eq!(
        (
            v2.probe_rtt_win_ms,
            v2.probe_rtt_mode_ms,
            v2.probe_rtt_cwnd_gain
        ),
        (5000, 200, 128)
    );
    assert_eq!(
        (
            v2.bw_probe_base_us,
            v2.bw_probe_rand_us,
            v2.min_tso_rate_bytes
        ),
        (2_000_000, 1_000_000, 150_000)
    );
    // v3: 277/100 x 256 + 1 = 710; startup cwnd 2.0; DOWN 91/100 x 256 = 232; UP cwnd +1/4.
    let v3 = config(Params::bbr3());
    assert_eq!(
        (v3.startup_pacing_gain, v3.startup_cwnd_gain, v3.drain_gain),
        (710, 512, 88)
    );
    assert_eq!(
        (v3.probe_up_gain, v3.probe_down_gain, v3.probe_up_cwnd_gain),
        (320, 232, 64)
    );
    assert_eq!(
        (
            v3.full_loss_cnt,
            v3.ecn_reprobe_gain,
            v3.ecn_bw_lo,
            v3.ecn_bw_hi
        ),
        (6, 128, false, false)
    );
    assert_eq!((v3.version, v3.min_tso_rate_bytes), (Version::V3, 0));
    // BBR-n on v3: UP 3/2 = 384, DOWN 9/10 x 256 = 230, startup 739, quantum of 4 MSS.
    let n = config(Params::bbrn3());
    assert_eq!(
        (
            n.probe_up_gain,
            n.probe_down_gain,
            n.startup_pacing_gain,
            n.startup_cwnd_gain
        ),
        (384, 230, 739, 512)
    );
    assert_eq!(
        (
            n.min_tso_segs,
            n.min_tso_rate_bytes,
            n.tso_rtt_shift,
            n.version
        ),
        (4, 150_000, 0, Version::V3)
    );
}

#[test]
fn init_paces_startup_gain_times_cwnd_over_srtt() {
    // bw = 10 x 2^24 / 10000 = 16777; v3 rate(16777, 710) = 3975726, v2 rate(16777, 739) =
    // 4138115; with the TP multiplier 2 the v3 rate doubles to 7951452.
    let h = Harness::new(Params::bbr3());
    assert_eq!(h.tp.pacing_rate, 3_975_726);
    assert_eq!(h.tp.pacing_rate, pacing(16_777, 710));
    assert_eq!(h.tp.pacing_status, PacingStatus::Needed);
    assert_eq!(h.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    assert_eq!(Harness::new(Params::bbr2()).tp.pacing_rate, 4_138_115);
    let mut tp = Sock::new(MSS, 10);
    tp.srtt_us = 10_000 << 3;
    tp.pacing_tp = 2;
    let mut cc = Bbr3::new("test", config(Params::bbr3()));
    cc.init(&mut tp, &mut Rng::new(1, 1));
    assert_eq!(tp.pacing_rate, 7_951_452);
}

#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth() {
    for p in [Params::bbr3(), Params::bbr2()] {
        let mut h = Harness::new(p);
        // Samples ceil(d x 2^24 / 10000) = 16778, 33555, 67109: each at least 1.25 x the
        // plateau level (20972, 41943), so the count restarts; 67109 < 83886 thereafter.
        for (k, d) in [10, 20, 40, 40, 40].into_iter().enumerate() {
            h.ack_round(10_000 * (k as u64 + 1), d);
            assert_eq!(h.cc.mode, Mode::Startup, "round {}", k + 1);
        }
        assert_eq!((h.cc.full_bw, h.cc.full_bw_cnt), (BW40, 2));
        h.ack_round(60_000, 40);
        assert!(h.cc.full_bw_reached);
        assert_eq!(h.cc.mode, Mode::Drain);
        // 100 packets in flight are above the BDP of 41: still draining, at 88/256.
        assert_eq!(h.cc.pacing_gain, 88);
        assert_eq!(h.tp.pacing_rate, pacing(BW40 as u64, 88));
        // ssthresh = inflight(67109, 1) = max(bdp 41, 3 x tso(startup rate)) with
        // bdp = ceil(67109 x 10000 / 2^24) = ceil(40.00002) = 41 and tso <= 11: 41.
        assert_eq!(h.tp.snd_ssthresh, 41);
    }
}

#[test]
fn startup_exits_on_loss_above_2_percent_after_enough_loss_events() {
    // Round 1 (10 packets) opens a loss round ending at delivered 10; then n ACKs of one
    // packet each marking a loss; then an ACK of a packet sent at delivered 10 closes the loss
    // round in Recovery with 2 of 100 packets of its flight lost: 2 > 100 x 5 >> 8 = 1.
    fn run(p: Params, loss_events: u32, lost: u64) -> Harness {
        let mut h = Harness::new(p);
        h.tp.ca_state = CaState::Recovery;
        let mut rs = h.sample(10_000, 1, 10);
        rs.prior_delivered = 1;
        h.ack(rs);
        for i in 0..loss_events {
            let mut rs = h.sample(11_000 + i as u64 * 100, 2, 1);
            rs.losses = 1;
            h.ack(rs);
        }
        // 30 packets over 30 ms: the same 16778 bandwidth, but 30 delivered this round.
        let mut rs = h.sample(20_000, 10, 30);
        rs.interval_us = 30_000;
        rs.tx_in_flight = 100;
        rs.lost = lost;
        h.ack(rs);
        h
    }
    // v3 needs 6 events. Then inflight_hi = max(inflight(16778, 1), inflight_latest) where
    // bdp = ceil(16778 x 10000 / 2^24) = 11 (> 3 x tso = 6) and the round delivered 30.
    let h = run(Params::bbr3(), 6, 2);
    assert!(h.cc.full_bw_reached);
    assert_eq!(h.cc.mode, Mode::Drain);
    assert_eq!(h.cc.inflight_hi, 30);
    // Five events, or a loss rate of 1/100 (1 > 1 is false), do not end STARTUP.
    assert_eq!(run(Params::bbr3(), 5, 2).cc.mode, Mode::Startup);
    assert_eq!(run(Params::bbr3(), 6, 1).cc.mode, Mode::Startup);
    // v2 needs 8 events and takes the BDP alone: inflight_hi = 11.
    assert_eq!(run(Params::bbr2(), 7, 2).cc.mode, Mode::Startup);
    let h = run(Params::bbr2(), 8, 2);
    assert_eq!((h.cc.mode, h.cc.inflight_hi), (Mode::Drain, 11));
}

#[test]
fn probe_bw_runs_down_cruise_refill_up_and_back_to_down() {
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.fill_pipe();
    // DOWN paces at 232/256 and ends when inflight <= inflight(67109, 1) = 41 (tso at the
    // DOWN rate 5196520 B/s is 3, 3 x 3 < 41); 42 stays in DOWN.
    assert_eq!(h.cc.pacing_gain, 232);
    let mut rs = h.round(80_000, 40);
    rs.prior_in_flight = 42;
    h.ack(rs);
    assert_eq!(h.cc.cycle_idx, Phase::Down);
    let mut rs = h.round(90_000, 40);
    rs.prior_in_flight = 41;
    h.ack(rs);
    assert_eq!((h.cc.cycle_idx, h.cc.pacing_gain), (Phase::Cruise, 256));
    assert_eq!(h.tp.pacing_rate, pacing(BW40 as u64, 256));
    // The cycle started at 70 ms; the probe wait is exactly 2 s: CRUISE at 2.070000 s,
    // REFILL at 2.070001 s, with the lower bounds reset.
    h.ack_mid(2_070_000, 1);
    assert_eq!(h.cc.cycle_idx, Phase::Cruise);
    h.ack_mid(2_070_001, 1);
    assert_eq!(
        (
            h.cc.cycle_idx,
            h.cc.pacing_gain,
            h.cc.bw_lo,
            h.cc.inflight_lo
        ),
        (Phase::Refill, 256, UNSET, UNSET)
    );
    // REFILL lasts one round: the next round start enters UP at 5/4, cwnd gain 2 + 1/4.
    h.ack_mid(2_075_000, 1);
    assert_eq!(h.cc.cycle_idx, Phase::Refill);
    h.ack_round(2_080_000, 40);
    assert_eq!(
        (h.cc.cycle_idx, h.cc.pacing_gain, h.cc.cwnd_gain),
        (Phase::Up, 320, 576)
    );
    assert!(h.cc.bw_probe_samples);
    // v3 UP ends when the bandwidth plateaus: three rounds below 1.25 x 67109.
    for k in 1..=2 {
        h.ack_round(2_080_000 + 10_000 * k, 40);
        assert_eq!(h.cc.cycle_idx, Phase::Up, "round {k} of UP");
    }
    h.ack_round(2_110_000, 40);
    assert_eq!(
        (h.cc.cycle_idx, h.cc.pacing_gain, h.cc.cwnd_gain),
        (Phase::Down, 232, 512)
    );
}

#[test]
fn cruise_ends_after_reno_coexistence_rounds() {
    // With the wall clock far away, CRUISE ends once rounds_since_probe reaches
    // min(63, target inflight) = min(63, min(41, cwnd)) = 41. The counter is drawn as 0 at
    // 70 ms and counts rounds 8 (80 ms, 1) to 48 (480 ms, 41).
    let mut h = Harness::new(Params {
        bw_probe_base: Dur(30 * NSEC_PER_MSEC * 1000),
        ..fixed_wait(Params::bbr3())
    });
    h.reach_cruise();
    for k in 9..=47 {
        let mut rs = h.round(k * 10_000, 40);
        rs.prior_in_flight = 41;
        h.ack(rs);
        assert_eq!(h.cc.cycle_idx, Phase::Cruise, "round {k}");
    }
    assert_eq!(h.cc.rounds_since_probe, 40);
    h.ack_round(480_000, 40);
    assert_eq!(h.cc.cycle_idx, Phase::Refill);
}

#[test]
fn probe_up_exit_differs_between_v2_and_v3() {
    // 10.001 ms into UP with 60 in flight: v2 sees min_rtt elapsed and inflight 60 + tso 4
    // >= inflight(67109, 5/4) = bdp 51 + 2 (UP) = 53, so it goes DOWN; v3 waits for a
    // bandwidth plateau.
    for (p, next) in [(Params::bbr2(), Phase::Down), (Params::bbr3(), Phase::Up)] {
        let mut h = Harness::new(fixed_wait(p));
        h.reach_up();
        let mut rs = h.mid(2_090_001, 1);
        rs.prior_in_flight = 60;
        h.ack(rs);
        assert_eq!(h.cc.cycle_idx, next);
    }
    // Three flat rounds with 10 in flight (10 + 4 < 53): v3 goes DOWN, v2 keeps probing.
    for (p, next) in [(Params::bbr2(), Phase::Up), (Params::bbr3(), Phase::Down)] {
        let mut h = Harness::new(fixed_wait(p));
        h.reach_up();
        for k in 1..=3 {
            let mut rs = h.round(2_080_000 + 10_000 * k, 40);
            rs.prior_in_flight = 10;
            h.ack(rs);
        }
        assert_eq!(h.cc.cycle_idx, next);
    }
}

#[test]
fn excessive_loss_in_up_cuts_inflight_hi_and_goes_down() {
    // Target inflight in UP = min(inflight(67109, 1), cwnd) = 41 + 2 = 43; 0.7 x 43 =
    // 43 x 180 >> 8 = 30. The same ACK then checks DOWN: 100 in flight (+ tso 4) is above
    // inflight_hi less 15% headroom (100 - 14 = 86, or 30 - 4 = 26), so DOWN holds, and
    // caps cwnd at inflight_hi (cwnd was above 81).
    for (tx_in_flight, lost, inflight_hi) in [(100, 3, 100), (20, 1, 30)] {
        let mut h = Harness::new(fixed_wait(Params::bbr3()));
        h.reach_up();
        let mut rs = h.mid(2_085_000, 1);
        rs.tx_in_flight = tx_in_flight;
        rs.lost = lost;
        rs.losses = 1;
        rs.prior_in_flight = 100;
        h.ack(rs);
        assert_eq!(
            (h.cc.inflight_hi, h.cc.cycle_idx),
            (inflight_hi, Phase::Down)
        );
        assert!(h.cc.prev_probe_too_high && !h.cc.bw_probe_samples);
        assert!(h.tp.snd_cwnd <= inflight_hi);
        if inflight_hi == 30 {
            assert_eq!(h.tp.snd_cwnd, 30);
        }
    }
    // 1 lost of 100 is not above 2% (100 x 5 >> 8 = 1): UP continues, no bound learned.
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_up();
    let mut rs = h.mid(2_085_000, 1);
    rs.tx_in_flight = 100;
    rs.lost = 1;
    h.ack(rs);
    assert_eq!((h.cc.inflight_hi, h.cc.cycle_idx), (UNSET, Phase::Up));
}

#[test]
fn lost_packet_during_probe_sets_inflight_hi_where_loss_crossed_2_percent() {
    // tx.in_flight 300 and 6 lost since it was sent: 6 > 300 x 5 >> 8 = 5. Before it,
    // 299 in flight and 5 lost; the budget ceil(299 x 5 / 256) = 6 leaves 1 more loss,
    // reached after 1 x 256 / (256 - 5) = 1 more packet: inflight_hi = 300.
    // With 100 in flight and 3 lost: budget ceil(99 x 5 / 256) = 2 <= 2 lost before: 99.
    for (in_flight, lost_since, inflight_hi) in [(300, 6, 300), (100, 3, 99)] {
        let mut h = Harness::new(fixed_wait(Params::bbr3()));
        h.reach_up();
        h.tp.lost = 10;
        let tx = TxState {
            in_flight,
            lost: 10 - lost_since,
            delivered_mstamp_us: 2_000_000,
            ..TxState::default()
        };
        h.cc.skb_marked_lost(&mut h.tp, &tx);
        assert_eq!(
            (h.cc.inflight_hi, h.cc.cycle_idx),
            (inflight_hi, Phase::Down)
        );
        // The loss opened a loss round here; the new DOWN cycle then cleared the round's and
        // the cycle's congestion signals.
        assert_eq!(h.cc.loss_round_delivered, h.tp.delivered);
        assert!(!h.cc.loss_in_round && !h.cc.loss_in_cycle);
        // The hook had no Rng: the new probe wait is drawn on the next ACK.
        assert!(h.cc.probe_wait_pending);
        h.ack_mid(2_086_000, 1);
        assert!(!h.cc.probe_wait_pending);
        assert_eq!(h.cc.probe_wait_us, 2_000_000);
    }
    // Outside a probe, a loss only marks the round.
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_cruise();
    h.tp.lost = 10;
    let tx = TxState {
        in_flight: 100,
        lost: 0,
        delivered_mstamp_us: 1,
        ..TxState::default()
    };
    h.cc.skb_marked_lost(&mut h.tp, &tx);
    assert_eq!(
        (h.cc.inflight_hi, h.cc.cycle_idx, h.cc.loss_in_round),
        (UNSET, Phase::Cruise, true)
    );
}

#[test]
fn cruise_keeps_15_percent_headroom_below_inflight_hi() {
    // inflight_hi 80: headroom 80 x 38 >> 8 = 11, cwnd cap 69. inflight_hi 4: headroom at
    // least 1 gives 3, raised to the cwnd floor of 4.
    for (inflight_hi, cwnd) in [(80, 69), (4, 4)] {
        let mut h = Harness::new(fixed_wait(Params::bbr3()));
        h.reach_cruise();
        h.cc.inflight_hi = inflight_hi;
        h.ack_mid(85_000, 1);
        assert_eq!(h.tp.snd_cwnd, cwnd);
    }
    // DOWN only ends once inflight is within that headroom: with inflight_hi 40 (cap 35)
    // 36 in flight stays in DOWN though it is under the BDP of 41; 35 cruises.
    for (in_flight, phase) in [(36, Phase::Down), (35, Phase::Cruise)] {
        let mut h = Harness::new(fixed_wait(Params::bbr3()));
        h.fill_pipe();
        h.cc.inflight_hi = 40;
        let mut rs = h.round(80_000, 40);
        rs.prior_in_flight = in_flight;
        h.ack(rs);
        assert_eq!(h.cc.cycle_idx, phase, "{in_flight} in flight");
    }
}

#[test]
fn loss_in_cruise_cuts_bw_lo_and_inflight_lo_by_beta_once_per_round() {
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_cruise();
    // L1 (90 ms) opens a loss round at delivered 272 and leaves bw_latest = 3356 (2 packets per
    // 10 ms: ceil(2 x 2^24 / 10000)), inflight_latest = 2.
    h.ack_round(90_000, 2);
    // L2 marks a loss inside that round: nothing is cut yet.
    let mut rs = h.sample(91_000, 271, 2);
    rs.losses = 1;
    h.ack(rs);
    assert_eq!(
        (h.cc.bw_lo, h.cc.inflight_lo, h.cc.loss_in_round),
        (UNSET, UNSET, true)
    );
    // L3 ends the round: bw_lo = max(3356, 67109 x 180 >> 8 = 47186) = 47186,
    // inflight_lo = max(2, cwnd 40 x 180 >> 8 = 28) = 28.
    h.tp.snd_cwnd = 40;
    h.ack_round(100_000, 2);
    assert_eq!(
        (h.cc.bw_lo, h.cc.inflight_lo, h.cc.loss_in_round),
        (47_186, 28, false)
    );
    // The controls use bw = min(67109, 47186): pacing rate(47186, 1) = 4031781 B/s, and
    // cwnd is capped at inflight_lo.
    assert_eq!(h.tp.pacing_rate, 4_031_781);
    assert_eq!(h.tp.snd_cwnd, 28);
    let model: Vec<_> = h.cc.model();
    assert_eq!(model[0], ("bw_bps", 32_580_048.0));
    assert_eq!(model[2], ("bw_lo", 32_580_048.0));

    // The cut never goes below what the last round delivered: rounds of 40 packets per 10 ms
    // leave bw_latest = 67109 > 47186 and inflight_latest = 40 > 28.
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_cruise();
    h.ack_round(90_000, 40);
    let mut rs = h.sample(91_000, 271, 40);
    rs.losses = 1;
    h.ack(rs);
    h.tp.snd_cwnd = 40;
    h.ack_round(100_000, 40);
    assert_eq!((h.cc.bw_lo, h.cc.inflight_lo), (BW40, 40));
}

#[test]
fn ecn_alpha_is_an_ewma_and_two_marked_rounds_end_startup() {
    // ECN on, negotiated, min_rtt 2 ms <= 5 ms. Each round: 100 delivered, 50 CE-marked,
    // ce_ratio = 50 x 256 / 100 = 128.
    let p = Params {
        ecn_enable: true,
        ..Params::bbr3()
    };
    let mut h = Harness::with_rtt(p, 2_000);
    h.tp.ecn_ok = true;
    let mut rs = h.round(2_000, 100);
    rs.interval_us = 2_000;
    h.tp.delivered_ce = 50;
    h.ack(rs);
    // alpha = 256 x (256 - 16) >> 8 + 128 x 16 >> 8 = 240 + 8 = 248.
    assert!(h.cc.ecn_eligible);
    assert_eq!(
        (h.cc.ecn_alpha, h.cc.startup_ecn_rounds, h.cc.mode),
        (248, 1, Mode::Startup)
    );
    let mut rs = h.round(4_000, 100);
    rs.interval_us = 2_000;
    h.tp.delivered_ce = 100;
    h.ack(rs);
    // alpha = 248 x 240 >> 8 + 8 = 232 + 8 = 240; second round at ce_ratio >= 1/2: STARTUP
    // ends with inflight_hi = max(inflight(838861, 1), 100). max_bw = ceil(100 x 2^24 / 2000)
    // = 838861, bdp = ceil(838861 x 2000 / 2^24) = 101; tso at rate(838861, 710) = 198788953
    // B/s is min(194129 + 64 KB >> 3, 65215) / 1448 = 45, so inflight = 3 x 45 = 135.
    assert_eq!(h.cc.ecn_alpha, 240);
    assert_eq!((h.cc.mode, h.cc.inflight_hi), (Mode::Drain, 135));
    let model = h.cc.model();
    assert_eq!(model[10], ("ecn_alpha", 240.0 / 256.0));
}

#[test]
fn ecn_marks_in_cruise_cut_inflight_lo_and_then_reprobe() {
    // ECN at any RTT (ecn_max_rtt 0) so the 10 ms harness qualifies.
    let p = Params {
        ecn_enable: true,
        ecn_max_rtt: Dur(0),
        ..fixed_wait(Params::bbr3())
    };
    let mut h = Harness::new(p);
    h.tp.ecn_ok = true;
    h.reach_cruise();
    assert!(h.cc.ecn_eligible);
    h.cc.ecn_alpha = 128;
    h.cc.inflight_hi = 80;
    h.tp.snd_cwnd = 40;
    // A round of 10 packets, all CE-marked, ACKed with ECE: alpha = 128 x 240 >> 8 +
    // 256 x 16 >> 8 = 120 + 16 = 136; cut = 256 - 136 x 85 >> 8 = 256 - 45 = 211;
    // inflight_lo = 40 x 211 >> 8 = 32, and cwnd follows. v3 leaves bw_lo alone.
    let mut rs = h.round(90_000, 10);
    rs.delivered_ce = 10;
    rs.is_ece = true;
    h.tp.delivered_ce += 10;
    h.ack(rs);
    assert_eq!(
        (h.cc.ecn_alpha, h.cc.inflight_lo, h.cc.bw_lo),
        (136, 32, UNSET)
    );
    assert_eq!(h.tp.snd_cwnd, 32);
    assert!(h.cc.ecn_in_cycle && !h.cc.loss_in_cycle);
    // Marks without loss this cycle: re-probe at once; UP will start with an inflight_hi step
    // of 2^ilog2(80 x 1/2 = 40) = 32 packets per round (bw_probe_up_rounds 5).
    h.ack_mid(91_000, 1);
    assert_eq!(
        (h.cc.cycle_idx, h.cc.bw_probe_up_rounds),
        (Phase::Refill, 5)
    );
}

#[test]
fn ecn_too_high_threshold_is_inclusive_in_v2_and_strict_in_v3() {
    // 50 of 100 marked against 100 x 128 >> 8 = 50.
    let rs = RateSample {
        delivered: 100,
        delivered_ce: 50,
        ..RateSample::default()
    };
    for (p, too_high) in [(Params::bbr2(), true), (Params::bbr3(), false)] {
        let mut cc = Bbr3::new("test", config(p));
        cc.ecn_eligible = true;
        assert_eq!(cc.is_inflight_too_high(&rs), too_high);
    }
}

#[test]
fn probe_rtt_every_5_s_at_half_bdp_for_200_ms() {
    let p = Params {
        bw_probe_base: Dur(10 * NSEC_PER_MSEC * 1000),
        extra_acked_gain: 0.0,
        ..fixed_wait(Params::bbr3())
    };
    let mut h = Harness::new(p);
    h.reach_cruise();
    assert_eq!(h.tp.packets_out, 30);
    // Without aggregation allowance cruise holds cwnd = bdp(67109, 2) = ceil(80.00004) = 81.
    assert_eq!(h.tp.snd_cwnd, 81);
    // The ProbeRTT window started at 0 ms; RTT samples equal to min_rtt do not renew it in
    // v3, so it expires after jiffies 5000.
    h.ack_round(5_000_000, 40);
    assert_eq!(h.cc.mode, Mode::ProbeBw);
    h.ack_round(5_001_000, 40);
    // cwnd = max(4, bdp(67109, 1/2)) = ceil(20.00002) = 21, cwnd 81 remembered. With 30 in
    // flight (> 21) the 200 ms have not started.
    assert_eq!(
        (h.cc.mode, h.cc.pacing_gain, h.cc.cwnd_gain),
        (Mode::ProbeRtt, 256, 256)
    );
    assert_eq!(
        (h.tp.snd_cwnd, h.cc.prior_cwnd, h.cc.probe_rtt.done_stamp),
        (21, 81, 0)
    );
    assert_ne!(h.tp.app_limited, 0);
    // Inflight down to 10 <= 21 at 5050 ms: ProbeRTT lasts until after 5250 ms and a round.
    h.tp.packets_out = 10;
    h.ack_mid(5_050_000, 1);
    assert_eq!((h.tp.snd_cwnd, h.cc.probe_rtt.done_stamp), (21, 5250));
    // At 5250 ms a round has passed but 200 ms have not (strictly after is needed).
    h.ack_round(5_250_000, 40);
    assert_eq!((h.cc.mode, h.tp.snd_cwnd), (Mode::ProbeRtt, 21));
    // At 5251 ms: back to ProbeBW CRUISE with cwnd restored to 81, next window from 5251.
    h.ack_mid(5_251_000, 1);
    assert_eq!((h.cc.mode, h.cc.cycle_idx), (Mode::ProbeBw, Phase::Cruise));
    assert_eq!((h.tp.snd_cwnd, h.cc.probe_rtt_min_stamp), (81, 5251));
}

#[test]
fn v2_renews_the_probe_rtt_window_on_equal_rtt_samples() {
    // v2 compares with <=, so steady 10 ms samples keep renewing the window: no ProbeRTT.
    let p = Params {
        bw_probe_base: Dur(10 * NSEC_PER_MSEC * 1000),
        ..fixed_wait(Params::bbr2())
    };
    let mut h = Harness::new(p);
    h.reach_cruise();
    for t in [5_000_000, 5_001_000, 9_000_000] {
        h.ack_round(t, 40);
        assert_eq!(h.cc.mode, Mode::ProbeBw);
    }
}

#[test]
fn probe_up_doubles_the_inflight_hi_step_each_round() {
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_cruise();
    h.ack_mid(2_070_001, 1);
    assert_eq!(h.cc.cycle_idx, Phase::Refill);
    // cwnd-limited at an inflight_hi of 40 when UP starts: one increment per 40 ACKed.
    h.cc.inflight_hi = 40;
    h.tp.snd_cwnd = 40;
    h.tp.is_cwnd_limited = true;
    h.ack_round(2_080_000, 20);
    assert_eq!(
        (h.cc.cycle_idx, h.cc.bw_probe_up_cnt, h.cc.inflight_hi),
        (Phase::Up, 40, 40)
    );
    // (ACK, new round?) -> (inflight_hi, bw_probe_up_cnt, cwnd), 20 packets per ACK:
    // 20 credits; 40 -> +1; round: cnt = 41 / 2 = 20; 40 -> +2; round: +1 then
    // cnt = 43 / 4 = 10; 20 -> +2.
    let steps = [
        (false, (40, 40, 40)),
        (false, (41, 40, 41)),
        (true, (41, 20, 41)),
        (false, (43, 20, 43)),
        (true, (44, 10, 44)),
        (false, (46, 10, 46)),
    ];
    for (i, (new_round, want)) in steps.into_iter().enumerate() {
        let t = 2_081_000 + 1_000 * i as u64;
        let rs = if new_round {
            h.round(t, 20)
        } else {
            h.mid(t, 20)
        };
        h.ack(rs);
        assert_eq!(
            (h.cc.inflight_hi, h.cc.bw_probe_up_cnt, h.tp.snd_cwnd),
            want,
            "ACK {}",
            i + 1
        );
        assert_eq!(h.cc.cycle_idx, Phase::Up);
    }
}

#[test]
fn v2_forgets_probe_up_credit_when_not_cwnd_limited() {
    for (p, credit) in [(Params::bbr2(), 0), (Params::bbr3(), 20)] {
        let mut h = Harness::new(fixed_wait(p));
        h.reach_cruise();
        h.ack_mid(2_070_001, 1);
        h.cc.inflight_hi = 40;
        h.tp.snd_cwnd = 40;
        h.tp.is_cwnd_limited = true;
        h.ack_round(2_080_000, 20);
        h.ack_mid(2_081_000, 20);
        assert_eq!(h.cc.bw_probe_up_acks, 20);
        h.tp.is_cwnd_limited = false;
        h.ack_mid(2_082_000, 20);
        assert_eq!(h.cc.bw_probe_up_acks, credit);
    }
}

#[test]
fn ack_aggregation_adds_the_excess_acked_to_cwnd() {
    for (gain, cwnds) in [(1.0, [91, 107, 107]), (0.0, [81, 81, 81])] {
        let mut h = Harness::new(Params {
            extra_acked_gain: gain,
            ..fixed_wait(Params::bbr3())
        });
        h.reach_cruise();
        h.cc.aggr.extra_acked = [0, 0];
        h.cc.aggr.ack_epoch_acked = 0;
        h.cc.aggr.ack_epoch_mstamp = 0;
        h.tp.snd_cwnd = 81;
        // 100 ms epoch: expected 67109 x 100000 / 2^24 = 400 >= 0 acked: new epoch, 10 extra;
        // target = bdp(67109, 2) 81 + 10 = 91.
        // 1 ms later: expected 4, acked 10 + 20 = 30: 26 extra, target 107.
        // 11 ms later: expected 44 >= 30: new epoch of 5; the window keeps 26.
        for (i, (t, acked)) in [(100_000, 10), (101_000, 20), (111_000, 5)]
            .into_iter()
            .enumerate()
        {
            h.ack_mid(t, acked);
            assert_eq!(h.tp.snd_cwnd, cwnds[i], "gain {gain} ACK {i}");
        }
        assert_eq!(h.cc.aggr.max(), if gain > 0.0 { 26 } else { 0 });
    }
}

#[test]
fn rto_sets_inflight_lo_from_the_prior_cwnd_per_version() {
    // cwnd 80, prior cwnd 70: v3 takes max(80, 70), v2 the prior cwnd; v3 also restarts the
    // plateau estimator. Leaving Loss restores cwnd to at least the prior cwnd.
    for (p, inflight_lo, full_bw_cnt) in [(Params::bbr3(), 80, 0), (Params::bbr2(), 70, 3)] {
        let mut h = Harness::new(fixed_wait(p));
        h.reach_cruise();
        assert_eq!(h.cc.full_bw_cnt, 3);
        h.tp.snd_cwnd = 80;
        h.cc.prior_cwnd = 70;
        h.cc.set_state(&mut h.tp, CaState::Loss);
        assert_eq!(
            (h.cc.inflight_lo, h.cc.full_bw, h.cc.full_bw_cnt),
            (inflight_lo, 0, full_bw_cnt)
        );
        h.tp.snd_cwnd = 1;
        h.cc.set_state(&mut h.tp, CaState::Open);
        assert_eq!(h.tp.snd_cwnd, 70);
    }
}

#[test]
fn undo_restores_the_bounds_saved_when_recovery_began() {
    for undo in [true, false] {
        let mut h = Harness::new(Params {
            undo,
            ..fixed_wait(Params::bbr3())
        });
        h.reach_cruise();
        (h.cc.bw_lo, h.cc.inflight_lo, h.cc.inflight_hi) = (50_000, 30, 60);
        h.tp.snd_cwnd = 70;
        // ssthresh saves cwnd and the bounds; BBR leaves ssthresh as set at the end of STARTUP
        // (inflight(67109, 1) = 41).
        assert_eq!(h.cc.ssthresh(&h.tp), 41);
        assert_eq!(h.cc.prior_cwnd, 70);
        (h.cc.bw_lo, h.cc.inflight_lo, h.cc.inflight_hi) = (40_000, 20, 50);
        h.tp.snd_cwnd = 20;
        let cwnd = h.cc.undo_cwnd(&h.tp);
        assert_eq!(
            (h.cc.full_bw, h.cc.full_bw_cnt, h.cc.full_bw_now),
            (0, 0, false)
        );
        if undo {
            assert_eq!(cwnd, 70);
            assert_eq!(
                (h.cc.bw_lo, h.cc.inflight_lo, h.cc.inflight_hi),
                (50_000, 30, 60)
            );
        } else {
            assert_eq!(cwnd, 20);
            assert_eq!(
                (h.cc.bw_lo, h.cc.inflight_lo, h.cc.inflight_hi),
                (40_000, 20, 50)
            );
        }
    }
}

#[test]
fn restart_from_idle_paces_at_bw_and_defers_probe_rtt() {
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_up();
    assert_eq!(h.tp.pacing_rate, pacing(BW40 as u64, 320));
    // Not app-limited: no restart.
    h.tp.app_limited = 0;
    h.cc.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert!(!h.cc.idle_restart);
    // App-limited restart: pace at 1.0 x bw = rate(67109, 1) = 5734091 B/s.
    h.tp.app_limited = 1;
    h.cc.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert!(h.cc.idle_restart);
    assert_eq!(h.tp.pacing_rate, 5_734_091);
    // The ProbeRTT window has expired at 5001 ms, but ProbeRTT waits until data is ACKed
    // after idle. (A delayed ACK, so its RTT sample does not renew the window.)
    let mut rs = h.mid(5_001_000, 1);
    rs.is_ack_delayed = true;
    h.ack(rs);
    assert_eq!(h.cc.mode, Mode::ProbeBw);
    assert!(!h.cc.idle_restart);
    h.tp.packets_out = 10;
    h.ack_mid(5_002_000, 1);
    assert_eq!(
        (h.cc.mode, h.cc.probe_rtt.done_stamp),
        (Mode::ProbeRtt, 5202)
    );
    // Restarting from idle in ProbeRTT ends it once its 200 ms are over, without waiting for
    // a round: not at 5202 ms, at 5203 ms.
    h.tp.now = 5_202_000_000;
    h.cc.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert_eq!(h.cc.mode, Mode::ProbeRtt);
    h.tp.now = 5_203_000_000;
    h.cc.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert_eq!((h.cc.mode, h.cc.cycle_idx), (Mode::ProbeBw, Phase::Cruise));
}

#[test]
fn probe_wait_is_random_in_2_to_3_s_and_0_to_1_rounds() {
    let mut h = Harness::new(Params::bbr3());
    h.fill_pipe();
    let (mut waits, mut rounds) = (Vec::new(), [0u32; 2]);
    for _ in 0..400 {
        h.cc.start_bw_probe_down(&h.tp);
        h.cc.resolve_probe_wait(&mut h.rng);
        waits.push(h.cc.probe_wait_us);
        rounds[h.cc.rounds_since_probe as usize] += 1;
    }
    assert!(waits.iter().all(|w| (2_000_000..3_000_000).contains(w)));
    let (lo, hi) = (waits.iter().min().unwrap(), waits.iter().max().unwrap());
    assert!(*lo < 2_050_000 && *hi > 2_950_000, "{lo} {hi}");
    assert!(rounds[0] > 150 && rounds[1] > 150, "{rounds:?}");
}

#[test]
fn min_tso_segs_per_version_and_bbrn3_send_quantum() {
    let sock_at = |rate: u64| {
        let mut tp = Sock::new(MSS, 10);
        tp.pacing_rate = rate;
        tp
    };
    // v2: one segment below 1.2 Mbit/s = 150000 B/s; v3: always 2.
    let v2 = Bbr3::new("bbr2", config(Params::bbr2()));
    assert_eq!(
        (
            v2.min_tso_segs(&sock_at(149_999)),
            v2.min_tso_segs(&sock_at(150_000))
        ),
        (Some(1), Some(2))
    );
    let v3 = Bbr3::new("bbr3", config(Params::bbr3()));
    assert_eq!(v3.min_tso_segs(&sock_at(100_000)), Some(2));
    // BBR-n: 1.19 Mbit/s = 148750 B/s -> 1; 1.21 Mbit/s = 151250 B/s -> 4.
    let n = Bbr3::new("bbrn3", config(Params::bbrn3()));
    assert_eq!(
        (
            n.min_tso_segs(&sock_at(148_750)),
            n.min_tso_segs(&sock_at(151_250))
        ),
        (Some(1), Some(4))
    );
    // Quantum min(rate x 1 ms, 64 KiB) in segments, at least the base:
    // 100 Mbit/s: 12500 B -> 8; 1 Gbit/s: 125000 B capped at 65536 -> 45; 2 Mbit/s:
    // 250 B -> 4; 1.19 Mbit/s: 148 B -> 1.
    for (rate, segs) in [
        (12_500_000, 8),
        (125_000_000, 45),
        (250_000, 4),
        (148_750, 1),
    ] {
        assert_eq!(n.tso_segs_goal(&sock_at(rate)), segs, "rate {rate}");
    }
    // v3 adds 64 KB >> (min_rtt >> 9): at 1 ms min_rtt, 65536 >> 1 = 32768 more bytes.
    let mut v3 = Bbr3::new("bbr3", config(Params::bbr3()));
    v3.min_rtt_us = 1_000;
    assert_eq!(
        v3.tso_segs_goal(&sock_at(12_500_000)),
        (12_207 + 32_768) / 1448
    );
}

#[test]
fn bbrn3_send_quantum_is_bbrn_s_whatever_the_pacing_shift() {
    // BBR-n runs with a 4 ms TSQ budget (sk_pacing_shift 8). At 20 MB/s (160 Mbit/s) its
    // quantum is 1 ms of data: 20000 B = 13 segments of 1448 (13.8), as bbrn computes; the
    // kernel's rule would take 20000000 >> 8 = 78125 B, capped at 65536 - 1 - 320 = 65215 B
    // = 45 segments, and 20000000 >> 10 = 19531 B = 13 at the default shift 10.
    let sock_at = |rate: u64, shift: u8| {
        let mut tp = Sock::new(MSS, 10);
        tp.pacing_rate = rate;
        tp.pacing_shift = shift;
        tp
    };
    use crate::cc::bbr::Variant as _;
    let n = Bbr3::new("bbrn3", config(Params::bbrn3()));
    let bbrn = crate::cc::bbr::bbrn::Quantum::new(&Default::default()).unwrap();
    let k = crate::cc::bbr::bbrn::engine_defaults().knobs().unwrap();
    for shift in [8, 10] {
        let tp = sock_at(20_000_000, shift);
        assert_eq!(n.tso_segs_goal(&tp), 13, "shift {shift}");
        assert_eq!(bbrn.tso_segs_goal(&k, &tp), 13, "shift {shift}");
    }
    // The skb size (`bbr_tso_segs`) stays the kernel's rule, as bbrn's skbs are the stack's:
    // 45 segments at shift 8, 13 at shift 10.
    assert_eq!(n.tso_segs(&sock_at(20_000_000, 8)), Some(45));
    assert_eq!(n.tso_segs(&sock_at(20_000_000, 10)), Some(13));
    // 60 MB/s at shift 8: 60000 B = 41 segments (41.4) for both; the cap 65536 B = 45 at
    // 80 MB/s.
    for (rate, segs) in [(60_000_000, 41), (80_000_000, 45)] {
        let tp = sock_at(rate, 8);
        assert_eq!(n.tso_segs_goal(&tp), segs, "rate {rate}");
        assert_eq!(bbrn.tso_segs_goal(&k, &tp), segs, "rate {rate}");
    }
    // bbr3 keeps the kernel's rule (no RTT yet, so no min_rtt allowance): 45 at shift 8, 13
    // at shift 10.
    let v3 = Bbr3::new("bbr3", config(Params::bbr3()));
    assert_eq!(v3.tso_segs_goal(&sock_at(20_000_000, 8)), 45);
    assert_eq!(v3.tso_segs_goal(&sock_at(20_000_000, 10)), 13);
    // The quantum's parameters are bbrn's, validated by the same code.
    let mut m = Map::new();
    m.insert("send_quantum_interval".into(), json!("1.5us"));
    let err = (BBRN3_INFO.make)(&m).err().unwrap();
    assert!(
        err.starts_with(
            "parameter send_quantum_interval = \"1500ns\": expected a whole number of microseconds"
        ),
        "{err}"
    );
    m.insert("send_quantum_interval".into(), json!("2ms"));
    m.insert("send_quantum_max".into(), json!("16kib"));
    let c = Params::bbrn3().with_overrides(&m).unwrap();
    let n2 = Bbr3::new("bbrn3", c);
    // 2 ms at 20 MB/s = 40000 B, capped at 16384 B = 11 segments (11.3).
    assert_eq!(n2.tso_segs_goal(&sock_at(20_000_000, 8)), 11);
}

#[test]
fn bbrn3_probes_up_at_1_5_and_drains_at_0_9() {
    let mut h = Harness::new(fixed_wait(Params::bbrn3()));
    assert_eq!(h.cc.pacing_gain, 739);
    h.reach_up();
    // UP: 384/256 = 1.5, pacing rate(67109, 384).
    assert_eq!(h.cc.pacing_gain, 384);
    assert_eq!(h.tp.pacing_rate, pacing(BW40 as u64, 384));
    let mut rs = h.mid(2_085_000, 1);
    rs.tx_in_flight = 100;
    rs.lost = 5;
    rs.prior_in_flight = 100;
    h.ack(rs);
    assert_eq!((h.cc.cycle_idx, h.cc.pacing_gain), (Phase::Down, 230));
    let model = h.cc.model();
    assert_eq!(model[6], ("pacing_gain", 230.0 / 256.0));
}

#[test]
fn pacing_multiplier_scales_only_the_pacing_rate() {
    // The same run with TP x1 and x2: pacing doubles (2 x rate(67109, 1) = 11468182), the
    // model and cwnd are the same.
    let mut runs = Vec::new();
    for tp_mult in [1, 2] {
        let mut h = Harness::new(fixed_wait(Params::bbr3()));
        h.tp.pacing_tp = tp_mult;
        h.reach_cruise();
        runs.push((h.tp.pacing_rate, h.tp.snd_cwnd, h.cc.model()));
    }
    assert_eq!((runs[0].0, runs[1].0), (5_734_091, 11_468_182));
    assert_eq!(runs[0].1, runs[1].1);
    assert_eq!(runs[0].2, runs[1].2);
}

#[test]
fn model_reports_the_state_in_physical_units() {
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_cruise();
    // bw = 67109 x 1448 x 1000000 >> 24 = 5792011 B/s = 46336088 bit/s.
    let want = vec![
        ("bw_bps", 46_336_088.0),
        ("bw_hi", 46_336_088.0),
        ("bw_lo", f64::INFINITY),
        ("min_rtt_us", 10_000.0),
        ("state", 2.0),
        ("phase", 1.0),
        ("pacing_gain", 1.0),
        ("cwnd_gain", 2.0),
        ("inflight_hi", f64::INFINITY),
        ("inflight_lo", f64::INFINITY),
        ("ecn_alpha", 1.0),
        ("loss_in_round", 0.0),
    ];
    assert_eq!(h.cc.model(), want);
    assert!(h.cc.wants_pacing() && h.cc.has_cong_control());
    assert_eq!(h.cc.sndbuf_expand(), 3);
}

fn build(name: &str, overrides: Value) -> Result<Box<dyn CongestionControl>, String> {
    let m: Map<String, Value> = serde_json::from_value(overrides).unwrap();
    let info = [BBR2_INFO, BBR3_INFO, BBRN3_INFO]
        .into_iter()
        .find(|i| i.name == name)
        .unwrap();
    (info.make)(&m)
}

#[test]
fn names_defaults_and_overrides() {
    for (info, version, down) in [
        (BBR2_INFO, "v2", 0.75),
        (BBR3_INFO, "v3", 0.90625),
        (BBRN3_INFO, "v3", 0.8984375),
    ] {
        let d = (info.defaults)();
        assert_eq!(
            (d["version"].as_str(), d["probe_down_gain"].as_f64()),
            (Some(version), Some(down)),
            "{}",
            info.name
        );
        assert_eq!(build(info.name, json!({})).unwrap().name(), info.name);
    }
    let cfg = Params::bbr3()
        .with_overrides(
            &serde_json::from_value(json!({"probe_up_gain": 1.5, "probe_rtt_interval": "2s"}))
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        (cfg.probe_up_gain, cfg.probe_rtt_win_ms, cfg.probe_down_gain),
        (384, 2000, 232)
    );
}

#[test]
fn invalid_parameters_name_the_field_the_value_and_the_expectation() {
    let err = |v: Value| build("bbr3", v).err().unwrap();
    assert_eq!(
        err(json!({"beta": 1.5})),
        "parameter beta = 1.5: expected a fraction between 0 and 1"
    );
    assert_eq!(
        err(json!({"startup_pacing_gain": -1.0})),
        "parameter startup_pacing_gain = -1: expected a gain between 0 and 16"
    );
    assert_eq!(
        err(json!({"loss_thresh": 1.0})),
        "parameter loss_thresh = 1: expected a fraction below 1 (at most 255/256)"
    );
    assert_eq!(
        err(json!({"probe_rtt_interval": "20s"})),
        "parameter probe_rtt_interval = 20s: expected at most min_rtt_window (10s)"
    );
    assert_eq!(
        err(json!({"full_loss_cnt": 16})),
        "parameter full_loss_cnt = 16: expected an integer from 0 to 15"
    );
    assert!(err(json!({"gain": 1})).contains("unknown field `gain`"));
    let e = err(json!({"version": "v4"}));
    assert!(
        e.starts_with("parameter version = \"v4\"") && e.contains("v2"),
        "{e}"
    );
    let e = err(json!({"probe_up_gain": "fast"}));
    assert!(e.starts_with("parameter probe_up_gain = \"fast\""), "{e}");
}

#[test]
fn max_bw_filter_forgets_samples_older_than_two_cycles() {
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_cruise();
    // The first round after a cycle started moves the newer slot into the older one: with
    // slots [67109, 50000] and a 20-packet sample (33555 < 50000) the filter becomes
    // [50000, 0] and bw = 50000: pacing rate(50000, 1) = 4272222 B/s.
    h.cc.max_bw = [BW40, 50_000];
    h.cc.ack_phase = AckPhase::ProbeStopping;
    h.ack_round(90_000, 20);
    assert_eq!(h.cc.max_bw, [50_000, 0]);
    assert_eq!(h.tp.pacing_rate, 4_272_222);
    // Later rounds only feed the newer slot.
    h.ack_round(100_000, 20);
    assert_eq!(h.cc.max_bw, [50_000, 33_555]);
    // An app-limited round does not advance the window.
    h.cc.ack_phase = AckPhase::ProbeStopping;
    let mut rs = h.round(110_000, 20);
    rs.is_app_limited = true;
    h.ack(rs);
    assert_eq!(h.cc.max_bw, [50_000, 33_555]);
    // Nor does a cycle without any sample: the old slot is kept rather than emptied.
    h.cc.max_bw = [BW40, 0];
    h.cc.ack_phase = AckPhase::ProbeStopping;
    let mut rs = h.round(120_000, 0);
    rs.acked_sacked = 0;
    h.ack(rs);
    assert_eq!(h.cc.max_bw, [BW40, 0]);
}

#[test]
fn entering_cruise_caps_inflight_lo_at_inflight_hi() {
    // inflight_lo 60 > inflight_hi 50: CRUISE starts at inflight_lo = 50, and cwnd is capped
    // at inflight_hi less headroom, 50 - 50 x 38 >> 8 = 43.
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.fill_pipe();
    (h.cc.inflight_lo, h.cc.inflight_hi) = (60, 50);
    h.ack_round(80_000, 40);
    assert_eq!(
        (h.cc.cycle_idx, h.cc.inflight_lo, h.tp.snd_cwnd),
        (Phase::Cruise, 50, 43)
    );
}

#[test]
fn v2_cuts_bw_hi_on_ecn_when_no_probe_sample_was_acceptable() {
    // In UP, 10 of 10 delivered packets CE-marked (>= 10 x 128 >> 8 = 5) with alpha 1/2:
    // cut = 256 - 128 x 85 >> 8 = 214, bw_hi = 67109 x 214 >> 8 = 56098, which v2's bw uses.
    // v3 has no such bound.
    for (p, bw_hi) in [(Params::bbr2(), 56_098), (Params::bbr3(), UNSET)] {
        let p = Params {
            ecn_enable: true,
            ecn_max_rtt: Dur(0),
            ..fixed_wait(p)
        };
        let mut h = Harness::new(p);
        h.tp.ecn_ok = true;
        h.reach_up();
        assert!(h.cc.ecn_eligible && !h.cc.got_ok_bw_probe_sample);
        h.cc.ecn_alpha = 128;
        let mut rs = h.mid(2_085_000, 10);
        rs.delivered_ce = 10;
        rs.prior_in_flight = 100;
        h.ack(rs);
        assert_eq!(
            (h.cc.bw_hi, h.cc.cycle_idx, h.cc.inflight_hi),
            (bw_hi, Phase::Down, 30)
        );
        assert_eq!(h.cc.bw(), bw_hi.min(BW40));
    }
}

#[test]
fn app_limited_acks_with_nothing_new_skip_the_control_update() {
    // In CRUISE cwnd sits at its target, so the next app-limited ACK with a sample below
    // max_bw changes neither mode nor min_rtt and leaves cwnd and pacing as they are (here a
    // cwnd of 50 set from outside); without the fast path cwnd is recomputed: min(50 + 1, 81+).
    for (fast_path, cwnd) in [(true, 50), (false, 51)] {
        let mut h = Harness::new(Params {
            fast_path,
            ..fixed_wait(Params::bbr3())
        });
        h.reach_cruise();
        assert!(h.cc.try_fast_path);
        h.tp.snd_cwnd = 50;
        let mut rs = h.mid(85_000, 1);
        rs.is_app_limited = true;
        h.ack(rs);
        assert_eq!(h.tp.snd_cwnd, cwnd);
    }
}

#[test]
fn v3_keeps_bw_lo_positive() {
    // A lossy round that delivered nothing: bw_lo = max(0, 1 x 180 >> 8 = 0) = 0 in v2,
    // floored at 1 in v3.
    for (p, bw_lo) in [(Params::bbr2(), 0), (Params::bbr3(), 1)] {
        let mut h = Harness::new(fixed_wait(p));
        h.reach_cruise();
        (h.cc.bw_lo, h.cc.bw_latest, h.cc.loss_in_round) = (1, 0, true);
        h.cc.adapt_lower_bounds(&h.tp);
        assert_eq!(h.cc.bw_lo, bw_lo);
    }
}

#[test]
fn startup_pacing_follows_the_first_rtt_then_only_rises() {
    // No RTT at init: nominal 1 ms, bw = 10 x 2^24 / 1000 = 167772, rate(167772, 710) =
    // 39757743 B/s. The first ACK after srtt is known recomputes it from srtt 10 ms:
    // 3975726, although the sample (1 packet per 10 ms) asks for less; later small samples
    // leave it there until the pipe is full.
    let mut tp = Sock::new(MSS, 10);
    let mut cc = Bbr3::new(
        "test",
        config(Params {
            extra_acked_gain: 0.0,
            ..Params::bbr3()
        }),
    );
    let mut rng = Rng::new(1, 1);
    cc.init(&mut tp, &mut rng);
    assert_eq!((tp.pacing_rate, cc.min_rtt_us), (39_757_743, UNSET));
    let mut h = Harness { tp, cc, rng };
    h.tp.srtt_us = 10_000 << 3;
    // cwnd grows by the ACKed packets while below twice the initial cwnd even though the
    // target, bdp(1678, 2) = 3 raised to 3 x tso 2 = 6, is lower.
    for (i, t) in [10_000, 20_000].into_iter().enumerate() {
        h.ack_round(t, 1);
        assert_eq!(
            (h.tp.pacing_rate, h.tp.snd_cwnd),
            (3_975_726, 11 + i as u32)
        );
    }
    assert_eq!(h.cc.min_rtt_us, 10_000);
}

#[test]
fn drain_and_down_count_only_what_is_in_the_network_at_the_next_departure() {
    // 45 in flight with the next packet due 1 ms from now: the path delivers
    // 67109 x 1000 >> 24 = 4 packets meanwhile, so 41 <= 41 count and DOWN ends; without a
    // pending departure 45 stays in DOWN.
    for (wait_ns, phase) in [(1_000_000, Phase::Cruise), (0, Phase::Down)] {
        let mut h = Harness::new(fixed_wait(Params::bbr3()));
        h.fill_pipe();
        let mut rs = h.round(80_000, 40);
        rs.prior_in_flight = 45;
        h.tp.tcp_wstamp_ns = h.tp.now + wait_ns;
        h.ack(rs);
        assert_eq!(h.cc.cycle_idx, phase);
    }
}

#[test]
fn a_probe_that_reaches_a_too_high_inflight_hi_again_stops_there_and_reprobes() {
    // The last probe went too high and set inflight_hi 60. In UP the next skb counts too
    // (tso 4 at rate(67109, 5/4) = 7167614 B/s): 55 + 4 < 60 goes on, 56 + 4 >= 60 stops at
    // once (a risky probe) and goes DOWN; since this probe saw no loss, the first round of
    // DOWN starts REFILL again instead of waiting 2-3 s.
    let mut h = Harness::new(fixed_wait(Params::bbr3()));
    h.reach_up();
    (h.cc.prev_probe_too_high, h.cc.inflight_hi) = (true, 60);
    let mut rs = h.mid(2_081_000, 1);
    rs.prior_in_flight = 55;
    h.ack(rs);
    assert_eq!(h.cc.cycle_idx, Phase::Up);
    let mut rs = h.mid(2_082_000, 1);
    rs.prior_in_flight = 56;
    h.ack(rs);
    assert_eq!(h.cc.cycle_idx, Phase::Down);
    assert!(h.cc.stopped_risky_probe && !h.cc.prev_probe_too_high);
    let mut rs = h.round(2_090_000, 40);
    rs.prior_in_flight = 60;
    h.ack(rs);
    assert_eq!(h.cc.cycle_idx, Phase::Refill);
}
