//! What of a Rust source file the model fingerprint (`WIFICC_MODEL`, see `build.rs`) covers:
//! its code, without comments, without items compiled only for tests (`#[cfg(test)]`), and with
//! every run of whitespace outside literals reduced to one space. Editing a comment, a unit
//! test or the layout of a file leaves the fingerprint, and the sweeps stored under it, as they
//! are; editing code does not.
//!
//! Shared by `build.rs` and `tests/fingerprint.rs` (both include this file).

/// The model-relevant text of Rust source `src`.
pub fn model_text(src: &str) -> String {
    strip_comments(&strip_test_items(&strip_comments(src)))
}

/// Drop comments (line, block with nesting, doc comments) and whitespace, keeping string,
/// byte-string, raw-string and character literals exactly. Whitespace outside literals stays
/// only where it separates two words (identifiers, keywords, numbers), as one space.
pub fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut space = false;
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let push = |out: &mut String, s: &str, space: &mut bool| {
        if *space && word(out.chars().next_back()) && word(s.chars().next()) {
            out.push(' ');
        }
        *space = false;
        out.push_str(s);
    };
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            space = true;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            space = true;
        } else if c.is_ascii_whitespace() {
            space = true;
            i += 1;
        } else if let Some(end) = raw_string_end(b, i) {
            push(&mut out, &src[i..end], &mut space);
            i = end;
        } else if c == b'"' {
            let end = quoted_end(b, i + 1, b'"');
            push(&mut out, &src[i..end], &mut space);
            i = end;
        } else if c == b'\'' {
            // A character literal ('a', '\n', '\u{1F600}') or a lifetime ('a): a literal closes
            // within a few bytes.
            let end = char_literal_end(b, i);
            push(&mut out, &src[i..end], &mut space);
            i = end;
        } else {
            let start = i;
            // A run of identifier characters, or one other character (UTF-8 safe).
            if c.is_ascii_alphanumeric() || c == b'_' {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
            } else {
                i += src[i..].chars().next().map_or(1, char::len_utf8);
            }
            push(&mut out, &src[start..i], &mut space);
        }
    }
    out
}

/// End (exclusive) of a raw string literal (`r"..."`, `r#"..."#`, `br#"..."#`) starting at `i`.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
    {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return Some((j + 1 + hashes).min(b.len()));
        }
        j += 1;
    }
    Some(b.len())
}

/// End (exclusive) of a literal closed by `quote`, its body starting at `j` (escapes skipped).
fn quoted_end(b: &[u8], mut j: usize, quote: u8) -> usize {
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

fn char_literal_end(b: &[u8], i: usize) -> usize {
    // '\n', '\'', '\u{1F600}': an escape runs to the closing quote.
    if b.get(i + 1) == Some(&b'\\') {
        return quoted_end(b, i + 1, b'\'');
    }
    // 'x' (one UTF-8 character, then the quote); anything else is a lifetime or label ('a).
    let width = match b.get(i + 1) {
        Some(&c) if c < 0x80 => 1,
        Some(&c) if c >= 0xF0 => 4,
        Some(&c) if c >= 0xE0 => 3,
        Some(_) => 2,
        None => return i + 1,
    };
    if b.get(i + 1 + width) == Some(&b'\'') {
        i + 2 + width
    } else {
        i + 1
    }
}

/// Drop every item preceded by `#[cfg(test)]`: through its matching closing brace, or through
/// its `;` (e.g. `#[cfg(test)] #[path = "tests.rs"] mod tests;`, whose file is then excluded by
/// the caller). Works on the output of [`strip_comments`].
pub fn strip_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let b = item.as_bytes();
        let (mut depth, mut j) = (0i32, 0usize);
        while j < b.len() {
            if let Some(end) = raw_string_end(b, j) {
                j = end;
                continue;
            }
            match b[j] {
                b'"' => {
                    j = quoted_end(b, j + 1, b'"');
                    continue;
                }
                b'\'' => {
                    j = char_literal_end(b, j);
                    continue;
                }
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        rest = &item[j.min(item.len())..];
    }
    out.push_str(rest);
    out
}

/// Modules in files of their own that only tests compile: `#[cfg(test)] mod NAME;`, with the
/// file's path when a `#[path = "..."]` attribute gives it. Works on the output of
/// [`strip_comments`].
pub fn test_only_modules(code: &str) -> Vec<(String, Option<String>)> {
    const MARK: &str = "#[cfg(test)]";
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        rest = &rest[at + MARK.len()..];
        let mut item = rest.trim_start();
        let mut path = None;
        while let Some(attr) = item.strip_prefix("#[") {
            let Some(close) = attr.find(']') else { break };
            if let Some(p) = attr[..close].strip_prefix("path=\"") {
                path = p.strip_suffix('"').map(str::to_string);
            }
            item = attr[close + 1..].trim_start();
        }
        for vis in ["pub(crate) ", "pub "] {
            item = item.strip_prefix(vis).unwrap_or(item);
        }
        let Some(decl) = item.strip_prefix("mod ") else {
            continue;
        };
        let name: String = decl
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if decl[name.len()..].trim_start().starts_with(';') {
            found.push((name, path));
        }
    }
    found
}
