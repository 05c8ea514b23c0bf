//! Stopping and pausing a running task from outside. Stop is prompt, even while the task waits
//! on the LLM or the page; pause takes effect at the next step or action boundary, so nothing
//! is cut in half, and lasts until resume or stop.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// The flags the side panel sets to stop or pause a task; clones share them.
#[derive(Clone, Default)]
pub struct StopSignal(Rc<StopInner>);

#[derive(Default)]
struct StopInner {
    stopped: Cell<bool>,
    paused: Cell<bool>,
    waiters: RefCell<Vec<Waker>>,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self) {
        self.0.stopped.set(true);
        self.wake_all();
    }

    pub fn is_stopped(&self) -> bool {
        self.0.stopped.get()
    }

    pub fn pause(&self) {
        self.0.paused.set(true);
    }

    pub fn resume(&self) {
        self.0.paused.set(false);
        self.wake_all();
    }

    pub fn is_paused(&self) -> bool {
        self.0.paused.get()
    }

    fn wake_all(&self) {
        for waker in self.0.waiters.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    /// Waits while the task is paused; returns false if it was stopped meanwhile.
    pub async fn wait_while_paused(&self) -> bool {
        std::future::poll_fn(|cx| {
            if self.is_stopped() {
                return Poll::Ready(false);
            }
            if !self.is_paused() {
                return Poll::Ready(true);
            }
            let mut waiters = self.0.waiters.borrow_mut();
            if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
                waiters.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
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
    fn a_paused_task_waits_until_resumed_or_stopped() {
        let control = StopSignal::new();
        control.pause();
        let resumer = control.clone();
        let resumed = block_on(async {
            let (went_on, ()) = futures::join!(control.wait_while_paused(), async { resumer.resume() });
            went_on
        });
        assert!(resumed);
        control.pause();
        let stopper = control.clone();
        let (went_on, ()) = block_on(async { futures::join!(control.wait_while_paused(), async { stopper.stop() }) });
        assert!(!went_on, "stopped while paused");
    }

    #[test]
    fn finished_work_is_returned() {
        let stop = StopSignal::new();
        assert_eq!(block_on(stop.unless_stopped(async { 7 })), Some(7));
    }
}
