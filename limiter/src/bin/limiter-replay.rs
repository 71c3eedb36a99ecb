//! `limiter-replay FILE|-`: runs a conformance script and prints its transcript.

use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = match args.as_slice() {
        [p] if p != "-h" && p != "--help" => p.clone(),
        _ => {
            eprintln!(
                "usage: limiter-replay FILE\n\n\
                 Runs a conformance script (the language of specs/replay-language.md) on a\n\
                 virtual clock, exact to the nanosecond, and prints the transcript. FILE may be\n\
                 - for standard input. A line that does not parse stops the script: the\n\
                 transcript so far goes to standard output, FILE:LINE:COLUMN and what was\n\
                 expected to standard error.\n\
                 Exit codes: 0 ran to the end, 1 the script failed, 2 bad usage or unreadable file."
            );
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
