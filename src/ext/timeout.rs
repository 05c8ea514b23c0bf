//! Bounding a wait: a page whose main thread is blocked (an `alert`, a busy script) never
//! answers its content script, and that must not hang the task.

use gloo_timers::future::TimeoutFuture;
use std::future::Future;
use std::pin::pin;
use std::task::Poll;

/// Runs `work` for at most `ms` milliseconds; `None` when time ran out first.
pub async fn within<F: Future>(ms: u32, work: F) -> Option<F::Output> {
    let mut work = pin!(work);
    let mut timer = pin!(TimeoutFuture::new(ms));
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
