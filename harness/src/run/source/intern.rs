//! One shared string per distinct value among many (an operation's name over its calls, an
//! object's key over its writes), so a day of journal entries does not allocate each again.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

/// Interned strings.
#[derive(Default)]
pub struct Interner {
    seen: HashSet<Arc<str>>,
    buf: String,
}

impl Interner {
    /// The shared string `args` formats to.
    pub fn get(&mut self, args: std::fmt::Arguments<'_>) -> Arc<str> {
        self.buf.clear();
        self.buf
            .write_fmt(args)
            .expect("formatting into a String does not fail");
        if let Some(s) = self.seen.get(self.buf.as_str()) {
            return s.clone();
        }
        let s: Arc<str> = self.buf.as_str().into();
        self.seen.insert(s.clone());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_allocation() {
        let mut i = Interner::default();
        let a = i.get(format_args!("{}:{}", "s3", "HeadBucket"));
        let b = i.get(format_args!("{}:{}", "s3", "HeadBucket"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*a, "s3:HeadBucket");
        assert!(!Arc::ptr_eq(&a, &i.get(format_args!("s3:GetBucketAcl"))));
    }
}
