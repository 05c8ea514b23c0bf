//! Tabwright's agent core.
//!
//! The core is plain Rust that knows nothing of Chrome. It talks to the outside world through two
//! ports — [`browser::Browser`] (observe a page, act on it) and [`llm::LlmTransport`] (send one
//! HTTP request) — so the whole agent loop runs in native `cargo test` with scripted fakes, and the
//! very same code runs in the extension's service worker once [`ext`] plugs Chrome into the ports.
//!
//! Map (see ARCHITECTURE.md for the flow of one step):
//! - [`agent`]: the loop — observe → build union → prompt → call LLM → validate → act → record.
//! - [`actions`]: the action registry, the per-URL action union and its JSON Schema, validation.
//! - [`dom`]: the page snapshot the content script sends, and its text form for the LLM.
//! - [`json`]: reading JSON text into typed values, naming the path of what does not fit.
//! - `mcp` (native only): the MCP server coding agents start, and the bridge Chrome starts.
//! - [`llm`]: the transport port and the provider wire formats (pure build/parse functions).
//! - [`prompt`]: the system prompt and the per-step state message.
//! - [`record`]: what a task leaves behind: step records, the outcome, earlier tasks.
//! - [`protocol`]: the messages that cross the worker ↔ side panel seam.
//! - [`settings`]: what the user configures, validated.
//! - [`tabs`]: the `Browser` port over tabs, frames' content scripts and the debugger (behind a port).
//! - [`tagged`]: reading the internally tagged enums of the wire formats.
//! - [`web`]: URLs and hosts as the browser reads them, for every rule that depends on a site.
//! - [`worker`]: the worker's one task: panel requests, starting, saving, restoring (behind ports).

pub mod actions;
pub mod agent;
pub mod bridge;
pub mod browser;
pub mod dom;
pub mod guard;
pub mod json;
pub mod llm;
#[cfg(not(target_arch = "wasm32"))]
pub mod mcp;
pub mod message;
pub mod prompt;
pub mod protocol;
pub mod record;
pub mod safety;
pub mod schedule;
pub mod settings;
pub mod tabs;
pub mod tagged;
pub mod web;
pub mod worker;

#[cfg(target_arch = "wasm32")]
mod ext;
