//! The discrete-event engine: an integer-nanosecond clock, an event queue with deterministic
//! tie-breaking, and seeded random-number streams.
//!
//! Events are ordered by (time, insertion sequence): two events at the same nanosecond run in the
//! order they were scheduled, so a run is a pure function of its scenario and seed. Components own
//! their next event: a FIFO component (serialiser, delay line) keeps at most one pending event and
//! re-arms itself when it fires, rather than scheduling one event per packet. Timers that may be
//! re-armed (RTO, pacing, delayed ACK) are cancelled lazily: the owner remembers the deadline it
//! armed and ignores a wake-up that no longer matches it.

mod queue;
mod rng;
mod timer;

pub use queue::{EventQueue, Scheduled};
pub use rng::{stream_seed, Rng};
pub use timer::Timer;
