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
