//! The event queue: a 4-ary min-heap keyed by (time, insertion sequence).
//!
//! Every key is unique (the sequence number is), so the order in which events leave the queue
//! is the total order of their keys, whatever the heap's shape. The heap is small in practice
//! (each component keeps at most a few events pending), so what matters is the cost of one
//! level: a 4-ary heap halves the depth of a binary one, and a key compares as one 128-bit
//! integer (time in the high half, sequence in the low half) rather than field by field.

use crate::units::Nanos;

/// An event waiting in the queue: when it fires and what it is.
#[derive(Debug, Clone, Copy)]
pub struct Scheduled<E> {
    pub at: Nanos,
    seq: u64,
    pub event: E,
}

impl<E> Scheduled<E> {
    /// (time, sequence) as one integer: earlier time first, then earlier scheduling.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.at as u128) << 64) | self.seq as u128
    }
}

/// Children per heap node.
const ARITY: usize = 4;

/// Priority queue of events keyed by (time, insertion order).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// Heap order: every node's key is below its children's, the children of node `i` being
    /// `ARITY * i + 1 ..= ARITY * i + ARITY`.
    heap: Vec<Scheduled<E>>,
    next_seq: u64,
    now: Nanos,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: Vec::with_capacity(1024),
            next_seq: 0,
            now: 0,
            processed: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// Current simulated time: the time of the event being processed.
    #[inline]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedule `event` at absolute time `at`. Times in the past are clamped to now, so causality
    /// holds even if a model computes a deadline that has already passed.
    #[inline]
    pub fn schedule(&mut self, at: Nanos, event: E) {
        let new = Scheduled {
            at: at.max(self.now),
            seq: self.next_seq,
            event,
        };
        self.next_seq += 1;
        let key = new.key();
        let mut hole = self.heap.len();
        self.heap.push(new);
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if self.heap[parent].key() < key {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = new;
    }

    /// Schedule `event` after `delay` from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: Nanos, event: E) {
        self.schedule(self.now.saturating_add(delay), event);
    }

    /// Remove and return the next event if it fires no later than `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Nanos) -> Option<Scheduled<E>> {
        let top = *self.heap.first().filter(|s| s.at <= until)?;
        let last = self.heap.pop()?;
        if !self.heap.is_empty() {
            self.sift_down_from_root(last);
        }
        self.now = top.at;
        self.processed += 1;
        Some(top)
    }

    /// Put `moved` (the former last element) in the root's place and restore heap order.
    #[inline]
    fn sift_down_from_root(&mut self, moved: Scheduled<E>) {
        let key = moved.key();
        let n = self.heap.len();
        let mut hole = 0;
        loop {
            let first = ARITY * hole + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            let mut best_key = self.heap[first].key();
            for c in first + 1..(first + ARITY).min(n) {
                let k = self.heap[c].key();
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if key < best_key {
                break;
            }
            self.heap[hole] = self.heap[best];
            hole = best;
        }
        self.heap[hole] = moved;
    }

    /// Advance the clock to `t` without processing anything (end of run).
    pub fn advance_to(&mut self, t: Nanos) {
        self.now = self.now.max(t);
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_with_fifo_ties() {
        let mut q = EventQueue::default();
        q.schedule(30, 'c');
        q.schedule(10, 'a');
        q.schedule(30, 'd');
        q.schedule(10, 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_until(100).map(|s| s.event)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), 30);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn stops_at_horizon_and_clamps_past_times() {
        let mut q = EventQueue::default();
        q.schedule(5, 1);
        q.schedule(50, 2);
        assert_eq!(q.pop_until(20).map(|s| s.event), Some(1));
        assert!(q.pop_until(20).is_none());
        q.schedule(0, 3); // in the past: runs at now (5), before the event at 50
        assert_eq!(q.pop_until(100).map(|s| (s.at, s.event)), Some((5, 3)));
    }

    proptest::proptest! {
        /// Against a reference that sorts by (time, scheduling order): schedules and pops
        /// interleaved, with many ties and heaps several levels deep.
        #[test]
        fn matches_a_sorted_reference(ops in proptest::collection::vec((0u64..40, 0usize..4), 1..400)) {
            let mut q = EventQueue::default();
            let mut pending: Vec<(Nanos, usize)> = Vec::new();
            for (n, &(delay, pops)) in ops.iter().enumerate() {
                q.schedule_in(delay, n);
                pending.push((q.now() + delay, n));
                for _ in 0..pops {
                    let popped = q.pop_until(Nanos::MAX).map(|s| (s.at, s.event));
                    // (time, n) orders as (time, sequence): n is the scheduling order.
                    let first = pending.iter().copied().min();
                    pending.retain(|&e| Some(e) != first);
                    proptest::prop_assert_eq!(popped, first);
                }
            }
            proptest::prop_assert_eq!(q.len(), pending.len());
        }
    }
}
