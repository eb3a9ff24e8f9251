//! The model fingerprint covers code, not comments, tests or layout (`fingerprint.rs`, used by
//! `build.rs` for `summary.model`).

#[path = "../fingerprint.rs"]
mod fingerprint;

use fingerprint::{model_text, strip_comments, test_only_modules};

const CODE: &str = r##"//! A module.
use std::fmt; // trailing

/// Doc comment.
pub fn f<'a>(x: &'a str) -> usize {
    /* block /* nested */ still comment */
    let s = "a // not a comment /* nor this */";
    let r = r#"raw "// kept""#;
    let q = '"';
    let e = '\'';
    x.len() + s.len() + r.len() + q.len_utf8() + e.len_utf8()
}

#[cfg(test)]
mod tests {
    #[test]
    fn t() { assert_eq!(super::f("}"), 1 + '{'.len_utf8()); }
}
"##;

#[test]
fn comments_and_layout_are_dropped_and_literals_kept() {
    let text = model_text(CODE);
    assert_eq!(
        text,
        concat!(
            r#"use std::fmt;pub fn f<'a>(x:&'a str)->usize{"#,
            r##"let s="a // not a comment /* nor this */";let r=r#"raw "// kept""#;"##,
            r#"let q='"';let e='\'';"#,
            "x.len()+s.len()+r.len()+q.len_utf8()+e.len_utf8()}"
        )
    );
}

#[test]
fn a_comment_a_test_or_the_layout_changes_nothing_and_code_does() {
    let base = model_text(CODE);
    let comment = CODE.replace(
        "/// Doc comment.",
        "/// Another doc comment, longer.\n// and a line",
    );
    let layout = CODE.replace(
        "pub fn f<'a>(x: &'a str) -> usize {",
        "pub fn f<'a>(\n    x: &'a str\n) -> usize\n{",
    );
    let test = CODE.replace(
        "assert_eq!(super::f(\"}\"), 1 + '{'.len_utf8());",
        "assert!(true);",
    );
    assert_eq!(model_text(&comment), base);
    assert_eq!(model_text(&layout), base);
    assert_eq!(model_text(&test), base);
    let code = CODE.replace("x.len() + s.len()", "x.len() * s.len()");
    let literal = CODE.replace("not a comment", "not  a comment");
    assert_ne!(model_text(&code), base);
    assert_ne!(
        model_text(&literal),
        base,
        "whitespace inside a literal is code"
    );
}

#[test]
fn test_only_module_files_are_found_with_or_without_a_path() {
    let code = strip_comments(
        "#[cfg(test)]\n#[path = \"tests.rs\"]\nmod tests;\n#[cfg(test)] mod testnet;\n\
         #[cfg(test)]\npub(crate) mod testutil { }\n",
    );
    assert_eq!(
        test_only_modules(&code),
        vec![
            ("tests".to_string(), Some("tests.rs".to_string())),
            ("testnet".to_string(), None)
        ]
    );
}

#[test]
fn every_source_file_strips_to_balanced_code() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 20);
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let text = model_text(&src);
        // Idempotent, and the braces outside literals still pair up.
        assert_eq!(model_text(&text), text, "{}", path.display());
        let opens = text.matches('{').count();
        let closes = text.matches('}').count();
        assert!(
            opens.abs_diff(closes) <= 2,
            "{}: {opens} {{ vs {closes} }}",
            path.display()
        );
        assert!(!text.contains("#[cfg(test)]"), "{}", path.display());
    }
}
