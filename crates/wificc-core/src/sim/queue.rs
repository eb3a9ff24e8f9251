use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::units::Nanos;

/// An event waiting in the queue: when it fires and what it is.
#[derive(Debug, Clone, Copy)]
pub struct Scheduled<E> {
    pub at: Nanos,
    seq: u64,
    pub event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Scheduled<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event, and among events at
    /// the same time the one scheduled first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at
            .cmp(&self.at)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Priority queue of events keyed by (time, insertion order).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Scheduled<E>>,
    next_seq: u64,
    now: Nanos,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
            next_seq: 0,
            now: 0,
            processed: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Current simulated time: the time of the event being processed.
    #[inline]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedule `event` at absolute time `at`. Times in the past are clamped to now, so causality
    /// holds even if a model computes a deadline that has already passed.
    #[inline]
    pub fn schedule(&mut self, at: Nanos, event: E) {
        let at = at.max(self.now);
        self.heap.push(Scheduled {
            at,
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
    }

    /// Schedule `event` after `delay` from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: Nanos, event: E) {
        self.schedule(self.now.saturating_add(delay), event);
    }

    /// Remove and return the next event if it fires no later than `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Nanos) -> Option<Scheduled<E>> {
        if self.heap.peek().is_some_and(|s| s.at <= until) {
            let s = self.heap.pop()?;
            self.now = s.at;
            self.processed += 1;
            Some(s)
        } else {
            None
        }
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
}
