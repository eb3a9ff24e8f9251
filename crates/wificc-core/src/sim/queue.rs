//! The event queue: events keyed by (time, insertion sequence), a key compared as one 128-bit
//! integer (time in the high half, sequence in the low half).
//!
//! Every key is unique (the sequence number is), so the order in which events leave the queue
//! is the total order of their keys, whatever the data structure holds them. Two are used:
//!
//! - While few events are pending (the usual case: each component keeps at most a few events
//!   pending), a vector sorted by descending key: the next event is the last element, so taking
//!   it is a pop, and an insertion walks back from the end past the earlier events.
//! - Above [`SORTED_MAX`] events, a 4-ary min-heap (half the depth of a binary heap), whose
//!   cost grows with the logarithm of its size. A vector sorted by ascending key is a valid
//!   heap, so the switch is a reversal; the queue goes back to a sorted vector once it has
//!   shrunk to [`SORTED_MIN`] events.

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
/// Largest number of events held as a sorted vector.
const SORTED_MAX: usize = 32;
/// A heap that has shrunk to this many events becomes a sorted vector again.
const SORTED_MIN: usize = 8;

/// Priority queue of events keyed by (time, insertion order).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// The pending events: sorted by descending key while `sorted`, else in heap order (every
    /// node's key below its children's, the children of node `i` being
    /// `ARITY * i + 1 ..= ARITY * i + ARITY`).
    events: Vec<Scheduled<E>>,
    sorted: bool,
    next_seq: u64,
    now: Nanos,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            events: Vec::with_capacity(1024),
            sorted: true,
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
        if self.sorted {
            if self.events.len() < SORTED_MAX {
                // Insertion sort's step: shift the earlier events up by one, then fill the gap.
                let key = new.key();
                let mut i = self.events.len();
                self.events.push(new);
                while i > 0 && self.events[i - 1].key() < key {
                    self.events[i] = self.events[i - 1];
                    i -= 1;
                }
                self.events[i] = new;
                return;
            }
            self.events.reverse();
            self.sorted = false;
        }
        self.heap_push(new);
    }

    /// Schedule `event` after `delay` from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: Nanos, event: E) {
        self.schedule(self.now.saturating_add(delay), event);
    }

    /// Remove and return the next event if it fires no later than `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Nanos) -> Option<Scheduled<E>> {
        let top = if self.sorted {
            let top = *self.events.last().filter(|s| s.at <= until)?;
            self.events.pop();
            top
        } else {
            let top = *self.events.first().filter(|s| s.at <= until)?;
            self.heap_pop();
            top
        };
        self.now = top.at;
        self.processed += 1;
        Some(top)
    }

    fn heap_push(&mut self, new: Scheduled<E>) {
        let key = new.key();
        let mut hole = self.events.len();
        self.events.push(new);
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if self.events[parent].key() < key {
                break;
            }
            self.events[hole] = self.events[parent];
            hole = parent;
        }
        self.events[hole] = new;
    }

    /// Remove the root of the heap; back to a sorted vector when few events remain.
    fn heap_pop(&mut self) {
        let Some(last) = self.events.pop() else {
            return;
        };
        if self.events.is_empty() {
            return;
        }
        self.sift_down_from_root(last);
        if self.events.len() <= SORTED_MIN {
            self.events
                .sort_unstable_by_key(|s| std::cmp::Reverse(s.key()));
            self.sorted = true;
        }
    }

    /// Put `moved` (the former last element) in the root's place and restore heap order.
    fn sift_down_from_root(&mut self, moved: Scheduled<E>) {
        let key = moved.key();
        let n = self.events.len();
        let mut hole = 0;
        loop {
            let first = ARITY * hole + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            let mut best_key = self.events[first].key();
            for c in first + 1..(first + ARITY).min(n) {
                let k = self.events[c].key();
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if key < best_key {
                break;
            }
            self.events[hole] = self.events[best];
            hole = best;
        }
        self.events[hole] = moved;
    }

    /// Advance the clock to `t` without processing anything (end of run).
    pub fn advance_to(&mut self, t: Nanos) {
        self.now = self.now.max(t);
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
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

    #[test]
    fn grows_into_a_heap_and_shrinks_back_in_order() {
        // 100 events at times 7n mod 100 (each of 0..99 once, in a scrambled order): above 32
        // pending the queue is a heap, at 8 a sorted vector again; pops come out at 0, 1, ...
        let mut q = EventQueue::default();
        for n in 0..100u64 {
            q.schedule(n * 7 % 100, n);
        }
        assert!(!q.sorted);
        let times: Vec<Nanos> = std::iter::from_fn(|| q.pop_until(Nanos::MAX).map(|s| s.at))
            .take(95)
            .collect();
        assert_eq!(times, (0..95).collect::<Vec<_>>());
        assert!(q.sorted);
        q.schedule(50, 100); // in the past: clamped to now (94), before 95..99
        let rest: Vec<(Nanos, u64)> =
            std::iter::from_fn(|| q.pop_until(Nanos::MAX).map(|s| (s.at, s.event))).collect();
        // Event n fires at 7n mod 100: 85 x 7 = 595, 28 x 7 = 196, 71 x 7 = 497, 14 x 7 = 98,
        // 57 x 7 = 399.
        assert_eq!(
            rest,
            vec![(94, 100), (95, 85), (96, 28), (97, 71), (98, 14), (99, 57)]
        );
    }

    proptest::proptest! {
        /// Against a reference that sorts by (time, scheduling order): schedules and pops
        /// interleaved, with many ties; about one pop per schedule, so that the queue wanders
        /// between a sorted vector and a heap several levels deep, then a drain.
        #[test]
        fn matches_a_sorted_reference(ops in proptest::collection::vec((0u64..40, 0usize..3), 1..800)) {
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
            pending.sort_unstable();
            let drained: Vec<(Nanos, usize)> =
                std::iter::from_fn(|| q.pop_until(Nanos::MAX).map(|s| (s.at, s.event))).collect();
            proptest::prop_assert_eq!(drained, pending);
        }
    }
}
