//! What a Korean page must not show: English words a person reads (codes beside their meaning and the people's own texts aside) and UTC stamps.

/// English words a Korean page must not show (codes kept beside their meaning are inside
/// `<code>` or parentheses and are not looked at).
pub const ENGLISH: &[&str] = &[
    "rows",
    "valid",
    "rejected",
    "duplicates",
    "suppressed",
    "draft",
    "checked",
    "finished",
    "chunks",
    "encoding",
    "Refused",
    "Back",
    "Sign out",
    "not a Korean",
    "has no value",
    "every chunk",
    "at once",
    "editor",
    "approver",
    "viewer",
    "Not found",
    "awaiting",
    "approved",
    "characters",
    "first",
    "longest",
    "fallback",
    "answered",
    "total",
    "provisional",
    "alimtalk",
    "ALIMTALK",
];

/// The text a person reads on a page: no tags, no script or style, no `<code>` or `<pre>` (codes
/// and the people's own texts), no parenthesised codes such as `(phone_invalid)`.
pub fn visible_text(page: &str) -> String {
    let mut text = page.to_string();
    for (open, close) in [
        ("<script", "</script>"),
        ("<style", "</style>"),
        ("<code", "</code>"),
        ("<pre", "</pre>"),
        ("<title", "</title>"),
    ] {
        while let Some(start) = text.find(open) {
            let Some(end) = text[start..].find(close) else { break };
            text.replace_range(start..start + end + close.len(), " ");
        }
    }
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    // `(phone_invalid)`: a code kept beside its meaning.
    let mut kept = String::new();
    let mut rest = out.as_str();
    while let Some(start) = rest.find('(') {
        kept.push_str(&rest[..start]);
        match rest[start..].find(')') {
            Some(end)
                if rest[start + 1..start + end]
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_') =>
            {
                rest = &rest[start + end + 1..];
            }
            _ => {
                kept.push('(');
                rest = &rest[start + 1..];
            }
        }
    }
    kept.push_str(rest);
    kept
}

pub fn english_on(page: &str) -> Vec<&'static str> {
    let text = visible_text(page);
    ENGLISH
        .iter()
        .copied()
        .filter(|word| {
            text.match_indices(word).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + word.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric()) && !after.is_some_and(|c| c.is_ascii_alphanumeric())
            })
        })
        .collect()
}

/// UTC stamps (`2026-11-26T12:38:30Z`, `…12:38Z`) in a page's visible text: a Korean console
/// says KST.
pub fn utc_stamps(page: &str) -> Vec<String> {
    let text = visible_text(page);
    let bytes = text.as_bytes();
    text.match_indices('Z')
        .filter(|(at, _)| {
            *at >= 5 && {
                let clock = &bytes[at - 5..*at];
                clock[2] == b':' && [0, 1, 3, 4].iter().all(|&i| clock[i].is_ascii_digit())
            }
        })
        .map(|(at, _)| {
            let start = (0..=at.saturating_sub(19))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            text[start..=at].to_string()
        })
        .collect()
}
