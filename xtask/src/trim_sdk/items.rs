//! Rust source cut into items by its brackets, without parsing it: enough for the code
//! smithy-rs generates, whose items are what the trim keeps or drops.
//!
//! An item's span starts where the previous one ended, so it carries the blank lines, doc
//! comments and attributes above it, and dropping a span leaves the file as if the item
//! had never been written.

use std::ops::Range;

/// The byte positions in `s[range]` of brackets and item separators (`(`, `)`, `[`, `]`,
/// `{`, `}`, `;`, `,`), outside comments, strings and character literals.
fn structure(s: &str, range: Range<usize>) -> Vec<(usize, u8)> {
    let b = s.as_bytes();
    let end = range.end;
    let mut out = Vec::new();
    let mut i = range.start;
    let ident_before = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    while i < end {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(b, i),
            b'"' => i = string_end(b, i),
            b'r' | b'b' if !ident_before(i) && raw_string_start(b, i).is_some() => {
                i = raw_string_end(b, i);
            }
            b'b' if !ident_before(i) && b.get(i + 1) == Some(&b'"') => i = string_end(b, i + 1),
            b'\'' => i = char_or_lifetime_end(b, i),
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b';' | b',' => {
                out.push((i, c));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p + 1)
}

fn block_comment_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// `b[i]` is the opening `"`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() && b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i + 1
}

/// The number of `#`s of a raw string (`r#"`, `br"`) starting at `i`.
fn raw_string_start(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + usize::from(b[i] == b'b');
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    (b.get(j + hashes) == Some(&b'"')).then_some(hashes)
}

fn raw_string_end(b: &[u8], i: usize) -> usize {
    let hashes = raw_string_start(b, i).unwrap_or(0);
    let open = b[i..]
        .iter()
        .position(|&c| c == b'"')
        .map_or(b.len(), |p| i + p);
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    b[open + 1..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map_or(b.len(), |p| open + 1 + p + close.len())
}

/// `'x'`, `'\n'`, `'\u{1F600}'` end after their closing quote; a lifetime after its `'`.
fn char_or_lifetime_end(b: &[u8], i: usize) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        let mut j = i + 2;
        while j < b.len() && b[j] != b'\'' {
            j += 1;
        }
        return j + 1;
    }
    // A character may be several bytes of UTF-8.
    let width = std::str::from_utf8(&b[i + 1..b.len().min(i + 5)])
        .or_else(|e| std::str::from_utf8(&b[i + 1..i + 1 + e.valid_up_to()]))
        .ok()
        .and_then(|s| s.chars().next())
        .map_or(1, char::len_utf8);
    if b.get(i + 1 + width) == Some(&b'\'') {
        i + 2 + width
    } else {
        i + 1
    }
}

/// Skips whitespace and comments from `i`.
fn skip_trivia(s: &str, mut i: usize, end: usize) -> usize {
    let b = s.as_bytes();
    while i < end {
        if b[i].is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            i = line_end(b, i);
        } else if b[i..].starts_with(b"/*") {
            i = block_comment_end(b, i);
        } else {
            break;
        }
    }
    i.min(end)
}

/// How a list of items is separated: items of a module, trait or impl end at `;` or at
/// their closing brace; an enum's variants end at `,`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum List {
    Items,
    Variants,
}

/// The spans of the items in `s[range]`, in order, covering it up to its trailing
/// whitespace and comments.
pub fn split(s: &str, range: Range<usize>, list: List) -> Vec<Range<usize>> {
    let marks = structure(s, range.clone());
    let mut spans = Vec::new();
    let mut from = range.start;
    let mut m = 0;
    loop {
        let start = skip_trivia(s, from, range.end);
        if start >= range.end {
            break;
        }
        while m < marks.len() && marks[m].0 < start {
            m += 1;
        }
        let inner_attribute = s[start..].starts_with("#![");
        let mut depth = 0i32;
        let mut end = range.end;
        while m < marks.len() {
            let (p, c) = marks[m];
            m += 1;
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 && c == b'}' && list == List::Items {
                        let next = skip_trivia(s, p + 1, range.end);
                        end = if s[next..].starts_with(';') {
                            next + 1
                        } else {
                            p + 1
                        };
                        break;
                    }
                    if depth == 0 && c == b']' && inner_attribute {
                        end = p + 1;
                        break;
                    }
                }
                b';' if depth == 0 && list == List::Items => {
                    end = p + 1;
                    break;
                }
                b',' if depth == 0 && list == List::Variants => {
                    end = p + 1;
                    break;
                }
                _ => {}
            }
        }
        spans.push(from..end);
        from = end;
    }
    spans
}

/// The inside of the first top-level `{ … }` of `s[range]` (a container's body), if any:
/// a brace inside parentheses or brackets (an attribute's, a tuple's) does not count.
pub fn body(s: &str, range: Range<usize>) -> Option<Range<usize>> {
    let mut depth = 0i32;
    let mut open = None;
    for (p, c) in structure(s, range) {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' => {
                if depth == 0 && open.is_none() {
                    open = Some(p + 1);
                }
                depth += 1;
            }
            b'}' => {
                depth -= 1;
                if let (0, Some(o)) = (depth, open) {
                    return Some(o..p);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` without its `//` comments (doc comments included), for matching item text.
pub fn code(s: &str) -> String {
    s.lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(s: &str, list: List) -> Vec<&str> {
        split(s, 0..s.len(), list)
            .into_iter()
            .map(|r| s[r].trim())
            .collect()
    }

    #[test]
    fn items_end_at_their_semicolon_or_closing_brace_with_their_docs_and_attributes() {
        let s = r#"//! Inner docs.
#![allow(x)]
/// A.
pub use crate::a::{B, C};
mod d;
#[derive(Debug)]
pub struct E { f: [u8; 2] }
static G: H = H { i: "};" };
impl J {
    fn k(&self) -> &'static str { '}'; "{" }
}
"#;
        assert_eq!(
            pieces(s, List::Items),
            [
                "//! Inner docs.\n#![allow(x)]",
                "/// A.\npub use crate::a::{B, C};",
                "mod d;",
                "#[derive(Debug)]\npub struct E { f: [u8; 2] }",
                "static G: H = H { i: \"};\" };",
                "impl J {\n    fn k(&self) -> &'static str { '}'; \"{\" }\n}",
            ]
        );
    }

    #[test]
    fn variants_end_at_their_comma() {
        let s = "A,\n/// B.\nB(crate::x::Y),\nC { d: (u8, u8) },\n#[doc(hidden)]\nUnknown";
        assert_eq!(
            pieces(s, List::Variants),
            [
                "A,",
                "/// B.\nB(crate::x::Y),",
                "C { d: (u8, u8) },",
                "#[doc(hidden)]\nUnknown"
            ]
        );
    }

    #[test]
    fn a_body_skips_braces_inside_attributes_and_strings() {
        let s = r##"#[doc = "{"] impl<T: Fn() -> [u8; 1]> X for Y { fn z() { r#"}"# } }"##;
        let b = body(s, 0..s.len()).unwrap();
        assert_eq!(s[b].trim(), r##"fn z() { r#"}"# }"##);
    }

    #[test]
    fn comments_go_from_matched_text() {
        assert_eq!(
            code("/// crate::a\nuse b; // crate::c\n"),
            "\nuse b; // crate::c"
        );
    }
}
