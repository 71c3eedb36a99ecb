use std::sync::Arc;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::go::GoDuration;
use crate::instant::sub_instants;

/// The transcript: every line stamped with the virtual time since the script started.
#[derive(Clone)]
pub(crate) struct Out {
    buf: Arc<Mutex<String>>,
    clock: Clock,
    start: Instant,
}

impl Out {
    pub(crate) fn new(clock: Clock) -> Self {
        Out {
            buf: Arc::new(Mutex::new(String::new())),
            start: clock.now(),
            clock,
        }
    }

    /// Virtual time since the script started.
    pub(crate) fn stamp(&self) -> GoDuration {
        sub_instants(self.clock.now(), self.start)
    }

    /// An instant as virtual time since the script started.
    pub(crate) fn since_start(&self, t: Instant) -> GoDuration {
        sub_instants(t, self.start)
    }

    fn push(&self, text: std::fmt::Arguments<'_>) {
        use std::fmt::Write;
        let t = self.stamp();
        let mut buf = self.buf.lock();
        let _ = writeln!(buf, "[t={t}] {text}");
    }

    /// A command, echoed.
    pub(crate) fn echo(&self, command: &str) {
        self.push(format_args!("{command}"));
    }

    /// A command's result.
    pub(crate) fn result(&self, text: impl std::fmt::Display) {
        self.push(format_args!("  => {text}"));
    }

    /// An asynchronous event.
    pub(crate) fn event(&self, text: impl std::fmt::Display) {
        self.push(format_args!("~ {text}"));
    }

    pub(crate) fn take(&self) -> String {
        std::mem::take(&mut *self.buf.lock())
    }
}

/// `1s [1000000000ns]`, the form results print durations in.
pub(crate) fn with_nanos(d: GoDuration) -> String {
    format!("{d} [{}ns]", d.as_nanos())
}
