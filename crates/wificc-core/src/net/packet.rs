//! Packets as they cross links and queues.
//!
//! One [`Packet`] is one IP datagram on the wire (an MSS-sized TCP segment, an ACK, a ping).
//! TCP sequence numbers count whole segments, not bytes: every data segment but possibly the last
//! of a finite transfer carries one MSS, so a segment index is the natural key of the sender's
//! scoreboard (see `tcp::sender`).
//!
//! A packet is written once, into its slot of [`Packets`], when an endpoint sends it, and stays
//! there until it ends (delivered to an endpoint, or dropped); queues, links and the world pass
//! its 4-byte [`PacketRef`] along and read or update its fields in place. Forwarding neither
//! allocates nor copies packets: moving 80-byte values from queue to queue, with the
//! store-forwarding stalls of copying a packet just written, cost more than a tenth of a run.

use crate::units::{Bytes, Nanos};

/// IPv4 (20) + TCP (20) + timestamp option (12) bytes in front of every TCP payload.
pub const TCP_IP_HEADER: u32 = 52;
/// IPv4 (20) + ICMP echo header (8) bytes.
pub const ICMP_HEADER: u32 = 28;
/// IPv4 (20) + UDP (8) bytes.
pub const UDP_HEADER: u32 = 28;

/// ECN codepoint in the IP header (RFC 3168).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ce,
}

impl Ecn {
    fn from_byte(b: u8) -> Ecn {
        match b {
            1 => Ecn::Ect0,
            2 => Ecn::Ce,
            _ => Ecn::NotEct,
        }
    }
}

/// What a packet is, for the endpoint that receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A TCP data segment: `seq` is the segment index, `payload` its bytes.
    Data,
    /// A pure TCP ACK carrying [`AckInfo`].
    Ack,
    /// ICMP or UDP echo request of ping `flow`; `seq` numbers the probe.
    PingRequest,
    /// The echo reply; `sent` still holds the request's send time.
    PingReply,
}

impl Kind {
    fn from_byte(b: u8) -> Kind {
        match b {
            0 => Kind::Data,
            1 => Kind::Ack,
            2 => Kind::PingRequest,
            _ => Kind::PingReply,
        }
    }
}

/// A SACK block: segments [start, end) received above the cumulative ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// The TCP header fields an ACK carries back to the sender, decoded (see [`Packet::ack`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckInfo {
    /// Cumulative ACK: the next segment index expected.
    pub cum: u64,
    /// Up to 3 SACK blocks, most recent first (RFC 2018); `nsack` are valid.
    pub sack: [SackBlock; 3],
    pub nsack: u8,
    /// ECN-Echo flag.
    pub ece: bool,
    /// Timestamp echo reply (TSecr): the send time of the segment that triggered this ACK.
    pub tsecr: Nanos,
    /// This ACK was held back by the delayed-ACK logic (rate_sample.is_ack_delayed).
    pub delayed: bool,
}

const F_RETRANS: u8 = 1;
const F_CWR: u8 = 2;
const F_ECE: u8 = 4;
const F_DELAYED: u8 = 8;
const F_SKB_MORE: u8 = 16;

/// One packet on the wire.
///
/// Kept to 80 bytes without padding (`hop` and `nsack` are 32-bit for that), so that the slots
/// of the packets in flight stay few cache lines: fields that only ACKs use share the slots of
/// fields that only data uses (`seq` holds the cumulative ACK, `sent` the TSecr, and SACK
/// blocks are stored as 32-bit offsets from it); [`Packet::ack`] and [`Packet::set_ack`]
/// convert. The kind and the ECN codepoint are stored as plain bytes.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    kind: u8,
    ecn: u8,
    /// DiffServ codepoint (6 bits), for pfifo_fast bands and Wi-Fi access categories.
    pub dscp: u8,
    flags: u8,
    /// Index on the route of the hop the packet goes to next: the component that carries the
    /// packet across its hop (a link putting it on its wire, a BSS numbering it as an MPDU)
    /// advances it.
    pub hop: u32,
    nsack: u32,
    /// Flow (TCP connection) or ping index, per `kind`.
    pub flow: u32,
    /// Route this packet follows.
    pub route: u32,
    /// IP datagram size in bytes (headers included, L2 framing excluded).
    pub size: u32,
    /// TCP payload bytes (data only).
    pub payload: u32,
    /// Bytes charged to the sending socket's TSQ budget until TX completion (0: not tracked).
    pub truesize: u32,
    /// Segment index (data), cumulative ACK (ACK) or probe number (ping).
    pub seq: u64,
    /// Time the sender handed the packet to the network (data: TSval; ping: request time);
    /// for an ACK, the TSecr it echoes.
    pub sent: Nanos,
    /// Time the packet entered the queue it is in (queueing-delay measurement).
    pub enqueued: Nanos,
    sack: [[u32; 2]; 3],
}

impl Packet {
    /// A packet of `kind` and `size` bytes on `route`, all other fields zeroed.
    pub fn new(kind: Kind, flow: u32, route: u32, size: u32, now: Nanos) -> Self {
        Packet {
            kind: kind as u8,
            ecn: Ecn::NotEct as u8,
            dscp: 0,
            flags: 0,
            hop: 0,
            nsack: 0,
            flow,
            route,
            size,
            payload: 0,
            truesize: 0,
            seq: 0,
            sent: now,
            enqueued: now,
            sack: [[0; 2]; 3],
        }
    }

    fn flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    fn set_flag(&mut self, f: u8, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }

    /// This segment is a retransmission.
    pub fn kind(&self) -> Kind {
        Kind::from_byte(self.kind)
    }

    pub fn set_kind(&mut self, kind: Kind) {
        self.kind = kind as u8;
    }

    pub fn ecn(&self) -> Ecn {
        Ecn::from_byte(self.ecn)
    }

    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = ecn as u8;
    }

    pub fn retrans(&self) -> bool {
        self.flag(F_RETRANS)
    }

    pub fn set_retrans(&mut self, on: bool) {
        self.set_flag(F_RETRANS, on)
    }

    /// TCP CWR flag: the sender reduced its window in response to ECN-Echo.
    pub fn cwr(&self) -> bool {
        self.flag(F_CWR)
    }

    pub fn set_cwr(&mut self, on: bool) {
        self.set_flag(F_CWR, on)
    }

    /// More segments of this packet's skb follow it: a GSO skb leaves TCP as one unit, and a
    /// qdisc that gates whole skbs (a token-bucket shaper, [`crate::net::link::Shaper`]) lets
    /// the rest of it through with its first segment.
    pub fn skb_more(&self) -> bool {
        self.flag(F_SKB_MORE)
    }

    pub fn set_skb_more(&mut self, on: bool) {
        self.set_flag(F_SKB_MORE, on)
    }

    /// Decode the ACK fields.
    pub fn ack(&self) -> AckInfo {
        let mut sack = [SackBlock::default(); 3];
        for (b, rel) in sack.iter_mut().zip(&self.sack).take(self.nsack as usize) {
            *b = SackBlock {
                start: self.seq + rel[0] as u64,
                end: self.seq + rel[1] as u64,
            };
        }
        AckInfo {
            cum: self.seq,
            sack,
            nsack: self.nsack as u8,
            ece: self.flag(F_ECE),
            tsecr: self.sent,
            delayed: self.flag(F_DELAYED),
        }
    }

    /// Encode ACK fields into this packet. SACK blocks lie above the cumulative ACK and within
    /// 2^32 segments of it.
    pub fn set_ack(&mut self, info: &AckInfo) {
        self.seq = info.cum;
        self.sent = info.tsecr;
        self.nsack = info.nsack.min(3) as u32;
        for (rel, b) in self
            .sack
            .iter_mut()
            .zip(&info.sack)
            .take(self.nsack as usize)
        {
            *rel = [(b.start - info.cum) as u32, (b.end - info.cum) as u32];
        }
        self.set_flag(F_ECE, info.ece);
        self.set_flag(F_DELAYED, info.delayed);
    }

    #[inline]
    pub fn bytes(&self) -> Bytes {
        self.size as Bytes
    }

    /// (flow, truesize) that this packet's TX completion releases from its sender's TSQ
    /// budget: a data packet with a truesize charged (0 means not tracked).
    #[inline]
    pub fn tsq_charge(&self) -> Option<(u32, u32)> {
        (self.kind() == Kind::Data && self.truesize > 0).then_some((self.flow, self.truesize))
    }
}

/// A packet's place in [`Packets`]: what queues, links and the world hold and pass on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRef(u32);

/// Every packet in the network, in place: a packet is written once where its sender creates it
/// and stays in its slot until it ends (at an endpoint, or dropped), while the components it
/// crosses pass its 4-byte [`PacketRef`] from queue to queue and read or update its fields
/// here. Slots are reused last-freed first, so the slots in use stay few and cache-warm.
///
/// A packet a component drops is listed in `dropped` (still in its slot) for the owner to
/// account (a drop frees the skb, which releases the sender's TSQ charge) and then release;
/// [`Packets::drop_packet`] is the one way to drop. A device that frees an skb's TSQ charge
/// while the packet goes on (a NIC that orphans skbs as it takes them) lists the charge in
/// `released` ([`Packets::release`]), for the owner to pass on with the drops.
#[derive(Debug, Default)]
pub struct Packets {
    slots: Vec<Packet>,
    free: Vec<PacketRef>,
    dropped: Vec<PacketRef>,
    released: Vec<(u32, u32)>,
    /// Entries in `dropped` and `released` together: one test says whether either has any.
    reports: usize,
}

impl Packets {
    pub fn new() -> Self {
        Self::default()
    }

    /// Store `pkt` and return its place.
    #[inline]
    pub fn insert(&mut self, pkt: Packet) -> PacketRef {
        match self.free.pop() {
            Some(r) => {
                self.slots[r.0 as usize] = pkt;
                r
            }
            None => {
                self.slots.push(pkt);
                PacketRef(self.slots.len() as u32 - 1)
            }
        }
    }

    /// The packet's end: return it and free its slot.
    #[inline]
    pub fn remove(&mut self, r: PacketRef) -> Packet {
        self.free.push(r);
        self.slots[r.0 as usize]
    }

    /// Drop packet `r`: it stays in its slot, listed in [`Packets::dropped`].
    #[inline]
    pub fn drop_packet(&mut self, r: PacketRef) {
        self.dropped.push(r);
        self.reports += 1;
    }

    /// The packets dropped since the list was last taken.
    #[inline]
    pub fn dropped(&self) -> &[PacketRef] {
        &self.dropped
    }

    /// The TSQ charge (flow, truesize) of a packet that goes on is released now.
    #[inline]
    pub fn release(&mut self, charge: (u32, u32)) {
        self.released.push(charge);
        self.reports += 1;
    }

    /// Whether drops or released charges wait to be passed on.
    #[inline(always)]
    pub fn has_reports(&self) -> bool {
        self.reports != 0
    }

    /// Move the charges released since the list was last taken to `out`, in order.
    pub fn take_released(&mut self, out: &mut Vec<(u32, u32)>) {
        self.reports -= self.released.len();
        out.append(&mut self.released);
    }

    /// Take the dropped packets out of their slots, appending them to `out` in drop order.
    pub fn remove_dropped(&mut self, out: &mut Vec<Packet>) {
        self.reports -= self.dropped.len();
        for r in self.dropped.drain(..) {
            self.free.push(r);
            out.push(self.slots[r.0 as usize]);
        }
    }

    /// Packets in slots: in the network, or dropped and not yet removed.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl std::ops::Index<PacketRef> for Packets {
    type Output = Packet;
    #[inline]
    fn index(&self, r: PacketRef) -> &Packet {
        &self.slots[r.0 as usize]
    }
}

impl std::ops::IndexMut<PacketRef> for Packets {
    #[inline]
    fn index_mut(&mut self, r: PacketRef) -> &mut Packet {
        &mut self.slots[r.0 as usize]
    }
}

/// Where an endpoint puts the packets it sends.
pub trait PacketSink {
    fn send(&mut self, pkt: Packet);
}

/// A list of packets (tests and tools collect what an endpoint sends).
impl PacketSink for std::collections::VecDeque<Packet> {
    fn send(&mut self, pkt: Packet) {
        self.push_back(pkt);
    }
}

/// The network's sink: each packet goes into its slot and its reference onto a work queue.
pub struct Emit<'a> {
    pub pkts: &'a mut Packets,
    pub work: &'a mut std::collections::VecDeque<PacketRef>,
}

impl PacketSink for Emit<'_> {
    #[inline]
    fn send(&mut self, pkt: Packet) {
        let r = self.pkts.insert(pkt);
        self.work.push_back(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_is_80_bytes_without_padding() {
        use std::mem::size_of;
        assert_eq!(size_of::<Packet>(), 80);
        let fields = 3 * size_of::<u64>()
            + size_of::<[[u32; 2]; 3]>()
            + 7 * size_of::<u32>()
            + 4 * size_of::<u8>();
        assert_eq!(fields, 80, "every byte belongs to a field");
        assert_eq!(size_of::<Option<PacketRef>>(), 8);
    }

    #[test]
    fn slots_are_reused_last_freed_first_and_dropped_packets_stay_until_removed() {
        let mut pkts = Packets::new();
        let a = pkts.insert(Packet::new(Kind::Data, 1, 0, 1500, 0));
        let b = pkts.insert(Packet::new(Kind::Data, 2, 0, 1500, 0));
        assert_ne!(a, b);
        assert_eq!((pkts[a].flow, pkts[b].flow, pkts.live()), (1, 2, 2));
        pkts[b].hop += 1;
        assert_eq!(pkts.remove(b).hop, 1);
        assert_eq!(pkts.remove(a).flow, 1);
        assert_eq!(pkts.live(), 0);
        // The last slot freed (a's) is the first reused.
        let c = pkts.insert(Packet::new(Kind::Ack, 3, 0, 52, 0));
        assert_eq!((c, pkts[c].kind()), (a, Kind::Ack));
        // A dropped packet keeps its slot, listed, until the owner removes it.
        pkts.drop_packet(c);
        assert_eq!((pkts.dropped(), pkts.live()), (&[c][..], 1));
        let mut out = Vec::new();
        pkts.remove_dropped(&mut out);
        assert_eq!(out.iter().map(|p| p.flow).collect::<Vec<_>>(), vec![3]);
        assert_eq!((pkts.dropped().len(), pkts.live()), (0, 0));
        assert_eq!(pkts.insert(out[0]), c, "the slot is free again");
    }

    #[test]
    fn emit_stores_each_packet_and_queues_its_reference() {
        let mut pkts = Packets::new();
        let mut work = std::collections::VecDeque::new();
        let mut out = Emit {
            pkts: &mut pkts,
            work: &mut work,
        };
        for flow in [4, 5] {
            out.send(Packet::new(Kind::Data, flow, 0, 1500, 0));
        }
        let flows: Vec<u32> = work.iter().map(|&r| pkts[r].flow).collect();
        assert_eq!(flows, vec![4, 5]);
    }

    #[test]
    fn ack_fields_round_trip() {
        let info = AckInfo {
            cum: 5_000_000_000,
            sack: [
                SackBlock {
                    start: 5_000_000_010,
                    end: 5_000_000_020,
                },
                SackBlock {
                    start: 5_000_000_002,
                    end: 5_000_000_004,
                },
                SackBlock::default(),
            ],
            nsack: 2,
            ece: true,
            tsecr: 123,
            delayed: true,
        };
        let mut p = Packet::new(Kind::Ack, 1, 2, 64, 0);
        p.set_ack(&info);
        assert_eq!(p.ack(), info);
        p.set_retrans(true);
        assert!(p.retrans() && !p.cwr() && p.ack().ece);
    }
}
