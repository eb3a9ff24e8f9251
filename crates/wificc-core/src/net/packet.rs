//! Packets as they cross links and queues.
//!
//! One [`Packet`] is one IP datagram on the wire (an MSS-sized TCP segment, an ACK, a ping).
//! TCP sequence numbers count whole segments, not bytes: every data segment but possibly the last
//! of a finite transfer carries one MSS, so a segment index is the natural key of the sender's
//! scoreboard (see `tcp::sender`). Packets move by value through queues; the struct is small and
//! `Clone`, and holds no heap data, so forwarding never allocates.

use crate::units::{Bytes, Nanos};

/// IPv4 (20) + TCP (20) + timestamp option (12) bytes in front of every TCP payload.
pub const TCP_IP_HEADER: u32 = 52;
/// IPv4 (20) + ICMP echo header (8) bytes.
pub const ICMP_HEADER: u32 = 28;
/// IPv4 (20) + UDP (8) bytes.
pub const UDP_HEADER: u32 = 28;

/// ECN codepoint in the IP header (RFC 3168).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ce,
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

/// A SACK block: segments [start, end) received above the cumulative ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// The TCP header fields an ACK carries back to the sender.
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

/// One packet on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub kind: Kind,
    /// Flow (TCP connection) or ping index, per `kind`.
    pub flow: u32,
    /// Route this packet follows and the index of its next hop on it.
    pub route: u32,
    pub hop: u16,
    /// IP datagram size in bytes (headers included, L2 framing excluded).
    pub size: u32,
    /// Segment index (data) or probe number (ping).
    pub seq: u64,
    /// TCP payload bytes (data only).
    pub payload: u32,
    /// Time the sender handed the packet to the network (TSval for data).
    pub sent: Nanos,
    /// Time the packet entered the queue it is in (queueing-delay measurement).
    pub enqueued: Nanos,
    /// DiffServ codepoint (6 bits), for pfifo_fast bands and Wi-Fi access categories.
    pub dscp: u8,
    pub ecn: Ecn,
    /// Bytes charged to the sending socket's TSQ budget until TX completion (0: not tracked).
    pub truesize: u32,
    /// This segment is a retransmission.
    pub retrans: bool,
    /// TCP CWR flag: the sender reduced its window in response to ECN-Echo.
    pub cwr: bool,
    pub ack: AckInfo,
}

impl Packet {
    /// A packet of `kind` and `size` bytes on `route`, all other fields zeroed.
    pub fn new(kind: Kind, flow: u32, route: u32, size: u32, now: Nanos) -> Self {
        Packet {
            kind,
            flow,
            route,
            hop: 0,
            size,
            seq: 0,
            payload: 0,
            sent: now,
            enqueued: now,
            dscp: 0,
            ecn: Ecn::NotEct,
            truesize: 0,
            retrans: false,
            cwr: false,
            ack: AckInfo::default(),
        }
    }

    #[inline]
    pub fn bytes(&self) -> Bytes {
        self.size as Bytes
    }
}
