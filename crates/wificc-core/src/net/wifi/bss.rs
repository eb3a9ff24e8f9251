//! The BSS: nodes, their EDCAFs and hardware queues, and the medium they share (the model is
//! described in the parent module).
//!
//! The medium is either idle since some instant, or busy with one exchange: a PPDU (or several
//! colliding ones) and the SIFS + Block Ack after it. While it is idle, the next transmission
//! starts at the earliest instant an EDCAF with an aggregate may transmit: for EDCA, AIFS plus
//! the remaining backoff slots after the idle start, or the instant the aggregate was queued if
//! that is later; for the analytic MAC, at once. Every EDCAF that may transmit at that instant
//! does (a collision when they belong to different nodes), and every other one freezes its
//! backoff. The exchange then has two instants: the end of the PPDU, when the receiver gets the
//! MPDUs that arrived intact, and the end of the Block Ack, when the transmitter learns their
//! fate and the medium is idle again.

use std::collections::VecDeque;

use super::edca::{Ac, Backoff, ACS};
use super::phy::{
    ack_time, block_ack_time, subframe_bytes, subframe_pad, Phy, Standard, DELIMITER_BYTES, SIFS,
};
use super::txq::{Mpdu, Session, TxqSpec};
use super::{MacMode, NodeStats, WifiOut, WifiSpec, WifiStats};
use crate::net::packet::{Kind, PacketRef, Packets};
use crate::net::qdisc::Qdisc;
use crate::sim::{stream_seed, Rng, Timer};
use crate::units::{bytes_in, tx_time, BitsPerSec, Bytes, Nanos};

/// One A-MPDU in a hardware queue.
#[derive(Debug, Default)]
struct Aggregate {
    dest: usize,
    mpdus: Vec<Mpdu>,
    /// IP bytes of its MPDUs.
    ip_bytes: Bytes,
    /// A-MPDU bytes with every subframe padded.
    padded: Bytes,
    /// Padding of the last subframe (not sent).
    last_pad: Bytes,
    /// PPDU duration.
    airtime: Nanos,
}

impl Aggregate {
    fn psdu(&self) -> Bytes {
        self.padded - self.last_pad
    }

    /// Empty it for reuse, keeping its capacity.
    fn clear(&mut self) {
        self.mpdus.clear();
        self.ip_bytes = 0;
        self.padded = 0;
        self.last_pad = 0;
        self.airtime = 0;
    }

    /// Add a subframe carrying a datagram of `size` bytes to the byte counts.
    fn count(&mut self, size: u32) {
        let sub = subframe_bytes(size);
        let pad = subframe_pad(sub);
        self.ip_bytes += size as Bytes;
        self.padded += sub + pad;
        self.last_pad = pad;
    }

    fn push(&mut self, m: Mpdu) {
        self.count(m.size);
        self.mpdus.push(m);
    }

    /// Recount the sizes after MPDUs were removed.
    fn recount(&mut self) {
        (self.ip_bytes, self.padded, self.last_pad) = (0, 0, 0);
        for i in 0..self.mpdus.len() {
            self.count(self.mpdus[i].size);
        }
    }
}

/// How PPDU durations are computed, and what bounds an aggregate.
#[derive(Debug, Clone, Copy)]
struct Framing {
    phy: Phy,
    mode: Mode,
    /// Largest PSDU per access category: the A-MPDU length limit, and for EDCA the longest PSDU
    /// whose PPDU fits the airtime cap and, with SIFS and the Block Ack, the AC's TXOP limit.
    max_psdu: [Bytes; ACS],
    /// Analytic MAC: most IP bytes whose (k l + l_oh) 8 / r fits the airtime cap.
    max_ip: Bytes,
    /// Per access category: whether its frames go in A-MPDUs (every one but VO by default);
    /// a frame that does not goes alone and gets a normal Ack.
    aggregates: [bool; ACS],
    /// Per access category: SIFS and the response to a PPDU (Block Ack, or Ack for a frame
    /// outside an A-MPDU); 0 for the analytic MAC.
    response: [Nanos; ACS],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Edca,
    Analytic {
        t_oh: Nanos,
        l_oh: Bytes,
        rate: BitsPerSec,
    },
}

/// The largest x in [0, hi] with `ok(x)`, for `ok` true up to some point and false after it;
/// 0 if `ok(0)` is false.
fn largest(hi: Bytes, ok: impl Fn(Bytes) -> bool) -> Bytes {
    let (mut lo, mut hi) = (0, hi);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

impl Framing {
    /// Resolve the limits once: both PPDU durations grow with the bytes they carry, so the
    /// airtime cap is a byte limit.
    fn new(
        phy: Phy,
        mode: Mode,
        max_len: Bytes,
        airtime_cap: Nanos,
        window: u32,
        aggregate_vo: bool,
    ) -> Self {
        let aggregates = Ac::ALL.map(|ac| ac != Ac::Vo || aggregate_vo);
        let response = match mode {
            Mode::Edca => Ac::ALL.map(|ac| {
                SIFS + if aggregates[ac as usize] {
                    block_ack_time(window)
                } else {
                    ack_time()
                }
            }),
            Mode::Analytic { .. } => [0; ACS],
        };
        let (max_psdu, max_ip) = match mode {
            Mode::Edca => (
                Ac::ALL.map(|ac| {
                    let cap = match ac.txop_limit() {
                        0 => airtime_cap,
                        txop => airtime_cap.min(txop.saturating_sub(response[ac as usize])),
                    };
                    largest(max_len, |psdu| phy.ppdu_time(psdu) <= cap)
                }),
                Bytes::MAX,
            ),
            Mode::Analytic { l_oh, rate, .. } => (
                [max_len; ACS],
                largest(bytes_in(rate, airtime_cap), |ip| {
                    tx_time(ip + l_oh, rate) <= airtime_cap
                }),
            ),
        };
        Framing {
            phy,
            mode,
            max_psdu,
            max_ip,
            aggregates,
            response,
        }
    }

    /// PPDU duration: preamble and symbols (EDCA), or TxTw = (k l + l_oh) 8 / r + t_oh.
    ///
    /// In the analytic model t_oh is the whole per-exchange overhead of a data transmission,
    /// the reverse direction's TCP ACKs included (the Wi-Fi 6 study's TxTw counts nothing
    /// else), so an aggregate of pure TCP ACKs costs no airtime there.
    /// An HT frame outside an A-MPDU has no MPDU delimiter (VHT and HE send a single MPDU as
    /// an A-MPDU of one).
    fn airtime(&self, agg: &Aggregate, ac: Ac, pkts: &Packets) -> Nanos {
        match self.mode {
            Mode::Edca if !self.aggregates[ac as usize] && self.phy.standard == Standard::Ht => {
                self.phy.ppdu_time(agg.psdu() - DELIMITER_BYTES as Bytes)
            }
            Mode::Edca => self.phy.ppdu_time(agg.psdu()),
            Mode::Analytic { .. } if agg.mpdus.iter().all(|m| pkts[m.pkt].kind() == Kind::Ack) => 0,
            Mode::Analytic { t_oh, l_oh, rate } => tx_time(agg.ip_bytes + l_oh, rate) + t_oh,
        }
    }

    /// A datagram of `size` bytes fits in `agg` of access category `ac` (an empty aggregate
    /// takes anything; one of a category that does not aggregate, nothing more).
    fn fits(&self, agg: &Aggregate, size: u32, ac: Ac) -> bool {
        agg.mpdus.is_empty()
            || (self.aggregates[ac as usize]
                && agg.padded + subframe_bytes(size) <= self.max_psdu[ac as usize]
                && agg.ip_bytes + size as Bytes <= self.max_ip)
    }
}

/// One EDCA function: an access category of a node, its queues and its hardware queue.
#[derive(Debug)]
struct Edcaf {
    node: usize,
    backoff: Backoff,
    /// When the head aggregate became ready to contend.
    ready_at: Nanos,
    hw: VecDeque<Aggregate>,
    /// Emptied aggregates, reused.
    spare: Vec<Aggregate>,
    /// Per destination node.
    sessions: Vec<Option<Box<Session>>>,
    /// Destination to look at first when building (round robin).
    rr: usize,
    /// Packets in this EDCAF's TXQs, held in front of them, or waiting for retransmission.
    backlog: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Medium {
    Idle {
        since: Nanos,
    },
    Busy {
        ppdu_end: Nanos,
        end: Nanos,
        /// The PPDU end has been processed.
        received: bool,
        /// A Block Ack answers the PPDU.
        acked: bool,
    },
}

/// A Wi-Fi BSS.
#[derive(Debug)]
pub struct Bss {
    framing: Framing,
    txq_spec: TxqSpec,
    depth: usize,
    window: u32,
    error_rate: f64,
    retry_limit: u32,
    wmm: bool,
    nodes: usize,
    /// EDCAF of (node, access category) at `node * ACS + ac`.
    edcafs: Vec<Edcaf>,
    stats: Vec<NodeStats>,
    medium: Medium,
    /// EDCAFs transmitting in the current exchange.
    tx: Vec<usize>,
    timer: Timer,
    rng: Rng,
    txq_seed: u64,
    record_from: Nanos,
    /// Analytic MAC: EDCAF served first among equals next time.
    rr: usize,
}

impl Bss {
    /// Node 0 is the AP, nodes 1..=stations are stations; one collision domain.
    pub fn new(spec: &WifiSpec, stations: u16, mut rng: Rng) -> Result<Bss, String> {
        spec.validate()?;
        if stations == 0 || stations == u16::MAX {
            return Err(format!(
                "stations = {stations}: expected 1 to {} stations",
                u16::MAX - 1
            ));
        }
        let phy = spec.phy()?;
        let window = spec.ba_window.unwrap_or(phy.standard.ba_window());
        let mode = match spec.mac {
            MacMode::Edca => Mode::Edca,
            MacMode::Analytic { t_oh, l_oh, rate } => Mode::Analytic {
                t_oh: t_oh.0,
                l_oh: l_oh.0,
                rate: rate.map_or(phy.rate(), |r| r.0),
            },
        };
        let nodes = stations as usize + 1;
        let depth = spec.hw_queue_depth as usize;
        let edcafs = (0..nodes)
            .flat_map(|node| {
                Ac::ALL.into_iter().map(move |ac| Edcaf {
                    node,
                    backoff: Backoff::new(ac),
                    ready_at: 0,
                    hw: VecDeque::with_capacity(depth),
                    spare: Vec::with_capacity(depth),
                    sessions: (0..nodes).map(|_| None).collect(),
                    rr: 0,
                    backlog: 0,
                })
            })
            .collect();
        let txq_seed = ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64;
        Ok(Bss {
            framing: Framing::new(
                phy,
                mode,
                spec.max_ampdu_len
                    .map_or(phy.standard.max_ampdu_len(), |s| s.0),
                spec.airtime_cap.0,
                window,
                spec.aggregate_vo.unwrap_or(spec.chipset.aggregates_vo()),
            ),
            txq_spec: spec.txq.clone(),
            depth,
            window,
            error_rate: spec.mpdu_error_rate,
            retry_limit: spec.retry_limit,
            wmm: spec.wmm,
            nodes,
            edcafs,
            stats: vec![NodeStats::default(); nodes],
            medium: Medium::Idle { since: 0 },
            tx: Vec::with_capacity(nodes),
            timer: Timer::default(),
            rng,
            txq_seed,
            record_from: 0,
            rr: 0,
        })
    }

    /// The PHY every node uses.
    pub fn phy(&self) -> &Phy {
        &self.framing.phy
    }

    /// Record histograms (A-MPDU sizes, TXQ sojourn) only from `t` on (the warm-up).
    pub fn set_record_from(&mut self, t: Nanos) {
        self.record_from = t;
    }

    /// Packets node `node` has queued below the hardware queue (TXQs and retransmissions).
    pub fn backlog(&self, node: u16) -> usize {
        let first = node as usize * ACS;
        self.edcafs[first..first + ACS]
            .iter()
            .map(|e| e.backlog)
            .sum()
    }

    pub fn stats(&self) -> WifiStats {
        WifiStats {
            nodes: self.stats.clone(),
        }
    }

    /// `pkt` (an IP packet; its `size` is the IP datagram) enters node `from`'s TXQ towards
    /// node `to` (access category from `pkt.dscp`); both are nodes of this BSS. Returns Some(t)
    /// when the BSS needs a wake-up at t earlier than any it asked for before.
    pub fn accept(
        &mut self,
        pkt: PacketRef,
        from: u16,
        to: u16,
        now: Nanos,
        out: &mut WifiOut,
    ) -> Option<Nanos> {
        let ac = if self.wmm {
            Ac::from_dscp(out.pkts[pkt].dscp)
        } else {
            Ac::Be
        };
        let ei = from as usize * ACS + ac as usize;
        let (to, nodes) = (to as usize, self.nodes);
        let (standard, txq_seed) = (self.framing.phy.standard, self.txq_seed);
        let e = &mut self.edcafs[ei];
        let spec = &self.txq_spec;
        let session = e.sessions[to].get_or_insert_with(|| {
            let seed = stream_seed(txq_seed, (ei * nodes + to) as u64);
            Box::new(Session::new(spec.build(standard, seed)))
        });
        let before = out.pkts.dropped().len();
        session.txq.enqueue(pkt, out.pkts, now);
        e.backlog += 1;
        txq_drops(&mut e.backlog, &mut self.stats[from as usize], out, before);
        if self.edcafs[ei].hw.len() < self.depth {
            self.timer.arm(now)
        } else {
            None
        }
    }

    /// A wake-up at `now`. Progress the MAC; return the next wake-up time, if any.
    pub fn wake(&mut self, now: Nanos, out: &mut WifiOut) -> Option<Nanos> {
        let (expired, reschedule) = self.timer.fire(now);
        if !expired {
            return reschedule;
        }
        self.run(now, out);
        let next = match self.medium {
            Medium::Busy {
                ppdu_end,
                received: false,
                ..
            } => Some(ppdu_end),
            Medium::Busy { end, .. } => Some(end),
            Medium::Idle { since } => self.next_access(since),
        };
        match next {
            Some(t) => self.timer.arm(t),
            None => {
                self.timer.cancel();
                None
            }
        }
    }

    /// Everything that happens at `now`, in order, until nothing more does.
    fn run(&mut self, now: Nanos, out: &mut WifiOut) {
        loop {
            match self.medium {
                Medium::Busy {
                    ppdu_end,
                    received: false,
                    ..
                } if ppdu_end <= now => self.end_ppdu(out),
                Medium::Busy { end, .. } if end <= now => self.end_exchange(end, out),
                Medium::Busy { .. } => {
                    self.build_all(now, out);
                    return;
                }
                Medium::Idle { since } => {
                    self.build_all(now, out);
                    match self.next_access(since) {
                        Some(t) if t <= now => self.start(now, since, out),
                        _ => return,
                    }
                }
            }
        }
    }

    /// When EDCAF `e` may transmit its head aggregate, the medium idle since `since`.
    fn access_time(&self, e: &Edcaf, since: Nanos) -> Nanos {
        match self.framing.mode {
            Mode::Edca => e.ready_at.max(e.backoff.expiry(since)),
            Mode::Analytic { .. } => e.ready_at.max(since),
        }
    }

    fn next_access(&self, since: Nanos) -> Option<Nanos> {
        self.edcafs
            .iter()
            .filter(|e| !e.hw.is_empty())
            .map(|e| self.access_time(e, since))
            .min()
    }

    /// Fill every hardware queue that has room from its TXQs.
    fn build_all(&mut self, now: Nanos, out: &mut WifiOut) {
        for ei in 0..self.edcafs.len() {
            while self.edcafs[ei].hw.len() < self.depth
                && self.edcafs[ei].backlog > 0
                && self.build(ei, now, out)
            {}
        }
    }

    /// Build one aggregate for EDCAF `ei` from the next destination with something to send;
    /// false if none has.
    fn build(&mut self, ei: usize, now: Nanos, out: &mut WifiOut) -> bool {
        let (window, framing, nodes) = (self.window, self.framing, self.nodes);
        let busy = matches!(self.medium, Medium::Busy { .. });
        let record = now >= self.record_from;
        let e = &mut self.edcafs[ei];
        let stats = &mut self.stats[e.node];
        let Some(dest) = (0..nodes)
            .map(|i| (e.rr + i) % nodes)
            .find(|&d| e.sessions[d].as_ref().is_some_and(|s| s.has_work(window)))
        else {
            return false;
        };
        e.rr = (dest + 1) % nodes;
        let Some(s) = e.sessions[dest].as_deref_mut() else {
            return false;
        };
        let mut agg = e.spare.pop().unwrap_or_default();
        agg.dest = dest;
        while let Some(m) = s.retry.front() {
            if !framing.fits(&agg, m.size, e.backoff.ac) {
                break;
            }
            agg.push(*m);
            s.retry.pop_front();
            e.backlog -= 1;
        }
        while s.window_open(window) {
            let pkt = match s.held.take() {
                Some(p) => p,
                None => {
                    let before = out.pkts.dropped().len();
                    let got = s.txq.dequeue(out.pkts, now);
                    txq_drops(&mut e.backlog, stats, out, before);
                    let Some(p) = got else { break };
                    if record {
                        stats.txq_sojourn.record(now - out.pkts[p].enqueued);
                    }
                    p
                }
            };
            let size = out.pkts[pkt].size;
            if !framing.fits(&agg, size, e.backoff.ac) {
                s.held = Some(pkt);
                break;
            }
            let p = &mut out.pkts[pkt];
            p.hop += 1;
            agg.push(s.number(pkt, p));
            e.backlog -= 1;
        }
        if agg.mpdus.is_empty() {
            agg.clear();
            e.spare.push(agg);
            return false;
        }
        agg.airtime = framing.airtime(&agg, e.backoff.ac, out.pkts);
        if e.hw.is_empty() {
            e.ready_at = now;
            if busy && framing.mode == Mode::Edca && e.backoff.slots == 0 {
                e.backoff.slots = self.rng.range_u64(0, e.backoff.cw as u64) as u32;
            }
        }
        e.hw.push_back(agg);
        true
    }

    /// Start the exchange at `t`, the medium idle since `since`.
    fn start(&mut self, t: Nanos, since: Nanos, out: &mut WifiOut) {
        self.tx.clear();
        match self.framing.mode {
            Mode::Analytic { .. } => {
                let n = self.edcafs.len();
                let winner = (0..n)
                    .map(|i| (self.rr + i) % n)
                    .filter(|&ei| !self.edcafs[ei].hw.is_empty())
                    .min_by_key(|&ei| self.edcafs[ei].ready_at);
                if let Some(ei) = winner {
                    self.tx.push(ei);
                    self.rr = (ei + 1) % n;
                }
            }
            Mode::Edca => {
                // Per node, the highest access category that may transmit now wins; the others
                // that may are internal collisions.
                let mut losers = [usize::MAX; ACS];
                for node in 0..self.nodes {
                    let mut nl = 0;
                    let mut winner = None;
                    for ac in (0..ACS).rev() {
                        let ei = node * ACS + ac;
                        let e = &self.edcafs[ei];
                        if e.hw.is_empty() || self.access_time(e, since) > t {
                            continue;
                        }
                        if winner.is_none() {
                            winner = Some(ei);
                        } else {
                            losers[nl] = ei;
                            nl += 1;
                        }
                    }
                    if let Some(w) = winner {
                        self.tx.push(w);
                    }
                    for e in &mut self.edcafs[node * ACS..(node + 1) * ACS] {
                        e.backoff.freeze(since, t);
                    }
                    for &ei in &losers[..nl] {
                        self.stats[node].collisions += 1;
                        self.fail_head(ei, out);
                    }
                }
            }
        }
        if self.tx.is_empty() {
            return;
        }
        let (mut longest, mut response) = (0, 0);
        for &ei in &self.tx {
            let e = &mut self.edcafs[ei];
            e.backoff.slots = 0;
            let head = &e.hw[0];
            let ac_response = self.framing.response[e.backoff.ac as usize];
            longest = longest.max(head.airtime);
            response = response.max(ac_response);
            let stats = &mut self.stats[e.node];
            stats.ppdus += 1;
            stats.airtime += head.airtime + ac_response;
            if t >= self.record_from {
                stats.ampdu_size.record(head.mpdus.len() as u64);
            }
            if self.tx.len() > 1 {
                stats.collisions += 1;
            }
        }
        let ppdu_end = t + longest;
        self.medium = Medium::Busy {
            ppdu_end,
            end: ppdu_end + response,
            received: false,
            acked: false,
        };
    }

    /// The PPDU ends: if it was alone on the air, its receiver takes the intact MPDUs.
    fn end_ppdu(&mut self, out: &mut WifiOut) {
        let Medium::Busy {
            ppdu_end,
            end,
            received: false,
            ..
        } = self.medium
        else {
            return;
        };
        let mut acked = false;
        if let [ei] = self.tx[..] {
            let e = &mut self.edcafs[ei];
            let agg = &mut e.hw[0];
            if let Some(s) = e.sessions[agg.dest].as_deref_mut() {
                for m in agg.mpdus.iter_mut() {
                    m.ok = !self.rng.chance(self.error_rate);
                    if m.ok {
                        acked = true;
                        s.receive(m.seq, m.pkt, self.window, out.delivered);
                    }
                }
            }
        }
        self.medium = Medium::Busy {
            ppdu_end,
            end,
            received: true,
            acked,
        };
    }

    /// The exchange ends at `end`: transmitters learn the outcome; the medium turns idle.
    fn end_exchange(&mut self, end: Nanos, out: &mut WifiOut) {
        let acked = matches!(self.medium, Medium::Busy { acked: true, .. });
        for i in 0..self.tx.len() {
            let ei = self.tx[i];
            if acked {
                self.complete_head(ei, out);
            } else {
                self.fail_head(ei, out);
            }
            let e = &mut self.edcafs[ei];
            if !e.hw.is_empty() {
                e.ready_at = end;
            }
        }
        self.tx.clear();
        self.medium = Medium::Idle { since: end };
    }

    /// A new backoff for EDCAF `ei` from its current window (EDCA only).
    fn draw_backoff(&mut self, ei: usize) {
        if self.framing.mode == Mode::Edca {
            let e = &mut self.edcafs[ei];
            e.backoff.slots = self.rng.range_u64(0, e.backoff.cw as u64) as u32;
        }
    }

    /// A Block Ack arrived for EDCAF `ei`'s head aggregate: complete the acknowledged MPDUs,
    /// queue the others for retransmission or drop them at the retry limit.
    fn complete_head(&mut self, ei: usize, out: &mut WifiOut) {
        let limit = self.retry_limit;
        let e = &mut self.edcafs[ei];
        let stats = &mut self.stats[e.node];
        let Some(mut agg) = e.hw.pop_front() else {
            return;
        };
        if let Some(s) = e.sessions[agg.dest].as_deref_mut() {
            let mut discarded = false;
            for m in agg.mpdus.iter_mut() {
                if m.ok {
                    s.settle(m.seq);
                    out.completed.extend(m.tsq);
                    stats.mpdus_acked += 1;
                    stats.bytes_acked += m.size as Bytes;
                    continue;
                }
                if count_failure(m, limit, s, stats, out) {
                    discarded = true;
                } else {
                    s.requeue(*m);
                    e.backlog += 1;
                }
            }
            if discarded {
                s.sync_receiver(out.delivered);
            }
        }
        agg.clear();
        e.spare.push(agg);
        e.backoff.reset();
        self.draw_backoff(ei);
    }

    /// EDCAF `ei`'s head aggregate got no Block Ack (collision, internal collision, or every
    /// MPDU lost): each MPDU counts a failure; those past the retry limit are dropped, the rest
    /// stay in the aggregate for the next attempt with a doubled contention window.
    fn fail_head(&mut self, ei: usize, out: &mut WifiOut) {
        let (limit, framing) = (self.retry_limit, self.framing);
        let e = &mut self.edcafs[ei];
        let stats = &mut self.stats[e.node];
        let Some(agg) = e.hw.front_mut() else {
            return;
        };
        let Some(s) = e.sessions[agg.dest].as_deref_mut() else {
            return;
        };
        let mut discarded = false;
        let mut i = 0;
        while i < agg.mpdus.len() {
            if count_failure(&mut agg.mpdus[i], limit, s, stats, out) {
                agg.mpdus.remove(i);
                discarded = true;
            } else {
                i += 1;
            }
        }
        if discarded {
            s.sync_receiver(out.delivered);
            agg.recount();
            agg.airtime = framing.airtime(agg, e.backoff.ac, out.pkts);
        }
        if agg.mpdus.is_empty() {
            if let Some(mut empty) = e.hw.pop_front() {
                empty.clear();
                e.spare.push(empty);
            }
            e.backoff.reset();
        } else {
            e.backoff.fail();
        }
        self.draw_backoff(ei);
    }
}

/// MPDU `m` failed once more: count it, and past the retry limit drop it (settling its
/// sequence number and reporting its completion). True if it was dropped.
fn count_failure(
    m: &mut Mpdu,
    limit: u32,
    s: &mut Session,
    stats: &mut NodeStats,
    out: &mut WifiOut,
) -> bool {
    m.retries = m.retries.saturating_add(1);
    stats.mpdu_retries += 1;
    if m.retries <= limit {
        return false;
    }
    s.settle(m.seq);
    stats.retry_drops += 1;
    out.completed.extend(m.tsq);
    out.pkts.drop_packet(m.pkt);
    true
}

/// Account the packets a TXQ dropped: those listed in `out.pkts.dropped()[before..]`.
fn txq_drops(backlog: &mut usize, stats: &mut NodeStats, out: &mut WifiOut, before: usize) {
    let dropped = &out.pkts.dropped()[before..];
    *backlog -= dropped.len();
    stats.txq_drops += dropped.len() as u64;
    for &p in dropped {
        out.completed.extend(out.pkts[p].tsq_charge());
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
