//! Bulk and background traffic: TCP transfers (bulk, file, on/off, connection arrivals)
//! and the common TCP parameters every TCP kind reads (`tcp.rs`), UDP CBR and Poisson
//! sources (`udp.rs`).

pub mod tcp;
pub mod udp;
