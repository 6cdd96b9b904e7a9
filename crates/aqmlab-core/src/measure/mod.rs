//! Recorders: streaming statistics that are cheap on the hot path.
pub mod drop_log;
pub mod flow_stats;
pub mod histogram;
pub mod interval;
pub mod link_stats;
pub mod time_avg;
