//! A FIFO of packet ids with a byte count: the building block of every discipline.

use crate::net::packet::{PacketArena, PacketId};
use std::collections::VecDeque;

#[derive(Default, Debug)]
pub struct PacketQueue {
    q: VecDeque<PacketId>,
    bytes: u64,
}

impl PacketQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn push_back(&mut self, p: PacketId, arena: &PacketArena) {
        self.bytes += arena[p].size as u64;
        self.q.push_back(p);
    }

    #[inline]
    pub fn pop_front(&mut self, arena: &PacketArena) -> Option<PacketId> {
        let p = self.q.pop_front()?;
        self.bytes -= arena[p].size as u64;
        Some(p)
    }

    #[inline]
    pub fn pop_back(&mut self, arena: &PacketArena) -> Option<PacketId> {
        let p = self.q.pop_back()?;
        self.bytes -= arena[p].size as u64;
        Some(p)
    }

    #[inline]
    pub fn front(&self) -> Option<PacketId> {
        self.q.front().copied()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The packet at position `i` from the head (0 = head).
    #[inline]
    pub fn get(&self, i: usize) -> Option<PacketId> {
        self.q.get(i).copied()
    }

    /// Remove the packet at position `i` (CHOKe-style victim removal).
    pub fn remove(&mut self, i: usize, arena: &PacketArena) -> Option<PacketId> {
        let p = self.q.remove(i)?;
        self.bytes -= arena[p].size as u64;
        Some(p)
    }
}

impl PacketQueue {
    /// Whether one more packet of `size` bytes stays within `limit` (tail-drop test).
    #[inline]
    pub fn fits(&self, limit: crate::scenario::units::Limit, size: u32) -> bool {
        limit.admits(self.len(), self.bytes, size)
    }
}

/// An early (AQM) verdict on an arriving packet: mark it if `ecn` allows and the packet
/// is ECN-capable, otherwise drop it. Returns true if the packet survives (was marked).
#[inline]
pub fn mark_or_drop(ecn: bool, p: PacketId, ctx: &mut super::QdiscCtx, at: super::Stage) -> bool {
    if ecn && ctx.mark(p, at) {
        return true;
    }
    ctx.drop(p, super::DropReason::Early, at);
    false
}
