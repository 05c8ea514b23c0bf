//! `skill_<name>`: a skill the person saved, called by the model (see `agent::skill`).
//!
//! Every saved skill is its own branch of the union, offered on its site only, with its own
//! parameters — so the registry holds one [`UseSkill`] entry per skill ([`skill_action`]), not
//! the one the `registry!` list makes (that one is never offered). Calling a skill does not run
//! in the page: the loop sees [`Action::UseSkill`] and lets the skill's saved steps stand in for
//! the model's next answers.

use super::schema_check::check_value;
use super::{Action, ActionContext, ActionDef, ActionResult, ActionSpec, Needs, RegisteredAction};
use crate::browser::{Browser, BrowserError, PageState};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A call of a skill: which one (its branch name) and the value of each parameter. On the wire
/// it is only the parameters, `{name: value}`, as the model writes them: the branch it came in
/// names the skill.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillCall {
    /// The branch called, e.g. `skill_order_the_usual`; set from the branch, not the model.
    pub skill: String,
    /// The parameters, as the model gave them (its branch's schema checked their names).
    pub values: BTreeMap<String, String>,
}

impl Serialize for SkillCall {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.values.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SkillCall {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(SkillCall { skill: String::new(), values: BTreeMap::deserialize(deserializer)? })
    }
}

impl JsonSchema for SkillCall {
    fn schema_name() -> Cow<'static, str> {
        "SkillCall".into()
    }

    /// Only a placeholder: each skill's branch carries its own schema (`Skill::params_schema`).
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object", "additionalProperties": {"type": "string"}})
    }
}

pub struct UseSkill;

impl ActionDef for UseSkill {
    type Params = SkillCall;
    const SPEC: ActionSpec = ActionSpec {
        name: "skill",
        description: "A saved skill.",
        domains: &[],
        page_filter: None,
        url_filter: None,
        // Its steps navigate and change the page.
        terminates_sequence: true,
        needs: Needs::PAGE,
    };

    /// The names and values the skill's branch asks for (the schema it was offered with).
    fn check(params: &SkillCall, schema: &serde_json::Value) -> Result<(), String> {
        let values = serde_json::to_value(&params.values).map_err(|e| e.to_string())?;
        check_value(&values, schema, "parameters")
    }

    fn name_of(params: &SkillCall) -> &str {
        &params.skill
    }

    fn element_index(_params: &SkillCall) -> Option<u32> {
        None
    }

    fn describe(params: &SkillCall, _page: &PageState) -> crate::message::Said {
        let name = params.skill.strip_prefix(SKILL_ACTION_PREFIX).unwrap_or(&params.skill);
        let values: Vec<String> = params.values.iter().map(|(k, v)| format!("{k}: \"{v}\"")).collect();
        if values.is_empty() {
            crate::message::Said::new("do_skill", format!("skill {name}"), [name])
        } else {
            let values = values.join(", ");
            crate::message::Said::new("do_skill_with", format!("skill {name} ({values})"), [name, values.as_str()])
        }
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: SkillCall,
        _ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        // The loop starts skills itself (`Agent::act`); reaching this is a fault of the loop.
        Ok(ActionResult::error(format!("The skill `{}` could not be started here.", params.skill)))
    }
}

/// What every saved skill's branch name starts with (`skill_` and the name made an identifier).
pub const SKILL_ACTION_PREFIX: &str = "skill_";

/// The union branch of a saved skill: its branch name, what it does, the site it is offered on
/// and the schema of its parameters (`agent::skill::Skill::registered` gives them).
pub fn skill_action(
    action: &str,
    description: String,
    domain: &str,
    params_schema: serde_json::Value,
) -> RegisteredAction {
    RegisteredAction {
        name: Cow::Owned(action.to_string()),
        description: Cow::Owned(description),
        spec: &UseSkill::SPEC,
        def: "UseSkill",
        domains: vec![domain.to_string()],
        params_schema,
        parse: |registered, params| {
            let call = super::parse_params::<UseSkill>(params, &registered.params_schema)?;
            Ok(Action::UseSkill(SkillCall { skill: registered.name.to_string(), ..call }))
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_is_checked_against_the_skills_own_parameters() {
        let schema = json!({
            "type": "object",
            "properties": {"product": {"type": "string"}},
            "required": ["product"],
            "additionalProperties": false,
        });
        let branch = skill_action("skill_find", "Find a product".into(), "shop.example", schema);
        match branch.parse(json!({"product": "teapot"})) {
            Ok(Action::UseSkill(call)) => {
                assert_eq!(call.skill, "skill_find");
                assert_eq!(call.values["product"], "teapot");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(branch.parse(json!({})).unwrap_err(), "`parameters.product` is missing");
        assert_eq!(
            branch.parse(json!({"product": "x", "colour": "red"})).unwrap_err(),
            "`parameters.colour` is not a field of the requested shape"
        );
        assert!(branch.parse(json!({"product": 3})).is_err(), "a number where a text goes");
    }
}
