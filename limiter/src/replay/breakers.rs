//! The circuit breaker commands: `breaker`, `bevent`, `bself`, `bstate`, `bcond`, `btokens`,
//! `btargets`, `breset`, `bmetrics`.

use super::CommandError;
use super::args::{Result, Word, Words};
use super::world::World;
use crate::controller::Request;
use crate::crossplane::circuit::{
    Breaker, BreakerConfig, Deletion, EventSource, Mode, Responsive, Watch, WatchEvent, handle,
};
use crate::go::format_float;

/// `breaker B [burst=F] [refill=F] [cooldown=D] [halfopen=D] [gc=D] [mode=released|eager]`.
fn config(options: &[Word<'_>]) -> Result<BreakerConfig> {
    let mut c = BreakerConfig::default();
    for o in options {
        if let Some(v) = o.value_of("burst") {
            c = c.burst(v.float("a number of tokens")?);
        } else if let Some(v) = o.value_of("refill") {
            c = c.refill_per_second(v.float("a number of tokens per second")?);
        } else if let Some(v) = o.value_of("cooldown") {
            c = c.cooldown(v.duration("cooldown=")?);
        } else if let Some(v) = o.value_of("halfopen") {
            c = c.half_open_interval(v.duration("halfopen=")?);
        } else if let Some(v) = o.value_of("gc") {
            c = c.expire_after(v.duration("gc=")?);
        } else if let Some(v) = o.value_of("mode") {
            c = c.mode(
                v.text
                    .parse::<Mode>()
                    .map_err(|_| v.unknown("a mode: released or eager"))?,
            );
        } else {
            return Err(o.unknown(
                "a breaker option: burst=F, refill=F, cooldown=D, halfopen=D, gc=D or mode=M",
            ));
        }
    }
    Ok(c)
}

/// The event kind at word `i`.
fn event(w: &Words<'_>, i: usize) -> Result<WatchEvent> {
    let word = w.get(i, "an event kind")?;
    WatchEvent::parse(word.text).ok_or_else(|| word.unknown("create, update, delete or generic"))
}

/// The words from `i` on, without a trailing `deleting` or `marked`, and that flag.
fn deletion<'w, 'a>(w: &'w Words<'a>, i: usize) -> (&'w [Word<'a>], Deletion) {
    let rest = w.from(i);
    match rest.last().map(|x| x.text) {
        Some("deleting") => (&rest[..rest.len() - 1], Deletion::Deleting),
        Some("marked") => (&rest[..rest.len() - 1], Deletion::Marked),
        _ => (rest, Deletion::Live),
    }
}

impl World {
    fn breaker_named(&mut self, word: Word<'_>) -> Result<&mut Breaker> {
        self.breakers.get_mut(word.text).ok_or_else(|| {
            word.error(CommandError::NotDefined {
                kind: "breaker",
                name: word.text.to_owned(),
            })
        })
    }

    /// A circuit breaker command.
    pub(crate) fn breaker(&mut self, cmd: &str, w: &Words<'_>) -> Result<()> {
        let name = w.get(1, "a breaker name")?;
        if cmd == "breaker" {
            let c = config(w.from(2))?;
            self.breakers
                .insert(name.text.to_owned(), Breaker::new(name.text, c));
            return Ok(());
        }
        let now = self.clock.now();
        let out = self.out.clone();
        let b = self.breaker_named(name)?;
        match cmd {
            "bevent" => {
                let kind = event(w, 2)?;
                let source = EventSource::parse(w.get(3, "a source")?.text);
                let (targets, del) = deletion(w, 4);
                let targets = targets.iter().map(|t| Request::parse(t.text)).collect();
                out.result(handle(b, now, kind, &source, del, &Watch::Maps(targets)));
            }
            "bself" => {
                let kind = event(w, 2)?;
                let source = EventSource::parse(w.get(3, "an XR")?.text);
                let (extra, del) = deletion(w, 4);
                if let Some(x) = extra.first() {
                    return Err(x.unknown("deleting or marked"));
                }
                out.result(handle(b, now, kind, &source, del, &Watch::OwnXr));
            }
            "bstate" => {
                let target = Request::parse(w.get(2, "an XR")?.text);
                let s = b.state(now, &target);
                match s.next_allowed_at {
                    Some(next) if s.is_open => out.result(format_args!(
                        "open=true next-allowed-at={} triggered-by={}",
                        out.since_start(next),
                        s.triggered_by
                    )),
                    _ => out.result("open=false"),
                }
            }
            "bcond" => {
                let target = Request::parse(w.get(2, "an XR")?.text);
                out.result(Responsive::from_state(&b.state(now, &target)));
            }
            "btokens" => {
                let target = Request::parse(w.get(2, "an XR")?.text);
                match b.stored_tokens(&target) {
                    Some(t) => out.result(format_float(t)),
                    None => out.result("none"),
                }
            }
            "btargets" => {
                let all: Vec<String> = b.targets().iter().map(ToString::to_string).collect();
                out.result(format_args!("[{}]", all.join(" ")));
            }
            "breset" => b.reset_target(&Request::parse(w.get(2, "an XR")?.text)),
            "bmetrics" => out.result(b.metrics()),
            _ => unreachable!("dispatched by the runner"),
        }
        Ok(())
    }
}
