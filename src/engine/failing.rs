//! A run that pauses itself when failing: the share of recipients not accepted among the last answered, held against `[send] pause_when_failing`.

use super::events::PauseCause;
use crate::campaign::FailingRule;
use std::collections::VecDeque;

/// The last answered recipients of a run, failed or not, as many as the rule's window.
#[derive(Debug)]
pub struct FailureWatch {
    rule: FailingRule,
    last: VecDeque<bool>,
    failed: u64,
    /// Told once: the answers of requests still in flight after the pause do not tell it again.
    told: bool,
}

impl FailureWatch {
    pub fn new(rule: FailingRule) -> FailureWatch {
        FailureWatch {
            rule,
            last: VecDeque::with_capacity(rule.window.min(4096) as usize),
            failed: 0,
            told: false,
        }
    }

    /// Notes answered recipients (`true`: not accepted, and no fallback followed). Once a full
    /// window holds more failures than the rule allows, answers why the run should pause (once,
    /// until [`FailureWatch::restart`]).
    pub fn answered(&mut self, failures: impl IntoIterator<Item = bool>) -> Option<PauseCause> {
        let window = self.rule.window as usize;
        for failed in failures {
            if self.last.len() == window && self.last.pop_front() == Some(true) {
                self.failed -= 1;
            }
            self.last.push_back(failed);
            self.failed += u64::from(failed);
        }
        let full = self.last.len() == window;
        if self.told || !full || !self.rule.passed_by(self.failed, window as u64) {
            return None;
        }
        self.told = true;
        Some(PauseCause::Failing {
            percent: self.rule.percent,
            window: self.rule.window,
            failed: self.failed,
        })
    }

    /// A person resumed: the window starts again, so the failures that paused the run do not
    /// pause it again at once.
    pub fn restart(&mut self) {
        self.last.clear();
        self.failed = 0;
        self.told = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rule(percent: u32, window: u32) -> FailingRule {
        FailingRule { percent, window }
    }

    #[test]
    fn a_full_window_past_the_share_pauses_once_and_a_restart_forgets_it() {
        let mut watch = FailureWatch::new(rule(20, 10));
        // 9 answered, all failed: the window is not full yet.
        assert_eq!(watch.answered([true; 9]), None);
        assert_eq!(
            watch.answered([true]),
            Some(PauseCause::Failing {
                percent: 20,
                window: 10,
                failed: 10
            })
        );
        assert_eq!(watch.answered([true; 5]), None, "told once");
        watch.restart();
        assert_eq!(watch.answered([true; 9]), None, "a fresh window");
    }

    #[test]
    fn exactly_the_share_does_not_pause_one_more_does() {
        let mut watch = FailureWatch::new(rule(20, 10));
        let eight_taken_then_two_failed = [false, false, false, false, false, false, false, false, true, true];
        assert_eq!(
            watch.answered(eight_taken_then_two_failed),
            None,
            "2 of 10 is 20 %, not past it"
        );
        assert!(watch.answered([true]).is_some(), "3 of the last 10 pass 20 %");
    }

    #[test]
    fn old_failures_leave_the_window() {
        let mut watch = FailureWatch::new(rule(50, 4));
        assert_eq!(watch.answered([true, true, false, false]), None);
        // The two failures slide out; two successes come in.
        assert_eq!(watch.answered([false, false]), None);
        assert_eq!(watch.answered([true, true]), None, "2 of 4 is not more than half");
        assert!(watch.answered([true]).is_some(), "3 of the last 4");
    }

    proptest! {
        /// Whatever the answers, the watch says to pause exactly when the last `window` answers
        /// (a full window) hold more failures than the share, counted afresh.
        #[test]
        fn it_pauses_exactly_when_the_last_window_passes_the_share(
            percent in 1u32..=100,
            window in 1u32..40,
            batches in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 0..12), 0..20),
        ) {
            let rule = rule(percent, window);
            let mut watch = FailureWatch::new(rule);
            let mut all = Vec::new();
            let mut told = false;
            for batch in batches {
                all.extend(batch.iter().copied());
                let said = watch.answered(batch);
                let last = &all[all.len().saturating_sub(window as usize)..];
                let should = !told
                    && last.len() == window as usize
                    && rule.passed_by(last.iter().filter(|failed| **failed).count() as u64, u64::from(window));
                prop_assert_eq!(said.is_some(), should);
                told |= should;
            }
        }
    }
}
