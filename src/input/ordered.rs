//! Work on every core with the results kept in input order: the one pool the parallel readers share (CSV blocks, Parquet row groups).

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

type Answer<R> = std::thread::Result<R>;

/// Takes jobs from `next_job` on the calling thread, a few per worker ahead, runs `work` on each
/// on one worker thread per core, and hands each answer to `deliver` in the order the jobs came,
/// until the jobs end or `deliver` answers false. `next_job` is not asked again once it answered
/// `None`. `state` is what `next_job` and `deliver` both
/// change. A worker's panic goes on in the calling thread, where its caller reports it.
pub fn in_order<S, J: Send, R: Send, E>(
    state: &mut S,
    mut next_job: impl FnMut(&mut S) -> Result<Option<J>, E>,
    work: impl Fn(J) -> R + Sync,
    mut deliver: impl FnMut(&mut S, R) -> Result<bool, E>,
) -> Result<(), E> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ahead = 2 * workers;
    let (jobs, queue) = sync_channel::<(J, SyncSender<Answer<R>>)>(ahead);
    let queue = std::sync::Mutex::new(queue);
    let work = &work;
    std::thread::scope(|scope| {
        // Owned here, so that however this returns the workers' queue closes and they end.
        let jobs = jobs;
        for _ in 0..workers {
            scope.spawn(|| loop {
                let job = queue.lock().map(|queue| queue.recv());
                let Ok(Ok((job, done))) = job else {
                    return;
                };
                let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job)));
                let _ = done.send(answer);
            });
        }
        let mut pending: VecDeque<Receiver<Answer<R>>> = VecDeque::with_capacity(ahead + 1);
        // Once `next_job` said the jobs ended it is not asked again.
        let mut jobs_ended = false;
        loop {
            if !jobs_ended {
                match next_job(state)? {
                    Some(job) => {
                        let (done, answer) = sync_channel::<Answer<R>>(1);
                        if jobs.send((job, done)).is_err() {
                            panic!("the workers stopped");
                        }
                        pending.push_back(answer);
                        if pending.len() <= ahead {
                            continue;
                        }
                    }
                    None => jobs_ended = true,
                }
            }
            let Some(next) = pending.pop_front() else {
                return Ok(());
            };
            let answer = match next.recv() {
                Ok(Ok(answer)) => answer,
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(_) => panic!("a worker ended without an answer"),
            };
            if !deliver(state, answer)? {
                return Ok(());
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_in_the_order_of_the_jobs_whatever_order_they_finish_in() {
        let mut next = 0u32;
        let mut seen = Vec::new();
        let outcome: Result<(), ()> = in_order(
            &mut next,
            |next| {
                *next += 1;
                Ok((*next <= 200).then_some(*next))
            },
            |job| {
                // Early jobs take longest: without the ordering they would come back last.
                for _ in 0..(200 - job) * 2_000 {
                    std::hint::black_box(job);
                }
                job
            },
            |_, answer| {
                seen.push(answer);
                Ok(true)
            },
        );
        assert_eq!(outcome, Ok(()));
        assert_eq!(seen, (1..=200).collect::<Vec<_>>());
    }

    #[test]
    fn delivery_stops_when_asked_and_an_error_ends_the_reading() {
        let mut count = 0u32;
        let mut delivered = 0;
        let stopped: Result<(), &str> = in_order(
            &mut count,
            |c| {
                *c += 1;
                Ok(Some(*c))
            },
            |job| job,
            |_, _| {
                delivered += 1;
                Ok(delivered < 5)
            },
        );
        assert_eq!((stopped, delivered), (Ok(()), 5));
        let mut count = 0u32;
        let failed: Result<(), &str> = in_order(
            &mut count,
            |c| {
                *c += 1;
                if *c == 7 {
                    Err("the file ended badly")
                } else {
                    Ok(Some(*c))
                }
            },
            |job| job,
            |_, _| Ok(true),
        );
        assert_eq!(failed, Err("the file ended badly"));
    }

    #[test]
    fn a_panic_in_a_worker_goes_on_in_the_caller() {
        let mut count = 0u32;
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _: Result<(), ()> = in_order(
                &mut count,
                |c| {
                    *c += 1;
                    Ok((*c < 10).then_some(*c))
                },
                |job| {
                    if job == 3 {
                        panic!("job 3 broke");
                    }
                    job
                },
                |_, _| Ok(true),
            );
        }));
        let panic = caught.expect_err("the panic reached the caller");
        assert_eq!(
            crate::contained::panic_message(panic.as_ref()).as_deref(),
            Some("job 3 broke")
        );
    }

    #[test]
    fn the_jobs_are_not_asked_for_again_once_they_ended() {
        let mut asked_after_the_end = 0u32;
        let mut next = 0u32;
        let outcome: Result<(), ()> = in_order(
            &mut (),
            |_| {
                if next == 30 {
                    asked_after_the_end += 1;
                    return Ok(None);
                }
                next += 1;
                Ok(Some(next))
            },
            |job| job,
            |_, _| Ok(true),
        );
        assert_eq!((outcome, asked_after_the_end), (Ok(()), 1));
    }
}
