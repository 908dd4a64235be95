//! The `afdisk` binary. `main` only chooses the mode (as ripgrep's `main` does): a CLI subcommand (`cli`), the
//! terminal UI (`tui`) when no subcommand is given and both stdin and stdout are terminals, the UI demo
//! (`afdisk demo` in a terminal, `tui::run_demo`), or else the non-terminal fallback, which prints as text
//! what the UI would show. Neither front end calls the other; what both use of the process (its ending
//! signals) is in the library's `signals`.

mod cli;
mod tui;

use std::io::IsTerminal;

use cli::args::Command;

fn main() {
    let mut args = cli::parse();
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let code = match args.command.take() {
        Some(Command::Demo { keep, json: false }) if terminal => {
            tui::run_demo(keep, cli::ui_options(&args), &cli::print_error)
        }
        Some(command) => cli::finish(cli::run(&args, command)),
        None if terminal => cli::refuse_ui()
            .unwrap_or_else(|| tui::run(args.target.clone(), cli::ui_options(&args))),
        None => cli::finish(cli::fallback(&args)),
    };
    std::process::exit(code);
}
