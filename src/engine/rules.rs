//! The rules both faces apply, each in one place: what kind of error ended a command, how a run ended, how a typed amount or a duration is read, and the estimate against the budget. The CLI turns them into exit codes, the console into status codes and states.

use super::checkpoint::CheckpointError;
use super::known::Mismatch;
use super::{Refusal, RunEnd, RunReport};
use crate::input::InputError;
use crate::plan::PlanError;
use std::time::Duration;

/// What an error means for the person who asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Nothing was done because the campaign, its input, the run directory or the request is not
    /// fit: the error's text says what to change.
    Refusal,
    /// Another process holds the run directory: the same request goes through once it lets go.
    Busy,
    /// Anything else: a failure while working, not something the person can fix by asking differently.
    Internal,
}

/// The class of an error: busy or a refusal when any cause in its chain is one.
pub fn classify(error: &anyhow::Error) -> ErrorClass {
    if error.chain().any(is_busy) {
        ErrorClass::Busy
    } else if error.chain().any(is_refusal) {
        ErrorClass::Refusal
    } else {
        ErrorClass::Internal
    }
}

fn is_busy(cause: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        cause.downcast_ref::<CheckpointError>(),
        Some(CheckpointError::InUse { .. })
    )
}

/// Errors that mean "not fit to start": nothing was sent because of them.
fn is_refusal(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.is::<Refusal>()
        || cause.is::<crate::campaign::CampaignError>()
        || cause.is::<Mismatch>()
        // Every input error refuses the file (missing, unreadable type, unbalanced quote, ...)
        // except an I/O failure part-way through a file that was fine to start with.
        || matches!(
            cause.downcast_ref::<InputError>(),
            Some(error) if !matches!(error, InputError::Read { .. })
        )
        // `PlanError::Input` is transparent: its input error is not a cause of its own in the chain.
        || matches!(
            cause.downcast_ref::<PlanError>(),
            Some(PlanError::Input(error)) if !matches!(error, InputError::Read { .. })
        )
        || matches!(
            cause.downcast_ref::<CheckpointError>(),
            Some(CheckpointError::NotARun { .. })
        )
}

/// How a run (or a resume) ended, as both faces tell it: the CLI by its exit code, the console by
/// the campaign's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// Every recipient was answered and nothing is left to do.
    Done,
    /// A stop (Ctrl-C, `msgbatch stop`, the console's button) ended the run or its collection of results.
    Stopped,
    /// Recipients are left pending or uncertain (the budget was reached, a chunk is uncertain).
    Incomplete,
    /// An error stopped the run while it sent.
    Failed,
    /// It did not start: nothing was sent (see [`classify`]).
    Refused,
}

impl RunOutcome {
    /// The outcome of a run that came to its end.
    pub fn of_report(report: &RunReport) -> RunOutcome {
        let collection_stopped = report
            .collected
            .as_ref()
            .is_some_and(|collected| collected.left_by_stop > 0);
        match report.end {
            RunEnd::Failed(_) => RunOutcome::Failed,
            RunEnd::Stopped => RunOutcome::Stopped,
            RunEnd::Complete if collection_stopped => RunOutcome::Stopped,
            RunEnd::Complete if report.status.complete => RunOutcome::Done,
            RunEnd::Complete | RunEnd::BudgetReached(_) => RunOutcome::Incomplete,
        }
    }

    /// The outcome of a run that ended with `error` instead of a report.
    pub fn of_error(error: &anyhow::Error) -> RunOutcome {
        match classify(error) {
            ErrorClass::Refusal | ErrorClass::Busy => RunOutcome::Refused,
            ErrorClass::Internal => RunOutcome::Failed,
        }
    }

    pub fn of(result: &anyhow::Result<RunReport>) -> RunOutcome {
        match result {
            Ok(report) => RunOutcome::of_report(report),
            Err(error) => RunOutcome::of_error(error),
        }
    }
}

/// A number as a person types it, without what people put around and between its digits:
/// `₩150,000`, `150 000원` and `150_000` all read `150000`; `None` when what is left is not a `T`.
pub fn typed_number<T: std::str::FromStr>(text: &str) -> Option<T> {
    let digits: String = text
        .chars()
        .filter(|c| !matches!(c, ',' | '_' | '₩' | '원') && !c.is_whitespace())
        .collect();
    digits.parse().ok()
}

/// An amount in won as a person types it (see [`typed_number`]).
pub fn typed_amount(text: &str) -> Option<i64> {
    typed_number(text)
}

/// Parses `300s`, `2s`, `500ms`, `5m`, `1h` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("not a duration: {text:?} (try 300s, 2s, 500ms)"))?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1_000.0,
        "m" | "min" => value * 60.0,
        "h" => value * 3_600.0,
        other => return Err(format!("unknown unit {other:?} in {text:?} (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("duration out of range: {text:?}"))
}

/// What is known of a campaign's charge when its budget is weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimate {
    /// The campaign has no prices: nothing can be counted against a budget.
    NoPrices,
    /// Priced, but the rows are not read yet.
    NotYetCounted,
    /// The rows' estimated charge, in won.
    Won(i64),
}

/// The estimate against the budget: refused when a budget cannot be counted (no prices) or the
/// estimate is over it, naming both amounts.
pub fn check_estimate(estimate: Estimate, budget: Option<i64>) -> Result<(), Refusal> {
    let Some(budget) = budget else { return Ok(()) };
    match estimate {
        Estimate::NoPrices => Err(Refusal(
            "a budget ([send] budget or --budget) needs prices to count with: the campaign has no [prices] (give the price of each billing class it uses; in the console, its connection's)"
                .into(),
        )),
        Estimate::NotYetCounted => Ok(()),
        Estimate::Won(estimate) if estimate > budget => Err(Refusal(format!(
            "the estimate {} is over the budget {}: nothing was sent. Check the recipients (a list pasted twice, a wrong filter, non-friend targeting), or raise the budget ([send] budget, or --budget {estimate})",
            crate::text::won(estimate),
            crate::text::won(budget)
        ))),
        Estimate::Won(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;
    use std::path::PathBuf;

    #[test]
    fn a_chunk_identity_mismatch_and_a_run_directory_that_is_not_a_run_are_refusals() {
        let mismatch = anyhow::Error::new(Mismatch("chunk sms/0".into())).context("refusing to go on");
        assert_eq!(classify(&mismatch), ErrorClass::Refusal);
        let not_a_run: anyhow::Error = CheckpointError::NotARun {
            path: PathBuf::from("runs/x"),
        }
        .into();
        assert_eq!(classify(&not_a_run), ErrorClass::Refusal);
    }

    #[test]
    fn a_run_directory_in_use_is_busy_however_deep_in_the_chain() {
        let in_use = Err::<(), _>(CheckpointError::InUse {
            path: PathBuf::from("runs/x"),
        })
        .context("cannot read the run")
        .unwrap_err();
        assert_eq!(classify(&in_use), ErrorClass::Busy);
        assert_eq!(RunOutcome::of_error(&in_use), RunOutcome::Refused);
    }

    #[test]
    fn an_io_failure_part_way_through_a_file_is_internal() {
        let read: anyhow::Error = InputError::Read {
            path: PathBuf::from("r.csv"),
            row: 7,
            source: std::io::Error::other("disk gone"),
        }
        .into();
        assert_eq!(classify(&read), ErrorClass::Internal);
        assert_eq!(RunOutcome::of_error(&read), RunOutcome::Failed);
        assert_eq!(classify(&anyhow::anyhow!("anything")), ErrorClass::Internal);
    }

    #[test]
    fn typed_amounts_read_alike() {
        for typed in ["₩1,234", "1,234원", "1_234", " 1 234 ", "1234"] {
            assert_eq!(typed_amount(typed), Some(1234), "{typed:?}");
        }
        assert_eq!(typed_number::<f64>("1,000.5"), Some(1000.5));
        assert_eq!(typed_amount("12x"), None);
        assert_eq!(typed_amount(""), None);
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn the_estimate_is_weighed_against_the_budget() {
        assert!(check_estimate(Estimate::Won(96), Some(96)).is_ok());
        assert!(check_estimate(Estimate::Won(96), None).is_ok());
        assert!(check_estimate(Estimate::NoPrices, None).is_ok());
        assert!(check_estimate(Estimate::NotYetCounted, Some(1)).is_ok());
        let over = check_estimate(Estimate::Won(96), Some(50)).unwrap_err().0;
        assert!(over.contains("₩96") && over.contains("₩50"), "{over}");
        assert!(check_estimate(Estimate::NoPrices, Some(50)).is_err());
    }

    #[test]
    fn a_duration_too_long_to_hold_is_an_error() {
        let error = parse_duration("99999999999999999999h").unwrap_err();
        assert!(error.contains("out of range"), "{error}");
        assert!(
            parse_duration(&"9".repeat(400)).is_err(),
            "a number that parses as infinity"
        );
    }

    proptest::proptest! {
        #[test]
        fn parse_duration_never_panics_on_any_text(text in "\\PC*") {
            let _ = parse_duration(&text);
        }

        #[test]
        fn parse_duration_never_panics_on_any_number_and_unit(
            text in "[0-9]{0,40}(\\.[0-9]{0,40})?(ms|s|m|min|h|x)?",
        ) {
            let _ = parse_duration(&text);
        }
    }
}
