//! Tests of the checkpoint: records, results and their counts stored and read back, the lock.

use super::*;
use crate::campaign::Lane;

/// The checkpoint opened again in this process: sled's flusher thread may still hold the folder's
/// lock a moment after the first was dropped (a process that ends lets go at once), so the open
/// is tried until it is let go.
fn reopened(path: &Path) -> Checkpoint {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match Checkpoint::open(path, false) {
            Err(CheckpointError::InUse { .. }) if std::time::Instant::now() < deadline => std::thread::yield_now(),
            opened => return opened.unwrap(),
        }
    }
}

fn record(state: ChunkState) -> ChunkRecord {
    ChunkRecord {
        state,
        identity: ChunkIdentity {
            first_row: 1,
            last_row: 2,
            recipients: 2,
            digest: "0".into(),
        },
        attempts: 1,
        send_group_id: None,
        note: None,
        statuses: None,
        cost: None,
    }
}

#[test]
fn marks_results_and_release_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("checkpoint");
    let a = ChunkKey {
        lane: Lane::Sms,
        index: 0,
    };
    let b = ChunkKey {
        lane: Lane::Lms,
        index: 7,
    };
    let c = ChunkKey {
        lane: Lane::Sms,
        index: 1,
    };
    {
        let checkpoint = Checkpoint::open(&path, true).unwrap();
        checkpoint
            .record_in_flight(&[
                (a, record(ChunkState::InFlight)),
                (b, record(ChunkState::InFlight)),
                (c, record(ChunkState::InFlight)),
            ])
            .unwrap();
        let result = RecipientResult {
            row: 1,
            status: "SMS_00".into(),
            uid: "5".into(),
            id: None,
            date: 1,
            error: None,
            accepted: true,
        };
        checkpoint
            .complete(&[Completed {
                key: a,
                record: record(ChunkState::Done),
                results: vec![result],
            }])
            .unwrap();
        checkpoint.release(c).unwrap();
        checkpoint.flush().unwrap();
    }
    let checkpoint = reopened(&path);
    let records = checkpoint.chunk_records().unwrap();
    assert_eq!(records[&a].state, ChunkState::Done);
    assert_eq!(records[&b].state, ChunkState::InFlight);
    assert!(!records.contains_key(&c));
    assert_eq!(checkpoint.results(a).unwrap().unwrap()[0].uid, "5");
}

#[test]
fn stored_results_round_trip_compactly() {
    let result = |row: u64, status: &str, uid: &str, accepted: bool| RecipientResult {
        row,
        status: status.into(),
        uid: uid.into(),
        id: None,
        date: 1_795_000_000_000,
        error: None,
        accepted,
    };
    let mut standard: Vec<RecipientResult> = (0..100)
        .map(|i| result(1_000 + i, "SMS_00", &(1_000_000_001 + i).to_string(), true))
        .collect();
    standard[7] = result(1_007, "ERROR", "1000000008", false);
    standard[9].error = Some("reason".into());
    standard[11].date += 5;
    let stored = StoredResults::encode(&standard);
    assert_eq!(stored.clone().decode(), standard);
    assert!(serde_json::to_vec(&stored).unwrap().len() < 1_200);
    let gateway = vec![
        RecipientResult {
            id: Some("a-b".into()),
            ..result(3, "GW_PENDING", "gw01", true)
        },
        RecipientResult {
            id: Some("c-d".into()),
            error: Some("refused".into()),
            ..result(9, "FAILED", "gw02", false)
        },
    ];
    assert_eq!(StoredResults::encode(&gateway).decode(), gateway);
}

#[test]
fn chunks_completed_together_each_keep_their_own_record_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = Checkpoint::open(&dir.path().join("checkpoint"), true).unwrap();
    let key = |index| ChunkKey { lane: Lane::Sms, index };
    let results = |first: u64, status: &str| -> Vec<RecipientResult> {
        (first..first + 3)
            .map(|row| RecipientResult {
                row,
                status: status.into(),
                uid: (row * 7).to_string(),
                id: None,
                date: 1_795_000_000_000,
                error: None,
                accepted: status == "SMS_00",
            })
            .collect()
    };
    let in_flight = [(key(2), record(ChunkState::InFlight))];
    checkpoint.record_in_flight(&in_flight).unwrap();
    let completed: Vec<Completed> = [(0, 1, "SMS_00"), (1, 4, "ERROR"), (2, 7, "SMS_00")]
        .into_iter()
        .map(|(index, first, status)| Completed {
            key: key(index),
            record: record(ChunkState::Done),
            results: results(first, status),
        })
        .collect();
    checkpoint.complete(&completed).unwrap();
    checkpoint.flush().unwrap();
    drop(checkpoint);

    let checkpoint = Checkpoint::open(&dir.path().join("checkpoint"), false).unwrap();
    let records = checkpoint.chunk_records().unwrap();
    assert_eq!(records.len(), 3);
    for chunk in &completed {
        let stored = &records[&chunk.key];
        assert_eq!(stored.state, ChunkState::Done, "{}", chunk.key);
        assert_eq!(checkpoint.results(chunk.key).unwrap().as_ref(), Some(&chunk.results));
        let counted = checkpoint.status_counts(chunk.key, stored).unwrap();
        assert_eq!(counted.len(), 1);
        assert_eq!(counted[0].status, chunk.results[0].status);
        assert_eq!(counted[0].accepted + counted[0].not_accepted, 3);
    }
}

#[test]
fn status_counts_agree_with_the_decoded_results_in_new_and_older_records() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = Checkpoint::open(&dir.path().join("checkpoint"), true).unwrap();
    let key = ChunkKey {
        lane: Lane::Sms,
        index: 0,
    };
    let result = |row: u64, status: &str, accepted: bool| RecipientResult {
        row,
        status: status.into(),
        uid: row.to_string(),
        id: None,
        date: 1_795_000_000_000,
        error: None,
        accepted,
    };
    // SMS_00 accepted but for one exception; ERROR not accepted but for one exception.
    let results = vec![
        result(1, "SMS_00", true),
        result(2, "ERROR", false),
        result(3, "SMS_00", false),
        result(4, "SMS_00", true),
        result(5, "ERROR", true),
        result(6, "ERROR", false),
    ];
    checkpoint
        .complete(&[Completed {
            key,
            record: record(ChunkState::Done),
            results,
        }])
        .unwrap();
    let decoded = checkpoint.results(key).unwrap().unwrap();
    let mut expected: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for result in &decoded {
        let count = expected.entry(result.status.clone()).or_default();
        match result.accepted {
            true => count.0 += 1,
            false => count.1 += 1,
        }
    }
    let as_map = |counts: Vec<StatusCount>| -> std::collections::BTreeMap<String, (u64, u64)> {
        counts
            .into_iter()
            .map(|count| (count.status, (count.accepted, count.not_accepted)))
            .collect()
    };
    let stored = checkpoint.chunk_records().unwrap().remove(&key).unwrap();
    assert!(stored.statuses.is_some(), "the done record carries its counts");
    assert_eq!(as_map(checkpoint.status_counts(key, &stored).unwrap()), expected);
    // A record from before the counts existed: its results are counted.
    let older = ChunkRecord {
        statuses: None,
        ..stored
    };
    assert_eq!(as_map(checkpoint.status_counts(key, &older).unwrap()), expected);
}

#[test]
fn a_second_opener_is_told_the_run_is_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("checkpoint");
    let _first = Checkpoint::open(&path, true).unwrap();
    let error = Checkpoint::open(&path, false).err().expect("second open fails");
    assert!(matches!(error, CheckpointError::InUse { .. }), "{error}");
}

#[test]
fn opening_a_folder_without_a_run_says_so() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Checkpoint::open(dir.path(), false),
        Err(CheckpointError::NotARun { .. })
    ));
}

#[test]
fn a_chunk_record_is_stored_flat_and_reads_back_the_same() {
    let mut full = record(ChunkState::Done);
    full.send_group_id = Some("g-1".into());
    full.note = Some("retried once".into());
    full.statuses = Some(vec![StatusCount {
        status: "SMS_00".into(),
        accepted: 2,
        not_accepted: 0,
    }]);
    for original in [record(ChunkState::InFlight), full] {
        let stored = serde_json::to_string(&original).unwrap();
        assert!(stored.contains(r#""first_row":1,"last_row":2"#), "{stored}");
        assert_eq!(serde_json::from_str::<ChunkRecord>(&stored).unwrap(), original);
    }
    // As a record is stored by the builds before this one, with a field it does not know.
    let earlier = r#"{"state":"done","first_row":3,"last_row":9,"recipients":4,"digest":"ab","attempts":2,"send_group_id":"g","later":1}"#;
    let read: ChunkRecord = serde_json::from_str(earlier).unwrap();
    assert_eq!(
        (
            read.state,
            read.identity.first_row,
            read.identity.last_row,
            read.identity.recipients
        ),
        (ChunkState::Done, 3, 9, 4)
    );
    assert_eq!((read.identity.digest.as_str(), read.attempts), ("ab", 2));
    assert_eq!(
        (read.send_group_id.as_deref(), read.note, read.statuses),
        (Some("g"), None, None)
    );
}
