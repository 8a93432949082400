//! The workspace's month: a limit in won for each calendar month in Seoul time, shared by every run the console starts through one ledger a month (the engine's own budget, which each run's budget is part of), its alert thresholds, and the month rebuilt from the runs' checkpoints when the console starts.
//!
//! A run counts in the month it started in, resumes included: its reservations, charges and
//! give-backs go to that month's ledger for as long as it runs.

use super::campaigns::{CampaignRecord, Workspace};
use super::error::ConsoleError;
use super::store::Store;
use crate::engine::budget::{Budget, Spend};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The store's name of the setting.
const SETTING: &str = "month_limit";

/// What an administrator sets: the limit of each calendar month (none: no limit) and the shares
/// of it at which the console warns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthLimit {
    pub limit: Option<i64>,
    /// Percent of the limit, ascending.
    pub thresholds: Vec<u32>,
}

impl Default for MonthLimit {
    fn default() -> MonthLimit {
        MonthLimit {
            limit: None,
            thresholds: vec![70, 90, 100],
        }
    }
}

impl MonthLimit {
    pub fn load(store: &Store) -> Result<MonthLimit, ConsoleError> {
        Ok(store.setting(SETTING)?.unwrap_or_default())
    }

    pub fn save(&self, store: &Store) -> Result<(), ConsoleError> {
        store.put_setting(SETTING, self)
    }
}

/// Where a month stands, in won.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonthFigures {
    pub limit: Option<i64>,
    pub charged: i64,
    pub reserved: i64,
}

impl MonthFigures {
    /// What a new run may still reserve; `None` without a limit.
    pub fn left(&self) -> Option<i64> {
        self.limit.map(|limit| (limit - self.charged - self.reserved).max(0))
    }

    /// The thresholds charged + reserved has reached.
    pub fn reached(&self, thresholds: &[u32]) -> Vec<u32> {
        let Some(limit) = self.limit.filter(|limit| *limit > 0) else {
            return Vec::new();
        };
        let used = self.charged + self.reserved;
        thresholds
            .iter()
            .copied()
            .filter(|percent| used * 100 >= limit * i64::from(*percent))
            .collect()
    }
}

/// One ledger a month (`2026-11`), shared by the runs the console drives.
pub struct Months {
    ledgers: Mutex<BTreeMap<String, Arc<Budget>>>,
    setting: Mutex<MonthLimit>,
}

impl Months {
    /// The months as the runs' checkpoints leave them: each run's charged + reserved in the
    /// month it started, with the administrator's limit. Nothing of it is kept only in memory.
    pub fn rebuild(store: &Store, workspace: &Workspace) -> Result<Months, ConsoleError> {
        let setting = MonthLimit::load(store)?;
        let mut spent: BTreeMap<String, Spend> = BTreeMap::new();
        for record in store.campaigns::<CampaignRecord>()? {
            let Some(run) = &record.run else { continue };
            let run_dir = workspace.run_dir(&record.id);
            if !crate::engine::checkpoint_dir(&run_dir).exists() {
                continue;
            }
            let status = crate::engine::status(&run_dir).map_err(ConsoleError::from)?;
            if let Some(budget) = status.budget {
                let month = spent.entry(month_of(&run.started_at)).or_default();
                month.charged += budget.charged;
                month.reserved += budget.reserved;
            }
        }
        let ledgers = spent
            .into_iter()
            .map(|(month, spend)| (month, Arc::new(Budget::new(setting.limit, spend))))
            .collect();
        Ok(Months {
            ledgers: Mutex::new(ledgers),
            setting: Mutex::new(setting),
        })
    }

    /// The ledger of a month, empty when no run started in it yet.
    pub fn ledger(&self, month: &str) -> Arc<Budget> {
        let limit = self.setting.lock().limit;
        self.ledgers
            .lock()
            .entry(month.to_string())
            .or_insert_with(|| Arc::new(Budget::new(limit, Spend::default())))
            .clone()
    }

    pub fn setting(&self) -> MonthLimit {
        self.setting.lock().clone()
    }

    /// A new limit for every month, saved first; runs going on meet it at their next chunk.
    pub fn set(&self, store: &Store, setting: MonthLimit) -> Result<(), ConsoleError> {
        setting.save(store)?;
        for ledger in self.ledgers.lock().values() {
            ledger.set_limit(setting.limit);
        }
        *self.setting.lock() = setting;
        Ok(())
    }

    /// Refuses a campaign whose estimate is over what is left of this month, with both figures.
    pub fn refuse_over_left(&self, estimate: Option<i64>) -> Result<(), ConsoleError> {
        let figures = self.figures(&this_month());
        match (estimate, figures.left()) {
            (Some(estimate), Some(left)) if estimate > left => Err(ConsoleError::conflict(
                crate::word!(refuse_month_left),
                vec![
                    ("estimate", crate::text::won(estimate).into()),
                    ("left", crate::text::won(left).into()),
                    ("limit", crate::text::won_opt(figures.limit).into()),
                ],
            )),
            _ => Ok(()),
        }
    }

    /// The thresholds the month has reached that were not told before (each once a month, kept
    /// in the store so that a restart does not tell them again).
    pub fn newly_reached(&self, store: &Store, month: &str) -> Result<Vec<u32>, ConsoleError> {
        let reached = self.figures(month).reached(&self.setting().thresholds);
        let key = format!("{SETTING}:told:{month}");
        let told: Vec<u32> = store.setting(&key)?.unwrap_or_default();
        let new: Vec<u32> = reached
            .iter()
            .copied()
            .filter(|percent| !told.contains(percent))
            .collect();
        if !new.is_empty() {
            let mut all = told;
            all.extend(&new);
            store.put_setting(&key, &all)?;
        }
        Ok(new)
    }

    pub fn figures(&self, month: &str) -> MonthFigures {
        let ledger = self.ledger(month);
        let spend = ledger.spend();
        MonthFigures {
            limit: ledger.limit(),
            charged: spend.charged,
            reserved: spend.reserved,
        }
    }
}

/// The calendar month in Seoul of an RFC 3339 stamp (`2026-11-30T16:00:00Z` → `2026-12`); the
/// month now for a stamp that does not read.
pub fn month_of(stamp: &str) -> String {
    let at = chrono::DateTime::parse_from_rfc3339(stamp).unwrap_or_else(|_| chrono::Utc::now().fixed_offset());
    at.with_timezone(&crate::campaign::quiet::kst())
        .format("%Y-%m")
        .to_string()
}

/// The month now, in Seoul.
pub fn this_month() -> String {
    month_of(&super::campaigns::now_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_is_the_seoul_calendar_month() {
        assert_eq!(month_of("2026-11-30T14:59:59Z"), "2026-11");
        assert_eq!(month_of("2026-11-30T15:00:00Z"), "2026-12", "midnight in Seoul");
    }

    #[test]
    fn what_is_left_and_the_thresholds_reached() {
        let figures = MonthFigures {
            limit: Some(1_000),
            charged: 600,
            reserved: 150,
        };
        assert_eq!(figures.left(), Some(250));
        assert_eq!(figures.reached(&[70, 90, 100]), vec![70]);
        let none = MonthFigures { limit: None, ..figures };
        assert_eq!((none.left(), none.reached(&[70])), (None, vec![]));
    }
}
