//! The spend cap: a chunk reserved at its worst case before it is marked in flight, the reservation turned into the real charge when the answer comes, and charged + reserved never past the limit.
//!
//! An uncertain chunk stays reserved at its worst case: nobody knows what it cost. A chunk the
//! service provably did not take gives its reservation back.
//!
//! A run's budget may be part of a ledger shared by several runs (the console's month): the same
//! budget type, each reservation, charge and give-back made in both, so that charged + reserved
//! stays within each limit, the run's and the ledger's, whatever the runs do at once.

use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// Where a run stands with its spend, in won.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spend {
    /// What the answers so far cost.
    pub charged: i64,
    /// Worst cases of chunks in flight or uncertain, and fallbacks that may still follow.
    pub reserved: i64,
}

impl Spend {
    pub fn total(self) -> i64 {
        self.charged + self.reserved
    }
}

/// The limit reached: the next chunk's worst case would take charged + reserved past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetReached {
    pub limit: i64,
    pub charged: i64,
    pub reserved: i64,
    /// The worst case of the chunk that was not sent.
    pub next_chunk: i64,
    /// Whose limit: the run's budget, or the ledger it is part of (the month's).
    #[serde(default)]
    pub scope: BudgetScope,
}

/// Which limit a run met.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetScope {
    /// The run's own `[send] budget` (`--budget`).
    #[default]
    Run,
    /// The limit of the ledger the run is part of: the workspace's month.
    Month,
}

/// A chunk's part of the spend cap: its worst case, reserved when it was marked; once answered,
/// what it was charged and what stays reserved (a gateway fallback that may still follow).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkCost {
    pub worst: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<i64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kept: i64,
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

impl ChunkCost {
    /// What the chunk counts in the spend: charged and kept once answered, else its worst case
    /// (in flight or uncertain: nobody knows what it cost).
    pub fn spend(&self, state: super::checkpoint::ChunkState) -> Spend {
        match (state, self.charged) {
            (super::checkpoint::ChunkState::Done, Some(charged)) => Spend {
                charged,
                reserved: self.kept,
            },
            _ => Spend {
                charged: 0,
                reserved: self.worst,
            },
        }
    }
}

/// The spend of a run, shared by the dispatcher (which reserves) and the senders (which settle);
/// or a ledger several runs' budgets are part of.
#[derive(Debug)]
pub struct Budget {
    state: Mutex<Limited>,
    /// The ledger this budget is part of: every change is made there too.
    within: Option<Arc<Budget>>,
}

#[derive(Debug, Clone, Copy)]
struct Limited {
    limit: Option<i64>,
    spend: Spend,
}

impl Budget {
    /// A run's budget, starting from what its checkpoint already holds.
    pub fn new(limit: Option<i64>, start: Spend) -> Budget {
        Budget {
            state: Mutex::new(Limited { limit, spend: start }),
            within: None,
        }
    }

    /// This budget as part of `ledger`, which already counts what this budget starts from (a
    /// ledger is rebuilt from the runs' checkpoints, then kept by their reservations).
    pub fn within(self, ledger: Arc<Budget>) -> Budget {
        Budget {
            within: Some(ledger),
            ..self
        }
    }

    pub fn limit(&self) -> Option<i64> {
        self.state.lock().expect("budget lock").limit
    }

    /// A ledger's limit changes (an administrator's new monthly limit); what is reserved stays.
    pub fn set_limit(&self, limit: Option<i64>) {
        self.state.lock().expect("budget lock").limit = limit;
    }

    pub fn spend(&self) -> Spend {
        self.state.lock().expect("budget lock").spend
    }

    /// Reserves `worst` won for a chunk about to be marked in flight, unless that would take
    /// charged + reserved past this limit or the ledger's. Checked and taken under this
    /// budget's lock, then the ledger's (always in that order), so two chunks can never both fit
    /// where only one does, and a refusal by the ledger changes nothing here.
    pub fn reserve(&self, worst: i64) -> Result<(), BudgetReached> {
        let mut state = self.state.lock().expect("budget lock");
        if let Some(limit) = state.limit {
            if state.spend.total() + worst > limit {
                return Err(BudgetReached {
                    limit,
                    charged: state.spend.charged,
                    reserved: state.spend.reserved,
                    next_chunk: worst,
                    scope: BudgetScope::Run,
                });
            }
        }
        if let Some(ledger) = &self.within {
            ledger.reserve(worst).map_err(|reached| BudgetReached {
                scope: BudgetScope::Month,
                ..reached
            })?;
        }
        state.spend.reserved += worst;
        Ok(())
    }

    /// The answer came: the chunk's reservation of `worst` becomes its `charged` amount, and
    /// `kept` of it stays reserved for what may still follow. Neither can exceed the worst case
    /// (the same prices make both), so the total never grows here.
    pub fn settle(&self, worst: i64, charged: i64, kept: i64) {
        debug_assert!(charged + kept <= worst, "a charge beyond its reservation");
        let charged = charged.min(worst);
        let kept = kept.min(worst - charged);
        let mut state = self.state.lock().expect("budget lock");
        state.spend.reserved -= worst - kept;
        state.spend.charged += charged;
        if let Some(ledger) = &self.within {
            ledger.settle(worst, charged, kept);
        }
    }

    /// The service provably did not take the chunk: its reservation is given back.
    pub fn release(&self, worst: i64) {
        let mut state = self.state.lock().expect("budget lock");
        state.spend.reserved -= worst;
        if let Some(ledger) = &self.within {
            ledger.release(worst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservation_that_would_pass_the_limit_is_refused_and_changes_nothing() {
        let budget = Budget::new(Some(100), Spend::default());
        budget.reserve(60).unwrap();
        let reached = budget.reserve(41).unwrap_err();
        assert_eq!(
            reached,
            BudgetReached {
                limit: 100,
                charged: 0,
                reserved: 60,
                next_chunk: 41,
                scope: BudgetScope::Run,
            }
        );
        assert_eq!(
            budget.spend(),
            Spend {
                charged: 0,
                reserved: 60
            }
        );
        budget.reserve(40).unwrap();
        assert_eq!(budget.spend().total(), 100, "exactly the limit fits");
    }

    #[test]
    fn an_answer_turns_the_reservation_into_the_charge_and_a_release_gives_it_back() {
        let budget = Budget::new(
            Some(1_000),
            Spend {
                charged: 10,
                reserved: 5,
            },
        );
        budget.reserve(300).unwrap();
        budget.settle(300, 120, 30);
        assert_eq!(
            budget.spend(),
            Spend {
                charged: 130,
                reserved: 35
            }
        );
        budget.reserve(200).unwrap();
        budget.release(200);
        assert_eq!(
            budget.spend(),
            Spend {
                charged: 130,
                reserved: 35
            }
        );
    }

    #[test]
    fn without_a_limit_everything_is_counted_and_nothing_refused() {
        let budget = Budget::new(None, Spend::default());
        budget.reserve(i64::MAX / 4).unwrap();
        budget.settle(i64::MAX / 4, 7, 0);
        assert_eq!(
            budget.spend(),
            Spend {
                charged: 7,
                reserved: 0
            }
        );
    }

    #[test]
    fn a_run_within_a_ledger_is_refused_by_the_ledger_saying_so_and_keeps_nothing() {
        let month = Arc::new(Budget::new(
            Some(100),
            Spend {
                charged: 50,
                reserved: 0,
            },
        ));
        let run = Budget::new(Some(1_000), Spend::default()).within(month.clone());
        run.reserve(40).unwrap();
        let reached = run.reserve(20).unwrap_err();
        assert_eq!(
            (reached.scope, reached.limit, reached.charged, reached.reserved),
            (BudgetScope::Month, 100, 50, 40)
        );
        assert_eq!(
            run.spend().reserved,
            40,
            "the refused chunk reserved nothing in the run"
        );
        run.settle(40, 30, 0);
        assert_eq!(
            month.spend(),
            Spend {
                charged: 80,
                reserved: 0
            }
        );
        month.set_limit(Some(200));
        run.reserve(20).unwrap();
        run.release(20);
        assert_eq!(
            month.spend(),
            Spend {
                charged: 80,
                reserved: 0
            }
        );
    }

    #[test]
    fn runs_reserving_at_once_from_threads_never_pass_the_months_limit() {
        let month = Arc::new(Budget::new(Some(10_000), Spend::default()));
        let runs: Vec<Arc<Budget>> = (0..4)
            .map(|_| Arc::new(Budget::new(Some(4_000), Spend::default()).within(month.clone())))
            .collect();
        let threads: Vec<_> = runs
            .iter()
            .cloned()
            .map(|run| {
                let month = month.clone();
                std::thread::spawn(move || {
                    for i in 0..2_000i64 {
                        let worst = 1 + i % 7;
                        if run.reserve(worst).is_ok() {
                            assert!(month.spend().total() <= 10_000);
                            // Every third answered below its worst case, every fifth given back.
                            match i % 5 {
                                0 => run.release(worst),
                                _ if i % 3 == 0 => run.settle(worst, worst / 2, 0),
                                _ => {}
                            }
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let total: i64 = runs.iter().map(|run| run.spend().total()).sum();
        assert!(month.spend().total() <= 10_000);
        assert_eq!(month.spend().total(), total, "the ledger holds exactly its runs' spend");
        assert!(runs.iter().all(|run| run.spend().total() <= 4_000));
    }

    /// One step of one run against the shared ledger.
    #[derive(Debug, Clone)]
    enum Step {
        /// A chunk reserved at its worst case (if it fits).
        Reserve { run: usize, worst: i64 },
        /// The oldest reservation answered: charged, kept in per mille of its worst case.
        Answer { run: usize, charged: i64, kept: i64 },
        /// The oldest reservation given back (the service provably did not take it).
        GiveBack { run: usize },
        /// The oldest reservation uncertain: it stays reserved at its worst case, for good.
        Uncertain { run: usize },
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            (0..3usize, 0..400i64).prop_map(|(run, worst)| Step::Reserve { run, worst }),
            (0..3usize, 0..=1000i64, 0..=1000i64).prop_map(|(run, charged, kept)| Step::Answer { run, charged, kept }),
            (0..3usize).prop_map(|run| Step::GiveBack { run }),
            (0..3usize).prop_map(|run| Step::Uncertain { run }),
        ]
    }

    proptest::proptest! {
        /// Any interleaving of three runs' reservations, answers, uncertain chunks and give-backs
        /// keeps charged + reserved within each run's budget and the month's limit, the month
        /// holding exactly the sum of its runs (and what it started from).
        #[test]
        fn any_interleaving_of_runs_keeps_every_limit(
            month_limit in 0..3_000i64,
            start in 0..500i64,
            run_limits in proptest::collection::vec(proptest::option::of(0..1_500i64), 3),
            steps in proptest::collection::vec(step(), 0..200),
        ) {
            let month = Arc::new(Budget::new(Some(month_limit.max(start)), Spend { charged: start, reserved: 0 }));
            let runs: Vec<Budget> = run_limits.iter().map(|limit| Budget::new(*limit, Spend::default()).within(month.clone())).collect();
            let mut outstanding: Vec<std::collections::VecDeque<i64>> = vec![Default::default(); 3];
            for step in steps {
                match step {
                    Step::Reserve { run, worst } => {
                        if runs[run].reserve(worst).is_ok() {
                            outstanding[run].push_back(worst);
                        }
                    }
                    Step::Answer { run, charged, kept } => {
                        if let Some(worst) = outstanding[run].pop_front() {
                            let charged = worst * charged / 1000;
                            let kept = (worst - charged) * kept / 1000;
                            runs[run].settle(worst, charged, kept);
                        }
                    }
                    Step::GiveBack { run } => {
                        if let Some(worst) = outstanding[run].pop_front() {
                            runs[run].release(worst);
                        }
                    }
                    Step::Uncertain { run } => {
                        outstanding[run].pop_front();
                    }
                }
                for (run, limit) in runs.iter().zip(&run_limits) {
                    if let Some(limit) = limit {
                        proptest::prop_assert!(run.spend().total() <= *limit);
                    }
                }
                proptest::prop_assert!(month.spend().total() <= month_limit.max(start));
                let runs_total: i64 = runs.iter().map(|run| run.spend().total()).sum();
                proptest::prop_assert_eq!(month.spend().total(), start + runs_total);
            }
        }
    }
}
