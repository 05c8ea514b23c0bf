//! `skill_<name>`: a skill the person saved, called by the model (see `agent::skill`).
//!
//! Every saved skill is its own branch of the union, offered on its site only, with its own
//! parameters — so the registry holds one [`UseSkill`] entry per skill ([`skill_action`]), not
//! the one the `registry!` list makes (that one is never offered). Calling a skill does not run
//! in the page: the loop sees [`Action::UseSkill`] and lets the skill's saved steps stand in for
//! the model's next answers.

use super::{Action, ActionContext, ActionDef, ActionResult, ActionSpec, Needs, RegisteredAction};
use crate::agent::skill::Skill;
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
        // Its steps navigate and change the page.
        terminates_sequence: true,
        needs: Needs::PAGE,
    };

    fn name_of(params: &SkillCall) -> &str {
        &params.skill
    }

    fn element_index(_params: &SkillCall) -> Option<u32> {
        None
    }

    fn describe(params: &SkillCall, _page: &PageState) -> String {
        let name = params.skill.strip_prefix(crate::agent::skill::ACTION_PREFIX).unwrap_or(&params.skill);
        let values: Vec<String> = params.values.iter().map(|(k, v)| format!("{k}: \"{v}\"")).collect();
        if values.is_empty() {
            format!("skill {name}")
        } else {
            format!("skill {name} ({})", values.join(", "))
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

/// The union branch of a saved skill: its name, what it does, its site, its parameters.
pub fn skill_action(skill: &Skill) -> RegisteredAction {
    RegisteredAction {
        name: Cow::Owned(skill.action.clone()),
        description: Cow::Owned(skill.action_description()),
        spec: &UseSkill::SPEC,
        def: "UseSkill",
        domains: vec![skill.domain.clone()],
        params_schema: skill.params_schema(),
        parse: |registered, params| {
            let mut call: SkillCall = super::parse_params::<UseSkill>(params, &registered.params_schema)?;
            let expected: Vec<&str> = registered.params_schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            if let Some(unknown) = call.values.keys().find(|k| !expected.contains(&k.as_str())) {
                return Err(format!("field `{unknown}`: the skill has no such parameter"));
            }
            if let Some(missing) = expected.iter().find(|k| !call.values.contains_key(**k)) {
                return Err(format!("missing field `{missing}`"));
            }
            call.skill = registered.name.to_string();
            Ok(Action::UseSkill(call))
        },
    }
}
