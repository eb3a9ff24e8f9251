//! The scenario's JSON Schema, derived from the serde types of [`crate::scenario`] and the specs
//! they include, with every field's doc comment as its description and its default as serde
//! fills it in. `wificc schema` prints it (`--json`) or renders it as `docs/scenario.md`
//! (`--markdown`); the tests below refuse a field without a description.
//!
//! Quantities (durations, rates, sizes, buffers) carry `x-quantity` with their type's name, so
//! that a renderer can show a default such as `"30000000000ns"` as "30 s". A table that may also
//! be written as the bare name of its `kind` (`txq = "pfifo"`) is an `anyOf` of that name and
//! the table. The Wi-Fi driver's types are described here by hand (their module is not derived):
//! a test ties this description to the fields `DriverSpec` serialises.

use schemars::generate::SchemaSettings;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Value};
use std::borrow::Cow;

use crate::net::wifi::driver::{DriverKind, DriverSpec};
use crate::net::wifi::phy::{ChipsetSpec, PhySpec, PRESETS};
use crate::scenario::{Dscp, Scenario};

/// The scenario's JSON Schema (draft 2020-12), as a scenario is read (deserialised): fields
/// with a default are optional.
pub fn scenario_schema() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator();
    generator.into_root_schema_for::<Scenario>().to_value()
}

/// The `kind` names of an internally tagged enum's schema (`oneOf` of tables whose `kind` is a
/// constant).
fn kinds(schema: &Value) -> Vec<Value> {
    schema
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.pointer("/properties/kind/const").cloned())
        .collect()
}

/// A tagged table that may also be written as the bare name of its `kind`: the names, or a
/// reference to the table's definition.
pub(crate) fn name_or_table<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let reference = generator.subschema_for::<T>().to_value();
    let names = match generator.definitions().get(T::schema_name().as_ref()) {
        Some(table) => kinds(table),
        None => kinds(&T::json_schema(generator).to_value()),
    };
    json_schema!({
        "anyOf": [
            {"type": "string", "enum": names, "description": "the kind's name, with its defaults"},
            reference,
        ]
    })
}

/// The driver as `path.radio.driver` and `ap_driver` take it: a reference to its definition.
pub(crate) fn driver(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<DriverSpec>()
}

impl JsonSchema for Dscp {
    fn schema_name() -> Cow<'static, str> {
        "Dscp".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = crate::scenario::dscp_names().collect();
        json_schema!({
            "description": "A DSCP codepoint: 0..63, or a name (any case) of RFC 2474's class \
                selectors, RFC 2597's assured forwarding or RFC 3246's expedited forwarding.",
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 63},
                {"type": "string", "enum": names},
            ]
        })
    }
}

impl JsonSchema for ChipsetSpec {
    fn schema_name() -> Cow<'static, str> {
        "ChipsetSpec".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        let custom = generator.subschema_for::<PhySpec>().to_value();
        json_schema!({
            "description": "A chipset preset's name, or a custom PHY table.",
            "anyOf": [
                {"type": "string", "enum": names, "description": "a preset (see the chipset table)"},
                custom,
            ]
        })
    }
}

/// An interrupt-moderation table (`tx_status`, `rx`).
fn irq_schema(what: &str) -> Value {
    let timer = |text: &str| json!({"$ref": "#/$defs/Dur", "description": text, "default": "0ns"});
    json!({
        "type": "object",
        "description": format!(
            "{what}: each item is posted `delay` after its event; the interrupt fires `last` after \
             the latest posting or `first` after the first pending one, whichever is earlier (0: \
             that timer is off; both 0: every posting interrupts at once). At most 100 ms each."
        ),
        "additionalProperties": false,
        "properties": {
            "delay": timer("Time from the event (Block Ack end, PPDU end) to its posting."),
            "last": timer("Interrupt this long after the latest posting (ath9k's `rimt_last`)."),
            "first": timer("Interrupt at the latest this long after the first pending posting \
                 (ath9k's `rimt_first`, iwlwifi's interrupt coalescing)."),
        }
    })
}

/// Every driver family, in the order the reference lists them.
pub const DRIVER_KINDS: [DriverKind; 6] = [
    DriverKind::Generic,
    DriverKind::Ath9k,
    DriverKind::Ath9kHtc,
    DriverKind::Ath10k,
    DriverKind::Iwlwifi,
    DriverKind::Firmware,
];

/// What a driver family models (drivers/net/wireless/...; sources in `driver.rs`). The match is
/// exhaustive: a new family does not compile until it is described here.
pub fn driver_kind_text(kind: DriverKind) -> &'static str {
    match kind {
        DriverKind::Generic => {
            "the original wificc model: a 2-aggregate hardware queue filled after each burst, TX \
             status at the Block Ack's end, no interrupt moderation"
        }
        DriverKind::Ath9k => {
            "ath9k (AR92xx/AR93xx PCIe): host aggregation, woken per frame, RX interrupt \
             mitigation"
        }
        DriverKind::Ath9kHtc => {
            "ath9k_htc (AR9271 USB): aggregation on the target, completions as WMI events"
        }
        DriverKind::Ath10k => {
            "ath10k (QCA988x, QCA9377): firmware aggregation behind the HTT descriptor ring"
        }
        DriverKind::Iwlwifi => {
            "iwlwifi (Intel AX201): firmware aggregation behind the TFD queues, Block Ack \
             notifications behind interrupt coalescing"
        }
        DriverKind::Firmware => {
            "a firmware-aggregating access point whose driver publishes nothing of its \
             completion path (no moderation, a 1024-frame ring: assumptions)"
        }
    }
}

impl JsonSchema for DriverSpec {
    fn schema_name() -> Cow<'static, str> {
        "DriverSpec".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let kinds: Vec<&str> = DRIVER_KINDS.iter().map(|k| k.name()).collect();
        let described: Vec<String> = DRIVER_KINDS
            .iter()
            .map(|&k| format!("`{}`: {}", k.name(), driver_kind_text(k)))
            .collect();
        let table = json!({
            "type": "object",
            "description": "A table with `kind` and the values to change; every value left out is \
                 the family's default (`wificc driver list`, docs/fidelity.md).",
            "additionalProperties": false,
            "properties": {
                "kind": {
                    "type": "string", "enum": kinds,
                    "description": format!("The driver family; default the chipset's. {}.", described.join("; ")),
                },
                "aggregation": {
                    "type": "string", "enum": ["host", "firmware"],
                    "description": "Who builds the A-MPDUs: `host` (the driver, from the TXQ, into \
                         a hardware queue of `hw_queue_depth` aggregates) or `firmware` (at \
                         transmit time, from a ring of `ring` frames the host filled).",
                },
                "wake": {
                    "type": "string", "enum": ["per_frame", "per_burst"],
                    "description": "When a host-aggregation driver is asked to build aggregates: \
                         `per_frame`, as each frame reaches mac80211 (ath9k's \
                         `drv_wake_tx_queue`), or `per_burst`, once the frames arriving at one \
                         instant (the segments of one skb) are queued.",
                },
                "ring": {
                    "type": "integer", "minimum": 1, "maximum": 65536,
                    "description": "Firmware aggregation: frames per node handed to the firmware \
                         and not yet completed.",
                    "x-unit": "frames",
                },
                "max_subframes": {
                    "type": "integer", "minimum": 0, "maximum": 1024,
                    "description": "Most MPDUs in one A-MPDU besides the Block Ack window; 0: no \
                         such limit (ath9k: 32, half its window).",
                    "x-unit": "MPDUs",
                },
                "tx_status": irq_schema("TX status (completion) interrupts"),
                "rx": irq_schema("RX interrupts: when received frames reach the host's stack"),
                "tso": {
                    "type": "boolean",
                    "description": "The NIC segments TCP skbs itself (TSO); without it the \
                         kernel segments them in software and TCP Small Queues charges each \
                         segment's own truesize.",
                },
                "sg": {
                    "type": "boolean",
                    "description": "The NIC takes scatter-gather buffers (NETIF_F_SG); without \
                         it software segmentation copies each segment into a buffer of its own, \
                         which costs more truesize.",
                },
                "gro": {
                    "type": "boolean",
                    "description": "The driver hands received frames to mac80211 from a NAPI \
                         poll (ieee80211_rx_napi with its napi), so GRO merges each batch's \
                         in-order TCP segments and the host's TCP acknowledges once per merged \
                         skb (ath10k, iwlwifi: yes; ath9k, ath9k_htc: no).",
                },
            }
        });
        json_schema!({
            "description": "A Wi-Fi driver: a family's name, or a table with `kind` and the values \
                 to change.",
            "anyOf": [{"type": "string", "enum": kinds}, table]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::wifi::driver::{Aggregation, Irq, Wake};
    use crate::net::wifi::phy::ChipsetSpec;
    use crate::parse::Dur;

    /// Every object property under `schema` (following `$ref`s into `defs`, not into one
    /// already on the way there), with its path and whether it has a description; `reached`
    /// collects the definitions followed.
    fn properties(
        schema: &Value,
        defs: &Value,
        at: &str,
        up: &[String],
        reached: &mut Vec<String>,
    ) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/$defs/").to_string();
            if !up.contains(&name) {
                if !reached.contains(&name) {
                    reached.push(name.clone());
                }
                let up = [up, std::slice::from_ref(&name)].concat();
                out.extend(properties(&defs[&name], defs, at, &up, reached));
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for sub in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(properties(sub, defs, at, up, reached));
            }
        }
        if let Some(items) = schema.get("items") {
            out.extend(properties(items, defs, &format!("{at}[]"), up, reached));
        }
        for (name, prop) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let path = if at.is_empty() {
                name.clone()
            } else {
                format!("{at}.{name}")
            };
            let described = prop
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty())
                || name == "kind" && prop.get("const").is_some();
            out.push((path.clone(), described));
            out.extend(properties(prop, defs, &path, up, reached));
        }
        out
    }

    #[test]
    fn every_scenario_field_has_a_description() {
        let schema = scenario_schema();
        let defs = schema["$defs"].clone();
        let fields = properties(&schema, &defs, "", &[], &mut Vec::new());
        assert!(fields.len() > 100, "only {} fields found", fields.len());
        let missing: Vec<&str> = fields
            .iter()
            .filter(|f| !f.1)
            .map(|f| f.0.as_str())
            .collect();
        assert!(
            missing.is_empty(),
            "fields without a doc comment: {missing:?}"
        );
    }

    #[test]
    fn every_definition_is_reached_and_every_field_path_appears() {
        let schema = scenario_schema();
        let defs = schema["$defs"].clone();
        let mut seen = Vec::new();
        let fields = properties(&schema, &defs, "", &[], &mut seen);
        for name in defs.as_object().unwrap().keys() {
            assert!(seen.contains(name), "$defs/{name} is not reached");
        }
        let paths: Vec<&str> = fields.iter().map(|f| f.0.as_str()).collect();
        for p in [
            "seed",
            "path.radio.driver.tx_status.first",
            "path.uplink.schedule[].at",
            "stack.kernel",
            "flows[].dscp",
            "pings[].interval",
        ] {
            assert!(paths.contains(&p), "{p} missing from {paths:?}");
        }
    }

    #[test]
    fn defaults_are_those_serde_fills_in() {
        let schema = scenario_schema();
        assert_eq!(
            schema["properties"]["duration"]["default"],
            json!("30000000000ns")
        );
        assert_eq!(schema["properties"]["seed"]["default"], json!(1));
        assert_eq!(
            schema["$defs"]["StackSpec"]["properties"]["mss"]["default"],
            json!(1448)
        );
        assert_eq!(
            schema["$defs"]["StackSpec"]["properties"]["tsq"]["default"],
            json!("default")
        );
        assert_eq!(schema["required"], json!(["path"]));
        assert_eq!(schema["$defs"]["Dur"]["x-quantity"], json!("Dur"));
    }

    /// The hand-written driver schema names exactly the fields `DriverSpec` serialises (a
    /// field added to `DriverSpec` breaks this literal), and its kinds are `DriverKind`'s.
    #[test]
    fn the_driver_schema_matches_the_driver_spec() {
        let irq = Irq {
            delay: Dur(1),
            last: Dur(2),
            first: Dur(3),
        };
        let full = DriverSpec {
            kind: Some(DriverKind::Ath9k),
            aggregation: Some(Aggregation::Host),
            wake: Some(Wake::PerFrame),
            ring: Some(1),
            max_subframes: Some(1),
            tx_status: Some(irq),
            rx: Some(irq),
            tso: Some(true),
            sg: Some(true),
            gro: Some(true),
        };
        let given = serde_json::to_value(full).unwrap();
        let schema = DriverSpec::json_schema(&mut SchemaGenerator::default()).to_value();
        let table = &schema["anyOf"][1];
        let mut a: Vec<&String> = given.as_object().unwrap().keys().collect();
        let mut b: Vec<&String> = table["properties"].as_object().unwrap().keys().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        let irq_keys: Vec<&String> = given["rx"].as_object().unwrap().keys().collect();
        let schema_irq: Vec<&String> = table["properties"]["rx"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(irq_keys, schema_irq);
        for kind in DRIVER_KINDS {
            let k: DriverKind = serde_json::from_value(json!(kind.name())).unwrap();
            assert_eq!(k, kind);
        }
        for v in ["host", "firmware"] {
            serde_json::from_value::<Aggregation>(json!(v)).unwrap();
        }
        for v in ["per_frame", "per_burst"] {
            serde_json::from_value::<Wake>(json!(v)).unwrap();
        }
        // The bounds the schema states are those `resolve` applies.
        let chipset = ChipsetSpec::default();
        let with = |f: &dyn Fn(&mut DriverSpec)| {
            let mut d = DriverSpec::default();
            f(&mut d);
            d.resolve(&chipset, None)
        };
        let props = &table["properties"];
        let bound = |k: &str, b: &str| u32::try_from(props[k][b].as_u64().unwrap()).unwrap();
        let (lo, hi) = (bound("ring", "minimum"), bound("ring", "maximum"));
        assert!(with(&|d| d.ring = Some(lo)).is_ok() && with(&|d| d.ring = Some(hi)).is_ok());
        assert!(
            with(&|d| d.ring = Some(lo - 1)).is_err() && with(&|d| d.ring = Some(hi + 1)).is_err()
        );
        let hi = bound("max_subframes", "maximum");
        assert!(with(&|d| d.max_subframes = Some(0)).is_ok());
        assert!(with(&|d| d.max_subframes = Some(hi)).is_ok());
        assert!(with(&|d| d.max_subframes = Some(hi + 1)).is_err());
    }
}
