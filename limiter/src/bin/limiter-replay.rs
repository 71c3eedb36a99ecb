//! `limiter-replay FILE|-`: runs a conformance script and prints its transcript.

use std::io::Read;
use std::process::ExitCode;

const HELP: &str = "\
usage: limiter-replay FILE

Runs a conformance script on a virtual clock, exact to the nanosecond, and prints its
transcript: the lines the Go libraries (x/time/rate, client-go workqueue, controller-runtime,
crossplane-runtime) print for it. FILE may be - for standard input.

A script has one command per line (# starts a comment), for example:
  limiter L 7.5 1          rate.NewLimiter(7.5, 1); LIMIT may be inf or every=D
  waitn L 1                WaitN(ctx, 1); blocks while virtual time moves
  reserve L 2 as R         ReserveN(now, 2), naming the reservation R
  rl F fastslow 5ms 10s 3  client-go's rate limiters: exp, fastslow, bucket, default,
                           itemdefault, maxof, maxwait, xpglobal, xpcontroller
  queue Q delaying         queues: fifo, delaying, ratelimiting R, pq [R]
  addafter Q a -5s         durations and integers of any sign mean what they mean in Go
  advance 1ns              time.Sleep in a synctest bubble
The limiter crate's README lists every command (\"The replay language\").

A line that does not parse stops the script: the transcript so far goes to standard output,
FILE:LINE:COLUMN and what was expected to standard error.

Exit codes: 0 ran to the end, 1 the script failed, 2 bad usage or unreadable file.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = match args.as_slice() {
        [h] if h == "-h" || h == "--help" => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        [p] => p.clone(),
        _ => {
            eprint!("{HELP}");
            return ExitCode::from(2);
        }
    };
    let mut script = String::new();
    let read = if path == "-" {
        std::io::stdin().read_to_string(&mut script).map(|_| ())
    } else {
        std::fs::read_to_string(&path).map(|s| script = s)
    };
    if let Err(e) = read {
        eprintln!("limiter-replay: cannot read {path}: {e}");
        return ExitCode::from(2);
    }
    match limiter::replay::run(&script) {
        Ok(transcript) => {
            print!("{transcript}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            print!("{}", e.partial);
            let mut message = e.error.to_string();
            let mut cause = std::error::Error::source(&e.error);
            while let Some(c) = cause {
                message = format!("{message}: {c}");
                cause = c.source();
            }
            eprintln!("limiter-replay: {path}:{}:{}: {message}", e.line, e.column);
            ExitCode::from(1)
        }
    }
}
