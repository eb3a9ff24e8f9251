//! The side table that carries packets' bytes while their wificc-core [`Packet`] descriptors
//! cross the link models.
//!
//! Queues and delay lines move small fixed-size descriptors by value; the bytes of the real
//! datagram stay here, in a slot whose index the descriptor carries in `Packet::seq` (its TCP
//! segment-number role has no use in the emulator, which never looks inside TCP). A slot is
//! taken when a datagram is read from a TUN device and given back when the datagram is written
//! to its destination or dropped by a queue. Freed slots are reused last-in first-out and keep
//! their buffers, so once the table has grown to the largest number of packets in flight,
//! forwarding allocates nothing.

use wificc_core::net::packet::Packet;

#[derive(Debug, Default)]
pub struct Slots {
    bufs: Vec<Vec<u8>>,
    free: Vec<u32>,
}

impl Slots {
    /// Store a copy of `bytes`; returns the slot.
    pub fn insert(&mut self, bytes: &[u8]) -> u64 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.bufs.push(Vec::new());
                (self.bufs.len() - 1) as u32
            }
        };
        let buf = &mut self.bufs[slot as usize];
        buf.clear();
        buf.extend_from_slice(bytes);
        slot as u64
    }

    /// The bytes of the packet `pkt` describes.
    pub fn bytes(&self, pkt: &Packet) -> &[u8] {
        &self.bufs[pkt.seq as usize]
    }

    /// The same, to modify (a CE mark).
    pub fn bytes_mut(&mut self, pkt: &Packet) -> &mut [u8] {
        &mut self.bufs[pkt.seq as usize]
    }

    /// Give `pkt`'s slot back.
    pub fn release(&mut self, pkt: &Packet) {
        self.free.push(pkt.seq as u32);
    }

    /// Slots holding a packet.
    pub fn in_use(&self) -> usize {
        self.bufs.len() - self.free.len()
    }

    /// Slots ever created: the most packets held at once.
    pub fn capacity(&self) -> usize {
        self.bufs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wificc_core::net::packet::Kind;

    fn desc(slot: u64) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 0, 0, 0);
        p.seq = slot;
        p
    }

    #[test]
    fn slots_hold_bytes_and_are_reused() {
        let mut s = Slots::default();
        let a = s.insert(b"first");
        let b = s.insert(b"second");
        assert_eq!((a, b), (0, 1));
        assert_eq!(s.bytes(&desc(a)), b"first");
        assert_eq!(s.bytes(&desc(b)), b"second");
        s.bytes_mut(&desc(b))[0] = b'S';
        assert_eq!(s.bytes(&desc(b)), b"Second");
        s.release(&desc(a));
        assert_eq!(s.in_use(), 1);
        // The freed slot 0 is taken again, its buffer overwritten with the new length.
        let c = s.insert(b"3");
        assert_eq!(c, 0);
        assert_eq!(s.bytes(&desc(c)), b"3");
        assert_eq!((s.in_use(), s.capacity()), (2, 2));
    }
}
