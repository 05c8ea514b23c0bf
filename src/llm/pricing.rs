//! What a model call costs, in US dollars, from the tokens it used.
//!
//! Users asked to see what a task costs. Providers report tokens, not money, so the cost comes
//! from a price table: a small built-in one ([`DEFAULT_PRICES`]) for well-known models, and the
//! user's own entries from the settings, which are consulted first. Prices change and the
//! built-in figures are only defaults: a user who pays something else (a gateway's mark-up, a
//! newer price) overrides them. A model found in neither table has no cost (`None`) rather than a
//! guessed one.
//!
//! A price belongs to a model-name prefix. The prefix matches the model name itself and any name
//! that continues it after a separator (`-`, `:`, `@`, `/` or `_`), such as a dated version
//! (`gpt-4.1-2025-04-14`); a prefix that ends in a separator (`gpt-`) matches whatever follows.
//! `gpt-5` therefore does not price `gpt-5.1`, a different model. When several prefixes match,
//! the longest wins (`gpt-4.1-mini` over `gpt-4.1`). Names are compared without regard to case,
//! and a router's vendor part (`openai/gpt-4.1`, `models/gemini-2.5-pro`) is looked past.

use super::Usage;
use serde::{Deserialize, Serialize};

/// The price of the models whose names start with `model_prefix`, in USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelPrice {
    pub model_prefix: String,
    pub input_per_million: f64,
    pub output_per_million: f64,
    /// Input read from the provider's prompt cache; none = the built-in figure for the model,
    /// or else the input price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_million: Option<f64>,
}

/// Built-in prices: `(model prefix, USD per million input tokens, USD per million output
/// tokens)`, as the providers published them for standard (not batch, not cached) use in 2025.
/// Editable defaults, not a source of truth: the settings' `prices` override any of them.
pub const DEFAULT_PRICES: &[(&str, f64, f64)] = &[
    // OpenAI
    ("gpt-5", 1.25, 10.0),
    ("gpt-5-mini", 0.25, 2.0),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-5-pro", 15.0, 120.0),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4o", 2.50, 10.0),
    ("gpt-4o-mini", 0.15, 0.60),
    // Anthropic
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-3-7-sonnet", 3.0, 15.0),
    ("claude-haiku-4-5", 1.0, 5.0),
    ("claude-3-5-haiku", 0.80, 4.0),
    // Google (2.5 Pro: prompts up to 200k tokens; longer ones cost more)
    ("gemini-2.5-pro", 1.25, 10.0),
    ("gemini-2.5-flash", 0.30, 2.50),
    ("gemini-2.5-flash-lite", 0.10, 0.40),
    ("gemini-2.0-flash", 0.10, 0.40),
    // DeepSeek (input at the cache-miss price)
    ("deepseek-chat", 0.28, 0.42),
];

/// Built-in prices of input read from the provider's prompt cache, USD per million tokens, as
/// published in 2025: OpenAI's cached input, Anthropic's cache reads (a tenth of the input
/// price), Gemini's context-caching price, DeepSeek's cache hits. A model without one is
/// charged its input price for cached tokens too. (Writing Anthropic's cache costs a quarter
/// more than input; those tokens are charged as plain input.)
pub const DEFAULT_CACHED_PRICES: &[(&str, f64)] = &[
    ("gpt-5", 0.125),
    ("gpt-5-mini", 0.025),
    ("gpt-5-nano", 0.005),
    ("gpt-4.1", 0.50),
    ("gpt-4.1-mini", 0.10),
    ("gpt-4.1-nano", 0.025),
    ("gpt-4o", 1.25),
    ("gpt-4o-mini", 0.075),
    ("claude-sonnet-4", 0.30),
    ("claude-3-7-sonnet", 0.30),
    ("claude-haiku-4-5", 0.10),
    ("claude-3-5-haiku", 0.08),
    ("gemini-2.5-pro", 0.125),
    ("gemini-2.5-flash", 0.03),
    ("gemini-2.5-flash-lite", 0.01),
    ("gemini-2.0-flash", 0.025),
    ("deepseek-chat", 0.028),
];

/// The user's prices in front of the built-in ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    user: Vec<ModelPrice>,
}

impl PriceTable {
    pub fn new(user: Vec<ModelPrice>) -> Self {
        PriceTable { user }
    }

    /// `(input, output)` USD per million tokens for `model`: the user's longest matching prefix,
    /// else the built-in one; `None` when neither table knows the model.
    pub fn price(&self, model: &str) -> Option<(f64, f64)> {
        let user = self.user.iter().map(|p| (p.model_prefix.as_str(), p.input_per_million, p.output_per_million));
        longest_match(user, model).or_else(|| longest_match(DEFAULT_PRICES.iter().copied(), model))
    }

    /// USD per million input tokens read from the cache for `model`: the price of the user's
    /// entry that prices the model, when it names one; else the built-in one, when the model's
    /// price is the built-in one too; else its input price.
    pub fn cached_price(&self, model: &str) -> Option<f64> {
        let (input, _) = self.price(model)?;
        let user = self.user.iter().map(|p| (p.model_prefix.as_str(), p.input_per_million, p.output_per_million));
        if longest_match(user, model).is_some() {
            let own = self
                .user
                .iter()
                .map(|p| (p.model_prefix.as_str(), p.cached_input_per_million.unwrap_or(p.input_per_million), 0.0));
            return longest_match(own, model).map(|(cached, _)| cached);
        }
        let built_in = DEFAULT_CACHED_PRICES.iter().map(|&(prefix, cached)| (prefix, cached, 0.0));
        Some(longest_match(built_in, model).map_or(input, |(cached, _)| cached))
    }

    /// What `usage` of `model` cost in USD, cached input at its price; `None` for a model
    /// without a price.
    pub fn cost_usd(&self, model: &str, usage: Usage) -> Option<f64> {
        let (input, output) = self.price(model)?;
        let cached_price = self.cached_price(model).unwrap_or(input);
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        Some((fresh as f64 * input + cached as f64 * cached_price + usage.output_tokens as f64 * output) / 1_000_000.0)
    }
}

/// What `usage` of `model` cost in USD by the built-in prices; `None` for a model without one.
pub fn cost_usd(model: &str, usage: Usage) -> Option<f64> {
    PriceTable::default().cost_usd(model, usage)
}

fn longest_match<'a>(prices: impl Iterator<Item = (&'a str, f64, f64)>, model: &str) -> Option<(f64, f64)> {
    let model = model.trim().to_ascii_lowercase();
    let bare = model.rsplit('/').next().unwrap_or(&model);
    prices
        .filter(|(prefix, _, _)| {
            let prefix = prefix.trim().to_ascii_lowercase();
            !prefix.is_empty() && (continues(&model, &prefix) || continues(bare, &prefix))
        })
        .max_by_key(|(prefix, _, _)| prefix.trim().len())
        .map(|(_, input, output)| (input, output))
}

/// Whether `name` is `prefix` or continues it after a separator.
fn continues(name: &str, prefix: &str) -> bool {
    const SEPARATORS: &[char] = &['-', ':', '@', '/', '_'];
    match name.strip_prefix(prefix) {
        None => false,
        Some(rest) => rest.is_empty() || prefix.ends_with(SEPARATORS) || rest.starts_with(SEPARATORS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage::new(input, output)
    }

    #[test]
    fn the_longest_built_in_prefix_prices_dated_and_routed_names() {
        let table = PriceTable::default();
        assert_eq!(table.price("gpt-4.1-mini-2025-04-14"), Some((0.40, 1.60)));
        assert_eq!(table.price("gpt-4.1-2025-04-14"), Some((2.0, 8.0)));
        assert_eq!(table.price("openai/gpt-4o-mini"), Some((0.15, 0.60)));
        assert_eq!(table.price("models/gemini-2.5-flash-lite"), Some((0.10, 0.40)));
        assert_eq!(table.price("Claude-Sonnet-4-20250514"), Some((3.0, 15.0)));
    }

    #[test]
    fn a_prefix_does_not_price_a_different_model() {
        assert_eq!(cost_usd("gpt-5.1", usage(1, 1)), None);
        assert_eq!(cost_usd("gpt-4.10", usage(1, 1)), None);
        assert_eq!(cost_usd("llama3.1:8b", usage(1, 1)), None);
        assert_eq!(cost_usd("", usage(1, 1)), None);
    }

    #[test]
    fn cost_is_tokens_times_price_per_million() {
        let cost = cost_usd("gpt-4.1-mini", usage(1_000_000, 500_000)).unwrap();
        assert!((cost - (0.40 + 0.80)).abs() < 1e-9, "{cost}");
        let cost = cost_usd("claude-sonnet-4-5", usage(2000, 100)).unwrap();
        assert!((cost - (0.006 + 0.0015)).abs() < 1e-12, "{cost}");
    }

    #[test]
    fn cached_input_costs_its_own_price() {
        // 1M input of which 800k came from the cache, on gpt-4.1-mini: 200k at 0.40, 800k at 0.10.
        let cost = cost_usd("gpt-4.1-mini", usage(1_000_000, 0).with_cached(800_000)).unwrap();
        assert!((cost - (0.08 + 0.08)).abs() < 1e-9, "{cost}");
        // A model without a cached price: its input price for all.
        let table = PriceTable::new(vec![ModelPrice {
            model_prefix: "mine".into(),
            input_per_million: 2.0,
            output_per_million: 2.0,
            cached_input_per_million: None,
        }]);
        let cost = table.cost_usd("mine", usage(1_000_000, 0).with_cached(500_000)).unwrap();
        assert!((cost - 2.0).abs() < 1e-9, "{cost}");
        // The user's entry with a cached price; and one without wins over the built-in one.
        let table = PriceTable::new(vec![
            ModelPrice {
                model_prefix: "mine".into(),
                input_per_million: 2.0,
                output_per_million: 2.0,
                cached_input_per_million: Some(0.5),
            },
            ModelPrice {
                model_prefix: "gpt-4.1".into(),
                input_per_million: 3.0,
                output_per_million: 8.0,
                cached_input_per_million: None,
            },
        ]);
        assert_eq!(table.cached_price("mine"), Some(0.5));
        assert_eq!(table.cached_price("gpt-4.1"), Some(3.0));
        assert_eq!(table.cached_price("gpt-4.1-mini"), Some(3.0));
        assert_eq!(PriceTable::default().cached_price("claude-sonnet-4-5"), Some(0.30));
        assert_eq!(PriceTable::default().cached_price("llama3"), None);
    }

    #[test]
    fn user_prices_come_first_and_add_models() {
        let table = PriceTable::new(vec![
            ModelPrice {
                model_prefix: "gpt-".into(),
                input_per_million: 1.0,
                output_per_million: 1.0,
                cached_input_per_million: None,
            },
            ModelPrice {
                model_prefix: "my-finetune".into(),
                input_per_million: 3.0,
                output_per_million: 6.0,
                cached_input_per_million: None,
            },
        ]);
        // The user's short prefix wins over the built-in longer one.
        assert_eq!(table.price("gpt-4.1-mini"), Some((1.0, 1.0)));
        assert_eq!(table.price("my-finetune-v2"), Some((3.0, 6.0)));
        assert_eq!(table.price("gemini-2.5-pro"), Some((1.25, 10.0)));
        let cost = table.cost_usd("my-finetune", usage(1_000_000, 1_000_000)).unwrap();
        assert!((cost - 9.0).abs() < 1e-9);
    }
}
