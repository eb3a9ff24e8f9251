//! Parsing of the quantities scenarios are written in: durations (`20ms`), rates (`50mbit`),
//! sizes (`64kb`) and buffer sizes (`100p`, `1.5bdp`, `150000b`). Numbers without a unit take
//! the base unit (seconds for durations, bit/s for rates, bytes for sizes, packets for buffers).
//! Errors say what was given and what is expected, for the scenario loader to prefix the field.

use std::fmt;
use std::num::IntErrorKind;

use serde::de::{self, Deserializer, Visitor};
use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize, Serializer};

use crate::units::{BitsPerSec, Bytes, Nanos, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

/// The number a quantity starts with: as written, and as a float.
struct Number<'a> {
    text: &'a str,
    value: f64,
}

/// Split `s` into its number and its unit (lower case, may be empty).
fn split_number(s: &str) -> Option<(Number<'_>, String)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '-' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // 'e' may start a unit ("1e3" vs "5e"), so retreat if the number part does not parse.
    let mut cut = end;
    while cut > 0 {
        if let Ok(value) = s[..cut].parse::<f64>() {
            let number = Number {
                text: &s[..cut],
                value,
            };
            return Some((number, s[cut..].trim().to_ascii_lowercase()));
        }
        cut -= 1;
    }
    None
}

fn finite_nonneg(n: &Number, s: &str, what: &str) -> Result<(), String> {
    if !n.value.is_finite() {
        Err(format!("got {s:?}, expected a finite {what}"))
    } else if n.value < 0.0 {
        Err(format!("got {s:?}, expected a non-negative {what}"))
    } else {
        Ok(())
    }
}

/// `n` units of `scale` base units each, if that is at most `max` base units (`max_shown` is
/// how an error shows the bound). A whole number is scaled exactly (so that every u64 survives
/// a round trip through its string form); a fraction is rounded to the nearest base unit.
fn scaled(n: &Number, scale: u64, max: u64, s: &str, max_shown: &str) -> Result<u64, String> {
    let too_big = || format!("got {s:?}, expected at most {max_shown}");
    match n.text.parse::<u64>() {
        Ok(whole) => {
            return whole
                .checked_mul(scale)
                .filter(|&x| x <= max)
                .ok_or_else(too_big)
        }
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => return Err(too_big()),
        Err(_) => {}
    }
    let x = (n.value * scale as f64).round();
    if x > max as f64 {
        return Err(too_big());
    }
    Ok(x as u64)
}

/// Longest duration a scenario may write: 10^6 s (11.6 days), far beyond any packet-level run,
/// and below 2^50 ns, so that sums of simulated times (a start plus a delay plus a
/// serialisation time) never overflow the u64 nanosecond clock.
pub const MAX_DURATION: Nanos = 1_000_000 * NSEC_PER_SEC;

/// Parse a duration: `30s`, `200ms`, `50us`, `100ns`, `1m`, or a bare number of seconds.
pub fn duration(s: &str) -> Result<Nanos, String> {
    let (n, unit) = split_number(s)
        .ok_or_else(|| format!("got {s:?}, expected a duration such as \"20ms\" or \"30s\""))?;
    finite_nonneg(&n, s, "duration")?;
    let scale = match unit.as_str() {
        "" | "s" | "sec" => NSEC_PER_SEC,
        "ms" => NSEC_PER_MSEC,
        "us" => NSEC_PER_USEC,
        "ns" => 1,
        "m" | "min" => 60 * NSEC_PER_SEC,
        _ => {
            return Err(format!(
                "got {s:?}, expected a duration unit of ns, us, ms, s or min"
            ))
        }
    };
    scaled(&n, scale, MAX_DURATION, s, "1000000s (11.6 days)")
}

/// The rate units a scenario may write, in tc's convention (tc-rate in tc(8), `get_rate` in
/// iproute2's tc/tc_util.c): `bit`, `kbit`, `mbit`, `gbit` are bits per second, `bps`, `kbps`,
/// `mbps`, `gbps` BYTES per second; case does not matter, and a bit unit may also be written
/// `kbit/s`, `Mbit/s`. A bare number is bit/s. Anything else ("mb", "50MB/s", "300k") is
/// refused rather than guessed.
pub const RATE_UNITS: [(&str, BitsPerSec); 13] = [
    ("", 1),
    ("bit", 1),
    ("kbit", 1_000),
    ("mbit", 1_000_000),
    ("gbit", 1_000_000_000),
    ("bit/s", 1),
    ("kbit/s", 1_000),
    ("mbit/s", 1_000_000),
    ("gbit/s", 1_000_000_000),
    ("bps", 8),
    ("kbps", 8_000),
    ("mbps", 8_000_000),
    ("gbps", 8_000_000_000),
];

/// What an error lists as the accepted rate units.
pub const RATE_UNITS_SHOWN: &str = "bit, kbit, mbit, gbit (bit/s; also written kbit/s, Mbit/s, \
                                    Gbit/s) or bps, kbps, mbps, gbps (bytes/s, as in tc)";

/// Parse a rate: `50mbit`, `1gbit`, `300kbit`, `100bit`, `12Mbit/s`, `10mbps` (10 MB/s = 80
/// Mbit/s), or a bare number of bit/s.
pub fn rate(s: &str) -> Result<BitsPerSec, String> {
    let (n, unit) = split_number(s)
        .ok_or_else(|| format!("got {s:?}, expected a rate such as \"50mbit\" or \"1gbit\""))?;
    finite_nonneg(&n, s, "rate")?;
    let Some(&(_, scale)) = RATE_UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(format!(
            "got {s:?}, expected a rate unit of {RATE_UNITS_SHOWN}"
        ));
    };
    scaled(
        &n,
        scale,
        BitsPerSec::MAX,
        s,
        &format!("{} bit/s", BitsPerSec::MAX),
    )
}

/// Parse a size in bytes: `1500`, `1500b`, `64kb` (1000), `64kib` (1024), `1mb`.
pub fn size(s: &str) -> Result<Bytes, String> {
    let (n, unit) =
        split_number(s).ok_or_else(|| format!("got {s:?}, expected a size such as \"64kb\""))?;
    finite_nonneg(&n, s, "size")?;
    let scale = match unit.as_str() {
        "" | "b" | "byte" | "bytes" => 1,
        "kb" => 1_000,
        "kib" => 1 << 10,
        "mb" => 1_000_000,
        "mib" => 1 << 20,
        _ => {
            return Err(format!(
                "got {s:?}, expected a size unit of b, kb, kib, mb or mib"
            ))
        }
    };
    scaled(&n, scale, Bytes::MAX, s, &format!("{} bytes", Bytes::MAX))
}

/// A queue limit: packets, bytes, or a multiple of the path's bandwidth-delay product.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Buffer {
    Packets(u32),
    Bytes(Bytes),
    Bdp(f64),
}

impl Buffer {
    /// Resolve to (packets, bytes) given the BDP in bytes and the MTU. A byte or BDP limit is
    /// also expressed in packets (rounded up, at least 1) for queues that count packets.
    pub fn resolve(&self, bdp: Bytes, mtu: u32) -> (u32, Bytes) {
        match *self {
            Buffer::Packets(p) => (p, p as Bytes * mtu as Bytes),
            Buffer::Bytes(b) => (packets_holding(b, mtu), b),
            Buffer::Bdp(m) => {
                let b = (bdp as f64 * m).round() as Bytes;
                (packets_holding(b, mtu), b.max(mtu as Bytes))
            }
        }
    }

    /// Whether the limit holds nothing.
    pub fn is_zero(&self) -> bool {
        match *self {
            Buffer::Packets(p) => p == 0,
            Buffer::Bytes(b) => b == 0,
            Buffer::Bdp(m) => m <= 0.0,
        }
    }
}

/// Packets of `mtu` bytes needed to hold `bytes`: rounded up, at least 1, at most `u32::MAX`.
fn packets_holding(bytes: Bytes, mtu: u32) -> u32 {
    u32::try_from(bytes.div_ceil(mtu.max(1) as Bytes).max(1)).unwrap_or(u32::MAX)
}

/// As a scenario writes it: `100p`, `64000b`, `1.5bdp`.
impl fmt::Display for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Buffer::Packets(p) => write!(f, "{p}p"),
            Buffer::Bytes(b) => write!(f, "{b}b"),
            Buffer::Bdp(m) => write!(f, "{m}bdp"),
        }
    }
}

/// Parse a buffer size: `100p` / `100pkt` / `100` (packets), `150000b` / `64kb` (bytes), `1bdp`.
pub fn buffer(s: &str) -> Result<Buffer, String> {
    let (n, unit) = split_number(s).ok_or_else(|| {
        format!("got {s:?}, expected a buffer such as \"100p\", \"64kb\" or \"1bdp\"")
    })?;
    finite_nonneg(&n, s, "buffer size")?;
    match unit.as_str() {
        "" | "p" | "pkt" | "pkts" | "packets" => {
            if n.value.fract() != 0.0 {
                return Err(format!("got {s:?}, expected a whole number of packets"));
            }
            let max = u32::MAX as u64;
            scaled(&n, 1, max, s, &format!("{max} packets")).map(|p| Buffer::Packets(p as u32))
        }
        "bdp" => Ok(Buffer::Bdp(n.value)),
        _ => size(s).map(Buffer::Bytes).map_err(|_| {
            format!("got {s:?}, expected a buffer in packets (\"100p\"), bytes (\"64kb\") or BDPs (\"1bdp\")")
        }),
    }
}

/// How a duration is written (the reference's text; [`duration`] is the parser).
pub const DURATION_SYNTAX: &str = "A duration: a number with a unit of ns, us, ms, s (or sec) \
     or min (or m), e.g. \"20ms\", \"1.5s\"; a bare number is seconds. At most 1000000 s.";
/// How a rate is written ([`rate`]).
pub const RATE_SYNTAX: &str = "A rate in tc's units: bit, kbit, mbit, gbit are bit/s (also \
     written kbit/s, Mbit/s, Gbit/s), bps, kbps, mbps, gbps are BYTES/s (\"10mbps\" is 80 \
     Mbit/s); any case, e.g. \"50mbit\"; a bare number is bit/s.";
/// How a size is written ([`size`]).
pub const SIZE_SYNTAX: &str = "A size in bytes: a number with a unit of b, kb (1000), kib \
     (1024), mb or mib, e.g. \"64kb\"; a bare number is bytes.";
/// How a buffer is written ([`buffer`]).
pub const BUFFER_SYNTAX: &str = "A queue limit in packets (\"100p\", \"100pkt\", or a bare \
     whole number), in bytes (a size: \"64kb\", \"150000b\") or in multiples of the path's \
     bandwidth-delay product (\"1bdp\", \"0.5bdp\").";

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $parse:path, $show:expr, $what:expr, $syntax:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        $parse(&v.to_string()).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        $parse(&v.to_string()).map($name).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        $parse(&v.to_string()).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let show: fn(&$inner) -> String = $show;
                s.serialize_str(&show(&self.0))
            }
        }

        /// A string with a unit, or a bare number in the base unit; `x-quantity` names the
        /// kind for the reference's renderer.
        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": ["string", "number"],
                    "description": $syntax,
                    "x-quantity": stringify!($name),
                })
            }
        }
    };
}

quantity!(
    /// A duration field (`"20ms"`).
    Dur, Nanos, duration, |ns| format!("{ns}ns"), "a duration such as \"20ms\"",
    DURATION_SYNTAX
);
impl Default for Dur {
    /// Zero.
    fn default() -> Self {
        Dur(0)
    }
}

quantity!(
    /// A rate field (`"50mbit"`).
    Rate, BitsPerSec, rate, |r| format!("{r}bit"), "a rate such as \"50mbit\"",
    RATE_SYNTAX
);
quantity!(
    /// A size field (`"64kb"`).
    Size, Bytes, size, |b| format!("{b}b"), "a size such as \"64kb\"",
    SIZE_SYNTAX
);
quantity!(
    /// A buffer field (`"1bdp"`, `"100p"`).
    Buf, Buffer, buffer, |b| b.to_string(),
    "a buffer such as \"100p\", \"64kb\" or \"1bdp\"",
    BUFFER_SYNTAX
);

/// Seconds as a string, for error messages.
pub fn show_secs(ns: Nanos) -> String {
    format!("{}s", ns as f64 / NSEC_PER_SEC as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("20ms"), Ok(20_000_000));
        assert_eq!(duration("30s"), Ok(30_000_000_000));
        assert_eq!(duration("1.5"), Ok(1_500_000_000));
        assert_eq!(duration("250us"), Ok(250_000));
        assert!(duration("-1ms").unwrap_err().contains("non-negative"));
        assert!(duration("5 fortnights").unwrap_err().contains("unit"));
        assert!(duration("ms").unwrap_err().contains("expected a duration"));
    }

    #[test]
    fn rates() {
        assert_eq!(rate("50mbit"), Ok(50_000_000));
        assert_eq!(rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(rate("12Mbit"), Ok(12_000_000));
        assert_eq!(rate("12Mbit/s"), Ok(12_000_000));
        assert_eq!(rate("300kbit/s"), Ok(300_000));
        assert_eq!(rate("1500"), Ok(1500));
        // tc: "bps" is bytes per second, so 50mbps is 400 Mbit/s and 2.5gbps 20 Gbit/s.
        assert_eq!(rate("50mbps"), Ok(400_000_000));
        assert_eq!(rate("50MBps"), Ok(400_000_000));
        assert_eq!(rate("2.5gbps"), Ok(20_000_000_000));
        assert_eq!(rate("3kbps"), Ok(24_000));
        assert_eq!(rate("7bps"), Ok(56));
        // Ambiguous spellings are refused with the list, not read as bits.
        for bad in ["50MB/s", "50mb", "300k", "1m", "5b", "50mbit/sec"] {
            assert_eq!(
                rate(bad),
                Err(format!(
                    "got {bad:?}, expected a rate unit of {RATE_UNITS_SHOWN}"
                )),
                "{bad}"
            );
        }
    }

    #[test]
    fn buffers() {
        assert_eq!(buffer("100p"), Ok(Buffer::Packets(100)));
        assert_eq!(buffer("1bdp"), Ok(Buffer::Bdp(1.0)));
        assert_eq!(buffer("0.25bdp"), Ok(Buffer::Bdp(0.25)));
        assert_eq!(buffer("64kb"), Ok(Buffer::Bytes(64_000)));
        assert!(buffer("1.5p").unwrap_err().contains("whole number"));
        // 50 Mbit/s x 20 ms = 125000 B; with 1500 B MTU: 84 packets.
        assert_eq!(Buffer::Bdp(1.0).resolve(125_000, 1500), (84, 125_000));
        assert_eq!(Buffer::Packets(10).resolve(125_000, 1500), (10, 15_000));
    }

    #[test]
    fn bounds_and_exact_whole_numbers() {
        // 10^6 s = 10^15 ns is the longest duration.
        assert_eq!(duration("1000000s"), Ok(1_000_000_000_000_000));
        // u64::MAX bit/s reads back exactly; through a float it would round to 2^64.
        assert_eq!(rate("18446744073709551615bit"), Ok(u64::MAX));
        // 2^53 + 1 has no f64: exact only as a whole number.
        assert_eq!(size("9007199254740993b"), Ok(9_007_199_254_740_993));
        assert_eq!(size("2kib"), Ok(2048));
        assert_eq!(buffer("4294967295p"), Ok(Buffer::Packets(u32::MAX)));
        let refused = [
            (
                duration("1000001s").err(),
                r#"got "1000001s", expected at most 1000000s (11.6 days)"#,
            ),
            (
                duration("1e30ms").err(),
                r#"got "1e30ms", expected at most 1000000s (11.6 days)"#,
            ),
            (
                duration("1e400").err(),
                r#"got "1e400", expected a finite duration"#,
            ),
            (
                rate("18446744073709551616").err(),
                r#"got "18446744073709551616", expected at most 18446744073709551615 bit/s"#,
            ),
            // u64::MAX kbit/s = 1.8e22 bit/s: over by the scale alone.
            (
                rate("18446744073709551615kbit").err(),
                r#"got "18446744073709551615kbit", expected at most 18446744073709551615 bit/s"#,
            ),
            (
                buffer("4294967296p").err(),
                r#"got "4294967296p", expected at most 4294967295 packets"#,
            ),
            (
                buffer("1e12").err(),
                r#"got "1e12", expected at most 4294967295 packets"#,
            ),
        ];
        for (got, want) in refused {
            assert_eq!(got.as_deref(), Some(want));
        }
    }

    #[test]
    fn huge_buffers_saturate_and_buffers_display_as_written() {
        // 10^30 BDPs of 125000 B is more bytes than a u64 holds; the packet count saturates at
        // u32::MAX instead of wrapping.
        assert_eq!(
            Buffer::Bdp(1e30).resolve(125_000, 1500),
            (u32::MAX, u64::MAX)
        );
        // u64::MAX bytes / 1500 = 1.2e16 packets, more than a u32.
        assert_eq!(
            Buffer::Bytes(u64::MAX).resolve(125_000, 1500),
            (u32::MAX, u64::MAX)
        );
        for b in ["100p", "64000b", "1.5bdp"] {
            assert_eq!(buffer(b).unwrap().to_string(), b);
        }
    }

    #[test]
    fn serde_round_trip() {
        let d: Dur = serde_json::from_str("\"20ms\"").unwrap();
        assert_eq!(d.0, 20_000_000);
        let r: Rate = serde_json::from_str("1000").unwrap();
        assert_eq!(r.0, 1000);
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"20000000ns\"");
    }
}
