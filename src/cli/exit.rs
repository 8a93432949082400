//! The exit policy, in one place: 0 done, 1 failed while running, 2 refused to start, 3 incomplete.

use crate::engine::rules::{classify, ErrorClass, RunOutcome};
use std::process::ExitCode;

/// How a command ends, for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything asked was done.
    Done,
    /// Something failed while running (or `validate --strict` found rejected rows, `reconcile`
    /// found mismatches).
    Failed,
    /// Nothing was done: the campaign, its input, the run directory or the command line is not fit to start.
    Refused,
    /// Stopped, or rows left pending or uncertain: `resume` (or `collect`) has more to do.
    Incomplete,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Failed => 1,
            Exit::Refused => 2,
            Exit::Incomplete => 3,
        }
    }

    /// The exit of a command that ended with `error`: a refusal (or a run directory another
    /// process holds) is "not fit to start", anything else a failure.
    pub fn of_error(error: &anyhow::Error) -> Exit {
        match classify(error) {
            ErrorClass::Refusal | ErrorClass::Busy => Exit::Refused,
            ErrorClass::Internal => Exit::Failed,
        }
    }
}

/// A stopped run exits as an incomplete one: both are resumed.
impl From<RunOutcome> for Exit {
    fn from(outcome: RunOutcome) -> Exit {
        match outcome {
            RunOutcome::Done => Exit::Done,
            RunOutcome::Failed => Exit::Failed,
            RunOutcome::Refused => Exit::Refused,
            RunOutcome::Stopped | RunOutcome::Incomplete => Exit::Incomplete,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}
