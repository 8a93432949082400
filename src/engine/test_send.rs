//! A test send: the messages of chosen rows, filled as the campaign fills them, sent to a few test numbers (never to the recipients) in a run directory of their own, with the same at-most-once rules, counted in nothing of the campaign.

use super::budget::{Budget, Spend};
use super::checkpoint::{Checkpoint, ChunkKey, ChunkState};
use super::control::Control;
use super::events::Sink;
use super::feed::Chunk;
use super::sender::{self, Senders, SendersEnded};
use super::session::Session;
use super::{check_quiet_hours, Refusal, CHECKPOINT_DIR};
use crate::campaign::Campaign;
use crate::phone::Masked;
use crate::plan::{self, ChunkIdentity, Fate, PlanError, PlannedRow};
use crate::preview::{Chosen, MessagePreview, Previews};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most test numbers one test send takes: a test, not a campaign.
pub const MAX_TEST_NUMBERS: usize = 20;
/// What a test send leaves in its directory, besides its checkpoint (numbers masked).
pub const TEST_SEND_FILE: &str = "test-send.json";

/// What to send, and to whom.
#[derive(Debug, Clone, Default)]
pub struct TestSendOptions {
    /// The test numbers as given (`--to`), in any of the spellings the phone rules take.
    pub to: Vec<String>,
    /// Input rows to send (`--rows`, numbered as a spreadsheet shows them, `input::sheet_row`); by
    /// default the first valid row of each lane and the lane's longest message.
    pub rows: Option<Vec<u64>>,
    /// The test send's directory (default: `tests/NAME-TIMESTAMP` beside the campaign).
    pub out: Option<PathBuf>,
}

/// What the service answered for one test number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestAnswer {
    /// Masked, as everywhere a person reads.
    pub to: String,
    /// `answered`, `uncertain` (the request may or may not have reached the service) or `not_sent`.
    pub outcome: &'static str,
    pub status: Option<String>,
    pub accepted: bool,
    pub uid: Option<String>,
    pub error: Option<String>,
}

/// One message sent to every test number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestMessage {
    pub preview: MessagePreview,
    pub answers: Vec<TestAnswer>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestSend {
    pub dir: PathBuf,
    pub messages: Vec<TestMessage>,
}

/// The test numbers, normalised by the phone rules, each once; refused past [`MAX_TEST_NUMBERS`].
pub fn test_numbers(given: &[String]) -> Result<Vec<String>> {
    let mut numbers = Vec::new();
    for (index, raw) in given.iter().enumerate() {
        let number = crate::phone::normalize(raw)
            .map_err(|error| Refusal(format!("--to: test number {} ({raw:?}): {error}", index + 1)))?;
        if !numbers.iter().any(|known: &String| known == number.as_str()) {
            numbers.push(number.to_string());
        }
    }
    if numbers.is_empty() {
        bail!(Refusal("--to: give at least one test number".into()));
    }
    if numbers.len() > MAX_TEST_NUMBERS {
        bail!(Refusal(format!(
            "--to: {} test numbers; a test send takes at most {MAX_TEST_NUMBERS}",
            numbers.len()
        )));
    }
    Ok(numbers)
}

/// Where a test send goes by default: `tests/NAME-TIMESTAMP` beside the campaign file (with
/// `-2`, `-3`… for a second one within the same second).
fn default_dir(campaign: &Campaign) -> PathBuf {
    let run_dir = super::run_dir::default_run_dir(campaign);
    let name = run_dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tests = campaign.file.parent().unwrap_or(Path::new(".")).join("tests");
    let mut dir = tests.join(&name);
    let mut next = 2;
    while dir.exists() {
        dir = tests.join(format!("{name}-{next}"));
        next += 1;
    }
    dir
}

/// What became of a row that was asked for but cannot be sent.
fn unsendable(fate: &Fate) -> String {
    match fate {
        Fate::Rejected(rejection) => format!(
            "rejected ({}: {} {})",
            rejection.reason.as_str(),
            rejection.column,
            rejection.detail
        ),
        Fate::Suppressed => "on the suppression list".into(),
        Fate::Capped(mark) => format!(
            "held back by the frequency cap (last sent {})",
            crate::plan::capped::day_text(mark.last_sent)
        ),
        Fate::Duplicate => "a duplicate of an earlier row".into(),
        Fate::Valid(_) => "valid".into(),
    }
}

/// The rows to send: those asked for (each must be a valid row), else the previews' choice.
fn choose(campaign: &Campaign, rows: Option<&[u64]>) -> Result<Vec<Chosen>> {
    struct Pick<'a> {
        previews: Previews<'a>,
        asked: Option<BTreeSet<u64>>,
        picked: Vec<Chosen>,
        refused: BTreeMap<u64, String>,
    }
    impl plan::Visitor for Pick<'_> {
        type Error = PlanError;
        const DIGESTS: bool = false;
        fn row(&mut self, planned: PlannedRow) -> Result<(), PlanError> {
            match &self.asked {
                None => self.previews.see(&planned),
                Some(asked) if asked.contains(&planned.row.row) => match &planned.fate {
                    Fate::Valid(recipient) => self.picked.push(self.previews.choose(recipient, "asked")),
                    fate => {
                        self.refused.insert(planned.row.row, unsendable(fate));
                    }
                },
                Some(_) => {}
            }
            Ok(())
        }
    }
    let mut pick = Pick {
        previews: Previews::new(campaign, 1),
        asked: rows.map(|rows| rows.iter().copied().collect()),
        picked: Vec::new(),
        refused: BTreeMap::new(),
    };
    plan::walk(campaign, &mut pick)?;
    if let Some((row, why)) = pick.refused.first_key_value() {
        bail!(Refusal(format!("--rows: row {row} cannot be sent: it is {why}")));
    }
    if let Some(asked) = &pick.asked {
        let found: BTreeSet<u64> = pick.picked.iter().map(|chosen| chosen.recipient.row).collect();
        if let Some(missing) = asked.difference(&found).next() {
            bail!(Refusal(format!(
                "--rows: {} has no row {missing}",
                campaign.recipients.path.display()
            )));
        }
        return Ok(pick.picked);
    }
    let chosen: Vec<Chosen> = pick.previews.finish_chosen().into_values().flatten().collect();
    if chosen.is_empty() {
        bail!(Refusal(format!(
            "{} has no valid row to test: check it with `msgbatch validate`",
            campaign.recipients.path.display()
        )));
    }
    Ok(chosen)
}

/// `msgbatch send-test`: each chosen row's message to every test number. Quiet hours apply as
/// for the campaign; nothing counts in the campaign's run or budget.
pub async fn send_test(
    campaign: &Campaign,
    options: &TestSendOptions,
    control: &Control,
    events: Arc<dyn Sink>,
) -> Result<TestSend> {
    let numbers = test_numbers(&options.to)?;
    check_quiet_hours(campaign, None, events.as_ref())?;
    let chosen = {
        let campaign = campaign.clone();
        let rows = options.rows.clone();
        tokio::task::spawn_blocking(move || choose(&campaign, rows.as_deref())).await??
    };
    let dir = options.out.clone().unwrap_or_else(|| default_dir(campaign));
    if let Some(parent) = dir.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    // A directory of its own: never one that holds an earlier send's record.
    if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!(Refusal(format!(
            "{} already holds files: choose a new --out for the test send",
            dir.display()
        )));
    }
    crate::files::create_private_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let checkpoint = Checkpoint::open(&dir.join(CHECKPOINT_DIR), true)?;
    let session = Session::connect(campaign, events.as_ref()).await?;

    // Counted in nothing: no budget, no prices, no failure pause (a few messages to test numbers).
    let mut tested = campaign.clone();
    tested.send.pause_when_failing = None;
    let senders = Senders::start(
        checkpoint,
        tested,
        session.client.clone(),
        control.clone(),
        events,
        Budget::new(None, Spend::default()),
        None,
    );
    // One request per chosen message, one after another, each with every test number.
    let one_at_a_time = Arc::new(tokio::sync::Semaphore::new(1));
    let mut keys = Vec::new();
    for (index, chosen) in chosen.iter().enumerate() {
        if control.is_stopped() || senders.shared.failed() {
            break;
        }
        // The request's `key` of each recipient is its row: one per test number, 1 to N.
        let recipients: Vec<_> = numbers
            .iter()
            .enumerate()
            .map(|(position, number)| {
                let mut recipient = chosen.recipient.clone();
                recipient.phone = number.as_str().into();
                recipient.row = position as u64 + 1;
                recipient
            })
            .collect();
        let key = ChunkKey {
            lane: chosen.recipient.lane,
            index: index as u32,
        };
        let identity = ChunkIdentity {
            first_row: chosen.recipient.row,
            last_row: chosen.recipient.row,
            recipients: recipients.len() as u32,
            digest: String::new(),
        };
        let chunk = Chunk {
            key,
            identity,
            recipients,
            was_uncertain: false,
        };
        let permit = one_at_a_time
            .clone()
            .acquire_owned()
            .await
            .expect("semaphore stays open");
        sender::send_chunk(senders.shared.clone(), chunk, 0, permit).await;
        keys.push(key);
    }
    let SendersEnded { checkpoint, fatal, .. } = senders.finish()?;
    let records = checkpoint.chunk_records()?;
    let mut messages = Vec::new();
    for (index, chosen) in chosen.into_iter().enumerate() {
        let key = keys.get(index).copied();
        let record = key.and_then(|key| records.get(&key));
        let results = match (key, record.map(|record| record.state)) {
            (Some(key), Some(ChunkState::Done)) => checkpoint.results(key)?.unwrap_or_default(),
            _ => Vec::new(),
        };
        let answers = numbers
            .iter()
            .enumerate()
            .map(|(position, number)| {
                let to = Masked(number).to_string();
                match (record, results.get(position)) {
                    (Some(_), Some(result)) => TestAnswer {
                        to,
                        outcome: "answered",
                        status: Some(result.status.clone()),
                        accepted: result.accepted,
                        uid: Some(result.uid.clone()),
                        error: result.error.clone(),
                    },
                    (Some(record), None) => TestAnswer {
                        to,
                        outcome: "uncertain",
                        status: None,
                        accepted: false,
                        uid: None,
                        error: record.note.clone(),
                    },
                    (None, _) => TestAnswer {
                        to,
                        outcome: "not_sent",
                        status: None,
                        accepted: false,
                        uid: None,
                        error: fatal.clone(),
                    },
                }
            })
            .collect();
        messages.push(TestMessage {
            preview: chosen.preview,
            answers,
        });
    }
    let test_send = TestSend { dir, messages };
    let body = serde_json::to_vec_pretty(&test_send)?;
    std::io::Write::write_all(
        &mut crate::files::create_private(&test_send.dir.join(TEST_SEND_FILE))?,
        &body,
    )
    .context("cannot write the test send's record")?;
    Ok(test_send)
}
