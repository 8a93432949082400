//! The engine as a library: a run driven from Rust with a control handle, its progress read as a stream of typed events, against the embedded sandbox.

use msgbatch::campaign::Campaign;
use msgbatch::engine::events::{self, Event, PauseCause};
use msgbatch::engine::{self, Control, RunEnd, RunOptions};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// An SMS campaign of `recipients` rows against the embedded sandbox, in a temporary folder.
fn campaign(recipients: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut csv = String::from("phone\n");
    for i in 0..recipients {
        csv.push_str(&format!("010{:08}\n", 40_000_000 + i * 100 + i % 90));
    }
    std::fs::write(dir.path().join("recipients.csv"), csv).expect("recipients written");
    let path = dir.path().join("campaign.toml");
    std::fs::write(
        &path,
        "name = \"events\"\nkind = \"sms\"\nendpoint = \"sandbox\"\n[message]\nservice = 3001\ntext = \"[데모몰] 안내\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"recipients.csv\"\n[send]\nchunk_size = 10\nconcurrency = 2\n[prices]\nsms = 9\n",
    )
    .expect("campaign written");
    (dir, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_started_paused_sends_nothing_until_resumed_and_tells_every_chunk_in_order() {
    let (dir, path) = campaign(120);
    let control = Control::new();
    control.pause();
    let (sink, mut stream) = events::stream();
    let options = RunOptions {
        out: Some(dir.path().join("run")),
        budget: Some(100_000),
        ..RunOptions::default()
    };
    let run = tokio::spawn({
        let control = control.clone();
        let campaign = Campaign::load(&path).expect("campaign loads");
        async move { engine::run(campaign, options, &control, sink).await }
    });

    let mut seen = Vec::new();
    while let Some(event) = stream.recv().await {
        if event == Event::Paused(PauseCause::Asked) {
            assert!(
                !seen.iter().any(|event| matches!(event, Event::ChunkMarked { .. })),
                "a run paused before it started marks no chunk: {seen:?}"
            );
            control.resume();
        }
        let finished = matches!(event, Event::Finished { .. });
        seen.push(event);
        if finished {
            break;
        }
    }
    let report = run.await.expect("the run task ends").expect("the run ends well");
    assert_eq!(report.end, RunEnd::Complete);
    assert!(report.status.complete);

    let position = |wanted: &dyn Fn(&Event) -> bool| seen.iter().position(wanted);
    let started = position(&|e| matches!(e, Event::Started { .. })).expect("Started");
    let paused = position(&|e| matches!(e, Event::Paused(_))).expect("Paused");
    let resumed = position(&|e| matches!(e, Event::Resumed)).expect("Resumed");
    let first_mark = position(&|e| matches!(e, Event::ChunkMarked { .. })).expect("a chunk marked");
    assert!(started < paused && paused < resumed && resumed < first_mark, "{seen:?}");
    assert!(matches!(seen.last(), Some(Event::Finished { .. })));

    // Each chunk marked once, then answered once, and the answers add up to every recipient.
    let mut marked = BTreeSet::new();
    let mut answered = 0;
    let mut charged = 0;
    for event in &seen {
        match event {
            Event::ChunkMarked { key, reserved, .. } => {
                assert!(marked.insert(*key), "{key} marked twice");
                assert_eq!(*reserved, 90, "a chunk of 10 SMS at ₩9 is reserved at ₩90");
            }
            Event::Answered {
                key,
                recipients,
                charged: cost,
                ..
            } => {
                assert!(marked.contains(key), "{key} answered before it was marked");
                answered += recipients;
                charged += cost;
            }
            _ => {}
        }
    }
    assert_eq!((marked.len(), answered, charged), (12, 120, 120 * 9));
    let budget = report.status.budget.expect("a priced run has a budget status");
    assert_eq!(
        (budget.limit, budget.charged, budget.reserved),
        (Some(100_000), 1080, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_through_the_handle_ends_the_run_resumable_with_every_row_pending() {
    let (dir, path) = campaign(30);
    let control = Control::new();
    control.stop();
    let options = RunOptions {
        out: Some(dir.path().join("run")),
        ..RunOptions::default()
    };
    let report = engine::run(
        Campaign::load(&path).unwrap(),
        options,
        &control,
        std::sync::Arc::new(events::Ignore),
    )
    .await
    .expect("a stopped run ends");
    assert_eq!(report.end, RunEnd::Stopped);
    assert_eq!((report.status.pending, report.status.sent), (30, 0));
}
