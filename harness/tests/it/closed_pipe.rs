//! Every command that prints survives its reader going away (`harness schema | head -1`):
//! exit 0 or 141, or a SIGPIPE, and never a panic.

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Child, Command, ExitStatus, Stdio};

use crate::fixture::scenario;

/// The commands that print to standard output without running a scenario.
fn printing_commands() -> Vec<Vec<String>> {
    let smoke = scenario("smoke.yaml");
    [
        vec!["schema"],
        vec!["predict", &smoke],
        vec!["predict", "--json", &smoke],
        vec!["validate", &smoke],
        vec!["provider-args", &smoke],
        vec!["flowschema"],
        vec!["--help"],
    ]
    .into_iter()
    .map(|args| args.into_iter().map(str::to_owned).collect())
    .collect()
}

fn ended_quietly(status: ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if status.signal() == Some(13) {
            return true;
        }
    }
    matches!(status.code(), Some(0 | 141))
}

fn stderr_of(child: &mut Child) -> String {
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr piped")
        .read_to_string(&mut err)
        .expect("stderr readable");
    err
}

#[test]
fn every_printing_command_exits_quietly_when_its_reader_stops_after_one_line() {
    for args in printing_commands() {
        let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("harness starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout piped"))
            .read_line(&mut first)
            .expect("one line");
        // The reader, and with it the pipe's last read end, is dropped here.
        assert!(!first.is_empty(), "{args:?} printed nothing");
        let err = stderr_of(&mut child);
        let status = child.wait().expect("harness ends");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(ended_quietly(status), "{args:?}: {status}\n{err}");
    }
}

#[test]
fn every_printing_command_exits_141_without_a_word_when_its_output_is_already_closed() {
    for args in printing_commands() {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        // No read end left: the command's first write fails with a broken pipe.
        drop(reader);
        let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .expect("harness starts");
        let err = stderr_of(&mut child);
        let status = child.wait().expect("harness ends");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if args[0] != "--help" && args[0] != "validate" {
            assert_eq!(err, "", "{args:?}");
        }
        assert!(ended_quietly(status), "{args:?}: {status}\n{err}");
    }
}
