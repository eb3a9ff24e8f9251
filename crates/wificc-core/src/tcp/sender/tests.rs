//! Unit tests of the TCP sender, in the manner of smoltcp's socket tests: a harness builds a
//! sender with a chosen configuration and congestion control, feeds it ACKs (cumulative ACK and
//! SACK blocks) and timer firings at chosen instants, and each test checks exactly what was sent
//! and the exact state after each step (scoreboard counters, cwnd, ssthresh, PRR, RTO, timers),
//! against values worked out by hand from the Linux function its comment names.
//!
//! Unless a test says otherwise: one segment per skb (offloads off), no TSQ, and a congestion
//! control that never grows cwnd ([`FixedCwnd`]), so that every window change comes from the
//! engine itself.

use std::collections::VecDeque;

use super::*;
use crate::cc::reno::{reno_ssthresh, Reno};
use crate::net::packet::SackBlock;
use crate::units::NSEC_PER_MSEC;

const MS: Nanos = NSEC_PER_MSEC;
const US: Nanos = NSEC_PER_USEC;
const MSS: u64 = 1448;
/// truesize of a one-segment skb: 1448 + the 896-byte skb overhead.
const TRUESIZE: u64 = 2344;

/// A congestion control that never grows cwnd and takes Reno's ssthresh (half the window).
struct FixedCwnd;

impl CongestionControl for FixedCwnd {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        reno_ssthresh(tp)
    }
}

struct Harness {
    s: TcpSender,
    pkts: Packets,
    work: VecDeque<PacketRef>,
    timers: Vec<(Nanos, SenderTimer)>,
}

/// The tests' sender settings: one segment per skb, no TSQ.
fn cfg(cwnd: u32) -> SenderConfig {
    SenderConfig {
        init_cwnd: cwnd,
        offloads: false,
        tsq: TsqMode::Off,
        ..SenderConfig::default()
    }
}

impl Harness {
    /// A sender of `segments` full segments (None: unlimited).
    fn new(cfg: SenderConfig, cc: Box<dyn CongestionControl>, segments: Option<u64>) -> Self {
        let s = TcpSender::new(1, 0, 0, cfg, cc, Rng::new(1, 1), segments.map(|n| n * MSS));
        Harness {
            s,
            pkts: Packets::new(),
            work: VecDeque::new(),
            timers: Vec::new(),
        }
    }

    fn fixed(cwnd: u32, segments: Option<u64>) -> Self {
        Self::new(cfg(cwnd), Box::new(FixedCwnd), segments)
    }

    /// Run `f` at `now`; return the packets it sent, in order.
    fn run(&mut self, now: Nanos, f: impl FnOnce(&mut TcpSender, &mut Out)) -> Vec<Packet> {
        self.timers.clear();
        let mut out = Out::new(now, &mut self.pkts, &mut self.work, &mut self.timers);
        f(&mut self.s, &mut out);
        self.work.drain(..).map(|r| self.pkts.remove(r)).collect()
    }

    fn start(&mut self, now: Nanos) -> Vec<Packet> {
        self.run(now, |s, out| s.start(out))
    }

    /// An ACK of everything below `cum` with these SACK blocks, no TSecr.
    fn ack(&mut self, now: Nanos, cum: u64, sacks: &[(u64, u64)]) -> Vec<Packet> {
        self.ack_tsecr(now, cum, sacks, 0)
    }

    fn ack_tsecr(
        &mut self,
        now: Nanos,
        cum: u64,
        sacks: &[(u64, u64)],
        tsecr: Nanos,
    ) -> Vec<Packet> {
        let mut info = AckInfo {
            cum,
            nsack: sacks.len() as u8,
            tsecr,
            ..AckInfo::default()
        };
        for (b, &(start, end)) in info.sack.iter_mut().zip(sacks) {
            *b = SackBlock { start, end };
        }
        let mut p = Packet::new(Kind::Ack, 1, 0, 52, now);
        p.set_ack(&info);
        self.run(now, |s, out| s.on_ack(&p, out))
    }

    fn fire(&mut self, now: Nanos, which: SenderTimer) -> Vec<Packet> {
        self.run(now, |s, out| s.on_timer(which, out))
    }

    fn tx_complete(&mut self, now: Nanos, p: &Packet) -> Vec<Packet> {
        let truesize = p.truesize;
        self.run(now, |s, out| s.on_tx_complete(truesize, out))
    }

    fn deadline(&self, which: SenderTimer) -> Option<Nanos> {
        self.s.timers[which as usize].deadline()
    }

    /// Outstanding segments with `flag` set.
    fn flagged(&self, flag: u8) -> Vec<u64> {
        let una = self.s.tp.snd_una;
        (una..self.s.tp.snd_nxt)
            .filter(|&q| self.s.seg(q).flags & flag != 0)
            .collect()
    }

    /// (packets_out, sacked_out, lost_out, retrans_out, packets in flight).
    fn counts(&self) -> (u32, u32, u32, u32, u32) {
        let tp = &self.s.tp;
        (
            tp.packets_out,
            tp.sacked_out,
            tp.lost_out,
            tp.retrans_out,
            tp.packets_in_flight(),
        )
    }

    fn prr(&self) -> (u32, u32) {
        (self.s.prr_delivered, self.s.prr_out)
    }
}

/// Sequence numbers of sent packets.
fn seqs(sent: &[Packet]) -> Vec<u64> {
    sent.iter().map(|p| p.seq).collect()
}

/// All of `sent` are retransmissions.
fn all_retrans(sent: &[Packet]) -> bool {
    sent.iter().all(Packet::retrans)
}

// ----- the output loop, cwnd validation, TSQ -----

/// `tcp_write_xmit` + `tcp_cwnd_test`: the initial window goes out at once, one skb per segment
/// here, and `tcp_cwnd_validate` records that it was cwnd-limited; the RTO starts at
/// `TCP_TIMEOUT_INIT` (1 s) from the first transmission.
#[test]
fn initial_window_is_sent_and_the_rto_is_one_second() {
    let mut h = Harness::fixed(10, None);
    let sent = h.start(0);
    assert_eq!(seqs(&sent), (0..10).collect::<Vec<_>>());
    assert!(sent.iter().all(|p| !p.retrans() && p.payload == MSS as u32));
    assert_eq!((h.s.tp.snd_una, h.s.tp.snd_nxt), (0, 10));
    assert_eq!(h.counts(), (10, 0, 0, 0, 10));
    assert_eq!(h.s.rto(), 1000 * MS);
    assert_eq!(h.deadline(SenderTimer::Rto), Some(1000 * MS));
    assert_eq!(h.deadline(SenderTimer::Reorder), None);
    assert!(h.s.tp.is_cwnd_limited);
    assert_eq!(h.s.tp.max_packets_out, 10);
    assert_eq!(h.s.cwnd_usage_seq, 10);
}

/// `tcp_cwnd_validate` and `tcp_is_cwnd_limited`: an application-limited flight is not
/// cwnd-limited; in slow start the window counts as used once more than half of it is out.
#[test]
fn cwnd_validation_tracks_the_window_in_use() {
    // 4 of 10: not limited (10 >= 2 x 4).
    let mut h = Harness::fixed(10, Some(4));
    assert_eq!(seqs(&h.start(0)), vec![0, 1, 2, 3]);
    assert!(!h.s.tp.is_cwnd_limited);
    assert_eq!((h.s.tp.max_packets_out, h.s.cwnd_usage_seq), (4, 4));
    assert!(!h.s.tp.is_cwnd_limited());
    // 6 of 10 in slow start: limited (10 < 2 x 6).
    let mut h = Harness::fixed(10, Some(6));
    h.start(0);
    assert!(!h.s.tp.is_cwnd_limited);
    assert_eq!(h.s.tp.max_packets_out, 6);
    assert!(h.s.tp.is_cwnd_limited());
    // The same out of slow start (ssthresh 5): not limited.
    let mut h = Harness::fixed(10, Some(6));
    h.s.tp.snd_ssthresh = 5;
    h.start(0);
    assert!(!h.s.tp.is_cwnd_limited());
}

/// `tcp_reno_cong_avoid` grows cwnd only when `tcp_is_cwnd_limited`: a full window ACKed by 2
/// grows it by 2 in slow start (and the ACK clock sends 2 + 2 new segments); a flight of 4 in a
/// window of 10 does not grow it.
#[test]
fn reno_grows_only_when_cwnd_limited() {
    let mut h = Harness::new(cfg(10), Box::new(Reno), None);
    h.start(0);
    let sent = h.ack(100 * MS, 2, &[]);
    assert_eq!(h.s.tp.snd_cwnd, 12);
    assert_eq!(seqs(&sent), vec![10, 11, 12, 13]);
    assert_eq!(h.counts(), (12, 0, 0, 0, 12));

    let mut h = Harness::new(cfg(10), Box::new(Reno), Some(4));
    h.start(0);
    assert!(h.ack(100 * MS, 2, &[]).is_empty());
    assert_eq!(h.s.tp.snd_cwnd, 10);
}

/// `tcp_small_queue_check` with the rate limit, unpaced: limit = min(max(2 x truesize,
/// pacing_rate >> 10), tcp_limit_output_bytes) = 5000 here; an skb goes while no more than the
/// limit is below TCP, so the third crosses it and the fourth waits for a TX completion.
#[test]
fn tsq_rate_limit_stops_once_over_and_a_completion_resumes() {
    let cfg = SenderConfig {
        tsq: TsqMode::Rate,
        limit_output_bytes: 5000,
        ..cfg(10)
    };
    let mut h = Harness::new(cfg, Box::new(FixedCwnd), None);
    let sent = h.start(0);
    assert_eq!(seqs(&sent), vec![0, 1, 2]);
    assert!(sent.iter().all(|p| p.truesize as u64 == TRUESIZE));
    assert_eq!(h.s.tsq_limit(TRUESIZE, 0), Some(5000));
    assert_eq!((h.s.below_bytes, h.s.below_packets), (3 * TRUESIZE, 3));
    assert!(h.s.tsq_throttled);
    assert_eq!((h.s.stats.tsq_throttled, h.s.stats.tsq_exceptions), (1, 0));
    // One completion: 4688 bytes below, not over 5000: one more skb, then over again.
    let sent = h.tx_complete(MS, &sent[0]);
    assert_eq!(seqs(&sent), vec![3]);
    assert_eq!((h.s.below_bytes, h.s.below_packets), (3 * TRUESIZE, 3));
    assert_eq!(h.s.stats.tsq_throttled, 2);
}

/// `tcp_small_queue_check` compares `sk_wmem_alloc`, which counts the socket's own reference (1)
/// besides the skbs' truesizes: with the limit at exactly two skbs (min(max(2 x truesize,
/// pacing_rate >> 10), tcp_limit_output_bytes) = 4688), two skbs below TCP put 4689 over it,
/// so the third waits.
#[test]
fn tsq_counts_the_sockets_own_reference() {
    let limited = |bytes| SenderConfig {
        tsq: TsqMode::Rate,
        limit_output_bytes: bytes,
        ..cfg(10)
    };
    let mut h = Harness::new(limited(2 * TRUESIZE), Box::new(FixedCwnd), None);
    let sent = h.start(0);
    assert_eq!(seqs(&sent), vec![0, 1]);
    assert_eq!(h.s.tsq_limit(TRUESIZE, 0), Some(2 * TRUESIZE));
    assert!(h.s.tsq_throttled);
    // One byte more of limit and the third goes (2 x 2344 + 1 is not over 4689).
    let mut h = Harness::new(limited(2 * TRUESIZE + 1), Box::new(FixedCwnd), None);
    assert_eq!(seqs(&h.start(0)), vec![0, 1, 2]);
}

/// A NIC that orphans what it takes (`orphan_whole_skb`, TUN behind a qdisc) releases an skb's
/// whole charge as its first packet leaves the qdisc: the first segment carries the skb's
/// truesize (its payload + the 896-byte overhead, not the software-GSO segments' own, which
/// exist only after the dequeue), the others none, and one completion frees the skb.
#[test]
fn an_orphaning_nic_releases_whole_skbs() {
    let cfg = SenderConfig {
        offloads: true,
        // skbs of 4 segments (gso_max_size caps tcp_tso_autosize).
        gso_max_size: 4 * MSS as u32,
        software_gso: Some(true),
        orphan_whole_skb: true,
        tsq: TsqMode::StaticBytes(2 * (4 * MSS + 896)),
        ..cfg(10)
    };
    let mut h = Harness::new(cfg, Box::new(FixedCwnd), None);
    let sent = h.start(0);
    let skb = 4 * MSS + 896;
    assert_eq!(seqs(&sent), (0..8).collect::<Vec<_>>());
    let charges: Vec<u32> = sent.iter().map(|p| p.truesize).collect();
    assert_eq!(charges, [skb as u32, 0, 0, 0, skb as u32, 0, 0, 0]);
    assert_eq!((h.s.below_bytes, h.s.below_packets), (2 * skb, 2));
    // The first skb leaves the qdisc: all of it is released and the next skb goes.
    let more = h.tx_complete(MS, &sent[0]);
    assert_eq!(seqs(&more), vec![8, 9]);
    assert_eq!(
        (h.s.below_bytes, h.s.below_packets),
        (skb + 2 * MSS + 896, 2)
    );
}

/// `tcp_small_queue_check`'s exception: an skb always goes when the retransmit queue is empty
/// or (6.6+, `tcp_rtx_queue_empty_or_single_skb`) holds one skb; the model also lets one go when
/// nothing of the socket is below TCP. A static limit of 1000 bytes is below one skb's truesize,
/// so every send here is over it.
#[test]
fn tsq_one_skb_exception() {
    let tsq = |single| SenderConfig {
        tsq: TsqMode::StaticBytes(1000),
        tsq_single_skb: single,
        ..cfg(10)
    };
    // Before 6.6: only an empty queue.
    let mut h = Harness::new(tsq(false), Box::new(FixedCwnd), None);
    assert_eq!(seqs(&h.start(0)), vec![0]);
    assert_eq!((h.s.stats.tsq_exceptions, h.s.stats.tsq_throttled), (1, 1));

    // 6.6+: an empty queue, then a queue of one skb.
    let mut h = Harness::new(tsq(true), Box::new(FixedCwnd), None);
    let sent = h.start(0);
    assert_eq!(seqs(&sent), vec![0, 1]);
    assert_eq!((h.s.stats.tsq_exceptions, h.s.stats.tsq_throttled), (2, 1));
    assert_eq!((h.s.below_bytes, h.s.below_packets), (2 * TRUESIZE, 2));
    // Segment 0 leaves the host: segment 1 is still below TCP and two skbs are unacknowledged,
    // so nothing goes (throttled again).
    assert!(h.tx_complete(MS, &sent[0]).is_empty());
    assert_eq!((h.s.below_packets, h.s.stats.tsq_throttled), (1, 2));
    // Segment 1 leaves: nothing is below TCP, so one skb goes, and only one.
    let more = h.tx_complete(2 * MS, &sent[1]);
    assert_eq!(seqs(&more), vec![2]);
    assert_eq!((h.s.stats.tsq_exceptions, h.s.stats.tsq_throttled), (3, 3));
    assert_eq!((h.s.below_bytes, h.s.below_packets), (TRUESIZE, 1));
}

// ----- RTT estimator and RTO -----

/// `tcp_rtt_estimator` and `tcp_set_rto` on exact samples (us). First sample m: srtt = 8m,
/// mdev = 2m, rttvar = max(mdev, rto_min); RTO = srtt/8 + rttvar, so never below 200 ms + srtt.
#[test]
fn rtt_estimator_first_sample_and_the_200ms_floor() {
    let mut h = Harness::fixed(10, None);
    h.s.rtt_estimator(10_000);
    assert_eq!(
        (h.s.tp.srtt_us, h.s.tp.mdev_us, h.s.rttvar_us),
        (80_000, 20_000, 200_000)
    );
    assert_eq!(h.s.rto(), 210 * MS);
}

/// `tcp_rtt_estimator`: srtt += (m - srtt/8); mdev moves by a quarter of the error (an eighth
/// of it when the sample is below srtt); rttvar follows the round's largest mdev up at once and
/// decays by a quarter of the gap once per round (snd_una past rtt_seq), when mdev_max restarts
/// from rto_min.
#[test]
fn rtt_estimator_updates_srtt_mdev_and_rttvar() {
    /// (snd_una, snd_nxt, sample in us).
    type Sample = (u64, u64, u32);
    /// (srtt_us, mdev_us, rttvar_us, mdev_max_us, rtt_seq, RTO in us).
    type Estimate = (u32, u32, u32, u32, u64, u64);
    let steps: [(Sample, Estimate); 5] = [
        // First sample: srtt 8m, mdev 2m, rttvar = mdev_max = max(mdev, 200000).
        (
            (0, 0, 200_000),
            (1_600_000, 400_000, 400_000, 400_000, 0, 600_000),
        ),
        // A new round, same RTT: mdev 400000 - 400000/4; rttvar stays (mdev_max = rttvar);
        // mdev_max restarts from rto_min.
        (
            (1, 2, 200_000),
            (1_600_000, 300_000, 400_000, 200_000, 2, 600_000),
        ),
        // Next round: mdev 225000 raises mdev_max; rttvar decays by (400000 - 225000) / 4.
        (
            (3, 4, 200_000),
            (1_600_000, 225_000, 356_250, 200_000, 4, 556_250),
        ),
        // Same round, 260 ms: error 60000, srtt 1660000, mdev += 60000 - 56250.
        (
            (3, 4, 260_000),
            (1_660_000, 228_750, 356_250, 228_750, 4, 563_750),
        ),
        // 100 ms: error -107500, srtt 1552500; mdev += (107500 - 57187) >> 3 = 6289.
        (
            (3, 4, 100_000),
            (1_552_500, 235_039, 356_250, 235_039, 4, 194_062 + 356_250),
        ),
    ];
    let mut h = Harness::fixed(10, None);
    for ((una, nxt, sample), want) in steps {
        (h.s.tp.snd_una, h.s.tp.snd_nxt) = (una, nxt);
        h.s.rtt_estimator(sample);
        let s = &h.s;
        let got = (
            s.tp.srtt_us,
            s.tp.mdev_us,
            s.rttvar_us,
            s.mdev_max_us,
            s.rtt_seq,
            s.rto() / US,
        );
        assert_eq!(got, want, "sample {sample} at snd_una {una}");
    }
}

/// `tcp_ack_update_rtt` on cumulative ACKs of segments sent at 0: each ACK's RTT is its time;
/// the RTO timer then runs from the head segment's transmission (`tcp_rearm_rto` in the model:
/// head sent + RTO, see the module notes).
#[test]
fn acks_feed_the_estimator_and_rearm_the_rto() {
    let mut h = Harness::fixed(10, Some(10));
    h.start(0);
    assert!(h.ack(100 * MS, 1, &[]).is_empty());
    assert_eq!(
        (h.s.tp.srtt_us, h.s.rttvar_us, h.s.tp.min_rtt_us),
        (800_000, 200_000, 100_000)
    );
    assert_eq!(h.s.rto(), 300 * MS);
    assert_eq!(h.deadline(SenderTimer::Rto), Some(300 * MS));
    h.ack(150 * MS, 2, &[]);
    assert_eq!((h.s.tp.srtt_us, h.s.tp.mdev_us), (850_000, 200_000));
    assert_eq!(h.s.rto(), 306_250 * US);
    assert_eq!(h.deadline(SenderTimer::Rto), Some(306_250 * US));
    h.ack(160 * MS, 3, &[]);
    assert_eq!(
        (h.s.tp.srtt_us, h.s.tp.mdev_us, h.s.rttvar_us),
        (903_750, 203_750, 203_750)
    );
    assert_eq!(h.s.rto(), (112_968 + 203_750) * US);
    assert_eq!((h.s.tp.min_rtt_us, h.s.tp.last_rtt_us), (100_000, 160_000));
}

/// `tcp_retransmit_timer` / `tcp_enter_loss`: on expiry everything not SACKed is marked lost,
/// cwnd = in flight + 1 = 1, ssthresh from the CCA, the head is retransmitted and the RTO
/// doubles (`icsk_backoff`); a second expiry doubles it again. An ACK with an RTT sample (here
/// from the TSecr, the retransmission being ambiguous) recomputes the RTO (`tcp_set_rto`) and
/// clears the backoff; Loss then retransmits the next lost segment within cwnd.
#[test]
fn rto_backs_off_exponentially_and_an_rtt_sample_resets_it() {
    let mut h = Harness::fixed(10, Some(10));
    h.start(0);
    let sent = h.fire(1000 * MS, SenderTimer::Rto);
    assert_eq!(seqs(&sent), vec![0]);
    assert!(all_retrans(&sent));
    assert_eq!(h.s.tp.ca_state, CaState::Loss);
    assert_eq!(h.flagged(LOST), (0..10).collect::<Vec<_>>());
    assert_eq!(h.counts(), (10, 0, 10, 1, 1));
    assert_eq!(
        (h.s.tp.snd_cwnd, h.s.tp.snd_ssthresh, h.s.tp.prior_cwnd),
        (1, 5, 10)
    );
    assert_eq!((h.s.tp.high_seq, h.s.tp.lost), (10, 10));
    assert_eq!((h.s.backoff, h.s.rto()), (1, 2000 * MS));
    assert_eq!(h.deadline(SenderTimer::Rto), Some(3000 * MS));

    // Second expiry: the retransmission is lost again (tp.lost counts it), RTO 4 s. No ACK
    // advanced snd_una since the first (`icsk_retransmits` 1): ssthresh and prior_cwnd stay.
    let sent = h.fire(3000 * MS, SenderTimer::Rto);
    assert_eq!(seqs(&sent), vec![0]);
    assert_eq!(h.counts(), (10, 0, 10, 1, 1));
    assert_eq!((h.s.tp.snd_cwnd, h.s.tp.lost), (1, 11));
    assert_eq!(
        (h.s.tp.snd_ssthresh, h.s.tp.prior_cwnd, h.s.retransmits),
        (5, 10, 2)
    );
    assert_eq!((h.s.backoff, h.s.rto()), (2, 4000 * MS));
    assert_eq!(h.deadline(SenderTimer::Rto), Some(7000 * MS));
    assert_eq!((h.s.stats.rto_count, h.s.stats.retrans), (2, 2));

    // The retransmission is ACKed 100 ms later, echoing its TSecr.
    let sent = h.ack_tsecr(3100 * MS, 1, &[], 3000 * MS);
    assert_eq!((h.s.backoff, h.s.rto()), (0, 300 * MS));
    assert_eq!(h.s.retransmits, 0);
    assert_eq!(h.s.tp.srtt_us, 800_000);
    assert_eq!(seqs(&sent), vec![1]);
    assert!(all_retrans(&sent));
    assert_eq!(h.s.tp.ca_state, CaState::Loss);
    assert_eq!(h.counts(), (9, 0, 9, 1, 1));
    assert_eq!(h.s.next_lost(), Some(2));
    assert_eq!(h.deadline(SenderTimer::Rto), Some(3400 * MS));

    // An expiry after that ACK is a new window: ssthresh from cwnd 1 (Reno's floor, 2).
    let sent = h.fire(3400 * MS, SenderTimer::Rto);
    assert_eq!(seqs(&sent), vec![1]);
    assert_eq!(
        (h.s.tp.snd_ssthresh, h.s.tp.prior_cwnd, h.s.retransmits),
        (2, 1, 1)
    );
    assert_eq!((h.s.backoff, h.s.rto()), (1, 600 * MS));
    assert_eq!(h.deadline(SenderTimer::Rto), Some(4000 * MS));
}

// ----- loss detection: RACK, dupthresh via SACK -----

/// `tcp_rack_detect_loss`: a segment sent before the most recently delivered one is lost once
/// it has waited rack.rtt + reo_wnd, reo_wnd = min_rtt / 4 (`tcp_rack_reo_wnd`) while fewer than
/// `tcp_reordering` (3) segments are SACKed; until then the reorder timer waits for the rest
/// (`tcp_rack_reo_timeout`), which enters Recovery and retransmits.
#[test]
fn rack_marks_lost_by_time_and_the_reorder_timer_fires() {
    let mut h = Harness::fixed(10, Some(10));
    h.start(0);
    // Segment 0 ACKed, 2 SACKed at 100 ms: 1 has waited 100 ms of 100 + 25.
    assert!(h.ack(100 * MS, 1, &[(2, 3)]).is_empty());
    assert_eq!(
        (h.s.rack_rtt_us, h.s.rack_sent, h.s.rack_end_seq),
        (100_000, 0, 3)
    );
    assert_eq!(h.s.rack_reo_wnd_us(), 25_000);
    assert_eq!(h.flagged(LOST), Vec::<u64>::new());
    assert_eq!(h.flagged(SACKED), vec![2]);
    assert_eq!(h.s.tp.ca_state, CaState::Disorder);
    assert_eq!(h.counts(), (9, 1, 0, 0, 8));
    assert_eq!(h.deadline(SenderTimer::Reorder), Some(125 * MS));
    assert_eq!(h.deadline(SenderTimer::Rto), Some(300 * MS));
    assert_eq!(h.s.next_lost(), None);

    // The reorder timer: 1 is lost, Recovery (ssthresh 5, high_seq 10), and
    // tcp_cwnd_reduction(1, 0, 0): in flight 7 > ssthresh, so sndcnt = ceil(5 x 1 / 10) = 1.
    let sent = h.fire(125 * MS, SenderTimer::Reorder);
    assert_eq!(seqs(&sent), vec![1]);
    assert!(all_retrans(&sent));
    assert_eq!(h.flagged(LOST), vec![1]);
    assert_eq!(h.s.tp.ca_state, CaState::Recovery);
    assert_eq!(
        (h.s.tp.snd_ssthresh, h.s.tp.prior_cwnd, h.s.tp.high_seq),
        (5, 10, 10)
    );
    assert_eq!(h.s.tp.snd_cwnd, 8);
    assert_eq!(h.prr(), (1, 1));
    assert_eq!(h.counts(), (9, 1, 1, 1, 8));
    assert_eq!(h.deadline(SenderTimer::Reorder), None);
    // The retransmission restarts the RTO from its own send time.
    assert_eq!(h.deadline(SenderTimer::Rto), Some(425 * MS));
    assert_eq!((h.s.stats.recoveries, h.s.stats.retrans), (1, 1));
}

/// Fast retransmit with SACK (`tcp_time_to_recover` under RACK): two SACKed segments leave the
/// hole within the reordering window; the third SACKed segment reaches `tcp_reordering`, the
/// window becomes 0 and the hole is lost at once. PRR then allows exactly the retransmission:
/// in flight 5 = ssthresh, so the SSRB part is min(0, ...) and the forced first send is 1.
#[test]
fn fast_retransmit_on_the_third_sacked_segment() {
    let mut h = Harness::fixed(10, Some(10));
    h.start(0);
    h.ack(100 * MS, 1, &[]);
    assert!(h.ack(101 * MS, 1, &[(2, 4)]).is_empty());
    assert_eq!(h.s.tp.sacked_out, 2);
    assert_eq!(h.flagged(LOST), Vec::<u64>::new());
    assert_eq!(h.deadline(SenderTimer::Reorder), Some(126 * MS));
    assert_eq!(h.s.tp.ca_state, CaState::Disorder);

    let sent = h.ack(102 * MS, 1, &[(2, 5)]);
    assert_eq!(h.s.rack_reo_wnd_us(), 0);
    assert_eq!(h.flagged(LOST), vec![1]);
    assert_eq!(seqs(&sent), vec![1]);
    assert!(all_retrans(&sent));
    assert_eq!(h.s.tp.ca_state, CaState::Recovery);
    assert_eq!((h.s.tp.snd_ssthresh, h.s.tp.snd_cwnd), (5, 6));
    assert_eq!(h.prr(), (1, 1));
    assert_eq!(h.counts(), (9, 3, 1, 1, 6));
}

/// Without SACK blocks the model detects no loss from duplicate ACKs (no `tcp_add_reno_sack`
/// dupack counting: its receiver always SACKs): three duplicates change nothing, and the RTO
/// recovers the hole.
#[test]
fn duplicate_acks_without_sack_mark_nothing() {
    let mut h = Harness::fixed(10, Some(10));
    h.start(0);
    h.ack(100 * MS, 1, &[]);
    for t in [101, 102, 103] {
        assert!(h.ack(t * MS, 1, &[]).is_empty());
    }
    assert_eq!(h.s.tp.ca_state, CaState::Open);
    assert_eq!(h.counts(), (9, 0, 0, 0, 9));
    assert_eq!(h.s.stats.recoveries, 0);
    assert_eq!(h.deadline(SenderTimer::Rto), Some(300 * MS));
    let sent = h.fire(300 * MS, SenderTimer::Rto);
    assert_eq!(seqs(&sent), vec![1]);
    assert_eq!(h.s.tp.ca_state, CaState::Loss);
    assert_eq!(h.s.rto(), 600 * MS);
    assert_eq!(h.deadline(SenderTimer::Rto), Some(900 * MS));
}

/// A retransmission delivered sooner than min_rtt after it was sent is taken for the
/// original's late delivery (`tcp_rack_advance`): it does not move RACK's reference.
#[test]
fn rack_ignores_an_ambiguous_retransmission() {
    let mut h = Harness::fixed(10, Some(10));
    h.start(0);
    h.ack(100 * MS, 1, &[(2, 5)]); // 1 lost and retransmitted at 100 ms
    assert_eq!(h.flagged(RETRANS), vec![1]);
    let (rtt, sent, end) = (h.s.rack_rtt_us, h.s.rack_sent, h.s.rack_end_seq);
    assert_eq!((rtt, sent, end), (100_000, 0, 5));
    h.ack(150 * MS, 1, &[(1, 5)]); // SACKs the retransmission 50 ms after it went
    assert_eq!(
        (h.s.rack_rtt_us, h.s.rack_sent, h.s.rack_end_seq),
        (rtt, sent, end)
    );
    assert_eq!(h.counts(), (9, 4, 0, 0, 5));
}

// ----- PRR -----

/// `tcp_cwnd_reduction` (RFC 6937), proportional part: while in flight > ssthresh, the sends
/// allowed so far are ceil(ssthresh x prr_delivered / prior_cwnd) - prr_out; ssthresh 10 of a
/// prior cwnd of 20 gives one send per two segments delivered. Then the SSRB part
/// (min(ssthresh - in flight, max(prr_delivered - prr_out, delivered) [+1 on a cumulative ACK
/// with no new loss]) once in flight <= ssthresh, and Recovery ends at high_seq with cwnd =
/// ssthresh (`tcp_end_cwnd_reduction`; no undo is modelled).
#[test]
fn prr_proportional_then_ssrb() {
    let mut h = Harness::fixed(20, None);
    assert_eq!(h.start(0).len(), 20);
    // 1..3 SACKed: 0 is lost (3 SACKed). prr_delivered 3, in flight 16:
    // sndcnt = ceil(30 / 20) = 2: the retransmission and one new segment.
    let sent = h.ack(100 * MS, 0, &[(1, 4)]);
    assert_eq!(seqs(&sent), vec![0, 20]);
    assert!(sent[0].retrans() && !sent[1].retrans());
    assert_eq!(
        (h.s.tp.snd_ssthresh, h.s.tp.prior_cwnd, h.s.tp.high_seq),
        (10, 20, 20)
    );
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (18, (3, 2)));
    assert_eq!(h.counts(), (21, 3, 1, 1, 18));
    // 4 SACKed: ceil(40 / 20) - 2 = 0.
    assert!(h.ack(101 * MS, 0, &[(1, 5)]).is_empty());
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (17, (4, 2)));
    // 5..9 SACKed: in flight 12, ceil(90 / 20) - 2 = 3.
    let sent = h.ack(102 * MS, 0, &[(1, 10)]);
    assert_eq!(seqs(&sent), vec![21, 22, 23]);
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (15, (9, 5)));
    // 10..15 SACKed: in flight 9 <= ssthresh: SSRB, min(10 - 9, max(15 - 5, 6)) = 1.
    let sent = h.ack(103 * MS, 0, &[(1, 16)]);
    assert_eq!(seqs(&sent), vec![24]);
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (10, (15, 6)));
    assert_eq!(h.counts(), (25, 15, 1, 1, 10));
    // A partial ACK up to 16 (the retransmission of 0, ambiguous at 4 ms): still Recovery;
    // SSRB min(1, 10 + 1) = 1.
    let sent = h.ack(104 * MS, 16, &[]);
    assert_eq!(seqs(&sent), vec![25]);
    assert_eq!(h.s.tp.ca_state, CaState::Recovery);
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (10, (16, 7)));
    assert_eq!(h.counts(), (10, 0, 0, 0, 10));
    // Past high_seq: Open, cwnd = ssthresh, and 9 new segments fill it.
    let sent = h.ack(105 * MS, 25, &[]);
    assert_eq!(h.s.tp.ca_state, CaState::Open);
    assert_eq!(h.s.tp.snd_cwnd, 10);
    assert_eq!(seqs(&sent), (26..35).collect::<Vec<_>>());
}

/// `tcp_cwnd_reduction`, SSRB part after a heavy loss: 7 of 10 lost, in flight 0, so the
/// sends are bounded by max(prr_delivered - prr_out, delivered), plus one on each cumulative ACK
/// that marks nothing new lost (RFC 6937 PRR-SSRB), and by ssthresh - in flight.
#[test]
fn prr_slow_start_reduction_bound() {
    let mut h = Harness::fixed(10, Some(10));
    h.start(0);
    // 7..9 SACKed: 0..6 lost (reo_wnd 0). prr_delivered 3, delta 5: sndcnt min(5, 3) = 3.
    let sent = h.ack(100 * MS, 0, &[(7, 10)]);
    assert_eq!(h.flagged(LOST), (0..7).collect::<Vec<_>>());
    assert_eq!(seqs(&sent), vec![0, 1, 2]);
    assert!(all_retrans(&sent));
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (3, (3, 3)));
    assert_eq!(h.counts(), (10, 3, 7, 3, 3));
    assert_eq!(h.s.next_lost(), Some(3));
    // The retransmission of 0 arrives: delta 3, max(4 - 3, 1) + 1 = 2.
    let sent = h.ack(200 * MS, 1, &[(7, 10)]);
    assert_eq!(seqs(&sent), vec![3, 4]);
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (4, (4, 5)));
    assert_eq!((h.s.rack_sent, h.s.rack_end_seq), (100 * MS, 1));
    // Of 1: delta 2, max(5 - 5, 1) + 1 = 2.
    let sent = h.ack(201 * MS, 2, &[(7, 10)]);
    assert_eq!(seqs(&sent), vec![5, 6]);
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (5, (5, 7)));
    assert_eq!(h.s.next_lost(), None);
    // Of 2: delta 1 bounds it: cwnd = in flight 4 + 1, nothing left to send.
    assert!(h.ack(202 * MS, 3, &[(7, 10)]).is_empty());
    assert_eq!((h.s.tp.snd_cwnd, h.prr()), (5, (6, 7)));
    assert_eq!(h.counts(), (7, 3, 4, 4, 4));
    // All ACKed: Open with cwnd = ssthresh, the RTO cancelled.
    assert!(h.ack(300 * MS, 10, &[]).is_empty());
    assert_eq!(h.s.tp.ca_state, CaState::Open);
    assert_eq!(h.s.tp.snd_cwnd, 5);
    assert_eq!(h.counts(), (0, 0, 0, 0, 0));
    assert_eq!(h.deadline(SenderTimer::Rto), None);
    assert!(h.s.is_done());
}
