//! The event queue: a binary heap keyed by (time, insertion sequence).
//!
//! Equal-time events pop in insertion order, so a run is a pure function of its inputs
//! (the nexosim priority-queue idea). Events are small `Copy` values, never closures.
//! The queue refuses to schedule into the past, so time never goes backwards.
//!
//! A popped event stays at the heap's root until the next call that needs it gone: most
//! handlers schedule an event (a link's next arrival, a timer), and the first one scheduled
//! then replaces the root and sifts down only as far as it belongs (not far for an event
//! in the near future), where a pop and a push would each walk the heap's height (the
//! "hold" operation of event-set benchmarks: D. W. Jones, "An empirical comparison of
//! priority-queue and event-set implementations", CACM 29(4), 1986). A handler that
//! schedules nothing costs the same as before: the next pop removes the root first.
//!
//! An event that may turn out not to be needed can take its place in that order without
//! being queued: `reserve` hands out the sequence number it would have had, `schedule_reserved`
//! queues it later with that number, and `key` compares it with the event being handled
//! (a link's transmission-complete event, `engine/link.rs`).

use super::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    /// Take one sample of the per-flow delivery time series.
    FlowSample,
    /// End of warm-up: statistics restart from here.
    WarmupEnd,
}

#[derive(Clone, Copy)]
struct Entry {
    time: Nanos,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        // One 128-bit comparison of (time, seq), reversed.
        let key = |e: &Entry| (e.time as u128) << 64 | e.seq as u128;
        key(other).cmp(&key(self))
    }
}

/// Pending events in (time, insertion) order.
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    /// The root is the event last popped, still in place (the module doc).
    stale_root: bool,
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
            heap: BinaryHeap::with_capacity(1024),
            stale_root: false,
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
        self.heap.len() - self.stale_root as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add `e`: into the root if the root is stale, else at the end.
    #[inline]
    fn push(&mut self, e: Entry) {
        if self.stale_root {
            self.stale_root = false;
            *self.heap.peek_mut().expect("a stale root") = e;
        } else {
            self.heap.push(e);
        }
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
        if self.stale_root {
            // The next event is the earlier child of the root.
            let kids = self.heap.as_slice().get(1..).unwrap_or_default();
            kids.iter().take(2).max().map(|e| e.time)
        } else {
            self.heap.peek().map(|e| e.time)
        }
    }

    /// Pop the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.pop_until(Nanos::MAX)
    }

    /// Pop the next event if it is due by `until` (inclusive), and advance the clock to it.
    #[inline]
    pub fn pop_until(&mut self, until: Nanos) -> Option<(Nanos, Event)> {
        if self.stale_root {
            self.stale_root = false;
            self.heap.pop();
        }
        let e = *self.heap.peek()?;
        if e.time > until {
            return None;
        }
        self.stale_root = true;
        self.now = e.time;
        self.cur_seq = e.seq;
        self.popped += 1;
        Some((e.time, e.event))
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

    /// Interleaved schedules and pops against a sorted list of (time, seq): every pop is
    /// the smallest pending key, across heap sizes that fill 1 to 5 levels.
    #[test]
    fn pops_match_a_sorted_reference_under_random_interleaving() {
        let mut rng = crate::sim::rng::Rng::stream(7, "events-test");
        for size in [1u64, 4, 5, 21, 300, 2000] {
            let mut q = EventQueue::new();
            let mut reference: Vec<(Nanos, u64, u32)> = Vec::new();
            let mut seq = 0u64;
            let mut id = 0u32;
            let mut schedule =
                |q: &mut EventQueue, r: &mut Vec<_>, rng: &mut crate::sim::rng::Rng| {
                    // Few distinct times, so equal times (ordered by seq) are common.
                    let t = q.now() + rng.below(size.min(50));
                    q.schedule(t, Event::App { app: id });
                    r.push((t, seq, id));
                    seq += 1;
                    id += 1;
                };
            for _ in 0..size {
                schedule(&mut q, &mut reference, &mut rng);
            }
            for _ in 0..20 * size {
                if rng.below(2) == 0 {
                    schedule(&mut q, &mut reference, &mut rng);
                } else if !reference.is_empty() {
                    let (i, &(t, _, app)) = reference
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, &(t, s, _))| (t, s))
                        .unwrap();
                    reference.remove(i);
                    assert_eq!(q.pop(), Some((t, Event::App { app })));
                    assert_eq!(q.peek_time(), reference.iter().map(|r| r.0).min());
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(&(t, _, app)) = reference.iter().min_by_key(|&&(t, s, _)| (t, s)) {
                reference.retain(|r| r.2 != app);
                assert_eq!(q.pop(), Some((t, Event::App { app })));
            }
            assert_eq!((q.pop(), q.peek_time(), q.len()), (None, None, 0));
            let t = q.now() + 1;
            q.schedule(t, Event::Sample);
            assert_eq!(q.len(), 1);
            assert_eq!(q.pop(), Some((t, Event::Sample)));
        }
    }

    #[test]
    fn pop_until_stops_at_the_first_event_after_the_bound() {
        let mut q = EventQueue::new();
        for t in [4, 2, 6, 4] {
            q.schedule(t, Event::Sample);
        }
        assert_eq!(q.pop_until(3), Some((2, Event::Sample)));
        assert_eq!(q.pop_until(3), None);
        assert_eq!((q.now(), q.len(), q.peek_time()), (2, 3, Some(4)));
        assert_eq!(q.pop_until(4), Some((4, Event::Sample)));
        assert_eq!(q.pop_until(4), Some((4, Event::Sample)));
        assert_eq!(q.pop_until(5), None);
        assert_eq!(q.pop(), Some((6, Event::Sample)));
        assert_eq!(q.pop_until(u64::MAX), None);
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

    /// The shape of a dumbbell's queue (measured on `benches/scenarios/scale.toml`: ~70
    /// link arrivals within 10 ms, ~175 transport timers, half of them 100 ms or more
    /// ahead): far-future timers stay put while near events are handled through the stale
    /// root, the clock never goes back, and a timer scheduled at the same instant as a
    /// near event pops after it (insertion order).
    #[test]
    fn far_future_timers_wait_behind_a_stream_of_near_events() {
        let mut q = EventQueue::new();
        q.schedule(200_000_000, Event::Transport { endpoint: 0 }); // seq 0: RTO, 200 ms
        q.schedule(1_000, Event::LinkArrival { link: 0 }); // seq 1
        let mut last = 0;
        let mut arrivals = 0;
        while let Some((t, ev)) = q.pop() {
            assert!(t >= last, "time went back: {t} after {last}");
            last = t;
            match ev {
                Event::LinkArrival { .. } => {
                    arrivals += 1;
                    // Each arrival schedules the next one 1 µs on, until 200 ms exactly.
                    if t < 200_000_000 {
                        q.schedule(t + 1_000, Event::LinkArrival { link: 0 });
                    }
                }
                Event::Transport { .. } => {
                    // Scheduled before the arrival at 200 ms (seq 0), so it pops first.
                    assert_eq!((t, arrivals), (200_000_000, 199_999));
                }
                _ => unreachable!(),
            }
        }
        assert_eq!(
            (arrivals, q.now(), q.popped()),
            (200_000, 200_000_000, 200_001)
        );
    }
}
