//! The discrete-event kernel: clock, event queue, random streams.
pub mod events;
pub mod rng;
pub mod time;
