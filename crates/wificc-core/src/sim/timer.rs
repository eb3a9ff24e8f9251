//! A re-armable timer with lazy cancellation.
//!
//! A TCP timer (RTO, pacing, delayed ACK) is re-armed far more often than it fires: the RTO moves
//! on every ACK. Pushing an event per re-arm would put one event per packet in the queue. Instead
//! the owner keeps the current `deadline` and the time of the one event it has `pending` in the
//! queue. Arming earlier than the pending event schedules a new event; arming later only moves
//! the deadline, and the pending event, when it fires early, re-schedules itself at the deadline.

use crate::units::Nanos;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timer {
    deadline: Option<Nanos>,
    pending: Option<Nanos>,
}

impl Timer {
    /// Set the deadline to `at`. Returns `Some(t)` when the caller must schedule an event at `t`.
    #[must_use]
    pub fn arm(&mut self, at: Nanos) -> Option<Nanos> {
        self.deadline = Some(at);
        match self.pending {
            Some(p) if p <= at => None,
            _ => {
                self.pending = Some(at);
                Some(at)
            }
        }
    }

    /// Cancel: the pending event, if any, will be ignored.
    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    pub fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }

    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }

    /// An event of this timer fired at `now`. Returns (expired, reschedule): `expired` when the
    /// deadline is reached (the timer is then disarmed); `reschedule` when a later deadline needs
    /// an event of its own.
    #[must_use]
    pub fn fire(&mut self, now: Nanos) -> (bool, Option<Nanos>) {
        if self.pending == Some(now) {
            self.pending = None;
        }
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                (true, None)
            }
            Some(d) => match self.pending {
                Some(p) if p <= d => (false, None),
                _ => {
                    self.pending = Some(d);
                    (false, Some(d))
                }
            },
            None => (false, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_rearm_reuses_pending_event() {
        let mut t = Timer::default();
        assert_eq!(t.arm(100), Some(100));
        assert_eq!(t.arm(150), None); // moved later: no new event
        assert_eq!(t.fire(100), (false, Some(150)));
        assert_eq!(t.fire(150), (true, None));
        assert!(!t.is_armed());
    }

    #[test]
    fn earlier_rearm_schedules_and_stale_event_is_ignored() {
        let mut t = Timer::default();
        assert_eq!(t.arm(100), Some(100));
        assert_eq!(t.arm(50), Some(50));
        assert_eq!(t.fire(50), (true, None));
        assert_eq!(t.fire(100), (false, None)); // stale
        assert_eq!(t.arm(200), Some(200));
        t.cancel();
        assert_eq!(t.fire(200), (false, None));
    }
}
