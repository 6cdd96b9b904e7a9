//! Outputs: tables and pcap files.
pub mod pcap;
pub mod table;
