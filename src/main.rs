//! The `afdisk` binary. `main` only chooses the mode (as ripgrep's `main` does): a CLI subcommand (`cli`), the
//! terminal UI (`tui`) when no subcommand is given and both stdin and stdout are terminals, or else the
//! non-terminal fallback, which prints as text what the UI would show. Neither front end calls the other.

mod cli;
mod tui;

use std::io::IsTerminal;

fn main() {
    let mut args = cli::parse();
    let code = match args.command.take() {
        Some(command) => cli::run(&args, command),
        None if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() => {
            tui::run(args.target.clone(), cli::ui_options(&args))
        }
        None => cli::fallback(&args),
    };
    std::process::exit(code);
}
