//! `afdisk dump` (the table as `sfdisk -d` prints it) and `afdisk plan --from-sfdisk` (a custom layout from an
//! sfdisk script). The formats are the core's (`table::sfdisk`), the plan is `plan::custom`'s.

use std::path::Path;

use afdisk::device::{self, Opened};
use afdisk::error::Result;
use afdisk::plan::custom::{self, CustomRequest};
use afdisk::plan::{Layout, Plan};
use afdisk::table::{self, sfdisk};
use afdisk::Error;

use super::args::{GeometryArgs, PlanArgs};
use super::{emit, print_error, EXIT_ERROR, EXIT_OK};

pub fn dump(target: &Path, g: &GeometryArgs) -> i32 {
    match dump_text(target, g) {
        Ok(t) => {
            emit(&t);
            EXIT_OK
        }
        Err(e) => {
            print_error(&e);
            EXIT_ERROR
        }
    }
}

fn dump_text(target: &Path, g: &GeometryArgs) -> Result<String> {
    let opened = device::open(target, &g.overrides())?;
    let ss = opened.info.logical_sector_size;
    let scan = table::scan(&opened.source(), ss);
    let Some(t) = &scan.table else {
        return Err(Error::usage(
            format!(
                "{} does not contain a partition table afdisk reads",
                target.display()
            ),
            "see `afdisk inspect` for what it holds",
        ));
    };
    Ok(sfdisk::dump(t, &scan.partitions, &target.to_string_lossy()))
}

/// The plan that writes the layout of the sfdisk script `script` onto `opened`. The script is a regular file (a
/// FIFO or /dev/zero is refused, not waited on or read forever), parsed line by line (`sfdisk::parse_reader`)
/// up to [`afdisk::device::input::MAX_INPUT_BYTES`], past which it is refused. A script that asks for nothing (no
/// `label:` and no partition line: an empty file, say a failed `afdisk dump > FILE`) changes nothing, as sfdisk
/// leaves the table as it is for it.
pub fn plan_from_sfdisk(opened: &Opened, script: &Path, a: &PlanArgs) -> Result<Plan> {
    use std::io::Read;
    let input = afdisk::device::input::Input {
        what: "sfdisk script",
        expected: "the text `sfdisk -d` or `afdisk dump` prints",
        missing: "check the path (a script is what `sfdisk -d` or `afdisk dump` prints)",
    };
    let limit = afdisk::device::input::MAX_INPUT_BYTES;
    let file = afdisk::device::input::open_regular(script, &input)?;
    let name = script.to_string_lossy().into_owned();
    // Read line by line, at most the limit: a script refused at a line (past the table's capacity) is refused
    // there whatever its size; one that reads to the end within the limit is checked for its size after.
    let sc = sfdisk::parse_reader(std::io::BufReader::new((&file).take(limit + 1)), &name)?;
    afdisk::device::input::refuse_past(&file, script, limit, &input)?;
    if sc.changes_nothing() {
        return unchanged(opened, &name);
    }
    let info = &opened.info;
    let ss = info.logical_sector_size;
    let scan = table::scan(&opened.source(), ss);
    let (grain_bytes, stripe_bytes) = (
        super::confirm::sized(&a.grain, opened)?,
        super::confirm::sized(&a.stripe, opened)?,
    );
    let grain = afdisk::plan::grain::choose(&info.topology(), grain_bytes, stripe_bytes)?;
    let (table, partitions, notes) = sc.to_table(&sfdisk::ScriptDevice {
        sector_size: ss,
        total: info.size_bytes / ss.max(1),
        grain: grain.bytes,
        current_label: scan.table.as_ref().map(|t| t.label),
        round: a.realign,
    })?;
    let req = CustomRequest {
        origin: format!("sfdisk script {name}"),
        realign: a.realign,
        replace: a.replace,
        grain: grain_bytes,
        stripe: stripe_bytes,
        destroy_ok: a.discard_data.clone(),
    };
    let target = Layout { table, partitions };
    let mut plan = custom::make(opened, &target, &req)
        .map_err(|e| placed(e, &sc, &target, opened, &grain, a.realign))?
        .with_keep_signatures(&opened.source(), a.keep_signatures)?;
    if !notes.is_empty() {
        plan.notes.splice(1..1, notes);
        plan = plan.sealed();
    }
    Ok(plan)
}

/// Error `e` of the custom plan for `target` (the partitions of script `sc`, one per partition line, in its
/// order) with the script's file and the line it is about, when the layout's checks ([`custom::prepare`]) make
/// it: the line whose partition, added to those of the lines before it, first gives that same problem. A
/// problem of the table alone, or one the checks do not make (a loss, say), is returned as it is.
fn placed(
    e: Error,
    sc: &sfdisk::Script,
    target: &Layout,
    opened: &Opened,
    grain: &afdisk::plan::Grain,
    realign: bool,
) -> Error {
    let info = &opened.info;
    let ss = info.logical_sector_size;
    let scan = table::scan(&opened.source(), ss);
    let old = Layout::from_scan(&scan).filter(|o| o.table.sector_size == ss);
    let fails = |k: usize| {
        let prefix = Layout {
            table: target.table.clone(),
            partitions: target.partitions[..k].to_vec(),
        };
        let mut guid = || uuid::Uuid::new_v4().to_string().to_uppercase();
        custom::prepare(
            &prefix,
            old.as_ref(),
            info.size_bytes / ss.max(1),
            ss,
            info.topology().alignment_offset,
            info.topology().physical_unit(),
            grain.bytes,
            realign,
            &mut guid,
        )
        .is_err_and(|f| f.problem == e.problem)
    };
    let n = target.partitions.len().min(sc.entries.len());
    if n == 0 || fails(0) || !fails(n) {
        return e;
    }
    // The first k lines fail and the first k - 1 do not: line k is the one.
    let (mut lo, mut hi) = (0, n);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fails(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    e.placed(&format!("{}, line {}", sc.file, sc.entries[hi - 1].line))
}

/// The plan for a script that asks for nothing: the disk's own layout, so nothing is written; refused on a disk
/// without a table (sfdisk exits 1 there, writing nothing).
fn unchanged(opened: &Opened, name: &str) -> Result<Plan> {
    let ss = opened.info.logical_sector_size;
    let scan = table::scan(&opened.source(), ss);
    let Some(layout) = Layout::from_scan(&scan) else {
        return Err(Error::usage(
            format!(
                "the sfdisk script {name} has no label: line and no partition line, and the disk holds no table: \
                 there is nothing to write (sfdisk writes nothing either)"
            ),
            "give a script with a label: line (what `sfdisk -d` or `afdisk dump` prints of a disk)",
        ));
    };
    let req = CustomRequest {
        origin: format!("sfdisk script {name}"),
        ..Default::default()
    };
    let mut plan = custom::make(opened, &layout, &req)?;
    plan.notes.insert(
        1.min(plan.notes.len()),
        "the script has no label: line and no partition line (an empty script): as sfdisk, afdisk keeps the \
         table as it is"
            .to_string(),
    );
    Ok(plan.sealed())
}
