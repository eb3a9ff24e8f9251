//! The Linux-like TCP sender and receiver.

pub mod rate_sample;
pub mod sock;
