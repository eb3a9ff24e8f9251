//! The scenario-facing description of a qdisc: a tagged table such as
//!
//! ```toml
//! [link.qdisc]
//! kind = "fq_codel"
//! target = "20ms"
//! ecn = false
//! ```
//!
//! Every parameter is optional and defaults to the Linux value (`tc qdisc add ... <kind>` with
//! no options), unknown keys are rejected, durations and sizes take unit strings (`"5ms"`,
//! `"1514b"`), and limits are buffers in packets, bytes or multiples of the path's BDP
//! (`"1000p"`, `"64kb"`, `"1bdp"`), resolved with [`Buffer::resolve`] when the qdisc is built.
//! [`QdiscSpec::validate`] checks what can be checked alone; [`QdiscSpec::build`] also checks
//! what depends on the MTU and the BDP, and every error names the parameter, the value given
//! and what is expected.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::codel::{
    Codel, CodelParams, ControlLaw, CODEL_INTERVAL, CODEL_LIMIT_PACKETS, CODEL_TARGET,
};
use super::ecn_step::{step_fifo, ECN_STEP_K_PACKETS};
use super::fifo::{Fifo, FifoLimit};
use super::fq_codel::{
    FqCodel, FqCodelParams, FQ_CODEL_DROP_BATCH, FQ_CODEL_FLOWS, FQ_CODEL_LIMIT_PACKETS,
    FQ_CODEL_MAX_FLOWS, FQ_CODEL_MEMORY_LIMIT, FQ_CODEL_QUANTUM,
};
use super::pfifo_fast::PfifoFast;
use super::pie::{
    Pie, PieParams, PIE_ALPHA, PIE_BETA, PIE_LIMIT_PACKETS, PIE_MAX_GAIN, PIE_TARGET, PIE_TUPDATE,
};
use super::AnyQdisc;
use crate::parse::{Buf, Buffer, Dur, Size};
use crate::sim::Rng;
use crate::units::{Bytes, Nanos, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

/// A device's default transmit queue length, packets (`txqueuelen`: Linux
/// `DEFAULT_TX_QUEUE_LEN`, which `ether_setup` gives Ethernet devices): the default limit of
/// pfifo, bfifo (times the MTU), pfifo_fast and the step-marking FIFO.
pub const TXQUEUELEN: u32 = 1000;

fn txqueuelen() -> Buf {
    Buf(Buffer::Packets(TXQUEUELEN))
}
fn codel_limit() -> Buf {
    Buf(Buffer::Packets(CODEL_LIMIT_PACKETS))
}
fn codel_target() -> Dur {
    Dur(CODEL_TARGET)
}
fn codel_interval() -> Dur {
    Dur(CODEL_INTERVAL)
}
fn fq_codel_limit() -> Buf {
    Buf(Buffer::Packets(FQ_CODEL_LIMIT_PACKETS))
}
fn fq_codel_flows() -> u32 {
    FQ_CODEL_FLOWS
}
fn fq_codel_quantum() -> Size {
    Size(FQ_CODEL_QUANTUM as Bytes)
}
fn fq_codel_memory_limit() -> Size {
    Size(FQ_CODEL_MEMORY_LIMIT)
}
fn fq_codel_drop_batch() -> u32 {
    FQ_CODEL_DROP_BATCH
}
fn yes() -> bool {
    true
}
fn pie_limit() -> Buf {
    Buf(Buffer::Packets(PIE_LIMIT_PACKETS))
}
fn pie_target() -> Dur {
    Dur(PIE_TARGET)
}
fn pie_tupdate() -> Dur {
    Dur(PIE_TUPDATE)
}
fn pie_alpha() -> u32 {
    PIE_ALPHA
}
fn pie_beta() -> u32 {
    PIE_BETA
}
fn ecn_step_k() -> u32 {
    ECN_STEP_K_PACKETS
}

/// A queueing discipline and its parameters, as a scenario writes it: a table with `kind` and
/// any parameter to change (each left out takes the Linux default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscSpec {
    /// Packet-limited FIFO (Linux `pfifo`; with `head_drop`, `pfifo_head_drop`).
    Pfifo {
        /// Queue limit; a byte or BDP limit is rounded up to whole packets of the MTU. Default
        /// 1000 packets (txqueuelen).
        #[serde(default = "txqueuelen")]
        limit: Buf,
        /// Drop the oldest packet when full instead of the arriving one.
        #[serde(default)]
        head_drop: bool,
    },
    /// Byte-limited FIFO (Linux `bfifo`; with `head_drop`, Mahimahi `drophead` in bytes).
    Bfifo {
        /// Queue limit in bytes (packets count as MTU bytes each). Default 1000 packets x MTU
        /// bytes (txqueuelen x MTU).
        #[serde(default = "txqueuelen")]
        limit: Buf,
        /// Drop the oldest packet when full instead of the arriving one.
        #[serde(default)]
        head_drop: bool,
    },
    /// Linux's three-band default qdisc (sch_generic.c): the band follows the packet's TOS
    /// priority.
    PfifoFast {
        /// Queue limit of all bands together; default 1000 packets (txqueuelen).
        #[serde(default = "txqueuelen")]
        limit: Buf,
    },
    /// CoDel (sch_codel.c, RFC 8289).
    Codel {
        /// Hard queue limit; default 1000 packets.
        #[serde(default = "codel_limit")]
        limit: Buf,
        /// Acceptable standing queue delay (sojourn time); default 5 ms.
        #[serde(default = "codel_target")]
        target: Dur,
        /// Window over which the sojourn time must stay above `target` before dropping
        /// starts, and the base of the drop spacing interval / sqrt(count); default 100 ms.
        #[serde(default = "codel_interval")]
        interval: Dur,
        /// Mark ECN-capable packets instead of dropping them.
        #[serde(default)]
        ecn: bool,
        /// Mark every ECN-capable packet whose sojourn exceeds this (DCTCP-style); default
        /// none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ce_threshold: Option<Dur>,
        /// How interval / sqrt(count) is computed: "linux" (the kernel's Newton iteration on a
        /// Q0.32 reciprocal square root) or "exact" (RFC 8289's square root).
        #[serde(default)]
        control_law: ControlLaw,
    },
    /// FQ-CoDel (sch_fq_codel.c, RFC 8290): per-flow queues served by deficit round robin,
    /// each managed by CoDel.
    FqCodel {
        /// Packets held in all flow queues together; default 10240.
        #[serde(default = "fq_codel_limit")]
        limit: Buf,
        /// Number of flow queues (hash buckets), 1 to 65536; default 1024.
        #[serde(default = "fq_codel_flows")]
        #[schemars(range(min = 1, max = FQ_CODEL_MAX_FLOWS), extend("x-unit" = "queues"))]
        flows: u32,
        /// Bytes a flow may send per round of the deficit round robin; default 1514.
        #[serde(default = "fq_codel_quantum")]
        quantum: Size,
        /// CoDel's acceptable standing queue delay; default 5 ms.
        #[serde(default = "codel_target")]
        target: Dur,
        /// CoDel's interval; default 100 ms.
        #[serde(default = "codel_interval")]
        interval: Dur,
        /// Mark ECN-capable packets instead of dropping them (Linux default on).
        #[serde(default = "yes")]
        ecn: bool,
        /// Mark every ECN-capable packet whose sojourn exceeds this; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ce_threshold: Option<Dur>,
        /// Memory (truesize) all queued packets may use before the fattest flow is cut;
        /// default 32 MiB.
        #[serde(default = "fq_codel_memory_limit")]
        memory_limit: Size,
        /// Packets dropped at once from the fattest flow when a limit is hit, at least 1;
        /// default 64.
        #[serde(default = "fq_codel_drop_batch")]
        #[schemars(range(min = 1), extend("x-unit" = "packets"))]
        drop_batch_size: u32,
        /// CoDel's control law: "linux" or "exact" (as `codel`).
        #[serde(default)]
        control_law: ControlLaw,
    },
    /// PIE (sch_pie.c, RFC 8033): drops with a probability steered by the queue delay.
    Pie {
        /// Hard queue limit; default 1000 packets.
        #[serde(default = "pie_limit")]
        limit: Buf,
        /// Target queue delay; default 15 ms.
        #[serde(default = "pie_target")]
        target: Dur,
        /// Interval between drop-probability updates; default 15 ms.
        #[serde(default = "pie_tupdate")]
        tupdate: Dur,
        /// Weight of the delay's distance from the target in each update, units of 1/16,
        /// 0..=32; default 2 (0.125).
        #[serde(default = "pie_alpha")]
        #[schemars(range(max = PIE_MAX_GAIN), extend("x-unit" = "1/16"))]
        alpha: u32,
        /// Weight of the delay's change since the last update, units of 1/16, 0..=32; default
        /// 20 (1.25).
        #[serde(default = "pie_beta")]
        #[schemars(range(max = PIE_MAX_GAIN), extend("x-unit" = "1/16"))]
        beta: u32,
        /// Mark ECN-capable packets instead of dropping them (while the probability is low).
        #[serde(default)]
        ecn: bool,
        /// Scale the drop probability by the packet's size.
        #[serde(default)]
        bytemode: bool,
        /// Estimate the queue delay from the departure rate (RFC 8033's estimator) instead
        /// of from packet timestamps.
        #[serde(default)]
        dq_rate_estimator: bool,
    },
    /// DCTCP-style step marking FIFO: ECN-capable packets are marked while the queue holds at
    /// least `k` packets.
    EcnStep {
        /// Queue limit; default 1000 packets.
        #[serde(default = "txqueuelen")]
        limit: Buf,
        /// Marking threshold, packets, at least 1; default 20.
        #[serde(default = "ecn_step_k")]
        #[schemars(range(min = 1), extend("x-unit" = "packets"))]
        k: u32,
    },
}

/// A buffer as scenarios write it.
fn show_buf(b: &Buf) -> String {
    match b.0 {
        Buffer::Packets(p) => format!("{p}p"),
        Buffer::Bytes(n) => format!("{n}b"),
        Buffer::Bdp(m) => format!("{m}bdp"),
    }
}

/// A duration in the largest unit that shows it exactly.
fn show_dur(ns: Nanos) -> String {
    if ns == 0 {
        return "0s".to_string();
    }
    let units = [
        ("s", NSEC_PER_SEC),
        ("ms", NSEC_PER_MSEC),
        ("us", NSEC_PER_USEC),
    ];
    for (unit, scale) in units {
        if ns >= scale && ns / scale * scale == ns {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

fn check_limit(limit: &Buf) -> Result<(), String> {
    if limit.0.is_zero() {
        return Err(format!(
            "limit = {:?}: expected a buffer of at least 1 packet",
            show_buf(limit)
        ));
    }
    Ok(())
}

/// Longest time Linux accepts for these parameters: a u32 count of microseconds.
const MAX_TIME_PARAM: Nanos = u32::MAX as Nanos * NSEC_PER_USEC;
/// Shortest PIE update interval: one jiffy at HZ = 1000 (Linux rounds `tupdate` up to jiffies).
const MIN_TUPDATE: Nanos = NSEC_PER_MSEC;

fn check_time(name: &str, d: Dur, min: Nanos) -> Result<(), String> {
    let want = if d.0 < min {
        if min == 1 {
            "a positive duration".to_string()
        } else {
            format!("at least {:?}", show_dur(min))
        }
    } else if d.0 > MAX_TIME_PARAM {
        format!(
            "at most {:?} (Linux's u32 microseconds)",
            show_dur(MAX_TIME_PARAM)
        )
    } else {
        return Ok(());
    };
    Err(format!("{name} = {:?}: expected {want}", show_dur(d.0)))
}

fn check_codel(target: Dur, interval: Dur, ce_threshold: Option<Dur>) -> Result<(), String> {
    check_time("interval", interval, 1)?;
    check_time("target", target, 0)?;
    if let Some(ce) = ce_threshold {
        check_time("ce_threshold", ce, 0)?;
    }
    if target.0 >= interval.0 {
        return Err(format!(
            "target = {:?}: expected less than interval = {:?}",
            show_dur(target.0),
            show_dur(interval.0)
        ));
    }
    Ok(())
}

fn check_at_least_mtu(name: &str, bytes: Bytes, mtu: u32) -> Result<(), String> {
    if bytes < mtu as Bytes {
        return Err(format!(
            "{name} = \"{bytes}b\": expected at least the MTU ({mtu} bytes)"
        ));
    }
    Ok(())
}

fn codel_params(
    mtu: u32,
    target: Dur,
    interval: Dur,
    ecn: bool,
    ce_threshold: Option<Dur>,
    law: ControlLaw,
) -> CodelParams {
    CodelParams {
        target: target.0,
        interval: interval.0,
        mtu,
        ecn,
        ce_threshold: ce_threshold.map(|d| d.0),
        law,
    }
}

impl QdiscSpec {
    /// The qdisc's name (its `kind`).
    pub fn name(&self) -> &'static str {
        match self {
            QdiscSpec::Pfifo { .. } => "pfifo",
            QdiscSpec::Bfifo { .. } => "bfifo",
            QdiscSpec::PfifoFast { .. } => "pfifo_fast",
            QdiscSpec::Codel { .. } => "codel",
            QdiscSpec::FqCodel { .. } => "fq_codel",
            QdiscSpec::Pie { .. } => "pie",
            QdiscSpec::EcnStep { .. } => "ecn_step",
        }
    }

    /// pfifo with the Linux defaults: 1000 packets, tail drop.
    pub fn default_pfifo() -> Self {
        QdiscSpec::Pfifo {
            limit: txqueuelen(),
            head_drop: false,
        }
    }

    /// pfifo_fast with the Linux defaults, the kernel's default qdisc.
    pub fn default_pfifo_fast() -> Self {
        QdiscSpec::PfifoFast {
            limit: txqueuelen(),
        }
    }

    /// The same qdisc with its buffer limit replaced by `limit`.
    pub fn with_limit(mut self, limit: Buf) -> Self {
        *self.limit_mut() = limit;
        self
    }

    /// The buffer limit, which every kind has.
    fn limit_mut(&mut self) -> &mut Buf {
        match self {
            QdiscSpec::Pfifo { limit, .. }
            | QdiscSpec::Bfifo { limit, .. }
            | QdiscSpec::PfifoFast { limit }
            | QdiscSpec::Codel { limit, .. }
            | QdiscSpec::FqCodel { limit, .. }
            | QdiscSpec::Pie { limit, .. }
            | QdiscSpec::EcnStep { limit, .. } => limit,
        }
    }

    /// The buffer limit (read through a copy: the spec is a small value without heap data).
    pub fn limit(&self) -> Buf {
        *self.clone().limit_mut()
    }

    /// Check the parameters that do not depend on the path (MTU, BDP).
    pub fn validate(&self) -> Result<(), String> {
        check_limit(&self.limit())?;
        match *self {
            QdiscSpec::Pfifo { .. } | QdiscSpec::Bfifo { .. } | QdiscSpec::PfifoFast { .. } => {}
            QdiscSpec::Codel {
                target,
                interval,
                ce_threshold,
                ..
            } => check_codel(target, interval, ce_threshold)?,
            QdiscSpec::FqCodel {
                flows,
                target,
                interval,
                ce_threshold,
                memory_limit,
                drop_batch_size,
                ..
            } => {
                check_codel(target, interval, ce_threshold)?;
                if flows == 0 || flows > FQ_CODEL_MAX_FLOWS {
                    return Err(format!(
                        "flows = {flows}: expected 1 to {FQ_CODEL_MAX_FLOWS} flow queues"
                    ));
                }
                if drop_batch_size == 0 {
                    return Err("drop_batch_size = 0: expected at least 1 packet".to_string());
                }
                if memory_limit.0 == 0 {
                    return Err("memory_limit = \"0b\": expected a positive size".to_string());
                }
            }
            QdiscSpec::Pie {
                target,
                tupdate,
                alpha,
                beta,
                ..
            } => {
                check_time("target", target, 0)?;
                check_time("tupdate", tupdate, MIN_TUPDATE)?;
                for (name, v) in [("alpha", alpha), ("beta", beta)] {
                    if v > PIE_MAX_GAIN {
                        return Err(format!(
                            "{name} = {v}: expected 0 to {PIE_MAX_GAIN} (units of 1/16)"
                        ));
                    }
                }
            }
            QdiscSpec::EcnStep { k, .. } => {
                if k == 0 {
                    return Err("k = 0: expected a marking threshold of at least 1 packet".into());
                }
            }
        }
        Ok(())
    }

    /// Build the qdisc for a path of `bdp_bytes` and `mtu`; `rng` is the qdisc's own random
    /// stream (PIE's drops, fq_codel's hash perturbation).
    pub fn build(&self, bdp_bytes: u64, mtu: u32, mut rng: Rng) -> Result<AnyQdisc, String> {
        self.validate()?;
        if mtu == 0 {
            return Err("mtu = 0: expected a positive MTU in bytes".to_string());
        }
        let (packets, bytes) = self.limit().0.resolve(bdp_bytes, mtu);
        Ok(match *self {
            QdiscSpec::Pfifo { head_drop, .. } => {
                Fifo::new(FifoLimit::Packets(packets), head_drop).into()
            }
            QdiscSpec::Bfifo { head_drop, .. } => {
                check_at_least_mtu("limit", bytes, mtu)?;
                Fifo::new(FifoLimit::Bytes(bytes), head_drop).into()
            }
            QdiscSpec::PfifoFast { .. } => PfifoFast::new(packets).into(),
            QdiscSpec::Codel {
                target,
                interval,
                ecn,
                ce_threshold,
                control_law,
                ..
            } => {
                let params = codel_params(mtu, target, interval, ecn, ce_threshold, control_law);
                AnyQdisc::other(Codel::new(packets, params))
            }
            QdiscSpec::FqCodel {
                flows,
                quantum,
                target,
                interval,
                ecn,
                ce_threshold,
                memory_limit,
                drop_batch_size,
                control_law,
                ..
            } => {
                check_at_least_mtu("quantum", quantum.0, mtu)?;
                check_at_least_mtu("memory_limit", memory_limit.0, mtu)?;
                let quantum = u32::try_from(quantum.0).map_err(|_| {
                    format!(
                        "quantum = \"{}b\": expected at most {} bytes",
                        quantum.0,
                        u32::MAX
                    )
                })?;
                let params = FqCodelParams {
                    flows,
                    quantum,
                    limit: packets,
                    memory_limit: memory_limit.0,
                    drop_batch_size,
                    codel: codel_params(mtu, target, interval, ecn, ce_threshold, control_law),
                };
                let seed = ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64;
                FqCodel::new(params, seed).into()
            }
            QdiscSpec::Pie {
                target,
                tupdate,
                alpha,
                beta,
                ecn,
                bytemode,
                dq_rate_estimator,
                ..
            } => {
                let params = PieParams {
                    target: target.0,
                    tupdate: tupdate.0,
                    limit: packets,
                    alpha,
                    beta,
                    ecn,
                    bytemode,
                    dq_rate_estimator,
                    mtu,
                };
                AnyQdisc::other(Pie::new(params, rng))
            }
            QdiscSpec::EcnStep { k, .. } => {
                if k >= packets {
                    return Err(format!(
                        "k = {k}: expected fewer than limit ({packets} packets), or nothing is \
                         ever marked"
                    ));
                }
                step_fifo(packets, k).into()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{pkt, Held};
    use super::super::Qdisc;
    use super::*;

    fn json(s: &str) -> Result<QdiscSpec, String> {
        serde_json::from_str(s).map_err(|e| e.to_string())
    }

    fn toml_spec(s: &str) -> Result<QdiscSpec, String> {
        toml::from_str(s).map_err(|e| e.to_string())
    }

    fn build_err(spec: &QdiscSpec) -> String {
        spec.build(125_000, 1500, Rng::new(1, 1)).err().unwrap()
    }

    #[test]
    fn defaults_are_the_linux_ones() {
        assert_eq!(
            json(r#"{"kind": "fq_codel"}"#).unwrap(),
            QdiscSpec::FqCodel {
                limit: Buf(Buffer::Packets(10240)),
                flows: 1024,
                quantum: Size(1514),
                target: Dur(5 * NSEC_PER_MSEC),
                interval: Dur(100 * NSEC_PER_MSEC),
                ecn: true,
                ce_threshold: None,
                memory_limit: Size(32 * 1024 * 1024),
                drop_batch_size: 64,
                control_law: ControlLaw::Linux,
            }
        );
        assert_eq!(
            toml_spec("kind = \"pie\"").unwrap(),
            QdiscSpec::Pie {
                limit: Buf(Buffer::Packets(1000)),
                target: Dur(15 * NSEC_PER_MSEC),
                tupdate: Dur(15 * NSEC_PER_MSEC),
                alpha: 2,
                beta: 20,
                ecn: false,
                bytemode: false,
                dq_rate_estimator: false,
            }
        );
        assert_eq!(
            toml_spec("kind = \"codel\"").unwrap(),
            QdiscSpec::Codel {
                limit: Buf(Buffer::Packets(1000)),
                target: Dur(5 * NSEC_PER_MSEC),
                interval: Dur(100 * NSEC_PER_MSEC),
                ecn: false,
                ce_threshold: None,
                control_law: ControlLaw::Linux,
            }
        );
        assert_eq!(
            json(r#"{"kind": "pfifo"}"#).unwrap(),
            QdiscSpec::Pfifo {
                limit: Buf(Buffer::Packets(1000)),
                head_drop: false
            }
        );
        assert_eq!(
            json(r#"{"kind": "ecn_step"}"#).unwrap(),
            QdiscSpec::EcnStep {
                limit: Buf(Buffer::Packets(1000)),
                k: 20
            }
        );
    }

    #[test]
    fn parses_units_and_round_trips() {
        let s = toml_spec(
            "kind = \"codel\"\nlimit = \"0.5bdp\"\ntarget = \"20ms\"\ninterval = \"200ms\"\n\
             ce_threshold = \"1ms\"\ncontrol_law = \"exact\"",
        )
        .unwrap();
        assert_eq!(
            s,
            QdiscSpec::Codel {
                limit: Buf(Buffer::Bdp(0.5)),
                target: Dur(20 * NSEC_PER_MSEC),
                interval: Dur(200 * NSEC_PER_MSEC),
                ecn: false,
                ce_threshold: Some(Dur(NSEC_PER_MSEC)),
                control_law: ControlLaw::Exact,
            }
        );
        let back: QdiscSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn every_kind_builds_with_defaults_and_reports_its_name() {
        for kind in [
            "pfifo",
            "bfifo",
            "pfifo_fast",
            "codel",
            "fq_codel",
            "pie",
            "ecn_step",
        ] {
            let spec = json(&format!(r#"{{"kind": "{kind}"}}"#)).unwrap();
            assert_eq!(spec.name(), kind);
            let q = spec.build(125_000, 1500, Rng::new(1, 1)).unwrap();
            assert!(q.is_empty());
        }
    }

    /// Every kind stamps the packets it keeps with the enqueue time it was given, whatever the
    /// packet carried; only the plain FIFOs let an idle device bypass them, and only while empty.
    #[test]
    fn every_kind_stamps_enqueue_times_and_only_empty_fifos_bypass() {
        for (kind, bypasses) in [
            ("pfifo", true),
            ("bfifo", true),
            ("pfifo_fast", true),
            ("codel", false),
            ("fq_codel", false),
            ("pie", false),
            ("ecn_step", true),
        ] {
            let spec = json(&format!(r#"{{"kind": "{kind}", "limit": "100p"}}"#)).unwrap();
            let mut q = Held::new(spec.build(125_000, 1500, Rng::new(1, 1)).unwrap());
            assert_eq!(q.bypass(&pkt(0, 1500, 0, 0)), bypasses, "{kind}");
            let st = q.stats();
            assert_eq!(
                (st.enqueued, st.dequeued),
                (bypasses as u64, bypasses as u64)
            );
            q.enqueue(pkt(0, 1500, 1, 3), 7);
            assert!(
                !q.bypass(&pkt(0, 1500, 2, 7)),
                "{kind}: not while a packet waits"
            );
            let got = q.dequeue(7).unwrap();
            assert_eq!((got.seq, got.enqueued), (1, 7), "{kind}");
        }
        // A FIFO keeps to its limit and marking threshold when bypassed.
        let mut small = Fifo::new(FifoLimit::Bytes(1000), false);
        assert!(!small.bypass(&pkt(0, 1500, 0, 0)));
        let mut marks_all = Fifo::new(FifoLimit::Packets(10), false).with_step_marking(0);
        assert!(!marks_all.bypass(&pkt(0, 1500, 0, 0)));
    }

    #[test]
    fn unknown_fields_and_kinds_are_rejected() {
        let e = json(r#"{"kind": "pfifo", "limt": "10p"}"#).unwrap_err();
        assert!(e.contains("unknown field `limt`"), "{e}");
        let e = toml_spec("kind = \"fq_codel\"\ntarget = \"5ms\"\nquantom = 300").unwrap_err();
        assert!(e.contains("unknown field `quantom`"), "{e}");
        let e = json(r#"{"kind": "sfq"}"#).unwrap_err();
        assert!(e.contains("unknown variant `sfq`"), "{e}");
        let e = json(r#"{"kind": "codel", "target": "5 parsecs"}"#).unwrap_err();
        assert!(e.contains("expected a duration unit"), "{e}");
    }

    #[test]
    fn invalid_values_name_the_parameter_value_and_expectation() {
        let cases = [
            (
                r#"{"kind": "pfifo", "limit": "0p"}"#,
                r#"limit = "0p": expected a buffer of at least 1 packet"#,
            ),
            (
                r#"{"kind": "bfifo", "limit": "0bdp"}"#,
                r#"limit = "0bdp": expected a buffer of at least 1 packet"#,
            ),
            (
                r#"{"kind": "ecn_step", "k": 0}"#,
                "k = 0: expected a marking threshold of at least 1 packet",
            ),
            (
                r#"{"kind": "codel", "target": "100ms"}"#,
                r#"target = "100ms": expected less than interval = "100ms""#,
            ),
            (
                r#"{"kind": "codel", "interval": "0ms"}"#,
                r#"interval = "0s": expected a positive duration"#,
            ),
            (
                r#"{"kind": "fq_codel", "flows": 0}"#,
                "flows = 0: expected 1 to 65536 flow queues",
            ),
            (
                r#"{"kind": "fq_codel", "flows": 70000}"#,
                "flows = 70000: expected 1 to 65536 flow queues",
            ),
            (
                r#"{"kind": "fq_codel", "drop_batch_size": 0}"#,
                "drop_batch_size = 0: expected at least 1 packet",
            ),
            (
                r#"{"kind": "fq_codel", "memory_limit": "0b"}"#,
                r#"memory_limit = "0b": expected a positive size"#,
            ),
            (
                r#"{"kind": "pie", "tupdate": "500us"}"#,
                r#"tupdate = "500us": expected at least "1ms""#,
            ),
            (
                r#"{"kind": "pie", "target": "5000s"}"#,
                r#"target = "5000s": expected at most "4294967295us" (Linux's u32 microseconds)"#,
            ),
            (
                r#"{"kind": "fq_codel", "ce_threshold": "7200s"}"#,
                r#"ce_threshold = "7200s": expected at most "4294967295us" (Linux's u32 microseconds)"#,
            ),
            (
                r#"{"kind": "pie", "alpha": 33}"#,
                "alpha = 33: expected 0 to 32 (units of 1/16)",
            ),
            (
                r#"{"kind": "pie", "beta": 40}"#,
                "beta = 40: expected 0 to 32 (units of 1/16)",
            ),
        ];
        for (input, msg) in cases {
            let spec = json(input).unwrap();
            assert_eq!(spec.validate().unwrap_err(), msg, "{input}");
            assert_eq!(build_err(&spec), msg, "{input}");
        }
    }

    #[test]
    fn path_dependent_values_are_checked_at_build() {
        let cases = [
            (
                r#"{"kind": "fq_codel", "quantum": 1000}"#,
                r#"quantum = "1000b": expected at least the MTU (1500 bytes)"#,
            ),
            (
                r#"{"kind": "fq_codel", "memory_limit": "1kb"}"#,
                r#"memory_limit = "1000b": expected at least the MTU (1500 bytes)"#,
            ),
            (
                r#"{"kind": "bfifo", "limit": "1000b"}"#,
                r#"limit = "1000b": expected at least the MTU (1500 bytes)"#,
            ),
            (
                r#"{"kind": "ecn_step", "limit": "20p", "k": 20}"#,
                "k = 20: expected fewer than limit (20 packets), or nothing is ever marked",
            ),
        ];
        for (input, msg) in cases {
            let spec = json(input).unwrap();
            assert_eq!(spec.validate(), Ok(()), "{input}");
            assert_eq!(build_err(&spec), msg, "{input}");
        }
        let spec = json(r#"{"kind": "pfifo"}"#).unwrap();
        assert_eq!(
            spec.build(125_000, 0, Rng::new(1, 1)).err().unwrap(),
            "mtu = 0: expected a positive MTU in bytes"
        );
    }

    #[test]
    fn default_constructors_and_limit_override() {
        assert_eq!(
            QdiscSpec::default_pfifo(),
            json(r#"{"kind": "pfifo"}"#).unwrap()
        );
        assert_eq!(
            QdiscSpec::default_pfifo_fast(),
            json(r#"{"kind": "pfifo_fast"}"#).unwrap()
        );
        let spec = json(r#"{"kind": "fq_codel", "target": "20ms"}"#).unwrap();
        let bdp = Buf(Buffer::Bdp(2.0));
        assert_eq!(
            spec.clone().with_limit(bdp),
            json(r#"{"kind": "fq_codel", "target": "20ms", "limit": "2bdp"}"#).unwrap()
        );
        let zero = spec.with_limit(Buf(Buffer::Packets(0)));
        assert_eq!(
            zero.validate().unwrap_err(),
            r#"limit = "0p": expected a buffer of at least 1 packet"#
        );
    }

    #[test]
    fn bdp_limits_resolve_against_the_path() {
        // 1 BDP of 125000 B at MTU 1500 is 84 packets: the 85th arrival is refused.
        let spec = json(r#"{"kind": "pfifo", "limit": "1bdp"}"#).unwrap();
        let mut q = Held::new(spec.build(125_000, 1500, Rng::new(1, 1)).unwrap());
        for s in 0..85 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        assert_eq!((q.len(), q.dropped.len()), (84, 1));
        // bfifo default: 1000 packets x 1500 B = 1500000 B.
        let spec = json(r#"{"kind": "bfifo"}"#).unwrap();
        let mut q = Held::new(spec.build(125_000, 1500, Rng::new(1, 1)).unwrap());
        for s in 0..1001 {
            q.enqueue(pkt(0, 1500, s, 0), 0);
        }
        assert_eq!((q.bytes(), q.dropped.len()), (1_500_000, 1));
    }
}
