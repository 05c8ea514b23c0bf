//! `send_keys`: press keys as a person would, into whatever has focus.
//!
//! Keys are sent as trusted debugger key events: script-made key events do not trigger the
//! browser's own behaviour, so an Enter made by a script would not submit a form.

use super::keys::parse_keys;
use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysParams {
    /// Keys separated by spaces, with modifiers joined by `+`: "Enter", "Escape",
    /// "Control+a", "Shift+Tab", "ArrowDown ArrowDown Enter".
    pub keys: String,
}

pub struct SendKeys;

impl ActionDef for SendKeys {
    type Params = SendKeysParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "send_keys",
        description:
            "Press keys (Enter, Escape, Tab, arrows, shortcuts like Control+a) in the focused element or page.",
        domains: &[],
        page_filter: Some(|page, _| page.notice.is_none()),
        url_filter: None,
        terminates_sequence: false,
        needs: Needs::DEBUGGER,
    };

    fn check(params: &SendKeysParams, _schema: &serde_json::Value) -> Result<(), String> {
        parse_keys(&params.keys).map(|_| ()).map_err(|e| format!("field `keys`: {e}"))
    }

    fn describe(params: &SendKeysParams, _page: &PageState) -> crate::message::Said {
        let keys = &params.keys;
        crate::message::Said::new("do_send_keys", format!("press {keys}"), [keys])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: SendKeysParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let keys = match parse_keys(&params.keys) {
            Ok(keys) => keys,
            Err(e) => return Ok(ActionResult::error(e)),
        };
        let effect = ctx.browser.send_keys(&keys).await?;
        Ok(ActionResult::ok(format!("Pressed {}", params.keys)).with_effect(effect))
    }
}
