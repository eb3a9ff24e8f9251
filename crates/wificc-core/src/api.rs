//! Entry points for front ends: scenario text or JSON in, results JSON out. Errors come back as
//! `field: message` strings, never as panics.

use serde_json::{json, Value};

use crate::cc;
use crate::kernel::{Kernel, Profile};
use crate::metrics::results::RunResult;
use crate::net::wifi::driver::Driver;
use crate::net::wifi::phy::PRESETS;
use crate::scenario::{self, Format, Scenario};
use crate::schema::{driver_kind_text, DRIVER_KINDS};
use crate::units::Nanos;

/// Parse and validate a scenario; returns the normalised scenario (all defaults filled) as JSON.
pub fn validate(text: &str, format: Format) -> Result<Value, String> {
    let s = Scenario::parse(text, format).map_err(|e| e.to_string())?;
    serde_json::to_value(&s).map_err(|e| e.to_string())
}

/// Run a scenario given as text; returns the results as a JSON value.
pub fn run_text(text: &str, format: Format) -> Result<Value, String> {
    let s = Scenario::parse(text, format).map_err(|e| e.to_string())?;
    run(&s)
}

/// Run a parsed scenario.
pub fn run(s: &Scenario) -> Result<Value, String> {
    let result = scenario::run(s).map_err(|e| e.to_string())?;
    results_value(s, &result)
}

fn results_value(s: &Scenario, result: &RunResult) -> Result<Value, String> {
    let mut v = serde_json::to_value(result).map_err(|e| e.to_string())?;
    v["scenario"] = serde_json::to_value(s).map_err(|e| e.to_string())?;
    Ok(v)
}

/// [`run_text`], calling `report(done, total)` (simulated ns reached, the scenario's duration)
/// every `every` ns of simulated time; `Ok(None)` when `report` returned false and the run
/// stopped there.
pub fn run_text_reporting(
    text: &str,
    format: Format,
    every: Nanos,
    report: &mut dyn FnMut(Nanos, Nanos) -> bool,
) -> Result<Option<Value>, String> {
    let s = Scenario::parse(text, format).map_err(|e| e.to_string())?;
    let total = s.duration.0;
    match scenario::run_reporting(&s, every, &mut |done| report(done, total))
        .map_err(|e| e.to_string())?
    {
        Some(result) => results_value(&s, &result).map(Some),
        None => Ok(None),
    }
}

/// The congestion-control registry: name, summary, source, default parameters and each
/// parameter's schema (`param_schema`: description, type, `x-quantity`) of each.
pub fn cc_list() -> Value {
    Value::Array(
        cc::registry::all()
            .iter()
            .map(|e| {
                json!({"name": e.name, "summary": e.summary, "source": e.source,
                       "params": (e.defaults)(), "param_schema": (e.schema)()})
            })
            .collect(),
    )
}

/// The scenario's JSON Schema (see [`crate::schema`]).
pub fn scenario_schema() -> Value {
    crate::schema::scenario_schema()
}

/// What the reference lists besides the schema: the coded quantities of the congestion
/// controls' models with their names, the kernel profiles (each release's values and the
/// fields' descriptions), the Wi-Fi driver families with their defaults, and the chipset
/// presets.
pub fn catalogs() -> Value {
    let profile_schema = cc::registry::schema_of::<Profile>();
    let kernels: Vec<Value> = Kernel::ALL
        .iter()
        .map(|k| json!({"name": k.name(), "profile": k.profile()}))
        .collect();
    let drivers: Vec<Value> = DRIVER_KINDS
        .iter()
        .map(|&k| json!({"name": k.name(), "about": driver_kind_text(k), "defaults": Driver::defaults(k)}))
        .collect();
    let chipsets: Vec<Value> = PRESETS
        .iter()
        .map(|p| {
            json!({"name": p.name, "about": p.about, "phy": p.phy, "driver": p.driver.name(),
                   "aggregates_vo": p.aggregates_vo})
        })
        .collect();
    let model_codes: Vec<Value> = cc::model_codes()
        .into_iter()
        .map(|(ccs, quantity, codes)| {
            let names: serde_json::Map<String, Value> = codes
                .into_iter()
                .map(|(code, name)| (code.to_string(), json!(name)))
                .collect();
            json!({"cc": ccs, "quantity": quantity, "codes": names})
        })
        .collect();
    json!({
        "model_codes": model_codes,
        "kernels": kernels,
        "kernel_default": Kernel::NEWEST.name(),
        "profile_schema": profile_schema,
        "drivers": drivers,
        "chipsets": chipsets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_returns_the_normalised_scenario_and_it_parses_back() {
        // One unmarked flow and ping: the normalised scenario carries DSCP 0 for both, and the
        // normalised text validates to itself.
        let text = r#"{"duration": "0.2s", "path": {"kind": "wired", "rate": "10mbit", "rtt": "10ms"},
                       "flows": [{"cc": "reno"}], "pings": [{}]}"#;
        let v = run_text(text, Format::Json).unwrap();
        assert_eq!(v["scenario"]["flows"][0]["dscp"], json!(0));
        assert_eq!(v["scenario"]["pings"][0]["dscp"], json!(0));
        let normalised = validate(text, Format::Json).unwrap();
        assert_eq!(normalised, v["scenario"]);
        let again = validate(&normalised.to_string(), Format::Json).unwrap();
        assert_eq!(again, normalised);
    }

    #[test]
    fn flow_summaries_carry_direction_and_dscp() {
        // RRUL marks flows by name (CS5 = 40, EF = 46) and by number; unmarked is 0.
        let text = r#"{"duration": "0.2s", "path": {"kind": "wired", "rate": "10mbit", "rtt": "10ms"},
                       "flows": [{"dscp": "CS5"}, {"direction": "down", "dscp": "EF"},
                                 {"direction": "down", "dscp": 8}, {}]}"#;
        let v = run_text(text, Format::Json).unwrap();
        let got: Vec<(Value, Value)> = v["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["direction"].clone(), f["dscp"].clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (json!("up"), json!(40)),
                (json!("down"), json!(46)),
                (json!("down"), json!(8)),
                (json!("up"), json!(0)),
            ]
        );
    }
}
