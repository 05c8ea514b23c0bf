//! The action registry: every action the agent can take, as data plus one executor.
//!
//! An action is a type implementing [`ActionDef`] in its own file: its [`ActionSpec`] (name,
//! description for the LLM, domains, page filter, whether it ends a multi-action sequence) and
//! its parameter type (serde + schemars, so the LLM-facing schema is generated, never written by
//! hand). The [`registry!`] list below is the one place an action is switched on; it generates
//! the typed [`Action`] enum and the dispatch to each executor.
//!
//! Each step, [`ActionUnion::for_page`] keeps the actions offered at the current URL (their
//! hosts, the user's lists) as the schema the LLM must follow, and of those the ones the page's
//! state allows (elements, history, tabs) as the validator of what it answers.
//!
//! # The registry, in detail
//!
//! Each action is data plus one executor (`ActionDef`): name, description for the LLM, parameter
//! type (serde + schemars, field docs become the schema's descriptions), `domains` globs, a page
//! filter over the observed page and the action options, `terminates_sequence`, and what it needs
//! (`Needs`: the content script, the debugger, the LLM). `registry![…]` in `src/actions/mod.rs` is
//! the one list; it generates the typed `Action` enum, the dispatch, and the `RegisteredAction`s
//! (spec, domains, parameter schema generated once per task, parser). A task with an output
//! schema gets the structured `done` (`{data, success}`, `data` of that schema, checked by
//! `schema_check.rs`) instead of the text one. A `RegisteredAction` carries its own branch name and
//! description (the spec's, for every built-in action), so one definition can stand for many
//! branches: each saved skill is a `UseSkill` entry with the skill's name, description, host and
//! parameter schema (see `agent::skill`).
//!
//! Page filters, so the schema the LLM receives changes with the page: element actions need
//! elements; `dropdown_options`/`select_dropdown` a `<select>` or ARIA listbox/combobox;
//! `switch_tab`/`close_tab` more than one task tab; `go_back`/`go_forward` history that way
//! (`navigation.canGoBack` from the top frame's snapshot reply); `scroll` a page or container
//! that scrolls; `evaluate` a host the user listed; `find_text`/`extract`/`search_page` a readable
//! page. Validation turns the LLM's list into typed actions; errors name the action, the field,
//! what was expected and the allowed actions, and go back to the LLM as the step's error.
//!
//! # Adding an action
//!
//! One file and one word:
//!
//! 1. `src/actions/my_action.rs`: a parameter struct (`Serialize, Deserialize, JsonSchema`,
//!    `deny_unknown_fields`, doc comments become the schema's descriptions, optional fields are
//!    `Option<T>`; use `NoParams` for none), and a unit struct implementing `ActionDef` — its
//!    `ActionSpec` (name, description, domains, page filter, `terminates_sequence`, `needs`),
//!    `check` for what the schema cannot say (ranges, one of two forms), `describe` (for people,
//!    secrets masked) and `execute` (through `ctx.browser`, `ctx.llm`, `ctx.events`).
//! 2. Add `mod my_action;` / `pub use` and its name to the `registry![…]` list in
//!    `src/actions/mod.rs`.
//!
//! The schema branch, validation and dispatch are generated from that. If the action needs
//! something new from the browser, add a method to the `Browser` port (with a default that says
//! the browser cannot), implement it in `src/tabs/mod.rs` over the `TabHost` port (and the content script if it acts in
//! the page), and prove it with an e2e test in `tests/e2e/actions.test.mjs` that checks the page's
//! effect. Then rerun the schema goldens with `UPDATE_GOLDENS=1 cargo test --test schema_transforms`.

// Checks that fail with the action's result (`Err(ActionResult)`) are on the cold path; the
// size of that error does not matter.
#![allow(clippy::result_large_err)]

mod ask_human;
mod click;
mod done;
mod drag_and_drop;
mod dropdown;
mod evaluate;
mod extract;
mod find_text;
mod history;
mod input;
pub mod keys;
mod navigate;
pub mod options;
mod schema_check;
mod screenshot;
mod scroll;
mod search;
mod search_page;
mod send_keys;
mod skill;
mod tabs;
mod union;
mod upload_file;
mod wait;

pub use ask_human::{AskHuman, AskHumanParams};
pub use click::{clicked_indices, Click, ClickParams, CLICK_REPEAT_STEPS};
pub use done::{Done, DoneParams, StructuredDone, StructuredDoneParams};
pub use drag_and_drop::{DragAndDrop, DragAndDropParams};
pub use dropdown::{DropdownOptions, DropdownOptionsParams, SelectDropdown, SelectDropdownParams};
pub use evaluate::{Evaluate, EvaluateParams};
pub use extract::{Extract, ExtractParams};
pub use find_text::{FindText, FindTextParams};
pub use history::{GoBack, GoForward};
pub use input::{Input, InputParams};
pub use navigate::{Navigate, NavigateParams};
pub use screenshot::TakeScreenshot;
pub use scroll::{Scroll, ScrollParams};
pub use search::{Search, SearchParams};
pub use search_page::{SearchPage, SearchPageParams};
pub use send_keys::{SendKeys, SendKeysParams};
pub use skill::{skill_action, SkillCall, UseSkill, SKILL_ACTION_PREFIX};
pub use tabs::{CloseTab, OpenTab, OpenTabParams, SwitchTab, TabParams};
pub use union::{ActionUnion, ValidationError};
pub use upload_file::{UploadFile, UploadFileParams};
pub use wait::{Wait, WaitParams};

use crate::browser::{Browser, BrowserError, PageState, Screenshot};
use crate::llm::{LlmClient, LlmTransport};
pub use options::{ActionOptions, SearchEngine};

/// What in a task's output schema the `done` check could not check (its definitions inlined
/// first), for a refusal before the task starts; `None` when it checks all of it.
pub fn unsupported_output_keyword(schema: &serde_json::Value) -> Option<String> {
    schema_check::unsupported_keyword(&done::inline_refs(schema))
}
use schemars::JsonSchema;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::borrow::Cow;

/// What an action needs besides the page's content script, so the union can leave out what
/// cannot work and people can see why an infobar appeared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// Runs in the page through the content script.
    pub content_script: bool,
    /// Uses chrome.debugger (trusted input, screenshots, scripts): Chrome shows its
    /// "started debugging this browser" bar while attached.
    pub debugger: bool,
    /// Calls the LLM itself (the extraction model).
    pub llm: bool,
}

impl Needs {
    pub const NOTHING: Needs = Needs { content_script: false, debugger: false, llm: false };
    pub const PAGE: Needs = Needs { content_script: true, debugger: false, llm: false };
    pub const DEBUGGER: Needs = Needs { content_script: false, debugger: true, llm: false };
}

/// Everything the registry knows about an action besides its parameters.
#[derive(Debug, Clone, Copy)]
pub struct ActionSpec {
    /// The key of the action's branch in the LLM's output, e.g. `click`.
    pub name: &'static str,
    /// Shown to the LLM in the schema: when to use the action.
    pub description: &'static str,
    /// Host globs (`example.com`, `*.example.com`) where the action is offered; empty = everywhere.
    pub domains: &'static [&'static str],
    /// Allowed only on pages in a state for which this returns true (elements to click, a
    /// history to go back in, a second tab); `None` = always. Checked when the answer is
    /// validated and named in the state's list of available actions, but not taken out of the
    /// schema: the schema changes only with the URL, so a task's requests share their prefix.
    pub page_filter: Option<fn(&PageState, &ActionOptions) -> bool>,
    /// Offered only where this returns true of the URL's host (`None` for a page without
    /// one, such as `about:blank`) and the task's settings: scripts on the hosts the user
    /// listed, uploads when the task has files. `None` = everywhere. Unlike the page filter,
    /// this leaves the action out of the schema.
    pub url_filter: Option<fn(Option<&str>, &ActionOptions) -> bool>,
    /// Whether the page may change under the next actions of the same step (navigation-like).
    pub terminates_sequence: bool,
    pub needs: Needs,
}

/// One action: its spec, its parameter type and its executor.
#[allow(async_fn_in_trait)]
pub trait ActionDef {
    type Params: DeserializeOwned + Serialize + schemars::JsonSchema + Clone + PartialEq + std::fmt::Debug;
    const SPEC: ActionSpec;
    /// Checks what the schema cannot say (ranges, one of two forms); the message names the
    /// field and what is expected.
    fn check(_params: &Self::Params, _schema: &serde_json::Value) -> Result<(), String> {
        Ok(())
    }
    /// The name the model called it by: the spec's, except for actions registered once per
    /// thing they stand for (each saved skill is its own branch).
    fn name_of(_params: &Self::Params) -> &str {
        Self::SPEC.name
    }
    /// The element the action targets, if it targets one: its `index` parameter.
    fn element_index(params: &Self::Params) -> Option<u32> {
        let params = serde_json::to_value(params).ok()?;
        params.get("index")?.as_u64().and_then(|i| u32::try_from(i).ok())
    }
    /// A short description for people ("click [12] Submit"), with secrets masked, in English
    /// and as the pages' message (`core_do_<action>`).
    fn describe(params: &Self::Params, page: &PageState) -> crate::message::Said;
    /// The parameters as kept in history, events and later prompts. Actions that can carry a
    /// secret (text typed into a password field) mask it here.
    fn recorded_params(params: &Self::Params, _page: &PageState) -> serde_json::Value {
        serde_json::to_value(params).unwrap_or_default()
    }
    /// Runs the action. `Err` is kept for browser errors; the loop decides whether they end the
    /// task or go back to the LLM as the action's result.
    async fn execute<B: Browser, T: LlmTransport>(
        params: Self::Params,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError>;
}

/// What an executor may use.
pub struct ActionContext<'a, B, T> {
    pub browser: &'a mut B,
    /// The page as observed at the start of the step.
    pub page: &'a PageState,
    /// The LLM, for actions that read pages with it (`extract`).
    pub llm: &'a LlmClient<T>,
    /// Live progress, for actions the user takes part in (`ask_human`).
    pub events: &'a dyn ActionEvents,
    pub options: &'a ActionOptions,
    pub step: u32,
    /// The user's secrets, to keep their values out of what actions send elsewhere (`extract`).
    pub secrets: &'a crate::safety::Secrets,
    /// The elements clicked by index in the last [`CLICK_REPEAT_STEPS`] steps (`click` gives
    /// one clicked again a trusted click).
    pub clicked_lately: &'a [u32],
}

/// What an action reports while it runs, for the person watching: the loop turns each into
/// the task's event.
pub trait ActionEvents {
    /// `ask_human` put a question to the person at `step`.
    fn question_asked(&self, step: u32, question: &str);
    /// The person answered it (secrets masked).
    fn question_answered(&self, step: u32, answer: &str);
}

/// What an action did, in words for the LLM and the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionResult {
    /// What happened ("Clicked [3] <button>; the page navigated to …") or what went wrong.
    pub message: String,
    pub is_error: bool,
    /// Set by `done`: the task's final answer.
    pub done: Option<DoneOutcome>,
    /// Set when the tab's URL changed because of the action.
    pub navigated_to: Option<String>,
    /// Page-derived content the action read (extracted text, matches, options). It is shown to
    /// the LLM once, in the next step's results and fenced as page content, not in the
    /// history of every later step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Set by `screenshot`: attached to the next request for models that can see.
    #[serde(skip)]
    pub screenshot: Option<Screenshot>,
    /// What the models the action asked billed (`extract`), each with its model, answers it
    /// could not use too: the loop adds them to the step's and the task's tokens and cost.
    #[serde(skip)]
    pub bills: Vec<(String, crate::llm::Usage)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DoneOutcome {
    pub text: String,
    pub success: bool,
    /// The task's result in the shape the task asked for, when it gave an output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl ActionResult {
    pub fn ok(message: impl Into<String>) -> Self {
        ActionResult {
            message: message.into(),
            is_error: false,
            done: None,
            navigated_to: None,
            detail: None,
            screenshot: None,
            bills: Vec::new(),
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        ActionResult { is_error: true, ..ActionResult::ok(message) }
    }

    fn with_detail(mut self, detail: String) -> Self {
        self.detail = Some(detail);
        self
    }

    /// Adds what a page-changing action led to: a navigation, a new tab, a trusted retry.
    fn with_effect(mut self, effect: crate::browser::ActionEffect) -> Self {
        if effect.trusted_fallback {
            self.message.push_str(" (the page ignored a script click, so it was repeated as a real mouse click)");
        }
        if effect.trusted {
            self.message.push_str(
                " with a real mouse click, as it was clicked in a recent step too (a page can answer a script's click as if it worked and still ignore it)",
            );
        }
        if effect.unchanged {
            // Not a success: the model must not take it for one and go on as if it had worked.
            self.message.push_str(
                ", but nothing on the page changed: no navigation, nothing shown, hidden or changed beyond its hover and focus styling. Look at the page again: the element may do nothing, need something else first, or not be the one meant",
            );
            self.is_error = true;
        }
        if let Some(tab) = &effect.tab_closed_to {
            self.message.push_str(&format!(
                "; the tab closed itself, so the current tab is now tab {} at {}",
                tab.id,
                crate::dom::untrusted(&tab.url, 300)
            ));
            self.navigated_to = Some(tab.url.clone());
        } else if let Some(tab) = &effect.opened_tab {
            self.message.push_str(&format!(
                "; it opened a new tab (tab {}) at {}, which is now the current tab",
                tab.id,
                crate::dom::untrusted(&tab.url, 300)
            ));
            self.navigated_to = Some(tab.url.clone());
        } else {
            self = self.with_navigation(effect.navigated_to);
        }
        self
    }

    fn with_navigation(mut self, navigated_to: Option<String>) -> Self {
        if let Some(url) = &navigated_to {
            self.message.push_str(&format!("; the page navigated to {}", crate::dom::untrusted(url, 300)));
        }
        self.navigated_to = navigated_to;
        self
    }
}

/// Parameters of actions that take none. Unknown fields are accepted and ignored, because
/// some providers cannot express an empty object and add a placeholder field. Its schema says
/// `additionalProperties: false`, so that it reads as the empty object it is, not as an object
/// of any shape (which OpenAI's strict mode cannot take: `llm::schema::openai_strict_fits`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct NoParams {}

/// A registered action as the union builder sees it.
#[derive(Clone)]
pub struct RegisteredAction {
    /// The key of its branch: the spec's name, or a saved skill's own.
    pub name: Cow<'static, str>,
    /// What the model reads about it: the spec's description, or a saved skill's own.
    pub description: Cow<'static, str>,
    pub spec: &'static ActionSpec,
    /// The type implementing the action (`Click`), to tell apart actions that share a name.
    pub def: &'static str,
    /// Host globs where the action is offered; empty = everywhere. Starts as the spec's, and
    /// can be narrowed per task (an action meant for one site).
    pub domains: Vec<String>,
    /// The JSON Schema of the action's parameters, generated once.
    pub params_schema: serde_json::Value,
    /// Parses and checks the action's parameters.
    parse: fn(&RegisteredAction, serde_json::Value) -> Result<Action, String>,
}

impl RegisteredAction {
    /// Checks the LLM's parameters for this action and makes them typed.
    pub fn parse(&self, params: serde_json::Value) -> Result<Action, String> {
        (self.parse)(self, params)
    }
}

/// Deserializes an action's parameters, naming the field at fault, then runs its own checks.
fn parse_params<A: ActionDef>(params: serde_json::Value, schema: &serde_json::Value) -> Result<A::Params, String> {
    let params: A::Params = crate::json::read_value(&params).map_err(|e| describe_param_error(&e))?;
    A::check(&params, schema)?;
    Ok(params)
}

/// The JSON Schema of a type as the LLM sees it: inlined (no `$ref`), no meta keys or title.
/// Derived by schemars, in tests: the core reads the same schemas as constants
/// (`constant_schema`), which `schemas_are_the_derived_ones` keeps equal to these.
#[cfg(test)]
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

/// The JSON Schemas of the actions' parameters and of the answer's shape, as schemars derives
/// them (`schema_of`), kept as text: the extension reads them instead of building them, so
/// none of schemars' code is in the wasm. `schemas_are_the_derived_ones` keeps them equal to
/// the derived ones (`UPDATE_SCHEMAS=1 cargo test --lib schemas_are` writes them again).
const SCHEMAS: &str = include_str!("schemas.json");

/// The schema kept under `name` (an action's definition, such as `Click`, or
/// `AgentOutputShape`).
pub(crate) fn constant_schema(name: &str) -> serde_json::Value {
    thread_local! {
        static READ: serde_json::Map<String, serde_json::Value> =
            crate::json::from_text(SCHEMAS).unwrap_or_default();
    }
    READ.with(|all| all.get(name).cloned().unwrap_or_else(|| serde_json::json!({"type": "object"})))
}

/// Declares the actions: generates [`Action`], its dispatch, and `all_actions`.
macro_rules! registry {
    ($($def:ident),+ $(,)?) => {
        /// A validated action with typed parameters.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Action {
            $($def(<$def as ActionDef>::Params)),+
        }

        impl Action {
            pub fn name(&self) -> &str {
                match self { $(Action::$def(p) => $def::name_of(p)),+ }
            }

            pub fn spec(&self) -> &'static ActionSpec {
                match self { $(Action::$def(_) => &$def::SPEC),+ }
            }

            /// The parameters as kept in history and shown in the side panel, secrets masked.
            pub fn recorded_params(&self, page: &PageState) -> serde_json::Value {
                match self { $(Action::$def(p) => $def::recorded_params(p, page)),+ }
            }

            /// A short description for people, e.g. `click [12] Submit`.
            pub fn describe(&self, page: &PageState) -> crate::message::Said {
                match self { $(Action::$def(p) => $def::describe(p, page)),+ }
            }

            /// The parameters as given (secret placeholders unreplaced), as JSON.
            pub fn params_value(&self) -> serde_json::Value {
                match self { $(Action::$def(p) => serde_json::to_value(p).unwrap_or_default()),+ }
            }

            /// The element index the action targets, if it targets one.
            pub fn element_index(&self) -> Option<u32> {
                match self { $(Action::$def(p) => $def::element_index(p)),+ }
            }

            pub async fn execute<B: Browser, T: LlmTransport>(
                self,
                ctx: &mut ActionContext<'_, B, T>,
            ) -> Result<ActionResult, BrowserError> {
                match self { $(Action::$def(p) => $def::execute(p, ctx).await),+ }
            }
        }

        /// Each action's parameter schema as schemars derives it, by definition name.
        #[cfg(test)]
        fn derived_schemas() -> Vec<(&'static str, serde_json::Value)> {
            vec![$((stringify!($def), schema_of::<<$def as ActionDef>::Params>())),+]
        }

        /// Every action there is, in the order they are offered to the LLM.
        fn all_actions() -> Vec<RegisteredAction> {
            vec![$(RegisteredAction {
                name: Cow::Borrowed($def::SPEC.name),
                description: Cow::Borrowed($def::SPEC.description),
                spec: &$def::SPEC,
                def: stringify!($def),
                domains: $def::SPEC.domains.iter().map(|d| d.to_string()).collect(),
                params_schema: constant_schema(stringify!($def)),
                parse: |registered, params| {
                    parse_params::<$def>(params, &registered.params_schema).map(Action::$def)
                },
            }),+]
        }
    };
}

// The one list of actions. Adding an action: write its file (parameter type + `ActionDef`),
// add its `mod` and `pub use` lines above and its name here.
registry![
    Search,
    Navigate,
    GoBack,
    GoForward,
    Click,
    Input,
    DragAndDrop,
    SendKeys,
    Scroll,
    FindText,
    DropdownOptions,
    SelectDropdown,
    UploadFile,
    SwitchTab,
    OpenTab,
    CloseTab,
    Extract,
    SearchPage,
    TakeScreenshot,
    Evaluate,
    Wait,
    AskHuman,
    Done,
    StructuredDone,
    UseSkill,
];

impl Action {
    /// What the action does, as far as the person's guard is concerned (`crate::guard`).
    pub fn guarded(&self, options: &ActionOptions) -> crate::guard::Guarded {
        use crate::guard::{ElementAct, Guarded};
        let element =
            |index: u32, how, text: Option<&str>| Guarded::Element { index, how, text: text.map(str::to_string) };
        match self {
            Action::Navigate(_) | Action::OpenTab(_) | Action::Search(_) => {
                Guarded::Open { url: self.target_url(options).unwrap_or_default() }
            }
            Action::Click(p) => match (p.index, p.x, p.y) {
                (Some(index), _, _) => element(index, ElementAct::Click, None),
                (None, Some(x), Some(y)) => Guarded::Point { x, y },
                _ => Guarded::Read,
            },
            Action::Input(p) => element(p.index, ElementAct::Type, Some(&p.text)),
            Action::SelectDropdown(p) => element(p.index, ElementAct::Choose, Some(&p.text)),
            Action::DragAndDrop(p) => element(p.index, ElementAct::Drag, None),
            Action::UploadFile(p) => element(p.index, ElementAct::Upload, None),
            Action::SendKeys(p) => Guarded::Keys {
                text: p.keys.clone(),
                enter: p.keys.split_whitespace().any(|k| {
                    k.rsplit('+')
                        .next()
                        .is_some_and(|k| k.eq_ignore_ascii_case("enter") || k.eq_ignore_ascii_case("numpadenter"))
                }),
            },
            Action::Evaluate(_) => Guarded::Script,
            _ => Guarded::Read,
        }
    }

    /// Where a navigation-like action would take the browser, for the URL firewall.
    pub fn target_url(&self, options: &ActionOptions) -> Option<String> {
        match self {
            Action::Navigate(p) => Some(p.url.clone()),
            Action::OpenTab(p) => Some(p.url.clone()),
            Action::Search(p) => Some(p.engine.unwrap_or(options.search_engine).results_url(p.query.trim())),
            _ => None,
        }
    }
}

/// The actions of a task without an output schema: everything but the structured `done` (and
/// the skill action, which is registered once per saved skill: [`skill_action`]).
pub fn registered() -> Vec<RegisteredAction> {
    all_actions().into_iter().filter(|a| a.def != "StructuredDone" && a.def != "UseSkill").collect()
}

/// Gives `upload_file` the task's files: its `file` parameter is one of their names.
pub fn with_files(mut registry: Vec<RegisteredAction>, files: &[crate::browser::TaskFile]) -> Vec<RegisteredAction> {
    for action in registry.iter_mut().filter(|a| a.def == "UploadFile") {
        action.params_schema = upload_file::schema_for(files);
    }
    registry
}

/// The actions of a task. When the task asks for its result in a shape (a JSON Schema),
/// `done` takes `{data, success}` with `data` of that shape instead of free text.
pub fn registered_for(output_schema: Option<&serde_json::Value>) -> Vec<RegisteredAction> {
    let Some(output_schema) = output_schema else { return registered() };
    all_actions()
        .into_iter()
        .filter(|a| a.def != "Done" && a.def != "UseSkill")
        .map(|mut a| {
            if a.def == "StructuredDone" {
                a.params_schema = done::structured_schema(output_schema);
            }
            a
        })
        .collect()
}

fn describe_param_error(e: &crate::json::JsonError) -> String {
    if e.path == "." {
        e.message.clone()
    } else {
        format!("field `{}`: {}", e.path, e.message)
    }
}

/// One description of every kind each action gives (each branch of its `describe`), on a
/// page with one element and two tabs: the messages test renders each through `_locales`.
#[cfg(test)]
pub(crate) fn sample_descriptions() -> Vec<crate::message::Said> {
    use crate::dom::{Element, Snapshot};
    use serde_json::json;
    let mut page = PageState::new(
        1,
        Snapshot::with_elements("https://x/", "", vec![Element::new(4, "input", &[("placeholder", "Search")], "")]),
    );
    page.tabs = vec![crate::browser::TabInfo { id: 2, url: "https://x/".into(), title: "Shop".into() }];
    fn said<D: ActionDef>(params: serde_json::Value, page: &PageState) -> crate::message::Said {
        D::describe(&crate::json::read_value(&params).unwrap(), page)
    }
    let skill = |values: &[(&str, &str)]| {
        let call = SkillCall {
            skill: "skill_order".into(),
            values: values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        };
        UseSkill::describe(&call, &page)
    };
    vec![
        said::<AskHuman>(json!({"question": "Which account?"}), &page),
        said::<Click>(json!({"index": 4}), &page),
        said::<Click>(json!({"x": 10.4, "y": 20.6}), &page),
        said::<Click>(json!({}), &page),
        said::<Done>(json!({"text": "ok", "success": true}), &page),
        said::<Done>(json!({"text": "no", "success": false}), &page),
        said::<DragAndDrop>(json!({"index": 4, "target": 9}), &page),
        said::<DragAndDrop>(json!({"index": 4, "x": 5.0, "y": 6.0}), &page),
        said::<DragAndDrop>(json!({"index": 4}), &page),
        said::<DropdownOptions>(json!({"index": 4}), &page),
        said::<SelectDropdown>(json!({"index": 4, "text": "Red"}), &page),
        said::<Evaluate>(json!({"code": "document.title"}), &page),
        said::<Extract>(json!({"query": "prices"}), &page),
        said::<FindText>(json!({"text": "Terms"}), &page),
        said::<GoBack>(json!({}), &page),
        said::<GoForward>(json!({}), &page),
        said::<Input>(json!({"index": 4, "text": "shoes"}), &page),
        said::<Navigate>(json!({"url": "https://example.com"}), &page),
        said::<Navigate>(json!({"url": "https://example.com", "new_tab": true}), &page),
        said::<TakeScreenshot>(json!({}), &page),
        said::<Scroll>(json!({"down": true}), &page),
        said::<Scroll>(json!({"down": false, "pages": 0.5}), &page),
        said::<Scroll>(json!({"down": true, "index": 4}), &page),
        said::<Scroll>(json!({"down": false, "index": 4}), &page),
        said::<Search>(json!({"query": "flights"}), &page),
        said::<SearchPage>(json!({"pattern": "price"}), &page),
        said::<SearchPage>(json!({"pattern": "\\d+", "regex": true}), &page),
        said::<SendKeys>(json!({"keys": "Enter"}), &page),
        skill(&[]),
        skill(&[("size", "M")]),
        said::<SwitchTab>(json!({"tab_id": 2}), &page),
        said::<OpenTab>(json!({"url": "https://example.com"}), &page),
        said::<CloseTab>(json!({"tab_id": 2}), &page),
        said::<UploadFile>(json!({"index": 4, "file": "cv.pdf"}), &page),
        said::<Wait>(json!({"seconds": 2}), &page),
    ]
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
        el.attributes.get("label"),
        el.attributes.get("icon"),
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
pub(crate) fn is_secret_field(page: &PageState, index: u32) -> bool {
    page.snapshot.element(index).is_some_and(|e| {
        e.attributes.get("type").is_some_and(|t| t.eq_ignore_ascii_case("password"))
            // A token list: "billing cc-number", "section-pay cc-csc".
            || e.attributes.get("autocomplete").is_some_and(|a| {
                a.split_whitespace().any(|token| token.to_ascii_lowercase().starts_with("cc-"))
            })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An element is named in what a step did as a person would name it: its words, else its
    /// label, placeholder, title, or the icon it shows.
    #[test]
    fn an_element_is_named_by_what_a_person_sees_of_it() {
        use crate::dom::{Element, Snapshot};
        let page = PageState::new(
            1,
            Snapshot::with_elements(
                "https://x/",
                "",
                vec![
                    Element::new(1, "span", &[("icon", "trash can")], ""),
                    Element::new(2, "div", &[("role", "combobox"), ("label", "Plan")], ""),
                    Element::new(3, "span", &[], ""),
                ],
            ),
        );
        assert_eq!(element_label(&page, 1), "[1] trash can");
        assert_eq!(element_label(&page, 2), "[2] Plan");
        assert_eq!(element_label(&page, 3), "[3] <span>");
    }

    #[test]
    fn schemas_are_the_derived_ones() {
        let mut derived = serde_json::Map::new();
        for (name, schema) in derived_schemas() {
            derived.insert(name.to_string(), schema);
        }
        derived.insert("AgentOutputShape".into(), crate::agent::output::derived_shape_schema());
        let derived = serde_json::to_string_pretty(&derived).unwrap() + "\n";
        if std::env::var_os("UPDATE_SCHEMAS").is_some() {
            std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/src/actions/schemas.json"), &derived).unwrap();
            return;
        }
        // Compared as text: the order of the properties is the order a model writes its answer in.
        assert!(
            SCHEMAS == derived,
            "src/actions/schemas.json is not what schemars derives: run UPDATE_SCHEMAS=1 cargo test --lib schemas_are"
        );
    }
}
