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
