//! The models a provider offers, for the options page's model field: one GET per provider
//! family, built and read by pure functions like the chat wire formats.
//!
//! - OpenAI and OpenAI-compatible servers (and Azure's v1 API): `GET {base}/models`, answered
//!   `{data: [{id}]}`.
//! - Anthropic: `GET {base}/models?limit=1000`, answered `{data: [{id, display_name}]}`.
//! - Gemini: `GET {base}/models?pageSize=1000`, answered `{models: [{name: "models/…",
//!   supportedGenerationMethods}]}`; only models that can `generateContent` are offered, by the
//!   name the settings take.
//! - Ollama: `GET {base}/api/tags`, answered `{models: [{name}]}`: the models pulled on that
//!   machine.
//!
//! Azure OpenAI with the resource's endpoint names deployments, which the person made and
//! named in the Azure portal; no list is asked for there.

use super::settings::{is_azure_v1_url, LlmSettings, Provider};
use super::{http_error, parse_body, with_extra_headers, HttpRequest, HttpResponse, LlmError};
use serde_json::Value;

/// The GET that lists `settings`' provider's models, or `None` where there is no such list
/// (Azure OpenAI's deployments).
pub fn build_models_request(settings: &LlmSettings) -> Option<HttpRequest> {
    let base = settings.base_url.trim_end_matches('/');
    let key = settings.api_key.as_str();
    let mut headers = Vec::new();
    let url = match settings.provider {
        Provider::OpenAi | Provider::OpenAiCompatible => {
            if !key.is_empty() {
                headers.push(("authorization".to_string(), format!("Bearer {key}")));
            }
            format!("{base}/models")
        }
        Provider::AzureOpenAi if is_azure_v1_url(base) => {
            if !key.is_empty() {
                headers.push(("api-key".to_string(), key.to_string()));
            }
            format!("{base}/models")
        }
        Provider::AzureOpenAi => return None,
        Provider::Anthropic => {
            headers.push(("anthropic-version".to_string(), super::anthropic::API_VERSION.to_string()));
            headers.push(("anthropic-dangerous-direct-browser-access".to_string(), "true".to_string()));
            if !key.is_empty() {
                headers.push(("x-api-key".to_string(), key.to_string()));
            }
            format!("{base}/models?limit=1000")
        }
        Provider::Gemini => {
            if !key.is_empty() {
                headers.push(("x-goog-api-key".to_string(), key.to_string()));
            }
            format!("{base}/models?pageSize=1000")
        }
        Provider::Ollama => {
            if !key.is_empty() {
                headers.push(("authorization".to_string(), format!("Bearer {key}")));
            }
            let base = base.strip_suffix("/api").unwrap_or(base);
            format!("{base}/api/tags")
        }
    };
    Some(HttpRequest { url, headers: with_extra_headers(headers, settings), body: String::new() })
}

/// The model names in a list answer, sorted and without repeats, or why the answer is not one.
pub fn parse_models_response(provider: Provider, url: &str, response: &HttpResponse) -> Result<Vec<String>, LlmError> {
    http_error(url, response)?;
    let body: Value = parse_body(&response.body, "model list")?;
    let names: Vec<String> = match provider {
        Provider::Gemini => list(&body, "models")
            .filter(|m| {
                // A model without the field is offered: only a list that leaves it out excludes it.
                m.get("supportedGenerationMethods")
                    .and_then(Value::as_array)
                    .is_none_or(|methods| methods.iter().any(|x| x == "generateContent"))
            })
            .filter_map(|m| m.get("name").and_then(Value::as_str))
            .map(|name| name.strip_prefix("models/").unwrap_or(name).to_string())
            .collect(),
        Provider::Ollama => {
            list(&body, "models").filter_map(|m| m.get("name").and_then(Value::as_str)).map(str::to_string).collect()
        }
        _ => list(&body, "data").filter_map(|m| m.get("id").and_then(Value::as_str)).map(str::to_string).collect(),
    };
    let field = match provider {
        Provider::Gemini | Provider::Ollama => "models",
        _ => "data",
    };
    if body.get(field).and_then(Value::as_array).is_none() {
        return Err(LlmError::Malformed(format!(
            "the model list has no \"{field}\" list; check that the provider in Tabwright's settings matches the server"
        )));
    }
    let mut names: Vec<String> = names.into_iter().filter(|n| !n.trim().is_empty()).collect();
    names.sort();
    names.dedup();
    Ok(names)
}

fn list<'a>(body: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    body.get(field).and_then(Value::as_array).into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(provider: Provider, base_url: &str) -> LlmSettings {
        LlmSettings {
            provider,
            base_url: base_url.into(),
            model: "m".into(),
            api_key: "k".into(),
            ..LlmSettings::default()
        }
    }

    fn ok(body: Value) -> HttpResponse {
        HttpResponse { status: 200, body: body.to_string(), ..HttpResponse::default() }
    }

    #[test]
    fn each_family_asks_its_own_list() {
        let url = |p, base| build_models_request(&settings(p, base)).map(|r| r.url);
        assert_eq!(
            url(Provider::OpenAi, "https://api.openai.com/v1/"),
            Some("https://api.openai.com/v1/models".into())
        );
        assert_eq!(
            url(Provider::Anthropic, "https://api.anthropic.com/v1"),
            Some("https://api.anthropic.com/v1/models?limit=1000".into())
        );
        assert_eq!(
            url(Provider::Gemini, "https://generativelanguage.googleapis.com/v1beta"),
            Some("https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000".into())
        );
        assert_eq!(url(Provider::Ollama, "http://localhost:11434/api"), Some("http://localhost:11434/api/tags".into()));
        assert_eq!(
            url(Provider::AzureOpenAi, "https://r.openai.azure.com"),
            None,
            "deployments are named in the portal"
        );
        assert_eq!(
            url(Provider::AzureOpenAi, "https://r.openai.azure.com/openai/v1"),
            Some("https://r.openai.azure.com/openai/v1/models".into())
        );
        let anthropic = build_models_request(&settings(Provider::Anthropic, "https://api.anthropic.com/v1")).unwrap();
        assert!(anthropic.headers.contains(&("x-api-key".into(), "k".into())));
        assert!(anthropic.headers.contains(&("anthropic-version".into(), "2023-06-01".into())));
    }

    /// The answers in the shapes of each API reference's "list models".
    #[test]
    fn each_familys_answer_gives_the_names_the_settings_take() {
        let openai = json!({"object": "list", "data": [
            {"id": "gpt-4.1-mini", "object": "model", "created": 1744316542, "owned_by": "system"},
            {"id": "gpt-4.1", "object": "model", "created": 1744316542, "owned_by": "system"}
        ]});
        assert_eq!(parse_models_response(Provider::OpenAi, "u", &ok(openai)).unwrap(), ["gpt-4.1", "gpt-4.1-mini"]);
        let anthropic = json!({"data": [
            {"created_at": "2025-05-22T00:00:00Z", "display_name": "Claude Sonnet 4", "id": "claude-sonnet-4-20250514", "type": "model"}
        ], "first_id": "claude-sonnet-4-20250514", "has_more": false, "last_id": "claude-sonnet-4-20250514"});
        assert_eq!(
            parse_models_response(Provider::Anthropic, "u", &ok(anthropic)).unwrap(),
            ["claude-sonnet-4-20250514"]
        );
        let gemini = json!({"models": [
            {"name": "models/gemini-2.5-flash", "version": "001", "displayName": "Gemini 2.5 Flash",
             "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent"]},
            {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]}
        ], "nextPageToken": "x"});
        assert_eq!(parse_models_response(Provider::Gemini, "u", &ok(gemini)).unwrap(), ["gemini-2.5-flash"]);
        let ollama = json!({"models": [
            {"name": "qwen3:8b", "model": "qwen3:8b", "modified_at": "2025-05-01T10:00:00Z", "size": 5225388164u64,
             "digest": "500a1f067a9f", "details": {"format": "gguf", "family": "qwen3", "parameter_size": "8.2B"}}
        ]});
        assert_eq!(parse_models_response(Provider::Ollama, "u", &ok(ollama)).unwrap(), ["qwen3:8b"]);
    }

    #[test]
    fn a_failed_or_foreign_answer_says_why() {
        let denied = HttpResponse {
            status: 401,
            body: r#"{"error":{"message":"Incorrect API key provided."}}"#.into(),
            ..HttpResponse::default()
        };
        assert!(matches!(
            parse_models_response(Provider::OpenAi, "u", &denied),
            Err(LlmError::Http { status: 401, .. })
        ));
        let foreign = parse_models_response(Provider::Ollama, "u", &ok(json!({"data": []}))).unwrap_err();
        assert!(matches!(&foreign, LlmError::Malformed(m) if m.contains("\"models\"")), "{foreign}");
        assert!(matches!(parse_models_response(Provider::OpenAi, "u", &ok(json!(5))), Err(LlmError::Malformed(_))));
    }
}
