//! Applying a plan, and restoring a backup: the only code in afdisk that writes to a disk.
//!
//! Order: plan matches the device (identity, size, sector size) → confirmation → nothing uses the disk →
//! exclusive open (`O_EXCL`) and write lock (`flock`) → the table re-read through that fd equals the plan's
//! old table and every sector to be written still holds what the plan saw → the plan's sectors and phases are
//! exactly what its layout encodes to (an edited or damaged plan is refused) and pass `table::gpt::verify` over
//! the current disk (a hybrid MBR added since the plan is caught here) → backup of every sector to be
//! overwritten plus both GPT copies, recording what will be written, fsynced → writes phase by phase, each
//! phase fsynced → the kernel re-reads the table (BLKRRPART, else BLKPG per partition) → read back and compare,
//! verify the GPT as `sgdisk -v` does (both copies: that is what "verified" means), and compare the kernel's
//! partitions (sysfs) with the table. Any failure after the backup exists names the exact `afdisk restore`
//! command that puts the old sectors back.
//!
//! Restoring (see `backup` for the two kinds): an **undo** writes back exactly the sectors the write changed,
//! in the reverse order of its phases, after checking that each still holds what was written; a **table**
//! restore writes only the saved table's own sectors, refuses where a current partition covers one, and
//! reports the ones that are not table space now.

pub mod backup;
pub mod kernel;
pub mod moves;
mod plan_apply;
mod restore;
mod write;

pub use backup::{Backup, BackupKind};
pub use kernel::KernelView;
pub use plan_apply::{apply, apply_with, load_plan, move_journal};
pub use restore::{
    already_restored, backup_to, nothing_to_restore, restore, restore_preview, undo_order,
    RestorePreview,
};
pub use write::{restore_command, Reread, WriteOutcome};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;
    use std::path::Path;

    #[test]
    fn shell_quoting_pastes() {
        assert_eq!(
            restore_command(Path::new("/dev/sdb"), Path::new("/b/x y.json")),
            "afdisk restore /dev/sdb '/b/x y.json'"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// After any number k of undo writes, the set of sectors still holding the original write's bytes is
        /// exactly the set after n - k writes of the original sequence.
        #[test]
        fn every_undo_cut_point_is_a_state_of_the_original_write(
            sectors in proptest::collection::btree_map(0u64..10_000, 1u32..6, 1..40),
        ) {
            let mut original: Vec<(u64, u32, Vec<u8>)> =
                sectors.iter().map(|(l, p)| (*l, *p, vec![])).collect();
            original.sort_by_key(|(l, p, _)| (*p, *l));
            let mut undo = original.clone();
            undo.reverse();
            undo.sort_by_key(|(l, _, _)| *l);
            undo_order(&mut undo);
            let n = original.len();
            for k in 0..=n {
                let undone: BTreeSet<u64> = undo[..k].iter().map(|w| w.0).collect();
                let still_new: BTreeSet<u64> =
                    original.iter().map(|w| w.0).filter(|l| !undone.contains(l)).collect();
                let after: BTreeSet<u64> = original[..n - k].iter().map(|w| w.0).collect();
                prop_assert_eq!(still_new, after);
            }
        }
    }
}
