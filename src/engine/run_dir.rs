//! The run directory: where a run goes, how it is taken (never from something else), fingerprints of what decides the rows, and the check that they did not change.

use super::checkpoint::{self, Checkpoint, RunMeta};
use super::{Refusal, CHECKPOINT_DIR, REJECTS_FILE};
use crate::campaign::{Campaign, PACE_SETTINGS};
use crate::files;
use crate::input::InputError;
use anyhow::{bail, Context, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Hex digest of a file's bytes (xxh3-128): enough to notice any change. A file that cannot be
/// opened is a refusal naming it (nothing has been sent yet when fingerprints are taken).
pub fn fingerprint_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|source| InputError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file
            .read(&mut buffer)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

/// How a campaign file is fingerprinted.
#[derive(Clone, Copy, PartialEq)]
enum FileDigest {
    /// Its settings without the pace ones (rate, concurrency, budget), so that changing those
    /// never makes `resume` refuse.
    WithoutPace,
    /// Every byte, as runs started before the pace settings were left out recorded it.
    Bytes,
}

/// The digest of the campaign file's settings without [`PACE_SETTINGS`], in a canonical form.
fn settings_digest(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut table: toml::Table =
        toml::from_str(&text).with_context(|| format!("cannot read {} as TOML", path.display()))?;
    if let Some(toml::Value::Table(send)) = table.get_mut("send") {
        for key in PACE_SETTINGS {
            send.remove(key);
        }
    }
    let canonical = serde_json::to_vec(&table).context("cannot write the campaign's settings")?;
    Ok(format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&canonical)))
}

/// Fingerprint of everything that decides what is sent, other than the recipients file: the
/// campaign file's settings (not its pace: rate, concurrency, budget), its message text (which
/// may come from `text_file`), the suppression list, and the opt-out list and frequency cap's
/// list it applies.
pub(super) fn campaign_fingerprint(campaign: &Campaign) -> Result<String> {
    fingerprint_campaign(campaign, FileDigest::WithoutPace)
}

fn fingerprint_campaign(campaign: &Campaign, file: FileDigest) -> Result<String> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let file = match file {
        FileDigest::WithoutPace => settings_digest(&campaign.file)?,
        FileDigest::Bytes => fingerprint_file(&campaign.file)?,
    };
    hasher.update(file.as_bytes());
    hasher.update(campaign.message_text().unwrap_or("").as_bytes());
    if let Some(path) = &campaign.recipients.suppression {
        hasher.update(fingerprint_file(path)?.as_bytes());
    }
    if let Some(path) = campaign.opt_outs_applied() {
        hasher.update(b"opt-outs");
        hasher.update(fingerprint_file(path)?.as_bytes());
    }
    // The cap's list is made again only for a fresh start: a resume reads the one it began with.
    if let Some(path) = campaign.frequency_capped_applied() {
        hasher.update(b"frequency-capped");
        hasher.update(fingerprint_file(path)?.as_bytes());
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

pub(super) fn default_run_dir(campaign: &Campaign) -> PathBuf {
    let stamp = chrono::Utc::now()
        .with_timezone(&crate::campaign::quiet::kst())
        .format("%Y%m%d-%H%M%S");
    let safe: String = campaign
        .name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    PathBuf::from("runs").join(format!("{safe}-{stamp}"))
}

/// The folder a purge leaves in a run directory: the run's rows without names, variables or
/// full numbers, and a checkpoint of chunk records alone. Its presence is the purge's one commit
/// point (a rename): a run is purged or it is not.
pub const PURGED_DIR: &str = "purged";

/// Whether the run's personal data was destroyed (see `crate::purge`).
pub fn is_purged(run_dir: &Path) -> bool {
    run_dir.join(PURGED_DIR).is_dir()
}

/// Where a run's checkpoint is: in the run directory, or, once purged, the purge's copy.
pub fn checkpoint_dir(run_dir: &Path) -> PathBuf {
    if is_purged(run_dir) {
        run_dir.join(PURGED_DIR).join(CHECKPOINT_DIR)
    } else {
        run_dir.join(CHECKPOINT_DIR)
    }
}

/// Refuses what would send (or collect) for a purged run: its recipients are gone.
pub fn refuse_purged(run_dir: &Path, what: &str) -> Result<()> {
    if is_purged(run_dir) {
        bail!(Refusal(format!(
            "{} was purged (its recipients' names, variables and numbers were destroyed): it cannot be {what}; its totals still report",
            run_dir.display()
        )));
    }
    Ok(())
}

/// Takes a run directory for a new run: a new folder (created owner-only), an existing empty
/// one (its mode left as it is), or one whose earlier run stopped before it recorded anything to
/// send (killed while reading its input). Answers whether the folder was created here.
pub(super) fn claim_run_dir(run_dir: &Path) -> Result<bool> {
    refuse_purged(run_dir, "used for a new run")?;
    let checkpoint_dir = run_dir.join(CHECKPOINT_DIR);
    if checkpoint_dir.exists() {
        let recorded = Checkpoint::open(&checkpoint_dir, false)?.meta()?.is_some();
        if recorded {
            bail!(Refusal(format!(
                "{} already holds a run: continue it with `msgbatch resume {}` or choose another --out",
                run_dir.display(),
                run_dir.display()
            )));
        }
        release_run_dir(run_dir, false);
    }
    match std::fs::read_dir(run_dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(Refusal(format!(
                    "{} exists and is not a run directory: choose a new or empty --out",
                    run_dir.display()
                )));
            }
            Ok(false)
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            files::create_private_dir(run_dir)
                .with_context(|| format!("cannot create run directory {}", run_dir.display()))?;
            Ok(true)
        }
        Err(error) => Err(error).with_context(|| format!("cannot use run directory {}", run_dir.display())),
    }
}

/// Undoes a run directory whose run refused to start before sending: so that no dead run is left
/// that neither `run` nor `resume` would take.
pub(super) fn release_run_dir(run_dir: &Path, created: bool) {
    if created {
        let _ = std::fs::remove_dir_all(run_dir);
        return;
    }
    for name in [
        REJECTS_FILE,
        "campaign.toml",
        CHECKPOINT_DIR,
        super::control::CONTROL_FILE,
    ] {
        let path = run_dir.join(name);
        let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
    }
}

/// Refuses a campaign whose file, message text, suppression list, input or chunking changed
/// since the run started: the chunks and rows of the checkpoint would no longer be the same.
pub fn verify_unchanged(campaign: &Campaign, meta: &RunMeta) -> Result<()> {
    if meta.format != checkpoint::FORMAT_VERSION {
        // Its chunks were recorded under other row numbers: cut again now, none would be recognised.
        let why = if meta.format == 2 {
            " (rows are now numbered as a spreadsheet shows them, the first recipient on row 2: a CSV or Parquet run of layout 2 numbered it 1)"
        } else {
            ""
        };
        bail!(Refusal(format!(
            "this run's checkpoint has layout {} and this msgbatch reads layout {}{why}: finish it, and write its report, with the release that started it",
            meta.format,
            checkpoint::FORMAT_VERSION
        )));
    }
    let unchanged = campaign_fingerprint(campaign)? == meta.campaign_fingerprint
        || fingerprint_campaign(campaign, FileDigest::Bytes)? == meta.campaign_fingerprint;
    if !unchanged {
        bail!(Refusal(format!(
            "the campaign changed since this run started ({}, its message text, its suppression list, its opt-out list or its frequency cap's list): refusing to resume; start a new run",
            meta.campaign_file.display()
        )));
    }
    let input = std::fs::canonicalize(&campaign.recipients.path).unwrap_or(campaign.recipients.path.clone());
    if input != meta.input_file || fingerprint_file(&campaign.recipients.path)? != meta.input_fingerprint {
        bail!(Refusal(format!(
            "the recipients file changed since this run started ({}): refusing to resume; start a new run",
            meta.input_file.display()
        )));
    }
    if campaign.send.chunk_size != meta.chunk_size {
        bail!(Refusal(
            "chunk_size changed since this run started: refusing to resume".into()
        ));
    }
    Ok(())
}
