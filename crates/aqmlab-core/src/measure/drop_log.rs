//! The drop log (`output.drops`): one row per packet a link dropped or marked, written
//! by the simulation engine and by the emulator's pipes alike (the `drops` table).

use crate::qdisc::{DropReason, Stage};
use crate::sim::time::Nanos;

/// One row of the opt-in drop log.
#[derive(Clone, Debug, PartialEq)]
pub struct DropRecord {
    pub time: Nanos,
    /// The link's index (an emulator pipe, one link, logs 0).
    pub link: u32,
    pub flow: u32,
    pub packet: u64,
    pub size: u32,
    pub reason: Cause,
    pub at: Stage,
}

/// Why a packet left the network early, or was marked: the drop log's `reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The queue discipline dropped it.
    Qdisc(DropReason),
    /// The link's random-loss model.
    Random,
    /// It reached the link during an outage.
    Outage,
    /// No route to its destination (only reverse traffic can meet this).
    NoRoute,
    /// An ECN CE mark (the packet goes on).
    Mark,
    /// A full queue of the link's access model (a DOCSIS upstream's transmit queue with
    /// `txq_overflow = "drop"`); counted in that queue's row (`LINK.txq`), not the
    /// link's.
    TxqOverflow,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::Qdisc(r) => r.name(),
            Cause::Random => "random",
            Cause::Outage => "outage",
            Cause::NoRoute => "no_route",
            Cause::Mark => "mark",
            Cause::TxqOverflow => "txq_overflow",
        }
    }
}
