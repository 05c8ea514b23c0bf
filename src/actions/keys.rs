//! Key names → key presses for `send_keys`.
//!
//! The LLM writes keys as people name them: `Enter`, `Escape`, `Control+a`, `Shift+Tab`, several
//! separated by spaces (`ArrowDown ArrowDown Enter`). Each becomes a [`KeyPress`] with the DOM
//! `key` and `code`, the legacy key code and the text it types, which is what the debugger's
//! `Input.dispatchKeyEvent` needs for the browser to treat it as a real key (an Enter that
//! submits a form, a Tab that moves focus).

use crate::browser::KeyPress;

const ALT: u32 = 1;
const CONTROL: u32 = 2;
const META: u32 = 4;
const SHIFT: u32 = 8;

/// A named key: (accepted names, key, code, key code, text).
type NamedKey = (&'static [&'static str], &'static str, &'static str, u32, Option<&'static str>);

const NAMED: &[NamedKey] = &[
    (&["enter", "return"], "Enter", "Enter", 13, Some("\r")),
    (&["tab"], "Tab", "Tab", 9, None),
    (&["escape", "esc"], "Escape", "Escape", 27, None),
    (&["backspace"], "Backspace", "Backspace", 8, None),
    (&["delete", "del"], "Delete", "Delete", 46, None),
    (&["space", "spacebar"], " ", "Space", 32, Some(" ")),
    (&["arrowup", "up"], "ArrowUp", "ArrowUp", 38, None),
    (&["arrowdown", "down"], "ArrowDown", "ArrowDown", 40, None),
    (&["arrowleft", "left"], "ArrowLeft", "ArrowLeft", 37, None),
    (&["arrowright", "right"], "ArrowRight", "ArrowRight", 39, None),
    (&["home"], "Home", "Home", 36, None),
    (&["end"], "End", "End", 35, None),
    (&["pageup"], "PageUp", "PageUp", 33, None),
    (&["pagedown"], "PageDown", "PageDown", 34, None),
    (&["insert"], "Insert", "Insert", 45, None),
    (&["f1"], "F1", "F1", 112, None),
    (&["f2"], "F2", "F2", 113, None),
    (&["f3"], "F3", "F3", 114, None),
    (&["f4"], "F4", "F4", 115, None),
    (&["f5"], "F5", "F5", 116, None),
    (&["f6"], "F6", "F6", 117, None),
    (&["f7"], "F7", "F7", 118, None),
    (&["f8"], "F8", "F8", 119, None),
    (&["f9"], "F9", "F9", 120, None),
    (&["f10"], "F10", "F10", 121, None),
    (&["f11"], "F11", "F11", 122, None),
    (&["f12"], "F12", "F12", 123, None),
];

/// Punctuation keys of a US layout: (character, shifted character, code, key code).
const PUNCTUATION: &[(char, char, &str, u32)] = &[
    ('-', '_', "Minus", 189),
    ('=', '+', "Equal", 187),
    ('[', '{', "BracketLeft", 219),
    (']', '}', "BracketRight", 221),
    ('\\', '|', "Backslash", 220),
    (';', ':', "Semicolon", 186),
    ('\'', '"', "Quote", 222),
    (',', '<', "Comma", 188),
    ('.', '>', "Period", 190),
    ('/', '?', "Slash", 191),
    ('`', '~', "Backquote", 192),
];

const DIGIT_SHIFTED: &str = ")!@#$%^&*(";

fn modifier(name: &str) -> Option<u32> {
    match name.to_ascii_lowercase().as_str() {
        "alt" | "option" => Some(ALT),
        "control" | "ctrl" => Some(CONTROL),
        "meta" | "cmd" | "command" | "super" | "win" => Some(META),
        "shift" => Some(SHIFT),
        _ => None,
    }
}

/// Parses a key sequence such as `"Control+a Delete"`. The error says which part is unknown.
pub fn parse_keys(keys: &str) -> Result<Vec<KeyPress>, String> {
    let chords: Vec<&str> = keys.split_whitespace().collect();
    if chords.is_empty() {
        return Err("no keys given; name keys like Enter, Escape, Tab, ArrowDown or Control+a".into());
    }
    if chords.len() > 50 {
        return Err(format!("{} keys at once is too many; send at most 50", chords.len()));
    }
    chords.into_iter().map(parse_chord).collect()
}

fn parse_chord(chord: &str) -> Result<KeyPress, String> {
    // `+` alone, or a chord ending in `+` (`Shift++`), means the plus key itself.
    let (mods_part, key_name) = match chord.strip_suffix("++") {
        Some(rest) => (rest, "+"),
        None if chord == "+" => ("", "+"),
        None => chord.rsplit_once('+').map_or(("", chord), |(m, k)| (m, k)),
    };
    let mut modifiers = 0;
    for name in mods_part.split('+').filter(|m| !m.is_empty()) {
        modifiers |= modifier(name)
            .ok_or_else(|| format!("unknown modifier {name:?} in {chord:?}; use Control, Shift, Alt or Meta"))?;
    }
    let mut press = key(key_name).ok_or_else(|| {
        format!("unknown key {key_name:?} in {chord:?}; use a single character or a key name such as Enter, Escape, Tab, Backspace, ArrowDown, PageDown, F5")
    })?;
    if modifiers & SHIFT != 0 {
        press = shifted(press);
    }
    press.modifiers |= modifiers;
    // With Control, Alt or Meta held, a key runs a shortcut instead of typing.
    if modifiers & (CONTROL | ALT | META) != 0 {
        press.text = None;
    }
    Ok(press)
}

fn key(name: &str) -> Option<KeyPress> {
    let lower = name.to_ascii_lowercase();
    if let Some((_, key, code, key_code, text)) = NAMED.iter().find(|(names, ..)| names.contains(&lower.as_str())) {
        return Some(press(key, code, *key_code, text.map(String::from)));
    }
    if let Some(m) = modifier(name) {
        // A modifier pressed alone (`Shift`).
        let (key, code, key_code) = match m {
            ALT => ("Alt", "AltLeft", 18),
            CONTROL => ("Control", "ControlLeft", 17),
            META => ("Meta", "MetaLeft", 91),
            _ => ("Shift", "ShiftLeft", 16),
        };
        return Some(press(key, code, key_code, None));
    }
    let mut chars = name.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    if c.is_ascii_alphabetic() {
        let upper = c.to_ascii_uppercase();
        let mut p = press(&c.to_string(), &format!("Key{upper}"), upper as u32, Some(c.to_string()));
        if c.is_ascii_uppercase() {
            p.modifiers = SHIFT;
        }
        return Some(p);
    }
    if c.is_ascii_digit() {
        return Some(press(&c.to_string(), &format!("Digit{c}"), c as u32, Some(c.to_string())));
    }
    if let Some(i) = DIGIT_SHIFTED.find(c) {
        let digit = char::from(b'0' + i as u8);
        let mut p = press(&c.to_string(), &format!("Digit{digit}"), digit as u32, Some(c.to_string()));
        p.modifiers = SHIFT;
        return Some(p);
    }
    if let Some((plain, shift, code, key_code)) = PUNCTUATION.iter().find(|(p, s, ..)| *p == c || *s == c) {
        let mut p = press(&c.to_string(), code, *key_code, Some(c.to_string()));
        if c == *shift && c != *plain {
            p.modifiers = SHIFT;
        }
        return Some(p);
    }
    if c == '+' {
        let mut p = press("+", "Equal", 187, Some("+".into()));
        p.modifiers = SHIFT;
        return Some(p);
    }
    None
}

fn press(key: &str, code: &str, key_code: u32, text: Option<String>) -> KeyPress {
    KeyPress { key: key.into(), code: code.into(), key_code, text, modifiers: 0 }
}

/// The key as typed with Shift held: letters become capitals, digits and punctuation their
/// shifted characters.
fn shifted(mut p: KeyPress) -> KeyPress {
    if p.key.len() == 1 {
        let c = p.key.chars().next().unwrap_or_default();
        let up = if c.is_ascii_lowercase() {
            Some(c.to_ascii_uppercase())
        } else if c.is_ascii_digit() {
            DIGIT_SHIFTED.chars().nth(c as usize - '0' as usize)
        } else {
            PUNCTUATION.iter().find(|(plain, ..)| *plain == c).map(|(_, s, ..)| *s)
        };
        if let Some(up) = up {
            p.key = up.to_string();
            p.text = Some(up.to_string());
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_types_a_carriage_return_so_forms_submit() {
        let keys = parse_keys("Enter").unwrap();
        assert_eq!(keys, vec![press("Enter", "Enter", 13, Some("\r".into()))]);
    }

    #[test]
    fn control_a_selects_without_typing() {
        let keys = parse_keys("Control+a").unwrap();
        assert_eq!(keys[0].key, "a");
        assert_eq!(keys[0].code, "KeyA");
        assert_eq!(keys[0].key_code, 65);
        assert_eq!(keys[0].modifiers, CONTROL);
        assert_eq!(keys[0].text, None);
    }

    #[test]
    fn sequences_aliases_and_shift_work() {
        let keys = parse_keys("esc  ArrowDown shift+tab Shift+1 A ctrl+shift+k").unwrap();
        let names: Vec<&str> = keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(names, ["Escape", "ArrowDown", "Tab", "!", "A", "K"]);
        assert_eq!(keys[2].modifiers, SHIFT);
        assert_eq!(keys[3].text.as_deref(), Some("!"));
        assert_eq!(keys[4].modifiers, SHIFT);
        assert_eq!(keys[5].modifiers, CONTROL | SHIFT);
        assert_eq!(keys[5].text, None);
        assert_eq!(parse_keys("+").unwrap()[0].key, "+");
        assert_eq!(parse_keys("Control++").unwrap()[0].modifiers, CONTROL | SHIFT);
    }

    #[test]
    fn unknown_keys_and_modifiers_are_named() {
        let err = parse_keys("Enter Hyper+x").unwrap_err();
        assert!(err.contains("unknown modifier \"Hyper\""), "{err}");
        let err = parse_keys("Submit").unwrap_err();
        assert!(err.contains("unknown key \"Submit\""), "{err}");
        assert!(parse_keys("   ").is_err());
        assert!(parse_keys(&"a ".repeat(51)).is_err());
    }
}
