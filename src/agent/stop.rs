//! Stopping a running task from outside, promptly, even while it waits on the LLM or the page.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// A flag the side panel sets to stop a task; clones share it.
#[derive(Clone, Default)]
pub struct StopSignal(Rc<StopInner>);

#[derive(Default)]
struct StopInner {
    stopped: Cell<bool>,
    waiters: RefCell<Vec<Waker>>,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self) {
        self.0.stopped.set(true);
        for waker in self.0.waiters.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.0.stopped.get()
    }

    /// Runs `work` until it finishes (`Some`) or the task is stopped (`None`, and `work` is
    /// dropped, which cancels an in-flight fetch).
    pub async fn unless_stopped<F: Future>(&self, work: F) -> Option<F::Output> {
        let mut work = pin!(work);
        std::future::poll_fn(|cx| {
            if self.is_stopped() {
                return Poll::Ready(None);
            }
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            {
                let mut waiters = self.0.waiters.borrow_mut();
                if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
                    waiters.push(cx.waker().clone());
                }
            }
            // The work itself may have stopped the task while it was polled.
            if self.is_stopped() {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    #[test]
    fn work_that_never_ends_is_abandoned_when_stopped() {
        let stop = StopSignal::new();
        let stopper = stop.clone();
        let result = block_on(async {
            let never = std::future::pending::<u32>();
            let trigger = async {
                stopper.stop();
            };
            let (r, ()) = futures::join!(stop.unless_stopped(never), trigger);
            r
        });
        assert_eq!(result, None);
    }

    #[test]
    fn finished_work_is_returned() {
        let stop = StopSignal::new();
        assert_eq!(block_on(stop.unless_stopped(async { 7 })), Some(7));
    }
}
