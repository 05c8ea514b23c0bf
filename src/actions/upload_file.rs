//! `upload_file`: give a page one of the files the person attached to the task.
//!
//! The person attaches files in the side panel; the model knows them by name, type and size,
//! never by their bytes, and picks one by name (the parameter's schema lists the names, so it
//! cannot ask for another). The page gets it the way a person would give it: picked in a file
//! field (the element, or the field it holds or labels), or dropped on a drop zone. Offered
//! only to a task that has files.

use super::{element_label, observed_element, ActionContext, ActionDef, ActionResult, ActionSpec, Needs};
use crate::browser::{Browser, BrowserError, PageState, UploadTarget};
use crate::llm::LlmTransport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadFileParams {
    /// The index of the file field (`<input type=file>`), the button or label that opens one,
    /// or the area to drop the file on.
    pub index: u32,
    /// The name of the attached file to give, exactly as listed in `<attached_files>`.
    pub file: String,
}

pub struct UploadFile;

impl ActionDef for UploadFile {
    type Params = UploadFileParams;
    const SPEC: ActionSpec = ActionSpec {
        name: "upload_file",
        description: "Give the page a file the person attached to the task: put it into a file field (or the button or label that opens one), or drop it on a drop area.",
        domains: &[],
        page_filter: Some(|page, _| page.snapshot.has_elements()),
        // Offered only to a task the person attached files to.
        url_filter: Some(|_, options| !options.files.is_empty()),
        terminates_sequence: false,
        needs: Needs::PAGE,
    };

    /// The name must be one the schema lists (the task's files).
    fn check(params: &UploadFileParams, schema: &serde_json::Value) -> Result<(), String> {
        let Some(names) = schema.pointer("/properties/file/enum").and_then(serde_json::Value::as_array) else {
            return Ok(());
        };
        if names.iter().any(|n| n.as_str() == Some(params.file.as_str())) {
            return Ok(());
        }
        let listed: Vec<&str> = names.iter().filter_map(serde_json::Value::as_str).collect();
        Err(format!(
            "field `file`: {:?} is not an attached file; the attached files are {}",
            params.file,
            listed.join(", ")
        ))
    }

    fn describe(params: &UploadFileParams, page: &PageState) -> crate::message::Said {
        let label = element_label(page, params.index);
        crate::message::Said::new(
            "do_upload_file",
            format!("upload {} to {label}", params.file),
            [params.file.clone(), label],
        )
    }

    async fn execute<B: Browser, T: LlmTransport>(
        params: UploadFileParams,
        ctx: &mut ActionContext<'_, B, T>,
    ) -> Result<ActionResult, BrowserError> {
        let line = match observed_element(ctx.page, params.index) {
            Ok(line) => line,
            Err(result) => return Ok(result),
        };
        let Some(file) = ctx.options.files.iter().find(|f| f.name == params.file) else {
            let names: Vec<&str> = ctx.options.files.iter().map(|f| f.name.as_str()).collect();
            return Ok(ActionResult::error(format!(
                "No file named {:?} was attached to the task; the attached files are: {}.",
                params.file,
                names.join(", ")
            )));
        };
        let outcome = ctx.browser.upload_file(params.index, file).await?;
        let name = crate::dom::untrusted(&file.name, 200);
        let message = match (outcome.target, outcome.accepted) {
            (UploadTarget::Input, true) => format!("Put {name} into the file field of {line}"),
            (UploadTarget::Input, false) => {
                return Ok(ActionResult::error(format!(
                    "The file field of {line} did not keep {name} (it may take other kinds of files, or one at a time); look at the page for why"
                )))
            }
            (UploadTarget::Drop, true) => format!("Dropped {name} on {line}; the page took it"),
            (UploadTarget::Drop, false) => {
                return Ok(ActionResult::error(format!(
                    "Dropped {name} on {line}, but the page did not take the drop: {line} holds no file field and is not a drop area. Use the file field, or the button that opens it"
                )))
            }
        };
        Ok(ActionResult::ok(message).with_effect(outcome.effect))
    }
}

/// The parameters' schema for a task's files: `file` is one of their names.
pub(crate) fn schema_for(files: &[crate::browser::TaskFile]) -> serde_json::Value {
    let mut schema = super::constant_schema("UploadFile");
    let names: Vec<serde_json::Value> = files.iter().map(|f| serde_json::Value::from(f.name.clone())).collect();
    if let Some(file) = schema.pointer_mut("/properties/file").and_then(serde_json::Value::as_object_mut) {
        file.insert("enum".into(), serde_json::Value::Array(names));
    }
    schema
}
