//! The exit policy, in one place: 0 done, 1 failed while running, 2 refused to start, 3 incomplete.

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

    /// The exit of a command that ended with `error`: a refusal when any cause in its chain is one.
    pub fn of_error(error: &anyhow::Error) -> Exit {
        if error.chain().any(is_refusal) {
            Exit::Refused
        } else {
            Exit::Failed
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// Errors that mean "not fit to start": nothing was sent because of them.
fn is_refusal(cause: &(dyn std::error::Error + 'static)) -> bool {
    use crate::engine::checkpoint::CheckpointError;
    use crate::engine::known::Mismatch;
    use crate::input::InputError;
    use crate::plan::PlanError;
    cause.downcast_ref::<crate::engine::Refusal>().is_some()
        || cause.downcast_ref::<crate::campaign::CampaignError>().is_some()
        || cause.downcast_ref::<Mismatch>().is_some()
        // Every input error refuses the file (missing, unreadable type, unbalanced quote, ...)
        // except an I/O failure part-way through a file that was fine to start with.
        || matches!(
            cause.downcast_ref::<InputError>(),
            Some(error) if !matches!(error, InputError::Read { .. })
        )
        || matches!(
            cause.downcast_ref::<PlanError>(),
            Some(PlanError::Input(error)) if !matches!(error, InputError::Read { .. })
        )
        || matches!(
            cause.downcast_ref::<CheckpointError>(),
            Some(CheckpointError::InUse { .. } | CheckpointError::NotARun { .. })
        )
}
