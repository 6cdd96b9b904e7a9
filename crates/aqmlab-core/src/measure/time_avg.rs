//! Time-weighted average of a piecewise-constant quantity (queue length).

use crate::sim::time::Nanos;

#[derive(Clone, Debug, Default)]
pub struct TimeAverage {
    area: u128,
    last_value: u64,
    last_time: Nanos,
    start: Nanos,
}

impl TimeAverage {
    /// The quantity changes to `value` at `now`.
    #[inline]
    pub fn set(&mut self, now: Nanos, value: u64) {
        self.area += self.last_value as u128 * (now - self.last_time) as u128;
        self.last_time = now;
        self.last_value = value;
    }

    /// The current value.
    pub fn current(&self) -> u64 {
        self.last_value
    }

    /// Restart averaging at `now`, keeping the current value.
    pub fn restart(&mut self, now: Nanos) {
        self.area = 0;
        self.last_time = now;
        self.start = now;
    }

    /// Average over [start, now].
    pub fn mean(&self, now: Nanos) -> f64 {
        let area = self.area + self.last_value as u128 * (now - self.last_time) as u128;
        if now == self.start {
            self.last_value as f64
        } else {
            area as f64 / (now - self.start) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_over_time_not_events() {
        let mut a = TimeAverage::default();
        a.set(0, 10);
        a.set(1, 0); // 10 for 1 ns
        a.set(2, 0);
        // then 0 for 9 ns
        assert_eq!(a.mean(10), 1.0);
    }
}
