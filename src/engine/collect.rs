//! Collecting gateway results: every send group walked page by page, pending records re-read with backoff until a horizon.

use super::checkpoint::{Checkpoint, ChunkState, FinalResult, RunMeta};
use super::progress::Progress;
use crate::api::gateway::{final_result, SendRecord, RESULT_PAGE_MAX};
use crate::api::now_millis;
use crate::client::{Client, ErrorKind};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

/// How `collect` waits.
#[derive(Debug, Clone)]
pub struct CollectOptions {
    /// No lookup before a send is this old: the service fixes results "about 5 minutes" after
    /// acceptance and advises that an immediate re-read has no effect.
    pub min_age: Duration,
    /// First wait between re-reads of records still pending; doubles up to 5 minutes.
    pub poll_every: Duration,
    /// After this long since acceptance, a record still pending is left `provisional`.
    pub horizon: Duration,
    /// Page size for the send-group listing (1 to 500).
    pub page_size: u32,
    pub quiet: bool,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            min_age: Duration::from_secs(300),
            poll_every: Duration::from_secs(60),
            horizon: Duration::from_secs(3_600),
            page_size: RESULT_PAGE_MAX,
            quiet: false,
        }
    }
}

/// What a collection found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CollectReport {
    /// Accepted gateway recipients (the ones that have a final result to collect).
    pub accepted: u64,
    /// Final results by value (`OK`, `FAILED`, `GIVEUP`, `GW_PENDING` for provisional ones).
    pub results: BTreeMap<String, u64>,
    pub provisional: u64,
    /// Records that neither the listing nor the single lookup returned.
    pub missing: u64,
    pub pages_read: u64,
    /// Records a listing returned more than once (a listing that repeats is the service's fault).
    pub repeated: u64,
    pub single_lookups: u64,
}

/// Accepted ids still to settle, per send group, with the time the group was accepted.
struct Group {
    accepted_at: i64,
    ids: HashSet<String>,
    next_read_at: i64,
    wait: Duration,
}

fn record_final(record: &SendRecord, provisional: bool) -> FinalResult {
    FinalResult {
        result: record
            .result
            .clone()
            .unwrap_or_else(|| final_result::PENDING.to_string()),
        status: record.status.clone(),
        error_message: record.error_message.clone(),
        date: record.date,
        checked_at: now_millis(),
        provisional,
    }
}

fn is_settled(record: &SendRecord) -> bool {
    record.result.as_deref().is_some_and(|r| r != final_result::PENDING)
}

/// Reads the final result of every accepted gateway recipient of the run into the checkpoint.
pub async fn collect(
    checkpoint: &Checkpoint,
    meta: &RunMeta,
    client: &Client,
    options: &CollectOptions,
) -> Result<CollectReport> {
    let mut report = CollectReport::default();
    if meta.kind != crate::campaign::Kind::GatewayAlimtalk.as_str() {
        return Ok(report);
    }
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let records = checkpoint.chunk_records()?;
    let mut keys: Vec<_> = records.iter().filter(|(_, r)| r.state == ChunkState::Done).collect();
    keys.sort_by_key(|(key, _)| **key);
    for (key, record) in keys {
        let Some(send_group_id) = &record.send_group_id else {
            continue;
        };
        for result in checkpoint.results(*key)?.unwrap_or_default() {
            let Some(id) = result.id.filter(|_| result.accepted) else {
                continue;
            };
            report.accepted += 1;
            if checkpoint
                .final_result(&id)?
                .is_some_and(|f| f.result != final_result::PENDING)
            {
                continue;
            }
            let group = groups.entry(send_group_id.clone()).or_insert_with(|| Group {
                accepted_at: result.date,
                ids: HashSet::new(),
                next_read_at: result.date + options.min_age.as_millis() as i64,
                wait: options.poll_every,
            });
            group.ids.insert(id);
        }
    }
    let to_settle: u64 = groups.values().map(|g| g.ids.len() as u64).sum();
    let progress = Progress::new("collect", "results", Some(to_settle), options.quiet);
    while !groups.is_empty() {
        let now = now_millis();
        let next = groups.values().map(|g| g.next_read_at).min().expect("not empty");
        if next > now {
            let wait = Duration::from_millis((next - now) as u64);
            if wait > Duration::from_secs(5) {
                progress.say(&format!(
                    "collect: next read in {}s (results settle about 5 minutes after acceptance)",
                    wait.as_secs()
                ));
            }
            tokio::time::sleep(wait).await;
            continue;
        }
        let due: Vec<String> = groups
            .iter()
            .filter(|(_, g)| g.next_read_at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for send_group_id in due {
            let group = groups.get_mut(&send_group_id).expect("due group exists");
            let mut finals = Vec::new();
            let mut listed = HashSet::new();
            let mut last_key: Option<String> = None;
            loop {
                let page = match client
                    .result_page(&send_group_id, Some(options.page_size), last_key.as_deref())
                    .await
                {
                    Ok(page) => page,
                    Err(error) if error.kind() == ErrorKind::Service && error.http_status() == Some(404) => break,
                    Err(error) => return Err(error.into()),
                };
                report.pages_read += 1;
                for record in &page.items {
                    if !listed.insert(record.id.clone()) {
                        report.repeated += 1;
                        continue;
                    }
                    if group.ids.contains(&record.id) && is_settled(record) {
                        finals.push((record.id.clone(), record_final(record, false)));
                    }
                }
                match page.last_key {
                    Some(key) => last_key = Some(key),
                    None => break,
                }
            }
            // Stragglers: accepted ids the listing did not show, looked up one by one.
            let stragglers: Vec<String> = group.ids.iter().filter(|id| !listed.contains(*id)).cloned().collect();
            for id in stragglers {
                report.single_lookups += 1;
                match client.result(&id).await {
                    Ok(record) if is_settled(&record) => finals.push((id, record_final(&record, false))),
                    Ok(_) => {}
                    Err(error) if error.http_status() == Some(404) => {
                        report.missing += 1;
                        group.ids.remove(&id);
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            for (id, _) in &finals {
                group.ids.remove(id);
            }
            progress.add(finals.len() as u64);
            checkpoint.put_finals(&finals)?;
            let now = now_millis();
            if group.ids.is_empty() {
                groups.remove(&send_group_id);
            } else if now - group.accepted_at >= options.horizon.as_millis() as i64 {
                let provisional: Vec<(String, FinalResult)> = group
                    .ids
                    .iter()
                    .map(|id| {
                        let record = SendRecord {
                            id: id.clone(),
                            result: Some(final_result::PENDING.into()),
                            ..SendRecord::default()
                        };
                        (id.clone(), record_final(&record, true))
                    })
                    .collect();
                checkpoint.put_finals(&provisional)?;
                progress.add(provisional.len() as u64);
                groups.remove(&send_group_id);
            } else {
                let horizon_at = group.accepted_at + options.horizon.as_millis() as i64;
                group.next_read_at = (now + group.wait.as_millis() as i64).min(horizon_at);
                group.wait = (group.wait * 2).min(Duration::from_secs(300));
            }
        }
        checkpoint.flush()?;
    }
    progress.finish();
    // Tally what the checkpoint now holds for every accepted id.
    for (key, record) in checkpoint.chunk_records()? {
        if record.state != ChunkState::Done || record.send_group_id.is_none() {
            continue;
        }
        for result in checkpoint.results(key)?.unwrap_or_default() {
            let Some(id) = result.id.filter(|_| result.accepted) else {
                continue;
            };
            if let Some(found) = checkpoint.final_result(&id)? {
                *report.results.entry(found.result.clone()).or_default() += 1;
                report.provisional += found.provisional as u64;
            }
        }
    }
    Ok(report)
}
