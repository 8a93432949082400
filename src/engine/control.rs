//! Live control of a run: the handle (pause, resume, stop, adjust) and the run directory's `control.json`, through which another process (`msgbatch pause RUN`) reaches a running one.
//!
//! The running process writes `control.json` afresh when it takes the run directory, under an
//! owner id of its own, and reads it a few times a second. A controller changes the wanted
//! state and raises `seq`; the running process applies it and says so in `status.json`
//! (`control.owner`, `control.seq`). A file left by a process that died is replaced by the next
//! one, so a pause never outlives its run.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The file in a run directory that carries control commands to the process running it.
pub const CONTROL_FILE: &str = "control.json";
/// How often the running process looks at its control file: a command is in effect within a second.
pub const CONTROL_EVERY: Duration = Duration::from_millis(200);

/// What the run is asked to do. `rate` and `concurrency` are overrides of the campaign's
/// settings (`None`: the campaign's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Controls {
    pub paused: bool,
    pub stopped: bool,
    pub rate: Option<f64>,
    pub concurrency: Option<usize>,
}

/// The control handle of a run: clone it, hand it to whoever may pause, resume, stop or adjust.
#[derive(Clone)]
pub struct Control {
    wanted: Arc<watch::Sender<Controls>>,
}

impl Default for Control {
    fn default() -> Control {
        Control::new()
    }
}

impl Control {
    pub fn new() -> Control {
        Control {
            wanted: Arc::new(watch::Sender::new(Controls::default())),
        }
    }

    /// No new chunk; requests in flight end.
    pub fn pause(&self) {
        self.wanted
            .send_if_modified(|wanted| !std::mem::replace(&mut wanted.paused, true));
    }

    pub fn is_paused(&self) -> bool {
        self.wanted.borrow().paused
    }

    pub fn resume(&self) {
        self.wanted
            .send_if_modified(|wanted| std::mem::replace(&mut wanted.paused, false));
    }

    /// As Ctrl-C: no new chunk; requests in flight end; the run ends resumable.
    pub fn stop(&self) {
        self.wanted
            .send_if_modified(|wanted| !std::mem::replace(&mut wanted.stopped, true));
    }

    /// A new rate (messages per second) or concurrency, in effect within a second.
    pub fn adjust(&self, rate: Option<f64>, concurrency: Option<usize>) {
        self.wanted.send_if_modified(|wanted| {
            let before = wanted.clone();
            wanted.rate = rate.or(wanted.rate);
            wanted.concurrency = concurrency.or(wanted.concurrency);
            *wanted != before
        });
    }

    /// Everything at once, as read from a control file.
    fn apply(&self, controls: &Controls) {
        if controls.stopped {
            self.stop();
        }
        if controls.paused {
            self.pause();
        } else {
            self.resume();
        }
        self.adjust(controls.rate, controls.concurrency);
    }

    pub fn current(&self) -> Controls {
        self.wanted.borrow().clone()
    }

    pub fn is_stopped(&self) -> bool {
        self.wanted.borrow().stopped
    }

    pub(super) fn watch(&self) -> watch::Receiver<Controls> {
        self.wanted.subscribe()
    }
}

/// Completes once a stop was asked.
pub(super) async fn until_stopped(controls: &mut watch::Receiver<Controls>) {
    let _ = controls.wait_for(|controls| controls.stopped).await;
}

/// `control.json`: the wanted state and the number of the last command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlFile {
    /// The running process that reads it (a fresh id per process).
    pub owner: String,
    /// Raised by each command.
    pub seq: u64,
    #[serde(flatten)]
    pub controls: Controls,
}

impl ControlFile {
    pub fn read(run_dir: &Path) -> std::io::Result<Option<ControlFile>> {
        match std::fs::read(run_dir.join(CONTROL_FILE)) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(std::io::Error::other),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Replaces the file whole (written aside, then renamed), so a reader never sees half of it.
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        let aside = run_dir.join(format!("{CONTROL_FILE}.{}.partial", std::process::id()));
        let body = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        std::io::Write::write_all(&mut crate::files::create_private(&aside)?, &body)?;
        std::fs::rename(&aside, run_dir.join(CONTROL_FILE))
    }
}

/// The running side of `control.json`: written afresh for this process, then looked at every
/// [`CONTROL_EVERY`] by the dispatcher; each new command is applied to the control handle.
pub(super) struct ControlWatch {
    run_dir: PathBuf,
    owner: String,
    seen: u64,
}

impl ControlWatch {
    /// Takes the control file for this process, with the state `control` holds now.
    pub fn take(run_dir: &Path, control: &Control) -> std::io::Result<ControlWatch> {
        let owner = uuid::Uuid::new_v4().to_string();
        ControlFile {
            owner: owner.clone(),
            seq: 0,
            controls: control.current(),
        }
        .write(run_dir)?;
        Ok(ControlWatch {
            run_dir: run_dir.to_path_buf(),
            owner,
            seen: 0,
        })
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Applies a command written since the last look; answers its `seq` when there was one.
    pub fn look(&mut self, control: &Control) -> Option<u64> {
        let file = ControlFile::read(&self.run_dir).ok()??;
        if file.owner != self.owner || file.seq <= self.seen {
            return None;
        }
        self.seen = file.seq;
        control.apply(&file.controls);
        Some(file.seq)
    }
}

/// The controlling side: changes the wanted state of the process that owns `control.json` and
/// answers the command's `seq` and owner, for [`super::status::look`] to confirm.
pub fn send_command(run_dir: &Path, change: impl FnOnce(&mut Controls)) -> std::io::Result<ControlFile> {
    let mut file = ControlFile::read(run_dir)?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{} has no {CONTROL_FILE}", run_dir.display()),
        )
    })?;
    change(&mut file.controls);
    file.seq += 1;
    file.write(run_dir)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_written_by_another_process_is_applied_once_and_only_for_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let control = Control::new();
        let mut watch = ControlWatch::take(dir.path(), &control).unwrap();
        assert_eq!(watch.look(&control), None, "a fresh file holds no command");

        let sent = send_command(dir.path(), |wanted| {
            wanted.paused = true;
            wanted.rate = Some(5.0);
        })
        .unwrap();
        assert_eq!(sent.seq, 1);
        assert_eq!(watch.look(&control), Some(1));
        assert_eq!(
            control.current(),
            Controls {
                paused: true,
                stopped: false,
                rate: Some(5.0),
                concurrency: None
            }
        );
        assert_eq!(watch.look(&control), None, "the same command is not applied twice");

        // The next process takes the file over: the old pause does not outlive its run.
        let next = Control::new();
        let _next_watch = ControlWatch::take(dir.path(), &next).unwrap();
        assert_eq!(watch.look(&control), None, "a file of another owner is not read");
        assert_eq!(
            ControlFile::read(dir.path()).unwrap().unwrap().controls,
            Controls::default()
        );
    }

    #[test]
    fn adjust_changes_only_what_it_is_given_and_stop_stays() {
        let control = Control::new();
        control.adjust(Some(10.0), None);
        control.adjust(None, Some(3));
        control.stop();
        control.resume();
        let now = control.current();
        assert_eq!((now.rate, now.concurrency, now.stopped), (Some(10.0), Some(3), true));
    }
}
