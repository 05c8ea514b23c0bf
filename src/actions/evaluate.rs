//! `evaluate`: run JavaScript in the page — only on sites where the user allowed it.
//!
//! A script can do anything the page can, so the action is offered only on hosts the user
//! listed in the options (`evaluate_domains`); elsewhere it is not in the schema at all.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::dom::untrusted_block;
use crate::llm::LlmTransport;
use crate::settings::ActionOptions;
use crate::web::host_matches;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateParams {
    /// A JavaScript expression; its value (awaited if a promise) is returned as JSON.
    pub code: String,
}

pub struct Evaluate;

/// Whether the user allowed scripts on this host.
pub fn evaluate_allowed(host: &str, options: &ActionOptions) -> bool {
    options.evaluate_domains.iter().any(|glob| host_matches(host, glob))
}

/// The script as run: first a check, in the page itself, that the page is still on a host the
/// user allowed — the tab may have moved on since the step observed it (a redirect, a click
/// earlier in the step) — then the model's code, whose completion value is the result.
pub fn guarded_script(code: &str, allowed: &[String]) -> String {
    let globs = serde_json::to_string(allowed).unwrap_or_else(|_| "[]".into());
    format!(
        "{{ const host = location.hostname.toLowerCase(); \
         if (!{globs}.some((g) => g === '*' || host === g || (g.startsWith('*.') && (host === g.slice(2) || host.endsWith(g.slice(1)))))) \
         throw new Error('scripts are not allowed on ' + host + '; the page is no longer on a host where the user allowed them'); }}\n{code}"
    )
}

impl ActionDef for Evaluate {
    type Params = EvaluateParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "evaluate",
        description: "Run a JavaScript expression in the page and get its value as JSON. Use only when no other action can do it.",
        domains: &[],
        page_filter: Some(|page, _| page.notice.is_none()),
        url_filter: Some(|host, options| host.is_some_and(|h| evaluate_allowed(h, options))),
        terminates_sequence: false,
        needs: Needs::DEBUGGER,
    };

    fn check(params: &EvaluateParams, _schema: &serde_json::Value) -> Result<(), String> {
        if params.code.trim().is_empty() {
            return Err("field `code`: must not be empty".into());
        }
        if params.code.len() > 20_000 {
            return Err("field `code`: at most 20000 characters".into());
        }
        Ok(())
    }

    fn describe(params: &EvaluateParams, _page: &PageState) -> String {
        let first: String = params.code.lines().next().unwrap_or("").chars().take(60).collect();
        format!("run script {first}")
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: EvaluateParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let script = guarded_script(&params.code, &ctx.options.evaluate_domains);
        match ctx.browser.evaluate(&script).await {
            Ok(value) => Ok(ActionResult::ok("Ran the script; its value is in the results below")
                .with_detail(untrusted_block(&value, 10_000))),
            Err(BrowserError::Script(reason)) => {
                Ok(ActionResult::error(format!("The script threw: {}", crate::dom::untrusted(&reason, 1_000))))
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_checks_the_host_in_the_page_before_the_code_runs() {
        let script = guarded_script("window.total * 2", &["shop.example.com".into(), "*.example.org".into()]);
        let (guard, code) = script.split_once('\n').unwrap();
        assert!(guard.starts_with("{ const host = location.hostname.toLowerCase();"), "{guard}");
        assert!(guard.contains(r#"["shop.example.com","*.example.org"].some("#), "{guard}");
        assert!(guard.ends_with("}"), "the guard is a block, so the code's value is the script's");
        assert_eq!(code, "window.total * 2");
    }
}
