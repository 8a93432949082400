//! A workspace's backup and restore: one zip holding console.db as JSON lines (every tree, key and value, read through sled) and every other file of the workspace; taken while `serve` runs by the console itself, with campaign changes held and each sending run paused until no request is in flight, so that every checkpoint is copied as it stands on disk between two chunks.

use super::error::ConsoleError;
use super::store::Store;
use super::Console;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// console.db inside the archive.
const STORE_LINES: &str = "console.db.jsonl";
/// Written by `serve` in the workspace: where it answers and the key of its control route, so
/// that `msgbatch workspace backup` asks it for a consistent copy.
pub const SERVE_FILE: &str = "serve.json";
/// The header `POST /internal/backup` is authenticated with.
pub const CONTROL_HEADER: &str = "x-msgbatch-control";
/// Files of the workspace a backup leaves out: the live store (copied through sled), what `serve`
/// writes about itself, the uploads in progress.
const LEFT_OUT: [&str; 3] = ["console.db", SERVE_FILE, "uploads"];
/// Trees of console.db a backup leaves out: what would let the file's holder in without a
/// password.
const LEFT_OUT_TREES: [&str; 2] = ["sessions", "links"];
/// How long a backup waits for a sending run's requests in flight to end.
const SETTLE_WITHIN: Duration = Duration::from_secs(120);

/// `serve.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Serving {
    pub base_url: String,
    pub pid: u32,
    /// 256 random bits; the file is readable by its owner only.
    pub control_key: String,
}

/// One line of `console.db.jsonl`.
#[derive(Serialize, Deserialize)]
struct Line {
    tree: String,
    key: String,
    value: String,
}

/// What a backup holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Made {
    pub files: u64,
    pub bytes: u64,
    pub records: u64,
    /// Runs paused for the copy (and resumed after it, unless held).
    pub paused_runs: Vec<String>,
    #[serde(default)]
    pub held: bool,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Writes the archive of `store` and the workspace at `root` to `out` (through `out.partial`,
/// renamed when whole).
pub fn write(store: &Store, root: &Path, out: &Path) -> Result<Made, ConsoleError> {
    let partial = out.with_extension("partial");
    let file = crate::files::create_private(&partial).map_err(ConsoleError::from_io)?;
    let mut zip = zip::ZipWriter::new(std::io::BufWriter::new(file));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    let mut made = Made::default();
    zip.start_file(STORE_LINES, options).map_err(ConsoleError::internal)?;
    for (tree, key, value) in store.raw_entries()? {
        // Live sessions and sign-in links stay behind: whoever holds the file signs in again.
        if LEFT_OUT_TREES.contains(&tree.as_str()) {
            continue;
        }
        let line = Line {
            tree,
            key: b64(&key),
            value: b64(&value),
        };
        serde_json::to_writer(&mut zip, &line).map_err(ConsoleError::internal)?;
        zip.write_all(b"\n").map_err(ConsoleError::from_io)?;
        made.records += 1;
    }
    let out_canonical = out.canonicalize().ok();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(ConsoleError::from_io)? {
            let entry = entry.map_err(ConsoleError::from_io)?;
            let path = entry.path();
            let relative = path.strip_prefix(root).map_err(ConsoleError::internal)?;
            let top = relative
                .components()
                .next()
                .map(|part| part.as_os_str().to_string_lossy().into_owned());
            if dir == root && top.as_deref().is_some_and(|top| LEFT_OUT.contains(&top)) {
                continue;
            }
            if path == partial || Some(&path) == out_canonical.as_ref() {
                continue;
            }
            let kind = entry.file_type().map_err(ConsoleError::from_io)?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let name = relative.to_string_lossy().replace('\\', "/");
                zip.start_file(name, options).map_err(ConsoleError::internal)?;
                let mut source = std::fs::File::open(&path).map_err(ConsoleError::from_io)?;
                made.bytes += std::io::copy(&mut source, &mut zip).map_err(ConsoleError::from_io)?;
                made.files += 1;
            }
        }
    }
    let mut inner = zip.finish().map_err(ConsoleError::internal)?;
    inner.flush().map_err(ConsoleError::from_io)?;
    inner
        .into_inner()
        .map_err(|error| ConsoleError::from_io(error.into_error()))?
        .sync_all()
        .map_err(ConsoleError::from_io)?;
    std::fs::rename(&partial, out).map_err(ConsoleError::from_io)?;
    Ok(made)
}

/// A backup taken by the serving console: campaign changes held, each sending run paused until
/// its requests in flight have ended, the archive written, the runs resumed.
/// With `hold`, the paused runs stay paused (to move the workspace: nothing is sent between the
/// copy and its restore elsewhere).
pub async fn while_serving(console: &Console, out: PathBuf, hold: bool) -> Result<Made, ConsoleError> {
    let _transitions = console.transitions.lock().await;
    let mut paused = Vec::new();
    for (id, control) in console.jobs.runs() {
        if !control.is_paused() {
            control.pause();
            paused.push((id, control));
        }
    }
    let settled = settle(console, &paused).await;
    let made = match settled {
        Ok(()) => {
            let (store, root) = (console.store.clone(), console.workspace.root.clone());
            tokio::task::spawn_blocking(move || write(&store, &root, &out))
                .await
                .map_err(ConsoleError::internal)
                .and_then(|made| made)
        }
        Err(error) => Err(error),
    };
    if !hold || made.is_err() {
        for (_, control) in &paused {
            control.resume();
        }
    }
    let mut made = made?;
    made.held = hold && !paused.is_empty();
    made.paused_runs = paused.into_iter().map(|(id, _)| id).collect();
    Ok(made)
}

/// Until each paused run has said it is paused (the engine says so where no chunk can pass any
/// more: a chunk being marked then is counted first) with no request in flight, or has ended.
async fn settle(console: &Console, paused: &[(String, crate::engine::Control)]) -> Result<(), ConsoleError> {
    let deadline = tokio::time::Instant::now() + SETTLE_WITHIN;
    loop {
        let unsettled: Vec<u64> = paused
            .iter()
            .filter_map(|(id, _)| super::runner::active(console, id))
            .map(|run| (run.board.phase(), run.board.status().sending))
            .filter(|(phase, in_flight)| *phase != "finished" && (*phase != "paused" || *in_flight > 0))
            .map(|(_, in_flight)| in_flight)
            .collect();
        if unsettled.is_empty() {
            return Ok(());
        }
        let in_flight: u64 = unsettled.iter().sum();
        if tokio::time::Instant::now() >= deadline {
            return Err(ConsoleError::Busy(format!(
                "{in_flight} requests of the sending runs did not end within {} s: try the backup again",
                SETTLE_WITHIN.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Restores an archive into `to`, which must not exist or be empty; answers how many files and
/// records it holds. A run that was sending when the backup was taken is `interrupted` at the
/// next `serve` (its checkpoint says what was sent up to the backup, and an approver resumes it).
pub fn restore(archive: &Path, to: &Path) -> anyhow::Result<Made> {
    use anyhow::{bail, Context};
    if to.exists() && std::fs::read_dir(to)?.next().is_some() {
        bail!(crate::engine::Refusal(format!(
            "{} is not empty: restore into a new folder",
            to.display()
        )));
    }
    crate::files::create_private_dir(to)?;
    let file = std::fs::File::open(archive).with_context(|| format!("cannot open {}", archive.display()))?;
    let mut zip =
        zip::ZipArchive::new(file).with_context(|| format!("{} is not a msgbatch backup", archive.display()))?;
    let mut made = Made::default();
    let store = Store::open(&to.join("console.db")).map_err(|error| anyhow::anyhow!("{error:#}"))?;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index)?;
        let Some(relative) = entry.enclosed_name() else {
            bail!(crate::engine::Refusal(format!(
                "{}: the entry {:?} leads outside the folder",
                archive.display(),
                entry.name()
            )));
        };
        if relative == Path::new(STORE_LINES) {
            for line in std::io::BufReader::new(&mut entry).lines() {
                let line: Line = serde_json::from_str(&line?).context("console.db.jsonl")?;
                let decode = |text: &str| base64::engine::general_purpose::STANDARD.decode(text);
                store
                    .put_raw(&line.tree, &decode(&line.key)?, &decode(&line.value)?)
                    .map_err(|error| anyhow::anyhow!("{error:#}"))?;
                made.records += 1;
            }
            continue;
        }
        let path = to.join(&relative);
        if let Some(parent) = path.parent() {
            crate::files::create_private_dir(parent)?;
        }
        let mut target = crate::files::create_private(&path)?;
        made.bytes += std::io::copy(&mut entry, &mut target)?;
        target.sync_all()?;
        made.files += 1;
    }
    store.flush().map_err(|error| anyhow::anyhow!("{error:#}"))?;
    if made.records == 0 {
        bail!(crate::engine::Refusal(format!(
            "{} holds no console.db: not a msgbatch workspace backup",
            archive.display()
        )));
    }
    Ok(made)
}

/// Written at `serve`'s start: where it answers, and a new control key.
pub fn write_serving(root: &Path, base_url: &str) -> std::io::Result<Serving> {
    let serving = Serving {
        base_url: base_url.to_string(),
        pid: std::process::id(),
        control_key: super::auth::random_token(),
    };
    let mut file = crate::files::create_private(&root.join(SERVE_FILE))?;
    file.write_all(&serde_json::to_vec(&serving)?)?;
    Ok(serving)
}

#[derive(Deserialize)]
pub struct BackupRequest {
    pub out: PathBuf,
    #[serde(default)]
    pub hold: bool,
}

/// `POST /internal/backup`: only with the key `serve.json` holds (readable by the workspace's
/// owner alone), never a session or a token.
pub async fn route(
    axum::extract::State(console): axum::extract::State<super::Shared>,
    headers: axum::http::HeaderMap,
    axum::Json(request): axum::Json<BackupRequest>,
) -> Result<axum::Json<Made>, ConsoleError> {
    let given = headers
        .get(CONTROL_HEADER)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let expected = console.control_key.as_str();
    if expected.is_empty() || !super::auth::same_token(given, expected) {
        return Err(ConsoleError::NotFound);
    }
    let made = while_serving(&console, request.out.clone(), request.hold).await?;
    console.store.audit(
        "console",
        "backup",
        None,
        &format!(
            "{} ({} files, {} records)",
            request.out.display(),
            made.files,
            made.records
        ),
    )?;
    Ok(axum::Json(made))
}
