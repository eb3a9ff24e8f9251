//! The per-destination queues of a Wi-Fi node: the mac80211 TXQ, the Block Ack session that
//! numbers and retransmits its MPDUs, and the receiver's reordering buffer.
//!
//! mac80211 (net/mac80211/tx.c, include/net/fq_impl.h) gives every (station, TID) its own TXQ
//! and schedules them with FQ-CoDel: 4096 flow queues, a DRR quantum of 300 bytes, 8192 packets
//! at most, a memory limit of 16 MB (4 MB on hardware without VHT, "64 max-size aggregates in
//! 802.11n"), and CoDel with target 20 ms, interval 100 ms and ECN marking
//! (`ieee80211_txq_setup_flows`, `fq_init`). When the limit is exceeded, mac80211 drops from
//! the head of the fattest flow one packet at a time until it is back within the limit. Here
//! each TXQ is one [`FqCodel`] with those parameters, or a packet-limited FIFO for drivers
//! without TXQs. (mac80211 shares one set of flow queues and one limit among all TXQs of a
//! radio; with one destination per access category, as in every topology of the studies, the
//! two are the same.)
//!
//! A Block Ack session (802.11-2020 clause 10) numbers the MPDUs of a (transmitter, receiver, TID).
//! The transmitter may have MPDUs outstanding only within a window of W sequence numbers that
//! starts at the oldest one not yet acknowledged or discarded, so a missing MPDU at the start
//! of the window stops new ones from being sent until it is delivered or dropped (ath9k's
//! `BAW_WITHIN` check when it forms an aggregate, drivers/net/wireless/ath/ath9k/xmit.c). MPDUs
//! that a Block Ack reports missing wait in a retry queue, in sequence order, and go first into
//! the next aggregate; a packet taken from the TXQ that did not fit the aggregate being built
//! waits in front of the TXQ, as ath9k puts it back on its TID queue.
//!
//! The receiver hands MPDUs up in sequence order: one that arrives after a gap waits in the
//! reordering buffer until the gap is filled, or until the transmitter gives up on the missing
//! MPDU and moves the window past it (802.11-2020 clause 10; the Block Ack Request that moves it
//! is taken to arrive at once and costs no airtime).

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::phy::Standard;
use crate::net::packet::{Packet, PacketRef};
use crate::net::qdisc::spec::TXQUEUELEN;
use crate::net::qdisc::{AnyQdisc, CodelParams, Fifo, FifoLimit, FqCodel, FqCodelParams, Qdisc};
use crate::parse::{Dur, Size};
use crate::units::{Bytes, Nanos, NSEC_PER_MSEC};

/// Flow queues of mac80211's FQ (`fq_init(fq, 4096)` in `ieee80211_txq_setup_flows`).
pub const MAC80211_FLOWS: u32 = 4096;
/// DRR quantum, bytes (`fq->quantum = 300`, fq_impl.h).
pub const MAC80211_QUANTUM: Bytes = 300;
/// Packet limit (`fq->limit = 8192`, fq_impl.h).
pub const MAC80211_LIMIT: u32 = 8192;
/// Memory limit, bytes (`fq->memory_limit = 16 << 20`, fq_impl.h).
pub const MAC80211_MEMORY_LIMIT: Bytes = 16 << 20;
/// Memory limit on hardware without VHT (`fq->memory_limit = 4 << 20`, tx.c).
pub const MAC80211_MEMORY_LIMIT_HT: Bytes = 4 << 20;
/// CoDel target of mac80211 TXQs (`local->cparams.target = MS2TIME(20)`).
pub const MAC80211_CODEL_TARGET: Nanos = 20 * NSEC_PER_MSEC;
/// CoDel interval of mac80211 TXQs (`local->cparams.interval = MS2TIME(100)`).
pub const MAC80211_CODEL_INTERVAL: Nanos = 100 * NSEC_PER_MSEC;
/// Largest Block Ack window accepted as an override: 1024, 802.11be's.
pub const MAX_BA_WINDOW: u32 = 1024;
/// CoDel's one-MTU backlog floor, bytes.
const CODEL_MTU: u32 = 1500;

fn target() -> Dur {
    Dur(MAC80211_CODEL_TARGET)
}
fn interval() -> Dur {
    Dur(MAC80211_CODEL_INTERVAL)
}
fn yes() -> bool {
    true
}
fn flows() -> u32 {
    MAC80211_FLOWS
}
fn quantum() -> Size {
    Size(MAC80211_QUANTUM)
}
fn limit() -> u32 {
    MAC80211_LIMIT
}
fn pfifo_limit() -> u32 {
    TXQUEUELEN
}

/// The TXQ discipline as a scenario writes it: `"fq_codel"`, `"pfifo"`, or a table with `kind`
/// and any parameter to change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TxqSpec {
    /// mac80211's FQ-CoDel TXQ (net/mac80211/tx.c, include/net/fq_impl.h).
    FqCodel {
        /// CoDel's acceptable standing queue delay, less than `interval`; default 20 ms
        /// (mac80211's).
        #[serde(default = "target")]
        target: Dur,
        /// CoDel's interval, positive; default 100 ms.
        #[serde(default = "interval")]
        interval: Dur,
        /// CE-mark ECN-capable packets instead of dropping them (mac80211: on).
        #[serde(default = "yes")]
        ecn: bool,
        /// Number of flow queues, 1 to 65536; default 4096.
        #[serde(default = "flows")]
        #[schemars(range(min = 1, max = 65536), extend("x-unit" = "queues"))]
        flows: u32,
        /// Bytes a flow may send per round of the deficit round robin; default 300.
        #[serde(default = "quantum")]
        quantum: Size,
        /// Packets held in all flow queues together, at least 1; default 8192.
        #[serde(default = "limit")]
        #[schemars(range(min = 1), extend("x-unit" = "packets"))]
        limit: u32,
        /// Memory (truesize) the queued packets may use; default 16 MB, or 4 MB for an HT
        /// chipset.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_limit: Option<Size>,
    },
    /// A tail-drop FIFO of `limit` packets (for drivers without TXQs).
    Pfifo {
        /// Queue limit, packets, at least 1; default 1000 (txqueuelen).
        #[serde(default = "pfifo_limit")]
        #[schemars(range(min = 1), extend("x-unit" = "packets"))]
        limit: u32,
    },
}

impl Default for TxqSpec {
    fn default() -> Self {
        TxqSpec::FqCodel {
            target: target(),
            interval: interval(),
            ecn: true,
            flows: MAC80211_FLOWS,
            quantum: quantum(),
            limit: MAC80211_LIMIT,
            memory_limit: None,
        }
    }
}

impl TxqSpec {
    /// Check every parameter; errors name `txq.<field>`, the value and what is expected.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            TxqSpec::FqCodel {
                target,
                interval,
                flows,
                quantum,
                limit,
                memory_limit,
                ..
            } => {
                if interval.0 == 0 {
                    return Err("txq.interval = \"0ns\": expected a positive duration".into());
                }
                if target.0 >= interval.0 {
                    return Err(format!(
                        "txq.target = \"{}ns\": expected less than txq.interval = \"{}ns\"",
                        target.0, interval.0
                    ));
                }
                if flows == 0 || flows > 65536 {
                    return Err(format!(
                        "txq.flows = {flows}: expected 1 to 65536 flow queues"
                    ));
                }
                if quantum.0 == 0 || quantum.0 > u32::MAX as Bytes {
                    return Err(format!(
                        "txq.quantum = \"{}b\": expected a positive size below 4 GB",
                        quantum.0
                    ));
                }
                if limit == 0 {
                    return Err("txq.limit = 0: expected at least 1 packet".into());
                }
                if let Some(Size(0)) = memory_limit {
                    return Err("txq.memory_limit = \"0b\": expected a positive size".into());
                }
            }
            TxqSpec::Pfifo { limit } => {
                if limit == 0 {
                    return Err("txq.limit = 0: expected at least 1 packet".into());
                }
            }
        }
        Ok(())
    }

    /// Build one TXQ for a radio of `standard`; `hash_seed` perturbs the flow hash.
    pub fn build(&self, standard: Standard, hash_seed: u64) -> AnyQdisc {
        match *self {
            TxqSpec::FqCodel {
                target,
                interval,
                ecn,
                flows,
                quantum,
                limit,
                memory_limit,
            } => {
                let default_memory = match standard {
                    Standard::Ht => MAC80211_MEMORY_LIMIT_HT,
                    Standard::Vht | Standard::He => MAC80211_MEMORY_LIMIT,
                };
                let params = FqCodelParams {
                    flows,
                    quantum: quantum.0 as u32,
                    limit,
                    memory_limit: memory_limit.map_or(default_memory, |m| m.0),
                    drop_batch_size: 1,
                    codel: CodelParams {
                        target: target.0,
                        interval: interval.0,
                        ecn,
                        ..CodelParams::new(CODEL_MTU)
                    },
                };
                FqCodel::new(params, hash_seed).into()
            }
            TxqSpec::Pfifo { limit } => Fifo::new(FifoLimit::Packets(limit), false).into(),
        }
    }
}

/// An MPDU in flight at its transmitter.
#[derive(Debug, Clone, Copy)]
pub struct Mpdu {
    pub pkt: PacketRef,
    /// The packet's IP size (what framing counts).
    pub size: u32,
    /// The TX completion to report for it (`Packet::tsq_charge`). Kept here because the packet
    /// itself moves on once received, before the Block Ack tells the transmitter.
    pub tsq: Option<(u32, u32)>,
    /// Sequence number within its Block Ack session (not wrapped at 4096).
    pub seq: u64,
    /// Failed transmissions so far.
    pub retries: u32,
    /// Received correctly in the PPDU that just ended.
    pub ok: bool,
    /// When the packet entered the radio's TXQ (for the TX-completion latency).
    pub queued: Nanos,
}

/// Words of the outstanding-MPDU bitmap: one bit per sequence number modulo 1024.
const OUTSTANDING_WORDS: usize = MAX_BA_WINDOW as usize / 64;

/// A (transmitter, receiver, access category) queue and Block Ack session.
#[derive(Debug)]
pub struct Session {
    pub txq: AnyQdisc,
    /// A packet taken from the TXQ that did not fit the last aggregate.
    pub held: Option<PacketRef>,
    /// MPDUs to retransmit, in sequence order.
    pub retry: VecDeque<Mpdu>,
    /// Firmware aggregation: packets the host has handed to the firmware's ring, in order;
    /// the firmware builds aggregates from these (empty for host aggregation).
    pub fw: VecDeque<PacketRef>,
    /// Next sequence number to assign.
    next_seq: u64,
    /// Oldest sequence number neither acknowledged nor discarded (or `next_seq`).
    win_start: u64,
    /// Sequence numbers sent and not yet settled, bit `seq % 1024`.
    outstanding: [u64; OUTSTANDING_WORDS],
    /// Receiver: next sequence number to hand up.
    rx_next: u64,
    /// Receiver: MPDUs received after a gap, slot `seq % window` (allocated on first use).
    rx_buf: Vec<Option<PacketRef>>,
    rx_held: usize,
}

impl Session {
    pub fn new(txq: AnyQdisc) -> Self {
        Session {
            txq,
            held: None,
            retry: VecDeque::new(),
            fw: VecDeque::new(),
            next_seq: 0,
            win_start: 0,
            outstanding: [0; OUTSTANDING_WORDS],
            rx_next: 0,
            rx_buf: Vec::new(),
            rx_held: 0,
        }
    }

    /// A new sequence number fits in the window of `window` MPDUs.
    pub fn window_open(&self, window: u32) -> bool {
        self.next_seq < self.win_start + window as u64
    }

    /// Something can go into an aggregate now.
    /// Aggregates are built from the TXQ (host aggregation) or from the firmware's ring.
    pub fn has_work(&self, window: u32, firmware: bool) -> bool {
        !self.retry.is_empty()
            || (self.window_open(window)
                && if firmware {
                    !self.fw.is_empty()
                } else {
                    self.held.is_some() || !self.txq.is_empty()
                })
    }

    /// Packets waiting here: in the TXQ, held in front of it, in the firmware's ring, or to
    /// retransmit.
    pub fn backlog(&self) -> usize {
        self.txq.len() + self.held.is_some() as usize + self.fw.len() + self.retry.len()
    }

    /// Give packet `pkt` (stored as `p`) the next sequence number and mark it outstanding.
    pub fn number(&mut self, pkt: PacketRef, p: &Packet) -> Mpdu {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.outstanding[(seq as usize / 64) % OUTSTANDING_WORDS] |= 1 << (seq % 64);
        Mpdu {
            pkt,
            size: p.size,
            tsq: p.tsq_charge(),
            seq,
            retries: 0,
            ok: false,
            queued: p.enqueued,
        }
    }

    fn is_outstanding(&self, seq: u64) -> bool {
        self.outstanding[(seq as usize / 64) % OUTSTANDING_WORDS] & (1 << (seq % 64)) != 0
    }

    /// `seq` is acknowledged or discarded: move the window start past every settled number.
    pub fn settle(&mut self, seq: u64) {
        self.outstanding[(seq as usize / 64) % OUTSTANDING_WORDS] &= !(1 << (seq % 64));
        while self.win_start < self.next_seq && !self.is_outstanding(self.win_start) {
            self.win_start += 1;
        }
    }

    /// Queue a failed MPDU for retransmission, keeping sequence order.
    pub fn requeue(&mut self, mpdu: Mpdu) {
        let at = self.retry.partition_point(|m| m.seq < mpdu.seq);
        self.retry.insert(at, mpdu);
    }

    /// The receiver got MPDU `seq` correctly: hand it and whatever it completes up, in order.
    /// A duplicate (an MPDU already handed up or held: the same packet) changes nothing.
    pub fn receive(&mut self, seq: u64, pkt: PacketRef, window: u32, up: &mut VecDeque<PacketRef>) {
        if seq < self.rx_next {
            return;
        }
        if seq == self.rx_next {
            up.push_back(pkt);
            self.rx_next += 1;
            self.release(up);
            return;
        }
        if self.rx_buf.is_empty() {
            self.rx_buf = vec![None; window as usize];
        }
        let n = self.rx_buf.len() as u64;
        let slot = &mut self.rx_buf[(seq % n) as usize];
        if slot.is_none() {
            *slot = Some(pkt);
            self.rx_held += 1;
        }
    }

    /// The transmitter has discarded MPDUs (and tells the receiver so, as a Block Ack Request
    /// does): the receiver hands up what it holds in order, skipping the discarded ones.
    pub fn sync_receiver(&mut self, up: &mut VecDeque<PacketRef>) {
        self.release(up);
    }

    /// An MPDU the transmitter has settled without its reaching the receiver (acknowledged
    /// MPDUs were received): it was discarded at the retry limit.
    fn discarded(&self, seq: u64) -> bool {
        seq < self.win_start || (seq < self.next_seq && !self.is_outstanding(seq))
    }

    fn take_slot(&mut self, seq: u64, up: &mut VecDeque<PacketRef>) -> bool {
        if self.rx_held == 0 {
            return false;
        }
        let n = self.rx_buf.len() as u64;
        match self.rx_buf[(seq % n) as usize].take() {
            Some(p) => {
                self.rx_held -= 1;
                up.push_back(p);
                true
            }
            None => false,
        }
    }

    /// Hand up the held MPDUs that follow `rx_next` in order, stepping over the ones the
    /// transmitter discarded, up to the first one still missing.
    fn release(&mut self, up: &mut VecDeque<PacketRef>) {
        while self.take_slot(self.rx_next, up) || self.discarded(self.rx_next) {
            self.rx_next += 1;
        }
    }

    /// Oldest unsettled sequence number.
    pub fn window_start(&self) -> u64 {
        self.win_start
    }

    /// Next sequence number to be assigned.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Kind, Packets};
    use crate::net::qdisc::testutil::Held;

    fn pkt(seq: u64) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 0, 1500, 0);
        p.seq = seq;
        p
    }

    fn session() -> Session {
        Session::new(TxqSpec::Pfifo { limit: 100 }.build(Standard::Ht, 0))
    }

    /// Packets of seq 0..n, stored, and a reference to each (the reference of seq i is
    /// `refs[i]`).
    fn stored(n: u64) -> (Packets, Vec<PacketRef>) {
        let mut pkts = Packets::new();
        let refs = (0..n).map(|i| pkts.insert(pkt(i))).collect();
        (pkts, refs)
    }

    fn number(s: &mut Session, n: u64) -> Vec<Mpdu> {
        let (pkts, refs) = stored(n);
        refs.iter().map(|&r| s.number(r, &pkts[r])).collect()
    }

    fn seqs(pkts: &Packets, up: &VecDeque<PacketRef>) -> Vec<u64> {
        up.iter().map(|&r| pkts[r].seq).collect()
    }

    #[test]
    fn window_starts_at_the_oldest_unsettled_mpdu() {
        let mut s = session();
        let m = number(&mut s, 4);
        assert_eq!(
            m.iter().map(|m| m.seq).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        // Window of 4: full.
        assert!(!s.window_open(4));
        // 1 and 2 acknowledged, 0 missing: the window does not move.
        s.settle(1);
        s.settle(2);
        assert_eq!(s.window_start(), 0);
        assert!(!s.window_open(4));
        // 0 settles: the start jumps past 1 and 2 to 3; 4, 5, 6 may now be sent.
        s.settle(0);
        assert_eq!(s.window_start(), 3);
        assert!(s.window_open(4));
        s.settle(3);
        assert_eq!(s.window_start(), 4);
        assert_eq!(s.next_seq(), 4);
    }

    #[test]
    fn retries_stay_in_sequence_order() {
        let mut s = session();
        let m = number(&mut s, 6);
        s.requeue(m[4]);
        s.requeue(m[1]);
        s.requeue(m[3]);
        let order: Vec<u64> = s.retry.iter().map(|m| m.seq).collect();
        assert_eq!(order, vec![1, 3, 4]);
    }

    #[test]
    fn receiver_reorders_and_follows_the_transmitters_window() {
        let mut s = session();
        number(&mut s, 6);
        let (pkts, r) = stored(6);
        let mut up = VecDeque::new();
        // 0 arrives: handed up. 2, 3 arrive after a gap at 1: held.
        s.receive(0, r[0], 8, &mut up);
        s.receive(2, r[2], 8, &mut up);
        s.receive(3, r[3], 8, &mut up);
        assert_eq!(seqs(&pkts, &up), vec![0]);
        // 1 arrives: 1, 2, 3 go up.
        s.receive(1, r[1], 8, &mut up);
        assert_eq!(seqs(&pkts, &up), vec![0, 1, 2, 3]);
        // 5 arrives after a gap at 4; then the transmitter discards 4.
        up.clear();
        s.receive(5, r[5], 8, &mut up);
        assert!(up.is_empty());
        for seq in [0, 1, 2, 3, 5] {
            s.settle(seq);
        }
        s.settle(4);
        s.sync_receiver(&mut up);
        assert_eq!(seqs(&pkts, &up), vec![5]);
        // A duplicate of something already handed up changes nothing.
        s.receive(5, r[5], 8, &mut up);
        assert_eq!(up.len(), 1);
    }

    /// The transmitter discards MPDU 2 at the retry limit while MPDU 1, before it, is still
    /// being retried: the receiver cannot skip 2 yet, but once 1 arrives it hands up 1 and
    /// then 3, stepping over 2 (the Block Ack Request told it 2 will not come).
    #[test]
    fn receiver_steps_over_an_mpdu_discarded_behind_a_missing_one() {
        let mut s = session();
        number(&mut s, 4);
        let (pkts, r) = stored(4);
        let mut up = VecDeque::new();
        s.receive(0, r[0], 8, &mut up);
        s.receive(3, r[3], 8, &mut up);
        s.settle(0);
        s.settle(3);
        s.settle(2); // discarded
        s.sync_receiver(&mut up);
        assert_eq!(seqs(&pkts, &up), vec![0], "1 is still missing");
        s.receive(1, r[1], 8, &mut up);
        assert_eq!(seqs(&pkts, &up), vec![0, 1, 3]);
        s.settle(1);
        assert_eq!(s.window_start(), 4);
        // Nothing is left held: the next MPDU goes straight up.
        let m = s.number(r[0], &pkts[r[0]]);
        s.receive(m.seq, r[0], 8, &mut up);
        assert_eq!(up.len(), 4);
    }

    #[test]
    fn txq_specs_validate_and_parse_from_names() {
        assert_eq!(TxqSpec::default().validate(), Ok(()));
        let bad = TxqSpec::FqCodel {
            target: Dur(200 * NSEC_PER_MSEC),
            interval: interval(),
            ecn: true,
            flows: 4096,
            quantum: quantum(),
            limit: 10,
            memory_limit: None,
        };
        assert_eq!(
            bad.validate().unwrap_err(),
            "txq.target = \"200000000ns\": expected less than txq.interval = \"100000000ns\""
        );
        assert_eq!(
            TxqSpec::Pfifo { limit: 0 }.validate().unwrap_err(),
            "txq.limit = 0: expected at least 1 packet"
        );
        let t: TxqSpec = serde_json::from_str(r#"{"kind": "pfifo", "limit": 64}"#).unwrap();
        assert_eq!(t, TxqSpec::Pfifo { limit: 64 });
        let e = serde_json::from_str::<TxqSpec>(r#"{"kind": "fq_codel", "targt": "5ms"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `targt`"), "{e}");
    }

    #[test]
    fn fq_codel_txq_has_mac80211_limits() {
        // 8192 packets, then one packet dropped per arrival from the fattest flow.
        let spec = TxqSpec::default();
        let mut q = Held::new(spec.build(Standard::Vht, 0));
        for i in 0..8193 {
            q.enqueue(pkt(i), 0);
        }
        assert_eq!((q.len(), q.dropped.len()), (8192, 1));
        assert_eq!(q.dropped[0].seq, 0);
        // HT: 4 MB memory limit. Packets of truesize 2 KB: 2048 fit, the next pushes one out.
        let mut q = Held::new(spec.build(Standard::Ht, 0));
        for i in 0..2049 {
            let mut p = pkt(i);
            p.truesize = 2048;
            q.enqueue(p, 0);
        }
        assert_eq!((q.len(), q.dropped.len()), (2048, 1));
    }
}
