//! The workspace's frequency cap: an administrator's rule (at most N advertising messages a number in D days; off by default), the history of what the service accepted, and the list of numbers held back placed in an advertising campaign at its check and made again at its start.

pub mod history;

use super::campaigns::Workspace;
use super::error::ConsoleError;
use super::store::Store;
use crate::campaign::Campaign;
use crate::plan::capped::CapRule;
use std::path::{Path, PathBuf};

const SETTING: &str = "frequency_cap";

/// The file, in an advertising campaign's folder, that holds the numbers the cap held back when
/// it was last placed (`recipients.frequency_capped` of the composed settings).
pub const SNAPSHOT_FILE: &str = "frequency-capped.bin";

/// The rule, `None` when the cap is off.
pub fn rule(store: &Store) -> Result<Option<CapRule>, ConsoleError> {
    Ok(store.setting::<Option<CapRule>>(SETTING)?.flatten())
}

pub fn set_rule(store: &Store, rule: Option<CapRule>) -> Result<(), ConsoleError> {
    store.put_setting(SETTING, &rule)
}

/// The workspace's folder of sends.
pub fn history_dir(workspace: &Workspace) -> PathBuf {
    workspace.root.join("history")
}

/// Makes the campaign read the numbers the cap holds back today, when it advertises and the
/// cap is on; removes the list otherwise. Called by the check and by a fresh start (a resume
/// keeps the list its run began with), before the campaign is composed.
pub fn place(workspace: &Workspace, id: &str, campaign: &Campaign, rule: Option<CapRule>) -> Result<(), ConsoleError> {
    let snapshot = workspace.campaign_dir(id).join(SNAPSHOT_FILE);
    match std::fs::remove_file(&snapshot) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(ConsoleError::from_io(error)),
    }
    let Some(rule) = rule.filter(|_| campaign.is_advertising()) else {
        return Ok(());
    };
    let dir = history_dir(workspace);
    let today = crate::plan::capped::today();
    let kept = history::capped_list(&dir, rule, today).map_err(ConsoleError::from)?;
    // A link to the kept list (it is replaced, never changed, so the campaign's copy stays as
    // checked); made again in the folder when the kept one went away meanwhile.
    if std::fs::hard_link(&kept, &snapshot).is_err() {
        history::write_capped(&dir, rule, today, &snapshot).map_err(ConsoleError::from)?;
    }
    Ok(())
}

/// Whether a campaign folder holds a placed list (composing then names it).
pub fn placed(dir: &Path) -> bool {
    dir.join(SNAPSHOT_FILE).exists()
}

/// Records what the service accepted of a campaign's run in the history (replacing what an
/// earlier end of the same run recorded), gathered by the report's walk at the run's end or read
/// from the run at the console's start. A notification campaign records an empty segment:
/// nothing is counted, and the run is known to be recorded. With the cap on, the list of
/// held-back numbers is made again at once, so that the next check finds it ready.
pub fn record_sends(workspace: &Workspace, id: &str, sends: Vec<u64>, rule: Option<CapRule>) -> anyhow::Result<u64> {
    let dir = history_dir(workspace);
    let recorded = history::write_segment(&dir, id, sends)?;
    if let Some(rule) = rule {
        history::capped_list(&dir, rule, crate::plan::capped::today())?;
    }
    Ok(recorded)
}

/// Makes today's list of held-back numbers ahead of any check (the console's hourly sweep calls
/// it, so that the first check of a day seldom makes it).
pub fn keep_ready(store: &Store, workspace: &Workspace) -> anyhow::Result<()> {
    if let Some(rule) = rule(store)? {
        history::capped_list(&history_dir(workspace), rule, crate::plan::capped::today())?;
    }
    Ok(())
}

/// At the console's start: every run that ended since without its sends in the history (the
/// process stopped between the end and the record), and every interrupted one again (it may have
/// sent since it was last recorded). Answers how many runs were recorded.
pub fn record_ended(store: &Store, workspace: &Workspace) -> anyhow::Result<usize> {
    use super::campaigns::{CampaignRecord, State};
    let dir = history_dir(workspace);
    let mut recorded = 0;
    for record in store.campaigns::<CampaignRecord>()? {
        let again = match record.state {
            State::Interrupted => true,
            State::Done | State::Stopped | State::Incomplete | State::Failed => false,
            _ => continue,
        };
        if !workspace
            .run_dir(&record.id)
            .join(crate::engine::CHECKPOINT_DIR)
            .exists()
        {
            continue;
        }
        if again || !history::segment_path(&dir, &record.id).exists() {
            // A notification's run is not walked: it sends nothing the cap counts.
            let advertising = record.check.as_ref().is_some_and(|check| check.advertising);
            let sends = if advertising {
                history::sends_of_run(&workspace.run_dir(&record.id))?
            } else {
                Vec::new()
            };
            record_sends(workspace, &record.id, sends, rule(store)?)?;
            recorded += 1;
        }
    }
    Ok(recorded)
}
