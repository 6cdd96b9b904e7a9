//! Transports. UDP needs no state beyond its source (see `app::bulk::udp`); TCP lives in
//! `transport::tcp`.

pub mod tcp;
