# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_afdisk_global_optspecs
    string join \n logical-sector-size= physical-sector-size= alignment-offset= h/help V/version
end

function __fish_afdisk_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_afdisk_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_afdisk_using_subcommand
    set -l cmd (__fish_afdisk_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c afdisk -n "__fish_afdisk_needs_command" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_needs_command" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_needs_command" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c afdisk -n "__fish_afdisk_needs_command" -s V -l version -d 'Print version'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "list" -d 'List every disk of the machine, one line each'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "inspect" -d 'Show a disk\'s topology, partition table, alignment and findings'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "check" -d 'Exit 0 when every partition starts on a physical boundary, 1 when one does not, 2 on errors'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "plan" -d 'Propose a 1 MiB-aligned layout: a fresh one from a preset, or the realignment of the existing table'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "dump" -d 'Print the partition table as `sfdisk -d` does (a script that `sfdisk` or `plan --from-sfdisk` reads)'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "apply" -d 'Write a plan made by `afdisk plan`, after a backup and a typed confirmation'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "backup" -d 'Save the table sectors (MBR, both GPT headers and arrays, EBRs) of a disk to a file'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "restore" -d 'Write a backup (from `afdisk backup` or an apply) back onto the same disk, or an `sgdisk --backup` file'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "sector-size" -d 'Show a drive\'s logical sector sizes; with --set, switch it between 512 and 4096 (erases it)'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "resume" -d 'Finish a data move that an apply started and something interrupted, from its journal'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "demo" -d 'Try afdisk on sample disks: image files made by the peers in a new temporary directory, opened in the UI, removed at exit'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "bench" -d 'Measure whether misaligned I/O pays a read-modify-write penalty: exit 0 none, 1 penalty, 2 error, 3 refused, 4 inconclusive'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "completions" -d 'Print the completion script for SHELL (bash, zsh or fish), generated from this command line'
complete -c afdisk -n "__fish_afdisk_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c afdisk -n "__fish_afdisk_using_subcommand list" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand list" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand list" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand list" -l json -d 'Print JSON (an object: the schema version and the devices, each with its summary or its error)'
complete -c afdisk -n "__fish_afdisk_using_subcommand list" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand inspect" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand inspect" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand inspect" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand inspect" -l stripe -d 'Also check starts against this boundary (a RAID stripe, e.g. 256KiB)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand inspect" -l block-size -d 'Filesystem block size used to compute the read-modify-write cost' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand inspect" -l json -d 'Print the JSON report'
complete -c afdisk -n "__fish_afdisk_using_subcommand inspect" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -l stripe -d 'Also check starts against this boundary (a RAID stripe, e.g. 256KiB)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -l block-size -d 'Filesystem block size used to compute the read-modify-write cost' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -l json -d 'Print JSON (an object: the schema version and one result per target)'
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -l strict -d 'Also fail on starts off 1 MiB and on ends off a physical boundary'
complete -c afdisk -n "__fish_afdisk_using_subcommand check" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l preset -d 'A built-in preset for a fresh layout (data, efi-root, raid-member, lvm, zfs)' -r -f -a "data\t'one data partition over the whole disk'
efi-root\t'EFI system partition (512 MiB) and a Linux root over the rest'
raid-member\t'one Linux RAID partition over the whole disk (md member)'
lvm\t'one LVM physical volume over the whole disk'
zfs\t'ZFS data partition and the 8 MiB reserved partition 9, as zpool makes them'"
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l preset-file -d 'A preset file of your own (TOML, see PRESET FILES in the man page)' -r -F
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l from-sfdisk -d 'The new layout from an sfdisk script (`sfdisk -d` output or one written by hand)' -r -F
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l discard-data -d 'With --realign, move partition N although it holds data (its data is lost); repeatable' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l table -d 'Table type of a fresh layout' -r -f -a "gpt\t''
dos\t''"
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l grain -d 'Use this grain instead of max(1 MiB, optimal I/O, stripe)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l stripe -d 'RAID stripe (chunk × data disks): the grain becomes a multiple of it' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -s o -l output -d 'Write the plan (JSON) to FILE, for `afdisk apply --plan FILE`' -r -F
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l realign -d 'Realign the existing table: move misaligned partitions to the nearest aligned start (their data moves with them) (with --from-sfdisk: snap the script\'s starts forward and ends down to the grain)'
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l strict -d 'With --realign, also align partition ends'
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l replace -d 'With a preset, replace an existing table (its partitions are lost)'
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l keep-signatures -d 'Keep old signatures (filesystem, swap, RAID, …) found in the area of a partition the plan creates; by default they are wiped, as `sfdisk --wipe-partitions always` does'
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -l json -d 'Print the plan as JSON instead of the readable diff'
complete -c afdisk -n "__fish_afdisk_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c afdisk -n "__fish_afdisk_using_subcommand dump" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand dump" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand dump" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand dump" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l plan -d 'The plan file (`afdisk plan ... -o FILE`)' -r -F
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l confirm -d 'With --yes: the drive\'s serial number, or the base name of a loop device or image file, byte for byte' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l yes -d 'Do not ask (scripts); requires --confirm'
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l destroy-data -d 'With --yes: allow a run that destroys filesystems (the one whose typed confirmation would ask for NAME DESTROY); without it such a run is refused'
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -l json -d 'Print the outcome as JSON'
complete -c afdisk -n "__fish_afdisk_using_subcommand apply" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand backup" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand backup" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand backup" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand backup" -s o -l output -d 'The backup file to write' -r -F
complete -c afdisk -n "__fish_afdisk_using_subcommand backup" -l json -d 'Print a JSON summary'
complete -c afdisk -n "__fish_afdisk_using_subcommand backup" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -l confirm -d 'With --yes: the drive\'s serial number, or the base name of a loop device or image file, byte for byte' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -l yes -d 'Do not ask (scripts); requires --confirm'
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -l destroy-data -d 'With --yes: allow a run that destroys filesystems (the one whose typed confirmation would ask for NAME DESTROY); without it such a run is refused'
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -l json -d 'Print the outcome as JSON'
complete -c afdisk -n "__fish_afdisk_using_subcommand restore" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l set -d 'Switch to this logical sector size (512 or 4096) with a vendor tool' -r -f -a "512\t''
4096\t''"
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l tool -d 'The tool: openseachest, seachest, hdparm, sg_format, nvme, or a path to its binary' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l confirm -d 'With --yes: the drive\'s serial number, or the base name of a loop device or image file, byte for byte' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l allow-unknown-tool-version -d 'Use a tool version afdisk was not written against'
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l let-tool-decide -d 'Run the tool although the drive does not list the size (SATA/SAS): its own check decides'
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l yes -d 'Do not ask (scripts); requires --confirm'
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l destroy-data -d 'With --yes: allow a run that destroys filesystems (the one whose typed confirmation would ask for NAME DESTROY); without it such a run is refused'
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -l json -d 'Print JSON (the status, or the plan and the outcome)'
complete -c afdisk -n "__fish_afdisk_using_subcommand sector-size" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l journal -d 'The move journal (default: the one unfinished journal for TARGET in $AFDISK_BACKUP_DIR)' -r -F
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l confirm -d 'With --yes: the drive\'s serial number, or the base name of a loop device or image file, byte for byte' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l rollback -d 'Put the old table back instead (only before any data was written)'
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l yes -d 'Do not ask (scripts); requires --confirm'
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l destroy-data -d 'With --yes: allow a run that destroys filesystems (the one whose typed confirmation would ask for NAME DESTROY); without it such a run is refused'
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -l json -d 'Print progress as JSON lines and the outcome as JSON'
complete -c afdisk -n "__fish_afdisk_using_subcommand resume" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand demo" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand demo" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand demo" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand demo" -l keep -d 'Keep the sample disks (and the backups made on them) after exit'
complete -c afdisk -n "__fish_afdisk_using_subcommand demo" -l json -d 'Make the sample disks, print where they are as JSON and exit without the UI (with --keep they stay)'
complete -c afdisk -n "__fish_afdisk_using_subcommand demo" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l partition -d 'Also compare I/O as partition N\'s filesystem issues it against aligned I/O' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l duration -d 'Time cap in seconds (1-60); the run stops earlier once the verdict is decided' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l write -d 'Where writes may go (the library\'s write modes: none, free, all)' -r -f -a "none\t'reads only: safe on any disk, even in use (512e drives show little read penalty)'
free\t'writes only to unallocated space, outside every partition and table (exclusive open)'
all\t'writes anywhere on the disk: DESTROYS DATA there (asks for the device name)'"
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l plot -d 'Also write the latency distributions (aligned vs misaligned) as an SVG plot to FILE' -r -F
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l confirm -d 'With --yes: the drive\'s serial number, or the base name of a loop device or image file, byte for byte' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l probe -d 'Add the physical-sector probe (1 KiB..64 KiB) and the offset sweep (0..3584); needs writes'
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l json -d 'Print the JSON result (schema 1)'
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l samples -d 'With --json: add every class\'s raw latencies (classes[].samples_ns)'
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l yes -d 'Do not ask (scripts); requires --confirm'
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -l destroy-data -d 'With --yes: allow a run that destroys filesystems (the one whose typed confirmation would ask for NAME DESTROY); without it such a run is refused'
complete -c afdisk -n "__fish_afdisk_using_subcommand bench" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c afdisk -n "__fish_afdisk_using_subcommand completions" -l logical-sector-size -d 'Logical sector size in bytes (images: inferred from the GPT, else 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand completions" -l physical-sector-size -d 'Physical sector size in bytes (e.g. 4096 for a drive that reports 512)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand completions" -l alignment-offset -d 'Alignment offset in bytes (the byte offset of the first aligned physical sector)' -r
complete -c afdisk -n "__fish_afdisk_using_subcommand completions" -s h -l help -d 'Print help'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "list" -d 'List every disk of the machine, one line each'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "inspect" -d 'Show a disk\'s topology, partition table, alignment and findings'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "check" -d 'Exit 0 when every partition starts on a physical boundary, 1 when one does not, 2 on errors'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "plan" -d 'Propose a 1 MiB-aligned layout: a fresh one from a preset, or the realignment of the existing table'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "dump" -d 'Print the partition table as `sfdisk -d` does (a script that `sfdisk` or `plan --from-sfdisk` reads)'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "apply" -d 'Write a plan made by `afdisk plan`, after a backup and a typed confirmation'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "backup" -d 'Save the table sectors (MBR, both GPT headers and arrays, EBRs) of a disk to a file'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "restore" -d 'Write a backup (from `afdisk backup` or an apply) back onto the same disk, or an `sgdisk --backup` file'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "sector-size" -d 'Show a drive\'s logical sector sizes; with --set, switch it between 512 and 4096 (erases it)'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "resume" -d 'Finish a data move that an apply started and something interrupted, from its journal'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "demo" -d 'Try afdisk on sample disks: image files made by the peers in a new temporary directory, opened in the UI, removed at exit'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "bench" -d 'Measure whether misaligned I/O pays a read-modify-write penalty: exit 0 none, 1 penalty, 2 error, 3 refused, 4 inconclusive'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "completions" -d 'Print the completion script for SHELL (bash, zsh or fish), generated from this command line'
complete -c afdisk -n "__fish_afdisk_using_subcommand help; and not __fish_seen_subcommand_from list inspect check plan dump apply backup restore sector-size resume demo bench completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
