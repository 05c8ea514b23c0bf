//! Noticing a task going round in circles: the same actions on a page that does not change.
//!
//! Models sometimes repeat an action that does nothing (a click on a disabled control, typing
//! into a field that resets), each step hoping for a different result. Each step's actions and
//! a fingerprint of the page it saw are kept; when the pattern shows, the next prompt carries a
//! nudge to try something else.

use std::collections::hash_map::DefaultHasher;
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

/// Steps remembered.
const WINDOW: usize = 6;
/// The same actions on the same page this many steps in a row is a loop.
const REPEATS: usize = 3;
/// The page unchanged this many steps in a row (whatever was done) is worth a word.
const STILL_PAGE: usize = 5;

#[derive(Default)]
pub struct LoopGuard {
    /// (page fingerprint, actions of the step), oldest first.
    steps: VecDeque<(u64, String)>,
}

fn fingerprint(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl LoopGuard {
    /// Notes one step: the page it saw (as the LLM saw it) and its actions (name and
    /// parameters, as recorded).
    pub fn record(&mut self, page_text: &str, actions: &str) {
        self.steps.push_back((fingerprint(page_text), actions.to_string()));
        while self.steps.len() > WINDOW {
            self.steps.pop_front();
        }
    }

    /// A word for the LLM when the last steps look like a loop.
    pub fn nudge(&self) -> Option<String> {
        let recent: Vec<&(u64, String)> = self.steps.iter().rev().collect();
        if recent.len() >= REPEATS && !recent[0].1.is_empty() && recent[..REPEATS].iter().all(|s| *s == recent[0]) {
            return Some(format!(
                "You have sent the same actions ({}) {REPEATS} steps in a row and the page did not change. They are not working: try something different (another element, scroll, search_page, go elsewhere), or finish with done and say what is blocking you.",
                recent[0].1
            ));
        }
        if recent.len() >= STILL_PAGE && recent[..STILL_PAGE].iter().all(|s| s.0 == recent[0].0) {
            return Some(format!(
                "The page has not changed in the last {STILL_PAGE} steps. If you are stuck, change approach, or finish with done and say what is missing."
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_actions_on_an_unchanged_page_three_times_get_a_nudge() {
        let mut guard = LoopGuard::default();
        guard.record("page A", "click {\"index\":3}");
        guard.record("page A", "click {\"index\":3}");
        assert_eq!(guard.nudge(), None);
        guard.record("page A", "click {\"index\":3}");
        assert!(guard.nudge().unwrap().contains("same actions (click {\"index\":3}) 3 steps in a row"));
    }

    #[test]
    fn progress_clears_the_nudge() {
        let mut guard = LoopGuard::default();
        for _ in 0..3 {
            guard.record("page A", "click {\"index\":3}");
        }
        guard.record("page B", "click {\"index\":3}");
        assert_eq!(guard.nudge(), None, "the page changed");
    }

    #[test]
    fn a_page_that_never_changes_is_mentioned_even_with_varied_actions() {
        let mut guard = LoopGuard::default();
        for i in 0..5 {
            guard.record("page A", &format!("scroll {i}"));
        }
        assert!(guard.nudge().unwrap().contains("has not changed in the last 5 steps"));
    }
}
