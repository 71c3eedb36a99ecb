//! JUnit XML: one testsuite per run, one testcase per assertion.

use std::fmt::Write as _;

use crate::predict::fmt_num;
use crate::result::RunResult;

/// Escapes text for XML attributes and content.
#[must_use]
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// The JUnit document.
#[must_use]
pub fn junit(r: &RunResult) -> String {
    let failures = r.verdicts.iter().filter(|v| !v.pass).count();
    let name = xml_escape(&r.scenario.name);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"harness\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">",
        r.verdicts.len(),
        r.duration_s
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{name}\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">",
        r.verdicts.len(),
        r.duration_s
    );
    for v in &r.verdicts {
        let _ = write!(
            out,
            "    <testcase classname=\"{name}\" name=\"{}\"",
            xml_escape(&v.name)
        );
        let detail = format!(
            "observed {} {} limit {} (predicted {}, margin {})\nformula: {}\ninputs: {}{}",
            fmt_num(v.observed),
            if v.upper { "≤" } else { "≥" },
            fmt_num(v.limit),
            fmt_num(v.predicted),
            fmt_num(v.margin),
            v.formula,
            v.inputs,
            v.note
                .as_ref()
                .map(|n| format!("\nnote: {n}"))
                .unwrap_or_default()
        );
        if v.pass {
            let _ = writeln!(
                out,
                ">\n      <system-out>{}</system-out>\n    </testcase>",
                xml_escape(&detail)
            );
        } else {
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                xml_escape(&format!(
                    "observed {} against limit {}",
                    fmt_num(v.observed),
                    fmt_num(v.limit)
                )),
                xml_escape(&v.check),
                xml_escape(&detail)
            );
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
