//! Waiting on several requests at once and taking each answer as it comes: the frames of a
//! page are read together, and a frame inside one that answered is asked at once, whatever its
//! slower siblings are doing.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// Futures run side by side on the worker's one thread; `next` yields their outputs in the
/// order they finish.
pub struct JoinSet<T> {
    done: Rc<RefCell<VecDeque<T>>>,
    running: Rc<Cell<usize>>,
    waker: Rc<RefCell<Option<Waker>>>,
}

impl<T: 'static> JoinSet<T> {
    pub fn new() -> Self {
        JoinSet { done: Rc::default(), running: Rc::default(), waker: Rc::default() }
    }

    /// Starts `work` now.
    pub fn spawn(&self, work: impl Future<Output = T> + 'static) {
        self.running.set(self.running.get() + 1);
        let (done, running, waker) = (self.done.clone(), self.running.clone(), self.waker.clone());
        wasm_bindgen_futures::spawn_local(async move {
            let out = work.await;
            done.borrow_mut().push_back(out);
            running.set(running.get() - 1);
            if let Some(waker) = waker.borrow_mut().take() {
                waker.wake();
            }
        });
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
