//! Command-line grammar (clap derive). Every subcommand and long option here must appear in man/afdisk.8;
//! a test enforces it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use afdisk::device::Overrides;

fn size(s: &str) -> Result<u64, String> {
    afdisk::units::parse_size(s).map_err(|e| format!("{} ({})", e.problem, e.fix))
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
    pub target: Option<PathBuf>,
    #[command(flatten)]
    pub geometry: GeometryArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every disk of the machine, one line each
    List {
        /// Print JSON (an array of device objects with a summary)
        #[arg(long)]
        json: bool,
    },
    /// Show a disk's topology, partition table, alignment and findings
    Inspect {
        /// Block device (/dev/sdb, /dev/disk/by-id/...) or disk image file
        target: PathBuf,
        /// Print the JSON report
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        geometry: GeometryArgs,
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// Exit 0 when every partition starts on a physical boundary, 1 when one does not, 2 on errors
    Check {
        /// One or more disks or images
        #[arg(required = true)]
        targets: Vec<PathBuf>,
        /// Print JSON (an array with one result per target)
        #[arg(long)]
        json: bool,
        /// Also fail on starts off 1 MiB and on ends off a physical boundary
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        geometry: GeometryArgs,
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// Propose a 1 MiB-aligned layout: a fresh one from a preset, or the realignment of the existing table
    Plan(PlanArgs),
    /// Write a plan made by `afdisk plan`, after a backup and a typed confirmation
    Apply {
        /// The disk or image the plan was made for
        target: PathBuf,
        /// The plan file (`afdisk plan ... -o FILE`)
        #[arg(long, value_name = "FILE")]
        plan: PathBuf,
        #[command(flatten)]
        confirm: ConfirmArgs,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        geometry: GeometryArgs,
    },
    /// Save the table sectors (MBR, both GPT headers and arrays, EBRs) of a disk to a file
    Backup {
        target: PathBuf,
        /// The backup file to write
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
        /// Print a JSON summary
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        geometry: GeometryArgs,
    },
    /// Write a backup (from `afdisk backup` or an apply) back onto the same disk
    Restore {
        target: PathBuf,
        /// The backup file
        backup: PathBuf,
        #[command(flatten)]
        confirm: ConfirmArgs,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        geometry: GeometryArgs,
    },
    /// Show a drive's logical sector sizes; with --set, switch it between 512 and 4096 (erases it)
    SectorSize {
        /// The whole drive (/dev/sdX, /dev/nvmeXnY)
        target: PathBuf,
        /// Switch to this logical sector size (512 or 4096) with a vendor tool
        #[arg(long, value_name = "BYTES", value_parser = ["512", "4096"])]
        set: Option<String>,
        /// The tool: openseachest, seachest, hdparm, sg_format, nvme, or a path to its binary
        #[arg(long, value_name = "NAME|PATH")]
        tool: Option<std::ffi::OsString>,
        /// Use a tool version afdisk was not written against
        #[arg(long)]
        allow_unknown_tool_version: bool,
        /// Run the tool although the drive does not list the size (SATA/SAS): its own check decides
        #[arg(long)]
        let_tool_decide: bool,
        #[command(flatten)]
        confirm: ConfirmArgs,
        /// Print JSON (the status, or the plan and the outcome)
        #[arg(long)]
        json: bool,
    },
    /// Finish a data move that an apply started and something interrupted, from its journal
    Resume {
        /// The disk or image whose move was interrupted
        target: PathBuf,
        /// The move journal (default: the one unfinished journal for TARGET in $AFDISK_BACKUP_DIR)
        #[arg(long, value_name = "FILE")]
        journal: Option<PathBuf>,
        /// Put the old table back instead (only before any data was written)
        #[arg(long)]
        rollback: bool,
        #[command(flatten)]
        confirm: ConfirmArgs,
        /// Print progress as JSON lines and the outcome as JSON
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        geometry: GeometryArgs,
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
    Bench {
        /// Disk (/dev/sdb), partition (/dev/sdb1) or image file
        target: PathBuf,
        /// Also compare I/O as partition N's filesystem issues it against aligned I/O
        #[arg(long, value_name = "N")]
        partition: Option<u32>,
        /// Time cap in seconds (1-60); the run stops earlier once the verdict is decided
        #[arg(long, value_name = "SECS", default_value_t = afdisk::bench::DEFAULT_DURATION_SECS)]
        duration: u64,
        /// Where writes may go (the library's write modes: none, free, all)
        #[arg(long, value_name = "MODE", default_value = "none", value_parser = write_modes())]
        write: afdisk::bench::WriteMode,
        /// Add the physical-sector probe (1 KiB..64 KiB) and the offset sweep (0..3584); needs writes
        #[arg(long)]
        probe: bool,
        /// Print the JSON result (schema 1)
        #[arg(long)]
        json: bool,
        /// With --json: add every class's raw latencies (classes[].samples_ns)
        #[arg(long, requires = "json")]
        samples: bool,
        /// Also write the latency distributions (aligned vs misaligned) as an SVG plot to FILE
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
        /// Confirmation of --write all
        #[command(flatten)]
        confirm: ConfirmArgs,
        #[command(flatten)]
        geometry: GeometryArgs,
    },
}

/// What `afdisk plan` is asked for.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Block device or disk image
    pub target: PathBuf,
    // The help lists the library's presets (`present::presets`), not a copy of them.
    #[arg(long, value_name = "NAME", conflicts_with = "preset_file", help = preset_help(false), long_help = preset_help(true))]
    pub preset: Option<String>,
    /// A preset file of your own (TOML, see PRESET FILES in the man page)
    #[arg(long, value_name = "FILE")]
    pub preset_file: Option<PathBuf>,
    /// Realign the existing table: move misaligned empty partitions to the nearest aligned start
    #[arg(long)]
    pub realign: bool,
    /// With --realign, also align partition ends
    #[arg(long)]
    pub strict: bool,
    /// With --realign, move partition N although it holds data (its data is lost); repeatable
    #[arg(long, value_name = "N")]
    pub discard_data: Vec<u32>,
    /// With a preset, replace an existing table (its partitions are lost)
    #[arg(long)]
    pub replace: bool,
    /// Table type of a fresh layout
    #[arg(long, value_name = "gpt|dos", value_parser = ["gpt", "dos"])]
    pub table: Option<String>,
    /// Use this grain instead of max(1 MiB, optimal I/O, stripe)
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub grain: Option<u64>,
    /// RAID stripe (chunk × data disks): the grain becomes a multiple of it
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub stripe: Option<u64>,
    /// Write the plan (JSON) to FILE, for `afdisk apply --plan FILE`
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the plan as JSON instead of the readable diff
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub geometry: GeometryArgs,
}

/// The confirmation of a writing command.
#[derive(Debug, Clone, Args)]
pub struct ConfirmArgs {
    /// Do not ask (scripts); requires --confirm
    #[arg(long)]
    pub yes: bool,
    /// With --yes: the drive's serial number, or the base name of a loop device or image file
    #[arg(long, value_name = "SERIAL", requires = "yes")]
    pub confirm: Option<String>,
    /// With --yes: allow destroying filesystems (a plan made with --discard-data/--replace, bench --write all
    /// over a filesystem); without it such a run is refused
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

/// Geometry overrides, for image files and drives that misreport.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct GeometryArgs {
    /// Logical sector size in bytes (images: inferred from the GPT, else 512)
    #[arg(long, value_name = "BYTES", value_parser = size, global = true)]
    pub logical_sector_size: Option<u64>,
    /// Physical sector size in bytes (e.g. 4096 for a drive that reports 512)
    #[arg(long, value_name = "BYTES", value_parser = size, global = true)]
    pub physical_sector_size: Option<u64>,
    /// Alignment offset in bytes (the byte offset of the first aligned physical sector)
    #[arg(long, value_name = "BYTES", value_parser = size, global = true)]
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

/// Options of the alignment analysis.
#[derive(Debug, Clone, Copy, Args)]
pub struct AnalysisArgs {
    /// Also check starts against this boundary (a RAID stripe, e.g. 256KiB)
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub stripe: Option<u64>,
    /// Filesystem block size used to compute the read-modify-write cost
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = "4096")]
    pub block_size: u64,
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
                Some(Command::Bench { write, .. }) => assert_eq!(write, o.value),
                other => panic!("{other:?}"),
            }
            assert!(long_help("bench").contains(&o.description));
        }
        assert!(Cli::try_parse_from(["afdisk", "bench", "x.img", "--write", "some"]).is_err());
    }
}
