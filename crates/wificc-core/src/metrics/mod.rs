//! Measurement: histograms and the per-run results (summaries and sampled series).

pub mod histogram;
pub mod results;

pub use histogram::Histogram;
