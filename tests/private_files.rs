//! Everything msgbatch creates in a run directory is owner-only: the binary's files, and the checkpoint a library caller opens.

mod common;

use common::process::{copy_samples, exec, msgbatch_at, path_str};
use msgbatch::engine::checkpoint::Checkpoint;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Every path under `root` (itself included) that is not 0700 for a folder or 0600 for a file.
fn not_owner_only(root: &Path) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let mode = std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777;
        if mode != 0o700 {
            wrong.push(format!("{} {mode:o}", folder.display()));
        }
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                folders.push(entry.path());
            } else {
                let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
                if mode != 0o600 {
                    wrong.push(format!("{} {mode:o}", entry.path().display()));
                }
            }
        }
    }
    wrong
}

#[test]
fn a_run_directory_is_owner_only_all_the_way_down() {
    let dir = tempfile::tempdir().unwrap();
    copy_samples(dir.path(), &["alimtalk.toml", "recipients.csv", "suppression.csv"]);
    let run_dir = dir.path().join("run");
    let command = || msgbatch_at(dir.path(), "2026-11-23T11:00:00+09:00");
    exec(
        command(),
        &[
            "run",
            path_str(&dir.path().join("alimtalk.toml")),
            "--out",
            path_str(&run_dir),
        ],
    )
    .expect_code(0, "the sample campaign");
    exec(command(), &["report", path_str(&run_dir)]).expect_code(0, "report");

    assert!(run_dir.join("checkpoint").is_dir());
    let wrong = not_owner_only(&run_dir);
    assert!(wrong.is_empty(), "not owner-only: {wrong:#?}");
}

#[test]
fn a_checkpoint_opened_by_a_library_caller_is_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.path().join("checkpoint");
    // This test process keeps its usual umask (022), so sled creates its files 0644 and 0755.
    let checkpoint = Checkpoint::open(&path, true).expect("checkpoint opens");
    checkpoint.flush().expect("flush");
    drop(checkpoint);
    let wrong = not_owner_only(&path);
    assert!(wrong.is_empty(), "not owner-only: {wrong:#?}");

    // Opening an existing checkpoint again fixes what was opened up since.
    std::fs::set_permissions(path.join("conf"), std::fs::Permissions::from_mode(0o644)).unwrap();
    // sled's flusher thread lets go of the previous instance's lock a moment after the drop.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let reopened = loop {
        match Checkpoint::open(&path, false) {
            Err(msgbatch::engine::checkpoint::CheckpointError::InUse { .. })
                if std::time::Instant::now() < deadline =>
            {
                std::thread::yield_now()
            }
            other => break other,
        }
    };
    drop(reopened.expect("checkpoint opens again"));
    let wrong = not_owner_only(&path);
    assert!(wrong.is_empty(), "not owner-only: {wrong:#?}");
}
