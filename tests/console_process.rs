//! `msgbatch serve` as a process while a campaign sends to a sandbox process. Killed with SIGKILL: after a restart the campaign is `interrupted` with its uncertain count, nothing resumes by itself, the session survives, and an approver's click resumes it with no number sent twice. Stopped with Ctrl-C: the run is stopped through its handle first, so it is `stopped` with nothing uncertain and its report written.

mod common;

use common::console::{between, location, Browser};
use common::serve::{serve, until_ended, RECIPIENTS};
use reqwest::StatusCode;

#[test]
fn a_killed_console_shows_interrupted_and_resumes_only_when_an_approver_clicks() {
    let common::serve::Sending {
        dir: _dir,
        workspace,
        sandbox,
        runtime,
        process,
        admin,
        id,
        ..
    } = common::serve::sending();

    // Killed mid-send.
    process.kill();
    let reached_before_restart = sandbox.sent();
    assert!(
        (reached_before_restart.total as usize) < RECIPIENTS,
        "killed before the end"
    );

    let (process, base, link, said) = serve(&workspace);
    assert!(link.is_none());
    assert!(said.contains("were sending when the console last ended"), "{said}");
    let run_dir = workspace.join("runs").join(&id);
    // No process holds the run: nothing resumed by itself.
    let status = msgbatch::engine::status(&run_dir).expect("the run is not held by the restarted console");
    assert!(status.pending > 0, "recipients are left");
    let mut approver = Browser::new(&base);
    approver.cookie = admin.cookie.clone();
    runtime.block_on(async {
        let (code, page) = approver.page(&format!("/campaigns/{id}")).await;
        assert_eq!(code, StatusCode::OK, "the session survived the kill");
        assert!(page.contains("state interrupted"), "{page}");
        assert_eq!(
            between(&page, "Uncertain: <strong>", "<"),
            Some(status.uncertain.to_string())
        );
        approver.page("/campaigns").await;
        approver.page(&format!("/campaigns/{id}/live")).await;
    });
    assert_eq!(
        sandbox.sent(),
        reached_before_restart,
        "pages were loaded, nothing was sent: the restarted console did not resume by itself"
    );

    // The approver resumes it (uncertain left as they are).
    runtime.block_on(async {
        approver.page(&format!("/campaigns/{id}")).await;
        let response = approver.post(&format!("/campaigns/{id}/resume"), &[]).await;
        assert_eq!(location(&response), format!("/campaigns/{id}/live"));
        until_ended(&mut approver, &id).await;
    });
    drop(process);
    let status = msgbatch::engine::status(&run_dir).unwrap();
    assert!(status.balanced(), "{}", status.equation());
    assert_eq!(status.pending, 0);
    let sent = sandbox.sent();
    assert!(sent.repeated().is_empty(), "no number twice: {:?}", sent.repeated());
    assert!(sent.total >= status.sent && sent.total <= status.sent + status.uncertain);
}

#[test]
fn ctrl_c_stops_the_sending_campaign_cleanly_and_an_approver_resumes_it() {
    let common::serve::Sending {
        dir: _dir,
        workspace,
        sandbox,
        runtime,
        process,
        admin,
        id,
        ..
    } = common::serve::sending();

    // SIGINT, as Ctrl-C in its terminal: the run is stopped through its handle, then it exits.
    let pid = rustix::process::Pid::from_raw(process.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let ended = process.finish();
    assert_eq!(ended.code(), Some(0), "{}", ended.stderr);
    assert!(
        ended.stdout.contains("stopping 1 campaign(s)") && ended.stdout.contains("stopped: an approver resumes them"),
        "{}",
        ended.stdout
    );
    let reached = sandbox.sent();
    assert!((reached.total as usize) < RECIPIENTS, "stopped before the end");

    // Restarted: `stopped`, not interrupted; nothing uncertain, nothing in flight; report written.
    let (process, base, _, said) = serve(&workspace);
    assert!(!said.contains("were sending when the console last ended"), "{said}");
    let run_dir = workspace.join("runs").join(&id);
    let status = msgbatch::engine::status(&run_dir).unwrap();
    assert_eq!((status.uncertain, status.sending), (0, 0), "{}", status.equation());
    assert_eq!(
        status.sent, reached.total,
        "every request that reached the sandbox was recorded"
    );
    assert!(
        run_dir.join("report.csv").exists(),
        "the stopped run's report was written"
    );
    let mut approver = Browser::new(&base);
    approver.cookie = admin.cookie.clone();
    runtime.block_on(async {
        let (_, page) = approver.page(&format!("/campaigns/{id}")).await;
        assert!(page.contains("state stopped"), "{page}");
        let response = approver.post(&format!("/campaigns/{id}/resume"), &[]).await;
        assert_eq!(location(&response), format!("/campaigns/{id}/live"));
        assert_eq!(until_ended(&mut approver, &id).await, "done");
    });
    drop(process);
    let sent = sandbox.sent();
    assert!(sent.repeated().is_empty(), "no number twice: {:?}", sent.repeated());
    assert_eq!(sent.total as usize, RECIPIENTS);
}
