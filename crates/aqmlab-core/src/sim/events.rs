//! The event queue: a 4-ary min-heap keyed by (time, insertion sequence).
//!
//! Equal-time events pop in insertion order, so a run is a pure function of its inputs
//! (the nexosim priority-queue idea). Events are small `Copy` values, never closures.
//! The queue refuses to schedule into the past, so time never goes backwards.
//!
//! An event that may turn out not to be needed can take its place in that order without
//! being queued: `reserve` hands out the sequence number it would have had, `schedule_reserved`
//! queues it later with that number, and `key` compares it with the event being handled
//! (a link's transmission-complete event, `engine/link.rs`).

use super::time::Nanos;

/// What happens at an event. Ids index the engine's vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The link finished serialising its current packet.
    LinkTxDone { link: u32 },
    /// The head of the link's in-flight packets reaches the far end.
    LinkArrival { link: u32 },
    /// A timer of the link's queue discipline (e.g. PIE's periodic update).
    QdiscTimer { link: u32 },
    /// The link's rate changes (schedule or random process).
    LinkRateChange { link: u32 },
    /// A timer of the link's access model (a DOCSIS MAP boundary, the shaper).
    AccessTimer { link: u32 },
    /// An application's timer (next packet, next frame, next page, ...).
    App { app: u32 },
    /// A transport endpoint's timer (retransmission, delayed ACK, ...).
    Transport { endpoint: u32 },
    /// Take one time-series sample.
    Sample,
    /// Take one sample of the per-flow TCP time series.
    TcpSample,
    /// End of warm-up: statistics restart from here.
    WarmupEnd,
}

#[derive(Clone, Copy)]
struct Entry {
    time: Nanos,
    seq: u64,
    event: Event,
}

impl Entry {
    /// (time, seq) as one number: one 128-bit comparison orders two entries.
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

/// Children per node of the heap: a 4-ary heap is half as deep as a binary one, and
/// a node's four 24-byte children share one or two cache lines.
const ARITY: usize = 4;

/// Pending events in (time, insertion) order.
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
    now: Nanos,
    /// The sequence number of the event last popped.
    cur_seq: u64,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            seq: 0,
            now: 0,
            cur_seq: 0,
            popped: 0,
        }
    }

    /// Current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Number of events popped so far.
    #[inline]
    pub fn popped(&self) -> u64 {
        self.popped
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `event` at absolute time `time` (not before now).
    #[inline]
    pub fn schedule(&mut self, time: Nanos, event: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.max(self.now);
        self.push(Entry {
            time,
            seq: self.seq,
            event,
        });
        self.seq += 1;
    }

    /// The sequence number an event scheduled now would get, taken without queuing one.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
    }

    /// Queue `event` at `time` with a number from `reserve`: it pops where it would have
    /// popped had it been scheduled when the number was reserved.
    #[inline]
    pub fn schedule_reserved(&mut self, time: Nanos, seq: u64, event: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        self.push(Entry {
            time: time.max(self.now),
            seq,
            event,
        });
    }

    /// The (time, sequence) key of the event last popped: an event with a smaller key
    /// has been handled.
    #[inline]
    pub fn key(&self) -> (Nanos, u64) {
        (self.now, self.cur_seq)
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.first().map(|e| e.time)
    }

    /// Pop the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        let e = *self.heap.first()?;
        let last = self.heap.pop().expect("not empty");
        if !self.heap.is_empty() {
            self.sift_down(last);
        }
        self.now = e.time;
        self.cur_seq = e.seq;
        self.popped += 1;
        Some((e.time, e.event))
    }
}

impl EventQueue {
    #[inline]
    fn push(&mut self, e: Entry) {
        // Move parents down until `e` fits (a hole, not swaps).
        let k = e.key();
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= k {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// Put `e` (the former last entry) in place of the root just taken.
    #[inline]
    fn sift_down(&mut self, e: Entry) {
        let k = e.key();
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut m = first;
            let mut mk = self.heap[first].key();
            for c in first + 1..(first + ARITY).min(n) {
                let ck = self.heap[c].key();
                if ck < mk {
                    m = c;
                    mk = ck;
                }
            }
            if k <= mk {
                break;
            }
            self.heap[i] = self.heap[m];
            i = m;
        }
        self.heap[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(5, Event::App { app: 1 });
        q.schedule(3, Event::App { app: 2 });
        q.schedule(5, Event::App { app: 3 });
        q.schedule(3, Event::App { app: 4 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::App { app: 2 }),
                (3, Event::App { app: 4 }),
                (5, Event::App { app: 1 }),
                (5, Event::App { app: 3 }),
            ]
        );
        assert_eq!(q.now(), 5);
        assert_eq!(q.popped(), 4);
    }

    #[test]
    fn a_reserved_event_pops_where_it_was_reserved() {
        let mut q = EventQueue::new();
        q.schedule(5, Event::App { app: 1 });
        let seq = q.reserve();
        q.schedule(5, Event::App { app: 3 });
        q.schedule(2, Event::App { app: 0 });
        assert_eq!(q.pop(), Some((2, Event::App { app: 0 })));
        assert!(q.key() < (5, seq));
        q.schedule_reserved(5, seq, Event::App { app: 2 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(
            order,
            vec![
                Event::App { app: 1 },
                Event::App { app: 2 },
                Event::App { app: 3 }
            ]
        );
        assert_eq!(q.key(), (5, 2));
    }

    #[test]
    fn pops_random_schedules_in_key_order() {
        // Against a sort: many ties, interleaved pushes and pops.
        let mut rng = crate::sim::rng::Rng::stream(7, "test");
        let mut q = EventQueue::new();
        let mut model: Vec<(Nanos, u64)> = Vec::new();
        let mut id = 0u32;
        for _ in 0..20_000 {
            if rng.below(3) > 0 || model.is_empty() {
                let t = q.now() + rng.below(50);
                model.push((t, id as u64));
                q.schedule(t, Event::App { app: id });
                id += 1;
            } else {
                model.sort_unstable_by_key(|&(t, i)| std::cmp::Reverse((t, i)));
                let (t, i) = model.pop().unwrap();
                assert_eq!(q.pop(), Some((t, Event::App { app: i as u32 })));
            }
        }
        assert_eq!(q.len(), model.len());
    }
}
