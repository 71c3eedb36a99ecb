//! Continue tokens for paged lists: the first page's resourceVersion and the key to
//! continue after, in a form that survives URLs untouched.

/// Encodes a continue token.
pub fn encode(resource_version: u64, key: &str) -> String {
    let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{resource_version}.{hex}")
}

/// Decodes a continue token, or `None` when it is not one of ours.
pub fn decode(token: &str) -> Option<(u64, String)> {
    let (rv, hex) = token.split_once('.')?;
    let rv = rv.parse().ok()?;
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()?;
    Some((rv, String::from_utf8(bytes).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_garbage_is_refused() {
        let token = encode(42, "default/b-1");
        assert_eq!(decode(&token), Some((42, "default/b-1".to_owned())));
        for bad in ["", "42", "x.00", "42.0", "42.zz", "42.ff"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }
}
