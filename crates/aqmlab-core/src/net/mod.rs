//! The network: packets, links, nodes, routing, topology builders.
pub mod access;
pub mod dscp;
pub mod jitter;
pub mod link;
pub mod packet;
pub mod routing;
pub mod topology;
