//! What the user configures, and the check that turns raw stored settings into usable ones.
//!
//! Settings arrive as JSON from chrome.storage (written by the options page) or from the
//! headless runner. Anything missing or wrong becomes a [`SettingsError`] that says which
//! setting to change and where, because the side panel shows it to the user as is.

pub mod form;

use crate::llm::pricing::ModelPrice;
// The actions' own options live with them.
pub use crate::actions::options::{ActionOptions, SearchEngine};
// The LLM's own settings live with it; they are part of what the person configures here.
pub use crate::llm::settings::{
    is_azure_v1_url, LlmSettings, Provider, StructuredOutput, DEFAULT_LLM_TIMEOUT_S, DEFAULT_OLLAMA_CONTEXT_TOKENS,
    OLLAMA_ANSWER_ROOM_TOKENS,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Settings as stored: every field optional, so a partial or old store still parses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct StoredSettings {
    pub llm: StoredLlm,
    pub max_steps: Option<u32>,
    /// How many tasks may run at once in this browser (the rest wait in the queue).
    pub max_parallel_tasks: Option<u32>,
    pub max_actions_per_step: Option<u32>,
    pub max_failures: Option<u32>,
    /// Seconds one action may take before it is abandoned.
    pub action_timeout_s: Option<u32>,
    /// How far beyond the viewport elements are listed, in CSS pixels; -1 = the whole page.
    pub viewport_expansion: Option<i32>,
    /// Numbered boxes over the elements while a task runs.
    pub highlights: Option<bool>,
    /// The engine `search` uses when the LLM names none: duckduckgo (default), google or bing.
    pub search_engine: Option<String>,
    /// Host globs where the LLM may run JavaScript with `evaluate`; empty = nowhere.
    pub evaluate_domains: Vec<String>,
    /// When not empty, only these actions are offered (`done` always is).
    pub include_actions: Vec<String>,
    /// Actions never offered.
    pub exclude_actions: Vec<String>,
    /// Values the LLM may use by name (`<secret>name</secret>`), each for some sites or all.
    pub secrets: Vec<crate::safety::StoredSecret>,
    /// URL firewall: when not empty, only these host globs may be opened.
    pub allowed_domains: Vec<String>,
    /// URL firewall: host globs never opened (wins over `allowed_domains`).
    pub blocked_domains: Vec<String>,
    /// Sites outside a task's own: `ask` (the default), `listed` (only the task's sites and
    /// `always_sites`) or `free` (go and act anywhere without asking).
    pub site_policy: Option<String>,
    /// Sites the person always allows (answered "Always"), e.g. `booking.com`.
    pub always_sites: Vec<String>,
    /// Screenshots for the model: `off`, `on` (every step) or `auto` (after the `screenshot` action).
    pub vision: Option<String>,
    /// Whether the model writes free reasoning before each answer (default on).
    pub thinking: Option<bool>,
    /// The most input tokens one agent request may carry before old history is compacted.
    pub request_budget_tokens: Option<u32>,
    /// The API key is kept in chrome.storage.session (until the browser closes), not with
    /// these settings; the extension puts it into `llm.api_key` before they are checked.
    pub keys_in_session: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct StoredLlm {
    /// The wire format, one of [`SUPPORTED_PROVIDERS`]. Empty means `openai`.
    pub provider: String,
    pub base_url: String,
    pub model: String,
    pub api_key: String,
    /// The model `extract` uses to read pages; empty = the agent's model.
    pub extraction_model: String,
    /// Headers sent with every request, `{"name": "value"}` (a gateway's own key, OpenRouter's
    /// `HTTP-Referer`, …). A header the provider's format also sets is replaced.
    pub extra_headers: BTreeMap<String, String>,
    /// Azure OpenAI's `api-version` (required with the resource's endpoint, e.g. `2024-10-21`; not
    /// with the v1 base URL); other providers ignore it.
    pub api_version: String,
    /// Tried once when the model fails in a way another model may not (see `LlmClient`); empty = none.
    pub fallback_model: String,
    /// Seconds one LLM request may take before it is abandoned (10 to 600, default 60).
    pub timeout_s: Option<u32>,
    /// Prices that replace or extend the built-in table, in USD per million tokens.
    pub prices: Vec<ModelPrice>,
    /// How an OpenAI-compatible server is asked for JSON: `json_schema` or `json_object`;
    /// empty = `json_object` for DeepSeek (which has no schema mode), `json_schema` elsewhere.
    pub structured_output: String,
    /// Ollama's context window in tokens (`options.num_ctx`), 12,096 (the smallest request
    /// budget and room for the answer) to 1,048,576; none = [`DEFAULT_OLLAMA_CONTEXT_TOKENS`].
    /// Other providers ignore it.
    pub context_tokens: Option<u32>,
}

/// Checked settings, ready for the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub llm: LlmSettings,
    pub limits: Limits,
    pub page: PageOptions,
    pub actions: ActionOptions,
    /// Secrets and the URL firewall.
    pub safety: crate::safety::Safety,
    pub agent: AgentOptions,
    /// Where tasks may go without asking the person.
    pub sites: SiteSettings,
    /// How many tasks may run at once (`DEFAULT_TASKS_AT_ONCE` unless set).
    pub tasks_at_once: usize,
}

/// Tasks at once unless the person sets another number: each runs its own model calls and
/// pages, and three keep a 2-core machine responsive while the model's answers are awaited.
pub const DEFAULT_TASKS_AT_ONCE: u32 = 3;
/// The most tasks at once the settings take.
pub const MAX_TASKS_AT_ONCE: u32 = 8;

/// What the person set for sites outside a task's own (see `crate::guard`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteSettings {
    pub policy: crate::guard::SitePolicy,
    /// Sites always allowed, each as its site (`mail.example.com` → `example.com`).
    pub always: Vec<String>,
}

/// How the agent talks to its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentOptions {
    pub vision: Vision,
    /// The answer has a `thinking` field: better decisions, more output tokens.
    pub thinking: bool,
    /// The most input tokens (estimated) one agent request may carry; past it, old history is
    /// summarised and then shortened (see `crate::prompt`).
    pub request_budget_tokens: u32,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions { vision: Vision::default(), thinking: true, request_budget_tokens: DEFAULT_REQUEST_BUDGET_TOKENS }
    }
}

/// Input tokens per agent request when the settings name no budget: room for a long page
/// listing and history on any current model, at a bounded cost per step.
pub const DEFAULT_REQUEST_BUDGET_TOKENS: u32 = 32_000;

/// About what the fixed part of an agent request costs, in the tokens the budget counts
/// (`prompt::estimate_tokens`): the system prompt, the answer's schema with every action, and
/// the state message around an empty page. A budget is refused below
/// [`MIN_REQUEST_BUDGET_TOKENS`] with this figure as the reason. tests/token_estimate.rs
/// measures it and fails when it is more than a tenth off.
pub const REQUEST_FIXED_TOKENS: u32 = 4_500;

/// The smallest request budget: the fixed part and, beside it, the shortest request the
/// agent makes of a page (a screenful of its elements, the last steps cut to a line or two).
/// A smaller budget could only be exceeded, every step. tests/token_estimate.rs checks that
/// such a request fits.
pub const MIN_REQUEST_BUDGET_TOKENS: u32 = 8_000;
const _: () = assert!(MIN_REQUEST_BUDGET_TOKENS > REQUEST_FIXED_TOKENS, "room for the page beside the fixed part");

/// The largest request budget the settings take.
pub const MAX_REQUEST_BUDGET_TOKENS: u32 = 2_000_000;

/// The smallest context window Ollama may be given: the smallest request budget and the room
/// kept for the answer.
pub const MIN_OLLAMA_CONTEXT_TOKENS: u32 = MIN_REQUEST_BUDGET_TOKENS + OLLAMA_ANSWER_ROOM_TOKENS;

/// When the model is shown the page as an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vision {
    /// Never: `screenshot` is not offered and no image is sent (text-only models, lowest cost).
    Off,
    /// A screenshot of the page (with the numbered boxes when highlights are on) every step.
    On,
    /// Only after the model asks with the `screenshot` action, on its next step.
    #[default]
    Auto,
}

impl Vision {
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "off" | "false" | "never" => Some(Vision::Off),
            "on" | "true" | "always" => Some(Vision::On),
            "auto" | "" => Some(Vision::Auto),
            _ => None,
        }
    }
}

/// How far beyond the visible part of a page elements are listed, unless the user says: none.
/// What a person sees is what the model reads; the `... 900 px below ...` line says there is
/// more, and `scroll`, `find_text`, `search_page` and `extract` reach it. Listing 500 px more
/// made the state text 1.6 times as long on the saved real pages (`scripts/bench dom`), on
/// every step, for elements a person would scroll to first.
pub const DEFAULT_VIEWPORT_EXPANSION: i32 = 0;

/// How pages are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageOptions {
    pub viewport_expansion: i32,
    pub highlights: bool,
}

impl Default for PageOptions {
    fn default() -> Self {
        PageOptions { viewport_expansion: DEFAULT_VIEWPORT_EXPANSION, highlights: true }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_steps: u32,
    pub max_actions_per_step: u32,
    /// Consecutive failed steps (invalid LLM output or failed actions) before the task stops.
    pub max_failures: u32,
    /// Seconds one action may take (actions that call the LLM get five times as long;
    /// `ask_human` waits for the user as long as it takes).
    pub action_timeout_s: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_steps: 100, max_actions_per_step: 5, max_failures: 3, action_timeout_s: 60 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("The LLM provider \"{0}\" is not supported. Choose one of: {providers} in Tabwright's settings (or TABWRIGHT_LLM_PROVIDER for the headless runner).", providers = SUPPORTED_PROVIDERS.join(", "))]
    UnknownProvider(String),
    #[error("The viewport expansion must be -1 (the whole page) or between 0 and 100000 pixels; it is {0}. Fix it in Tabwright's settings.")]
    BadExpansion(i32),
    #[error("The base URL is empty, and this provider has no default address. Enter your server's base URL in Tabwright's settings, e.g. https://openrouter.ai/api/v1.")]
    NoBaseUrl,
    #[error(
        "No model is chosen. Choose one in Tabwright's settings: the model field lists the ones your provider offers."
    )]
    NoModel,
    #[error("The LLM base URL \"{0}\" is not an http(s) URL. Fix it in Tabwright's settings, e.g. https://api.openai.com/v1 (OpenAI), https://openrouter.ai/api/v1 (OpenRouter), https://YOUR-RESOURCE.openai.azure.com (Azure OpenAI), https://api.anthropic.com/v1 (Anthropic), https://generativelanguage.googleapis.com/v1beta (Gemini) or http://localhost:11434 (Ollama).")]
    BadBaseUrl(String),
    #[error("The setting {name} must be between {min} and {max}; it is {value}. Fix it in Tabwright's settings.")]
    /// `setting`: its path in the stored settings (`llm.timeout_s`), for the options page.
    OutOfRange { name: &'static str, setting: &'static str, value: u32, min: u32, max: u32 },
    /// Fewer tokens than one request needs: the request budget, or Ollama's context.
    #[error("The setting {name} must be at least {min}; it is {value}. A request's fixed part alone, the instructions and the actions' schema, takes about {REQUEST_FIXED_TOKENS} tokens, and the page needs room beside it. Fix it in Tabwright's settings.")]
    TooFewTokens { name: &'static str, setting: &'static str, value: u32, min: u32 },
    #[error("The stored settings could not be read ({0}). Save them again in Tabwright's settings to replace them.")]
    Unreadable(String),
    #[error("The search engine \"{0}\" is not known. Choose duckduckgo, google or bing in Tabwright's settings.")]
    UnknownSearchEngine(String),
    #[error("The action \"{name}\" in the {list} list is not an action Tabwright has. Known actions: {known}. Fix the list in Tabwright's settings.")]
    UnknownAction { name: String, list: &'static str, known: String },
    /// A secret or a URL firewall list that cannot be used.
    #[error(transparent)]
    Safety(#[from] crate::safety::SafetyError),
    #[error("\"{0}\" is not a choice for sites outside a task: choose Ask before new sites, Only the sites I list, or Act without asking in Tabwright's settings.")]
    UnknownSitePolicy(String),
    #[error(
        "The always-allowed site \"{0}\" is not a host name such as example.com. Remove it in Tabwright's settings."
    )]
    BadAlwaysSite(String),
    #[error("The domain pattern \"{0}\" is not valid: use a host name such as example.com or *.example.com. Fix it in Tabwright's settings.")]
    BadDomain(String),
    #[error("Your API key was kept only until the browser closed, so it is gone now. Enter it again in Tabwright's settings (or untick \"Keep API keys only until the browser closes\" there to keep it).")]
    SessionKeyGone,
    #[error("Azure OpenAI needs an API version with the resource's endpoint as base URL. Set it in Tabwright's settings, e.g. 2024-10-21, or use the v1 base URL (https://YOUR-RESOURCE.openai.azure.com/openai/v1), which needs none.")]
    NoApiVersion,
    #[error("The extra LLM header \"{0}\" cannot be sent: a name is letters, digits and - (such as HTTP-Referer), given once, not one the browser keeps to itself (such as Cookie), and a value is one line. Fix it in Tabwright's settings.")]
    BadHeader(String),
    #[error(
        "The structured output mode \"{0}\" is not known. Choose json_schema or json_object in Tabwright's settings."
    )]
    UnknownStructuredOutput(String),
    #[error("The vision setting \"{0}\" is not known. Choose off, on or auto in Tabwright's settings.")]
    UnknownVision(String),
    #[error("The price for \"{0}\" is not valid: give a model name prefix and prices of 0 or more USD per million tokens. Fix it in Tabwright's settings.")]
    BadPrice(String),
    #[error("The model name \"{0}\" is not valid: a model is named on one line of at most 200 characters. Choose another model for the task.")]
    BadModelName(String),
}

impl crate::message::Localize for SettingsError {
    /// Every one is fixed in the settings.
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        use crate::message::LocaleText as L;
        Some(L::fixed_in_settings(match self {
            SettingsError::UnknownProvider(name) => {
                L::new("settings_unknown_provider", [name, &SUPPORTED_PROVIDERS.join(", ")])
            }
            SettingsError::BadExpansion(px) => L::new("settings_bad_expansion", [px]),
            SettingsError::NoModel => L::plain("settings_no_model"),
            SettingsError::NoBaseUrl => L::plain("settings_no_base_url"),
            SettingsError::BadBaseUrl(url) => L::new("settings_bad_base_url", [url]),
            SettingsError::OutOfRange { name, value, min, max, .. } => {
                L::new("settings_out_of_range", [name.to_string(), value.to_string(), min.to_string(), max.to_string()])
            }
            SettingsError::TooFewTokens { name, value, min, .. } => L::new(
                "settings_too_few_tokens",
                [name.to_string(), value.to_string(), min.to_string(), REQUEST_FIXED_TOKENS.to_string()],
            ),
            SettingsError::Unreadable(why) => L::new("settings_unreadable", [why]),
            SettingsError::UnknownSearchEngine(name) => L::new("settings_unknown_search_engine", [name]),
            SettingsError::UnknownAction { name, list, known } => {
                L::new("settings_unknown_action", [name, *list, known])
            }
            SettingsError::Safety(e) => return e.locale_text().map(L::fixed_in_settings),
            SettingsError::BadDomain(glob) => L::new("settings_bad_domain", [glob]),
            SettingsError::SessionKeyGone => L::plain("settings_session_key_gone"),
            SettingsError::NoApiVersion => L::plain("settings_no_api_version"),
            SettingsError::BadHeader(name) => L::new("settings_bad_header", [name]),
            SettingsError::UnknownStructuredOutput(mode) => L::new("settings_unknown_structured_output", [mode]),
            SettingsError::UnknownVision(mode) => L::new("settings_unknown_vision", [mode]),
            SettingsError::BadPrice(model) => L::new("settings_bad_price", [model]),
            SettingsError::BadModelName(model) => L::new("settings_bad_model_name", [model]),
            SettingsError::UnknownSitePolicy(policy) => L::new("settings_unknown_site_policy", [policy]),
            SettingsError::BadAlwaysSite(site) => L::new("settings_bad_always_site", [site]),
        }))
    }
}

impl SettingsError {
    /// The stored setting at fault, by its path in the stored settings (`llm.model`), for the
    /// options page to mark; none for a fault of the whole.
    pub fn setting(&self) -> Option<&'static str> {
        use crate::safety::SafetyError;
        Some(match self {
            SettingsError::UnknownProvider(_) => "llm.provider",
            SettingsError::BadExpansion(_) => "viewport_expansion",
            SettingsError::NoBaseUrl | SettingsError::BadBaseUrl(_) => "llm.base_url",
            SettingsError::NoModel | SettingsError::BadModelName(_) => "llm.model",
            SettingsError::OutOfRange { setting, .. } | SettingsError::TooFewTokens { setting, .. } => setting,
            SettingsError::Unreadable(_) => return None,
            SettingsError::UnknownSearchEngine(_) => "search_engine",
            SettingsError::UnknownAction { list, .. } if *list == "include" => "include_actions",
            SettingsError::UnknownAction { .. } => "exclude_actions",
            SettingsError::Safety(SafetyError::BadFirewallDomain { list, .. }) if *list == "allow" => "allowed_domains",
            SettingsError::Safety(SafetyError::BadFirewallDomain { .. }) => "blocked_domains",
            SettingsError::Safety(_) => "secrets",
            SettingsError::BadDomain(_) => "evaluate_domains",
            SettingsError::UnknownSitePolicy(_) => "site_policy",
            SettingsError::BadAlwaysSite(_) => "always_sites",
            SettingsError::SessionKeyGone => "llm.api_key",
            SettingsError::NoApiVersion => "llm.api_version",
            SettingsError::BadHeader(_) => "llm.extra_headers",
            SettingsError::UnknownStructuredOutput(_) => "llm.structured_output",
            SettingsError::UnknownVision(_) => "vision",
            SettingsError::BadPrice(_) => "llm.prices",
        })
    }
}

/// A model name longer than this is refused (no provider's is near it).
const MAX_MODEL_NAME_CHARS: usize = 200;

impl Settings {
    /// These settings with `model` as the model of the task, when the person chose one for it
    /// in the side panel; the saved model otherwise. The rest (provider, key, fallback) stays.
    pub fn with_model(mut self, model: Option<&str>) -> Result<Settings, SettingsError> {
        let Some(model) = model.map(str::trim).filter(|m| !m.is_empty()) else { return Ok(self) };
        if model.chars().count() > MAX_MODEL_NAME_CHARS || model.chars().any(char::is_control) {
            let shown: String = model.chars().take(60).filter(|c| !c.is_control()).collect();
            return Err(SettingsError::BadModelName(shown));
        }
        self.llm.model = model.to_string();
        Ok(self)
    }
}

/// The provider wire formats this build speaks, by their stored names.
pub const SUPPORTED_PROVIDERS: &[&str] =
    &["openai", "openai_compatible", "azure_openai", "anthropic", "gemini", "ollama"];

impl StoredSettings {
    pub fn from_json(value: serde_json::Value) -> Result<Self, SettingsError> {
        if value.is_null() {
            return Ok(Self::default());
        }
        crate::json::read_value(&value).map_err(|e| SettingsError::Unreadable(e.to_string()))
    }

    pub fn validate(&self) -> Result<Settings, SettingsError> {
        let provider = match self.llm.provider.trim() {
            "" => Provider::default(),
            name => Provider::parse(name).ok_or_else(|| SettingsError::UnknownProvider(self.llm.provider.clone()))?,
        };
        // Empty is the provider's own address, where it has one.
        let base_url = match (self.llm.base_url.trim().trim_end_matches('/'), provider.default_base_url()) {
            ("", Some(default)) => default.to_string(),
            ("", None) => return Err(SettingsError::NoBaseUrl),
            (given, _) => given.to_string(),
        };
        let model = self.llm.model.trim().to_string();
        if model.is_empty() {
            return Err(SettingsError::NoModel);
        }
        if self.keys_in_session && self.llm.api_key.trim().is_empty() {
            return Err(SettingsError::SessionKeyGone);
        }
        if !(base_url.starts_with("http://") || base_url.starts_with("https://"))
            || base_url.contains(char::is_whitespace)
        {
            return Err(SettingsError::BadBaseUrl(self.llm.base_url.clone()));
        }
        let d = Limits::default();
        let ranged = |(name, setting), v: Option<u32>, def, min, max| match v {
            None => Ok(def),
            Some(value) if (min..=max).contains(&value) => Ok(value),
            Some(value) => Err(SettingsError::OutOfRange { name, setting, value, min, max }),
        };
        let optional = |text: &str| Some(text.trim().to_string()).filter(|t| !t.is_empty());
        let api_version = optional(&self.llm.api_version);
        if provider == Provider::AzureOpenAi && api_version.is_none() && !is_azure_v1_url(&base_url) {
            return Err(SettingsError::NoApiVersion);
        }
        let mut settings = Settings {
            llm: LlmSettings {
                provider,
                api_key: self.llm.api_key.trim().to_string(),
                extraction_model: optional(&self.llm.extraction_model),
                extra_headers: self.llm.checked_headers()?,
                api_version,
                fallback_model: optional(&self.llm.fallback_model).filter(|m| *m != model),
                timeout_s: ranged(
                    ("LLM timeout", "llm.timeout_s"),
                    self.llm.timeout_s,
                    DEFAULT_LLM_TIMEOUT_S,
                    10,
                    600,
                )?,
                prices: self.llm.checked_prices()?,
                // OpenAI and Azure always have the schema mode; the choice is kept while another
                // provider is chosen, for switching back.
                structured_output: match StructuredOutput::from_stored(&self.llm.structured_output, &base_url) {
                    _ if provider != Provider::OpenAiCompatible => StructuredOutput::JsonSchema,
                    Some(mode) => mode,
                    None => return Err(SettingsError::UnknownStructuredOutput(self.llm.structured_output.clone())),
                },
                context_tokens: ranged(
                    ("Ollama context (tokens)", "llm.context_tokens"),
                    self.llm.context_tokens,
                    DEFAULT_OLLAMA_CONTEXT_TOKENS,
                    8_192,
                    1_048_576,
                )?,
                base_url,
                model,
            },
            limits: Limits {
                max_steps: ranged(("max steps", "max_steps"), self.max_steps, d.max_steps, 1, 1000)?,
                max_actions_per_step: ranged(
                    ("max actions per step", "max_actions_per_step"),
                    self.max_actions_per_step,
                    d.max_actions_per_step,
                    1,
                    20,
                )?,
                max_failures: ranged(
                    ("max consecutive failures", "max_failures"),
                    self.max_failures,
                    d.max_failures,
                    1,
                    20,
                )?,
                action_timeout_s: ranged(
                    ("action timeout", "action_timeout_s"),
                    self.action_timeout_s,
                    d.action_timeout_s,
                    30,
                    600,
                )?,
            },
            page: PageOptions {
                viewport_expansion: match self.viewport_expansion {
                    None => PageOptions::default().viewport_expansion,
                    Some(v) if v == -1 || (0..=100_000).contains(&v) => v,
                    Some(v) => return Err(SettingsError::BadExpansion(v)),
                },
                highlights: self.highlights.unwrap_or(true),
            },
            actions: self.action_options()?,
            safety: crate::safety::Safety::from_settings(&self.secrets, &self.allowed_domains, &self.blocked_domains)?,
            sites: self.site_settings()?,
            tasks_at_once: ranged(
                ("tasks at once", "max_parallel_tasks"),
                self.max_parallel_tasks,
                DEFAULT_TASKS_AT_ONCE,
                1,
                MAX_TASKS_AT_ONCE,
            )? as usize,
            agent: AgentOptions {
                vision: self.vision()?,
                thinking: self.thinking.unwrap_or(true),
                request_budget_tokens: match self.request_budget_tokens {
                    Some(value) if value < MIN_REQUEST_BUDGET_TOKENS => {
                        return Err(SettingsError::TooFewTokens {
                            name: "request budget (tokens)",
                            setting: "request_budget_tokens",
                            value,
                            min: MIN_REQUEST_BUDGET_TOKENS,
                        })
                    }
                    stored => ranged(
                        ("request budget (tokens)", "request_budget_tokens"),
                        stored,
                        DEFAULT_REQUEST_BUDGET_TOKENS,
                        MIN_REQUEST_BUDGET_TOKENS,
                        MAX_REQUEST_BUDGET_TOKENS,
                    )?,
                },
            },
        };
        // Ollama cuts a prompt longer than its context without a word: the budget keeps the
        // request within it, with room for the answer; a context too small for the smallest
        // budget and the answer cannot hold a request at all.
        if provider == Provider::Ollama {
            if settings.llm.context_tokens < MIN_OLLAMA_CONTEXT_TOKENS {
                return Err(SettingsError::TooFewTokens {
                    name: "Ollama context (tokens)",
                    setting: "llm.context_tokens",
                    value: settings.llm.context_tokens,
                    min: MIN_OLLAMA_CONTEXT_TOKENS,
                });
            }
            let fits = settings.llm.context_tokens - OLLAMA_ANSWER_ROOM_TOKENS;
            settings.agent.request_budget_tokens = settings.agent.request_budget_tokens.min(fits);
        }
        Ok(settings)
    }

    fn vision(&self) -> Result<Vision, SettingsError> {
        let name = self.vision.as_deref().unwrap_or_default();
        Vision::parse(name).ok_or_else(|| SettingsError::UnknownVision(name.to_string()))
    }

    fn site_settings(&self) -> Result<SiteSettings, SettingsError> {
        use crate::guard::SitePolicy;
        let policy = match self.site_policy.as_deref().map(str::trim) {
            None | Some("") | Some("ask") => SitePolicy::Ask,
            Some("listed") => SitePolicy::Listed,
            Some("free") => SitePolicy::Free,
            Some(other) => return Err(SettingsError::UnknownSitePolicy(crate::dom::untrusted(other, 40))),
        };
        let mut always: Vec<String> = Vec::new();
        for site in self.always_sites.iter().map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()) {
            if !crate::web::is_host_glob(&site) || site.contains('*') {
                return Err(SettingsError::BadAlwaysSite(crate::dom::untrusted(&site, 100)));
            }
            let site = crate::guard::site_of_host(&site);
            if !always.contains(&site) {
                always.push(site);
            }
        }
        Ok(SiteSettings { policy, always })
    }

    fn action_options(&self) -> Result<ActionOptions, SettingsError> {
        let search_engine = match self.search_engine.as_deref().map(str::trim) {
            None | Some("") => SearchEngine::default(),
            Some(name) => SearchEngine::parse(name).ok_or_else(|| SettingsError::UnknownSearchEngine(name.into()))?,
        };
        let known: Vec<&str> = crate::actions::registered().iter().map(|a| a.spec.name).collect();
        let names = |list: &'static str, names: &[String]| -> Result<Vec<String>, SettingsError> {
            let names: Vec<String> = names.iter().map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
            match names.iter().find(|n| !known.contains(&n.as_str())) {
                Some(name) => Err(SettingsError::UnknownAction { name: name.clone(), list, known: known.join(", ") }),
                None => Ok(names),
            }
        };
        let mut evaluate_domains = Vec::new();
        for glob in &self.evaluate_domains {
            let glob = glob.trim().to_ascii_lowercase();
            if glob.is_empty() {
                continue;
            }
            if !crate::web::is_host_glob(&glob) {
                return Err(SettingsError::BadDomain(glob));
            }
            evaluate_domains.push(glob);
        }
        Ok(ActionOptions {
            search_engine,
            evaluate_domains,
            include: names("include", &self.include_actions)?,
            exclude: names("exclude", &self.exclude_actions)?,
            files: Vec::new(),
        })
    }
}

impl StoredLlm {
    /// Extra headers with trimmed names and values; a name must be an HTTP token and a value
    /// one line, or fetch would refuse the whole request.
    fn checked_headers(&self) -> Result<Vec<(String, String)>, SettingsError> {
        let mut headers: Vec<(String, String)> = Vec::new();
        for (name, value) in &self.extra_headers {
            let (name, value) = (name.trim(), value.trim());
            if name.is_empty() && value.is_empty() {
                continue;
            }
            // The rules the options page's list is read by (`form`), and no name twice in
            // another case: fetch would send one of them.
            let repeated = headers.iter().any(|(seen, _)| seen.eq_ignore_ascii_case(name));
            if form::header_problem(name, value).is_some() || repeated {
                return Err(SettingsError::BadHeader(name.to_string()));
            }
            headers.push((name.to_string(), value.to_string()));
        }
        Ok(headers)
    }

    fn checked_prices(&self) -> Result<Vec<ModelPrice>, SettingsError> {
        let fine = |p: f64| p.is_finite() && p >= 0.0;
        self.prices
            .iter()
            .map(|p| {
                let model_prefix = p.model_prefix.trim().to_string();
                if model_prefix.is_empty() || !fine(p.input_per_million) || !fine(p.output_per_million) {
                    return Err(SettingsError::BadPrice(model_prefix));
                }
                Ok(ModelPrice { model_prefix, ..p.clone() })
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// One error of every kind, as the settings refuse them.
    pub(crate) fn samples() -> Vec<SettingsError> {
        use crate::safety::SafetyError;
        vec![
            SettingsError::UnknownProvider("gpt".into()),
            SettingsError::BadExpansion(-5),
            SettingsError::NoBaseUrl,
            SettingsError::NoModel,
            SettingsError::BadBaseUrl("ftp://example.com".into()),
            SettingsError::OutOfRange { name: "LLM timeout", setting: "llm.timeout_s", value: 5, min: 10, max: 600 },
            SettingsError::TooFewTokens {
                name: "request budget (tokens)",
                setting: "request_budget_tokens",
                value: 4_000,
                min: MIN_REQUEST_BUDGET_TOKENS,
            },
            SettingsError::Unreadable("at llm.model: invalid type".into()),
            SettingsError::UnknownSearchEngine("yahoo".into()),
            SettingsError::UnknownAction { name: "fly".into(), list: "include", known: "click, input_text".into() },
            SettingsError::UnknownAction { name: "fly".into(), list: "exclude", known: "click, input_text".into() },
            SettingsError::BadDomain("exa mple.com".into()),
            SettingsError::SessionKeyGone,
            SettingsError::NoApiVersion,
            SettingsError::BadHeader("X Bad".into()),
            SettingsError::UnknownStructuredOutput("xml".into()),
            SettingsError::UnknownVision("sometimes".into()),
            SettingsError::UnknownSitePolicy("maybe".into()),
            SettingsError::BadAlwaysSite("http://x".into()),
            SettingsError::BadPrice("gpt-4o".into()),
            SettingsError::BadModelName("gpt\u{7}4o".into()),
            SettingsError::Safety(SafetyError::BadSecretName { name: "a b".into() }),
        ]
    }

    #[test]
    fn the_options_page_marks_the_field_of_every_setting_at_fault() {
        use crate::safety::SafetyError;
        let page = include_str!("../extension/options/options.js");
        let map = &page[page.find("const SETTING_FIELDS").unwrap()..];
        let map = &map[..map.find("};").unwrap()];
        // One of each (the messages' test shows them all), and each list a firewall has.
        let mut faults = samples();
        // Not read (no setting at fault), and the include list, which the page does not edit.
        faults.retain(|fault| {
            !matches!(fault, SettingsError::Unreadable(_) | SettingsError::UnknownAction { list: "include", .. })
        });
        faults.push(SettingsError::Safety(SafetyError::BadFirewallDomain { list: "allow", glob: "x y".into() }));
        faults.push(SettingsError::Safety(SafetyError::BadFirewallDomain { list: "deny", glob: "x y".into() }));
        let mut ranges = Vec::new();
        for field in ["timeout_s", "context_tokens"] {
            let stored = json!({"llm": {"provider": "ollama", "model": "m", field: 1}});
            ranges.push(StoredSettings::from_json(stored).unwrap().validate().unwrap_err());
        }
        for field in [
            "max_steps",
            "max_parallel_tasks",
            "max_actions_per_step",
            "max_failures",
            "action_timeout_s",
            "request_budget_tokens",
        ] {
            let stored = json!({"llm": {"model": "m"}, field: 1_000_000_000});
            ranges.push(StoredSettings::from_json(stored).unwrap().validate().unwrap_err());
        }
        for fault in faults.iter().chain(&ranges) {
            let setting = fault.setting().unwrap_or_else(|| panic!("{fault:?} names no setting"));
            let quoted = if setting.contains('.') { format!("'{setting}': '") } else { format!("{setting}: '") };
            assert!(map.contains(&quoted), "{setting} ({fault:?}) has no field in SETTING_FIELDS");
        }
        assert_eq!(ranges.iter().filter_map(SettingsError::setting).count(), 8, "{ranges:?}");
    }

    #[test]
    fn an_empty_base_url_is_the_providers_own_address_where_it_has_one() {
        let base = |provider: &str, url: &str| {
            StoredSettings::from_json(
                json!({"llm": {"provider": provider, "base_url": url, "model": "m", "api_version": "2024-10-21"}}),
            )
            .unwrap()
            .validate()
            .map(|s| s.llm.base_url)
        };
        assert_eq!(base("openai", "").unwrap(), "https://api.openai.com/v1");
        assert_eq!(base("", " ").unwrap(), "https://api.openai.com/v1", "the default provider");
        assert_eq!(base("anthropic", "").unwrap(), "https://api.anthropic.com/v1");
        assert_eq!(base("gemini", "").unwrap(), "https://generativelanguage.googleapis.com/v1beta");
        assert_eq!(base("ollama", "").unwrap(), "http://localhost:11434");
        assert_eq!(base("openai_compatible", "").unwrap_err(), SettingsError::NoBaseUrl);
        assert_eq!(base("azure_openai", "").unwrap_err(), SettingsError::NoBaseUrl);
        assert_eq!(base("openai", "http://127.0.0.1:9/v1/").unwrap(), "http://127.0.0.1:9/v1", "a given one is kept");
    }

    #[test]
    fn empty_store_says_what_to_set_and_where() {
        let err = StoredSettings::from_json(serde_json::Value::Null).unwrap().validate().unwrap_err();
        assert_eq!(err, SettingsError::NoModel, "the default provider's address is taken; a model never is");
        assert!(err.to_string().contains("settings"));
    }

    #[test]
    fn a_key_kept_for_the_browser_session_that_is_gone_says_to_enter_it_again() {
        let stored = json!({"keys_in_session": true, "llm": {"base_url": "https://api.openai.com/v1", "model": "m"}});
        let err = StoredSettings::from_json(stored.clone()).unwrap().validate().unwrap_err();
        assert_eq!(err, SettingsError::SessionKeyGone);
        assert!(err.to_string().contains("Enter it again in Tabwright's settings"), "{err}");
        let mut with_key = stored;
        with_key["llm"]["api_key"] = json!("sk-session");
        let ok = StoredSettings::from_json(with_key).unwrap().validate().unwrap();
        assert_eq!(ok.llm.api_key, "sk-session");
    }

    #[test]
    fn a_complete_store_validates_with_default_limits() {
        let s = StoredSettings::from_json(json!({"llm": {"base_url": " http://127.0.0.1:9/v1/ ", "model": "m"}}))
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(s.llm.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(s.limits, Limits::default());
    }

    #[test]
    fn bad_values_are_named() {
        let s = StoredSettings::from_json(json!({"llm": {"base_url": "ftp://x", "model": "m"}})).unwrap();
        assert!(matches!(s.validate(), Err(SettingsError::BadBaseUrl(_))));
        let s =
            StoredSettings::from_json(json!({"llm": {"base_url": "http://x", "model": "m"}, "max_steps": 0})).unwrap();
        assert!(matches!(s.validate(), Err(SettingsError::OutOfRange { name: "max steps", .. })));
        assert!(matches!(StoredSettings::from_json(json!({"llm": 5})), Err(SettingsError::Unreadable(_))));
        let s = StoredSettings::from_json(
            json!({"llm": {"provider": "carrier-pigeon", "base_url": "http://x", "model": "m"}}),
        )
        .unwrap();
        let err = s.validate().unwrap_err();
        assert!(err.to_string().contains("Choose one of: openai"), "{err}");
        let s = StoredSettings::from_json(json!({"llm": {"provider": "OpenAI", "base_url": "http://x", "model": "m"}}))
            .unwrap();
        assert!(s.validate().is_ok());
    }

    #[test]
    fn deepseek_gets_json_object_unless_told_otherwise() {
        let mode = |base: &str, stored: &str| {
            StoredSettings::from_json(json!({"llm": {"provider": "openai_compatible", "base_url": base, "model": "m", "structured_output": stored}}))
                .unwrap()
                .validate()
                .map(|s| s.llm.structured_output)
        };
        assert_eq!(mode("https://api.deepseek.com/v1", ""), Ok(StructuredOutput::JsonObject));
        assert_eq!(mode("https://api.deepseek.com", "json_schema"), Ok(StructuredOutput::JsonSchema));
        assert_eq!(mode("https://openrouter.ai/api/v1", ""), Ok(StructuredOutput::JsonSchema));
        assert_eq!(mode("http://localhost:1234/v1", "JSON-object"), Ok(StructuredOutput::JsonObject));
        assert!(matches!(mode("http://x", "yaml"), Err(SettingsError::UnknownStructuredOutput(_))));
        let azure = StoredSettings::from_json(
            json!({"llm": {"provider": "azure_openai", "base_url": "https://r.openai.azure.com", "model": "m", "api_version": "2024-10-21", "structured_output": "json_object"}}),
        );
        assert_eq!(azure.unwrap().validate().unwrap().llm.structured_output, StructuredOutput::JsonSchema);
    }

    #[test]
    fn agent_options_default_and_parse() {
        let llm = json!({"base_url": "http://x", "model": "m"});
        let s = StoredSettings::from_json(json!({"llm": llm})).unwrap().validate().unwrap();
        assert_eq!(s.agent, AgentOptions::default());
        assert_eq!(s.agent.vision, Vision::Auto);

        let s = StoredSettings::from_json(
            json!({"llm": llm, "vision": "Off", "thinking": false, "request_budget_tokens": 9000}),
        )
        .unwrap()
        .validate()
        .unwrap();
        assert_eq!(s.agent, AgentOptions { vision: Vision::Off, thinking: false, request_budget_tokens: 9000 });

        let s = StoredSettings::from_json(json!({"llm": llm, "vision": "on"})).unwrap().validate().unwrap();
        assert_eq!(s.agent.vision, Vision::On);

        let err =
            StoredSettings::from_json(json!({"llm": llm, "vision": "sometimes"})).unwrap().validate().unwrap_err();
        assert!(err.to_string().contains("off, on or auto"), "{err}");
        let budget = |tokens: u32| {
            StoredSettings::from_json(json!({"llm": llm, "request_budget_tokens": tokens})).unwrap().validate()
        };
        // Below what a request needs, the error says why: its fixed part alone.
        for tokens in [100, 4_000, MIN_REQUEST_BUDGET_TOKENS - 1] {
            let err = budget(tokens).unwrap_err();
            assert_eq!(
                err,
                SettingsError::TooFewTokens {
                    name: "request budget (tokens)",
                    setting: "request_budget_tokens",
                    value: tokens,
                    min: MIN_REQUEST_BUDGET_TOKENS
                }
            );
            let text = err.to_string();
            assert!(
                text.contains(&format!("at least {MIN_REQUEST_BUDGET_TOKENS}; it is {tokens}"))
                    && text.contains(&format!("A request's fixed part alone, the instructions and the actions' schema, takes about {REQUEST_FIXED_TOKENS} tokens")),
                "{text}"
            );
            assert_eq!(err.setting(), Some("request_budget_tokens"));
        }
        assert_eq!(budget(MIN_REQUEST_BUDGET_TOKENS).unwrap().agent.request_budget_tokens, MIN_REQUEST_BUDGET_TOKENS);
        assert!(matches!(budget(MAX_REQUEST_BUDGET_TOKENS + 1), Err(SettingsError::OutOfRange { .. })));
    }

    #[test]
    fn a_model_chosen_for_the_task_replaces_the_saved_one_and_nothing_else() {
        let llm = json!({"base_url": "http://x", "model": "big", "fallback_model": "small", "extraction_model": "big"});
        let saved = StoredSettings::from_json(json!({"llm": llm})).unwrap().validate().unwrap();
        let chosen = saved.clone().with_model(Some("  small ")).unwrap();
        assert_eq!(chosen.llm.model, "small");
        assert_eq!(chosen.llm.fallback_model.as_deref(), Some("small"));
        assert_eq!(chosen.llm.base_url, saved.llm.base_url);
        assert_eq!(saved.clone().with_model(None).unwrap().llm.model, "big");
        assert_eq!(saved.clone().with_model(Some("  ")).unwrap().llm.model, "big", "blank keeps the saved model");
        let err = saved.clone().with_model(Some("gpt\n4o")).unwrap_err();
        assert!(matches!(&err, SettingsError::BadModelName(shown) if shown == "gpt4o"), "{err}");
        assert!(saved.with_model(Some(&"m".repeat(201))).is_err());
    }

    #[test]
    fn stored_headers_are_held_to_the_rules_the_options_page_reads_them_by() {
        let check = |headers: serde_json::Value| {
            let llm = json!({"base_url": "http://127.0.0.1:9/v1", "model": "m", "extra_headers": headers});
            StoredSettings::from_json(json!({ "llm": llm })).unwrap().validate().map(|s| s.llm.extra_headers)
        };
        assert_eq!(
            check(json!({"X-Title": " Tabwright "})).unwrap(),
            vec![("X-Title".to_string(), "Tabwright".to_string())]
        );
        // Imported settings cannot carry what the page refuses: a header fetch drops without a
        // word, or one name twice in two cases.
        assert_eq!(check(json!({"Cookie": "a=b"})), Err(SettingsError::BadHeader("Cookie".into())));
        assert_eq!(check(json!({"Sec-Fetch-Site": "none"})), Err(SettingsError::BadHeader("Sec-Fetch-Site".into())));
        assert!(matches!(check(json!({"X-A": "1", "x-a": "2"})), Err(SettingsError::BadHeader(_))));
        assert!(check(json!({"Bad Name": "x"})).is_err());
    }
}
