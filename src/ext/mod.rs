//! The one place that knows Chrome (compiled for wasm32 only).
//!
//! - [`chrome`]: bindings to the chrome.* APIs the core uses; every one can throw, so every one
//!   is imported with `catch` and wrapped to return a `Result`.
//! - [`browser`]: `ChromeBrowser`, the `Browser` port over tabs, scripting and content scripts.
//! - [`debugger`]: trusted input, screenshots and scripts over chrome.debugger.
//! - [`transport`]: `FetchTransport`, the LLM transport over fetch (gloo-net).
//! - [`exports`]: the functions the background module calls.
//! - [`timeout`]: bounding waits on pages that may never answer.
//! - [`join`]: waiting on several requests at once (a page's frames).
//! - [`rest`]: loading the part of the core a cold start does not run, on first use.

mod browser;
mod chrome;
mod debugger;
mod exports;
mod join;
mod rest;
mod timeout;
mod transport;
