//! XML for the AWS protocols: escaping text for answers, and reading a request body into a
//! small tree of elements (names without namespace prefixes, text, children) that the
//! services check against their schema.

use std::borrow::Cow;

use quick_xml::events::Event;

/// Escapes element text as AWS writes it: `&`, `<` and `>` only (quotes stay as they
/// are, as in AWS's messages: `Value null at 'roleArn'`). Not for attribute values.
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    quick_xml::escape::partial_escape(text)
}

/// An element: its local name, its text (inner text of a leaf, concatenated) and its
/// children in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Element {
    pub name: String,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every child named `name`.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The text of the first child named `name`.
    pub fn text_of(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.as_str())
    }

    /// The element written back as XML (no declaration, no namespace).
    pub fn write(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.name);
        if self.children.is_empty() && self.text.is_empty() {
            out.push_str("/>");
            return;
        }
        out.push('>');
        if self.children.is_empty() {
            out.push_str(&escape(&self.text));
        }
        for child in &self.children {
            child.write(out);
        }
        out.push_str("</");
        out.push_str(&self.name);
        out.push('>');
    }

    /// The element as a document root with `xmlns`, as S3 writes its answers.
    pub fn document(&self, namespace: &str) -> String {
        let mut inner = String::new();
        self.write(&mut inner);
        let open = format!("<{}", self.name);
        let with_ns = format!("<{} xmlns=\"{namespace}\"", self.name);
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}",
            inner.replacen(&open, &with_ns, 1)
        )
    }
}

/// Why a body is not an XML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotXml(pub String);

/// The most nested elements a body may have.
const MAX_DEPTH: usize = 32;

/// Reads a whole document: exactly one root element, well formed.
pub(crate) fn parse(body: &[u8]) -> Result<Element, NotXml> {
    let text = std::str::from_utf8(body).map_err(|_| NotXml("the body is not UTF-8".into()))?;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader.read_event().map_err(|e| NotXml(e.to_string()))?;
        match event {
            Event::Start(start) => {
                if root.is_some() || stack.len() >= MAX_DEPTH {
                    return Err(NotXml("more than one root element, or too deep".into()));
                }
                stack.push(Element {
                    name: local(start.name().as_ref()),
                    ..Element::default()
                });
            }
            Event::Empty(start) => {
                let element = Element {
                    name: local(start.name().as_ref()),
                    ..Element::default()
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    None if root.is_none() => root = Some(element),
                    None => return Err(NotXml("more than one root element".into())),
                }
            }
            Event::End(_) => {
                let element = stack
                    .pop()
                    .ok_or_else(|| NotXml("unbalanced end tag".into()))?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    None => root = Some(element),
                }
            }
            Event::Text(t) => {
                let content = t.xml10_content();
                match stack.last_mut() {
                    Some(parent) => parent.text.push_str(&content),
                    None if content.trim().is_empty() => {}
                    None => return Err(NotXml("text outside the root element".into())),
                }
            }
            Event::CData(t) => {
                let content = t.xml10_content();
                if let Some(parent) = stack.last_mut() {
                    parent.text.push_str(&content);
                }
            }
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().map_err(|e| NotXml(e.to_string()))? {
                    Some(ch) => ch.to_string(),
                    None => quick_xml::escape::resolve_predefined_entity(&r)
                        .ok_or_else(|| NotXml(format!("unknown entity &{};", &*r)))?
                        .to_owned(),
                };
                match stack.last_mut() {
                    Some(parent) => parent.text.push_str(&resolved),
                    None => return Err(NotXml("text outside the root element".into())),
                }
            }
            Event::Eof => break,
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err(NotXml("the document ends inside an element".into()));
    }
    let mut root = root.ok_or_else(|| NotXml("no root element".into()))?;
    trim_parents(&mut root);
    Ok(root)
}

/// Drops the whitespace between the children of an element that has children.
fn trim_parents(element: &mut Element) {
    if !element.children.is_empty() {
        element.text.clear();
        for child in &mut element.children {
            trim_parents(child);
        }
    }
}

fn local(name: &str) -> String {
    name.rsplit(':').next().unwrap_or(name).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_into_elements_with_text_and_entities() {
        let body = br#"<?xml version="1.0" encoding="UTF-8"?>
<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <TagSet><Tag><Key>a&amp;b</Key><Value>&#49;</Value></Tag><Tag><Key>c</Key><Value/></Tag></TagSet>
</Tagging>"#;
        let root = parse(body).unwrap();
        assert_eq!(root.name, "Tagging");
        let tags: Vec<_> = root.child("TagSet").unwrap().all("Tag").collect();
        assert_eq!(tags.len(), 2);
        assert_eq!(tags[0].text_of("Key"), Some("a&b"));
        assert_eq!(tags[0].text_of("Value"), Some("1"));
        assert_eq!(tags[1].text_of("Value"), Some(""));
        let mut out = String::new();
        root.write(&mut out);
        assert_eq!(
            out,
            "<Tagging><TagSet><Tag><Key>a&amp;b</Key><Value>1</Value></Tag><Tag><Key>c</Key><Value/></Tag></TagSet></Tagging>"
        );
    }

    #[test]
    fn malformed_documents_are_refused() {
        for body in [
            &b"<a><b></a>"[..],
            b"<a>",
            b"",
            b"text",
            b"<a/><b/>",
            b"<a>&nope;</a>",
        ] {
            assert!(parse(body).is_err(), "{}", String::from_utf8_lossy(body));
        }
    }
}
