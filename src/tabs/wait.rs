//! Bounded waits and waiting on several requests at once. A page whose main thread is blocked
//! (an `alert`, a busy script) never answers its content script, and that must not hang the
//! task; the frames of a page are read together, and a frame inside one that answered is asked
//! at once, whatever its slower siblings are doing.

use crate::agent::Clock;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// Runs `work` for at most `ms` milliseconds of the host's time; `None` when time ran out first.
pub async fn within<F: Future>(clock: &impl Clock, ms: u32, work: F) -> Option<F::Output> {
    let mut work = pin!(work);
    let mut timer = pin!(clock.sleep(ms));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

/// Futures run side by side on the worker's one thread; `next` yields their outputs in the
/// order they finish.
pub struct JoinSet<T> {
    done: Rc<RefCell<VecDeque<T>>>,
    running: Rc<Cell<usize>>,
    waker: Rc<RefCell<Option<Waker>>>,
}

impl<T: 'static> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet { done: Rc::default(), running: Rc::default(), waker: Rc::default() }
    }
}

impl<T: 'static> JoinSet<T> {
    /// Starts `work` now, on the host.
    pub fn spawn(&self, host: &impl super::host::TabHost, work: impl Future<Output = T> + 'static) {
        self.running.set(self.running.get() + 1);
        let (done, running, waker) = (self.done.clone(), self.running.clone(), self.waker.clone());
        host.spawn(Box::pin(async move {
            let out = work.await;
            done.borrow_mut().push_back(out);
            running.set(running.get() - 1);
            if let Some(waker) = waker.borrow_mut().take() {
                waker.wake();
            }
        }));
    }

    /// The next output to finish, or `None` once all have been taken.
    pub async fn next(&self) -> Option<T> {
        std::future::poll_fn(|cx| {
            if let Some(out) = self.done.borrow_mut().pop_front() {
                return Poll::Ready(Some(out));
            }
            if self.running.get() == 0 {
                return Poll::Ready(None);
            }
            *self.waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}
