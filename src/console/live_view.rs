//! What the live page shows of a run, in the page's words: its figures, progress, pictures, last errors and how it ended; from a running board's reading or from a run's checkpoint and record.

use super::live_chart::{self, RatePoint, Shares};
use super::words::ends::end_words;
use super::words::fill;
use super::words::{Words, EN};
use crate::engine::budget::BudgetScope;
use crate::engine::RunEnd;
use serde::{Deserialize, Serialize};

/// An error the live page lists, kept as what happened so that each page says it in its own
/// language; phone numbers in an engine's text are masked before it is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LiveError {
    NotAccepted {
        recipients: u64,
        status: String,
    },
    Uncertain {
        recipients: u64,
        reason: String,
    },
    BudgetReached {
        limit: i64,
        /// The month's limit, not the run's budget.
        #[serde(default)]
        month: bool,
    },
    Warning {
        text: String,
    },
}

impl LiveError {
    pub fn text(&self, w: &Words) -> String {
        let count = crate::text::count;
        match self {
            LiveError::NotAccepted { recipients, status } => {
                let label = crate::report::status_label(status, w.report_lang());
                let status = match label {
                    Some(label) => format!("{status} · {label}"),
                    None => status.clone(),
                };
                fill(
                    w.live_err_not_accepted,
                    &[("n", &count(*recipients)), ("status", &status)],
                )
            }
            LiveError::Uncertain { recipients, reason } => {
                fill(w.live_err_uncertain, &[("n", &count(*recipients)), ("reason", reason)])
            }
            LiveError::BudgetReached { limit, month } => fill(
                if *month {
                    w.live_err_month_limit
                } else {
                    w.live_err_budget
                },
                &[("won", &crate::text::won(*limit))],
            ),
            LiveError::Warning { text } => text.clone(),
        }
    }
}

/// What the run's record keeps of the live page once the run ends: its last errors and its rate
/// over time (both bounded), so that a reload or a restarted console still shows them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeptLive {
    #[serde(default)]
    pub errors: Vec<LiveError>,
    #[serde(default)]
    pub rate: Vec<RatePoint>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LaneRow {
    pub lane: &'static str,
    pub valid: u64,
    pub sent: u64,
    pub uncertain: u64,
    pub sending: u64,
    pub pending: u64,
}

impl LaneRow {
    /// The lanes of a status, in lane order.
    pub fn all(status: &crate::engine::Status) -> Vec<LaneRow> {
        status
            .lanes
            .iter()
            .map(|(lane, figures)| LaneRow {
                lane: lane.as_str(),
                valid: figures.valid,
                sent: figures.sent,
                uncertain: figures.uncertain,
                sending: figures.sending,
                pending: figures.pending,
            })
            .collect()
    }
}

/// What the live page is drawn from: a running board's reading, or a run's checkpoint and record.
pub struct Reading<'a> {
    pub phase: &'static str,
    pub status: &'a crate::engine::Status,
    pub rate: f64,
    pub pace: Option<crate::engine::events::Pace>,
    pub time_left: String,
    /// Newest first.
    pub errors: &'a [LiveError],
    pub waiting: Option<String>,
    /// Why it is paused, while it is.
    pub paused: Option<&'a crate::engine::events::PauseCause>,
    /// How it ended, as [`end_text`] (or the run's record) says it.
    pub finished: Option<String>,
    pub points: &'a [RatePoint],
}

/// A run's recipients done (answered, or uncertain) and in all (with those in flight and still to
/// send): what its progress is counted in.
pub fn done_and_total(status: &crate::engine::Status) -> (u64, u64) {
    let done = status.sent + status.uncertain;
    (done, done + status.sending + status.pending)
}

impl Reading<'_> {
    pub fn view(&self, w: &Words) -> LiveView {
        let status = self.status;
        let (done, total) = done_and_total(status);
        let percent = match (total, &self.finished) {
            (0, Some(_)) => 100,
            (0, None) => 0,
            _ => done * 100 / total,
        };
        let pace = self.pace.map(|pace| {
            let at_once = fill(w.live_at_once, &[("n", &pace.concurrency.to_string())]);
            match pace.rate {
                Some(rate) => format!("{}, {at_once}", fill(w.live_per_second, &[("n", &rate.to_string())])),
                None => format!("{}, {at_once}", w.live_as_answered),
            }
        });
        let charged = status.budget.map(|budget| budget.charged);
        let budget = status.budget.and_then(|budget| budget.limit);
        let now = if self.phase == "paused" { 0.0 } else { self.rate };
        LiveView {
            phase: self.phase,
            phase_label: phase_word(w, self.phase),
            lanes: LaneRow::all(status),
            sent: status.sent,
            accepted: status.accepted,
            not_accepted: status.not_accepted,
            uncertain: status.uncertain,
            in_flight: status.sending,
            pending: status.pending,
            done,
            total,
            percent,
            rate: crate::text::count(self.rate.round() as u64),
            pace: pace.unwrap_or_default(),
            time_left: self.time_left.clone(),
            charged,
            reserved: status.budget.map(|budget| budget.reserved),
            budget,
            spend: spend_text(charged, budget),
            errors: self.errors.iter().map(|error| error.text(w)).collect(),
            waiting: self.waiting.clone(),
            paused_why: self.paused.and_then(|cause| paused_words(w, cause)),
            finished: self.finished.as_deref().map(|end| end_words(w, end)),
            stack: live_chart::stack_svg(
                w,
                &Shares {
                    accepted: status.accepted,
                    not_accepted: status.not_accepted,
                    uncertain: status.uncertain,
                    in_flight: status.sending,
                    pending: status.pending,
                },
            ),
            chart: live_chart::rate_svg(w, self.points, now),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LiveView {
    pub phase: &'static str,
    /// The phase in the page's words.
    pub phase_label: &'static str,
    pub lanes: Vec<LaneRow>,
    pub sent: u64,
    pub accepted: u64,
    pub not_accepted: u64,
    pub uncertain: u64,
    pub in_flight: u64,
    pub pending: u64,
    /// Answered or uncertain, of `total` (every recipient the run sends): the progress bar.
    pub done: u64,
    pub total: u64,
    /// `done` of `total` in whole percent (rounded down: 100 only at the end).
    pub percent: u64,
    pub rate: String,
    pub pace: String,
    pub time_left: String,
    pub charged: Option<i64>,
    pub reserved: Option<i64>,
    pub budget: Option<i64>,
    /// Charged, and the budget, in won as people read them.
    pub spend: String,
    pub errors: Vec<String>,
    pub waiting: Option<String>,
    /// Why the run paused itself, and what to do (a person's own pause needs no words).
    pub paused_why: Option<String>,
    pub finished: Option<String>,
    /// The answers so far as a stacked bar (SVG).
    pub stack: String,
    /// Messages per second over time (SVG).
    pub chart: String,
}

/// Why a run paused, in the page's words; `None` when a person paused it.
pub fn paused_words(w: &Words, cause: &crate::engine::events::PauseCause) -> Option<String> {
    use crate::engine::events::PauseCause;
    match cause {
        PauseCause::Asked => None,
        PauseCause::QuietHours { window, until, .. } => Some(fill(
            w.live_paused_quiet_hours,
            &[("window", window), ("until", &crate::campaign::quiet::wall_time(until))],
        )),
        PauseCause::Failing {
            percent,
            window,
            failed,
        } => Some(fill(
            w.live_paused_failing,
            &[
                ("failed", &crate::text::count(*failed)),
                ("window", &crate::text::count(u64::from(*window))),
                ("percent", &percent.to_string()),
            ],
        )),
    }
}

/// A phase (`sending`, `paused`…) in the page's words.
pub fn phase_word(w: &Words, phase: &str) -> &'static str {
    match phase {
        "paused" => w.live_paused,
        "scheduled" => w.live_scheduled,
        "stopping" => w.live_stopping,
        "finished" => w.live_finished,
        _ => w.live_sending,
    }
}

/// `₩64 / ₩100,000`, or the charge alone without a budget.
pub fn spend_text(charged: Option<i64>, budget: Option<i64>) -> String {
    let charged = charged.map(crate::report::won).unwrap_or_else(|| "–".into());
    match budget {
        Some(limit) => format!("{charged} / {}", crate::report::won(limit)),
        None => charged,
    }
}

/// How a run ended, as the run's record keeps it (in English: [`end_words`] reads it back in
/// a page's language).
pub fn end_text(end: &RunEnd) -> String {
    match end {
        RunEnd::Complete => EN.live_end_complete.into(),
        RunEnd::Stopped => EN.live_end_stopped.into(),
        RunEnd::BudgetReached(reached) => fill(
            match reached.scope {
                BudgetScope::Run => EN.live_end_budget,
                BudgetScope::Month => EN.live_end_month_limit,
            },
            &[("won", &crate::text::won(reached.limit))],
        ),
        RunEnd::Failed(reason) => fill(EN.live_end_failed, &[("reason", &crate::phone::mask_phones(reason))]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::words::KO;

    #[test]
    fn a_run_stopped_by_the_months_limit_says_so_in_the_pages_language() {
        let reached = crate::engine::budget::BudgetReached {
            limit: 200_000,
            charged: 199_000,
            reserved: 0,
            next_chunk: 1_600,
            scope: BudgetScope::Month,
        };
        let end = end_text(&RunEnd::BudgetReached(reached));
        assert_eq!(
            end_words(&KO, &end),
            fill(KO.live_end_month_limit, &[("won", "₩200,000")])
        );
    }

    #[test]
    fn a_kept_end_reads_in_the_pages_language() {
        assert_eq!(end_words(&KO, &end_text(&RunEnd::Complete)), KO.live_end_complete);
        let failed = end_text(&RunEnd::Failed("the service answered 500 for 01012345678".into()));
        assert_eq!(
            end_words(&KO, &failed),
            "실패: the service answered 500 for 010-****-5678"
        );
        assert_eq!(end_words(&KO, "something else"), "something else");
        assert_eq!(end_words(&EN, EN.live_end_interrupted), EN.live_end_interrupted);
    }

    #[test]
    fn an_error_reads_in_the_pages_language_with_its_statuss_label() {
        let error = LiveError::NotAccepted {
            recipients: 1_200,
            status: "ERROR".into(),
        };
        let text = error.text(&KO);
        assert!(text.starts_with("1,200건 미접수: ERROR"), "{text}");
        let kept: KeptLive = serde_json::from_str("{}").unwrap();
        assert_eq!(kept, KeptLive::default(), "a record from before keeps nothing");
    }
}
