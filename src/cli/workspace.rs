//! `msgbatch workspace backup|restore`: a console workspace to one file and back; while `serve` runs the backup is asked of it (through its `serve.json`), so that the copy is consistent.

use super::exit::Exit;
use crate::console::backup::{self, Made, Serving};
use anyhow::{bail, Context, Result};
use clap::Subcommand;
use std::path::{Path, PathBuf};

#[derive(Subcommand, Debug)]
pub enum WorkspaceCommand {
    /// Copy a console workspace (console.db, campaigns, runs, statements) to one file; while
    /// `msgbatch serve` runs on it, the console makes the copy, pausing sending runs for it.
    Backup {
        workspace: PathBuf,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Leave the sending runs paused after the copy (to move the workspace: nothing is sent
        /// between the copy and its restore elsewhere; an approver resumes them there).
        #[arg(long)]
        hold: bool,
    },
    /// Bring a backup back into a new folder; `msgbatch serve --workspace DIR` then shows a run
    /// that was sending `interrupted`, for an approver to resume.
    Restore {
        file: PathBuf,
        #[arg(long, value_name = "DIR")]
        to: PathBuf,
    },
}

pub async fn workspace(command: WorkspaceCommand) -> Result<Exit> {
    match command {
        WorkspaceCommand::Backup { workspace, out, hold } => {
            let out = absolute(&out)?;
            let made = match serving(&workspace)? {
                Some(serving) => by_the_console(&serving, &out, hold).await?,
                None => offline(&workspace, &out)?,
            };
            println!(
                "backed up {} files ({} bytes) and {} records of console.db to {}{}",
                made.files,
                made.bytes,
                made.records,
                out.display(),
                if made.paused_runs.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} sending run(s) paused for the copy and {}",
                        made.paused_runs.len(),
                        if made.held { "left paused (--hold)" } else { "resumed" }
                    )
                }
            );
        }
        WorkspaceCommand::Restore { file, to } => {
            let made =
                tokio::task::spawn_blocking(move || backup::restore(&file, &to).map(|made| (made, to))).await??;
            let (made, to) = made;
            println!(
                "restored {} files and {} records of console.db into {}: start it with `msgbatch serve --workspace {}`; a run that was sending shows `interrupted` and resumes from what was recorded when the backup was taken (resume it only if the original workspace has not sent since)",
                made.files,
                made.records,
                to.display(),
                to.display()
            );
        }
    }
    Ok(Exit::Done)
}

fn absolute(path: &Path) -> Result<PathBuf> {
    Ok(if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    })
}

/// The console serving the workspace, if one does (its `serve.json`, and it answers).
fn serving(workspace: &Path) -> Result<Option<Serving>> {
    let path = workspace.join(backup::SERVE_FILE);
    let Ok(text) = std::fs::read(&path) else {
        return Ok(None);
    };
    let serving: Serving = serde_json::from_slice(&text).with_context(|| format!("cannot read {}", path.display()))?;
    let alive = std::path::Path::new(&format!("/proc/{}", serving.pid)).exists() || !cfg!(target_os = "linux");
    Ok(alive.then_some(serving))
}

async fn by_the_console(serving: &Serving, out: &Path, hold: bool) -> Result<Made> {
    let client = reqwest::Client::builder().build()?;
    let answer = client
        .post(format!("{}/internal/backup", serving.base_url))
        .header(backup::CONTROL_HEADER, &serving.control_key)
        .json(&serde_json::json!({ "out": out, "hold": hold }))
        .send()
        .await
        .with_context(|| format!("the console at {} did not answer", serving.base_url))?;
    if !answer.status().is_success() {
        bail!(
            "the console refused the backup ({}): {}",
            answer.status(),
            answer.text().await.unwrap_or_default()
        );
    }
    Ok(answer.json().await?)
}

fn offline(workspace: &Path, out: &Path) -> Result<Made> {
    let database = workspace.join("console.db");
    if !database.exists() {
        bail!(crate::engine::Refusal(format!(
            "{} is not a console workspace (no console.db)",
            workspace.display()
        )));
    }
    let store = crate::console::store::Store::open(&database).map_err(|error| anyhow::anyhow!("{error:#}"))?;
    backup::write(&store, workspace, out).map_err(|error| anyhow::anyhow!("{error:#}"))
}
