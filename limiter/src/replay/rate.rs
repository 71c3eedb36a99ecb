//! The x/time/rate commands: `limiter`, `allow`, `reserve`, `delay`, `cancel`, `tokens`,
//! `limit`, `burst`, `setlimit`, `setburst`, `waitn`.

use tokio::time::Instant;

use super::CommandError;
use super::args::{Result, Word, Words};
use super::out::with_nanos;
use super::world::{RateState, World};
use crate::clock::{Clock, Stalled};
use crate::go::format_float;
use crate::instant::{add_duration, sub_instants};
use crate::rate::Limiter;

fn not_defined(word: Word<'_>, kind: &'static str) -> super::args::Located {
    word.error(CommandError::NotDefined {
        kind,
        name: word.text.to_owned(),
    })
}

impl RateState {
    fn limiter(&self, word: Word<'_>) -> Result<Limiter> {
        self.limiters
            .get(word.text)
            .cloned()
            .ok_or_else(|| not_defined(word, "limiter"))
    }
}

/// The optional count `n` at word `i` (1 when absent or when the word is `as`).
fn count(w: &Words<'_>, i: usize) -> Result<i64> {
    match w.opt(i) {
        Some(word) if word.text != "as" => word.int("an integer count of tokens"),
        _ => Ok(1),
    }
}

impl World {
    /// A rate command; `at` is the explicit time (`at=±D`) or now.
    pub(crate) async fn rate(&mut self, cmd: &str, w: &Words<'_>, at: Instant) -> Result<()> {
        let name = w.get(1, "a name")?;
        match cmd {
            "limiter" => {
                let limit = w.get(2, "a limit")?.limit()?;
                let burst = w.get(3, "a burst")?.int("an integer burst")?;
                let lim = Limiter::with_clock(limit, burst, Clock::from(&self.clock));
                self.rate.limiters.insert(name.text.to_owned(), lim);
            }
            "delay" | "cancel" => {
                let (lim, r) = self
                    .rate
                    .reservations
                    .get(name.text)
                    .ok_or_else(|| not_defined(name, "reservation"))?;
                let lim = &self.rate.limiters[lim];
                if cmd == "delay" {
                    self.out.result(with_nanos(r.delay_from(at)));
                } else {
                    lim.cancel_at(r, at);
                }
            }
            "allow" => {
                let lim = self.rate.limiter(name)?;
                self.out.result(lim.allow_n_at(at, count(w, 2)?));
            }
            "reserve" => {
                let lim = self.rate.limiter(name)?;
                let r = lim.reserve_n_at(at, count(w, 2)?);
                self.out.result(format_args!(
                    "ok={} delay={}",
                    r.ok(),
                    with_nanos(r.delay_from(at))
                ));
                if let Some(i) = w.from(0).iter().position(|x| x.text == "as") {
                    let label = w.get(i + 1, "a reservation name after `as`")?;
                    self.rate
                        .reservations
                        .insert(label.text.to_owned(), (name.text.to_owned(), r));
                }
            }
            "tokens" => {
                let lim = self.rate.limiter(name)?;
                self.out.result(format_float(lim.tokens_at(at)));
            }
            "limit" => {
                let lim = self.rate.limiter(name)?;
                self.out.result(format_float(lim.limit().0));
            }
            "burst" => {
                let lim = self.rate.limiter(name)?;
                self.out.result(lim.burst());
            }
            "setlimit" => {
                let lim = self.rate.limiter(name)?;
                lim.set_limit_at(at, w.get(2, "a limit")?.limit()?);
            }
            "setburst" => {
                let lim = self.rate.limiter(name)?;
                lim.set_burst_at(at, w.get(2, "a burst")?.int("an integer burst")?);
            }
            "waitn" => {
                let lim = self.rate.limiter(name)?;
                let n = count(w, 2)?;
                let start = self.clock.now();
                let deadline = match w.opt(3) {
                    Some(d) => Some(add_duration(start, d.duration("the context timeout")?)),
                    None => None,
                };
                let result = self
                    .clock
                    .run_until(lim.wait_n(n, deadline), None)
                    .await
                    .map_err(|_: Stalled| w.at_end(CommandError::Deadlock("waitn")))?;
                let waited = sub_instants(self.clock.now(), start);
                let err = match result {
                    Ok(()) => "<nil>".to_owned(),
                    Err(e) => e.to_string(),
                };
                self.out.result(format_args!("err={err} waited={waited}"));
            }
            _ => unreachable!("dispatched by the runner"),
        }
        Ok(())
    }
}
