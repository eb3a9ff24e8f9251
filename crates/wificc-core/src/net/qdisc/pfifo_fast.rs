//! pfifo_fast, Linux's default qdisc: three FIFO bands served in strict priority.
//!
//! Each packet gets a Linux priority from its TOS byte and a band from its priority, as in
//! Linux: `rt_tos2priority(tos) = ip_tos2prio[(tos & IPTOS_TOS_MASK) >> 1]`
//! (include/net/route.h, table in net/ipv4/route.c) sets `skb->priority` for sockets that set
//! `IP_TOS` and for forwarded packets (`ip_forward`), and pfifo_fast maps it through
//! `prio2band` (net/sched/sch_generic.c). Dequeue always takes from the lowest-numbered
//! non-empty band, so band 0 starves bands 1 and 2 while it has packets.
//!
//! The TOS mask 0x1E looks at the RFC 1349 TOS bits, which under DiffServ are the low three
//! bits of the DSCP plus the first ECN bit. The mapping therefore ignores the DSCP class bits:
//! EF (46), CS1 (8), CS5 (40) and best effort (0) all land in band 1 with ordinary traffic,
//! while DSCP 4 (the old "low delay" TOS 0x10) goes to band 0 and the AF classes x1 (AF11 = 10,
//! ...) to band 2. Since the ECN bit maps to the same priority as its even neighbour in the
//! current table (`ECN_OR_COST(x)` equals `x`), only the DSCP decides.
//!
//! The packet limit (the device's `txqueuelen`, 1000 by default) bounds the three bands
//! together, as the classic pfifo_fast did (`qdisc->q.qlen < txqueuelen`). Since Linux 4.16
//! the lockless pfifo_fast gives each band its own ring of `txqueuelen`; the two agree
//! whenever one band holds the backlog, the common case.

use super::{PacketQueue, Qdisc, QdiscStats};
use crate::net::packet::{Packet, PacketRef, Packets};
use crate::units::{Bytes, Nanos};

/// Number of bands.
pub const PFIFO_FAST_BANDS: usize = 3;

/// Linux `ip_tos2prio` (net/ipv4/route.c), indexed by `(tos & 0x1E) >> 1`: TC_PRIO_BESTEFFORT
/// (0), TC_PRIO_BULK (2), TC_PRIO_INTERACTIVE (6), TC_PRIO_INTERACTIVE_BULK (4).
pub const IP_TOS2PRIO: [u8; 16] = [0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4];

/// Linux `prio2band` (net/sched/sch_generic.c), indexed by priority 0..=15.
pub const PRIO2BAND: [u8; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

/// `IPTOS_TOS_MASK` (include/uapi/linux/ip.h).
const IPTOS_TOS_MASK: u8 = 0x1E;

/// Linux priority of a packet with DiffServ codepoint `dscp` (TOS byte `dscp << 2`).
pub fn tos2priority(dscp: u8) -> u8 {
    let tos = dscp << 2;
    IP_TOS2PRIO[((tos & IPTOS_TOS_MASK) >> 1) as usize]
}

/// pfifo_fast band (0 = served first) of a packet with DiffServ codepoint `dscp`.
pub fn band_of(dscp: u8) -> usize {
    PRIO2BAND[tos2priority(dscp) as usize] as usize
}

/// The three-band priority FIFO.
#[derive(Debug, Clone)]
pub struct PfifoFast {
    bands: [PacketQueue; PFIFO_FAST_BANDS],
    /// Packets in all bands together.
    len: usize,
    limit: u32,
    stats: QdiscStats,
}

impl PfifoFast {
    /// `limit` packets across the three bands.
    pub fn new(limit: u32) -> Self {
        PfifoFast {
            bands: Default::default(),
            len: 0,
            limit,
            stats: QdiscStats::default(),
        }
    }
}

impl Qdisc for PfifoFast {
    fn enqueue(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        self.stats.enqueued += 1;
        if self.len < self.limit as usize {
            self.len += 1;
            self.bands[band_of(pkts[pkt].dscp)].push_stamped(pkt, pkts, now);
        } else {
            self.stats.dropped += 1;
            pkts.drop_packet(pkt);
        }
    }

    fn dequeue(&mut self, pkts: &mut Packets, _now: Nanos) -> Option<PacketRef> {
        let pkt = self.bands.iter_mut().find_map(|b| b.pop(pkts))?;
        self.len -= 1;
        self.stats.dequeued += 1;
        Some(pkt)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn bypass(&mut self, _pkt: &Packet) -> bool {
        if self.len != 0 || self.limit == 0 {
            return false;
        }
        self.stats.enqueued += 1;
        self.stats.dequeued += 1;
        true
    }

    fn bytes(&self) -> Bytes {
        self.bands.iter().map(PacketQueue::bytes).sum()
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_conserved, pkt, seqs, Held};
    use super::*;

    const EF: u8 = 46;
    const CS1: u8 = 8;
    const CS5: u8 = 40;
    const BE: u8 = 0;
    const LOWDELAY: u8 = 4;
    const AF11: u8 = 10;

    #[test]
    fn dscp_to_band_follows_the_linux_tables() {
        // EF = 0b101110: tos 0xB8, & 0x1E = 0x18, index 12 -> prio 4 (interactive bulk) -> band 1.
        assert_eq!((tos2priority(EF), band_of(EF)), (4, 1));
        // CS1 = 0b001000: tos 0x20, & 0x1E = 0, index 0 -> prio 0 -> band 1.
        assert_eq!((tos2priority(CS1), band_of(CS1)), (0, 1));
        assert_eq!(band_of(CS5), 1);
        assert_eq!((tos2priority(BE), band_of(BE)), (0, 1));
        // DSCP 4: tos 0x10, index 8 -> prio 6 (interactive) -> band 0.
        assert_eq!((tos2priority(LOWDELAY), band_of(LOWDELAY)), (6, 0));
        // AF11 = 0b001010: tos 0x28, & 0x1E = 0x08, index 4 -> prio 2 (bulk) -> band 2.
        assert_eq!((tos2priority(AF11), band_of(AF11)), (2, 2));
    }

    #[test]
    fn ef_cs1_and_be_share_band_one_in_arrival_order() {
        let mut q = Held::new(PfifoFast::new(1000));
        for (s, dscp) in [CS1, EF, BE, EF].into_iter().enumerate() {
            let mut p = pkt(0, 1500, s as u64, 0);
            p.dscp = dscp;
            q.enqueue(p, 0);
        }
        let out: Vec<u64> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.seq).collect();
        assert_eq!(out, vec![0, 1, 2, 3]);
    }

    #[test]
    fn strict_priority_between_bands() {
        // Arrivals: seq 0 band 2, seq 1 band 1, seq 2 band 0, seq 3 band 1, seq 4 band 0.
        // Service: band 0 (2, 4), then band 1 (1, 3), then band 2 (0).
        let mut q = Held::new(PfifoFast::new(1000));
        for (s, dscp) in [AF11, BE, LOWDELAY, EF, LOWDELAY].into_iter().enumerate() {
            let mut p = pkt(0, 1000, s as u64, 0);
            p.dscp = dscp;
            q.enqueue(p, 0);
        }
        let out: Vec<u64> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.seq).collect();
        assert_eq!(out, vec![2, 4, 1, 3, 0]);
        assert!(q.is_empty());
        assert_conserved(&q);
    }

    #[test]
    fn limit_bounds_all_bands_together() {
        // Limit 2: a band-2 and a band-1 packet fill it; a band-0 arrival is refused.
        let mut q = Held::new(PfifoFast::new(2));
        for (s, dscp) in [AF11, BE, LOWDELAY].into_iter().enumerate() {
            let mut p = pkt(0, 1500, s as u64, 0);
            p.dscp = dscp;
            q.enqueue(p, 0);
        }
        assert_eq!(seqs(&q.dropped), vec![2]);
        assert_eq!((q.len(), q.bytes()), (2, 3000));
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 3,
                dequeued: 0,
                dropped: 1,
                ecn_marked: 0
            }
        );
        assert_conserved(&q);
    }
}
