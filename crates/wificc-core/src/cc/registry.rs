//! Name -> constructor registry of congestion controls, with each algorithm's parameter table
//! for `wificc cc list|show` and the validation of scenario parameters.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::CongestionControl;

/// A parameter of an algorithm, as `wificc cc show` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct ParamInfo {
    pub name: String,
    pub default: Value,
}

/// Builds an algorithm from its parameter map.
pub type MakeFn = fn(&Map<String, Value>) -> Result<Box<dyn CongestionControl>, String>;

/// A registered congestion control.
pub struct CcInfo {
    pub name: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where its definition comes from (kernel file, paper).
    pub source: &'static str,
    /// Parameters with their defaults (serialised default `Params`).
    pub defaults: fn() -> Value,
    /// Each parameter's JSON Schema, by name: its doc comment as description, and `x-quantity`
    /// for durations and rates (see [`crate::schema`]).
    pub schema: fn() -> Map<String, Value>,
    /// Build an instance from a parameter map (unknown or ill-typed keys are errors).
    pub make: MakeFn,
}

/// An invalid congestion-control name or parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CcError {
    #[error("unknown congestion control {0:?}; expected one of {1}")]
    Unknown(String, String),
    #[error("{0}")]
    BadParam(String),
}

/// Deserialize `Params` from a scenario's parameter map, naming the offending key and value.
pub fn params_from<P: DeserializeOwned>(map: &Map<String, Value>) -> Result<P, String> {
    let v = Value::Object(map.clone());
    serde_path_to_error::deserialize(&v).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            inner
        } else {
            let given = map
                .get(path.split('.').next().unwrap_or(""))
                .cloned()
                .unwrap_or(Value::Null);
            format!("parameter {path} = {given}: {inner}")
        }
    })
}

/// Serialize a default `Params` as the parameter table.
pub fn defaults_of<P: Serialize + Default>() -> Value {
    serde_json::to_value(P::default()).unwrap_or(Value::Null)
}

/// The properties of `P`'s JSON Schema (subschemas inlined), by parameter name.
pub fn schema_of<P: JsonSchema>() -> Map<String, Value> {
    let generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    match generator.into_root_schema_for::<P>().to_value() {
        Value::Object(mut m) => match m.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// Every registered algorithm, in the order `wificc cc list` shows them.
pub fn all() -> &'static [CcInfo] {
    ENTRIES
}

static ENTRIES: &[CcInfo] = &[
    super::reno::INFO,
    super::cubic::INFO,
    super::highspeed::INFO,
    super::veno::INFO,
    super::dctcp::INFO,
    super::vegas::INFO,
    super::yeah::INFO,
    super::nv::INFO,
    super::bbr::INFO,
    super::bbr::bbrp::INFO,
    super::bbr::bbrn::INFO,
    super::bbr::apg::INFO,
    super::bbr::pg::INFO,
    super::bbr3::BBR2_INFO,
    super::bbr3::BBR3_INFO,
    super::bbr3::BBRN3_INFO,
    // registry-entries (one line per algorithm, keep this marker)
];

/// Names of all registered algorithms.
pub fn names() -> Vec<&'static str> {
    ENTRIES.iter().map(|e| e.name).collect()
}

pub fn find(name: &str) -> Option<&'static CcInfo> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// Build the algorithm `name` with `params` (may be empty for the defaults).
pub fn build(
    name: &str,
    params: &Map<String, Value>,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let info = find(name).ok_or_else(|| CcError::Unknown(name.to_string(), names().join(", ")))?;
    (info.make)(params).map_err(CcError::BadParam)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_name_lists_the_choices() {
        let err = build("tahoe", &Map::new()).err().unwrap();
        let msg = err.to_string();
        assert!(
            msg.starts_with("unknown congestion control \"tahoe\"; expected one of reno"),
            "{msg}"
        );
    }

    /// `wificc cc show` describes every parameter: each key of the defaults has a schema with
    /// a description, and the schema names no other key.
    #[test]
    fn every_parameter_has_a_description() {
        for e in all() {
            let defaults = (e.defaults)();
            let schema = (e.schema)();
            let keys: Vec<&String> = defaults.as_object().unwrap().keys().collect();
            let described: Vec<&String> = schema.keys().collect();
            assert_eq!(keys, described, "{}", e.name);
            for (k, s) in &schema {
                let d = s.get("description").and_then(Value::as_str).unwrap_or("");
                assert!(!d.trim().is_empty(), "{}.{k} has no doc comment", e.name);
                // A number says its unit: a quantity's own, or `x-unit`.
                let text = s.to_string();
                let numeric = text.contains("\"integer\"") || text.contains("\"number\"");
                let unit = s.get("x-unit").is_some() || s.get("x-quantity").is_some();
                assert!(!numeric || unit, "{}.{k} has no unit: {s}", e.name);
            }
        }
    }

    #[test]
    fn every_entry_builds_with_defaults_and_reports_its_name() {
        for e in all() {
            let cc = build(e.name, &Map::new()).unwrap();
            assert_eq!(cc.name(), e.name);
            assert!(
                (e.defaults)().is_object(),
                "{} defaults must be a table",
                e.name
            );
        }
    }
}
