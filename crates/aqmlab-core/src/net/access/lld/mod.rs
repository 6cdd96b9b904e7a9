//! Low Latency DOCSIS (DOCSIS 3.1 MULPI Annexes M, O and P): the pieces of the dual-queue
//! modem. docs/access/lld-queue-protection.md describes the algorithms.

pub mod dual_queue_aqm;
pub mod queue_protection;
pub mod virtual_queue;
