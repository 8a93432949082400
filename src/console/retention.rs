//! Personal data kept only as long as it may be: an administrator's retention (days after a run's last answer), after which the console purges each ended run (`crate::purge`) and destroys what its campaign folder and test sends hold of the recipients, keeping totals, charges, the statement and the audit. Swept when the console starts, when the retention is set, and every hour (the hourly task also makes the day's frequency-cap list ahead of the checks).

use super::campaigns::{CampaignRecord, State};
use super::error::ConsoleError;
use super::store::Store;
use super::Shared;
use crate::purge::Purged;
use std::sync::Arc;

const SETTING: &str = "retention_days";
/// The longest retention an administrator may set (ten years).
pub const MAX_DAYS: u32 = 3650;
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// The retention in days; `None`: runs keep their personal data.
pub fn days(store: &Store) -> Result<Option<u32>, ConsoleError> {
    Ok(store.setting::<Option<u32>>(SETTING)?.flatten())
}

pub fn set_days(store: &Store, days: Option<u32>) -> Result<(), ConsoleError> {
    store.put_setting(SETTING, &days)
}

/// Sweeps now and then every hour, for as long as the console lives.
pub fn spawn(console: &Shared) {
    let weak = Arc::downgrade(console);
    tokio::spawn(async move {
        loop {
            let Some(console) = weak.upgrade() else { break };
            if let Err(error) = sweep(&console).await {
                tracing::error!("retention: {error}");
            }
            let (store, workspace) = (console.clone(), console.workspace.clone());
            let ready =
                tokio::task::spawn_blocking(move || super::frequency::keep_ready(&store.store, &workspace)).await;
            if let Ok(Err(error)) = ready {
                tracing::error!("frequency cap: {error:#}");
            }
            drop(console);
            tokio::time::sleep(SWEEP_EVERY).await;
        }
    });
}

/// Purges every ended run past the retention (a run that may still send is never purged);
/// answers the campaigns purged now.
pub async fn sweep(console: &Shared) -> Result<Vec<String>, ConsoleError> {
    let Some(days) = days(&console.store)? else {
        return Ok(Vec::new());
    };
    let mut purged = Vec::new();
    for record in console.store.campaigns::<CampaignRecord>()? {
        let ended = matches!(
            record.state,
            State::Done | State::Stopped | State::Incomplete | State::Failed
        );
        let run_dir = console.workspace.run_dir(&record.id);
        let already = record.run.as_ref().is_some_and(|run| run.purged.is_some());
        if !ended || already || !crate::engine::checkpoint_dir(&run_dir).exists() {
            continue;
        }
        if super::runner::active(console, &record.id).is_some() {
            continue;
        }
        let options = super::runner::report_options(console);
        let purging = run_dir.clone();
        let outcome = tokio::task::spawn_blocking(move || crate::purge::purge(&purging, Some(days), &options))
            .await
            .map_err(ConsoleError::internal)?;
        let (rows, report) = match outcome {
            Ok(Purged::Purged { rows, report, .. }) => (Some(rows), report),
            Ok(Purged::Already) => (None, None),
            Ok(Purged::Kept { .. }) => continue,
            // Refused (it may still send, its gateway results are not settled) or held: next sweep.
            Err(error) => {
                tracing::info!("retention: campaign {} kept: {error:#}", record.id);
                continue;
            }
        };
        destroy_campaign_data(console, &record.id)?;
        // The purge wrote the report again: the summaries for each viewer's language come from it.
        match report {
            Some(summary) => super::runner::write_viewer_summaries(&run_dir, &summary, options.lang)
                .map_err(ConsoleError::from_io)?,
            None => super::runner::write_report(console, &record.id).await?,
        }
        let _transition = console.transitions.lock().await;
        let mut record = super::campaigns::find(&console.store, &record.id)?;
        if let Some(run) = &mut record.run {
            run.purged = Some(super::campaigns::now_text());
        }
        console.store.put_campaign(&record.id, &record)?;
        let detail = match rows {
            Some(rows) => format!("{} rows, after {days} days", crate::text::count(rows)),
            None => format!("after {days} days"),
        };
        console.store.audit("console", "purged", Some(&record.id), &detail)?;
        purged.push(record.id);
    }
    Ok(purged)
}

/// What the campaign's folder and test sends hold of the recipients: the uploads, the rejected
/// rows, the lists placed in it, and every test send's records.
fn destroy_campaign_data(console: &Shared, id: &str) -> Result<(), ConsoleError> {
    let dir = console.workspace.campaign_dir(id);
    let kept = [super::campaigns::CAMPAIGN_FILE, super::compose::COMPOSED_FILE];
    for entry in std::fs::read_dir(&dir).map_err(ConsoleError::from_io)? {
        let entry = entry.map_err(ConsoleError::from_io)?;
        let name = entry.file_name();
        // The settings stay (a report reads them); a message text file the settings name stays too.
        if kept.iter().any(|kept| name == *kept) || is_text_file(&dir, &name.to_string_lossy()) {
            continue;
        }
        remove(&entry.path())?;
    }
    let tests = console.workspace.tests_dir();
    if let Ok(entries) = std::fs::read_dir(&tests) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(&format!("{id}-")) {
                remove(&entry.path())?;
            }
        }
    }
    Ok(())
}

/// Whether `name` is the message text file the campaign's settings name.
fn is_text_file(dir: &std::path::Path, name: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join(super::compose::COMPOSED_FILE)) else {
        return false;
    };
    let Ok(settings) = toml::from_str::<toml::Table>(&text) else {
        return false;
    };
    settings
        .get("message")
        .and_then(|message| message.get("text_file"))
        .and_then(toml::Value::as_str)
        == Some(name)
}

fn remove(path: &std::path::Path) -> Result<(), ConsoleError> {
    crate::files::remove_any(path).map_err(ConsoleError::from_io)
}
