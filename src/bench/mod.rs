//! The alignment benchmark: aligned vs misaligned I/O with a statistically sound verdict. `stats` holds the
//! pure statistics (summaries, bootstrap CI of the ratio of medians, stop rule, verdicts, probe analysis).

pub mod stats;
