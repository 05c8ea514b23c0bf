//! `ask_human`: pause and ask the user (a code sent to their phone, a choice only they can make).
//!
//! The question appears in the side panel with an answer box; the task waits until the user
//! answers (or stops it), and the answer comes back as the action's result.

use super::{ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskHumanParams {
    /// The question for the user: short, self-contained, saying why it is needed.
    pub question: String,
}

pub struct AskHuman;

impl ActionDef for AskHuman {
    type Params = AskHumanParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "ask_human",
        description: "Ask the user a question and wait for the answer: for what only they know or may decide (a one-time code, a choice, a confirmation before something irreversible).",
        domains: &[],
        page_filter: None,
        url_filter: None,
        terminates_sequence: true,
        needs: Needs::NOTHING,
    };

    fn check(params: &AskHumanParams, _schema: &serde_json::Value) -> Result<(), String> {
        if params.question.trim().is_empty() {
            return Err("field `question`: must not be empty".into());
        }
        Ok(())
    }

    fn describe(params: &AskHumanParams, _page: &PageState) -> crate::message::Said {
        let question = params.question.trim();
        crate::message::Said::new("do_ask_human", format!("ask the user: {question}"), [question])
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: AskHumanParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let question = params.question.trim().to_string();
        ctx.events.question_asked(ctx.step, &question);
        let answer = ctx.browser.ask_human(&question).await?;
        // The person may type a value they keep as a secret: it is masked wherever it is shown.
        let shown = ctx.secrets.redact(&answer);
        ctx.events.question_answered(ctx.step, &shown);
        // The user's words are the task giver's, not the page's: they are not fenced.
        Ok(ActionResult::ok(format!("The user answered: {}", answer.trim())))
    }
}
