//! What the LLM layer is told by the settings: which provider's wire format, where, which
//! model, with which key and headers. Defined here, beside the code that speaks to providers,
//! so that `llm` needs nothing above it; `settings` reads them from storage and checks them.

use super::pricing::ModelPrice;

#[derive(Debug, Clone, PartialEq)]
pub struct LlmSettings {
    pub provider: Provider,
    /// e.g. `https://api.openai.com/v1`; the provider's path is appended.
    pub base_url: String,
    /// The model name (for Azure OpenAI: the deployment name).
    pub model: String,
    /// Empty for local servers that need no key.
    pub api_key: String,
    /// The model `extract` reads pages with (a cheaper one, typically); `None` = `model`.
    pub extraction_model: Option<String>,
    /// Sent with every request; a header of the same name (any case) set by the provider's
    /// format is replaced.
    pub extra_headers: Vec<(String, String)>,
    /// Azure OpenAI's `api-version` query parameter; other providers ignore it.
    pub api_version: Option<String>,
    /// Tried once when the model fails in a way another model may not; never equal to `model`.
    pub fallback_model: Option<String>,
    /// Seconds one request may take before the transport abandons it.
    pub timeout_s: u32,
    /// User prices, consulted before the built-in table ([`crate::llm::pricing`]).
    pub prices: Vec<ModelPrice>,
    /// How the chat-completions format asks for JSON (other formats ignore it).
    pub structured_output: StructuredOutput,
    /// The context window Ollama is asked to give the model (`options.num_ctx`): its own default
    /// (4,096 tokens on most machines) is smaller than one step's request, and Ollama cuts a
    /// longer prompt without a word. Other providers ignore it.
    pub context_tokens: u32,
}

/// How a chat-completions server is asked to answer in the agent's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StructuredOutput {
    /// `response_format: json_schema` with `strict`: the server enforces the schema.
    #[default]
    JsonSchema,
    /// `response_format: json_object`, with the schema in the system prompt: for servers that
    /// only promise valid JSON (DeepSeek, some local servers). The agent's validator checks it.
    JsonObject,
}

impl StructuredOutput {
    /// The stored name, or the mode `base_url`'s server needs when none is stored.
    pub(crate) fn from_stored(name: &str, base_url: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "json_schema" => Some(StructuredOutput::JsonSchema),
            "json_object" => Some(StructuredOutput::JsonObject),
            "" if crate::web::host_of(base_url)
                .is_some_and(|h| h == "deepseek.com" || h.ends_with(".deepseek.com")) =>
            {
                Some(StructuredOutput::JsonObject)
            }
            "" => Some(StructuredOutput::JsonSchema),
            _ => None,
        }
    }
}

impl Default for LlmSettings {
    /// Not a usable configuration (no base URL or model): a base for tests and struct updates.
    fn default() -> Self {
        LlmSettings {
            provider: Provider::default(),
            base_url: String::new(),
            model: String::new(),
            api_key: String::new(),
            extraction_model: None,
            extra_headers: Vec::new(),
            api_version: None,
            fallback_model: None,
            timeout_s: DEFAULT_LLM_TIMEOUT_S,
            prices: Vec::new(),
            structured_output: StructuredOutput::default(),
            context_tokens: DEFAULT_OLLAMA_CONTEXT_TOKENS,
        }
    }
}

/// Seconds an LLM request may take when the settings name no timeout.
pub const DEFAULT_LLM_TIMEOUT_S: u32 = 60;

/// Ollama's context window when the settings name none: room for the default request budget
/// and an answer.
pub const DEFAULT_OLLAMA_CONTEXT_TOKENS: u32 = 32_768;

/// Tokens of Ollama's context kept for the answer: with Ollama the request budget is at most
/// the context less this.
pub const OLLAMA_ANSWER_ROOM_TOKENS: u32 = 4_096;

/// The wire format an LLM is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Provider {
    /// OpenAI's chat completions.
    #[default]
    OpenAi,
    /// The same format on another server: OpenRouter, Groq, DeepSeek, LM Studio, vLLM, …
    OpenAiCompatible,
    /// Chat completions on an Azure deployment: another URL, an `api-key` header.
    AzureOpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google's Gemini API (`generateContent`).
    Gemini,
    /// A local Ollama server's `/api/chat`.
    Ollama,
}

impl Provider {
    /// Reads a stored provider name; case, spaces and `-`/`_` do not matter.
    pub fn parse(name: &str) -> Option<Self> {
        let name: String =
            name.trim().chars().map(|c| if c == '-' || c == ' ' { '_' } else { c.to_ascii_lowercase() }).collect();
        match name.as_str() {
            "openai" => Some(Provider::OpenAi),
            "openai_compatible" => Some(Provider::OpenAiCompatible),
            "azure_openai" | "azure" => Some(Provider::AzureOpenAi),
            "anthropic" => Some(Provider::Anthropic),
            "gemini" | "google" => Some(Provider::Gemini),
            "ollama" => Some(Provider::Ollama),
            _ => None,
        }
    }

    /// Where the provider's own API is, for an empty base URL; none for a server only the
    /// person knows (an OpenAI-compatible one, an Azure resource).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::Anthropic => Some("https://api.anthropic.com/v1"),
            Provider::Gemini => Some("https://generativelanguage.googleapis.com/v1beta"),
            Provider::Ollama => Some("http://localhost:11434"),
            Provider::OpenAiCompatible | Provider::AzureOpenAi => None,
        }
    }

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::OpenAiCompatible => "openai_compatible",
            Provider::AzureOpenAi => "azure_openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::Ollama => "ollama",
        }
    }
}

/// Whether an Azure OpenAI base URL is of the v1 form (`https://NAME.openai.azure.com/openai/v1`):
/// the model goes in the request body and no `api-version` is needed; the other form is the
/// resource's endpoint, with the deployment and an `api-version` in each request's URL.
pub fn is_azure_v1_url(base_url: &str) -> bool {
    base_url.trim().trim_end_matches('/').to_ascii_lowercase().ends_with("/openai/v1")
}

#[cfg(test)]
mod tests {
    use super::Provider;

    /// The options page shows each provider's own address as the default of an empty base
    /// URL (extension/providers.js, `PROVIDERS`): it must be the one the core takes.
    #[test]
    fn the_options_page_offers_the_addresses_the_core_takes_for_an_empty_base_url() {
        let page = include_str!("../../extension/providers.js");
        let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
        for provider in [
            Provider::OpenAi,
            Provider::OpenAiCompatible,
            Provider::AzureOpenAi,
            Provider::Anthropic,
            Provider::Gemini,
            Provider::Ollama,
        ] {
            let name = provider.name();
            let at =
                page.find(&format!("{name}: {{ baseUrl: '")).unwrap_or_else(|| panic!("{name} is not in PROVIDERS"));
            let entry = &page[at..page[at..].find('}').map_or(page.len(), |end| at + end)];
            match provider.default_base_url() {
                Some(url) => assert!(entry.contains(&format!("baseUrl: '{url}', ownAddress: true")), "{entry}"),
                None => assert!(entry.contains("ownAddress: false"), "{entry}"),
            }
        }
    }
}
