//! `evaluate`: run JavaScript in the page — only on sites where the user allowed it.
//!
//! A script can do anything the page can, so the action is offered only on hosts the user
//! listed in the options (`evaluate_domains`); elsewhere it is not in the schema at all.

use super::ActionOptions;
use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::dom::untrusted_block;
use crate::llm::LlmTransport;
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

/// The script as run: first a check, in the page, that the page is still at `hostname` (the
/// host the worker just allowed, as the page itself writes it), then the model's code, whose
/// completion value is the result. The check compares `location.hostname`, which a page cannot
/// redefine, with a string, and calls nothing a page could replace (no prototype method, no
/// `JSON`, no `URL`): the decision itself was made in the worker.
pub fn guarded_script(code: &str, hostname: &str) -> String {
    let quoted = serde_json::to_string(hostname).unwrap_or_else(|_| "\"\"".into());
    format!(
        "if (location.hostname !== {quoted}) throw 'the page left {}, where the user allowed scripts';\n{code}",
        hostname.replace(['\'', '\\', '\n'], "")
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

    fn describe(params: &EvaluateParams, _page: &PageState) -> crate::message::Said {
        let first: String = params.code.lines().next().unwrap_or("").chars().take(60).collect();
        crate::message::Said::new("do_evaluate", format!("run script {first}"), [first])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: EvaluateParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        // Decided here, in the worker, on the address the debugger's target has now: the page
        // may have moved on since the step observed it (a redirect, a click earlier in the step).
        let url = ctx.browser.script_target_url().await?;
        let target = match crate::web::WebUrl::parse(&url) {
            Ok(target) if evaluate_allowed(target.host(), ctx.options) => target,
            Ok(target) => {
                return Ok(ActionResult::error(format!(
                    "The page is now on {}, where the user did not allow scripts; the script did not run.",
                    crate::dom::untrusted(target.host(), 100)
                )))
            }
            Err(_) => return Ok(ActionResult::error("The tab is not on a web page now; the script did not run.")),
        };
        let script = guarded_script(&params.code, target.hostname());
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
    fn the_script_checks_the_host_in_the_page_with_nothing_a_page_can_replace() {
        let script = guarded_script("window.total * 2", "shop.example.com");
        let (guard, code) = script.split_once('\n').unwrap();
        assert_eq!(
            guard,
            r#"if (location.hostname !== "shop.example.com") throw 'the page left shop.example.com, where the user allowed scripts';"#
        );
        assert_eq!(code, "window.total * 2");
        // A host that tries to close the string is written as data.
        let odd = guarded_script("1", "a\"b'c");
        assert!(odd.starts_with(r#"if (location.hostname !== "a\"b'c") throw 'the page left a"bc,"#), "{odd}");
    }
}
