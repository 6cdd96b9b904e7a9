//! A windowed running maximum: Linux `lib/win_minmax.c` (`minmax_running_max`,
//! `minmax_subwin_update`), the three-sample filter of Kathleen Nichols that BBR's
//! bandwidth estimate uses (`bbr.rs`).

/// A windowed max over round-trip counts (Linux `lib/win_minmax.c`, the three-sample
/// Kathleen Nichols filter: best, 2nd best, 3rd best in the window).
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxFilter {
    s: [(u64, u64); 3], // (time, value)
}

impl MaxFilter {
    pub fn get(&self) -> u64 {
        self.s[0].1
    }
    fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }
    /// `minmax_running_max`.
    pub fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, t, v)
    }
    /// `minmax_subwin_update`: age the samples when the best has left the window.
    fn subwin_update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}
