//! Tests of the BSS on scripted timelines. A small driver plays the world's part: it keeps the
//! wake-ups the BSS asks for in a heap, delivers them in time order, logs every exchange that
//! starts, and can keep a node's queue topped up to a fixed backlog (a saturating sender).
//!
//! Backoffs and MPDU errors come from the BSS's one random stream; tests that depend on their
//! values replay that stream (`mirror`) in the order the BSS draws from it, and pick a seed that
//! produces the situation under test.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::*;
use crate::net::packet::{Kind, Packet, PacketRef, Packets};
use crate::net::wifi::edca::{ACS, DSCP_EF};
use crate::net::wifi::{
    ChipsetSpec, DriverKind, DriverSpec, Irq, MacMode, Wake, WifiSpec, PRESETS,
};
use crate::parse::{Dur, Rate, Size};
use crate::sim::Rng;
use crate::units::{Nanos, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

const US: Nanos = NSEC_PER_USEC;
const STREAM: u64 = 7;

/// One exchange on the air.
#[derive(Debug, Clone, PartialEq)]
struct Tx {
    start: Nanos,
    ppdu_end: Nanos,
    end: Nanos,
    /// (node, access category, MPDUs) of each transmitter.
    who: Vec<(usize, Ac, usize)>,
}

struct Sim {
    bss: Bss,
    now: Nanos,
    wakes: BinaryHeap<Reverse<Nanos>>,
    pkts: Packets,
    delivered: VecDeque<PacketRef>,
    completed: Vec<(u32, u32)>,
    /// Every packet dropped so far.
    dropped: Vec<Packet>,
    /// Exchanges in start order.
    log: Vec<Tx>,
    /// Destination of the first transmitter's aggregate, per exchange.
    dests: Vec<usize>,
    /// (time, packet) of every delivery.
    arrivals: Vec<(Nanos, Packet)>,
    /// Next sequence number per sending node.
    seq: Vec<u64>,
    /// Saturating senders: (from, to, backlog kept).
    feeders: Vec<(u16, u16, usize)>,
    truesize: u32,
}

impl Sim {
    fn new(spec: &WifiSpec, stations: u16, seed: u64) -> Sim {
        Sim {
            bss: Bss::new(spec, stations, Rng::new(seed, STREAM)).unwrap(),
            now: 0,
            wakes: BinaryHeap::new(),
            pkts: Packets::new(),
            delivered: VecDeque::new(),
            completed: Vec::new(),
            dropped: Vec::new(),
            log: Vec::new(),
            dests: Vec::new(),
            arrivals: Vec::new(),
            seq: vec![0; stations as usize + 1],
            feeders: Vec::new(),
            truesize: 0,
        }
    }

    /// `n` packets of 1500 bytes from `from` to `to`, marked `dscp`, at the current time.
    fn send(&mut self, from: u16, to: u16, n: usize, dscp: u8) {
        for _ in 0..n {
            self.send_sized(from, to, 1500, dscp);
        }
    }

    /// One packet of `size` bytes from `from` to `to`, marked `dscp`, at the current time.
    fn send_sized(&mut self, from: u16, to: u16, size: u32, dscp: u8) {
        let mut p = Packet::new(Kind::Data, from as u32, 0, size, self.now);
        p.seq = self.seq[from as usize];
        p.dscp = dscp;
        p.truesize = self.truesize;
        self.seq[from as usize] += 1;
        let p = self.pkts.insert(p);
        let mut out = WifiOut {
            pkts: &mut self.pkts,
            delivered: &mut self.delivered,
            completed: &mut self.completed,
        };
        if let Some(t) = self.bss.accept(p, from, to, self.now, &mut out) {
            assert!(t >= self.now);
            self.wakes.push(Reverse(t));
        }
        self.collect_drops();
    }

    /// Take the packets the BSS dropped out of their slots.
    fn collect_drops(&mut self) {
        self.pkts.remove_dropped(&mut self.dropped);
    }

    fn feed(&mut self) {
        for i in 0..self.feeders.len() {
            let (from, to, keep) = self.feeders[i];
            let have = self.bss.backlog(from);
            if have < keep {
                self.send(from, to, keep - have, 0);
            }
        }
    }

    /// Play a script of (time, from, packets, dscp) arrivals towards the AP, then run to `end`.
    fn script(&mut self, arrivals: &[(Nanos, u16, usize, u8)], end: Nanos) {
        for &(t, from, n, dscp) in arrivals {
            self.run_until(t);
            self.send(from, 0, n, dscp);
        }
        self.run_until(end);
    }

    /// Process every wake-up up to and including `t`, then stand at `t`.
    fn run_until(&mut self, t: Nanos) {
        self.feed();
        while let Some(&Reverse(w)) = self.wakes.peek() {
            if w > t {
                break;
            }
            self.wakes.pop();
            self.now = w;
            let mut out = WifiOut {
                pkts: &mut self.pkts,
                delivered: &mut self.delivered,
                completed: &mut self.completed,
            };
            if let Some(next) = self.bss.wake(w, &mut out) {
                assert!(next >= w);
                self.wakes.push(Reverse(next));
            }
            self.collect_drops();
            for r in self.delivered.drain(..) {
                self.arrivals.push((w, self.pkts.remove(r)));
            }
            self.log_exchange();
            self.check_backlogs();
            self.feed();
        }
        self.now = t;
    }

    fn log_exchange(&mut self) {
        let Medium::Busy {
            ppdu_end,
            end,
            received: false,
            ..
        } = self.bss.medium
        else {
            return;
        };
        if self
            .log
            .last()
            .is_some_and(|l| l.ppdu_end == ppdu_end && l.end == end)
        {
            return;
        }
        let who = self
            .bss
            .tx
            .iter()
            .map(|&ei| {
                let e = &self.bss.edcafs[ei];
                (e.node, Ac::ALL[ei % ACS], e.hw[0].mpdus.len())
            })
            .collect();
        let first = &self.bss.edcafs[self.bss.tx[0]];
        self.dests.push(first.hw[0].dest);
        self.log.push(Tx {
            start: self.now,
            ppdu_end,
            end,
            who,
        });
    }

    /// Each EDCAF's packet count agrees with its queues.
    fn check_backlogs(&self) {
        for e in &self.bss.edcafs {
            let queued: usize = e.sessions.iter().flatten().map(|s| s.backlog()).sum();
            assert_eq!(e.backlog, queued);
            let in_txq: usize = e.sessions.iter().flatten().map(|s| s.txq.len()).sum();
            assert_eq!(e.in_txq, in_txq);
        }
    }

    /// (start, node, access category) of the first transmitter of each exchange.
    fn starts(&self) -> Vec<(Nanos, usize, Ac)> {
        self.log
            .iter()
            .map(|t| (t.start, t.who[0].0, t.who[0].1))
            .collect()
    }

    fn sizes(&self) -> Vec<usize> {
        self.log.iter().map(|t| t.who[0].2).collect()
    }

    fn edcaf(&self, node: usize, ac: Ac) -> &Edcaf {
        &self.bss.edcafs[node * ACS + ac as usize]
    }

    /// Sequence numbers delivered so far, in order.
    fn delivered_seqs(&self) -> Vec<u64> {
        self.arrivals.iter().map(|(_, p)| p.seq).collect()
    }
}

/// `chipset` with the generic driver (a 2-aggregate hardware queue filled after each burst,
/// TX status at the Block Ack) and a deep FIFO TXQ: the MAC's own timing, which these tests
/// pin; the drivers' rules have tests of their own below.
fn spec(chipset: &str) -> WifiSpec {
    WifiSpec {
        chipset: ChipsetSpec::Preset(chipset.into()),
        txq: TxqSpec::Pfifo { limit: 10_000 },
        driver: DriverSpec {
            kind: Some(DriverKind::Generic),
            ..DriverSpec::default()
        },
        ..WifiSpec::default()
    }
}

/// The BSS's random stream as the tests replay it: `Bss::new` first draws the TXQ hash seed.
fn mirror(seed: u64) -> Rng {
    let mut r = Rng::new(seed, STREAM);
    r.next_u32();
    r.next_u32();
    r
}

fn backoff(r: &mut Rng, cw: u64) -> u64 {
    r.range_u64(0, cw)
}

#[test]
fn ppdu_and_block_ack_timing_on_the_air() {
    // ath9k, one station, one packet at t = 0: the medium has been idle since 0 and there is
    // no backoff pending, so the PPDU starts after AIFS[BE] = 16 + 3 x 9 = 43 us. PPDU of one
    // 1500-byte MPDU: 84 us (phy tests), ends at 127 us; Block Ack (64-MPDU window, 32 us)
    // after SIFS: the exchange ends at 127 + 16 + 32 = 175 us.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.truesize = 2000;
    s.send(1, 0, 1, 0);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(
        s.log,
        vec![Tx {
            start: 43 * US,
            ppdu_end: 127 * US,
            end: 175 * US,
            who: vec![(1, Ac::Be, 1)]
        }]
    );
    // Delivered at the PPDU end, TX-completed at the Block Ack's end.
    assert_eq!(s.arrivals[0].0, 127 * US);
    assert_eq!(s.completed, vec![(1, 2000)]);
    // Ten packets in one burst: one aggregate. PSDU 10 x 1544 - 2 = 15438 B; 16 + 123504 + 6
    // = 123526 bits / 1080 -> 115 symbols x 3.6 = 414 us -> 416 us; + 40 us preamble = 456 us.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(1, 0, 10, 0);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.log[0].who, vec![(1, Ac::Be, 10)]);
    assert_eq!(
        (s.log[0].ppdu_end, s.log[0].end),
        ((43 + 456) * US, (43 + 456 + 48) * US)
    );
    // ax201, 256 packets: PPDU 1369.6 us (phy tests); Block Ack with a 32-byte bitmap 40 us.
    let mut s = Sim::new(&spec("ax201"), 1, 1);
    s.send(1, 0, 256, 0);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.log[0].who, vec![(1, Ac::Be, 256)]);
    assert_eq!(
        (s.log[0].ppdu_end, s.log[0].end),
        (1_412_600, 1_412_600 + 56_000)
    );
}

#[test]
fn voice_uses_its_shorter_aifs_and_wmm_off_maps_everything_to_best_effort() {
    // EF -> AC_VO: AIFS 16 + 2 x 9 = 34 us.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(1, 0, 1, DSCP_EF);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!((s.log[0].start, s.log[0].who[0].1), (34 * US, Ac::Vo));
    let mut s = Sim::new(
        &WifiSpec {
            wmm: false,
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.send(1, 0, 1, DSCP_EF);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!((s.log[0].start, s.log[0].who[0].1), (43 * US, Ac::Be));
}

#[test]
fn voice_frames_go_alone_with_an_ack_unless_voice_aggregates() {
    // Ten EF packets at t = 0 on ath9k (HT). mac80211 opens no Block Ack session for VO: ten
    // exchanges of one MPDU each. The first starts after AIFS[VO] = 34 us; the PSDU is the
    // MPDU alone, 38 + 1500 = 1538 B (no delimiter): 16 + 12304 + 6 = 12326 bits / 1080 ->
    // 12 symbols x 3.6 = 43.2 -> 44 us + 40 us preamble = 84 us; then SIFS + Ack (28 us).
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(1, 0, 10, DSCP_EF);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![1; 10]);
    assert_eq!(
        (s.log[0].start, s.log[0].ppdu_end, s.log[0].end),
        (34 * US, 118 * US, (118 + 16 + 28) * US)
    );
    assert!(s.log.iter().all(|x| x.end - x.ppdu_end == 44 * US));
    // Airtime counts PPDU and response: 10 x (84 + 44) us.
    assert_eq!(s.bss.stats().nodes[1].airtime, 10 * 128 * US);
    // The delimiter matters where it crosses a symbol: an MPDU of 1616 B alone is 8 x 1616 +
    // 22 = 12950 bits, 12 symbols (84 us); as a subframe, 1620 B, 12982 bits, 13 symbols
    // (46.8 -> 48 us, 88 us).
    let phy = spec("ath9k").phy().unwrap();
    assert_eq!(
        (phy.ppdu_time(1616), phy.ppdu_time(1620)),
        (84 * US, 88 * US)
    );
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send_sized(1, 0, 1616 - 38, DSCP_EF);
    s.send_sized(1, 0, 1616 - 38, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    let airtimes: Vec<_> = s
        .log
        .iter()
        .map(|x| (x.who[0].1, x.ppdu_end - x.start))
        .collect();
    assert_eq!(airtimes, vec![(Ac::Vo, 84 * US), (Ac::Be, 88 * US)]);
    // With aggregate_vo: one A-MPDU of ten, Block Ack after it.
    let mut s = Sim::new(
        &WifiSpec {
            aggregate_vo: Some(true),
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.send(1, 0, 10, DSCP_EF);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![10]);
    assert_eq!(s.log[0].end - s.log[0].ppdu_end, (16 + 32) * US);
    // By default each preset does what its driver does: the firmware-driven ath10k and
    // iwlwifi's ax201 aggregate voice, minstrel_ht's ath9k and ath9k_htc do not; a scenario
    // may say otherwise.
    let by_default: Vec<_> = PRESETS.iter().map(|p| (p.name, p.aggregates_vo)).collect();
    assert_eq!(
        by_default,
        [
            ("ath9k-htc", false),
            ("ath9k", false),
            ("ath10k-1x1", true),
            ("ath10k", true),
            ("qca9377", true),
            ("ax201", true)
        ]
    );
    for (spec, sizes) in [
        (spec("ath10k"), vec![10]),
        (
            WifiSpec {
                aggregate_vo: Some(false),
                ..spec("ath10k")
            },
            vec![1; 10],
        ),
    ] {
        let mut s = Sim::new(&spec, 1, 1);
        s.send(1, 0, 10, DSCP_EF);
        s.run_until(10 * NSEC_PER_MSEC);
        assert_eq!(s.sizes(), sizes);
    }
}

#[test]
fn aggregate_size_is_the_backlog_at_build_time_within_the_limits() {
    // 30 packets in one burst: one aggregate of 30 (ath10k: window 64, length 1 MB).
    let mut s = Sim::new(&spec("ath10k"), 1, 1);
    s.send(1, 0, 30, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![30]);
    // 100: the Block Ack window (64) bounds the first; the other 36 can only be built once its
    // Block Ack has moved the window.
    let mut s = Sim::new(&spec("ath10k"), 1, 1);
    s.send(1, 0, 100, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![64, 36]);
    // HT's 65,535-byte A-MPDU: 42 subframes (42 x 1544 - 2 = 64846 B; 43 would be 66390 B).
    let mut s = Sim::new(
        &WifiSpec {
            hw_queue_depth: Some(1),
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.send(1, 0, 100, 0);
    s.run_until(20 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![42, 42, 16]);
    // A 1 ms airtime cap on ath9k: 23 MPDUs take 40 + 952 = 992 us (PSDU 35510 B, 264
    // symbols, 950.4 us -> 952 us); 24 would take 40 + 992 = 1032 us.
    let mut s = Sim::new(
        &WifiSpec {
            airtime_cap: Dur(NSEC_PER_MSEC),
            hw_queue_depth: Some(1),
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.send(1, 0, 30, 0);
    s.run_until(20 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![23, 7]);
    assert_eq!(s.log[0].ppdu_end - s.log[0].start, 992 * US);
    // A 10,000-byte A-MPDU limit: 6 subframes (6 x 1544 - 2 = 9262 B; 7 would be 10806 B).
    let mut s = Sim::new(
        &WifiSpec {
            max_ampdu_len: Some(Size(10_000)),
            hw_queue_depth: Some(1),
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.send(1, 0, 14, 0);
    s.run_until(20 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![6, 6, 2]);
}

#[test]
fn hardware_queue_depth_decides_when_aggregates_are_built() {
    // Depth 2: 5 packets at 0 make aggregate A (built at once). 3 packets at 50 us, while A is
    // on the air, fill the second slot as B. 4 packets at 60 us find both slots taken and wait
    // in the TXQ until A's Block Ack frees a slot: C holds those 4.
    let script = |depth| {
        let mut s = Sim::new(
            &WifiSpec {
                hw_queue_depth: Some(depth),
                ..spec("ath9k")
            },
            1,
            1,
        );
        s.script(
            &[(0, 1, 5, 0), (50 * US, 1, 3, 0), (60 * US, 1, 4, 0)],
            10 * NSEC_PER_MSEC,
        );
        s
    };
    let s = script(2);
    assert_eq!(s.sizes(), vec![5, 3, 4]);
    // Depth 1: nothing is built while A is out; at A's end the TXQ holds 3 + 4.
    let s = script(1);
    assert_eq!(s.sizes(), vec![5, 7]);
    assert_eq!(s.delivered_seqs(), (0..12).collect::<Vec<_>>());
}

#[test]
fn with_two_aggregates_queued_the_block_ack_window_splits_a_saturated_ht_sender() {
    // ath9k, depth 2, a deep backlog: A takes seqs 0-41 (length limit). B is built while A is
    // out and may only use seqs below 0 + 64: 42-63, 22 MPDUs. A's Block Ack moves the window
    // to 42: C takes 64-105 (42). B's moves it to 64: D takes 106-127 (22). And so on.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.feeders.push((1, 0, 200));
    s.run_until(20 * NSEC_PER_MSEC);
    assert_eq!(s.sizes()[..6], [42, 22, 42, 22, 42, 22]);
    let n: u64 = s.sizes().iter().sum::<usize>() as u64;
    let delivered = s.delivered_seqs();
    assert_eq!(delivered, (0..delivered.len() as u64).collect::<Vec<_>>());
    assert!(delivered.len() as u64 >= n - 42);
}

#[test]
fn backoff_freezes_while_another_node_transmits_and_resumes_after_aifs() {
    // Station 1 sends one packet at 0: on the air at 43 us, exchange over at 175 us. Station 2
    // gets a packet at 50 us, medium busy: it draws b2 (first draw). Station 1 gets a second
    // packet at 60 us (second slot of its hardware queue). At 175 us station 1 draws its
    // post-backoff b1 (second draw) and both count down from 175 + 43 us. With 0 < b1 < b2,
    // station 1 transmits at T1 = 218 + 9 b1 us; station 2 has counted b1 slots and freezes
    // with b2 - b1 left. Station 1's exchange ends at E2 = T1 + 84 + 48 us; station 2 waits
    // AIFS again and transmits at E2 + 43 + 9 (b2 - b1) us.
    let (seed, b2, b1) = (0..1000)
        .map(|seed| {
            let mut r = mirror(seed);
            let b2 = backoff(&mut r, 15);
            let b1 = backoff(&mut r, 15);
            (seed, b2, b1)
        })
        .find(|&(_, b2, b1)| 0 < b1 && b1 + 2 < b2)
        .unwrap();
    let mut s = Sim::new(&spec("ath9k"), 2, seed);
    s.script(
        &[(0, 1, 1, 0), (50 * US, 2, 1, 0), (60 * US, 1, 1, 0)],
        10 * NSEC_PER_MSEC,
    );
    let t1 = (218 + 9 * b1) * US;
    let e2 = t1 + 132 * US;
    let t2 = e2 + (43 + 9 * (b2 - b1)) * US;
    assert_eq!(
        s.starts(),
        vec![(43 * US, 1, Ac::Be), (t1, 1, Ac::Be), (t2, 2, Ac::Be)]
    );
    assert_eq!(s.bss.stats().nodes[2].collisions, 0);
}

#[test]
fn backoffs_ending_in_the_same_slot_collide_double_the_window_and_reset_on_success() {
    // Two stations with a packet each at 0 and no backoff pending both transmit at 43 us: a
    // collision. No Block Ack: the exchange still lasts 84 + 16 + 32 us, to 175 us. Each
    // doubles CW to 31 and draws (station 1 first). With different draws c1 < c2 station 1
    // goes at 218 + 9 c1 us and succeeds (CW back to 15); station 2, frozen with c2 - c1
    // slots, goes AIFS after that exchange.
    let pick = |want_equal: bool| {
        (0..10_000)
            .map(|seed| {
                let mut r = mirror(seed);
                (seed, backoff(&mut r, 31), backoff(&mut r, 31), r)
            })
            .find(|(_, c1, c2, _)| (c1 == c2) == want_equal && (want_equal || c1 < c2))
            .unwrap()
    };
    let (seed, c1, c2, _) = pick(false);
    let mut s = Sim::new(&spec("ath9k"), 2, seed);
    s.send(1, 0, 1, 0);
    s.send(2, 0, 1, 0);
    s.run_until(175 * US);
    assert_eq!(
        s.log,
        vec![Tx {
            start: 43 * US,
            ppdu_end: 127 * US,
            end: 175 * US,
            who: vec![(1, Ac::Be, 1), (2, Ac::Be, 1)]
        }]
    );
    assert!(s.arrivals.is_empty());
    assert_eq!(s.edcaf(1, Ac::Be).backoff.cw, 31);
    assert_eq!(s.edcaf(2, Ac::Be).backoff.cw, 31);
    s.run_until(10 * NSEC_PER_MSEC);
    let t1 = (218 + 9 * c1) * US;
    let t2 = t1 + (132 + 43 + 9 * (c2 - c1)) * US;
    assert_eq!(
        s.starts(),
        vec![(43 * US, 1, Ac::Be), (t1, 1, Ac::Be), (t2, 2, Ac::Be)]
    );
    assert_eq!(s.edcaf(1, Ac::Be).backoff.cw, 15);
    assert_eq!(s.edcaf(2, Ac::Be).backoff.cw, 15);
    let st = s.bss.stats();
    for node in [1, 2] {
        assert_eq!(
            (
                st.nodes[node].collisions,
                st.nodes[node].mpdu_retries,
                st.nodes[node].ppdus
            ),
            (1, 1, 2)
        );
    }
    assert_eq!(s.arrivals.len(), 2);

    // Equal draws: they collide again at 218 + 9 c us and CW doubles to 63.
    let (seed, c, _, _) = pick(true);
    let mut s = Sim::new(&spec("ath9k"), 2, seed);
    s.send(1, 0, 1, 0);
    s.send(2, 0, 1, 0);
    s.run_until(218 * US + 9 * c * US + 132 * US);
    assert_eq!(s.log.len(), 2);
    assert_eq!(s.log[1].start, (218 + 9 * c) * US);
    assert_eq!(s.log[1].who.len(), 2);
    assert_eq!(s.edcaf(1, Ac::Be).backoff.cw, 63);
    assert_eq!(s.bss.stats().nodes[2].mpdu_retries, 2);
}

#[test]
fn internal_collision_lets_the_higher_category_transmit() {
    // Station 2 transmits one packet at 43 us (exchange over at 175 us). Station 1 gets a BE
    // packet at 50 us (draws b_be, CW 15) and a VO packet at 60 us (draws b_vo, CW 3); station
    // 2 draws its post-backoff at 175 us. From 175 us, BE counts from 175 + 43 and VO from
    // 175 + 34: with b_vo = b_be + 1 both reach zero at T = 209 + 9 b_vo us. VO transmits; BE
    // acts as if it had collided: CW 31, one retry, and a new draw d (fourth draw) at T. VO's
    // exchange (84 us PPDU, SIFS, 28 us Ack: VO is not aggregated) ends at T + 128 us, when VO
    // draws its post-backoff; BE then transmits AIFS + d slots later.
    let (seed, b_vo, d) = (0..10_000)
        .find_map(|seed| {
            let mut r = mirror(seed);
            let b_be = backoff(&mut r, 15);
            let b_vo = backoff(&mut r, 3);
            backoff(&mut r, 15);
            let d = backoff(&mut r, 31);
            (b_vo == b_be + 1).then_some((seed, b_vo, d))
        })
        .unwrap();
    let mut s = Sim::new(&spec("ath9k"), 2, seed);
    s.script(
        &[(0, 2, 1, 0), (50 * US, 1, 1, 0), (60 * US, 1, 1, DSCP_EF)],
        10 * NSEC_PER_MSEC,
    );
    let t = (209 + 9 * b_vo) * US;
    let t_be = t + (128 + 43 + 9 * d) * US;
    assert_eq!(
        s.starts(),
        vec![(43 * US, 2, Ac::Be), (t, 1, Ac::Vo), (t_be, 1, Ac::Be)]
    );
    let st = &s.bss.stats().nodes[1];
    assert_eq!((st.collisions, st.mpdu_retries, st.ppdus), (1, 1, 2));
    assert!(s.log.iter().all(|x| x.who.len() == 1));
}

#[test]
fn lost_mpdus_are_retransmitted_first_within_the_block_ack_window() {
    // One station, window 16, hardware queue depth 1. Ten packets at 0 form A (seqs 0-9); 20
    // more arrive at 100 us and wait. Half of A's MPDUs are lost (replayed draws); the receiver
    // hands up the intact ones before the first gap and holds the rest. A's Block Ack moves the
    // window to the first lost seq f; the next aggregate carries the lost seqs, in order, then
    // new seqs from 10 up to f + 15. With no more errors everything arrives once, in order.
    let (seed, lost) = (0..1000)
        .find_map(|seed| {
            let mut r = mirror(seed);
            let lost: Vec<u64> = (0..10).filter(|_| r.chance(0.5)).collect();
            (!lost.is_empty() && lost.len() < 10 && lost[0] > 0).then_some((seed, lost))
        })
        .unwrap();
    let mut s = Sim::new(
        &WifiSpec {
            ba_window: Some(16),
            hw_queue_depth: Some(1),
            mpdu_error_rate: 0.5,
            ..spec("ath9k")
        },
        1,
        seed,
    );
    s.send(1, 0, 10, 0);
    s.run_until(100 * US);
    s.send(1, 0, 20, 0);
    let ppdu_end = 43 * US + s.bss.edcafs[ACS + Ac::Be as usize].hw[0].airtime;
    s.run_until(ppdu_end);
    s.bss.error_rate = 0.0;
    assert_eq!(s.delivered_seqs(), (0..lost[0]).collect::<Vec<_>>());
    s.run_until(s.log[0].end);
    let session = s.bss.edcafs[ACS + Ac::Be as usize].sessions[0]
        .as_deref()
        .unwrap();
    assert_eq!(session.window_start(), lost[0]);
    s.run_until(NSEC_PER_SEC);
    // Second aggregate: the lost seqs, then 10 ..= f + 15.
    let new = lost[0] + 16 - 10;
    assert_eq!(s.log[1].who[0].2, lost.len() + new as usize);
    assert_eq!(s.delivered_seqs(), (0..30).collect::<Vec<_>>());
    let st = &s.bss.stats().nodes[1];
    assert_eq!(st.mpdu_retries, lost.len() as u64);
    assert_eq!(st.mpdus_acked, 30);
}

#[test]
fn retry_limit_drops_mpdus_and_reports_their_completion() {
    // Every MPDU is lost, retry limit 2: no Block Ack ever comes, so the aggregate is sent
    // three times with CW 15, 31, 63; after the third failure its MPDUs are dropped, TX
    // completion is reported for each, and CW returns to 15.
    let mut s = Sim::new(
        &WifiSpec {
            mpdu_error_rate: 1.0,
            retry_limit: 2,
            ..spec("ath9k")
        },
        1,
        3,
    );
    s.truesize = 1000;
    s.send(1, 0, 3, 0);
    s.run_until(NSEC_PER_SEC);
    assert_eq!(s.sizes(), vec![3, 3, 3]);
    assert_eq!(s.completed, vec![(1, 1000); 3]);
    assert_eq!(
        s.dropped.iter().map(|p| p.seq).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(s.arrivals.is_empty());
    assert_eq!(s.edcaf(1, Ac::Be).backoff.cw, 15);
    let st = &s.bss.stats().nodes[1];
    assert_eq!(
        (st.ppdus, st.mpdu_retries, st.retry_drops, st.collisions),
        (3, 9, 3, 0)
    );
    // Retry limit 0 and half the MPDUs lost: the lost ones are dropped at the Block Ack, the
    // receiver's window moves past them, and it hands up everything it held, in order.
    let (seed, lost) = (0..1000)
        .find_map(|seed| {
            let mut r = mirror(seed);
            let lost: Vec<u64> = (0..8).filter(|_| r.chance(0.5)).collect();
            (lost.first() == Some(&0) && lost.len() < 8).then_some((seed, lost))
        })
        .unwrap();
    let mut s = Sim::new(
        &WifiSpec {
            mpdu_error_rate: 0.5,
            retry_limit: 0,
            ..spec("ath9k")
        },
        1,
        seed,
    );
    s.truesize = 1000;
    s.send(1, 0, 8, 0);
    s.run_until(0);
    s.run_until(s.bss.edcafs[ACS + Ac::Be as usize].hw[0].airtime + 43 * US);
    assert!(s.arrivals.is_empty(), "seq 0 was lost: everything waits");
    let end = s.log[0].end;
    s.run_until(end);
    let kept: Vec<u64> = (0..8).filter(|q| !lost.contains(q)).collect();
    assert_eq!(s.delivered_seqs(), kept);
    assert!(s.arrivals.iter().all(|(t, _)| *t == end));
    assert_eq!(s.completed.len(), 8);
    assert_eq!(s.dropped.iter().map(|p| p.seq).collect::<Vec<_>>(), lost);
}

/// A packet received at the PPDU end moves on at once (the world hands it to its next hop,
/// which may end it and free its slot for the next packet created), while its transmitter
/// learns of the Block Ack only at the exchange's end: the TX completion it reports must be
/// the delivered packet's, whatever the slot holds by then.
#[test]
fn tx_completion_is_the_delivered_packets_even_after_its_slot_is_reused() {
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.truesize = 2000;
    s.send(1, 0, 1, 0);
    while s.arrivals.is_empty() {
        let Some(&Reverse(w)) = s.wakes.peek() else {
            panic!("no delivery")
        };
        s.run_until(w);
    }
    assert!(
        s.completed.is_empty(),
        "completed only when the Block Ack ends"
    );
    assert_eq!(s.pkts.live(), 0, "the delivered packet has left its slot");
    let mut other = Packet::new(Kind::Data, 9, 0, 52, s.now);
    other.truesize = 77;
    s.pkts.insert(other);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.completed, vec![(1, 2000)]);
    assert_eq!(s.pkts.live(), 1);
}

#[test]
fn txq_overflow_is_dropped_and_completed_at_once() {
    let mut s = Sim::new(
        &WifiSpec {
            txq: TxqSpec::Pfifo { limit: 5 },
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.truesize = 700;
    s.send(1, 0, 8, 0);
    assert_eq!(
        s.dropped.iter().map(|p| p.seq).collect::<Vec<_>>(),
        vec![5, 6, 7]
    );
    assert_eq!(s.completed, vec![(1, 700); 3]);
    assert_eq!(s.bss.stats().nodes[1].txq_drops, 3);
    assert_eq!(s.bss.backlog(1), 5);
}

#[test]
fn the_ap_s_txq_can_differ_from_the_stations() {
    // The AP's TXQ a 5-packet pfifo, the station's the default fq_codel (8192 packets): eight
    // packets at once overflow the AP's by three and not the station's.
    let ap_pfifo = WifiSpec {
        ap_txq: Some(TxqSpec::Pfifo { limit: 5 }),
        ..spec("ath9k")
    };
    let mut s = Sim::new(&ap_pfifo, 1, 1);
    s.send(0, 1, 8, 0);
    s.send(1, 0, 8, 0);
    let st = s.bss.stats();
    assert_eq!((st.nodes[0].txq_drops, st.nodes[1].txq_drops), (3, 0));
    assert_eq!((s.bss.backlog(0), s.bss.backlog(1)), (5, 8));
    // Without `ap_txq` the AP takes the stations' discipline.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(0, 1, 8, 0);
    assert_eq!(s.bss.stats().nodes[0].txq_drops, 0);
}

#[test]
fn the_ap_serves_its_stations_in_turn() {
    // Two bursts queued at the AP for two stations: aggregates alternate destinations.
    let mut s = Sim::new(
        &WifiSpec {
            hw_queue_depth: Some(1),
            ..spec("ath10k")
        },
        2,
        1,
    );
    s.send(0, 1, 100, 0);
    s.send(0, 2, 100, 0);
    s.run_until(NSEC_PER_SEC);
    assert_eq!(s.dests, vec![1, 2, 1, 2]);
    assert_eq!(s.sizes(), vec![64, 64, 36, 36]);
    assert_eq!(s.arrivals.len(), 200);
}

#[test]
fn stale_wakeups_are_harmless() {
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(1, 0, 1, 0);
    s.run_until(0);
    // The BSS asked for 43 us; waking it at 20 us does nothing and asks for nothing new.
    let mut out = WifiOut {
        pkts: &mut s.pkts,
        delivered: &mut s.delivered,
        completed: &mut s.completed,
    };
    assert_eq!(s.bss.wake(20 * US, &mut out), None);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.log.len(), 1);
    assert_eq!(s.log[0].start, 43 * US);
    // A packet arriving while the hardware queue is full asks for no wake-up.
    let mut s = Sim::new(
        &WifiSpec {
            hw_queue_depth: Some(1),
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.send(1, 0, 1, 0);
    s.run_until(10 * US);
    let p = s.pkts.insert(Packet::new(Kind::Data, 1, 0, 1500, 10 * US));
    let mut out = WifiOut {
        pkts: &mut s.pkts,
        delivered: &mut s.delivered,
        completed: &mut s.completed,
    };
    assert_eq!(s.bss.accept(p, 1, 0, 10 * US, &mut out), None);
}

/// Throughput of a saturated sender keeping `k` packets queued, over exchanges `from..to` of
/// the log: IP bits delivered after exchange `from`'s PPDU end up to exchange `to`'s, over
/// that time.
fn goodput(s: &Sim, from: usize, to: usize) -> f64 {
    let (t0, t1) = (s.log[from].ppdu_end, s.log[to].ppdu_end);
    let bits: u64 = s
        .arrivals
        .iter()
        .filter(|(t, _)| *t > t0 && *t <= t1)
        .map(|(_, p)| p.size as u64 * 8)
        .sum();
    bits as f64 * 1e9 / (t1 - t0) as f64
}

#[test]
fn analytic_mac_delivers_thr_k() {
    // The Wi-Fi 6 study's reference (Future of TCP on Wi-Fi 6, 2021, Table 1): l = 1500 B,
    // l_oh = 48 B, r = 2.4 Gbit/s, t_oh = 0.5 ms.
    // TxTw(k) = (1500 k + 48) 8 / 2.4e9 + 0.5e-3 s; Thr(k) = 12000 k / TxTw(k).
    // e.g. Thr(1) = 12000 / (5.16e-6 + 5e-4) = 23.755 Mbit/s; Thr(799) = 9588000 /
    // (3.99516e-3 + 5e-4) = 2132.96 Mbit/s. The feeder keeps exactly k packets in the TXQ, so
    // every aggregate holds k; the window is raised to 1024 so that it does not bound k, and
    // the hardware queue holds one aggregate, since two queued aggregates of more than 512
    // would share one window (as in the HT test above). The next aggregate is built when the
    // previous one ends and goes on the air at once, so transmissions are back to back.
    let spec = WifiSpec {
        chipset: ChipsetSpec::Preset("ax201".into()),
        txq: TxqSpec::Pfifo { limit: 10_000 },
        ba_window: Some(1024),
        hw_queue_depth: Some(1),
        driver: DriverSpec {
            kind: Some(DriverKind::Generic),
            ..DriverSpec::default()
        },
        mac: MacMode::Analytic {
            t_oh: Dur(500 * US),
            l_oh: Size(48),
            rate: Some(Rate(2_400_000_000)),
        },
        ..WifiSpec::default()
    };
    let thr = |k: f64| 12000.0 * k / ((1500.0 * k + 48.0) * 8.0 / 2.4e9 + 0.5e-3);
    assert!((thr(1.0) - 23.755e6).abs() < 1e3);
    assert!((thr(799.0) - 2132.96e6).abs() < 1e4);
    for k in [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 799] {
        let mut s = Sim::new(&spec, 1, 1);
        s.feeders.push((1, 0, k));
        s.run_until(40 * 5 * NSEC_PER_MSEC);
        assert!(s.log.len() > 30, "k {k}: {} exchanges", s.log.len());
        assert!(s.sizes().iter().all(|&n| n == k), "k {k}: {:?}", s.sizes());
        let got = goodput(&s, 2, 30);
        let want = thr(k as f64);
        assert!((got / want - 1.0).abs() < 0.005, "k {k}: {got} vs {want}");
    }
}

#[test]
fn saturated_goodput_per_preset_matches_an_airtime_budget() {
    // One saturated station, hardware queue depth 1 so that every aggregate is as large as
    // the limits allow. A cycle is AIFS[BE] 43 us + a mean backoff of 7.5 slots x 9 us +
    // PPDU + SIFS 16 us + Block Ack; it carries k x 1500 x 8 bits.
    //   ath9k-htc: k 42 (65,535-byte A-MPDU), PSDU 42 x 1544 - 2 = 64846 B, 518790 bits,
    //     540 bits/symbol -> 961 symbols x 3.6 us = 3459.6 -> 3460 us, + 36 us = 3496 us; BA 32.
    //   ath9k: 1080 bits/symbol -> 481 symbols, 1731.6 -> 1732 us, + 40 = 1772 us; BA 32.
    //   ath10k-1x1, qca9377: k 64 (window), PSDU 98814 B, 790534 bits / 1560 -> 507 symbols,
    //     1825.2 -> 1828 us, + 40 = 1868 us; BA 32.
    //   ath10k: / 3120 -> 254 symbols, 914.4 -> 916 us, + 44 = 960 us; BA 32.
    //   ax201: k 256 (window), PSDU 395262 B, 3162112 bits / 32666 -> 97 symbols x 13.6 us
    //     = 1319.2 us, + 50.4 = 1369.6 us; BA 40 (32-byte bitmap).
    // Without aggregation (window 1, k = 1, PSDU 1542 B, BA 32 us): ath9k-htc 23 symbols,
    // 82.8 -> 84 + 36 = 120 us; ath9k 12 symbols, 44 + 40 = 84 us; ath10k-1x1 8 symbols,
    // 28.8 -> 32 + 40 = 72 us; ath10k 4 symbols, 14.4 -> 16 + 44 = 60 us; ax201 1 symbol,
    // 13.6 + 50.4 = 64 us.
    let cases: [(&str, usize, f64, f64, f64); 6] = [
        ("ath9k-htc", 42, 3496.0, 32.0, 120.0),
        ("ath9k", 42, 1772.0, 32.0, 84.0),
        ("ath10k-1x1", 64, 1868.0, 32.0, 72.0),
        ("qca9377", 64, 1868.0, 32.0, 72.0),
        ("ath10k", 64, 960.0, 32.0, 60.0),
        ("ax201", 256, 1369.6, 40.0, 64.0),
    ];
    let access_us = 43.0 + 7.5 * 9.0;
    for (name, k, ppdu_us, ba_us, single_us) in cases {
        let run = |window: Option<u32>, keep: usize, cycles: usize| {
            let mut s = Sim::new(
                &WifiSpec {
                    hw_queue_depth: Some(1),
                    ba_window: window,
                    ..spec(name)
                },
                1,
                11,
            );
            s.feeders.push((1, 0, keep));
            let mut t = 0;
            while s.log.len() <= cycles {
                t += 100 * NSEC_PER_MSEC;
                s.run_until(t);
            }
            s
        };
        let s = run(None, 2 * k, 400);
        assert!(s.sizes().iter().all(|&n| n == k), "{name}");
        let got = goodput(&s, 0, 400);
        let want = k as f64 * 12000.0 / (access_us + ppdu_us + 16.0 + ba_us) * 1e6;
        assert!((got / want - 1.0).abs() < 0.01, "{name}: {got} vs {want}");
        let s = run(Some(1), 4, 400);
        let single = goodput(&s, 0, 400);
        let want1 = 12000.0 / (access_us + single_us + 16.0 + 32.0) * 1e6;
        assert!(
            (single / want1 - 1.0).abs() < 0.01,
            "{name} k=1: {single} vs {want1}"
        );
        assert!(single < 0.4 * got, "{name}: {single} vs {got}");
    }
}

#[test]
fn two_saturated_stations_share_airtime_equally() {
    // mac80211's fq_codel TXQs: 100 packets queued wait about 5 ms, below CoDel's 20 ms target.
    let mut s = Sim::new(
        &WifiSpec {
            chipset: ChipsetSpec::Preset("ath9k".into()),
            ..WifiSpec::default()
        },
        2,
        5,
    );
    s.feeders.push((1, 0, 100));
    s.feeders.push((2, 0, 100));
    s.run_until(3 * NSEC_PER_SEC);
    let st = s.bss.stats();
    let a = [st.nodes[1].airtime as f64, st.nodes[2].airtime as f64];
    let jain = (a[0] + a[1]).powi(2) / (2.0 * (a[0] * a[0] + a[1] * a[1]));
    assert!(jain >= 0.99, "{a:?}: {jain}");
    assert_eq!(st.nodes[1].txq_drops + st.nodes[2].txq_drops, 0);
    // Contention really happened, and the medium was never idle for long.
    assert!(st.nodes[1].collisions > 0 && st.nodes[2].collisions > 0);
    assert!(a[0] + a[1] > 0.9 * 3e9, "{a:?}");
    // In order, once, per station.
    for node in [1u32, 2] {
        let seqs: Vec<u64> = s
            .arrivals
            .iter()
            .filter(|(_, p)| p.flow == node)
            .map(|(_, p)| p.seq)
            .collect();
        assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    }
}

#[test]
fn statistics_count_sizes_and_sojourn_from_the_warmup() {
    let mut s = Sim::new(
        &WifiSpec {
            hw_queue_depth: Some(1),
            ..spec("ath9k")
        },
        1,
        1,
    );
    s.bss.set_record_from(100 * US);
    s.script(&[(0, 1, 5, 0), (60 * US, 1, 3, 0)], 10 * NSEC_PER_MSEC);
    // The first aggregate (5, built at 0 us) is before the warm-up; the second (3, built at
    // A's end, 43 + PPDU(5) + 48 us) after it. Its packets waited from 60 us.
    let st = &s.bss.stats().nodes[1];
    assert_eq!(st.ampdu_size.count(), 1);
    assert_eq!(st.ampdu_mean(), Some(3.0));
    let built = s.log[0].end;
    assert_eq!(st.txq_sojourn.count(), 3);
    assert_eq!(st.txq_sojourn.max(), Some(built - 60 * US));
    assert_eq!(st.ppdus, 2);
    assert_eq!(st.bytes_acked, 8 * 1500);
    assert_eq!(
        st.airtime,
        s.log.iter().map(|t| t.end - t.start).sum::<Nanos>()
    );
}

#[test]
fn codel_in_the_txq_drops_when_the_backlog_stands_above_target() {
    // ath9k-htc delivers about 138 Mbit/s: 2000 queued packets of 1500 bytes wait about
    // 2000 x 12000 / 138e6 = 174 ms, far above the 20 ms target for longer than the 100 ms
    // interval, so CoDel drops (the packets are not ECN-capable). Each drop is reported as
    // a TX completion too.
    let mut s = Sim::new(
        &WifiSpec {
            chipset: ChipsetSpec::Preset("ath9k-htc".into()),
            ..WifiSpec::default()
        },
        1,
        1,
    );
    s.truesize = 100;
    s.feeders.push((1, 0, 2000));
    s.run_until(NSEC_PER_SEC);
    let st = &s.bss.stats().nodes[1];
    assert!(st.txq_drops > 0);
    assert_eq!(st.txq_drops, s.dropped.len() as u64);
    assert_eq!(st.retry_drops, 0);
    assert_eq!(s.completed.len() as u64, st.mpdus_acked + st.txq_drops);
    assert!(st.txq_sojourn.max().unwrap() > 100 * NSEC_PER_MSEC);
}

/// The default EDCA TXOP limits bound each access category's aggregate: the whole exchange
/// (PPDU, SIFS, Block Ack) of a voice aggregate fits 1.504 ms, of video 3.008 ms; best effort
/// and background (TXOP limit 0: one exchange) are bounded by the airtime cap only. On ath10k
/// (VHT80 2x2, 866.7 Mbit/s, A-MPDUs up to 1,048,575 B) all three bounds are below the length
/// limit, so each one binds (voice aggregates here as with `aggregate_vo`).
#[test]
fn txop_limits_bound_voice_and_video_aggregates() {
    let phy = spec("ath10k").phy().unwrap();
    let response = SIFS + block_ack_time(64);
    let cap = 4 * NSEC_PER_MSEC;
    let f = Framing::new(phy, Mode::Edca, 1_048_575, cap, 64, true, 0);
    for (ac, limit) in [
        (Ac::Vo, 1_504_000),
        (Ac::Vi, 3_008_000),
        (Ac::Be, cap + response),
        (Ac::Bk, cap + response),
    ] {
        let psdu = f.max_psdu[ac as usize];
        assert!(phy.ppdu_time(psdu) + response <= limit, "{ac:?}: {psdu} B");
        assert!(
            phy.ppdu_time(psdu + 4) + response > limit,
            "{ac:?}: {psdu} B is not the largest"
        );
    }
    assert!(f.max_psdu[Ac::Vo as usize] < f.max_psdu[Ac::Vi as usize]);
    assert!(f.max_psdu[Ac::Vi as usize] < f.max_psdu[Ac::Be as usize]);
}

// ----- Drivers -----

/// `chipset` with its own driver, a deep FIFO TXQ, and `f` applied to the driver spec.
fn with_driver(chipset: &str, f: impl FnOnce(&mut DriverSpec)) -> WifiSpec {
    let mut spec = WifiSpec {
        chipset: ChipsetSpec::Preset(chipset.into()),
        txq: TxqSpec::Pfifo { limit: 10_000 },
        ..WifiSpec::default()
    };
    f(&mut spec.driver);
    spec
}

#[test]
fn ath9k_builds_an_aggregate_for_each_frame_while_its_hardware_queue_has_room() {
    // The 3 segments of one skb reach ath9k one by one; each wake-up finds the hardware queue
    // with room for 0, 1 aggregates: the first two leave as single-MPDU PPDUs, the third waits
    // for the first one's TX status and goes alone too.
    let mut s = Sim::new(&with_driver("ath9k", |_| {}), 1, 1);
    s.send(1, 0, 3, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![1, 1, 1]);
    // 5 segments: 1, 1, then the 3 queued behind them in one aggregate.
    let mut s = Sim::new(&with_driver("ath9k", |_| {}), 1, 1);
    s.send(1, 0, 5, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![1, 1, 3]);
    // The generic driver waits for the burst: one aggregate of 5.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(1, 0, 5, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![5]);
    assert_eq!(s.delivered_seqs(), (0..5).collect::<Vec<_>>());
}

#[test]
fn ath9k_aggregates_hold_at_most_half_the_block_ack_window() {
    // Woken once for a burst of 40 (as if per burst), ath9k's aggregate stops at 32 MPDUs
    // (ath_tx_form_aggr: h_baw = 64 / 2); the 33rd starts the second.
    let mut s = Sim::new(
        &with_driver("ath9k", |d| d.wake = Some(Wake::PerBurst)),
        1,
        1,
    );
    s.send(1, 0, 40, 0);
    s.run_until(20 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![32, 8]);
}

#[test]
fn a_hardware_queue_slot_is_freed_when_the_host_processes_the_tx_status() {
    // ath9k with a 300 us TX status delay and one slot: the 4 packets queued while A (1 MPDU)
    // is out go only once A's status is processed, 300 us after its Block Ack, and A's
    // completion reaches the host then.
    let spec = WifiSpec {
        hw_queue_depth: Some(1),
        ..with_driver("ath9k", |d| {
            d.tx_status = Some(Irq {
                delay: Dur(300 * US),
                ..Irq::default()
            })
        })
    };
    let mut s = Sim::new(&spec, 1, 1);
    s.truesize = 1000;
    s.send(1, 0, 1, 0);
    s.run_until(50 * US);
    s.send(1, 0, 4, 0);
    s.run_until(300 * US);
    assert_eq!(s.log.len(), 1);
    let a_end = s.log[0].end;
    assert!(a_end < 300 * US);
    s.run_until(a_end + 300 * US - 1);
    assert!(s.completed.is_empty(), "{:?}", s.completed);
    assert_eq!(s.log.len(), 1);
    s.run_until(a_end + 300 * US);
    assert_eq!(s.completed, vec![(1, 1000)]);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![1, 4]);
    assert!(s.log[1].start >= a_end + 300 * US);
    let lat = &s.bss.stats().nodes[1].tx_completion;
    assert_eq!(lat.count(), 5);
}

#[test]
fn rx_mitigation_holds_received_frames_until_the_interrupt() {
    // ath9k on AR9003: rimt_last 500 us, rimt_first 2000 us. A single MPDU reaches the host
    // 500 us after its PPDU ends.
    let mut s = Sim::new(&with_driver("ath9k", |_| {}), 1, 1);
    s.send(1, 0, 1, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.arrivals.len(), 1);
    assert_eq!(s.arrivals[0].0, s.log[0].ppdu_end + 500 * US);
    // Frames arriving every 400 us keep pushing the last timer; the first timer ends it 2 ms
    // after the first posting.
    let spec = with_driver("ath9k", |d| d.wake = Some(Wake::PerBurst));
    let mut s = Sim::new(&spec, 1, 1);
    s.script(
        &(0..8).map(|i| (i * 400 * US, 1, 1, 0)).collect::<Vec<_>>(),
        20 * NSEC_PER_MSEC,
    );
    let first_end = s.log[0].ppdu_end;
    let batch: Vec<Nanos> = s.arrivals.iter().map(|a| a.0).collect();
    assert_eq!(batch[0], first_end + 2000 * US);
    let in_first = batch.iter().filter(|&&t| t == batch[0]).count();
    assert_eq!(
        in_first,
        s.log
            .iter()
            .filter(|l| l.ppdu_end <= first_end + 2000 * US)
            .count()
    );
}

#[test]
fn firmware_aggregates_at_transmit_time_from_its_ring() {
    // ath10k: one packet readies an aggregate; 10 more arrive before it wins the medium
    // (43 us) and go in the same A-MPDU, which the firmware completes as it transmits.
    let mut s = Sim::new(&with_driver("ath10k", |_| {}), 1, 1);
    s.send(1, 0, 1, 0);
    s.run_until(20 * US);
    s.send(1, 0, 10, 0);
    s.run_until(10 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![11]);
    assert_eq!(s.delivered_seqs(), (0..11).collect::<Vec<_>>());
}

#[test]
fn the_firmware_ring_holds_frames_until_their_completion_is_processed() {
    // A ring of 4 and a 1 ms completion delay: 10 packets, the first 4 in the ring, 6 in the
    // TXQ. The first A-MPDU holds 4; the next ones can only be handed over once its
    // completion has been processed, 1 ms after its Block Ack.
    let spec = with_driver("ath10k", |d| {
        d.ring = Some(4);
        d.tx_status = Some(Irq {
            delay: Dur(NSEC_PER_MSEC),
            ..Irq::default()
        });
    });
    let mut s = Sim::new(&spec, 1, 1);
    s.truesize = 500;
    s.send(1, 0, 10, 0);
    s.run_until(20 * NSEC_PER_MSEC);
    assert_eq!(s.sizes(), vec![4, 4, 2]);
    assert!(s.log[1].start >= s.log[0].end + NSEC_PER_MSEC);
    assert_eq!(s.completed.len(), 10);
}

#[test]
fn iwlwifi_coalesces_block_ack_notifications() {
    // The coalescing timer (2048 us from the first pending notification) hands the host the
    // statuses of every exchange that ended within it in one interrupt.
    let mut s = Sim::new(&with_driver("ax201", |_| {}), 1, 1);
    s.truesize = 100;
    s.script(
        &(0..6).map(|i| (i * 500 * US, 1, 2, 0)).collect::<Vec<_>>(),
        20 * NSEC_PER_MSEC,
    );
    let first_ba = s.log[0].end;
    let lat = &s.bss.stats().nodes[1].tx_completion;
    assert_eq!(lat.count(), 12);
    // The first two packets waited for the whole timer after their Block Ack.
    assert!(lat.quantile(1.0).unwrap() as u64 >= 2048 * US);
    assert!(first_ba < 2048 * US);
}

#[test]
fn each_station_link_uses_its_own_mcs() {
    // ath9k (HT40, 2 streams, short GI) with station 2 at MCS 0: N_DBPS = 2 x 108 x 1 x 1/2
    // = 108; a 1542-byte PSDU is 12358 bits, 115 symbols, 414 us -> 416 us; PPDU 456 us.
    // Station 1 keeps MCS 7: 84 us (see the emulator's timing test).
    let spec = WifiSpec {
        station_mcs: vec![7, 0],
        ..spec("ath9k")
    };
    let mut s = Sim::new(&spec, 2, 1);
    s.send(1, 0, 1, 0);
    s.run_until(NSEC_PER_MSEC);
    s.send(2, 0, 1, 0);
    s.run_until(3 * NSEC_PER_MSEC);
    let airtimes: Vec<Nanos> = s.log.iter().map(|t| t.ppdu_end - t.start).collect();
    assert_eq!(airtimes, vec![84 * US, 456 * US]);
    let st = s.bss.stats();
    assert_eq!(st.nodes[2].mcs.quantile(0.5), Some(0.0));
    assert_eq!(st.nodes[1].mcs.quantile(0.5), Some(7.0));
    // The AP's frames to station 2 use station 2's MCS too.
    s.send(0, 2, 1, 0);
    s.run_until(6 * NSEC_PER_MSEC);
    let last = s.log.last().unwrap();
    assert_eq!((last.who[0].0, last.ppdu_end - last.start), (0, 456 * US));
}

#[test]
fn link_mcs_values_are_checked() {
    let bad = WifiSpec {
        station_mcs: vec![7, 8],
        ..spec("ath9k")
    };
    assert_eq!(
        bad.validate().unwrap_err(),
        "station_mcs[1] = 8: expected an MCS of 0 to 7 per stream for HT"
    );
    let bad = WifiSpec {
        mcs: Some(12),
        ..spec("ax201")
    };
    assert_eq!(
        bad.validate().unwrap_err(),
        "mcs = 12: expected an MCS of 0 to 11 per stream for HE"
    );
    let too_many = WifiSpec {
        station_mcs: vec![1, 2, 3],
        ..spec("ath9k")
    };
    assert_eq!(
        Bss::new(&too_many, 2, Rng::new(1, STREAM)).unwrap_err(),
        "station_mcs: 3 entries for 2 station(s): expected at most one per station"
    );
}

#[test]
fn the_kernels_dscp_map_chooses_the_access_category() {
    // Before Linux 6.8 EF is user priority 5: AC_VI, whose frames ath9k aggregates.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.bss
        .set_dscp_map(crate::net::wifi::edca::DscpMap::Precedence);
    s.send(1, 0, 3, DSCP_EF);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.log[0].who, vec![(1, Ac::Vi, 3)]);
    // The default (6.8+, RFC 8325): AC_VO, one frame per PPDU.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(1, 0, 3, DSCP_EF);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.log[0].who, vec![(1, Ac::Vo, 1)]);
}

#[test]
fn the_ap_contends_with_hostapds_parameters() {
    // hostapd gives the AP's own VO queue AIFSN 1: a voice frame from the idle AP starts after
    // SIFS + 1 slot = 25 us; a station's waits AIFSN 2 = 34 us. The AP's BE window stops at 63.
    let mut s = Sim::new(&spec("ath9k"), 1, 1);
    s.send(0, 1, 1, DSCP_EF);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.starts(), vec![(25 * US, 0, Ac::Vo)]);
    let spec_station = WifiSpec {
        ap_edca: crate::net::wifi::ApEdca::Station,
        ..spec("ath9k")
    };
    let mut s = Sim::new(&spec_station, 1, 1);
    s.send(0, 1, 1, DSCP_EF);
    s.run_until(NSEC_PER_MSEC);
    assert_eq!(s.starts(), vec![(34 * US, 0, Ac::Vo)]);
    let ap = crate::net::wifi::edca::EdcaParams::hostapd_ap(Ac::Be);
    let mut b = Backoff::with(Ac::Be, ap);
    for _ in 0..10 {
        b.fail();
    }
    assert_eq!(b.cw, 63);
}

#[test]
fn the_access_point_runs_its_own_driver() {
    // ath9k stations with a generic AP: what the AP receives reaches its host at the PPDU's
    // end; what a station receives waits for ath9k's RX mitigation (500 us).
    let spec = WifiSpec {
        ap_driver: Some(DriverSpec {
            kind: Some(DriverKind::Generic),
            ..DriverSpec::default()
        }),
        ..with_driver("ath9k", |_| {})
    };
    let mut s = Sim::new(&spec, 1, 1);
    s.send(1, 0, 1, 0);
    s.run_until(2 * NSEC_PER_MSEC);
    assert_eq!(s.arrivals[0].0, s.log[0].ppdu_end);
    s.send(0, 1, 1, 0);
    s.run_until(4 * NSEC_PER_MSEC);
    assert_eq!(s.arrivals[1].0, s.log[1].ppdu_end + 500 * US);
    assert_eq!(s.bss.driver_of(0).kind, DriverKind::Generic);
    assert_eq!(s.bss.driver_of(1).kind, DriverKind::Ath9k);
    // A BSS of iwlwifi stations gets the firmware AP by default.
    let bss = Bss::new(&with_driver("ax201", |_| {}), 1, Rng::new(1, STREAM)).unwrap();
    assert_eq!(bss.driver_of(0).kind, DriverKind::Firmware);
    assert!(bss.driver_of(0).rx.is_immediate());
}
