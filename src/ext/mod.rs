//! The one place that knows Chrome (compiled for wasm32 only).
//!
//! - [`chrome`]: bindings to the chrome.* APIs the core uses; every one can throw, so every one
//!   is imported with `catch` and wrapped to return a `Result`.
//! - [`transport`]: `FetchTransport`, the LLM transport over fetch (gloo-net).
//! - [`exports`]: the functions the background module calls.
//! - [`host`]: `ChromeHost`, the worker's ports (`crate::worker::host`) over chrome.*.
//! - [`tabs`]: `ChromeTabs`, the tab browser's port (`crate::tabs::host`) over chrome.*.

mod chrome;
mod exports;
mod host;
mod tabs;
mod transport;
