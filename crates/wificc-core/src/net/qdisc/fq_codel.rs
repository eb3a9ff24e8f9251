//! FQ-CoDel, flow-queue CoDel (RFC 8290; Linux net/sched/sch_fq_codel.c).
//!
//! Packets are hashed into `flows` (1024) queues, each a FIFO with its own CoDel state. A
//! deficit round robin over two lists schedules them: a flow that becomes active joins the
//! tail of the *new* list with a deficit of one `quantum` (1514 bytes); dequeue serves the head
//! of the new list if any, else the head of the old list. A flow whose deficit is spent gets a
//! new quantum and moves to the tail of the old list; a flow that CoDel finds empty leaves the
//! lists, except that an empty flow from the new list first moves to the old list when that
//! list is non-empty, so that new flows cannot starve old ones. A flow still on a list when its
//! next packet arrives keeps its place: only flows that left the lists get the new-flow
//! priority, which is what lets sparse flows (pings, ACKs, DNS) overtake bulk ones.
//!
//! When the qdisc holds more than `limit` (10240) packets or more than `memory_limit` (32 MB)
//! of buffers, it drops from the head of the fattest flow (most bytes): up to
//! `drop_batch_size` (64) packets, stopping once half of that flow's backlog is gone, and adds
//! the number dropped to that flow's CoDel count so its control law also tightens. CoDel runs
//! per flow with the Linux parameters (target 5 ms, interval 100 ms, ECN on by default) and,
//! as in Linux, applies its one-MTU rule to the backlog of the whole qdisc.
//!
//! Classification: Linux hashes the 5-tuple with a per-boot random key (jhash). Here the key
//! is `(class << 32) | Packet::flow`, with class 0 for TCP (data and ACKs) and 1 for pings
//! (ICMP and UDP echo), so a TCP connection and a ping with the same index have different
//! keys by construction. The key is mixed with a per-qdisc seed (drawn from the run's RNG, like
//! the kernel's random key) by the SplitMix64 finaliser of [`stream_seed`], and the upper
//! 32 bits are scaled into `[0, flows)` as Linux's `reciprocal_scale`. Distinct keys can still
//! share a bucket, as in Linux. Data and ACKs of one connection share a key but travel in
//! opposite directions, so they never meet in one qdisc.
//!
//! Memory accounting charges each packet `max(truesize, size)` bytes (Linux charges
//! `skb->truesize`).

use std::collections::VecDeque;

use super::codel::{CodelParams, CodelSource, CodelStats, CodelVars};
use super::{PacketQueue, Qdisc, QdiscStats};
use crate::net::packet::{Kind, Packet, PacketRef, Packets};
use crate::sim::stream_seed;
use crate::units::{Bytes, Nanos};

/// Default number of flow queues (`fq_codel_init`, RFC 8290).
pub const FQ_CODEL_FLOWS: u32 = 1024;
/// Largest number of flow queues Linux accepts (`fq_codel_change`).
pub const FQ_CODEL_MAX_FLOWS: u32 = 65536;
/// Default DRR quantum: an Ethernet MTU with its header, 1500 + 14 bytes (`psched_mtu`).
pub const FQ_CODEL_QUANTUM: u32 = 1514;
/// Default packet limit (`sch->limit = 10*1024`).
pub const FQ_CODEL_LIMIT_PACKETS: u32 = 10240;
/// Default memory limit: 32 MB (`memory_limit = 32 << 20`).
pub const FQ_CODEL_MEMORY_LIMIT: Bytes = 32 << 20;
/// Default most packets dropped from the fattest flow per overflow (`drop_batch_size`).
pub const FQ_CODEL_DROP_BATCH: u32 = 64;

/// fq_codel parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FqCodelParams {
    pub flows: u32,
    /// DRR quantum, bytes.
    pub quantum: u32,
    /// Packet limit of the whole qdisc.
    pub limit: u32,
    /// Buffer memory limit of the whole qdisc, bytes.
    pub memory_limit: Bytes,
    pub drop_batch_size: u32,
    /// Per-flow CoDel parameters.
    pub codel: CodelParams,
}

impl FqCodelParams {
    /// Linux defaults for a device of `mtu` bytes (`fq_codel_init`): CoDel with ECN on.
    pub fn new(mtu: u32) -> Self {
        FqCodelParams {
            flows: FQ_CODEL_FLOWS,
            quantum: FQ_CODEL_QUANTUM,
            limit: FQ_CODEL_LIMIT_PACKETS,
            memory_limit: FQ_CODEL_MEMORY_LIMIT,
            drop_batch_size: FQ_CODEL_DROP_BATCH,
            codel: CodelParams {
                ecn: true,
                ..CodelParams::new(mtu)
            },
        }
    }
}

/// One flow queue (Linux `struct fq_codel_flow`).
#[derive(Debug, Clone, Default)]
struct Flow {
    q: PacketQueue,
    deficit: i64,
    cvars: CodelVars,
    /// On the new or the old list.
    listed: bool,
}

/// Buffer memory a packet is charged.
fn mem_charge(pkt: &Packet) -> Bytes {
    pkt.truesize.max(pkt.size) as Bytes
}

/// The classification key of a packet: (class << 32) | flow, class 0 TCP, 1 ping.
pub fn flow_key(pkt: &Packet) -> u64 {
    let class: u64 = match pkt.kind() {
        Kind::Data | Kind::Ack => 0,
        Kind::PingRequest | Kind::PingReply => 1,
    };
    (class << 32) | pkt.flow as u64
}

/// The CoDel packet source for one flow: pops from the flow and keeps the qdisc's totals.
struct FlowSource<'a> {
    q: &'a mut PacketQueue,
    len: &'a mut usize,
    bytes: &'a mut Bytes,
    memory: &'a mut Bytes,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self, pkts: &Packets) -> Option<PacketRef> {
        let r = self.q.pop(pkts)?;
        let pkt = &pkts[r];
        *self.len -= 1;
        *self.bytes -= pkt.bytes();
        *self.memory -= mem_charge(pkt);
        Some(r)
    }
    fn backlog(&self) -> Bytes {
        *self.bytes
    }
}

/// The fq_codel qdisc.
#[derive(Debug, Clone)]
pub struct FqCodel {
    params: FqCodelParams,
    hash_seed: u64,
    flows: Vec<Flow>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    cstats: CodelStats,
    len: usize,
    bytes: Bytes,
    memory: Bytes,
    enqueued: u64,
    dequeued: u64,
    /// Packets dropped because the packet or memory limit was exceeded.
    pub drop_overlimit: u64,
    /// Of those, packets dropped while the memory limit was exceeded.
    pub drop_overmemory: u64,
    /// Times a flow joined the new list.
    pub new_flow_count: u64,
    /// The last classification, (key, bucket): consecutive packets mostly share a flow, and
    /// the hash is a chain of multiplications.
    last_class: (u64, usize),
}

impl FqCodel {
    /// `hash_seed` perturbs the flow hash (the kernel's random hash key).
    pub fn new(params: FqCodelParams, hash_seed: u64) -> Self {
        let n = params.flows as usize;
        FqCodel {
            params,
            hash_seed,
            flows: vec![Flow::default(); n],
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            cstats: CodelStats::default(),
            len: 0,
            bytes: 0,
            memory: 0,
            enqueued: 0,
            dequeued: 0,
            drop_overlimit: 0,
            drop_overmemory: 0,
            new_flow_count: 0,
            last_class: (u64::MAX, 0),
        }
    }

    /// The flow queue `pkt` is classified into.
    pub fn bucket(&self, pkt: &Packet) -> usize {
        self.bucket_of(flow_key(pkt))
    }

    fn bucket_of(&self, key: u64) -> usize {
        let hash = stream_seed(self.hash_seed, key) >> 32;
        ((hash * self.params.flows as u64) >> 32) as usize
    }

    /// [`FqCodel::bucket`] through the one-entry cache of the last classification.
    fn classify(&mut self, pkt: &Packet) -> usize {
        let key = flow_key(pkt);
        if self.last_class.0 != key {
            self.last_class = (key, self.bucket_of(key));
        }
        self.last_class.1
    }

    /// CoDel state of flow queue `idx`.
    pub fn flow_vars(&self, idx: usize) -> &CodelVars {
        &self.flows[idx].cvars
    }

    /// `fq_codel_drop`: drop from the head of the flow with the largest byte backlog until
    /// half of it is gone or `drop_batch_size` packets are; return how many were dropped.
    fn drop_from_fattest(&mut self, pkts: &mut Packets) -> u64 {
        let mut fattest = 0;
        let mut max_backlog = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.q.bytes() > max_backlog {
                max_backlog = f.q.bytes();
                fattest = i;
            }
        }
        let threshold = max_backlog >> 1;
        let flow = &mut self.flows[fattest];
        let mut src = FlowSource {
            q: &mut flow.q,
            len: &mut self.len,
            bytes: &mut self.bytes,
            memory: &mut self.memory,
        };
        let mut n = 0u32;
        let mut freed: Bytes = 0;
        while let Some(pkt) = src.pop(pkts) {
            freed += pkts[pkt].bytes();
            pkts.drop_packet(pkt);
            n += 1;
            if n >= self.params.drop_batch_size || freed >= threshold {
                break;
            }
        }
        flow.cvars.count = flow.cvars.count.wrapping_add(n);
        n as u64
    }

    /// The DRR passes over an old list whose flows have all spent their deficit, computed
    /// rather than cycled. With a quantum small against the packets (mac80211's 300 bytes for
    /// 1514-byte frames) the round robin passes over every flow several times, adding a
    /// quantum to each, before any can send. A flow with deficit `d <= 0` turns positive after
    /// `r = -d / quantum + 1` quanta; while no flow is positive every visit adds a quantum and
    /// moves the flow to the tail, so the fewest `r` over the list are whole passes that leave
    /// the order as it was and add `r * quantum` to every deficit.
    /// A dequeue with every flow empty, in one pass: the round robin would visit each listed
    /// flow (those of the new list once more from the old list, if any), find its queue empty
    /// (`codel_dequeue` clears `dropping` then) and unlist it. The deficits it would add on
    /// the way are not kept: a flow's deficit is set afresh when it is listed again. Drivers
    /// dequeue until NULL (iwlwifi's `iwl_mvm_mac_itxq_xmit`), so this is one call in two.
    fn unlist_empty(&mut self) {
        for &i in self.new_flows.iter().chain(&self.old_flows) {
            let flow = &mut self.flows[i];
            flow.cvars.dropping = false;
            flow.listed = false;
        }
        self.new_flows.clear();
        self.old_flows.clear();
    }

    fn skip_spent_rounds(&mut self) {
        let quantum = self.params.quantum as i64;
        let mut rounds = i64::MAX;
        for &i in &self.old_flows {
            let deficit = self.flows[i].deficit;
            if deficit > 0 {
                return;
            }
            rounds = rounds.min(-deficit / quantum + 1);
        }
        let add = rounds * quantum;
        for &i in &self.old_flows {
            self.flows[i].deficit += add;
        }
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, pkt: PacketRef, pkts: &mut Packets, now: Nanos) {
        self.enqueued += 1;
        let p = &pkts[pkt];
        let idx = self.classify(p);
        self.len += 1;
        self.bytes += p.bytes();
        self.memory += mem_charge(p);
        let flow = &mut self.flows[idx];
        flow.q.push_stamped(pkt, pkts, now);
        if !flow.listed {
            flow.listed = true;
            flow.deficit = self.params.quantum as i64;
            self.new_flows.push_back(idx);
            self.new_flow_count += 1;
        }
        let memory_limited = self.memory > self.params.memory_limit;
        if self.len <= self.params.limit as usize && !memory_limited {
            return;
        }
        let n = self.drop_from_fattest(pkts);
        self.drop_overlimit += n;
        if memory_limited {
            self.drop_overmemory += n;
        }
    }

    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketRef> {
        if self.len == 0 {
            self.unlist_empty();
            return None;
        }
        let mut skipped = false;
        loop {
            let (from_new, idx) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i),
                (None, Some(&i)) => (false, i),
                (None, None) => return None,
            };
            if !from_new && !skipped && self.flows[idx].deficit <= 0 {
                skipped = true;
                self.skip_spent_rounds();
            }
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                flow.deficit += self.params.quantum as i64;
                list.pop_front();
                self.old_flows.push_back(idx);
                continue;
            }
            let mut src = FlowSource {
                q: &mut flow.q,
                len: &mut self.len,
                bytes: &mut self.bytes,
                memory: &mut self.memory,
            };
            let got = flow
                .cvars
                .dequeue(&mut src, &self.params.codel, &mut self.cstats, pkts, now);
            match got {
                Some(pkt) => {
                    flow.deficit -= pkts[pkt].size as i64;
                    self.dequeued += 1;
                    return Some(pkt);
                }
                None => {
                    list.pop_front();
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(idx);
                    } else {
                        flow.listed = false;
                    }
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn bytes(&self) -> Bytes {
        self.bytes
    }

    fn stats(&self) -> QdiscStats {
        QdiscStats {
            enqueued: self.enqueued,
            dequeued: self.dequeued,
            dropped: self.drop_overlimit + self.cstats.drops,
            ecn_marked: self.cstats.ecn_mark + self.cstats.ce_mark,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::codel::ControlLaw;
    use super::super::testutil::{assert_conserved, ect, pkt, seqs, Held};
    use super::*;
    use crate::net::packet::Ecn;
    use crate::units::NSEC_PER_MSEC;

    const MS: Nanos = NSEC_PER_MSEC;

    fn fq(params: FqCodelParams) -> FqCodel {
        FqCodel::new(params, 0)
    }

    /// Packet of `flow` whose seq encodes flow and index: flow * 100 + i.
    fn fp(flow: u32, i: u64, size: u32, t: Nanos) -> Packet {
        pkt(flow, size, flow as u64 * 100 + i, t)
    }

    fn drain(q: &mut Held<FqCodel>, n: usize, t: Nanos) -> Vec<u64> {
        (0..n).filter_map(|_| q.dequeue(t)).map(|p| p.seq).collect()
    }

    #[test]
    fn tcp_and_ping_with_the_same_index_have_different_keys_and_buckets() {
        let q = fq(FqCodelParams::new(1500));
        let tcp = Packet::new(Kind::Data, 0, 0, 1500, 0);
        let ack = Packet::new(Kind::Ack, 0, 0, 52, 0);
        let ping = Packet::new(Kind::PingRequest, 0, 0, 84, 0);
        assert_eq!(flow_key(&tcp), 0);
        assert_eq!(flow_key(&ack), 0);
        assert_eq!(flow_key(&ping), 1 << 32);
        assert_ne!(q.bucket(&tcp), q.bucket(&ping));
        // Flows 1 and 2 (used below) also land in distinct buckets with seed 0.
        assert_ne!(q.bucket(&fp(1, 0, 1500, 0)), q.bucket(&fp(2, 0, 1500, 0)));
        assert!(q.bucket(&tcp) < FQ_CODEL_FLOWS as usize);
    }

    #[test]
    fn the_classification_cache_answers_as_the_hash_does() {
        // Runs of one flow, switches between flows, and TCP and ping sharing an index: every
        // cached answer equals the uncached hash, and each packet lands in that flow queue.
        let mut q = Held::new(fq(FqCodelParams::new(1500)));
        let ping = Packet::new(Kind::PingRequest, 1, 0, 84, 0);
        let seq = [
            fp(1, 0, 1500, 0),
            fp(1, 1, 1500, 0),
            fp(2, 0, 1500, 0),
            ping,
            fp(1, 2, 1500, 0),
            ping,
            ping,
            fp(3, 0, 1500, 0),
        ];
        for p in seq {
            let want = q.bucket(&p);
            assert_eq!(q.classify(&p), want);
            let before = q.flows[want].q.len();
            q.enqueue(p, 0);
            assert_eq!(q.flows[want].q.len(), before + 1);
        }
        assert!(q.dropped.is_empty());
    }

    #[test]
    fn a_new_flow_overtakes_a_backlogged_one() {
        // Flow 1 has 5 packets. Deficits (quantum 1514): 1@0 -> 14, 1@1 -> -1486.
        // Flow 2 arrives: the next dequeue finds flow 1 spent (deficit 28, moved to old) and
        // serves flow 2 from the new list; flow 2 then empties and moves to the old list
        // behind flow 1, which is served next (deficit 28 -> -1472), then gets 42 and moves
        // behind flow 2, which is found empty and leaves; flow 1 continues.
        let mut q = Held::new(fq(FqCodelParams::new(1500)));
        for i in 0..5 {
            q.enqueue(fp(1, i, 1500, 0), 0);
        }
        assert_eq!(drain(&mut q, 2, 0), vec![100, 101]);
        q.enqueue(fp(2, 0, 1500, 0), 0);
        assert_eq!(drain(&mut q, 10, 0), vec![200, 102, 103, 104]);
        assert_eq!(q.new_flow_count, 2);
        assert!(q.dropped.is_empty());
        assert_conserved(&q);
    }

    #[test]
    fn a_flow_still_on_the_old_list_gets_no_new_flow_priority() {
        // Flow 1 sends 8 x 500 B, flow 2 one 1500 B packet. Flow 1 spends its quantum on four
        // packets (1014, 514, 14, -486) and moves to the old list with 1028; flow 2 is served
        // (14), found empty and moved to the old list behind flow 1, which sends 104 (528).
        let mut q = Held::new(fq(FqCodelParams::new(1500)));
        for i in 0..8 {
            q.enqueue(fp(1, i, 500, 0), 0);
        }
        q.enqueue(fp(2, 0, 1500, 0), 0);
        assert_eq!(drain(&mut q, 6, 0), vec![100, 101, 102, 103, 200, 104]);
        // Flow 2 sends again while still on the old list: no new-flow priority, so flow 1
        // first uses up its deficit (105 -> 28, 106 -> -472) before flow 2's turn comes.
        q.enqueue(fp(2, 1, 1500, 0), 0);
        assert_eq!(q.new_flow_count, 2, "flow 2 was still listed");
        assert_eq!(drain(&mut q, 3, 0), vec![105, 106, 201]);
    }

    #[test]
    fn drr_shares_bytes_between_flows_of_different_packet_sizes() {
        // Flow 1 sends 1500 B packets, flow 2 500 B packets, both backlogged from t = 0.
        // Deficits (quantum 1514), dequeue by dequeue:
        //  1@0 (14), 1@1 (-1486) | 1 -> old with 28 | 2@0 (1014), 2@1 (514), 2@2 (14),
        //  2@3 (-486) | 2 -> old with 1028 | 1@2 (-1472) | 1 -> 42 | 2@4 (528), 2@5 (28),
        //  2@6 (-472) | 2 -> 1042 | 1@3 (-1458) | 1 -> 56 | 2@7 (542), 2@8 (42), 2@9 (-458).
        let mut q = Held::new(fq(FqCodelParams::new(1500)));
        for i in 0..20 {
            q.enqueue(fp(1, i, 1500, 0), 0);
        }
        for i in 0..60 {
            q.enqueue(fp(2, i, 500, 0), 0);
        }
        let first = drain(&mut q, 14, 0);
        assert_eq!(
            first,
            vec![100, 101, 200, 201, 202, 203, 102, 204, 205, 206, 103, 207, 208, 209]
        );
        // From here each DRR round serves one packet of flow 1 (its deficit starts the round
        // at 56, 70, ... and one 1500 B packet spends it) and then three of flow 2 (1056, 1070,
        // ...: three 500 B packets spend it; a fourth would need a deficit above 1500, 32
        // rounds away). 60 dequeues are 15 rounds.
        let rest = drain(&mut q, 60, 0);
        let expected: Vec<u64> = (0..15)
            .flat_map(|r| [104 + r, 210 + 3 * r, 211 + 3 * r, 212 + 3 * r])
            .collect();
        assert_eq!(rest, expected);
        // Bytes served: flow 1 (4 + 15) x 1500 = 28500, flow 2 (10 + 45) x 500 = 27500.
        let bytes = |flow: u64, size: u64| {
            first
                .iter()
                .chain(&rest)
                .filter(|s| **s / 100 == flow)
                .count() as u64
                * size
        };
        assert_eq!((bytes(1, 1500), bytes(2, 500)), (28_500, 27_500));
    }

    /// The deficit round robin written out the obvious way, one quantum per visit: flow
    /// queues by bucket, a new and an old list, the rules of the module comment. CoDel is
    /// left out; the packets compared against it are dequeued at the instant they were
    /// enqueued, so CoDel never drops.
    struct PlainDrr {
        quantum: i64,
        queues: Vec<VecDeque<Packet>>,
        deficit: Vec<i64>,
        listed: Vec<bool>,
        new_flows: VecDeque<usize>,
        old_flows: VecDeque<usize>,
    }

    impl PlainDrr {
        fn new(flows: usize, quantum: u32) -> Self {
            PlainDrr {
                quantum: quantum as i64,
                queues: vec![VecDeque::new(); flows],
                deficit: vec![0; flows],
                listed: vec![false; flows],
                new_flows: VecDeque::new(),
                old_flows: VecDeque::new(),
            }
        }

        fn enqueue(&mut self, bucket: usize, pkt: Packet) {
            self.queues[bucket].push_back(pkt);
            if !self.listed[bucket] {
                self.listed[bucket] = true;
                self.deficit[bucket] = self.quantum;
                self.new_flows.push_back(bucket);
            }
        }

        fn dequeue(&mut self) -> Option<Packet> {
            loop {
                let from_new = !self.new_flows.is_empty();
                let list = if from_new {
                    &mut self.new_flows
                } else {
                    &mut self.old_flows
                };
                let i = *list.front()?;
                if self.deficit[i] <= 0 {
                    self.deficit[i] += self.quantum;
                    list.pop_front();
                    self.old_flows.push_back(i);
                    continue;
                }
                if let Some(pkt) = self.queues[i].pop_front() {
                    self.deficit[i] -= pkt.size as i64;
                    return Some(pkt);
                }
                list.pop_front();
                if from_new && !self.old_flows.is_empty() {
                    self.old_flows.push_back(i);
                } else {
                    self.listed[i] = false;
                }
            }
        }
    }

    /// Feed the same operations to fq_codel and to [`PlainDrr`]: `ops` are (flow, size) to
    /// enqueue, or a dequeue where the flow is `None`. Both must hand out the same packets.
    fn assert_same_order_as_plain_drr(quantum: u32, ops: &[(Option<u32>, u32)]) {
        let mut p = FqCodelParams::new(1500);
        p.quantum = quantum;
        let mut q = Held::new(fq(p));
        let mut plain = PlainDrr::new(p.flows as usize, quantum);
        for (n, &(flow, size)) in ops.iter().enumerate() {
            match flow {
                Some(f) => {
                    let pk = fp(f, n as u64, size, 0);
                    plain.enqueue(q.bucket(&pk), pk);
                    q.enqueue(pk, 0);
                }
                None => {
                    let (got, want) = (q.dequeue(0), plain.dequeue());
                    assert_eq!(
                        got.map(|p| p.seq),
                        want.map(|p| p.seq),
                        "quantum {quantum}, operation {n}"
                    );
                }
            }
        }
        loop {
            let (got, want) = (q.dequeue(0), plain.dequeue());
            assert_eq!(got.map(|p| p.seq), want.map(|p| p.seq), "quantum {quantum}");
            if want.is_none() {
                break;
            }
        }
        assert!(q.dropped.is_empty());
    }

    #[test]
    fn computed_drr_rounds_match_one_quantum_per_visit_on_chosen_sequences() {
        let enq = |flow: u32, size: u32| (Some(flow), size);
        let deq = (None, 0);
        // One flow of full frames with mac80211's quantum: five passes per 1514-byte packet.
        let mut one: Vec<_> = (0..20).map(|_| enq(1, 1514)).collect();
        one.extend([deq; 10]);
        // Full frames against TCP ACKs: the ACK flow turns positive first and sends several
        // ACKs per quantum, the data flow waits its five passes.
        let mut two: Vec<_> = (0..10).flat_map(|_| [enq(1, 1514), enq(2, 52)]).collect();
        two.extend([deq; 12]);
        // Three flows with different deficits when all are spent (1500, 1000, 64 bytes), a
        // fourth arriving mid-way with new-flow priority, and a flow that empties and leaves.
        let mut three: Vec<_> = (0..6)
            .flat_map(|_| [enq(1, 1500), enq(2, 1000), enq(3, 64)])
            .collect();
        three.extend([deq; 7]);
        three.extend([enq(4, 1514), deq, deq, enq(3, 9000), deq, deq, deq]);
        // Drained to empty with deficits spent and flows on both lists (the one-pass
        // unlisting), then refilled in the other order: fresh deficits, new-flow priority.
        let four = vec![
            enq(1, 1514),
            enq(2, 52),
            enq(1, 1514),
            deq,
            deq,
            deq,
            deq,
            deq,
            enq(2, 1514),
            enq(1, 52),
            deq,
            deq,
            deq,
        ];
        for quantum in [1, 7, 64, 300, 1514, 2000] {
            for ops in [&one, &two, &three, &four] {
                assert_same_order_as_plain_drr(quantum, ops);
            }
        }
    }

    #[test]
    fn computed_drr_rounds_match_one_quantum_per_visit_on_random_sequences() {
        // Random flows (up to 8), sizes from 1 byte to 9000, quanta from 1 byte up, enqueues
        // and dequeues interleaved at random; 200 seeded runs of 400 operations.
        let mut rng = crate::sim::Rng::new(42, 0);
        for _ in 0..200 {
            let quantum = [1, 3, 52, 300, 1514][rng.below(5) as usize];
            let flows = 1 + rng.below(8);
            let ops: Vec<_> = (0..400)
                .map(|_| {
                    if rng.chance(0.45) {
                        (None, 0)
                    } else {
                        let size = match rng.below(3) {
                            0 => 1 + rng.below(9000),
                            1 => 1514,
                            _ => 52 + rng.below(40),
                        };
                        (Some(rng.below(flows)), size)
                    }
                })
                .collect();
            assert_same_order_as_plain_drr(quantum, &ops);
        }
    }

    #[test]
    fn overflow_drops_half_the_fattest_flow_from_its_head() {
        // Limit 6: flow 1 holds 5 x 1500 B, flow 2 one packet; flow 2's second packet makes 7.
        // Fattest is flow 1 (7500 B), threshold 3750: drop 100 (1500), 101 (3000), 102 (4500,
        // now >= 3750): 3 drops, and flow 1's CoDel count rises by 3.
        let mut p = FqCodelParams::new(1500);
        p.limit = 6;
        let mut q = Held::new(fq(p));
        for i in 0..5 {
            q.enqueue(fp(1, i, 1500, 0), 0);
        }
        q.enqueue(fp(2, 0, 1500, 0), 0);
        assert!(q.dropped.is_empty());
        q.enqueue(fp(2, 1, 1500, 0), 0);
        assert_eq!(seqs(&q.dropped), vec![100, 101, 102]);
        let f1 = q.bucket(&fp(1, 0, 1500, 0));
        assert_eq!(q.flow_vars(f1).count, 3);
        assert_eq!(
            (q.len(), q.bytes(), q.drop_overlimit, q.drop_overmemory),
            (4, 6000, 3, 0)
        );
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 7,
                dequeued: 0,
                dropped: 3,
                ecn_marked: 0
            }
        );
        assert_conserved(&q);
    }

    #[test]
    fn overflow_drops_at_most_a_batch() {
        // Same as above with drop_batch_size 2: only 100 and 101 go.
        let mut p = FqCodelParams::new(1500);
        p.limit = 6;
        p.drop_batch_size = 2;
        let mut q = Held::new(fq(p));
        for i in 0..5 {
            q.enqueue(fp(1, i, 1500, 0), 0);
        }
        q.enqueue(fp(2, 0, 1500, 0), 0);
        q.enqueue(fp(2, 1, 1500, 0), 0);
        assert_eq!(seqs(&q.dropped), vec![100, 101]);
    }

    #[test]
    fn memory_limit_counts_truesize() {
        // Memory limit 5000 B; packets of 1000 B charged a truesize of 2000 B: the third
        // packet brings memory to 6000 > 5000. Fattest flow 1 (3000 B), threshold 1500:
        // drop 100 (1000 < 1500), 101 (2000): memory back to 2000.
        let mut p = FqCodelParams::new(1500);
        p.memory_limit = 5000;
        let mut q = Held::new(fq(p));
        for i in 0..3 {
            let mut pk = fp(1, i, 1000, 0);
            pk.truesize = 2000;
            q.enqueue(pk, 0);
        }
        assert_eq!(seqs(&q.dropped), vec![100, 101]);
        assert_eq!((q.drop_overlimit, q.drop_overmemory), (2, 2));
        assert_conserved(&q);
    }

    #[test]
    fn per_flow_codel_marks_ect_and_drops_not_ect() {
        // Flow 1 alone, 20 packets enqueued at 0, seq 102 Not-ECT. Exact control law.
        // 10 ms: sojourn above target, first_above = 110 ms. 110 ms + 1: CoDel enters
        // dropping on 101 and, ECN being on by default, marks it. 210 ms + 1: 102 is due
        // and Not-ECT: dropped, 103 delivered.
        let mut p = FqCodelParams::new(1500);
        p.codel.law = ControlLaw::Exact;
        let mut q = Held::new(fq(p));
        for i in 0..20 {
            let pk = if i == 2 {
                fp(1, i, 1500, 0)
            } else {
                ect(1, 1500, 100 + i, 0)
            };
            q.enqueue(pk, 0);
        }
        let mut got = Vec::new();
        for t in [10 * MS, 110 * MS + 1, 210 * MS + 1] {
            let pk = q.dequeue(t).unwrap();
            got.push((pk.seq, pk.ecn()));
        }
        assert_eq!(
            got,
            vec![(100, Ecn::Ect0), (101, Ecn::Ce), (103, Ecn::Ect0)]
        );
        assert_eq!(seqs(&q.dropped), vec![102]);
        assert_eq!(
            q.stats(),
            QdiscStats {
                enqueued: 20,
                dequeued: 3,
                dropped: 1,
                ecn_marked: 1
            }
        );
        assert_conserved(&q);
    }

    #[test]
    fn codel_state_is_per_flow() {
        // Flow 1 has a standing queue (enqueued at 0); flow 2 sends one fresh packet before
        // each dequeue pair. Flow 1's CoDel enters dropping; flow 2's never does.
        let mut p = FqCodelParams::new(1500);
        p.codel.ecn = false;
        let mut q = Held::new(fq(p));
        for i in 0..40 {
            q.enqueue(fp(1, i, 1500, 0), 0);
        }
        for (k, t) in [10 * MS, 60 * MS, 110 * MS + 1, 150 * MS]
            .into_iter()
            .enumerate()
        {
            q.enqueue(fp(2, k as u64, 1500, t), t);
            q.dequeue(t);
            q.dequeue(t);
        }
        let f1 = q.bucket(&fp(1, 0, 1500, 0));
        let f2 = q.bucket(&fp(2, 0, 1500, 0));
        assert!(q.flow_vars(f1).dropping);
        assert!(!q.flow_vars(f2).dropping);
        assert!(q.dropped.iter().all(|p| p.flow == 1) && !q.dropped.is_empty());
        assert_conserved(&q);
    }
}
