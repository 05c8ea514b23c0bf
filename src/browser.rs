//! The `Browser` port: everything the agent loop may ask of a browser.
//!
//! The core drives a browser only through this trait. In the extension, `tabs::TabBrowser`
//! implements it over tabs, content-script messages and the debugger (reached through its own
//! port, chrome.* in `ext::tabs`); in native tests of the loop a scripted fake site does. Errors are typed so the loop can tell a
//! problem the LLM can route around (an element that is gone) from one that ends the task (a
//! page the extension may not touch).
//!
//! Besides pages, the port reaches the person: `ask_human` waits for the user's answer in the
//! side panel, because the panel is part of the browser the agent lives in.

use crate::dom::Snapshot;
use serde::{Deserialize, Serialize};

/// The state of the task's tab as observed at the start of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct PageState {
    pub tab_id: i32,
    pub snapshot: Snapshot,
    /// What the LLM is told about the page besides its elements: why it could not be read
    /// (the element list is then empty, so it can still navigate away or finish), that a
    /// blocked site was left, that no screenshot could be taken.
    pub notice: Option<String>,
    /// The tabs the task works with (the one it started on and those it opened), current first.
    pub tabs: Vec<TabInfo>,
    /// Whether the tab's history has a page to go back / forward to.
    pub can_go_back: bool,
    pub can_go_forward: bool,
    /// Whether actions that need the debugger can run on this tab (false once the user closed
    /// Chrome's debugging bar for it).
    pub debugger_available: bool,
}

/// A tab as the LLM sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabInfo {
    pub id: i32,
    pub url: String,
    pub title: String,
}

impl PageState {
    pub fn new(tab_id: i32, snapshot: Snapshot) -> Self {
        let tab = TabInfo { id: tab_id, url: snapshot.url.clone(), title: snapshot.title.clone() };
        PageState {
            tab_id,
            snapshot,
            notice: None,
            tabs: vec![tab],
            can_go_back: false,
            can_go_forward: false,
            debugger_available: true,
        }
    }

    /// A page that could not be read, at the last URL known.
    pub fn unreadable(tab_id: i32, url: &str, why: String) -> Self {
        PageState { notice: Some(why), ..PageState::new(tab_id, Snapshot::with_elements(url, "", Vec::new())) }
    }

    pub fn url(&self) -> &str {
        &self.snapshot.url
    }

    /// Adds a line to what the LLM is told about the page.
    pub fn add_notice(&mut self, line: &str) {
        self.notice = Some(match self.notice.take() {
            Some(notice) => format!("{notice} {line}"),
            None => line.to_string(),
        });
    }

    /// Whether the page or any container on it can scroll.
    pub fn can_scroll(&self) -> bool {
        let page = self.snapshot.scroll;
        page.above_px > 0
            || page.below_px > 0
            || self.snapshot.elements().any(|e| e.scroll.is_some_and(|s| s.above_px > 0 || s.below_px > 0))
    }

    /// Whether the page shows a dropdown (`<select>`, or an ARIA listbox or combobox).
    pub fn has_dropdown(&self) -> bool {
        self.snapshot.elements().any(is_dropdown)
    }
}

/// A native `<select>`, an element with an ARIA dropdown role, or a control that says it
/// opens a listbox (Headless UI's listbox button).
pub fn is_dropdown(element: &crate::dom::Element) -> bool {
    element.tag == "select"
        || element.attributes.get("role").is_some_and(|r| matches!(r.as_str(), "listbox" | "combobox"))
        || element.attributes.get("aria-haspopup").is_some_and(|p| p == "listbox")
}

/// What a page-changing action led to, so the result text can tell the LLM.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ActionEffect {
    /// Set when the tab's URL differs after the action.
    pub navigated_to: Option<String>,
    /// Set when the action opened a new tab, which the task now works in.
    pub opened_tab: Option<TabInfo>,
    /// Set when a click had no visible effect as a script event and was repeated as a trusted
    /// (debugger) click.
    pub trusted_fallback: bool,
    /// Set when a click was made as a trusted (debugger) click from the start.
    pub trusted: bool,
    /// Set when the action's tab closed itself (a popup done with its work) and the task moved
    /// to another of its tabs.
    pub tab_closed_to: Option<TabInfo>,
    /// Set when a click changed nothing a person would see, even as a real mouse click: no
    /// navigation, no tab, nothing on the page beyond its own hover and focus styling.
    pub unchanged: bool,
}

/// One key press for `send_keys`, as the debugger's `Input.dispatchKeyEvent` needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyPress {
    /// The DOM `key` value: `Enter`, `a`, `ArrowDown`.
    pub key: String,
    /// The DOM `code` value: `Enter`, `KeyA`, `ArrowDown`.
    pub code: String,
    /// The legacy key code (`windowsVirtualKeyCode`).
    pub key_code: u32,
    /// The text the key types, if any (`"\r"` for Enter, `"a"`); none when a modifier other
    /// than Shift is held.
    pub text: Option<String>,
    /// Alt = 1, Control = 2, Meta = 4, Shift = 8, as CDP counts them.
    pub modifiers: u32,
}

/// How a scroll went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScrollOutcome {
    /// `page` or `container`.
    pub target: String,
    /// Pixels actually moved, signed (negative = up).
    pub moved: f64,
    pub at_start: bool,
    pub at_end: bool,
}

/// One option of a dropdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DropdownOption {
    pub index: u32,
    pub text: String,
    #[serde(default)]
    pub value: String,
    #[serde(default)]
    pub selected: bool,
    #[serde(default)]
    pub disabled: bool,
    #[serde(default)]
    pub group: Option<String>,
}

/// Matches of a text search over the whole page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageMatches {
    /// All matches, counted up to a cap.
    pub total: u32,
    pub matches: Vec<PageMatch>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageMatch {
    pub text: String,
    #[serde(default)]
    pub before: String,
    #[serde(default)]
    pub after: String,
}

/// The whole page as markdown, for extraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageMarkdown {
    pub markdown: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub url: String,
}

/// A file the person attached to the task, for `upload_file`. The model reads its name, type
/// and size, never its bytes; the browser reads the bytes where the panel kept them, by `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskFile {
    /// Where the panel kept its bytes (extension/files-store.js).
    pub id: String,
    pub name: String,
    /// Its MIME type, as the browser gave it (may be empty).
    #[serde(default, rename = "type")]
    pub mime: String,
    /// In bytes.
    pub size: u64,
}

/// Bounds on what a task may carry: a page takes a file whole, in one message.
pub mod file_limits {
    pub const MAX_FILES: usize = 10;
    pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
    pub const MAX_TOTAL_BYTES: u64 = 25 * 1024 * 1024;
    pub const MAX_NAME_CHARS: usize = 200;
}

impl TaskFile {
    /// The files a task was given, checked: at most `MAX_FILES`, each named (uniquely, without
    /// path or control characters) and within the size bounds.
    pub fn check_all(files: &[TaskFile]) -> Result<(), String> {
        use file_limits::*;
        if files.len() > MAX_FILES {
            return Err(format!("{} files were attached; a task takes at most {MAX_FILES}", files.len()));
        }
        let mut names = std::collections::HashSet::new();
        for file in files {
            let name = file.name.trim();
            if name.is_empty()
                || name.chars().count() > MAX_NAME_CHARS
                || name.chars().any(|c| c.is_control() || c == '/' || c == '\\')
            {
                return Err(format!("the file name {:?} cannot be used", file.name));
            }
            if !names.insert(name) {
                return Err(format!("two files are named {name:?}; rename one"));
            }
            if file.id.is_empty() || file.id.len() > 64 {
                return Err(format!("the file {name:?} was not kept"));
            }
            if file.size > MAX_FILE_BYTES {
                return Err(format!(
                    "{name:?} is {} MB; a file may be at most {} MB",
                    file.size.div_ceil(1 << 20),
                    MAX_FILE_BYTES >> 20
                ));
            }
        }
        let total: u64 = files.iter().map(|f| f.size).sum();
        if total > MAX_TOTAL_BYTES {
            return Err(format!(
                "the files come to {} MB; a task may carry at most {} MB",
                total.div_ceil(1 << 20),
                MAX_TOTAL_BYTES >> 20
            ));
        }
        Ok(())
    }

    /// How the model reads it: `report.pdf (application/pdf, 120 KB)`.
    pub fn describe(&self) -> String {
        let size = if self.size < 1024 {
            format!("{} B", self.size)
        } else if self.size < 1024 * 1024 {
            format!("{} KB", self.size.div_ceil(1024))
        } else {
            format!("{:.1} MB", self.size as f64 / (1024.0 * 1024.0))
        };
        let mime = if self.mime.is_empty() { String::new() } else { format!("{}, ", self.mime) };
        format!("{} ({mime}{size})", self.name)
    }
}

/// Where `upload_file` put the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UploadTarget {
    /// Into a file field (the element, or the one it holds or labels), as if picked.
    Input,
    /// Dropped on the element, as if dragged there from the desktop.
    Drop,
}

/// How `upload_file` went.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadOutcome {
    pub target: UploadTarget,
    /// Whether the page took it: a field kept the file; a drop zone handled the drop.
    pub accepted: bool,
    pub effect: ActionEffect,
}

/// Where `drag_and_drop` lets go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DropPoint {
    /// On the element with this index (its middle).
    Element(u32),
    /// At this point of the viewport, in CSS pixels.
    Point(f64, f64),
}

/// How a drag went.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DragOutcome {
    /// Whether the page changed while and after the element was dragged.
    pub changed: bool,
    pub effect: ActionEffect,
}

/// A screenshot of the visible part of the tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Screenshot {
    /// PNG, base64-encoded.
    pub png_base64: String,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BrowserError {
    #[error("Tabwright cannot work on {url}: Chrome does not let extensions act on this kind of page. Switch to a normal web page (http or https) and start the task again.")]
    RestrictedPage { url: String },
    #[error("Element [{index}] is no longer on the page — the page changed since it was observed. Use an index from the current page state.")]
    ElementGone { index: u32 },
    #[error("Element [{index}] cannot take that action: {reason}")]
    ElementUnsuitable { index: u32, reason: String },
    #[error("The task's tab was closed. Start the task again on an open tab.")]
    TabClosed,
    #[error("There is no tab {tab_id} among the task's tabs. Use a tab id from the browser state's tab list.")]
    NoSuchTab { tab_id: i32 },
    #[error("Tab {tab_id} is another task's: Tabwright acts in a tab for one task at a time. Choose another tab, or wait until that task ends.")]
    TabOfAnotherTask { tab_id: i32 },
    #[error("The page could not be read ({reason}).")]
    ContentScript { reason: String },
    #[error("Navigation to {url} failed: {reason}")]
    Navigation { url: String, reason: String },
    #[error("{what} took longer than {seconds} s and was abandoned.")]
    Timeout { what: String, seconds: u32 },
    #[error("{what} needs the browser's debugger, which is not available here: {reason}")]
    Debugger { what: String, reason: String },
    #[error("The page's script failed: {0}")]
    Script(String),
    #[error("Tab {tab_id} is the task's only tab, so it stays open; navigate elsewhere instead.")]
    LastTab { tab_id: i32 },
    #[error("This browser cannot {0}.")]
    Unsupported(&'static str),
    #[error("The attached file {name} is no longer kept by the browser ({reason}). Ask the person to attach it again in the side panel.")]
    FileMissing { name: String, reason: String },
}

impl BrowserError {
    /// True when the task cannot go on, whatever the LLM does next.
    pub fn ends_task(&self) -> bool {
        matches!(self, BrowserError::RestrictedPage { .. } | BrowserError::TabClosed)
    }
}

/// Only the errors that end a task are the person's to read; the others go to the model.
impl crate::message::Localize for BrowserError {
    fn locale_text(&self) -> Option<crate::message::LocaleText> {
        match self {
            BrowserError::RestrictedPage { url } => {
                Some(crate::message::LocaleText::new("browser_restricted_page", [url]))
            }
            BrowserError::TabClosed => Some(crate::message::LocaleText::plain("browser_tab_closed")),
            _ => None,
        }
    }
}

/// A browser the agent can drive. Methods are async because every real implementation waits
/// on the browser; the trait is used with static dispatch only, and its futures need not be
/// `Send` (the service worker is single-threaded).
///
/// Only `observe`, `navigate`, `click` and `input` must be implemented; the rest default to
/// [`BrowserError::Unsupported`], so a fake implements just what its test needs. Element
/// methods take the page-wide index of the last observation.
#[allow(async_fn_in_trait)]
pub trait Browser {
    /// Indexes the task's tab and returns what a person would see.
    async fn observe(&mut self) -> Result<PageState, BrowserError>;
    /// Loads `url` in the task's tab and waits for it to load.
    async fn navigate(&mut self, url: &str) -> Result<ActionEffect, BrowserError>;
    /// Clicks the element with this index, as a person would.
    async fn click(&mut self, index: u32) -> Result<ActionEffect, BrowserError>;
    /// Types `text` into the element with this index, replacing its content when `clear`.
    async fn input(&mut self, index: u32, text: &str, clear: bool) -> Result<ActionEffect, BrowserError>;

    /// Opens `url` in a new tab, which the task then works in.
    async fn open_tab(&mut self, _url: &str) -> Result<ActionEffect, BrowserError> {
        Err(BrowserError::Unsupported("open tabs"))
    }
    async fn switch_tab(&mut self, _tab_id: i32) -> Result<TabInfo, BrowserError> {
        Err(BrowserError::Unsupported("switch tabs"))
    }
    /// Closes one of the task's tabs; if it was the current one, the task moves to another of
    /// its tabs, which is returned.
    /// The id of the tab the task works in now (0 when there is none).
    fn current_tab_id(&self) -> i32 {
        0
    }
    /// Makes tab `tab_id` the task's current tab, taking it in when it is not yet the task's
    /// (it joins the task's group; a tab another task works in is refused).
    async fn take_tab(&mut self, tab_id: i32) -> Result<TabInfo, BrowserError> {
        self.switch_tab(tab_id).await
    }
    async fn close_tab(&mut self, _tab_id: i32) -> Result<Option<TabInfo>, BrowserError> {
        Err(BrowserError::Unsupported("close tabs"))
    }
    async fn go_back(&mut self) -> Result<ActionEffect, BrowserError> {
        Err(BrowserError::Unsupported("go back"))
    }
    async fn go_forward(&mut self) -> Result<ActionEffect, BrowserError> {
        Err(BrowserError::Unsupported("go forward"))
    }
    /// Clicks the element with this index with trusted input (a real mouse click at a point a
    /// click would reach), for a page that may ignore a script's click while seeming to react.
    async fn click_trusted(&mut self, _index: u32) -> Result<ActionEffect, BrowserError> {
        Err(BrowserError::Unsupported("click with trusted input"))
    }
    /// Clicks the point (CSS pixels from the top-left of the tab's viewport) with a trusted click.
    async fn click_at(&mut self, _x: f64, _y: f64) -> Result<ActionEffect, BrowserError> {
        Err(BrowserError::Unsupported("click at coordinates"))
    }
    /// Presses keys with trusted key events, in order, into whatever has focus.
    async fn send_keys(&mut self, _keys: &[KeyPress]) -> Result<ActionEffect, BrowserError> {
        Err(BrowserError::Unsupported("press keys"))
    }
    /// Puts `file` into the file field element `index` is (or holds, or labels), or drops it on
    /// the element when it is a drop zone.
    async fn upload_file(&mut self, _index: u32, _file: &TaskFile) -> Result<UploadOutcome, BrowserError> {
        Err(BrowserError::Unsupported("upload files"))
    }
    /// Drags element `index` and lets go at `to`, as a person's mouse would.
    async fn drag_and_drop(&mut self, _index: u32, _to: DropPoint) -> Result<DragOutcome, BrowserError> {
        Err(BrowserError::Unsupported("drag and drop"))
    }
    /// Scrolls the page, or the container holding element `index`, by `pages` screens.
    async fn scroll(&mut self, _down: bool, _pages: f64, _index: Option<u32>) -> Result<ScrollOutcome, BrowserError> {
        Err(BrowserError::Unsupported("scroll"))
    }
    /// Scrolls the first visible occurrence of `text` into view; returns how many were found.
    async fn find_text(&mut self, _text: &str) -> Result<u32, BrowserError> {
        Err(BrowserError::Unsupported("find text"))
    }
    async fn dropdown_options(&mut self, _index: u32) -> Result<Vec<DropdownOption>, BrowserError> {
        Err(BrowserError::Unsupported("read dropdown options"))
    }
    /// Chooses the option with this text; returns the option's text as chosen.
    async fn select_option(&mut self, _index: u32, _text: &str) -> Result<(String, ActionEffect), BrowserError> {
        Err(BrowserError::Unsupported("choose dropdown options"))
    }
    /// Searches the whole page's text (not only the listed part).
    async fn search_page(&mut self, _pattern: &str, _regex: bool, _max: u32) -> Result<PageMatches, BrowserError> {
        Err(BrowserError::Unsupported("search the page"))
    }
    async fn page_markdown(&mut self) -> Result<PageMarkdown, BrowserError> {
        Err(BrowserError::Unsupported("read the page as markdown"))
    }
    async fn screenshot(&mut self) -> Result<Screenshot, BrowserError> {
        Err(BrowserError::Unsupported("take screenshots"))
    }
    /// Runs JavaScript in the page and returns its value as JSON text.
    /// The address of the page a script would run in now, as the debugger's own target sees
    /// it (the page may have moved on since it was observed).
    async fn script_target_url(&mut self) -> Result<String, BrowserError> {
        Err(BrowserError::Unsupported("run scripts"))
    }
    async fn evaluate(&mut self, _code: &str) -> Result<String, BrowserError> {
        Err(BrowserError::Unsupported("run scripts"))
    }
    async fn wait(&mut self, _ms: u32) {}
    /// Gets the task off a page the URL firewall blocks: back in the tab's history, or, for a
    /// tab the task's page opened straight onto it, closing that tab. Best effort.
    async fn leave_blocked_page(&mut self) {}
    /// Whether elements were added to the page since it was observed: a later action of the
    /// same step that names an element by index may then mean something else.
    async fn new_elements_appeared(&mut self) -> bool {
        false
    }
    /// Says that the action about to run is the step's last: unless it fails or ends the task,
    /// the next thing asked is `observe`. A browser may then start reading the page as soon as
    /// the action is done (see extension/content/indexer.js, "Reading ahead"). Nothing else may
    /// come between: a later action of the same step would find the page already read.
    fn look_follows(&mut self) {}
    /// Shows `question` to the user and waits for their answer.
    async fn ask_human(&mut self, _question: &str) -> Result<String, BrowserError> {
        Err(BrowserError::Unsupported("ask the user"))
    }
    /// What the page says now of the element an act is aimed at (see `crate::guard`): the
    /// element with this index, the focused one, or the one at a point of the viewport.
    async fn act_facts(&mut self, _of: FactsOf) -> Result<crate::guard::ActFacts, BrowserError> {
        Err(BrowserError::Unsupported("read an element's facts"))
    }
    /// The next click on that element (or at that point) goes ahead only if the page still
    /// says of it what `act_facts` last read; else the page refuses it.
    fn expect_facts(&mut self, _of: FactsOf) {}
    /// Shows the consent to the person and waits for their answer. A browser with nobody to
    /// ask says no.
    async fn ask_consent(
        &mut self,
        _consent: &crate::guard::Consent,
    ) -> Result<crate::guard::ConsentAnswer, BrowserError> {
        Ok(crate::guard::ConsentAnswer::Deny)
    }
    /// The task is over: remove whatever the browser shows for it (highlights) and let go of
    /// what it holds (the debugger). Best effort; never fails.
    async fn finish(&mut self) {}
}

/// Which element `Browser::act_facts` reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactsOf {
    /// The element with this (page-wide) index.
    Element(u32),
    /// The focused element of the current tab.
    Focused,
    /// The element at this point of the viewport.
    Point(f64, f64),
}

/// Width and height from a base64 PNG's header (IHDR), without decoding the image.
pub fn png_size(base64: &str) -> Option<(u32, u32)> {
    let head: Vec<u8> = decode_base64(base64.get(..32)?)?;
    if head.get(..8)? != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let width = u32::from_be_bytes(head.get(16..20)?.try_into().ok()?);
    let height = u32::from_be_bytes(head.get(20..24)?.try_into().ok()?);
    Some((width, height))
}

/// Standard base64, for the few bytes `png_size` reads (the `base64` crate would add about
/// 4.5 KB to the wasm for them).
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for quad in text.as_bytes().chunks(4) {
        let v: Vec<u8> = quad.iter().map(|&c| value(c)).collect::<Option<_>>()?;
        let n = v.iter().fold(0u32, |acc, &x| (acc << 6) | x as u32) << (6 * (4 - v.len()));
        out.extend_from_slice(&n.to_be_bytes()[1..1 + v.len() * 3 / 4]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: u64) -> TaskFile {
        TaskFile { id: format!("id-{name}"), name: name.into(), mime: String::new(), size }
    }

    #[test]
    fn attached_files_are_checked_for_names_sizes_and_count() {
        assert!(TaskFile::check_all(&[file("cv.pdf", 1_000), file("photo.png", 2_000)]).is_ok());
        let err = |files: &[TaskFile]| TaskFile::check_all(files).unwrap_err();
        assert!(err(&[file("a.txt", 1), file("a.txt", 2)]).contains("two files are named"));
        assert!(err(&[file("../etc/passwd", 1)]).contains("cannot be used"));
        assert!(err(&[file("  ", 1)]).contains("cannot be used"));
        assert!(err(&[file("big.bin", 11 << 20)]).contains("at most 10 MB"));
        let three: Vec<TaskFile> = (0..3).map(|i| file(&format!("{i}.bin"), 9 << 20)).collect();
        assert!(err(&three).contains("at most 25 MB"));
        let many: Vec<TaskFile> = (0..11).map(|i| file(&format!("{i}.txt"), 1)).collect();
        assert!(err(&many).contains("at most 10"));
        assert!(err(&[TaskFile { id: String::new(), ..file("x.txt", 1) }]).contains("was not kept"));
    }

    #[test]
    fn a_file_is_described_by_name_type_and_size() {
        assert_eq!(
            TaskFile { mime: "application/pdf".into(), ..file("cv.pdf", 48_213) }.describe(),
            "cv.pdf (application/pdf, 48 KB)"
        );
        assert_eq!(file("notes", 900).describe(), "notes (900 B)");
        assert_eq!(file("film.mp4", 5 << 20).describe(), "film.mp4 (5.0 MB)");
    }

    #[test]
    fn a_pngs_size_is_read_from_its_header() {
        // A 1280×800 PNG's signature and IHDR chunk, in base64, then anything.
        let mut head = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        head.extend_from_slice(&1280u32.to_be_bytes());
        head.extend_from_slice(&800u32.to_be_bytes());
        let encoded = encode(&head) + "AAAA";
        assert_eq!(super::png_size(&encoded), Some((1280, 800)));
        assert_eq!(super::png_size("iVBORw0KGgo="), None, "too short for a size");
        assert_eq!(super::png_size(&encode(b"GIF89a..........................")), None, "not a PNG");
        assert_eq!(super::png_size("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"), None);
    }

    /// Base64 for the test (the standard alphabet).
    fn encode(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        bytes
            .chunks(3)
            .flat_map(|c| {
                let n = c.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
                (0..4)
                    .map(move |i| if i <= c.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' })
            })
            .collect()
    }
}
