//! Parsing of the quantities scenarios are written in: durations (`20ms`), rates (`50mbit`),
//! sizes (`64kb`) and buffer sizes (`100p`, `1.5bdp`, `150000b`). Numbers without a unit take
//! the base unit (seconds for durations, bit/s for rates, bytes for sizes, packets for buffers).
//! Errors say what was given and what is expected, for the scenario loader to prefix the field.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::units::{BitsPerSec, Bytes, Nanos, NSEC_PER_SEC};

fn split_number(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '-' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // 'e' may start a unit ("1e3" vs "5e"), so retreat if the number part does not parse.
    let mut cut = end;
    while cut > 0 {
        if let Ok(v) = s[..cut].parse::<f64>() {
            return Some((v, s[cut..].trim().to_ascii_lowercase()));
        }
        cut -= 1;
    }
    None
}

fn finite_nonneg(v: f64, s: &str, what: &str) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("got {s:?}, expected a non-negative {what}"))
    }
}

/// Parse a duration: `30s`, `200ms`, `50us`, `100ns`, `1m`, or a bare number of seconds.
pub fn duration(s: &str) -> Result<Nanos, String> {
    let (v, unit) = split_number(s)
        .ok_or_else(|| format!("got {s:?}, expected a duration such as \"20ms\" or \"30s\""))?;
    let v = finite_nonneg(v, s, "duration")?;
    let scale = match unit.as_str() {
        "" | "s" | "sec" => 1e9,
        "ms" => 1e6,
        "us" => 1e3,
        "ns" => 1.0,
        "m" | "min" => 60e9,
        _ => {
            return Err(format!(
                "got {s:?}, expected a duration unit of ns, us, ms, s or min"
            ))
        }
    };
    Ok((v * scale).round() as Nanos)
}

/// Parse a rate: `50mbit`, `1gbit`, `300kbit`, `100bit`, `2.4gbps`, or a bare number of bit/s.
pub fn rate(s: &str) -> Result<BitsPerSec, String> {
    let (v, unit) = split_number(s)
        .ok_or_else(|| format!("got {s:?}, expected a rate such as \"50mbit\" or \"1gbit\""))?;
    let v = finite_nonneg(v, s, "rate")?;
    let unit = unit.trim_end_matches("ps").trim_end_matches("/s");
    let scale = match unit {
        "" | "bit" | "b" => 1.0,
        "kbit" | "k" | "kb" => 1e3,
        "mbit" | "m" | "mb" => 1e6,
        "gbit" | "g" | "gb" => 1e9,
        _ => {
            return Err(format!(
                "got {s:?}, expected a rate unit of bit, kbit, mbit or gbit"
            ))
        }
    };
    Ok((v * scale).round() as BitsPerSec)
}

/// Parse a size in bytes: `1500`, `1500b`, `64kb` (1000), `64kib` (1024), `1mb`.
pub fn size(s: &str) -> Result<Bytes, String> {
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("got {s:?}, expected a size such as \"64kb\""))?;
    let v = finite_nonneg(v, s, "size")?;
    let scale = match unit.as_str() {
        "" | "b" | "byte" | "bytes" => 1.0,
        "kb" => 1e3,
        "kib" => 1024.0,
        "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "got {s:?}, expected a size unit of b, kb, kib, mb or mib"
            ))
        }
    };
    Ok((v * scale).round() as Bytes)
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
            Buffer::Bytes(b) => ((b.div_ceil(mtu as Bytes)).max(1) as u32, b),
            Buffer::Bdp(m) => {
                let b = (bdp as f64 * m).round() as Bytes;
                (
                    (b.div_ceil(mtu as Bytes)).max(1) as u32,
                    b.max(mtu as Bytes),
                )
            }
        }
    }

    pub fn is_zero(&self) -> bool {
        match *self {
            Buffer::Packets(p) => p == 0,
            Buffer::Bytes(b) => b == 0,
            Buffer::Bdp(m) => m <= 0.0,
        }
    }
}

/// Parse a buffer size: `100p` / `100pkt` / `100` (packets), `150000b` / `64kb` (bytes), `1bdp`.
pub fn buffer(s: &str) -> Result<Buffer, String> {
    let (v, unit) = split_number(s).ok_or_else(|| {
        format!("got {s:?}, expected a buffer such as \"100p\", \"64kb\" or \"1bdp\"")
    })?;
    let v = finite_nonneg(v, s, "buffer size")?;
    match unit.as_str() {
        "" | "p" | "pkt" | "pkts" | "packets" => {
            if v.fract() != 0.0 {
                return Err(format!("got {s:?}, expected a whole number of packets"));
            }
            Ok(Buffer::Packets(v as u32))
        }
        "bdp" => Ok(Buffer::Bdp(v)),
        _ => size(s).map(Buffer::Bytes).map_err(|_| {
            format!("got {s:?}, expected a buffer in packets (\"100p\"), bytes (\"64kb\") or BDPs (\"1bdp\")")
        }),
    }
}

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $parse:path, $show:expr, $what:expr) => {
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
    };
}

quantity!(
    /// A duration field (`"20ms"`).
    Dur, Nanos, duration, |ns| format!("{ns}ns"), "a duration such as \"20ms\""
);
quantity!(
    /// A rate field (`"50mbit"`).
    Rate, BitsPerSec, rate, |r| format!("{r}bit"), "a rate such as \"50mbit\""
);
quantity!(
    /// A size field (`"64kb"`).
    Size, Bytes, size, |b| format!("{b}b"), "a size such as \"64kb\""
);
quantity!(
    /// A buffer field (`"1bdp"`, `"100p"`).
    Buf, Buffer, buffer,
    |b| match b {
        Buffer::Packets(p) => format!("{p}p"),
        Buffer::Bytes(b) => format!("{b}b"),
        Buffer::Bdp(m) => format!("{m}bdp"),
    },
    "a buffer such as \"100p\", \"64kb\" or \"1bdp\""
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
        assert_eq!(rate("2.4gbps"), Ok(2_400_000_000));
        assert_eq!(rate("12Mbit"), Ok(12_000_000));
        assert!(rate("fast").is_err());
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
    fn serde_round_trip() {
        let d: Dur = serde_json::from_str("\"20ms\"").unwrap();
        assert_eq!(d.0, 20_000_000);
        let r: Rate = serde_json::from_str("1000").unwrap();
        assert_eq!(r.0, 1000);
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"20000000ns\"");
    }
}
