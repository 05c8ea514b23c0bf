//! The action registry: every action the agent can take, as data plus one executor.
//!
//! An action is a type implementing [`ActionDef`] in its own file: its [`ActionSpec`] (name,
//! description for the LLM, domains, page filter, whether it ends a multi-action sequence) and
//! its parameter type (serde + schemars, so the LLM-facing schema is generated, never written by
//! hand). The [`registry!`] list below is the one place an action is switched on; it generates
//! the typed [`Action`] enum and the dispatch to each executor.
//!
//! Each step, [`ActionUnion::for_page`] keeps only the actions allowed on the current page, and
//! that union is both the schema the LLM must follow and the validator of what it answers.

mod click;
mod done;
mod input;
mod navigate;
mod union;
pub mod url;

pub use click::ClickParams;
pub use done::DoneParams;
pub use input::InputParams;
pub use navigate::NavigateParams;
pub use union::{ActionUnion, ValidationError};

use crate::browser::{Browser, BrowserError, PageState};
use serde::{de::DeserializeOwned, Serialize};

/// Everything the registry knows about an action besides its parameters.
#[derive(Debug, Clone, Copy)]
pub struct ActionSpec {
    /// The key of the action's branch in the LLM's output, e.g. `click`.
    pub name: &'static str,
    /// Shown to the LLM in the schema: when to use the action.
    pub description: &'static str,
    /// Host globs (`example.com`, `*.example.com`) where the action is offered; empty = everywhere.
    pub domains: &'static [&'static str],
    /// Offered only on pages for which this returns true; `None` = every page.
    pub page_filter: Option<fn(&PageState) -> bool>,
    /// Whether the page may change under the next actions of the same step (navigation-like).
    pub terminates_sequence: bool,
}

/// One action: its spec, its parameter type and its executor.
#[allow(async_fn_in_trait)]
pub trait ActionDef {
    type Params: DeserializeOwned + Serialize + schemars::JsonSchema + Clone + PartialEq + std::fmt::Debug;
    const SPEC: ActionSpec;
    /// A short description for people ("click [12] Submit"), with secrets masked.
    fn describe(params: &Self::Params, page: &PageState) -> String;
    /// The parameters as kept in history, events and later prompts. Actions that can carry a
    /// secret (text typed into a password field) mask it here.
    fn recorded_params(params: &Self::Params, _page: &PageState) -> serde_json::Value {
        serde_json::to_value(params).unwrap_or_default()
    }
    /// Runs the action. `Err` is kept for browser errors; the loop decides whether they end the
    /// task or go back to the LLM as the action's result.
    async fn execute<B: Browser>(
        params: Self::Params,
        ctx: &mut ActionContext<'_, B>,
    ) -> Result<ActionResult, BrowserError>;
}

/// What an executor may use.
pub struct ActionContext<'a, B> {
    pub browser: &'a mut B,
    /// The page as observed at the start of the step.
    pub page: &'a PageState,
}

/// What an action did, in words for the LLM and the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ActionResult {
    /// What happened ("Clicked [3]<button>Submit />; the page navigated to …") or what went wrong.
    pub message: String,
    pub is_error: bool,
    /// Set by `done`: the task's final answer.
    pub done: Option<DoneOutcome>,
    /// Set when the tab's URL changed because of the action.
    pub navigated_to: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DoneOutcome {
    pub text: String,
    pub success: bool,
}

impl ActionResult {
    pub fn ok(message: impl Into<String>) -> Self {
        ActionResult { message: message.into(), is_error: false, done: None, navigated_to: None }
    }

    pub fn error(message: impl Into<String>) -> Self {
        ActionResult { message: message.into(), is_error: true, done: None, navigated_to: None }
    }

    fn with_navigation(mut self, navigated_to: Option<String>) -> Self {
        if let Some(url) = &navigated_to {
            self.message.push_str(&format!("; the page navigated to {}", crate::dom::untrusted(url, 300)));
        }
        self.navigated_to = navigated_to;
        self
    }
}

/// A registered action as the union builder sees it.
#[derive(Clone, Copy)]
pub struct RegisteredAction {
    pub spec: &'static ActionSpec,
    /// The JSON Schema of the action's parameters.
    pub params_schema: fn() -> serde_json::Value,
}

/// The JSON Schema of a type as the LLM sees it: inlined (no `$ref`), no meta keys or title.
pub(crate) fn schema_of<T: schemars::JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("title");
    }
    value
}

/// Declares the registered actions: generates [`Action`], its dispatch, and [`registered`].
macro_rules! registry {
    ($($def:ident),+ $(,)?) => {
        /// A validated action with typed parameters.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Action {
            $($def(<$def as ActionDef>::Params)),+
        }

        impl Action {
            pub fn name(&self) -> &'static str {
                match self { $(Action::$def(_) => $def::SPEC.name),+ }
            }

            pub fn spec(&self) -> &'static ActionSpec {
                match self { $(Action::$def(_) => &$def::SPEC),+ }
            }

            /// The parameters as kept in history and shown in the side panel, secrets masked.
            pub fn recorded_params(&self, page: &PageState) -> serde_json::Value {
                match self { $(Action::$def(p) => $def::recorded_params(p, page)),+ }
            }

            /// A short description for people, e.g. `click [12] Submit`.
            pub fn describe(&self, page: &PageState) -> String {
                match self { $(Action::$def(p) => $def::describe(p, page)),+ }
            }

            /// Parses parameters for the action called `name`; `None` if no action has that name.
            fn parse(name: &str, params: serde_json::Value) -> Option<Result<Action, String>> {
                $(
                    if name == $def::SPEC.name {
                        return Some(
                            serde_path_to_error::deserialize(params)
                                .map(Action::$def)
                                .map_err(|e| describe_param_error(&e)),
                        );
                    }
                )+
                None
            }

            pub async fn execute<B: Browser>(self, ctx: &mut ActionContext<'_, B>) -> Result<ActionResult, BrowserError> {
                match self { $(Action::$def(p) => $def::execute(p, ctx).await),+ }
            }
        }

        /// Every registered action, in the order they are offered to the LLM.
        pub fn registered() -> Vec<RegisteredAction> {
            vec![$(RegisteredAction { spec: &$def::SPEC, params_schema: schema_of::<<$def as ActionDef>::Params> }),+]
        }
    };
}

pub use click::Click;
pub use done::Done;
pub use input::Input;
pub use navigate::Navigate;

registry![Navigate, Click, Input, Done];

fn describe_param_error(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    if path == "." || path.is_empty() {
        e.inner().to_string()
    } else {
        format!("field `{path}`: {}", e.inner())
    }
}

/// How a person would name an element: its text, else its label-like attributes, else its tag.
fn element_label(page: &PageState, index: u32) -> String {
    let Some(el) = page.snapshot.element(index) else { return format!("[{index}]") };
    let text = el.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let label = [
        Some(&text),
        el.attributes.get("aria-label"),
        el.attributes.get("placeholder"),
        el.attributes.get("title"),
        el.attributes.get("name"),
    ]
    .into_iter()
    .flatten()
    .find(|s| !s.trim().is_empty())
    .map(|s| s.chars().take(60).collect::<String>())
    .unwrap_or_else(|| format!("<{}>", el.tag));
    format!("[{index}] {label}")
}

/// Whether the element holds a secret that must not be shown (password, card fields).
fn is_secret_field(page: &PageState, index: u32) -> bool {
    page.snapshot.element(index).is_some_and(|e| {
        e.attributes.get("type").is_some_and(|t| t.eq_ignore_ascii_case("password"))
            || e.attributes.get("autocomplete").is_some_and(|a| a.to_ascii_lowercase().starts_with("cc-"))
    })
}

/// Checks that `index` is on the observed page, giving a reference for result messages:
/// `[3] <button>`. Results go into the prompt's history, outside the fence around page text,
/// so they name the element by index and tag only, never by page-controlled text.
fn observed_element(page: &PageState, index: u32) -> Result<String, ActionResult> {
    page.snapshot.element(index).map(|el| format!("[{index}] <{}>", el.tag)).ok_or_else(|| {
        ActionResult::error(format!(
            "There is no element [{index}] on the current page. Use an index from the interactive elements listed in the browser state."
        ))
    })
}
