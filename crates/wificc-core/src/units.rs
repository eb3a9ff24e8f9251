//! Units used throughout the simulator.
//!
//! Simulated time is an integer count of nanoseconds ([`Nanos`]); sizes are bytes ([`Bytes`]);
//! rates are bits per second ([`BitsPerSec`]). Plain integer aliases keep the hot path free of
//! conversions; names carry the unit. Helpers here do the conversions that recur everywhere
//! (serialisation time of a frame, bytes per interval at a rate) with exact integer arithmetic.

/// Simulated time or a duration, in nanoseconds.
pub type Nanos = u64;
/// A size in bytes.
pub type Bytes = u64;
/// A rate in bits per second.
pub type BitsPerSec = u64;

pub const NSEC_PER_USEC: Nanos = 1_000;
pub const NSEC_PER_MSEC: Nanos = 1_000_000;
pub const NSEC_PER_SEC: Nanos = 1_000_000_000;
pub const USEC_PER_SEC: u64 = 1_000_000;

/// Time to serialise `bytes` at `rate`, rounded up to the next nanosecond.
#[inline]
pub fn tx_time(bytes: Bytes, rate: BitsPerSec) -> Nanos {
    let rate = rate.max(1);
    // u64 arithmetic (a hardware divide) whenever bytes x 8e9 fits, i.e. below 2.3 GB.
    match bytes.checked_mul(8 * NSEC_PER_SEC) {
        Some(bits) => bits.div_ceil(rate),
        None => (bytes as u128 * 8 * NSEC_PER_SEC as u128).div_ceil(rate as u128) as Nanos,
    }
}

/// Bytes that `rate` carries in `dur`, rounded down.
#[inline]
pub fn bytes_in(rate: BitsPerSec, dur: Nanos) -> Bytes {
    (rate as u128 * dur as u128 / (8 * NSEC_PER_SEC as u128)) as Bytes
}

/// Seconds as a float, for reports only (never for simulation state).
#[inline]
pub fn secs(t: Nanos) -> f64 {
    t as f64 / NSEC_PER_SEC as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_time_of_a_full_frame() {
        // 1514 bytes at 50 Mbit/s: 1514 * 8 / 50e6 s = 242.24 us.
        assert_eq!(tx_time(1514, 50_000_000), 242_240);
        // Rounded up: 1 byte at 3 bit/s = 2.666.. s.
        assert_eq!(tx_time(1, 3), 2_666_666_667);
    }

    #[test]
    fn bytes_per_interval() {
        assert_eq!(bytes_in(8_000_000, NSEC_PER_MSEC), 1000);
        assert_eq!(bytes_in(1_000_000_000, 10 * NSEC_PER_MSEC), 1_250_000);
    }
}
