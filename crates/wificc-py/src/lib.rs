//! Python bindings of wificc-core (module `wificc._core`). Scenarios cross as JSON text and
//! results come back as JSON text, which the Python side turns into DataFrames; the simulation
//! runs with the GIL released, so a thread pool can run several scenarios at once.

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use wificc_core::api;
use wificc_core::kernel::Kernel;
use wificc_core::scenario::Format;
use wificc_core::tcp::config::SkbLayout;

fn format_of(name: &str) -> PyResult<Format> {
    match name {
        "json" => Ok(Format::Json),
        "toml" => Ok(Format::Toml),
        other => Err(PyValueError::new_err(format!(
            "format: got {other:?}, expected \"json\" or \"toml\""
        ))),
    }
}

/// Simulated time between two calls of a run's progress callback, which are also when a run
/// looks for a pending Ctrl-C: 100 ms.
const PROGRESS_EVERY_NS: u64 = 100_000_000;

/// Run a scenario (TOML or JSON text) and return the results as JSON text.
///
/// `progress`, if given, is called as `progress(done_ns, total_ns)` every 100 ms of simulated
/// time, with the GIL held; before each call the run checks for signals, so Ctrl-C raises
/// `KeyboardInterrupt` within one such step. An exception from either ends the run and is
/// raised here.
#[pyfunction]
#[pyo3(signature = (text, format = "json", progress = None))]
fn run(py: Python<'_>, text: String, format: &str, progress: Option<PyObject>) -> PyResult<String> {
    let fmt = format_of(format)?;
    let Some(progress) = progress else {
        let v = py
            .allow_threads(|| api::run_text(&text, fmt))
            .map_err(PyValueError::new_err)?;
        return Ok(v.to_string());
    };
    let mut failure: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        api::run_text_reporting(&text, fmt, PROGRESS_EVERY_NS, &mut |done, total| {
            Python::with_gil(|py| {
                let called = py
                    .check_signals()
                    .and_then(|()| progress.call1(py, (done, total)).map(drop));
                called.map_err(|e| failure = Some(e)).is_ok()
            })
        })
    });
    match outcome.map_err(PyValueError::new_err)? {
        Some(v) => Ok(v.to_string()),
        None => Err(failure.unwrap_or_else(|| PyKeyboardInterrupt::new_err("run interrupted"))),
    }
}

/// Validate a scenario and return it with every default filled in, as JSON text.
#[pyfunction]
#[pyo3(signature = (text, format = "json"))]
fn validate(text: String, format: &str) -> PyResult<String> {
    let fmt = format_of(format)?;
    api::validate(&text, fmt)
        .map(|v| v.to_string())
        .map_err(PyValueError::new_err)
}

/// The congestion controls with their parameters and defaults, as JSON text.
#[pyfunction]
fn cc_list() -> String {
    api::cc_list().to_string()
}

/// The truesize TCP Small Queues charges for one segment of `payload` bytes that software GSO
/// (`skb_segment`) made, on a kernel of the given skb head layout, with or without
/// scatter-gather on the device (`SkbLayout::segment_truesize`, the simulator's rule).
#[pyfunction]
#[pyo3(signature = (payload, sg, max_tcp_header, max_header, small_head_cache))]
fn segment_truesize(
    payload: u32,
    sg: bool,
    max_tcp_header: u32,
    max_header: u32,
    small_head_cache: bool,
) -> u32 {
    SkbLayout {
        max_tcp_header,
        max_header,
        small_head_cache,
    }
    .segment_truesize(payload, sg)
}

/// The Linux releases with a kernel profile (`stack.kernel`), oldest first.
#[pyfunction]
fn kernels() -> Vec<&'static str> {
    Kernel::ALL.iter().map(|k| k.name()).collect()
}

/// The scenario's JSON Schema, as JSON text.
#[pyfunction]
fn scenario_schema() -> String {
    api::scenario_schema().to_string()
}

/// Kernel profiles, Wi-Fi drivers and chipset presets, as JSON text.
#[pyfunction]
fn catalogs() -> String {
    api::catalogs().to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(cc_list, m)?)?;
    m.add_function(wrap_pyfunction!(segment_truesize, m)?)?;
    m.add_function(wrap_pyfunction!(kernels, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(catalogs, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL", wificc_core::MODEL)?;
    Ok(())
}
