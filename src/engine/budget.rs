//! The spend cap: a chunk reserved at its worst case before it is marked in flight, the reservation turned into the real charge when the answer comes, and charged + reserved never past the limit.
//!
//! An uncertain chunk stays reserved at its worst case: nobody knows what it cost. A chunk the
//! service provably did not take gives its reservation back.

use serde::{Deserialize, Serialize};
use std::sync::Mutex;

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

/// The spend of a run, shared by the dispatcher (which reserves) and the senders (which settle).
pub struct Budget {
    limit: Option<i64>,
    spend: Mutex<Spend>,
}

impl Budget {
    /// A run's budget, starting from what its checkpoint already holds.
    pub fn new(limit: Option<i64>, start: Spend) -> Budget {
        Budget {
            limit,
            spend: Mutex::new(start),
        }
    }

    pub fn limit(&self) -> Option<i64> {
        self.limit
    }

    pub fn spend(&self) -> Spend {
        *self.spend.lock().expect("budget lock")
    }

    /// Reserves `worst` won for a chunk about to be marked in flight, unless that would take
    /// charged + reserved past the limit. Checked and taken under one lock, so two chunks can
    /// never both fit where only one does.
    pub fn reserve(&self, worst: i64) -> Result<(), BudgetReached> {
        let mut spend = self.spend.lock().expect("budget lock");
        if let Some(limit) = self.limit {
            if spend.total() + worst > limit {
                return Err(BudgetReached {
                    limit,
                    charged: spend.charged,
                    reserved: spend.reserved,
                    next_chunk: worst,
                });
            }
        }
        spend.reserved += worst;
        Ok(())
    }

    /// The answer came: the chunk's reservation of `worst` becomes its `charged` amount, and
    /// `kept` of it stays reserved for what may still follow. Neither can exceed the worst case
    /// (the same prices make both), so the total never grows here.
    pub fn settle(&self, worst: i64, charged: i64, kept: i64) {
        debug_assert!(charged + kept <= worst, "a charge beyond its reservation");
        let charged = charged.min(worst);
        let kept = kept.min(worst - charged);
        let mut spend = self.spend.lock().expect("budget lock");
        spend.reserved -= worst - kept;
        spend.charged += charged;
    }

    /// The service provably did not take the chunk: its reservation is given back.
    pub fn release(&self, worst: i64) {
        self.spend.lock().expect("budget lock").reserved -= worst;
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
                next_chunk: 41
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
}
