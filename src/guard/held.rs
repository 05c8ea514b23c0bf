//! Acts held for the person's yes, decided by what the page says of the element, never by what
//! the model says of it: a click or a submit whose element's name, value, title or form action
//! says buy, pay, order, send, delete, … (`held_words.json`, English and Chinese); a submitted
//! form that holds a filled password, payment fields or chosen files; a download of an
//! executable or an archive.
//!
//! The content script reads the element's facts ([`ActFacts`]) just before the act, and the
//! act carries them back: the page refuses it if anything changed in between (a label swapped
//! after the check, a form's action moved), so what was checked is what is clicked.

use serde::Serialize;
use std::sync::OnceLock;

/// What the page says of the element an act is aimed at, read by the content script just
/// before the act (`extension/content/act-facts.js`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ActFacts {
    pub tag: String,
    pub role: String,
    /// The `type` of an input or a button.
    #[serde(rename = "type")]
    pub input_type: String,
    /// The accessible name, as a screen reader gets it.
    pub name: String,
    /// The text it shows, which a page may make say something else than its name.
    pub text: String,
    /// A button's or a submit input's value.
    pub value: String,
    pub title: String,
    /// A link's target, absolute.
    pub href: String,
    /// A link's `download` attribute, when it has one.
    pub download: Option<String>,
    /// Whether the act submits `form` (a submit button, or Enter in one of its fields).
    pub submits: bool,
    /// The form the element belongs to.
    pub form: Option<FormFacts>,
    /// The address of the document the element is in.
    pub document_url: String,
}

/// A string field of a JSON object, empty when missing or not a string.
fn text_of(value: &serde_json::Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_string()
}

impl ActFacts {
    /// The facts as the content script wrote them (`extension/content/act-facts.js`); a field
    /// missing or of another type reads as empty, so a page can only make the facts say less.
    pub fn from_json_text(text: &str) -> Result<ActFacts, String> {
        let value: serde_json::Value = crate::json::from_text(text).map_err(|e| e.to_string())?;
        if !value.is_object() {
            return Err("the facts are not an object".into());
        }
        let form = value["form"].is_object().then(|| {
            let form = &value["form"];
            FormFacts {
                action: text_of(form, "action"),
                method: text_of(form, "method"),
                submitter: text_of(form, "submitter"),
                more_fields: u32::try_from(form["more_fields"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX),
                fields: form["fields"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .take(100)
                    .map(|f| FieldFacts {
                        tag: text_of(f, "tag"),
                        input_type: text_of(f, "type"),
                        autocomplete: text_of(f, "autocomplete"),
                        name: text_of(f, "name"),
                        id: text_of(f, "id"),
                        placeholder: text_of(f, "placeholder"),
                        label: text_of(f, "label"),
                        filled: f["filled"].as_bool().unwrap_or(false),
                        value: text_of(f, "value"),
                    })
                    .collect(),
            }
        });
        Ok(ActFacts {
            tag: text_of(&value, "tag"),
            role: text_of(&value, "role"),
            input_type: text_of(&value, "type"),
            name: text_of(&value, "name"),
            text: text_of(&value, "text"),
            value: text_of(&value, "value"),
            title: text_of(&value, "title"),
            href: text_of(&value, "href"),
            download: value["download"].as_str().map(str::to_string),
            submits: value["submits"].as_bool().unwrap_or(false),
            form,
            document_url: text_of(&value, "document_url"),
        })
    }

    /// The form the act sends: the one it submits, or the one around a button (whose script
    /// may send it, as a "Continue" button does).
    pub fn form_sent(&self) -> Option<&FormFacts> {
        let button = self.tag == "button"
            || self.role == "button"
            || (self.tag == "input" && matches!(self.input_type.as_str(), "button" | "submit" | "image"));
        self.form.as_ref().filter(|_| self.submits || button)
    }

    /// What a snapshot says of element `index`, when the page cannot be asked: its name from
    /// its text and labels, no form.
    pub fn of_element(snapshot: &crate::dom::Snapshot, index: u32) -> Option<ActFacts> {
        let e = snapshot.element(index)?;
        let attribute = |name: &str| e.attributes.get(name).cloned().unwrap_or_default();
        let name = [attribute("aria-label"), attribute("label"), e.text.clone(), attribute("alt")]
            .into_iter()
            .find(|n| !n.trim().is_empty())
            .unwrap_or_default();
        Some(ActFacts {
            tag: e.tag.clone(),
            role: attribute("role"),
            input_type: attribute("type"),
            name,
            text: e.text.clone(),
            value: attribute("value"),
            title: attribute("title"),
            href: attribute("href"),
            document_url: snapshot.document_url_of(index).unwrap_or(&snapshot.url).to_string(),
            ..ActFacts::default()
        })
    }
}

/// A form, as far as deciding whether submitting it needs a yes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FormFacts {
    /// Where it is sent, absolute.
    pub action: String,
    pub method: String,
    /// The name of the button that submits it by default (Enter in a field).
    pub submitter: String,
    /// Its fields (the first hundred; passwords, files and payment cards first).
    pub fields: Vec<FieldFacts>,
    /// Fields left out of `fields`: a form too large to be seen whole is held.
    pub more_fields: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FieldFacts {
    pub tag: String,
    #[serde(rename = "type")]
    pub input_type: String,
    pub autocomplete: String,
    pub name: String,
    pub id: String,
    pub placeholder: String,
    pub label: String,
    /// Has a value (a file field: a file chosen).
    pub filled: bool,
    /// What it sends (the start of it), but never a password's or a payment card's.
    pub value: String,
}

/// Why an act is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldBecause {
    /// The element (`place`: its name, value, title, form action) says `word`.
    Says { word: String, place: &'static str },
    /// It submits a form with a password typed in.
    Password,
    /// It submits a form with payment-card fields.
    Payment,
    /// It submits a form with files chosen.
    Files,
    /// It submits a form of more fields than are checked.
    LargeForm { fields: u32 },
    /// It downloads `file`, an executable or an archive.
    Download { file: String },
}

impl HeldBecause {
    /// In English, for the model and the record.
    pub fn english(&self) -> String {
        match self {
            HeldBecause::Says { word, place } => format!("its {place} says \"{word}\""),
            HeldBecause::Password => "it sends a form with a password".into(),
            HeldBecause::Payment => "it sends a form with payment-card fields".into(),
            HeldBecause::Files => "it sends a form with files".into(),
            HeldBecause::LargeForm { fields } => format!("it sends a form of {fields} fields, too many to check"),
            HeldBecause::Download { file } => format!("it downloads {file}, a program or an archive"),
        }
    }

    /// For the person, in their language (`core_held_…`).
    pub fn locale_text(&self) -> crate::message::LocaleText {
        use crate::message::LocaleText as L;
        match self {
            HeldBecause::Says { word, place } => L::new(&format!("held_says_{}", place.replace(' ', "_")), [word]),
            HeldBecause::Password => L::plain("held_password"),
            HeldBecause::Payment => L::plain("held_payment"),
            HeldBecause::Files => L::plain("held_files"),
            HeldBecause::LargeForm { fields } => L::new("held_large_form", [fields]),
            HeldBecause::Download { file } => L::new("held_download", [file]),
        }
    }
}

struct Words {
    en: Lists,
    zh: Lists,
    executable_or_archive: Vec<String>,
}

struct Lists {
    acts: Vec<String>,
    acts_not_links: Vec<String>,
}

/// The held words, read once from the data file (as plain JSON: a reader of its own would
/// cost the module more than the file).
fn words() -> &'static Words {
    static WORDS: OnceLock<Words> = OnceLock::new();
    WORDS.get_or_init(|| {
        let data: serde_json::Value = crate::json::from_text(include_str!("held_words.json")).unwrap_or_default();
        let list = |value: &serde_json::Value| -> Vec<String> {
            value.as_array().into_iter().flatten().filter_map(|w| w.as_str().map(str::to_string)).collect()
        };
        let lists = |language: &str| Lists {
            acts: list(&data[language]["acts"]),
            acts_not_links: list(&data[language]["acts_not_links"]),
        };
        Words { en: lists("en"), zh: lists("zh"), executable_or_archive: list(&data["executable_or_archive"]) }
    })
}

/// Lower-case words separated by single spaces, with a space at each end: `placeOrder` and
/// `/api/place_order` both read ` place order `.
fn folded(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    let mut previous_lower = false;
    for c in text.chars().filter(|c| !invisible(*c)) {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower {
                out.push(' ');
            }
            previous_lower = c.is_lowercase();
            out.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            if !out.ends_with(' ') {
                out.push(' ');
            }
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// Characters a page can put inside a word to break it for a check, invisible to a person
/// (soft hyphen, zero-width and joining marks, direction marks, variation selectors): read as
/// nothing, not as a break between words.
fn invisible(c: char) -> bool {
    matches!(c as u32, 0xAD | 0x34F | 0x61C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0)
}

/// The first held word `text` says, if any: English words whole, Chinese ones as written.
pub fn held_word(text: &str, link: bool) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    let words = words();
    let lists = |l: &'static Lists| l.acts.iter().chain(l.acts_not_links.iter().filter(move |_| !link));
    let english = folded(text);
    if let Some(word) = lists(&words.en).find(|w| english.contains(&folded(w))) {
        return Some(word.clone());
    }
    let text: String = text.chars().filter(|c| !invisible(*c)).collect();
    lists(&words.zh).find(|w| text.contains(w.as_str())).cloned()
}

/// The file a URL or a file name names, when it is an executable or an archive.
pub fn risky_download(name_or_url: &str) -> Option<String> {
    let path = name_or_url.split(['?', '#']).next().unwrap_or_default();
    let file = path.rsplit(['/', '\\']).next().unwrap_or_default();
    let file = percent_encoding::percent_decode_str(file).decode_utf8_lossy().to_string();
    let (_, extension) = file.rsplit_once('.')?;
    let extension = extension.to_ascii_lowercase();
    words().executable_or_archive.contains(&extension).then_some(file)
}

/// Card-shaped fields, by the words of their name, id, placeholder or label.
const CARD_WORDS: &[&str] = &[
    "card number",
    "card no",
    "cardnumber",
    "cc number",
    "cc num",
    "ccnum",
    "cc exp",
    "cc csc",
    "cc cvv",
    "cvv",
    "cvc",
    "csc",
    "cvv2",
    "security code",
    "card code",
    "card verification",
    "expiry",
    "expiration date",
    "exp month",
    "exp year",
    "iban",
];
const CARD_WORDS_ZH: &[&str] = &["卡号", "信用卡", "银行卡", "安全码", "有效期"];

impl FieldFacts {
    fn is_payment(&self) -> bool {
        if self.autocomplete.split_whitespace().any(|t| t.to_ascii_lowercase().starts_with("cc-")) {
            return true;
        }
        let words = [&self.name, &self.id, &self.placeholder, &self.label];
        words.iter().any(|text| {
            let f = folded(text);
            CARD_WORDS.iter().any(|w| f.contains(&folded(w))) || CARD_WORDS_ZH.iter().any(|w| text.contains(w))
        })
    }
}

/// Why this act on this element needs the person's yes, if it does.
pub fn held(facts: &ActFacts) -> Option<HeldBecause> {
    let link = facts.tag == "a" && !facts.submits;
    if link || !facts.href.is_empty() {
        let named = facts.download.as_deref().filter(|d| !d.is_empty()).and_then(risky_download);
        if let Some(file) = named.or_else(|| risky_download(&facts.href)) {
            return Some(HeldBecause::Download { file });
        }
    }
    for (place, text) in
        [("name", &facts.name), ("text", &facts.text), ("value", &facts.value), ("title", &facts.title)]
    {
        if let Some(word) = held_word(text, link) {
            return Some(HeldBecause::Says { word, place });
        }
    }
    let form = facts.form_sent()?;
    if let Some(word) = held_word(&form.submitter, false) {
        return Some(HeldBecause::Says { word, place: "form button" });
    }
    let action_path = form.action.split_once("://").map_or(form.action.as_str(), |(_, rest)| rest);
    let action_path = action_path.find('/').map_or("", |at| &action_path[at..]);
    if let Some(word) = held_word(action_path, false) {
        return Some(HeldBecause::Says { word, place: "form action" });
    }
    if form.more_fields > 0 {
        let fields = u32::try_from(form.fields.len()).unwrap_or(u32::MAX).saturating_add(form.more_fields);
        return Some(HeldBecause::LargeForm { fields });
    }
    let filled = || form.fields.iter().filter(|f| f.filled);
    if filled().any(|f| f.input_type == "password") {
        return Some(HeldBecause::Password);
    }
    if form.fields.iter().any(FieldFacts::is_payment) {
        return Some(HeldBecause::Payment);
    }
    if filled().any(|f| f.input_type == "file") {
        return Some(HeldBecause::Files);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn button(name: &str) -> ActFacts {
        ActFacts { tag: "button".into(), input_type: "submit".into(), name: name.into(), ..ActFacts::default() }
    }

    fn link(name: &str, href: &str) -> ActFacts {
        ActFacts { tag: "a".into(), name: name.into(), href: href.into(), ..ActFacts::default() }
    }

    #[test]
    fn the_word_list_reads_and_every_word_holds_a_button() {
        let w = words();
        assert!(w.en.acts.len() > 20 && w.zh.acts.len() > 10, "the data file did not read");
        for word in w.en.acts.iter().chain(&w.en.acts_not_links).chain(&w.zh.acts).chain(&w.zh.acts_not_links) {
            let said = held(&button(&format!("  {word}  ")));
            assert!(matches!(said, Some(HeldBecause::Says { .. })), "{word}");
        }
    }

    #[test]
    fn the_words_of_the_issue_in_both_languages() {
        for name in [
            "Buy now",
            "Pay £12.00",
            "Place order",
            "Proceed to checkout",
            "Send",
            "Post reply",
            "Publish",
            "Delete",
            "Remove item",
            "Transfer funds",
            "Confirm",
            "Subscribe",
            "Sign up",
            "立即购买",
            "去结算",
            "提交订单",
            "发送",
            "发布",
            "删除",
            "转账",
            "确认",
            "订阅",
            "注册",
        ] {
            assert!(held(&button(name)).is_some(), "{name}");
        }
    }

    #[test]
    fn ordinary_controls_and_reading_links_are_not_held() {
        for name in [
            "Search",
            "Next page",
            "Add to cart",
            "Sign in",
            "Log in",
            "Show more",
            "Postcode",
            "Sender",
            "搜索",
            "下一页",
        ] {
            assert_eq!(held(&button(name)), None, "{name}");
        }
        for (name, href) in [
            ("Your orders", "/orders"),
            ("Order history", "/account/orders"),
            ("Book reviews", "/books"),
            ("Post a comment", "/blog/post/5"),
        ] {
            assert_eq!(held(&link(name, href)), None, "{name}");
        }
        // A link that deletes, or buys, is held like a button.
        assert!(held(&link("Delete this message", "/m/4")).is_some());
        assert!(held(&link("购买", "/item/4")).is_some());
    }

    #[test]
    fn the_value_title_and_words_joined_in_code_count() {
        let input = ActFacts {
            tag: "input".into(),
            input_type: "submit".into(),
            value: "Place order".into(),
            ..ActFacts::default()
        };
        assert_eq!(held(&input), Some(HeldBecause::Says { word: "place order".into(), place: "value" }));
        let icon =
            ActFacts { tag: "button".into(), title: "Delete".into(), name: "🗑".into(), ..ActFacts::default() };
        assert!(matches!(held(&icon), Some(HeldBecause::Says { place: "title", .. })));
        assert_eq!(folded("placeOrder/api_v2-X"), " place order api v2 x ");
    }

    fn form(action: &str, fields: Vec<FieldFacts>) -> FormFacts {
        FormFacts { action: action.into(), method: "post".into(), submitter: "Go".into(), fields, more_fields: 0 }
    }

    fn field(input_type: &str, filled: bool) -> FieldFacts {
        FieldFacts { tag: "input".into(), input_type: input_type.into(), filled, ..FieldFacts::default() }
    }

    #[test]
    fn forms_are_held_by_their_action_and_their_fields() {
        let go = |form: FormFacts| ActFacts { submits: true, form: Some(form), ..button("Go") };
        assert_eq!(held(&go(form("https://shop.example/search", vec![field("text", true)]))), None);
        assert!(matches!(
            held(&go(form("https://shop.example/cart/placeOrder", vec![]))),
            Some(HeldBecause::Says { place: "form action", .. })
        ));
        // The host's own name does not count: only the path.
        assert_eq!(held(&go(form("https://paypal.example/search", vec![]))), None);
        assert_eq!(
            held(&go(form("https://x.example/login", vec![field("password", true)]))),
            Some(HeldBecause::Password)
        );
        assert_eq!(held(&go(form("https://x.example/login", vec![field("password", false)]))), None);
        assert_eq!(held(&go(form("https://x.example/upload", vec![field("file", true)]))), Some(HeldBecause::Files));
        let card = FieldFacts { autocomplete: "billing cc-number".into(), ..field("text", false) };
        assert_eq!(held(&go(form("https://x.example/f", vec![card]))), Some(HeldBecause::Payment));
        let shaped = FieldFacts { name: "cardNumber".into(), ..field("tel", false) };
        assert_eq!(held(&go(form("https://x.example/f", vec![shaped]))), Some(HeldBecause::Payment));
        let zh = FieldFacts { label: "银行卡号".into(), ..field("text", false) };
        assert_eq!(held(&go(form("https://x.example/f", vec![zh]))), Some(HeldBecause::Payment));
        // A field of a form the act does not send counts for nothing; a button's script may
        // send the form around it, so a button counts.
        let checkbox = ActFacts {
            tag: "input".into(),
            input_type: "checkbox".into(),
            name: "Remember me".into(),
            ..ActFacts::default()
        };
        let not_submitting = ActFacts {
            submits: false,
            form: Some(form("https://x.example/f", vec![field("password", true)])),
            ..checkbox
        };
        assert_eq!(held(&not_submitting), None);
        let scripted = ActFacts {
            submits: false,
            input_type: "button".into(),
            ..go(form("https://x.example/f", vec![field("password", true)]))
        };
        assert_eq!(held(&scripted), Some(HeldBecause::Password));
        // Enter in a field sends its form, named by its default button.
        let enter = ActFacts {
            tag: "input".into(),
            submits: true,
            form: Some(FormFacts { submitter: "Send".into(), ..form("/m", vec![]) }),
            ..ActFacts::default()
        };
        assert!(matches!(held(&enter), Some(HeldBecause::Says { place: "form button", .. })));
    }

    #[test]
    fn the_facts_are_read_as_the_page_writes_them_and_a_bad_field_says_less() {
        let text = r#"{"tag":"button","role":"","type":"submit","name":"Place order","value":"","title":"","href":"","download":null,"submits":true,"form":{"action":"https://shop.example/order","method":"post","submitter":"Place order","fields":[{"tag":"input","type":"password","autocomplete":"","name":"pw","id":"","placeholder":"","label":"","filled":true}]},"document_url":"https://shop.example/cart"}"#;
        let facts = ActFacts::from_json_text(text).unwrap();
        assert_eq!(facts.name, "Place order");
        assert!(facts.submits);
        assert_eq!(facts.form.as_ref().unwrap().fields[0].input_type, "password");
        assert_eq!(held(&facts), Some(HeldBecause::Says { word: "place order".into(), place: "name" }));
        let odd = ActFacts::from_json_text(r#"{"tag":7,"name":["x"],"submits":"yes","form":[]}"#).unwrap();
        assert_eq!((odd.tag.as_str(), odd.name.as_str(), odd.submits, odd.form), ("", "", false, None));
        assert!(ActFacts::from_json_text("[1]").is_err());
        assert!(ActFacts::from_json_text("{").is_err());
    }

    #[test]
    fn what_a_page_hides_from_the_check_is_held_all_the_same() {
        // Named one thing, showing another.
        let shown = ActFacts { name: "View details".into(), text: "Place order".into(), ..button("") };
        assert_eq!(held(&shown), Some(HeldBecause::Says { word: "place order".into(), place: "text" }));
        // Invisible characters inside the words.
        assert!(held(&button("Pl\u{200b}ace or\u{00ad}der")).is_some());
        assert!(held(&button("提\u{200d}交订单")).is_some());
        // A form with more fields than are listed.
        let big = FormFacts { more_fields: 400, ..form("https://x.example/f", vec![field("text", true)]) };
        let go = ActFacts { submits: true, form: Some(big), ..button("Go") };
        assert_eq!(held(&go), Some(HeldBecause::LargeForm { fields: 401 }));
    }

    #[test]
    fn downloads_of_programs_and_archives() {
        assert_eq!(
            held(&link("Get it", "https://x.example/files/setup.exe?v=2")),
            Some(HeldBecause::Download { file: "setup.exe".into() })
        );
        assert!(held(&link("Archive", "https://x.example/a/backup.tar.gz")).is_some());
        let named = ActFacts { download: Some("tool.msi".into()), ..link("Manual", "blob:https://x.example/1") };
        assert_eq!(held(&named), Some(HeldBecause::Download { file: "tool.msi".into() }));
        assert_eq!(held(&link("Manual", "https://x.example/manual.pdf")), None);
        assert_eq!(risky_download("https://x.example/get%20it.ZIP"), Some("get it.ZIP".into()));
        assert_eq!(risky_download("https://x.example/download"), None);
    }
}
