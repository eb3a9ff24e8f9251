//! The Wi-Fi medium: one BSS (an access point and its stations in one collision domain) with
//! mac80211-style TXQs, a driver hardware queue of A-MPDUs, EDCA contention, Block Acks and
//! selective retransmission.
//!
//! The path of a packet through a node's radio follows Linux: mac80211 puts it in the TXQ of its
//! destination and access category (mac80211's FQ-CoDel, target 20 ms, or a FIFO; see [`txq`]);
//! the driver pulls packets from the TXQ only when its hardware queue has room for another
//! aggregate (ath9k keeps `ATH_AGGR_MIN_QDEPTH` = 2 aggregates per hardware queue,
//! drivers/net/wireless/ath/ath9k/xmit.c), and builds one A-MPDU from whatever the TXQ holds at
//! that moment, up to the Block Ack window, the largest A-MPDU the receiver accepts and the
//! airtime cap of one PPDU. So the aggregate grows with the backlog at the radio, and whatever
//! keeps that backlog small upstream (TCP Small Queues, pacing) keeps aggregates small: nothing
//! else in this model decides their size. Packets that arrive in one burst (the segments of one
//! TSO skb) reach the driver together, because the driver is woken once the burst is queued, as
//! mac80211's `wake_tx_queue` schedules the driver's tasklet.
//!
//! The head aggregate of each hardware queue contends for the medium with EDCA ([`edca`]). A
//! PPDU lasts its preamble and data symbols ([`phy`]); if it is alone on the air it is received,
//! each MPDU independently lost with probability `mpdu_error_rate`, and SIFS later the receiver
//! answers with a Block Ack at 24 Mbit/s. The transmitter then knows each MPDU's fate: an
//! acknowledged MPDU is TX-completed (this is what frees TCP Small Queues budget), a lost one
//! goes back to be retransmitted at the head of the next aggregate, within the Block Ack window,
//! until it has been retransmitted `retry_limit` times and fails once more: then it is dropped.
//! Two EDCAFs of different nodes whose backoffs end in the same slot collide: neither PPDU is
//! received, no Block Ack comes, and after the time a Block Ack would have taken both
//! retransmit the same aggregate with a doubled contention window. Two EDCAFs of one node that
//! reach zero together do not collide on the air: the higher access category transmits and the
//! lower behaves as if it had collided (802.11-2020 clause 10, EDCA internal collisions). A
//! PPDU none of whose MPDUs arrives draws no Block Ack either, and is retransmitted the same
//! way; every failed transmission counts towards each MPDU's retry limit (default 30, ath9k's
//! `ATH_MAX_SW_RETRIES`, drivers/net/wireless/ath/ath9k/ath9k.h). Rate control is not
//! modelled: every PPDU uses the chipset's MCS.
//!
//! The "analytic" MAC replaces contention and the PHY's framing by the aggregation model of the
//! Wi-Fi 6 study (Grazia, "Future of TCP on Wi-Fi 6", 2021, eq. 3): a PPDU of k packets of l bytes lasts
//! `TxTw(k) = (k l + l_oh) 8 / r + t_oh`, no contention and no Block Ack, back to back, so a
//! sender that always has k packets queued gets `Thr(k) = k l 8 / TxTw(k)`.
//!
//! The whole BSS keeps one pending event: [`Bss::accept`] and [`Bss::wake`] return the next
//! instant anything can happen (a PPDU ending, a Block Ack ending, a backoff reaching zero, a
//! driver run after new packets), and stale wake-ups are ignored through a [`Timer`]. Buffers
//! are rings and reused vectors: nothing allocates per packet once the queues have grown.
//!
//! [`Timer`]: crate::sim::Timer

mod bss;
pub mod driver;
pub mod edca;
pub mod phy;
pub mod txq;

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

pub use bss::Bss;
pub use driver::{Aggregation, Driver, DriverKind, DriverSpec, Irq, Wake};
pub use edca::Ac;
pub use phy::{ChipsetSpec, Phy, PhySpec, Preset, Standard, PRESETS};
pub use txq::TxqSpec;

use crate::metrics::Histogram;
use crate::net::packet::{PacketRef, Packets};
use crate::parse::{Dur, Rate, Size};
use crate::units::{Nanos, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

/// Longest PPDU, the 4 ms TXOP/PPDU limit ath9k and ath10k aggregate to.
pub const AIRTIME_CAP: Nanos = 4 * NSEC_PER_MSEC;
/// Longest PPDU an L-SIG can announce (aPPDUMaxTime of the HT, VHT and HE PHYs): 5.484 ms.
pub const PPDU_MAX_TIME: Nanos = 5_484 * NSEC_PER_USEC;
/// Retransmissions an MPDU gets before it is dropped (ath9k `ATH_MAX_SW_RETRIES`): it is
/// dropped when its transmission fails for the 31st time.
pub const RETRY_LIMIT: u32 = 30;
/// Per-transmission overhead of the analytic MAC: the Wi-Fi 6 study's t_oh, 0.5 ms (its Table 1).
pub const ANALYTIC_T_OH: Nanos = NSEC_PER_MSEC / 2;
/// Per-transmission frame overhead of the analytic MAC: l_oh, 48 bytes (the same Table 1).
pub const ANALYTIC_L_OH: u64 = 48;
/// Largest analytic overheads accepted: far beyond any PHY, small enough that time and byte
/// counts cannot overflow.
const ANALYTIC_MAX_T_OH: Nanos = NSEC_PER_SEC;
const ANALYTIC_MAX_L_OH: u64 = 1 << 20;

fn analytic_t_oh() -> Dur {
    Dur(ANALYTIC_T_OH)
}
fn analytic_l_oh() -> Size {
    Size(ANALYTIC_L_OH)
}

/// Where the access point's EDCA parameters come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApEdca {
    /// hostapd's defaults for the AP's own queues (`tx_queue_data0..3`).
    #[default]
    Hostapd,
    /// The same parameter set as the stations.
    Station,
}

/// How the medium is shared.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum MacMode {
    /// EDCA contention with the PHY's framing and timing.
    #[default]
    Edca,
    /// No contention: each PPDU of k packets of l bytes takes (k l + l_oh) 8 / r + t_oh.
    Analytic {
        /// Fixed time per transmission (contention, preamble, acknowledgement), `t_oh`;
        /// default 0.5 ms (the Wi-Fi 6 study's model).
        #[serde(default = "analytic_t_oh")]
        t_oh: Dur,
        /// Framing bytes per transmission, `l_oh`; default 48.
        #[serde(default = "analytic_l_oh")]
        l_oh: Size,
        /// PHY rate `r`; default: the chipset's PHY rate.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<Rate>,
    },
}

fn airtime_cap() -> Dur {
    Dur(AIRTIME_CAP)
}
fn retry_limit() -> u32 {
    RETRY_LIMIT
}
fn yes() -> bool {
    true
}

/// A Wi-Fi BSS as a scenario writes it. Every field is optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WifiSpec {
    /// A preset name or a custom PHY table; default "ath9k".
    #[serde(default)]
    pub chipset: ChipsetSpec,
    /// "fq_codel" (mac80211, default), "pfifo", or a table with `kind` and parameters.
    #[serde(default, deserialize_with = "name_or_table")]
    #[schemars(schema_with = "crate::schema::name_or_table::<TxqSpec>")]
    pub txq: TxqSpec,
    /// The access point's TXQ discipline, as `txq`; default the same as the stations'. The
    /// studies' APs were other machines with their own settings (BBRp's ran pfifo_fast above
    /// mac80211 for its downloads, the clients FQ-CoDel), so a scenario may set them apart.
    #[serde(
        default,
        deserialize_with = "some_name_or_table",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "crate::schema::name_or_table::<TxqSpec>")]
    pub ap_txq: Option<TxqSpec>,
    /// The driver: a family's name ("generic", "ath9k", "ath9k_htc", "ath10k", "iwlwifi") or a
    /// table with `kind` and the values to change (see [`driver`]); default the chipset's.
    #[serde(default, deserialize_with = "driver_name_or_table")]
    #[schemars(schema_with = "crate::schema::driver")]
    pub driver: DriverSpec,
    /// The access point's driver, as `driver`; default the same as the stations'. The studies'
    /// APs ran other chips (the Wi-Fi 6 study's ASUS RT-AX92U, Broadcom): see the presets.
    #[serde(
        default,
        deserialize_with = "some_driver_name_or_table",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "crate::schema::driver")]
    pub ap_driver: Option<DriverSpec>,
    /// Aggregates a host-aggregation driver keeps per hardware queue; default the driver's
    /// (ath9k and generic: 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-unit" = "aggregates"))]
    pub hw_queue_depth: Option<u32>,
    /// Longest PPDU; default 4 ms.
    #[serde(default = "airtime_cap")]
    pub airtime_cap: Dur,
    /// Largest A-MPDU, bytes; default the standard's (HT 65,535, VHT 1,048,575, HE 6,500,631).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ampdu_len: Option<Size>,
    /// Block Ack window, MPDUs; default the standard's (HT/VHT 64, HE 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-unit" = "MPDUs"))]
    pub ba_window: Option<u32>,
    /// MCS (per stream) of every link, in place of the chipset's; default the chipset's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcs: Option<u32>,
    /// MCS of each station's link (both directions), station 1 first; stations beyond the
    /// list use `mcs`. Rate control is not modelled: a link keeps its MCS.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub station_mcs: Vec<u32>,
    /// Probability that an MPDU is received in error, independently; default 0.
    #[serde(default)]
    pub mpdu_error_rate: f64,
    /// Retransmissions an MPDU gets; it is dropped when its (retry_limit + 1)th transmission
    /// fails. Default 30.
    #[serde(default = "retry_limit")]
    #[schemars(extend("x-unit" = "retransmissions"))]
    pub retry_limit: u32,
    /// "edca" (default), "analytic", or a table `{kind = "analytic", t_oh, l_oh, rate}`.
    #[serde(default, deserialize_with = "name_or_table")]
    #[schemars(schema_with = "crate::schema::name_or_table::<MacMode>")]
    pub mac: MacMode,
    /// The access point's EDCA parameters: "hostapd" (default: hostapd.conf's `tx_queue_data*`,
    /// VO/VI AIFSN 1, BE CWmax 63) or "station" (the stations' default parameter set).
    #[serde(default)]
    pub ap_edca: ApEdca,
    /// Map DSCP to access categories (default on); off: everything is best effort.
    #[serde(default = "yes")]
    pub wmm: bool,
    /// Aggregate voice (AC_VO) frames. Default: as the chipset's driver does (see
    /// [`Preset::aggregates_vo`]); without a Block Ack session, the precondition of A-MPDU, a
    /// VO frame goes alone and gets a normal Ack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_vo: Option<bool>,
}

impl Default for WifiSpec {
    fn default() -> Self {
        WifiSpec {
            chipset: ChipsetSpec::default(),
            txq: TxqSpec::default(),
            ap_txq: None,
            driver: DriverSpec::default(),
            ap_driver: None,
            hw_queue_depth: None,
            airtime_cap: airtime_cap(),
            max_ampdu_len: None,
            ba_window: None,
            mcs: None,
            station_mcs: Vec::new(),
            mpdu_error_rate: 0.0,
            retry_limit: RETRY_LIMIT,
            mac: MacMode::Edca,
            ap_edca: ApEdca::Hostapd,
            wmm: true,
            aggregate_vo: None,
        }
    }
}

impl WifiSpec {
    /// The chipset's PHY.
    pub fn phy(&self) -> Result<Phy, String> {
        self.chipset.resolve()
    }

    /// The PHY of station `sta`'s link (1-based; 0: the default link), with the MCS the
    /// scenario gives it.
    pub fn link_phy(&self, sta: usize) -> Result<Phy, String> {
        let chosen = sta
            .checked_sub(1)
            .and_then(|i| self.station_mcs.get(i).copied())
            .map(|m| (m, format!("station_mcs[{}]", sta - 1)))
            .or(self.mcs.map(|m| (m, "mcs".to_string())));
        let Some((mcs, field)) = chosen else {
            return self.phy();
        };
        let spec = PhySpec {
            mcs,
            ..self.chipset.spec()?
        };
        spec.resolve()
            .map_err(|e| e.replacen("chipset.mcs", &field, 1))
    }

    /// The stations' driver, resolved from the chipset and the overrides.
    pub fn driver(&self) -> Result<Driver, String> {
        self.driver.resolve(&self.chipset, self.hw_queue_depth)
    }

    /// The access point's driver: `ap_driver`, or the stations' (a client-only chip's BSS:
    /// the `firmware` AP, see [`Driver::ap_for`]).
    pub fn ap_driver(&self) -> Result<Driver, String> {
        match &self.ap_driver {
            Some(d) => d
                .resolve(&self.chipset, self.hw_queue_depth)
                .map_err(|e| e.replacen("driver.", "ap_driver.", 1)),
            None => {
                let sta = self.driver()?;
                match Driver::ap_for(sta.kind) {
                    k if k == sta.kind => Ok(sta),
                    k => Ok(Driver::defaults(k)),
                }
            }
        }
    }

    /// Check every field; errors name the field, the value and what is expected.
    pub fn validate(&self) -> Result<(), String> {
        self.phy()?;
        self.link_phy(0)?;
        for sta in 1..=self.station_mcs.len() {
            self.link_phy(sta)?;
        }
        self.txq.validate()?;
        if let Some(ap) = &self.ap_txq {
            // The same rules under the field's own name ("ap_txq.limit = ...").
            ap.validate().map_err(|e| e.replace("txq.", "ap_txq."))?;
        }
        self.driver()?;
        self.ap_driver()?;
        if self.airtime_cap.0 == 0 || self.airtime_cap.0 > PPDU_MAX_TIME {
            return Err(format!(
                "airtime_cap = \"{}ns\": expected a positive duration of at most 5.484 ms \
                 (aPPDUMaxTime)",
                self.airtime_cap.0
            ));
        }
        if let Some(Size(0)) = self.max_ampdu_len {
            return Err("max_ampdu_len = \"0b\": expected a positive size".into());
        }
        if let Some(w) = self.ba_window {
            if w == 0 || w > txq::MAX_BA_WINDOW {
                return Err(format!(
                    "ba_window = {w}: expected 1 to {} MPDUs",
                    txq::MAX_BA_WINDOW
                ));
            }
        }
        let p = self.mpdu_error_rate;
        if !(0.0..=1.0).contains(&p) {
            return Err(format!(
                "mpdu_error_rate = {p}: expected a probability from 0 to 1"
            ));
        }
        if let MacMode::Analytic { t_oh, l_oh, rate } = self.mac {
            if rate == Some(Rate(0)) {
                return Err("mac.rate = \"0bit\": expected a positive rate".into());
            }
            if t_oh.0 > ANALYTIC_MAX_T_OH {
                return Err(format!(
                    "mac.t_oh = \"{}ns\": expected at most 1 s per transmission",
                    t_oh.0
                ));
            }
            if l_oh.0 > ANALYTIC_MAX_L_OH {
                return Err(format!(
                    "mac.l_oh = \"{}b\": expected at most 1 MB per transmission",
                    l_oh.0
                ));
            }
        }
        Ok(())
    }
}

/// Deserialize a tagged table from either the table or the bare name of its `kind`.
fn name_or_table<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    struct V<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a name or a table with a `kind`")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            T::deserialize(de::value::MapDeserializer::new(std::iter::once((
                "kind", v,
            ))))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(V(PhantomData))
}

/// A driver from a family's name or a table.
fn driver_name_or_table<'de, D: Deserializer<'de>>(d: D) -> Result<DriverSpec, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = DriverSpec;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a driver name or a table with `kind` and values to change")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<DriverSpec, E> {
            let kind = DriverKind::deserialize(de::value::StrDeserializer::<E>::new(v))?;
            Ok(DriverSpec {
                kind: Some(kind),
                ..DriverSpec::default()
            })
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<DriverSpec, A::Error> {
            DriverSpec::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(V)
}

fn some_name_or_table<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    name_or_table(d).map(Some)
}

fn some_driver_name_or_table<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<DriverSpec>, D::Error> {
    driver_name_or_table(d).map(Some)
}

/// Where a BSS puts what it produces.
pub struct WifiOut<'a> {
    /// The packets; those dropped (TXQ overflow or AQM, and the retry limit) are listed in
    /// its `dropped`.
    pub pkts: &'a mut Packets,
    /// MPDUs received correctly at their destination, in delivery order (the world forwards
    /// them).
    pub delivered: &'a mut VecDeque<PacketRef>,
    /// TX completions: (flow, truesize) of every Data packet with truesize > 0 once its fate is
    /// known at the sender's radio: acknowledged by a Block Ack, or dropped (TXQ overflow, AQM,
    /// retry limit). Dropped packets are reported here too, so the sender's TSQ budget is
    /// released exactly once, from this list.
    pub completed: &'a mut Vec<(u32, u32)>,
}

/// Counters and distributions of one node's radio.
#[derive(Debug, Clone, Default)]
pub struct NodeStats {
    /// MPDUs per PPDU, every transmission attempt, from `record_from` on.
    pub ampdu_size: Histogram,
    /// Time packets spent in the TXQ, ns, at the moment the driver took them, from
    /// `record_from` on.
    pub txq_sojourn: Histogram,
    /// TX-status interrupts the host processed (each runs the sockets' TSQ handlers once);
    /// without TX-status moderation, one per settled aggregate.
    pub tx_interrupts: u64,
    /// MCS (per stream) of every PPDU sent, from `record_from` on.
    pub mcs: Histogram,
    /// TX-completion latency, ns: from a packet's arrival at the radio to the host's
    /// processing of its TX status (when TCP Small Queues releases it), acknowledged packets
    /// from `record_from` on.
    pub tx_completion: Histogram,
    /// Medium time of this node's transmissions: PPDUs plus SIFS and Block Ack (EDCA), or
    /// TxTw (analytic), collisions included.
    pub airtime: Nanos,
    /// PPDUs sent (every attempt).
    pub ppdus: u64,
    /// PPDUs that collided on the air or lost an internal collision.
    pub collisions: u64,
    /// Failed MPDU transmissions (each one a retry to come or a drop).
    pub mpdu_retries: u64,
    /// MPDUs acknowledged.
    pub mpdus_acked: u64,
    /// IP bytes of the MPDUs acknowledged.
    pub bytes_acked: u64,
    /// Packets dropped by the TXQ (overflow or AQM).
    pub txq_drops: u64,
    /// MPDUs dropped at the retry limit.
    pub retry_drops: u64,
}

impl NodeStats {
    /// Mean MPDUs per PPDU.
    pub fn ampdu_mean(&self) -> Option<f64> {
        self.ampdu_size.mean()
    }

    /// All drops.
    pub fn drops(&self) -> u64 {
        self.txq_drops + self.retry_drops
    }
}

/// Statistics of a BSS: node 0 is the AP, nodes 1.. the stations.
#[derive(Debug, Clone, Default)]
pub struct WifiStats {
    pub nodes: Vec<NodeStats>,
}

#[cfg(test)]
mod spec_tests {
    use super::*;

    fn toml_spec(s: &str) -> Result<WifiSpec, String> {
        toml::from_str(s).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults() {
        let spec = toml_spec("").unwrap();
        assert_eq!(spec, WifiSpec::default());
        assert_eq!(spec.chipset, ChipsetSpec::Preset("ath9k".into()));
        assert_eq!(spec.hw_queue_depth, None);
        assert_eq!(spec.driver().unwrap().hw_queue_depth, 2);
        assert_eq!(spec.driver().unwrap().kind, DriverKind::Ath9k);
        assert_eq!(spec.airtime_cap, Dur(4_000_000));
        assert_eq!(spec.retry_limit, 30);
        assert!(spec.wmm);
        assert_eq!(spec.validate(), Ok(()));
    }

    #[test]
    fn the_ap_txq_is_read_as_txq_and_named_in_its_errors() {
        let spec = toml_spec("txq = \"fq_codel\"\nap_txq = \"pfifo\"").unwrap();
        assert_eq!(spec.ap_txq, Some(TxqSpec::Pfifo { limit: 1000 }));
        assert_eq!(toml_spec("").unwrap().ap_txq, None);
        let spec = toml_spec("[ap_txq]\nkind = \"pfifo\"\nlimit = 0").unwrap();
        assert_eq!(
            spec.validate().unwrap_err(),
            "ap_txq.limit = 0: expected at least 1 packet"
        );
        assert!(toml_spec("ap_txq = \"sfq\"").is_err());
    }

    #[test]
    fn names_or_tables() {
        let spec =
            toml_spec("chipset = \"ax201\"\ntxq = \"pfifo\"\nmac = \"analytic\"\nba_window = 1024")
                .unwrap();
        assert_eq!(spec.txq, TxqSpec::Pfifo { limit: 1000 });
        assert_eq!(
            spec.mac,
            MacMode::Analytic {
                t_oh: Dur(500_000),
                l_oh: Size(48),
                rate: None
            }
        );
        let spec = toml_spec(
            "[txq]\nkind = \"fq_codel\"\ntarget = \"5ms\"\n[mac]\nkind = \"analytic\"\n\
             rate = \"2.4gbit\"\n[chipset]\nstandard = \"he\"\nwidth_mhz = 80\nstreams = 1\nmcs = 5",
        )
        .unwrap();
        let TxqSpec::FqCodel { target, limit, .. } = spec.txq else {
            panic!("{:?}", spec.txq)
        };
        assert_eq!((target, limit), (Dur(5_000_000), 8192));
        let MacMode::Analytic { rate, .. } = spec.mac else {
            panic!("{:?}", spec.mac)
        };
        assert_eq!(rate, Some(Rate(2_400_000_000)));
        assert_eq!(spec.validate(), Ok(()));
        let back: WifiSpec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(back, spec);
    }

    #[test]
    fn unknown_names_and_fields_are_rejected() {
        let e = toml_spec("txq = \"sfq\"").unwrap_err();
        assert!(e.contains("unknown variant `sfq`"), "{e}");
        let e = toml_spec("mac = \"dcf\"").unwrap_err();
        assert!(e.contains("unknown variant `dcf`"), "{e}");
        let e = toml_spec("hw_depth = 2").unwrap_err();
        assert!(e.contains("unknown field `hw_depth`"), "{e}");
        let e = toml_spec("[mac]\nkind = \"analytic\"\ntoh = \"1ms\"").unwrap_err();
        assert!(e.contains("unknown field `toh`"), "{e}");
    }

    #[test]
    fn invalid_values_name_field_value_and_expectation() {
        let cases = [
            (
                "hw_queue_depth = 0",
                "hw_queue_depth = 0: expected 1 to 1024 aggregates",
            ),
            (
                "airtime_cap = \"6ms\"",
                "airtime_cap = \"6000000ns\": expected a positive duration of at most 5.484 ms \
                 (aPPDUMaxTime)",
            ),
            ("ba_window = 0", "ba_window = 0: expected 1 to 1024 MPDUs"),
            (
                "ba_window = 2048",
                "ba_window = 2048: expected 1 to 1024 MPDUs",
            ),
            (
                "max_ampdu_len = 0",
                "max_ampdu_len = \"0b\": expected a positive size",
            ),
            (
                "mpdu_error_rate = 1.5",
                "mpdu_error_rate = 1.5: expected a probability from 0 to 1",
            ),
            (
                "mpdu_error_rate = nan",
                "mpdu_error_rate = NaN: expected a probability from 0 to 1",
            ),
            (
                "[mac]\nkind = \"analytic\"\nrate = 0",
                "mac.rate = \"0bit\": expected a positive rate",
            ),
            (
                "[mac]\nkind = \"analytic\"\nt_oh = \"2s\"",
                "mac.t_oh = \"2000000000ns\": expected at most 1 s per transmission",
            ),
            (
                "[mac]\nkind = \"analytic\"\nl_oh = \"2mb\"",
                "mac.l_oh = \"2000000b\": expected at most 1 MB per transmission",
            ),
            (
                "[txq]\nkind = \"fq_codel\"\nflows = 0",
                "txq.flows = 0: expected 1 to 65536 flow queues",
            ),
            (
                "[chipset]\nstandard = \"ht\"\nwidth_mhz = 80\nstreams = 1\nmcs = 7",
                "chipset.width_mhz = 80: expected 20 or 40 MHz for HT",
            ),
        ];
        for (input, msg) in cases {
            let spec = toml_spec(input).unwrap();
            assert_eq!(spec.validate().unwrap_err(), msg, "{input}");
        }
    }
}
