//! Windowed running maximum (Kathleen Nichols' estimator, Linux `lib/win_minmax.c`).
//!
//! The filter keeps the best, second-best and third-best values of a stream together with the
//! time each was measured, so that the best value of the last `win` time units is known in
//! constant space and time. The invariant is that the n-th best was measured no earlier than the
//! (n-1)-th best. A new maximum (or a window with nothing left in it) resets all three choices;
//! as time advances without a new maximum, the second and third choices are refreshed from the
//! second quarter and the second half of the window, so that when the best ages out its
//! replacement is a recent value rather than an arbitrarily old one.
//!
//! BBR's bandwidth filter uses it with time counted in packet-timed rounds (`rtt_cnt`), so the
//! window is a number of rounds. Times are `u32` and compared with wrapping arithmetic, as the
//! kernel does, so that a counter wrap does not freeze the filter.

/// One measurement: when it was taken and its value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sample {
    t: u32,
    v: u32,
}

/// A windowed running maximum of `u32` values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WinMax {
    best: [Sample; 3],
}

impl WinMax {
    /// The maximum over the window.
    pub fn get(&self) -> u32 {
        self.best[0].v
    }

    /// Forget everything: `v` measured at `t` becomes all three choices.
    pub fn reset(&mut self, t: u32, v: u32) -> u32 {
        self.best = [Sample { t, v }; 3];
        v
    }

    /// Add `v` measured at `t`, with a window of `win` time units; returns the new maximum.
    pub fn update(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let new = Sample { t, v };
        if v >= self.best[0].v || t.wrapping_sub(self.best[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.best[1].v {
            self.best[1] = new;
            self.best[2] = new;
        } else if v >= self.best[2].v {
            self.best[2] = new;
        }
        self.age(win, new)
    }

    /// Move the choices along as time passes without a new maximum.
    fn age(&mut self, win: u32, new: Sample) -> u32 {
        let dt = new.t.wrapping_sub(self.best[0].t);
        if dt > win {
            // The best left the window: promote the others. The second choice may be out of
            // the window too (the third was checked on entry), hence at most two promotions.
            self.best = [self.best[1], self.best[2], new];
            if new.t.wrapping_sub(self.best[0].t) > win {
                self.best = [self.best[1], self.best[2], new];
            }
        } else if self.best[1].t == self.best[0].t && dt > win / 4 {
            // A quarter of the window passed with no second choice: take one from here.
            self.best[1] = new;
            self.best[2] = new;
        } else if self.best[2].t == self.best[1].t && dt > win / 2 {
            // Half the window passed with no third choice: take one from here.
            self.best[2] = new;
        }
        self.best[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_larger_value_takes_over_at_once() {
        let mut m = WinMax::default();
        m.reset(0, 10);
        assert_eq!(m.update(10, 1, 12), 12);
        assert_eq!(m.update(10, 2, 11), 12);
    }

    #[test]
    fn the_maximum_expires_after_the_window_and_a_recent_choice_replaces_it() {
        // Window 10 rounds; 100 measured at round 0, then smaller values.
        let mut m = WinMax::default();
        m.reset(0, 100);
        // Round 1: not a quarter of the window yet (1 <= 10/4): nothing is kept.
        assert_eq!(m.update(10, 1, 50), 100);
        // Round 3: a quarter passed with no 2nd choice: 2nd = 3rd = (3, 45).
        assert_eq!(m.update(10, 3, 45), 100);
        // Round 6: half passed and the 3rd choice equals the 2nd: 3rd = (6, 40).
        assert_eq!(m.update(10, 6, 40), 100);
        assert_eq!(
            m.best,
            [
                Sample { t: 0, v: 100 },
                Sample { t: 3, v: 45 },
                Sample { t: 6, v: 40 }
            ]
        );
        // Round 11: 100 is 11 rounds old (> 10): promote, best = (3, 45).
        assert_eq!(m.update(10, 11, 30), 45);
        // Round 12: 30 >= 3rd (30): 3rd = (12, 30); 45 is 9 rounds old, still inside.
        assert_eq!(m.update(10, 12, 30), 45);
        // Round 14: 45 is 11 rounds old: best = (6, 40).
        assert_eq!(m.update(10, 14, 20), 40);
        // Round 17: 40 is 11 rounds old: best = (12, 30).
        assert_eq!(m.update(10, 17, 20), 30);
    }

    #[test]
    fn an_empty_window_resets_to_the_new_value() {
        let mut m = WinMax::default();
        m.reset(0, 100);
        // The third choice (t = 0) is more than 10 old: everything is forgotten.
        assert_eq!(m.update(10, 11, 7), 7);
        assert_eq!(m.best, [Sample { t: 11, v: 7 }; 3]);
    }

    #[test]
    fn time_wraps_like_the_kernel_counter() {
        let mut m = WinMax::default();
        m.reset(u32::MAX - 1, 100);
        // 3 rounds later across the wrap: still inside a 10-round window.
        assert_eq!(m.update(10, 1, 5), 100);
    }
}
