//! At-most-once under crashes and faults: the `msgbatch` binary aborted at failpoints or killed with SIGKILL mid-run and then resumed, sandbox faults (503/429 retried, dropped connections left uncertain, giving up), resume refusals when inputs changed, and one process per run directory.

mod common;

use common::child::{Finished, Running, Sandbox, API_KEY, GROUP, LIMIT};
use msgbatch::api::ledger::SentCounts;
use msgbatch::campaign::Lane;
use msgbatch::engine::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, ChunkState};
use msgbatch::sandbox::accounts::FaultConfig;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const CLOCK: &str = "2026-11-23T11:00:00+09:00";
const TEXT: &str = "[데모몰] 주문하신 상품이 오늘 출발합니다.";
const OTHER_TEXT: &str = "[데모몰] 주문하신 상품이 내일 출발합니다.";
const EXIT_FAILED: i32 = 1;
const EXIT_REFUSED: i32 = 2;
const EXIT_INCOMPLETE: i32 = 3;

/// An accounts file with the demo group's SMS service and the given `[faults]` lines.
fn accounts_file(dir: &Path, faults: &str) -> PathBuf {
    let path = dir.join("accounts.toml");
    let text = format!(
        r#"settle_after = "300s"

[faults]
{faults}

[[groups]]
id = "{GROUP}"
api_key = "{API_KEY}"
balance = 100000000
sms_services = [3001]
callback_numbers = ["0212345678"]

[groups.prices]
sms = 9
"#
    );
    std::fs::write(&path, text).expect("accounts file written");
    path
}

// ---------------------------------------------------------------------------------------------
// A campaign against the sandbox, its run directory, and the at-most-once bookkeeping.

/// The `i`-th recipient: distinct valid numbers whose last two digits stay in 00–89, clear of
/// the demo outcome rules (…91 to …96).
fn number(i: usize) -> String {
    let serial = (i / 90) * 100 + i % 90;
    format!("010{:08}", 20_000_000 + serial)
}

#[derive(Clone, Copy)]
struct Setup {
    recipients: usize,
    chunk_size: usize,
    concurrency: usize,
    max_attempts: u32,
    /// `messages_per_second` (None: no limit).
    rate: Option<f64>,
    /// How many of the first recipients are also on a suppression list (None: no list).
    suppressed: Option<usize>,
}

impl Setup {
    fn new(recipients: usize, chunk_size: usize, concurrency: usize) -> Setup {
        Setup {
            recipients,
            chunk_size,
            concurrency,
            max_attempts: 8,
            rate: None,
            suppressed: None,
        }
    }
}

/// `status RUN_DIR --json`, the fields these tests read.
#[derive(Debug, Deserialize, PartialEq)]
struct Status {
    rows: u64,
    rejected: u64,
    duplicates: u64,
    suppressed: u64,
    sent: u64,
    accepted: u64,
    uncertain: u64,
    pending: u64,
    complete: bool,
}

impl Status {
    fn assert_balanced(&self) {
        assert_eq!(
            self.rows,
            self.rejected + self.duplicates + self.suppressed + self.sent + self.uncertain + self.pending,
            "every row is in exactly one bucket: {self:?}"
        );
    }
}

/// What the sandbox and the checkpoint say together, once no process holds the run.
struct Audit {
    status: Status,
    sent: SentCounts,
    /// Uncertain chunks whose request reached the sandbox (every number counted once).
    uncertain_left: Vec<usize>,
    /// Uncertain chunks whose request never reached it (every number counted zero times).
    uncertain_unsent: Vec<usize>,
    /// Requests made per chunk, from the checkpoint, for chunks that have a record.
    attempts: BTreeMap<usize, u32>,
    /// Chunk states, from the checkpoint (no entry: pending).
    states: BTreeMap<usize, ChunkState>,
}

impl Audit {
    fn sandbox_total(&self) -> u64 {
        self.sent.numbers.values().map(|&c| c as u64).sum()
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    sandbox: Sandbox,
    setup: Setup,
    numbers: Vec<String>,
    /// The numbers that are sent, in input order: chunk `i` is `valid[i * chunk_size..]`.
    valid: Vec<String>,
    campaign: PathBuf,
    csv: PathBuf,
    suppression: PathBuf,
    run_dir: PathBuf,
    /// Checkpoint copies taken so far.
    copies: std::cell::Cell<usize>,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("copy folder created");
    for entry in std::fs::read_dir(from).expect("checkpoint folder reads") {
        let entry = entry.expect("folder entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("checkpoint file copied");
        }
    }
}

impl Fixture {
    /// A demo sandbox (or one with `faults` from an accounts file) and a campaign of `setup`.
    fn new(setup: Setup, faults: Option<&str>) -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let accounts = faults.map(|faults| accounts_file(dir.path(), faults));
        let sandbox = Sandbox::start(accounts.as_deref());
        let numbers: Vec<String> = (0..setup.recipients).map(number).collect();
        let skip = setup.suppressed.unwrap_or(0);
        let valid = numbers[skip..].to_vec();
        let fixture = Fixture {
            campaign: dir.path().join("campaign.toml"),
            csv: dir.path().join("recipients.csv"),
            suppression: dir.path().join("suppression.csv"),
            run_dir: dir.path().join("run"),
            copies: std::cell::Cell::new(0),
            dir,
            sandbox,
            setup,
            numbers,
            valid,
        };
        let mut csv = String::from("phone\n");
        for number in &fixture.numbers {
            csv.push_str(number);
            csv.push('\n');
        }
        std::fs::write(&fixture.csv, csv).expect("recipients written");
        if let Some(count) = setup.suppressed {
            let list: Vec<&str> = fixture.numbers[..count].iter().map(String::as_str).collect();
            std::fs::write(&fixture.suppression, format!("phone\n{}\n", list.join("\n"))).expect("suppression written");
        }
        fixture.write_campaign(TEXT);
        fixture
    }

    fn write_campaign(&self, text: &str) {
        let addr = &self.sandbox.addr;
        let setup = self.setup;
        let suppression = if setup.suppressed.is_some() {
            "suppression = \"suppression.csv\"\n"
        } else {
            ""
        };
        let rate = setup
            .rate
            .map(|rate| format!("messages_per_second = {rate}\n"))
            .unwrap_or_default();
        let toml = format!(
            r#"name = "crash-resume"
kind = "sms"
endpoint = {{ base_url = "http://{addr}/standard", gateway_url = "http://{addr}/gateway" }}

[credentials]
group_id = "{GROUP}"

[message]
service = 3001
text = "{text}"
callback_no = "0212345678"

[recipients]
path = "recipients.csv"
{suppression}
[send]
chunk_size = {}
concurrency = {}
max_attempts = {}
{rate}"#,
            setup.chunk_size, setup.concurrency, setup.max_attempts
        );
        std::fs::write(&self.campaign, toml).expect("campaign written");
    }

    fn chunk_count(&self) -> usize {
        self.valid.len().div_ceil(self.setup.chunk_size)
    }

    fn chunk(&self, index: usize) -> &[String] {
        let start = index * self.setup.chunk_size;
        &self.valid[start..(start + self.setup.chunk_size).min(self.valid.len())]
    }

    fn command(&self, args: &[&str]) -> Command {
        common::child::msgbatch(self.dir.path(), CLOCK, args)
    }

    fn start_run(&self, failpoint: Option<&str>) -> Running {
        let mut command = self.command(&["run"]);
        command.arg(&self.campaign).arg("--out").arg(&self.run_dir);
        if let Some(failpoint) = failpoint {
            command.env("MSGBATCH_FAILPOINT", failpoint);
        }
        Running::spawn(command, &format!("msgbatch run (failpoint {failpoint:?})"))
    }

    fn run(&self, failpoint: Option<&str>) -> Finished {
        self.start_run(failpoint).finish()
    }

    fn resume(&self, resend_uncertain: bool) -> Finished {
        let mut command = self.command(&["resume"]);
        command.arg(&self.run_dir);
        if resend_uncertain {
            command.arg("--resend-uncertain");
        }
        Running::spawn(
            command,
            &format!("msgbatch resume (resend_uncertain {resend_uncertain})"),
        )
        .finish()
    }

    fn run_report(&self) -> Finished {
        let mut command = self.command(&["report"]);
        command.arg(&self.run_dir);
        Running::spawn(command, "msgbatch report").finish()
    }

    fn status(&self) -> Status {
        let mut command = self.command(&["status"]);
        command.arg(&self.run_dir).arg("--json");
        let finished = Running::spawn(command, "msgbatch status --json").finish();
        finished.expect_code(0);
        serde_json::from_str(&finished.stdout)
            .unwrap_or_else(|e| panic!("status --json is a status ({e}): {}", finished.stdout))
    }

    /// Chunk records of the checkpoint by index, read from a fresh copy of it (taken while no
    /// process holds the run), so this test process never holds the run directory's lock.
    fn chunk_records(&self) -> BTreeMap<usize, ChunkRecord> {
        let copy = self.dir.path().join(format!("audit-{}", self.copies.get()));
        self.copies.set(self.copies.get() + 1);
        copy_dir(&self.run_dir.join("checkpoint"), &copy.join("checkpoint"));
        msgbatch::engine::chunk_notes(&copy)
            .expect("the checkpoint copy opens")
            .into_iter()
            .map(|(key, record)| {
                assert_eq!(key.lane, Lane::Sms, "an SMS campaign has only SMS chunks");
                (key.index as usize, record)
            })
            .collect()
    }

    /// The at-most-once audit: no number above 1; rows balanced; a done chunk's numbers counted
    /// exactly once; an uncertain chunk's numbers all counted once (its request left) or all
    /// zero times (it did not); a pending chunk's numbers never; and so the sandbox total lies
    /// between `sent` and `sent + uncertain`.
    fn audit(&self) -> Audit {
        let status = self.status();
        let sent = self.sandbox.sent();
        status.assert_balanced();
        let skipped = self.setup.suppressed.unwrap_or(0) as u64;
        assert_eq!(status.rows, self.numbers.len() as u64, "{status:?}");
        assert_eq!(
            (status.rejected, status.duplicates, status.suppressed),
            (0, 0, skipped),
            "{status:?}"
        );
        assert!(
            sent.repeated().is_empty(),
            "numbers sent more than once: {:?}",
            sent.repeated()
        );
        let known: std::collections::HashSet<&str> = self.valid.iter().map(String::as_str).collect();
        for number in sent.numbers.keys() {
            assert!(
                known.contains(number.as_str()),
                "{number} is not a recipient to send to"
            );
        }
        let count = |number: &String| sent.numbers.get(number).copied().unwrap_or(0);
        let records = self.chunk_records();
        assert!(
            records.keys().all(|&index| index < self.chunk_count()),
            "records only of planned chunks: {:?}",
            records.keys()
        );
        let mut audit = Audit {
            status,
            sent: sent.clone(),
            uncertain_left: Vec::new(),
            uncertain_unsent: Vec::new(),
            attempts: records.iter().map(|(&i, r)| (i, r.attempts)).collect(),
            states: records.iter().map(|(&i, r)| (i, r.state)).collect(),
        };
        let (mut done, mut uncertain) = (0u64, 0u64);
        for index in 0..self.chunk_count() {
            let counts: Vec<u32> = self.chunk(index).iter().map(count).collect();
            match records.get(&index).map(|r| r.state) {
                Some(ChunkState::Done) => {
                    done += counts.len() as u64;
                    assert!(
                        counts.iter().all(|&c| c == 1),
                        "chunk {index} is done, so each of its numbers was sent exactly once: {counts:?}"
                    );
                }
                Some(ChunkState::InFlight) => {
                    uncertain += counts.len() as u64;
                    if counts.iter().all(|&c| c == 1) {
                        audit.uncertain_left.push(index);
                    } else if counts.iter().all(|&c| c == 0) {
                        audit.uncertain_unsent.push(index);
                    } else {
                        panic!("chunk {index} is one request, so it left whole or not at all: {counts:?}");
                    }
                }
                None => assert!(
                    counts.iter().all(|&c| c == 0),
                    "chunk {index} is pending, so none of its numbers was sent: {counts:?}"
                ),
            }
        }
        assert_eq!(
            (audit.status.sent, audit.status.uncertain),
            (done, uncertain),
            "status counts what the checkpoint holds"
        );
        let total = audit.sandbox_total();
        assert_eq!(total, sent.total, "the sandbox's total is the sum of its counts");
        assert!(
            audit.status.sent <= total && total <= audit.status.sent + audit.status.uncertain,
            "sent {} <= sandbox {total} <= sent + uncertain {}",
            audit.status.sent,
            audit.status.sent + audit.status.uncertain
        );
        audit
    }

    /// The number of recipients in the given chunks.
    fn recipients_in(&self, chunks: &[usize]) -> u64 {
        chunks.iter().map(|&i| self.chunk(i).len() as u64).sum()
    }
}

fn no_faults() -> FaultConfig {
    FaultConfig::default()
}

// ---------------------------------------------------------------------------------------------
// 1. Failpoints, then resume.

#[test]
fn crash_after_the_first_in_flight_mark_leaves_an_unsent_uncertain_chunk_only_resend_uncertain_sends() {
    let fx = Fixture::new(Setup::new(60, 10, 1), None);
    fx.run(Some("after-in-flight:1")).expect_crash_at("after-in-flight:1");

    let crashed = fx.audit();
    assert_eq!(
        crashed.uncertain_unsent,
        vec![0],
        "chunk 0 was marked, then the process died"
    );
    assert!(crashed.uncertain_left.is_empty());
    assert_eq!(crashed.sandbox_total(), 0, "nothing left before the crash");
    assert_eq!(
        (crashed.status.sent, crashed.status.uncertain, crashed.status.pending),
        (0, 10, 50)
    );

    fx.resume(false)
        .expect_code(EXIT_INCOMPLETE)
        .expect_stderr("not resending them");
    let resumed = fx.audit();
    assert_eq!(
        resumed.uncertain_unsent,
        vec![0],
        "resume does not send the uncertain chunk"
    );
    assert_eq!(
        (resumed.status.sent, resumed.status.uncertain, resumed.status.pending),
        (50, 10, 0)
    );
    assert!(
        !resumed.status.complete,
        "uncertain rows are not settled: status says incomplete, as resume's exit 3 does"
    );
    assert_eq!(resumed.sandbox_total(), 50);

    fx.resume(true).expect_code(0);
    let resent = fx.audit();
    assert!(resent.status.complete);
    assert!(resent.uncertain_unsent.is_empty() && resent.uncertain_left.is_empty());
    assert_eq!(
        (resent.status.sent, resent.status.uncertain, resent.status.pending),
        (60, 0, 0)
    );
    for number in &fx.numbers {
        assert_eq!(resent.sent.numbers.get(number), Some(&1), "{number} sent exactly once");
    }
}

#[test]
fn crash_after_a_middle_in_flight_mark_then_resume_sends_no_number_twice() {
    let fx = Fixture::new(Setup::new(200, 10, 3), None);
    fx.run(Some("after-in-flight:8")).expect_crash_at("after-in-flight:8");

    let crashed = fx.audit();
    assert!(
        !crashed.uncertain_unsent.is_empty(),
        "the chunk whose mark was the 8th never left: {:?}",
        crashed.uncertain_unsent
    );
    assert!(
        crashed.status.pending > 0,
        "a crash at the 8th of 20 chunks leaves some pending"
    );

    let code = fx.resume(false).code();
    let resumed = fx.audit();
    assert_eq!(resumed.status.pending, 0, "resume sends every pending chunk");
    assert!(resumed.status.uncertain >= 10, "{:?}", resumed.status);
    assert_eq!(code, Some(EXIT_INCOMPLETE), "uncertain chunks remain");
    assert_eq!(
        resumed.uncertain_unsent.len() + resumed.uncertain_left.len(),
        crashed.uncertain_unsent.len() + crashed.uncertain_left.len(),
        "resume neither sends nor forgets uncertain chunks"
    );
    assert_eq!(
        resumed.status.uncertain,
        fx.recipients_in(&resumed.uncertain_unsent) + fx.recipients_in(&resumed.uncertain_left)
    );
    assert_eq!(
        resumed.sandbox_total(),
        resumed.status.sent + fx.recipients_in(&resumed.uncertain_left),
        "the sandbox holds exactly the sent rows and the uncertain chunks that had left"
    );
}

#[test]
fn crash_after_a_response_leaves_a_processed_uncertain_chunk_that_resume_does_not_resend() {
    let fx = Fixture::new(Setup::new(60, 10, 1), None);
    fx.run(Some("after-response:3")).expect_crash_at("after-response:3");

    let crashed = fx.audit();
    assert_eq!(
        crashed.sandbox_total(),
        30,
        "three requests were processed before the crash"
    );
    assert!(
        crashed.uncertain_left.contains(&2),
        "chunk 2 was answered but its results were never written: {:?}",
        crashed.uncertain_left
    );
    for number in fx.chunk(2) {
        assert_eq!(
            crashed.sent.numbers.get(number),
            Some(&1),
            "{number} reached the sandbox"
        );
    }

    fx.resume(false).expect_code(EXIT_INCOMPLETE);
    let resumed = fx.audit();
    assert!(resumed.uncertain_left.contains(&2), "{:?}", resumed.uncertain_left);
    assert_eq!(resumed.uncertain_left, crashed.uncertain_left);
    assert!(resumed.uncertain_unsent.is_empty());
    for number in fx.chunk(2) {
        assert_eq!(resumed.sent.numbers.get(number), Some(&1), "{number} was not resent");
    }
    assert_eq!(resumed.status.pending, 0);
    assert_eq!(resumed.sandbox_total(), 60, "every number reached the sandbox once");
}

#[test]
fn crash_after_done_then_resume_sends_no_number_twice_and_keeps_the_chunks_done() {
    let fx = Fixture::new(Setup::new(100, 10, 1), None);
    fx.run(Some("after-done:4")).expect_crash_at("after-done:4");

    let crashed = fx.audit();
    for index in 0..4 {
        for number in fx.chunk(index) {
            assert_eq!(crashed.sent.numbers.get(number), Some(&1), "chunk {index} was answered");
        }
    }
    let not_done: Vec<usize> = (0..4)
        .filter(|index| crashed.states.get(index) != Some(&ChunkState::Done))
        .collect();

    let code = fx.resume(false).code();
    let resumed = fx.audit();
    assert_eq!(resumed.status.pending, 0, "resume sent every pending chunk");
    let expected = if resumed.status.uncertain > 0 {
        EXIT_INCOMPLETE
    } else {
        0
    };
    assert_eq!(code, Some(expected), "{:?}", resumed.status);
    assert_eq!(
        resumed.sandbox_total(),
        resumed.status.sent + fx.recipients_in(&resumed.uncertain_left),
        "the sandbox holds exactly the sent rows and the uncertain chunks that had left"
    );

    // The 4th `done` (chunk 3) and the ones before it were written before the crash point
    // ("after-done: results and `done` written"), so none of chunks 0..=3 may come back uncertain.
    assert!(
        not_done.is_empty(),
        "chunks {not_done:?} were answered and their results and `done` written before the crash, yet the \
         checkpoint holds them in flight (uncertain) afterwards: {:?}",
        crashed.status
    );
}

// ---------------------------------------------------------------------------------------------
// 2. SIGKILL mid-run.

#[test]
fn kill_9_mid_run_then_resume_sends_no_number_twice_and_accounts_for_every_row() {
    let fx = Fixture::new(Setup::new(4_000, 10, 2), None);
    // 20 ms per request and 2 in flight: at most 1,000 recipients a second, so the run takes 4 s
    // or more and the first progress line (after 2 s) comes well before its end.
    fx.sandbox.set_faults(FaultConfig {
        latency_ms: 20,
        ..no_faults()
    });
    let mut run = fx.start_run(None);
    let progress = run
        .stderr
        .wait_for("`send:` progress", |line| line.starts_with("send:"));
    let killed = run.kill();
    assert_eq!(killed.code(), None, "SIGKILL ended it: {:?}", killed.status);

    let after_kill = fx.audit();
    assert!(
        after_kill.status.pending > 0,
        "the kill came mid-run (progress said {progress:?}): {:?}",
        after_kill.status
    );
    assert!(after_kill.status.sent > 0, "{:?}", after_kill.status);

    fx.sandbox.set_faults(no_faults());
    let code = fx.resume(false).code();
    let resumed = fx.audit();
    assert_eq!(resumed.status.pending, 0, "resume sent every pending chunk");
    let expected = if resumed.status.uncertain > 0 {
        EXIT_INCOMPLETE
    } else {
        0
    };
    assert_eq!(code, Some(expected), "{:?}", resumed.status);
    assert_eq!(
        resumed.sandbox_total(),
        resumed.status.sent + fx.recipients_in(&resumed.uncertain_left),
        "the sandbox holds exactly the sent rows and the uncertain chunks that had left"
    );
    assert_eq!(
        resumed.uncertain_unsent.len() + resumed.uncertain_left.len(),
        after_kill.uncertain_unsent.len() + after_kill.uncertain_left.len(),
        "resume neither sends nor forgets the chunks the kill left uncertain"
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Faults.

#[test]
fn unavailable_and_rate_limited_shares_complete_with_every_number_sent_exactly_once() {
    // Faults from the accounts file: 20% of requests answered 503 and another 20% 429 (the
    // shares add up), spread evenly so no chunk is refused often enough to exhaust its attempts.
    let fx = Fixture::new(
        Setup::new(200, 10, 2),
        Some("unavailable_share = 0.2\nrate_limited_share = 0.2\nretry_after_secs = 0"),
    );
    fx.run(None).expect_code(0);
    let audit = fx.audit();
    assert_eq!(
        (audit.status.sent, audit.status.uncertain, audit.status.pending),
        (200, 0, 0)
    );
    assert!(audit.status.complete);
    for number in &fx.numbers {
        assert_eq!(audit.sent.numbers.get(number), Some(&1), "{number} sent exactly once");
    }
    let requests: u32 = audit.attempts.values().sum();
    assert!(
        requests > fx.chunk_count() as u32,
        "refused requests were retried: {requests} requests for {} chunks",
        fx.chunk_count()
    );
}

#[test]
fn rate_limited_requests_are_retried_and_every_number_is_sent_exactly_once() {
    // One chunk at a time and every other request answered 429 (requests 1, 3, 5, ...): chunk 0
    // goes through at once, each later chunk is refused once and then taken.
    let fx = Fixture::new(Setup::new(100, 10, 1), None);
    fx.sandbox.set_faults(FaultConfig {
        rate_limited_share: 0.5,
        retry_after_secs: 0,
        ..no_faults()
    });
    fx.run(None).expect_code(0);
    let audit = fx.audit();
    assert_eq!(
        (audit.status.sent, audit.status.uncertain, audit.status.pending),
        (100, 0, 0)
    );
    for number in &fx.numbers {
        assert_eq!(audit.sent.numbers.get(number), Some(&1), "{number} sent exactly once");
    }
    let mut expected: BTreeMap<usize, u32> = (1..fx.chunk_count()).map(|i| (i, 2)).collect();
    expected.insert(0, 1);
    assert_eq!(
        audit.attempts, expected,
        "requests per chunk: each 429 was retried, nothing else"
    );
}

#[test]
fn dropped_connections_leave_processed_chunks_uncertain_and_only_resend_uncertain_sends_them_again() {
    let fx = Fixture::new(Setup::new(80, 10, 2), None);
    fx.sandbox.set_faults(FaultConfig {
        drop_share: 0.25,
        ..no_faults()
    });
    let first = fx.run(None);
    first.expect_code(EXIT_INCOMPLETE);
    // 8 requests, one in four dropped: exactly 2 chunks.
    let dropped = fx.chunk_count() / 4;
    assert_eq!(
        first.stderr.matches("uncertain, not resent").count(),
        dropped,
        "{}",
        first.stderr
    );
    let after_run = fx.audit();
    assert_eq!(
        after_run.uncertain_left.len(),
        dropped,
        "{:?}",
        after_run.uncertain_left
    );
    assert!(after_run.uncertain_unsent.is_empty(), "a dropped request was processed");
    assert_eq!(
        (
            after_run.status.sent,
            after_run.status.uncertain,
            after_run.status.pending
        ),
        (60, 20, 0)
    );
    for &chunk in &after_run.uncertain_left {
        for number in fx.chunk(chunk) {
            assert_eq!(after_run.sent.numbers.get(number), Some(&1), "{number} was processed");
        }
    }

    fx.resume(false).expect_code(EXIT_INCOMPLETE);
    let after_resume = fx.audit();
    assert_eq!(after_resume.sent, after_run.sent, "a plain resume sends nothing");
    assert_eq!(after_resume.uncertain_left, after_run.uncertain_left);
    assert_eq!(after_resume.status, after_run.status);

    fx.sandbox.set_faults(no_faults());
    fx.resume(true).expect_code(0);
    let status = fx.status();
    assert_eq!((status.sent, status.uncertain, status.pending), (80, 0, 0));
    let sent = fx.sandbox.sent();
    for index in 0..fx.chunk_count() {
        let expected = if after_run.uncertain_left.contains(&index) {
            2
        } else {
            1
        };
        for number in fx.chunk(index) {
            assert_eq!(
                sent.numbers.get(number),
                Some(&expected),
                "{number} of chunk {index}: --resend-uncertain sends exactly the uncertain chunks again"
            );
        }
    }
    assert_eq!(sent.total, 80 + 20);
}

#[test]
fn a_service_that_stays_unavailable_makes_the_run_give_up_with_chunks_pending_and_nothing_sent() {
    let fx = Fixture::new(
        Setup {
            max_attempts: 2,
            ..Setup::new(40, 10, 2)
        },
        None,
    );
    fx.sandbox.set_faults(FaultConfig {
        unavailable_share: 1.0,
        retry_after_secs: 0,
        ..no_faults()
    });
    fx.run(None).expect_code(EXIT_FAILED).expect_stderr("gave up");
    let audit = fx.audit();
    assert_eq!(
        (audit.status.sent, audit.status.uncertain, audit.status.pending),
        (0, 0, 40),
        "refused chunks are pending, not uncertain"
    );
    assert_eq!(audit.sandbox_total(), 0, "no number was processed");
    assert!(audit.attempts.is_empty(), "no chunk stays marked: {:?}", audit.attempts);

    fx.sandbox.set_faults(no_faults());
    fx.resume(false).expect_code(0);
    let resumed = fx.audit();
    assert_eq!((resumed.status.sent, resumed.status.uncertain), (40, 0));
    assert_eq!(resumed.sandbox_total(), 40);
}

// ---------------------------------------------------------------------------------------------
// 4. Resume refusals.

/// A run crashed after 2 chunks of 6 were sent and a third marked, and the sandbox's counts then.
fn crashed_run(setup: Setup) -> (Fixture, SentCounts, Status) {
    let fx = Fixture::new(setup, None);
    fx.run(Some("after-in-flight:3")).expect_crash_at("after-in-flight:3");
    let audit = fx.audit();
    assert!(audit.status.pending > 0);
    (fx, audit.sent, audit.status)
}

#[test]
fn resume_refuses_when_one_byte_of_the_recipients_file_changed_and_sends_nothing() {
    let (fx, sent_before, status_before) = crashed_run(Setup::new(60, 10, 1));
    let original = std::fs::read(&fx.csv).unwrap();
    let mut changed = original.clone();
    // The tens digit of the last number (0–8 by construction) becomes 9: one byte, still a distinct valid number.
    let at = changed.len() - 3;
    assert!(changed[at].is_ascii_digit() && changed[at] != b'9');
    changed[at] = b'9';
    std::fs::write(&fx.csv, &changed).unwrap();

    fx.resume(false)
        .expect_code(EXIT_REFUSED)
        .expect_stderr("the recipients file changed");
    assert_eq!(fx.sandbox.sent(), sent_before, "the refused resume sent nothing");
    assert_eq!(fx.status(), status_before);

    std::fs::write(&fx.csv, &original).unwrap();
    fx.resume(false).expect_code(EXIT_INCOMPLETE);
    assert_eq!(fx.audit().status.pending, 0, "with the file as it was, resume goes on");
}

/// Rewrites the checkpoint of a run no process holds: `change` edits the records by chunk index.
fn edit_checkpoint(fx: &Fixture, change: impl FnOnce(&mut BTreeMap<usize, ChunkRecord>)) {
    let checkpoint = Checkpoint::open(&fx.run_dir.join("checkpoint"), false).expect("checkpoint opens");
    let before = checkpoint.chunk_records().expect("records read");
    let mut records: BTreeMap<usize, ChunkRecord> = before.iter().map(|(k, r)| (k.index as usize, r.clone())).collect();
    change(&mut records);
    for key in before.keys() {
        if !records.contains_key(&(key.index as usize)) {
            checkpoint.release(*key).expect("record removed");
        }
    }
    let rewritten: Vec<(ChunkKey, ChunkRecord)> = records
        .into_iter()
        .map(|(index, record)| {
            let key = ChunkKey {
                lane: Lane::Sms,
                index: index as u32,
            };
            (key, record)
        })
        .collect();
    checkpoint.record_in_flight(&rewritten).expect("records written");
    checkpoint.flush().expect("checkpoint flushed");
}

#[test]
fn resume_refuses_a_chunk_cut_differently_from_the_one_sent_and_sends_nothing_not_even_earlier_pending_chunks() {
    let (fx, sent_before, _) = crashed_run(Setup::new(60, 10, 1));
    // As if another release classified the rows differently: chunk 1 (done) now holds other
    // recipients. Chunk 0 is made pending again, so a resume that sent before checking every
    // known chunk would send it.
    edit_checkpoint(&fx, |records| {
        records.remove(&0);
        let chunk = records.get_mut(&1).expect("chunk 1 was sent");
        assert_eq!(chunk.state, ChunkState::Done);
        chunk.identity.digest = "0123456789abcdef".into();
    });

    fx.resume(false)
        .expect_code(EXIT_REFUSED)
        .expect_stderr("chunk sms#1 is not the chunk that was sent")
        .expect_stderr("digest");
    assert_eq!(fx.sandbox.sent(), sent_before, "the refused resume sent nothing");

    fx.run_report().expect_code(EXIT_REFUSED).expect_stderr("chunk sms#1");
    let written: Vec<String> = std::fs::read_dir(&fx.run_dir)
        .expect("run directory")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("report.") || name.starts_with("summary."))
        .collect();
    assert!(
        written.is_empty(),
        "no report is written from rows that cannot be trusted, not even in part: {written:?}"
    );
}

#[test]
fn resume_refuses_when_a_chunk_it_knows_starts_at_another_row_or_is_no_longer_made() {
    let (fx, sent_before, _) = crashed_run(Setup::new(60, 10, 1));
    edit_checkpoint(&fx, |records| {
        records.get_mut(&1).expect("chunk 1 was sent").identity.first_row += 1;
    });
    fx.resume(false)
        .expect_code(EXIT_REFUSED)
        .expect_stderr("first row 12 now, 13 when it was sent");
    assert_eq!(fx.sandbox.sent(), sent_before);

    edit_checkpoint(&fx, |records| {
        let mut chunk = records.remove(&1).expect("chunk 1 was sent");
        chunk.identity.first_row -= 1;
        records.insert(1, chunk.clone());
        records.insert(40, chunk);
    });
    fx.resume(false)
        .expect_code(EXIT_REFUSED)
        .expect_stderr("no longer makes 1 chunk(s) the checkpoint knows (sms#40)");
    assert_eq!(fx.sandbox.sent(), sent_before);
}

#[test]
fn resume_refuses_when_the_campaign_text_changed_and_sends_nothing() {
    let (fx, sent_before, status_before) = crashed_run(Setup::new(60, 10, 1));
    fx.write_campaign(OTHER_TEXT);

    fx.resume(false)
        .expect_code(EXIT_REFUSED)
        .expect_stderr("the campaign changed");
    assert_eq!(fx.sandbox.sent(), sent_before, "the refused resume sent nothing");
    assert_eq!(fx.status(), status_before);

    fx.write_campaign(TEXT);
    fx.resume(false).expect_code(EXIT_INCOMPLETE);
    assert_eq!(
        fx.audit().status.pending,
        0,
        "with the campaign as it was, resume goes on"
    );
}

#[test]
fn resume_refuses_when_the_suppression_list_changed_and_sends_nothing() {
    let (fx, sent_before, status_before) = crashed_run(Setup {
        suppressed: Some(2),
        ..Setup::new(62, 10, 1)
    });
    let original = std::fs::read(&fx.suppression).unwrap();
    let mut changed = original.clone();
    changed.extend_from_slice(format!("{}\n", fx.numbers[61]).as_bytes());
    std::fs::write(&fx.suppression, &changed).unwrap();

    fx.resume(false)
        .expect_code(EXIT_REFUSED)
        .expect_stderr("the campaign changed");
    assert_eq!(fx.sandbox.sent(), sent_before, "the refused resume sent nothing");
    assert_eq!(fx.status(), status_before);

    std::fs::write(&fx.suppression, &original).unwrap();
    fx.resume(false).expect_code(EXIT_INCOMPLETE);
    let audit = fx.audit();
    assert_eq!(audit.status.pending, 0);
    for number in &fx.numbers[..2] {
        assert!(
            !audit.sent.numbers.contains_key(number),
            "suppressed {number} never sent"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 5. One process per run directory.

#[test]
fn a_second_process_on_a_run_directory_in_use_is_refused_and_sends_nothing() {
    // 100 ms per request, 2 in flight, 20 chunks: the first run holds the directory for 1 s or more.
    let fx = Fixture::new(Setup::new(200, 10, 2), Some("latency_ms = 100"));
    let mut first = fx.start_run(None);
    first
        .stderr
        .wait_for("`run directory`", |line| line.starts_with("run directory"));

    let second = fx.resume(false);
    second.expect_code(EXIT_REFUSED).expect_stderr("in use");
    let second_resend = fx.resume(true);
    second_resend.expect_code(EXIT_REFUSED).expect_stderr("in use");

    first.finish().expect_code(0);
    let audit = fx.audit();
    assert_eq!(
        (audit.status.sent, audit.status.uncertain, audit.status.pending),
        (200, 0, 0)
    );
    for number in &fx.numbers {
        assert_eq!(audit.sent.numbers.get(number), Some(&1), "{number} sent exactly once");
    }
}

#[test]
fn ctrl_c_stops_taking_chunks_settles_those_in_flight_and_prints_the_resume_command() {
    let fx = Fixture::new(Setup::new(4_000, 10, 2), None);
    // 20 ms per request: the run lasts several seconds, so the interrupt lands mid-run.
    fx.sandbox.set_faults(FaultConfig {
        latency_ms: 20,
        ..no_faults()
    });
    let mut run = fx.start_run(None);
    run.stderr
        .wait_for("`send:` progress", |line| line.starts_with("send:"));
    let interrupt = Command::new("kill")
        .args(["-INT", &run.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupt.success(), "SIGINT is delivered");
    let stopped = run.finish();
    stopped.expect_code(EXIT_INCOMPLETE);
    stopped.expect_stderr("resume with: msgbatch resume");

    let after_stop = fx.audit();
    after_stop.status.assert_balanced();
    assert!(
        after_stop.status.pending > 0,
        "chunks not started stay pending: {:?}",
        after_stop.status
    );
    assert!(after_stop.status.sent > 0, "{:?}", after_stop.status);
    assert_eq!(
        after_stop.status.uncertain, 0,
        "the requests in flight were answered and recorded, not abandoned"
    );
    assert_eq!(
        after_stop.sandbox_total(),
        after_stop.status.sent,
        "what the sandbox took is exactly what is recorded sent"
    );

    fx.sandbox.set_faults(no_faults());
    fx.resume(false).expect_code(0);
    let resumed = fx.audit();
    resumed.status.assert_balanced();
    assert_eq!((resumed.status.pending, resumed.status.uncertain), (0, 0));
    for number in &fx.valid {
        assert_eq!(resumed.sent.numbers.get(number), Some(&1), "{number} sent exactly once");
    }
}

#[test]
fn a_panic_in_a_sender_fails_the_run_and_leaves_its_chunk_uncertain() {
    let fx = Fixture::new(Setup::new(50, 10, 1), None);
    let mut command = fx.command(&["run"]);
    command
        .arg(&fx.campaign)
        .arg("--out")
        .arg(&fx.run_dir)
        .env("MSGBATCH_FAILPOINT", "after-in-flight:3:panic");
    let finished = Running::spawn(command, "msgbatch run (sender panics)").finish();
    finished.expect_code(EXIT_FAILED).expect_stderr("panicked");

    let audit = fx.audit();
    assert_eq!(
        audit.uncertain_unsent,
        vec![2],
        "the third chunk was marked, then its task panicked"
    );
    assert_eq!(audit.states.get(&2), Some(&ChunkState::InFlight));
    assert_eq!(audit.status.uncertain, 10);
    assert!(!audit.status.complete);
}

#[test]
fn ctrl_c_during_a_rate_limit_wait_sends_no_further_chunk() {
    // One message a second and chunks of 10: the first chunk goes at once, the second waits 10 s.
    let fx = Fixture::new(
        Setup {
            rate: Some(1.0),
            ..Setup::new(30, 10, 1)
        },
        None,
    );
    let mut run = fx.start_run(None);
    let deadline = Instant::now() + LIMIT;
    while fx.sandbox.sent().total < 10 {
        assert!(Instant::now() < deadline, "the first chunk never arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupt = Command::new("kill")
        .args(["-INT", &run.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupt.success(), "SIGINT is delivered");
    run.stderr.wait_for("the stop notice", |line| line.contains("stopping"));
    run.finish().expect_code(EXIT_INCOMPLETE);

    let audit = fx.audit();
    assert_eq!(
        audit.sandbox_total(),
        10,
        "the chunk waiting for the rate limit did not go"
    );
    assert_eq!((audit.status.sent, audit.status.pending), (10, 20));
}

#[test]
fn status_shows_a_running_campaign_live_and_watch_follows_it_to_the_end() {
    // 100 ms per request, one in flight, 20 chunks: the run lasts two seconds or more.
    let fx = Fixture::new(Setup::new(200, 10, 1), Some("latency_ms = 100"));
    let mut run = fx.start_run(None);
    run.stderr
        .wait_for("`run directory`", |line| line.starts_with("run directory"));
    let balanced = |snapshot: &serde_json::Value| {
        let n = |key: &str| snapshot[key].as_u64().unwrap_or(0);
        n("rows")
            == n("rejected")
                + n("duplicates")
                + n("suppressed")
                + n("sent")
                + n("uncertain")
                + n("pending")
                + n("sending")
    };

    let mut watch = fx.command(&["status"]);
    watch.arg(&fx.run_dir).args(["--watch", "--json"]);
    let watched = Running::spawn(watch, "msgbatch status --watch --json").finish();
    watched.expect_code(0);
    let snapshots: Vec<serde_json::Value> = watched
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("a JSON line ({e}): {line}")))
        .collect();
    let live: Vec<&serde_json::Value> = snapshots.iter().filter(|s| s["live"] == true).collect();
    assert!(
        !live.is_empty(),
        "the run was watched while it went: {}",
        watched.stdout
    );
    for snapshot in live.iter().filter(|s| s["reading_input"].is_null()) {
        assert!(balanced(snapshot), "every live snapshot balances: {snapshot}");
        assert_eq!(snapshot["complete"], false, "{snapshot}");
    }
    let last = snapshots.last().expect("a last line");
    assert_ne!(last["live"], true, "watch ends when the run does: {last}");
    assert_eq!(
        (last["sent"].as_u64(), last["complete"].as_bool()),
        (Some(200), Some(true)),
        "{last}"
    );
    let sent: Vec<u64> = live.iter().filter_map(|s| s["sent"].as_u64()).collect();
    assert!(sent.windows(2).all(|w| w[0] <= w[1]), "sent only grows: {sent:?}");
    run.finish().expect_code(0);
}
