//! The `afdisk` binary: parses the command line and hands over to a front end — the CLI subcommands in
//! `cli`, or the terminal UI in `tui` when no subcommand is given.

mod cli;
mod tui;

fn main() {
    std::process::exit(cli::run());
}
