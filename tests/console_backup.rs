//! `msgbatch workspace backup` while `msgbatch serve` sends a campaign to a sandbox process (the console pauses the run for the copy), `--hold` leaving it paused, the original killed, `msgbatch workspace restore` into a new folder, `serve` there: the run is `interrupted`, an approver resumes it, and it ends with every number sent exactly once and a report of every recipient; the backup holds no session, and a restore refuses a folder that is not empty.

mod common;

use common::child::{Running, Sandbox, BIN};
use common::console::{between, location, Browser, PASSWORD};
use common::serve::{serve, until_ended, write_connection, RECIPIENTS};
use reqwest::StatusCode;
use std::path::Path;
use std::process::Command;

fn workspace(args: &[&std::ffi::OsStr]) -> common::child::Finished {
    let mut command = Command::new(BIN);
    command.env_clear().arg("workspace").args(args);
    Running::spawn(command, "msgbatch workspace").finish()
}

/// `msgbatch workspace backup WORKSPACE --out FILE [--hold]`.
fn backup(from: &Path, out: &Path, hold: bool) -> common::child::Finished {
    let mut args = vec!["backup".as_ref(), from.as_os_str(), "--out".as_ref(), out.as_os_str()];
    if hold {
        args.push("--hold".as_ref());
    }
    workspace(&args)
}

/// `msgbatch workspace restore FILE --to DIR`.
fn restore(file: &Path, to: &Path) -> common::child::Finished {
    workspace(&["restore".as_ref(), file.as_os_str(), "--to".as_ref(), to.as_os_str()])
}

#[test]
fn a_backup_taken_mid_run_restored_elsewhere_resumes_without_sending_twice() {
    let common::serve::Sending {
        dir,
        workspace,
        sandbox,
        runtime,
        process,
        base,
        admin,
        id,
        ..
    } = common::serve::sending();

    // Taken while it sends; held paused after the copy, as when moving the workspace.
    let archive = dir.path().join("team.zip");
    let made = backup(&workspace, &archive, true);
    made.expect_code(0);
    assert!(
        made.stdout
            .contains("1 sending run(s) paused for the copy and left paused (--hold)"),
        "{}",
        made.stdout
    );
    let at_backup = sandbox.sent();
    assert!((at_backup.total as usize) < RECIPIENTS, "taken mid-run");
    let mut original = Browser::new(&base);
    original.cookie = admin.cookie.clone();
    runtime.block_on(async {
        let (_, live) = original.page(&format!("/campaigns/{id}/live")).await;
        assert!(live.contains("data-live=\"phase\">paused<"), "held paused: {live}");
    });
    assert_eq!(sandbox.sent(), at_backup, "nothing is sent once the copy is taken");
    // The original is lost.
    process.kill();

    let archive_bytes = std::fs::read(&archive).unwrap();
    let session = admin.cookie.as_deref().unwrap().split('=').nth(1).unwrap().to_string();
    assert!(
        !archive_bytes
            .windows(session.len())
            .any(|window| window == session.as_bytes()),
        "no live session in the backup"
    );
    let restored = dir.path().join("restored");
    let done = restore(&archive, &restored);
    done.expect_code(0);
    let again = restore(&archive, &restored);
    again.expect_code(2);
    assert!(again.stderr.contains("is not empty"), "{}", again.stderr);

    let (process, base, link, said) = serve(&restored);
    assert!(link.is_none(), "the restored workspace has its people");
    assert!(said.contains("were sending when the console last ended"), "{said}");
    let mut approver = Browser::new(&base);
    runtime.block_on(async {
        let response = approver.sign_in("admin", PASSWORD).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "the same password signs in");
        let (_, page) = approver.page(&format!("/campaigns/{id}")).await;
        assert!(page.contains("state interrupted"), "{page}");
        assert!(between(&page, "Uncertain: <strong>", "<").is_some(), "{page}");
        let response = approver.post(&format!("/campaigns/{id}/resume"), &[]).await;
        assert_eq!(location(&response), format!("/campaigns/{id}/live"));
        assert_eq!(until_ended(&mut approver, &id).await, "done");
    });
    // The report is written right after the run's end is recorded.
    let run_dir = restored.join("runs").join(&id);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !run_dir.join("report.csv").exists() {
        assert!(std::time::Instant::now() < deadline, "the report is written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(process);
    let sent = sandbox.sent();
    assert!(sent.repeated().is_empty(), "no number twice: {:?}", sent.repeated());
    assert_eq!(sent.total as usize, RECIPIENTS, "every recipient once");
    let status = msgbatch::engine::status(&run_dir).unwrap();
    assert_eq!(
        (status.sent, status.uncertain, status.pending),
        (RECIPIENTS as u64, 0, 0),
        "{}",
        status.equation()
    );
    let report = std::fs::read_to_string(run_dir.join("report.csv")).unwrap();
    assert_eq!(report.lines().count(), RECIPIENTS + 1, "one line a recipient");
    // The report bills what the sandbox's ledger charged, number for number.
    let mut reader = csv::Reader::from_reader(report.trim_start_matches('\u{feff}').as_bytes());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|field| field == name).unwrap();
    let (phone, amount) = (column("phone"), column("amount"));
    let mut billed = std::collections::BTreeMap::new();
    for row in reader.records() {
        let row = row.unwrap();
        let won: i64 = row[amount].parse().unwrap();
        // Not accepted (the sandbox refuses some numbers): nothing charged.
        if won > 0 {
            billed.insert(row[phone].to_string(), won);
        }
    }
    let mut charged = std::collections::BTreeMap::new();
    for entry in sandbox.ledger().entries {
        if entry.kind == msgbatch::api::ledger::LedgerKind::Charge {
            *charged.entry(entry.recipient.clone()).or_insert(0) += entry.amount;
        }
    }
    assert_eq!(billed, charged, "the restored run's report equals the ledger");
}

#[test]
fn a_backup_of_a_stopped_console_is_taken_offline_and_a_non_backup_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let sandbox = Sandbox::start(None);
    write_connection(&workspace, &sandbox.root_url());
    let (process, _, _, _) = serve(&workspace);
    drop(process);
    let archive = dir.path().join("offline.zip");
    let made = backup(&workspace, &archive, false);
    made.expect_code(0);
    assert!(made.stdout.contains("records of console.db"), "{}", made.stdout);
    let restored = dir.path().join("restored");
    restore(&archive, &restored).expect_code(0);
    assert!(restored.join("connections.toml").exists());
    assert!(
        !restored.join("serve.json").exists(),
        "the original's control key stays behind"
    );
    let not_a_backup = dir.path().join("x.zip");
    std::fs::write(&not_a_backup, "hello").unwrap();
    let refused = restore(&not_a_backup, &dir.path().join("y"));
    assert_ne!(refused.code(), Some(0));
    assert!(
        refused.stderr.contains("is not a msgbatch backup"),
        "{}",
        refused.stderr
    );
}
