//! Command-line grammar (clap derive). Every subcommand and long option here must appear in man/afdisk.8;
//! a test enforces it.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use afdisk::device::Overrides;

use afdisk::units::SizeArg;

/// A size where a disk is given: bytes, or a count of its logical sectors (`2048s`), made bytes once it is open.
fn size(s: &str) -> Result<SizeArg, String> {
    if s.trim_start().starts_with('-') {
        return Err(format!(
            "'{s}' is negative (give a size of bytes with an optional unit, e.g. 4096 or 1MiB, or of the disk's \
             logical sectors, e.g. 2048s)"
        ));
    }
    SizeArg::parse(s).map_err(|e| format!("{} ({})", e.problem, e.fix))
}

/// A whole number `s` given for `what` (`accepted` says which), or an error saying what is wrong with it: a
/// sign, a fraction or no number at all.
fn whole<T: std::str::FromStr>(s: &str, what: &str, accepted: &str) -> Result<T, String> {
    s.trim().parse().map_err(|_| {
        let t = s.trim();
        let wrong = if t.starts_with('-') {
            "is negative"
        } else if t.contains(['.', ',']) && t.chars().any(|c| c.is_ascii_digit()) {
            "has a fraction"
        } else if t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty() {
            "is too large"
        } else {
            "is not a number"
        };
        format!("'{s}' {wrong}: {what} is a whole number ({accepted})")
    })
}

/// `bench --duration`: whole seconds (the core checks the range).
fn seconds(s: &str) -> Result<u64, String> {
    whole(s, "the time cap", "seconds, 1 to 60")
}

/// A partition number (`bench --partition`, `plan --discard-data`).
fn partition_number(s: &str) -> Result<u32, String> {
    whole(
        s,
        "a partition number",
        "1 or more, as `afdisk inspect` lists them",
    )
}

/// A size that must not be zero (`--stripe`, `--block-size` of the analysis: a zero boundary means nothing).
fn nonzero_size(s: &str) -> Result<SizeArg, String> {
    let a = size(s)?;
    if matches!(
        a.value,
        afdisk::units::SizeValue::Bytes(0) | afdisk::units::SizeValue::Sectors(0)
    ) {
        return Err(format!(
            "'{s}' is zero (give a size such as 4096, 64KiB or 1MiB, or leave the option out)"
        ));
    }
    Ok(a)
}

/// A geometry override: bytes only, since a sector count would depend on the very geometry it sets.
fn geometry_bytes(s: &str) -> Result<u64, String> {
    if s.trim_start().starts_with('-') {
        return Err(format!(
            "'{s}' is negative (give bytes with an optional unit, e.g. 4096 or 4KiB)"
        ));
    }
    // The general size error offers sector counts (`2048s`), which these options refuse: their own words.
    let a = size(s).map_err(|_| {
        format!(
            "'{s}' is not a number of bytes (give bytes with an optional unit, e.g. 4096 or 4KiB)"
        )
    })?;
    if a.is_sectors() {
        return Err(format!(
            "the geometry options take bytes: '{s}' counts sectors, whose size is what they set (give bytes, \
             e.g. 4096 or 4KiB)"
        ));
    }
    a.bytes_without_device()
        .map_err(|e| format!("{} ({})", e.problem, e.fix))
}

/// A path argument, as typed, except that a relative path starting with `-` (`-dash.img`) becomes
/// `./-dash.img`: every command afdisk prints for the user to run (`Apply it with: afdisk apply …`, the undo,
/// the resume) names the path as it is kept, and a word starting with `-` would be read as an option there.
#[derive(Debug, Clone, Copy)]
pub struct PathArg;

impl clap::builder::TypedValueParser for PathArg {
    type Value = PathBuf;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<PathBuf, clap::Error> {
        use std::os::unix::ffi::OsStrExt;
        let p = clap::builder::PathBufValueParser::new().parse_ref(cmd, arg, value)?;
        Ok(if value.as_bytes().starts_with(b"-") {
            PathBuf::from(".").join(p)
        } else {
            p
        })
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "afdisk",
    version,
    about = "Safe partitioning and reformatting for Advanced Format (512e/4Kn) disks",
    long_about = "Inspect disks and their partition tables against physical sector boundaries.\n\
                  Without a subcommand, opens the terminal UI on TARGET, or on the list of disks.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Disk or image to open in the terminal UI (omit for the list of disks)
    #[arg(value_parser = PathArg)]
    pub target: Option<PathBuf>,
    /// The geometry options are global: every subcommand takes them (before or after its own arguments) and
    /// their values land here, so no subcommand flattens them again (with `defer`, a second copy would be two
    /// arguments of one name).
    #[command(flatten)]
    pub geometry: GeometryArgs,
}

#[derive(Debug, Subcommand)]
// Each subcommand's arguments are built when it is used (issue 13: a start builds one, not all of them).
#[command(defer = true)]
pub enum Command {
    /// List every disk of the machine, one line each
    List {
        /// Print JSON (an object: the schema version and the devices, each with its summary or its error)
        #[arg(long)]
        json: bool,
    },
    /// Show a disk's topology, partition table, alignment and findings
    Inspect {
        /// Block device (/dev/sdb, /dev/disk/by-id/...) or disk image file
        #[arg(value_parser = PathArg)]
        target: PathBuf,
        /// Print the JSON report
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// Exit 0 when every partition starts on a physical boundary, 1 when one does not, 2 on errors
    Check {
        /// Disks, partitions (/dev/sdb1: that partition of its disk) or images; none: every disk `list` shows
        #[arg(value_parser = PathArg)]
        targets: Vec<PathBuf>,
        /// Print JSON (an object: the schema version and one result per target)
        #[arg(long)]
        json: bool,
        /// Also fail on starts off 1 MiB and on ends off a physical boundary
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// Propose a 1 MiB-aligned layout: a fresh one from a preset, or the realignment of the existing table
    Plan(PlanArgs),
    /// Print the partition table as `sfdisk -d` does (a script that `sfdisk` or `plan --from-sfdisk` reads)
    Dump {
        /// Block device or disk image
        #[arg(value_parser = PathArg)]
        target: PathBuf,
    },
    /// Write a plan made by `afdisk plan`, after a backup and a typed confirmation
    Apply {
        /// The disk or image the plan was made for
        #[arg(value_parser = PathArg)]
        target: PathBuf,
        /// The plan file (`afdisk plan ... -o FILE`)
        #[arg(value_parser = PathArg, long, value_name = "FILE")]
        plan: PathBuf,
        #[command(flatten)]
        confirm: ConfirmArgs,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Save the table sectors (MBR, both GPT headers and arrays, EBRs) of a disk to a file
    Backup {
        /// Block device or disk image whose table sectors are saved
        #[arg(value_parser = PathArg)]
        target: PathBuf,
        /// The backup file to write
        #[arg(value_parser = PathArg, short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
        /// Print a JSON summary
        #[arg(long)]
        json: bool,
    },
    /// Write a backup (from `afdisk backup` or an apply) back onto the same disk, or an `sgdisk --backup` file
    Restore {
        /// Block device or disk image the backup was taken from
        #[arg(value_parser = PathArg)]
        target: PathBuf,
        /// The backup file (afdisk's, or one written by `sgdisk --backup`)
        #[arg(value_parser = PathArg)]
        backup: PathBuf,
        #[command(flatten)]
        confirm: ConfirmArgs,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Show a drive's logical sector sizes; with --set, switch it between 512 and 4096 (erases it)
    SectorSize(SectorSizeCommand),
    /// Finish a data move that an apply started and something interrupted, from its journal
    Resume {
        /// The disk or image whose move was interrupted
        #[arg(value_parser = PathArg)]
        target: PathBuf,
        /// The move journal (default: the one unfinished journal for TARGET in $AFDISK_BACKUP_DIR)
        #[arg(value_parser = PathArg, long, value_name = "FILE")]
        journal: Option<PathBuf>,
        /// Put the old table back instead (only before any data was written)
        #[arg(long)]
        rollback: bool,
        #[command(flatten)]
        confirm: ConfirmArgs,
        /// Print progress as JSON lines and the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Try afdisk on sample disks: image files made by the peers in a new temporary directory, opened in the UI, removed at exit
    Demo {
        /// Keep the sample disks (and the backups made on them) after exit
        #[arg(long)]
        keep: bool,
        /// Make the sample disks, print where they are as JSON and exit without the UI (with --keep they stay)
        #[arg(long)]
        json: bool,
    },
    /// Measure whether misaligned I/O pays a read-modify-write penalty: exit 0 none, 1 penalty, 2 error, 3 refused, 4 inconclusive
    Bench(BenchCommand),
    /// Print the completion script for SHELL (bash, zsh or fish), generated from this command line
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: CompletionShell,
    },
}

/// A shell `afdisk completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

impl CompletionShell {
    /// The completion script for this shell, generated from the command-line definition (so it cannot drift
    /// from it; `assets/completions/` holds the committed copies, and a test compares them).
    pub fn script(self) -> Vec<u8> {
        let shell = match self {
            CompletionShell::Bash => clap_complete::Shell::Bash,
            CompletionShell::Zsh => clap_complete::Shell::Zsh,
            CompletionShell::Fish => clap_complete::Shell::Fish,
        };
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "afdisk", &mut out);
        out
    }
}

// What `afdisk sector-size` is asked for. (A plain comment: see `PlanArgs`.)
#[derive(Debug, Clone, Args)]
pub struct SectorSizeCommand {
    /// The whole drive (/dev/sdX, /dev/nvmeXnY)
    #[arg(value_parser = PathArg)]
    pub target: PathBuf,
    /// Switch to this logical sector size (512 or 4096) with a vendor tool
    #[arg(long, value_name = "BYTES", value_parser = ["512", "4096"])]
    pub set: Option<String>,
    /// The tool: openseachest, seachest, hdparm, sg_format, nvme, or a path to its binary
    #[arg(long, value_name = "NAME|PATH")]
    pub tool: Option<std::ffi::OsString>,
    /// Use a tool version afdisk was not written against
    #[arg(long)]
    pub allow_unknown_tool_version: bool,
    /// Run the tool although the drive does not list the size (SATA/SAS): its own check decides
    #[arg(long)]
    pub let_tool_decide: bool,
    #[command(flatten)]
    pub confirm: ConfirmArgs,
    /// Print JSON (the status, or the plan and the outcome)
    #[arg(long)]
    pub json: bool,
}

// What `afdisk bench` is asked for. (A plain comment: see `PlanArgs`.)
#[derive(Debug, Clone, Args)]
pub struct BenchCommand {
    /// Disk (/dev/sdb), partition (/dev/sdb1) or image file
    #[arg(value_parser = PathArg)]
    pub target: PathBuf,
    /// Also compare I/O as partition N's filesystem issues it against aligned I/O
    #[arg(long, value_name = "N", value_parser = partition_number, allow_negative_numbers = true)]
    pub partition: Option<u32>,
    /// Time cap in seconds (1-60); the run stops earlier once the verdict is decided
    #[arg(long, value_name = "SECS", default_value_t = afdisk::bench::DEFAULT_DURATION_SECS, value_parser = seconds, allow_negative_numbers = true)]
    pub duration: u64,
    /// Where writes may go (the library's write modes: none, free, all)
    #[arg(long, value_name = "MODE", default_value = "none", value_parser = write_modes())]
    pub write: afdisk::bench::WriteMode,
    /// Add the physical-sector probe (1 KiB..64 KiB) and the offset sweep (0..3584); needs writes
    #[arg(long)]
    pub probe: bool,
    /// Print the JSON result (schema 1)
    #[arg(long)]
    pub json: bool,
    /// With --json: add every class's raw latencies (classes[].samples_ns)
    #[arg(long, requires = "json")]
    pub samples: bool,
    /// Also write the latency distributions (aligned vs misaligned) as an SVG plot to FILE
    #[arg(value_parser = PathArg, long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Confirmation of --write all
    #[command(flatten)]
    pub confirm: ConfirmArgs,
}

// What `afdisk plan` is asked for.
// (A plain comment, not a doc comment: clap would take a doc comment of a flattened struct as the
// subcommand's about, and with `defer` it would replace the subcommand's own.)
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Block device or disk image
    #[arg(value_parser = PathArg)]
    pub target: PathBuf,
    // The help lists the library's presets (`present::presets`), not a copy of them.
    #[arg(long, value_name = "NAME", conflicts_with = "preset_file", value_parser = PresetNames, hide_possible_values = true, help = preset_help(false), long_help = preset_help(true))]
    pub preset: Option<String>,
    /// A preset file of your own (TOML, see PRESET FILES in the man page)
    #[arg(value_parser = PathArg, long, value_name = "FILE")]
    pub preset_file: Option<PathBuf>,
    /// Realign the existing table: move misaligned partitions to the nearest aligned start (their data
    /// moves with them)
    /// (with --from-sfdisk: snap the script's starts forward and ends down to the grain)
    #[arg(long)]
    pub realign: bool,
    /// The new layout from an sfdisk script (`sfdisk -d` output or one written by hand)
    #[arg(value_parser = PathArg, long, value_name = "FILE", conflicts_with_all = ["preset", "preset_file", "table", "strict"])]
    pub from_sfdisk: Option<PathBuf>,
    /// With --realign, also align partition ends
    #[arg(long)]
    pub strict: bool,
    /// With --realign, move partition N although it holds data (its data is lost); repeatable
    #[arg(long, value_name = "N", value_parser = partition_number, allow_negative_numbers = true)]
    pub discard_data: Vec<u32>,
    /// With a preset, replace an existing table (its partitions are lost)
    #[arg(long)]
    pub replace: bool,
    /// Keep old signatures (filesystem, swap, RAID, …) found in the area of a partition the plan creates;
    /// by default they are wiped, as `sfdisk --wipe-partitions always` does
    #[arg(long)]
    pub keep_signatures: bool,
    /// Table type of a fresh layout
    #[arg(long, value_name = "gpt|dos", value_parser = ["gpt", "dos"])]
    pub table: Option<String>,
    /// Use this grain instead of max(1 MiB, optimal I/O, stripe)
    #[arg(long, value_name = "SIZE", value_parser = size, allow_negative_numbers = true)]
    pub grain: Option<SizeArg>,
    /// RAID stripe (chunk × data disks): the grain becomes a multiple of it
    #[arg(long, value_name = "SIZE", value_parser = size, allow_negative_numbers = true)]
    pub stripe: Option<SizeArg>,
    /// Write the plan (JSON) to FILE, for `afdisk apply --plan FILE`
    #[arg(value_parser = PathArg, short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the plan as JSON instead of the readable diff
    #[arg(long)]
    pub json: bool,
}

// The confirmation of a writing command.
// (A plain comment, not a doc comment: clap would take a doc comment of a flattened struct as the
// subcommand's about, and with `defer` it would replace the subcommand's own.)
#[derive(Debug, Clone, Args)]
pub struct ConfirmArgs {
    /// Do not ask (scripts); requires --confirm
    #[arg(long)]
    pub yes: bool,
    /// With --yes: the drive's serial number, or the base name of a loop device or image file, byte for byte
    #[arg(long, value_name = "SERIAL", requires = "yes")]
    pub confirm: Option<std::ffi::OsString>,
    /// With --yes: allow a run that destroys filesystems (the one whose typed confirmation would ask for
    /// NAME DESTROY); without it such a run is refused
    #[arg(long, requires = "yes")]
    pub destroy_data: bool,
}

/// `plan --preset`'s help, from the library's choice of presets: their names (with `long`, each with its
/// description).
fn preset_help(long: bool) -> String {
    let c = afdisk::present::presets();
    if !long {
        return format!("A built-in preset for a fresh layout ({})", c.names());
    }
    let mut s = String::from("A built-in preset for a fresh layout:");
    for o in &c.options {
        s.push_str(&format!("\n  {:<12} {}", o.name, o.description));
    }
    s
}

/// `plan --preset`'s values: any text (the library refuses an unknown preset, naming the known ones), with the
/// library's presets as the possible values, which the shell completions offer.
#[derive(Debug, Clone, Copy)]
struct PresetNames;

impl clap::builder::TypedValueParser for PresetNames {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            afdisk::present::presets()
                .options
                .into_iter()
                .map(|o| clap::builder::PossibleValue::new(o.name).help(o.description)),
        ))
    }
}

/// `bench --write`: the library's choice of write modes, each with its description, answered by the flag.
fn write_modes() -> impl clap::builder::TypedValueParser<Value = afdisk::bench::WriteMode> {
    use afdisk::bench::WriteMode;
    use clap::builder::TypedValueParser as _;
    let choice = afdisk::present::write_modes(WriteMode::None);
    let values: Vec<_> = choice
        .options
        .iter()
        .map(|o| clap::builder::PossibleValue::new(o.name).help(o.description.clone()))
        .collect();
    clap::builder::PossibleValuesParser::new(values).map(move |name: String| {
        let mut c = choice.clone();
        // The parser accepts only the choice's names; the safe mode is the fallback all the same.
        if c.select(&name) {
            c.value().unwrap_or(WriteMode::None)
        } else {
            WriteMode::None
        }
    })
}

// Geometry overrides, for image files and drives that misreport.
// (A plain comment, not a doc comment: clap would take a doc comment of a flattened struct as the
// subcommand's about, and with `defer` it would replace the subcommand's own.)
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct GeometryArgs {
    /// Logical sector size in bytes (images: inferred from the GPT, else 512)
    #[arg(long, value_name = "BYTES", value_parser = geometry_bytes, global = true, allow_negative_numbers = true)]
    pub logical_sector_size: Option<u64>,
    /// Physical sector size in bytes (e.g. 4096 for a drive that reports 512)
    #[arg(long, value_name = "BYTES", value_parser = geometry_bytes, global = true, allow_negative_numbers = true)]
    pub physical_sector_size: Option<u64>,
    /// Alignment offset in bytes (the byte offset of the first aligned physical sector)
    #[arg(long, value_name = "BYTES", value_parser = geometry_bytes, global = true, allow_negative_numbers = true)]
    pub alignment_offset: Option<u64>,
}

impl GeometryArgs {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            logical_sector_size: self.logical_sector_size,
            physical_sector_size: self.physical_sector_size,
            alignment_offset: self.alignment_offset,
        }
    }
}

// Options of the alignment analysis.
// (A plain comment, not a doc comment: clap would take a doc comment of a flattened struct as the
// subcommand's about, and with `defer` it would replace the subcommand's own.)
#[derive(Debug, Clone, Args)]
pub struct AnalysisArgs {
    /// Also check starts against this boundary (a RAID stripe, e.g. 256KiB)
    #[arg(long, value_name = "SIZE", value_parser = nonzero_size, allow_negative_numbers = true)]
    pub stripe: Option<SizeArg>,
    /// Filesystem block size used to compute the read-modify-write cost
    #[arg(long, value_name = "SIZE", value_parser = nonzero_size, default_value = "4096", allow_negative_numbers = true)]
    pub block_size: SizeArg,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    fn long_help(sub: &str) -> String {
        let mut c = Cli::command();
        c.find_subcommand_mut(sub)
            .expect("subcommand")
            .render_long_help()
            .to_string()
    }

    /// Issue 13: a run builds only its own subcommand's arguments. The tree of every subcommand's options (and
    /// `plan --preset`'s help, which parses the preset files) is built when that subcommand is used or its help
    /// shown, not at every start (under emulation, building it all was a third of `afdisk --version`).
    #[test]
    fn subcommand_arguments_are_built_only_when_used() {
        let c = Cli::command();
        for sub in c.get_subcommands() {
            assert_eq!(
                sub.get_arguments().count(),
                0,
                "{} is built before it is used",
                sub.get_name()
            );
        }
        let mut c = Cli::command();
        c.build();
        let plan = c.find_subcommand("plan").expect("plan");
        assert!(plan.get_arguments().any(|a| a.get_long() == Some("preset")));
        let cli = Cli::try_parse_from(["afdisk", "sector-size", "/dev/x", "--set", "4096"])
            .expect("parses");
        assert!(matches!(
            cli.command,
            Some(Command::SectorSize(SectorSizeCommand { set: Some(ref s), .. })) if s == "4096"
        ));
    }

    /// `--preset`'s help is the library's list: every built-in preset, with its file's description.
    #[test]
    fn preset_help_lists_the_library_presets() {
        let help = long_help("plan");
        for o in afdisk::present::presets().options {
            assert!(help.contains(o.name), "{} missing: {help}", o.name);
            assert!(help.contains(&o.description), "{help}");
        }
    }

    /// `--write` answers the library's write-mode choice: its names parse to its values, others are refused.
    #[test]
    fn write_flag_answers_the_write_mode_choice() {
        use afdisk::bench::WriteMode;
        for o in afdisk::present::write_modes(WriteMode::None).options {
            let cli = Cli::try_parse_from(["afdisk", "bench", "x.img", "--write", o.name])
                .expect("a mode of the choice parses");
            match cli.command {
                Some(Command::Bench(b)) => assert_eq!(b.write, o.value),
                other => panic!("{other:?}"),
            }
            assert!(long_help("bench").contains(&o.description));
        }
        assert!(Cli::try_parse_from(["afdisk", "bench", "x.img", "--write", "some"]).is_err());
    }
}
