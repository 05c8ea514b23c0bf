//! A task driven by a client that brings its own model: a coding agent over MCP
//! (`crate::bridge`) looks at pages and chooses each action itself.
//!
//! It is a task like any other, so that everything the person relies on holds for it too: it
//! runs in a tab group of its own, shows live in the side panel, stops and pauses there, and
//! each act passes the same checks a model's act passes: the page's action union, the
//! firewall, secrets filled in only on their sites, and the person's guard (a page outside the
//! task's sites, an act that cannot be undone, another site's text typed in) waits for the
//! person's yes. Only the answers come from elsewhere: where [`Agent::run`] asks its model,
//! [`Agent::drive`] waits for the client's next [`Ask`].
//!
//! `observe` is the first half of a step (`Agent::look`: the page, the firewall, the guard's
//! scope and ledger) and answers the page as the model would read it; `act` is the second half
//! (`Agent::act_on`), one action, recorded as a step. An index is one the last `observe` gave:
//! an act that names an element after the page changed (an action that may have changed it, or
//! new elements appeared) is refused as stale, and nothing reaches the page.

use super::*;
use crate::browser::PageMarkdown;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// What the client asks of its task.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// The page as the model reads it, in tab `tab` (taken in) or the current one.
    Observe {
        tab: Option<i32>,
    },
    /// One action of the page's union, `{"name": {params}}`.
    Act {
        action: serde_json::Value,
    },
    Screenshot {
        tab: Option<i32>,
    },
    Extract {
        tab: Option<i32>,
    },
}

/// The task's answer to an [`Ask`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Observed {
        tab_id: i32,
        url: String,
        title: String,
        state: String,
        actions: Vec<String>,
    },
    Acted {
        description: String,
        result: String,
        is_error: bool,
        look_again: bool,
    },
    Screenshot {
        tab_id: i32,
        shot: crate::browser::Screenshot,
    },
    Extracted {
        tab_id: i32,
        page: PageMarkdown,
    },
    /// Not done; `stale` when an index no longer fits the page (observe again).
    Refused {
        stale: bool,
        message: String,
    },
}

impl Answer {
    fn refused(message: impl Into<String>) -> Self {
        Answer::Refused { stale: false, message: message.into() }
    }

    fn stale(message: impl Into<String>) -> Self {
        Answer::Refused { stale: true, message: message.into() }
    }
}

/// The asks waiting for a driven task, first first, each with where its answer goes. Shared by
/// the worker, which posts them, and the task, which takes them in turn.
#[derive(Clone, Default)]
pub struct Asks(Rc<RefCell<AsksInner>>);

#[derive(Default)]
struct AsksInner {
    waiting: VecDeque<(Ask, Answering)>,
    /// The task, waiting for an ask.
    waker: Option<Waker>,
    /// No more asks will come (the client is gone).
    closed: bool,
}

/// Where one answer goes. Dropped unanswered (the task ended), the ask comes to `None`.
pub struct Answering(Rc<RefCell<AnswerSlot>>);

#[derive(Default)]
struct AnswerSlot {
    answer: Option<Answer>,
    waker: Option<Waker>,
    dropped: bool,
}

impl Answering {
    /// Hands the answer to whoever asked.
    pub fn give(self, answer: Answer) {
        let mut slot = self.0.borrow_mut();
        slot.answer = Some(answer);
        if let Some(waker) = slot.waker.take() {
            waker.wake();
        }
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        let mut slot = self.0.borrow_mut();
        slot.dropped = true;
        if let Some(waker) = slot.waker.take() {
            waker.wake();
        }
    }
}

impl Asks {
    /// Posts `ask`; comes to the task's answer, or `None` when the task ended without one.
    pub fn post(&self, ask: Ask) -> impl std::future::Future<Output = Option<Answer>> {
        let slot = Rc::new(RefCell::new(AnswerSlot::default()));
        {
            let mut inner = self.0.borrow_mut();
            if inner.closed {
                slot.borrow_mut().dropped = true;
            } else {
                inner.waiting.push_back((ask, Answering(slot.clone())));
                if let Some(waker) = inner.waker.take() {
                    waker.wake();
                }
            }
        }
        std::future::poll_fn(move |cx| {
            let mut slot = slot.borrow_mut();
            if let Some(answer) = slot.answer.take() {
                return Poll::Ready(Some(answer));
            }
            if slot.dropped {
                return Poll::Ready(None);
            }
            slot.waker = Some(cx.waker().clone());
            Poll::Pending
        })
    }

    /// No more asks: the task ends once it has answered those waiting.
    pub fn close(&self) {
        let mut inner = self.0.borrow_mut();
        inner.closed = true;
        if let Some(waker) = inner.waker.take() {
            waker.wake();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.0.borrow().closed
    }

    /// The next ask, or `None` once closed and none waits.
    async fn next(&self) -> Option<(Ask, Answering)> {
        std::future::poll_fn(|cx| {
            let mut inner = self.0.borrow_mut();
            if let Some(next) = inner.waiting.pop_front() {
                return Poll::Ready(Some(next));
            }
            if inner.closed {
                return Poll::Ready(None);
            }
            inner.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

/// The page the last `observe` showed, and what may be done on it.
struct Seen {
    page: PageState,
    union: ActionUnion,
    listing: String,
    /// No action since may have changed the page.
    fresh: bool,
    /// An action ran on it since it was observed.
    acted: bool,
}

impl<B: Browser, T: LlmTransport, E: EventSink, C: Clock> Agent<B, T, E, C> {
    /// Runs the task on the asks of `client` (the name the person knows it by) until the
    /// client is gone, the person stops it, or an act ends it (`done`); returns its history.
    pub async fn drive(mut self, asks: Asks, client: &str) -> TaskHistory {
        // What reads a page with the agent's model is the client's to do (`extract` answers
        // the page's markdown): a client's task never calls a model of Tabwright's.
        self.registry.retain(|a| a.name != "extract");
        self.announce();
        let end = self.answer_asks(&asks, client).await;
        asks.close();
        // Asks still waiting come to nothing (their answers are dropped).
        asks.0.borrow_mut().waiting.clear();
        self.finish(end).await
    }

    async fn answer_asks(&mut self, asks: &Asks, client: &str) -> TaskEnd {
        let mut seen: Option<Seen> = None;
        let mut n = self.next_step();
        loop {
            let next = match self.stop.unless_stopped(asks.next()).await {
                None => return TaskEnd::Stopped,
                Some(None) => {
                    let text = format!("{client} disconnected after {} action(s).", self.history.len());
                    return TaskEnd::Done { text, success: true, data: None };
                }
                Some(Some(next)) => next,
            };
            let (ask, answering) = next;
            // A paused task answers once the person lets it go on.
            if !self.pause_point(n).await {
                answering.give(Answer::refused("The person stopped this in Tabwright's side panel."));
                return TaskEnd::Stopped;
            }
            match ask {
                Ask::Observe { tab } => {
                    if let Some(tab) = tab.filter(|t| *t != self.browser.current_tab_id()) {
                        if let Err(e) = self.browser.take_tab(tab).await {
                            answering.give(Answer::refused(e.to_string()));
                            continue;
                        }
                    }
                    let mut record = StepRecord { step: n, ..StepRecord::default() };
                    match self.look(n, &mut record).await {
                        Ok(page) => {
                            let union = ActionUnion::for_page(&self.registry, &page, &self.options, false);
                            let listing = page_listing(&page);
                            answering.give(Answer::Observed {
                                tab_id: page.tab_id,
                                url: page.url().to_string(),
                                title: page.snapshot.title.clone(),
                                state: crate::prompt::browser_state(&page, &listing),
                                actions: union.names().into_iter().map(str::to_string).collect(),
                            });
                            seen = Some(Seen { page, union, listing, fresh: true, acted: false });
                        }
                        Err(Looked::Stopped) | Err(Looked::Ends(StepEnd::End(TaskEnd::Stopped))) => {
                            answering.give(Answer::refused("The person stopped this in Tabwright's side panel."));
                            return TaskEnd::Stopped;
                        }
                        // A page Chrome keeps from extensions: the client may go elsewhere.
                        Err(Looked::Ends(_)) => {
                            let why = record.error.unwrap_or_else(|| "The page could not be read.".into());
                            answering.give(Answer::refused(why));
                            seen = None;
                        }
                    }
                }
                Ask::Act { action } => {
                    let (answer, end) = self.act_for_client(&mut seen, action, n, client).await;
                    answering.give(answer);
                    if let Some(end) = end {
                        return end;
                    }
                    if self.history.last().is_some_and(|r| r.step == n) {
                        n += 1;
                    }
                }
                Ask::Screenshot { tab } => {
                    let answer = match self.with_tab(tab).await {
                        Err(refused) => refused,
                        Ok(tab_id) => match within(&self.clock, Some(SCREENSHOT_MS), self.browser.screenshot()).await {
                            Some(Ok(shot)) => Answer::Screenshot { tab_id, shot },
                            Some(Err(e)) => Answer::refused(e.to_string()),
                            None => Answer::refused("Taking the screenshot took too long; try again."),
                        },
                    };
                    if tab.is_some() {
                        seen = None;
                    }
                    answering.give(answer);
                }
                Ask::Extract { tab } => {
                    let answer = match self.with_tab(tab).await {
                        Err(refused) => refused,
                        Ok(tab_id) => match self.browser.page_markdown().await {
                            Ok(page) => {
                                // What the page showed is its site's, for the guard's ledger.
                                if let Some(guard) = self.guard.as_mut() {
                                    guard.note_read(&page.url, &page.markdown);
                                }
                                Answer::Extracted { tab_id, page }
                            }
                            Err(e) => Answer::refused(e.to_string()),
                        },
                    };
                    if tab.is_some() {
                        seen = None;
                    }
                    answering.give(answer);
                }
            }
        }
    }

    /// Makes `tab` current (taken in), when named; the current tab's id.
    async fn with_tab(&mut self, tab: Option<i32>) -> Result<i32, Answer> {
        match tab.filter(|t| *t != self.browser.current_tab_id()) {
            Some(tab) => self.browser.take_tab(tab).await.map(|t| t.id).map_err(|e| Answer::refused(e.to_string())),
            None => Ok(self.browser.current_tab_id()),
        }
    }

    /// One action on the page the last `observe` showed, as step `n`: checked against that
    /// page's union and indices, then done as a model's action is (`act_on`). Also how the
    /// task ends, when the action ends it.
    async fn act_for_client(
        &mut self,
        seen: &mut Option<Seen>,
        action: serde_json::Value,
        n: u32,
        client: &str,
    ) -> (Answer, Option<TaskEnd>) {
        let Some(looked) = seen.as_mut() else {
            return (Answer::stale("Call observe first: act works on the page the last observe showed."), None);
        };
        let action = match looked.union.validate(std::slice::from_ref(&action)) {
            Ok(mut actions) => actions.remove(0),
            Err(e) => return (Answer::refused(e.to_string().replacen("Action 1", "The action", 1)), None),
        };
        // An index is the last observe's, on the page as it still is.
        if let Some(index) = action.element_index() {
            if !looked.fresh {
                return (
                    Answer::stale(
                        "The page may have changed since the last observe (the last action may have changed it): \
                         call observe again and use its indices.",
                    ),
                    None,
                );
            }
            if looked.page.snapshot.element(index).is_none() {
                return (
                    Answer::stale(format!(
                        "Index {index} is not on the page the last observe showed: call observe again and use its indices."
                    )),
                    None,
                );
            }
            if looked.acted && self.browser.new_elements_appeared().await {
                looked.fresh = false;
                return (
                    Answer::stale("New elements appeared on the page since the last observe: call observe again."),
                    None,
                );
            }
        }
        self.events.emit(AgentEvent::StepStarted { v: V, step: n, max_steps: self.limits.max_steps });
        let record = StepRecord {
            step: n,
            tab_id: looked.page.tab_id,
            url: looked.page.url().to_string(),
            title: looked.page.snapshot.title.clone(),
            ..StepRecord::default()
        };
        // What may change the page is known before it runs (the registry's own word).
        let terminates = action.spec().terminates_sequence;
        let output = AgentOutput {
            thoughts: ModelThoughts { next_goal: format!("{client} asked for this."), ..ModelThoughts::default() },
            actions: vec![action],
        };
        let (record, end) = self.act_on(n, output, &looked.page, &looked.union, &looked.listing, record).await;
        looked.acted = true;
        let Some(record) = record else {
            return (Answer::refused("The person stopped this in Tabwright's side panel."), Some(TaskEnd::Stopped));
        };
        let record = self.redacted(record);
        let answer = match record.actions.last() {
            Some(done) => {
                let look_again = terminates || done.result.navigated_to.is_some();
                if look_again {
                    looked.fresh = false;
                }
                let mut result = done.result.message.clone();
                if let Some(detail) = &done.result.detail {
                    result.push_str(&format!("\n<page_content>\n{detail}\n</page_content>"));
                }
                Answer::Acted {
                    description: done.description.clone(),
                    result,
                    is_error: done.result.is_error,
                    look_again,
                }
            }
            None => Answer::refused(record.error.clone().unwrap_or_else(|| "Nothing was done.".into())),
        };
        record.update_plan(&mut self.plan);
        self.history.push(record.clone());
        crate::record::trim_behind(&mut self.history);
        self.events.emit(AgentEvent::StepFinished { v: V, record: Box::new(record) });
        let end = match end {
            StepEnd::End(end) => Some(end),
            StepEnd::Continue => None,
        };
        (answer, end)
    }
}
