//! The console's jobs: at most one a campaign — its run or the collection of its results — each in a tracked task, so that a campaign never has two, and a shutdown stops them all and waits for exactly those.

use super::collecting::Collection;
use super::error::ConsoleError;
use super::runner::ActiveRun;
use super::Shared;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use tokio_util::task::TaskTracker;

/// What this process does for a campaign.
#[derive(Clone)]
pub enum Job {
    Run(Arc<ActiveRun>),
    Collection(Arc<Collection>),
}

impl Job {
    fn control(&self) -> &crate::engine::Control {
        match self {
            Job::Run(run) => &run.control,
            Job::Collection(collection) => &collection.control,
        }
    }
}

/// The jobs of this process, by campaign id, and their tasks.
#[derive(Default)]
pub struct Jobs {
    active: Mutex<HashMap<String, Job>>,
    tasks: TaskTracker,
}

impl Jobs {
    /// The campaign's run, while this process drives it.
    pub fn run(&self, id: &str) -> Option<Arc<ActiveRun>> {
        match self.active.lock().get(id) {
            Some(Job::Run(run)) => Some(run.clone()),
            _ => None,
        }
    }

    /// The collection of the campaign's results, while it goes on.
    pub fn collection(&self, id: &str) -> Option<Arc<Collection>> {
        match self.active.lock().get(id) {
            Some(Job::Collection(collection)) => Some(collection.clone()),
            _ => None,
        }
    }

    /// Asks every job to stop (a run ends its requests in flight, a collection keeps what it
    /// read); answers how many there were.
    pub fn stop_all(&self) -> usize {
        let active = self.active.lock();
        for job in active.values() {
            job.control().stop();
        }
        active.len()
    }

    /// Waits until every job's task has ended (at shutdown: no new job is awaited after this).
    pub async fn wait(&self) {
        self.tasks.close();
        self.tasks.wait().await;
    }
}

/// Starts `task` as the campaign's job; refused, naming what goes on, when the campaign has one.
/// The job is let go when its task ends.
pub fn spawn(
    console: &Shared,
    id: &str,
    job: Job,
    task: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ConsoleError> {
    {
        let mut active = console.jobs.active.lock();
        match active.get(id) {
            Some(Job::Run(_)) => {
                return Err(ConsoleError::Conflict(
                    "this campaign is sending: wait for its run to end".into(),
                ))
            }
            Some(Job::Collection(_)) => {
                return Err(ConsoleError::Conflict(
                    "its results are being collected: stop the collection first".into(),
                ))
            }
            None => {
                active.insert(id.to_string(), job);
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
