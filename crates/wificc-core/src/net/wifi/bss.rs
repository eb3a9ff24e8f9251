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

use super::driver::{Aggregation, Driver, Wake};
use super::edca::{Ac, Backoff, DscpMap, EdcaParams, ACS};
use super::phy::{
    ack_time, block_ack_time, subframe_bytes, subframe_pad, Phy, Standard, DELIMITER_BYTES, SIFS,
};
use super::txq::{Mpdu, Session, TxqSpec};
use super::{ApEdca, MacMode, NodeStats, WifiOut, WifiSpec, WifiStats};
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
    /// Most MPDUs per A-MPDU (the driver's limit; u32::MAX: none).
    max_subframes: u32,
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
        max_subframes: u32,
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
            max_subframes: if max_subframes == 0 {
                u32::MAX
            } else {
                max_subframes
            },
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
                && (agg.mpdus.len() as u32) < self.max_subframes
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
    /// Packets in this EDCAF's TXQs, held in front of them, in the firmware's ring, or
    /// waiting for retransmission.
    backlog: usize,
    /// Host aggregation: aggregates that have left the air whose TX status the host has not
    /// processed yet; they still hold their hardware-queue slots.
    unreported: usize,
    /// Packets in this EDCAF's TXQs (part of `backlog`).
    in_txq: usize,
}

/// A TX status posted by the hardware, waiting for the host's interrupt.
#[derive(Debug, Clone, Copy)]
struct Status {
    posted: Nanos,
    /// EDCAF whose aggregate it reports.
    ei: u32,
    /// MPDUs it settles (acknowledged or dropped): firmware ring entries it frees.
    frames: u32,
    /// Items of `Node::tx_items` it carries.
    items: u32,
    /// It reports an aggregate that left the hardware queue (host aggregation: frees a slot).
    slot: bool,
}

/// A settled MPDU as its TX status reports it: the completion to report, when the packet
/// reached the radio, and whether it was acknowledged.
type TxItem = (Option<(u32, u32)>, Nanos, bool);

/// Per node: what the host has not yet been told, and the firmware ring's occupancy.
#[derive(Debug, Default)]
struct Node {
    /// TX statuses posted and not yet taken by an interrupt.
    tx: VecDeque<Status>,
    tx_items: VecDeque<TxItem>,
    /// Received frames posted and not yet taken by an interrupt: (posted, count).
    rx: VecDeque<(Nanos, u32)>,
    rx_items: VecDeque<PacketRef>,
    /// Firmware aggregation: frames handed to the firmware and not yet completed.
    in_fw: u32,
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
    /// The framing of the default link (the chipset's MCS); the mode and responses of all.
    framing: Framing,
    /// Per station: the framing of that station's transmissions (index 0: the default).
    links: Vec<Framing>,
    /// Per station: the framing of the AP's transmissions to it (the AP's driver's limits).
    ap_links: Vec<Framing>,
    /// The stations' driver and the access point's.
    driver: Driver,
    ap_driver: Driver,
    /// Neither TX status nor reception is moderated: everything reaches the host at once.
    immediate: bool,
    /// The hosts' DSCP to access category mapping.
    dscp_map: DscpMap,
    /// Per node.
    node: Vec<Node>,
    /// TX items of the aggregate being settled (reused).
    staged: Vec<TxItem>,
    /// TX statuses and receptions posted and not yet handed to the host, all nodes.
    pending: usize,
    /// The next interrupt, once computed since the pending postings last changed.
    next_irq: Option<Option<Nanos>>,
    txq_spec: TxqSpec,
    /// The access point's (node 0's) TXQ discipline.
    ap_txq_spec: TxqSpec,
    /// Hardware-queue depth of the AP and of the stations.
    depth: [usize; 2],
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
        if spec.station_mcs.len() > stations as usize {
            return Err(format!(
                "station_mcs: {} entries for {stations} station(s): expected at most one per \
                 station",
                spec.station_mcs.len()
            ));
        }
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
        let driver = spec.driver()?;
        let ap_driver = spec.ap_driver()?;
        let ap_edca = spec.ap_edca;
        let depth = |d: &Driver| match d.aggregation {
            Aggregation::Host => d.hw_queue_depth as usize,
            Aggregation::Firmware => 1,
        };
        let (sta_depth, ap_depth) = (depth(&driver), depth(&ap_driver));
        let edcafs = (0..nodes)
            .flat_map(|node| {
                Ac::ALL.into_iter().map(move |ac| Edcaf {
                    node,
                    backoff: Backoff::with(
                        ac,
                        match (node, ap_edca) {
                            (0, ApEdca::Hostapd) => EdcaParams::hostapd_ap(ac),
                            _ => EdcaParams::station(ac),
                        },
                    ),
                    ready_at: 0,
                    hw: VecDeque::with_capacity(sta_depth.max(ap_depth)),
                    spare: Vec::with_capacity(sta_depth.max(ap_depth)),
                    sessions: (0..nodes).map(|_| None).collect(),
                    rr: 0,
                    backlog: 0,
                    unreported: 0,
                    in_txq: 0,
                })
            })
            .collect();
        let txq_seed = ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64;
        let framing = |phy: Phy, d: &Driver| {
            Framing::new(
                phy,
                mode,
                spec.max_ampdu_len
                    .map_or(phy.standard.max_ampdu_len(), |s| s.0),
                spec.airtime_cap.0,
                window,
                spec.aggregate_vo.unwrap_or(spec.chipset.aggregates_vo()),
                d.max_subframes,
            )
        };
        let phy = spec.link_phy(0)?;
        let links = (0..nodes)
            .map(|sta| spec.link_phy(sta).map(|p| framing(p, &driver)))
            .collect::<Result<Vec<_>, _>>()?;
        let ap_links = (0..nodes)
            .map(|sta| spec.link_phy(sta).map(|p| framing(p, &ap_driver)))
            .collect::<Result<Vec<_>, _>>()?;
        let quiet = |d: &Driver| d.tx_status.is_immediate() && d.rx.is_immediate();
        Ok(Bss {
            framing: framing(phy, &driver),
            links,
            ap_links,
            driver,
            ap_driver,
            immediate: quiet(&driver) && quiet(&ap_driver),
            dscp_map: DscpMap::Rfc8325,
            node: (0..nodes).map(|_| Node::default()).collect(),
            staged: Vec::new(),
            pending: 0,
            next_irq: None,
            txq_spec: spec.txq.clone(),
            ap_txq_spec: spec.ap_txq.clone().unwrap_or_else(|| spec.txq.clone()),
            depth: [ap_depth, sta_depth],
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

    /// The driver the stations run.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The driver node `node` runs (node 0: the access point).
    pub fn driver_of(&self, node: usize) -> &Driver {
        if node == 0 {
            &self.ap_driver
        } else {
            &self.driver
        }
    }

    /// The kernel's DSCP mapping (default: the newest kernels', RFC 8325).
    pub fn set_dscp_map(&mut self, map: DscpMap) {
        self.dscp_map = map;
    }

    /// Node `node`'s driver aggregates in firmware.
    fn firmware(&self, node: usize) -> bool {
        self.driver_of(node).aggregation == Aggregation::Firmware
    }

    /// EDCAF `ei` may build another aggregate now.
    fn has_room(&self, ei: usize) -> bool {
        let e = &self.edcafs[ei];
        e.hw.len() + e.unreported < self.depth[(e.node != 0) as usize]
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
            self.dscp_map.ac(out.pkts[pkt].dscp)
        } else {
            Ac::Be
        };
        let ei = from as usize * ACS + ac as usize;
        let (to, nodes) = (to as usize, self.nodes);
        let (standard, txq_seed) = (self.framing.phy.standard, self.txq_seed);
        let e = &mut self.edcafs[ei];
        let spec = if from == 0 {
            &self.ap_txq_spec
        } else {
            &self.txq_spec
        };
        let session = e.sessions[to].get_or_insert_with(|| {
            let seed = stream_seed(txq_seed, (ei * nodes + to) as u64);
            Box::new(Session::new(spec.build(standard, seed)))
        });
        let before = out.pkts.dropped().len();
        session.txq.enqueue(pkt, out.pkts, now);
        e.backlog += 1;
        e.in_txq += 1;
        e.in_txq -= txq_drops(&mut e.backlog, &mut self.stats[from as usize], out, before);
        let from = from as usize;
        let wanted = if self.driver_of(from).wake == Wake::PerFrame {
            // The driver runs now, for this frame alone (ath9k: `drv_wake_tx_queue` ->
            // `ath_txq_schedule`, synchronously); the medium needs a look if it built.
            self.schedule(ei, now, out)
        } else if self.firmware(from) {
            self.node[from].in_fw < self.driver_of(from).ring || self.edcafs[ei].hw.is_empty()
        } else {
            self.has_room(ei)
        };
        if wanted {
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
        let medium = match self.medium {
            Medium::Busy {
                ppdu_end,
                received: false,
                ..
            } => Some(ppdu_end),
            Medium::Busy { end, .. } => Some(end),
            Medium::Idle { since } => self.next_access(since),
        };
        let irq = if self.immediate {
            None
        } else {
            self.next_irq()
        };
        let next = match (medium, irq) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
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
        if self.pending > 0 && self.next_irq().is_some_and(|t| t <= now) {
            self.interrupts(now, out);
        }
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
            // With nothing queued there is nothing to hand over or build.
            if self.edcafs[ei].backlog > 0 {
                self.schedule(ei, now, out);
            }
        }
    }

    /// The driver's scheduling of EDCAF `ei`: host aggregation builds aggregates while the
    /// hardware queue has room; firmware aggregation hands frames to the ring while it has
    /// room, and the firmware readies an aggregate to contend with when it has none.
    /// True if it readied an aggregate.
    fn schedule(&mut self, ei: usize, now: Nanos, out: &mut WifiOut) -> bool {
        if self.firmware(self.edcafs[ei].node) {
            self.fill_ring(ei, now, out);
            return self.edcafs[ei].hw.is_empty()
                && self.edcafs[ei].backlog > 0
                && self.build(ei, now, out);
        }
        let mut built = false;
        while self.has_room(ei) && self.edcafs[ei].backlog > 0 && self.build(ei, now, out) {
            built = true;
        }
        built
    }

    /// Firmware aggregation: move frames of EDCAF `ei` from its TXQs (destinations in turn)
    /// into the firmware's ring while the node's ring has room.
    fn fill_ring(&mut self, ei: usize, now: Nanos, out: &mut WifiOut) {
        let ring = self.driver_of(self.edcafs[ei].node).ring;
        let (nodes, record) = (self.nodes, now >= self.record_from);
        let e = &mut self.edcafs[ei];
        let node = &mut self.node[e.node];
        if e.in_txq == 0 || node.in_fw >= ring {
            return;
        }
        let stats = &mut self.stats[e.node];
        let mut d = e.rr;
        for _ in 0..nodes {
            if let Some(s) = e.sessions[d].as_deref_mut() {
                while node.in_fw < ring {
                    let got = dequeue(s, &mut e.backlog, &mut e.in_txq, stats, out, now, record);
                    let Some(p) = got else {
                        break;
                    };
                    s.fw.push_back(p);
                    node.in_fw += 1;
                }
            }
            if e.in_txq == 0 {
                return;
            }
            d = if d + 1 == nodes { 0 } else { d + 1 };
        }
    }

    /// Firmware aggregation: the head aggregate of EDCAF `ei`, about to be sent, takes
    /// whatever else of its destination fits (a retransmitted one too).
    fn top_up(&mut self, ei: usize, out: &mut WifiOut) {
        let window = self.window;
        let e = &mut self.edcafs[ei];
        let Some(agg) = e.hw.front_mut() else {
            return;
        };
        let framing = *link_framing(&self.links, &self.ap_links, e.node, agg.dest);
        let Some(s) = e.sessions[agg.dest].as_deref_mut() else {
            return;
        };
        let n = agg.mpdus.len();
        take_from_ring(
            agg,
            s,
            &mut e.backlog,
            window,
            &framing,
            e.backoff.ac,
            out.pkts,
        );
        if agg.mpdus.len() != n {
            agg.airtime = framing.airtime(agg, e.backoff.ac, out.pkts);
        }
    }

    /// Build one aggregate for EDCAF `ei` from the next destination with something to send;
    /// false if none has.
    fn build(&mut self, ei: usize, now: Nanos, out: &mut WifiOut) -> bool {
        let (window, nodes) = (self.window, self.nodes);
        let firmware = self.firmware(self.edcafs[ei].node);
        let busy = matches!(self.medium, Medium::Busy { .. });
        let record = now >= self.record_from;
        let e = &mut self.edcafs[ei];
        let stats = &mut self.stats[e.node];
        let Some(dest) = (0..nodes).map(|i| (e.rr + i) % nodes).find(|&d| {
            e.sessions[d]
                .as_ref()
                .is_some_and(|s| s.has_work(window, firmware))
        }) else {
            return false;
        };
        e.rr = (dest + 1) % nodes;
        let framing = link_framing(&self.links, &self.ap_links, e.node, dest);
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
        if firmware {
            take_from_ring(
                &mut agg,
                s,
                &mut e.backlog,
                window,
                framing,
                e.backoff.ac,
                out.pkts,
            );
        }
        while !firmware && s.window_open(window) {
            let pkt = match s.held.take() {
                Some(p) => p,
                None => {
                    let got = dequeue(s, &mut e.backlog, &mut e.in_txq, stats, out, now, record);
                    let Some(p) = got else {
                        break;
                    };
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
                        self.fail_head(ei, t, out);
                    }
                }
            }
        }
        if self.tx.is_empty() {
            return;
        }
        // A firmware completes the A-MPDU as it wins the medium, from everything of the
        // destination it holds.
        for i in 0..self.tx.len() {
            if self.firmware(self.edcafs[self.tx[i]].node) {
                self.top_up(self.tx[i], out);
            }
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
                stats.mcs.record(
                    link_framing(&self.links, &self.ap_links, e.node, head.dest)
                        .phy
                        .mcs as u64,
                );
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
            let rx_irq = if agg.dest == 0 {
                self.ap_driver.rx
            } else {
                self.driver.rx
            };
            let dest = &mut self.node[agg.dest];
            let up = if rx_irq.is_immediate() {
                &mut *out.delivered
            } else {
                &mut dest.rx_items
            };
            let before = up.len();
            if let Some(s) = e.sessions[agg.dest].as_deref_mut() {
                for m in agg.mpdus.iter_mut() {
                    m.ok = !self.rng.chance(self.error_rate);
                    if m.ok {
                        acked = true;
                        s.receive(m.seq, m.pkt, self.window, up);
                    }
                }
            }
            let n = (up.len() - before) as u32;
            if !rx_irq.is_immediate() && n > 0 {
                dest.rx.push_back((ppdu_end + rx_irq.delay.0, n));
                self.pending += 1;
                self.next_irq = None;
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
                self.complete_head(ei, end, out);
            } else {
                self.fail_head(ei, end, out);
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

    /// A Block Ack arrived at `end` for EDCAF `ei`'s head aggregate: the acknowledged MPDUs
    /// are settled, the others queued for retransmission or dropped at the retry limit; the
    /// hardware posts the aggregate's TX status.
    fn complete_head(&mut self, ei: usize, end: Nanos, out: &mut WifiOut) {
        let limit = self.retry_limit;
        let e = &mut self.edcafs[ei];
        let stats = &mut self.stats[e.node];
        let Some(mut agg) = e.hw.pop_front() else {
            return;
        };
        let mut staged = std::mem::take(&mut self.staged);
        if let Some(s) = e.sessions[agg.dest].as_deref_mut() {
            let mut discarded = false;
            for m in agg.mpdus.iter_mut() {
                if m.ok {
                    s.settle(m.seq);
                    staged.push((m.tsq, m.queued, true));
                    stats.mpdus_acked += 1;
                    stats.bytes_acked += m.size as Bytes;
                    continue;
                }
                if count_failure(m, limit, s, stats, out.pkts) {
                    staged.push((m.tsq, m.queued, false));
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
        self.staged = staged;
        self.post_status(ei, end, true, out);
        self.draw_backoff(ei);
    }

    /// EDCAF `ei`'s head aggregate got no Block Ack at `t` (collision, internal collision, or
    /// every MPDU lost): each MPDU counts a failure; those past the retry limit are dropped
    /// (and reported in a TX status), the rest stay in the aggregate for the next attempt with
    /// a doubled contention window.
    fn fail_head(&mut self, ei: usize, t: Nanos, out: &mut WifiOut) {
        let limit = self.retry_limit;
        let e = &mut self.edcafs[ei];
        let stats = &mut self.stats[e.node];
        let Some(agg) = e.hw.front_mut() else {
            return;
        };
        let framing = *link_framing(&self.links, &self.ap_links, e.node, agg.dest);
        let Some(s) = e.sessions[agg.dest].as_deref_mut() else {
            return;
        };
        let mut discarded = false;
        let mut i = 0;
        while i < agg.mpdus.len() {
            let m = &mut agg.mpdus[i];
            if count_failure(m, limit, s, stats, out.pkts) {
                self.staged.push((m.tsq, m.queued, false));
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
        let emptied = agg.mpdus.is_empty();
        if emptied {
            if let Some(mut empty) = e.hw.pop_front() {
                empty.clear();
                e.spare.push(empty);
            }
            e.backoff.reset();
        } else {
            e.backoff.fail();
        }
        if discarded {
            self.post_status(ei, t, emptied, out);
        }
        self.draw_backoff(ei);
    }

    /// The hardware posts, at `t` plus the driver's delay, the TX status of the MPDUs of EDCAF
    /// `ei` staged in `self.staged`; `slot`: it reports an aggregate that left the hardware
    /// queue. Without TX-status moderation the host takes it at once.
    fn post_status(&mut self, ei: usize, t: Nanos, slot: bool, out: &mut WifiOut) {
        let node = self.edcafs[ei].node;
        let record = t >= self.record_from;
        let firmware = self.firmware(node);
        let irq = self.driver_of(node).tx_status;
        if irq.is_immediate() {
            let stats = &mut self.stats[node];
            stats.tx_interrupts += 1;
            for &(tsq, queued, acked) in &self.staged {
                out.completed.extend(tsq);
                if acked && record {
                    stats.tx_completion.record(t - queued);
                }
            }
            if firmware {
                self.node[node].in_fw -= self.staged.len() as u32;
            }
            self.staged.clear();
            return;
        }
        let slot = slot && !firmware;
        let n = &mut self.node[node];
        let items = self.staged.len() as u32;
        n.tx_items.extend(self.staged.drain(..));
        n.tx.push_back(Status {
            posted: t + irq.delay.0,
            ei: ei as u32,
            frames: items,
            items,
            slot,
        });
        self.pending += 1;
        self.next_irq = None;
        if slot {
            self.edcafs[ei].unreported += 1;
        }
    }

    /// The next interrupt of any node (cached until the postings change).
    fn next_irq(&mut self) -> Option<Nanos> {
        if self.pending == 0 {
            return None;
        }
        if let Some(t) = self.next_irq {
            return t;
        }
        let t = self.next_interrupt();
        self.next_irq = Some(t);
        t
    }

    /// The next interrupt of any node: a TX status or received frames handed to the host.
    fn next_interrupt(&self) -> Option<Nanos> {
        self.node
            .iter()
            .enumerate()
            .flat_map(|(i, n)| {
                let d = self.driver_of(i);
                [
                    d.tx_status.fire(n.tx.iter().map(|s| s.posted)).map(|f| f.0),
                    d.rx.fire(n.rx.iter().map(|r| r.0)).map(|f| f.0),
                ]
            })
            .flatten()
            .min()
    }

    /// Every interrupt due by `now`: TX statuses complete their packets (and free hardware
    /// queue slots or firmware ring entries), received frames go up the stack.
    fn interrupts(&mut self, now: Nanos, out: &mut WifiOut) {
        self.next_irq = None;
        for node in 0..self.nodes {
            let d = *self.driver_of(node);
            let (tx, rx, firmware) = (d.tx_status, d.rx, d.aggregation == Aggregation::Firmware);
            while let Some((fire, k)) = tx.fire(self.node[node].tx.iter().map(|s| s.posted)) {
                if fire > now {
                    break;
                }
                let record = fire >= self.record_from;
                self.stats[node].tx_interrupts += 1;
                for _ in 0..k {
                    let Some(st) = self.node[node].tx.pop_front() else {
                        break;
                    };
                    self.pending -= 1;
                    let n = &mut self.node[node];
                    for _ in 0..st.items {
                        let Some((tsq, queued, acked)) = n.tx_items.pop_front() else {
                            break;
                        };
                        out.completed.extend(tsq);
                        if acked && record {
                            self.stats[node].tx_completion.record(fire - queued);
                        }
                    }
                    if firmware {
                        n.in_fw -= st.frames;
                    }
                    if st.slot {
                        self.edcafs[st.ei as usize].unreported -= 1;
                    }
                }
            }
            while let Some((fire, k)) = rx.fire(self.node[node].rx.iter().map(|r| r.0)) {
                if fire > now {
                    break;
                }
                let n = &mut self.node[node];
                for _ in 0..k {
                    let Some((_, count)) = n.rx.pop_front() else {
                        break;
                    };
                    self.pending -= 1;
                    for _ in 0..count {
                        if let Some(p) = n.rx_items.pop_front() {
                            out.delivered.push_back(p);
                        }
                    }
                }
            }
        }
    }
}

/// The framing of a transmission from `node` to `dest`: the station's link, with the limits of
/// the transmitter's driver.
fn link_framing<'a>(
    links: &'a [Framing],
    ap_links: &'a [Framing],
    node: usize,
    dest: usize,
) -> &'a Framing {
    if node == 0 {
        &ap_links[dest]
    } else {
        &links[node]
    }
}

/// Firmware aggregation: move packets of session `s` from the firmware's ring into `agg`,
/// numbering them, while they fit and the Block Ack window allows.
fn take_from_ring(
    agg: &mut Aggregate,
    s: &mut Session,
    backlog: &mut usize,
    window: u32,
    framing: &Framing,
    ac: Ac,
    pkts: &mut Packets,
) {
    while s.window_open(window) {
        let Some(&pkt) = s.fw.front() else {
            break;
        };
        if !framing.fits(agg, pkts[pkt].size, ac) {
            break;
        }
        s.fw.pop_front();
        let p = &mut pkts[pkt];
        p.hop += 1;
        agg.push(s.number(pkt, p));
        *backlog -= 1;
    }
}

/// MPDU `m` failed once more: count it, and past the retry limit drop it (settling its
/// sequence number). True if it was dropped; its TX status is for the caller to post.
fn count_failure(
    m: &mut Mpdu,
    limit: u32,
    s: &mut Session,
    stats: &mut NodeStats,
    pkts: &mut Packets,
) -> bool {
    m.retries = m.retries.saturating_add(1);
    stats.mpdu_retries += 1;
    if m.retries <= limit {
        return false;
    }
    s.settle(m.seq);
    stats.retry_drops += 1;
    pkts.drop_packet(m.pkt);
    true
}

/// The driver takes the next packet from session `s`'s TXQ: account what the TXQ dropped on
/// the way (AQM) and record the packet's sojourn.
fn dequeue(
    s: &mut Session,
    backlog: &mut usize,
    in_txq: &mut usize,
    stats: &mut NodeStats,
    out: &mut WifiOut,
    now: Nanos,
    record: bool,
) -> Option<PacketRef> {
    if s.txq.is_empty() {
        // Drivers dequeue until NULL: the empty dequeue updates the qdisc's state (fq_codel
        // unlists its flows) but drops nothing.
        return s.txq.dequeue(out.pkts, now);
    }
    let before = out.pkts.dropped().len();
    let got = s.txq.dequeue(out.pkts, now);
    *in_txq -= txq_drops(backlog, stats, out, before);
    let p = got?;
    *in_txq -= 1;
    if record {
        stats.txq_sojourn.record(now - out.pkts[p].enqueued);
    }
    Some(p)
}

/// Account the packets a TXQ dropped: those listed in `out.pkts.dropped()[before..]`.
/// Returns how many.
fn txq_drops(
    backlog: &mut usize,
    stats: &mut NodeStats,
    out: &mut WifiOut,
    before: usize,
) -> usize {
    let dropped = &out.pkts.dropped()[before..];
    *backlog -= dropped.len();
    stats.txq_drops += dropped.len() as u64;
    for &p in dropped {
        out.completed.extend(out.pkts[p].tsq_charge());
    }
    dropped.len()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
