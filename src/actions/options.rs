//! The options the actions are built with: which are offered, the search engine, where
//! scripts may run, the task's files. Defined beside the actions, so that `actions` needs
//! nothing above it; `settings` reads them from storage and checks them.

use serde::{Deserialize, Serialize};

/// Which actions are offered, and how some of them behave.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ActionOptions {
    pub search_engine: SearchEngine,
    /// Host globs where `evaluate` is offered; empty = nowhere.
    pub evaluate_domains: Vec<String>,
    /// When not empty, only these actions (and `done`) are offered.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// The files the person attached to the task (`upload_file`); not a setting, but the task's.
    pub files: Vec<crate::browser::TaskFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchEngine {
    #[default]
    Duckduckgo,
    Google,
    Bing,
}

impl SearchEngine {
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "duckduckgo" | "ddg" => Some(SearchEngine::Duckduckgo),
            "google" => Some(SearchEngine::Google),
            "bing" => Some(SearchEngine::Bing),
            _ => None,
        }
    }

    /// The results page for `query`.
    pub fn results_url(self, query: &str) -> String {
        let q = crate::web::encode_query_component(query);
        match self {
            SearchEngine::Duckduckgo => format!("https://duckduckgo.com/?q={q}"),
            SearchEngine::Google => format!("https://www.google.com/search?q={q}&udm=14"),
            SearchEngine::Bing => format!("https://www.bing.com/search?q={q}"),
        }
    }
}
