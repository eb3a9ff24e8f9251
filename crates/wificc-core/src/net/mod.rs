//! Packets, links, queues.

pub mod link;
pub mod packet;
pub mod qdisc;
pub mod trace;
pub mod wifi;
