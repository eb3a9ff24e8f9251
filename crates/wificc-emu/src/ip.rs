//! Reading the IPv4 header of a packet from a TUN device, and the one header change the link
//! models make: setting Congestion Experienced.
//!
//! A TUN device opened with `IFF_NO_PI` hands over bare IP datagrams. The emulator needs from
//! the header (RFC 791) the total length, the protocol, the addresses and the TOS byte, whose
//! upper six bits are the DSCP (RFC 2474: pfifo_fast bands) and lower two the ECN field
//! (RFC 3168: CoDel, PIE and step marking set CE on ECN-capable packets); from the transport
//! header the ports (TCP, UDP: the flow a fair-queueing qdisc hashes), whether a TCP segment
//! carries payload (data versus a pure ACK) and the ICMP type (echo request or reply). These
//! become a wificc-core [`Packet`] whose `seq` is the slot of the packet's bytes
//! ([`crate::slots`]).
//!
//! When a qdisc marks CE, the header's ECN bits are rewritten and the header checksum updated
//! incrementally: HC' = ~(~HC + ~m + m') (RFC 1624, equation 3), m and m' the 16-bit word
//! holding the TOS byte before and after.

use std::net::Ipv4Addr;

use wificc_core::net::packet::{Ecn, Kind, Packet};
use wificc_core::units::Nanos;

/// Smallest IPv4 header, bytes (RFC 791: IHL 5 words).
pub const IPV4_MIN_HEADER: usize = 20;
/// IP protocol numbers (IANA): ICMP, TCP, UDP.
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
/// ICMP echo reply and echo request types (RFC 792).
pub const ICMP_ECHO_REPLY: u8 = 0;
pub const ICMP_ECHO_REQUEST: u8 = 8;
/// The ECN field: the two low bits of the TOS byte (RFC 3168).
const ECN_MASK: u8 = 0b11;
const ECN_ECT1: u8 = 0b01;
const ECN_ECT0: u8 = 0b10;
const ECN_CE: u8 = 0b11;
/// Byte offset of the TOS byte and of the header checksum.
const TOS_OFFSET: usize = 1;
const CHECKSUM_OFFSET: usize = 10;

/// What the emulator reads from an IPv4 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Info {
    /// Datagram length, bytes (the header's total length).
    pub len: u32,
    pub tos: u8,
    pub proto: u8,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// Source and destination ports (TCP, UDP), or the ICMP echo identifier and 0.
    pub ports: (u16, u16),
    /// TCP payload bytes (0 for a pure ACK and for other protocols).
    pub tcp_payload: u32,
    /// TCP acknowledgment number (0 for other protocols).
    pub tcp_ack: u32,
    /// TCP sequence number (0 for other protocols).
    pub tcp_seq: u32,
    /// The TCP SYN flag.
    pub tcp_syn: bool,
    /// ICMP type, for ICMP.
    pub icmp_type: Option<u8>,
}

/// Why a datagram is not forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotForwarded {
    /// Not IPv4 (an IPv6 datagram, or garbage).
    NotIpv4,
    /// Shorter than its headers say.
    Truncated,
}

/// Parse the IPv4 header of `buf` (one datagram as read from a TUN device).
pub fn parse(buf: &[u8]) -> Result<Ipv4Info, NotForwarded> {
    if buf.len() < IPV4_MIN_HEADER || buf[0] >> 4 != 4 {
        return Err(NotForwarded::NotIpv4);
    }
    let ihl = (buf[0] & 0x0f) as usize * 4;
    let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
    if ihl < IPV4_MIN_HEADER || len < ihl || buf.len() < len {
        return Err(NotForwarded::Truncated);
    }
    let proto = buf[9];
    let l4 = &buf[ihl..len];
    let be16 = |at: usize| -> u16 { u16::from_be_bytes([l4[at], l4[at + 1]]) };
    let (mut tcp_ack, mut tcp_seq, mut tcp_syn) = (0, 0, false);
    let (ports, tcp_payload, icmp_type) = match proto {
        PROTO_TCP if l4.len() >= 20 => {
            let doff = (l4[12] >> 4) as usize * 4;
            let payload = l4.len().saturating_sub(doff) as u32;
            tcp_seq = u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]);
            tcp_syn = l4[13] & 0x02 != 0;
            tcp_ack = u32::from_be_bytes([l4[8], l4[9], l4[10], l4[11]]);
            ((be16(0), be16(2)), payload, None)
        }
        PROTO_UDP if l4.len() >= 8 => ((be16(0), be16(2)), 0, None),
        PROTO_ICMP if l4.len() >= 8 => ((be16(4), 0), 0, Some(l4[0])),
        PROTO_TCP | PROTO_UDP | PROTO_ICMP => return Err(NotForwarded::Truncated),
        _ => ((0, 0), 0, None),
    };
    Ok(Ipv4Info {
        len: len as u32,
        tos: buf[TOS_OFFSET],
        proto,
        src: Ipv4Addr::new(buf[12], buf[13], buf[14], buf[15]),
        dst: Ipv4Addr::new(buf[16], buf[17], buf[18], buf[19]),
        ports,
        tcp_payload,
        tcp_ack,
        tcp_seq,
        tcp_syn,
        icmp_type,
    })
}

impl Ipv4Info {
    /// The packet's ECN codepoint; ECT(1) is treated as ECT(0) (the link models only tell
    /// ECN-capable from not).
    pub fn ecn(&self) -> Ecn {
        match self.tos & ECN_MASK {
            ECN_ECT0 | ECN_ECT1 => Ecn::Ect0,
            ECN_CE => Ecn::Ce,
            _ => Ecn::NotEct,
        }
    }

    /// What the packet is for the link models: TCP with payload is data, TCP without is an
    /// ACK, ICMP echoes are pings; anything else travels as data.
    pub fn kind(&self) -> Kind {
        match (self.proto, self.icmp_type) {
            (PROTO_TCP, _) if self.tcp_payload == 0 => Kind::Ack,
            (PROTO_ICMP, Some(ICMP_ECHO_REQUEST)) => Kind::PingRequest,
            (PROTO_ICMP, Some(ICMP_ECHO_REPLY)) => Kind::PingReply,
            _ => Kind::Data,
        }
    }

    /// A 32-bit hash of (protocol, addresses, ports): the flow a fair-queueing qdisc sees
    /// (Linux hashes the same 5-tuple, with a random per-boot key; this one is fixed so runs
    /// are repeatable). FNV-1a over the tuple's bytes.
    pub fn flow_hash(&self) -> u32 {
        const FNV_OFFSET: u32 = 0x811c_9dc5;
        const FNV_PRIME: u32 = 0x0100_0193;
        let mut h = FNV_OFFSET;
        let bytes = [self.proto]
            .into_iter()
            .chain(self.src.octets())
            .chain(self.dst.octets())
            .chain(self.ports.0.to_be_bytes())
            .chain(self.ports.1.to_be_bytes());
        for b in bytes {
            h = (h ^ b as u32).wrapping_mul(FNV_PRIME);
        }
        h
    }

    /// The wificc-core packet for this datagram, its bytes in slot `slot`, read at `now`.
    pub fn packet(&self, slot: u64, route: u32, now: Nanos) -> Packet {
        let mut pkt = Packet::new(self.kind(), self.flow_hash(), route, self.len, now);
        pkt.set_ecn(self.ecn());
        pkt.dscp = self.tos >> 2;
        pkt.payload = self.tcp_payload;
        pkt.seq = slot;
        pkt
    }
}

/// Set the ECN field of the datagram in `buf` to CE and update the header checksum.
pub fn set_ce(buf: &mut [u8]) {
    let old = u16::from_be_bytes([buf[0], buf[TOS_OFFSET]]);
    buf[TOS_OFFSET] |= ECN_CE;
    let new = u16::from_be_bytes([buf[0], buf[TOS_OFFSET]]);
    let hc = u16::from_be_bytes([buf[CHECKSUM_OFFSET], buf[CHECKSUM_OFFSET + 1]]);
    let sum = (!hc) as u32 + (!old) as u32 + new as u32;
    let folded = (sum & 0xffff) + (sum >> 16);
    let folded = (folded & 0xffff) + (folded >> 16);
    let out = !(folded as u16);
    buf[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&out.to_be_bytes());
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The Internet checksum of a header computed from scratch (RFC 1071).
    fn checksum(header: &[u8]) -> u16 {
        let mut sum: u32 = header
            .chunks(2)
            .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    /// A TCP/IPv4 datagram from 198.18.1.1:40000 to 198.18.0.1:5201 with `payload` bytes, a
    /// 32-byte TCP header (timestamps) and TOS `tos`, with a correct header checksum.
    pub fn tcp_datagram(payload: usize, tos: u8) -> Vec<u8> {
        let len = 20 + 32 + payload;
        let mut b = vec![0u8; len];
        b[0] = 0x45;
        b[1] = tos;
        b[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        b[8] = 64;
        b[9] = PROTO_TCP;
        b[12..16].copy_from_slice(&[198, 18, 1, 1]);
        b[16..20].copy_from_slice(&[198, 18, 0, 1]);
        b[20..22].copy_from_slice(&40000u16.to_be_bytes());
        b[22..24].copy_from_slice(&5201u16.to_be_bytes());
        b[32] = 8 << 4; // data offset: 8 words = 32 bytes
        let c = checksum(&b[..20]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn tcp_data_and_ack_are_told_apart() {
        // 1448 bytes of payload behind 20 + 32 header bytes: a 1500-byte data segment.
        let data = parse(&tcp_datagram(1448, 0)).unwrap();
        assert_eq!(data.len, 1500);
        assert_eq!(data.tcp_payload, 1448);
        assert_eq!(data.kind(), Kind::Data);
        assert_eq!(data.ports, (40000, 5201));
        assert_eq!(data.src, Ipv4Addr::new(198, 18, 1, 1));
        assert_eq!(data.dst, Ipv4Addr::new(198, 18, 0, 1));
        let ack = parse(&tcp_datagram(0, 0)).unwrap();
        assert_eq!((ack.len, ack.kind()), (52, Kind::Ack));
    }

    #[test]
    fn tcp_sequence_number_and_syn_flag() {
        let mut b = tcp_datagram(0, 0);
        b[24..28].copy_from_slice(&0xdead_beefu32.to_be_bytes());
        b[33] = 0x12; // SYN + ACK
        let syn = parse(&b).unwrap();
        assert_eq!((syn.tcp_seq, syn.tcp_syn), (0xdead_beef, true));
        b[33] = 0x10; // ACK only
        assert!(!parse(&b).unwrap().tcp_syn);
    }

    #[test]
    fn tos_gives_dscp_and_ecn() {
        // TOS 0xba = DSCP 46 (EF) << 2 | ECT(0) (0b10).
        let info = parse(&tcp_datagram(100, 0xba)).unwrap();
        let pkt = info.packet(7, 3, 1000);
        assert_eq!((pkt.dscp, pkt.ecn()), (46, Ecn::Ect0));
        assert_eq!(
            (pkt.seq, pkt.route, pkt.size, pkt.payload),
            (7, 3, 152, 100)
        );
        assert_eq!(pkt.enqueued, 1000);
        assert_eq!(
            parse(&tcp_datagram(0, 0x01)).unwrap().ecn(),
            Ecn::Ect0,
            "ECT(1)"
        );
        assert_eq!(parse(&tcp_datagram(0, 0x03)).unwrap().ecn(), Ecn::Ce);
        assert_eq!(parse(&tcp_datagram(0, 0x00)).unwrap().ecn(), Ecn::NotEct);
    }

    #[test]
    fn icmp_echo_is_a_ping() {
        let mut b = vec![0u8; 28];
        b[0] = 0x45;
        b[2..4].copy_from_slice(&28u16.to_be_bytes());
        b[9] = PROTO_ICMP;
        b[20] = ICMP_ECHO_REQUEST;
        b[24..26].copy_from_slice(&0x1234u16.to_be_bytes());
        let info = parse(&b).unwrap();
        assert_eq!(info.kind(), Kind::PingRequest);
        assert_eq!(info.ports, (0x1234, 0));
        b[20] = ICMP_ECHO_REPLY;
        assert_eq!(parse(&b).unwrap().kind(), Kind::PingReply);
    }

    #[test]
    fn malformed_datagrams_are_refused() {
        let mut v6 = tcp_datagram(0, 0);
        v6[0] = 0x60;
        assert_eq!(parse(&v6), Err(NotForwarded::NotIpv4));
        assert_eq!(parse(&[0x45; 10]), Err(NotForwarded::NotIpv4));
        let full = tcp_datagram(100, 0);
        assert_eq!(parse(&full[..100]), Err(NotForwarded::Truncated));
        let mut short_tcp = tcp_datagram(0, 0);
        short_tcp[2..4].copy_from_slice(&30u16.to_be_bytes()); // 10 bytes of TCP header
        assert_eq!(parse(&short_tcp), Err(NotForwarded::Truncated));
    }

    #[test]
    fn set_ce_keeps_the_checksum_valid() {
        // For each ECN-capable TOS, the incrementally updated checksum equals the checksum
        // recomputed over the new header, and a header with a valid checksum sums to 0.
        for tos in [0x02u8, 0x01, 0xba, 0xfe] {
            let mut b = tcp_datagram(1448, tos);
            set_ce(&mut b);
            assert_eq!(b[1] & 0b11, 0b11);
            assert_eq!(b[1] >> 2, tos >> 2, "DSCP unchanged");
            let mut zeroed = b[..20].to_vec();
            zeroed[10] = 0;
            zeroed[11] = 0;
            assert_eq!(
                u16::from_be_bytes([b[10], b[11]]),
                checksum(&zeroed),
                "tos {tos:#x}"
            );
            assert_eq!(checksum(&b[..20]), 0);
        }
    }

    #[test]
    fn flow_hash_separates_directions_and_ports() {
        let a = parse(&tcp_datagram(0, 0)).unwrap();
        let mut other_port = a;
        other_port.ports.0 += 1;
        let mut reversed = a;
        std::mem::swap(&mut reversed.src, &mut reversed.dst);
        assert_eq!(a.flow_hash(), a.flow_hash());
        assert_ne!(a.flow_hash(), other_port.flow_hash());
        assert_ne!(a.flow_hash(), reversed.flow_hash());
    }
}
