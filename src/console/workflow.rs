//! The campaign workflow in one place: which step may be taken from which state (one table), and a step applied, saved and audited under the transitions lock, so that two steps never interleave and none is taken from a state the table does not allow.

use super::campaigns::{self, CampaignRecord, State};
use super::error::{ConsoleError, Figure};
use super::words::Words;
use super::Console;

/// A person's step on a campaign's way to sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Edit,
    Check,
    Submit,
    Approve,
    Start,
    Resume,
}

/// One line of the workflow: the states a step is taken from, the state it leaves the campaign in
/// (`None`: the step decides, as a check that passes or not), its word in the audit log, and what
/// a refusal says after "this campaign is STATE:".
struct Rule {
    step: Step,
    from: &'static [State],
    to: Option<State>,
    action: &'static str,
    refusal: fn(&Words) -> &'static str,
}

/// The workflow (DESIGN.md, "The console"): draft → checked → awaiting approval → approved →
/// sending → an end; an edit or a check from any state not yet started.
const WORKFLOW: [Rule; 6] = [
    Rule {
        step: Step::Edit,
        from: &State::EDITABLE,
        to: Some(State::Draft),
        action: "edited",
        refusal: |w| w.refuse_step_edit,
    },
    Rule {
        step: Step::Check,
        from: &State::EDITABLE,
        to: None,
        action: "checked",
        refusal: |w| w.refuse_step_check,
    },
    Rule {
        step: Step::Submit,
        from: &[State::Checked],
        to: Some(State::AwaitingApproval),
        action: "submitted",
        refusal: |w| w.refuse_step_submit,
    },
    Rule {
        step: Step::Approve,
        from: &[State::AwaitingApproval],
        to: Some(State::Approved),
        action: "approved",
        refusal: |w| w.refuse_step_approve,
    },
    Rule {
        step: Step::Start,
        from: &[State::Approved],
        to: Some(State::Sending),
        action: "started",
        refusal: |w| w.refuse_step_start,
    },
    Rule {
        step: Step::Resume,
        from: &State::RESUMABLE,
        to: Some(State::Sending),
        action: "resumed",
        refusal: |w| w.refuse_step_resume,
    },
];

impl Step {
    fn rule(self) -> &'static Rule {
        WORKFLOW
            .iter()
            .find(|rule| rule.step == self)
            .expect("every step has its line in the workflow")
    }

    /// Refuses the step from the campaign's state, naming it, when the table does not allow it.
    pub fn allowed(self, record: &CampaignRecord) -> Result<(), ConsoleError> {
        let rule = self.rule();
        if rule.from.contains(&record.state) {
            Ok(())
        } else {
            Err(ConsoleError::conflict(
                crate::word!(refuse_state),
                vec![
                    ("state", Figure::State(record.state.as_str())),
                    ("why", Figure::Word(rule.refusal)),
                ],
            ))
        }
    }
}

/// What a step's own work came to.
pub enum Applied<T> {
    /// The campaign changed: saved, and audited with this detail.
    Changed { detail: String, then: T },
    /// Nothing to record (a start sent back to choose a time).
    Unchanged(T),
}

/// Takes `step` on campaign `id` for `by`: under the transitions lock the record is read again,
/// the table consulted, `apply` does the step's own checks and changes, and a change is saved with
/// the step's state and audited. Answers what `apply` answered, and the record as saved.
pub async fn take<T>(
    console: &Console,
    id: &str,
    step: Step,
    by: &str,
    apply: impl AsyncFnOnce(&mut CampaignRecord) -> Result<Applied<T>, ConsoleError>,
) -> Result<(T, CampaignRecord), ConsoleError> {
    let _transition = console.transitions.lock().await;
    let mut record = campaigns::find(&console.store, id)?;
    step.allowed(&record)?;
    match apply(&mut record).await? {
        Applied::Unchanged(then) => Ok((then, record)),
        Applied::Changed { detail, then } => {
            let rule = step.rule();
            if let Some(state) = rule.to {
                record.state = state;
            }
            record.touch(by);
            console.store.put_campaign(id, &record)?;
            console.store.audit(by, rule.action, Some(id), &detail)?;
            let told = match step {
                Step::Submit => Some(super::notify::NoticeKind::ApprovalRequested),
                Step::Approve => Some(super::notify::NoticeKind::Approved),
                Step::Start | Step::Resume => Some(super::notify::NoticeKind::Started),
                Step::Edit | Step::Check => None,
            };
            if let Some(kind) = told {
                console.notify(kind, Some((id, &record.name)), by, &detail);
            }
            Ok((then, record))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn actions_the_workflow_writes_have_korean_words() {
        for kept in WORKFLOW.iter().map(|rule| rule.action) {
            assert!(
                !crate::console::words::audit::action(&crate::console::words::KO, kept).is_ascii(),
                "{kept} has Korean words"
            );
        }
        assert_eq!(
            crate::console::words::audit::action(&crate::console::words::KO, "something new"),
            "something new"
        );
    }

    use super::*;

    #[test]
    fn every_step_has_one_line_and_no_step_is_taken_from_an_end() {
        for step in [
            Step::Edit,
            Step::Check,
            Step::Submit,
            Step::Approve,
            Step::Start,
            Step::Resume,
        ] {
            assert_eq!(WORKFLOW.iter().filter(|rule| rule.step == step).count(), 1, "{step:?}");
        }
        for rule in &WORKFLOW {
            assert!(!rule.from.contains(&State::Done), "{:?} from done", rule.step);
            assert!(!rule.from.contains(&State::Sending), "{:?} while sending", rule.step);
        }
    }
}
