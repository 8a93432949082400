//! The console's jobs: at most one a campaign — its run or the collection of its results — each in a tracked task, so that a campaign never has two, and a shutdown stops them all and waits for exactly those.
//!
//! A job's own state (a run's live board, a collection's progress) belongs to the module that
//! drives it (`runner.rs`, `collecting.rs`), which reads it back through [`Jobs::get`]: this
//! registry knows only each job's kind and its control handle.

use super::error::ConsoleError;
use super::Shared;
use crate::engine::Control;
use parking_lot::Mutex;
use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use tokio_util::task::TaskTracker;

/// What this process does for a campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Run,
    Collection,
}

struct Entry {
    kind: Kind,
    control: Control,
    state: Arc<dyn Any + Send + Sync>,
}

/// The jobs of this process, by campaign id, and their tasks.
#[derive(Default)]
pub struct Jobs {
    active: Mutex<HashMap<String, Entry>>,
    tasks: TaskTracker,
}

impl Jobs {
    /// The state of the campaign's job of `kind`, while it goes on.
    pub fn get<T: Any + Send + Sync>(&self, id: &str, kind: Kind) -> Option<Arc<T>> {
        let active = self.active.lock();
        let entry = active.get(id).filter(|entry| entry.kind == kind)?;
        entry.state.clone().downcast::<T>().ok()
    }

    /// Every run going on, with its control.
    pub fn runs(&self) -> Vec<(String, Control)> {
        self.active
            .lock()
            .iter()
            .filter(|(_, entry)| entry.kind == Kind::Run)
            .map(|(id, entry)| (id.clone(), entry.control.clone()))
            .collect()
    }

    /// Asks every job to stop (a run ends its requests in flight, a collection keeps what it
    /// read); answers how many there were.
    pub fn stop_all(&self) -> usize {
        let active = self.active.lock();
        for entry in active.values() {
            entry.control.stop();
        }
        active.len()
    }

    /// Waits until every job's task has ended (at shutdown: no new job is awaited after this).
    pub async fn wait(&self) {
        self.tasks.close();
        self.tasks.wait().await;
    }
}

/// Starts `task` as the campaign's job of `kind`, stopped through `control`, its state `state`;
/// refused, naming what goes on, when the campaign has a job. The job is let go when its task ends.
pub fn spawn(
    console: &Shared,
    id: &str,
    kind: Kind,
    control: Control,
    state: Arc<dyn Any + Send + Sync>,
    task: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ConsoleError> {
    {
        let mut active = console.jobs.active.lock();
        match active.get(id).map(|entry| entry.kind) {
            Some(Kind::Run) => return Err(ConsoleError::conflict(crate::word!(refuse_sending), vec![])),
            Some(Kind::Collection) => return Err(ConsoleError::conflict(crate::word!(refuse_collecting), vec![])),
            None => {
                active.insert(id.to_string(), Entry { kind, control, state });
            }
        }
    }
    let tracker = console.jobs.tasks.clone();
    let (console, id) = (console.clone(), id.to_string());
    tracker.spawn(async move {
        task.await;
        console.jobs.active.lock().remove(&id);
    });
    Ok(())
}
