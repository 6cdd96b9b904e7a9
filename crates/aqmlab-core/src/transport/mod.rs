//! Transports. UDP needs no state beyond its source (see `app::udp`); TCP lives in
//! `transport::tcp`.

pub mod tcp;
