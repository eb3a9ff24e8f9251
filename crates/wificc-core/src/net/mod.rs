//! Packets, links, queues.

pub mod link;
pub mod network;
pub mod packet;
pub mod qdisc;
pub mod trace;
pub mod wifi;
